//! The Berlin Group NextGenPSD2 1.3.11 OpenAPI file, built into the binary, read once, its
//! schemas compiled into `jsonschema` validators as they are first needed
//! ([`Spec::validator`]), and its operation table (method + path template → status →
//! response schema and response headers).
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
//! One pattern is anchored: `amountValue` must match as a whole (see `anchor_pattern`).
//!
//! Extra definitions, for answers the file has no schema for: `__error<status>` / `__error`
//! (the generic error shape, see [`super`]), `__problem<status>` / `__problem` (the generic
//! `application/problem+json` shape of the file's `Error<status>_<family>` schemas), `__sandboxCustomer` and `__sandboxCustomers`
//! (interface document, "Sandbox customer").

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use serde_json::{Map, Value, json};

use crate::xs2a::paths::{PAYMENT_SERVICES, PathTemplates};

/// File name of the built-in Berlin Group OpenAPI file (`spec/` of the repository).
pub const SPEC_FILE: &str = "berlin-group-psd2-api-1.3.11.yaml";

/// The Berlin Group OpenAPI file as built into the binary (YAML; a few bytes of its
/// descriptions are not UTF-8, so it is embedded as bytes).
pub const SPEC_YAML: &[u8] = include_bytes!("../../spec/berlin-group-psd2-api-1.3.11.yaml");

/// The Berlin Group 401 codes the interface document answers with 400 (signature and
/// certificate failures; interface document, Authentication 3 and the Errors table). The
/// Berlin Group file lists them under 401 only; the document wins, so a 400 message with one
/// of exactly these codes is accepted (docs/sandbox.md "Signatures and errors").
pub const DOCUMENTED_400_CODES: [&str; 5] = [
    "SIGNATURE_MISSING",
    "SIGNATURE_INVALID",
    "CERTIFICATE_MISSING",
    "CERTIFICATE_INVALID",
    "CERTIFICATE_EXPIRED",
];

/// Why the Berlin Group file could not be turned into validators.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The file is not YAML.
    #[error("the Berlin Group file is not YAML: {0}")]
    Yaml(#[from] serde_norway::Error),
    /// The file lacks a part the lint needs (`components.schemas`, `components.responses`,
    /// `paths`).
    #[error("the Berlin Group file has no {0}")]
    Missing(&'static str),
    /// The rewritten schemas do not compile.
    #[error("the Berlin Group schemas do not compile: {0}")]
    Compile(#[source] Box<jsonschema::ValidationError<'static>>),
    /// A path of the file is not a valid template, or conflicts with another (two names
    /// for one `{name}` segment): (method, template, why).
    #[error("the Berlin Group file's path {0} {1} is not usable: {2}")]
    Path(String, String, matchit::InsertError),
}

/// Berlin Group service family of an error schema (`Error<status>_NG_<family>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
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

    /// By the first path segment after `/v1/`: `signing-baskets` SBS, `funds-confirmations`
    /// PIIS, a payment service PIS, anything else AIS.
    pub(super) fn of(segments: &[&str]) -> Family {
        match segments.first().copied() {
            Some("signing-baskets") => Family::Sbs,
            Some("funds-confirmations") => Family::Piis,
            Some(s) if PAYMENT_SERVICES.contains(&s) => Family::Pis,
            _ => Family::Ais,
        }
    }
}

/// One response of an operation: the definition key of its JSON body schema (None: the file
/// gives it no JSON body), the key of its `application/problem+json` schema (an RFC 7807
/// error, e.g. `Error400_AIS`; None: the file lists none), a label for findings, and the
/// response headers the file lists (name, required).
#[derive(Debug, Clone)]
pub(super) struct Resp {
    pub(super) key: Option<String>,
    pub(super) problem: Option<String>,
    pub(super) label: String,
    pub(super) headers: Vec<(String, bool)>,
}

/// One operation of the file.
#[derive(Debug)]
pub(super) struct Operation {
    pub(super) method: String,
    pub(super) template: String,
    pub(super) responses: BTreeMap<u16, Resp>,
}

impl Route<'_> {
    /// The definition key of the JSON body of an operation's `status` answer (tests).
    #[cfg(test)]
    pub(super) fn op_response_key(&self, status: u16) -> Option<String> {
        match self {
            Route::Op(op) => op.responses.get(&status)?.key.clone(),
            _ => None,
        }
    }
}

