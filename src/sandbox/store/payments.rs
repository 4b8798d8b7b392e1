//! The payment tables (SQLite, migration [`MIGRATION`]) and their rows.
//!
//! | Table | Holds |
//! |---|---|
//! | `pis_payments` | one row per payment resource (single, bulk or periodic) |
//! | `pis_authorisations` | SCA authorisations of a payment or a signing basket |
//! | `pis_baskets`, `pis_basket_payments` | signing baskets and their payments, in order |
//! | `pis_psus` | PSU-IDs created by payment SCA or `X-PSU-IDENTITY`, per TPP |
//!
//! Times are Unix seconds on the sandbox clock; dates `YYYY-MM-DD`. Settled payments are
//! booked as the Store's manual transactions (see [`crate::sandbox::domain::settlement::execute`]);
//! sandbox initialization empties these tables with every other one.

use crate::sandbox::store::sql::{Conn, OptionalExtension, params};

use crate::sandbox::store::db::Migration;

/// The schema of the payment and signing-basket tables.
pub const MIGRATION: Migration = (
    "0100_payments_and_signing_baskets",
    "CREATE TABLE pis_payments (
        id TEXT PRIMARY KEY,
        tpp TEXT NOT NULL,
        service TEXT NOT NULL,
        product TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        held_from TEXT,
        funds_available INTEGER,
        body TEXT NOT NULL,
        debtor_account TEXT NOT NULL,
        currency TEXT NOT NULL,
        amount_minor INTEGER NOT NULL,
        execution_date TEXT,
        dedup_key TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        created_day TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        tpp_session_id TEXT NOT NULL,
        expected_customer TEXT,
        customer TEXT,
        psu_id TEXT,
        agreement TEXT,
        approved_at INTEGER,
        due_at INTEGER,
        settled_at INTEGER,
        reason TEXT
    );
    CREATE INDEX pis_payments_due ON pis_payments(status, due_at);
    CREATE INDEX pis_payments_dedup ON pis_payments(dedup_key, created_day);
    -- Before pis_authorisations, which references it (PostgreSQL checks references when
    -- a table is created).
    CREATE TABLE pis_baskets (
        id TEXT PRIMARY KEY,
        tpp TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        redirect_uri TEXT NOT NULL,
        tpp_session_id TEXT NOT NULL,
        expected_customer TEXT,
        cancelled INTEGER NOT NULL DEFAULT 0,
        authorised INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE pis_authorisations (
        id TEXT PRIMARY KEY,
        tpp TEXT NOT NULL,
        tpp_name TEXT NOT NULL,
        payment TEXT REFERENCES pis_payments(id),
        basket TEXT REFERENCES pis_baskets(id),
        redirect_uri TEXT NOT NULL,
        tpp_session_id TEXT NOT NULL,
        sca_status TEXT NOT NULL,
        customer TEXT,
        agreement TEXT,
        created_at INTEGER NOT NULL
    );
    CREATE TABLE pis_basket_payments (
        basket TEXT NOT NULL REFERENCES pis_baskets(id),
        payment TEXT NOT NULL REFERENCES pis_payments(id),
        position INTEGER NOT NULL,
        PRIMARY KEY (basket, payment)
    );
    CREATE INDEX pis_basket_payments_payment ON pis_basket_payments(payment);
    CREATE TABLE pis_psus (
        tpp TEXT NOT NULL,
        psu_id TEXT NOT NULL,
        customer TEXT NOT NULL,
        PRIMARY KEY (tpp, psu_id)
    );",
);

