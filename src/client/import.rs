//! Imports of requests from elsewhere: Postman Collection v2.1, HAR 1.2 and cURL commands.
//! An imported request keeps its method, URL (Postman `{{host}}` variables and all), headers
//! and body; signing headers (`Signature`, `Digest`, `Date`, `TPP-Signature-Certificate`) are
//! dropped, since the console signs afresh with the active profile when it sends.
//!
//! Postman variables (`{{name}}`) are resolved by [`Variables`] when a request is sent:
//! - values from the collection's `variable` list, from the `variable` lists of the
//!   enclosing folders and of the request item (the innermost wins), and from an optional
//!   Postman environment export ([`environment`]);
//! - values that the requests' test scripts set from their responses, when a collection is
//!   sent in order: only assignments of a plain JSON path of the response, written
//!   `pm.environment.set("x", jsonData.a[0].b)` (also `pm.globals`, `pm.collectionVariables`,
//!   `pm.variables`, and `postman.setEnvironmentVariable` / `postman.setGlobalVariable`),
//!   where `jsonData` is the response body; any other script code (dates, arithmetic,
//!   conditions) is not run. Captured values take precedence over the static ones;
//! - the dynamic variables `{{$guid}}` / `{{$randomUUID}}` (a new UUID), `{{$timestamp}}`
//!   (Unix seconds) and `{{$isoTimestamp}}`.
//!
//! A variable without a value stays in the text as written and is reported by name
//! ([`Resolved::unknown`]); the variable standing for the host (`{{host}}` in
//! `https://{{host}}/v1/...`) is not reported, since the active profile's target replaces
//! the scheme and host.

use std::collections::BTreeMap;

use serde_json::Value;

/// A test-script assignment of a value of the response body to a variable:
/// `pm.globals.set("paymentId", jsonData.paymentId)` is `{variable: "paymentId", path:
/// ".paymentId"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSet {
    /// Variable name.
    pub variable: String,
    /// JSON path after `jsonData`: `.name` and `[index]` steps, e.g. `.accounts[0].bban`.
    pub path: String,
}

/// One imported request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportedRequest {
    /// Postman item name, HAR comment/URL, or `curl N`.
    pub name: String,
    /// HTTP method, as written.
    pub method: String,
    /// As written in the source (may hold `{{variables}}`).
    pub url: String,
    /// Headers as written, in file order (may hold `{{variables}}`).
    pub headers: Vec<(String, String)>,
    /// The body text, when the request has one.
    pub body: Option<String>,
    /// Postman variables of the enclosing folders and of the item (outer first, so later
    /// entries win), as (name, value).
    pub variables: Vec<(String, String)>,
    /// What the item's test script sets from the response (Postman only).
    pub sets: Vec<ScriptSet>,
}

/// Everything one file gives: the requests, and the file-level variables (a Postman
/// collection's `variable` list; empty for HAR and cURL).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Import {
    /// The requests, in file order.
    pub requests: Vec<ImportedRequest>,
    /// Collection variables, as (name, value).
    pub variables: Vec<(String, String)>,
}

/// Headers the console sets itself when it signs.
pub const SIGNING_HEADERS: [&str; 4] = ["signature", "digest", "date", "tpp-signature-certificate"];

/// Why a file could not be imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {reason}")]
pub struct ImportError {
    /// The file (or source) name.
    pub source_name: String,
    /// What is wrong, in words.
    pub reason: String,
}

fn keep_header(name: &str) -> bool {
    !SIGNING_HEADERS.iter().any(|s| s.eq_ignore_ascii_case(name))
}

/// `r` with only the headers `keep` accepts (e.g. [`keep_header`]: without its
/// [`SIGNING_HEADERS`], as the console signs afresh).
fn with_headers(mut r: ImportedRequest, keep: fn(&str) -> bool) -> ImportedRequest {
    r.headers.retain(|(n, _)| keep(n));
    r
}

/// Detects the format of `text` (Postman collection, HAR, or a cURL command) and imports its
/// requests (see [`import_file`] for the collection variables too).
///
/// Errors: not one of the three formats, or a malformed one (with the reason).
pub fn import(text: &str, source_name: &str) -> Result<Vec<ImportedRequest>, ImportError> {
    import_file(text, source_name).map(|i| i.requests)
}

