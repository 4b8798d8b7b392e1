//! Certificate and private-key loading (PEM or DER files, the `TPP-Signature-Certificate`
//! header value), including the PSD2 qcStatements extension.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use psd2_console::cert::{Certificate, PrivateKey};
use psd2_console::signing::{RequestView, TrustedKey, VerifyPolicy, verify_signed_message};

fn use_certificate(cert: Certificate) {
    let _ = cert.key_id();
    let _ = cert.roles();
    let _ = cert.to_pem();
    let _ = cert.header_value();
    let _ = format!("{cert:?}");
    let Ok(key) = TrustedKey::new(cert, true) else {
        return;
    };
    // The sandbox's checks of a TPP certificate (validity period first).
    let mut headers = http::HeaderMap::new();
    headers.insert(
        "signature",
        http::HeaderValue::from_static("keyId=\"SN=1,CA=CN=X\",signature=\"AAAA\""),
    );
    let message = RequestView {
        method: "GET",
        path_and_query: "/v1/accounts",
        headers: &headers,
        body: b"",
    };
    let now = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_772_359_200);
    let _ = verify_signed_message(&VerifyPolicy::default(), &message, now, &Arc::new(key));
}

fuzz_target!(|data: &[u8]| {
    if let Ok(cert) = Certificate::from_pem_or_der(data, "fuzz") {
        use_certificate(cert);
    }
    if let Ok(key) = PrivateKey::from_pem_or_der(data, "fuzz") {
        let _ = key.bits();
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(cert) = Certificate::from_header_value(text)
    {
        use_certificate(cert);
    }
});