/// Where a `/v1` path leads.
pub(super) enum Route<'a> {
    /// An operation of the Berlin Group file.
    Op(&'a Operation),
    /// A Berlin Group path, but not with this method.
    OtherMethod(Family),
    /// No such path in the Berlin Group file (but under a Berlin Group family).
    Unknown(Family),
    /// A path of the interface document (or the sandbox) with no Berlin Group counterpart.
    Proprietary,
}

/// Paths with no Berlin Group counterpart (segments after `/v1/`): `/v1/sandbox/**`,
/// `/v1/users`, `/v1/user`, `/v1/agreements/**`, `/v1/bank-offered-consents/**`,
/// `/v1/payments/{product}/fee-information`.
pub(super) fn proprietary(segs: &[&str]) -> bool {
    matches!(
        segs.first().copied(),
        Some("sandbox" | "users" | "user" | "agreements" | "bank-offered-consents")
    ) || (segs.len() == 3 && segs[0] == "payments" && segs[2] == "fee-information")
}

/// The path's segments after `/v1/`, ignoring one trailing slash.
pub(super) fn segments(path: &str) -> Vec<&str> {
    let p = path.strip_prefix("/v1/").unwrap_or(path);
    let p = p.strip_suffix('/').unwrap_or(p);
    p.split('/').collect()
}

/// The Berlin Group file read for the lint: its rewritten schemas (one `definitions`
/// document), the validators compiled from them so far, and the operation table.
///
/// A validator is compiled on first use, per schema location ([`Spec::validator`]), and kept:
/// compiling every subschema of the file at once (`jsonschema`'s `ValidatorMap`) held about
/// 20 MiB for the life of the process, most of it for answers the console never gets.
pub struct Spec {
    /// `{"definitions": {...}}`: every schema of the file after the rewrite (module docs).
    root: Value,
    /// Validators compiled so far, by location (`#/definitions/accountList`,
    /// `#/definitions/transactionList/items`).
    compiled: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
    definitions: BTreeSet<String>,
    ops: Vec<Operation>,
    /// The operations' templates ([`crate::xs2a::paths`]) to their index in `ops`.
    paths: PathTemplates<usize>,
}

impl std::fmt::Debug for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spec")
            .field("definitions", &self.definitions.len())
            .field("operations", &self.ops.len())
            .finish()
    }
}

/// The built-in Berlin Group file, read on first use (the first lint, not the console's
/// start) and kept for the life of the process; each validator is compiled when first
/// needed ([`Spec::validator`]).
///
/// Errors: the built-in file does not compile ([`SpecError`]); a test guards against it.
pub fn spec() -> Result<&'static Spec, &'static SpecError> {
    static SPEC: LazyLock<Result<Spec, SpecError>> = LazyLock::new(|| Spec::from_yaml(SPEC_YAML));
    SPEC.as_ref()
}

impl Spec {
    /// Reads and compiles a Berlin Group OpenAPI file (YAML bytes; bytes that are not UTF-8
    /// are replaced).
    ///
    /// Errors: not YAML, a part missing, or its schemas do not compile ([`SpecError`]).
    pub(crate) fn from_yaml(yaml: &[u8]) -> Result<Spec, SpecError> {
        let text = String::from_utf8_lossy(yaml);
        let doc: Value = serde_norway::from_str(&text)?;
        build(&doc)
    }

