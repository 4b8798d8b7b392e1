//! The lint's rules (see the documentation of [`super`]): headers, the body's media type,
//! the Berlin Group schema of the answer, and the interface document's response rules.

use serde_json::{Value, json};

use super::spec::{DOCUMENTED_400_CODES, Family, Resp, Route, Spec, proprietary_2xx, segments};
use super::{Finding, RequestId, header, sca_redirect};
use crate::xs2a::headers as h;

/// Most schema errors reported per body (a broken list could give thousands).
const MAX_SCHEMA_FINDINGS: usize = 8;

/// Rule name of the Berlin Group `X-Request-ID` response header.
const X_REQUEST_ID_RULE: &str = "BG header X-Request-ID";

/// `X-Request-ID` in the response, echoing the request's.
pub(super) fn request_id(asked: &RequestId, headers: &[(String, String)], out: &mut Vec<Finding>) {
    let got = header(headers, h::X_REQUEST_ID);
    match (asked, got) {
        (RequestId::NotSent, _) => {}
        (RequestId::Unknown, None) => out.push(Finding::error(
            X_REQUEST_ID_RULE,
            "no X-Request-ID in the response (a required header of every Berlin Group response)",
        )),
        (RequestId::Unknown, Some(_)) => {}
        (RequestId::Sent(id), None) => out.push(Finding::error(
            X_REQUEST_ID_RULE,
            format!("the request's X-Request-ID {id:?} is not echoed in the response"),
        )),
        (RequestId::Sent(id), Some(v)) if v.trim() != id.trim() => out.push(Finding::error(
            X_REQUEST_ID_RULE,
            format!("the response's X-Request-ID {v:?} is not the request's {id:?}"),
        )),
        (RequestId::Sent(_), Some(_)) => {}
    }
}

/// Values of the Berlin Group `ASPSP-SCA-Approach` header.
const SCA_APPROACHES: [&str; 3] = ["EMBEDDED", "DECOUPLED", "REDIRECT"];

/// `ASPSP-SCA-Approach` values, and `Location` / `ASPSP-SCA-Approach` on a 201 whose Berlin
/// Group response lists them.
pub(super) fn sca_headers(
    spec: &Spec,
    method: &str,
    path: &str,
    status: u16,
    headers: &[(String, String)],
    out: &mut Vec<Finding>,
) {
    let approach = header(headers, h::ASPSP_SCA_APPROACH);
    if let Some(a) = approach {
        if !SCA_APPROACHES.contains(&a.trim()) {
            out.push(Finding::error(
                "BG header ASPSP-SCA-Approach",
                format!("{a:?} is not one of {}", SCA_APPROACHES.join(", ")),
            ));
        } else if a.trim() != "REDIRECT" {
            out.push(Finding::warning(
                "Authentication 11",
                format!(
                    "ASPSP-SCA-Approach {a:?}: the interface document's SCA is a redirect flow"
                ),
            ));
        }
    }
    if status != 201 {
        return;
    }
    let Route::Op(op) = spec.route(method, path) else {
        return;
    };
    let Some(resp) = op.responses.get(&status) else {
        return;
    };
    for name in [h::LOCATION, h::ASPSP_SCA_APPROACH] {
        let listed = resp
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name));
        if listed && header(headers, name).is_none() {
            out.push(Finding::warning(
                format!("BG header {name}"),
                format!(
                    "no {name} header in the 201 of {} {} ({} lists it)",
                    op.method, op.template, resp.label
                ),
            ));
        }
    }
}

/// The body as the lint sees it.
pub(super) enum Body {
    /// Empty, or whitespace only.
    Empty,
    Json(Value),
    /// Not JSON (already reported).
    Invalid,
}

/// Media types a JSON body may be sent with.
const JSON_TYPES: [&str; 2] = ["application/json", "application/problem+json"];

/// The body parsed as JSON, with findings on its `Content-Type` and parse errors.
pub(super) fn json_body(headers: &[(String, String)], body: &[u8], out: &mut Vec<Finding>) -> Body {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Body::Empty;
    }
    content_type(headers, out);
    match serde_json::from_slice(body) {
        Ok(v) => Body::Json(v),
        Err(e) => {
            out.push(not_json(&e));
            Body::Invalid
        }
    }
}

