//! The sandbox's durable state: SQLite (rusqlite, bundled), in the data directory for
//! `sandbox serve` so a trainer's demo survives a restart, or in memory for tests
//! (`--in-memory`).
//!
//! Every change runs in one `BEGIN IMMEDIATE` transaction ([`Db::write`]), or, for the hot
//! creations (payments, consents), as one write of a group commit ([`Db::write_batched`],
//! [`crate::sandbox::store::db::group_commit`]: one transaction and one commit for all the writes
//! waiting, a savepoint each, answers after the commit); reads run on connections of their
//! own ([`Db::read`]: a SQLite file's [`SQLITE_READERS`], on PostgreSQL a small pool,
//! [`PG_POOL`]; in memory the one connection). Modules bring their own tables as named migrations
//! ([`Db::migrate`]), applied once and recorded in `schema_migrations`.
//!
//! A database file is in WAL mode with `synchronous=NORMAL` (a commit appends to the log and
//! does not sync; a checkpoint syncs). The request connection never checkpoints
//! (`wal_autocheckpoint=0`): the [`Checkpointer`] thread does, on a connection of its own, so
//! no request pays for copying the log into a large file (issue 20, "State that stays fast";
//! the figures are in BENCHMARKS.md). Its page cache is [`CACHE_KIB`].

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, TransactionBehavior};

pub mod group_commit;

use crate::sandbox::store::checkpoint::{Checkpointer, Checkpoints, WalState};
use crate::sandbox::store::db::group_commit::{GroupCommit, GroupStats, Request};
use crate::sandbox::store::dup_keys::DupKeys;
use crate::sandbox::store::error::StoreError;
use crate::sandbox::store::sql::{self, Conn, PgSession};

/// `PSD2_SQLITE_CHECKPOINT=commit`: no checkpointer thread and SQLite's default page cache;
/// the committing connection checkpoints (every 1000 pages), as before issue 20's fix. For
/// before/after measurements with one binary (`benches/scale.rs`; the servers it starts
/// inherit the variable). Any other value, or none: the background checkpointer.
pub const CHECKPOINT_ON_COMMIT_ENV: &str = "PSD2_SQLITE_CHECKPOINT";

/// The request connection's page cache, in KiB (`PRAGMA cache_size = -CACHE_KIB`): room for
/// the upper levels and hot leaves of the indexes of a state with 100,000s of rows (SQLite's
/// default is 2 MiB).
pub const CACHE_KIB: i64 = 32 * 1024;

/// How much of a state file the request connection (the writer's) reads through a memory
/// map (`PRAGMA mmap_size`, bytes; 1 GiB). A page found in the map costs a memory read, not a
/// `pread` system call and a copy into the page cache: with another TPP's 100,000 payments
/// in the file, the index leaves a new payment lands on are rarely in the 32 MiB cache
/// (issue 20's scale benchmark). The map is address space, not memory: the kernel's page
/// cache holds the file's pages either way. SQLite still writes through the WAL, never
/// through the map.
///
/// The read connections ([`SQLITE_READERS`]) have no map (issue 23, session 18): in WAL
/// mode a connection that starts a read after another connection's commit drops its page
/// cache and unmaps its whole map (`sqlite3OsUnfetch(fd, 0, 0)`), so under writes each
/// read after a commit paid a `munmap` (a TLB shoot-down by IPI to the other core) and a
/// new `mmap` with page faults; the writer's own commits leave its cache and map alone.
pub const MMAP_BYTES: i64 = 1 << 30;

/// The PostgreSQL advisory lock every write transaction takes first
/// (`pg_advisory_xact_lock`): writers are serialized across all instances on one database,
/// as SQLite's `BEGIN IMMEDIATE` serializes them on one file, so the domain's
/// read-check-write transactions keep their meaning (an assumption of the code written for
/// SQLite; a real ASPSP would use finer locks). The number is "PSD2" in ASCII.
pub const PG_WRITE_LOCK: i64 = 0x5053_4432;

/// The PostgreSQL connections of one instance's store for reads and single writes (the group
/// commit's writer has one more of its own). The store is called from tokio's worker
/// threads (one per core) and blocks on its connection, so a few are enough for every
/// worker to have one; each costs the server a backend process.
pub const PG_POOL: usize = 4;

/// Where the state lives.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum Storage {
    /// A private in-memory database (tests, `--in-memory`); gone when the process ends.
    #[default]
    InMemory,
    /// A database file (created with its directory when missing).
    File(PathBuf),
    /// A PostgreSQL database, by its connection URL (`postgres://user[:password]@host[:port]/db`).
    /// Its `Debug` and [`Db::describe`] never show the password ([`redact_url`]).
    Postgres(String),
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Storage::InMemory => f.write_str("InMemory"),
            Storage::File(p) => f.debug_tuple("File").field(p).finish(),
            Storage::Postgres(url) => f.debug_tuple("Postgres").field(&redact_url(url)).finish(),
        }
    }
}

impl Storage {
    /// `--db`'s value: a `postgres://` or `postgresql://` URL is a PostgreSQL database, else
    /// a file path.
    pub fn parse(value: &str) -> Storage {
        if is_postgres_url(value) {
            Storage::Postgres(value.to_string())
        } else {
            Storage::File(PathBuf::from(value))
        }
    }
}