    /// Where `method path` leads. A catalogue template's `{payment-service}` segment (in a
    /// path such as `/v1/{payment-service}/{payment-product}/{payment-id}`) stands for any
    /// payment service; among the methods whose templates fit, the most literal template
    /// decides, and `method` must be one of its operations.
    pub(super) fn route(&self, method: &str, path: &str) -> Route<'_> {
        let segs = segments(path);
        if proprietary(&segs) {
            return Route::Proprietary;
        }
        let path = path.replacen("/{payment-service}/", "/payments/", 1);
        let found: Vec<_> = self.paths.at_any(&path).collect();
        let Some(best) = found.iter().map(|(_, f)| f.literals).max() else {
            return Route::Unknown(Family::of(&segs));
        };
        match found
            .iter()
            .find(|(m, f)| f.literals == best && m.eq_ignore_ascii_case(method))
            .and_then(|(_, f)| self.ops.get(*f.value))
        {
            Some(op) => Route::Op(op),
            None => Route::OtherMethod(Family::of(&segs)),
        }
    }

    /// The label of the schema a JSON body of `method path` (a `/v1/...` path, without
    /// query) answered with `status` is checked against, e.g. `accountList` for
    /// `GET /v1/accounts` 200, `Error401_NG_AIS` for its 401; `None`: not checked, or no
    /// body expected.
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
            Route::Proprietary if method == "GET" && status == 200 => proprietary_2xx(&segs),
            _ => None,
        }
    }

    /// `key` when the file defines it, else `fallback()`.
    fn defined_or(&self, key: String, fallback: impl FnOnce() -> String) -> String {
        if self.definitions.contains(&key) {
            key
        } else {
            fallback()
        }
    }

    /// The generic error body shape with the codes of `status` (`__error<status>`), else
    /// with every error code (`__error`).
    pub(super) fn generic_key(&self, status: u16) -> String {
        self.defined_or(format!("__error{status}"), || "__error".into())
    }

    /// The `application/problem+json` schema of an error `status` of `family`
    /// (`Error<status>_<family>`, e.g. `Error403_PIS`), else the generic problem shape
    /// (`__problem<status>` / `__problem`).
    pub(super) fn problem_key(&self, status: u16, family: Family) -> String {
        self.defined_or(format!("Error{status}_{}", family.suffix()), || {
            self.generic_problem_key(status)
        })
    }

    /// The generic `application/problem+json` shape with the codes of `status`
    /// (`__problem<status>`), else with every error code (`__problem`).
    pub(super) fn generic_problem_key(&self, status: u16) -> String {
        self.defined_or(format!("__problem{status}"), || "__problem".into())
    }

    /// The error body schema of `status` of `family` (`Error<status>_NG_<family>`, e.g.
    /// `Error401_NG_AIS`), else the generic shape ([`Spec::generic_key`]).
    pub(super) fn error_key(&self, status: u16, family: Family) -> String {
        self.defined_or(format!("Error{status}_NG_{}", family.suffix()), || {
            self.generic_key(status)
        })
    }

    /// The schema errors of `body` against definition `key`: (JSON pointer, message), at most
    /// `limit`. A key that does not compile gives one error at `""`.
    pub(super) fn validate(&self, key: &str, body: &Value, limit: usize) -> Vec<(String, String)> {
        match self.validator(&format!("#/definitions/{key}")) {
            Ok(v) => v
                .iter_errors(body)
                .take(limit)
                .map(|e| (e.instance_path().to_string(), e.to_string()))
                .collect(),
            Err(why) => vec![(String::new(), format!("no compiled schema {key}: {why}"))],
        }
    }

    /// The validator of the schema at `location` (`#/definitions/<name>` or a location inside
    /// one, e.g. `#/definitions/transactionList/items`), compiled on first use and kept.
    ///
    /// Errors: no schema at `location`, or it does not compile (the compiler's message).
    pub(super) fn validator(&self, location: &str) -> Result<Arc<jsonschema::Validator>, String> {
        let mut compiled = self
            .compiled
            .lock()
            .map_err(|_| "the lint's validator cache is poisoned".to_string())?;
        if let Some(v) = compiled.get(location) {
            return Ok(v.clone());
        }
        if self.schema_at(location).is_none() {
            return Err(format!("no schema at {location}"));
        }
        let registry = jsonschema::Registry::new()
            .draft(jsonschema::Draft::Draft4)
            .add(ROOT_URI, &self.root)
            .and_then(|b| b.prepare())
            .map_err(|e| e.to_string())?;
        let v = options()
            .with_registry(&registry)
            .build(&json!({ "$ref": format!("{ROOT_URI}{location}") }))
            .map_err(|e| e.to_string())?;
        let v = Arc::new(v);
        compiled.insert(location.to_string(), v.clone());
        Ok(v)
    }

    /// The rewritten schema at `location` (`#/definitions/...`), if there is one.
    pub(super) fn schema_at(&self, location: &str) -> Option<&Value> {
        self.root.pointer(location.strip_prefix('#')?)
    }

    /// Every definition's name (the file's schemas and the extra `__` ones).
    #[cfg(test)]
    pub(super) fn definition_names(&self) -> impl Iterator<Item = &str> {
        self.definitions.iter().map(String::as_str)
    }
}

