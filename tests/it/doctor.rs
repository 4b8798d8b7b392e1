//! The doctor (`psd2_console::doctor`, `psd2-console doctor`): requests signed here with a
//! generated test certificate, each with exactly one known fault, are diagnosed offline; the
//! failing check, its status and the verdict's cause are asserted, and a clean request passes.
//! The signature test vectors give a known-good signature (B) and a known-bad Date (A). The
//! command is run end to end on a HAR file, a cURL file, raw HTTP text and standard input.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use psd2_console::cert::generate::{TppCertSpec, credentials_of, generate_set};
use psd2_console::cert::{Certificate, Credentials, PrivateKey, Psd2Role};
use psd2_console::doctor::{self, Diagnosis, Options, RecordedRequest, Status};
use psd2_console::signing::{
    ELIGIBLE_HEADERS, REQUEST_TARGET, SignatureParams, digest_header_value, imf_fixdate,
    sign_with_names,
};

use crate::common::cli;
use crate::common::vectors::vector_request;

const PAYMENT: &str = "/v1/payments/norwegian-domestic-credit-transfers";
const BODY: &str = r#"{"instructedAmount":{"currency":"NOK","amount":"123.50"},"debtorAccount":{"bban":"12345678903"},"creditorName":"Ola Nordmann","creditorAccount":{"bban":"98765432109"},"remittanceInformationUnstructured":"Invoice 42"}"#;

/// A certificate with PSP_AI and PSP_PI.
fn tpp() -> &'static Credentials {
    static C: OnceLock<Credentials> = OnceLock::new();
    C.get_or_init(|| credentials_of(&generate_set(&TppCertSpec::default()).unwrap()).unwrap())
}

/// A certificate with PSP_PI only.
fn pisp_only() -> &'static Credentials {
    static C: OnceLock<Credentials> = OnceLock::new();
    C.get_or_init(|| {
        let spec = TppCertSpec {
            roles: vec![Psd2Role::PspPi],
            ..TppCertSpec::default()
        };
        credentials_of(&generate_set(&spec).unwrap()).unwrap()
    })
}

/// The send time of the tests: now, in whole seconds (the Date header has no fraction).
fn t0() -> SystemTime {
    static T: OnceLock<SystemTime> = OnceLock::new();
    *T.get_or_init(|| {
        psd2_console::cert::from_unix_seconds(psd2_console::cert::unix_seconds(SystemTime::now()))
    })
}

/// A request before signing: method, path, headers (Date and Digest included), body.
#[derive(Clone)]
struct Draft {
    method: &'static str,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    credentials: &'static Credentials,
}

impl Draft {
    fn new(method: &'static str, path: &str, body: &[u8], at: SystemTime) -> Draft {
        let mut headers = vec![
            ("X-Request-ID".to_string(), uuid::Uuid::new_v4().to_string()),
            ("PSU-ID".to_string(), uuid::Uuid::new_v4().to_string()),
            (
                "TPP-Redirect-URI".to_string(),
                "http://127.0.0.1:8080/callback".to_string(),
            ),
            ("PSU-IP-Address".to_string(), "127.0.0.1".to_string()),
            ("Date".to_string(), imf_fixdate(at)),
        ];
        if !body.is_empty() {
            headers.push(("Digest".to_string(), digest_header_value(body)));
        }
        Draft {
            method,
            path: path.to_string(),
            headers,
            body: body.to_vec(),
            credentials: tpp(),
        }
    }

    fn payment(body: &str) -> Draft {
        Draft::new("POST", PAYMENT, body.as_bytes(), t0())
    }

    fn accounts() -> Draft {
        Draft::new("GET", "/v1/accounts", b"", t0())
    }

    fn set(mut self, name: &str, value: &str) -> Draft {
        self.remove(name);
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    fn remove(&mut self, name: &str) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    /// The eligible headers present, in the order of rule 6.
    fn names(&self) -> Vec<String> {
        ELIGIBLE_HEADERS
            .iter()
            .filter(|n| self.headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(n)))
            .map(|n| n.to_string())
            .collect()
    }

    /// Signs `names`, lets `edit` change the Signature parameters, and records the request.
    fn sign_with(
        self,
        names: &[String],
        edit: impl FnOnce(&mut SignatureParams),
    ) -> RecordedRequest {
        let (_, mut params) = sign_with_names(
            self.credentials,
            self.method,
            &self.path,
            &self.headers,
            names,
        )
        .unwrap();
        edit(&mut params);
        self.record(params.to_header_value())
    }

    fn signed(self) -> RecordedRequest {
        let names = self.names();
        self.sign_with(&names, |_| {})
    }

    fn record(mut self, signature: String) -> RecordedRequest {
        self.headers.push((
            "TPP-Signature-Certificate".into(),
            self.credentials.certificate.header_value(),
        ));
        self.headers.push(("Signature".into(), signature));
        RecordedRequest {
            method: self.method.to_string(),
            path_and_query: self.path,
            headers: self.headers,
            body: self.body,
            sent_at: None,
            source: "test".into(),
            response: None,
            ..RecordedRequest::default()
        }
    }
}

fn diagnose_at(r: &RecordedRequest, sent_at: SystemTime) -> Diagnosis {
    doctor::diagnose(
        r,
        &Options {
            sent_at: Some(sent_at),
            now: sent_at,
        },
    )
}

fn diagnose(r: &RecordedRequest) -> Diagnosis {
    diagnose_at(r, t0())
}

fn failing(d: &Diagnosis) -> Vec<&'static str> {
    d.checks
        .iter()
        .filter(|c| c.status == Status::Fail)
        .map(|c| c.id)
        .collect()
}

/// Exactly the check `id` fails, its message contains `needle`, and the verdict names it.
#[track_caller]
fn assert_fault(d: &Diagnosis, id: &str, needle: &str) {
    assert_eq!(failing(d), vec![id], "{}", doctor::report::text(d));
    let check = d.check(id).unwrap();
    assert!(
        check.message.contains(needle),
        "{id}: {:?} lacks {needle:?}",
        check.message
    );
    assert!(!d.verdict.passed);
    assert_eq!(d.verdict.cause, Some(check.id));
    assert!(d.verdict.message.contains(needle), "{}", d.verdict.message);
    assert_eq!(d.exit_code(), 1);
}