/// ISO 20022 transaction statuses used by the sandbox (Berlin Group `transactionStatus`),
/// the codes of the one vocabulary [`crate::xs2a::status::TransactionStatus`] (whose
/// [`crate::xs2a::status::verdict`] says what each means to the TPP).
pub mod status {
    use crate::xs2a::status::TransactionStatus as T;
    /// Received, waiting for SCA.
    pub const RCVD: &str = T::RCVD.as_str();
    /// Authorised (SCA done), waiting for the batch run.
    pub const ACTC: &str = T::ACTC.as_str();
    /// Settled on the debtor's account.
    pub const ACSC: &str = T::ACSC.as_str();
    /// Rejected for lack of funds at execution (interface document: "ACCP is named for
    /// payments rejected for lack of funds"); `fundsAvailable` is `false`.
    pub const ACCP: &str = T::ACCP.as_str();
    /// On hold or stopped by the bank (interface document 2.12.0: "new status for payments on
    /// hold or stopped"; Berlin Group `PDNG`: "further checks and status update will be
    /// performed").
    pub const PDNG: &str = T::PDNG.as_str();
    /// Rejected by the PSU during SCA.
    pub const RJCT: &str = T::RJCT.as_str();
    /// Cancelled by the TPP (DELETE) before execution.
    pub const CANC: &str = T::CANC.as_str();
    /// A signing basket some, not all, of whose payments are authorised.
    pub const PATC: &str = T::PATC.as_str();
}

/// `scaStatus` values used (Berlin Group `scaStatus`).
pub mod sca_status {
    /// `received`: the authorisation exists, the PSU has not logged in.
    pub const RECEIVED: &str = "received";
    /// `psuIdentified`: the PSU logged in at the SCA page.
    pub const PSU_IDENTIFIED: &str = "psuIdentified";
    /// `finalised`: the PSU approved.
    pub const FINALISED: &str = "finalised";
    /// `failed`: the PSU rejected or the SCA failed.
    pub const FAILED: &str = "failed";
}

table_row! {
    /// One `pis_payments` row.
    #[derive(Debug, Clone)]
    // The fields are the table's columns, named and described in its migration.
    #[allow(missing_docs)]
    pub struct PaymentRow {
        columns {
            id: String,
            tpp: String,
            service: String,
            product: String,
            kind: String,
            status: String,
            held_from: Option<String>,
            funds_available: Option<bool>,
            /// The normalised body (JSON text).
            body: String,
            /// The debtor's sandbox account id.
            debtor_account: String,
            currency: String,
            amount_minor: i64,
            execution_date: Option<String>,
            dedup_key: String,
            created_at: i64,
            created_day: String,
            redirect_uri: String,
            tpp_session_id: String,
            /// The customer bound by `PSU-ID` or `X-PSU-IDENTITY` at initiation.
            expected_customer: Option<String>,
            /// The customer who approved.
            customer: Option<String>,
            psu_id: Option<String>,
            agreement: Option<String>,
            approved_at: Option<i64>,
            /// When the batch run takes it (set at approval; `None` for periodic payments).
            due_at: Option<i64>,
            settled_at: Option<i64>,
            /// Why the status last changed (shown in explanatory errors).
            reason: Option<String>,
        }
    }
}

const PAYMENT_COLUMNS: &str = PaymentRow::COLUMNS;

/// `INSERT INTO pis_payments` of every column, built once.
static INSERT_PAYMENT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "INSERT INTO pis_payments ({}) VALUES ({})",
        PaymentRow::COLUMNS,
        PaymentRow::placeholders()
    )
});

/// `INSERT INTO pis_authorisations` of every column, built once.
static INSERT_AUTHORISATION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "INSERT INTO pis_authorisations ({}) VALUES ({})",
        AuthorisationRow::COLUMNS,
        AuthorisationRow::placeholders()
    )
});

/// `INSERT INTO pis_payments` of the columns a new payment fills
/// ([`PaymentRow::is_new`]): every column but [`LATER_PAYMENT_COLUMNS`], which it leaves
/// NULL (none of them has a default). The same row as [`INSERT_PAYMENT`] with those columns
/// bound to NULL, with 18 values bound instead of 26 (issue 23: each bound NULL cost ~90
/// instructions of a payment creation's writer).
pub(crate) const INSERT_NEW_PAYMENT: &str = "INSERT INTO pis_payments (id, tpp, service, product, kind, status, \
     body, debtor_account, currency, amount_minor, execution_date, dedup_key, \
     created_at, created_day, redirect_uri, tpp_session_id, expected_customer, reason) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)";

