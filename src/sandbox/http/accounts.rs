//! AIS handlers: `GET /v1/accounts`, `GET /v1/accounts/{id}`, `.../balances`,
//! `.../transactions`, `.../transactions/{transactionId}` (interface document, Endpoints,
//! "Other operations named"; Limits; Account data facts. Shapes: [`crate::xs2a::model`] and
//! the Berlin Group schemas named on each handler).
//!
//! Every handler needs the AISP role ([`crate::sandbox::domain::rules::TppRoles::require_ais`], 401
//! `ROLE_INVALID`) and a consent ([`access::resolve`]: 401 + `scaRedirect` without
//! one). Without `PSU-IP-Address` (PSU not present) balances and transactions are limited
//! ([`crate::sandbox::domain::rules::count_unattended`], [`crate::sandbox::domain::rules::unattended_date_from`]).
//!
//! Transactions, `bookingStatus` (Berlin Group `bookingStatusGeneric`):
//!
//! | Value | Report |
//! |---|---|
//! | `booked` | `booked` (paged) |
//! | `pending` | `pending` (all) |
//! | `both` (default) | `booked` (paged) and `pending` (all) |
//! | `all` | `booked` (paged), `pending` (all) and `information` (the account's standing orders, Berlin Group: "all" = any bookingStatus: pending, booked or information) |
//! | `information` | 400 `PARAMETER_NOT_SUPPORTED`: the interface document names only `both`, `pending` and `all`; standing orders come with `all` |
//!
//! `dateFrom`/`dateTo` filter booked entries by `bookingDate`; `limit` (default and link page
//! size 200) and `offset` page them, with `first`, `next`, `previous`, `last` links. Pending
//! entries are always all returned, unfiltered (interface document, Limits; the document
//! notes its own sandbox does not do this — this sandbox behaves like production, so TPPs
//! test against the production rule).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRequestParts, State};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use axum::response::Response;
use axum::routing::get;
use chrono::NaiveDate;
use uuid::Uuid;

use crate::sandbox::App;
use crate::sandbox::domain::access;
use crate::sandbox::domain::access::Access;
use crate::sandbox::domain::access::PsuContext;
use crate::sandbox::domain::ledger::{self, Entry};
use crate::sandbox::domain::rules::{self, AccessKind, TppRoles};
use crate::sandbox::errors::{ApiError, ApiPath, QueryPairs};
use crate::sandbox::http::auth::{AisTpp, Tpp};
use crate::sandbox::http::reads::{Page, Read, ReadKey, SentBody};
use crate::sandbox::model::{
    Account, CardAccount, Customer, MANUAL_TRANSACTION_CODE, ManualTransaction,
};
use crate::xs2a::error::MessageCode;
use crate::xs2a::links::{Link, Links, names};
use crate::xs2a::model::{
    AccountDetails, AccountDetailsResponse, AccountList, AccountReference, Amount, Balance,
    BalancesResponse, Transaction, balance_type, booking_status,
};
use crate::xs2a::wire::{
    AdditionalInformationStructured, Report, ReportEntry, StandingOrderDetails,
    TransactionDetailsBody, TransactionDetailsResponse, TransactionsBody,
};

/// Default (and link) page size of booked transactions (interface document, Limits).
pub const DEFAULT_PAGE_SIZE: usize = 200;

/// Largest `limit` accepted.
pub const MAX_PAGE_SIZE: usize = 5000;

fn account_path(id: &str) -> String {
    format!("/v1/accounts/{id}")
}

fn details_path(account: &str, transaction: &str) -> String {
    format!("{}/transactions/{transaction}", account_path(account))
}

/// The `balances` and `transactions` links of the account or card account at `path`.
pub(crate) fn resource_links(path: &str) -> Links {
    let mut links = Links::new();
    links.insert(
        names::BALANCES.into(),
        Link::href(format!("{path}/balances")),
    );
    links.insert(
        names::TRANSACTIONS.into(),
        Link::href(format!("{path}/transactions")),
    );
    links
}

/// `accountDetails` of an account, with `balances` and `transactions` links: `name` cut to
/// 70 characters ([`rules::account_name`]), `cashAccountType` an ISO 20022 code
/// ([`rules::iso_cash_account_type`]), `status` `enabled`, `ownerName` (Account data facts).
///
/// Errors: the database fails (503).
pub fn details(app: &App, a: &Account) -> Result<AccountDetails, ApiError> {
    let id = a.id.to_string();
    let links = resource_links(&account_path(&id));
    Ok(AccountDetails {
        resource_id: Some(id),
        iban: None,
        bban: Some(a.bban.clone()),
        currency: a.currency.clone(),
        name: Some(rules::account_name(&a.name)),
        product: Some(a.product.chars().take(35).collect()),
        cash_account_type: Some(rules::iso_cash_account_type(&a.cash_account_type).to_string()),
        status: Some("enabled".into()),
        owner_name: app.store.customer(a.owner)?.map(|c| c.name),
        links: Some(links),
    })
}

fn reference(a: &Account) -> AccountReference {
    AccountReference {
        bban: Some(a.bban.clone()),
        currency: Some(a.currency.clone()),
        ..AccountReference::default()
    }
}

/// What a list of the consented accounts or card accounts extracts: the request's standing
/// consent ([`access::resolve`] of the [`AisTpp`] and the [`PsuContext`]) and the data
/// version read before it was resolved.
///
/// Errors (the rejection): those of [`AisTpp`]; the refusals of [`access::resolve`] (401 +
/// `scaRedirect`, 400).
pub struct ConsentedList {
    /// The standing consent (shared with the decision cache).
    pub access: Arc<Access>,
    /// The data version ([`crate::sandbox::store::db::Db::version`]) read before the
    /// consent was resolved.
    pub version: u64,
}

