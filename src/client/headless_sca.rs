//! Headless SCA (`psd2-console sca complete`, issue 22): walks the SCA pages of a
//! psd2-console sandbox as a browser would — one cookie jar, the hidden per-step `token` of
//! each form, the same form posts — and returns the redirect to the TPP with its callback
//! parameters (interface document, "Redirect parameters after SCA").
//!
//! The pages and their form fields (docs/sandbox.md, "Headless SCA: the pages' forms"):
//!
//! | Page | Form | Fields posted |
//! |---|---|---|
//! | login (`GET /sca/{id}`, `GET /payment-sca/{id}`) | `id="login"`, `POST …/login` | `customerNumber`, `token` |
//! | context (consent SCA, a PSU holding agreements) | `id="context"`, `POST /sca/{id}/context` | `context=PRIVATE` or `context=CORPORATE:{agreementId}` (the radio's `data-company` is the company's customerNumber), `token` |
//! | consent (consent SCA) | `id="consent"`, `POST /sca/{id}/consent` | `account={resourceId}` and `cardAccount={resourceId}` per ticked box, `action=approve`, `token`; Cancel posts `action=cancel` to `/sca/{id}/cancel` |
//! | decision (payment and basket SCA) | `id="decision"`, `POST /payment-sca/{id}/decision` | `action=approve` or `action=reject`, `token` |
//!
//! The last post answers 302 with `Location` = the `TPP-Redirect-URI` and the callback
//! parameters. The cookie `sb_sca` set by the first `GET` must come with every later request.
//!
//! A link is walked only when it is one of a psd2-console sandbox ([`check_sandbox`]): an
//! http(s) URL whose path is `/sca/{uuid}` or `/payment-sca/{uuid}`, on a server whose
//! `GET /.well-known/psd2-console` answers `{"product":"psd2-console",…}`. Nothing else is
//! sent to a server that fails that check.

use std::time::Duration;

use scraper::{ElementRef, Html, Selector};
use url::Url;

use crate::xs2a::redirect::ScaCallback;

/// The unsigned identity route of a psd2-console sandbox (the sandbox's
/// `identity::PATH`; without a challenge it answers `product` and `version` only).
pub(crate) const IDENTITY_PATH: &str = "/.well-known/psd2-console";

/// `product` of the identity answer.
pub(crate) const PRODUCT: &str = "psd2-console";

/// How long one page or form post may take before the walk gives up.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The most pages a walk goes through (login, context, consent, and a page shown again).
const MAX_STEPS: usize = 6;

/// Whose accounts the PSU shares, when the context page asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Context {
    /// `context=PRIVATE`: the PSU's own accounts.
    Private,
    /// `context=CORPORATE:{agreementId}` of the agreement whose company has this
    /// customerNumber (organisation number), or whose agreement id this is.
    Corporate(String),
}

/// Which boxes of the consent page end up ticked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountChoice {
    /// Every account and card account offered.
    All,
    /// Those named: IBAN (`NO` + check digits + BBAN), BBAN (dots and spaces ignored),
    /// masked PAN, or resourceId; every other box unticked. A name matching no box is an
    /// error ([`HeadlessScaError::Walk`]).
    Listed(Vec<String>),
    /// As the page offers them (the boxes of earlier consents ticked).
    AsOffered,
}

/// What the headless PSU does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaPlan {
    /// The customerNumber typed at login.
    pub customer: String,
    /// The context chosen when the context page is shown (a PSU without agreements gets
    /// none: then [`Context::Corporate`] is an error).
    pub context: Context,
    /// The consent page's boxes.
    pub accounts: AccountChoice,
    /// Press Cancel (consent) or Reject (payment decision) instead of Approve.
    pub reject: bool,
}

/// A submit button of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    /// Its `name` attribute.
    pub name: String,
    /// Its `value` attribute.
    pub value: String,
    /// Its text.
    pub label: String,
    /// Its `formaction`, absolute; `None`: the form's action.
    pub formaction: Option<String>,
}

/// A checkbox or radio with the text of its label (for choosing by account number or
/// company).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// Its `name` attribute.
    pub name: String,
    /// Its `value` attribute.
    pub value: String,
    /// The text of the enclosing `<label>`, white space collapsed.
    pub text: String,
    /// Its `data-company` attribute (the context page's corporate choices).
    pub company: Option<String>,
}