/// Whether `value` is a PostgreSQL connection URL (`postgres://` or `postgresql://`).
pub fn is_postgres_url(value: &str) -> bool {
    let lower = value.get(..13).unwrap_or(value).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// A PostgreSQL URL without its password (`postgres://user:***@host/db`), for messages and
/// logs; a value that does not parse as a URL is shown as `postgres://…` only.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            // A `password=` query parameter too.
            let pairs: Vec<(String, String)> = u
                .query_pairs()
                .map(|(k, v)| {
                    let v = if k.eq_ignore_ascii_case("password") {
                        "***".to_string()
                    } else {
                        v.into_owned()
                    };
                    (k.into_owned(), v)
                })
                .collect();
            if !pairs.is_empty() {
                u.query_pairs_mut().clear().extend_pairs(pairs);
            }
            u.to_string()
        }
        Err(_) => "postgres://…".to_string(),
    }
}

/// A named schema step: applied once, in order. The SQL is SQLite's dialect; on PostgreSQL it
/// runs translated ([`sql::to_postgres`]), under the same name in `schema_migrations`.
pub type Migration = (&'static str, &'static str);

/// The first line of a [`Migration`] that runs on SQLite only (a schema that differs by
/// back end: the SQLite writer keeps in memory what PostgreSQL, written by several
/// instances, keeps in an index; issue 23, `indexes::MIGRATION_DUPLICATES_IN_MEMORY`).
pub const SQLITE_ONLY: &str = "-- SQLite only\n";

/// The connection of either back end (shared with the group-commit writer thread,
/// [`crate::sandbox::store::db::group_commit`]).
pub(crate) enum Backing {
    /// The SQLite connection behind a mutex.
    Sqlite(Mutex<Connection>),
    /// A pool of [`PG_POOL`] PostgreSQL connections, each behind a mutex (reconnected when
    /// the server closed it): a read or a single write takes a free one, so reads do not
    /// queue behind each other or behind the group commit's writer (which has its own).
    Postgres {
        url: String,
        sessions: Vec<Mutex<Option<PgSession>>>,
        /// Where the next search for a free session starts.
        next: std::sync::atomic::AtomicUsize,
    },
}

/// The database: SQLite or PostgreSQL behind one interface ([`Db::read`], [`Db::write`],
/// whose closures get a [`Conn`]).
pub struct Db {
    backing: std::sync::Arc<Backing>,
    /// Bumped after every committed [`Db::write`]: caches of derived data (serialized
    /// transaction pages) key on it, so any change invalidates them.
    /// Shared with the checkpointer, which watches it for a pause in the writes.
    version: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The checkpointer of a database file (none in memory or on PostgreSQL).
    checkpointer: Option<Checkpointer>,
    /// The group-commit writer of [`Db::write_batched`], started at its first use.
    group: std::sync::OnceLock<Option<GroupCommit>>,
    /// A database file's read connections ([`SQLITE_READERS`]; none in memory or on
    /// PostgreSQL).
    readers: Option<Readers>,
    /// What the request connection's writes changed (SQLite only: on PostgreSQL other
    /// instances write too).
    changes: Option<std::sync::Arc<Changes>>,
}

/// What the writes of a SQLite request connection changed, for the exact cache of what a
/// payment creation reads first ([`crate::sandbox::store::Store::payment_context`]; issue
/// 23, session 19: that read cost a read transaction on a connection whose page cache every
/// commit drops, ~47,000 instructions and ~15 µs of a payment's ~120 µs).
///
/// Two parts, each "pending" from the first change of a write transaction (SQLite's update
/// hook on the request connection, which runs inside the statement, before the commit)
/// until after its commit (or rollback), when the writer, still holding the connection,
/// publishes the new state and clears the flag; readers use a cached value only while
/// nothing is pending, so a cached value is never older than the last commit:
/// - the **generation** of the rows of `customers`, `accounts` and `psu_registrations`
///   (any change to one of them bumps it);
/// - the **next run time** (`payments::NEXT_DUE`, given by [`Changes::watch_next_due`]),
///   read again on the request connection after a commit that updated or deleted a
///   payment. A new
///   payment cannot change it unless it is stored authorised with a run time, which
///   `payments::insert_payment` turns into an update of its row.
///
/// A write through [`Db::write`] marks both parts pending before it begins, whatever it
/// changes (its statements may empty a table with SQLite's truncate optimization, which
/// calls no hook); the group commit's batches (payment and consent creations) rely on the
/// hook. A state file has one sandbox process (the replay guard's and the checkpointer's
/// connections change none of these tables); several instances share PostgreSQL, where
/// there is no cache.
#[derive(Debug, Default)]
pub struct Changes {
    entities_pending: std::sync::atomic::AtomicBool,
    generation: std::sync::atomic::AtomicU64,
    due_pending: std::sync::atomic::AtomicBool,
    /// `None`: not known (before the first write, or its read failed).
    next_due: Mutex<Option<Option<i64>>>,
    /// The statement of the next run time (`payments::NEXT_DUE`, given by the store: this
    /// module comes first); unset, the next run time stays unknown.
    next_due_sql: std::sync::OnceLock<&'static str>,
    /// The duplicate keys of the payments the request connection writes (its update hook
    /// counts the inserts into `pis_payments`).
    dup_keys: DupKeys,
}

