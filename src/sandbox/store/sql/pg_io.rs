//! A PostgreSQL connection driven on the caller's thread (issue 23, writes on PostgreSQL):
//! the socket is a non-blocking `std` socket, and [`PgIo::drive`] polls the caller's request
//! and tokio-postgres's [`tokio_postgres::Connection`] together, waiting for the socket with
//! `poll(2)` when neither can go on.
//!
//! Before, the connection ran on an I/O thread of its own (a one-thread tokio runtime) and the
//! caller waited with `block_on`: every round trip woke that thread to send, woke it again for
//! the answer and then woke the caller, three thread hops per round trip. A profile of the
//! sandbox during PostgreSQL payment creations had 40 % of its CPU in those I/O threads and
//! a further ~20 % in the scheduler's switches (`finish_task_switch`, wake-ups); BENCHMARKS.md,
//! "r14/writes". Now a round trip is the caller's `write`, one `poll` and its `read`.
//!
//! The store is synchronous and is called from tokio's worker threads (and the group commit's
//! writer thread): tokio's own runtime cannot be entered there, so the connection does not
//! use tokio's reactor at all. Nothing reads the socket between calls: a server that closed
//! the connection is noticed at the next use ([`PgIo::is_closed`] polls the connection once
//! without waiting), before a request is sent.

use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::NoTlsStream;

use super::Error;

/// The longest wait for the socket before the futures are polled again (a backstop: the
/// futures' own wake-ups and the socket's readiness end every wait that matters).
const WAIT_BACKSTOP_NS: i64 = 100_000_000;

/// The socket of one connection: TCP or a unix socket, non-blocking.
enum Socket {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

/// The socket shared by the connection (which reads and writes it) and the driver (which
/// waits for it).
struct Shared {
    socket: Socket,
    /// A write found the socket's buffer full: the driver waits for it to be writable too.
    write_blocked: AtomicBool,
}

impl Shared {
    fn fd(&self) -> BorrowedFd<'_> {
        match &self.socket {
            Socket::Tcp(s) => s.as_fd(),
            Socket::Unix(s) => s.as_fd(),
        }
    }

    fn read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        match &self.socket {
            Socket::Tcp(s) => (&*s).read(buf),
            Socket::Unix(s) => (&*s).read(buf),
        }
    }

    fn write(&self, buf: &[u8]) -> std::io::Result<usize> {
        match &self.socket {
            Socket::Tcp(s) => (&*s).write(buf),
            Socket::Unix(s) => (&*s).write(buf),
        }
    }

    fn shutdown(&self) -> std::io::Result<()> {
        match &self.socket {
            Socket::Tcp(s) => s.shutdown(std::net::Shutdown::Write),
            Socket::Unix(s) => s.shutdown(std::net::Shutdown::Write),
        }
    }
}

/// The non-blocking socket as tokio's `AsyncRead`/`AsyncWrite` for tokio-postgres. A call that
/// would block answers `Pending` WITHOUT arranging a wake-up: only [`PgIo::drive`], which
/// waits for the socket itself, polls it.
pub(crate) struct Stream(Arc<Shared>);

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        loop {
            match self.0.read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Poll::Pending,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        loop {
            match self.0.write(buf) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.0.write_blocked.store(true, Ordering::Relaxed);
                    return Poll::Pending;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        // A socket has no buffer of its own to flush.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        // The peer may be gone already: nothing more to do either way.
        let _ = self.0.shutdown();
        Poll::Ready(Ok(()))
    }
}

/// A waker that only records that it was woken: something inside the futures (a channel
/// between the client and the connection) can go on without the socket.
#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// tokio-postgres's connection over [`Stream`].
type Connection = tokio_postgres::Connection<Stream, NoTlsStream>;

/// One connection's I/O: its socket and tokio-postgres's connection state (`None` once it
/// ended: the server closed it, or it failed).
pub(crate) struct PgIo {
    shared: Arc<Shared>,
    conn: std::cell::RefCell<Option<Connection>>,
}

impl PgIo {
    /// Connects to `url` (`postgres://…` or key=value; TCP or a unix socket directory, the
    /// first host that answers) without TLS, and logs in; the client and its I/O.
    ///
    /// Errors: the URL does not parse, no host answers, or the server refuses the login.
    pub(crate) fn connect(url: &str) -> Result<(tokio_postgres::Client, PgIo), Error> {
        let config: tokio_postgres::Config = url.parse().map_err(Error::from)?;
        let socket = open(&config)?;
        let shared = Arc::new(Shared {
            socket,
            write_blocked: AtomicBool::new(false),
        });
        let io = PgIo {
            shared: shared.clone(),
            conn: std::cell::RefCell::new(None),
        };
        let (client, conn) = io.run(
            config.connect_raw(Stream(shared), tokio_postgres::NoTls),
            true,
        )??;
        *io.conn.borrow_mut() = Some(conn);
        Ok((client, io))
    }

    /// Runs `fut` (a request of this connection's client) to completion on this thread,
    /// driving the connection beside it; waits for the socket when neither can go on.
    ///
    /// Errors: the connection ended and `fut` still waits for it (its own error, e.g. "connection
    /// closed", is `fut`'s output when it has one), or waiting for the socket failed.
    pub(crate) fn drive<F: std::future::Future>(&self, fut: F) -> Result<F::Output, Error> {
        self.run(fut, false)
    }