impl FromRequestParts<Arc<App>> for ConsentedList {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, ApiError> {
        let AisTpp(tpp) = AisTpp::from_request_parts(parts, app).await?;
        let Ok(psu) = PsuContext::from_request_parts(parts, app).await;
        let version = app.db.version();
        let access = access::resolve(&app.domain(), &tpp, &psu)?;
        Ok(ConsentedList { access, version })
    }
}

/// `GET /v1/accounts`: Berlin Group `accountList`, `{"accounts":[accountDetails...]}` of the
/// consented accounts.
///
/// Errors: 401 `ROLE_INVALID` without `PSP_AI`; the refusals of [`access::resolve`] (401 +
/// `scaRedirect`, 400).
pub async fn list(State(app): State<Arc<App>>, list: ConsentedList) -> Result<Response, ApiError> {
    let ConsentedList { access, version } = list;
    let key = ReadKey::new(Read::AccountList, Uuid::nil(), version).consent(&access, true);
    app.reads.answer(key, || {
        let accounts = app
            .store
            .accounts_by_ids(&access.consent.accounts)?
            .iter()
            .map(|a| details(&app, a))
            .collect::<Result<_, _>>()?;
        Ok(AccountList { accounts })
    })
}

/// How a [`Consentable`] resource is resolved: `(domain, tpp, PSU context, id)` to the request's
/// access and the resource with its owner (shared with the access decision kept, see
/// [`access::resolve_account`]).
pub type Resolver<R> = fn(
    &crate::sandbox::domain::Ctx<'_>,
    &Tpp,
    &crate::sandbox::domain::access::PsuContext,
    &str,
) -> Result<(Arc<Access>, Resource<R>), ApiError>;

/// A resolved [`Consentable`] resource and its owner, shared (a reference count per request,
/// not a copy: issue 23).
pub type Resource<R> = Arc<(R, <R as Consentable>::Owner)>;

/// An account resource an AIS request names by its path parameter `{id}`: an account or a
/// card account, resolved against the request's consent.
pub trait Consentable: Sized {
    /// The owner's customer record as the resolution gives it.
    type Owner;

    /// The access of the request and resource `id` with its owner (`(app, tpp, PSU context,
    /// id)`).
    ///
    /// Errors: the refusals of [`access::resolve`]; 403 `RESOURCE_UNKNOWN` for a resource
    /// that is not the PSU's in this context; 401 + `scaRedirect` for the PSU's resource
    /// outside the consent.
    const RESOLVE: Resolver<Self>;

    /// The resource's id.
    fn id(&self) -> Uuid;
}

impl Consentable for Account {
    /// `None` when the owner is gone (see [`owner_of`]).
    type Owner = Option<Customer>;

    const RESOLVE: Resolver<Self> = access::resolve_account;

    fn id(&self) -> Uuid {
        self.id
    }
}

impl Consentable for CardAccount {
    type Owner = Customer;

    const RESOLVE: Resolver<Self> = access::resolve_card;

    fn id(&self) -> Uuid {
        self.id
    }
}

/// The query a [`Consented`] request parses before its consent is resolved (so a malformed
/// query is refused without starting an SCA).
pub trait AisQuery: Sized {
    /// Parses the query of `parts`.
    ///
    /// Errors: 400 for a malformed query (see [`TransactionQuery::parse`]).
    fn parse(parts: &Parts) -> Result<Self, ApiError>;
}

/// No query (the query string is not read).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoQuery;

impl AisQuery for NoQuery {
    fn parse(_: &Parts) -> Result<Self, ApiError> {
        Ok(NoQuery)
    }
}

/// The query of a transactions listing: the pairs as sent and their meaning, for accounts
/// ([`TransactionQuery::parse`]) or, with `CARD`, card accounts
/// ([`TransactionQuery::parse_card`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing<const CARD: bool> {
    /// The decoded (name, value) pairs, in order.
    pub pairs: Vec<(String, String)>,
    /// The parsed query.
    pub parsed: TransactionQuery,
}

impl<const CARD: bool> AisQuery for Listing<CARD> {
    fn parse(parts: &Parts) -> Result<Self, ApiError> {
        let pairs = QueryPairs::of(parts);
        let parsed = if CARD {
            TransactionQuery::parse_card(&pairs)?
        } else {
            TransactionQuery::parse(&pairs)?
        };
        Ok(Listing {
            pairs: pairs.0,
            parsed,
        })
    }
}

#[derive(serde::Deserialize)]
struct IdParam {
    id: String,
}

/// The one extractor of the AIS handlers that address a resource (`/v1/accounts/{id}/...`,
/// `/v1/card-accounts/{id}/...`): the TPP needs the AISP role
/// ([`TppRoles::require_ais`], 401 `ROLE_INVALID`), then the query `Q` is parsed, then the
/// request's consent must cover resource `{id}` ([`Consentable::resolve`]).
///
/// Errors (the rejection): those of the three steps, in that order.
pub struct Consented<R: Consentable, Q = NoQuery> {
    /// The verified TPP.
    pub tpp: Tpp,
    /// The request's standing consent.
    pub access: Arc<Access>,
    /// The consented resource and its owner ([`Consented::item`], [`Consented::owner`]).
    pub resource: Resource<R>,
    /// The parsed query.
    pub query: Q,
    /// Whether the PSU is present (`PSU-IP-Address` sent; [`rules::psu_present`]).
    pub psu_present: bool,
    /// The data version ([`crate::sandbox::store::db::Db::version`]) read before the consent was resolved.
    pub version: u64,
}

