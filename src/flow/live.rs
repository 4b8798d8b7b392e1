//! The PSU browser's steps as they happen: the console subscribes to the embedded
//! sandbox's event stream (`GET /v1/sandbox/events`, server-sent events, signed like every
//! `/v1` request; `crate::sandbox::events`) and keeps its `sca` events as [`BrowserStep`]s.
//! The other events (requests, batch runs, clock changes) are not needed: the console sees
//! its own requests.

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;
use tokio::sync::mpsc;

use super::BrowserStep;
use crate::cert::Credentials;
use crate::client::Engine;
use crate::signing::{SignOptions, sign_request};

/// The path of the sandbox's event stream.
pub const EVENTS_PATH: &str = "/v1/sandbox/events";

/// Where and as whom to subscribe: taken from an engine so the subscription outlives a
/// borrow of it.
#[derive(Clone)]
pub struct StepSource {
    /// The sandbox's base URL (no trailing slash).
    pub base_url: String,
    /// The engine's HTTP client.
    pub http: reqwest::Client,
    /// The TPP's credentials (the stream is a signed management operation).
    pub credentials: Arc<Credentials>,
    /// Sent as `TPP-Redirect-URI`.
    pub redirect_uri: String,
    /// The signing time (the sandbox's clock).
    pub now: SystemTime,
}

impl std::fmt::Debug for StepSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepSource")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl StepSource {
    /// The source of `engine`'s target.
    pub fn of(engine: &Engine) -> StepSource {
        StepSource {
            base_url: engine.base_url.trim_end_matches('/').to_string(),
            http: engine.http.clone(),
            credentials: engine.credentials.clone(),
            redirect_uri: engine.redirect_uri.clone(),
            now: engine.now(),
        }
    }
}

/// The browser steps of an open event stream ([`subscribe`]). Dropping it closes the
/// stream at once, so a sandbox shutting down does not wait for it.
#[derive(Debug)]
pub struct StepStream {
    rx: mpsc::UnboundedReceiver<BrowserStep>,
    reader: tokio::task::JoinHandle<()>,
}

impl StepStream {
    /// The next step; `None` once the stream ended (the sandbox stopped).
    pub async fn recv(&mut self) -> Option<BrowserStep> {
        self.rx.recv().await
    }
}

impl Drop for StepStream {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Opens the event stream of `source` and returns its browser steps, in order, as they
/// arrive (each stamped with the system time it arrived at, like the history's entries).
///
/// Errors: the request cannot be sent, or the sandbox answers other than 200 (one
/// sentence with the status).
pub async fn subscribe(source: StepSource) -> Result<StepStream, String> {
    let mut headers = vec![
        ("X-Request-ID".to_string(), uuid::Uuid::new_v4().to_string()),
        ("TPP-Redirect-URI".to_string(), source.redirect_uri.clone()),
        ("Accept".to_string(), "text/event-stream".to_string()),
    ];
    sign_request(
        &source.credentials,
        "GET",
        EVENTS_PATH,
        &mut headers,
        &[],
        SignOptions {
            request_target: false,
            now: source.now,
        },
    );
    let url = format!("{}{EVENTS_PATH}", source.base_url);
    let mut rb = source.http.get(&url);
    for (n, v) in &headers {
        rb = rb.header(n, v);
    }
    let mut response = rb.send().await.map_err(|e| format!("{url}: {e}"))?;
    if response.status() != reqwest::StatusCode::OK {
        return Err(format!("{url} answered {}", response.status()));
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        let mut pending = String::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            pending.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = pending.find("\n\n") {
                let block: String = pending.drain(..end + 2).collect();
                if let Some(step) =
                    step_of_block(&block, crate::cert::unix_seconds(SystemTime::now()))
                    && tx.send(step).is_err()
                {
                    return;
                }
            }
        }
    });
    Ok(StepStream { rx, reader })
}

/// The browser step of one server-sent event block (`event: sca` and a `data:` line), seen
/// at `at`; `None` for other events and comments.
pub fn step_of_block(block: &str, at: i64) -> Option<BrowserStep> {
    let mut event = None;
    let mut data = String::new();
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("event:") {
            event = Some(v.trim());
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push_str(v.strip_prefix(' ').unwrap_or(v));
        }
    }
    if event != Some("sca") {
        return None;
    }
    let value: Value = serde_json::from_str(&data).ok()?;
    BrowserStep::from_event(&value, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sca_event_block_is_a_step_and_other_blocks_are_not() {
        let block = "event: sca\ndata: {\"type\":\"sca\",\"sca_id\":\"abc\",\"step\":\"consent\",\"status\":302,\"outcome\":\"success\",\"code\":null,\"injected\":false,\"fault\":null}\n\n";
        let step = step_of_block(block, 7).unwrap();
        assert_eq!(step.sca_id, "abc");
        assert_eq!(step.step, "consent");
        assert_eq!(step.status, 302);
        assert_eq!(step.outcome.as_deref(), Some("success"));
        assert_eq!(step.at, 7);
        assert!(step_of_block(": subscribed\n\n", 7).is_none());
        assert!(step_of_block("event: request\ndata: {\"status\":200}\n\n", 7).is_none());
    }
}
