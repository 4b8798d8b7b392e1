//! Account information over real HTTP through the sandbox's router, signed with the test
//! TPP, SCA done in the HTML pages: accounts and their field rules, transactions
//! (bookingStatus, dates, paging, stable ids, details), card accounts, the consent-creating
//! operations, revocation by the PSU, the 180-day renewal, PSU registration for PISP-only
//! TPPs and the PSU's corporate agreements. Every response is also checked against the
//! Berlin Group schemas by the test sandbox's observer.

use crate::common;

use std::time::Duration;

use common::sandbox::{Reply, TestSandbox, tpp_with_roles};
use common::{Form, page_text};
use psd2_console::cert::Psd2Role;
use psd2_console::xs2a::redirect::{PsuContext, ScaSuccess};
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// Helpers

use common::sca::{complete, fixed_sandbox, success, tick_all};

/// Ticks the accounts only (card accounts left as they are).
fn tick_accounts(f: &mut Form) {
    for (n, v) in f.unchecked.clone() {
        if n == "account" {
            f.check(&n, &v);
        }
    }
    for (n, v) in f.fields.clone() {
        if n == "cardAccount" {
            f.uncheck(&n, &v);
        }
    }
}

/// A private customer without agreements (own accounts and a card account).
async fn private_customer(sb: &TestSandbox) -> Value {
    let what = "with a card account and no agreements";
    private_where(sb, what, |agreements, cards| !agreements && cards).await
}

/// A private customer holding a corporate agreement.
async fn agreement_holder(sb: &TestSandbox) -> Value {
    private_where(sb, "with an agreement", |agreements, _| agreements).await
}

/// The first private customer whose (has agreements, has card accounts) `fits`; panics
/// naming `what` when there is none.
async fn private_where(sb: &TestSandbox, what: &str, fits: impl Fn(bool, bool) -> bool) -> Value {
    let has = |c: &Value, list: &str| c[list].as_array().is_some_and(|a| !a.is_empty());
    sb.customers()
        .await
        .into_iter()
        .find(|c| {
            c["customerType"] == "PRIVATE" && fits(has(c, "agreements"), has(c, "cardAccounts"))
        })
        .unwrap_or_else(|| panic!("a private customer {what}"))
}

fn number(c: &Value) -> String {
    c["customerNumber"].as_str().unwrap().to_string()
}

/// `GET /v1/accounts` without PSU-ID: the 401's scaRedirect.
async fn sca_link(sb: &TestSandbox, session: &str) -> String {
    let r = sb
        .get_with("/v1/accounts", &[("TPP-Session-ID", session)])
        .await;
    r.assert_error(401, "CONSENT_INVALID");
    r.sca_redirect().expect("scaRedirect").to_string()
}

/// A consent SCA in PRIVATE context for `c`, ticking everything.
async fn consent_all(sb: &TestSandbox, c: &Value, session: &str) -> ScaSuccess {
    approved_by(&sca_link(sb, session).await, c).await
}

/// The SCA at `href` approved by the private customer `c`, every account ticked.
async fn approved_by(href: &str, c: &Value) -> ScaSuccess {
    success(&complete(href, &number(c), "PRIVATE", tick_all, "Approve").await)
}

/// A sandbox on a fixed clock, its [`private_customer`] and that customer's
/// [`consent_all`] completed in `session`.
async fn consented(session: &str) -> (TestSandbox, Value, ScaSuccess) {
    let sb = fixed_sandbox().await;
    let c = private_customer(&sb).await;
    let ok = consent_all(&sb, &c, session).await;
    (sb, c, ok)
}

/// The `resourceId` of the first account `GET /v1/accounts` lists with the headers `psu`.
async fn first_account_id(sb: &TestSandbox, psu: &[(&str, &str)]) -> String {
    sb.get_with("/v1/accounts", psu)
        .await
        .first_resource_id("accounts")
}

fn accounts_of(r: &Reply) -> Vec<Value> {
    r.json["accounts"]
        .as_array()
        .unwrap_or_else(|| panic!("no accounts: {}", r.text))
        .clone()
}

fn booked(r: &Reply) -> Vec<Value> {
    r.json["transactions"]["booked"]
        .as_array()
        .unwrap_or_else(|| panic!("no booked: {}", r.text))
        .clone()
}

fn path_of(href: &str) -> String {
    if href.starts_with("http") {
        url::Url::parse(href).unwrap()[url::Position::BeforePath..].to_string()
    } else {
        href.to_string()
    }
}

fn date(s: &Value) -> chrono::NaiveDate {
    chrono::NaiveDate::parse_from_str(s.as_str().unwrap(), "%Y-%m-%d").unwrap()
}

const ISO_CASH_ACCOUNT_TYPES: [&str; 22] = [
    "CACC", "CARD", "CASH", "CHAR", "CISH", "COMM", "CPAC", "LLSV", "LOAN", "MGLD", "MOMA", "NFCA",
    "NREX", "ODFT", "ONDP", "OTHR", "SACC", "SLRY", "SVGS", "TAXE", "TRAN", "TRAS",
];

