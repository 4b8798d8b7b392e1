//! Payment products and the body rules of a payment initiation (interface document,
//! Resources, "Payment initiation body" and "Other payment facts"; Versioning; Errors).
//!
//! [`parse`] turns a request body into an [`Initiation`]: the validated, normalised body
//! that `GET /v1/{service}/{product}/{paymentId}` echoes, the debtor's sandbox account, the
//! total amount, the execution date, the key of the logical-duplicate check and any
//! `WARNING`s for the 201 answer. Every rejection is a 400 whose `tppMessages[0].path`
//! names the offending field.
//!
//! The protocol facts live in [`crate::xs2a`] and are shared with the console's validator:
//! the product table ([`crate::xs2a::payment`]), the identifier checks
//! ([`crate::xs2a::identifiers`], [`crate::xs2a::check_digits`]), the amount pattern
//! ([`crate::xs2a::amount`]) and the body reader with its empty-string rule
//! ([`crate::xs2a::fields`]); this module adds the sandbox's side: its accounts, its clock
//! and the answers ([`ApiError`]).
//!
//! Rules, in the order they are checked:
//!
//! 1. The body is a JSON object.
//! 2. Every `amount` is a JSON string (`x-accept-fix: amount-as-string`, default since
//!    2020-08-01): a JSON number → `FORMAT_ERROR` naming e.g. `instructedAmount.amount`.
//! 3. Every string is in the character set of the bank's payment system
//!    ([`crate::sandbox::domain::rules::is_allowed_char`], shared with the other `/v1` bodies:
//!    printable Latin-1, which holds the Norwegian `æøåÆØÅ`, plus a few typographic marks);
//!    an emoji or any other character → `FORMAT_ERROR` naming the field (interface
//!    document, Errors: "ASPSP downstream system rejects a UTF-8 character (for example an
//!    emoji): 400").
//! 4. Field shapes of the Berlin Group schemas (`amount`: the `amountValue` pattern
//!    `-?[0-9]{1,14}(\.[0-9]{1,3})?` as sent, greater than zero
//!    ([`crate::xs2a::amount`]); a KID reference (`referenceType` `KID`): 2–25 digits with a
//!    MOD10 or MOD11 check digit ([`crate::xs2a::check_digits::check_kid`]);
//!    `accountReference`, `address`,
//!    `bicfi`, lengths of `creditorName` 70, `remittanceInformationUnstructured` 140,
//!    `endToEndIdentification` 35, `frequencyCode`, `dayOfExecution`, `monthsOfExecution`).
//! 5. Product rules ([`PaymentType`]): currencies, account identifiers, `serviceLevel` only on
//!    non-SEPA cross-border payments, instant limit.
//! 6. `creditorAddress.city` is accepted as `townName` with a `WARNING` (deprecated, interface
//!    document Versioning 2.15.0; likewise the legacy `street` and `postalCode`).
//! 7. From [`STRUCTURED_ADDRESS_ENFORCEMENT`] (2026-08-13 on the sandbox clock; production
//!    2026-11-15) SEPA, SWIFT and NCBCT payments need `creditorName`,
//!    `creditorAddress.townName`, `creditorAddress.country` and the creditor agent BIC
//!    (`creditorAgent`); all missing parts are named in one `FORMAT_ERROR`. The debtor's
//!    name and address are inferred from the debtor account and never required. Before that
//!    date a missing part only gives a `WARNING`.

use chrono::NaiveDate;
use serde_json::{Map, Value};

use crate::sandbox::App;
use crate::sandbox::errors::ApiError;
use crate::sandbox::store::Account;
use crate::xs2a::error::MessageCode;
use crate::xs2a::fields::{FieldError, Fields, join};
use crate::xs2a::identifiers::is_country;
use crate::xs2a::model::{format_minor, parse_minor};
use crate::xs2a::payment::ProductError;
use crate::xs2a::tree::Node;

/// Most entries of one bulk payment (not stated by the interface document; a sandbox limit).
pub const MAX_BULK_ENTRIES: usize = 500;

/// Largest amount of any payment, minor units (amountValue allows 14 integer digits; the
/// sandbox stops at 999 999 999.99).
pub const MAX_AMOUNT_MINOR: i64 = 99_999_999_999;

pub use crate::sandbox::domain::payment::{
    DOMESTIC_NORWAY, Echo, INSTANT, INSTANT_MAX_MINOR, Initiation, PRODUCTS, PaymentType, Product,
    STRUCTURED_ADDRESS_ENFORCEMENT, Service, account_by_bban, credits,
};

/// The product of a path segment ([`crate::xs2a::payment::product`]).
///
/// Errors: `dnb-corporate-*` → 403 `PRODUCT_INVALID`; anything else unknown → 404
/// `PRODUCT_UNKNOWN` (`MessageCode404_PIS`); the codes of [`ProductError::message_code`].
pub fn product(segment: &str) -> Result<Product, ApiError> {
    crate::xs2a::payment::product(segment).map_err(product_error)
}

/// The product of a segment for `service` ([`crate::xs2a::payment::product_for`]).
///
/// Errors: those of [`product`]; a product not offered for `service` → 403
/// `PRODUCT_INVALID`.
pub fn product_for(service: Service, segment: &str) -> Result<Product, ApiError> {
    crate::xs2a::payment::product_for(service, segment).map_err(product_error)
}

/// The sandbox answer to a refused product: its message code and text.
fn product_error(e: ProductError) -> ApiError {
    ApiError::new(e.message_code(), e.to_string())
}

/// A 400 `FORMAT_ERROR` whose message names `path`.
pub fn field_error(path: &str, text: impl Into<String>) -> ApiError {
    coded_field_error(MessageCode::FormatError, path, text)
}

