//! Sandbox management in the domain ([`crate::sandbox::http::manage`] is its HTTP side): the
//! limits and readers of the management bodies (interface document, Limits; Berlin Group
//! field shapes), and the transactions that create customers, agreements, accounts, card
//! accounts, manual transactions and balance overrides. Each change runs in one database
//! transaction ([`crate::sandbox::store::db::Db::write`]), so a number or BBAN is unique even
//! under concurrent requests, and a resource deleted meanwhile is answered as unknown.
//!
//! Errors are the Berlin Group answers of [`ApiError`]: 400 `FORMAT_ERROR` naming the field
//! (also in `tppMessages[].path`), 400 `PARAMETER_NOT_CONSISTENT`, 404 `RESOURCE_UNKNOWN`,
//! 503 `SERVICE_BLOCKED` when the database fails.

use std::time::SystemTime;

use crate::sandbox::store::sql::Conn;
use serde_json::Value;
use uuid::Uuid;

use crate::sandbox::domain::seed;
use crate::sandbox::errors::ApiError;
use crate::sandbox::model::{
    Account, AccountKind, Agreement, BalanceOverride, CardAccount, Customer, ManualCardTransaction,
    ManualTransaction, TppId,
};
use crate::sandbox::store::db::Db;
use crate::sandbox::store::{self, Unique};
use crate::xs2a::error::MessageCode;
use crate::xs2a::fields::{Fields, json_type};
use crate::xs2a::model::{CustomerType, parse_minor};

/// Longest `customerName`, account and card account `name` (interface document, Limits:
/// "Account and card account name: 70 characters").
pub const MAX_NAME_CHARS: usize = 70;

/// Longest `remittanceInformationUnstructured` (Berlin Group `remittanceInformationUnstructured`,
/// max 140).
pub const MAX_REMITTANCE_CHARS: usize = 140;

/// Most accounts or card accounts asked for in one customer creation.
pub const MAX_ACCOUNTS_PER_REQUEST: usize = 20;

/// Largest amount accepted, minor units (one thousand billion).
pub const MAX_AMOUNT_MINOR: i64 = 100_000_000_000_000;

/// ISO 20022 `ExternalCashAccountType1Code` values accepted as `cashAccountType`
/// (interface document, Versioning: `cash-account-type-iso`).
pub const CASH_ACCOUNT_TYPES: [&str; 23] = [
    "CACC", "CARD", "CASH", "CHAR", "CISH", "COMM", "CPAC", "LLSV", "LOAN", "MGLD", "MOMA", "NFCA",
    "NREX", "ODFT", "ONDP", "OTHR", "SACC", "SLRY", "SVGS", "TAXE", "TRAN", "TRAS", "VACC",
];

/// A 400 `FORMAT_ERROR` about `path` (also set as the message's `path`).
pub fn field_error(path: &str, text: impl Into<String>) -> ApiError {
    with_path(ApiError::format(text), path)
}

pub(crate) fn with_path(mut e: ApiError, path: &str) -> ApiError {
    if let Some(m) = e.body.tpp_messages.first_mut() {
        m.path = Some(path.to_string());
    }
    e
}

pub(crate) fn inconsistent(path: &str, text: impl Into<String>) -> ApiError {
    with_path(
        ApiError::new(MessageCode::ParameterNotConsistent, text),
        path,
    )
}

pub(crate) fn unknown_in_body(path: &str, text: impl Into<String>) -> ApiError {
    with_path(ApiError::new(MessageCode::ResourceUnknown, text), path)
}

