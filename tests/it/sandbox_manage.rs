//! Sandbox management over real HTTP, signed by the test TPP: creating and deleting
//! customers, accounts, card accounts, transactions, balance overrides and agreements, and
//! the validation of every body (interface document, Endpoints: `POST /v1/sandbox/customers`,
//! `POST /v1/sandbox/accounts/{mockAccountId}/transactions`, balance-update operations;
//! Resources: "Sandbox customer"; Limits: 70-character names).

use crate::common;

use common::sandbox::{Reply, TestSandbox, strings};
use common::sca::{complete, fixed_sandbox, success};
use common::{Form, balance_of};
use serde_json::{Value, json};

fn error_text(r: &Reply) -> String {
    r.json["tppMessages"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

async fn create_customer(sb: &TestSandbox, body: Value) -> Value {
    let r = sb.post_created("/v1/sandbox/customers", &body).await;
    r.json
}

/// [`create_customer`] of `customer_type` (`PRIVATE` or `CORPORATE`) named `name`, with
/// the default accounts.
async fn new_customer(sb: &TestSandbox, customer_type: &str, name: &str) -> Value {
    create_customer(
        sb,
        json!({"customerType": customer_type, "customerName": name}),
    )
    .await
}

/// Result of a completed SCA: the redirect's `psu-id` and `psu-corporate-id`.
struct Sca {
    psu_id: String,
    corporate_id: Option<String>,
}

/// Runs the consent SCA through the HTML forms: GET /v1/accounts without PSU-ID gives a
/// scaRedirect; log in with `number`; choose `context` (`PRIVATE` or `CORPORATE:{id}`) when
/// asked; tick every offered account and card account; approve.
async fn sca(sb: &TestSandbox, number: &str, context: &str) -> Sca {
    let r = sb
        .get_with("/v1/accounts", &[("TPP-Session-ID", "manage-tests")])
        .await;
    r.assert_status(401);
    let href = r.sca_redirect().expect("scaRedirect");
    let tick_every_box = |f: &mut Form| {
        for (n, v) in f.unchecked.clone() {
            f.check(&n, &v);
        }
    };
    let s = success(&complete(href, number, context, tick_every_box, "Approve").await);
    Sca {
        psu_id: s.psu_id,
        corporate_id: s.psu_corporate_id,
    }
}

fn psu_headers(s: &Sca) -> Vec<(&str, &str)> {
    let mut h = vec![("PSU-ID", s.psu_id.as_str())];
    if let Some(c) = &s.corporate_id {
        h.push(("PSU-Corporate-ID", c.as_str()));
    }
    h
}

fn amount(v: &str) -> Value {
    json!({"currency": "NOK", "amount": v})
}

#[tokio::test]
pub(crate) async fn created_customer_gets_default_accounts_like_the_seed_and_is_listed() {
    let sb = fixed_sandbox().await;
    let before = sb.customers().await;
    let private = new_customer(&sb, "PRIVATE", "Per Hansen").await;
    let corporate = new_customer(&sb, "CORPORATE", "Havgapet Fiskeri AS").await;
    // Exactly the listing's element shape.
    for c in [&private, &corporate] {
        let mut keys: Vec<&str> = c.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "_links",
                "accounts",
                "agreements",
                "cardAccounts",
                "customerId",
                "customerName",
                "customerNumber",
                "customerType"
            ]
        );
        assert_eq!(
            strings(&c["accounts"]).len(),
            2,
            "two accounts like the seed"
        );
    }
    assert_eq!(strings(&private["cardAccounts"]).len(), 1);
    assert_eq!(strings(&corporate["cardAccounts"]).len(), 0);
    let number = private["customerNumber"].as_str().unwrap();
    assert_eq!(number.len(), 11, "a mock national id");
    assert_eq!(corporate["customerNumber"].as_str().unwrap().len(), 9);
    let after = sb.customers().await;
    assert_eq!(after.len(), before.len() + 2);
    assert_eq!(&after[before.len()], &private, "listed in creation order");
    // The self link answers the same element.
    let href = private["_links"]["self"]["href"].as_str().unwrap();
    let one = sb.get_ok(href).await;
    assert_eq!(one.json, private);

    // The customerNumber logs in at SCA; the default accounts carry a generated history.
    let s = sca(&sb, number, "PRIVATE").await;
    let accounts = sb.get_with_ok("/v1/accounts", &psu_headers(&s)).await;
    let ids: Vec<String> = accounts.json["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["resourceId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, strings(&private["accounts"]));
    let t = sb
        .get_with_ok(
            &format!("/v1/accounts/{}/transactions?bookingStatus=booked", ids[0]),
            &psu_headers(&s),
        )
        .await;
    assert!(
        !t.json["transactions"]["booked"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn customer_body_is_validated_field_by_field() {
    let sb = fixed_sandbox().await;
    let n = sb.customers().await.len();
    let long = "x".repeat(71);
    let seventy = "y".repeat(70);
    for (body, field) in [
        (json!({"customerName": "A"}), "customerType"),
        (json!({"customerType": "PRIVATE"}), "customerName"),
        (
            json!({"customerType": "BUSINESS", "customerName": "A"}),
            "customerType",
        ),
        (
            json!({"customerType": 1, "customerName": "A"}),
            "customerType",
        ),
        (
            json!({"customerType": "PRIVATE", "customerName": long}),
            "customerName",
        ),
        (
            json!({"customerType": "PRIVATE", "customerName": "  "}),
            "customerName",
        ),
        (
            json!({"customerType": "PRIVATE", "customerName": "A", "customerNumber": "123"}),
            "customerNumber",
        ),
        (
            json!({"customerType": "CORPORATE", "customerName": "A", "customerNumber": "31125461118"}),
            "customerNumber",
        ),
        (
            json!({"customerType": "PRIVATE", "customerName": "A", "nickname": "B"}),
            "nickname",
        ),
        (
            json!({"customerType": "PRIVATE", "customerName": "A", "accounts": {}}),
            "accounts",
        ),
        (
            json!({"customerType": "PRIVATE", "customerName": "A", "accounts": [{"name": "K", "cashAccountType": "CHECKING"}]}),
            "accounts[0].cashAccountType",
        ),
        (
            json!({"customerType": "PRIVATE", "customerName": "A", "accounts": [{"name": "K", "balance": {"currency": "NOK", "amount": 10}}]}),
            "accounts[0].balance.amount",
        ),
        (
            json!({"customerType": "PRIVATE", "customerName": "A", "cardAccounts": [{}]}),
            "cardAccounts[0].name",
        ),
    ] {
        let r = sb.post_json("/v1/sandbox/customers", &body).await;
        r.assert_error_at(400, "FORMAT_ERROR", field);
        assert!(
            error_text(&r).contains(field.split('.').next_back().unwrap()),
            "{}",
            r.text
        );
    }
    for raw in ["", "{", "[1,2]", "\"text\"", "null"] {
        let r = sb
            .send("POST", "/v1/sandbox/customers", &[], Some(raw))
            .await;
        r.assert_error(400, "FORMAT_ERROR");
    }
    // A taken customerNumber.
    let r = sb.post_json("/v1/sandbox/customers",
        &json!({"customerType": "PRIVATE", "customerName": "A", "customerNumber": "31125461118"}),
    )
    .await;
    r.assert_error(400, "FORMAT_ERROR");
    assert!(error_text(&r).contains("already used"), "{}", r.text);
    assert_eq!(sb.customers().await.len(), n, "nothing was created");
    // 70 characters is fine; explicit accounts and cards are created as asked.
    let c = create_customer(
        &sb,
        json!({
            "customerType": "PRIVATE",
            "customerName": seventy,
            "customerNumber": "01010012356",
            "accounts": [
                {"name": "Feriekonto", "cashAccountType": "SVGS", "balance": amount("250.00")},
                {"name": "z".repeat(70), "currency": "EUR"}
            ],
            "cardAccounts": []
        }),
    )
    .await;
    assert_eq!(c["customerNumber"], "01010012356");
    assert_eq!(c["customerName"].as_str().unwrap().chars().count(), 70);
    assert_eq!(strings(&c["accounts"]).len(), 2);
    assert!(strings(&c["cardAccounts"]).is_empty());
}

#[tokio::test]
pub(crate) async fn deleting_a_customer_drops_its_accounts_and_consents() {
    let sb = fixed_sandbox().await;
    let c = new_customer(&sb, "PRIVATE", "Siri Dahl").await;
    let id = c["customerId"].as_str().unwrap();
    let account = strings(&c["accounts"])[0].clone();
    let s = sca(&sb, c["customerNumber"].as_str().unwrap(), "PRIVATE").await;
    sb.get_with_ok("/v1/accounts", &psu_headers(&s)).await;

    let r = sb.delete(&format!("/v1/sandbox/customers/{id}")).await;
    assert_eq!(r.status, 204, "{}", r.text);
    assert!(r.text.is_empty());
    let gone = sb.get(&format!("/v1/sandbox/customers/{id}")).await;
    gone.assert_error(404, "RESOURCE_UNKNOWN");
    assert!(
        sb.customers()
            .await
            .iter()
            .all(|x| x["customerId"] != c["customerId"])
    );
    // The PSU's consent went with it: a new SCA is needed.
    let again = sb.get_with("/v1/accounts", &psu_headers(&s)).await;
    assert_eq!(again.status, 401, "{}", again.text);
    assert!(again.sca_redirect().is_some());
    // Its accounts are gone for the management operations too.
    let t = sb
        .post_json(
            &format!("/v1/sandbox/accounts/{account}/transactions"),
            &json!({"transactionAmount": amount("-1.00"), "creditorName": "X"}),
        )
        .await;
    t.assert_error(404, "RESOURCE_UNKNOWN");
    let twice = sb.delete(&format!("/v1/sandbox/customers/{id}")).await;
    twice.assert_error(404, "RESOURCE_UNKNOWN");
    let bad = sb.delete("/v1/sandbox/customers/not-a-uuid").await;
    bad.assert_error(404, "RESOURCE_UNKNOWN");
}

#[tokio::test]
async fn created_account_has_the_name_type_and_currency_asked_for() {
    let sb = fixed_sandbox().await;
    let c = create_customer(
        &sb,
        json!({"customerType": "PRIVATE", "customerName": "Ola Berg", "accounts": []}),
    )
    .await;
    assert!(strings(&c["accounts"]).is_empty());
    let cid = c["customerId"].as_str().unwrap();
    let name = "Sparekonto for ferie og andre gode formål, med et langt navn: 70 tegn.";
    assert_eq!(name.chars().count(), 70);
    let r = sb
        .post_created(
            "/v1/sandbox/accounts",
            &json!({"customerId": cid, "name": name, "cashAccountType": "SVGS", "currency": "NOK",
                "balance": amount("1500.00")}),
        )
        .await;
    let a = &r.json["account"];
    assert_eq!(a["name"], name);
    assert_eq!(a["cashAccountType"], "SVGS");
    assert_eq!(a["currency"], "NOK");
    assert_eq!(a["ownerName"], "Ola Berg");
    let id = a["resourceId"].as_str().unwrap().to_string();
    assert_eq!(
        r.headers["location"].to_str().unwrap(),
        format!("/v1/accounts/{id}")
    );
    let listed = sb.get(&format!("/v1/sandbox/customers/{cid}")).await;
    assert_eq!(strings(&listed.json["accounts"]), std::slice::from_ref(&id));

    // The PSU sees it with its opening balance and no transactions.
    let s = sca(&sb, c["customerNumber"].as_str().unwrap(), "PRIVATE").await;
    let b = sb
        .get_with_ok(&format!("/v1/accounts/{id}/balances"), &psu_headers(&s))
        .await;
    for bal in b.json["balances"].as_array().unwrap() {
        assert_eq!(bal["balanceAmount"], amount("1500.00"), "{bal}");
    }
    let t = sb
        .get_with_ok(&format!("/v1/accounts/{id}/transactions"), &psu_headers(&s))
        .await;
    assert!(
        t.json["transactions"]["booked"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    for (body, status, code, field) in [
        (json!({"name": "K"}), 400, "FORMAT_ERROR", "customerId"),
        (
            json!({"customerId": "5b7c8d4e-0000-4000-8000-000000000000", "name": "K"}),
            400,
            "RESOURCE_UNKNOWN",
            "customerId",
        ),
        (json!({"customerId": cid}), 400, "FORMAT_ERROR", "name"),
        (
            json!({"customerId": cid, "name": "x".repeat(71)}),
            400,
            "FORMAT_ERROR",
            "name",
        ),
        (
            json!({"customerId": cid, "name": "K", "cashAccountType": "Current"}),
            400,
            "FORMAT_ERROR",
            "cashAccountType",
        ),
        (
            json!({"customerId": cid, "name": "K", "currency": "nok"}),
            400,
            "FORMAT_ERROR",
            "currency",
        ),
        (
            json!({"customerId": cid, "name": "K", "balance": {"currency": "EUR", "amount": "1.00"}}),
            400,
            "PARAMETER_NOT_CONSISTENT",
            "balance.currency",
        ),
        (
            json!({"customerId": cid, "name": "K", "bban": "12345678901"}),
            400,
            "FORMAT_ERROR",
            "bban",
        ),
        (
            json!({"customerId": cid, "name": "K", "bban": b.json["account"]["bban"]}),
            400,
            "FORMAT_ERROR",
            "bban",
        ),
    ] {
        let r = sb.post_json("/v1/sandbox/accounts", &body).await;
        r.assert_error_at(status, code, field);
    }
}

/// Creates a customer with one empty account and a consent to it; returns (account id,
/// bban, SCA).
async fn empty_account_with_consent(sb: &TestSandbox, name: &str) -> (String, String, Sca, String) {
    let c = create_customer(
        sb,
        json!({"customerType": "PRIVATE", "customerName": name,
               "accounts": [{"name": "Brukskonto", "balance": amount("1000.00")}]}),
    )
    .await;
    let id = strings(&c["accounts"])[0].clone();
    let s = sca(sb, c["customerNumber"].as_str().unwrap(), "PRIVATE").await;
    let a = sb
        .get_with_ok(&format!("/v1/accounts/{id}"), &psu_headers(&s))
        .await;
    let bban = a.json["account"]["bban"].as_str().unwrap().to_string();
    let number = c["customerNumber"].as_str().unwrap().to_string();
    (id, bban, s, number)
}

#[tokio::test]
async fn transaction_with_another_account_as_debtor_is_rejected_with_an_explanation() {
    let sb = fixed_sandbox().await;
    let (id, bban, s, _) = empty_account_with_consent(&sb, "Eva Lie").await;
    // Another real account of the sandbox (of a seeded customer).
    let seeded_bban = {
        let owner = sb.customers().await[0]["customerId"].clone();
        let r = sb
            .post_created(
                "/v1/sandbox/accounts",
                &json!({"customerId": owner, "name": "Annen konto"}),
            )
            .await;
        r.json["account"]["bban"].as_str().unwrap().to_string()
    };
    assert_ne!(seeded_bban, bban);
    let path = format!("/v1/sandbox/accounts/{id}/transactions");
    for debtor in [
        json!({"bban": seeded_bban}),
        json!({"iban": "DE89370400440532013000"}),
    ] {
        let r = sb
            .post_json(
                &path,
                &json!({"transactionAmount": amount("-100.00"), "creditorName": "Elkjøp",
                    "debtorAccount": debtor}),
            )
            .await;
        r.assert_error(400, "PARAMETER_NOT_CONSISTENT");
        assert_eq!(r.json["tppMessages"][0]["path"], "debtorAccount");
        let text = error_text(&r);
        assert!(
            text.contains("another account") && text.contains(&bban),
            "explains the rule: {text}"
        );
    }
    // Money in with any debtorAccount: the debtor would be another account.
    let r = sb
        .post_json(
            &path,
            &json!({"transactionAmount": amount("100.00"), "debtorName": "Arbeidsgiver AS",
                "debtorAccount": {"bban": seeded_bban}}),
        )
        .await;
    r.assert_error(400, "PARAMETER_NOT_CONSISTENT");
    // The mock account itself as debtor of money out is fine.
    let r = sb
        .post_created(
            &path,
            &json!({"transactionAmount": amount("-100.00"), "creditorName": "Elkjøp",
                "debtorAccount": {"bban": bban}, "creditorAccount": {"bban": seeded_bban}}),
        )
        .await;
    assert_eq!(r.json["debtorAccount"]["bban"], bban);
    assert_eq!(r.json["creditorAccount"]["bban"], seeded_bban);
    // Nothing of the rejected ones was stored.
    let t = sb
        .get_with(
            &format!("/v1/accounts/{id}/transactions?bookingStatus=both"),
            &psu_headers(&s),
        )
        .await;
    assert_eq!(
        t.json["transactions"]["booked"].as_array().unwrap().len(),
        1
    );
    assert!(
        t.json["transactions"]["pending"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
pub(crate) async fn created_transactions_are_listed_booked_or_pending_with_stable_ids() {
    let sb = fixed_sandbox().await;
    let (id, _, s, number) = empty_account_with_consent(&sb, "Nils Moe").await;
    let today = sb.clock.today();
    let yesterday = today.pred_opt().unwrap().to_string();
    let path = format!("/v1/sandbox/accounts/{id}/transactions");
    let booked = sb
        .post_created(
            &path,
            &json!({"transactionAmount": amount("-349.90"), "creditorName": "Elkjøp",
                "bookingDate": yesterday, "remittanceInformationUnstructured": "Varekjøp"}),
        )
        .await;
    assert_eq!(booked.json["transactionAmount"], amount("-349.90"));
    assert_eq!(booked.json["bookingDate"], yesterday.as_str());
    let booked_id = booked.json["transactionId"].as_str().unwrap().to_string();
    // Location: the transaction details resource.
    let details_path = booked.headers["location"].to_str().unwrap().to_string();
    let details = sb.get_with_ok(&details_path, &psu_headers(&s)).await;
    assert!(
        details.json["transactionsDetails"].is_object() && details.text.contains(&booked_id),
        "{}",
        details.text
    );
    let salary = sb
        .post_created(
            &path,
            &json!({"transactionAmount": amount("25000.00"), "debtorName": "Fjellheim Kommune"}),
        )
        .await;
    assert_eq!(
        salary.json["bookingDate"],
        today.to_string().as_str(),
        "default today"
    );
    let pending = sb
        .post_created(
            &path,
            &json!({"transactionAmount": amount("-59.00"), "creditorName": "Narvesen",
                "bookingStatus": "pending"}),
        )
        .await;
    assert!(pending.json.get("bookingDate").is_none());
    let pending_id = pending.json["transactionId"].as_str().unwrap().to_string();

    let list = |s: &Sca| {
        let headers: Vec<(String, String)> = psu_headers(s)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let (sb, id) = (&sb, &id);
        async move {
            let h: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let r = sb
                .get_with_ok(
                    &format!("/v1/accounts/{id}/transactions?bookingStatus=both"),
                    &h,
                )
                .await;
            r.json["transactions"].clone()
        }
    };
    let first = list(&s).await;
    let ids = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t["transactionId"].as_str().unwrap().to_string())
            .collect()
    };
    let booked_ids = ids(&first["booked"]);
    assert_eq!(booked_ids.len(), 2);
    assert_eq!(
        booked_ids[1], booked_id,
        "newest booking date first: today's salary, then yesterday's purchase"
    );
    let purchase = &first["booked"][1];
    assert_eq!(purchase["transactionAmount"], amount("-349.90"));
    assert_eq!(purchase["creditorName"], "Elkjøp");
    assert_eq!(purchase["remittanceInformationUnstructured"], "Varekjøp");
    assert_eq!(first["booked"][0]["debtorName"], "Fjellheim Kommune");
    assert_eq!(ids(&first["pending"]), [pending_id]);
    // Stable across reads and across a day passing.
    let again = list(&s).await;
    assert_eq!(ids(&again["booked"]), booked_ids);
    // A day later (a new SCA session: the old one is older than an hour).
    sb.clock.advance(std::time::Duration::from_secs(24 * 3600));
    let s = sca(&sb, &number, "PRIVATE").await;
    let later = list(&s).await;
    assert_eq!(ids(&later["booked"]), booked_ids);
    // dateTo before today leaves only yesterday's purchase.
    let r = sb
        .get_with(
            &format!("/v1/accounts/{id}/transactions?bookingStatus=booked&dateTo={yesterday}"),
            &psu_headers(&s),
        )
        .await;
    assert_eq!(ids(&r.json["transactions"]["booked"]), [booked_id]);
}

#[tokio::test]
async fn transaction_bodies_are_validated() {
    let sb = fixed_sandbox().await;
    let (id, bban, _, _) = empty_account_with_consent(&sb, "Kai Holm").await;
    let tomorrow = sb.clock.today().succ_opt().unwrap().to_string();
    let path = format!("/v1/sandbox/accounts/{id}/transactions");
    for (body, code, field) in [
        (
            json!({"creditorName": "X"}),
            "FORMAT_ERROR",
            "transactionAmount",
        ),
        (
            json!({"transactionAmount": {"currency": "NOK", "amount": -5}, "creditorName": "X"}),
            "FORMAT_ERROR",
            "transactionAmount.amount",
        ),
        (
            json!({"transactionAmount": amount("-1.005"), "creditorName": "X"}),
            "FORMAT_ERROR",
            "transactionAmount.amount",
        ),
        (
            json!({"transactionAmount": amount("0.00"), "creditorName": "X"}),
            "FORMAT_ERROR",
            "transactionAmount.amount",
        ),
        (
            json!({"transactionAmount": {"currency": "EUR", "amount": "-1.00"}, "creditorName": "X"}),
            "PARAMETER_NOT_CONSISTENT",
            "transactionAmount.currency",
        ),
        (
            json!({"transactionAmount": amount("-1.00")}),
            "FORMAT_ERROR",
            "creditorName",
        ),
        (
            json!({"transactionAmount": amount("1.00")}),
            "FORMAT_ERROR",
            "debtorName",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "creditorName": "X", "bookingStatus": "done"}),
            "FORMAT_ERROR",
            "bookingStatus",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "creditorName": "X", "bookingDate": tomorrow}),
            "PARAMETER_NOT_CONSISTENT",
            "bookingDate",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "creditorName": "X", "bookingStatus": "pending", "bookingDate": "2026-01-01"}),
            "PARAMETER_NOT_CONSISTENT",
            "bookingDate",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "creditorName": "X", "valueDate": "2026-02-30"}),
            "FORMAT_ERROR",
            "valueDate",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "creditorName": "X", "creditorAccount": {"bban": bban}}),
            "PARAMETER_NOT_CONSISTENT",
            "creditorAccount",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "creditorName": "X", "creditorAccount": {"iban": "NO9386011117948"}}),
            "FORMAT_ERROR",
            "creditorAccount.iban",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "creditorName": "X", "remittanceInformationUnstructured": "r".repeat(141)}),
            "FORMAT_ERROR",
            "remittanceInformationUnstructured",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "creditorName": "X", "transactionId": "mine"}),
            "FORMAT_ERROR",
            "transactionId",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "creditorName": "X", "colour": "red"}),
            "FORMAT_ERROR",
            "colour",
        ),
    ] {
        let r = sb.post_json(&path, &body).await;
        r.assert_error_at(400, code, field);
    }
    let r = sb
        .post_json(
            "/v1/sandbox/accounts/00000000-0000-4000-8000-000000000000/transactions",
            &json!({"transactionAmount": amount("-1.00"), "creditorName": "X"}),
        )
        .await;
    r.assert_error(404, "RESOURCE_UNKNOWN");
}

