//! The caches of the sandbox's read path never give a wrong answer (issue 23): the
//! verifier's certificate cache, keyed by the exact `TPP-Signature-Certificate` text, and
//! the per-second IMF-fixdate used to check `Date` and to date answers.

use std::time::{Duration, SystemTime};

use psd2_console::cert::Credentials;
use psd2_console::cert::generate::{TppCertSpec, credentials_of, generate_set};
use psd2_console::signing::{
    RequestView, SignOptions, Verifier, VerifyError, VerifyPolicy, imf_fixdate, parse_imf_fixdate,
    sign_request, verify_request,
};

use crate::common::header_map;

/// Two TPPs of the same subject (same organisation, organisationIdentifier, country, CA
/// name) with keys and certificates of their own.
fn twins() -> (Credentials, Credentials) {
    let spec = TppCertSpec::default();
    let a = credentials_of(&generate_set(&spec).unwrap()).unwrap();
    let b = credentials_of(&generate_set(&spec).unwrap()).unwrap();
    assert_eq!(a.certificate.subject, b.certificate.subject);
    assert_eq!(a.certificate.issuer, b.certificate.issuer);
    assert_ne!(a.certificate.der, b.certificate.der);
    (a, b)
}

fn signed(creds: &Credentials, request_id: &str, now: SystemTime) -> Vec<(String, String)> {
    let mut hs = vec![
        ("X-Request-ID".to_string(), request_id.to_string()),
        ("PSU-ID".to_string(), "12345678901".to_string()),
        (
            "TPP-Redirect-URI".to_string(),
            "http://127.0.0.1:9/cb".to_string(),
        ),
    ];
    sign_request(
        creds,
        "GET",
        "/v1/accounts",
        &mut hs,
        b"",
        SignOptions {
            request_target: false,
            now,
        },
    );
    hs
}

fn set(hs: &mut [(String, String)], name: &str, value: String) {
    let h = hs
        .iter_mut()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .unwrap();
    h.1 = value;
}

fn get<'a>(hs: &'a [(String, String)], name: &str) -> &'a str {
    &hs.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .unwrap()
        .1
}

/// `Verifier::verify`, and the sandbox's `key_of` + `verify_keyed`, which must agree.
fn verify(v: &Verifier, hs: &[(String, String)], now: SystemTime) -> Result<(), VerifyError> {
    let map = header_map(hs);
    let view = RequestView {
        method: "GET",
        path_and_query: "/v1/accounts",
        headers: &map,
        body: b"",
    };
    let whole = v.verify(&view, now).map(|r| r.certificate);
    let keyed = v
        .key_of(&map)
        .and_then(|k| v.verify_keyed(&view, now, &k))
        .map(|r| r.certificate);
    assert_eq!(
        whole.as_ref().map(|c| c.der.clone()),
        keyed.as_ref().map(|c| c.der.clone()),
        "verify and key_of + verify_keyed disagree"
    );
    // The sandbox's way: signer_of + verify_signer, with the Signature value read once.
    let signed = v
        .signer_of(&map)
        .and_then(|s| v.verify_signer(&view, now, &s))
        .map(|r| r.certificate);
    assert_eq!(
        whole.as_ref().map(|c| c.der.clone()),
        signed.as_ref().map(|c| c.der.clone()),
        "verify and signer_of + verify_signer disagree"
    );
    whole.map(|_| ())
}