/// Readers of sandbox-management fields on the shared body reader ([`Fields`]): the
/// general shapes (strings, objects, arrays, UUIDs, currencies, dates) are the reader's own.
impl Fields<'_> {
    /// A Berlin Group `amount` `{"currency": "NOK", "amount": "-12.50"}`: the amount is a
    /// string (Versioning: `amount-as-string`) with at most two decimals. Returns the currency
    /// and minor units.
    pub(crate) fn opt_amount(&self, name: &str) -> Result<Option<(String, i64)>, ApiError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let p = self.at(name);
        let f = Fields::of(v, &p, &["currency", "amount"])?;
        let currency = f
            .opt_currency("currency")?
            .ok_or_else(|| f.missing("currency", "the ISO 4217 currency code, e.g. \"NOK\""))?;
        let amount = match f.get("amount") {
            None => {
                return Err(f
                    .missing("amount", "a decimal string such as \"-125.50\"")
                    .into());
            }
            Some(Value::String(s)) => s.trim().to_string(),
            Some(Value::Number(n)) => {
                return Err(field_error(
                    &format!("{p}.amount"),
                    format!(
                        "{p}.amount is the number {n}; amounts are JSON strings such as \"{n}\" \
                         (x-accept-fix amount-as-string)"
                    ),
                ));
            }
            Some(other) => {
                return Err(field_error(
                    &format!("{p}.amount"),
                    format!("{p}.amount must be a string, not {}", json_type(other)),
                ));
            }
        };
        let minor = parse_minor(&amount)
            .filter(|m| m.unsigned_abs() <= MAX_AMOUNT_MINOR.unsigned_abs())
            .ok_or_else(|| {
                field_error(
                    &format!("{p}.amount"),
                    format!(
                        "{p}.amount {amount:?} is not a decimal amount with at most two \
                         decimals (e.g. \"-125.50\") within ±{}",
                        crate::xs2a::model::format_minor(MAX_AMOUNT_MINOR)
                    ),
                )
            })?;
        Ok(Some((currency, minor)))
    }

    /// A Berlin Group `accountReference` with a `bban` (11 digits, MOD11) or an `iban`
    /// (mod-97 checked); returns it normalized: the BBAN for Norwegian IBANs, else the IBAN.
    pub(crate) fn opt_account_ref(&self, name: &str) -> Result<Option<String>, ApiError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let p = self.at(name);
        let f = Fields::of(v, &p, &["bban", "iban", "currency"])?;
        f.opt_currency("currency")?;
        match (f.opt_str("bban", 40)?, f.opt_str("iban", 40)?) {
            (Some(b), None) => {
                let b: String = b.chars().filter(|c| *c != '.' && *c != ' ').collect();
                if is_bban(&b) {
                    Ok(Some(b))
                } else {
                    Err(field_error(
                        &format!("{p}.bban"),
                        format!(
                            "{p}.bban {b:?} is not a Norwegian BBAN (11 digits with a valid \
                             MOD11 check digit)"
                        ),
                    ))
                }
            }
            (None, Some(i)) => {
                let i: String = i
                    .chars()
                    .filter(|c| *c != ' ')
                    .collect::<String>()
                    .to_ascii_uppercase();
                if !is_iban(&i) {
                    return Err(field_error(
                        &format!("{p}.iban"),
                        format!("{p}.iban {i:?} is not a valid IBAN (check digits fail)"),
                    ));
                }
                match i.strip_prefix("NO").map(|r| &r[2..]) {
                    Some(b) if is_bban(b) => Ok(Some(b.to_string())),
                    Some(_) => Err(field_error(
                        &format!("{p}.iban"),
                        format!("{p}.iban {i:?} does not hold a valid Norwegian BBAN"),
                    )),
                    None => Ok(Some(i)),
                }
            }
            (None, None) => Err(field_error(&p, format!("{p} needs a bban or an iban"))),
            (Some(_), Some(_)) => Err(field_error(
                &p,
                format!("{p} must have either a bban or an iban, not both"),
            )),
        }
    }
}

/// The account identifier checks, shared with the payment bodies and the console
/// ([`crate::xs2a::identifiers`]): a Norwegian BBAN (11 digits, MOD11) and an IBAN (Berlin
/// Group `iban` pattern, MOD 97-10).
pub use crate::xs2a::identifiers::{is_iban, is_norwegian_bban as is_bban};

/// Parses the request body as a JSON value; an empty body is `what` missing.
pub(crate) fn parse_body(body: &[u8], what: &str) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(field_error(
            "body",
            format!("the request body is missing; expected a JSON object: {what}"),
        ));
    }
    serde_json::from_slice(body)
        .map_err(|e| field_error("body", format!("the request body is not valid JSON: {e}")))
}

pub(crate) fn path_uuid(id: &str, what: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(id).map_err(|_| ApiError::not_found(format!("no {what} {id:?}")))
}

pub(crate) fn random_u64() -> u64 {
    Uuid::new_v4().as_u64_pair().0
}

pub(crate) fn exists(conn: &Conn<'_>, what: Unique, value: &str) -> Result<bool, ApiError> {
    Ok(store::exists(conn, what, value)?)
}

