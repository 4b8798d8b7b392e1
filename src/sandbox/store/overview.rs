//! Read-only lists of the sandbox's resources for `GET /v1/sandbox/state`
//! ([`crate::sandbox::http::state`]): every consent resource, payment and signing basket of every
//! TPP, oldest first, with the statuses stored, a page at a time (keyset pagination on
//! `(created_at, id)`, so a page costs the same however many rows precede it). Times are
//! Unix seconds on the sandbox clock.

use crate::sandbox::store::sql::{Conn, params};

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

/// One page of a list: at most `limit` entries after `after`, oldest first (ordered by
/// creation time and id, through each table's `..._by_created` index).
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// Where the page starts.
    pub after: After<'a>,
    /// How many entries it holds at most.
    pub limit: usize,
}

impl Page<'_> {
    /// The page of `SELECT {columns} FROM {table} {t}` (`t`: the table's alias in
    /// `columns`).
    fn read<T>(
        self,
        c: &Conn<'_>,
        (columns, table, t): (&str, &str, &str),
        row: fn(&crate::sandbox::store::sql::Row) -> crate::sandbox::store::sql::Result<T>,
    ) -> crate::sandbox::store::sql::Result<Vec<T>> {
        let (cond, at, id) = match self.after {
            Some((at, id)) => (
                format!("({t}.created_at, {t}.id) > (?1, ?2)"),
                at,
                id.to_string(),
            ),
            None => ("?1 = ?1 AND ?2 = ?2".to_string(), 0, String::new()),
        };
        c.prepare_cached(&format!(
            "SELECT {columns} FROM {table} {t} WHERE {cond} ORDER BY {t}.created_at, {t}.id \
             LIMIT ?3"
        ))?
        .query_map(params![at, id, self.limit as i64], row)?
        .collect()
    }

    /// The consent resources (index `consent_resources_by_created`).
    pub fn consent_resources(
        self,
        c: &Conn<'_>,
    ) -> crate::sandbox::store::sql::Result<Vec<ConsentResourceRow>> {
        let from = (ConsentResourceRow::COLUMNS, "consent_resources", "r");
        self.read(c, from, ConsentResourceRow::from_row)
    }

    /// The payments (index `pis_payments_by_created`).
    pub fn payments(
        self,
        c: &Conn<'_>,
    ) -> crate::sandbox::store::sql::Result<Vec<PaymentOverviewRow>> {
        let columns = format!(
            "p.id, p.tpp, p.service, p.product, p.status, p.amount_minor, p.currency, \
             p.psu_id, ({}), p.created_at",
            latest_sca("payment", "p")
        );
        self.read(
            c,
            (&columns, "pis_payments", "p"),
            PaymentOverviewRow::from_row,
        )
    }

    /// The signing baskets with their payment ids in order (index `pis_baskets_by_created`).
    pub fn baskets(
        self,
        c: &Conn<'_>,
    ) -> crate::sandbox::store::sql::Result<Vec<BasketOverviewRow>> {
        let columns = format!(
            "b.id, b.tpp, b.cancelled, b.authorised, ({}), b.created_at",
            latest_sca("basket", "b")
        );
        let mut rows = self.read(
            c,
            (&columns, "pis_baskets", "b"),
            BasketOverviewRow::from_row,
        )?;
        for b in &mut rows {
            b.payments = crate::sandbox::store::payments::basket_payments(c, &b.id)?;
        }
        Ok(rows)
    }
}

/// The `scaStatus` of the latest authorisation of `column` (`payment` or `basket`) = the
/// row of table alias `table`.
fn latest_sca(column: &str, table: &str) -> String {
    format!(
        "SELECT a.sca_status FROM pis_authorisations a \
         WHERE a.{column} = {table}.id ORDER BY a.created_at DESC, a.id DESC LIMIT 1"
    )
}

/// How many rows `table` (`consent_resources`, `pis_payments` or `pis_baskets`) holds.
pub fn count(c: &Conn<'_>, table: List) -> crate::sandbox::store::sql::Result<i64> {
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
