//! Fault injection over real HTTP on 127.0.0.1 (`/v1/sandbox/faults`, docs/sandbox.md
//! "Faults and events"): injected error answers marked with `X-Sandbox-Fault` and in the
//! event stream, then normal answers again; rules kept across a restart on a file database
//! and emptied by initialization; delays, dropped connections, payment and SCA outcomes;
//! definitions checked field by field; the `sandbox fault` commands of the binary.

use crate::common;

use std::time::SystemTime;

use common::payments::{DOMESTIC, KARI, kari_payment};
use common::sandbox::{Reply, TestSandbox};
use common::sca::{callback, complete, fixed_sandbox, tick_all};
use common::sse::EventStream;
use psd2_console::sandbox::store::db::Storage;
use psd2_console::sandbox::{Clock, SandboxConfig};
use psd2_console::xs2a::redirect::ScaCallback;
use serde_json::{Value, json};

/// `POST /v1/sandbox/faults` with `definition`, which must answer 201; returns the rule.
async fn add(sb: &TestSandbox, definition: Value) -> Value {
    let r = sb.post_json("/v1/sandbox/faults", &definition).await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.json
}

fn fault_header(r: &Reply) -> Option<&str> {
    r.headers
        .get("x-sandbox-fault")
        .map(|v| v.to_str().unwrap())
}

/// The acceptance test of issue 11: a 503 for the next two `GET /v1/accounts`.
#[tokio::test]
pub(crate) async fn injected_503_answers_twice_is_marked_in_the_event_stream_then_normal_answers_resume()
 {
    let sb = TestSandbox::start().await;
    let normal = sb.get("/v1/accounts").await;
    assert_ne!(normal.status, 503, "{}", normal.text);
    let mut events = EventStream::open(&sb).await;
    let rule = add(
        &sb,
        json!({"action": "error", "method": "GET", "path": "/v1/accounts*", "times": 2,
               "status": 503, "code": "SERVICE_BLOCKED", "text": "maintenance window"}),
    )
    .await;
    let id = rule["id"].as_str().unwrap();
    assert_eq!(rule["remaining"], 2);
    for _ in 0..2 {
        let r = sb.get("/v1/accounts").await;
        r.assert_error(503, "SERVICE_BLOCKED");
        assert_eq!(r.json["tppMessages"][0]["text"], "maintenance window");
        assert_eq!(r.json["tppMessages"][0]["category"], "ERROR");
        assert_eq!(fault_header(&r), Some(id));
    }
    let after = sb.get("/v1/accounts").await;
    assert_eq!(
        (after.status, after.code()),
        (normal.status, normal.code()),
        "{}",
        after.text
    );
    assert_eq!(fault_header(&after), None);
    let seen = events.requests_to("/v1/accounts", 3).await;
    for e in &seen[..2] {
        assert_eq!(e.data["status"], 503);
        assert_eq!(e.data["code"], "SERVICE_BLOCKED");
        assert_eq!(e.data["injected"], true);
        assert_eq!(e.data["fault"], id);
    }
    assert_eq!(seen[2].data["injected"], false);
    assert_eq!(seen[2].data["status"], normal.status);
    // The rule is used up.
    let list = sb.get("/v1/sandbox/faults").await;
    assert_eq!(list.json["faults"], json!([]), "{}", list.text);
}

#[tokio::test]
async fn faults_survive_a_restart_on_a_file_db_and_initialize_resets_them() {
    let dir = tempfile::tempdir().unwrap();
    let config = || SandboxConfig {
        clock: Clock::fixed(SystemTime::now()),
        storage: Storage::File(dir.path().join("sandbox.sqlite3")),
        ..SandboxConfig::default()
    };
    let sb = TestSandbox::start_with(config()).await;
    let rule = add(
        &sb,
        json!({"action": "error", "path": "/v1/sandbox/customers", "times": 3,
               "status": 503, "code": "SERVICE_BLOCKED"}),
    )
    .await;
    sb.get("/v1/sandbox/customers")
        .await
        .assert_error(503, "SERVICE_BLOCKED");
    sb.stop().await;

    let sb = TestSandbox::start_with(config()).await;
    let list = sb.get("/v1/sandbox/faults").await;
    assert_eq!(list.json["faults"][0]["id"], rule["id"], "{}", list.text);
    assert_eq!(list.json["faults"][0]["remaining"], 2);
    sb.get("/v1/sandbox/customers")
        .await
        .assert_error(503, "SERVICE_BLOCKED");
    sb.post_json("/v1/sandbox/initialize", &json!({}))
        .await
        .assert_status(200);
    assert_eq!(sb.get("/v1/sandbox/faults").await.json["faults"], json!([]));
    let r = sb.get("/v1/sandbox/customers").await;
    r.assert_status(200);
    assert_eq!(fault_header(&r), None);
}

