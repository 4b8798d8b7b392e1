//! Conformance lint: checks one response of a NextGenPSD2 interface (the embedded sandbox or a
//! real bank) against the Berlin Group NextGenPSD2 1.3.11 OpenAPI file built into the binary
//! (`spec/berlin-group-psd2-api-1.3.11.yaml`, its schemas compiled with `jsonschema` as first
//! needed, see [`spec()`]; a 2xx body over 1 MiB is read element by element, `stream`)
//! and against the interface document's rules on responses.
//!
//! One entry point, [`check_response`]: what was asked ([`Asked`]: an operation id of the
//! catalogue, or a method and path, and the request's `X-Request-ID` when known), the status,
//! the response headers and the body bytes in; a list of [`Finding`]s (severity, rule,
//! message) out, empty when the response conforms. Used by `send --lint`, by the test
//! harness on every sandbox answer (`tests/it/common/schema.rs`), and meant for `doctor` on
//! recorded responses and for a response-pane badge ([`summary`]).
//!
//! # What is checked
//!
//! Only paths under `/v1/` (a base-URL prefix before `/v1/` is ignored, e.g.
//! `https://bank.example/psd2/v1/accounts`); anything else gives no findings.
//!
//! Headers:
//! - `X-Request-ID` is in every response (Berlin Group: a required header of every
//!   response) and echoes the request's (error `BG header X-Request-ID`); when the request
//!   is known to have had none, nothing is required.
//! - A body has `Content-Type: application/json` (or `application/problem+json`), with
//!   `charset`, if given, UTF-8 (interface document: "All payloads are JSON", "Requests and
//!   responses use UTF-8"; error `Content-Type`).
//! - `ASPSP-SCA-Approach`, when present, is one of the file's values (error) and `REDIRECT`
//!   (warning: Authentication 11, SCA is a redirect flow); on a 201 whose Berlin Group
//!   response lists `Location` or `ASPSP-SCA-Approach`, a missing one is a warning (the file
//!   marks both optional).
//!
//! Bodies (1xx and 3xx answers are not checked):
//! - The operation is found as the Berlin Group file lists it (`paths` → method →
//!   `responses` → status → `content` `application/json` → schema); the body is validated
//!   against that schema, one error finding per schema error, with the rule
//!   `<schema name> <JSON pointer>` (e.g. `readAccountBalanceResponse-200
//!   /balances/0/balanceAmount/amount`). So amounts are strings matching the
//!   `amountValue` pattern as a whole (`-?[0-9]{1,14}(\.[0-9]{1,3})?`; the file's pattern
//!   is unanchored, the lint anchors it), `transactionStatus` / `consentStatus` /
//!   `scaStatus` are values of the file's enums,
//!   `_links` members are `{href}` objects (`scaRedirect` as a plain string is an error),
//!   dates are `YYYY-MM-DD` and date-times carry an offset.
//! - Every 4xx/5xx body is JSON with a non-empty `tppMessages` array; each message's `code`
//!   is one of the file's `MessageCode<status>_*` enums for that status and family (schema
//!   `Error<status>_NG_<AIS|PIS|PIIS|SBS>`); a message without `text` is a warning. Except an
//!   answer sent as `Content-Type: application/problem+json`: the file lists an RFC 7807
//!   problem beside the `tppMessages` body for every error answer, so it is checked against
//!   that schema instead (`Error400_AIS`, `Error403_PIS`, ...: `type` and `code` required,
//!   `code` from the same enums, no `tppMessages`); where the file lists none, against the
//!   same shape with the status's codes (rule `BG problem`).
//! - A 2xx the operation does not list, or a body where the file gives none (a 204), is an
//!   error.
//! - The one documented exception ([`DOCUMENTED_400_CODES`]): the interface document answers
//!   signature and certificate failures with 400 (Authentication 3; Errors table) where the
//!   file lists `SIGNATURE_*` / `CERTIFICATE_*` under 401 only; a 400 message with exactly one
//!   of those five codes is accepted, nothing else is relaxed.
//! - Paths with no Berlin Group counterpart (`/v1/sandbox/**`, `/v1/users`, `/v1/user`,
//!   `/v1/agreements/**`, `/v1/bank-offered-consents/**`,
//!   `/v1/payments/{product}/fee-information`): errors against the generic error shape
//!   (`tppMessages` of `{category, code, path?, text?}`, `code` from the status's
//!   `MessageCode*` enums); the sandbox customer listing against the interface document's
//!   "Sandbox customer" table (every field required, no others); other 2xx bodies, and 2xx
//!   bodies of paths the file does not have, by the structural rules: every `_links` member
//!   an object with a string `href`, every `{currency, amount}` amount of the
//!   `amountValue` pattern, every `transactionStatus` / `consentStatus` / `scaStatus` a
//!   value of the file.
//! - Interface document rules: the signing basket creation response (201) has a
//!   `transactionStatus` of `RCVD`, `ACTC`, `PATC`, `RJCT` and links with `href` and `verbs`
//!   ("Signing basket creation response"; error); `GET /v1/accounts` answering 401 and
//!   `GET /v1/users` answering 200 carry a `scaRedirect` link (Endpoints; warning).

