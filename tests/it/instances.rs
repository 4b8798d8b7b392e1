//! Many `sandbox serve` instances on one PostgreSQL database (issue 21, "PostgreSQL and many
//! instances"), on the real binary: two processes started by the test on one database of
//! the test cluster ([`crate::common::pg`]). The replay guard refuses a repeat sent to the
//! other instance; a fault rule added through one answers the other's requests; the event
//! stream of one carries the other's requests of the same TPP (and only that TPP's); a batch
//! run through both executes a payment once; a burst of payment creations over both, with
//! one instance killed (SIGKILL) in the middle, loses and duplicates nothing. Skipped where
//! PostgreSQL is absent (never in CI).

use std::time::Duration;

use crate::common;
use common::cli::Server;
use common::payments::{DOMESTIC, KARI, kari_payment, kari_pays};
use common::pg::PgCluster;
use common::sandbox::{TestSandbox, tpp, tpp_of};
use common::sca::{callback, complete_sca};
use common::sse::EventStream;
use psd2_console::xs2a::redirect::ScaCallback;
use serde_json::{Value, json};

/// Two instances A and B on a new database of the test cluster (A first: it migrates and
/// seeds), with the database's URL; `None` where PostgreSQL is absent.
async fn two_instances() -> Option<(
    PgCluster2,
    String,
    (Server, TestSandbox),
    (Server, TestSandbox),
)> {
    let cluster = PgCluster::get()?;
    let url = cluster.database();
    let start = |url: String| async move {
        let (server, base) =
            tokio::task::spawn_blocking(move || crate::common::cli::serve_with(&["--db", &url]))
                .await
                .unwrap();
        (server, crate::common::sandbox::TestSandbox::remote(&base))
    };
    let a = start(url.clone()).await;
    let b = start(url.clone()).await;
    Some((cluster, url, a, b))
}

type PgCluster2 = std::sync::Arc<PgCluster>;

