//! Replay protection: a TPP may use an `X-Request-ID` once (interface document, header
//! table: X-Request-ID "unique per call"). The document's signature scheme does not sign the
//! request target, so a captured signed request could otherwise be sent again, to another
//! path or with a query appended, for as long as its `Date` is within the 60-second window
//! (Authentication 4).
//!
//! [`ReplayGuard::check`] runs after the signature has been verified (so only a TPP's own
//! signed requests use memory) on every `/v1` request. A second request of the same TPP
//! (certificate) with an `X-Request-ID` already seen is refused with 400 `FORMAT_ERROR`
//! naming the header (the Berlin Group file has no code of its own for a repeated request
//! id; `FORMAT_ERROR` is its 400 code for a header that does not meet the requirements).
//!
//! How long an id is remembered: until its request could no longer pass the Date check,
//! i.e. `Date + max skew` (+1 s for the one-second resolution of `Date`), or `now + 2 × max
//! skew` when the request has no `Date` (a policy without `require_date`). So an id is
//! refused for at least the whole Date window, and memory holds at most the ids of the last
//! two minutes. That time left is computed once, at the sandbox clock of the request, and
//! then counted on the monotonic clock ([`std::time::Instant`]), never on the sandbox
//! clock: issue 20, finding 5, was a lesson that moved the sandbox clock 181 days ahead and
//! back (initialize), after which ids stamped with the future expiry sat at the head of
//! their queue, nothing behind them was dropped, and every TPP got 429 once the guard was
//! full. `POST /v1/sandbox/initialize` forgets the calling TPP's ids
//! ([`ReplayGuard::forget_tpp`]).
//!
//! Memory bound: at most [`MAX_REMEMBERED`] ids (about 64 bytes each). When full even after
//! dropping expired ids, new requests are refused with 429 `ACCESS_EXCEEDED` rather than
//! forgetting ids (which would let replays through); at 60 s per id that is about 35,000
//! requests per second sustained.
//!
//! Restarts: with a database file, ids (with their real-time expiry, Unix seconds) are also
//! written to the table `replay_request_ids`
//! of the same file by a background thread every [`FLUSH_INTERVAL`] (one transaction per
//! batch, on a connection of its own, so the request path never waits for SQLite), and
//! loaded at start. A crash loses at most the last interval's ids; an in-memory sandbox
//! keeps them in memory only.
//!
//! Many instances on one PostgreSQL database (issue 21, `sandbox serve --db postgres://…`):
//! the ids are in the database instead of memory ([`ReplayGuard::shared`],
//! [`store::SharedIds`]): each check is one `INSERT … ON CONFLICT` that the table's primary
//! key decides for every instance at once, so a request accepted by one instance is refused
//! as a replay by another. Expiry there is the database server's real time; the memory bound
//! does not apply (the table is purged through its `expires` index). When the database
//! cannot answer, the request is refused with 503 (never let through unchecked).
//!
//! Load benchmarks that replay one signed request turn the check off with
//! [`crate::sandbox::SandboxConfig::allow_replays`] (`sandbox serve --allow-replays`).

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::sandbox::errors::ApiError;
use crate::sandbox::model::TppId;
use crate::sandbox::store::replay as store;
use crate::xs2a::error::MessageCode;

/// Most ids remembered at once (all TPPs together).
pub const MAX_REMEMBERED: usize = 1 << 21;

/// How often remembered ids are written to the database file.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(250);

/// Most ids waiting to be written; beyond it new ids are kept in memory only.
const MAX_PENDING: usize = 200_000;

const SHARDS: usize = 16;

/// An id's key: two independent hashes of (TPP, `X-Request-ID`).
type Key = [u64; 2];

/// Milliseconds since the guard was made, on the monotonic clock ([`Instant`]).
type Mono = u64;

