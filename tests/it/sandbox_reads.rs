//! The everyday AIS reads keep their serialized bodies (`sandbox::http::reads`): a repeated read is
//! answered byte for byte the same, a write or a new sandbox day is seen at once, and the
//! access checks still run on every request (another TPP or PSU never gets a kept body).

use crate::common;

use std::time::{Duration, SystemTime};

use common::sandbox::{Reply, TestSandbox, tpp_with_roles};
use psd2_console::cert::Psd2Role;
use psd2_console::sandbox::{Clock, SandboxConfig};
use serde_json::json;

/// A sandbox whose clock stands at 23:30 UTC (today's or, when past, tomorrow's), so a
/// test can cross midnight within the PSU's one-hour SCA session.
async fn sandbox() -> TestSandbox {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let day = now - now % 86_400;
    let at = if day + 84_600 > now {
        day + 84_600
    } else {
        day + 86_400 + 84_600
    };
    TestSandbox::start_with(SandboxConfig {
        clock: Clock::fixed(SystemTime::UNIX_EPOCH + Duration::from_secs(at)),
        ..SandboxConfig::default()
    })
    .await
}

/// Runs the consent SCA of customer `number` (every account and card account ticked);
/// returns the PSU-ID.
async fn consent(sb: &TestSandbox, number: &str) -> String {
    let r = sb.get("/v1/accounts").await;
    assert_eq!(r.status, 401, "{}", r.text);
    let to_tpp = common::sca::complete(
        r.sca_redirect().expect("scaRedirect"),
        number,
        "PRIVATE",
        common::sca::tick_all,
        "Approve",
    )
    .await;
    common::sca::success(&to_tpp).psu_id
}

async fn get(sb: &TestSandbox, path: &str, psu: &str) -> Reply {
    let r = sb.get_with(path, &[("PSU-ID", psu)]).await;
    assert_eq!(r.status, 200, "{path}: {}", r.text);
    assert_eq!(
        r.headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/json"),
        "{path}"
    );
    r
}

fn amount(v: &str) -> serde_json::Value {
    json!({"currency": "NOK", "amount": v})
}

fn balance(r: &Reply, kind: &str) -> (String, String) {
    let b = crate::common::balance_of(&r.json, kind);
    (
        b["balanceAmount"]["amount"].as_str().unwrap().to_string(),
        b["referenceDate"].as_str().unwrap_or("").to_string(),
    )
}

