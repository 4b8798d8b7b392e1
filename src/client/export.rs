//! Exports of exchanges: a cURL command (signed afresh at export time, so it runs as-is within
//! the 60-second Date window) and HAR 1.2 (Signature redacted).

use crate::xs2a::headers::find as header;
use serde_json::{Value, json};

use super::history::{HistoryEntry, redact};
use super::import::{ImportedRequest, SIGNING_HEADERS};
use super::{ClientError, PreparedRequest, RequestContext, prepare, prepare_imported};
use crate::xs2a::headers as h;
use crate::xs2a::operations;

/// Headers of a stored request that are not carried over when it is prepared again: the
/// signing headers, `X-Request-ID` (new on every send), and the session-bound headers
/// (`TPP-Session-ID`, `PSU-ID`, `PSU-Corporate-ID`, `TPP-Redirect-URI`), which take the
/// values of the current session and redirect listener, so an SCA done now applies.
const NOT_CARRIED: [&str; 5] = [
    h::X_REQUEST_ID,
    h::TPP_SESSION_ID,
    h::PSU_ID,
    h::PSU_CORPORATE_ID,
    h::TPP_REDIRECT_URI,
];

/// The request of history `entry`, prepared and signed again with `ctx` (its `now` is the
/// new `Date`): same method, path, query, parameters and body; new `X-Request-ID`, `Date`,
/// `Digest` and `Signature`; `TPP-Session-ID`, `PSU-ID`, `PSU-Corporate-ID` and
/// `TPP-Redirect-URI` from the current session (`ctx`), not from the stored request.
///
/// A catalogue operation is built again from its parameters ([`prepare`]); an imported
/// (`raw`) request from its stored URL, headers and body ([`prepare_imported`]). This is
/// what re-send (history screen `r`) and the cURL export (CLI `export`, history screen `x`)
/// use.
///
/// Errors: the stored parameters no longer build the request, or the body is not JSON.
pub fn reprepare(
    entry: &HistoryEntry,
    ctx: &RequestContext<'_>,
) -> Result<PreparedRequest, ClientError> {
    let body = (!entry.request_body.is_empty())
        .then(|| String::from_utf8_lossy(&entry.request_body).into_owned());
    if let Some(op) = operations::find(&entry.operation_id) {
        return prepare(op, &entry.params, body.as_deref(), ctx);
    }
    let headers = entry
        .request_headers
        .iter()
        .filter(|(n, _)| {
            !SIGNING_HEADERS
                .iter()
                .chain(NOT_CARRIED.iter())
                .any(|s| s.eq_ignore_ascii_case(n))
        })
        .cloned()
        .collect();
    let imported = ImportedRequest {
        name: format!("history {}", entry.id),
        method: entry.method.clone(),
        url: entry.url.clone(),
        headers,
        body,
        ..ImportedRequest::default()
    };
    prepare_imported(&imported, ctx)
}

/// Quotes `s` for a POSIX shell (single quotes). Text holding a control character other than
/// line feed (an escape sequence, a CR from a hostile file) is written in bash's ANSI-C
/// quoting instead (`$'a\x1b[2Jb'`: the same bytes when run, and no control character
/// reaches the terminal when printed; [`crate::terminal`]).
pub fn shell_quote(s: &str) -> String {
    if !s.chars().any(|c| c.is_control() && c != '\n') {
        return format!("'{}'", s.replace('\'', "'\\''"));
    }
    let mut out = String::from("$'");
    let mut buf = [0u8; 4];
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A cURL command for `req` (which should have just been signed). The body is sent with
/// `--data-binary` so the bytes, and so the Digest, are unchanged.
pub fn curl_command(req: &PreparedRequest) -> String {
    let method = if !req.method.is_empty() && req.method.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        req.method.clone()
    } else {
        shell_quote(&req.method)
    };
    let mut out = format!("curl -sS -X {method} {}", shell_quote(&req.url));
    for (n, v) in &req.headers {
        out.push_str(" \\\n  -H ");
        out.push_str(&shell_quote(&format!("{n}: {v}")));
    }
    if !req.body.is_empty() {
        out.push_str(" \\\n  --data-binary ");
        out.push_str(&shell_quote(&String::from_utf8_lossy(&req.body)));
    }
    out.push('\n');
    out
}