/// The reader's refusal as a 400 `FORMAT_ERROR` naming the field.
impl From<FieldError> for ApiError {
    fn from(e: FieldError) -> Self {
        field_error(&e.path, e.text)
    }
}

fn coded_field_error(code: MessageCode, path: &str, text: impl Into<String>) -> ApiError {
    let mut e = ApiError::new(code, text);
    if let Some(m) = e.body.tpp_messages.first_mut() {
        m.path = Some(path.to_string());
    }
    e
}

/// A body object being read: of the borrowed tree ([`crate::xs2a::tree`], issue 23).
type Obj<'a, 'b> = Fields<'a, Node<'b>>;

/// The two document-wide facts of a body, found in one walk (issue 23: two walks before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Scan {
    /// Some `amount`, anywhere, is a JSON number ([`numeric_amount`] names the first).
    numeric_amount: bool,
    /// Every string and key passes [`crate::sandbox::domain::rules::allowed_text`] (when
    /// not, [`crate::sandbox::domain::rules::check_json_characters`] names the first).
    characters_allowed: bool,
}

/// [`Scan`] of `v`, without building a path for any key; the walk stops at the first
/// numeric `amount` (whose refusal answers first).
fn scan(v: &Node<'_>) -> Scan {
    fn walk(v: &Node<'_>, s: &mut Scan) {
        match v {
            Node::String(t) => {
                s.characters_allowed =
                    s.characters_allowed && crate::sandbox::domain::rules::allowed_text(t);
            }
            Node::Object(m) => {
                for (k, v) in m.iter() {
                    if k == "amount" && v.is_number() {
                        s.numeric_amount = true;
                        return;
                    }
                    s.characters_allowed =
                        s.characters_allowed && crate::sandbox::domain::rules::allowed_text(k);
                    walk(v, s);
                    if s.numeric_amount {
                        return;
                    }
                }
            }
            Node::Array(a) => {
                for v in a {
                    walk(v, s);
                    if s.numeric_amount {
                        return;
                    }
                }
            }
            _ => {}
        }
    }
    let mut s = Scan {
        numeric_amount: false,
        characters_allowed: true,
    };
    walk(v, &mut s);
    s
}

