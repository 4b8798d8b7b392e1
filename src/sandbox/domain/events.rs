//! The sandbox's event stream: `GET /v1/sandbox/events` (a signed management operation like
//! the other `/v1/sandbox/*` ones; its handler is [`crate::sandbox::http::subscribe`]) answers `text/event-stream` (server-sent events, axum's
//! [`Sse`]) with one event per answered request and per SCA step, batch run and clock change,
//! as they happen. The interface document has no such operation; it is this sandbox's tool
//! for watching a client talk to it.
//!
//! Each SSE event has `event:` set to its `type` and `data:` one JSON object:
//!
//! | `type` | fields |
//! |---|---|
//! | `request` | `at` (the sandbox clock when it was answered, RFC 3339), `method`, `path` (no query), `status`, `code` (first `tppMessages` code or `null`), `latency_us`, `request_id` (`X-Request-ID` or `null`), `verify` (the verification step that failed, [`crate::sandbox::http::access_log::VerifyStep`], or `null`), `signing_string` (`/v1` only: the signing string as the server rebuilds it from the request: the headers the `Signature` lists, or, when it is missing or unreadable, the eligible headers present; never the `Signature` header itself), `injected` (`true` when a fault rule answered, [`crate::sandbox::http::faults`]) and `fault` (its id) |
//! | `sca` | `sca_id`, `step` (`opened`, `login`, `context`, `consent`, `cancel`, `decision`), `status` (HTTP status of the page), `outcome` (`success` or `failure` once the browser is sent back to the TPP, else `null`), `code` (the failure's code), `injected`, `fault` |
//! | `batch` | `ran_at`, `settled`, `insufficient_funds`, `all` (`POST /v1/sandbox/batch`) |
//! | `clock` | `now` (RFC 3339), `offset_secs`, `reason` (`advance` or `initialize`) |
//! | `lagged` | `missed`: events this subscriber lost because it read too slowly |
//!
//! Scoped (issue 20): every event belongs to the TPP whose world it happened in ([`Owner`]:
//! the verified TPP of a request, the TPP of an SCA page's authorisation, the TPP that moved
//! its clock or ran a batch), and a subscriber reads only its own TPP's events. Requests
//! whose signature could not be verified, and the sandbox's own batch runs, belong to
//! nobody. Every TPP's events (also those of nobody) are on the operator plane
//! ([`crate::sandbox::http::operator`]): `GET /v1/sandbox/events?scope=all` from a loopback peer or with
//! the operator token; without it `scope=all` answers 403 `SERVICE_BLOCKED`.
//!
//! A stream starts with the comment `: subscribed` (sent once the subscription exists, so a
//! client that read it sees every later event) and keeps the connection alive with a comment
//! every 15 s. Form fields of the SCA pages (the PSU's answers), bodies, `Signature` values,
//! certificates and keys are never in an event.
//!
//! Many instances on one PostgreSQL database (issue 21): every instance publishes each of
//! its events to the others through PostgreSQL's `LISTEN`/`NOTIFY`
//! ([`crate::sandbox::store::shared::Bus`], channel [`PG_CHANNEL`]), and each hands the
//! others' events to its own subscribers, with their owner, so the stream of any instance
//! carries the requests every instance served and a TPP still reads only its own.
//! `LISTEN`/`NOTIFY` rather than a table tailed by a polling task: the events are pushed the
//! moment the publishing transaction commits (no polling delay, no query per interval per
//! instance), nothing is written to disk, and nothing has to be purged; what it gives up —
//! events published while an instance's bus connection is down are lost to it — is what the
//! stream already allows a slow subscriber (it is a live view, not a log). An event longer
//! than the payload limit goes without its `signing_string`. On PostgreSQL events are built
//! whether or not anybody listens on this instance (one may listen on another). The
//! per-TPP limit of open streams counts per instance.
//!
//! Bounded: every subscriber has a queue of [`CAPACITY`] events (`tokio::sync::broadcast`);
//! one that falls behind loses the oldest and gets a `lagged` event, and requests never wait
//! for it. With nobody subscribed no event is built ([`Events::listening`]). A TPP may have
//! at most [`MAX_SUBSCRIBERS_PER_TPP`] streams open at once; one more is answered 429
//! `ACCESS_EXCEEDED` until one of them ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use crate::signing::{ELIGIBLE_HEADERS, SignatureParams, build_signing_string};

/// Events each subscriber may have unread before it lags.
pub const CAPACITY: usize = 1024;

/// Most open event streams of one TPP at a time; the next is refused with 429
/// `ACCESS_EXCEEDED` (issue 20, finding 9: 300 subscribers that never read were all
/// accepted).
pub const MAX_SUBSCRIBERS_PER_TPP: usize = 8;

