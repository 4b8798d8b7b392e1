//! The logical-duplicate keys of a SQLite state's payments, kept in memory by the connection
//! that writes them (issue 23, session 21): which payments of a TPP, created on one sandbox
//! day, were stored with a duplicate key, so that the logical-duplicate check at payment
//! initiation (`payments::logical_duplicate_exists`) needs no index of the keys themselves.
//! That index (`pis_payments_dedup_by_tpp`, keyed by the payment's text) took about one
//! random leaf page of the write-ahead log per payment, a third of a payment's log pages.
//!
//! What is kept, per (TPP, sandbox day): each duplicate key's hash (foldhash with this
//! process's random seed) → the rowids of the `pis_payments` rows stored with it. It is a
//! **superset**: rows since rolled back, deleted, rejected or cancelled stay listed, and
//! two keys may share a hash. So a key absent from the map is no duplicate, and a key
//! present is confirmed by reading the listed rows by rowid (same TPP, key and day, status
//! neither `RJCT` nor `CANC`): the answer is the database's, exactly.
//!
//! How it stays a superset:
//! - A (TPP, day) is loaded at its first use (after a start, on a new day, after a drop)
//!   from the rows themselves, through the index `pis_payments_by_tpp_day` (`tpp`,
//!   `created_day`; its new entries append at the TPP's day range, one right-edge page per
//!   batch), inside the write transaction that uses it.
//! - Every insert into `pis_payments` on the connection is counted by SQLite's update hook
//!   ([`DupKeys::counted_insert`], called by `db::Changes`); `payments::insert_payment`
//!   records its own row after the insert ([`DupKeys::record`]). When the count is not the
//!   number of recorded inserts (a row inserted by any other statement: a seed, an import,
//!   a test's SQL), the whole map is dropped and loaded again at its next use.
//! - No statement changes a stored payment's TPP, key or day (test
//!   `payments::tests::no_statement_moves_a_payment_to_another_duplicate_key`), and a row
//!   leaves only by being deleted: a listed rowid whose row is gone or changed is a
//!   candidate the confirmation refuses.
//! - Rowids stay what they were: the sandbox never runs `VACUUM` on its state (only on a
//!   bundle's copy, `sandbox::bundle`, which renumbers the copy's rows) nor restores pages
//!   into it under a running writer.
//! - The connection that holds the map is the only one that writes `pis_payments` (a state
//!   file has one sandbox process, as for `db::Changes`). On PostgreSQL (other instances
//!   write) there is no map: the check is the keyed index's statement.
//!
//! Bounded: past [`MAX_ROWS`] rowids, every other (TPP, day) is dropped.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many rowids the map keeps before it drops every (TPP, day) but the one in use
/// (about 40 bytes each).
pub const MAX_ROWS: usize = 1 << 20;

/// The rowids of one key hash: almost always one.
#[derive(Debug, Clone)]
enum Rowids {
    One(i64),
    Many(Vec<i64>),
}

impl Rowids {
    fn push(&mut self, rowid: i64) {
        match self {
            Rowids::One(r) if *r == rowid => {}
            Rowids::One(r) => *self = Rowids::Many(vec![*r, rowid]),
            Rowids::Many(v) => {
                if !v.contains(&rowid) {
                    v.push(rowid);
                }
            }
        }
    }

    fn to_vec(&self) -> Vec<i64> {
        match self {
            Rowids::One(r) => vec![*r],
            Rowids::Many(v) => v.clone(),
        }
    }
}

/// One (TPP, day)'s keys.
type Day = HashMap<u64, Rowids, foldhash::fast::RandomState>;

#[derive(Debug, Default)]
struct State {
    /// The inserts into `pis_payments` the map accounts for (recorded, or made before it
    /// was last dropped).
    seen: u64,
    hasher: foldhash::fast::RandomState,
    /// TPP → day → keys (looked up by `&str`, without a copy).
    days: HashMap<String, HashMap<String, Day>>,
    rows: usize,
}

impl State {
    /// Drops everything when an insert was not recorded.
    fn sync(&mut self, inserts: u64) {
        if inserts != self.seen {
            self.clear();
            self.seen = inserts;
        }
    }

    fn clear(&mut self) {
        self.days.clear();
        self.rows = 0;
    }

    fn hash(&self, key: &str) -> u64 {
        self.hasher.hash_one(key)
    }

    fn day(&self, tpp: &str, day: &str) -> Option<&Day> {
        self.days.get(tpp)?.get(day)
    }
}