mod rules;
mod spec;
mod stream;

pub use spec::{DOCUMENTED_400_CODES, SPEC_FILE, SPEC_YAML, Spec, SpecError, spec};

use crate::xs2a::headers::find as header;
use crate::xs2a::links::sca_redirect_link as sca_redirect;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Allowed but worth knowing (an optional header missing, a message without text).
    Warning,
    /// The response breaks a schema of the Berlin Group file or a rule of the interface
    /// document.
    Error,
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One thing the lint found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Error or warning.
    pub severity: Severity,
    /// Where the rule comes from: a Berlin Group schema name and the JSON pointer into the
    /// body (`accountList /accounts/0/currency`), `BG header <name>`, or a section of the
    /// interface document (`Signing basket creation response /transactionStatus`).
    pub rule: String,
    /// What is wrong, in a sentence.
    pub message: String,
}

impl Finding {
    pub(crate) fn error(rule: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            severity: Severity::Error,
            rule: rule.into(),
            message: message.into(),
        }
    }

    pub(crate) fn warning(rule: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            severity: Severity::Warning,
            rule: rule.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Finding {
    /// One line: `error [rule] message`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}] {}", self.severity, self.rule, self.message)
    }
}

/// What the request carried as `X-Request-ID`, for the echo check.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RequestId {
    /// Not known (e.g. only the response was recorded): the response must have one.
    #[default]
    Unknown,
    /// The request had none: nothing to echo, nothing required.
    NotSent,
    /// The request's value: the response must echo it exactly.
    Sent(String),
}

/// What was asked: the request a response answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// HTTP method (any case).
    pub method: String,
    /// The path (`/v1/accounts/a1`), with or without query, or the absolute URL; a path
    /// template of the catalogue (`/v1/{payment-service}/{payment-product}/{payment-id}`)
    /// works too.
    pub path: String,
    /// The request's `X-Request-ID`, as far as known.
    pub request_id: RequestId,
}

impl Asked {
    /// A request by method and path (or URL); `X-Request-ID` unknown.
    pub fn request(method: &str, path: &str) -> Asked {
        Asked {
            method: method.to_string(),
            path: path.to_string(),
            request_id: RequestId::Unknown,
        }
    }

    /// The operation `id` of the catalogue (`send --list`, e.g. `accounts.list`) by its
    /// method and path template; `None` for an unknown id.
    pub fn operation(id: &str) -> Option<Asked> {
        crate::xs2a::operations::find(id).map(|op| Asked::request(op.method, op.path))
    }

    /// With the request's `X-Request-ID` (`None`: the request had none).
    pub fn with_request_id(mut self, id: Option<&str>) -> Asked {
        self.request_id = match id {
            Some(id) => RequestId::Sent(id.to_string()),
            None => RequestId::NotSent,
        };
        self
    }
}

/// The `/v1/...` path of a path, path and query, or URL (`None`: not an API path).
fn api_path(path_or_url: &str) -> Option<&str> {
    let p = path_or_url.split(['?', '#']).next().unwrap_or(path_or_url);
    let p = match p.split_once("://") {
        Some((_, rest)) => rest.find('/').map(|i| &rest[i..])?,
        None => p,
    };
    if p.starts_with("/v1/") {
        Some(p)
    } else {
        p.find("/v1/").map(|i| &p[i..])
    }
}

