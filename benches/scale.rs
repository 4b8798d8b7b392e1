//! State that stays fast (issue 20): the everyday operations of one TPP cost the same whether
//! the sandbox's state is empty or holds another TPP's 100,000 consents and SCA
//! authorisations, 100,000 payments (with their authorisations) and 1,000,000 transactions.
//!
//! `cargo bench --bench scale` (release build of `psd2-console`; results go to BENCHMARKS.md)
//!
//! 1. Two database files are prepared through the library: both are migrated and seeded
//!    like a new sandbox ([`psd2_console::sandbox::MIGRATIONS`], `Store::open`); the "full"
//!    one then gets the other TPP's rows, bulk-inserted in one transaction through the
//!    store's row functions (`insert_manual_transaction`, `payments::insert_payment`,
//!    `payments::insert_authorisation`, `access::insert_resource`) and, where the store has
//!    no row function of its own (consents, consent SCA authorisations), plain `INSERT`s of
//!    the same columns.
//! 2. The real binary `sandbox serve --db FILE` is started on each file (two servers side by
//!    side on loopback, the replay check on).
//! 3. The measured TPP completes a consent SCA on each server through the HTML forms.
//! 4. Rounds: each round sends, to one server and then to the other (the empty one first in
//!    even rounds, the full one first in odd rounds), the same five
//!    signed requests one after the other (one connection, no concurrency), and records the
//!    wall time of each from sending to the last byte of the answer (signing is done before):
//!    `POST /v1/bank-offered-consents` (consent creation: a consent resource and an SCA
//!    authorisation, with the purge of expired authorisations), `POST /v1/payments/...`
//!    (payment creation: logical-duplicate check, payment and authorisation rows),
//!    `GET /v1/accounts`, `GET .../balances`, `GET .../transactions` (the default page).
//!    The writes of a round change the data version, so the reads after them are not served
//!    from the read caches of the round before.
//! 5. It prints p50 and p99 of each operation per server and their ratio (full / empty);
//!    target: every ratio at most 1.25.
//! 6. Where the tail comes from: for each request it also records whether the server's main
//!    database file was written while the request was in flight (in WAL mode only a
//!    checkpoint writes it), and prints, per operation and server, how many requests saw a
//!    checkpoint, their median, the percentiles of the others, and a histogram of the times;
//!    and the same percentiles as the servers' access logs timed the same requests
//!    (`latency_us`, found by `X-Request-ID`): the servers' own share of each time.
//!
//! Environment: `PSD2_SCALE_ROUNDS` (default 1000, after 50 warm-up rounds),
//! `PSD2_SCALE_BIN` (another `psd2-console` binary, for a before/after comparison),
//! `PSD2_SCALE_NO_INDEXES=1` (drop the indexes of migration `indexes_001_purges_and_lookups`
//! from both files after preparing them: the schema before issue 20),
//! `PSD2_SCALE_KEEP=DIR` (prepare the files in DIR and keep them), `PSD2_SCALE_REUSE=1` (with
//! `PSD2_SCALE_KEEP`: use the files a previous run left there instead of preparing them),
//! `PSD2_SCALE_ALLOW_REPLAYS=1` (servers started with `--allow-replays`: no replay guard, so
//! no X-Request-ID writer thread on a connection of its own).

// Tests and benches may unwrap: a panic is their failure report (Cargo.toml [lints]).
#![allow(clippy::unwrap_used)]

#[path = "../tests/it/common/mod.rs"]
#[allow(unused_imports)]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use psd2_console::cert::Credentials;
use psd2_console::cert::generate::{TppCertSpec, credentials_of, generate_set};
use psd2_console::sandbox::store::db::{Db, Storage};
use psd2_console::sandbox::store::payments::{self as rows, AuthorisationRow, PaymentRow};
use psd2_console::sandbox::store::{self, ManualTransaction, Store, TppId, to_nanos};
use psd2_console::sandbox::{MIGRATIONS, domain::seed};
use psd2_console::signing::{SignOptions, sign_request};
use serde_json::Value;

const REDIRECT: &str = "http://127.0.0.1:9/callback";
const PAYMENT_PATH: &str = "/v1/payments/norwegian-domestic-credit-transfers";
/// The measured TPP's PSU: Ingrid Berg (no agreement, two accounts).
const PSU_NUMBER: &str = "02079146148";

const CONSENTS: usize = 100_000;
const PAYMENTS: usize = 100_000;
const TRANSACTIONS: usize = 1_000_000;