#[test]
fn a_clean_request_passes_every_check() {
    for r in [Draft::payment(BODY).signed(), Draft::accounts().signed()] {
        let d = diagnose(&r);
        assert_eq!(
            failing(&d),
            Vec::<&str>::new(),
            "{}",
            doctor::report::text(&d)
        );
        assert!(
            d.checks.iter().all(|c| c.status == Status::Pass),
            "{}",
            doctor::report::text(&d)
        );
        assert!(d.verdict.passed);
        assert_eq!(d.verdict.cause, None);
        assert_eq!(d.exit_code(), 0);
    }
    let d = diagnose(&Draft::payment(BODY).signed());
    assert_eq!(d.operation, Some("payments.domestic.create"));
    for id in [
        "operation",
        "cert.parse",
        "cert.validity",
        "signature.encoding",
        "signature.format",
        "signature.names",
        "keyid.format",
        "keyid.serial",
        "keyid.issuer",
        "digest",
        "date.format",
        "date.skew",
        "signature.listed",
        "signature.eligible",
        "signature.verify",
        "headers.required",
        "headers.values",
        "cert.role",
        "body.rules",
        "body.compact",
    ] {
        assert!(d.check(id).is_some(), "no check {id}");
    }
}

#[test]
fn missing_required_header() {
    let mut draft = Draft::accounts();
    draft.remove("TPP-Redirect-URI");
    assert_fault(
        &diagnose(&draft.signed()),
        "headers.required",
        "TPP-Redirect-URI",
    );
}

#[test]
fn date_not_an_imf_fixdate() {
    let r = Draft::accounts()
        .set("Date", "2026-11-24T10:00:00Z")
        .signed();
    assert_fault(&diagnose(&r), "date.format", "IMF-fixdate");
}

#[test]
fn stale_date_against_sent_at() {
    let r = Draft::new("GET", "/v1/accounts", b"", t0() - Duration::from_secs(120)).signed();
    let d = diagnose(&r);
    assert_fault(&d, "date.skew", "120 s before");
    // The same request sent 30 s after its Date is fine.
    let d = diagnose_at(&r, t0() - Duration::from_secs(90));
    assert!(d.verdict.passed, "{}", doctor::report::text(&d));
}

#[test]
fn wrong_digest() {
    let r = Draft::payment(BODY)
        .set("Digest", &digest_header_value(b"{}"))
        .signed();
    let d = diagnose(&r);
    assert_fault(&d, "digest", &digest_header_value(BODY.as_bytes()));
}

#[test]
fn body_re_serialised_after_signing() {
    // Signed over the compact body, sent pretty-printed.
    let mut r = Draft::payment(BODY).signed();
    let value: serde_json::Value = serde_json::from_str(BODY).unwrap();
    r.body = serde_json::to_vec_pretty(&value).unwrap();
    let d = diagnose(&r);
    assert_fault(&d, "digest", "re-serialised as compact JSON");
    assert_eq!(d.check("body.compact").unwrap().status, Status::Warn);
}

#[test]
fn header_order_swapped() {
    let draft = Draft::payment(BODY);
    let names = draft.names();
    let r = draft.sign_with(&names, |p| p.headers.swap(0, 1));
    let d = diagnose(&r);
    assert_fault(&d, "signature.verify", "another header order");
    let expected = format!("in the order \"{}\"", names.join(" "));
    assert!(
        d.check("signature.verify")
            .unwrap()
            .message
            .contains(&expected)
    );
}

#[test]
fn issuer_dn_in_x500_order_in_key_id() {
    let cert = &tpp().certificate;
    let mut x500 = cert.issuer.clone();
    x500.attributes.reverse();
    let key_id = format!("SN={},CA={}", cert.serial_hex(), x500.to_rfc2253());
    assert_ne!(key_id, cert.key_id());
    let r = Draft::accounts().sign_with(&Draft::accounts().names(), |p| p.key_id = key_id);
    assert_fault(&diagnose(&r), "keyid.issuer", "X.500 order");
}

#[test]
fn wrong_serial_in_key_id() {
    let cert = &tpp().certificate;
    let wrong = format!("{}1", cert.serial_hex());
    let key_id = format!("SN={wrong},CA={}", cert.issuer.to_rfc2253());
    let names = Draft::accounts().names();
    let r = Draft::accounts().sign_with(&names, |p| p.key_id = key_id);
    assert_fault(
        &diagnose(&r),
        "keyid.serial",
        &format!("expected SN={}", cert.serial_hex()),
    );
}

#[test]
fn eligible_header_not_signed() {
    let draft = Draft::accounts();
    let names: Vec<String> = draft
        .names()
        .into_iter()
        .filter(|n| n != "psu-id")
        .collect();
    let r = draft.sign_with(&names, |_| {});
    assert_fault(&diagnose(&r), "signature.eligible", "psu-id");
}

#[test]
fn listed_header_absent() {
    let draft = Draft::accounts();
    let names = draft.names();
    let mut r = draft.sign_with(&names, |_| {});
    r.headers.retain(|(n, _)| !n.eq_ignore_ascii_case("PSU-ID"));
    let d = diagnose(&r);
    assert_fault(&d, "signature.listed", "psu-id");
}

#[test]
fn upper_case_header_names() {
    let draft = Draft::accounts();
    let names = draft.names();
    let r = draft.sign_with(&names, |p| {
        p.headers = p.headers.iter().map(|n| n.to_ascii_uppercase()).collect();
    });
    assert_fault(&diagnose(&r), "signature.names", "lower-case");
}

