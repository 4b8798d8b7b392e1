//! Resource shapes shared by the console (which reads them) and the embedded sandbox (which
//! writes them).
//!
//! Sources: the interface document (Resources: "Sandbox customer"; "Account data facts";
//! Versioning: `amount-as-string`, `longer-names`, `cash-account-type-iso`) and, where the
//! document is silent, the Berlin Group schemas of `berlin-group-psd2-api-1.3.11.yaml`
//! (`accountDetails`, `cardAccountDetails`, `accountList`, `accountReference`, `amount`,
//! `balance`, `readAccountBalanceResponse-200`, `transactions`, `accountReport`,
//! `transactionsResponse-200_json`).
//!
//! Optional fields are omitted when empty; unknown fields are ignored on reading, so the
//! console can read real ASPSPs' richer bodies with the same types. Dates are kept as the
//! ISO 8601 strings sent (`YYYY-MM-DD`); amounts are decimal strings (`"-123.45"`).

use serde::{Deserialize, Serialize};

use super::links::Links;

/// `balanceType` values (Berlin Group `balanceType`) used by this project.
pub mod balance_type {
    /// Balance of the account at the end of the previous booking day.
    pub const CLOSING_BOOKED: &str = "closingBooked";
    /// Booked and pending entries together, at the time of the request.
    pub const EXPECTED: &str = "expected";
    /// Balance at the start of the booking day.
    pub const OPENING_BOOKED: &str = "openingBooked";
    /// Available balance during the day (pending debits deducted).
    pub const INTERIM_AVAILABLE: &str = "interimAvailable";
    /// Returned for card accounts when available (interface document, Account data facts).
    pub const INTERIM_BOOKED: &str = "interimBooked";
}

/// `bookingStatus` query values (Berlin Group `bookingStatusGeneric`; the interface document
/// names `both`, `pending` and `all`).
pub mod booking_status {
    /// Booked entries only.
    pub const BOOKED: &str = "booked";
    /// Pending entries only.
    pub const PENDING: &str = "pending";
    /// Booked and pending entries.
    pub const BOTH: &str = "both";
    /// Booked, pending and information entries (BG `all`).
    pub const ALL: &str = "all";
    /// Information entries (standing orders) only.
    pub const INFORMATION: &str = "information";
}

/// Berlin Group `amount`: `{"currency":"NOK","amount":"-123.45"}`. The amount is a string
/// (interface document, Versioning: `amount-as-string`, default since 2020-08-01).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Amount {
    /// ISO 4217 currency code, e.g. `NOK`.
    pub currency: String,
    /// Decimal amount with `.` and at most two decimals, e.g. `-123.45`.
    pub amount: String,
}

impl Amount {
    /// An amount from minor units (øre/cents, two decimals): `-12345` → `"-123.45"`.
    pub(crate) fn from_minor(currency: impl Into<String>, minor: i64) -> Self {
        Amount {
            currency: currency.into(),
            amount: format_minor(minor),
        }
    }

    /// The amount in minor units (two decimals), if it is a plain decimal with at most two
    /// fraction digits, e.g. `"-123.4"` → `-12340`.
    pub fn minor_units(&self) -> Option<i64> {
        parse_minor(&self.amount)
    }
}

/// Formats minor units with two decimals: `-5` → `"-0.05"`, `123456` → `"1234.56"`.
///
/// Written digit by digit into a `String` of its size (issue 23: `format!` was ~900
/// instructions per amount); the text of `format!("{sign}{}.{:02}", abs / 100, abs % 100)`.
pub(crate) fn format_minor(minor: i64) -> String {
    let abs = minor.unsigned_abs();
    let mut units = itoa::Buffer::new();
    let units = units.format(abs / 100);
    let cents = (abs % 100) as u8;
    let mut s = String::with_capacity(units.len() + 4);
    if minor < 0 {
        s.push('-');
    }
    s.push_str(units);
    s.push('.');
    s.push(char::from(b'0' + cents / 10));
    s.push(char::from(b'0' + cents % 10));
    s
}

/// Parses a decimal string with at most two fraction digits into minor units.
///
/// `None` for anything else (an empty integer part, a sign alone, more than two fraction
/// digits, any other character) and for a value outside `i64`.
pub fn parse_minor(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty()
        || frac.len() > 2
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let int: i64 = int.parse().ok()?;
    // The fraction's digits as cents ("5" is 50), not a padded text parsed (issue 23).
    let frac = frac
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(2)
        .fold(0, |n, d| n * 10 + i64::from(d - b'0'));
    let v = int.checked_mul(100)?.checked_add(frac)?;
    Some(if neg { -v } else { v })
}

