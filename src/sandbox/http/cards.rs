//! Card account information: `GET /v1/card-accounts`, `/v1/card-accounts/{id}`,
//! `.../balances`, `.../transactions` (interface document, Account data facts: "Balance type
//! interimBooked is returned for card accounts"; "Card transaction transactionAmount and
//! originalAmount have been switched to the correct mapping"; "Card acceptor information is
//! in card account transactions"; "Card account status is available in the card account
//! interface"; Versioning 2.16.0 and `cardaccount-switch-originalamount-and-transactionamount`.
//! Berlin Group schemas `cardAccountList`, `cardAccountDetails`,
//! `readCardAccountBalanceResponse-200`, `cardAccountsTransactionsResponse200`,
//! `cardAccountReport`, `cardTransaction`).
//!
//! Consent: card accounts are offered on the SCA consent page (PRIVATE context) as their own
//! checkboxes (`cardAccount`), next to the accounts; the ticked ones are stored in
//! `card_consents` under the consent's key (TPP, PSU-ID, agreement) and follow that consent:
//! the same 180 days, revocation and SCA-session rules ([`crate::sandbox::domain::access::resolve`]). A card
//! account of the PSU outside the consent answers 401 + `scaRedirect`; any other 403
//! `RESOURCE_UNKNOWN`.
//!
//! Amounts (`debitAccounting` false): `transactionAmount` is what is billed to the card
//! account, in its currency (NOK), negative for purchases; `originalAmount` is the amount in
//! the currency the card was used in, sent for purchases abroad together with
//! `currencyExchange` (the correct mapping, default since 2024-11-13).
//!
//! Transactions: `bookingStatus` `booked`, `pending`, `both` (default; any case); `dateFrom`
//! and `dateTo` filter booked entries by `bookingDate` and — unlike accounts, as the
//! interface document's Limits table notes for card accounts — pending entries by
//! `transactionDate`; `limit`/`offset` page the booked list (default 200). Without
//! `PSU-IP-Address` the account rules apply: 4 balance and 4 transaction calls per 24 h per
//! card account, 90 days back.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use chrono::NaiveDate;
use serde_json::Value;
use uuid::Uuid;

use crate::sandbox::App;
use crate::sandbox::domain::access::consented;
use crate::sandbox::domain::ledger::{self, Balances, CardEntry};
use crate::sandbox::domain::rules::{self, AccessKind};
use crate::sandbox::errors::ApiError;
use crate::sandbox::http::accounts::{
    AcceptsGzip, Consented, ConsentedList, Listing, TransactionQuery,
};
use crate::sandbox::http::reads::{Read, ReadKey};
use crate::sandbox::model::{CardAccount, Customer};
use crate::xs2a::model::{AccountReference, Amount, Balance, balance_type};
use crate::xs2a::wire::{
    CardAccountDetails, CardAccountList, CardAccountResponse, CardBalancesResponse, CardReport,
    CardTransactionsResponse,
};

fn card_path(id: &str) -> String {
    format!("/v1/card-accounts/{id}")
}

fn status_of(card: &CardAccount) -> String {
    match card.status.as_str() {
        s @ ("enabled" | "blocked" | "deleted") => s.to_string(),
        _ => "enabled".to_string(),
    }
}

/// The details of `card`.
///
/// Errors: the database fails (503).
pub fn details(app: &App, card: &CardAccount) -> Result<CardAccountDetails, ApiError> {
    let id = card.id.to_string();
    let links = crate::sandbox::http::accounts::resource_links(&card_path(&id));
    Ok(CardAccountDetails {
        resource_id: Some(id),
        masked_pan: card.masked_pan.clone(),
        currency: card.currency.clone(),
        owner_name: app.store.customer(card.owner)?.map(|c| c.name),
        name: Some(rules::account_name(&card.name)),
        product: Some(card.product.chars().take(35).collect()),
        status: Some(status_of(card)),
        usage: Some("PRIV".into()),
        credit_limit: Some(Amount::from_minor(
            &card.currency,
            ledger::CARD_CREDIT_LIMIT,
        )),
        links: Some(links),
    })
}

fn reference(card: &CardAccount) -> AccountReference {
    AccountReference {
        masked_pan: Some(card.masked_pan.clone()),
        currency: Some(card.currency.clone()),
        ..AccountReference::default()
    }
}

/// `GET /v1/card-accounts`: the consented card accounts (an empty list when the consent has
/// none: Berlin Group `OK_200_CardAccountList`).
///
/// Errors: 401 `ROLE_INVALID` without `PSP_AI`; those of [`ConsentedList`].
pub async fn list(State(app): State<Arc<App>>, list: ConsentedList) -> Result<Response, ApiError> {
    let ConsentedList { access, version } = list;
    let key = ReadKey::new(Read::CardList, Uuid::nil(), version).consent(&access, false);
    app.reads.answer(key, || {
        let cards = consented(&app.domain(), &access.key)?
            .into_iter()
            .filter_map(|id| app.store.card_account(id).transpose())
            .map(|c| details(&app, &c?))
            .collect::<Result<_, _>>()?;
        Ok(CardAccountList {
            card_accounts: cards,
        })
    })
}