/// The finding of a body that is not JSON.
fn not_json(e: &serde_json::Error) -> Finding {
    Finding::error("JSON", format!("the body is not JSON: {e}"))
}

/// Findings on the `Content-Type` of a (non-empty) body.
pub(super) fn content_type(headers: &[(String, String)], out: &mut Vec<Finding>) {
    let ct = header(headers, h::CONTENT_TYPE).unwrap_or("");
    let mut params = ct.split(';').map(str::trim);
    let media = params.next().unwrap_or("").to_ascii_lowercase();
    if !JSON_TYPES.contains(&media.as_str()) {
        out.push(Finding::error(
            "Content-Type",
            format!(
                "body with Content-Type {ct:?}, not application/json (interface document: all payloads are JSON)"
            ),
        ));
    }
    for p in params {
        if let Some((k, v)) = p.split_once('=')
            && k.trim().eq_ignore_ascii_case("charset")
            && !v.trim().trim_matches('"').eq_ignore_ascii_case("utf-8")
        {
            out.push(Finding::error(
                "Content-Type",
                format!("charset {v:?}: responses use UTF-8 (interface document)"),
            ));
        }
    }
}

/// The body rules of a 2xx answer whose body is longer than [`super::stream::STREAM_ABOVE`]
/// (and not whitespace only): as [`json_body`], [`document_rules`] and [`check_body`] give
/// them, read in one pass without the whole JSON tree ([`super::stream`]).
pub(super) fn check_large_success(
    spec: &Spec,
    method: &str,
    path: &str,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
    out: &mut Vec<Finding>,
) {
    use super::stream::{Mode, parse};
    content_type(headers, out);
    // What the body is checked against decides what is streamed; its findings come after
    // the body's own, as in `check_body`.
    let mut found = Vec::new();
    let check = check_of(spec, method, path, status, true, &mut found);
    let mode = match &check {
        Check::Schema(key, _) => Mode::Schema(key.clone()),
        Check::Structure => Mode::Structure,
        Check::Done => Mode::Syntax,
    };
    let streamed = match parse(spec, &mode, body, MAX_SCHEMA_FINDINGS) {
        Ok(s) => s,
        Err(e) => {
            out.push(not_json(&e));
            out.extend(found);
            return;
        }
    };
    document_rules(method, path, status, &streamed.skeleton, out);
    out.extend(found);
    match check {
        Check::Done => {}
        Check::Schema(key, label) => {
            let mut errors = streamed.errors;
            let room = MAX_SCHEMA_FINDINGS.saturating_sub(errors.len());
            if room > 0 {
                errors.extend(spec.validate(&key, &streamed.skeleton, room));
            }
            for (at, msg) in errors {
                let at = if at.is_empty() { "/".to_string() } else { at };
                out.push(Finding::error(format!("{label} {at}"), msg));
            }
        }
        Check::Structure => {
            out.extend(streamed.findings);
            let mut at = String::new();
            structure(spec, &streamed.skeleton, &mut at, out);
        }
    }
}

/// Statuses of the signing basket creation response (interface document, "Signing basket
/// creation response"), from the one status vocabulary.
const BASKET_CREATED_STATUSES: [crate::xs2a::status::TransactionStatus; 4] =
    crate::xs2a::status::TransactionStatus::BASKET;

