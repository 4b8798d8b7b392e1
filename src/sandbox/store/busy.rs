//! How the sandbox's SQLite connections wait for a lock another connection of the same file
//! holds (issue 20, the write tail).
//!
//! A database file has a write connection and up to [`super::db::SQLITE_READERS`] read
//! connections ([`super::db::Db`]), and two more:
//! the `X-Request-ID` flusher ([`super::replay`], one transaction every 250 ms) and the
//! checkpointer ([`super::checkpoint`]). When one of them holds the write lock, SQLite calls
//! the others' busy handler. Its own (`busy_timeout`) sleeps 1, 2, 5, 10, 15, 20, 25… ms
//! between attempts, so a consent or payment creation that met the flusher's transaction
//! (about 1 % of writes: the flusher's lock held for ~1–2 ms every 250 ms) waited at least
//! 1 ms and often 3–8 ms for a lock freed after a few hundred microseconds: the p99 of the
//! writes in `benches/scale.rs`, not the size of the state.
//!
//! [`wait_for_locks`] installs a handler that retries every [`FIRST_STEP`] for the first
//! [`SHORT_PHASE`], then every millisecond, and gives up (SQLite answers `SQLITE_BUSY`, the
//! store a 503) after [`LOCK_TIMEOUT`], as the 5 s `busy_timeout` did. Neither document
//! speaks of it; it is how a server keeps its tail short on a single-writer store.

use std::time::{Duration, Instant};

use rusqlite::Connection;

/// Longest wait for a lock before SQLite answers `SQLITE_BUSY` (5 s, as before).
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// Time between attempts during [`SHORT_PHASE`] (25 µs; Linux's timer slack makes it
/// 75–100 µs in practice).
pub const FIRST_STEP: Duration = Duration::from_micros(25);

/// How long a wait retries every [`FIRST_STEP`] before it falls back to 1 ms steps (5 ms:
/// longer than any of the sandbox's own transactions but a batch load).
pub const SHORT_PHASE: Duration = Duration::from_millis(5);

/// The pause before attempt number `attempt` of a wait that has lasted `waited`, or `None`
/// when the wait is over ([`LOCK_TIMEOUT`]).
pub fn next_pause(waited: Duration) -> Option<Duration> {
    if waited >= LOCK_TIMEOUT {
        None
    } else if waited < SHORT_PHASE {
        Some(FIRST_STEP)
    } else {
        Some(Duration::from_millis(1))
    }
}

/// Installs the busy handler on `conn` (replacing `busy_timeout`).
///
/// Errors: SQLite refuses the handler (does not happen on an open connection).
pub fn wait_for_locks(conn: &mut Connection) -> rusqlite::Result<()> {
    install(conn, || {})
}

/// [`wait_for_locks`], calling `on_attempt` before each attempt's pause.
fn install(conn: &mut Connection, on_attempt: impl Fn() + Send + 'static) -> rusqlite::Result<()> {
    let mut started = Instant::now();
    conn.busy_handler(Some(move |attempt: i32| {
        if attempt == 0 {
            started = Instant::now();
        }
        on_attempt();
        match next_pause(started.elapsed()) {
            Some(pause) => {
                std::thread::sleep(pause);
                true
            }
            None => false,
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn the_pauses_are_short_first_then_one_millisecond_until_the_timeout() {
        assert_eq!(next_pause(Duration::ZERO), Some(FIRST_STEP));
        assert_eq!(
            next_pause(SHORT_PHASE - Duration::from_micros(1)),
            Some(FIRST_STEP)
        );
        assert_eq!(next_pause(SHORT_PHASE), Some(Duration::from_millis(1)));
        assert_eq!(
            next_pause(LOCK_TIMEOUT - Duration::from_micros(1)),
            Some(Duration::from_millis(1))
        );
        assert_eq!(next_pause(LOCK_TIMEOUT), None);
        // SQLite's own first pause is 1 ms: ours must be well under it.
        assert!(FIRST_STEP < Duration::from_millis(1) / 10);
    }

    #[test]
    fn a_writer_waits_for_another_connections_lock_through_the_handler_and_then_commits() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("busy.sqlite3");
        let holder = Connection::open(&file).unwrap();
        holder
            .execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t (x INTEGER);")
            .unwrap();
        let mut waiter = Connection::open(&file).unwrap();
        let attempts = std::sync::Arc::new(AtomicU64::new(0));
        let counted = attempts.clone();
        install(&mut waiter, move || {
            counted.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        holder
            .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1);")
            .unwrap();
        let writer = std::thread::spawn(move || {
            waiter.execute("INSERT INTO t VALUES (2)", []).unwrap();
        });
        // The waiter is inside our handler while the lock is held (without a handler its
        // INSERT fails at once with SQLITE_BUSY and the thread ends).
        while attempts.load(Ordering::Relaxed) == 0 && !writer.is_finished() {
            std::thread::yield_now();
        }
        holder.execute_batch("COMMIT").unwrap();
        writer
            .join()
            .expect("the waiting INSERT succeeds after the lock is freed");
        assert!(attempts.load(Ordering::Relaxed) > 0);
        let n: i64 = holder
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 2);
    }
}
