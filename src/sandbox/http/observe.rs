//! An optional tap on every response the sandbox sends, for tests that check each body
//! (e.g. against the Berlin Group schemas) and for tools that log traffic.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;

/// One answered request as the observer sees it.
#[derive(Debug, Clone)]
pub struct ObservedExchange {
    /// The request method.
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// The query string, if any.
    pub query: Option<String>,
    /// The response status.
    pub status: u16,
    /// The response `Content-Type`.
    pub content_type: Option<String>,
    /// The response body.
    pub body: bytes::Bytes,
    /// The response headers as sent (name, value; values that are not visible ASCII are
    /// read lossily).
    pub headers: Vec<(String, String)>,
    /// The request's `X-Request-ID` (`None`: it had none, or a blank one), for the echo check of
    /// `crate::lint`.
    pub request_id: Option<String>,
}

/// A callback run for every response (`SandboxConfig::observer`).
#[derive(Clone)]
pub struct ResponseObserver(pub Arc<dyn Fn(&ObservedExchange) + Send + Sync>);

impl std::fmt::Debug for ResponseObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResponseObserver")
    }
}

/// The body as the client reads it: gzip-decoded when `Content-Encoding: gzip` (bodies that
/// fail to decode are handed over as sent, so the observer reports them).
fn decoded(headers: &axum::http::HeaderMap, body: &bytes::Bytes) -> bytes::Bytes {
    let gzip = headers
        .get(axum::http::header::CONTENT_ENCODING)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"gzip"));
    if !gzip {
        return body.clone();
    }
    use std::io::Read;
    let mut out = Vec::new();
    match flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut out) {
        Ok(_) => out.into(),
        Err(_) => body.clone(),
    }
}

/// Marks a response the observer passes on untouched (neither buffered nor reported): the
/// endless event stream ([`crate::sandbox::domain::events`]) and a connection a fault drops
/// ([`crate::sandbox::http::faults`]).
#[derive(Debug, Clone, Copy)]
pub struct Unobserved;

/// Most bytes of a response body buffered for the observer.
pub const MAX_OBSERVED_BYTES: usize = 64 * 1024 * 1024;

/// Runs `next` (the rest of the request, [`crate::sandbox::router`]) and hands the exchange
/// to `observer`.
pub(crate) async fn observe<F, Fut>(observer: &ResponseObserver, req: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let query = req.uri().query().map(str::to_string);
    let request_id = req
        .headers()
        .get(crate::xs2a::headers::X_REQUEST_ID)
        .filter(|v| !v.as_bytes().trim_ascii().is_empty())
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let response = next(req).await;
    if response.extensions().get::<Unobserved>().is_some() {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_OBSERVED_BYTES)
        .await
        .unwrap_or_default();
    let exchange = ObservedExchange {
        method,
        path,
        query,
        status: parts.status.as_u16(),
        content_type: parts
            .headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        body: decoded(&parts.headers, &bytes),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        request_id,
    };
    (observer.0)(&exchange);
    Response::from_parts(parts, Body::from(bytes))
}
