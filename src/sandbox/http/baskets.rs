//! Signing baskets: one SCA for several payments (interface document: Resources, "Signing
//! basket creation request" and "response"; States, basket `transactionStatus`; Errors;
//! Limits: 100 payments per basket; Berlin Group `signingBasket`, `signingBasketResponse-201`,
//! `signingBasketResponse-200`, `signingBasketStatusResponse-200`, `startScaprocessResponse`;
//! the v1/v2 Postman collections for the authorisation and DELETE calls).
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | POST | `/v1/signing-baskets` `{"paymentIds": [...]}` | 201 `{transactionStatus, basketId, _links}` |
//! | GET | `/v1/signing-baskets/{basketId}` | 200 `{payments, transactionStatus, _links}` |
//! | GET | `/v1/signing-baskets/{basketId}/status` | 200 `{transactionStatus}` |
//! | DELETE | `/v1/signing-baskets/{basketId}` | 204 (the basket is gone: later calls 404; the payments are untouched) |
//! | POST | `/v1/signing-baskets/{basketId}/authorisations` | 201 `{scaStatus, authorisationId, _links.scaRedirect}` |
//! | GET | `/v1/signing-baskets/{basketId}/authorisations` | 200 `{authorisationIds}` |
//! | GET | `/v1/signing-baskets/{basketId}/authorisations/{authorisationId}` | 200 `{scaStatus}` |
//! | PUT | `/v1/signing-baskets/{basketId}/authorisations/{authorisationId}` | 200 `{scaStatus, _links}` for an empty body; 400 otherwise (redirect approach only) |
//!
//! Links carry `href` and `verbs` (the interface document's Link). The basket's SCA
//! ([`crate::sandbox::http::payment_sca`]) authorises every payment of the basket that is still `RCVD`.
//!
//! Basket status ([`basket_status`]): "A signing basket is not atomic. Its single status is
//! the worst case over all payments in it." The order chosen, worst first:
//! `RJCT` (any payment rejected, rejected for lack of funds or cancelled) > `PATC` (some
//! payments authorised, others not yet: partially accepted) > `RCVD` (none authorised yet) >
//! `ACTC` (all authorised; settled and on-hold authorised payments count as authorised). A
//! deleted basket has no status (404, see "Deletion"). The status of each payment is read
//! with the payment status call.
//!
//! A request with `PSU-ID` about a basket holding a payment in CORPORATE context needs
//! `PSU-Corporate-ID` (400 `FORMAT_ERROR` otherwise; Authentication 12, as for payments:
//! [`payments::require_corporate_id`]).
//!
//! Headers ([`require_headers`]): the document's header table of "Create payments signing
//! basket" marks `x-accept-fix`, `TPP-Session-ID`, `TPP-Redirect-URI`, `PSU-ID` and
//! `PSU-IP-Address` required; a creation without any of them is 400 `FORMAT_ERROR` naming
//! every missing header. `PSU-ID` must be a UUID; one registered for this TPP binds the
//! basket's SCA to that customer (an unknown one binds nobody: the SCA identifies the PSU).
//!
//! Deletion ([`delete`]): the Berlin Group text for `DELETE /v1/signing-baskets/{basketId}`
//! is "Delete the signing basket structure as long as no (partial) authorisation has yet
//! been applied. The underlying transactions are not affected by this deletion." The
//! structure is gone: every later call on a deleted basket (GET, status, authorisations,
//! DELETE again) answers 404 `RESOURCE_UNKNOWN` saying it was deleted, instead of a
//! `transactionStatus` `CANC`, which the document's basket states (RCVD, ACTC, PATC, RJCT)
//! do not have. Its payments keep their own status and may go into another basket; its open
//! SCA links end (the SCA page says the approval was cancelled).

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::sandbox::App;
use crate::sandbox::http::auth::Tpp;