pub(crate) fn unique_value(
    conn: &Conn<'_>,
    what: Unique,
    make: impl Fn(u64) -> String,
) -> Result<String, ApiError> {
    for _ in 0..1000 {
        let v = make(random_u64());
        if !exists(conn, what, &v)? {
            return Ok(v);
        }
    }
    Err(ApiError::storage("no free number left"))
}

pub(crate) fn fresh_bban(conn: &Conn<'_>) -> Result<String, ApiError> {
    unique_value(conn, Unique::Bban, seed::bban_from)
}

pub(crate) fn fresh_pan(conn: &Conn<'_>) -> Result<String, ApiError> {
    unique_value(conn, Unique::MaskedPan, seed::masked_pan)
}

/// `text` cut to `max` characters.
pub(crate) fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// An account asked for in a creation body.
#[derive(Debug)]
pub(crate) struct AccountSpec {
    pub(crate) name: String,
    pub(crate) cash_account_type: String,
    pub(crate) currency: String,
    pub(crate) product: Option<String>,
    pub(crate) opening_balance: i64,
}

pub(crate) fn account_spec(f: &Fields<'_>) -> Result<AccountSpec, ApiError> {
    let name = f.req_str(
        "name",
        MAX_NAME_CHARS,
        "the account name (at most 70 characters)",
    )?;
    let cash_account_type = match f.opt_str("cashAccountType", 4)? {
        None => "CACC".to_string(),
        Some(t) if CASH_ACCOUNT_TYPES.contains(&t.as_str()) => t,
        Some(t) => {
            let p = f.at("cashAccountType");
            return Err(field_error(
                &p,
                format!(
                    "{p} {t:?} is not an ISO 20022 cash account type code ({})",
                    CASH_ACCOUNT_TYPES.join(", ")
                ),
            ));
        }
    };
    let currency = f
        .opt_currency("currency")?
        .unwrap_or_else(|| seed::CURRENCY.to_string());
    let product = f.opt_str("product", MAX_NAME_CHARS)?;
    let opening_balance = match f.opt_amount("balance")? {
        None => 0,
        Some((c, _)) if c != currency => {
            let p = f.at("balance.currency");
            return Err(inconsistent(
                &p,
                format!("{p} {c} differs from the account currency {currency}"),
            ));
        }
        Some((_, m)) => m,
    };
    Ok(AccountSpec {
        name,
        cash_account_type,
        currency,
        product,
        opening_balance,
    })
}

pub(crate) fn build_account(
    conn: &Conn<'_>,
    owner: &Customer,
    spec: AccountSpec,
) -> Result<Account, ApiError> {
    let savings = matches!(spec.cash_account_type.as_str(), "SVGS" | "SACC" | "LLSV");
    let kind = match (owner.kind, savings) {
        (CustomerType::Private, true) => AccountKind::Savings,
        (CustomerType::Private, false) => AccountKind::Current,
        (CustomerType::Corporate, _) => AccountKind::Operating,
    };
    let product = spec.product.unwrap_or_else(|| {
        if savings {
            "Sparekonto".into()
        } else if owner.kind == CustomerType::Corporate {
            "Bedriftskonto".into()
        } else {
            "Brukskonto".into()
        }
    });
    Ok(Account {
        id: Uuid::new_v4(),
        owner: owner.id,
        kind,
        bban: fresh_bban(conn)?,
        currency: spec.currency,
        name: spec.name,
        product,
        cash_account_type: spec.cash_account_type,
        opening_balance: spec.opening_balance,
        generated: false,
    })
}

/// A customer asked for in `POST /v1/sandbox/customers`, its body read.
#[derive(Debug)]
pub(crate) struct NewCustomer {
    /// The `customerNumber` asked for; generated when `None`.
    pub(crate) number: Option<String>,
    /// `customerType`.
    pub(crate) kind: CustomerType,
    /// `customerName`.
    pub(crate) name: String,
    /// The accounts asked for; the seed's defaults when `None`.
    pub(crate) accounts: Option<Vec<AccountSpec>>,
    /// The card accounts asked for (name, currency, product); when `None`, one for a
    /// PRIVATE customer and none for a CORPORATE one.
    pub(crate) cards: Option<Vec<(String, String, Option<String>)>>,
}

