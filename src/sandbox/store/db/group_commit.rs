//! Group commit of the hot writes (issue 23: payment and consent creation at 50 % of the RSA
//! floor): requests hand their write to one writer thread ([`crate::sandbox::store::db::Db::write_batched`])
//! and await its answer; the thread takes every write waiting, runs them in ONE transaction
//! (when one fails, the batch is rolled back and run again with each write in its own
//! `SAVEPOINT`: a failing write rolls back only its own part and gets its own error), commits
//! once, and only then answers them all. While a batch runs, the next one
//! gathers. When the previous batch held more than one write (concurrent writers), the
//! writer also pauses [`GATHER`] after the first write of the next batch before taking
//! what is waiting (issue 23, session 20: under 64 connections the batches held 1–3 writes
//! each, and every batch writes the right-edge page of each b-tree it touches, takes and
//! frees the log's locks and parks the thread again; waiting a little for more halved a
//! consent's log pages). Under one client a batch is one write and never waits.
//!
//! Durability is the single-write path's ([`crate::sandbox::store::db::Db::write`]): an answer
//! leaves only after the `COMMIT` of its batch returned (SQLite WAL, `synchronous=NORMAL`:
//! the commit is in the log, which survives a killed process; PostgreSQL: the server's
//! commit). On PostgreSQL the batch takes the advisory write lock
//! ([`crate::sandbox::store::db::PG_WRITE_LOCK`]) and bumps `sandbox_data_version` once, on
//! a connection of the writer's own, so the reads of the store's connection do not queue
//! behind it; on SQLite it holds the one connection for the batch. The data version
//! ([`crate::sandbox::store::db::Db::version`]) changes once per committed batch.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use crate::sandbox::store::db::{Backing, Db, PG_WRITE_LOCK};
use crate::sandbox::store::sql::{self, Conn, PgSession};

/// Most writes in one batch (the rest wait for the next).
pub const MAX_BATCH: usize = 256;

/// How long the writer waits for more writes after the first of a batch, when the previous
/// batch held more than one (200 µs; a batch under 64 connections then holds ~15–20 writes
/// instead of 1–3). One pause per batch: the writes queued meanwhile do not wake the writer.
pub const GATHER: std::time::Duration = std::time::Duration::from_micros(200);

/// The savepoint each write of a batch runs in.
const SAVEPOINT: &str = "SAVEPOINT group_write";

