//! The sandbox's HTTP/1.1 server loop, with timeouts so that slow clients are cut off while
//! other requests are served (a hostile client trickling bytes must not hold a connection
//! for minutes). The interface document is silent; these are the usual limits of a web
//! server in front of an ASPSP (nginx: `client_header_timeout`, `client_body_timeout`,
//! `send_timeout`, `keepalive_timeout`):
//!
//! | Timeout | Value | What happens |
//! |---|---|---|
//! | header read | [`HEADER_READ_TIMEOUT`] (10 s) | the request line and headers must arrive within it, counted from the first moment the server waits for them; else the connection is closed (hyper's `header_read_timeout`, on one timer per connection). On a keep-alive connection the wait for the next request counts too, so it is also the keep-alive idle limit. |
//! | body read | [`BODY_READ_TIMEOUT`] (10 s) | the whole body must arrive within it, counted from the end of the headers; else `/v1` answers 400 `FORMAT_ERROR` and the SCA pages 408, and the connection is closed ([`body_in_time`]) |
//! | idle | [`IDLE_TIMEOUT`] (30 s) | a connection on which neither a read nor a write makes progress for that long is closed (a client that stops reading its response) ([`IdleIo`]) |

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

pub use crate::http_server::{
    HANDSHAKE_TIMEOUT, HEADER_READ_TIMEOUT, IDLE_TIMEOUT, IdleIo, serve, serve_tls,
};

use crate::sandbox::errors::ApiError;
use crate::sandbox::http::auth::{self, MAX_BODY_BYTES};
use crate::sandbox::http::pages;

/// Time for the whole request body, from the end of the headers.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The middleware reading each request body within [`BODY_READ_TIMEOUT`] (at most
/// [`MAX_BODY_BYTES`]). `next` runs the rest of the request ([`crate::sandbox::router`])
/// with the request's head and its whole body, collected here once: the signature check
/// and the handlers take these bytes instead of collecting the body again (a payment's body
/// was collected three times, issue 23).
///
/// A request without a body (its size known to be 0: every `GET`) gets `next`'s own future
/// with empty bytes, a request with one a boxed future that reads it first: the steps around
/// this one hold the small one by value (a read's whole future was ~5.9 KB, allocated and
/// copied per request, and the body read's timer and buffers were in it for every `GET`;
/// r18/reads).
pub fn body_in_time<F, Fut>(req: Request, next: F) -> impl Future<Output = Response>
where
    F: FnOnce(Parts, Bytes) -> Fut,
    Fut: Future<Output = Response>,
{
    use axum::body::HttpBody as _;
    use futures_util::future::Either;
    if req.body().size_hint().exact() == Some(0) {
        let (parts, _) = req.into_parts();
        Either::Left(next(parts, Bytes::new()))
    } else {
        Either::Right(Box::pin(read_body_then(req, next)))
    }
}

/// [`body_in_time`] for a request with a body.
async fn read_body_then<F, Fut>(req: Request, next: F) -> Response
where
    F: FnOnce(Parts, Bytes) -> Fut,
    Fut: Future<Output = Response>,
{
    let v1 = auth::is_v1(req.uri().path());
    let (parts, body) = req.into_parts();
    let read = tokio::time::timeout(
        BODY_READ_TIMEOUT,
        axum::body::to_bytes(body, MAX_BODY_BYTES),
    )
    .await;
    match read {
        Ok(Ok(bytes)) => next(parts, bytes).await,
        Ok(Err(_)) if v1 => ApiError::format(format!(
            "the request body could not be read or is larger than {MAX_BODY_BYTES} bytes"
        ))
        .into_response(),
        Ok(Err(_)) => pages::error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Request too large",
            "The form could not be read.",
        )
        .into_response(),
        Err(_) => {
            let secs = BODY_READ_TIMEOUT.as_secs();
            let mut r = if v1 {
                ApiError::format(format!(
                    "the request body did not arrive within {secs} s of the headers; the \
                     connection is closed"
                ))
                .into_response()
            } else {
                pages::error(
                    StatusCode::REQUEST_TIMEOUT,
                    "Too slow",
                    &format!("The form did not arrive within {secs} seconds. Please try again."),
                )
                .into_response()
            };
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            r
        }
    }
}
