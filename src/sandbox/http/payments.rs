//! Payment initiation (PIS) of the sandbox: `POST /v1/{payment-service}/{payment-product}`,
//! the payment resource, its status, cancellation and authorisation, and the instant
//! product's fee information (interface document: Endpoints, "Other operations named";
//! Resources, "Payment initiation body", "Other payment facts"; States, "Payment statuses";
//! Errors; Berlin Group `paymentInitationRequestResponse-201`,
//! `paymentInitiationStatusResponse-200_json`, `paymentInitiationWithStatusResponse`,
//! `startScaprocessResponse`, `scaStatusResponse`).
//!
//! Routes (`{service}` is `payments`, `bulk-payments` or `periodic-payments`):
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | POST | `/v1/{service}/{product}` | 201 `{transactionStatus: RCVD, paymentId, _links, tppMessages?}` |
//! | GET | `/v1/{service}/{product}/{paymentId}` | 200 the normalised body + `transactionStatus` |
//! | GET | `/v1/{service}/{product}/{paymentId}/status` | 200 `{transactionStatus, fundsAvailable?}` |
//! | DELETE | `/v1/{service}/{product}/{paymentId}` | 204 (now `CANC`), or 409 explaining why not |
//! | POST | `/v1/{service}/{product}/{paymentId}/authorisations` | 201 `{scaStatus, authorisationId, _links.scaRedirect}` |
//! | GET | `/v1/{service}/{product}/{paymentId}/authorisations` | 200 `{authorisationIds}` (Berlin Group `authorisations`) |
//! | GET | `/v1/{service}/{product}/{paymentId}/authorisations/{authorisationId}` | 200 `{scaStatus}` |
//! | PUT | `/v1/{service}/{product}/{paymentId}/authorisations/{authorisationId}` | 200 `{scaStatus, _links}` for an empty body; 400 otherwise ([`update_psu_data_answer`]) |
//! | GET | `/v1/payments/instant-norwegian-credit-transfers-straks/fee-information` | 200 [`FeeInformation`] |
//!
//! Products and body rules: [`body`]. Lifecycle (interface document, States; batch runs):
//! `RCVD` → SCA approve → `ACTC` → batch run ([`crate::sandbox::http::batch`]) → `ACSC`, or `ACCP` with
//! `fundsAvailable: false` when the debtor account lacks the funds; SCA reject → `RJCT`;
//! SCA link expired unfinished (30 minutes, no newer authorisation) → `RJCT` at the next
//! read ([`reject_expired`]);
//! DELETE → `CANC`; sandbox hold → `PDNG`. Instant payments settle at approval. Periodic
//! payments stay `ACTC` (the batch runs for all payments except periodic ones).
//!
//! A request with `PSU-ID` about a payment in CORPORATE context (a corporate customer's
//! debtor account, or approved under a corporate agreement) needs `PSU-Corporate-ID`, else
//! 400 `FORMAT_ERROR` ([`require_corporate_id`]; Authentication 12).
//!
//! Every handler needs the `PSP_PI` role in the TPP certificate ([`require_role`]: 401
//! `ROLE_INVALID`) and first runs the batch runs that are due ([`settlement::run_due`]).
//!
//! SCA (interface document, Authentication 11 and 15: "Each payment also needs its own SCA";
//! the SCA-session rule 2 does not apply because payments need dynamic linking): the 201
//! carries `scaRedirect` to the payment SCA page ([`crate::sandbox::http::payment_sca`]) — the implicit
//! start. With `TPP-Explicit-Authorisation-Preferred: true` (the header of the bank's v2
//! Postman collection) it carries `startAuthorisation` instead, and
//! `POST .../authorisations` (empty body) answers the `scaRedirect`.
//! `TPP-Redirect-Preferred: false` asks for the bank's mobile app; the sandbox has no app and
//! keeps the redirect.

pub mod body;

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::sandbox::App;
use crate::sandbox::domain::access;
use crate::sandbox::domain::settlement::{self, now_secs};
use crate::sandbox::domain::{payment, payment_sca};
use crate::sandbox::http::auth::Tpp;

use crate::cert::{Certificate, Psd2Role};
use crate::sandbox::errors::{ApiError, ApiPath, QueryPairs};
use crate::sandbox::store::payments::{
    self as rows, AuthorisationRow, PaymentRow, sca_status, status,
};
use crate::xs2a::error::{MAX_TEXT_CHARS, MessageCode};
use crate::xs2a::headers;
use crate::xs2a::links::{Link, Links, names};
use crate::xs2a::model::{Amount, CustomerType};
use crate::xs2a::wire::{Fee, FeeInformation};
use body::Service;

/// Header asking for the explicit start of the authorisation (Berlin Group
/// `TPP-Explicit-Authorisation-Preferred`).
pub const TPP_EXPLICIT_AUTHORISATION_PREFERRED: &str = "TPP-Explicit-Authorisation-Preferred";

/// The verified TPP certificate of a `/v1` request (put there by [`crate::sandbox::http::auth::verify_v1`]).
pub struct TppCert(pub Arc<Certificate>);

impl<S: Send + Sync> FromRequestParts<S> for TppCert {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<crate::sandbox::http::auth::Verified>()
            .map(|v| TppCert(v.certificate.clone()))
            .ok_or_else(|| {
                ApiError::new(
                    MessageCode::CertificateMissing,
                    "the request carries no verified TPP certificate",
                )
            })
    }
}

/// `Ok` when `cert` holds `role` (its ETSI qcStatements PSD2 roles).
///
/// Errors: 401 `ROLE_INVALID` naming the missing role (Berlin Group `MessageCode401_PIS`/
/// `_AIS`: "The TPP does not have the correct PSD2 role to access this service"); the
/// message is the one of [`crate::sandbox::domain::rules::TppRoles::require`].
pub fn require_role(cert: &Certificate, role: Psd2Role) -> Result<(), ApiError> {
    let service = match role {
        Psd2Role::PspPi => "payment initiation",
        Psd2Role::PspAi => "account information",
        Psd2Role::PspIc => "card-based payment instrument issuing",
        Psd2Role::PspAs => "account servicing",
    };
    crate::sandbox::domain::rules::TppRoles(cert.roles()).require(role, service)
}

const SINGLE: u8 = 0;
const BULK: u8 = 1;
const PERIODIC: u8 = 2;

fn service_of(code: u8) -> Service {
    match code {
        BULK => Service::BulkPayments,
        PERIODIC => Service::PeriodicPayments,
        _ => Service::Payments,
    }
}

/// The PIS routes (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    let mut r = Router::new();
    for fee in [
        "/v1/payments/instant-norwegian-credit-transfers-straks/fee-information",
        "/v1/payments/instant-norwegian-domestic-credit-transfers-straks/fee-information",
    ] {
        r = r.route(fee, get(fee_information));
    }
    r = service_routes::<SINGLE>(r, "payments");
    r = service_routes::<BULK>(r, "bulk-payments");
    service_routes::<PERIODIC>(r, "periodic-payments")
}

/// The routes of one payment service `S` under `/v1/{service}/{product}`: initiation,
/// details and cancellation, status, and the authorisation sub-resources.
fn service_routes<const S: u8>(r: Router<Arc<App>>, service: &str) -> Router<Arc<App>> {
    let base = format!("/v1/{service}/{{product}}");
    r.route(&base, post(create::<S>))
        .route(
            &format!("{base}/{{id}}"),
            get(details::<S>).delete(cancel::<S>),
        )
        .route(&format!("{base}/{{id}}/status"), get(status::<S>))
        .route(
            &format!("{base}/{{id}}/authorisations"),
            post(start_authorisation::<S>).get(list_authorisations::<S>),
        )
        .route(
            &format!("{base}/{{id}}/authorisations/{{auth}}"),
            get(authorisation_status::<S>).put(update_psu_data::<S>),
        )
}

// ---------------------------------------------------------------------------------------
// Headers

/// The value of header `name`, trimmed, `None` when absent or blank; `Err` (400
/// `FORMAT_ERROR`) when it is not visible ASCII: [`access::header`] under the name the
/// payment and basket handlers use.
pub use crate::sandbox::http::caller::header as header_str;

/// The request headers the payment handlers read, each its [`header::HeaderName`] (made
/// at compile time: a `&str` name was parsed and lower-cased at each of the ~10 look-ups
/// of a payment initiation, issue 23) and its name as the interface document writes it
/// (the refusals' texts).
pub mod known {
    use axum::http::HeaderName;

    use crate::xs2a::headers;

