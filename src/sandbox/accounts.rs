//! AIS handlers: `GET /v1/accounts`, `GET /v1/accounts/{id}`, `.../balances`,
//! `.../transactions` (interface document, Endpoints, "Other operations named"; Limits;
//! Account data facts. Shapes: [`crate::xs2a::model`]).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::NaiveDate;

use super::App;
use super::auth::Tpp;
use super::consent::{self, Access};
use super::errors::{ApiError, ApiPath, QueryPairs};
use super::ledger::{self, Entry};
use super::store::Account;
use crate::xs2a::error::MessageCode;
use crate::xs2a::links::{Link, Links, names};
use crate::xs2a::model::{
    AccountDetails, AccountDetailsResponse, AccountList, AccountReference, AccountReport, Amount,
    Balance, BalancesResponse, Transaction, TransactionsResponse, balance_type, booking_status,
};

/// Default (and link) page size of booked transactions (interface document, Limits).
pub const DEFAULT_PAGE_SIZE: usize = 200;

/// Largest `limit` accepted.
pub const MAX_PAGE_SIZE: usize = 5000;

fn account_path(id: &str) -> String {
    format!("/v1/accounts/{id}")
}

/// `accountDetails` of a seeded account, with `balances` and `transactions` links.
pub fn details(app: &App, a: &Account) -> AccountDetails {
    let id = a.id.to_string();
    let mut links = Links::new();
    links.insert(
        names::BALANCES.into(),
        Link::href(format!("{}/balances", account_path(&id))),
    );
    links.insert(
        names::TRANSACTIONS.into(),
        Link::href(format!("{}/transactions", account_path(&id))),
    );
    AccountDetails {
        resource_id: Some(id),
        iban: None,
        bban: Some(a.bban.clone()),
        currency: a.currency.clone(),
        name: Some(a.name.clone()),
        product: Some(a.product.clone()),
        cash_account_type: Some(a.cash_account_type.clone()),
        status: Some("enabled".into()),
        owner_name: app.store.customer(a.owner).map(|c| c.name),
        links: Some(links),
    }
}

fn reference(a: &Account) -> AccountReference {
    AccountReference {
        bban: Some(a.bban.clone()),
        currency: Some(a.currency.clone()),
        ..AccountReference::default()
    }
}

/// `GET /v1/accounts`: `{"accounts":[accountDetails...]}` of the consented accounts; 401
/// with `scaRedirect` without consent.
pub async fn list(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    headers: HeaderMap,
) -> Result<Json<AccountList>, ApiError> {
    let access = consent::resolve(&app, &tpp, &headers)?;
    let accounts = app
        .store
        .accounts_by_ids(&access.consent.accounts)
        .iter()
        .map(|a| details(&app, a))
        .collect();
    Ok(Json(AccountList { accounts }))
}

fn account_of(
    app: &App,
    tpp: &Tpp,
    headers: &HeaderMap,
    id: &str,
) -> Result<(Access, Account), ApiError> {
    let access = consent::resolve(app, tpp, headers)?;
    let account = consent::consented_account(app, tpp, headers, &access, id)?;
    Ok((access, account))
}