/// One HTML form as a browser would post it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Form {
    /// Its `id` attribute (empty when none).
    pub id: String,
    /// `GET` or `POST`.
    pub method: String,
    /// Absolute action URL.
    pub action: String,
    /// (name, value) of text and hidden inputs, checked boxes and radios, selects.
    pub fields: Vec<(String, String)>,
    /// Unchecked boxes and radios: (name, value).
    pub unchecked: Vec<(String, String)>,
    /// The submit buttons, in page order.
    pub buttons: Vec<Button>,
    /// Every checkbox and radio, checked or not.
    pub choices: Vec<Choice>,
}

/// Moves the first `name`=`value` pair from `from` to the end of `to`.
fn move_field(
    from: &mut Vec<(String, String)>,
    to: &mut Vec<(String, String)>,
    name: &str,
    value: &str,
) {
    if let Some(i) = from.iter().position(|(n, v)| n == name && v == value) {
        to.push(from.remove(i));
    }
}

impl Form {
    /// Sets a text field (replacing its value, or adding it).
    pub fn set(&mut self, name: &str, value: &str) {
        match self.fields.iter_mut().find(|(n, _)| n == name) {
            Some(f) => f.1 = value.to_string(),
            None => self.fields.push((name.to_string(), value.to_string())),
        }
    }

    /// Ticks the box `name`=`value`.
    pub fn check(&mut self, name: &str, value: &str) {
        move_field(&mut self.unchecked, &mut self.fields, name, value);
    }

    /// Unticks the box `name`=`value`.
    pub fn uncheck(&mut self, name: &str, value: &str) {
        move_field(&mut self.fields, &mut self.unchecked, name, value);
    }

    /// Chooses the radio `name`=`value`, the group's others unchosen.
    pub fn choose(&mut self, name: &str, value: &str) {
        let (group, rest): (Vec<_>, Vec<_>) = self.fields.drain(..).partition(|(n, _)| n == name);
        self.fields = rest;
        self.unchecked.extend(group);
        self.check(name, value);
    }