    /// A header: its key and its name as written.
    pub type Known = (HeaderName, &'static str);

    /// `PSU-ID`.
    pub const PSU_ID: Known = (HeaderName::from_static("psu-id"), headers::PSU_ID);
    /// `PSU-Corporate-ID`.
    pub const PSU_CORPORATE_ID: Known = (
        HeaderName::from_static("psu-corporate-id"),
        headers::PSU_CORPORATE_ID,
    );
    /// `PSU-IP-Address`.
    pub const PSU_IP_ADDRESS: Known = (
        HeaderName::from_static("psu-ip-address"),
        headers::PSU_IP_ADDRESS,
    );
    /// `TPP-Redirect-URI`.
    pub const TPP_REDIRECT_URI: Known = (
        HeaderName::from_static("tpp-redirect-uri"),
        headers::TPP_REDIRECT_URI,
    );
    /// `TPP-Session-ID`.
    pub const TPP_SESSION_ID: Known = (
        HeaderName::from_static("tpp-session-id"),
        headers::TPP_SESSION_ID,
    );
    /// `X-PSU-IDENTITY`.
    pub const X_PSU_IDENTITY: Known = (
        HeaderName::from_static("x-psu-identity"),
        headers::X_PSU_IDENTITY,
    );
    /// `X-Accept-Fix`.
    pub const X_ACCEPT_FIX: Known = (
        HeaderName::from_static("x-accept-fix"),
        headers::X_ACCEPT_FIX,
    );
    /// `TPP-Explicit-Authorisation-Preferred`.
    pub const TPP_EXPLICIT_AUTHORISATION_PREFERRED: Known = (
        HeaderName::from_static("tpp-explicit-authorisation-preferred"),
        super::TPP_EXPLICIT_AUTHORISATION_PREFERRED,
    );

    /// The place of a header above (its lower-case key) in [`super::Found`], in the order
    /// of [`ALL`]: a switch on the length, then one comparison, at most three.
    #[inline]
    pub fn slot(key: &str) -> Option<usize> {
        match (key.len(), key) {
            (6, "psu-id") => Some(0),
            (16, "psu-corporate-id") => Some(1),
            (14, "psu-ip-address") => Some(2),
            (16, "tpp-redirect-uri") => Some(3),
            (14, "tpp-session-id") => Some(4),
            (14, "x-psu-identity") => Some(5),
            (12, "x-accept-fix") => Some(6),
            (36, "tpp-explicit-authorisation-preferred") => Some(7),
            _ => None,
        }
    }

    /// How many headers [`ALL`] holds.
    pub const COUNT: usize = 8;

    /// Every header above, in the order of [`slot`].
    pub const ALL: [Known; COUNT] = [
        PSU_ID,
        PSU_CORPORATE_ID,
        PSU_IP_ADDRESS,
        TPP_REDIRECT_URI,
        TPP_SESSION_ID,
        X_PSU_IDENTITY,
        X_ACCEPT_FIX,
        TPP_EXPLICIT_AUTHORISATION_PREFERRED,
    ];
}

/// [`header_str`] of a [`known`] header.
fn hdr<'a>(h: &'a HeaderMap, (key, name): &known::Known) -> Result<Option<&'a str>, ApiError> {
    crate::sandbox::http::caller::header_named(h, key, name)
}

/// Where the payment and basket handlers read a [`known`] header: a [`HeaderMap`] (a
/// hashed look-up per read) or the [`Found`] headers of one pass.
pub trait KnownHeaders {
    /// The value of header `k` as [`header_str`] gives it: its first value, trimmed, `None`
    /// when absent or blank.
    ///
    /// Errors: 400 `FORMAT_ERROR` naming the header when its value is not visible ASCII.
    fn known(&self, k: &known::Known) -> Result<Option<&str>, ApiError>;
}

impl KnownHeaders for HeaderMap {
    fn known(&self, k: &known::Known) -> Result<Option<&str>, ApiError> {
        hdr(self, k)
    }
}

impl<T: KnownHeaders + ?Sized> KnownHeaders for &T {
    fn known(&self, k: &known::Known) -> Result<Option<&str>, ApiError> {
        (**self).known(k)
    }
}

/// The [`known`] headers of a request, found in one pass over its headers (issue 23: a
/// payment initiation read them by ten hashed [`HeaderMap::get`]s, ~280 instructions each,
/// most of them of headers it was not sent); each header's first value, as
/// [`HeaderMap::get`] gives it, checked when it is read (so the refusals come in the order
/// of the reads, as before).
#[derive(Debug, Clone, Copy)]
pub struct Found<'a>([Option<&'a HeaderValue>; known::COUNT]);

impl<'a> Found<'a> {
    /// The [`known`] headers of `h`.
    pub fn of(h: &'a HeaderMap) -> Self {
        let mut found = [None; known::COUNT];
        for (name, value) in h {
            if let Some(i) = known::slot(name.as_str()) {
                found[i].get_or_insert(value);
            }
        }
        Found(found)
    }
}

impl KnownHeaders for Found<'_> {
    fn known(&self, (key, name): &known::Known) -> Result<Option<&str>, ApiError> {
        let slot = known::slot(key.as_str());
        // A `known` header left out of `slot` would read as absent here: a debug build's
        // tests stop at it instead (`known::ALL` is pinned against `slot` by a test).
        debug_assert!(slot.is_some(), "{key} has no slot in payments::known");
        let value = slot.and_then(|i| self.0[i]);
        crate::sandbox::http::caller::checked(value, name)
    }
}

/// `TPP-Redirect-URI`: required (interface document, Endpoints: "Every request carries
/// TPP-Redirect-URI"; the payment SCA returns there).
///
/// Errors: 400 `FORMAT_ERROR` when missing or not an absolute http(s) URL.
pub fn redirect_uri(h: &HeaderMap) -> Result<String, ApiError> {
    redirect_uri_by(h, access::is_absolute_http_url)
}

/// [`redirect_uri`] of `tpp`'s request, the URL rule answered by
/// [`access::is_redirect_url`] (the TPP's last accepted URI is not parsed again).
///
/// Errors: those of [`redirect_uri`].
pub fn redirect_uri_of(tpp: &Tpp, h: &impl KnownHeaders) -> Result<String, ApiError> {
    redirect_uri_by(h, |r| access::is_redirect_url(&tpp.id, r))
}

fn redirect_uri_by(
    h: &impl KnownHeaders,
    valid: impl FnOnce(&str) -> bool,
) -> Result<String, ApiError> {
    let Some(r) = h.known(&known::TPP_REDIRECT_URI)? else {
        return Err(ApiError::format(
            "the TPP-Redirect-URI header is missing; payments need SCA, which ends with a \
             redirect to it",
        ));
    };
    if valid(r) {
        Ok(r.to_string())
    } else {
        Err(ApiError::format(format!(
            "TPP-Redirect-URI {r:?} is not an absolute http(s) URL"
        )))
    }
}

/// `TPP-Session-ID`, or a generated one when absent.
///
/// Errors: 400 `FORMAT_ERROR` when longer than [`access::MAX_SESSION_ID_CHARS`].
pub fn session_id(h: &impl KnownHeaders) -> Result<String, ApiError> {
    match h.known(&known::TPP_SESSION_ID)? {
        Some(s) if s.chars().count() > access::MAX_SESSION_ID_CHARS => {
            Err(ApiError::format(format!(
                "TPP-Session-ID is longer than {} characters",
                access::MAX_SESSION_ID_CHARS
            )))
        }
        Some(s) => Ok(s.to_string()),
        // Written by `uuid_text`, not `Display` (issue 23): the same text.
        None => Ok(payment::uuid_text(crate::sandbox::domain::new_random_id())),
    }
}

/// `PSU-IP-Address` must be present: initiation is always PSU-initiated (interface document,
/// Authentication 16; the basket header table marks it required).
///
/// Errors: 400 `FORMAT_ERROR`.
pub fn require_psu_ip(h: &impl KnownHeaders) -> Result<(), ApiError> {
    match h.known(&known::PSU_IP_ADDRESS)? {
        Some(_) => Ok(()),
        None => Err(ApiError::format(
            "the PSU-IP-Address header is missing; it is required when the PSU initiates",
        )),
    }
}

/// Whether `TPP-Explicit-Authorisation-Preferred: true` was sent.
///
/// Errors: 400 `FORMAT_ERROR` for a value other than true/false.
pub fn explicit_preferred(h: &impl KnownHeaders) -> Result<bool, ApiError> {
    match h.known(&known::TPP_EXPLICIT_AUTHORISATION_PREFERRED)? {
        None => Ok(false),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(ApiError::format(format!(
            "{TPP_EXPLICIT_AUTHORISATION_PREFERRED} {v:?} is neither true nor false"
        ))),
    }
}

/// The customer a request is bound to, and the PSU-ID created by `X-PSU-IDENTITY`.
#[derive(Debug, Clone, Default)]
pub struct Binding {
    /// The customer who must approve (a sandbox customer id).
    pub customer: Option<Uuid>,
    /// Set when `X-PSU-IDENTITY` created (or found) the PSU-ID.
    pub created_psu_id: Option<Uuid>,
    /// The type of [`Binding::customer`] (read with it), so that the corporate check of a
    /// payment from the PSU's own account needs no second read.
    pub kind: Option<CustomerType>,
}

