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
//! PSU or termination by the TPP ([`super::psu::revocation`]), the consent's 180 days, and —
//! only when the PSU is present (`PSU-IP-Address`) — the 1-hour SCA session of
//! `TPP-Session-ID` ([`super::psu::session_refusal`]). Every refusal that an SCA can cure is
//! a 401 with a `scaRedirect`.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use uuid::Uuid;

use super::App;
use super::auth::Tpp;
use super::db::{self, db_error};
use super::errors::{ApiError, ApiPath};
use super::rules::{self, TppRoles};
use super::store::{
    Account, Agreement, Authorisation, AuthorisationError, Consent, ConsentKey, Customer, ScaStep,
    TppId,
};
use crate::xs2a::error::{MessageCode, TppMessage, TppMessageCategory};
use crate::xs2a::headers;
use crate::xs2a::links::{Link, Links, names};

/// Longest accepted `TPP-Session-ID`.
pub const MAX_SESSION_ID_CHARS: usize = 200;

/// A request's standing consent.
#[derive(Debug, Clone)]
pub struct Access {
    pub key: ConsentKey,
    pub customer: Customer,
    /// Set in CORPORATE context.
    pub agreement: Option<Agreement>,
    pub consent: Consent,
}

impl Access {
    /// Whether the PSU could consent to `account` in this context (own accounts in PRIVATE,
    /// the agreement's accounts in CORPORATE).
    ///
    /// Errors: the database fails (503).
    pub fn may_consent_to(&self, app: &App, account: Uuid) -> Result<bool, ApiError> {
        Ok(match &self.agreement {
            Some(a) => a.accounts.contains(&account),
            None => app
                .store
                .accounts_of(self.customer.id)?
                .iter()
                .any(|a| a.id == account),
        })
    }
}

/// The value of header `name`, trimmed, `None` when absent or blank.
///
/// Errors: 400 `FORMAT_ERROR` when it is not visible ASCII.
pub fn header<'a>(h: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, ApiError> {
    match h.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim()).filter(|s| !s.is_empty()))
            .map_err(|_| ApiError::format(format!("the {name} header is not visible ASCII"))),
    }
}

/// Starts an SCA authorisation for this request; returns its id and the absolute
/// `scaRedirect` href (`{public_url}/sca/{id}`, [`App::public_url`], never the request's
/// `Host`). `why` says why SCA is needed (for the message when `TPP-Redirect-URI` is missing). Records `TPP-Session-ID`, generating one
/// when absent.
///
/// Errors: 400 `FORMAT_ERROR` when `TPP-Redirect-URI` is missing or not an absolute http(s)
/// URL, or `TPP-Session-ID` is longer than [`MAX_SESSION_ID_CHARS`].
pub fn begin_sca(
    app: &App,
    tpp: &Tpp,
    h: &HeaderMap,
    why: &str,
) -> Result<(Uuid, String), ApiError> {
    let Some(redirect) = header(h, headers::TPP_REDIRECT_URI)? else {
        return Err(ApiError::format(format!(
            "the TPP-Redirect-URI header is missing; it is required because this request \
             needs SCA ({why})"
        )));
    };
    match url::Url::parse(redirect) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => {}
        _ => {
            return Err(ApiError::format(format!(
                "TPP-Redirect-URI {redirect:?} is not an absolute http(s) URL"
            )));
        }
    }
    let session = match header(h, headers::TPP_SESSION_ID)? {
        Some(s) if s.chars().count() > MAX_SESSION_ID_CHARS => {
            return Err(ApiError::format(format!(
                "TPP-Session-ID is longer than {MAX_SESSION_ID_CHARS} characters"
            )));
        }
        Some(s) => s.to_string(),
        None => Uuid::new_v4().to_string(),
    };
    let now = app.clock.now();
    let auth = Authorisation {
        id: authorisation_id(),
        tpp: tpp.id.clone(),
        tpp_name: tpp.name.clone(),
        redirect_uri: redirect.to_string(),
        tpp_session_id: session,
        created_at: now,
        step: ScaStep::Identify,
    };
    let id = auth.id;
    let href = format!("{}/sca/{}", app.public_url, id);
    app.store.insert_authorisation(auth, now)?;
    Ok((id, href))
}

