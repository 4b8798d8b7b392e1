//! The persisted `X-Request-ID`s of the replay guard ([`crate::sandbox::http::replay`]): table
//! `replay_request_ids` in the state file, on a connection of the guard's own (written in
//! batches by its flusher thread). `expires` is in Unix seconds of real time (not the sandbox clock). Errors: the database fails.
//!
//! On SQLite the table is a rowid table written in the order the ids come ([`TABLE_SQL`],
//! issue 23): a flush appends its ids at the right edge of the table and of its two indexes
//! (`expires` grows with time; `tpp` then rowid within one TPP), and the purge of expired
//! ids deletes from the left edge, so a flush costs the pages of its own ids. The table
//! before it (until session 18) was keyed by (TPP, request id) `WITHOUT ROWID`: the ids are
//! random, so every flush rewrote a leaf per id all over the table (and read them back
//! first, the connection's cache being dropped by every commit of the sandbox's writer),
//! about 10 µs of CPU per request under the writes benchmark. The table needs no key: the
//! guard only writes ids it found new, and [`load`] keeps an id's latest expiry.
//! [`open`] rebuilds a table of the old shape, keeping its rows.
//!
//! On PostgreSQL ([`SharedIds`], issue 21: many instances on one database) the table is the
//! guard itself: the ids waiting at one moment are one `INSERT … SELECT … ON CONFLICT DO
//! UPDATE … WHERE expired … RETURNING` on a connection of the guard's flusher thread (issue
//! 23: one round trip per batch, not per request), each caller answered from the rows the
//! statement returned, so an id one instance accepted is refused by every other,
//! atomically (the primary key decides, no lock). Expiry is the database server's real time
//! (`now()`, so instances on machines with different clocks agree); expired rows are purged
//! through the index on `expires` at most every [`PURGE_EVERY_SECS`].

use std::path::Path;
use std::sync::Mutex;

use rusqlite::Connection;

use crate::sandbox::store::sql::{self, Conn, PgSession};

/// The table on SQLite (see the module documentation): rows in the order the ids were
/// written, an index on `expires` for the purge and one on `tpp` for [`forget`].
pub const TABLE_SQL: &str = "CREATE TABLE IF NOT EXISTS replay_request_ids (
    tpp TEXT NOT NULL,
    request_id TEXT NOT NULL,
    expires INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS replay_request_ids_expires ON replay_request_ids (expires);
CREATE INDEX IF NOT EXISTS replay_request_ids_by_tpp ON replay_request_ids (tpp);";

/// Rebuilds a table of the shape before [`TABLE_SQL`] (keyed `WITHOUT ROWID`), its rows kept
/// in expiry order.
const REBUILD_SQL: &str = "ALTER TABLE replay_request_ids RENAME TO replay_request_ids_keyed;
DROP INDEX IF EXISTS replay_request_ids_expires;";

/// Opens the guard's connection to `file` (waits for locks as [`crate::sandbox::store::busy`] says; it never checkpoints, the
/// store's checkpointer thread does: [`crate::sandbox::store::checkpoint`]) and creates the
/// table, or rebuilds one of the old shape (module documentation), in one transaction.
pub fn open(file: &Path) -> rusqlite::Result<Connection> {
    let mut conn = Connection::open(file)?;
    crate::sandbox::store::db::stable_plans(&conn)?;
    crate::sandbox::store::busy::wait_for_locks(&mut conn)?;
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let keyed: bool = tx.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' \
         AND name = 'replay_request_ids' AND sql LIKE '%WITHOUT ROWID%')",
        [],
        |r| r.get(0),
    )?;
    if keyed {
        tx.execute_batch(REBUILD_SQL)?;
        tx.execute_batch(TABLE_SQL)?;
        tx.execute_batch(
            "INSERT INTO replay_request_ids (tpp, request_id, expires) \
             SELECT tpp, request_id, expires FROM replay_request_ids_keyed ORDER BY expires;
             DROP TABLE replay_request_ids_keyed;",
        )?;
    } else {
        tx.execute_batch(TABLE_SQL)?;
    }
    tx.commit()?;
    Ok(conn)
}

