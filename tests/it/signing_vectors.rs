//! The signature test vectors of `tests/vectors/` (a copy of `shared/vectors/`, see its
//! README): A, B and C signed byte for byte with every key encoding and both certificates,
//! verification of B, the Date rule on A, the tricky issuer, RFC 2047, and the cavage
//! draft's Appendix C values (verify only).

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use psd2_console::cert::{Certificate, Credentials, DistinguishedName, PrivateKey, Psd2Role};
use psd2_console::signing::{
    self, RequestView, SignatureParams, VerifyError, VerifyPolicy, build_signing_string,
    digest_header_value, parse_imf_fixdate, rfc2047, sign_with_names, verify_request,
    verify_signing_string,
};

use crate::common::header_map;
use crate::common::vectors::{cert, json, key, read, request_headers, text, vector_request};

const KEYS: [&str; 3] = [
    "tpp_key.pkcs8.pem",
    "tpp_key.pkcs8.der",
    "tpp_key.pkcs1.pem",
];
const CERTS: [&str; 4] = [
    "tpp_selfsigned_cert.pem",
    "tpp_selfsigned_cert.der",
    "tpp_qsealc_cert.pem",
    "tpp_qsealc_cert.der",
];

#[test]
fn digest_matches_vector() {
    let body = read("body.json");
    assert_eq!(digest_header_value(&body), text("digest.txt"));
    assert_eq!(
        digest_header_value(b""),
        json()["digest_of_empty_body"].as_str().unwrap()
    );
}

#[test]
fn key_id_from_both_certificates() {
    for c in CERTS {
        assert_eq!(cert(c).key_id(), text("key_id.txt"), "{c}");
    }
    let b64 = text("tpp_signature_certificate_selfsigned.b64");
    assert_eq!(cert("tpp_selfsigned_cert.pem").header_value(), b64);
    assert_eq!(
        cert("tpp_qsealc_cert.der").header_value(),
        text("tpp_signature_certificate_qsealc.b64")
    );
    assert_eq!(
        Certificate::from_header_value(&b64).unwrap().key_id(),
        text("key_id.txt")
    );
}

#[test]
fn every_vector_is_signed_byte_for_byte_with_every_key_and_certificate() {
    let j = json();
    for (name, v) in j["vectors"].as_object().unwrap() {
        let names: Vec<String> = v["headers"]
            .as_str()
            .unwrap()
            .split(' ')
            .map(str::to_string)
            .collect();
        let expected_string = text(&format!("vector_{name}_signing_string.txt"));
        assert_eq!(expected_string, v["signing_string"].as_str().unwrap());
        for k in KEYS {
            for c in CERTS {
                let creds = Credentials::new(cert(c), key(k)).unwrap();
                let headers = request_headers(v["date"].as_str().unwrap(), &creds.certificate);
                let (signing_string, params) = sign_with_names(
                    &creds,
                    j["method"].as_str().unwrap(),
                    j["path"].as_str().unwrap(),
                    &headers,
                    &names,
                )
                .unwrap();
                assert_eq!(signing_string, expected_string, "vector {name}");
                assert_eq!(
                    base64::engine::general_purpose::STANDARD.encode(&params.signature),
                    v["signature"].as_str().unwrap(),
                    "vector {name} with {k} and {c}"
                );
                assert_eq!(
                    params.to_header_value(),
                    text(&format!("vector_{name}_signature_header.txt")),
                    "vector {name} header"
                );
            }
        }
    }
}

/// Vector `name`'s request at its own Date with the certificate of `cert_file`, as the
/// verifier reads it: headers and body.
fn vector_parts(name: &str, cert_file: &str) -> (http::HeaderMap, Vec<u8>) {
    let date = json()["vectors"][name]["date"]
        .as_str()
        .unwrap()
        .to_string();
    let r = vector_request(name, &date, cert_file);
    (header_map(&r.headers), r.body)
}

fn view<'a>(headers: &'a http::HeaderMap, body: &'a [u8]) -> RequestView<'a> {
    RequestView {
        method: "POST",
        path_and_query: "/v1/payments/norwegian-domestic-credit-transfers",
        headers,
        body,
    }
}

fn vector_b_now() -> SystemTime {
    parse_imf_fixdate("Sun, 07 Jun 2026 20:51:35 GMT").unwrap()
}

