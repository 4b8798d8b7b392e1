//! Checks a request before it is sent: pure functions over the operation, the parameter
//! values and the body text, used by the console (problems shown next to the field) and
//! usable by scripts. Each [`Problem`] names the field — a parameter or header name, or a
//! JSON path such as `body.instructedAmount.amount` — and says why.
//!
//! | Rule | Source |
//! |---|---|
//! | A required path/query parameter or header has no value (and the engine does not fill it) | header table of "Create payments signing basket"; Endpoints; Berlin Group 1.3.11 |
//! | A UUID header (`X-Request-ID`, `TPP-Session-ID`, `PSU-ID`, `PSU-Corporate-ID`, `PSU-Device-ID`) is not a hyphenated UUID | Resources, redirect parameters ("UUID (RFC 4122)"); basket header table |
//! | A header value is not visible ASCII | RFC 9110 field values (reqwest refuses them) |
//! | The body is not JSON (line and column given) | "All payloads are JSON" |
//! | An `amount` is not a JSON string, does not match the Berlin Group pattern `-?[0-9]{1,14}(\.[0-9]{1,3})?` ([`crate::xs2a::amount`], shared with the sandbox), an `instructedAmount` is not above zero, or more than 2 fraction digits | Payment initiation body; Versioning `amount-as-string`; Berlin Group `amountValue` |
//! | A KID reference (`referenceType` `KID`) that is not 2–25 digits with a MOD10 or MOD11 check digit | Errors ("KID errors: 400"); [`crate::xs2a::check_digits::check_kid`], the sandbox's own check |
//! | A name (`creditorName`, `debtorName`, `ultimateCreditor`, `ultimateDebtor`, ...) is over 70 characters | Limits; Berlin Group `creditorName` max 70 |
//! | SEPA, SWIFT or NCBCT payment without `creditorName`, `creditorAddress.townName`, `creditorAddress.country` or the creditor agent BIC | Versioning, structured addresses (sandbox from 2026-08-13; reported regardless of the date) |
//! | A character the bank refuses (emoji, other scripts, control characters) in any body string | Errors: "ASPSP downstream system rejects a UTF-8 character"; [`crate::xs2a::charset`], the sandbox's own definition |
//! | A signing basket with no, over 100, duplicate, empty or placeholder payment ids | Signing basket creation request; Limits |
//! | `monthsOfExecution` with a month twice | Other payment facts ("duplicate month identifiers is rejected") |
//!
//! Bulk and periodic payments in a basket are refused by the bank (`REFERENCE_MIX_INVALID`),
//! but a payment id does not tell its payment service: [`validate`] cannot know it unless the
//! caller does. The console does not track the ids it created, so this rule is not checked
//! client-side; the count, duplicates and placeholder ids are.

use serde_json::Value;

use crate::xs2a::charset;
use crate::xs2a::headers as h;
use crate::xs2a::model::parse_minor;
use crate::xs2a::operations::{Operation, Param, ParamKind};
use crate::xs2a::payment::PaymentType;

/// Most payments in one signing basket (interface document, Limits and Versioning: raised
/// from 10 to 100 in release 1.21.14).
pub const MAX_BASKET_PAYMENTS: usize = 100;

/// Longest name (interface document, Limits: "Account and card account name 70 characters";
/// Berlin Group `creditorName`/`debtorName`/`ultimateCreditor` max 70).
pub(crate) const MAX_NAME_CHARS: usize = 70;

/// Body fields that hold a party or account name, limited to [`MAX_NAME_CHARS`].
pub(crate) const NAME_FIELDS: [&str; 6] = [
    "creditorName",
    "debtorName",
    "ultimateCreditor",
    "ultimateDebtor",
    "customerName",
    "name",
];

/// One reason not to send: the field and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// A parameter or header name (`account-id`, `PSU-ID`), `body` for the body as a whole,
    /// or a JSON path into the body (`body.payments[1].creditorName`).
    pub field: String,
    /// Why, in one sentence without the field name.
    pub reason: String,
}