/// Forgets the ids expired at `now` (Unix seconds) and returns the others as (TPP,
/// request id, expiry), in expiry order (an id written twice comes last with its latest
/// expiry).
pub fn load(conn: &Connection, now: u32) -> rusqlite::Result<Vec<(String, String, u32)>> {
    conn.execute("DELETE FROM replay_request_ids WHERE expires <= ?1", [now])?;
    let mut stmt =
        conn.prepare("SELECT tpp, request_id, expires FROM replay_request_ids ORDER BY expires")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, u32>(2)?,
        ))
    })?;
    rows.collect()
}

/// Saves `batch` (TPP, request id, expiry) in one transaction, appended (module
/// documentation); with `expired_before`, also forgets the ids expiring before it.
pub fn save<'a>(
    conn: &mut Connection,
    batch: impl IntoIterator<Item = (&'a str, &'a str, u32)>,
    expired_before: Option<u32>,
) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO replay_request_ids (tpp, request_id, expires) VALUES (?1, ?2, ?3)",
        )?;
        for (tpp, id, expires) in batch {
            insert.execute(rusqlite::params![tpp, id, expires])?;
        }
        if let Some(min) = expired_before {
            tx.prepare_cached("DELETE FROM replay_request_ids WHERE expires < ?1")?
                .execute([min])?;
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

/// Most ids checked in one statement by the flusher of [`SharedIds`] (the rest wait for
/// the next).
pub const MAX_SHARED_BATCH: usize = 1024;

/// Remembers a batch of ids in ONE statement and round trip: every id new (or expired) is
/// inserted and returned, a repeat is not (the primary key decides, as for a single id).
/// `?1` is a JSON array of `{"t": tpp, "r": request id, "l": seconds left}` without two
/// equal (tpp, request id) (PostgreSQL refuses to update one row twice in a statement).
const PG_REMEMBER_BATCH: &str = "INSERT INTO replay_request_ids (tpp, request_id, expires) \
     SELECT x.t, x.r, CAST(EXTRACT(EPOCH FROM now()) AS BIGINT) + x.l \
     FROM jsonb_to_recordset(CAST(CAST(?1 AS TEXT) AS JSONB)) AS x(t TEXT, r TEXT, l BIGINT) \
     WHERE true \
     ON CONFLICT (tpp, request_id) DO UPDATE SET expires = EXCLUDED.expires \
     WHERE replay_request_ids.expires <= CAST(EXTRACT(EPOCH FROM now()) AS BIGINT) \
     RETURNING tpp, request_id, CAST(EXTRACT(EPOCH FROM now()) AS BIGINT)";

/// One id waiting for the flusher of [`SharedIds`], and where its answer goes.
struct Ask {
    tpp: String,
    request_id: String,
    left: i64,
    reply: std::sync::mpsc::SyncSender<sql::Result<bool>>,
}

/// The `X-Request-ID`s of every instance on one PostgreSQL database (see the module
/// documentation): a connection of its own for [`SharedIds::forget`] and [`SharedIds::len`],
/// and a flusher thread with another that checks the ids waiting at that moment in one
/// statement ([`MAX_SHARED_BATCH`] at most; under one client a batch is one id): each
/// caller waits for its batch's answer, so an id is refused (by every instance) as soon as
/// [`SharedIds::remember`] said it was new. Issue 23: one round trip per batch instead of
/// one per request on one connection behind a mutex.
pub struct SharedIds {
    url: String,
    session: Mutex<Option<PgSession>>,
    /// To the flusher thread (ends when this is dropped).
    asks: std::sync::mpsc::Sender<Ask>,
}

impl std::fmt::Debug for SharedIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedIds")
    }
}

/// The flusher of [`SharedIds`]: its connection and the database's Unix time of its last
/// purge of expired ids (0: never).
struct Flusher {
    url: String,
    session: Option<PgSession>,
    last_purge: i64,
}

