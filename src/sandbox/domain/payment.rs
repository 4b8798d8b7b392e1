//! The payment types of the domain: a validated payment initiation ([`Initiation`], what
//! [`crate::sandbox::http::payments::body::parse`] makes of a request body), the payment
//! products and services (defined with the protocol in [`crate::xs2a::payment`]), and what
//! settlement reads from a stored body ([`credits`], [`account_by_bban`]).

use chrono::NaiveDate;
use serde_json::{Map, Value};

use crate::sandbox::App;
use crate::sandbox::errors::ApiError;
use crate::sandbox::model::Account;
use crate::xs2a::model::parse_minor;

pub use crate::xs2a::payment::{
    DOMESTIC_NORWAY, INSTANT, INSTANT_MAX_MINOR, PRODUCTS, PaymentType, Product,
    STRUCTURED_ADDRESS_ENFORCEMENT, Service,
};

/// A validated payment initiation.
#[derive(Debug, Clone)]
pub struct Initiation {
    /// The normalised body echoed by the details call (known fields only; amounts as
    /// two-decimal strings; legacy address names mapped to the current ones).
    pub echo: Map<String, Value>,
    /// The debtor's sandbox account.
    pub debtor: Account,
    /// Currency of the instructed amount(s).
    pub currency: String,
    /// Sum of the instructed amounts, minor units.
    pub total_minor: i64,
    /// `requestedExecutionDate` (single, bulk) or `startDate` (periodic).
    pub execution_date: Option<NaiveDate>,
    /// Debtor, creditor(s), amount, date and remittance: equal keys are logical duplicates.
    pub dedup_key: String,
    /// `WARNING` texts for the 201 answer.
    pub warnings: Vec<String>,
}

/// The sandbox account with this BBAN ([`crate::sandbox::store::Store::account_by_bban`]).
///
/// Errors: the database fails (503).
pub fn account_by_bban(app: &App, bban: &str) -> Result<Option<Account>, ApiError> {
    app.store.account_by_bban(bban)
}

/// The credits of a stored payment body to accounts identified by BBAN: (bban, minor units)
/// for each single payment or bulk entry whose creditor is a Norwegian account.
pub fn credits(service: Service, echo: &Value) -> Vec<(String, i64)> {
    let one = |v: &Value| -> Option<(String, i64)> {
        let c = &v["creditorAccount"];
        let bban = c["bban"].as_str().map(str::to_string).or_else(|| {
            c["iban"]
                .as_str()
                .filter(|i| i.starts_with("NO") && i.len() == 15)
                .map(|i| i[4..].to_string())
        })?;
        let minor = parse_minor(v["instructedAmount"]["amount"].as_str()?)?;
        Some((bban, minor))
    };
    match service {
        Service::BulkPayments => echo["payments"]
            .as_array()
            .map(|a| a.iter().filter_map(one).collect())
            .unwrap_or_default(),
        _ => one(echo).into_iter().collect(),
    }
}