pub use crate::sandbox_events::{BatchEvent, ClockEvent, Event, RequestEvent, ScaEvent};

/// The TPP an event belongs to (its [`crate::sandbox::model::TppId`] text): set by the signature
/// check on a verified request's response while the access log publishes that request's
/// events (an event stream is open: issue 23 spared the extension otherwise), and by the SCA
/// page layer
/// ([`crate::sandbox::http::sca_pages::translate`]) on a page's response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner(pub std::sync::Arc<str>);

/// An event and the TPP it belongs to (`None`: nobody, operator plane only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    /// The TPP whose world it happened in (`None`: the sandbox's own, e.g. a batch run of every world).
    pub owner: Option<String>,
    /// The event.
    pub event: Event,
}

/// The `LISTEN`/`NOTIFY` channel of the events on PostgreSQL.
pub const PG_CHANNEL: &str = "psd2_sandbox_events";

/// The sending side, one per sandbox ([`crate::sandbox::App::events`]).
#[derive(Debug)]
pub struct Events {
    tx: broadcast::Sender<Arc<Owned>>,
    /// Open streams per TPP ([`MAX_SUBSCRIBERS_PER_TPP`]).
    pub slots: Slots,
    /// Live subscriptions, kept here so that the request path reads an atomic instead of
    /// the channel's `receiver_count` (which takes the channel's lock on every request).
    listeners: Arc<AtomicUsize>,
    /// On PostgreSQL: the bus to the other instances.
    shared: Option<Shared>,
}

/// This instance's side of the bus between instances.
#[derive(Debug)]
struct Shared {
    bus: crate::sandbox::store::shared::Bus,
    /// Random: tells this instance's messages apart (it receives them too).
    instance: u64,
    /// Makes every message distinct (PostgreSQL folds equal ones of one transaction).
    next: AtomicU64,
}

/// An event on the bus between instances.
#[derive(serde::Serialize, serde::Deserialize)]
struct Wire {
    /// The sending instance.
    i: u64,
    /// Its message number.
    n: u64,
    /// The owner.
    o: Option<String>,
    /// The event.
    e: Event,
}

impl Default for Events {
    fn default() -> Self {
        Events {
            tx: broadcast::Sender::new(CAPACITY),
            slots: Slots::default(),
            listeners: Arc::new(AtomicUsize::new(0)),
            shared: None,
        }
    }
}

/// A subscription to the event stream ([`Events::subscribe`]): the channel's receiver
/// (through `Deref`), counted as a listener until dropped.
#[derive(Debug)]
pub struct Subscription {
    rx: broadcast::Receiver<Arc<Owned>>,
    listeners: Arc<AtomicUsize>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.listeners.fetch_sub(1, Ordering::Relaxed);
    }
}

impl std::ops::Deref for Subscription {
    type Target = broadcast::Receiver<Arc<Owned>>;
    fn deref(&self) -> &Self::Target {
        &self.rx
    }
}

impl std::ops::DerefMut for Subscription {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.rx
    }
}

impl Events {
    /// The events of an instance on the PostgreSQL database `url`: shared with every other
    /// instance there (see the module documentation). Returns once this instance receives
    /// the others' events.
    ///
    /// Errors: the database cannot be reached.
    pub fn shared(url: &str) -> crate::sandbox::store::sql::Result<Events> {
        let events = Events::default();
        let instance = uuid::Uuid::new_v4().as_u64_pair().0;
        let tx = events.tx.clone();
        let listeners = Arc::clone(&events.listeners);
        let bus = crate::sandbox::store::shared::Bus::start(url, PG_CHANNEL, move |payload| {
            if listeners.load(Ordering::Relaxed) == 0 {
                return;
            }
            match serde_json::from_str::<Wire>(payload) {
                Ok(w) if w.i == instance => {}
                Ok(w) => {
                    let _ = tx.send(Arc::new(Owned {
                        owner: w.o,
                        event: w.e,
                    }));
                }
                Err(e) => tracing::warn!(error = %e, "an event from another instance did not read"),
            }
        })?;
        Ok(Events {
            shared: Some(Shared {
                bus,
                instance,
                next: AtomicU64::new(0),
            }),
            ..events
        })
    }

    /// Whether an event may have a reader (check before building an event): somebody is
    /// subscribed here, or the events are shared with other instances.
    pub fn listening(&self) -> bool {
        self.shared.is_some() || self.listeners.load(Ordering::Relaxed) > 0
    }