#[test]
fn the_certificate_cache_never_answers_for_another_certificate_of_the_same_subject() {
    let (a, b) = twins();
    let now = SystemTime::now();
    let v = Verifier::new(VerifyPolicy::default());
    let from_a = signed(&a, "9b1f1f0e-0000-4000-8000-000000000001", now);
    verify(&v, &from_a, now).unwrap();
    // B's request verifies with B's certificate, which gets an entry of its own.
    let from_b = signed(&b, "9b1f1f0e-0000-4000-8000-000000000002", now);
    verify(&v, &from_b, now).unwrap();
    assert_eq!(v.cached_keys(), 2);
    // B's signature sent with A's (cached) certificate: A's key, not B's, checks it.
    let mut forged = from_b.clone();
    set(
        &mut forged,
        "TPP-Signature-Certificate",
        get(&from_a, "TPP-Signature-Certificate").to_string(),
    );
    let e = verify(&v, &forged, now).unwrap_err();
    assert!(
        matches!(
            e,
            VerifyError::SignatureInvalid { .. } | VerifyError::KeyIdSerialMismatch { .. }
        ),
        "{e:?}"
    );
    // And the other way round.
    let mut forged = from_a.clone();
    set(
        &mut forged,
        "TPP-Signature-Certificate",
        get(&from_b, "TPP-Signature-Certificate").to_string(),
    );
    assert!(verify(&v, &forged, now).is_err());
    // Both genuine requests still verify after the refusals.
    verify(&v, &from_a, now).unwrap();
    verify(&v, &from_b, now).unwrap();
}

#[test]
fn a_certificate_whose_bytes_change_is_not_served_from_the_cache() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let (a, _) = twins();
    let now = SystemTime::now();
    let policy = VerifyPolicy::default();
    let v = Verifier::new(policy);
    let good = signed(&a, "9b1f1f0e-0000-4000-8000-000000000003", now);
    verify(&v, &good, now).unwrap();
    let der = a.certificate.der.clone();
    // Where the certificate's RSA public key sits in its DER.
    let key = &a.certificate.public_key;
    let key_at = der
        .windows(key.len())
        .position(|w| w == key.as_slice())
        .unwrap();
    // One byte changed: in the structure, in the public key's modulus, near the end (the
    // CA's signature, which a sandbox accepting self-made certificates does not check).
    for at in [4, key_at + key.len() / 2, der.len() - 8] {
        let mut bytes = der.clone();
        bytes[at] ^= 0x10;
        let mut changed = good.clone();
        set(
            &mut changed,
            "TPP-Signature-Certificate",
            b64.encode(&bytes),
        );
        let map = header_map(&changed);
        let view = RequestView {
            method: "GET",
            path_and_query: "/v1/accounts",
            headers: &map,
            body: b"",
        };
        // The cached verifier answers what a verifier without a cache answers.
        let cached = verify(&v, &changed, now).map_err(|e| e.to_string());
        let fresh = verify_request(&policy, &view, now)
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(cached, fresh, "byte {at} changed");
        if at == key_at + key.len() / 2 {
            assert!(cached.is_err(), "another public key verified the signature");
        }
    }
    // Whitespace inside the same base64 text is another key of the cache for the same
    // certificate: it verifies.
    let cert = get(&good, "TPP-Signature-Certificate").to_string();
    let mut spaced = good.clone();
    let (head, tail) = cert.split_at(64);
    set(
        &mut spaced,
        "TPP-Signature-Certificate",
        format!("{head} {tail}"),
    );
    verify(&v, &spaced, now).unwrap();
    // The genuine request still verifies.
    verify(&v, &good, now).unwrap();
}

#[test]
fn key_of_refuses_in_the_verifiers_order() {
    let (a, _) = twins();
    let now = SystemTime::now();
    let v = Verifier::new(VerifyPolicy::default());
    let good = signed(&a, "9b1f1f0e-0000-4000-8000-000000000004", now);
    let without = |name: &str| {
        good.iter()
            .filter(|(n, _)| !n.eq_ignore_ascii_case(name))
            .cloned()
            .collect::<Vec<_>>()
    };
    let mut neither = without("Signature");
    neither.retain(|(n, _)| !n.eq_ignore_ascii_case("TPP-Signature-Certificate"));
    assert!(matches!(
        v.key_of(&header_map(&neither)),
        Err(VerifyError::SignatureMissing)
    ));
    assert!(matches!(
        v.key_of(&header_map(&without("TPP-Signature-Certificate"))),
        Err(VerifyError::CertificateMissing)
    ));
    let mut garbage = good.clone();
    set(
        &mut garbage,
        "TPP-Signature-Certificate",
        "bm90IGEgY2VydA==".into(),
    );
    assert!(matches!(
        v.key_of(&header_map(&garbage)),
        Err(VerifyError::CertificateInvalid(_))
    ));
    assert_eq!(v.cached_keys(), 0, "a refused certificate is not kept");
}