/// Detects the format of `text` (Postman collection, HAR, or a cURL command) and imports it,
/// with the collection's variables.
///
/// Errors: not one of the three formats, or a malformed one (with the reason).
pub fn import_file(text: &str, source_name: &str) -> Result<Import, ImportError> {
    import_with(text, source_name, keep_header)
}

/// Like [`import`], but every header is kept as recorded, the signing headers (`Signature`,
/// `Digest`, `Date`, `TPP-Signature-Certificate`) too: the request as it was sent, for
/// [`crate::doctor`], which diagnoses a signed request offline.
///
/// Errors: not one of the three formats, or a malformed one (with the reason).
pub fn import_verbatim(text: &str, source_name: &str) -> Result<Vec<ImportedRequest>, ImportError> {
    import_with(text, source_name, |_| true).map(|i| i.requests)
}

/// [`import_file`] keeping the headers whose name `keep` accepts.
fn import_with(
    text: &str,
    source_name: &str,
    keep: fn(&str) -> bool,
) -> Result<Import, ImportError> {
    let err = |reason: String| ImportError {
        source_name: source_name.to_string(),
        reason,
    };
    // A cURL file may open with `#!/bin/sh` (the console's own exports do) and comments.
    let first_line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("");
    if first_line.starts_with("curl") {
        return curl(text).map_err(err).map(|requests| Import {
            requests: requests
                .into_iter()
                .map(|r| with_headers(r, keep))
                .collect(),
            variables: Vec::new(),
        });
    }
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        err(format!(
            "neither a cURL command nor JSON (Postman, HAR): {e}"
        ))
    })?;
    if doc.get("log").and_then(|l| l.get("entries")).is_some() {
        return Ok(Import {
            requests: har(&doc, source_name)
                .map_err(err)?
                .into_iter()
                .map(|r| with_headers(r, keep))
                .collect(),
            variables: Vec::new(),
        });
    }
    if doc.get("item").is_some() {
        let mut requests = Vec::new();
        postman_items(&doc["item"], &[], keep, &mut requests);
        return Ok(Import {
            requests,
            variables: postman_variables(&doc["variable"]),
        });
    }
    Err(err(
        "JSON without `item` (Postman collection) or `log.entries` (HAR)".into(),
    ))
}

/// A Postman `variable` list (`[{"key", "value", "disabled"}]`) as (name, value); values
/// that are not strings are written as JSON.
fn postman_variables(list: &Value) -> Vec<(String, String)> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["disabled"] != Value::Bool(true) && v["enabled"] != Value::Bool(false))
        .filter_map(|v| {
            let key = v["key"].as_str().or_else(|| v["id"].as_str())?.trim();
            let value = match &v["value"] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (!key.is_empty()).then(|| (key.to_string(), value))
        })
        .collect()
}

/// The `.set(...)` assignments of the item's test scripts that read a JSON path of the
/// response (`jsonData...`).
fn postman_sets(item: &Value) -> Vec<ScriptSet> {
    item["event"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["listen"] == "test")
        .flat_map(|e| match &e["script"]["exec"] {
            Value::Array(lines) => lines
                .iter()
                .filter_map(|l| l.as_str().map(str::to_string))
                .collect::<Vec<_>>(),
            Value::String(s) => s.lines().map(str::to_string).collect(),
            _ => Vec::new(),
        })
        .flat_map(|line| line.split(';').filter_map(script_set).collect::<Vec<_>>())
        .collect()
}

/// Parses `pm.globals.set("x", jsonData.a[0].b)` (and the other setters named in the module
/// documentation); `None` for anything else.
pub fn script_set(statement: &str) -> Option<ScriptSet> {
    const SETTERS: [&str; 6] = [
        "pm.globals.set(",
        "pm.environment.set(",
        "pm.collectionVariables.set(",
        "pm.variables.set(",
        "postman.setEnvironmentVariable(",
        "postman.setGlobalVariable(",
    ];
    let s = statement.trim();
    let args = SETTERS
        .iter()
        .find_map(|p| s.find(p).map(|i| &s[i + p.len()..]))?;
    let args = args.trim_start();
    let quote = args
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\'' | '`'))?;
    let (variable, rest) = args[1..].split_once(quote)?;
    let rest = rest.trim_start().strip_prefix(',')?.trim();
    let rest = rest.strip_suffix(')')?.trim();
    let path = rest.strip_prefix("jsonData")?;
    let valid = path
        .chars()
        .all(|c| c.is_alphanumeric() || "._[]$".contains(c));
    (valid && !variable.is_empty()).then(|| ScriptSet {
        variable: variable.to_string(),
        path: path.to_string(),
    })
}