use crate::cert::Psd2Role;
use crate::sandbox::domain::basket::{self, basket_status, deleted, payments_of};
use crate::sandbox::domain::{payment_sca, settlement};
use crate::sandbox::errors::{ApiError, ApiPath};
use crate::sandbox::http::payments::{self, TppCert, require_role};
use crate::sandbox::store::payments::{self as rows, BasketRow, PaymentRow, status};
use crate::xs2a::error::MessageCode;
use crate::xs2a::links::{Link, Links, names};

/// Most payments in one basket (interface document, Limits: raised from 10 to 100 in release
/// 1.21.14).
pub const MAX_BASKET_PAYMENTS: usize = 100;

/// The basket routes (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/signing-baskets", post(create))
        .route("/v1/signing-baskets/{id}", get(read).delete(delete))
        .route("/v1/signing-baskets/{id}/status", get(read_status))
        .route(
            "/v1/signing-baskets/{id}/authorisations",
            post(start_authorisation).get(list_authorisations),
        )
        .route(
            "/v1/signing-baskets/{id}/authorisations/{auth}",
            get(authorisation_status).put(update_psu_data),
        )
}

fn basket_path(id: &str) -> String {
    format!("/v1/signing-baskets/{id}")
}

fn own_basket(app: &App, tpp: &Tpp, id: &str) -> Result<(BasketRow, Vec<PaymentRow>), ApiError> {
    let found = app.db.read(|c| {
        let Some(b) = rows::basket(c, id)? else {
            return Ok(None);
        };
        let p = payments_of(c, &b)?;
        Ok(Some((b, p)))
    })?;
    let (b, p) =
        found.ok_or_else(|| ApiError::not_found(format!("no signing basket has the id {id:?}")))?;
    if *b.tpp != *tpp.id.0 {
        return Err(ApiError::forbidden_unknown(format!(
            "signing basket {id} was not created by this TPP"
        )));
    }
    if b.cancelled {
        return Err(deleted(id));
    }
    Ok((b, p))
}

/// [`payments::require_corporate_id`] for a basket of `payments` (own payments only: the
/// others are refused by [`basket::check_payments`]).
fn require_corporate_id(
    app: &App,
    tpp: &Tpp,
    h: &HeaderMap,
    payments: &[PaymentRow],
) -> Result<(), ApiError> {
    payments::require_corporate_id(h, || {
        for p in payments.iter().filter(|p| *p.tpp == *tpp.id.0) {
            if payments::in_corporate_context(app, p)? {
                return Ok(Some(format!("payment {} of the basket", p.id)));
            }
        }
        Ok(None)
    })
}

/// Headers the interface document's table for "Create payments signing basket" marks
/// required, in the table's order.
pub const REQUIRED_HEADERS: [&str; 5] = [
    crate::xs2a::headers::X_ACCEPT_FIX,
    crate::xs2a::headers::TPP_SESSION_ID,
    crate::xs2a::headers::TPP_REDIRECT_URI,
    crate::xs2a::headers::PSU_ID,
    crate::xs2a::headers::PSU_IP_ADDRESS,
];