/// `GET /v1/card-accounts/{id}`: `{"cardAccount": cardAccountDetails}`.
///
/// Errors: as [`list`]; 403 `RESOURCE_UNKNOWN`; 401 + `scaRedirect` outside the consent.
pub async fn one(
    State(app): State<Arc<App>>,
    c: Consented<CardAccount>,
) -> Result<Response, ApiError> {
    let card = c.item();
    let key = ReadKey::new(Read::Card, card.id, c.version);
    app.reads.answer(key, || {
        Ok(CardAccountResponse {
            card_account: details(&app, card)?,
        })
    })
}

/// `GET /v1/card-accounts/{id}/balances`: `interimBooked` (booked card usage, negative when
/// owed) and `interimAvailable` (credit limit left), both dated today and in the card
/// account's currency (interface document, version 2.16.0; Account data facts), with the
/// sandbox balance overrides and manual card transactions applied.
///
/// Errors: as [`one`]; 429 `ACCESS_EXCEEDED` without `PSU-IP-Address` after 4 calls a day.
pub async fn balances(
    State(app): State<Arc<App>>,
    c: Consented<CardAccount>,
) -> Result<Response, ApiError> {
    c.count_unattended(&app, AccessKind::CardBalances)?;
    let (card, owner, version) = (c.item(), c.owner(), c.version);
    let today = app.clock.today();
    let key = ReadKey::new(Read::CardBalances, card.id, version).on(today);
    app.reads.answer(key, || {
        let b = current_balances(&app, card, owner, today)?;
        Ok(CardBalancesResponse {
            card_account: reference(card),
            debit_accounting: false,
            balances: interim_balances(card, &b, today),
        })
    })
}

/// The balances of `card` (of `owner`) on `today`: the card ledger's
/// ([`ledger::card_balances`]) adjusted by the sandbox override and manual card transactions
/// ([`crate::sandbox::store::Store::card_balances`]); `closing_booked` is `interimBooked`, `expected`
/// `interimAvailable` (minor units of the card's currency).
///
/// Errors: storage (503).
pub fn current_balances(
    app: &App,
    card: &CardAccount,
    owner: &Customer,
    today: NaiveDate,
) -> Result<Balances, ApiError> {
    let base = ledger::card_balances(card, owner, today);
    Ok(crate::sandbox::domain::books::card_balances(
        &app.store,
        card.id,
        Balances {
            closing_booked: base.interim_booked,
            expected: base.interim_available,
        },
        today,
    )?)
}

/// `b` as the two Berlin Group `balance`s of a card account, `interimBooked` then
/// `interimAvailable`, in the card's currency and dated `today`.
pub fn interim_balances(card: &CardAccount, b: &Balances, today: NaiveDate) -> Vec<Balance> {
    let balance = |kind: &str, amount: i64| Balance {
        balance_type: kind.to_string(),
        balance_amount: Amount::from_minor(&card.currency, amount),
        reference_date: Some(today.to_string()),
    };
    vec![
        balance(balance_type::INTERIM_BOOKED, b.closing_booked),
        balance(balance_type::INTERIM_AVAILABLE, b.expected),
    ]
}

/// Berlin Group `cardTransactionId` is at most 35 characters: a UUID is sent without hyphens.
pub fn card_transaction_id(id: Uuid) -> String {
    id.simple().to_string()
}

fn rate_text(rate_e4: i64) -> String {
    format!("{}.{:04}", rate_e4 / 10_000, rate_e4 % 10_000)
}

/// The Berlin Group `cardTransaction` of a generated entry.
pub fn card_transaction(card: &CardAccount, e: &CardEntry, today: NaiveDate) -> Value {
    let mut v = serde_json::json!({
        "cardTransactionId": card_transaction_id(e.id),
        "transactionDate": e.transaction_date.to_string(),
        "acceptorTransactionDateTime": format!(
            "{}T{:02}:{:02}:00Z", e.transaction_date, e.time.0, e.time.1
        ),
        "transactionAmount": Amount::from_minor(&card.currency, e.amount),
        "maskedPAN": card.masked_pan,
        "transactionDetails": e.text,
        "proprietaryBankTransactionCode": e.code,
    });
    let Some(o) = v.as_object_mut() else {
        return v;
    };
    if let Some(d) = e.booking_date {
        o.insert("bookingDate".into(), d.to_string().into());
        o.insert("invoiced".into(), e.invoiced(today).into());
    }
    if let Some(orig) = &e.original {
        o.insert(
            "originalAmount".into(),
            serde_json::json!(Amount::from_minor(orig.currency, orig.amount)),
        );
        o.insert(
            "currencyExchange".into(),
            serde_json::json!([{
                "sourceCurrency": orig.currency,
                "exchangeRate": rate_text(orig.rate_e4),
                "unitCurrency": orig.currency,
                "targetCurrency": card.currency,
                "quotationDate": e.transaction_date.to_string(),
            }]),
        );
    }
    if let Some(a) = &e.acceptor {
        o.insert("terminalId".into(), a.terminal.clone().into());
        o.insert("cardAcceptorId".into(), a.id.clone().into());
        o.insert(
            "cardAcceptorAddress".into(),
            serde_json::json!({"townName": a.town, "country": a.country}),
        );
        o.insert("merchantCategoryCode".into(), a.mcc.into());
    }
    v
}