/// Reads a Postman environment export (`{"values": [{"key", "value", "enabled"}]}`) or a
/// plain JSON object of names to values, as (name, value).
///
/// Errors: not JSON, or neither shape.
pub fn environment(text: &str, source_name: &str) -> Result<Vec<(String, String)>, ImportError> {
    let err = |reason: String| ImportError {
        source_name: source_name.to_string(),
        reason,
    };
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| err(format!("not JSON (a Postman environment export): {e}")))?;
    if let Some(values) = doc.get("values").filter(|v| v.is_array()) {
        return Ok(postman_variables(values));
    }
    match doc {
        Value::Object(map) => Ok(map
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect()),
        _ => Err(err(
            "neither a Postman environment (`values` list) nor an object of names to values".into(),
        )),
    }
}

fn postman_items(
    items: &Value,
    scope: &[(String, String)],
    keep: fn(&str) -> bool,
    out: &mut Vec<ImportedRequest>,
) {
    for it in items.as_array().into_iter().flatten() {
        let mut variables = scope.to_vec();
        variables.extend(postman_variables(&it["variable"]));
        if it.get("item").is_some() {
            postman_items(&it["item"], &variables, keep, out);
            continue;
        }
        let r = &it["request"];
        let url = match &r["url"] {
            Value::String(s) => s.clone(),
            u => u["raw"].as_str().unwrap_or_default().to_string(),
        };
        let headers = r["header"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|h| h["disabled"] != Value::Bool(true))
            .map(|h| {
                (
                    h["key"].as_str().unwrap_or_default().trim().to_string(),
                    h["value"].as_str().unwrap_or_default().trim().to_string(),
                )
            })
            .filter(|(n, _)| !n.is_empty() && keep(n))
            .collect();
        let body = match (r["body"]["mode"].as_str(), r["body"]["raw"].as_str()) {
            (Some("raw"), Some(raw)) if !raw.trim().is_empty() => Some(raw.to_string()),
            _ => None,
        };
        out.push(ImportedRequest {
            name: it["name"].as_str().unwrap_or_default().to_string(),
            method: r["method"].as_str().unwrap_or("GET").to_ascii_uppercase(),
            url: url.trim().to_string(),
            headers,
            body,
            variables,
            sets: postman_sets(it),
        });
    }
}

/// The entries of a HAR log ([`super::recorded`]'s reader: the same checks as a replay or
/// the doctor), with every header as recorded (signing headers too), the method in upper
/// case and the body as text.
fn har(doc: &Value, source_name: &str) -> Result<Vec<ImportedRequest>, String> {
    Ok(super::recorded::har(doc, source_name)?
        .into_iter()
        .map(|r| ImportedRequest {
            name: r.name,
            method: r.method.to_ascii_uppercase(),
            url: r.url,
            headers: r.headers,
            body: (!r.body.is_empty()).then(|| String::from_utf8_lossy(&r.body).into_owned()),
            ..ImportedRequest::default()
        })
        .collect())
}

