//! The tables behind account access (see [`crate::sandbox::domain::access`]):
//!
//! | Table | Rows |
//! |---|---|
//! | `psu_sessions` | SCA sessions per (TPP, PSU-ID, `TPP-Session-ID`) and the time of their SCA |
//! | `psu_pisp_registrations` | PSU-IDs registered by a PISP-only TPP (`GET /v1/users`) |
//! | `psu_revocations` | consents revoked by the PSU or terminated by the TPP |
//! | `psu_sca_purposes` | SCA authorisations that register a PSU (no account step) |
//! | `card_consents` | the card accounts of a consent, in the order ticked |
//! | `consent_resources` | the `consentId`s of `POST /v1/bank-offered-consents` and their status |
//!
//! Times are Unix seconds on the sandbox clock. A consent's agreement is stored as its id, or
//! the empty string in PRIVATE context. Every function runs on a connection or an open
//! transaction ([`crate::sandbox::store::db::Db`]). Errors: the database fails.

use crate::sandbox::store::sql::{Conn, OptionalExtension, params};
use uuid::Uuid;

use crate::sandbox::model::{ConsentKey, TppId};
use crate::sandbox::store::db::Migration;
use crate::sandbox::store::key_params;

/// Sessions, registrations of PISP-only TPPs (consent registrations are the store's),
/// revocations, SCA purposes. Sandbox initialization empties them with every other table
/// ([`crate::sandbox::store::Store::initialize`]).
pub const PSU_MIGRATION: Migration = (
    "psu_001_sessions_registrations_revocations",
    "CREATE TABLE psu_sessions (
        tpp TEXT NOT NULL,
        psu_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        sca_at INTEGER NOT NULL,
        superseded INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tpp, psu_id, session_id)
    );
    CREATE TABLE psu_pisp_registrations (
        tpp TEXT NOT NULL,
        psu_id TEXT NOT NULL,
        customer TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        registered_at INTEGER NOT NULL,
        PRIMARY KEY (tpp, psu_id)
    );
    CREATE TABLE psu_revocations (
        tpp TEXT NOT NULL,
        psu_id TEXT NOT NULL,
        agreement TEXT NOT NULL,
        revoked_at INTEGER NOT NULL,
        by_tpp INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tpp, psu_id, agreement)
    );
    CREATE TABLE psu_sca_purposes (
        authorisation TEXT PRIMARY KEY,
        purpose TEXT NOT NULL
    );",
);

/// The card accounts of each consent.
pub const CARDS_MIGRATION: Migration = (
    "cards_001_card_consents",
    "CREATE TABLE card_consents (
        tpp TEXT NOT NULL,
        psu_id TEXT NOT NULL,
        agreement TEXT NOT NULL,
        position INTEGER NOT NULL,
        card_account TEXT NOT NULL REFERENCES card_accounts(id) ON DELETE CASCADE,
        PRIMARY KEY (tpp, psu_id, agreement, card_account)
    );",
);

/// The consent resources (`consentId`s). The table as first made: its `status` `CHECK` is
/// rewritten without an `IN` list by [`crate::sandbox::store::indexes::MIGRATION_CHECKS_WITHOUT_IN`]
/// (the table is rebuilt there; a migration applied once is never edited).
pub const CONSENT_MIGRATION: Migration = (
    "consent_001_resources",
    "CREATE TABLE consent_resources (
        id TEXT PRIMARY KEY,
        tpp TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('received', 'valid', 'rejected', 'terminatedByTpp')),
        psu_id TEXT,
        agreement TEXT,
        created_at INTEGER NOT NULL,
        last_action INTEGER NOT NULL
    );",
);

/// One SCA session of a (TPP, PSU-ID).
#[derive(Debug, Clone)]
pub struct SessionRow {
    /// The `TPP-Session-ID`.
    pub session_id: String,
    /// When its SCA completed (Unix seconds).
    pub sca_at: i64,
    /// Ended by the SCA of a newer session.
    pub superseded: bool,
}

