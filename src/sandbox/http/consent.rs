//! Which accounts a request may read: the consent addressed by (TPP, `PSU-ID`,
//! `PSU-Corporate-ID`), and the 401-with-`scaRedirect` answer that starts an SCA when there
//! is none (interface document, Authentication 11–12; Errors: "No consent or SCA yet on an
//! account request: 401 with a scaRedirect link"; "Corporate user's request lacks
//! PSU-CORPORATE-ID: 400").
//!
//! Also the consent-creating operations (interface document, "Other operations named";
//! Deprecations):
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | POST | `/v1/bank-offered-consents` | 201 `consentsResponse-201`: `consentStatus` `received`, `consentId`, `_links.scaRedirect` |
//! | POST | `/v1/consents` | the same, body ignored (even invalid JSON), plus a deprecation warning |
//! | GET | `/v1/consents/{consentId}` | `consentInformationResponse-200_json` |
//! | GET | `/v1/consents/{consentId}/status` | `consentStatusResponse-200` |
//! | DELETE | `/v1/consents/{consentId}` | 204, `terminatedByTpp` |
//!
//! (The three `{consentId}` operations answer under `/v1/bank-offered-consents/` too.)
//!
//! [`resolve`] checks, in order: `PSU-ID` known to the TPP, `PSU-Corporate-ID`, a consent for
//! the context (400 when a corporate-only PSU omits `PSU-Corporate-ID`), revocation by the
//! PSU or termination by the TPP ([`access::revocation`]), the consent's 180 days, and —
//! only when the PSU is present (`PSU-IP-Address`) — the 1-hour SCA session of
//! `TPP-Session-ID` ([`access::session_refusal`]). Every refusal that an SCA can cure is
//! a 401 with a `scaRedirect`.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use uuid::Uuid;

use crate::sandbox::App;
use crate::sandbox::domain::access::{self, PsuContext};
use crate::sandbox::domain::rules;
use crate::sandbox::errors::ApiError;
use crate::sandbox::http::auth::{AisTpp, Tpp, TppResource};
use crate::sandbox::http::payments::json_answer;
use crate::sandbox::model::{AuthorisationError, ConsentKey, ScaStep, TppId};
use crate::sandbox::store::access as store;
use crate::xs2a::error::{MessageCode, TppMessage, TppMessageCategory};
use crate::xs2a::links::{Link, Links, names};
use crate::xs2a::wire::{
    AccountAccess, ConsentInformation, ConsentStatusResponse, ConsentsResponse,
};

// ---------------------------------------------------------------------------------------
// POST /v1/bank-offered-consents and the deprecated POST /v1/consents

/// The text of the deprecation warning of `POST /v1/consents`.
pub const CONSENTS_DEPRECATED: &str = "POST /v1/consents is deprecated and its body is ignored: \
     use POST /v1/bank-offered-consents (the PSU chooses the accounts during SCA)";

async fn consent_created(
    app: &App,
    tpp: &Tpp,
    psu: &PsuContext,
) -> Result<ConsentsResponse, ApiError> {
    let (id, href) = access::begin_consent_sca(
        &app.domain(),
        tpp,
        psu,
        "a bank-offered consent is given during SCA",
    )
    .await?;
    let mut links = Links::new();
    links.insert(names::SCA_REDIRECT.into(), Link::href(href));
    Ok(ConsentsResponse {
        consent_status: "received".into(),
        consent_id: id.to_string(),
        links,
        psu_message: Some(
            "The PSU chooses the accounts to share on the bank's consent page".into(),
        ),
        tpp_messages: Vec::new(),
    })
}

/// The 201 of a consent creation: [`json_answer`] (`axum::Json`'s answer, serialised into
/// a `Vec` first: issue 23) with `ASPSP-SCA-Approach: REDIRECT`.
fn created(body: ConsentsResponse) -> Response {
    // The header's name as a constant (the same lower-case name the `&str` gave, without
    // parsing it per answer).
    const SCA_APPROACH: HeaderName = HeaderName::from_static("aspsp-sca-approach");
    let mut r = json_answer(StatusCode::CREATED, body);
    r.headers_mut()
        .insert(SCA_APPROACH, HeaderValue::from_static("REDIRECT"));
    r
}

