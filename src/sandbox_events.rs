//! The wire types of the sandbox's event stream (`GET /v1/sandbox/events`, server-sent
//! events; the fields of each `type` are in [`crate::sandbox::domain::events`]): the sandbox
//! serializes them, the console's monitor ([`crate::client::monitor`]) reads them. Like
//! `signing` and `xs2a`, shared code of neither side, so the client never imports the
//! sandbox.

use serde::{Deserialize, Serialize};

/// One answered request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RequestEvent {
    /// The sandbox clock when the answer was ready (RFC 3339, seconds).
    #[serde(default)]
    pub at: String,
    /// HTTP method.
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// HTTP status of the answer.
    pub status: u16,
    /// The first `tppMessages` code of an error answer.
    pub code: Option<String>,
    /// Microseconds from the request reaching the router to the response head.
    pub latency_us: u64,
    /// The request's `X-Request-ID`.
    pub request_id: Option<String>,
    /// The verification step that failed (e.g. `SignatureMissing`).
    pub verify: Option<String>,
    /// The signing string as the server rebuilds it (`/v1` requests).
    pub signing_string: Option<String>,
    /// Whether a fault rule answered.
    pub injected: bool,
    /// The fault rule's id.
    pub fault: Option<String>,
}

/// One step of the PSU's browser on the SCA pages.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ScaEvent {
    /// The SCA's id (the last segment of its `scaRedirect`).
    pub sca_id: String,
    /// `opened`, `login`, `context`, `consent`, `cancel`, `decision`.
    pub step: String,
    /// HTTP status of the page answer.
    pub status: u16,
    /// `success` or `failure` when the browser is sent back to the TPP.
    pub outcome: Option<String>,
    /// The failure's code (`code` of the redirect).
    pub code: Option<String>,
    /// Whether a fault rule answered.
    pub injected: bool,
    /// The fault rule's id.
    pub fault: Option<String>,
}

/// One batch run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct BatchEvent {
    /// RFC 3339.
    pub ran_at: String,
    /// Payments settled.
    pub settled: usize,
    /// Payments rejected for lack of funds (`ACCP`).
    pub insufficient_funds: usize,
    /// Every authorised payment (`POST /v1/sandbox/batch`) rather than the due ones.
    pub all: bool,
}

/// A change of the sandbox clock.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClockEvent {
    /// The sandbox time after the change (RFC 3339).
    pub now: String,
    /// Seconds the sandbox clock is ahead of its base.
    pub offset_secs: u64,
    /// `advance` or `initialize`.
    pub reason: String,
}

/// An event of the stream; (de)serialized with its `type`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A request answered (`request`).
    Request(RequestEvent),
    /// A step on the SCA pages (`sca`).
    Sca(ScaEvent),
    /// A batch run (`batch`).
    Batch(BatchEvent),
    /// A clock change (`clock`).
    Clock(ClockEvent),
    /// The subscriber read too slowly and lost this many events (the oldest).
    Lagged {
        /// Events lost.
        missed: u64,
    },
}

impl Event {
    /// The SSE `event:` name (the `type`).
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Request(_) => "request",
            Event::Sca(_) => "sca",
            Event::Batch(_) => "batch",
            Event::Clock(_) => "clock",
            Event::Lagged { .. } => "lagged",
        }
    }
}

/// One step of the PSU's browser on the sandbox's SCA pages: an `sca` event of the
/// sandbox's event stream (`GET /v1/sandbox/events`, [`ScaEvent`]).
/// Carries no form field, so no PSU data. The console records it in its history
/// (`crate::client::history`) and draws it in the flow diagram ([`crate::flow`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BrowserStep {
    /// When the console saw it, seconds since the Unix epoch.
    pub at: i64,
    /// The SCA's id: the last segment of the `scaRedirect` path (`/sca/{id}`,
    /// `/payment-sca/{id}`).
    pub sca_id: String,
    /// `opened`, `login`, `context`, `consent`, `cancel` or `decision`.
    pub step: String,
    /// The HTTP status of the page's answer (302 when the browser is sent on).
    pub status: u16,
    /// `success` or `failure` once the browser is sent back to `TPP-Redirect-URI`.
    pub outcome: Option<String>,
    /// The failure's `code` (Resources: Redirect parameters after SCA, failed).
    pub code: Option<String>,
}