/// Checks that every header of [`REQUIRED_HEADERS`] is present and not blank.
///
/// Errors: 400 `FORMAT_ERROR` naming every missing header (interface document, header table
/// of "Create payments signing basket"; Errors: a malformed request is 400).
pub fn require_headers(h: &HeaderMap) -> Result<(), ApiError> {
    let mut missing = Vec::new();
    for name in REQUIRED_HEADERS {
        if payments::header_str(h, name)?.is_none() {
            missing.push(name);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(ApiError::format(format!(
        "the {} header{} missing; creating a signing basket requires x-accept-fix, \
         TPP-Session-ID, TPP-Redirect-URI, PSU-ID and PSU-IP-Address (the interface \
         document's header table)",
        missing.join(", "),
        if missing.len() == 1 { " is" } else { "s are" }
    )))
}

/// The `paymentIds` of a basket request.
///
/// Errors: 400 `FORMAT_ERROR` for a body that is not `{"paymentIds": [strings]}`, for 0 or
/// more than [`MAX_BASKET_PAYMENTS`] ids and for an id listed twice; 400
/// `PARAMETER_NOT_SUPPORTED` for `consentIds` (baskets of consents are not offered).
fn payment_ids(body: &[u8]) -> Result<Vec<String>, ApiError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::format(format!(
            "the body must be JSON {{\"paymentIds\": [...]}}: {e}"
        ))
    })?;
    if v.get("consentIds")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        return Err(ApiError::new(
            MessageCode::ParameterNotSupported,
            "consentIds: this ASPSP offers signing baskets for payments only",
        ));
    }
    let Some(items) = v.get("paymentIds").and_then(Value::as_array) else {
        return Err(ApiError::format(
            "paymentIds is missing; the body is {\"paymentIds\": [...]}",
        ));
    };
    if items.is_empty() || items.len() > MAX_BASKET_PAYMENTS {
        return Err(ApiError::format(format!(
            "paymentIds holds {} ids; a signing basket holds 1 to {MAX_BASKET_PAYMENTS} payments",
            items.len()
        )));
    }
    let mut ids: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(id) = item.as_str().map(str::trim).filter(|s| !s.is_empty()) else {
            return Err(ApiError::format(format!(
                "paymentIds[{i}] must be a non-empty string"
            )));
        };
        if ids.iter().any(|x| x == id) {
            return Err(ApiError::format(format!(
                "paymentIds[{i}]: payment {id} is listed twice"
            )));
        }
        ids.push(id.to_string());
    }
    Ok(ids)
}

fn link(href: String, verbs: &[&str]) -> Link {
    Link::with_verbs(href, verbs)
}

/// `POST /v1/signing-baskets` `{"paymentIds": [...]}`: 201 `{transactionStatus, basketId,
/// _links: {scaRedirect | startAuthorisation, self, status, scaStatus?}}` (implicit start;
/// `TPP-Explicit-Authorisation-Preferred: true` gives `startAuthorisation`, as in the bank's
/// Postman collections).
///
/// Errors: see [`payment_ids`] and [`basket::check_payments`]; 401 `ROLE_INVALID` without `PSP_PI`.
async fn create(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    cert: TppCert,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    require_role(&cert.0, Psd2Role::PspPi)?;
    require_headers(&headers)?;
    payments::check_accept_fix(&headers, true)?;
    settlement::run_due(&app.domain())?;
    let redirect = payments::redirect_uri(&headers)?;
    let session = payments::session_id(&headers)?;
    payments::require_psu_ip(&headers)?;
    let explicit = payments::explicit_preferred(&headers)?;
    let bound = payments::binding(&app, &tpp, &headers)?;
    let ids = payment_ids(&body)?;
    let listed = app.db.read(|c| {
        let mut v = Vec::new();
        for id in &ids {
            v.extend(rows::payment(c, id)?);
        }
        Ok(v)
    })?;
    require_corporate_id(&app, &tpp, &headers, &listed)?;
    let (id, transaction_status, auth) = basket::create(
        &app.domain(),
        &tpp,
        ids,
        &redirect,
        &session,
        bound.customer,
        explicit,
    )?;
    let path = basket_path(&id);
    let mut links = Links::new();
    match &auth {
        Some(a) => {
            links.insert(
                names::SCA_REDIRECT.into(),
                link(payments::sca_href(&app, &a.id), &["GET"]),
            );
            links.insert(
                "scaStatus".into(),
                link(format!("{path}/authorisations/{}", a.id), &["GET"]),
            );
        }
        None => {
            links.insert(
                names::START_AUTHORISATION.into(),
                link(format!("{path}/authorisations"), &["POST"]),
            );
        }
    }
    links.insert(names::SELF.into(), link(path.clone(), &["GET", "DELETE"]));
    links.insert(
        names::STATUS.into(),
        link(format!("{path}/status"), &["GET"]),
    );
    Ok(payments::json_response(
        StatusCode::CREATED,
        json!({
            "transactionStatus": transaction_status,
            "basketId": id,
            "_links": serde_json::to_value(&links).unwrap_or(Value::Null),
        }),
        &[
            ("Location", path),
            ("ASPSP-SCA-Approach", "REDIRECT".to_string()),
        ],
    ))
}