/// `POST /v1/bank-offered-consents`: starts the SCA during which the PSU chooses the accounts
/// (bank-offered consent, Authentication 11). 201 with [`ConsentsResponse`] and header
/// `ASPSP-SCA-Approach: REDIRECT`. A body is optional and its content ignored (the PSU, not
/// the TPP, picks the accounts), but when present it must be JSON whose strings the bank's
/// systems accept ([`rules::check_json_characters`]).
///
/// The PSU headers are read by the [`PsuContext`] extractor, in one pass over the request's
/// headers, not from a `HeaderMap` extractor's copy of them all (issue 23).
///
/// Errors: 401 `ROLE_INVALID` without `PSP_AI`; 400 `FORMAT_ERROR` for a body that is not
/// JSON, a refused character, or a missing `TPP-Redirect-URI`.
pub async fn bank_offered_consents(
    State(app): State<Arc<App>>,
    AisTpp(tpp): AisTpp,
    psu: PsuContext,
    body: Bytes,
) -> Result<Response, ApiError> {
    if !body.trim_ascii().is_empty() {
        let v: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| ApiError::format(format!("the request body is not JSON: {e}")))?;
        rules::check_json_characters(&v)?;
    }
    Ok(created(consent_created(&app, &tpp, &psu).await?))
}

/// `POST /v1/consents` (deprecated, replaced by `/v1/bank-offered-consents`; interface
/// document, Deprecations): the body is ignored, even when it is not JSON; the answer is that
/// of [`bank_offered_consents`] plus a `WARNING` in `tppMessages` and the headers
/// `Deprecation: true`, `Link: </v1/bank-offered-consents>; rel="successor-version"` and
/// `Warning: 299 - "..."` (RFC 7234).
///
/// Errors: 401 `ROLE_INVALID` without `PSP_AI`; 400 `FORMAT_ERROR` without a usable
/// `TPP-Redirect-URI`.
pub async fn consents_deprecated(
    State(app): State<Arc<App>>,
    AisTpp(tpp): AisTpp,
    psu: PsuContext,
) -> Result<Response, ApiError> {
    let mut body = consent_created(&app, &tpp, &psu).await?;
    body.tpp_messages.push(TppMessage {
        category: TppMessageCategory::Warning,
        code: "WARNING".into(),
        path: None,
        text: Some(CONSENTS_DEPRECATED.into()),
    });
    let mut r = created(body);
    let h = r.headers_mut();
    h.insert("Deprecation", HeaderValue::from_static("true"));
    h.insert(
        axum::http::header::LINK,
        HeaderValue::from_static("</v1/bank-offered-consents>; rel=\"successor-version\""),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{CONSENTS_DEPRECATED}\"")) {
        h.insert(axum::http::header::WARNING, v);
    }
    Ok(r)
}

// ---------------------------------------------------------------------------------------
// The consent resource: GET /v1/consents/{consentId}[/status], DELETE

#[derive(Debug, Clone)]
struct Resource {
    id: Uuid,
    status: String,
    key: Option<ConsentKey>,
    created_at: i64,
    last_action: i64,
}

/// The consent resource `id` of `tpp`.
///
/// Errors: 404 `RESOURCE_UNKNOWN` for an unknown id; 403 `CONSENT_UNKNOWN` (Berlin Group
/// `MessageCode403_AIS`) for another TPP's consent.
fn load_resource(app: &App, tpp: &TppId, id: &str) -> Result<Resource, ApiError> {
    let unknown = || ApiError::not_found(format!("no consent {id:?}"));
    let uuid = Uuid::parse_str(id).map_err(|_| unknown())?;
    let row = app.db.read(|c| store::resource(c, uuid))?;
    let (owner, status, psu, agreement, created_at, last_action) = row.ok_or_else(unknown)?;
    if *owner != *tpp.0 {
        return Err(ApiError {
            status: StatusCode::FORBIDDEN,
            body: crate::xs2a::error::ErrorBody::new(
                MessageCode::ConsentUnknown,
                format!("consent {id} was created by another TPP"),
            ),
        });
    }
    let key = psu
        .and_then(|p| Uuid::parse_str(&p).ok())
        .map(|psu_id| ConsentKey {
            tpp: tpp.clone(),
            psu_id,
            agreement: agreement.and_then(|a| Uuid::parse_str(&a).ok()),
        });
    Ok(Resource {
        id: uuid,
        status,
        key,
        created_at,
        last_action,
    })
}

