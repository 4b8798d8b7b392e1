//! The sandbox SCA: pages a browser opens from a `scaRedirect` link (not signed), ending with
//! a redirect to `TPP-Redirect-URI` carrying the parameters of the interface document's
//! "Redirect parameters after SCA" ([`ScaCallback`]).
//!
//! `GET /sca/{id}` shows the current step; `POST /sca/{id}/login` (`customerNumber`),
//! `POST /sca/{id}/context` (`context=PRIVATE` or `context=CORPORATE:{agreementId}`) and
//! `POST /sca/{id}/consent` (`account=<resourceId>` repeated) advance it (each answers the
//! next step's page, 200; the consent answers 302 to the TPP); `POST /sca/{id}/cancel` ends
//! it with a failure redirect. A post that does not fit the current step gets the current
//! step's page.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use uuid::Uuid;

use super::App;
use super::pages::{self, Hint, Page};
use super::store::{Authorisation, AuthorisationError, Consent, ConsentKey, ScaStep, TppId};
use crate::xs2a::model::CustomerType;
use crate::xs2a::redirect::{PsuContext, ScaCallback, ScaFailure, ScaSuccess};

/// `system` of the failure redirect.
pub const SCA_SYSTEM: &str = "sandbox-sca";

/// The `psu-id` of a customer towards a TPP: UUID v5, stable per (TPP, customer) (interface
/// document: "Unique per TPP and ASPSP combination, stable").
pub fn psu_id(tpp: &TppId, customer: Uuid) -> Uuid {
    Uuid::new_v5(
        &super::seed::namespace(),
        format!("psu:{}:{customer}", tpp.0).as_bytes(),
    )
}

/// The path parameter of the SCA routes, never rejecting (a bad id is an unknown one).
pub struct ScaId(pub Option<Uuid>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for ScaId {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        let id = axum::extract::Path::<String>::from_request_parts(parts, state)
            .await
            .ok()
            .and_then(|p| Uuid::parse_str(&p.0).ok());
        Ok(ScaId(id))
    }
}

fn form(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn field<'a>(f: &'a [(String, String)], name: &str) -> Option<&'a str> {
    f.iter()
        .rev()
        .find(|(k, v)| k == name && !v.trim().is_empty())
        .map(|(_, v)| v.trim())
}

fn auth_error(e: AuthorisationError) -> Response {
    let (status, title, msg) = match e {
        AuthorisationError::Unknown => (
            StatusCode::NOT_FOUND,
            "Unknown authorisation",
            "This SCA link is not known to the bank. Go back to the application and start again.",
        ),
        AuthorisationError::Expired => (
            StatusCode::GONE,
            "Authorisation expired",
            "This SCA link has expired. Go back to the application and start again.",
        ),
        AuthorisationError::Finished => (
            StatusCode::GONE,
            "Authorisation already used",
            "This SCA has already been completed or cancelled. Go back to the application.",
        ),
    };
    pages::error(status, title, msg).into_response()
}

fn load(app: &App, id: Option<Uuid>) -> Result<Authorisation, AuthorisationError> {
    let id = id.ok_or(AuthorisationError::Unknown)?;
    app.store.authorisation(id, app.clock.now())
}

/// The page of the authorisation's (new) step, answered directly to the form post.
fn next_page(app: &App, auth: &Authorisation) -> Response {
    render(app, auth, StatusCode::OK, None)
}

fn redirect(status: StatusCode, location: &str, html: Option<String>) -> Response {
    let Ok(value) = HeaderValue::from_str(location) else {
        return pages::error(
            StatusCode::BAD_REQUEST,
            "Cannot redirect",
            "The TPP-Redirect-URI cannot be used as a redirect location.",
        )
        .into_response();
    };
    let mut r = Page {
        status,
        html: html.unwrap_or_default(),
    }
    .into_response();
    r.headers_mut().insert(header::LOCATION, value);
    r
}

fn page(status: StatusCode, html: String) -> Response {
    Page { status, html }.into_response()
}

fn hints(app: &App) -> Vec<Hint> {
    app.store
        .customers()
        .into_iter()
        .filter(|c| c.kind == CustomerType::Private)
        .map(|c| {
            let corporate_names = app
                .store
                .agreements_held_by(c.id)
                .iter()
                .filter_map(|a| app.store.customer(a.corporate).map(|x| x.name))
                .collect();
            Hint {
                customer: c,
                corporate_names,
            }
        })
        .collect()
}