/// Creates `new` with its accounts and card accounts in one transaction, in TPP `tpp`'s
/// world.
///
/// Errors: 400 `FORMAT_ERROR` when the customerNumber is taken; 503 when the database fails.
pub(crate) fn create_customer(
    db: &Db,
    tpp: &TppId,
    new: NewCustomer,
) -> Result<Customer, ApiError> {
    let NewCustomer {
        number,
        kind,
        name,
        accounts,
        cards,
    } = new;
    db.write(|tx| {
        let number_sql = Unique::CustomerNumber;
        let number = match number {
            Some(n) => {
                if exists(tx, number_sql, &n)? {
                    return Err(field_error(
                        "customerNumber",
                        format!("customerNumber {n} is already used by another sandbox customer"),
                    ));
                }
                n
            }
            None => unique_value(tx, number_sql, |r| match kind {
                CustomerType::Private => seed::national_id(r),
                CustomerType::Corporate => seed::organisation_number(r),
            })?,
        };
        let r = random_u64();
        let customer = Customer {
            id: Uuid::new_v4(),
            number,
            kind,
            employer: match kind {
                CustomerType::Private => seed::EMPLOYERS
                    .get(usize::try_from(r % seed::EMPLOYERS.len() as u64).unwrap_or(0))
                    .copied()
                    .unwrap_or_default()
                    .to_string(),
                CustomerType::Corporate => String::new(),
            },
            name,
        };
        store::insert(tx, &customer)?;
        // The customer is in the creating TPP's world only (issue 20).
        store::tenancy::set_owner(tx, &customer.id.to_string(), &tpp.0)?;
        match accounts {
            Some(specs) => {
                for spec in specs {
                    let a = build_account(tx, &customer, spec)?;
                    store::insert(tx, &a)?;
                }
            }
            None => {
                for spec in seed::default_accounts(customer.kind) {
                    let mut a =
                        seed::default_account(&customer, spec, Uuid::new_v4(), fresh_bban(tx)?);
                    a.name = cut(&a.name, MAX_NAME_CHARS);
                    store::insert(tx, &a)?;
                }
            }
        }
        let cards = cards.unwrap_or_else(|| match customer.kind {
            CustomerType::Private => vec![(
                cut(
                    &format!("Mastercard Gold {}", customer.name),
                    MAX_NAME_CHARS,
                ),
                seed::CURRENCY.to_string(),
                None,
            )],
            CustomerType::Corporate => Vec::new(),
        });
        for (name, currency, product) in cards {
            let product = product.unwrap_or_else(|| "Kredittkort".into());
            let status = "enabled".into();
            NewCard {
                name,
                currency,
                product,
                status,
            }
            .insert(tx, &customer)?;
        }
        Ok(customer)
    })
}

/// Grants `holder` an agreement over `accounts` of `corporate`, in one transaction.
///
/// Errors: 400 `PARAMETER_NOT_CONSISTENT` when the holder already holds one for that
/// corporate customer; 503 when the database fails.
pub(crate) fn create_agreement(
    db: &Db,
    corporate: &Customer,
    holder: &Customer,
    name: String,
    accounts: Vec<Uuid>,
) -> Result<Agreement, ApiError> {
    db.write(|tx| {
        let taken = store::agreement_between(tx, corporate.id, holder.id)?;
        if taken {
            return Err(inconsistent(
                "holderCustomerId",
                format!(
                    "{} already holds an agreement for {}; add accounts by deleting it and \
                     granting a new one",
                    holder.name, corporate.name
                ),
            ));
        }
        let a = Agreement {
            id: Uuid::new_v4(),
            name,
            corporate: corporate.id,
            holder: holder.id,
            accounts,
        };
        store::insert_agreement(tx, &a)?;
        Ok(a)
    })
}

/// Creates an account of `owner` from `spec`, with the BBAN `bban` when given (else a new
/// one), in one transaction.
///
/// Errors: 400 `FORMAT_ERROR` when `bban` is already an account; 503 when the database
/// fails.
pub(crate) fn create_account(
    db: &Db,
    owner: &Customer,
    spec: AccountSpec,
    bban: Option<String>,
) -> Result<Account, ApiError> {
    db.write(|tx| {
        let mut a = build_account(tx, owner, spec)?;
        match bban {
            Some(b) if exists(tx, Unique::Bban, &b)? => Err(field_error(
                "bban",
                format!("bban {b} is already an account of this sandbox"),
            )),
            given => {
                a.bban = given.unwrap_or(a.bban);
                store::insert(tx, &a)?;
                Ok(a)
            }
        }
    })
}

