//! The sandbox clock: system time or a fixed instant, plus an offset shared by all clones,
//! so tests can freeze time and move it forward (Date checks of Authentication rule 4,
//! SCA expiry, consent age, "today" of the generated transactions).
//!
//! Each TPP has its own clock on top (issue 20): `POST /v1/sandbox/clock` moves only the
//! calling TPP's offset ([`Clock::advance_world`]). [`Clock::now`] adds the offset of the
//! TPP whose request is being answered: the signature check and the SCA page layer run the
//! handlers inside [`in_world`] (a tokio task-local), so every reading of the clock in a
//! handler (the Date window, SCA and consent expiry, batch runs) is that TPP's time without
//! passing it around. Outside a world (start-up, tests reading the clock) only the shared
//! offset counts; [`Clock::now_in`] reads one TPP's time from anywhere (the console signing
//! its requests).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

tokio::task_local! {
    /// The TPP (its id text) whose request the current task answers.
    static WORLD: Arc<str>;
}

/// Runs `f` in TPP `world` (a `&str`, or an `Arc<str>` that is then shared, not copied):
/// [`Clock::now`] inside it is that TPP's time. A plain function returning tokio's scope
/// future, not an `async fn` around it, so the caller's future holds `f` once (an `async
/// fn` would keep the scope future, with `f` in it, inside a state machine of its own).
pub fn in_world<F: Future>(
    world: impl Into<Arc<str>>,
    f: F,
) -> tokio::task::futures::TaskLocalFuture<Arc<str>, F> {
    WORLD.scope(world.into(), f)
}

/// The TPP whose world the current task runs in ([`in_world`]), if any.
pub fn current_world() -> Option<Arc<str>> {
    WORLD.try_with(Arc::clone).ok()
}

#[derive(Clone, Copy, Debug)]
enum Base {
    System,
    Fixed(SystemTime),
}

/// An injectable clock. Clones share the offset added by [`Clock::advance`].
#[derive(Clone)]
pub struct Clock {
    base: Base,
    offset: Arc<Mutex<Duration>>,
    /// Each TPP's own offset (on top of `offset`), by TPP id.
    worlds: Arc<Mutex<HashMap<String, Duration>>>,
}

impl Clock {
    /// Unix seconds of [`Clock::now`] (0 before 1970, `i64::MAX` past its range).
    pub fn unix_secs(&self) -> i64 {
        self.now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }

    /// The system clock.
    pub fn system() -> Self {
        Clock {
            base: Base::System,
            offset: Arc::new(Mutex::new(Duration::ZERO)),
            worlds: Arc::default(),
        }
    }

    /// A clock standing still at `at` (until advanced).
    pub fn fixed(at: SystemTime) -> Self {
        Clock {
            base: Base::Fixed(at),
            offset: Arc::new(Mutex::new(Duration::ZERO)),
            worlds: Arc::default(),
        }
    }

    /// The offset added to the base time by [`Clock::advance`] / [`Clock::set_offset`]
    /// (what `sandbox_meta` persists, see `Store::set_clock_offset`).
    pub fn offset(&self) -> Duration {
        *self.offset.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the offset of this clock and all its clones (restoring a persisted offset, or
    /// `Duration::ZERO` when `POST /v1/sandbox/initialize` resets the sandbox).
    pub fn set_offset(&self, offset: Duration) {
        *self.offset.lock().unwrap_or_else(|e| e.into_inner()) = offset;
    }

    /// The current sandbox time: base time plus the accumulated offset, plus the offset of
    /// the TPP whose world the task runs in ([`in_world`]).
    pub fn now(&self) -> SystemTime {
        match current_world() {
            Some(w) => self.now_in(&w),
            None => self.shared_now(),
        }
    }

    fn shared_now(&self) -> SystemTime {
        let base = match self.base {
            Base::System => SystemTime::now(),
            Base::Fixed(t) => t,
        };
        base.checked_add(self.offset()).unwrap_or(base)
    }

    /// TPP `world`'s time: [`Clock::now`] plus its own offset.
    pub fn now_in(&self, world: &str) -> SystemTime {
        let t = self.shared_now();
        t.checked_add(self.world_offset(world)).unwrap_or(t)
    }

    /// TPP `world`'s own offset (zero until it moves its clock).
    pub fn world_offset(&self, world: &str) -> Duration {
        self.worlds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(world)
            .copied()
            .unwrap_or_default()
    }

    /// Sets TPP `world`'s own offset (zero forgets it).
    pub fn set_world_offset(&self, world: &str, offset: Duration) {
        let mut w = self.worlds.lock().unwrap_or_else(|e| e.into_inner());
        if offset.is_zero() {
            w.remove(world);
        } else {
            w.insert(world.to_string(), offset);
        }
    }

    /// Replaces every TPP's own offset by `worlds` (an instance taking the offsets another
    /// instance on the same database wrote; zero offsets are left out).
    pub fn replace_worlds(&self, worlds: impl IntoIterator<Item = (String, Duration)>) {
        let fresh: HashMap<String, Duration> =
            worlds.into_iter().filter(|(_, d)| !d.is_zero()).collect();
        *self.worlds.lock().unwrap_or_else(|e| e.into_inner()) = fresh;
    }

    /// Forgets every TPP's own offset (the global reset).
    pub fn clear_worlds(&self) {
        self.worlds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Moves this clock and all its clones forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut o = self.offset.lock().unwrap_or_else(|e| e.into_inner());
        *o = o.checked_add(by).unwrap_or(*o);
    }

    /// The current UTC calendar date.
    pub fn today(&self) -> chrono::NaiveDate {
        chrono::DateTime::<chrono::Utc>::from(self.now()).date_naive()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.base {
            Base::System => write!(f, "Clock::system(+{:?})", self.offset()),
            Base::Fixed(t) => write!(f, "Clock::fixed({t:?} +{:?})", self.offset()),
        }
    }
}

pub use crate::xs2a::fields::rfc3339;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_clock_advances_for_all_clones() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let c = Clock::fixed(t);
        let d = c.clone();
        assert_eq!(c.now(), t);
        d.advance(Duration::from_secs(61));
        assert_eq!(c.now(), t + Duration::from_secs(61));
        assert_eq!(c.today().to_string(), "2027-01-15");
    }

    #[test]
    fn each_world_has_its_own_offset() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let c = Clock::fixed(t);
        c.set_world_offset("a", Duration::from_secs(100));
        assert_eq!(c.now_in("a"), t + Duration::from_secs(100));
        assert_eq!(c.now_in("b"), t);
        assert_eq!(c.now(), t, "outside a world only the shared offset counts");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let inside = rt.block_on(in_world("a", async { c.now() }));
        assert_eq!(inside, t + Duration::from_secs(100));
        c.set_world_offset("a", Duration::ZERO);
        assert_eq!(c.now_in("a"), t);
    }
}
