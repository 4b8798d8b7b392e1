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
//! two minutes.
//!
//! Memory bound: at most [`MAX_REMEMBERED`] ids (about 64 bytes each). When full even after
//! dropping expired ids, new requests are refused with 429 `ACCESS_EXCEEDED` rather than
//! forgetting ids (which would let replays through); at 60 s per id that is about 35,000
//! requests per second sustained.
//!
//! Restarts: with a database file, ids are also written to the table `replay_request_ids`
//! of the same file by a background thread every [`FLUSH_INTERVAL`] (one transaction per
//! batch, on a connection of its own, so the request path never waits for SQLite), and
//! loaded at start. A crash loses at most the last interval's ids; an in-memory sandbox
//! keeps them in memory only.
//!
//! Load benchmarks that replay one signed request turn the check off with
//! [`super::SandboxConfig::allow_replays`] (`sandbox serve --allow-replays`).

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::HeaderMap;

use super::errors::ApiError;
use super::model::TppId;
use super::store::replay as store;
use crate::xs2a::error::MessageCode;

/// Most ids remembered at once (all TPPs together).
pub const MAX_REMEMBERED: usize = 1 << 21;

/// How often remembered ids are written to the database file.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(250);

/// Most ids waiting to be written; beyond it new ids are kept in memory only.
const MAX_PENDING: usize = 200_000;

const SHARDS: usize = 16;

/// The table of the database file holding remembered ids.
type Key = [u64; 2];

#[derive(Default)]
struct Shard {
    /// Key → expiry (Unix seconds).
    seen: HashMap<Key, u32, foldhash::fast::FixedState>,
    /// Keys in the order they were remembered, with their expiry, to drop expired ones.
    order: VecDeque<(u32, Key)>,
}

impl Shard {
    fn purge(&mut self, now: u32) {
        while let Some(&(expires, key)) = self.order.front() {
            if expires > now {
                break;
            }
            self.order.pop_front();
            if self.seen.get(&key) == Some(&expires) {
                self.seen.remove(&key);
            }
        }
    }
}

/// A remembered id waiting to be written to the database.
struct Pending {
    tpp: String,
    request_id: String,
    expires: u32,
}

/// The ids seen per TPP (see the module documentation).
pub struct ReplayGuard {
    shards: Vec<Mutex<Shard>>,
    hash: [foldhash::fast::RandomState; 2],
    /// Largest accepted |Date − now|, seconds.
    max_skew: u64,
    pending: Option<Arc<Mutex<Vec<Pending>>>>,
    /// Keeps the flusher thread alive; it ends when the guard is dropped.
    _alive: Option<Arc<()>>,
}

impl std::fmt::Debug for ReplayGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayGuard")
            .field("max_skew", &self.max_skew)
            .field("persistent", &self.pending.is_some())
            .finish()
    }
}

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The TPP already sent this `X-Request-ID`.
    Replay,
    /// [`MAX_REMEMBERED`] ids are remembered and none has expired.
    Full,
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
        }
    }
}

fn secs(t: SystemTime) -> u32 {
    let s = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    u32::try_from(s).unwrap_or(u32::MAX)
}

impl ReplayGuard {
    /// A guard in memory only; ids are remembered `max_skew` seconds past their `Date`.
    pub fn in_memory(max_skew: u64) -> Self {
        ReplayGuard {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            hash: Default::default(),
            max_skew,
            pending: None,
            _alive: None,
        }
    }

    /// A guard that also keeps its ids in the database `file` (table `replay_request_ids`),
    /// loading those not expired at `now`.
    ///
    /// Errors: the file cannot be opened or the table created or read.
    pub fn persistent(file: &Path, max_skew: u64, now: SystemTime) -> rusqlite::Result<Self> {
        let mut guard = Self::in_memory(max_skew);
        let conn = store::open(file)?;
        let now_s = secs(now);
        for (tpp, id, expires) in store::load(&conn, now_s)? {
            let key = guard.key(&tpp, &id);
            let mut shard = guard.shard(&key);
            shard.seen.insert(key, expires);
            shard.order.push_back((expires, key));
        }
        for s in &guard.shards {
            let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
            s.order.make_contiguous().sort_by_key(|(e, _)| *e);
        }
        let pending = Arc::new(Mutex::new(Vec::new()));
        let alive = Arc::new(());
        spawn_flusher(
            file.to_path_buf(),
            conn,
            Arc::downgrade(&pending),
            Arc::downgrade(&alive),
        );
        guard.pending = Some(pending);
        guard._alive = Some(alive);
        Ok(guard)
    }

    fn key(&self, tpp: &str, request_id: &str) -> Key {
        [
            self.hash[0].hash_one((tpp, request_id)),
            self.hash[1].hash_one((tpp, request_id)),
        ]
    }

