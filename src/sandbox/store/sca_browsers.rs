//! The browsers SCA pages are bound to ([`crate::sandbox::http::sca_guard`]): table
//! `sca_browsers`, the SHA-256 (hex) of each authorisation's cookie secret and when it was
//! bound (Unix seconds). Errors: the database fails.

use crate::sandbox::store::sql::{Conn, OptionalExtension, params};

use crate::sandbox::store::db::Migration;

/// The table of bound browsers.
pub const MIGRATION: Migration = (
    "sca_guard_001_browsers",
    "CREATE TABLE sca_browsers (
        authorisation TEXT PRIMARY KEY,
        secret_sha256 TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX sca_browsers_created ON sca_browsers (created_at);",
);

/// The secret hash authorisation `id` is bound to, if it is.
pub fn hash_of(c: &Conn<'_>, id: &str) -> crate::sandbox::store::sql::Result<Option<String>> {
    c.query_row(
        "SELECT secret_sha256 FROM sca_browsers WHERE authorisation = ?1",
        [id],
        |r| r.get(0),
    )
    .optional()
}

/// Forgets bindings made before `before`, then binds authorisation `id` to `hash` at `now`
/// unless it is bound already; returns whether it bound it (1) or not (0).
pub fn bind(
    c: &Conn<'_>,
    id: &str,
    hash: &str,
    now: i64,
    before: i64,
) -> crate::sandbox::store::sql::Result<usize> {
    c.execute("DELETE FROM sca_browsers WHERE created_at < ?1", [before])?;
    c.execute(
        "INSERT OR IGNORE INTO sca_browsers (authorisation, secret_sha256, created_at) \
         VALUES (?1, ?2, ?3)",
        params![id, hash, now],
    )
}
