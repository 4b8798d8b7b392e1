//! The Berlin Group check of every sandbox answer: a thin wrapper over the library's
//! conformance lint ([`psd2_console::lint`], which holds the spec, the operation → schema
//! mapping, the documented 400 exception and the interface document's response rules), so
//! there is one schema checker. [`check_exchange`] turns the lint's error findings into a
//! violation; warnings do not fail a test.
//!
//! One rule is the harness's own: the sandbox never answers 500, so a 500 is a violation
//! (a real bank may, and the lint checks its body like any other error).

#![allow(dead_code)]

use std::path::PathBuf;

use psd2_console::lint::{self, Asked, Severity};
use psd2_console::sandbox::http::observe::ObservedExchange;
use serde_json::Value;

pub use psd2_console::lint::Spec;

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

/// The library's compiled Berlin Group file (built into the binary).
pub fn spec() -> Result<&'static Spec, String> {
    lint::spec().map_err(|e| e.to_string())
}

/// `Ok` when the lint finds no error in the answer (warnings pass); `Err` lists the errors,
/// one `[rule] message` each, joined with `; `.
pub fn check_exchange(ex: &ObservedExchange) -> Result<(), String> {
    if !ex.path.starts_with("/v1/") {
        return Ok(());
    }
    if ex.status == 500 {
        return Err("500 Internal Server Error: the sandbox never answers 500".into());
    }
    // `content_type` is authoritative (tests change it); the other headers as sent.
    let mut headers: Vec<(String, String)> = ex
        .headers
        .iter()
        .filter(|(n, _)| !n.eq_ignore_ascii_case("content-type"))
        .cloned()
        .collect();
    if let Some(ct) = &ex.content_type {
        headers.push(("content-type".into(), ct.clone()));
    }
    let asked = Asked::request(&ex.method, &ex.path).with_request_id(ex.request_id.as_deref());
    let errors: Vec<String> = lint::check_response(&asked, ex.status, &headers, &ex.body)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("[{}] {}", f.rule, f.message))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// An exchange as the sandbox observer would report it, with a JSON body (`Null`: empty) and
/// no `X-Request-ID` on either side.
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
        headers: Vec::new(),
        request_id: None,
    }
}
