//! History search (`history --search`, the History screen's `/` through `History::list`):
//! any text of an exchange (header values such as X-Request-ID, TPP-Session-ID and PSU-ID,
//! ids in bodies and URLs), on a real history database; never a Signature value. A history
//! of the first schema is migrated on open and still lists.

use psd2_console::client::history::{History, HistoryEntry, SCHEMA_VERSION};
use psd2_console::profile::{DEFAULT_PROFILE, Paths};
use psd2_console::xs2a::operations;

use crate::common::cli::run;
use crate::common::payments::{DOMESTIC, KARI, domestic, first_bban};

fn headers(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

fn ids(history: &History, search: &str) -> Vec<i64> {
    history
        .list(Some(search), 50)
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect()
}

const SIGNATURE_VALUE: &str = "c2VjcmV0LXNpZ25hdHVyZS12YWx1ZS1vZi10aGUtdHBw";

/// One exchange with the given request headers (plus a Signature), URL and bodies.
fn entry(
    request_id: &str,
    session: &str,
    psu: &str,
    path: &str,
    request_body: &str,
    response_body: &str,
) -> HistoryEntry {
    HistoryEntry {
        at: 1_780_000_000,
        profile: DEFAULT_PROFILE.into(),
        operation_id: "raw".into(),
        method: "GET".into(),
        url: format!("http://127.0.0.1:4000{path}"),
        path_and_query: path.into(),
        request_headers: headers(&[
            ("X-Request-ID", request_id),
            ("TPP-Session-ID", session),
            ("PSU-ID", psu),
            (
                "Signature",
                &format!("keyId=\"SN=1,CA=x\",signature=\"{SIGNATURE_VALUE}\""),
            ),
        ]),
        request_body: request_body.as_bytes().to_vec(),
        status: 200,
        response_headers: headers(&[("X-Request-ID", request_id)]),
        response_body: response_body.as_bytes().to_vec(),
        ..HistoryEntry::default()
    }
}

#[test]
fn search_finds_header_values_ids_and_any_text_but_never_a_signature() {
    let dir = tempfile::tempdir().unwrap();
    let history = History::open(&dir.path().join("history.sqlite3")).unwrap();
    assert_eq!(history.schema_version(), SCHEMA_VERSION);
    let payment = "7f3a9c10-1b2c-4d5e-8f90-aabbccddeeff";
    let create = history
        .insert(&entry(
            "11111111-aaaa-4bbb-8ccc-000000000001",
            "session-one",
            "31125461118",
            "/v1/payments/sepa-credit-transfers",
            "{\"instructedAmount\":{\"amount\":\"1.00\"}}",
            &format!("{{\"paymentId\":\"{payment}\",\"transactionStatus\":\"RCVD\"}}"),
        ))
        .unwrap();
    let status = history
        .insert(&entry(
            "11111111-aaaa-4bbb-8ccc-000000000002",
            "session-one",
            "31125461118",
            &format!("/v1/payments/sepa-credit-transfers/{payment}/status?note=a%20b"),
            "",
            "{\"transactionStatus\":\"ACTC\"}",
        ))
        .unwrap();
    let consent = history
        .insert(&entry(
            "11111111-aaaa-4bbb-8ccc-000000000003",
            "session-two",
            "02079146148 ~|",
            "/v1/consents/cons-91/status",
            "",
            "{\"consentStatus\":\"valid\"}",
        ))
        .unwrap();

    // An X-Request-ID: exactly that exchange.
    assert_eq!(
        ids(&history, "11111111-aaaa-4bbb-8ccc-000000000002"),
        [status]
    );
    // A paymentId from a response body: the create and the status read, newest first.
    assert_eq!(ids(&history, payment), [status, create]);
    assert_eq!(ids(&history, "session-one"), [status, create]);
    assert_eq!(ids(&history, "02079146148"), [consent]);
    assert_eq!(ids(&history, "CONS-91"), [consent], "case-insensitive");
    assert_eq!(
        ids(&history, "\"amount\":\"1.00\""),
        [create],
        "request body"
    );
    assert_eq!(ids(&history, "ACTC"), [status]);
    // Short texts are searched too (no index for fewer than three characters), literally.
    assert_eq!(ids(&history, "~|"), [consent]);
    assert_eq!(ids(&history, "%"), [status]);
    // Signature values are stored redacted: never found, in whole or in part.
    assert!(ids(&history, SIGNATURE_VALUE).is_empty());
    assert!(ids(&history, &SIGNATURE_VALUE[10..30]).is_empty());
    assert!(ids(&history, "no such text anywhere").is_empty());
    assert_eq!(ids(&history, "").len(), 3);
    assert_eq!(history.list(None, 2).unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_sends_are_found_by_payment_id_and_request_id() {
    let (home, _, engine) = crate::common::default_engine().await;

    let create = operations::find("payments.domestic.create").unwrap();
    let body = domestic(&first_bban(KARI), "3.00", "search me").to_string();
    let req = engine.prepare(create, &[], Some(&body)).unwrap();
    let signature = req.header("Signature").unwrap().to_string();
    let (created, create_id) = engine.send_recorded(&req).await.unwrap();
    assert_eq!(created.status, 201, "{}", created.pretty_body());
    let payment = created.json.as_ref().unwrap()["paymentId"]
        .as_str()
        .unwrap()
        .to_string();

    let status = operations::find("payments.status").unwrap();
    let params = [
        ("payment-service", "payments"),
        ("payment-product", DOMESTIC),
        ("payment-id", payment.as_str()),
    ]
    .map(|(k, v)| (k.to_string(), v.to_string()));
    let (read, status_id) = engine
        .send_recorded(&engine.prepare(status, &params, None).unwrap())
        .await
        .unwrap();
    assert_eq!(read.status, 200, "{}", read.pretty_body());

    let customers = operations::find("sandbox.customers.list").unwrap();
    let req = engine.prepare(customers, &[], None).unwrap();
    let request_id = req.header("X-Request-ID").unwrap().to_string();
    let (_, customers_id) = engine.send_recorded(&req).await.unwrap();

    let (create_id, status_id, customers_id) = (
        create_id.unwrap(),
        status_id.unwrap(),
        customers_id.unwrap(),
    );
    {
        let history = engine.history.as_ref().unwrap().lock().unwrap();
        assert_eq!(ids(&history, &payment), [status_id, create_id]);
        assert_eq!(ids(&history, &request_id), [customers_id]);
        let session = engine.session.tpp_session_id.clone().unwrap();
        assert_eq!(
            ids(&history, &session),
            [customers_id, status_id, create_id]
        );
        let value = signature.split("signature=\"").nth(1).unwrap();
        assert!(ids(&history, &value[..40]).is_empty());
    }
    engine.shutdown().await;

    let (code, out, err) = run(
        home.path(),
        &["history", "--search", &payment, "--format", "json"],
    );
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let found: Vec<i64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(found, [status_id, create_id]);
    assert_eq!(rows[0]["replay"], serde_json::Value::Null);
    let (code, out, _) = run(home.path(), &["history", "--search", &request_id]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with(&format!("{customers_id}\t")), "{out}");
}

/// The history schema before replays and search (version 0).
const FIRST_SCHEMA: &str = "
CREATE TABLE exchanges (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, profile TEXT NOT NULL,
    operation_id TEXT NOT NULL, params TEXT NOT NULL, method TEXT NOT NULL, url TEXT NOT NULL,
    path_and_query TEXT NOT NULL, request_headers TEXT NOT NULL, request_body BLOB NOT NULL,
    status INTEGER NOT NULL, response_headers TEXT NOT NULL, response_body BLOB NOT NULL,
    elapsed_ms INTEGER NOT NULL
);
CREATE INDEX exchanges_at ON exchanges(at);
";

#[test]
fn a_history_of_the_first_schema_is_migrated_and_still_lists_and_searches() {
    let home = tempfile::tempdir().unwrap();
    let file = Paths::under(home.path().to_path_buf()).history_file();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    {
        let old = rusqlite::Connection::open(&file).unwrap();
        old.execute_batch(FIRST_SCHEMA).unwrap();
        for (rid, path) in [
            ("aaaaaaaa-0000-4000-8000-000000000001", "/v1/accounts"),
            ("aaaaaaaa-0000-4000-8000-000000000002", "/v1/consents"),
        ] {
            old.execute(
                "INSERT INTO exchanges (at, profile, operation_id, params, method, url,
                   path_and_query, request_headers, request_body, status, response_headers,
                   response_body, elapsed_ms)
                 VALUES (1780000000, 'Old', 'raw', '[]', 'GET', ?1, ?2, ?3, x'', 200, '[]',
                   CAST('{\"old\":true}' AS BLOB), 5)",
                rusqlite::params![
                    format!("http://127.0.0.1:4000{path}"),
                    path,
                    format!("[[\"X-Request-ID\",\"{rid}\"]]"),
                ],
            )
            .unwrap();
        }
        let version: i64 = old
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, 0);
    }

    let (code, out, err) = run(home.path(), &["history"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("2\t") && lines[0].ends_with("GET http://127.0.0.1:4000/v1/consents")
    );
    let (code, out, err) = run(
        home.path(),
        &[
            "history",
            "--search",
            "aaaaaaaa-0000-4000-8000-000000000001",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("1\t"), "{out}");

    let history = History::open(&file).unwrap();
    assert_eq!(history.schema_version(), SCHEMA_VERSION);
    assert_eq!(history.replay_info(1).unwrap(), None);
    assert_eq!(history.list(None, 10).unwrap().len(), 2);
    let new = history
        .insert(&entry("bbbb", "s", "p", "/v1/new", "", "{\"old\":false}"))
        .unwrap();
    assert_eq!(ids(&history, "\"old\":"), [new, 2, 1]);
    drop(history);
    let check = rusqlite::Connection::open(&file).unwrap();
    let version: i64 = check
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}