/// `GET /v1/signing-baskets/{basketId}`: `{payments, transactionStatus, _links}` (Berlin
/// Group `signingBasketResponse-200`).
async fn read(
    OwnBasket {
        id,
        basket,
        payments,
        ..
    }: OwnBasket<true>,
) -> Result<Json<Value>, ApiError> {
    let (b, p) = (basket, payments);
    let s = basket_status(&p);
    let path = basket_path(&id);
    let mut links = Links::new();
    links.insert(names::SELF.into(), link(path.clone(), &["GET", "DELETE"]));
    links.insert(
        names::STATUS.into(),
        link(format!("{path}/status"), &["GET"]),
    );
    if p.iter().any(|x| x.status == status::RCVD) {
        links.insert(
            names::START_AUTHORISATION.into(),
            link(format!("{path}/authorisations"), &["POST"]),
        );
    }
    Ok(Json(json!({
        "payments": b.payments,
        "transactionStatus": s,
        "_links": serde_json::to_value(&links).unwrap_or(Value::Null),
    })))
}

/// `GET /v1/signing-baskets/{basketId}/status`: `{transactionStatus}` (Berlin Group
/// `signingBasketStatusResponse-200`).
async fn read_status(basket: OwnBasket<true>) -> Result<Json<Value>, ApiError> {
    Ok(Json(
        json!({"transactionStatus": basket_status(&basket.payments)}),
    ))
}

/// The extractor of the basket handlers addressing `/v1/signing-baskets/{basketId}`: the
/// verified TPP, then [`basket_for`] (with `READ`: the reads' rejection of expired payments
/// first) on the path's basket id.
///
/// Errors (the rejection): those of [`Tpp`], [`TppCert`], the path, and [`basket_for`].
struct OwnBasket<const READ: bool> {
    tpp: Tpp,
    id: String,
    basket: BasketRow,
    payments: Vec<PaymentRow>,
}

impl<const READ: bool> FromRequestParts<Arc<App>> for OwnBasket<READ> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, ApiError> {
        let tpp = Tpp::from_request_parts(parts, app).await?;
        let cert = TppCert::from_request_parts(parts, app).await?;
        let ApiPath(id) = ApiPath::<String>::from_request_parts(parts, app).await?;
        let (basket, payments) = basket_for(app, &tpp, &cert, &id, &parts.headers, READ)?;
        Ok(OwnBasket {
            tpp,
            id,
            basket,
            payments,
        })
    }
}

/// What the basket handlers do first: the PIS role, due batch runs, with `reject_expired`
/// (the reads) the rejection of the basket's payments whose SCA expired
/// (payments::reject_expired), then the TPP's basket with its payments as they are now,
/// checked against `PSU-Corporate-ID`.
///
/// Errors: 401 `ROLE_INVALID`; those of [`own_basket`] and [`require_corporate_id`].
fn basket_for(
    app: &App,
    tpp: &Tpp,
    cert: &TppCert,
    id: &str,
    headers: &HeaderMap,
    reject_expired: bool,
) -> Result<(BasketRow, Vec<PaymentRow>), ApiError> {
    require_role(&cert.0, Psd2Role::PspPi)?;
    settlement::run_due(&app.domain())?;
    if reject_expired {
        let (b, _) = own_basket(app, tpp, id)?;
        payments::reject_expired(&app.domain(), &b.payments)?;
    }
    let (b, p) = own_basket(app, tpp, id)?;
    require_corporate_id(app, tpp, headers, &p)?;
    Ok((b, p))
}