    fn shard(&self, key: &Key) -> std::sync::MutexGuard<'_, Shard> {
        self.shards[(key[0] as usize) % SHARDS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers `request_id` of `tpp` at `now`, or says why the request is refused.
    /// `headers` give the request's `Date` (how long the id is kept).
    pub fn check(
        &self,
        tpp: &TppId,
        request_id: &str,
        headers: &HeaderMap,
        now: SystemTime,
    ) -> Result<(), Refusal> {
        let now_s = secs(now);
        let date = headers
            .get(axum::http::header::DATE)
            .and_then(|d| d.to_str().ok())
            .and_then(|d| httpdate::parse_http_date(d).ok());
        let expires = match date {
            Some(d) => secs(d).saturating_add(self.max_skew as u32 + 1),
            None => now_s.saturating_add(2 * self.max_skew as u32 + 1),
        }
        .max(now_s.saturating_add(1));
        let key = self.key(&tpp.0, request_id);
        {
            let mut shard = self.shard(&key);
            shard.purge(now_s);
            if shard.seen.get(&key).is_some_and(|e| *e > now_s) {
                return Err(Refusal::Replay);
            }
            if shard.seen.len() >= MAX_REMEMBERED / SHARDS {
                return Err(Refusal::Full);
            }
            shard.seen.insert(key, expires);
            shard.order.push_back((expires, key));
        }
        if let Some(p) = &self.pending {
            let mut p = p.lock().unwrap_or_else(|p| p.into_inner());
            if p.len() < MAX_PENDING {
                p.push(Pending {
                    tpp: tpp.0.clone(),
                    request_id: request_id.to_string(),
                    expires,
                });
            }
        }
        Ok(())
    }

    /// How many ids are remembered (expired ones not yet dropped included).
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).seen.len())
            .sum()
    }

    /// Whether no id is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn flush(conn: &mut rusqlite::Connection, batch: &[Pending]) -> rusqlite::Result<()> {
    // Every id of the batch was remembered with an expiry after its sandbox-clock `now`,
    // so rows expiring before the batch's earliest expiry (less a margin) are expired.
    let min = batch.iter().map(|p| p.expires).min();
    store::save(
        conn,
        batch
            .iter()
            .map(|p| (p.tpp.as_str(), p.request_id.as_str(), p.expires)),
        min.map(|m| m.saturating_sub(2)),
    )
}

/// Writes the pending ids every [`FLUSH_INTERVAL`] until the guard is dropped.
fn spawn_flusher(
    file: PathBuf,
    mut conn: rusqlite::Connection,
    pending: Weak<Mutex<Vec<Pending>>>,
    alive: Weak<()>,
) {
    let run = move || {
        loop {
            std::thread::sleep(FLUSH_INTERVAL);
            let Some(p) = pending.upgrade() else { break };
            let batch = std::mem::take(&mut *p.lock().unwrap_or_else(|p| p.into_inner()));
            drop(p);
            if !batch.is_empty()
                && let Err(e) = flush(&mut conn, &batch)
            {
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

    fn date(t: SystemTime) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            axum::http::header::DATE,
            httpdate::fmt_http_date(t).parse().unwrap(),
        );
        h
    }

    #[test]
    fn an_id_is_refused_while_its_date_is_in_the_window_then_forgotten() {
        let g = ReplayGuard::in_memory(60);
        let tpp = TppId("a".into());
        let other = TppId("b".into());
        let t0 = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let h = date(t0);
        assert_eq!(g.check(&tpp, "id-1", &h, t0), Ok(()));
        assert_eq!(g.check(&tpp, "id-1", &h, t0), Err(Refusal::Replay));
        // Another TPP may use the same id.
        assert_eq!(g.check(&other, "id-1", &h, t0), Ok(()));
        // Still refused at the end of the window (Date + 60 s)...
        let late = t0 + Duration::from_secs(60);
        assert_eq!(g.check(&tpp, "id-1", &h, late), Err(Refusal::Replay));
        // ...and dropped once the Date check alone refuses the request.
        let after = t0 + Duration::from_secs(62);
        assert_eq!(g.check(&tpp, "id-1", &date(after), after), Ok(()));
    }

    #[test]
    fn ids_survive_a_restart_with_a_database_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.sqlite3");
        let now = SystemTime::now();
        let tpp = TppId("t".into());
        {
            let g = ReplayGuard::persistent(&file, 60, now).unwrap();
            assert_eq!(g.check(&tpp, "x", &date(now), now), Ok(()));
            std::thread::sleep(FLUSH_INTERVAL * 3);
        }
        let g = ReplayGuard::persistent(&file, 60, now).unwrap();
        assert_eq!(g.check(&tpp, "x", &date(now), now), Err(Refusal::Replay));
        assert_eq!(g.check(&tpp, "y", &date(now), now), Ok(()));
    }
}
