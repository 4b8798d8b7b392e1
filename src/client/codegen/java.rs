//! The Java program of the code export (`templates/Main.java`, Java 17+, run as
//! `java Main.java`): `java.security` reads the certificate and key and signs,
//! `java.net.http` sends.

use super::{Dialect, base64, body_text, comment_text, double_quoted, lower_case_boolean};

/// How Java writes the placeholders of `templates/Main.java`.
pub(super) const DIALECT: Dialect = Dialect {
    template: include_str!("templates/Main.java"),
    literal,
    comment,
    header_line: |n, v| format!("        {{{n}, {v}}},"),
    dn_line: Some((
        |oid, name| format!("        Map.entry({oid}, {name})"),
        ",\n",
    )),
    body,
    boolean: lower_case_boolean,
};

/// A Java string literal of `s` that is pure ASCII, whatever the platform encoding the
/// launcher reads the file with: `\` and `"` escaped, control characters as octal escapes
/// (a `\u000a` escape would end the line before the compiler sees the literal), other
/// non-ASCII characters as `\uXXXX` (UTF-16 units).
fn literal(s: &str) -> String {
    double_quoted(s, |c, out| match c {
        c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\{:03o}", c as u32)),
        c if c.is_ascii() => out.push(c),
        c => {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{:04x}", u));
            }
        }
    })
}

/// `title` for a `//` comment: one line of ASCII, as [`literal`] writes it without the
/// quotes (a backslash-u that is not a Unicode escape would not compile, even in a comment).
fn comment(title: &str) -> String {
    let quoted = literal(&comment_text(title));
    quoted[1..quoted.len() - 1].to_string()
}

/// The body as a `byte[]` expression: a string literal's UTF-8 bytes, or base64.
fn body(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "new byte[0]".into();
    }
    match body_text(bytes) {
        Some(text) => format!("{}.getBytes(StandardCharsets.UTF_8)", literal(text)),
        None => format!("Base64.getDecoder().decode({})", literal(&base64(bytes))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn java_literals_are_ascii_and_survive_unicode_preprocessing() {
        assert_eq!(
            super::literal("a\"\\u0041\nÆ😀"),
            "\"a\\\"\\\\u0041\\012\\u00c6\\ud83d\\ude00\""
        );
    }
}
