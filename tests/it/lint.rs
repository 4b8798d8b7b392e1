//! The conformance lint (`psd2_console::lint`): real sandbox answers have no findings; hand-made
//! bad responses each give the named finding; the documented 400 exception passes;
//! `send --lint` on the real binary against the embedded sandbox prints "no findings".

use crate::common;

use common::cli::run;
use common::payments::{DOMESTIC, KARI, domestic, first_bban};
use common::sandbox::{Reply, TestSandbox};
use psd2_console::lint::{self, Asked, Finding, SPEC_YAML, Severity};
use serde_json::{Value, json};

const ID: &str = "99391c7e-ad88-49ec-a2ad-99ddcb1f7721";

/// Headers of a JSON answer that echoes [`ID`], plus `extra`.
fn json_headers(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut h = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        ("X-Request-ID".to_string(), ID.to_string()),
    ];
    h.extend(extra.iter().map(|(n, v)| (n.to_string(), v.to_string())));
    h
}

/// The lint of `method path` answered with `status`, `headers` and `body`, the request
/// having sent [`ID`].
fn lint_of(
    method: &str,
    path: &str,
    status: u16,
    headers: &[(String, String)],
    body: &Value,
) -> Vec<Finding> {
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    let asked = Asked::request(method, path).with_request_id(Some(ID));
    lint::check_response(&asked, status, headers, &bytes)
}

/// Asserts exactly one finding of `severity` whose rule starts with `rule`; returns it.
#[track_caller]
fn the_finding(findings: &[Finding], severity: Severity, rule: &str) -> Finding {
    let hits: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.severity == severity && f.rule.starts_with(rule))
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "one {severity} [{rule}...] expected in {findings:#?}"
    );
    hits[0].clone()
}

fn error_body(code: &str) -> Value {
    json!({"tppMessages": [{"category": "ERROR", "code": code, "text": "t"}]})
}

fn balances(amount: &str) -> Value {
    json!({
        "account": {"bban": "12345678903", "currency": "NOK"},
        "balances": [{
            "balanceType": "interimAvailable",
            "balanceAmount": {"currency": "NOK", "amount": amount},
            "referenceDate": "2026-11-21"
        }]
    })
}

fn payment_created(status: &str) -> Value {
    json!({"transactionStatus": status, "paymentId": "p1",
           "_links": {"scaRedirect": {"href": "http://127.0.0.1:1/sca/p1"},
                      "self": {"href": "/v1/payments/sepa-credit-transfers/p1"}}})
}

const PAYMENT: &str = "/v1/payments/sepa-credit-transfers";

#[test]
fn embedded_spec_is_the_shared_reference_copy() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/spec").join(lint::SPEC_FILE);
    if shared.is_file() {
        assert!(
            std::fs::read(&shared).unwrap() == SPEC_YAML,
            "spec/ differs from shared/spec/"
        );
    }
    // The checksum spec/SOURCES.md gives is the embedded file's.
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, SPEC_YAML);
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let sources = std::fs::read_to_string(root.join("spec/SOURCES.md")).unwrap();
    assert!(
        sources.contains(&format!("{hex}  {}", lint::SPEC_FILE)),
        "spec/SOURCES.md does not give sha256 {hex}"
    );
    lint::spec().expect("the embedded file compiles");
}

#[test]
fn a_conforming_response_has_no_findings() {
    let f = lint_of(
        "POST",
        PAYMENT,
        201,
        &json_headers(&[
            ("Location", "/v1/payments/sepa-credit-transfers/p1"),
            ("ASPSP-SCA-Approach", "REDIRECT"),
        ]),
        &payment_created("RCVD"),
    );
    assert_eq!(f, vec![]);
    assert_eq!(lint::summary(&f), "lint: no findings");
    // Not an API path: nothing to say.
    let page = lint::check_response(&Asked::request("GET", "/sca/x"), 200, &[], b"<html>");
    assert_eq!(page, vec![]);
}