impl<R: Consentable, Q> Consented<R, Q> {
    /// The consented resource.
    pub fn item(&self) -> &R {
        &self.resource.0
    }

    /// Its owner.
    pub fn owner(&self) -> &R::Owner {
        &self.resource.1
    }

    /// Counts a call of `kind` on the resource without the PSU present
    /// ([`rules::count_unattended`]); nothing when the PSU is present.
    ///
    /// Errors: 429 `ACCESS_EXCEEDED` past the day's unattended calls; the database fails.
    pub fn count_unattended(&self, app: &App, kind: AccessKind) -> Result<(), ApiError> {
        if self.psu_present {
            return Ok(());
        }
        let id = self.item().id().to_string();
        rules::count_unattended(&app.domain(), &self.tpp.id, &id, kind)
    }

    /// For a listing without the PSU present: the earliest booking date it may read
    /// (`requested` or [`rules::unattended_date_from`]'s default), the call counted
    /// ([`Consented::count_unattended`]); `None` when the PSU is present.
    ///
    /// Errors: 400 `PERIOD_INVALID` for a `requested` date too far back; as
    /// [`Consented::count_unattended`].
    pub fn unattended_from(
        &self,
        app: &App,
        today: NaiveDate,
        requested: Option<NaiveDate>,
        kind: AccessKind,
    ) -> Result<Option<NaiveDate>, ApiError> {
        if self.psu_present {
            return Ok(None);
        }
        let from = rules::unattended_date_from(today, requested)?;
        self.count_unattended(app, kind)?;
        Ok(Some(from))
    }
}

impl<R, Q> FromRequestParts<Arc<App>> for Consented<R, Q>
where
    R: Consentable + Send + Sync,
    R::Owner: Send + Sync,
    Q: AisQuery + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, ApiError> {
        let tpp = Tpp::from_request_parts(parts, app).await?;
        let roles = TppRoles::from_request_parts(parts, app).await?;
        let ApiPath(IdParam { id }) = ApiPath::<IdParam>::from_request_parts(parts, app).await?;
        roles.require_ais()?;
        let version = app.db.version();
        let query = Q::parse(parts)?;
        // The PSU context's `present` (`PSU-IP-Address` sent and not blank): read once.
        let psu = crate::sandbox::http::caller::psu_context(&parts.headers);
        let (access, resource) = (R::RESOLVE)(&app.domain(), &tpp, &psu, &id)?;
        Ok(Consented {
            psu_present: psu.present,
            tpp,
            access,
            resource,
            query,
            version,
        })
    }
}

/// `GET /v1/accounts/{id}`: `{"account": accountDetails}` (Berlin Group
/// `OK_200_AccountDetails`).
///
/// Errors: as [`list`]; 403 `RESOURCE_UNKNOWN` for an account that is not the PSU's in this
/// context; 401 + `scaRedirect` for the PSU's account outside the consent.
pub async fn one(State(app): State<Arc<App>>, c: Consented<Account>) -> Result<Response, ApiError> {
    let account = c.item();
    let key = ReadKey::new(Read::Account, account.id, c.version);
    app.reads.answer(key, || {
        Ok(AccountDetailsResponse {
            account: details(&app, account)?,
        })
    })
}

/// `GET /v1/accounts/{id}/balances`: Berlin Group `readAccountBalanceResponse-200`,
/// `closingBooked` (yesterday), `expected` and `interimAvailable` (today). The `account`
/// reference carries the account currency, and every balance is in it (Account data facts).
/// Without `PSU-IP-Address`: counted, 4 per 24 h per account.
///
/// Errors: as [`one`]; 429 `ACCESS_EXCEEDED`.
pub async fn balances(
    State(app): State<Arc<App>>,
    c: Consented<Account>,
) -> Result<Response, ApiError> {
    let owner = owner_of(c.owner().as_ref(), c.item(), &c.access)?;
    c.count_unattended(&app, AccessKind::Balances)?;
    let account = c.item();
    let today = app.clock.today();
    let key = ReadKey::new(Read::AccountBalances, account.id, c.version).on(today);
    app.reads.answer(key, || {
        let yesterday = today.pred_opt().unwrap_or(today);
        let b = crate::sandbox::domain::books::Book::of(&app.store, account, owner, today)
            .balances()?;
        let balance = |kind: &str, amount: i64, date: NaiveDate| Balance {
            balance_type: kind.to_string(),
            balance_amount: Amount::from_minor(&account.currency, amount),
            reference_date: Some(date.to_string()),
        };
        Ok(BalancesResponse {
            account: Some(reference(account)),
            balances: vec![
                balance(balance_type::CLOSING_BOOKED, b.closing_booked, yesterday),
                balance(balance_type::EXPECTED, b.expected, today),
                balance(balance_type::INTERIM_AVAILABLE, b.expected, today),
            ],
        })
    })
}

/// The account's owner (borrowed: the resolution's record, not a copy of its three texts per
/// request, issue 23).
///
/// Errors: 403 `RESOURCE_UNKNOWN` when the account has no owner.
fn owner_of<'a>(
    owner: Option<&'a Customer>,
    account: &Account,
    access: &Access,
) -> Result<&'a Customer, ApiError> {
    owner.ok_or_else(|| {
        ApiError::forbidden_unknown(format!(
            "account {} has no owner in this sandbox (PSU {})",
            account.id, access.key.psu_id
        ))
    })
}