/// Berlin Group `accountReference`: one account identifier and, optionally, the currency.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountReference {
    /// The account's IBAN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iban: Option<String>,
    /// The account's BBAN (11 digits in Norway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bban: Option<String>,
    /// A card's masked PAN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub masked_pan: Option<String>,
    /// ISO 4217 currency code, for a multi-currency account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
}

/// Berlin Group `accountDetails`, one element of `GET /v1/accounts`:
/// `resourceId`, `bban` (11 digits in Norway), `currency`, `name` (≤ 70 characters,
/// Versioning `longer-names`), `product`, `cashAccountType` (ISO 20022 code such as `CACC`,
/// Versioning `cash-account-type-iso`), `status`, `ownerName` (Account data facts) and
/// `_links` (`balances`, `transactions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountDetails {
    /// The account's id in `/v1/accounts/{account-id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    /// The account's IBAN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iban: Option<String>,
    /// The account's BBAN (11 digits in Norway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bban: Option<String>,
    /// ISO 4217 currency code.
    pub currency: String,
    /// The account's name (≤ 70 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The product name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// ISO 20022 cash account type, e.g. `CACC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cash_account_type: Option<String>,
    /// `enabled`, `blocked` or `deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The account owner's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_name: Option<String>,
    /// `balances`, `transactions`.
    #[serde(rename = "_links", default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Links>,
}

/// Body of `GET /v1/accounts/{id}`: `{"account": accountDetails}` (Berlin Group
/// "Read Account Details" response, `account` property).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AccountDetailsResponse {
    /// The account.
    pub account: AccountDetails,
}

/// Berlin Group `cardAccountDetails`, in the sandbox's order: `resourceId`, `maskedPan`,
/// `currency`, `ownerName`, `name` (≤ 70), `product`, `status` (`enabled`, `blocked` or
/// `deleted`; interface document: "Card account status is available in the card account
/// interface"), `usage` (`PRIV`), `creditLimit`, `_links` (`balances`, `transactions`). The
/// sandbox's card reads fill every field; its management listing leaves `usage` and
/// `creditLimit` out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CardAccountDetails {
    /// The card account's id in `/v1/card-accounts/{card-account-id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    /// The masked primary account number, e.g. `123456******1234`.
    pub masked_pan: String,
    /// ISO 4217 currency code.
    pub currency: String,
    /// The card holder's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_name: Option<String>,
    /// The account's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The product name (≤ 35 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// `enabled`, `blocked` or `deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `PRIV` (private) or `ORGA` (professional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
    /// The card account's credit limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit_limit: Option<Amount>,
    /// `balances`, `transactions`.
    #[serde(rename = "_links", default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Links>,
}

/// Berlin Group `accountList`: the body of `GET /v1/accounts`, `{"accounts":[...]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AccountList {
    /// The consented accounts.
    pub accounts: Vec<AccountDetails>,
}

/// Berlin Group `balance`: `balanceType` (see [`balance_type`]), `balanceAmount`,
/// `referenceDate` (`YYYY-MM-DD`). The currency of every balance equals the account currency
/// (interface document, Account data facts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Balance {
    /// A [`balance_type`] value.
    pub balance_type: String,
    /// The balance.
    pub balance_amount: Amount,
    /// The day the balance is for, `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_date: Option<String>,
}

/// Berlin Group `readAccountBalanceResponse-200`: the body of
/// `GET /v1/accounts/{id}/balances`, `{"account":{"bban","currency"},"balances":[...]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BalancesResponse {
    /// The account the balances are of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<AccountReference>,
    /// The balances.
    pub balances: Vec<Balance>,
}