#[test]
fn error_message_without_code_is_an_error() {
    let body = json!({"tppMessages": [{"category": "ERROR", "text": "no consent"}]});
    let f = lint_of("GET", "/v1/accounts", 401, &json_headers(&[]), &body);
    let hit = the_finding(&f, Severity::Error, "Error401_NG_AIS /tppMessages/0");
    assert!(hit.message.contains("code"), "{hit}");
    // No tppMessages at all, and a message without text (a warning only).
    let no_messages = json!({"error": "x"});
    let f = lint_of("GET", "/v1/accounts", 400, &json_headers(&[]), &no_messages);
    the_finding(&f, Severity::Error, "BG error (tppMessages)");
    let body = json!({"tppMessages": [{"category": "ERROR", "code": "FORMAT_ERROR"}]});
    let f = lint_of("GET", "/v1/accounts", 400, &json_headers(&[]), &body);
    the_finding(&f, Severity::Warning, "BG tppMessage /tppMessages/0/text");
    assert!(!lint::has_errors(&f), "{f:#?}");
}

#[test]
fn unknown_transaction_status_is_an_error() {
    let h = json_headers(&[("Location", "/x"), ("ASPSP-SCA-Approach", "REDIRECT")]);
    let f = lint_of("POST", PAYMENT, 201, &h, &payment_created("DONE"));
    let hit = the_finding(
        &f,
        Severity::Error,
        "paymentInitationRequestResponse-201 /transactionStatus",
    );
    assert!(hit.message.contains("DONE"), "{hit}");
    // On a path the Berlin Group file does not have: the structural rule.
    let listed = json!({"list": [{"transactionStatus": "DONE"}]});
    let f = lint_of("GET", "/v1/agreements", 200, &json_headers(&[]), &listed);
    the_finding(
        &f,
        Severity::Error,
        "transactionStatus /list/0/transactionStatus",
    );
    // The interface document's basket statuses are fewer than the file's.
    let basket = json!({"transactionStatus": "ACSC", "basketId": "b1",
                        "_links": {"status": {"href": "/v1/signing-baskets/b1/status"}}});
    let f = lint_of("POST", "/v1/signing-baskets", 201, &h, &basket);
    the_finding(
        &f,
        Severity::Error,
        "Signing basket creation response /transactionStatus",
    );
    the_finding(
        &f,
        Severity::Error,
        "Signing basket creation response /_links/status",
    );
}

#[test]
fn sca_redirect_as_a_plain_string_is_an_error() {
    let mut body = error_body("CONSENT_INVALID");
    body["_links"] = json!({"scaRedirect": "http://127.0.0.1:1/sca/x"});
    let f = lint_of("GET", "/v1/accounts", 401, &json_headers(&[]), &body);
    the_finding(&f, Severity::Error, "Error401_NG_AIS /_links/scaRedirect");
    body["_links"] = json!({"scaRedirect": {"href": "http://127.0.0.1:1/sca/x"}});
    assert_eq!(
        lint_of("GET", "/v1/accounts", 401, &json_headers(&[]), &body),
        vec![]
    );
    // No Berlin Group schema for /v1/users: the structural rule, and the document's
    // "answers 200 with a scaRedirect link" as a warning when there is none.
    let users = json!({"_links": {"scaRedirect": "http://127.0.0.1:1/sca/u"}});
    let f = lint_of("GET", "/v1/users", 200, &json_headers(&[]), &users);
    the_finding(&f, Severity::Error, "hrefType /_links/scaRedirect");
    let f = lint_of("GET", "/v1/users", 200, &json_headers(&[]), &json!({}));
    the_finding(&f, Severity::Warning, "Endpoints /_links/scaRedirect");
}

#[test]
fn amount_not_matching_the_pattern_is_an_error() {
    let path = "/v1/accounts/a1/balances";
    let rule = "readAccountBalanceResponse-200 /balances/0/balanceAmount/amount";
    for bad in ["12.5000", "1,50", "12.", "", "123456789012345"] {
        let f = lint_of("GET", path, 200, &json_headers(&[]), &balances(bad));
        the_finding(&f, Severity::Error, rule);
    }
    let mut number = balances("1");
    number["balances"][0]["balanceAmount"]["amount"] = json!(12.5);
    the_finding(
        &lint_of("GET", path, 200, &json_headers(&[]), &number),
        Severity::Error,
        rule,
    );
    // On a path the Berlin Group file does not have: the structural rule.
    let fee = json!({"fee": {"currency": "NOK", "amount": "1,50"}});
    let f = lint_of(
        "GET",
        "/v1/payments/instant-norwegian-credit-transfers-straks/fee-information",
        200,
        &json_headers(&[]),
        &fee,
    );
    the_finding(&f, Severity::Error, "amountValue /fee/amount");
    for good in ["12.50", "-3", "0.125", "12345678901234"] {
        assert_eq!(
            lint_of("GET", path, 200, &json_headers(&[]), &balances(good)),
            vec![]
        );
    }
}

