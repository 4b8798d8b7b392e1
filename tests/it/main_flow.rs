//! The main job end to end through the console's engine, with no mocks: the built-in
//! embedded-sandbox profile lists accounts, gets 401 with a scaRedirect, the PSU completes
//! SCA in the sandbox's HTML forms over real HTTP, the browser lands on the console's
//! redirect listener, the engine stores the PSU-ID, and the accounts are listed.

use crate::common;

use common::{browser, forms, page_text};
use psd2_console::client::Engine;
use psd2_console::profile::SessionState;
use psd2_console::xs2a::operations;
use psd2_console::xs2a::redirect::ScaCallback;

/// The customer the SCA login page at `sca_url` offers: its pre-filled `customerNumber`, or
/// the first of the sandbox's one-click customer buttons (`customerNumber` submit buttons) it
/// lists as hints. The page needs no JavaScript. Only form fields and buttons are read: a
/// digit run elsewhere on the page (the form's hex token can hold one) is no customer.
async fn offered_customer(sca_url: &str) -> String {
    let html = page_text(sca_url).await;
    assert!(!html.contains("<script"), "SCA pages need no JavaScript");
    let forms = forms(&html, sca_url);
    let typed = forms
        .iter()
        .flat_map(|f| f.fields.iter())
        .find(|(n, v)| n == "customerNumber" && !v.is_empty())
        .map(|(_, v)| v.clone());
    typed
        .or_else(|| {
            forms
                .iter()
                .flat_map(|f| f.buttons.iter())
                .find(|b| b.name == "customerNumber" && !b.value.is_empty())
                .map(|b| b.value.clone())
        })
        .expect("a customerNumber hint")
}

