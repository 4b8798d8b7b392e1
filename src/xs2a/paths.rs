//! Path templates (`/v1/accounts/{account-id}/balances`) matched against request paths, on
//! `matchit`: the one definition behind the operation catalogue's
//! [`super::operations::find_request`], the response pane's links and the conformance lint's
//! Berlin Group operations.
//!
//! A `{name}` segment takes any non-empty segment, except `{payment-service}`, which takes
//! only the Berlin Group payment services ([`PAYMENT_SERVICES`], BG 1.3.11 `paymentService`);
//! where templates overlap, literal segments win over `{name}` segments (so
//! `/v1/payments/norwegian-domestic-credit-transfers` over
//! `/v1/{payment-service}/{payment-product}`). Values are percent-decoded (invalid UTF-8
//! replaced).

use std::collections::HashMap;
use std::sync::LazyLock;

/// Values of the `{payment-service}` path parameter (Berlin Group 1.3.11 `paymentService`).
pub const PAYMENT_SERVICES: [&str; 3] = ["payments", "bulk-payments", "periodic-payments"];

/// The name of the path parameter restricted to [`PAYMENT_SERVICES`], and its segment.
const PAYMENT_SERVICE_NAME: &str = "payment-service";
const PAYMENT_SERVICE: &str = "{payment-service}";

/// One registered template: the caller's value, the number of literal segments of the
/// template and its `{name}` segments in order (the `{payment-service}` one already fixed
/// by the expansion).
#[derive(Debug)]
struct Entry<T> {
    value: T,
    literals: usize,
    names: Vec<(String, Option<&'static str>)>,
}

/// A set of path templates per HTTP method, each with a value of the caller's (an
/// operation, an index).
#[derive(Debug)]
pub(crate) struct PathTemplates<T> {
    /// (method in upper case, its router), in the order methods were first inserted.
    by_method: Vec<(String, matchit::Router<Entry<T>>)>,
}

impl<T> Default for PathTemplates<T> {
    fn default() -> Self {
        PathTemplates {
            by_method: Vec::new(),
        }
    }
}

/// A match: the template's value, its number of literal segments and the values of its
/// `{name}` segments as (name, value), percent-decoded, in template order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<'a, T> {
    /// The value the template was inserted with.
    pub value: &'a T,
    /// Literal (non-`{name}`) segments of the template; more is more specific.
    pub literals: usize,
    /// `(name, value)` of each `{name}` segment.
    pub params: Vec<(String, String)>,
}

impl<T: Clone> PathTemplates<T> {
    /// An empty set.
    pub fn new() -> Self {
        PathTemplates::default()
    }

    /// Adds `template` (a path such as `/v1/{payment-service}/{payment-product}`) for
    /// `method` (any case). The same method and template again keeps the first value.
    ///
    /// Errors: the template is not a valid `matchit` route (an unclosed `{`, a `{name}` that
    /// is not a whole segment, two segments with one name), or it conflicts with one already
    /// inserted ([`matchit::InsertError`]).
    pub fn insert(
        &mut self,
        method: &str,
        template: &str,
        value: T,
    ) -> Result<(), matchit::InsertError> {
        let method = method.to_ascii_uppercase();
        let at = match self.by_method.iter().position(|(m, _)| *m == method) {
            Some(at) => at,
            None => {
                self.by_method.push((method, matchit::Router::new()));
                self.by_method.len() - 1
            }
        };
        let router = &mut self.by_method[at].1;
        let segments: Vec<&str> = template.split('/').collect();
        let literals = segments
            .iter()
            .filter(|s| !s.is_empty() && !s.starts_with('{'))
            .count();
        let expansions: Vec<Option<&'static str>> = if segments.contains(&PAYMENT_SERVICE) {
            PAYMENT_SERVICES.iter().copied().map(Some).collect()
        } else {
            vec![None]
        };
        for service in expansions {
            let route: Vec<&str> = segments
                .iter()
                .map(|s| match service {
                    Some(v) if *s == PAYMENT_SERVICE => v,
                    _ => s,
                })
                .collect();
            let names = segments
                .iter()
                .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
                .map(|n| (n.to_string(), service.filter(|_| n == PAYMENT_SERVICE_NAME)))
                .collect();
            let entry = Entry {
                value: value.clone(),
                literals,
                names,
            };
            let route = route.join("/");
            match router.insert(route.as_str(), entry) {
                Ok(()) => {}
                Err(matchit::InsertError::Conflict { with }) if with == route => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl<T> PathTemplates<T> {
    /// The template of `method` (any case) that `path` fits (a query or fragment and one
    /// trailing slash are ignored); `None` when none fits, or a `{name}` segment would be
    /// empty.
    pub fn at(&self, method: &str, path: &str) -> Option<Found<'_, T>> {
        let router = self
            .by_method
            .iter()
            .find(|(m, _)| m.eq_ignore_ascii_case(method))?;
        lookup(&router.1, path)
    }

    /// Every method with a template `path` fits, with its match, in insertion order of the
    /// methods.
    pub(crate) fn at_any<'a>(
        &'a self,
        path: &str,
    ) -> impl Iterator<Item = (&'a str, Found<'a, T>)> {
        self.by_method
            .iter()
            .filter_map(move |(m, r)| Some((m.as_str(), lookup(r, path)?)))
    }
}

/// Looks `path` up in one method's router.
fn lookup<'a, T>(router: &'a matchit::Router<Entry<T>>, path: &str) -> Option<Found<'a, T>> {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let path = match path.strip_suffix('/') {
        Some(p) if !p.is_empty() => p,
        _ => path,
    };
    let m = router.at(path).ok()?;
    let mut params = Vec::with_capacity(m.value.names.len());
    for (name, fixed) in &m.value.names {
        let value = match fixed {
            Some(v) => (*v).to_string(),
            None => {
                let raw = m.params.get(name)?;
                if raw.is_empty() {
                    return None;
                }
                percent_encoding::percent_decode_str(raw)
                    .decode_utf8_lossy()
                    .into_owned()
            }
        };
        params.push((name.clone(), value));
    }
    Some(Found {
        value: &m.value.value,
        literals: m.value.literals,
        params,
    })
}

