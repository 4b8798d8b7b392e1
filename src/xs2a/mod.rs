//! The XS2A protocol model shared by the console and the embedded sandbox: error bodies
//! (`tppMessages`), `_links`, header names, resource shapes, SCA redirect parameters and the
//! operation catalogue.

pub mod amount;
pub mod charset;
pub mod check_digits;
pub mod error;
pub mod headers;
pub mod links;
pub mod model;
pub mod operations;
pub mod redirect;