/// The columns of `pis_payments` that [`INSERT_NEW_PAYMENT`] leaves NULL: set by the steps
/// after the initiation (SCA, the batch run, a fault).
pub const LATER_PAYMENT_COLUMNS: [&str; 8] = [
    "held_from",
    "funds_available",
    "customer",
    "psu_id",
    "agreement",
    "approved_at",
    "due_at",
    "settled_at",
];

impl PaymentRow {
    /// Whether every column of [`LATER_PAYMENT_COLUMNS`] is `None` (a payment as its
    /// initiation creates it), so that [`insert_payment`] may leave them out.
    fn is_new(&self) -> bool {
        self.held_from.is_none()
            && self.funds_available.is_none()
            && self.customer.is_none()
            && self.psu_id.is_none()
            && self.agreement.is_none()
            && self.approved_at.is_none()
            && self.due_at.is_none()
            && self.settled_at.is_none()
    }
}

/// Inserts a new payment: a row whose [`LATER_PAYMENT_COLUMNS`] are all `None` through
/// [`INSERT_NEW_PAYMENT`] (those columns stored NULL, as the full statement binds them),
/// any other through every column.
///
/// On SQLite's request connection the row is listed in the writer's duplicate keys
/// ([`crate::sandbox::store::dup_keys::DupKeys::record`]).
pub fn insert_payment(c: &Conn<'_>, p: &PaymentRow) -> crate::sandbox::store::sql::Result<()> {
    use crate::sandbox::store::sql::ToValue;
    let keys = c.dup_keys();
    if let Some(k) = keys {
        k.before_insert();
    }
    if p.is_new() {
        let values: [&dyn ToValue; 18] = [
            &p.id,
            &p.tpp,
            &p.service,
            &p.product,
            &p.kind,
            &p.status,
            &p.body,
            &p.debtor_account,
            &p.currency,
            &p.amount_minor,
            &p.execution_date,
            &p.dedup_key,
            &p.created_at,
            &p.created_day,
            &p.redirect_uri,
            &p.tpp_session_id,
            &p.expected_customer,
            &p.reason,
        ];
        c.execute_kept(INSERT_NEW_PAYMENT, &values[..])?;
    } else {
        c.execute_kept(INSERT_PAYMENT.as_str(), p.to_params().as_slice())?;
    }
    if let (Some(k), Some(sqlite)) = (keys, c.as_sqlite()) {
        k.record(
            &p.tpp,
            &p.created_day,
            &p.dedup_key,
            sqlite.last_insert_rowid(),
        );
    }
    if p.status == status::ACTC && p.due_at.is_some() {
        // A new payment that changes [`NEXT_DUE`]: updated once, so that SQLite's update
        // hook tells the cache of the next run time (`store::db::Changes`), which takes
        // the creations of payments (always received, without a run time) for no change.
        c.execute(
            "UPDATE pis_payments SET due_at = due_at WHERE id = ?1",
            [p.id.as_str()],
        )?;
    }
    Ok(())
}

/// The payment `id`, if any.
pub fn payment(c: &Conn<'_>, id: &str) -> crate::sandbox::store::sql::Result<Option<PaymentRow>> {
    c.query_row(
        &format!("SELECT {PAYMENT_COLUMNS} FROM pis_payments WHERE id = ?1"),
        [id],
        PaymentRow::from_row,
    )
    .optional()
}

/// Payments matching `where_sql` (a condition on `pis_payments` with `?1` bound to `arg`),
/// in execution order: by `due_at`, approval time, creation time, then insertion order.
pub fn payments_where(
    c: &Conn<'_>,
    where_sql: &str,
    arg: i64,
) -> crate::sandbox::store::sql::Result<Vec<PaymentRow>> {
    let mut st = c.prepare(&format!(
        "SELECT {PAYMENT_COLUMNS} FROM pis_payments WHERE {where_sql} \
         ORDER BY due_at, approved_at, created_at, rowid"
    ))?;
    let rows = st.query_map([arg], PaymentRow::from_row)?;
    rows.collect()
}