/// Renders the page of the authorisation's current step.
fn render(app: &App, auth: &Authorisation, status: StatusCode, error: Option<&str>) -> Response {
    match &auth.step {
        ScaStep::Identify => page(status, pages::login(auth, &hints(app), "", error)),
        ScaStep::ChooseContext { customer } => {
            let Some(c) = app.store.customer(*customer) else {
                return auth_error(AuthorisationError::Unknown);
            };
            let agreements: Vec<_> = app
                .store
                .agreements_held_by(c.id)
                .into_iter()
                .map(|a| {
                    let name = app
                        .store
                        .customer(a.corporate)
                        .map(|x| x.name)
                        .unwrap_or_default();
                    (a, name)
                })
                .collect();
            page(status, pages::context(auth, &c, &agreements, error))
        }
        ScaStep::Consent {
            customer,
            agreement,
        } => {
            let Some(c) = app.store.customer(*customer) else {
                return auth_error(AuthorisationError::Unknown);
            };
            let (accounts, corporate) = match agreement.and_then(|a| app.store.agreement(a)) {
                Some(a) => (
                    app.store.accounts_by_ids(&a.accounts),
                    app.store.customer(a.corporate).map(|x| x.name),
                ),
                None => (app.store.accounts_of(c.id), None),
            };
            let key = ConsentKey {
                tpp: auth.tpp.clone(),
                psu_id: psu_id(&auth.tpp, c.id),
                agreement: *agreement,
            };
            let checked = app
                .store
                .consent(&key)
                .map(|x| x.accounts)
                .unwrap_or_default();
            let html = pages::consent(auth, &c, corporate.as_deref(), &accounts, &checked, error);
            page(status, html)
        }
        ScaStep::Finished => auth_error(AuthorisationError::Finished),
    }
}

/// `GET /sca/{id}`: the current step's page.
pub async fn show(State(app): State<Arc<App>>, ScaId(id): ScaId) -> Response {
    match load(&app, id) {
        Ok(auth) => render(&app, &auth, StatusCode::OK, None),
        Err(e) => auth_error(e),
    }
}

/// `POST /sca/{id}/login`: identifies the PSU by `customerNumber` (spaces and dots ignored).
pub async fn login(State(app): State<Arc<App>>, ScaId(id): ScaId, body: Bytes) -> Response {
    let auth = match load(&app, id) {
        Ok(a) => a,
        Err(e) => return auth_error(e),
    };
    if auth.step != ScaStep::Identify {
        return next_page(&app, &auth);
    }
    let f = form(&body);
    let typed = field(&f, "customerNumber").unwrap_or("");
    let number: String = typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '.')
        .collect();
    let retry = |msg: &str| {
        page(
            StatusCode::BAD_REQUEST,
            pages::login(&auth, &hints(&app), typed, Some(msg)),
        )
    };
    if number.is_empty() {
        return retry("Enter a customerNumber, or click one of the sandbox customers below.");
    }
    let Some(customer) = app.store.customer_by_number(&number) else {
        return retry(&format!(
            "No sandbox customer has the number {number:?}. Click one of the customers below."
        ));
    };
    if customer.kind == CustomerType::Corporate {
        return retry(&format!(
            "{} is a corporate customer; a company cannot log in itself. Log in as a person \
             who holds an agreement for it and choose the corporate context.",
            customer.name
        ));
    }
    let step = if app.store.agreements_held_by(customer.id).is_empty() {
        ScaStep::Consent {
            customer: customer.id,
            agreement: None,
        }
    } else {
        ScaStep::ChooseContext {
            customer: customer.id,
        }
    };
    match app.store.set_step(auth.id, app.clock.now(), step) {
        Ok(a) => next_page(&app, &a),
        Err(e) => auth_error(e),
    }
}

/// `POST /sca/{id}/context`: `context=PRIVATE` or `context=CORPORATE:{agreementId}`.
pub async fn context(State(app): State<Arc<App>>, ScaId(id): ScaId, body: Bytes) -> Response {
    let auth = match load(&app, id) {
        Ok(a) => a,
        Err(e) => return auth_error(e),
    };
    let ScaStep::ChooseContext { customer } = auth.step else {
        return next_page(&app, &auth);
    };
    let f = form(&body);
    let choice = field(&f, "context").unwrap_or("");
    let agreement = if choice.eq_ignore_ascii_case("PRIVATE") {
        None
    } else {
        let held = choice
            .strip_prefix("CORPORATE:")
            .and_then(|a| Uuid::parse_str(a).ok())
            .and_then(|a| app.store.agreement(a))
            .filter(|a| a.holder == customer);
        match held {
            Some(a) => Some(a.id),
            None => {
                return render(
                    &app,
                    &auth,
                    StatusCode::BAD_REQUEST,
                    Some("Choose your own accounts or one of the listed companies."),
                );
            }
        }
    };
    match app.store.set_step(
        auth.id,
        app.clock.now(),
        ScaStep::Consent {
            customer,
            agreement,
        },
    ) {
        Ok(a) => next_page(&app, &a),
        Err(e) => auth_error(e),
    }
}