impl Problem {
    fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Problem {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// Whether the problem is in the body (`body` or a path below it).
    pub(crate) fn is_body(&self) -> bool {
        self.field == "body" || self.field.starts_with("body.") || self.field.starts_with("body[")
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

/// The headers the engine sends by itself for `op` when their field is left empty:
/// `X-Request-ID`, `Date`, `Digest`, the signature headers, `TPP-Redirect-URI`,
/// `TPP-Session-ID` (the engine always has one), the profile's `PSU-IP-Address`,
/// `TPP-Redirect-Preferred`, `x-accept-fix` and `Accept`, and `PSU-ID` /
/// `PSU-Corporate-ID` when the session knows them (`psu_id_known`, `corporate_known`).
///
/// The profile headers are assumed set (as in the shipped profiles); the engine omits them
/// otherwise.
pub fn engine_fills(
    op: &Operation,
    psu_id_known: bool,
    corporate_known: bool,
) -> Vec<&'static str> {
    op.header_params()
        .iter()
        .filter(|p| p.auto)
        .filter(|p| match p.name {
            h::PSU_ID => psu_id_known && op.psu_headers,
            h::PSU_CORPORATE_ID => corporate_known && op.psu_headers,
            _ => true,
        })
        .map(|p| p.name)
        .collect()
}

/// Every problem of the request for `op` with parameter values `values` (name → value; an
/// empty value counts as not given) and the body text `body` (`None` or blank: none given,
/// the default template is sent and not checked). `engine_fills` lists the header names the
/// engine sends when their field is empty ([`engine_fills`]).
///
/// Problems come in form order: parameters and headers first, then the body.
pub fn validate(
    op: &Operation,
    values: &[(String, String)],
    body: Option<&str>,
    engine_fills: &[&str],
) -> Vec<Problem> {
    let mut out = Vec::new();
    let value_of = |p: &Param| {
        values
            .iter()
            .rev()
            .find(|(k, _)| match p.kind {
                ParamKind::Header => k.eq_ignore_ascii_case(p.name),
                _ => k == p.name,
            })
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    };
    for p in op.all_params() {
        let v = value_of(p);
        match v {
            None => {
                let filled = !p.default.is_empty()
                    || (p.auto && engine_fills.iter().any(|n| n.eq_ignore_ascii_case(p.name)));
                if p.required && !filled {
                    out.push(Problem::new(p.name, missing_reason(op, p)));
                }
            }
            Some(v) => {
                if p.uuid && !is_uuid(v) {
                    out.push(Problem::new(
                        p.name,
                        format!(
                            "{v:?} is not a UUID (RFC 4122, 8-4-4-4-12 hex digits, e.g. \
                             99391c7e-ad88-49ec-a2ad-99ddcb1f7721)"
                        ),
                    ));
                }
                if p.kind == ParamKind::Header
                    && let Some(c) = v.chars().find(|c| !(' '..='~').contains(c))
                {
                    out.push(Problem::new(
                        p.name,
                        format!(
                            "header values must be visible ASCII; U+{:04X} cannot be sent",
                            u32::from(c)
                        ),
                    ));
                }
            }
        }
    }
    if let Some(text) = body.filter(|b| !b.trim().is_empty()) {
        out.extend(validate_body(op, values, text));
    }
    out
}

fn missing_reason(op: &Operation, p: &Param) -> String {
    match (p.kind, p.name) {
        (ParamKind::Header, h::PSU_ID) => format!(
            "required by {} and not known yet: complete SCA first (e.g. Register PSU or List \
             accounts), or type one",
            op.title
        ),
        (ParamKind::Header, _) => "required header, missing".to_string(),
        (ParamKind::Path, _) => "required path parameter, missing".to_string(),
        (ParamKind::Query, _) => "required query parameter, missing".to_string(),
    }
}

/// Whether `s` is a hyphenated UUID (`8-4-4-4-12` hex digits), the form the interface
/// document's UUID values take.
pub fn is_uuid(s: &str) -> bool {
    s.len() == 36 && uuid::Uuid::try_parse(s).is_ok()
}

/// The problems of the body text alone: JSON syntax, amounts, names, characters, and the
/// rules of the operation (structured address, basket, periodic months).
pub fn validate_body(op: &Operation, values: &[(String, String)], text: &str) -> Vec<Problem> {
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return vec![Problem::new(
                "body",
                format!(
                    "not valid JSON at line {}, column {}: {}",
                    e.line(),
                    e.column(),
                    json_error_text(&e)
                ),
            )];
        }
    };
    let mut out = Vec::new();
    walk(&v, "body", &mut out);
    if let Some(kind) = payment_type(op, values)
        && kind.needs_structured_address()
    {
        match v.get("payments").and_then(Value::as_array) {
            Some(entries) => {
                for (i, e) in entries.iter().enumerate() {
                    structured_address(kind, e, &format!("body.payments[{i}]"), &mut out);
                }
            }
            None => structured_address(kind, &v, "body", &mut out),
        }
    }
    if is_basket_creation(op) {
        basket(&v, &mut out);
    }
    months_of_execution(&v, &mut out);
    out
}

