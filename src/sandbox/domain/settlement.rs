//! Payment execution at the simulated batch runs (interface document, Endpoints: "The
//! sandbox runs simulated batch payment processing five times a day for all payments except
//! periodic ones"; States: "Payment statuses"); the batch controls that trigger it are
//! [`crate::sandbox::http::batch`].
//!
//! Batch runs are at [`BATCH_HOURS`] (06:00, 09:00, 12:00, 15:00, 18:00 UTC on the sandbox
//! clock, every day). A payment authorised at `t` is taken by the first run at or after `t`,
//! or — when its `requestedExecutionDate` is later — by the 06:00 run of that date
//! ([`due_at`]). The runs are simulated lazily: [`run_due`] executes every `ACTC` payment
//! whose run time has passed on the sandbox clock; the payment and basket handlers call it
//! first, so advancing the clock and then calling the API shows the effect.
//!
//! Execution ([`execute`]): when the debtor account's available balance ([`available_minor`])
//! covers the amount, the payment becomes `ACSC` (settled at the run time) and is booked on
//! the debtor account (and on a sandbox creditor account) as a booked transaction, so the
//! account-information interface lists it and its balances move; otherwise it becomes
//! `ACCP` with `fundsAvailable: false`. Instant payments are executed at approval
//! ([`authorise`]). A fault rule may force another outcome at execution (`RJCT`, `ACCP`,
//! `PDNG`: [`crate::sandbox::http::faults`]). Periodic payments are never taken (they stay `ACTC`, the standing
//! order). Payments on hold (`PDNG`) are skipped until released.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::sandbox::store::sql::Conn;
use chrono::{NaiveDate, NaiveTime};
use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::sandbox::domain::Ctx;
use crate::sandbox::domain::payment::{self as body, PaymentType, Service};
use crate::sandbox::errors::ApiError;
use crate::sandbox::model::{Account, ManualTransaction, TppId};
use crate::sandbox::store::insert_manual_transaction;
use crate::sandbox::store::payments::{self as rows, PaymentRow, status};
use crate::xs2a::error::MessageCode;
use crate::xs2a::model::{format_minor, parse_minor};

/// Moves the clock of `tpp`'s world `secs` seconds forward (`POST /v1/sandbox/clock`; issue
/// 20, see [`crate::sandbox::clock`]) and tells the event stream. The new offset is stored
/// before the clock moves, so a restart keeps the TPP's time (the database lock serializes
/// concurrent advances).
///
/// Errors: storage (503).
pub fn advance_clock(cx: &Ctx<'_>, tpp: &TppId, secs: u64) -> Result<(), ApiError> {
    let world = &*tpp.0;
    cx.db.write(|tx| {
        let offset = cx
            .clock
            .world_offset(world)
            .saturating_add(std::time::Duration::from_secs(secs));
        crate::sandbox::store::tenancy::set_clock_offset(tx, world, offset.as_secs())?;
        cx.clock.set_world_offset(world, offset);
        Ok::<_, ApiError>(())
    })?;
    cx.events.emit(Some(world), || {
        let offset = cx.clock.offset() + cx.clock.world_offset(world);
        crate::sandbox::domain::events::clock_event(cx.clock.now(), offset.as_secs(), "advance")
    });
    Ok(())
}

/// The sandbox clock as Unix seconds.
pub fn now_secs(cx: &Ctx<'_>) -> i64 {
    cx.clock.unix_secs()
}

pub use crate::sandbox::clock::rfc3339;

/// The kind of a stored payment.
pub fn kind_of(p: &PaymentRow) -> Option<PaymentType> {
    PaymentType::from_str_opt(&p.kind)
}

/// Hours (UTC, sandbox clock) of the five daily batch runs.
pub const BATCH_HOURS: [u32; 5] = [6, 9, 12, 15, 18];

fn at_hour(day: NaiveDate, hour: u32) -> i64 {
    day.and_time(NaiveTime::from_hms_opt(hour, 0, 0).unwrap_or(NaiveTime::MIN))
        .and_utc()
        .timestamp()
}