/// Berlin Group `consentStatus` of a resource now: `received` while its SCA can still be
/// done (else `rejected`); a `valid` one becomes `revokedByPsu`, `terminatedByTpp` or
/// `expired` (180 days) with its consent.
fn current_status(app: &App, r: &Resource) -> Result<&'static str, ApiError> {
    Ok(match (r.status.as_str(), &r.key) {
        ("received", _) => match app.store.authorisation(r.id, app.clock.now()) {
            Ok(_) => "received",
            Err(AuthorisationError::Storage) => {
                return Err(ApiError::storage(
                    "reading the consent's SCA authorisation failed",
                ));
            }
            Err(_) => "rejected",
        },
        ("valid", Some(key)) => match access::revocation(&app.domain(), key)? {
            Some(access::Revoked::ByPsu) => "revokedByPsu",
            Some(access::Revoked::ByTpp) => "terminatedByTpp",
            None => match app.store.consent(key)? {
                Some(c) if !c.is_expired(app.clock.now()) => "valid",
                _ => "expired",
            },
        },
        ("terminatedByTpp", _) => "terminatedByTpp",
        _ => "rejected",
    })
}

/// The Berlin Group `consentStatus` now of consent resource `id` created by `tpp` (for the
/// state browser, `GET /v1/sandbox/state`).
///
/// Errors: those of [`load_resource`] and of the status computation (503 on storage).
pub(crate) fn status_now(app: &App, tpp: &str, id: &str) -> Result<&'static str, ApiError> {
    current_status(app, &load_resource(app, &TppId(tpp.into()), id)?)
}

fn date_of(secs: i64) -> chrono::NaiveDate {
    chrono::DateTime::<chrono::Utc>::from(crate::cert::from_unix_seconds(secs)).date_naive()
}

/// The consent resource `{consentId}` of the request path, created by the calling TPP, as
/// the extractor of the consent resource operations: the TPP needs the AISP role
/// ([`rules::TppRoles::require_ais`]), then [`load_resource`].
///
/// Errors (the rejection): 401 `ROLE_INVALID` without `PSP_AI`; those of
/// [`load_resource`].
pub struct OwnConsent(Resource);

impl FromRequestParts<Arc<App>> for OwnConsent {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, ApiError> {
        let TppResource { tpp, roles, id } = TppResource::from_request_parts(parts, app).await?;
        roles.require_ais()?;
        load_resource(app, &tpp.id, &id).map(OwnConsent)
    }
}

/// `GET /v1/consents/{consentId}/status` (also under `/v1/bank-offered-consents`).
///
/// Errors: 401 `ROLE_INVALID` without `PSP_AI`; 404 `RESOURCE_UNKNOWN`; 403
/// `CONSENT_UNKNOWN` for another TPP's consent.
pub async fn consent_status(
    State(app): State<Arc<App>>,
    OwnConsent(r): OwnConsent,
) -> Result<axum::Json<ConsentStatusResponse>, ApiError> {
    Ok(axum::Json(ConsentStatusResponse {
        consent_status: current_status(&app, &r)?.into(),
    }))
}

