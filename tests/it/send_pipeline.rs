//! Issue 18: one sender for the `send` command and the console (A), one status vocabulary
//! (B), and SCA callbacks that go to the SCA they answer (defect 1). The console side is
//! driven as its runner does ([`Console`]: `prepare_to_send`, the one sender, the engine's
//! routing, `Action::ReadStatus` / `Action::AbandonSca`); the command line side is the real
//! binary. Both against the embedded sandbox, SCA completed in its HTML pages.

use std::process::Stdio;

use crossterm::event::{KeyCode, KeyEvent};
use psd2_console::client::history::History;
use psd2_console::profile::Paths;
use psd2_console::tui::Action;

use crate::common;
use crate::common::cli::headless;
use crate::common::console::{Console, KARI};

/// An instant payment from Kari's current account beyond its funds (set to 100.00 NOK
/// first, [`LOW_BALANCE`]): the sandbox rejects it at approval with `ACCP` and
/// `fundsAvailable: false` (interface document: "ACCP is named for payments rejected for
/// lack of funds").
const TOO_LARGE: &str = r#"{
  "instructedAmount": {"currency": "NOK", "amount": "150.00"},
  "debtorAccount": {"bban": "15031279191"},
  "creditorName": "Per Hansen",
  "creditorAccount": {"bban": "12345678903"},
  "remittanceInformationUnstructured": "Too much"
}"#;

/// The balance set on Kari's current account before the payment.
const LOW_BALANCE: &str = r#"{"booked": {"currency": "NOK", "amount": "100.00"}, "available": {"currency": "NOK", "amount": "100.00"}}"#;

/// The sandbox's id of Kari's current account `15031279191` (seed ids are UUID v5).
fn kari_current_account() -> String {
    uuid::Uuid::new_v5(
        &psd2_console::sandbox::domain::seed::namespace(),
        b"account:15031279191",
    )
    .to_string()
}

/// One history row as both front ends must record it: operation, method, path (ids
/// replaced), status, the request's header names, whether its TPP-Redirect-URI names the
/// SCA (`sca-ref`), and the answer's status word.
fn rows(home: &std::path::Path) -> Vec<String> {
    let h = History::open_existing(&Paths::under(home.to_path_buf()).history_file()).unwrap();
    let mut entries = h.list(None, 100).unwrap();
    entries.reverse();
    entries
        .iter()
        .map(|e| {
            let path: Vec<String> = e
                .path_and_query
                .split('/')
                .map(|s| match uuid::Uuid::parse_str(s) {
                    Ok(_) => "<id>".to_string(),
                    Err(_) => s.to_string(),
                })
                .collect();
            let mut names: Vec<String> = e
                .request_headers
                .iter()
                .map(|(n, _)| n.to_ascii_lowercase())
                .collect();
            names.sort();
            let sca_ref = e
                .request_headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("TPP-Redirect-URI"))
                .and_then(|(_, v)| psd2_console::redirect::sca_ref_of(v))
                .is_some();
            let body: serde_json::Value =
                serde_json::from_slice(&e.response_body).unwrap_or_default();
            format!(
                "{} {} {} {} [{}] sca-ref={sca_ref} {}",
                e.operation_id,
                e.method,
                path.join("/"),
                e.status,
                names.join(" "),
                body["transactionStatus"]
            )
        })
        .collect()
}