/// The first batch run at or after `t` (Unix seconds).
pub fn next_batch_at(t: i64) -> i64 {
    let day = chrono::DateTime::<chrono::Utc>::from_timestamp(t, 0)
        .map(|d| d.date_naive())
        .unwrap_or_default();
    let mut d = day;
    loop {
        if let Some(s) = BATCH_HOURS.iter().map(|h| at_hour(d, *h)).find(|s| *s >= t) {
            return s;
        }
        match d.succ_opt() {
            Some(n) => d = n,
            None => return t,
        }
    }
}

/// The run that takes a payment authorised at `approved_at` with `execution_date`.
pub fn due_at(approved_at: i64, execution_date: Option<NaiveDate>) -> i64 {
    let first = next_batch_at(approved_at);
    match execution_date {
        Some(d) => first.max(at_hour(d, BATCH_HOURS[0])),
        None => first,
    }
}

fn store_available(cx: &Ctx<'_>, account: &Account) -> Result<Option<i64>, ApiError> {
    let Some(owner) = cx.store.customer(account.owner)? else {
        return Ok(None);
    };
    Ok(Some(
        crate::sandbox::domain::books::Book::of(cx.store, account, &owner, cx.clock.today())
            .balances()?
            .expected,
    ))
}

/// The available balance of `account`, minor units: the expected balance of the account
/// ([`crate::sandbox::domain::store::Store::balances`]: generated ledger, balance overrides and manual
/// transactions, which include the bookings of settled sandbox payments). `None` when the
/// account has no owner.
///
/// Errors: the database fails (503).
pub fn available_minor(cx: &Ctx<'_>, account: &Account) -> Result<Option<i64>, ApiError> {
    store_available(cx, account)
}

/// Serialises executions (batch runs, instant settlement): each reads balances through the
/// Store before its database transaction, so two at once could both spend the same funds.
static EXECUTION: Mutex<()> = Mutex::new(());

/// The PostgreSQL advisory lock of executions across instances ("PSD2" + 1).
pub const PG_EXECUTION_LOCK: i64 = 0x5053_4433;

/// The held execution lock ([`execution_lock`]).
#[derive(Debug)]
pub struct Executing {
    // Dropped first: the other instances' turn, then this process's.
    _instances: Option<crate::sandbox::store::shared::SessionLock>,
    _process: MutexGuard<'static, ()>,
}

/// Holds the execution lock (batch runs and instant settlement run one at a time); a
/// poisoned lock is reused (executions leave no half-done state: they run in one
/// transaction). On PostgreSQL (issue 21) the lock is also held across every instance on
/// the database (a session advisory lock, [`PG_EXECUTION_LOCK`]): a batch slot due on two
/// instances runs on one, and the other, after it, finds its payments executed (the
/// candidates are read again inside the write transaction) and books nothing twice; an
/// instant payment executed on one instance never spends balance another instance's batch
/// run read before it.
///
/// Errors: the database cannot be reached for the lock (503).
pub fn execution_lock(db: &crate::sandbox::store::db::Db) -> Result<Executing, ApiError> {
    let process = EXECUTION.lock().unwrap_or_else(|e| e.into_inner());
    let instances = match db.postgres_url() {
        Some(url) => Some(
            crate::sandbox::store::shared::exclusive(url, PG_EXECUTION_LOCK)
                .map_err(ApiError::from)?,
        ),
        None => None,
    };
    Ok(Executing {
        _instances: instances,
        _process: process,
    })
}

/// A debtor account as execution sees it.
#[derive(Debug, Clone)]
struct Debtor {
    account: Account,
    owner_name: String,
    /// Available balance read before the transaction, plus what this execution moved.
    available: Option<i64>,
}

/// What executing payments needs from the [`crate::sandbox::domain::store::Store`], read before the database
/// transaction: the Store shares the SQLite connection, so it must not be called inside
/// [`crate::sandbox::domain::db::Db::write`]. Keeps the balance movements of the executions it is used for.
#[derive(Debug, Default)]
pub struct Prepared {
    debtors: HashMap<String, Debtor>,
    /// Creditor BBAN → sandbox account, `None` outside the sandbox.
    creditors: HashMap<String, Option<Account>>,
}

