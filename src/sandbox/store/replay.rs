//! The persisted `X-Request-ID`s of the replay guard ([`crate::sandbox::http::replay`]): table
//! `replay_request_ids` in the state file, on a connection of the guard's own (written in
//! batches by its flusher thread). `expires` is in Unix seconds of real time (not the sandbox clock). Errors: the database fails.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

const TABLE_SQL: &str = "CREATE TABLE IF NOT EXISTS replay_request_ids (
    tpp TEXT NOT NULL,
    request_id TEXT NOT NULL,
    expires INTEGER NOT NULL,
    PRIMARY KEY (tpp, request_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS replay_request_ids_expires ON replay_request_ids (expires);";

/// Opens the guard's connection to `file` (5 s busy timeout; it never checkpoints, the
/// store's checkpointer thread does: [`crate::sandbox::store::checkpoint`]) and creates the table.
pub fn open(file: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(file)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    conn.execute_batch(TABLE_SQL)?;
    Ok(conn)
}

/// Forgets the ids expired at `now` (Unix seconds) and returns the others as (TPP,
/// request id, expiry).
pub fn load(conn: &Connection, now: u32) -> rusqlite::Result<Vec<(String, String, u32)>> {
    conn.execute("DELETE FROM replay_request_ids WHERE expires <= ?1", [now])?;
    let mut stmt = conn.prepare("SELECT tpp, request_id, expires FROM replay_request_ids")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, u32>(2)?,
        ))
    })?;
    rows.collect()
}

/// Saves `batch` (TPP, request id, expiry) in one transaction; with `expired_before`, also
/// forgets the ids expiring before it.
pub fn save<'a>(
    conn: &mut Connection,
    batch: impl IntoIterator<Item = (&'a str, &'a str, u32)>,
    expired_before: Option<u32>,
) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT OR REPLACE INTO replay_request_ids (tpp, request_id, expires) \
             VALUES (?1, ?2, ?3)",
        )?;
        for (tpp, id, expires) in batch {
            insert.execute(rusqlite::params![tpp, id, expires])?;
        }
        if let Some(min) = expired_before {
            tx.execute("DELETE FROM replay_request_ids WHERE expires < ?1", [min])?;
        }
    }
    tx.commit()
}

/// Deletes the persisted ids of `tpp`, or of every TPP with `None`.
pub fn forget(conn: &Connection, tpp: Option<&str>) -> rusqlite::Result<()> {
    match tpp {
        Some(t) => conn.execute("DELETE FROM replay_request_ids WHERE tpp = ?1", [t])?,
        None => conn.execute("DELETE FROM replay_request_ids", [])?,
    };
    Ok(())
}