#[tokio::test]
pub(crate) async fn balance_update_sets_what_the_balance_endpoint_returns() {
    let sb = fixed_sandbox().await;
    let (id, _, s, _) = empty_account_with_consent(&sb, "Lise Aas").await;
    let balances = || async {
        let r = sb
            .get_with_ok(&format!("/v1/accounts/{id}/balances"), &psu_headers(&s))
            .await;
        let get = |t: &str| {
            balance_of(&r.json, t)["balanceAmount"]["amount"]
                .as_str()
                .unwrap()
                .to_string()
        };
        (
            get("closingBooked"),
            get("expected"),
            get("interimAvailable"),
        )
    };
    assert_eq!(
        balances().await,
        ("1000.00".into(), "1000.00".into(), "1000.00".into())
    );
    let path = format!("/v1/sandbox/accounts/{id}/balances");
    let r = sb
        .send_json(
            "PUT",
            &path,
            &json!({"booked": amount("5000.00"), "available": amount("4200.50")}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        balances().await,
        ("5000.00".into(), "4200.50".into(), "4200.50".into())
    );
    // POST works too; an omitted amount keeps its value.
    sb.post_ok(&path, &json!({"available": amount("-20.00")}))
        .await;
    assert_eq!(
        balances().await,
        ("5000.00".into(), "-20.00".into(), "-20.00".into())
    );
    // Transactions created afterwards move the balances: a booked one dated yesterday both,
    // a pending one only the available balance.
    let yesterday = sb.clock.today().pred_opt().unwrap().to_string();
    sb.post_created(&format!("/v1/sandbox/accounts/{id}/transactions"),
        &json!({"transactionAmount": amount("-100.00"), "creditorName": "Vy", "bookingDate": yesterday}),).await;
    sb.post_created(&format!("/v1/sandbox/accounts/{id}/transactions"),
        &json!({"transactionAmount": amount("30.00"), "debtorName": "Venn", "bookingStatus": "pending"}),).await;
    assert_eq!(
        balances().await,
        ("4900.00".into(), "-90.00".into(), "-90.00".into())
    );
    for (body, code, field) in [
        (json!({}), "FORMAT_ERROR", "booked"),
        (
            json!({"booked": {"currency": "EUR", "amount": "1.00"}}),
            "PARAMETER_NOT_CONSISTENT",
            "booked.currency",
        ),
        (json!({"booked": "1000"}), "FORMAT_ERROR", "booked"),
        (
            json!({"closingBooked": amount("1.00")}),
            "FORMAT_ERROR",
            "closingBooked",
        ),
    ] {
        let r = sb.send("PUT", &path, &[], Some(&body.to_string())).await;
        r.assert_error_at(400, code, field);
    }
    let r = sb
        .send_json(
            "PUT",
            "/v1/sandbox/accounts/nope/balances",
            &json!({"booked": amount("1.00")}),
        )
        .await;
    r.assert_error(404, "RESOURCE_UNKNOWN");
}

#[tokio::test]
async fn card_account_transactions_and_balances_are_stored_and_validated() {
    let sb = fixed_sandbox().await;
    let c = new_customer(&sb, "PRIVATE", "Tor Vik").await;
    let card = strings(&c["cardAccounts"])[0].clone();
    let path = format!("/v1/sandbox/card-accounts/{card}/transactions");
    let r = sb
        .post_created(
            &path,
            &json!({"transactionAmount": amount("-499.00"),
                "originalAmount": {"currency": "EUR", "amount": "-42.90"},
                "cardAcceptorId": "ELKJOP-0231", "merchantCategoryCode": "5732",
                "transactionDetails": "Elkjøp Lagunen"}),
        )
        .await;
    assert_eq!(r.json["transactionAmount"], amount("-499.00"));
    assert_eq!(r.json["originalAmount"]["currency"], "EUR");
    assert_eq!(r.json["bookingDate"], sb.clock.today().to_string().as_str());
    assert!(r.json["maskedPAN"].as_str().unwrap().contains("******"));
    let r_id = r.json["cardTransactionId"].clone();
    assert!(r_id.is_string());
    for (body, field) in [
        (
            json!({"transactionAmount": amount("-1.00"), "merchantCategoryCode": "57"}),
            "merchantCategoryCode",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "cardAcceptorId": "x".repeat(36)}),
            "cardAcceptorId",
        ),
        (
            json!({"transactionAmount": amount("-1.00"), "originalAmount": {"currency": "EUR"}}),
            "originalAmount.amount",
        ),
        (json!({}), "transactionAmount"),
    ] {
        let r = sb.post_json(&path, &body).await;
        r.assert_error_at(400, "FORMAT_ERROR", field);
    }
    let r = sb
        .set_balances(&format!("card-accounts/{card}"), "-1200.00", "28800.00")
        .await;
    let types: Vec<&str> = crate::common::field_strs(&r.json["balances"], "balanceType");
    assert_eq!(types, ["interimBooked", "interimAvailable"]);
    assert_eq!(r.json["balances"][0]["balanceAmount"], amount("-1200.00"));
    let r = sb
        .post_json(
            "/v1/sandbox/card-accounts/00000000-0000-4000-8000-000000000000/transactions",
            &json!({"transactionAmount": amount("-1.00")}),
        )
        .await;
    r.assert_error(404, "RESOURCE_UNKNOWN");
    // The card account interface lists the transaction and answers the set balances.
    let s = sca(&sb, c["customerNumber"].as_str().unwrap(), "PRIVATE").await;
    let listed = sb
        .get_with_ok(
            &format!("/v1/card-accounts/{card}/transactions?bookingStatus=booked"),
            &psu_headers(&s),
        )
        .await;
    let booked = listed.json["cardTransactions"]["booked"]
        .as_array()
        .unwrap();
    let mine: Vec<&Value> = booked
        .iter()
        .filter(|t| t["cardTransactionId"] == r_id)
        .collect();
    assert_eq!(
        mine.len(),
        1,
        "{} booked, none with id {r_id}",
        booked.len()
    );
    assert_eq!(mine[0]["transactionAmount"], amount("-499.00"));
    let b = sb
        .get_with_ok(
            &format!("/v1/card-accounts/{card}/balances"),
            &psu_headers(&s),
        )
        .await;
    let get = |t: &str| balance_of(&b.json, t)["balanceAmount"].clone();
    assert_eq!(get("interimBooked"), amount("-1200.00"));
    assert_eq!(get("interimAvailable"), amount("28800.00"));
    // A new card account for the customer.
    sb.post_created(
        "/v1/sandbox/card-accounts",
        &json!({"customerId": c["customerId"], "name": "Visa Reise"}),
    )
    .await;
    let listed = sb
        .get_with(c["_links"]["self"]["href"].as_str().unwrap(), &[])
        .await;
    assert_eq!(strings(&listed.json["cardAccounts"]).len(), 2);
}