/// Reads what executing `payments` needs ([`Prepared`]).
///
/// Errors: the database fails (503).
pub fn prepare(cx: &Ctx<'_>, payments: &[PaymentRow]) -> Result<Prepared, ApiError> {
    let mut p = Prepared::default();
    for pay in payments {
        if !p.debtors.contains_key(&pay.debtor_account)
            && let Some(a) = Uuid::parse_str(&pay.debtor_account)
                .ok()
                .map_or(Ok(None), |a| cx.store.account(a))?
        {
            let owner_name = cx
                .store
                .customer(a.owner)?
                .map(|c| c.name)
                .unwrap_or_default();
            let available = store_available(cx, &a)?;
            p.debtors.insert(
                pay.debtor_account.clone(),
                Debtor {
                    account: a,
                    owner_name,
                    available,
                },
            );
        }
        let service = Service::from_segment(&pay.service).unwrap_or(Service::Payments);
        let echo: Value = serde_json::from_str(&pay.body).unwrap_or(Value::Null);
        for (bban, _) in body::credits(service, &echo) {
            if let std::collections::hash_map::Entry::Vacant(e) = p.creditors.entry(bban) {
                let account = body::account_by_bban(cx, e.key())?;
                e.insert(account);
            }
        }
    }
    Ok(p)
}

/// The outcome of executing payments.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchReport {
    /// When the run happened (RFC 3339).
    pub ran_at: String,
    /// Payments settled (`ACSC`).
    pub settled: usize,
    /// Payments rejected for lack of funds (`ACCP`).
    pub insufficient_funds: usize,
    /// The caller's payments taken by the run: `{paymentId, transactionStatus}`.
    pub payments: Vec<Value>,
}

fn account_text(v: &Value) -> Option<String> {
    v["bban"]
        .as_str()
        .or_else(|| v["iban"].as_str())
        .map(str::to_string)
}

fn manual(id: Uuid, account: &Account, day: NaiveDate, amount: i64, at: i64) -> ManualTransaction {
    ManualTransaction {
        id,
        seq: 0,
        account: account.id,
        booked: true,
        booking_date: Some(day),
        value_date: day,
        amount,
        creditor_name: None,
        creditor_account: None,
        debtor_name: None,
        debtor_account: None,
        remittance: None,
        created_at: std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(u64::try_from(at).unwrap_or(0)),
    }
}

/// Books a settled payment as the Store's manual transactions ([`crate::sandbox::domain::store::
/// insert_manual_transaction`]), so it is listed under the account's booked transactions and
/// moves its balances: a debit per payment (per bulk entry, or one for the whole bulk with
/// `batchBookingPreferred`) on the debtor account, and a credit on each creditor account of
/// the sandbox in the same currency. Transaction ids are UUID v5 of the payment id.
fn book(
    c: &Conn<'_>,
    p: &PaymentRow,
    debtor: &Debtor,
    prepared: &mut Prepared,
    at: i64,
) -> crate::sandbox::store::sql::Result<()> {
    let day = chrono::DateTime::<chrono::Utc>::from_timestamp(at, 0)
        .map(|d| d.date_naive())
        .unwrap_or_default();
    let service = Service::from_segment(&p.service).unwrap_or(Service::Payments);
    let echo: Value = serde_json::from_str(&p.body).unwrap_or(Value::Null);
    let entries: Vec<Value> = match service {
        Service::BulkPayments => echo["payments"].as_array().cloned().unwrap_or_default(),
        _ => vec![echo.clone()],
    };
    let tx_id = |what: &str| {
        Uuid::new_v5(
            &crate::sandbox::domain::seed::namespace(),
            format!("payment:{}:{what}", p.id).as_bytes(),
        )
    };
    let minor_of = |e: &Value| {
        e["instructedAmount"]["amount"]
            .as_str()
            .and_then(parse_minor)
            .unwrap_or(0)
    };
    let batch_booking =
        service == Service::BulkPayments && echo["batchBookingPreferred"].as_bool() == Some(true);
    if batch_booking {
        let mut t = manual(tx_id("debit"), &debtor.account, day, -p.amount_minor, at);
        t.creditor_name = Some(format!("Bulk payment ({} payments)", entries.len()));
        t.debtor_name = Some(debtor.owner_name.clone());
        t.debtor_account = Some(debtor.account.bban.clone());
        t.remittance = echo["paymentInformationId"]
            .as_str()
            .map(str::to_string)
            .or_else(|| Some(format!("Bulk payment {}", p.id)));
        insert_manual_transaction(c, &t)?;
    }
    for (i, e) in entries.iter().enumerate() {
        let minor = minor_of(e);
        let creditor_name = e["creditorName"].as_str().map(str::to_string);
        let remittance = e["remittanceInformationUnstructured"]
            .as_str()
            .map(str::to_string);
        if !batch_booking {
            let mut t = manual(
                tx_id(&format!("debit:{i}")),
                &debtor.account,
                day,
                -minor,
                at,
            );
            t.creditor_name = creditor_name;
            t.creditor_account = account_text(&e["creditorAccount"]);
            t.debtor_name = Some(debtor.owner_name.clone());
            t.debtor_account = Some(debtor.account.bban.clone());
            t.remittance = remittance.clone();
            insert_manual_transaction(c, &t)?;
        }
        let to = body::credits(Service::Payments, e)
            .into_iter()
            .next()
            .and_then(|(bban, _)| prepared.creditors.get(&bban).cloned().flatten())
            .filter(|a| a.currency == p.currency);
        if let Some(to) = to {
            let mut t = manual(tx_id(&format!("credit:{i}")), &to, day, minor, at);
            t.creditor_name = e["creditorName"].as_str().map(str::to_string);
            t.creditor_account = Some(to.bban.clone());
            t.debtor_name = Some(debtor.owner_name.clone());
            t.debtor_account = Some(debtor.account.bban.clone());
            t.remittance = remittance;
            insert_manual_transaction(c, &t)?;
            if let Some(d) = prepared.debtors.get_mut(&to.id.to_string()) {
                d.available = d.available.map(|a| a.saturating_add(minor));
            }
        }
    }
    Ok(())
}