/// `GET /v1/accounts/{id}`: `{"account": accountDetails}`.
pub async fn one(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    headers: HeaderMap,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<AccountDetailsResponse>, ApiError> {
    let (_, account) = account_of(&app, &tpp, &headers, &id)?;
    Ok(Json(AccountDetailsResponse {
        account: details(&app, &account),
    }))
}

/// `GET /v1/accounts/{id}/balances`: `closingBooked` (yesterday), `expected` and
/// `interimAvailable` (today), all in the account currency.
pub async fn balances(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    headers: HeaderMap,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<BalancesResponse>, ApiError> {
    let (access, account) = account_of(&app, &tpp, &headers, &id)?;
    let owner = owner_of(&app, &account, &access)?;
    let today = app.clock.today();
    let yesterday = today.pred_opt().unwrap_or(today);
    let b = ledger::balances(&account, &owner, today);
    let balance = |kind: &str, amount: i64, date: NaiveDate| Balance {
        balance_type: kind.to_string(),
        balance_amount: Amount::from_minor(&account.currency, amount),
        reference_date: Some(date.to_string()),
    };
    Ok(Json(BalancesResponse {
        account: Some(reference(&account)),
        balances: vec![
            balance(balance_type::CLOSING_BOOKED, b.closing_booked, yesterday),
            balance(balance_type::EXPECTED, b.expected, today),
            balance(balance_type::INTERIM_AVAILABLE, b.expected, today),
        ],
    }))
}

fn owner_of(
    app: &App,
    account: &Account,
    access: &Access,
) -> Result<super::store::Customer, ApiError> {
    app.store.customer(account.owner).ok_or_else(|| {
        ApiError::forbidden_unknown(format!(
            "account {} has no owner in this sandbox (PSU {})",
            account.id, access.key.psu_id
        ))
    })
}

/// Parsed query of the transactions request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionQuery {
    pub booking_status: &'static str,
    pub date_from: Option<NaiveDate>,
    pub date_to: Option<NaiveDate>,
    pub limit: usize,
    pub offset: usize,
}

fn parse_date(q: &QueryPairs, name: &str) -> Result<Option<NaiveDate>, ApiError> {
    match q.get(name) {
        None => Ok(None),
        Some(v) => {
            let ok = v.len() == 10
                && v.bytes().enumerate().all(|(i, b)| {
                    if i == 4 || i == 7 {
                        b == b'-'
                    } else {
                        b.is_ascii_digit()
                    }
                });
            ok.then(|| NaiveDate::parse_from_str(v, "%Y-%m-%d").ok())
                .flatten()
                .map(Some)
                .ok_or_else(|| {
                    ApiError::format(format!(
                        "query parameter {name}={v:?} is not an ISO 8601 date (YYYY-MM-DD)"
                    ))
                })
        }
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
    /// Parses `bookingStatus` (default `both`), `dateFrom`, `dateTo`, `limit` (1..=5000,
    /// default 200), `offset` (default 0). Other parameters are ignored.
    pub fn parse(q: &QueryPairs) -> Result<Self, ApiError> {
        let booking_status = match q.get("bookingStatus") {
            None => booking_status::BOTH,
            Some(booking_status::BOOKED) => booking_status::BOOKED,
            Some(booking_status::PENDING) => booking_status::PENDING,
            Some(booking_status::BOTH) => booking_status::BOTH,
            Some(booking_status::ALL) => booking_status::ALL,
            Some(booking_status::INFORMATION) => {
                return Err(ApiError::new(
                    MessageCode::ParameterNotSupported,
                    "bookingStatus=information is not supported by this ASPSP",
                ));
            }
            Some(other) => {
                return Err(ApiError::format(format!(
                    "bookingStatus={other:?} is not one of booked, pending, both, all"
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

    fn wants_booked(&self) -> bool {
        self.booking_status != booking_status::PENDING
    }

    fn wants_pending(&self) -> bool {
        self.booking_status != booking_status::BOOKED
    }

    /// The transactions path with this query at `offset`.
    fn href(&self, account: &str, offset: usize) -> String {
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
        format!("{}/transactions?{}", account_path(account), s.finish())
    }

    /// `_links` of the report: `account`, and `first`, `last`, `next`, `previous` as
    /// applicable for `total` booked entries.
    fn links(&self, account: &str, total: usize) -> Links {
        let mut links = Links::new();
        links.insert(names::ACCOUNT.into(), Link::href(account_path(account)));
        if !self.wants_booked() {
            return links;
        }
        let last = if total == 0 {
            0
        } else {
            (total - 1) / self.limit * self.limit
        };
        links.insert(names::FIRST.into(), Link::href(self.href(account, 0)));
        links.insert(names::LAST.into(), Link::href(self.href(account, last)));
        if self.offset.saturating_add(self.limit) < total {
            links.insert(
                names::NEXT.into(),
                Link::href(self.href(account, self.offset + self.limit)),
            );
        }
        if self.offset > 0 {
            let prev = self.offset.saturating_sub(self.limit).min(last);
            links.insert(names::PREVIOUS.into(), Link::href(self.href(account, prev)));
        }
        links
    }
}

fn transaction(currency: &str, e: &Entry, booked: bool) -> Transaction {
    let (creditor_name, debtor_name) = if e.amount < 0 {
        (Some(e.counterparty.clone()), None)
    } else {
        (None, Some(e.counterparty.clone()))
    };
    Transaction {
        transaction_id: Some(e.id.to_string()),
        entry_reference: None,
        booking_date: e.booking_date.map(|d| d.to_string()),
        value_date: Some(e.value_date.to_string()),
        transaction_amount: Amount::from_minor(currency, e.amount),
        creditor_name,
        creditor_account: None,
        debtor_name,
        debtor_account: None,
        remittance_information_unstructured: Some(e.text.clone()),
        proprietary_bank_transaction_code: booked.then(|| e.code.to_string()),
    }
}

/// `GET /v1/accounts/{id}/transactions`: Berlin Group `transactionsResponse-200_json`.
/// Booked entries (newest first) are filtered by `dateFrom`/`dateTo` on bookingDate and paged
/// by `offset`/`limit`; pending entries are always all returned (interface document, Limits).
pub async fn transactions(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    headers: HeaderMap,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<Json<TransactionsResponse>, ApiError> {
    let q = TransactionQuery::parse(&query)?;
    let (access, account) = account_of(&app, &tpp, &headers, &id)?;
    let owner = owner_of(&app, &account, &access)?;
    let today = app.clock.today();
    let account_id = account.id.to_string();
    let mut report = AccountReport::default();
    let mut total = 0;
    if q.wants_booked() {
        let all: Vec<Entry> = ledger::booked(&account, &owner, today)
            .into_iter()
            .filter(|e| match (e.booking_date, q.date_from) {
                (Some(d), Some(f)) => d >= f,
                _ => true,
            })
            .filter(|e| match (e.booking_date, q.date_to) {
                (Some(d), Some(t)) => d <= t,
                _ => true,
            })
            .collect();
        total = all.len();
        report.booked = Some(
            all.iter()
                .skip(q.offset)
                .take(q.limit)
                .map(|e| transaction(&account.currency, e, true))
                .collect(),
        );
    }
    if q.wants_pending() {
        report.pending = Some(
            ledger::pending(&account, &owner, today)
                .iter()
                .map(|e| transaction(&account.currency, e, false))
                .collect(),
        );
    }
    report.links = q.links(&account_id, total);
    Ok(Json(TransactionsResponse {
        account: Some(reference(&account)),
        transactions: report,
    }))
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
    }

    #[test]
    fn paging_links() {
        let t = TransactionQuery::parse(&q("limit=200&offset=200")).unwrap();
        let l = t.links("a", 450);
        assert!(l["next"].href.ends_with("offset=400"));
        assert!(l["previous"].href.ends_with("offset=0"));
        assert!(l["last"].href.ends_with("offset=400"));
        let l = t.links("a", 400);
        assert!(!l.contains_key("next"));
        let p = TransactionQuery::parse(&q("bookingStatus=pending")).unwrap();
        assert_eq!(p.links("a", 0).len(), 1);
    }
}
