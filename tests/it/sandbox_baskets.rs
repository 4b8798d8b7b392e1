//! Signing baskets of the embedded sandbox over real HTTP: creation limits and reference
//! rules, the worst-case basket status, the basket SCA that authorises every payment in it,
//! explicit authorisation, deletion and roles. Every response is checked against the Berlin
//! Group schemas by the test sandbox's observer.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use common::payments::{
    CREDITOR_BBAN, DOMESTIC, INGRID, KARI, accounts_of, domestic, first_bban as bban,
};
use common::sandbox::{Reply, TestSandbox, tpp_with_roles};
use common::sca::{assert_bound_to_another_customer, callback_of, sca_login};
use common::{browser, page_text};
use psd2_console::cert::Psd2Role;
use psd2_console::sandbox::{Clock, SandboxConfig, domain::seed};
use psd2_console::xs2a::redirect::ScaCallback;
use serde_json::json;

// ---------------------------------------------------------------------------------------
// Fixtures

/// Tomorrow (real time, so the generated TPP certificate is valid) at 08:00 UTC.
fn tomorrow_morning() -> SystemTime {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    SystemTime::UNIX_EPOCH + Duration::from_secs((now / 86_400 + 1) * 86_400 + 8 * 3600)
}

/// A sandbox whose seeded accounts each have NOK 10 000.00 available.
async fn sandbox() -> TestSandbox {
    let sb = TestSandbox::start_with(SandboxConfig {
        clock: Clock::fixed(tomorrow_morning()),
        ..SandboxConfig::default()
    })
    .await;
    for a in seed::seed().accounts {
        let r = sb
            .send_json(
                "PUT",
                &format!("/v1/sandbox/accounts/{}/balances", a.id),
                &json!({"available": {"currency": "NOK", "amount": "10000.00"}}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    sb
}

/// Creates a payment with explicit authorisation (the TPP will sign it in a basket).
async fn payment(sb: &TestSandbox, debtor: &str, remittance: &str) -> String {
    let r = sb
        .initiate_with(
            DOMESTIC,
            &[("TPP-Explicit-Authorisation-Preferred", "true")],
            &domestic(debtor, "12.00", remittance),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.json["paymentId"].as_str().unwrap().to_string()
}

async fn basket(sb: &TestSandbox, ids: &[String]) -> Reply {
    basket_with(sb, &[], ids).await
}

/// [`basket`] with the request `headers` besides the defaults.
async fn basket_with(sb: &TestSandbox, headers: &[(&str, &str)], ids: &[String]) -> Reply {
    let body = json!({ "paymentIds": ids }).to_string();
    sb.create_basket(headers, &body).await
}

/// One [`payment`] of Kari's per remittance text in `remittances`; their ids.
async fn kari_payments(sb: &TestSandbox, remittances: &[&str]) -> Vec<String> {
    let mut ids = Vec::new();
    for r in remittances {
        ids.push(payment(sb, &bban(KARI), r).await);
    }
    ids
}

/// [`basket`], which must answer 201.
async fn basket_created(sb: &TestSandbox, ids: &[String]) -> Reply {
    let r = basket(sb, ids).await;
    r.assert_status(201);
    r
}

/// A sandbox and one [`payment`] of Kari's in it.
async fn sandbox_with_payment(remittance: &str) -> (TestSandbox, String) {
    let sb = sandbox().await;
    let p = payment(&sb, &bban(KARI), remittance).await;
    (sb, p)
}

async fn payment_status(sb: &TestSandbox, id: &str) -> String {
    let r = sb
        .get_ok(&format!("/v1/payments/{DOMESTIC}/{id}/status"))
        .await;
    r.json["transactionStatus"].as_str().unwrap().to_string()
}

async fn basket_status(sb: &TestSandbox, id: &str) -> String {
    let r = sb.get_ok(&format!("/v1/signing-baskets/{id}/status")).await;
    r.json["transactionStatus"].as_str().unwrap().to_string()
}

/// Logs in and presses `button`; returns the callback of the redirect to the TPP.
async fn sca_decide(sca: &str, number: &str, button: &str) -> ScaCallback {
    callback_of(&common::sca::sca_decide(sca, number, button).await)
}

// ---------------------------------------------------------------------------------------
// Creation

#[tokio::test]
pub(crate) async fn a_basket_answers_201_rcvd_with_sca_redirect_and_links_with_verbs() {
    let (sb, a) = sandbox_with_payment("a").await;
    let b = payment(&sb, &bban(KARI), "b").await;
    let r = basket_created(&sb, &[a.clone(), b.clone()]).await;
    assert_eq!(r.json["transactionStatus"], "RCVD");
    let id = r.json["basketId"].as_str().unwrap();
    let links = &r.json["_links"];
    assert!(
        links["scaRedirect"]["href"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{}/payment-sca/", sb.base))
    );
    assert_eq!(links["scaRedirect"]["verbs"], json!(["GET"]));
    assert_eq!(
        links["self"]["href"],
        format!("/v1/signing-baskets/{id}").as_str()
    );
    assert_eq!(links["self"]["verbs"], json!(["GET", "DELETE"]));
    assert_eq!(links["status"]["verbs"], json!(["GET"]));
    let g = sb.get_ok(&format!("/v1/signing-baskets/{id}")).await;
    assert_eq!(g.json["payments"], json!([a, b]));
    assert_eq!(g.json["transactionStatus"], "RCVD");
}

#[tokio::test]
async fn a_basket_holds_1_to_100_payments() {
    let sb = Arc::new(sandbox().await);
    let r = basket(&sb, &[]).await;
    r.assert_error(400, "FORMAT_ERROR");
    let debtor = bban(KARI);
    let mut set = tokio::task::JoinSet::new();
    for i in 0..101 {
        let (sb, debtor) = (sb.clone(), debtor.clone());
        set.spawn(async move { payment(&sb, &debtor, &format!("p{i}")).await });
    }
    let mut ids = Vec::new();
    while let Some(id) = set.join_next().await {
        ids.push(id.unwrap());
    }
    let r = basket(&sb, &ids).await;
    r.assert_error(400, "FORMAT_ERROR");
    assert!(r.text.contains("100"), "{}", r.text);
    basket_created(&sb, &ids[..100]).await;
    let r = sb.create_basket(&[], r#"{"paymentIds":"x"}"#).await;
    assert_eq!(r.status, 400);
    let r = basket(&sb, &[ids[100].clone(), ids[100].clone()]).await;
    assert_eq!(r.status, 400, "an id listed twice: {}", r.text);
}

#[tokio::test]
async fn bulk_or_periodic_payments_in_a_basket_are_reference_mix_invalid() {
    let (sb, single) = sandbox_with_payment("single").await;
    let bulk = sb
        .send_json(
            "POST",
            &format!("/v1/bulk-payments/{DOMESTIC}"),
            &json!({"debtorAccount": {"bban": bban(KARI)}, "payments": [
                    {"instructedAmount": {"currency": "NOK", "amount": "1.00"},
                     "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "A"}]}),
        )
        .await;
    assert_eq!(bulk.status, 201, "{}", bulk.text);
    let today = chrono::DateTime::<chrono::Utc>::from(sb.now()).date_naive();
    let mut periodic = domestic(&bban(KARI), "5.00", "periodic");
    periodic["startDate"] = json!(today.to_string());
    periodic["frequency"] = json!("Monthly");
    let periodic = sb
        .post_created(&format!("/v1/periodic-payments/{DOMESTIC}"), &periodic)
        .await;
    for other in [&bulk, &periodic] {
        let id = other.json["paymentId"].as_str().unwrap().to_string();
        let r = basket(&sb, &[single.clone(), id]).await;
        r.assert_error(400, "REFERENCE_MIX_INVALID");
    }
}

#[tokio::test]
async fn unknown_payment_ids_are_resource_unknown_and_other_tpps_payments_forbidden() {
    let (sb, mine) = sandbox_with_payment("mine").await;
    let r = basket(&sb, &[mine.clone(), "no-such-payment".into()]).await;
    r.assert_error(400, "RESOURCE_UNKNOWN");
    let other = tpp_with_roles(&[Psd2Role::PspPi]);
    let body = json!({ "paymentIds": [mine] }).to_string();
    let r = sb.create_basket_as(&other, &[], &body).await;
    r.assert_error(403, "RESOURCE_UNKNOWN");
}

#[tokio::test]
async fn a_payment_in_an_open_basket_cannot_join_another_until_that_basket_is_deleted() {
    let (sb, p) = sandbox_with_payment("once").await;
    let first = basket(&sb, std::slice::from_ref(&p)).await;
    assert_eq!(first.status, 201);
    let r = basket(&sb, std::slice::from_ref(&p)).await;
    r.assert_error(409, "REFERENCE_STATUS_INVALID");
    let id = first.json["basketId"].as_str().unwrap();
    let d = sb.delete(&format!("/v1/signing-baskets/{id}")).await;
    assert_eq!(d.status, 204, "{}", d.text);
    let gone = sb.get(&format!("/v1/signing-baskets/{id}/status")).await;
    assert_eq!(gone.status, 404, "a deleted basket is gone: {}", gone.text);
    assert_eq!(
        payment_status(&sb, &p).await,
        "RCVD",
        "payments are untouched"
    );
    basket_created(&sb, &[p]).await;
}

#[tokio::test]
async fn basket_creation_needs_the_psp_pi_role() {
    let (sb, p) = sandbox_with_payment("role").await;
    let ais = tpp_with_roles(&[Psd2Role::PspAi]);
    let r = sb
        .create_basket_as(&ais, &[], &json!({ "paymentIds": [p] }).to_string())
        .await;
    r.assert_error(401, "ROLE_INVALID");
}

// ---------------------------------------------------------------------------------------
// Status and SCA

#[tokio::test]
pub(crate) async fn the_basket_sca_authorises_every_payment_in_it() {
    let sb = sandbox().await;
    let ids = vec![
        payment(&sb, &bban(KARI), "one").await,
        payment(&sb, &accounts_of(KARI)[1].bban, "two").await,
    ];
    let r = basket(&sb, &ids).await;
    let id = r.json["basketId"].as_str().unwrap();
    let sca = r.sca_redirect().unwrap();
    let page = page_text(sca).await;
    assert!(page.contains("2 payments"), "{page}");
    let ScaCallback::Success(ok) = sca_decide(sca, KARI, "Approve").await else {
        panic!("failure redirect");
    };
    assert!(!ok.psu_id.is_empty());
    for p in &ids {
        assert_eq!(payment_status(&sb, p).await, "ACTC");
    }
    assert_eq!(basket_status(&sb, id).await, "ACTC");
    let auth = r.json["_links"]["scaStatus"]["href"].as_str().unwrap();
    let s = sb.get(auth).await;
    assert_eq!(s.json["scaStatus"], "finalised", "{}", s.text);
    // Authorised: it can no longer be deleted.
    let d = sb.delete(&format!("/v1/signing-baskets/{id}")).await;
    d.assert_error(409, "STATUS_INVALID");
    // The batch run executes them; the basket stays ACTC (authorised).
    sb.send("POST", "/v1/sandbox/batch", &[], None).await;
    assert_eq!(payment_status(&sb, &ids[0]).await, "ACSC");
    assert_eq!(basket_status(&sb, id).await, "ACTC");
}

#[tokio::test]
pub(crate) async fn rejecting_the_basket_sca_rejects_its_payments() {
    let sb = sandbox().await;
    let ids = kari_payments(&sb, &["r1", "r2"]).await;
    let r = basket(&sb, &ids).await;
    let ScaCallback::Failure(f) = sca_decide(r.sca_redirect().unwrap(), KARI, "Reject").await
    else {
        panic!("success redirect");
    };
    assert_eq!(f.code, "PAYMENT_FAILED");
    for p in &ids {
        assert_eq!(payment_status(&sb, p).await, "RJCT");
    }
    assert_eq!(
        basket_status(&sb, r.json["basketId"].as_str().unwrap()).await,
        "RJCT"
    );
}

#[tokio::test]
pub(crate) async fn the_basket_status_is_the_worst_case_over_its_payments() {
    let sb = sandbox().await;
    // One payment authorised on its own, one not yet: partially accepted.
    let r = sb
        .initiate_with(DOMESTIC, &[], &domestic(&bban(KARI), "12.00", "own sca"))
        .await;
    let authorised = r.json["paymentId"].as_str().unwrap().to_string();
    sca_decide(r.sca_redirect().unwrap(), KARI, "Approve").await;
    let waiting = payment(&sb, &bban(KARI), "waiting").await;
    let b = basket_created(&sb, &[authorised.clone(), waiting.clone()]).await;
    assert_eq!(b.json["transactionStatus"], "PATC");
    let id = b.json["basketId"].as_str().unwrap();
    assert_eq!(basket_status(&sb, id).await, "PATC");
    // A cancelled (rejected-class) payment makes the whole basket RJCT.
    let d = sb
        .delete(&format!("/v1/payments/{DOMESTIC}/{waiting}"))
        .await;
    assert_eq!(d.status, 204);
    assert_eq!(basket_status(&sb, id).await, "RJCT");
    // Executed or rejected payments cannot go into a basket.
    let r = basket(&sb, &[waiting]).await;
    r.assert_error(409, "REFERENCE_STATUS_INVALID");
}

#[tokio::test]
async fn explicit_basket_authorisation_gives_start_authorisation_then_an_sca_redirect() {
    let (sb, p) = sandbox_with_payment("explicit").await;
    let r = basket_with(
        &sb,
        &[("TPP-Explicit-Authorisation-Preferred", "true")],
        std::slice::from_ref(&p),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(r.sca_redirect().is_none());
    let start = &r.json["_links"]["startAuthorisation"];
    assert_eq!(start["verbs"], json!(["POST"]));
    let a = sb
        .send("POST", start["href"].as_str().unwrap(), &[], None)
        .await;
    assert_eq!(a.status, 201, "{}", a.text);
    assert_eq!(a.json["scaStatus"], "received");
    assert!(a.json["authorisationId"].is_string());
    let sca = a.sca_redirect().unwrap();
    assert!(matches!(
        sca_decide(sca, KARI, "Approve").await,
        ScaCallback::Success(_)
    ));
    assert_eq!(payment_status(&sb, &p).await, "ACTC");
    let again = sb
        .send("POST", start["href"].as_str().unwrap(), &[], None)
        .await;
    assert_eq!(
        again.status, 409,
        "nothing left to authorise: {}",
        again.text
    );
}

#[tokio::test]
async fn the_basket_psu_must_own_every_debtor_account() {
    let sb = sandbox().await;
    let ids = vec![
        payment(&sb, &bban(KARI), "kari").await,
        payment(&sb, &bban(INGRID), "ingrid").await,
    ];
    let r = basket(&sb, &ids).await;
    let sca = r.sca_redirect().unwrap();
    for who in [KARI, INGRID] {
        let resp = sca_login(sca, who).await;
        assert_eq!(resp.status(), 403, "{who}");
    }
    for p in &ids {
        assert_eq!(payment_status(&sb, p).await, "RCVD");
    }
}

#[tokio::test]
async fn baskets_of_another_tpp_are_forbidden_and_unknown_ones_not_found() {
    let (sb, p) = sandbox_with_payment("x").await;
    let r = basket(&sb, &[p]).await;
    let id = r.json["basketId"].as_str().unwrap();
    let other = tpp_with_roles(&[Psd2Role::PspPi]);
    let basket = format!("/v1/signing-baskets/{id}");
    let requests = [
        ("GET", basket.clone()),
        ("GET", format!("{basket}/status")),
        ("DELETE", basket.clone()),
        ("POST", format!("{basket}/authorisations")),
    ];
    sb.assert_forbidden_to(&other, &requests).await;
    let r = sb.get("/v1/signing-baskets/unknown/status").await;
    r.assert_error(404, "RESOURCE_UNKNOWN");
}

#[tokio::test]
async fn a_basket_created_with_a_psu_id_is_approved_by_that_psu_only() {
    let sb = sandbox().await;
    // Ingrid's PSU-ID, created by the single-SCA flow (X-PSU-IDENTITY).
    let r = sb
        .initiate_with(
            DOMESTIC,
            &[("X-PSU-IDENTITY", INGRID)],
            &domestic(&bban(INGRID), "1.00", "register"),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let psu = r.header("psu-id");
    let p = payment(&sb, &bban(KARI), "kari pays").await;
    let b = basket_with(&sb, &[("PSU-ID", &psu)], std::slice::from_ref(&p)).await;
    assert_eq!(b.status, 201, "{}", b.text);
    assert_bound_to_another_customer(b.sca_redirect().unwrap(), KARI).await;
    let r = basket_with(&sb, &[("PSU-ID", "not-a-uuid")], std::slice::from_ref(&p)).await;
    assert_eq!(r.status, 400, "{}", r.text);
}

// ---------------------------------------------------------------------------------------
// Issue 9: headers, corporate context, deletion

#[tokio::test]
async fn a_basket_without_a_required_header_of_the_document_is_format_error_naming_it() {
    let (sb, p) = sandbox_with_payment("headers").await;
    let body = json!({ "paymentIds": [p] }).to_string();
    for header in [
        "x-accept-fix",
        "TPP-Session-ID",
        "PSU-ID",
        "PSU-IP-Address",
        "TPP-Redirect-URI",
    ] {
        let r = sb.create_basket(&[(header, "")], &body).await;
        assert_eq!(r.status, 400, "without {header}: {}", r.text);
        assert_eq!(r.code(), Some("FORMAT_ERROR"));
        assert!(r.text.contains(header), "{header}: {}", r.text);
    }
    let r = sb
        .create_basket(&[("x-accept-fix", ""), ("PSU-ID", "")], &body)
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.text.contains("x-accept-fix") && r.text.contains("PSU-ID"),
        "every missing header is named: {}",
        r.text
    );
    basket_created(&sb, &[p]).await;
}

/// Issue 20, finding 9: basket creation's `x-accept-fix` must carry `amount-as-string` (the
/// document's header table) and only the document's fixes; `foo` is 400 `FORMAT_ERROR`.
#[tokio::test]
async fn a_basket_needs_x_accept_fix_amount_as_string_and_no_unknown_fix() {
    let (sb, p) = sandbox_with_payment("fix").await;
    let body = json!({ "paymentIds": [p] }).to_string();
    for bad in ["foo", "longer-names", "amount-as-string,foo"] {
        let r = sb.create_basket(&[("x-accept-fix", bad)], &body).await;
        r.assert_error(400, "FORMAT_ERROR");
        assert!(r.text.contains("x-accept-fix"), "{bad}: {}", r.text);
    }
    let r = sb
        .create_basket(&[("x-accept-fix", "amount-as-string, longer-names")], &body)
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
}

/// Issue 20, finding 9: `GET /v1/signing-baskets/{basketId}/authorisations` lists the
/// basket's authorisation ids and `PUT .../authorisations/{authorisationId}` answers as a
/// redirect-only ASPSP (Berlin Group `getSigningBasketAuthorisation`,
/// `updateSigningBasketPsuData`; the document is silent).
#[tokio::test]
async fn basket_authorisations_are_listed_and_updating_psu_data_answers_the_redirect_links() {
    let (sb, p) = sandbox_with_payment("basket auths").await;
    let r = basket_created(&sb, std::slice::from_ref(&p)).await;
    let id = r.json["basketId"].as_str().unwrap().to_string();
    let one = r.json["_links"]["scaStatus"]["href"]
        .as_str()
        .unwrap()
        .to_string();
    let auth = one.rsplit('/').next().unwrap().to_string();
    let list = format!("/v1/signing-baskets/{id}/authorisations");
    let l = sb.get_ok(&list).await;
    assert_eq!(l.json, json!({ "authorisationIds": [auth] }));
    let u = sb.send("PUT", &one, &[], Some("{}")).await;
    assert_eq!(u.status, 200, "{}", u.text);
    assert_eq!(u.json["scaStatus"], "received");
    assert_eq!(u.json["_links"]["scaStatus"]["href"], one.as_str());
    assert_eq!(u.json["_links"]["scaStatus"]["verbs"], json!(["GET"]));
    assert!(u.sca_redirect().is_some(), "{}", u.text);
    let data = json!({"scaAuthenticationData": "123456"}).to_string();
    sb.send("PUT", &one, &[], Some(&data))
        .await
        .assert_error(400, "SERVICE_INVALID");
    let other = tpp_with_roles(&[Psd2Role::PspPi]);
    sb.get_as(&other, &list, &[])
        .await
        .assert_error(403, "RESOURCE_UNKNOWN");
    // A deleted basket has no authorisations to list.
    assert_eq!(
        sb.delete(&format!("/v1/signing-baskets/{id}")).await.status,
        204
    );
    sb.get(&list).await.assert_error(404, "RESOURCE_UNKNOWN");
    sb.assert_schema_valid();
}

#[tokio::test]
async fn a_deleted_basket_is_gone_not_canc() {
    let (sb, p) = sandbox_with_payment("deleted").await;
    let b = basket_created(&sb, std::slice::from_ref(&p)).await;
    let id = b.json["basketId"].as_str().unwrap();
    let sca = b.sca_redirect().unwrap().to_string();
    let path = format!("/v1/signing-baskets/{id}");
    let d = sb.delete(&path).await;
    assert_eq!(d.status, 204, "{}", d.text);
    // Its SCA link authorises nothing any more.
    let page = browser().get(&sca).send().await.unwrap();
    assert_ne!(page.status(), 200, "the deleted basket's SCA page");
    for (method, p) in [
        ("GET", path.clone()),
        ("GET", format!("{path}/status")),
        ("POST", format!("{path}/authorisations")),
        ("DELETE", path.clone()),
    ] {
        let r = sb.send(method, &p, &[], None).await;
        assert_eq!(r.status, 404, "{method} {p}: {}", r.text);
        assert_eq!(r.code(), Some("RESOURCE_UNKNOWN"));
        assert!(r.text.contains("deleted"), "{}", r.text);
        assert!(!r.text.contains("CANC"), "{}", r.text);
    }
    assert_eq!(
        payment_status(&sb, &p).await,
        "RCVD",
        "payments are untouched"
    );
}

#[tokio::test]
async fn a_corporate_users_basket_requests_without_psu_corporate_id_get_400() {
    let sb = sandbox().await;
    const FJORDBRIS: &str = "912345602";
    // Register Kari's PSU-ID in CORPORATE context by approving one corporate payment.
    let r = sb
        .initiate_with(DOMESTIC, &[], &domestic(&bban(FJORDBRIS), "3.00", "first"))
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let ScaCallback::Success(ok) = sca_decide(r.sca_redirect().unwrap(), KARI, "Approve").await
    else {
        panic!("failure redirect");
    };
    let corporate = ok.psu_corporate_id.clone().expect("corporate context");
    let p = payment(&sb, &bban(FJORDBRIS), "corporate basket").await;
    let body = json!({ "paymentIds": [p] }).to_string();
    let r = sb
        .create_basket(&[("PSU-ID", ok.psu_id.as_str())], &body)
        .await;
    r.assert_error(400, "FORMAT_ERROR");
    assert!(r.text.contains("PSU-Corporate-ID"), "{}", r.text);
    let both = [
        ("PSU-ID", ok.psu_id.as_str()),
        ("PSU-Corporate-ID", corporate.as_str()),
    ];
    let r = sb.create_basket(&both, &body).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.json["basketId"].as_str().unwrap();
    let status = format!("/v1/signing-baskets/{id}/status");
    let r = sb
        .get_with(&status, &[("PSU-ID", ok.psu_id.as_str())])
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    sb.get_with_ok(&status, &both).await;
}
