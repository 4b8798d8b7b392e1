//! `sandbox serve --seed FILE` (issue 22): the sandbox's customers, accounts (with their
//! opening balances), card accounts, transactions and corporate agreements from a TOML or
//! JSON file instead of the built-in seed ([`crate::sandbox::domain::seed`]), validated, every error naming
//! the file's line.
//!
//! ```toml
//! builtin = false                  # also keep the built-in customers (default false)
//!
//! [[customers]]
//! customerNumber = "01017012345"   # PRIVATE: 11 digits; CORPORATE: 9 digits; unique
//! customerType = "PRIVATE"         # PRIVATE (default) or CORPORATE
//! customerName = "Siri Seed"       # at most 70 characters
//! employer = "Seed AS"             # optional
//!
//! [[customers.accounts]]
//! bban = "15030012345"             # optional (generated); 11 digits with a MOD11 check digit; unique
//! name = "Brukskonto"              # at most 70 characters
//! currency = "NOK"                 # default NOK
//! product = "Brukskonto"           # default the name
//! cashAccountType = "CACC"         # default CACC
//! balance = "1000.00"              # opening balance, default 0.00
//!
//! [[customers.accounts.transactions]]
//! amount = "-250.00"               # non-zero; negative = money out
//! bookingDate = "2026-01-05"       # booked on that day (not in the future); absent = pending
//! valueDate = "2026-01-05"         # default the booking date (pending: today)
//! creditorName = "Kiwi"            # optional: the counterparty and the text
//! creditorAccount = "15031234562"  # optional BBAN
//! debtorName = "Arbeidsgiver AS"
//! debtorAccount = "15031234562"
//! remittanceInformationUnstructured = "Varekjøp"
//!
//! [[customers.cardAccounts]]
//! maskedPan = "516812******1234"   # optional (generated)
//! name = "Mastercard"
//! currency = "NOK"
//! product = "Kredittkort"
//!
//! [[agreements]]                   # a private customer acting for a corporate one
//! holder = "01017012345"           # customerNumber of a PRIVATE customer of the file
//! company = "912345602"            # customerNumber of a CORPORATE customer of the file
//! accounts = ["15030098762"]       # BBANs of the company's accounts; default all of them
//! name = "Fullmakt"                # optional
//! ```
//!
//! The same in JSON: one object with `builtin`, `customers` and `agreements`, the same field
//! names. The balances follow from the opening `balance` and the transactions (booked ones
//! move the booked balance, all of them the available one), as for accounts created through
//! sandbox management; seeded accounts get no generated history. Ids are UUID v5 of the
//! numbers, so a file gives the same ids every time.
//!
//! Where a check needs more than one value (a duplicate customerNumber or BBAN, an unknown
//! holder or company, a number of the wrong length for the type) the line named is that of
//! the value's occurrence in the file.

use std::path::Path;
use std::time::SystemTime;

use chrono::NaiveDate;
use serde::{Deserialize, Deserializer};
use uuid::Uuid;

use crate::sandbox::domain::manage::CASH_ACCOUNT_TYPES;
use crate::sandbox::domain::seed;
use crate::sandbox::model::{
    Account, AccountKind, Agreement, CardAccount, Customer, ManualTransaction, SeedData,
};
use crate::xs2a::check_digits::is_norwegian_bban;
use crate::xs2a::model::{CustomerType, parse_minor};

/// Longest name, characters (as in sandbox management).
const MAX_NAME: usize = 70;

/// Longest `remittanceInformationUnstructured`, characters.
const MAX_REMITTANCE: usize = 140;