/// Executes one authorised payment at `at` (inside the caller's transaction; `prepared` from
/// [`prepare`], under [`execution_lock`]): when the debtor account's available balance
/// ([`available_minor`], less what earlier executions with the same `prepared` spent) covers
/// the amount, `ACSC` and its bookings (a debit on the debtor account, credits on sandbox creditor
/// accounts: booked manual transactions of the Store); otherwise `ACCP` with
/// `fundsAvailable: false`. Returns the new status.
///
/// Errors: SQLite errors.
pub fn execute(
    c: &Conn<'_>,
    p: &PaymentRow,
    at: i64,
    prepared: &mut Prepared,
) -> crate::sandbox::store::sql::Result<&'static str> {
    // A fault rule may force the outcome (`crate::sandbox::http::faults`, payment actions).
    if let Some(outcome) = crate::sandbox::domain::faults::payment_outcome(c, p)? {
        return outcome.apply(c, &p.id, at);
    }
    let Some(debtor) = prepared.debtors.get(&p.debtor_account).cloned() else {
        rows::executed(
            c,
            &p.id,
            status::ACCP,
            false,
            at,
            "the debtor account no longer exists",
        )?;
        return Ok(status::ACCP);
    };
    let available = debtor.available.unwrap_or(0);
    if available < p.amount_minor {
        rows::executed(
            c,
            &p.id,
            status::ACCP,
            false,
            at,
            &format!(
                "rejected for lack of funds at {}: available {} {}, needed {} {}",
                rfc3339(at),
                format_minor(available),
                debtor.account.currency,
                format_minor(p.amount_minor),
                p.currency
            ),
        )?;
        return Ok(status::ACCP);
    }
    if let Some(d) = prepared.debtors.get_mut(&p.debtor_account) {
        d.available = Some(available.saturating_sub(p.amount_minor));
    }
    book(c, p, &debtor, prepared, at)?;
    rows::executed(
        c,
        &p.id,
        status::ACSC,
        true,
        at,
        &format!("settled at {}", rfc3339(at)),
    )?;
    Ok(status::ACSC)
}