// ---------------------------------------------------------------------------------------
// Accounts

#[tokio::test]
pub(crate) async fn accounts_have_short_names_iso_cash_account_types_and_balances_in_their_currency()
 {
    let sb = fixed_sandbox().await;
    for c in [private_customer(&sb).await, agreement_holder(&sb).await] {
        let ok = consent_all(&sb, &c, &format!("names-{}", number(&c))).await;
        let psu = [("PSU-ID", ok.psu_id.as_str())];
        let r = sb.get_with_ok("/v1/accounts", &psu).await;
        let accounts = accounts_of(&r);
        assert!(!accounts.is_empty());
        for a in &accounts {
            let name = a["name"].as_str().unwrap();
            assert!(name.chars().count() <= 70, "{name}");
            let t = a["cashAccountType"].as_str().unwrap();
            assert!(ISO_CASH_ACCOUNT_TYPES.contains(&t), "{t} is ISO 20022");
            assert_eq!(a["ownerName"], c["customerName"]);
            let id = a["resourceId"].as_str().unwrap();
            let one = sb.get_with_ok(&format!("/v1/accounts/{id}"), &psu).await;
            assert_eq!(&one.json["account"], a);
            let b = sb
                .get_with_ok(&format!("/v1/accounts/{id}/balances"), &psu)
                .await;
            assert_eq!(b.json["account"]["currency"], a["currency"]);
            let balances = b.json["balances"].as_array().unwrap();
            assert!(!balances.is_empty());
            for bal in balances {
                assert_eq!(bal["balanceAmount"]["currency"], a["currency"], "{bal}");
                assert!(
                    bal["balanceAmount"]["amount"].is_string(),
                    "amount as string"
                );
            }
        }
    }
}

#[tokio::test]
pub(crate) async fn booked_transaction_ids_are_stable_across_calls_and_clock_advances() {
    let (sb, c, ok) = consented("stable").await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let id = first_account_id(&sb, &psu).await;
    let path = format!("/v1/accounts/{id}/transactions?bookingStatus=booked&limit=5000");
    let first = booked(&sb.get_with(&path, &psu).await);
    let again = booked(&sb.get_with(&path, &psu).await);
    assert_eq!(first, again, "two calls, same booked list");

    // Three days later (a new SCA: the session's hour is over), the same days' entries keep
    // their transactionId and content; newer ones come on top.
    sb.clock.advance(Duration::from_secs(3 * 24 * 3600));
    let ok = consent_all(&sb, &c, "stable-2").await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let later = booked(&sb.get_with(&path, &psu).await);
    assert!(later.len() > first.len());
    let newest_before = date(&first[0]["bookingDate"]);
    assert!(date(&later[0]["bookingDate"]) > newest_before);
    let mut ids: Vec<&str> = later
        .iter()
        .map(|t| t["transactionId"].as_str().unwrap())
        .collect();
    for t in &first {
        let found = later
            .iter()
            .find(|x| x["transactionId"] == t["transactionId"])
            .unwrap_or_else(|| panic!("{t} missing after the clock moved"));
        assert_eq!(found, t);
    }
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "transactionIds are unique");
}

#[tokio::test]
async fn default_transactions_page_is_200_with_next_and_previous_links() {
    let (sb, _, ok) = consented("paging").await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let id = first_account_id(&sb, &psu).await;
    let page1 = sb
        .get_with_ok(&format!("/v1/accounts/{id}/transactions"), &psu)
        .await;
    let b1 = booked(&page1);
    assert_eq!(b1.len(), 200, "default page size");
    let links = &page1.json["transactions"]["_links"];
    assert!(links["account"]["href"].is_string());
    assert!(links.get("previous").is_none());
    let next = links["next"]["href"].as_str().expect("a next link");
    assert!(next.contains("limit=200"), "{next}");
    let page2 = sb.get_with_ok(&path_of(next), &psu).await;
    let b2 = booked(&page2);
    assert!(!b2.is_empty());
    assert!(
        b2.iter().all(|t| !b1.contains(t)),
        "the next page continues"
    );
    assert!(date(&b2[0]["bookingDate"]) <= date(&b1[199]["bookingDate"]));
    let prev = page2.json["transactions"]["_links"]["previous"]["href"]
        .as_str()
        .expect("a previous link");
    let back = sb.get_with(&path_of(prev), &psu).await;
    assert_eq!(booked(&back), b1, "previous leads back to the first page");
}