#[test]
fn missing_or_wrong_request_id_echo_is_an_error() {
    let body = balances("1.00");
    let no_id = vec![("Content-Type".to_string(), "application/json".to_string())];
    let path = "/v1/accounts/a1/balances";
    let f = lint_of("GET", path, 200, &no_id, &body);
    let hit = the_finding(&f, Severity::Error, "BG header X-Request-ID");
    assert!(hit.message.contains(ID), "{hit}");
    let mut other = no_id.clone();
    other.push(("x-request-id".into(), "another".into()));
    the_finding(
        &lint_of("GET", path, 200, &other, &body),
        Severity::Error,
        "BG header X-Request-ID",
    );
    // Unknown request: one is still required; a request without one: nothing to echo.
    let bytes = body.to_string().into_bytes();
    let unknown = lint::check_response(&Asked::request("GET", path), 200, &no_id, &bytes);
    the_finding(&unknown, Severity::Error, "BG header X-Request-ID");
    let not_sent = Asked::request("GET", path).with_request_id(None);
    assert_eq!(lint::check_response(&not_sent, 200, &no_id, &bytes), vec![]);
}

#[test]
fn wrong_content_type_is_an_error() {
    let body = balances("1.00");
    let path = "/v1/accounts/a1/balances";
    let mut h = json_headers(&[]);
    h[0].1 = "text/plain".into();
    let hit = the_finding(
        &lint_of("GET", path, 200, &h, &body),
        Severity::Error,
        "Content-Type",
    );
    assert!(hit.message.contains("text/plain"), "{hit}");
    h[0].1 = "application/json; charset=ISO-8859-1".into();
    the_finding(
        &lint_of("GET", path, 200, &h, &body),
        Severity::Error,
        "Content-Type",
    );
    h[0].1 = "application/json; charset=utf-8".into();
    assert_eq!(lint_of("GET", path, 200, &h, &body), vec![]);
    // Not JSON at all.
    let asked = Asked::request("GET", path).with_request_id(Some(ID));
    let f = lint::check_response(&asked, 200, &json_headers(&[]), b"<html></html>");
    the_finding(&f, Severity::Error, "JSON");
}

#[test]
fn sca_headers_of_a_201_are_checked() {
    let body = payment_created("RCVD");
    let f = lint_of("POST", PAYMENT, 201, &json_headers(&[]), &body);
    the_finding(&f, Severity::Warning, "BG header Location");
    the_finding(&f, Severity::Warning, "BG header ASPSP-SCA-Approach");
    assert!(!lint::has_errors(&f), "{f:#?}");
    for (approach, severity, rule) in [
        ("SMS", Severity::Error, "BG header ASPSP-SCA-Approach"),
        ("EMBEDDED", Severity::Warning, "Authentication 11"),
    ] {
        let h = json_headers(&[("Location", "/x"), ("ASPSP-SCA-Approach", approach)]);
        let f = lint_of("POST", PAYMENT, 201, &h, &body);
        the_finding(&f, severity, rule);
    }
}

/// The documented exception (docs/sandbox.md "Signatures and errors"): signature and
/// certificate failures are 400 with the Berlin Group's 401 codes; other 401 codes are not.
#[test]
fn documented_400_for_signature_errors_is_accepted() {
    for code in lint::DOCUMENTED_400_CODES {
        for (method, path) in [
            ("GET", "/v1/accounts"),
            ("POST", PAYMENT),
            ("GET", "/v1/sandbox/customers"),
        ] {
            let f = lint_of(method, path, 400, &json_headers(&[]), &error_body(code));
            assert_eq!(f, vec![], "{method} {path} 400 {code}");
        }
        let f = lint_of(
            "GET",
            "/v1/accounts",
            403,
            &json_headers(&[]),
            &error_body(code),
        );
        the_finding(&f, Severity::Error, "Error403_NG_AIS /tppMessages/0/code");
    }
    let f = lint_of(
        "GET",
        "/v1/accounts",
        400,
        &json_headers(&[]),
        &error_body("CONSENT_INVALID"),
    );
    the_finding(&f, Severity::Error, "Error400_NG_AIS /tppMessages/0/code");
}