/// An error in a seed file: where and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct SeedFileError {
    /// The file as given.
    /// The seed file, as given.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong, one sentence.
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileSeed {
    #[serde(default)]
    builtin: bool,
    #[serde(default)]
    customers: Vec<FileCustomer>,
    #[serde(default)]
    agreements: Vec<FileAgreement>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileCustomer {
    #[serde(deserialize_with = "digits")]
    customer_number: String,
    #[serde(default, deserialize_with = "customer_type")]
    customer_type: Option<CustomerType>,
    #[serde(deserialize_with = "name")]
    customer_name: String,
    #[serde(default, deserialize_with = "opt_name")]
    employer: Option<String>,
    #[serde(default)]
    accounts: Vec<FileAccount>,
    #[serde(default)]
    card_accounts: Vec<FileCard>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileAccount {
    #[serde(default, deserialize_with = "opt_bban")]
    bban: Option<String>,
    #[serde(deserialize_with = "name")]
    name: String,
    #[serde(default, deserialize_with = "opt_currency")]
    currency: Option<String>,
    #[serde(default, deserialize_with = "opt_name")]
    product: Option<String>,
    #[serde(default, deserialize_with = "opt_cash_account_type")]
    cash_account_type: Option<String>,
    #[serde(default, deserialize_with = "opt_amount")]
    balance: Option<i64>,
    #[serde(default)]
    transactions: Vec<FileTransaction>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileTransaction {
    #[serde(deserialize_with = "amount")]
    amount: i64,
    #[serde(default, deserialize_with = "opt_date")]
    booking_date: Option<NaiveDate>,
    #[serde(default, deserialize_with = "opt_date")]
    value_date: Option<NaiveDate>,
    #[serde(default, deserialize_with = "opt_name")]
    creditor_name: Option<String>,
    #[serde(default, deserialize_with = "opt_bban")]
    creditor_account: Option<String>,
    #[serde(default, deserialize_with = "opt_name")]
    debtor_name: Option<String>,
    #[serde(default, deserialize_with = "opt_bban")]
    debtor_account: Option<String>,
    #[serde(default, deserialize_with = "opt_remittance")]
    remittance_information_unstructured: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileCard {
    #[serde(default, deserialize_with = "opt_masked_pan")]
    masked_pan: Option<String>,
    #[serde(deserialize_with = "name")]
    name: String,
    #[serde(default, deserialize_with = "opt_currency")]
    currency: Option<String>,
    #[serde(default, deserialize_with = "opt_name")]
    product: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileAgreement {
    #[serde(deserialize_with = "digits")]
    holder: String,
    #[serde(deserialize_with = "digits")]
    company: String,
    #[serde(default)]
    accounts: Option<Vec<String>>,
    #[serde(default, deserialize_with = "opt_name")]
    name: Option<String>,
}

// ---------------------------------------------------------------------------------------
// Field checks (serde errors, so both formats name the line of the value)

fn custom<E: serde::de::Error>(msg: String) -> E {
    E::custom(msg)
}

fn digits<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    let t: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '.')
        .collect();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(custom(format!("{s:?} is not a customerNumber (digits)")));
    }
    Ok(t)
}

fn customer_type<'de, D: Deserializer<'de>>(d: D) -> Result<Option<CustomerType>, D::Error> {
    match String::deserialize(d)?.as_str() {
        "PRIVATE" => Ok(Some(CustomerType::Private)),
        "CORPORATE" => Ok(Some(CustomerType::Corporate)),
        other => Err(custom(format!(
            "customerType {other:?} is not PRIVATE or CORPORATE"
        ))),
    }
}

fn check_name<E: serde::de::Error>(s: String, max: usize) -> Result<String, E> {
    if s.trim().is_empty() {
        return Err(custom("a name must not be blank".into()));
    }
    if s.chars().count() > max {
        return Err(custom(format!("{s:?} is longer than {max} characters")));
    }
    if s.chars().any(char::is_control) {
        return Err(custom(format!("{s:?} holds a control character")));
    }
    Ok(s)
}

fn name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    check_name(String::deserialize(d)?, MAX_NAME)
}

fn opt_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    check_name(String::deserialize(d)?, MAX_NAME).map(Some)
}

fn opt_remittance<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    check_name(String::deserialize(d)?, MAX_REMITTANCE).map(Some)
}

fn opt_bban<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = String::deserialize(d)?;
    let t: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '.')
        .collect();
    if !is_norwegian_bban(&t) {
        return Err(custom(format!(
            "{s:?} is not a Norwegian BBAN (11 digits, the last a MOD11 check digit)"
        )));
    }
    Ok(Some(t))
}

fn opt_currency<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = String::deserialize(d)?;
    if !crate::xs2a::identifiers::is_currency(&s) {
        return Err(custom(format!("{s:?} is not an ISO 4217 currency code")));
    }
    Ok(Some(s))
}

fn opt_cash_account_type<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = String::deserialize(d)?;
    if !CASH_ACCOUNT_TYPES.contains(&s.as_str()) {
        return Err(custom(format!(
            "cashAccountType {s:?} is not an ISO 20022 cash account type code ({})",
            CASH_ACCOUNT_TYPES.join(", ")
        )));
    }
    Ok(Some(s))
}

/// An amount as a decimal string (`"-12.50"`) or a number with at most two decimals.
#[derive(Deserialize)]
#[serde(untagged)]
enum AmountText {
    Text(String),
    Integer(i64),
    Float(f64),
}