/// The PSU behind `PSU-ID` (registered by any flow: consent SCA, `GET /v1/users`, payment
/// SCA or `X-PSU-IDENTITY`; [`access::psu_customer`]) or
/// `X-PSU-IDENTITY` (interface document: "selects the single-SCA flow for a private PSU
/// without a PSU-ID; a PSU-ID is then created, and the flow is idempotent").
///
/// `X-PSU-IDENTITY` is the mock national identification number, i.e. a private customer's
/// `customerNumber` (Authentication 14). The PSU-ID is the one SCA gives (UUID v5 of TPP and
/// customer, [`access::psu_id`]), so repeating the header gives the same PSU-ID. An
/// unknown `PSU-ID` binds nobody (payment initiation refuses it: [`require_own_psu_id`]).
///
/// Errors: 400 `FORMAT_ERROR` for a `PSU-ID` that is not a UUID, for both headers at once,
/// for an unknown number, and for a corporate customer's number (single SCA is for private
/// PSUs).
pub fn binding(app: &App, tpp: &Tpp, h: &HeaderMap) -> Result<Binding, ApiError> {
    binding_known(app, tpp, h, None)
}

/// [`binding`], with `registered` the customer registered under the request's `PSU-ID` as
/// read beforehand ([`crate::sandbox::store::Store::payment_context`]); `None` reads it here.
///
/// Errors: those of [`binding`].
pub fn binding_known(
    app: &App,
    tpp: &Tpp,
    h: &impl KnownHeaders,
    registered: Option<&crate::sandbox::model::Customer>,
) -> Result<Binding, ApiError> {
    let psu = h.known(&known::PSU_ID)?;
    let identity = h.known(&known::X_PSU_IDENTITY)?;
    if let Some(number) = identity {
        if psu.is_some() {
            return Err(ApiError::format(
                "X-PSU-IDENTITY selects the single-SCA flow for a PSU without PSU-ID; send \
                 either PSU-ID or X-PSU-IDENTITY, not both",
            ));
        }
        let number: String = number
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '.')
            .collect();
        let Some(customer) = app.store.customer_by_number(&number)? else {
            return Err(ApiError::format(format!(
                "X-PSU-IDENTITY: no sandbox customer has the national identity number {number:?}"
            )));
        };
        if customer.kind == CustomerType::Corporate {
            return Err(ApiError::format(format!(
                "X-PSU-IDENTITY {number} is a corporate customer; the single-SCA flow is only \
                 for private PSUs (corporate PSUs register with GET /v1/users and act with \
                 PSU-ID and PSU-Corporate-ID)"
            )));
        }
        return Ok(Binding {
            customer: Some(customer.id),
            created_psu_id: Some(access::psu_id(&tpp.id, customer.id)),
            kind: Some(customer.kind),
        });
    }
    let Some(psu) = psu else {
        return Ok(Binding::default());
    };
    let psu_id = Uuid::parse_str(psu)
        .map_err(|_| ApiError::format(format!("PSU-ID {psu:?} is not a UUID")))?;
    // Only the id and type are kept: the registered record is not copied (issue 23).
    let customer = match registered {
        Some(c) => Some((c.id, c.kind)),
        None => {
            access::psu_customer_record(&app.domain(), &tpp.id, psu_id)?.map(|c| (c.id, c.kind))
        }
    };
    Ok(Binding {
        customer: customer.map(|(id, _)| id),
        created_psu_id: None,
        kind: customer.map(|(_, kind)| kind),
    })
}

/// Payment initiation with a `PSU-ID` this TPP was never given (another TPP's, or made up)
/// is refused as `/v1/accounts` refuses it: 401 `CONSENT_INVALID` (issue 20, finding 7: a
/// second TPP could initiate, and read back, payments under the first TPP's PSU-ID). A
/// PSU-ID is "unique per TPP and ASPSP combination" (interface document, Resources), so only
/// the TPP's own PSU-IDs ([`access::psu_customer`]) bind a payment; without `PSU-ID` the
/// SCA identifies the PSU and gives the TPP its PSU-ID.
///
/// Errors: 401 `CONSENT_INVALID` when `PSU-ID` is present and `bound` has no customer.
pub fn require_own_psu_id(h: &impl KnownHeaders, bound: &Binding) -> Result<(), ApiError> {
    if bound.customer.is_some() || h.known(&known::PSU_ID)?.is_none() {
        return Ok(());
    }
    Err(ApiError::new(
        MessageCode::ConsentInvalid,
        "this PSU-ID is not known to this TPP: a PSU-ID is only valid for the TPP it was \
         given to (after an SCA of this TPP, GET /v1/users or X-PSU-IDENTITY); initiate the \
         payment without PSU-ID and the SCA identifies the PSU",
    ))
}

// ---------------------------------------------------------------------------------------
// Corporate context (Authentication 12)

/// Whether `account` belongs to a corporate customer (its payments are made in CORPORATE
/// context).
///
/// Errors: a storage failure ([`ApiError`] 503).
fn corporate_account(
    app: &App,
    account: &crate::sandbox::model::Account,
) -> Result<bool, ApiError> {
    corporate_account_of(app, account, &Binding::default(), None)
}

/// [`corporate_account`], without reading the owner again when it is the customer `bound`
/// already read, or `owner` as read beforehand
/// ([`crate::sandbox::store::Store::payment_context`]'s debtor owner).
fn corporate_account_of(
    app: &App,
    account: &crate::sandbox::model::Account,
    bound: &Binding,
    owner: Option<&crate::sandbox::model::Customer>,
) -> Result<bool, ApiError> {
    if bound.customer == Some(account.owner)
        && let Some(kind) = bound.kind
    {
        return Ok(kind == CustomerType::Corporate);
    }
    if let Some(owner) = owner.filter(|o| o.id == account.owner) {
        return Ok(owner.kind == CustomerType::Corporate);
    }
    Ok(app
        .store
        .customer(account.owner)?
        .is_some_and(|c| c.kind == CustomerType::Corporate))
}

/// Whether payment `p` is in CORPORATE context: approved under a corporate agreement, or
/// drawn on an account of a corporate customer.
///
/// Errors: a storage failure ([`ApiError`] 503).
pub fn in_corporate_context(app: &App, p: &PaymentRow) -> Result<bool, ApiError> {
    if p.agreement.as_deref().is_some_and(|a| !a.is_empty()) {
        return Ok(true);
    }
    let Ok(debtor) = Uuid::parse_str(&p.debtor_account) else {
        return Ok(false);
    };
    match app.store.account(debtor)? {
        Some(a) => corporate_account(app, &a),
        None => Ok(false),
    }
}

/// Interface document, Authentication 12: "For corporate context PSU-CORPORATE-ID is set as
/// well ... A corporate user's request without it is answered 400" (Errors table: "Corporate
/// user's request lacks PSU-CORPORATE-ID: 400"), the rule account requests already follow
/// ([`crate::sandbox::domain::access`]). For PIS and signing baskets a request acts as a corporate user when
/// it identifies the PSU (`PSU-ID`) and concerns a payment in CORPORATE context:
/// `corporate` names it (e.g. via [`in_corporate_context`]), or gives `None`; it is only
/// called when `PSU-ID` is present and `PSU-Corporate-ID` absent.
///
/// Errors: 400 `FORMAT_ERROR` naming the missing header and the payment.
pub fn require_corporate_id(
    h: &impl KnownHeaders,
    corporate: impl FnOnce() -> Result<Option<String>, ApiError>,
) -> Result<(), ApiError> {
    if h.known(&known::PSU_ID)?.is_none() || h.known(&known::PSU_CORPORATE_ID)?.is_some() {
        return Ok(());
    }
    let Some(what) = corporate()? else {
        return Ok(());
    };
    Err(ApiError::format(format!(
        "the PSU-Corporate-ID header is missing: {what} is in CORPORATE context (a corporate \
         customer's account), so a request with PSU-ID needs the psu-corporate-id received \
         after SCA or chosen from GET /v1/agreements (Authentication 12)"
    )))
}

/// [`require_corporate_id`] for payment `p`, and [`check_corporate_id`] when the header is
/// present.
pub fn require_corporate_id_for(app: &App, h: &HeaderMap, p: &PaymentRow) -> Result<(), ApiError> {
    require_corporate_id(h, || {
        Ok(in_corporate_context(app, p)?.then(|| format!("payment {}", p.id)))
    })?;
    check_corporate_id(app, h, p)
}