/// The map (see the module documentation). Used only by the thread holding the SQLite
/// request connection (the group commit's writer, or a `Db::write`): its lock is never
/// contended.
#[derive(Debug, Default)]
pub struct DupKeys {
    /// Inserts into `pis_payments` counted by the update hook.
    inserts: AtomicU64,
    state: Mutex<State>,
}

impl DupKeys {
    /// The update hook's part: a row was inserted into `pis_payments`.
    pub fn counted_insert(&self) {
        self.inserts.fetch_add(1, Ordering::SeqCst);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The rowids that may hold a payment of `tpp` created on `day` with `key` (none: no
    /// such payment exists). When the (TPP, day) is not held, `load` reads its rows
    /// (rowid, duplicate key) first.
    ///
    /// Errors: `load`'s (nothing is kept then).
    pub fn candidates<E>(
        &self,
        tpp: &str,
        day: &str,
        key: &str,
        load: impl FnOnce() -> Result<Vec<(i64, String)>, E>,
    ) -> Result<Vec<i64>, E> {
        let mut s = self.state();
        s.sync(self.inserts.load(Ordering::SeqCst));
        let h = s.hash(key);
        if let Some(d) = s.day(tpp, day) {
            return Ok(d.get(&h).map(Rowids::to_vec).unwrap_or_default());
        }
        let rows = load()?;
        let mut d = Day::with_capacity_and_hasher(rows.len(), Default::default());
        for (rowid, k) in &rows {
            let h = s.hash(k);
            d.entry(h)
                .and_modify(|r| r.push(*rowid))
                .or_insert(Rowids::One(*rowid));
        }
        if s.rows + rows.len() > MAX_ROWS {
            s.clear();
        }
        s.rows += rows.len();
        let out = d.get(&h).map(Rowids::to_vec).unwrap_or_default();
        s.days
            .entry(tpp.to_string())
            .or_default()
            .insert(day.to_string(), d);
        Ok(out)
    }

    /// Before an insert into `pis_payments` that [`DupKeys::record`] records: drops the map
    /// if an insert it did not record came before.
    pub fn before_insert(&self) {
        self.state().sync(self.inserts.load(Ordering::SeqCst));
    }

    /// After the insert of a payment row (`rowid`) of `tpp` on `day` with `key`, which the
    /// update hook counted: the row is listed (when its (TPP, day) is held). If the count
    /// moved by anything but this one insert, the map is dropped.
    pub fn record(&self, tpp: &str, day: &str, key: &str, rowid: i64) {
        let inserts = self.inserts.load(Ordering::SeqCst);
        let mut s = self.state();
        if inserts != s.seen.wrapping_add(1) {
            s.sync(inserts);
            return;
        }
        s.seen = inserts;
        let h = s.hash(key);
        let State { days, rows, .. } = &mut *s;
        if let Some(d) = days.get_mut(tpp).and_then(|t| t.get_mut(day)) {
            d.entry(h)
                .and_modify(|r| r.push(rowid))
                .or_insert(Rowids::One(rowid));
            *rows += 1;
        }
    }

    /// How many (TPP, day)s are held (tests).
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.state().days.values().map(HashMap::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> Result<Vec<(i64, String)>, ()> {
        Ok(Vec::new())
    }

    /// A recorded insert is listed under its key; an insert the map did not record drops
    /// it, and the next use loads again.
    #[test]
    fn an_unrecorded_insert_drops_the_map() {
        let m = DupKeys::default();
        assert!(m.candidates("t", "d", "k", none).unwrap().is_empty());
        m.before_insert();
        m.counted_insert();
        m.record("t", "d", "k", 7);
        let never = || -> Result<Vec<(i64, String)>, ()> { panic!("held: no load") };
        assert_eq!(m.candidates("t", "d", "k", never).unwrap(), vec![7]);
        assert!(m.candidates("t", "d", "other", never).unwrap().is_empty());
        // Another TPP's, another day's: loaded on their own.
        assert!(m.candidates("u", "d", "k", none).unwrap().is_empty());
        assert!(m.candidates("t", "e", "k", none).unwrap().is_empty());
        assert_eq!(m.held(), 3);
        // An insert the map did not record.
        m.counted_insert();
        let loaded = || Ok::<_, ()>(vec![(7, "k".to_string()), (8, "k".to_string())]);
        assert_eq!(m.candidates("t", "d", "k", loaded).unwrap(), vec![7, 8]);
        assert_eq!(m.held(), 1);
        // Recorded, then an unrecorded insert between two recorded ones.
        m.before_insert();
        m.counted_insert();
        m.counted_insert();
        m.record("t", "d", "k", 9);
        assert_eq!(m.held(), 0);
    }
}