impl Changes {
    /// The generation of the customers, accounts and PSU registrations; `None` while a
    /// change to them is pending.
    pub fn entities(&self) -> Option<u64> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.entities_pending.load(SeqCst) {
            return None;
        }
        Some(self.generation.load(SeqCst))
    }

    /// The next run time of an authorised payment (Unix seconds; `Some(None)`: none), as
    /// of the last commit; `None` while a change is pending or when not known.
    pub fn next_due(&self) -> Option<Option<i64>> {
        if self.due_pending.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        *self.next_due.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The duplicate keys of the payments the request connection writes
    /// ([`crate::sandbox::store::dup_keys`]).
    pub fn dup_keys(&self) -> &DupKeys {
        &self.dup_keys
    }

    /// Keeps the next run time with `sql` (`payments::NEXT_DUE`), from the next write on.
    pub fn watch_next_due(&self, sql: &'static str) {
        let _ = self.next_due_sql.set(sql);
    }

    /// The update hook's part: a row of `table` changed (`insert`: it was added).
    fn changed(&self, table: &str, insert: bool) {
        use std::sync::atomic::Ordering::SeqCst;
        match table {
            "customers" | "accounts" | "psu_registrations" => {
                self.entities_pending.store(true, SeqCst)
            }
            "pis_payments" if !insert => self.due_pending.store(true, SeqCst),
            "pis_payments" => self.dup_keys.counted_insert(),
            _ => {}
        }
    }

    /// Before a write whose changes the hook may not see ([`Db::write`]).
    fn all_pending(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        self.entities_pending.store(true, SeqCst);
        self.due_pending.store(true, SeqCst);
    }

    /// After the commit (or rollback) of a write on `conn`, still holding it: publishes
    /// what is pending.
    pub(crate) fn settle(&self, conn: &Connection) {
        use std::sync::atomic::Ordering::SeqCst;
        if self.due_pending.load(SeqCst) {
            let next = self.next_due_sql.get().and_then(|sql| {
                conn.prepare_cached(sql)
                    .and_then(|mut st| st.query_row([], |r| r.get::<_, Option<i64>>(0)))
                    .ok()
            });
            *self.next_due.lock().unwrap_or_else(|p| p.into_inner()) = next;
            self.due_pending.store(false, SeqCst);
        }
        if self.entities_pending.load(SeqCst) {
            self.generation.fetch_add(1, SeqCst);
            self.entities_pending.store(false, SeqCst);
        }
    }
}

/// The read connections of a SQLite file (opened at their first use): in WAL mode a reader
/// sees the last committed state and never waits for the writer, so the reads before a
/// write (and every other read) no longer queue for the connection the group commit's
/// writer holds for a whole batch (issue 23: payment creation on SQLite).
struct Readers {
    file: PathBuf,
    conns: Vec<Mutex<Option<Connection>>>,
    /// Where the next search for a free one starts.
    next: std::sync::atomic::AtomicUsize,
    /// `PRAGMA cache_size` and `mmap_size` as the request connection (`None`: SQLite's).
    tuned: bool,
}

/// How many read connections a SQLite state file has ([`Db::read`]): one per tokio worker
/// of a small machine, and a few more; each keeps its own page cache ([`CACHE_KIB`]).
pub const SQLITE_READERS: usize = 4;

/// Turns on SQLite's query planner stability guarantee (`SQLITE_DBCONFIG_ENABLE_QPSG`) on
/// `c`, so that a cached statement keeps its plan whatever values are bound to it. Without
/// it SQLite marks a parameter whose value its planner looked at (an equality it estimates,
/// a range under `SQLITE_ENABLE_STAT4`, which the bundled SQLite is built with), and a
/// statement with such a mark is expired by every `sqlite3_clear_bindings` (which rusqlite's
/// statement cache calls when a statement goes back to it): prepared again at its next step,
/// at every use (issue 23: a payment creation's reads before its write spent 13 % of the
/// server's CPU in `sqlite3Reprepare`). The sandbox's statements are planned for their
/// indexes, not for particular values (no `ANALYZE`; the partial indexes' conditions are
/// implied by the statements' own text, a literal status or a column compared with a
/// parameter, never by a bound value).
///
/// Errors: SQLite refuses the setting.
pub(crate) fn stable_plans(c: &Connection) -> rusqlite::Result<()> {
    c.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

impl Readers {
    /// Opens a read connection as the request connection is set up (busy handler, page
    /// cache) but without a memory map ([`MMAP_BYTES`] says why), that refuses to write
    /// (`query_only`) and never checkpoints.
    fn open(&self) -> rusqlite::Result<Connection> {
        let mut c = Connection::open(&self.file)?;
        c.set_prepared_statement_cache_capacity(256);
        stable_plans(&c)?;
        crate::sandbox::store::busy::wait_for_locks(&mut c)?;
        c.pragma_update(None, "wal_autocheckpoint", 0)?;
        if self.tuned {
            c.pragma_update(None, "cache_size", -CACHE_KIB)?;
        }
        c.pragma_update(None, "query_only", "ON")?;
        Ok(c)
    }

    /// Runs `f` on a free read connection (the first free one from a rotating start, else
    /// the one at the start, waited for), opened when first used.
    fn with<T>(&self, f: impl FnOnce(&Conn<'_>) -> sql::Result<T>) -> sql::Result<T> {
        let n = self.conns.len().max(1);
        let start = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % n;
        let free = (0..n).find_map(|i| match self.conns.get((start + i) % n)?.try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        });
        let mut guard = match free {
            Some(g) => g,
            None => self
                .conns
                .get(start)
                .ok_or_else(|| sql::Error::Other("no SQLite read connection".into()))?
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        };
        if guard.is_none() {
            *guard = Some(self.open()?);
        }
        match guard.as_ref() {
            Some(c) => f(&Conn::sqlite(c)),
            None => Err(sql::Error::Other("no SQLite read connection".into())),
        }
    }
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
    /// The database file, `memory`, or the PostgreSQL URL without its password.
    pub location: String,
    #[source]
    /// The database's error.
    pub source: sql::Error,
}

/// Rolls back a PostgreSQL transaction that did not commit (an error or a panic in the
/// closure), so the connection is clean for the next caller.
struct PgTx<'a> {
    session: &'a PgSession,
    done: bool,
}