/// Berlin Group `transactions` (transaction details), one entry of an account report.
///
/// Booked entries carry a stable `transactionId` (interface document, Account data facts;
/// release 1.18.0); pending entries may change between reads and have no `bookingDate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transaction {
    /// Stable id of a booked entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
    /// The ASPSP's entry reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_reference: Option<String>,
    /// Booking day, `YYYY-MM-DD`; absent on pending entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking_date: Option<String>,
    /// Value day, `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_date: Option<String>,
    /// The amount, negative for a debit.
    pub transaction_amount: Amount,
    /// The creditor's name (on debits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creditor_name: Option<String>,
    /// The creditor's account (on debits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creditor_account: Option<AccountReference>,
    /// The debtor's name (on credits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debtor_name: Option<String>,
    /// The debtor's account (on credits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debtor_account: Option<AccountReference>,
    /// Free-text remittance information (≤ 140 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remittance_information_unstructured: Option<String>,
    /// The bank's own transaction code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proprietary_bank_transaction_code: Option<String>,
}

impl Transaction {
    /// A transaction with its `transactionId`, `bookingDate` (`None`: pending), `valueDate`
    /// (ISO 8601 dates) and `transactionAmount`; parties, remittance and bank transaction
    /// code unset, for the caller to fill with struct update syntax.
    pub fn dated(
        transaction_id: String,
        booking_date: Option<chrono::NaiveDate>,
        value_date: chrono::NaiveDate,
        transaction_amount: Amount,
    ) -> Self {
        Transaction {
            transaction_id: Some(transaction_id),
            entry_reference: None,
            booking_date: booking_date.map(|d| d.to_string()),
            value_date: Some(value_date.to_string()),
            transaction_amount,
            creditor_name: None,
            creditor_account: None,
            debtor_name: None,
            debtor_account: None,
            remittance_information_unstructured: None,
            proprietary_bank_transaction_code: None,
        }
    }
}

/// Berlin Group `accountReport`: `booked` (present for `booked`, `both`, `all`), `pending`
/// (present for `pending`, `both`, `all`) and `_links` (`account`, and `first`, `next`,
/// `previous`, `last` when the booked list is paged; default page size 200, interface
/// document, Limits).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountReport {
    /// Booked entries, newest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booked: Option<Vec<Transaction>>,
    /// Pending entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Vec<Transaction>>,
    /// `account`, and the paging links.
    #[serde(rename = "_links", default)]
    pub links: Links,
}

/// Berlin Group `transactionsResponse-200_json`: the body of
/// `GET /v1/accounts/{id}/transactions`, `{"account":{...},"transactions":{...}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionsResponse {
    /// The account the report is of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<AccountReference>,
    /// The report.
    #[serde(default)]
    pub transactions: AccountReport,
}

/// `customerType` of a sandbox customer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum CustomerType {
    /// `PRIVATE`: a private person.
    Private,
    /// `CORPORATE`: a business (its users send `PSU-Corporate-ID`).
    Corporate,
}

impl CustomerType {
    /// The wire value, `PRIVATE` or `CORPORATE`.
    pub fn as_str(self) -> &'static str {
        match self {
            CustomerType::Private => "PRIVATE",
            CustomerType::Corporate => "CORPORATE",
        }
    }
}

/// Agreement element of a sandbox customer (interface document, Resources, "Sandbox
/// customer", all fields required): `id`, `name`, `engagements` (here: the `resourceId`s of
/// the accounts the agreement covers), `_links` with `self` and `engagements`, each
/// `{href, verbs}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxAgreement {
    /// The agreement's id.
    pub id: String,
    /// The agreement's name.
    pub name: String,
    /// `resourceId`s of the accounts it covers.
    pub engagements: Vec<String>,
    /// `self` and `engagements`, each `{href, verbs}`.
    #[serde(rename = "_links")]
    pub links: Links,
}