/// A card account to create (its masked PAN is generated).
pub(crate) struct NewCard {
    /// `name`.
    pub name: String,
    /// `currency` (ISO 4217).
    pub currency: String,
    /// `product`.
    pub product: String,
    /// `status` (`enabled`, `blocked` or `deleted`).
    pub status: String,
}

impl NewCard {
    /// Inserts the card account of `owner` with a new masked PAN in `tx`.
    fn insert(self, tx: &Conn<'_>, owner: &Customer) -> Result<CardAccount, ApiError> {
        let c = CardAccount {
            id: Uuid::new_v4(),
            owner: owner.id,
            masked_pan: fresh_pan(tx)?,
            currency: self.currency,
            name: self.name,
            product: self.product,
            status: self.status,
        };
        store::insert(tx, &c)?;
        Ok(c)
    }
}

/// Creates a card account of `owner` with a new masked PAN, in one transaction.
///
/// Errors: 503 when the database fails.
pub(crate) fn create_card_account(
    db: &Db,
    owner: &Customer,
    card: NewCard,
) -> Result<CardAccount, ApiError> {
    db.write(|tx| card.insert(tx, owner))
}

/// Stores the manual transaction `t` and returns its `seq`; `id` is the account id as the
/// path gave it (for the message).
///
/// Errors: 404 `RESOURCE_UNKNOWN` when the account was deleted since it was read; 503 when
/// the database fails.
pub(crate) fn add_transaction(db: &Db, t: &ManualTransaction, id: &str) -> Result<i64, ApiError> {
    db.write(|tx| {
        // The account may have been deleted since it was read.
        if !exists(tx, Unique::AccountId, &t.account.to_string())? {
            return Err(ApiError::not_found(format!("no sandbox account {id:?}")));
        }
        Ok(store::insert(tx, t)?)
    })
}

/// Stores the manual card transaction `t` and returns its `seq`; `id` is the card account id
/// as the path gave it (for the message).
///
/// Errors: 404 `RESOURCE_UNKNOWN` when the card account was deleted since it was read; 503
/// when the database fails.
pub(crate) fn add_card_transaction(
    db: &Db,
    t: &ManualCardTransaction,
    id: &str,
) -> Result<i64, ApiError> {
    db.write(|tx| {
        if !exists(tx, Unique::CardAccountId, &t.card_account.to_string())? {
            return Err(ApiError::not_found(format!(
                "no sandbox card account {id:?}"
            )));
        }
        Ok(store::insert(tx, t)?)
    })
}

/// Sets (replaces) the balance override of account `id` (`card`: of card account `id`),
/// minor units, effective for the manual transactions stored after it.
///
/// Errors: 503 when the database fails.
pub(crate) fn set_balance_override(
    db: &Db,
    card: bool,
    id: Uuid,
    booked: i64,
    available: i64,
    now: SystemTime,
) -> Result<BalanceOverride, ApiError> {
    Ok(db.write(|tx| store::set_balance_override(tx, card, id, booked, available, now))?)
}

/// Resets TPP `tpp`'s world in one transaction ([`store::tenancy::reset`]).
///
/// Errors: 503 when the database fails.
pub(crate) fn reset_world(db: &Db, tpp: &TppId) -> Result<(), ApiError> {
    Ok(db.write(|tx| store::tenancy::reset(tx, &tpp.0))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_identifier_checks() {
        assert!(is_bban(&seed::bban_from(42)));
        assert!(!is_bban("12345678901"));
        assert!(is_iban("NO9386011117947"));
        assert!(is_iban("DE89370400440532013000"));
        assert!(!is_iban("NO9386011117948"));
        assert!(!is_iban("N09386011117947"));
    }

    #[test]
    fn fields_name_the_bad_field() {
        let v: Value = serde_json::json!({"a": {"currency": "NOK", "amount": 12}, "b": 1});
        let f = Fields::of(&v, "", &["a", "b"]).unwrap();
        let e = f.opt_amount("a").unwrap_err();
        assert_eq!(e.body.tpp_messages[0].path.as_deref(), Some("a.amount"));
        let e = ApiError::from(f.opt_str("b", 5).unwrap_err());
        assert_eq!(e.body.first_code(), Some("FORMAT_ERROR"));
        let e = ApiError::from(Fields::of(&v, "", &["a"]).err().unwrap());
        assert_eq!(e.body.tpp_messages[0].path.as_deref(), Some("b"));
    }
}
