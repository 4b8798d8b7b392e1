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
//! 4. The 180-day consent renewal is the consent's own age ([`super::store::CONSENT_LIFETIME`]).
//!
//! How the two combine, in [`super::consent::resolve`]: the consent (which accounts, given at
//! SCA, 180 days) is checked first for every request; the session (1 hour) only for
//! PSU-present requests. A request without `PSU-IP-Address` (PSU not present) needs only the
//! consent, and is limited instead (4 calls a day, 90 days of transactions: [`super::rules`]).
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
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{delete, get};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use uuid::Uuid;

use super::App;
use super::auth::Tpp;
use super::consent;
use super::db::{self, db_error};
use super::errors::{ApiError, ApiPath};
use super::rules::{self, TppRoles};
use super::store::{ConsentKey, TppId};
use crate::cert::Psd2Role;
use crate::xs2a::error::MessageCode;
use crate::xs2a::headers;
use crate::xs2a::links::{Link, Links, names};
use crate::xs2a::model::SandboxAgreement;

/// How long the SCA of a session is valid (interface document, Limits: "SCA session
/// validity, TPP-Session-ID, 1 hour"; SCA session state rule 1).
pub const SCA_SESSION_LIFETIME: Duration = Duration::from_secs(3600);

/// The tables of this module: sessions, registrations of PISP-only TPPs (consent
/// registrations are the store's), revocations, SCA purposes. Sandbox initialization empties
/// them with every other table ([`super::store::Store::initialize`]).
pub const MIGRATION: db::Migration = (
    "psu_001_sessions_registrations_revocations",
    "CREATE TABLE psu_sessions (
        tpp TEXT NOT NULL,
        psu_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        sca_at INTEGER NOT NULL,
        superseded INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tpp, psu_id, session_id)
    );
    CREATE TABLE psu_pisp_registrations (
        tpp TEXT NOT NULL,
        psu_id TEXT NOT NULL,
        customer TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        registered_at INTEGER NOT NULL,
        PRIMARY KEY (tpp, psu_id)
    );
    CREATE TABLE psu_revocations (
        tpp TEXT NOT NULL,
        psu_id TEXT NOT NULL,
        agreement TEXT NOT NULL,
        revoked_at INTEGER NOT NULL,
        by_tpp INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tpp, psu_id, agreement)
    );
    CREATE TABLE psu_sca_purposes (
        authorisation TEXT PRIMARY KEY,
        purpose TEXT NOT NULL
    );",
);