/// The sessions of (`tpp`, `psu_id`), most recent SCA first.
pub fn sessions(
    c: &Conn<'_>,
    tpp: &TppId,
    psu_id: Uuid,
) -> crate::sandbox::store::sql::Result<Vec<SessionRow>> {
    let mut st = c.prepare_cached(
        "SELECT session_id, sca_at, superseded FROM psu_sessions
         WHERE tpp = ?1 AND psu_id = ?2 ORDER BY sca_at DESC, rowid DESC",
    )?;
    let rows = st.query_map(params![tpp.0, psu_id.to_string()], |r| {
        Ok(SessionRow {
            session_id: r.get(0)?,
            sca_at: r.get(1)?,
            superseded: r.get::<_, i64>(2)? != 0,
        })
    })?;
    rows.collect()
}

/// Records an SCA of (`tpp`, `psu`) in `session_id` at `now`: every other session of the
/// pair is superseded, this one (new or not) has its SCA time set.
pub fn record_session(
    c: &Conn<'_>,
    tpp: &TppId,
    psu: &str,
    session_id: &str,
    now: i64,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE psu_sessions SET superseded = 1
         WHERE tpp = ?1 AND psu_id = ?2 AND session_id <> ?3",
        params![tpp.0, psu, session_id],
    )?;
    c.execute(
        "INSERT INTO psu_sessions (tpp, psu_id, session_id, sca_at, superseded)
         VALUES (?1, ?2, ?3, ?4, 0)
         ON CONFLICT (tpp, psu_id, session_id)
         DO UPDATE SET sca_at = excluded.sca_at, superseded = 0",
        params![tpp.0, psu, session_id, now],
    )?;
    Ok(())
}

/// Removes the revocation of consent `k`, if any.
pub fn lift_revocation(c: &Conn<'_>, k: &ConsentKey) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "DELETE FROM psu_revocations WHERE tpp = ?1 AND psu_id = ?2 AND agreement = ?3",
        key_params(k),
    )?;
    Ok(())
}

/// Records that `psu_id` of `tpp` is `customer`, registered at `at`.
pub fn register_pisp(
    c: &Conn<'_>,
    tpp: &TppId,
    psu_id: Uuid,
    customer: Uuid,
    at: i64,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "INSERT INTO psu_pisp_registrations (tpp, psu_id, customer, registered_at)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (tpp, psu_id) DO UPDATE SET customer = excluded.customer,
             registered_at = excluded.registered_at",
        params![tpp.0, psu_id.to_string(), customer.to_string(), at],
    )?;
    Ok(())
}

/// The customer id (as stored) a PISP-only TPP registered `psu` as.
pub fn pisp_customer(
    c: &Conn<'_>,
    tpp: &TppId,
    psu: &str,
) -> crate::sandbox::store::sql::Result<Option<String>> {
    c.prepare_cached(
        "SELECT customer FROM psu_pisp_registrations
         WHERE tpp = ?1 AND psu_id = ?2",
    )?
    .query_row(params![tpp.0, psu], |r| r.get(0))
    .optional()
}

/// Marks authorisation `id` as a registration SCA.
pub fn mark_registration(c: &Conn<'_>, id: Uuid) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "INSERT INTO psu_sca_purposes (authorisation, purpose)
         VALUES (?1, 'register')
         ON CONFLICT (authorisation) DO UPDATE SET purpose = excluded.purpose",
        params![id.to_string()],
    )?;
    Ok(())
}

/// Whether authorisation `id` is a registration SCA.
pub fn is_registration(c: &Conn<'_>, id: Uuid) -> crate::sandbox::store::sql::Result<bool> {
    c.query_row(
        "SELECT EXISTS(SELECT 1 FROM psu_sca_purposes
         WHERE authorisation = ?1 AND purpose = 'register')",
        params![id.to_string()],
        |r| r.get::<_, bool>(0),
    )
}

/// Whether consent `key` is revoked: `Some(true)` terminated by the TPP, `Some(false)`
/// revoked by the PSU.
pub fn revocation(
    c: &Conn<'_>,
    key: &ConsentKey,
) -> crate::sandbox::store::sql::Result<Option<bool>> {
    c.prepare_cached(
        "SELECT by_tpp FROM psu_revocations
         WHERE tpp = ?1 AND psu_id = ?2 AND agreement = ?3",
    )?
    .query_row(key_params(key), |r| r.get(0))
    .optional()
}

