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
