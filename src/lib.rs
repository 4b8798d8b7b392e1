//! psd2-console: a terminal console for banks' PSD2 (NextGenPSD2 XS2A v1.3) interfaces, with
//! an embedded sandbox ASPSP.
//!
//! The client ([`client`], [`tui`]) and the sandbox ([`sandbox`]) share the protocol model
//! ([`xs2a`]) and the signing rules ([`signing`]), so each wire shape and rule has one
//! definition used on both sides. Neither imports the other: [`embedded`], the composition
//! layer above both, starts the embedded sandbox for the console.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod case;
pub mod cert;
pub mod client;
pub mod doctor;
pub mod embedded;
pub mod flow;
pub mod fsutil;
pub mod http_server;
pub mod lessons;
pub mod lint;
pub mod logging;
pub mod profile;
pub mod redirect;
pub mod sandbox;
pub mod sandbox_events;
pub mod signing;
pub mod terminal;
pub mod tui;
pub mod xs2a;
