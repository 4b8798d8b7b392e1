//! The sandbox's event stream over real HTTP (`GET /v1/sandbox/events`, server-sent events;
//! docs/sandbox.md "Faults and events"): the verifier's breakdown of a refused request (the
//! failed step and the signing string as the server rebuilt it), never a `Signature` value;
//! batch runs and clock changes; the stream is signed like the other management operations.

use crate::common;

use common::sandbox::{Reply, TestSandbox, tpp};
use common::sse::{EventStream, SseEvent};
use psd2_console::signing::imf_fixdate;
use serde_json::json;

#[tokio::test]
async fn an_unsigned_requests_event_shows_the_failed_step_and_the_rebuilt_signing_string() {
    let sb = TestSandbox::start().await;
    let mut events = EventStream::open(&sb).await;
    let date = imf_fixdate(sb.now());
    let id = uuid::Uuid::new_v4().to_string();
    let r = sb
        .http
        .get(format!("{}/v1/accounts?withBalance=true", sb.base))
        .header("X-Request-ID", &id)
        .header("Date", &date)
        .send()
        .await
        .unwrap();
    let r = Reply::of(r).await;
    r.assert_error(400, "SIGNATURE_MISSING");
    let e = events.requests_to("/v1/accounts", 1).await.remove(0);
    assert_eq!(e.name, "request");
    assert_eq!(e.data["type"], "request");
    assert_eq!(e.data["method"], "GET");
    assert_eq!(e.data["status"], 400);
    assert_eq!(e.data["code"], "SIGNATURE_MISSING");
    assert_eq!(e.data["verify"], "SignatureMissing");
    assert_eq!(e.data["request_id"], id.as_str());
    assert_eq!(e.data["injected"], false);
    assert_eq!(
        e.data["signing_string"],
        format!("date: {date}\nx-request-id: {id}")
    );
    assert!(
        !e.raw.contains("withBalance"),
        "the path has no query: {}",
        e.raw
    );
}

/// The `signature="..."` part of a `Signature` header value.
fn signature_bytes(header: &str) -> String {
    let start = header.find("signature=\"").unwrap() + "signature=\"".len();
    let end = header[start..].find('"').unwrap() + start;
    header[start..end].to_string()
}

#[tokio::test]
async fn no_signature_value_is_ever_in_an_event() {
    let sb = TestSandbox::start().await;
    let mut events = EventStream::open(&sb).await;
    let mut signatures = Vec::new();
    // A good request, and one whose X-Request-ID was changed after signing.
    for tamper in [false, true] {
        let mut req = sb
            .signed(tpp(), "GET", "/v1/sandbox/customers", &[], None)
            .build()
            .unwrap();
        let value = req.headers()["signature"].to_str().unwrap().to_string();
        signatures.push(signature_bytes(&value));
        signatures.push(value);
        if tamper {
            req.headers_mut()
                .insert("x-request-id", "tampered-after-signing".parse().unwrap());
        }
        let r = Reply::of(sb.http.execute(req).await.unwrap()).await;
        if tamper {
            r.assert_error(400, "SIGNATURE_INVALID");
        } else {
            r.assert_status(200);
        }
    }
    let seen: Vec<SseEvent> = events.requests_to("/v1/sandbox/customers", 2).await;
    assert_eq!(seen[0].data["verify"], json!(null));
    assert_eq!(seen[1].data["verify"], "SignatureInvalid");
    let rebuilt = seen[1].data["signing_string"].as_str().unwrap();
    assert!(
        rebuilt.contains("x-request-id: tampered-after-signing"),
        "{rebuilt}"
    );
    for e in &seen {
        assert!(
            !e.raw.to_ascii_lowercase().contains("signature: "),
            "{}",
            e.raw
        );
        for s in &signatures {
            assert!(
                !e.raw.contains(s.as_str()),
                "a Signature value in {}",
                e.raw
            );
        }
    }
}

#[tokio::test]
async fn clock_changes_and_batch_runs_are_events() {
    let sb = common::sca::fixed_sandbox().await;
    let mut events = EventStream::open(&sb).await;
    sb.post_json("/v1/sandbox/clock", &json!({"advanceSeconds": 3600}))
        .await
        .assert_status(200);
    let clock = events.until(|e| e.name == "clock").await.pop().unwrap();
    assert_eq!(clock.data["reason"], "advance");
    assert_eq!(clock.data["offset_secs"], 3600);
    sb.send("POST", "/v1/sandbox/batch", &[], None)
        .await
        .assert_status(200);
    let batch = events.until(|e| e.name == "batch").await.pop().unwrap();
    assert_eq!(batch.data["all"], true);
    assert_eq!(batch.data["settled"], 0);
    sb.post_json("/v1/sandbox/initialize", &json!({}))
        .await
        .assert_status(200);
    let reset = events.until(|e| e.name == "clock").await.pop().unwrap();
    assert_eq!(reset.data["reason"], "initialize");
    assert_eq!(reset.data["offset_secs"], 0);
}

#[tokio::test]
async fn the_event_stream_is_refused_without_a_signature() {
    let sb = TestSandbox::start().await;
    let r = sb
        .http
        .get(format!("{}/v1/sandbox/events", sb.base))
        .header("X-Request-ID", uuid::Uuid::new_v4().to_string())
        .send()
        .await
        .unwrap();
    Reply::of(r).await.assert_error(400, "SIGNATURE_MISSING");
}

/// Issue 20, finding 9: a TPP may hold at most eight event streams open; the ninth is 429
/// `ACCESS_EXCEEDED` (300 streams that never read were all accepted before), and another TPP
/// is not affected.
#[tokio::test]
async fn a_tpp_gets_at_most_eight_event_streams_at_once() {
    use psd2_console::sandbox::domain::events::MAX_SUBSCRIBERS_PER_TPP;
    let sb = TestSandbox::start().await;
    let mut open = Vec::new();
    for _ in 0..MAX_SUBSCRIBERS_PER_TPP {
        open.push(EventStream::open(&sb).await);
    }
    let ninth = sb
        .signed(tpp(), "GET", "/v1/sandbox/events", &[], None)
        .send()
        .await
        .unwrap();
    Reply::of(ninth).await.assert_error(429, "ACCESS_EXCEEDED");
    let other = common::sandbox::tpp_with_roles(&[
        psd2_console::cert::Psd2Role::PspAi,
        psd2_console::cert::Psd2Role::PspPi,
    ]);
    let r = sb
        .signed(&other, "GET", "/v1/sandbox/events", &[], None)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "another TPP has its own streams");
    drop(open);
}
