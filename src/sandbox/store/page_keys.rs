//! The key of the SCA pages' addresses ([`crate::sandbox::domain::sca_pages::PageKeys`]):
//! one row, kept by `POST /v1/sandbox/initialize` (links survive a reset and a restart) and
//! left out of snapshots.

use crate::sandbox::store::sql::{Conn, OptionalExtension};

use crate::sandbox::store::db::Migration;

/// The key table.
pub const MIGRATION: Migration = (
    "sca_pages_001_keys",
    "CREATE TABLE sca_page_keys (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        key BLOB NOT NULL CHECK (length(key) = 16)
    );",
);

/// The stored key, or `make`'s, stored, when there is none (or the stored one is not 16
/// bytes).
///
/// Errors: SQLite's, or `make`'s.
pub fn key_or_insert(
    tx: &Conn<'_>,
    make: impl FnOnce() -> crate::sandbox::store::sql::Result<[u8; 16]>,
) -> crate::sandbox::store::sql::Result<[u8; 16]> {
    let stored: Option<Vec<u8>> = tx
        .query_row("SELECT key FROM sca_page_keys WHERE id = 1", [], |r| {
            r.get(0)
        })
        .optional()?;
    if let Some(k) = stored.and_then(|k| <[u8; 16]>::try_from(k.as_slice()).ok()) {
        return Ok(k);
    }
    let k = make()?;
    tx.execute(
        "INSERT INTO sca_page_keys (id, key) VALUES (1, ?1) \
         ON CONFLICT (id) DO UPDATE SET key = excluded.key",
        [k.as_slice()],
    )?;
    Ok(k)
}