/// Parsed query of a transactions request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionQuery {
    /// One of [`booking_status`]'s values, lower case.
    pub booking_status: &'static str,
    /// `dateFrom`: the earliest booking date listed.
    pub date_from: Option<NaiveDate>,
    /// `dateTo`: the latest booking date listed (default: today).
    pub date_to: Option<NaiveDate>,
    /// Entries per page.
    pub limit: usize,
    /// The first entry of the page (0-based).
    pub offset: usize,
}

fn parse_date(q: &QueryPairs, name: &str) -> Result<Option<NaiveDate>, ApiError> {
    match q.get(name) {
        None => Ok(None),
        Some(v) => crate::xs2a::fields::parse_iso_date(v)
            .map(Some)
            .ok_or_else(|| {
                ApiError::format(format!(
                    "query parameter {name}={v:?} is not an ISO 8601 date (YYYY-MM-DD)"
                ))
            }),
    }
}

fn parse_count(q: &QueryPairs, name: &str, default: usize, min: usize) -> Result<usize, ApiError> {
    match q.get(name) {
        None => Ok(default),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n >= min && n <= usize::MAX / 2 => Ok(n),
            _ => Err(ApiError::format(format!(
                "query parameter {name}={v:?} is not a whole number ≥ {min}"
            ))),
        },
    }
}

impl TransactionQuery {
    /// Parses the query of `GET /v1/accounts/{id}/transactions`: `bookingStatus` (default
    /// `both`; case-insensitive), `dateFrom`, `dateTo`, `limit` (1..=5000, default 200),
    /// `offset` (default 0). Other parameters are ignored.
    ///
    /// Errors: 400 `FORMAT_ERROR` for a malformed value; 400 `PARAMETER_NOT_SUPPORTED` for
    /// `bookingStatus=information`; 400 `PERIOD_INVALID` when `dateFrom` is after `dateTo`.
    pub fn parse(q: &QueryPairs) -> Result<Self, ApiError> {
        Self::parse_with(q, false)
    }

    /// Parses the query of `GET /v1/card-accounts/{id}/transactions` (Berlin Group
    /// `bookingStatusCard`: `booked`, `pending`, `both`; the bank's own requests send
    /// `BOTH`, so case is ignored).
    ///
    /// Errors: as [`TransactionQuery::parse`]; `all` and `information` are 400
    /// `PARAMETER_NOT_SUPPORTED`.
    pub fn parse_card(q: &QueryPairs) -> Result<Self, ApiError> {
        Self::parse_with(q, true)
    }

    fn parse_with(q: &QueryPairs, card: bool) -> Result<Self, ApiError> {
        let booking_status = match q.get("bookingStatus").map(str::to_ascii_lowercase) {
            None => booking_status::BOTH,
            Some(v) if v == booking_status::BOOKED => booking_status::BOOKED,
            Some(v) if v == booking_status::PENDING => booking_status::PENDING,
            Some(v) if v == booking_status::BOTH => booking_status::BOTH,
            Some(v) if v == booking_status::ALL && !card => booking_status::ALL,
            Some(v) if v == booking_status::INFORMATION || v == booking_status::ALL => {
                return Err(ApiError::new(
                    MessageCode::ParameterNotSupported,
                    format!(
                        "bookingStatus={v} is not supported {}",
                        if card {
                            "for card accounts (booked, pending, both)"
                        } else {
                            "by this ASPSP: standing orders are reported with bookingStatus=all"
                        }
                    ),
                ));
            }
            Some(other) => {
                return Err(ApiError::format(format!(
                    "bookingStatus={other:?} is not one of {}",
                    if card {
                        "booked, pending, both"
                    } else {
                        "booked, pending, both, all"
                    }
                )));
            }
        };
        let date_from = parse_date(q, "dateFrom")?;
        let date_to = parse_date(q, "dateTo")?;
        if let (Some(f), Some(t)) = (date_from, date_to)
            && f > t
        {
            return Err(ApiError::new(
                MessageCode::PeriodInvalid,
                format!("dateFrom {f} is after dateTo {t}"),
            ));
        }
        let limit = parse_count(q, "limit", DEFAULT_PAGE_SIZE, 1)?;
        if limit > MAX_PAGE_SIZE {
            return Err(ApiError::format(format!(
                "limit={limit} is larger than {MAX_PAGE_SIZE}"
            )));
        }
        let offset = parse_count(q, "offset", 0, 0)?;
        Ok(TransactionQuery {
            booking_status,
            date_from,
            date_to,
            limit,
            offset,
        })
    }

    /// Whether the report has `booked`.
    pub fn wants_booked(&self) -> bool {
        self.booking_status != booking_status::PENDING
    }

    /// Whether the report has `pending`.
    pub fn wants_pending(&self) -> bool {
        self.booking_status != booking_status::BOOKED
    }

    /// Whether the report has `information` (`all` only).
    pub fn wants_information(&self) -> bool {
        self.booking_status == booking_status::ALL
    }

    /// Whether a booked entry dated `d` passes `dateFrom` (or `from`, when given, the
    /// effective lower bound) and `dateTo`.
    pub fn in_period(&self, d: Option<NaiveDate>, from: Option<NaiveDate>) -> bool {
        let from = from.or(self.date_from);
        match d {
            None => true,
            Some(d) => from.is_none_or(|f| d >= f) && self.date_to.is_none_or(|t| d <= t),
        }
    }

