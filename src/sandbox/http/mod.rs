//! The HTTP layer of the sandbox: the handlers of every route, the signature check, the SCA
//! pages and the server loop. Handlers call [`super::domain`] (and read [`super::store`]);
//! nothing below imports this layer.

pub(crate) mod access_log;
pub(crate) mod accounts;
pub mod auth;
pub(crate) mod baskets;
pub(crate) mod batch;
pub(crate) mod caller;
pub(crate) mod cards;
pub(crate) mod consent;
pub(crate) mod customers;
pub mod faults;
pub(crate) mod health;
pub(crate) mod identity;
pub(crate) mod manage;
pub mod observe;
pub mod operator;
pub(crate) mod pages;
pub(crate) mod payment_sca;
pub mod payments;
pub(crate) mod psu;
pub mod reads;
pub mod replay;
pub(crate) mod router;
pub(crate) mod sca;
pub(crate) mod sca_guard;
pub(crate) mod sca_pages;
pub mod serve;
pub(crate) mod snapshot;
pub(crate) mod state;
pub(crate) mod subscribe;
pub mod tls;
