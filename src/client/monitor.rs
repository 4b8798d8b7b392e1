//! The console's side of the sandbox monitor (screen 4, issue 11): it follows the sandbox's
//! event stream (`GET /v1/sandbox/events`, server-sent events, see `docs/sandbox.md`,
//! "Faults and events") and reads and changes its state through signed management requests
//! ([`SandboxAdmin`]): `GET /v1/sandbox/clock`, `GET /v1/sandbox/state`,
//! `GET /v1/sandbox/faults`, `POST /v1/sandbox/clock`, `POST /v1/sandbox/batch`,
//! `DELETE /v1/sandbox/faults`.
//!
//! Which plane it uses (issue 20): on its own embedded sandbox the operator plane (the
//! token the embedded sandbox was started with: every TPP's events with `?scope=all`, the
//! whole state); elsewhere its TPP scope (its own events; the whole state only where the
//! sandbox answers it, a `sandbox serve` on this machine). [`SandboxAdmin::is_operator`]
//! and [`plane`] say which. Only a sandbox on this machine is monitored (the embedded
//! sandbox, or a `sandbox serve` on loopback: [`crate::profile::Target::is_local`]). The events are read here as the
//! stream's JSON (this module never imports the sandbox's types: the console reaches the
//! sandbox only over HTTP).

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Engine;
use super::sandbox_admin::{AdminError, SandboxAdmin};
/// The management paths the monitor reads and changes (defined beside their client,
/// [`SandboxAdmin`]).
pub(crate) use super::sandbox_admin::{BATCH_PATH, CLOCK_PATH, FAULTS_PATH, STATE_PATH};
use crate::xs2a::wire::{BatchRun, FaultList, FaultRule, FaultsCleared, SandboxClock};

/// The event stream's path (the TPP's own events).
pub(crate) const EVENTS_PATH: &str = "/v1/sandbox/events";
/// The event stream of every TPP (operator plane).
pub(crate) const ALL_EVENTS_PATH: &str = "/v1/sandbox/events?scope=all";

/// The plane `admin` monitors on, for the screen: `operator plane (every TPP)` or `TPP
/// scope (this profile's TPP)`.
pub fn plane(admin: &SandboxAdmin) -> &'static str {
    if admin.is_operator() {
        "operator plane (every TPP)"
    } else {
        "TPP scope (this profile's TPP)"
    }
}

/// Entries per list the state browser reads: the sandbox's largest page
/// (`sandbox::http::state::MAX_LIMIT`); `totals` in the answer gives how many there are in all.
pub(crate) const STATE_ROWS: usize = 1000;
/// How long one subscription to the event stream may stay open (the profile's client cuts
/// every request after its whole-request timeout); then the monitor shows that the stream
/// ended and `r` subscribes again.
pub(crate) const STREAM_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// What the monitor reads from the stream: the sandbox's event types
/// ([`crate::sandbox_events`]), read from the `data:` JSON of each event by its `type`.
pub use crate::sandbox_events::{
    BatchEvent, ClockEvent, Event as MonitorEvent, RequestEvent, ScaEvent,
};

/// What the stream task hands the console's event loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MonitorFeed {
    /// The subscription exists (the stream's `: subscribed` comment): every later event
    /// arrives.
    Subscribed,
    /// One event.
    Event(MonitorEvent),
    /// The stream ended or could not start; why.
    Ended(String),
}

/// One block of a `text/event-stream` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SseBlock {
    /// A comment line (`: subscribed`, keep-alives), without the colon.
    Comment(String),
    /// An event: its `event:` name and its `data:` lines joined by `\n`.
    Event {
        /// The `event:` name (empty when the block has none).
        name: String,
        /// The `data:` lines, joined by `\n`.
        data: String,
    },
}

