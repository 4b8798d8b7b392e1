//! Headless SCA and the sandbox as a CI service (issue 22, part 2): `psd2-console sca
//! complete` on the real binary against a sandbox on loopback (private and corporate
//! contexts, account selection, reject, a foreign link refused), `sandbox serve --seed`
//! with valid and invalid files, `--ready-file`, `/health` and `/ready`, and the CI example
//! of `examples/ci/`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use psd2_console::sandbox::SandboxConfig;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use crate::common::cli::{BIN, Server, outcome};
use crate::common::sandbox::TestSandbox;

const KARI: &str = "31125461118";
const INGRID: &str = "02079146148";
const FJORDBRIS: &str = "912345602";

/// A TPP callback endpoint on loopback: answers every request 200 and sends its request
/// line (`GET /callback?… HTTP/1.1`) on the channel. Returns its URL `http://…/callback`.
async fn tpp_listener() -> (String, mpsc::UnboundedReceiver<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let buf = crate::common::read_request_head(&mut s, usize::MAX).await;
                let text = String::from_utf8_lossy(&buf);
                let _ = tx.send(text.lines().next().unwrap_or("").to_string());
                let _ = s
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                    )
                    .await;
            });
        }
    });
    (format!("http://{addr}/callback"), rx)
}

/// A scaRedirect link of `sb`: `GET /v1/accounts` without consent, redirecting to `tpp`.
async fn sca_link(sb: &TestSandbox, tpp: &str) -> String {
    let r = sb
        .get_with("/v1/accounts", &[("TPP-Redirect-URI", tpp)])
        .await;
    r.assert_status(401);
    r.sca_redirect().expect("scaRedirect").to_string()
}

/// `psd2-console sca complete args` to the end, off the runtime's threads (the sandbox runs
/// on them): (exit code, stdout, stderr).
async fn sca_complete(args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        outcome(
            Command::new(BIN)
                .arg("sca")
                .arg("complete")
                .args(&args)
                .output()
                .unwrap(),
        )
    })
    .await
    .unwrap()
}

/// The JSON of a successful `sca complete --json` (exit 0).
/// The white-space separated words of `line`, as `sca complete` arguments.
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Asserts that `sca complete` ended with exit code 1 and a message on stderr holding every
/// one of `says`.
#[track_caller]
fn assert_refused((code, _, err): (i32, String, String), says: &[&str]) {
    assert_eq!(code, 1, "{err}");
    crate::common::assert_contains_all(&err, says);
}

