//! Sandbox management: the signed `/v1/sandbox/...` operations a tester uses to shape the
//! sandbox's data (interface document, Endpoints, "Other operations named": `POST
//! /v1/sandbox/customers`, `POST /v1/sandbox/accounts/{mockAccountId}/transactions`, sandbox
//! initialization, "Sandbox balance-update operations for accounts and card accounts").
//!
//! The interface document names these operations but shows neither paths (initialization,
//! balance updates, agreements) nor bodies; the shapes below are this sandbox's, built from
//! Berlin Group field names (`transactionAmount`, `creditorAccount`, `bookingStatus`,
//! `amount`, `accountReference`, `cardTransaction`) where one fits. Like a real ASPSP
//! sandbox they validate every body and answer Berlin Group error bodies:
//!
//! * body not JSON, not an object, a field of the wrong type, missing, too long, or an
//!   unknown field → 400 `FORMAT_ERROR` naming the field (also in `tppMessages[].path`);
//! * an unknown id in the body → 400 `RESOURCE_UNKNOWN`; an unknown id in the path → 404
//!   `RESOURCE_UNKNOWN`;
//! * fields that contradict each other or the addressed resource (another account as the
//!   debtor, a currency other than the account's) → 400 `PARAMETER_NOT_CONSISTENT`.
//!
//! Every change runs in one database transaction of the domain ([`crate::sandbox::domain::manage`]),
//! which also holds the limits and readers of the bodies.
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | POST | `/v1/sandbox/initialize` | 200 `{customers, accounts, cardAccounts, agreements}` (counts) |
//! | POST | `/v1/sandbox/customers` | 201 sandbox customer element |
//! | DELETE | `/v1/sandbox/customers/{customerId}` | 204 |
//! | GET, POST | `/v1/sandbox/customers/{customerId}/agreements` | 200 array / 201 agreement element |
//! | GET, DELETE | `/v1/sandbox/customers/{customerId}/agreements/{agreementId}` | 200 agreement element / 204 |
//! | GET | `/v1/sandbox/customers/{customerId}/agreements/{agreementId}/engagements` | 200 `{engagements: [accountDetails]}` |
//! | POST | `/v1/sandbox/accounts` | 201 `{account: accountDetails}` |
//! | POST | `/v1/sandbox/accounts/{mockAccountId}/transactions` | 201 Berlin Group `transactions` element |
//! | PUT, POST | `/v1/sandbox/accounts/{mockAccountId}/balances` | 200 `readAccountBalanceResponse-200` |
//! | POST | `/v1/sandbox/card-accounts` | 201 `{cardAccount: cardAccountDetails}` |
//! | POST | `/v1/sandbox/card-accounts/{id}/transactions` | 201 Berlin Group `cardTransaction` |
//! | PUT, POST | `/v1/sandbox/card-accounts/{id}/balances` | 200 `{cardAccount, balances}` |

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::NaiveDate;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::sandbox::App;
use crate::sandbox::http::accounts::resource_links;
use crate::sandbox::http::auth::Tpp;

use crate::sandbox::domain::ledger::Balances;
use crate::sandbox::domain::manage::{
    self, MAX_ACCOUNTS_PER_REQUEST, MAX_NAME_CHARS, MAX_REMITTANCE_CHARS, NewCard, NewCustomer,
    account_spec, cut, field_error, inconsistent, is_bban, parse_body, path_uuid, unknown_in_body,
};
use crate::sandbox::domain::seed;
use crate::sandbox::domain::views::{self, agreement_path, customer_path};
use crate::sandbox::errors::{ApiError, ApiPath};
use crate::sandbox::model::{
    Account, Agreement, CardAccount, Customer, ManualCardTransaction, ManualTransaction,
};
use crate::sandbox::store;
use crate::xs2a::error::MessageCode;
use crate::xs2a::fields::{Fields, json_type};
use crate::xs2a::links::{Link, Links};
use crate::xs2a::model::{
    AccountDetails, AccountReference, Amount, Balance, BalancesResponse, CardAccountDetails,
    CustomerType, SandboxAgreement, balance_type,
};

const VERBS_GET: &[&str] = &["GET"];

/// The management routes (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/sandbox/initialize", post(initialize))
        .route("/v1/sandbox/customers", post(create_customer))
        .route(
            "/v1/sandbox/customers/{id}",
            axum::routing::delete(delete_customer),
        )
        .route(
            "/v1/sandbox/customers/{id}/agreements",
            get(list_agreements).post(create_agreement),
        )
        .route(
            "/v1/sandbox/customers/{id}/agreements/{agreement}",
            get(get_agreement).delete(delete_agreement),
        )
        .route(
            "/v1/sandbox/customers/{id}/agreements/{agreement}/engagements",
            get(get_engagements),
        )
        .route("/v1/sandbox/accounts", post(create_account))
        .route(
            "/v1/sandbox/accounts/{id}/transactions",
            post(create_transaction),
        )
        .route(
            "/v1/sandbox/accounts/{id}/balances",
            post(set_balances).put(set_balances),
        )
        .route("/v1/sandbox/card-accounts", post(create_card_account))
        .route(
            "/v1/sandbox/card-accounts/{id}/transactions",
            post(create_card_transaction),
        )
        .route(
            "/v1/sandbox/card-accounts/{id}/balances",
            post(set_card_balances).put(set_card_balances),
        )
}

// ---------------------------------------------------------------------------------------
// Paths and elements

/// Berlin Group `accountDetails` of an account, as `GET /v1/accounts/{id}` shows it.
fn account_details(app: &App, a: &Account) -> Result<AccountDetails, ApiError> {
    let links = resource_links(&format!("/v1/accounts/{}", a.id));
    Ok(AccountDetails {
        resource_id: Some(a.id.to_string()),
        iban: None,
        bban: Some(a.bban.clone()),
        currency: a.currency.clone(),
        name: Some(a.name.clone()),
        product: Some(a.product.clone()),
        cash_account_type: Some(a.cash_account_type.clone()),
        status: Some("enabled".into()),
        owner_name: app.store.customer(a.owner)?.map(|c| c.name),
        links: Some(links),
    })
}

