//! The SCA pages of payments and signing baskets (server-rendered HTML, plain forms, no
//! JavaScript, every interpolated value escaped; look and helpers of [`crate::sandbox::http::pages`]).
//!
//! `GET /payment-sca/{authorisationId}` shows the current step:
//!
//! 1. `received`: the payment(s) in short and the login form (`customerNumber`, interface
//!    document, Authentication 14), with the sandbox's private customers as one-click hints.
//!    `POST /payment-sca/{id}/login` identifies the PSU (`psuIdentified`). Unknown numbers
//!    and corporate customers get the form again (400); a PSU other than the one the TPP
//!    named (`PSU-ID` or `X-PSU-IDENTITY` of the initiation) too. A PSU who cannot pay from
//!    the debtor account(s) — neither owns them nor holds a corporate agreement covering
//!    them — gets an error page (403) and may log in again.
//! 2. `psuIdentified`: the payment(s) in full with Approve and Reject,
//!    `POST /payment-sca/{id}/decision` (`action=approve|reject`).
//!
//! Approve: every `RCVD` payment in scope is authorised ([`settlement::authorise`]: `ACTC`,
//! instant payments settle at once), the authorisation is `finalised`, the PSU-ID is
//! registered, and the browser is sent (302) to `TPP-Redirect-URI` with `psu-id`,
//! `psu-corporate-id` (when approved under a corporate agreement), `tpp-session-id` and
//! `context` ([`ScaCallback::Success`]). An instant payment rejected for lack of funds ends
//! with the failure redirect instead (`code=PAYMENT_FAILED`, status 400).
//!
//! Reject (also the Cancel button of step 1): the `RCVD` payments become `RJCT`, the
//! authorisation `failed`, and the failure redirect carries `system`, `status=400`,
//! `code=PAYMENT_FAILED`, `message`, `tpp-session-id` (interface document, Errors: "Failed
//! SCA: Redirect with system, status, code, message; PAYMENT_FAILED is one code").
//!
//! Unknown ids answer 404, used or expired (30 minutes) authorisations 410. Every page and
//! step is bound to the browser that opened the SCA (cookie, per-step form token, `Origin`:
//! [`crate::sandbox::http::sca_guard`]); a step from elsewhere gets a 403 page.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};
use serde_json::Value;
use uuid::Uuid;

use crate::sandbox::App;

use crate::sandbox::domain::access::psu_id;
use crate::sandbox::domain::payment_sca::{self as payment, Decision as Outcome, Scope, scope_of};
use crate::sandbox::domain::settlement::{self, now_secs};
use crate::sandbox::errors::ApiError;
use crate::sandbox::http::pages::{self, Page, format_bban};
use crate::sandbox::http::payments;
use crate::sandbox::http::payments::body::Service;
use crate::sandbox::http::sca::{Login, SCA_SYSTEM, field, form, guarded_step, identify, or_page};
use crate::sandbox::http::sca_guard;
use crate::sandbox::model::{Agreement, Customer, TppId};
use crate::sandbox::store::payments::{
    self as rows, AuthorisationRow, PaymentRow, sca_status, status,
};
use crate::xs2a::model::{CustomerType, format_minor};
use crate::xs2a::redirect::{ScaCallback, ScaFailure, ScaSuccess};

/// The payment SCA page routes (merged into [`crate::sandbox::router`]; not signed).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/payment-sca/{id}", get(show))
        .route("/payment-sca/{id}/login", post(login))
        .route("/payment-sca/{id}/decision", post(decision))
}

fn page(status: StatusCode, html: String) -> Response {
    Page { status, html }.into_response()
}

fn gone(title: &str, message: &str) -> Response {
    pages::error(StatusCode::GONE, title, message).into_response()
}

fn storage_page(e: ApiError) -> Response {
    let text = e
        .body
        .tpp_messages
        .first()
        .and_then(|m| m.text.clone())
        .unwrap_or_default();
    pages::error(StatusCode::SERVICE_UNAVAILABLE, "Please try again", &text).into_response()
}