fn agreement_key(a: Option<Uuid>) -> String {
    a.map(|a| a.to_string()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Sessions

#[derive(Debug, Clone)]
struct SessionRow {
    session_id: String,
    sca_at: i64,
    superseded: bool,
}

fn sessions(app: &App, tpp: &TppId, psu_id: Uuid) -> Result<Vec<SessionRow>, ApiError> {
    app.db.read(|c| {
        let mut st = c.prepare_cached(
            "SELECT session_id, sca_at, superseded FROM psu_sessions
             WHERE tpp = ?1 AND psu_id = ?2 ORDER BY sca_at DESC, rowid DESC",
        )?;
        let rows = st.query_map(params![tpp.0, psu_id.to_string()], |r| {
            Ok(SessionRow {
                session_id: r.get(0)?,
                sca_at: r.get(1)?,
                superseded: r.get::<_, i64>(2)? != 0,
            })
        })?;
        rows.collect()
    })
}

/// Why a PSU-present request of (TPP, PSU-ID) in `session` (its `TPP-Session-ID`, if any)
/// needs a new SCA; `None` when its session's SCA is valid. See the module documentation.
///
/// Errors: storage (503).
pub fn session_refusal(
    app: &App,
    tpp: &TppId,
    psu_id: Uuid,
    session: Option<&str>,
) -> Result<Option<String>, ApiError> {
    Ok(session_check(app, tpp, psu_id, session)?.err())
}

/// [`session_refusal`] with the other answer too: `Ok(Ok(deadline))` when the session's SCA
/// is valid, `deadline` being the last second (Unix seconds, inclusive) it stays valid
/// (its SCA time + [`SCA_SESSION_LIFETIME`]); `Ok(Err(reason))` when a new SCA is needed.
///
/// Errors: storage (503).
pub fn session_check(
    app: &App,
    tpp: &TppId,
    psu_id: Uuid,
    session: Option<&str>,
) -> Result<Result<i64, String>, ApiError> {
    let rows = sessions(app, tpp, psu_id)?;
    let now = rules::secs(app.clock.now());
    let limit = i64::try_from(SCA_SESSION_LIFETIME.as_secs()).unwrap_or(i64::MAX);
    let fresh = |r: &SessionRow| now.saturating_sub(r.sca_at) <= limit;
    let deadline = |r: &SessionRow| Ok(r.sca_at.saturating_add(limit));
    Ok(match session {
        Some(sid) => match rows.iter().find(|r| r.session_id == sid) {
            Some(r) if r.superseded => Err(format!(
                "TPP-Session-ID {sid:?} ended when the SCA of a newer session of this PSU \
                 completed (SCA session rule 3): a new SCA is needed"
            )),
            Some(r) if !fresh(r) => Err(format!(
                "the SCA of TPP-Session-ID {sid:?} is older than 1 hour (SCA session rule 1): \
                 a new SCA is needed while the PSU is present"
            )),
            Some(r) => deadline(r),
            None => Err(match rows.iter().find(|r| !r.superseded && fresh(r)) {
                Some(o) => format!(
                    "TPP-Session-ID {sid:?} is new while session {:?} is still valid: a new \
                         session needs its own SCA (SCA session rule 3); {:?} stays valid unless \
                         this SCA completes",
                    o.session_id, o.session_id
                ),
                None => format!("no SCA in TPP-Session-ID {sid:?} yet: SCA needed"),
            }),
        },
        None => match rows.iter().find(|r| !r.superseded) {
            None => Err("the PSU has no SCA session with this TPP: SCA needed".to_string()),
            Some(r) if !fresh(r) => Err(format!(
                "the SCA of the PSU's current session {:?} is older than 1 hour (SCA session \
                 rule 1): a new SCA is needed while the PSU is present",
                r.session_id
            )),
            Some(r) => deadline(r),
        },
    })
}

/// Records a completed SCA of (TPP, PSU-ID) in `session_id` and runs `extra` (card consents,
/// registration, ...) in the same transaction: the session's SCA time is now, every other
/// session of the PSU with this TPP ends (rule 3), and the revocation of `consent` (the
/// consent the SCA gave, if any) is lifted.
///
/// Errors: storage (503), or what `extra` returns.
pub fn record_completed_sca(
    app: &App,
    tpp: &TppId,
    psu_id: Uuid,
    session_id: &str,
    consent: Option<&ConsentKey>,
    extra: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    let now = rules::secs(app.clock.now());
    let psu = psu_id.to_string();
    app.db.write(|tx| {
        tx.execute(
            "UPDATE psu_sessions SET superseded = 1
             WHERE tpp = ?1 AND psu_id = ?2 AND session_id <> ?3",
            params![tpp.0, psu, session_id],
        )
        .map_err(db_error)?;
        tx.execute(
            "INSERT INTO psu_sessions (tpp, psu_id, session_id, sca_at, superseded)
             VALUES (?1, ?2, ?3, ?4, 0)
             ON CONFLICT (tpp, psu_id, session_id)
             DO UPDATE SET sca_at = excluded.sca_at, superseded = 0",
            params![tpp.0, psu, session_id, now],
        )
        .map_err(db_error)?;
        if let Some(k) = consent {
            tx.execute(
                "DELETE FROM psu_revocations WHERE tpp = ?1 AND psu_id = ?2 AND agreement = ?3",
                params![k.tpp.0, k.psu_id.to_string(), agreement_key(k.agreement)],
            )
            .map_err(db_error)?;
        }
        extra(tx)
    })
}

// ---------------------------------------------------------------------------------------
// Registration and SCA purposes

/// Records that `psu_id` of `tpp` is `customer` (inside [`record_completed_sca`]).
pub fn register(
    tx: &rusqlite::Transaction<'_>,
    tpp: &TppId,
    psu_id: Uuid,
    customer: Uuid,
    at: i64,
) -> Result<(), ApiError> {
    tx.execute(
        "INSERT INTO psu_pisp_registrations (tpp, psu_id, customer, registered_at)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (tpp, psu_id) DO UPDATE SET customer = excluded.customer,
             registered_at = excluded.registered_at",
        params![tpp.0, psu_id.to_string(), customer.to_string(), at],
    )
    .map(|_| ())
    .map_err(db_error)
}

/// The customer behind `psu_id` for `tpp`, however the PSU-ID came to be: the one resolver
/// of a `PSU-ID` header for every module (accounts, cards, consents, agreements, payments,
/// signing baskets, revocation).
///
/// A PSU-ID is "unique per TPP and ASPSP combination, stable" (interface document, Resources,
/// "Redirect parameters after SCA"): UUID v5 of (TPP, customer) ([`super::sca::psu_id`]) in
/// every flow, so the flows that create one share it, and each records it in its own table:
///
/// | Created by | Table |
/// |---|---|
/// | consent SCA (`/v1/accounts`, `/v1/consents`, ... ; Authentication 11) | store `psu_registrations` |
/// | registration SCA (`GET /v1/users`, `/v1/agreements`; Authentication 15) | `psu_pisp_registrations` |
/// | payment or basket SCA, `X-PSU-IDENTITY` ("a PSU-ID is then created") | `pis_psus` |
///
/// All three are checked, so a PSU-ID from any of them is known everywhere (Authentication
/// 12: "PSU-ID is set on all requests after registration"). A customer deleted since (sandbox
/// management) resolves to `None`.
///
/// Errors: storage (503).
pub fn psu_customer(app: &App, tpp: &TppId, psu_id: Uuid) -> Result<Option<Uuid>, ApiError> {
    let found = match app.store.psu_customer(tpp, psu_id)? {
        Some(c) => Some(c),
        None => {
            let psu = psu_id.to_string();
            let row: Option<String> = app.db.read(|c| {
                let pisp: Option<String> = c
                    .prepare_cached(
                        "SELECT customer FROM psu_pisp_registrations
                         WHERE tpp = ?1 AND psu_id = ?2",
                    )?
                    .query_row(params![tpp.0, psu], |r| r.get(0))
                    .optional()?;
                match pisp {
                    Some(p) => Ok(Some(p)),
                    None => super::payments::rows::psu_customer(c, &tpp.0, &psu),
                }
            })?;
            row.and_then(|s| Uuid::parse_str(&s).ok())
        }
    };
    Ok(match found {
        Some(c) if app.store.customer(c)?.is_some() => Some(c),
        _ => None,
    })
}

/// Marks authorisation `id` as a registration SCA (no account consent step).
fn mark_registration(app: &App, id: Uuid) -> Result<(), ApiError> {
    app.db.write(|tx| {
        tx.execute(
            "INSERT OR REPLACE INTO psu_sca_purposes (authorisation, purpose)
             VALUES (?1, 'register')",
            params![id.to_string()],
        )
        .map(|_| ())
        .map_err(db_error)
    })
}

/// Whether authorisation `id` is a registration SCA (started by `GET /v1/users` or by
/// `GET /v1/agreements` without a known PSU-ID).
pub fn is_registration(app: &App, id: Uuid) -> bool {
    app.db
        .read(|c| {
            c.query_row(
                "SELECT EXISTS(SELECT 1 FROM psu_sca_purposes
                 WHERE authorisation = ?1 AND purpose = 'register')",
                params![id.to_string()],
                |r| r.get::<_, bool>(0),
            )
        })
        .unwrap_or(false)
}

/// Starts a registration SCA; returns its `scaRedirect` href.
///
/// Errors: 400 `FORMAT_ERROR` for a missing or bad `TPP-Redirect-URI` or `TPP-Session-ID`;
/// storage (503).
pub fn start_registration(app: &App, tpp: &Tpp, h: &HeaderMap) -> Result<String, ApiError> {
    let (id, href) = consent::begin_sca(app, tpp, h, "PSU registration needs SCA")?;
    mark_registration(app, id)?;
    Ok(href)
}

// ---------------------------------------------------------------------------------------
// Revocation

/// Who ended a consent before its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    /// The PSU, at the bank (`DELETE /v1/sandbox/consents/{psuId}`): `revokedByPsu`.
    ByPsu,
    /// The TPP (`DELETE /v1/consents/{consentId}`): `terminatedByTpp`.
    ByTpp,
}

