//! Read-only lists of the sandbox's resources for `GET /v1/sandbox/state`
//! ([`crate::sandbox::state`]): every consent resource, payment and signing basket of every
//! TPP, oldest first, with the statuses stored. Times are Unix seconds on the sandbox clock.

use rusqlite::Connection;

table_row! {
    /// One consent resource (`consent_resources`): its stored status (`received`, `valid`,
    /// `rejected`, `terminatedByTpp`; the `consentStatus` now is computed from it).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ConsentResourceRow {
        columns {
            id: String,
            tpp: String,
            status: String,
            psu_id: Option<String>,
            created_at: i64,
        }
    }
}

table_row! {
    /// One payment (`pis_payments`) with the `scaStatus` of its latest authorisation.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct PaymentOverviewRow {
        columns {
            id: String,
            tpp: String,
            /// `payments`, `bulk-payments` or `periodic-payments`.
            service: String,
            product: String,
            /// ISO 20022 `transactionStatus`.
            status: String,
            amount_minor: i64,
            currency: String,
            psu_id: Option<String>,
            sca_status: Option<String>,
            created_at: i64,
        }
    }
}

table_row! {
    /// One signing basket (`pis_baskets`) with its payments and latest `scaStatus`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct BasketOverviewRow {
        columns {
            id: String,
            tpp: String,
            cancelled: bool,
            authorised: bool,
            sca_status: Option<String>,
            created_at: i64,
        }
        filled_later {
            payments: Vec<String>,
        }
    }
}

/// Every consent resource, oldest first.
pub fn consent_resources(c: &Connection) -> rusqlite::Result<Vec<ConsentResourceRow>> {
    let mut st = c.prepare(&format!(
        "SELECT {} FROM consent_resources ORDER BY created_at, id",
        ConsentResourceRow::COLUMNS
    ))?;
    st.query_map([], ConsentResourceRow::from_row)?.collect()
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
    st.query_map([], PaymentOverviewRow::from_row)?.collect()
}

/// Every signing basket with its payment ids in order, oldest first.
pub fn baskets(c: &Connection) -> rusqlite::Result<Vec<BasketOverviewRow>> {
    let latest = LATEST_SCA.replace("{col}", "basket").replace("{tbl}", "b");
    let mut st = c.prepare(&format!(
        "SELECT b.id, b.tpp, b.cancelled, b.authorised, ({latest}), b.created_at
         FROM pis_baskets b ORDER BY b.created_at, b.id"
    ))?;
    let mut rows: Vec<BasketOverviewRow> = st
        .query_map([], BasketOverviewRow::from_row)?
        .collect::<rusqlite::Result<_>>()?;
    for b in &mut rows {
        b.payments = super::payments::basket_payments(c, &b.id)?;
    }
    Ok(rows)
}