/// The interface document's own rules on particular answers.
pub(super) fn document_rules(
    method: &str,
    path: &str,
    status: u16,
    body: &Value,
    out: &mut Vec<Finding>,
) {
    let segs = segments(path);
    match (method, segs.as_slice(), status) {
        ("POST", ["signing-baskets"], 201) => {
            const RULE: &str = "Signing basket creation response";
            let st = body["transactionStatus"]
                .as_str()
                .and_then(crate::xs2a::status::TransactionStatus::parse);
            if !st.is_some_and(|s| BASKET_CREATED_STATUSES.contains(&s)) {
                out.push(Finding::error(
                    format!("{RULE} /transactionStatus"),
                    format!(
                        "transactionStatus {} is not one of {}",
                        body["transactionStatus"],
                        BASKET_CREATED_STATUSES.map(|s| s.as_str()).join(", ")
                    ),
                ));
            }
            for (name, link) in body["_links"].as_object().into_iter().flatten() {
                let verbs_ok = link["verbs"].as_array().is_some_and(|vs| {
                    vs.iter().all(|v| {
                        v.as_str()
                            .is_some_and(|v| ["GET", "PUT", "POST", "DELETE"].contains(&v))
                    })
                });
                if !link["href"].is_string() || !verbs_ok {
                    out.push(Finding::error(
                        format!("{RULE} /_links/{name}"),
                        "a Link has href (string) and verbs (GET, PUT, POST, DELETE), both required",
                    ));
                }
            }
        }
        (
            "GET",
            [
                "payments" | "bulk-payments" | "periodic-payments",
                _,
                _,
                "status",
            ],
            200,
        ) if lack_of_funds_unshown(body) => {
            out.push(Finding::warning(
                "Payment statuses /fundsAvailable",
                format!(
                    "transactionStatus {} means rejected for lack of funds (interface document), \
                     but fundsAvailable is not false",
                    body["transactionStatus"]
                ),
            ));
        }
        ("GET", ["accounts"], 401) | ("GET", ["users" | "user"], 200)
            if sca_redirect(body).is_none() =>
        {
            out.push(Finding::warning(
                "Endpoints /_links/scaRedirect",
                format!(
                    "{status} of {method} {path} without a scaRedirect link (the interface document answers it with one)"
                ),
            ));
        }
        _ => {}
    }
}

/// Whether a payment status answer says lack of funds (`ACCP`, interface document "Payment
/// statuses") without `fundsAvailable: false` beside it (Resources, "Payment status
/// responses carry ... fundsAvailable, showing rejection caused by lack of funds").
fn lack_of_funds_unshown(body: &Value) -> bool {
    use crate::xs2a::status::{RejectReason, TransactionStatus, Verdict, verdict};
    let Some(st) = body["transactionStatus"].as_str() else {
        return false;
    };
    TransactionStatus::parse(st) == Some(TransactionStatus::ACCP)
        && verdict(st, None) == Verdict::Rejected(RejectReason::LackOfFunds)
        && body["fundsAvailable"].as_bool() != Some(false)
}

/// Human name of a definition key for a rule.
fn rule_name(key: &str) -> String {
    match key {
        "__error" => "BG error (tppMessages)".into(),
        "__sandboxCustomer" | "__sandboxCustomers" => "Sandbox customer".into(),
        k => match k.strip_prefix("__error") {
            Some(st) => format!("BG error (tppMessages, MessageCode{st})"),
            None => k.to_string(),
        },
    }
}

/// `body` with the codes of [`DOCUMENTED_400_CODES`] read as `FORMAT_ERROR` (a member of
/// every `MessageCode400_*` enum) when `status` is 400: in `tppMessages`, and in an RFC 7807
/// problem's `code` and `additionalErrors`; unchanged otherwise.
fn with_documented_exception(status: u16, mut body: Value) -> Value {
    if status != 400 {
        return body;
    }
    let relax = |m: &mut Value| {
        if m["code"]
            .as_str()
            .is_some_and(|c| DOCUMENTED_400_CODES.contains(&c))
        {
            m["code"] = json!("FORMAT_ERROR");
        }
    };
    for list in ["tppMessages", "additionalErrors"] {
        if let Some(messages) = body.get_mut(list).and_then(Value::as_array_mut) {
            messages.iter_mut().for_each(relax);
        }
    }
    if body.is_object() && body.get("code").is_some() {
        relax(&mut body);
    }
    body
}

/// Whether the answer says it is an RFC 7807 problem (`Content-Type:
/// application/problem+json`): a Berlin Group error body of the `Error<status>_<family>`
/// schemas (`type` and `code`, no `tppMessages`), which the file lists beside the
/// `tppMessages` one for every error answer.
pub(super) fn is_problem(headers: &[(String, String)]) -> bool {
    header(headers, h::CONTENT_TYPE).is_some_and(|ct| {
        ct.split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/problem+json"))
    })
}