/// `key_of` looks the certificate up by the header's bytes as received first (issue 23): a
/// value that is the cached text finds the same key; one with spaces around it (trimmed,
/// as before) finds it too, through the checked way; one that is not UTF-8 is refused as
/// missing, as before, even when its first bytes are a cached certificate's.
#[test]
fn key_of_finds_a_certificate_by_its_bytes_only_when_they_are_the_cached_text() {
    let (a, _) = twins();
    let now = SystemTime::now();
    let v = Verifier::new(VerifyPolicy::default());
    let good = signed(&a, "9b1f1f0e-0000-4000-8000-000000000005", now);
    let first = v.key_of(&header_map(&good)).unwrap();
    let again = v.key_of(&header_map(&good)).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &again));
    assert_eq!(v.cached_keys(), 1);
    let cert = get(&good, "TPP-Signature-Certificate").to_string();
    let mut padded = good.clone();
    set(
        &mut padded,
        "TPP-Signature-Certificate",
        format!("{cert}\u{a0}\u{3000}"),
    );
    let from_padded = v.key_of(&header_map(&padded)).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &from_padded));
    assert_eq!(v.cached_keys(), 1, "the trimmed text is the key");
    assert!(verify(&v, &padded, now).is_ok());
    let mut map = header_map(&good);
    let mut bytes = cert.into_bytes();
    bytes.push(0xff);
    map.insert(
        "tpp-signature-certificate",
        http::HeaderValue::from_bytes(&bytes).unwrap(),
    );
    assert!(matches!(
        v.key_of(&map),
        Err(VerifyError::CertificateMissing)
    ));
    assert_eq!(v.cached_keys(), 1);
}

#[test]
fn the_per_second_date_text_follows_the_second_and_still_refuses_a_wrong_weekday() {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000);
    let text = imf_fixdate(t);
    assert_eq!(parse_imf_fixdate(&text).unwrap(), t);
    // The same second again (now cached), half a second later: the same text.
    assert_eq!(imf_fixdate(t + Duration::from_millis(500)), text);
    // The next second is written anew.
    let next = imf_fixdate(t + Duration::from_secs(1));
    assert_ne!(next, text);
    assert_eq!(
        parse_imf_fixdate(&next).unwrap(),
        t + Duration::from_secs(1)
    );
    // A wrong weekday for the cached second is refused.
    let weekday = &text[..3];
    let other = if weekday == "Mon" { "Tue" } else { "Mon" };
    let wrong = format!("{other}{}", &text[3..]);
    parse_imf_fixdate(&text).unwrap();
    assert!(parse_imf_fixdate(&wrong).is_err(), "{wrong:?} was accepted");
    // Two spaces where the canonical text has one: the same instant to a lenient parser,
    // never the cached canonical text.
    let spaced = text.replacen(' ', "  ", 1);
    assert!(
        parse_imf_fixdate(&spaced).is_err(),
        "{spaced:?} was accepted"
    );
    // RFC 850 form of the same instant: refused although it names the cached second.
    let rfc850 = httpdate_rfc850(&text);
    assert!(parse_imf_fixdate(&rfc850).is_err(), "{rfc850:?}");
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` as RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`.
fn httpdate_rfc850(imf: &str) -> String {
    let day = match &imf[..3] {
        "Mon" => "Monday",
        "Tue" => "Tuesday",
        "Wed" => "Wednesday",
        "Thu" => "Thursday",
        "Fri" => "Friday",
        "Sat" => "Saturday",
        _ => "Sunday",
    };
    // "Www, DD Mon YYYY HH:MM:SS GMT"
    let (dd, mon, yyyy, rest) = (&imf[5..7], &imf[8..11], &imf[12..16], &imf[17..]);
    format!("{day}, {dd}-{mon}-{} {rest}", &yyyy[2..])
}

