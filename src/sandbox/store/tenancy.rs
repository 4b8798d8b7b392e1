//! The per-TPP part of the state (issue 20, "each TPP its own world"): which TPP created a
//! customer with `POST /v1/sandbox/customers` (the seeded customers belong to every TPP's
//! world and have no row here), each TPP's sandbox clock offset, and the reset of one TPP's
//! world (`POST /v1/sandbox/initialize` from the TPP plane).

use crate::sandbox::store::sql::{Backend, Conn, OptionalExtension, params};

use crate::sandbox::store::db::Migration;

/// The ownership and clock tables, and the owner column of the fault rules.
pub const MIGRATION: Migration = (
    "tenancy_001_worlds",
    "CREATE TABLE customer_owners (
        customer TEXT PRIMARY KEY REFERENCES customers(id) ON DELETE CASCADE,
        tpp TEXT NOT NULL
    );
    CREATE INDEX customer_owners_by_tpp ON customer_owners (tpp);
    CREATE TABLE tpp_clocks (
        tpp TEXT PRIMARY KEY,
        offset_secs INTEGER NOT NULL CHECK (offset_secs >= 0)
    );
    ALTER TABLE sandbox_faults ADD COLUMN tpp TEXT NOT NULL DEFAULT '';
    CREATE INDEX sandbox_faults_by_tpp ON sandbox_faults (tpp);",
);

/// The TPP that created customer `id`; `None` for a seeded customer (or no customer).
///
/// Errors: SQLite's.
pub fn owner(c: &Conn<'_>, customer: &str) -> crate::sandbox::store::sql::Result<Option<String>> {
    c.prepare_cached("SELECT tpp FROM customer_owners WHERE customer = ?1")?
        .query_row([customer], |r| r.get(0))
        .optional()
}

/// Records that `tpp` created customer `customer`.
///
/// Errors: SQLite's.
pub fn set_owner(
    c: &Conn<'_>,
    customer: &str,
    tpp: &str,
) -> crate::sandbox::store::sql::Result<()> {
    c.execute(
        "INSERT INTO customer_owners (customer, tpp) VALUES (?1, ?2) \
         ON CONFLICT (customer) DO UPDATE SET tpp = excluded.tpp",
        params![customer, tpp],
    )?;
    Ok(())
}

/// Whether customer `customer` is in `tpp`'s world: seeded (no owner) or created by `tpp`.
///
/// Errors: SQLite's.
pub fn visible_to(
    c: &Conn<'_>,
    customer: &str,
    tpp: &str,
) -> crate::sandbox::store::sql::Result<bool> {
    Ok(owner(c, customer)?.is_none_or(|o| o == tpp))
}

/// Every TPP's clock offset, seconds.
///
/// Errors: SQLite's.
pub fn clock_offsets(c: &Conn<'_>) -> crate::sandbox::store::sql::Result<Vec<(String, u64)>> {
    c.prepare_cached("SELECT tpp, offset_secs FROM tpp_clocks")?
        .query_map([], |r| {
            let secs: i64 = r.get(1)?;
            Ok((r.get(0)?, u64::try_from(secs).unwrap_or(0)))
        })?
        .collect()
}

/// PostgreSQL only (its `sandbox_data_version` counter): the database's data version and,
/// when it differs from `seen` (the version of the caller's last look; `-1` for none), every
/// clock offset, in ONE statement (one round trip, one snapshot, no transaction): the shared
/// offset (`sandbox_meta` `clock_offset_nanos`, nanoseconds; `None` when not stored) and
/// every TPP's ([`clock_offsets`], seconds, ordered by TPP). What
/// [`crate::sandbox::App::sync_clock`] reads on each request: while nothing was written
/// (reads) one row, not one per TPP with a clock of its own; under writes (every batch
/// moves the version) the offsets travel with it. (It had read the version and, when it had
/// moved, the offsets in two more read transactions: five round trips per request under
/// writes; issue 23, r14/writes.)
///
/// The same statement also says whether any fault rule is stored (`sandbox_faults`, any
/// TPP's, any action), in the same snapshot as the version: while none is, the request
/// faults need no read of their own on that request
/// ([`crate::sandbox::domain::faults::Faults::saw`]; issue 23, r16/writes: one statement
/// fewer per request on PostgreSQL).
///
/// Errors: the database's.
pub fn clock_offsets_since(
    c: &Conn<'_>,
    seen: i64,
) -> crate::sandbox::store::sql::Result<SyncRead> {
    let rows = c.query_all(
        "SELECT 0, NULL, v FROM sandbox_data_version WHERE id = 1 \
         UNION ALL SELECT 1, NULL, CAST(value AS INTEGER) FROM sandbox_meta \
           WHERE key = 'clock_offset_nanos' \
           AND (SELECT v FROM sandbox_data_version WHERE id = 1) IS DISTINCT FROM ?1 \
         UNION ALL SELECT 2, tpp, offset_secs FROM tpp_clocks \
           WHERE (SELECT v FROM sandbox_data_version WHERE id = 1) IS DISTINCT FROM ?1 \
         UNION ALL SELECT 3, NULL, 0 WHERE EXISTS (SELECT 1 FROM sandbox_faults)",
        [seen],
    )?;
    let mut version = None;
    let mut any_fault = false;
    let mut out = ClockOffsets::default();
    for r in &rows {
        let kind: i64 = r.get(0)?;
        let n: i64 = r.get(2)?;
        match kind {
            0 => version = Some(n),
            1 => out.shared_nanos = Some(n),
            2 => out.tpps.push((r.get(1)?, u64::try_from(n).unwrap_or(0))),
            _ => any_fault = true,
        }
    }
    if version == Some(seen) {
        // The statement's own condition: an unchanged version brings no offset rows.
        debug_assert!(out.shared_nanos.is_none() && out.tpps.is_empty());
        return Ok(SyncRead {
            version,
            any_fault,
            offsets: None,
        });
    }
    out.tpps.sort();
    Ok(SyncRead {
        version,
        any_fault,
        offsets: Some(out),
    })
}