/// The URI the rewritten schemas are known by when a validator is compiled.
const ROOT_URI: &str = "urn:psd2-console:berlin-group-1.3.11";

/// The compiler's options: draft 4 with the formats of the module docs checked.
fn options<'a>() -> jsonschema::ValidationOptions<'a> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(true)
        .with_format("date", is_date)
        .with_format("date-time", is_date_time)
        .with_format("uri", is_uri_reference)
        .with_format("url", is_uri_reference)
        .with_format("byte", is_base64)
}

/// The check of a proprietary `GET` 200: the sandbox customer listing (interface document,
/// "Sandbox customer"), nothing else.
pub(super) fn proprietary_2xx(segs: &[&str]) -> Option<String> {
    match segs {
        ["sandbox", "customers"] => Some("__sandboxCustomers".into()),
        ["sandbox", "customers", _] => Some("__sandboxCustomer".into()),
        _ => None,
    }
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
    // Annotations only (no validation): the file's descriptions are most of its text, and
    // the rewritten schemas are kept for the life of the process.
    o.remove("description");
    o.remove("title");
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

/// The generic RFC 7807 problem shape of the Berlin Group file (`Error<status>_<family>`:
/// `type` and `code` required, `title`, `detail`, `additionalErrors`, `_links`) with `code`
/// in `codes`, for answers the file lists no problem schema for.
fn generic_problem(codes: &BTreeSet<String>) -> Value {
    let codes: Vec<&String> = codes.iter().collect();
    json!({
        "type": "object",
        "required": ["type", "code"],
        "properties": {
            "type": {"type": "string", "format": "uri", "maxLength": 70},
            "title": {"type": "string", "maxLength": 70},
            "detail": {"type": "string", "maxLength": 500},
            "code": {"enum": codes},
            "additionalErrors": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["code"],
                    "properties": {
                        "title": {"type": "string", "maxLength": 70},
                        "detail": {"type": "string", "maxLength": 500},
                        "code": {"enum": codes}
                    }
                }
            },
            "_links": {"$ref": "#/definitions/_linksAll"}
        }
    })
}

/// Anchors a schema's `pattern` to the whole string. JSON Schema patterns match anywhere in
/// the string, so the file's `amountValue` pattern `-?[0-9]{1,14}(\.[0-9]{1,3})?` would let
/// `12.5000` or `1,50` through (they contain a match); its description ("Up to 14
/// significant figures", "The decimal separator is a dot") is about the whole amount.
fn anchor_pattern(s: &mut Value) {
    if let Some(Value::String(p)) = s.get_mut("pattern")
        && !p.starts_with('^')
    {
        *p = format!("^(?:{p})$");
    }
}