/// Which authorised payments a batch run takes ([`batch_candidates`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    /// `ACTC` payments whose run time (`due_at`) has passed.
    Due,
    /// Every `ACTC` payment with a run time (`POST /v1/sandbox/batch`).
    AllAuthorised,
}

impl Batch {
    fn condition(self) -> &'static str {
        match self {
            Batch::Due => DUE_CONDITION,
            Batch::AllAuthorised => "status = 'ACTC' AND due_at IS NOT NULL AND ?1 = ?1",
        }
    }
}

/// The condition of a payment due at `?1` (Unix seconds) for the next batch run.
pub const DUE_CONDITION: &str = "status = 'ACTC' AND due_at IS NOT NULL AND due_at <= ?1";

/// The payments a batch run at `now` (Unix seconds) takes, in execution order.
pub fn batch_candidates(
    c: &Conn<'_>,
    which: Batch,
    now: i64,
) -> crate::sandbox::store::sql::Result<Vec<PaymentRow>> {
    payments_where(c, which.condition(), now)
}

/// The earliest run time (`due_at`, Unix seconds) of an authorised (`ACTC`) payment, or NULL:
/// a payment is due at `now` exactly when this is `<= now` ([`DUE_CONDITION`]). A statement
/// without a bound value, so a cached one is never prepared again: with `due_at <= ?1` the
/// bundled SQLite (built with `SQLITE_ENABLE_STAT4`) estimates the range from the bound value,
/// and every new binding then expires the statement, which re-prepares it at its next step
/// (issue 23: an eighth of a SQLite payment creation's CPU in `sqlite3Reprepare`).
pub const NEXT_DUE: &str = "SELECT min(due_at) FROM pis_payments WHERE status = 'ACTC'";

/// Whether a payment is due at `now` (Unix seconds): [`NEXT_DUE`] compared with `now`.
pub fn any_due(c: &Conn<'_>, now: i64) -> crate::sandbox::store::sql::Result<bool> {
    let next: Option<i64> = c.prepare_cached(NEXT_DUE)?.query_row([], |r| r.get(0))?;
    Ok(next.is_some_and(|at| at <= now))
}

/// Whether a payment of the TPP `tpp` with `key`, created on `day` and not rejected or
/// cancelled, exists. Another TPP's payment is never a duplicate of this TPP's: each TPP has
/// its own world (issue 20), and a refusal would tell it that somebody else initiated the
/// same payment.
///
/// On SQLite's request connection the writer's duplicate keys
/// ([`crate::sandbox::store::dup_keys`]) name the rows that may be one (loading the TPP's
/// day first, [`crate::sandbox::store::indexes::DUPLICATES_OF_DAY`]), each confirmed by its
/// row ([`crate::sandbox::store::indexes::DUPLICATE_CONFIRMED`]); elsewhere (PostgreSQL)
/// one statement searches the keyed index
/// ([`crate::sandbox::store::indexes::LOGICAL_DUPLICATE`]). The same answer either way.
///
/// Errors: the database fails.
pub fn logical_duplicate_exists(
    c: &Conn<'_>,
    tpp: &str,
    key: &str,
    day: &str,
) -> crate::sandbox::store::sql::Result<bool> {
    use crate::sandbox::store::indexes::{DUPLICATE_CONFIRMED, DUPLICATES_OF_DAY};
    let Some(keys) = c.dup_keys() else {
        return c.query_row(
            crate::sandbox::store::indexes::LOGICAL_DUPLICATE,
            params![key, day, tpp],
            |r| r.get(0),
        );
    };
    let candidates = keys.candidates(tpp, day, key, || {
        c.prepare_cached(DUPLICATES_OF_DAY)?
            .query_map(params![tpp, day], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<crate::sandbox::store::sql::Result<Vec<(i64, String)>>>()
    })?;
    for rowid in candidates {
        let found: bool = c.query_row(DUPLICATE_CONFIRMED, params![rowid, tpp, key, day], |r| {
            r.get(0)
        })?;
        if found {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Sets the status (and reason) of a payment.
pub fn set_status(
    c: &Conn<'_>,
    id: &str,
    status: &str,
    reason: Option<&str>,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE pis_payments SET status = ?2, reason = COALESCE(?3, reason) WHERE id = ?1",
        params![id, status, reason],
    )?;
    Ok(())
}

/// Records the approval: status, approver, PSU-ID, agreement, time and batch time.
#[allow(clippy::too_many_arguments)]
pub fn approve(
    c: &Conn<'_>,
    id: &str,
    status: &str,
    customer: &str,
    psu_id: &str,
    agreement: Option<&str>,
    at: i64,
    due_at: Option<i64>,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE pis_payments SET status = ?2, customer = ?3, psu_id = ?4, agreement = ?5, \
         approved_at = ?6, due_at = ?7, reason = 'authorised by the PSU' WHERE id = ?1",
        params![id, status, customer, psu_id, agreement, at, due_at],
    )?;
    Ok(())
}

/// Records the outcome of an execution attempt.
pub fn executed(
    c: &Conn<'_>,
    id: &str,
    status: &str,
    funds_available: bool,
    at: i64,
    reason: &str,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE pis_payments SET status = ?2, funds_available = ?3, \
         settled_at = CASE WHEN ?2 = 'ACSC' THEN ?4 ELSE settled_at END, reason = ?5 \
         WHERE id = ?1",
        params![id, status, funds_available, at, reason],
    )?;
    Ok(())
}

/// Puts a payment on hold (`PDNG`), remembering its status; or releases it.
pub fn set_hold(
    c: &Conn<'_>,
    id: &str,
    status: &str,
    held_from: Option<&str>,
    reason: &str,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE pis_payments SET status = ?2, held_from = ?3, reason = ?4 WHERE id = ?1",
        params![id, status, held_from, reason],
    )?;
    Ok(())
}