    /// [`PgIo::drive`]; `opening`: `fut` is the login itself, which reads and writes the
    /// socket before there is a connection to drive.
    fn run<F: std::future::Future>(&self, fut: F, opening: bool) -> Result<F::Output, Error> {
        let mut fut = std::pin::pin!(fut);
        let flag = Arc::new(Flag::default());
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let mut conn = self.conn.borrow_mut();
        loop {
            flag.0.store(false, Ordering::Release);
            if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                return Ok(v);
            }
            let alive = match conn.as_mut() {
                Some(c) => match Pin::new(c).poll(&mut cx) {
                    Poll::Ready(r) => {
                        if let Err(e) = r {
                            tracing::warn!(error = %e, "PostgreSQL connection closed");
                        }
                        // Dropping it closes the client's channels: its requests fail.
                        *conn = None;
                        false
                    }
                    Poll::Pending => true,
                },
                None => opening,
            };
            // What the connection handed over (answers, room in a channel).
            if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                return Ok(v);
            }
            if flag.0.load(Ordering::Acquire) {
                continue;
            }
            if !alive {
                return Err(Error::Postgres("connection closed".into()));
            }
            self.wait()?;
        }
    }

    /// Waits until the socket is readable (or writable, when a write found it full), at
    /// most [`WAIT_BACKSTOP_NS`].
    fn wait(&self) -> Result<(), Error> {
        use rustix::event::{PollFd, PollFlags, Timespec};
        let mut flags = PollFlags::IN;
        if self.shared.write_blocked.swap(false, Ordering::Relaxed) {
            flags |= PollFlags::OUT;
        }
        let fd = self.shared.fd();
        let mut fds = [PollFd::from_borrowed_fd(fd, flags)];
        let backstop = Timespec {
            tv_sec: 0,
            tv_nsec: WAIT_BACKSTOP_NS,
        };
        match rustix::event::poll(&mut fds, Some(&backstop)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
            Err(e) => Err(Error::Postgres(format!("waiting for the server: {e}"))),
        }
    }

    /// Whether the connection ended. Polls it once without waiting first, so a connection
    /// the server closed since the last call (a restart) is found before a request is sent
    /// on it.
    pub(crate) fn is_closed(&self) -> bool {
        let mut conn = self.conn.borrow_mut();
        let Some(c) = conn.as_mut() else {
            return true;
        };
        let waker = Waker::from(Arc::new(Flag::default()));
        let mut cx = Context::from_waker(&waker);
        match Pin::new(c).poll(&mut cx) {
            Poll::Ready(_) => {
                *conn = None;
                true
            }
            Poll::Pending => false,
        }
    }
}

/// Opens a non-blocking socket to the first of `config`'s hosts that answers (TCP with
/// `TCP_NODELAY`, or the unix socket `.s.PGSQL.<port>` in a host that is a directory), by
/// tokio-postgres's own rule (`connect`): the i-th `hostaddr` when given, else the i-th
/// `host`; the i-th port, else the only one, else 5432.
///
/// Errors: no host given, host and hostaddr lists of different lengths, or none answers.
fn open(config: &tokio_postgres::Config) -> Result<Socket, Error> {
    let (hosts, addrs, ports) = (
        config.get_hosts(),
        config.get_hostaddrs(),
        config.get_ports(),
    );
    if !hosts.is_empty() && !addrs.is_empty() && hosts.len() != addrs.len() {
        return Err(Error::Postgres(format!(
            "the PostgreSQL URL has {} hosts and {} hostaddrs",
            hosts.len(),
            addrs.len()
        )));
    }
    let timeout = config.get_connect_timeout().copied();
    let mut last = Error::Postgres("no host in the PostgreSQL URL".into());
    for i in 0..hosts.len().max(addrs.len()) {
        let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
        let opened = match (addrs.get(i), hosts.get(i)) {
            (Some(ip), _) => tcp(&ip.to_string(), port, timeout),
            (None, Some(tokio_postgres::config::Host::Tcp(name))) => tcp(name, port, timeout),
            (None, Some(tokio_postgres::config::Host::Unix(dir))) => {
                std::os::unix::net::UnixStream::connect(dir.join(format!(".s.PGSQL.{port}")))
                    .and_then(|s| {
                        s.set_nonblocking(true)?;
                        Ok(Socket::Unix(s))
                    })
            }
            (None, None) => continue,
        };
        match opened {
            Ok(s) => return Ok(s),
            Err(e) => last = Error::Postgres(format!("connecting: {e}")),
        }
    }
    Err(last)
}

fn tcp(name: &str, port: u16, timeout: Option<std::time::Duration>) -> std::io::Result<Socket> {
    use std::net::ToSocketAddrs;
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "the host has no address");
    for addr in (name, port).to_socket_addrs()? {
        let s = match timeout {
            Some(t) => std::net::TcpStream::connect_timeout(&addr, t),
            None => std::net::TcpStream::connect(addr),
        };
        match s {
            Ok(s) => {
                s.set_nodelay(true)?;
                s.set_nonblocking(true)?;
                return Ok(Socket::Tcp(s));
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}
