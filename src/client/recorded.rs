//! The one reader of recorded requests (issue 18, cause C): a HAR 1.2 file, cURL commands
//! (browsers' "Copy as cURL" included, tokenised by [`super::import`]'s cURL reader), one
//! raw HTTP/1.1 request ([`parse_raw_http`], on `httparse`), or a Postman collection, read
//! into [`RecordedRequest`]s with every header as recorded (the signing headers `Signature`,
//! `Digest`, `Date`, `TPP-Signature-Certificate` too) and the body bytes as sent.
//!
//! Every command that takes a recorded request reads it here, so they see the same bytes:
//! the replay as given (`send --as-given FILE`, `import FILE --as-given`,
//! [`super::replay::read_file`], which refuses a Postman collection: it holds templates, not
//! recorded requests), the `doctor` command and the console's doctor view
//! ([`crate::doctor::input::parse`]).
//!
//! A file is unreadable ([`ImportError`]) rather than half read: a HAR entry whose `request`
//! is not an object with a string `method` and `url` (`{"request": 42}`), a header that is
//! not `{name, value}` strings, a raw request whose header section does not parse.

use std::time::SystemTime;

use serde_json::Value;

pub(crate) mod curl;
pub(crate) mod postman;

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

/// Why a file could not be imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {reason}")]
pub struct ImportError {
    /// The file (or source) name.
    pub source_name: String,
    /// What is wrong, in words.
    pub reason: String,
}

/// The HAR entry field with the time the request was signed for (RFC 3339): the console's
/// own HAR export writes it ([`super::export`]), this reader reads it back.
pub(crate) const HAR_SIGNED_AT: &str = "_signedAt";

/// The HAR entry field with the signing clock's offset from real time, seconds (written and
/// read as [`HAR_SIGNED_AT`]).
pub(crate) const HAR_CLOCK_OFFSET: &str = "_sandboxClockOffset";

/// Whether `doc` is a HAR log: it has `log.entries` (whatever its shape; [`har`] says what
/// is wrong with it).
pub(crate) fn is_har(doc: &Value) -> bool {
    doc.pointer("/log/entries").is_some()
}

/// A request as it was recorded (and sent): what the doctor diagnoses and a replay as given
/// sends again.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordedRequest {
    /// A label for lists: a HAR entry's comment or `har N URL`, `curl N METHOD URL`,
    /// `http METHOD TARGET`, a Postman item's name.
    pub name: String,
    /// The method as written (methods are case-sensitive, RFC 9110 §9.1).
    pub method: String,
    /// The URL (HAR, cURL: absolute) or request target (raw HTTP: usually `/path?query`) as
    /// written.
    pub url: String,
    /// Path and query exactly as sent, e.g. `/v1/accounts?withBalance=true` (no decoding or
    /// re-encoding, no fragment); `/` for an absolute URL without a path (RFC 9112 §3.2.1);
    /// empty when the URL names no path (a Postman `{{baseUrl}}` alone).
    pub path_and_query: String,
    /// Headers in file order, (name, value) as recorded (raw HTTP: without the white space
    /// around the value, an obsolete folded line joined with one space).
    pub headers: Vec<(String, String)>,
    /// The body bytes as sent (empty without a body).
    pub body: Vec<u8>,
    /// When the request was sent, if the recording says (HAR `startedDateTime`, history time).
    pub sent_at: Option<SystemTime>,
    /// Where it came from, for reports, e.g. `entry 1 of capture.har`, `raw HTTP in x.http`.
    pub source: String,
    /// The bank's answer, when the recording has it (HAR `response`, a history entry).
    pub response: Option<RecordedResponse>,
    /// The signing clock, when the recording says (history columns `signed_at` and
    /// `clock_offset`, HAR `_signedAt` and `_sandboxClockOffset`).
    pub clock: RecordedClock,
}

