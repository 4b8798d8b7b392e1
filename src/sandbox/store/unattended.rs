//! The counter of account calls without the PSU present (table `rules_unattended_access`;
//! the rule is [`crate::sandbox::domain::rules::count_unattended`]): one row per counted call of a
//! (TPP, resource, kind), `at` in Unix seconds. Errors: the database fails.

use crate::sandbox::store::sql::{Conn, params};

use crate::sandbox::model::TppId;
use crate::sandbox::store::db::Migration;

/// The table of counted calls.
pub const MIGRATION: Migration = (
    "rules_001_unattended_access",
    "CREATE TABLE rules_unattended_access (
        tpp TEXT NOT NULL,
        resource TEXT NOT NULL,
        kind TEXT NOT NULL,
        at INTEGER NOT NULL
    );
    CREATE INDEX rules_unattended_access_key
        ON rules_unattended_access (tpp, resource, kind, at);",
);

/// Forgets the calls of (`tpp`, `resource`, `kind`) made at or before `since`, and returns
/// how many remain and when the oldest of them was made.
pub fn forget_and_count(
    c: &Conn<'_>,
    tpp: &TppId,
    resource: &str,
    kind: &str,
    since: i64,
) -> crate::sandbox::store::sql::Result<(i64, Option<i64>)> {
    c.execute(
        "DELETE FROM rules_unattended_access
         WHERE tpp = ?1 AND resource = ?2 AND kind = ?3 AND at <= ?4",
        params![tpp.0, resource, kind, since],
    )?;
    c.query_row(
        "SELECT COUNT(*), MIN(at) FROM rules_unattended_access
             WHERE tpp = ?1 AND resource = ?2 AND kind = ?3",
        params![tpp.0, resource, kind],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Counts one call of (`tpp`, `resource`, `kind`) at `t`.
pub fn record(
    c: &Conn<'_>,
    tpp: &TppId,
    resource: &str,
    kind: &str,
    t: i64,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "INSERT INTO rules_unattended_access (tpp, resource, kind, at)
         VALUES (?1, ?2, ?3, ?4)",
        params![tpp.0, resource, kind, t],
    )?;
    Ok(())
}