/// `GET /v1/consents/{consentId}` (also under `/v1/bank-offered-consents`): the consent as
/// granted (see [`ConsentInformation`]).
///
/// Errors: as [`consent_status`].
pub async fn consent_information(
    State(app): State<Arc<App>>,
    OwnConsent(r): OwnConsent,
) -> Result<axum::Json<ConsentInformation>, ApiError> {
    let status = current_status(&app, &r)?;
    let mut access = AccountAccess::default();
    let mut links = Links::new();
    let mut since = r.created_at;
    if let Some(key) = &r.key
        && let Some(c) = app.store.consent(key)?
    {
        since = rules::secs(c.granted_at);
        if status == "valid" {
            let mut refs: Vec<crate::xs2a::model::AccountReference> = app
                .store
                .accounts_by_ids(&c.accounts)?
                .iter()
                .map(|a| crate::xs2a::model::AccountReference {
                    bban: Some(a.bban.clone()),
                    currency: Some(a.currency.clone()),
                    ..Default::default()
                })
                .collect();
            refs.extend(
                access::consented(&app.domain(), key)?
                    .into_iter()
                    .filter_map(|id| app.store.card_account(id).transpose())
                    .map(|card| {
                        card.map(|card| crate::xs2a::model::AccountReference {
                            masked_pan: Some(card.masked_pan.clone()),
                            currency: Some(card.currency.clone()),
                            ..Default::default()
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            );
            access.accounts = refs.clone();
            access.balances = refs.clone();
            access.transactions = refs;
            links.insert(names::ACCOUNT.into(), Link::href("/v1/accounts"));
            links.insert("card-account".into(), Link::href("/v1/card-accounts"));
        }
    }
    let lifetime = i64::try_from(crate::sandbox::model::CONSENT_LIFETIME.as_secs()).unwrap_or(0);
    Ok(axum::Json(ConsentInformation {
        access,
        recurring_indicator: true,
        valid_until: date_of(since.saturating_add(lifetime)).to_string(),
        frequency_per_day: u32::try_from(rules::UNATTENDED_CALLS).unwrap_or(4),
        last_action_date: date_of(r.last_action).to_string(),
        consent_status: status.into(),
        links,
    }))
}

/// `DELETE /v1/consents/{consentId}` (also under `/v1/bank-offered-consents`): the TPP
/// terminates the consent (`terminatedByTpp`). A valid one ends the account access of its
/// (PSU-ID, context) — account calls then answer 401 + `scaRedirect` until a new SCA; a
/// `received` one's SCA link stops working. 204, also when it had already ended.
///
/// Errors: as [`consent_status`].
pub async fn consent_delete(
    State(app): State<Arc<App>>,
    OwnConsent(r): OwnConsent,
) -> Result<StatusCode, ApiError> {
    let status = current_status(&app, &r)?;
    if !matches!(status, "received" | "valid") {
        return Ok(StatusCode::NO_CONTENT);
    }
    if status == "received"
        && let Err(AuthorisationError::Storage) =
            app.store.set_step(r.id, app.clock.now(), ScaStep::Finished)
    {
        return Err(ApiError::storage(
            "finishing the consent's SCA authorisation failed",
        ));
    }
    let revoke = r.key.as_ref().filter(|_| status == "valid");
    access::terminate_resource(&app.domain(), r.id, revoke)?;
    Ok(StatusCode::NO_CONTENT)
}

/// The consent routes (merged into [`crate::sandbox::router`]). `POST /v1/consents/` (with the
/// trailing slash the bank's own v1 collection sends) is `POST /v1/consents`.
pub fn routes() -> Router<Arc<App>> {
    // The same resource under both collections; only the creation differs.
    let collections = [
        ("/v1/bank-offered-consents", post(bank_offered_consents)),
        ("/v1/consents", post(consents_deprecated)),
    ];
    collections
        .into_iter()
        .fold(Router::new(), |router, (base, create)| {
            router
                .route(base, create.clone())
                .route(&format!("{base}/"), create)
                .route(
                    &format!("{base}/{{consent_id}}"),
                    get(consent_information).delete(consent_delete),
                )
                .route(
                    &format!("{base}/{{consent_id}}/status"),
                    get(consent_status),
                )
        })
}
