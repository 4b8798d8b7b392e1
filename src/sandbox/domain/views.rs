//! The sandbox-customer and agreement elements (interface document, Resources, "Sandbox
//! customer"), shared by `GET /v1/sandbox/customers`, the sandbox management endpoints and
//! `GET /v1/agreements`.

use crate::sandbox::domain::Ctx;
use crate::sandbox::errors::ApiError;
use crate::sandbox::model::{Agreement, Customer};
use crate::xs2a::links::{Link, Links, names};
use crate::xs2a::model::{SandboxAgreement, SandboxCustomer};
use uuid::Uuid;

const VERBS: &[&str] = &["GET"];

/// The agreement element of the sandbox customer table (interface document, Resources:
/// `id`, `name`, `engagements`, `_links.self` and `_links.engagements` with `verbs`), also the
/// element of `GET /v1/agreements`.
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
    cx: &Ctx<'_>,
    c: &Customer,
    with_accounts: bool,
    with_agreements: bool,
) -> Result<SandboxCustomer, ApiError> {
    let id = c.id.to_string();
    let mut links = Links::new();
    links.insert(
        names::SELF.into(),
        Link::with_verbs(customer_path(c.id), VERBS),
    );
    let (accounts, card_accounts) = if with_accounts {
        (
            cx.store
                .accounts_of(c.id)?
                .iter()
                .map(|a| a.id.to_string())
                .collect(),
            cx.store
                .card_accounts_of(c.id)?
                .iter()
                .map(|a| a.id.to_string())
                .collect(),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let agreements = if with_agreements {
        cx.store
            .agreements_of(c.id)?
            .iter()
            // Sandbox links (`/v1/sandbox/customers/{corporate}/agreements/{id}`), followable
            // without a PSU-ID; `GET /v1/agreements` keeps the PSU links.
            .map(sandbox_agreement_element)
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

/// `/v1/sandbox/customers/{id}`.
pub fn customer_path(id: Uuid) -> String {
    format!("/v1/sandbox/customers/{id}")
}

/// `/v1/sandbox/customers/{corporate}/agreements/{id}`: an agreement lives under its
/// corporate customer (the listing's `_links.self` of every agreement element).
pub fn agreement_path(a: &Agreement) -> String {
    format!("{}/agreements/{}", customer_path(a.corporate), a.id)
}

/// The agreement element of the interface document ("Sandbox customer", Agreement element:
/// `id`, `name`, `engagements` = the covered accounts' resourceIds, `_links` with `self` and
/// `engagements`, each `{href, verbs}`).
pub fn sandbox_agreement_element(a: &Agreement) -> SandboxAgreement {
    let path = agreement_path(a);
    let mut links = Links::new();
    links.insert(
        names::SELF.into(),
        Link::with_verbs(path.clone(), &["GET", "DELETE"]),
    );
    links.insert(
        "engagements".into(),
        Link::with_verbs(format!("{path}/engagements"), VERBS),
    );
    SandboxAgreement {
        id: a.id.to_string(),
        name: a.name.clone(),
        engagements: a.accounts.iter().map(|x| x.to_string()).collect(),
        links,
    }
}
