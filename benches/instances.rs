//! The load of one `sandbox serve` on SQLite, one on PostgreSQL and two on one PostgreSQL
//! database (issue 21), measured in the same run against the real binary on loopback, the
//! load generator in this process on the same machine. Results go to BENCHMARKS.md ("Many
//! instances on PostgreSQL").
//!
//! `cargo bench --bench instances` (needs PostgreSQL's `initdb`/`pg_ctl`, as the tests:
//! `tests/it/common/pg.rs`). For each set-up, with the replay check on (every request is
//! signed beforehand with its own `X-Request-ID`, so the generator only sends):
//!
//! - reads: [`READS`] signed `GET /v1/sandbox/customers` (a signed read of the store),
//!   [`CONCURRENCY`] at a time;
//! - writes: [`WRITES`] signed `POST /v1/payments/norwegian-domestic-credit-transfers` (each a new payment),
//!   [`CONCURRENCY`] at a time.
//!
//! With two instances the generator alternates the two target URLs request by request.
//! Printed: requests/s, p50 and p99 latency, and how many answers were not 200/201.

// Tests and benches may unwrap: a panic is their failure report (Cargo.toml [lints]).
#![allow(clippy::unwrap_used)]

#[path = "../tests/it/common/mod.rs"]
#[allow(unused_imports)]
mod common;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a failed answer was printed (the first only).
static FIRST_FAILURE: AtomicBool = AtomicBool::new(false);
use std::time::{Duration, Instant, SystemTime};

use psd2_console::cert::Credentials;
use psd2_console::signing::{SignOptions, sign_request};

const BIN: &str = env!("CARGO_BIN_EXE_psd2-console");
const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// Read requests per set-up.
const READS: usize = 1000;
/// Write requests per set-up.
const WRITES: usize = 600;
/// Requests in flight.
const CONCURRENCY: usize = 16;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(db: &str) -> (Server, String) {
    let port = common::cli::free_port();
    let child = Command::new(BIN)
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .args(["sandbox", "serve", "--db", db, "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sandbox serve");
    common::cli::wait_listening(port, Duration::from_secs(60));
    (Server(child), format!("http://127.0.0.1:{port}"))
}

/// One request signed beforehand: method, URL, headers, body.
struct Prepared {
    method: &'static str,
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn prepare(
    creds: &Credentials,
    bases: &[String],
    n: usize,
    write: bool,
    tag: &str,
) -> Vec<Prepared> {
    let path = if write {
        format!("/v1/payments/{}", common::payments::DOMESTIC)
    } else {
        "/v1/sandbox/customers".to_string()
    };
    let path = path.as_str();
    let bban = common::payments::first_bban(common::payments::KARI);
    (0..n)
        .map(|i| {
            let body = if write {
                common::payments::domestic(&bban, "1.00", &format!("load {tag} {i}"))
                    .to_string()
                    .into_bytes()
            } else {
                Vec::new()
            };
            let mut hs: Vec<(String, String)> = vec![
                ("X-Request-ID".into(), uuid::Uuid::new_v4().to_string()),
                ("TPP-Redirect-URI".into(), REDIRECT.into()),
                ("PSU-IP-Address".into(), "127.0.0.1".into()),
            ];
            if write {
                hs.push(("Content-Type".into(), "application/json".into()));
            }
            sign_request(
                creds,
                if write { "POST" } else { "GET" },
                path,
                &mut hs,
                &body,
                SignOptions {
                    request_target: false,
                    now: SystemTime::now(),
                },
            );
            Prepared {
                method: if write { "POST" } else { "GET" },
                url: format!("{}{path}", bases[i % bases.len()]),
                headers: hs,
                body,
            }
        })
        .collect()
}

/// Sends `requests`, [`CONCURRENCY`] at a time: (requests/s, p50 ms, p99 ms, not 2xx).
async fn fire(requests: Vec<Prepared>) -> (f64, f64, f64, usize) {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(CONCURRENCY)
        .build()
        .unwrap();
    let queue = Arc::new(std::sync::Mutex::new(requests.into_iter()));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENCY {
        let (queue, http) = (queue.clone(), http.clone());
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            loop {
                let next = queue.lock().unwrap().next();
                let Some(p) = next else { return out };
                let mut rb = http.request(p.method.parse().unwrap(), &p.url);
                for (n, v) in &p.headers {
                    rb = rb.header(n, v);
                }
                if !p.body.is_empty() {
                    rb = rb.body(p.body);
                }
                let t = Instant::now();
                let status = match rb.send().await {
                    Ok(r) => {
                        let s = r.status().as_u16();
                        let body = r.bytes().await.unwrap_or_default();
                        if s != 200 && s != 201 && !FIRST_FAILURE.swap(true, Ordering::Relaxed) {
                            eprintln!(
                                "first failed answer: {s} {}",
                                String::from_utf8_lossy(&body)
                            );
                        }
                        s
                    }
                    Err(_) => 0,
                };
                out.push((t.elapsed(), status));
            }
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let elapsed = start.elapsed().as_secs_f64();
    let failed = all.iter().filter(|(_, s)| *s != 200 && *s != 201).count();
    let mut lat: Vec<Duration> = all.iter().map(|(d, _)| *d).collect();
    lat.sort();
    let pct = |p: f64| {
        let i = ((lat.len() as f64 - 1.0) * p).round() as usize;
        lat.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    (all.len() as f64 / elapsed, pct(0.5), pct(0.99), failed)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let Some(cluster) = common::pg::PgCluster::get() else {
        eprintln!("PostgreSQL is not installed: no figures");
        return;
    };
    let creds: &'static Credentials = common::sandbox::tpp();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("sandbox.sqlite3").display().to_string();
    let one_pg = cluster.database();
    let two_pg = cluster.database();
    println!(
        "instances: {READS} reads (GET /v1/sandbox/customers) and {WRITES} writes (POST \
         /v1/payments/norwegian-domestic-credit-transfers), {CONCURRENCY} in flight, every request signed beforehand \
         with its own X-Request-ID (replay check on)"
    );
    println!("| Set-up | Reads/s | p50 ms | p99 ms | Writes/s | p50 ms | p99 ms | not 2xx |");
    println!("|---|---|---|---|---|---|---|---|");
    for (name, dbs) in [
        ("1 instance, SQLite file", vec![sqlite.clone()]),
        ("1 instance, PostgreSQL", vec![one_pg.clone()]),
        ("2 instances, one PostgreSQL", vec![two_pg.clone(), two_pg]),
    ] {
        let mut servers = Vec::new();
        let mut bases = Vec::new();
        for db in &dbs {
            let db = db.clone();
            let (s, b) = tokio::task::spawn_blocking(move || start(&db))
                .await
                .unwrap();
            servers.push(s);
            bases.push(b);
        }
        let reads = {
            let bases = bases.clone();
            tokio::task::spawn_blocking(move || prepare(creds, &bases, READS, false, "r"))
                .await
                .unwrap()
        };
        let (r_rps, r50, r99, r_bad) = fire(reads).await;
        let writes = {
            let (bases, tag) = (bases.clone(), name.to_string());
            tokio::task::spawn_blocking(move || prepare(creds, &bases, WRITES, true, &tag))
                .await
                .unwrap()
        };
        let (w_rps, w50, w99, w_bad) = fire(writes).await;
        println!(
            "| {name} | {r_rps:.0} | {r50:.1} | {r99:.1} | {w_rps:.0} | {w50:.1} | {w99:.1} | {} |",
            r_bad + w_bad
        );
        drop(servers);
    }
}
