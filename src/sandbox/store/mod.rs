//! The sandbox's state in SQLite ([`crate::sandbox::store::db`]): customers, accounts, card accounts,
//! agreements and their engagements, PSU registrations, consents, SCA authorisations, and the
//! sandbox-management data (manually created transactions and balance overrides).
//!
//! All of the sandbox's SQL lives here: [`Store`]'s methods, the row functions of this module
//! (taking a connection or an open transaction; rows are read and written through
//! [`rows`]), the schema of these tables ([`schema`]), and the per-table modules [`payments`]
//! (payment initiation, signing baskets), [`overview`] (the state browser's lists), [`access`] (sessions, registrations, revocations,
//! card consents, consent resources), [`unattended`], [`sca_browsers`] and [`replay`]. Reads
//! run on the shared connection; every change runs in one `BEGIN IMMEDIATE` transaction
//! ([`Db::write`]), or in a savepoint of a group commit's transaction
//! ([`Db::write_batched`], [`db::group_commit`]), so concurrent requests never lose or duplicate
//! rows. The schema is the
//! migrations [`schema::MIGRATION`] and those of the per-table modules (listed in
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

// First: its macros (`table_row!`) serve the modules after it.
#[macro_use]
pub(crate) mod rows;

pub mod access;
pub mod busy;
pub mod checkpoint;
pub mod db;
pub mod dup_keys;
pub(crate) mod error;
pub(crate) mod faults;
pub mod indexes;
pub(crate) mod overview;
pub mod page_keys;
pub mod payments;
pub(crate) mod replay;
pub(crate) mod sca_browsers;
pub(crate) mod schema;
pub mod shared;
pub mod sql;
pub(crate) mod tenancy;
pub(crate) mod unattended;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::sandbox::store::sql::{Backend, Conn, OptionalExtension, Value, params};
use uuid::Uuid;

pub use crate::sandbox::model::*;
use crate::sandbox::store::db::Db;
pub use crate::sandbox::store::error::StoreError;
pub(crate) use crate::sandbox::store::rows::insert;
pub use crate::sandbox::store::rows::{from_nanos, to_nanos};
use crate::sandbox::store::rows::{select_all, select_one, step_columns, uuid_at};

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
pub fn exists(
    conn: &Conn<'_>,
    what: Unique,
    value: &str,
) -> crate::sandbox::store::sql::Result<bool> {
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
    conn: &Conn<'_>,
    corporate: Uuid,
    holder: Uuid,
) -> crate::sandbox::store::sql::Result<bool> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM agreements WHERE corporate = ?1 AND holder = ?2)",
        [corporate.to_string(), holder.to_string()],
        |r| r.get(0),
    )
}

// ---------------------------------------------------------------------------------------
// Statements shared by the store, the seed and the management handlers

