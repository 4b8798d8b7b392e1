//! The PSU's steps on the payment SCA page in the domain (the page itself is
//! [`crate::sandbox::http::payment_sca`]): the authorisation and the payments it covers
//! ([`Scope`]), the login ([`identify`]) and the approval or rejection ([`decide`]), each
//! one transaction.

use crate::sandbox::store::sql::Conn;
use uuid::Uuid;

use crate::sandbox::domain::Ctx;
use crate::sandbox::domain::access::psu_id;
use crate::sandbox::domain::{basket, payment, settlement};
use crate::sandbox::errors::ApiError;
use crate::sandbox::model::{Tpp, TppId};
use crate::sandbox::store::payments::{
    self as rows, AuthorisationRow, PaymentRow, sca_status, status,
};

/// What a new authorisation covers: one payment, or the payments of a signing basket (by
/// id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Covers<'a> {
    /// The payment `paymentId`.
    Payment(&'a str),
    /// The signing basket `basketId`.
    Basket(&'a str),
}

/// Starts a new authorisation (`POST .../authorisations` of a payment or a signing basket)
/// with `redirect_uri` and `session_id`, stored in one transaction with the check that what
/// it covers can still be authorised ([`payment::authorisable`], [`basket::authorisable`]).
///
/// Errors: those of the checks (404 `RESOURCE_UNKNOWN`, 409 `STATUS_INVALID`); storage (503).
pub fn start_authorisation(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    covers: Covers<'_>,
    redirect_uri: &str,
    session_id: &str,
) -> Result<AuthorisationRow, ApiError> {
    let (payment_id, basket_id) = match covers {
        Covers::Payment(id) => (Some(id), None),
        Covers::Basket(id) => (None, Some(id)),
    };
    let now = cx.clock.unix_secs();
    let auth =
        payment::new_authorisation(tpp, payment_id, basket_id, redirect_uri, session_id, now);
    cx.db.write(|tx| {
        match covers {
            Covers::Payment(id) => payment::authorisable(tx, id)?,
            Covers::Basket(id) => basket::authorisable(tx, id)?,
        }
        Ok::<_, ApiError>(rows::insert_authorisation(tx, &auth)?)
    })?;
    Ok(auth)
}

/// The authorisation and the payments it covers (one payment, or a basket's payments).
pub struct Scope {
    /// The authorisation.
    pub auth: AuthorisationRow,
    /// The payments it covers that still exist.
    pub payments: Vec<PaymentRow>,
    /// Customers the TPP bound the payments or the basket to (`PSU-ID`, `X-PSU-IDENTITY`).
    pub expected: Vec<String>,
}

/// The [`Scope`] of authorisation `auth`.
///
/// Errors: SQLite errors.
pub fn scope_of(c: &Conn<'_>, auth: AuthorisationRow) -> crate::sandbox::store::sql::Result<Scope> {
    let mut expected = Vec::new();
    let ids: Vec<String> = match (&auth.payment, &auth.basket) {
        (Some(p), _) => vec![p.clone()],
        (None, Some(b)) => match rows::basket(c, b)? {
            Some(b) => {
                expected.extend(b.expected_customer);
                b.payments
            }
            None => Vec::new(),
        },
        (None, None) => Vec::new(),
    };
    let mut payments = Vec::new();
    for id in ids {
        if let Some(p) = rows::payment(c, &id)? {
            expected.extend(p.expected_customer.clone());
            payments.push(p);
        }
    }
    Ok(Scope {
        auth,
        payments,
        expected,
    })
}

/// Loads a usable authorisation, or the error page to answer.
/// What an approval or rejection on the payment SCA page did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Approved: (payment id, new status) of each payment authorised.
    Approved(Vec<(String, String)>),
    /// Rejected by the PSU: the open payments are `RJCT`, the authorisation `failed`.
    Rejected,
    /// No payment was still `RCVD`: the authorisation `failed`.
    NothingLeft,
    /// The authorisation moved on meanwhile (another tab): nothing changed.
    Stale,
}

/// The PSU's approval (`approve`) or rejection of authorisation `id` of `scope` on the
/// payment SCA page, by `customer` in `agreement`'s context (CORPORATE) or their own: in one
/// transaction (instant payments are executed at approval), the
/// open payments are authorised ([`settlement::authorise`]) or rejected, and the
/// authorisation is finalised or failed. The caller holds [`settlement::execution_lock`] and
/// has read `prepared` ([`settlement::prepare`]) before (the store shares its connection).
///
/// Errors: storage (503).
pub fn decide(
    cx: &Ctx<'_>,
    id: &str,
    scope: &Scope,
    approve: bool,
    customer: Option<Uuid>,
    agreement: Option<Uuid>,
    mut prepared: settlement::Prepared,
) -> Result<Decision, ApiError> {
    let tpp = TppId(scope.auth.tpp.as_str().into());
    let now = cx.clock.unix_secs();
    cx.db.write(|tx| {
        let Some(a) = rows::authorisation(tx, id)? else {
            return Ok(Decision::Stale);
        };
        if a.sca_status != scope.auth.sca_status {
            return Ok(Decision::Stale);
        }
        let current = scope_of(tx, a)?;
        let open: Vec<String> = current
            .payments
            .iter()
            .filter(|p| p.status == status::RCVD)
            .map(|p| p.id.clone())
            .collect();
        if !approve {
            for p in &open {
                rows::set_status(tx, p, status::RJCT, Some("rejected by the PSU during SCA"))?;
            }
            rows::set_sca_status(tx, id, sca_status::FAILED, None, None)?;
            return Ok(Decision::Rejected);
        }
        let Some(customer) = customer else {
            return Ok(Decision::Stale);
        };
        if open.is_empty() {
            rows::set_sca_status(tx, id, sca_status::FAILED, None, None)?;
            return Ok(Decision::NothingLeft);
        }
        let psu = psu_id(&tpp, customer);
        let done = settlement::authorise(tx, &open, customer, psu, agreement, now, &mut prepared)?;
        rows::set_sca_status(tx, id, sca_status::FINALISED, None, None)?;
        rows::register_psu(tx, &tpp.0, &psu.to_string(), &customer.to_string())?;
        if let Some(b) = &scope.auth.basket {
            rows::set_basket_flags(tx, b, false, true)?;
        }
        Ok(Decision::Approved(done))
    })
}

/// Records that `customer_id` (in `agreement_id`'s context, if any) logged in on the SCA
/// page of authorisation `id`: `received` becomes `psuIdentified`. Returns whether it moved
/// (`false`: the authorisation moved on meanwhile).
///
/// Errors: storage (503).
pub fn identify(
    cx: &Ctx<'_>,
    id: &str,
    customer_id: &str,
    agreement_id: Option<&str>,
) -> Result<bool, ApiError> {
    cx.db.write(|tx| {
        let a = rows::authorisation(tx, id)?;
        if a.is_none_or(|a| a.sca_status != sca_status::RECEIVED) {
            return Ok(false);
        }
        rows::set_sca_status(
            tx,
            id,
            sca_status::PSU_IDENTIFIED,
            Some(customer_id),
            agreement_id,
        )?;
        Ok(true)
    })
}
