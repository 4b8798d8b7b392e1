//! The sandbox's durable state: SQLite (rusqlite, bundled), in the data directory for
//! `sandbox serve` so a trainer's demo survives a restart, or in memory for tests
//! (`--in-memory`).
//!
//! Every change runs in one `BEGIN IMMEDIATE` transaction ([`Db::write`]); reads run on the
//! same connection ([`Db::read`]). Modules bring their own tables as named migrations
//! ([`Db::migrate`]), applied once and recorded in `schema_migrations`.
//!
//! A database file is in WAL mode with `synchronous=NORMAL` (a commit appends to the log and
//! does not sync; a checkpoint syncs). The request connection never checkpoints
//! (`wal_autocheckpoint=0`): the [`Checkpointer`] thread does, on a connection of its own, so
//! no request pays for copying the log into a large file (issue 20, "State that stays fast";
//! the figures are in BENCHMARKS.md). Its page cache is [`CACHE_KIB`].

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::sandbox::store::checkpoint::{Checkpointer, Checkpoints, WalState};
use crate::sandbox::store::error::StoreError;

/// `PSD2_SQLITE_CHECKPOINT=commit`: no checkpointer thread and SQLite's default page cache;
/// the committing connection checkpoints (every 1000 pages), as before issue 20's fix. For
/// before/after measurements with one binary (`benches/scale.rs`; the servers it starts
/// inherit the variable). Any other value, or none: the background checkpointer.
pub const CHECKPOINT_ON_COMMIT_ENV: &str = "PSD2_SQLITE_CHECKPOINT";

/// The request connection's page cache, in KiB (`PRAGMA cache_size = -CACHE_KIB`): room for
/// the upper levels and hot leaves of the indexes of a state with 100,000s of rows (SQLite's
/// default is 2 MiB).
pub const CACHE_KIB: i64 = 32 * 1024;

/// Where the state lives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Storage {
    /// A private in-memory database (tests, `--in-memory`); gone when the process ends.
    #[default]
    InMemory,
    /// A database file (created with its directory when missing).
    File(PathBuf),
}

/// A named schema step: applied once, in order.
pub type Migration = (&'static str, &'static str);

/// The SQLite connection behind a mutex.
pub struct Db {
    conn: Mutex<Connection>,
    /// Bumped after every committed [`Db::write`]: caches of derived data (serialized
    /// transaction pages) key on it, so any change invalidates them.
    /// Shared with the checkpointer, which watches it for a pause in the writes.
    version: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The checkpointer of a database file (none in memory).
    checkpointer: Option<Checkpointer>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Db")
    }
}

/// Errors of opening the database.
#[derive(Debug, thiserror::Error)]
#[error("sandbox database {location}: {source}")]
pub struct DbOpenError {
    /// The database file (or `memory`).
    pub location: String,
    #[source]
    /// SQLite's error.
    pub source: rusqlite::Error,
}

impl Db {
    /// Opens (creating when needed) the database for `storage`, in WAL mode with foreign keys,
    /// checkpointed in the background ([`Checkpoints::default`]).
    ///
    /// Errors: the file or its directory cannot be created or opened, or set up.
    pub fn open(storage: &Storage) -> Result<Self, DbOpenError> {
        Self::open_with(storage, Checkpoints::default())
    }

