//! The injected faults ([`crate::sandbox::http::faults`]): table `sandbox_faults`, one row per
//! rule in creation order (`seq`), its definition as the normalised JSON the API accepted,
//! and how many more times it answers (`remaining`, `NULL` = until cleared). Like every
//! table it is emptied by `POST /v1/sandbox/initialize` ([`crate::sandbox::store::clear_all_tables`]).
//! Errors: the database fails.

use crate::sandbox::store::sql::{Conn, params};

use crate::sandbox::store::db::Migration;

/// The table of fault rules.
pub const MIGRATION: Migration = (
    "faults_001_rules",
    "CREATE TABLE sandbox_faults (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        definition TEXT NOT NULL,
        remaining INTEGER CHECK (remaining IS NULL OR remaining > 0),
        created_at INTEGER NOT NULL
    );",
);

/// One stored rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRow {
    /// The rule's id (a UUID).
    pub id: String,
    /// The definition as accepted (JSON object text, without `id` and `remaining`).
    pub definition: String,
    /// Answers left; `None` until cleared.
    pub remaining: Option<i64>,
    /// The TPP whose world the rule is in (issue 20): it answers only that TPP's requests,
    /// SCA pages and payments.
    pub tpp: String,
}

/// Every rule, oldest first.
pub fn all(c: &Conn<'_>) -> crate::sandbox::store::sql::Result<Vec<FaultRow>> {
    c.prepare_cached("SELECT id, definition, remaining, tpp FROM sandbox_faults ORDER BY seq")?
        .query_map([], |r| {
            Ok(FaultRow {
                id: r.get(0)?,
                definition: r.get(1)?,
                remaining: r.get(2)?,
                tpp: r.get(3)?,
            })
        })?
        .collect()
}

/// The rules of `tpp`, oldest first (PostgreSQL reads them on every request:
/// [`crate::sandbox::domain::faults::Faults`]).
pub fn of_tpp(c: &Conn<'_>, tpp: &str) -> crate::sandbox::store::sql::Result<Vec<FaultRow>> {
    c.prepare_cached(
        "SELECT id, definition, remaining, tpp FROM sandbox_faults WHERE tpp = ?1 ORDER BY seq",
    )?
    .query_map([tpp], |r| {
        Ok(FaultRow {
            id: r.get(0)?,
            definition: r.get(1)?,
            remaining: r.get(2)?,
            tpp: r.get(3)?,
        })
    })?
    .collect()
}

/// Stores a new rule created at `at` (Unix seconds).
pub fn insert(c: &Conn<'_>, row: &FaultRow, at: i64) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "INSERT INTO sandbox_faults (id, definition, remaining, created_at, tpp) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![row.id, row.definition, row.remaining, at, row.tpp],
    )?;
    Ok(())
}

/// Deletes rule `id`; returns whether there was one.
pub fn delete(c: &Conn<'_>, id: &str) -> crate::sandbox::store::sql::Result<bool> {
    Ok(c.execute("DELETE FROM sandbox_faults WHERE id = ?1", [id])? > 0)
}

/// Deletes rule `id` of `tpp`; returns whether `tpp` had one.
pub fn delete_of(c: &Conn<'_>, id: &str, tpp: &str) -> crate::sandbox::store::sql::Result<bool> {
    Ok(c.execute(
        "DELETE FROM sandbox_faults WHERE id = ?1 AND tpp = ?2",
        [id, tpp],
    )? > 0)
}

/// Deletes every rule of `tpp`; returns how many there were.
pub fn clear(c: &Conn<'_>, tpp: &str) -> crate::sandbox::store::sql::Result<usize> {
    c.execute("DELETE FROM sandbox_faults WHERE tpp = ?1", [tpp])
}

/// Takes one answer of rule `id` (inside the caller's transaction): counts it down, deleting
/// it at zero. Returns `false` when the rule is gone (another request took its last answer).
pub fn claim(c: &Conn<'_>, id: &str) -> crate::sandbox::store::sql::Result<bool> {
    let remaining: Option<Option<i64>> = c
        .query_row(
            "SELECT remaining FROM sandbox_faults WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .map(Some)
        .or_else(|e| match e {
            crate::sandbox::store::sql::Error::NoRows => Ok(None),
            e => Err(e),
        })?;
    match remaining {
        None => Ok(false),
        Some(None) => Ok(true),
        Some(Some(n)) if n <= 1 => delete(c, id),
        Some(Some(_)) => {
            c.execute(
                "UPDATE sandbox_faults SET remaining = remaining - 1 WHERE id = ?1",
                [id],
            )?;
            Ok(true)
        }
    }
}
