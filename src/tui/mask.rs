//! Masking of the values that change on every preparation (X-Request-ID, Date,
//! TPP-Session-ID, certificate, keyId, signature bytes), for snapshot tests and
//! screenshots ([`crate::tui::App::mask_volatile`]).

use crate::client::PreparedRequest;
use crate::xs2a::headers as h;

/// Placeholders for values that change on every preparation.
const VOLATILE: [(&str, &str); 4] = [
    (h::X_REQUEST_ID, "<x-request-id>"),
    (h::DATE, "<date>"),
    (h::TPP_SESSION_ID, "<tpp-session-id>"),
    (h::TPP_SIGNATURE_CERTIFICATE, "<certificate>"),
];

/// `req` with its volatile values (X-Request-ID, Date, TPP-Session-ID, certificate,
/// keyId, the signature bytes) replaced by placeholders such as `<date>`, everywhere they
/// appear; the structure of the `Signature` header is kept.
pub fn mask_request(mut req: PreparedRequest) -> PreparedRequest {
    let mut replacements: Vec<(String, &str)> = Vec::new();
    for (name, placeholder) in VOLATILE {
        if let Some(v) = req.header(name) {
            replacements.push((v.to_string(), placeholder));
        }
    }
    replacements.push((req.inspection.key_id.clone(), "<key-id>"));
    let mask = |s: &str| {
        let mut out = s.to_string();
        for (v, p) in &replacements {
            if !v.is_empty() {
                out = out.replace(v.as_str(), p);
            }
        }
        mask_signature_bytes(&out)
    };
    for (_, v) in req.headers.iter_mut() {
        *v = mask(v);
    }
    for (_, v) in req.inspection.added_headers.iter_mut() {
        *v = mask(v);
    }
    req.inspection.signing_string = mask(&req.inspection.signing_string);
    req.inspection.key_id = mask(&req.inspection.key_id);
    req.inspection.signature_header = mask(&req.inspection.signature_header);
    req
}

/// Replaces the value of `signature="..."` by `<signature>`.
fn mask_signature_bytes(s: &str) -> String {
    const START: &str = "signature=\"";
    match s.find(START) {
        Some(i) => {
            let from = i + START.len();
            match s[from..].find('"') {
                Some(len) => format!("{}<signature>{}", &s[..from], &s[from + len..]),
                None => s.to_string(),
            }
        }
        None => s.to_string(),
    }
}
