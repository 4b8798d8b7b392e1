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

// Tests and benches may unwrap: a panic is their failure report (Cargo.toml [lints]).
#![allow(clippy::unwrap_used)]

#[path = "../tests/it/common/mod.rs"]
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
    if let Some(port) = std::env::var(BARE_AXUM_ENV)
        .ok()
        .and_then(|p| p.parse().ok())
    {
        bare_axum_main(port);
    }
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
    if want("reads") {
        scenario_reads(&rt, &creds);
    }
    if want("payments") {
        scenario_concurrent_payments(&rt, &creds);
    }
    if want("restart") {
        scenario_restart(&rt, &creds);
    }
}

// ---------------------------------------------------------------------------------------
// AIS reads against a bare-axum baseline (issue 9, "Speed of the everyday reads")

/// Set (to a port) in the environment of the bench binary re-executed as the bare-axum
/// baseline server.
const BARE_AXUM_ENV: &str = "PSD2_LOAD_BARE_AXUM";

/// The baseline's fixed body: a JSON document of about 2 KB (an `accountList`-like shape).
fn bare_axum_body() -> bytes::Bytes {
    let accounts: Vec<Value> = (0..6)
        .map(|n| {
            serde_json::json!({
                "resourceId": format!("3d9a1c2e-5b7f-4e21-9a0c-7f1e2d3c4b{n:02}"),
                "bban": format!("1234567890{n}"),
                "currency": "NOK",
                "name": "Brukskonto",
                "product": "Brukskonto Pluss",
                "cashAccountType": "CACC",
                "status": "enabled",
                "ownerName": "Ola Nordmann",
                "_links": {
                    "balances": {"href": format!("/v1/accounts/3d9a1c2e-5b7f-4e21-9a0c-7f1e2d3c4b{n:02}/balances")},
                    "transactions": {"href": format!("/v1/accounts/3d9a1c2e-5b7f-4e21-9a0c-7f1e2d3c4b{n:02}/transactions")}
                }
            })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({ "accounts": accounts }))
        .unwrap()
        .into()
}

/// Set (to `1`) beside [`BARE_AXUM_ENV`]: the baseline verifies one RSA-2048 signature per
/// request before answering ([`RsaFloor`]).
const BARE_AXUM_RSA_ENV: &str = "PSD2_LOAD_BARE_AXUM_RSA";

/// The least a server that RSA-verifies every request must do on top of bare axum: one
/// RSA-2048 PKCS#1 v1.5 SHA-256 verification (the interface document's `rsa-sha256`,
/// Authentication 6) of a fixed signing string of the size the reads sign, with the public
/// key parsed once at start. No header is parsed, no certificate read, no keyId compared,
/// no Date or Digest checked, no database touched: an upper bound for any verifying server
/// on this machine, not a model of the sandbox.
struct RsaFloor {
    key: aws_lc_rs::signature::ParsedPublicKey,
    signing_string: Vec<u8>,
    signature: Vec<u8>,
}

impl RsaFloor {
    fn new() -> RsaFloor {
        use aws_lc_rs::signature::KeyPair as _;
        let pair = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
        // The shape of a read's signing string (Authentication 4): five signed headers.
        let signing_string = format!(
            "digest: SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\
             x-request-id: 99391c7e-ad88-49ec-a2ad-99ddcb1f7721\n\
             psu-id: {}\n\
             tpp-redirect-uri: {REDIRECT}\n\
             date: Sun, 22 Nov 2026 12:00:00 GMT",
            "0".repeat(11)
        )
        .into_bytes();
        let mut signature = vec![0; pair.public_modulus_len()];
        pair.sign(
            &aws_lc_rs::signature::RSA_PKCS1_SHA256,
            &aws_lc_rs::rand::SystemRandom::new(),
            &signing_string,
            &mut signature,
        )
        .unwrap();
        let key = aws_lc_rs::signature::ParsedPublicKey::new(
            &aws_lc_rs::signature::RSA_PKCS1_2048_8192_SHA256,
            pair.public_key().as_ref(),
        )
        .unwrap();
        RsaFloor {
            key,
            signing_string,
            signature,
        }
    }

    fn verify(&self) -> bool {
        self.key
            .verify_sig(&self.signing_string, &self.signature)
            .is_ok()
    }
}

/// The baseline server: axum on a default multi-thread tokio runtime (as `sandbox serve`),
/// answering the fixed body with `Content-Type: application/json` on every path (after one
/// [`RsaFloor`] verification when [`BARE_AXUM_RSA_ENV`] is set). Runs in its own process so
/// it competes for the CPU with wrk like the sandbox does.
fn bare_axum_main(port: u16) -> ! {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let rsa = std::env::var(BARE_AXUM_RSA_ENV)
        .is_ok_and(|v| v == "1")
        .then(|| Arc::new(RsaFloor::new()));
    rt.block_on(async move {
        let body = bare_axum_body();
        let app = axum::Router::new().fallback(axum::routing::get(move || {
            let body = body.clone();
            let rsa = rsa.clone();
            async move {
                if let Some(rsa) = rsa {
                    assert!(rsa.verify(), "the floor's own signature verifies");
                }
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    body,
                )
            }
        }));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        axum::serve(listener, app).await.unwrap();
    });
    std::process::exit(0)
}