    /// Values of the ticked boxes named `name`.
    pub fn checked(&self, name: &str) -> Vec<String> {
        self.fields
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Whether the form has an input `name` (any kind, checked or not).
    pub fn has(&self, name: &str) -> bool {
        self.fields
            .iter()
            .chain(&self.unchecked)
            .any(|(n, _)| n == name)
    }

    /// The button whose `value` is one of `values` (case-insensitive).
    fn button_valued(&self, values: &[&str]) -> Option<&Button> {
        self.buttons
            .iter()
            .find(|b| values.iter().any(|v| b.value.eq_ignore_ascii_case(v)))
    }

    /// The form's plain submit button: the first without a `formaction` and not a cancel.
    fn primary(&self) -> Option<&Button> {
        self.buttons.iter().find(|b| {
            b.formaction.is_none()
                && !["cancel", "reject"]
                    .iter()
                    .any(|v| b.value.eq_ignore_ascii_case(v))
        })
    }
}

fn selector(css: &str) -> Option<Selector> {
    Selector::parse(css).ok()
}

/// Text of `el` with white space collapsed.
fn text_of(el: ElementRef<'_>) -> String {
    el.text()
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every form of `html`, actions resolved against `page` (a form whose action does not
/// resolve is left out).
pub fn forms(html: &str, page: &Url) -> Vec<Form> {
    let doc = Html::parse_document(html);
    let (Some(form_sel), Some(input_sel), Some(option_sel)) = (
        selector("form"),
        selector("input, select, button, textarea"),
        selector("option"),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for f in doc.select(&form_sel) {
        let Ok(action) = page.join(f.value().attr("action").unwrap_or("")) else {
            continue;
        };
        let mut form = Form {
            id: f.value().attr("id").unwrap_or("").to_string(),
            method: f
                .value()
                .attr("method")
                .unwrap_or("get")
                .to_ascii_uppercase(),
            action: action.to_string(),
            ..Form::default()
        };
        for i in f.select(&input_sel) {
            let el = i.value();
            let name = el.attr("name").unwrap_or("").to_string();
            let value = el.attr("value").unwrap_or("").to_string();
            match el.name() {
                "button" => {
                    if el.attr("type").unwrap_or("submit") == "submit" {
                        form.buttons.push(Button {
                            name,
                            value,
                            label: text_of(i),
                            formaction: el
                                .attr("formaction")
                                .and_then(|a| page.join(a).ok())
                                .map(|u| u.to_string()),
                        });
                    }
                }
                "select" => {
                    let chosen = i
                        .select(&option_sel)
                        .find(|o| o.value().attr("selected").is_some())
                        .or_else(|| i.select(&option_sel).next());
                    if let Some(o) = chosen {
                        let v = o
                            .value()
                            .attr("value")
                            .map(str::to_string)
                            .unwrap_or_else(|| text_of(o));
                        form.fields.push((name, v));
                    }
                }
                "textarea" => form.fields.push((name, i.text().collect())),
                _ => match el.attr("type").unwrap_or("text") {
                    "submit" => form.buttons.push(Button {
                        name,
                        value: value.clone(),
                        label: value,
                        formaction: None,
                    }),
                    "checkbox" | "radio" => {
                        let v = if el.attr("value").is_some() {
                            value
                        } else {
                            "on".into()
                        };
                        let label = i
                            .ancestors()
                            .filter_map(ElementRef::wrap)
                            .find(|a| a.value().name() == "label");
                        form.choices.push(Choice {
                            name: name.clone(),
                            value: v.clone(),
                            text: label.map(text_of).unwrap_or_default(),
                            company: el.attr("data-company").map(str::to_string),
                        });
                        if el.attr("checked").is_some() {
                            form.fields.push((name, v));
                        } else {
                            form.unchecked.push((name, v));
                        }
                    }
                    _ => {
                        if !name.is_empty() {
                            form.fields.push((name, value));
                        }
                    }
                },
            }
        }
        out.push(form);
    }
    out
}

/// Why a headless SCA did not reach the TPP.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessScaError {
    /// The link is not a psd2-console sandbox's SCA link; nothing was posted.
    #[error("refused: {0}")]
    NotSandbox(String),
    /// A page or post could not be fetched.
    #[error("cannot reach {url}: {reason}")]
    Http {
        /// The page's URL.
        url: String,
        /// Why, in plain words.
        reason: String,
    },
    /// The sandbox answered an error page (unknown, expired or used link, an unknown
    /// customerNumber, a PSU who may not pay): its status and message.
    #[error("the SCA page {url} answered {status}: {message}")]
    Page {
        /// The page's URL.
        url: String,
        /// Its HTTP status.
        status: u16,
        /// The page's message.
        message: String,
    },
    /// The plan does not fit the pages (no such company or account, no context page).
    #[error("{0}")]
    Walk(String),
}

/// `e` with its chain of causes.
fn reason(e: &reqwest::Error) -> String {
    let mut reason = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        reason = format!("{reason}: {s}");
        source = s.source();
    }
    reason
}

fn http_error(url: &str, e: &reqwest::Error) -> HeadlessScaError {
    HeadlessScaError::Http {
        url: url.to_string(),
        reason: reason(e),
    }
}

/// A client like one browser: keeps cookies, follows no redirect (the walk reads each
/// `Location`), [`REQUEST_TIMEOUT`] per request.
///
/// Errors: the HTTP client cannot be built ([`HeadlessScaError::Http`]).
pub fn browser() -> Result<reqwest::Client, HeadlessScaError> {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .user_agent(concat!("psd2-console/", env!("CARGO_PKG_VERSION"), " sca"))
        .build()
        .map_err(|e| http_error("(client)", &e))
}

/// Whether `url` is an SCA link of a psd2-console sandbox: an absolute http(s) URL whose
/// path is `/sca/{uuid}` or `/payment-sca/{uuid}`, on a server whose
/// `GET {origin}/.well-known/psd2-console` answers 200 JSON with `"product":"psd2-console"`.
/// Only that `GET` is sent before the answer is known. Returns the parsed link.
///
/// Errors: [`HeadlessScaError::NotSandbox`] saying why (the server cannot be reached, or
/// answers something else).
pub(crate) async fn check_sandbox(
    client: &reqwest::Client,
    url: &str,
) -> Result<Url, HeadlessScaError> {
    let link = Url::parse(url.trim())
        .map_err(|e| HeadlessScaError::NotSandbox(format!("{url:?} is not a URL ({e})")))?;
    if !matches!(link.scheme(), "http" | "https") || !link.has_host() {
        return Err(HeadlessScaError::NotSandbox(format!(
            "{url:?} is not an http(s) link"
        )));
    }
    let segments: Vec<&str> = link
        .path_segments()
        .map(Iterator::collect)
        .unwrap_or_default();
    let sca_path = matches!(
        segments.as_slice(),
        ["sca" | "payment-sca", id] if is_page_token(id)
    );
    if !sca_path {
        return Err(HeadlessScaError::NotSandbox(format!(
            "{url} is not a psd2-console sandbox SCA link (its path is not /sca/{{token}} or \
             /payment-sca/{{token}})"
        )));
    }
    let mut probe = link.clone();
    probe.set_path(IDENTITY_PATH);
    probe.set_query(None);
    probe.set_fragment(None);
    let not_sandbox = |why: String| {
        HeadlessScaError::NotSandbox(format!(
            "{} is not a psd2-console sandbox: {why}",
            link.origin().ascii_serialization()
        ))
    };
    let answer = client
        .get(probe.as_str())
        .send()
        .await
        .map_err(|e| not_sandbox(format!("GET {probe} failed: {}", reason(&e))))?;
    let status = answer.status();
    let body: serde_json::Value = answer
        .json()
        .await
        .map_err(|_| not_sandbox(format!("GET {probe} answered {status} without JSON")))?;
    // JSON of another shape (an array, a number as `product`) is an answer without the
    // product, not an answer without JSON.
    let body: crate::xs2a::wire::SandboxIdentity = serde_json::from_value(body).unwrap_or_default();
    if !status.is_success() || body.product != PRODUCT {
        return Err(not_sandbox(format!(
            "GET {probe} answered {status} without \"product\":\"{PRODUCT}\""
        )));
    }
    Ok(link)
}

/// The message of an error page: its red box, else its heading.
fn page_message(html: &str) -> String {
    let doc = Html::parse_document(html);
    for css in [".error", "h2", "title"] {
        if let Some(sel) = selector(css)
            && let Some(el) = doc.select(&sel).next()
        {
            let t = text_of(el);
            if !t.is_empty() {
                return t;
            }
        }
    }
    "(no message)".into()
}

/// The digits and letters of an account name the user gave, upper-cased.
fn compact(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Whether box `c` is the one `wanted` names (IBAN, BBAN, masked PAN or resourceId).
fn names_box(c: &Choice, wanted: &str) -> bool {
    if c.value.eq_ignore_ascii_case(wanted.trim()) {
        return true;
    }
    let w = compact(wanted);
    if w.is_empty() {
        return false;
    }
    // An IBAN: two letters and two check digits before the BBAN.
    let bban = match w.get(..2) {
        Some(cc) if cc.chars().all(|c| c.is_ascii_alphabetic()) && w.len() > 4 => &w[4..],
        _ => w.as_str(),
    };
    let text = compact(&c.text.replace('*', "X"));
    let masked = compact(&wanted.replace('*', "X"));
    text.contains(bban) || (masked.contains('X') && text.contains(&masked))
}

/// Ticks the consent form's boxes as `choice` says.
fn apply_accounts(form: &mut Form, choice: &AccountChoice) -> Result<(), HeadlessScaError> {
    let boxes: Vec<Choice> = form
        .choices
        .iter()
        .filter(|c| c.name == "account" || c.name == "cardAccount")
        .cloned()
        .collect();
    match choice {
        AccountChoice::AsOffered => {}
        AccountChoice::All => {
            for c in &boxes {
                form.check(&c.name, &c.value);
            }
        }
        AccountChoice::Listed(names) => {
            for c in &boxes {
                form.uncheck(&c.name, &c.value);
            }
            for n in names {
                let hits: Vec<&Choice> = boxes.iter().filter(|c| names_box(c, n)).collect();
                if hits.is_empty() {
                    let offered: Vec<&str> = boxes.iter().map(|c| c.text.as_str()).collect();
                    return Err(HeadlessScaError::Walk(format!(
                        "no offered account is {n:?}; the consent page offers: {}",
                        offered.join("; ")
                    )));
                }
                for c in hits {
                    form.check(&c.name, &c.value);
                }
            }
        }
    }
    Ok(())
}

/// The context radio value `context` picks on `form`.
fn context_value(form: &Form, context: &Context) -> Result<String, HeadlessScaError> {
    match context {
        Context::Private => Ok("PRIVATE".into()),
        Context::Corporate(company) => {
            let wanted = company.trim();
            let corporate: Vec<&Choice> = form
                .choices
                .iter()
                .filter(|c| c.name == "context" && c.value.starts_with("CORPORATE:"))
                .collect();
            corporate
                .iter()
                .find(|c| {
                    c.value.strip_prefix("CORPORATE:") == Some(wanted)
                        || c.company
                            .as_deref()
                            .is_some_and(|n| compact(n) == compact(wanted))
                })
                .map(|c| c.value.clone())
                .ok_or_else(|| {
                    let offered: Vec<String> = corporate
                        .iter()
                        .map(|c| match &c.company {
                            Some(n) => format!("{n} ({})", c.text),
                            None => c.text.clone(),
                        })
                        .collect();
                    HeadlessScaError::Walk(format!(
                        "the PSU holds no agreement for company {wanted}; the context page \
                         offers: {}",
                        if offered.is_empty() {
                            "own accounts only".to_string()
                        } else {
                            offered.join("; ")
                        }
                    ))
                })
        }
    }
}

/// Posts `form` with `button` (its name=value added; its `formaction` when it has one).
async fn submit(
    client: &reqwest::Client,
    form: &Form,
    button: &Button,
) -> Result<reqwest::Response, HeadlessScaError> {
    let mut fields = form.fields.clone();
    if !button.name.is_empty() {
        fields.push((button.name.clone(), button.value.clone()));
    }
    let target = button.formaction.as_deref().unwrap_or(&form.action);
    let request = if form.method == "POST" {
        client.post(target).form(&fields)
    } else {
        client.get(target).query(&fields)
    };
    request.send().await.map_err(|e| http_error(target, &e))
}

/// Submits `form` of the page at `url` with its primary button, named `what` in the error.
///
/// Errors: the form has no button ([`missing`]); those of [`submit`].
async fn submit_primary(
    client: &reqwest::Client,
    form: &Form,
    what: &str,
    url: &str,
) -> Result<reqwest::Response, HeadlessScaError> {
    let button = form.primary().ok_or_else(|| missing(what, url))?;
    submit(client, form, button).await
}

fn missing(what: &str, url: &str) -> HeadlessScaError {
    HeadlessScaError::Walk(format!("{url} has no {what}: is it a sandbox SCA page?"))
}

/// Walks the SCA pages at `url` with `client` (one browser: its cookie jar binds the SCA)
/// as `plan` says; `adjust` may change the consent form after `plan.accounts` was applied
/// (tests tick boxes themselves). Returns the absolute `Location` of the redirect to the
/// TPP. Does not check that `url` is a sandbox's ([`check_sandbox`]) nor follow the
/// redirect.
///
/// Errors: a page cannot be fetched, the sandbox answers an error page, the plan does not
/// fit the pages, or no redirect comes within a few steps.
pub async fn walk(
    client: &reqwest::Client,
    url: &str,
    plan: &ScaPlan,
    adjust: impl Fn(&mut Form),
) -> Result<String, HeadlessScaError> {
    let mut resp = client
        .get(url)
        .send()
        .await
        .map_err(|e| http_error(url, &e))?;
    let mut logged_in = false;
    let mut context_chosen = false;
    for _ in 0..MAX_STEPS {
        let page = resp.url().clone();
        let status = resp.status();
        if status.is_redirection() {
            let location = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| HeadlessScaError::Page {
                    url: page.to_string(),
                    status: status.as_u16(),
                    message: "a redirect without a Location".into(),
                })?;
            return page.join(location).map(|u| u.to_string()).map_err(|e| {
                HeadlessScaError::Page {
                    url: page.to_string(),
                    status: status.as_u16(),
                    message: format!("a redirect to {location:?}, not a URL ({e})"),
                }
            });
        }
        let html = resp
            .text()
            .await
            .map_err(|e| http_error(page.as_str(), &e))?;
        if status != reqwest::StatusCode::OK {
            return Err(HeadlessScaError::Page {
                url: page.to_string(),
                status: status.as_u16(),
                message: page_message(&html),
            });
        }
        let all = forms(&html, &page);
        let login = all
            .iter()
            .find(|f| f.fields.iter().any(|(n, _)| n == "customerNumber"));
        let context = all.iter().find(|f| f.has("context"));
        let approval = all.iter().find(|f| f.button_valued(&["approve"]).is_some());
        resp = if let Some(login) = login {
            if logged_in {
                return Err(HeadlessScaError::Page {
                    url: page.to_string(),
                    status: status.as_u16(),
                    message: page_message(&html),
                });
            }
            logged_in = true;
            let mut f = login.clone();
            f.set("customerNumber", &plan.customer);
            submit_primary(client, &f, "Log in button", page.as_str()).await?
        } else if let Some(context) = context {
            let mut f = context.clone();
            context_chosen = true;
            f.choose("context", &context_value(&f, &plan.context)?);
            submit_primary(client, &f, "Continue button", page.as_str()).await?
        } else if let Some(approval) = approval {
            let mut f = approval.clone();
            if f.has("account") || f.has("cardAccount") {
                if let Context::Corporate(c) = &plan.context
                    && !context_chosen
                {
                    return Err(HeadlessScaError::Walk(format!(
                        "customer {} holds no agreement for company {c}: the bank showed no \
                         context page",
                        plan.customer
                    )));
                }
                apply_accounts(&mut f, &plan.accounts)?;
            }
            adjust(&mut f);
            let values: &[&str] = if plan.reject {
                &["cancel", "reject"]
            } else {
                &["approve"]
            };
            let button = f
                .button_valued(values)
                .cloned()
                .ok_or_else(|| missing("Approve or Cancel button", page.as_str()))?;
            submit(client, &f, &button).await?
        } else {
            return Err(missing("SCA form", page.as_str()));
        };
    }
    Err(HeadlessScaError::Walk(format!(
        "no redirect to the TPP after {MAX_STEPS} pages at {url}"
    )))
}

/// What became of the redirect to the TPP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Not followed (asked so).
    NotFollowed,
    /// Followed: the `TPP-Redirect-URI` answered with this status.
    Reached(u16),
    /// Followed, but nothing answered there (or it is not an http(s) URL): why.
    Failed(String),
}

/// The end of a headless SCA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaOutcome {
    /// The redirect's `Location`: the `TPP-Redirect-URI` with the callback parameters.
    pub location: String,
    /// Its parameters, when they form a success or a failure callback.
    pub callback: Option<ScaCallback>,
    /// Whether the redirect reached the `TPP-Redirect-URI`.
    pub delivery: Delivery,
}