/// Records the PSU-ID of (TPP, customer); nothing when present.
pub fn register_psu(
    c: &Conn<'_>,
    tpp: &str,
    psu_id: &str,
    customer: &str,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute_pipelined(
        "INSERT OR IGNORE INTO pis_psus (tpp, psu_id, customer) VALUES (?1, ?2, ?3)",
        params![tpp, psu_id, customer],
    )
}

/// The customer behind a PSU-ID created by payment SCA or `X-PSU-IDENTITY`.
pub fn psu_customer(
    c: &Conn<'_>,
    tpp: &str,
    psu_id: &str,
) -> crate::sandbox::store::sql::Result<Option<String>> {
    c.query_row(
        "SELECT customer FROM pis_psus WHERE tpp = ?1 AND psu_id = ?2",
        params![tpp, psu_id],
        |r| r.get(0),
    )
    .optional()
}

table_row! {
    /// One `pis_authorisations` row: the SCA of a payment (`payment`) or a basket (`basket`).
    #[derive(Debug, Clone)]
    // The fields are the table's columns, named and described in its migration.
    #[allow(missing_docs)]
    pub struct AuthorisationRow {
        columns {
            id: String,
            tpp: String,
            tpp_name: String,
            payment: Option<String>,
            basket: Option<String>,
            redirect_uri: String,
            tpp_session_id: String,
            sca_status: String,
            customer: Option<String>,
            agreement: Option<String>,
            created_at: i64,
        }
    }
}

const AUTH_COLUMNS: &str = AuthorisationRow::COLUMNS;

/// `INSERT INTO pis_authorisations` of the columns a new authorisation fills: every column
/// but `customer` and `agreement` (the PSU's, set at login), which it leaves NULL (no
/// default), as [`INSERT_AUTHORISATION`] binding them to NULL stores them.
pub(crate) const INSERT_NEW_AUTHORISATION: &str = "INSERT INTO pis_authorisations (id, tpp, tpp_name, \
     payment, basket, redirect_uri, tpp_session_id, sca_status, created_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