/// `POST /sca/{id}/consent`: stores the consent for the ticked `account`s and redirects to
/// the TPP with `psu-id`, `psu-corporate-id` (CORPORATE), `tpp-session-id`, `context`.
pub async fn consent(State(app): State<Arc<App>>, ScaId(id): ScaId, body: Bytes) -> Response {
    let auth = match load(&app, id) {
        Ok(a) => a,
        Err(e) => return auth_error(e),
    };
    let ScaStep::Consent {
        customer,
        agreement,
    } = auth.step
    else {
        return next_page(&app, &auth);
    };
    let f = form(&body);
    if field(&f, "action").is_some_and(|a| a.eq_ignore_ascii_case("cancel")) {
        return cancel_auth(&app, &auth);
    }
    let offered: Vec<Uuid> = match agreement.and_then(|a| app.store.agreement(a)) {
        Some(a) => a.accounts,
        None => app
            .store
            .accounts_of(customer)
            .iter()
            .map(|a| a.id)
            .collect(),
    };
    let mut selected = Vec::new();
    for (k, v) in &f {
        if k != "account" {
            continue;
        }
        match Uuid::parse_str(v.trim())
            .ok()
            .filter(|u| offered.contains(u))
        {
            Some(u) if !selected.contains(&u) => selected.push(u),
            Some(_) => {}
            None => {
                return render(
                    &app,
                    &auth,
                    StatusCode::BAD_REQUEST,
                    Some("One of the selected accounts is not offered here; choose again."),
                );
            }
        }
    }
    if selected.is_empty() {
        return render(
            &app,
            &auth,
            StatusCode::BAD_REQUEST,
            Some("Tick at least one account, or Cancel."),
        );
    }
    // Keep the page's order.
    selected.sort_by_key(|u| offered.iter().position(|o| o == u));
    let psu = psu_id(&auth.tpp, customer);
    let key = ConsentKey {
        tpp: auth.tpp.clone(),
        psu_id: psu,
        agreement,
    };
    let consent = Consent {
        customer,
        accounts: selected,
        granted_at: app.clock.now(),
        tpp_session_id: auth.tpp_session_id.clone(),
    };
    let auth = match app
        .store
        .finish_with_consent(auth.id, app.clock.now(), key, consent)
    {
        Ok(a) => a,
        Err(e) => return auth_error(e),
    };
    let callback = ScaCallback::Success(ScaSuccess {
        psu_id: psu.to_string(),
        psu_corporate_id: agreement.map(|a| a.to_string()),
        tpp_session_id: auth.tpp_session_id.clone(),
        context: if agreement.is_some() {
            PsuContext::Corporate
        } else {
            PsuContext::Private
        },
    });
    to_tpp(&auth, &callback)
}

fn to_tpp(auth: &Authorisation, callback: &ScaCallback) -> Response {
    match callback.redirect_url(&auth.redirect_uri) {
        Ok(location) => {
            let html = pages::redirecting(&location);
            redirect(StatusCode::FOUND, &location, Some(html))
        }
        Err(_) => pages::error(
            StatusCode::BAD_REQUEST,
            "Cannot redirect",
            "The TPP-Redirect-URI is not a valid URL.",
        )
        .into_response(),
    }
}

fn cancel_auth(app: &App, auth: &Authorisation) -> Response {
    let auth = match app
        .store
        .set_step(auth.id, app.clock.now(), ScaStep::Finished)
    {
        Ok(a) => a,
        Err(e) => return auth_error(e),
    };
    let callback = ScaCallback::Failure(ScaFailure {
        system: SCA_SYSTEM.into(),
        status: 401,
        code: "CONSENT_INVALID".into(),
        message: "PSU cancelled the SCA".into(),
        tpp_session_id: Some(auth.tpp_session_id.clone()),
    });
    to_tpp(&auth, &callback)
}

/// `POST /sca/{id}/cancel`: ends the SCA and redirects to the TPP with `system`, `status`
/// (401), `code` (`CONSENT_INVALID`), `message`, `tpp-session-id`.
pub async fn cancel(State(app): State<Arc<App>>, ScaId(id): ScaId) -> Response {
    match load(&app, id) {
        Ok(auth) => cancel_auth(&app, &auth),
        Err(e) => auth_error(e),
    }
}
