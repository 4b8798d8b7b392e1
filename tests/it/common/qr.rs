//! Reading a QR code of the SCA prompt back, as a phone camera would: from a ratatui
//! buffer (glyphs and colours) or from a plain-text `capture-pane` of the real binary, and
//! decoding it with `rqrr`, a QR decoder independent of the encoder.

#![allow(dead_code)]

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};

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

/// The QR glyphs of a half-block code.
const GLYPHS: [char; 3] = ['▀', '▄', '█'];

/// Decodes the QR codes of a plain-text screen (`capture-pane -p`): the code is the box
/// spanned by the half-block glyphs (its quiet zone is drawn with them), where a glyph is
/// light and a blank dark, as on a dark terminal. Returns the texts found.
pub fn decode_qr_text(screen: &str) -> Vec<String> {
    let rows: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let has_glyph = |r: &Vec<char>| r.iter().any(|c| GLYPHS.contains(c));
    let (Some(top), Some(bottom)) = (
        rows.iter().position(has_glyph),
        rows.iter().rposition(has_glyph),
    ) else {
        return Vec::new();
    };
    let columns = |r: &Vec<char>| {
        let first = r.iter().position(|c| GLYPHS.contains(c));
        let last = r.iter().rposition(|c| GLYPHS.contains(c));
        first.zip(last)
    };
    let spans: Vec<(usize, usize)> = rows[top..=bottom].iter().filter_map(columns).collect();
    let left = spans.iter().map(|s| s.0).min().unwrap_or(0);
    let right = spans.iter().map(|s| s.1).max().unwrap_or(0);
    let area = Rect::new(0, 0, (right - left + 1) as u16, (bottom - top + 1) as u16);
    let mut buf = Buffer::empty(area);
    let style = Style::default().fg(Color::White).bg(Color::Black);
    for (y, row) in rows[top..=bottom].iter().enumerate() {
        for x in 0..area.width as usize {
            let c = row.get(left + x).copied().unwrap_or(' ');
            let c = if GLYPHS.contains(&c) { c } else { ' ' };
            buf[(x as u16, y as u16)].set_char(c).set_style(style);
        }
    }
    decode_qr(&buf, area)
}
