//! Load runs against the real `psd2-console sandbox serve` binary on loopback, load generator
//! (wrk) on the same 2-core machine. Results go to BENCHMARKS.md.
//!
//! `cargo bench --bench load` (needs `wrk`: `apt-get install -y wrk`)
//!
//! 1. Signed `GET /v1/accounts/{id}/transactions` (default page of 200) for 15 s with wrk:
//!    requests/s and latency percentiles; every request's signature is verified. wrk sends
//!    one signed request over and over, so these runs start the server with
//!    `--allow-replays` (the replay check of `X-Request-ID` off). Then the same default page
//!    with the check on: wrk cycles through unique requests signed beforehand (a Lua script,
//!    [`REPLAY_LUA`]), for a shorter run sized to the requests signed.
//! 2. 64 concurrent payment creations: each answer 201 with a distinct paymentId, and the
//!    database holds exactly 64 payments afterwards (count from the SQLite file).
//! 3. A restart in the middle of a run: writers create payments while the server is killed
//!    (SIGKILL) and restarted on the same database file; every payment that was answered 201
//!    is still there.

#[path = "../tests/common/mod.rs"]
#[allow(unused_imports)]
mod common;

use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use psd2_console::cert::Credentials;
use psd2_console::cert::generate::{TppCertSpec, credentials_of, generate_set};
use psd2_console::signing::{SignOptions, sign_request};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_psd2-console");
const REDIRECT: &str = "http://127.0.0.1:9/callback";

struct Server {
    child: Child,
    base: String,
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

/// Starts `sandbox serve` on `port`; `allow_replays` turns the X-Request-ID check off (for
/// wrk runs that send one signed request many times).
fn start_server(port: u16, db: Option<&Path>, allow_replays: bool) -> Server {
    let mut cmd = Command::new(BIN);
    cmd.args(["sandbox", "serve", "--addr", &format!("127.0.0.1:{port}")]);
    if allow_replays {
        cmd.arg("--allow-replays");
    }
    match db {
        Some(p) => cmd.arg("--db").arg(p),
        None => cmd.arg("--in-memory"),
    };
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sandbox serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
    }
}

/// Signed headers for a request (and the body bytes), dated now.
fn signed(
    creds: &Credentials,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> Vec<(String, String)> {
    signed_at(creds, method, path, extra, body, SystemTime::now())
}

/// Signed headers for a request with a new X-Request-ID, dated `now`.
fn signed_at(
    creds: &Credentials,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &[u8],
    now: SystemTime,
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
            now,
        },
    );
    hs
}

async fn send(
    http: &reqwest::Client,
    base: &str,
    creds: &Credentials,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> (u16, Value) {
    let hs = signed(creds, method, path, extra, body);
    let mut rb = http.request(method.parse().unwrap(), format!("{base}{path}"));
    for (n, v) in &hs {
        rb = rb.header(n, v);
    }
    if !body.is_empty() {
        rb = rb.body(body.to_vec());
    }
    match rb.send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            let v = r.json().await.unwrap_or(Value::Null);
            (status, v)
        }
        Err(_) => (0, Value::Null),
    }
}

/// Runs a consent SCA through the HTML forms (the tests' helper); returns the PSU-ID.
async fn sca(sca_url: &str) -> String {
    let to_tpp = common::sca::complete(
        sca_url,
        "02079146148",
        "PRIVATE",
        common::sca::tick_all,
        "Approve",
    )
    .await;
    common::sca::success(&to_tpp).psu_id
}

struct Setup {
    psu_id: String,
    account_id: String,
    bban: String,
}