/// The cURL export as a shell script: `#!/bin/sh` and [`curl_command`], as the CLI's
/// `export --format curl` prints it and the history screen's `x` writes it.
pub fn curl_script(req: &PreparedRequest) -> String {
    format!("#!/bin/sh\n{}", curl_command(req))
}

/// The HAR entry fields of the signing clock, read back by [`super::recorded`].
pub(crate) use super::recorded::{HAR_CLOCK_OFFSET, HAR_SIGNED_AT};

fn har_headers(h: &[(String, String)]) -> Value {
    Value::Array(
        redact(h)
            .into_iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect(),
    )
}

/// HAR 1.2 (`log.entries[]`) of history entries, Signature values redacted.
///
/// Each entry carries two custom fields (HAR allows fields starting with `_`) when the
/// history knows them: `_signedAt`, the RFC 3339 time the request was signed for (its
/// `Date`; the sandbox's clock for an `embedded` profile), and `_sandboxClockOffset`, that
/// clock's offset from real time in seconds (non-zero after `sandbox.clock.advance`).
/// `startedDateTime` stays the real time of the exchange; the doctor reads both fields.
pub fn har(entries: &[HistoryEntry]) -> Value {
    let items: Vec<Value> = entries
        .iter()
        .map(|e| {
            let url = url::Url::parse(&e.url).ok();
            let query: Vec<Value> = url
                .as_ref()
                .map(|u| {
                    u.query_pairs()
                        .map(|(k, v)| json!({"name": k, "value": v}))
                        .collect()
                })
                .unwrap_or_default();
            let started = chrono::DateTime::from_timestamp(e.at, 0)
                .unwrap_or_default()
                .to_rfc3339();
            let mut request = json!({
                "method": e.method,
                "url": e.url,
                "httpVersion": "HTTP/1.1",
                "cookies": [],
                "headers": har_headers(&e.request_headers),
                "queryString": query,
                "headersSize": -1,
                "bodySize": e.request_body.len(),
            });
            if !e.request_body.is_empty() {
                request["postData"] = json!({
                    "mimeType": header(&e.request_headers, h::CONTENT_TYPE).unwrap_or("application/json"),
                    "text": String::from_utf8_lossy(&e.request_body),
                });
            }
            let mut entry = json!({
                "startedDateTime": started,
                "time": e.elapsed_ms,
                "request": request,
                "response": {
                    "status": e.status,
                    "statusText": axum::http::StatusCode::from_u16(e.status).ok().and_then(|s| s.canonical_reason()).unwrap_or(""),
                    "httpVersion": "HTTP/1.1",
                    "cookies": [],
                    "headers": har_headers(&e.response_headers),
                    "content": {
                        "size": e.response_body.len(),
                        "mimeType": header(&e.response_headers, h::CONTENT_TYPE).unwrap_or("application/json"),
                        "text": String::from_utf8_lossy(&e.response_body),
                    },
                    "redirectURL": header(&e.response_headers, "location").unwrap_or(""),
                    "headersSize": -1,
                    "bodySize": e.response_body.len(),
                },
                "cache": {},
                "timings": {"send": 0, "wait": e.elapsed_ms, "receive": 0},
                "comment": format!("psd2-console {} ({})", e.operation_id, e.profile),
            });
            if let Some(at) = e.signed_at.and_then(|t| chrono::DateTime::from_timestamp(t, 0)) {
                entry[HAR_SIGNED_AT] = json!(at.to_rfc3339());
            }
            if let Some(offset) = e.clock_offset_secs {
                entry[HAR_CLOCK_OFFSET] = json!(offset);
            }
            entry
        })
        .collect();
    json!({
        "log": {
            "version": "1.2",
            "creator": {"name": "psd2-console", "version": env!("CARGO_PKG_VERSION")},
            "entries": items,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_quoted_ansi_c_and_read_back_the_same() {
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("a\nb"), "'a\nb'");
        let hostile = "a\u{1b}]0;t\u{7}\r\n'\\\u{9b}b";
        let quoted = shell_quote(hostile);
        assert_eq!(quoted, "$'a\\x1b]0;t\\x07\\x0d\\n\\'\\\\\\xc2\\x9bb'");
        assert!(!quoted.chars().any(char::is_control));
        let command = format!(
            "curl 'https://b/v1/x' -H {}",
            shell_quote(&format!("X-A: {hostile}"))
        );
        let read = crate::client::recorded::read(command.as_bytes(), "t").unwrap();
        assert_eq!(read.requests[0].headers[0].1, hostile.trim());
    }
}
