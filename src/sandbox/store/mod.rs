//! The sandbox's state in SQLite ([`crate::sandbox::store::db`]): customers, accounts, card accounts,
//! agreements and their engagements, PSU registrations, consents, SCA authorisations, and the
//! sandbox-management data (manually created transactions and balance overrides).
//!
//! All of the sandbox's SQL lives here: [`Store`]'s methods, the row functions of this module
//! (taking a connection or an open transaction), and the per-table modules [`payments`]
//! (payment initiation, signing baskets), [`overview`] (the state browser's lists), [`access`] (sessions, registrations, revocations,
//! card consents, consent resources), [`unattended`], [`sca_browsers`] and [`replay`]. Reads
//! run on the shared connection; every change runs in one `BEGIN IMMEDIATE` transaction
//! ([`Db::write`]), so concurrent requests never lose or duplicate rows. The schema is the
//! migrations [`MIGRATION`] and those of the per-table modules (listed in
//! `sandbox::MIGRATIONS`). The domain types are [`crate::sandbox::model`]'s (re-exported here).
//!
//! A new (empty) database is seeded with the known state of [`crate::sandbox::domain::seed`] when the store is
//! opened ([`Store::open`]); reopening a database file keeps its state (a `sandbox_meta` row
//! records that it was initialized). [`Store::initialize`] resets everything (interface
//! document, Endpoints: "sandbox initialization ... resets the sandbox to a known state").
//!
//! Every read and write returns a `Result`: a database failure is a [`StoreError`] (answered
//! as an unavailable service by `sandbox::errors`, logged), never a "not found", an empty list or a success (`AuthorisationError::Storage` for the
//! SCA authorisation checks).

/// Declares a struct stored as one SQL row: `columns { .. }` are its fields in column order,
/// `filled_later { .. }` (optional) fields read by a second query (they start empty). Every
/// field is `pub`. It gets `COLUMNS` (the column names, in order, joined by `, `),
/// `PLACEHOLDERS` (`?1, ?2, ..` for those columns), `from_row` (column *i* into the *i*-th
/// field) and `to_params` (the column fields, for an `INSERT`).
macro_rules! table_row {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            columns { $( $(#[$doc:meta])* $field:ident: $ty:ty ),* $(,)? }
            $( filled_later { $( $(#[$later_doc:meta])* $later:ident: $later_ty:ty ),* $(,)? } )?
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$doc])* pub $field: $ty, )*
            $( $( $(#[$later_doc])* pub $later: $later_ty, )* )?
        }

        impl $name {
            /// The column names in order, joined by `, `.
            #[allow(dead_code)]
            pub(crate) const COLUMNS: &'static str = join_columns!($($field),*);

            /// One row of a `SELECT` of [`Self::COLUMNS`] (in that order).
            #[allow(dead_code)]
            pub(crate) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
                let mut column = 0usize;
                let mut next = || {
                    column += 1;
                    column - 1
                };
                Ok(Self {
                    $( $field: r.get(next())?, )*
                    $( $( $later: Default::default(), )* )?
                })
            }

            /// `?1, ?2, ..`: one placeholder per column of [`Self::COLUMNS`].
            #[allow(dead_code)]
            pub(crate) fn placeholders() -> String {
                let names: &[&str] = &[$(stringify!($field)),*];
                (1..=names.len()).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
            }

            /// The column fields in [`Self::COLUMNS`] order, to bind to an `INSERT`.
            #[allow(dead_code)]
            pub(crate) fn to_params(&self) -> Vec<&dyn rusqlite::ToSql> {
                vec![$( &self.$field as &dyn rusqlite::ToSql ),*]
            }
        }
    };
}

/// `"a, b, c"` from the identifiers `a, b, c` (for [`table_row`]'s `COLUMNS`).
macro_rules! join_columns {
    ($first:ident $(, $rest:ident)*) => {
        concat!(stringify!($first) $(, ", ", stringify!($rest))*)
    };
}

pub mod access;
pub mod checkpoint;
pub mod db;
pub mod error;
pub mod faults;
pub mod indexes;
pub mod overview;
pub mod payments;
pub mod replay;
pub mod sca_browsers;
pub mod tenancy;
pub mod unattended;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::NaiveDate;
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

pub use crate::sandbox::model::*;
use crate::sandbox::store::db::{Db, Migration};
pub use crate::sandbox::store::error::StoreError;
use crate::xs2a::model::{Amount, CustomerType};

/// A value that identifies one row, for [`exists`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unique {
    /// An account's `bban`.
    Bban,
    /// A card account's `maskedPan`.
    MaskedPan,
    /// A customer's `customerNumber`.
    CustomerNumber,
    /// An account id.
    AccountId,
    /// A card account id.
    CardAccountId,
}

/// Whether a row with `value` as `what` exists.
///
/// Errors: the database fails.
pub fn exists(conn: &Connection, what: Unique, value: &str) -> rusqlite::Result<bool> {
    let sql = match what {
        Unique::Bban => "SELECT EXISTS(SELECT 1 FROM accounts WHERE bban = ?1)",
        Unique::MaskedPan => "SELECT EXISTS(SELECT 1 FROM card_accounts WHERE masked_pan = ?1)",
        Unique::CustomerNumber => "SELECT EXISTS(SELECT 1 FROM customers WHERE number = ?1)",
        Unique::AccountId => "SELECT EXISTS(SELECT 1 FROM accounts WHERE id = ?1)",
        Unique::CardAccountId => "SELECT EXISTS(SELECT 1 FROM card_accounts WHERE id = ?1)",
    };
    conn.query_row(sql, [value], |r| r.get(0))
}

/// Whether an agreement of corporate customer `corporate` with holder `holder` exists.
///
/// Errors: the database fails.
pub fn agreement_between(
    conn: &Connection,
    corporate: Uuid,
    holder: Uuid,
) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM agreements WHERE corporate = ?1 AND holder = ?2)",
        [corporate.to_string(), holder.to_string()],
        |r| r.get(0),
    )
}