impl ScaOutcome {
    /// Whether the SCA ended as asked: a success callback (a failure one with
    /// `plan.reject`), and the redirect reached the `TPP-Redirect-URI` (or was not
    /// followed).
    pub(crate) fn as_asked(&self, reject: bool) -> bool {
        let callback_fits = match &self.callback {
            Some(ScaCallback::Success(_)) => !reject,
            Some(ScaCallback::Failure(_)) => reject,
            None => false,
        };
        callback_fits && !matches!(self.delivery, Delivery::Failed(_))
    }
}

/// The callback parameters of a redirect `location`, if it carries a success or failure.
pub fn callback_of(location: &str) -> Option<ScaCallback> {
    let url = Url::parse(location).ok()?;
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    ScaCallback::from_query_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).ok()
}

/// `sca complete`: checks that `url` is a psd2-console sandbox's SCA link
/// ([`check_sandbox`]), walks its pages in a fresh browser ([`walk`]), and, with `follow`,
/// opens the redirect's `Location` as a browser would (a TPP's callback listener gets it).
///
/// Errors: those of [`check_sandbox`] and [`walk`].
pub async fn complete(
    url: &str,
    plan: &ScaPlan,
    follow: bool,
) -> Result<ScaOutcome, HeadlessScaError> {
    let client = browser()?;
    let link = check_sandbox(&client, url).await?;
    let location = walk(&client, link.as_str(), plan, |_| {}).await?;
    let callback = callback_of(&location);
    let delivery = if !follow {
        Delivery::NotFollowed
    } else if !(location.starts_with("http://") || location.starts_with("https://")) {
        Delivery::Failed(format!("{location} is not an http(s) URL to open"))
    } else {
        match client.get(&location).send().await {
            Ok(r) => Delivery::Reached(r.status().as_u16()),
            Err(e) => Delivery::Failed(http_error(&location, &e).to_string()),
        }
    };
    Ok(ScaOutcome {
        location,
        callback,
        delivery,
    })
}