/// Berlin Group `cardAccountDetails` of a card account.
fn card_details(app: &App, c: &CardAccount) -> Result<CardAccountDetails, ApiError> {
    let links = resource_links(&format!("/v1/card-accounts/{}", c.id));
    Ok(CardAccountDetails {
        resource_id: Some(c.id.to_string()),
        masked_pan: c.masked_pan.clone(),
        currency: c.currency.clone(),
        owner_name: app.store.customer(c.owner)?.map(|x| x.name),
        name: Some(c.name.clone()),
        product: Some(c.product.clone()),
        status: Some(c.status.clone()),
        usage: None,
        credit_limit: None,
        links: Some(links),
    })
}

fn created(location: &str, body: impl serde::Serialize) -> Response {
    let mut r = (StatusCode::CREATED, Json(body)).into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

// ---------------------------------------------------------------------------------------
// Initialize

/// `POST /v1/sandbox/initialize[?scope=all]` (interface document, Endpoints: "sandbox
/// initialization (path not shown): Resets the sandbox to a known state"). Body ignored.
/// 200 `{"customers": 5, "accounts": 10, "cardAccounts": 3, "agreements": 2}` (the seed's
/// counts).
///
/// - From the TPP plane it resets the calling TPP's world (issue 20): in one transaction the
///   customers it created (with their accounts, transactions, balances, agreements), its
///   consents, PSU registrations, authorisations, payments, baskets and fault rules, and its
///   clock offset ([`store::tenancy::reset`]). Other TPPs' worlds and the seeded customers
///   stay as they are.
/// - `?scope=all` on the operator plane ([`crate::sandbox::http::operator`]) resets the whole sandbox:
///   every table of every module is emptied and the seed ([`crate::sandbox::domain::seed`], or the `--seed`
///   file's, [`crate::sandbox::domain::seed_file`]) inserted again
///   with its fixed ids; every clock is back at real time.
///
/// Errors: 403 `SERVICE_BLOCKED` for `scope=all` off the operator plane; 503
/// `SERVICE_BLOCKED` when the database fails (nothing changed).
pub async fn initialize(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    parts: axum::http::request::Parts,
) -> Result<Json<Value>, ApiError> {
    let s = if crate::sandbox::http::operator::wants_all(&parts) {
        if !crate::sandbox::http::operator::is_operator(&app, &parts.extensions, &parts.headers) {
            return Err(crate::sandbox::http::operator::refused(
                "the reset of the whole sandbox (scope=all)",
            ));
        }
        let s = app.store.initialize(&app.seed)?;
        app.clock.set_offset(std::time::Duration::ZERO);
        app.clock.clear_worlds();
        // Every TPP's X-Request-IDs are forgotten too (`crate::sandbox::http::replay`).
        if let Some(guard) = &app.replay {
            guard.clear();
        }
        s
    } else {
        manage::reset_world(&app.db, &tpp.id)?;
        app.clock
            .set_world_offset(&tpp.id.0, std::time::Duration::ZERO);
        // The caller's X-Request-IDs are forgotten too (issue 20, finding 5; `crate::sandbox::http::replay`).
        if let Some(guard) = &app.replay {
            guard.forget_tpp(&tpp.id);
        }
        let seed = &app.seed;
        store::InitializeSummary {
            customers: seed.customers.len(),
            accounts: seed.accounts.len(),
            card_accounts: seed.card_accounts.len(),
            agreements: seed.agreements.len(),
        }
    };
    // The fault rules' table changed: read their mirror again.
    app.faults.reload(&app.db);
    app.events.emit(Some(&tpp.id.0), || {
        crate::sandbox::domain::events::clock_event(app.clock.now(), 0, "initialize")
    });
    Ok(Json(json!({
        "customers": s.customers,
        "accounts": s.accounts,
        "cardAccounts": s.card_accounts,
        "agreements": s.agreements,
    })))
}

// ---------------------------------------------------------------------------------------
// Customers

const CUSTOMER_FIELDS: [&str; 5] = [
    "customerType",
    "customerName",
    "customerNumber",
    "accounts",
    "cardAccounts",
];

const ACCOUNT_SPEC_FIELDS: [&str; 5] =
    ["name", "cashAccountType", "currency", "product", "balance"];

const CARD_SPEC_FIELDS: [&str; 3] = ["name", "currency", "product"];

/// `POST /v1/sandbox/customers` (interface document, Endpoints: "Creates sandbox
/// customers"; fields of Resources, "Sandbox customer"). Body:
///
/// ```json
/// { "customerType": "PRIVATE",            // required: PRIVATE or CORPORATE
///   "customerName": "Per Hansen",         // required, 1..=70 characters
///   "customerNumber": "01010012356",      // optional: 11 digits (PRIVATE, a mock national
///                                         // id) or 9 digits (CORPORATE, an organisation
///                                         // number); unique; generated when absent
///   "accounts": [ { "name": "Brukskonto", "cashAccountType": "CACC", "currency": "NOK",
///                   "product": "Brukskonto", "balance": {"currency": "NOK", "amount": "1000.00"} } ],
///   "cardAccounts": [ { "name": "Mastercard", "currency": "NOK", "product": "Kredittkort" } ] }
/// ```
///
/// Without `accounts` the customer gets the seed's default accounts (two each: PRIVATE a
/// current and a savings account, CORPORATE an operating and a settlement account) with a
/// generated transaction history; accounts given explicitly start empty with their
/// `balance` (default 0.00), and are filled with `POST /v1/sandbox/accounts/{id}/transactions`.
/// Without `cardAccounts` a PRIVATE customer gets one card account, a CORPORATE none;
/// `[]` gives none. Answers 201 with the customer's listing element (accounts and agreements
/// included) and `Location` = its `self` link.
///
/// Errors: 400 `FORMAT_ERROR` naming the field; 400 `FORMAT_ERROR` when the customerNumber
/// is taken.
pub async fn create_customer(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    body: Bytes,
) -> Result<Response, ApiError> {
    let value = parse_body(&body, "customerType, customerName")?;
    let f = Fields::of(&value, "", &CUSTOMER_FIELDS)?;
    let kind = match f.opt_str("customerType", 20)?.as_deref() {
        Some("PRIVATE") => CustomerType::Private,
        Some("CORPORATE") => CustomerType::Corporate,
        Some(other) => {
            return Err(field_error(
                "customerType",
                format!("customerType {other:?} is not PRIVATE or CORPORATE"),
            ));
        }
        None => return Err(f.missing("customerType", "PRIVATE or CORPORATE").into()),
    };
    let name = f.req_str(
        "customerName",
        MAX_NAME_CHARS,
        "the customer's name (at most 70 characters)",
    )?;
    let digits = match kind {
        CustomerType::Private => 11,
        CustomerType::Corporate => 9,
    };
    let number = match f.opt_str("customerNumber", 40)? {
        Some(n) if n.len() == digits && n.bytes().all(|b| b.is_ascii_digit()) => Some(n),
        Some(n) => {
            return Err(field_error(
                "customerNumber",
                format!(
                    "customerNumber {n:?} must be {digits} digits for a {} customer ({})",
                    kind.as_str(),
                    match kind {
                        CustomerType::Private => "a mock national identity number",
                        CustomerType::Corporate => "an organisation number",
                    }
                ),
            ));
        }
        None => None,
    };
    let accounts = each_object(&f, "accounts", &ACCOUNT_SPEC_FIELDS, account_spec)?;
    let cards = each_object(&f, "cardAccounts", &CARD_SPEC_FIELDS, |c| {
        Ok((
            c.req_str(
                "name",
                MAX_NAME_CHARS,
                "the card account name (at most 70 characters)",
            )?,
            c.opt_currency("currency")?
                .unwrap_or_else(|| seed::CURRENCY.to_string()),
            c.opt_str("product", MAX_NAME_CHARS)?,
        ))
    })?;
    let customer = manage::create_customer(
        &app.db,
        &tpp.id,
        NewCustomer {
            number,
            kind,
            name,
            accounts,
            cards,
        },
    )?;
    let element = views::element(&app.domain(), &customer, true, true)?;
    Ok(created(&customer_path(customer.id), element))
}

/// Each object of the optional array `name` of `f` (at most
/// [`MAX_ACCOUNTS_PER_REQUEST`]), read by `read` as the fields `accepted` under the path
/// `name[i]`; `None` when the array is absent.
///
/// Errors: 400 `FORMAT_ERROR` naming the array or the element's field.
fn each_object<T>(
    f: &Fields<'_>,
    name: &str,
    accepted: &[&str],
    read: impl Fn(&Fields<'_>) -> Result<T, ApiError>,
) -> Result<Option<Vec<T>>, ApiError> {
    let Some(items) = f.opt_array(name, MAX_ACCOUNTS_PER_REQUEST)? else {
        return Ok(None);
    };
    let each = items
        .iter()
        .enumerate()
        .map(|(i, v)| read(&Fields::of(v, &format!("{name}[{i}]"), accepted)?));
    each.collect::<Result<Vec<_>, _>>().map(Some)
}

/// `DELETE /v1/sandbox/customers/{customerId}`: deletes the customer with its accounts, card
/// accounts, agreements (either side), consents, PSU registrations and manual data, in one
/// transaction ([`store::Store::delete_customer`]). 204, no body. Only a customer the
/// calling TPP created (issue 20).
///
/// Errors: 404 `RESOURCE_UNKNOWN` for an unknown id or another TPP's customer; 403
/// `SERVICE_BLOCKED` for a seeded customer (in every TPP's world).
pub async fn delete_customer(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    let uuid = path_uuid(&id, "sandbox customer")?;
    let key = uuid.to_string();
    let owner = app.db.read(|c| store::tenancy::owner(c, &key))?;
    match owner {
        Some(o) if *o != *tpp.id.0 => {
            return Err(ApiError::not_found(format!("no sandbox customer {id:?}")));
        }
        None if app.store.customer(uuid)?.is_some() => {
            return Err(ApiError::new(
                MessageCode::ServiceBlocked,
                format!(
                    "sandbox customer {id:?} is one of the seeded customers, which are in every \
                     TPP's world: a TPP deletes only the customers it created"
                ),
            ));
        }
        _ => {}
    }
    if app.store.delete_customer(uuid)? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("no sandbox customer {id:?}")))
    }
}