    /// Sends the event `make` builds, belonging to `owner` (a TPP id; `None`: nobody), when
    /// anybody listens (on PostgreSQL also to the other instances); never waits.
    pub fn emit(&self, owner: Option<&str>, make: impl FnOnce() -> Event) {
        if !self.listening() {
            return;
        }
        let owned = Arc::new(Owned {
            owner: owner.map(str::to_string),
            event: make(),
        });
        if let Some(shared) = &self.shared {
            let mut wire = Wire {
                i: shared.instance,
                n: shared.next.fetch_add(1, Ordering::Relaxed),
                o: owned.owner.clone(),
                e: owned.event.clone(),
            };
            let mut text = serde_json::to_string(&wire).unwrap_or_default();
            if text.len() > crate::sandbox::store::shared::MAX_PAYLOAD
                && let Event::Request(r) = &mut wire.e
            {
                r.signing_string = None;
                text = serde_json::to_string(&wire).unwrap_or_default();
            }
            shared.bus.publish(text);
        }
        if self.listeners.load(Ordering::Relaxed) > 0 {
            let _ = self.tx.send(owned);
        }
    }

    /// A new subscription: every event sent from now on.
    pub fn subscribe(&self) -> Subscription {
        let rx = self.tx.subscribe();
        self.listeners.fetch_add(1, Ordering::Relaxed);
        Subscription {
            rx,
            listeners: Arc::clone(&self.listeners),
        }
    }
}

/// The open event streams of each TPP (by its id), at most [`MAX_SUBSCRIBERS_PER_TPP`].
#[derive(Debug, Default, Clone)]
pub struct Slots(Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>);

/// One open stream of a TPP: given back when dropped (the stream ends or its client goes).
#[derive(Debug)]
pub struct Slot {
    slots: Slots,
    tpp: String,
}

impl Slots {
    /// A slot for one more stream of `tpp`, or `None` when it has
    /// [`MAX_SUBSCRIBERS_PER_TPP`] open.
    pub fn take(&self, tpp: &str) -> Option<Slot> {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(tpp.to_string()).or_insert(0);
        if *n >= MAX_SUBSCRIBERS_PER_TPP {
            return None;
        }
        *n += 1;
        Some(Slot {
            slots: self.clone(),
            tpp: tpp.to_string(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut m = self.slots.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.tpp) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.tpp);
            }
        }
    }
}

/// A `clock` event: the sandbox time `now`, its offset and why it changed.
pub fn clock_event(now: std::time::SystemTime, offset_secs: u64, reason: &str) -> Event {
    Event::Clock(ClockEvent {
        now: chrono::DateTime::<chrono::Utc>::from(now)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        offset_secs,
        reason: reason.to_string(),
    })
}

/// The signing string of a request as the verifier rebuilds it: over the headers its
/// `Signature` lists, or (no `Signature`, or one that cannot be read) over the eligible
/// headers it carries, in the order of [`ELIGIBLE_HEADERS`]. A `signature` entry in the list
/// is left out, so the `Signature` value never appears. `None` when a listed header is absent.
///
/// `header(name)` is the request's header `name` (any case): `None` when absent,
/// `Some(None)` when present but not text, `Some(Some(value))` otherwise.
pub fn rebuilt_signing_string<'h>(
    method: &str,
    path_and_query: &str,
    header: impl Fn(&str) -> Option<Option<&'h str>>,
) -> Option<String> {
    // The operator token never shows, even when a client signed its header.
    let value = |n: &str| {
        if n.eq_ignore_ascii_case(crate::xs2a::headers::SANDBOX_OPERATOR_TOKEN) {
            return header(n).map(|_| "(redacted)");
        }
        header(n).flatten()
    };
    let listed = value("signature")
        .and_then(|s| SignatureParams::parse(s).ok())
        .map(|p| p.headers);
    let names: Vec<String> = match listed {
        Some(names) => names,
        None => ELIGIBLE_HEADERS
            .iter()
            .filter(|n| header(n).is_some())
            .map(|n| n.to_string())
            .collect(),
    }
    .into_iter()
    .filter(|n| !n.eq_ignore_ascii_case("signature"))
    .collect();
    build_signing_string(method, path_and_query, &names, value).ok()
}

/// The SCA step of a page path (`/sca/{id}[/step]`, `/payment-sca/{id}[/step]`) and method:
/// `(sca id, step)`; `None` for other paths.
pub fn sca_step(method: &str, path: &str) -> Option<(String, String)> {
    let rest = path
        .strip_prefix("/sca/")
        .or_else(|| path.strip_prefix("/payment-sca/"))?;
    let mut parts = rest.splitn(2, '/');
    let id = parts.next().filter(|s| !s.is_empty())?;
    let step = match (method, parts.next()) {
        ("GET", None) => "opened",
        ("POST", Some(s @ ("login" | "context" | "consent" | "cancel" | "decision"))) => s,
        _ => return None,
    };
    Some((id.to_string(), step.to_string()))
}