// ---------------------------------------------------------------------------------------
// The command: `psd2-console sca complete`

/// `psd2-console sca complete URL …`: completes the SCA at a psd2-console sandbox's
/// `scaRedirect` link without a browser. Prints the callback parameters (`name=value` lines,
/// or JSON with `--json`); exit 0 when the SCA ended as asked (a success, a failure with
/// `--reject`) and the redirect reached the `TPP-Redirect-URI`, 1 otherwise, 2 when the link
/// is refused (not a psd2-console sandbox's).
#[derive(Debug, Clone, clap::Args)]
pub struct CompleteArgs {
    /// The scaRedirect link (`…/sca/{id}` or `…/payment-sca/{id}`).
    pub url: String,
    /// The customerNumber to log in with (a private customer's).
    #[arg(long, value_name = "NUMBER")]
    pub customer: String,
    /// The context to choose when the bank asks: private (default) or corporate (with
    /// --company).
    #[arg(long, value_parser = ["private", "corporate"], default_value = "private")]
    pub context: String,
    /// With --context corporate: the company's customerNumber (organisation number), or the
    /// agreement id.
    #[arg(long, value_name = "NUMBER")]
    pub company: Option<String>,
    /// The accounts to consent to: `all` (default: every account and card account offered),
    /// or a comma-separated list of IBANs, BBANs, masked PANs or resourceIds.
    #[arg(long, value_name = "all|IBAN,...", default_value = "all")]
    pub accounts: String,
    /// Press Cancel (consent) or Reject (payment) instead of Approve: the TPP gets the
    /// failure redirect.
    #[arg(long)]
    pub reject: bool,
    /// Print one JSON object instead of `name=value` lines.
    #[arg(long)]
    pub json: bool,
    /// Do not open the redirect to the TPP-Redirect-URI (a browser would): exit 0 when the
    /// bank redirected there.
    #[arg(long)]
    pub no_follow: bool,
}

