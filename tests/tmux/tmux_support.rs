//! The support story end to end (issue 11, acceptance), with the real binary in a shell in
//! tmux:
//!
//! 1. A "customer" (a TPP with its own certificate, made by `cert new`) sends a domestic
//!    payment to the bank (`sandbox serve`), signed with the issuer DN of its keyId in X.500
//!    order instead of RFC 2253's; the bank refuses it, and the customer's HAR records
//!    request and answer.
//! 2. `psd2-console doctor customer.har` names the cause (exit 1).
//! 3. `send --as-given customer.har --keep-signature` reproduces the bank's answer (same
//!    status and code); `send --as-given` re-signed with the support profile succeeds (201).
//! 4. `case export` → `case open` into another home → the console there (tmux) shows the
//!    same history, and the case's sandbox holds the payment the fixed request created.
//! 5. `psd2-console --case case.tar.gz` opens the console directly on the bundle (a fresh
//!    home under the data directory) and its History screen shows the same exchanges.
//!
//! Skipped (with a message) when tmux is not installed.

use crate::common;

use std::path::Path;
use std::time::{Duration, SystemTime};

use common::cli::{BIN, cert_new, serve_in_memory, served_profile};
use common::tmux::{EXIT_MARKER, Tmux, ready, shell_quote};
use psd2_console::cert::Credentials;
use psd2_console::signing::{SignOptions, SignatureParams, sign_request};

const PROFILE: &str = "Support";

/// The customer's certificate and key, made by `cert new` in `<home>/customer`.
fn customer_credentials(home: &Path) -> Credentials {
    let dir = home.join("customer");
    cert_new(&dir, "customer");
    Credentials::load(&dir.join("customer.pem"), &dir.join("customer.key")).unwrap()
}

/// The keyId with its issuer DN in X.500 order (most significant RDN first), the
/// customer's mistake. The signature still verifies over the signing string: keyId is not
/// signed.
fn with_x500_issuer(headers: &mut [(String, String)]) -> String {
    let (_, value) = headers.iter_mut().find(|(n, _)| n == "Signature").unwrap();
    let mut params = SignatureParams::parse(value).unwrap();
    let (serial, issuer) = params.key_id.split_once(",CA=").unwrap();
    let reversed: Vec<&str> = issuer.split(',').rev().collect();
    assert!(
        reversed.len() > 1,
        "the issuer needs more than one RDN: {issuer}"
    );
    params.key_id = format!("{serial},CA={}", reversed.join(","));
    *value = params.to_header_value();
    params.key_id
}

/// Runs `command` (a console on the case) in the shell: the console opens on the `Case`
/// profile, its History screen (`3`) lists the two replays of the support story (400 and
/// 201), and `q` exits 0.
fn console_shows_the_case_history(t: &Tmux, label: &str, command: &str) {
    t.keys(&["C-l"]);
    t.type_text(&format!("{command}; echo {EXIT_MARKER}$?"));
    t.keys(&["Enter"]);
    // The typed command line holds the marker too: an exit shows it with the status.
    let exited = |s: &str| {
        s.match_indices(EXIT_MARKER)
            .any(|(i, _)| s[i + EXIT_MARKER.len()..].starts_with(|c: char| c.is_ascii_digit()))
    };
    let screen = t.wait_for(label, |s| s.contains("Operations") || exited(s));
    assert!(!exited(&screen), "{label}: no console: {screen}");
    assert!(
        screen.contains("Case"),
        "{label}: on the case's profile: {screen}"
    );
    t.keys(&["3"]);
    let screen = t.wait_for(&format!("{label}: the history"), |s| {
        s.lines()
            .filter(|l| l.contains("Support") && l.contains("POST") && l.contains("/v1/payments/"))
            .count()
            >= 2
    });
    let replays: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("Support") && l.contains("POST"))
        .collect();
    assert!(replays.iter().any(|l| l.contains(" 400 ")), "{screen}");
    assert!(replays.iter().any(|l| l.contains(" 201 ")), "{screen}");
    t.keys(&["q"]);
    let screen = t.wait_for(&format!("{label}: exit"), exited);
    assert!(
        screen.contains(&format!("{EXIT_MARKER}0")),
        "{label}: {screen}"
    );
}

/// Sends the customer's payment to the bank and writes the HAR of the exchange; returns the
/// bank's answer (status, first tppMessages code).
fn customer_har(home: &Path, base_url: &str, har: &Path) -> (u16, String) {
    let credentials = customer_credentials(home);
    let path = "/v1/payments/norwegian-domestic-credit-transfers";
    // Pretty-printed with a final newline, as the customer's app sent it.
    let body = format!(
        "{}\n",
        psd2_console::xs2a::operations::DOMESTIC_PAYMENT_BODY
    );
    let body = body.as_str();
    let mut headers: Vec<(String, String)> = vec![
        ("Content-Type".into(), "application/json".into()),
        ("X-Request-ID".into(), uuid::Uuid::new_v4().to_string()),
        (
            "TPP-Redirect-URI".into(),
            "https://tpp.example/callback".into(),
        ),
        ("PSU-IP-Address".into(), "192.0.2.10".into()),
    ];
    sign_request(
        &credentials,
        "POST",
        path,
        &mut headers,
        body.as_bytes(),
        SignOptions {
            request_target: false,
            now: SystemTime::now(),
        },
    );
    with_x500_issuer(&mut headers);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (status, answer) = rt.block_on(async {
        let mut rb = reqwest::Client::new().post(format!("{base_url}{path}"));
        for (n, v) in &headers {
            rb = rb.header(n, v);
        }
        let resp = rb.body(body.as_bytes().to_vec()).send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.text().await.unwrap())
    });
    let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let code = v["tppMessages"][0]["code"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let har_json = serde_json::json!({"log": {"version": "1.2",
    "creator": {"name": "customer-app", "version": "1"},
    "entries": [{
        "startedDateTime": chrono::Utc::now().to_rfc3339(),
        "time": 12,
        "request": {
            "method": "POST",
            "url": format!("{base_url}{path}"),
            "httpVersion": "HTTP/1.1",
            "headers": headers.iter().map(|(n, v)| serde_json::json!({"name": n, "value": v})).collect::<Vec<_>>(),
            "queryString": [],
            "postData": {"mimeType": "application/json", "text": body},
            "headersSize": -1, "bodySize": body.len(),
        },
        "response": {
            "status": status, "statusText": "", "httpVersion": "HTTP/1.1",
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "content": {"size": answer.len(), "mimeType": "application/json", "text": answer},
            "redirectURL": "", "headersSize": -1, "bodySize": answer.len(),
        },
        "cache": {}, "timings": {"send": 1, "wait": 10, "receive": 1},
    }]}});
    std::fs::write(har, serde_json::to_vec_pretty(&har_json).unwrap()).unwrap();
    (status, code)
}