/// Splits a `text/event-stream` body into blocks as its chunks arrive (WHATWG HTML, "Server-
/// sent events", interpreting an event stream: blocks end at a blank line; `event:`,
/// `data:` and comment lines; `id:` and `retry:` are not used by the sandbox and ignored).
///
/// Home-made rather than the `eventsource-stream` crate (0.2.3), for two reasons:
/// - that crate drops comment lines (`RawEventLine::Comment(_) => {}` in its
///   `event_stream.rs`), and the sandbox's `: subscribed` comment is how the monitor knows
///   its subscription exists ([`MonitorFeed::Subscribed`]: events after it are not lost;
///   the flow screen and the tests wait for it);
/// - it reads a `Stream` of byte chunks, which needs reqwest's `stream` feature (and
///   `futures` adapters) where this reads `Response::chunk` in a loop.
///
/// What is left is the block splitting of the WHATWG rules above, 40 lines with a unit
/// test (`the_reader_splits_blocks_across_chunks_and_keeps_comments_apart`).
#[derive(Debug, Default)]
pub(crate) struct SseReader {
    buffer: Vec<u8>,
}

impl SseReader {
    /// Takes the next chunk; returns the blocks it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseBlock> {
        self.buffer
            .extend(chunk.iter().copied().filter(|b| *b != b'\r'));
        let mut out = Vec::new();
        while let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
            let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&block[..end]);
            let mut name = String::new();
            let mut data: Vec<&str> = Vec::new();
            let mut comment = None;
            for line in text.lines() {
                if let Some(c) = line.strip_prefix(':') {
                    comment.get_or_insert_with(|| c.trim().to_string());
                    continue;
                }
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "event" => name = value.to_string(),
                    "data" => data.push(value),
                    _ => {}
                }
            }
            if data.is_empty() {
                if let Some(c) = comment {
                    out.push(SseBlock::Comment(c));
                }
            } else {
                out.push(SseBlock::Event {
                    name,
                    data: data.join("\n"),
                });
            }
        }
        out
    }
}

impl SandboxAdmin {
    /// The admin client of the engine's target, signing with its credentials.
    pub(crate) fn for_engine(engine: &Engine) -> Self {
        SandboxAdmin::new(
            &engine.base_url,
            engine.credentials.clone(),
            engine.http.clone(),
        )
        .with_operator_token(engine.operator_token().map(str::to_string))
    }
}

/// Follows the event stream of `admin`'s sandbox (subscribed with a request signed at `now`)
/// and hands what arrives to `tx`, until the stream ends, fails, or `tx` is closed; the last
/// message is [`MonitorFeed::Ended`] with the reason (unless `tx` closed).
pub async fn follow(admin: SandboxAdmin, now: SystemTime, tx: mpsc::UnboundedSender<MonitorFeed>) {
    let why = match stream(&admin, now, &tx).await {
        Ok(true) => return,
        Ok(false) => format!(
            "the sandbox at {} closed the event stream",
            admin.base_url()
        ),
        Err(e) => e.to_string(),
    };
    let _ = tx.send(MonitorFeed::Ended(why));
}

/// Reads the stream into `tx`; `Ok(true)` when `tx` closed, `Ok(false)` when the stream
/// ended.
async fn stream(
    admin: &SandboxAdmin,
    now: SystemTime,
    tx: &mpsc::UnboundedSender<MonitorFeed>,
) -> Result<bool, AdminError> {
    let path = if admin.is_operator() {
        ALL_EVENTS_PATH
    } else {
        EVENTS_PATH
    };
    let mut r = admin
        .request(reqwest::Method::GET, path, None, now, Some(STREAM_LIFETIME))
        .await?;
    if !r.status().is_success() {
        admin.answer(path, r).await?;
        return Ok(false);
    }
    let mut reader = SseReader::default();
    loop {
        let chunk = r.chunk().await.map_err(|source| AdminError::Http {
            url: format!("{}{EVENTS_PATH}", admin.base_url()),
            source,
        })?;
        let Some(chunk) = chunk else {
            return Ok(false);
        };
        for block in reader.feed(&chunk) {
            let feed = match block {
                SseBlock::Comment(c) if c == "subscribed" => MonitorFeed::Subscribed,
                SseBlock::Comment(_) => continue,
                // An event of a newer sandbox that this console does not know is skipped.
                SseBlock::Event { data, .. } => match serde_json::from_str(&data) {
                    Ok(e) => MonitorFeed::Event(e),
                    Err(_) => continue,
                },
            };
            if tx.send(feed).is_err() {
                return Ok(true);
            }
        }
    }
}