fn path_customer(app: &App, id: &str) -> Result<Customer, ApiError> {
    match path_uuid(id, "sandbox customer") {
        Ok(u) => app.store.customer(u)?,
        Err(_) => None,
    }
    .ok_or_else(|| ApiError::not_found(format!("no sandbox customer {id:?}")))
}

// ---------------------------------------------------------------------------------------
// Agreements

const AGREEMENT_FIELDS: [&str; 4] = [
    "holderCustomerId",
    "holderCustomerNumber",
    "name",
    "accounts",
];

/// `POST /v1/sandbox/customers/{customerId}/agreements`: the CORPORATE customer
/// `customerId` grants a PRIVATE customer access to its accounts in CORPORATE context
/// (interface document: "A PSU acts either in a PRIVATE context (own accounts) or a
/// CORPORATE context (only accounts granted to it under a corporate agreement)"). Body:
///
/// ```json
/// { "holderCustomerId": "<uuid>",          // or "holderCustomerNumber": "31125461118"
///   "name": "Fullmakt regnskap",           // optional, 1..=70 characters
///   "accounts": ["<account resourceId>"] } // optional: the engagements; default all the
///                                          // corporate customer's accounts
/// ```
///
/// Answers 201 with the agreement element (`id`, `name`, `engagements`, `_links`); the
/// agreement appears in both customers' listing elements and at the holder's SCA context
/// choice; its id is the `psu-corporate-id`.
///
/// Errors: 404 `RESOURCE_UNKNOWN` (unknown path customer); 400 `RESOURCE_UNKNOWN` (unknown
/// holder or account); 400 `PARAMETER_NOT_CONSISTENT` (path customer not CORPORATE, holder
/// not PRIVATE, an account not the corporate customer's, or the holder already holds an
/// agreement for this customer); 400 `FORMAT_ERROR` (body).
pub async fn create_agreement(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    ApiPath(id): ApiPath<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let corporate = path_customer(&app, &id)?;
    let value = parse_body(&body, "holderCustomerId or holderCustomerNumber")?;
    let f = Fields::of(&value, "", &AGREEMENT_FIELDS)?;
    if corporate.kind != CustomerType::Corporate {
        return Err(inconsistent(
            "customerId",
            format!(
                "{} is a PRIVATE customer; agreements are granted by a CORPORATE customer to a \
                 private one (post to the corporate customer's agreements)",
                corporate.name
            ),
        ));
    }
    let holder =
        match (
            f.opt_uuid("holderCustomerId")?,
            f.opt_str("holderCustomerNumber", 40)?,
        ) {
            (Some(h), None) => app.store.customer(h)?.ok_or_else(|| {
                unknown_in_body(
                    "holderCustomerId",
                    format!("holderCustomerId {h} is not a sandbox customer"),
                )
            })?,
            (None, Some(n)) => app.store.customer_by_number(&n)?.ok_or_else(|| {
                unknown_in_body(
                    "holderCustomerNumber",
                    format!("holderCustomerNumber {n} is not a sandbox customer's number"),
                )
            })?,
            (None, None) => {
                return Err(f.missing(
                "holderCustomerId",
                "the PRIVATE customer who may act for the company (or holderCustomerNumber)",
            ).into());
            }
            (Some(_), Some(_)) => {
                return Err(field_error(
                    "holderCustomerId",
                    "give either holderCustomerId or holderCustomerNumber, not both",
                ));
            }
        };
    if holder.kind != CustomerType::Private {
        return Err(inconsistent(
            "holderCustomerId",
            format!(
                "{} is a CORPORATE customer; an agreement is held by a PRIVATE customer (a \
                 person who logs in at SCA and chooses the corporate context)",
                holder.name
            ),
        ));
    }
    let own = app.store.account_ids_of(corporate.id)?;
    let accounts = match f.opt_array("accounts", 1000)? {
        None => own.clone(),
        Some(items) => {
            let mut v = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let p = format!("accounts[{i}]");
                let Some(s) = item.as_str() else {
                    return Err(field_error(
                        &p,
                        format!(
                            "{p} must be an account resourceId string, not {}",
                            json_type(item)
                        ),
                    ));
                };
                let Ok(u) = Uuid::parse_str(s.trim()) else {
                    return Err(field_error(
                        &p,
                        format!("{p} {s:?} is not a resourceId (UUID)"),
                    ));
                };
                if !own.contains(&u) {
                    return Err(match app.store.account(u)? {
                        None => unknown_in_body(&p, format!("{p} {u} is not a sandbox account")),
                        Some(_) => inconsistent(
                            &p,
                            format!("{p} {u} is not an account of {}", corporate.name),
                        ),
                    });
                }
                if !v.contains(&u) {
                    v.push(u);
                }
            }
            v
        }
    };
    if accounts.is_empty() {
        return Err(inconsistent(
            "accounts",
            format!("{} has no accounts to grant", corporate.name),
        ));
    }
    let name = match f.opt_str("name", MAX_NAME_CHARS)? {
        Some(n) => n,
        None => cut(
            &format!("{} – fullmakt for {}", corporate.name, holder.name),
            MAX_NAME_CHARS,
        ),
    };
    let agreement = manage::create_agreement(&app.db, &corporate, &holder, name, accounts)?;
    Ok(created(
        &agreement_path(&agreement),
        views::sandbox_agreement_element(&agreement),
    ))
}