impl Drop for PgTx<'_> {
    fn drop(&mut self) {
        // A `BEGIN` still deferred never reached the server: nothing to roll back.
        if !self.done && !self.session.discard_deferred() {
            let _ = self.session.batch("ROLLBACK");
        }
    }
}

impl Db {
    /// Opens (creating when needed) the database for `storage`: a SQLite file in WAL mode
    /// with foreign keys, checkpointed in the background ([`Checkpoints::default`]), memory,
    /// or a connection to PostgreSQL.
    ///
    /// Errors: the file or its directory cannot be created or opened, or set up; the
    /// PostgreSQL server refuses or is unreachable.
    pub fn open(storage: &Storage) -> Result<Self, DbOpenError> {
        Self::open_with(storage, Checkpoints::default())
    }

    /// [`Db::open`] with the checkpointer's timing (tests, benchmarks).
    ///
    /// Errors: as [`Db::open`].
    pub fn open_with(storage: &Storage, checkpoints: Checkpoints) -> Result<Self, DbOpenError> {
        if let Storage::Postgres(url) = storage {
            let err = |source| DbOpenError {
                location: redact_url(url),
                source,
            };
            let session = PgSession::connect(url).map_err(err)?;
            // Under the write lock: instances starting together create the table once.
            session
                .batch(&format!(
                    "BEGIN; SELECT pg_advisory_xact_lock({PG_WRITE_LOCK}); {}; {}; COMMIT",
                    sql::to_postgres(SCHEMA_MIGRATIONS),
                    PG_DATA_VERSION
                ))
                .map_err(err)?;
            let mut sessions = vec![Mutex::new(Some(session))];
            // The others connect at their first use.
            sessions.extend((1..PG_POOL).map(|_| Mutex::new(None)));
            return Ok(Db {
                backing: std::sync::Arc::new(Backing::Postgres {
                    url: url.clone(),
                    sessions,
                    next: std::sync::atomic::AtomicUsize::new(0),
                }),
                version: std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0)),
                checkpointer: None,
                group: std::sync::OnceLock::new(),
                readers: None,
                changes: None,
            });
        }
        let location = match storage {
            Storage::File(p) => p.display().to_string(),
            _ => ":memory:".to_string(),
        };
        let err = |source: rusqlite::Error| DbOpenError {
            location: location.clone(),
            source: source.into(),
        };
        let mut conn = match storage {
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
            _ => Connection::open_in_memory().map_err(err)?,
        };
        // Room for the sandbox's distinct statements (`Conn` prepares every one cached).
        conn.set_prepared_statement_cache_capacity(256);
        stable_plans(&conn).map_err(err)?;
        let on_commit = std::env::var_os(CHECKPOINT_ON_COMMIT_ENV).is_some_and(|v| v == "commit");
        if !on_commit {
            conn.pragma_update(None, "cache_size", -CACHE_KIB)
                .map_err(err)?;
            if matches!(storage, Storage::File(_)) {
                conn.pragma_update(None, "mmap_size", MMAP_BYTES)
                    .map_err(err)?;
            }
        }
        let version = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let checkpointer = match storage {
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
            _ => None,
        };
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(err)?;
        // Waits for the flusher's and checkpointer's locks in short steps (`store::busy`).
        crate::sandbox::store::busy::wait_for_locks(&mut conn).map_err(err)?;
        conn.execute_batch(SCHEMA_MIGRATIONS).map_err(err)?;
        let changes = std::sync::Arc::new(Changes::default());
        let hook = changes.clone();
        conn.update_hook(Some(
            move |action: rusqlite::hooks::Action, _: &str, table: &str, _: i64| {
                hook.changed(table, action == rusqlite::hooks::Action::SQLITE_INSERT)
            },
        ))
        .map_err(err)?;
        let readers = match storage {
            Storage::File(p) => Some(Readers {
                file: p.clone(),
                conns: (0..SQLITE_READERS).map(|_| Mutex::new(None)).collect(),
                next: std::sync::atomic::AtomicUsize::new(0),
                tuned: !on_commit,
            }),
            _ => None,
        };
        Ok(Db {
            backing: std::sync::Arc::new(Backing::Sqlite(Mutex::new(conn))),
            version,
            checkpointer,
            group: std::sync::OnceLock::new(),
            readers,
            changes: Some(changes),
        })
    }

    /// What the request connection's writes changed ([`Changes`]; `None` on PostgreSQL).
    pub fn changes(&self) -> Option<&Changes> {
        self.changes.as_deref()
    }

    /// The PostgreSQL URL of the state (`None` on SQLite), for the connections other than the
    /// store's that the instances on one database share ([`crate::sandbox::store::shared`]).
    pub fn postgres_url(&self) -> Option<&str> {
        match &*self.backing {
            Backing::Postgres { url, .. } => Some(url),
            Backing::Sqlite(_) => None,
        }
    }

    /// Which back end holds the state.
    pub fn backend(&self) -> sql::Backend {
        match *self.backing {
            Backing::Sqlite(_) => sql::Backend::Sqlite,
            Backing::Postgres { .. } => sql::Backend::Postgres,
        }
    }

    /// Applies the migrations not yet recorded, each in its own write transaction (on
    /// PostgreSQL under the write lock, so instances starting together apply each once). A
    /// migration whose SQL starts with [`SQLITE_ONLY`] runs on SQLite only; PostgreSQL
    /// records it as applied without running it.
    ///
    /// Errors: the database fails (the failing migration is rolled back).
    pub fn migrate(&self, migrations: &[Migration]) -> sql::Result<()> {
        for (name, ddl) in migrations {
            self.write_with(|tx| -> sql::Result<()> {
                let done: bool = tx.query_row(
                    "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE name = ?1)",
                    [name],
                    |r| r.get(0),
                )?;
                if !done {
                    let skipped =
                        ddl.starts_with(SQLITE_ONLY) && tx.backend() == sql::Backend::Postgres;
                    if !skipped {
                        tx.execute_batch(ddl)?;
                    }
                    tx.execute("INSERT INTO schema_migrations(name) VALUES (?1)", [name])?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    pub(crate) fn lock_sqlite(m: &Mutex<Connection>) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a half-done transaction behind (rusqlite
        // rolls back on drop), so a poisoned lock is safe to reuse.
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A PostgreSQL session of the pool: the first free one from a rotating start, else
    /// (all busy) the one at the start, waited for; (re)connected when it is new or the
    /// server closed it (a restart of the server costs the requests in flight, not the
    /// sandbox).
    fn lock_pg<'a>(
        url: &str,
        sessions: &'a [Mutex<Option<PgSession>>],
        next: &std::sync::atomic::AtomicUsize,
    ) -> sql::Result<std::sync::MutexGuard<'a, Option<PgSession>>> {
        let n = sessions.len().max(1);
        let start = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % n;
        let free = (0..n).find_map(|i| match sessions.get((start + i) % n)?.try_lock() {
            Ok(g) => Some(g),
            // A panic while holding it cannot leave a transaction open (the guard rolls back).
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        });
        let mut guard = match free {
            Some(g) => g,
            None => sessions
                .get(start)
                .ok_or_else(|| sql::Error::Other("no PostgreSQL connection".into()))?
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        };
        PgSession::live(&mut guard, url)?;
        Ok(guard)
    }

    /// Runs `f` on a connected session of the pool ([`Db::lock_pg`]).
    fn with_pg<T>(
        url: &str,
        sessions: &[Mutex<Option<PgSession>>],
        next: &std::sync::atomic::AtomicUsize,
        f: impl FnOnce(&PgSession) -> T,
    ) -> sql::Result<T> {
        let mut guard = Self::lock_pg(url, sessions, next)?;
        Ok(f(PgSession::live(&mut guard, url)?))
    }

    /// Round trips of the PostgreSQL pool's sessions so far ([`PgSession::round_trips`];
    /// 0 on SQLite), for tests counting what a read or a write costs.
    #[cfg(test)]
    pub(crate) fn pg_round_trips(&self) -> u64 {
        match &*self.backing {
            Backing::Sqlite(_) => 0,
            Backing::Postgres { sessions, .. } => sessions
                .iter()
                .map(|m| {
                    m.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .as_ref()
                        .map_or(0, PgSession::round_trips)
                })
                .sum(),
        }
    }

    /// The data version: changes after every committed write. On PostgreSQL it is the
    /// database's counter (`sandbox_data_version`, bumped by every write transaction of every
    /// instance), so the caches keyed on it (remembered access decisions, serialized pages)
    /// never answer from data another instance changed; when it cannot be read, a version no
    /// cache holds (the caches miss).
    ///
    /// Must not be called inside [`Db::read`] or [`Db::write`]'s closure (it takes the
    /// connection).
    pub fn version(&self) -> u64 {
        match *self.backing {
            Backing::Sqlite(_) => self.version.load(std::sync::atomic::Ordering::Acquire),
            Backing::Postgres { .. } => {
                let shared = self.read_single(|c| {
                    c.query_row("SELECT v FROM sandbox_data_version WHERE id = 1", [], |r| {
                        r.get::<_, i64>(0)
                    })
                });
                match shared {
                    // Even numbers: the database's counter; odd: a fresh local miss.
                    Ok(v) => u64::try_from(v).unwrap_or(0).wrapping_mul(2),
                    Err(_) => {
                        self.version
                            .fetch_add(1, std::sync::atomic::Ordering::AcqRel)
                            .wrapping_mul(2)
                            | 1
                    }
                }
            }
        }
    }

    /// Runs `f` on the connection (reads; on PostgreSQL in one read-only `REPEATABLE READ`
    /// transaction, so its statements see one snapshot).
    ///
    /// Errors: the database fails ([`StoreError`]).
    pub fn read<T>(&self, f: impl FnOnce(&Conn<'_>) -> sql::Result<T>) -> Result<T, StoreError> {
        Ok(self.read_raw(f)?)
    }

    /// Like [`Db::read`] with the plain database error (opening).
    ///
    /// Errors: the database fails.
    pub fn read_raw<T>(&self, f: impl FnOnce(&Conn<'_>) -> sql::Result<T>) -> sql::Result<T> {
        if let Some(r) = &self.readers {
            // One read transaction of its own for all of `f`'s statements (one snapshot).
            return r.with(|c| {
                let sqlite = c
                    .as_sqlite()
                    .ok_or_else(|| sql::Error::Other("not SQLite".into()))?;
                let tx =
                    rusqlite::Transaction::new_unchecked(sqlite, TransactionBehavior::Deferred)
                        .map_err(sql::Error::from)?;
                let out = f(c)?;
                tx.commit().map_err(sql::Error::from)?;
                Ok(out)
            });
        }
        match &*self.backing {
            Backing::Sqlite(m) => {
                let conn = Self::lock_sqlite(m);
                f(&Conn::sqlite(&conn))
            }
            Backing::Postgres {
                url,
                sessions,
                next,
            } => Self::with_pg(url, sessions, next, |s| {
                // One snapshot for all of `f`'s statements, as SQLite's single connection
                // gives: another instance's commit lands before or after, never between.
                // The `BEGIN` goes in the round trip of `f`'s first statement.
                s.defer("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY");
                let mut tx = PgTx {
                    session: s,
                    done: false,
                };
                let out = f(&Conn::postgres(s))?;
                // No statement ran: the server never saw the `BEGIN`.
                if !s.discard_deferred() {
                    s.batch("COMMIT")?;
                }
                tx.done = true;
                Ok(out)
            })?,
        }
    }

    /// Runs `f`, which runs ONE statement, on the connection: on SQLite as [`Db::read`]; on
    /// PostgreSQL without an explicit transaction (one statement in autocommit sees one
    /// snapshot by itself), so one round trip instead of `BEGIN`, the statement and `COMMIT`
    /// (issue 23, the reads before a write). With more than one statement, each would see
    /// its own snapshot: use [`Db::read`] for those.
    ///
    /// Errors: the database fails.
    pub fn read_single<T>(&self, f: impl FnOnce(&Conn<'_>) -> sql::Result<T>) -> sql::Result<T> {
        if let Some(r) = &self.readers {
            return r.with(f);
        }
        match &*self.backing {
            Backing::Sqlite(m) => {
                let conn = Self::lock_sqlite(m);
                f(&Conn::sqlite(&conn))
            }
            Backing::Postgres {
                url,
                sessions,
                next,
            } => Self::with_pg(url, sessions, next, |s| f(&Conn::postgres(s)))?,
        }
    }

    /// Runs `f` in one write transaction (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: `BEGIN` and
    /// the write lock [`PG_WRITE_LOCK`]), committed when `f` returns `Ok` (rolled back when
    /// it fails), and bumps the data version after a commit. `E` is the caller's error: any
    /// type database errors convert into ([`StoreError`], or the domain's error, so that `f`
    /// may roll back with a Berlin Group answer).
    ///
    /// Errors: `f`'s, or the database fails to begin or commit.
    pub fn write<T, E: From<sql::Error>>(
        &self,
        f: impl FnOnce(&Conn<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.write_with(f)
    }

    /// Like [`Db::write`] with the plain database error (opening, seeding).
    ///
    /// Errors: as [`Db::write`].
    pub fn write_raw<T>(&self, f: impl FnOnce(&Conn<'_>) -> sql::Result<T>) -> sql::Result<T> {
        self.write_with(f)
    }

    /// Runs `f` as one write of a group commit ([`crate::sandbox::store::db::group_commit`]): the
    /// writer thread runs it with the other writes waiting at that moment (after a pause of
    /// [`group_commit::GATHER`] when the previous batch held several) in ONE transaction,
    /// `f` in its own savepoint (its failure rolls back only its own statements, and its
    /// error is its answer), commits once, bumps the data version once, and only then
    /// answers. The hot creations (payments, consents) use it; `f` must be `'static` (it runs
    /// on the writer thread), so it owns what it writes, and `Fn`: on PostgreSQL a batch runs
    /// pipelined first and, when any of its writes fails, again one write at a time in
    /// savepoints, so `f` may run twice (its statements of the first run rolled back); its
    /// statements that need no answer go through [`Conn::execute_pipelined`].
    ///
    /// Errors: `f`'s, or the batch fails to begin or commit (then no write of it is stored),
    /// or the writer thread cannot be started (then `f` runs as a [`Db::write`]).
    pub async fn write_batched<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: Fn(&Conn<'_>) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<sql::Error> + Send + 'static,
    {
        let Some(group) = self.group() else {
            return self.write_with(f);
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        if !group.submit(Box::new(Request::new(f, reply))) {
            return Err(E::from(sql::Error::Other(
                "the sandbox's writer thread is gone".into(),
            )));
        }
        answer.await.unwrap_or_else(|_| {
            Err(E::from(sql::Error::Other(
                "the sandbox's writer thread dropped a write".into(),
            )))
        })
    }

    /// The group-commit writer, started at the first call (`None` when its thread could not
    /// be started).
    pub(crate) fn group(&self) -> Option<&GroupCommit> {
        self.group
            .get_or_init(|| {
                GroupCommit::start(
                    self.backing.clone(),
                    self.version.clone(),
                    self.changes.clone(),
                )
                .inspect_err(|e| tracing::warn!(error = %e, "no group-commit writer thread"))
                .ok()
            })
            .as_ref()
    }

    /// The group commit's counters so far (batches committed, writes in them); zeros before
    /// the first [`Db::write_batched`].
    pub fn group_stats(&self) -> (u64, u64) {
        match self.group.get().and_then(Option::as_ref) {
            Some(g) => {
                let s: &GroupStats = &g.stats;
                (
                    s.batches.load(std::sync::atomic::Ordering::Relaxed),
                    s.writes.load(std::sync::atomic::Ordering::Relaxed),
                )
            }
            None => (0, 0),
        }
    }

    fn write_with<T, E: From<sql::Error>>(
        &self,
        f: impl FnOnce(&Conn<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let out = match &*self.backing {
            Backing::Sqlite(m) => {
                let mut conn = Self::lock_sqlite(m);
                if let Some(c) = &self.changes {
                    c.all_pending();
                }
                let run = || -> Result<T, E> {
                    let tx = conn
                        .transaction_with_behavior(TransactionBehavior::Immediate)
                        .map_err(sql::Error::from)?;
                    let keys = self.changes.as_deref().map(Changes::dup_keys);
                    let out = f(&Conn::sqlite(&tx).with_dup_keys(keys))?;
                    tx.commit().map_err(sql::Error::from)?;
                    Ok(out)
                };
                let out = run();
                if let Some(c) = &self.changes {
                    c.settle(&conn);
                }
                out?
            }
            Backing::Postgres {
                url,
                sessions,
                next,
            } => Self::with_pg(url, sessions, next, |s| -> Result<T, E> {
                // In the round trip of `f`'s first statement (the server takes the lock
                // before it runs that statement).
                s.defer(&format!(
                    "BEGIN; SELECT pg_advisory_xact_lock({PG_WRITE_LOCK})"
                ));
                let mut tx = PgTx {
                    session: s,
                    done: false,
                };
                let out = f(&Conn::postgres(s))?;
                s.batch("UPDATE sandbox_data_version SET v = v + 1 WHERE id = 1; COMMIT")?;
                tx.done = true;
                Ok(out)
            })??,
        };
        self.version
            .fetch_add(1, std::sync::atomic::Ordering::Release);
        Ok(out)
    }

    /// Has the checkpointer copy the log into the database file now and waits for it (a
    /// database in memory has no log, PostgreSQL checkpoints by itself: `None`).
    ///
    /// Errors: the checkpoint fails.
    pub fn checkpoint(&self) -> Result<Option<WalState>, StoreError> {
        match &self.checkpointer {
            Some(c) => Ok(Some(c.now()?)),
            None => Ok(None),
        }
    }

    /// The file behind `storage`, for messages (a PostgreSQL URL without its password).
    pub fn describe(storage: &Storage) -> String {
        match storage {
            Storage::InMemory => "in memory".into(),
            Storage::File(p) => p.display().to_string(),
            Storage::Postgres(url) => redact_url(url),
        }
    }
}

/// PostgreSQL's shared data version ([`Db::version`]): one row, bumped by every write
/// transaction; kept by initialization like `schema_migrations`.
const PG_DATA_VERSION: &str = "CREATE TABLE IF NOT EXISTS sandbox_data_version \
     (id BIGINT PRIMARY KEY CHECK (id = 1), v BIGINT NOT NULL); \
     INSERT INTO sandbox_data_version (id, v) VALUES (1, 0) ON CONFLICT DO NOTHING";

/// The table of applied migrations (both back ends).
const SCHEMA_MIGRATIONS: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)";

/// Default database file under a data directory.
pub fn default_file(data_dir: &Path) -> PathBuf {
    data_dir.join("sandbox.sqlite3")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database file whose checkpointer runs only when asked (no interval during a test).
    fn file_db(dir: &Path, max_wal_pages: u32) -> (Db, PathBuf) {
        file_db_with(dir, 3_600_000, 3_600_000, max_wal_pages)
    }

    /// [`file_db`] whose checkpointer runs after a pause of `pause_ms` or at `interval_ms`.
    fn file_db_with(
        dir: &Path,
        pause_ms: u64,
        interval_ms: u64,
        max_wal_pages: u32,
    ) -> (Db, PathBuf) {
        let file = dir.join("sandbox.sqlite3");
        let db = Db::open_with(
            &Storage::File(file.clone()),
            Checkpoints {
                pause: std::time::Duration::from_millis(pause_ms),
                interval: std::time::Duration::from_millis(interval_ms),
                max_wal_pages,
            },
        )
        .unwrap();
        db.migrate(&[("t1", "CREATE TABLE t (x BLOB NOT NULL)")])
            .unwrap();
        (db, file)
    }

    /// Waits until `file` holds at least `bytes` (a checkpoint copied the log into it).
    /// Not a speed check: the deadline only turns a checkpointer that never runs into a
    /// failure (`never`) instead of a hang.
    fn wait_for_size(file: &Path, bytes: u64, never: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while size(file) < bytes {
            assert!(std::time::Instant::now() < deadline, "{never}");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
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

    /// A state file's request connection (the writer's) reads through a memory map of
    /// [`MMAP_BYTES`], its read connections through none (issue 23: every commit unmapped
    /// theirs); an in-memory database has none.
    #[test]
    fn a_state_file_is_read_through_a_memory_map() {
        let dir = tempfile::tempdir().unwrap();
        let file = Db::open(&Storage::File(dir.path().join("map.sqlite3"))).unwrap();
        let memory = Db::open(&Storage::InMemory).unwrap();
        let mmap = |db: &Db| {
            db.read_raw(|c| {
                use rusqlite::OptionalExtension;
                // An in-memory database answers the pragma with no row.
                Ok(c.as_sqlite()
                    .expect("SQLite")
                    .query_row("PRAGMA mmap_size", [], |r| r.get::<_, i64>(0))
                    .optional()?
                    .unwrap_or(0))
            })
            .unwrap()
        };
        assert_eq!(mmap(&file), 0, "read connection");
        assert_eq!(mmap(&memory), 0);
        let written = |db: &Db| {
            db.write_raw(|c| {
                Ok(c.as_sqlite()
                    .expect("SQLite")
                    .query_row("PRAGMA mmap_size", [], |r| r.get::<_, i64>(0))?)
            })
            .unwrap()
        };
        assert_eq!(written(&file), MMAP_BYTES, "request connection");
    }

    /// A cached statement is prepared once, however its bound values change, on the read
    /// connections and on the request connection ([`stable_plans`]): a LEFT JOIN with an
    /// equality the index does not cover (the shape of `Store::payment_context`) was
    /// prepared again at every use, because returning it to rusqlite's cache clears its
    /// bindings, which expires a statement whose plan looked at a bound value.
    #[test]
    fn a_cached_statement_is_not_prepared_again_for_new_values() {
        let dir = tempfile::tempdir().unwrap();
        let (db, _file) = file_db(dir.path(), 1 << 20);
        db.migrate(&[(
            "t2",
            "CREATE TABLE k (id TEXT PRIMARY KEY, owner TEXT NOT NULL, n INTEGER NOT NULL); \
             INSERT INTO k VALUES ('a', 'x', 0), ('b', 'y', 1)",
        )])
        .unwrap();
        const SQL: &str = "SELECT k.owner FROM (SELECT 1 AS one) AS one \
                           LEFT JOIN k ON k.id = ?1 AND k.n = ?2";
        let reprepared = |c: &Conn<'_>| -> sql::Result<i32> {
            let c = c.as_sqlite().expect("SQLite");
            let mut total = 0;
            for (id, n) in [("a", 0), ("b", 1), ("a", 1), ("b", 0), ("a", 0)] {
                let mut stmt = c.prepare_cached(SQL)?;
                let _: Option<String> = stmt.query_row(rusqlite::params![id, n], |r| r.get(0))?;
                total += stmt.get_status(rusqlite::StatementStatus::RePrepare);
            }
            Ok(total)
        };
        for _ in 0..3 {
            assert_eq!(db.read_single(reprepared).unwrap(), 0, "read connection");
        }
        assert_eq!(db.write_raw(reprepared).unwrap(), 0, "request connection");
    }

    /// The thread checkpoints by itself (no order) once the commits pause, or at its
    /// interval, and ends with the `Db`.
    #[test]
    fn the_checkpointer_runs_after_a_pause_and_at_its_interval() {
        for (pause, interval) in [(20, 3_600_000), (3_600_000, 20)] {
            let dir = tempfile::tempdir().unwrap();
            let (db, file) = file_db_with(dir.path(), pause, interval, 1 << 20);
            let before = size(&file);
            write_pages(&db, 50);
            wait_for_size(
                &file,
                before + 50 * 4000,
                &format!(
                    "no checkpoint copied the pages (pause {pause} ms, interval {interval} ms)"
                ),
            );
            drop(db);
            let c = Connection::open(&file).unwrap();
            let n: i64 = c
                .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 50);
        }
    }

    /// A checkpoint held back by a reader's snapshot (it copies only part of the log) is
    /// tried again once the reader is gone, without another commit: an idle sandbox would
    /// otherwise keep its pages in the log until its next write.
    #[test]
    fn a_checkpoint_held_back_by_a_reader_is_tried_again_without_a_commit() {
        let dir = tempfile::tempdir().unwrap();
        let (db, file) = file_db_with(dir.path(), 20, 3_600_000, 1 << 20);
        db.checkpoint().unwrap();
        // A reader on a connection of its own, its snapshot taken before the writes.
        let reader = Connection::open(&file).unwrap();
        reader.execute_batch("BEGIN").unwrap();
        let _: i64 = reader
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .unwrap();
        let before = size(&file);
        write_pages(&db, 50);
        let held = db.checkpoint().unwrap().unwrap();
        assert!(
            held.checkpointed_pages < held.log_pages,
            "the reader held frames back: {held:?}"
        );
        reader.execute_batch("COMMIT").unwrap();
        drop(reader);
        wait_for_size(
            &file,
            before + 50 * 4000,
            "the held-back pages were never copied (no commit came after the reader)",
        );
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