fn load(app: &App, id: &str) -> Result<Scope, Box<Response>> {
    let found = app
        .db
        .read(|c| match rows::authorisation(c, id)? {
            Some(a) => scope_of(c, a).map(Some),
            None => Ok(None),
        })
        .map_err(|e| Box::new(storage_page(e.into())))?;
    let Some(scope) = found else {
        return Err(Box::new(
            pages::error(
                StatusCode::NOT_FOUND,
                "Unknown authorisation",
                "This payment approval link is not known to the bank. Go back to the application \
             and start again.",
            )
            .into_response(),
        ));
    };
    match payments::effective_sca_status(&scope.auth, now_secs(&app.domain())) {
        sca_status::RECEIVED | sca_status::PSU_IDENTIFIED => Ok(scope),
        sca_status::FAILED if scope.auth.sca_status != sca_status::FAILED => Err(Box::new(gone(
            "Authorisation expired",
            "This payment approval link has expired. Go back to the application and start \
             again.",
        ))),
        _ => Err(Box::new(gone(
            "Authorisation already used",
            "This payment approval has already been completed or cancelled. Go back to the \
             application.",
        ))),
    }
}

fn what(scope: &Scope) -> String {
    match (&scope.auth.basket, scope.payments.len()) {
        (Some(_), n) => format!("{n} payments (signing basket)"),
        (None, _) => "a payment".to_string(),
    }
}

fn tpp_box(scope: &Scope) -> Markup {
    html! {
        p class="tpp" { b { (scope.auth.tpp_name) } " asks you to approve " (what(scope)) "." }
    }
}

fn s<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter().fold(v, |v, k| &v[*k]).as_str().unwrap_or("")
}

fn account_text(v: &Value) -> String {
    if let Some(b) = v["bban"].as_str() {
        format_bban(b)
    } else {
        v["iban"].as_str().unwrap_or("").to_string()
    }
}

/// One payment (or bulk entry) as a block of the page.
fn entry_html(e: &Value, from: &str, when: &str, state: &str) -> Markup {
    let message = s(e, &["remittanceInformationUnstructured"]);
    html! {
        div class="acct" {
            span {
                b {
                    (s(e, &["instructedAmount", "currency"])) " "
                    (s(e, &["instructedAmount", "amount"]))
                }
                " to " b { (s(e, &["creditorName"])) } " "
                span class="bban" { (account_text(&e["creditorAccount"])) }
                @if !state.is_empty() {
                    " " span class="meta" { "(" (state) ")" }
                }
                br;
                span class="meta" {
                    "from " (from) " · " (when)
                    @if !message.is_empty() {
                        " · “" (message) "”"
                    }
                }
            }
        }
    }
}

fn payment_html(app: &App, p: &PaymentRow) -> Result<Markup, ApiError> {
    let body: Value = serde_json::from_str(&p.body).unwrap_or(Value::Null);
    let from = Uuid::parse_str(&p.debtor_account)
        .ok()
        .map_or(Ok(None), |a| app.store.account(a))?
        .map(|a| format!("{} {}", a.name, format_bban(&a.bban)))
        .unwrap_or_default();
    let when = if p.service == Service::PeriodicPayments.segment() {
        let months = body["monthsOfExecution"]
            .as_array()
            .map(|m| {
                let v: Vec<&str> = m.iter().filter_map(Value::as_str).collect();
                format!(" (months {})", v.join(", "))
            })
            .unwrap_or_default();
        format!(
            "standing order {}{months} from {}",
            s(&body, &["frequency"]),
            s(&body, &["startDate"])
        )
    } else if settlement::kind_of(p) == Some(payments::body::PaymentType::Instant) {
        "instant: paid at once".to_string()
    } else {
        match p.execution_date.as_deref() {
            Some(d) => format!("on {d}"),
            None => "at the next batch run".to_string(),
        }
    };
    let state = if p.status == status::RCVD {
        String::new()
    } else {
        format!("status {}: not part of this approval", p.status)
    };
    if p.service == Service::BulkPayments.segment() {
        let entries = body["payments"].as_array().cloned().unwrap_or_default();
        Ok(html! {
            p {
                b { "Bulk payment" } ": " (entries.len()) " payments, total " (p.currency) " "
                (format_minor(p.amount_minor))
                @if !state.is_empty() {
                    " (" (state) ")"
                }
            }
            @for e in &entries {
                (entry_html(e, &from, &when, ""))
            }
        })
    } else {
        Ok(entry_html(&body, &from, &when, &state))
    }
}

fn payments_html(app: &App, scope: &Scope) -> Result<Markup, ApiError> {
    let blocks = scope
        .payments
        .iter()
        .map(|p| payment_html(app, p))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(html! {
        @for b in &blocks {
            (b)
        }
    })
}

fn reject_button(id: &str, label: &str) -> Markup {
    pages::secondary_button(&format!("/payment-sca/{id}/decision"), "reject", label)
}