/// `GET /v1/sandbox/customers/{customerId}/agreements`: 200 with the agreement elements
/// where the customer is holder or corporate party.
///
/// Errors: 404 `RESOURCE_UNKNOWN` (unknown customer).
pub async fn list_agreements(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Vec<SandboxAgreement>>, ApiError> {
    let c = path_customer(&app, &id)?;
    Ok(Json(
        app.store
            .agreements_of(c.id)?
            .iter()
            .map(views::sandbox_agreement_element)
            .collect(),
    ))
}

fn path_agreement(app: &App, id: &str, agreement: &str) -> Result<Agreement, ApiError> {
    let c = path_customer(app, id)?;
    match Uuid::parse_str(agreement) {
        Ok(a) => app.store.agreement(a)?,
        Err(_) => None,
    }
    .filter(|a| a.corporate == c.id || a.holder == c.id)
    .ok_or_else(|| ApiError::not_found(format!("customer {id} has no agreement {agreement:?}")))
}

/// `GET /v1/sandbox/customers/{customerId}/agreements/{agreementId}` (the agreement
/// element's `_links.self`; either party's id works): 200 with the agreement element.
///
/// Errors: 404 `RESOURCE_UNKNOWN`.
pub async fn get_agreement(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    ApiPath((id, agreement)): ApiPath<(String, String)>,
) -> Result<Json<SandboxAgreement>, ApiError> {
    Ok(Json(views::sandbox_agreement_element(&path_agreement(
        &app, &id, &agreement,
    )?)))
}

/// `GET .../agreements/{agreementId}/engagements` (the element's `_links.engagements`): 200
/// `{"engagements": [accountDetails...], "_links": {"agreement": {href, verbs}}}`, the
/// accounts the agreement covers.
///
/// Errors: 404 `RESOURCE_UNKNOWN`.
pub async fn get_engagements(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    ApiPath((id, agreement)): ApiPath<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let a = path_agreement(&app, &id, &agreement)?;
    let engagements: Vec<AccountDetails> = app
        .store
        .accounts_by_ids(&a.accounts)?
        .iter()
        .map(|x| account_details(&app, x))
        .collect::<Result<_, _>>()?;
    let mut links = Links::new();
    links.insert(
        "agreement".into(),
        Link::with_verbs(agreement_path(&a), VERBS_GET),
    );
    Ok(Json(json!({ "engagements": engagements, "_links": links })))
}

/// `DELETE /v1/sandbox/customers/{customerId}/agreements/{agreementId}`: deletes the
/// agreement and the consents given under it. 204.
///
/// Errors: 404 `RESOURCE_UNKNOWN`.
pub async fn delete_agreement(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    ApiPath((id, agreement)): ApiPath<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let a = path_agreement(&app, &id, &agreement)?;
    if app.store.delete_agreement(a.id)? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("no agreement {agreement:?}")))
    }
}