/// Starts an SCA for this request and returns the 401 (`code`, `text`) carrying
/// `_links.scaRedirect` to it (see [`begin_sca`]).
///
/// Errors: as [`begin_sca`].
pub fn start_sca(
    app: &App,
    tpp: &Tpp,
    h: &HeaderMap,
    code: MessageCode,
    text: &str,
) -> Result<ApiError, ApiError> {
    let (_, href) = begin_sca(app, tpp, h, text)?;
    Ok(ApiError::new(code, text).with_sca_redirect(href))
}

/// A random authorisation id without a run of ten or more decimal digits, so that the SCA
/// page's only long digit runs are the customerNumbers (clients may scrape those as hints).
fn authorisation_id() -> Uuid {
    loop {
        let id = Uuid::new_v4();
        let mut run = 0;
        let long = id.to_string().bytes().any(|b| {
            run = if b.is_ascii_digit() { run + 1 } else { 0 };
            run >= 10
        });
        if !long {
            return id;
        }
    }
}

/// [`start_sca`] collapsed into the error to answer.
pub fn needs_sca(app: &App, tpp: &Tpp, h: &HeaderMap, code: MessageCode, text: &str) -> ApiError {
    start_sca(app, tpp, h, code, text).unwrap_or_else(|e| e)
}

/// The consent addressed by the request's PSU headers, or the answer to send instead.
///
/// A granted access is remembered in [`App::decisions`] (see [`Decisions`]): the same
/// question is answered from there only while the data version is unchanged and the sandbox
/// clock is still within the consent's 180 days and the SCA session's hour, so the answer is
/// always the one the full check would give.
pub fn resolve(app: &App, tpp: &Tpp, h: &HeaderMap) -> Result<Access, ApiError> {
    let key = DecisionKey::of(tpp, h, None);
    let (version, now) = (app.db.version(), app.clock.now());
    if let Some(d) = app.decisions.get(&key, version, now) {
        return Ok(d.access);
    }
    let (access, validity) = resolve_fresh(app, tpp, h, version, now)?;
    app.decisions.put(
        key,
        Decision {
            validity,
            access: access.clone(),
            account: None,
        },
    );
    Ok(access)
}

/// [`resolve`] and [`consented_account`] for account `id`, with the account owner's customer
/// record (`None` when the owner is gone), remembered like [`resolve`].
///
/// Errors: those of [`resolve`] and [`consented_account`].
pub fn resolve_account(
    app: &App,
    tpp: &Tpp,
    h: &HeaderMap,
    id: &str,
) -> Result<(Access, Account, Option<Customer>), ApiError> {
    let key = DecisionKey::of(tpp, h, Some(id));
    let (version, now) = (app.db.version(), app.clock.now());
    if let Some(Decision {
        access,
        account: Some((account, owner)),
        ..
    }) = app.decisions.get(&key, version, now)
    {
        return Ok((access, account, owner));
    }
    let (access, validity) = resolve_fresh(app, tpp, h, version, now)?;
    let account = consented_account(app, tpp, h, &access, id)?;
    let owner = app.store.customer(account.owner)?;
    app.decisions.put(
        key,
        Decision {
            validity,
            access: access.clone(),
            account: Some((account.clone(), owner.clone())),
        },
    );
    Ok((access, account, owner))
}

/// What an access decision depends on besides the stored data and the clock: the TPP, the
/// PSU headers as sent, whether the PSU is present, and the account asked for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DecisionKey {
    tpp: TppId,
    psu_id: Option<HeaderValue>,
    corporate: Option<HeaderValue>,
    session: Option<HeaderValue>,
    present: bool,
    account: Option<String>,
}

