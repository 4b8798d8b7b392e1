//! The state browser's read: every customer (with its agreements), consent, payment and
//! signing basket of the sandbox, with their statuses, in one signed management request.
//! The interface document has no such operation; it is this sandbox's tool for the console's
//! monitor screen (issue 11).
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | GET | `/v1/sandbox/state` | 200 `{now, customers, consents, payments, baskets, totals, _links?}` |
//!
//! - `now`: the sandbox clock (RFC 3339);
//! - `customers`: sandbox customer elements with their agreements (as `GET
//!   /v1/sandbox/customers?withAccounts=false`);
//! - `consents`: `{consentId, tpp, psuId, consentStatus, createdAt}`, `consentStatus` as `GET
//!   /v1/consents/{consentId}/status` would answer its TPP now;
//! - `payments`: `{paymentId, tpp, paymentService, paymentProduct, transactionStatus,
//!   scaStatus, instructedAmount, psuId, createdAt}` (`scaStatus` of the latest
//!   authorisation, `null` before one);
//! - `baskets`: `{basketId, tpp, transactionStatus, scaStatus, paymentIds, createdAt}`
//!   (`transactionStatus`: `ACTC` once authorised, `CANC` when cancelled, else `RCVD`);
//! - `totals`: `{consents, payments, baskets}`, how many each list holds in all;
//! - `_links`: `nextConsents`, `nextPayments`, `nextBaskets` (`{href}`), each present while
//!   its list has more entries than this page gave.
//!
//! Paginated (issue 20: the unpaginated answer grew to 20 MB and 1.8 s at 100,000 consents):
//! each list is oldest first (`createdAt`, then id) and gives at most `limit` entries.
//!
//! | Query parameter | Meaning |
//! |---|---|
//! | `limit` | entries per list, 1 to [`MAX_LIMIT`] (default [`DEFAULT_LIMIT`]) |
//! | `list` | `consents`, `payments` or `baskets`: only that list (and `now`, `totals`) |
//! | `after` | with `list`: the cursor of a `next…` link, the page after it |
//!
//! A bad value is 400 `FORMAT_ERROR`. Pages are keyset-paginated (`(createdAt, id)` after the
//! cursor, through an index), so page 500 costs what page 1 does, and an entry created while
//! paging is never listed twice.
//!
//! Signed like every `/v1` request, with a PSD2 role like every sandbox operation
//! ([`crate::sandbox::http::auth`]). It lists every TPP's resources, so, like the snapshot
//! ([`crate::sandbox::http::snapshot`]), it is on the operator plane ([`crate::sandbox::http::operator`]): a loopback peer
//! address or the operator token; any other caller gets 403 `SERVICE_BLOCKED`. Read only:
//! nothing changes, not even the lazily simulated batch runs.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde_json::{Map, Value, json};

use crate::sandbox::App;
use crate::sandbox::domain::settlement::{now_secs, rfc3339};
use crate::sandbox::domain::views::element;
use crate::sandbox::errors::{ApiError, QueryPairs};
use crate::sandbox::http::auth::Tpp;
use crate::sandbox::http::operator::Operator;
use crate::sandbox::store::overview;
use crate::sandbox::store::payments::status;
use crate::xs2a::model::Amount;

/// The state route (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new().route("/v1/sandbox/state", get(state))
}

/// Entries per list when `limit` is absent.
pub const DEFAULT_LIMIT: usize = 200;

/// Largest `limit`.
pub const MAX_LIMIT: usize = 1000;

/// The query of `GET /v1/sandbox/state`: `limit`, `list`, `after`.
struct Query {
    limit: usize,
    list: Option<overview::List>,
    /// `(createdAt seconds, id)` of the last entry of the previous page.
    after: Option<(i64, String)>,
}

impl Query {
    /// Errors: 400 `FORMAT_ERROR` for a `limit` outside 1..=[`MAX_LIMIT`], an unknown
    /// `list`, an `after` that is not a cursor of this sandbox or without `list`.
    fn parse(q: &QueryPairs) -> Result<Query, ApiError> {
        let limit = match q.get("limit") {
            None => DEFAULT_LIMIT,
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_LIMIT).contains(n))
                .ok_or_else(|| {
                    ApiError::format(format!(
                        "query parameter limit={v:?} must be a whole number from 1 to {MAX_LIMIT}"
                    ))
                })?,
        };
        let list = match q.get("list") {
            None => None,
            Some(v) => Some(overview::List::parse(v).ok_or_else(|| {
                ApiError::format(format!(
                    "query parameter list={v:?} must be consents, payments or baskets"
                ))
            })?),
        };
        let after = match q.get("after") {
            None => None,
            Some(v) => {
                if list.is_none() {
                    return Err(ApiError::format(
                        "query parameter after needs list (consents, payments or baskets): \
                         follow the _links of the previous page",
                    ));
                }
                Some(parse_cursor(v).ok_or_else(|| {
                    ApiError::format(format!(
                        "query parameter after={v:?} is not a cursor of this list; follow the \
                         _links of the previous page"
                    ))
                })?)
            }
        };
        Ok(Query { limit, list, after })
    }
}

