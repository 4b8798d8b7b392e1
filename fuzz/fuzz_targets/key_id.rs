//! keyId parsing (`SN=<hex serial>,CA=<issuer DN>`, Authentication rule 5) as the verifier
//! meets it: a Signature header whose keyId differs from the certificate's printed one is
//! parsed and compared attribute by attribute.
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
    let Ok(key_id) = std::str::from_utf8(data) else {
        return;
    };
    if key_id.contains('"') {
        return;
    }
    let signature =
        format!("keyId=\"{key_id}\",algorithm=\"rsa-sha256\",headers=\"date\",signature=\"AAAA\"");
    let Ok(value) = http::HeaderValue::from_str(&signature) else {
        return;
    };
    let mut headers = http::HeaderMap::new();
    headers.insert("signature", value);
    headers.insert(
        "date",
        http::HeaderValue::from_static("Sun, 01 Mar 2026 10:00:00 GMT"),
    );
    let policy = VerifyPolicy {
        check_validity: false,
        ..VerifyPolicy::default()
    };
    let message = RequestView {
        method: "GET",
        path_and_query: "/v1/accounts",
        headers: &headers,
        body: b"",
    };
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_772_359_200);
    KEY.with(|key| {
        let _ = verify_signed_message(&policy, &message, now, key);
    });
});