/// Inserts a new authorisation: without a PSU yet (`customer` and `agreement` `None`)
/// through [`INSERT_NEW_AUTHORISATION`], else through every column.
pub fn insert_authorisation(
    c: &Conn<'_>,
    a: &AuthorisationRow,
) -> crate::sandbox::store::sql::Result<()> {
    use crate::sandbox::store::sql::ToValue;
    if a.customer.is_none() && a.agreement.is_none() {
        let values: [&dyn ToValue; 9] = [
            &a.id,
            &a.tpp,
            &a.tpp_name,
            &a.payment,
            &a.basket,
            &a.redirect_uri,
            &a.tpp_session_id,
            &a.sca_status,
            &a.created_at,
        ];
        return c.execute_kept(INSERT_NEW_AUTHORISATION, &values[..]);
    }
    c.execute_kept(INSERT_AUTHORISATION.as_str(), a.to_params().as_slice())
}

/// The authorisation `id`, if any.
pub fn authorisation(
    c: &Conn<'_>,
    id: &str,
) -> crate::sandbox::store::sql::Result<Option<AuthorisationRow>> {
    c.query_row(
        &format!("SELECT {AUTH_COLUMNS} FROM pis_authorisations WHERE id = ?1"),
        [id],
        AuthorisationRow::from_row,
    )
    .optional()
}

/// Every authorisation that could authorise `payment`: its own, and those of the baskets
/// (not cancelled) holding it; oldest first.
pub fn authorisations_covering(
    c: &Conn<'_>,
    payment: &str,
) -> crate::sandbox::store::sql::Result<Vec<AuthorisationRow>> {
    let mut st = c.prepare(&format!(
        "SELECT {AUTH_COLUMNS} FROM pis_authorisations WHERE payment = ?1 OR basket IN \
         (SELECT bp.basket FROM pis_basket_payments bp JOIN pis_baskets b ON b.id = bp.basket \
          WHERE bp.payment = ?1 AND b.cancelled = 0) ORDER BY created_at, rowid"
    ))?;
    let rows = st.query_map([payment], AuthorisationRow::from_row)?;
    rows.collect()
}

/// The ids of the authorisations of payment `payment` (`basket = false`) or of signing
/// basket `basket`, oldest first (indexes `pis_authorisations_of_payment`, `_of_basket`).
pub fn authorisation_ids(
    c: &Conn<'_>,
    basket: bool,
    id: &str,
) -> crate::sandbox::store::sql::Result<Vec<String>> {
    let sql = if basket {
        "SELECT id FROM pis_authorisations WHERE basket = ?1 ORDER BY created_at, rowid"
    } else {
        "SELECT id FROM pis_authorisations WHERE payment = ?1 ORDER BY created_at, rowid"
    };
    c.prepare_cached(sql)?
        .query_map([id], |r| r.get(0))?
        .collect()
}

/// Moves an authorisation to `sca_status`, recording the PSU (and agreement) when given.
pub fn set_sca_status(
    c: &Conn<'_>,
    id: &str,
    sca_status: &str,
    customer: Option<&str>,
    agreement: Option<&str>,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE pis_authorisations SET sca_status = ?2, customer = COALESCE(?3, customer), \
         agreement = COALESCE(?4, agreement) WHERE id = ?1",
        params![id, sca_status, customer, agreement],
    )?;
    Ok(())
}

/// Ends every open (`received`, `psuIdentified`) authorisation of basket `basket`: they
/// become `failed`, so the SCA page of a deleted basket authorises nothing.
pub fn fail_open_basket_authorisations(
    c: &Conn<'_>,
    basket: &str,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE pis_authorisations SET sca_status = ?2 WHERE basket = ?1 AND sca_status IN (?3, ?4)",
        params![
            basket,
            sca_status::FAILED,
            sca_status::RECEIVED,
            sca_status::PSU_IDENTIFIED
        ],
    )?;
    Ok(())
}

table_row! {
    /// One `pis_baskets` row with its payment ids in order.
    #[derive(Debug, Clone)]
    // The fields are the table's columns, named and described in its migration.
    #[allow(missing_docs)]
    pub struct BasketRow {
        columns {
            id: String,
            tpp: String,
            created_at: i64,
            redirect_uri: String,
            tpp_session_id: String,
            /// The customer bound by `PSU-ID` at creation (must approve).
            expected_customer: Option<String>,
            cancelled: bool,
            authorised: bool,
        }
        filled_later {
            payments: Vec<String>,
        }
    }
}