/// A page cursor: `{createdAt seconds}.{id}` of the last entry of a page.
fn cursor(created_at: i64, id: &str) -> String {
    format!("{created_at}.{id}")
}

fn parse_cursor(v: &str) -> Option<(i64, String)> {
    let (at, id) = v.split_once('.')?;
    let id_ok = !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    Some((at.parse().ok()?, id.to_string())).filter(|_| id_ok)
}

/// One page of `list` (JSON entries) and the cursor after its last entry when more follow.
fn page(
    app: &App,
    list: overview::List,
    after: Option<(i64, &str)>,
    limit: usize,
) -> Result<(Vec<Value>, Option<String>), ApiError> {
    // One more than asked tells whether another page follows.
    let n = limit + 1;
    let mut rows: Vec<(i64, String, Value)> = match list {
        overview::List::Consents => {
            let rows = app
                .db
                .read(|c| overview::Page { after, limit: n }.consent_resources(c))?;
            rows.iter()
                .map(|r| {
                    Ok((
                        r.created_at,
                        r.id.clone(),
                        json!({
                            "consentId": r.id,
                            "tpp": r.tpp,
                            "psuId": r.psu_id,
                            "consentStatus": crate::sandbox::http::consent::status_now(app, &r.tpp, &r.id)?,
                            "createdAt": rfc3339(r.created_at),
                        }),
                    ))
                })
                .collect::<Result<_, ApiError>>()?
        }
        overview::List::Payments => app
            .db
            .read(|c| overview::Page { after, limit: n }.payments(c))?
            .into_iter()
            .map(|p| {
                let v = json!({
                    "paymentId": p.id,
                    "tpp": p.tpp,
                    "paymentService": p.service,
                    "paymentProduct": p.product,
                    "transactionStatus": p.status,
                    "scaStatus": p.sca_status,
                    "instructedAmount": Amount::from_minor(&p.currency, p.amount_minor),
                    "psuId": p.psu_id,
                    "createdAt": rfc3339(p.created_at),
                });
                (p.created_at, p.id, v)
            })
            .collect(),
        overview::List::Baskets => app
            .db
            .read(|c| overview::Page { after, limit: n }.baskets(c))?
            .into_iter()
            .map(|b| {
                let tx = match (b.cancelled, b.authorised) {
                    (true, _) => status::CANC,
                    (false, true) => status::ACTC,
                    (false, false) => status::RCVD,
                };
                let v = json!({
                    "basketId": b.id,
                    "tpp": b.tpp,
                    "transactionStatus": tx,
                    "scaStatus": b.sca_status,
                    "paymentIds": b.payments,
                    "createdAt": rfc3339(b.created_at),
                });
                (b.created_at, b.id, v)
            })
            .collect(),
    };
    let next = if rows.len() > limit {
        rows.truncate(limit);
        rows.last().map(|(at, id, _)| cursor(*at, id))
    } else {
        None
    };
    Ok((rows.into_iter().map(|(_, _, v)| v).collect(), next))
}

/// The link name of the next page of `list`: `nextConsents`, `nextPayments`, `nextBaskets`.
fn next_link_name(list: overview::List) -> &'static str {
    match list {
        overview::List::Consents => "nextConsents",
        overview::List::Payments => "nextPayments",
        overview::List::Baskets => "nextBaskets",
    }
}

/// `GET /v1/sandbox/state` (see the module documentation).
///
/// Errors: 400 `FORMAT_ERROR` for a bad `limit`, `list` or `after`; 403 `SERVICE_BLOCKED` off
/// the operator plane; 503 `SERVICE_BLOCKED` when the database cannot be read.
async fn state(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    _operator: Operator,
    query: QueryPairs,
) -> Result<Json<Value>, ApiError> {
    let q = Query::parse(&query)?;
    let mut out = Map::new();
    out.insert("now".into(), json!(rfc3339(now_secs(&app.domain()))));
    if q.list.is_none() {
        let customers = app
            .store
            .customers()?
            .iter()
            .map(|c| element(&app.domain(), c, false, true))
            .collect::<Result<Vec<_>, _>>()?;
        out.insert("customers".into(), json!(customers));
    }
    let mut totals = Map::new();
    let mut links = Map::new();
    for list in overview::List::ALL {
        if q.list.is_some_and(|l| l != list) {
            continue;
        }
        let after = q.after.as_ref().map(|(at, id)| (*at, id.as_str()));
        let (entries, next) = page(&app, list, after, q.limit)?;
        out.insert(list.name().into(), Value::Array(entries));
        totals.insert(
            list.name().into(),
            json!(app.db.read(|c| overview::count(c, list))?),
        );
        if let Some(next) = next {
            links.insert(
                next_link_name(list).into(),
                json!({"href": format!(
                    "/v1/sandbox/state?list={}&limit={}&after={next}",
                    list.name(),
                    q.limit
                )}),
            );
        }
    }
    out.insert("totals".into(), Value::Object(totals));
    if !links.is_empty() {
        out.insert("_links".into(), Value::Object(links));
    }
    Ok(Json(Value::Object(out)))
}
