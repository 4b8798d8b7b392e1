//! The sandbox's access log: one `tracing` event per answered request (target
//! [`ACCESS_TARGET`], level `info`, message `request`), with
//!
//! | field | value |
//! |---|---|
//! | `method` | request method |
//! | `path` | request path without the query (the query may carry PSU data) |
//! | `status` | response status code |
//! | `code` | the first `tppMessages` code of an error answer ([`ErrorCode`]), else `-` |
//! | `latency_us` | microseconds from the request reaching the router to the response head |
//! | `request_id` | the `X-Request-ID` header (at most [`MAX_REQUEST_ID_CHARS`] characters; `-` when absent or not visible ASCII) |
//! | `verify` | the signature-verification step that failed ([`VerifyStep`], e.g. `SignatureInvalid`, `DateSkew`), else `-` |
//!
//! The same place feeds the event stream ([`crate::sandbox::domain::events`]): when anybody is subscribed,
//! one `request` event per answered request (with the verification step and the rebuilt
//! signing string, and whether a fault answered) and one `sca` event per SCA page step; with
//! nobody subscribed nothing more than one counter read is done.
//!
//! In the text format every text value (`method`, `path`, `code`, `request_id`, `verify`) is
//! quoted and escaped (`request_id="abc status=200"`), numbers are bare: a value cannot add
//! a field for a logfmt reader.
//!
//! Where the line goes (stderr as text or JSON for `sandbox serve`, a file for the console)
//! and which lines are kept (`RUST_LOG`) is decided by the subscriber ([`crate::logging`]);
//! `sandbox serve`'s text format has the line written without the event
//! ([`crate::logging::access_line`], the same bytes and filter).
//! Headers other than `X-Request-ID`, bodies, certificates and `Signature` values are never
//! logged. A path holds URI characters only and the request id visible ASCII only (others
//! log as `-`), so a hostile client cannot write line breaks or terminal escapes into the log.

use std::time::Instant;

use axum::extract::Request;
use axum::response::Response;

use crate::sandbox::App;
use crate::sandbox::clock::rfc3339;
use crate::sandbox::domain::events::{self, Event, RequestEvent, ScaEvent};
use crate::signing::VerifyError;

/// The `tracing` target of access-log events (filter with `RUST_LOG=psd2_console::access=...`).
pub const ACCESS_TARGET: &str = "psd2_console::access";

/// Longest `X-Request-ID` logged, characters (a UUID has 36; longer values are cut).
pub const MAX_REQUEST_ID_CHARS: usize = 100;

pub use crate::sandbox::errors::ErrorCode;

/// The id of the fault rule that answered a request ([`crate::sandbox::http::faults`]), set as a response
/// extension by [`crate::sandbox::http::faults::mark`], read for the event stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injected(pub String);

/// The verification step that refused a request: the [`VerifyError`] variant's name (never
/// its text, which may quote header values). Set as a response extension by
/// `auth::verify_v1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyStep(pub String);

impl VerifyStep {
    /// The step of `err`: its variant name, e.g. `SignatureInvalid`.
    pub fn of(err: &VerifyError) -> Self {
        let debug = format!("{err:?}");
        let name: String = debug
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        VerifyStep(name)
    }
}

/// `X-Request-ID`, lower-cased at compile time (a `&str` name is parsed on every look-up).
pub(crate) const X_REQUEST_ID_NAME: axum::http::HeaderName =
    axum::http::HeaderName::from_static("x-request-id");

/// `X-Request-ID` as logged: visible ASCII only, at most [`MAX_REQUEST_ID_CHARS`]; `-` when
/// absent, empty or not visible ASCII.
fn request_id(value: Option<&axum::http::HeaderValue>) -> &str {
    value
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        // `to_str` passed: visible ASCII, one byte per character.
        .map_or("-", |v| &v[..v.len().min(MAX_REQUEST_ID_CHARS)])
}

/// A request extension set by [`log_request`] when the request's events will be sent
/// ([`publish`]: somebody listened when it came in): only then do the steps after it mark
/// the answer with its owner ([`events::Owner`], read by [`publish`] alone). The response's
/// extension map and its box were allocated per read for nothing while nobody listens
/// (issue 23).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Publishing;

/// Whether the request whose extensions are `extensions` has its events sent ([`Publishing`]).
pub fn publishing(extensions: &axum::http::Extensions) -> bool {
    extensions.get::<Publishing>().is_some()
}

/// What a `request` event needs of the request, kept only while somebody listens.
struct Seen {
    path_and_query: String,
    headers: axum::http::HeaderMap,
}