/// A `PSU-Corporate-ID` sent about payment `p` must name its agreement, as `/v1/accounts`
/// requires (issue 20, finding 8: a random UUID on a corporate payment's status answered
/// 200). It must be a UUID of an agreement of the sandbox; for a payment in CORPORATE
/// context, the agreement it was approved under, or before approval an agreement whose
/// corporate party owns the debtor account. Absent: nothing to check
/// ([`require_corporate_id`] decides whether it is needed).
///
/// Errors: 401 `CORPORATE_ID_INVALID` (Berlin Group `MessageCode401_PIS`) naming the reason;
/// 503 when the database fails.
pub fn check_corporate_id(app: &App, h: &HeaderMap, p: &PaymentRow) -> Result<(), ApiError> {
    let Some(value) = hdr(h, &known::PSU_CORPORATE_ID)? else {
        return Ok(());
    };
    let invalid = |why: String| Err(ApiError::new(MessageCode::CorporateIdInvalid, why));
    let Ok(cid) = Uuid::parse_str(value) else {
        return invalid(format!("PSU-Corporate-ID {value:?} is not a UUID"));
    };
    let Some(agreement) = app.store.agreement(cid)? else {
        return invalid(format!(
            "PSU-Corporate-ID {cid} is not an agreement of this PSU"
        ));
    };
    if !in_corporate_context(app, p)? {
        return Ok(());
    }
    let matches = match p.agreement.as_deref().filter(|a| !a.is_empty()) {
        Some(approved) => approved == cid.to_string(),
        None => match Uuid::parse_str(&p.debtor_account)
            .ok()
            .map_or(Ok(None), |a| app.store.account(a))?
        {
            Some(debtor) => agreement.corporate == debtor.owner,
            None => false,
        },
    };
    if matches {
        Ok(())
    } else {
        invalid(format!(
            "PSU-Corporate-ID {cid} is not the agreement of payment {}",
            p.id
        ))
    }
}

// ---------------------------------------------------------------------------------------
// Links and responses

/// `/v1/{service}/{product}/{id}`.
pub fn payment_path(service: Service, product: &str, id: &str) -> String {
    // `concat`, not `format!` (issue 23: the formatting machinery for a join).
    ["/v1/", service.segment(), "/", product, "/", id].concat()
}

/// The absolute URL of the payment SCA page of authorisation `auth` (under
/// [`App::public_url`], never the request's `Host`; the page token of
/// [`crate::sandbox::http::sca_pages`], never the id; see
/// [`crate::sandbox::domain::Ctx::sca_href`]).
pub fn sca_href(app: &App, auth: &str) -> String {
    app.domain().sca_href("/payment-sca", auth)
}

pub use crate::sandbox::domain::payment::{
    AUTHORISATION_SECONDS, EXPIRED_REASON, effective_sca_status, new_authorisation,
    new_authorisation_id, reject_expired,
};

/// Starts a new authorisation of `covers` (`POST .../authorisations` of a payment or a
/// signing basket) with this request's `TPP-Redirect-URI` and `TPP-Session-ID`, each falling
/// back to the initiation's (`initiated`: redirect URI, session id).
///
/// Errors: those of [`redirect_uri`], [`session_id`] and
/// [`payment_sca::start_authorisation`].
pub fn start_authorisation_of(
    app: &App,
    tpp: &Tpp,
    covers: payment_sca::Covers<'_>,
    h: &HeaderMap,
    initiated: (&str, &str),
) -> Result<AuthorisationRow, ApiError> {
    let redirect = match hdr(h, &known::TPP_REDIRECT_URI)? {
        Some(_) => redirect_uri(h)?,
        None => initiated.0.to_string(),
    };
    let session = match hdr(h, &known::TPP_SESSION_ID)? {
        Some(_) => session_id(h)?,
        None => initiated.1.to_string(),
    };
    payment_sca::start_authorisation(&app.domain(), tpp, covers, &redirect, &session)
}

/// `tppMessages` of `WARNING`s (Berlin Group `tppMessage201PaymentInitiation`, code
/// `WARNING` of `MessageCode201PaymentInitiation`).
pub fn warnings_json(warnings: &[String]) -> Value {
    Value::Array(
        warnings
            .iter()
            .map(|w| {
                let text: String = w.chars().take(MAX_TEXT_CHARS).collect();
                json!({"category": "WARNING", "code": "WARNING", "text": text})
            })
            .collect(),
    )
}

fn links_json(links: &Links) -> Value {
    serde_json::to_value(links).unwrap_or(Value::Null)
}

/// A JSON answer of `status`: the response axum's [`Json`] gives (`Content-Type:
/// application/json`, the body's bytes), serialised into a `Vec` of 512 bytes first (issue
/// 23: `Json` writes through `io::Write` into a `BytesMut` of 128 bytes, a call per token and
/// regrowths on the way). A body that does not serialise answers as `(status, Json(body))`
/// does.
pub fn json_answer(status: StatusCode, body: impl Serialize) -> Response {
    let mut bytes = Vec::with_capacity(512);
    match serde_json::to_writer(&mut bytes, &body) {
        Ok(()) => (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            bytes,
        )
            .into_response(),
        Err(_) => (status, Json(body)).into_response(),
    }
}

/// A JSON answer with `status` and extra headers ([`json_answer`]).
pub fn json_response(
    status: StatusCode,
    body: impl Serialize,
    extra: &[(&str, String)],
) -> Response {
    let mut r = json_answer(status, body);
    for (name, value) in extra {
        if let (Ok(n), Ok(v)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            r.headers_mut().insert(n, v);
        }
    }
    r
}

// ---------------------------------------------------------------------------------------
// Handlers

/// `POST /v1/{service}/{product}`: validates the body ([`body::parse`]), checks the logical
/// duplicate and stores the payment as `RCVD`.
///
/// Query `allowLogicalDuplicate` (boolean, default false): without it, a second payment with
/// the same debtor, creditor, amount, execution date and remittance created the same sandbox
/// day (and not rejected or cancelled) → 400 `PAYMENT_FAILED` explaining the duplicate.
///
/// Answer: 201 `{transactionStatus: "RCVD", paymentId, _links: {scaRedirect (absolute),
/// scaStatus, self, status} | {startAuthorisation, self, status}, tppMessages?: [WARNING]}`,
/// headers `Location` (self), `ASPSP-SCA-Approach: REDIRECT`, and `PSU-ID` when
/// `X-PSU-IDENTITY` created it.
///
/// The headers are taken out of the request instead of extracted as a `HeaderMap` (a clone of
/// every header; issue 23), the body then read by axum's `Bytes` extractor as before (its
/// refusal answered as axum answers it).
async fn create<const S: u8>(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    cert: TppCert,
    ApiPath(segment): ApiPath<String>,
    query: QueryPairs,
    request: axum::extract::Request,
) -> Result<Response, ApiError> {
    let (mut parts, body) = request.into_parts();
    let headers = std::mem::take(&mut parts.headers);
    let body =
        match Bytes::from_request(axum::extract::Request::from_parts(parts, body), &app).await {
            Ok(b) => b,
            Err(rejection) => return Ok(rejection.into_response()),
        };
    require_role(&cert.0, Psd2Role::PspPi)?;
    // The reads before the write in one statement (issue 23): whether a batch run is due,
    // the PSU-ID's registered customer, the debtor account and its owner. Their errors
    // still answer in the order below.
    let json = body::read_json(&body);
    let found = Found::of(&headers);
    let psu_asked = found
        .known(&known::PSU_ID)
        .ok()
        .flatten()
        .and_then(|p| Uuid::parse_str(p).ok());
    let context = app.store.payment_context(
        settlement::now_secs(&app.domain()),
        &tpp.id,
        psu_asked,
        json.as_ref().ok().and_then(body::debtor_bban).as_deref(),
    )?;
    settlement::run_if_due(&app.domain(), context.due)?;
    let service = service_of(S);
    let product = body::product_for(service, &segment)?;
    let allow_duplicate = query.bool("allowLogicalDuplicate", false)?;
    let redirect = redirect_uri_of(&tpp, &found)?;
    let session = session_id(&found)?;
    require_psu_ip(&found)?;
    let explicit = explicit_preferred(&found)?;
    check_accept_fix(&found, false)?;
    let bound = binding_known(&app, &tpp, &found, context.psu_customer.as_ref())?;
    require_own_psu_id(&found, &bound)?;
    let init = body::parse_json(&app, service, &product, json, context.debtor.as_ref())?;
    require_corporate_id(&found, || {
        let corporate =
            corporate_account_of(&app, &init.debtor, &bound, context.debtor_owner.as_ref())?;
        Ok(corporate.then(|| "the debtor account".to_string()))
    })?;
    let (id, auth) = payment::initiate(
        &app.domain(),
        &payment::NewPayment {
            tpp: &tpp,
            service,
            product: &product,
            initiation: &init,
            redirect_uri: &redirect,
            session_id: &session,
            expected_customer: bound.customer,
            created_psu: bound.customer.zip(bound.created_psu_id),
            allow_duplicate,
            explicit,
        },
    )
    .await?;
    let self_path = payment_path(service, product.name, &id);
    let sca = auth.as_deref().map(|a| (sca_href(&app, a), a));
    let out = initiated(&id, &self_path, sca, &init.warnings);
    // The headers `json_response` added (`Location`, `ASPSP-SCA-Approach`, then `PSU-ID`),
    // named by constants instead of names parsed and values copied per answer (issue 23).
    const SCA_APPROACH: header::HeaderName = header::HeaderName::from_static("aspsp-sca-approach");
    let mut r = json_text_answer(StatusCode::CREATED, out.to_json());
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&self_path) {
        h.insert(header::LOCATION, v);
    }
    h.insert(SCA_APPROACH, HeaderValue::from_static("REDIRECT"));
    if let Some(p) = bound.created_psu_id
        && let Ok(v) = HeaderValue::from_str(&p.to_string())
    {
        h.insert(known::PSU_ID.0, v);
    }
    Ok(r)
}

