//! The HTTP layer of the sandbox: the handlers of every route, the signature check, the SCA
//! pages and the server loop. Handlers call [`super::domain`] (and read [`super::store`]);
//! nothing below imports this layer.

pub mod access_log;
pub mod accounts;
pub mod auth;
pub mod baskets;
pub mod batch;
pub mod caller;
pub mod cards;
pub mod consent;
pub mod customers;
pub mod faults;
pub mod health;
pub mod identity;
pub mod manage;
pub mod observe;
pub mod operator;
pub mod pages;
pub mod payment_sca;
pub mod payments;
pub mod psu;
pub mod reads;
pub mod replay;
pub mod router;
pub mod sca;
pub mod sca_guard;
pub mod sca_pages;
pub mod serve;
pub mod snapshot;
pub mod state;
pub mod subscribe;