/// Checks one response against the built-in Berlin Group file and the interface document
/// (see the module documentation for every rule). `headers`: the response headers as
/// (name, value), names in any case; `body`: the body bytes as read (decompressed).
///
/// Returns the findings, errors and warnings, in the order found; empty when the response
/// conforms or its path is not under `/v1/`. Never fails: should the built-in file not
/// compile, that is reported as one error finding (rule `lint`).
pub fn check_response(
    asked: &Asked,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
) -> Vec<Finding> {
    check(asked, status, headers, body, stream::STREAM_ABOVE)
}

/// [`check_response`], streaming 2xx bodies longer than `stream_above` bytes ([`stream`]).
fn check(
    asked: &Asked,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
    stream_above: usize,
) -> Vec<Finding> {
    let Some(path) = api_path(&asked.path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let spec = match spec() {
        Ok(s) => s,
        Err(e) => {
            out.push(Finding::error("lint", e.to_string()));
            return out;
        }
    };
    let method = asked.method.to_ascii_uppercase();
    rules::request_id(&asked.request_id, headers, &mut out);
    rules::sca_headers(spec, &method, path, status, headers, &mut out);
    if (200..300).contains(&status)
        && body.len() > stream_above
        && !body.iter().all(u8::is_ascii_whitespace)
    {
        // Without the whole JSON tree (about eight times the text): `stream`.
        rules::check_large_success(spec, &method, path, status, headers, body, &mut out);
        return out;
    }
    let body = rules::json_body(headers, body, &mut out);
    if (200..300).contains(&status) || status >= 400 {
        if let rules::Body::Json(v) = &body {
            rules::document_rules(&method, path, status, v, &mut out);
        }
        let problem = rules::is_problem(headers);
        rules::check_body(spec, &method, path, status, body, problem, &mut out);
    }
    out
}

/// One line for a badge or a summary: `lint: no findings`, `lint: 2 errors, 1 warning`.
pub fn summary(findings: &[Finding]) -> String {
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => "lint: no findings".into(),
        (e, 0) => format!("lint: {}", plural(e, "error")),
        (0, w) => format!("lint: {}", plural(w, "warning")),
        (e, w) => format!("lint: {}, {}", plural(e, "error"), plural(w, "warning")),
    }
}

