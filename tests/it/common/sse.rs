//! A subscriber of the sandbox's event stream (`GET /v1/sandbox/events`, server-sent
//! events) over real HTTP: reads the `text/event-stream` body chunk by chunk and splits it
//! into events (`event:` name, `data:` JSON, and the raw text as received).

#![allow(dead_code)]

use std::time::Duration;

use serde_json::Value;

use super::sandbox::{TestSandbox, tpp};

/// Longest wait for the next chunk: a guard against a hanging test, not a timing assertion.
const PATIENCE: Duration = Duration::from_secs(60);

/// One event as received.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// The `event:` name (`request`, `sca`, ...).
    pub name: String,
    /// The `data:` JSON.
    pub data: Value,
    /// The event's text as it came over the wire.
    pub raw: String,
}

/// An open subscription.
pub struct EventStream {
    response: reqwest::Response,
    buffer: String,
}

impl EventStream {
    /// Subscribes to every TPP's events (a signed `GET /v1/sandbox/events?scope=all`, the
    /// operator plane: the test runs on loopback) and waits for the `: subscribed` comment,
    /// so every later request of the test is in the stream.
    pub async fn open(sb: &TestSandbox) -> EventStream {
        Self::open_as(sb, tpp(), "/v1/sandbox/events?scope=all").await
    }

    /// Subscribes with `credentials` at `path` (`/v1/sandbox/events`: that TPP's own
    /// events) and waits for the `: subscribed` comment.
    pub async fn open_as(
        sb: &TestSandbox,
        credentials: &psd2_console::cert::Credentials,
        path: &str,
    ) -> EventStream {
        let response = sb
            .signed(credentials, "GET", path, &[], None)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let ct = response.headers()["content-type"].to_str().unwrap();
        assert!(ct.starts_with("text/event-stream"), "{ct}");
        let mut s = EventStream {
            response,
            buffer: String::new(),
        };
        let first = s.block().await;
        assert!(first.starts_with(':'), "first block: {first:?}");
        assert!(first.contains("subscribed"), "first block: {first:?}");
        s
    }

    /// The next block (the text up to a blank line).
    async fn block(&mut self) -> String {
        loop {
            if let Some(i) = self.buffer.find("\n\n") {
                let b = self.buffer[..i].to_string();
                self.buffer.drain(..i + 2);
                return b;
            }
            let chunk = tokio::time::timeout(PATIENCE, self.response.chunk())
                .await
                .expect("no event within 60 s")
                .unwrap()
                .expect("the event stream ended");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// The next event (comments, e.g. keep-alives, are skipped).
    pub async fn next(&mut self) -> SseEvent {
        loop {
            let raw = self.block().await;
            if raw.lines().all(|l| l.starts_with(':')) {
                continue;
            }
            let mut name = String::new();
            let mut data = String::new();
            for l in raw.lines() {
                if let Some(v) = l.strip_prefix("event:") {
                    name = v.trim().to_string();
                } else if let Some(v) = l.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            let data = serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {raw}"));
            return SseEvent { name, data, raw };
        }
    }

    /// Events up to and including the first for which `done` holds.
    pub async fn until(&mut self, done: impl Fn(&SseEvent) -> bool) -> Vec<SseEvent> {
        let mut seen = Vec::new();
        loop {
            let e = self.next().await;
            let stop = done(&e);
            seen.push(e);
            if stop {
                return seen;
            }
        }
    }

    /// The `request` events of `path` (in order) among the next events, reading until `n`
    /// of them arrived.
    pub async fn requests_to(&mut self, path: &str, n: usize) -> Vec<SseEvent> {
        let mut out = Vec::new();
        while out.len() < n {
            let e = self.next().await;
            if e.name == "request" && e.data["path"] == path {
                out.push(e);
            }
        }
        out
    }
}
