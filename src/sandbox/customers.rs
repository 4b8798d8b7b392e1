//! `GET /v1/sandbox/customers` (interface document, Endpoints; element shape: Resources,
//! "Sandbox customer") and `GET /v1/sandbox/customers/{customerId}` (the element's `self`).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;

use super::App;
use super::auth::Tpp;
use super::errors::{ApiError, ApiPath, QueryPairs};
use super::store::{Agreement, Customer};
use crate::xs2a::links::{Link, Links, names};
use crate::xs2a::model::{SandboxAgreement, SandboxCustomer};

const VERBS: &[&str] = &["GET"];

fn customer_path(id: &str) -> String {
    format!("/v1/sandbox/customers/{id}")
}

/// The agreement element of the sandbox customer table (interface document, Resources:
/// `id`, `name`, `engagements`, `_links.self` and `_links.engagements` with `verbs`), also the
/// element of `GET /v1/agreements` ([`super::psu::agreements`]).
pub fn agreement_element(a: &Agreement) -> SandboxAgreement {
    let id = a.id.to_string();
    let mut links = Links::new();
    links.insert(
        names::SELF.into(),
        Link::with_verbs(format!("/v1/agreements/{id}"), VERBS),
    );
    links.insert(
        "engagements".into(),
        Link::with_verbs(format!("/v1/agreements/{id}/engagements"), VERBS),
    );
    SandboxAgreement {
        id,
        name: a.name.clone(),
        engagements: a.accounts.iter().map(|x| x.to_string()).collect(),
        links,
    }
}

/// The listing element of `c`; accounts and agreements left empty when not asked for (the
/// fields are required, so they are always present).
pub fn element(
    app: &App,
    c: &Customer,
    with_accounts: bool,
    with_agreements: bool,
) -> Result<SandboxCustomer, ApiError> {
    let id = c.id.to_string();
    let mut links = Links::new();
    links.insert(
        names::SELF.into(),
        Link::with_verbs(customer_path(&id), VERBS),
    );
    let (accounts, card_accounts) = if with_accounts {
        (
            app.store
                .accounts_of(c.id)?
                .iter()
                .map(|a| a.id.to_string())
                .collect(),
            app.store
                .card_accounts_of(c.id)?
                .iter()
                .map(|a| a.id.to_string())
                .collect(),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let agreements = if with_agreements {
        app.store
            .agreements_of(c.id)?
            .iter()
            // Sandbox links (`/v1/sandbox/customers/{corporate}/agreements/{id}`), followable
            // without a PSU-ID; `GET /v1/agreements` keeps the PSU links.
            .map(super::manage::agreement_element)
            .collect()
    } else {
        Vec::new()
    };
    Ok(SandboxCustomer {
        customer_id: id,
        customer_number: c.number.clone(),
        customer_type: c.kind,
        customer_name: c.name.clone(),
        agreements,
        accounts,
        card_accounts,
        links,
    })
}

/// `GET /v1/sandbox/customers?withAccounts=&withAgreements=` (both default `true`): 200 with
/// the array of all customers.
pub async fn list(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    query: QueryPairs,
) -> Result<Json<Vec<SandboxCustomer>>, ApiError> {
    let with_accounts = query.bool("withAccounts", true)?;
    let with_agreements = query.bool("withAgreements", true)?;
    Ok(Json(
        app.store
            .customers()?
            .iter()
            .map(|c| element(&app, c, with_accounts, with_agreements))
            .collect::<Result<_, _>>()?,
    ))
}

/// `GET /v1/sandbox/customers/{customerId}`: one element, accounts and agreements included.
pub async fn one(
    State(app): State<Arc<App>>,
    _tpp: Tpp,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<SandboxCustomer>, ApiError> {
    let customer = match uuid::Uuid::parse_str(&id) {
        Ok(u) => app.store.customer(u)?,
        Err(_) => None,
    }
    .ok_or_else(|| ApiError::not_found(format!("no sandbox customer {id:?}")))?;
    Ok(Json(element(&app, &customer, true, true)?))
}