/// The path of the first `amount` given as a JSON number.
fn numeric_amount(v: &Node<'_>, path: &str) -> Option<String> {
    match v {
        Node::Object(m) => m.iter().find_map(|(k, v)| {
            let p = join(path, k);
            if k == "amount" && v.is_number() {
                Some(p)
            } else {
                numeric_amount(v, &p)
            }
        }),
        Node::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, v)| numeric_amount(v, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// `amount`: `{currency, amount}` with an amount string of the Berlin Group pattern
/// ([`crate::xs2a::amount`], checked as sent: no trimming) that is greater than zero and has
/// at most two fraction digits (the minor unit of NOK and EUR). Returns (currency, minor
/// units, normalised JSON as an [`Echo`]: `currency`, then `amount`).
///
/// Errors: 400 `FORMAT_ERROR` naming `<key>.amount` or `<key>.currency`.
fn amount(o: &Obj<'_, '_>, key: &str) -> Result<(String, i64, Echo), ApiError> {
    let a = o.req_obj(
        key,
        "an amount {\"currency\": \"NOK\", \"amount\": \"13.37\"}",
    )?;
    let currency = a
        .opt_currency("currency")?
        .ok_or_else(|| a.missing("currency", "the ISO 4217 currency code, e.g. \"NOK\""))?;
    // Checked as a string (borrowed: issue 23), then read as sent.
    a.req_text("amount", 20, "a decimal string such as \"13.37\"")?;
    let text = a
        .map()
        .get("amount")
        .and_then(Node::as_str)
        .unwrap_or_default();
    crate::xs2a::amount::check_amount(text, true)
        .map_err(|p| field_error(&a.at("amount"), p.describe(&a.at("amount"), text)))?;
    let minor = parse_minor(text).ok_or_else(|| {
        field_error(
            &a.at("amount"),
            format!(
                "{} {text:?} is not a decimal amount with at most two fraction digits",
                a.at("amount")
            ),
        )
    })?;
    if minor <= 0 {
        return Err(field_error(
            &a.at("amount"),
            format!("{} must be greater than zero", a.at("amount")),
        ));
    }
    if minor > MAX_AMOUNT_MINOR {
        return Err(field_error(
            &a.at("amount"),
            format!(
                "{} {text} is above the sandbox maximum {} (any currency)",
                a.at("amount"),
                format_minor(MAX_AMOUNT_MINOR)
            ),
        ));
    }
    // An echo, not a `Map`: no key hashed (issue 23); the same text.
    let mut json = Echo::with_capacity(2);
    json.insert_str("currency", currency.clone());
    json.insert_str("amount", format_minor(minor));
    Ok((currency, minor, json))
}

/// The account and agent identifier checks, shared with sandbox management and the console
/// ([`crate::xs2a::identifiers`]).
pub use crate::xs2a::identifiers::{is_bic, is_iban, is_norwegian_bban};

/// An account reference as given: `iban` or `bban`, optional `currency`.
#[derive(Debug)]
struct AccRef {
    iban: Option<String>,
    bban: Option<String>,
    currency: Option<String>,
}

impl AccRef {
    /// The Norwegian BBAN, from `bban` or a `NO` IBAN.
    fn norwegian_bban(&self) -> Option<String> {
        if let Some(b) = &self.bban {
            return Some(b.replace(['.', ' '], ""));
        }
        self.iban
            .as_deref()
            .filter(|i| i.starts_with("NO") && i.len() == 15)
            .map(|i| i[4..].to_string())
    }

    /// The reference's echo: `iban`, `bban`, `currency`, those given.
    fn json(&self) -> Echo {
        let mut m = Echo::with_capacity(3);
        if let Some(i) = &self.iban {
            m.insert_str("iban", i.clone());
        }
        if let Some(b) = &self.bban {
            m.insert_str("bban", b.clone());
        }
        if let Some(c) = &self.currency {
            m.insert_str("currency", c.clone());
        }
        m
    }
}

fn account_ref(o: &Obj<'_, '_>, key: &str) -> Result<AccRef, ApiError> {
    let a = o.req_obj(key, "an account reference with an iban or a bban")?;
    let iban = a.opt_str("iban", 34)?.map(|s| s.replace(' ', ""));
    let bban = a.opt_str("bban", 30)?;
    let currency = a.opt_currency("currency")?;
    if let Some(i) = &iban
        && !is_iban(i)
    {
        return Err(field_error(
            &a.at("iban"),
            format!("{} {i:?} is not a valid IBAN", a.at("iban")),
        ));
    }
    if iban.is_none() && bban.is_none() {
        return Err(field_error(
            a.path(),
            format!("{} needs an iban or a bban", a.path()),
        ));
    }
    Ok(AccRef {
        iban,
        bban,
        currency,
    })
}

/// The debtor's sandbox account and its echo, from `read` (the body's `debtorAccount` as
/// [`read_json`] read it) or, without one, read from `o` here.
fn debtor_account(
    app: &App,
    o: &Obj<'_, '_>,
    read: Option<Result<AccRef, ApiError>>,
    known: Option<&Account>,
) -> Result<(Account, Echo), ApiError> {
    let r = match read {
        Some(r) => r?,
        None => account_ref(o, "debtorAccount")?,
    };
    let path = o.at("debtorAccount");
    let bban = r.norwegian_bban().ok_or_else(|| {
        field_error(
            &path,
            format!("{path} must be a Norwegian account (bban, or an IBAN starting with NO)"),
        )
    })?;
    let read = match known.filter(|a| a.bban == bban) {
        Some(a) => Some(a.clone()),
        None => account_by_bban(&app.domain(), &bban)?,
    };
    let account = read.ok_or_else(|| {
        field_error(
            &path,
            format!(
                "{path} {bban} is not an account of this sandbox; pay from one of the sandbox \
                 customers' accounts"
            ),
        )
    })?;
    if let Some(c) = &r.currency
        && c != &account.currency
    {
        return Err(field_error(
            &join(&path, "currency"),
            format!(
                "{path}.currency {c} differs from the account currency {}",
                account.currency
            ),
        ));
    }
    let mut json = Echo::with_capacity(2);
    json.insert_str("bban", account.bban.clone());
    json.insert_str("currency", account.currency.clone());
    Ok((account, json))
}

/// Legacy `creditorAddress` names → current names (Berlin Group 1.3.8+ `address`).
const ADDRESS_ALIASES: [(&str, &str); 3] = [
    ("city", "townName"),
    ("street", "streetName"),
    ("postalCode", "postCode"),
];

/// `creditorAddress` normalised: (JSON, country present).
fn creditor_address(
    o: &Obj<'_, '_>,
    warnings: &mut Vec<String>,
) -> Result<Option<(Echo, bool)>, ApiError> {
    let Some(a) = o.opt_obj("creditorAddress")? else {
        return Ok(None);
    };
    let mut m = Echo::with_capacity(5);
    for (key, max) in [
        ("streetName", 70),
        ("buildingNumber", 16),
        ("townName", 35),
        ("postCode", 16),
    ] {
        let current = a.opt_str(key, max)?;
        let (legacy, _) = ADDRESS_ALIASES
            .iter()
            .find(|(_, to)| *to == key)
            .copied()
            .unwrap_or(("", ""));
        let old = if legacy.is_empty() {
            None
        } else {
            a.opt_str(legacy, max)?
        };
        if old.is_some() {
            warnings.push(format!(
                "{} is deprecated, use {} (read as {key} this time)",
                a.at(legacy),
                a.at(key)
            ));
        }
        if let Some(v) = current.or(old) {
            m.insert_str(key, v);
        }
    }
    let country = a.opt_checked("country", 2, is_country, "an ISO 3166 alpha-2 code")?;
    if let Some(c) = &country {
        m.insert_str("country", c.clone());
    }
    Ok(Some((m, country.is_some())))
}

/// Everything of a payment but the debtor: one single payment, a periodic payment's
/// payment part, or one bulk entry.
struct Part {
    /// The echo of the part's fields in the order read, after `endToEndIdentification` (when
    /// given) and the `lead` field of [`part`] (when given).
    echo: Echo,
    /// Whether `endToEndIdentification` was given (first in `echo`).
    end_to_end: bool,
    currency: String,
    minor: i64,
    creditor_key: String,
    remittance: String,
}

/// Reads the creditor side, amount, references and remittance of `o` for `kind`; `lead`
/// (the debtor's `debtorAccount` echo of a single or periodic payment) is echoed right after
/// `endToEndIdentification`, before the part's other fields.
fn part(
    app: &App,
    kind: PaymentType,
    o: &Obj<'_, '_>,
    debtor: Option<&Account>,
    lead: Option<Echo>,
    warnings: &mut Vec<String>,
) -> Result<Part, ApiError> {
    let mut echo = Echo::with_capacity(16);
    let e2e = o.opt_str("endToEndIdentification", 35)?;
    let end_to_end = e2e.is_some();
    if let Some(e2e) = e2e {
        echo.insert("endToEndIdentification", Value::String(e2e));
    }
    if let Some(lead) = lead {
        echo.insert("debtorAccount", lead);
    }
    let (currency, minor, amount_json) = amount(o, "instructedAmount")?;
    // Paths are built only for a refusal (issue 23).
    let amount_path = || join(&o.at("instructedAmount"), "currency");
    match kind {
        k if k.is_domestic() && currency != "NOK" => {
            return Err(field_error(
                &amount_path(),
                format!("domestic payments are in NOK, not {currency}"),
            ));
        }
        PaymentType::Sepa if currency != "EUR" => {
            return Err(field_error(
                &amount_path(),
                format!("SEPA credit transfers are in EUR, not {currency}"),
            ));
        }
        PaymentType::Instant if minor > INSTANT_MAX_MINOR => {
            return Err(field_error(
                &o.at("instructedAmount"),
                format!(
                    "instant payments are limited to NOK {} (see fee-information)",
                    format_minor(INSTANT_MAX_MINOR)
                ),
            ));
        }
        _ => {}
    }
    let creditor = account_ref(o, "creditorAccount")?;
    // Read once (issue 23: up to four times, a `String` each).
    let creditor_bban = creditor.norwegian_bban();
    let creditor_path = || o.at("creditorAccount");
    if kind.is_domestic() {
        let ok = creditor_bban.as_deref().is_some_and(is_norwegian_bban);
        if !ok {
            let cpath = creditor_path();
            return Err(field_error(
                &cpath,
                format!(
                    "{cpath} must be a Norwegian account number: 11 digits with a valid MOD11 \
                     check digit (or an IBAN starting with NO)"
                ),
            ));
        }
    } else if kind != PaymentType::Swift && creditor.iban.is_none() {
        let cpath = creditor_path();
        return Err(field_error(
            &join(&cpath, "iban"),
            format!("{cpath}.iban is required for cross-border and SEPA payments"),
        ));
    }
    if let Some(d) = debtor
        && creditor_bban.as_deref() == Some(d.bban.as_str())
    {
        let cpath = creditor_path();
        return Err(field_error(
            &cpath,
            format!("{cpath} is the debtor account itself"),
        ));
    }
    if kind == PaymentType::OwnTransfer {
        let own = creditor_bban
            .as_deref()
            .map_or(Ok(None), |b| account_by_bban(&app.domain(), b))?
            .zip(debtor)
            .is_some_and(|(c, d)| c.owner == d.owner);
        if !own {
            let cpath = creditor_path();
            return Err(field_error(
                &cpath,
                format!(
                    "{cpath} must be another account of the debtor account's owner \
                     (norwegian-domestic-payment-to-self)"
                ),
            ));
        }
    }
    echo.insert("instructedAmount", amount_json);
    echo.insert("creditorAccount", creditor.json());
    let agent = o.opt_checked("creditorAgent", 11, is_bic, "a BIC")?;
    if let Some(b) = &agent {
        echo.insert("creditorAgent", Value::String(b.clone()));
    }
    let name = o.opt_str("creditorName", 70)?;
    let address = creditor_address(o, warnings)?;
    if kind.needs_structured_address() {
        let missing: Vec<String> =
            crate::xs2a::payment::missing_structured_parts_of::<Node<'_>>(o.map())
                .into_iter()
                .map(|p| o.at(p))
                .collect();
        if !missing.is_empty() {
            let (y, m, d) = STRUCTURED_ADDRESS_ENFORCEMENT;
            let from = NaiveDate::from_ymd_opt(y, m, d).unwrap_or(NaiveDate::MAX);
            let text = format!(
                "{} payments need a structured creditor address and the creditor agent BIC \
                 (sandbox enforcement from {from}); missing: {}; the debtor's address is \
                 inferred by the bank",
                kind.as_str(),
                missing.join(", ")
            );
            if app.clock.today() >= from {
                return Err(field_error(&missing.join(","), text));
            }
            warnings.push(text);
        }
    }
    let name = match name {
        Some(n) => n,
        None => o.req_str("creditorName", 70, "the creditor's name")?,
    };
    echo.insert("creditorName", Value::String(name));
    if let Some((a, country)) = address {
        if !country {
            return Err(field_error(
                &o.at("creditorAddress.country"),
                format!(
                    "{} is required in an address",
                    o.at("creditorAddress.country")
                ),
            ));
        }
        echo.insert("creditorAddress", a);
    }
    let is_purpose_code = |p: &str| p.len() == 4 && p.bytes().all(|b| b.is_ascii_uppercase());
    if let Some(p) = o.opt_checked(
        "purposeCode",
        4,
        is_purpose_code,
        "an ISO 20022 purpose code",
    )? {
        echo.insert("purposeCode", Value::String(p));
    }
    if let Some(c) = o.opt_str("chargeBearer", 4)? {
        if !["DEBT", "CRED", "SHAR", "SLEV"].contains(&c.as_str()) {
            return Err(field_error(
                &o.at("chargeBearer"),
                format!("{} must be DEBT, CRED, SHAR or SLEV", o.at("chargeBearer")),
            ));
        }
        echo.insert("chargeBearer", Value::String(c));
    }
    if let Some(s) = o.opt_str("serviceLevel", 4)? {
        if !matches!(kind, PaymentType::Ncbct | PaymentType::Swift) {
            return Err(field_error(
                &o.at("serviceLevel"),
                "serviceLevel can only be set on non-SEPA cross-border payments \
                 (norwegian-cross-border-credit-transfers, cross-border-credit-transfers)",
            ));
        }
        if !["URGP", "NURG", "SDVA"].contains(&s.as_str()) {
            return Err(field_error(
                &o.at("serviceLevel"),
                format!(
                    "{} must be URGP (urgent), SDVA (same day) or NURG (normal)",
                    o.at("serviceLevel")
                ),
            ));
        }
        echo.insert("serviceLevel", Value::String(s));
    }
    let unstructured = o.opt_str("remittanceInformationUnstructured", 140)?;
    if let Some(u) = &unstructured {
        echo.insert(
            "remittanceInformationUnstructured",
            Value::String(u.clone()),
        );
    }
    let mut structured_refs = Vec::new();
    if o.has("remittanceInformationStructured") {
        warnings.push(format!(
            "{} is to be deprecated; use remittanceInformationStructuredArray",
            o.at("remittanceInformationStructured")
        ));
        let v = match o.map().get("remittanceInformationStructured") {
            Some(Node::String(_)) => Value::String(o.req_str(
                "remittanceInformationStructured",
                140,
                "the structured reference",
            )?),
            _ => {
                let r = o.req_obj(
                    "remittanceInformationStructured",
                    "a string or an object with a reference",
                )?;
                structured(&r)?
            }
        };
        structured_refs.push(v.to_string());
        echo.insert("remittanceInformationStructured", v);
    }
    match o.map().get("remittanceInformationStructuredArray") {
        None | Some(Node::Null) => {}
        Some(Node::Array(items)) => {
            let path = o.at("remittanceInformationStructuredArray");
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let Node::Object(m) = item else {
                    return Err(field_error(
                        &format!("{path}[{i}]"),
                        format!("{path}[{i}] must be a JSON object"),
                    ));
                };
                let v = structured(&Fields::new(m, format!("{path}[{i}]")))?;
                structured_refs.push(v.to_string());
                out.push(v);
            }
            echo.insert("remittanceInformationStructuredArray", Value::Array(out));
        }
        Some(_) => {
            return Err(field_error(
                &o.at("remittanceInformationStructuredArray"),
                "remittanceInformationStructuredArray must be an array",
            ));
        }
    }
    // SEPA payments accept the Norwegian regulatory reporting option; cross-border too.
    if let Some(c) = o.opt_str("regulatoryReportingCode", 10)? {
        echo.insert("regulatoryReportingCode", Value::String(c));
    }
    if let Some(i) = o.opt_str("regulatoryReportingInformation", 140)? {
        echo.insert("regulatoryReportingInformation", Value::String(i));
    }
    if o.has("regulatoryReportingAmount") {
        let (_, _, j) = amount(o, "regulatoryReportingAmount")?;
        echo.insert("regulatoryReportingAmount", j);
    }
    // `<unstructured>|<structured references joined by ;>`, without `format!` (issue 23).
    let mut remittance = unstructured.unwrap_or_default();
    remittance.push('|');
    for (i, r) in structured_refs.iter().enumerate() {
        if i > 0 {
            remittance.push(';');
        }
        remittance.push_str(r);
    }
    Ok(Part {
        echo,
        end_to_end,
        currency,
        minor,
        // The creditor's key: the IBAN as given, else the Norwegian BBAN.
        creditor_key: creditor.iban.clone().or(creditor_bban).unwrap_or_default(),
        remittance,
    })
}

/// `remittanceInformationStructured` element: `reference` (≤ 35, required),
/// `referenceType`, `referenceIssuer`. A `referenceType` of `KID` (any case) makes
/// `reference` a Norwegian KID, checked with [`crate::xs2a::check_digits::check_kid`]: 2–25
/// digits with a valid MOD10 or MOD11 check digit.
///
/// Errors: 400 `FORMAT_ERROR` naming the field, e.g.
/// `remittanceInformationStructuredArray[0].reference` (interface document, Errors: "KID
/// errors: 400").
fn structured(o: &Obj<'_, '_>) -> Result<Value, ApiError> {
    let mut m = Map::new();
    let reference = o.req_str("reference", 35, "the payment reference")?;
    for k in ["referenceType", "referenceIssuer"] {
        if let Some(v) = o.opt_str(k, 35)? {
            m.insert(k.into(), Value::String(v));
        }
    }
    let is_kid = m
        .get("referenceType")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("KID"));
    if is_kid {
        let raw = o
            .map()
            .get("reference")
            .and_then(Node::as_str)
            .unwrap_or_default();
        crate::xs2a::check_digits::check_kid(raw)
            .map_err(|p| field_error(&o.at("reference"), p.describe(&o.at("reference"), raw)))?;
    }
    m.insert("reference".into(), Value::String(reference));
    Ok(Value::Object(m))
}

