//! The XS2A protocol model shared by the console and the embedded sandbox: error bodies
//! (`tppMessages`), `_links`, header names, resource shapes, SCA redirect parameters, the
//! status vocabulary and its verdict ([`status`]), the
//! operation catalogue, and every identifier and check-digit rule ([`identifiers`],
//! [`check_digits`], [`amount`]).

pub mod amount;
pub mod charset;
pub mod check_digits;
pub mod error;
pub(crate) mod fields;
pub mod headers;
pub(crate) mod identifiers;
pub mod limits;
pub mod links;
pub mod model;
pub mod operations;
pub(crate) mod paths;
pub(crate) mod payment;
pub mod redirect;
pub mod status;
pub(crate) mod tree;
pub mod wire;
