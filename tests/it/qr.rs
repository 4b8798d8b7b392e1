//! The QR code of the SCA prompt (issue 12, "QR code"): drawn into a ratatui buffer, read
//! back from the cells as a phone camera would see the screen (each cell's glyph and its
//! colours), and decoded with `rqrr`, a QR decoder independent of the encoder.

use psd2_console::tui::qr::QrGlyphs;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

pub use crate::common::qr::decode_qr;

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