/// The logical-duplicate key of a single or periodic payment, stored with it
/// (`pis_payments.dedup_key`): `fields` (service segment, debtor BBAN, creditor key,
/// currency), the amount in minor units, the execution date and the remittance key, joined
/// by `|`; the text `format!("{}|{}|{}|{}|{}|{}|{}", ...)` gave, built without the
/// formatting machinery (issue 23: 2,900 instructions per payment).
fn dedup_key(fields: &[&str; 4], minor: i64, date: NaiveDate, remittance: &str) -> String {
    let mut key = String::with_capacity(
        fields.iter().map(|f| f.len() + 1).sum::<usize>() + 20 + 11 + 1 + remittance.len(),
    );
    for f in fields {
        key.push_str(f);
        key.push('|');
    }
    key.push_str(itoa::Buffer::new().format(minor));
    key.push('|');
    crate::sandbox::domain::payment::push_date(&mut key, date);
    key.push('|');
    key.push_str(remittance);
    key
}

/// Field `key` of `o` as an execution date on or after `today` (the sandbox clock's date,
/// read once per body: issue 23) and at most a year ahead; `None` when absent and not
/// `required`.
///
/// Errors: missing and `required` → 400 `FORMAT_ERROR`; past or too far ahead → 400
/// `EXECUTION_DATE_INVALID`; both naming the field.
fn execution_date(
    today: NaiveDate,
    o: &Obj<'_, '_>,
    key: &str,
    required: bool,
) -> Result<Option<NaiveDate>, ApiError> {
    let d = o.opt_date(key)?;
    match d {
        None if required => Err(field_error(&o.at(key), format!("{} is missing", o.at(key)))),
        Some(d) if d < today => Err(coded_field_error(
            MessageCode::ExecutionDateInvalid,
            &o.at(key),
            format!(
                "{} {d} is in the past (today is {today} on the sandbox clock)",
                o.at(key)
            ),
        )),
        Some(d) if d > today + chrono::Duration::days(365) => Err(coded_field_error(
            MessageCode::ExecutionDateInvalid,
            &o.at(key),
            format!("{} {d} is more than a year ahead", o.at(key)),
        )),
        d => Ok(d),
    }
}