impl CompleteArgs {
    /// The plan these arguments give.
    ///
    /// Errors: `--context corporate` without `--company`, or `--company` without it.
    pub fn plan(&self) -> Result<ScaPlan, String> {
        let context = match (self.context.as_str(), &self.company) {
            ("corporate", Some(c)) => Context::Corporate(c.clone()),
            ("corporate", None) => {
                return Err("--context corporate needs --company NUMBER".into());
            }
            (_, Some(_)) => return Err("--company goes with --context corporate".into()),
            _ => Context::Private,
        };
        let accounts = if self.accounts.trim().eq_ignore_ascii_case("all") {
            AccountChoice::All
        } else {
            let list: Vec<String> = self
                .accounts
                .split(',')
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
                .collect();
            if list.is_empty() {
                return Err("--accounts needs `all` or at least one IBAN".into());
            }
            AccountChoice::Listed(list)
        };
        Ok(ScaPlan {
            customer: self.customer.trim().to_string(),
            context,
            accounts,
            reject: self.reject,
        })
    }
}

/// What `sca complete` prints on stdout and stderr, and its exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// What goes to stdout: the callback parameters.
    pub stdout: String,
    /// What goes to stderr: the steps walked, or why it stopped.
    pub stderr: String,
    /// 0 as asked, 1 not, 2 refused.
    pub code: u8,
}