impl DecisionKey {
    fn of(tpp: &Tpp, h: &HeaderMap, account: Option<&str>) -> Self {
        DecisionKey {
            tpp: tpp.id.clone(),
            psu_id: h.get(headers::PSU_ID).cloned(),
            corporate: h.get(headers::PSU_CORPORATE_ID).cloned(),
            session: h.get(headers::TPP_SESSION_ID).cloned(),
            present: rules::psu_present(h),
            account: account.map(str::to_string),
        }
    }
}

/// When a granted access still holds: same data version ([`db::Db::version`]), and the
/// sandbox clock between the decision time and both the consent's last valid instant
/// (granted + [`super::store::CONSENT_LIFETIME`]) and, with the PSU present, the SCA
/// session's last valid second ([`super::psu::session_check`]).
#[derive(Debug, Clone, Copy)]
struct Validity {
    version: u64,
    from: std::time::SystemTime,
    consent_until: std::time::SystemTime,
    session_until: Option<i64>,
}

impl Validity {
    fn holds(&self, version: u64, now: std::time::SystemTime) -> bool {
        self.version == version
            && now >= self.from
            && now <= self.consent_until
            && self
                .session_until
                .is_none_or(|last| rules::secs(now) <= last)
    }
}

/// A remembered granted access.
#[derive(Debug, Clone)]
pub struct Decision {
    validity: Validity,
    access: Access,
    account: Option<(Account, Option<Customer>)>,
}

/// Granted access decisions of [`resolve`] and [`resolve_account`]; refusals are never
/// remembered. At most [`DECISION_CACHE_ENTRIES`] are kept; the cache is emptied when full.
#[derive(Debug, Default)]
pub struct Decisions {
    map: std::sync::Mutex<
        std::collections::HashMap<DecisionKey, Decision, foldhash::fast::RandomState>,
    >,
}

/// Most decisions a [`Decisions`] keeps.
pub const DECISION_CACHE_ENTRIES: usize = 4096;

impl Decisions {
    fn get(&self, key: &DecisionKey, version: u64, now: std::time::SystemTime) -> Option<Decision> {
        let map = self.map.lock().ok()?;
        map.get(key)
            .filter(|d| d.validity.holds(version, now))
            .cloned()
    }

    fn put(&self, key: DecisionKey, decision: Decision) {
        if let Ok(mut map) = self.map.lock() {
            if map.len() >= DECISION_CACHE_ENTRIES {
                map.retain(|_, d| d.validity.version == decision.validity.version);
                if map.len() >= DECISION_CACHE_ENTRIES {
                    map.clear();
                }
            }
            map.insert(key, decision);
        }
    }
}

