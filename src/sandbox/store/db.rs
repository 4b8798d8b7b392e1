//! The sandbox's durable state: SQLite (rusqlite, bundled), in the data directory for
//! `sandbox serve` so a trainer's demo survives a restart, or in memory for tests
//! (`--in-memory`).
//!
//! Every change runs in one `BEGIN IMMEDIATE` transaction ([`Db::write`]); reads run on the
//! same connection ([`Db::read`]). Modules bring their own tables as named migrations
//! ([`Db::migrate`]), applied once and recorded in `schema_migrations`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::sandbox::store::error::StoreError;

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
    version: std::sync::atomic::AtomicU64,
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
    /// Opens (creating when needed) the database for `storage`, in WAL mode with foreign keys.
    pub fn open(storage: &Storage) -> Result<Self, DbOpenError> {
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
            version: std::sync::atomic::AtomicU64::new(0),
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