/// What a recording says of the clock the request was signed at: an `embedded` profile
/// signs at its sandbox's clock, which `sandbox.clock.advance` moves away from real time,
/// while the recorded send time ([`RecordedRequest::sent_at`]) is real time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordedClock {
    /// The instant the request was signed for (its `Date`, unless one was typed).
    pub signed_at: Option<SystemTime>,
    /// The signing clock's offset from real time, seconds (`signed_at` minus real time);
    /// the bank's clock stood this far from the recorded send time.
    pub offset_secs: Option<i64>,
}

/// A recorded answer: status, headers as recorded, body bytes (HAR `response.content.text`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordedResponse {
    /// HTTP status code.
    pub status: u16,
    /// Response headers, (name, value).
    pub headers: Vec<(String, String)>,
    /// The body bytes (gzip already decoded by whoever recorded it).
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The value of the first header named `name` (case-insensitive), untrimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        crate::xs2a::headers::find(&self.headers, name)
    }

    /// The path without the query.
    pub fn path(&self) -> &str {
        self.path_and_query
            .split(['?', '#'])
            .next()
            .unwrap_or_default()
    }
}

/// The format a file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// HAR 1.2 (`log.entries`).
    Har,
    /// One or more cURL commands.
    Curl,
    /// One raw HTTP/1.1 request.
    RawHttp,
    /// A Postman collection v2.1 (`item`): templates with `{{variables}}`.
    Postman,
}

/// What one file holds: its format and its requests, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    /// HAR, cURL or raw HTTP.
    pub format: Format,
    /// The requests, in file order.
    pub requests: Vec<RecordedRequest>,
}

/// Reads the requests of `bytes` (a file named `source_name`): a cURL command file when the
/// first line that is neither empty nor a `#` comment starts with `curl`, JSON (a HAR file,
/// a Postman collection) when the first byte that is not white space is `{`, else one raw
/// HTTP request ([`parse_raw_http`]).
///
/// Errors: text in none of these forms, or a malformed one, with the reason
/// ([`ImportError`]).
pub fn read(bytes: &[u8], source_name: &str) -> Result<Recording, ImportError> {
    let err = |reason: String| ImportError {
        source_name: source_name.to_string(),
        reason,
    };
    if curl::is_curl(bytes) {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| err(format!("a cURL file that is not UTF-8: {e}")))?;
        let requests = curl::curl(text).map_err(err)?;
        return Ok(Recording {
            format: Format::Curl,
            requests: numbered(requests, |n| format!("cURL command {n} of {source_name}")),
        });
    }
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace());
    if start.is_some_and(|i| bytes[i] == b'{') {
        let doc: Value = serde_json::from_slice(bytes).map_err(|e| {
            err(format!(
                "not JSON (a HAR file or a Postman collection): {e}"
            ))
        })?;
        if is_har(&doc) {
            return Ok(Recording {
                format: Format::Har,
                requests: har(&doc, source_name).map_err(err)?,
            });
        }
        if let Some(collection) = postman::Collection::of(&doc) {
            let (requests, _) = collection.read(|_| true);
            return Ok(Recording {
                format: Format::Postman,
                requests: numbered(requests, |n| format!("entry {n} of {source_name}")),
            });
        }
        return Err(err(
            "JSON without `log.entries` (a HAR file) or `item` (a Postman collection)".into(),
        ));
    }
    parse_raw_http(bytes, source_name)
        .map(|r| Recording {
            format: Format::RawHttp,
            requests: vec![r],
        })
        .map_err(|e| {
            err(format!(
                "neither a HAR file, a cURL command nor a Postman collection, and not raw HTTP (a request line such as `GET /v1/accounts HTTP/1.1`, headers, a blank line, the body): {}",
                e.reason
            ))
        })
}

/// `requests` as recorded requests, each named by `name` from its 1-based number.
fn numbered(
    requests: Vec<ImportedRequest>,
    name: impl Fn(usize) -> String,
) -> Vec<RecordedRequest> {
    requests
        .into_iter()
        .enumerate()
        .map(|(i, r)| from_imported(r, name(i + 1)))
        .collect()
}

