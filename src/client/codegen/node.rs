//! The Node program of the code export (`templates/request.mjs`, an ES module for Node 18+):
//! built-in `crypto` reads the certificate and key and signs, built-in `fetch` sends.

use super::{
    CodeRequest, base64, body_text, c_like_literal, comment_text, fill, single_quoted_literal,
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
    let headers = req
        .headers
        .iter()
        .map(|(n, v)| format!("  [{}, {}],", c_like_literal(n), c_like_literal(v)))
        .collect::<Vec<_>>()
        .join("\n");
    fill(
        TEMPLATE,
        &[
            ("TITLE", comment_text(&req.title)),
            ("BASE_URL", c_like_literal(&req.base_url)),
            ("CERT_FILE", c_like_literal(&req.cert_file)),
            ("KEY_FILE", c_like_literal(&req.key_file)),
            ("METHOD", c_like_literal(&req.method)),
            ("PATH", c_like_literal(&req.path_and_query)),
            ("HEADERS", headers),
            ("BODY", body(&req.body)),
            ("REQUEST_TARGET", req.sign_request_target.to_string()),
        ],
    )
}
