//! Payment initiation of the embedded sandbox over real HTTP (signed requests, HTML SCA pages
//! driven by a form-filling browser, redirects not followed): products, body rules, the
//! single-SCA flow, the payment lifecycle with batch runs, insufficient funds, hold,
//! cancellation, explicit authorisation, fee information, roles and concurrency. Every
//! response is checked against the Berlin Group schemas by the test sandbox's observer.

use crate::common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use common::payments::{
    CREDITOR_BBAN, DOMESTIC, INGRID, KARI, accounts_of, domestic, first_bban, kari_initiates,
    kari_payment, kari_pays,
};
use common::sandbox::{Reply, TestSandbox, tpp_with_roles};
use common::sca::{assert_bound_to_another_customer, callback_of, sca_decide, sca_login};
use common::{browser, forms, page_text};
use psd2_console::cert::Psd2Role;
use psd2_console::sandbox::store::{Account, AccountKind};
use psd2_console::sandbox::{Clock, SandboxConfig, domain::seed};
use psd2_console::signing::VerifyPolicy;
use psd2_console::xs2a::redirect::{PsuContext, ScaCallback, ScaSuccess};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Fixtures

const FJORDBRIS: &str = "912345602";

/// Tomorrow (real time, so the generated TPP certificate is valid) at `hour`:00 UTC.
fn tomorrow_at(hour: u64) -> SystemTime {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let day = now / 86_400 + 1;
    SystemTime::UNIX_EPOCH + Duration::from_secs(day * 86_400 + hour * 3600)
}

async fn sandbox_at(t: SystemTime) -> TestSandbox {
    TestSandbox::start_with(SandboxConfig {
        clock: Clock::fixed(t),
        ..SandboxConfig::default()
    })
    .await
}

/// A sandbox at tomorrow 08:00 UTC (next batch run 09:00) whose seeded accounts each have
/// NOK 10 000.00 available (set with the sandbox balance-update operation).
async fn sandbox() -> TestSandbox {
    let sb = sandbox_at(tomorrow_at(8)).await;
    for a in seed::seed().accounts {
        fund(&sb, &a, "10000.00").await;
    }
    sb
}