const FREQUENCIES: [&str; 9] = [
    "Daily",
    "Weekly",
    "EveryTwoWeeks",
    "Monthly",
    "EveryTwoMonths",
    "Quarterly",
    "SemiAnnual",
    "Annual",
    "MonthlyVariable",
];

/// The periodic-payment fields: `startDate` (required, not in the past), `endDate` (not
/// before `startDate`), `executionRule` (`following`/`preceding`), `frequency` (Berlin Group
/// `frequencyCode`), `dayOfExecution` (`"1"`–`"31"`), `monthsOfExecution` (required exactly
/// when `frequency` is `MonthlyVariable`: 1–11 distinct months `"1"`–`"12"`; a duplicate
/// month → `FORMAT_ERROR` naming it; interface document: "a create request with duplicate
/// month identifiers is rejected").
fn periodic(today: NaiveDate, o: &Obj<'_, '_>, echo: &mut Echo) -> Result<NaiveDate, ApiError> {
    let start = execution_date(today, o, "startDate", true)?.unwrap_or(today);
    echo.insert("startDate", Value::String(start.to_string()));
    if let Some(end) = o.opt_date("endDate")? {
        if end < start {
            return Err(field_error(
                &o.at("endDate"),
                format!("endDate {end} is before startDate {start}"),
            ));
        }
        echo.insert("endDate", Value::String(end.to_string()));
    }
    if let Some(r) = o.opt_str("executionRule", 9)? {
        if r != "following" && r != "preceding" {
            return Err(field_error(
                &o.at("executionRule"),
                "executionRule must be following or preceding",
            ));
        }
        echo.insert("executionRule", Value::String(r));
    }
    let frequency = o.req_str("frequency", 20, "the frequency code, e.g. \"Monthly\"")?;
    if !FREQUENCIES.contains(&frequency.as_str()) {
        return Err(field_error(
            &o.at("frequency"),
            format!(
                "frequency {frequency:?} is not one of {}",
                FREQUENCIES.join(", ")
            ),
        ));
    }
    echo.insert("frequency", Value::String(frequency.clone()));
    if let Some(d) = o.opt_str("dayOfExecution", 2)? {
        let ok = !d.starts_with('0') && d.parse::<u8>().is_ok_and(|n| (1..=31).contains(&n));
        if !ok {
            return Err(field_error(
                &o.at("dayOfExecution"),
                format!("dayOfExecution {d:?} must be \"1\" to \"31\" without leading zero"),
            ));
        }
        echo.insert("dayOfExecution", Value::String(d));
    }
    let path = o.at("monthsOfExecution");
    match (frequency.as_str(), o.map().get("monthsOfExecution")) {
        ("MonthlyVariable", None | Some(Node::Null)) => {
            return Err(field_error(
                &path,
                "monthsOfExecution is required when frequency is MonthlyVariable",
            ));
        }
        ("MonthlyVariable", Some(Node::Array(items))) => {
            if items.is_empty() || items.len() > 11 {
                return Err(field_error(
                    &path,
                    "monthsOfExecution holds 1 to 11 months (all 12 is frequency Monthly)",
                ));
            }
            let mut months: Vec<u8> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let m = item
                    .as_str()
                    .and_then(|s| s.trim().parse::<u8>().ok())
                    .filter(|m| (1..=12).contains(m))
                    .ok_or_else(|| {
                        field_error(
                            &format!("{path}[{i}]"),
                            format!("{path}[{i}] must be a month \"1\" to \"12\" as a string"),
                        )
                    })?;
                if months.contains(&m) {
                    return Err(field_error(
                        &format!("{path}[{i}]"),
                        format!("{path}[{i}]: month {m} is listed twice; months must be distinct"),
                    ));
                }
                months.push(m);
            }
            echo.insert(
                "monthsOfExecution",
                Value::Array(
                    months
                        .iter()
                        .map(|m| Value::String(m.to_string()))
                        .collect(),
                ),
            );
        }
        ("MonthlyVariable", Some(_)) => {
            return Err(field_error(
                &path,
                "monthsOfExecution must be an array of month strings",
            ));
        }
        (_, None | Some(Node::Null)) => {}
        (_, Some(_)) => {
            return Err(field_error(
                &path,
                "monthsOfExecution is only allowed with frequency MonthlyVariable",
            ));
        }
    }
    Ok(start)
}

