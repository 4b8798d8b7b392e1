//! Checks a sandbox response against the Berlin Group NextGenPSD2 1.3.11 OpenAPI file
//! (`berlin-group-psd2-api-1.3.11.yaml`) with the `jsonschema` crate.
//!
//! # What is checked
//!
//! Only `/v1/**` responses (the HTML SCA pages and `/` are not part of the API). For each
//! response the operation is found the way the Berlin Group file lists it
//! (`paths` → method → `responses` → status → `content` `application/json` → schema), so
//! the mapping is the spec's own, e.g.:
//!
//! | Request | Status | Schema |
//! |---|---|---|
//! | `GET /v1/accounts` | 200 | `accountList` |
//! | `GET /v1/accounts/{id}` | 200 | inline `{account: accountDetails}` (`OK_200_AccountDetails`) |
//! | `GET /v1/accounts/{id}/balances` | 200 | `readAccountBalanceResponse-200` |
//! | `GET /v1/accounts/{id}/transactions` | 200 | `transactionsResponse-200_json` |
//! | `GET /v1/card-accounts` | 200 | `cardAccountList` |
//! | `POST /v1/{payment-service}/{product}` | 201 | `paymentInitationRequestResponse-201` |
//! | `GET /v1/{payment-service}/{product}/{id}/status` | 200 | `paymentInitiationStatusResponse-200_json` |
//! | `POST /v1/signing-baskets` | 201 | `signingBasketResponse-201` |
//! | `POST /v1/consents` | 201 | `consentsResponse-201` |
//! | any of the above | 4xx | `Error<status>_NG_<AIS\|PIS\|PIIS\|SBS>` of that operation |
//!
//! Rules on top of the schemas (the Berlin Group error schemas do not require anything):
//! - every 4xx/5xx body is JSON with a non-empty `tppMessages` array (the sandbox's
//!   `ApiError` always sends one);
//! - a status the operation does not list: 4xx → `Error<status>_NG_<family>` where the file
//!   defines it (family by path: `signing-baskets` SBS, `funds-confirmations` PIIS,
//!   `payments`/`bulk-payments`/`periodic-payments` PIS, else AIS), otherwise the generic
//!   error shape below; 2xx → a violation (the file defines no such answer);
//! - 500 is always a violation (the sandbox never answers 500); other 5xx (the file gives
//!   them no body) must have the generic error shape;
//! - a 204 (or other body-less answer of the file) must have no body; a body must be
//!   `application/json`;
//! - one documented exception to the file's status/code pairing ([`DOCUMENTED_400_CODES`],
//!   docs/sandbox.md "Signatures and errors"): the interface document answers signature and
//!   certificate failures with 400 (Authentication 3; Errors table), the Berlin Group file
//!   lists `SIGNATURE_*` / `CERTIFICATE_*` under 401 only, and the document wins. A 400
//!   message with exactly one of those five codes is checked as if it had a 400 code of the
//!   file; nothing else is relaxed (another 401 code under 400 is still a violation).
//!
//! Paths with no Berlin Group counterpart (`/v1/sandbox/**`, `/v1/users`, `/v1/user`,
//! `/v1/agreements/**`, `/v1/bank-offered-consents/**`,
//! `/v1/payments/{product}/fee-information`) are checked for errors only, against the
//! generic error shape: `tppMessages` (at least one) of `{category: ERROR|WARNING, code, path?,
//! text? (≤ 500 chars)}` where `code` is in one of the file's `MessageCode<status>_*` enums
//! for that status (any `MessageCode4xx_*` when the file has none for it), and `_links` of
//! `{href}`. Their 2xx bodies are skipped, except the sandbox customer listing
//! (`GET /v1/sandbox/customers`, and one customer at `GET /v1/sandbox/customers/{id}`),
//! whose exact key set is the interface document's table ("Sandbox customer"): every field
//! required, no others.
//!
//! # OpenAPI 3.0 specifics
//!
//! The file's schemas are OpenAPI 3.0 Schema Objects (≈ JSON Schema draft 4/5: boolean
//! `exclusiveMinimum`, `$ref` siblings ignored). They are validated as draft 4 after a
//! rewrite: `#/components/schemas/X` refs become `#/definitions/X`; `nullable: true` becomes
//! a `null` alternative of `type`; `discriminator`, `example`, `xml`, `externalDocs`,
//! `readOnly`, `writeOnly`, `deprecated` are dropped. A response schema that is a `oneOf`
//! (payment details: single/periodic/bulk; update PSU data) is checked as `anyOf`, because
//! its alternatives have no `additionalProperties: false` and so are not exclusive (a
//! periodic payment is also a valid single payment). Formats checked: `date`
//! (`YYYY-MM-DD`), `date-time` (RFC 3339, offset required: interface document "date-time
//! with offset"), `uri`/`url` (a URI reference: the file's own examples use relative
//! `href`s), `byte` (base64).
//!
//! The file is read once per test binary from `$CARGO_MANIFEST_DIR/../shared/spec/`, or
//! from the copy in `tests/spec/` when the shared directory is absent.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use psd2_console::sandbox::observe::ObservedExchange;
use serde_json::{Map, Value, json};