#[test]
fn vector_b_verifies_with_both_certificates_within_60_seconds() {
    for c in ["tpp_selfsigned_cert.pem", "tpp_qsealc_cert.pem"] {
        let (headers, body) = vector_parts("B", c);
        for offset in [0i64, 59, -59, 60, -60] {
            let now = if offset >= 0 {
                vector_b_now() + Duration::from_secs(offset as u64)
            } else {
                vector_b_now() - Duration::from_secs(offset.unsigned_abs())
            };
            let ok = verify_request(&VerifyPolicy::default(), &view(&headers, &body), now);
            assert!(ok.is_ok(), "{c} at {offset}: {ok:?}");
        }
        let late = verify_request(
            &VerifyPolicy::default(),
            &view(&headers, &body),
            vector_b_now() + Duration::from_secs(61),
        )
        .unwrap_err();
        assert!(
            matches!(late, VerifyError::DateSkew { skew_secs: -61, .. }),
            "{late}"
        );
    }
}

#[test]
fn vectors_a_and_c_have_valid_signatures_but_an_invalid_date() {
    let j = json();
    for name in ["A", "C"] {
        let v = &j["vectors"][name];
        let (headers, body) = vector_parts(name, "tpp_selfsigned_cert.pem");
        // A strict server answers the Date error first.
        let err = verify_request(
            &VerifyPolicy::default(),
            &view(&headers, &body),
            vector_b_now(),
        )
        .unwrap_err();
        assert!(matches!(err, VerifyError::DateInvalid(_)), "{name}: {err}");
        assert!(err.to_string().contains("Sun, 07 Jun 2026"), "{err}");
        assert_eq!(err.message_code().as_str(), "TIMESTAMP_INVALID");
        // ... while the signature itself is valid.
        let params = SignatureParams::parse(v["signature_header"].as_str().unwrap()).unwrap();
        let ss = build_signing_string("POST", j["path"].as_str().unwrap(), &params.headers, |n| {
            headers.get(n).and_then(|x| x.to_str().ok())
        })
        .unwrap();
        assert_eq!(ss, v["signing_string"].as_str().unwrap());
        let c = cert("tpp_qsealc_cert.pem");
        assert!(verify_signing_string(
            &c.public_key,
            &ss,
            &params.signature,
            false
        ));
        let mut tampered = ss.clone().into_bytes();
        tampered[0] ^= 1;
        assert!(!verify_signing_string(
            &c.public_key,
            std::str::from_utf8(&tampered).unwrap(),
            &params.signature,
            false
        ));
    }
}

#[test]
fn rfc2047_encoded_signature_verifies_in_either_letter_case() {
    let j = json();
    let plain = j["vectors"]["B"]["signature_header"].as_str().unwrap();
    for enc in [
        rfc2047::encode_utf8_b(plain),
        rfc2047::encode_utf8_b(plain).replace("?B?", "?b?"),
    ] {
        let mut headers = request_headers(
            "Sun, 07 Jun 2026 20:51:35 GMT",
            &cert("tpp_qsealc_cert.pem"),
        );
        headers.push(("Signature".into(), enc));
        let map = header_map(&headers);
        let body = read("body.json");
        verify_request(&VerifyPolicy::default(), &view(&map, &body), vector_b_now()).unwrap();
    }
    for (text, forms) in j["rfc2047_examples"].as_object().unwrap() {
        for (_charset, encoded) in forms.as_object().unwrap() {
            assert_eq!(
                rfc2047::decode_if_encoded(encoded.as_str().unwrap()).unwrap(),
                *text
            );
        }
    }
}