/// Inserts an agreement and its engagements (accounts, in order).
pub fn insert_agreement(conn: &Conn<'_>, a: &Agreement) -> crate::sandbox::store::sql::Result<()> {
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

/// Inserts a manual transaction (its `seq` is ignored) and returns the assigned `seq`
/// (kept for the benches; the store's own callers use [`insert`], which does the same for
/// every stored row).
///
/// Errors: the database fails (its account is gone).
pub fn insert_manual_transaction(
    conn: &Conn<'_>,
    t: &ManualTransaction,
) -> crate::sandbox::store::sql::Result<i64> {
    insert(conn, t)
}

/// Sets (replaces) the balance override of an account (`card = false`) or a card account,
/// recording the current highest manual-transaction seq as its watermark.
pub fn set_balance_override(
    conn: &Conn<'_>,
    card: bool,
    id: Uuid,
    booked: i64,
    available: i64,
    now: SystemTime,
) -> crate::sandbox::store::sql::Result<BalanceOverride> {
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
pub fn clock_offset_nanos(conn: &Conn<'_>) -> crate::sandbox::store::sql::Result<Option<i64>> {
    conn.query_row(
        "SELECT CAST(value AS INTEGER) FROM sandbox_meta WHERE key = 'clock_offset_nanos'",
        [],
        |r| r.get(0),
    )
    .optional()
}

/// Inserts `seed` and marks the database as initialized.
pub fn insert_seed(conn: &Conn<'_>, seed: &SeedData) -> crate::sandbox::store::sql::Result<()> {
    for c in &seed.customers {
        insert(conn, c)?;
    }
    for a in &seed.accounts {
        insert(conn, a)?;
    }
    for c in &seed.card_accounts {
        insert(conn, c)?;
    }
    for a in &seed.agreements {
        insert_agreement(conn, a)?;
    }
    for t in &seed.transactions {
        insert(conn, t)?;
    }
    conn.execute(
        "INSERT INTO sandbox_meta (key, value) VALUES ('initialized_at', CURRENT_TIMESTAMP) \
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [],
    )?;
    Ok(())
}

/// Deletes every row of every table except `schema_migrations` and `sca_page_keys` (all
/// modules' tables, found in the catalogue: SQLite's `sqlite_master`, PostgreSQL's
/// `pg_tables` of the connection's schema), and resets the `seq` counters (SQLite's
/// `sqlite_sequence`; PostgreSQL: `TRUNCATE … RESTART IDENTITY`). Foreign keys are checked at
/// commit, so the order does not matter.
pub fn clear_all_tables(conn: &Conn<'_>) -> crate::sandbox::store::sql::Result<()> {
    conn.execute_batch("PRAGMA defer_foreign_keys = ON")?;
    let catalogue = match conn.backend() {
        Backend::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' \
             AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'schema_migrations' \
             AND name <> 'sca_page_keys'"
        }
        Backend::Postgres => {
            "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() \
             AND tablename <> 'schema_migrations' AND tablename <> 'sca_page_keys' \
             AND tablename <> 'sandbox_data_version' \
             ORDER BY tablename"
        }
    };
    let tables: Vec<String> = conn
        .prepare(catalogue)?
        .query_map([], |r| r.get(0))?
        .collect::<crate::sandbox::store::sql::Result<_>>()?;
    let quoted: Vec<String> = tables
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect();
    if conn.backend() == Backend::Postgres {
        if !quoted.is_empty() {
            conn.execute_batch(&format!("TRUNCATE {} RESTART IDENTITY", quoted.join(", ")))?;
        }
        return Ok(());
    }
    for t in quoted {
        conn.execute(&format!("DELETE FROM {t}"), [])?;
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
///
/// SQLite: the rows `PRAGMA foreign_key_check` names. PostgreSQL (no such check): for every
/// single-column foreign key of the schema (`pg_constraint`), the rows whose value is set and
/// not in the referenced table.
pub fn remove_orphans(conn: &Conn<'_>) -> crate::sandbox::store::sql::Result<usize> {
    if conn.backend() == Backend::Postgres {
        return remove_orphans_postgres(conn);
    }
    let mut removed = 0;
    for _ in 0..16 {
        let orphans: Vec<(String, Option<i64>)> = conn
            .prepare("PRAGMA foreign_key_check")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<crate::sandbox::store::sql::Result<_>>()?;
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

fn remove_orphans_postgres(conn: &Conn<'_>) -> crate::sandbox::store::sql::Result<usize> {
    let keys: Vec<(String, String, String, String)> = conn
        .prepare(
            "SELECT c.conrelid::regclass::text, a.attname::text, \
                    c.confrelid::regclass::text, fa.attname::text \
             FROM pg_constraint c \
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] \
             JOIN pg_attribute fa ON fa.attrelid = c.confrelid AND fa.attnum = c.confkey[1] \
             WHERE c.contype = 'f' AND array_length(c.conkey, 1) = 1 \
               AND c.connamespace = current_schema()::regnamespace",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<crate::sandbox::store::sql::Result<_>>()?;
    let mut removed = 0;
    for _ in 0..16 {
        let mut round = 0;
        for (table, column, parent, parent_column) in &keys {
            let q = |s: &str| format!("\"{}\"", s.trim_matches('"').replace('"', "\"\""));
            round += conn.execute(
                &format!(
                    "DELETE FROM {t} WHERE {c} IS NOT NULL AND NOT EXISTS \
                     (SELECT 1 FROM {p} WHERE {p}.{pc} = {t}.{c})",
                    t = q(table),
                    c = q(column),
                    p = q(parent),
                    pc = q(parent_column)
                ),
                [],
            )?;
        }
        removed += round;
        if round == 0 {
            break;
        }
    }
    Ok(removed)
}

fn agreements_where(
    conn: &Conn<'_>,
    condition: &str,
    args: &[&dyn crate::sandbox::store::sql::ToValue],
) -> crate::sandbox::store::sql::Result<Vec<Agreement>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, name, corporate, holder FROM agreements WHERE {condition} ORDER BY seq"
    ))?;
    let heads: Vec<(Uuid, String, Uuid, Uuid)> = stmt
        .query_map(args, |r| {
            Ok((uuid_at(r, 0)?, r.get(1)?, uuid_at(r, 2)?, uuid_at(r, 3)?))
        })?
        .collect::<crate::sandbox::store::sql::Result<_>>()?;
    let mut eng = conn.prepare_cached(
        "SELECT account FROM agreement_engagements WHERE agreement = ?1 ORDER BY position",
    )?;
    heads
        .into_iter()
        .map(|(id, name, corporate, holder)| {
            let accounts = eng
                .query_map([id.to_string()], |r| uuid_at(r, 0))?
                .collect::<crate::sandbox::store::sql::Result<_>>()?;
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

/// Stores a new authorisation in `tx`, dropping the ones of its TPP that expired before
/// `now` (that TPP's world clock; another TPP's world may be behind it) (the writes of
/// [`Store::insert_authorisation`], for a caller's own transaction). The purge runs once per
/// TPP per transaction or group-commit batch ([`Conn::execute_pipelined_once`]: issue 23,
/// one `DELETE` per batch of a TPP's consents instead of one per consent), with the `now`
/// of that TPP's first authorisation in it; what it leaves, the next one drops (an expired
/// authorisation is refused whether or not it was purged: [`Store::authorisation`]).
///
/// Errors: the database fails.
pub fn write_authorisation(
    tx: &Conn<'_>,
    auth: &Authorisation,
    now: SystemTime,
) -> crate::sandbox::store::sql::Result<()> {
    let cutoff = to_nanos(now)
        .saturating_sub(i64::try_from(AUTHORISATION_LIFETIME.as_nanos()).unwrap_or(i64::MAX));
    // Through the index `sca_authorisations_by_tpp_created` ([`indexes`]).
    tx.execute_pipelined_once(
        ("purge_sca_authorisations", &auth.tpp.0),
        indexes::PURGE_SCA_AUTHORISATIONS,
        || {
            vec![
                Value::Integer(cutoff),
                Value::Text(auth.id.to_string()),
                Value::Text(auth.tpp.0.to_string()),
            ]
        },
    )?;
    rows::replace(tx, auth)?;
    Ok(())
}

fn load_authorisation(
    conn: &Conn<'_>,
    id: Uuid,
) -> crate::sandbox::store::sql::Result<Option<Authorisation>> {
    select_one(conn, "sca_authorisations WHERE id = ?1", [id.to_string()])
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

fn update_step(
    conn: &Conn<'_>,
    id: Uuid,
    step: &ScaStep,
) -> crate::sandbox::store::sql::Result<()> {
    let (name, customer, agreement) = step_columns(step);
    conn.prepare_cached(
        "UPDATE sca_authorisations SET step = ?2, customer = ?3, agreement = ?4 WHERE id = ?1",
    )?
    .execute(params![
        id.to_string(),
        name,
        customer.map(|c| c.to_string()),
        agreement.map(|a| a.to_string())
    ])?;
    Ok(())
}

fn agreement_key(a: Option<Uuid>) -> String {
    a.map(|a| a.to_string()).unwrap_or_default()
}

/// The `(tpp, psu_id, agreement)` columns of consent `key` as stored (the agreement empty
/// for the PSU's private context), the `?1, ?2, ?3` of the consent tables' queries.
fn key_params(key: &ConsentKey) -> (&str, String, String) {
    (
        &*key.tpp.0,
        key.psu_id.to_string(),
        agreement_key(key.agreement),
    )
}

fn write_consent(
    conn: &Conn<'_>,
    key: &ConsentKey,
    consent: &Consent,
) -> crate::sandbox::store::sql::Result<()> {
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
    let seq = conn.insert_seq(
        "INSERT INTO consents (tpp, psu_id, agreement, customer, granted_at, tpp_session_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            tpp,
            psu,
            agreement,
            consent.customer.to_string(),
            to_nanos(consent.granted_at),
            consent.tpp_session_id
        ],
    )?;
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

/// What a payment creation reads before its write ([`Store::payment_context`]).
#[derive(Debug, Clone, Default)]
pub struct PaymentContext {
    /// Whether a payment is due (a batch run is to run first).
    pub due: bool,
    /// The customer registered under the PSU-ID asked for (`psu_registrations` only).
    pub psu_customer: Option<Customer>,
    /// The account with the BBAN asked for.
    pub debtor: Option<Account>,
    /// The owner of [`PaymentContext::debtor`].
    pub debtor_owner: Option<Customer>,
}

/// The sandbox state store over the shared database.
pub struct Store {
    db: Arc<Db>,
    /// What [`Store::payment_context`] read per (TPP, PSU-ID, debtor BBAN), with the
    /// generation of the customers, accounts and registrations it was read at
    /// ([`crate::sandbox::store::db::Changes`]; SQLite only). Bounded: emptied when full.
    contexts: std::sync::Mutex<std::collections::HashMap<ContextKey, (u64, PaymentContext)>>,
}

/// The key of a cached [`PaymentContext`]: the TPP, the PSU-ID and the debtor's BBAN asked
/// for (the TPP first: one TPP's registrations are never another's).
type ContextKey = (Arc<str>, Option<Uuid>, Option<String>);

/// How many [`PaymentContext`]s a store keeps at most (each a few hundred bytes).
const CONTEXTS_MAX: usize = 4096;

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}

impl Store {
    /// The store over `db` (migrated with [`schema::MIGRATION`]); seeds it with `seed` in one
    /// transaction when it has never been initialized. An existing state is kept.
    ///
    /// Errors: the database fails.
    pub fn open(
        db: Arc<Db>,
        seed: impl FnOnce() -> SeedData,
    ) -> crate::sandbox::store::sql::Result<Self> {
        if let Some(changes) = db.changes() {
            changes.watch_next_due(payments::NEXT_DUE);
        }
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
        Ok(Store {
            db,
            contexts: Default::default(),
        })
    }

    /// The database behind the store (for one-transaction changes spanning several tables).
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }

    /// Runs a read on the connection. Errors: the database fails ([`StoreError`]).
    fn read<T>(
        &self,
        f: impl FnOnce(&Conn<'_>) -> crate::sandbox::store::sql::Result<T>,
    ) -> Result<T, StoreError> {
        self.db.read(f)
    }

    /// Every row of `SELECT T::COLUMNS FROM {from}` ([`rows::select_all`]): one statement,
    /// so on PostgreSQL one round trip ([`Db::read_single`]).
    fn all<T: rows::Stored>(
        &self,
        from: &str,
        args: impl crate::sandbox::store::sql::Params,
    ) -> Result<Vec<T>, StoreError> {
        Ok(self.db.read_single(|c| select_all(c, from, args))?)
    }

    /// The first of [`Store::all`] (`from` names a unique key), if any.
    fn one<T: rows::Stored>(
        &self,
        from: &str,
        args: impl crate::sandbox::store::sql::Params,
    ) -> Result<Option<T>, StoreError> {
        Ok(self.all(from, args)?.into_iter().next())
    }

    /// The persisted sandbox clock offset (`sandbox_meta` key `clock_offset_nanos`, written by
    /// `POST /v1/sandbox/clock` with [`Store::write_clock_offset`]); `None` when the clock was
    /// not advanced since the last initialization. A negative stored value reads as zero.
    ///
    /// Errors: the database fails.
    pub fn clock_offset(&self) -> crate::sandbox::store::sql::Result<Option<Duration>> {
        let nanos = self.db.read_raw(clock_offset_nanos)?;
        Ok(nanos.map(|n| Duration::from_nanos(u64::try_from(n).unwrap_or(0))))
    }

    /// Persists the sandbox clock offset in `tx` (part of the `POST /v1/sandbox/clock`
    /// transaction); [`Store::initialize`] removes it with the rest of `sandbox_meta`.
    ///
    /// Errors: the database fails.
    pub fn write_clock_offset(
        tx: &Conn<'_>,
        offset: Duration,
    ) -> crate::sandbox::store::sql::Result<()> {
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
        self.all("customers ORDER BY seq", [])
    }

    /// The sandbox customer with this id, if any.
    ///
    /// Errors: the database fails.
    pub fn customer(&self, id: Uuid) -> Result<Option<Customer>, StoreError> {
        self.one("customers WHERE id = ?1", [id.to_string()])
    }

    /// The sandbox customer with this customerNumber, if any.
    ///
    /// Errors: the database fails.
    pub fn customer_by_number(&self, number: &str) -> Result<Option<Customer>, StoreError> {
        self.one("customers WHERE number = ?1", [number])
    }

    /// The account with this id, if any.
    ///
    /// Errors: the database fails.
    pub fn account(&self, id: Uuid) -> Result<Option<Account>, StoreError> {
        self.one("accounts WHERE id = ?1", [id.to_string()])
    }

    /// The account with this BBAN, if any.
    pub fn account_by_bban(&self, bban: &str) -> Result<Option<Account>, StoreError> {
        self.one("accounts WHERE bban = ?1", [bban])
    }

    /// Accounts owned by `customer`, in creation order.
    pub fn accounts_of(&self, customer: Uuid) -> Result<Vec<Account>, StoreError> {
        self.all(
            "accounts WHERE owner = ?1 ORDER BY seq",
            [customer.to_string()],
        )
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
            let mut out = Vec::new();
            for id in ids {
                out.extend(select_one(c, "accounts WHERE id = ?1", [id.to_string()])?);
            }
            Ok(out)
        })
    }

    /// Card accounts owned by `customer`, in creation order.
    pub fn card_accounts_of(&self, customer: Uuid) -> Result<Vec<CardAccount>, StoreError> {
        self.all(
            "card_accounts WHERE owner = ?1 ORDER BY seq",
            [customer.to_string()],
        )
    }

    /// One card account.
    pub fn card_account(&self, id: Uuid) -> Result<Option<CardAccount>, StoreError> {
        self.one("card_accounts WHERE id = ?1", [id.to_string()])
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

    /// What a payment creation reads before its write, in ONE statement (on PostgreSQL one
    /// round trip instead of four: issue 23): whether a payment is due at `now` (Unix seconds;
    /// [`payments::any_due`]; the statement binds no time: [`payments::NEXT_DUE`]), the
    /// customer registered under (`tpp`, `psu_id`) in `psu_registrations`
    /// ([`Store::psu_customer`] then [`Store::customer`]), and the account with BBAN `bban`
    /// ([`Store::account_by_bban`]) with its owner ([`Store::customer`]). A `None` argument
    /// reads nothing for its part. On SQLite the answer is kept per (TPP, PSU-ID, BBAN) and
    /// given again while no write has changed a customer, an account, a registration or a
    /// payment's run time since (issue 23, session 19; exact: [`crate::sandbox::store::db::Changes`]).
    ///
    /// Errors: the database fails.
    pub fn payment_context(
        &self,
        now: i64,
        tpp: &TppId,
        psu_id: Option<Uuid>,
        bban: Option<&str>,
    ) -> Result<PaymentContext, StoreError> {
        // SQLite: the cached read while nothing it depends on changed since (exact: see
        // `store::db::Changes`); the generation is taken before the read, so a read that
        // overlaps a change is kept under the generation that change ends.
        let key: ContextKey = (tpp.0.clone(), psu_id, bban.map(str::to_string));
        let generation = self.db.changes().and_then(|c| c.entities());
        if let (Some(g), Some(next)) = (generation, self.db.changes().and_then(|c| c.next_due())) {
            let contexts = self.contexts.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((_, hit)) = contexts.get(&key).filter(|(at, _)| *at == g) {
                return Ok(PaymentContext {
                    due: next.is_some_and(|at| at <= now),
                    ..hit.clone()
                });
            }
        }
        let read = self.payment_context_read(now, tpp, psu_id, bban)?;
        if let Some(g) = generation {
            let mut contexts = self.contexts.lock().unwrap_or_else(|p| p.into_inner());
            if contexts.len() >= CONTEXTS_MAX {
                contexts.clear();
            }
            contexts.insert(key, (g, read.clone()));
        }
        Ok(read)
    }

    /// [`Store::payment_context`] from the database.
    fn payment_context_read(
        &self,
        now: i64,
        tpp: &TppId,
        psu_id: Option<Uuid>,
        bban: Option<&str>,
    ) -> Result<PaymentContext, StoreError> {
        static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            let cols = |alias: &str, columns: &str| {
                columns
                    .split(", ")
                    .map(|c| format!("{alias}.{c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!(
                "SELECT ({due}), {c}, {a}, {o} \
                 FROM (SELECT 1 AS one) AS one \
                 LEFT JOIN psu_registrations r ON r.tpp = ?1 AND r.psu_id = ?2 \
                 LEFT JOIN customers c ON c.id = r.customer \
                 LEFT JOIN accounts a ON a.bban = ?3 \
                 LEFT JOIN customers o ON o.id = a.owner",
                due = payments::NEXT_DUE,
                c = cols("c", <Customer as rows::Stored>::COLUMNS),
                a = cols("a", <Account as rows::Stored>::COLUMNS),
                o = cols("o", <Customer as rows::Stored>::COLUMNS),
            )
        });
        let customer_n = <Customer as rows::Stored>::COLUMNS.split(", ").count();
        let account_n = <Account as rows::Stored>::COLUMNS.split(", ").count();
        let present = |r: &crate::sandbox::store::sql::Row, at: usize| {
            r.get_ref(at)
                .map(|v| !matches!(v, crate::sandbox::store::sql::Value::Null))
        };
        Ok(self.db.read_single(|c| {
            c.prepare_cached(&SQL)?.query_row(
                params![
                    tpp.0,
                    psu_id.map(|p| p.to_string()),
                    bban.map(str::to_string)
                ],
                |r| {
                    let customer_at = 1;
                    let account_at = customer_at + customer_n;
                    let owner_at = account_at + account_n;
                    let read_customer = |at: usize| -> crate::sandbox::store::sql::Result<_> {
                        Ok(if present(r, at)? {
                            Some(<Customer as rows::Stored>::from_row(
                                &r.columns(at..at + customer_n)?,
                            )?)
                        } else {
                            None
                        })
                    };
                    let debtor = if present(r, account_at)? {
                        Some(<Account as rows::Stored>::from_row(
                            &r.columns(account_at..owner_at)?,
                        )?)
                    } else {
                        None
                    };
                    Ok(PaymentContext {
                        due: r.get::<_, Option<i64>>(0)?.is_some_and(|at| at <= now),
                        psu_customer: read_customer(customer_at)?,
                        debtor,
                        debtor_owner: read_customer(owner_at)?,
                    })
                },
            )
        })?)
    }

    /// The customer registered under (TPP, PSU-ID), if any.
    pub fn psu_customer(&self, tpp: &TppId, psu_id: Uuid) -> Result<Option<Uuid>, StoreError> {
        // One statement: on PostgreSQL one round trip, no transaction.
        Ok(self.db.read_single(|c| {
            c.prepare_cached(
                "SELECT customer FROM psu_registrations WHERE tpp = ?1 AND psu_id = ?2",
            )?
            .query_row(params![tpp.0, psu_id.to_string()], |r| uuid_at(r, 0))
            .optional()
        })?)
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
                .collect::<crate::sandbox::store::sql::Result<_>>()?;
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
        self.db.write(|tx| Ok(write_authorisation(tx, &auth, now)?))
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
        self.change_usable(id, now, |tx, a| {
            update_step(tx, id, &step)?;
            Ok(Authorisation { step, ..a })
        })
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
        self.change_usable(id, now, |tx, a| {
            update_step(tx, id, &ScaStep::Finished)?;
            write_consent(tx, &key, &consent)?;
            Ok(Authorisation {
                step: ScaStep::Finished,
                ..a
            })
        })
    }

    /// Runs `change` in one write transaction on authorisation `id` when it is usable at
    /// `now` (checked in that transaction); its answer is the changed authorisation.
    fn change_usable(
        &self,
        id: Uuid,
        now: SystemTime,
        change: impl FnOnce(
            &Conn<'_>,
            Authorisation,
        ) -> crate::sandbox::store::sql::Result<Authorisation>,
    ) -> Result<Authorisation, AuthorisationError> {
        let r = self.db.write(|tx| -> Result<_, StoreError> {
            Ok(match usable(load_authorisation(tx, id)?, now) {
                Ok(a) => Ok(change(tx, a)?),
                Err(e) => Err(e),
            })
        });
        r.unwrap_or(Err(AuthorisationError::Storage))
    }

    // -----------------------------------------------------------------------------------
    // Sandbox management data: manual transactions and balance overrides

    /// The manual transactions of an account, newest first (booking or value date, then
    /// creation order).
    pub fn manual_transactions(&self, account: Uuid) -> Result<Vec<ManualTransaction>, StoreError> {
        self.all(
            "manual_transactions WHERE account = ?1 \
             ORDER BY COALESCE(booking_date, value_date) DESC, seq DESC",
            [account.to_string()],
        )
    }

    /// One manual transaction by its `transactionId`.
    pub fn manual_transaction(&self, id: Uuid) -> Result<Option<ManualTransaction>, StoreError> {
        self.one("manual_transactions WHERE id = ?1", [id.to_string()])
    }

    /// The manual card transactions of a card account, newest first.
    pub fn manual_card_transactions(
        &self,
        card_account: Uuid,
    ) -> Result<Vec<ManualCardTransaction>, StoreError> {
        self.all(
            "manual_card_transactions WHERE card_account = ?1 \
             ORDER BY COALESCE(booking_date, transaction_date) DESC, seq DESC",
            [card_account.to_string()],
        )
    }

    /// The balance override of an account, if one was set.
    pub fn balance_override(&self, account: Uuid) -> Result<Option<BalanceOverride>, StoreError> {
        self.one(
            "balance_overrides WHERE account = ?1",
            [account.to_string()],
        )
    }

    /// The balance override of a card account, if one was set.
    pub fn card_balance_override(
        &self,
        card_account: Uuid,
    ) -> Result<Option<BalanceOverride>, StoreError> {
        self.one(
            "card_balance_overrides WHERE card_account = ?1",
            [card_account.to_string()],
        )
    }
}

fn is_expired(created_at: SystemTime, now: SystemTime) -> bool {
    match now.duration_since(created_at) {
        Ok(age) => age > AUTHORISATION_LIFETIME,
        Err(_) => false,
    }
}

#[cfg(test)]
#[path = "../../../tests/it/common/pg.rs"]
pub(crate) mod pg_cluster;

#[cfg(test)]
mod backend_tests;