#[tokio::test]
async fn a_delay_answers_normally_after_waiting_and_is_marked() {
    let sb = TestSandbox::start().await;
    let normal = sb.get("/v1/sandbox/customers").await;
    let mut events = EventStream::open(&sb).await;
    let rule = add(
        &sb,
        json!({"action": "delay", "path": "/v1/sandbox/customers", "delayMs": 300, "times": 1}),
    )
    .await;
    let r = sb.get("/v1/sandbox/customers").await;
    r.assert_status(200);
    assert_eq!(r.json, normal.json);
    assert_eq!(fault_header(&r), rule["id"].as_str());
    let e = events
        .requests_to("/v1/sandbox/customers", 1)
        .await
        .remove(0);
    assert_eq!(e.data["injected"], true);
    // A lower bound only: the answer cannot come before the delay is over.
    assert!(
        e.data["latency_us"].as_u64().unwrap() >= 300_000,
        "{}",
        e.raw
    );
}

#[tokio::test]
async fn a_drop_closes_the_connection_without_an_answer() {
    let sb = TestSandbox::start().await;
    add(
        &sb,
        json!({"action": "drop", "method": "GET", "path": "/v1/sandbox/customers", "times": 1}),
    )
    .await;
    // A raw connection: the request goes out whole, nothing comes back before the close.
    let request = sb
        .signed(
            common::sandbox::tpp(),
            "GET",
            "/v1/sandbox/customers",
            &[],
            None,
        )
        .build()
        .unwrap();
    let mut raw = format!(
        "GET /v1/sandbox/customers HTTP/1.1\r\nHost: {}\r\n",
        &sb.base[7..]
    );
    for (n, v) in request.headers() {
        raw.push_str(&format!("{n}: {}\r\n", v.to_str().unwrap()));
    }
    raw.push_str("\r\n");
    let addr = sb.base.trim_start_matches("http://").to_string();
    let got = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(raw.as_bytes()).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        got
    })
    .await
    .unwrap();
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));
    // The rule is used up: the next request is answered.
    sb.get("/v1/sandbox/customers").await.assert_status(200);
}

/// A domestic payment of Kari's with `remittance` (payments alike are logical duplicates),
/// approved in the SCA pages; returns its id.
async fn approved_payment(sb: &TestSandbox, remittance: &str) -> String {
    let (id, sca) = sb
        .create_payment(DOMESTIC, &kari_payment("10.00", remittance))
        .await;
    let to_tpp = complete(&sca, KARI, "PRIVATE", |_| {}, "Approve").await;
    assert!(
        matches!(callback(&to_tpp), ScaCallback::Success(_)),
        "{to_tpp}"
    );
    id
}

/// The `transactionStatus` of [`batch_then_status`].
async fn transaction_status_after_batch(sb: &TestSandbox, id: &str) -> Value {
    batch_then_status(sb, id).await["transactionStatus"].clone()
}

async fn batch_then_status(sb: &TestSandbox, id: &str) -> Value {
    sb.send("POST", "/v1/sandbox/batch", &[], None)
        .await
        .assert_status(200);
    sb.get_ok(&format!("/v1/payments/{DOMESTIC}/{id}/status"))
        .await
        .json
}

#[tokio::test]
pub(crate) async fn payment_override_rejects_the_next_payment_only() {
    let sb = fixed_sandbox().await;
    add(
        &sb,
        json!({"action": "rejectPayment", "path": "/v1/payments/*", "times": 1}),
    )
    .await;
    let id = approved_payment(&sb, "Rejected").await;
    assert_eq!(transaction_status_after_batch(&sb, &id).await, "RJCT");
    let next = approved_payment(&sb, "Not rejected").await;
    assert_ne!(transaction_status_after_batch(&sb, &next).await, "RJCT");
}