/// The verified request carries its `Date` as the Date check parsed it (the replay check
/// keeps the X-Request-ID by it instead of parsing the header again), by both ways of
/// verifying.
#[test]
fn the_verified_request_carries_the_date_the_date_check_accepted() {
    let (a, _) = twins();
    let now = SystemTime::now();
    let hs = signed(&a, "9b1f1f0e-0000-4000-8000-0000000000d1", now);
    let map = header_map(&hs);
    let view = RequestView {
        method: "GET",
        path_and_query: "/v1/accounts",
        headers: &map,
        body: b"",
    };
    let v = Verifier::new(VerifyPolicy::default());
    let date = parse_imf_fixdate(get(&hs, "Date")).unwrap();
    assert_eq!(v.verify(&view, now).unwrap().date, Some(date));
    let s = v.signer_of(&map).unwrap();
    assert_eq!(v.verify_signer(&view, now, &s).unwrap().date, Some(date));
}

/// `hs`'s Signature with `name` left out of its `headers` parameter (the signature itself
/// no longer verifies, but the rules before it are what is checked).
fn unlist(hs: &mut [(String, String)], name: &str) {
    let mut p = psd2_console::signing::SignatureParams::parse(get(hs, "Signature")).unwrap();
    assert!(p.headers.iter().any(|h| h == name), "{name} is listed");
    p.headers.retain(|h| h != name);
    set(hs, "Signature", p.to_header_value());
}

/// The signature check reads the request's headers in one pass (issue 23) and keeps the
/// rules of the signed headers, by every way of verifying: an eligible header present but
/// not listed is refused by its name, the first in the document's order (rule 6), and a
/// `Digest` not listed as such (rule 9).
#[test]
fn an_eligible_header_present_but_not_signed_is_refused_by_name() {
    let (a, _) = twins();
    let now = SystemTime::now();
    let v = Verifier::new(VerifyPolicy::default());
    let mut hs = signed(&a, "9b1f1f0e-0000-4000-8000-0000000000e1", now);
    assert_eq!(verify(&v, &hs, now), Ok(()));
    hs.push(("PSU-Corporate-ID".into(), "corporate-1".into()));
    assert_eq!(
        verify(&v, &hs, now),
        Err(VerifyError::HeaderNotSigned("psu-corporate-id".into()))
    );
    unlist(&mut hs, "psu-id");
    assert_eq!(
        verify(&v, &hs, now),
        Err(VerifyError::HeaderNotSigned("psu-id".into()))
    );
    // A body with its Digest, the Digest not listed.
    let body = br#"{"access":{}}"#;
    let mut hs = vec![
        (
            "X-Request-ID".to_string(),
            "9b1f1f0e-0000-4000-8000-0000000000e2".to_string(),
        ),
        (
            "TPP-Redirect-URI".to_string(),
            "http://127.0.0.1:9/cb".to_string(),
        ),
    ];
    sign_request(
        &a,
        "POST",
        "/v1/consents",
        &mut hs,
        body,
        SignOptions {
            request_target: false,
            now,
        },
    );
    let check = |hs: &[(String, String)]| {
        let map = header_map(hs);
        let view = RequestView {
            method: "POST",
            path_and_query: "/v1/consents",
            headers: &map,
            body,
        };
        let whole = v.verify(&view, now).map(|_| ());
        let s = v.signer_of(&map).unwrap();
        assert_eq!(whole, v.verify_signer(&view, now, &s).map(|_| ()));
        whole
    };
    assert_eq!(check(&hs), Ok(()));
    unlist(&mut hs, "digest");
    assert_eq!(check(&hs), Err(VerifyError::DigestNotSigned));
}