/// A link `{"href": ...}` ([`Link`] without `verbs`: the same JSON).
#[derive(Debug, Serialize)]
struct Href<S> {
    href: S,
}

/// `_links` of a payment initiation's 201: the JSON of the [`Links`] map it replaces (keys
/// in the map's order: `scaRedirect`, `scaStatus`, `self`, `startAuthorisation`, `status`),
/// without building the map.
#[derive(Debug, Serialize)]
struct InitiatedLinks<'a> {
    #[serde(rename = "scaRedirect", skip_serializing_if = "Option::is_none")]
    sca_redirect: Option<Href<String>>,
    #[serde(rename = "scaStatus", skip_serializing_if = "Option::is_none")]
    sca_status: Option<Href<String>>,
    #[serde(rename = "self")]
    this: Href<&'a str>,
    #[serde(rename = "startAuthorisation", skip_serializing_if = "Option::is_none")]
    start_authorisation: Option<Href<String>>,
    status: Href<String>,
}

/// The body of a payment initiation's 201 (`transactionStatus`, `paymentId`, `_links`,
/// `tppMessages` when there are warnings, in that order), serialised straight into the
/// answer's bytes: not built as a `Value`, with `_links` converted to one, and then
/// serialised (issue 23).
#[derive(Debug, Serialize)]
struct Initiated<'a> {
    #[serde(rename = "transactionStatus")]
    transaction_status: &'static str,
    #[serde(rename = "paymentId")]
    payment_id: &'a str,
    #[serde(rename = "_links")]
    links: InitiatedLinks<'a>,
    #[serde(rename = "tppMessages", skip_serializing_if = "Option::is_none")]
    tpp_messages: Option<Value>,
}

impl Initiated<'_> {
    /// The JSON text [`Serialize`] gives (serde_json, compact), written field by field
    /// (issue 23: the serializer escaped each of the ~11 strings byte by byte through its
    /// writer, ~300 instructions each; the ids, statuses and links the sandbox built need no
    /// escaping, and a string that does is still escaped by serde_json:
    /// [`crate::sandbox::domain::payment::push_json_str`]).
    fn to_json(&self) -> Vec<u8> {
        use crate::sandbox::domain::payment::push_json_str;
        let l = &self.links;
        let hrefs = [
            (
                "\"scaRedirect\":{\"href\":",
                l.sca_redirect.as_ref().map(|h| h.href.as_str()),
            ),
            (
                "\"scaStatus\":{\"href\":",
                l.sca_status.as_ref().map(|h| h.href.as_str()),
            ),
            ("\"self\":{\"href\":", Some(l.this.href)),
            (
                "\"startAuthorisation\":{\"href\":",
                l.start_authorisation.as_ref().map(|h| h.href.as_str()),
            ),
            ("\"status\":{\"href\":", Some(l.status.href.as_str())),
        ];
        let size = 80
            + self.transaction_status.len()
            + self.payment_id.len()
            + hrefs
                .iter()
                .map(|(k, h)| h.map_or(0, |h| k.len() + h.len() + 4))
                .sum::<usize>();
        let mut out = String::with_capacity(size);
        out.push_str("{\"transactionStatus\":");
        push_json_str(&mut out, self.transaction_status);
        out.push_str(",\"paymentId\":");
        push_json_str(&mut out, self.payment_id);
        out.push_str(",\"_links\":{");
        let mut first = true;
        for (key, href) in hrefs {
            let Some(href) = href else { continue };
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(key);
            push_json_str(&mut out, href);
            out.push('}');
        }
        out.push('}');
        if let Some(m) = &self.tpp_messages {
            out.push_str(",\"tppMessages\":");
            // `Value`'s `Display` is serde_json's compact text.
            out.push_str(&m.to_string());
        }
        out.push('}');
        out.into_bytes()
    }
}

/// A 201 of JSON text `body` (written by [`Initiated::to_json`]) with the headers of
/// [`json_answer`].
fn json_text_answer(status: StatusCode, body: Vec<u8>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// The 201 body of payment `id` at `self_path`: with `sca` (the SCA page's URL, the
/// authorisation id) the links `scaRedirect` and `scaStatus`, else `startAuthorisation`;
/// `warnings` as `tppMessages` ([`warnings_json`]) when there are any.
fn initiated<'a>(
    id: &'a str,
    self_path: &'a str,
    sca: Option<(String, &str)>,
    warnings: &[String],
) -> Initiated<'a> {
    let (sca_redirect, sca_status, start_authorisation) = match sca {
        Some((href, auth)) => (
            Some(Href { href }),
            Some(Href {
                href: [self_path, "/authorisations/", auth].concat(),
            }),
            None,
        ),
        None => (
            None,
            None,
            Some(Href {
                href: [self_path, "/authorisations"].concat(),
            }),
        ),
    };
    Initiated {
        transaction_status: status::RCVD,
        payment_id: id,
        links: InitiatedLinks {
            sca_redirect,
            sca_status,
            this: Href { href: self_path },
            start_authorisation,
            status: Href {
                href: [self_path, "/status"].concat(),
            },
        },
        tpp_messages: (!warnings.is_empty()).then(|| warnings_json(warnings)),
    }
}

/// The payment `id` of this TPP under `service`; `segment` must be a known product but may
/// differ from the payment's own (the bank's Postman collection reads SEPA payments under
/// `norwegian-cross-border-credit-transfers`).
///
/// Errors: unknown product 404 `PRODUCT_UNKNOWN` / 403 `PRODUCT_INVALID`; unknown id or
/// another service → 404 `RESOURCE_UNKNOWN`; another TPP's payment → 403
/// `RESOURCE_UNKNOWN`.
pub fn own_payment(
    app: &App,
    tpp: &Tpp,
    service: Service,
    segment: &str,
    id: &str,
) -> Result<PaymentRow, ApiError> {
    body::product(segment)?;
    let p = app
        .db
        .read(|c| rows::payment(c, id))?
        .filter(|p| p.service == service.segment())
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no {} resource has the paymentId {id:?}",
                service.segment()
            ))
        })?;
    if *p.tpp != *tpp.id.0 {
        return Err(ApiError::forbidden_unknown(format!(
            "payment {id} was not initiated by this TPP"
        )));
    }
    Ok(p)
}

/// Interface document: "For domestic-norway-credit-transfers, details and status cannot be
/// fetched before the payment is approved." Before the PSU's SCA decision (status `RCVD`)
/// → 400 `SERVICE_INVALID` with the reason.
fn visible(p: &PaymentRow) -> Result<(), ApiError> {
    if p.product == body::DOMESTIC_NORWAY && p.status == status::RCVD {
        return Err(ApiError::new(
            MessageCode::ServiceInvalid,
            format!(
                "payment {} ({}) is not approved yet: details and status of this product can \
                 only be read after the PSU has approved it with SCA",
                p.id,
                body::DOMESTIC_NORWAY
            ),
        ));
    }
    Ok(())
}

/// `GET /v1/{service}/{product}/{paymentId}`: the normalised body with `transactionStatus`
/// (Berlin Group `paymentInitiationWithStatusResponse`, `periodicPaymentInitiationWith
/// StatusResponse`, `bulkPaymentInitiationWithStatusResponse`).
async fn details<const S: u8>(
    OwnPayment { payment: p, .. }: OwnPayment<S, true>,
) -> Result<Json<Value>, ApiError> {
    let mut body: Map<String, Value> = match serde_json::from_str(&p.body) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    body.insert("transactionStatus".into(), Value::String(p.status));
    Ok(Json(Value::Object(body)))
}