/// Whether any finding is an error.
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_path_takes_the_v1_part_of_paths_and_urls() {
        assert_eq!(api_path("/v1/accounts?x=1"), Some("/v1/accounts"));
        assert_eq!(
            api_path("https://bank.example/psd2/v1/accounts/a1#f"),
            Some("/v1/accounts/a1")
        );
        assert_eq!(
            api_path("http://127.0.0.1:8080/v1/users"),
            Some("/v1/users")
        );
        assert_eq!(api_path("/sca/abc"), None);
        assert_eq!(api_path("http://host"), None);
    }

    #[test]
    fn summary_counts_errors_and_warnings() {
        let e = Finding::error("r", "m");
        let w = Finding::warning("r", "m");
        assert_eq!(summary(&[]), "lint: no findings");
        assert_eq!(summary(std::slice::from_ref(&e)), "lint: 1 error");
        assert_eq!(summary(&[w.clone(), w.clone()]), "lint: 2 warnings");
        assert_eq!(summary(&[e.clone(), e, w]), "lint: 2 errors, 1 warning");
    }

    /// A transaction report of `n` booked transactions (about 280 bytes each) as the sandbox
    /// answers it; the transactions in `bad` break the schema (an amount with a comma, a
    /// status that is no status, no amount at all).
    fn report(n: usize, bad: &[usize]) -> Vec<u8> {
        use std::fmt::Write as _;
        let mut s =
            String::from(r#"{"account":{"iban":"NO9386011117947"},"transactions":{"booked":["#);
        for i in 0..n {
            if i > 0 {
                s.push(',');
            }
            let amount = match bad.iter().position(|b| *b == i) {
                Some(0) => r#""transactionAmount":{"currency":"NOK","amount":"12,50"}"#.to_string(),
                Some(1) => r#""transactionAmount":{"currency":"NOK","amount":"1.00"},"bookingDate":"15.01.2026""#.to_string(),
                Some(_) => String::new(),
                None => format!(r#""transactionAmount":{{"currency":"NOK","amount":"-{}.{:02}"}}"#, i % 9999, i % 100),
            };
            let sep = if amount.is_empty() { "" } else { "," };
            let _ = write!(
                s,
                r#"{{"transactionId":"tx-{i:07}","valueDate":"2026-01-15"{sep}{amount},"creditorName":"Rema 1000","remittanceInformationUnstructured":"Card payment {i}"}}"#
            );
        }
        s.push_str(r#"],"pending":[],"_links":{"account":{"href":"/v1/accounts/a1"}}}}"#);
        s.into_bytes()
    }

    fn json_headers() -> Vec<(String, String)> {
        vec![
            ("Content-Type".into(), "application/json".into()),
            ("X-Request-ID".into(), "r-1".into()),
        ]
    }

    #[test]
    fn a_large_answer_is_linted_streamed_with_the_findings_of_the_whole_tree() {
        let asked =
            Asked::request("GET", "/v1/accounts/a1/transactions").with_request_id(Some("r-1"));
        let headers = json_headers();
        // Conforming: no finding either way.
        let good = report(6_000, &[]);
        assert!(good.len() > 1 << 20, "{} bytes", good.len());
        assert_eq!(check(&asked, 200, &headers, &good, usize::MAX), Vec::new());
        assert_eq!(check_response(&asked, 200, &headers, &good), Vec::new());
        // Three broken elements, far apart: the same findings as the whole tree gives.
        let bad = report(6_000, &[17, 2_500, 5_999]);
        let mut whole = check(&asked, 200, &headers, &bad, usize::MAX);
        let mut streamed = check_response(&asked, 200, &headers, &bad);
        assert!(whole.len() >= 3, "{whole:#?}");
        assert!(
            whole
                .iter()
                .any(|f| f.rule.contains("/transactions/booked/5999")),
            "{whole:#?}"
        );
        whole.sort_by(|a, b| a.rule.cmp(&b.rule));
        streamed.sort_by(|a, b| a.rule.cmp(&b.rule));
        assert_eq!(streamed, whole);
        // Not JSON: the parser's finding, as for the whole tree.
        let mut cut = good.clone();
        cut.truncate(good.len() - 10);
        assert_eq!(
            check_response(&asked, 200, &headers, &cut),
            check(&asked, 200, &headers, &cut, usize::MAX)
        );
    }

    #[test]
    fn a_large_answer_is_read_without_its_elements() {
        // The skeleton the schema sees has the transaction list empty: the elements were
        // checked one at a time and dropped (memory: one element, not the ~8x tree).
        let s = spec().unwrap();
        let body = report(5_000, &[]);
        let key = s
            .route("GET", "/v1/accounts/a1/transactions")
            .op_response_key(200)
            .expect("a schema for the 200");
        let streamed = stream::parse(s, &stream::Mode::Schema(key), &body, 8).unwrap();
        assert_eq!(
            streamed.skeleton["transactions"]["booked"],
            serde_json::json!([])
        );
        assert_eq!(streamed.skeleton["account"]["iban"], "NO9386011117947");
        // Structure mode streams every array.
        let streamed = stream::parse(s, &stream::Mode::Structure, &body, 8).unwrap();
        assert_eq!(
            streamed.skeleton["transactions"]["booked"],
            serde_json::json!([])
        );
    }

    #[test]
    fn every_definition_of_the_built_in_file_compiles() {
        // The validators are compiled on first use (`Spec::validator`): this is where a
        // definition that does not compile is found.
        let s = spec().expect("the built-in Berlin Group file compiles");
        let mut n = 0;
        for name in s.definition_names() {
            if let Err(e) = s.validator(&format!("#/definitions/{name}")) {
                panic!("{name}: {e}");
            }
            n += 1;
        }
        assert!(n > 100, "{n} definitions");
    }

    #[test]
    fn the_built_in_file_compiles_and_maps_operations() {
        let s = spec().expect("the built-in Berlin Group file compiles");
        assert_eq!(
            s.schema_for("GET", "/v1/accounts", 200).as_deref(),
            Some("accountList")
        );
        let op = Asked::operation("accounts.list").expect("accounts.list");
        assert_eq!(
            (op.method.as_str(), op.path.as_str()),
            ("GET", "/v1/accounts")
        );
    }
}