fn is_uri_reference(s: &str) -> bool {
    static BASE: OnceLock<Option<url::Url>> = OnceLock::new();
    let base = BASE.get_or_init(|| url::Url::parse("http://base.invalid/").ok());
    url::Url::parse(s).is_ok() || base.as_ref().is_some_and(|b| b.join(s).is_ok())
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

/// Message codes per status, from the file's `MessageCode<status>_*` enums.
fn message_codes(schemas: &Map<String, Value>) -> BTreeMap<u16, BTreeSet<String>> {
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
    codes
}

/// The response headers a response object lists: (name, required).
fn response_headers(r: &Value, headers: Option<&Map<String, Value>>) -> Vec<(String, bool)> {
    let Some(hs) = r["headers"].as_object() else {
        return Vec::new();
    };
    hs.iter()
        .map(|(name, h)| {
            let h = match h["$ref"].as_str() {
                Some(rf) => headers
                    .and_then(|m| m.get(rf.rsplit('/').next().unwrap_or(rf)))
                    .unwrap_or(&Value::Null),
                None => h,
            };
            (name.clone(), h["required"].as_bool().unwrap_or(false))
        })
        .collect()
}

fn build(doc: &Value) -> Result<Spec, SpecError> {
    let schemas = doc["components"]["schemas"]
        .as_object()
        .ok_or(SpecError::Missing("components.schemas"))?;
    let responses = doc["components"]["responses"]
        .as_object()
        .ok_or(SpecError::Missing("components.responses"))?;
    let header_defs = doc["components"]["headers"].as_object();
    let mut defs = Map::new();
    for (name, s) in schemas {
        let mut s = s.clone();
        fix_schema(&mut s);
        if name == "amountValue" {
            anchor_pattern(&mut s);
        }
        defs.insert(name.clone(), s);
    }

    let codes = message_codes(schemas);
    let all_error_codes: BTreeSet<String> = codes
        .iter()
        .filter(|(st, _)| **st >= 400)
        .flat_map(|(_, c)| c.iter().cloned())
        .collect();
    for (st, c) in &codes {
        if *st >= 400 {
            defs.insert(format!("__error{st}"), generic_error(c));
            defs.insert(format!("__problem{st}"), generic_problem(c));
        }
    }
    defs.insert("__error".into(), generic_error(&all_error_codes));
    defs.insert("__problem".into(), generic_problem(&all_error_codes));
    defs.insert("__sandboxCustomer".into(), sandbox_customer());
    defs.insert(
        "__sandboxCustomers".into(),
        json!({"type": "array", "items": {"$ref": "#/definitions/__sandboxCustomer"}}),
    );

    let mut ops = Vec::new();
    let mut paths = PathTemplates::new();
    let items = doc["paths"]
        .as_object()
        .ok_or(SpecError::Missing("paths"))?;
    for (template, item) in items {
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
                let headers = response_headers(r, header_defs);
                let problem = r["content"]["application/problem+json"]["schema"]["$ref"]
                    .as_str()
                    .and_then(|s| s.trim().strip_prefix("#/components/schemas/"))
                    .filter(|name| schemas.contains_key(*name))
                    .map(str::to_string);
                let schema = &r["content"]["application/json"]["schema"];
                let resp = if schema.is_null() {
                    Resp {
                        key: None,
                        problem,
                        label,
                        headers,
                    }
                } else if let Some(name) = schema["$ref"]
                    .as_str()
                    .and_then(|s| s.strip_prefix("#/components/schemas/"))
                {
                    Resp {
                        key: Some(name.to_string()),
                        problem,
                        label: name.to_string(),
                        headers,
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
                        problem,
                        label: format!("inline schema of {label}"),
                        headers,
                    }
                };
                resps.insert(status, resp);
            }
            paths
                .insert(method, template, ops.len())
                .map_err(|e| SpecError::Path(method.to_ascii_uppercase(), template.into(), e))?;
            ops.push(Operation {
                method: method.to_ascii_uppercase(),
                template: template.to_string(),
                responses: resps,
            });
        }
    }

    let definitions: BTreeSet<String> = defs.keys().cloned().collect();
    let root = json!({ "definitions": Value::Object(defs) });
    // The rewritten document must be a valid draft 4 schema (cheap: the validators
    // themselves are compiled on first use, `Spec::validator`).
    jsonschema::draft4::meta::validate(&root)
        .map_err(|e| SpecError::Compile(Box::new(e.to_owned())))?;
    Ok(Spec {
        root,
        compiled: Mutex::new(HashMap::new()),
        definitions,
        ops,
        paths,
    })
}
