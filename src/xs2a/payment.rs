//! Payment services, payment products and payment types: the one table of the
//! `{payment-service}` and `{payment-product}` path segments, used by the sandbox (routing and
//! body rules, [`crate::sandbox::http::payments::body`]) and by the console's request validator
//! ([`crate::client::validate`]).
//!
//! Source: interface document, Resources ("Payment types named: cross-border (NCBCT), SEPA,
//! SWIFT, bulk, periodic") and "GET /v1/payments/{payment-product}/{payment-id}"; the bank's
//! Postman collections for the aliases; Berlin Group `paymentService` / `paymentProduct`.
//! Refusals are a [`ProductError`], which names its Berlin Group message code
//! ([`ProductError::message_code`]) so each side can answer or show it in its own way.

use serde_json::{Map, Value};

use crate::xs2a::error::MessageCode;
use crate::xs2a::fields::{Json, JsonObject};

/// Sandbox enforcement date of structured creditor addresses (interface document, Versioning:
/// "Sandbox enforcement starts 2026-08-13; production enforcement 2026-11-15").
pub const STRUCTURED_ADDRESS_ENFORCEMENT: (i32, u32, u32) = (2026, 8, 13);

/// The parts a SEPA, SWIFT or NCBCT payment needs from [`STRUCTURED_ADDRESS_ENFORCEMENT`]
/// (interface document, Versioning, structured addresses), as paths below the payment (or
/// bulk entry): the creditor's name, town and country, and the creditor agent BIC.
pub(crate) const STRUCTURED_ADDRESS_PARTS: [&str; 4] = [
    "creditorName",
    "creditorAddress.townName",
    "creditorAddress.country",
    "creditorAgent",
];

/// The parts of [`STRUCTURED_ADDRESS_PARTS`] that the payment (or bulk entry) `part` lacks,
/// in that order. A part is present when it is a string that is not blank; the town may also
/// be given by its deprecated name `creditorAddress.city`.
pub(crate) fn missing_structured_parts(part: &Map<String, Value>) -> Vec<&'static str> {
    missing_structured_parts_of::<Value>(part)
}

/// [`missing_structured_parts`] of a part of any JSON tree the body reader reads
/// ([`crate::xs2a::fields::Json`]; the sandbox's payment bodies are a borrowed tree).
pub(crate) fn missing_structured_parts_of<V: Json>(part: &V::Object) -> Vec<&'static str> {
    let present = |v: Option<&V>| v.and_then(V::as_str).is_some_and(|s| !s.trim().is_empty());
    let address = part.get("creditorAddress").and_then(V::as_object);
    let has = [
        present(part.get("creditorName")),
        address.is_some_and(|a| present(a.get("townName")) || present(a.get("city"))),
        address.is_some_and(|a| present(a.get("country"))),
        present(part.get("creditorAgent")),
    ];
    STRUCTURED_ADDRESS_PARTS
        .into_iter()
        .zip(has)
        .filter(|(_, has)| !has)
        .map(|(p, _)| p)
        .collect()
}

/// Largest instant (Straks) payment, minor units: NOK 500 000.00 (published by
/// `fee-information`; the interface document does not state a limit).
pub const INSTANT_MAX_MINOR: i64 = 50_000_000;

/// The `{payment-service}` path segment (Berlin Group `paymentService`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// `payments`: a single payment.
    Payments,
    /// `bulk-payments`: one debtor account, `payments[]` entries.
    BulkPayments,
    /// `periodic-payments`: a standing order (`startDate`, `frequency`, ...).
    PeriodicPayments,
}

impl Service {
    /// The path segment, e.g. `bulk-payments`.
    pub fn segment(self) -> &'static str {
        match self {
            Service::Payments => "payments",
            Service::BulkPayments => "bulk-payments",
            Service::PeriodicPayments => "periodic-payments",
        }
    }

    /// The service of a stored segment.
    pub(crate) fn from_segment(s: &str) -> Option<Self> {
        match s {
            "payments" => Some(Service::Payments),
            "bulk-payments" => Some(Service::BulkPayments),
            "periodic-payments" => Some(Service::PeriodicPayments),
            _ => None,
        }
    }
}