/// The Berlin Group OpenAPI file.
pub const SPEC_FILE: &str = "berlin-group-psd2-api-1.3.11.yaml";

/// A reference file of `shared/spec/` (beside the repository), or its copy in `tests/spec/`.
pub fn spec_path(file: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/spec").join(file);
    if shared.is_file() {
        shared
    } else {
        root.join("tests/spec").join(file)
    }
}

/// Berlin Group service family of an error schema (`Error<status>_NG_<family>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Ais,
    Pis,
    Piis,
    Sbs,
}

impl Family {
    fn suffix(self) -> &'static str {
        match self {
            Family::Ais => "AIS",
            Family::Pis => "PIS",
            Family::Piis => "PIIS",
            Family::Sbs => "SBS",
        }
    }

    /// By the first path segment after `/v1/`.
    fn of(segments: &[&str]) -> Family {
        match segments.first().copied() {
            Some("signing-baskets") => Family::Sbs,
            Some("funds-confirmations") => Family::Piis,
            Some(s) if PAYMENT_SERVICES.contains(&s) => Family::Pis,
            _ => Family::Ais,
        }
    }
}

/// The Berlin Group 401 codes the interface document answers with 400 (signature and
/// certificate failures; Authentication 3, Errors table). Written out here, not taken from
/// the crate, so that the observer accepts exactly the documented exception.
pub const DOCUMENTED_400_CODES: [&str; 5] = [
    "SIGNATURE_MISSING",
    "SIGNATURE_INVALID",
    "CERTIFICATE_MISSING",
    "CERTIFICATE_INVALID",
    "CERTIFICATE_EXPIRED",
];

/// `body` with the codes of [`DOCUMENTED_400_CODES`] read as `FORMAT_ERROR` (a member of every
/// `MessageCode400_*` enum) when `status` is 400; unchanged otherwise.
fn with_documented_exception(status: u16, body: Value) -> Value {
    if status != 400 {
        return body;
    }
    let mut body = body;
    if let Some(messages) = body["tppMessages"].as_array_mut() {
        for m in messages {
            if m["code"]
                .as_str()
                .is_some_and(|c| DOCUMENTED_400_CODES.contains(&c))
            {
                m["code"] = json!("FORMAT_ERROR");
            }
        }
    }
    body
}

/// Values of the file's `{payment-service}` path parameter.
const PAYMENT_SERVICES: &[&str] = &["payments", "bulk-payments", "periodic-payments"];

/// One response of an operation: the definition key of its JSON body schema (None: the file
/// gives it no JSON body) and a label for messages.
#[derive(Debug, Clone)]
struct Resp {
    key: Option<String>,
    label: String,
}

#[derive(Debug)]
struct Operation {
    method: String,
    template: String,
    segments: Vec<String>,
    literals: usize,
    responses: BTreeMap<u16, Resp>,
}

impl Operation {
    fn matches(&self, segs: &[&str]) -> bool {
        self.segments.len() == segs.len()
            && self.segments.iter().zip(segs).all(|(t, s)| {
                if t == "{payment-service}" {
                    PAYMENT_SERVICES.contains(s)
                } else if t.starts_with('{') {
                    !s.is_empty()
                } else {
                    t == s
                }
            })
    }
}