/// A manual card transaction's JSON with its id in the ≤ 35-character form.
fn manual_json(card: &CardAccount, m: &crate::sandbox::model::ManualCardTransaction) -> Value {
    let mut v = m.to_json(&card.currency, &card.masked_pan);
    if let Some(o) = v.as_object_mut() {
        o.insert("cardTransactionId".into(), card_transaction_id(m.id).into());
    }
    v
}

/// `GET /v1/card-accounts/{id}/transactions`: Berlin Group
/// `cardAccountsTransactionsResponse200` (see the module documentation). Generated entries
/// and the card's manual (sandbox-created) transactions, newest first; booked ones keep their
/// `cardTransactionId` across calls and clock moves.
///
/// Errors: the query errors of [`TransactionQuery::parse_card`]; as [`one`]; 400
/// `PERIOD_INVALID` / 429 `ACCESS_EXCEEDED` without `PSU-IP-Address`.
pub async fn transactions(
    State(app): State<Arc<App>>,
    c: Consented<CardAccount, Listing<true>>,
    AcceptsGzip(gzip): AcceptsGzip,
) -> Result<Response, ApiError> {
    let today = app.clock.today();
    let from = c.unattended_from(
        &app,
        today,
        c.query.parsed.date_from,
        AccessKind::CardTransactions,
    )?;
    let (card, owner, version, q) = (&c.resource.0, &c.resource.1, c.version, c.query.parsed);
    let key = ReadKey::new(Read::CardTransactions, card.id, version)
        .on(today)
        .query(&c.query.pairs, from);
    // Gzip for clients that accept it, as the account transaction pages (`accounts::Page`).
    app.reads.answer_encoded(key, gzip, || {
        card_report(&app, &q, card, owner, today, from)
    })
}

/// The body of [`transactions`] for query `q` of `card` at `today`, booked entries from
/// `from` (PSU not present) or `dateFrom`.
fn card_report(
    app: &App,
    q: &TransactionQuery,
    card: &CardAccount,
    owner: &Customer,
    today: NaiveDate,
    from: Option<NaiveDate>,
) -> Result<CardTransactionsResponse, ApiError> {
    let manual = app.store.manual_card_transactions(card.id)?;
    let mut report = CardReport::default();
    let mut total = 0;
    if q.wants_booked() {
        let mut all: Vec<(NaiveDate, Value)> = manual
            .iter()
            .filter(|m| m.booked)
            .filter_map(|m| {
                let d = m.booking_date.unwrap_or(m.transaction_date);
                q.in_period(Some(d), from)
                    .then(|| (d, manual_json(card, m)))
            })
            .collect();
        all.extend(
            ledger::card_booked(card, owner, today)
                .iter()
                .filter(|e| q.in_period(e.booking_date, from))
                .map(|e| {
                    (
                        e.booking_date.unwrap_or(e.transaction_date),
                        card_transaction(card, e, today),
                    )
                }),
        );
        all.sort_by_key(|(d, _)| std::cmp::Reverse(*d));
        total = all.len();
        report.booked = Some(
            all.into_iter()
                .skip(q.offset)
                .take(q.limit)
                .map(|(_, v)| v)
                .collect(),
        );
    }
    if q.wants_pending() {
        let mut pending: Vec<Value> = manual
            .iter()
            .filter(|m| !m.booked && q.in_period(Some(m.transaction_date), from))
            .map(|m| manual_json(card, m))
            .collect();
        pending.extend(
            ledger::card_pending(card, owner, today)
                .iter()
                .filter(|e| q.in_period(Some(e.transaction_date), from))
                .map(|e| card_transaction(card, e, today)),
        );
        report.pending = Some(pending);
    }
    let card_id = card.id.to_string();
    let path = format!("{}/transactions", card_path(&card_id));
    report.links = q.links(&path, ("cardAccount", card_path(&card_id)), total);
    Ok(CardTransactionsResponse {
        card_account: reference(card),
        debit_accounting: false,
        card_transactions: report,
    })
}

/// The card account routes (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/card-accounts", get(list))
        .route("/v1/card-accounts/{id}", get(one))
        .route("/v1/card-accounts/{id}/balances", get(balances))
        .route("/v1/card-accounts/{id}/transactions", get(transactions))
}
