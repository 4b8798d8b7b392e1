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
//! Where the line goes (stderr as text or JSON for `sandbox serve`, a file for the console)
//! and which lines are kept (`RUST_LOG`) is decided by the subscriber ([`crate::logging`]).
//! Headers other than `X-Request-ID`, bodies, certificates and `Signature` values are never
//! logged. A path holds URI characters only and the request id visible ASCII only (others
//! log as `-`), so a hostile client cannot write line breaks or terminal escapes into the log.

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

use crate::signing::VerifyError;

/// The `tracing` target of access-log events (filter with `RUST_LOG=psd2_console::access=...`).
pub const ACCESS_TARGET: &str = "psd2_console::access";

/// Longest `X-Request-ID` logged, characters (a UUID has 36; longer values are cut).
pub const MAX_REQUEST_ID_CHARS: usize = 100;

/// The Berlin Group code of an error answer, set as a response extension by
/// [`super::errors::ApiError`]'s `IntoResponse`, read by the access log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCode(pub String);

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

/// `X-Request-ID` as logged: visible ASCII only, at most [`MAX_REQUEST_ID_CHARS`].
fn request_id(req: &Request) -> String {
    req.headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map(|v| v.chars().take(MAX_REQUEST_ID_CHARS).collect())
        .unwrap_or_else(|| "-".to_string())
}

/// The middleware (installed outermost by [`super::router`]): runs the request, then emits
/// the access-log event.
pub async fn log_request(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let request_id = request_id(&req);
    let response = next.run(req).await;
    let latency_us = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
    let code = response
        .extensions()
        .get::<ErrorCode>()
        .map_or("-", |c| c.0.as_str());
    let verify = response
        .extensions()
        .get::<VerifyStep>()
        .map_or("-", |s| s.0.as_str());
    tracing::info!(
        target: ACCESS_TARGET,
        method = %method,
        path = %path,
        status = response.status().as_u16(),
        code,
        latency_us,
        request_id = %request_id,
        verify,
        "request"
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

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