/// Sets the available balance of `account` (`PUT /v1/sandbox/accounts/{id}/balances`).
async fn fund(sb: &TestSandbox, account: &Account, amount: &str) {
    let r = sb
        .send_json(
            "PUT",
            &format!("/v1/sandbox/accounts/{}/balances", account.id),
            &json!({"available": {"currency": "NOK", "amount": amount}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
}

fn cross_border(debtor: &str, currency: &str, remittance: &str) -> Value {
    json!({
        "debtorAccount": {"bban": debtor, "currency": "NOK"},
        "instructedAmount": {"currency": currency, "amount": "10.00"},
        "creditorAccount": {"iban": "SE8091900000091980562026"},
        "creditorAgent": "DNBASESXXXX",
        "creditorName": "Foo Bar",
        "creditorAddress": {"streetName": "Købmagergade", "buildingNumber": "5",
                            "townName": "Copenhagen", "postCode": "1150", "country": "DK"},
        "remittanceInformationUnstructured": remittance,
    })
}

async fn status_of(sb: &TestSandbox, service: &str, product: &str, id: &str) -> Value {
    let r = sb
        .get_ok(&format!("/v1/{service}/{product}/{id}/status"))
        .await;
    r.json
}

async fn tx_status(sb: &TestSandbox, product: &str, id: &str) -> String {
    status_of(sb, "payments", product, id).await["transactionStatus"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn approve(sca: &str, number: &str) -> ScaCallback {
    let r = sca_decide(sca, number, "Approve").await;
    callback_of(&r)
}

/// [`approve`], which must end in a success redirect to the TPP.
async fn approved(sca: &str, number: &str) -> ScaSuccess {
    match approve(sca, number).await {
        ScaCallback::Success(ok) => ok,
        other => panic!("approval failed: {other:?}"),
    }
}

/// A domestic payment of 250.00 from the corporate customer FJORDBRIS's first account,
/// approved by Kari (who holds its agreement): the payment id and the SCA's success.
async fn corporate_payment_approved_by_kari(sb: &TestSandbox) -> (String, ScaSuccess) {
    let body = domestic(&first_bban(FJORDBRIS), "250.00", "flour");
    let (id, sca) = sb.create_payment(DOMESTIC, &body).await;
    (id, approved(&sca, KARI).await)
}

async fn advance(sb: &TestSandbox, secs: u64) -> Reply {
    sb.post_ok("/v1/sandbox/clock", &json!({ "advanceSeconds": secs }))
        .await
}

const INSTANT: &str = "instant-norwegian-credit-transfers-straks";

// ---------------------------------------------------------------------------------------
// Initiation

#[tokio::test]
pub(crate) async fn initiation_answers_201_rcvd_with_absolute_sca_redirect_self_and_status_links() {
    let sb = sandbox().await;
    let r = kari_initiates(&sb, &[], "13.37", "Invoice 1").await;
    assert_eq!(r.json["transactionStatus"], "RCVD");
    let id = r.json["paymentId"].as_str().unwrap();
    let sca = r.sca_redirect().unwrap();
    assert!(
        sca.starts_with(&format!("{}/payment-sca/", sb.base)),
        "{sca}"
    );
    let self_href = format!("/v1/payments/{DOMESTIC}/{id}");
    assert_eq!(r.json["_links"]["self"]["href"], self_href.as_str());
    assert_eq!(
        r.json["_links"]["status"]["href"],
        format!("{self_href}/status").as_str()
    );
    assert_eq!(
        r.headers.get("location").unwrap().to_str().unwrap(),
        self_href
    );
    assert_eq!(tx_status(&sb, DOMESTIC, id).await, "RCVD");
    let d = sb.get_ok(&self_href).await;
    assert_eq!(d.json["transactionStatus"], "RCVD");
    assert_eq!(d.json["instructedAmount"]["amount"], "13.37");
    assert_eq!(d.json["creditorName"], "Foo Bar");
    assert_eq!(d.json["debtorAccount"]["bban"], first_bban(KARI).as_str());
    assert_eq!(d.json["remittanceInformationUnstructured"], "Invoice 1");
}

#[tokio::test]
async fn every_named_product_type_and_the_instant_alias_is_accepted() {
    let sb = sandbox().await;
    let debtor = first_bban(KARI);
    let cases = [
        (DOMESTIC, domestic(&debtor, "1.00", "p1")),
        (INSTANT, domestic(&debtor, "1.00", "p2")),
        (
            "instant-norwegian-domestic-credit-transfers-straks",
            domestic(&debtor, "1.00", "p3"),
        ),
        (
            "domestic-norway-credit-transfers",
            domestic(&debtor, "1.00", "p4"),
        ),
        (
            "norwegian-cross-border-credit-transfers",
            cross_border(&debtor, "NOK", "p5"),
        ),
        ("sepa-credit-transfers", cross_border(&debtor, "EUR", "p6")),
        (
            "cross-border-credit-transfers",
            cross_border(&debtor, "USD", "p7"),
        ),
    ];
    for (product, body) in cases {
        let r = sb.initiate(product, &body).await;
        assert_eq!(r.status, 201, "{product}: {}", r.text);
        assert_eq!(r.json["transactionStatus"], "RCVD");
    }
    // Own-account transfer (the collections' norwegian-domestic-payment-to-self).
    let own = accounts_of(KARI);
    let mut body = domestic(&own[0].bban, "1.00", "to savings");
    body["creditorAccount"] = json!({"bban": own[1].bban});
    let r = sb
        .initiate("norwegian-domestic-payment-to-self", &body)
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let r = sb
        .initiate(
            "norwegian-domestic-payment-to-self",
            &domestic(&own[0].bban, "1.00", "not own"),
        )
        .await;
    r.assert_error(400, "FORMAT_ERROR");
}

#[tokio::test]
async fn unknown_products_are_404_product_unknown_and_corporate_products_403_product_invalid() {
    let sb = sandbox().await;
    let body = kari_payment("1.00", "x");
    let r = sb.initiate("swedish-giro-transfers", &body).await;
    r.assert_error(404, "PRODUCT_UNKNOWN");
    let r = sb
        .initiate("dnb-corporate-uk-domestic-bacs-transfers", &body)
        .await;
    r.assert_error(403, "PRODUCT_INVALID");
    let r = sb
        .send_json(
            "POST",
            &format!("/v1/bulk-payments/{INSTANT}"),
            &json!({"debtorAccount": {"bban": first_bban(KARI)}, "payments": []}),
        )
        .await;
    r.assert_error(403, "PRODUCT_INVALID");
}

#[tokio::test]
async fn json_number_amount_is_format_error_naming_the_field() {
    let sb = sandbox().await;
    let mut body = kari_payment("13.37", "x");
    body["instructedAmount"]["amount"] = json!(13.37);
    let r = sb.initiate(DOMESTIC, &body).await;
    r.assert_error(400, "FORMAT_ERROR");
    assert_eq!(r.json["tppMessages"][0]["path"], "instructedAmount.amount");
    assert!(r.text.contains("instructedAmount.amount"), "{}", r.text);
    let bulk = json!({
        "debtorAccount": {"bban": first_bban(KARI)},
        "payments": [
            {"instructedAmount": {"currency": "NOK", "amount": "1.00"},
             "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "A"},
            {"instructedAmount": {"currency": "NOK", "amount": 2},
             "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "B"}
        ]
    });
    let r = sb
        .send(
            "POST",
            &format!("/v1/bulk-payments/{DOMESTIC}"),
            &[("x-accept-fix", "amount-as-string")],
            Some(&bulk.to_string()),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(
        r.json["tppMessages"][0]["path"],
        "payments[1].instructedAmount.amount"
    );
}

#[tokio::test]
async fn deprecated_city_is_accepted_with_a_warning_in_the_201() {
    let sb = sandbox().await;
    let mut body = cross_border(&first_bban(KARI), "NOK", "city");
    body["creditorAddress"] = json!({"city": "Copenhagen", "country": "DK"});
    let r = sb
        .initiate("norwegian-cross-border-credit-transfers", &body)
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let m = &r.json["tppMessages"][0];
    assert_eq!(m["category"], "WARNING");
    assert_eq!(m["code"], "WARNING");
    assert!(m["text"].as_str().unwrap().contains("creditorAddress.city"));
    let id = r.json["paymentId"].as_str().unwrap();
    let d = sb
        .get(&format!(
            "/v1/payments/norwegian-cross-border-credit-transfers/{id}"
        ))
        .await;
    assert_eq!(d.json["creditorAddress"]["townName"], "Copenhagen");
    assert!(d.json["creditorAddress"].get("city").is_none());
}

#[tokio::test]
async fn sepa_and_swift_need_structured_creditor_address_and_bic_from_the_enforcement_date() {
    // The sandbox clock (tomorrow) is after the sandbox enforcement date 2026-08-13.
    let sb = sandbox().await;
    let debtor = first_bban(KARI);
    for (product, currency) in [
        ("sepa-credit-transfers", "EUR"),
        ("cross-border-credit-transfers", "USD"),
    ] {
        let mut body = cross_border(&debtor, currency, product);
        body["creditorAddress"] = json!({"streetName": "Main Street", "country": "DK"});
        body.as_object_mut().unwrap().remove("creditorAgent");
        let r = sb.initiate(product, &body).await;
        assert_eq!(r.status, 400, "{product}: {}", r.text);
        assert_eq!(r.code(), Some("FORMAT_ERROR"));
        let text = r.json["tppMessages"][0]["text"].as_str().unwrap();
        assert!(text.contains("creditorAddress.townName"), "{text}");
        assert!(text.contains("creditorAgent"), "{text}");
        assert!(!text.contains("creditorAddress.country"), "{text}");
        // Complete: 201, though the debtor gave no address (it is inferred).
        let r = sb
            .initiate(product, &cross_border(&debtor, currency, product))
            .await;
        assert_eq!(r.status, 201, "{product}: {}", r.text);
        assert!(r.json.get("tppMessages").is_none(), "{}", r.text);
    }
}

#[tokio::test]
async fn before_the_enforcement_date_a_missing_structured_address_only_warns() {
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_785_571_200); // 2026-08-01T08:00Z
    let sb = TestSandbox::start_with(SandboxConfig {
        clock: Clock::fixed(at),
        verify_policy: VerifyPolicy {
            check_validity: false,
            ..VerifyPolicy::default()
        },
        ..SandboxConfig::default()
    })
    .await;
    let mut body = cross_border(&first_bban(KARI), "EUR", "early");
    body.as_object_mut().unwrap().remove("creditorAddress");
    let r = sb.initiate("sepa-credit-transfers", &body).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["tppMessages"][0]["code"], "WARNING");
    assert!(r.text.contains("2026-08-13"), "{}", r.text);
}

#[tokio::test]
async fn a_character_the_bank_rejects_is_format_error_naming_the_field() {
    let sb = sandbox().await;
    let debtor = first_bban(KARI);
    let r = sb
        .initiate(DOMESTIC, &domestic(&debtor, "1.00", "Takk for maten 😀"))
        .await;
    r.assert_error(400, "FORMAT_ERROR");
    assert_eq!(
        r.json["tppMessages"][0]["path"],
        "remittanceInformationUnstructured"
    );
    let mut body = domestic(&debtor, "1.00", "x");
    body["creditorName"] = json!("Ольга");
    let r = sb.initiate(DOMESTIC, &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json["tppMessages"][0]["path"], "creditorName");
    // Norwegian letters are fine.
    let mut body = domestic(&debtor, "1.00", "Blåbærsyltetøy, ÆØÅ");
    body["creditorName"] = json!("Bjørn Ærlig");
    let r = sb.initiate(DOMESTIC, &body).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

/// The two document-wide checks of a payment body keep their order over the whole document,
/// unknown fields included (issue 23: one walk finds both): a numeric `amount` in an unknown
/// field answers before a refused character earlier in the body; a refused character in an
/// unknown field's key or value is named by its path; an unknown field without either is
/// accepted.
#[tokio::test]
async fn document_wide_checks_answer_in_order_over_unknown_fields() {
    let sb = sandbox().await;
    let mut body = kari_payment("13.37", "Takk for maten 😀");
    body["zExtra"] = json!({"list": [{"note": "Ольга"}, {"amount": 5}]});
    let r = sb.initiate(DOMESTIC, &body).await;
    r.assert_error(400, "FORMAT_ERROR");
    assert_eq!(r.json["tppMessages"][0]["path"], "zExtra.list[1].amount");
    assert!(r.text.contains("must be a JSON string"), "{}", r.text);
    let mut body = kari_payment("13.37", "x");
    body["zExtra"] = json!({"ok": "y", "nøkkel😀": "y"});
    let r = sb.initiate(DOMESTIC, &body).await;
    r.assert_error(400, "FORMAT_ERROR");
    assert_eq!(r.json["tppMessages"][0]["path"], "zExtra.nøkkel😀 (name)");
    let mut body = kari_payment("13.37", "x");
    body["zExtra"] = json!({"k": ["ok", "Ольга"]});
    let r = sb.initiate(DOMESTIC, &body).await;
    r.assert_error(400, "FORMAT_ERROR");
    assert_eq!(r.json["tppMessages"][0]["path"], "zExtra.k[1]");
    let mut body = kari_payment("13.37", "x");
    body["zExtra"] = json!({"amount": "7", "n": 3, "a": [1, true, null]});
    let r = sb.initiate(DOMESTIC, &body).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

#[tokio::test]
pub(crate) async fn logical_duplicate_is_rejected_unless_allow_logical_duplicate_is_true() {
    let sb = sandbox().await;
    let body = kari_payment("99.00", "Rent March");
    sb.create_payment(DOMESTIC, &body).await;
    let r = sb.initiate(DOMESTIC, &body).await;
    r.assert_error(400, "PAYMENT_FAILED");
    assert!(r.text.contains("allowLogicalDuplicate"), "{}", r.text);
    sb.post_created(
        &format!("/v1/payments/{DOMESTIC}?allowLogicalDuplicate=true"),
        &body,
    )
    .await;
    kari_initiates(&sb, &[], "99.00", "Rent April").await;
    let r = sb
        .post_json(
            &format!("/v1/payments/{DOMESTIC}?allowLogicalDuplicate=maybe"),
            &body,
        )
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn past_or_instant_future_execution_dates_are_execution_date_invalid() {
    let sb = sandbox().await;
    let mut body = kari_payment("1.00", "late");
    body["requestedExecutionDate"] = json!("2020-01-01");
    let r = sb.initiate(DOMESTIC, &body).await;
    r.assert_error(400, "EXECUTION_DATE_INVALID");
    let tomorrow = (chrono::DateTime::<chrono::Utc>::from(sb.now()).date_naive()
        + chrono::Duration::days(1))
    .to_string();
    body["requestedExecutionDate"] = json!(tomorrow);
    let r = sb.initiate(INSTANT, &body).await;
    assert_eq!(r.status, 400, "instant is executed at once: {}", r.text);
    assert_eq!(r.code(), Some("EXECUTION_DATE_INVALID"));
    let r = sb.initiate(DOMESTIC, &body).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

#[tokio::test]
pub(crate) async fn malformed_bodies_get_berlin_group_errors_never_500() {
    let sb = sandbox().await;
    let debtor = first_bban(KARI);
    let bodies = [
        String::new(),
        "not json".into(),
        "[]".into(),
        json!({"debtorAccount": "x"}).to_string(),
        json!({"debtorAccount": {"bban": "00000000000"}}).to_string(),
        json!({"debtorAccount": {"bban": debtor}}).to_string(),
        json!({"debtorAccount": {"bban": debtor}, "instructedAmount": {"currency": "NOK", "amount": "-5"},
               "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "x"})
        .to_string(),
        json!({"debtorAccount": {"bban": debtor}, "instructedAmount": {"currency": "NOK", "amount": "1.001"},
               "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "x"})
        .to_string(),
        json!({"debtorAccount": {"bban": debtor}, "instructedAmount": {"currency": "NOK", "amount": "1"},
               "creditorAccount": {"bban": "12345678901"}, "creditorName": "x"})
        .to_string(),
        json!({"debtorAccount": {"bban": debtor}, "instructedAmount": {"currency": "EUR", "amount": "1"},
               "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "x"})
        .to_string(),
        json!({"debtorAccount": {"bban": debtor}, "instructedAmount": {"currency": "NOK", "amount": "1"},
               "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "x".repeat(71)})
        .to_string(),
    ];
    for b in &bodies {
        let r = sb
            .send("POST", &format!("/v1/payments/{DOMESTIC}"), &[], Some(b))
            .await;
        assert_eq!(r.status, 400, "{b}: {}", r.text);
        assert!(r.json["tppMessages"][0]["code"].is_string(), "{}", r.text);
    }
    let r = sb
        .initiate_with(
            DOMESTIC,
            &[("TPP-Redirect-URI", "not a url")],
            &domestic(&debtor, "1.00", "x"),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    let r = sb
        .get(&format!("/v1/payments/{DOMESTIC}/nope/status"))
        .await;
    r.assert_error(404, "RESOURCE_UNKNOWN");
}

// ---------------------------------------------------------------------------------------
// PSU identification

#[tokio::test]
pub(crate) async fn x_psu_identity_creates_the_psu_id_sca_gives_and_is_idempotent() {
    let sb = sandbox().await;
    let debtor = first_bban(INGRID);
    let send = |remittance: &'static str| {
        let body = domestic(&debtor, "5.00", remittance).to_string();
        let sb = &sb;
        async move {
            sb.send(
                "POST",
                &format!("/v1/payments/{DOMESTIC}"),
                &[("X-PSU-IDENTITY", INGRID)],
                Some(&body),
            )
            .await
        }
    };
    let first = send("one").await;
    assert_eq!(first.status, 201, "{}", first.text);
    let psu = first.header("psu-id");
    let second = send("two").await;
    assert_eq!(
        second.headers.get("psu-id").unwrap().to_str().unwrap(),
        psu,
        "same PSU-ID on repeat"
    );
    // The single SCA of the payment returns the same psu-id.
    let ok = approved(first.sca_redirect().unwrap(), INGRID).await;
    assert_eq!(ok.psu_id, psu);
    assert_eq!(ok.context, PsuContext::Private);
    // ... which is the one the account-information SCA gives the same customer.
    assert_eq!(consent_psu_id(&sb, INGRID).await, psu);
    // With PSU-ID the payment is bound to that PSU: another customer cannot log in.
    let r = kari_initiates(&sb, &[("PSU-ID", &psu)], "5.00", "bound").await;
    assert_bound_to_another_customer(r.sca_redirect().unwrap(), KARI).await;
}

/// The psu-id of the account-information SCA (consent) of customer `number`.
async fn consent_psu_id(sb: &TestSandbox, number: &str) -> String {
    let r = sb.get("/v1/accounts").await;
    assert_eq!(r.status, 401, "{}", r.text);
    let b = browser();
    let mut url = r.sca_redirect().unwrap().to_string();
    let mut resp = b.get(&url).send().await.unwrap();
    for _ in 0..6 {
        if resp.status() == 302 {
            let ScaCallback::Success(ok) = callback_of(&resp) else {
                panic!("consent SCA failed");
            };
            return ok.psu_id;
        }
        url = resp.url().to_string();
        let html = resp.text().await.unwrap();
        let all = forms(&html, &url);
        let mut f = all
            .into_iter()
            .find(|f| !f.action.contains("cancel") && !f.buttons.is_empty() && f.method == "POST")
            .expect("a form");
        if f.fields.iter().any(|(n, _)| n == "customerNumber") {
            f.set("customerNumber", number);
            resp = f.submit(&b, "Log in").await;
        } else if f
            .unchecked
            .iter()
            .chain(&f.fields)
            .any(|(n, _)| n == "context")
        {
            f.choose("context", "PRIVATE");
            resp = f.submit(&b, "Continue").await;
        } else {
            let boxes: Vec<(String, String)> = f.unchecked.clone();
            for (n, v) in boxes {
                f.check(&n, &v);
            }
            resp = f.submit(&b, "Approve").await;
        }
    }
    panic!("the consent SCA did not end");
}

#[tokio::test]
async fn x_psu_identity_of_a_corporate_or_unknown_customer_is_rejected() {
    let sb = sandbox().await;
    let body = kari_payment("5.00", "corp").to_string();
    for number in [FJORDBRIS, "00000000000"] {
        let r = sb
            .send(
                "POST",
                &format!("/v1/payments/{DOMESTIC}"),
                &[("X-PSU-IDENTITY", number)],
                Some(&body),
            )
            .await;
        r.assert_error(400, "FORMAT_ERROR");
    }
}

// ---------------------------------------------------------------------------------------
// SCA pages

#[tokio::test]
async fn payment_sca_approve_gives_actc_and_the_success_redirect() {
    let sb = sandbox().await;
    let session = [("TPP-Session-ID", "session-42")];
    let r = kari_initiates(&sb, &session, "13.37", "approve me").await;
    let id = r.json["paymentId"].as_str().unwrap().to_string();
    let sca_status_href = r.json["_links"]["scaStatus"]["href"]
        .as_str()
        .unwrap()
        .to_string();
    let ok = approved(r.sca_redirect().unwrap(), KARI).await;
    assert_eq!(ok.tpp_session_id, "session-42");
    assert_eq!(ok.context, PsuContext::Private);
    assert!(ok.psu_corporate_id.is_none());
    let s = status_of(&sb, "payments", DOMESTIC, &id).await;
    assert_eq!(s["transactionStatus"], "ACTC");
    assert_eq!(s["fundsAvailable"], true);
    let a = sb.get(&sca_status_href).await;
    assert_eq!(a.json["scaStatus"], "finalised", "{}", a.text);
    // The link is used up.
    let again = browser()
        .get(r.sca_redirect().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 410);
}

#[tokio::test]
async fn payment_sca_reject_gives_rjct_and_the_failure_redirect_with_payment_failed() {
    let sb = sandbox().await;
    let (id, sca) = kari_pays(&sb, DOMESTIC, "1.00", "no").await;
    let r = sca_decide(&sca, KARI, "Reject").await;
    let ScaCallback::Failure(f) = callback_of(&r) else {
        panic!("success redirect");
    };
    assert_eq!(f.code, "PAYMENT_FAILED");
    assert_eq!(f.status, 400);
    assert!(!f.system.is_empty() && !f.message.is_empty());
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "RJCT");
}

#[tokio::test]
async fn the_approving_psu_must_own_the_debtor_account() {
    let sb = sandbox().await;
    let (id, sca) = kari_pays(&sb, DOMESTIC, "1.00", "mine").await;
    let r = sca_login(&sca, INGRID).await;
    assert_eq!(r.status(), 403);
    let html = r.text().await.unwrap();
    assert!(html.contains("Not your account"), "{html}");
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "RCVD");
    // The owner can still approve with the same link.
    assert!(matches!(approve(&sca, KARI).await, ScaCallback::Success(_)));
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "ACTC");
}

#[tokio::test]
async fn an_agreement_holder_approves_a_corporate_payment_in_corporate_context() {
    let sb = sandbox().await;
    let (_, ok) = corporate_payment_approved_by_kari(&sb).await;
    assert_eq!(ok.context, PsuContext::Corporate);
    assert!(ok.psu_corporate_id.is_some());
}

#[tokio::test]
async fn sca_pages_escape_interpolated_values() {
    let sb = sandbox().await;
    let mut body = kari_payment("1.00", "<script>alert(1)</script>");
    body["creditorName"] = json!("<b>Evil</b> & Co");
    let (_, sca) = sb.create_payment(DOMESTIC, &body).await;
    let html = page_text(&sca).await;
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(html.contains("&lt;script&gt;"));
    assert!(html.contains("&lt;b&gt;Evil&lt;/b&gt; &amp; Co"));
    let unknown = browser()
        .get(format!("{}/payment-sca/nope", sb.base))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
}

#[tokio::test]
async fn explicit_authorisation_gives_start_authorisation_then_an_sca_redirect() {
    let sb = sandbox().await;
    let explicit = [("TPP-Explicit-Authorisation-Preferred", "true")];
    let r = kari_initiates(&sb, &explicit, "3.00", "explicit").await;
    assert!(r.sca_redirect().is_none());
    let start = r.json["_links"]["startAuthorisation"]["href"]
        .as_str()
        .unwrap();
    let a = sb.send("POST", start, &[], None).await;
    assert_eq!(a.status, 201, "{}", a.text);
    assert_eq!(a.json["scaStatus"], "received");
    let auth_id = a.json["authorisationId"].as_str().unwrap();
    let status_href = format!("{start}/{auth_id}");
    assert_eq!(a.json["_links"]["scaStatus"]["href"], status_href.as_str());
    let sca = a.sca_redirect().unwrap();
    assert!(sca.starts_with("http://"), "{sca}");
    let s = sb.get(&status_href).await;
    assert_eq!(s.json["scaStatus"], "received");
    assert!(matches!(approve(sca, KARI).await, ScaCallback::Success(_)));
    let s = sb.get(&status_href).await;
    assert_eq!(s.json["scaStatus"], "finalised");
    // No second authorisation of an authorised payment.
    let again = sb.send("POST", start, &[], None).await;
    again.assert_error(409, "STATUS_INVALID");
}

/// Issue 20, finding 9: `GET .../{paymentId}/authorisations` lists the authorisation ids
/// (Berlin Group `authorisations`), and `PUT .../authorisations/{authorisationId}` answers
/// as a redirect-only ASPSP: an empty body gives the links, PSU data is refused (the
/// document is silent on both; the Berlin Group file defines them, so they are no longer 405).
#[tokio::test]
async fn payment_authorisations_are_listed_and_updating_psu_data_answers_the_redirect_links() {
    let sb = sandbox().await;
    let r = kari_initiates(&sb, &[], "4.00", "list auths").await;
    let id = r.json["paymentId"].as_str().unwrap().to_string();
    let implicit = r.json["_links"]["scaStatus"]["href"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let list = format!("/v1/payments/{DOMESTIC}/{id}/authorisations");
    let second = sb.send("POST", &list, &[], None).await;
    assert_eq!(second.status, 201, "{}", second.text);
    let explicit = second.json["authorisationId"].as_str().unwrap().to_string();
    let l = sb.get_ok(&list).await;
    assert_eq!(l.json, json!({"authorisationIds": [implicit, explicit]}));

    // PUT with an empty body or `{}`: the current scaStatus and the links to go on with.
    let one = format!("{list}/{explicit}");
    for body in [None, Some("{}")] {
        let u = sb.send("PUT", &one, &[], body).await;
        assert_eq!(u.status, 200, "{}", u.text);
        assert_eq!(u.json["scaStatus"], "received");
        assert_eq!(u.json["_links"]["scaStatus"]["href"], one.as_str());
        assert!(u.sca_redirect().is_some(), "{}", u.text);
    }
    // PSU data through the TPP: refused, the PSU authenticates on the SCA page.
    let creds = json!({"psuData": {"password": "hunter2"}}).to_string();
    let u = sb.send("PUT", &one, &[], Some(&creds)).await;
    u.assert_error(400, "SERVICE_INVALID");
    assert!(u.text.contains("redirect"), "{}", u.text);
    assert!(!u.text.contains("hunter2"), "{}", u.text);
    sb.send("PUT", &one, &[], Some("[1]"))
        .await
        .assert_error(400, "FORMAT_ERROR");
    // An authorisation of another payment, another TPP's payment.
    let (other, _) = kari_pays(&sb, DOMESTIC, "4.01", "other").await;
    sb.send(
        "PUT",
        &format!("/v1/payments/{DOMESTIC}/{other}/authorisations/{explicit}"),
        &[],
        None,
    )
    .await
    .assert_error(404, "RESOURCE_UNKNOWN");
    let b = tpp_with_roles(&[Psd2Role::PspPi]);
    let r = sb.get_as(&b, &list, &[]).await;
    r.assert_error(403, "RESOURCE_UNKNOWN");
    // Once approved: finalised, no scaRedirect any more.
    let sca = r_sca(&sb, &one).await;
    assert!(matches!(approve(&sca, KARI).await, ScaCallback::Success(_)));
    let u = sb.send("PUT", &one, &[], None).await;
    assert_eq!(u.status, 200, "{}", u.text);
    assert_eq!(u.json["scaStatus"], "finalised");
    assert!(u.sca_redirect().is_none(), "{}", u.text);
    sb.assert_schema_valid();
}

/// The `scaRedirect` of authorisation `href` (from `PUT` with an empty body).
async fn r_sca(sb: &TestSandbox, href: &str) -> String {
    let u = sb.send("PUT", href, &[], None).await;
    u.sca_redirect().unwrap().to_string()
}

/// Issue 20, finding 9: `x-accept-fix` carries only the interface document's fixes
/// (Versioning: comma-separated); `foo` is 400 `FORMAT_ERROR` naming it.
#[tokio::test]
async fn x_accept_fix_takes_only_the_documents_values() {
    let sb = sandbox().await;
    for ok in ["amount-as-string", "amount-as-string, longer-names"] {
        let body = kari_payment("6.00", ok);
        let r = sb
            .initiate_with(DOMESTIC, &[("x-accept-fix", ok)], &body)
            .await;
        assert_eq!(r.status, 201, "{ok}: {}", r.text);
    }
    let body = kari_payment("6.00", "fix");
    let r = sb
        .initiate_with(DOMESTIC, &[("x-accept-fix", "foo")], &body)
        .await;
    r.assert_error(400, "FORMAT_ERROR");
    assert!(r.text.contains("foo"), "{}", r.text);
}

/// A payment initiation with several header faults is answered for the first in the order
/// of the checks (TPP-Session-ID, PSU-IP-Address, TPP-Explicit-Authorisation-Preferred,
/// x-accept-fix, then PSU-ID with X-PSU-IDENTITY), as when each header was looked up by
/// itself (issue 23: the headers are now found in one pass and checked as they are read),
/// names in any case.
#[tokio::test]
async fn header_faults_answer_in_the_order_of_the_checks() {
    let sb = sandbox().await;
    let long = "s".repeat(201);
    let body = kari_payment("6.10", "order");
    let mut faults: Vec<(&str, &str, &str)> = vec![
        (
            "TPP-SESSION-ID",
            long.as_str(),
            "TPP-Session-ID is longer than",
        ),
        (
            "PSU-IP-Address",
            " ",
            "the PSU-IP-Address header is missing",
        ),
        (
            "TPP-Explicit-Authorisation-Preferred",
            "maybe",
            "is neither true nor false",
        ),
        ("x-accept-fix", "foo", "x-accept-fix value"),
        (
            "X-PSU-IDENTITY",
            "12345678901",
            "send either PSU-ID or X-PSU-IDENTITY",
        ),
        ("PSU-ID", "5b0c6de7-6e5a-4a0c-9a4e-9d2f4a0f8a11", ""),
    ];
    while faults.len() > 1 {
        let headers: Vec<(&str, &str)> = faults.iter().map(|(n, v, _)| (*n, *v)).collect();
        let r = sb.initiate_with(DOMESTIC, &headers, &body).await;
        r.assert_error(400, "FORMAT_ERROR");
        assert!(r.text.contains(faults[0].2), "{}: {}", faults[0].0, r.text);
        faults.remove(0);
    }
    // PSU-ID alone (another TPP's, or made up): 401, as before.
    let r = sb
        .initiate_with(DOMESTIC, &[("PSU-ID", faults[0].1)], &body)
        .await;
    r.assert_error(401, "CONSENT_INVALID");
}

/// The payment maximum (docs/sandbox.md): NOK 999,999,999.99; one øre more is 400
/// `FORMAT_ERROR` naming the amount and the maximum.
#[tokio::test]
async fn the_payment_maximum_is_999_999_999_99() {
    let sb = sandbox().await;
    kari_initiates(&sb, &[], "999999999.99", "max").await;
    let r = sb
        .initiate(DOMESTIC, &kari_payment("1000000000.00", "max+1"))
        .await;
    r.assert_error(400, "FORMAT_ERROR");
    assert!(r.text.contains("999999999.99"), "{}", r.text);
}

/// Issue 20, finding 7: TPP B sending TPP A's PSU-ID at payment initiation is refused as
/// `/v1/accounts` refuses it (401 `CONSENT_INVALID`); A's own PSU-ID still binds A's payment.
#[tokio::test]
async fn another_tpps_psu_id_is_refused_at_payment_initiation_as_at_accounts() {
    let sb = sandbox().await;
    let (_, sca) = kari_pays(&sb, DOMESTIC, "7.00", "a's").await;
    let a_psu = approved(&sca, KARI).await.psu_id;
    let b = tpp_with_roles(&[Psd2Role::PspPi, Psd2Role::PspAi]);
    let psu = [("PSU-ID", a_psu.as_str())];
    let body = kari_payment("8.00", "b's").to_string();
    let path = format!("/v1/payments/{DOMESTIC}");
    let r = sb.send_as(&b, "POST", &path, &psu, Some(&body)).await;
    r.assert_error(401, "CONSENT_INVALID");
    assert!(r.json.get("paymentId").is_none(), "{}", r.text);
    let accounts = sb.get_as(&b, "/v1/accounts", &psu).await;
    assert_eq!(accounts.status, 401, "{}", accounts.text);
    assert_eq!(accounts.code(), r.code(), "the same code as /v1/accounts");
    // A made-up PSU-ID is refused the same way (no oracle for A's PSU-IDs).
    let made_up = uuid::Uuid::new_v4().to_string();
    let r = sb
        .send_as(
            &b,
            "POST",
            &path,
            &[("PSU-ID", made_up.as_str())],
            Some(&body),
        )
        .await;
    r.assert_error(401, "CONSENT_INVALID");
    // A's own PSU-ID binds A's payment.
    let r = sb.send("POST", &path, &psu, Some(&body)).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

// ---------------------------------------------------------------------------------------
// Lifecycle

#[tokio::test]
async fn instant_payments_settle_at_once_on_approval() {
    let sb = sandbox().await;
    let (id, sca) = kari_pays(&sb, INSTANT, "20.00", "straks").await;
    assert!(matches!(approve(&sca, KARI).await, ScaCallback::Success(_)));
    assert_eq!(tx_status(&sb, INSTANT, &id).await, "ACSC");
}

#[tokio::test]
async fn a_batch_run_settles_authorised_payments_once_the_clock_passes_its_time() {
    let sb = sandbox().await; // 08:00, next run 09:00
    let clock = sb.get("/v1/sandbox/clock").await;
    assert!(
        clock.json["nextBatchRun"]
            .as_str()
            .unwrap()
            .ends_with("T09:00:00Z"),
        "{}",
        clock.text
    );
    let (id, sca) = kari_pays(&sb, DOMESTIC, "10.00", "batch").await;
    approve(&sca, KARI).await;
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "ACTC");
    advance(&sb, 59 * 60).await; // 08:59
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "ACTC");
    let r = advance(&sb, 2 * 60).await; // 09:01
    assert_eq!(r.json["batch"]["settled"], 1, "{}", r.text);
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "ACSC");
}

#[tokio::test]
async fn run_batch_now_settles_every_authorised_payment() {
    let sb = sandbox().await;
    let (id, sca) = kari_pays(&sb, DOMESTIC, "10.00", "now").await;
    let (waiting, _) = kari_pays(&sb, DOMESTIC, "11.00", "rcvd").await;
    approve(&sca, KARI).await;
    let r = sb.send("POST", "/v1/sandbox/batch", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["payments"][0]["paymentId"], id.as_str());
    assert_eq!(r.json["payments"][0]["transactionStatus"], "ACSC");
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "ACSC");
    assert_eq!(tx_status(&sb, DOMESTIC, &waiting).await, "RCVD");
}

#[tokio::test]
async fn insufficient_funds_at_the_batch_run_give_accp_with_funds_available_false() {
    let sb = sandbox().await;
    let (id, sca) = kari_pays(&sb, DOMESTIC, "999999999.99", "too much").await;
    approve(&sca, KARI).await;
    let s = status_of(&sb, "payments", DOMESTIC, &id).await;
    assert_eq!(s["transactionStatus"], "ACTC");
    assert_eq!(s["fundsAvailable"], false, "the funds check shows it early");
    sb.send("POST", "/v1/sandbox/batch", &[], None).await;
    let s = status_of(&sb, "payments", DOMESTIC, &id).await;
    assert_eq!(s["transactionStatus"], "ACCP");
    assert_eq!(s["fundsAvailable"], false);
}

#[tokio::test]
async fn settled_payments_reduce_the_available_balance() {
    let sb = sandbox().await;
    let account = accounts_of(KARI)[0].clone();
    fund(&sb, &account, "500.00").await;
    let (a, sca_a) = sb
        .create_payment(DOMESTIC, &domestic(&account.bban, "400.00", "most of it"))
        .await;
    let (b, sca_b) = sb
        .create_payment(DOMESTIC, &domestic(&account.bban, "200.00", "the rest"))
        .await;
    approve(&sca_a, KARI).await;
    approve(&sca_b, KARI).await;
    let s = status_of(&sb, "payments", DOMESTIC, &b).await;
    assert_eq!(
        s["fundsAvailable"], true,
        "before the run 500.00 covers 200.00"
    );
    sb.send("POST", "/v1/sandbox/batch", &[], None).await;
    assert_eq!(tx_status(&sb, DOMESTIC, &a).await, "ACSC");
    let s = status_of(&sb, "payments", DOMESTIC, &b).await;
    assert_eq!(s["transactionStatus"], "ACCP", "only 100.00 left");
    assert_eq!(s["fundsAvailable"], false);
}

#[tokio::test]
async fn instant_payment_without_funds_is_accp_and_the_sca_redirect_reports_payment_failed() {
    let sb = sandbox().await;
    let account = accounts_of(INGRID)[0].clone();
    fund(&sb, &account, "100.00").await;
    let (id, sca) = sb
        .create_payment(INSTANT, &domestic(&account.bban, "150.00", "straks"))
        .await;
    let r = sca_decide(&sca, INGRID, "Approve").await;
    let ScaCallback::Failure(f) = callback_of(&r) else {
        panic!("success redirect");
    };
    assert_eq!(f.code, "PAYMENT_FAILED");
    assert!(f.message.to_lowercase().contains("funds"), "{}", f.message);
    let s = status_of(&sb, "payments", INSTANT, &id).await;
    assert_eq!(s["transactionStatus"], "ACCP");
    assert_eq!(s["fundsAvailable"], false);
}

#[tokio::test]
async fn a_settled_payment_is_booked_on_the_debtor_and_the_sandbox_creditor_account() {
    let sb = sandbox().await;
    let own = accounts_of(INGRID);
    fund(&sb, &own[0], "1000.00").await;
    fund(&sb, &own[1], "0.00").await;
    let mut body = domestic(&own[0].bban, "150.00", "to my savings");
    body["creditorAccount"] = json!({"bban": own[1].bban});
    let (_, sca) = sb.create_payment(INSTANT, &body).await;
    approve(&sca, INGRID).await;
    // Read the accounts through the account-information interface.
    let psu = consent_psu_id(&sb, INGRID).await;
    let get = |path: String| {
        let (sb, psu) = (&sb, psu.clone());
        async move {
            let r = sb.get_with(&path, &[("PSU-ID", &psu)]).await;
            assert_eq!(r.status, 200, "{path}: {}", r.text);
            r.json
        }
    };
    let booked = |json: &Value| {
        json["transactions"]["booked"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let debits = booked(
        &get(format!(
            "/v1/accounts/{}/transactions?bookingStatus=booked",
            own[0].id
        ))
        .await,
    );
    let debit = debits
        .iter()
        .find(|t| t["remittanceInformationUnstructured"] == "to my savings")
        .expect("the debit is booked");
    assert_eq!(debit["transactionAmount"]["amount"], "-150.00");
    let credits = booked(
        &get(format!(
            "/v1/accounts/{}/transactions?bookingStatus=booked",
            own[1].id
        ))
        .await,
    );
    assert!(
        credits
            .iter()
            .any(|t| t["transactionAmount"]["amount"] == "150.00"),
        "{credits:?}"
    );
    let balances = get(format!("/v1/accounts/{}/balances", own[0].id)).await;
    let available = common::balance_of(&balances, "interimAvailable");
    assert_eq!(available["balanceAmount"]["amount"], "850.00");
}

#[tokio::test]
async fn a_future_dated_payment_waits_for_the_first_run_on_its_execution_date() {
    let sb = sandbox().await;
    let tomorrow = (chrono::DateTime::<chrono::Utc>::from(sb.now()).date_naive()
        + chrono::Duration::days(1))
    .to_string();
    let mut body = kari_payment("10.00", "future");
    body["requestedExecutionDate"] = json!(tomorrow);
    let (id, sca) = sb.create_payment(DOMESTIC, &body).await;
    approve(&sca, KARI).await;
    advance(&sb, 12 * 3600).await; // 20:00, all of today's runs passed
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "ACTC");
    advance(&sb, 10 * 3600 + 60).await; // 06:01 on the execution date
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "ACSC");
}

#[tokio::test]
async fn periodic_monthly_variable_with_duplicate_months_is_rejected() {
    let sb = sandbox().await;
    let today = chrono::DateTime::<chrono::Utc>::from(sb.now()).date_naive();
    let mut body = kari_payment("500.00", "Kindergarten");
    body["startDate"] = json!(today.to_string());
    body["frequency"] = json!("MonthlyVariable");
    body["monthsOfExecution"] = json!(["1", "4", "01"]);
    let path = format!("/v1/periodic-payments/{DOMESTIC}");
    let r = sb.post_json(&path, &body).await;
    r.assert_error(400, "FORMAT_ERROR");
    assert_eq!(r.json["tppMessages"][0]["path"], "monthsOfExecution[2]");
    body["monthsOfExecution"] = json!(["1", "4", "10"]);
    let r = sb.post_created(&path, &body).await;
    let id = r.json["paymentId"].as_str().unwrap();
    let d = sb.get_ok(&format!("{path}/{id}")).await;
    assert_eq!(d.json["frequency"], "MonthlyVariable");
    assert_eq!(d.json["monthsOfExecution"], json!(["1", "4", "10"]));
    assert_eq!(d.json["startDate"], today.to_string().as_str());
    body["frequency"] = json!("Monthly");
    let r = sb.post_json(&path, &body).await;
    assert_eq!(
        r.status, 400,
        "months only with MonthlyVariable: {}",
        r.text
    );
}

#[tokio::test]
async fn periodic_payments_are_not_taken_by_the_batch_runs() {
    let sb = sandbox().await;
    let today = chrono::DateTime::<chrono::Utc>::from(sb.now()).date_naive();
    let mut body = kari_payment("50.00", "Savings");
    body["startDate"] = json!(today.to_string());
    body["frequency"] = json!("Monthly");
    let path = format!("/v1/periodic-payments/{DOMESTIC}");
    let r = sb.post_created(&path, &body).await;
    let id = r.json["paymentId"].as_str().unwrap();
    approve(r.sca_redirect().unwrap(), KARI).await;
    sb.send("POST", "/v1/sandbox/batch", &[], None).await;
    advance(&sb, 24 * 3600).await;
    let s = status_of(&sb, "periodic-payments", DOMESTIC, id).await;
    assert_eq!(
        s["transactionStatus"], "ACTC",
        "the standing order stays active"
    );
}

#[tokio::test]
async fn a_bulk_payment_is_one_resource_settled_as_a_whole() {
    let sb = sandbox().await;
    let bulk = json!({
        "batchBookingPreferred": true,
        "debtorAccount": {"bban": first_bban(FJORDBRIS)},
        "payments": [
            {"instructedAmount": {"currency": "NOK", "amount": "1000.00"},
             "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "Salary A",
             "remittanceInformationUnstructured": "Lønn"},
            {"instructedAmount": {"currency": "NOK", "amount": "2000.50"},
             "creditorAccount": {"bban": "70011968048"}, "creditorName": "Salary B"}
        ]
    });
    let path = format!("/v1/bulk-payments/{DOMESTIC}");
    let r = sb.post_created(&path, &bulk).await;
    let id = r.json["paymentId"].as_str().unwrap();
    let d = sb.get_ok(&format!("{path}/{id}")).await;
    assert_eq!(d.json["payments"].as_array().unwrap().len(), 2);
    assert_eq!(
        d.json["payments"][1]["instructedAmount"]["amount"],
        "2000.50"
    );
    approve(r.sca_redirect().unwrap(), KARI).await;
    sb.send("POST", "/v1/sandbox/batch", &[], None).await;
    let s = status_of(&sb, "bulk-payments", DOMESTIC, id).await;
    assert_eq!(s["transactionStatus"], "ACSC");
    let mut bad = bulk.clone();
    bad["payments"][0]["debtorAccount"] = json!({"bban": first_bban(KARI)});
    let r = sb.post_json(&path, &bad).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json["tppMessages"][0]["path"],
        "payments[0].debtorAccount"
    );
}

#[tokio::test]
async fn delete_cancels_a_received_payment_of_every_product_and_service() {
    let sb = sandbox().await;
    let debtor = first_bban(KARI);
    let today = chrono::DateTime::<chrono::Utc>::from(sb.now()).date_naive();
    let mut periodic = domestic(&debtor, "7.00", "periodic");
    periodic["startDate"] = json!(today.to_string());
    periodic["frequency"] = json!("Weekly");
    let bulk = json!({"debtorAccount": {"bban": debtor}, "payments": [
        {"instructedAmount": {"currency": "NOK", "amount": "1.00"},
         "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "A"}]});
    let cases = [
        ("payments", DOMESTIC, domestic(&debtor, "1.00", "a")),
        ("payments", INSTANT, domestic(&debtor, "1.00", "b")),
        (
            "payments",
            "domestic-norway-credit-transfers",
            domestic(&debtor, "1.00", "c"),
        ),
        (
            "payments",
            "sepa-credit-transfers",
            cross_border(&debtor, "EUR", "d"),
        ),
        (
            "payments",
            "norwegian-cross-border-credit-transfers",
            cross_border(&debtor, "NOK", "e"),
        ),
        (
            "payments",
            "cross-border-credit-transfers",
            cross_border(&debtor, "USD", "f"),
        ),
        ("periodic-payments", DOMESTIC, periodic),
        ("bulk-payments", DOMESTIC, bulk),
    ];
    for (service, product, body) in cases {
        let path = format!("/v1/{service}/{product}");
        let r = sb.post_json(&path, &body).await;
        assert_eq!(r.status, 201, "{path}: {}", r.text);
        let id = r.json["paymentId"].as_str().unwrap();
        let d = sb.delete(&format!("{path}/{id}")).await;
        assert_eq!(d.status, 204, "{path}: {}", d.text);
        assert_eq!(
            status_of(&sb, service, product, id).await["transactionStatus"],
            "CANC"
        );
        let again = sb.delete(&format!("{path}/{id}")).await;
        assert_eq!(again.status, 409, "{}", again.text);
    }
}

#[tokio::test]
async fn deleting_a_payment_on_hold_pdng_gives_an_explanatory_error() {
    let sb = sandbox().await;
    let (id, sca) = kari_pays(&sb, DOMESTIC, "10.00", "hold").await;
    approve(&sca, KARI).await;
    let h = sb
        .send(
            "POST",
            &format!("/v1/sandbox/payments/{id}/hold"),
            &[],
            None,
        )
        .await;
    assert_eq!(h.status, 200, "{}", h.text);
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "PDNG");
    let d = sb.delete(&format!("/v1/payments/{DOMESTIC}/{id}")).await;
    d.assert_error(409, "STATUS_INVALID");
    let text = d.json["tppMessages"][0]["text"].as_str().unwrap();
    assert!(text.contains("PDNG") && text.contains("on hold"), "{text}");
    // Batch runs skip it while on hold; after the release the next run takes it.
    sb.send("POST", "/v1/sandbox/batch", &[], None).await;
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "PDNG");
    let rel = sb
        .send(
            "POST",
            &format!("/v1/sandbox/payments/{id}/release"),
            &[],
            None,
        )
        .await;
    assert_eq!(rel.json["transactionStatus"], "ACTC", "{}", rel.text);
    sb.send("POST", "/v1/sandbox/batch", &[], None).await;
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "ACSC");
}

#[tokio::test]
async fn deleting_a_settled_payment_gives_an_explanatory_error() {
    let sb = sandbox().await;
    let (id, sca) = kari_pays(&sb, INSTANT, "10.00", "done").await;
    approve(&sca, KARI).await;
    let d = sb.delete(&format!("/v1/payments/{INSTANT}/{id}")).await;
    assert_eq!(d.status, 409, "{}", d.text);
    assert!(d.text.contains("already executed"), "{}", d.text);
    // An authorised, not yet executed payment can still be cancelled.
    let (id, sca) = kari_pays(&sb, DOMESTIC, "10.00", "undo").await;
    approve(&sca, KARI).await;
    let d = sb.delete(&format!("/v1/payments/{DOMESTIC}/{id}")).await;
    assert_eq!(d.status, 204, "{}", d.text);
}

#[tokio::test]
async fn domestic_norway_details_and_status_are_hidden_until_approved() {
    let sb = sandbox().await;
    let product = "domestic-norway-credit-transfers";
    let (id, sca) = sb
        .create_payment(product, &kari_payment("10.00", "hidden"))
        .await;
    for path in [
        format!("/v1/payments/{product}/{id}"),
        format!("/v1/payments/{product}/{id}/status"),
    ] {
        let r = sb.get(&path).await;
        assert_eq!(r.status, 400, "{path}: {}", r.text);
        assert!(r.text.contains("not approved yet"), "{}", r.text);
    }
    approve(&sca, KARI).await;
    assert_eq!(tx_status(&sb, product, &id).await, "ACTC");
    sb.get_ok(&format!("/v1/payments/{product}/{id}")).await;
}

// ---------------------------------------------------------------------------------------
// Fee information, roles, ownership, concurrency

#[tokio::test]
async fn fee_information_of_instant_payments_has_string_amounts() {
    let sb = sandbox().await;
    for product in [
        INSTANT,
        "instant-norwegian-domestic-credit-transfers-straks",
    ] {
        let r = sb
            .get_ok(&format!("/v1/payments/{product}/fee-information"))
            .await;
        assert_eq!(r.json["paymentProduct"], INSTANT);
        let fees = r.json["fees"].as_array().unwrap();
        assert!(!fees.is_empty());
        assert!(
            fees.iter()
                .all(|f| f["transactionFee"]["amount"].is_string())
        );
        assert!(r.json["maximumAmount"]["amount"].is_string());
    }
}

#[tokio::test]
async fn payment_initiation_needs_the_psp_pi_role() {
    let sb = sandbox().await;
    let ais_only = tpp_with_roles(&[Psd2Role::PspAi]);
    let r = sb
        .send_as(
            &ais_only,
            "POST",
            &format!("/v1/payments/{DOMESTIC}"),
            &[],
            Some(&kari_payment("1.00", "role").to_string()),
        )
        .await;
    r.assert_error(401, "ROLE_INVALID");
    assert!(r.text.contains("PSP_PI"));
    let r = sb
        .get_as(
            &ais_only,
            &format!("/v1/payments/{INSTANT}/fee-information"),
            &[],
        )
        .await;
    assert_eq!(r.status, 401);
    let pisp_only = tpp_with_roles(&[Psd2Role::PspPi]);
    let r = sb
        .send_as(
            &pisp_only,
            "POST",
            &format!("/v1/payments/{DOMESTIC}"),
            &[],
            Some(&kari_payment("1.00", "pisp").to_string()),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
}

#[tokio::test]
async fn payments_of_another_tpp_are_forbidden() {
    let sb = sandbox().await;
    let (id, _) = kari_pays(&sb, DOMESTIC, "1.00", "mine").await;
    let other = tpp_with_roles(&[Psd2Role::PspPi, Psd2Role::PspAi]);
    let answers = sb
        .assert_forbidden_to(
            &other,
            &[
                ("GET", format!("/v1/payments/{DOMESTIC}/{id}")),
                ("GET", format!("/v1/payments/{DOMESTIC}/{id}/status")),
                ("DELETE", format!("/v1/payments/{DOMESTIC}/{id}")),
                ("POST", format!("/v1/sandbox/payments/{id}/hold")),
            ],
        )
        .await;
    for r in answers {
        assert_eq!(r.code(), Some("RESOURCE_UNKNOWN"));
    }
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "RCVD");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_initiations_create_exactly_64_distinct_payments() {
    let sb = Arc::new(sandbox().await);
    let debtor = first_bban(KARI);
    let mut set = tokio::task::JoinSet::new();
    for i in 0..64 {
        let sb = sb.clone();
        let body = domestic(&debtor, "1.00", &format!("concurrent {i}")).to_string();
        set.spawn(async move {
            sb.send(
                "POST",
                &format!("/v1/payments/{DOMESTIC}"),
                &[],
                Some(&body),
            )
            .await
        });
    }
    let mut ids = HashSet::new();
    while let Some(r) = set.join_next().await {
        let r = r.unwrap();
        assert_eq!(r.status, 201, "{}", r.text);
        ids.insert(r.json["paymentId"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 64);
    for id in &ids {
        assert_eq!(tx_status(&sb, DOMESTIC, id).await, "RCVD");
    }
}

// ---------------------------------------------------------------------------------------
// PSU identity across modules, seeded balances, expired payment SCA

/// Completes a registration SCA (`GET /v1/users`) at `href` as `number`, in PRIVATE context
/// when the PSU is asked for one; returns the redirect's parameters.
async fn complete_registration(href: &str, number: &str) -> ScaCallback {
    let b = browser();
    let mut resp = b.get(href).send().await.unwrap();
    for _ in 0..4 {
        if resp.status() == 302 {
            return callback_of(&resp);
        }
        assert_eq!(resp.status(), 200, "registration SCA page");
        let url = resp.url().to_string();
        let html = resp.text().await.unwrap();
        let all = forms(&html, &url);
        if let Some(mut f) = all
            .iter()
            .find(|f| f.fields.iter().any(|(n, _)| n == "customerNumber"))
            .cloned()
        {
            f.set("customerNumber", number);
            resp = f.submit(&b, "Log in").await;
        } else if let Some(mut f) = all
            .iter()
            .find(|f| {
                f.fields
                    .iter()
                    .chain(&f.unchecked)
                    .any(|(n, _)| n == "context")
            })
            .cloned()
        {
            f.choose("context", "PRIVATE");
            resp = f.submit(&b, "Continue").await;
        } else {
            panic!("unexpected registration step at {url}: {html}");
        }
    }
    panic!("the registration SCA did not end");
}

/// Authentication 12 and 15: a PISP-only TPP registers the PSU with `GET /v1/users`, and the
/// PSU-ID it persists binds its payments and signing baskets to that customer: the payment
/// SCA refuses another customer and the customer's own approval returns the same psu-id.
#[tokio::test]
async fn a_psu_id_registered_with_get_users_binds_the_payments_of_a_pisp_only_tpp() {
    let sb = sandbox().await;
    let pisp = tpp_with_roles(&[Psd2Role::PspPi]);
    let r = sb
        .get_as(&pisp, "/v1/users", &[("TPP-Session-ID", "reg")])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let ScaCallback::Success(reg) = complete_registration(r.sca_redirect().unwrap(), KARI).await
    else {
        panic!("registration failed");
    };
    let psu = reg.psu_id.clone();
    let with_psu = [("PSU-ID", psu.as_str())];
    let r = sb
        .send_as(
            &pisp,
            "POST",
            &format!("/v1/payments/{DOMESTIC}"),
            &with_psu,
            Some(&kari_payment("25.00", "registered psu").to_string()),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.json["paymentId"].as_str().unwrap().to_string();
    let sca = r.sca_redirect().unwrap().to_string();
    // Another customer cannot approve the registered PSU's payment ...
    assert_bound_to_another_customer(&sca, INGRID).await;
    // ... the registered customer can, and the SCA gives back the same PSU-ID.
    let ok = approved(&sca, KARI).await;
    assert_eq!(ok.psu_id, psu);
    assert_eq!(ok.context, PsuContext::Private);
    let s = sb
        .get_as(&pisp, &format!("/v1/payments/{DOMESTIC}/{id}/status"), &[])
        .await;
    assert_eq!(s.json["transactionStatus"], "ACTC", "{}", s.text);
    // A signing basket created with the PSU-ID is bound to the same customer.
    let r = sb
        .send_as(
            &pisp,
            "POST",
            &format!("/v1/payments/{DOMESTIC}"),
            &[],
            Some(&kari_payment("26.00", "in a basket").to_string()),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let in_basket = r.json["paymentId"].as_str().unwrap().to_string();
    let b = sb
        .create_basket_as(
            &pisp,
            &with_psu,
            &json!({ "paymentIds": [in_basket] }).to_string(),
        )
        .await;
    assert_eq!(b.status, 201, "{}", b.text);
    assert_bound_to_another_customer(b.sca_redirect().unwrap(), INGRID).await;
}

/// The seeded private current accounts and corporate operating accounts.
fn payable_seeded_accounts() -> Vec<(Account, String)> {
    let s = seed::seed();
    let mut out = Vec::new();
    for a in &s.accounts {
        let owner = s.customers.iter().find(|c| c.id == a.owner).unwrap();
        let approver = match a.kind {
            AccountKind::Current => owner.number.clone(),
            AccountKind::Operating => {
                let holder = s
                    .agreements
                    .iter()
                    .find(|g| g.accounts.contains(&a.id))
                    .map(|g| g.holder)
                    .unwrap();
                s.customers
                    .iter()
                    .find(|c| c.id == holder)
                    .unwrap()
                    .number
                    .clone()
            }
            _ => continue,
        };
        out.push((a.clone(), approver));
    }
    out
}

/// Seeded accounts have a healthy balance on any date (sandbox initialization; interface
/// document, Errors: insufficient funds is the exception, not the default): with no balance
/// override, a payment of NOK 1 000.00 from every seeded private current account and
/// corporate operating account, approved by SCA, is ACSC after the batch run, today and 90,
/// 200 and 365 days later.
#[tokio::test]
async fn seeded_current_and_operating_accounts_pay_1000_nok_on_any_date() {
    let sb = sandbox_at(tomorrow_at(8)).await; // no `fund`: the seeded balances
    let accounts = payable_seeded_accounts();
    assert_eq!(accounts.len(), 5, "three current, two operating accounts");
    let mut moved = 0;
    for days in [0u64, 90, 200, 365] {
        if days > moved {
            advance(&sb, (days - moved) * 86_400).await;
            moved = days;
        }
        let clock = sb.get_ok("/v1/sandbox/clock").await;
        let mut ids = Vec::new();
        for (account, approver) in &accounts {
            let (id, sca) = sb
                .create_payment(
                    DOMESTIC,
                    &domestic(&account.bban, "1000.00", &format!("day +{days}")),
                )
                .await;
            assert!(
                matches!(approve(&sca, approver).await, ScaCallback::Success(_)),
                "{} approves from {}",
                approver,
                account.name
            );
            let s = status_of(&sb, "payments", DOMESTIC, &id).await;
            assert_eq!(s["transactionStatus"], "ACTC");
            assert_eq!(
                s["fundsAvailable"], true,
                "{} at {}: {s}",
                account.name, clock.json["now"]
            );
            ids.push((id, account.name.clone()));
        }
        let r = sb.send("POST", "/v1/sandbox/batch", &[], None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        for (id, name) in &ids {
            assert_eq!(
                tx_status(&sb, DOMESTIC, id).await,
                "ACSC",
                "{name} at {}",
                clock.json["now"]
            );
        }
    }
}

/// Berlin Group `paymentInitiationStatusResponse-200_json`: "If the PSU does not complete a
/// required SCA within the required timeframe the payment resource's status must be set to
/// RJCT". The SCA link lives 30 minutes; read after that, status and details say RJCT (with
/// a psuMessage), the authorisation reads failed and the link is gone (410).
#[tokio::test]
async fn an_expired_payment_sca_rejects_the_payment_when_next_read() {
    let sb = sandbox().await;
    let r = kari_initiates(&sb, &[], "30.00", "never approved").await;
    let id = r.json["paymentId"].as_str().unwrap().to_string();
    let sca = r.sca_redirect().unwrap().to_string();
    let sca_status = r.json["_links"]["scaStatus"]["href"]
        .as_str()
        .unwrap()
        .to_string();
    advance(&sb, 29 * 60).await;
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "RCVD", "still in time");
    advance(&sb, 2 * 60).await;
    let s = status_of(&sb, "payments", DOMESTIC, &id).await;
    assert_eq!(s["transactionStatus"], "RJCT");
    assert!(s["psuMessage"].as_str().unwrap().contains("expired"), "{s}");
    let d = sb.get(&format!("/v1/payments/{DOMESTIC}/{id}")).await;
    assert_eq!(d.json["transactionStatus"], "RJCT", "{}", d.text);
    let a = sb.get(&sca_status).await;
    assert_eq!(a.json["scaStatus"], "failed", "{}", a.text);
    assert_eq!(browser().get(&sca).send().await.unwrap().status(), 410);
    // No new authorisation of a rejected payment.
    let again = sb
        .send(
            "POST",
            &format!("/v1/payments/{DOMESTIC}/{id}/authorisations"),
            &[],
            None,
        )
        .await;
    again.assert_error(409, "STATUS_INVALID");
}

/// The expiry rule spares a payment whose TPP started a new authorisation in time (the new
/// link keeps it RCVD and can approve it), and one whose authorisation was never started
/// (explicit start pending).
#[tokio::test]
async fn a_new_authorisation_keeps_a_payment_with_an_expired_sca_link_alive() {
    let sb = sandbox().await;
    let (id, _old) = kari_pays(&sb, DOMESTIC, "31.00", "second try").await;
    let explicit = sb
        .initiate_with(
            DOMESTIC,
            &[("TPP-Explicit-Authorisation-Preferred", "true")],
            &kari_payment("32.00", "not started"),
        )
        .await;
    assert_eq!(explicit.status, 201, "{}", explicit.text);
    let not_started = explicit.json["paymentId"].as_str().unwrap().to_string();
    advance(&sb, 31 * 60).await;
    let a = sb
        .send(
            "POST",
            &format!("/v1/payments/{DOMESTIC}/{id}/authorisations"),
            &[],
            None,
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text);
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "RCVD");
    assert_eq!(tx_status(&sb, DOMESTIC, &not_started).await, "RCVD");
    assert!(matches!(
        approve(a.sca_redirect().unwrap(), KARI).await,
        ScaCallback::Success(_)
    ));
    assert_eq!(tx_status(&sb, DOMESTIC, &id).await, "ACTC");
}

// ---------------------------------------------------------------------------------------
// Issue 9: amounts, KID, corporate context

#[tokio::test]
async fn amounts_outside_the_berlin_group_pattern_are_format_error_naming_the_field() {
    let sb = sandbox().await;
    for bad in [
        " 10",
        "+10",
        "10.",
        "10 ",
        ".5",
        "1e3",
        "1,50",
        "123456789012345",
    ] {
        let r = sb.initiate(DOMESTIC, &kari_payment(bad, "pattern")).await;
        assert_eq!(r.status, 400, "{bad:?}: {}", r.text);
        assert_eq!(r.code(), Some("FORMAT_ERROR"), "{bad:?}");
        assert_eq!(
            r.json["tppMessages"][0]["path"], "instructedAmount.amount",
            "{bad:?}"
        );
        assert!(r.text.contains("instructedAmount.amount"), "{}", r.text);
    }
    // An instructed amount is positive.
    for bad in ["0", "0.00", "-5.00"] {
        let r = sb.initiate(DOMESTIC, &kari_payment(bad, "positive")).await;
        assert_eq!(r.status, 400, "{bad:?}: {}", r.text);
        assert_eq!(r.json["tppMessages"][0]["path"], "instructedAmount.amount");
        assert!(r.text.contains("greater than zero"), "{}", r.text);
    }
    // The pattern's own forms pass.
    for (i, good) in ["10", "10.5", "10.50"].iter().enumerate() {
        let r = sb
            .initiate(DOMESTIC, &kari_payment(good, &format!("fine {i}")))
            .await;
        assert_eq!(r.status, 201, "{good:?}: {}", r.text);
    }
    // Inside a bulk payment the entry is named.
    let bulk = json!({
        "debtorAccount": {"bban": first_bban(KARI)},
        "payments": [
            {"instructedAmount": {"currency": "NOK", "amount": "1.00"},
             "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "A"},
            {"instructedAmount": {"currency": "NOK", "amount": "+2"},
             "creditorAccount": {"bban": CREDITOR_BBAN}, "creditorName": "B"}
        ]
    });
    let r = sb
        .post_json(&format!("/v1/bulk-payments/{DOMESTIC}"), &bulk)
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(
        r.json["tppMessages"][0]["path"],
        "payments[1].instructedAmount.amount"
    );
}

/// A domestic payment with a structured KID reference.
fn with_kid(kid: &str, array: bool, remittance: &str) -> Value {
    let mut body = kari_payment("20.00", remittance);
    let reference = json!({"reference": kid, "referenceType": "KID"});
    if array {
        body["remittanceInformationStructuredArray"] = json!([reference]);
    } else {
        body["remittanceInformationStructured"] = reference;
    }
    body
}

#[tokio::test]
async fn kid_with_a_wrong_check_digit_or_length_is_format_error_naming_the_field() {
    let sb = sandbox().await;
    // 123456789 + MOD10 (Luhn) 7, or + MOD11 2; 7992739871 + Luhn 3.
    for (i, good) in ["1234567897", "1234567892", "79927398713"]
        .iter()
        .enumerate()
    {
        for array in [false, true] {
            let r = sb
                .initiate(
                    DOMESTIC,
                    &with_kid(good, array, &format!("kid {i} {array}")),
                )
                .await;
            assert_eq!(r.status, 201, "{good}: {}", r.text);
        }
    }
    for (bad, why) in [
        ("1234567891", "check digit"),
        ("1", "2 to 25"),
        ("12345678901234567890123456", "2 to 25"),
        ("12345A7897", "digits only"),
    ] {
        let r = sb.initiate(DOMESTIC, &with_kid(bad, true, "bad kid")).await;
        assert_eq!(r.status, 400, "{bad}: {}", r.text);
        assert_eq!(r.code(), Some("FORMAT_ERROR"));
        assert_eq!(
            r.json["tppMessages"][0]["path"], "remittanceInformationStructuredArray[0].reference",
            "{bad}"
        );
        assert!(r.text.contains(why), "{bad}: {}", r.text);
        let r = sb
            .initiate(DOMESTIC, &with_kid(bad, false, "bad kid"))
            .await;
        assert_eq!(r.status, 400, "{bad}: {}", r.text);
        assert_eq!(
            r.json["tppMessages"][0]["path"],
            "remittanceInformationStructured.reference"
        );
    }
    // Another reference type is not a KID.
    let mut body = kari_payment("21.00", "scor");
    body["remittanceInformationStructuredArray"] =
        json!([{"reference": "RF18539007547034", "referenceType": "SCOR"}]);
    let r = sb.initiate(DOMESTIC, &body).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

#[tokio::test]
async fn a_corporate_users_payment_requests_without_psu_corporate_id_get_400() {
    let sb = sandbox().await;
    let (id, ok) = corporate_payment_approved_by_kari(&sb).await;
    assert_eq!(ok.context, PsuContext::Corporate);
    let corporate = ok.psu_corporate_id.clone().unwrap();
    let base = format!("/v1/payments/{DOMESTIC}/{id}");
    let psu_only = [("PSU-ID", ok.psu_id.as_str())];
    let both = [
        ("PSU-ID", ok.psu_id.as_str()),
        ("PSU-Corporate-ID", corporate.as_str()),
    ];
    for path in [format!("{base}/status"), base.clone()] {
        let r = sb.get_with(&path, &psu_only).await;
        assert_eq!(r.status, 400, "{path}: {}", r.text);
        assert_eq!(r.code(), Some("FORMAT_ERROR"));
        assert!(r.text.contains("PSU-Corporate-ID"), "{}", r.text);
        let r = sb.get_with(&path, &both).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
    }
    let r = sb.send("DELETE", &base, &psu_only, None).await;
    assert_eq!(r.status, 400, "{}", r.text);
    // Initiating from the corporate account with PSU-ID only, and with both.
    let body = domestic(&first_bban(FJORDBRIS), "251.00", "more flour").to_string();
    let path = format!("/v1/payments/{DOMESTIC}");
    let r = sb.send("POST", &path, &psu_only, Some(&body)).await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(r.text.contains("PSU-Corporate-ID"), "{}", r.text);
    let r = sb.send("POST", &path, &both, Some(&body)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    // A private payment of the same PSU needs no PSU-Corporate-ID.
    let body = kari_payment("5.00", "private").to_string();
    let r = sb.send("POST", &path, &psu_only, Some(&body)).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

/// Issue 20, finding 8: a wrong `PSU-Corporate-ID` (a random UUID, another agreement, not a
/// UUID) on a corporate payment's status and details is 401 `CORPORATE_ID_INVALID`, as
/// `/v1/accounts` answers it; the payment's own agreement is 200.
#[tokio::test]
async fn a_wrong_psu_corporate_id_on_a_corporate_payment_is_401_corporate_id_invalid() {
    let sb = sandbox().await;
    let (id, ok) = corporate_payment_approved_by_kari(&sb).await;
    let corporate = ok.psu_corporate_id.clone().unwrap();
    let base = format!("/v1/payments/{DOMESTIC}/{id}");
    let random = uuid::Uuid::new_v4().to_string();
    let other_agreement = seed::seed()
        .agreements
        .iter()
        .map(|a| a.id.to_string())
        .find(|a| *a != corporate)
        .unwrap();
    for wrong in [random.as_str(), other_agreement.as_str(), "not-a-uuid"] {
        let h = [("PSU-ID", ok.psu_id.as_str()), ("PSU-Corporate-ID", wrong)];
        for path in [format!("{base}/status"), base.clone()] {
            sb.get_with(&path, &h)
                .await
                .assert_error(401, "CORPORATE_ID_INVALID");
        }
    }
    let h = [
        ("PSU-ID", ok.psu_id.as_str()),
        ("PSU-Corporate-ID", random.as_str()),
    ];
    let accounts = sb.get_with("/v1/accounts", &h).await;
    accounts.assert_error(401, "CORPORATE_ID_INVALID");
    let h = [
        ("PSU-ID", ok.psu_id.as_str()),
        ("PSU-Corporate-ID", corporate.as_str()),
    ];
    assert_eq!(sb.get_with(&format!("{base}/status"), &h).await.status, 200);
}

/// The stored body's field order, as the details call echoes it (issue 23 pins it before the
/// parse is rebuilt): `debtorAccount` after `endToEndIdentification` when there is one, and
/// then the payment's own fields in the order read, except that with an
/// `endToEndIdentification` the last of them comes first (the order the sandbox has always
/// stored: the parse took `endToEndIdentification` out of the part with a swap-remove);
/// periodic fields follow.
#[tokio::test]
async fn the_stored_body_keeps_its_field_order_with_and_without_an_end_to_end_id() {
    let sb = sandbox().await;
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let mut body = kari_payment("12.50", "Order");
    body["purposeCode"] = json!("GDSV");
    body["chargeBearer"] = json!("SLEV");
    let r = sb.initiate(DOMESTIC, &body).await;
    r.assert_status(201);
    let id = r.json["paymentId"].as_str().unwrap().to_string();
    // The 201's headers, in order (pinned for issue 23's answer without `axum::Json`).
    let names: Vec<&str> = r.headers.keys().map(|n| n.as_str()).collect();
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert!(at("content-type") < at("location"), "{names:?}");
    assert!(at("location") < at("aspsp-sca-approach"), "{names:?}");
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(
        r.headers["location"].to_str().unwrap(),
        format!("/v1/payments/{DOMESTIC}/{id}")
    );
    assert_eq!(r.headers["aspsp-sca-approach"], "REDIRECT");
    assert!(r.headers.get("psu-id").is_none());
    let d = sb.get_ok(&format!("/v1/payments/{DOMESTIC}/{id}")).await;
    assert_eq!(
        keys(&d.json),
        [
            "debtorAccount",
            "instructedAmount",
            "creditorAccount",
            "creditorName",
            "purposeCode",
            "chargeBearer",
            "remittanceInformationUnstructured",
            "transactionStatus"
        ]
    );
    body["endToEndIdentification"] = json!("E2E-1");
    body["remittanceInformationUnstructured"] = json!("Order 2");
    let (id, _) = sb.create_payment(DOMESTIC, &body).await;
    let d = sb.get_ok(&format!("/v1/payments/{DOMESTIC}/{id}")).await;
    assert_eq!(
        keys(&d.json),
        [
            "endToEndIdentification",
            "debtorAccount",
            "remittanceInformationUnstructured",
            "instructedAmount",
            "creditorAccount",
            "creditorName",
            "purposeCode",
            "chargeBearer",
            "transactionStatus"
        ]
    );
    let today = chrono::DateTime::<chrono::Utc>::from(sb.now()).date_naive();
    let mut periodic = kari_payment("9.00", "Rent");
    periodic["endToEndIdentification"] = json!("E2E-2");
    periodic["startDate"] = json!(today.to_string());
    periodic["frequency"] = json!("Monthly");
    let path = format!("/v1/periodic-payments/{DOMESTIC}");
    let r = sb.post_created(&path, &periodic).await;
    let id = r.json["paymentId"].as_str().unwrap();
    let d = sb.get_ok(&format!("{path}/{id}")).await;
    assert_eq!(
        keys(&d.json),
        [
            "endToEndIdentification",
            "debtorAccount",
            "remittanceInformationUnstructured",
            "instructedAmount",
            "creditorAccount",
            "creditorName",
            "startDate",
            "frequency",
            "transactionStatus"
        ]
    );
    let mut bulk = json!({
        "debtorAccount": {"bban": first_bban(KARI)},
        "payments": [kari_payment("3.00", "Bulk")],
    });
    bulk["payments"][0]["endToEndIdentification"] = json!("E2E-3");
    bulk["payments"][0]
        .as_object_mut()
        .unwrap()
        .remove("debtorAccount");
    let path = format!("/v1/bulk-payments/{DOMESTIC}");
    let r = sb.post_created(&path, &bulk).await;
    let id = r.json["paymentId"].as_str().unwrap();
    let d = sb.get_ok(&format!("{path}/{id}")).await;
    assert_eq!(
        keys(&d.json),
        ["debtorAccount", "payments", "transactionStatus"]
    );
    assert_eq!(
        keys(&d.json["payments"][0]),
        [
            "endToEndIdentification",
            "instructedAmount",
            "creditorAccount",
            "creditorName",
            "remittanceInformationUnstructured"
        ]
    );
}