fn amount<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let text = match AmountText::deserialize(d)? {
        AmountText::Text(s) => s,
        AmountText::Integer(i) => i.to_string(),
        AmountText::Float(f) => f.to_string(),
    };
    parse_minor(&text).ok_or_else(|| {
        custom(format!(
            "{text:?} is not an amount (a decimal such as \"-125.50\", at most two decimals)"
        ))
    })
}

fn opt_amount<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    amount(d).map(Some)
}

fn opt_date<'de, D: Deserializer<'de>>(d: D) -> Result<Option<NaiveDate>, D::Error> {
    let s = String::deserialize(d)?;
    NaiveDate::parse_from_str(&s, "%Y-%m-%d")
        .map(Some)
        .map_err(|_| custom(format!("{s:?} is not a date (YYYY-MM-DD)")))
}

fn opt_masked_pan<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = String::deserialize(d)?;
    let ok = (12..=19).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit() || b == b'*');
    if !ok {
        return Err(custom(format!(
            "{s:?} is not a masked PAN (12 to 19 digits and '*')"
        )));
    }
    Ok(Some(s))
}

// ---------------------------------------------------------------------------------------
// Reading

/// 1-based line of byte `offset` in `text`.
fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(offset)
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The line of the `nth` (0-based) quoted occurrence of `value` in `text`.
fn line_of(text: &str, value: &str, nth: usize) -> Option<usize> {
    let mut hits: Vec<usize> = ['"', '\'']
        .iter()
        .flat_map(|q| {
            let needle = format!("{q}{value}{q}");
            text.match_indices(&needle)
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
        })
        .collect();
    hits.sort_unstable();
    hits.get(nth).map(|&i| line_at(text, i))
}

fn id(kind: &str, key: &str) -> Uuid {
    Uuid::new_v5(
        &seed::namespace(),
        format!("seed-file:{kind}:{key}").as_bytes(),
    )
}