/// One element of `GET /v1/sandbox/customers` (interface document, Resources, "Sandbox
/// customer"; every field required, exactly these keys): `customerId`, `customerNumber`
/// (used to identify the PSU during sandbox SCA), `customerType`, `customerName`,
/// `agreements`, `accounts` and `cardAccounts` (`resourceId`s), `_links` with `self`
/// `{href, verbs}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxCustomer {
    /// The customer's id.
    pub customer_id: String,
    /// The number the PSU gives on the sandbox SCA page.
    pub customer_number: String,
    /// Private or corporate.
    pub customer_type: CustomerType,
    /// The customer's name.
    pub customer_name: String,
    /// The customer's agreements.
    #[serde(default)]
    pub agreements: Vec<SandboxAgreement>,
    /// `resourceId`s of the customer's accounts.
    #[serde(default)]
    pub accounts: Vec<String>,
    /// `resourceId`s of the customer's card accounts.
    #[serde(default)]
    pub card_accounts: Vec<String>,
    /// `self` `{href, verbs}`.
    #[serde(rename = "_links")]
    pub links: Links,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_round_trip_as_strings() {
        for (minor, text) in [
            (0, "0.00"),
            (-5, "-0.05"),
            (123_456, "1234.56"),
            (-12_345, "-123.45"),
        ] {
            let a = Amount::from_minor("NOK", minor);
            assert_eq!(a.amount, text);
            assert_eq!(a.minor_units(), Some(minor));
        }
        assert_eq!(parse_minor("12.5"), Some(1250));
        assert_eq!(parse_minor("7"), Some(700));
        for bad in ["", "-", "1.234", "1,00", "abc", ".5", "1.-2"] {
            assert_eq!(parse_minor(bad), None, "{bad:?}");
        }
        let json = serde_json::to_value(Amount::from_minor("NOK", -1)).unwrap();
        assert_eq!(json, serde_json::json!({"currency":"NOK","amount":"-0.01"}));
    }

    /// The digit-by-digit texts and values are those of the `format!`-based functions they
    /// replaced (issue 23), kept here as the reference: every value near 0, the cents, the
    /// powers of ten and the ends of `i64`; every text of up to 4 characters of
    /// `[0-9+-. ]` and longer ones with leading zeros, signs, spaces and overflow.
    #[test]
    fn minor_units_are_the_format_texts() {
        fn format_reference(minor: i64) -> String {
            let sign = if minor < 0 { "-" } else { "" };
            let abs = minor.unsigned_abs();
            format!("{sign}{}.{:02}", abs / 100, abs % 100)
        }
        fn parse_reference(s: &str) -> Option<i64> {
            let s = s.trim();
            let (neg, digits) = match s.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, s.strip_prefix('+').unwrap_or(s)),
            };
            let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
            if int.is_empty()
                || frac.len() > 2
                || !int.bytes().all(|b| b.is_ascii_digit())
                || !frac.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            let int: i64 = int.parse().ok()?;
            let frac: i64 = if frac.is_empty() {
                0
            } else {
                format!("{frac:0<2}").parse().ok()?
            };
            let v = int.checked_mul(100)?.checked_add(frac)?;
            Some(if neg { -v } else { v })
        }
        let mut values: Vec<i64> = (-1_000..=1_000).collect();
        for p in 0..19 {
            let t = 10_i64.pow(p);
            values.extend([t - 1, t, t + 1, -t - 1, -t, -t + 1, t * 9 + 99]);
        }
        values.extend([
            i64::MIN,
            i64::MIN + 1,
            i64::MAX,
            i64::MAX - 1,
            99_999_999_999,
        ]);
        for v in values {
            let text = format_minor(v);
            assert_eq!(text, format_reference(v), "{v}");
            assert_eq!(parse_minor(&text), parse_reference(&text), "{text}");
        }
        let alphabet = ['0', '1', '5', '9', '+', '-', '.', ' '];
        let mut texts = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = texts
                .iter()
                .filter(|t| t.len() == texts.last().map_or(0, String::len))
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(longer);
        }
        texts.extend(
            [
                "0000000000000000000000001.5",
                " +12.30 ",
                "-0.00",
                "92233720368547758.07",
                "92233720368547758.08",
                "-92233720368547758.07",
                "-92233720368547758.08",
                "99999999999999999999",
                "1.",
                "-.5",
                "1.x",
                "١.٥",
            ]
            .map(String::from),
        );
        for t in &texts {
            assert_eq!(parse_minor(t), parse_reference(t), "{t:?}");
        }
        assert!(texts.len() > 4_000);
    }

    #[test]
    fn optional_fields_are_omitted_and_unknown_ignored() {
        let t: Transaction = serde_json::from_value(serde_json::json!({
            "transactionAmount": {"currency": "NOK", "amount": "1.00"},
            "bookingDate": "2026-01-02",
            "somethingProprietary": 1
        }))
        .unwrap();
        assert_eq!(t.booking_date.as_deref(), Some("2026-01-02"));
        let back = serde_json::to_value(&t).unwrap();
        assert_eq!(
            back,
            serde_json::json!({
                "bookingDate": "2026-01-02",
                "transactionAmount": {"currency": "NOK", "amount": "1.00"}
            })
        );
    }
}