/// Inserts a basket and its payments.
pub fn insert_basket(c: &Conn<'_>, b: &BasketRow) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        &format!(
            "INSERT INTO pis_baskets ({}) VALUES ({})",
            BasketRow::COLUMNS,
            BasketRow::placeholders()
        ),
        b.to_params().as_slice(),
    )?;
    for (i, p) in b.payments.iter().enumerate() {
        c.execute(
            "INSERT INTO pis_basket_payments (basket, payment, position) VALUES (?1, ?2, ?3)",
            params![b.id, p, i64::try_from(i).unwrap_or(i64::MAX)],
        )?;
    }
    Ok(())
}

/// The basket `id` with its payment ids, if any.
pub fn basket(c: &Conn<'_>, id: &str) -> crate::sandbox::store::sql::Result<Option<BasketRow>> {
    let Some(mut b) = c
        .query_row(
            &format!(
                "SELECT {} FROM pis_baskets WHERE id = ?1",
                BasketRow::COLUMNS
            ),
            [id],
            BasketRow::from_row,
        )
        .optional()?
    else {
        return Ok(None);
    };
    b.payments = basket_payments(c, id)?;
    Ok(Some(b))
}

/// The payment ids of basket `basket`, in order.
pub fn basket_payments(
    c: &Conn<'_>,
    basket: &str,
) -> crate::sandbox::store::sql::Result<Vec<String>> {
    let mut st = c.prepare_cached(
        "SELECT payment FROM pis_basket_payments WHERE basket = ?1 ORDER BY position",
    )?;
    st.query_map([basket], |r| r.get(0))?.collect()
}

/// The open (not cancelled) basket holding `payment`, if any.
pub fn open_basket_of(
    c: &Conn<'_>,
    payment: &str,
) -> crate::sandbox::store::sql::Result<Option<String>> {
    c.query_row(
        "SELECT b.id FROM pis_basket_payments bp JOIN pis_baskets b ON b.id = bp.basket \
         WHERE bp.payment = ?1 AND b.cancelled = 0 LIMIT 1",
        [payment],
        |r| r.get(0),
    )
    .optional()
}

/// Marks a basket cancelled or authorised.
pub fn set_basket_flags(
    c: &Conn<'_>,
    id: &str,
    cancelled: bool,
    authorised: bool,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE pis_baskets SET cancelled = ?2, authorised = ?3 WHERE id = ?1",
        params![id, cancelled, authorised],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// [`super::NEXT_DUE`] is among the statements whose plan the index tests check
    /// (`indexes::PARTIAL_PLANS`, which spells it out).
    #[test]
    fn the_next_run_time_is_planned() {
        assert!(
            crate::sandbox::store::indexes::PARTIAL_PLANS
                .iter()
                .any(|(sql, index)| *sql == super::NEXT_DUE && *index == "pis_payments_due_actc")
        );
    }

    /// The files under `dir`, recursively, whose name ends with `.rs`.
    fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// The writer's duplicate keys ([`crate::sandbox::store::dup_keys`]) list a payment under
    /// the TPP, key and day it was inserted with: no statement of the sandbox may change
    /// those columns of a stored payment (the update hook says which row changed, not which
    /// column). Every `UPDATE pis_payments` in the sources (tests' included) sets other
    /// columns only; a `REPLACE` would be an insert the map counts.
    #[test]
    fn no_statement_moves_a_payment_to_another_duplicate_key() {
        let mut files = Vec::new();
        rust_files(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        let mut updates = 0;
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            for (at, _) in flat.match_indices("UPDATE pis_payments SET") {
                let rest = &flat[at..];
                let set = &rest[..rest.find("WHERE").unwrap_or(rest.len().min(400))];
                updates += 1;
                for column in ["tpp", "dedup_key", "created_day"] {
                    let moved = set
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .any(|w| w == column);
                    assert!(!moved, "{}: {set}", f.display());
                }
            }
        }
        assert!(updates >= 5, "the updates were found: {updates}");
    }
}