/// Parses one or more cURL commands (backslash line continuations allowed), reading `-X`,
/// `-H`, `-d`/`--data`/`--data-raw`/`--data-binary` and the URL; every header is kept
/// (signing headers too).
pub(crate) fn curl(text: &str) -> Result<Vec<ImportedRequest>, String> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    // A command runs from a line starting with `curl` until its quotes close, so a quoted
    // body may span lines (pretty-printed JSON) and keeps its newlines.
    let mut commands: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    for line in joined.lines() {
        match pending.as_mut() {
            Some(p) => {
                p.push('\n');
                p.push_str(line);
            }
            None if line.trim_start().starts_with("curl") => {
                pending = Some(line.trim_start().to_string());
            }
            None => continue,
        }
        if pending
            .as_deref()
            .is_some_and(|p| shell_words::split(&ansi_c_quotes(p)).is_ok())
        {
            commands.extend(pending.take());
        }
    }
    commands.extend(pending);
    let mut out = Vec::new();
    for (i, line) in commands.iter().enumerate() {
        let words = shell_words::split(&ansi_c_quotes(line))
            .map_err(|e| format!("cURL command {}: {e}", i + 1))?;
        let mut method = None;
        let mut url = None;
        let mut headers = Vec::new();
        let mut body: Option<String> = None;
        let mut it = words.into_iter().skip(1);
        while let Some(w) = it.next() {
            match w.as_str() {
                "-X" | "--request" => method = it.next(),
                "-H" | "--header" => {
                    if let Some(h) = it.next()
                        && let Some((n, v)) = h.split_once(':')
                    {
                        headers.push((n.trim().to_string(), v.trim().to_string()));
                    }
                }
                "-d" | "--data" | "--data-raw" | "--data-binary" | "--data-ascii" => {
                    body = it.next();
                }
                "-o" | "-w" | "--max-time" | "-m" | "--output" | "--write-out" => {
                    it.next();
                }
                s if s.starts_with("http://") || s.starts_with("https://") => {
                    url = Some(s.to_string())
                }
                _ => {}
            }
        }
        let url = url.ok_or_else(|| format!("cURL command {} has no http(s) URL", i + 1))?;
        let method = method
            .unwrap_or_else(|| if body.is_some() { "POST" } else { "GET" }.into())
            .to_ascii_uppercase();
        out.push(ImportedRequest {
            name: format!("curl {} {method} {url}", i + 1),
            method,
            url,
            headers,
            body,
            ..ImportedRequest::default()
        });
    }
    if out.is_empty() {
        return Err("no cURL command found".into());
    }
    Ok(out)
}

pub use super::recorded::path_and_query_of;