#[test]
fn non_ascii_signature_without_rfc_2047() {
    // The vectors' tricky issuer (`O=Bank\, Ærø & Co AS`) puts non-ASCII text in the keyId.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let cert = Certificate::load(&dir.join("extra_tricky_issuer_selfsigned_cert.pem")).unwrap();
    let key = PrivateKey::load(&dir.join("tpp_key.pkcs8.pem")).unwrap();
    let credentials: &'static Credentials =
        Box::leak(Box::new(Credentials::new(cert, key).unwrap()));
    let mut draft = Draft::new("GET", "/v1/sandbox/customers", b"", t0());
    draft.credentials = credentials;
    let names = draft.names();
    let (_, params) = sign_with_names(
        credentials,
        draft.method,
        &draft.path,
        &draft.headers,
        &names,
    )
    .unwrap();
    // Sent RFC 2047-encoded it is clean ...
    let encoded = params.to_header_value();
    assert!(encoded.starts_with("=?utf-8?B?"), "{encoded}");
    let d = diagnose(&draft.clone().record(encoded));
    assert!(d.verdict.passed, "{}", doctor::report::text(&d));
    // ... sent plain it is not.
    let plain = params.to_plain_value();
    assert!(!plain.is_ascii());
    assert_fault(
        &diagnose(&draft.record(plain)),
        "signature.encoding",
        "RFC 2047",
    );
}

#[test]
fn expired_certificate() {
    // The generated certificate is valid for 730 days; this request is sent (and dated) 800
    // days from now.
    let later = t0() + Duration::from_secs(800 * 86_400);
    let r = Draft::new("GET", "/v1/accounts", b"", later).signed();
    assert_fault(&diagnose_at(&r, later), "cert.validity", "expired");
}

#[test]
fn missing_psd2_role() {
    let mut draft = Draft::accounts();
    draft.credentials = pisp_only();
    assert_fault(&diagnose(&draft.signed()), "cert.role", "PSP_AI");
}

#[test]
fn bad_amount() {
    let body = BODY.replace(r#""amount":"123.50""#, r#""amount":"123,50""#);
    assert_ne!(body, BODY);
    let d = diagnose(&Draft::payment(&body).signed());
    assert_fault(&d, "body.rules", "body.instructedAmount.amount");
}

#[test]
fn bad_kid() {
    // A 10-digit reference whose last digit is neither its MOD10 nor its MOD11 check digit.
    let kid = (0..10)
        .map(|d| format!("123456789{d}"))
        .find(|k| psd2_console::xs2a::check_digits::check_kid(k).is_err())
        .unwrap();
    let body = BODY.replace(
        r#""remittanceInformationUnstructured":"Invoice 42""#,
        &format!(
            r#""remittanceInformationStructured":{{"reference":"{kid}","referenceType":"KID"}}"#
        ),
    );
    assert_ne!(body, BODY);
    let d = diagnose(&Draft::payment(&body).signed());
    assert_fault(
        &d,
        "body.rules",
        "remittanceInformationStructured.reference",
    );
}

#[test]
fn request_target_signed_but_not_listed() {
    let draft = Draft::accounts();
    let mut names = vec![REQUEST_TARGET.to_string()];
    names.extend(draft.names());
    let r = draft.sign_with(&names, |p| {
        p.headers.remove(0);
    });
    assert_fault(&diagnose(&r), "signature.verify", REQUEST_TARGET);
}

#[test]
fn trailing_whitespace_signed() {
    // The signer put "PSU-IP-Address"-style trailing space into the signed X-Request-ID line.
    let draft = Draft::accounts();
    let names = draft.names();
    let (signing_string, params) = sign_with_names(
        draft.credentials,
        "GET",
        "/v1/accounts",
        &draft.headers,
        &names,
    )
    .unwrap();
    let id = draft
        .headers
        .iter()
        .find(|(n, _)| n == "X-Request-ID")
        .unwrap()
        .1
        .clone();
    let bad = signing_string.replace(&id, &format!("{id} "));
    assert_ne!(bad, signing_string);
    let params = SignatureParams {
        signature: draft.credentials.key.sign_rsa_sha256(bad.as_bytes()),
        ..params
    };
    let r = draft.record(params.to_header_value());
    assert_fault(
        &diagnose(&r),
        "signature.verify",
        "trailing white space in the x-request-id",
    );
}

// ---------------------------------------------------------------------------------------
// The signature test vectors (tests/vectors, a copy of shared/vectors)

/// The vectors' QSeal certificate, the one the doctor's vector requests carry.
const QSEALC: &str = "tpp_qsealc_cert.pem";

#[test]
fn vector_b_is_a_known_good_signature() {
    let date = "Sun, 07 Jun 2026 20:51:35 GMT";
    let r = vector_request("B", date, QSEALC);
    let sent = httpdate::parse_http_date(date).unwrap() + Duration::from_secs(5);
    let d = diagnose_at(&r, sent);
    assert!(d.verdict.passed, "{}", doctor::report::text(&d));
    assert_eq!(d.check("signature.verify").unwrap().status, Status::Pass);
    assert_eq!(d.check("cert.role").unwrap().status, Status::Pass);
    // The same bytes a minute and a half later: only the Date window fails.
    assert_fault(
        &diagnose_at(&r, sent + Duration::from_secs(90)),
        "date.skew",
        "95 s before",
    );
}

#[test]
fn vector_a_has_a_wrong_weekday() {
    let r = vector_request("A", "Tue, 07 Jun 2026 20:51:35 GMT", QSEALC);
    let sent = httpdate::parse_http_date("Sun, 07 Jun 2026 20:51:35 GMT").unwrap();
    let d = diagnose_at(&r, sent);
    assert_fault(&d, "date.format", "Sun, 07 Jun 2026 20:51:35 GMT");
    assert_eq!(d.check("signature.verify").unwrap().status, Status::Pass);
}

// ---------------------------------------------------------------------------------------
// The command, end to end

fn rfc3339(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339()
}

fn har(requests: &[&RecordedRequest]) -> String {
    let entries: Vec<serde_json::Value> = requests
        .iter()
        .map(|r| {
            serde_json::json!({
                "startedDateTime": rfc3339(t0()),
                "time": 5,
                "request": {
                    "method": r.method,
                    "url": format!("http://127.0.0.1:8080{}", r.path_and_query),
                    "httpVersion": "HTTP/1.1",
                    "headers": r.headers.iter()
                        .map(|(n, v)| serde_json::json!({"name": n, "value": v}))
                        .collect::<Vec<_>>(),
                    "queryString": [],
                    "cookies": [],
                    "headersSize": -1,
                    "bodySize": r.body.len(),
                    "postData": {
                        "mimeType": "application/json",
                        "text": String::from_utf8(r.body.clone()).unwrap(),
                    },
                },
            })
        })
        .collect();
    serde_json::json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}})
        .to_string()
}

