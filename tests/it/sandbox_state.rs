//! The sandbox's durable state over real HTTP: seeding of a new database, state kept across a
//! restart on a file database (customers and a PSU's consent), sandbox initialization
//! resetting every module's tables in one transaction, and concurrent creations neither
//! losing nor duplicating rows (interface document, Endpoints: "Sandbox initialization ...
//! discards manually created customers and accounts"; Authentication 11: consent gathered
//! during SCA).

use crate::common;

use std::time::SystemTime;

use common::Form;
use common::sandbox::{Reply, TestSandbox};
use common::sca::{complete, success};
use psd2_console::sandbox::store::db::{Db, Storage};
use psd2_console::sandbox::{Clock, MIGRATIONS, SandboxConfig, domain::seed};
use serde_json::{Value, json};

fn config(storage: Storage) -> SandboxConfig {
    SandboxConfig {
        clock: Clock::fixed(SystemTime::now()),
        storage,
        ..SandboxConfig::default()
    }
}

fn ids(list: &[Value], key: &str) -> Vec<String> {
    list.iter()
        .map(|c| c[key].as_str().unwrap().to_string())
        .collect()
}

/// A signed GET of `path` with `PSU-ID: psu_id`, which must answer 200.
async fn read_as(sb: &TestSandbox, psu_id: &str, path: &str) -> Reply {
    sb.get_with_ok(path, &[("PSU-ID", psu_id)]).await
}

/// Completes the consent SCA in the HTML forms as `number` (PRIVATE context, every offered
/// account ticked) and returns the redirect's psu-id.
async fn sca_psu_id(sb: &TestSandbox, number: &str) -> String {
    let r = sb.get("/v1/accounts").await;
    r.assert_status(401);
    let href = r.sca_redirect().expect("scaRedirect");
    let tick_accounts = |f: &mut Form| {
        for (n, v) in f.unchecked.clone() {
            if n == "account" {
                f.check(&n, &v);
            }
        }
    };
    success(&complete(href, number, "PRIVATE", tick_accounts, "Approve").await).psu_id
}

#[tokio::test]
pub(crate) async fn a_new_database_is_seeded_with_the_known_state() {
    let dir = tempfile::tempdir().unwrap();
    let sb = TestSandbox::start_with(config(Storage::File(dir.path().join("s.sqlite3")))).await;
    let list = sb.customers().await;
    let known = seed::seed();
    assert_eq!(
        ids(&list, "customerId"),
        known
            .customers
            .iter()
            .map(|c| c.id.to_string())
            .collect::<Vec<_>>(),
        "the seed's deterministic ids, in seed order"
    );
    for (c, k) in list.iter().zip(&known.customers) {
        assert_eq!(c["customerNumber"], k.number.as_str());
        let accounts: Vec<String> = known
            .accounts
            .iter()
            .filter(|a| a.owner == k.id)
            .map(|a| a.id.to_string())
            .collect();
        let listed = crate::common::sandbox::strings(&c["accounts"]);
        assert_eq!(listed, accounts);
    }
    // An in-memory sandbox starts in the same state.
    let mem = TestSandbox::start_with(config(Storage::InMemory)).await;
    assert_eq!(mem.customers().await, list);
}

#[tokio::test]
async fn state_survives_a_restart_on_a_file_database() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("state/sandbox.sqlite3");
    let (created, psu_id, accounts, booked) = {
        let sb = TestSandbox::start_with(config(Storage::File(file.clone()))).await;
        let r = sb
            .post_created(
                "/v1/sandbox/customers",
                &json!({"customerType": "PRIVATE", "customerName": "Astrid Lund"}),
            )
            .await;
        let created = r.json.clone();
        let number = created["customerNumber"].as_str().unwrap().to_string();
        let account = created["accounts"][0].as_str().unwrap().to_string();
        sb.post_created(
            &format!("/v1/sandbox/accounts/{account}/transactions"),
            &json!({"transactionAmount": {"currency": "NOK", "amount": "-77.00"},
                    "creditorName": "Kaffebrenneriet"}),
        )
        .await;
        let psu_id = sca_psu_id(&sb, &number).await;
        let a = sb.get_with_ok("/v1/accounts", &[("PSU-ID", &psu_id)]).await;
        let path = format!("/v1/accounts/{account}/transactions?bookingStatus=booked&limit=5");
        let b = read_as(&sb, &psu_id, &path).await;
        let booked = b.json["transactions"]["booked"][0].clone();
        sb.stop().await;
        (created, psu_id, a.json, booked)
    };
    assert_eq!(booked["creditorName"], "Kaffebrenneriet");

    let sb = TestSandbox::start_with(config(Storage::File(file))).await;
    let list = sb.customers().await;
    assert_eq!(
        list.len(),
        6,
        "the seed and the created customer, not reseeded"
    );
    assert_eq!(list.last(), Some(&created));
    // The PSU who did SCA before the restart reads its accounts without a new SCA.
    let a = sb.get_with_ok("/v1/accounts", &[("PSU-ID", &psu_id)]).await;
    assert_eq!(a.json, accounts);
    let account = created["accounts"][0].as_str().unwrap();
    let b = sb
        .get_with(
            &format!("/v1/accounts/{account}/transactions?bookingStatus=booked&limit=5"),
            &[("PSU-ID", &psu_id)],
        )
        .await;
    assert_eq!(
        b.json["transactions"]["booked"][0], booked,
        "same transactionId"
    );
}

