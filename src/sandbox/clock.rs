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
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
    offsets: Arc<Offsets>,
}

/// The offsets every clone shares. Both worker threads read the clock several times per
/// request (the Date window, the consent checks, the day of a page, the access log), and
/// writes are rare (`POST /v1/sandbox/clock`, a reset, a PostgreSQL instance taking another's
/// offsets). A `Mutex` read wrote its lock word twice per reading, so the line moved between
/// the cores with every request (issue 23); the readings here are plain atomic loads, and the
/// `Mutex`es only order the writers and keep what the atomics cannot hold.
struct Offsets {
    /// The shared offset (the writers' copy; read only when it does not fit `shared_nanos`).
    shared: Mutex<Duration>,
    /// The shared offset in nanoseconds, or [`TOO_LONG`] when it does not fit a `u64`
    /// (about 584 years): then the reader takes `shared`.
    shared_nanos: AtomicU64,
    /// Each TPP's own offset (on top of the shared one), by TPP id; zero offsets are not kept.
    worlds: Mutex<HashMap<String, Duration>>,
    /// How many entries `worlds` holds (set under its lock): while none, a reading needs no lock.
    world_count: AtomicUsize,
}

/// [`Offsets::shared_nanos`] when the offset does not fit in nanoseconds of a `u64`.
const TOO_LONG: u64 = u64::MAX;

impl Offsets {
    fn new() -> Self {
        Offsets {
            shared: Mutex::new(Duration::ZERO),
            shared_nanos: AtomicU64::new(0),
            worlds: Mutex::default(),
            world_count: AtomicUsize::new(0),
        }
    }

    fn shared_lock(&self) -> std::sync::MutexGuard<'_, Duration> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn worlds_lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Duration>> {
        self.worlds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The shared offset, without a lock unless it is longer than `u64` nanoseconds.
    fn shared(&self) -> Duration {
        match self.shared_nanos.load(Ordering::Acquire) {
            TOO_LONG => *self.shared_lock(),
            n => Duration::from_nanos(n),
        }
    }

    /// Sets the shared offset (the caller holds `shared`'s lock, passed as `held`).
    fn publish_shared(&self, held: &mut Duration, offset: Duration) {
        *held = offset;
        let nanos = u64::try_from(offset.as_nanos())
            .ok()
            .filter(|&n| n != TOO_LONG)
            .unwrap_or(TOO_LONG);
        self.shared_nanos.store(nanos, Ordering::Release);
    }

    /// TPP `world`'s own offset, without a lock while no TPP has one.
    fn world(&self, world: &str) -> Duration {
        if self.world_count.load(Ordering::Acquire) == 0 {
            return Duration::ZERO;
        }
        self.worlds_lock().get(world).copied().unwrap_or_default()
    }

    /// Changes the TPPs' offsets with `f` under the lock, then publishes their count.
    fn change_worlds(&self, f: impl FnOnce(&mut HashMap<String, Duration>)) {
        let mut w = self.worlds_lock();
        f(&mut w);
        self.world_count.store(w.len(), Ordering::Release);
    }
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
            offsets: Arc::new(Offsets::new()),
        }
    }

    /// A clock standing still at `at` (until advanced).
    pub fn fixed(at: SystemTime) -> Self {
        Clock {
            base: Base::Fixed(at),
            offsets: Arc::new(Offsets::new()),
        }
    }

    /// The offset added to the base time by [`Clock::advance`] / [`Clock::set_offset`]
    /// (what `sandbox_meta` persists, see `Store::set_clock_offset`).
    pub fn offset(&self) -> Duration {
        self.offsets.shared()
    }

    /// Sets the offset of this clock and all its clones (restoring a persisted offset, or
    /// `Duration::ZERO` when `POST /v1/sandbox/initialize` resets the sandbox).
    pub fn set_offset(&self, offset: Duration) {
        let mut held = self.offsets.shared_lock();
        self.offsets.publish_shared(&mut held, offset);
    }

    /// The current sandbox time: base time plus the accumulated offset, plus the offset of
    /// the TPP whose world the task runs in ([`in_world`]; its id borrowed, not cloned).
    pub fn now(&self) -> SystemTime {
        WORLD
            .try_with(|w| self.now_in(w))
            .unwrap_or_else(|_| self.shared_now())
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
        self.offsets.world(world)
    }

    /// Sets TPP `world`'s own offset (zero forgets it).
    pub fn set_world_offset(&self, world: &str, offset: Duration) {
        self.offsets.change_worlds(|w| {
            if offset.is_zero() {
                w.remove(world);
            } else {
                w.insert(world.to_string(), offset);
            }
        });
    }

    /// Replaces every TPP's own offset by `worlds` (an instance taking the offsets another
    /// instance on the same database wrote; zero offsets are left out).
    pub fn replace_worlds(&self, worlds: impl IntoIterator<Item = (String, Duration)>) {
        let fresh: HashMap<String, Duration> =
            worlds.into_iter().filter(|(_, d)| !d.is_zero()).collect();
        self.offsets.change_worlds(|w| *w = fresh);
    }

    /// Forgets every TPP's own offset (the global reset).
    pub fn clear_worlds(&self) {
        self.offsets.change_worlds(HashMap::clear);
    }

    /// Moves this clock and all its clones forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut held = self.offsets.shared_lock();
        let offset = held.checked_add(by).unwrap_or(*held);
        self.offsets.publish_shared(&mut held, offset);
    }

    /// The current UTC calendar date.
    pub fn today(&self) -> chrono::NaiveDate {
        utc_day(self.now())
    }
}