/// The payment types named by the interface document ("Payment types named: cross-border
/// (NCBCT), SEPA, SWIFT, bulk, periodic"), plus the domestic and instant products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentType {
    /// Norwegian domestic credit transfer (NOK, 11-digit BBAN with MOD11 check digit).
    Domestic,
    /// Instant domestic transfer (Straks): settles at approval, NOK, at most
    /// [`INSTANT_MAX_MINOR`].
    Instant,
    /// Domestic transfer between two accounts of the same customer.
    OwnTransfer,
    /// Norwegian cross-border credit transfer (non-SEPA; sent over SWIFT): creditor IBAN, any
    /// currency, `serviceLevel` may be urgent.
    Ncbct,
    /// SEPA credit transfer: EUR, creditor IBAN; regulatory reporting accepted.
    Sepa,
    /// SWIFT payment: creditor IBAN or BBAN, any currency, `serviceLevel` may be urgent.
    Swift,
}

impl PaymentType {
    /// Stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentType::Domestic => "DOMESTIC",
            PaymentType::Instant => "INSTANT",
            PaymentType::OwnTransfer => "OWN_TRANSFER",
            PaymentType::Ncbct => "NCBCT",
            PaymentType::Sepa => "SEPA",
            PaymentType::Swift => "SWIFT",
        }
    }

    /// The type of a stored name.
    pub(crate) fn from_str_opt(s: &str) -> Option<Self> {
        [
            PaymentType::Domestic,
            PaymentType::Instant,
            PaymentType::OwnTransfer,
            PaymentType::Ncbct,
            PaymentType::Sepa,
            PaymentType::Swift,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
    }

    /// Whether the structured creditor address rule applies (SEPA and SWIFT per the
    /// interface document; NCBCT payments travel over SWIFT, so they are included).
    pub(crate) fn needs_structured_address(self) -> bool {
        matches!(
            self,
            PaymentType::Ncbct | PaymentType::Sepa | PaymentType::Swift
        )
    }

    /// Whether the type is a Norwegian domestic one (domestic, instant, own transfer): NOK
    /// and a Norwegian creditor account.
    pub(crate) fn is_domestic(self) -> bool {
        matches!(
            self,
            PaymentType::Domestic | PaymentType::Instant | PaymentType::OwnTransfer
        )
    }
}

/// A payment product: the canonical path name and its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Product {
    /// The canonical `{payment-product}` name (an alias maps to it).
    pub name: &'static str,
    /// The product's payment type.
    pub kind: PaymentType,
}

/// The product whose details and status cannot be read before approval (interface document,
/// "GET /v1/payments/{payment-product}/{payment-id}").
pub const DOMESTIC_NORWAY: &str = "domestic-norway-credit-transfers";

/// The instant product (canonical spelling of the interface document).
pub const INSTANT: &str = "instant-norwegian-credit-transfers-straks";

/// Accepted `{payment-product}` segments → (canonical name, type).
///
/// The three products of the interface document; `instant-norwegian-domestic-credit-
/// transfers-straks` (the spelling of the bank's v2 Postman collection) is an alias of the
/// instant product; the Postman collections' `norwegian-cross-border-credit-transfers` (NCBCT),
/// `sepa-credit-transfers` (SEPA) and `norwegian-domestic-payment-to-self` (own transfer), and
/// the Berlin Group `cross-border-credit-transfers` (SWIFT).
pub const PRODUCTS: &[(&str, &str, PaymentType)] = &[
    (
        "norwegian-domestic-credit-transfers",
        "norwegian-domestic-credit-transfers",
        PaymentType::Domestic,
    ),
    (DOMESTIC_NORWAY, DOMESTIC_NORWAY, PaymentType::Domestic),
    (INSTANT, INSTANT, PaymentType::Instant),
    (
        "instant-norwegian-domestic-credit-transfers-straks",
        INSTANT,
        PaymentType::Instant,
    ),
    (
        "norwegian-domestic-payment-to-self",
        "norwegian-domestic-payment-to-self",
        PaymentType::OwnTransfer,
    ),
    (
        "norwegian-cross-border-credit-transfers",
        "norwegian-cross-border-credit-transfers",
        PaymentType::Ncbct,
    ),
    (
        "sepa-credit-transfers",
        "sepa-credit-transfers",
        PaymentType::Sepa,
    ),
    (
        "cross-border-credit-transfers",
        "cross-border-credit-transfers",
        PaymentType::Swift,
    ),
];