/// What the monitor asks of the sandbox; every one answers the sandbox's state afterwards
/// ([`SandboxState`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MonitorRequest {
    /// Read the clock, the state and the faults.
    Refresh,
    /// Advance the sandbox clock by this many seconds (`POST /v1/sandbox/clock`).
    Advance(u64),
    /// Run a batch now (`POST /v1/sandbox/batch`).
    Batch,
    /// Clear every fault rule (`DELETE /v1/sandbox/faults`).
    ClearFaults,
}

/// The sandbox as the monitor last read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SandboxState {
    /// `GET /v1/sandbox/clock`: `{now, nextBatchRun, batchTimes}`.
    pub clock: Value,
    /// `GET /v1/sandbox/state`: `{now, customers, consents, payments, baskets}`; `Null`
    /// when the sandbox withheld it ([`SandboxState::state_withheld`]).
    pub state: Value,
    /// Why the sandbox refused to list its state (403 `SERVICE_BLOCKED`: a sandbox whose
    /// public URL is not on loopback, e.g. in room mode, keeps every TPP's PSU data to
    /// itself), its code and text; `None` when it answered.
    pub state_withheld: Option<String>,
    /// The fault rules in effect (`GET /v1/sandbox/faults`), oldest first.
    pub faults: Vec<FaultRule>,
    /// What the request did, for the status line (`Clock advanced by 1 h`), if it changed
    /// anything.
    pub done: Option<String>,
}

/// `secs` as the monitor writes offsets: `90 s`, `2 h`, `1 d 6 h`, `1 h 30 min`.
pub(crate) fn describe_seconds(secs: u64) -> String {
    let units = [(86_400, "d"), (3_600, "h"), (60, "min"), (1, "s")];
    let mut rest = secs;
    let mut parts = Vec::new();
    for (size, name) in units {
        if rest >= size {
            parts.push(format!("{} {name}", rest / size));
            rest %= size;
        }
    }
    if parts.is_empty() {
        "0 s".to_string()
    } else {
        parts.join(" ")
    }
}

/// Performs `request` on `admin`'s sandbox with requests signed at `now` (the sandbox clock
/// of the embedded sandbox, [`Engine::now`]), then reads its state. After a clock advance the
/// reads are signed at the sandbox's new time (the advance's answer `now`).
///
/// Errors: [`AdminError`] (not reachable, or the sandbox refused: its code and text).
pub async fn perform(
    admin: &SandboxAdmin,
    request: MonitorRequest,
    now: SystemTime,
) -> Result<SandboxState, AdminError> {
    use reqwest::Method;
    let mut at = now;
    let done = match request {
        MonitorRequest::Refresh => None,
        MonitorRequest::Advance(secs) => {
            let body = json!({ "advanceSeconds": secs });
            let r: SandboxClock = admin
                .send(Method::POST, CLOCK_PATH, Some(&body), at)
                .await?;
            at = r
                .now
                .as_deref()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .map(SystemTime::from)
                .unwrap_or(at + Duration::from_secs(secs));
            Some(format!(
                "Sandbox clock advanced by {} to {}",
                describe_seconds(secs),
                r.now.as_deref().unwrap_or("?")
            ))
        }
        MonitorRequest::Batch => {
            let r: BatchRun = admin.send(Method::POST, BATCH_PATH, None, at).await?;
            Some(format!(
                "Batch run: {} settled, {} without funds",
                r.settled, r.insufficient_funds
            ))
        }
        MonitorRequest::ClearFaults => {
            let r: FaultsCleared = admin.send(Method::DELETE, FAULTS_PATH, None, at).await?;
            Some(format!("Cleared {} fault rules", r.cleared))
        }
    };
    let clock: Value = admin.send(Method::GET, CLOCK_PATH, None, at).await?;
    let faults: FaultList = admin.send(Method::GET, FAULTS_PATH, None, at).await?;
    // The state lists every TPP's PSU data: a sandbox reachable from the network (room
    // mode) refuses it with 403 SERVICE_BLOCKED while clock, batch and faults still work,
    // so a refusal is kept as the reason instead of failing the whole read.
    // The state is paginated (issue 20): the first STATE_ROWS of each list (oldest first),
    // with `totals` saying how many there are in all.
    let state_path = format!("{STATE_PATH}?limit={STATE_ROWS}");
    let (state, state_withheld) = match admin
        .send::<Value>(Method::GET, &state_path, None, at)
        .await
    {
        Ok(state) => (state, None),
        Err(AdminError::Refused { status: 403, text }) if text.starts_with("SERVICE_BLOCKED") => {
            (Value::Null, Some(text))
        }
        Err(e) => return Err(e),
    };
    Ok(SandboxState {
        clock,
        state,
        state_withheld,
        faults: faults.faults,
        done,
    })
}

