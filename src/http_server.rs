//! The HTTP/1.1 server loop of the embedded sandbox and of the SCA callback listener, with
//! timeouts so that slow clients are cut off while other requests are served (a hostile
//! client trickling bytes must not hold a connection for minutes; in room mode both listen
//! on the network). The timeouts are described in [`crate::sandbox::http::serve`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Time for the request line and headers (and for the next request on a keep-alive
/// connection).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest time without any progress reading or writing a connection.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// Time for the whole TLS handshake of a connection ([`serve_tls`]), from its accept.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The certificate chain (leaf first, DER) a TLS client presented, in the request's
/// extensions of every request on that connection ([`serve_tls`] with client
/// authentication); absent on plain HTTP and when the client sent none.
#[derive(Debug, Clone)]
pub struct PeerCertificates(pub Arc<Vec<rustls::pki_types::CertificateDer<'static>>>);

/// What [`serve`] serves: a `tower` service answering every request (an axum `Router`, the
/// sandbox's [`crate::sandbox::http::router::Sandbox`]); cloned per connection and per request.
pub trait Served:
    tower_service::Service<
        hyper::Request<hyper::body::Incoming>,
        Response = axum::response::Response,
        Error = std::convert::Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> Served for S where
    S: tower_service::Service<
            hyper::Request<hyper::body::Incoming>,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + Sync
        + 'static
{
}

/// Serves `app` on `listener` until `shutdown` completes; then stops accepting and lets open
/// connections finish their requests.
///
/// Errors: accepting fails for another reason than a transient one (too many open files,
/// connection reset before accept).
pub async fn serve<S>(
    listener: tokio::net::TcpListener,
    app: S,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    S: Served,
{
    serve_tls(listener, app, None, shutdown).await
}

/// As [`serve`], over TLS when `tls` is given: each accepted connection's handshake runs in
/// its own task within [`HANDSHAKE_TIMEOUT`] (and the idle limit), so a client that never
/// finishes it holds nothing else up; a failed handshake closes the connection (logged at
/// debug level). The client's certificate chain, when it sent one, is in every request's
/// extensions as [`PeerCertificates`]. The header-read and idle timeouts and the graceful
/// shutdown are the same as over plain HTTP.
///
/// Errors: those of [`serve`].
pub async fn serve_tls<S>(
    listener: tokio::net::TcpListener,
    app: S,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    S: Served,
{
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
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
        let app = app.clone();
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(ConnectionTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .keep_alive(true);
        let io = IdleIo::new(stream, IDLE_TIMEOUT);
        let Some(acceptor) = tls.clone() else {
            let conn =
                builder.serve_connection(TokioIo::new(io), connection_service(app, peer, None));
            let conn = graceful.watch(conn);
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
            });
            continue;
        };
        // Shutdown waits for this watcher too, so a connection in its handshake is not cut.
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(io)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake did not finish in time");
                    return;
                }
            };
            let certs = match stream.get_ref().1.peer_certificates() {
                Some(chain) if !chain.is_empty() => {
                    Some(PeerCertificates(Arc::new(chain.to_vec())))
                }
                _ => None,
            };
            let conn = builder
                .serve_connection(TokioIo::new(stream), connection_service(app, peer, certs));
            if let Err(e) = watcher.watch(conn).await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The service of one connection: `app` with the connection's facts in every request's
/// extensions: the peer address of the socket (`ConnectInfo<SocketAddr>`, for handlers that
/// decide by it, the sandbox's operator plane) and, over TLS, the client's certificate chain
/// ([`PeerCertificates`]) when it sent one. Inserted per request in front of the router, not
/// by `Router::layer` (which re-wraps every route of the table per connection and adds a
/// boxed route call per request, issue 23).
fn connection_service<S: Served>(
    app: S,
    peer: std::net::SocketAddr,
    certs: Option<PeerCertificates>,
) -> impl hyper::service::Service<
    hyper::Request<hyper::body::Incoming>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future: Send,
> {
    let routed = TowerToHyperService::new(app);
    hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
        req.extensions_mut()
            .insert(axum::extract::ConnectInfo(peer));
        if let Some(c) = &certs {
            req.extensions_mut().insert(c.clone());
        }
        hyper::service::Service::call(&routed, req)
    })
}