#[tokio::test]
pub(crate) async fn payment_overrides_insufficient_funds_and_hold_past_a_batch_run() {
    let sb = fixed_sandbox().await;
    add(&sb, json!({"action": "insufficientFunds", "times": 1})).await;
    let id = approved_payment(&sb, "No funds").await;
    let s = batch_then_status(&sb, &id).await;
    assert_eq!(s["transactionStatus"], "ACCP", "{s}");
    assert_eq!(s["fundsAvailable"], false, "{s}");

    add(&sb, json!({"action": "holdPayment", "times": 1})).await;
    let held = approved_payment(&sb, "Held").await;
    assert_eq!(transaction_status_after_batch(&sb, &held).await, "PDNG");
    assert_eq!(transaction_status_after_batch(&sb, &held).await, "PDNG");
}

#[tokio::test]
async fn sca_cancel_outcome_ends_the_consent_sca_as_cancelled_by_the_psu() {
    let sb = fixed_sandbox().await;
    let mut events = EventStream::open(&sb).await;
    let rule = add(&sb, json!({"action": "scaCancel", "times": 1})).await;
    let r = sb
        .get_with("/v1/accounts", &[("TPP-Session-ID", "faults-sca-cancel")])
        .await;
    let href = r.sca_redirect().expect("scaRedirect").to_string();
    let to_tpp = complete(&href, KARI, "PRIVATE", tick_all, "Approve").await;
    match callback(&to_tpp) {
        ScaCallback::Failure(f) => {
            assert_eq!((f.status, f.code.as_str()), (401, "CONSENT_INVALID"));
            assert_eq!(f.message, "PSU cancelled the SCA");
        }
        other => panic!("not a failure: {other:?}"),
    }
    let seen = events
        .until(|e| e.name == "sca" && e.data["step"] == "consent")
        .await;
    let consent = &seen.last().unwrap().data;
    assert_eq!(consent["injected"], true);
    assert_eq!(consent["fault"], rule["id"]);
    assert_eq!(consent["outcome"], "failure");
    assert_eq!(consent["code"], "CONSENT_INVALID");
}

#[tokio::test]
pub(crate) async fn sca_fail_outcome_fails_the_payment_sca_with_the_given_code() {
    let sb = fixed_sandbox().await;
    add(
        &sb,
        json!({"action": "scaFail", "path": "/payment-sca/*", "status": 401,
               "code": "PSU_CREDENTIALS_INVALID", "text": "the one-time code was wrong"}),
    )
    .await;
    let (id, sca) = sb
        .create_payment(DOMESTIC, &kari_payment("10.00", "Fault test"))
        .await;
    let to_tpp = complete(&sca, KARI, "PRIVATE", |_| {}, "Approve").await;
    match callback(&to_tpp) {
        ScaCallback::Failure(f) => {
            assert_eq!(
                (f.status, f.code.as_str()),
                (401, "PSU_CREDENTIALS_INVALID")
            );
            assert_eq!(f.message, "the one-time code was wrong");
        }
        other => panic!("not a failure: {other:?}"),
    }
    let r = sb
        .get(&format!("/v1/payments/{DOMESTIC}/{id}/status"))
        .await;
    assert_eq!(r.json["transactionStatus"], "RJCT", "{}", r.text);
}

#[tokio::test]
async fn bad_definitions_answer_400_format_error_naming_the_field() {
    let sb = TestSandbox::start().await;
    let cases = [
        (json!({"path": "/v1/accounts"}), "action"),
        (
            json!({"action": "explode", "path": "/v1/accounts"}),
            "action",
        ),
        (
            json!({"action": "error", "path": "/v1/accounts", "code": "SERVICE_BLOCKED"}),
            "status",
        ),
        (
            json!({"action": "error", "path": "/v1/accounts", "status": 302, "code": "SERVICE_BLOCKED"}),
            "status",
        ),
        (
            json!({"action": "error", "path": "/v1/accounts", "status": 503, "code": "TEAPOT"}),
            "code",
        ),
        (
            json!({"action": "delay", "path": "/v1/accounts", "delayMs": 3_600_000}),
            "delayMs",
        ),
        (json!({"action": "drop", "path": "v1/accounts"}), "path"),
        (
            json!({"action": "drop", "path": "/v1/accounts", "times": -1}),
            "times",
        ),
        (
            json!({"action": "drop", "path": "/v1/accounts", "method": "BREW"}),
            "method",
        ),
        (
            json!({"action": "drop", "path": "/v1/accounts", "colour": "red"}),
            "colour",
        ),
        (
            json!({"action": "drop", "path": "/v1/accounts", "text": "x"}),
            "text",
        ),
        (json!(["drop"]), "body"),
    ];
    for (body, field) in cases {
        let r = sb.post_json("/v1/sandbox/faults", &body).await;
        r.assert_error(400, "FORMAT_ERROR");
        assert_eq!(
            r.json["tppMessages"][0]["path"], field,
            "{body}: {}",
            r.text
        );
        assert!(
            r.json["tppMessages"][0]["text"]
                .as_str()
                .unwrap()
                .contains(field),
            "{body}: {}",
            r.text
        );
    }
    let r = sb
        .send("POST", "/v1/sandbox/faults", &[], Some("{not json"))
        .await;
    r.assert_error(400, "FORMAT_ERROR");
    assert_eq!(r.json["tppMessages"][0]["path"], "body");
    assert_eq!(sb.get("/v1/sandbox/faults").await.json["faults"], json!([]));
}