/// Starts the baseline: this bench binary again, with [`BARE_AXUM_ENV`] set (and
/// [`BARE_AXUM_RSA_ENV`] when `rsa`).
fn start_bare_axum(rsa: bool) -> Server {
    let port = free_port();
    let child = Command::new(std::env::current_exe().unwrap())
        .env(BARE_AXUM_ENV, port.to_string())
        .env(BARE_AXUM_RSA_ENV, if rsa { "1" } else { "0" })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the bare axum baseline");
    wait_listening(port);
    Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
    }
}

fn wait_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The headers of one signed request, in order.
type SignedHeaders = Vec<(String, String)>;

/// `sandbox serve --in-memory` for the reads, optionally under a wrapper command from
/// `PSD2_LOAD_WRAP` (e.g. `valgrind --tool=callgrind`), with `extra` arguments. The binary is
/// this build's unless `PSD2_LOAD_BIN` names another (e.g. a copy of an older build, to
/// compare in one run).
fn start_reads_server(extra: &[&str]) -> Server {
    let port = free_port();
    let bin = std::env::var("PSD2_LOAD_BIN").unwrap_or_else(|_| BIN.to_string());
    let wrap: Vec<String> = std::env::var("PSD2_LOAD_WRAP")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let mut cmd = match wrap.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(&bin);
            c
        }
        None => Command::new(&bin),
    };
    cmd.args(["sandbox", "serve", "--in-memory", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .args(extra);
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sandbox serve");
    wait_listening(port);
    Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
    }
}

/// What one wrk run measured.
#[derive(Debug, Clone, Copy, Default)]
struct WrkFigures {
    requests: u64,
    per_sec: f64,
    p99_ms: f64,
}

/// Reads `N requests in`, `Requests/sec:` and the `99%` latency line of `wrk --latency`.
fn parse_wrk(text: &str) -> WrkFigures {
    let mut f = WrkFigures::default();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Requests/sec:") {
            f.per_sec = rest.trim().parse().unwrap_or(0.0);
        } else if let Some(rest) = t.strip_prefix("99%") {
            let v = rest.trim();
            let (num, unit) =
                v.split_at(v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len()));
            let n: f64 = num.parse().unwrap_or(f64::NAN);
            f.p99_ms = match unit {
                "us" => n / 1000.0,
                "ms" => n,
                "s" => n * 1000.0,
                "m" => n * 60_000.0,
                _ => f64::NAN,
            };
        } else if t.contains(" requests in ") {
            f.requests = t
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
        }
    }
    f
}