/// A write waiting for the writer thread: run in the batch's transaction, then answered with
/// the batch's outcome.
pub(crate) trait Pending: Send {
    /// Runs the write on `conn` (inside its savepoint); whether it succeeded (a failure, or a
    /// panic, is rolled back to the savepoint). A write may be run again after its batch was
    /// rolled back (the rerun one write at a time, [`Writer::batch_pg`], [`Writer::batch_sqlite`]):
    /// the last run's outcome is the answer.
    fn run(&mut self, conn: &Conn<'_>) -> bool;
    /// Sends the answer: the write's own result when the batch committed (`Ok`), else the
    /// batch's error; a failed write gets its own error either way.
    fn answer(self: Box<Self>, committed: Result<(), String>);
}

/// One caller's write `F` and where its answer goes.
pub(crate) struct Request<F, T, E> {
    f: F,
    out: Option<Result<T, E>>,
    reply: tokio::sync::oneshot::Sender<Result<T, E>>,
}

impl<F, T, E> Request<F, T, E>
where
    F: Fn(&Conn<'_>) -> Result<T, E> + Send,
{
    /// The request for `f`, answered on `reply`.
    pub(crate) fn new(f: F, reply: tokio::sync::oneshot::Sender<Result<T, E>>) -> Self {
        Request {
            f,
            out: None,
            reply,
        }
    }
}

impl<F, T, E> Pending for Request<F, T, E>
where
    F: Fn(&Conn<'_>) -> Result<T, E> + Send,
    T: Send,
    E: From<sql::Error> + Send,
{
    fn run(&mut self, conn: &Conn<'_>) -> bool {
        self.out = None;
        let f = &self.f;
        match std::panic::catch_unwind(AssertUnwindSafe(|| f(conn))) {
            Ok(r) => {
                let ok = r.is_ok();
                self.out = Some(r);
                ok
            }
            Err(_) => {
                tracing::error!("a batched write panicked; it was rolled back");
                false
            }
        }
    }

    fn answer(self: Box<Self>, committed: Result<(), String>) {
        let out = match (self.out, committed) {
            (Some(Err(e)), _) => Err(e),
            (Some(Ok(v)), Ok(())) => Ok(v),
            (Some(Ok(_)), Err(m)) => Err(E::from(sql::Error::Other(m))),
            (None, _) => Err(E::from(sql::Error::Other(
                "the write failed and was rolled back".into(),
            ))),
        };
        // The caller may have gone (its connection closed): nothing to answer.
        let _ = self.reply.send(out);
    }
}

/// Counters of the writer (tests, benchmarks): batches committed and writes in them.
#[derive(Debug, Default)]
pub struct GroupStats {
    /// Batches committed.
    pub batches: AtomicU64,
    /// Writes answered from committed batches (failed ones included).
    pub writes: AtomicU64,
    /// PostgreSQL round trips the writer waited for (its session's
    /// [`PgSession::round_trips`], every batch, committed or not); 0 on SQLite.
    pub pg_round_trips: AtomicU64,
}

/// A hook the writer calls just before each `COMMIT`, with the batch's size (tests).
#[cfg(test)]
pub(crate) type BeforeCommit = Arc<dyn Fn(usize) + Send + Sync>;

/// A hook the writer calls instead of its [`GATHER`] pause (tests).
#[cfg(test)]
pub(crate) type Gathering = Arc<dyn Fn() + Send + Sync>;

/// The writer thread's handle: where requests are queued.
pub(crate) struct GroupCommit {
    queue: Mutex<Sender<Box<dyn Pending>>>,
    /// Shared with the thread.
    pub(crate) stats: Arc<GroupStats>,
    #[cfg(test)]
    pub(crate) before_commit: Arc<Mutex<Option<BeforeCommit>>>,
    #[cfg(test)]
    pub(crate) gathering: Arc<Mutex<Option<Gathering>>>,
}

impl GroupCommit {
    /// Starts the writer thread over `backing`, bumping `version` after each commit. The
    /// thread ends when the handle is dropped (its queue closes).
    ///
    /// Errors: the thread cannot be started.
    pub(crate) fn start(
        backing: Arc<Backing>,
        version: Arc<AtomicU64>,
        changes: Option<Arc<crate::sandbox::store::db::Changes>>,
    ) -> std::io::Result<GroupCommit> {
        let (tx, rx) = std::sync::mpsc::channel::<Box<dyn Pending>>();
        let stats = Arc::new(GroupStats::default());
        #[cfg(test)]
        let before_commit: Arc<Mutex<Option<BeforeCommit>>> = Arc::new(Mutex::new(None));
        #[cfg(test)]
        let gathering: Arc<Mutex<Option<Gathering>>> = Arc::new(Mutex::new(None));
        let writer = Writer {
            backing,
            version,
            changes,
            stats: stats.clone(),
            pg: None,
            #[cfg(test)]
            before_commit: before_commit.clone(),
            #[cfg(test)]
            gathering: gathering.clone(),
        };
        std::thread::Builder::new()
            .name("sandbox-writer".into())
            .spawn(move || writer.run(rx))?;
        Ok(GroupCommit {
            queue: Mutex::new(tx),
            stats,
            #[cfg(test)]
            before_commit,
            #[cfg(test)]
            gathering,
        })
    }

    /// Queues `job`; `false` when the writer thread is gone.
    pub(crate) fn submit(&self, job: Box<dyn Pending>) -> bool {
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.send(job).is_ok()
    }

    /// Where a test queues a write from inside the writer thread (its [`Gathering`] hook).
    #[cfg(test)]
    pub(crate) fn sender(&self) -> Sender<Box<dyn Pending>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

struct Writer {
    backing: Arc<Backing>,
    version: Arc<AtomicU64>,
    /// Published after each batch, before its answers (SQLite).
    changes: Option<Arc<crate::sandbox::store::db::Changes>>,
    stats: Arc<GroupStats>,
    /// The writer's own PostgreSQL connection (reconnected when closed).
    pg: Option<PgSession>,
    #[cfg(test)]
    before_commit: Arc<Mutex<Option<BeforeCommit>>>,
    #[cfg(test)]
    gathering: Arc<Mutex<Option<Gathering>>>,
}

/// Moves the writes waiting in `rx` into `jobs`, up to [`MAX_BATCH`].
fn take_waiting(rx: &Receiver<Box<dyn Pending>>, jobs: &mut Vec<Box<dyn Pending>>) {
    while jobs.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(j) => jobs.push(j),
            Err(_) => break,
        }
    }
}

impl Writer {
    fn run(mut self, rx: Receiver<Box<dyn Pending>>) {
        let mut jobs: Vec<Box<dyn Pending>> = Vec::with_capacity(MAX_BATCH);
        let mut last = 0;
        while let Ok(first) = rx.recv() {
            jobs.push(first);
            take_waiting(&rx, &mut jobs);
            if last > 1 && jobs.len() < MAX_BATCH {
                self.gather();
                take_waiting(&rx, &mut jobs);
            }
            let n = jobs.len();
            last = n;
            let committed = self.batch(&mut jobs).map_err(|e| {
                tracing::warn!(error = %e, writes = n, "a batch of writes failed to commit");
                format!("the database failed: {e}")
            });
            if committed.is_ok() {
                self.version.fetch_add(1, Ordering::Release);
                self.stats.batches.fetch_add(1, Ordering::Relaxed);
                self.stats
                    .writes
                    .fetch_add(u64::try_from(n).unwrap_or(u64::MAX), Ordering::Relaxed);
            }
            for job in jobs.drain(..) {
                job.answer(committed.clone());
            }
        }
    }

    #[cfg(test)]
    fn before_commit(&self, n: usize) {
        let hook = self
            .before_commit
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(h) = hook {
            h(n);
        }
    }

    #[cfg(not(test))]
    fn before_commit(&self, _: usize) {}

    /// The pause for more writes ([`GATHER`]; tests: their hook instead).
    #[cfg(test)]
    fn gather(&self) {
        let hook = self
            .gathering
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match hook {
            Some(h) => h(),
            None => std::thread::sleep(GATHER),
        }
    }

    #[cfg(not(test))]
    fn gather(&self) {
        std::thread::sleep(GATHER);
    }

    /// [`Writer::batch`] on PostgreSQL, on the writer's session `s`: first pipelined
    /// ([`Writer::batch_pg_pipelined`]); when any write or the `COMMIT` of that fails, the
    /// batch is rolled back and run again one write at a time, each in its own savepoint
    /// ([`Writer::batch_pg_one_by_one`]), so a failing write still fails alone with its own
    /// error.
    fn batch_pg(&self, s: &PgSession, jobs: &mut [Box<dyn Pending>]) -> sql::Result<()> {
        s.set_pipelining(true);
        let first = self.batch_pg_pipelined(s, jobs);
        s.set_pipelining(false);
        if first {
            return Ok(());
        }
        s.discard_deferred();
        let _ = s.batch("ROLLBACK");
        self.batch_pg_one_by_one(s, jobs)
    }

    /// The batch with every write's statements pipelined: no savepoints; what a write runs
    /// through [`Conn::execute_pipelined`] (its `INSERT`s) travels with the next statement
    /// that needs an answer (the next write's first query, or the `COMMIT`), and the
    /// transaction's start with the first. A batch of writes that only insert costs two round
    /// trips (issue 23: the writer's round trips were the PostgreSQL writes' limit). Whether
    /// every write succeeded and the batch committed; else the transaction is left for the
    /// caller to roll back.
    fn batch_pg_pipelined(&self, s: &PgSession, jobs: &mut [Box<dyn Pending>]) -> bool {
        s.defer(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({PG_WRITE_LOCK})"
        ));
        let c = Conn::postgres(s);
        for job in jobs.iter_mut() {
            if !job.run(&c) {
                return false;
            }
        }
        self.before_commit(jobs.len());
        s.batch("UPDATE sandbox_data_version SET v = v + 1 WHERE id = 1; COMMIT")
            .is_ok()
    }

    /// The batch one write at a time, each in its own savepoint. The transaction's start
    /// (`BEGIN`, the write lock, the first savepoint) and each savepoint between writes
    /// ([`PgSession::defer`]) travel in the round trip of the next write's first statement;
    /// one more round trip commits: a write costs the round trips of its own statements.
    fn batch_pg_one_by_one(&self, s: &PgSession, jobs: &mut [Box<dyn Pending>]) -> sql::Result<()> {
        let mut run = || -> sql::Result<()> {
            s.defer(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock({PG_WRITE_LOCK}); {SAVEPOINT}"
            ));
            let c = Conn::postgres(s);
            let last = jobs.len().saturating_sub(1);
            for (i, job) in jobs.iter_mut().enumerate() {
                if !job.run(&c) {
                    s.batch("ROLLBACK TO group_write")?;
                }
                if i < last {
                    s.defer(&format!("RELEASE group_write; {SAVEPOINT}"));
                }
            }
            self.before_commit(jobs.len());
            s.batch(
                "RELEASE group_write; \
                 UPDATE sandbox_data_version SET v = v + 1 WHERE id = 1; COMMIT",
            )?;
            Ok(())
        };
        let out = run();
        if out.is_err() {
            // What was deferred never reached the server; what did is rolled back.
            s.discard_deferred();
            let _ = s.batch("ROLLBACK");
        }
        out
    }