async fn setup(base: &str, creds: &Credentials) -> Setup {
    let http = reqwest::Client::new();
    let (status, v) = send(&http, base, creds, "GET", "/v1/accounts", &[], b"").await;
    assert_eq!(status, 401, "{v}");
    let href = v["_links"]["scaRedirect"]["href"]
        .as_str()
        .unwrap()
        .to_string();
    let psu_id = sca(&href).await;
    let (status, v) = send(
        &http,
        base,
        creds,
        "GET",
        "/v1/accounts",
        &[("PSU-ID", &psu_id)],
        b"",
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let acc = &v["accounts"][0];
    Setup {
        psu_id,
        account_id: acc["resourceId"].as_str().unwrap().to_string(),
        bban: acc["bban"].as_str().unwrap().to_string(),
    }
}

fn payment_body(bban: &str, n: usize) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "instructedAmount": {"currency": "NOK", "amount": format!("{}.00", 10 + n)},
        "debtorAccount": {"bban": bban},
        "creditorName": "Ola Nordmann",
        "creditorAccount": {"bban": "12345678903"},
        "remittanceInformationUnstructured": format!("load {n} {}", uuid::Uuid::new_v4())
    }))
    .unwrap()
}

const PAYMENT_PATH: &str = "/v1/payments/norwegian-domestic-credit-transfers";

fn scenario_transactions(rt: &tokio::runtime::Runtime, creds: &Credentials) {
    let server = start_server(free_port(), None, true);
    let s = rt.block_on(setup(&server.base, creds));
    let default_page = format!("/v1/accounts/{}/transactions", s.account_id);
    // The default page (200 booked + pending), then a 10-entry page to show the fixed cost
    // of a signed request apart from the body size.
    let small_page = format!("{default_page}?bookingStatus=booked&limit=10");
    // The default page as clients that accept gzip (reqwest, curl --compressed, browsers)
    // get it, then as plain JSON, then the small page.
    wrk_run(rt, creds, &server, &s, &default_page, Some("gzip"));
    let mut rate = 0.0;
    for path in [&default_page, &small_page] {
        let r = wrk_run(rt, creds, &server, &s, path, None);
        if path == &default_page {
            rate = r;
        }
    }
    drop(server);
    // The replay check on: a server without --allow-replays, unique pre-signed requests.
    let server = start_server(free_port(), None, false);
    let s = rt.block_on(setup(&server.base, creds));
    let default_page = format!("/v1/accounts/{}/transactions", s.account_id);
    wrk_unique_run(creds, &server, &s, &default_page, rate);
}

