//! The sandbox clock: system time or a fixed instant, plus an offset shared by all clones,
//! so tests can freeze time and move it forward (Date checks of Authentication rule 4,
//! SCA expiry, consent age, "today" of the generated transactions).

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

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
        }
    }

    /// A clock standing still at `at` (until advanced).
    pub fn fixed(at: SystemTime) -> Self {
        Clock {
            base: Base::Fixed(at),
            offset: Arc::new(Mutex::new(Duration::ZERO)),
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

    /// The current sandbox time: base time plus the accumulated offset.
    pub fn now(&self) -> SystemTime {
        let base = match self.base {
            Base::System => SystemTime::now(),
            Base::Fixed(t) => t,
        };
        base.checked_add(self.offset()).unwrap_or(base)
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

/// Unix seconds `t` as RFC 3339 UTC, whole seconds (`2026-11-24T10:02:00Z`); empty when `t`
/// is out of chrono's range.
pub fn rfc3339(t: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp(t, 0)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

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
}