/// The full check of [`resolve`] at data version `version` and clock `now`, with how long its
/// grant holds.
fn resolve_fresh(
    app: &App,
    tpp: &Tpp,
    h: &HeaderMap,
    version: u64,
    now: std::time::SystemTime,
) -> Result<(Access, Validity), ApiError> {
    let sca = |code, text: &str| needs_sca(app, tpp, h, code, text);
    let Some(psu) = header(h, headers::PSU_ID)? else {
        return Err(sca(
            MessageCode::ConsentInvalid,
            "no PSU-ID: the PSU has to authorise access (SCA) first",
        ));
    };
    let psu_id = Uuid::parse_str(psu)
        .map_err(|_| ApiError::format(format!("PSU-ID {psu:?} is not a UUID")))?;
    let corporate = match header(h, headers::PSU_CORPORATE_ID)? {
        None => None,
        Some(c) => Some(Uuid::parse_str(c).map_err(|_| {
            ApiError::new(
                MessageCode::CorporateIdInvalid,
                format!("PSU-Corporate-ID {c:?} is not a UUID"),
            )
        })?),
    };
    let Some(customer) = (match super::psu::psu_customer(app, &tpp.id, psu_id)? {
        Some(c) => app.store.customer(c)?,
        None => None,
    }) else {
        return Err(sca(
            MessageCode::ConsentInvalid,
            "this PSU-ID has no consent for this TPP: SCA needed",
        ));
    };
    let agreement = match corporate {
        None => None,
        Some(cid) => match app.store.agreement(cid)? {
            Some(a) if a.holder == customer.id => Some(a),
            _ => {
                return Err(ApiError::new(
                    MessageCode::CorporateIdInvalid,
                    format!("PSU-Corporate-ID {cid} is not an agreement of this PSU"),
                ));
            }
        },
    };
    let key = ConsentKey {
        tpp: tpp.id.clone(),
        psu_id,
        agreement: agreement.as_ref().map(|a| a.id),
    };
    let Some(consent) = app.store.consent(&key)? else {
        if agreement.is_none() && !app.store.corporate_consents(&tpp.id, psu_id)?.is_empty() {
            return Err(ApiError::format(
                "the PSU-Corporate-ID header is missing: this PSU acts in CORPORATE context \
                 (its consent was given for a corporate agreement), so every request needs the \
                 psu-corporate-id received after SCA",
            ));
        }
        return Err(sca(
            MessageCode::ConsentInvalid,
            match agreement {
                Some(_) => "no consent in this CORPORATE context: SCA needed",
                None => "no consent in PRIVATE context: SCA needed",
            },
        ));
    };
    match super::psu::revocation(app, &key)? {
        Some(super::psu::Revoked::ByPsu) => {
            return Err(sca(
                MessageCode::ConsentInvalid,
                "the PSU revoked this consent at the bank: a new SCA is needed",
            ));
        }
        Some(super::psu::Revoked::ByTpp) => {
            return Err(sca(
                MessageCode::ConsentInvalid,
                "the TPP terminated this consent (DELETE of the consent resource): a new SCA \
                 is needed",
            ));
        }
        None => {}
    }
    if consent.is_expired(now) {
        return Err(sca(
            MessageCode::ConsentExpired,
            "the consent is older than 180 days: a new SCA is needed",
        ));
    }
    let mut session_until = None;
    if rules::psu_present(h) {
        let session = header(h, headers::TPP_SESSION_ID)?;
        match super::psu::session_check(app, &tpp.id, psu_id, session)? {
            Err(reason) => return Err(sca(MessageCode::ConsentInvalid, &reason)),
            Ok(last) => session_until = Some(last),
        }
    }
    let validity = Validity {
        version,
        from: now,
        consent_until: consent
            .granted_at
            .checked_add(super::store::CONSENT_LIFETIME)
            .unwrap_or(now),
        session_until,
    };
    Ok((
        Access {
            key,
            customer,
            agreement,
            consent,
        },
        validity,
    ))
}

/// The consented account `id` of `access`: 403 `RESOURCE_UNKNOWN` when the PSU has no such
/// account in this context, 401 with `scaRedirect` when it has but did not consent to it.
pub fn consented_account(
    app: &App,
    tpp: &Tpp,
    h: &HeaderMap,
    access: &Access,
    id: &str,
) -> Result<Account, ApiError> {
    let unknown = || {
        ApiError::forbidden_unknown(format!(
            "account {id:?} is not an account of this PSU in this context"
        ))
    };
    let Ok(uuid) = Uuid::parse_str(id) else {
        return Err(unknown());
    };
    if access.consent.accounts.contains(&uuid) {
        return app.store.account(uuid)?.ok_or_else(unknown);
    }
    if access.may_consent_to(app, uuid)? {
        return Err(needs_sca(
            app,
            tpp,
            h,
            MessageCode::ConsentInvalid,
            "the consent does not cover this account: SCA needed to add it",
        ));
    }
    Err(unknown())
}

// ---------------------------------------------------------------------------------------
// POST /v1/bank-offered-consents and the deprecated POST /v1/consents