/// `outcome` and `code` of a redirect to the TPP: `success` when it carries `psu-id`,
/// `failure` with its `code` when it carries one.
pub fn sca_outcome(location: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(url) = location.and_then(|l| url::Url::parse(l).ok()) else {
        return (None, None);
    };
    let mut outcome = None;
    let mut code = None;
    for (k, v) in url.query_pairs() {
        match &*k {
            "psu-id" => outcome = Some("success".to_string()),
            "code" => {
                outcome = Some("failure".to_string());
                code = Some(v.into_owned());
            }
            _ => {}
        }
    }
    (outcome, code)
}

/// What a subscriber reads next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// An event.
    Event(Arc<Owned>),
    /// It read too slowly and lost this many events (the oldest).
    Lagged(u64),
}

/// The next thing `rx` reads; `None` once the sandbox is gone.
pub async fn receive(rx: &mut broadcast::Receiver<Arc<Owned>>) -> Option<Received> {
    match rx.recv().await {
        Ok(e) => Some(Received::Event(e)),
        Err(RecvError::Lagged(missed)) => Some(Received::Lagged(missed)),
        Err(RecvError::Closed) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_subscriber_lags_and_learns_how_many_events_it_lost() {
        let events = Events::default();
        let mut rx = events.subscribe();
        let at = std::time::UNIX_EPOCH;
        for i in 0..CAPACITY as u64 + 3 {
            events.emit(None, || clock_event(at, i, "advance"));
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(rt.block_on(receive(&mut rx)), Some(Received::Lagged(3)));
        assert_eq!(
            rt.block_on(receive(&mut rx)),
            Some(Received::Event(Arc::new(Owned {
                owner: None,
                event: clock_event(at, 3, "advance")
            })))
        );
    }

    #[test]
    fn a_tpp_gets_at_most_eight_streams_and_a_closed_one_frees_its_slot() {
        let slots = Slots::default();
        let held: Vec<Slot> = (0..MAX_SUBSCRIBERS_PER_TPP)
            .map(|_| slots.take("a").unwrap())
            .collect();
        assert!(slots.take("a").is_none());
        // Another TPP is not affected.
        assert!(slots.take("b").is_some());
        drop(held);
        assert!(slots.take("a").is_some());
    }

    #[test]
    fn no_event_is_built_while_nobody_listens() {
        let events = Events::default();
        events.emit(None, || panic!("built with nobody listening"));
        let rx = events.subscribe();
        let built = std::cell::Cell::new(false);
        events.emit(None, || {
            built.set(true);
            clock_event(std::time::UNIX_EPOCH, 0, "advance")
        });
        assert!(built.get());
        drop(rx);
        // The last subscription gone, nothing is built again.
        assert!(!events.listening());
        events.emit(None, || panic!("built after the subscriber left"));
    }

    #[test]
    fn sca_steps_of_page_paths() {
        assert_eq!(
            sca_step("GET", "/sca/abc"),
            Some(("abc".into(), "opened".into()))
        );
        assert_eq!(
            sca_step("POST", "/payment-sca/abc/decision"),
            Some(("abc".into(), "decision".into()))
        );
        assert_eq!(sca_step("POST", "/sca/abc/other"), None);
        assert_eq!(sca_step("GET", "/v1/accounts"), None);
    }

    #[test]
    fn rebuilt_signing_string_never_holds_the_signature() {
        let signature = "keyId=\"SN=1,CA=x\",algorithm=\"rsa-sha256\",headers=\"x-request-id signature\",signature=\"c2VjcmV0\"";
        let mut h: Vec<(&str, &str)> = vec![("x-request-id", "r1"), ("signature", signature)];
        let rebuilt = |h: &[(&'static str, &'static str)]| {
            let h = h.to_vec();
            rebuilt_signing_string("GET", "/v1/accounts", move |n| {
                h.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(n))
                    .map(|(_, v)| Some(*v))
            })
        };
        assert_eq!(rebuilt(&h).unwrap(), "x-request-id: r1");
        h.retain(|(k, _)| *k != "signature");
        h.push(("date", "Tue, 24 Nov 2026 10:00:00 GMT"));
        assert_eq!(
            rebuilt(&h).unwrap(),
            "date: Tue, 24 Nov 2026 10:00:00 GMT\nx-request-id: r1"
        );
    }

    #[test]
    fn redirect_outcomes() {
        assert_eq!(
            sca_outcome(Some("http://t/cb?psu-id=1&context=PRIVATE")),
            (Some("success".into()), None)
        );
        assert_eq!(
            sca_outcome(Some("http://t/cb?system=s&status=401&code=CONSENT_INVALID")),
            (Some("failure".into()), Some("CONSENT_INVALID".into()))
        );
        assert_eq!(sca_outcome(None), (None, None));
    }
}
