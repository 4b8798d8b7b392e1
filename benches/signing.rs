//! Sign and verify throughput (criterion). Compare with `openssl speed rsa2048` on the same
//! machine; results in BENCHMARKS.md.
//!
//! `cargo bench --bench signing`

// Tests and benches may unwrap: a panic is their failure report (Cargo.toml [lints]).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use psd2_console::cert::{Certificate, Credentials, PrivateKey};
use psd2_console::signing::{
    RequestView, SignOptions, Verifier, VerifyPolicy, sign_request, verify_signing_string,
};

fn credentials() -> Credentials {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    Credentials::new(
        Certificate::load(&dir.join("tpp_qsealc_cert.pem")).unwrap(),
        PrivateKey::load(&dir.join("tpp_key.pkcs8.pem")).unwrap(),
    )
    .unwrap()
}

fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_000_000)
}

fn base_headers() -> Vec<(String, String)> {
    vec![
        (
            "X-Request-ID".into(),
            "99391c7e-ad88-49ec-a2ad-99ddcb1f7721".into(),
        ),
        (
            "PSU-ID".into(),
            "d8a2b1c3-1111-4222-8333-944455556666".into(),
        ),
        (
            "TPP-Redirect-URI".into(),
            "http://127.0.0.1:8080/callback".into(),
        ),
    ]
}

const BODY: &[u8] = br#"{"instructedAmount":{"currency":"NOK","amount":"123.50"},"debtorAccount":{"bban":"12345678903"},"creditorName":"Ola Nordmann","creditorAccount":{"bban":"98765432109"},"remittanceInformationUnstructured":"Invoice 42"}"#;

fn bench(c: &mut Criterion) {
    let creds = credentials();
    let opts = SignOptions {
        request_target: false,
        now: now(),
    };

    c.bench_function(
        "sign_request (digest + signing string + RSA-2048 sign)",
        |b| {
            b.iter(|| {
                let mut h = base_headers();
                black_box(sign_request(
                    &creds,
                    "POST",
                    "/v1/payments/norwegian-domestic-credit-transfers",
                    &mut h,
                    black_box(BODY),
                    opts,
                ))
            })
        },
    );

    let mut signed = base_headers();
    let insp = sign_request(
        &creds,
        "POST",
        "/v1/payments/norwegian-domestic-credit-transfers",
        &mut signed,
        BODY,
        opts,
    );
    let mut map = http::HeaderMap::new();
    for (n, v) in &signed {
        map.append(
            http::HeaderName::from_bytes(n.as_bytes()).unwrap(),
            http::HeaderValue::from_str(v).unwrap(),
        );
    }
    let verifier = Verifier::new(VerifyPolicy::default());
    let view = RequestView {
        method: "POST",
        path_and_query: "/v1/payments/norwegian-domestic-credit-transfers",
        headers: &map,
        body: BODY,
    };
    verifier.verify(&view, now()).unwrap();
    c.bench_function(
        "Verifier::verify (full request: cert cache, keyId, digest, date, RSA-2048 verify)",
        |b| b.iter(|| black_box(verifier.verify(black_box(&view), now()).unwrap())),
    );

    let params = psd2_console::signing::SignatureParams::parse(&insp.signature_header).unwrap();
    let key = psd2_console::signing::TrustedKey::new(creds.certificate.clone(), false).unwrap();
    c.bench_function("RSA-2048 verify only (parsed key)", |b| {
        b.iter(|| {
            black_box(key.verify(
                black_box(insp.signing_string.as_bytes()),
                black_box(&params.signature),
            ))
        })
    });
    c.bench_function("RSA-2048 verify with key parsing per call", |b| {
        b.iter(|| {
            black_box(verify_signing_string(
                &creds.certificate.public_key,
                &insp.signing_string,
                &params.signature,
                false,
            ))
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