impl Flusher {
    fn run(mut self, rx: std::sync::mpsc::Receiver<Ask>) {
        let mut asks = Vec::with_capacity(MAX_SHARED_BATCH);
        while let Ok(first) = rx.recv() {
            asks.push(first);
            while asks.len() < MAX_SHARED_BATCH {
                match rx.try_recv() {
                    Ok(a) => asks.push(a),
                    Err(_) => break,
                }
            }
            let answers = self.flush(&asks);
            for (ask, answer) in asks.drain(..).zip(answers) {
                // The caller may be gone: nothing to answer.
                let _ = ask.reply.send(answer);
            }
        }
    }

    /// Each ask's answer, in order: `true` when it was new, `false` for a repeat (an earlier
    /// ask of the same batch included); the database's error for all when it fails.
    fn flush(&mut self, asks: &[Ask]) -> Vec<sql::Result<bool>> {
        let mut first: std::collections::HashMap<(&str, &str), usize> =
            std::collections::HashMap::with_capacity(asks.len());
        let mut items = Vec::with_capacity(asks.len());
        let mut answers: Vec<Option<sql::Result<bool>>> = Vec::with_capacity(asks.len());
        for (i, a) in asks.iter().enumerate() {
            if a.tpp.contains('\0') || a.request_id.contains('\0') {
                // PostgreSQL text holds no NUL: this id alone fails, as its own statement did.
                answers.push(Some(Err(sql::Error::Other(
                    "an X-Request-ID with a NUL character cannot be stored".into(),
                ))));
                continue;
            }
            match first.entry((a.tpp.as_str(), a.request_id.as_str())) {
                std::collections::hash_map::Entry::Occupied(_) => answers.push(Some(Ok(false))),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(i);
                    items.push(serde_json::json!({"t": a.tpp, "r": a.request_id, "l": a.left}));
                    answers.push(None);
                }
            }
        }
        if !items.is_empty() {
            match self.insert(&serde_json::Value::Array(items).to_string()) {
                Ok(new) => {
                    for (key, i) in &first {
                        if let Some(slot) = answers.get_mut(*i) {
                            let key = (key.0.to_string(), key.1.to_string());
                            *slot = Some(Ok(new.contains(&key)));
                        }
                    }
                }
                Err(e) => {
                    let text = e.to_string();
                    for slot in answers.iter_mut().filter(|s| s.is_none()) {
                        *slot = Some(Err(sql::Error::Other(text.clone())));
                    }
                }
            }
        }
        answers
            .into_iter()
            .map(|a| a.unwrap_or_else(|| Err(sql::Error::Other("no answer".into()))))
            .collect()
    }

    /// Runs [`PG_REMEMBER_BATCH`] with `json`; the (tpp, request id) inserted. Purges the
    /// expired ids (through the index on `expires`) at most every [`PURGE_EVERY_SECS`].
    fn insert(&mut self, json: &str) -> sql::Result<std::collections::HashSet<(String, String)>> {
        let s = PgSession::live(&mut self.session, &self.url)?;
        let c = Conn::postgres(s);
        let rows: Vec<(String, String, i64)> = c
            .prepare_cached(PG_REMEMBER_BATCH)?
            .query_map(sql::params![json], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<sql::Result<_>>()?;
        let now = rows.first().map_or(-1, |r| r.2);
        if now >= 0 && now - self.last_purge >= PURGE_EVERY_SECS {
            self.last_purge = now;
            c.execute("DELETE FROM replay_request_ids WHERE expires < ?1", [now])?;
        }
        Ok(rows.into_iter().map(|(t, r, _)| (t, r)).collect())
    }
}

