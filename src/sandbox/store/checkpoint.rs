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
//! own, at the lowest CPU priority of the process (nice 19: on two cores it would otherwise
//! take the core a request needs), does it:
//!
//! - once the writes pause: [`Checkpoints::pause`] after the last commit (a commit bumps the
//!   [`Db`]'s data version, which the thread watches) a `PASSIVE` checkpoint copies what it
//!   can without waiting for anyone (writers go on; the next writer after a complete
//!   checkpoint starts the log again from its beginning, so the `-wal` file stops growing).
//!   A page written by many commits (the last leaf of an index) is copied once;
//! - under writes that never pause, at the latest [`Checkpoints::interval`] after the first
//!   commit the log holds, the same `PASSIVE` checkpoint;
//! - when the log still holds more than [`Checkpoints::max_wal_pages`] pages after that (a
//!   reader kept the log from being restarted, or writes outran the checkpoints), a
//!   `TRUNCATE` checkpoint: it waits (busy timeout 5 s) for readers and writers, copies
//!   everything and empties the `-wal` file, so the log cannot grow without bound.
//!
//! Errors of a checkpoint are logged (`warn`), and a checkpoint that failed or copied only
//! part of the log is tried again a [`Checkpoints::pause`] later (or at the interval),
//! whether or not another commit comes: the data is safe in the log meanwhile, and a failing database is answered by the requests themselves
//! (503). The thread ends when its [`Checkpointer`] is dropped (with the [`Db`]).
//!
//! [`Db`]: crate::sandbox::store::db::Db

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

/// When the checkpointer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoints {
    /// Quiet time after the last commit before a `PASSIVE` checkpoint (default 200 ms).
    pub pause: Duration,
    /// Longest time a commit waits in the log for its checkpoint when the writes never pause
    /// (default 5 s).
    pub interval: Duration,
    /// Pages (of 4 KiB by default) the log may hold after a `PASSIVE` checkpoint before a
    /// `TRUNCATE` checkpoint empties it (default 16,384: 64 MiB). Also the size the `-wal`
    /// file is cut back to when the log starts again (`journal_size_limit`).
    pub max_wal_pages: u32,
}

