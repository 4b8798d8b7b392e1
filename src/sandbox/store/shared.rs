//! What the instances on one PostgreSQL database share besides its tables (issue 21: many
//! `sandbox serve --db postgres://…` instances behave as one sandbox):
//!
//! - [`exclusive`]: a lock held across processes (a session-level `pg_advisory_lock` on a
//!   connection kept for it), for work that reads before its write transaction and must not
//!   interleave with the same work on another instance (payment execution:
//!   [`crate::sandbox::domain::settlement::execution_lock`]).
//! - [`Bus`]: a channel of text messages between the instances (PostgreSQL's
//!   `LISTEN`/`NOTIFY` on one connection of its own): the event stream of every instance
//!   carries what the others served ([`crate::sandbox::domain::events`]). A `NOTIFY` is
//!   delivered to every connection listening when its transaction commits, in commit order;
//!   a message is at most [`MAX_PAYLOAD`] bytes (PostgreSQL's limit is 8000).
//!
//! SQLite has neither: one process owns its file, and the in-process locks and channel are
//! enough there.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures_util::StreamExt;
use tokio_postgres::AsyncMessage;

use crate::sandbox::store::sql::{self, PgSession};

/// Longest message of the [`Bus`], bytes (PostgreSQL refuses a `NOTIFY` payload of 8000
/// bytes or more).
pub const MAX_PAYLOAD: usize = 7900;

/// Messages waiting to be sent before new ones are dropped (the sender never waits).
pub const BUS_QUEUE: usize = 16_384;

/// A lock connection (opened when first needed, reopened when closed).
type LockSession = Arc<Mutex<Option<PgSession>>>;

/// The lock sessions, one per database URL in this process.
fn lock_sessions() -> &'static Mutex<HashMap<String, LockSession>> {
    static S: OnceLock<Mutex<HashMap<String, LockSession>>> = OnceLock::new();
    S.get_or_init(Default::default)
}

fn session_of(url: &str) -> Arc<Mutex<Option<PgSession>>> {
    let mut m = lock_sessions().lock().unwrap_or_else(|p| p.into_inner());
    m.entry(url.to_string()).or_default().clone()
}

/// A held cross-instance lock ([`exclusive`]): released when dropped.
#[derive(Debug)]
pub struct SessionLock {
    session: Arc<Mutex<Option<PgSession>>>,
    key: i64,
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        let guard = self.session.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = guard.as_ref()
            && let Err(e) = s.batch(&format!("SELECT pg_advisory_unlock({})", self.key))
        {
            // The server releases it when the connection ends.
            tracing::warn!(error = %e, "releasing a PostgreSQL advisory lock failed");
        }
    }
}

/// Takes the advisory lock `key` of the database at `url` for this process, waiting while
/// another instance holds it. The caller serializes its own threads first (a session-level
/// advisory lock is re-entrant within its connection, which this process's threads share).
///
/// Errors: the database cannot be reached.
pub fn exclusive(url: &str, key: i64) -> sql::Result<SessionLock> {
    let session = session_of(url);
    {
        let mut guard = session.lock().unwrap_or_else(|p| p.into_inner());
        let s = PgSession::live(&mut guard, url)?;
        s.batch(&format!("SELECT pg_advisory_lock({key})"))?;
    }
    Ok(SessionLock { session, key })
}

/// A channel between the instances on one database (see the module documentation): messages
/// published here reach the `on_message` of every instance's bus on the same channel, this
/// one's included (the caller tells its own apart).
#[derive(Debug)]
pub struct Bus {
    tx: tokio::sync::mpsc::Sender<String>,
}

