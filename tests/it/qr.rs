//! The QR code of the SCA prompt (issue 12, "QR code"): drawn into a ratatui buffer, read
//! back from the cells as a phone camera would see the screen (each cell's glyph and its
//! colours), and decoded with `rqrr`, a QR decoder independent of the encoder.

use psd2_console::tui::qr::QrGlyphs;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

/// Pixels per module in the image handed to the decoder.
const SCALE: usize = 4;

/// The QR code's colours: light modules (glyphs) white, dark ones (background) black.
fn qr_colours(fg: Color, bg: Color) -> Option<(u8, u8)> {
    let level = |c: Color| match c {
        Color::Rgb(255, 255, 255) | Color::White => Some(255),
        Color::Rgb(0, 0, 0) | Color::Black => Some(0),
        _ => None,
    };
    Some((level(fg)?, level(bg)?))
}

/// Reads the screen region `area` of `buf` as a greyscale picture, as a camera would: in
/// cells painted in the QR code's black and white, the upper and lower half take the
/// glyph's colour where the glyph covers them, else the background; every other cell
/// (text, frames) counts as white paper. Returns the texts of every QR code found.
pub fn decode_qr(buf: &Buffer, area: Rect) -> Vec<String> {
    let w = area.width as usize;
    let h = area.height as usize * 2;
    let mut pixels = vec![0u8; w * h];
    for y in 0..area.height {
        for x in 0..area.width {
            let cell = &buf[(area.x + x, area.y + y)];
            let (top, bottom) = match (qr_colours(cell.fg, cell.bg), cell.symbol()) {
                (Some((fg, _)), "█") => (fg, fg),
                (Some((fg, bg)), "▀") => (fg, bg),
                (Some((fg, bg)), "▄") => (bg, fg),
                (Some((_, bg)), " ") => (bg, bg),
                _ => (255, 255),
            };
            pixels[(2 * y as usize) * w + x as usize] = top;
            pixels[(2 * y as usize + 1) * w + x as usize] = bottom;
        }
    }
    // A white margin around the code, then each module as a SCALE×SCALE square.
    let margin = 4;
    let (iw, ih) = ((w + 2 * margin) * SCALE, (h + 2 * margin) * SCALE);
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(iw, ih, |x, y| {
        let (mx, my) = (x / SCALE, y / SCALE);
        if mx < margin || my < margin || mx >= w + margin || my >= h + margin {
            255
        } else {
            pixels[(my - margin) * w + (mx - margin)]
        }
    });
    img.detect_grids()
        .into_iter()
        .filter_map(|g| g.decode().ok().map(|(_, text)| text))
        .collect()
}

#[test]
fn the_drawn_code_decodes_back_to_the_sca_link() {
    let url = "http://192.168.10.20:8088/sca/6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f?lang=en";
    let qr = QrGlyphs::new(url).unwrap();
    let mut term = Terminal::new(TestBackend::new(80, 30)).unwrap();
    let area = Rect::new(3, 2, qr.width(), qr.height());
    term.draw(|f| f.render_widget(&qr, area)).unwrap();
    let buf = term.backend().buffer().clone();
    assert_eq!(decode_qr(&buf, area), vec![url.to_string()]);
}

#[test]
fn the_glyphs_alone_hold_the_code_for_a_plain_text_capture() {
    // A capture without colours: the glyphs are the light modules on the dark terminal.
    let url = "http://127.0.0.1:8088/sca/0d9f3c1a-2b4e-4f60-9a7b-8c5d6e7f8091";
    let qr = QrGlyphs::new(url).unwrap();
    let area = Rect::new(0, 0, qr.width(), qr.height());
    let mut buf = Buffer::empty(area);
    for (y, row) in qr.rows().iter().enumerate() {
        buf.set_string(
            0,
            y as u16,
            row,
            ratatui::style::Style::default()
                .fg(Color::White)
                .bg(Color::Black),
        );
    }
    assert_eq!(decode_qr(&buf, area), vec![url.to_string()]);
}