/// The loaded file: compiled validators and the operation table.
pub struct Spec {
    validators: jsonschema::ValidatorMap,
    definitions: BTreeSet<String>,
    ops: Vec<Operation>,
}

/// The spec, loaded once; `Err` (the load failure) makes every check fail.
pub fn spec() -> Result<&'static Spec, String> {
    static SPEC: OnceLock<Result<Spec, String>> = OnceLock::new();
    SPEC.get_or_init(load).as_ref().map_err(|e| e.clone())
}

fn load() -> Result<Spec, String> {
    load_file(&spec_path(SPEC_FILE))
}

/// Reads and compiles a Berlin Group OpenAPI file (YAML).
///
/// Errors: the file cannot be read, is not YAML, or its schemas do not compile.
pub fn load_file(path: &std::path::Path) -> Result<Spec, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // The file has a few non-UTF-8 bytes in descriptions.
    let text = String::from_utf8_lossy(&bytes);
    let doc: Value = serde_norway::from_str(&text)
        .map_err(|e| format!("{} is not YAML: {e}", path.display()))?;
    build(&doc)
}

/// Keywords of OpenAPI 3.0 Schema Objects that are not JSON Schema validation keywords.
const OPENAPI_ONLY: &[&str] = &[
    "discriminator",
    "example",
    "xml",
    "externalDocs",
    "readOnly",
    "writeOnly",
    "deprecated",
];

/// Rewrites one OpenAPI 3.0 Schema Object (and its subschemas) into draft 4.
fn fix_schema(s: &mut Value) {
    let Some(o) = s.as_object_mut() else { return };
    if let Some(Value::String(r)) = o.get_mut("$ref")
        && let Some(name) = r.strip_prefix("#/components/schemas/")
    {
        *r = format!("#/definitions/{name}");
    }
    for k in OPENAPI_ONLY {
        o.remove(*k);
    }
    if o.remove("nullable") == Some(Value::Bool(true)) {
        match o.get_mut("type") {
            Some(Value::String(t)) => {
                let t = t.clone();
                o.insert("type".into(), json!([t, "null"]));
            }
            Some(Value::Array(ts)) if !ts.contains(&json!("null")) => ts.push(json!("null")),
            _ => {}
        }
        if let Some(Value::Array(e)) = o.get_mut("enum")
            && !e.contains(&Value::Null)
        {
            e.push(Value::Null);
        }
    }
    for k in ["properties", "patternProperties", "definitions"] {
        if let Some(Value::Object(m)) = o.get_mut(k) {
            m.values_mut().for_each(fix_schema);
        }
    }
    for k in ["items", "additionalProperties", "not", "additionalItems"] {
        match o.get_mut(k) {
            Some(Value::Array(a)) => a.iter_mut().for_each(fix_schema),
            Some(v @ Value::Object(_)) => fix_schema(v),
            _ => {}
        }
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(a)) = o.get_mut(k) {
            a.iter_mut().for_each(fix_schema);
        }
    }
}

/// Link object of the interface document: `href` and `verbs` (both required).
fn doc_link() -> Value {
    json!({
        "type": "object",
        "required": ["href", "verbs"],
        "additionalProperties": false,
        "properties": {
            "href": {"type": "string"},
            "verbs": {"type": "array", "items": {"enum": ["GET", "PUT", "POST", "DELETE"]}}
        }
    })
}

/// Interface document, "Sandbox customer": all fields required, no others.
fn sandbox_customer() -> Value {
    let strings = json!({"type": "array", "items": {"type": "string"}});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["customerId", "customerNumber", "customerType", "customerName",
                     "agreements", "accounts", "cardAccounts", "_links"],
        "properties": {
            "customerId": {"type": "string"},
            "customerNumber": {"type": "string"},
            "customerType": {"enum": ["PRIVATE", "CORPORATE"]},
            "customerName": {"type": "string"},
            "agreements": {"type": "array", "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["id", "name", "engagements", "_links"],
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "engagements": strings,
                    "_links": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["self", "engagements"],
                        "properties": {"self": doc_link(), "engagements": doc_link()}
                    }
                }
            }},
            "accounts": strings,
            "cardAccounts": strings,
            "_links": {
                "type": "object",
                "additionalProperties": false,
                "required": ["self"],
                "properties": {"self": doc_link()}
            }
        }
    })
}

