//! Fault injection: rules a tester sets so that the sandbox misbehaves on purpose, for the
//! next N matching requests or until cleared. The interface document has no such operations;
//! they are this sandbox's management tools (signed like the other `/v1/sandbox/*`
//! operations, with `PSP_AI` or `PSP_PI`). Rules are per TPP (issue 20): a rule answers only
//! the requests, SCA pages and payments of the TPP that added it, and a TPP lists, clears
//! and deletes only its own.
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | POST | `/v1/sandbox/faults` | 201 the rule (definition below, plus `id` and `remaining`) |
//! | GET | `/v1/sandbox/faults` | 200 `{"faults": [rule, ...]}`, oldest first |
//! | DELETE | `/v1/sandbox/faults` | 200 `{"cleared": n}` |
//! | DELETE | `/v1/sandbox/faults/{id}` | 204; 404 `RESOURCE_UNKNOWN` for an unknown id |
//!
//! A definition (JSON object; unknown fields, wrong types and values out of range answer 400
//! `FORMAT_ERROR` naming the field in the text and in `tppMessages[].path`):
//!
//! | Field | Meaning |
//! |---|---|
//! | `action` | required: `error`, `delay`, `drop` (requests); `rejectPayment`, `insufficientFunds`, `holdPayment` (payment execution); `scaCancel`, `scaFail` (SCA) |
//! | `method` | requests only: `GET`, `POST`, `PUT`, `DELETE`, `PATCH`; any when absent |
//! | `path` | a pattern of the request path (required for request actions; default `*`): `*` matches any characters, `/` too (`/v1/accounts*`), `{name}` one non-empty path segment (`/v1/accounts/{id}/balances`). Payment actions match `/v1/{payment-service}/{payment-product}` of the payment, SCA actions the SCA page (`/sca/{id}`, `/payment-sca/{id}`) |
//! | `psuId` | only requests with this `PSU-ID` header (payments: approved by this PSU-ID; SCA: the PSU who logged in) |
//! | `times` | answers left, 1 to [`MAX_TIMES`]; until cleared when absent |
//! | `status` | `error`: required, 400–599; `scaFail`: the redirect's `status` (default 401) |
//! | `code` | `error`: required; `scaFail`: default `PSU_CREDENTIALS_INVALID`. A Berlin Group code this project knows ([`MessageCode`]) |
//! | `text` | the `tppMessages` text (`error`), the redirect's `message` (`scaFail`), the payment's status reason (payment actions); at most 500 characters |
//! | `delayMs` | `delay`: required; `error`: optional wait before the answer; 1 to [`MAX_DELAY_MS`] |
//!
//! What each action does:
//!
//! - `error`: the request is answered with `status` and a Berlin Group error body
//!   (`tppMessages` with `code` and `text`) instead of the handler's answer;
//! - `delay`: the request waits `delayMs`, then gets its normal answer;
//! - `drop`: the connection is closed without an answer (the access log and the event
//!   stream show status 444, nginx's code for that);
//! - `rejectPayment`: the next matching payment executed (batch run, or approval of an
//!   instant payment) becomes `RJCT`; `insufficientFunds`: `ACCP` with `fundsAvailable:
//!   false` (interface document, States: "ACCP is named for payments rejected for lack of
//!   funds"); `holdPayment`: `PDNG` (on hold) instead of being executed, and it stays so past
//!   later batch runs until `POST /v1/sandbox/payments/{id}/release`;
//! - `scaCancel`: when the PSU approves a consent or a payment on the SCA page, the SCA ends
//!   as if the PSU had cancelled; `scaFail`: it ends with a failure redirect carrying
//!   `status`, `code` and `text`.
//!
//! Every answer a fault gives carries the header `X-Sandbox-Fault: <id>` ([`FAULT_HEADER`])
//! and is marked `injected: true` in the event stream ([`crate::sandbox::domain::events`]), so nobody mistakes
//! it for a rule of the sandbox; a payment outcome says the rule's id in its status reason.
//!
//! Request faults apply to requests that passed the signature check (a client's own
//! signature errors still show) and never to `/v1/sandbox/faults*` and `/v1/sandbox/events`
//! (so a fault cannot lock out its own removal). The first matching rule (oldest first)
//! answers. Rules are sandbox state: stored in SQLite ([`crate::sandbox::store::faults`]), so they
//! survive a restart on a file database, emptied by `POST /v1/sandbox/initialize`, and each
//! answer is counted down in a database transaction (two concurrent requests cannot both
//! take the last one).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use serde_json::{Value, json};

use crate::sandbox::App;
use crate::sandbox::errors::{ApiError, ApiPath};
use crate::sandbox::http::access_log::Injected;
use crate::sandbox::http::auth::Tpp;
use crate::xs2a::error::{ErrorBody, MessageCode};

use crate::sandbox::domain::faults::all;
pub use crate::sandbox::domain::faults::{
    ACTIONS, Action, Definition, FIELDS, Fault, Faults, MAX_DELAY_MS, MAX_STARS, MAX_TIMES,
    METHODS, PaymentOutcome, ScaOutcome, matches, message_code, parse, payment_outcome,
    sca_outcome,
};

/// The response header naming the fault rule that answered.
pub const FAULT_HEADER: &str = "x-sandbox-fault";