/// Whether `path` fits the one `template`: its number of literal segments and its `{name}`
/// values (as [`Found`]); `None` when it does not fit or the template is not valid. The
/// catalogue's templates are compiled once; any other template is compiled per call.
pub fn fit(template: &str, path: &str) -> Option<(usize, Vec<(String, String)>)> {
    static CATALOGUE: LazyLock<HashMap<&'static str, PathTemplates<()>>> = LazyLock::new(|| {
        super::operations::OPERATIONS
            .iter()
            .filter_map(|op| Some((op.path, single(op.path)?)))
            .collect()
    });
    let found = |t: &PathTemplates<()>| t.at("", path).map(|f| (f.literals, f.params));
    match CATALOGUE.get(template) {
        Some(t) => found(t),
        None => found(&single(template)?),
    }
}

/// A set of one template (method `""`).
fn single(template: &str) -> Option<PathTemplates<()>> {
    let mut t = PathTemplates::new();
    t.insert("", template, ()).ok()?;
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payment_service_is_restricted_and_literals_win() {
        let mut t = PathTemplates::new();
        t.insert("POST", "/v1/{payment-service}/{payment-product}", 1)
            .unwrap();
        t.insert(
            "post",
            "/v1/payments/norwegian-domestic-credit-transfers",
            2,
        )
        .unwrap();
        t.insert("GET", "/v1/accounts/{account-id}", 3).unwrap();
        let f = t
            .at("POST", "/v1/bulk-payments/sepa-credit-transfers")
            .unwrap();
        assert_eq!(*f.value, 1);
        assert_eq!(
            f.params,
            [
                ("payment-service".to_string(), "bulk-payments".to_string()),
                ("payment-product".into(), "sepa-credit-transfers".into())
            ]
        );
        assert_eq!(
            *t.at("POST", "/v1/payments/norwegian-domestic-credit-transfers/")
                .unwrap()
                .value,
            2
        );
        assert!(t.at("POST", "/v1/accounts/sepa-credit-transfers").is_none());
        assert!(t.at("PUT", "/v1/payments/x").is_none());
        let f = t.at("get", "/v1/accounts/a%20b?x=1").unwrap();
        assert_eq!(f.params, [("account-id".to_string(), "a b".to_string())]);
        assert!(t.at("GET", "/v1/accounts/").is_none());
        assert_eq!(t.at_any("/v1/accounts/a").count(), 1);
    }

    #[test]
    fn same_template_twice_keeps_the_first() {
        let mut t = PathTemplates::new();
        t.insert("GET", "/v1/a/{x}", 1).unwrap();
        t.insert("GET", "/v1/a/{x}", 2).unwrap();
        assert_eq!(*t.at("GET", "/v1/a/b").unwrap().value, 1);
        assert!(t.insert("GET", "/v1/a/{y}", 3).is_err());
    }

    #[test]
    fn fit_matches_one_template() {
        assert_eq!(
            fit(
                "/v1/{payment-service}/{payment-product}/{payment-id}",
                "/v1/accounts/a/b"
            ),
            None
        );
        assert_eq!(
            fit("/v1/x/{id}", "/v1/x/%41").map(|(_, p)| p),
            Some(vec![("id".to_string(), "A".to_string())])
        );
    }

    /// `{payment-service}` takes only the payment services for every caller: the catalogue
    /// (`doctor`, `send`), the response pane's links and the lint's Berlin Group routes.
    #[test]
    fn payment_service_restriction_holds_for_all_callers() {
        use crate::xs2a::operations::find_request;
        let not_a_service = "/v1/accounts/a1/t1";
        assert!(find_request("GET", not_a_service).is_none());
        assert!(crate::tui::response::match_href("self", not_a_service, &[]).is_none());
        let spec = crate::lint::spec().unwrap();
        assert_eq!(spec.schema_for("GET", not_a_service, 200), None);
        let service = "/v1/bulk-payments/sepa-credit-transfers/p1";
        assert!(find_request("GET", service).is_some());
        assert!(crate::tui::response::match_href("self", service, &[]).is_some());
        assert!(spec.schema_for("GET", service, 200).is_some());
        assert_eq!(
            spec.schema_for(
                "GET",
                "/v1/{payment-service}/{payment-product}/{payment-id}",
                200
            ),
            spec.schema_for("GET", service, 200)
        );
    }
}
