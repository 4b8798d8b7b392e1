//! Read-only lists of the sandbox's resources for `GET /v1/sandbox/state`
//! ([`crate::sandbox::http::state`]): every consent resource, payment and signing basket of every
//! TPP, oldest first, with the statuses stored, a page at a time (keyset pagination on
//! `(created_at, id)`, so a page costs the same however many rows precede it). Times are
//! Unix seconds on the sandbox clock.

use rusqlite::{Connection, params};

table_row! {
    /// One consent resource (`consent_resources`): its stored status (`received`, `valid`,
    /// `rejected`, `terminatedByTpp`; the `consentStatus` now is computed from it).
    #[derive(Debug, Clone, PartialEq, Eq)]
    // The fields are the table's columns, named and described in its migration.
    #[allow(missing_docs)]
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
    // The fields are the table's columns, named and described in its migration.
    #[allow(missing_docs)]
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
    // The fields are the table's columns, named and described in its migration.
    #[allow(missing_docs)]
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

/// Where a page of a list starts: after the entry with this creation time (Unix seconds)
/// and id (the lists are ordered by both), or at the start.
pub type After<'a> = Option<(i64, &'a str)>;

/// The condition and its two parameters for `after` on the list of table alias `t`.
fn after_sql(t: &str, after: After<'_>) -> (String, i64, String) {
    match after {
        Some((at, id)) => (
            format!("({t}.created_at, {t}.id) > (?1, ?2)"),
            at,
            id.to_string(),
        ),
        None => ("?1 = ?1 AND ?2 = ?2".to_string(), 0, String::new()),
    }
}

/// At most `limit` consent resources after `after`, oldest first (through the index
/// `consent_resources_by_created`).
pub fn consent_resources(
    c: &Connection,
    after: After<'_>,
    limit: usize,
) -> rusqlite::Result<Vec<ConsentResourceRow>> {
    let (cond, at, id) = after_sql("r", after);
    let mut st = c.prepare_cached(&format!(
        "SELECT {} FROM consent_resources r WHERE {cond} ORDER BY r.created_at, r.id LIMIT ?3",
        ConsentResourceRow::COLUMNS
    ))?;
    st.query_map(params![at, id, limit as i64], ConsentResourceRow::from_row)?
        .collect()
}

/// The `scaStatus` of the latest authorisation of `column` (`payment` or `basket`) = `id`.
const LATEST_SCA: &str = "SELECT a.sca_status FROM pis_authorisations a
     WHERE a.{col} = {tbl}.id ORDER BY a.created_at DESC, a.id DESC LIMIT 1";

/// At most `limit` payments after `after`, oldest first (index `pis_payments_by_created`).
pub fn payments(
    c: &Connection,
    after: After<'_>,
    limit: usize,
) -> rusqlite::Result<Vec<PaymentOverviewRow>> {
    let latest = LATEST_SCA.replace("{col}", "payment").replace("{tbl}", "p");
    let (cond, at, id) = after_sql("p", after);
    let mut st = c.prepare_cached(&format!(
        "SELECT p.id, p.tpp, p.service, p.product, p.status, p.amount_minor, p.currency,
                p.psu_id, ({latest}), p.created_at
         FROM pis_payments p WHERE {cond} ORDER BY p.created_at, p.id LIMIT ?3"
    ))?;
    st.query_map(params![at, id, limit as i64], PaymentOverviewRow::from_row)?
        .collect()
}

/// At most `limit` signing baskets after `after` with their payment ids in order, oldest
/// first (index `pis_baskets_by_created`).
pub fn baskets(
    c: &Connection,
    after: After<'_>,
    limit: usize,
) -> rusqlite::Result<Vec<BasketOverviewRow>> {
    let latest = LATEST_SCA.replace("{col}", "basket").replace("{tbl}", "b");
    let (cond, at, id) = after_sql("b", after);
    let mut st = c.prepare_cached(&format!(
        "SELECT b.id, b.tpp, b.cancelled, b.authorised, ({latest}), b.created_at
         FROM pis_baskets b WHERE {cond} ORDER BY b.created_at, b.id LIMIT ?3"
    ))?;
    let mut rows: Vec<BasketOverviewRow> = st
        .query_map(params![at, id, limit as i64], BasketOverviewRow::from_row)?
        .collect::<rusqlite::Result<_>>()?;
    for b in &mut rows {
        b.payments = crate::sandbox::store::payments::basket_payments(c, &b.id)?;
    }
    Ok(rows)
}

/// How many rows `table` (`consent_resources`, `pis_payments` or `pis_baskets`) holds.
pub fn count(c: &Connection, table: List) -> rusqlite::Result<i64> {
    c.prepare_cached(&format!("SELECT COUNT(*) FROM {}", table.table()))?
        .query_row([], |r| r.get(0))
}

/// The paginated lists of the state browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    /// `consents`: `consent_resources`.
    Consents,
    /// `payments`: `pis_payments`.
    Payments,
    /// `baskets`: `pis_baskets`.
    Baskets,
}

impl List {
    /// Every list, in the answer's order.
    pub const ALL: [List; 3] = [List::Consents, List::Payments, List::Baskets];

    /// The list's name in the answer and in the `list` query parameter.
    pub fn name(self) -> &'static str {
        match self {
            List::Consents => "consents",
            List::Payments => "payments",
            List::Baskets => "baskets",
        }
    }

    /// The list named `name`.
    pub fn parse(name: &str) -> Option<List> {
        List::ALL.into_iter().find(|l| l.name() == name)
    }

    fn table(self) -> &'static str {
        match self {
            List::Consents => "consent_resources",
            List::Payments => "pis_payments",
            List::Baskets => "pis_baskets",
        }
    }
}