/// Berlin Group `consentsResponse-201`: `consentStatus` (`received` until the PSU consents
/// during SCA), `consentId` (the id of the SCA authorisation that gathers the consent),
/// `_links.scaRedirect`; `tppMessages` carries the deprecation `WARNING` of `/v1/consents`
/// (Berlin Group `tppMessage2XX`, code `WARNING`).
#[derive(Debug, Clone, Serialize)]
pub struct ConsentsResponse {
    #[serde(rename = "consentStatus")]
    pub consent_status: String,
    #[serde(rename = "consentId")]
    pub consent_id: String,
    #[serde(rename = "_links")]
    pub links: Links,
    #[serde(rename = "psuMessage", skip_serializing_if = "Option::is_none")]
    pub psu_message: Option<String>,
    #[serde(rename = "tppMessages", skip_serializing_if = "Vec::is_empty")]
    pub tpp_messages: Vec<TppMessage>,
}

/// The text of the deprecation warning of `POST /v1/consents`.
pub const CONSENTS_DEPRECATED: &str = "POST /v1/consents is deprecated and its body is ignored: \
     use POST /v1/bank-offered-consents (the PSU chooses the accounts during SCA)";

fn consent_created(app: &App, tpp: &Tpp, h: &HeaderMap) -> Result<ConsentsResponse, ApiError> {
    let (id, href) = begin_sca(app, tpp, h, "a bank-offered consent is given during SCA")?;
    create_resource(app, id, &tpp.id)?;
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

fn created(body: ConsentsResponse) -> Response {
    let mut r = (StatusCode::CREATED, axum::Json(body)).into_response();
    r.headers_mut()
        .insert("ASPSP-SCA-Approach", HeaderValue::from_static("REDIRECT"));
    r
}

/// `POST /v1/bank-offered-consents`: starts the SCA during which the PSU chooses the accounts
/// (bank-offered consent, Authentication 11). 201 with [`ConsentsResponse`] and header
/// `ASPSP-SCA-Approach: REDIRECT`. A body is optional and its content ignored (the PSU, not
/// the TPP, picks the accounts), but when present it must be JSON whose strings the bank's
/// systems accept ([`rules::check_json_characters`]).
///
/// Errors: 401 `ROLE_INVALID` without `PSP_AI`; 400 `FORMAT_ERROR` for a body that is not
/// JSON, a refused character, or a missing `TPP-Redirect-URI`.
pub async fn bank_offered_consents(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    roles: TppRoles,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    roles.require_ais()?;
    if !body.trim_ascii().is_empty() {
        let v: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| ApiError::format(format!("the request body is not JSON: {e}")))?;
        rules::check_json_characters(&v)?;
    }
    Ok(created(consent_created(&app, &tpp, &headers)?))
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
    tpp: Tpp,
    roles: TppRoles,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    roles.require_ais()?;
    let mut body = consent_created(&app, &tpp, &headers)?;
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

/// The table of consent resources made by [`bank_offered_consents`] and
/// [`consents_deprecated`]. `id` is the `consentId` (the id of the SCA authorisation that
/// gathers the consent); `psu_id` and `agreement` are set when the SCA completes and name
/// the consent (TPP, PSU-ID, context) it gave. Times in seconds since the Unix epoch.
pub const MIGRATION: db::Migration = (
    "consent_001_resources",
    "CREATE TABLE consent_resources (
        id TEXT PRIMARY KEY,
        tpp TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('received', 'valid', 'rejected', 'terminatedByTpp')),
        psu_id TEXT,
        agreement TEXT,
        created_at INTEGER NOT NULL,
        last_action INTEGER NOT NULL
    );",
);

#[derive(Debug, Clone)]
struct Resource {
    id: Uuid,
    status: String,
    key: Option<ConsentKey>,
    created_at: i64,
    last_action: i64,
}

fn create_resource(app: &App, id: Uuid, tpp: &TppId) -> Result<(), ApiError> {
    let now = rules::secs(app.clock.now());
    app.db.write(|tx| {
        tx.execute(
            "INSERT INTO consent_resources (id, tpp, status, created_at, last_action)
             VALUES (?1, ?2, 'received', ?3, ?3)",
            params![id.to_string(), tpp.0, now],
        )
        .map(|_| ())
        .map_err(db_error)
    })
}