/// The `application/problem+json` schema of `status` for `method path`: the one the
/// operation's response lists, else the family's `Error<status>_<family>`, else the generic
/// problem shape.
fn problem_key(spec: &Spec, method: &str, path: &str, status: u16) -> String {
    let segs = segments(path);
    match spec.route(method, path) {
        Route::Op(op) => match op.responses.get(&status).and_then(|r| r.problem.clone()) {
            Some(k) => k,
            None => spec.problem_key(status, Family::of(&segs)),
        },
        Route::OtherMethod(f) | Route::Unknown(f) => spec.problem_key(status, f),
        Route::Proprietary => spec.generic_problem_key(status),
    }
}

/// The label of a problem schema key for rules: the file's name, or `BG problem` for the
/// generic shape.
fn problem_label(key: &str) -> String {
    if key.starts_with("__problem") {
        format!("BG problem ({})", key.trim_start_matches("__"))
    } else {
        key.to_string()
    }
}

/// What an answer is checked against.
enum Check {
    /// A definition of the compiled file: (key, label for rules).
    Schema(String, String),
    /// The structural rules only (a 2xx no schema covers).
    Structure,
    /// Nothing more.
    Done,
}

/// The schema (or rule) of `status` for `method path`, with findings on statuses and bodies
/// the file does not allow.
fn check_of(
    spec: &Spec,
    method: &str,
    path: &str,
    status: u16,
    has_body: bool,
    out: &mut Vec<Finding>,
) -> Check {
    let segs = segments(path);
    match spec.route(method, path) {
        Route::Op(op) => match op.responses.get(&status) {
            Some(Resp {
                key: Some(k),
                label,
                ..
            }) => Check::Schema(k.clone(), label.clone()),
            Some(Resp {
                key: None, label, ..
            }) => {
                if status >= 400 {
                    let k = spec.generic_key(status);
                    Check::Schema(k.clone(), rule_name(&k))
                } else {
                    if has_body {
                        out.push(Finding::error(
                            format!("BG {} {} {status}", op.method, op.template),
                            format!(
                                "{status} of {} {} has no body in the Berlin Group file ({label})",
                                op.method, op.template
                            ),
                        ));
                    }
                    Check::Done
                }
            }
            None if status >= 400 => {
                let k = spec.error_key(status, Family::of(&segs));
                Check::Schema(k.clone(), rule_name(&k))
            }
            None => {
                out.push(Finding::error(
                    format!("BG {} {} responses", op.method, op.template),
                    format!(
                        "{status} is not an answer of {} {} in the Berlin Group file (it lists {:?})",
                        op.method,
                        op.template,
                        op.responses.keys().collect::<Vec<_>>()
                    ),
                ));
                Check::Done
            }
        },
        Route::OtherMethod(f) | Route::Unknown(f) => {
            if status >= 400 {
                let k = spec.error_key(status, f);
                Check::Schema(k.clone(), rule_name(&k))
            } else {
                Check::Structure
            }
        }
        Route::Proprietary if status >= 400 => {
            let k = spec.generic_key(status);
            Check::Schema(k.clone(), rule_name(&k))
        }
        Route::Proprietary => {
            match proprietary_2xx(&segs).filter(|_| method == "GET" && status == 200) {
                Some(k) => Check::Schema(k.clone(), rule_name(&k)),
                None => Check::Structure,
            }
        }
    }
}

