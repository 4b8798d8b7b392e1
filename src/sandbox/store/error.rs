//! The store's own error: the database failed. The store never speaks HTTP; the answer a
//! failure becomes (an unavailable service, with the reason, logged) is decided in
//! `sandbox::errors`, whose error converts from this one, so callers keep using `?`. A missing row is not an error: lookups return `Ok(None)` (or `Ok(false)`).

use crate::sandbox::store::sql;

/// A failure of the sandbox's database, SQLite or PostgreSQL (disk full, file locked by
/// another process, the server gone, a table dropped under the running sandbox, a stored
/// value that does not parse). Its text is the database's own message.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct StoreError(#[from] pub sql::Error);

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError(e.into())
    }
}
