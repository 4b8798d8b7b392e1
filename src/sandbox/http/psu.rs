//! The PSU side of the sandbox: SCA sessions per `TPP-Session-ID`, PSU registration for
//! PISP-only TPPs, the PSU's corporate agreements, and consent revocation by the PSU.
//!
//! Routes (all signed):
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | GET | `/v1/users`, `/v1/user` | 200 `{"_links":{"scaRedirect":{"href"}},"psuMessage"}`: a registration SCA (needs `PSP_PI`) |
//! | GET | `/v1/agreements` | 200 `{"agreements":[agreement...]}` of the PSU-ID's customer |
//! | GET | `/v1/agreements/{id}` | 200 one agreement element |
//! | GET | `/v1/agreements/{id}/engagements` | 200 `{"engagements":[{resourceId,bban,currency,name,_links.account}]}` |
//! | DELETE | `/v1/sandbox/consents/{psuId}` | 204: the PSU revokes every consent it gave the calling TPP (sandbox control) |
//!
//! # SCA sessions (interface document, States and transitions, "SCA session state" 1–4)
//!
//! Every completed SCA (consent, registration) records the session of its authorisation —
//! the `TPP-Session-ID` of the request that started it, or the id the sandbox generated and
//! sent back as `tpp-session-id` — in `psu_sessions`, keyed by (TPP, PSU-ID, session id),
//! with the time of the SCA:
//!
//! 1. The SCA of a session is valid for [`SCA_SESSION_LIFETIME`] (1 hour) on the sandbox
//!    clock; a PSU-present request (one with `PSU-IP-Address`) after that gets 401
//!    `CONSENT_INVALID` with a `scaRedirect`, and the completed SCA renews the session.
//! 2. While valid, account requests in the session need no new SCA. (Payments always need
//!    their own SCA with dynamic linking; that is the payment handlers' side.)
//! 3. A request with a `TPP-Session-ID` the PSU has no SCA in gets 401 + `scaRedirect`; when
//!    that SCA completes, every other session of the (TPP, PSU-ID) ends (`superseded`); when
//!    it is cancelled or abandoned, the old session stays valid.
//! 4. The 180-day consent renewal is the consent's own age ([`crate::sandbox::model::CONSENT_LIFETIME`]).
//!
//! How the two combine, in [`crate::sandbox::domain::access::resolve`]: the consent (which accounts, given at
//! SCA, 180 days) is checked first for every request; the session (1 hour) only for
//! PSU-present requests. A request without `PSU-IP-Address` (PSU not present) needs only the
//! consent, and is limited instead (4 calls a day, 90 days of transactions: [`crate::sandbox::domain::rules`]).
//! A PSU-present request without `TPP-Session-ID` belongs to the PSU's current session (the
//! most recent SCA not superseded). Each completed SCA renews both: the consent's 180 days
//! restart (it is stored anew) and its session's hour restarts.
//!
//! # Registration (`GET /v1/users`; Authentication 15)
//!
//! A TPP that is only a PISP registers a PSU with `GET /v1/users`: the answer is 200 with a
//! `scaRedirect`; the SCA asks for the customerNumber (and the context when the PSU holds
//! agreements) but no account consent, and redirects with `psu-id` (and `psu-corporate-id`
//! in CORPORATE context), which the TPP persists. [`psu_customer`] resolves such a PSU-ID
//! (and those of every other flow).
//!
//! # Revocation (Authentication 11: "may revoke at any time, also directly at the ASPSP")
//!
//! The interface document gives the PSU's revocation no API (the ASPSP need not notify the
//! TPP). The sandbox simulates it with `DELETE /v1/sandbox/consents/{psuId}`, signed by the
//! TPP the consents were given to: every consent of that PSU-ID (PRIVATE and CORPORATE) is
//! marked revoked; account calls then answer 401 `CONSENT_INVALID` with a `scaRedirect`, and
//! a new SCA for the same context gives a valid consent again.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{delete, get};
use uuid::Uuid;