#[tokio::test]
async fn transaction_pages_are_gzip_encoded_only_when_the_client_accepts_gzip() {
    let (sb, _, ok) = consented("gzip").await;
    let psu = ("PSU-ID", ok.psu_id.as_str());
    let id = accounts_of(&sb.get_with("/v1/accounts", &[psu]).await)[0]["resourceId"]
        .as_str()
        .unwrap()
        .to_string();
    gzip_only_when_accepted(&sb, &format!("/v1/accounts/{id}/transactions"), psu).await;
    // The card transaction page too (it was always sent plain before issue 23).
    let cards = sb.get_with_ok("/v1/card-accounts", &[psu]).await;
    let card = cards.json["cardAccounts"][0]["resourceId"]
        .as_str()
        .expect("a card account")
        .to_string();
    gzip_only_when_accepted(&sb, &format!("/v1/card-accounts/{card}/transactions"), psu).await;
}

/// `path` answers gzip (`Vary: Accept-Encoding`, the same page decoded) to every
/// `Accept-Encoding` that accepts it, and plain to the others and to none.
async fn gzip_only_when_accepted(sb: &TestSandbox, path: &str, psu: (&str, &str)) {
    let plain = sb.get_with_ok(path, &[psu]).await;
    assert!(plain.headers.get("content-encoding").is_none());
    for accept in ["gzip", "br;q=1.0, gzip;q=0.8", "*"] {
        let zipped = sb.get_with(path, &[psu, ("Accept-Encoding", accept)]).await;
        assert_eq!(zipped.status, 200);
        assert_eq!(
            zipped.headers["content-encoding"], "gzip",
            "{path} {accept}"
        );
        assert_eq!(zipped.headers["vary"], "accept-encoding");
        assert!(
            zipped.body.len() * 3 < plain.body.len(),
            "{path} {accept}: compressed"
        );
        let mut decoded = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&zipped.body[..]),
            &mut decoded,
        )
        .unwrap();
        assert_eq!(decoded, plain.body, "{path} {accept}: the same page");
    }
    for refuse in ["gzip;q=0", "identity", "br"] {
        let r = sb.get_with(path, &[psu, ("Accept-Encoding", refuse)]).await;
        assert!(
            r.headers.get("content-encoding").is_none(),
            "{path} {refuse}"
        );
        assert_eq!(r.body, plain.body, "{path} {refuse}");
    }
}

#[tokio::test]
async fn pending_transactions_are_always_all_returned_unfiltered() {
    let (sb, _, ok) = consented("pending").await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let accounts = accounts_of(&sb.get_with("/v1/accounts", &psu).await);
    let mut seen_pending = false;
    for a in &accounts {
        let id = a["resourceId"].as_str().unwrap();
        let base = format!("/v1/accounts/{id}/transactions");
        let pending = sb
            .get_with_ok(&format!("{base}?bookingStatus=pending"), &psu)
            .await;
        assert!(pending.json["transactions"].get("booked").is_none());
        let all_pending = pending.json["transactions"]["pending"].clone();
        seen_pending |= all_pending.as_array().is_some_and(|p| !p.is_empty());
        let today = chrono::DateTime::<chrono::Utc>::from(sb.now()).date_naive();
        let from = today - chrono::Duration::days(40);
        let to = today - chrono::Duration::days(20);
        let filtered = sb
            .get_with_ok(
                &format!("{base}?bookingStatus=both&dateFrom={from}&dateTo={to}&limit=1"),
                &psu,
            )
            .await;
        assert_eq!(
            filtered.json["transactions"]["pending"], all_pending,
            "dateFrom, dateTo and limit do not filter pending"
        );
        for t in booked(&filtered) {
            let d = date(&t["bookingDate"]);
            assert!(d >= from && d <= to, "{d} within {from}..{to}");
        }
        assert!(booked(&filtered).len() <= 1);
    }
    assert!(seen_pending, "a current account has pending transactions");
}

#[tokio::test]
async fn booking_status_all_adds_standing_orders_as_information() {
    let (sb, _, ok) = consented("all").await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let accounts = accounts_of(&sb.get_with("/v1/accounts", &psu).await);
    let mut orders = 0;
    for a in &accounts {
        let base = format!(
            "/v1/accounts/{}/transactions",
            a["resourceId"].as_str().unwrap()
        );
        let all = sb
            .get_with_ok(&format!("{base}?bookingStatus=all"), &psu)
            .await;
        let report = &all.json["transactions"];
        assert!(report["booked"].is_array() && report["pending"].is_array());
        let info = report["information"].as_array().expect("information");
        for i in info {
            let so = &i["additionalInformationStructured"]["standingOrderDetails"];
            assert!(
                so["startDate"].is_string() && so["frequency"].is_string(),
                "{i}"
            );
            assert_eq!(i["transactionAmount"]["currency"], a["currency"]);
            orders += 1;
        }
        let both = sb.get_with(&base, &psu).await;
        assert!(both.json["transactions"].get("information").is_none());
        assert_eq!(both.json["transactions"]["booked"], report["booked"]);
        let booked_only = sb
            .get_with(&format!("{base}?bookingStatus=booked"), &psu)
            .await;
        assert!(booked_only.json["transactions"].get("pending").is_none());
        let info_only = sb
            .get_with(&format!("{base}?bookingStatus=information"), &psu)
            .await;
        info_only.assert_error(400, "PARAMETER_NOT_SUPPORTED");
    }
    assert!(orders > 0, "the current account's standing order");
}

