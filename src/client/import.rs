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

use super::recorded::postman::Collection;
/// The Postman readers: a test script's assignments, an environment export.
pub use super::recorded::postman::{environment, script_set};
/// What the importer reads and gives, defined beside the reader of recorded requests
/// ([`super::recorded`]), which reads the same files.
pub use super::recorded::{ImportError, ImportedRequest, ScriptSet};

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
    if super::recorded::curl::is_curl(text.as_bytes()) {
        return super::recorded::curl::curl(text)
            .map_err(err)
            .map(|requests| Import {
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
    if super::recorded::is_har(&doc) {
        return Ok(Import {
            requests: har(&doc, source_name)
                .map_err(err)?
                .into_iter()
                .map(|r| with_headers(r, keep))
                .collect(),
            variables: Vec::new(),
        });
    }
    if let Some(collection) = Collection::of(&doc) {
        let (requests, variables) = collection.read(keep);
        return Ok(Import {
            requests,
            variables,
        });
    }
    Err(err(
        "JSON without `item` (Postman collection) or `log.entries` (HAR)".into(),
    ))
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

/// The path and query of a URL as written ([`super::recorded`]).
pub(crate) use super::recorded::path_and_query_of;

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
pub(crate) fn json_path(v: &Value, path: &str) -> Option<String> {
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