/// The middleware (run first by [`crate::sandbox::router`]; `next` runs the rest): runs the request, then emits
/// the access-log event (and the stream's events, [`publish`]).
pub async fn log_request<F, Fut>(app: &App, req: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let start = Instant::now();
    let method = req.method().clone();
    // Shared copies (reference counts on the request's bytes), not new strings.
    let uri = req.uri().clone();
    let path = uri.path();
    let request_id_value = req.headers().get(&X_REQUEST_ID_NAME).cloned();
    let request_id = request_id(request_id_value.as_ref());
    let seen = (app.events.listening() && path != "/v1/sandbox/events").then(|| Seen {
        path_and_query: uri
            .path_and_query()
            .map_or(path, |p| p.as_str())
            .to_string(),
        headers: req.headers().clone(),
    });
    let mut req = req;
    if seen.is_some() {
        // The steps after this one mark the answer's owner only for a request whose events
        // are sent ([`Publishing`]).
        req.extensions_mut().insert(Publishing);
    }
    let response = next(req).await;
    let latency_us = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
    let code = response
        .extensions()
        .get::<ErrorCode>()
        .map_or("-", |c| c.0.as_str());
    let verify = response
        .extensions()
        .get::<VerifyStep>()
        .map_or("-", |s| s.0.as_str());
    // Every text value is recorded as a `&str`, which the text format writes quoted and
    // escaped (`request_id="abc status=200"`) and the JSON format as a string, so no value
    // can forge a field for a logfmt reader (issue 20, finding 6). `sandbox serve`'s text
    // format takes the line without the event (the same bytes, `RUST_LOG` the same filter).
    let line = crate::logging::Access {
        method: method.as_str(),
        path,
        status: response.status().as_u16(),
        code,
        latency_us,
        request_id,
        verify,
    };
    if !crate::logging::access_line(&line) {
        tracing::info!(
            target: ACCESS_TARGET,
            method = line.method,
            path,
            status = line.status,
            code,
            latency_us,
            request_id,
            verify,
            "request"
        );
    }
    if let Some(seen) = seen {
        publish(
            app,
            method.as_str(),
            path,
            request_id,
            latency_us,
            seen,
            &response,
        );
    }
    response
}

/// Sends the `request` event of an answered request, and the `sca` event of an SCA page.
fn publish(
    app: &App,
    method: &str,
    path: &str,
    request_id: &str,
    latency_us: u64,
    seen: Seen,
    response: &Response,
) {
    let x = response.extensions();
    let code = x.get::<ErrorCode>().map(|c| c.0.clone());
    let fault = x.get::<Injected>().map(|f| f.0.clone());
    let status = response.status().as_u16();
    let owner = x.get::<events::Owner>().map(|o| &*o.0);
    let signing_string = (path == "/v1" || path.starts_with("/v1/"))
        .then(|| {
            events::rebuilt_signing_string(method, &seen.path_and_query, |n| {
                seen.headers.get(n).map(|v| v.to_str().ok())
            })
        })
        .flatten();
    app.events.emit(owner, || {
        Event::Request(RequestEvent {
            // The owner's own sandbox clock (issue 20), else the shared one.
            at: rfc3339(match owner {
                Some(o) => crate::cert::unix_seconds(app.clock.now_in(o)),
                None => app.clock.unix_secs(),
            }),
            method: method.to_string(),
            path: path.to_string(),
            status,
            code,
            latency_us,
            request_id: (request_id != "-").then(|| request_id.to_string()),
            verify: x.get::<VerifyStep>().map(|s| s.0.clone()),
            signing_string,
            injected: fault.is_some(),
            fault: fault.clone(),
        })
    });
    if let Some((sca_id, step)) = events::sca_step(method, path) {
        let location = response
            .headers()
            .get(axum::http::header::LOCATION)
            .and_then(|v| v.to_str().ok());
        let (outcome, code) = events::sca_outcome(location);
        app.events.emit(owner, || {
            Event::Sca(ScaEvent {
                sca_id,
                step,
                status,
                outcome,
                code,
                injected: fault.is_some(),
                fault,
            })
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sandbox serve`'s text format knows the access log by this target.
    #[test]
    fn the_log_format_knows_the_access_target() {
        assert_eq!(ACCESS_TARGET, crate::logging::ACCESS_LOG_TARGET);
    }

    /// Only a request marked by the access log (its events sent) has its answer marked
    /// with the owner.
    #[test]
    fn only_a_marked_request_is_publishing() {
        let mut x = axum::http::Extensions::new();
        assert!(!publishing(&x));
        x.insert(Publishing);
        assert!(publishing(&x));
    }

    #[test]
    fn verify_step_is_the_variant_name_without_its_text() {
        let e = VerifyError::SignatureInvalid {
            signing_string: "digest: SHA-256=secret".into(),
        };
        assert_eq!(VerifyStep::of(&e).0, "SignatureInvalid");
        assert_eq!(
            VerifyStep::of(&VerifyError::SignatureMissing).0,
            "SignatureMissing"
        );
        assert_eq!(
            VerifyStep::of(&VerifyError::DateInvalid("x".into())).0,
            "DateInvalid"
        );
    }
}
