//! The `Digest` (Authentication rule 9) and `Date` (rule 4) headers as the verifier checks
//! them, against a fixed certificate. Input: `<Digest value>\0<Date value>\0<body>`.
#![no_main]

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use libfuzzer_sys::fuzz_target;
use psd2_console::cert::Certificate;
use psd2_console::signing::{RequestView, TrustedKey, VerifyPolicy, verify_signed_message};

thread_local! {
    static KEY: Arc<TrustedKey> = Arc::new(
        TrustedKey::new(
            Certificate::from_der(include_bytes!("../../tests/vectors/tpp_qsealc_cert.der"), "fuzz")
                .expect("test certificate"),
            false,
        )
        .expect("test key"),
    );
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let digest = parts.next().unwrap_or_default();
    let date = parts.next();
    let body = parts.next().unwrap_or_default();
    let mut headers = http::HeaderMap::new();
    match http::HeaderValue::from_bytes(digest) {
        Ok(v) => {
            headers.insert("digest", v);
        }
        Err(_) => return,
    }
    if let Some(date) = date {
        match http::HeaderValue::from_bytes(date) {
            Ok(v) => {
                headers.insert("date", v);
            }
            Err(_) => return,
        }
    }
    KEY.with(|key| {
        let signature = format!(
            "keyId=\"{}\",algorithm=\"rsa-sha256\",headers=\"digest date\",signature=\"AAAA\"",
            key.certificate.key_id()
        );
        headers.insert(
            "signature",
            http::HeaderValue::from_str(&signature).expect("ASCII keyId"),
        );
        let policy = VerifyPolicy {
            check_validity: false,
            require_eligible_signed: false,
            ..VerifyPolicy::default()
        };
        let message = RequestView {
            method: "POST",
            path_and_query: "/v1/payments/sepa-credit-transfers",
            headers: &headers,
            body,
        };
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_772_359_200);
        let _ = verify_signed_message(&policy, &message, now, key);
    });
});
