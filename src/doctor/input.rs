//! Reading a recorded request for the doctor: a HAR 1.2 file (an entry's request and its
//! `startedDateTime`), a cURL command, a Postman item (all three through
//! [`crate::client::import::import_verbatim`], which keeps the signing headers), raw HTTP
//! text (request line, headers, a blank line, the body bytes), or a history entry.

use std::time::SystemTime;

use crate::client::history::HistoryEntry;
use crate::client::import::{ImportError, import_verbatim};

use super::{RecordedClock, RecordedRequest};

/// Why a recorded request could not be read (the `doctor` command exits 2).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file (or standard input) could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A HAR, cURL or Postman text that does not import.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// Not a request in any of the formats read.
    #[error("{source_name}: {reason}")]
    Format { source_name: String, reason: String },
    /// `--entry N` beyond the requests of the file.
    #[error("{source_name} holds {count} request(s): there is no entry {entry}")]
    NoEntry {
        source_name: String,
        entry: usize,
        count: usize,
    },
}

/// Reads the `entry`-th (1-based) request of `bytes`: JSON (HAR, Postman), a cURL command
/// (first line that is not a comment starts with `curl`), or raw HTTP.
///
/// Errors: [`InputError`] for text in none of these forms or an entry that does not exist.
pub fn parse(bytes: &[u8], source_name: &str, entry: usize) -> Result<RecordedRequest, InputError> {
    let format_error = |reason: &str| InputError::Format {
        source_name: source_name.to_string(),
        reason: reason.to_string(),
    };
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let first_line = std::str::from_utf8(bytes)
        .ok()
        .and_then(|t| {
            t.lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'))
        })
        .unwrap_or_default();
    if bytes.get(start) == Some(&b'{') || first_line.starts_with("curl") {
        let text = std::str::from_utf8(bytes).map_err(|_| format_error("not UTF-8 text"))?;
        let requests = import_verbatim(text, source_name)?;
        let count = requests.len();
        let chosen = entry
            .checked_sub(1)
            .and_then(|i| requests.into_iter().nth(i))
            .ok_or_else(|| InputError::NoEntry {
                source_name: source_name.to_string(),
                entry,
                count,
            })?;
        let kind = if first_line.starts_with("curl") {
            "cURL command"
        } else {
            "entry"
        };
        return Ok(RecordedRequest {
            method: chosen.method,
            path_and_query: path_and_query(&chosen.url).to_string(),
            headers: chosen
                .headers
                .into_iter()
                .filter(|(n, _)| !n.starts_with(':'))
                .collect(),
            body: chosen.body.map(String::into_bytes).unwrap_or_default(),
            sent_at: har_started(text, entry),
            source: format!("{kind} {entry} of {source_name}"),
            response: har_response(text, entry),
            clock: har_clock(text, entry),
        });
    }
    raw_http(&bytes[start..], source_name).ok_or_else(|| {
        format_error(
            "neither a HAR file, a cURL command, a Postman collection nor raw HTTP (a request \
             line such as `GET /v1/accounts HTTP/1.1`, headers, a blank line, the body)",
        )
    })
}

/// The `startedDateTime` (RFC 3339) of HAR entry `entry` (1-based), when the text is a HAR
/// file that has one.
fn har_started(text: &str, entry: usize) -> Option<SystemTime> {
    let doc: serde_json::Value = serde_json::from_str(text).ok()?;
    let started = doc["log"]["entries"]
        .get(entry.checked_sub(1)?)?
        .get("startedDateTime")?
        .as_str()?;
    chrono::DateTime::parse_from_rfc3339(started)
        .ok()
        .map(SystemTime::from)
}

/// The signing clock of HAR entry `entry` (1-based): its `_signedAt` (RFC 3339) and
/// `_sandboxClockOffset` (seconds), the custom fields of the console's HAR export
/// ([`crate::client::export::har`]).
fn har_clock(text: &str, entry: usize) -> RecordedClock {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return RecordedClock::default();
    };
    let Some(e) = entry
        .checked_sub(1)
        .and_then(|i| doc["log"]["entries"].get(i))
    else {
        return RecordedClock::default();
    };
    RecordedClock {
        signed_at: e[crate::client::export::HAR_SIGNED_AT]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(SystemTime::from),
        offset_secs: e[crate::client::export::HAR_CLOCK_OFFSET].as_i64(),
    }
}

/// The `response` of HAR entry `entry` (1-based): status, headers and `content.text`, when
/// the text is a HAR file whose entry has a status.
fn har_response(text: &str, entry: usize) -> Option<super::RecordedResponse> {
    let doc: serde_json::Value = serde_json::from_str(text).ok()?;
    let r = doc["log"]["entries"]
        .get(entry.checked_sub(1)?)?
        .get("response")?;
    let status = u16::try_from(r.get("status")?.as_u64()?).ok()?;
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
    Some(super::RecordedResponse {
        status,
        headers,
        body,
    })
}

/// The path and query of `url` (an absolute URL or already a path), byte for byte.
fn path_and_query(url: &str) -> &str {
    match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map(|i| &rest[i..]).unwrap_or("/"),
        None => url,
    }
}

/// Raw HTTP: `METHOD TARGET [HTTP/x]`, `Name: value` lines, a blank line (CRLF or LF), and
/// the body bytes as they are. `None` when the first line is not a request line.
fn raw_http(bytes: &[u8], source_name: &str) -> Option<RecordedRequest> {
    let (head_end, body_start) = [&b"\r\n\r\n"[..], b"\n\n"]
        .iter()
        .filter_map(|sep| memchr::memmem::find(bytes, sep).map(|i| (i, i + sep.len())))
        .min()
        .unwrap_or((bytes.len(), bytes.len()));
    let head = std::str::from_utf8(&bytes[..head_end]).ok()?;
    let mut lines = head.lines();
    let mut request_line = lines.next()?.split_whitespace();
    let method = request_line.next()?;
    let target = request_line.next()?;
    let valid_method = !method.is_empty() && method.bytes().all(|b| b.is_ascii_alphabetic());
    let valid_version = request_line.next().is_none_or(|v| v.starts_with("HTTP/"));
    if !valid_method || !valid_version || !(target.starts_with('/') || target.contains("://")) {
        return None;
    }
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_string(), value.trim_start().to_string()));
    }
    Some(RecordedRequest {
        method: method.to_ascii_uppercase(),
        path_and_query: path_and_query(target).to_string(),
        headers,
        body: bytes[body_start..].to_vec(),
        sent_at: None,
        source: format!("raw HTTP in {source_name}"),
        response: None,
        clock: RecordedClock::default(),
    })
}

/// A history entry as a recorded request (its `Signature` is redacted: the signature checks
/// say so instead of failing).
pub fn from_history(entry: &HistoryEntry) -> RecordedRequest {
    RecordedRequest {
        method: entry.method.clone(),
        path_and_query: entry.path_and_query.clone(),
        headers: entry.request_headers.clone(),
        body: entry.request_body.clone(),
        sent_at: Some(crate::cert::from_unix_seconds(entry.at)),
        source: format!("history entry {} ({})", entry.id, entry.profile),
        response: Some(super::RecordedResponse {
            status: entry.status,
            headers: entry.response_headers.clone(),
            body: entry.response_body.clone(),
        }),
        clock: RecordedClock {
            signed_at: entry.signed_at.map(crate::cert::from_unix_seconds),
            offset_secs: entry.clock_offset_secs,
        },
    }
}