/// The UTC calendar date of `t`: for instants from 1970 on the whole days since then (what
/// chrono's `DateTime::<Utc>::from(t).date_naive()` gives, test), without chrono's split into
/// date and time of day and its nanosecond checks (issue 23: a transaction page, balances and
/// transaction details read the day per request); chrono's way for earlier instants.
fn utc_day(t: SystemTime) -> chrono::NaiveDate {
    /// Days from 0001-01-01 (day 1 of chrono's count) to 1970-01-01.
    const UNIX_EPOCH_DAYS_FROM_CE: i32 = 719_163;
    t.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| i32::try_from(d.as_secs() / 86_400).ok())
        .and_then(|days| days.checked_add(UNIX_EPOCH_DAYS_FROM_CE))
        .and_then(chrono::NaiveDate::from_num_days_from_ce_opt)
        .unwrap_or_else(|| chrono::DateTime::<chrono::Utc>::from(t).date_naive())
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

    /// [`utc_day`] is chrono's date of the instant: around the epoch, day and leap-year
    /// boundaries, before 1970 and at the far end.
    #[test]
    fn utc_day_is_chronos_date() {
        let chrono_day = |t: SystemTime| chrono::DateTime::<chrono::Utc>::from(t).date_naive();
        let mut instants = vec![SystemTime::UNIX_EPOCH];
        for secs in [
            0u64,
            1,
            86_399,
            86_400,
            86_401,
            951_782_399, // 2000-02-28T23:59:59
            951_868_800, // 2000-03-01
            1_800_000_000,
            4_102_444_799,   // 2099-12-31T23:59:59
            253_402_300_799, // 9999-12-31T23:59:59
        ] {
            for nanos in [0, 999_999_999] {
                instants.push(SystemTime::UNIX_EPOCH + Duration::new(secs, nanos));
                instants.push(SystemTime::UNIX_EPOCH - Duration::new(secs, nanos));
            }
        }
        for day in (0..200_000u64).step_by(37) {
            instants.push(SystemTime::UNIX_EPOCH + Duration::from_secs(day * 86_400 + 43_210));
            instants.push(SystemTime::UNIX_EPOCH + Duration::from_secs(day * 86_400));
            instants.push(SystemTime::UNIX_EPOCH + Duration::from_secs(day * 86_400 + 86_399));
        }
        for t in instants {
            assert_eq!(utc_day(t), chrono_day(t), "{t:?}");
        }
    }

    /// The offsets read without a lock (issue 23) are those set, on every clone: the shared
    /// offset at, below and past what fits `u64` nanoseconds (read from the lock then), moved
    /// by `advance` across that bound, and the TPPs' offsets as they come and go.
    #[test]
    fn offsets_read_without_a_lock_are_those_set() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let c = Clock::fixed(t);
        let d = c.clone();
        let max_nanos = Duration::from_nanos(u64::MAX);
        for offset in [
            Duration::ZERO,
            Duration::new(3_600, 1),
            max_nanos - Duration::from_nanos(1),
            max_nanos,
            max_nanos + Duration::from_nanos(1),
            Duration::MAX,
            Duration::from_secs(86_400),
        ] {
            c.set_offset(offset);
            assert_eq!(d.offset(), offset, "{offset:?}");
            assert_eq!(c.offset(), offset, "{offset:?}");
        }
        d.set_offset(max_nanos - Duration::from_nanos(2));
        c.advance(Duration::from_nanos(1));
        assert_eq!(d.offset(), max_nanos - Duration::from_nanos(1));
        c.advance(Duration::from_nanos(2));
        assert_eq!(
            d.offset(),
            max_nanos + Duration::from_nanos(1),
            "past u64 nanoseconds"
        );
        d.set_offset(Duration::MAX);
        c.advance(Duration::from_secs(1));
        assert_eq!(
            d.offset(),
            Duration::MAX,
            "an overflowing advance leaves the offset"
        );
        c.set_offset(Duration::ZERO);
        assert_eq!(d.now(), t);

        assert_eq!(d.world_offset("a"), Duration::ZERO);
        c.set_world_offset("a", Duration::from_secs(5));
        c.set_world_offset("b", Duration::from_secs(7));
        assert_eq!(d.world_offset("a"), Duration::from_secs(5));
        assert_eq!(d.world_offset("b"), Duration::from_secs(7));
        assert_eq!(d.now_in("b"), t + Duration::from_secs(7));
        c.set_world_offset("a", Duration::ZERO);
        assert_eq!(d.world_offset("a"), Duration::ZERO);
        assert_eq!(d.world_offset("b"), Duration::from_secs(7));
        c.clear_worlds();
        assert_eq!(d.world_offset("b"), Duration::ZERO);
        c.replace_worlds([
            ("x".to_string(), Duration::from_secs(9)),
            ("y".to_string(), Duration::ZERO),
        ]);
        assert_eq!(d.world_offset("x"), Duration::from_secs(9));
        assert_eq!(d.world_offset("y"), Duration::ZERO);
        c.replace_worlds([("y".to_string(), Duration::ZERO)]);
        assert_eq!(d.world_offset("x"), Duration::ZERO, "replaced by none kept");
    }

    /// A clone reading while another thread moves the clock forward never sees it go back.
    #[test]
    fn readings_while_the_clock_advances_never_go_back() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let c = Clock::fixed(t);
        let mover = c.clone();
        let moving = std::thread::spawn(move || {
            for _ in 0..10_000 {
                mover.advance(Duration::from_millis(1));
            }
        });
        let mut last = c.now();
        while !moving.is_finished() {
            let now = c.now();
            assert!(now >= last);
            last = now;
        }
        moving.join().unwrap();
        assert_eq!(c.now(), t + Duration::from_secs(10));
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