#[tokio::test]
async fn repeated_reads_follow_every_write_and_the_sandbox_day() {
    let sb = sandbox().await;
    let psu = consent(&sb, "31125461118").await;
    let list = get(&sb, "/v1/accounts", &psu).await;
    assert_eq!(get(&sb, "/v1/accounts", &psu).await.text, list.text);
    let acc = list.first_resource_id("accounts");
    let cards = get(&sb, "/v1/card-accounts", &psu).await;
    assert_eq!(get(&sb, "/v1/card-accounts", &psu).await.text, cards.text);
    let card = cards.first_resource_id("cardAccounts");
    for path in [
        format!("/v1/accounts/{acc}"),
        format!("/v1/card-accounts/{card}"),
        format!("/v1/card-accounts/{card}/transactions"),
    ] {
        let first = get(&sb, &path, &psu).await;
        assert_eq!(get(&sb, &path, &psu).await.text, first.text, "{path}");
    }

    // Account balances: a balance override is seen by the next read.
    let bal_path = format!("/v1/accounts/{acc}/balances");
    let before = get(&sb, &bal_path, &psu).await;
    sb.set_balances(&format!("accounts/{acc}"), "5000.00", "4200.50")
        .await;
    let after = get(&sb, &bal_path, &psu).await;
    assert_ne!(after.text, before.text);
    assert_eq!(balance(&after, "expected").0, "4200.50");

    // Card balances and transactions: a new card transaction is seen by the next reads.
    let card_bal_path = format!("/v1/card-accounts/{card}/balances");
    let card_tx_path = format!("/v1/card-accounts/{card}/transactions");
    let bal_before = get(&sb, &card_bal_path, &psu).await;
    let tx_before = get(&sb, &card_tx_path, &psu).await;
    let r = sb
        .send_json(
            "POST",
            &format!("/v1/sandbox/card-accounts/{card}/transactions"),
            &json!({"transactionAmount": amount("-123.45"), "transactionDetails": "Kiosk"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.json["cardTransactionId"].as_str().unwrap().to_string();
    let tx_after = get(&sb, &card_tx_path, &psu).await;
    assert!(!tx_before.text.contains(&id));
    assert!(tx_after.text.contains(&id), "{}", tx_after.text);
    let bal_after = get(&sb, &card_bal_path, &psu).await;
    assert_ne!(
        balance(&bal_after, "interimBooked").0,
        balance(&bal_before, "interimBooked").0
    );

    // A new sandbox day: the balances' reference dates move with it.
    let today = sb.clock.today();
    assert_eq!(balance(&after, "expected").1, today.to_string());
    assert_eq!(balance(&bal_after, "interimBooked").1, today.to_string());
    // 40 minutes later: past midnight, within the SCA session.
    sb.clock.advance(Duration::from_secs(40 * 60));
    let tomorrow = today.succ_opt().unwrap().to_string();
    assert_eq!(
        balance(&get(&sb, &bal_path, &psu).await, "expected").1,
        tomorrow
    );
    assert_eq!(
        balance(&get(&sb, &card_bal_path, &psu).await, "interimBooked").1,
        tomorrow
    );
    assert!(sb.violations.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_kept_body_is_never_given_to_another_psu_or_tpp() {
    let sb = sandbox().await;
    let kari = consent(&sb, "31125461118").await;
    let ola = consent(&sb, "15038546101").await;
    let kari_list = get(&sb, "/v1/accounts", &kari).await;
    let ola_list = get(&sb, "/v1/accounts", &ola).await;
    assert_ne!(kari_list.text, ola_list.text);
    let kari_cards = get(&sb, "/v1/card-accounts", &kari).await;
    let ola_cards = get(&sb, "/v1/card-accounts", &ola).await;
    assert_ne!(kari_cards.text, ola_cards.text);
    let card = kari_cards.first_resource_id("cardAccounts");
    let acc = kari_list.first_resource_id("accounts");
    // Kari's resources, asked for with Ola's PSU-ID: refused although their bodies are kept.
    for path in [
        format!("/v1/accounts/{acc}"),
        format!("/v1/accounts/{acc}/balances"),
        format!("/v1/card-accounts/{card}"),
        format!("/v1/card-accounts/{card}/balances"),
        format!("/v1/card-accounts/{card}/transactions"),
    ] {
        get(&sb, &path, &kari).await;
        let r = sb.get_with(&path, &[("PSU-ID", &ola)]).await;
        assert_eq!(r.status, 403, "{path}: {}", r.text);
    }
    // Another TPP (its own certificate, no consent) with Kari's PSU-ID: SCA first.
    let other = tpp_with_roles(&[Psd2Role::PspAi]);
    for path in ["/v1/accounts", "/v1/card-accounts"] {
        let r = sb.get_as(&other, path, &[("PSU-ID", &kari)]).await;
        assert_eq!(r.status, 401, "{path}: {}", r.text);
    }
}

/// Transaction details are kept like the other reads (`Read::TransactionDetails`): a repeated
/// read is the same body, another transaction gets its own, a write is seen by the next read
/// (a balance override leaves `balanceAfterTransaction` out), and without the PSU present an
/// entry older than 90 days is still refused after its body was kept for the PSU present.
#[tokio::test]
async fn transaction_details_are_kept_per_transaction_and_follow_writes_and_the_window() {
    let sb = sandbox().await;
    let psu = consent(&sb, "31125461118").await;
    let acc = get(&sb, "/v1/accounts", &psu)
        .await
        .first_resource_id("accounts");
    let today = sb.clock.today();
    let old = today - chrono::Duration::days(200);
    let page = get(
        &sb,
        &format!("/v1/accounts/{acc}/transactions?bookingStatus=booked&dateFrom={old}&limit=5000"),
        &psu,
    )
    .await;
    let booked = page.json["transactions"]["booked"].as_array().unwrap();
    let id_of = |t: &serde_json::Value| t["transactionId"].as_str().unwrap().to_string();
    let (newest, second) = (id_of(&booked[0]), id_of(&booked[1]));
    let earliest = (today - chrono::Duration::days(90)).to_string();
    let older = booked
        .iter()
        .find(|t| t["bookingDate"].as_str().unwrap() < earliest.as_str())
        .map(id_of)
        .expect("an entry older than 90 days");
    let details = |id: &str| format!("/v1/accounts/{acc}/transactions/{id}");

    let first = get(&sb, &details(&newest), &psu).await;
    assert_eq!(get(&sb, &details(&newest), &psu).await.text, first.text);
    let other = get(&sb, &details(&second), &psu).await;
    assert_ne!(other.text, first.text, "each transaction its own body");
    assert!(other.text.contains(&second));
    let d = &first.json["transactionsDetails"]["transactionDetails"];
    assert!(d["balanceAfterTransaction"].is_object(), "{}", first.text);

    // The old entry: kept for the PSU present, still refused without it.
    get(&sb, &details(&older), &psu).await;
    let unattended = [("PSU-ID", psu.as_str()), ("PSU-IP-Address", "")];
    sb.get_with(&details(&older), &unattended)
        .await
        .assert_error(400, "PERIOD_INVALID");
    assert_eq!(
        sb.get_with(&details(&newest), &unattended).await.status,
        200
    );

    // A write is seen by the next read.
    sb.set_balances(&format!("accounts/{acc}"), "5000.00", "4200.50")
        .await;
    let after = get(&sb, &details(&newest), &psu).await;
    assert!(
        after.json["transactionsDetails"]["transactionDetails"]["balanceAfterTransaction"]
            .is_null(),
        "{}",
        after.text
    );
}