fn login_page(
    app: &App,
    scope: &Scope,
    typed: &str,
    error: Option<&str>,
) -> Result<String, ApiError> {
    let customers = app.store.customers()?;
    let hints = html! {
        @for c in customers.iter().filter(|c| c.kind == CustomerType::Private) {
            (pages::hint_button(&c.number, &c.name, "private customer"))
        }
    };
    let id = &scope.auth.id;
    let login = pages::login_forms(
        &format!("/payment-sca/{id}/login"),
        typed,
        reject_button(id, "Cancel"),
        hints,
    );
    approval_page(app, scope, pages::error_box(error), login)
}

fn decision_page(
    app: &App,
    scope: &Scope,
    customer: &Customer,
    corporate: Option<&str>,
) -> Result<String, ApiError> {
    let intro = html! {
        p {
            (customer.name)
            @match corporate {
                Some(c) => { ", you approve on behalf of " b { (c) } " (corporate)." },
                None => { ", check the details and approve." },
            }
        }
    };
    let buttons = html! {
        form id="decision" method="post" action={ "/payment-sca/" (scope.auth.id) "/decision" } {
            div class="buttons" {
                button type="submit" name="action" value="approve" { "Approve" }
                button type="submit" class="secondary" name="action" value="reject" { "Reject" }
            }
        }
    };
    approval_page(app, scope, intro, buttons)
}

/// The payment SCA page: the heading, the TPP, `intro`, the payments, then `actions`.
///
/// Errors: the database fails (reading the payments).
fn approval_page(
    app: &App,
    scope: &Scope,
    intro: Markup,
    actions: Markup,
) -> Result<String, ApiError> {
    let payments = payments_html(app, scope)?;
    let body = html! {
        h2 { "Approve " (what(scope)) }
        (tpp_box(scope))
        (intro)
        (payments)
        (actions)
    };
    Ok(pages::layout("Approve payment", None, body))
}

/// Whether `customer` may pay from every debtor account of `payments`: `Some(None)` when it
/// owns them all (PRIVATE context), `Some(Some(agreement))` when one corporate agreement it
/// holds covers them all (CORPORATE context), `None` otherwise.
fn context_for(
    app: &App,
    customer: &Customer,
    payments: &[PaymentRow],
) -> Result<Option<Option<Agreement>>, ApiError> {
    let accounts: Vec<Uuid> = payments
        .iter()
        .filter_map(|p| Uuid::parse_str(&p.debtor_account).ok())
        .collect();
    let own = app.store.account_ids_of(customer.id)?;
    if accounts.iter().all(|a| own.contains(a)) {
        return Ok(Some(None));
    }
    Ok(app
        .store
        .agreements_held_by(customer.id)?
        .into_iter()
        .find(|ag| accounts.iter().all(|a| ag.accounts.contains(a)))
        .map(Some))
}

/// A stored id column (customer, agreement) as a UUID; `None` when unset or not a UUID.
fn stored_id(column: &Option<String>) -> Option<Uuid> {
    column.as_deref().and_then(|c| Uuid::parse_str(c).ok())
}

fn render(app: &App, scope: &Scope) -> Response {
    if scope.auth.sca_status == sca_status::PSU_IDENTIFIED {
        let customer = match stored_id(&scope.auth.customer) {
            Some(c) => or_page!(app.store.customer(c)),
            None => None,
        };
        if let Some(c) = customer {
            let agreement = match stored_id(&scope.auth.agreement) {
                Some(a) => or_page!(app.store.agreement(a)),
                None => None,
            };
            let corporate = match agreement {
                Some(a) => or_page!(app.store.customer(a.corporate)).map(|c| c.name),
                None => None,
            };
            return page(
                StatusCode::OK,
                or_page!(decision_page(app, scope, &c, corporate.as_deref())),
            );
        }
    }
    page(StatusCode::OK, or_page!(login_page(app, scope, "", None)))
}

/// The steps' names in the per-step form tokens ([`sca_guard`]).
const STEPS: &[&str] = &["login", "decision"];

fn step_name(sca_status: &str) -> Option<&'static str> {
    match sca_status {
        sca_status::RECEIVED => Some("login"),
        sca_status::PSU_IDENTIFIED => Some("decision"),
        _ => None,
    }
}

/// The step authorisation `id` is at now (`None`: finished, expired or unknown).
fn current_step(app: &App, id: &str) -> Option<&'static str> {
    let auth = app.db.read(|c| rows::authorisation(c, id)).ok().flatten()?;
    if payments::effective_sca_status(&auth, now_secs(&app.domain())) != auth.sca_status {
        return None;
    }
    step_name(&auth.sca_status)
}