/// Why a `{payment-product}` segment was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ProductError {
    /// A `dnb-corporate-*` product (the bank's corporate Danish, Swedish and UK products of
    /// the v1 Postman collection): exists, but is not offered to PSD2 PSUs of the sandbox.
    #[error(
        "payment product {0:?} is a corporate product of the bank that is not offered through \
         this PSD2 sandbox"
    )]
    Corporate(String),
    /// Not a product of [`PRODUCTS`].
    #[error("payment product {0:?} is not supported; supported: {list}", list = supported())]
    Unknown(String),
    /// A known product that is not offered for the service (bulk instant payments; periodic
    /// payments of a non-domestic or instant product).
    #[error("payment product {segment:?} is not available as {}", service.segment())]
    NotForService {
        /// The segment as given.
        segment: String,
        /// The service asked for.
        service: Service,
    },
}

impl ProductError {
    /// The Berlin Group message code: `PRODUCT_UNKNOWN` (404, `MessageCode404_PIS`) for
    /// [`ProductError::Unknown`], `PRODUCT_INVALID` (403) otherwise.
    pub fn message_code(&self) -> MessageCode {
        match self {
            ProductError::Unknown(_) => MessageCode::ProductUnknown,
            ProductError::Corporate(_) | ProductError::NotForService { .. } => {
                MessageCode::ProductInvalid
            }
        }
    }
}

/// The accepted segments of [`PRODUCTS`], comma-separated.
fn supported() -> String {
    PRODUCTS
        .iter()
        .map(|(s, _, _)| *s)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The product of a path segment.
///
/// Errors: `dnb-corporate-*` → [`ProductError::Corporate`]; anything else unknown →
/// [`ProductError::Unknown`].
pub fn product(segment: &str) -> Result<Product, ProductError> {
    if let Some((_, name, kind)) = PRODUCTS.iter().find(|(s, _, _)| *s == segment) {
        return Ok(Product { name, kind: *kind });
    }
    if segment.starts_with("dnb-corporate-") {
        return Err(ProductError::Corporate(segment.to_string()));
    }
    Err(ProductError::Unknown(segment.to_string()))
}

/// The product of a segment for `service`.
///
/// Errors: those of [`product`]; bulk instant payments and periodic payments of a
/// non-domestic or instant product → [`ProductError::NotForService`] (the Postman
/// collections show periodic payments for the domestic products only).
pub(crate) fn product_for(service: Service, segment: &str) -> Result<Product, ProductError> {
    let p = product(segment)?;
    let ok = match service {
        Service::Payments => true,
        Service::BulkPayments => p.kind != PaymentType::Instant,
        Service::PeriodicPayments => {
            matches!(p.kind, PaymentType::Domestic | PaymentType::OwnTransfer)
        }
    };
    if ok {
        Ok(p)
    } else {
        Err(ProductError::NotForService {
            segment: segment.to_string(),
            service,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_aliases_and_refusals() {
        let p = product("instant-norwegian-domestic-credit-transfers-straks").unwrap();
        assert_eq!((p.name, p.kind), (INSTANT, PaymentType::Instant));
        let e = product("dnb-corporate-sek").unwrap_err();
        assert_eq!(e.message_code(), MessageCode::ProductInvalid);
        let e = product("nope").unwrap_err();
        assert_eq!(e.message_code(), MessageCode::ProductUnknown);
        assert!(
            e.to_string()
                .contains("supported: norwegian-domestic-credit-transfers")
        );
        let e = product_for(Service::BulkPayments, INSTANT).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("payment product {INSTANT:?} is not available as bulk-payments")
        );
        assert!(product_for(Service::PeriodicPayments, "sepa-credit-transfers").is_err());
        assert!(product_for(Service::PeriodicPayments, DOMESTIC_NORWAY).is_ok());
    }

    #[test]
    fn structured_address_parts() {
        let part = |v: Value| v.as_object().cloned().unwrap();
        assert_eq!(
            missing_structured_parts(&part(serde_json::json!({}))),
            STRUCTURED_ADDRESS_PARTS.to_vec()
        );
        let full = part(serde_json::json!({
            "creditorName": "A",
            "creditorAddress": {"city": "Oslo", "country": "NO"},
            "creditorAgent": "DNBANOKK"
        }));
        assert!(missing_structured_parts(&full).is_empty());
        let blank = part(serde_json::json!({
            "creditorName": " ",
            "creditorAddress": {"townName": "Oslo"},
            "creditorAgent": "DNBANOKK"
        }));
        assert_eq!(
            missing_structured_parts(&blank),
            ["creditorName", "creditorAddress.country"]
        );
    }
}
