//! The Go program of the code export (`templates/main.go`, standard library only):
//! `crypto/x509` and `crypto/rsa` read the certificate and key and sign, `net/http` sends.

use super::{
    CodeRequest, body_text, c_like_literal, comment_text, common_values, dn_name_lines, fill,
    header_lines,
};

const TEMPLATE: &str = include_str!("templates/main.go");

/// A Go string literal of arbitrary bytes: text as [`c_like_literal`] writes it when they are
/// UTF-8, else printable ASCII kept and every other byte as `\xNN`.
fn bytes_literal(bytes: &[u8]) -> String {
    if let Some(text) = body_text(bytes) {
        // A raw string reads best: JSON needs no escapes in it.
        let raw = text
            .chars()
            .all(|c| c != '`' && !c.is_control() && c != '\u{feff}');
        return if raw {
            format!("`{text}`")
        } else {
            c_like_literal(text)
        };
    }
    let mut out = String::from("\"");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

/// The program text for `req`.
pub(super) fn render(req: &CodeRequest) -> String {
    let headers = header_lines(req, c_like_literal, |n, v| format!("\t{{{n}, {v}}},"));
    let names = dn_name_lines(
        c_like_literal,
        |oid, name| format!("\t{oid}: {name},"),
        "\n",
    );
    let mut values = common_values(req, comment_text, c_like_literal);
    values.extend([
        ("HEADERS", headers),
        ("BODY", bytes_literal(&req.body)),
        ("REQUEST_TARGET", req.sign_request_target.to_string()),
        ("DN_NAMES", names),
    ]);
    fill(TEMPLATE, &values)
}

#[cfg(test)]
mod tests {
    #[test]
    fn bytes_that_are_not_utf8_are_hex_escaped() {
        assert_eq!(super::bytes_literal(b"a\xff\"b"), "\"a\\xff\\\"b\"");
    }
}