/// Paths no request rule applies to.
fn exempt(path: &str) -> bool {
    path.starts_with("/v1/sandbox/faults") || path == "/v1/sandbox/events"
}

/// Marks the answer of fault `id`: the [`FAULT_HEADER`] header and the [`Injected`]
/// extension (read by the access log for the event stream).
pub fn mark(response: &mut Response, id: &str) {
    if let Ok(v) = HeaderValue::from_str(id) {
        response.headers_mut().insert(FAULT_HEADER, v);
    }
    response.extensions_mut().insert(Injected(id.to_string()));
}

/// A body that fails at once: hyper closes the connection without sending the response.
struct Dropped;

impl axum::body::HttpBody for Dropped {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        Poll::Ready(Some(Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "connection dropped by a sandbox fault",
        ))))
    }
}

/// The middleware answering request faults (run inside the signature check by
/// [`crate::sandbox::router`]; `next` runs the routes).
///
/// With no request rule (or on an exempt path) the future is `next`'s own: the read path
/// pays one flag read, and no boxed future of its own (~0.9 KB allocated and copied per
/// request, issue 23). Otherwise a boxed future looks the rules up when first polled (in
/// the request's world, [`crate::sandbox::clock::current_world`]).
pub fn inject<F, Fut>(app: &App, req: Request, next: F) -> impl Future<Output = Response>
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    use futures_util::future::Either;
    if !app.faults.any_request_rule() || exempt(req.uri().path()) {
        Either::Left(next(req))
    } else {
        Either::Right(Box::pin(inject_rules(app, req, next)))
    }
}

/// [`inject`] when request rules exist.
async fn inject_rules<F, Fut>(app: &App, req: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let path = req.uri().path();
    let psu = req
        .headers()
        .get(crate::xs2a::headers::PSU_ID)
        .and_then(|v| v.to_str().ok());
    // The world of the request (the verified TPP, or the SCA page's TPP): only its rules.
    let Some(world) = crate::sandbox::clock::current_world() else {
        return next(req).await;
    };
    let Some(fault) = app
        .faults
        .take_request(&app.db, &world, req.method().as_str(), path, psu)
    else {
        return next(req).await;
    };
    let d = &fault.definition;
    if let Some(ms) = d.delay_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let mut response = match d.action {
        Action::Drop => {
            let mut r = Response::new(Body::new(Dropped));
            // Never sent; logged as 444, nginx's "connection closed without response".
            *r.status_mut() = StatusCode::from_u16(444).unwrap_or(StatusCode::BAD_REQUEST);
            r.extensions_mut()
                .insert(crate::sandbox::http::observe::Unobserved);
            r
        }
        Action::Error => {
            let code = d
                .code
                .as_deref()
                .and_then(message_code)
                .unwrap_or(MessageCode::ServiceBlocked);
            ApiError {
                status: d
                    .status
                    .and_then(|s| StatusCode::from_u16(s).ok())
                    .unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
                body: ErrorBody::new(code, fault.text()),
            }
            .into_response()
        }
        _ => next(req).await,
    };
    mark(&mut response, &fault.id);
    response
}

/// The fault routes (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/sandbox/faults", get(list).post(create).delete(clear))
        .route("/v1/sandbox/faults/{id}", delete(delete_one))
}

fn now_secs(app: &App) -> i64 {
    app.clock
        .now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// `POST /v1/sandbox/faults`: adds a rule. 201 with the rule.
///
/// Errors: 400 `FORMAT_ERROR` naming the field; 503 when the database fails.
async fn create(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    body: Bytes,
) -> Result<(StatusCode, Json<Fault>), ApiError> {
    let v: Value = serde_json::from_slice(&body).map_err(|e| {
        crate::sandbox::http::payments::body::field_error(
            "body",
            format!("the body must be a JSON object defining a fault: {e}"),
        )
    })?;
    let definition = parse(&v)?;
    let fault = Fault {
        id: uuid::Uuid::new_v4().to_string(),
        remaining: definition.times,
        definition,
        tpp: tpp.id.0.to_string(),
    };
    app.faults.add(&app.db, &fault, now_secs(&app))?;
    Ok((StatusCode::CREATED, Json(fault)))
}

/// `GET /v1/sandbox/faults`: every rule of the calling TPP, oldest first.
async fn list(State(app): State<Arc<App>>, tpp: Tpp) -> Result<Json<Value>, ApiError> {
    let mut faults = app.db.read(all)?;
    faults.retain(|f| *f.tpp == *tpp.id.0);
    Ok(Json(json!({ "faults": faults })))
}

/// `DELETE /v1/sandbox/faults`: removes every rule of the calling TPP.
async fn clear(State(app): State<Arc<App>>, tpp: Tpp) -> Result<Json<Value>, ApiError> {
    let n = app.faults.clear_of(&app.db, &tpp.id.0)?;
    Ok(Json(json!({ "cleared": n })))
}

/// `DELETE /v1/sandbox/faults/{id}`: removes one rule.
///
/// Errors: 404 `RESOURCE_UNKNOWN` for an unknown id.
async fn delete_one(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    let found = app.faults.remove(&app.db, &id, &tpp.id.0)?;
    if found {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!(
            "no fault rule has the id {id:?}"
        )))
    }
}
