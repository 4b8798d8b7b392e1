//! The sandbox's domain services, below the HTTP handlers and above the store: the handlers
//! parse a request, call a service here and answer; services read and write through
//! [`crate::sandbox::store`] and never name a handler module.
//!
//! - [`access`]: which accounts a request may read (consent resolution and its cache,
//!   revocation, PSU sessions and registrations, card consents), and starting an SCA.
//! - [`payment`]: the payment types and payment initiation; [`payment_sca`]: the PSU's
//!   login and decision on the payment SCA page; [`basket`]: signing baskets.
//! - [`settlement`]: payment execution at the batch runs (balances, holds, booking).
//! - [`faults`]: the fault rules and the outcomes they force on payments and SCA.
//! - [`books`]: an account's transactions and balances (the generated ledger merged with the
//!   manual transactions and balance overrides of the store).
//! - [`manage`]: sandbox management's limits, body readers and transactions.
//! - [`views`]: the sandbox-customer and agreement elements shared by several endpoints.
//! - [`sca_pages`]: the key of the SCA pages' addresses (the token of an authorisation).
//!
//! A service takes what it works on as typed values (the TPP, the PSU context, the parsed
//! request) and the sandbox's state as a [`Ctx`]: never the HTTP layer's state or headers,
//! so the domain does not depend on axum (the structure test checks it).

pub mod access;
pub mod basket;
pub mod books;
pub mod events;
pub mod faults;
pub mod ledger;
pub mod manage;
pub mod payment;
pub mod payment_sca;
pub mod rules;
pub mod sca_pages;
pub mod seed;
pub mod seed_file;
pub mod settlement;
pub mod views;

use crate::sandbox::clock::Clock;
use crate::sandbox::store::Store;
use crate::sandbox::store::db::Db;

/// What a domain service works with, borrowed from the sandbox's state for one call: the
/// state (typed reads and writes, and the database for the service's own transactions), the
/// sandbox clock, the caches of granted decisions, the event stream and the SCA page links.
/// The HTTP layer builds it from its state (`App::domain`).
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    /// The sandbox clock.
    pub clock: &'a Clock,
    /// Typed reads and writes of the tables.
    pub store: &'a Store,
    /// The database, for a service's transactions ([`Db::write`]).
    pub db: &'a Db,
    /// Granted access decisions ([`access::Decisions`]).
    pub decisions: &'a access::Decisions,
    /// The event stream's sender ([`events::Events`]).
    pub events: &'a events::Events,
    /// The key of the SCA page addresses ([`sca_pages::PageKeys`]).
    pub pages: &'a sca_pages::PageKeys,
    /// Base of absolute links (`scaRedirect`), without a trailing slash; never taken from
    /// the request's `Host`.
    pub public_url: &'a str,
}

impl Ctx<'_> {
    /// The absolute address of the SCA page of authorisation `id` under `prefix` (`/sca` or
    /// `/payment-sca`): `{public_url}{prefix}/{token}` ([`sca_pages::PageKeys::href`]).
    pub fn sca_href(&self, prefix: &str, id: &str) -> String {
        self.pages.href(self.public_url, prefix, id)
    }
}

/// Bytes of AWS-LC's generator drawn at once into a thread's pool of id bits ([`id_random`]).
const ID_POOL_BYTES: usize = 512;

/// A thread's unused random bytes for ids: `bytes[used..]`.
struct IdPool {
    bytes: [u8; ID_POOL_BYTES],
    used: usize,
}

thread_local! {
    static ID_POOL: std::cell::RefCell<IdPool> = const {
        std::cell::RefCell::new(IdPool { bytes: [0; ID_POOL_BYTES], used: ID_POOL_BYTES })
    };
}

/// Fills `out` (at most [`ID_POOL_BYTES`]) with random bytes for an id: the next unused bytes
/// of this thread's pool, refilled from AWS-LC's generator (`aws_lc_rs::rand::fill`) when it
/// runs short. Each byte is handed out once and zeroed in the pool. Issue 23: a call of the
/// generator costs ~2,000 instructions whatever its size (its per-thread state, the fork
/// and reseed checks, the DRBG's update), and a payment creation took three (payment id,
/// authorisation id, session id); now one call serves ~14 payments. The pool is not shared
/// between threads; a child process forked from the sandbox would copy it, but the sandbox
/// forks only to `exec`.
///
/// Returns `false` (and `out` unspecified) when the generator fails or `out` is too long.
fn id_random(out: &mut [u8]) -> bool {
    if out.len() > ID_POOL_BYTES {
        return false;
    }
    ID_POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        if ID_POOL_BYTES - pool.used < out.len() {
            if aws_lc_rs::rand::fill(&mut pool.bytes).is_err() {
                return false;
            }
            pool.used = 0;
        }
        let range = pool.used..pool.used + out.len();
        out.copy_from_slice(&pool.bytes[range.clone()]);
        pool.bytes[range].fill(0);
        pool.used += out.len();
        true
    })
}

