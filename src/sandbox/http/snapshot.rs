//! A copy of the sandbox's whole state, for case bundles (`psd2-console case export`, see
//! [`crate::case`]): SQLite's online backup API ([`rusqlite::Connection::backup`]) copies
//! the database page by page into a new file, consistent even while the sandbox runs.
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | GET | `/v1/sandbox/snapshot` | 200 `application/vnd.sqlite3`: the state database (SQLite 3 file) |
//!
//! Signed like every `/v1` request, with a PSD2 role like every sandbox operation
//! ([`crate::sandbox::http::auth`]). The state holds every TPP's PSU data, so it is on the operator plane
//! ([`crate::sandbox::http::operator`]): answered only to a loopback peer address (the socket, whatever
//! `--public-url` says) or with the operator token; any other caller gets 403
//! `SERVICE_BLOCKED` (issue 20, finding 3).

use std::path::Path;
use std::sync::Arc;

use crate::sandbox::store::sql::Conn;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::sandbox::App;
use crate::sandbox::errors::ApiError;
use crate::sandbox::http::auth::Tpp;
use crate::sandbox::http::operator::Operator;

/// Media type of the snapshot (IANA `application/vnd.sqlite3`).
pub const SNAPSHOT_MEDIA_TYPE: &str = "application/vnd.sqlite3";

/// The snapshot route (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new().route("/v1/sandbox/snapshot", get(snapshot))
}

/// Copies the main database of `conn` into a new SQLite file at `dst` with the online
/// backup API, without the SCA page key ([`crate::sandbox::http::sca_pages::forget_key`]). `dst` must not
/// hold another database (the backup replaces its pages).
///
/// Errors: SQLite's (destination not writable, source busy).
/// On PostgreSQL there is no file to copy: [`SnapshotError::NotSqlite`] (the state is the
/// database's; `pg_dump` copies it).
pub fn backup_to(conn: &Conn<'_>, dst: &Path) -> Result<(), SnapshotError> {
    let Some(c) = conn.as_sqlite() else {
        return Err(SnapshotError::NotSqlite);
    };
    c.backup(rusqlite::MAIN_DB, dst, rusqlite::backup::NO_PROGRESS)?;
    let copy = rusqlite::Connection::open(dst)?;
    crate::sandbox::http::sca_pages::forget_key(&Conn::sqlite(&copy))?;
    Ok(())
}

/// Why a snapshot could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The private temporary file could not be made or read.
    #[error("sandbox snapshot: temporary file: {0}")]
    Io(#[from] std::io::Error),
    /// SQLite's backup failed.
    #[error("sandbox snapshot: {0}")]
    Sqlite(#[from] crate::sandbox::store::sql::Error),
    /// The state is in PostgreSQL: a snapshot is a SQLite file of a SQLite state (issue 21;
    /// `pg_dump` copies a PostgreSQL state).
    #[error(
        "sandbox snapshot: the state is in PostgreSQL; a snapshot copies a SQLite state file (use pg_dump)"
    )]
    NotSqlite,
}

impl From<rusqlite::Error> for SnapshotError {
    fn from(e: rusqlite::Error) -> Self {
        SnapshotError::Sqlite(e.into())
    }
}

/// The bytes of a backup of `conn`'s main database ([`backup_to`] into a private temporary
/// directory, removed afterwards).
///
/// Errors: [`SnapshotError`].
pub fn snapshot_bytes(conn: &Conn<'_>) -> Result<Vec<u8>, SnapshotError> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("snapshot.sqlite3");
    backup_to(conn, &file)?;
    Ok(std::fs::read(&file)?)
}

/// `GET /v1/sandbox/snapshot`: the state database's bytes (operator plane only).
async fn snapshot(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    _operator: Operator,
) -> Result<Response, ApiError> {
    let bytes = app
        .db
        .read_raw(snapshot_bytes_raw)
        .map_err(|e| ApiError::storage(e.to_string()))?;
    let mut r = bytes.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(SNAPSHOT_MEDIA_TYPE),
    );
    Ok(r)
}

/// [`snapshot_bytes`] with its error as SQLite's (for [`crate::sandbox::store::db::Db::read_raw`]).
fn snapshot_bytes_raw(conn: &Conn<'_>) -> crate::sandbox::store::sql::Result<Vec<u8>> {
    snapshot_bytes(conn).map_err(|e| match e {
        SnapshotError::Sqlite(e) => e,
        e => crate::sandbox::store::sql::Error::Other(e.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::is_loopback_url;

    #[test]
    fn loopback_urls_are_told_apart() {
        let loopback = [
            "http://127.0.0.1:8080",
            "http://127.9.0.1",
            "http://localhost:1",
            "http://[::1]:80",
        ];
        for url in loopback {
            assert!(is_loopback_url(url), "{url} is on loopback");
        }
        for url in ["https://sandbox.example", "http://10.0.0.1", "not a url"] {
            assert!(!is_loopback_url(url), "{url} is not on loopback");
        }
    }

    #[test]
    fn a_snapshot_is_a_database_with_the_same_rows() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('kept');")
            .unwrap();
        let bytes = snapshot_bytes(&Conn::sqlite(&c)).unwrap();
        assert!(bytes.starts_with(b"SQLite format 3\0"));
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.sqlite3");
        std::fs::write(&f, &bytes).unwrap();
        let back = rusqlite::Connection::open(&f).unwrap();
        let x: String = back.query_row("SELECT x FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(x, "kept");
    }
}