/// One batch run now: executes the authorised payments that are due (`all`: every
/// authorised one, `POST /v1/sandbox/batch`); the report lists the payments of `tpp`.
///
/// Errors: the state database failed (503).
pub fn run(cx: &Ctx<'_>, tpp: Option<&str>, all: bool) -> Result<BatchReport, ApiError> {
    let _running = execution_lock(cx.db)?;
    let now = now_secs(cx);
    let which = if all {
        rows::Batch::AllAuthorised
    } else {
        rows::Batch::Due
    };
    // In a TPP's world (a request, an SCA page) only that TPP's payments run: another TPP's
    // clock or batch never executes them (issue 20).
    let world = crate::sandbox::clock::current_world();
    let mine = |p: &PaymentRow| world.as_deref().is_none_or(|w| w == p.tpp);
    let mut candidates = cx.db.read(|c| rows::batch_candidates(c, which, now))?;
    candidates.retain(|p| mine(p));
    let mut prepared = prepare(cx, &candidates)?;
    let known: Vec<&str> = candidates.iter().map(|p| p.id.as_str()).collect();
    let report = cx.db.write(|tx| {
        // Again inside the transaction: a payment may have been cancelled meanwhile.
        let due = rows::batch_candidates(tx, which, now)?;
        let mut report = BatchReport {
            ran_at: rfc3339(now),
            ..BatchReport::default()
        };
        for p in due
            .iter()
            .filter(|p| mine(p) && known.contains(&p.id.as_str()))
        {
            let at = if all {
                now
            } else {
                p.due_at.unwrap_or(now).min(now)
            };
            let s = execute(tx, p, at, &mut prepared)?;
            if s == status::ACSC {
                report.settled += 1;
            } else if s == status::ACCP {
                report.insufficient_funds += 1;
            }
            if tpp == Some(p.tpp.as_str()) {
                report
                    .payments
                    .push(json!({"paymentId": p.id, "transactionStatus": s}));
            }
        }
        Ok::<_, ApiError>(report)
    })?;
    cx.events.emit(tpp, || {
        crate::sandbox::domain::events::Event::Batch(crate::sandbox::domain::events::BatchEvent {
            ran_at: report.ran_at.clone(),
            settled: report.settled,
            insufficient_funds: report.insufficient_funds,
            all,
        })
    });
    Ok(report)
}

/// Executes every authorised payment whose batch run time has passed on the sandbox clock.
///
/// Errors: the state database failed (503).
pub fn run_due(cx: &Ctx<'_>) -> Result<BatchReport, ApiError> {
    let now = now_secs(cx);
    // One statement: on PostgreSQL one round trip, no transaction.
    let any = cx
        .db
        .read_single(|c| rows::any_due(c, now))
        .map_err(crate::sandbox::store::error::StoreError::from)?;
    if !any {
        return Ok(BatchReport {
            ran_at: rfc3339(now),
            ..BatchReport::default()
        });
    }
    run(cx, None, false)
}

/// [`run_due`] when the caller already read whether a payment is due (`due`, e.g. with
/// [`crate::sandbox::store::Store::payment_context`] in the same statement as its other
/// reads): runs the due batch runs only when it is.
///
/// Errors: those of [`run`].
pub fn run_if_due(cx: &Ctx<'_>, due: bool) -> Result<(), ApiError> {
    if due {
        run(cx, None, false)?;
    }
    Ok(())
}

/// Authorises the `RCVD` payments among `ids` for `customer` (SCA approval, inside the
/// caller's transaction, under [`execution_lock`]): `ACTC` with their batch run time;
/// instant payments are executed at once (`ACSC` or `ACCP`, with `prepared` from
/// [`prepare`]); periodic ones get no batch run. Returns (paymentId, new status) of each
/// payment authorised.
///
/// Errors: SQLite errors.
pub fn authorise(
    c: &Conn<'_>,
    ids: &[String],
    customer: Uuid,
    psu_id: Uuid,
    agreement: Option<Uuid>,
    now: i64,
    prepared: &mut Prepared,
) -> crate::sandbox::store::sql::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let agreement = agreement.map(|a| a.to_string());
    for id in ids {
        let Some(p) = rows::payment(c, id)? else {
            continue;
        };
        if p.status != status::RCVD {
            continue;
        }
        let periodic = p.service == Service::PeriodicPayments.segment();
        let instant = kind_of(&p) == Some(body::PaymentType::Instant);
        let execution = p
            .execution_date
            .as_deref()
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok());
        let due = (!periodic && !instant).then(|| due_at(now, execution));
        rows::approve(
            c,
            id,
            status::ACTC,
            &customer.to_string(),
            &psu_id.to_string(),
            agreement.as_deref(),
            now,
            due,
        )?;
        let s = if instant {
            let mut p = p;
            p.status = status::ACTC.into();
            execute(c, &p, now, prepared)?.to_string()
        } else {
            status::ACTC.to_string()
        };
        out.push((id.clone(), s));
    }
    Ok(out)
}