#[tokio::test]
async fn initialize_resets_every_table_to_the_known_state() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    // Another module's table, with a row, in the same database.
    {
        let db = Db::open(&Storage::File(file.clone())).unwrap();
        db.migrate(MIGRATIONS).unwrap();
        db.migrate(&[(
            "test_other_module",
            "CREATE TABLE other_module_rows (id INTEGER PRIMARY KEY AUTOINCREMENT, \
             account TEXT REFERENCES accounts(id))",
        )])
        .unwrap();
    }
    let sb = TestSandbox::start_with(config(Storage::File(file.clone()))).await;
    let known = sb.customers().await;
    sb.post_created(
        "/v1/sandbox/customers",
        &json!({"customerType": "CORPORATE", "customerName": "Midlertidig AS"}),
    )
    .await;
    let seeded_account = known[0]["accounts"][0].as_str().unwrap().to_string();
    {
        let db = Db::open(&Storage::File(file.clone())).unwrap();
        db.write(|tx| {
            tx.execute(
                "INSERT INTO other_module_rows (account) VALUES (?1)",
                [&seeded_account],
            )
        })
        .unwrap();
    }
    sb.post_ok(
        &format!("/v1/sandbox/accounts/{seeded_account}/balances"),
        &json!({"booked": {"currency": "NOK", "amount": "1.00"}}),
    )
    .await;
    let number = known[0]["customerNumber"].as_str().unwrap().to_string();
    let psu_id = sca_psu_id(&sb, &number).await;
    sb.get_with_ok("/v1/accounts", &[("PSU-ID", &psu_id)]).await;

    // The whole sandbox: the operator's reset (the test runs on loopback).
    let r = sb
        .send("POST", "/v1/sandbox/initialize?scope=all", &[], None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json,
        json!({"customers": 5, "accounts": 10, "cardAccounts": 3, "agreements": 2})
    );
    assert_eq!(sb.customers().await, known, "the known state, same ids");
    // The consent is gone: SCA again.
    let again = sb.get_with("/v1/accounts", &[("PSU-ID", &psu_id)]).await;
    assert_eq!(again.status, 401, "{}", again.text);
    assert!(again.sca_redirect().is_some());
    // The balance override is gone.
    let psu_id = sca_psu_id(&sb, &number).await;
    let path = format!("/v1/accounts/{seeded_account}/balances");
    let b = read_as(&sb, &psu_id, &path).await;
    assert_ne!(b.json["balances"][0]["balanceAmount"]["amount"], "1.00");
    // Other modules' tables are emptied too; the migrations stay recorded.
    let db = Db::open(&Storage::File(file)).unwrap();
    let (rows, migrations): (i64, i64) = db
        .read(|c| {
            Ok((
                c.query_row("SELECT COUNT(*) FROM other_module_rows", [], |r| r.get(0))?,
                c.query_row("SELECT COUNT(*) FROM schema_migrations", [], |r| r.get(0))?,
            ))
        })
        .unwrap();
    assert_eq!(rows, 0);
    assert_eq!(
        usize::try_from(migrations).unwrap(),
        MIGRATIONS.len() + 1,
        "schema_migrations kept"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
pub(crate) async fn concurrent_customer_creations_neither_lose_nor_duplicate_rows() {
    let sb = std::sync::Arc::new(TestSandbox::start_with(config(Storage::InMemory)).await);
    let before = sb.customers().await.len();
    let mut tasks = Vec::new();
    for i in 0..64 {
        let sb = sb.clone();
        tasks.push(tokio::spawn(async move {
            let body = json!({
                "customerType": if i % 2 == 0 { "PRIVATE" } else { "CORPORATE" },
                "customerName": format!("Samtidig kunde {i}"),
            });
            let r = sb.post_created("/v1/sandbox/customers", &body).await;
            r.json
        }));
    }
    let mut created = Vec::new();
    for t in tasks {
        created.push(t.await.unwrap());
    }
    let mut ids_created = ids(&created, "customerId");
    let mut numbers = ids(&created, "customerNumber");
    ids_created.sort();
    ids_created.dedup();
    numbers.sort();
    numbers.dedup();
    assert_eq!(ids_created.len(), 64, "distinct ids");
    assert_eq!(numbers.len(), 64, "distinct customerNumbers");
    let list = sb.customers().await;
    assert_eq!(list.len(), before + 64, "exactly 64 new rows");
    let mut listed = ids(&list, "customerId");
    listed.sort();
    listed.dedup();
    assert_eq!(listed.len(), list.len());
    let mut bbans: Vec<String> = list
        .iter()
        .flat_map(|c| c["accounts"].as_array().unwrap().clone())
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let n = bbans.len();
    assert_eq!(n, (before + 64) * 2);
    bbans.sort();
    bbans.dedup();
    assert_eq!(bbans.len(), n, "distinct account ids");

    // 64 concurrent transactions on one account: all listed once.
    let account = created[0]["accounts"][0].as_str().unwrap().to_string();
    let mut tasks = Vec::new();
    for i in 0..64 {
        let sb = sb.clone();
        let account = account.clone();
        tasks.push(tokio::spawn(async move {
            let body = json!({
                "transactionAmount": {"currency": "NOK", "amount": format!("-{}.00", i + 1)},
                "creditorName": format!("Butikk {i}"),
                "bookingStatus": "pending",
            });
            let r = sb
                .post_created(
                    &format!("/v1/sandbox/accounts/{account}/transactions"),
                    &body,
                )
                .await;
            r.json["transactionId"].as_str().unwrap().to_string()
        }));
    }
    let mut tx_ids = Vec::new();
    for t in tasks {
        tx_ids.push(t.await.unwrap());
    }
    tx_ids.sort();
    tx_ids.dedup();
    assert_eq!(tx_ids.len(), 64);
    let number = created[0]["customerNumber"].as_str().unwrap().to_string();
    let psu_id = sca_psu_id(&sb, &number).await;
    let path = format!("/v1/accounts/{account}/transactions?bookingStatus=pending");
    let r = read_as(&sb, &psu_id, &path).await;
    let mut listed: Vec<String> = r.json["transactions"]["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["transactionId"].as_str().unwrap().to_string())
        .filter(|id| tx_ids.binary_search(id).is_ok())
        .collect();
    listed.sort();
    assert_eq!(listed, tx_ids);
}

/// The sandbox time of `GET /v1/sandbox/clock`.
async fn sandbox_now(sb: &TestSandbox) -> chrono::DateTime<chrono::Utc> {
    let r = sb.get_ok("/v1/sandbox/clock").await;
    chrono::DateTime::parse_from_rfc3339(r.json["now"].as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc)
}

/// Issue 9 item 13: the clock offset of `POST /v1/sandbox/clock` is part of the persisted
/// state (a restart keeps the sandbox time), and `POST /v1/sandbox/initialize` resets it.
#[tokio::test]
async fn clock_offset_survives_a_restart_and_initialize_resets_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    // Whole seconds, as the clock endpoint answers in seconds.
    let start = SystemTime::UNIX_EPOCH
        + std::time::Duration::from_secs(
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_secs(),
        );
    let fixed = |storage| SandboxConfig {
        clock: Clock::fixed(start),
        storage,
        ..SandboxConfig::default()
    };
    let real = chrono::DateTime::<chrono::Utc>::from(start);
    let day = chrono::Duration::days(3);
    {
        let sb = TestSandbox::start_with(fixed(Storage::File(file.clone()))).await;
        assert_eq!(sandbox_now(&sb).await, real);
        sb.post_ok("/v1/sandbox/clock", &json!({"advanceSeconds": 3 * 86_400}))
            .await;
        assert_eq!(sandbox_now(&sb).await, real + day);
        sb.stop().await;
    }
    let sb = TestSandbox::start_with(fixed(Storage::File(file.clone()))).await;
    assert_eq!(
        sandbox_now(&sb).await,
        real + day,
        "the offset is restored from the database on start"
    );
    sb.post_ok("/v1/sandbox/initialize", &json!({})).await;
    assert_eq!(sandbox_now(&sb).await, real, "initialize resets the clock");
    sb.assert_schema_valid();
    sb.stop().await;
    let sb = TestSandbox::start_with(fixed(Storage::File(file))).await;
    assert_eq!(sandbox_now(&sb).await, real, "the reset is persisted too");
}

/// Runs `sql` on the sandbox's database file from outside (a second connection), as a
/// storage failure the sandbox did not cause (a dropped table reads as "no such table").
fn break_database(file: &std::path::Path, sql: &str) {
    let c = rusqlite::Connection::open(file).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
    c.execute_batch(sql).unwrap();
}

fn assert_storage_error(r: &Reply, what: &str) {
    assert_eq!(r.status, 503, "{what}: {}", r.text);
    assert_eq!(r.code(), Some("SERVICE_BLOCKED"), "{what}: {}", r.text);
    assert!(
        r.sca_redirect().is_none(),
        "{what}: no scaRedirect: {}",
        r.text
    );
}

/// Issue 9 item 14: a failing database is never answered as "not found", an empty list or a
/// success: an SCA that could not be stored gets no scaRedirect, a consent that cannot be
/// read no new SCA, a customer list that cannot be read no `[]`, and the SCA page no
/// "unknown authorisation": each is 503 (the Berlin Group file allows 503 on every
/// operation) with `SERVICE_BLOCKED`, over real HTTP.
#[tokio::test]
async fn storage_failures_are_answered_503_never_404_empty_or_success() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let sb = TestSandbox::start_with(config(Storage::File(file.clone()))).await;
    let psu_id = sca_psu_id(&sb, "31125461118").await;

    // The authorisation of a new SCA cannot be stored.
    break_database(&file, "DROP TABLE sca_authorisations");
    let r = sb.get("/v1/accounts").await;
    assert_storage_error(&r, "starting an SCA");
    // A well-formed page token (issue 20: the page address is a token, not the id) whose
    // authorisation cannot be read.
    let page = sb
        .get_page(&format!("{}/sca/{}", sb.base, "A".repeat(22)))
        .await;
    assert_eq!(page.status, 503, "the SCA page: {}", page.text);

    // The PSU's consent cannot be read.
    break_database(&file, "DROP TABLE consent_accounts; DROP TABLE consents");
    let r = sb.get_with("/v1/accounts", &[("PSU-ID", &psu_id)]).await;
    assert_storage_error(&r, "reading a consent");

    // The customers cannot be read.
    break_database(&file, "PRAGMA foreign_keys = OFF; DROP TABLE customers");
    let r = sb.get("/v1/sandbox/customers").await;
    assert_storage_error(&r, "listing customers");
    let r = sb
        .get(&format!(
            "/v1/sandbox/customers/{}",
            seed::seed().customers[0].id
        ))
        .await;
    assert_storage_error(&r, "one customer");
}

