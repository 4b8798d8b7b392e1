//! The simulated batch payment processing and the sandbox controls around it (interface
//! document, Endpoints: "The sandbox runs simulated batch payment processing five times a day
//! for all payments except periodic ones"; States: "Payment statuses").
//!
//! Batch runs are at [`BATCH_HOURS`] (06:00, 09:00, 12:00, 15:00, 18:00 UTC on the sandbox
//! clock, every day). A payment authorised at `t` is taken by the first run at or after `t`,
//! or — when its `requestedExecutionDate` is later — by the 06:00 run of that date
//! ([`due_at`]). The runs are simulated lazily: [`run_due`] executes every `ACTC` payment
//! whose run time has passed on the sandbox clock; the payment and basket handlers call it
//! first, so advancing the clock and then calling the API shows the effect.
//!
//! Execution ([`execute`]): when the debtor account's available balance ([`available_minor`])
//! covers the amount, the payment becomes `ACSC` (settled at the run time) and is booked on
//! the debtor account (and on a sandbox creditor account) as a booked transaction, so the
//! account-information interface lists it and its balances move; otherwise it becomes
//! `ACCP` with `fundsAvailable: false` (interface
//! document: "ACCP is named for payments rejected for lack of funds"). Instant payments are
//! executed at approval ([`authorise`]). Periodic payments are never taken (they stay `ACTC`,
//! the standing order). Payments on hold (`PDNG`) are skipped until released.
//!
//! Sandbox controls (signed like every `/v1` request, with `PSP_AI` or `PSP_PI`; each in the
//! calling TPP's world: its clock, its payments):
//!
//! | Method | Path | Body | Answer |
//! |---|---|---|---|
//! | POST | `/v1/sandbox/batch` | none | 200 [`BatchReport`]: runs a batch now over every authorised payment |
//! | GET | `/v1/sandbox/clock` | | 200 `{now, nextBatchRun, batchTimes}` |
//! | POST | `/v1/sandbox/clock` | `{"advanceSeconds": n}` (1 ≤ n ≤ 400 days) | 200 `{now, nextBatchRun, batchTimes, batch}` after the due runs |
//! | POST | `/v1/sandbox/payments/{paymentId}/hold` | none | 200 `{paymentId, transactionStatus: "PDNG"}` |
//! | POST | `/v1/sandbox/payments/{paymentId}/release` | none | 200 `{paymentId, transactionStatus}` (the status before the hold) |
//!
//! Hold: the "further status for payments on hold or stopped" (interface document 2.12.0) is
//! `PDNG` (Berlin Group: "pending: further checks and status update will be performed"); it
//! is also the status whose deletion the document says gets an explanatory error. `PATC` is
//! the multi-authorisation status and `ACWP` an accepted-without-posting end state, so
//! neither fits a stopped payment.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::sandbox::App;
use crate::sandbox::domain::settlement::{
    self, BATCH_HOURS, BatchReport, next_batch_at, now_secs, rfc3339, run, run_due,
};
use crate::sandbox::errors::{ApiError, ApiPath};
use crate::sandbox::http::auth::Tpp;
use crate::sandbox::store::payments::status;

/// Largest clock advance of one `POST /v1/sandbox/clock`, seconds (400 days).
pub const MAX_ADVANCE_SECONDS: u64 = 400 * 24 * 3600;

/// The batch and clock control routes (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/sandbox/batch", post(batch_now))
        .route("/v1/sandbox/clock", get(clock).post(advance_clock))
        .route("/v1/sandbox/payments/{id}/hold", post(hold))
        .route("/v1/sandbox/payments/{id}/release", post(release))
}

/// `POST /v1/sandbox/batch`: runs a batch now over every authorised (`ACTC`, non-periodic,
/// not on hold) payment, whatever its run time.
async fn batch_now(State(app): State<Arc<App>>, tpp: Tpp) -> Result<Json<BatchReport>, ApiError> {
    run_due(&app.domain())?;
    Ok(Json(run(&app.domain(), Some(&tpp.id.0), true)?))
}

fn clock_json(app: &App) -> Value {
    let now = now_secs(&app.domain());
    json!({
        "now": rfc3339(now),
        "nextBatchRun": rfc3339(next_batch_at(now.saturating_add(1))),
        "batchTimes": BATCH_HOURS.iter().map(|h| format!("{h:02}:00Z")).collect::<Vec<_>>(),
    })
}

/// `GET /v1/sandbox/clock`: the sandbox time and the next batch run.
async fn clock(State(app): State<Arc<App>>, _tpp: Tpp) -> Json<Value> {
    Json(clock_json(&app))
}

/// `POST /v1/sandbox/clock` `{"advanceSeconds": n}`: moves the calling TPP's sandbox clock
/// forward (other TPPs' clocks stay, issue 20) and persists its offset with the rest of the
/// state (table `tpp_clocks`; `sandbox serve` restores it on start, the TPP's `POST
/// /v1/sandbox/initialize` resets it), then runs the TPP's batch runs that became due.
/// Requests are signed against the TPP's sandbox clock, so a client must sign later
/// requests with the new time.
///
/// Errors: 400 `FORMAT_ERROR` for a missing, non-integer, zero, negative or too large
/// `advanceSeconds`.
async fn advance_clock(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let v: Value = serde_json::from_slice(&body).map_err(|e| {
        ApiError::format(format!(
            "the body must be JSON {{\"advanceSeconds\": n}}: {e}"
        ))
    })?;
    let secs = v
        .get("advanceSeconds")
        .and_then(Value::as_u64)
        .filter(|s| (1..=MAX_ADVANCE_SECONDS).contains(s))
        .ok_or_else(|| {
            ApiError::format(format!(
                "advanceSeconds must be an integer from 1 to {MAX_ADVANCE_SECONDS}"
            ))
        })?;
    settlement::advance_clock(&app.domain(), &tpp.id, secs)?;
    let mut report = run_due(&app.domain())?;
    report.payments.clear();
    let mut out = clock_json(&app);
    out["advancedSeconds"] = json!(secs);
    out["batch"] = serde_json::to_value(&report).unwrap_or(Value::Null);
    Ok(Json(out))
}

/// `POST /v1/sandbox/payments/{paymentId}/hold`: the bank stops a `RCVD` or `ACTC` payment
/// for further checks (`PDNG`); batch runs skip it and DELETE explains why it cannot be
/// deleted.
///
/// Errors: those of [`settlement::hold`] (404/403 `RESOURCE_UNKNOWN`; 409 `STATUS_INVALID`).
async fn hold(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Value>, ApiError> {
    run_due(&app.domain())?;
    settlement::hold(&app.domain(), &tpp.id, &id)?;
    Ok(Json(
        json!({"paymentId": id, "transactionStatus": status::PDNG}),
    ))
}

/// `POST /v1/sandbox/payments/{paymentId}/release`: ends a hold; the payment gets its status
/// from before the hold (an authorised one is taken by the next due batch run).
///
/// Errors: those of [`settlement::release`] (404/403 `RESOURCE_UNKNOWN`; 409
/// `STATUS_INVALID`).
async fn release(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Value>, ApiError> {
    let status = settlement::release(&app.domain(), &tpp.id, &id)?;
    Ok(Json(json!({"paymentId": id, "transactionStatus": status})))
}
