//! `GET /v1/sandbox/customers` (interface document, Endpoints; element shape: Resources,
//! "Sandbox customer") and `GET /v1/sandbox/customers/{customerId}` (the element's `self`).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;

use super::App;
use super::auth::Tpp;
use super::domain::views::element;
use super::errors::{ApiError, ApiPath, QueryPairs};
use crate::xs2a::model::SandboxCustomer;

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
