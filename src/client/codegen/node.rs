//! The Node program of the code export (`templates/request.mjs`, an ES module for Node 18+):
//! built-in `crypto` reads the certificate and key and signs, built-in `fetch` sends.

use super::{
    CodeRequest, base64, body_text, c_like_literal, comment_text, common_values, fill,
    header_lines, single_quoted_literal,
};

const TEMPLATE: &str = include_str!("templates/request.mjs");

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

/// The program text for `req`.
pub(super) fn render(req: &CodeRequest) -> String {
    let headers = header_lines(req, c_like_literal, |n, v| format!("  [{n}, {v}],"));
    let mut values = common_values(req, comment_text, c_like_literal);
    values.extend([
        ("HEADERS", headers),
        ("BODY", body(&req.body)),
        ("REQUEST_TARGET", req.sign_request_target.to_string()),
    ]);
    fill(TEMPLATE, &values)
}