/// What [`clock_offsets_since`] read, in one snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncRead {
    /// The data version (`sandbox_data_version`); `None` when its row is missing.
    pub version: Option<i64>,
    /// Whether any fault rule (`sandbox_faults`) is stored.
    pub any_fault: bool,
    /// The clock offsets, when the version differs from the one the caller had seen.
    pub offsets: Option<ClockOffsets>,
}

/// The clock offsets of [`clock_offsets_since`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClockOffsets {
    /// The shared offset in nanoseconds, when one is stored.
    pub shared_nanos: Option<i64>,
    /// Every TPP's own offset in seconds, by TPP.
    pub tpps: Vec<(String, u64)>,
}

/// `tpp`'s own clock offset, seconds; `None` when it has none.
///
/// Errors: SQLite's (also when the table is missing, in a copy of an older sandbox).
pub fn clock_offset(c: &Conn<'_>, tpp: &str) -> crate::sandbox::store::sql::Result<Option<i64>> {
    c.query_row(
        "SELECT offset_secs FROM tpp_clocks WHERE tpp = ?1",
        [tpp],
        |r| r.get(0),
    )
    .optional()
}

/// Stores `tpp`'s clock offset (0 removes it).
///
/// Errors: SQLite's.
pub fn set_clock_offset(
    c: &Conn<'_>,
    tpp: &str,
    secs: u64,
) -> crate::sandbox::store::sql::Result<()> {
    if secs == 0 {
        c.execute("DELETE FROM tpp_clocks WHERE tpp = ?1", [tpp])?;
    } else {
        c.execute(
            "INSERT INTO tpp_clocks (tpp, offset_secs) VALUES (?1, ?2) \
             ON CONFLICT(tpp) DO UPDATE SET offset_secs = excluded.offset_secs",
            params![tpp, i64::try_from(secs).unwrap_or(i64::MAX)],
        )?;
    }
    Ok(())
}

/// Tables with a `tpp` column that a TPP's reset leaves alone: the replay guard's memory
/// (a reset must not make old requests replayable).
const KEPT: [&str; 1] = ["replay_request_ids"];

/// Resets `tpp`'s world inside the caller's transaction: deletes the customers it created
/// (with everything that hangs on them), then every row of every table with a `tpp` column
/// that is `tpp`'s (consents, PSU registrations and sessions, authorisations, payments,
/// baskets, fault rules, its clock offset, ...), then the rows left pointing at deleted
/// ones ([`crate::sandbox::store::remove_orphans`]). Other TPPs' rows and the seeded customers stay.
///
/// Errors: SQLite's.
pub fn reset(c: &Conn<'_>, tpp: &str) -> crate::sandbox::store::sql::Result<()> {
    c.execute_batch("PRAGMA defer_foreign_keys = ON")?;
    c.execute(
        "DELETE FROM customers WHERE id IN (SELECT customer FROM customer_owners WHERE tpp = ?1)",
        [tpp],
    )?;
    // The catalogue: SQLite's `sqlite_master`, PostgreSQL's `information_schema` (the
    // tables of the connection's schema).
    let catalogue = match c.backend() {
        Backend::Sqlite => {
            "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) p \
             WHERE m.type = 'table' AND p.name = 'tpp'"
        }
        Backend::Postgres => {
            "SELECT table_name::text FROM information_schema.columns \
             WHERE table_schema = current_schema() AND column_name = 'tpp'"
        }
    };
    let tables: Vec<String> = c
        .prepare(catalogue)?
        .query_map([], |r| r.get(0))?
        .collect::<crate::sandbox::store::sql::Result<_>>()?;
    for t in tables.iter().filter(|t| !KEPT.contains(&t.as_str())) {
        c.execute(
            &format!("DELETE FROM \"{}\" WHERE tpp = ?1", t.replace('"', "\"\"")),
            [tpp],
        )?;
    }
    crate::sandbox::store::remove_orphans(c)?;
    Ok(())
}
