//! Regression tests for crashes that the fuzz targets in `fuzz/` found (BENCHMARKS.md,
//! "Fuzzing"). Each test feeds the input (or its shape) that crashed and expects a clear
//! result instead of a panic.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use psd2_console::cert::{Certificate, DistinguishedName};
use psd2_console::signing::{
    RequestView, TrustedKey, VerifyError, VerifyPolicy, imf_fixdate, verify_signed_message,
};

/// 2026-03-01T10:00:00Z.
fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_772_359_200)
}

/// A self-signed certificate of the test vectors' TPP key, valid from `not_before` to
/// `not_after`.
fn certificate_valid(
    not_before: time::OffsetDateTime,
    not_after: time::OffsetDateTime,
) -> Certificate {
    let key = rcgen::KeyPair::from_pem(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/tpp_key.pkcs8.pem"
    )))
    .unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.not_before = not_before;
    params.not_after = not_after;
    let cert = params.self_signed(&key).unwrap();
    Certificate::from_der(cert.der(), "test").unwrap()
}

fn verify_at_now(cert: Certificate) -> Result<(), VerifyError> {
    let key = Arc::new(TrustedKey::new(cert, false).unwrap());
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
    verify_signed_message(&VerifyPolicy::default(), &message, now(), &key).map(|_| ())
}

/// Found while writing the `cert` fuzz target (its verification step): a TPP certificate
/// that expired before 1970 (UTCTime years 50–69 are 1950–1969) made the verifier panic while
/// writing the expiry date (httpdate cannot write dates before the epoch), so one request
/// with such a `TPP-Signature-Certificate` killed the sandbox's handler. It must be refused
/// as expired.
#[test]
fn certificate_expired_before_1970_is_refused_not_a_panic() {
    let cert = certificate_valid(
        // 1950-01-01T00:00:00Z .. 1960-06-01T12:00:00Z
        time::OffsetDateTime::from_unix_timestamp(-631_152_000).unwrap(),
        time::OffsetDateTime::from_unix_timestamp(-302_443_200).unwrap(),
    );
    match verify_at_now(cert) {
        Err(VerifyError::CertificateExpired { not_after, .. }) => {
            assert_eq!(not_after, "Wed, 01 Jun 1960 12:00:00 GMT");
        }
        other => panic!("expected CertificateExpired, got {other:?}"),
    }
}

/// The same for the formatting helper itself (also used by `cert info`): a time before 1970
/// is written, not a panic.
#[test]
fn imf_fixdate_writes_times_before_1970() {
    let t = SystemTime::UNIX_EPOCH - Duration::from_secs(86_400);
    assert_eq!(imf_fixdate(t), "Wed, 31 Dec 1969 00:00:00 GMT");
}

/// fuzz target `dn` (crash-ccab1eda29d0efe0445d31ddc49df8e4d45f7160): the character after a
/// `#hex` value was skipped as if it were a separator, so a non-ASCII character there made
/// the parser slice inside it and panic; any other character was silently taken for a
/// separator. A `#hex` value must be followed by `,`, `+`, `;` or the end (RFC 2253 2.1).
#[test]
fn dn_hex_value_followed_by_a_non_separator_is_an_error() {
    let found = "2.5.4.3..345.=#0C053D616E64313F7820\u{14}2.5.4.3..345.=#0C053D616E6431\u{4f9}7820\u{14}341341.345.=#0C053D616E64313F7820\u{14}2==#N2O";
    for input in [found, "CN=#0C00\u{e9}O=x", "CN=#0C00xO=y", "CN=#0C00 O=y"] {
        let e = DistinguishedName::parse_rfc2253(input).unwrap_err();
        assert!(e.reason.contains("#hex"), "{input:?}: {}", e.reason);
    }
    // Separators (with spaces around them) after a #hex value still work.
    let dn = DistinguishedName::parse_rfc2253("CN=#0C0141 , O=Bank;C=NO").unwrap();
    assert_eq!(dn.to_rfc2253(), "CN=A,O=Bank,C=NO");
}