/// `command` with bash's ANSI-C quoted strings (`$'{\n  "a": 1\n}'`, as browsers' "Copy as
/// cURL" writes bodies with newlines) turned into plain single-quoted strings holding the
/// text they stand for, so that [`shell_words`] reads them: `\n \t \r \a \b \e \f \v \\ \'
/// \" \?`, `\xHH`, octal `\NNN`, `\uHHHH` and `\UHHHHHHHH` (bash manual, "ANSI-C Quoting");
/// bytes that are not UTF-8 become U+FFFD. Other text, and `$'` inside quotes, is kept.
fn ansi_c_quotes(command: &str) -> std::borrow::Cow<'_, str> {
    if !command.contains("$'") {
        return std::borrow::Cow::Borrowed(command);
    }
    let mut out = String::with_capacity(command.len());
    let mut chars = command.chars().peekable();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single => {
                out.push(c);
                out.extend(chars.next());
                continue;
            }
            '$' if !single && !double && chars.peek() == Some(&'\'') => {
                chars.next();
                let text = ansi_c_body(&mut chars);
                out.push('\'');
                out.push_str(&text.replace('\'', "'\\''"));
                out.push('\'');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// The text of an ANSI-C quoted string after its `$'`, up to and including the closing `'`
/// ([`ansi_c_quotes`]).
fn ansi_c_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    fn digits(
        chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
        radix: u32,
        max: usize,
        init: u32,
    ) -> u32 {
        let mut v = init;
        for _ in 0..max {
            let Some(d) = chars.peek().and_then(|d| d.to_digit(radix)) else {
                break;
            };
            v = v.saturating_mul(radix).saturating_add(d);
            chars.next();
        }
        v
    }
    let mut bytes: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4];
    while let Some(c) = chars.next() {
        let escaped = match c {
            '\'' => break,
            '\\' => chars.next(),
            other => {
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                continue;
            }
        };
        match escaped {
            Some('n') => bytes.push(b'\n'),
            Some('t') => bytes.push(b'\t'),
            Some('r') => bytes.push(b'\r'),
            Some('a') => bytes.push(7),
            Some('b') => bytes.push(8),
            Some('e' | 'E') => bytes.push(0x1b),
            Some('f') => bytes.push(0x0c),
            Some('v') => bytes.push(0x0b),
            Some(q @ ('\\' | '\'' | '"' | '?')) => bytes.push(q as u8),
            Some('x') => bytes.push((digits(chars, 16, 2, 0) & 0xff) as u8),
            Some(d @ '0'..='7') => {
                bytes.push((digits(chars, 8, 2, d.to_digit(8).unwrap_or(0)) & 0xff) as u8)
            }
            Some(u @ ('u' | 'U')) => {
                let v = digits(chars, 16, if u == 'u' { 4 } else { 8 }, 0);
                let ch = char::from_u32(v).unwrap_or('\u{fffd}');
                bytes.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            Some(other) => {
                bytes.push(b'\\');
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Values of Postman variables for a run: static ones (collection, then environment, then
/// the request's folders and item) and the ones captured from responses, which win.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variables {
    collection: BTreeMap<String, String>,
    environment: BTreeMap<String, String>,
    captured: BTreeMap<String, String>,
}

/// A request with its variables substituted, ready for
/// [`crate::client::prepare_imported`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The request; unknown variables are left as written (`{{name}}`), except in the URL
    /// path, where their braces are percent-encoded (`%7B%7Bname%7D%7D`) so that the path
    /// signed is the path sent, and a URL whose whole path is an unknown variable
    /// (`{{host}}{{link}}`) is sent to `/%7B%7Blink%7D%7D` and answered by the bank.
    pub request: ImportedRequest,
    /// Names of the variables without a value, in order of appearance, each once.
    pub unknown: Vec<String>,
}

impl Variables {
    /// Variables from a collection's list and an environment (which wins).
    pub fn new(collection: &[(String, String)], environment: &[(String, String)]) -> Self {
        Variables {
            collection: collection.iter().cloned().collect(),
            environment: environment.iter().cloned().collect(),
            captured: BTreeMap::new(),
        }
    }

    /// Sets a variable for the rest of the run (as a test script does).
    pub fn set(&mut self, name: &str, value: &str) {
        self.captured.insert(name.to_string(), value.to_string());
    }

    /// The value of `name` for `req`: captured, then the request's own and its folders',
    /// then the environment, then the collection; dynamic `$` variables are new each time.
    pub fn get(&self, req: &ImportedRequest, name: &str) -> Option<String> {
        match name {
            "$guid" | "$randomUUID" => return Some(uuid::Uuid::new_v4().to_string()),
            "$timestamp" => {
                return Some(crate::cert::unix_seconds(std::time::SystemTime::now()).to_string());
            }
            "$isoTimestamp" => {
                return Some(
                    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                );
            }
            _ => {}
        }
        self.captured
            .get(name)
            .cloned()
            .or_else(|| {
                req.variables
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
            })
            .or_else(|| self.environment.get(name).cloned())
            .or_else(|| self.collection.get(name).cloned())
    }

    /// `text` with every `{{name}}` that has a value replaced; the others are kept as
    /// written and their names returned.
    pub fn substitute(&self, req: &ImportedRequest, text: &str) -> (String, Vec<String>) {
        let mut out = String::with_capacity(text.len());
        let mut unknown = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            let Some(len) = rest[start + 2..].find("}}") else {
                break;
            };
            out.push_str(&rest[..start]);
            let name = rest[start + 2..start + 2 + len].trim();
            match self.get(req, name) {
                Some(v) => out.push_str(&v),
                None => {
                    out.push_str(&rest[start..start + 2 + len + 2]);
                    if !unknown.iter().any(|u| u == name) {
                        unknown.push(name.to_string());
                    }
                }
            }
            rest = &rest[start + 2 + len + 2..];
        }
        out.push_str(rest);
        (out, unknown)
    }

    /// The URL of `req` with the variables substituted (unknown ones as written), for
    /// display; the host variable is not reported as unknown.
    pub fn display_url(&self, req: &ImportedRequest) -> (String, Vec<String>) {
        let (scheme, host_var, rest) = split_host_variable(&req.url);
        let (rest, unknown) = self.substitute(req, rest);
        (format!("{scheme}{host_var}{rest}"), unknown)
    }

    /// `req` with its variables substituted in URL, header values and body.
    pub fn resolve(&self, req: &ImportedRequest) -> Resolved {
        let mut unknown: Vec<String> = Vec::new();
        let mut note = |names: Vec<String>| {
            for n in names {
                if !unknown.contains(&n) {
                    unknown.push(n);
                }
            }
        };
        let (scheme, host_var, rest) = split_host_variable(&req.url);
        let (mut rest, names) = self.substitute(req, rest);
        note(names);
        if !host_var.is_empty() && !rest.starts_with('/') {
            // `{{host}}{{link}}`: the path is whatever the link holds. A link holding an
            // absolute URL keeps its own path; without a value it becomes a path of its own.
            rest = match rest.split_once("://") {
                Some((_, r)) => r.find('/').map(|i| r[i..].to_string()).unwrap_or_default(),
                None => format!("/{rest}"),
            };
        }
        let rest = rest.replace('{', "%7B").replace('}', "%7D");
        let url = format!("{scheme}{host_var}{rest}");
        let headers = req
            .headers
            .iter()
            .map(|(n, v)| {
                let (v, names) = self.substitute(req, v);
                note(names);
                (n.clone(), v)
            })
            .collect();
        let body = req.body.as_ref().map(|b| {
            let (b, names) = self.substitute(req, b);
            note(names);
            b
        });
        Resolved {
            request: ImportedRequest {
                url,
                headers,
                body,
                ..req.clone()
            },
            unknown,
        }
    }

    /// Runs the test-script assignments of `req` on its response body `json`; returns the
    /// variables set, as (name, value). A path that is missing, or leads to an object or an
    /// array, sets nothing.
    pub fn capture(&mut self, req: &ImportedRequest, json: &Value) -> Vec<(String, String)> {
        let mut set = Vec::new();
        for s in &req.sets {
            if let Some(v) = json_path(json, &s.path) {
                self.set(&s.variable, &v);
                set.push((s.variable.clone(), v));
            }
        }
        set
    }
}

/// Whether a request of `requests` after index `index` sets one of `names` from its
/// response: a request using such a variable is better sent after it.
pub fn set_later(requests: &[ImportedRequest], index: usize, names: &[String]) -> bool {
    requests
        .iter()
        .skip(index + 1)
        .flat_map(|r| &r.sets)
        .any(|s| names.contains(&s.variable))
}

/// Splits `https://{{host}}/v1/x` into (`https://`, `{{host}}`, `/v1/x`); a URL that does
/// not start with a variable after its scheme gives an empty middle part.
fn split_host_variable(url: &str) -> (&str, &str, &str) {
    let scheme_len = url.find("://").map(|i| i + 3).unwrap_or(0);
    let after = &url[scheme_len..];
    if after.starts_with("{{")
        && let Some(end) = after.find("}}")
    {
        return (&url[..scheme_len], &after[..end + 2], &after[end + 2..]);
    }
    (&url[..scheme_len], "", after)
}

/// Evaluates `.a[0].b` on `v`: a string, number or boolean value, as text.
pub fn json_path(v: &Value, path: &str) -> Option<String> {
    let mut cur = v;
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            cur = cur.get(&r[..end])?;
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let (n, r) = r.split_once(']')?;
            let key = n.trim().trim_matches(['"', '\'']);
            cur = match key.parse::<usize>() {
                Ok(i) => cur.get(i)?,
                Err(_) => cur.get(key)?,
            };
            rest = r;
        } else {
            return None;
        }
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curl_commands_are_parsed_and_signing_headers_dropped() {
        let r = import(
            "curl -sS -X POST 'http://127.0.0.1:8080/v1/payments/x' \\\n  -H 'X-Request-ID: 1' \\\n  -H 'Signature: keyId=\"a\"' \\\n  --data-binary '{\"a\":\"1\"}'\n",
            "t",
        )
        .unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].method, "POST");
        assert_eq!(r[0].url, "http://127.0.0.1:8080/v1/payments/x");
        assert_eq!(
            r[0].headers,
            vec![("X-Request-ID".to_string(), "1".to_string())]
        );
        assert_eq!(r[0].body.as_deref(), Some("{\"a\":\"1\"}"));
        assert!(import("curl 'unterminated", "t").is_err());
        assert!(
            import("{\"x\":1}", "t")
                .unwrap_err()
                .to_string()
                .contains("item")
        );
    }

    #[test]
    fn recorded_reads_keep_signing_headers() {
        let as_given = |bytes: &[u8]| super::super::recorded::read(bytes, "t").map(|r| r.requests);
        let curl = b"curl -X POST 'https://b/v1/p' -H 'Signature: s' -H 'Digest: d' --data-raw '{ \"a\": 1 }\n'";
        let r = as_given(curl).unwrap();
        assert_eq!(r[0].headers.len(), 2);
        assert_eq!(r[0].body, b"{ \"a\": 1 }\n");
        assert_eq!(
            import(std::str::from_utf8(curl).unwrap(), "t").unwrap()[0].headers,
            vec![]
        );
        let har = br#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://b/v1/x",
            "headers": [{"name": "Date", "value": "d"}, {"name": "X-A", "value": "1"}]}}]}}"#;
        assert_eq!(as_given(har).unwrap()[0].headers.len(), 2);
        assert_eq!(
            import(std::str::from_utf8(har).unwrap(), "t").unwrap()[0]
                .headers
                .len(),
            1
        );
        // Browsers' "Copy as cURL (bash)": ANSI-C quoting for bodies with newlines.
        let copied = br#"curl 'https://b/v1/p' -H 'X-A: it'"'"'s' --data-raw $'{\n  "n": "\xc3\xa6\u00f8 it\'s \\ \101"\n}\n' -H "B: \$'x'""#;
        let r = as_given(copied).unwrap();
        assert_eq!(
            String::from_utf8(r[0].body.clone()).unwrap(),
            "{\n  \"n\": \"\u{e6}\u{f8} it's \\ A\"\n}\n"
        );
        assert_eq!(
            r[0].headers,
            vec![
                ("X-A".to_string(), "it's".to_string()),
                ("B".to_string(), "$'x'".to_string())
            ]
        );
        assert!(import(r#"{"log": {"entries": [{"request": 42}]}}"#, "t").is_err());
    }

    #[test]
    fn postman_variables_resolve_by_scope_and_capture_from_responses() {
        let collection = r#"{"info": {}, "variable": [{"key": "host", "value": "x"}, {"key": "p", "value": "c"}],
          "item": [{"name": "f", "variable": [{"key": "p", "value": "folder"}], "item": [
            {"name": "create", "request": {"method": "POST", "url": "https://{{host}}/v1/{{p}}",
               "header": [{"key": "X-Id", "value": "{{$guid}}"}], "body": {"mode": "raw", "raw": "{\"a\":\"{{env}}\"}"}},
             "event": [{"listen": "test", "script": {"exec": ["var jsonData = pm.response.json();",
               "pm.environment.set(\"paymentId\", jsonData.paymentId);",
               "pm.globals.set('link', jsonData._links.confirmation.href)"]}}]},
            {"name": "get", "request": {"method": "GET", "url": "{{host}}{{link}}"}},
            {"name": "status", "request": {"method": "GET", "url": "{{host}}/v1/x/{{paymentId}}/{{nope}}"}}]}]}"#;
        let imp = import_file(collection, "c").unwrap();
        assert_eq!(imp.requests.len(), 3);
        assert_eq!(imp.requests[0].sets.len(), 2);
        let env = environment(
            r#"{"values": [{"key": "env", "value": "E", "enabled": true}]}"#,
            "e",
        )
        .unwrap();
        let mut vars = Variables::new(&imp.variables, &env);
        let r = vars.resolve(&imp.requests[0]);
        assert_eq!(r.request.url, "https://{{host}}/v1/folder");
        assert_eq!(r.request.body.as_deref(), Some("{\"a\":\"E\"}"));
        assert_eq!(r.request.headers[0].1.len(), 36);
        assert!(r.unknown.is_empty(), "{:?}", r.unknown);
        let get = vars.resolve(&imp.requests[1]);
        assert_eq!(get.unknown, vec!["link".to_string()]);
        assert_eq!(get.request.url, "{{host}}/%7B%7Blink%7D%7D");
        assert!(
            !set_later(&imp.requests, 0, &["link".into()]),
            "no request after the first sets it"
        );
        let reordered = [imp.requests[1].clone(), imp.requests[0].clone()];
        assert!(set_later(&reordered, 0, &["link".into()]));
        let set = vars.capture(
            &imp.requests[0],
            &serde_json::json!({"paymentId": "p1", "_links": {"confirmation": {"href": "/v1/c/1"}}}),
        );
        assert_eq!(set.len(), 2);
        assert_eq!(
            vars.resolve(&imp.requests[1]).request.url,
            "{{host}}/v1/c/1"
        );
        let st = vars.resolve(&imp.requests[2]);
        assert_eq!(st.unknown, vec!["nope".to_string()]);
        assert_eq!(st.request.url, "{{host}}/v1/x/p1/%7B%7Bnope%7D%7D");
        assert_eq!(
            vars.display_url(&imp.requests[2]).0,
            "{{host}}/v1/x/p1/{{nope}}"
        );
    }
}
