//! The state browser's read: every customer (with its agreements), consent, payment and
//! signing basket of the sandbox, with their statuses, in one signed management request.
//! The interface document has no such operation; it is this sandbox's tool for the console's
//! monitor screen (issue 11).
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | GET | `/v1/sandbox/state` | 200 `{now, customers, consents, payments, baskets}` |
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
//!   (`transactionStatus`: `ACTC` once authorised, `CANC` when cancelled, else `RCVD`).
//!
//! Signed like every `/v1` request, with a PSD2 role like every sandbox operation
//! ([`super::auth`]). It lists every TPP's resources, so, like the snapshot
//! ([`super::snapshot`]), it is on the operator plane ([`super::operator`]): a loopback peer
//! address or the operator token; any other caller gets 403 `SERVICE_BLOCKED`. Read only:
//! nothing changes, not even the lazily simulated batch runs.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde_json::{Value, json};

use super::App;
use super::auth::Tpp;
use super::domain::settlement::{now_secs, rfc3339};
use super::domain::views::element;
use super::errors::ApiError;
use super::operator::Operator;
use super::store::overview;
use super::store::payments::status;
use crate::xs2a::model::Amount;

/// The state route (merged into [`super::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new().route("/v1/sandbox/state", get(state))
}

/// `GET /v1/sandbox/state` (see the module documentation).
///
/// Errors: 403 `SERVICE_BLOCKED` off the operator plane; 503 `SERVICE_BLOCKED` when the
/// database cannot be read.
async fn state(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    _operator: Operator,
) -> Result<Json<Value>, ApiError> {
    let customers = app
        .store
        .customers()?
        .iter()
        .map(|c| element(&app, c, false, true))
        .collect::<Result<Vec<_>, _>>()?;
    let (consents, payments, baskets) = app.db.read(|c| {
        Ok((
            overview::consent_resources(c)?,
            overview::payments(c)?,
            overview::baskets(c)?,
        ))
    })?;
    let consents = consents
        .iter()
        .map(|r| {
            Ok(json!({
                "consentId": r.id,
                "tpp": r.tpp,
                "psuId": r.psu_id,
                "consentStatus": super::consent::status_now(&app, &r.tpp, &r.id)?,
                "createdAt": rfc3339(r.created_at),
            }))
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    let payments: Vec<Value> = payments
        .iter()
        .map(|p| {
            json!({
                "paymentId": p.id,
                "tpp": p.tpp,
                "paymentService": p.service,
                "paymentProduct": p.product,
                "transactionStatus": p.status,
                "scaStatus": p.sca_status,
                "instructedAmount": Amount::from_minor(&p.currency, p.amount_minor),
                "psuId": p.psu_id,
                "createdAt": rfc3339(p.created_at),
            })
        })
        .collect();
    let baskets: Vec<Value> = baskets
        .iter()
        .map(|b| {
            let tx = match (b.cancelled, b.authorised) {
                (true, _) => status::CANC,
                (false, true) => status::ACTC,
                (false, false) => status::RCVD,
            };
            json!({
                "basketId": b.id,
                "tpp": b.tpp,
                "transactionStatus": tx,
                "scaStatus": b.sca_status,
                "paymentIds": b.payments,
                "createdAt": rfc3339(b.created_at),
            })
        })
        .collect();
    Ok(Json(json!({
        "now": rfc3339(now_secs(&app)),
        "customers": customers,
        "consents": consents,
        "payments": payments,
        "baskets": baskets,
    })))
}