/// The payment `id` of `tpp`.
///
/// Errors: 404 `RESOURCE_UNKNOWN` for an unknown id; 403 `RESOURCE_UNKNOWN` for another
/// TPP's payment; storage (503).
fn own(cx: &Ctx<'_>, tpp: &TppId, id: &str) -> Result<PaymentRow, ApiError> {
    let p = cx
        .db
        .read(|c| rows::payment(c, id))?
        .ok_or_else(|| ApiError::not_found(format!("no payment has the id {id:?}")))?;
    if *p.tpp != *tpp.0 {
        return Err(ApiError::forbidden_unknown(format!(
            "payment {id} was not initiated by this TPP"
        )));
    }
    Ok(p)
}

/// Puts payment `id` of `tpp` on hold at the bank (`PDNG`, remembering its status): batch
/// runs skip it until [`release`].
///
/// Errors: those of [`own`]; 409 `STATUS_INVALID` unless the payment is `RCVD` or `ACTC`.
pub fn hold(cx: &Ctx<'_>, tpp: &TppId, id: &str) -> Result<(), ApiError> {
    own(cx, tpp, id)?;
    cx.db.write(|tx| {
        let p = rows::payment(tx, id)?
            .ok_or_else(|| ApiError::not_found(format!("no payment {id}")))?;
        if p.status != status::RCVD && p.status != status::ACTC {
            return Err(ApiError::new(
                MessageCode::StatusInvalid,
                format!(
                    "payment {id} has status {} and cannot be put on hold",
                    p.status
                ),
            ));
        }
        Ok(rows::set_hold(
            tx,
            id,
            status::PDNG,
            Some(&p.status),
            "on hold at the bank for further checks",
        )?)
    })
}

/// Ends the hold of payment `id` of `tpp`: it gets its status from before the hold, then the
/// due batch runs run ([`run_due`]). Returns its status after them.
///
/// Errors: those of [`own`]; 409 `STATUS_INVALID` when it is not on hold; storage (503).
pub fn release(cx: &Ctx<'_>, tpp: &TppId, id: &str) -> Result<String, ApiError> {
    own(cx, tpp, id)?;
    let back = cx.db.write(|tx| {
        let p = rows::payment(tx, id)?
            .ok_or_else(|| ApiError::not_found(format!("no payment {id}")))?;
        if p.status != status::PDNG {
            return Err(ApiError::new(
                MessageCode::StatusInvalid,
                format!("payment {id} is not on hold (status {})", p.status),
            ));
        }
        let back = p.held_from.unwrap_or_else(|| status::RCVD.to_string());
        rows::set_hold(tx, id, &back, None, "released by the bank")?;
        Ok(back)
    })?;
    run_due(cx)?;
    Ok(cx
        .db
        .read(|c| rows::payment(c, id))?
        .map(|p| p.status)
        .unwrap_or(back))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_times_are_the_five_daily_runs() {
        let day = NaiveDate::from_ymd_opt(2026, 9, 1).unwrap();
        assert_eq!(next_batch_at(at_hour(day, 6)), at_hour(day, 6));
        assert_eq!(next_batch_at(at_hour(day, 6) + 1), at_hour(day, 9));
        assert_eq!(
            next_batch_at(at_hour(day, 18) + 1),
            at_hour(day.succ_opt().unwrap(), 6)
        );
        assert_eq!(next_batch_at(at_hour(day, 0)), at_hour(day, 6));
        let later = NaiveDate::from_ymd_opt(2026, 9, 5).unwrap();
        assert_eq!(due_at(at_hour(day, 10), Some(later)), at_hour(later, 6));
        assert_eq!(due_at(at_hour(day, 10), Some(day)), at_hour(day, 12));
    }
}