/// A number from the first eight bytes of [`id`]`(kind, key)`, for generated BBANs and PANs.
fn number_from(kind: &str, key: &str) -> u64 {
    let b = id(kind, key).into_bytes();
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// Parses `text` (JSON when `file` ends in `.json` or the text starts with `{`, else TOML).
fn parse(text: &str, file: &str) -> Result<FileSeed, SeedFileError> {
    let json = file.to_ascii_lowercase().ends_with(".json") || text.trim_start().starts_with('{');
    if json {
        serde_json::from_str(text).map_err(|e| {
            let full = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            SeedFileError {
                file: file.to_string(),
                line: (e.line() > 0).then_some(e.line()),
                message: full.strip_suffix(&suffix).unwrap_or(&full).to_string(),
            }
        })
    } else {
        toml::from_str(text).map_err(|e| SeedFileError {
            file: file.to_string(),
            line: e.span().map(|s| line_at(text, s.start)),
            message: e.message().trim().to_string(),
        })
    }
}

/// The seed data in `text` (the content of `file`), checked: the field checks above, then
/// unique customerNumbers, BBANs and masked PANs, the number's length for the type (11
/// digits PRIVATE, 9 CORPORATE), booking dates not after `today`, agreements between a
/// private holder and a corporate company of the file on the company's accounts.
/// `now` stamps the transactions' creation.
///
/// Errors: the first problem, with its line ([`SeedFileError`]).
pub fn parse_seed(
    text: &str,
    file: &str,
    today: NaiveDate,
    now: SystemTime,
) -> Result<SeedData, SeedFileError> {
    let f = parse(text, file)?;
    let err = |value: &str, nth: usize, message: String| SeedFileError {
        file: file.to_string(),
        line: line_of(text, value, nth),
        message,
    };
    let mut data = if f.builtin {
        seed::seed()
    } else {
        SeedData::default()
    };
    let mut seen_bbans: Vec<String> = data.accounts.iter().map(|a| a.bban.clone()).collect();
    let mut seen_pans: Vec<String> = data
        .card_accounts
        .iter()
        .map(|c| c.masked_pan.clone())
        .collect();
    let mut generated = 0u64;
    for c in &f.customers {
        let kind = c.customer_type.unwrap_or(CustomerType::Private);
        let number = &c.customer_number;
        let want = match kind {
            CustomerType::Private => 11,
            CustomerType::Corporate => 9,
        };
        if number.len() != want {
            return Err(err(
                number,
                0,
                format!(
                    "customerNumber {number} of a {} customer must have {want} digits",
                    kind.as_str()
                ),
            ));
        }
        if data.customers.iter().any(|x| &x.number == number) {
            return Err(err(
                number,
                1,
                format!("customerNumber {number} is given twice"),
            ));
        }
        let customer = Customer {
            id: id("customer", number),
            number: number.clone(),
            kind,
            name: c.customer_name.clone(),
            employer: c.employer.clone().unwrap_or_default(),
        };
        for a in &c.accounts {
            let bban = match &a.bban {
                Some(b) => b.clone(),
                None => loop {
                    generated += 1;
                    let b = seed::bban_from(number_from("bban", &format!("{number}:{generated}")));
                    if !seen_bbans.contains(&b) {
                        break b;
                    }
                },
            };
            if seen_bbans.contains(&bban) {
                return Err(err(&bban, 1, format!("bban {bban} is given twice")));
            }
            seen_bbans.push(bban.clone());
            let account = Account {
                id: id("account", &bban),
                owner: customer.id,
                kind: match kind {
                    CustomerType::Private => AccountKind::Current,
                    CustomerType::Corporate => AccountKind::Operating,
                },
                bban: bban.clone(),
                currency: a
                    .currency
                    .clone()
                    .unwrap_or_else(|| seed::CURRENCY.to_string()),
                name: a.name.clone(),
                product: a.product.clone().unwrap_or_else(|| a.name.clone()),
                cash_account_type: a.cash_account_type.clone().unwrap_or_else(|| "CACC".into()),
                opening_balance: a.balance.unwrap_or(0),
                generated: false,
            };
            for (i, t) in a.transactions.iter().enumerate() {
                if t.amount == 0 {
                    return Err(err(
                        &bban,
                        0,
                        format!(
                            "transaction {} of account {bban} has amount zero; negative is money \
                             out, positive money in",
                            i + 1
                        ),
                    ));
                }
                if let Some(d) = t.booking_date
                    && d > today
                {
                    let d = d.to_string();
                    return Err(err(
                        &d,
                        0,
                        format!(
                            "bookingDate {d} is in the future (today is {today}); leave it out \
                             for a pending transaction"
                        ),
                    ));
                }
                let (creditor_name, creditor_account, debtor_name, debtor_account) = if t.amount < 0
                {
                    (
                        t.creditor_name.clone(),
                        t.creditor_account.clone(),
                        t.debtor_name.clone().or(Some(customer.name.clone())),
                        Some(bban.clone()),
                    )
                } else {
                    (
                        t.creditor_name.clone().or(Some(customer.name.clone())),
                        Some(bban.clone()),
                        t.debtor_name.clone(),
                        t.debtor_account.clone(),
                    )
                };
                data.transactions.push(ManualTransaction {
                    id: id("transaction", &format!("{bban}:{i}")),
                    seq: 0,
                    account: account.id,
                    booked: t.booking_date.is_some(),
                    booking_date: t.booking_date,
                    value_date: t.value_date.or(t.booking_date).unwrap_or(today),
                    amount: t.amount,
                    creditor_name,
                    creditor_account,
                    debtor_name,
                    debtor_account,
                    remittance: t.remittance_information_unstructured.clone(),
                    created_at: now,
                });
            }
            data.accounts.push(account);
        }
        for (i, card) in c.card_accounts.iter().enumerate() {
            let pan = match &card.masked_pan {
                Some(p) => p.clone(),
                None => seed::masked_pan(number_from("pan", &format!("{number}:{i}"))),
            };
            if seen_pans.contains(&pan) {
                return Err(err(&pan, 1, format!("maskedPan {pan} is given twice")));
            }
            seen_pans.push(pan.clone());
            data.card_accounts.push(CardAccount {
                id: id("card", &pan),
                owner: customer.id,
                masked_pan: pan,
                currency: card
                    .currency
                    .clone()
                    .unwrap_or_else(|| seed::CURRENCY.to_string()),
                name: card.name.clone(),
                product: card.product.clone().unwrap_or_else(|| card.name.clone()),
                status: "enabled".into(),
            });
        }
        data.customers.push(customer);
    }
    for a in &f.agreements {
        // The customer of the file numbered `number`, when it is of `kind`.
        let party = |role: &str, number: &str, kind: CustomerType| {
            data.customers
                .iter()
                .find(|c| c.number == number && c.kind == kind)
                .ok_or_else(|| {
                    let kind = kind.as_str();
                    let text =
                        format!("agreement {role} {number} is not a {kind} customer of the file");
                    err(number, 0, text)
                })
        };
        let holder = party("holder", &a.holder, CustomerType::Private)?;
        let company = party("company", &a.company, CustomerType::Corporate)?;
        let own: Vec<&Account> = data
            .accounts
            .iter()
            .filter(|x| x.owner == company.id)
            .collect();
        let accounts = match &a.accounts {
            None => own.iter().map(|x| x.id).collect(),
            Some(list) => {
                let mut ids = Vec::new();
                for b in list {
                    let digits: String = b.chars().filter(char::is_ascii_digit).collect();
                    let Some(x) = own.iter().find(|x| x.bban == digits) else {
                        return Err(err(
                            b,
                            0,
                            format!(
                                "account {b} of the agreement is not an account of company {}",
                                company.number
                            ),
                        ));
                    };
                    ids.push(x.id);
                }
                ids
            }
        };
        if data
            .agreements
            .iter()
            .any(|x| x.holder == holder.id && x.corporate == company.id)
        {
            return Err(err(
                &a.company,
                0,
                format!(
                    "{} already holds an agreement for {}",
                    holder.number, company.number
                ),
            ));
        }
        let agreement = Agreement {
            id: id(
                "agreement",
                &format!("{}:{}", company.number, holder.number),
            ),
            name: a
                .name
                .clone()
                .unwrap_or_else(|| format!("{} – fullmakt for {}", company.name, holder.name)),
            corporate: company.id,
            holder: holder.id,
            accounts,
        };
        data.agreements.push(agreement);
    }
    if data.customers.is_empty() {
        return Err(SeedFileError {
            file: file.to_string(),
            line: None,
            message: "the file gives no customers (and builtin is not true)".into(),
        });
    }
    Ok(data)
}

/// [`parse_seed`] of the file at `path`.
///
/// Errors: the file cannot be read, or its first problem.
pub fn load(path: &Path, today: NaiveDate, now: SystemTime) -> Result<SeedData, SeedFileError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SeedFileError {
        file: file.clone(),
        line: None,
        message: format!("cannot read it: {e}"),
    })?;
    parse_seed(&text, &file, today, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 3, 15).unwrap()
    }

    fn parse_toml(text: &str) -> Result<SeedData, SeedFileError> {
        parse_seed(text, "seed.toml", today(), SystemTime::UNIX_EPOCH)
    }

    const GOOD: &str = r#"
