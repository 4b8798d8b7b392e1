//! The Python program of the code export (`templates/request.py`): `requests` sends,
//! `cryptography` reads the certificate and key and signs.

use super::{Dialect, base64, body_text, c_like_literal, comment_text, single_quoted_literal};

/// How Python writes the placeholders of `templates/request.py`.
pub(super) const DIALECT: Dialect = Dialect {
    template: include_str!("templates/request.py"),
    literal: c_like_literal,
    comment: comment_text,
    header_line: |n, v| format!("    ({n}, {v}),"),
    dn_line: Some((|oid, name| format!("    {oid}: {name},"), "\n")),
    body,
    boolean: |b| if b { "True" } else { "False" }.to_string(),
};

/// The body as a Python `bytes` expression: a UTF-8 string literal encoded, or base64.
fn body(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "b\"\"".into();
    }
    match body_text(bytes) {
        Some(text) => format!("{}.encode(\"utf-8\")", single_quoted_literal(text)),
        None => format!("base64.b64decode({})", c_like_literal(&base64(bytes))),
    }
}