use crate::cert::Psd2Role;
use crate::sandbox::App;
use crate::sandbox::domain::access::PsuContext;
use crate::sandbox::domain::access::{psu_customer, revoke_by_psu, start_registration};
use crate::sandbox::domain::rules::{self, TppRoles};
use crate::sandbox::domain::views;
use crate::sandbox::errors::{ApiError, ApiPath};
use crate::sandbox::http::auth::{Tpp, TppResource};
use crate::xs2a::error::MessageCode;
use crate::xs2a::headers;
use crate::xs2a::links::{Link, Links, names};
use crate::xs2a::model::SandboxAgreement;
use crate::xs2a::wire::{AgreementList, Engagement, EngagementList, UsersResponse};

// ---------------------------------------------------------------------------------------
// Sessions

// ---------------------------------------------------------------------------------------
// Registration and SCA purposes

// ---------------------------------------------------------------------------------------
// Revocation

/// `DELETE /v1/sandbox/consents/{psuId}`: the PSU revokes, directly at the ASPSP, every
/// consent (PRIVATE and each CORPORATE one) it gave the calling TPP. 204, no body.
///
/// Errors: 400 `FORMAT_ERROR` when `psuId` is not a UUID; 404 `RESOURCE_UNKNOWN` when the
/// PSU-ID is unknown to this TPP.
pub async fn revoke(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    ApiPath(psu): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    let psu_id = Uuid::parse_str(&psu)
        .map_err(|_| ApiError::format(format!("psuId {psu:?} is not a UUID")))?;
    revoke_by_psu(&app.domain(), &tpp.id, psu_id)?;
    Ok(StatusCode::NO_CONTENT)
}

// ---------------------------------------------------------------------------------------
// GET /v1/users

/// `GET /v1/users` (also `/v1/user`): starts a registration SCA for a TPP with `PSP_PI`
/// (interface document, Authentication 15; "Other operations named"). The PSU-ID arrives
/// with the redirect.
///
/// Errors: 401 `ROLE_INVALID` without `PSP_PI`; 400 `FORMAT_ERROR` without a usable
/// `TPP-Redirect-URI`.
pub async fn users(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    roles: TppRoles,
    psu: PsuContext,
) -> Result<Json<UsersResponse>, ApiError> {
    roles.require(Psd2Role::PspPi, "PSU registration (GET /v1/users)")?;
    let href = start_registration(&app.domain(), &tpp, &psu)?;
    let mut links = Links::new();
    links.insert(names::SCA_REDIRECT.into(), Link::href(href));
    Ok(Json(UsersResponse {
        links,
        psu_message: "Redirect the PSU to scaRedirect; the psu-id comes back with the redirect \
                      to TPP-Redirect-URI"
            .into(),
    }))
}

// ---------------------------------------------------------------------------------------
// GET /v1/agreements

/// The customer of the request's `PSU-ID` (any flow: [`psu_customer`]), or the answer to send.
fn request_customer(
    app: &App,
    tpp: &Tpp,
    roles: &TppRoles,
    h: &HeaderMap,
) -> Result<Uuid, ApiError> {
    if !roles.has(Psd2Role::PspAi) && !roles.has(Psd2Role::PspPi) {
        roles.require(Psd2Role::PspPi, "agreement listing (PSP_AI or PSP_PI)")?;
    }
    let sca = |text: &str| -> ApiError {
        match start_registration(
            &app.domain(),
            tpp,
            &crate::sandbox::http::caller::psu_context(h),
        ) {
            Ok(href) => ApiError::new(MessageCode::ConsentInvalid, text).with_sca_redirect(href),
            Err(e) => e,
        }
    };
    let Some(psu) = crate::sandbox::http::caller::header(h, headers::PSU_ID)? else {
        return Err(sca(
            "no PSU-ID: the PSU has to register (SCA) before its agreements can be listed",
        ));
    };
    let psu_id = Uuid::parse_str(psu)
        .map_err(|_| ApiError::format(format!("PSU-ID {psu:?} is not a UUID")))?;
    psu_customer(&app.domain(), &tpp.id, psu_id)?
        .ok_or_else(|| sca("this PSU-ID is not registered with this TPP: SCA needed"))
}