/// Issue 20, "State that stays fast": `GET /v1/sandbox/state` is paginated. Each list gives
/// at most `limit` entries, oldest first, with `totals` and a `next…` link per list that has
/// more; following the links gives every entry once, in order; bad parameters are 400
/// `FORMAT_ERROR`.
#[tokio::test]
pub(crate) async fn the_state_is_paginated_with_totals_and_next_links_per_list() {
    let sb = TestSandbox::start_with(config(Storage::InMemory)).await;
    let mut created = Vec::new();
    for i in 0..5 {
        let body = common::payments::domestic(
            &common::payments::first_bban(common::payments::KARI),
            "3.00",
            &format!("page {i}"),
        );
        created.push(sb.create_payment(common::payments::DOMESTIC, &body).await.0);
    }
    let first = sb.get_ok("/v1/sandbox/state?limit=2").await;
    assert_eq!(first.json["totals"]["payments"], 5);
    assert_eq!(first.json["totals"]["baskets"], 0);
    assert!(
        first.json["customers"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    );
    let mut seen = ids(first.json["payments"].as_array().unwrap(), "paymentId");
    assert_eq!(seen.len(), 2);
    assert!(first.json["_links"].get("nextBaskets").is_none());
    let mut next = first.json["_links"]["nextPayments"]["href"]
        .as_str()
        .map(str::to_string);
    let mut pages = 1;
    while let Some(href) = next {
        let page = sb.get_ok(&href).await;
        assert!(
            page.json.get("customers").is_none(),
            "only the list asked for"
        );
        assert!(page.json.get("consents").is_none());
        seen.extend(ids(page.json["payments"].as_array().unwrap(), "paymentId"));
        next = page.json["_links"]["nextPayments"]["href"]
            .as_str()
            .map(str::to_string);
        pages += 1;
    }
    assert_eq!(pages, 3);
    let mut expected = created.clone();
    expected.sort();
    let mut got = seen.clone();
    got.sort();
    assert_eq!(got, expected, "every payment once");
    for bad in [
        "/v1/sandbox/state?limit=0",
        "/v1/sandbox/state?limit=1001",
        "/v1/sandbox/state?list=everything",
        "/v1/sandbox/state?after=1.abc",
        "/v1/sandbox/state?list=payments&after=nonsense",
    ] {
        sb.get(bad).await.assert_error(400, "FORMAT_ERROR");
    }
    sb.assert_schema_valid();
}