/// A cURL command or Postman item as recorded: the body's text as bytes.
fn from_imported(r: ImportedRequest, source: String) -> RecordedRequest {
    RecordedRequest {
        path_and_query: path_and_query_or_root(&r.url),
        name: r.name,
        method: r.method,
        url: r.url,
        headers: r.headers,
        body: r.body.map(String::into_bytes).unwrap_or_default(),
        sent_at: None,
        source,
        response: None,
        clock: RecordedClock::default(),
    }
}

/// [`path_and_query_of`], `/` for an absolute URL without a path, empty for none.
fn path_and_query_or_root(url: &str) -> String {
    match path_and_query_of(url) {
        Some(p) => p.to_string(),
        None if url.contains("://") => "/".to_string(),
        None => String::new(),
    }
}

/// The path and query of `url` exactly as written (no decoding or re-encoding), without a
/// fragment: `/v1/x?a=1` of `https://bank.example/v1/x?a=1#f`, of `{{host}}/v1/x?a=1` and of
/// `/v1/x?a=1`; `None` when there is no path (`https://bank.example`).
pub(crate) fn path_and_query_of(url: &str) -> Option<&str> {
    let url = url.split_once('#').map_or(url, |(u, _)| u);
    if url.starts_with('/') {
        return Some(url);
    }
    let after_scheme = url.split_once("://").map_or(url, |(_, r)| r);
    after_scheme.find('/').map(|i| &after_scheme[i..])
}

/// A short description of a JSON value for an error message (its type, or the value when
/// short).
fn shape(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "missing".into(),
        Some(Value::Object(_)) => "an object".into(),
        Some(Value::Array(_)) => "an array".into(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > 40 {
                format!("{}…", s.chars().take(40).collect::<String>())
            } else {
                s
            }
        }
    }
}

/// The entries of a HAR log as recorded: every header, `postData.text` as the body,
/// `startedDateTime` as the send time and the `response` (when it has a status other than 0:
/// browsers write 0 for a request that got no answer).
///
/// Errors (the reason): `log.entries` is not an array; an entry whose `request` is not an
/// object with a non-empty string `method` and `url`, whose `url` is neither an absolute URL
/// nor a path, whose `headers` are not a list of `{name, value}` strings, or whose
/// `postData.text` is not a string.
pub(crate) fn har(doc: &Value, source_name: &str) -> Result<Vec<RecordedRequest>, String> {
    let entries = doc["log"]["entries"].as_array().ok_or_else(|| {
        format!(
            "log.entries is {}, not a list of entries",
            shape(doc["log"].get("entries"))
        )
    })?;
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let n = i + 1;
        let r = e.get("request").filter(|r| r.is_object()).ok_or_else(|| {
            format!(
                "HAR entry {n}: `request` is {}, not a request object",
                shape(e.get("request"))
            )
        })?;
        let text = |key: &str| {
            r.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| {
                    format!(
                        "HAR entry {n}: request `{key}` is {}, not a string",
                        shape(r.get(key))
                    )
                })
        };
        let method = text("method")?;
        let url = text("url")?;
        let path_and_query = path_and_query_or_root(url);
        if path_and_query.is_empty() || !(url.starts_with('/') || url.contains("://")) {
            return Err(format!(
                "HAR entry {n}: url {url:?} is neither an absolute URL nor a path"
            ));
        }
        let headers = match r.get("headers") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(hs)) => {
                let mut headers = Vec::with_capacity(hs.len());
                for (k, h) in hs.iter().enumerate() {
                    match (h["name"].as_str(), h["value"].as_str()) {
                        (Some(name), Some(value)) if !name.is_empty() => {
                            headers.push((name.to_string(), value.to_string()))
                        }
                        _ => {
                            return Err(format!(
                                "HAR entry {n}: header {} is {}, not {{name, value}} strings",
                                k + 1,
                                shape(Some(h))
                            ));
                        }
                    }
                }
                headers
            }
            Some(other) => {
                return Err(format!(
                    "HAR entry {n}: request `headers` is {}, not a list",
                    shape(Some(other))
                ));
            }
        };
        let body = match r.get("postData").map(|p| p.get("text")) {
            None | Some(None) | Some(Some(Value::Null)) => Vec::new(),
            Some(Some(Value::String(t))) => t.as_bytes().to_vec(),
            Some(Some(other)) => {
                return Err(format!(
                    "HAR entry {n}: postData.text is {}, not a string",
                    shape(Some(other))
                ));
            }
        };
        out.push(RecordedRequest {
            name: e["comment"]
                .as_str()
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("har {n} {url}")),
            method: method.to_string(),
            url: url.to_string(),
            path_and_query,
            headers,
            body,
            sent_at: e["startedDateTime"]
                .as_str()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .map(SystemTime::from),
            source: format!("entry {n} of {source_name}"),
            response: har_response(&e["response"]),
            clock: RecordedClock {
                signed_at: e[HAR_SIGNED_AT]
                    .as_str()
                    .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                    .map(SystemTime::from),
                offset_secs: e[HAR_CLOCK_OFFSET].as_i64(),
            },
        });
    }
    Ok(out)
}

