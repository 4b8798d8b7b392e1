//! Which accounts a request may read: the consent addressed by (TPP, `PSU-ID`,
//! `PSU-Corporate-ID`), and the 401-with-`scaRedirect` answer that starts an SCA when there
//! is none (interface document, Authentication 11–12; Errors: "No consent or SCA yet on an
//! account request: 401 with a scaRedirect link"; "Corporate user's request lacks
//! PSU-CORPORATE-ID: 400").

use axum::http::HeaderMap;
use uuid::Uuid;

use super::App;
use super::auth::Tpp;
use super::errors::ApiError;
use super::store::{Account, Agreement, Authorisation, Consent, ConsentKey, Customer, ScaStep};
use crate::xs2a::error::MessageCode;
use crate::xs2a::headers;

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
    pub fn may_consent_to(&self, app: &App, account: Uuid) -> bool {
        match &self.agreement {
            Some(a) => a.accounts.contains(&account),
            None => app
                .store
                .accounts_of(self.customer.id)
                .iter()
                .any(|a| a.id == account),
        }
    }
}

/// The value of header `name`, trimmed; `Err` when it is not visible ASCII.
fn header<'a>(h: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, ApiError> {
    match h.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim()).filter(|s| !s.is_empty()))
            .map_err(|_| ApiError::format(format!("the {name} header is not visible ASCII"))),
    }
}

/// `http://{Host}` of the request (the sandbox serves plain HTTP); `http://localhost` when
/// the Host header is missing or not a plain `host[:port]`.
pub fn base_url(h: &HeaderMap) -> String {
    let host = h
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.parse::<axum::http::uri::Authority>().ok())
        .filter(|a| !a.as_str().contains('@'));
    match host {
        Some(a) => format!("http://{}", a.as_str()),
        None => "http://localhost".to_string(),
    }
}

/// Starts an SCA for this request and returns the 401 (`code`, `text`) carrying
/// `_links.scaRedirect` to it. Needs `TPP-Redirect-URI` (400 `FORMAT_ERROR` when missing or
/// not an absolute http(s) URL); records `TPP-Session-ID`, generating one when absent.
pub fn start_sca(
    app: &App,
    tpp: &Tpp,
    h: &HeaderMap,
    code: MessageCode,
    text: &str,
) -> Result<ApiError, ApiError> {
    let Some(redirect) = header(h, headers::TPP_REDIRECT_URI)? else {
        return Err(ApiError::format(format!(
            "the TPP-Redirect-URI header is missing; it is required because this request \
             needs SCA ({text})"
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
    let href = format!("{}/sca/{}", base_url(h), auth.id);
    app.store.insert_authorisation(auth, now);
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
pub fn resolve(app: &App, tpp: &Tpp, h: &HeaderMap) -> Result<Access, ApiError> {
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
    let Some(customer) = app
        .store
        .psu_customer(&tpp.id, psu_id)
        .and_then(|c| app.store.customer(c))
    else {
        return Err(sca(
            MessageCode::ConsentInvalid,
            "this PSU-ID has no consent for this TPP: SCA needed",
        ));
    };
    let agreement = match corporate {
        None => None,
        Some(cid) => match app.store.agreement(cid) {
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
    let Some(consent) = app.store.consent(&key) else {
        if agreement.is_none() && !app.store.corporate_consents(&tpp.id, psu_id).is_empty() {
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
    if consent.is_expired(app.clock.now()) {
        return Err(sca(
            MessageCode::ConsentExpired,
            "the consent is older than 180 days: a new SCA is needed",
        ));
    }
    Ok(Access {
        key,
        customer,
        agreement,
        consent,
    })
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
        return app.store.account(uuid).ok_or_else(unknown);
    }
    if access.may_consent_to(app, uuid) {
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