    /// `path` (a transactions path) with this query at `offset`.
    pub fn href(&self, path: &str, offset: usize) -> String {
        let mut s = url::form_urlencoded::Serializer::new(String::new());
        s.append_pair("bookingStatus", self.booking_status);
        if let Some(d) = self.date_from {
            s.append_pair("dateFrom", &d.to_string());
        }
        if let Some(d) = self.date_to {
            s.append_pair("dateTo", &d.to_string());
        }
        s.append_pair("limit", &self.limit.to_string());
        s.append_pair("offset", &offset.to_string());
        format!("{path}?{}", s.finish())
    }

    /// `_links` of a report: `owner` (`account` → `owner_href`), and `first`, `last`, `next`,
    /// `previous` over `path` as applicable for `total` booked entries.
    pub fn links(&self, path: &str, owner: (&str, String), total: usize) -> Links {
        let mut links = Links::new();
        links.insert(owner.0.into(), Link::href(owner.1));
        if !self.wants_booked() {
            return links;
        }
        let last = if total == 0 {
            0
        } else {
            (total - 1) / self.limit * self.limit
        };
        links.insert(names::FIRST.into(), Link::href(self.href(path, 0)));
        links.insert(names::LAST.into(), Link::href(self.href(path, last)));
        if self.offset.saturating_add(self.limit) < total {
            links.insert(
                names::NEXT.into(),
                Link::href(self.href(path, self.offset + self.limit)),
            );
        }
        if self.offset > 0 {
            let prev = self.offset.saturating_sub(self.limit).min(last);
            links.insert(names::PREVIOUS.into(), Link::href(self.href(path, prev)));
        }
        links
    }
}

/// The archive reference of an entry (11 digits from its id; stable like the id).
pub fn archive_reference(id: Uuid) -> String {
    format!("{:011}", id.as_u128() % 100_000_000_000)
}

fn transaction(currency: &str, e: &Entry, booked: bool) -> Transaction {
    let (creditor_name, debtor_name) = if e.amount < 0 {
        (Some(e.counterparty.clone()), None)
    } else {
        (None, Some(e.counterparty.clone()))
    };
    Transaction {
        creditor_name,
        debtor_name,
        remittance_information_unstructured: Some(e.text.clone()),
        proprietary_bank_transaction_code: booked.then(|| e.code.to_string()),
        ..Transaction::dated(
            e.id.to_string(),
            e.booking_date,
            e.value_date,
            Amount::from_minor(currency, e.amount),
        )
    }
}

/// A listed entry: generated ([`transaction`]) or manual (its own creditor and debtor
/// accounts), with the details link and, for booked generated entries, the archive reference.
fn entry(
    account: &Account,
    e: &Entry,
    booked: bool,
    manual: &HashMap<Uuid, ManualTransaction>,
) -> ReportEntry {
    let id = e.id.to_string();
    let (transaction, reference) = match manual.get(&e.id) {
        Some(m) if e.code == MANUAL_TRANSACTION_CODE => (m.to_transaction(&account.currency), None),
        _ => (
            transaction(&account.currency, e, booked),
            booked.then(|| archive_reference(e.id)),
        ),
    };
    let mut links = Links::new();
    links.insert(
        "transactionDetails".into(),
        Link::href(details_path(&account.id.to_string(), &id)),
    );
    ReportEntry {
        transaction,
        proprietary_reference: reference,
        additional_information: None,
        additional_information_structured: None,
        balance_after_transaction: None,
        links: Some(links),
    }
}

/// The `information` entries: the account's standing orders.
fn information(
    app: &App,
    account: &Account,
    owner: &Customer,
    today: NaiveDate,
) -> Result<Vec<ReportEntry>, ApiError> {
    if !account.generated {
        return Ok(Vec::new());
    }
    let own = app.store.accounts_of(owner.id)?;
    Ok(ledger::standing_orders(account, owner, &own, today)
        .into_iter()
        .map(|o| ReportEntry {
            transaction: Transaction {
                transaction_id: None,
                entry_reference: Some(archive_reference(o.id)),
                booking_date: None,
                value_date: None,
                transaction_amount: Amount::from_minor(&account.currency, o.amount),
                creditor_name: Some(o.creditor_name.clone()),
                creditor_account: Some(AccountReference {
                    bban: Some(o.creditor_bban.clone()),
                    ..AccountReference::default()
                }),
                debtor_name: None,
                debtor_account: None,
                remittance_information_unstructured: Some(format!(
                    "{} (fast overføring den {}. hver måned)",
                    o.text, o.day_of_month
                )),
                proprietary_bank_transaction_code: None,
            },
            proprietary_reference: None,
            additional_information: None,
            additional_information_structured: Some(AdditionalInformationStructured {
                standing_order_details: StandingOrderDetails {
                    start_date: o.start_date.to_string(),
                    frequency: o.frequency.into(),
                },
            }),
            balance_after_transaction: None,
            links: None,
        })
        .collect())
}

fn manual_of(app: &App, account: &Account) -> Result<HashMap<Uuid, ManualTransaction>, ApiError> {
    Ok(app
        .store
        .manual_transactions(account.id)?
        .into_iter()
        .map(|m| (m.id, m))
        .collect())
}