/// The body rules: error bodies, the Berlin Group schema, the structural rules. `problem`:
/// the answer is `application/problem+json` ([`is_problem`]); an error body is then checked
/// against the file's problem schema (`Error400_AIS`, ...) instead of the `tppMessages` one.
pub(super) fn check_body(
    spec: &Spec,
    method: &str,
    path: &str,
    status: u16,
    body: Body,
    problem: bool,
    out: &mut Vec<Finding>,
) {
    if status >= 400 && problem {
        let key = problem_key(spec, method, path, status);
        let label = problem_label(&key);
        match body {
            Body::Empty => out.push(Finding::error(
                label.clone(),
                format!("{status} without a body ({label} expected)"),
            )),
            Body::Invalid => {}
            Body::Json(b) => {
                let b = with_documented_exception(status, b);
                for (at, msg) in spec.validate(&key, &b, MAX_SCHEMA_FINDINGS) {
                    let at = if at.is_empty() { "/".to_string() } else { at };
                    out.push(Finding::error(format!("{label} {at}"), msg));
                }
            }
        }
        return;
    }
    if status >= 400 {
        let b = match &body {
            Body::Empty => {
                out.push(Finding::error(
                    "BG error (tppMessages)",
                    format!("{status} without a body (tppMessages expected)"),
                ));
                return;
            }
            Body::Invalid => return,
            Body::Json(b) => b,
        };
        let Some(messages) = b["tppMessages"].as_array().filter(|m| !m.is_empty()) else {
            out.push(Finding::error(
                "BG error (tppMessages)",
                "error body without a non-empty tppMessages array",
            ));
            return;
        };
        for (i, m) in messages.iter().enumerate() {
            if !m["text"].is_string() {
                out.push(Finding::warning(
                    format!("BG tppMessage /tppMessages/{i}/text"),
                    "a tppMessage without text (the TPP cannot tell the PSU what went wrong)",
                ));
            }
        }
    }
    let has_body = !matches!(body, Body::Empty);
    match check_of(spec, method, path, status, has_body, out) {
        Check::Done => {}
        Check::Schema(key, label) => match body {
            Body::Json(b) => {
                let b = with_documented_exception(status, b);
                for (at, msg) in spec.validate(&key, &b, MAX_SCHEMA_FINDINGS) {
                    let at = if at.is_empty() { "/".to_string() } else { at };
                    out.push(Finding::error(format!("{label} {at}"), msg));
                }
            }
            Body::Empty => out.push(Finding::error(
                label.clone(),
                format!("{status} without a body ({label} expected)"),
            )),
            Body::Invalid => {}
        },
        Check::Structure => {
            if let Body::Json(b) = &body {
                let mut at = String::new();
                structure(spec, b, &mut at, out);
            }
        }
    }
}

/// Keys whose string values are checked against the file's schema of the same name.
const STATUS_KEYS: [&str; 3] = ["transactionStatus", "consentStatus", "scaStatus"];

/// The structural rules over a body no schema covers: `_links` members are `{href}`
/// objects (Berlin Group `hrefType`), amounts match the `amountValue` pattern, statuses are the
/// file's values. `at`: the JSON pointer of `v`.
pub(super) fn structure(spec: &Spec, v: &Value, at: &mut String, out: &mut Vec<Finding>) {
    match v {
        Value::Object(m) => {
            if m.contains_key("currency")
                && let Some(a) = m.get("amount")
            {
                check_value(spec, "amountValue", a, &format!("{at}/amount"), out);
            }
            for (k, child) in m {
                let len = at.len();
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                if STATUS_KEYS.contains(&k.as_str()) {
                    check_value(spec, k, child, at.as_str(), out);
                } else if k == "_links" {
                    links(child, at.as_str(), out);
                }
                structure(spec, child, at, out);
                at.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                structure(spec, child, at, out);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

fn check_value(spec: &Spec, key: &str, v: &Value, at: &str, out: &mut Vec<Finding>) {
    for (_, msg) in spec.validate(key, v, 1) {
        out.push(Finding::error(format!("{key} {at}"), msg));
    }
}

fn links(v: &Value, at: &str, out: &mut Vec<Finding>) {
    let Some(m) = v.as_object() else {
        out.push(Finding::error(
            format!("_links {at}"),
            "_links is not an object of links",
        ));
        return;
    };
    for (name, link) in m {
        if !link["href"].is_string() {
            out.push(Finding::error(
                format!("hrefType {at}/{name}"),
                format!("{link} is not a link object with a string href"),
            ));
        }
    }
}