// ---------------------------------------------------------------------------------------
// Accounts and card accounts

const ACCOUNT_FIELDS: [&str; 7] = [
    "customerId",
    "name",
    "cashAccountType",
    "currency",
    "product",
    "balance",
    "bban",
];

fn body_customer(app: &App, f: &Fields<'_>) -> Result<Customer, ApiError> {
    let id = f
        .opt_uuid("customerId")?
        .ok_or_else(|| f.missing("customerId", "the owning sandbox customer's customerId"))?;
    app.store.customer(id)?.ok_or_else(|| {
        unknown_in_body(
            "customerId",
            format!("customerId {id} is not a sandbox customer"),
        )
    })
}

/// `POST /v1/sandbox/accounts`: creates a mock account for a customer. Body:
///
/// ```json
/// { "customerId": "<uuid>",              // required
///   "name": "Feriekonto",                // required, 1..=70 characters (Versioning: longer-names)
///   "cashAccountType": "SVGS",           // optional, ISO 20022 code, default CACC
///   "currency": "NOK",                   // optional, ISO 4217, default NOK
///   "product": "Sparekonto",             // optional
///   "balance": {"currency": "NOK", "amount": "2500.00"},  // optional opening balance, 0.00
///   "bban": "15030123455" }              // optional, 11 digits MOD11, unique; else generated
/// ```
///
/// The account starts with no transactions (add some with
/// `POST /v1/sandbox/accounts/{id}/transactions`). 201 `{"account": accountDetails}` with
/// `Location: /v1/accounts/{id}`. The owner's PSUs see it at their next consent.
///
/// Errors: 400 `FORMAT_ERROR` (body), 400 `RESOURCE_UNKNOWN` (unknown customerId), 400
/// `PARAMETER_NOT_CONSISTENT` (balance currency differs), 400 `FORMAT_ERROR` (bban taken).
pub async fn create_account(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    body: Bytes,
) -> Result<Response, ApiError> {
    let value = parse_body(&body, "customerId, name")?;
    let f = Fields::of(&value, "", &ACCOUNT_FIELDS)?;
    let owner = body_customer(&app, &f)?;
    let spec = account_spec(&f)?;
    let bban = match f.opt_str("bban", 20)? {
        None => None,
        Some(b) if is_bban(&b) => Some(b),
        Some(b) => {
            return Err(field_error(
                "bban",
                format!("bban {b:?} is not a Norwegian BBAN (11 digits with a MOD11 check digit)"),
            ));
        }
    };
    let account = manage::create_account(&app.db, &owner, spec, bban)?;
    Ok(created(
        &format!("/v1/accounts/{}", account.id),
        json!({ "account": account_details(&app, &account)? }),
    ))
}

const CARD_FIELDS: [&str; 5] = ["customerId", "name", "currency", "product", "status"];

/// `POST /v1/sandbox/card-accounts`: creates a card account for a customer. Body
/// `{"customerId", "name" (1..=70), "currency" (default NOK), "product" (default
/// Kredittkort), "status" (enabled, blocked or deleted; default enabled)}`; the masked PAN is
/// generated. 201 `{"cardAccount": cardAccountDetails}`.
///
/// Errors: as [`create_account`].
pub async fn create_card_account(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    body: Bytes,
) -> Result<Response, ApiError> {
    let value = parse_body(&body, "customerId, name")?;
    let f = Fields::of(&value, "", &CARD_FIELDS)?;
    let owner = body_customer(&app, &f)?;
    let name = f.req_str(
        "name",
        MAX_NAME_CHARS,
        "the card account name (at most 70 characters)",
    )?;
    let currency = f
        .opt_currency("currency")?
        .unwrap_or_else(|| seed::CURRENCY.into());
    let product = f
        .opt_str("product", MAX_NAME_CHARS)?
        .unwrap_or_else(|| "Kredittkort".into());
    let status = match f.opt_str("status", 20)?.as_deref() {
        None | Some("enabled") => "enabled".to_string(),
        Some(s @ ("blocked" | "deleted")) => s.to_string(),
        Some(s) => {
            return Err(field_error(
                "status",
                format!(
                    "status {s:?} is not enabled, blocked or deleted (Berlin Group accountStatus)"
                ),
            ));
        }
    };
    let card = manage::create_card_account(
        &app.db,
        &owner,
        NewCard {
            name,
            currency,
            product,
            status,
        },
    )?;
    Ok(created(
        &format!("/v1/card-accounts/{}", card.id),
        json!({ "cardAccount": card_details(&app, &card)? }),
    ))
}

// ---------------------------------------------------------------------------------------
// Transactions