#[test]
fn an_operation_id_is_checked_by_its_template() {
    let asked = Asked::operation("payments.status")
        .expect("payments.status")
        .with_request_id(Some(ID));
    let ok = json!({"transactionStatus": "ACSC"}).to_string();
    assert_eq!(
        lint::check_response(&asked, 200, &json_headers(&[]), ok.as_bytes()),
        vec![]
    );
    let bad = json!({"transactionStatus": "PAID"}).to_string();
    let f = lint::check_response(&asked, 200, &json_headers(&[]), bad.as_bytes());
    the_finding(
        &f,
        Severity::Error,
        "paymentInitiationStatusResponse-200_json /transactionStatus",
    );
    assert!(Asked::operation("no.such.op").is_none());
}

fn headers_of(r: &Reply) -> Vec<(String, String)> {
    r.headers
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_string()))
        .collect()
}

/// The lint of a real sandbox reply to `method path` sent with X-Request-ID `id`.
fn lint_reply(method: &str, path: &str, id: &str, r: &Reply) -> Vec<Finding> {
    let asked = Asked::request(method, path).with_request_id(Some(id));
    lint::check_response(&asked, r.status, &headers_of(r), &r.body)
}

#[tokio::test]
async fn clean_sandbox_responses_have_no_findings() {
    let sb = TestSandbox::start().await;
    let ids: Vec<String> = (0..5).map(|_| uuid::Uuid::new_v4().to_string()).collect();

    let path = "/v1/sandbox/customers?withAccounts=true";
    let r = sb.get_with(path, &[("X-Request-ID", &ids[0])]).await;
    r.assert_status(200);
    assert_eq!(lint_reply("GET", path, &ids[0], &r), vec![]);

    let r = sb
        .get_with(
            "/v1/accounts",
            &[("X-Request-ID", &ids[1]), ("TPP-Session-ID", "s-1")],
        )
        .await;
    r.assert_status(401);
    assert_eq!(lint_reply("GET", "/v1/accounts", &ids[1], &r), vec![]);

    let body = domestic(&first_bban(KARI), "12.50", "lint").to_string();
    let path = format!("/v1/payments/{DOMESTIC}");
    let r = sb
        .send("POST", &path, &[("X-Request-ID", &ids[2])], Some(&body))
        .await;
    r.assert_status(201);
    assert_eq!(lint_reply("POST", &path, &ids[2], &r), vec![]);
    let payment = r.json["paymentId"].as_str().unwrap().to_string();

    let status = format!("/v1/payments/{DOMESTIC}/{payment}/status");
    let r = sb.get_with(&status, &[("X-Request-ID", &ids[3])]).await;
    r.assert_status(200);
    assert_eq!(lint_reply("GET", &status, &ids[3], &r), vec![]);

    let basket = json!({"paymentIds": [payment]}).to_string();
    let r = sb
        .send(
            "POST",
            "/v1/signing-baskets",
            &[("X-Request-ID", &ids[4])],
            Some(&basket),
        )
        .await;
    r.assert_status(201);
    assert_eq!(
        lint_reply("POST", "/v1/signing-baskets", &ids[4], &r),
        vec![]
    );
    sb.stop().await;
}

#[test]
fn send_lint_prints_no_findings_for_the_embedded_sandbox() {
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = run(home.path(), &["send", "sandbox.customers.list", "--lint"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.trim_end().ends_with("lint: no findings"), "{out}");
    // The body comes first, unchanged.
    let body = out.trim_end().strip_suffix("lint: no findings").unwrap();
    let v: Value = serde_json::from_str(body).expect("the body as JSON before the lint line");
    assert!(v.is_array(), "{v}");

    // A 401 with its scaRedirect conforms too; the exit status stays the status's.
    let (code, out, err) = run(
        home.path(),
        &["send", "accounts.list", "--no-wait", "--lint=strict"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("CONSENT_INVALID"), "{out}");
    assert!(out.trim_end().ends_with("lint: no findings"), "{out}");

    let (code, _, err) = run(
        home.path(),
        &["send", "sandbox.customers.list", "--lint=loud"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("strict"), "{err}");
}

/// A bank on 127.0.0.1 that answers each of `answers` connections with a 200 whose body is
/// JSON sent as `text/plain` and without `X-Request-ID`; returns its base URL.
fn careless_bank(answers: usize) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(answers) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            // The request head (a GET has no body).
            while reader.read_line(&mut line).unwrap() > 0 && line != "\r\n" {
                line.clear();
            }
            let body = r#"{"accounts": []}"#;
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
        }
    });
    base
}