/// Validates a payment initiation body for `service` and `product`.
///
/// Errors: 400 `FORMAT_ERROR` naming the field (see the module rules), 400
/// `EXECUTION_DATE_INVALID` for a past or far-future date.
pub fn parse(
    app: &App,
    service: Service,
    product: &Product,
    body: &[u8],
) -> Result<Initiation, ApiError> {
    parse_json(app, service, product, read_json(body), None)
}

/// A request body read by [`read_json`]: its JSON, and its `debtorAccount` reference read
/// once, for [`debtor_bban`] before the store's read and for [`parse_json`] after (issue 23:
/// it was read twice).
#[derive(Debug)]
pub struct Read<'a> {
    /// The body's tree, borrowing its strings from the body.
    value: Node<'a>,
    /// `debtorAccount` as `account_ref` reads it, its refusal kept for [`parse_json`] to
    /// answer in its turn; `None` when the body is not a JSON object.
    debtor: Option<Result<AccRef, ApiError>>,
}

/// The request body as JSON, the first step of [`parse`] (kept apart so that a caller can
/// look at it, [`debtor_bban`], before the checks that answer first).
///
/// Errors: 400 `FORMAT_ERROR` for a missing body or one that is not JSON.
pub fn read_json(body: &[u8]) -> Result<Read<'_>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::format("the request body is missing"));
    }
    let value = crate::xs2a::tree::from_slice(body)
        .map_err(|e| ApiError::format(format!("the request body is not JSON: {e}")))?;
    let debtor = match &value {
        Node::Object(map) => Some(account_ref(&Fields::new(map, ""), "debtorAccount")),
        _ => None,
    };
    Ok(Read { value, debtor })
}

