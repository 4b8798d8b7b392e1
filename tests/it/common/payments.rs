//! Payment fixtures shared by the payment and basket tests: the seed's customers and
//! accounts, and a domestic credit transfer body.

#![allow(dead_code)]

use psd2_console::sandbox::domain::seed;
use psd2_console::sandbox::store::Account;
use serde_json::{Value, json};

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