/// The schema of this module (one migration; see `sandbox::MIGRATIONS`).
pub const MIGRATION: Migration = ("store_0001_state", SCHEMA);

const SCHEMA: &str = "
CREATE TABLE sandbox_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE customers (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    number TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('PRIVATE', 'CORPORATE')),
    name TEXT NOT NULL,
    employer TEXT NOT NULL DEFAULT ''
);
CREATE TABLE accounts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('CURRENT', 'SAVINGS', 'OPERATING', 'SETTLEMENT')),
    bban TEXT NOT NULL UNIQUE,
    currency TEXT NOT NULL,
    name TEXT NOT NULL,
    product TEXT NOT NULL,
    cash_account_type TEXT NOT NULL,
    opening_balance INTEGER NOT NULL,
    generated INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX accounts_by_owner ON accounts(owner);
CREATE TABLE card_accounts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    masked_pan TEXT NOT NULL UNIQUE,
    currency TEXT NOT NULL,
    name TEXT NOT NULL,
    product TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE INDEX card_accounts_by_owner ON card_accounts(owner);
CREATE TABLE agreements (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    corporate TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    holder TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE
);
CREATE TABLE agreement_engagements (
    agreement TEXT NOT NULL REFERENCES agreements(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    PRIMARY KEY (agreement, account)
);
CREATE INDEX agreement_engagements_by_account ON agreement_engagements(account);
CREATE TABLE psu_registrations (
    tpp TEXT NOT NULL,
    psu_id TEXT NOT NULL,
    customer TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    registered_at INTEGER NOT NULL,
    PRIMARY KEY (tpp, psu_id)
);
CREATE TABLE consents (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tpp TEXT NOT NULL,
    psu_id TEXT NOT NULL,
    agreement TEXT NOT NULL DEFAULT '',
    customer TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    granted_at INTEGER NOT NULL,
    tpp_session_id TEXT NOT NULL,
    UNIQUE (tpp, psu_id, agreement)
);
CREATE TABLE consent_accounts (
    consent INTEGER NOT NULL REFERENCES consents(seq) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    PRIMARY KEY (consent, account)
);
CREATE INDEX consent_accounts_by_account ON consent_accounts(account);
CREATE TABLE sca_authorisations (
    id TEXT PRIMARY KEY,
    tpp TEXT NOT NULL,
    tpp_name TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    tpp_session_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    step TEXT NOT NULL CHECK (step IN ('IDENTIFY', 'CHOOSE_CONTEXT', 'CONSENT', 'FINISHED')),
    customer TEXT,
    agreement TEXT
);
CREATE TABLE manual_transactions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    booked INTEGER NOT NULL,
    booking_date TEXT,
    value_date TEXT NOT NULL,
    amount INTEGER NOT NULL,
    creditor_name TEXT,
    creditor_account TEXT,
    debtor_name TEXT,
    debtor_account TEXT,
    remittance TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX manual_transactions_by_account ON manual_transactions(account);
CREATE TABLE manual_card_transactions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    card_account TEXT NOT NULL REFERENCES card_accounts(id) ON DELETE CASCADE,
    booked INTEGER NOT NULL,
    booking_date TEXT,
    transaction_date TEXT NOT NULL,
    amount INTEGER NOT NULL,
    original_currency TEXT,
    original_amount TEXT,
    card_acceptor_id TEXT,
    merchant_category_code TEXT,
    transaction_details TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX manual_card_transactions_by_card ON manual_card_transactions(card_account);
CREATE TABLE balance_overrides (
    account TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    booked INTEGER NOT NULL,
    available INTEGER NOT NULL,
    after_seq INTEGER NOT NULL,
    set_at INTEGER NOT NULL
);
CREATE TABLE card_balance_overrides (
    card_account TEXT PRIMARY KEY REFERENCES card_accounts(id) ON DELETE CASCADE,
    booked INTEGER NOT NULL,
    available INTEGER NOT NULL,
    after_seq INTEGER NOT NULL,
    set_at INTEGER NOT NULL
);
";

// ---------------------------------------------------------------------------------------
// Column conversions

/// Nanoseconds since the Unix epoch (negative before it), saturating.
pub fn to_nanos(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_nanos())
            .map(|n| -n)
            .unwrap_or(i64::MIN),
    }
}

/// The inverse of [`to_nanos`].
pub fn from_nanos(n: i64) -> SystemTime {
    let d = Duration::from_nanos(n.unsigned_abs());
    if n >= 0 {
        UNIX_EPOCH.checked_add(d).unwrap_or(UNIX_EPOCH)
    } else {
        UNIX_EPOCH.checked_sub(d).unwrap_or(UNIX_EPOCH)
    }
}

fn bad_column(i: usize, e: impl std::error::Error + Send + Sync + 'static) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
}

#[derive(Debug, thiserror::Error)]
#[error("unexpected stored value {0:?}")]
struct BadValue(String);

fn uuid_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Uuid> {
    let s: String = r.get(i)?;
    Uuid::parse_str(&s).map_err(|e| bad_column(i, e))
}

fn opt_uuid_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<Uuid>> {
    let s: Option<String> = r.get(i)?;
    match s.filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => Uuid::parse_str(&s).map(Some).map_err(|e| bad_column(i, e)),
    }
}

fn date_at(r: &Row<'_>, i: usize) -> rusqlite::Result<NaiveDate> {
    let s: String = r.get(i)?;
    NaiveDate::parse_from_str(&s, "%Y-%m-%d").map_err(|e| bad_column(i, e))
}

fn opt_date_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<NaiveDate>> {
    let s: Option<String> = r.get(i)?;
    match s {
        None => Ok(None),
        Some(s) => NaiveDate::parse_from_str(&s, "%Y-%m-%d")
            .map(Some)
            .map_err(|e| bad_column(i, e)),
    }
}