/// Marks the consent resource `id` (if the SCA `id` belongs to one) `valid` for consent `key`
/// (inside the transaction that records the completed SCA).
///
/// Errors: storage (503).
pub fn resource_authorised(
    tx: &rusqlite::Transaction<'_>,
    id: Uuid,
    key: &ConsentKey,
    at: i64,
) -> Result<(), ApiError> {
    tx.execute(
        "UPDATE consent_resources SET status = 'valid', psu_id = ?2, agreement = ?3,
             last_action = ?4
         WHERE id = ?1 AND status = 'received'",
        params![
            id.to_string(),
            key.psu_id.to_string(),
            key.agreement.map(|a| a.to_string()).unwrap_or_default(),
            at
        ],
    )
    .map(|_| ())
    .map_err(db_error)
}

/// Marks the consent resource `id` (if any) `rejected`: its SCA was cancelled.
///
/// Errors: storage (503).
pub fn resource_rejected(app: &App, id: Uuid) -> Result<(), ApiError> {
    let now = rules::secs(app.clock.now());
    app.db.write(|tx| {
        tx.execute(
            "UPDATE consent_resources SET status = 'rejected', last_action = ?2
             WHERE id = ?1 AND status = 'received'",
            params![id.to_string(), now],
        )
        .map(|_| ())
        .map_err(db_error)
    })
}

/// The consent resource `id` of `tpp`.
///
/// Errors: 404 `RESOURCE_UNKNOWN` for an unknown id; 403 `CONSENT_UNKNOWN` (Berlin Group
/// `MessageCode403_AIS`) for another TPP's consent.
fn load_resource(app: &App, tpp: &TppId, id: &str) -> Result<Resource, ApiError> {
    let unknown = || ApiError::not_found(format!("no consent {id:?}"));
    let uuid = Uuid::parse_str(id).map_err(|_| unknown())?;
    type Row = (String, String, Option<String>, Option<String>, i64, i64);
    let row: Option<Row> = app.db.read(|c| {
        c.query_row(
            "SELECT tpp, status, psu_id, agreement, created_at, last_action
             FROM consent_resources WHERE id = ?1",
            params![uuid.to_string()],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )
        .optional()
    })?;
    let (owner, status, psu, agreement, created_at, last_action) = row.ok_or_else(unknown)?;
    if owner != tpp.0 {
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
        ("valid", Some(key)) => match super::psu::revocation(app, key)? {
            Some(super::psu::Revoked::ByPsu) => "revokedByPsu",
            Some(super::psu::Revoked::ByTpp) => "terminatedByTpp",
            None => match app.store.consent(key)? {
                Some(c) if !c.is_expired(app.clock.now()) => "valid",
                _ => "expired",
            },
        },
        ("terminatedByTpp", _) => "terminatedByTpp",
        _ => "rejected",
    })
}

fn date_of(secs: i64) -> chrono::NaiveDate {
    chrono::DateTime::<chrono::Utc>::from(crate::cert::from_unix_seconds(secs)).date_naive()
}

/// Berlin Group `consentStatusResponse-200`.
#[derive(Debug, Clone, Serialize)]
pub struct ConsentStatusResponse {
    #[serde(rename = "consentStatus")]
    pub consent_status: String,
}

/// Berlin Group `accountAccess` as granted: the consented accounts (`bban`, `currency`) and
/// card accounts (`maskedPan`, `currency`) under `accounts`, `balances` and `transactions`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AccountAccess {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accounts: Vec<crate::xs2a::model::AccountReference>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub balances: Vec<crate::xs2a::model::AccountReference>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transactions: Vec<crate::xs2a::model::AccountReference>,
}