/// The output of `sca complete` for `outcome` (`reject`: whether --reject was given).
pub fn render(outcome: &ScaOutcome, reject: bool, json: bool) -> CommandOutput {
    let pairs = outcome
        .callback
        .as_ref()
        .map(ScaCallback::to_query_pairs)
        .unwrap_or_default();
    let kind = match &outcome.callback {
        Some(ScaCallback::Success(_)) => "success",
        Some(ScaCallback::Failure(_)) => "failure",
        None => "unknown",
    };
    let ok = outcome.as_asked(reject);
    let (reached, tpp_status, reason) = match &outcome.delivery {
        Delivery::NotFollowed => (None, None, None),
        Delivery::Reached(s) => (Some(true), Some(*s), None),
        Delivery::Failed(r) => (Some(false), None, Some(r.clone())),
    };
    let stdout = if json {
        let params: serde_json::Map<String, serde_json::Value> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), serde_json::Value::from(v.clone())))
            .collect();
        let mut v = serde_json::json!({
            "outcome": kind,
            "parameters": params,
            "location": outcome.location,
            "reachedTpp": reached,
        });
        if let Some(s) = tpp_status {
            v["tppStatus"] = s.into();
        }
        v.to_string()
    } else {
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut stderr = match (&outcome.delivery, kind) {
        (Delivery::Failed(_), _) => format!(
            "SCA {kind}: the bank redirected to {}, but the TPP-Redirect-URI did not answer: {}",
            outcome.location,
            reason.unwrap_or_default()
        ),
        (Delivery::Reached(s), _) => {
            format!("SCA {kind}: redirected to the TPP-Redirect-URI (it answered {s})")
        }
        (Delivery::NotFollowed, _) => {
            format!("SCA {kind}: the bank redirects to {}", outcome.location)
        }
    };
    if !ok
        && matches!(
            outcome.delivery,
            Delivery::Reached(_) | Delivery::NotFollowed
        )
    {
        stderr.push_str(if reject {
            "\nerror: --reject was given, but the SCA did not end with a failure redirect"
        } else {
            "\nerror: the SCA did not end with a success redirect"
        });
    }
    CommandOutput {
        stdout,
        stderr,
        code: u8::from(!ok),
    }
}