fn customer_type(s: &str) -> Option<CustomerType> {
    match s {
        "PRIVATE" => Some(CustomerType::Private),
        "CORPORATE" => Some(CustomerType::Corporate),
        _ => None,
    }
}

const CUSTOMER_COLS: &str = "id, number, kind, name, employer";

fn customer_row(r: &Row<'_>) -> rusqlite::Result<Customer> {
    let kind: String = r.get(2)?;
    Ok(Customer {
        id: uuid_at(r, 0)?,
        number: r.get(1)?,
        kind: customer_type(&kind).ok_or_else(|| bad_column(2, BadValue(kind)))?,
        name: r.get(3)?,
        employer: r.get(4)?,
    })
}

const ACCOUNT_COLS: &str = "id, owner, kind, bban, currency, name, product, cash_account_type, \
                            opening_balance, generated";

fn account_row(r: &Row<'_>) -> rusqlite::Result<Account> {
    let kind: String = r.get(2)?;
    Ok(Account {
        id: uuid_at(r, 0)?,
        owner: uuid_at(r, 1)?,
        kind: AccountKind::parse(&kind).ok_or_else(|| bad_column(2, BadValue(kind)))?,
        bban: r.get(3)?,
        currency: r.get(4)?,
        name: r.get(5)?,
        product: r.get(6)?,
        cash_account_type: r.get(7)?,
        opening_balance: r.get(8)?,
        generated: r.get(9)?,
    })
}

const CARD_COLS: &str = "id, owner, masked_pan, currency, name, product, status";

fn card_row(r: &Row<'_>) -> rusqlite::Result<CardAccount> {
    Ok(CardAccount {
        id: uuid_at(r, 0)?,
        owner: uuid_at(r, 1)?,
        masked_pan: r.get(2)?,
        currency: r.get(3)?,
        name: r.get(4)?,
        product: r.get(5)?,
        status: r.get(6)?,
    })
}

const MANUAL_COLS: &str = "id, seq, account, booked, booking_date, value_date, amount, \
                           creditor_name, creditor_account, debtor_name, debtor_account, \
                           remittance, created_at";

fn manual_row(r: &Row<'_>) -> rusqlite::Result<ManualTransaction> {
    Ok(ManualTransaction {
        id: uuid_at(r, 0)?,
        seq: r.get(1)?,
        account: uuid_at(r, 2)?,
        booked: r.get(3)?,
        booking_date: opt_date_at(r, 4)?,
        value_date: date_at(r, 5)?,
        amount: r.get(6)?,
        creditor_name: r.get(7)?,
        creditor_account: r.get(8)?,
        debtor_name: r.get(9)?,
        debtor_account: r.get(10)?,
        remittance: r.get(11)?,
        created_at: from_nanos(r.get(12)?),
    })
}

const MANUAL_CARD_COLS: &str = "id, seq, card_account, booked, booking_date, transaction_date, \
                                amount, original_currency, original_amount, card_acceptor_id, \
                                merchant_category_code, transaction_details, created_at";

fn manual_card_row(r: &Row<'_>) -> rusqlite::Result<ManualCardTransaction> {
    let currency: Option<String> = r.get(7)?;
    let amount: Option<String> = r.get(8)?;
    Ok(ManualCardTransaction {
        id: uuid_at(r, 0)?,
        seq: r.get(1)?,
        card_account: uuid_at(r, 2)?,
        booked: r.get(3)?,
        booking_date: opt_date_at(r, 4)?,
        transaction_date: date_at(r, 5)?,
        amount: r.get(6)?,
        original_amount: currency
            .zip(amount)
            .map(|(currency, amount)| Amount { currency, amount }),
        card_acceptor_id: r.get(9)?,
        merchant_category_code: r.get(10)?,
        transaction_details: r.get(11)?,
        created_at: from_nanos(r.get(12)?),
    })
}

fn override_row(r: &Row<'_>) -> rusqlite::Result<BalanceOverride> {
    Ok(BalanceOverride {
        booked: r.get(0)?,
        available: r.get(1)?,
        after_seq: r.get(2)?,
        set_at: from_nanos(r.get(3)?),
    })
}

fn step_columns(step: &ScaStep) -> (&'static str, Option<String>, Option<String>) {
    match step {
        ScaStep::Identify => ("IDENTIFY", None, None),
        ScaStep::ChooseContext { customer } => ("CHOOSE_CONTEXT", Some(customer.to_string()), None),
        ScaStep::Consent {
            customer,
            agreement,
        } => (
            "CONSENT",
            Some(customer.to_string()),
            agreement.map(|a| a.to_string()),
        ),
        ScaStep::Finished => ("FINISHED", None, None),
    }
}

const AUTH_COLS: &str =
    "id, tpp, tpp_name, redirect_uri, tpp_session_id, created_at, step, customer, agreement";

fn authorisation_row(r: &Row<'_>) -> rusqlite::Result<Authorisation> {
    let step: String = r.get(6)?;
    let customer = opt_uuid_at(r, 7)?;
    let agreement = opt_uuid_at(r, 8)?;
    let need = |c: Option<Uuid>| c.ok_or_else(|| bad_column(7, BadValue("no customer".into())));
    let step = match step.as_str() {
        "IDENTIFY" => ScaStep::Identify,
        "CHOOSE_CONTEXT" => ScaStep::ChooseContext {
            customer: need(customer)?,
        },
        "CONSENT" => ScaStep::Consent {
            customer: need(customer)?,
            agreement,
        },
        "FINISHED" => ScaStep::Finished,
        _ => return Err(bad_column(6, BadValue(step))),
    };
    Ok(Authorisation {
        id: uuid_at(r, 0)?,
        tpp: TppId(r.get(1)?),
        tpp_name: r.get(2)?,
        redirect_uri: r.get(3)?,
        tpp_session_id: r.get(4)?,
        created_at: from_nanos(r.get(5)?),
        step,
    })
}

