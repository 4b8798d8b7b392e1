//! The sandbox SCA: pages a browser opens from a `scaRedirect` link (not signed), ending with
//! a redirect to `TPP-Redirect-URI` carrying the parameters of the interface document's
//! "Redirect parameters after SCA" ([`ScaCallback`]).
//!
//! `GET /sca/{id}` shows the current step; `POST /sca/{id}/login` (`customerNumber`),
//! `POST /sca/{id}/context` (`context=PRIVATE` or `context=CORPORATE:{agreementId}`) and
//! `POST /sca/{id}/consent` (`account=<resourceId>` repeated) advance it (each answers the
//! next step's page, 200; the consent answers 302 to the TPP); `POST /sca/{id}/cancel` ends
//! it with a failure redirect. A post that does not fit the current step gets the current
//! step's page. Every page and step is bound to the browser that opened the SCA (cookie,
//! per-step form token, `Origin`: [`sca_guard`]); a step from elsewhere gets a 403 page.
//!
//! The consent page also offers the PSU's card accounts (PRIVATE context) as `cardAccount`
//! checkboxes ([`crate::sandbox::http::cards`]). A registration SCA ([`crate::sandbox::http::psu`], `GET /v1/users`) has
//! no consent step: it ends after the login (or the context choice) with the success
//! redirect. Every completed SCA records its `TPP-Session-ID` session
//! ([`access::record_completed_sca`]).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::html;
use uuid::Uuid;

use crate::sandbox::App;
use crate::sandbox::domain::access;
use crate::sandbox::domain::access::psu_id;
use crate::sandbox::http::pages::{self, Hint, Page};
use crate::sandbox::model::{
    Authorisation, AuthorisationError, CardAccount, Consent, ConsentKey, ScaStep,
};
use crate::sandbox::{domain::rules, http::sca_guard};
use crate::xs2a::model::CustomerType;
use crate::xs2a::redirect::{ScaCallback, ScaFailure, ScaSuccess};

/// `system` of the failure redirect.
pub const SCA_SYSTEM: &str = "sandbox-sca";

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

/// The fields of a form post (`application/x-www-form-urlencoded`), in order.
/// The ids ticked in form field `key` (repeated checkboxes), each once, in the order of
/// `offered` (the page's order); `None` when one of them is not offered (or not a UUID).
fn ticked(f: &[(String, String)], key: &str, offered: &[Uuid]) -> Option<Vec<Uuid>> {
    let mut selected = Vec::new();
    for (_, v) in f.iter().filter(|(k, _)| k == key) {
        let u = Uuid::parse_str(v.trim())
            .ok()
            .filter(|u| offered.contains(u))?;
        if !selected.contains(&u) {
            selected.push(u);
        }
    }
    selected.sort_by_key(|u| offered.iter().position(|o| o == u));
    Some(selected)
}

pub(crate) fn form(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

/// The last non-blank value of field `name` of `f`, trimmed.
pub(crate) fn field<'a>(f: &'a [(String, String)], name: &str) -> Option<&'a str> {
    f.iter()
        .rev()
        .find(|(k, v)| k == name && !v.trim().is_empty())
        .map(|(_, v)| v.trim())
}

/// What a login form's `customerNumber` gives: the private customer who logs in, or the
/// text that the login page shows again (400) asking for another number.
pub(crate) enum Login {
    Customer(crate::sandbox::model::Customer),
    Retry(String),
}

/// The customer a login form's `customerNumber` (as `typed`; spaces and dots ignored) names
/// ([`login_step`] and the payment SCA's login): [`Login::Retry`] when it is blank, nobody's,
/// or a corporate customer's (a company cannot log in itself; `corporate_advice` ends the
/// sentence telling the PSU what to do instead).
///
/// Errors: storage (the caller answers the 503 page).
pub(crate) fn identify(
    app: &App,
    typed: &str,
    corporate_advice: &str,
) -> Result<Login, crate::sandbox::errors::ApiError> {
    let number: String = typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '.')
        .collect();
    if number.is_empty() {
        return Ok(Login::Retry(
            "Enter a customerNumber, or click one of the sandbox customers below.".into(),
        ));
    }
    let Some(customer) = app
        .store
        .customer_by_number(&number)?
        .filter(|c| in_page_world(app, c).unwrap_or(false))
    else {
        return Ok(Login::Retry(format!(
            "No sandbox customer has the number {number:?}. Click one of the customers below."
        )));
    };
    if customer.kind == CustomerType::Corporate {
        return Ok(Login::Retry(format!(
            "{} is a corporate customer; a company cannot log in itself. Log in as a person \
             who holds an agreement for it{corporate_advice}.",
            customer.name
        )));
    }
    Ok(Login::Customer(customer))
}