fn curl(r: &RecordedRequest) -> String {
    let mut words = vec![
        "curl".to_string(),
        "-X".into(),
        r.method.clone(),
        format!("http://127.0.0.1:8080{}", r.path_and_query),
    ];
    for (n, v) in &r.headers {
        words.push("-H".into());
        words.push(format!("{n}: {v}"));
    }
    if !r.body.is_empty() {
        words.push("--data-raw".into());
        words.push(String::from_utf8(r.body.clone()).unwrap());
    }
    let quoted: Vec<String> = words
        .iter()
        .map(|w| shell_words::quote(w).into_owned())
        .collect();
    format!("#!/bin/sh\n{}\n", quoted.join(" \\\n  "))
}

fn raw(r: &RecordedRequest) -> Vec<u8> {
    let mut out = format!("{} {} HTTP/1.1\r\n", r.method, r.path_and_query).into_bytes();
    for (n, v) in &r.headers {
        out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&r.body);
    out
}

fn json_of(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn cli_reads_a_har_file() {
    let dir = tempfile::tempdir().unwrap();
    let clean = Draft::payment(BODY).signed();
    let faulty = Draft::payment(BODY)
        .set("Digest", &digest_header_value(b"{}"))
        .signed();
    let file = dir.path().join("capture.har");
    std::fs::write(&file, har(&[&clean, &faulty])).unwrap();
    let path = file.to_str().unwrap();

    let (code, out, err) = cli::run(dir.path(), &["doctor", path]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("✔ signature.verify"), "{out}");
    assert!(
        out.contains("(recorded)"),
        "startedDateTime is the send time: {out}"
    );
    assert!(
        out.lines().last().unwrap().starts_with("verdict: ✔"),
        "{out}"
    );

    let (code, out, err) = cli::run(dir.path(), &["doctor", path, "--entry", "2"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("✘ digest"), "{out}");
    let verdict = out.lines().last().unwrap();
    assert!(
        verdict.starts_with("verdict: ✘") && verdict.contains("digest"),
        "{out}"
    );

    let (code, out, _) = cli::run(
        dir.path(),
        &["doctor", path, "--entry", "2", "--format", "json"],
    );
    assert_eq!(code, 1);
    let j = json_of(&out);
    assert_eq!(j["verdict"]["passed"], false);
    assert_eq!(j["verdict"]["cause"], "digest");
    assert_eq!(j["operation"], "payments.domestic.create");
    let digest = j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "digest")
        .unwrap();
    assert_eq!(digest["status"], "fail");
    assert_eq!(digest["rule"], "Authentication 9");
    assert!(
        digest["message"]
            .as_str()
            .unwrap()
            .contains("expected SHA-256=")
    );

    let (code, _, err) = cli::run(dir.path(), &["doctor", path, "--entry", "3"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("there is no entry 3"), "{err}");
}

#[test]
fn a_recorded_answer_is_linted_beside_the_checks_without_changing_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let clean = Draft::payment(BODY).signed();
    let mut doc: serde_json::Value = serde_json::from_str(&har(&[&clean])).unwrap();
    // The bank's answer: a 201 whose transactionStatus is not a Berlin Group value and that
    // does not echo X-Request-ID.
    doc["log"]["entries"][0]["response"] = serde_json::json!({
        "status": 201, "statusText": "Created", "httpVersion": "HTTP/1.1",
        "headers": [{"name": "Content-Type", "value": "application/json"}],
        "content": {"size": 0, "mimeType": "application/json",
            "text": "{\"transactionStatus\": \"DONE\", \"paymentId\": \"p1\", \"_links\": {\"self\": {\"href\": \"/v1/payments/norwegian-domestic-credit-transfers/p1\"}}}"},
        "redirectURL": "", "headersSize": -1, "bodySize": -1,
    });
    let file = dir.path().join("answered.har");
    std::fs::write(&file, doc.to_string()).unwrap();
    let path = file.to_str().unwrap();

    let (code, out, err) = cli::run(dir.path(), &["doctor", path]);
    assert_eq!(
        code, 0,
        "the answer does not make the request fail: {out}{err}"
    );
    assert!(
        out.contains("answer 201 (Berlin Group 1.3.11 schemas"),
        "{out}"
    );
    assert!(
        out.contains("X-Request-ID"),
        "the missing echo is named: {out}"
    );
    assert!(
        out.contains("DONE"),
        "the unknown transactionStatus is named: {out}"
    );
    assert!(
        out.lines().last().unwrap().starts_with("verdict: ✔"),
        "{out}"
    );

    let (_, out, _) = cli::run(dir.path(), &["doctor", path, "--format", "json"]);
    let j = json_of(&out);
    assert_eq!(j["response"]["status"], 201);
    assert!(
        j["response"]["summary"].as_str().unwrap().contains("error"),
        "{j}"
    );
    assert!(!j["response"]["findings"].as_array().unwrap().is_empty());
    // Without an answer in the recording there is no lint.
    std::fs::write(&file, har(&[&clean])).unwrap();
    let (_, out, _) = cli::run(dir.path(), &["doctor", path, "--format", "json"]);
    assert!(json_of(&out)["response"].is_null(), "{out}");
}

#[test]
fn a_trailing_newline_after_a_get_is_no_body() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("get.http");
    let status_of = |raw: &str, id: &str| {
        std::fs::write(&file, raw).unwrap();
        let (_, out, _) = cli::run(
            dir.path(),
            &["doctor", file.to_str().unwrap(), "--format", "json"],
        );
        let j = json_of(&out);
        let c = j["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no {id}: {j}"))
            .clone();
        (
            c["status"].as_str().unwrap().to_string(),
            c["message"].as_str().unwrap().to_string(),
        )
    };
    // As `echo` writes it: the blank line, then one more newline.
    let echoed = "GET /v1/accounts HTTP/1.1\nX-Request-ID: 1\n\n\n";
    assert_eq!(status_of(echoed, "body.rules").0, "pass");
    assert_eq!(status_of(echoed, "body.compact").0, "pass");
    // A real body on an operation that takes none is named.
    let (status, message) = status_of(
        "GET /v1/accounts HTTP/1.1\nX-Request-ID: 1\n\n{\"a\":1}",
        "body.rules",
    );
    assert_eq!(status, "warn", "{message}");
    assert!(message.contains("takes no body"), "{message}");
}

