//! The scaRedirect as a QR code drawn with Unicode half blocks (issue 12, "QR code"), so a
//! PSU in the room scans the SCA link from the projected console with a phone.
//!
//! One terminal cell holds two modules stacked (the upper and lower half of the cell), so a
//! code of `n` modules with a quiet zone of `q` on each side takes `n + 2q` columns and
//! `ceil((n + 2q) / 2)` rows, and the modules come out about square on a terminal whose
//! cells are twice as tall as wide.
//!
//! The glyphs (`▀`, `▄`, `█`, space) draw the **light** modules: on the usual dark terminal
//! the code then reads dark on light, as scanners expect. Every cell is also painted with
//! explicit colours (white glyph on black) so the code reads on a light-themed terminal
//! too, and a plain-text capture (`tmux capture-pane` without colours) still holds the
//! whole pattern in its glyphs. Encoding: the `qrcode` crate (ISO/IEC 18004), error
//! correction level M, falling back to L for long URLs.

use qrcode::{EcLevel, QrCode};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::Widget;

/// Quiet zone on each side, in modules. ISO/IEC 18004 asks for 4; 2 is what phone
/// scanners need in practice, and it keeps a 60-character scaRedirect inside 80×24.
pub const QUIET_ZONE_MODULES: usize = 2;

/// The colour of the light modules (the glyphs) and of the dark ones (the cell background).
const LIGHT: Color = Color::Rgb(255, 255, 255);
const DARK: Color = Color::Rgb(0, 0, 0);

/// Why a text cannot be drawn as a QR code: it is longer than the largest code (version 40)
/// holds. The source is the `qrcode` crate's error.
#[derive(Debug, thiserror::Error)]
#[error("the link is too long for a QR code ({len} bytes)")]
pub struct QrTooLong {
    /// Bytes of the text.
    pub len: usize,
    /// The encoder's error.
    #[source]
    pub source: qrcode::types::QrError,
}

/// A QR code of one text, ready to draw: the rows of half-block glyphs, quiet zone
/// included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QrGlyphs {
    rows: Vec<String>,
    /// Width in terminal columns (modules + quiet zone).
    width: u16,
}

impl QrGlyphs {
    /// Encodes `text` (e.g. a scaRedirect URL).
    ///
    /// Errors: [`QrTooLong`] when even level L cannot hold it (about 2,900 bytes).
    pub fn new(text: &str) -> Result<Self, QrTooLong> {
        let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)
            .or_else(|_| QrCode::with_error_correction_level(text.as_bytes(), EcLevel::L))
            .map_err(|source| QrTooLong {
                len: text.len(),
                source,
            })?;
        let n = code.width();
        let colors = code.to_colors();
        let modules = n + 2 * QUIET_ZONE_MODULES;
        // Light at (x, y) of the code with its quiet zone; beyond the last row (an odd
        // height leaves half a cell row) is light too, so the quiet zone stays whole.
        let light = |x: usize, y: usize| -> bool {
            let q = QUIET_ZONE_MODULES;
            if x < q || y < q || x >= n + q || y >= n + q {
                return true;
            }
            colors[(y - q) * n + (x - q)] == qrcode::Color::Light
        };
        let rows: Vec<String> = (0..modules.div_ceil(2))
            .map(|row| {
                (0..modules)
                    .map(|x| match (light(x, 2 * row), light(x, 2 * row + 1)) {
                        (true, true) => '█',
                        (true, false) => '▀',
                        (false, true) => '▄',
                        (false, false) => ' ',
                    })
                    .collect()
            })
            .collect();
        Ok(QrGlyphs {
            rows,
            width: u16::try_from(modules).unwrap_or(u16::MAX),
        })
    }

    /// Width in terminal columns.
    pub fn width(&self) -> u16 {
        self.width
    }

    /// Height in terminal rows.
    pub fn height(&self) -> u16 {
        u16::try_from(self.rows.len()).unwrap_or(u16::MAX)
    }

    /// The rows as text (what a plain-text capture shows).
    pub fn rows(&self) -> &[String] {
        &self.rows
    }

    /// Whether the code fits in `area` uncut (a cut code cannot be scanned).
    pub fn fits(&self, area: Rect) -> bool {
        self.width <= area.width && self.height() <= area.height
    }
}

impl Widget for &QrGlyphs {
    /// Draws the code at the top left of `area`, white on black; draws nothing when it does
    /// not fit (callers show a note instead, see [`QrGlyphs::fits`]).
    fn render(self, area: Rect, buf: &mut Buffer) {
        if !self.fits(area) {
            return;
        }
        let style = Style::default().fg(LIGHT).bg(DARK);
        for (i, row) in self.rows.iter().enumerate() {
            let y = area.y + i as u16;
            buf.set_line(area.x, y, &Line::styled(row.as_str(), style), self.width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sca_link_fits_a_projector_screen_with_room_for_text() {
        let url = "http://192.168.10.20:8088/sca/6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";
        let qr = QrGlyphs::new(url).unwrap();
        assert!(qr.width() <= 45, "width {}", qr.width());
        assert!(qr.height() <= 23, "height {}", qr.height());
        assert!(
            qr.rows()
                .iter()
                .all(|r| r.chars().count() == qr.width() as usize)
        );
        // The quiet zone is light: drawn as full blocks all round.
        assert!(qr.rows()[0].chars().all(|c| c == '█'));
        assert!(
            qr.rows()
                .iter()
                .all(|r| r.starts_with("██") && r.ends_with("██"))
        );
    }

    #[test]
    fn a_code_that_does_not_fit_is_not_drawn_cut() {
        let qr = QrGlyphs::new("http://127.0.0.1:8088/sca/x").unwrap();
        let area = Rect::new(0, 0, qr.width() - 1, qr.height());
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 30));
        (&qr).render(area, &mut buf);
        assert!(buf.content().iter().all(|c| c.symbol() == " "));
    }

    #[test]
    fn text_beyond_the_largest_code_is_an_error() {
        let long = "x".repeat(8000);
        let err = QrGlyphs::new(&long).unwrap_err();
        assert_eq!(err.len, 8000);
        assert!(err.to_string().contains("too long"));
    }
}