#[test]
fn send_lint_reports_a_careless_bank_and_strict_fails_on_it() {
    let home = tempfile::tempdir().unwrap();
    let profiles = home.path().join("config/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    let certs = home.path().join("certs");
    let d = certs.to_str().unwrap();
    let made = run(home.path(), &["cert", "new", "--dir", d, "--name", "tpp"]);
    assert_eq!(made.0, 0, "{}", made.2);
    let profile = format!(
        "name = \"Careless\"\ntarget = \"{}\"\ncertificate = \"{d}/tpp.pem\"\nkey = \"{d}/tpp.key\"\n",
        careless_bank(2)
    );
    std::fs::write(profiles.join("careless.toml"), profile).unwrap();

    let send = [
        "send",
        "accounts.list",
        "--profile",
        "Careless",
        "--no-wait",
    ];
    let (code, out, err) = run(home.path(), &[&send[..], &["--lint"]].concat());
    assert_eq!(code, 0, "a 200 exits 0 without strict: {err}");
    assert!(out.contains("error [BG header X-Request-ID]"), "{out}");
    assert!(out.contains("error [Content-Type]"), "{out}");
    assert!(out.trim_end().ends_with("lint: 2 errors"), "{out}");

    let (code, out, err) = run(home.path(), &[&send[..], &["--lint=strict"]].concat());
    assert_eq!(code, 1, "strict fails on an error finding: {out} {err}");
    assert!(out.trim_end().ends_with("lint: 2 errors"), "{out}");
}

/// Headers of an RFC 7807 answer that echoes [`ID`].
fn problem_headers() -> Vec<(String, String)> {
    vec![
        (
            "Content-Type".to_string(),
            "application/problem+json".to_string(),
        ),
        ("X-Request-ID".to_string(), ID.to_string()),
    ]
}

/// Issue 18, defect 19: the Berlin Group file lists an `application/problem+json` body
/// beside the `tppMessages` one for every error answer (`Error400_AIS`, `Error403_PIS`,
/// ...: `type` and `code` required, no `tppMessages`). Bodies built from the file's own
/// schemas: a correct one has no findings; a broken one is checked against that schema.
#[test]
fn a_problem_json_error_is_checked_against_its_own_schema() {
    let ais_400 = json!({
        "type": "https://berlin-group.org/problems/format-error",
        "title": "Format error",
        "detail": "dateFrom is not a date",
        "code": "FORMAT_ERROR",
        "additionalErrors": [{"code": "PARAMETER_NOT_SUPPORTED", "detail": "deltaList"}]
    });
    assert_eq!(
        lint_of(
            "GET",
            "/v1/accounts/a1/transactions",
            400,
            &problem_headers(),
            &ais_400
        ),
        vec![]
    );
    let pis_403 = json!({"type": "https://b.example/p/403", "code": "PRODUCT_INVALID"});
    assert_eq!(
        lint_of(
            "POST",
            "/v1/payments/sepa-credit-transfers",
            403,
            &problem_headers(),
            &pis_403
        ),
        vec![]
    );
    // The documented 400 for signature failures holds for problems too.
    let sig = json!({"type": "https://b.example/p/sig", "code": "SIGNATURE_INVALID"});
    assert_eq!(
        lint_of("GET", "/v1/accounts", 400, &problem_headers(), &sig),
        vec![]
    );
    // A proprietary path: the same shape with the status's codes.
    assert_eq!(
        lint_of(
            "GET",
            "/v1/sandbox/customers",
            404,
            &problem_headers(),
            &json!({"type": "about:blank", "code": "RESOURCE_UNKNOWN"})
        ),
        vec![]
    );

    // Without `type`, with a code of another status: findings of the problem schema.
    let broken = json!({"code": "CONSENT_UNKNOWN", "tppMessages": []});
    let f = lint_of("GET", "/v1/accounts", 400, &problem_headers(), &broken);
    assert!(!f.is_empty(), "{f:#?}");
    assert!(
        f.iter()
            .all(|f| f.severity == Severity::Error && f.rule.starts_with("Error400_AIS /")),
        "{f:#?}"
    );
    assert!(
        !f.iter().any(|f| f.message.contains("tppMessages array")),
        "{f:#?}"
    );
    // A tppMessages body sent as a problem is not one.
    let f = lint_of(
        "GET",
        "/v1/accounts",
        400,
        &problem_headers(),
        &error_body("FORMAT_ERROR"),
    );
    assert!(
        !f.is_empty() && f.iter().all(|f| f.rule.starts_with("Error400_AIS /")),
        "{f:#?}"
    );
}

/// Issue 18, defect 20: `send --as-given FILE --lint` prints the lint's findings as `send
/// --lint` does (and `--lint=strict` exits 1 on an error finding), the same summary
/// `doctor last` gives for that answer; the history names the replay by its operation.
#[test]
fn send_as_given_lints_the_answer_like_send_and_the_doctor() {
    let home = tempfile::tempdir().unwrap();
    let profiles = home.path().join("config/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    let certs = home.path().join("certs");
    let d = certs.to_str().unwrap();
    let made = run(home.path(), &["cert", "new", "--dir", d, "--name", "tpp"]);
    assert_eq!(made.0, 0, "{}", made.2);
    let profile = format!(
        "name = \"Careless\"\ntarget = \"{}\"\ncertificate = \"{d}/tpp.pem\"\nkey = \"{d}/tpp.key\"\n",
        careless_bank(2)
    );
    std::fs::write(profiles.join("careless.toml"), profile).unwrap();
    let file = home.path().join("accounts.http");
    std::fs::write(
        &file,
        format!("GET /v1/accounts HTTP/1.1\r\nHost: bank.example\r\nX-Request-ID: {ID}\r\n\r\n"),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let send = ["send", "--as-given", f, "--profile", "Careless"];

    let (code, out, err) = run(home.path(), &[&send[..], &["--lint"]].concat());
    assert_eq!(code, 0, "a 200 exits 0 without strict: {err}");
    assert!(out.contains("error [Content-Type]"), "{out}");
    assert!(out.contains("error [BG header X-Request-ID]"), "{out}");
    assert!(out.trim_end().ends_with("lint: 2 errors"), "{out}");

    let (code, out, err) = run(home.path(), &["doctor", "last"]);
    assert!(out.contains("lint: 2 errors"), "{out}{err}");
    let (_, out, _) = run(home.path(), &["history"]);
    assert!(out.contains("\t200\taccounts.list\tGET "), "{out}");

    let (code2, out, err) = run(home.path(), &[&send[..], &["--lint=strict"]].concat());
    assert_eq!(code2, 1, "strict fails on an error finding: {out} {err}");
    assert!(out.trim_end().ends_with("lint: 2 errors"), "{out}");
    let _ = code;
}

/// Issue 18 B: the lint reads the one status vocabulary. `ACCP` is "rejected for lack of
/// funds" in the interface document, so a payment status answer with `ACCP` shows
/// `fundsAvailable: false` beside it; the basket statuses come from the same enum.
#[test]
fn accp_without_funds_available_false_is_a_warning_of_the_payment_statuses() {
    let path = "/v1/payments/instant-norwegian-credit-transfers-straks/p-1/status";
    let shown = lint_of(
        "GET",
        path,
        200,
        &json_headers(&[]),
        &json!({"transactionStatus": "ACCP", "fundsAvailable": false}),
    );
    assert!(
        shown
            .iter()
            .all(|f| !f.rule.starts_with("Payment statuses")),
        "{shown:#?}"
    );
    let unshown = lint_of(
        "GET",
        path,
        200,
        &json_headers(&[]),
        &json!({"transactionStatus": "ACCP", "fundsAvailable": true}),
    );
    let f = the_finding(
        &unshown,
        Severity::Warning,
        "Payment statuses /fundsAvailable",
    );
    assert!(f.message.contains("lack of funds"), "{f:?}");
}