/// A: the console and `send` record the same rows and give the same verdict for the same
/// SCA outcome; B: that verdict for `ACCP` with `fundsAvailable: false` is "rejected: lack
/// of funds" (exit 1 for `send`, an error in the console's status line), where the console
/// called ACCP approved and `send` exited 0.
#[tokio::test(flavor = "multi_thread")]
async fn console_and_send_record_the_same_rows_and_judge_accp_rejected_for_lack_of_funds() {
    // The console.
    let mut c = Console::start().await;
    assert!(c.app.select_operation("sandbox.balances.update"));
    c.app.set_param(
        "sandbox.balances.update",
        "account-id",
        &kari_current_account(),
    );
    assert!(
        c.app
            .set_param("sandbox.balances.update", "body", LOW_BALANCE)
    );
    assert_eq!(c.send().await, 200, "{}", c.body());
    assert!(c.app.select_operation("payments.instant.create"));
    assert!(
        c.app
            .set_param("payments.instant.create", "body", TOO_LARGE)
    );
    assert_eq!(c.send().await, 201, "{}", c.body());
    let tui_id = c.json()["paymentId"].as_str().unwrap().to_string();
    let action = c.complete_sca(KARI, "PRIVATE").await;
    assert!(matches!(action, Action::ReadStatus(_)), "{action:?}");
    assert_eq!(c.json()["transactionStatus"], "ACCP", "{}", c.body());
    assert_eq!(c.json()["fundsAvailable"], false, "{}", c.body());
    let m = c.app.message().unwrap().clone();
    assert_eq!(
        m.text,
        format!("payment {tui_id} rejected: lack of funds (ACCP)")
    );
    assert_eq!(m.level, psd2_console::tui::Level::Error);
    // The flow diagram says it too.
    let (code, flow, err) = common::cli::run_headless(c.home.path(), &["flow", "--format", "text"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        flow.contains("200 ACCP (rejected: lack of funds)"),
        "{flow}"
    );
    let tui_rows = rows(c.home.path());
    c.shutdown().await;

    // The command line, same body, same SCA outcome.
    let home = tempfile::tempdir().unwrap();
    let low = home.path().join("low.json");
    std::fs::write(&low, LOW_BALANCE).unwrap();
    let account = format!("account-id={}", kari_current_account());
    let (code, _, err) = common::cli::run_headless(
        home.path(),
        &[
            "send",
            "sandbox.balances.update",
            "--param",
            &account,
            "--body-file",
            low.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let body = home.path().join("too-large.json");
    std::fs::write(&body, TOO_LARGE).unwrap();
    let mut child = headless(
        home.path(),
        &[
            "send",
            "payments.instant.create",
            "--body-file",
            body.to_str().unwrap(),
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = common::cli::StderrLines::of(&mut child);
    let href = stderr.sca_link();
    let to_tpp = common::sca::complete(&href, KARI, "PRIVATE", |_| {}, "Approve").await;
    assert!(to_tpp.contains("sca-ref="), "{to_tpp}");
    let out = common::cli::land_and_wait(&to_tpp, child).await;
    let rest = stderr.rest();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "ACCP is not approved: {stdout}\n{rest:?}"
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let cli_id = v["paymentId"].as_str().unwrap();
    assert_eq!(v["transactionStatus"], "ACCP", "{v}");
    assert!(
        rest.iter()
            .any(|l| l == &format!("payment {cli_id} rejected: lack of funds (ACCP)")),
        "{rest:?}"
    );

    // The same rows: the balance PUT, the POST (with the sca-ref) and the status GET.
    let cli_rows = rows(home.path());
    assert_eq!(tui_rows.len(), 3, "{tui_rows:#?}");
    assert_eq!(cli_rows, tui_rows);
    assert!(tui_rows[1].contains("sca-ref=true"), "{tui_rows:#?}");
}

/// Defect 1: a payment's SCA prompt given up with Esc, then a bank-offered consent approved
/// in the corporate context: the callback is the consent's, so the session holds its PSU-ID
/// and corporate id (before, the waiting payment flow took it: "SCA of the payment
/// complete; the session's PSU and context are unchanged").
#[tokio::test(flavor = "multi_thread")]
async fn esc_on_a_payment_sca_prompt_leaves_no_wait_that_swallows_the_consent_sca() {
    let mut c = Console::start().await;
    let agreement = c.kari_agreement().await;
    assert!(c.app.select_operation("payments.domestic.create"));
    assert_eq!(c.send().await, 201, "{}", c.body());
    assert!(c.app.sca_prompt().is_some());
    assert_eq!(c.engine.pending_sca().len(), 1);
    let action = c.press(KeyEvent::from(KeyCode::Esc)).await;
    assert!(matches!(action, Action::AbandonSca(_)), "{action:?}");
    assert!(
        c.app.message().unwrap().text.contains("abandoned"),
        "{:?}",
        c.app.message()
    );
    assert!(c.engine.pending_sca().is_empty(), "Esc gave the wait up");

    assert!(c.app.select_operation("consents.bank-offered"));
    assert_eq!(c.send().await, 201, "{}", c.body());
    c.complete_sca(KARI, &format!("CORPORATE:{agreement}"))
        .await;
    let m = c.app.message().unwrap().text.clone();
    assert!(!m.contains("SCA of the payment"), "{m}");
    assert!(c.engine.session.psu_id.is_some());
    assert_eq!(
        c.engine.session.psu_corporate_id.as_deref(),
        Some(agreement.as_str())
    );
    assert_eq!(c.app.status().context.as_deref(), Some("CORPORATE"));
    c.shutdown().await;
}

/// Defect 1 as the lessons hit it: two payment SCAs left waiting (never approved, no Esc),
/// then a consent's SCA: its callback still goes to the consent, and its redirect
/// parameters reach the session.
#[tokio::test(flavor = "multi_thread")]
async fn payment_scas_left_waiting_do_not_swallow_a_later_consent_sca() {
    let mut c = Console::start().await;
    let agreement = c.kari_agreement().await;
    for _ in 0..2 {
        assert!(c.app.select_operation("payments.domestic.create"));
        c.app
            .set_param("payments.domestic.create", "allowLogicalDuplicate", "true");
        assert_eq!(c.send().await, 201, "{}", c.body());
    }
    assert_eq!(c.engine.pending_sca().len(), 2);
    assert!(c.app.select_operation("consents.bank-offered"));
    assert_eq!(c.send().await, 201, "{}", c.body());
    c.complete_sca(KARI, &format!("CORPORATE:{agreement}"))
        .await;
    assert_eq!(
        c.engine.session.psu_corporate_id.as_deref(),
        Some(agreement.as_str())
    );
    assert_eq!(c.app.status().context.as_deref(), Some("CORPORATE"));
    // The two payment flows still wait.
    let waiting = c.engine.pending_sca();
    assert_eq!(waiting.len(), 2, "{waiting:?}");
    assert!(
        waiting
            .iter()
            .all(|f| f.flow == psd2_console::client::engine::ScaFlow::Payment)
    );
    c.shutdown().await;
}