    /// [`Writer::batch`] on SQLite, on the locked connection `conn`: without `savepoints`
    /// the writes run one after the other in one transaction (no statement of their own
    /// between them: issue 23) and the first that fails rolls the whole batch back (answer
    /// `false`, for the caller to run it again with them); with `savepoints` each write runs
    /// in its own savepoint, so a failing write rolls back only its own part and the rest
    /// commits (answer `true`).
    ///
    /// Errors: the database fails (the transaction is rolled back).
    fn batch_sqlite(
        &self,
        conn: &rusqlite::Connection,
        jobs: &mut [Box<dyn Pending>],
        savepoints: bool,
    ) -> sql::Result<bool> {
        // Both through rusqlite's statement cache: `execute_batch` parsed them again for every
        // batch (issue 23).
        conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
        let mut run = || -> sql::Result<bool> {
            let keys = self
                .changes
                .as_deref()
                .map(crate::sandbox::store::db::Changes::dup_keys);
            let c = Conn::sqlite(conn).with_dup_keys(keys);
            for job in jobs.iter_mut() {
                if !savepoints {
                    if !job.run(&c) {
                        conn.execute_batch("ROLLBACK")?;
                        return Ok(false);
                    }
                    continue;
                }
                c.execute(SAVEPOINT, [])?;
                if job.run(&c) {
                    c.execute("RELEASE group_write", [])?;
                } else {
                    c.execute("ROLLBACK TO group_write", [])?;
                    c.execute("RELEASE group_write", [])?;
                }
            }
            self.before_commit(jobs.len());
            conn.prepare_cached("COMMIT")?.execute([])?;
            Ok(true)
        };
        let out = run();
        if out.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        out
    }

