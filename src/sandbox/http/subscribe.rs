//! `GET /v1/sandbox/events[?scope=all]`: who reads which events of the stream
//! ([`crate::sandbox::domain::events`]). A TPP reads its own TPP's events; `scope=all` (every TPP's, and the
//! requests of nobody) is on the operator plane ([`crate::sandbox::http::operator`]) and answers 403
//! `SERVICE_BLOCKED` off it. Kept apart from [`crate::sandbox::domain::events`], which the access log feeds,
//! so that the event types do not depend on the signature check.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};

use crate::sandbox::App;
use crate::sandbox::domain::events::{Event, Owned, Received, receive};
use crate::sandbox::http::auth::Tpp;
use crate::sandbox::http::operator;

fn sse_event(e: &Event) -> SseEvent {
    SseEvent::default()
        .event(e.kind())
        .data(serde_json::to_string(e).unwrap_or_default())
}

/// Which events a subscriber reads: every TPP's (operator plane) or one TPP's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Audience {
    /// `?scope=all` on the operator plane.
    All,
    /// The subscribing TPP (its id).
    Tpp(String),
}

impl Audience {
    /// Whether `e` is for this audience.
    pub fn sees(&self, e: &Owned) -> bool {
        match self {
            Audience::All => true,
            Audience::Tpp(t) => e.owner.as_deref() == Some(t.as_str()),
        }
    }
}

/// `GET /v1/sandbox/events[?scope=all]`: the event stream (see the module documentation).
/// Only signed requests reach it: the signature check refuses the others before any `/v1`
/// handler.
///
/// A TPP may hold at most [`crate::sandbox::domain::events::MAX_SUBSCRIBERS_PER_TPP`] streams at once (the
/// slot lives as long as the stream).
///
/// Errors: 403 `SERVICE_BLOCKED` for `scope=all` off the operator plane; 429
/// `ACCESS_EXCEEDED` for a TPP with all its streams open (issue 20, finding 9).
pub async fn stream(
    State(app): State<Arc<App>>,
    tpp: Tpp,
    req: axum::extract::Request,
) -> Response {
    let (parts, _) = req.into_parts();
    let audience = if operator::wants_all(&parts) {
        if !operator::is_operator(&app, &parts.extensions, &parts.headers) {
            return operator::refused("every TPP's event stream (scope=all)").into_response();
        }
        Audience::All
    } else {
        Audience::Tpp(tpp.id.0.to_string())
    };
    let Some(slot) = app.events.slots.take(&tpp.id.0) else {
        return crate::sandbox::errors::ApiError::new(
            crate::xs2a::error::MessageCode::AccessExceeded,
            format!(
                "this TPP has {} event streams open already; close one before opening another",
                crate::sandbox::domain::events::MAX_SUBSCRIBERS_PER_TPP
            ),
        )
        .into_response();
    };
    let rx = app.events.subscribe();
    let first = SseEvent::default().comment("subscribed");
    let state = (rx, Some(first), (audience, slot));
    let events = futures_util::stream::unfold(state, |(mut rx, first, held)| async move {
        let audience = &held.0;
        if let Some(f) = first {
            return Some((Ok::<_, Infallible>(f), (rx, None, held)));
        }
        let e = loop {
            match receive(&mut rx).await? {
                Received::Event(e) if audience.sees(&e) => break sse_event(&e.event),
                Received::Event(_) => {}
                Received::Lagged(missed) => break sse_event(&Event::Lagged { missed }),
            }
        };
        Some((Ok(e), (rx, None, held)))
    });
    let mut r = Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response();
    // An endless body: the response observer must not buffer it.
    r.extensions_mut()
        .insert(crate::sandbox::http::observe::Unobserved);
    r
}