#[test]
fn cli_reads_a_curl_file_with_sent_at() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("request.sh");
    std::fs::write(&file, curl(&Draft::payment(BODY).signed())).unwrap();
    let path = file.to_str().unwrap();
    let (code, out, err) = cli::run(
        dir.path(),
        &[
            "doctor",
            path,
            "--sent-at",
            &rfc3339(t0() + Duration::from_secs(3)),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("(--sent-at)"), "{out}");
    let late = rfc3339(t0() + Duration::from_secs(300));
    let (code, out, _) = cli::run(
        dir.path(),
        &["doctor", path, "--sent-at", &late, "--format", "json"],
    );
    assert_eq!(code, 1);
    let j = json_of(&out);
    assert_eq!(j["verdict"]["cause"], "date.skew");
    assert_eq!(j["sent_at_source"], "option");
    let (code, _, err) = cli::run(dir.path(), &["doctor", path, "--sent-at", "yesterday"]);
    assert_eq!(code, 2, "clap refuses a bad --sent-at: {err}");
}

#[test]
fn cli_reads_raw_http_from_a_file_and_standard_input() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let sent_at = rfc3339(t0());
    let mut draft = Draft::accounts();
    draft.credentials = pisp_only();
    let request = raw(&draft.signed());
    let file = dir.path().join("request.http");
    std::fs::write(&file, &request).unwrap();
    let (code, out, err) = cli::run(
        dir.path(),
        &["doctor", file.to_str().unwrap(), "--sent-at", &sent_at],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("✘ cert.role"), "{out}");
    assert!(out.contains("PSP_AI"), "{out}");

    let mut child = cli::headless(
        dir.path(),
        &["doctor", "-", "--sent-at", &sent_at, "--format", "json"],
    )
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    child.stdin.take().unwrap().write_all(&request).unwrap();
    let (code, out, err) = cli::outcome(child.wait_with_output().unwrap());
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(json_of(&out)["verdict"]["cause"], "cert.role");

    let clean = raw(&Draft::accounts().signed());
    std::fs::write(&file, &clean).unwrap();
    let (code, out, err) = cli::run(
        dir.path(),
        &["doctor", file.to_str().unwrap(), "--sent-at", &sent_at],
    );
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn cli_exits_2_for_unreadable_input() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.har");
    let (code, _, err) = cli::run(dir.path(), &["doctor", missing.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"), "{err}");
    let garbage = dir.path().join("garbage.txt");
    std::fs::write(&garbage, "hello world\n").unwrap();
    let (code, _, err) = cli::run(dir.path(), &["doctor", garbage.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("raw HTTP"), "{err}");
    let (code, _, err) = cli::run(dir.path(), &["doctor", "17"]);
    assert_eq!(code, 2, "no history yet: {err}");
}

#[test]
fn cli_reads_a_history_entry_whose_signature_is_redacted() {
    use psd2_console::client::history::{History, HistoryEntry, redact};
    let home = tempfile::tempdir().unwrap();
    let paths = psd2_console::profile::Paths::under(home.path().to_path_buf());
    std::fs::create_dir_all(&paths.data).unwrap();
    let r = Draft::payment(BODY).signed();
    let history = History::open(&paths.history_file()).unwrap();
    let id = history
        .insert(&HistoryEntry {
            at: psd2_console::cert::unix_seconds(t0()),
            profile: "Embedded sandbox".into(),
            operation_id: "payments.domestic.create".into(),
            method: r.method.clone(),
            url: format!("http://127.0.0.1:8080{}", r.path_and_query),
            path_and_query: r.path_and_query.clone(),
            request_headers: redact(&r.headers),
            request_body: r.body.clone(),
            status: 400,
            ..HistoryEntry::default()
        })
        .unwrap();
    drop(history);
    for arg in [id.to_string(), "last".to_string()] {
        let (code, out, err) = cli::run(home.path(), &["doctor", &arg, "--format", "json"]);
        assert_eq!(code, 0, "{out}{err}");
        let j = json_of(&out);
        let status = |id: &str| {
            j["checks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["id"] == id)
                .map(|c| c["status"].clone())
                .unwrap_or_default()
        };
        // One warning stands for the signature checks that cannot run.
        assert_eq!(status("signature.redacted"), "warn", "{out}");
        assert!(status("signature.format").is_null(), "{out}");
        assert!(status("signature.verify").is_null(), "{out}");
        assert_eq!(j["verdict"]["answer"]["status"], 400, "{out}");
        assert_eq!(j["verdict"]["answer"]["cause"], "not_checked", "{out}");
        assert_eq!(status("digest"), "pass", "{out}");
        assert_eq!(
            status("date.skew"),
            "pass",
            "the history time is the send time: {out}"
        );
        assert_eq!(j["sent_at_source"], "recorded");
    }
    let (code, _, err) = cli::run(home.path(), &["doctor", &(id + 1).to_string()]);
    assert_eq!(code, 2);
    assert!(err.contains("no history entry"), "{err}");
}

#[test]
fn the_operation_is_found_from_method_and_path() {
    use psd2_console::xs2a::operations::find_request;
    let (op, values) = find_request(
        "GET",
        "/v1/payments/instant-norwegian-credit-transfers-straks/fee-information",
    )
    .unwrap();
    assert!(values.is_empty(), "the literal template wins: {values:?}");
    assert_eq!(
        op.path,
        "/v1/payments/instant-norwegian-credit-transfers-straks/fee-information"
    );
    let (op, values) =
        find_request("get", "/v1/payments/sepa-credit-transfers/p%201/status?x=1").unwrap();
    assert_eq!(
        op.path,
        "/v1/{payment-service}/{payment-product}/{payment-id}/status"
    );
    assert!(
        values.contains(&("payment-id".to_string(), "p 1".to_string())),
        "{values:?}"
    );
    assert!(find_request("GET", "/v1/nothing-here").is_none());
    assert!(find_request("PATCH", "/v1/accounts").is_none());
}

// ---------------------------------------------------------------------------------------
// Issue 18: the doctor judges what was really signed (a moved sandbox clock), quotes the
// recorded answer with where its cause lies, and names a keyId serial written in decimal.

/// The decimal digits of the big-endian unsigned integer `bytes` (schoolbook division).
fn decimal(bytes: &[u8]) -> String {
    let mut n = bytes.to_vec();
    let mut digits = Vec::new();
    while n.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in n.iter_mut() {
            let v = rem * 256 + u32::from(*b);
            *b = (v / 10) as u8;
            rem = v % 10;
        }
        digits.push(char::from(b'0' + rem as u8));
    }
    if digits.is_empty() {
        digits.push('0');
    }
    digits.iter().rev().collect()
}

#[test]
fn decimal_of_the_issues_serial() {
    let hex = [0x6F, 0xC5, 0x37, 0xDC, 0xAF, 0xFD, 0x49, 0x29, 0x83, 0x49];
    assert_eq!(decimal(&hex), "527820713466720751813449");
    assert_eq!(
        psd2_console::signing::decimal_serial("527820713466720751813449").unwrap(),
        hex
    );
    assert_eq!(psd2_console::signing::decimal_serial("6FC5"), None);
}

#[test]
fn a_key_id_serial_written_in_decimal_is_named_as_such() {
    let cert = &tpp().certificate;
    let dec = decimal(&cert.serial);
    assert_ne!(dec, cert.serial_hex());
    let key_id = format!("SN={dec},CA={}", cert.issuer.to_rfc2253());
    let names = Draft::accounts().names();
    let r = Draft::accounts().sign_with(&names, |p| p.key_id = key_id);
    let d = diagnose(&r);
    assert_fault(
        &d,
        "keyid.serial",
        "the same serial in decimal; write it in upper-case hex",
    );
    let message = &d.check("keyid.serial").unwrap().message;
    assert!(
        message.contains(&format!("SN={}", cert.serial_hex())),
        "{message}"
    );
    assert!(!message.contains("expected SN="), "{message}");
}

/// A Berlin Group error body with one `tppMessages` entry.
fn refusal(status: u16, code: &str, text: &str) -> doctor::RecordedResponse {
    doctor::RecordedResponse {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: serde_json::to_vec(&serde_json::json!({
            "tppMessages": [{"category": "ERROR", "code": code, "text": text}]
        }))
        .unwrap(),
    }
}

#[test]
fn the_verdict_quotes_a_refusal_and_says_its_cause_lies_outside_the_request() {
    let text = "No consent for PSU-ID 00000000000: start one with a scaRedirect";
    let mut r = Draft::accounts().signed();
    r.response = Some(refusal(401, "CONSENT_INVALID", text));
    let d = diagnose(&r);
    assert!(failing(&d).is_empty(), "{}", doctor::report::text(&d));
    let v = &d.verdict;
    assert!(
        !v.message.contains("every check passes"),
        "a refusal is no pass: {}",
        v.message
    );
    assert!(v.message.contains("401 CONSENT_INVALID"), "{}", v.message);
    assert!(v.message.contains(text), "{}", v.message);
    assert!(
        v.message.contains("outside the request: the consent"),
        "{}",
        v.message
    );
    let a = v.answer.as_ref().unwrap();
    assert_eq!(a.status, 401);
    assert_eq!(a.code.as_deref(), Some("CONSENT_INVALID"));
    assert_eq!(a.text.as_deref(), Some(text));
    assert_eq!(a.cause, doctor::AnswerCause::OutsideConsent);
    let report = doctor::report::text(&d);
    assert!(
        report.lines().last().unwrap().starts_with("verdict: ⚠"),
        "{report}"
    );

    // The state of a resource, the PSU.
    r.response = Some(refusal(409, "STATUS_INVALID", "the payment is ACSC"));
    let v = diagnose(&r).verdict;
    assert_eq!(v.answer.unwrap().cause, doctor::AnswerCause::OutsideState);
    assert!(
        v.message
            .contains("409 STATUS_INVALID \"the payment is ACSC\"")
    );
    r.response = Some(refusal(401, "PSU_CREDENTIALS_INVALID", "unknown PSU"));
    let v = diagnose(&r).verdict;
    assert_eq!(v.answer.unwrap().cause, doctor::AnswerCause::OutsidePsu);
    assert!(v.message.contains("the PSU"), "{}", v.message);

    // A failing check: the cause is in the request, and the answer is quoted too.
    let mut stale =
        Draft::new("GET", "/v1/accounts", b"", t0() - Duration::from_secs(600)).signed();
    stale.response = Some(refusal(400, "TIMESTAMP_INVALID", "Date is 600 s off"));
    let d = diagnose(&stale);
    assert_eq!(d.verdict.cause, Some("date.skew"));
    assert!(
        d.verdict
            .message
            .contains("the recorded answer: 400 TIMESTAMP_INVALID \"Date is 600 s off\""),
        "{}",
        d.verdict.message
    );
    assert_eq!(
        d.verdict.answer.unwrap().cause,
        doctor::AnswerCause::Request
    );

    // A control character in the recorded text does not reach the terminal.
    r.response = Some(refusal(401, "CONSENT_INVALID", "bad\u{1b}[2Jtext"));
    let v = diagnose(&r).verdict;
    assert!(!v.message.contains('\u{1b}'), "{:?}", v.message);
}

#[test]
fn a_redacted_signature_gives_one_warning_and_a_signature_refusal_is_not_checkable() {
    use psd2_console::client::history::redact;
    let mut r = Draft::payment(BODY).signed();
    r.headers = redact(&r.headers);
    r.response = Some(refusal(
        400,
        "SIGNATURE_INVALID",
        "signature invalid: the RSA signature does not verify",
    ));
    let d = diagnose(&r);
    let redacted: Vec<&doctor::Check> = d
        .checks
        .iter()
        .filter(|c| c.message.contains("redacted"))
        .collect();
    assert_eq!(redacted.len(), 1, "{}", doctor::report::text(&d));
    assert_eq!(redacted[0].id, "signature.redacted");
    assert_eq!(redacted[0].status, Status::Warn);
    for gone in [
        "signature.format",
        "keyid.serial",
        "signature.listed",
        "signature.verify",
    ] {
        assert!(
            d.check(gone).is_none(),
            "{gone}: {}",
            doctor::report::text(&d)
        );
    }
    assert_eq!(d.check("digest").unwrap().status, Status::Pass);
    let v = &d.verdict;
    assert!(!v.message.contains("every check passes"), "{}", v.message);
    assert!(v.message.contains("400 SIGNATURE_INVALID"), "{}", v.message);
    assert!(
        v.message.contains("could not be checked here"),
        "{}",
        v.message
    );
    assert!(v.message.contains("redacted"), "{}", v.message);
    assert_eq!(
        v.answer.as_ref().unwrap().cause,
        doctor::AnswerCause::NotChecked
    );
}

#[test]
fn a_moved_sandbox_clock_is_judged_at_the_sandbox_time_in_history_har_and_case() {
    use psd2_console::client::history::History;
    /// 181 days, as in the issue.
    const ADVANCE: i64 = 15_638_400;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let body = h.join("advance.json");
    std::fs::write(&body, format!(r#"{{"advanceSeconds":{ADVANCE}}}"#)).unwrap();
    let (code, out, err) = cli::run(
        h,
        &[
            "send",
            "sandbox.clock.advance",
            "--body-file",
            body.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = cli::run(h, &["send", "accounts.list", "--no-wait"]);
    assert_eq!(code, 1, "a refusal: {out}{err}");
    let refused: serde_json::Value = serde_json::from_str(&out).unwrap();
    let code_sent = refused["tppMessages"][0]["code"]
        .as_str()
        .unwrap()
        .to_string();

    // The history row: the Date sent is the signed-for time, the offset the advance.
    let paths = psd2_console::profile::Paths::under(h.to_path_buf());
    let e = History::open_existing(&paths.history_file())
        .unwrap()
        .last()
        .unwrap()
        .unwrap();
    assert_eq!(e.clock_offset_secs, Some(ADVANCE), "{e:?}");
    let date = e
        .request_headers
        .iter()
        .find(|(n, _)| n == "Date")
        .unwrap()
        .1
        .clone();
    let date_secs = psd2_console::cert::unix_seconds(httpdate::parse_http_date(&date).unwrap());
    assert_eq!(e.signed_at, Some(date_secs));
    assert!(
        date_secs - e.at > ADVANCE - 3600,
        "the Date is the sandbox's: {date}"
    );

    // `doctor last`: Date judged at the sandbox's time, the offset said.
    let (code, out, err) = cli::run(h, &["doctor", "last", "--format", "json"]);
    assert!(code <= 1, "{out}{err}");
    let j = json_of(&out);
    let check = |id: &str| {
        j["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no {id}: {out}"))
            .clone()
    };
    assert_eq!(check("date.skew")["status"], "pass", "{out}");
    assert!(
        check("date.skew")["message"]
            .as_str()
            .unwrap()
            .contains("a sandbox clock offset was in effect"),
        "{out}"
    );
    assert_eq!(j["clock_offset_secs"], ADVANCE, "{out}");
    assert_eq!(check("cert.validity")["status"], "pass", "{out}");
    assert!(
        j["verdict"]["message"]
            .as_str()
            .unwrap()
            .contains(&code_sent),
        "the refusal is quoted: {out}"
    );
    let (_, text, _) = cli::run(h, &["doctor", "last"]);
    assert!(
        text.contains("a sandbox clock offset was in effect"),
        "{text}"
    );
    assert!(!text.contains("s after the send time"), "{text}");

    // The HAR export carries both; the doctor on it judges the same.
    let (code, har_text, err) = cli::run(h, &["export", "--format", "har", "last"]);
    assert_eq!(code, 0, "{err}");
    let har: serde_json::Value = serde_json::from_str(&har_text).unwrap();
    let entry = &har["log"]["entries"][0];
    assert_eq!(entry["_sandboxClockOffset"], ADVANCE, "{entry}");
    let signed = chrono::DateTime::parse_from_rfc3339(entry["_signedAt"].as_str().unwrap())
        .unwrap()
        .timestamp();
    assert_eq!(signed, date_secs);
    let file = h.join("export.har");
    std::fs::write(&file, &har_text).unwrap();
    let (_, out, _) = cli::run(h, &["doctor", file.to_str().unwrap(), "--format", "json"]);
    let j = json_of(&out);
    let skew = j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "date.skew")
        .unwrap()
        .clone();
    assert_eq!(skew["status"], "pass", "{out}");
    assert_eq!(j["clock_offset_secs"], ADVANCE, "{out}");

    // The case bundle carries both, and a history opened from it keeps them.
    let bundle = h.join("case.tar.gz");
    let (code, out, err) = cli::run(
        h,
        &["case", "export", "--out", bundle.to_str().unwrap(), "last"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let read = psd2_console::case::bundle::Bundle::read(&bundle).unwrap();
    let x = &read.exchanges[0];
    assert_eq!(x.sandbox_clock_offset, Some(ADVANCE));
    assert_eq!(x.signed_at, Some(date_secs));
    let raw = std::fs::read(&bundle).unwrap();
    let mut tar = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&raw[..]), &mut tar).unwrap();
    let tar = String::from_utf8_lossy(&tar);
    assert!(tar.contains("\"sandboxClockOffset\": 15638400"), "{tar}");
    let other = tempfile::tempdir().unwrap();
    let into = other.path().join("case-home");
    let (code, out, err) = cli::run(
        other.path(),
        &[
            "case",
            "open",
            bundle.to_str().unwrap(),
            "--into",
            into.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (_, out, _) = cli::run(&into, &["doctor", "last", "--format", "json"]);
    let j = json_of(&out);
    assert_eq!(j["clock_offset_secs"], ADVANCE, "{out}");
}

/// A QWAC as files in `dir`: a certificate generated with `spec` (organizationIdentifier,
/// PSD2 roles, validity) and its key; returns (certificate path, key path).
fn qwac_files(
    dir: &std::path::Path,
    name: &str,
    spec: &TppCertSpec,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let set = generate_set(spec).unwrap();
    let cert = dir.join(format!("{name}.pem"));
    let key = dir.join(format!("{name}.key"));
    std::fs::write(&cert, &set.tpp_cert_pem).unwrap();
    std::fs::write(&key, &set.tpp_key_pem).unwrap();
    (cert, key)
}

fn diagnose_qwac(r: &RecordedRequest, qwac: &doctor::tls::Qwac, at: SystemTime) -> Diagnosis {
    doctor::diagnose_with_qwac(
        r,
        &Options {
            sent_at: Some(at),
            now: at,
        },
        Some(qwac),
    )
}

/// Issue 21: a request sent with a QWAC of the same TPP as its QSealC, valid, with the
/// operation's role and its own key, passes the doctor's TLS checks (they come first, as
/// the bank's TLS layer checks before any signature).
#[test]
fn a_recorded_qwac_passes_the_tls_checks() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = qwac_files(dir.path(), "qwac", &TppCertSpec::default());
    let qwac = doctor::tls::Qwac::load(&cert, Some(&key), "test").unwrap();
    let d = diagnose_qwac(&Draft::accounts().signed(), &qwac, t0());
    assert_eq!(
        failing(&d),
        Vec::<&str>::new(),
        "{}",
        doctor::report::text(&d)
    );
    let ids: Vec<&str> = d.checks.iter().take(4).map(|c| c.id).collect();
    assert_eq!(
        ids,
        [
            "tls.qwac.validity",
            "tls.qwac.role",
            "tls.qwac.organisation",
            "tls.qwac.key"
        ]
    );
    for id in ids {
        assert_eq!(d.check(id).unwrap().status, Status::Pass, "{id}");
    }
    assert!(
        d.check("tls.qwac.organisation")
            .unwrap()
            .message
            .contains("the same organizationIdentifier PSDNO-FSA-TEST01"),
        "{}",
        doctor::report::text(&d)
    );
    // Without a QWAC the doctor makes no TLS check.
    assert!(
        diagnose(&Draft::accounts().signed())
            .check("tls.qwac.role")
            .is_none()
    );
}

/// Issue 21: a QWAC of another organisation than the QSealC is named as the cause.
#[test]
fn a_qwac_of_another_organisation_than_the_qsealc_fails() {
    let dir = tempfile::tempdir().unwrap();
    let spec = TppCertSpec {
        organisation_id: "PSDNO-FSA-OTHER9".into(),
        ..TppCertSpec::default()
    };
    let (cert, key) = qwac_files(dir.path(), "other", &spec);
    let qwac = doctor::tls::Qwac::load(&cert, Some(&key), "test").unwrap();
    let d = diagnose_qwac(&Draft::accounts().signed(), &qwac, t0());
    assert_fault(
        &d,
        "tls.qwac.organisation",
        "the QWAC names organizationIdentifier PSDNO-FSA-OTHER9, the QSealC PSDNO-FSA-TEST01",
    );
}

/// Issue 21: a QWAC without the operation's PSD2 role fails.
#[test]
fn a_qwac_without_the_operations_role_fails() {
    let dir = tempfile::tempdir().unwrap();
    let spec = TppCertSpec {
        roles: vec![Psd2Role::PspPi],
        ..TppCertSpec::default()
    };
    let (cert, key) = qwac_files(dir.path(), "pisp", &spec);
    let qwac = doctor::tls::Qwac::load(&cert, Some(&key), "test").unwrap();
    let d = diagnose_qwac(&Draft::accounts().signed(), &qwac, t0());
    assert_fault(
        &d,
        "tls.qwac.role",
        "accounts.list needs the PSD2 role PSP_AI in the QWAC; it has PSP_PI",
    );
}

/// Issue 21: a QWAC expired at the request's date is the first cause (the handshake comes
/// before the Date check, which fails too at that date).
#[test]
fn a_qwac_expired_at_the_request_date_is_the_first_cause() {
    let dir = tempfile::tempdir().unwrap();
    let spec = TppCertSpec {
        days: 1,
        ..TppCertSpec::default()
    };
    let (cert, key) = qwac_files(dir.path(), "short", &spec);
    let qwac = doctor::tls::Qwac::load(&cert, Some(&key), "test").unwrap();
    let later = t0() + Duration::from_secs(10 * 86_400);
    let d = diagnose_qwac(&Draft::accounts().signed(), &qwac, later);
    let check = d.check("tls.qwac.validity").unwrap();
    assert_eq!(check.status, Status::Fail);
    assert!(
        check.message.contains("had expired at"),
        "{}",
        check.message
    );
    assert!(check.message.contains("valid "), "{}", check.message);
    assert_eq!(d.verdict.cause, Some("tls.qwac.validity"));
    // At the request's own date it is valid.
    let d = diagnose_qwac(&Draft::accounts().signed(), &qwac, t0());
    assert_eq!(d.check("tls.qwac.validity").unwrap().status, Status::Pass);
}

/// Issue 21: a key file that is not the QWAC's key fails; the command line takes
/// `--qwac` and `--qwac-key`.
#[test]
fn a_qwac_key_of_another_certificate_fails_also_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, _) = qwac_files(dir.path(), "qwac", &TppCertSpec::default());
    let (_, other_key) = qwac_files(dir.path(), "other", &TppCertSpec::default());
    let qwac = doctor::tls::Qwac::load(&cert, Some(&other_key), "test").unwrap();
    let d = diagnose_qwac(&Draft::accounts().signed(), &qwac, t0());
    assert_fault(&d, "tls.qwac.key", "is not the key of the certificate");

    let file = dir.path().join("request.http");
    std::fs::write(&file, raw(&Draft::accounts().signed())).unwrap();
    let sent_at = rfc3339(t0());
    let (code, out, err) = cli::run(
        dir.path(),
        &[
            "doctor",
            file.to_str().unwrap(),
            "--sent-at",
            &sent_at,
            "--qwac",
            cert.to_str().unwrap(),
            "--qwac-key",
            other_key.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("✘ tls.qwac.key"), "{out}");
    assert!(out.contains("✔ tls.qwac.organisation"), "{out}");
}