/// What the payment handlers do first: the PIS role, due batch runs, with `read` (details
/// and status) the rejection of the payment if its SCA expired ([`reject_expired`]), then
/// the TPP's payment as it is now, checked against `PSU-Corporate-ID`, and with `read`
/// refused when not visible yet.
///
/// Errors: 401 `ROLE_INVALID`; those of [`own_payment`], [`require_corporate_id_for`] and
/// [`visible`].
#[allow(clippy::too_many_arguments)]
fn payment_for(
    app: &App,
    tpp: &Tpp,
    cert: &TppCert,
    service: Service,
    segment: &str,
    id: &str,
    headers: &HeaderMap,
    read: bool,
) -> Result<PaymentRow, ApiError> {
    require_role(&cert.0, Psd2Role::PspPi)?;
    settlement::run_due(&app.domain())?;
    if read {
        own_payment(app, tpp, service, segment, id)?;
        reject_expired(&app.domain(), &[id.to_string()])?;
    }
    let p = own_payment(app, tpp, service, segment, id)?;
    require_corporate_id_for(app, headers, &p)?;
    if read {
        visible(&p)?;
    }
    Ok(p)
}

/// The path parameters of a payment route: `(product segment, paymentId)`, and under
/// `/authorisations/{authorisationId}` `(product segment, paymentId, authorisationId)`.
trait PaymentPath: serde::de::DeserializeOwned + Send {
    /// The product segment and the payment id.
    fn payment(&self) -> (&str, &str);
}

