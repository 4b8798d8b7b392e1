//! `_links` (Berlin Group `_linksAll`, `hrefType`): a map from link name to `{ "href": ... }`.
//!
//! The interface document's basket and sandbox-customer tables add `verbs`, a list of HTTP
//! methods; it is kept when present and omitted otherwise.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One link: `href` (absolute URL or path) and optional `verbs` (`GET`, `PUT`, `POST`, `DELETE`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// Absolute URL or path.
    pub href: String,
    /// HTTP methods allowed on it (interface document's basket and customer tables).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verbs: Vec<String>,
}

impl Link {
    /// A link with no verbs.
    pub fn href(href: impl Into<String>) -> Self {
        Link {
            href: href.into(),
            verbs: Vec::new(),
        }
    }

    /// A link with the given verbs.
    pub(crate) fn with_verbs(href: impl Into<String>, verbs: &[&str]) -> Self {
        Link {
            href: href.into(),
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
        }
    }
}

/// Link name → link, serialized as a JSON object in name order.
pub(crate) type Links = BTreeMap<String, Link>;

/// Well-known link names (Berlin Group `_linksAll`).
pub mod names {
    /// Where the PSU's browser goes for the SCA.
    pub const SCA_REDIRECT: &str = "scaRedirect";
    /// Where to `POST` to start an authorisation.
    pub const START_AUTHORISATION: &str = "startAuthorisation";
    /// The resource itself.
    pub const SELF: &str = "self";
    /// The resource's status.
    pub const STATUS: &str = "status";
    /// The account a report is of.
    pub const ACCOUNT: &str = "account";
    /// The account's balances.
    pub const BALANCES: &str = "balances";
    /// The account's transactions.
    pub const TRANSACTIONS: &str = "transactions";
    /// First page of a paged report.
    pub const FIRST: &str = "first";
    /// Next page.
    pub const NEXT: &str = "next";
    /// Previous page.
    pub const PREVIOUS: &str = "previous";
    /// Last page.
    pub const LAST: &str = "last";
}

/// `_links.scaRedirect` of any JSON body (error or success), whatever its shape (`None`: the
/// body has none).
pub(crate) fn sca_redirect_link(body: &serde_json::Value) -> Option<&serde_json::Value> {
    body.get("_links")?.get(names::SCA_REDIRECT)
}

/// `_links.scaRedirect.href` of any JSON body (error or success); a link that is a bare
/// string (not an `hrefType` object) is taken as the href.
pub fn sca_redirect_of(body: &serde_json::Value) -> Option<String> {
    let link = sca_redirect_link(body)?;
    link.get("href")
        .and_then(serde_json::Value::as_str)
        .or_else(|| link.as_str())
        .map(str::to_string)
}