/// A new id of a consent, payment, signing basket or authorisation: a UUID version 7
/// (RFC 9562 §5.7), 48 bits of Unix milliseconds followed by 74 random bits (no counter, so
/// no id tells the next one).
///
/// Neither document prescribes an id format (the Berlin Group file: `consentId`,
/// `paymentId`, `authorisationId` are strings). Ids that grow with time land at the end of
/// their tables' indexes instead of on a random page of them, so a sandbox holding another
/// TPP's 100,000 payments creates the next one as fast as an empty one (issue 20); 74 random
/// bits keep them unguessable.
///
/// The random bits come from AWS-LC's generator (`aws_lc_rs::rand::fill`: a CTR-DRBG per
/// thread, seeded and reseeded from the operating system) through this thread's pool
/// ([`id_random`]), not from a `getrandom` system call per id as `uuid`'s own did (issue 23:
/// two or three per payment or consent creation); should it ever fail, from `uuid`'s.
pub fn new_id() -> uuid::Uuid {
    let mut random = [0u8; 10];
    if !id_random(&mut random) {
        return uuid::Uuid::new_v7(uuid::Timestamp::now(uuid::NoContext));
    }
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    uuid::Builder::from_unix_timestamp_millis(millis, &random).into_uuid()
}

/// A random UUID (version 4: 122 random bits) from AWS-LC's generator as [`new_id`]'s (no
/// system call per id): the session id of a payment or consent whose request has no
/// `TPP-Session-ID`. Should the generator ever fail, `uuid`'s own.
pub fn new_random_id() -> uuid::Uuid {
    let mut random = [0u8; 16];
    if !id_random(&mut random) {
        return uuid::Uuid::new_v4();
    }
    uuid::Builder::from_random_bytes(random).into_uuid()
}

#[cfg(test)]
mod id_tests {
    use super::new_id;

    #[test]
    fn new_ids_are_version_7_distinct_and_ordered_by_their_millisecond() {
        let first = new_id();
        assert_eq!(first.get_version_num(), 7);
        assert_eq!(first.get_variant(), uuid::Variant::RFC4122);
        std::thread::sleep(std::time::Duration::from_millis(2));
        let later: Vec<uuid::Uuid> = (0..1000).map(|_| new_id()).collect();
        assert!(
            later.iter().all(|id| *id > first),
            "a later millisecond sorts after"
        );
        let distinct: std::collections::HashSet<_> = later.iter().collect();
        assert_eq!(distinct.len(), later.len());
        let (secs, _) = first.get_timestamp().expect("a v7 timestamp").to_unix();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(now.abs_diff(secs) <= 1, "the id carries its creation time");
    }

    /// The pool hands out each random byte once: chunks of the ids' sizes, mixed so that
    /// refills fall inside and between them, never repeat (a repeat of 10 random bytes
    /// would mean a byte handed out twice); too long a request is refused.
    #[test]
    fn the_id_pool_never_hands_out_the_same_bytes_twice() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..2_000 {
            let mut chunk = vec![0u8; if i % 3 == 0 { 16 } else { 10 }];
            assert!(super::id_random(&mut chunk));
            assert!(seen.insert(chunk[..10].to_vec()), "chunk {i} repeated");
        }
        let mut big = vec![0u8; super::ID_POOL_BYTES];
        assert!(super::id_random(&mut big));
        assert!(big.iter().any(|b| *b != 0));
        let mut too_big = vec![0u8; super::ID_POOL_BYTES + 1];
        assert!(!super::id_random(&mut too_big));
    }

    /// Session ids without `TPP-Session-ID`: version 4, RFC 4122 variant, distinct.
    #[test]
    fn random_ids_are_version_4_and_distinct() {
        let random: std::collections::HashSet<_> =
            (0..1000).map(|_| super::new_random_id()).collect();
        assert_eq!(random.len(), 1000);
        assert!(
            random
                .iter()
                .all(|id| id.get_version_num() == 4 && id.get_variant() == uuid::Variant::RFC4122)
        );
    }
}