#[test]
fn headers_are_rebuilt_in_whatever_order_the_signature_lists() {
    // Reorder vector B's header list and re-sign: still verifies.
    let creds = Credentials::new(cert("tpp_qsealc_cert.pem"), key("tpp_key.pkcs1.pem")).unwrap();
    let mut headers = request_headers("Sun, 07 Jun 2026 20:51:35 GMT", &creds.certificate);
    let names: Vec<String> = [
        "tpp-redirect-uri",
        "date",
        "psu-id",
        "digest",
        "x-request-id",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (_, params) = sign_with_names(
        &creds,
        "POST",
        "/v1/payments/norwegian-domestic-credit-transfers",
        &headers,
        &names,
    )
    .unwrap();
    headers.push(("Signature".into(), params.to_header_value()));
    let map = header_map(&headers);
    let body = read("body.json");
    verify_request(&VerifyPolicy::default(), &view(&map, &body), vector_b_now()).unwrap();
}

#[test]
fn certificates_and_roles_are_read() {
    for c in CERTS {
        let c = cert(c);
        assert_eq!(c.serial_hex(), "1A2B3C4D5E");
        assert_eq!(c.issuer.to_rfc2253(), "CN=Sandbox CA,O=Example Bank,C=NO");
        assert_eq!(c.roles(), vec![Psd2Role::PspPi, Psd2Role::PspAi]);
        let psd2 = c.psd2.as_ref().unwrap();
        assert_eq!(psd2.nca_name, "Finanstilsynet");
        assert_eq!(psd2.nca_id, "NO-FSA");
        assert!(c.is_valid_at(vector_b_now()));
    }
    assert_eq!(
        cert("tpp_qsealc_cert.pem").subject.to_rfc2253(),
        "CN=Example TPP,organizationIdentifier=PSDNO-FSA-123456,O=Example TPP AS,C=NO"
    );
    let ca = cert("sandbox_ca_cert.pem");
    assert!(ca.psd2.is_none());
    assert_eq!(
        psd2_console::cert::qc::parse_qc_statements(&read("qcstatements_psd2.der"))
            .unwrap()
            .unwrap()
            .roles,
        vec![Psd2Role::PspPi, Psd2Role::PspAi]
    );
}

#[test]
fn every_key_encoding_loads_and_a_foreign_key_is_refused() {
    let k8 = key("tpp_key.pkcs8.pem");
    for k in KEYS {
        assert_eq!(key(k).public_key_der(), k8.public_key_der(), "{k}");
        assert!(key(k).matches(&cert("tpp_qsealc_cert.pem")));
    }
    let ca_key = key("ca_key.pkcs8.pem");
    let err = Credentials::new(cert("tpp_qsealc_cert.pem"), ca_key).unwrap_err();
    assert!(err.to_string().contains("does not match"), "{err}");
    // A certificate file is not a key and vice versa: clear errors naming the file.
    let e = PrivateKey::from_pem_or_der(&read("tpp_qsealc_cert.pem"), "tpp_qsealc_cert.pem")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tpp_qsealc_cert.pem") && e.contains("CERTIFICATE"),
        "{e}"
    );
    let e = Certificate::from_pem_or_der(&read("tpp_key.pkcs8.der"), "tpp_key.pkcs8.der")
        .unwrap_err()
        .to_string();
    assert!(e.contains("tpp_key.pkcs8.der"), "{e}");
    // Debug output never shows key material.
    assert!(format!("{k8:?}").contains("redacted"));
}

#[test]
fn tricky_issuer_key_id_uses_rfc2047_and_verifies_in_openssl_form_too() {
    let tricky = cert("extra_tricky_issuer_selfsigned_cert.pem");
    assert_eq!(tricky.serial_hex(), "F1E2D3C4");
    let key_id = tricky.key_id();
    assert_eq!(
        key_id,
        "SN=F1E2D3C4,CA=CN=Sandbox CA #2,organizationIdentifier=NTRNO-123456789,O=Bank\\, Ærø & Co AS,C=NO"
    );
    let openssl_dn = "CN=Sandbox CA #2,organizationIdentifier=NTRNO-123456789,O=Bank\\, \\C3\\86r\\C3\\B8 & Co AS,C=NO";
    assert!(
        DistinguishedName::parse_rfc2253(openssl_dn)
            .unwrap()
            .matches(&tricky.issuer)
    );
    let creds = Credentials::new(tricky.clone(), key("tpp_key.pkcs8.pem")).unwrap();
    let now = SystemTime::now();
    let body = read("body.json");
    let mut headers = vec![
        ("X-Request-ID".to_string(), uuid::Uuid::new_v4().to_string()),
        (
            "TPP-Redirect-URI".to_string(),
            "http://127.0.0.1:1/cb".to_string(),
        ),
    ];
    let insp = signing::sign_request(
        &creds,
        "POST",
        "/v1/payments/x",
        &mut headers,
        &body,
        signing::SignOptions {
            request_target: true,
            now,
        },
    );
    assert!(
        insp.signature_header.starts_with("=?utf-8?B?"),
        "{}",
        insp.signature_header
    );
    assert!(insp.signature_header.is_ascii());
    let map = header_map(&headers);
    let req = RequestView {
        method: "POST",
        path_and_query: "/v1/payments/x",
        headers: &map,
        body: &body,
    };
    verify_request(&VerifyPolicy::default(), &req, now).unwrap();
    // The same signature with the keyId in OpenSSL's escaped form and a zero-padded serial.
    let params = SignatureParams::parse(&insp.signature_header).unwrap();
    let reworded = SignatureParams {
        key_id: format!("SN=00F1E2D3C4,CA={openssl_dn}"),
        ..params
    };
    let mut headers2 = headers.clone();
    headers2.retain(|(n, _)| n != "Signature");
    headers2.push(("Signature".into(), reworded.to_header_value()));
    let map2 = header_map(&headers2);
    verify_request(
        &VerifyPolicy::default(),
        &RequestView {
            headers: &map2,
            ..req
        },
        now,
    )
    .unwrap();
}