/// serde_json's message without its trailing " at line L column C".
fn json_error_text(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Amounts, names and characters, everywhere in the body.
fn walk(v: &Value, path: &str, out: &mut Vec<Problem>) {
    match v {
        Value::Object(m) => {
            // A KID payment reference (referenceType KID): the sandbox's own check.
            if let (Some(Value::String(t)), Some(Value::String(r))) =
                (m.get("referenceType"), m.get("reference"))
                && t.trim().eq_ignore_ascii_case("KID")
                && let Err(k) = crate::xs2a::check_digits::check_kid(r)
            {
                out.push(Problem::new(format!("{path}.reference"), k.reason(r)));
            }
            for (k, x) in m {
                let p = format!("{path}.{k}");
                if let Some((pos, c)) = charset::first_refused(k) {
                    out.push(Problem::new(format!("{p} (name)"), refused(pos, c)));
                }
                if k == "amount" {
                    amount(x, &p, out);
                }
                if NAME_FIELDS.contains(&k.as_str())
                    && let Value::String(s) = x
                {
                    let n = s.trim().chars().count();
                    if n > MAX_NAME_CHARS {
                        out.push(Problem::new(
                            p.clone(),
                            format!("{n} characters long; the bank takes at most {MAX_NAME_CHARS}"),
                        ));
                    }
                }
                walk(x, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(x, &format!("{path}[{i}]"), out);
            }
        }
        Value::String(s) => {
            if let Some((pos, c)) = charset::first_refused(s) {
                out.push(Problem::new(path, refused(pos, c)));
            }
        }
        _ => {}
    }
}

fn refused(pos: usize, c: char) -> String {
    let shown = if c.is_control() {
        String::new()
    } else {
        format!(" ({c})")
    };
    format!(
        "the character U+{:04X}{shown} at position {} is refused by the bank's systems: use \
         letters, digits and punctuation of ISO 8859-1 (Latin-1)",
        u32::from(c),
        pos + 1
    )
}

fn amount(v: &Value, path: &str, out: &mut Vec<Problem>) {
    match v {
        Value::String(s) => {
            // The Berlin Group pattern, shared with the sandbox; an instructed amount must be
            // greater than zero. The bank's currencies have 2 fraction digits.
            let positive = path.ends_with("instructedAmount.amount");
            if let Err(p) = crate::xs2a::amount::check_amount(s, positive) {
                out.push(Problem::new(path, p.reason(s)));
            } else if parse_minor(s).is_none() {
                out.push(Problem::new(
                    path,
                    format!("{s:?} is not a decimal amount with at most 2 fraction digits"),
                ));
            }
        }
        Value::Number(n) => out.push(Problem::new(
            path,
            format!(
                "must be a JSON string such as \"{n}\", not a number (amounts are strings: \
                 x-accept-fix amount-as-string)"
            ),
        )),
        _ => out.push(Problem::new(
            path,
            "must be a JSON string with a decimal amount such as \"13.37\"",
        )),
    }
}

/// The payment type of a payment initiation (from the product in the path), `None` for other
/// operations or an unknown product.
fn payment_type(op: &Operation, values: &[(String, String)]) -> Option<PaymentType> {
    if op.method != "POST" {
        return None;
    }
    let path = op.path_and_query(values).ok()?;
    let path = path.split('?').next().unwrap_or("");
    let mut seg = path.trim_start_matches('/').split('/');
    let (_v1, service, product) = (seg.next()?, seg.next()?, seg.next()?);
    if seg.next().is_some()
        || !matches!(service, "payments" | "bulk-payments" | "periodic-payments")
    {
        return None;
    }
    crate::xs2a::payment::product(product).ok().map(|p| p.kind)
}

/// The structured-address rule ([`crate::xs2a::payment::missing_structured_parts`], the
/// sandbox's own) on one payment or bulk entry at `path`.
fn structured_address(kind: PaymentType, part: &Value, path: &str, out: &mut Vec<Problem>) {
    let Some(m) = part.as_object() else {
        return;
    };
    for missing in crate::xs2a::payment::missing_structured_parts(m) {
        let what = match missing {
            "creditorName" => "the creditor name",
            "creditorAddress.townName" => "the creditor's town name",
            "creditorAddress.country" => "the creditor's country code (ISO 3166)",
            _ => "the creditor agent BIC",
        };
        out.push(Problem::new(
            format!("{path}.{missing}"),
            format!(
                "{} payments need {what} (structured addresses: sandbox from 2026-08-13, \
                 production from 2026-11-15)",
                kind.as_str()
            ),
        ));
    }
}

fn is_basket_creation(op: &Operation) -> bool {
    op.method == "POST" && op.path == "/v1/signing-baskets"
}

fn basket(v: &Value, out: &mut Vec<Problem>) {
    let Some(ids) = v.get("paymentIds") else {
        out.push(Problem::new(
            "body.paymentIds",
            "missing: a basket lists the paymentIds of payments created before",
        ));
        return;
    };
    let Some(ids) = ids.as_array() else {
        out.push(Problem::new(
            "body.paymentIds",
            "must be an array of payment id strings",
        ));
        return;
    };
    if ids.is_empty() {
        out.push(Problem::new(
            "body.paymentIds",
            "is empty: a basket holds 1 to 100 payments",
        ));
    }
    if ids.len() > MAX_BASKET_PAYMENTS {
        out.push(Problem::new(
            "body.paymentIds",
            format!(
                "holds {} payments; a signing basket holds at most {MAX_BASKET_PAYMENTS}",
                ids.len()
            ),
        ));
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let p = format!("body.paymentIds[{i}]");
        match id.as_str().map(str::trim) {
            None | Some("") => out.push(Problem::new(p, "must be a non-empty payment id string")),
            Some(s) if s.starts_with('<') && s.ends_with('>') => out.push(Problem::new(
                p,
                format!("{s} is a placeholder: put the paymentId of a payment created before"),
            )),
            Some(s) => {
                if seen.contains(&s) {
                    out.push(Problem::new(p, format!("payment {s} is listed twice")));
                }
                seen.push(s);
            }
        }
    }
}

fn months_of_execution(v: &Value, out: &mut Vec<Problem>) {
    let Some(months) = v.get("monthsOfExecution").and_then(Value::as_array) else {
        return;
    };
    let mut seen: Vec<u8> = Vec::new();
    for (i, m) in months.iter().enumerate() {
        let n = m.as_str().and_then(|s| s.trim().parse::<u8>().ok());
        match n {
            Some(n) if (1..=12).contains(&n) => {
                if seen.contains(&n) {
                    out.push(Problem::new(
                        format!("body.monthsOfExecution[{i}]"),
                        format!("month {n} is listed twice; months must be distinct"),
                    ));
                }
                seen.push(n);
            }
            _ => out.push(Problem::new(
                format!("body.monthsOfExecution[{i}]"),
                "must be a month \"1\" to \"12\" as a string",
            )),
        }
    }
}