#[tokio::test]
pub(crate) async fn rules_are_listed_deleted_one_by_one_and_never_answer_their_own_routes() {
    let sb = TestSandbox::start().await;
    let everything = add(
        &sb,
        json!({"action": "error", "path": "*", "status": 503, "code": "SERVICE_BLOCKED"}),
    )
    .await;
    let second = add(&sb, json!({"action": "holdPayment"})).await;
    let list = sb.get("/v1/sandbox/faults").await;
    list.assert_status(200);
    assert_eq!(fault_header(&list), None);
    let ids: Vec<&Value> = list.json["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["id"])
        .collect();
    assert_eq!(ids, [&everything["id"], &second["id"]]);
    assert_eq!(list.json["faults"][0]["remaining"], Value::Null);
    sb.get("/v1/sandbox/customers")
        .await
        .assert_error(503, "SERVICE_BLOCKED");
    let path = format!("/v1/sandbox/faults/{}", everything["id"].as_str().unwrap());
    sb.delete(&path).await.assert_status(204);
    sb.delete(&path).await.assert_error(404, "RESOURCE_UNKNOWN");
    sb.get("/v1/sandbox/customers").await.assert_status(200);
    let cleared = sb.delete("/v1/sandbox/faults").await;
    assert_eq!(cleared.json["cleared"], 1, "{}", cleared.text);
}

#[test]
fn cli_fault_add_list_clear_against_a_running_server() {
    let (_server, base) = common::cli::serve_in_memory();
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["sandbox", "fault"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--url", &base]);
        common::cli::run(home.path(), &all)
    };
    let (code, out, err) = run(&[
        "add",
        "--method",
        "GET",
        "--path",
        "/v1/accounts*",
        "--status",
        "503",
        "--code",
        "SERVICE_BLOCKED",
        "--times",
        "2",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let rule: Value = serde_json::from_str(&out).unwrap();
    let id = rule["id"].as_str().unwrap();
    let (code, out, err) = run(&["list"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        format!("{id}\terror\tGET /v1/accounts*\t2 left\t503 SERVICE_BLOCKED")
    );
    let (code, out, err) = run(&["add", "--path", "/v1/accounts", "--status", "200"]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("FORMAT_ERROR (status)"), "{err}");
    let (code, out, _) = run(&["add", "--action", "drop", "--path", "/v1/card-accounts*"]);
    assert_eq!(code, 0);
    let drop: Value = serde_json::from_str(&out).unwrap();
    let (code, out, _) = run(&["clear", drop["id"].as_str().unwrap()]);
    assert_eq!(
        (code, out.trim()),
        (
            0,
            format!("removed fault rule {}", drop["id"].as_str().unwrap()).as_str()
        )
    );
    let (code, out, _) = run(&["clear"]);
    assert_eq!((code, out.trim()), (0, "cleared 1 fault rule"));
    let (code, out, _) = run(&["list"]);
    assert_eq!((code, out.trim()), (0, "no fault rules"));
}

/// Issue 18, defect 18: on the embedded profile the fault command names the sandbox of a
/// console running on it (its address) beside a `sandbox serve`.
#[test]
fn cli_fault_on_the_embedded_profile_names_a_running_consoles_sandbox() {
    let home = tempfile::tempdir().unwrap();
    let (code, _, err) = common::cli::run(home.path(), &["sandbox", "fault", "list"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("running console") && err.contains("--url http://127.0.0.1:8088"),
        "{err}"
    );
    assert!(err.contains("sandbox serve"), "{err}");
}