/// `DELETE /v1/signing-baskets/{basketId}`: 204; the basket structure is deleted (later calls
/// on it answer 404, see the module doc), its payments are untouched and may go into another
/// basket (Berlin Group: "as long as no (partial) authorisation has yet been applied").
///
/// Errors: 409 `STATUS_INVALID` when the basket's SCA was completed; 404 `RESOURCE_UNKNOWN`
/// when it is already deleted.
async fn delete(
    State(app): State<Arc<App>>,
    OwnBasket { id, .. }: OwnBasket<false>,
) -> Result<Response, ApiError> {
    basket::delete(&app.domain(), &id)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /v1/signing-baskets/{basketId}/authorisations` (empty body): 201
/// `startScaprocessResponse` with `scaRedirect` to the basket's SCA page.
///
/// Errors: 404 `RESOURCE_UNKNOWN` for a deleted basket; 409 `STATUS_INVALID` for one without
/// `RCVD` payments.
async fn start_authorisation(
    State(app): State<Arc<App>>,
    OwnBasket {
        tpp, id, basket: b, ..
    }: OwnBasket<false>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let initiated = (b.redirect_uri.as_str(), b.tpp_session_id.as_str());
    let auth = payments::start_authorisation_of(
        &app,
        &tpp,
        payment_sca::Covers::Basket(&id),
        &headers,
        initiated,
    )?;
    Ok(payments::start_sca_response(
        &app,
        &basket_path(&id),
        &auth.id,
        true,
    ))
}

/// `GET /v1/signing-baskets/{basketId}/authorisations`: 200 `{"authorisationIds": [..]}`
/// (Berlin Group `getSigningBasketAuthorisation`; the interface document is silent): the ids
/// of every authorisation started for the basket, oldest first.
///
/// Errors: 404 `RESOURCE_UNKNOWN` for a deleted basket; those of [`basket_for`].
async fn list_authorisations(
    State(app): State<Arc<App>>,
    OwnBasket { id, basket: b, .. }: OwnBasket<false>,
) -> Result<Json<Value>, ApiError> {
    if b.cancelled {
        return Err(deleted(&id));
    }
    let ids = app.db.read(|c| rows::authorisation_ids(c, true, &id))?;
    Ok(Json(json!({ "authorisationIds": ids })))
}

/// `PUT /v1/signing-baskets/{basketId}/authorisations/{authorisationId}` (Berlin Group
/// `updateSigningBasketPsuData`): [`payments::update_psu_data_answer`].
///
/// Errors: 404 `RESOURCE_UNKNOWN` for a deleted basket; those of [`basket_for`] and
/// [`payments::update_psu_data_answer`].
async fn update_psu_data(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    cert: TppCert,
    ApiPath((id, auth)): ApiPath<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let (b, _) = basket_for(&app, &tpp, &cert, &id, &headers, false)?;
    if b.cancelled {
        return Err(deleted(&id));
    }
    payments::update_psu_data_answer(
        &app,
        &auth,
        &format!("signing basket {id}"),
        &basket_path(&id),
        true,
        &body,
        |a| a.basket.as_deref() == Some(id.as_str()),
    )
}

/// `GET /v1/signing-baskets/{basketId}/authorisations/{authorisationId}`: `{scaStatus}`.
async fn authorisation_status(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    cert: TppCert,
    ApiPath((id, auth)): ApiPath<(String, String)>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    require_role(&cert.0, Psd2Role::PspPi)?;
    let (_, p) = own_basket(&app, &tpp, &id)?;
    require_corporate_id(&app, &tpp, &headers, &p)?;
    payments::sca_status_answer(&app, &auth, &format!("signing basket {id}"), |a| {
        a.basket.as_deref() == Some(id.as_str())
    })
}