#[tokio::test]
async fn transaction_details_endpoint_answers_transactions_details() {
    let (sb, _, ok) = consented("details").await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let id = first_account_id(&sb, &psu).await;
    let list = sb
        .get_with(&format!("/v1/accounts/{id}/transactions"), &psu)
        .await;
    let b = booked(&list);
    let t = &b[3];
    let tid = t["transactionId"].as_str().unwrap();
    let href = t["_links"]["transactionDetails"]["href"]
        .as_str()
        .expect("a transactionDetails link on each listed transaction");
    let d = sb.get_with_ok(&path_of(href), &psu).await;
    let details = &d.json["transactionsDetails"]["transactionDetails"];
    assert_eq!(details["transactionId"], tid);
    assert_eq!(details["transactionAmount"], t["transactionAmount"]);
    assert_eq!(details["bookingDate"], t["bookingDate"]);
    assert!(details["entryReference"].is_string());
    assert!(details["additionalInformation"].is_string());
    let after = &details["balanceAfterTransaction"];
    assert_eq!(
        after["balanceAmount"]["currency"],
        t["transactionAmount"]["currency"]
    );
    // The balance after the newer entry = balance after this one + the newer amount.
    let newer = &b[2];
    let d2 = sb
        .get_with(
            &format!(
                "/v1/accounts/{id}/transactions/{}",
                newer["transactionId"].as_str().unwrap()
            ),
            &psu,
        )
        .await;
    let minor = |v: &Value| {
        psd2_console::xs2a::model::parse_minor(v.as_str().unwrap()).expect("a decimal amount")
    };
    assert_eq!(
        minor(
            &d2.json["transactionsDetails"]["transactionDetails"]["balanceAfterTransaction"]["balanceAmount"]
                ["amount"]
        ),
        minor(&after["balanceAmount"]["amount"]) + minor(&newer["transactionAmount"]["amount"])
    );
    if let Some(p) = t.get("additionalInformationProprietary1") {
        assert!(p.is_string());
    }
    let unknown = format!("/v1/accounts/{id}/transactions/{}", uuid::Uuid::new_v4());
    let unknown = sb.get_with(&unknown, &psu).await;
    unknown.assert_error(404, "RESOURCE_UNKNOWN");
}

// ---------------------------------------------------------------------------------------
// Card accounts

#[tokio::test]
async fn card_accounts_show_status_and_interim_booked_balances_in_their_currency() {
    let (sb, c, ok) = consented("cards").await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let r = sb.get_with_ok("/v1/card-accounts", &psu).await;
    let cards = r.json["cardAccounts"].as_array().unwrap().clone();
    let mut expected = crate::common::sandbox::strings(&c["cardAccounts"]);
    let mut got: Vec<String> = cards
        .iter()
        .map(|x| x["resourceId"].as_str().unwrap().to_string())
        .collect();
    expected.sort();
    got.sort();
    assert_eq!(got, expected, "the ticked card accounts");
    for card in &cards {
        let id = card["resourceId"].as_str().unwrap();
        assert!(
            ["enabled", "blocked", "deleted"].contains(&card["status"].as_str().unwrap()),
            "{card}"
        );
        assert!(card["maskedPan"].is_string());
        assert!(card["name"].as_str().unwrap().chars().count() <= 70);
        let one = sb
            .get_with_ok(&format!("/v1/card-accounts/{id}"), &psu)
            .await;
        assert_eq!(&one.json["cardAccount"], card);
        let b = sb
            .get_with_ok(&format!("/v1/card-accounts/{id}/balances"), &psu)
            .await;
        let balances = b.json["balances"].as_array().unwrap();
        assert!(
            balances.iter().any(|x| x["balanceType"] == "interimBooked"),
            "interimBooked for card accounts (2.16.0): {}",
            b.text
        );
        for bal in balances {
            assert_eq!(bal["balanceAmount"]["currency"], card["currency"]);
        }
        assert_eq!(b.json["cardAccount"]["maskedPan"], card["maskedPan"]);
    }
}