/// A HAR `response`: status, headers and `content.text`; `None` without a status (or with
/// status 0, no answer).
fn har_response(r: &Value) -> Option<RecordedResponse> {
    let status = u16::try_from(r.get("status")?.as_u64()?)
        .ok()
        .filter(|s| *s != 0)?;
    let headers = r["headers"]
        .as_array()
        .map(|hs| {
            hs.iter()
                .filter_map(|h| {
                    Some((
                        h["name"].as_str()?.to_string(),
                        h["value"].as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let body = r["content"]["text"]
        .as_str()
        .map(|t| t.as_bytes().to_vec())
        .unwrap_or_default();
    Some(RecordedResponse {
        status,
        headers,
        body,
    })
}

/// Reads one raw HTTP/1.1 request (RFC 9112 §2–§6) with `httparse`: the request line
/// `METHOD TARGET HTTP/1.x`, header lines `Name: value`, an empty line, then the body. Lines
/// may end in CRLF or LF; empty lines before the request line are skipped (§2.2); an
/// obsolete folded line (one starting with a space or tab) is joined to the header before
/// it with one space (§5.2). The body is the bytes after the empty line, cut to
/// `Content-Length` when there is one (bytes beyond it are not part of the request); without
/// `Content-Length` it is every byte to the end of the file. Used for anyone who has a
/// request as captured by a proxy or `nc -l`.
///
/// Errors: no request line, a malformed request line or header line, a request target that
/// is neither a path nor an absolute URL, a header section that is not UTF-8, a
/// `Content-Length` that is not a number, disagrees with another, or exceeds the bytes
/// given, or `Transfer-Encoding` (chunked bodies are not read: give the body plainly).
pub fn parse_raw_http(bytes: &[u8], source_name: &str) -> Result<RecordedRequest, ImportError> {
    let err = |reason: String| ImportError {
        source_name: source_name.to_string(),
        reason,
    };
    // The head's lines (without their CR LF), up to the empty line; the body after it.
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut pos = 0;
    let mut body_start = bytes.len();
    while pos < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i);
        let line = &bytes[pos..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        pos = (end + 1).min(bytes.len());
        if line.is_empty() {
            if lines.is_empty() {
                continue;
            }
            body_start = pos;
            break;
        }
        lines.push(line);
    }
    let Some((request_line, header_lines)) = lines.split_first() else {
        return Err(err("no HTTP request line (METHOD /path HTTP/1.1)".into()));
    };
    let shown = |l: &[u8]| format!("{:?}", String::from_utf8_lossy(l));
    let not_request_line = || {
        err(format!(
            "{} is not an HTTP request line (METHOD /path HTTP/1.1)",
            shown(request_line)
        ))
    };
    // Obsolete line folding: each fold becomes one space (RFC 9112 §5.2).
    let mut fields: Vec<Vec<u8>> = Vec::with_capacity(header_lines.len());
    for l in header_lines {
        if l.starts_with(b" ") || l.starts_with(b"\t") {
            let Some(last) = fields.last_mut() else {
                return Err(err(format!(
                    "{}: a continuation line with no header before it",
                    shown(l)
                )));
            };
            while last.last().is_some_and(|b| *b == b' ' || *b == b'\t') {
                last.pop();
            }
            last.push(b' ');
            last.extend_from_slice(l.trim_ascii_start());
        } else {
            fields.push(l.to_vec());
        }
    }
    // The request line on its own first, so its errors are named as such.
    let mut head = request_line.to_vec();
    head.extend_from_slice(b"\r\n\r\n");
    let mut none = [httparse::EMPTY_HEADER; 0];
    let mut line_only = httparse::Request::new(&mut none);
    if !matches!(line_only.parse(&head), Ok(httparse::Status::Complete(_))) {
        return Err(not_request_line());
    }
    head.truncate(request_line.len() + 2);
    for f in &fields {
        head.extend_from_slice(f);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    let mut storage = vec![httparse::EMPTY_HEADER; fields.len()];
    let mut request = httparse::Request::new(&mut storage);
    match request.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(not_request_line()),
        Err(e) => {
            // Name the first header line that does not parse on its own.
            let bad = fields.iter().find(|f| {
                let mut one = b"GET / HTTP/1.1\r\n".to_vec();
                one.extend_from_slice(f);
                one.extend_from_slice(b"\r\n\r\n");
                let mut slot = [httparse::EMPTY_HEADER; 1];
                httparse::Request::new(&mut slot).parse(&one).is_err()
            });
            return Err(err(match bad {
                Some(l) => format!("{} is not a header line (Name: value): {e}", shown(l)),
                None => format!("the header section does not parse: {e}"),
            }));
        }
    }
    let method = request.method.unwrap_or_default().to_string();
    let target = request.path.unwrap_or_default().to_string();
    let mut headers: Vec<(String, String)> = Vec::with_capacity(request.headers.len());
    for h in request.headers.iter() {
        let value = std::str::from_utf8(h.value)
            .map_err(|e| err(format!("the value of header {} is not UTF-8: {e}", h.name)))?;
        headers.push((h.name.to_string(), value.trim().to_string()));
    }
    let path_and_query = if target.starts_with('/') || target.contains("://") {
        path_and_query_or_root(&target)
    } else {
        return Err(err(format!(
            "request target {target:?} is neither a path (/v1/...) nor an absolute URL"
        )));
    };
    let values = |name: &str| -> Vec<&str> {
        headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    };
    if !values("transfer-encoding").is_empty() {
        return Err(err(
            "Transfer-Encoding is not read: give the body plainly, with Content-Length".into(),
        ));
    }
    let mut body = &bytes[body_start..];
    let lengths = values("content-length");
    if let Some(first) = lengths.first() {
        if lengths.iter().any(|l| l != first) {
            return Err(err(format!(
                "Content-Length headers disagree: {}",
                lengths.join(", ")
            )));
        }
        let n: usize = first
            .parse()
            .map_err(|_| err(format!("Content-Length {first:?} is not a number")))?;
        if n > body.len() {
            return Err(err(format!(
                "Content-Length says {n} bytes, the body has {}",
                body.len()
            )));
        }
        body = &body[..n];
    }
    Ok(RecordedRequest {
        name: format!("http {method} {target}"),
        method,
        url: target,
        path_and_query,
        headers,
        body: body.to_vec(),
        sent_at: None,
        source: format!("raw HTTP in {source_name}"),
        response: None,
        clock: RecordedClock::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_http_requests_keep_headers_and_body_bytes() {
        let r = parse_raw_http(
            b"\r\nPOST /v1/x?a=%20b HTTP/1.1\nHost: bank\nX-Long: one \n  two\nContent-Length: 3\n\n{}\n\xff",
            "t",
        )
        .unwrap();
        assert_eq!(
            (r.method.as_str(), r.url.as_str()),
            ("POST", "/v1/x?a=%20b")
        );
        assert_eq!(r.path_and_query, "/v1/x?a=%20b");
        assert_eq!(
            r.headers,
            vec![
                ("Host".to_string(), "bank".to_string()),
                ("X-Long".to_string(), "one two".to_string()),
                ("Content-Length".to_string(), "3".to_string()),
            ]
        );
        assert_eq!(r.body, b"{}\n");
        assert_eq!(r.source, "raw HTTP in t");
        let whole = parse_raw_http(b"PUT /p HTTP/1.1\r\nA: b\r\n\r\n\x00\xff\r\n", "t").unwrap();
        assert_eq!(whole.body, b"\x00\xff\r\n");
        let no_body = parse_raw_http(b"GET /p HTTP/1.1\r\nA: b", "t").unwrap();
        assert!(no_body.body.is_empty());
        let absolute = parse_raw_http(b"GET https://b HTTP/1.1\r\n\r\n", "t").unwrap();
        assert_eq!(absolute.path_and_query, "/");
        for bad in [
            &b""[..],
            b"GET /p",
            b"GET /p FTP/1\r\n",
            b"GET  /p HTTP/1.1\r\n",
            b"GET * HTTP/1.1\r\n",
            b"GET /p HTTP/1.1\r\nno colon\r\n",
            b"GET /p HTTP/1.1\r\n  fold first\r\n",
            b"POST /p HTTP/1.1\r\nContent-Length: 9\r\n\r\n{}",
            b"POST /p HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
            b"POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        ] {
            assert!(
                parse_raw_http(bad, "t").is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let e = parse_raw_http(b"GET /p HTTP/1.1\r\nno colon\r\n", "t").unwrap_err();
        assert!(
            e.reason.contains("\"no colon\" is not a header line"),
            "{e}"
        );
    }

    #[test]
    fn har_entries_must_be_requests() {
        let read_har = |entries: &str| {
            read(
                format!(r#"{{"log": {{"entries": {entries}}}}}"#).as_bytes(),
                "h.har",
            )
        };
        for bad in [
            r#"[{"request": 42}]"#,
            r#"[{}]"#,
            r#"[{"request": {"method": "GET"}}]"#,
            r#"[{"request": {"method": "GET", "url": ""}}]"#,
            r#"[{"request": {"method": "GET", "url": "bank.example"}}]"#,
            r#"[{"request": {"method": "GET", "url": "/v1/x", "headers": [{"name": 1}]}}]"#,
            r#"[{"request": {"method": "GET", "url": "/v1/x", "headers": {}}}]"#,
            r#"[{"request": {"method": "POST", "url": "/v1/x", "postData": {"text": 7}}}]"#,
            r#"42"#,
        ] {
            assert!(read_har(bad).is_err(), "{bad}");
        }
        let e = read_har(r#"[{"request": 42}]"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "h.har: HAR entry 1: `request` is 42, not a request object"
        );
        let ok = read_har(
            r#"[{"startedDateTime": "2026-06-07T20:51:35Z", "request": {"method": "GET", "url": "https://b", "headers": [{"name": "Date", "value": "d"}]},
                 "response": {"status": 0}}]"#,
        )
        .unwrap();
        assert_eq!(ok.format, Format::Har);
        let r = &ok.requests[0];
        assert_eq!(r.path_and_query, "/");
        assert_eq!(r.source, "entry 1 of h.har");
        assert!(r.sent_at.is_some());
        assert!(r.response.is_none(), "status 0: no answer");
    }

    #[test]
    fn paths_of_urls() {
        assert_eq!(path_and_query_of("https://b/v1/x?q#frag"), Some("/v1/x?q"));
        assert_eq!(path_and_query_of("{{host}}/v1/x"), Some("/v1/x"));
        assert_eq!(path_and_query_of("https://b"), None);
        assert_eq!(path_and_query_or_root("https://b"), "/");
        assert_eq!(path_and_query_or_root("{{baseUrl}}"), "");
    }
}