/// `GET /payment-sca/{id}`: the current step's page; the first opening binds the SCA to
/// this browser, later ones must come from it ([`sca_guard::open`]).
async fn show(State(app): State<Arc<App>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let scope = match load(&app, &id) {
        Ok(scope) => scope,
        Err(r) => return *r,
    };
    let browser = match sca_guard::open(&app, &id, &format!("/payment-sca/{id}"), &headers) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let page = render(&app, &scope);
    browser
        .finish(&id, step_name(&scope.auth.sca_status), page)
        .await
}

/// Runs `step` for a form post that passes [`sca_guard::post`] (the bound browser, its
/// own site, the current step's token); answers the current page for a token of an
/// earlier step, the 403 page otherwise.
async fn guarded(
    app: &App,
    id: String,
    headers: &HeaderMap,
    body: &[u8],
    step: impl FnOnce(&App, String, &[u8]) -> Response,
) -> Response {
    let scope = match load(app, &id) {
        Ok(scope) => scope,
        Err(r) => return *r,
    };
    let current = step_name(&scope.auth.sca_status).unwrap_or("finished");
    let (browser, response) = match sca_guard::post(app, &id, headers, &form(body), current, STEPS)
    {
        Ok(sca_guard::Post::Current(b)) => (b, step(app, id.clone(), body)),
        Ok(sca_guard::Post::Stale(b)) => (b, render(app, &scope)),
        Err(r) => return *r,
    };
    let now = current_step(app, &id);
    browser.finish(&id, now, response).await
}

guarded_step!(
    /// `POST /payment-sca/{id}/login`: see [`login_step`].
    login(Path(Path<String>)) => login_step
);
guarded_step!(
    /// `POST /payment-sca/{id}/decision`: see [`decision_step`].
    decision(Path(Path<String>)) => decision_step
);

/// `POST /payment-sca/{id}/login` (`customerNumber`; spaces and dots ignored).
fn login_step(app: &App, id: String, body: &[u8]) -> Response {
    let scope = match load(app, &id) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    if scope.auth.sca_status != sca_status::RECEIVED {
        return render(app, &scope);
    }
    let f = form(body);
    let typed = field(&f, "customerNumber").unwrap_or("");
    let retry = |msg: &str| {
        page(
            StatusCode::BAD_REQUEST,
            match login_page(app, &scope, typed, Some(msg)) {
                Ok(html) => html,
                Err(_) => return crate::sandbox::http::sca::storage_error(),
            },
        )
    };
    let customer = match or_page!(identify(app, typed, "")) {
        Login::Customer(c) => c,
        Login::Retry(msg) => return retry(&msg),
    };
    let expected = scope
        .expected
        .iter()
        .find(|c| **c != customer.id.to_string());
    if expected.is_some() {
        return retry(
            "The application initiated this payment for another customer (its PSU-ID or \
             national identity number). Log in as that customer.",
        );
    }
    let Some(agreement) = or_page!(context_for(app, &customer, &scope.payments)) else {
        let mut accounts: Vec<String> = Vec::new();
        for a in scope
            .payments
            .iter()
            .filter_map(|p| Uuid::parse_str(&p.debtor_account).ok())
        {
            if let Some(a) = or_page!(app.store.account(a)) {
                accounts.push(format_bban(&a.bban));
            }
        }
        let body = html! {
            h2 { "Not your account" }
            div class="error" {
                (customer.name) " cannot approve payments from account " (accounts.join(", "))
                ": it is neither their own account nor covered by a corporate agreement they \
                 hold."
            }
            p { a href={ "/payment-sca/" (id) } { "Log in as someone else" } }
        };
        return page(
            StatusCode::FORBIDDEN,
            pages::layout("Not your account", None, body),
        );
    };
    let customer_id = customer.id.to_string();
    let agreement_id = agreement.as_ref().map(|a| a.id.to_string());
    let moved = payment::identify(&app.domain(), &id, &customer_id, agreement_id.as_deref());
    match moved {
        Ok(_) => match load(app, &id) {
            Ok(s) => render(app, &s),
            Err(r) => *r,
        },
        Err(e) => storage_page(e),
    }
}

fn redirect_to_tpp(auth: &AuthorisationRow, callback: &ScaCallback) -> Response {
    let Ok(location) = callback.redirect_url(&auth.redirect_uri) else {
        return pages::error(
            StatusCode::BAD_REQUEST,
            "Cannot redirect",
            "The TPP-Redirect-URI is not a valid URL.",
        )
        .into_response();
    };
    let Ok(value) = HeaderValue::from_str(&location) else {
        return pages::error(
            StatusCode::BAD_REQUEST,
            "Cannot redirect",
            "The TPP-Redirect-URI cannot be used as a redirect location.",
        )
        .into_response();
    };
    let mut r = page(StatusCode::FOUND, pages::redirecting(&location));
    r.headers_mut().insert(header::LOCATION, value);
    r
}

