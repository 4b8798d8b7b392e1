//! Signing baskets in the domain (the rules are described in
//! [`crate::sandbox::http::baskets`], which serves `/v1/signing-baskets`): a basket's status
//! over its payments ([`basket_status`]), the checks of a new basket's payments
//! ([`check_payments`]), and the transactions that create, delete and start the
//! authorisation of a basket.

use crate::sandbox::store::sql::Conn;
use uuid::Uuid;

use crate::sandbox::domain::Ctx;
use crate::sandbox::domain::payment::{Service, new_authorisation};
use crate::sandbox::errors::ApiError;
use crate::sandbox::model::Tpp;
use crate::sandbox::store::payments::{
    self as rows, AuthorisationRow, BasketRow, PaymentRow, status,
};
use crate::xs2a::error::MessageCode;

/// The basket `transactionStatus`: worst case over `payments` (see the module doc). A
/// deleted basket has no status: [`own_basket`] answers 404 for it.
pub fn basket_status(payments: &[PaymentRow]) -> &'static str {
    // RJCT, CANC and ACCP (lack of funds): the one verdict of `xs2a::status`.
    let rejected = |p: &&PaymentRow| {
        matches!(
            crate::xs2a::status::verdict(&p.status, p.funds_available),
            crate::xs2a::status::Verdict::Rejected(_)
        )
    };
    let authorised = |p: &&PaymentRow| p.approved_at.is_some();
    if payments.iter().any(|p| rejected(&p)) {
        status::RJCT
    } else if payments.iter().all(|p| authorised(&p)) {
        status::ACTC
    } else if payments.iter().any(|p| authorised(&p)) {
        status::PATC
    } else {
        status::RCVD
    }
}

/// The payments of basket `b` that still exist, in its order.
///
/// Errors: SQLite errors.
pub fn payments_of(
    c: &Conn<'_>,
    b: &BasketRow,
) -> crate::sandbox::store::sql::Result<Vec<PaymentRow>> {
    let mut out = Vec::new();
    for id in &b.payments {
        if let Some(p) = rows::payment(c, id)? {
            out.push(p);
        }
    }
    Ok(out)
}

/// 404 `RESOURCE_UNKNOWN` for a deleted basket (see the module doc, "Deletion").
pub fn deleted(id: &str) -> ApiError {
    ApiError::not_found(format!(
        "signing basket {id} was deleted (DELETE /v1/signing-baskets/{id}); its payments are \
         untouched and keep their own status"
    ))
}

/// Checks the payments of a new basket, in this order over all ids: each exists (else 400
/// `RESOURCE_UNKNOWN`) and belongs to this TPP (else 403 `RESOURCE_UNKNOWN`); none is a bulk
/// or periodic payment (else 400 `REFERENCE_MIX_INVALID`, interface document); each can
/// still be authorised — not rejected, cancelled, executed or on hold — and is in no other
/// open basket (else 409 `REFERENCE_STATUS_INVALID`).
pub fn check_payments(
    c: &Conn<'_>,
    tpp: &Tpp,
    ids: &[String],
) -> Result<Vec<PaymentRow>, ApiError> {
    let mut found = Vec::new();
    for id in ids {
        let p = rows::payment(c, id)?.ok_or_else(|| {
            ApiError::new(
                MessageCode::ResourceUnknown,
                format!("paymentIds: no payment has the id {id:?}"),
            )
        })?;
        if *p.tpp != *tpp.id.0 {
            return Err(ApiError::forbidden_unknown(format!(
                "paymentIds: payment {id} was not initiated by this TPP"
            )));
        }
        found.push(p);
    }
    if let Some(p) = found
        .iter()
        .find(|p| p.service != Service::Payments.segment())
    {
        return Err(ApiError::new(
            MessageCode::ReferenceMixInvalid,
            format!(
                "paymentIds: payment {} is a {} payment; bulk and periodic payments cannot be \
                 put in a signing basket",
                p.id,
                if p.service == Service::BulkPayments.segment() {
                    "bulk"
                } else {
                    "periodic"
                }
            ),
        ));
    }
    for p in &found {
        if !matches!(p.status.as_str(), status::RCVD | status::ACTC) {
            return Err(ApiError::new(
                MessageCode::ReferenceStatusInvalid,
                format!(
                    "paymentIds: payment {} has status {} and cannot be put in a signing basket",
                    p.id, p.status
                ),
            ));
        }
        if let Some(other) = rows::open_basket_of(c, &p.id)? {
            return Err(ApiError::new(
                MessageCode::ReferenceStatusInvalid,
                format!(
                    "paymentIds: payment {} is already in signing basket {other}; delete that \
                     basket first",
                    p.id
                ),
            ));
        }
    }
    Ok(found)
}