#[tokio::test]
async fn card_transactions_carry_the_acceptor_and_the_correct_amount_mapping() {
    let (sb, _, ok) = consented("card-tx").await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let card = sb.get_with("/v1/card-accounts", &psu).await.json["cardAccounts"][0].clone();
    let id = card["resourceId"].as_str().unwrap();
    let currency = card["currency"].as_str().unwrap();
    let path = format!("/v1/card-accounts/{id}/transactions?bookingStatus=BOTH&limit=5000");
    let r = sb.get_with_ok(&path, &psu).await;
    let report = &r.json["cardTransactions"];
    let booked = report["booked"].as_array().unwrap();
    assert!(report["pending"].is_array());
    assert!(report["_links"]["cardAccount"]["href"].is_string());
    let mut abroad = 0;
    for t in booked {
        assert_eq!(
            t["transactionAmount"]["currency"], currency,
            "billed in {currency}: {t}"
        );
        assert!(t["bookingDate"].is_string() && t["transactionDate"].is_string());
        assert!(t["cardTransactionId"].as_str().unwrap().len() <= 35);
        if t.get("cardAcceptorId").is_some() {
            assert!(t["cardAcceptorAddress"]["country"].is_string(), "{t}");
            assert_eq!(t["merchantCategoryCode"].as_str().unwrap().len(), 4);
            assert_eq!(t["maskedPAN"], card["maskedPan"]);
        }
        if let Some(orig) = t.get("originalAmount") {
            abroad += 1;
            assert_ne!(
                orig["currency"], currency,
                "original = the merchant's currency"
            );
            let sign = |v: &Value| v["amount"].as_str().unwrap().starts_with('-');
            assert_eq!(sign(orig), sign(&t["transactionAmount"]));
            assert_eq!(t["currencyExchange"][0]["targetCurrency"], currency);
        }
    }
    assert!(abroad > 0, "purchases abroad carry originalAmount");
    let again = sb.get_with(&path, &psu).await;
    assert_eq!(&again.json["cardTransactions"]["booked"], &report["booked"]);
    let bad = sb
        .get_with(
            &format!("/v1/card-accounts/{id}/transactions?bookingStatus=all"),
            &psu,
        )
        .await;
    bad.assert_error(400, "PARAMETER_NOT_SUPPORTED");
}

#[tokio::test]
pub(crate) async fn card_accounts_outside_the_consent_need_sca() {
    let sb = fixed_sandbox().await;
    let c = private_customer(&sb).await;
    let href = sca_link(&sb, "no-cards").await;
    let ok = success(&complete(&href, &number(&c), "PRIVATE", tick_accounts, "Approve").await);
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let r = sb.get_with_ok("/v1/card-accounts", &psu).await;
    assert_eq!(r.json["cardAccounts"], serde_json::json!([]));
    let card = c["cardAccounts"][0].as_str().unwrap();
    let r = sb
        .get_with(&format!("/v1/card-accounts/{card}"), &psu)
        .await;
    assert_eq!(r.status, 401, "{}", r.text);
    assert!(r.sca_redirect().is_some());
    let other = sb
        .get_with(
            &format!("/v1/card-accounts/{}/balances", uuid::Uuid::new_v4()),
            &psu,
        )
        .await;
    other.assert_error(403, "RESOURCE_UNKNOWN");
}

// ---------------------------------------------------------------------------------------
// Consents

