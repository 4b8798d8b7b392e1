//! The PSU browser's steps as they happen: the console subscribes to the embedded
//! sandbox's event stream (`GET /v1/sandbox/events`, server-sent events, signed like every
//! `/v1` request), through the monitor's subscription ([`crate::client::monitor::follow`]),
//! and keeps its `sca` events as [`BrowserStep`]s.
//! The other events (requests, batch runs, clock changes) are not needed: the console sees
//! its own requests.

use std::time::SystemTime;

use tokio::sync::mpsc;

use super::BrowserStep;
use crate::client::Engine;
use crate::client::monitor::{MonitorEvent, MonitorFeed, follow};
use crate::client::sandbox_admin::SandboxAdmin;

/// Where and as whom to subscribe: taken from an engine so the subscription outlives a
/// borrow of it.
#[derive(Debug, Clone)]
pub struct StepSource {
    /// The signed management client of the engine's sandbox.
    pub admin: SandboxAdmin,
    /// The signing time (the sandbox's clock).
    pub now: SystemTime,
}

impl StepSource {
    /// The source of `engine`'s target.
    pub fn of(engine: &Engine) -> StepSource {
        StepSource {
            admin: SandboxAdmin::for_engine(engine),
            now: engine.now(),
        }
    }
}

/// The browser steps of an open event stream ([`subscribe`]). Dropping it closes the
/// stream at once, so a sandbox shutting down does not wait for it.
#[derive(Debug)]
pub struct StepStream {
    rx: mpsc::UnboundedReceiver<BrowserStep>,
    follower: tokio::task::JoinHandle<()>,
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
        self.follower.abort();
        self.reader.abort();
    }
}

/// Opens the event stream of `source` (the monitor's subscription,
/// [`crate::client::monitor::follow`]) and returns its browser steps, in order, as they
/// arrive (each stamped with the system time it arrived at, like the history's entries).
///
/// Errors: the request cannot be sent, or the sandbox refuses the subscription (one
/// sentence, as [`MonitorFeed::Ended`] says it).
pub async fn subscribe(source: StepSource) -> Result<StepStream, String> {
    let (feed_tx, mut feed) = mpsc::unbounded_channel();
    let follower = tokio::spawn(follow(source.admin, source.now, feed_tx));
    match feed.recv().await {
        Some(MonitorFeed::Subscribed) => {}
        Some(MonitorFeed::Ended(why)) => return Err(why),
        Some(MonitorFeed::Event(_)) | None => {
            follower.abort();
            return Err("the event stream did not start with its subscription".into());
        }
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        while let Some(item) = feed.recv().await {
            if let MonitorFeed::Event(event) = item
                && let Some(step) =
                    step_of_event(&event, crate::cert::unix_seconds(SystemTime::now()))
                && tx.send(step).is_err()
            {
                return;
            }
        }
    });
    Ok(StepStream {
        rx,
        follower,
        reader,
    })
}

/// The browser step of one sandbox event, seen at `at`: the `sca` events; `None` for the
/// others.
pub fn step_of_event(event: &MonitorEvent, at: i64) -> Option<BrowserStep> {
    match event {
        MonitorEvent::Sca(sca) => Some(BrowserStep {
            at,
            sca_id: sca.sca_id.clone(),
            step: sca.step.clone(),
            status: sca.status,
            outcome: sca.outcome.clone(),
            code: sca.code.clone(),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sca_event_is_a_step_and_other_events_are_not() {
        let block = "{\"type\":\"sca\",\"sca_id\":\"abc\",\"step\":\"consent\",\"status\":302,\"outcome\":\"success\",\"code\":null,\"injected\":false,\"fault\":null}";
        let event: MonitorEvent = serde_json::from_str(block).unwrap();
        let step = step_of_event(&event, 7).unwrap();
        assert_eq!(step.sca_id, "abc");
        assert_eq!(step.step, "consent");
        assert_eq!(step.status, 302);
        assert_eq!(step.outcome.as_deref(), Some("success"));
        assert_eq!(step.at, 7);
        assert!(step_of_event(&MonitorEvent::Lagged { missed: 1 }, 7).is_none());
    }
}