#[test]
fn cavage_appendix_c_values_verify() {
    let spec = String::from_utf8(read("cavage/appendix_c_vectors.txt")).unwrap();
    let pub_pem = pem::parse(read("cavage/test_pub.pem")).unwrap();
    let signatures: Vec<String> = spec
        .lines()
        .filter_map(|l| {
            let i = l.find("signature=\"")?;
            let rest = &l[i + "signature=\"".len()..];
            let end = rest.find('"')?;
            let s = &rest[..end];
            (!s.contains("...")).then(|| s.to_string())
        })
        .collect();
    assert_eq!(signatures.len(), 3, "C.1, C.2 and C.3 signatures");
    let date = "date: Sun, 05 Jan 2014 21:31:40 GMT";
    let target = "(request-target): post /foo?param=value&pet=dog";
    let strings = [
        date.to_string(),
        format!("{target}\nhost: example.com\n{date}"),
        format!(
            "{target}\nhost: example.com\n{date}\ncontent-type: application/json\ndigest: SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=\ncontent-length: 18"
        ),
    ];
    for (s, sig) in strings.iter().zip(&signatures) {
        let sig = base64::engine::general_purpose::STANDARD
            .decode(sig)
            .unwrap();
        assert!(
            verify_signing_string(pub_pem.contents(), s, &sig, true),
            "{s}"
        );
        // A 1024-bit key is refused without the legacy switch.
        assert!(!verify_signing_string(pub_pem.contents(), s, &sig, false));
    }
    // The digest of the draft's body matches too.
    assert_eq!(
        digest_header_value(b"{\"hello\": \"world\"}"),
        "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="
    );
    // And the signing string is rebuilt from the header list of C.2.
    let params = SignatureParams::parse(&format!(
        "keyId=\"Test\",algorithm=\"rsa-sha256\",headers=\"(request-target) host date\",signature=\"{}\"",
        signatures[1]
    ))
    .unwrap();
    let rebuilt =
        build_signing_string(
            "POST",
            "/foo?param=value&pet=dog",
            &params.headers,
            |n| match n {
                "host" => Some("example.com"),
                "date" => Some("Sun, 05 Jan 2014 21:31:40 GMT"),
                _ => None,
            },
        )
        .unwrap();
    assert_eq!(rebuilt, strings[1]);
}

#[test]
fn date_is_a_strict_imf_fixdate() {
    assert!(parse_imf_fixdate("Sun, 07 Jun 2026 20:51:35 GMT").is_ok());
    assert!(parse_imf_fixdate("Tue, 07 Jun 2026 20:51:35 GMT").is_err());
    assert!(parse_imf_fixdate("Sunday, 07-Jun-26 20:51:35 GMT").is_err());
    assert!(parse_imf_fixdate("Sun Jun  7 20:51:35 2026").is_err());
    assert_eq!(
        signing::imf_fixdate(vector_b_now()),
        "Sun, 07 Jun 2026 20:51:35 GMT"
    );
}