#[tokio::test]
pub(crate) async fn agreement_grants_a_private_customer_the_corporate_context() {
    let sb = fixed_sandbox().await;
    let company = new_customer(&sb, "CORPORATE", "Sjøbris Rederi AS").await;
    let person = new_customer(&sb, "PRIVATE", "Marit Sund").await;
    let company_id = company["customerId"].as_str().unwrap();
    let company_accounts = strings(&company["accounts"]);
    let path = format!("/v1/sandbox/customers/{company_id}/agreements");
    let r = sb
        .post_created(
            &path,
            &json!({"holderCustomerNumber": person["customerNumber"],
                "accounts": [company_accounts[1]]}),
        )
        .await;
    let agreement = r.json.clone();
    let agreement_id = agreement["id"].as_str().unwrap().to_string();
    assert_eq!(
        strings(&agreement["engagements"]),
        [company_accounts[1].clone()]
    );

    // Both parties' listing elements show it, with links that work.
    let list = sb.customers().await;
    for c in [&company, &person] {
        let listed = list
            .iter()
            .find(|x| x["customerId"] == c["customerId"])
            .unwrap();
        assert_eq!(
            listed["agreements"].as_array().unwrap(),
            std::slice::from_ref(&agreement)
        );
    }
    let self_href = agreement["_links"]["self"]["href"].as_str().unwrap();
    let one = sb.get_ok(self_href).await;
    assert_eq!(one.json, agreement);
    let eng = sb
        .get_with_ok(
            agreement["_links"]["engagements"]["href"].as_str().unwrap(),
            &[],
        )
        .await;
    let eng_ids: Vec<&str> = crate::common::field_strs(&eng.json["engagements"], "resourceId");
    assert_eq!(eng_ids, [company_accounts[1].as_str()]);
    let held = sb
        .get(&format!(
            "/v1/sandbox/customers/{}/agreements",
            person["customerId"].as_str().unwrap()
        ))
        .await;
    assert_eq!(held.json, json!([agreement.clone()]));

    // The holder chooses the corporate context at SCA and sees only the granted account.
    let s = sca(
        &sb,
        person["customerNumber"].as_str().unwrap(),
        &format!("CORPORATE:{agreement_id}"),
    )
    .await;
    assert_eq!(s.corporate_id.as_deref(), Some(agreement_id.as_str()));
    let accounts = sb.get_with_ok("/v1/accounts", &psu_headers(&s)).await;
    let ids: Vec<&str> = crate::common::field_strs(&accounts.json["accounts"], "resourceId");
    assert_eq!(ids, [company_accounts[1].as_str()]);

    // Validation.
    let person_id = person["customerId"].as_str().unwrap();
    for (path, body, status, code) in [
        (
            format!("/v1/sandbox/customers/{person_id}/agreements"),
            json!({"holderCustomerId": company_id}),
            400,
            "PARAMETER_NOT_CONSISTENT",
        ),
        (
            path.clone(),
            json!({"holderCustomerId": company_id}),
            400,
            "PARAMETER_NOT_CONSISTENT",
        ),
        (
            path.clone(),
            json!({"holderCustomerId": "00000000-0000-4000-8000-000000000000"}),
            400,
            "RESOURCE_UNKNOWN",
        ),
        (path.clone(), json!({}), 400, "FORMAT_ERROR"),
        (
            path.clone(),
            json!({"holderCustomerId": person_id}),
            400,
            "PARAMETER_NOT_CONSISTENT",
        ),
        (
            path.clone(),
            json!({"holderCustomerNumber": "31125461118", "accounts": [person["accounts"][0]]}),
            400,
            "PARAMETER_NOT_CONSISTENT",
        ),
        (
            "/v1/sandbox/customers/00000000-0000-4000-8000-000000000000/agreements".to_string(),
            json!({"holderCustomerId": person_id}),
            404,
            "RESOURCE_UNKNOWN",
        ),
    ] {
        let r = sb.post_json(&path, &body).await;
        r.assert_error(status, code);
    }
    let r = sb
        .get(&format!(
            "/v1/sandbox/customers/{company_id}/agreements/00000000-0000-4000-8000-000000000000"
        ))
        .await;
    r.assert_error(404, "RESOURCE_UNKNOWN");

    // Deleting the agreement ends the corporate consent.
    let r = sb.delete(self_href).await;
    assert_eq!(r.status, 204, "{}", r.text);
    let r = sb.get_with("/v1/accounts", &psu_headers(&s)).await;
    r.assert_error(401, "CORPORATE_ID_INVALID");
}

