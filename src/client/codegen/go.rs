//! The Go program of the code export (`templates/main.go`, standard library only):
//! `crypto/x509` and `crypto/rsa` read the certificate and key and sign, `net/http` sends.

use super::{Dialect, body_text, c_like_literal, comment_text, lower_case_boolean};

/// How Go writes the placeholders of `templates/main.go`.
pub(super) const DIALECT: Dialect = Dialect {
    template: include_str!("templates/main.go"),
    literal: c_like_literal,
    comment: comment_text,
    header_line: |n, v| format!("\t{{{n}, {v}}},"),
    dn_line: Some((|oid, name| format!("\t{oid}: {name},"), "\n")),
    body: bytes_literal,
    boolean: lower_case_boolean,
};

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

#[cfg(test)]
mod tests {
    #[test]
    fn bytes_that_are_not_utf8_are_hex_escaped() {
        assert_eq!(super::bytes_literal(b"a\xff\"b"), "\"a\\xff\\\"b\"");
    }
}
