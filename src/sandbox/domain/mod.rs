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
pub mod seed;
pub mod seed_file;
pub mod settlement;
pub mod views;