/// A connection to the database at `url`, for counting rows behind the instances' backs.
async fn database(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

/// Point 1: an `X-Request-ID` accepted by instance A is refused when sent again to B (and
/// to A), as a replay (400 `FORMAT_ERROR` naming the header); another id passes on B.
#[tokio::test(flavor = "multi_thread")]
async fn a_request_id_accepted_by_one_instance_is_refused_by_another() {
    let Some((_cluster, _url, (_sa, a), (_sb, b))) = two_instances().await else {
        return;
    };
    let id = uuid::Uuid::new_v4().to_string();
    let first = a
        .send(
            "GET",
            "/v1/sandbox/customers",
            &[("X-Request-ID", &id)],
            None,
        )
        .await;
    first.assert_status(200);
    for (name, sb) in [("B", &b), ("A", &a)] {
        let again = sb
            .send(
                "GET",
                "/v1/sandbox/customers",
                &[("X-Request-ID", &id)],
                None,
            )
            .await;
        again.assert_error(400, "FORMAT_ERROR");
        assert!(
            again.text.contains("already used"),
            "repeat on {name}: {}",
            again.text
        );
    }
    b.get_ok("/v1/sandbox/customers").await;
}

/// Point 3 (faults): a rule added through A answers B's next matching request, then (its one
/// answer taken) neither instance answers with it; a rule cleared through B is gone on A.
#[tokio::test(flavor = "multi_thread")]
async fn a_fault_rule_added_through_one_instance_answers_the_others_requests() {
    let Some((_cluster, _url, (_sa, a), (_sb, b))) = two_instances().await else {
        return;
    };
    let rule = a
        .post_json(
            "/v1/sandbox/faults",
            &json!({"action": "error", "path": "/v1/sandbox/customers", "status": 503,
                    "code": "SERVICE_BLOCKED", "text": "down on every instance", "times": 1}),
        )
        .await;
    rule.assert_status(201);
    let on_b = b.get("/v1/sandbox/customers").await;
    on_b.assert_error(503, "SERVICE_BLOCKED");
    assert_eq!(
        on_b.header("x-sandbox-fault"),
        rule.json["id"].as_str().unwrap()
    );
    a.get_ok("/v1/sandbox/customers").await;
    b.get_ok("/v1/sandbox/customers").await;

    // Until cleared: added on A, cleared on B.
    a.post_json(
        "/v1/sandbox/faults",
        &json!({"action": "error", "path": "/v1/sandbox/customers", "status": 503,
                "code": "SERVICE_BLOCKED"}),
    )
    .await
    .assert_status(201);
    b.get("/v1/sandbox/customers")
        .await
        .assert_error(503, "SERVICE_BLOCKED");
    let cleared = b.delete("/v1/sandbox/faults").await;
    cleared.assert_status(200);
    assert_eq!(cleared.json["cleared"], 1, "{}", cleared.text);
    a.get_ok("/v1/sandbox/customers").await;
}

/// Point 3 (events): the event stream of a TPP subscribed on A carries the request that TPP
/// sent to B, and not the request another TPP sent to B just before (tenancy holds across
/// instances).
#[tokio::test(flavor = "multi_thread")]
async fn the_event_stream_of_one_instance_carries_the_requests_another_served() {
    let Some((_cluster, _url, (_sa, a), (_sb, b))) = two_instances().await else {
        return;
    };
    let mut events = EventStream::open_as(&a, tpp(), "/v1/sandbox/events").await;
    let other = tpp_of("Other Instances TPP", "PSDNO-FSA-INST2", None);
    let theirs = uuid::Uuid::new_v4().to_string();
    b.send_as(
        other,
        "GET",
        "/v1/sandbox/customers",
        &[("X-Request-ID", &theirs)],
        None,
    )
    .await
    .assert_status(200);
    let mine = uuid::Uuid::new_v4().to_string();
    b.send(
        "GET",
        "/v1/sandbox/customers",
        &[("X-Request-ID", &mine)],
        None,
    )
    .await
    .assert_status(200);
    let seen = events.requests_to("/v1/sandbox/customers", 1).await;
    assert_eq!(seen[0].data["request_id"], mine.as_str(), "{}", seen[0].raw);
    assert_eq!(seen[0].data["status"], 200);
}

/// Point 2: a payment authorised through A; the batch run asked of both instances at once
/// executes it once: one run reports it settled, the other finds nothing to run, and the
/// database holds one set of its bookings.
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_run_through_two_instances_executes_a_payment_once() {
    let Some((_cluster, url, (_sa, a), (_sb, b))) = two_instances().await else {
        return;
    };
    let remittance = format!("batch once {}", uuid::Uuid::new_v4());
    let (id, sca) = kari_pays(&a, DOMESTIC, "3.00", &remittance).await;
    let to_tpp = complete_sca(&sca, KARI).await;
    assert!(
        matches!(callback(&to_tpp), ScaCallback::Success(_)),
        "{to_tpp}"
    );
    let (ra, rb) = tokio::join!(
        a.send("POST", "/v1/sandbox/batch", &[], None),
        b.send("POST", "/v1/sandbox/batch", &[], None)
    );
    ra.assert_status(200);
    rb.assert_status(200);
    let settled = |r: &Value| r["settled"].as_u64().unwrap_or(0);
    assert_eq!(
        settled(&ra.json) + settled(&rb.json),
        1,
        "A: {} B: {}",
        ra.text,
        rb.text
    );
    for sb in [&a, &b] {
        let s = sb
            .get_ok(&format!("/v1/payments/{DOMESTIC}/{id}/status"))
            .await;
        assert_eq!(s.json["transactionStatus"], "ACSC", "{}", s.text);
    }
    let db = database(&url).await;
    let bookings: i64 = db
        .query_one(
            "SELECT COUNT(*) FROM manual_transactions WHERE remittance = $1",
            &[&remittance],
        )
        .await
        .unwrap()
        .get(0);
    // Kari's debit, and the credit when the creditor is a sandbox account: at most two,
    // never a second set.
    assert!((1..=2).contains(&bookings), "{bookings} bookings");
    let debits: i64 = db
        .query_one(
            "SELECT COUNT(*) FROM manual_transactions WHERE remittance = $1 AND amount < 0",
            &[&remittance],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(debits, 1);
}

/// Point 4: a burst of payment creations spread over two instances, B killed with SIGKILL
/// during the burst: every creation answered 201 is in the database exactly once, and no
/// payment is there twice (counted by the remittance each request carries). Prints the
/// figures (BENCHMARKS.md, "SIGKILL during a burst").
#[tokio::test(flavor = "multi_thread")]
async fn no_payment_is_lost_or_duplicated_when_an_instance_is_killed_during_a_burst() {
    let Some((_cluster, url, (_sa, a), (mut sb_server, b))) = two_instances().await else {
        return;
    };
    const TOTAL: usize = 240;
    const KILL_AFTER: usize = 80;
    const CONCURRENCY: usize = 8;
    let run = uuid::Uuid::new_v4().simple().to_string();
    let a = std::sync::Arc::new(a);
    let b = std::sync::Arc::new(b);
    let started = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (kill_tx, kill_rx) = tokio::sync::oneshot::channel::<()>();
    let kill_tx = std::sync::Arc::new(std::sync::Mutex::new(Some(kill_tx)));
    let mut tasks = Vec::new();
    for worker in 0..CONCURRENCY {
        let (a, b, started, kill_tx, run) = (
            a.clone(),
            b.clone(),
            started.clone(),
            kill_tx.clone(),
            run.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut answered = Vec::new();
            loop {
                let n = started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if n >= TOTAL {
                    return answered;
                }
                if n == KILL_AFTER
                    && let Some(tx) = kill_tx.lock().unwrap().take()
                {
                    let _ = tx.send(());
                }
                let sb = if (n + worker) % 2 == 0 { &a } else { &b };
                let remittance = format!("burst {run} {n}");
                let body = kari_payment("1.00", &remittance).to_string();
                let path = format!("/v1/payments/{DOMESTIC}");
                let request = sb.signed(tpp(), "POST", &path, &[], Some(&body));
                if let Ok(r) = request.send().await
                    && r.status().as_u16() == 201
                {
                    answered.push(remittance);
                }
            }
        }));
    }
    kill_rx.await.unwrap();
    sb_server.0.kill().unwrap();
    let _ = sb_server.0.wait();
    let mut answered = Vec::new();
    for t in tasks {
        answered.extend(t.await.unwrap());
    }
    let db = database(&url).await;
    let rows = db
        .query(
            "SELECT body FROM pis_payments WHERE body LIKE $1",
            &[&format!("%burst {run} %")],
        )
        .await
        .unwrap();
    let mut stored: std::collections::HashMap<String, usize> = Default::default();
    for r in rows {
        let body: String = r.get(0);
        let v: Value = serde_json::from_str(&body).unwrap();
        let remittance = v["remittanceInformationUnstructured"]
            .as_str()
            .unwrap()
            .to_string();
        *stored.entry(remittance).or_default() += 1;
    }
    let present = answered
        .iter()
        .filter(|r| stored.get(*r) == Some(&1))
        .count();
    let lost = answered.iter().filter(|r| !stored.contains_key(*r)).count();
    let duplicated = stored.values().filter(|n| **n > 1).count();
    println!(
        "SIGKILL during a burst: sent {TOTAL} over 2 instances ({CONCURRENCY} at a time, B \
         killed after {KILL_AFTER}): answered 201 {}, present {present}, lost {lost}, \
         duplicated {duplicated}, stored {} (answered or not)",
        answered.len(),
        stored.len()
    );
    assert!(answered.len() > KILL_AFTER / 2, "the burst ran");
    assert_eq!(lost, 0, "a payment answered 201 is missing");
    assert_eq!(duplicated, 0, "a payment is stored twice");
    assert_eq!(present, answered.len());
}