/// Runs `sca complete` with `args`.
pub async fn run(args: &CompleteArgs) -> CommandOutput {
    let fail = |e: String, code: u8| CommandOutput {
        stdout: String::new(),
        stderr: format!("error: {e}"),
        code,
    };
    let plan = match args.plan() {
        Ok(p) => p,
        Err(e) => return fail(e, 1),
    };
    match complete(&args.url, &plan, !args.no_follow).await {
        Ok(outcome) => render(&outcome, plan.reject, args.json),
        Err(e @ HeadlessScaError::NotSandbox(_)) => fail(e.to_string(), 2),
        Err(e) => fail(e.to_string(), 1),
    }
}

/// Whether `id` has the shape of an SCA page address of the sandbox: its token (22
/// characters of base64url, `crate::sandbox::http::sca_pages`) or, from an older sandbox, a UUID.
fn is_page_token(id: &str) -> bool {
    (id.len() == 22
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
        || uuid::Uuid::parse_str(id).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(name: &str, value: &str, text: &str) -> Choice {
        Choice {
            name: name.into(),
            value: value.into(),
            text: text.into(),
            company: None,
        }
    }

    #[test]
    fn boxes_are_named_by_iban_bban_pan_or_id() {
        let c = choice(
            "account",
            "5c2d",
            "Brukskonto Kari 1503.12.34562 · Brukskonto · NOK",
        );
        assert!(names_box(&c, "NO9315031234562"));
        assert!(names_box(&c, "1503.12.34562"));
        assert!(names_box(&c, "15031234562"));
        assert!(names_box(&c, "5C2D"));
        assert!(!names_box(&c, "15031234563"));
        let card = choice("cardAccount", "9e", "Mastercard 516812******4471 · NOK");
        assert!(names_box(&card, "516812******4471"));
        assert!(!names_box(&card, "516812******4472"));
    }

    #[test]
    fn forms_read_buttons_choices_and_labels() {
        let page = Url::parse("http://127.0.0.1:1/sca/x").unwrap();
        let html = r#"<form id="consent" method="post" action="/sca/x/consent">
            <input type="hidden" name="token" value="t1">
            <label class="acct"><input type="checkbox" name="account" value="a1" checked>
              <b>Brukskonto</b> <span>1503.12.34562</span></label>
            <label><input type="radio" name="context" value="CORPORATE:g" data-company="912345602"> Bakeri</label>
            <button type="submit" name="action" value="approve">Approve</button>
            <button type="submit" formaction="/sca/x/cancel" name="action" value="cancel">Cancel</button>
            </form>"#;
        let f = forms(html, &page).remove(0);
        assert_eq!(f.id, "consent");
        assert_eq!(f.action, "http://127.0.0.1:1/sca/x/consent");
        assert_eq!(f.checked("account"), ["a1"]);
        assert_eq!(f.choices[0].text, "Brukskonto 1503.12.34562");
        assert_eq!(f.choices[1].company.as_deref(), Some("912345602"));
        assert_eq!(
            f.buttons[1].formaction.as_deref(),
            Some("http://127.0.0.1:1/sca/x/cancel")
        );
        assert_eq!(f.primary().map(|b| b.value.as_str()), Some("approve"));
        assert_eq!(
            context_value(&f, &Context::Corporate("912 345 602".into())).unwrap(),
            "CORPORATE:g"
        );
        assert!(context_value(&f, &Context::Corporate("1".into())).is_err());
    }
}