impl SharedIds {
    /// Connects to `url`, creates the table when missing and starts the flusher thread.
    ///
    /// Errors: the server refuses or is unreachable, the table cannot be created, or the
    /// thread cannot be started.
    pub fn open(url: &str) -> sql::Result<Self> {
        let session = PgSession::connect(url)?;
        session.batch(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({}); {PG_TABLE_SQL}; COMMIT",
            crate::sandbox::store::db::PG_WRITE_LOCK
        ))?;
        let (asks, rx) = std::sync::mpsc::channel();
        let flusher = Flusher {
            url: url.to_string(),
            session: None,
            last_purge: 0,
        };
        std::thread::Builder::new()
            .name("replay-ids".into())
            .spawn(move || flusher.run(rx))
            .map_err(|e| sql::Error::Other(format!("replay guard thread: {e}")))?;
        Ok(SharedIds {
            url: url.to_string(),
            session: Mutex::new(Some(session)),
            asks,
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Conn<'_>) -> sql::Result<T>) -> sql::Result<T> {
        // A panic cannot leave a transaction open (every statement autocommits).
        let mut guard = self.session.lock().unwrap_or_else(|p| p.into_inner());
        f(&Conn::postgres(PgSession::live(&mut guard, &self.url)?))
    }

    /// Remembers `request_id` of `tpp` for `left_secs` seconds of the database's real time:
    /// `true` when it was new (or its earlier use expired), `false` when it is a repeat
    /// (another instance's too). Waits for the flusher's batch that holds it (committed
    /// when this returns).
    ///
    /// Errors: the database fails.
    pub fn remember(&self, tpp: &str, request_id: &str, left_secs: u64) -> sql::Result<bool> {
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        self.asks
            .send(Ask {
                tpp: tpp.to_string(),
                request_id: request_id.to_string(),
                left: i64::try_from(left_secs).unwrap_or(i64::MAX),
                reply,
            })
            .map_err(|_| sql::Error::Other("the replay guard's thread is gone".into()))?;
        answer
            .recv()
            .map_err(|_| sql::Error::Other("the replay guard's thread dropped a check".into()))?
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

    /// Pages in the `-wal` file of `file` (frames of 4 KiB plus their 24-byte headers).
    fn wal_frames(file: &Path) -> u64 {
        let wal = file.with_extension("sqlite3-wal");
        std::fs::metadata(wal).map_or(0, |m| m.len().saturating_sub(32) / (4096 + 24))
    }

    /// Issue 23: a flush appends its ids. After 20,000 random ids are stored, a flush of 200
    /// more writes a handful of pages (the right edges of the table and its indexes: 16 in a
    /// trial, at most 40 asserted), not a page per id all over the table as the table keyed
    /// by (TPP, request id) did (163 in the same trial).
    #[test]
    fn a_flush_writes_the_pages_of_its_own_ids() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.sqlite3");
        {
            let c = Connection::open(&file).unwrap();
            c.pragma_update(None, "journal_mode", "WAL").unwrap();
        }
        let mut conn = open(&file).unwrap();
        let ids = |n: usize| -> Vec<(String, u32)> {
            (0..n)
                .map(|i| (uuid::Uuid::new_v4().to_string(), 2_000_000_000 + i as u32))
                .collect()
        };
        let first = ids(20_000);
        save(
            &mut conn,
            first.iter().map(|(id, e)| ("tpp", id.as_str(), *e)),
            None,
        )
        .unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        assert_eq!(wal_frames(&file), 0);
        let second = ids(200);
        save(
            &mut conn,
            second
                .iter()
                .map(|(id, e)| ("tpp", id.as_str(), e + 30_000)),
            Some(1_000_000_000),
        )
        .unwrap();
        let frames = wal_frames(&file);
        assert!(frames <= 40, "{frames} pages written for 200 ids");
        assert_eq!(load(&conn, 0).unwrap().len(), 20_200);
    }

    /// A table of the shape before issue 23's (keyed `WITHOUT ROWID`) is rebuilt when the
    /// guard opens the file, its ids kept; an id written twice loads last with its latest
    /// expiry; expired ids are forgotten at the load; `forget` deletes one TPP's ids only.
    #[test]
    fn an_old_keyed_table_is_rebuilt_with_its_ids() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.sqlite3");
        {
            let c = Connection::open(&file).unwrap();
            c.execute_batch(
                "CREATE TABLE replay_request_ids (tpp TEXT NOT NULL, request_id TEXT NOT NULL, \
                 expires INTEGER NOT NULL, PRIMARY KEY (tpp, request_id)) WITHOUT ROWID;
                 CREATE INDEX replay_request_ids_expires ON replay_request_ids (expires);
                 INSERT INTO replay_request_ids VALUES ('a', 'x', 500), ('b', 'y', 300), \
                 ('a', 'gone', 90);",
            )
            .unwrap();
        }
        let mut conn = open(&file).unwrap();
        let shape: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'replay_request_ids'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!shape.contains("WITHOUT ROWID"), "{shape}");
        save(&mut conn, [("a", "x", 900)], None).unwrap();
        assert_eq!(
            load(&conn, 100).unwrap(),
            [
                ("b".into(), "y".into(), 300),
                ("a".into(), "x".into(), 500),
                ("a".into(), "x".into(), 900),
            ]
        );
        forget(&conn, Some("a")).unwrap();
        assert_eq!(load(&conn, 100).unwrap(), [("b".into(), "y".into(), 300)]);
        // Opening again leaves the new shape as it is.
        drop(conn);
        let conn = open(&file).unwrap();
        assert_eq!(load(&conn, 100).unwrap().len(), 1);
    }

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

    /// Issue 23: the flusher checks a batch in one statement: an id twice in one batch is new
    /// once and a repeat the second time; an id stored before is a repeat; an id with a NUL
    /// fails alone. One round trip for the whole batch (the statement prepared before).
    #[test]
    fn a_batch_of_ids_is_checked_in_one_statement() {
        let Some(cluster) = PgCluster::get() else {
            return;
        };
        let url = cluster.database();
        let ids = SharedIds::open(&url).unwrap();
        assert!(ids.remember("t", "old", 60).unwrap());
        let mut flusher = Flusher {
            url: url.clone(),
            session: None,
            last_purge: 0,
        };
        let ask = |tpp: &str, id: &str| Ask {
            tpp: tpp.into(),
            request_id: id.into(),
            left: 60,
            reply: std::sync::mpsc::sync_channel(1).0,
        };
        // Prepares the statement.
        assert!(
            flusher.flush(&[ask("t", "warm")])[0]
                .as_ref()
                .is_ok_and(|n| *n)
        );
        let before = flusher.session.as_ref().map_or(0, PgSession::round_trips);
        let got: Vec<Result<bool, String>> = flusher
            .flush(&[
                ask("t", "a"),
                ask("t", "b"),
                ask("t", "a"),
                ask("other", "a"),
                ask("t", "old"),
                ask("t", "nul\0"),
            ])
            .into_iter()
            .map(|r| r.map_err(|e| e.to_string()))
            .collect();
        assert_eq!(
            got[..5],
            [Ok(true), Ok(true), Ok(false), Ok(true), Ok(false)],
            "{got:?}"
        );
        assert!(got[5].is_err(), "{got:?}");
        let after = flusher.session.as_ref().map_or(0, PgSession::round_trips);
        assert_eq!(after - before, 1, "one round trip for the batch");
        // Another instance's guard sees them.
        assert!(!ids.remember("t", "b", 60).unwrap());
        assert!(!ids.remember("other", "a", 60).unwrap());
        assert!(ids.remember("other", "b", 60).unwrap());
    }

    /// Many callers at once (one batch or several): every distinct id is new exactly once,
    /// every repeat refused.
    #[test]
    fn concurrent_checks_accept_each_id_once() {
        let Some(cluster) = PgCluster::get() else {
            return;
        };
        let ids = std::sync::Arc::new(SharedIds::open(&cluster.database()).unwrap());
        let threads: Vec<_> = (0..16)
            .map(|t| {
                let ids = ids.clone();
                std::thread::spawn(move || {
                    (0..20)
                        .map(|i| {
                            ids.remember("t", &format!("id-{}", (t * 20 + i) % 160), 60)
                                .unwrap()
                        })
                        .filter(|new| *new)
                        .count()
                })
            })
            .collect();
        let accepted: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(accepted, 160, "320 checks of 160 ids: each new once");
        assert_eq!(ids.len().unwrap(), 160);
    }
}