#[tokio::test]
pub(crate) async fn bank_offered_consents_answers_201_with_an_sca_redirect() {
    let sb = fixed_sandbox().await;
    let c = private_customer(&sb).await;
    let r = sb
        .send(
            "POST",
            "/v1/bank-offered-consents",
            &[("TPP-Session-ID", "boc-1")],
            Some(r#"{"access":{},"recurringIndicator":true}"#),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["consentStatus"], "received");
    assert!(r.json["consentId"].is_string());
    assert!(r.json.get("tppMessages").is_none());
    // The answer's headers (pinned for issue 23's answer without `axum::Json`).
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(r.headers["aspsp-sca-approach"], "REDIRECT");
    assert_eq!(
        r.headers["content-length"].to_str().unwrap(),
        r.body.len().to_string()
    );
    let href = r.sca_redirect().expect("scaRedirect").to_string();
    let ok = approved_by(&href, &c).await;
    assert_eq!(ok.tpp_session_id, "boc-1");
    let psu = [("PSU-ID", ok.psu_id.as_str()), ("TPP-Session-ID", "boc-1")];
    let accounts = sb.get_with_ok("/v1/accounts", &psu).await;
    assert_eq!(
        accounts_of(&accounts).len(),
        c["accounts"].as_array().unwrap().len()
    );
    // Without a body it works too; a body that is not JSON is refused.
    let empty = sb
        .send("POST", "/v1/bank-offered-consents", &[], Some(""))
        .await;
    assert_eq!(empty.status, 201, "{}", empty.text);
    let bad = sb
        .send("POST", "/v1/bank-offered-consents", &[], Some("{not json"))
        .await;
    bad.assert_error(400, "FORMAT_ERROR");
}

#[tokio::test]
async fn deprecated_consents_ignores_the_body_and_warns() {
    let sb = fixed_sandbox().await;
    let c = private_customer(&sb).await;
    for body in ["{not json at all", r#"{"access":{"accounts":[]}}"#, ""] {
        let r = sb.send("POST", "/v1/consents", &[], Some(body)).await;
        assert_eq!(r.status, 201, "{body}: {}", r.text);
        assert_eq!(r.json["consentStatus"], "received");
        assert!(r.sca_redirect().is_some());
        let m = &r.json["tppMessages"][0];
        assert_eq!(
            (m["category"].as_str(), m["code"].as_str()),
            (Some("WARNING"), Some("WARNING"))
        );
        assert!(
            m["text"]
                .as_str()
                .unwrap()
                .contains("/v1/bank-offered-consents")
        );
        assert_eq!(r.headers["deprecation"], "true");
        assert!(
            r.headers["link"]
                .to_str()
                .unwrap()
                .contains("/v1/bank-offered-consents")
        );
        assert!(r.headers.get("warning").is_some());
    }
    let r = sb.send("POST", "/v1/consents", &[], Some("x")).await;
    let ok = approved_by(r.sca_redirect().unwrap(), &c).await;
    sb.get_with_ok("/v1/accounts", &[("PSU-ID", ok.psu_id.as_str())])
        .await;
}

#[tokio::test]
async fn consent_resource_status_follows_sca_revocation_and_delete() {
    let sb = fixed_sandbox().await;
    let c = private_customer(&sb).await;
    let status = |id: String| {
        let sb = &sb;
        async move {
            let r = sb.get_ok(&format!("/v1/consents/{id}/status")).await;
            r.json["consentStatus"].as_str().unwrap().to_string()
        }
    };
    // received → valid (SCA) → revokedByPsu (the PSU at the bank).
    let r = sb
        .send("POST", "/v1/bank-offered-consents", &[], None)
        .await;
    let id = r.json["consentId"].as_str().unwrap().to_string();
    assert_eq!(status(id.clone()).await, "received");
    let info = sb.get_ok(&format!("/v1/consents/{id}")).await;
    assert_eq!(info.json["consentStatus"], "received");
    let ok = approved_by(r.sca_redirect().unwrap(), &c).await;
    assert_eq!(status(id.clone()).await, "valid");
    let info = sb.get(&format!("/v1/bank-offered-consents/{id}")).await;
    assert_eq!(info.json["consentStatus"], "valid");
    let granted: Vec<&str> = info.json["access"]["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["bban"].as_str())
        .collect();
    assert_eq!(granted.len(), c["accounts"].as_array().unwrap().len());
    assert!(info.json["validUntil"].is_string() && info.json["frequencyPerDay"] == 4);
    sb.delete(&format!("/v1/sandbox/consents/{}", ok.psu_id))
        .await;
    assert_eq!(status(id.clone()).await, "revokedByPsu");

    // A new consent, then DELETE by the TPP: terminatedByTpp, and account access ends.
    let r = sb.send("POST", "/v1/consents/", &[], Some("{}")).await;
    assert_eq!(r.status, 201, "trailing slash: {}", r.text);
    let id2 = r.json["consentId"].as_str().unwrap().to_string();
    complete(
        r.sca_redirect().unwrap(),
        &number(&c),
        "PRIVATE",
        tick_all,
        "Approve",
    )
    .await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    assert_eq!(sb.get_with("/v1/accounts", &psu).await.status, 200);
    let d = sb.delete(&format!("/v1/consents/{id2}")).await;
    assert_eq!(d.status, 204, "{}", d.text);
    assert_eq!(status(id2).await, "terminatedByTpp");
    let r = sb.get_with("/v1/accounts", &psu).await;
    r.assert_error(401, "CONSENT_INVALID");
    assert!(r.sca_redirect().is_some());

    // A cancelled SCA: rejected. Unknown and foreign ids.
    let r = sb
        .send("POST", "/v1/bank-offered-consents", &[], None)
        .await;
    let id3 = r.json["consentId"].as_str().unwrap().to_string();
    complete(
        r.sca_redirect().unwrap(),
        &number(&c),
        "PRIVATE",
        |_| {},
        "Cancel",
    )
    .await;
    assert_eq!(status(id3.clone()).await, "rejected");
    let r = sb
        .get(&format!("/v1/consents/{}/status", uuid::Uuid::new_v4()))
        .await;
    r.assert_error(404, "RESOURCE_UNKNOWN");
    let other = tpp_with_roles(&[Psd2Role::PspAi]);
    let r = sb.get_as(&other, &format!("/v1/consents/{id3}"), &[]).await;
    r.assert_error(403, "CONSENT_UNKNOWN");
}

#[tokio::test]
async fn revocation_by_the_psu_makes_account_calls_answer_401_with_sca_redirect() {
    let (sb, c, ok) = consented("revoke").await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let id = first_account_id(&sb, &psu).await;

    let r = sb
        .delete(&format!("/v1/sandbox/consents/{}", ok.psu_id))
        .await;
    assert_eq!(r.status, 204, "{}", r.text);
    assert!(r.text.is_empty());
    for path in [
        "/v1/accounts".to_string(),
        format!("/v1/accounts/{id}/balances"),
        format!("/v1/accounts/{id}/transactions"),
        "/v1/card-accounts".to_string(),
    ] {
        let r = sb.get_with(&path, &psu).await;
        assert_eq!(
            (r.status, r.code()),
            (401, Some("CONSENT_INVALID")),
            "{path}: {}",
            r.text
        );
        assert!(r.sca_redirect().is_some(), "{path}");
    }
    // A new SCA gives a valid consent again, with the same PSU-ID.
    let again = consent_all(&sb, &c, "revoke-2").await;
    assert_eq!(again.psu_id, ok.psu_id);
    sb.get_with_ok("/v1/accounts", &psu).await;
    let unknown = sb
        .delete(&format!("/v1/sandbox/consents/{}", uuid::Uuid::new_v4()))
        .await;
    unknown.assert_error(404, "RESOURCE_UNKNOWN");
}

#[tokio::test]
async fn consent_needs_renewal_by_sca_after_180_days() {
    let (sb, c, ok) = consented("renewal").await;
    // PSU not present: only the consent's age matters (not the 1-hour session).
    let unattended = [("PSU-ID", ok.psu_id.as_str()), ("PSU-IP-Address", "")];
    sb.clock.advance(Duration::from_secs(179 * 24 * 3600));
    let r = sb.get_with("/v1/accounts", &unattended).await;
    assert_eq!(r.status, 200, "day 179: {}", r.text);
    sb.clock.advance(Duration::from_secs(2 * 24 * 3600));
    for headers in [&unattended[..], &[("PSU-ID", ok.psu_id.as_str())][..]] {
        let r = sb.get_with("/v1/accounts", headers).await;
        r.assert_error(401, "CONSENT_EXPIRED");
        assert!(r.sca_redirect().is_some());
    }
    // Renewal by SCA: the accounts consented before are pre-selected.
    let href = sca_link(&sb, "renewal-2").await;
    let renewed = success(&complete(&href, &number(&c), "PRIVATE", |_| {}, "Approve").await);
    assert_eq!(renewed.psu_id, ok.psu_id);
    let r = sb.get_with_ok("/v1/accounts", &unattended).await;
    assert_eq!(
        accounts_of(&r).len(),
        c["accounts"].as_array().unwrap().len()
    );
}

// ---------------------------------------------------------------------------------------
// PSU

#[tokio::test]
async fn users_registers_the_psu_of_a_pisp_only_tpp_by_sca() {
    let sb = fixed_sandbox().await;
    let c = private_customer(&sb).await;
    let pisp = tpp_with_roles(&[Psd2Role::PspPi]);
    for path in ["/v1/users", "/v1/user"] {
        let r = sb.get_as(&pisp, path, &[("TPP-Session-ID", "reg-1")]).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
        assert!(r.sca_redirect().is_some(), "{path}");
    }
    let r = sb
        .get_as(&pisp, "/v1/users", &[("TPP-Session-ID", "reg-2")])
        .await;
    let href = r.sca_redirect().unwrap().to_string();
    let page = page_text(&href).await;
    assert!(
        page.contains("register"),
        "the page says it is a registration"
    );
    // The registration SCA has no consent step: the login ends it.
    let loc = complete(
        &href,
        &number(&c),
        "PRIVATE",
        |_| panic!("no consent step"),
        "Approve",
    )
    .await;
    let ok = success(&loc);
    assert_eq!(ok.context, PsuContext::Private);
    assert_eq!(ok.tpp_session_id, "reg-2");
    uuid::Uuid::parse_str(&ok.psu_id).unwrap();

    // The PSU-ID works where a PSU is needed (its agreements), not for account data.
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let a = sb.get_as(&pisp, "/v1/agreements", &psu).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.json["agreements"], serde_json::json!([]));
    let r = sb.get_as(&pisp, "/v1/accounts", &psu).await;
    r.assert_error(401, "ROLE_INVALID");

    // A TPP without PSP_PI cannot register PSUs this way.
    let aisp = tpp_with_roles(&[Psd2Role::PspAi]);
    let r = sb.get_as(&aisp, "/v1/users", &[]).await;
    r.assert_error(401, "ROLE_INVALID");
}

#[tokio::test]
async fn agreements_lists_the_corporate_agreements_of_the_psu() {
    let sb = fixed_sandbox().await;
    let holder = agreement_holder(&sb).await;
    // Without a PSU-ID: 401 with a (registration) scaRedirect.
    let r = sb.get("/v1/agreements").await;
    r.assert_error(401, "CONSENT_INVALID");
    let href = r.sca_redirect().unwrap().to_string();
    let ok = success(&complete(&href, &number(&holder), "PRIVATE", |_| {}, "Approve").await);
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let r = sb.get_with_ok("/v1/agreements", &psu).await;
    let listed = r.json["agreements"].as_array().unwrap();
    let expected = holder["agreements"].as_array().unwrap();
    let ids = |v: &[Value]| {
        let mut x: Vec<String> = v
            .iter()
            .map(|a| a["id"].as_str().unwrap().to_string())
            .collect();
        x.sort();
        x
    };
    assert_eq!(ids(&listed[..]), ids(&expected[..]));
    let a = &listed[0];
    let one = sb
        .get_with_ok(
            &path_of(a["_links"]["self"]["href"].as_str().unwrap()),
            &psu,
        )
        .await;
    assert_eq!(&one.json, a);
    let e = sb
        .get_with_ok(
            &path_of(a["_links"]["engagements"]["href"].as_str().unwrap()),
            &psu,
        )
        .await;
    let engaged: Vec<&str> = crate::common::field_strs(&e.json["engagements"], "resourceId");
    let listed_engagements: Vec<&str> = a["engagements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(engaged, listed_engagements);
    let foreign = sb
        .get_with(&format!("/v1/agreements/{}", uuid::Uuid::new_v4()), &psu)
        .await;
    foreign.assert_error(403, "RESOURCE_UNKNOWN");
    let not_a_uuid = [("PSU-ID", "not-a-uuid")];
    let bad = sb.get_with("/v1/agreements", &not_a_uuid).await;
    bad.assert_error(400, "FORMAT_ERROR");
}

#[tokio::test]
async fn corporate_psu_without_psu_corporate_id_gets_400() {
    let sb = fixed_sandbox().await;
    let holder = agreement_holder(&sb).await;
    let agreement = holder["agreements"][0]["id"].as_str().unwrap().to_string();
    let href = sca_link(&sb, "corp").await;
    let ok = success(
        &complete(
            &href,
            &number(&holder),
            &format!("CORPORATE:{agreement}"),
            tick_all,
            "Approve",
        )
        .await,
    );
    assert_eq!(ok.psu_corporate_id.as_deref(), Some(agreement.as_str()));
    let with = [
        ("PSU-ID", ok.psu_id.as_str()),
        ("PSU-Corporate-ID", agreement.as_str()),
    ];
    sb.get_with_ok("/v1/accounts", &with).await;
    let without = [("PSU-ID", ok.psu_id.as_str())];
    let r = sb.get_with("/v1/accounts", &without).await;
    r.assert_error(400, "FORMAT_ERROR");
    assert!(r.text.contains("PSU-Corporate-ID"));
    // The agreement listing needs no PSU-Corporate-ID.
    sb.get_with_ok("/v1/agreements", &without).await;
}

/// Authentication 12 ("PSU-CORPORATE-ID ... obtained ... by choosing from /v1/agreements when
/// a PSU-ID exists") with the payment operation's `X-PSU-IDENTITY` ("a PSU-ID is then
/// created"): the PSU-ID the single-SCA payment flow created is a registered PSU-ID of that
/// TPP, so `/v1/agreements` lists the PSU's agreements; account data still needs a consent
/// (401 with scaRedirect), whose SCA gives the same PSU-ID; another TPP does not know it.
#[tokio::test]
async fn a_psu_id_created_by_x_psu_identity_is_known_to_agreements() {
    let sb = fixed_sandbox().await;
    let holder = agreement_holder(&sb).await;
    let seed = psd2_console::sandbox::domain::seed::seed();
    let customer = seed
        .customers
        .iter()
        .find(|c| c.number == number(&holder))
        .unwrap();
    let debtor = seed
        .accounts
        .iter()
        .find(|a| a.owner == customer.id)
        .unwrap()
        .bban
        .clone();
    let body = serde_json::json!({
        "debtorAccount": {"bban": debtor},
        "instructedAmount": {"currency": "NOK", "amount": "12.00"},
        "creditorAccount": {"bban": "12094355778"},
        "creditorName": "Foo Bar",
        "remittanceInformationUnstructured": "single SCA",
    });
    let p = sb
        .send(
            "POST",
            "/v1/payments/norwegian-domestic-credit-transfers",
            &[("X-PSU-IDENTITY", number(&holder).as_str())],
            Some(&body.to_string()),
        )
        .await;
    assert_eq!(p.status, 201, "{}", p.text);
    let psu_id = p.header("psu-id");
    let psu = [("PSU-ID", psu_id.as_str())];
    let r = sb.get_with_ok("/v1/agreements", &psu).await;
    let listed: Vec<&str> = crate::common::field_strs(&r.json["agreements"], "id");
    let held: Vec<&str> = crate::common::field_strs(&holder["agreements"], "id");
    assert_eq!(listed, held);
    sb.get_with_ok(&format!("/v1/agreements/{}/engagements", listed[0]), &psu)
        .await;
    // Account data needs the PSU's consent: 401 with an SCA that gives the same PSU-ID.
    let a = sb.get_with("/v1/accounts", &psu).await;
    a.assert_error(401, "CONSENT_INVALID");
    let href = a.sca_redirect().unwrap().to_string();
    let ok = approved_by(&href, &holder).await;
    assert_eq!(ok.psu_id, psu_id);
    sb.get_with_ok("/v1/accounts", &psu).await;
    // PSU-IDs are per TPP: another TPP has to register the PSU itself.
    let other = tpp_with_roles(&[Psd2Role::PspPi]);
    let r = sb.get_as(&other, "/v1/agreements", &psu).await;
    r.assert_error(401, "CONSENT_INVALID");
    assert!(r.sca_redirect().is_some());
}