    /// [`Db::open`] with the checkpointer's timing (tests, benchmarks).
    ///
    /// Errors: as [`Db::open`].
    pub fn open_with(storage: &Storage, checkpoints: Checkpoints) -> Result<Self, DbOpenError> {
        let location = match storage {
            Storage::InMemory => ":memory:".to_string(),
            Storage::File(p) => p.display().to_string(),
        };
        let err = |source| DbOpenError {
            location: location.clone(),
            source,
        };
        let conn = match storage {
            Storage::InMemory => Connection::open_in_memory().map_err(err)?,
            Storage::File(p) => {
                if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| err(rusqlite::Error::ToSqlConversionFailure(Box::new(e))))?;
                }
                // The sandbox's state holds PSU data (consents, payments): 0600 like the
                // history.
                crate::fsutil::create_private(p);
                let c = Connection::open(p).map_err(err)?;
                c.pragma_update(None, "journal_mode", "WAL").map_err(err)?;
                crate::fsutil::tighten_sqlite(p);
                c.pragma_update(None, "synchronous", "NORMAL")
                    .map_err(err)?;
                c
            }
        };
        let on_commit = std::env::var_os(CHECKPOINT_ON_COMMIT_ENV).is_some_and(|v| v == "commit");
        if !on_commit {
            conn.pragma_update(None, "cache_size", -CACHE_KIB)
                .map_err(err)?;
        }
        let version = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let checkpointer = match storage {
            Storage::InMemory => None,
            Storage::File(_) if on_commit => None,
            Storage::File(p) => match Checkpointer::start(p, checkpoints, version.clone()) {
                Ok(c) => {
                    // The request connection never checkpoints on commit; the log is cut
                    // back to the bound when it starts again.
                    conn.pragma_update(None, "wal_autocheckpoint", 0)
                        .map_err(err)?;
                    let limit = i64::from(checkpoints.max_wal_pages) * 4096;
                    conn.pragma_update(None, "journal_size_limit", limit)
                        .map_err(err)?;
                    Some(c)
                }
                Err(e) => {
                    // SQLite's own checkpoint on commit stays: slower writes, bounded log.
                    tracing::warn!(file = %p.display(), error = %e, "no background checkpointer");
                    None
                }
            },
        };
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)",
        )
        .map_err(err)?;
        Ok(Db {
            conn: Mutex::new(conn),
            version,
            checkpointer,
        })
    }

    /// Applies the migrations not yet recorded, each in its own transaction.
    pub fn migrate(&self, migrations: &[Migration]) -> rusqlite::Result<()> {
        let mut conn = self.lock();
        for (name, sql) in migrations {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let done: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE name = ?1)",
                [name],
                |r| r.get(0),
            )?;
            if !done {
                tx.execute_batch(sql)?;
                tx.execute("INSERT INTO schema_migrations(name) VALUES (?1)", [name])?;
            }
            tx.commit()?;
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a half-done transaction behind (rusqlite
        // rolls back on drop), so a poisoned lock is safe to reuse.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The data version: changes after every committed write.
    pub fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Runs `f` on the connection (reads).
    ///
    /// Errors: the database fails ([`StoreError`]).
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let conn = self.lock();
        Ok(f(&conn)?)
    }

    /// Like [`Db::read`] with plain SQLite errors (opening).
    pub fn read_raw<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let conn = self.lock();
        f(&conn)
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction, committed when `f` returns `Ok`
    /// (rolled back when it fails), and bumps the data version after a commit. `E` is the
    /// caller's error: any type SQLite errors convert into ([`StoreError`], or the domain's
    /// error, so that `f` may roll back with a Berlin Group answer).
    ///
    /// Errors: `f`'s, or the database fails to begin or commit.
    pub fn write<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.write_with(f)
    }

    /// Like [`Db::write`] with plain SQLite errors (opening, seeding).
    pub fn write_raw<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.write_with(f)
    }

    /// [`Db::write`] for any error type SQLite errors convert into: `BEGIN IMMEDIATE`, `f`,
    /// `COMMIT` (rolled back when `f` fails), and the data version bumped after a commit.
    fn write_with<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        self.version
            .fetch_add(1, std::sync::atomic::Ordering::Release);
        Ok(out)
    }

    /// Has the checkpointer copy the log into the database file now and waits for it (a
    /// database in memory has no log: `None`).
    ///
    /// Errors: the checkpoint fails.
    pub fn checkpoint(&self) -> Result<Option<WalState>, StoreError> {
        match &self.checkpointer {
            Some(c) => Ok(Some(c.now()?)),
            None => Ok(None),
        }
    }

    /// The file behind `storage`, for messages.
    pub fn describe(storage: &Storage) -> String {
        match storage {
            Storage::InMemory => "in memory".into(),
            Storage::File(p) => p.display().to_string(),
        }
    }
}