/// The BBAN of the body's `debtorAccount` (its `bban`, or the BBAN of a Norwegian `iban`),
/// when the body names one; `None` for anything [`parse`] would refuse there.
pub fn debtor_bban(read: &Read<'_>) -> Option<String> {
    read.debtor.as_ref()?.as_ref().ok()?.norwegian_bban()
}

/// [`parse`] of a body already read by [`read_json`] (its error answers first), with
/// `debtor`, when given, the account [`debtor_bban`] names as read beforehand (e.g. by
/// [`crate::sandbox::store::Store::payment_context`]); otherwise the account is read here.
///
/// Errors: those of [`parse`].
pub fn parse_json(
    app: &App,
    service: Service,
    product: &Product,
    json: Result<Read<'_>, ApiError>,
    debtor: Option<&Account>,
) -> Result<Initiation, ApiError> {
    let Read {
        value: v,
        debtor: debtor_ref,
    } = json?;
    let Node::Object(map) = &v else {
        return Err(ApiError::format("the request body must be a JSON object"));
    };
    let scan = scan(&v);
    if let Some(path) = scan
        .numeric_amount
        .then(|| numeric_amount(&v, ""))
        .flatten()
    {
        return Err(field_error(
            &path,
            format!(
                "{path} must be a JSON string such as \"13.37\", not a number (amounts are \
                 strings: x-accept-fix amount-as-string is the default since 2020-08-01)"
            ),
        ));
    }
    if !scan.characters_allowed {
        crate::sandbox::domain::rules::check_json_characters(&v)?;
    }
    let o = Fields::new(map, "");
    // The sandbox date of this request, read once (issue 23: it was read up to three times).
    let today = app.clock.today();
    let mut warnings = Vec::new();
    let (debtor, debtor_json) = debtor_account(app, &o, debtor_ref, debtor)?;
    let kind = product.kind;
    match service {
        Service::Payments | Service::PeriodicPayments => {
            let p = part(
                app,
                kind,
                &o,
                Some(&debtor),
                Some(debtor_json),
                &mut warnings,
            )?;
            let mut echo = p.echo;
            if p.end_to_end {
                // The stored order since the first release: the parse took
                // `endToEndIdentification` out of the part with `Map::remove` (a swap-remove,
                // which put the part's last field in its place) and appended the rest after
                // `debtorAccount`. Built in place now (issue 23), the last field moves to just
                // after `debtorAccount`.
                echo.move_last_to(2);
            }
            let date = if service == Service::PeriodicPayments {
                Some(periodic(today, &o, &mut echo)?)
            } else {
                let d = execution_date(today, &o, "requestedExecutionDate", false)?;
                if kind == PaymentType::Instant
                    && let Some(d) = d.filter(|d| *d != today)
                {
                    return Err(coded_field_error(
                        MessageCode::ExecutionDateInvalid,
                        "requestedExecutionDate",
                        format!(
                            "requestedExecutionDate {d}: instant payments are executed at once, \
                             so the date is today ({today}) or absent"
                        ),
                    ));
                }
                if let Some(d) = d {
                    echo.insert("requestedExecutionDate", Value::String(d.to_string()));
                }
                d
            };
            let dedup_key = dedup_key(
                &[
                    service.segment(),
                    &debtor.bban,
                    &p.creditor_key,
                    &p.currency,
                ],
                p.minor,
                date.unwrap_or(today),
                &p.remittance,
            );
            Ok(Initiation {
                echo,
                debtor,
                currency: p.currency,
                total_minor: p.minor,
                execution_date: date,
                dedup_key,
                warnings,
            })
        }
        Service::BulkPayments => {
            let mut echo = Echo::with_capacity(5);
            if let Some(b) = o
                .map()
                .get("batchBookingPreferred")
                .filter(|b| !b.is_null())
            {
                let Node::Bool(b) = b else {
                    return Err(field_error(
                        "batchBookingPreferred",
                        "batchBookingPreferred must be true or false",
                    ));
                };
                echo.insert("batchBookingPreferred", Value::Bool(*b));
            }
            echo.insert("debtorAccount", debtor_json);
            if let Some(id) = o.opt_str("paymentInformationId", 35)? {
                echo.insert("paymentInformationId", Value::String(id));
            }
            let date = execution_date(today, &o, "requestedExecutionDate", false)?;
            if let Some(d) = date {
                echo.insert("requestedExecutionDate", Value::String(d.to_string()));
            }
            let items = match o.map().get("payments") {
                Some(Node::Array(items)) => items,
                _ => {
                    return Err(field_error(
                        "payments",
                        "payments must be an array of bulk entries",
                    ));
                }
            };
            if items.is_empty() || items.len() > MAX_BULK_ENTRIES {
                return Err(field_error(
                    "payments",
                    format!("payments holds 1 to {MAX_BULK_ENTRIES} entries"),
                ));
            }
            let mut entries = Vec::new();
            let mut currency: Option<String> = None;
            let mut total: i64 = 0;
            let mut keys = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let path = format!("payments[{i}]");
                let Node::Object(m) = item else {
                    return Err(field_error(&path, format!("{path} must be a JSON object")));
                };
                for forbidden in ["debtorAccount", "requestedExecutionDate"] {
                    if m.get(forbidden).is_some_and(|v| !v.is_null()) {
                        return Err(field_error(
                            &format!("{path}.{forbidden}"),
                            format!(
                                "{path}.{forbidden} is not allowed in a bulk entry; it is given \
                                 once for the whole bulk"
                            ),
                        ));
                    }
                }
                let p = part(
                    app,
                    kind,
                    &Fields::new(m, path),
                    Some(&debtor),
                    None,
                    &mut warnings,
                )?;
                match &currency {
                    Some(c) if c != &p.currency => {
                        return Err(field_error(
                            &format!("payments[{i}].instructedAmount.currency"),
                            format!("all entries of a bulk payment must be in one currency ({c})"),
                        ));
                    }
                    Some(_) => {}
                    None => currency = Some(p.currency.clone()),
                }
                total = total.saturating_add(p.minor);
                keys.push(format!("{}|{}|{}", p.creditor_key, p.minor, p.remittance));
                entries.push(Value::Object(p.echo.into_map()));
            }
            echo.insert("payments", Value::Array(entries));
            let currency = currency.unwrap_or_else(|| debtor.currency.clone());
            let dedup_key = format!(
                "bulk-payments|{}|{}|{}|{}|{}",
                debtor.bban,
                currency,
                total,
                date.unwrap_or(today),
                keys.join("#")
            );
            Ok(Initiation {
                echo,
                debtor,
                currency,
                total_minor: total,
                execution_date: date,
                dedup_key,
                warnings,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stored duplicate key is the text `format!` gave, for every date `NaiveDate`
    /// holds (four-digit years built by hand, the others by its `Display`).
    #[test]
    fn dedup_key_is_the_format_text() {
        let fields = ["payments", "12345678903", "NO9386011117947", "NOK"];
        let dates = [
            NaiveDate::from_ymd_opt(2026, 11, 28),
            NaiveDate::from_ymd_opt(2027, 1, 1),
            NaiveDate::from_ymd_opt(1, 2, 3),
            NaiveDate::from_ymd_opt(0, 12, 31),
            NaiveDate::from_ymd_opt(9999, 12, 31),
            NaiveDate::from_ymd_opt(10000, 1, 1),
            NaiveDate::from_ymd_opt(-1, 6, 15),
            Some(NaiveDate::MIN),
            Some(NaiveDate::MAX),
        ];
        for date in dates.into_iter().flatten() {
            for minor in [1, 1010, -5, MAX_AMOUNT_MINOR, i64::MIN] {
                for remittance in ["|", "load 1 x|a;b", "", "blåbær"] {
                    let want = format!(
                        "{}|{}|{}|{}|{}|{}|{}",
                        fields[0], fields[1], fields[2], fields[3], minor, date, remittance
                    );
                    assert_eq!(dedup_key(&fields, minor, date, remittance), want);
                }
            }
        }
    }

    /// The path of the first numeric `amount` as the walk over a `serde_json::Value` found
    /// it before the borrowed tree (the reference for [`numeric_amount`]).
    fn numeric_amount_of_value(v: &Value, path: &str) -> Option<String> {
        match v {
            Value::Object(m) => m.iter().find_map(|(k, v)| {
                let p = join(path, k);
                if k == "amount" && v.is_number() {
                    Some(p)
                } else {
                    numeric_amount_of_value(v, &p)
                }
            }),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, v)| numeric_amount_of_value(v, &format!("{path}[{i}]"))),
            _ => None,
        }
    }

    /// One walk finds what the two walks found: a numeric `amount` anywhere (unknown
    /// fields and arrays included, not when the number is elsewhere), and any refused
    /// character in a string or a key, also when a numeric amount follows it.
    #[test]
    fn the_scan_finds_numeric_amounts_and_refused_characters_anywhere() {
        let cases = [
            (
                serde_json::json!({"a": "x", "b": {"amount": "1.00"}}),
                false,
                true,
            ),
            (serde_json::json!({"x": [{"y": {"amount": 2}}]}), true, true),
            (serde_json::json!({"amount": 3.5}), true, true),
            (serde_json::json!({"n": 4, "amounts": 5}), false, true),
            (
                serde_json::json!({"c": "😀", "d": {"amount": 1}}),
                true,
                false,
            ),
            (
                serde_json::json!({"c": "😀", "d": {"amount": "1"}}),
                false,
                false,
            ),
            (serde_json::json!({"😀": "x"}), false, false),
            (serde_json::json!([["Ольга"]]), false, false),
            (
                serde_json::json!({"c": "Bjørn Ærlig", "k": ["æøå"]}),
                false,
                true,
            ),
            (serde_json::json!({"c": "a\u{7}b"}), false, false),
        ];
        for (v, numeric, allowed) in cases {
            let text = v.to_string();
            let node = crate::xs2a::tree::from_slice(text.as_bytes()).unwrap();
            let s = scan(&node);
            assert_eq!(numeric_amount(&node, "").is_some(), numeric, "{v}");
            assert_eq!(
                crate::sandbox::domain::rules::check_json_characters(&node).is_ok(),
                allowed,
                "{v}"
            );
            let numeric_before = numeric_amount_of_value(&v, "").is_some();
            let allowed_before = crate::sandbox::domain::rules::check_json_characters(&v).is_ok();
            assert_eq!((numeric_before, allowed_before), (numeric, allowed), "{v}");
            assert_eq!(s.numeric_amount, numeric, "{v}");
            if !numeric {
                assert_eq!(s.characters_allowed, allowed, "{v}");
            }
        }
    }
}