// ---------------------------------------------------------------------------------------
// Statements shared by the store, the seed and the management handlers

/// Inserts a customer.
pub fn insert_customer(conn: &Connection, c: &Customer) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO customers (id, number, kind, name, employer) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        c.id.to_string(),
        c.number,
        c.kind.as_str(),
        c.name,
        c.employer
    ])?;
    Ok(())
}

/// Inserts an account (its owner must exist).
pub fn insert_account(conn: &Connection, a: &Account) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO accounts (id, owner, kind, bban, currency, name, product, \
         cash_account_type, opening_balance, generated) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        a.id.to_string(),
        a.owner.to_string(),
        a.kind.as_str(),
        a.bban,
        a.currency,
        a.name,
        a.product,
        a.cash_account_type,
        a.opening_balance,
        a.generated
    ])?;
    Ok(())
}

/// Inserts a card account (its owner must exist).
pub fn insert_card_account(conn: &Connection, a: &CardAccount) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO card_accounts (id, owner, masked_pan, currency, name, product, status) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        a.id.to_string(),
        a.owner.to_string(),
        a.masked_pan,
        a.currency,
        a.name,
        a.product,
        a.status
    ])?;
    Ok(())
}

/// Inserts an agreement and its engagements (accounts, in order).
pub fn insert_agreement(conn: &Connection, a: &Agreement) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO agreements (id, name, corporate, holder) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        a.id.to_string(),
        a.name,
        a.corporate.to_string(),
        a.holder.to_string()
    ])?;
    let mut stmt = conn.prepare_cached(
        "INSERT INTO agreement_engagements (agreement, position, account) VALUES (?1, ?2, ?3)",
    )?;
    for (i, account) in a.accounts.iter().enumerate() {
        stmt.execute(params![
            a.id.to_string(),
            i64::try_from(i).unwrap_or(i64::MAX),
            account.to_string()
        ])?;
    }
    Ok(())
}

/// Inserts a manual transaction (its `seq` is ignored) and returns the assigned `seq`.
pub fn insert_manual_transaction(
    conn: &Connection,
    t: &ManualTransaction,
) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO manual_transactions (id, account, booked, booking_date, value_date, amount, \
         creditor_name, creditor_account, debtor_name, debtor_account, remittance, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        t.id.to_string(),
        t.account.to_string(),
        t.booked,
        t.booking_date.map(|d| d.to_string()),
        t.value_date.to_string(),
        t.amount,
        t.creditor_name,
        t.creditor_account,
        t.debtor_name,
        t.debtor_account,
        t.remittance,
        to_nanos(t.created_at)
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Inserts a manual card transaction (its `seq` is ignored) and returns the assigned `seq`.
pub fn insert_manual_card_transaction(
    conn: &Connection,
    t: &ManualCardTransaction,
) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO manual_card_transactions (id, card_account, booked, booking_date, \
         transaction_date, amount, original_currency, original_amount, card_acceptor_id, \
         merchant_category_code, transaction_details, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        t.id.to_string(),
        t.card_account.to_string(),
        t.booked,
        t.booking_date.map(|d| d.to_string()),
        t.transaction_date.to_string(),
        t.amount,
        t.original_amount.as_ref().map(|a| a.currency.clone()),
        t.original_amount.as_ref().map(|a| a.amount.clone()),
        t.card_acceptor_id,
        t.merchant_category_code,
        t.transaction_details,
        to_nanos(t.created_at)
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Sets (replaces) the balance override of an account (`card = false`) or a card account,
/// recording the current highest manual-transaction seq as its watermark.
pub fn set_balance_override(
    conn: &Connection,
    card: bool,
    id: Uuid,
    booked: i64,
    available: i64,
    now: SystemTime,
) -> rusqlite::Result<BalanceOverride> {
    let (tx_table, tx_col, table, col) = if card {
        (
            "manual_card_transactions",
            "card_account",
            "card_balance_overrides",
            "card_account",
        )
    } else {
        (
            "manual_transactions",
            "account",
            "balance_overrides",
            "account",
        )
    };
    let after_seq: i64 = conn.query_row(
        &format!("SELECT COALESCE(MAX(seq), 0) FROM {tx_table} WHERE {tx_col} = ?1"),
        [id.to_string()],
        |r| r.get(0),
    )?;
    conn.execute(
        &format!(
            "INSERT INTO {table} ({col}, booked, available, after_seq, set_at) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT({col}) DO UPDATE SET \
             booked = excluded.booked, available = excluded.available, \
             after_seq = excluded.after_seq, set_at = excluded.set_at"
        ),
        params![id.to_string(), booked, available, after_seq, to_nanos(now)],
    )?;
    Ok(BalanceOverride {
        booked,
        available,
        after_seq,
        set_at: now,
    })
}

/// The shared sandbox clock offset as stored (`sandbox_meta` key `clock_offset_nanos`,
/// nanoseconds, as written by [`Store::write_clock_offset`]); `None` when the clock was not
/// advanced since the last initialization.
///
/// Errors: the database fails.
pub fn clock_offset_nanos(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT CAST(value AS INTEGER) FROM sandbox_meta WHERE key = 'clock_offset_nanos'",
        [],
        |r| r.get(0),
    )
    .optional()
}

/// Inserts `seed` and marks the database as initialized.
pub fn insert_seed(conn: &Connection, seed: &SeedData) -> rusqlite::Result<()> {
    for c in &seed.customers {
        insert_customer(conn, c)?;
    }
    for a in &seed.accounts {
        insert_account(conn, a)?;
    }
    for c in &seed.card_accounts {
        insert_card_account(conn, c)?;
    }
    for a in &seed.agreements {
        insert_agreement(conn, a)?;
    }
    for t in &seed.transactions {
        insert_manual_transaction(conn, t)?;
    }
    conn.execute(
        "INSERT INTO sandbox_meta (key, value) VALUES ('initialized_at', CURRENT_TIMESTAMP) \
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [],
    )?;
    Ok(())
}

/// Deletes every row of every table except `schema_migrations` (all modules' tables, found
/// in `sqlite_master`), and resets AUTOINCREMENT counters. Foreign keys are checked at
/// commit, so the order does not matter.
pub fn clear_all_tables(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("PRAGMA defer_foreign_keys = ON")?;
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' \
             AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'schema_migrations' \
             AND name <> 'sca_page_keys'",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for t in tables {
        conn.execute(&format!("DELETE FROM \"{}\"", t.replace('"', "\"\"")), [])?;
    }
    let has_sequence: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence')",
        [],
        |r| r.get(0),
    )?;
    if has_sequence {
        conn.execute("DELETE FROM sqlite_sequence", [])?;
    }
    Ok(())
}