/// A TPP's clock moved through A is that TPP's clock on B too (docs/sandbox.md, "Many
/// instances on one PostgreSQL database"): B answers `GET /v1/sandbox/clock` with the moved
/// time and accepts requests signed at it; another TPP's clock stays where it was on both.
#[tokio::test(flavor = "multi_thread")]
async fn a_clock_moved_through_one_instance_is_the_tpps_clock_on_the_other() {
    let Some((_cluster, _url, (_sa, a), (_sb, b))) = two_instances().await else {
        return;
    };
    let other = tpp_of("Other Clock TPP", "PSDNO-FSA-CLOCK2", None);
    let before = b.get("/v1/sandbox/clock").await;
    before.assert_status(200);
    let before =
        chrono::DateTime::parse_from_rfc3339(before.json["now"].as_str().unwrap()).unwrap();
    let two_days = 2 * 86_400;
    a.post_json("/v1/sandbox/clock", &json!({"advanceSeconds": two_days}))
        .await
        .assert_status(200);
    // The test's clients sign at the TPP's moved time, as the console does.
    let me = common::sandbox::tpp_id(tpp());
    for sb in [&a, &b] {
        sb.clock
            .set_world_offset(&me, Duration::from_secs(two_days));
    }
    let on_b = b.get("/v1/sandbox/clock").await;
    on_b.assert_status(200);
    let moved = chrono::DateTime::parse_from_rfc3339(on_b.json["now"].as_str().unwrap()).unwrap();
    assert!(
        moved - before >= chrono::Duration::seconds(two_days as i64),
        "B's time for the TPP moved by two days: {before} -> {moved}"
    );
    // Another TPP's time on B did not move.
    let theirs = b
        .send_as(other, "GET", "/v1/sandbox/clock", &[], None)
        .await;
    theirs.assert_status(200);
    let theirs =
        chrono::DateTime::parse_from_rfc3339(theirs.json["now"].as_str().unwrap()).unwrap();
    assert!(
        theirs - before < chrono::Duration::hours(1),
        "the other TPP's time stays: {before} -> {theirs}"
    );
}
