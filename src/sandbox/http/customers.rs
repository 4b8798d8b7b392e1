//! `GET /v1/sandbox/customers` (interface document, Endpoints; element shape: Resources,
//! "Sandbox customer") and `GET /v1/sandbox/customers/{customerId}` (the element's `self`),
//! both limited to the calling TPP's world: the seeded customers and the ones it created.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;

use crate::sandbox::App;
use crate::sandbox::domain::views::element;
use crate::sandbox::errors::{ApiError, ApiPath, QueryPairs};
use crate::sandbox::http::auth::Tpp;
use crate::xs2a::model::SandboxCustomer;

/// `GET /v1/sandbox/customers?withAccounts=&withAgreements=` (both default `true`): 200 with
/// the array of the customers in the calling TPP's world: the seeded ones and those it
/// created (issue 20; another TPP's customers are not listed).
pub async fn list(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    query: QueryPairs,
) -> Result<Json<Vec<SandboxCustomer>>, ApiError> {
    let with_accounts = query.bool("withAccounts", true)?;
    let with_agreements = query.bool("withAgreements", true)?;
    let all = app.store.customers()?;
    let mut visible = Vec::with_capacity(all.len());
    for c in all {
        if visible_to(&app, &c.id, &tpp)? {
            visible.push(element(&app.domain(), &c, with_accounts, with_agreements)?);
        }
    }
    Ok(Json(visible))
}

/// Whether customer `id` is in `tpp`'s world ([`crate::sandbox::store::tenancy::visible_to`]).
///
/// Errors: 503 when the database fails.
pub fn visible_to(app: &App, id: &uuid::Uuid, tpp: &Tpp) -> Result<bool, ApiError> {
    let key = id.to_string();
    Ok(app
        .db
        .read(|c| crate::sandbox::store::tenancy::visible_to(c, &key, &tpp.id.0))?)
}

/// `GET /v1/sandbox/customers/{customerId}`: one element, accounts and agreements included;
/// 404 for a customer outside the calling TPP's world.
pub async fn one(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<SandboxCustomer>, ApiError> {
    let customer = match uuid::Uuid::parse_str(&id) {
        Ok(u) if visible_to(&app, &u, &tpp)? => app.store.customer(u)?,
        _ => None,
    }
    .ok_or_else(|| ApiError::not_found(format!("no sandbox customer {id:?}")))?;
    Ok(Json(element(&app.domain(), &customer, true, true)?))
}