async fn complete_json(args: &[&str]) -> Value {
    let (code, out, err) = sca_complete(args).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The `bban`s of `GET /v1/accounts` read with `headers` (PSU-ID, PSU-Corporate-ID).
async fn account_bbans(sb: &TestSandbox, headers: &[(&str, &str)]) -> Vec<String> {
    let r = sb.get_with("/v1/accounts", headers).await;
    r.assert_status(200);
    r.json["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["bban"].as_str().unwrap().to_string())
        .collect()
}

/// The Norwegian IBAN of `bban` (ISO 13616 MOD 97-10 check digits).
fn iban(bban: &str) -> String {
    let digits: String = format!("{bban}NO00")
        .chars()
        .map(|c| c.to_digit(36).unwrap().to_string())
        .collect();
    let rem = digits
        .bytes()
        .fold(0u32, |r, b| (r * 10 + u32::from(b - b'0')) % 97);
    format!("NO{:02}{bban}", 98 - rem)
}

#[tokio::test(flavor = "multi_thread")]
async fn sca_complete_private_context_prints_the_callback_and_reaches_the_tpp() {
    let sb = TestSandbox::start().await;
    let (tpp, mut calls) = tpp_listener().await;
    let link = sca_link(&sb, &tpp).await;
    // Kari holds an agreement: the context page is shown and PRIVATE is chosen.
    let v = complete_json(&[&link, "--customer", KARI, "--json"]).await;
    assert_eq!(v["outcome"], "success", "{v}");
    assert_eq!(v["reachedTpp"], true, "{v}");
    assert_eq!(v["tppStatus"], 200, "{v}");
    let p = &v["parameters"];
    assert_eq!(p["context"], "PRIVATE", "{v}");
    assert!(p.get("psu-corporate-id").is_none(), "{v}");
    let psu = p["psu-id"].as_str().unwrap();
    assert!(!p["tpp-session-id"].as_str().unwrap().is_empty());
    // The redirect reached the TPP-Redirect-URI with the same parameters.
    let line = calls.recv().await.unwrap();
    assert!(line.starts_with("GET /callback?"), "{line}");
    assert!(line.contains(&format!("psu-id={psu}")), "{line}");
    // By default every offered account is consented: Kari's two accounts read.
    assert_eq!(account_bbans(&sb, &[("PSU-ID", psu)]).await.len(), 2);
    // Text output: name=value lines.
    let link = sca_link(&sb, &tpp).await;
    let (code, out, err) = sca_complete(&[&link, "--customer", KARI]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l == format!("psu-id={psu}")), "{out}");
    assert!(out.lines().any(|l| l == "context=PRIVATE"), "{out}");
    assert!(err.contains("redirected to the TPP-Redirect-URI"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sca_complete_corporate_context_chooses_the_company_by_its_number() {
    let sb = TestSandbox::start().await;
    let (tpp, _calls) = tpp_listener().await;
    let link = sca_link(&sb, &tpp).await;
    let v = complete_json(&words(&format!(
        "{link} --customer {KARI} --context corporate --company {FJORDBRIS} --json"
    )))
    .await;
    let p = &v["parameters"];
    assert_eq!(p["context"], "CORPORATE", "{v}");
    let corporate = p["psu-corporate-id"].as_str().expect("psu-corporate-id");
    let psu = p["psu-id"].as_str().unwrap();
    // The consent covers Fjordbris Bakeri's two accounts, read in the corporate context.
    let ids = account_bbans(&sb, &[("PSU-ID", psu), ("PSU-Corporate-ID", corporate)]).await;
    assert_eq!(ids.len(), 2);
    // A company the PSU holds no agreement for is refused, naming what is offered.
    let link = sca_link(&sb, &tpp).await;
    let line = format!("{link} --customer {KARI} --context corporate --company 987654309");
    let refused = sca_complete(&words(&line)).await;
    assert_refused(refused, &["no agreement for company 987654309", FJORDBRIS]);
    // A PSU without agreements gets no context page: refused, saying so.
    let link = sca_link(&sb, &tpp).await;
    let line = format!("{link} --customer {INGRID} --context corporate --company {FJORDBRIS}");
    let refused = sca_complete(&words(&line)).await;
    assert_refused(refused, &["showed no context page"]);
    // --company without --context corporate is a usage error.
    let refused = sca_complete(&[&link, "--customer", KARI, "--company", FJORDBRIS]).await;
    assert_refused(refused, &["--company goes with --context corporate"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn sca_complete_consents_to_the_accounts_named_by_iban() {
    let sb = TestSandbox::start().await;
    let (tpp, _calls) = tpp_listener().await;
    // The sandbox holds the built-in seed: Ingrid's accounts are known.
    let data = psd2_console::sandbox::domain::seed::seed();
    let ingrid = data.customers.iter().find(|c| c.number == INGRID).unwrap();
    let first_bban = &data
        .accounts
        .iter()
        .find(|a| a.owner == ingrid.id)
        .unwrap()
        .bban;
    let link = sca_link(&sb, &tpp).await;
    let v = complete_json(&[
        &link,
        "--customer",
        INGRID,
        "--accounts",
        &iban(first_bban),
        "--json",
    ])
    .await;
    let psu = v["parameters"]["psu-id"].as_str().unwrap();
    assert_eq!(
        account_bbans(&sb, &[("PSU-ID", psu)]).await,
        vec![first_bban.clone()]
    );
    // An account that is not offered is an error naming the offered ones.
    let link = sca_link(&sb, &tpp).await;
    let (code, _, err) =
        sca_complete(&[&link, "--customer", INGRID, "--accounts", "NO9386011117947"]).await;
    assert_eq!(code, 1);
    assert!(
        err.contains("no offered account is \"NO9386011117947\""),
        "{err}"
    );
    // A customerNumber the bank does not know: its login page's reason, exit 1.
    let link = sca_link(&sb, &tpp).await;
    let (code, _, err) = sca_complete(&[&link, "--customer", "99999999999"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("answered 400"), "{err}");
    assert!(err.contains("No sandbox customer has the number"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sca_complete_reject_sends_the_failure_redirect() {
    let sb = TestSandbox::start().await;
    let (tpp, mut calls) = tpp_listener().await;
    let link = sca_link(&sb, &tpp).await;
    let v = complete_json(&[&link, "--customer", INGRID, "--reject", "--json"]).await;
    assert_eq!(v["outcome"], "failure", "{v}");
    assert_eq!(v["parameters"]["code"], "CONSENT_INVALID", "{v}");
    assert_eq!(v["reachedTpp"], true, "{v}");
    let line = calls.recv().await.unwrap();
    assert!(line.contains("code=CONSENT_INVALID"), "{line}");
    // The link is used up: a second walk gets the bank's error page, exit 1.
    let (code, _, err) = sca_complete(&[&link, "--customer", INGRID]).await;
    assert_eq!(code, 1);
    assert!(err.contains("410"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sca_complete_refuses_a_link_that_is_not_a_psd2_console_sandbox() {
    // Something else on loopback that answers 200 to everything.
    let (other, mut calls) = tpp_listener().await;
    let origin = other.trim_end_matches("/callback");
    let link = format!("{origin}/sca/{}", uuid::Uuid::new_v4());
    let (code, out, err) = sca_complete(&[&link, "--customer", KARI]).await;
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("refused"), "{err}");
    assert!(err.contains("is not a psd2-console sandbox"), "{err}");
    // Only the identity probe went there: no page, no customerNumber.
    let line = calls.recv().await.unwrap();
    assert!(line.starts_with("GET /.well-known/psd2-console "), "{line}");
    assert!(calls.try_recv().is_err());
    // A sandbox's URL that is not an SCA link, and a non-http link, are refused too.
    let sb = TestSandbox::start().await;
    let (code, _, err) =
        sca_complete(&[&format!("{}/v1/accounts", sb.base), "--customer", KARI]).await;
    assert_eq!(code, 2);
    assert!(err.contains("not a psd2-console sandbox SCA link"), "{err}");
    let (code, _, err) = sca_complete(&["ftp://127.0.0.1/sca/x", "--customer", KARI]).await;
    assert_eq!(code, 2);
    assert!(err.contains("not an http(s) link"), "{err}");
}

// ---------------------------------------------------------------------------------------
// --seed, --ready-file, /health, /ready

const SEED: &str = r#"# Two customers for a CI run
[[customers]]
customerNumber = "01017012345"
customerName = "Siri Seed"

[[customers.accounts]]
bban = "15030012345"
name = "Brukskonto Siri"
balance = "1000.00"

[[customers.accounts.transactions]]
amount = "-250.00"
bookingDate = "2026-01-05"
creditorName = "Kiwi Majorstuen"
remittanceInformationUnstructured = "Matvarer"

[[customers.accounts.transactions]]
amount = "120.50"
bookingDate = "2026-01-06"
debtorName = "Vipps fra Ola"

[[customers]]
customerNumber = "912345602"
customerType = "CORPORATE"
customerName = "Seed Bakeri AS"

[[customers.accounts]]
bban = "15030098762"
name = "Driftskonto Seed Bakeri"

[[agreements]]
holder = "01017012345"
company = "912345602"
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_seeded_customer_completes_sca_and_reads_its_seeded_accounts_balances_and_transactions() {
    let today = psd2_console::sandbox::Clock::system().today();
    let seed = psd2_console::sandbox::domain::seed_file::parse_seed(
        SEED,
        "seed.toml",
        today,
        std::time::SystemTime::now(),
    )
    .unwrap();
    let sb = TestSandbox::start_with(SandboxConfig {
        seed: Some(seed),
        ..SandboxConfig::default()
    })
    .await;
    // Only the file's customers: the built-in ones are gone.
    let numbers: Vec<String> = sb
        .customers()
        .await
        .iter()
        .map(|c| c["customerNumber"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(numbers, ["01017012345", "912345602"]);
    let (tpp, _calls) = tpp_listener().await;
    let link = sca_link(&sb, &tpp).await;
    let v = complete_json(&[&link, "--customer", "01017012345", "--json"]).await;
    let psu = v["parameters"]["psu-id"].as_str().unwrap().to_string();
    let h = [("PSU-ID", psu.as_str())];
    let list = sb.get_with("/v1/accounts", &h).await;
    list.assert_status(200);
    assert_eq!(
        list.json["accounts"][0]["bban"], "15030012345",
        "{}",
        list.text
    );
    assert_eq!(list.json["accounts"][0]["name"], "Brukskonto Siri");
    let id = list.json["accounts"][0]["resourceId"].as_str().unwrap();
    let balances = sb
        .get_with(&format!("/v1/accounts/{id}/balances"), &h)
        .await;
    balances.assert_status(200);
    // 1000.00 - 250.00 + 120.50
    assert!(balances.text.contains("\"870.50\""), "{}", balances.text);
    let tx = sb
        .get_with(
            &format!("/v1/accounts/{id}/transactions?bookingStatus=booked&dateFrom=2026-01-01"),
            &h,
        )
        .await;
    tx.assert_status(200);
    let booked = tx.json["transactions"]["booked"].as_array().unwrap();
    assert_eq!(booked.len(), 2, "{}", tx.text);
    assert!(tx.text.contains("Kiwi Majorstuen") && tx.text.contains("Vipps fra Ola"));
    // The corporate context offers the seeded company by its number.
    let link = sca_link(&sb, &tpp).await;
    let v = complete_json(&[
        &link,
        "--customer",
        "01017012345",
        "--context",
        "corporate",
        "--company",
        "912345602",
        "--json",
    ])
    .await;
    assert_eq!(v["parameters"]["context"], "CORPORATE", "{v}");
}

/// `sandbox serve --in-memory --addr 127.0.0.1:0` with `args`, stderr to `log`.
fn serve(args: &[&str], log: &Path) -> Server {
    Server(
        Command::new(BIN)
            .env("PSD2_CONSOLE_FREE_PORTS", "1")
            .args(["sandbox", "serve", "--in-memory", "--addr", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap(),
    )
}

/// Waits (at most a minute) for `file` to hold a line; returns it.
fn wait_for_file(file: &Path, server: &mut Server) -> String {
    for _ in 0..600 {
        if let Ok(t) = std::fs::read_to_string(file)
            && t.ends_with('\n')
        {
            return t.trim().to_string();
        }
        assert!(
            server.0.try_wait().unwrap().is_none(),
            "sandbox serve ended before it was ready"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("no ready file {}", file.display());
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_with_a_seed_writes_the_ready_file_and_answers_health_and_ready() {
    let dir = tempfile::tempdir().unwrap();
    let seed = dir.path().join("seed.toml");
    std::fs::write(&seed, SEED).unwrap();
    let ready = dir.path().join("ready");
    let mut server = serve(
        &[
            "--seed",
            seed.to_str().unwrap(),
            "--ready-file",
            ready.to_str().unwrap(),
        ],
        &dir.path().join("log"),
    );
    let (base, server) = tokio::task::spawn_blocking(move || {
        let base = wait_for_file(&ready, &mut server);
        (base, server)
    })
    .await
    .unwrap();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    let get = |path: &str| {
        let url = format!("{base}{path}");
        async move {
            let r = reqwest::get(&url).await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    assert_eq!(
        get("/health").await,
        (200, serde_json::json!({"status": "UP"}))
    );
    let (status, ready) = get("/ready").await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["status"], "READY", "{ready}");
    let (_, id) = get("/.well-known/psd2-console").await;
    assert_eq!(id["product"], "psd2-console", "{id}");
    drop(server);
}

#[test]
fn serve_refuses_an_invalid_seed_file_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, line, words) in [
        (
            "bad-bban.toml",
            SEED.replace("15030012345", "15030012346"),
            7,
            "is not a Norwegian BBAN",
        ),
        (
            "unknown-field.toml",
            SEED.replace("creditorName = \"Kiwi", "creditor = \"Kiwi"),
            14,
            "unknown field `creditor`",
        ),
        (
            "duplicate.toml",
            SEED.replace("15030098762", "15030012345"),
            28,
            "bban 15030012345 is given twice",
        ),
        (
            "holder.toml",
            SEED.replace("holder = \"01017012345\"", "holder = \"02079146148\""),
            32,
            "agreement holder 02079146148 is not a PRIVATE customer of the file",
        ),
        (
            "bad.json",
            "{\"customers\": [\n  {\"customerNumber\": \"01017012345\",\n   \"customerName\": \"Siri\",\n   \"accounts\": [{\"name\": \"B\", \"balance\": \"1,5\"}]}]}".to_string(),
            4,
            "is not an amount",
        ),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, &text).unwrap();
        let ready = dir.path().join(format!("{name}.ready"));
        let (code, _, err) = outcome(
            Command::new(BIN)
                .args(["sandbox", "serve", "--in-memory", "--addr", "127.0.0.1:0", "--seed"])
                .arg(&file)
                .arg("--ready-file")
                .arg(&ready)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 1, "{name}: {err}");
        let at = format!("{}:{line}: ", file.display());
        assert!(err.contains(&at), "{name}: expected {at:?} in {err}");
        assert!(err.contains(words), "{name}: {err}");
        assert!(!ready.exists(), "{name}: no ready file for a refused seed");
    }
}

// ---------------------------------------------------------------------------------------
// examples/ci

#[test]
fn the_ci_example_runs_start_wait_sca_complete_stop() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("examples/ci/run.sh");
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = outcome(
        Command::new("bash")
            .arg(&script)
            .env("PSD2_CONSOLE", BIN)
            .env("PSD2_CONSOLE_HOME", home.path())
            .env("PSD2_CONSOLE_FREE_PORTS", "1")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("BROWSER")
            .stdin(Stdio::null())
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("CI example passed"), "{out}");
}

// ---------------------------------------------------------------------------------------
// Payment SCA pages

/// A domestic payment from Kari's account whose SCA redirects to `tpp` (`remittance`
/// differs per payment: no logical duplicate): (paymentId, scaRedirect).
async fn payment(sb: &TestSandbox, tpp: &str, remittance: &str) -> (String, String) {
    use crate::common::payments::{DOMESTIC, domestic, first_bban};
    let body = domestic(&first_bban(KARI), "10.00", remittance);
    let r = sb
        .initiate_with(DOMESTIC, &[("TPP-Redirect-URI", tpp)], &body)
        .await;
    r.assert_status(201);
    (
        r.json["paymentId"].as_str().unwrap().to_string(),
        r.sca_redirect().expect("scaRedirect").to_string(),
    )
}

async fn transaction_status(sb: &TestSandbox, id: &str) -> String {
    let path = format!(
        "/v1/payments/{}/{id}/status",
        crate::common::payments::DOMESTIC
    );
    sb.get_ok(&path).await.json["transactionStatus"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn sca_complete_approves_or_rejects_a_payment_on_its_decision_page() {
    let sb = TestSandbox::start().await;
    let (tpp, _calls) = tpp_listener().await;
    let (id, link) = payment(&sb, &tpp, "approved").await;
    assert!(link.contains("/payment-sca/"), "{link}");
    let v = complete_json(&[&link, "--customer", KARI, "--json"]).await;
    assert_eq!(v["outcome"], "success", "{v}");
    assert_eq!(v["reachedTpp"], true, "{v}");
    assert_ne!(transaction_status(&sb, &id).await, "RCVD");
    let (id, link) = payment(&sb, &tpp, "rejected").await;
    let v = complete_json(&[&link, "--customer", KARI, "--reject", "--json"]).await;
    assert_eq!(v["outcome"], "failure", "{v}");
    assert_eq!(v["parameters"]["code"], "PAYMENT_FAILED", "{v}");
    assert_eq!(transaction_status(&sb, &id).await, "RJCT");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_identity_answer_of_another_shape_is_named_as_missing_the_product() {
    // JSON, but `product` is a number: the refusal names the missing product, not JSON.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut s, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            let body = r#"{"product":5}"#;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(format!("{head}{body}").as_bytes()).await;
        }
    });
    let link = format!("{origin}/sca/{}", uuid::Uuid::new_v4());
    let (code, out, err) = sca_complete(&[&link, "--customer", KARI]).await;
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("is not a psd2-console sandbox"), "{err}");
    assert!(
        err.contains("without \"product\":\"psd2-console\""),
        "{err}"
    );
}