/// `GET /v1/accounts/{id}/transactions`: Berlin Group `transactionsResponse-200_json` (see
/// the module documentation for `bookingStatus`, dates and paging). Booked entries are
/// newest first with a `transactionId` that stays the same across calls and clock moves
/// (Account data facts; release 1.18.0).
///
/// Without `PSU-IP-Address` (PSU not present): counted, 4 per 24 h per account; booked
/// entries from at most 90 days back (the default listing starts there; an older `dateFrom`
/// is refused).
///
/// Errors: the query errors of [`TransactionQuery::parse`]; as [`one`]; 400
/// `PERIOD_INVALID` for an unattended `dateFrom` older than 90 days; 429 `ACCESS_EXCEEDED`.
pub async fn transactions(
    State(app): State<Arc<App>>,
    c: Consented<Account, Listing<false>>,
    AcceptsGzip(gzip): AcceptsGzip,
) -> Result<axum::response::Response, ApiError> {
    let owner = owner_of(c.resource.1.as_ref(), &c.resource.0, &c.access)?;
    let today = app.clock.today();
    let date_from = c.query.parsed.date_from;
    let from = c.unattended_from(&app, today, date_from, AccessKind::Transactions)?;
    let (account, q) = (&c.resource.0, c.query.parsed);
    let key = PageKey {
        account: account.id,
        query: c.query.pairs,
        from,
        today,
        version: app.db.version(),
    };
    if let Some(body) = app.pages.ready(&key, gzip) {
        return Ok(body.response());
    }
    if let Some(page) = app.pages.get(&key) {
        return Ok(page.response(gzip));
    }
    let account_id = account.id.to_string();
    let manual = manual_of(&app, account)?;
    let mut report = Report::default();
    let mut total = 0;
    if q.wants_booked() {
        let all: Vec<Entry> =
            crate::sandbox::domain::books::Book::of(&app.store, account, owner, today)
                .booked()?
                .into_iter()
                .filter(|e| q.in_period(e.booking_date, from))
                .collect();
        total = all.len();
        report.booked = Some(
            all.iter()
                .skip(q.offset)
                .take(q.limit)
                .map(|e| entry(account, e, true, &manual))
                .collect(),
        );
    }
    if q.wants_pending() {
        report.pending = Some(
            crate::sandbox::domain::books::Book::of(&app.store, account, owner, today)
                .pending()?
                .iter()
                .map(|e| entry(account, e, false, &manual))
                .collect(),
        );
    }
    if q.wants_information() {
        report.information = Some(information(&app, account, owner, today)?);
    }
    let path = format!("{}/transactions", account_path(&account_id));
    report.links = q.links(&path, (names::ACCOUNT, account_path(&account_id)), total);
    let body = serde_json::to_vec(&TransactionsBody {
        account: reference(account),
        transactions: report,
    })
    .map(bytes::Bytes::from)
    .map_err(|e| ApiError::format(format!("the transaction page could not be written: {e}")))?;
    let page = Page::new(body);
    app.pages.put(key, page.clone());
    Ok(page.response(gzip))
}

/// Whether the request accepts a gzip answer ([`accepts_gzip`] of its headers), as an
/// extractor: the transaction pages need this one fact of the headers, and axum's
/// `HeaderMap` extractor clones the whole map per request (its index and entry arrays, a
/// reference count per value; issue 23).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptsGzip(pub bool);

impl<S: Send + Sync> FromRequestParts<S> for AcceptsGzip {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(AcceptsGzip(accepts_gzip(&parts.headers)))
    }
}

/// Whether the request's `Accept-Encoding` (RFC 9110 §12.5.3) accepts `gzip` (or `x-gzip`,
/// or `*`) with a non-zero weight. Absent header: identity only.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    // By bytes: a value `to_str` accepts is visible ASCII, space and tab, so its items and
    // parameters split at `,` and `;` and trimmed of spaces and tabs are what `str::split`
    // and `str::trim` gave, without their per-character searchers (issue 23).
    headers
        .get_all(axum::http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.as_bytes().split(|&b| b == b',').any(item_accepts_gzip))
}

/// Whether one `Accept-Encoding` item (`coding *( ";" parameter )`, visible ASCII) names
/// `gzip`, `x-gzip` or `*` without a zero weight (`q=0`, `Q=0.0`...).
fn item_accepts_gzip(item: &[u8]) -> bool {
    let mut parts = item.split(|&b| b == b';');
    let coding = parts.next().unwrap_or_default().trim_ascii();
    let gzip = coding.eq_ignore_ascii_case(b"gzip")
        || coding.eq_ignore_ascii_case(b"x-gzip")
        || coding == b"*";
    gzip && !parts.any(|p| {
        let p = p.trim_ascii();
        p.strip_prefix(b"q=")
            .or_else(|| p.strip_prefix(b"Q="))
            .and_then(|q| std::str::from_utf8(q.trim_ascii()).ok())
            .and_then(|q| q.parse::<f32>().ok())
            .is_some_and(|q| q <= 0.0)
    })
}

/// What a serialized transaction page depends on: the account, the query as sent, the
/// unattended-access window, the sandbox day and the data version ([`crate::sandbox::store::db::Db::version`],
/// bumped by every committed write, so a new transaction, payment settlement or balance
/// change is never served from an old page).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PageKey {
    account: Uuid,
    query: Vec<(String, String)>,
    from: Option<NaiveDate>,
    today: NaiveDate,
    version: u64,
}

/// Serialized `GET /v1/accounts/{id}/transactions` bodies. The ledger generates an account's
/// whole history and a default page is 200 entries (about 100 KB of JSON), so building it
/// costs far more than verifying the request's signature; the access checks (signature,
/// role, consent, session, unattended limits) still run on every request, only the body is
/// reused. At most [`PAGE_CACHE_ENTRIES`] pages are kept; the cache is emptied when full.
#[derive(Debug, Default)]
pub struct PageCache {
    pages: std::sync::Mutex<std::collections::HashMap<PageKey, Page, foldhash::fast::RandomState>>,
}

/// Most pages a [`PageCache`] keeps.
pub const PAGE_CACHE_ENTRIES: usize = 512;

impl PageCache {
    fn get(&self, key: &PageKey) -> Option<Page> {
        self.pages.lock().ok()?.get(key).cloned()
    }

