//! The signature test vectors of `tests/vectors/` (a copy of `shared/vectors/`, see its
//! README): their files, and each vector's signed request as the doctor and the verifier
//! read it.

#![allow(dead_code)]

use std::path::PathBuf;

use psd2_console::cert::{Certificate, PrivateKey};
use psd2_console::doctor::RecordedRequest;

/// `tests/vectors/`.
pub fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

/// The bytes of the vector file `name`; panics naming it when it cannot be read.
pub fn read(name: &str) -> Vec<u8> {
    std::fs::read(vectors_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The vector file `name` as text, without its trailing newlines.
pub fn text(name: &str) -> String {
    String::from_utf8(read(name))
        .unwrap()
        .trim_end_matches('\n')
        .to_string()
}

/// `vectors.json`.
pub fn json() -> serde_json::Value {
    serde_json::from_slice(&read("vectors.json")).unwrap()
}

/// The certificate in the vector file `name` (PEM or DER).
pub fn cert(name: &str) -> Certificate {
    Certificate::from_pem_or_der(&read(name), name).unwrap()
}

/// The private key in the vector file `name` (PKCS#8 or PKCS#1, PEM or DER).
pub fn key(name: &str) -> PrivateKey {
    PrivateKey::from_pem_or_der(&read(name), name).unwrap()
}

/// The vector request's headers (without Signature), Date as given.
pub fn request_headers(date: &str, cert: &Certificate) -> Vec<(String, String)> {
    let j = json();
    let field = |k: &str| j[k].as_str().unwrap().to_string();
    vec![
        ("X-Request-ID".into(), field("x-request-id")),
        ("PSU-ID".into(), field("psu-id")),
        ("TPP-Redirect-URI".into(), field("tpp-redirect-uri")),
        ("Digest".into(), text("digest.txt")),
        ("Date".into(), date.into()),
        ("TPP-Signature-Certificate".into(), cert.header_value()),
    ]
}

/// Vector `name`'s request (`A`, `B` or `C`): `POST` of `body.json` to the vectors' path
/// with the headers of [`request_headers`] (Date `date`, the certificate of the vector file
/// `cert_file`) and the vector's `Signature` header, as the doctor records a request.
pub fn vector_request(name: &str, date: &str, cert_file: &str) -> RecordedRequest {
    let j = json();
    let mut headers = request_headers(date, &cert(cert_file));
    headers.push((
        "Signature".into(),
        j["vectors"][name]["signature_header"]
            .as_str()
            .unwrap()
            .into(),
    ));
    RecordedRequest {
        method: "POST".into(),
        path_and_query: j["path"].as_str().unwrap().into(),
        headers,
        body: read("body.json"),
        sent_at: None,
        source: format!("vector {name}"),
        response: None,
        ..RecordedRequest::default()
    }
}