const TRANSACTION_FIELDS: [&str; 10] = [
    "transactionAmount",
    "bookingStatus",
    "bookingDate",
    "valueDate",
    "creditorName",
    "creditorAccount",
    "debtorName",
    "debtorAccount",
    "remittanceInformationUnstructured",
    "transactionId",
];

fn path_account(app: &App, id: &str) -> Result<Account, ApiError> {
    Uuid::parse_str(id)
        .ok()
        .map_or(Ok(None), |u| app.store.account(u))?
        .ok_or_else(|| ApiError::not_found(format!("no sandbox account {id:?}")))
}

fn path_card(app: &App, id: &str) -> Result<CardAccount, ApiError> {
    Uuid::parse_str(id)
        .ok()
        .map_or(Ok(None), |u| app.store.card_account(u))?
        .ok_or_else(|| ApiError::not_found(format!("no sandbox card account {id:?}")))
}

/// `bookingStatus` (`booked` default, or `pending`) and the booking date (booked: given or
/// today, not after today; pending: none).
fn booking(f: &Fields<'_>, today: NaiveDate) -> Result<(bool, Option<NaiveDate>), ApiError> {
    let booked = match f.opt_str("bookingStatus", 20)?.as_deref() {
        None | Some("booked") => true,
        Some("pending") => false,
        Some(other) => {
            return Err(field_error(
                "bookingStatus",
                format!("bookingStatus {other:?} is not booked or pending"),
            ));
        }
    };
    let date = f.opt_date("bookingDate")?;
    match (booked, date) {
        (false, Some(_)) => Err(inconsistent(
            "bookingDate",
            "a pending transaction has no bookingDate; leave it out or use bookingStatus booked",
        )),
        (false, None) => Ok((false, None)),
        (true, Some(d)) if d > today => Err(inconsistent(
            "bookingDate",
            format!(
                "bookingDate {d} is in the future (the sandbox date is {today}); a future \
                 transaction is pending"
            ),
        )),
        (true, d) => Ok((true, Some(d.unwrap_or(today)))),
    }
}

/// The signed amount in the account's currency, non-zero.
fn transaction_amount(f: &Fields<'_>, currency: &str) -> Result<i64, ApiError> {
    let (c, amount) = f.opt_amount("transactionAmount")?.ok_or_else(|| {
        f.missing(
            "transactionAmount",
            "{\"currency\": \"NOK\", \"amount\": \"-125.50\"} (negative = money out)",
        )
    })?;
    if c != currency {
        return Err(inconsistent(
            "transactionAmount.currency",
            format!("transactionAmount.currency {c} differs from the account currency {currency}"),
        ));
    }
    if amount == 0 {
        return Err(field_error(
            "transactionAmount.amount",
            "transactionAmount.amount is zero; use a negative amount for money out, a positive \
             one for money in",
        ));
    }
    Ok(amount)
}

/// `POST /v1/sandbox/accounts/{mockAccountId}/transactions` (interface document, Endpoints:
/// "Creates a sandbox transaction; an error results if another account is given as the
/// debtor"). Body (Berlin Group `transactions` field names):
///
/// ```json
/// { "transactionAmount": {"currency": "NOK", "amount": "-349.00"},  // required, non-zero:
///                                     // negative = money out (this account is the debtor),
///                                     // positive = money in (this account is the creditor)
///   "bookingStatus": "booked",        // booked (default) or pending
///   "bookingDate": "2026-03-02",      // booked only; default today; not in the future
///   "valueDate": "2026-03-02",        // default the booking date (pending: today)
///   "creditorName": "Elkjøp",         // money out: creditorName or creditorAccount required
///   "creditorAccount": {"bban": "..."},
///   "debtorName": "Arbeidsgiver AS",  // money in: debtorName required
///   "debtorAccount": {"bban": "<this account's bban>"},  // only this account, only money out
///   "remittanceInformationUnstructured": "Varekjøp" }     // optional, ≤ 140 characters
/// ```
///
/// The transaction appears in `GET /v1/accounts/{id}/transactions` (booked ones with this
/// stable `transactionId`, pending ones under `pending`) and moves the balances
/// ([`store::Store::balances`]). 201 with the Berlin Group `transactions` element and
/// `Location: /v1/accounts/{id}/transactions/{transactionId}`.
///
/// Errors: 404 `RESOURCE_UNKNOWN` (unknown account); 400 `PARAMETER_NOT_CONSISTENT` with an
/// explanation when `debtorAccount` is another account (or given on money in), when
/// `creditorAccount` is this account on money out (or another one on money in), for a
/// currency other than the account's, a future bookingDate or a pending bookingDate; 400
/// `FORMAT_ERROR` naming any malformed field.
pub async fn create_transaction(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    ApiPath(id): ApiPath<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let account = path_account(&app, &id)?;
    let value = parse_body(&body, "transactionAmount and creditorName or debtorName")?;
    let f = Fields::of(&value, "", &TRANSACTION_FIELDS)?;
    if f.get("transactionId").is_some() {
        return Err(field_error(
            "transactionId",
            "transactionId is assigned by the sandbox (stable for booked transactions); leave it out",
        ));
    }
    let today = app.clock.today();
    let amount = transaction_amount(&f, &account.currency)?;
    let (booked, booking_date) = booking(&f, today)?;
    let value_date = f.opt_date("valueDate")?.or(booking_date).unwrap_or(today);
    let creditor_name = f.opt_str("creditorName", MAX_NAME_CHARS)?;
    let debtor_name = f.opt_str("debtorName", MAX_NAME_CHARS)?;
    let creditor_account = f.opt_account_ref("creditorAccount")?;
    let debtor_account = f.opt_account_ref("debtorAccount")?;
    let remittance = f.opt_str("remittanceInformationUnstructured", MAX_REMITTANCE_CHARS)?;
    let this = &account.bban;
    let outgoing = amount < 0;
    if let Some(d) = &debtor_account {
        if d != this {
            return Err(inconsistent(
                "debtorAccount",
                format!(
                    "debtorAccount {d} is another account: a sandbox transaction is created on \
                     the mock account {this} itself, which is the debtor of money going out \
                     (negative amount). Leave debtorAccount out or give {this}; to record money \
                     coming in from elsewhere use a positive amount with debtorName only"
                ),
            ));
        }
        if !outgoing {
            return Err(inconsistent(
                "debtorAccount",
                format!(
                    "the amount is positive (money in), so the mock account {this} is the \
                     creditor and cannot be the debtor; use a negative amount for money out, or \
                     leave debtorAccount out and give debtorName"
                ),
            ));
        }
    }
    match (&creditor_account, outgoing) {
        (Some(c), true) if c == this => {
            return Err(inconsistent(
                "creditorAccount",
                format!(
                    "creditorAccount {c} is the mock account itself; money going out needs \
                     another creditor"
                ),
            ));
        }
        (Some(c), false) if c != this => {
            return Err(inconsistent(
                "creditorAccount",
                format!(
                    "creditorAccount {c} is another account: money coming in (positive amount) \
                     is credited to the mock account {this}; leave creditorAccount out"
                ),
            ));
        }
        _ => {}
    }
    if outgoing && creditor_name.is_none() && creditor_account.is_none() {
        return Err(f
            .missing(
                "creditorName",
                "money going out (negative amount) needs the creditorName (or creditorAccount)",
            )
            .into());
    }
    if !outgoing && debtor_name.is_none() {
        return Err(f
            .missing(
                "debtorName",
                "money coming in (positive amount) needs the debtorName (who paid)",
            )
            .into());
    }
    let owner_name = app.store.customer(account.owner)?.map(|c| c.name);
    let (creditor_name, creditor_account, debtor_name, debtor_account) = if outgoing {
        (
            creditor_name,
            creditor_account,
            debtor_name.or(owner_name),
            Some(this.clone()),
        )
    } else {
        (
            creditor_name.or(owner_name),
            Some(this.clone()),
            debtor_name,
            None,
        )
    };
    let mut t = ManualTransaction {
        id: Uuid::new_v4(),
        seq: 0,
        account: account.id,
        booked,
        booking_date,
        value_date,
        amount,
        creditor_name,
        creditor_account,
        debtor_name,
        debtor_account,
        remittance,
        created_at: app.clock.now(),
    };
    t.seq = manage::add_transaction(&app.db, &t, &id)?;
    Ok(created(
        &format!("/v1/accounts/{}/transactions/{}", account.id, t.id),
        t.to_transaction(&account.currency),
    ))
}