#[tokio::test]
async fn list_accounts_after_sca_in_the_browser() {
    let (_home, paths, mut engine) = crate::common::default_engine().await;
    assert!(
        engine.listener_error.is_none(),
        "{:?}",
        engine.listener_error
    );
    // First run generated the test certificate, key 0600.
    let key_file = paths.certs_dir().join("embedded-sandbox.key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let first = send(&engine, "accounts.list", &[]).await;
    assert_eq!(first.status, 401, "{}", first.pretty_body());
    let sca = first.sca_redirect().expect("scaRedirect");

    let number = offered_customer(&sca).await;
    let to_tpp = common::sca::complete_sca(&sca, &number).await;
    assert!(to_tpp.starts_with(&engine.redirect_uri), "{to_tpp}");
    // The browser follows the redirect to the console's listener.
    let landing = browser().get(&to_tpp).send().await.unwrap();
    assert_eq!(landing.status(), 200);
    assert!(landing.text().await.unwrap().contains("SCA complete"));

    let cb = engine.next_callback().await.unwrap();
    let ScaCallback::Success(ok) = &cb else {
        panic!("{cb:?}")
    };
    uuid::Uuid::parse_str(&ok.psu_id).unwrap();
    engine.apply_callback(&cb).unwrap();
    // Persisted for the next start.
    let saved = SessionState::load(&paths.session_file("embedded-sandbox")).unwrap();
    assert_eq!(saved.psu_id.as_deref(), Some(ok.psu_id.as_str()));

    let again = req(&engine, "accounts.list", &[]);
    assert_eq!(again.header("PSU-ID"), Some(ok.psu_id.as_str()));
    let accounts = engine.send(&again).await.unwrap();
    assert_eq!(accounts.status, 200, "{}", accounts.pretty_body());
    let list = accounts.json.as_ref().unwrap()["accounts"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!list.is_empty());
    let id = list[0]["resourceId"].as_str().unwrap().to_string();

    let b = send(&engine, "accounts.balances", &[("account-id", &id)]).await;
    assert_eq!(b.status, 200, "{}", b.pretty_body());
    assert!(b.json.as_ref().unwrap()["balances"][0]["balanceAmount"]["amount"].is_string());

    let t = send(&engine, "accounts.transactions", &[("account-id", &id)]).await;
    assert_eq!(t.status, 200, "{}", t.pretty_body());
    assert!(t.json.as_ref().unwrap()["transactions"]["booked"].is_array());
    engine.shutdown().await;
}

#[tokio::test]
async fn the_console_signs_at_the_embedded_sandbox_time_after_the_clock_is_advanced() {
    let (_home, _, engine) = crate::common::default_engine().await;
    let advance = operations::find("sandbox.clock.advance").unwrap();
    let r = engine
        .send(
            &engine
                .prepare(advance, &[], Some(r#"{"advanceSeconds": 7200}"#))
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(r.is_success(), "{}", r.pretty_body());
    let skew = engine
        .now()
        .duration_since(std::time::SystemTime::now())
        .unwrap()
        .as_secs();
    assert!(
        skew >= 7100,
        "the engine signs at the sandbox's time ({skew} s ahead)"
    );
    let r = send(&engine, "sandbox.customers.list", &[]).await;
    assert_eq!(r.status, 200, "{}", r.pretty_body());
    engine.shutdown().await;
}

/// Sends the operation `op` with `params` through `engine` ([`req`]); panics when it cannot.
async fn send(
    engine: &Engine,
    op: &str,
    params: &[(&str, &str)],
) -> psd2_console::client::Exchange {
    engine.send(&req(engine, op, params)).await.unwrap()
}

fn req(
    engine: &Engine,
    op: &str,
    params: &[(&str, &str)],
) -> psd2_console::client::PreparedRequest {
    let op = operations::find(op).unwrap();
    let params: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    engine.prepare(op, &params, None).unwrap()
}

/// Issue 8 items 1 and 3 through the engine: after an AIS SCA in CORPORATE context, a
/// payment SCA (approved in PRIVATE context) leaves the session's PSU-ID, PSU-Corporate-ID
/// and context as they were, the flow is known as a payment, and its status is read with
/// `status_after_sca` (no second POST); account reads keep working in corporate context.
#[tokio::test]
async fn a_payment_sca_keeps_the_corporate_context_and_reads_the_payment_status() {
    use psd2_console::client::engine::{ScaFlow, Verdict};
    use psd2_console::xs2a::redirect::PsuContext;
    const KARI: &str = "31125461118";
    let (_home, paths, mut engine) = crate::common::default_engine().await;
    let with_agreements = [("withAgreements", "true")];
    let customers = send(&engine, "sandbox.customers.list", &with_agreements).await;
    let agreement = common::first_agreement(customers.json.as_ref().unwrap(), KARI);

    // AIS SCA in corporate context.
    let first = send(&engine, "accounts.list", &[]).await;
    let sca = first.sca_redirect().expect("scaRedirect");
    let to_tpp = common::sca::complete(
        &sca,
        KARI,
        &format!("CORPORATE:{agreement}"),
        common::sca::tick_all,
        "Approve",
    )
    .await;
    assert_eq!(browser().get(&to_tpp).send().await.unwrap().status(), 200);
    let cb = engine.next_callback().await.unwrap();
    let applied = engine.apply_sca_callback(&cb).unwrap();
    assert_eq!(applied.flow.unwrap().flow, ScaFlow::AisRead);
    assert_eq!(engine.session.context, Some(PsuContext::Corporate));
    assert_eq!(
        engine.session.psu_corporate_id.as_deref(),
        Some(agreement.as_str())
    );
    let before = engine.session.clone();

    // A payment from Kari's own account, approved in PRIVATE context.
    let created = engine
        .send(&req(
            &engine,
            "payments.instant.create",
            &[("allowLogicalDuplicate", "true")],
        ))
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.pretty_body());
    let payment_id = created.json.as_ref().unwrap()["paymentId"]
        .as_str()
        .unwrap()
        .to_string();
    let sca = created.sca_redirect().expect("payment scaRedirect");
    let to_tpp = common::sca::complete(&sca, KARI, "PRIVATE", |_| {}, "Approve").await;
    assert!(to_tpp.contains("context=PRIVATE"), "{to_tpp}");
    assert_eq!(browser().get(&to_tpp).send().await.unwrap().status(), 200);
    let cb = engine.next_callback().await.unwrap();
    assert!(matches!(cb, ScaCallback::Success(_)), "{cb:?}");
    let applied = engine.apply_sca_callback(&cb).unwrap();
    let flow = applied.flow.expect("the payment flow");
    assert_eq!(flow.flow, ScaFlow::Payment);
    assert_eq!(flow.resource_id.as_deref(), Some(payment_id.as_str()));
    assert_eq!(engine.session, before, "the AIS context is unchanged");
    let saved = SessionState::load(&paths.session_file("embedded-sandbox")).unwrap();
    assert_eq!(saved.psu_corporate_id.as_deref(), Some(agreement.as_str()));

    let st = engine.status_after_sca(&flow).await.unwrap();
    assert_eq!(
        st.verdict,
        Verdict::Approved,
        "{}",
        st.exchange.pretty_body()
    );
    assert!(
        st.summary()
            .starts_with(&format!("payment {payment_id} approved: "))
    );

    let accounts = send(&engine, "accounts.list", &[]).await;
    assert_eq!(accounts.status, 200, "{}", accounts.pretty_body());
    engine.shutdown().await;
}
