//! The background checkpointer of a state file (issue 20, "State that stays fast").
//!
//! In WAL mode every commit appends the changed pages to the `-wal` file; a checkpoint copies
//! them into the database file and syncs it. SQLite's default (`wal_autocheckpoint` = 1000
//! pages) runs that checkpoint inside the commit that crosses the threshold, on the
//! committing connection: in the sandbox, inside one unlucky request, while every other
//! request waits for the connection. On a large state file the pages of a checkpoint are
//! scattered over the file (one leaf per index of each new row), so that request's time grew
//! with the state (the scale benchmark's write tail, BENCHMARKS.md).
//!
//! So the connections of the sandbox never checkpoint on commit (`wal_autocheckpoint=0`, see
//! [`crate::sandbox::store::db::Db::open`]) and a thread of its own, on a connection of its
//! own, does it:
//!
//! - every [`Checkpoints::interval`] a `PASSIVE` checkpoint: it copies what it can without
//!   waiting for anyone (writers go on; the next writer after a complete checkpoint starts the
//!   log again from its beginning, so the `-wal` file stops growing);
//! - when the log still holds more than [`Checkpoints::max_wal_pages`] pages after that (a
//!   reader kept the log from being restarted, or writes outran the interval), a `TRUNCATE`
//!   checkpoint: it waits (busy timeout 5 s) for readers and writers, copies everything and
//!   empties the `-wal` file, so the log cannot grow without bound.
//!
//! Errors of a checkpoint are logged (`warn`) and the next interval tries again: the data is
//! safe in the log meanwhile, and a failing database is answered by the requests themselves
//! (503). The thread ends when its [`Checkpointer`] is dropped (with the [`Db`]).
//!
//! [`Db`]: crate::sandbox::store::db::Db

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

/// When the checkpointer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoints {
    /// Time between two `PASSIVE` checkpoints (default 1 s).
    pub interval: Duration,
    /// Pages (of 4 KiB by default) the log may hold after a `PASSIVE` checkpoint before a
    /// `TRUNCATE` checkpoint empties it (default 16,384: 64 MiB). Also the size the `-wal`
    /// file is cut back to when the log starts again (`journal_size_limit`).
    pub max_wal_pages: u32,
}

impl Default for Checkpoints {
    fn default() -> Self {
        Checkpoints {
            interval: Duration::from_secs(1),
            max_wal_pages: 16_384,
        }
    }
}

/// What one checkpoint found and did (SQLite's `PRAGMA wal_checkpoint` answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalState {
    /// Pages (frames) in the log when the checkpoint ended.
    pub log_pages: i64,
    /// Of those, pages copied into the database file (now or before).
    pub checkpointed_pages: i64,
    /// Whether the log was over [`Checkpoints::max_wal_pages`] and was emptied (`TRUNCATE`).
    pub truncated: bool,
}

/// An order to the checkpointer's thread: checkpoint now and answer.
type Order = mpsc::Sender<rusqlite::Result<WalState>>;

/// The running checkpointer of one database file; dropping it ends its thread (and waits
/// for it, so the file is closed).
pub struct Checkpointer {
    orders: Option<mpsc::Sender<Order>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Checkpointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Checkpointer")
    }
}

impl Checkpointer {
    /// Opens a connection of its own to `file` and starts the thread.
    ///
    /// Errors: the connection cannot be opened or set up, or the thread cannot start.
    pub fn start(file: &Path, policy: Checkpoints) -> Result<Self, rusqlite::Error> {
        let conn = Connection::open(file)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        // This connection's own commits (none) and its checkpoints: synced like the others.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let (orders, rx) = mpsc::channel::<Order>();
        let file: PathBuf = file.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || run(&conn, &file, policy, &rx))
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        Ok(Checkpointer {
            orders: Some(orders),
            thread: Some(thread),
        })
    }

    /// Has the thread checkpoint now (as at its interval) and waits for the answer.
    ///
    /// Errors: the checkpoint fails, or the thread has ended.
    pub fn now(&self) -> rusqlite::Result<WalState> {
        let (tx, rx) = mpsc::channel();
        let ended = || rusqlite::Error::InvalidQuery;
        self.orders
            .as_ref()
            .ok_or_else(ended)?
            .send(tx)
            .map_err(|_| ended())?;
        rx.recv().map_err(|_| ended())?
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.orders.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The thread: a checkpoint every interval and on each order, until the sender is dropped.
fn run(conn: &Connection, file: &Path, policy: Checkpoints, orders: &mpsc::Receiver<Order>) {
    loop {
        let reply = match orders.recv_timeout(policy.interval) {
            Ok(reply) => Some(reply),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let started = Instant::now();
        let done = checkpoint(conn, policy.max_wal_pages);
        let Some(reply) = reply else {
            match &done {
                Ok(s) if s.log_pages > 0 || s.truncated => tracing::trace!(
                    file = %file.display(),
                    pages = s.log_pages,
                    checkpointed = s.checkpointed_pages,
                    truncated = s.truncated,
                    took_us = started.elapsed().as_micros() as u64,
                    "checkpoint"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(file = %file.display(), error = %e, "checkpoint failed"),
            }
            continue;
        };
        let _ = reply.send(done);
    }
}

/// One `PASSIVE` checkpoint, and a `TRUNCATE` one when the log still holds more than
/// `max_wal_pages` pages.
fn checkpoint(conn: &Connection, max_wal_pages: u32) -> rusqlite::Result<WalState> {
    let (log_pages, checkpointed_pages) = wal_checkpoint(conn, "PASSIVE")?;
    if log_pages > i64::from(max_wal_pages) {
        let (log_pages, checkpointed_pages) = wal_checkpoint(conn, "TRUNCATE")?;
        return Ok(WalState {
            log_pages,
            checkpointed_pages,
            truncated: true,
        });
    }
    Ok(WalState {
        log_pages,
        checkpointed_pages,
        truncated: false,
    })
}

/// `PRAGMA wal_checkpoint(mode)`: (pages in the log, pages checkpointed); a checkpoint that
/// could not finish (another checkpoint, or readers and writers past the busy timeout) is
/// `SQLITE_BUSY`.
fn wal_checkpoint(conn: &Connection, mode: &str) -> rusqlite::Result<(i64, i64)> {
    let (busy, log, done): (i64, i64, i64) =
        conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
    if busy != 0 && mode != "PASSIVE" {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some(format!("wal_checkpoint({mode}) could not finish")),
        ));
    }
    Ok((log, done))
}
