//! The Node program of the code export (`templates/request.mjs`, an ES module for Node 18+):
//! built-in `crypto` reads the certificate and key and signs, built-in `fetch` sends.

use super::{
    Dialect, base64, body_text, c_like_literal, comment_text, lower_case_boolean,
    single_quoted_literal,
};

/// How JavaScript writes the placeholders of `templates/request.mjs` (which has no DN
/// table).
pub(super) const DIALECT: Dialect = Dialect {
    template: include_str!("templates/request.mjs"),
    literal: c_like_literal,
    comment: comment_text,
    header_line: |n, v| format!("  [{n}, {v}],"),
    dn_line: None,
    body,
    boolean: lower_case_boolean,
};

/// The body as a `Buffer` expression: a UTF-8 string literal, or base64.
fn body(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "Buffer.alloc(0)".into();
    }
    match body_text(bytes) {
        Some(text) => format!("Buffer.from({}, \"utf8\")", single_quoted_literal(text)),
        None => format!(
            "Buffer.from({}, \"base64\")",
            c_like_literal(&base64(bytes))
        ),
    }
}