/// Seconds per wrk run (`PSD2_LOAD_SECS`, default 10).
fn reads_secs() -> u64 {
    std::env::var("PSD2_LOAD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10)
}

/// A wrk Lua script that sends the requests of `data` (a file written by
/// [`wrk_request_lines`]: `GET path` with each line's headers) in turn, starting over at the
/// end: unique pre-signed requests, for a sandbox that refuses a replayed X-Request-ID.
/// Requests beyond the number of lines in a run are replays.
fn wrk_cycling_script(path: &str, data: &Path) -> String {
    format!(
        r#"local reqs = {{}}
local i = 0
init = function(args)
  for line in io.lines({data:?}) do
    local hs = {{}}
    for name, value in string.gmatch(line, "([^\t:]+): ([^\t]*)") do
      hs[name] = value
    end
    reqs[#reqs + 1] = wrk.format("GET", {path:?}, hs)
  end
end
request = function()
  i = i + 1
  if i > #reqs then i = 1 end
  return reqs[i]
end
"#,
        data = data.display().to_string(),
    )
}

/// One line per request: its headers as `Name: value`, separated by tabs.
fn wrk_request_lines(requests: &[Vec<(String, String)>]) -> String {
    let mut out = String::new();
    for hs in requests {
        let line: Vec<String> = hs.iter().map(|(n, v)| format!("{n}: {v}")).collect();
        out.push_str(&line.join("\t"));
        out.push('\n');
    }
    out
}

/// Runs wrk (`-t1 -c64 --latency`) against `url` with the fixed `headers`, or, when `unique`
/// holds requests, with [`wrk_cycling_script`]. When `callgrind_pid` is given, the server's
/// callgrind counters are zeroed before and dumped after the run (`callgrind_control`).
fn wrk_measure(
    url: &str,
    headers: &[(String, String)],
    unique: Option<(&str, &[SignedHeaders])>,
    callgrind_pid: Option<u32>,
) -> (WrkFigures, String) {
    let secs = reads_secs();
    let mut cmd = Command::new("wrk");
    cmd.args([
        "-t",
        "1",
        "-c",
        "64",
        "-d",
        &format!("{secs}s"),
        "--latency",
    ]);
    let _script = match unique {
        Some((path, requests)) => {
            let data = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(data.path(), wrk_request_lines(requests)).unwrap();
            let file = tempfile::Builder::new().suffix(".lua").tempfile().unwrap();
            std::fs::write(file.path(), wrk_cycling_script(path, data.path())).unwrap();
            cmd.arg("-s").arg(file.path());
            Some((file, data))
        }
        None => {
            for (n, v) in headers {
                cmd.arg("-H").arg(format!("{n}: {v}"));
            }
            None
        }
    };
    cmd.arg(url);
    if let Some(pid) = callgrind_pid {
        let _ = Command::new("callgrind_control")
            .args(["-z", &pid.to_string()])
            .output();
    }
    let out = cmd.output().expect("wrk (apt-get install -y wrk)");
    if let Some(pid) = callgrind_pid {
        let _ = Command::new("callgrind_control")
            .args(["-d", &pid.to_string()])
            .output();
    }
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    (parse_wrk(&text), text)
}

/// A signed GET of `path` as the reads send it (`PSU-ID`, `PSU-IP-Address`: PSU present).
fn read_headers(
    creds: &Credentials,
    psu_id: &str,
    path: &str,
    accept_encoding: Option<&str>,
) -> Vec<(String, String)> {
    let mut hs = signed(creds, "GET", path, &[("PSU-ID", psu_id)], b"");
    if let Some(coding) = accept_encoding {
        hs.push(("Accept-Encoding".into(), coding.into()));
    }
    hs
}

/// The first consented card account of the PSU.
fn first_card_account(
    rt: &tokio::runtime::Runtime,
    creds: &Credentials,
    base: &str,
    psu_id: &str,
) -> String {
    rt.block_on(async {
        let http = reqwest::Client::new();
        let (status, v) = send(
            &http,
            base,
            creds,
            "GET",
            "/v1/card-accounts",
            &[("PSU-ID", psu_id)],
            b"",
        )
        .await;
        assert_eq!(status, 200, "{v}");
        v["cardAccounts"][0]["resourceId"]
            .as_str()
            .expect("a consented card account")
            .to_string()
    })
}

/// Every read of the AIS flow, signed (RSA-2048 verified by the sandbox), for wrk, each
/// beside the bare-axum baseline measured in the same run: requests/s, p99 and the ratio.
///
/// Environment: `PSD2_LOAD_SECS` (seconds per run, default 10); `PSD2_LOAD_UNIQUE=N` signs
/// N distinct requests per read (own X-Request-ID and Date) and cycles through them with a
/// wrk Lua script, for a sandbox with the X-Request-ID replay check on (without it the one
/// signed request is replayed, which needs the sandbox's replay switch); `PSD2_LOAD_WRAP`
/// runs the sandbox under a wrapper, and with `PSD2_LOAD_CALLGRIND=1` (wrapper `valgrind
/// --tool=callgrind`) each read's instructions are dumped per run to `callgrind.out.*`.
fn scenario_reads(rt: &tokio::runtime::Runtime, creds: &Credentials) {
    let unique: usize = std::env::var("PSD2_LOAD_UNIQUE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let bare = start_bare_axum(false);
    let floor = start_bare_axum(true);
    // One signed request replayed needs the replay check off; unique ones run with it on.
    let server = start_reads_server(if unique == 0 {
        &["--allow-replays"]
    } else {
        &[]
    });
    let callgrind = std::env::var("PSD2_LOAD_CALLGRIND").is_ok_and(|v| v == "1");
    let callgrind_pid = callgrind.then(|| server.child.id());
    let s = rt.block_on(setup(&server.base, creds));
    let card = first_card_account(rt, creds, &server.base, &s.psu_id);
    let acc = format!("/v1/accounts/{}", s.account_id);
    let card = format!("/v1/card-accounts/{card}");
    let reads: Vec<(String, Option<&str>)> = vec![
        ("/v1/accounts".into(), None),
        (acc.clone(), None),
        (format!("{acc}/balances"), None),
        (format!("{acc}/transactions"), Some("gzip")),
        (format!("{acc}/transactions"), None),
        ("/v1/card-accounts".into(), None),
        (card.clone(), None),
        (format!("{card}/balances"), None),
        (format!("{card}/transactions"), None),
    ];
    let secs = reads_secs();
    let (axum_before, text) = wrk_measure(&format!("{}/", bare.base), &[], None, None);
    println!(
        "== bare axum, fixed {} byte JSON, wrk -t1 -c64 -d{secs}s\n{text}",
        bare_axum_body().len()
    );
    // The RSA floor gets the accounts read's signed headers, so the bytes on the wire match.
    let floor_headers = read_headers(creds, &s.psu_id, "/v1/accounts", None);
    let (floor_before, text) = wrk_measure(
        &format!("{}/v1/accounts", floor.base),
        &floor_headers,
        None,
        None,
    );
    println!("== bare axum + one RSA-2048 verification per request (the floor)\n{text}");
    let mut rows = Vec::new();
    for (path, coding) in &reads {
        let hs = read_headers(creds, &s.psu_id, path, *coding);
        let size = rt.block_on(async {
            let client = reqwest::Client::builder().no_gzip().build().unwrap();
            let mut rb = client.get(format!("{}{path}", server.base));
            for (n, v) in &hs {
                rb = rb.header(n, v);
            }
            let r = rb.send().await.unwrap();
            assert_eq!(r.status(), 200, "{path}");
            r.bytes().await.unwrap().len()
        });
        let presigned: Vec<Vec<(String, String)>> = (0..unique)
            .map(|_| read_headers(creds, &s.psu_id, path, *coding))
            .collect();
        let (f, text) = wrk_measure(
            &format!("{}{path}", server.base),
            &hs,
            (unique > 0).then_some((path.as_str(), presigned.as_slice())),
            callgrind_pid,
        );
        let coding_text = coding.map_or(String::new(), |c| format!(", Accept-Encoding: {c}"));
        println!(
            "== signed GET {path} (body {size} bytes{coding_text}), wrk -t1 -c64 -d{secs}s\n{text}"
        );
        assert!(
            !text.contains("Non-2xx"),
            "every request must be answered 200 (signature verified)"
        );
        rows.push((path.clone(), *coding, size, f));
    }
    let (floor_after, text) = wrk_measure(
        &format!("{}/v1/accounts", floor.base),
        &floor_headers,
        None,
        None,
    );
    println!("== the floor again\n{text}");
    let (axum_after, text) = wrk_measure(&format!("{}/", bare.base), &[], None, None);
    println!("== bare axum again\n{text}");
    let axum = (axum_before.per_sec + axum_after.per_sec) / 2.0;
    let floor_mean = (floor_before.per_sec + floor_after.per_sec) / 2.0;
    println!(
        "== the floor: bare axum + RSA-2048 verify, {:.0} and {:.0} req/s, p99 {:.2} / {:.2} ms: {:.0} % of bare axum",
        floor_before.per_sec,
        floor_after.per_sec,
        floor_before.p99_ms,
        floor_after.p99_ms,
        100.0 * floor_mean / axum
    );
    println!(
        "== reads summary (bare axum {:.0} and {:.0} req/s, p99 {:.2} / {:.2} ms; ratio against their mean){}",
        axum_before.per_sec,
        axum_after.per_sec,
        axum_before.p99_ms,
        axum_after.p99_ms,
        if unique > 0 {
            format!("; {unique} unique pre-signed requests per read")
        } else {
            "; one signed request replayed".to_string()
        }
    );
    println!("| read | body bytes | requests/s | p99 | of bare axum | of the RSA floor |");
    println!("|---|---|---|---|---|---|");
    for (path, coding, size, f) in rows {
        let coding = coding.map_or(String::new(), |c| format!(" (Accept-Encoding: {c})"));
        println!(
            "| `GET {path}`{coding} | {size} | {:.0} | {:.2} ms | {:.0} % | {:.0} % |",
            f.per_sec,
            f.p99_ms,
            100.0 * f.per_sec / axum,
            100.0 * f.per_sec / floor_mean
        );
        if callgrind {
            println!(
                "|   (callgrind: {} requests in this run's dump) | | | | |",
                f.requests
            );
        }
    }
}