impl Default for Checkpoints {
    fn default() -> Self {
        Checkpoints {
            pause: Duration::from_millis(200),
            interval: Duration::from_secs(5),
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
    /// Opens a connection of its own to `file` and starts the thread, which watches
    /// `commits` (bumped after every commit of the request connection) to see when the
    /// writes pause.
    ///
    /// Errors: the connection cannot be opened or set up, or the thread cannot start.
    pub fn start(
        file: &Path,
        policy: Checkpoints,
        commits: Arc<AtomicU64>,
    ) -> Result<Self, rusqlite::Error> {
        let mut conn = Connection::open(file)?;
        crate::sandbox::store::busy::wait_for_locks(&mut conn)?;
        // This connection's own commits (none) and its checkpoints: synced like the others.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let (orders, rx) = mpsc::channel::<Order>();
        let file: PathBuf = file.to_path_buf();
        // The data version is read here, not when the thread first runs: on a busy machine
        // the new thread may first run after commits the caller made meanwhile, and a
        // version read then would take them for checkpointed (they would wait for the next
        // commit, which may never come).
        let seen = commits.load(Ordering::Acquire);
        let thread = std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || run(&conn, &file, policy, &rx, &commits, seen))
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

/// The thread: a checkpoint once the commits pause (or at the latest an interval after the
/// first one the log holds), and on each order, until the sender is dropped. `seen` is the
/// data version when [`Checkpointer::start`] was called: commits after it wait for a
/// checkpoint even when they came before the thread first ran.
fn run(
    conn: &Connection,
    file: &Path,
    policy: Checkpoints,
    orders: &mpsc::Receiver<Order>,
    commits: &AtomicU64,
    seen: u64,
) {
    #[cfg(test)]
    tests::held_start(file);
    lower_priority();
    // While commits wait for their checkpoint the thread looks at the counter often enough
    // to see the pause; with nothing to do it sleeps (the first commit is then seen at most
    // `idle` late, which only delays its checkpoint).
    let busy_tick = (policy.pause.min(policy.interval) / 4)
        .clamp(Duration::from_millis(1), Duration::from_millis(50));
    let idle = policy.interval.min(Duration::from_secs(1));
    let mut watch = Watch::new(seen, Instant::now());
    loop {
        let wait = if watch.waiting() { busy_tick } else { idle };
        let reply = match orders.recv_timeout(wait) {
            Ok(reply) => Some(reply),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let due = watch.look(commits.load(Ordering::Acquire), Instant::now(), &policy);
        if reply.is_none() && !due {
            continue;
        }
        // Commits made while it runs are seen at the next look and wait for the next one.
        let started = Instant::now();
        let done = checkpoint(conn, policy.max_wal_pages);
        watch.checkpointed(
            matches!(&done, Ok(s) if s.checkpointed_pages >= s.log_pages),
            Instant::now(),
        );
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

/// What the thread knows of the commits: the data version it last saw, when it last saw it
/// change, and since when commits wait for a checkpoint.
#[derive(Debug, Clone, Copy)]
struct Watch {
    seen: u64,
    last_commit: Instant,
    waiting_since: Option<Instant>,
}

impl Watch {
    fn new(version: u64, now: Instant) -> Self {
        Watch {
            seen: version,
            last_commit: now,
            waiting_since: None,
        }
    }

    /// Whether commits wait for a checkpoint.
    fn waiting(&self) -> bool {
        self.waiting_since.is_some()
    }

    /// Takes in the data version read at `now`; true when a checkpoint is due: commits wait
    /// and none came for [`Checkpoints::pause`], or the first of them has waited
    /// [`Checkpoints::interval`].
    fn look(&mut self, version: u64, now: Instant, policy: &Checkpoints) -> bool {
        if version != self.seen {
            self.seen = version;
            self.last_commit = now;
            self.waiting_since.get_or_insert(now);
        }
        let Some(since) = self.waiting_since else {
            return false;
        };
        now.duration_since(self.last_commit) >= policy.pause
            || now.duration_since(since) >= policy.interval
    }

    /// A checkpoint ended at `now`. When it copied the whole log (`complete`), nothing waits
    /// any more. When it failed or copied only part of the log (a reader's snapshot held
    /// frames back, or the file could not be written), the log still waits: the next try is
    /// due as after a commit at `now` ([`Checkpoints::pause`] later, or the interval), not
    /// only after the next commit, which an idle sandbox may never make.
    fn checkpointed(&mut self, complete: bool, now: Instant) {
        if complete {
            self.waiting_since = None;
        } else {
            self.last_commit = now;
            self.waiting_since = Some(now);
        }
    }
}

/// Puts the calling thread at the lowest CPU priority (nice 19; on Linux the nice value is
/// per thread, `setpriority(2)` with the thread id). Failing to is logged and harmless.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 19) {
        tracing::debug!(error = %e, "the checkpointer keeps its CPU priority");
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// Checkpointer threads held before their first look, by file (tests run in parallel).
    static HELD: Mutex<Option<HashMap<PathBuf, mpsc::Receiver<()>>>> = Mutex::new(None);

    /// Called by a new checkpointer thread first: waits while a test holds its file.
    pub(super) fn held_start(file: &Path) {
        let held = HELD
            .lock()
            .unwrap()
            .get_or_insert_with(HashMap::new)
            .remove(file);
        if let Some(release) = held {
            let _ = release.recv();
        }
    }

    /// Commits made after [`Checkpointer::start`] but before its thread first ran (a busy
    /// machine) wait for a checkpoint like any other: they are copied once the commits
    /// pause, with no later commit (the test `the_checkpointer_runs_after_a_pause_and_at_its_interval`
    /// failed now and then under load for this).
    #[test]
    fn commits_before_the_thread_first_runs_get_their_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.sqlite3");
        let writer = Connection::open(&file).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; \
                 CREATE TABLE t (x BLOB NOT NULL)",
            )
            .unwrap();
        let commits = Arc::new(AtomicU64::new(0));
        let (release, held) = mpsc::channel();
        HELD.lock()
            .unwrap()
            .get_or_insert_with(HashMap::new)
            .insert(file.clone(), held);
        let policy = Checkpoints {
            pause: Duration::from_millis(20),
            interval: Duration::from_secs(3600),
            max_wal_pages: 1 << 20,
        };
        let c = Checkpointer::start(&file, policy, commits.clone()).unwrap();
        let before = std::fs::metadata(&file).unwrap().len();
        for _ in 0..20 {
            writer
                .execute("INSERT INTO t VALUES (zeroblob(4000))", [])
                .unwrap();
            commits.fetch_add(1, Ordering::Release);
        }
        release.send(()).unwrap();
        // Not a speed check: the deadline only turns a checkpointer that never runs into a
        // failure instead of a hang.
        let deadline = Instant::now() + Duration::from_secs(120);
        while std::fs::metadata(&file).unwrap().len() < before + 20 * 4000 {
            assert!(
                Instant::now() < deadline,
                "the commits made before the thread's first look were never checkpointed"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(c);
    }

    fn policy() -> Checkpoints {
        Checkpoints {
            pause: Duration::from_millis(200),
            interval: Duration::from_secs(5),
            max_wal_pages: 16_384,
        }
    }

    /// Issue 20 (the scale benchmark's tail): no checkpoint while the commits go on, one once
    /// they pause for [`Checkpoints::pause`].
    #[test]
    fn a_checkpoint_waits_for_a_pause_in_the_commits() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut w = Watch::new(7, t0);
        assert!(!w.look(7, ms(1000), &policy()), "no commit: nothing to do");
        assert!(!w.waiting());
        // A commit every 50 ms for 2 s: never due.
        for (i, t) in (1000..3000).step_by(50).enumerate() {
            assert!(!w.look(8 + i as u64, ms(t), &policy()), "due at {t} ms");
        }
        assert!(w.waiting());
        // The last commit was seen at 2950 ms: due 200 ms later, not before.
        assert!(!w.look(47, ms(3100), &policy()));
        assert!(w.look(47, ms(3150), &policy()));
        w.checkpointed(true, ms(3151));
        assert!(!w.waiting());
        assert!(
            !w.look(47, ms(9000), &policy()),
            "nothing new after the checkpoint"
        );
    }

    /// A checkpoint that failed or copied only part of the log is tried again a pause later
    /// without waiting for another commit (an idle sandbox makes none); a complete one ends
    /// the wait.
    #[test]
    fn an_incomplete_checkpoint_is_tried_again_without_a_new_commit() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut w = Watch::new(1, t0);
        assert!(!w.look(2, ms(100), &policy()));
        assert!(w.look(2, ms(300), &policy()), "a pause after the commit");
        w.checkpointed(false, ms(310));
        assert!(w.waiting(), "the log still waits for its checkpoint");
        assert!(!w.look(2, ms(400), &policy()), "not before a pause");
        assert!(w.look(2, ms(510), &policy()), "tried again, no new commit");
        w.checkpointed(true, ms(520));
        assert!(!w.waiting());
        assert!(
            !w.look(2, ms(9000), &policy()),
            "nothing waits after a complete one"
        );
    }

    /// Commits that never pause still get their checkpoint [`Checkpoints::interval`] after
    /// the first of them was seen, so the log stays bounded under unbroken writes.
    #[test]
    fn unbroken_commits_get_a_checkpoint_at_the_interval() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut w = Watch::new(0, t0);
        let mut due_at = None;
        for (i, t) in (10..20_000).step_by(10).enumerate() {
            if w.look(1 + i as u64, ms(t), &policy()) {
                due_at = Some(t);
                break;
            }
        }
        assert_eq!(
            due_at,
            Some(5010),
            "5 s after the first commit (seen at 10 ms)"
        );
    }

    /// The checkpointer thread runs at nice 19, so on a machine with few cores it does not
    /// take the core a request needs.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_checkpointer_thread_runs_at_the_lowest_priority() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.sqlite3");
        drop(Connection::open(&file).unwrap());
        let c = Checkpointer::start(&file, policy(), Arc::new(AtomicU64::new(0))).unwrap();
        // The order is answered by the thread after it lowered its priority.
        c.now().unwrap();
        let mut nice = None;
        for task in std::fs::read_dir("/proc/self/task").unwrap() {
            let task = task.unwrap().path();
            let name = std::fs::read_to_string(task.join("comm")).unwrap_or_default();
            if name.trim() == "sqlite-checkpoi" {
                let stat = std::fs::read_to_string(task.join("stat")).unwrap();
                // Fields after the command's closing parenthesis: state is field 3, nice 19.
                let after = &stat[stat.rfind(')').unwrap() + 2..];
                nice = Some(after.split(' ').nth(16).unwrap().parse::<i32>().unwrap());
            }
        }
        assert_eq!(nice, Some(19), "the sqlite-checkpoint thread's nice value");
    }
}
