//! Faithful replay of a recorded request (issue 11, "Faithful replay"): `send --as-given
//! FILE` and `import FILE --as-given --send`.
//!
//! A request recorded elsewhere (a HAR entry, a cURL command, raw HTTP text; read by
//! [`super::recorded::read`], the reader the doctor uses too) is sent to the chosen profile's target with every
//! header and the exact body bytes it was recorded with. Only the host changes (the path and
//! query are kept exactly as written), and, unless the signature is kept
//! ([`SignatureMode::Keep`]), `Date`, `Digest`, `TPP-Signature-Certificate` and `Signature`
//! are made again with the profile's certificate and key, in the places the recorded
//! request had them: a support engineer reproduces a customer's request with the console's
//! test certificate standing in for the customer's. [`SignatureMode::Keep`] sends the
//! request byte for byte (a stale `Date` then reproduces `TIMESTAMP_INVALID`, a tampered
//! body `SIGNATURE_INVALID`).
//!
//! The history records the profile, the source and the headers changed ([`ReplayInfo`]);
//! the `Signature` value is stored redacted as for every exchange.

use super::engine::{Engine, HistoryWriteError};
use super::history::ReplayInfo;
use super::recorded::{Format, RecordedRequest};
use super::{ClientError, Exchange, PreparedRequest, RequestContext, send_for_profile};
use crate::signing::{SignOptions, SignatureInspection, SignatureParams, sign_request};
use crate::xs2a::headers as h;

/// What happens to the recorded signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignatureMode {
    /// Make `Date`, `Digest`, `TPP-Signature-Certificate` and `Signature` again with the
    /// profile's credentials at the signing instant (`send --as-given`).
    #[default]
    Remake,
    /// Keep every header as recorded, the signature too (`--keep-signature`).
    Keep,
}

/// Headers made again in [`SignatureMode::Remake`] (lower case; the recorded request's
/// spelling is kept).
pub(crate) const REMADE_HEADERS: [&str; 4] =
    ["date", "digest", "tpp-signature-certificate", "signature"];

/// Headers of the connection, not of the request: the HTTP client sets them for the target
/// (`Host` from the profile's URL, `Content-Length` from the body), so recorded values are
/// not sent. Pseudo-headers of HTTP/2 HAR files (`:authority`, `:path`, ...) are left out
/// too.
pub(crate) const CONNECTION_HEADERS: [&str; 5] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
];

/// A recorded request prepared for a replay as given.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The request to send (the operation id of the catalogue its method and path fit, e.g.
    /// `accounts.list`, else `raw`; no parameters): method, path and query as recorded, the
    /// profile's base URL, the headers in recorded order, the exact body.
    pub request: PreparedRequest,
    /// Source and changed headers, as the history stores them.
    pub info: ReplayInfo,
    /// The signature mode it was prepared with.
    pub mode: SignatureMode,
}

impl Replay {
    /// One line for the user: `as given with profile "P": changed Host, Date, ...` (or
    /// `nothing changed`), naming the kept signature; control characters of the recorded
    /// header names escaped ([`crate::terminal::escape_controls`]).
    pub fn describe(&self, profile: &str) -> String {
        let kept = match self.mode {
            SignatureMode::Keep => ", signature kept",
            SignatureMode::Remake => "",
        };
        let changed = if self.info.changed_headers.is_empty() {
            "nothing changed".to_string()
        } else {
            // Header names come from the file: each stays one field of the line.
            let names: Vec<_> = self
                .info
                .changed_headers
                .iter()
                .map(|n| crate::terminal::escape_controls(n))
                .collect();
            format!("changed {}", names.join(", "))
        };
        format!(
            "{}: as given with profile {profile:?}{kept}: {changed}",
            self.info.replay_of
        )
    }
}

fn is_one_of(name: &str, list: &[&str]) -> bool {
    list.iter().any(|l| l.eq_ignore_ascii_case(name))
}