/// The value of a store result, or (the database failed; logged where it failed) the 503
/// page of [`storage_error`], returned from the enclosing page handler.
macro_rules! or_page {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(_) => return $crate::sandbox::http::sca::storage_error(),
        }
    };
}
pub(crate) use or_page;

/// The authorisation `id` of the SCA page ([`load`]), or an early return of its error page
/// ([`auth_error`]).
macro_rules! loaded_or_answer {
    ($app:expr, $id:expr) => {
        match load($app, $id) {
            Ok(a) => a,
            Err(e) => return auth_error(e),
        }
    };
}

fn auth_error(e: AuthorisationError) -> Response {
    let (status, title, msg) = match e {
        AuthorisationError::Storage => return storage_error(),
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

/// Whether customer `c` is in the world of the TPP whose SCA this page serves
/// ([`crate::sandbox::clock::current_world`], set by the page layer [`crate::sandbox::http::sca_pages`]): a seeded
/// customer or one that TPP created (issue 20: another TPP's created customers are neither
/// listed on its pages nor accepted at their login). Outside a TPP's world (no page layer):
/// every customer.
///
/// Errors: storage.
fn in_page_world(
    app: &App,
    c: &crate::sandbox::model::Customer,
) -> Result<bool, crate::sandbox::errors::ApiError> {
    let Some(tpp) = crate::sandbox::clock::current_world() else {
        return Ok(true);
    };
    let id = c.id.to_string();
    Ok(app
        .db
        .read(|conn| crate::sandbox::store::tenancy::visible_to(conn, &id, &tpp))?)
}

fn hints(app: &App) -> Result<Vec<Hint>, crate::sandbox::errors::ApiError> {
    let mut out = Vec::new();
    for c in app.store.customers()? {
        if c.kind != CustomerType::Private || !in_page_world(app, &c)? {
            continue;
        }
        let mut corporate_names = Vec::new();
        for a in app.store.agreements_held_by(c.id)? {
            if let Some(x) = app.store.customer(a.corporate)? {
                corporate_names.push(x.name);
            }
        }
        out.push(Hint {
            customer: c,
            corporate_names,
        });
    }
    Ok(out)
}

/// The sentence of the TPP box on the shared pages, and its registration variant.
const AIS_PURPOSE: &str = "asks for access to your account information.";
const REGISTRATION_PURPOSE: &str =
    "asks you to confirm who you are, to register you for payments. No account data is shared.";

/// `html` of a login or context page, reworded for a registration SCA.
fn purpose(app: &App, auth: &Authorisation, html: String) -> String {
    if access::is_registration(&app.domain(), auth.id) {
        html.replacen(AIS_PURPOSE, REGISTRATION_PURPOSE, 1)
    } else {
        html
    }
}

/// The card-account checkboxes inserted into the consent form before its buttons.
fn card_rows(cards: &[CardAccount], checked: &[Uuid]) -> String {
    if cards.is_empty() {
        return String::new();
    }
    html! {
        h3 { "Card accounts" }
        @for c in cards {
            (pages::account_checkbox("cardAccount", c.id, checked.contains(&c.id), &c.name,
                &c.masked_pan, &c.product, &c.currency))
        }
    }
    .into_string()
}

/// Renders the page of the authorisation's current step.
fn render(app: &App, auth: &Authorisation, status: StatusCode, error: Option<&str>) -> Response {
    match &auth.step {
        ScaStep::Identify => page(
            status,
            purpose(
                app,
                auth,
                pages::login(auth, &or_page!(hints(app)), "", error),
            ),
        ),
        ScaStep::ChooseContext { customer } => {
            let Some(c) = or_page!(app.store.customer(*customer)) else {
                return auth_error(AuthorisationError::Unknown);
            };
            let mut agreements = Vec::new();
            for a in or_page!(app.store.agreements_held_by(c.id)) {
                let (name, number) = or_page!(app.store.customer(a.corporate))
                    .map(|x| (x.name, x.number))
                    .unwrap_or_default();
                agreements.push((a, name, number));
            }
            page(
                status,
                purpose(app, auth, pages::context(auth, &c, &agreements, error)),
            )
        }
        ScaStep::Consent {
            customer,
            agreement,
        } => {
            let Some(c) = or_page!(app.store.customer(*customer)) else {
                return auth_error(AuthorisationError::Unknown);
            };
            let chosen = match agreement {
                Some(a) => or_page!(app.store.agreement(*a)),
                None => None,
            };
            let (accounts, corporate) = match chosen {
                Some(a) => (
                    or_page!(app.store.accounts_by_ids(&a.accounts)),
                    or_page!(app.store.customer(a.corporate)).map(|x| x.name),
                ),
                None => (or_page!(app.store.accounts_of(c.id)), None),
            };
            let key = ConsentKey {
                tpp: auth.tpp.clone(),
                psu_id: psu_id(&auth.tpp, c.id),
                agreement: *agreement,
            };
            let checked = or_page!(app.store.consent(&key))
                .map(|x| x.accounts)
                .unwrap_or_default();
            let mut html =
                pages::consent(auth, &c, corporate.as_deref(), &accounts, &checked, error);
            if agreement.is_none() {
                let cards = or_page!(app.store.card_accounts_of(c.id));
                let checked_cards = access::consented(&app.domain(), &key).unwrap_or_default();
                let rows = card_rows(&cards, &checked_cards);
                if let Some(at) = html.rfind("<div class=\"buttons\">") {
                    html.insert_str(at, &rows);
                }
            }
            page(status, html)
        }
        ScaStep::Finished => auth_error(AuthorisationError::Finished),
    }
}

/// The steps' names in the per-step form tokens ([`sca_guard`]).
const STEPS: &[&str] = &["identify", "context", "consent"];

fn step_name(step: &ScaStep) -> Option<&'static str> {
    match step {
        ScaStep::Identify => Some("identify"),
        ScaStep::ChooseContext { .. } => Some("context"),
        ScaStep::Consent { .. } => Some("consent"),
        ScaStep::Finished => None,
    }
}

/// `GET /sca/{id}`: the current step's page; the first opening binds the SCA to this
/// browser, later ones must come from it ([`sca_guard::open`]).
pub async fn show(State(app): State<Arc<App>>, ScaId(id): ScaId, headers: HeaderMap) -> Response {
    let auth = match load(&app, id) {
        Ok(a) => a,
        Err(e) => return auth_error(e),
    };
    let key = auth.id.to_string();
    let browser = match sca_guard::open(&app, &key, &format!("/sca/{key}"), &headers) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let page = render(&app, &auth, StatusCode::OK, None);
    browser.finish(&key, step_name(&auth.step), page).await
}

/// Runs `step` for a form post of authorisation `id` that passes [`sca_guard::post`]
/// (the bound browser, its own site, the current step's token); answers the current page
/// for a token of an earlier step, the 403 page otherwise.
async fn guarded(
    app: &App,
    id: Option<Uuid>,
    headers: &HeaderMap,
    body: &[u8],
    step: impl FnOnce(&App, Option<Uuid>, &[u8]) -> Response,
) -> Response {
    let auth = loaded_or_answer!(app, id);
    let key = auth.id.to_string();
    let current = step_name(&auth.step).unwrap_or("finished");
    let response = match sca_guard::post(app, &key, headers, &form(body), current, STEPS) {
        Ok(sca_guard::Post::Current(b)) => (b, step(app, id, body)),
        Ok(sca_guard::Post::Stale(b)) => (b, render(app, &auth, StatusCode::OK, None)),
        Err(r) => return *r,
    };
    let (browser, response) = response;
    let now = load(app, id).ok().and_then(|a| step_name(&a.step));
    browser.finish(&key, now, response).await
}

/// A form-post handler of an SCA page (`POST /sca/{id}/<step>`, `POST
/// /payment-sca/{id}/<step>`) running a step function behind [`sca_guard::post`] through the
/// `guarded` function of the module it is used in; the id comes from the extractor
/// `$extract($ty)` (e.g. `ScaId(ScaId)`, `Path(Path<String>)`). The names it uses (`State`,
/// `Arc`, `App`, `HeaderMap`, `Bytes`, `Response`) must be in scope there.
macro_rules! guarded_step {
    ($(#[$doc:meta])* $vis:vis $name:ident($extract:ident($ty:ty)) => $step:expr) => {
        $(#[$doc])*
        $vis async fn $name(
            State(app): State<Arc<App>>,
            $extract(id): $ty,
            headers: HeaderMap,
            body: Bytes,
        ) -> Response {
            guarded(&app, id, &headers, &body, $step).await
        }
    };
}
pub(crate) use guarded_step;

guarded_step!(
    /// `POST /sca/{id}/login`: see [`login_step`], behind [`sca_guard::post`].
    pub login(ScaId(ScaId)) => login_step
);
guarded_step!(
    /// `POST /sca/{id}/context`: see [`context_step`], behind [`sca_guard::post`].
    pub context(ScaId(ScaId)) => context_step
);
guarded_step!(
    /// `POST /sca/{id}/consent`: see [`consent_step`], behind [`sca_guard::post`].
    pub consent(ScaId(ScaId)) => consent_step
);
guarded_step!(
    /// `POST /sca/{id}/cancel`: see [`cancel_step`], behind [`sca_guard::post`].
    pub cancel(ScaId(ScaId)) => |app, id, _| cancel_step(app, id)
);

/// `POST /sca/{id}/login`: identifies the PSU by `customerNumber` (spaces and dots ignored).
fn login_step(app: &App, id: Option<Uuid>, body: &[u8]) -> Response {
    let auth = loaded_or_answer!(app, id);
    if auth.step != ScaStep::Identify {
        return next_page(app, &auth);
    }
    let f = form(body);
    let typed = field(&f, "customerNumber").unwrap_or("");
    let customer = match or_page!(identify(app, typed, " and choose the corporate context")) {
        Login::Customer(c) => c,
        Login::Retry(msg) => {
            return page(
                StatusCode::BAD_REQUEST,
                match hints(app) {
                    Ok(h) => pages::login(&auth, &h, typed, Some(&msg)),
                    Err(_) => return storage_error(),
                },
            );
        }
    };
    let no_agreements = or_page!(app.store.agreements_held_by(customer.id)).is_empty();
    if no_agreements && access::is_registration(&app.domain(), auth.id) {
        return finish_registration(app, &auth, customer.id, None);
    }
    let step = if no_agreements {
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
        Ok(a) => next_page(app, &a),
        Err(e) => auth_error(e),
    }
}

/// `POST /sca/{id}/context`: `context=PRIVATE` or `context=CORPORATE:{agreementId}`.
fn context_step(app: &App, id: Option<Uuid>, body: &[u8]) -> Response {
    let auth = loaded_or_answer!(app, id);
    let ScaStep::ChooseContext { customer } = auth.step else {
        return next_page(app, &auth);
    };
    let f = form(body);
    let choice = field(&f, "context").unwrap_or("");
    let agreement = if choice.eq_ignore_ascii_case("PRIVATE") {
        None
    } else {
        let held = match choice
            .strip_prefix("CORPORATE:")
            .and_then(|a| Uuid::parse_str(a).ok())
        {
            Some(a) => or_page!(app.store.agreement(a)),
            None => None,
        }
        .filter(|a| a.holder == customer);
        match held {
            Some(a) => Some(a.id),
            None => {
                return render(
                    app,
                    &auth,
                    StatusCode::BAD_REQUEST,
                    Some("Choose your own accounts or one of the listed companies."),
                );
            }
        }
    };
    if access::is_registration(&app.domain(), auth.id) {
        return finish_registration(app, &auth, customer, agreement);
    }
    match app.store.set_step(
        auth.id,
        app.clock.now(),
        ScaStep::Consent {
            customer,
            agreement,
        },
    ) {
        Ok(a) => next_page(app, &a),
        Err(e) => auth_error(e),
    }
}

/// `POST /sca/{id}/consent`: stores the consent for the ticked `account`s and redirects to
/// the TPP with `psu-id`, `psu-corporate-id` (CORPORATE), `tpp-session-id`, `context`.
fn consent_step(app: &App, id: Option<Uuid>, body: &[u8]) -> Response {
    let auth = loaded_or_answer!(app, id);
    let ScaStep::Consent {
        customer,
        agreement,
    } = auth.step
    else {
        return next_page(app, &auth);
    };
    let f = form(body);
    if field(&f, "action").is_some_and(|a| a.eq_ignore_ascii_case("cancel")) {
        return cancel_auth(app, &auth);
    }
    let who = psu_id(&auth.tpp, customer).to_string();
    if let Some(o) =
        crate::sandbox::http::faults::sca_outcome(&app.db, &format!("/sca/{}", auth.id), Some(&who))
    {
        let mut r = match &o {
            crate::sandbox::http::faults::ScaOutcome::Cancel { .. } => cancel_auth(app, &auth),
            crate::sandbox::http::faults::ScaOutcome::Fail {
                status,
                code,
                message,
                ..
            } => fail_auth(app, &auth, *status, code, message),
        };
        crate::sandbox::http::faults::mark(&mut r, o.fault());
        return r;
    }
    let chosen = match agreement {
        Some(a) => or_page!(app.store.agreement(a)),
        None => None,
    };
    let offered: Vec<Uuid> = match chosen {
        Some(a) => a.accounts,
        None => or_page!(app.store.account_ids_of(customer)),
    };
    let refuse = |message| render(app, &auth, StatusCode::BAD_REQUEST, Some(message));
    let Some(selected) = ticked(&f, "account", &offered) else {
        return refuse("One of the selected accounts is not offered here; choose again.");
    };
    let offered_cards: Vec<Uuid> = if agreement.is_none() {
        or_page!(app.store.card_accounts_of(customer))
            .iter()
            .map(|c| c.id)
            .collect()
    } else {
        Vec::new()
    };
    let Some(selected_cards) = ticked(&f, "cardAccount", &offered_cards) else {
        return refuse("One of the selected card accounts is not offered here; choose again.");
    };
    if selected.is_empty() && selected_cards.is_empty() {
        return refuse("Tick at least one account, or Cancel.");
    }
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
        .finish_with_consent(auth.id, app.clock.now(), key.clone(), consent)
    {
        Ok(a) => a,
        Err(e) => return auth_error(e),
    };
    if let Err(e) = access::record_completed_sca(
        &app.domain(),
        &auth.tpp,
        psu,
        &auth.tpp_session_id,
        Some(&key),
        |tx| {
            access::replace_consent(tx, &key, &selected_cards)?;
            access::resource_authorised(tx, auth.id, &key, rules::secs(app.clock.now()))
        },
    ) {
        tracing::error!(error = ?e.body.tpp_messages, "recording the SCA session failed");
        return storage_error();
    }
    success_to_tpp(&auth, psu, agreement)
}

/// 503 page in the bank's style: the state database failed (never an "unknown
/// authorisation" page or a success for it).
pub(crate) fn storage_error() -> Response {
    pages::error(
        StatusCode::SERVICE_UNAVAILABLE,
        "Try again",
        "The bank could not store your answer. Go back to the application and start again.",
    )
    .into_response()
}

/// The browser back to the TPP after a successful SCA of `auth`: `psu-id`, `psu-corporate-id`
/// (the `agreement`, CORPORATE context), `tpp-session-id` and `context`.
fn success_to_tpp(auth: &Authorisation, psu: Uuid, agreement: Option<Uuid>) -> Response {
    let callback = ScaCallback::Success(ScaSuccess::in_context(
        psu.to_string(),
        agreement.map(|a| a.to_string()),
        auth.tpp_session_id.clone(),
    ));
    to_tpp(auth, &callback)
}

/// Ends a registration SCA: the authorisation is finished, the PSU registered with the TPP
/// and its session recorded, and the browser goes back to the TPP with `psu-id` (and
/// `psu-corporate-id` in CORPORATE context).
fn finish_registration(
    app: &App,
    auth: &Authorisation,
    customer: Uuid,
    agreement: Option<Uuid>,
) -> Response {
    let now = app.clock.now();
    let auth = match app.store.set_step(auth.id, now, ScaStep::Finished) {
        Ok(a) => a,
        Err(e) => return auth_error(e),
    };
    let psu = psu_id(&auth.tpp, customer);
    let at = rules::secs(now);
    if let Err(e) = access::record_completed_sca(
        &app.domain(),
        &auth.tpp,
        psu,
        &auth.tpp_session_id,
        None,
        |tx| access::register(tx, &auth.tpp, psu, customer, at),
    ) {
        tracing::error!(error = ?e.body.tpp_messages, "recording a registration failed");
        return storage_error();
    }
    success_to_tpp(&auth, psu, agreement)
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
    fail_auth(app, auth, 401, "CONSENT_INVALID", "PSU cancelled the SCA")
}

/// Ends the SCA with a failure redirect carrying `status`, `code` and `message` (the consent,
/// if any, is rejected).
fn fail_auth(app: &App, auth: &Authorisation, status: u16, code: &str, message: &str) -> Response {
    let auth = match app
        .store
        .set_step(auth.id, app.clock.now(), ScaStep::Finished)
    {
        Ok(a) => a,
        Err(e) => return auth_error(e),
    };
    if let Err(e) = access::resource_rejected(&app.domain(), auth.id) {
        tracing::error!(error = ?e.body.tpp_messages, "marking a consent rejected failed");
    }
    let callback = ScaCallback::Failure(ScaFailure {
        system: SCA_SYSTEM.into(),
        status,
        code: code.into(),
        message: message.into(),
        tpp_session_id: Some(auth.tpp_session_id.clone()),
    });
    to_tpp(&auth, &callback)
}

/// `POST /sca/{id}/cancel`: ends the SCA and redirects to the TPP with `system`, `status`
/// (401), `code` (`CONSENT_INVALID`), `message`, `tpp-session-id`.
fn cancel_step(app: &App, id: Option<Uuid>) -> Response {
    match load(app, id) {
        Ok(auth) => cancel_auth(app, &auth),
        Err(e) => auth_error(e),
    }
}
