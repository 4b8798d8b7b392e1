//! Read-only lists of the sandbox's resources for `GET /v1/sandbox/state`
//! ([`crate::sandbox::state`]): every consent resource, payment and signing basket of every
//! TPP, oldest first, with the statuses stored. Times are Unix seconds on the sandbox clock.

use rusqlite::Connection;

/// One consent resource (`consent_resources`): its stored status (`received`, `valid`,
/// `rejected`, `terminatedByTpp`; the `consentStatus` now is computed from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentResourceRow {
    pub id: String,
    pub tpp: String,
    pub status: String,
    pub psu_id: Option<String>,
    pub created_at: i64,
}

/// One payment (`pis_payments`) with the `scaStatus` of its latest authorisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentOverviewRow {
    pub id: String,
    pub tpp: String,
    /// `payments`, `bulk-payments` or `periodic-payments`.
    pub service: String,
    pub product: String,
    /// ISO 20022 `transactionStatus`.
    pub status: String,
    pub amount_minor: i64,
    pub currency: String,
    pub psu_id: Option<String>,
    pub sca_status: Option<String>,
    pub created_at: i64,
}

/// One signing basket (`pis_baskets`) with its payments and latest `scaStatus`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BasketOverviewRow {
    pub id: String,
    pub tpp: String,
    pub cancelled: bool,
    pub authorised: bool,
    pub payments: Vec<String>,
    pub sca_status: Option<String>,
    pub created_at: i64,
}

/// Every consent resource, oldest first.
pub fn consent_resources(c: &Connection) -> rusqlite::Result<Vec<ConsentResourceRow>> {
    let mut st = c.prepare(
        "SELECT id, tpp, status, psu_id, created_at FROM consent_resources
         ORDER BY created_at, id",
    )?;
    st.query_map([], |r| {
        Ok(ConsentResourceRow {
            id: r.get(0)?,
            tpp: r.get(1)?,
            status: r.get(2)?,
            psu_id: r.get(3)?,
            created_at: r.get(4)?,
        })
    })?
    .collect()
}

/// The `scaStatus` of the latest authorisation of `column` (`payment` or `basket`) = `id`.
const LATEST_SCA: &str = "SELECT a.sca_status FROM pis_authorisations a
     WHERE a.{col} = {tbl}.id ORDER BY a.created_at DESC, a.id DESC LIMIT 1";

/// Every payment, oldest first.
pub fn payments(c: &Connection) -> rusqlite::Result<Vec<PaymentOverviewRow>> {
    let latest = LATEST_SCA.replace("{col}", "payment").replace("{tbl}", "p");
    let mut st = c.prepare(&format!(
        "SELECT p.id, p.tpp, p.service, p.product, p.status, p.amount_minor, p.currency,
                p.psu_id, ({latest}), p.created_at
         FROM pis_payments p ORDER BY p.created_at, p.id"
    ))?;
    st.query_map([], |r| {
        Ok(PaymentOverviewRow {
            id: r.get(0)?,
            tpp: r.get(1)?,
            service: r.get(2)?,
            product: r.get(3)?,
            status: r.get(4)?,
            amount_minor: r.get(5)?,
            currency: r.get(6)?,
            psu_id: r.get(7)?,
            sca_status: r.get(8)?,
            created_at: r.get(9)?,
        })
    })?
    .collect()
}

/// Every signing basket with its payment ids in order, oldest first.
pub fn baskets(c: &Connection) -> rusqlite::Result<Vec<BasketOverviewRow>> {
    let latest = LATEST_SCA.replace("{col}", "basket").replace("{tbl}", "b");
    let mut st = c.prepare(&format!(
        "SELECT b.id, b.tpp, b.cancelled, b.authorised, ({latest}), b.created_at
         FROM pis_baskets b ORDER BY b.created_at, b.id"
    ))?;
    let mut rows: Vec<BasketOverviewRow> = st
        .query_map([], |r| {
            Ok(BasketOverviewRow {
                id: r.get(0)?,
                tpp: r.get(1)?,
                cancelled: r.get(2)?,
                authorised: r.get(3)?,
                sca_status: r.get(4)?,
                created_at: r.get(5)?,
                payments: Vec::new(),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut members =
        c.prepare("SELECT payment FROM pis_basket_payments WHERE basket = ?1 ORDER BY position")?;
    for b in &mut rows {
        b.payments = members
            .query_map([&b.id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
    }
    Ok(rows)
}