/// A remembered id: when it may be forgotten (monotonic), and whose it is (a hash of the
/// TPP, for [`ReplayGuard::forget_tpp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    until: Mono,
    tpp: u64,
}

#[derive(Default)]
struct Shard {
    seen: HashMap<Key, Seen, foldhash::fast::FixedState>,
    /// Keys in the order they were remembered, with their deadline, to drop expired ones.
    /// Deadlines are at most `2 × max skew + 2` s after their insertion on the monotonic
    /// clock, so an entry at the front holds later ones back by at most that long.
    order: VecDeque<(Mono, Key)>,
}

impl Shard {
    /// Drops the ids whose deadline passed; returns how many.
    fn purge(&mut self, now: Mono) -> usize {
        let mut dropped = 0;
        while let Some(&(until, key)) = self.order.front() {
            if until > now {
                break;
            }
            self.order.pop_front();
            if self.seen.get(&key).is_some_and(|s| s.until == until) {
                self.seen.remove(&key);
                dropped += 1;
            }
        }
        dropped
    }
}

/// A remembered id waiting to be written to the database.
struct Pending {
    tpp: String,
    request_id: String,
    /// Wall-clock expiry (real time, Unix seconds; not the sandbox clock).
    expires: u32,
}

/// What the flusher thread writes next.
#[derive(Default)]
struct Queue {
    ids: Vec<Pending>,
    /// TPPs whose persisted ids are to be deleted ([`ReplayGuard::forget_tpp`]).
    forget: Vec<String>,
    /// Delete every persisted id ([`ReplayGuard::clear`]).
    clear: bool,
}

/// The ids seen per TPP (see the module documentation).
pub struct ReplayGuard {
    shards: Vec<Mutex<Shard>>,
    hash: [foldhash::fast::RandomState; 2],
    /// Largest accepted |Date − now|, seconds.
    max_skew: u64,
    /// Most ids remembered at once ([`MAX_REMEMBERED`] unless made with
    /// [`ReplayGuard::with_capacity`]).
    capacity: usize,
    /// Ids remembered now, all shards together.
    count: AtomicUsize,
    /// The origin of [`Mono`] times.
    start: Instant,
    pending: Option<Arc<Mutex<Queue>>>,
    /// Keeps the flusher thread alive; it ends when the guard is dropped.
    _alive: Option<Arc<()>>,
    /// On PostgreSQL: the ids of every instance, in the database (memory is not used).
    shared: Option<store::SharedIds>,
}

impl std::fmt::Debug for ReplayGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayGuard")
            .field("max_skew", &self.max_skew)
            .field("capacity", &self.capacity)
            .field("persistent", &self.pending.is_some())
            .field("shared", &self.shared.is_some())
            .finish()
    }
}

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The TPP already sent this `X-Request-ID`.
    Replay,
    /// The guard's capacity ([`MAX_REMEMBERED`]) is reached and none of its ids has expired.
    Full,
    /// The database holding the ids of every instance ([`ReplayGuard::shared`]) did not
    /// answer, with its message.
    Unavailable(String),
}