/// wrk's Lua script for the run with the replay check on: reads the pre-signed raw requests
/// (separated by NUL bytes) from the file given after `--`, and sends each once, in order.
/// Should wrk get through all of them, it starts over: those replays are answered 400 and
/// show as "Non-2xx" (the run then reports it).
const REPLAY_LUA: &str = r#"
local reqs = {}
local i = 0
init = function(args)
  local f = assert(io.open(args[1], "rb"))
  local data = f:read("*a")
  f:close()
  for r in string.gmatch(data, "([^%z]+)%z") do
    reqs[#reqs + 1] = r
  end
end
request = function()
  i = i + 1
  if i > #reqs then i = 1 end
  return reqs[i]
end
"#;

/// Seconds of the run with the replay check on.
const UNIQUE_RUN_SECS: u64 = 3;

/// The run with the replay check on: signs enough unique requests for [`UNIQUE_RUN_SECS`] at
/// 1.3 × `rate` (the req/s of the replaying run; at least 20,000 requests), on every core,
/// each dated 30 s after its signing, so that it is inside the 60 s Date window from its
/// signing until 90 s later (signing and the run must fit in that); then wrk cycles
/// through them once.
fn wrk_unique_run(creds: &Credentials, server: &Server, s: &Setup, path: &str, rate: f64) {
    let n = ((rate * UNIQUE_RUN_SECS as f64 * 1.3) as usize).max(20_000);
    let host = server.base.trim_start_matches("http://").to_string();
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunks: Vec<Vec<u8>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (host, psu) = (&host, &s.psu_id);
                scope.spawn(move || {
                    let mut out = Vec::new();
                    for _ in (t..n).step_by(threads) {
                        let date = SystemTime::now() + Duration::from_secs(30);
                        let hs = signed_at(creds, "GET", path, &[("PSU-ID", psu)], b"", date);
                        out.extend_from_slice(
                            format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n").as_bytes(),
                        );
                        for (k, v) in &hs {
                            out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
                        }
                        out.extend_from_slice(b"\r\n\0");
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let signing = started.elapsed();
    assert!(
        signing + Duration::from_secs(UNIQUE_RUN_SECS) < Duration::from_secs(85),
        "signing {n} requests took {signing:?}: they would leave the Date window"
    );
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("requests.bin");
    std::fs::write(&data, chunks.concat()).unwrap();
    let script = dir.path().join("unique.lua");
    std::fs::write(&script, REPLAY_LUA).unwrap();
    let out = Command::new("wrk")
        .args(["-t", "1", "-c", "64", "-d"])
        .arg(format!("{UNIQUE_RUN_SECS}s"))
        .arg("--latency")
        .arg("-s")
        .arg(&script)
        .arg(format!("{}{path}", server.base))
        .arg("--")
        .arg(&data)
        .output()
        .expect("wrk (apt-get install -y wrk)");
    let text = String::from_utf8_lossy(&out.stdout);
    println!(
        "== signed GET {path}, replay check ON: {n} unique requests signed beforehand in {:.1} s, wrk -t1 -c64 -d{UNIQUE_RUN_SECS}s",
        signing.as_secs_f64()
    );
    println!("{text}{}", String::from_utf8_lossy(&out.stderr));
    if text.contains("Non-2xx") {
        println!(
            "   (wrk sent more than the {n} unique requests: the replays beyond them were refused with 400)"
        );
    }
    assert!(
        requests_per_sec(&text) > 0.0,
        "wrk reported no requests: {text}"
    );
}

/// `Requests/sec:` of wrk's output (0 when missing).
fn requests_per_sec(wrk: &str) -> f64 {
    wrk.lines()
        .find_map(|l| l.trim().strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

fn wrk_run(
    rt: &tokio::runtime::Runtime,
    creds: &Credentials,
    server: &Server,
    s: &Setup,
    path: &str,
    accept_encoding: Option<&str>,
) -> f64 {
    let mut hs = signed(creds, "GET", path, &[("PSU-ID", &s.psu_id)], b"");
    if let Some(coding) = accept_encoding {
        hs.push(("Accept-Encoding".into(), coding.into()));
    }
    // One request to see the body size as sent (compressed when asked for).
    let size = rt.block_on(async {
        let client = reqwest::Client::builder().no_gzip().build().unwrap();
        let mut rb = client.get(format!("{}{path}", server.base));
        for (n, v) in &hs {
            rb = rb.header(n, v);
        }
        let r = rb.send().await.unwrap();
        assert_eq!(r.status(), 200);
        let encoding = r
            .headers()
            .get("content-encoding")
            .map(|v| v.to_str().unwrap_or("?").to_string());
        assert_eq!(encoding.as_deref(), accept_encoding, "content coding");
        r.bytes().await.unwrap().len()
    });
    let mut cmd = Command::new("wrk");
    cmd.args(["-t", "1", "-c", "64", "-d", "15s", "--latency"]);
    for (n, v) in &hs {
        cmd.arg("-H").arg(format!("{n}: {v}"));
    }
    cmd.arg(format!("{}{path}", server.base));
    let out = cmd.output().expect("wrk (apt-get install -y wrk)");
    let coding = accept_encoding.map_or(String::new(), |c| format!(", Accept-Encoding: {c}"));
    println!("== signed GET {path} (response body {size} bytes{coding}), wrk -t1 -c64 -d15s");
    println!("{}", String::from_utf8_lossy(&out.stdout));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("Non-2xx"),
        "every request must be answered 200 (signature verified)"
    );
    requests_per_sec(&text)
}

fn scenario_concurrent_payments(rt: &tokio::runtime::Runtime, creds: &Arc<Credentials>) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sandbox.sqlite3");
    let server = start_server(free_port(), Some(&db), false);
    let s = rt.block_on(setup(&server.base, creds));
    let base = server.base.clone();
    let started = Instant::now();
    let ids: Vec<(u16, Option<String>)> = rt.block_on(async {
        let http = reqwest::Client::new();
        let mut tasks = Vec::new();
        for n in 0..64 {
            let (http, base, creds, s_psu, bban) = (
                http.clone(),
                base.clone(),
                creds.clone(),
                s.psu_id.clone(),
                s.bban.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let body = payment_body(&bban, n);
                let (status, v) = send(
                    &http,
                    &base,
                    &creds,
                    "POST",
                    PAYMENT_PATH,
                    &[("PSU-ID", &s_psu)],
                    &body,
                )
                .await;
                (status, v["paymentId"].as_str().map(str::to_string))
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    let elapsed = started.elapsed();
    let created: Vec<String> = ids
        .iter()
        .filter(|(st, _)| *st == 201)
        .filter_map(|(_, id)| id.clone())
        .collect();
    let distinct: HashSet<&String> = created.iter().collect();
    drop(server);
    let count: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM pis_payments", [], |r| r.get(0))
        .unwrap();
    println!(
        "== 64 concurrent payment creations: {} answered 201, {} distinct ids, {} rows in the database, {:.1} ms in all",
        created.len(),
        distinct.len(),
        count,
        elapsed.as_secs_f64() * 1000.0
    );
    assert_eq!(created.len(), 64, "{ids:?}");
    assert_eq!(distinct.len(), 64);
    assert_eq!(count, 64);
}

fn scenario_restart(rt: &tokio::runtime::Runtime, creds: &Arc<Credentials>) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sandbox.sqlite3");
    let port = free_port();
    let mut server = start_server(port, Some(&db), false);
    let s = rt.block_on(setup(&server.base, creds));
    let base = server.base.clone();
    let committed = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let failed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (base, creds, psu, bban, committed, failed, stop) = (
                base.clone(),
                creds.clone(),
                s.psu_id.clone(),
                s.bban.clone(),
                committed.clone(),
                failed.clone(),
                stop.clone(),
            );
            rt.spawn(async move {
                let http = reqwest::Client::builder()
                    .timeout(Duration::from_secs(5))
                    .build()
                    .unwrap();
                let mut n = w * 100_000;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    n += 1;
                    let body = payment_body(&bban, n);
                    let (status, v) = send(
                        &http,
                        &base,
                        &creds,
                        "POST",
                        PAYMENT_PATH,
                        &[("PSU-ID", &psu)],
                        &body,
                    )
                    .await;
                    if status == 201 {
                        if let Some(id) = v["paymentId"].as_str() {
                            committed.lock().unwrap().push(id.to_string());
                        }
                    } else {
                        failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let before_kill = committed.lock().unwrap().len();
    // SIGKILL: no graceful shutdown, like a crash.
    let _ = server.child.kill();
    let _ = server.child.wait();
    std::thread::sleep(Duration::from_millis(300));
    server = start_server(port, Some(&db), false);
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        let _ = rt.block_on(w);
    }
    let all = committed.lock().unwrap().clone();
    let missing: Vec<String> = rt.block_on(async {
        let http = reqwest::Client::new();
        let mut missing = Vec::new();
        for id in &all {
            let (status, _) = send(
                &http,
                &server.base,
                creds,
                "GET",
                &format!("{PAYMENT_PATH}/{id}/status"),
                &[("PSU-ID", &s.psu_id)],
                b"",
            )
            .await;
            if status != 200 {
                missing.push(format!("{id}: {status}"));
            }
        }
        missing
    });
    println!(
        "== restart mid-run: {} payments answered 201 ({} before the SIGKILL), {} requests failed while the server was down, {} of the 201s missing after restart",
        all.len(),
        before_kill,
        failed.load(std::sync::atomic::Ordering::Relaxed),
        missing.len()
    );
    assert!(missing.is_empty(), "lost after restart: {missing:?}");
    assert!(before_kill > 0 && all.len() > before_kill);
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks scenarios.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let want = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let creds = Arc::new(credentials_of(&generate_set(&TppCertSpec::default()).unwrap()).unwrap());
    if want("transactions") {
        scenario_transactions(&rt, &creds);
    }
    if want("payments") {
        scenario_concurrent_payments(&rt, &creds);
    }
    if want("restart") {
        scenario_restart(&rt, &creds);
    }
}