    /// The kept page of `key` as it is sent ([`Page::ready_body`]: `None` also while its
    /// gzip encoding is not made): only the sent [`bytes::Bytes`] is cloned under the lock,
    /// not the page (its two reference counts, shared by every worker thread's answers,
    /// counted up and down again; issue 23).
    fn ready(&self, key: &PageKey, gzip: bool) -> Option<SentBody> {
        self.pages.lock().ok()?.get(key)?.ready_body(gzip)
    }

    fn put(&self, key: PageKey, body: Page) {
        if let Ok(mut pages) = self.pages.lock() {
            if pages.len() >= PAGE_CACHE_ENTRIES {
                pages.clear();
            }
            pages.insert(key, body);
        }
    }
}

/// `GET /v1/accounts/{id}/transactions/{transactionId}` (interface document, version 2.11.0:
/// "Transaction details endpoint"; Berlin Group `OK_200_TransactionDetails`): one booked or
/// pending entry with what the listing leaves out: `entryReference`, `additionalInformation`
/// and, for booked entries, `balanceAfterTransaction` (`interimBooked` at its booking date;
/// left out when a sandbox balance override makes it unknowable).
///
/// Without `PSU-IP-Address`: entries booked in the last 90 days only; not counted against the
/// 4 daily calls (the Limits table counts balances and transaction lists).
///
/// Errors: as [`one`]; 404 `RESOURCE_UNKNOWN` for an unknown transaction of the account;
/// 400 `PERIOD_INVALID` for an older entry without the PSU present.
pub async fn transaction_details(
    State(app): State<Arc<App>>,
    c: Consented<Account>,
    ApiPath((id, transaction_id)): ApiPath<(String, String)>,
) -> Result<Response, ApiError> {
    let owner = owner_of(c.owner().as_ref(), c.item(), &c.access)?;
    let today = app.clock.today();
    let unknown = || {
        ApiError::not_found(format!(
            "account {id} has no transaction {transaction_id:?}"
        ))
    };
    let tid = Uuid::parse_str(&transaction_id).map_err(|_| unknown())?;
    // The body depends on the account's data (the version), the day, the transaction and,
    // without the PSU present, the 90-day window; every access check above still ran.
    let window = (!c.psu_present).then(|| rules::unattended_earliest(today));
    let key = ReadKey::new(Read::TransactionDetails, c.item().id, c.version)
        .on(today)
        .one_entry(tid, window);
    let (account, psu_present) = (c.item(), c.psu_present);
    app.reads.answer(key, || {
        details_of(&app, account, owner, today, tid, psu_present, unknown)
    })
}

/// The body of [`transaction_details`] (built when the read cache has none).
fn details_of(
    app: &App,
    account: &Account,
    owner: &Customer,
    today: NaiveDate,
    tid: Uuid,
    psu_present: bool,
    unknown: impl Fn() -> ApiError,
) -> Result<TransactionDetailsResponse, ApiError> {
    let manual = manual_of(app, account)?;
    let booked =
        crate::sandbox::domain::books::Book::of(&app.store, account, owner, today).booked()?;
    let (mut item, booked_at) = match booked.iter().position(|e| e.id == tid) {
        Some(pos) => {
            let e = &booked[pos];
            let mut item = entry(account, e, true, &manual);
            if app.store.balance_override(account.id)?.is_none() {
                let after = booked[pos..]
                    .iter()
                    .fold(account.opening_balance, |b, x| b.saturating_add(x.amount));
                item.balance_after_transaction = Some(Balance {
                    balance_type: balance_type::INTERIM_BOOKED.into(),
                    balance_amount: Amount::from_minor(&account.currency, after),
                    reference_date: e.booking_date.map(|d| d.to_string()),
                });
            }
            (item, e.booking_date)
        }
        None => {
            let pending =
                crate::sandbox::domain::books::Book::of(&app.store, account, owner, today)
                    .pending()?;
            let e = pending.iter().find(|e| e.id == tid).ok_or_else(unknown)?;
            (entry(account, e, false, &manual), None)
        }
    };
    if !psu_present
        && let Some(d) = booked_at
        && d < rules::unattended_earliest(today)
    {
        return Err(ApiError::new(
            MessageCode::PeriodInvalid,
            format!(
                "transaction {tid} was booked on {d}, more than {} days ago: without \
                 PSU-IP-Address (PSU not present) only the last {} days can be read",
                rules::UNATTENDED_HISTORY_DAYS,
                rules::UNATTENDED_HISTORY_DAYS
            ),
        ));
    }
    item.transaction.entry_reference = Some(archive_reference(tid));
    let code = item
        .transaction
        .proprietary_bank_transaction_code
        .clone()
        .unwrap_or_else(|| "pending".into());
    let counterparty = item
        .transaction
        .creditor_name
        .clone()
        .or_else(|| item.transaction.debtor_name.clone())
        .unwrap_or_default();
    item.additional_information = Some(
        format!(
            "{} {counterparty} ({code})",
            if item.transaction.transaction_amount.amount.starts_with('-') {
                "Betaling til"
            } else {
                "Innbetaling fra"
            }
        )
        .chars()
        .take(500)
        .collect(),
    );
    Ok(TransactionDetailsResponse {
        transactions_details: TransactionDetailsBody {
            transaction_details: item,
        },
    })
}