impl Refusal {
    /// The Berlin Group error answered: 400 `FORMAT_ERROR` or 429 `ACCESS_EXCEEDED`.
    pub fn to_error(&self, request_id: &str) -> ApiError {
        match self {
            Refusal::Replay => ApiError::format(format!(
                "the X-Request-ID {request_id:?} was already used by this TPP; every request \
                 needs a new X-Request-ID (a repeated signed request is refused as a replay)"
            )),
            Refusal::Full => ApiError::new(
                MessageCode::AccessExceeded,
                format!(
                    "too many requests: the sandbox remembers at most {MAX_REMEMBERED} \
                     X-Request-IDs of the last minute; try again shortly"
                ),
            ),
            Refusal::Unavailable(e) => {
                tracing::error!(error = %e, "checking the X-Request-ID in the database failed");
                ApiError::storage(
                    "the sandbox could not check the X-Request-ID against its database; \
                     try again shortly",
                )
            }
        }
    }
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn millis(d: Duration) -> Mono {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl ReplayGuard {
    /// A guard in memory only; ids are remembered `max_skew` seconds past their `Date`.
    pub fn in_memory(max_skew: u64) -> Self {
        Self::with_capacity(max_skew, MAX_REMEMBERED)
    }

    /// [`ReplayGuard::in_memory`] remembering at most `capacity` ids (tests use a small one).
    pub fn with_capacity(max_skew: u64, capacity: usize) -> Self {
        ReplayGuard {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            hash: Default::default(),
            max_skew,
            capacity,
            count: AtomicUsize::new(0),
            start: Instant::now(),
            pending: None,
            _alive: None,
            shared: None,
        }
    }

    /// A guard whose ids are those of every instance on the PostgreSQL database `url` (see
    /// the module documentation); ids are remembered as long as [`ReplayGuard::check`]
    /// computes, in the database's real time.
    ///
    /// Errors: the database cannot be reached or the table created.
    pub fn shared(url: &str, max_skew: u64) -> crate::sandbox::store::sql::Result<Self> {
        Ok(ReplayGuard {
            shared: Some(store::SharedIds::open(url)?),
            ..Self::with_capacity(max_skew, 0)
        })
    }

    /// A guard that also keeps its ids in the database `file` (table `replay_request_ids`,
    /// real-time expiries), loading those not expired now.
    ///
    /// Errors: the file cannot be opened or the table created or read.
    pub fn persistent(file: &Path, max_skew: u64) -> rusqlite::Result<Self> {
        let guard = Self::in_memory(max_skew);
        let conn = store::open(file)?;
        let wall = secs(SystemTime::now());
        let now = guard.mono_now();
        for (tpp, id, expires) in store::load(&conn, u32::try_from(wall).unwrap_or(u32::MAX))? {
            let left = u64::from(expires).saturating_sub(wall);
            let key = guard.key(&tpp, &id);
            let seen = Seen {
                until: now.saturating_add(left.saturating_mul(1000)),
                tpp: guard.tpp_hash(&tpp),
            };
            let mut shard = guard.shard(&key);
            if shard.seen.insert(key, seen).is_none() {
                guard.count.fetch_add(1, Ordering::Relaxed);
            }
            shard.order.push_back((seen.until, key));
        }
        for s in &guard.shards {
            let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
            s.order.make_contiguous().sort_by_key(|(e, _)| *e);
        }
        let pending = Arc::new(Mutex::new(Queue::default()));
        let alive = Arc::new(());
        spawn_flusher(
            file.to_path_buf(),
            conn,
            Arc::downgrade(&pending),
            Arc::downgrade(&alive),
        );
        Ok(ReplayGuard {
            pending: Some(pending),
            _alive: Some(alive),
            ..guard
        })
    }

    fn mono_now(&self) -> Mono {
        millis(self.start.elapsed())
    }

    fn key(&self, tpp: &str, request_id: &str) -> Key {
        [
            self.hash[0].hash_one((tpp, request_id)),
            self.hash[1].hash_one((tpp, request_id)),
        ]
    }

    fn tpp_hash(&self, tpp: &str) -> u64 {
        self.hash[0].hash_one(tpp)
    }

    fn shard(&self, key: &Key) -> std::sync::MutexGuard<'_, Shard> {
        self.shards[(key[0] as usize) % SHARDS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn lock(s: &Mutex<Shard>) -> std::sync::MutexGuard<'_, Shard> {
        s.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers `request_id` of `tpp`, or says why the request is refused. `date` is the
    /// request's `Date` as the signature check accepted it
    /// ([`crate::signing::VerifiedRequest::date`]; `None` without one) and `now` the sandbox
    /// clock: the id is kept for as long as the request's `Date` stays within the window at
    /// that clock (`Date + max skew + 1` − `now`, at least 1 s, at most `2 × max skew + 2`
    /// s; `now + 2 × max skew + 1` without a `Date`), counted on the monotonic clock, so a
    /// later jump of the sandbox clock (either way) never keeps ids longer.
    pub fn check(
        &self,
        tpp: &TppId,
        request_id: &str,
        date: Option<SystemTime>,
        now: SystemTime,
    ) -> Result<(), Refusal> {
        self.check_at(tpp, request_id, date, now, self.start.elapsed())
    }

    /// [`ReplayGuard::check`] with the monotonic time given as the time since the guard was
    /// made (`elapsed`), for tests that move it.
    pub fn check_at(
        &self,
        tpp: &TppId,
        request_id: &str,
        date: Option<SystemTime>,
        now: SystemTime,
        elapsed: Duration,
    ) -> Result<(), Refusal> {
        let mono = millis(elapsed);
        let now_s = secs(now);
        let longest = 2 * self.max_skew + 2;
        let expires = match date {
            Some(d) => secs(d).saturating_add(self.max_skew + 1),
            None => now_s.saturating_add(2 * self.max_skew + 1),
        };
        let left = expires.saturating_sub(now_s).clamp(1, longest);
        if let Some(shared) = &self.shared {
            return match shared.remember(&tpp.0, request_id, left) {
                Ok(true) => Ok(()),
                Ok(false) => Err(Refusal::Replay),
                Err(e) => Err(Refusal::Unavailable(e.to_string())),
            };
        }
        let seen = Seen {
            until: mono.saturating_add(left.saturating_mul(1000)),
            tpp: self.tpp_hash(&tpp.0),
        };
        let key = self.key(&tpp.0, request_id);
        {
            let mut shard = self.shard(&key);
            let dropped = shard.purge(mono);
            self.count.fetch_sub(dropped, Ordering::Relaxed);
            if shard.seen.get(&key).is_some_and(|s| s.until > mono) {
                return Err(Refusal::Replay);
            }
            if self.count.load(Ordering::Relaxed) >= self.capacity {
                drop(shard);
                self.purge_all(mono);
                shard = self.shard(&key);
                if self.count.load(Ordering::Relaxed) >= self.capacity {
                    return Err(Refusal::Full);
                }
            }
            if shard.seen.insert(key, seen).is_none() {
                self.count.fetch_add(1, Ordering::Relaxed);
            }
            shard.order.push_back((seen.until, key));
        }
        if let Some(p) = &self.pending {
            let mut p = p.lock().unwrap_or_else(|p| p.into_inner());
            if p.ids.len() < MAX_PENDING {
                let wall = secs(SystemTime::now()).saturating_add(left);
                p.ids.push(Pending {
                    tpp: tpp.0.to_string(),
                    request_id: request_id.to_string(),
                    expires: u32::try_from(wall).unwrap_or(u32::MAX),
                });
            }
        }
        Ok(())
    }

    /// Drops the expired ids of every shard.
    fn purge_all(&self, mono: Mono) {
        for s in &self.shards {
            let dropped = Self::lock(s).purge(mono);
            self.count.fetch_sub(dropped, Ordering::Relaxed);
        }
    }

    /// Forgets every id of `tpp` (in memory and, with a database file, there too): `POST
    /// /v1/sandbox/initialize` of that TPP. Other TPPs' ids stay, so their captured requests
    /// still cannot be replayed.
    pub fn forget_tpp(&self, tpp: &TppId) {
        if let Some(shared) = &self.shared
            && let Err(e) = shared.forget(Some(&tpp.0))
        {
            tracing::error!(error = %e, "forgetting the TPP's X-Request-IDs failed");
        }
        let h = self.tpp_hash(&tpp.0);
        for s in &self.shards {
            let mut s = Self::lock(s);
            let before = s.seen.len();
            s.seen.retain(|_, v| v.tpp != h);
            let dropped = before - s.seen.len();
            if s.seen.is_empty() {
                s.order.clear();
            }
            self.count.fetch_sub(dropped, Ordering::Relaxed);
        }
        if let Some(p) = &self.pending {
            let mut p = p.lock().unwrap_or_else(|p| p.into_inner());
            p.ids.retain(|i| *i.tpp != *tpp.0);
            p.forget.push(tpp.0.to_string());
        }
    }

    /// Forgets every id of every TPP (a reset of the whole sandbox).
    pub fn clear(&self) {
        if let Some(shared) = &self.shared
            && let Err(e) = shared.forget(None)
        {
            tracing::error!(error = %e, "forgetting the X-Request-IDs failed");
        }
        for s in &self.shards {
            let mut s = Self::lock(s);
            let dropped = s.seen.len();
            s.seen.clear();
            s.order.clear();
            self.count.fetch_sub(dropped, Ordering::Relaxed);
        }
        if let Some(p) = &self.pending {
            let mut p = p.lock().unwrap_or_else(|p| p.into_inner());
            p.ids.clear();
            p.forget.clear();
            p.clear = true;
        }
    }

    /// How many ids are remembered (expired ones not yet dropped included).
    pub fn len(&self) -> usize {
        if let Some(shared) = &self.shared {
            return shared.len().unwrap_or(0);
        }
        self.shards.iter().map(|s| Self::lock(s).seen.len()).sum()
    }

    /// Whether no id is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn flush(conn: &mut rusqlite::Connection, q: &Queue) -> rusqlite::Result<()> {
    if q.clear {
        store::forget(conn, None)?;
    }
    for tpp in &q.forget {
        store::forget(conn, Some(tpp))?;
    }
    if q.ids.is_empty() {
        return Ok(());
    }
    // Every id of the batch was remembered with a real-time expiry after the real time it
    // was seen, so rows expiring before the batch's earliest expiry (less a margin) are
    // expired.
    let min = q.ids.iter().map(|p| p.expires).min();
    store::save(
        conn,
        q.ids
            .iter()
            .map(|p| (p.tpp.as_str(), p.request_id.as_str(), p.expires)),
        min.map(|m| m.saturating_sub(2)),
    )
}

/// Writes the pending ids every [`FLUSH_INTERVAL`] until the guard is dropped.
fn spawn_flusher(
    file: PathBuf,
    mut conn: rusqlite::Connection,
    pending: Weak<Mutex<Queue>>,
    alive: Weak<()>,
) {
    let run = move || {
        loop {
            std::thread::sleep(FLUSH_INTERVAL);
            let Some(p) = pending.upgrade() else { break };
            let q = std::mem::take(&mut *p.lock().unwrap_or_else(|p| p.into_inner()));
            drop(p);
            let work = q.clear || !q.forget.is_empty() || !q.ids.is_empty();
            if work && let Err(e) = flush(&mut conn, &q) {
                tracing::warn!(file = %file.display(), error = %e, "writing X-Request-IDs failed");
            }
            if alive.strong_count() == 0 {
                break;
            }
        }
    };
    if let Err(e) = std::thread::Builder::new()
        .name("replay-ids".into())
        .spawn(run)
    {
        tracing::warn!(error = %e, "cannot start the X-Request-ID writer; ids stay in memory");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request's `Date` as the signature check passes it on: the header's text parsed
    /// (whole seconds).
    fn date(t: SystemTime) -> Option<SystemTime> {
        Some(crate::signing::parse_imf_fixdate(&httpdate::fmt_http_date(t)).unwrap())
    }

    #[test]
    fn an_id_is_refused_while_its_date_is_in_the_window_then_forgotten() {
        let g = ReplayGuard::in_memory(60);
        let tpp = TppId("a".into());
        let other = TppId("b".into());
        let t0 = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let h = date(t0);
        let at = |s: u64| Duration::from_secs(s);
        assert_eq!(g.check_at(&tpp, "id-1", h, t0, at(0)), Ok(()));
        assert_eq!(g.check_at(&tpp, "id-1", h, t0, at(0)), Err(Refusal::Replay));
        // Another TPP may use the same id.
        assert_eq!(g.check_at(&other, "id-1", h, t0, at(0)), Ok(()));
        // Still refused at the end of the window (Date + 60 s)...
        let late = t0 + Duration::from_secs(60);
        assert_eq!(
            g.check_at(&tpp, "id-1", h, late, at(60)),
            Err(Refusal::Replay)
        );
        // ...and dropped once the Date check alone refuses the request.
        let after = t0 + Duration::from_secs(62);
        assert_eq!(g.check_at(&tpp, "id-1", date(after), after, at(62)), Ok(()));
    }

    /// A request without `Date` (a policy without `require_date`): its id is kept for twice
    /// the window from the sandbox clock (`now + 2 × max skew + 1`), then forgotten.
    #[test]
    fn an_id_without_a_date_is_kept_twice_the_window() {
        let g = ReplayGuard::in_memory(60);
        let tpp = TppId("a".into());
        let t0 = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let at = |s: u64| Duration::from_secs(s);
        assert_eq!(g.check_at(&tpp, "undated", None, t0, at(0)), Ok(()));
        let later = t0 + Duration::from_secs(120);
        assert_eq!(
            g.check_at(&tpp, "undated", None, later, at(120)),
            Err(Refusal::Replay)
        );
        let after = t0 + Duration::from_secs(122);
        assert_eq!(g.check_at(&tpp, "undated", None, after, at(122)), Ok(()));
    }

    /// Issue 20, finding 5: a lesson advances the sandbox clock 181 days, sends requests,
    /// initializes (the clock is back at real time), then sends many more. The guard purges
    /// by real time, so the ids stamped at +181 days do not hold back the later ones: the
    /// remembered set stays bounded and a fresh TPP's first request is never refused as
    /// full. (Before: 2.09 M requests later every TPP got 429.)
    #[test]
    fn a_clock_jump_and_initialize_never_fill_the_guard() {
        const CAPACITY: usize = 64;
        let g = ReplayGuard::with_capacity(60, CAPACITY);
        let lesson = TppId("lesson".into());
        let real = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let ahead = real + Duration::from_secs(181 * 86_400);
        let mut elapsed = Duration::ZERO;
        for i in 0..48 {
            let r = g.check_at(&lesson, &format!("ahead-{i}"), date(ahead), ahead, elapsed);
            assert_eq!(r, Ok(()), "request {i} at +181 days");
        }
        g.forget_tpp(&lesson);
        assert_eq!(g.len(), 0, "initialize forgets the TPP's ids");
        // Again at +181 days (the initialize came later in another run of the lesson).
        for i in 0..16 {
            let r = g.check_at(&lesson, &format!("again-{i}"), date(ahead), ahead, elapsed);
            assert_eq!(r, Ok(()));
        }
        // The clock is back at real time (no initialize this time): 20,000 more requests, one
        // every 1.5 real seconds (about 41 ids within any 61 s, under the capacity).
        for i in 0..20_000u64 {
            elapsed = Duration::from_millis(1500 * i) + Duration::from_secs(1);
            let now = real + elapsed;
            let r = g.check_at(&lesson, &format!("later-{i}"), date(now), now, elapsed);
            assert_eq!(r, Ok(()), "request {i} after the clock moved back");
            assert!(g.len() <= CAPACITY, "bounded: {} ids", g.len());
        }
        let now = real + elapsed;
        let fresh = TppId("fresh".into());
        assert_eq!(g.check_at(&fresh, "first", date(now), now, elapsed), Ok(()));
        // Ids still refused within their window after all this.
        assert_eq!(
            g.check_at(&lesson, "later-19999", date(now), now, elapsed),
            Err(Refusal::Replay)
        );
    }

    /// An id whose deadline passed while earlier ids with later deadlines hold it in the
    /// table (not yet dropped) is accepted again, replacing its old entry: counted once, so
    /// it does not use up the guard's capacity; and when the guard is full, even that
    /// request is refused as full (a branch any cheaper look-up must keep, session 21).
    #[test]
    fn an_expired_id_still_in_the_table_is_remembered_again_and_counted_once() {
        // 1,000 ids kept 121 s (no Date) first: every shard holds some (the chance that one
        // of the 16 has none is below 1e-27), so the expired id is never at its shard's
        // front and stays in the table.
        const LONG: usize = 1000;
        let tpp = TppId("a".into());
        let t0 = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let t2 = t0 + Duration::from_secs(2);
        let at = |s: u64| Duration::from_secs(s);
        // Dated 60 s back: kept 1 s.
        let old = date(t0 - Duration::from_secs(60));
        let fill = |g: &ReplayGuard| {
            for i in 0..LONG {
                assert_eq!(
                    g.check_at(&tpp, &format!("long-{i}"), None, t0, at(0)),
                    Ok(())
                );
            }
            assert_eq!(g.check_at(&tpp, "short", old, t0, at(0)), Ok(()));
            assert_eq!(
                g.check_at(&tpp, "short", old, t0, at(0)),
                Err(Refusal::Replay)
            );
        };
        let g = ReplayGuard::with_capacity(60, LONG + 2);
        fill(&g);
        // 2 s later "short" has expired (still in the table): accepted again, once.
        assert_eq!(g.check_at(&tpp, "short", date(t2), t2, at(2)), Ok(()));
        assert_eq!(g.len(), LONG + 1, "replaced, not added");
        assert_eq!(
            g.check_at(&tpp, "short", date(t2), t2, at(2)),
            Err(Refusal::Replay)
        );
        // Counted once: room for one more id, then full.
        assert_eq!(g.check_at(&tpp, "third", date(t2), t2, at(2)), Ok(()));
        assert_eq!(
            g.check_at(&tpp, "fourth", date(t2), t2, at(2)),
            Err(Refusal::Full)
        );
        // With the guard full, the expired id still in the table is refused as full too.
        let g = ReplayGuard::with_capacity(60, LONG + 1);
        fill(&g);
        assert_eq!(
            g.check_at(&tpp, "short", date(t2), t2, at(2)),
            Err(Refusal::Full)
        );
    }

    #[test]
    fn initialize_forgets_only_the_callers_ids() {
        let g = ReplayGuard::in_memory(60);
        let (a, b) = (TppId("a".into()), TppId("b".into()));
        let t = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let z = Duration::ZERO;
        assert_eq!(g.check_at(&a, "x", date(t), t, z), Ok(()));
        assert_eq!(g.check_at(&b, "x", date(t), t, z), Ok(()));
        g.forget_tpp(&a);
        assert_eq!(g.check_at(&a, "x", date(t), t, z), Ok(()));
        assert_eq!(g.check_at(&b, "x", date(t), t, z), Err(Refusal::Replay));
        g.clear();
        assert!(g.is_empty());
    }

    #[test]
    fn ids_survive_a_restart_with_a_database_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.sqlite3");
        let now = SystemTime::now();
        let tpp = TppId("t".into());
        {
            let g = ReplayGuard::persistent(&file, 60).unwrap();
            assert_eq!(g.check(&tpp, "x", date(now), now), Ok(()));
            std::thread::sleep(FLUSH_INTERVAL * 3);
        }
        let g = ReplayGuard::persistent(&file, 60).unwrap();
        assert_eq!(g.check(&tpp, "x", date(now), now), Err(Refusal::Replay));
        assert_eq!(g.check(&tpp, "y", date(now), now), Ok(()));
    }
}