const CARD_TRANSACTION_FIELDS: [&str; 9] = [
    "transactionAmount",
    "originalAmount",
    "bookingStatus",
    "bookingDate",
    "transactionDate",
    "cardAcceptorId",
    "merchantCategoryCode",
    "transactionDetails",
    "cardTransactionId",
];

/// `POST /v1/sandbox/card-accounts/{id}/transactions`: a card transaction (Berlin Group
/// `cardTransaction` field names). Body:
///
/// ```json
/// { "transactionAmount": {"currency": "NOK", "amount": "-499.00"},  // required, non-zero,
///                                        // card account currency; negative = purchase
///   "originalAmount": {"currency": "EUR", "amount": "-42.90"},      // optional, merchant currency
///   "bookingStatus": "booked",           // booked (default) or pending
///   "bookingDate": "2026-03-02",         // booked only; default today; not in the future
///   "transactionDate": "2026-03-01",     // default the booking date (pending: today)
///   "cardAcceptorId": "ELKJOP-0231",     // optional, ≤ 35
///   "merchantCategoryCode": "5732",      // optional, 4 digits
///   "transactionDetails": "Elkjøp Lagunen" }  // optional, ≤ 1000
/// ```
///
/// 201 with the `cardTransaction` (stable `cardTransactionId`). The card account interface
/// lists it through [`store::Store::manual_card_transactions`] and its balances move
/// ([`store::Store::card_balances`]).
///
/// Errors: 404 `RESOURCE_UNKNOWN` (unknown card account); 400 `PARAMETER_NOT_CONSISTENT`
/// (currency, dates); 400 `FORMAT_ERROR` naming any malformed field.
pub async fn create_card_transaction(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    ApiPath(id): ApiPath<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let card = path_card(&app, &id)?;
    let value = parse_body(&body, "transactionAmount")?;
    let f = Fields::of(&value, "", &CARD_TRANSACTION_FIELDS)?;
    if f.get("cardTransactionId").is_some() {
        return Err(field_error(
            "cardTransactionId",
            "cardTransactionId is assigned by the sandbox; leave it out",
        ));
    }
    let today = app.clock.today();
    let amount = transaction_amount(&f, &card.currency)?;
    let original_amount = f
        .opt_amount("originalAmount")?
        .map(|(currency, minor)| Amount {
            currency,
            amount: crate::xs2a::model::format_minor(minor),
        });
    let (booked, booking_date) = booking(&f, today)?;
    let transaction_date = f
        .opt_date("transactionDate")?
        .or(booking_date)
        .unwrap_or(today);
    if transaction_date > today {
        return Err(inconsistent(
            "transactionDate",
            format!(
                "transactionDate {transaction_date} is in the future (the sandbox date is {today})"
            ),
        ));
    }
    let card_acceptor_id = f.opt_str("cardAcceptorId", 35)?;
    let merchant_category_code = match f.opt_str("merchantCategoryCode", 4)? {
        Some(m) if m.len() == 4 && m.bytes().all(|b| b.is_ascii_digit()) => Some(m),
        Some(m) => {
            return Err(field_error(
                "merchantCategoryCode",
                format!("merchantCategoryCode {m:?} is not a 4-digit ISO 18245 code"),
            ));
        }
        None => None,
    };
    let transaction_details = f.opt_str("transactionDetails", 1000)?;
    let mut t = ManualCardTransaction {
        id: Uuid::new_v4(),
        seq: 0,
        card_account: card.id,
        booked,
        booking_date,
        transaction_date,
        amount,
        original_amount,
        card_acceptor_id,
        merchant_category_code,
        transaction_details,
        created_at: app.clock.now(),
    };
    t.seq = manage::add_card_transaction(&app.db, &t, &id)?;
    Ok(created(
        &format!("/v1/card-accounts/{}/transactions", card.id),
        t.to_json(&card.currency, &card.masked_pan),
    ))
}