#[tokio::test]
async fn seeded_agreement_links_point_to_the_sandbox_agreement_resources() {
    let sb = fixed_sandbox().await;
    let list = sb.customers().await;
    let mut seen = 0;
    for c in &list {
        for a in c["agreements"].as_array().unwrap() {
            seen += 1;
            let one = sb
                .get_with_ok(a["_links"]["self"]["href"].as_str().unwrap(), &[])
                .await;
            assert_eq!(&one.json, a);
            let eng = sb
                .get_with_ok(a["_links"]["engagements"]["href"].as_str().unwrap(), &[])
                .await;
            assert_eq!(
                eng.json["engagements"].as_array().unwrap().len(),
                a["engagements"].as_array().unwrap().len()
            );
        }
    }
    assert!(seen >= 2, "the seed has agreements");
}

#[tokio::test]
async fn management_input_never_gives_a_server_error() {
    let sb = fixed_sandbox().await;
    let some = sb.customers().await[0].clone();
    let cid = some["customerId"].as_str().unwrap().to_string();
    let account = some["accounts"][0].as_str().unwrap().to_string();
    let paths = [
        "/v1/sandbox/initialize".to_string(),
        "/v1/sandbox/customers".to_string(),
        format!("/v1/sandbox/customers/{cid}"),
        format!("/v1/sandbox/customers/{cid}/agreements"),
        format!("/v1/sandbox/customers/{cid}/agreements/x"),
        format!("/v1/sandbox/customers/{cid}/agreements/x/engagements"),
        "/v1/sandbox/accounts".to_string(),
        format!("/v1/sandbox/accounts/{account}/transactions"),
        format!("/v1/sandbox/accounts/{account}/balances"),
        "/v1/sandbox/card-accounts".to_string(),
        "/v1/sandbox/card-accounts/x/transactions".to_string(),
        "/v1/sandbox/card-accounts/x/balances".to_string(),
    ];
    let bodies = [
        "",
        "{}",
        "[]",
        "{\"a\":",
        "\u{0}",
        "{\"customerType\":\"PRIVATE\",\"customerName\":\"\\u0000\"}",
        "{\"transactionAmount\":{\"currency\":\"NOK\",\"amount\":\"99999999999999999999\"},\"creditorName\":\"x\"}",
        "{\"booked\":{\"currency\":\"NOK\",\"amount\":\"-0.01\"},\"available\":null}",
        "{\"customerId\":[1],\"name\":{\"a\":1}}",
        "{\"holderCustomerId\":\"\",\"accounts\":[null]}",
    ];
    for path in &paths {
        for method in ["GET", "POST", "PUT", "DELETE", "PATCH"] {
            if path.ends_with("/initialize") || (method == "DELETE" && path.contains(&cid)) {
                continue;
            }
            for body in &bodies {
                let r = sb.send(method, path, &[], Some(body)).await;
                assert!(
                    r.status < 500,
                    "{method} {path} {body:?} -> {} {}",
                    r.status,
                    r.text
                );
                if r.status >= 400 {
                    assert!(r.code().is_some(), "{method} {path}: {}", r.text);
                }
            }
        }
    }
}