impl Bus {
    /// Connects to `url`, listens on `channel` (an SQL identifier of letters and `_`) and
    /// returns once the listening is in place, so every message published after it is
    /// received. A thread of its own runs the connection: it hands each message received to
    /// `on_message`, sends the published ones (many per round trip), reconnects after a
    /// failure (messages of the gap are lost) and ends when the bus is dropped.
    ///
    /// Errors: the first connection fails.
    pub fn start(
        url: &str,
        channel: &'static str,
        on_message: impl Fn(&str) + Send + Sync + 'static,
    ) -> sql::Result<Bus> {
        let (tx, rx) = tokio::sync::mpsc::channel::<String>(BUS_QUEUE);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<sql::Result<()>>();
        let url = url.to_string();
        std::thread::Builder::new()
            .name("postgres-bus".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(sql::Error::Other(format!("bus thread: {e}"))));
                        return;
                    }
                };
                rt.block_on(run_bus(url, channel, on_message, rx, ready_tx));
            })
            .map_err(|e| sql::Error::Other(format!("bus thread: {e}")))?;
        ready_rx
            .recv()
            .map_err(|_| sql::Error::Other("the bus thread ended".into()))??;
        Ok(Bus { tx })
    }

    /// Queues `payload` for every instance; never waits (dropped, with a warning, when
    /// [`BUS_QUEUE`] messages are waiting or it is longer than [`MAX_PAYLOAD`]).
    pub fn publish(&self, payload: String) {
        if payload.len() > MAX_PAYLOAD {
            tracing::warn!(
                bytes = payload.len(),
                "an event too long for NOTIFY was not shared"
            );
            return;
        }
        if self.tx.try_send(payload).is_err() {
            tracing::warn!("the event bus is full; an event was not shared");
        }
    }
}

/// `payload` as an SQL string literal (standard strings: a quote doubled).
fn literal(payload: &str) -> String {
    format!("'{}'", payload.replace('\'', "''"))
}

async fn run_bus(
    url: String,
    channel: &'static str,
    on_message: impl Fn(&str) + Send + Sync + 'static,
    mut rx: tokio::sync::mpsc::Receiver<String>,
    ready: std::sync::mpsc::Sender<sql::Result<()>>,
) {
    let on_message = Arc::new(on_message);
    let mut ready = Some(ready);
    loop {
        let connected = async {
            let (client, mut connection) =
                tokio_postgres::connect(&url, tokio_postgres::NoTls).await?;
            let on = on_message.clone();
            let driver = tokio::spawn(async move {
                let mut messages =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                while let Some(m) = messages.next().await {
                    match m {
                        Ok(AsyncMessage::Notification(n)) => on(n.payload()),
                        Ok(_) => {}
                        Err(e) => {
                            tracing::warn!(error = %e, "the PostgreSQL bus connection failed");
                            break;
                        }
                    }
                }
            });
            client
                .batch_execute(&format!(
                    "SET standard_conforming_strings = on; LISTEN {channel}"
                ))
                .await?;
            Ok::<_, tokio_postgres::Error>((client, driver))
        }
        .await;
        let (client, mut driver) = match connected {
            Ok(c) => c,
            Err(e) => {
                if let Some(r) = ready.take() {
                    let _ = r.send(Err(sql::Error::from(e)));
                    return;
                }
                tracing::warn!(error = %e, "reconnecting the PostgreSQL bus failed");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        if let Some(r) = ready.take() {
            let _ = r.send(Ok(()));
        }
        loop {
            tokio::select! {
                first = rx.recv() => {
                    let Some(first) = first else {
                        driver.abort();
                        return;
                    };
                    let mut batch = format!("NOTIFY {channel}, {}", literal(&first));
                    while batch.len() < 256 * 1024
                        && let Ok(next) = rx.try_recv()
                    {
                        batch.push_str(&format!("; NOTIFY {channel}, {}", literal(&next)));
                    }
                    if let Err(e) = client.batch_execute(&batch).await {
                        tracing::warn!(error = %e, "sending events to the other instances failed");
                        if client.is_closed() {
                            break;
                        }
                    }
                }
                _ = &mut driver => break,
            }
        }
        driver.abort();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