/// Creates basket of payments `ids` for `tpp` (with its first authorisation unless
/// `explicit`) in one transaction; returns its `basketId`, its `transactionStatus` and that
/// authorisation.
///
/// Errors: those of [`check_payments`]; storage (503).
pub fn create(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    ids: Vec<String>,
    redirect: &str,
    session: &str,
    expected_customer: Option<Uuid>,
    explicit: bool,
) -> Result<(String, &'static str, Option<AuthorisationRow>), ApiError> {
    let now = cx.clock.unix_secs();
    let id = crate::sandbox::domain::new_id().to_string();
    let basket = BasketRow {
        id: id.clone(),
        tpp: tpp.id.0.to_string(),
        created_at: now,
        redirect_uri: redirect.to_string(),
        tpp_session_id: session.to_string(),
        expected_customer: expected_customer.map(|c| c.to_string()),
        cancelled: false,
        authorised: false,
        payments: ids,
    };
    let auth = (!explicit).then(|| new_authorisation(tpp, None, Some(&id), redirect, session, now));
    let transaction_status = cx.db.write(|tx| {
        let found = check_payments(tx, tpp, &basket.payments)?;
        rows::insert_basket(tx, &basket)?;
        if let Some(a) = &auth {
            rows::insert_authorisation(tx, a)?;
        }
        Ok::<_, ApiError>(basket_status(&found))
    })?;
    Ok((id, transaction_status, auth))
}

/// Deletes basket `id` (its payments keep their own status; its open authorisations fail).
///
/// Errors: 404 `RESOURCE_UNKNOWN` when it is gone or already deleted; 409 `STATUS_INVALID`
/// when its SCA was completed; storage (503).
pub fn delete(cx: &Ctx<'_>, id: &str) -> Result<(), ApiError> {
    cx.db.write(|tx| {
        let b = rows::basket(tx, id)?
            .ok_or_else(|| ApiError::not_found(format!("no signing basket {id}")))?;
        if b.cancelled {
            return Err(deleted(id));
        }
        if b.authorised {
            return Err(ApiError::new(
                MessageCode::StatusInvalid,
                format!(
                    "signing basket {id} was already authorised by the PSU and cannot be \
                     deleted; delete its payments one by one instead"
                ),
            ));
        }
        rows::fail_open_basket_authorisations(tx, id)?;
        Ok(rows::set_basket_flags(tx, id, true, false)?)
    })
}

/// Whether basket `id` can get a new authorisation (checked in the transaction that stores
/// it, [`crate::sandbox::domain::payment_sca::start_authorisation`]).
///
/// Errors: 404 `RESOURCE_UNKNOWN` for a deleted basket; 409 `STATUS_INVALID` for one without
/// `RCVD` payments; storage (503).
pub fn authorisable(tx: &Conn<'_>, id: &str) -> Result<(), ApiError> {
    let b = rows::basket(tx, id)?
        .ok_or_else(|| ApiError::not_found(format!("no signing basket {id}")))?;
    let p = payments_of(tx, &b)?;
    if b.cancelled {
        return Err(deleted(id));
    }
    if !p.iter().any(|x| x.status == status::RCVD) {
        return Err(ApiError::new(
            MessageCode::StatusInvalid,
            format!(
                "signing basket {id} has status {} and has no payment left to authorise",
                basket_status(&p)
            ),
        ));
    }
    Ok(())
}