/// Runs `command` in the pane's shell and waits for its exit status; returns the pane.
fn run(t: &Tmux, label: &str, command: &str) -> (i32, String) {
    let marker = format!("{label}-exit-");
    t.type_text(&format!("{command}; echo {marker}$?"));
    t.keys(&["Enter"]);
    let screen = t.wait_for(label, |s| {
        s.lines()
            .any(|l| l.starts_with(&marker) && l.len() > marker.len())
    });
    let code = screen
        .lines()
        .find_map(|l| l.strip_prefix(&marker))
        .and_then(|c| c.trim().parse().ok())
        .unwrap();
    (code, screen)
}

#[test]
fn doctor_names_the_cause_replay_reproduces_it_and_a_case_carries_it_to_a_colleague() {
    if !ready() {
        return;
    }
    let (_bank, base_url) = serve_in_memory();
    let home = tempfile::tempdir().unwrap();
    served_profile(home.path(), PROFILE, &base_url);
    let har = home.path().join("customer.har");
    let (status, code) = customer_har(home.path(), &base_url, &har);
    assert_eq!((status, code.as_str()), (400, "PARAMETER_NOT_CONSISTENT"));

    let t = Tmux::start_shell("support", home);
    let bin = shell_quote(BIN);
    let har = shell_quote(&har.display().to_string());

    // 2. The doctor names the cause.
    t.keys(&["C-l"]);
    let (exit, screen) = run(&t, "doctor", &format!("{bin} doctor {har}"));
    assert_eq!(exit, 1, "{screen}");
    assert!(
        screen.contains("X.500"),
        "the verdict names the DN order: {screen}"
    );

    // 3. Byte for byte, the bank's answer again; re-signed by the console, accepted.
    t.keys(&["C-l"]);
    let (exit, screen) = run(
        &t,
        "replay",
        &format!("{bin} send --as-given {har} --keep-signature --profile {PROFILE:?}"),
    );
    assert_eq!(exit, 1, "{screen}");
    assert!(screen.contains("PARAMETER_NOT_CONSISTENT"), "{screen}");
    t.keys(&["C-l"]);
    let (exit, screen) = run(
        &t,
        "fixed",
        &format!("{bin} send --as-given {har} --profile {PROFILE:?} > fixed.json"),
    );
    assert_eq!(exit, 0, "{screen}");
    let fixed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.home.path().join("fixed.json")).unwrap()).unwrap();
    let payment_id = fixed["paymentId"]
        .as_str()
        .unwrap_or_else(|| panic!("a paymentId in the answer: {fixed}"))
        .to_string();

    // 4. The case, opened in another home.
    t.keys(&["C-l"]);
    let (exit, screen) = run(
        &t,
        "export",
        &format!("{bin} case export --out case.tar.gz --profile {PROFILE:?}"),
    );
    assert_eq!(exit, 0, "{screen}");
    t.keys(&["C-l"]);
    let (exit, screen) = run(
        &t,
        "open",
        &format!("{bin} case open case.tar.gz --into colleague"),
    );
    assert_eq!(exit, 0, "{screen}");
    t.keys(&["C-l"]);
    let (exit, screen) = run(
        &t,
        "status",
        &format!(
            "PSD2_CONSOLE_HOME=colleague {bin} send payments.status --profile Case --param payment-service=payments --param payment-product=norwegian-domestic-credit-transfers --param payment-id={payment_id} > status.json"
        ),
    );
    assert_eq!(exit, 0, "the case's sandbox holds the payment: {screen}");
    let status: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.home.path().join("status.json")).unwrap()).unwrap();
    assert_eq!(status["transactionStatus"], "RCVD", "{status}");

    // The console on the case: the same exchanges on its history screen.
    console_shows_the_case_history(
        &t,
        "the console on the case",
        &format!("PSD2_CONSOLE_HOME=colleague {bin} --profile Case"),
    );
    // `psd2-console --case FILE` opens the console directly on the bundle (a fresh home
    // under the data directory): its History screen shows the case's exchanges.
    console_shows_the_case_history(
        &t,
        "the console opened by --case",
        &format!("{bin} --case case.tar.gz"),
    );
    // The case was opened in a fresh directory under the data directory, not over the home.
    let cases = t.home.path().join("data").join("cases");
    let opened: Vec<_> = std::fs::read_dir(&cases)
        .unwrap_or_else(|e| panic!("{}: {e}", cases.display()))
        .collect();
    assert_eq!(
        opened.len(),
        1,
        "one fresh case directory in {}",
        cases.display()
    );
    // Enough time for the pane to show it before the session goes.
    std::thread::sleep(Duration::from_millis(100));
}