/// Whether consent `key` was revoked by the PSU or terminated by the TPP (and no new SCA
/// for it completed since).
///
/// Errors: storage (503).
pub fn revocation(app: &App, key: &ConsentKey) -> Result<Option<Revoked>, ApiError> {
    let by_tpp: Option<bool> = app.db.read(|c| {
        c.prepare_cached(
            "SELECT by_tpp FROM psu_revocations
             WHERE tpp = ?1 AND psu_id = ?2 AND agreement = ?3",
        )?
        .query_row(
            params![
                key.tpp.0,
                key.psu_id.to_string(),
                agreement_key(key.agreement)
            ],
            |r| r.get(0),
        )
        .optional()
    })?;
    Ok(by_tpp.map(|t| if t { Revoked::ByTpp } else { Revoked::ByPsu }))
}

/// Marks consent `key` revoked at `at` (seconds), by the TPP or the PSU.
///
/// Errors: storage (503).
pub fn revoke_key(
    tx: &rusqlite::Transaction<'_>,
    key: &ConsentKey,
    by: Revoked,
    at: i64,
) -> Result<(), ApiError> {
    tx.execute(
        "INSERT OR REPLACE INTO psu_revocations (tpp, psu_id, agreement, revoked_at, by_tpp)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            key.tpp.0,
            key.psu_id.to_string(),
            agreement_key(key.agreement),
            at,
            by == Revoked::ByTpp
        ],
    )
    .map(|_| ())
    .map_err(db_error)
}

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
    if psu_customer(&app, &tpp.id, psu_id)?.is_none() {
        return Err(ApiError::not_found(format!(
            "PSU-ID {psu_id} is not known to this TPP"
        )));
    }
    let mut keys = vec![None];
    keys.extend(
        app.store
            .corporate_consents(&tpp.id, psu_id)?
            .into_iter()
            .map(Some),
    );
    let mut consented: Vec<Option<Uuid>> = Vec::new();
    for a in keys {
        let key = ConsentKey {
            tpp: tpp.id.clone(),
            psu_id,
            agreement: a,
        };
        if app.store.consent(&key)?.is_some() {
            consented.push(a);
        }
    }
    let keys = consented;
    let now = rules::secs(app.clock.now());
    app.db.write(|tx| {
        for a in &keys {
            let key = ConsentKey {
                tpp: tpp.id.clone(),
                psu_id,
                agreement: *a,
            };
            revoke_key(tx, &key, Revoked::ByPsu, now)?;
        }
        Ok(())
    })?;
    Ok(StatusCode::NO_CONTENT)
}