fn failure(auth: &AuthorisationRow, message: &str) -> ScaCallback {
    ScaCallback::Failure(ScaFailure {
        system: SCA_SYSTEM.into(),
        status: 400,
        code: "PAYMENT_FAILED".into(),
        message: message.into(),
        tpp_session_id: Some(auth.tpp_session_id.clone()),
    })
}

/// `POST /payment-sca/{id}/decision` (`action=approve` or `action=reject`).
fn decision_step(app: &App, id: String, body: &[u8]) -> Response {
    let scope = match load(app, &id) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let f = form(body);
    let action = field(&f, "action").unwrap_or("").to_ascii_lowercase();
    let approve = action == "approve";
    if !approve && action != "reject" {
        return render(app, &scope);
    }
    let identified = scope.auth.sca_status == sca_status::PSU_IDENTIFIED;
    if approve && !identified {
        return render(app, &scope);
    }
    let customer = scope
        .auth
        .customer
        .as_deref()
        .and_then(|c| Uuid::parse_str(c).ok());
    let agreement = scope
        .auth
        .agreement
        .as_deref()
        .and_then(|a| Uuid::parse_str(a).ok());
    let tpp = TppId(scope.auth.tpp.as_str().into());
    // A fault rule may turn the approval into a cancel or a failure (`crate::sandbox::http::faults`).
    let forced = approve
        .then(|| {
            let who = customer.map(|c| psu_id(&tpp, c).to_string());
            crate::sandbox::http::faults::sca_outcome(
                &app.db,
                &format!("/payment-sca/{id}"),
                who.as_deref(),
            )
        })
        .flatten();
    let approve = approve && forced.is_none();
    // Store reads happen before the transaction (the Store shares its connection), under
    // the execution lock (instant payments are executed at approval).
    let _executing = or_page!(settlement::execution_lock(&app.db));
    let prepared = or_page!(settlement::prepare(&app.domain(), &scope.payments));
    let outcome = payment::decide(
        &app.domain(),
        &id,
        &scope,
        approve,
        customer,
        agreement,
        prepared,
    );
    let auth = &scope.auth;
    match outcome {
        Err(e) => storage_page(e),
        Ok(Outcome::Stale) => match load(app, &id) {
            Ok(s) => render(app, &s),
            Err(r) => *r,
        },
        Ok(Outcome::NothingLeft) => pages::error(
            StatusCode::CONFLICT,
            "Nothing to approve",
            "The payment is no longer waiting for approval (it was approved, rejected, \
             cancelled or put on hold meanwhile). Go back to the application.",
        )
        .into_response(),
        Ok(Outcome::Rejected) => match forced {
            None => redirect_to_tpp(auth, &failure(auth, "The PSU rejected the payment")),
            Some(o) => {
                let callback = match &o {
                    crate::sandbox::http::faults::ScaOutcome::Cancel { .. } => {
                        failure(auth, "The PSU cancelled the SCA")
                    }
                    crate::sandbox::http::faults::ScaOutcome::Fail {
                        status,
                        code,
                        message,
                        ..
                    } => ScaCallback::Failure(ScaFailure {
                        system: SCA_SYSTEM.into(),
                        status: *status,
                        code: code.clone(),
                        message: message.clone(),
                        tpp_session_id: Some(auth.tpp_session_id.clone()),
                    }),
                };
                let mut r = redirect_to_tpp(auth, &callback);
                crate::sandbox::http::faults::mark(&mut r, o.fault());
                r
            }
        },
        Ok(Outcome::Approved(done)) => {
            if done.iter().any(|(_, s)| s == status::ACCP) {
                return redirect_to_tpp(
                    auth,
                    &failure(
                        auth,
                        "Insufficient funds: the instant payment was rejected (status ACCP, \
                         fundsAvailable false)",
                    ),
                );
            }
            let Some(customer) = customer else {
                return render(app, &scope);
            };
            let callback = ScaCallback::Success(ScaSuccess::in_context(
                psu_id(&tpp, customer).to_string(),
                agreement.map(|a| a.to_string()),
                auth.tpp_session_id.clone(),
            ));
            redirect_to_tpp(auth, &callback)
        }
    }
}
