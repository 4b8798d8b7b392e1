//! Following a response's `_links`: each entry found in the body ([`LinkRef`]), and the
//! catalogue operation its `href` leads to with the parameters it carries ([`match_href`]).

use crate::xs2a::links::names;
use crate::xs2a::operations::{OPERATIONS, Operation, ParamKind};

/// One entry of the response's `_links` (Berlin Group `_linksAll`): its name, `href` and
/// `verbs` (when the bank gives them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRef {
    /// Link name, e.g. `balances`, `next`, `scaRedirect`.
    pub name: String,
    /// Where it sits in the body, as a JSON path: `_links.balances`,
    /// `transactions._links.next`, `transactions.booked[0]._links.transactionDetails`.
    pub path: String,
    /// Absolute URL or path.
    pub href: String,
    /// HTTP methods allowed on it (`verbs`), often empty.
    pub verbs: Vec<String>,
}

/// What following a link means: the catalogue operation and the parameter values taken
/// from the `href` (path parameters and the operation's query parameters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkTarget {
    /// The operation whose method and path template match.
    pub op: &'static Operation,
    /// `(name, value)` for each parameter found in the `href`, percent-decoded.
    pub params: Vec<(String, String)>,
}

/// Finds the catalogue operation a link leads to: the `href`'s path (from `/v1/` on; an
/// absolute URL's origin and any base path before it are ignored) is matched against each
/// operation's path template, preferring the method the link implies
/// (`startAuthorisation` → POST, else the first of `verbs`, else GET) and, among equals,
/// the template with the most literal segments (so `/v1/accounts/{id}/balances` wins over
/// `/v1/{payment-service}/{payment-product}/{payment-id}`). Query parameters the operation
/// knows (e.g. `bookingStatus`, `limit`, `offset` of the paging links) are taken too.
///
/// `None` when no operation matches (e.g. `scaStatus`, which has no catalogue entry) or
/// the href has no `/v1/` path.
pub fn match_href(name: &str, href: &str, verbs: &[String]) -> Option<LinkTarget> {
    let (path, query) = split_href(href)?;
    let at = if path.starts_with("/v1/") {
        0
    } else {
        path.find("/v1/")?
    };
    let path = &path[at..];
    let segs: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let wanted = if name == names::START_AUTHORISATION {
        "POST".to_string()
    } else {
        verbs
            .first()
            .map(|v| v.to_ascii_uppercase())
            .unwrap_or_else(|| "GET".into())
    };
    let mut best: Option<(usize, LinkTarget)> = None;
    for op in OPERATIONS {
        let Some((literals, params)) = match_template(op.path, &segs) else {
            continue;
        };
        // Exact method first, then GET, then anything.
        let method_rank = if op.method == wanted {
            2
        } else if op.method == "GET" {
            1
        } else {
            0
        };
        let score = method_rank * 1000 + literals;
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, LinkTarget { op, params }));
        }
    }
    let (_, LinkTarget { op, mut params }) = best?;
    if let Some(q) = query {
        for (k, v) in url::form_urlencoded::parse(q.as_bytes()) {
            if op
                .params
                .iter()
                .any(|p| p.kind == ParamKind::Query && p.name == k)
            {
                params.push((k.into_owned(), v.into_owned()));
            }
        }
    }
    Some(LinkTarget { op, params })
}

/// `(path, query)` of an href: absolute URLs are parsed, paths split at `?` (a fragment is
/// dropped).
fn split_href(href: &str) -> Option<(String, Option<String>)> {
    let href = href.trim();
    if href.starts_with("http://") || href.starts_with("https://") {
        let u = url::Url::parse(href).ok()?;
        return Some((u.path().to_string(), u.query().map(str::to_string)));
    }
    let href = href.split('#').next().unwrap_or("");
    match href.split_once('?') {
        Some((p, q)) => Some((p.to_string(), Some(q.to_string()))),
        None => Some((href.to_string(), None)),
    }
}

/// Matches path segments against a template: the number of literal segments and the
/// captured `{name}` values, percent-decoded (one definition: [`crate::xs2a::paths::fit`]).
fn match_template(template: &str, segs: &[&str]) -> Option<(usize, Vec<(String, String)>)> {
    crate::xs2a::paths::fit(template, &segs.join("/"))
}

