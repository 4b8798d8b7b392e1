//! The persisted `X-Request-ID`s of the replay guard ([`crate::sandbox::http::replay`]): table
//! `replay_request_ids` in the state file, on a connection of the guard's own (written in
//! batches by its flusher thread). `expires` is in Unix seconds of real time (not the sandbox clock). Errors: the database fails.
//!
//! On PostgreSQL ([`SharedIds`], issue 21: many instances on one database) the table is the
//! guard itself: every id is one `INSERT … ON CONFLICT DO UPDATE … WHERE expired` on a
//! connection of the guard's own, so an id one instance accepted is refused by every other,
//! atomically (the primary key decides, no lock). Expiry is the database server's real time
//! (`now()`, so instances on machines with different clocks agree); expired rows are purged
//! through the index on `expires` at most every [`PURGE_EVERY_SECS`].

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use rusqlite::Connection;

use crate::sandbox::store::sql::{self, Conn, PgSession};

const TABLE_SQL: &str = "CREATE TABLE IF NOT EXISTS replay_request_ids (
    tpp TEXT NOT NULL,
    request_id TEXT NOT NULL,
    expires INTEGER NOT NULL,
    PRIMARY KEY (tpp, request_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS replay_request_ids_expires ON replay_request_ids (expires);";

/// Opens the guard's connection to `file` (waits for locks as [`crate::sandbox::store::busy`] says; it never checkpoints, the
/// store's checkpointer thread does: [`crate::sandbox::store::checkpoint`]) and creates the table.
pub fn open(file: &Path) -> rusqlite::Result<Connection> {
    let mut conn = Connection::open(file)?;
    crate::sandbox::store::busy::wait_for_locks(&mut conn)?;
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

/// Seconds between two purges of expired ids on PostgreSQL ([`SharedIds`]).
pub const PURGE_EVERY_SECS: i64 = 5;

/// The table on PostgreSQL (its dialect; created under the store's write lock so instances
/// starting together do not race on `CREATE TABLE IF NOT EXISTS`).
const PG_TABLE_SQL: &str = "CREATE TABLE IF NOT EXISTS replay_request_ids (
    tpp TEXT NOT NULL,
    request_id TEXT NOT NULL,
    expires BIGINT NOT NULL,
    PRIMARY KEY (tpp, request_id)
);
CREATE INDEX IF NOT EXISTS replay_request_ids_expires ON replay_request_ids (expires);";

/// The `X-Request-ID`s of every instance on one PostgreSQL database (see the module
/// documentation): a connection of its own (reconnected when the server closed it).
pub struct SharedIds {
    url: String,
    session: Mutex<Option<PgSession>>,
    /// The database's Unix time of the last purge (0: never).
    last_purge: AtomicI64,
}

impl std::fmt::Debug for SharedIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedIds")
    }
}

impl SharedIds {
    /// Connects to `url` and creates the table when missing.
    ///
    /// Errors: the server refuses or is unreachable, or the table cannot be created.
    pub fn open(url: &str) -> sql::Result<Self> {
        let session = PgSession::connect(url)?;
        session.batch(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({}); {PG_TABLE_SQL}; COMMIT",
            crate::sandbox::store::db::PG_WRITE_LOCK
        ))?;
        Ok(SharedIds {
            url: url.to_string(),
            session: Mutex::new(Some(session)),
            last_purge: AtomicI64::new(0),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Conn<'_>) -> sql::Result<T>) -> sql::Result<T> {
        // A panic cannot leave a transaction open (every statement autocommits).
        let mut guard = self.session.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_none_or(PgSession::is_closed) {
            *guard = None;
            *guard = Some(PgSession::connect(&self.url)?);
        }
        let s = guard
            .as_ref()
            .ok_or_else(|| sql::Error::Other("no PostgreSQL connection".into()))?;
        f(&Conn::postgres(s))
    }

    /// Remembers `request_id` of `tpp` for `left_secs` seconds of the database's real time:
    /// `true` when it was new (or its earlier use expired), `false` when it is a repeat
    /// (another instance's too).
    ///
    /// Errors: the database fails.
    pub fn remember(&self, tpp: &str, request_id: &str, left_secs: u64) -> sql::Result<bool> {
        let left = i64::try_from(left_secs).unwrap_or(i64::MAX);
        self.with(|c| {
            let now: i64 = c
                .query_row(
                    "INSERT INTO replay_request_ids (tpp, request_id, expires) \
                 VALUES (?1, ?2, CAST(EXTRACT(EPOCH FROM now()) AS BIGINT) + ?3) \
                 ON CONFLICT (tpp, request_id) DO UPDATE SET expires = EXCLUDED.expires \
                 WHERE replay_request_ids.expires <= CAST(EXTRACT(EPOCH FROM now()) AS BIGINT) \
                 RETURNING CAST(EXTRACT(EPOCH FROM now()) AS BIGINT)",
                    sql::params![tpp, request_id, left],
                    |r| r.get(0),
                )
                .map_or_else(
                    |e| match e {
                        sql::Error::NoRows => Ok(-1),
                        e => Err(e),
                    },
                    Ok,
                )?;
            if now < 0 {
                return Ok(false);
            }
            let last = self.last_purge.load(Ordering::Relaxed);
            if now - last >= PURGE_EVERY_SECS
                && self
                    .last_purge
                    .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                // Through the index on `expires`.
                c.execute("DELETE FROM replay_request_ids WHERE expires < ?1", [now])?;
            }
            Ok(true)
        })
    }

    /// Deletes the ids of `tpp`, or of every TPP with `None`.
    ///
    /// Errors: the database fails.
    pub fn forget(&self, tpp: Option<&str>) -> sql::Result<()> {
        self.with(|c| {
            match tpp {
                Some(t) => c.execute("DELETE FROM replay_request_ids WHERE tpp = ?1", [t])?,
                None => c.execute("DELETE FROM replay_request_ids", [])?,
            };
            Ok(())
        })
    }

    /// How many ids are stored (expired ones not yet purged included).
    ///
    /// Errors: the database fails.
    pub fn len(&self) -> sql::Result<usize> {
        self.with(|c| {
            let n: i64 =
                c.query_row("SELECT COUNT(*) FROM replay_request_ids", [], |r| r.get(0))?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::store::pg_cluster::PgCluster;

    /// Two guards on one database (two instances): an id one remembered is a repeat for the
    /// other; forgetting a TPP's ids through either frees them for both; another TPP's id
    /// of the same text is its own.
    #[test]
    fn an_id_remembered_by_one_instance_is_a_repeat_for_another() {
        let Some(cluster) = PgCluster::get() else {
            return;
        };
        let url = cluster.database();
        let (a, b) = (
            SharedIds::open(&url).unwrap(),
            SharedIds::open(&url).unwrap(),
        );
        assert!(a.remember("t", "id-1", 60).unwrap());
        assert!(!b.remember("t", "id-1", 60).unwrap());
        assert!(!a.remember("t", "id-1", 60).unwrap());
        assert!(b.remember("other", "id-1", 60).unwrap());
        b.forget(Some("t")).unwrap();
        assert!(a.remember("t", "id-1", 60).unwrap());
        assert_eq!(a.len().unwrap(), 2);
        a.forget(None).unwrap();
        assert_eq!(b.len().unwrap(), 0);
    }
}