// ---------------------------------------------------------------------------------------
// Balances

const BALANCE_FIELDS: [&str; 2] = ["booked", "available"];

/// The `booked` and `available` amounts of a balance-update body, in `currency`; at least
/// one is required.
fn balance_update(body: &[u8], currency: &str) -> Result<(Option<i64>, Option<i64>), ApiError> {
    let value = parse_body(body, "booked and/or available amounts")?;
    let f = Fields::of(&value, "", &BALANCE_FIELDS)?;
    let mut out = [None, None];
    for (slot, name) in out.iter_mut().zip(BALANCE_FIELDS) {
        if let Some((c, m)) = f.opt_amount(name)? {
            if c != currency {
                return Err(inconsistent(
                    &format!("{name}.currency"),
                    format!(
                        "{name}.currency {c} differs from the account currency {currency}; a \
                         balance is always in the account currency"
                    ),
                ));
            }
            *slot = Some(m);
        }
    }
    if out.iter().all(Option::is_none) {
        return Err(f
            .missing(
                "booked",
                "give booked and/or available, e.g. {\"booked\": {\"currency\": \"NOK\", \
             \"amount\": \"1000.00\"}}",
            )
            .into());
    }
    Ok((out[0], out[1]))
}

/// `PUT` (or `POST`) `/v1/sandbox/accounts/{mockAccountId}/balances` (interface document,
/// Endpoints: "Sandbox balance-update operations for accounts ... also exist"). Body
/// `{"booked": amount, "available": amount}`, at least one, each in the account currency;
/// an omitted one keeps its current value. From then on `GET /v1/accounts/{id}/balances`
/// answers `closingBooked` = booked and `expected` = `interimAvailable` = available, moved
/// only by transactions created afterwards with the sandbox transaction operation. 200 with
/// the balances (`readAccountBalanceResponse-200` shape).
///
/// Errors: 404 `RESOURCE_UNKNOWN`; 400 `FORMAT_ERROR`; 400 `PARAMETER_NOT_CONSISTENT`
/// (currency).
pub async fn set_balances(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    ApiPath(id): ApiPath<String>,
    body: Bytes,
) -> Result<Json<BalancesResponse>, ApiError> {
    let account = path_account(&app, &id)?;
    let (booked, available) = balance_update(&body, &account.currency)?;
    let today = app.clock.today();
    let owner = app
        .store
        .customer(account.owner)?
        .ok_or_else(|| ApiError::not_found(format!("no sandbox account {id:?}")))?;
    let current =
        crate::sandbox::domain::books::Book::of(&app.store, &account, &owner, today).balances()?;
    let now = app.clock.now();
    manage::set_balance_override(
        &app.db,
        false,
        account.id,
        booked.unwrap_or(current.closing_booked),
        available.unwrap_or(current.expected),
        now,
    )?;
    let b =
        crate::sandbox::domain::books::Book::of(&app.store, &account, &owner, today).balances()?;
    let yesterday = today.pred_opt().unwrap_or(today);
    let balance = |kind: &str, amount: i64, date: NaiveDate| Balance {
        balance_type: kind.to_string(),
        balance_amount: Amount::from_minor(&account.currency, amount),
        reference_date: Some(date.to_string()),
    };
    Ok(Json(BalancesResponse {
        account: Some(AccountReference {
            bban: Some(account.bban.clone()),
            currency: Some(account.currency.clone()),
            ..AccountReference::default()
        }),
        balances: vec![
            balance(balance_type::CLOSING_BOOKED, b.closing_booked, yesterday),
            balance(balance_type::EXPECTED, b.expected, today),
            balance(balance_type::INTERIM_AVAILABLE, b.expected, today),
        ],
    }))
}

/// `PUT` (or `POST`) `/v1/sandbox/card-accounts/{id}/balances`: like [`set_balances`] for a
/// card account (interface document, Endpoints: balance-update operations "for accounts and
/// card accounts"); `booked` sets `interimBooked` (negative when owed), `available` sets
/// `interimAvailable` (credit left); an omitted amount keeps its current value. The card
/// account interface reads it through [`store::Store::card_balances`]. 200 `{"cardAccount":
/// {"maskedPan"}, "balances": [interimBooked, interimAvailable]}`.
///
/// Errors: as [`set_balances`].
pub async fn set_card_balances(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    ApiPath(id): ApiPath<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let card = path_card(&app, &id)?;
    let (booked, available) = balance_update(&body, &card.currency)?;
    let today = app.clock.today();
    let owner = app
        .store
        .customer(card.owner)?
        .ok_or_else(|| ApiError::not_found(format!("no sandbox card account {id:?}")))?;
    let current = crate::sandbox::http::cards::current_balances(&app, &card, &owner, today)?;
    let booked = booked.unwrap_or(current.closing_booked);
    let available = available.unwrap_or(current.expected);
    let now = app.clock.now();
    manage::set_balance_override(&app.db, true, card.id, booked, available, now)?;
    let b = crate::sandbox::domain::books::card_balances(
        &app.store,
        card.id,
        Balances {
            closing_booked: booked,
            expected: available,
        },
        today,
    )?;
    Ok(Json(json!({
        "cardAccount": { "maskedPan": card.masked_pan },
        "balances": crate::sandbox::http::cards::interim_balances(&card, &b, today),
    })))
}