impl PaymentPath for (String, String) {
    fn payment(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

impl PaymentPath for (String, String, String) {
    fn payment(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

/// The extractor of the payment handlers addressing `/v1/{service}/{product}/{paymentId}`
/// (and below it, path parameters `P`) of payment service `S`: the verified TPP, then
/// [`payment_for`] (with `READ`: as the reads do) on the path's payment.
///
/// Errors (the rejection): those of [`Tpp`], [`TppCert`], the path, and [`payment_for`].
struct OwnPayment<const S: u8, const READ: bool, P = (String, String)> {
    tpp: Tpp,
    id: String,
    payment: PaymentRow,
    path: P,
}

impl<const S: u8, const READ: bool, P: PaymentPath> FromRequestParts<Arc<App>>
    for OwnPayment<S, READ, P>
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, ApiError> {
        let tpp = Tpp::from_request_parts(parts, app).await?;
        let cert = TppCert::from_request_parts(parts, app).await?;
        let ApiPath(path) = ApiPath::<P>::from_request_parts(parts, app).await?;
        let (segment, id) = path.payment();
        let (segment, id) = (segment.to_string(), id.to_string());
        let service = service_of(S);
        let payment = payment_for(
            app,
            &tpp,
            &cert,
            service,
            &segment,
            &id,
            &parts.headers,
            READ,
        )?;
        Ok(OwnPayment {
            tpp,
            id,
            payment,
            path,
        })
    }
}

/// Whether the debtor account of `p` holds its amount now ([`settlement::available_minor`]).
fn funds_now(app: &App, p: &PaymentRow) -> Result<Option<bool>, ApiError> {
    let Some(account) = Uuid::parse_str(&p.debtor_account)
        .ok()
        .map_or(Ok(None), |a| app.store.account(a))?
    else {
        return Ok(None);
    };
    Ok(settlement::available_minor(&app.domain(), &account)?.map(|a| a >= p.amount_minor))
}

/// `GET /v1/{service}/{product}/{paymentId}/status`: `{transactionStatus, fundsAvailable?}`
/// (Berlin Group `paymentInitiationStatusResponse-200_json`). `fundsAvailable` is given when
/// a funds check applies (Berlin Group: for `ACTC`, `ACWC`, `ACCP`): `false` for a payment
/// rejected for lack of funds (`ACCP`, interface document), the current check of the debtor
/// account for an authorised one (`ACTC`). A payment rejected because its SCA expired
/// ([`reject_expired`]) carries `psuMessage` saying so.
async fn status<const S: u8>(
    State(app): State<Arc<App>>,
    OwnPayment { payment: p, .. }: OwnPayment<S, true>,
) -> Result<Json<Value>, ApiError> {
    let mut out = json!({"transactionStatus": p.status});
    if p.status == status::RJCT && p.reason.as_deref() == Some(EXPIRED_REASON) {
        out["psuMessage"] = Value::String(EXPIRED_REASON.to_string());
    }
    let funds = match p.status.as_str() {
        status::ACCP => p.funds_available.or(Some(false)),
        status::ACTC => funds_now(&app, &p)?,
        _ => None,
    };
    if let Some(f) = funds {
        out["fundsAvailable"] = Value::Bool(f);
    }
    Ok(Json(out))
}

/// `DELETE /v1/{service}/{product}/{paymentId}` (available for every product in the sandbox,
/// interface document): a `RCVD` or `ACTC` payment (a periodic one: the standing order) is
/// cancelled → 204 and status `CANC` (no cancellation authorisation in the sandbox).
///
/// Errors: 409 `STATUS_INVALID` with an explanation for a payment on hold (`PDNG`, the
/// interface document's "improved error message"), executed (`ACSC`), rejected (`RJCT`,
/// `ACCP`) or already cancelled.
async fn cancel<const S: u8>(
    State(app): State<Arc<App>>,
    OwnPayment { id, .. }: OwnPayment<S, false>,
) -> Result<Response, ApiError> {
    payment::cancel(&app.domain(), &id)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /v1/{service}/{product}/{paymentId}/authorisations` (the `startAuthorisation` link;
/// empty body): 201 `{scaStatus: "received", authorisationId, _links: {scaRedirect,
/// scaStatus}}` (Berlin Group `startScaprocessResponse`). `TPP-Redirect-URI` and
/// `TPP-Session-ID` of this request are used, falling back to those of the initiation.
///
/// Errors: 409 `STATUS_INVALID` when the payment is no longer `RCVD`.
async fn start_authorisation<const S: u8>(
    State(app): State<Arc<App>>,
    OwnPayment {
        tpp,
        id,
        payment: p,
        ..
    }: OwnPayment<S, false>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let service = service_of(S);
    let initiated = (p.redirect_uri.as_str(), p.tpp_session_id.as_str());
    let auth = start_authorisation_of(
        &app,
        &tpp,
        payment_sca::Covers::Payment(&id),
        &headers,
        initiated,
    )?;
    let self_path = payment_path(service, &p.product, &id);
    Ok(start_sca_response(&app, &self_path, &auth.id, false))
}

/// 201 `startScaprocessResponse` for authorisation `auth` under `resource_path`
/// (`verbs` added on basket links, interface document's Link).
pub fn start_sca_response(app: &App, resource_path: &str, auth: &str, verbs: bool) -> Response {
    let link = |href: String, v: &[&str]| {
        if verbs {
            Link::with_verbs(href, v)
        } else {
            Link::href(href)
        }
    };
    let status_path = format!("{resource_path}/authorisations/{auth}");
    let mut links = Links::new();
    links.insert(
        names::SCA_REDIRECT.into(),
        link(sca_href(app, auth), &["GET"]),
    );
    links.insert("scaStatus".into(), link(status_path.clone(), &["GET"]));
    json_response(
        StatusCode::CREATED,
        json!({
            "scaStatus": sca_status::RECEIVED,
            "authorisationId": auth,
            "_links": links_json(&links),
        }),
        &[
            ("Location", status_path),
            ("ASPSP-SCA-Approach", "REDIRECT".to_string()),
        ],
    )
}

/// `GET /v1/{service}/{product}/{paymentId}/authorisations/{authorisationId}`:
/// `{scaStatus}` (Berlin Group `scaStatusResponse`).
///
/// Errors: 404 `RESOURCE_UNKNOWN` for an authorisation of another payment.
async fn authorisation_status<const S: u8>(
    State(app): State<Arc<App>>,
    OwnPayment {
        id,
        path: (_, _, auth),
        ..
    }: OwnPayment<S, false, (String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    sca_status_answer(&app, &auth, &format!("payment {id}"), |a| {
        a.payment.as_deref() == Some(id.as_str())
    })
}

/// `GET /v1/{service}/{product}/{paymentId}/authorisations`: 200 `{"authorisationIds": [..]}`
/// (Berlin Group `getPaymentInitiationAuthorisation`, schema `authorisations`; the interface
/// document is silent, so the Berlin Group file decides): the ids of every authorisation
/// started for the payment (implicit or explicit start), oldest first; empty before one.
///
/// Errors: those of [`payment_for`] (401 `ROLE_INVALID`, 403/404 `RESOURCE_UNKNOWN`, 400
/// and 401 for `PSU-Corporate-ID`).
async fn list_authorisations<const S: u8>(
    State(app): State<Arc<App>>,
    OwnPayment { id, .. }: OwnPayment<S, false>,
) -> Result<Json<Value>, ApiError> {
    let ids = app.db.read(|c| rows::authorisation_ids(c, false, &id))?;
    Ok(Json(json!({ "authorisationIds": ids })))
}

/// `PUT /v1/{service}/{product}/{paymentId}/authorisations/{authorisationId}` (Berlin Group
/// `updatePaymentPsuData`): see [`update_psu_data_answer`].
async fn update_psu_data<const S: u8>(
    State(app): State<Arc<App>>,
    OwnPayment {
        id,
        payment: p,
        path: (_, _, auth),
        ..
    }: OwnPayment<S, false, (String, String, String)>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let path = payment_path(service_of(S), &p.product, &id);
    update_psu_data_answer(
        &app,
        &auth,
        &format!("payment {id}"),
        &path,
        false,
        &body,
        |a| a.payment.as_deref() == Some(id.as_str()),
    )
}

/// The answer to "Update PSU data" (`PUT .../authorisations/{authorisationId}`, Berlin Group
/// `updatePaymentPsuData` and `updateSigningBasketPsuData`; the interface document is silent,
/// so the Berlin Group file decides) for authorisation `auth` of `resource` at
/// `resource_path`. The sandbox offers the redirect SCA approach only, with one SCA method
/// and no PSU data to add through the TPP (Berlin Group: in the redirect approach the update
/// is only "the selection of authentication methods"), so:
///
/// - an empty body or `{}`: 200 `{scaStatus, _links: {scaStatus, scaRedirect?}}` (Berlin
///   Group `updatePsuIdenticationResponse`), `scaRedirect` while the authorisation is open
///   (`received`, `psuIdentified`): the PSU goes on on the SCA page;
/// - `psuData`, `scaAuthenticationData`, `authenticationMethodId`, `confirmationCode` or any
///   other member: 400 `SERVICE_INVALID` (Berlin Group: "The addressed service is not valid
///   for the addressed resources or the submitted data"), saying the PSU authenticates on the
///   `scaRedirect` page, never through the TPP;
/// - a body that is not a JSON object: 400 `FORMAT_ERROR`.
///
/// Errors: also 404 `RESOURCE_UNKNOWN` for an unknown authorisation or one of another
/// resource (as [`sca_status_answer`]); 503 when the database fails.
pub fn update_psu_data_answer(
    app: &App,
    auth: &str,
    resource: &str,
    resource_path: &str,
    verbs: bool,
    body: &[u8],
    belongs: impl Fn(&AuthorisationRow) -> bool,
) -> Result<Json<Value>, ApiError> {
    let a = authorisation_of(app, auth, resource, belongs)?;
    let members: Vec<String> = if body.iter().all(u8::is_ascii_whitespace) {
        Vec::new()
    } else {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(m)) => m.keys().cloned().collect(),
            _ => {
                return Err(ApiError::format(
                    "the body of an update of PSU data must be a JSON object (or empty)",
                ));
            }
        }
    };
    if !members.is_empty() {
        return Err(ApiError::new(
            MessageCode::ServiceInvalid,
            format!(
                "this ASPSP offers the redirect SCA approach only, with one SCA method: the PSU \
                 authenticates and approves on the scaRedirect page, never through the TPP, so \
                 there is no PSU data to update ({} not accepted); send an empty body to read \
                 the authorisation's links",
                members.join(", ")
            ),
        ));
    }
    let status = effective_sca_status(&a, now_secs(&app.domain())).to_string();
    let link = |href: String| {
        if verbs {
            Link::with_verbs(href, &["GET"])
        } else {
            Link::href(href)
        }
    };
    let mut links = Links::new();
    if status == sca_status::RECEIVED || status == sca_status::PSU_IDENTIFIED {
        links.insert(names::SCA_REDIRECT.into(), link(sca_href(app, auth)));
    }
    links.insert(
        "scaStatus".into(),
        link(format!("{resource_path}/authorisations/{auth}")),
    );
    Ok(Json(
        json!({"scaStatus": status, "_links": links_json(&links)}),
    ))
}

/// `x-accept-fix` (interface document, Versioning: "Opt-in behaviour changes are requested
/// with header `x-accept-fix`; several values are comma-separated"): every value must be one
/// of the document's fixes ([`headers::ACCEPT_FIXES`]), and with `required` (signing basket
/// creation, whose header table gives "Value `amount-as-string`") `amount-as-string` must be
/// among them. Absent: `Ok` (the basket's required headers are checked before).
///
/// Errors: 400 `FORMAT_ERROR` naming the value (issue 20, finding 9: `x-accept-fix: foo` was
/// accepted).
pub fn check_accept_fix(h: &impl KnownHeaders, required: bool) -> Result<(), ApiError> {
    let Some(v) = h.known(&known::X_ACCEPT_FIX)? else {
        return Ok(());
    };
    let values: Vec<&str> = v
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(bad) = values.iter().find(|x| {
        !headers::ACCEPT_FIXES
            .iter()
            .any(|f| f.eq_ignore_ascii_case(x))
    }) {
        return Err(ApiError::format(format!(
            "x-accept-fix value {bad:?} is not one of the interface document's fixes ({})",
            headers::ACCEPT_FIXES.join(", ")
        )));
    }
    if required
        && !values
            .iter()
            .any(|x| x.eq_ignore_ascii_case("amount-as-string"))
    {
        return Err(ApiError::format(
            "x-accept-fix must carry amount-as-string (the interface document's header table \
             of signing basket creation)",
        ));
    }
    Ok(())
}

/// Authorisation `auth` of `resource` (`belongs` says whether it is one of its).
///
/// Errors: 404 `RESOURCE_UNKNOWN` for an unknown authorisation or one of another resource;
/// the database fails (503).
fn authorisation_of(
    app: &App,
    auth: &str,
    resource: &str,
    belongs: impl Fn(&AuthorisationRow) -> bool,
) -> Result<AuthorisationRow, ApiError> {
    app.db
        .read(|c| rows::authorisation(c, auth))?
        .filter(|a| belongs(a))
        .ok_or_else(|| ApiError::not_found(format!("{resource} has no authorisation {auth:?}")))
}

/// The `{scaStatus}` answer (Berlin Group `scaStatusResponse`) for authorisation `auth` of
/// `resource` (e.g. `payment 3f…`, `signing basket 9a…`); `belongs` tells whether the stored
/// authorisation is one of that resource's.
///
/// Errors: 404 `RESOURCE_UNKNOWN` for an unknown authorisation or one of another resource;
/// the database fails.
pub fn sca_status_answer(
    app: &App,
    auth: &str,
    resource: &str,
    belongs: impl Fn(&AuthorisationRow) -> bool,
) -> Result<Json<Value>, ApiError> {
    let a = authorisation_of(app, auth, resource, belongs)?;
    Ok(Json(
        json!({"scaStatus": effective_sca_status(&a, now_secs(&app.domain()))}),
    ))
}

/// Instant-payment fee per customer type, minor units (sandbox values).
pub const INSTANT_FEES: [(CustomerType, i64); 2] =
    [(CustomerType::Private, 0), (CustomerType::Corporate, 250)];

async fn fee_information(cert: TppCert) -> Result<Json<FeeInformation>, ApiError> {
    require_role(&cert.0, Psd2Role::PspPi)?;
    Ok(Json(FeeInformation {
        payment_product: body::INSTANT.to_string(),
        currency: "NOK".into(),
        fees: INSTANT_FEES
            .iter()
            .map(|(t, fee)| Fee {
                customer_type: *t,
                transaction_fee: Amount::from_minor("NOK", *fee),
                description: format!(
                    "per instant payment from a {} account",
                    t.as_str().to_lowercase()
                ),
            })
            .collect(),
        maximum_amount: Amount::from_minor("NOK", body::INSTANT_MAX_MINOR),
        settlement: "immediate, also outside banking hours".into(),
        valid_from: "2024-01-01".into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each [`known`] header's key is its name's (the key a `&str` look-up makes), so a
    /// look-up finds the header as sent in any case, and its refusal names it as before.
    #[test]
    fn known_headers_are_their_names() {
        for (key, name) in known::ALL {
            let parsed = header::HeaderName::from_bytes(name.as_bytes()).expect("a name");
            assert_eq!(key, parsed, "{name}");
            let mut h = HeaderMap::new();
            h.insert(
                header::HeaderName::from_bytes(name.to_ascii_uppercase().as_bytes()).unwrap(),
                HeaderValue::from_static(" v "),
            );
            assert_eq!(hdr(&h, &(key.clone(), name)).unwrap(), Some("v"), "{name}");
            assert_eq!(header_str(&h, name).unwrap(), Some("v"), "{name}");
            h.insert(
                key.clone(),
                HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap(),
            );
            let refused = hdr(&h, &(key.clone(), name)).unwrap_err();
            assert_eq!(
                format!("{refused:?}"),
                format!("{:?}", header_str(&h, name).unwrap_err()),
                "{name}"
            );
        }
    }

    /// The one pass ([`Found`]) answers every [`known`] header as a look-up in the
    /// [`HeaderMap`] does: absent, blank, trimmed, the first of two values, sent in upper
    /// case, not visible ASCII (the same refusal), among other headers of the same lengths.
    #[test]
    fn the_found_headers_are_the_header_maps() {
        for (i, (key, _)) in known::ALL.iter().enumerate() {
            assert_eq!(known::slot(key.as_str()), Some(i), "{key}");
        }
        for other in [
            "psu-id-type",
            "x-request-id",
            "tpp-redirect-url",
            "psu-ip-port",
            "tpp-nok-redirect-uri",
            "psu-corporate-id-type",
            "content-type",
            "psu-ix",
            "x-accept-fiz",
        ] {
            assert_eq!(known::slot(other), None, "{other}");
        }
        let values: [&[u8]; 7] = [b"v", b" v ", b"", b"   ", b"caf\xc3\xa9", b"a, b", b"true"];
        let noise = [
            ("x-request-id", "99391c7e-ad88-49ec-a2ad-99ddcb1f7721"),
            ("psu-id-type", "x"),
            ("tpp-redirect-url", "y"),
            ("content-type", "application/json"),
        ];
        for (key, name) in known::ALL {
            for value in values {
                for second in [None, Some(&b"second"[..]), Some(&b"\xff"[..])] {
                    let mut h = HeaderMap::new();
                    for (n, v) in noise {
                        h.insert(n, HeaderValue::from_static(v));
                    }
                    let upper = name.to_ascii_uppercase();
                    let sent = header::HeaderName::from_bytes(upper.as_bytes()).unwrap();
                    h.insert(sent, HeaderValue::from_bytes(value).unwrap());
                    if let Some(s) = second {
                        h.append(key.clone(), HeaderValue::from_bytes(s).unwrap());
                    }
                    let found = Found::of(&h);
                    for asked in known::ALL {
                        assert_eq!(
                            format!("{:?}", found.known(&asked)),
                            format!("{:?}", h.known(&asked)),
                            "{name}: {value:?} then {second:?}, asked {}",
                            asked.1
                        );
                    }
                }
            }
        }
        let empty = HeaderMap::new();
        for asked in known::ALL {
            assert!(matches!(Found::of(&empty).known(&asked), Ok(None)));
        }
    }

    /// A generated `TPP-Session-ID` (none sent) is a UUID written as its `Display` text.
    #[test]
    fn a_generated_session_id_is_a_uuid_text() {
        for _ in 0..100 {
            let s = session_id(&HeaderMap::new()).unwrap();
            assert_eq!(Uuid::parse_str(&s).unwrap().to_string(), s);
        }
    }

    /// Status, headers in order and body bytes of an answer.
    async fn parts_of(r: Response) -> (StatusCode, Vec<(String, Vec<u8>)>, Vec<u8>) {
        let status = r.status();
        let headers = r
            .headers()
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
            .collect();
        let body = axum::body::to_bytes(r.into_body(), usize::MAX)
            .await
            .expect("a body");
        (status, headers, body.to_vec())
    }

    /// [`json_answer`] answers exactly as `(status, Json(body))`: the same status, headers
    /// and bytes, for a 201 of a payment (with and without warnings, escaped text), a
    /// consent's 201, a body larger than its first buffer, and a body that does not
    /// serialise (`Json`'s `text/plain` error).
    #[tokio::test]
    async fn json_answer_is_the_answer_of_axum_json() {
        let warnings = ["a \"quoted\" warning ø\n".to_string()];
        let sca = || Some(("https://sandbox.example/payment-sca/t0k".to_string(), "a1"));
        let long = "x".repeat(2_000);
        let path = format!("/v1/payments/p/{long}");
        let cases: Vec<(StatusCode, Value)> = vec![
            (
                StatusCode::CREATED,
                serde_json::to_value(initiated("id-1", "/v1/payments/p/id-1", sca(), &[]))
                    .expect("serialises"),
            ),
            (
                StatusCode::CREATED,
                serde_json::to_value(initiated("id-2", "/v1/payments/p/id-2", None, &warnings))
                    .expect("serialises"),
            ),
            (
                StatusCode::OK,
                serde_json::to_value(initiated("id-3", &path, sca(), &warnings))
                    .expect("serialises"),
            ),
            (StatusCode::CREATED, json!({"consentStatus": "received"})),
        ];
        for (status, body) in cases {
            let typed = parts_of(json_answer(status, &body)).await;
            let reference = parts_of((status, Json(&body)).into_response()).await;
            assert_eq!(typed, reference, "{body}");
            assert_eq!(typed.1[0].1, b"application/json");
        }
        let typed_201 = initiated("id-4", "/v1/payments/p/id-4", sca(), &warnings);
        assert_eq!(
            parts_of(json_answer(StatusCode::CREATED, &typed_201)).await,
            parts_of((StatusCode::CREATED, Json(&typed_201)).into_response()).await
        );
        let unserialisable: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        let typed = parts_of(json_answer(StatusCode::CREATED, &unserialisable)).await;
        let reference =
            parts_of((StatusCode::CREATED, Json(&unserialisable)).into_response()).await;
        assert_eq!(typed, reference);
        assert_eq!(typed.1[0].1, b"text/plain; charset=utf-8");
    }

    /// The 201 body as it was built before issue 23's cut: a `Value` with `_links` from the
    /// [`Links`] map.
    fn initiated_as_value(
        id: &str,
        self_path: &str,
        sca: Option<(String, &str)>,
        warnings: &[String],
    ) -> Vec<u8> {
        let mut links = Links::new();
        match sca {
            Some((href, auth)) => {
                links.insert(names::SCA_REDIRECT.into(), Link::href(href));
                links.insert(
                    "scaStatus".into(),
                    Link::href(format!("{self_path}/authorisations/{auth}")),
                );
            }
            None => {
                links.insert(
                    names::START_AUTHORISATION.into(),
                    Link::href(format!("{self_path}/authorisations")),
                );
            }
        }
        links.insert(names::SELF.into(), Link::href(self_path.to_string()));
        links.insert(
            names::STATUS.into(),
            Link::href(format!("{self_path}/status")),
        );
        let mut out = json!({
            "transactionStatus": status::RCVD,
            "paymentId": id,
            "_links": links_json(&links),
        });
        if !warnings.is_empty() {
            out["tppMessages"] = warnings_json(warnings);
        }
        serde_json::to_vec(&out).expect("a Value serialises")
    }

    #[test]
    fn the_initiation_answer_is_byte_for_byte_the_value_built_one() {
        let id = "0190d5a0-1c2b-7def-8123-456789abcdef";
        let path = payment_path(Service::Payments, "norwegian-domestic-credit-transfers", id);
        let warnings = [
            "creditorAddress.city is deprecated, use creditorAddress.townName".to_string(),
            "a \"quoted\" warning ø".to_string(),
        ];
        let sca = || {
            Some((
                "https://sandbox.example/payment-sca?t=abc&x=\"1\"".to_string(),
                "0190d5a0-aaaa-7bbb-8ccc-dddddddddddd",
            ))
        };
        for (with_sca, w) in [
            (true, &[][..]),
            (false, &[][..]),
            (true, &warnings[..]),
            (false, &warnings[..]),
        ] {
            let s = if with_sca { sca() } else { None };
            let typed =
                serde_json::to_vec(&initiated(id, &path, s.clone(), w)).expect("serialises");
            let written = initiated(id, &path, s.clone(), w).to_json();
            let reference = initiated_as_value(id, &path, s, w);
            assert_eq!(
                String::from_utf8_lossy(&typed),
                String::from_utf8_lossy(&reference),
                "sca {with_sca}, {} warnings",
                w.len()
            );
            assert_eq!(
                String::from_utf8_lossy(&written),
                String::from_utf8_lossy(&typed),
                "sca {with_sca}, {} warnings",
                w.len()
            );
        }
    }

    /// The 201 written field by field ([`Initiated::to_json`]) is serde_json's text of
    /// [`Initiated`] byte for byte, and its answer [`json_answer`]'s, also for strings that
    /// need escaping: every character below U+0080 and some beyond, in the id, the path and
    /// the SCA link.
    #[tokio::test]
    async fn the_written_initiation_answer_is_the_serialised_one() {
        let mut odd: String = (0u8..0x80).map(char::from).collect();
        odd.push_str("ø€𝄞\u{2028}\u{7f}");
        let warnings = ["w \\ \u{1}".to_string()];
        for (id, path, href) in [
            (
                "id",
                "/v1/payments/p/id".to_string(),
                "https://s/x".to_string(),
            ),
            (
                odd.as_str(),
                format!("/v1/{odd}"),
                format!("https://s/{odd}"),
            ),
            ("", String::new(), String::new()),
            ("\"", "\\".to_string(), "\n".to_string()),
        ] {
            for sca in [Some((href.clone(), id)), None] {
                for w in [&[][..], &warnings[..]] {
                    let body = initiated(id, &path, sca.clone(), w);
                    let serialised = serde_json::to_vec(&body).expect("serialises");
                    assert_eq!(body.to_json(), serialised, "{id:?} {sca:?}");
                    assert_eq!(
                        parts_of(json_text_answer(StatusCode::CREATED, body.to_json())).await,
                        parts_of(json_answer(StatusCode::CREATED, &body)).await
                    );
                }
            }
        }
    }
}