/// Marks consent `key` revoked at `at`, by the TPP (`by_tpp`) or the PSU.
pub fn revoke(
    c: &Conn<'_>,
    key: &ConsentKey,
    by_tpp: bool,
    at: i64,
) -> crate::sandbox::store::sql::Result<()> {
    let (tpp, psu, agreement) = key_params(key);
    c.execute(
        "INSERT INTO psu_revocations (tpp, psu_id, agreement, revoked_at, by_tpp)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (tpp, psu_id, agreement) DO UPDATE SET
         revoked_at = excluded.revoked_at, by_tpp = excluded.by_tpp",
        params![tpp, psu, agreement, at, by_tpp],
    )?;
    Ok(())
}

/// Replaces the card accounts of consent `key` by `cards` (in this order).
pub fn replace_card_consent(
    c: &Conn<'_>,
    key: &ConsentKey,
    cards: &[Uuid],
) -> crate::sandbox::store::sql::Result<()> {
    let (tpp, psu, agreement) = key_params(key);
    c.execute(
        "DELETE FROM card_consents WHERE tpp = ?1 AND psu_id = ?2 AND agreement = ?3",
        params![tpp, psu, agreement],
    )?;
    for (i, card) in cards.iter().enumerate() {
        c.execute(
            "INSERT OR IGNORE INTO card_consents (tpp, psu_id, agreement, position, card_account)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                tpp,
                psu,
                agreement,
                i64::try_from(i).unwrap_or(0),
                card.to_string()
            ],
        )?;
    }
    Ok(())
}

/// The card account ids (as stored) of consent `key`, in the order ticked.
pub fn consented_cards(
    c: &Conn<'_>,
    key: &ConsentKey,
) -> crate::sandbox::store::sql::Result<Vec<String>> {
    let mut st = c.prepare_cached(
        "SELECT card_account FROM card_consents
         WHERE tpp = ?1 AND psu_id = ?2 AND agreement = ?3 ORDER BY position",
    )?;
    let rows = st.query_map(key_params(key), |r| r.get(0))?;
    rows.collect()
}

/// A stored consent resource: (TPP, status, PSU-ID, agreement, created at, last action).
pub type ResourceRow = (String, String, Option<String>, Option<String>, i64, i64);

/// Creates consent resource `id` of `tpp`, status `received`, at `now`.
pub fn insert_resource(
    c: &Conn<'_>,
    id: Uuid,
    tpp: &TppId,
    now: i64,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute_pipelined(
        "INSERT INTO consent_resources (id, tpp, status, created_at, last_action)
         VALUES (?1, ?2, 'received', ?3, ?3)",
        params![id.to_string(), tpp.0, now],
    )
}

/// The consent resource `id`.
pub fn resource(c: &Conn<'_>, id: Uuid) -> crate::sandbox::store::sql::Result<Option<ResourceRow>> {
    c.query_row(
        "SELECT tpp, status, psu_id, agreement, created_at, last_action
         FROM consent_resources WHERE id = ?1",
        params![id.to_string()],
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        },
    )
    .optional()
}

/// Marks a `received` consent resource `id` `valid` for consent `key` at `at`.
pub fn resource_authorised(
    c: &Conn<'_>,
    id: Uuid,
    key: &ConsentKey,
    at: i64,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE consent_resources SET status = 'valid', psu_id = ?2, agreement = ?3,
             last_action = ?4
         WHERE id = ?1 AND status = 'received'",
        params![
            id.to_string(),
            key.psu_id.to_string(),
            key.agreement.map(|a| a.to_string()).unwrap_or_default(),
            at
        ],
    )?;
    Ok(())
}

/// Marks a `received` consent resource `id` `rejected` at `now`.
pub fn resource_rejected(
    c: &Conn<'_>,
    id: Uuid,
    now: i64,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE consent_resources SET status = 'rejected', last_action = ?2
         WHERE id = ?1 AND status = 'received'",
        params![id.to_string(), now],
    )?;
    Ok(())
}

/// Marks consent resource `id` `terminatedByTpp` at `now`.
pub fn terminate_resource(
    c: &Conn<'_>,
    id: Uuid,
    now: i64,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "UPDATE consent_resources SET status = 'terminatedByTpp', last_action = ?2
         WHERE id = ?1",
        params![id.to_string(), now],
    )?;
    Ok(())
}