/// Berlin Group `consentInformationResponse-200_json`: `access`, `recurringIndicator` (true),
/// `validUntil` (180 days after the SCA, or after the request while `received`),
/// `frequencyPerDay` (4, the Limits table's calls without the PSU), `lastActionDate`,
/// `consentStatus`, `_links` (`account`, `card-account`) while valid.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsentInformation {
    pub access: AccountAccess,
    pub recurring_indicator: bool,
    pub valid_until: String,
    pub frequency_per_day: u32,
    pub last_action_date: String,
    pub consent_status: String,
    #[serde(rename = "_links", skip_serializing_if = "Links::is_empty")]
    pub links: Links,
}

/// `GET /v1/consents/{consentId}/status` (also under `/v1/bank-offered-consents`).
///
/// Errors: 401 `ROLE_INVALID` without `PSP_AI`; 404 `RESOURCE_UNKNOWN`; 403
/// `CONSENT_UNKNOWN` for another TPP's consent.
pub async fn consent_status(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    roles: TppRoles,
    ApiPath(id): ApiPath<String>,
) -> Result<axum::Json<ConsentStatusResponse>, ApiError> {
    roles.require_ais()?;
    let r = load_resource(&app, &tpp.id, &id)?;
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
    tpp: Tpp,
    roles: TppRoles,
    ApiPath(id): ApiPath<String>,
) -> Result<axum::Json<ConsentInformation>, ApiError> {
    roles.require_ais()?;
    let r = load_resource(&app, &tpp.id, &id)?;
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
                super::cards::consented(&app, key)?
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
    let lifetime = i64::try_from(super::store::CONSENT_LIFETIME.as_secs()).unwrap_or(0);
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
    tpp: Tpp,
    roles: TppRoles,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    roles.require_ais()?;
    let r = load_resource(&app, &tpp.id, &id)?;
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
    let now = rules::secs(app.clock.now());
    app.db.write(|tx| {
        tx.execute(
            "UPDATE consent_resources SET status = 'terminatedByTpp', last_action = ?2
             WHERE id = ?1",
            params![r.id.to_string(), now],
        )
        .map_err(db_error)?;
        if status == "valid"
            && let Some(key) = &r.key
        {
            super::psu::revoke_key(tx, key, super::psu::Revoked::ByTpp, now)?;
        }
        Ok(())
    })?;
    Ok(StatusCode::NO_CONTENT)
}

/// The consent routes (merged into [`super::router`]). `POST /v1/consents/` (with the
/// trailing slash the bank's own v1 collection sends) is `POST /v1/consents`.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/bank-offered-consents", post(bank_offered_consents))
        .route("/v1/bank-offered-consents/", post(bank_offered_consents))
        .route("/v1/consents", post(consents_deprecated))
        .route("/v1/consents/", post(consents_deprecated))
        .route(
            "/v1/consents/{consent_id}",
            get(consent_information).delete(consent_delete),
        )
        .route("/v1/consents/{consent_id}/status", get(consent_status))
        .route(
            "/v1/bank-offered-consents/{consent_id}",
            get(consent_information).delete(consent_delete),
        )
        .route(
            "/v1/bank-offered-consents/{consent_id}/status",
            get(consent_status),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn remembered_access_holds_only_for_the_same_data_and_within_consent_and_session() {
        let at = |s: u64| UNIX_EPOCH + Duration::from_secs(s);
        let v = Validity {
            version: 7,
            from: at(1_000),
            consent_until: at(5_000),
            session_until: Some(4_000),
        };
        assert!(v.holds(7, at(1_000)));
        assert!(v.holds(7, at(4_000) + Duration::from_millis(999)));
        // Any committed write changes the version.
        assert!(!v.holds(8, at(2_000)));
        // The clock set back before the decision: decided again.
        assert!(!v.holds(7, at(999)));
        // The SCA session's hour is over after its last second.
        assert!(!v.holds(7, at(4_001)));
        let unattended = Validity {
            session_until: None,
            ..v
        };
        assert!(unattended.holds(7, at(5_000)));
        // The consent's 180 days are over.
        assert!(!unattended.holds(7, at(5_000) + Duration::from_nanos(1)));
    }
}