struct Server {
    child: Child,
    base: String,
    /// The server's stderr: its access log (`latency_us` per `X-Request-ID`).
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn binary() -> PathBuf {
    std::env::var_os("PSD2_SCALE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_psd2-console")))
}

fn start_server(db: &Path, log: PathBuf) -> Server {
    let port = free_port();
    let mut cmd = Command::new(binary());
    cmd.args(["sandbox", "serve", "--addr", &format!("127.0.0.1:{port}")])
        .arg("--db")
        .arg(db);
    if std::env::var_os("PSD2_SCALE_ALLOW_REPLAYS").is_some() {
        // No replay guard, so no X-Request-ID writer thread on its own connection.
        cmd.arg("--allow-replays");
    }
    let child = cmd
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start sandbox serve");
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
        log,
    }
}

/// A migrated, seeded database file.
fn prepare(file: &Path) -> Arc<Db> {
    let db = Arc::new(Db::open(&Storage::File(file.to_path_buf())).unwrap());
    db.migrate(MIGRATIONS).unwrap();
    Store::open(db.clone(), seed::seed).unwrap();
    db
}

/// The other TPP's rows (see the module documentation), in one transaction.
fn fill(db: &Db) {
    let started = Instant::now();
    let other = TppId("other-tpp-of-the-scale-bench".into());
    let seeded = seed::seed();
    let ingrid = seeded
        .customers
        .iter()
        .find(|c| c.number == PSU_NUMBER)
        .unwrap()
        .id;
    let owners: Vec<_> = seeded
        .customers
        .iter()
        .filter(|c| c.id != ingrid)
        .map(|c| c.id)
        .collect();
    let accounts: Vec<_> = seeded
        .accounts
        .iter()
        .filter(|a| a.owner != ingrid)
        .cloned()
        .collect();
    let now = SystemTime::now();
    let now_nanos = to_nanos(now);
    let now_secs = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let today = chrono::Utc::now().date_naive();
    db.write_raw(|conn| {
        let tx = conn.as_sqlite().expect("the bench fills a SQLite state");
        let mut consent = tx.prepare(
            "INSERT INTO consents (tpp, psu_id, agreement, customer, granted_at, tpp_session_id) \
             VALUES (?1, ?2, '', ?3, ?4, ?5)",
        )?;
        let mut consent_account = tx.prepare(
            "INSERT INTO consent_accounts (consent, position, account) VALUES (?1, 0, ?2)",
        )?;
        let mut registration = tx.prepare(
            "INSERT INTO psu_registrations (tpp, psu_id, customer, registered_at) \
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        let mut sca = tx.prepare(
            "INSERT INTO sca_authorisations (id, tpp, tpp_name, redirect_uri, tpp_session_id, \
             created_at, step, customer, agreement) \
             VALUES (?1, ?2, 'Other TPP', ?3, ?4, ?5, 'IDENTIFY', NULL, NULL)",
        )?;
        for i in 0..CONSENTS {
            let psu = uuid::Uuid::new_v4().to_string();
            let owner = owners[i % owners.len()].to_string();
            let account = accounts
                .iter()
                .find(|a| a.owner.to_string() == owner)
                .map(|a| a.id.to_string())
                .unwrap();
            let session = format!("session-{i}");
            consent.execute(rusqlite::params![other.0, psu, owner, now_nanos, session])?;
            consent_account.execute(rusqlite::params![tx.last_insert_rowid(), account])?;
            registration.execute(rusqlite::params![other.0, psu, owner, now_nanos])?;
            // Unexpired (created now): the purge before each new authorisation keeps them.
            sca.execute(rusqlite::params![
                uuid::Uuid::new_v4().to_string(),
                other.0,
                REDIRECT,
                session,
                now_nanos
            ])?;
            store::access::insert_resource(conn, uuid::Uuid::new_v4(), &other, now_secs)?;
        }
        for i in 0..PAYMENTS {
            let id = uuid::Uuid::new_v4().to_string();
            let debtor = &accounts[i % accounts.len()];
            let p = PaymentRow {
                id: id.clone(),
                tpp: other.0.to_string(),
                service: "payments".into(),
                product: "norwegian-domestic-credit-transfers".into(),
                kind: "SINGLE".into(),
                status: "ACSC".into(),
                held_from: None,
                funds_available: None,
                body: format!(
                    r#"{{"instructedAmount":{{"currency":"NOK","amount":"1.00"}},"debtorAccount":{{"bban":"{}"}},"creditorName":"Bench","creditorAccount":{{"bban":"12345678903"}},"remittanceInformationUnstructured":"bulk {i}"}}"#,
                    debtor.bban
                ),
                debtor_account: debtor.id.to_string(),
                currency: "NOK".into(),
                amount_minor: 100,
                execution_date: None,
                dedup_key: format!("bulk-{i}"),
                created_at: now_secs - 86_400,
                created_day: (today - chrono::Days::new(1)).to_string(),
                redirect_uri: REDIRECT.into(),
                tpp_session_id: format!("session-{i}"),
                expected_customer: None,
                customer: Some(debtor.owner.to_string()),
                psu_id: Some(uuid::Uuid::new_v4().to_string()),
                agreement: None,
                approved_at: Some(now_secs - 86_400),
                due_at: Some(now_secs - 86_000),
                settled_at: Some(now_secs - 86_000),
                reason: Some("executed".into()),
            };
            rows::insert_payment(conn, &p)?;
            rows::insert_authorisation(
                conn,
                &AuthorisationRow {
                    id: uuid::Uuid::new_v4().to_string(),
                    tpp: other.0.to_string(),
                    tpp_name: "Other TPP".into(),
                    payment: Some(id),
                    basket: None,
                    redirect_uri: REDIRECT.into(),
                    tpp_session_id: format!("session-{i}"),
                    sca_status: "finalised".into(),
                    customer: Some(debtor.owner.to_string()),
                    agreement: None,
                    created_at: now_secs - 86_400,
                },
            )?;
        }
        for i in 0..TRANSACTIONS {
            let account = &accounts[i % accounts.len()];
            let day = today - chrono::Days::new((i % 700) as u64);
            store::insert_manual_transaction(
                conn,
                &ManualTransaction {
                    id: uuid::Uuid::new_v4(),
                    seq: 0,
                    account: account.id,
                    booked: true,
                    booking_date: Some(day),
                    value_date: day,
                    amount: -100,
                    creditor_name: Some("Bench".into()),
                    creditor_account: Some("12345678903".into()),
                    debtor_name: None,
                    debtor_account: Some(account.bban.clone()),
                    remittance: Some(format!("bulk {i}")),
                    created_at: now,
                },
            )?;
        }
        Ok(())
    })
    .unwrap();
    println!(
        "filled: {CONSENTS} consents (+ resources, registrations, SCA authorisations), \
         {PAYMENTS} payments (+ authorisations), {TRANSACTIONS} transactions in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Drops the indexes of issue 20's migration (the schema before it).
fn drop_indexes(db: &Db) {
    let words: Vec<&str> = store::indexes::MIGRATION.1.split_whitespace().collect();
    let ours: Vec<&str> = words
        .windows(6)
        .filter(|w| w[0] == "INDEX" && w[1] == "IF")
        .map(|w| w[4])
        .collect();
    db.write_raw(|tx| {
        for n in &ours {
            tx.execute_batch(&format!("DROP INDEX IF EXISTS \"{n}\""))?;
        }
        Ok(())
    })
    .unwrap();
    println!(
        "dropped {} indexes of {}",
        ours.len(),
        store::indexes::MIGRATION.0
    );
}

fn signed(
    creds: &Credentials,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> Vec<(String, String)> {
    let mut hs: Vec<(String, String)> = vec![
        ("X-Request-ID".into(), uuid::Uuid::new_v4().to_string()),
        ("TPP-Redirect-URI".into(), REDIRECT.into()),
        ("PSU-IP-Address".into(), "127.0.0.1".into()),
    ];
    if !body.is_empty() {
        hs.push(("Content-Type".into(), "application/json".into()));
    }
    for (n, v) in extra {
        hs.push((n.to_string(), v.to_string()));
    }
    sign_request(
        creds,
        method,
        path,
        &mut hs,
        body,
        SignOptions {
            request_target: false,
            now: SystemTime::now(),
        },
    );
    hs
}

/// Sends a signed request; returns the status, the JSON body, the time from sending to
/// the answer's last byte (signing not included) and the `X-Request-ID`.
async fn send(
    http: &reqwest::Client,
    base: &str,
    creds: &Credentials,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> (u16, Value, (Duration, String)) {
    let hs = signed(creds, method, path, extra, body);
    let request_id = hs[0].1.clone();
    let mut rb = http.request(method.parse().unwrap(), format!("{base}{path}"));
    for (n, v) in &hs {
        rb = rb.header(n, v);
    }
    if !body.is_empty() {
        rb = rb.body(body.to_vec());
    }
    let t = Instant::now();
    let r = rb.send().await.unwrap();
    let status = r.status().as_u16();
    let bytes = r.bytes().await.unwrap();
    let took = t.elapsed();
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, v, (took, request_id))
}

/// The measured TPP's PSU-ID and first account after a consent SCA on `base`.
async fn setup(
    http: &reqwest::Client,
    base: &str,
    creds: &Credentials,
) -> (String, String, String) {
    let (status, v, _) = send(http, base, creds, "GET", "/v1/accounts", &[], b"").await;
    assert_eq!(status, 401, "{v}");
    let href = v["_links"]["scaRedirect"]["href"]
        .as_str()
        .unwrap()
        .to_string();
    let to_tpp = common::sca::complete(
        &href,
        PSU_NUMBER,
        "PRIVATE",
        common::sca::tick_all,
        "Approve",
    )
    .await;
    let psu = common::sca::success(&to_tpp).psu_id;
    let (status, v, _) = send(
        http,
        base,
        creds,
        "GET",
        "/v1/accounts",
        &[("PSU-ID", &psu)],
        b"",
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let acc = &v["accounts"][0];
    (
        psu,
        acc["resourceId"].as_str().unwrap().to_string(),
        acc["bban"].as_str().unwrap().to_string(),
    )
}

/// One timed request: its duration, and whether the server's main database file was written
/// while it was in flight. In WAL mode only a checkpoint writes the main file, so this tells
/// the requests that ran (or waited for) a checkpoint.
#[derive(Debug, Clone)]
struct Sample {
    took: Duration,
    checkpoint: bool,
    /// The request's `X-Request-ID`, to find its line in the server's access log.
    request_id: String,
}

/// Watches the main database file's modification time around a request.
struct Watch<'a> {
    file: &'a Path,
    before: Option<SystemTime>,
}

impl<'a> Watch<'a> {
    fn new(file: &'a Path) -> Self {
        Watch { file, before: None }
    }

    fn modified(&self) -> Option<SystemTime> {
        std::fs::metadata(self.file).and_then(|m| m.modified()).ok()
    }

    fn start(&mut self) {
        self.before = self.modified();
    }

    fn stop(&mut self, (took, request_id): (Duration, String)) -> Sample {
        Sample {
            took,
            checkpoint: self.modified() != self.before,
            request_id,
        }
    }
}

const OPS: [&str; 5] = [
    "consent creation (POST /v1/bank-offered-consents)",
    "payment creation (POST /v1/payments/norwegian-domestic-credit-transfers)",
    "accounts (GET /v1/accounts)",
    "balances (GET /v1/accounts/{id}/balances)",
    "transaction page (GET /v1/accounts/{id}/transactions, default page)",
];

/// One round of the five operations on a server; the five durations.
#[allow(clippy::too_many_arguments)]
async fn round(
    http: &reqwest::Client,
    base: &str,
    creds: &Credentials,
    psu: &str,
    account: &str,
    bban: &str,
    n: usize,
    file: &Path,
) -> [Sample; 5] {
    let mut watch = Watch::new(file);
    let psu_h = [("PSU-ID", psu)];
    watch.start();
    let (s, v, consent) = send(
        http,
        base,
        creds,
        "POST",
        "/v1/bank-offered-consents",
        &[],
        b"",
    )
    .await;
    let consent = watch.stop(consent);
    assert_eq!(s, 201, "{v}");
    let body = serde_json::to_vec(&serde_json::json!({
        "instructedAmount": {"currency": "NOK", "amount": format!("{}.{:02}", 1 + n / 100, n % 100)},
        "debtorAccount": {"bban": bban},
        "creditorName": "Ola Nordmann",
        "creditorAccount": {"bban": "12345678903"},
        "remittanceInformationUnstructured": format!("scale {n} {}", uuid::Uuid::new_v4())
    }))
    .unwrap();
    watch.start();
    let (s, v, payment) = send(http, base, creds, "POST", PAYMENT_PATH, &[], &body).await;
    let payment = watch.stop(payment);
    assert_eq!(s, 201, "{v}");
    watch.start();
    let (s, v, accounts) = send(http, base, creds, "GET", "/v1/accounts", &psu_h, b"").await;
    let accounts = watch.stop(accounts);
    assert_eq!(s, 200, "{v}");
    let path = format!("/v1/accounts/{account}/balances");
    watch.start();
    let (s, v, balances) = send(http, base, creds, "GET", &path, &psu_h, b"").await;
    let balances = watch.stop(balances);
    assert_eq!(s, 200, "{v}");
    let path = format!("/v1/accounts/{account}/transactions");
    watch.start();
    let (s, v, page) = send(http, base, creds, "GET", &path, &psu_h, b"").await;
    let page = watch.stop(page);
    assert_eq!(s, 200, "{v}");
    [consent, payment, accounts, balances, page]
}

/// Where the tail comes from: per operation and server, the requests during which the main
/// database file was written (a checkpoint) and the percentiles of the others; then a
/// histogram of every request's time.
fn diagnose(times: &[[Vec<Sample>; 5]; 2]) {
    println!(
        "\nrequests during which the main database file was written (a WAL checkpoint):\n\
         | operation | server | with checkpoint | their p50 | p50 without | p99 without |\n\
         |---|---|---|---|---|---|"
    );
    for (i, op) in OPS.iter().enumerate() {
        let short = op.split(" (").next().unwrap_or(op);
        for (k, name) in ["empty", "full"].iter().enumerate() {
            let mut with: Vec<Duration> = times[k][i]
                .iter()
                .filter(|s| s.checkpoint)
                .map(|s| s.took)
                .collect();
            let mut without: Vec<Duration> = times[k][i]
                .iter()
                .filter(|s| !s.checkpoint)
                .map(|s| s.took)
                .collect();
            with.sort();
            without.sort();
            let p = |v: &[Duration], q| {
                if v.is_empty() {
                    "-".to_string()
                } else {
                    format!("{:.2} ms", ms(percentile(v, q)))
                }
            };
            println!(
                "| {short} | {name} | {} | {} | {} | {} |",
                with.len(),
                p(&with, 0.5),
                p(&without, 0.5),
                p(&without, 0.99)
            );
        }
    }
    const EDGES: [f64; 7] = [1.0, 2.0, 3.0, 4.0, 6.0, 10.0, 20.0];
    let mut header = String::from("| operation | server |");
    let mut prev = 0.0;
    for e in EDGES {
        header.push_str(&format!(" {prev}-{e} ms |"));
        prev = e;
    }
    header.push_str(&format!(" >{prev} ms |"));
    println!("\nhistogram of request times (count per bucket):\n{header}");
    println!("|---|---|{}", "---|".repeat(EDGES.len() + 1));
    for (i, op) in OPS.iter().enumerate() {
        let short = op.split(" (").next().unwrap_or(op);
        for (k, name) in ["empty", "full"].iter().enumerate() {
            let mut counts = [0usize; EDGES.len() + 1];
            for s in &times[k][i] {
                let t = ms(s.took);
                let b = EDGES.iter().position(|e| t < *e).unwrap_or(EDGES.len());
                counts[b] += 1;
            }
            let cells: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
            println!("| {short} | {name} | {} |", cells.join(" | "));
        }
    }
}

/// The same percentiles from the servers' own access logs (`latency_us`: from the request
/// reaching the router to the response head): what the servers did, without the client,
/// the loopback and the scheduling of the two cores.
fn server_side(times: &[[Vec<Sample>; 5]; 2], servers: &[Server; 2]) {
    let mut latencies = Vec::new();
    for s in servers {
        let text = std::fs::read_to_string(&s.log).unwrap_or_default();
        let mut by_id = std::collections::HashMap::new();
        for line in text.lines() {
            let field = |name: &str| {
                line.split(&format!(" {name}="))
                    .nth(1)
                    .and_then(|rest| rest.split(' ').next())
                    .map(|v| v.trim_matches('"').to_string())
            };
            if let (Some(id), Some(us)) = (field("request_id"), field("latency_us"))
                && let Ok(us) = us.parse::<u64>()
            {
                by_id.insert(id, Duration::from_micros(us));
            }
        }
        latencies.push(by_id);
    }
    println!(
        "\nthe same requests as the servers' access logs timed them (`latency_us`):\n\
         | operation | empty p50 | full p50 | ratio | empty p99 | full p99 | ratio |\n\
         |---|---|---|---|---|---|---|"
    );
    for (i, op) in OPS.iter().enumerate() {
        let short = op.split(" (").next().unwrap_or(op);
        let mut f = Vec::new();
        for (k, server) in times.iter().enumerate() {
            let mut v: Vec<Duration> = server[i]
                .iter()
                .filter_map(|s| latencies[k].get(&s.request_id).copied())
                .collect();
            if v.len() != server[i].len() {
                println!(
                    "| {short} | (only {} of {} requests in the log) |",
                    v.len(),
                    server[i].len()
                );
                return;
            }
            v.sort();
            f.push((percentile(&v, 0.5), percentile(&v, 0.99)));
        }
        println!(
            "| {short} | {:.2} ms | {:.2} ms | {:.2} | {:.2} ms | {:.2} ms | {:.2} |",
            ms(f[0].0),
            ms(f[1].0),
            ms(f[1].0) / ms(f[0].0),
            ms(f[0].1),
            ms(f[1].1),
            ms(f[1].1) / ms(f[0].1),
        );
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let rounds: usize = std::env::var("PSD2_SCALE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let warmup = 50;
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::env::var_os("PSD2_SCALE_KEEP")
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).unwrap();
    let (empty_file, full_file) = (dir.join("empty.sqlite3"), dir.join("full.sqlite3"));
    let reuse = std::env::var_os("PSD2_SCALE_REUSE").is_some()
        && empty_file.is_file()
        && full_file.is_file();
    if !reuse {
        for f in [&empty_file, &full_file] {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", f.display()));
            }
        }
    }
    {
        let empty = prepare(&empty_file);
        let full = prepare(&full_file);
        if reuse {
            println!("reusing {}", dir.display());
        } else {
            fill(&full);
        }
        if std::env::var_os("PSD2_SCALE_NO_INDEXES").is_some() {
            drop_indexes(&empty);
            drop_indexes(&full);
        }
        // Checkpoint the WAL so both servers start from their main file. `ANALYZE` writes:
        // on the request connection (the read connections are `query_only`).
        for db in [&empty, &full] {
            db.write_raw(|c| c.execute_batch("ANALYZE")).unwrap();
            db.checkpoint().unwrap();
        }
    }
    let creds = credentials_of(&generate_set(&TppCertSpec::default()).unwrap()).unwrap();
    let servers = [
        start_server(&empty_file, dir.join("empty.log")),
        start_server(&full_file, dir.join("full.log")),
    ];
    let files = [empty_file.clone(), full_file.clone()];
    println!("binary: {}", binary().display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut times: [[Vec<Sample>; 5]; 2] = Default::default();
    rt.block_on(async {
        let http = reqwest::Client::builder()
            .no_gzip()
            .pool_max_idle_per_host(1)
            .build()
            .unwrap();
        let mut ctx = Vec::new();
        for s in &servers {
            ctx.push(setup(&http, &s.base, &creds).await);
        }
        for n in 0..warmup + rounds {
            // The empty server first in even rounds, the full one first in odd rounds, so
            // that neither always runs right after the other's writes (and its background
            // work: the X-Request-ID flusher, the checkpointer).
            let order = if n % 2 == 0 { [0, 1] } else { [1, 0] };
            for k in order {
                let s = &servers[k];
                let (psu, account, bban) = &ctx[k];
                let d = round(&http, &s.base, &creds, psu, account, bban, n, &files[k]).await;
                if n >= warmup {
                    for (i, t) in d.into_iter().enumerate() {
                        times[k][i].push(t);
                    }
                }
            }
        }
    });
    println!(
        "\n{rounds} rounds (after {warmup} warm-up), each: the five operations on one server, \
         then on the other (the empty one first in even rounds, the full one in odd rounds)"
    );
    println!(
        "| operation | empty p50 | full p50 | ratio | empty p99 | full p99 | ratio |\n|---|---|---|---|---|---|---|"
    );
    let mut worst: f64 = 0.0;
    for (i, op) in OPS.iter().enumerate() {
        let mut f = Vec::new();
        for server in &times {
            let mut v: Vec<Duration> = server[i].iter().map(|s| s.took).collect();
            v.sort();
            f.push((percentile(&v, 0.5), percentile(&v, 0.99)));
        }
        let r50 = ms(f[1].0) / ms(f[0].0);
        let r99 = ms(f[1].1) / ms(f[0].1);
        worst = worst.max(r50).max(r99);
        println!(
            "| {op} | {:.2} ms | {:.2} ms | {r50:.2} | {:.2} ms | {:.2} ms | {r99:.2} |",
            ms(f[0].0),
            ms(f[1].0),
            ms(f[0].1),
            ms(f[1].1),
        );
    }
    server_side(&times, &servers);
    diagnose(&times);
    println!(
        "\nworst ratio {worst:.2}: {}",
        if worst <= 1.25 {
            "within 1.25x of the empty state"
        } else {
            "MISSES the 1.25x target"
        }
    );
}