    /// Runs `jobs` in one transaction and commits; a failing write rolls back only its own
    /// part (SQLite: [`Writer::batch_sqlite`]; PostgreSQL: [`Writer::batch_pg`]).
    fn batch(&mut self, jobs: &mut [Box<dyn Pending>]) -> sql::Result<()> {
        let backing = self.backing.clone();
        match &*backing {
            Backing::Sqlite(m) => {
                let conn = Db::lock_sqlite(m);
                let mut run = || -> sql::Result<()> {
                    if self.batch_sqlite(&conn, jobs, false)? {
                        return Ok(());
                    }
                    self.batch_sqlite(&conn, jobs, true).map(|_| ())
                };
                let out = run();
                // Before the answers, still holding the connection.
                if let Some(c) = &self.changes {
                    c.settle(&conn);
                }
                out
            }
            Backing::Postgres { url, .. } => {
                let mut pg = self.pg.take();
                let out = match PgSession::live(&mut pg, url) {
                    Ok(s) => {
                        let before = s.round_trips();
                        let out = self.batch_pg(s, jobs);
                        self.stats
                            .pg_round_trips
                            .fetch_add(s.round_trips().saturating_sub(before), Ordering::Relaxed);
                        out
                    }
                    Err(e) => Err(e),
                };
                self.pg = pg;
                out
            }
        }
    }
}
