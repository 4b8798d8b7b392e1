//! The sandbox's HTTP/1.1 server loop, with timeouts so that slow clients are cut off while
//! other requests are served (a hostile client trickling bytes must not hold a connection
//! for minutes). The interface document is silent; these are the usual limits of a web
//! server in front of an ASPSP (nginx: `client_header_timeout`, `client_body_timeout`,
//! `send_timeout`, `keepalive_timeout`):
//!
//! | Timeout | Value | What happens |
//! |---|---|---|
//! | header read | [`HEADER_READ_TIMEOUT`] (10 s) | the request line and headers must arrive within it, counted from the first moment the server waits for them; else the connection is closed (hyper's `header_read_timeout`). On a keep-alive connection the wait for the next request counts too, so it is also the keep-alive idle limit. |
//! | body read | [`BODY_READ_TIMEOUT`] (10 s) | the whole body must arrive within it, counted from the end of the headers; else `/v1` answers 400 `FORMAT_ERROR` and the SCA pages 408, and the connection is closed ([`body_in_time`]) |
//! | idle | [`IDLE_TIMEOUT`] (30 s) | a connection on which neither a read nor a write makes progress for that long is closed (a client that stops reading its response) ([`IdleIo`]) |

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::auth::{self, MAX_BODY_BYTES};
use super::errors::ApiError;
use super::pages;

/// Time for the request line and headers (and for the next request on a keep-alive
/// connection).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Time for the whole request body, from the end of the headers.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest time without any progress reading or writing a connection.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves `app` on `listener` until `shutdown` completes; then stops accepting and lets open
/// connections finish their requests.
///
/// Errors: accepting fails for another reason than a transient one (too many open files,
/// connection reset before accept).
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) if is_transient(&e) => {
                    tracing::warn!(error = %e, "accept failed; continuing");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                Err(e) => return Err(e),
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .keep_alive(true);
        let conn =
            builder.serve_connection(TokioIo::new(IdleIo::new(stream, IDLE_TIMEOUT)), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    ) || e.raw_os_error().is_some_and(|c| c == 23 || c == 24) // ENFILE, EMFILE
}

/// The middleware reading each request body within [`BODY_READ_TIMEOUT`] (at most
/// [`MAX_BODY_BYTES`]); requests without a body pass untouched.
pub async fn body_in_time(req: Request, next: Next) -> Response {
    use axum::body::HttpBody as _;
    if req.body().size_hint().exact() == Some(0) {
        return next.run(req).await;
    }
    let v1 = auth::is_v1(req.uri().path());
    let (parts, body) = req.into_parts();
    let read = tokio::time::timeout(
        BODY_READ_TIMEOUT,
        axum::body::to_bytes(body, MAX_BODY_BYTES),
    )
    .await;
    match read {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
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

/// A connection that fails with `TimedOut` once neither reads nor writes have made progress
/// for its idle time while one of them is waiting.
pub struct IdleIo<T> {
    inner: T,
    idle: Duration,
    last_progress: Instant,
    sleep: Pin<Box<Sleep>>,
}

impl<T> IdleIo<T> {
    /// Wraps `inner` with the idle limit `idle`.
    pub fn new(inner: T, idle: Duration) -> Self {
        let now = Instant::now();
        IdleIo {
            inner,
            idle,
            last_progress: now,
            sleep: Box::pin(tokio::time::sleep_until(now + idle)),
        }
    }

    fn progress(&mut self) {
        self.last_progress = Instant::now();
    }

    /// Polls the inner IO with `op`: on ready, records progress when `counts` (reads and
    /// writes, not flushes); when pending, the idle check ([`IdleIo::poll_idle`]).
    fn watch<R>(
        &mut self,
        cx: &mut Context<'_>,
        counts: bool,
        op: impl FnOnce(Pin<&mut T>, &mut Context<'_>) -> Poll<std::io::Result<R>>,
    ) -> Poll<std::io::Result<R>>
    where
        T: Unpin,
    {
        match op(Pin::new(&mut self.inner), cx) {
            Poll::Ready(r) => {
                if counts {
                    self.progress();
                }
                Poll::Ready(r)
            }
            Poll::Pending => self.poll_idle(cx).map(Err),
        }
    }

    /// Called when the inner IO is pending: an error once the idle time has passed.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Error> {
        loop {
            let deadline = self.last_progress + self.idle;
            if self.sleep.deadline() != deadline {
                self.sleep.as_mut().reset(deadline);
            }
            ready!(self.sleep.as_mut().poll(cx));
            if self.last_progress + self.idle <= Instant::now() {
                return Poll::Ready(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "no progress on the connection",
                ));
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for IdleIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.get_mut()
            .watch(cx, true, |io, cx| io.poll_read(cx, buf))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for IdleIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.get_mut()
            .watch(cx, true, |io, cx| io.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.get_mut()
            .watch(cx, true, |io, cx| io.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.get_mut().watch(cx, false, |io, cx| io.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