/// The generic error shape with `code` in `codes`.
fn generic_error(codes: &BTreeSet<String>) -> Value {
    json!({
        "type": "object",
        "required": ["tppMessages"],
        "properties": {
            "tppMessages": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["category", "code"],
                    "properties": {
                        "category": {"$ref": "#/definitions/tppMessageCategory"},
                        "code": {"enum": codes.iter().collect::<Vec<_>>()},
                        "path": {"type": "string"},
                        "text": {"$ref": "#/definitions/tppMessageText"}
                    }
                }
            },
            "_links": {"$ref": "#/definitions/_linksAll"}
        }
    })
}

fn is_uri_reference(s: &str) -> bool {
    static BASE: OnceLock<url::Url> = OnceLock::new();
    let base = BASE.get_or_init(|| url::Url::parse("http://base.invalid/").expect("base URL"));
    url::Url::parse(s).is_ok() || base.join(s).is_ok()
}

fn is_date(s: &str) -> bool {
    s.len() == 10 && chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

fn is_date_time(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

fn is_base64(s: &str) -> bool {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).is_ok()
}

fn build(doc: &Value) -> Result<Spec, String> {
    let schemas = doc["components"]["schemas"]
        .as_object()
        .ok_or("no components.schemas")?;
    let responses = doc["components"]["responses"]
        .as_object()
        .ok_or("no components.responses")?;
    let mut defs = Map::new();
    for (name, s) in schemas {
        let mut s = s.clone();
        fix_schema(&mut s);
        defs.insert(name.clone(), s);
    }

    // Message codes per status, from the MessageCode<status>_* enums.
    let mut codes: BTreeMap<u16, BTreeSet<String>> = BTreeMap::new();
    for (name, s) in schemas {
        let Some(rest) = name.strip_prefix("MessageCode") else {
            continue;
        };
        let Ok(status) = rest.get(..3).unwrap_or("").parse::<u16>() else {
            continue;
        };
        if let Some(e) = s["enum"].as_array() {
            codes
                .entry(status)
                .or_default()
                .extend(e.iter().filter_map(|c| c.as_str().map(str::to_string)));
        }
    }
    let all_error_codes: BTreeSet<String> = codes
        .iter()
        .filter(|(st, _)| **st >= 400)
        .flat_map(|(_, c)| c.iter().cloned())
        .collect();
    for (st, c) in &codes {
        if *st >= 400 {
            defs.insert(format!("__error{st}"), generic_error(c));
        }
    }
    defs.insert("__error".into(), generic_error(&all_error_codes));
    defs.insert("__sandboxCustomer".into(), sandbox_customer());
    defs.insert(
        "__sandboxCustomers".into(),
        json!({"type": "array", "items": {"$ref": "#/definitions/__sandboxCustomer"}}),
    );

    // Operations.
    let mut ops = Vec::new();
    let paths = doc["paths"].as_object().ok_or("no paths")?;
    for (template, item) in paths {
        let template = template.trim();
        let Some(item) = item.as_object() else {
            continue;
        };
        for (method, op) in item {
            if !["get", "post", "put", "delete", "patch"].contains(&method.as_str()) {
                continue;
            }
            let mut resps = BTreeMap::new();
            for (status, r) in op["responses"].as_object().into_iter().flatten() {
                let Ok(status) = status.parse::<u16>() else {
                    continue;
                };
                let (label, r) = match r["$ref"].as_str() {
                    Some(rf) => {
                        let name = rf.rsplit('/').next().unwrap_or(rf);
                        (
                            name.to_string(),
                            responses.get(name).unwrap_or(&Value::Null),
                        )
                    }
                    None => (format!("{method} {template} {status}"), r),
                };
                let schema = &r["content"]["application/json"]["schema"];
                let resp = if schema.is_null() {
                    Resp { key: None, label }
                } else if let Some(name) = schema["$ref"]
                    .as_str()
                    .and_then(|s| s.strip_prefix("#/components/schemas/"))
                {
                    Resp {
                        key: Some(name.to_string()),
                        label: name.to_string(),
                    }
                } else {
                    let mut s = schema.clone();
                    fix_schema(&mut s);
                    if let Some(o) = s.as_object_mut()
                        && let Some(alts) = o.remove("oneOf")
                    {
                        o.insert("anyOf".into(), alts);
                    }
                    let key = format!("__op{}", defs.len());
                    defs.insert(key.clone(), s);
                    Resp {
                        key: Some(key),
                        label: format!("inline schema of {label}"),
                    }
                };
                resps.insert(status, resp);
            }
            let segments: Vec<String> = template
                .trim_start_matches("/v1/")
                .split('/')
                .map(str::to_string)
                .collect();
            ops.push(Operation {
                method: method.to_ascii_uppercase(),
                template: template.to_string(),
                literals: segments.iter().filter(|s| !s.starts_with('{')).count(),
                segments,
                responses: resps,
            });
        }
    }

    let definitions: BTreeSet<String> = defs.keys().cloned().collect();
    let root = json!({ "definitions": Value::Object(defs) });
    let validators = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(true)
        .with_format("date", is_date)
        .with_format("date-time", is_date_time)
        .with_format("uri", is_uri_reference)
        .with_format("url", is_uri_reference)
        .with_format("byte", is_base64)
        .build_map(&root)
        .map_err(|e| format!("Berlin Group schemas do not compile: {e}"))?;
    Ok(Spec {
        validators,
        definitions,
        ops,
    })
}

/// Where a `/v1` path leads.
enum Route<'a> {
    /// An operation of the Berlin Group file.
    Op(&'a Operation),
    /// A Berlin Group path, but not with this method.
    OtherMethod(Family),
    /// No such path in the Berlin Group file (but under a Berlin Group family).
    Unknown(Family),
    /// A path of the interface document (or the sandbox) with no Berlin Group counterpart.
    Proprietary,
}

/// Paths with no Berlin Group counterpart (segments after `/v1/`).
fn proprietary(segs: &[&str]) -> bool {
    matches!(
        segs.first().copied(),
        Some("sandbox" | "users" | "user" | "agreements" | "bank-offered-consents")
    ) || (segs.len() == 3 && segs[0] == "payments" && segs[2] == "fee-information")
}

/// The path's segments after `/v1/`, ignoring one trailing slash.
fn segments(path: &str) -> Vec<&str> {
    let p = path.strip_prefix("/v1/").unwrap_or(path);
    let p = p.strip_suffix('/').unwrap_or(p);
    p.split('/').collect()
}

impl Spec {
    fn route(&self, method: &str, path: &str) -> Route<'_> {
        let segs = segments(path);
        if proprietary(&segs) {
            return Route::Proprietary;
        }
        let best = self
            .ops
            .iter()
            .filter(|o| o.matches(&segs))
            .map(|o| o.literals)
            .max();
        let Some(best) = best else {
            return Route::Unknown(Family::of(&segs));
        };
        match self
            .ops
            .iter()
            .find(|o| o.literals == best && o.matches(&segs) && o.method == method)
        {
            Some(op) => Route::Op(op),
            None => Route::OtherMethod(Family::of(&segs)),
        }
    }

    /// The label of the schema a JSON body of `method path` answered with `status` is checked
    /// against (`None`: not checked, or no body expected).
    pub fn schema_for(&self, method: &str, path: &str, status: u16) -> Option<String> {
        if !path.starts_with("/v1/") {
            return None;
        }
        let segs = segments(path);
        match self.route(method, path) {
            Route::Op(op) => match op.responses.get(&status) {
                Some(r) => r.key.as_ref().map(|_| r.label.clone()),
                None if status >= 400 => Some(self.error_key(status, Family::of(&segs))),
                None => None,
            },
            Route::OtherMethod(f) | Route::Unknown(f) if status >= 400 => {
                Some(self.error_key(status, f))
            }
            Route::Proprietary if status >= 400 => Some(self.generic_key(status)),
            Route::Proprietary if method == "GET" && status == 200 => match segs.as_slice() {
                ["sandbox", "customers"] => Some("__sandboxCustomers".into()),
                ["sandbox", "customers", _] => Some("__sandboxCustomer".into()),
                _ => None,
            },
            _ => None,
        }
    }

    fn generic_key(&self, status: u16) -> String {
        let k = format!("__error{status}");
        if self.definitions.contains(&k) {
            k
        } else {
            "__error".into()
        }
    }

    fn error_key(&self, status: u16, family: Family) -> String {
        let k = format!("Error{status}_NG_{}", family.suffix());
        if self.definitions.contains(&k) {
            k
        } else {
            self.generic_key(status)
        }
    }

    fn validate(&self, key: &str, body: &Value) -> Result<(), String> {
        let v = self
            .validators
            .get(&format!("#/definitions/{key}"))
            .ok_or_else(|| format!("no compiled schema {key}"))?;
        let errors: Vec<String> = v
            .iter_errors(body)
            .take(8)
            .map(|e| {
                let at = e.instance_path().to_string();
                format!("at {}: {e}", if at.is_empty() { "/" } else { &at })
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!("not a valid {key}: {}", errors.join("; ")))
        }
    }

    /// Checks one response (see the module documentation for the rules).
    pub fn check(&self, ex: &ObservedExchange) -> Result<(), String> {
        if !ex.path.starts_with("/v1/") {
            return Ok(());
        }
        let status = ex.status;
        if status == 500 {
            return Err("500 Internal Server Error: the sandbox never answers 500".into());
        }
        if !(200..300).contains(&status) && status < 400 {
            return Ok(());
        }
        let body = if ex.body.iter().all(u8::is_ascii_whitespace) {
            None
        } else {
            let ct = ex.content_type.as_deref().unwrap_or("");
            if !(ct.starts_with("application/json") || ct.starts_with("application/problem+json")) {
                return Err(format!(
                    "body with Content-Type {ct:?}, not application/json"
                ));
            }
            Some(
                serde_json::from_slice::<Value>(&ex.body)
                    .map_err(|e| format!("body is not JSON: {e}"))?,
            )
        };
        if status >= 400 {
            let b = body
                .as_ref()
                .ok_or_else(|| format!("{status} without a body (tppMessages expected)"))?;
            match b["tppMessages"].as_array() {
                Some(m) if !m.is_empty() => {}
                _ => return Err("error body without a non-empty tppMessages array".into()),
            }
        }
        let segs = segments(&ex.path);
        let key = match self.route(&ex.method, &ex.path) {
            Route::Op(op) => match op.responses.get(&status) {
                Some(Resp { key: Some(k), .. }) => k.clone(),
                Some(Resp { key: None, label }) => {
                    if status >= 400 {
                        self.generic_key(status)
                    } else if body.is_some() {
                        return Err(format!(
                            "{status} of {} {} has no body in the Berlin Group file ({label})",
                            op.method, op.template
                        ));
                    } else {
                        return Ok(());
                    }
                }
                None if status >= 400 => self.error_key(status, Family::of(&segs)),
                None => {
                    return Err(format!(
                        "{status} is not an answer of {} {} in the Berlin Group file (it lists {:?})",
                        op.method,
                        op.template,
                        op.responses.keys().collect::<Vec<_>>()
                    ));
                }
            },
            Route::OtherMethod(f) | Route::Unknown(f) => {
                if status >= 400 {
                    self.error_key(status, f)
                } else {
                    // A 2xx on a path or method the file does not have: proprietary, unchecked.
                    return Ok(());
                }
            }
            Route::Proprietary => match self.schema_for(&ex.method, &ex.path, status) {
                Some(k) => k,
                None => return Ok(()),
            },
        };
        let body = body.ok_or_else(|| format!("{status} without a body ({key} expected)"))?;
        self.validate(&key, &with_documented_exception(status, body))
    }
}

/// `Ok` when the body is valid for its operation and status (module documentation).
pub fn check_exchange(ex: &ObservedExchange) -> Result<(), String> {
    if !ex.path.starts_with("/v1/") {
        return Ok(());
    }
    spec()?.check(ex)
}

/// An exchange as the sandbox observer would report it, with a JSON body (`Null`: empty).
pub fn exchange(method: &str, path: &str, status: u16, body: &Value) -> ObservedExchange {
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (path.to_string(), None),
    };
    ObservedExchange {
        method: method.to_string(),
        path,
        query,
        status,
        content_type: (!body.is_null()).then(|| "application/json".to_string()),
        body: if body.is_null() {
            bytes::Bytes::new()
        } else {
            bytes::Bytes::from(body.to_string())
        },
    }
}