/// Every `_links` object in `v`, nested ones too (Berlin Group puts paging links under
/// `transactions._links` and `transactionDetails` under each transaction's `_links`), in
/// the body's order, each entry named with its JSON path (`prefix` is the path of `v`).
/// Entries without a string `href` are skipped.
pub(crate) fn collect_links(v: &serde_json::Value, prefix: &str, out: &mut Vec<LinkRef>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        serde_json::Value::Object(o) => {
            for (k, child) in o {
                if k == "_links"
                    && let Some(lo) = child.as_object()
                {
                    for (name, l) in lo {
                        let Some(href) = l.get("href").and_then(|h| h.as_str()) else {
                            continue;
                        };
                        let verbs = l
                            .get("verbs")
                            .and_then(|v| v.as_array())
                            .map(|a| {
                                a.iter()
                                    .filter_map(|x| x.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default();
                        out.push(LinkRef {
                            name: name.clone(),
                            path: format!("{}.{name}", join("_links")),
                            href: href.to_string(),
                            verbs,
                        });
                    }
                } else {
                    collect_links(child, &join(k), out);
                }
            }
        }
        serde_json::Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                collect_links(child, &format!("{prefix}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str, href: &str) -> Option<(&'static str, Vec<(String, String)>)> {
        match_href(name, href, &[]).map(|t| (t.op.id, t.params))
    }

    fn p(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn sandbox_links_match_catalogue_operations() {
        // accounts.rs / manage.rs / psu.rs: balances, transactions, account.
        assert_eq!(
            target("balances", "/v1/accounts/acc-1/balances"),
            Some(("accounts.balances", vec![p("account-id", "acc-1")]))
        );
        assert_eq!(
            target("transactions", "/v1/accounts/acc-1/transactions"),
            Some(("accounts.transactions", vec![p("account-id", "acc-1")]))
        );
        assert_eq!(
            target("account", "/v1/accounts/acc%201").map(|t| t.0),
            Some("accounts.get")
        );
        assert_eq!(
            target("account", "/v1/accounts").map(|t| t.0),
            Some("accounts.list")
        );
        // cards.rs
        assert_eq!(
            target("balances", "/v1/card-accounts/c-9/balances"),
            Some(("card-accounts.balances", vec![p("card-account-id", "c-9")]))
        );
        // accounts.rs paging: next / previous / first / last keep the query.
        assert_eq!(
            target(
                "next",
                "/v1/accounts/acc-1/transactions?bookingStatus=booked&dateFrom=2026-01-01&limit=200&offset=400"
            ),
            Some((
                "accounts.transactions",
                vec![
                    p("account-id", "acc-1"),
                    p("bookingStatus", "booked"),
                    p("dateFrom", "2026-01-01"),
                    p("limit", "200"),
                    p("offset", "400"),
                ]
            ))
        );
        // payments.rs: self, status, startAuthorisation (POST), absolute URLs with a base path.
        let pay = "/v1/payments/norwegian-domestic-credit-transfers/pay-7";
        let ids = vec![
            p("payment-service", "payments"),
            p("payment-product", "norwegian-domestic-credit-transfers"),
            p("payment-id", "pay-7"),
        ];
        assert_eq!(target("self", pay), Some(("payments.get", ids.clone())));
        assert_eq!(
            target("status", &format!("https://bank.example/xs2a{pay}/status")),
            Some(("payments.status", ids.clone()))
        );
        assert_eq!(
            target("startAuthorisation", &format!("{pay}/authorisations")),
            Some(("payments.start-authorisation", ids))
        );
        // baskets.rs (verbs given).
        assert_eq!(
            match_href(
                "startAuthorisation",
                "/v1/signing-baskets/b-1/authorisations",
                &["POST".to_string()]
            )
            .map(|t| t.op.id),
            Some("baskets.start-authorisation")
        );
        assert_eq!(
            match_href(
                "self",
                "/v1/signing-baskets/b-1",
                &["GET".into(), "DELETE".into()]
            )
            .map(|t| t.op.id),
            Some("baskets.get")
        );
        // No operation: scaStatus, a non-payment service, no /v1/.
        assert_eq!(
            target("scaStatus", &format!("{pay}/authorisations/a-1")),
            None
        );
        assert_eq!(target("x", "/v1/accounts-typo/a/b"), None);
        assert_eq!(target("x", "https://example.com/elsewhere"), None);
    }
}