/// Deletes rows that reference deleted rows through a foreign key without `ON DELETE`
/// action (other modules' tables), repeatedly, so that a deletion made with
/// `PRAGMA defer_foreign_keys = ON` can commit. Returns how many rows were removed.
pub fn remove_orphans(conn: &Connection) -> rusqlite::Result<usize> {
    let mut removed = 0;
    for _ in 0..16 {
        let orphans: Vec<(String, Option<i64>)> = conn
            .prepare("PRAGMA foreign_key_check")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        if orphans.is_empty() {
            break;
        }
        for (table, rowid) in orphans {
            if let Some(rowid) = rowid {
                removed += conn.execute(
                    &format!(
                        "DELETE FROM \"{}\" WHERE rowid = ?1",
                        table.replace('"', "\"\"")
                    ),
                    [rowid],
                )?;
            }
        }
    }
    Ok(removed)
}

fn agreements_where(
    conn: &Connection,
    condition: &str,
    args: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<Vec<Agreement>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, name, corporate, holder FROM agreements WHERE {condition} ORDER BY seq"
    ))?;
    let heads: Vec<(Uuid, String, Uuid, Uuid)> = stmt
        .query_map(args, |r| {
            Ok((uuid_at(r, 0)?, r.get(1)?, uuid_at(r, 2)?, uuid_at(r, 3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut eng = conn.prepare_cached(
        "SELECT account FROM agreement_engagements WHERE agreement = ?1 ORDER BY position",
    )?;
    heads
        .into_iter()
        .map(|(id, name, corporate, holder)| {
            let accounts = eng
                .query_map([id.to_string()], |r| uuid_at(r, 0))?
                .collect::<rusqlite::Result<_>>()?;
            Ok(Agreement {
                id,
                name,
                corporate,
                holder,
                accounts,
            })
        })
        .collect()
}

fn load_authorisation(conn: &Connection, id: Uuid) -> rusqlite::Result<Option<Authorisation>> {
    conn.prepare_cached(&format!(
        "SELECT {AUTH_COLS} FROM sca_authorisations WHERE id = ?1"
    ))?
    .query_row([id.to_string()], authorisation_row)
    .optional()
}

fn usable(a: Option<Authorisation>, now: SystemTime) -> Result<Authorisation, AuthorisationError> {
    let a = a.ok_or(AuthorisationError::Unknown)?;
    if a.step == ScaStep::Finished {
        return Err(AuthorisationError::Finished);
    }
    if is_expired(a.created_at, now) {
        return Err(AuthorisationError::Expired);
    }
    Ok(a)
}

fn update_step(conn: &Connection, id: Uuid, step: &ScaStep) -> rusqlite::Result<()> {
    let (name, customer, agreement) = step_columns(step);
    conn.prepare_cached(
        "UPDATE sca_authorisations SET step = ?2, customer = ?3, agreement = ?4 WHERE id = ?1",
    )?
    .execute(params![id.to_string(), name, customer, agreement])?;
    Ok(())
}

fn agreement_key(a: Option<Uuid>) -> String {
    a.map(|a| a.to_string()).unwrap_or_default()
}

/// The `(tpp, psu_id, agreement)` columns of consent `key` as stored (the agreement empty
/// for the PSU's private context), the `?1, ?2, ?3` of the consent tables' queries.
fn key_params(key: &ConsentKey) -> (&str, String, String) {
    (
        key.tpp.0.as_str(),
        key.psu_id.to_string(),
        agreement_key(key.agreement),
    )
}

fn write_consent(conn: &Connection, key: &ConsentKey, consent: &Consent) -> rusqlite::Result<()> {
    let (tpp, psu, agreement) = key_params(key);
    conn.prepare_cached(
        "INSERT INTO psu_registrations (tpp, psu_id, customer, registered_at) \
         VALUES (?1, ?2, ?3, ?4) ON CONFLICT(tpp, psu_id) DO UPDATE SET customer = excluded.customer",
    )?
    .execute(params![
        tpp,
        psu,
        consent.customer.to_string(),
        to_nanos(consent.granted_at)
    ])?;
    conn.prepare_cached("DELETE FROM consents WHERE tpp = ?1 AND psu_id = ?2 AND agreement = ?3")?
        .execute(params![tpp, psu, agreement])?;
    conn.prepare_cached(
        "INSERT INTO consents (tpp, psu_id, agreement, customer, granted_at, tpp_session_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        tpp,
        psu,
        agreement,
        consent.customer.to_string(),
        to_nanos(consent.granted_at),
        consent.tpp_session_id
    ])?;
    let seq = conn.last_insert_rowid();
    // Accounts deleted meanwhile are skipped rather than failing the consent.
    let mut stmt = conn.prepare_cached(
        "INSERT OR IGNORE INTO consent_accounts (consent, position, account) \
         SELECT ?1, ?2, id FROM accounts WHERE id = ?3",
    )?;
    for (i, a) in consent.accounts.iter().enumerate() {
        stmt.execute(params![
            seq,
            i64::try_from(i).unwrap_or(i64::MAX),
            a.to_string()
        ])?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The store

/// Row counts of a freshly initialized sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitializeSummary {
    /// Sandbox customers.
    pub customers: usize,
    /// Accounts.
    pub accounts: usize,
    /// Card accounts.
    pub card_accounts: usize,
    /// Agreements.
    pub agreements: usize,
}

/// The sandbox state store over the shared database.
pub struct Store {
    db: Arc<Db>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}

impl Store {
    /// The store over `db` (migrated with [`MIGRATION`]); seeds it with `seed` in one
    /// transaction when it has never been initialized. An existing state is kept.
    ///
    /// Errors: the database fails.
    pub fn open(db: Arc<Db>, seed: impl FnOnce() -> SeedData) -> rusqlite::Result<Self> {
        db.write_raw(|tx| {
            let initialized: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM sandbox_meta WHERE key = 'initialized_at')",
                [],
                |r| r.get(0),
            )?;
            if !initialized {
                insert_seed(tx, &seed())?;
            }
            Ok(())
        })?;
        Ok(Store { db })
    }

    /// The database behind the store (for one-transaction changes spanning several tables).
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }

    /// Runs a read on the connection. Errors: the database fails ([`StoreError`]).
    fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        self.db.read(f)
    }

    /// The persisted sandbox clock offset (`sandbox_meta` key `clock_offset_nanos`, written by
    /// `POST /v1/sandbox/clock` with [`Store::write_clock_offset`]); `None` when the clock was
    /// not advanced since the last initialization. A negative stored value reads as zero.
    ///
    /// Errors: the database fails.
    pub fn clock_offset(&self) -> rusqlite::Result<Option<Duration>> {
        let nanos = self.db.read_raw(clock_offset_nanos)?;
        Ok(nanos.map(|n| Duration::from_nanos(u64::try_from(n).unwrap_or(0))))
    }

    /// Persists the sandbox clock offset in `tx` (part of the `POST /v1/sandbox/clock`
    /// transaction); [`Store::initialize`] removes it with the rest of `sandbox_meta`.
    ///
    /// Errors: the database fails.
    pub fn write_clock_offset(tx: &Connection, offset: Duration) -> rusqlite::Result<()> {
        let nanos = u64::try_from(offset.as_nanos()).unwrap_or(u64::MAX);
        tx.execute(
            "INSERT INTO sandbox_meta (key, value) VALUES ('clock_offset_nanos', ?1) \
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [nanos.to_string()],
        )?;
        Ok(())
    }

    /// Resets the whole sandbox to `seed` in one transaction: every table of every module is
    /// emptied (except `schema_migrations`), then the seed is inserted (interface document,
    /// Endpoints: initialization "discards manually created customers and accounts").
    ///
    /// Errors: the database fails (nothing changed).
    pub fn initialize(&self, seed: &SeedData) -> Result<InitializeSummary, StoreError> {
        self.db.write(|tx| {
            clear_all_tables(tx)?;
            insert_seed(tx, seed)?;
            Ok(InitializeSummary {
                customers: seed.customers.len(),
                accounts: seed.accounts.len(),
                card_accounts: seed.card_accounts.len(),
                agreements: seed.agreements.len(),
            })
        })
    }

    /// Deletes a customer with everything that hangs on it, in one transaction: its
    /// accounts and card accounts (with their manual transactions and balance overrides),
    /// agreements where it is holder or corporate party (and the consents given under
    /// them), its PSU registrations, consents and unfinished SCA authorisations. Rows of
    /// other modules' tables that reference deleted rows by foreign key are deleted too
    /// ([`remove_orphans`]). `Ok(false)` when there is no such customer.
    ///
    /// Errors: the database fails (nothing changed).
    pub fn delete_customer(&self, id: Uuid) -> Result<bool, StoreError> {
        self.db.write(|tx| {
            let id = id.to_string();
            let run = |sql: &str| -> Result<usize, StoreError> { Ok(tx.execute(sql, [&id])?) };
            tx.execute_batch("PRAGMA defer_foreign_keys = ON")?;
            run("DELETE FROM consents WHERE agreement IN \
                 (SELECT id FROM agreements WHERE corporate = ?1 OR holder = ?1)")?;
            run("DELETE FROM sca_authorisations WHERE customer = ?1")?;
            let n = run("DELETE FROM customers WHERE id = ?1")?;
            remove_orphans(tx)?;
            Ok(n > 0)
        })
    }

    /// Deletes an agreement and the consents given under it, in one transaction. `Ok(false)`
    /// when there is no such agreement.
    ///
    /// Errors: the database fails (nothing changed).
    pub fn delete_agreement(&self, id: Uuid) -> Result<bool, StoreError> {
        self.db.write(|tx| {
            let id = id.to_string();
            tx.execute_batch("PRAGMA defer_foreign_keys = ON")?;
            tx.execute("DELETE FROM consents WHERE agreement = ?1", [&id])?;
            tx.execute("DELETE FROM sca_authorisations WHERE agreement = ?1", [&id])?;
            let n = tx.execute("DELETE FROM agreements WHERE id = ?1", [&id])?;
            remove_orphans(tx)?;
            Ok(n > 0)
        })
    }

    /// All customers, in creation order (the seed first).
    pub fn customers(&self) -> Result<Vec<Customer>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {CUSTOMER_COLS} FROM customers ORDER BY seq"
            ))?
            .query_map([], customer_row)?
            .collect()
        })
    }

    /// The sandbox customer with this id, if any.
    ///
    /// Errors: the database fails.
    pub fn customer(&self, id: Uuid) -> Result<Option<Customer>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {CUSTOMER_COLS} FROM customers WHERE id = ?1"
            ))?
            .query_row([id.to_string()], customer_row)
            .optional()
        })
    }

    /// The sandbox customer with this customerNumber, if any.
    ///
    /// Errors: the database fails.
    pub fn customer_by_number(&self, number: &str) -> Result<Option<Customer>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {CUSTOMER_COLS} FROM customers WHERE number = ?1"
            ))?
            .query_row([number], customer_row)
            .optional()
        })
    }

    /// The account with this id, if any.
    ///
    /// Errors: the database fails.
    pub fn account(&self, id: Uuid) -> Result<Option<Account>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {ACCOUNT_COLS} FROM accounts WHERE id = ?1"
            ))?
            .query_row([id.to_string()], account_row)
            .optional()
        })
    }

    /// The account with this BBAN, if any.
    pub fn account_by_bban(&self, bban: &str) -> Result<Option<Account>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {ACCOUNT_COLS} FROM accounts WHERE bban = ?1"
            ))?
            .query_row([bban], account_row)
            .optional()
        })
    }

    /// Accounts owned by `customer`, in creation order.
    pub fn accounts_of(&self, customer: Uuid) -> Result<Vec<Account>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {ACCOUNT_COLS} FROM accounts WHERE owner = ?1 ORDER BY seq"
            ))?
            .query_map([customer.to_string()], account_row)?
            .collect()
        })
    }

    /// The ids of the accounts owned by `customer`, in creation order.
    ///
    /// Errors: the database fails.
    pub fn account_ids_of(&self, customer: Uuid) -> Result<Vec<Uuid>, StoreError> {
        self.read(|c| {
            c.prepare_cached("SELECT id FROM accounts WHERE owner = ?1 ORDER BY seq")?
                .query_map([customer.to_string()], |r| uuid_at(r, 0))?
                .collect()
        })
    }

    /// The accounts with the given ids, in the order of `ids`; unknown ids are skipped.
    pub fn accounts_by_ids(&self, ids: &[Uuid]) -> Result<Vec<Account>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {ACCOUNT_COLS} FROM accounts WHERE id = ?1"
            ))?;
            let mut out = Vec::new();
            for id in ids {
                if let Some(a) = stmt.query_row([id.to_string()], account_row).optional()? {
                    out.push(a);
                }
            }
            Ok(out)
        })
    }

    /// Card accounts owned by `customer`, in creation order.
    pub fn card_accounts_of(&self, customer: Uuid) -> Result<Vec<CardAccount>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {CARD_COLS} FROM card_accounts WHERE owner = ?1 ORDER BY seq"
            ))?
            .query_map([customer.to_string()], card_row)?
            .collect()
        })
    }

    /// One card account.
    pub fn card_account(&self, id: Uuid) -> Result<Option<CardAccount>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {CARD_COLS} FROM card_accounts WHERE id = ?1"
            ))?
            .query_row([id.to_string()], card_row)
            .optional()
        })
    }

    /// The agreement with this id, if any.
    ///
    /// Errors: the database fails.
    pub fn agreement(&self, id: Uuid) -> Result<Option<Agreement>, StoreError> {
        self.read(|c| {
            Ok(agreements_where(c, "id = ?1", &[&id.to_string()])?
                .into_iter()
                .next())
        })
    }

    /// Agreements where `customer` is the holder or the corporate party.
    pub fn agreements_of(&self, customer: Uuid) -> Result<Vec<Agreement>, StoreError> {
        self.read(|c| {
            agreements_where(c, "holder = ?1 OR corporate = ?1", &[&customer.to_string()])
        })
    }

    /// Agreements `customer` holds (may act under in CORPORATE context).
    pub fn agreements_held_by(&self, customer: Uuid) -> Result<Vec<Agreement>, StoreError> {
        self.read(|c| agreements_where(c, "holder = ?1", &[&customer.to_string()]))
    }

    /// The customer registered under (TPP, PSU-ID), if any.
    pub fn psu_customer(&self, tpp: &TppId, psu_id: Uuid) -> Result<Option<Uuid>, StoreError> {
        self.read(|c| {
            c.prepare_cached(
                "SELECT customer FROM psu_registrations WHERE tpp = ?1 AND psu_id = ?2",
            )?
            .query_row(params![tpp.0, psu_id.to_string()], |r| uuid_at(r, 0))
            .optional()
        })
    }

    /// The consent for `key`, if any (expired ones included; see [`Consent::granted_at`]).
    pub fn consent(&self, key: &ConsentKey) -> Result<Option<Consent>, StoreError> {
        self.read(|c| {
            let head = c
                .prepare_cached(
                    "SELECT seq, customer, granted_at, tpp_session_id FROM consents \
                     WHERE tpp = ?1 AND psu_id = ?2 AND agreement = ?3",
                )?
                .query_row(key_params(key), |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        uuid_at(r, 1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                })
                .optional()?;
            let Some((seq, customer, granted_at, tpp_session_id)) = head else {
                return Ok(None);
            };
            let accounts = c
                .prepare_cached(
                    "SELECT account FROM consent_accounts WHERE consent = ?1 ORDER BY position",
                )?
                .query_map([seq], |r| uuid_at(r, 0))?
                .collect::<rusqlite::Result<_>>()?;
            Ok(Some(Consent {
                customer,
                accounts,
                granted_at: from_nanos(granted_at),
                tpp_session_id,
            }))
        })
    }

    /// Agreement ids under which (TPP, PSU-ID) has a CORPORATE consent.
    pub fn corporate_consents(&self, tpp: &TppId, psu_id: Uuid) -> Result<Vec<Uuid>, StoreError> {
        let mut v: Vec<Uuid> = self.read(|c| {
            c.prepare_cached(
                "SELECT agreement FROM consents WHERE tpp = ?1 AND psu_id = ?2 AND agreement <> ''",
            )?
            .query_map(params![tpp.0, psu_id.to_string()], |r| uuid_at(r, 0))?
            .collect()
        })?;
        v.sort();
        Ok(v)
    }

    /// Records the PSU registration and stores (replaces) the consent for `key`.
    ///
    /// Errors: the database fails ; nothing is stored.
    pub fn put_consent(&self, key: ConsentKey, consent: Consent) -> Result<(), StoreError> {
        self.db.write(|tx| Ok(write_consent(tx, &key, &consent)?))
    }

    /// Stores a new authorisation, dropping ones that expired before `now`.
    ///
    /// Errors: the database fails ; nothing is stored, so no `scaRedirect` may
    /// be sent.
    pub fn insert_authorisation(
        &self,
        auth: Authorisation,
        now: SystemTime,
    ) -> Result<(), StoreError> {
        let cutoff = to_nanos(now)
            .saturating_sub(i64::try_from(AUTHORISATION_LIFETIME.as_nanos()).unwrap_or(i64::MAX));
        self.db.write(|tx| {
            let (step, customer, agreement) = step_columns(&auth.step);
            // Through the index `sca_authorisations_created` ([`indexes`]).
            tx.prepare_cached(indexes::PURGE_SCA_AUTHORISATIONS)?
                .execute(params![cutoff, auth.id.to_string()])?;
            tx.execute(
                &format!(
                    "INSERT OR REPLACE INTO sca_authorisations ({AUTH_COLS}) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
                ),
                params![
                    auth.id.to_string(),
                    auth.tpp.0,
                    auth.tpp_name,
                    auth.redirect_uri,
                    auth.tpp_session_id,
                    to_nanos(auth.created_at),
                    step,
                    customer,
                    agreement
                ],
            )?;
            Ok(())
        })
    }

    /// A usable (known, unexpired, unfinished) authorisation.
    pub fn authorisation(
        &self,
        id: Uuid,
        now: SystemTime,
    ) -> Result<Authorisation, AuthorisationError> {
        match self.read(|c| load_authorisation(c, id)) {
            Ok(a) => usable(a, now),
            Err(_) => Err(AuthorisationError::Storage),
        }
    }

    /// Moves a usable authorisation to `step` (checked again in the same transaction).
    pub fn set_step(
        &self,
        id: Uuid,
        now: SystemTime,
        step: ScaStep,
    ) -> Result<Authorisation, AuthorisationError> {
        let r = self.db.write(|tx| -> Result<_, StoreError> {
            let a = match usable(load_authorisation(tx, id)?, now) {
                Ok(a) => a,
                Err(e) => return Ok(Err(e)),
            };
            update_step(tx, id, &step)?;
            Ok(Ok(Authorisation { step, ..a }))
        });
        r.unwrap_or(Err(AuthorisationError::Storage))
    }

    /// Finishes a usable authorisation and stores `consent` under `key`, in one
    /// transaction, so an authorisation gives at most one consent.
    pub fn finish_with_consent(
        &self,
        id: Uuid,
        now: SystemTime,
        key: ConsentKey,
        consent: Consent,
    ) -> Result<Authorisation, AuthorisationError> {
        let r = self.db.write(|tx| -> Result<_, StoreError> {
            let a = match usable(load_authorisation(tx, id)?, now) {
                Ok(a) => a,
                Err(e) => return Ok(Err(e)),
            };
            update_step(tx, id, &ScaStep::Finished)?;
            write_consent(tx, &key, &consent)?;
            Ok(Ok(Authorisation {
                step: ScaStep::Finished,
                ..a
            }))
        });
        r.unwrap_or(Err(AuthorisationError::Storage))
    }

    // -----------------------------------------------------------------------------------
    // Sandbox management data: manual transactions and balance overrides

    /// The manual transactions of an account, newest first (booking or value date, then
    /// creation order).
    pub fn manual_transactions(&self, account: Uuid) -> Result<Vec<ManualTransaction>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {MANUAL_COLS} FROM manual_transactions WHERE account = ?1 \
                 ORDER BY COALESCE(booking_date, value_date) DESC, seq DESC"
            ))?
            .query_map([account.to_string()], manual_row)?
            .collect()
        })
    }

    /// One manual transaction by its `transactionId`.
    pub fn manual_transaction(&self, id: Uuid) -> Result<Option<ManualTransaction>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {MANUAL_COLS} FROM manual_transactions WHERE id = ?1"
            ))?
            .query_row([id.to_string()], manual_row)
            .optional()
        })
    }

    /// The manual card transactions of a card account, newest first.
    pub fn manual_card_transactions(
        &self,
        card_account: Uuid,
    ) -> Result<Vec<ManualCardTransaction>, StoreError> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {MANUAL_CARD_COLS} FROM manual_card_transactions WHERE card_account = ?1 \
                 ORDER BY COALESCE(booking_date, transaction_date) DESC, seq DESC"
            ))?
            .query_map([card_account.to_string()], manual_card_row)?
            .collect()
        })
    }

    /// The balance override of an account, if one was set.
    pub fn balance_override(&self, account: Uuid) -> Result<Option<BalanceOverride>, StoreError> {
        self.read(|c| {
            c.prepare_cached(
                "SELECT booked, available, after_seq, set_at FROM balance_overrides \
                 WHERE account = ?1",
            )?
            .query_row([account.to_string()], override_row)
            .optional()
        })
    }

    /// The balance override of a card account, if one was set.
    pub fn card_balance_override(
        &self,
        card_account: Uuid,
    ) -> Result<Option<BalanceOverride>, StoreError> {
        self.read(|c| {
            c.prepare_cached(
                "SELECT booked, available, after_seq, set_at FROM card_balance_overrides \
                 WHERE card_account = ?1",
            )?
            .query_row([card_account.to_string()], override_row)
            .optional()
        })
    }
}

fn is_expired(created_at: SystemTime, now: SystemTime) -> bool {
    match now.duration_since(created_at) {
        Ok(age) => age > AUTHORISATION_LIFETIME,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanos_round_trip() {
        for t in [
            UNIX_EPOCH,
            UNIX_EPOCH + Duration::new(1_800_000_000, 123),
            UNIX_EPOCH - Duration::from_secs(5),
        ] {
            assert_eq!(from_nanos(to_nanos(t)), t);
        }
    }
}
