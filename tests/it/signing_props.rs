//! Property tests: sign then verify round-trips, and any single-byte change to a signed
//! header, the body or the signature makes verification fail.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use proptest::prelude::*;
use psd2_console::cert::{Certificate, Credentials, PrivateKey};
use psd2_console::signing::{
    RequestView, SignOptions, SignatureParams, VerifyPolicy, sign_request, verify_request,
};

use crate::common::header_map;

fn credentials() -> &'static Credentials {
    static C: OnceLock<Credentials> = OnceLock::new();
    C.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
        Credentials::new(
            Certificate::load(&dir.join("tpp_qsealc_cert.pem")).unwrap(),
            PrivateKey::load(&dir.join("tpp_key.pkcs8.pem")).unwrap(),
        )
        .unwrap()
    })
}

/// A fixed instant inside the vector certificates' validity.
fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_000_000)
}

struct Signed {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn sign(
    method: &str,
    path: &str,
    psu_id: &str,
    x_request_id: &str,
    body: &[u8],
    request_target: bool,
) -> Signed {
    let mut headers = vec![
        ("X-Request-ID".to_string(), x_request_id.to_string()),
        ("PSU-ID".to_string(), psu_id.to_string()),
        (
            "TPP-Redirect-URI".to_string(),
            "http://127.0.0.1:9/cb".to_string(),
        ),
    ];
    sign_request(
        credentials(),
        method,
        path,
        &mut headers,
        body,
        SignOptions {
            request_target,
            now: now(),
        },
    );
    Signed {
        method: method.to_string(),
        path: path.to_string(),
        headers,
        body: body.to_vec(),
    }
}

fn verify(s: &Signed) -> Result<(), String> {
    let map = header_map(&s.headers);
    verify_request(
        &VerifyPolicy::default(),
        &RequestView {
            method: &s.method,
            path_and_query: &s.path,
            headers: &map,
            body: &s.body,
        },
        now(),
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// Printable ASCII header values without leading/trailing spaces.
fn header_value() -> impl Strategy<Value = String> {
    "[!-~]([ -~]{0,40}[!-~])?"
}

/// Another printable character than `c` (keeps the header value legal).
fn other_printable(c: u8, pick: u8) -> u8 {
    let mut n = b'!' + pick % 94;
    if n == c {
        n = if n == b'~' { b'!' } else { n + 1 };
    }
    n
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn sign_then_verify_round_trips(
        method in prop::sample::select(vec!["GET", "POST", "PUT", "DELETE"]),
        path in "/v1/[a-z]{1,12}(/[a-z0-9-]{1,12})?(\\?[a-z]{1,5}=[a-z0-9]{1,5})?",
        psu_id in header_value(),
        x_request_id in header_value(),
        body in prop::collection::vec(any::<u8>(), 0..300),
        request_target in any::<bool>(),
    ) {
        let s = sign(method, &path, &psu_id, &x_request_id, &body, request_target);
        prop_assert_eq!(verify(&s), Ok(()));
    }

    #[test]
    fn any_single_byte_change_to_a_signed_header_fails(
        psu_id in header_value(),
        which in 0usize..4,
        at in any::<prop::sample::Index>(),
        pick in any::<u8>(),
    ) {
        let body = br#"{"a":"1"}"#;
        let mut s = sign("POST", "/v1/payments/x", &psu_id, "a-request-id", body, false);
        // X-Request-ID, PSU-ID, TPP-Redirect-URI, Date are signed (Digest is covered by the
        // body test).
        let name = ["X-Request-ID", "PSU-ID", "TPP-Redirect-URI", "Date"][which];
        let h = s.headers.iter_mut().find(|(n, _)| n == name).unwrap();
        let mut bytes = h.1.clone().into_bytes();
        let i = at.index(bytes.len());
        bytes[i] = other_printable(bytes[i], pick);
        h.1 = String::from_utf8(bytes).unwrap();
        prop_assert!(verify(&s).is_err(), "{} changed at {} still verifies", name, i);
    }

    #[test]
    fn any_single_byte_change_to_the_body_fails(
        body in prop::collection::vec(any::<u8>(), 1..300),
        at in any::<prop::sample::Index>(),
        xor in 1u8..=255,
    ) {
        let mut s = sign("POST", "/v1/payments/x", "psu", "rid", &body, false);
        let i = at.index(s.body.len());
        s.body[i] ^= xor;
        let err = verify(&s).unwrap_err();
        prop_assert!(err.starts_with("digest mismatch"), "{}", err);
    }

    #[test]
    fn any_single_byte_change_to_the_signature_fails(
        at in any::<prop::sample::Index>(),
        xor in 1u8..=255,
    ) {
        let mut s = sign("GET", "/v1/accounts", "psu", "rid", b"", true);
        let h = s.headers.iter_mut().find(|(n, _)| n == "Signature").unwrap();
        let mut params = SignatureParams::parse(&h.1).unwrap();
        let i = at.index(params.signature.len());
        params.signature[i] ^= xor;
        h.1 = params.to_header_value();
        let err = verify(&s).unwrap_err();
        prop_assert!(err.starts_with("signature invalid"), "{}", err);
    }

    #[test]
    fn the_signature_header_survives_rfc2047_round_trips(sig in prop::collection::vec(any::<u8>(), 256)) {
        let p = SignatureParams {
            key_id: "SN=1,CA=CN=Bank Ærø,C=NO".into(),
            algorithm: "rsa-sha256".into(),
            headers: vec!["date".into(), "digest".into()],
            signature: sig,
        };
        let v = p.to_header_value();
        prop_assert!(v.is_ascii());
        prop_assert_eq!(SignatureParams::parse(&v).unwrap(), p.clone());
        prop_assert_eq!(
            SignatureParams::parse(&p.to_plain_value()).unwrap().signature,
            base64::engine::general_purpose::STANDARD
                .decode(base64::engine::general_purpose::STANDARD.encode(&p.signature))
                .unwrap()
        );
    }
}