/// Whether `e` is a request the monitor itself sends to read the sandbox ([`perform`]'s
/// reads of the clock, the state and the faults, and the event stream's subscription):
/// the log hides these by default, so they neither fill it nor take the highlight.
pub(crate) fn is_monitor_read(e: &MonitorEvent) -> bool {
    matches!(e, MonitorEvent::Request(r)
        if r.method == "GET"
            && [CLOCK_PATH, STATE_PATH, FAULTS_PATH, EVENTS_PATH].contains(&r.path.as_str()))
}

/// Whether `e` tells that the sandbox's clock, fault rules or resources changed, so what
/// the monitor read is stale: a clock event or batch run, or a request that changes
/// something (any method but `GET`/`HEAD`) answered with success, whoever sent it (the
/// console, `psd2-console sandbox fault add`, a TPP in the room).
pub(crate) fn changes_state(e: &MonitorEvent) -> bool {
    match e {
        MonitorEvent::Clock(_) | MonitorEvent::Batch(_) => true,
        MonitorEvent::Request(r) => {
            !matches!(r.method.as_str(), "GET" | "HEAD" | "OPTIONS")
                && (200..300).contains(&r.status)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_splits_blocks_across_chunks_and_keeps_comments_apart() {
        let mut r = SseReader::default();
        assert_eq!(
            r.feed(b": subscribed\n\nevent: clock\r\ndata: {\"a\""),
            vec![SseBlock::Comment("subscribed".into())]
        );
        assert_eq!(
            r.feed(b":1}\n\n"),
            vec![SseBlock::Event {
                name: "clock".into(),
                data: "{\"a\":1}".into()
            }]
        );
        assert_eq!(r.feed(b"data: x\ndata: y\n\n: keep\n\n").len(), 2);
    }

    #[test]
    fn events_are_read_by_type() {
        let e: MonitorEvent = serde_json::from_str(
            r#"{"type":"clock","now":"2026-11-24T10:00:00Z","offset_secs":3600,"reason":"advance"}"#,
        )
        .unwrap();
        assert_eq!(
            e,
            MonitorEvent::Clock(ClockEvent {
                now: "2026-11-24T10:00:00Z".into(),
                offset_secs: 3600,
                reason: "advance".into()
            })
        );
        let e: MonitorEvent = serde_json::from_str(r#"{"type":"lagged","missed":3}"#).unwrap();
        assert_eq!(e, MonitorEvent::Lagged { missed: 3 });
    }

    #[test]
    fn offsets_are_written_in_units() {
        assert_eq!(describe_seconds(3600), "1 h");
        assert_eq!(describe_seconds(93_600), "1 d 2 h");
        assert_eq!(describe_seconds(5_430), "1 h 30 min 30 s");
        assert_eq!(describe_seconds(0), "0 s");
    }
}