[[customers]]
customerNumber = "01017012345"
customerName = "Siri Seed"

[[customers.accounts]]
bban = "15030012345"
name = "Brukskonto"
balance = "1000.00"

[[customers.accounts.transactions]]
amount = "-250.00"
bookingDate = "2026-01-05"
creditorName = "Kiwi"

[[customers]]
customerNumber = "912345602"
customerType = "CORPORATE"
customerName = "Seed AS"

[[customers.accounts]]
name = "Driftskonto"

[[agreements]]
holder = "01017012345"
company = "912345602"
"#;

    #[test]
    fn a_good_file_gives_customers_accounts_transactions_and_an_agreement() {
        let d = parse_toml(GOOD).unwrap();
        assert_eq!(d.customers.len(), 2);
        assert_eq!(d.accounts.len(), 2);
        assert_eq!(d.accounts[0].opening_balance, 100_000);
        assert_eq!(d.transactions.len(), 1);
        assert_eq!(d.transactions[0].amount, -25_000);
        assert_eq!(d.agreements[0].accounts, vec![d.accounts[1].id]);
        assert!(is_norwegian_bban(&d.accounts[1].bban));
        // The same file gives the same ids.
        assert_eq!(parse_toml(GOOD).unwrap().accounts, d.accounts);
    }

    #[test]
    fn errors_name_the_line() {
        let bad_bban = GOOD.replace("15030012345", "15030012346");
        let e = parse_toml(&bad_bban).unwrap_err();
        assert_eq!(e.line, Some(7), "{e}");
        assert!(e.message.contains("BBAN"), "{e}");
        let unknown_field = GOOD.replace("balance =", "balanse =");
        let e = parse_toml(&unknown_field).unwrap_err();
        assert_eq!(e.line, Some(9), "{e}");
        let short = GOOD.replace("\"912345602\"\ncustomerType", "\"91234560\"\ncustomerType");
        let e = parse_toml(&short).unwrap_err();
        assert_eq!(e.line, Some(17), "{e}");
        let e = parse_seed(
            "{\"customers\": [\n {\"customerNumber\": \"01017012345\",\n  \"customerName\": 5}]}",
            "s.json",
            today(),
            SystemTime::UNIX_EPOCH,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.to_string().starts_with("s.json:3: "), "{e}");
    }
}