/// hyper's timer for one connection (the header-read timeout, [`HEADER_READ_TIMEOUT`]): every
/// sleep hyper asks for waits on the connection's one tokio timer. hyper asks for a new sleep
/// per request (and drops it when the headers are in); with `TokioTimer` each one was a new
/// tokio timer, registered in the runtime's timer wheel and removed again per request (issue
/// 23). The deadlines hyper asks for only grow: a sleep whose deadline is later than the
/// timer's leaves the timer where it is and moves it to its own deadline only when the timer
/// fires first (so a busy keep-alive connection moves its timer about once per
/// [`HEADER_READ_TIMEOUT`], not per request: r18/reads); an earlier deadline moves the timer
/// at once. A deadline that passed while no sleep waited wakes the connection once, which
/// finds nothing to do.
#[derive(Clone)]
struct ConnectionTimer(Arc<std::sync::Mutex<Pin<Box<Sleep>>>>);

impl ConnectionTimer {
    fn new() -> Self {
        let far = Instant::now() + HEADER_READ_TIMEOUT;
        ConnectionTimer(Arc::new(std::sync::Mutex::new(Box::pin(
            tokio::time::sleep_until(far),
        ))))
    }
}

impl hyper::rt::Timer for ConnectionTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    /// The runtime's clock (as `TokioTimer`'s: paused in tests that pause it).
    fn now(&self) -> std::time::Instant {
        Instant::now().into_std()
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(ConnectionSleep {
            deadline: deadline.into(),
            timer: self.0.clone(),
        })
    }
}

/// One sleep of a [`ConnectionTimer`]: ready once its deadline has passed.
struct ConnectionSleep {
    deadline: Instant,
    timer: Arc<std::sync::Mutex<Pin<Box<Sleep>>>>,
}

impl Future for ConnectionSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // A poisoned lock still holds a usable timer (nothing in it can be half-updated).
        let mut sleep = self
            .timer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.deadline < sleep.deadline() {
            sleep.as_mut().reset(self.deadline);
        }
        loop {
            ready!(sleep.as_mut().poll(cx));
            // The timer fired at its own deadline: this sleep's too, unless it is later.
            if sleep.deadline() >= self.deadline {
                return Poll::Ready(());
            }
            sleep.as_mut().reset(self.deadline);
        }
    }
}

impl hyper::rt::Sleep for ConnectionSleep {}

fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    ) || e.raw_os_error().is_some_and(|c| c == 23 || c == 24) // ENFILE, EMFILE
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

    /// Called when the inner IO is pending: an error once the idle time has passed. The
    /// sleep stays at its deadline while progress moves the idle deadline later (it only
    /// grows); when it fires before that, it is moved to it then: one timer move per idle
    /// period on a busy connection instead of one per pending read (r18/reads).
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Error> {
        loop {
            ready!(self.sleep.as_mut().poll(cx));
            let deadline = self.last_progress + self.idle;
            if deadline > self.sleep.deadline() {
                self.sleep.as_mut().reset(deadline);
                continue;
            }
            if deadline <= Instant::now() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::rt::Timer as _;

    fn poll_once(sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>) -> Poll<()> {
        sleep
            .as_mut()
            .poll(&mut Context::from_waker(std::task::Waker::noop()))
    }

    /// The sleeps hyper takes of one connection's timer (one per request's headers, each
    /// dropped when the headers are in) end at their own deadlines, not at another's: a sleep
    /// is pending after an earlier sleep ended or was dropped, ends once its own deadline
    /// has passed, and an earlier deadline after a later one is kept too.
    #[tokio::test]
    async fn the_sleeps_of_a_connection_timer_end_at_their_own_deadlines() {
        let timer = ConnectionTimer::new();
        // The first request's headers come in: its sleep is dropped before its deadline.
        let mut first = timer.sleep(HEADER_READ_TIMEOUT);
        assert!(poll_once(&mut first).is_pending());
        drop(first);
        // A short sleep ends, and not before its deadline.
        let short = Duration::from_millis(20);
        let deadline = timer.now() + short;
        let mut ended = timer.sleep_until(deadline);
        (&mut ended).await;
        assert!(timer.now() >= deadline);
        // The next request's sleep waits for its own deadline, not the one that passed.
        let mut next = timer.sleep(HEADER_READ_TIMEOUT);
        assert!(poll_once(&mut next).is_pending());
        // One earlier than the timer's last ends at its own deadline; the later one still
        // waits for its own.
        let mut earlier = timer.sleep(short);
        tokio::time::timeout(Duration::from_secs(60), &mut earlier)
            .await
            .expect("the earlier sleep ended");
        assert!(poll_once(&mut next).is_pending());
    }

    /// A later sleep leaves the connection's timer at the earlier deadline it holds (no
    /// timer move per request) and still ends at its own deadline, not at the timer's.
    #[tokio::test]
    async fn a_later_sleep_moves_the_timer_only_when_the_timer_fires() {
        let timer = ConnectionTimer::new();
        let held = || timer.0.lock().unwrap().deadline();
        let first = Duration::from_millis(30);
        let mut a = timer.sleep(first);
        assert!(poll_once(&mut a).is_pending());
        let at = held();
        drop(a);
        let later = timer.now() + Duration::from_millis(90);
        let mut b = timer.sleep_until(later);
        assert!(poll_once(&mut b).is_pending());
        assert_eq!(
            held(),
            at,
            "a later deadline does not move the timer when polled"
        );
        tokio::time::timeout(Duration::from_secs(60), &mut b)
            .await
            .expect("the later sleep ended");
        assert!(timer.now() >= later, "it ended at its own deadline");
        assert!(
            held() >= later.into(),
            "the timer was moved to it when it fired"
        );
    }

    /// An `IdleIo` ends with `TimedOut` once no read or write made progress for its idle
    /// time, counted from the last progress: progress after its start moves the deadline
    /// without moving the timer (it moves when the timer fires), and the connection is not
    /// cut at the first deadline.
    #[tokio::test]
    async fn an_idle_connection_times_out_its_idle_time_after_the_last_progress() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let idle = Duration::from_millis(120);
        let (ours, mut theirs) = tokio::io::duplex(64);
        let start = Instant::now();
        let mut io = IdleIo::new(ours, idle);
        let first_deadline = io.sleep.deadline();
        tokio::time::sleep(Duration::from_millis(60)).await;
        theirs.write_all(b"x").await.unwrap();
        let mut byte = [0u8; 1];
        io.read_exact(&mut byte).await.unwrap();
        let progress = Instant::now();
        // Pending: the idle check runs, and leaves the timer where it was.
        let mut buf = [0u8; 1];
        let pending = std::future::poll_fn(|cx| {
            let mut rb = ReadBuf::new(&mut buf);
            Poll::Ready(Pin::new(&mut io).poll_read(cx, &mut rb).is_pending())
        })
        .await;
        assert!(pending);
        assert_eq!(
            io.sleep.deadline(),
            first_deadline,
            "the timer is not moved by progress"
        );
        let err = tokio::time::timeout(Duration::from_secs(60), io.read_exact(&mut buf))
            .await
            .expect("the idle connection timed out")
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert!(
            progress.elapsed() >= idle,
            "not before the idle time after the progress"
        );
        assert!(start.elapsed() >= Duration::from_millis(60) + idle);
    }
}