// ---------------------------------------------------------------------------------------
// GET /v1/users

/// Body of `GET /v1/users`: `_links.scaRedirect` and a `psuMessage` (the interface document
/// does not show the user record; this is the minimum its text names: "answers 200 with a
/// scaRedirect link").
#[derive(Debug, Clone, Serialize)]
pub struct UsersResponse {
    #[serde(rename = "_links")]
    pub links: Links,
    #[serde(rename = "psuMessage")]
    pub psu_message: String,
}

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
    headers: HeaderMap,
) -> Result<Json<UsersResponse>, ApiError> {
    roles.require(Psd2Role::PspPi, "PSU registration (GET /v1/users)")?;
    let href = start_registration(&app, &tpp, &headers)?;
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

/// Body of `GET /v1/agreements`: `{"agreements":[...]}`, each element the agreement shape of
/// the sandbox customer table (`id`, `name`, `engagements`, `_links.self`,
/// `_links.engagements`); the `id` is the `PSU-Corporate-ID` of that corporate context.
#[derive(Debug, Clone, Serialize)]
pub struct AgreementList {
    pub agreements: Vec<SandboxAgreement>,
}

/// One account an agreement covers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Engagement {
    pub resource_id: String,
    pub bban: String,
    pub currency: String,
    pub name: String,
    #[serde(rename = "_links")]
    pub links: Links,
}

/// Body of `GET /v1/agreements/{id}/engagements`.
#[derive(Debug, Clone, Serialize)]
pub struct EngagementList {
    pub engagements: Vec<Engagement>,
}

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
        match start_registration(app, tpp, h) {
            Ok(href) => ApiError::new(MessageCode::ConsentInvalid, text).with_sca_redirect(href),
            Err(e) => e,
        }
    };
    let Some(psu) = consent::header(h, headers::PSU_ID)? else {
        return Err(sca(
            "no PSU-ID: the PSU has to register (SCA) before its agreements can be listed",
        ));
    };
    let psu_id = Uuid::parse_str(psu)
        .map_err(|_| ApiError::format(format!("PSU-ID {psu:?} is not a UUID")))?;
    psu_customer(app, &tpp.id, psu_id)?
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
            .map(super::customers::agreement_element)
            .collect(),
    }))
}

fn held_agreement(
    app: &App,
    customer: Uuid,
    id: &str,
) -> Result<super::store::Agreement, ApiError> {
    Uuid::parse_str(id)
        .ok()
        .map_or(Ok(None), |a| app.store.agreement(a))?
        .filter(|a| a.holder == customer)
        .ok_or_else(|| {
            ApiError::forbidden_unknown(format!("agreement {id:?} is not held by this PSU"))
        })
}

/// `GET /v1/agreements/{id}`: one agreement of the PSU (the `self` link of the listing).
///
/// Errors: as [`agreements`]; 403 `RESOURCE_UNKNOWN` for an agreement the PSU does not hold.
pub async fn agreement(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    roles: TppRoles,
    headers: HeaderMap,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<SandboxAgreement>, ApiError> {
    let customer = request_customer(&app, &tpp, &roles, &headers)?;
    let a = held_agreement(&app, customer, &id)?;
    Ok(Json(super::customers::agreement_element(&a)))
}

/// `GET /v1/agreements/{id}/engagements`: the accounts the agreement covers.
///
/// Errors: as [`agreement`].
pub async fn engagements(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    roles: TppRoles,
    headers: HeaderMap,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<EngagementList>, ApiError> {
    let customer = request_customer(&app, &tpp, &roles, &headers)?;
    let a = held_agreement(&app, customer, &id)?;
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

/// The routes of this module (merged into [`super::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/users", get(users))
        .route("/v1/user", get(users))
        .route("/v1/agreements", get(agreements))
        .route("/v1/agreements/{id}", get(agreement))
        .route("/v1/agreements/{id}/engagements", get(engagements))
        .route("/v1/sandbox/consents/{psu_id}", delete(revoke))
}
