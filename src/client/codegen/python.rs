//! The Python program of the code export (`templates/request.py`): `requests` sends,
//! `cryptography` reads the certificate and key and signs.

use super::{
    CodeRequest, base64, body_text, c_like_literal, comment_text, common_values, dn_name_lines,
    fill, header_lines, single_quoted_literal,
};

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
    let headers = header_lines(req, c_like_literal, |n, v| format!("    ({n}, {v}),"));
    let names = dn_name_lines(
        c_like_literal,
        |oid, name| format!("    {oid}: {name},"),
        "\n",
    );
    let mut values = common_values(req, comment_text, c_like_literal);
    values.extend([
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
    ]);
    fill(TEMPLATE, &values)
}
