//! Payment fixtures shared by the payment and basket tests: the seed's customers and
//! accounts, and a domestic credit transfer body.

#![allow(dead_code)]

use psd2_console::sandbox::domain::seed;
use psd2_console::sandbox::store::Account;
use serde_json::{Value, json};

use super::sandbox::TestSandbox;

/// Kari Nordmann (private, with an agreement).
pub const KARI: &str = "31125461118";
/// Ingrid Berg (private, no agreement).
pub const INGRID: &str = "02079146148";
/// A valid Norwegian account number outside the sandbox (MOD11), from the bank's collection.
pub const CREDITOR_BBAN: &str = "12094355778";
/// The domestic product.
pub const DOMESTIC: &str = "norwegian-domestic-credit-transfers";

/// The seeded accounts of the customer with `number`.
pub fn accounts_of(number: &str) -> Vec<Account> {
    let s = seed::seed();
    let c = s.customers.iter().find(|c| c.number == number).unwrap();
    s.accounts
        .iter()
        .filter(|a| a.owner == c.id)
        .cloned()
        .collect()
}

/// The BBAN of that customer's first account.
pub fn first_bban(number: &str) -> String {
    accounts_of(number)[0].bban.clone()
}

/// A domestic credit transfer body from `debtor` to [`CREDITOR_BBAN`].
pub fn domestic(debtor: &str, amount: &str, remittance: &str) -> Value {
    json!({
        "debtorAccount": {"bban": debtor},
        "instructedAmount": {"currency": "NOK", "amount": amount},
        "creditorAccount": {"bban": CREDITOR_BBAN},
        "creditorName": "Foo Bar",
        "remittanceInformationUnstructured": remittance,
    })
}

/// [`domestic`] from Kari's first account (the payer of most payment tests).
pub fn kari_payment(amount: &str, remittance: &str) -> Value {
    domestic(&first_bban(KARI), amount, remittance)
}

/// Initiates [`kari_payment`] as a `product` payment (e.g. [`DOMESTIC`]), which must answer
/// 201; returns `(paymentId, scaRedirect)` ([`TestSandbox::create_payment`]).
pub async fn kari_pays(
    sb: &TestSandbox,
    product: &str,
    amount: &str,
    remittance: &str,
) -> (String, String) {
    sb.create_payment(product, &kari_payment(amount, remittance))
        .await
}

/// Initiates [`kari_payment`] as a [`DOMESTIC`] payment with the request `headers` (e.g.
/// `TPP-Session-ID`), which must answer 201; returns the answer.
pub async fn kari_initiates(
    sb: &TestSandbox,
    headers: &[(&str, &str)],
    amount: &str,
    remittance: &str,
) -> super::sandbox::Reply {
    let r = sb
        .initiate_with(DOMESTIC, headers, &kari_payment(amount, remittance))
        .await;
    r.assert_status(201);
    r
}