/// Default database file under a data directory.
pub fn default_file(data_dir: &Path) -> PathBuf {
    data_dir.join("sandbox.sqlite3")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_apply_once_and_writes_roll_back_on_error() {
        let db = Db::open(&Storage::InMemory).unwrap();
        let m: &[Migration] = &[("t1", "CREATE TABLE t (x INTEGER NOT NULL)")];
        db.migrate(m).unwrap();
        db.migrate(m).unwrap();
        db.write(|tx| {
            tx.execute("INSERT INTO t VALUES (1)", [])?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        let r: Result<(), StoreError> = db.write(|tx| {
            tx.execute("INSERT INTO t VALUES (2)", [])?;
            Err(rusqlite::Error::QueryReturnedNoRows.into())
        });
        assert!(r.is_err());
        let n: i64 = db
            .read(|c| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, 1);
    }

    /// A database file whose checkpointer runs only when asked (no interval during a test).
    fn file_db(dir: &Path, max_wal_pages: u32) -> (Db, PathBuf) {
        let file = dir.join("sandbox.sqlite3");
        let db = Db::open_with(
            &Storage::File(file.clone()),
            Checkpoints {
                pause: std::time::Duration::from_secs(3600),
                interval: std::time::Duration::from_secs(3600),
                max_wal_pages,
            },
        )
        .unwrap();
        db.migrate(&[("t1", "CREATE TABLE t (x BLOB NOT NULL)")])
            .unwrap();
        (db, file)
    }

    /// `n` write transactions of one new page each (a 4000-byte row).
    fn write_pages(db: &Db, n: usize) {
        for _ in 0..n {
            db.write(|tx| {
                tx.execute("INSERT INTO t VALUES (zeroblob(4000))", [])?;
                Ok::<_, StoreError>(())
            })
            .unwrap();
        }
    }

    fn size(file: &Path) -> u64 {
        std::fs::metadata(file).map(|m| m.len()).unwrap_or(0)
    }

    fn wal(file: &Path) -> PathBuf {
        PathBuf::from(format!("{}-wal", file.display()))
    }

    /// Issue 20 (the scale benchmark's write tail): a commit never checkpoints on the
    /// request connection. 1,500 one-page transactions (past SQLite's default of a checkpoint
    /// at 1,000 pages, run by the committing connection) leave the database file as it was;
    /// the pages are copied when the checkpointer runs.
    #[test]
    fn commits_never_checkpoint_on_the_request_connection() {
        let dir = tempfile::tempdir().unwrap();
        let (db, file) = file_db(dir.path(), 1 << 20);
        db.checkpoint().unwrap();
        let before = size(&file);
        write_pages(&db, 1500);
        assert_eq!(
            size(&file),
            before,
            "no checkpoint wrote the database file during the commits"
        );
        let autocheckpoint: i64 = db
            .read(|c| c.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(autocheckpoint, 0);
        let cache: i64 = db
            .read(|c| c.query_row("PRAGMA cache_size", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(cache, -CACHE_KIB);

        let done = db.checkpoint().unwrap().unwrap();
        assert!(done.log_pages >= 1500, "{done:?}");
        assert_eq!(done.checkpointed_pages, done.log_pages, "{done:?}");
        assert!(!done.truncated);
        assert!(
            size(&file) >= before + 1500 * 4000,
            "the checkpointer copied the pages into the file"
        );
    }

    /// The `-wal` file does not grow without bound under a write loop: after each
    /// checkpoint the next writer starts the log again, so after 20 rounds of 300 new pages
    /// it is at most twice the first round's size (it would hold all 20 rounds without
    /// checkpoints).
    #[test]
    fn the_log_stays_bounded_under_a_write_loop() {
        let dir = tempfile::tempdir().unwrap();
        let (db, file) = file_db(dir.path(), 1 << 20);
        let mut sizes = Vec::new();
        for _ in 0..20 {
            write_pages(&db, 300);
            let done = db.checkpoint().unwrap().unwrap();
            assert_eq!(done.checkpointed_pages, done.log_pages, "{done:?}");
            sizes.push(size(&wal(&file)));
        }
        let first = sizes[0];
        assert!(first >= 300 * 4096, "{sizes:?}");
        assert!(
            sizes.iter().all(|s| *s <= 2 * first),
            "the log does not grow from round to round: {sizes:?}"
        );
    }

    /// Past `max_wal_pages` the checkpointer empties the `-wal` file (TRUNCATE), and the
    /// file's rows are all there.
    #[test]
    fn a_log_over_the_bound_is_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let (db, file) = file_db(dir.path(), 500);
        write_pages(&db, 800);
        assert!(size(&wal(&file)) >= 800 * 4096);
        let done = db.checkpoint().unwrap().unwrap();
        assert!(done.truncated, "{done:?}");
        assert_eq!(size(&wal(&file)), 0, "the log is emptied");
        let n: i64 = db
            .read(|c| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, 800);
    }

    /// The thread checkpoints by itself (no order) once the commits pause, or at its
    /// interval, and ends with the `Db`.
    #[test]
    fn the_checkpointer_runs_after_a_pause_and_at_its_interval() {
        for (pause, interval) in [(20, 3_600_000), (3_600_000, 20)] {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("sandbox.sqlite3");
            let db = Db::open_with(
                &Storage::File(file.clone()),
                Checkpoints {
                    pause: std::time::Duration::from_millis(pause),
                    interval: std::time::Duration::from_millis(interval),
                    max_wal_pages: 1 << 20,
                },
            )
            .unwrap();
            db.migrate(&[("t1", "CREATE TABLE t (x BLOB NOT NULL)")])
                .unwrap();
            let before = size(&file);
            write_pages(&db, 50);
            // Not a speed check: the deadline only turns a checkpointer that never runs into
            // a failure instead of a hang.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while size(&file) < before + 50 * 4000 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "no checkpoint copied the pages (pause {pause} ms, interval {interval} ms)"
                );
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            drop(db);
            let c = Connection::open(&file).unwrap();
            let n: i64 = c
                .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 50);
        }
    }

    #[test]
    fn file_state_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::File(dir.path().join("sub/sandbox.sqlite3"));
        {
            let db = Db::open(&s).unwrap();
            db.migrate(&[("t1", "CREATE TABLE t (x INTEGER)")]).unwrap();
            db.write(|tx| tx.execute("INSERT INTO t VALUES (7)", []))
                .unwrap();
        }
        let db = Db::open(&s).unwrap();
        db.migrate(&[("t1", "CREATE TABLE t (x INTEGER)")]).unwrap();
        let x: i64 = db
            .read(|c| c.query_row("SELECT x FROM t", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(x, 7);
    }
}