/// The AIS routes added to the ones [`crate::sandbox::router`] lists itself: the transaction details.
pub fn routes() -> Router<Arc<App>> {
    Router::new().route(
        "/v1/accounts/{id}/transactions/{transaction_id}",
        get(transaction_details),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> QueryPairs {
        QueryPairs(
            url::form_urlencoded::parse(s.as_bytes())
                .into_owned()
                .collect(),
        )
    }

    #[test]
    fn query_parsing() {
        let d = TransactionQuery::parse(&q("")).unwrap();
        assert_eq!(d.booking_status, "both");
        assert_eq!((d.limit, d.offset), (200, 0));
        assert!(TransactionQuery::parse(&q("bookingStatus=nope")).is_err());
        assert_eq!(
            TransactionQuery::parse(&q("bookingStatus=ALL"))
                .unwrap()
                .booking_status,
            "all"
        );
        let e = TransactionQuery::parse(&q("dateFrom=2026-02-01&dateTo=2026-01-01")).unwrap_err();
        assert_eq!(e.body.first_code(), Some("PERIOD_INVALID"));
        for bad in [
            "dateFrom=2026-2-01",
            "dateFrom=2026-02-30",
            "limit=0",
            "limit=-1",
            "offset=x",
            "limit=99999",
        ] {
            let e = TransactionQuery::parse(&q(bad)).unwrap_err();
            assert_eq!(e.body.first_code(), Some("FORMAT_ERROR"), "{bad}");
        }
        let e = TransactionQuery::parse_card(&q("bookingStatus=all")).unwrap_err();
        assert_eq!(e.body.first_code(), Some("PARAMETER_NOT_SUPPORTED"));
        assert_eq!(
            TransactionQuery::parse_card(&q("bookingStatus=BOTH"))
                .unwrap()
                .booking_status,
            "both"
        );
    }

    /// The `Accept-Encoding` rule before it went by bytes (issue 23), the reference of
    /// [`accepts_gzip_by_bytes_decides_as_by_text`].
    fn accepts_gzip_by_text(headers: &HeaderMap) -> bool {
        headers
            .get_all(axum::http::header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|item| {
                let mut parts = item.split(';');
                let coding = parts.next().unwrap_or("").trim();
                let weight_zero = parts.any(|p| {
                    let p = p.trim();
                    p.strip_prefix("q=")
                        .or_else(|| p.strip_prefix("Q="))
                        .and_then(|q| q.trim().parse::<f32>().ok())
                        .is_some_and(|q| q <= 0.0)
                });
                !weight_zero
                    && (coding.eq_ignore_ascii_case("gzip")
                        || coding.eq_ignore_ascii_case("x-gzip")
                        || coding == "*")
            })
    }

    /// `accepts_gzip` decides every value (and set of values) as the text rule did: codings,
    /// case, spaces and tabs, weights (`q=0`, `Q=0.000`, `q= 0`, malformed), other
    /// parameters, empty items, values that are not visible ASCII.
    #[test]
    fn accepts_gzip_by_bytes_decides_as_by_text() {
        let values: &[&[u8]] = &[
            b"gzip",
            b"GZIP",
            b" gzip ",
            b"\tgzip\t",
            b"x-gzip",
            b"X-Gzip",
            b"*",
            b"*;q=0",
            b"gzip;q=0",
            b"gzip;Q=0.000",
            b"gzip; q=0",
            b"gzip;q= 0",
            b"gzip;q =0",
            b"gzip;q=0.001",
            b"gzip;q=1",
            b"gzip;q=x",
            b"gzip;q=",
            b"gzip;q=-1",
            b"gzip;level=1",
            b"gzip;level=1;q=0",
            b"gzip;q=0;q=1",
            b"br;q=1.0, gzip;q=0.8",
            b"br, deflate",
            b"identity",
            b"gzip, deflate, br, zstd",
            b"deflate,,gzip",
            b",",
            b"",
            b";q=1",
            b"gzipx",
            b"g zip",
            b"gzip\xc3\xa9",
            b"br, gzip \xff",
            b"gzip;q=0, gzip",
            b"gzip;q=0, *",
        ];
        let mut cases: Vec<Vec<&[u8]>> = vec![vec![]];
        cases.extend(values.iter().map(|v| vec![*v]));
        cases.push(vec![b"br", b"gzip"]);
        cases.push(vec![b"gzip;q=0", b"identity"]);
        cases.push(vec![b"gzip\xff", b"gzip"]);
        for values in cases {
            let mut headers = HeaderMap::new();
            for v in &values {
                headers.append(
                    axum::http::header::ACCEPT_ENCODING,
                    axum::http::HeaderValue::from_bytes(v).unwrap(),
                );
            }
            assert_eq!(
                accepts_gzip(&headers),
                accepts_gzip_by_text(&headers),
                "{values:?}"
            );
        }
        let one = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(
                axum::http::header::ACCEPT_ENCODING,
                axum::http::HeaderValue::from_static(v),
            );
            accepts_gzip(&h)
        };
        assert!(one("gzip") && one("br;q=1.0, gzip;q=0.8") && one("*"));
        assert!(!one("gzip;q=0") && !one("identity") && !one("br"));
    }

    #[test]
    fn paging_links() {
        let t = TransactionQuery::parse(&q("limit=200&offset=200")).unwrap();
        let l = t.links("/p", ("account", "/a".into()), 450);
        assert!(l["next"].href.ends_with("offset=400"));
        assert!(l["previous"].href.ends_with("offset=0"));
        assert!(l["last"].href.ends_with("offset=400"));
        let l = t.links("/p", ("account", "/a".into()), 400);
        assert!(!l.contains_key("next"));
        let p = TransactionQuery::parse(&q("bookingStatus=pending")).unwrap();
        assert_eq!(p.links("/p", ("account", "/a".into()), 0).len(), 1);
    }
}
