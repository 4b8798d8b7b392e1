//! The Python program of the code export (`templates/request.py`): `requests` sends,
//! `cryptography` reads the certificate and key and signs.

use super::{
    CodeRequest, base64, body_text, c_like_literal, comment_text, fill, single_quoted_literal,
};
use crate::cert::dn::TYPE_NAMES;

const TEMPLATE: &str = include_str!("templates/request.py");

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

/// The program text for `req`.
pub(super) fn render(req: &CodeRequest) -> String {
    let headers = req
        .headers
        .iter()
        .map(|(n, v)| format!("    ({}, {}),", c_like_literal(n), c_like_literal(v)))
        .collect::<Vec<_>>()
        .join("\n");
    let names = TYPE_NAMES
        .iter()
        .map(|(oid, name)| format!("    {}: {},", c_like_literal(oid), c_like_literal(name)))
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
            (
                "REQUEST_TARGET",
                if req.sign_request_target {
                    "True"
                } else {
                    "False"
                }
                .to_string(),
            ),
            ("DN_NAMES", names),
        ],
    )
}