/// The authority (`host:port`) of a base URL such as `http://127.0.0.1:40123`.
fn authority(base_url: &str) -> &str {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

/// Prepares `recorded` (request `source`, e.g. `capture.har#2`) for a replay as given to
/// `ctx.base_url`, signed with `ctx.credentials` at `ctx.now` (with `(request-target)` when
/// the profile asks) unless `mode` keeps the signature.
///
/// Changed headers ([`ReplayInfo::changed_headers`], in recorded spelling): `Host` when the
/// recorded value is not the target's authority, or when there is none and the recorded
/// URL's authority is not the target's (a HAR entry or cURL command without a `Host` header
/// still went to its URL's host; a raw request without one, to an unknown host); `Content-Length` when it did not match the
/// body; `Transfer-Encoding`, `Connection`, `Keep-Alive` when present (the client sets
/// these); with [`SignatureMode::Remake`] each of [`REMADE_HEADERS`] whose value changed,
/// was added (`Date`, `Digest` when missing) or left out (`Digest` of an empty body).
///
/// Errors: [`ClientError::Params`] when the URL has no path.
pub fn prepare_as_given(
    recorded: &RecordedRequest,
    source: &str,
    ctx: &RequestContext<'_>,
    mode: SignatureMode,
) -> Result<Replay, ClientError> {
    if recorded.path_and_query.is_empty() {
        return Err(ClientError::Params(format!(
            "{:?} has no path to send",
            recorded.url
        )));
    }
    let path_and_query = recorded.path_and_query.clone();
    let mut changed: Vec<String> = Vec::new();
    let target = authority(ctx.base_url);
    if crate::xs2a::headers::find(&recorded.headers, "host").is_none()
        && (!recorded.url.contains("://") || authority(&recorded.url) != target)
    {
        changed.push("Host".into());
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    for (n, v) in &recorded.headers {
        if n.starts_with(':') {
            continue;
        }
        if !is_one_of(n, &CONNECTION_HEADERS) {
            headers.push((n.clone(), v.clone()));
            continue;
        }
        let same = if n.eq_ignore_ascii_case("host") {
            v == target
        } else if n.eq_ignore_ascii_case("content-length") {
            v.parse::<usize>().ok() == Some(recorded.body.len())
        } else {
            false
        };
        if !same && !changed.iter().any(|c| c.eq_ignore_ascii_case(n)) {
            changed.push(n.clone());
        }
    }
    let find = |hs: &[(String, String)], name: &str| {
        crate::xs2a::headers::find(hs, name).map(str::to_string)
    };
    // A kept Signature was signed when it was recorded; a remade one now, at `ctx.now`.
    let signed_for = matches!(mode, SignatureMode::Remake).then(|| ctx.signed_for());
    let inspection = match mode {
        SignatureMode::Keep => {
            let signature = find(&headers, h::SIGNATURE).unwrap_or_default();
            let params = SignatureParams::parse(&signature).ok();
            SignatureInspection {
                digest: find(&headers, h::DIGEST),
                signing_string: String::new(),
                key_id: params
                    .as_ref()
                    .map(|p| p.key_id.clone())
                    .unwrap_or_default(),
                signed_headers: params.map(|p| p.headers).unwrap_or_default(),
                signature_header: signature,
                added_headers: Vec::new(),
            }
        }
        SignatureMode::Remake => {
            let before = headers.clone();
            let mut signed: Vec<(String, String)> = before
                .iter()
                .filter(|(n, _)| !is_one_of(n, &REMADE_HEADERS))
                .cloned()
                .collect();
            let inspection = sign_request(
                ctx.credentials,
                &recorded.method,
                &path_and_query,
                &mut signed,
                &recorded.body,
                SignOptions {
                    request_target: ctx.profile.sign_request_target,
                    now: ctx.now,
                },
            );
            let made = |name: &str| find(&inspection.added_headers, name);
            // The recorded order and spelling, with the values made now; headers made now
            // that the recording lacked go last, in signing order.
            headers = Vec::with_capacity(signed.len());
            let mut placed: Vec<&str> = Vec::new();
            for (n, v) in &before {
                let Some(&r) = REMADE_HEADERS.iter().find(|r| r.eq_ignore_ascii_case(n)) else {
                    headers.push((n.clone(), v.clone()));
                    continue;
                };
                match made(r) {
                    Some(new) if !placed.contains(&r) => {
                        if &new != v {
                            changed.push(n.clone());
                        }
                        headers.push((n.clone(), new));
                        placed.push(r);
                    }
                    _ => changed.push(n.clone()),
                }
            }
            for (n, v) in &inspection.added_headers {
                if !placed.iter().any(|p| p.eq_ignore_ascii_case(n)) {
                    changed.push(n.clone());
                    headers.push((n.clone(), v.clone()));
                }
            }
            inspection
        }
    };
    Ok(Replay {
        request: PreparedRequest {
            operation_id: super::operation_id_of(&recorded.method, &path_and_query),
            params: Vec::new(),
            method: recorded.method.clone(),
            url: format!("{}{}", ctx.base_url, path_and_query),
            path_and_query,
            headers,
            body: recorded.body.clone(),
            inspection,
            signed_for,
        },
        info: ReplayInfo {
            replay_of: source.to_string(),
            changed_headers: changed,
        },
        mode,
    })
}

/// Sends a replay with `engine` (its HTTP client and profile), records it in the history
/// with its [`ReplayInfo`] (best effort, as [`Engine::send_recorded`]) and arms the SCA
/// callback listener when the answer carries a `scaRedirect`.
///
/// Errors: those of [`send_for_profile`]; the history outcome is the second value.
pub async fn send_replay(
    engine: &Engine,
    replay: &Replay,
) -> Result<(Exchange, Result<i64, HistoryWriteError>), ClientError> {
    let exchange =
        send_for_profile(&engine.http, &replay.request, Some(&engine.profile.name)).await?;
    let recorded = record(engine, replay, &exchange);
    if let Some(href) = exchange.sca_redirect() {
        engine.expect_sca(&replay.request, &exchange, &href);
    }
    Ok((exchange, recorded))
}

/// [`Engine::record`] for a replay: the same errors, with the replay columns filled.
fn record(engine: &Engine, replay: &Replay, exchange: &Exchange) -> Result<i64, HistoryWriteError> {
    let path = engine.paths.history_file();
    let history = engine.history.as_ref().ok_or_else(|| {
        HistoryWriteError::NotOpen(
            engine
                .history_error
                .clone()
                .unwrap_or_else(|| format!("history {} is not open", path.display())),
        )
    })?;
    let history = history.lock().map_err(|_| HistoryWriteError::Poisoned)?;
    history
        .record_replay(
            &engine.profile.name,
            &replay.request,
            exchange,
            &replay.info,
        )
        .map_err(|source| HistoryWriteError::Write {
            message: super::history::describe_open_error(&path, &source),
            source,
        })
}

/// Reads `file` for a replay as given ([`super::recorded::read`]: a HAR file, cURL commands
/// or raw HTTP) and names each request by its source: `FILE#N` (1-based).
///
/// Errors: the file cannot be read ([`ReplayFileError::Read`]), is a Postman collection (it
/// holds templates, not recorded requests) or holds no request that can be replayed
/// ([`ReplayFileError::Import`]).
pub fn read_file(
    file: &std::path::Path,
) -> Result<Vec<(String, RecordedRequest)>, ReplayFileError> {
    let bytes = std::fs::read(file).map_err(|source| ReplayFileError::Read {
        path: file.to_path_buf(),
        source,
    })?;
    let shown = file.display().to_string();
    let recording = super::recorded::read(&bytes, &shown)?;
    if recording.format == Format::Postman {
        return Err(ReplayFileError::Import(super::import::ImportError {
            source_name: shown,
            reason: "a Postman collection holds templates, not recorded requests: a replay as given reads HAR, cURL or raw HTTP".into(),
        }));
    }
    Ok(recording
        .requests
        .into_iter()
        .enumerate()
        .map(|(i, r)| (format!("{shown}#{}", i + 1), r))
        .collect())
}

/// Why a file could not be read for a replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayFileError {
    /// The file could not be read.
    #[error("reading {}: {source}", .path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Not a HAR, cURL or raw HTTP file, or a malformed one.
    #[error(transparent)]
    Import(#[from] super::import::ImportError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authority_is_host_and_port() {
        assert_eq!(authority("http://127.0.0.1:4000"), "127.0.0.1:4000");
        assert_eq!(authority("https://bank.example/base"), "bank.example");
        assert_eq!(authority("/v1/x"), "");
    }
}