/// `GET /v1/agreements`: the corporate agreements the PSU holds (interface document,
/// Authentication 12: the TPP may choose the `PSU-CORPORATE-ID` from this list when a PSU-ID
/// exists). No `PSU-Corporate-ID` is needed.
///
/// Errors: 401 `ROLE_INVALID` without `PSP_AI` or `PSP_PI`; 401 `CONSENT_INVALID` with a
/// `scaRedirect` (registration SCA) without a known PSU-ID; 400 `FORMAT_ERROR` for a PSU-ID
/// that is not a UUID.
pub async fn agreements(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    roles: TppRoles,
    headers: HeaderMap,
) -> Result<Json<AgreementList>, ApiError> {
    let customer = request_customer(&app, &tpp, &roles, &headers)?;
    Ok(Json(AgreementList {
        agreements: app
            .store
            .agreements_held_by(customer)?
            .iter()
            .map(views::agreement_element)
            .collect(),
    }))
}

fn held_agreement(
    app: &App,
    customer: Uuid,
    id: &str,
) -> Result<crate::sandbox::model::Agreement, ApiError> {
    Uuid::parse_str(id)
        .ok()
        .map_or(Ok(None), |a| app.store.agreement(a))?
        .filter(|a| a.holder == customer)
        .ok_or_else(|| {
            ApiError::forbidden_unknown(format!("agreement {id:?} is not held by this PSU"))
        })
}

/// The agreement `{id}` of the request path, which the PSU of the request's `PSU-ID` must
/// hold, as an extractor: the TPP's roles and the PSU as for [`agreements`]
/// ([`request_customer`]), then [`held_agreement`].
///
/// Errors (the rejection): as [`agreements`]; 403 `RESOURCE_UNKNOWN` for an agreement the
/// PSU does not hold.
pub struct HeldAgreement(pub crate::sandbox::model::Agreement);

impl FromRequestParts<Arc<App>> for HeldAgreement {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, ApiError> {
        let TppResource { tpp, roles, id } = TppResource::from_request_parts(parts, app).await?;
        let customer = request_customer(app, &tpp, &roles, &parts.headers)?;
        held_agreement(app, customer, &id).map(HeldAgreement)
    }
}

/// `GET /v1/agreements/{id}`: one agreement of the PSU (the `self` link of the listing).
///
/// Errors: as [`agreements`]; 403 `RESOURCE_UNKNOWN` for an agreement the PSU does not hold.
pub async fn agreement(HeldAgreement(a): HeldAgreement) -> Json<SandboxAgreement> {
    Json(views::agreement_element(&a))
}

/// `GET /v1/agreements/{id}/engagements`: the accounts the agreement covers.
///
/// Errors: as [`agreement`].
pub async fn engagements(
    State(app): State<Arc<App>>,
    HeldAgreement(a): HeldAgreement,
) -> Result<Json<EngagementList>, ApiError> {
    Ok(Json(EngagementList {
        engagements: app
            .store
            .accounts_by_ids(&a.accounts)?
            .iter()
            .map(|acc| {
                let mut links = Links::new();
                links.insert(
                    names::ACCOUNT.into(),
                    Link::href(format!("/v1/accounts/{}", acc.id)),
                );
                Engagement {
                    resource_id: acc.id.to_string(),
                    bban: acc.bban.clone(),
                    currency: acc.currency.clone(),
                    name: rules::account_name(&acc.name),
                    links,
                }
            })
            .collect(),
    }))
}

/// The routes of this module (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/users", get(users))
        .route("/v1/user", get(users))
        .route("/v1/agreements", get(agreements))
        .route("/v1/agreements/{id}", get(agreement))
        .route("/v1/agreements/{id}/engagements", get(engagements))
        .route("/v1/sandbox/consents/{psu_id}", delete(revoke))
}
