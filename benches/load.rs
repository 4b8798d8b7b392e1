//! Load runs against the real `psd2-console sandbox serve` binary on loopback, load generator
//! (wrk) on the same 2-core machine. Results go to BENCHMARKS.md ("Sandbox load (issue 23)").
//!
//! `cargo bench --bench load [-- NAME...]` (needs `wrk`: `apt-get install -y wrk`; the
//! writes also PostgreSQL's `initdb`/`pg_ctl`, else they run on SQLite only). Every run
//! starts with [`selfcheck`] (the bench's own helpers). NAME picks scenarios (`all` or none:
//! every one):
//!
//! - `reads` ([`scenario_reads`], issue 23 "Sandbox"): every read of the AIS flow in both
//!   replay modes (`--allow-replays` with one signed request replayed, and the replay check
//!   on with unique pre-signed requests, none sent twice), each mode beside bare axum and the
//!   RSA floor ([`RsaFloor`]) of the same run, plus bare axum and the floor answering the
//!   sandbox's own ~100 KB transaction page; printed: req/s, p50, p99, the ratios and
//!   PASS/MISS against issue 23's targets (the median of alternated pairs, below), and after
//!   each mode's table the gzip pages beside the floor answering as many bytes as each sends
//!   ([`print_sized_table`]; not a verdict).
//! - `writes` ([`scenario_writes`]): payment and consent creation, unique pre-signed
//!   requests, on a SQLite file and on PostgreSQL, beside the floor; every 201 counted in the
//!   database.
//! - `tls` ([`scenario_tls`]): the reads over `sandbox serve --tls` beside an RSA floor on the
//!   same rustls configuration (the gzip pages also beside it answering their size).
//! - `replaycost` ([`scenario_replay_cost`], only by name): one read on the floor and on the
//!   sandbox with the replay check off and on, each through the same wrk Lua script on the
//!   same pre-signed requests, with server page faults, context switches, system calls and
//!   wrk's own CPU per request (where the check-on mode's CPU goes, session 21).
//! - `transactions`: the default transaction page replayed, then with the replay check on.
//! - `payments`: 64 concurrent payment creations: each answer 201 with a distinct paymentId,
//!   and the database holds exactly 64 payments afterwards (count from the SQLite file).
//! - `restart`: writers create payments while the server is killed (SIGKILL) and restarted on
//!   the same database file; every payment that was answered 201 is still there.
//!
//! `PSD2_LOAD_SECS` sets the seconds of each replayed run (default 10), `PSD2_LOAD_UNIQUE_SECS`
//! those of each run of unique pre-signed requests (default 3: each request costs one RSA
//! signature beforehand, and all must be sent within their Date window), `PSD2_LOAD_PAIRS`
//! the number of alternated pairs per read and write (default 3, [`DEFAULT_PAIRS`]).
//! `cargo bench --bench load -- selfcheck` runs only the self-check (no scenario has that
//! name): the bench's pure functions (pairing, median, verdict) are checked there, since a
//! bench without the test harness has no `#[test]`s (`cargo test --bench load` would run
//! every scenario).
//!
//! # How a read, a TLS read and a write are judged (session 22)
//!
//! Issue 23's targets are ratios of a sandbox run's req/s to the RSA floor's in the same run.
//! On this shared 2-core VM the CPU time per request drifts 10–20 % within minutes, for the
//! floor as for the sandbox, so one floor run beside one sandbox run is one noisy sample
//! (session 21: the same read moved from 84 % to 93 % between two quiet passes). Each read
//! (both replay modes and over TLS) and each write is therefore measured as `PSD2_LOAD_PAIRS`
//! short sandbox runs alternated with floor runs on the same requests, F R F R F R F
//! ([`alternate`]; one read's last floor run is the next read's first when they use the same
//! floor path; with the replay check on, every run has its own unused pre-signed requests,
//! all of a read's signed before its first floor run, [`Pool`]). Each pair's share is its
//! run's req/s over the mean of the floor runs just before and after it ([`Pair::share`]),
//! and the CPU per request the same way ([`Pair::cpu_ratio`]). The table prints the median of
//! the pairs' shares with their min–max, and **the verdict is the median's** ([`verdict`]):
//! the target is unchanged (90 % of the floor for the reads, 85 % of the TLS floor, 50 % for
//! the writes), the figures stay req/s ratios and CPU per request; what changes is that one
//! pair the machine's drift spoiled (high or low) no longer decides a read, and the min–max
//! shows how far the machine moved during the read. A read whose range straddles the target
//! is one the machine cannot settle in this run; a median on the right side of it is what
//! most of its pairs said. req/s, p50 and p99 in the tables are the medians of the read's
//! runs (the p99 target is judged on the median p99). A gzip page's pairs also run the floor
//! answering as many bytes ([`sized_path`]) between the floor's run before and the page's:
//! its median share of the small floor is printed beside the page's verdict, and when it is
//! below the page's target a PHYSICAL LIMIT line says so (below the target plus
//! [`SIZED_MARGIN`], a CEILING line).
//!
//! # Session 23: the 100 KB verdict alternated too, and setup that costs what is sent
//!
//! **The plain 100 KB pages** (the transaction pages without gzip, not over TLS) are judged
//! against bare axum answering the same 100 KB page the way every read is judged against the
//! floor: bare axum's and the floor's 100 KB runs are made just before each of the page's
//! floor runs, B F R B F R … B F ([`alternate_big`]), so that every sandbox run sits between
//! two of bare axum's 100 KB runs. A pair's 100 KB share is its run's req/s over the mean of
//! bare axum's 100 KB runs either side ([`Pair::big_share`]); "100 KB: PASS/MISS" is the
//! median of the pairs' shares against 90 %, printed with its min–max; the table's "of the
//! 100 KB floor" and "of the 100 KB bare axum" cells are the medians of the pairs with their
//! ranges. The PHYSICAL LIMIT line is the 100 KB floor's own share of bare axum's 100 KB runs
//! beside the page, the median of its pairs with their range ([`Pair::big_limit`]): below 90 %
//! no verifying server can meet the 100 KB target in that run. (Until session 22 both came
//! from the means of 100 KB baselines taken before and after all the rows, minutes away; the
//! baselines are still measured and printed.)
//!
//! **Pre-signed requests** (the replay check on; the writes): a read's or write's runs take
//! their requests in order from one [`Pool`]: each run gets a file of the next unused ones,
//! and only what wrk took from it is spent ([`CYCLING_LUA`] prints how many), so what one run
//! did not send the next one sends. A read's pool is signed before its first floor run for
//! all its runs: one run's margin ([`UNIQUE_MARGIN`] × the slower of its replayed runs and the
//! floor's through the same script) plus what the other runs should send; a write's for its
//! first run from the floor's rate. More are signed only before a pair's floor run, when fewer
//! are left than the fastest run so far × the margin, or too little of their Date window. A
//! run that gets through its file (the machine sped up) runs again on twice what it reached,
//! up to [`UNIQUE_ATTEMPTS`] times ([`run_pooled`]): the sizing no longer fails the bench.
//! A read's bound (the lower of the floor's fastest run through the script and 1.5 × its own
//! fastest replayed run) is scaled by what the earlier reads' runs reached of theirs
//! ([`calibrate`]). Signing is most of a check-on run's cost (~7,600 signatures/s on both
//! cores of a quiet machine, ~1,700–2,200/s of a busy one: one second of a read's run costs
//! 5–15 s of signing); in session 23's busy runs (`reads`, 1 s runs) the pools signed 1.20 ×
//! what 5 pairs' runs sent, where session 22's sets signed 1.63 × for 3 pairs (and signed 4
//! sets again): 5 pairs took 774 s against 535 s for session 22's 3 pairs, not the 5/3 × (the
//! replayed and TLS runs are measurement and scale with the pairs).

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

use psd2_console::cert::generate::{TppCertSpec, credentials_of, generate_set};
use psd2_console::cert::{Certificate, Credentials};
use psd2_console::sandbox::tls::ServerTls;
use psd2_console::signing::{
    SignOptions, SignatureParams, TrustedKey, build_signing_string, sign_request,
};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_psd2-console");
const REDIRECT: &str = "http://127.0.0.1:9/callback";

struct Server {
    child: Child,
    base: String,
    /// The child leads its own process group (a `PSD2_LOAD_WRAP` wrapper and the sandbox it
    /// started): the whole group is killed, not only the wrapper (strace or perf would
    /// leave the sandbox running, spoiling every later measurement).
    group: bool,
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.group {
            let _ = Command::new("kill")
                .args(["-s", "KILL", "--", &format!("-{}", self.child.id())])
                .status();
        }
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
        group: false,
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

/// Runs a consent SCA through the HTML forms (the library's headless browser, every account
/// and card account ticked) with `browser` (a client that does not follow redirects and keeps
/// cookies); returns the PSU-ID.
async fn sca(browser: &reqwest::Client, sca_url: &str) -> String {
    use psd2_console::client::headless_sca::{self as headless, AccountChoice, Context, ScaPlan};
    let plan = ScaPlan {
        customer: "02079146148".into(),
        context: Context::Private,
        accounts: AccountChoice::AsOffered,
        reject: false,
    };
    let tick = |f: &mut headless::Form| {
        let mut mine = common::Form(f.clone());
        common::sca::tick_all(&mut mine);
        *f = mine.0;
    };
    let to_tpp = headless::walk(browser, sca_url, &plan, tick)
        .await
        .unwrap_or_else(|e| panic!("SCA at {sca_url}: {e}"));
    common::sca::success(&to_tpp).psu_id
}

struct Setup {
    psu_id: String,
    account_id: String,
    bban: String,
}

/// The consent of the default PSU over plain HTTP ([`setup_with`] with new clients).
async fn setup(base: &str, creds: &Credentials) -> Setup {
    setup_with(&reqwest::Client::new(), &common::browser(), base, creds).await
}

/// `GET /v1/accounts` (401 with a scaRedirect), the SCA, and `GET /v1/accounts` again with
/// the PSU-ID: the PSU, its first account and that account's BBAN.
async fn setup_with(
    http: &reqwest::Client,
    browser: &reqwest::Client,
    base: &str,
    creds: &Credentials,
) -> Setup {
    let (status, v) = send(http, base, creds, "GET", "/v1/accounts", &[], b"").await;
    assert_eq!(status, 401, "{v}");
    let href = v["_links"]["scaRedirect"]["href"]
        .as_str()
        .unwrap()
        .to_string();
    let psu_id = sca(browser, &href).await;
    let (status, v) = send(
        http,
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

// ---------------------------------------------------------------------------------------
// Issue 23: every AIS read in both replay modes beside the RSA floor and bare axum of the
// same run, the 100 KB baselines, the writes on SQLite and PostgreSQL, and the reads over TLS.

/// Set (to a port) in the environment of the bench binary re-executed as a baseline server
/// ([`baseline_main`]).
const BARE_AXUM_ENV: &str = "PSD2_LOAD_BARE_AXUM";

/// Set (to `1`) beside [`BARE_AXUM_ENV`]: the baseline is the RSA floor ([`RsaFloor`]); the
/// certificate whose key verifies is the PEM file named by [`FLOOR_CERT_ENV`].
const BARE_AXUM_RSA_ENV: &str = "PSD2_LOAD_BARE_AXUM_RSA";

/// The TPP certificate (PEM file) the floor verifies with.
const FLOOR_CERT_ENV: &str = "PSD2_LOAD_FLOOR_CERT";

/// A file whose bytes the baseline answers on [`BIG_PATH`] (the sandbox's plain transaction
/// page, taken from its real answer at the start of the run).
const BIG_BODY_ENV: &str = "PSD2_LOAD_BIG_BODY";

/// A data directory holding the sandbox CA: the baseline serves HTTPS with the rustls
/// configuration of `sandbox serve --tls` ([`ServerTls::acceptor`]) on the library's own
/// server loop ([`psd2_console::http_server::serve_tls`]).
const TLS_DATA_ENV: &str = "PSD2_LOAD_TLS_DATA";

/// The baselines' path of the ~100 KB body ([`BIG_BODY_ENV`]); every other path gets
/// [`bare_axum_body`].
const BIG_PATH: &str = "/big";

/// The baselines answer `/sized/{n}` with the first `n` bytes of the ~100 KB body
/// ([`BIG_BODY_ENV`]; all of it when `n` is larger): the floor beside a gzip page answers
/// as many bytes as that page sends ([`sized_path`], [`print_sized_table`]).
const SIZED_PREFIX: &str = "/sized/";

/// The baselines' path answering `bytes` bytes ([`SIZED_PREFIX`]).
fn sized_path(bytes: usize) -> String {
    format!("{SIZED_PREFIX}{bytes}")
}

/// Issue 23's target for every read: this share of the RSA floor of the same run...
const READ_TARGET: f64 = 0.90;
/// ...with a p99 latency under this many milliseconds.
const READ_P99_MS: f64 = 5.0;
/// Issue 23's target for the plain ~100 KB pages: this share of bare axum answering the same
/// bytes in the same run.
const BIG_TARGET: f64 = 0.90;
/// Issue 23's target for payment and consent creation: this share of the RSA floor.
const WRITE_TARGET: f64 = 0.50;
/// Issue 23's target for the reads over TLS: this share of the RSA floor over TLS.
const TLS_TARGET: f64 = 0.85;
/// A body of at least this many bytes (uncompressed) makes a row a "100 KB page".
const BIG_ROW_BYTES: usize = 50_000;

/// wrk's connections (`-c`), one thread (`-t1`), as issue 23 measures.
const CONNECTIONS: usize = 64;

/// The fixed ~2 KB body of the baselines: a JSON document of an `accountList`-like shape.
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

/// The least a server that RSA-verifies every request must do on top of bare axum (issue 23's
/// "independent floor"): per request, parse the `Signature` header (RFC 2047-decoded when
/// encoded: [`SignatureParams::parse`], as the sandbox does), rebuild the signing string from
/// the request's own headers in the order of its `headers` parameter
/// ([`build_signing_string`], Authentication 7) and verify RSA-2048 PKCS#1 v1.5 SHA-256 with
/// the TPP's public key, parsed once at start ([`TrustedKey`]). No certificate header is
/// parsed, no keyId compared, no Date or Digest checked, no replay remembered, no database
/// touched: an upper bound for any verifying server on this machine, not a model of the
/// sandbox.
struct RsaFloor {
    key: TrustedKey,
}

impl RsaFloor {
    fn new(certificate: Certificate) -> RsaFloor {
        RsaFloor {
            key: TrustedKey::new(certificate, false).unwrap(),
        }
    }

    /// Verifies the request; `Err` says why not (the floor then answers 400, which wrk counts
    /// as Non-2xx and the run fails).
    fn verify(
        &self,
        method: &str,
        path_and_query: &str,
        headers: &axum::http::HeaderMap,
    ) -> Result<(), String> {
        let value = headers
            .get("signature")
            .ok_or("no Signature header")?
            .to_str()
            .map_err(|e| e.to_string())?;
        let params = SignatureParams::parse(value).map_err(|e| e.to_string())?;
        let signing_string =
            build_signing_string(method, path_and_query, &params.headers, |name| {
                headers.get(name).and_then(|v| v.to_str().ok())
            })
            .map_err(|e| format!("header missing: {e}"))?;
        if self
            .key
            .verify(signing_string.as_bytes(), &params.signature)
        {
            Ok(())
        } else {
            Err("the signature does not verify".into())
        }
    }
}

/// A baseline server: axum on a default multi-thread tokio runtime (as `sandbox serve`),
/// answering [`bare_axum_body`] (or the [`BIG_BODY_ENV`] bytes on [`BIG_PATH`]) with
/// `Content-Type: application/json` to any method and path, after one [`RsaFloor`]
/// verification when [`BARE_AXUM_RSA_ENV`] is set. Plain HTTP through `axum::serve`; with
/// [`TLS_DATA_ENV`], HTTPS through the sandbox's own server loop and rustls configuration.
/// Runs in its own process so that it competes for the CPU with wrk like the sandbox does.
fn baseline_main(port: u16) -> ! {
    use axum::http::{HeaderMap, Method, StatusCode, Uri, header::CONTENT_TYPE};
    use axum::response::IntoResponse as _;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let floor = std::env::var(BARE_AXUM_RSA_ENV)
        .is_ok_and(|v| v == "1")
        .then(|| {
            let cert = std::env::var(FLOOR_CERT_ENV).expect("PSD2_LOAD_FLOOR_CERT");
            Arc::new(RsaFloor::new(Certificate::load(Path::new(&cert)).unwrap()))
        });
    let big: Option<bytes::Bytes> = std::env::var(BIG_BODY_ENV)
        .ok()
        .map(|p| std::fs::read(p).unwrap().into());
    let tls_data = std::env::var(TLS_DATA_ENV).ok();
    rt.block_on(async move {
        let small = bare_axum_body();
        let app =
            axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap| {
                let (small, big, floor) = (small.clone(), big.clone(), floor.clone());
                async move {
                    if let Some(floor) = floor {
                        let pq = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
                        if let Err(why) = floor.verify(method.as_str(), pq, &headers) {
                            return (StatusCode::BAD_REQUEST, why).into_response();
                        }
                    }
                    let sized = uri
                        .path()
                        .strip_prefix(SIZED_PREFIX)
                        .and_then(|n| n.parse::<usize>().ok());
                    let body = match (big, sized) {
                        (Some(big), _) if uri.path() == BIG_PATH => big,
                        (Some(big), Some(n)) => big.slice(..n.min(big.len())),
                        _ => small,
                    };
                    ([(CONTENT_TYPE, "application/json")], body).into_response()
                }
            });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        match tls_data {
            None => axum::serve(listener, app).await.unwrap(),
            Some(dir) => {
                let ca =
                    psd2_console::cert::ca::SandboxCa::load_or_create(Path::new(&dir)).unwrap();
                // The names `sandbox serve --tls` gives its certificate on 127.0.0.1.
                let acceptor = ServerTls::new(ca)
                    .unwrap()
                    .acceptor(&["localhost".into(), "127.0.0.1".into()])
                    .unwrap();
                psd2_console::http_server::serve_tls(
                    listener,
                    app,
                    Some(acceptor),
                    std::future::pending(),
                )
                .await
                .unwrap();
            }
        }
    });
    std::process::exit(0)
}

/// What a baseline process serves.
#[derive(Default)]
struct BaselineSpec<'a> {
    /// The RSA floor's certificate (PEM file); `None` for bare axum.
    floor_cert: Option<&'a Path>,
    /// The ~100 KB body for [`BIG_PATH`].
    big_body: Option<&'a Path>,
    /// HTTPS with the sandbox CA of this data directory.
    tls_data: Option<&'a Path>,
}

/// Starts a baseline: this bench binary again, with [`BARE_AXUM_ENV`] set.
fn start_baseline(spec: &BaselineSpec) -> Server {
    let port = free_port();
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env(BARE_AXUM_ENV, port.to_string())
        .env(
            BARE_AXUM_RSA_ENV,
            if spec.floor_cert.is_some() { "1" } else { "0" },
        )
        .env_remove(FLOOR_CERT_ENV)
        .env_remove(BIG_BODY_ENV)
        .env_remove(TLS_DATA_ENV);
    if let Some(cert) = spec.floor_cert {
        cmd.env(FLOOR_CERT_ENV, cert);
    }
    if let Some(big) = spec.big_body {
        cmd.env(BIG_BODY_ENV, big);
    }
    if let Some(dir) = spec.tls_data {
        cmd.env(TLS_DATA_ENV, dir);
    }
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start a baseline server");
    wait_listening(port);
    let scheme = if spec.tls_data.is_some() {
        "https"
    } else {
        "http"
    };
    Server {
        child,
        base: format!("{scheme}://127.0.0.1:{port}"),
        group: false,
    }
}

fn wait_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `sandbox serve` for the reads (`--in-memory` unless `extra` names a `--db`), optionally
/// under a wrapper command from `PSD2_LOAD_WRAP` (e.g. `valgrind --tool=callgrind`), with
/// `extra` arguments, on the data directory `home` (`PSD2_CONSOLE_HOME`) when given. The
/// binary is this build's unless `PSD2_LOAD_BIN` names another (e.g. a copy of an older
/// build, to compare in one run). `https` when `extra` holds `--tls`.
fn start_reads_server(extra: &[&str], home: Option<&Path>) -> Server {
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
            std::os::unix::process::CommandExt::process_group(&mut c, 0);
            c
        }
        None => Command::new(&bin),
    };
    cmd.args(["sandbox", "serve"]);
    if !extra.contains(&"--db") {
        cmd.arg("--in-memory");
    }
    cmd.arg("--addr")
        .arg(format!("127.0.0.1:{port}"))
        .args(extra);
    if let Some(home) = home {
        cmd.env("PSD2_CONSOLE_HOME", home);
    }
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sandbox serve");
    wait_listening(port);
    let scheme = if extra.contains(&"--tls") {
        "https"
    } else {
        "http"
    };
    Server {
        child,
        base: format!("{scheme}://127.0.0.1:{port}"),
        group: !wrap.is_empty(),
    }
}

/// What one wrk run measured.
#[derive(Debug, Clone, Copy, Default)]
struct WrkFigures {
    /// Responses completed (`N requests in`).
    requests: u64,
    per_sec: f64,
    p50_ms: f64,
    p99_ms: f64,
    /// `Non-2xx or 3xx responses:`.
    non_2xx: u64,
    /// The socket errors' sum (connect, read, write, timeout).
    socket_errors: u64,
    /// How often the cycling script started over ([`CYCLING_LUA`]); `None` without it.
    wrapped: Option<u64>,
    /// How many of the cycled requests wrk took from the file ([`CYCLING_LUA`]: the first
    /// `used`, sent or in flight; the rest never left wrk); `None` without the script.
    used: Option<u64>,
    /// The server process's CPU time (user + system, `/proc/<pid>/stat`, 10 ms ticks) during
    /// the run divided by the requests wrk completed, in µs ([`wrk_cpu`]); `None` when not
    /// measured. Unlike req/s it hardly depends on what else runs on the machine, and beside
    /// the floor's it says whether a gap in req/s is the server's work or its waiting.
    server_cpu_us: Option<f64>,
    /// The system (kernel) part of [`WrkFigures::server_cpu_us`], in µs per request.
    server_sys_us: Option<f64>,
}

/// A wrk latency like `1.23ms`, `812.00us`, `1.02s` in milliseconds.
fn wrk_ms(v: &str) -> f64 {
    let v = v.trim();
    let (num, unit) = v.split_at(v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len()));
    let n: f64 = num.parse().unwrap_or(f64::NAN);
    match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        _ => f64::NAN,
    }
}

/// Reads the figures of `wrk --latency` output (and the cycling script's line).
fn parse_wrk(text: &str) -> WrkFigures {
    let mut f = WrkFigures::default();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Requests/sec:") {
            f.per_sec = rest.trim().parse().unwrap_or(0.0);
        } else if let Some(rest) = t.strip_prefix("50%") {
            f.p50_ms = wrk_ms(rest);
        } else if let Some(rest) = t.strip_prefix("99%") {
            f.p99_ms = wrk_ms(rest);
        } else if let Some(rest) = t.strip_prefix("Non-2xx or 3xx responses:") {
            f.non_2xx = rest.trim().parse().unwrap_or(u64::MAX);
        } else if let Some(rest) = t.strip_prefix("Socket errors:") {
            f.socket_errors = rest
                .split(',')
                .filter_map(|p| p.split_whitespace().last()?.parse::<u64>().ok())
                .sum();
        } else if let Some(rest) = t.strip_prefix("cycled-requests-wrapped:") {
            f.wrapped = rest.trim().parse().ok();
        } else if let Some(rest) = t.strip_prefix("cycled-requests-used:") {
            f.used = rest.trim().parse().ok();
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

/// Seconds per run with unique pre-signed requests (`PSD2_LOAD_UNIQUE_SECS`, default 3 or
/// `PSD2_LOAD_SECS` when smaller): every request of such a run is signed beforehand (one
/// RSA-2048 signature each, about 4,000 per core and second), and all of them must be sent
/// within their `Date` window.
fn unique_secs() -> u64 {
    std::env::var("PSD2_LOAD_UNIQUE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| reads_secs().min(3))
        .max(1)
}

/// wrk's Lua script for unique pre-signed requests: reads the raw requests (each ended by a
/// NUL byte) from the file given after `--` (in pieces, to hold each byte once: a quiet
/// machine's set is about 200,000 requests of 2.3 KB) and sends them in order, one each. Should wrk get
/// through all of them it starts over, and counts that in `wrapped`; `done` prints the sum
/// over wrk's threads as `cycled-requests-wrapped: N` ([`parse_wrk`]). For the sandbox with
/// the replay check on, N must be 0 (else a request was sent twice). It also prints
/// `cycled-requests-used: M`, how many requests wrk took from the file (the first M, sent or
/// in flight when the run ended; with N = 0 the rest were never sent: [`Pool`] keeps them for
/// the next run).
const CYCLING_LUA: &str = r#"
local reqs = {}
i = 0
wrapped = 0
local threads = {}
setup = function(thread)
  table.insert(threads, thread)
end
init = function(args)
  -- Read in 1 MiB pieces, so that the file's text is never held whole beside its requests.
  local f = assert(io.open(args[1], "rb"))
  local rest = ""
  while true do
    local chunk = f:read(1048576)
    if not chunk then break end
    local buf = rest .. chunk
    local from = 1
    while true do
      local z = string.find(buf, "\0", from, true)
      if not z then break end
      reqs[#reqs + 1] = string.sub(buf, from, z - 1)
      from = z + 1
    end
    rest = string.sub(buf, from)
  end
  f:close()
end
request = function()
  i = i + 1
  if i > #reqs then
    i = 1
    wrapped = wrapped + 1
  end
  return reqs[i]
end
done = function(summary, latency, requests)
  local w = 0
  local used = 0
  for _, t in ipairs(threads) do
    w = w + t:get("wrapped")
    used = used + t:get("i")
  end
  io.write(string.format("cycled-requests-wrapped: %d\n", w))
  io.write(string.format("cycled-requests-used: %d\n", used))
end
"#;

/// Requests signed beforehand, as raw HTTP/1.1 requests in a file for [`CYCLING_LUA`].
struct Presigned {
    file: tempfile::NamedTempFile,
    count: usize,
    /// The path of the first request (its request line is what wrk sends, whatever the URL
    /// given to wrk says: [`wrk`] checks that they agree).
    path: String,
    /// When signing started: every `Date` is this plus [`DATE_AHEAD`].
    started: Instant,
    /// Where each request ends in the file (the byte after its NUL), in order: [`Pool`]
    /// takes slices of them.
    ends: Vec<u64>,
}

/// How much of its Date window a [`Pool`]'s unused requests must have left to be kept when
/// more are signed (signing and the next pair's runs take less on this machine at 1–4 s per
/// run).
const POOL_KEEP: Duration = Duration::from_secs(60);

impl Presigned {
    /// This file's requests followed by `other`'s (same path), dated from the older start.
    fn append(self, other: Presigned) -> Presigned {
        assert_eq!(self.path, other.path, "one pool, one path");
        let base = self.ends.last().copied().unwrap_or(0);
        let mut out = std::fs::OpenOptions::new()
            .append(true)
            .open(self.file.path())
            .unwrap();
        let copied = std::io::copy(
            &mut std::fs::File::open(other.file.path()).unwrap(),
            &mut out,
        )
        .unwrap();
        assert_eq!(copied, other.ends.last().copied().unwrap_or(0));
        let mut ends = self.ends;
        ends.extend(other.ends.iter().map(|e| base + e));
        Presigned {
            file: self.file,
            count: self.count + other.count,
            path: self.path,
            started: self.started.min(other.started),
            ends,
        }
    }

    /// A new file of the requests `from..from + n` of this one (fewer when it has fewer),
    /// same path and Date start: one run's slice of a [`Pool`].
    fn slice(&self, from: usize, n: usize) -> Presigned {
        let to = (from + n).min(self.count);
        let from = from.min(to);
        let start = if from == 0 { 0 } else { self.ends[from - 1] };
        let end = if to == 0 { 0 } else { self.ends[to - 1] };
        let mut src = std::fs::File::open(self.file.path()).unwrap();
        std::io::Seek::seek(&mut src, std::io::SeekFrom::Start(start)).unwrap();
        let file = tempfile::NamedTempFile::new().unwrap();
        let copied = std::io::copy(
            &mut std::io::Read::take(src, end - start),
            &mut std::io::BufWriter::new(file.as_file()),
        )
        .unwrap();
        assert_eq!(
            copied,
            end - start,
            "the pool's file is shorter than its index"
        );
        Presigned {
            file,
            count: to - from,
            path: self.path.clone(),
            started: self.started,
            ends: self.ends[from..to].iter().map(|e| e - start).collect(),
        }
    }
}

/// How far ahead of its signing a pre-signed request is dated: the sandbox accepts a `Date`
/// up to 60 s off its clock (Authentication 4), so the requests are good from 10 s after
/// signing starts... until 110 s after it.
const DATE_AHEAD: Duration = Duration::from_secs(50);
/// The last moment (from the start of signing) at which a pre-signed request may be sent.
const DATE_GOOD_FOR: Duration = Duration::from_secs(105);

/// One request to sign for [`presign`]: method, path, body, headers added unsigned (e.g.
/// `Accept-Encoding`).
type RequestSpec = (&'static str, String, Vec<u8>, Vec<(String, String)>);

/// Signs `n` requests (`make(i)` for i in 0..n) with their own X-Request-ID (checked unique)
/// and `PSU-ID: psu_id`, on every core, dated [`DATE_AHEAD`] after now; writes them as raw
/// requests for [`CYCLING_LUA`].
fn presign(
    creds: &Credentials,
    n: usize,
    psu_id: &str,
    make: &(dyn Fn(usize) -> RequestSpec + Sync),
) -> Presigned {
    presign_sets(creds, n, 1, psu_id, make).pop().unwrap()
}

/// [`presign`] for `sets` runs at once: `n × sets` requests (`make(i)` for i in 0..n × sets,
/// all with the same path), every X-Request-ID unique across the sets, in `sets` files of `n`
/// requests each (request `i` in set `i % sets`), all dated from the same start: the
/// alternated runs of one read ([`alternate`]) follow each other without signing between
/// them.
fn presign_sets(
    creds: &Credentials,
    n: usize,
    sets: usize,
    psu_id: &str,
    make: &(dyn Fn(usize) -> RequestSpec + Sync),
) -> Vec<Presigned> {
    let started = Instant::now();
    let date = SystemTime::now() + DATE_AHEAD;
    let total = n * sets;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    // Per thread: the bytes of each set, where each of its requests ends in them, and the
    // ids it signed.
    type Part = (Vec<Vec<u8>>, Vec<Vec<u64>>, Vec<String>);
    let parts: Vec<Part> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut out = vec![Vec::new(); sets];
                    let mut ends = vec![Vec::new(); sets];
                    let mut ids = Vec::new();
                    for i in (t..total).step_by(threads) {
                        let ends = &mut ends[i % sets];
                        let out = &mut out[i % sets];
                        let (method, path, body, unsigned) = make(i);
                        let hs =
                            signed_at(creds, method, &path, &[("PSU-ID", psu_id)], &body, date);
                        out.extend_from_slice(
                            format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n").as_bytes(),
                        );
                        for (k, v) in hs.iter().chain(&unsigned) {
                            if k.eq_ignore_ascii_case("X-Request-ID") {
                                ids.push(v.clone());
                            }
                            out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
                        }
                        if method != "GET" {
                            out.extend_from_slice(
                                format!("Content-Length: {}\r\n", body.len()).as_bytes(),
                            );
                        }
                        out.extend_from_slice(b"\r\n");
                        assert!(!body.contains(&0), "a NUL byte would split the request");
                        out.extend_from_slice(&body);
                        out.push(0);
                        ends.push(out.len() as u64);
                    }
                    (out, ends, ids)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let distinct: HashSet<&String> = parts.iter().flat_map(|(_, _, ids)| ids).collect();
    assert_eq!(
        distinct.len(),
        total,
        "every pre-signed X-Request-ID is unique"
    );
    (0..sets)
        .map(|set| {
            let file = tempfile::NamedTempFile::new().unwrap();
            let mut w = std::io::BufWriter::new(file.as_file());
            let mut all_ends = Vec::with_capacity(n);
            let mut base = 0;
            for (bytes, ends, _) in &parts {
                std::io::Write::write_all(&mut w, &bytes[set]).unwrap();
                all_ends.extend(ends[set].iter().map(|e| base + e));
                base += bytes[set].len() as u64;
            }
            std::io::Write::flush(&mut w).unwrap();
            drop(w);
            Presigned {
                file,
                count: n,
                path: make(set).1,
                started,
                ends: all_ends,
            }
        })
        .collect()
}

/// How wrk loads a server.
enum Load<'a> {
    /// One request with these headers, sent over and over (a GET of the URL's path).
    Fixed(&'a [(String, String)]),
    /// The pre-signed requests cycled by [`CYCLING_LUA`]; `unique` demands that none is sent
    /// twice (the sandbox with the replay check on), and that they are still in their Date
    /// window at the end of the run.
    Cycling { set: &'a Presigned, unique: bool },
}

/// Pair `k`'s sandbox run of the replayed `read` (its pre-signed headers `hs`, sent again
/// and again): wrk with the server's CPU, its figures printed under the run line
/// `== {mode}: {label} `GET {path}` (pair k of n)` that `benches/instr_reads.sh` names its
/// dumps from.
fn replayed_run(
    server: &Server,
    read: &Read,
    hs: &[(String, String)],
    secs: u64,
    callgrind_pid: Option<u32>,
    mode: &str,
    k: usize,
) -> WrkFigures {
    let (f, text) = wrk_cpu(
        &format!("{}{}", server.base, read.path),
        Load::Fixed(hs),
        secs,
        callgrind_pid,
        server.child.id(),
    );
    println!(
        "== {mode}: {} `GET {}` (pair {} of {})\n{text}",
        read.label,
        read.path,
        k + 1,
        load_pairs()
    );
    f
}

/// [`wrk`], and the CPU time the server process `pid` spent per completed request
/// ([`WrkFigures::server_cpu_us`]).
fn wrk_cpu(
    url: &str,
    load: Load,
    secs: u64,
    callgrind_pid: Option<u32>,
    pid: u32,
) -> (WrkFigures, String) {
    let before = cpu_split_secs(pid);
    let (mut f, text) = wrk(url, load, secs, callgrind_pid);
    let after = cpu_split_secs(pid);
    let per_req = |secs: f64| secs * 1e6 / f.requests as f64;
    f.server_cpu_us = Some(per_req(after.0 - before.0 + after.1 - before.1));
    f.server_sys_us = Some(per_req(after.1 - before.1));
    (f, text)
}

/// Runs `wrk -t1 -c64 -d{secs}s --latency` against `url`. Fails loudly when an answer is not
/// 2xx, a socket error occurred or no request completed; (`unique`) when wrk got through the
/// set and sent some requests twice it returns at once with `wrapped` > 0, unchecked, for
/// the caller ([`assert_none_twice`], [`run_pooled`]). When `callgrind_pid` is given, the server's callgrind counters are zeroed before
/// and dumped after the run (`callgrind_control`).
fn wrk(url: &str, load: Load, secs: u64, callgrind_pid: Option<u32>) -> (WrkFigures, String) {
    let mut cmd = Command::new("wrk");
    cmd.args(["-t", "1", "-c", &CONNECTIONS.to_string()])
        .arg("-d")
        .arg(format!("{secs}s"))
        .arg("--latency");
    let script = match &load {
        Load::Fixed(headers) => {
            for (n, v) in *headers {
                cmd.arg("-H").arg(format!("{n}: {v}"));
            }
            None
        }
        Load::Cycling { set, unique } => {
            assert!(
                url.ends_with(&set.path),
                "{url}: the pre-signed requests go to {} (wrk sends their request lines)",
                set.path
            );
            if *unique {
                let left = DATE_GOOD_FOR.saturating_sub(set.started.elapsed());
                assert!(
                    left > Duration::from_secs(secs + 2),
                    "the {} pre-signed requests would leave their Date window during the \
                     run (signing took {:.0} s): lower PSD2_LOAD_UNIQUE_SECS",
                    set.count,
                    set.started.elapsed().as_secs_f64()
                );
            }
            let file = tempfile::Builder::new().suffix(".lua").tempfile().unwrap();
            std::fs::write(file.path(), CYCLING_LUA).unwrap();
            cmd.arg("-s").arg(file.path());
            Some(file)
        }
    };
    cmd.arg(url);
    if let Load::Cycling { set, .. } = &load {
        cmd.arg("--").arg(set.file.path());
    }
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
    drop(script);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let f = parse_wrk(&text);
    assert!(
        f.requests > 0 && f.per_sec > 0.0,
        "wrk: no request completed on {url}\n{text}"
    );
    if let Load::Cycling { set, unique: true } = &load {
        if f.wrapped != Some(0) {
            // Ran out: the repeats were refused as replays. The caller runs again with more
            // ([`run_pooled`]) or fails ([`assert_none_twice`]).
            return (f, text);
        }
        // Every completed request was one wrk took from the file (a run may take every one
        // of them without starting over: no request was sent twice then).
        assert!(
            f.requests as usize <= set.count && f.used.is_none_or(|u| f.requests <= u),
            "{url}: {} requests completed of {} unique ones ({:?} taken)",
            f.requests,
            set.count,
            f.used
        );
    }
    assert_eq!(f.non_2xx, 0, "every answer must be 2xx on {url}\n{text}");
    assert_eq!(f.socket_errors, 0, "socket errors on {url}\n{text}");
    (f, text)
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

/// One read of the AIS flow.
#[derive(Debug, Clone)]
struct Read {
    label: &'static str,
    path: String,
    /// Sent with `Accept-Encoding: gzip`.
    gzip: bool,
}

impl Read {
    fn coding(&self) -> Option<&'static str> {
        self.gzip.then_some("gzip")
    }
}

/// The PSU's consent on a fresh sandbox and every read of the AIS flow on it: accounts,
/// account details, balances, transactions (gzip and plain), transaction details (of the
/// first booked transaction), card accounts, card account details, card balances, card
/// transactions (gzip and plain).
fn ais_reads(
    rt: &tokio::runtime::Runtime,
    http: &reqwest::Client,
    browser: &reqwest::Client,
    creds: &Credentials,
    base: &str,
) -> (Setup, Vec<Read>) {
    rt.block_on(async {
        let s = setup_with(http, browser, base, creds).await;
        let psu = [("PSU-ID", s.psu_id.as_str())];
        let (status, v) = send(http, base, creds, "GET", "/v1/card-accounts", &psu, b"").await;
        assert_eq!(status, 200, "{v}");
        let card = v["cardAccounts"][0]["resourceId"]
            .as_str()
            .expect("a consented card account")
            .to_string();
        let acc = format!("/v1/accounts/{}", s.account_id);
        let list = format!("{acc}/transactions");
        let (status, v) = send(http, base, creds, "GET", &list, &psu, b"").await;
        assert_eq!(status, 200, "{v}");
        let href = v["transactions"]["booked"][0]["_links"]["transactionDetails"]["href"]
            .as_str()
            .expect("a booked transaction with a transactionDetails link");
        let details = match href.find("/v1/") {
            Some(at) => href[at..].to_string(),
            None => href.to_string(),
        };
        let card = format!("/v1/card-accounts/{card}");
        let r = |label, path: String, gzip| Read { label, path, gzip };
        let reads = vec![
            r("accounts", "/v1/accounts".into(), false),
            r("account details", acc.clone(), false),
            r("balances", format!("{acc}/balances"), false),
            r("transactions, gzip", list.clone(), true),
            r("transactions, plain", list.clone(), false),
            r("transaction details", details, false),
            r("card accounts", "/v1/card-accounts".into(), false),
            r("card account details", card.clone(), false),
            r("card balances", format!("{card}/balances"), false),
            r(
                "card transactions, gzip",
                format!("{card}/transactions"),
                true,
            ),
            r(
                "card transactions, plain",
                format!("{card}/transactions"),
                false,
            ),
        ];
        (s, reads)
    })
}

/// One signed request of `read` on `base`: (uncompressed body bytes, body bytes as sent, the
/// answer's Content-Encoding). The answer must be 200.
fn probe(
    rt: &tokio::runtime::Runtime,
    http: &reqwest::Client,
    creds: &Credentials,
    base: &str,
    psu_id: &str,
    read: &Read,
) -> (Vec<u8>, usize, Option<String>) {
    let hs = read_headers(creds, psu_id, &read.path, read.coding());
    rt.block_on(async {
        let mut rb = http.get(format!("{base}{}", read.path));
        for (n, v) in &hs {
            rb = rb.header(n, v);
        }
        let r = rb.send().await.unwrap();
        assert_eq!(r.status(), 200, "{}", read.path);
        let coding = r
            .headers()
            .get("content-encoding")
            .map(|v| v.to_str().unwrap_or("?").to_string());
        let wire = r.bytes().await.unwrap().to_vec();
        let plain = if coding.as_deref() == Some("gzip") {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&wire[..]), &mut out)
                .unwrap();
            out
        } else {
            wire.clone()
        };
        (plain, wire.len(), coding)
    })
}

/// The four baselines of one mode, measured before and after the rows.
#[derive(Debug, Clone, Copy, Default)]
struct Baselines {
    axum: [WrkFigures; 2],
    floor: [WrkFigures; 2],
    /// `None` where the mode has no 100 KB baselines (TLS).
    axum_big: Option<[WrkFigures; 2]>,
    floor_big: Option<[WrkFigures; 2]>,
}

fn mean(pair: &[WrkFigures; 2]) -> f64 {
    (pair[0].per_sec + pair[1].per_sec) / 2.0
}

/// The baseline servers of one set-up.
struct BaselineServers {
    axum: Server,
    floor: Server,
    /// Whether they serve [`BIG_PATH`].
    big: bool,
}

/// Measures the baselines once (index `at` of [`Baselines`]), printing wrk's output.
/// `load(path)` gives wrk's load for a baseline's path ("/v1/accounts" or [`BIG_PATH`]): a
/// pre-signed set must carry that path in its request lines (wrk's Lua `request()` returns
/// whole requests, so the URL's path is not what is sent).
fn measure_baselines<'a>(
    servers: &BaselineServers,
    load: &dyn Fn(&str) -> Load<'a>,
    secs: u64,
    at: usize,
    into: &mut Baselines,
    what: &str,
) {
    let run = |server: &Server, path: &str, name: &str| {
        let (f, text) = wrk_cpu(
            &format!("{}{path}", server.base),
            load(path),
            secs,
            None,
            server.child.id(),
        );
        println!(
            "== {what}: {name} ({}), wrk -t1 -c{CONNECTIONS} -d{secs}s\n{text}",
            ["before the rows", "after the rows"][at]
        );
        f
    };
    into.axum[at] = run(&servers.axum, "/v1/accounts", "bare axum, 2 KB body");
    into.floor[at] = run(&servers.floor, "/v1/accounts", "RSA floor, 2 KB body");
    if servers.big {
        into.axum_big.get_or_insert_default()[at] =
            run(&servers.axum, BIG_PATH, "bare axum, the 100 KB page");
        into.floor_big.get_or_insert_default()[at] =
            run(&servers.floor, BIG_PATH, "RSA floor, the 100 KB page");
    }
}

/// One measured read.
struct Row {
    read: Read,
    /// Uncompressed body bytes.
    size: usize,
    /// Body bytes as sent.
    wire: usize,
    coding: Option<String>,
    /// The read's alternated runs beside the floor ([`alternate`]): at least one.
    pairs: Vec<Pair>,
}

impl Row {
    /// The read's figures for the table: the median over its runs of each of req/s, p50,
    /// p99 and CPU per request ([`median_figures`]).
    fn f(&self) -> WrkFigures {
        median_figures(self.pairs.iter().map(|p| &p.run))
    }
}

/// The number of alternated floor / sandbox pairs per read and write (`PSD2_LOAD_PAIRS`,
/// default [`DEFAULT_PAIRS`], at least 1).
fn load_pairs() -> usize {
    std::env::var("PSD2_LOAD_PAIRS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_PAIRS)
        .max(1)
}

/// Pairs per read and write by default: three sandbox runs, four floor runs (F R F R F R F).
/// An odd count has a true middle, so the median is one pair's share, and three is the least
/// that outvotes one pair the machine's drift spoiled. At the quiet passes' settings
/// (`PSD2_LOAD_SECS=4 PSD2_LOAD_UNIQUE_SECS=2` for `reads` and `writes`, `PSD2_LOAD_SECS=3`
/// for `tls`) the three scenarios take about 26 minutes together on a quiet machine with three
/// pairs (reads 18, tls 4.5, writes 3.5; session 21's single pairs took 9.5: each pair is one
/// more sandbox run and one more floor run, and with the replay check on one more set of
/// pre-signed requests, whose signing at ~7,600 signatures/s is most of those runs' time);
/// five pairs would take about 40. Since session 23 a read's runs share one [`Pool`] (what a
/// run did not send the next one sends), so the check-on mode signs about what its runs send
/// (1.1–1.3 ×, was 1.4–2 ×); the replayed and TLS runs are measurement and scale with the
/// pairs.
const DEFAULT_PAIRS: usize = 3;

/// One pair of an alternated measurement ([`alternate`]): the sandbox's run with the floor's
/// runs just before and just after it (the run after is the next pair's run before), and for
/// a gzip page the floor answering as many bytes ([`sized_path`]), run between the floor's run
/// before and the sandbox's.
#[derive(Debug, Clone, Copy, Default)]
struct Pair {
    before: WrkFigures,
    sized: Option<WrkFigures>,
    run: WrkFigures,
    after: WrkFigures,
    /// For a plain 100 KB page (not over TLS): bare axum and the floor answering the 100 KB
    /// page, run just before the floor's run before ([`Pair::before`]) and just before its
    /// run after ([`alternate_big`]).
    big_before: Option<BigBase>,
    big_after: Option<BigBase>,
}

/// Bare axum's and the floor's runs on the 100 KB page ([`BIG_PATH`]) beside a plain 100 KB
/// page's run ([`alternate_big`]).
#[derive(Debug, Clone, Copy, Default)]
struct BigBase {
    axum: WrkFigures,
    floor: WrkFigures,
}

impl Pair {
    /// The floor's req/s beside the run: the mean of its runs before and after.
    fn floor(&self) -> f64 {
        (self.before.per_sec + self.after.per_sec) / 2.0
    }

    /// The run's req/s as a share of [`Pair::floor`] (issue 23's ratio, of this pair).
    fn share(&self) -> f64 {
        self.run.per_sec / self.floor()
    }

    /// The floor's CPU µs per request beside the run (the mean of its two runs').
    fn floor_cpu(&self) -> Option<f64> {
        Some((self.before.server_cpu_us? + self.after.server_cpu_us?) / 2.0)
    }

    /// The run's CPU per request × [`Pair::floor_cpu`].
    fn cpu_ratio(&self) -> Option<f64> {
        ratio(self.run.server_cpu_us, self.floor_cpu())
    }

    /// The same-size floor's req/s as a share of [`Pair::floor`]: what a server doing nothing
    /// but verify reaches on a gzip page's bytes.
    fn sized_share(&self) -> Option<f64> {
        Some(self.sized?.per_sec / self.floor())
    }

    /// The run's CPU per request × the same-size floor's.
    fn sized_cpu_ratio(&self) -> Option<f64> {
        ratio(self.run.server_cpu_us, self.sized?.server_cpu_us)
    }

    /// Bare axum's req/s on the 100 KB page beside the run (the mean of its runs before and
    /// after), and the 100 KB floor's; `None` without them.
    fn big(&self) -> Option<(f64, f64)> {
        let (b, a) = (self.big_before?, self.big_after?);
        Some((
            (b.axum.per_sec + a.axum.per_sec) / 2.0,
            (b.floor.per_sec + a.floor.per_sec) / 2.0,
        ))
    }

    /// The run's req/s as a share of bare axum's on the 100 KB page beside it (issue 23's
    /// 100 KB target, of this pair).
    fn big_share(&self) -> Option<f64> {
        Some(self.run.per_sec / self.big()?.0)
    }

    /// The run's req/s as a share of the 100 KB floor's beside it.
    fn big_floor_share(&self) -> Option<f64> {
        Some(self.run.per_sec / self.big()?.1)
    }

    /// The 100 KB floor's req/s as a share of bare axum's on the same page, beside the run:
    /// what a server doing nothing but verify reaches of the 100 KB target's reference.
    fn big_limit(&self) -> Option<f64> {
        let (axum, floor) = self.big()?;
        Some(floor / axum)
    }
}

/// `a / b`, `None` when either is missing or `b` is not positive.
fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// The median and range of a few figures (one per pair).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Spread {
    /// The middle value; for an even count the mean of the two middle ones.
    median: f64,
    min: f64,
    max: f64,
}

/// The [`Spread`] of `values`; `None` when there is none, or when one is missing (a figure
/// not measured in every pair is not summarised from some of them).
fn spread(values: impl IntoIterator<Item = Option<f64>>) -> Option<Spread> {
    let mut v: Vec<f64> = values.into_iter().collect::<Option<_>>()?;
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Spread {
        median,
        min: v[0],
        max: v[n - 1],
    })
}

/// The median run of several, figure by figure: req/s, p50, p99 and CPU per request each the
/// median over the runs (not one run's; requests and errors summed).
fn median_figures<'a>(runs: impl IntoIterator<Item = &'a WrkFigures>) -> WrkFigures {
    let runs: Vec<&WrkFigures> = runs.into_iter().collect();
    let med = |get: &dyn Fn(&WrkFigures) -> Option<f64>| {
        spread(runs.iter().map(|f| get(f))).map(|s| s.median)
    };
    WrkFigures {
        requests: runs.iter().map(|f| f.requests).sum(),
        per_sec: med(&|f| Some(f.per_sec)).unwrap_or(0.0),
        p50_ms: med(&|f| Some(f.p50_ms)).unwrap_or(f64::NAN),
        p99_ms: med(&|f| Some(f.p99_ms)).unwrap_or(f64::NAN),
        non_2xx: runs.iter().map(|f| f.non_2xx).sum(),
        socket_errors: runs.iter().map(|f| f.socket_errors).sum(),
        wrapped: runs.iter().map(|f| f.wrapped).sum(),
        used: runs.iter().map(|f| f.used).sum(),
        server_cpu_us: med(&|f| f.server_cpu_us),
        server_sys_us: med(&|f| f.server_sys_us),
    }
}

/// Alternates floor and sandbox runs, `pairs` of them: F R F R … R F, the sandbox's `k`-th
/// run (`run(k)`) between two runs of the floor (`floor()`), each floor run shared by the
/// pairs either side of it; for a gzip page `sized()` (the floor answering as many bytes)
/// runs between each pair's floor run before and the sandbox's. `first`: a floor run just
/// made (the previous read's last, on the same path), used as the first pair's run before
/// instead of a new one. Returns the pairs in order. ([`alternate_big`] without 100 KB
/// runs.)
fn alternate(
    pairs: usize,
    first: Option<WrkFigures>,
    floor: &mut dyn FnMut() -> WrkFigures,
    sized: Option<&mut dyn FnMut() -> WrkFigures>,
    run: &mut dyn FnMut(usize) -> WrkFigures,
) -> Vec<Pair> {
    alternate_big(pairs, first, floor, None, sized, run, None)
}

/// [`alternate`] with, for a plain 100 KB page, bare axum and the floor on the 100 KB page
/// (`big()`) run just before every floor run: B F R B F R … B F (B: `big()`'s two runs), so
/// that each sandbox run sits between two of bare axum's 100 KB runs as between two of the
/// floor's ([`Pair::big_share`]). With `big`, `first` is not used (its floor run had no 100 KB
/// runs before it): the first pair starts with its own. `between(k)`, before pair `k` > 0:
/// setup (signing); when it returns true (it did some), pair `k` starts with new floor (and
/// 100 KB) runs instead of sharing pair `k - 1`'s last: F R F | setup | F R F.
fn alternate_big(
    pairs: usize,
    first: Option<WrkFigures>,
    floor: &mut dyn FnMut() -> WrkFigures,
    mut big: Option<&mut dyn FnMut() -> BigBase>,
    mut sized: Option<&mut dyn FnMut() -> WrkFigures>,
    run: &mut dyn FnMut(usize) -> WrkFigures,
    mut between: Option<&mut dyn FnMut(usize) -> bool>,
) -> Vec<Pair> {
    let mut step = |big: &mut Option<&mut dyn FnMut() -> BigBase>| {
        let b = big.as_mut().map(|b| b());
        (floor(), b)
    };
    let (mut before, mut big_before) = match first.filter(|_| big.is_none()) {
        Some(f) => (f, None),
        None => step(&mut big),
    };
    let mut out = Vec::with_capacity(pairs);
    for k in 0..pairs {
        // Setup before pair k (signing more requests): when it did any, the pair starts with
        // floor runs of its own, so that nothing but the pair's runs falls between them.
        if k > 0 && between.as_mut().is_some_and(|b| b(k)) {
            (before, big_before) = step(&mut big);
        }
        let sized = sized.as_mut().map(|s| s());
        let run = run(k);
        let (after, big_after) = step(&mut big);
        out.push(Pair {
            before,
            sized,
            run,
            after,
            big_before,
            big_after,
        });
        before = after;
        big_before = big_after;
    }
    out
}

/// The floor's last run of `pairs` (the run after the last pair), to start the next read's
/// pairs with when it runs on the same floor path.
fn last_floor(pairs: &[Pair]) -> Option<WrkFigures> {
    pairs.last().map(|p| p.after)
}

/// Issue 23's verdict on a read or write from its pairs' shares of the floor: PASS when the
/// median share is at least `target` (and, when given, the median p99 under [`READ_P99_MS`]),
/// else MISS with the reasons. The median decides, not the best or worst pair: one pair the
/// machine's drift spoiled neither passes nor fails a read.
fn verdict(share: &Spread, p99_ms: Option<f64>, target: f64, floor_name: &str) -> String {
    let mut miss = Vec::new();
    if share.median < target {
        miss.push(format!(
            "{} < {} of the {floor_name}",
            pct1(share.median),
            pct(target)
        ));
    }
    if let Some(p99) = p99_ms.filter(|&p| p >= READ_P99_MS) {
        miss.push(format!("p99 {p99:.2} ms ≥ {READ_P99_MS} ms"));
    }
    if miss.is_empty() {
        "PASS".to_string()
    } else {
        format!("MISS ({})", miss.join(", "))
    }
}

/// A share's median and range for a table cell: `93 % (88–97 %)`.
fn pct_spread(s: &Spread) -> String {
    format!("{} ({:.0}–{})", pct(s.median), 100.0 * s.min, pct(s.max))
}

/// A ratio's median and range for a table cell: `× 1.08 (1.02–1.15)`.
fn times_spread(s: &Spread) -> String {
    format!("× {:.2} ({:.2}–{:.2})", s.median, s.min, s.max)
}

/// How far above the target a gzip page's same-size floor must reach for the page's target
/// to be more than a ceiling ([`print_reads_table`]): below the target itself no verifying
/// server can meet it (PHYSICAL LIMIT); below the target plus this margin only a server within
/// a few per cent of the floor's work could (CEILING: the sandbox's small reads cost 1.00–1.21
/// × the floor's CPU per request in session 21's quiet passes).
const SIZED_MARGIN: f64 = 0.05;

/// One floor run on `/v1/accounts` beside a read (its pairs' runs before and after, [`alternate`]).
fn floor_beside<'a>(
    servers: &BaselineServers,
    load: &dyn Fn(&str) -> Load<'a>,
    secs: u64,
    what: &str,
    read: &str,
) -> WrkFigures {
    floor_beside_on(servers, "/v1/accounts", load, secs, what, read)
}

/// [`floor_beside`] on `path` (`/v1/accounts`, the 2 KB body, or [`BIG_PATH`]).
fn floor_beside_on<'a>(
    servers: &BaselineServers,
    path: &str,
    load: &dyn Fn(&str) -> Load<'a>,
    secs: u64,
    what: &str,
    read: &str,
) -> WrkFigures {
    let (f, text) = wrk_cpu(
        &format!("{}{path}", servers.floor.base),
        load(path),
        secs,
        None,
        servers.floor.child.id(),
    );
    let body = if path == BIG_PATH {
        "the 100 KB page".to_string()
    } else if let Some(n) = path.strip_prefix(SIZED_PREFIX) {
        format!("{n} bytes (a gzip page's size)")
    } else {
        "2 KB body".to_string()
    };
    println!(
        "== {what}: RSA floor, {body}, beside {read}, wrk -t1 -c{CONNECTIONS} -d{secs}s\n{text}"
    );
    f
}

/// Bare axum's and the floor's runs on the 100 KB page beside a plain 100 KB page
/// ([`alternate_big`]), bare axum first.
fn big_beside<'a>(
    servers: &BaselineServers,
    load: &dyn Fn(&str) -> Load<'a>,
    secs: u64,
    what: &str,
    read: &str,
) -> BigBase {
    let (axum, text) = wrk_cpu(
        &format!("{}{BIG_PATH}", servers.axum.base),
        load(BIG_PATH),
        secs,
        None,
        servers.axum.child.id(),
    );
    println!(
        "== {what}: bare axum, the 100 KB page, beside {read}, wrk -t1 -c{CONNECTIONS} -d{secs}s\n{text}"
    );
    let floor = floor_beside_on(servers, BIG_PATH, load, secs, what, read);
    BigBase { axum, floor }
}

/// A [`WrkFigures::server_cpu_us`] for a table: one decimal, "–" when not measured.
fn cpu_us(v: Option<f64>) -> String {
    v.map_or("–".to_string(), |c| format!("{c:.1}"))
}

fn pct(x: f64) -> String {
    format!("{:.0} %", 100.0 * x)
}

/// [`pct`] with one decimal, for verdicts (so that 89.6 % does not read "90 % < 90 %").
fn pct1(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

/// Prints one mode's table: each read's req/s, p50, p99 (each the median of its runs), its
/// share of the RSA floor (the median of its pairs' shares, [`Pair::share`], with their
/// range; beside it the ratio to the mean of the baselines before and after the rows) and of
/// bare axum, for the 100 KB pages also of the 100 KB baselines, its CPU per request × the
/// floor's (median of the pairs), and PASS/MISS against issue 23's targets (`target` of the
/// floor, from the median share: [`verdict`]). A gzip page's verdict also gives the same-size
/// floor's share of the small floor ([`Pair::sized_share`]), and after the table a PHYSICAL
/// LIMIT (or CEILING) line when that share leaves the page's target out of reach (or within
/// [`SIZED_MARGIN`] of it).
fn print_reads_table(title: &str, b: &Baselines, rows: &[Row], target: f64, tls: bool) {
    let (axum, floor) = (mean(&b.axum), mean(&b.floor));
    println!("\n=== {title}");
    println!(
        "baselines (before / after the rows): bare axum {:.0} / {:.0} req/s (p99 {:.2} / {:.2} ms); RSA floor {:.0} / {:.0} req/s (p99 {:.2} / {:.2} ms) = {} of bare axum",
        b.axum[0].per_sec,
        b.axum[1].per_sec,
        b.axum[0].p99_ms,
        b.axum[1].p99_ms,
        b.floor[0].per_sec,
        b.floor[1].per_sec,
        b.floor[0].p99_ms,
        b.floor[1].p99_ms,
        pct(floor / axum)
    );
    let big = b
        .axum_big
        .zip(b.floor_big)
        .map(|(a, f)| (mean(&a), mean(&f), a, f));
    if let Some((ab, fb, a, f)) = big {
        println!(
            "100 KB baselines (before / after): bare axum {:.0} / {:.0} req/s, RSA floor {:.0} / {:.0} req/s = {} of the 100 KB bare axum",
            a[0].per_sec,
            a[1].per_sec,
            f[0].per_sec,
            f[1].per_sec,
            pct(fb / ab)
        );
        // The 100 KB target is plain HTTP's; over TLS the pages are judged against the TLS
        // floor serving the same page. Since session 23 from the 100 KB runs beside each
        // plain 100 KB page ([`alternate_big`]), the median of its pairs; the baselines'
        // means only where no page had them.
        let beside: Vec<(&Row, Spread)> = rows
            .iter()
            .filter_map(|r| Some((r, spread(r.pairs.iter().map(Pair::big_limit))?)))
            .collect();
        if !tls && beside.is_empty() && fb < BIG_TARGET * ab {
            println!(
                "PHYSICAL LIMIT: the 100 KB RSA floor itself reaches only {} of the 100 KB bare axum (< {}; the baselines' means): no verifying server can meet the 100 KB target on this machine in this run",
                pct(fb / ab),
                pct(BIG_TARGET)
            );
        }
        for (r, l) in beside.iter().filter(|_| !tls) {
            let (word, end) = if l.median < BIG_TARGET {
                (
                    "PHYSICAL LIMIT: the 100 KB RSA floor itself reaches only",
                    format!(
                        "< {}): no verifying server can meet the 100 KB target on this machine in this run",
                        pct(BIG_TARGET)
                    ),
                )
            } else {
                (
                    "the 100 KB RSA floor reaches",
                    format!("≥ {}): the 100 KB target is within reach", pct(BIG_TARGET)),
                )
            };
            println!(
                "{word} {} of the 100 KB bare axum beside {} (median of {} pairs, {:.1}–{}; {end}",
                pct1(l.median),
                r.read.label,
                r.pairs.len(),
                100.0 * l.min,
                pct1(l.max)
            );
        }
    }
    let floor_name = if tls { "TLS floor" } else { "floor" };
    if b.floor[0].server_cpu_us.is_some() {
        println!(
            "server CPU per request (user + system of the server process over the run, µs; system in parentheses): bare axum {} ({}) / {} ({}), {floor_name} {} ({}) / {} ({})",
            cpu_us(b.axum[0].server_cpu_us),
            cpu_us(b.axum[0].server_sys_us),
            cpu_us(b.axum[1].server_cpu_us),
            cpu_us(b.axum[1].server_sys_us),
            cpu_us(b.floor[0].server_cpu_us),
            cpu_us(b.floor[0].server_sys_us),
            cpu_us(b.floor[1].server_cpu_us),
            cpu_us(b.floor[1].server_sys_us)
        );
    }
    let pairs = rows.first().map_or(0, |r| r.pairs.len());
    println!(
        "each read: {pairs} runs alternated with {} {floor_name} runs (F R F … R F); a pair's share is its run's req/s over the mean of the {floor_name} runs either side; req/s, p50, p99 and CPU are the medians of the read's runs, the share and the CPU ratio the medians of its pairs' (range in parentheses); the verdict is the median share's",
        pairs + 1
    );
    // The plain modes' 100 KB cells are the medians of the 100 KB runs beside the page
    // ([`alternate_big`]); over TLS they are still against the 100 KB baselines' means.
    let big_cells = if tls {
        "the baselines' mean"
    } else {
        "beside it: median of the pairs, min–max"
    };
    println!(
        "| read | body bytes (as sent) | req/s | p50 ms | p99 ms | of the {floor_name} (mean of the baselines) | of the {floor_name} beside it (median of the pairs, min–max; {floor_name} req/s min–max) | of bare axum | of the 100 KB floor ({big_cells}) | of the 100 KB bare axum ({big_cells}) | server CPU µs/req (× the {floor_name}'s beside it, median of the pairs, min–max; system) | verdict |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut limits = Vec::new();
    for r in rows {
        let f = r.f();
        let share = spread(r.pairs.iter().map(|p| Some(p.share()))).unwrap();
        let floors = spread(
            r.pairs
                .iter()
                .flat_map(|p| [p.before.per_sec, p.after.per_sec])
                .map(Some),
        )
        .unwrap();
        let is_big = r.coding.is_none() && r.size >= BIG_ROW_BYTES;
        // Over TLS a plain 100 KB page's floor is the TLS floor serving that page (its runs
        // beside the read serve it too, see `scenario_tls`).
        let of_baselines = match big {
            Some((_, fb, _, _)) if tls && is_big => f.per_sec / fb,
            _ => f.per_sec / floor,
        };
        let mut verdicts = vec![verdict(
            &share,
            (!tls).then_some(f.p99_ms),
            target,
            floor_name,
        )];
        let sized = spread(r.pairs.iter().map(Pair::sized_share));
        if let Some(s) = &sized {
            verdicts.push(format!(
                "the same-size {floor_name} itself: {} of the small {floor_name} ({:.1}–{})",
                pct1(s.median),
                100.0 * s.min,
                pct1(s.max)
            ));
            limits.push((r, *s));
        }
        let big_shares = spread(r.pairs.iter().map(Pair::big_share))
            .zip(spread(r.pairs.iter().map(Pair::big_floor_share)));
        let (of_fb, of_ab) = match big {
            // Judged by the median of the pairs' shares of the 100 KB runs beside them.
            Some(_) if is_big && !tls && big_shares.is_some() => {
                let (of_ab, of_fb) = big_shares.unwrap();
                verdicts.push(if of_ab.median >= BIG_TARGET {
                    format!(
                        "100 KB: PASS ({} of bare axum 100 KB beside it, median of the pairs, {:.1}–{})",
                        pct1(of_ab.median),
                        100.0 * of_ab.min,
                        pct1(of_ab.max)
                    )
                } else {
                    format!(
                        "100 KB: MISS ({} < {} of bare axum 100 KB beside it, median of the pairs, {:.1}–{})",
                        pct1(of_ab.median),
                        pct(BIG_TARGET),
                        100.0 * of_ab.min,
                        pct1(of_ab.max)
                    )
                });
                (pct_spread(&of_fb), pct_spread(&of_ab))
            }
            Some((ab, fb, _, _)) if is_big => {
                let of_ab = f.per_sec / ab;
                if !tls {
                    verdicts.push(if of_ab >= BIG_TARGET {
                        "100 KB: PASS".to_string()
                    } else {
                        format!(
                            "100 KB: MISS ({} < {} of bare axum 100 KB, the baselines' mean)",
                            pct1(of_ab),
                            pct(BIG_TARGET)
                        )
                    });
                }
                (pct(f.per_sec / fb), pct(of_ab))
            }
            _ => ("–".to_string(), "–".to_string()),
        };
        let coding = match (&r.read.gzip, &r.coding) {
            (true, Some(c)) => format!(", {c}"),
            (true, None) => ", gzip asked, sent plain".to_string(),
            _ => String::new(),
        };
        let cpu = match (f.server_cpu_us, spread(r.pairs.iter().map(Pair::cpu_ratio))) {
            (Some(c), Some(x)) => format!(
                "{c:.1} ({}; system {})",
                times_spread(&x),
                cpu_us(f.server_sys_us)
            ),
            (c, _) => cpu_us(c),
        };
        println!(
            "| {} `GET {}` | {} ({}{coding}) | {:.0} | {:.2} | {:.2} | {} | {}; {:.0}–{:.0}) | {} | {of_fb} | {of_ab} | {cpu} | {} |",
            r.read.label,
            r.read.path,
            r.size,
            r.wire,
            f.per_sec,
            f.p50_ms,
            f.p99_ms,
            pct(of_baselines),
            pct_spread(&share).trim_end_matches(')'),
            floors.min,
            floors.max,
            pct(f.per_sec / axum),
            verdicts.join("; ")
        );
    }
    // A gzip page's target against what a server doing nothing but verify reaches on its
    // bytes (the 100 KB line's kind, from the medians of the pairs).
    for (r, s) in limits {
        let page = format!(
            "the gzip page {} (`GET {}`, {} bytes as sent)",
            r.read.label, r.read.path, r.wire
        );
        if s.median < target {
            println!(
                "PHYSICAL LIMIT: the RSA {floor_name} answering as many bytes as {page} itself reaches only {} of the small {floor_name} (median of {} pairs, {:.1}–{}; < {}): no verifying server can meet this page's target on this machine in this run",
                pct1(s.median),
                r.pairs.len(),
                100.0 * s.min,
                pct1(s.max),
                pct(target)
            );
        } else if s.median < target + SIZED_MARGIN {
            println!(
                "CEILING: the RSA {floor_name} answering as many bytes as {page} reaches {} of the small {floor_name} (median of {} pairs, {:.1}–{}; < {} + {:.0} points): the page's target ({}) leaves a server {:.1} % more CPU per request than the same-size {floor_name}'s, at most",
                pct1(s.median),
                r.pairs.len(),
                100.0 * s.min,
                pct1(s.max),
                pct(target),
                100.0 * SIZED_MARGIN,
                pct(target),
                100.0 * (s.median / target - 1.0)
            );
        }
    }
    print_sized_table(rows, floor_name);
}

/// The gzip pages beside the floor answering as many bytes as each sends ([`Pair::sized`]),
/// after the mode's table: the share of the small floor (as in the table, the verdict's) next
/// to the share of the same-size floor, and the server's CPU per request against each (all
/// medians of the pairs). Not a verdict (issue 23's target is the small floor's): it tells
/// the page's bytes into the socket, which any server answering them pays, from the
/// sandbox's own work.
fn print_sized_table(rows: &[Row], floor_name: &str) {
    let sized: Vec<&Row> = rows
        .iter()
        .filter(|r| r.pairs.iter().all(|p| p.sized.is_some()) && !r.pairs.is_empty())
        .collect();
    if sized.is_empty() {
        return;
    }
    println!(
        "\ngzip pages against the {floor_name} answering as many bytes (/sized/<bytes as sent>: that many bytes of the 100 KB page, run in each pair between the small {floor_name}'s run before and the page's; medians of the pairs, min–max; not a verdict):"
    );
    println!(
        "| gzip page | bytes as sent | req/s | of the small {floor_name} beside it | the same-size {floor_name}'s share of the small one | of the same-size {floor_name} (its req/s) | server CPU µs/req (system) | × the small {floor_name}'s | × the same-size {floor_name}'s (its CPU µs/req, system) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in sized {
        let f = r.f();
        let s = median_figures(r.pairs.iter().filter_map(|p| p.sized.as_ref()));
        let cell = |v: Option<Spread>, fmt: &dyn Fn(&Spread) -> String| {
            v.map_or("–".to_string(), |v| fmt(&v))
        };
        println!(
            "| {} | {} | {:.0} | {} | {} | {} ({:.0}) | {} ({}) | {} | {} ({}, {}) |",
            r.read.label,
            r.wire,
            f.per_sec,
            cell(spread(r.pairs.iter().map(|p| Some(p.share()))), &pct_spread),
            cell(spread(r.pairs.iter().map(Pair::sized_share)), &pct_spread),
            cell(
                spread(
                    r.pairs
                        .iter()
                        .map(|p| Some(p.run.per_sec / p.sized?.per_sec))
                ),
                &pct_spread
            ),
            s.per_sec,
            cpu_us(f.server_cpu_us),
            cpu_us(f.server_sys_us),
            cell(spread(r.pairs.iter().map(Pair::cpu_ratio)), &times_spread),
            cell(
                spread(r.pairs.iter().map(Pair::sized_cpu_ratio)),
                &times_spread
            ),
            cpu_us(s.server_cpu_us),
            cpu_us(s.server_sys_us),
        );
    }
}

/// Fails loudly when wrk got through the `count` pre-signed unique requests of a run and
/// sent some twice (its figures would include refused replays).
fn assert_none_twice(url: &str, f: &WrkFigures, count: usize, text: &str) {
    assert_eq!(
        f.wrapped,
        Some(0),
        "{url}: wrk got through the {count} unique requests and sent some twice\n{text}"
    );
}

/// The pre-signed requests of one read or write with the replay check on (session 23),
/// taken in order across its runs: each run gets a file of the next unused requests
/// ([`Presigned::slice`]), and after it only the requests wrk took ([`WrkFigures::used`]) are
/// spent, so what one run did not send the next one sends. Signing (the check-on mode's
/// setup: one RSA signature per request) then costs what the runs send plus one run's
/// margin, not a full margin per run. New requests are signed only when fewer than a run
/// may need are left, or too little of their Date window is (the rest are dropped; the
/// sandbox never saw them).
struct Pool<'a> {
    sign: &'a dyn Fn(usize) -> Presigned,
    set: Presigned,
    /// Requests of `set` already taken by wrk.
    used: usize,
    /// Every request signed for this pool, and the wall seconds the signing took.
    signed: usize,
    signing_secs: f64,
}

impl<'a> Pool<'a> {
    /// Signs `n` requests with `sign(n)`.
    fn new(sign: &'a dyn Fn(usize) -> Presigned, n: usize) -> Self {
        let set = sign(n);
        Pool {
            sign,
            signing_secs: set.started.elapsed().as_secs_f64(),
            signed: n,
            set,
            used: 0,
        }
    }

    /// Unused requests left.
    fn left(&self) -> usize {
        self.set.count - self.used
    }

    /// Makes sure `need` unused requests are left with room in their Date window for a run
    /// of `usecs` seconds (and the floor run before it); else signs new ones so that `more`
    /// (at least `need`) are left: the unused ones are kept ahead of the new ones when
    /// [`POOL_KEEP`] of their Date window is left, else dropped. Returns how many it signed
    /// (0: none).
    fn ensure(&mut self, need: usize, more: usize, usecs: u64) -> usize {
        let window = DATE_GOOD_FOR.saturating_sub(self.set.started.elapsed());
        if self.left() >= need && window > Duration::from_secs(2 * usecs + 3) {
            return 0;
        }
        let keep = if window >= POOL_KEEP { self.left() } else { 0 };
        let n = more.max(need) - keep.min(more.max(need));
        let new = (self.sign)(n.max(1));
        self.signed += new.count;
        self.signing_secs += new.started.elapsed().as_secs_f64();
        self.set = if keep > 0 {
            self.set.slice(self.used, keep).append(new)
        } else {
            new
        };
        self.used = 0;
        n.max(1)
    }

    /// A file of the next `n` unused requests (fewer when fewer are left), for one run;
    /// [`Pool::spend`] after the run.
    fn take(&self, n: usize) -> Presigned {
        self.set.slice(self.used, n)
    }

    /// Marks what a run of `taken` (its file's count) used: all of them when wrk got
    /// through them, else the first [`WrkFigures::used`].
    fn spend(&mut self, f: &WrkFigures, taken: usize) {
        let used = match (f.wrapped, f.used) {
            (Some(0), Some(u)) => (u as usize).min(taken),
            _ => taken,
        };
        self.used += used;
    }
}

/// The factor a read's sizing bound is scaled by: the median of what the earlier reads' runs
/// reached of theirs (`reached`, median run ÷ bound), within 0.5–1 (1 for the first read). A
/// run that outruns the scaled estimate × [`UNIQUE_MARGIN`] runs again ([`run_pooled`]), so a
/// low factor costs a rerun, a high one only signatures.
fn calibrate(reached: &[f64]) -> f64 {
    spread(reached.iter().map(|&r| Some(r))).map_or(1.0, |s| s.median.clamp(0.5, 1.0))
}

/// How many pre-signed requests one unique run may need: `margin` × the fastest of `rates`
/// (req/s) for `usecs` seconds, plus four per connection (those in flight at the end).
fn run_need(rates: impl IntoIterator<Item = f64>, margin: f64, usecs: u64) -> usize {
    let fastest = rates.into_iter().fold(0.0, f64::max);
    (fastest * margin * usecs as f64) as usize + 4 * CONNECTIONS
}

/// The margin of a unique run's file over the fastest rate it is expected to reach
/// ([`run_need`]): a quiet machine's runs of one read differ by 5–10 %, a busy one's by more.
const UNIQUE_MARGIN: f64 = 1.3;

/// The margin of a write run's file over the fastest write run so far: writes on a
/// database move more between runs than reads (checkpoints, the writer's batches).
const WRITE_MARGIN: f64 = 1.5;

/// How many attempts a unique run gets ([`run_pooled`]) before the bench gives up.
const UNIQUE_ATTEMPTS: usize = 4;

/// A unique run from `pool` (`run(file)`, its lines printed as `== {mode}: {url}: …`, which runs wrk and returns its figures and text and
/// anything else measured) on a file of `need` requests; when wrk got through them (the
/// machine sped up after the rates `need` was sized from: the run's figures include refused
/// replays) it prints a line saying so (`benches/instr_reads.sh` skips that run's callgrind
/// dump by it) and runs again on twice what the run reached (signed when the pool has too
/// few: the sandbox remembers the first file's ids, the pool never hands them out again), up
/// to [`UNIQUE_ATTEMPTS`] times before failing loudly. Returns the last run's result and its
/// file's size.
fn run_pooled<T>(
    mode: &str,
    url: &str,
    pool: &mut Pool,
    need: usize,
    usecs: u64,
    mut run: impl FnMut(&Presigned) -> (WrkFigures, String, T),
) -> (WrkFigures, String, T, usize) {
    let mut need = need;
    for attempt in 1.. {
        // Normally a no-op: the caller signs before the floor run that precedes the pair.
        let signed = pool.ensure(need, need, usecs);
        if signed > 0 {
            println!(
                "== {mode}: {url}: signed {signed} more requests before the run (too few left, or too little of their Date window)"
            );
        }
        let file = pool.take(need);
        let (f, text, extra) = run(&file);
        pool.spend(&f, file.count);
        if f.wrapped == Some(0) || attempt == UNIQUE_ATTEMPTS {
            assert_none_twice(url, &f, file.count, &text);
            return (f, text, extra, file.count);
        }
        let more = ((f.per_sec * usecs as f64 * 2.0) as usize + 4 * CONNECTIONS).max(2 * need);
        println!(
            "== {mode}: {url}: wrk got through the {} pre-signed requests at {:.0} req/s; \
             running again on {more} (attempt {} of {UNIQUE_ATTEMPTS})",
            file.count,
            f.per_sec,
            attempt + 1
        );
        need = more;
    }
    unreachable!()
}

/// Every read of the AIS flow in both replay modes, each mode with its own RSA floor and bare
/// axum runs (before and after its rows), plus the 100 KB baselines (issue 23, "Sandbox"):
///
/// - mode "replayed": `sandbox serve --allow-replays`, one signed request per read sent over
///   and over (wrk `-H`); the baselines get the same headers;
/// - mode "unique": the replay check on, every request signed beforehand with its own
///   X-Request-ID (one [`Pool`] per read for all its runs; a run that gets through its file
///   runs again on more, [`run_pooled`]), cycled by [`CYCLING_LUA`]; the baselines run
///   through the same script (on sets of their own, one per baseline path, which they may
///   repeat: they remember nothing). The script costs wrk's one thread a few µs per request
///   on the same two cores (bare axum: about 57 k req/s cycled against 71 k replayed), for
///   the floor as for the reads; this mode's ratios compare like with like, but its
///   absolute rates are lower than the replayed mode's.
///
/// Every run also gives the server's CPU time per request ([`wrk_cpu`]), printed beside the
/// floor's: it hardly depends on the machine's load, and tells a read's own work from its
/// waiting.
///
/// The floor also runs beside each read (session 14): the machine's speed drifts by a third
/// within minutes and the baselines' mean, taken minutes before and after the rows, swung the
/// same read between 81 % and 104 %. Since session 22 each read is several runs alternated
/// with the floor's, judged by the median of their pairs' shares ([`alternate`], the module
/// doc); with the replay check on, a read's [`Pool`] is signed before its first floor run
/// (session 23, the module doc). A plain 100 KB page's pairs also run bare axum and the floor
/// on the 100 KB page before each floor run ([`alternate_big`]).
/// The table keeps the ratio to the baselines' mean beside it.
///
/// Environment: `PSD2_LOAD_SECS` (seconds per replayed run, default 10),
/// `PSD2_LOAD_UNIQUE_SECS` (per unique run, default 3), `PSD2_LOAD_PAIRS` (default 3),
/// `PSD2_LOAD_WRAP`, `PSD2_LOAD_BIN`,
/// and `PSD2_LOAD_CALLGRIND=1` (wrapper `valgrind --tool=callgrind`: each read's
/// instructions are dumped per run to `callgrind.out.*`).
fn scenario_reads(rt: &tokio::runtime::Runtime, creds: &Credentials) {
    let secs = reads_secs();
    let usecs = unique_secs();
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::builder().no_gzip().build().unwrap();
    let callgrind = std::env::var("PSD2_LOAD_CALLGRIND").is_ok_and(|v| v == "1");

    // Mode "replayed".
    let server = start_reads_server(&["--allow-replays"], None);
    let callgrind_pid = callgrind.then(|| server.child.id());
    let (s, reads) = ais_reads(rt, &http, &common::browser(), creds, &server.base);
    let mut probes = Vec::new();
    for read in &reads {
        probes.push(probe(rt, &http, creds, &server.base, &s.psu_id, read));
    }
    // The 100 KB baselines answer the sandbox's own plain transaction page.
    let page = reads
        .iter()
        .position(|r| r.label == "transactions, plain")
        .unwrap();
    let big_body = dir.path().join("page.json");
    std::fs::write(&big_body, &probes[page].0).unwrap();
    let cert = dir.path().join("tpp.pem");
    std::fs::write(&cert, creds.certificate.to_pem()).unwrap();
    let servers = BaselineServers {
        axum: start_baseline(&BaselineSpec {
            big_body: Some(&big_body),
            ..Default::default()
        }),
        floor: start_baseline(&BaselineSpec {
            floor_cert: Some(&cert),
            big_body: Some(&big_body),
            ..Default::default()
        }),
        big: true,
    };
    println!(
        "reads: {} signed reads of the AIS flow, the plain transaction page {} bytes; wrk -t1 -c{CONNECTIONS}, {secs} s per replayed run, {usecs} s per unique run",
        reads.len(),
        probes[page].0.len()
    );
    let baseline_headers = read_headers(creds, &s.psu_id, "/v1/accounts", None);
    let fixed = |_: &str| Load::Fixed(&baseline_headers);
    let mut b_replayed = Baselines::default();
    measure_baselines(&servers, &fixed, secs, 0, &mut b_replayed, "replayed");
    let mut replayed = Vec::new();
    let mut last = None;
    for (read, (plain, wire, coding)) in reads.iter().zip(&probes) {
        let hs = read_headers(creds, &s.psu_id, &read.path, read.coding());
        let mut sized = || {
            floor_beside_on(
                &servers,
                &sized_path(*wire),
                &fixed,
                secs,
                "replayed",
                read.label,
            )
        };
        let is_big = coding.is_none() && plain.len() >= BIG_ROW_BYTES;
        let mut big = || big_beside(&servers, &fixed, secs, "replayed", read.label);
        let pairs = alternate_big(
            load_pairs(),
            last,
            &mut || floor_beside(&servers, &fixed, secs, "replayed", read.label),
            is_big.then_some(&mut big as &mut dyn FnMut() -> BigBase),
            coding
                .is_some()
                .then_some(&mut sized as &mut dyn FnMut() -> WrkFigures),
            &mut |k| replayed_run(&server, read, &hs, secs, callgrind_pid, "replayed", k),
            None,
        );
        last = last_floor(&pairs);
        replayed.push(Row {
            read: read.clone(),
            size: plain.len(),
            wire: *wire,
            coding: coding.clone(),
            pairs,
        });
    }
    measure_baselines(&servers, &fixed, secs, 1, &mut b_replayed, "replayed");
    drop(server);

    // Mode "unique": the replay check on.
    let server = start_reads_server(&[], None);
    let callgrind_pid = callgrind.then(|| server.child.id());
    let (s, reads) = ais_reads(rt, &http, &common::browser(), creds, &server.base);
    let baseline_set = presign(creds, 4000, &s.psu_id, &|_| {
        ("GET", "/v1/accounts".to_string(), Vec::new(), Vec::new())
    });
    // The 100 KB baselines need requests for their own path: the Lua script sends the
    // pre-signed request lines as they are (before session 13 they went to /v1/accounts).
    let big_set = presign(creds, 4000, &s.psu_id, &|_| {
        ("GET", BIG_PATH.to_string(), Vec::new(), Vec::new())
    });
    // And the floor beside a gzip page its own size's path ([`sized_path`]).
    let sized_sets: Vec<(String, Presigned)> = probes
        .iter()
        .filter(|(_, _, coding)| coding.is_some())
        .map(|(_, wire, _)| {
            let path = sized_path(*wire);
            let set = presign(creds, 4000, &s.psu_id, &|_| {
                ("GET", path.clone(), Vec::new(), Vec::new())
            });
            (path, set)
        })
        .collect();
    let cycling = |path: &str| Load::Cycling {
        set: if path == BIG_PATH {
            &big_set
        } else if let Some((_, set)) = sized_sets.iter().find(|(p, _)| p == path) {
            set
        } else {
            &baseline_set
        },
        unique: false,
    };
    let mut b_unique = Baselines::default();
    measure_baselines(&servers, &cycling, usecs, 0, &mut b_unique, "unique");
    // The floor's runs through the cycling script so far (sizing, below).
    let mut floor_seen = vec![b_unique.floor[0].per_sec];
    // Each earlier read's median run over its sizing bound ([`calibrate`]).
    let mut reached: Vec<f64> = Vec::new();
    let mut unique = Vec::new();
    for (i, read) in reads.iter().enumerate() {
        let (plain, wire, coding) = probe(rt, &http, creds, &server.base, &s.psu_id, read);
        // A read with the replay check on runs no faster than the floor through the same
        // script (it verifies too), and the plain pages far below it, about as fast as their
        // replayed runs (the same work and the check, and the Lua script costs wrk its
        // thread): the lower of the floor's fastest and 1.5 × its own fastest replayed run,
        // with a margin per run, sizes its pool ([`Pool`]). The noise of a shared machine is what
        // the margin is for; a run that gets through its file runs again on more
        // ([`run_pooled`]). Under callgrind the read's own replayed rate is the bound (the
        // floors run natively, a hundred times faster).
        let own = replayed[i]
            .pairs
            .iter()
            .map(|p| p.run.per_sec)
            .fold(0.0, f64::max);
        // Both bounds are loose on a busy machine (the floor's fastest run of minutes, the
        // replayed runs without the script): scaled by what the earlier reads' runs reached
        // of their own bound ([`calibrate`]).
        let bound = (own * 1.5).min(floor_seen.iter().copied().fold(0.0, f64::max));
        let est = bound * calibrate(&reached);
        let coding_header: Vec<(String, String)> = read
            .coding()
            .map(|c| vec![("Accept-Encoding".to_string(), c.to_string())])
            .unwrap_or_default();
        let url = format!("{}{}", server.base, read.path);
        let make = |_: usize| -> RequestSpec {
            ("GET", read.path.clone(), Vec::new(), coding_header.clone())
        };
        let sign = |n: usize| presign(creds, n, &s.psu_id, &make);
        // The first run's file and what the other runs should send, signed before the read's
        // first floor run (signing loads the machine: not between a pair's runs); a top-up
        // ([`Pool::ensure`]) between two pairs, the next pair then starting with floor runs
        // of its own ([`alternate_big`]'s `between`).
        let count = load_pairs();
        let fastest = std::cell::Cell::new(est);
        let first = run_need([est], UNIQUE_MARGIN, usecs);
        let pool = std::cell::RefCell::new(Pool::new(
            &sign,
            first + (count - 1) * (est * usecs as f64) as usize,
        ));
        println!(
            "== unique: {}: {} requests signed beforehand in {:.1} s ({count} runs, each taking what the one before left)",
            read.label,
            pool.borrow().signed,
            pool.borrow().signing_secs
        );
        // A gzip page has the floor answering its size first (the size of the replayed
        // mode's page, which is the same page).
        let mut sized = || {
            floor_beside_on(
                &servers,
                &sized_path(probes[i].1),
                &cycling,
                usecs,
                "unique",
                read.label,
            )
        };
        let is_big = coding.is_none() && plain.len() >= BIG_ROW_BYTES;
        let mut big = || big_beside(&servers, &cycling, usecs, "unique", read.label);
        let pairs = alternate_big(
            count,
            None,
            &mut || floor_beside(&servers, &cycling, usecs, "unique", read.label),
            is_big.then_some(&mut big as &mut dyn FnMut() -> BigBase),
            coding
                .is_some()
                .then_some(&mut sized as &mut dyn FnMut() -> WrkFigures),
            &mut |k| {
                let need = run_need([fastest.get()], UNIQUE_MARGIN, usecs);
                let (f, text, (), n) =
                    run_pooled("unique", &url, &mut pool.borrow_mut(), need, usecs, |set| {
                        let (f, text) = wrk_cpu(
                            &url,
                            Load::Cycling { set, unique: true },
                            usecs,
                            callgrind_pid,
                            server.child.id(),
                        );
                        (f, text, ())
                    });
                fastest.set(fastest.get().max(f.per_sec));
                println!(
                    "== unique: {} `GET {}` (pair {} of {count}): {n} requests signed beforehand, {} sent (none twice)\n{text}",
                    read.label,
                    read.path,
                    k + 1,
                    f.requests
                );
                f
            },
            Some(&mut |k| {
                let rate = fastest.get();
                let need = run_need([rate], UNIQUE_MARGIN, usecs);
                let more = need + (count - k - 1) * (rate * usecs as f64) as usize;
                let n = pool.borrow_mut().ensure(need, more, usecs);
                if n > 0 {
                    println!(
                        "== unique: {}: {n} more requests signed before pair {} (which starts with a floor run of its own)",
                        read.label,
                        k + 1
                    );
                }
                n > 0
            }),
        );
        let pool = pool.into_inner();
        println!(
            "== unique: {}: {} requests signed in {:.1} s for {} sent",
            read.label,
            pool.signed,
            pool.signing_secs,
            pairs.iter().map(|p| p.run.requests).sum::<u64>()
        );
        floor_seen.extend(pairs.iter().map(|p| p.after.per_sec));
        reached.push(median_figures(pairs.iter().map(|p| &p.run)).per_sec / bound);
        unique.push(Row {
            read: read.clone(),
            size: plain.len(),
            wire,
            coding,
            pairs,
        });
    }
    measure_baselines(&servers, &cycling, usecs, 1, &mut b_unique, "unique");
    drop(server);

    print_reads_table(
        &format!(
            "reads, replay check OFF (sandbox serve --allow-replays, one signed request per read replayed), {secs} s per run"
        ),
        &b_replayed,
        &replayed,
        READ_TARGET,
        false,
    );
    print_reads_table(
        &format!(
            "reads, replay check ON (unique pre-signed requests cycled by a wrk Lua script, none sent twice; baselines through the same script), {usecs} s per run"
        ),
        &b_unique,
        &unique,
        READ_TARGET,
        false,
    );
}

/// What a server process had used at one moment ([`ProcUse::now`]): CPU, page faults and
/// context switches from `/proc`, for [`scenario_replay_cost`].
#[derive(Debug, Clone, Copy, Default)]
struct ProcUse {
    user: f64,
    system: f64,
    /// Minor and major page faults of the whole process (`/proc/<pid>/stat` fields 10, 12).
    minflt: u64,
    majflt: u64,
    /// Voluntary and involuntary context switches, summed over its threads
    /// (`/proc/<pid>/task/*/status`).
    voluntary: u64,
    involuntary: u64,
    /// Resident set, KiB (`VmRSS`).
    rss_kib: u64,
}

impl ProcUse {
    fn now(pid: u32) -> ProcUse {
        let (user, system) = cpu_split_secs(pid);
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let fields: Vec<u64> = rest
            .split_whitespace()
            .map(|v| v.parse().unwrap_or(0))
            .collect();
        let field = |i: usize| fields.get(i).copied().unwrap_or(0);
        let status_value = |text: &str, name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let (mut voluntary, mut involuntary) = (0, 0);
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                let text = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
                voluntary += status_value(&text, "voluntary_ctxt_switches:");
                involuntary += status_value(&text, "nonvoluntary_ctxt_switches:");
            }
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        ProcUse {
            user,
            system,
            // After the command name: state is field 3 (index 0), so field k is index k - 3.
            minflt: field(7),
            majflt: field(9),
            voluntary,
            involuntary,
            rss_kib: status_value(&status, "VmRSS:"),
        }
    }
}

/// The CPU seconds (user + system) of this process's children that have ended (wrk runs
/// once reaped): `/proc/self/stat` fields 16 and 17.
fn children_ended_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    (fields.get(13).copied().unwrap_or(0) + fields.get(14).copied().unwrap_or(0)) as f64 / 100.0
}

/// One run of [`scenario_replay_cost`]: the server's use per completed request, wrk's CPU per
/// request, and (with `PSD2_LOAD_SYSCALLS=1`) system calls per answer.
struct CostRow {
    name: String,
    f: WrkFigures,
    user_us: f64,
    system_us: f64,
    minflt: f64,
    majflt: f64,
    voluntary: f64,
    involuntary: f64,
    rss_mib: f64,
    wrk_us: f64,
    syscalls: Option<f64>,
}

/// A run of `load` against `url` (server process `pid`) measured as a [`CostRow`]. With
/// `PSD2_LOAD_SYSCALLS=1`, `perf stat` counts the server's system calls (every thread,
/// `raw_syscalls:sys_enter`) and its `writev`s (one per answer) over the run's middle.
fn cost_run(
    name: &str,
    url: &str,
    load: Load,
    secs: u64,
    pid: u32,
    callgrind_pid: Option<u32>,
) -> CostRow {
    let syscalls = std::env::var("PSD2_LOAD_SYSCALLS").is_ok_and(|v| v == "1");
    let csv = tempfile::NamedTempFile::new().unwrap();
    let perf = syscalls.then(|| {
        Command::new("perf")
            .args(["stat", "-x,", "-o"])
            .arg(csv.path())
            .args([
                "-e",
                "raw_syscalls:sys_enter,syscalls:sys_enter_writev",
                "-p",
                &pid.to_string(),
                "--",
                "sleep",
                &secs.saturating_sub(1).max(1).to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("perf")
    });
    let wrk0 = children_ended_cpu_secs();
    let a = ProcUse::now(pid);
    let (f, text) = wrk(url, load, secs, callgrind_pid);
    let b = ProcUse::now(pid);
    let wrk1 = children_ended_cpu_secs();
    let syscalls = perf.map(|mut p| {
        p.wait().unwrap();
        let out = std::fs::read_to_string(csv.path()).unwrap_or_default();
        let count = |event: &str| {
            out.lines()
                .find(|l| l.contains(event))
                .and_then(|l| l.split(',').next()?.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        count("raw_syscalls:sys_enter") / count("sys_enter_writev").max(1.0)
    });
    let n = f.requests.max(1) as f64;
    let row = CostRow {
        name: name.to_string(),
        f,
        user_us: (b.user - a.user) * 1e6 / n,
        system_us: (b.system - a.system) * 1e6 / n,
        minflt: (b.minflt - a.minflt) as f64 / n,
        majflt: (b.majflt - a.majflt) as f64 / n,
        voluntary: (b.voluntary - a.voluntary) as f64 / n,
        involuntary: (b.involuntary - a.involuntary) as f64 / n,
        rss_mib: b.rss_kib as f64 / 1024.0,
        wrk_us: (wrk1 - wrk0) * 1e6 / n,
        syscalls,
    };
    println!("== cost: {name}\n{text}");
    row
}

/// Where the replay check's CPU goes beyond its instructions (issue 23, session 21): one read
/// (`PSD2_LOAD_COST_READ`, a label of the reads scenario, default "account details") on
/// three servers: the RSA floor, `sandbox serve --allow-replays` and `sandbox serve` with the
/// replay check on (in memory, as the reads scenario), each loaded by the same wrk Lua script
/// ([`CYCLING_LUA`]) with a small set of pre-signed requests (4,000, cycled; what the reads
/// scenario's floor runs send) and with a set as large as the reads scenario signs for the
/// read (unique ids, none sent twice; the same requests for all three servers: the floor
/// answers any path). So the runs tell apart what the large set costs (client and caches),
/// what the check costs on its own (the large set with the check on against off) and what
/// the sandbox costs over the floor. Per run: req/s, the server's user and system CPU, minor
/// and major page faults, voluntary and involuntary context switches per request, its RSS
/// after the run, wrk's own CPU per request (with its Lua script's loading of the set,
/// which runs before wrk's timed window: ~0.5 s for 100,000 requests, so compare wrk's CPU
/// across runs of different lengths to get its cost per request), and with
/// `PSD2_LOAD_SYSCALLS=1` system calls per answer (`perf stat`). `PSD2_LOAD_COST_ROUNDS` rounds (default 2; each signs a new
/// large set, the check-on server keeps its ids as in the reads scenario), each run
/// `PSD2_LOAD_UNIQUE_SECS` long. With `PSD2_LOAD_CALLGRIND=1` (and `PSD2_LOAD_WRAP` running
/// the sandboxes under `valgrind --tool=callgrind`) each sandbox run is dumped on its own.
/// Not part of `all`: run it by name (`replaycost`).
fn scenario_replay_cost(rt: &tokio::runtime::Runtime, creds: &Credentials) {
    let secs = unique_secs();
    let rounds: usize = std::env::var("PSD2_LOAD_COST_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let label = std::env::var("PSD2_LOAD_COST_READ").unwrap_or_else(|_| "account details".into());
    let callgrind = std::env::var("PSD2_LOAD_CALLGRIND").is_ok_and(|v| v == "1");
    let http = reqwest::Client::builder().no_gzip().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("tpp.pem");
    std::fs::write(&cert, creds.certificate.to_pem()).unwrap();
    let floor = start_baseline(&BaselineSpec {
        floor_cert: Some(&cert),
        ..Default::default()
    });
    let off = start_reads_server(&["--allow-replays"], None);
    let on = start_reads_server(&[], None);
    let (s_off, reads_off) = ais_reads(rt, &http, &common::browser(), creds, &off.base);
    let (s_on, reads_on) = ais_reads(rt, &http, &common::browser(), creds, &on.base);
    let read = reads_off
        .iter()
        .find(|r| r.label == label)
        .unwrap_or_else(|| panic!("no read labelled {label:?}"))
        .clone();
    assert!(
        s_off.psu_id == s_on.psu_id && reads_on.iter().any(|r| r.path == read.path),
        "both sandboxes give the same PSU and paths (the same requests are sent to both)"
    );
    let coding: Vec<(String, String)> = read
        .coding()
        .map(|c| vec![("Accept-Encoding".to_string(), c.to_string())])
        .unwrap_or_default();
    let make = |_: usize| ("GET", read.path.clone(), Vec::new(), coding.clone());
    println!(
        "replaycost: `GET {}` ({label}), wrk -t1 -c{CONNECTIONS} -d{secs}s per run, {rounds} rounds",
        read.path
    );
    let servers = [("floor", &floor), ("check off", &off), ("check on", &on)];
    let mut rows = Vec::new();
    for round in 1..=rounds {
        let small = presign(creds, 4000, &s_off.psu_id, &make);
        if round == 1 {
            // What wrk sends per request: a pre-signed one (less its NUL), and the replayed
            // mode's request (`-H` headers; wrk adds `Host`).
            let presigned = small.file.as_file().metadata().unwrap().len() as usize / 4000 - 1;
            let fixed = read_headers(creds, &s_off.psu_id, &read.path, read.coding());
            let replayed = format!(
                "GET {} HTTP/1.1\r\nHost: 127.0.0.1:65535\r\n\r\n",
                read.path
            )
            .len()
                + fixed
                    .iter()
                    .map(|(k, v)| k.len() + v.len() + 4)
                    .sum::<usize>();
            println!("== cost: request bytes: pre-signed {presigned}, replayed mode's {replayed}");
        }
        let mut rate: f64 = 0.0;
        for (name, server) in &servers[..2] {
            let row = cost_run(
                &format!("round {round}, {name}, 4,000 requests cycled"),
                &format!("{}{}", server.base, read.path),
                Load::Cycling {
                    set: &small,
                    unique: false,
                },
                secs,
                server.child.id(),
                (callgrind && *name != "floor").then(|| server.child.id()),
            );
            rate = rate.max(row.f.per_sec);
            rows.push(row);
        }
        let n = (rate * secs as f64 * 1.5) as usize + 4 * CONNECTIONS;
        let big = presign(creds, n, &s_off.psu_id, &make);
        println!(
            "== cost: round {round}: {n} requests signed in {:.1} s",
            big.started.elapsed().as_secs_f64()
        );
        for (name, server) in [
            &servers[0],
            &servers[1],
            &servers[2],
            &servers[1],
            &servers[0],
        ] {
            let unique = *name == "check on";
            let run_on = |set: &Presigned| {
                cost_run(
                    &format!("round {round}, {name}, {} requests (none twice)", set.count),
                    &format!("{}{}", server.base, read.path),
                    Load::Cycling { set, unique },
                    secs,
                    server.child.id(),
                    (callgrind && *name != "floor").then(|| server.child.id()),
                )
            };
            let mut row = run_on(&big);
            let mut count = n;
            // The check-on server refuses what it has seen: a run that got through the set
            // (the machine sped up) runs again on a new set, twice what it reached, up to
            // UNIQUE_ATTEMPTS runs, as the reads scenario's unique runs do (`run_pooled`).
            let mut attempt = 1;
            while unique && row.f.wrapped != Some(0) && attempt < UNIQUE_ATTEMPTS {
                let more =
                    ((row.f.per_sec * secs as f64 * 2.0) as usize + 4 * CONNECTIONS).max(2 * count);
                println!(
                    "== cost: round {round}, {name}: wrk got through the {count} pre-signed requests at {:.0} req/s; running again on {more} new ones (attempt {} of {UNIQUE_ATTEMPTS})",
                    row.f.per_sec,
                    attempt + 1
                );
                let fresh = presign(creds, more, &s_off.psu_id, &make);
                row = run_on(&fresh);
                count = more;
                attempt += 1;
            }
            if unique {
                assert_none_twice(&read.path, &row.f, count, "");
            }
            rows.push(row);
        }
    }
    println!(
        "\n=== replaycost: `GET {}` ({label}), per request, {secs} s per run\n| run | req/s | server user µs | system µs | minor faults | major faults | voluntary cs | involuntary cs | RSS after, MiB | wrk CPU µs (the set's loading included) | syscalls per answer |\n|---|---|---|---|---|---|---|---|---|---|---|",
        read.path
    );
    for r in &rows {
        println!(
            "| {} | {:.0} | {:.1} | {:.1} | {:.3} | {:.4} | {:.3} | {:.3} | {:.1} | {:.1} | {} |",
            r.name,
            r.f.per_sec,
            r.user_us,
            r.system_us,
            r.minflt,
            r.majflt,
            r.voluntary,
            r.involuntary,
            r.rss_mib,
            r.wrk_us,
            r.syscalls.map_or("–".to_string(), |s| format!("{s:.2}"))
        );
    }
}

/// Where a write scenario keeps the sandbox's state.
enum Backend {
    /// A SQLite file, as a real sandbox (`sandbox serve --db FILE`: WAL, batched fsync).
    Sqlite(std::path::PathBuf),
    /// A database of a private PostgreSQL cluster (`sandbox serve --db postgres://…`).
    Postgres(String),
}

impl Backend {
    fn name(&self) -> &'static str {
        match self {
            Backend::Sqlite(_) => "SQLite file",
            Backend::Postgres(_) => "PostgreSQL",
        }
    }

    fn db_arg(&self) -> String {
        match self {
            Backend::Sqlite(p) => p.display().to_string(),
            Backend::Postgres(url) => url.clone(),
        }
    }

    /// `SELECT COUNT(*) FROM {table}`.
    fn count(&self, rt: &tokio::runtime::Runtime, table: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        match self {
            Backend::Sqlite(p) => rusqlite::Connection::open(p)
                .unwrap()
                .query_row(&sql, [], |r| r.get(0))
                .unwrap(),
            Backend::Postgres(url) => rt.block_on(async {
                let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                let task = tokio::spawn(conn);
                let n: i64 = client.query_one(&sql, &[]).await.unwrap().get(0);
                drop(client);
                let _ = task.await;
                n
            }),
        }
    }
}

/// The writes (issue 23, "Writes"): payment creation (`POST
/// /v1/payments/norwegian-domestic-credit-transfers`, each with its own body) and consent
/// creation (`POST /v1/bank-offered-consents`, the interface document's flow: `/v1/consents`
/// is deprecated), every request signed beforehand with its own X-Request-ID (replay check
/// on), on a SQLite file and on PostgreSQL (a private cluster as in the tests; skipped with a
/// message when PostgreSQL is not installed). Each write is `PSD2_LOAD_PAIRS` runs alternated
/// with the RSA floor's (through the same wrk Lua script), judged by the median of the pairs'
/// shares ([`alternate`], the module doc); target at least 50 % of the floor. The requests
/// come from one [`Pool`] per write: the first run's sized from the floor's rate, the later
/// runs taking what it left (PostgreSQL's writes run at a tenth of the floor) and more signed
/// before a pair's floor run when fewer than the fastest run so far × [`WRITE_MARGIN`] are
/// left; a run that gets through its file runs again on more ([`run_pooled`]). Any answer that is not 2xx
/// fails the run, and after each run the database must hold a new row for every 201 wrk
/// counted (at most one per connection more: requests in flight when wrk stopped).
fn scenario_writes(rt: &tokio::runtime::Runtime, creds: &Credentials) {
    let usecs = unique_secs();
    // With `PSD2_LOAD_WRAP="valgrind --tool=callgrind"`: one dump per write run.
    let callgrind = std::env::var("PSD2_LOAD_CALLGRIND").is_ok_and(|v| v == "1");
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("tpp.pem");
    std::fs::write(&cert, creds.certificate.to_pem()).unwrap();
    let floor = start_baseline(&BaselineSpec {
        floor_cert: Some(&cert),
        ..Default::default()
    });
    let cluster = common::pg::PgCluster::get();
    let mut backends = vec![Backend::Sqlite(dir.path().join("sandbox.sqlite3"))];
    match &cluster {
        Some(c) => backends.push(Backend::Postgres(c.database())),
        None => println!("writes: PostgreSQL is not installed (no initdb/pg_ctl): SQLite only"),
    }
    let mut table = Vec::new();
    for backend in &backends {
        let db = backend.db_arg();
        // PostgreSQL's own processes (the postmaster and its backends), whose CPU a write run
        // also costs the machine.
        let postmaster = match backend {
            Backend::Postgres(url) => postmaster_pid(rt, url),
            Backend::Sqlite(_) => None,
        };
        let server = start_reads_server(&["--db", &db], None);
        let s = rt.block_on(setup(&server.base, creds));
        let floor_set = presign(creds, 4000, &s.psu_id, &|_| {
            ("GET", "/v1/accounts".to_string(), Vec::new(), Vec::new())
        });
        // Every floor run of this back end, for the limits' floor (their mean).
        let floor_runs = std::cell::RefCell::new(Vec::new());
        let floor_run = |when: &str| {
            let (f, text) = wrk(
                &format!("{}/v1/accounts", floor.base),
                Load::Cycling {
                    set: &floor_set,
                    unique: false,
                },
                usecs,
                None,
            );
            println!("== writes on {}: RSA floor {when}\n{text}", backend.name());
            floor_runs.borrow_mut().push(f);
            f
        };
        // Sizes the first set of each write (no write outruns the floor: it verifies too).
        let mut latest_floor = floor_run("before the writes").per_sec;
        let writes: [(&str, &str, &str); 2] = [
            ("payment creation", PAYMENT_PATH, "pis_payments"),
            (
                "consent creation",
                "/v1/bank-offered-consents",
                "consent_resources",
            ),
        ];
        let mut rows = Vec::new();
        for (label, path, table_name) in writes {
            let bban = s.bban.clone();
            let make = |i: usize| -> RequestSpec {
                let body = if path == PAYMENT_PATH {
                    payment_body(&bban, i % 1000)
                } else {
                    Vec::new()
                };
                ("POST", path.to_string(), body, Vec::new())
            };
            let url = format!("{}{path}", server.base);
            // Per run: rows added, the server's CPU ms per row, PostgreSQL's.
            let mut counted: Vec<(i64, f64, Option<f64>)> = Vec::new();
            let mut write_run = |set: &Presigned, k: usize| {
                let rows_before = backend.count(rt, table_name);
                let cpu_before = cpu_secs(server.child.id());
                let db_cpu_before = postmaster.map(cluster_cpu_secs);
                let (f, text) = wrk(
                    &url,
                    Load::Cycling { set, unique: true },
                    usecs,
                    callgrind.then(|| server.child.id()),
                );
                if f.wrapped != Some(0) {
                    // Ran out: [`run_pooled`] runs again on more.
                    return (f, text, ());
                }
                println!(
                    "== writes on {}: {label} `POST {path}` (pair {} of {}): {} requests signed beforehand\n{text}",
                    backend.name(),
                    k + 1,
                    load_pairs(),
                    set.count
                );
                // Requests still in flight when wrk stopped may be answered after it: wait for
                // them before counting.
                std::thread::sleep(Duration::from_millis(500));
                let added = backend.count(rt, table_name) - rows_before;
                // The server's CPU time (user + system) over the run and the wait, per row
                // created: a measure the machine's load moves far less than writes/s.
                let cpu_ms =
                    (cpu_secs(server.child.id()) - cpu_before) * 1000.0 / added.max(1) as f64;
                // PostgreSQL's processes over the same span (its backends for the sandbox's
                // pool, writer and replay guard, and its own background work).
                let db_ms = postmaster.zip(db_cpu_before).map(|(pm, before)| {
                    (cluster_cpu_secs(pm) - before) * 1000.0 / added.max(1) as f64
                });
                println!(
                    "== writes on {}: {label}: {added} rows added, server CPU {cpu_ms:.3} ms per row{}",
                    backend.name(),
                    db_ms.map_or(String::new(), |d| format!(
                        ", PostgreSQL's processes {d:.3} ms per row"
                    ))
                );
                assert!(
                    added >= f.requests as i64 && added <= f.requests as i64 + CONNECTIONS as i64,
                    "{label} on {}: wrk counted {} answers 201, the database has {added} new rows in {table_name}",
                    backend.name(),
                    f.requests
                );
                counted.push((added, cpu_ms, db_ms));
                (f, text, ())
            };
            // The first run's requests sized from the floor (no write outruns it: it verifies
            // too), signed before the write's first floor run; the later runs take what the
            // first left (PostgreSQL's writes run at a tenth of the floor) and, when fewer
            // than the fastest run so far × the margin are left, more are signed between two
            // pairs, the next pair then starting with a floor run of its own ([`Pool`]).
            let count = load_pairs();
            let sign = |n: usize| presign(creds, n, &s.psu_id, &make);
            let first = run_need([latest_floor], 1.2, usecs);
            let pool = std::cell::RefCell::new(Pool::new(&sign, first));
            println!(
                "== writes on {}: {label}: {first} requests signed beforehand in {:.1} s",
                backend.name(),
                pool.borrow().signing_secs
            );
            let fastest = std::cell::Cell::new(None::<f64>);
            let pairs = alternate_big(
                count,
                None,
                &mut || floor_run(&format!("beside {label}")),
                None,
                None,
                &mut |k| {
                    let need = fastest
                        .get()
                        .map_or(first, |rate| run_need([rate], WRITE_MARGIN, usecs));
                    let (f, _, (), _) =
                        run_pooled("unique", &url, &mut pool.borrow_mut(), need, usecs, |set| {
                            write_run(set, k)
                        });
                    fastest.set(Some(fastest.get().map_or(f.per_sec, |r| r.max(f.per_sec))));
                    f
                },
                Some(&mut |k| {
                    let rate = fastest.get().unwrap_or(latest_floor);
                    let need = run_need([rate], WRITE_MARGIN, usecs);
                    let more = need + (count - k - 1) * (rate * usecs as f64) as usize;
                    let n = pool.borrow_mut().ensure(need, more, usecs);
                    if n > 0 {
                        println!(
                            "== writes on {}: {label}: {n} more requests signed before pair {} (which starts with a floor run of its own)",
                            backend.name(),
                            k + 1
                        );
                    }
                    n > 0
                }),
            );
            latest_floor = last_floor(&pairs).map_or(latest_floor, |f| f.per_sec);
            let pool = pool.into_inner();
            println!(
                "== writes on {}: {label}: {} requests signed in {:.1} s for {} answered",
                backend.name(),
                pool.signed,
                pool.signing_secs,
                pairs.iter().map(|p| p.run.requests).sum::<u64>()
            );
            rows.push((label, path, pairs, counted));
        }
        drop(server);
        let floor_runs = floor_runs.into_inner();
        // The database work of a payment creation alone, the most this machine can do.
        let limit: Vec<(&str, f64)> = match backend {
            Backend::Sqlite(path) => {
                let (n, cpu) = sqlite_write_limit(path, usecs);
                println!(
                    "== writes on SQLite file: limit: {n} payments in {usecs} s of a tight loop, {:.1} us CPU each",
                    cpu * 1e6 / n.max(1) as f64
                );
                vec![("the sandbox's statements", cpu / n.max(1) as f64)]
            }
            Backend::Postgres(url) => {
                let mut limits = Vec::new();
                for shape in [
                    LimitShape::PerRow,
                    LimitShape::MultiRow,
                    LimitShape::MultiRowAndRequests,
                ] {
                    // Fresh statistics first: the write run (and the shape before) just filled
                    // the tables, and with the statistics of a table without the limit's TPP the
                    // planner answers the batch's duplicate check (`dedup_key = ANY(..)`) by
                    // scanning every row of that TPP's day (10-30 ms per batch here);
                    // autovacuum's ANALYZE does the same in a running database.
                    let analyzed = Command::new("psql")
                        .args(["-q", "-c", "ANALYZE pis_payments, pis_authorisations", url])
                        .output()
                        .is_ok_and(|o| o.status.success());
                    if !analyzed {
                        println!(
                            "writes: ANALYZE through psql failed: the limit runs on old statistics"
                        );
                    }
                    match postmaster.and_then(|pm| pgbench_write_limit(url, pm, usecs, shape)) {
                        Some((n, cpu, text)) => {
                            println!(
                                "== writes on PostgreSQL: limit: pgbench (one client, {}, pipelined), {n:.0} payments in {usecs} s, PostgreSQL's CPU {:.1} us each\n{text}",
                                shape.label(),
                                cpu * 1e6 / n.max(1.0)
                            );
                            limits.push((shape.label(), cpu / n.max(1.0)));
                        }
                        None => println!(
                            "writes: no pgbench: no limit on PostgreSQL ({})",
                            shape.label()
                        ),
                    }
                }
                limits
            }
        };
        table.push((backend.name(), floor_runs, rows, limit));
    }
    drop(floor);
    println!(
        "\n=== writes, replay check ON (unique pre-signed requests, none sent twice), {usecs} s per run"
    );
    println!(
        "each write: {} runs alternated with {} floor runs (F W F … W F; the requests from one pool per write: the first run's signed before its first floor run, the later runs taking what the runs before left, more signed between two pairs only when too few are left, the next pair then starting with a floor run of its own); a pair's share is its run's req/s over the mean of the floor runs either side; req/s, p50, p99 and the CPU per row are the medians of the write's runs, the share the median of its pairs' (min–max); the verdict is the median share's",
        load_pairs(),
        load_pairs() + 1
    );
    println!(
        "| back end | write | req/s | p50 ms | p99 ms | RSA floor req/s (min–max of the runs beside it) | of the floor (median of the pairs, min–max) | target | verdict | 201s counted by wrk | rows added | server CPU ms per row | PostgreSQL's CPU ms per row |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut limits = Vec::new();
    for (name, floor_runs, rows, limit) in table {
        // The limits' floor: the median of every floor run of the back end.
        let floor = spread(floor_runs.iter().map(|f| Some(f.per_sec))).map_or(0.0, |s| s.median);
        for (shape, cpu) in limit {
            limits.push((name, shape, floor, cpu));
        }
        for (label, path, pairs, counted) in rows {
            let f = median_figures(pairs.iter().map(|p| &p.run));
            let share = spread(pairs.iter().map(|p| Some(p.share()))).unwrap();
            let floors = spread(
                pairs
                    .iter()
                    .flat_map(|p| [p.before.per_sec, p.after.per_sec])
                    .map(Some),
            )
            .unwrap();
            let added: i64 = counted.iter().map(|c| c.0).sum();
            let cpu_ms = spread(counted.iter().map(|c| Some(c.1))).map_or(f64::NAN, |s| s.median);
            let db_ms = spread(counted.iter().map(|c| c.2))
                .map_or("–".to_string(), |d| format!("{:.3}", d.median));
            println!(
                "| {name} | {label} `POST {path}` | {:.0} | {:.2} | {:.2} | {:.0}–{:.0} | {} | ≥ {} | {} | {} | {added} | {cpu_ms:.3} | {db_ms} |",
                f.per_sec,
                f.p50_ms,
                f.p99_ms,
                floors.min,
                floors.max,
                pct_spread(&share),
                pct(WRITE_TARGET),
                verdict(&share, None, WRITE_TARGET, "floor"),
                f.requests
            );
        }
    }
    println!(
        "\nthe limit: payment creation's database work alone (SQLite: a tight loop of its statements in batches of {LIMIT_BATCH}, CPU of the loop; PostgreSQL: pgbench with ONE client sending a batch of {LIMIT_BATCH} as one pipelined transaction, CPU of PostgreSQL's processes, not pgbench's: \"{}\" is what the writer sends today, BEGIN, the advisory lock, {LIMIT_BATCH} x (duplicate check, two INSERTs), the data-version bump, COMMIT; \"{}\" the cheapest shape with the same meaning, BEGIN, the advisory lock, ONE duplicate check for all {LIMIT_BATCH} keys, ONE multi-row INSERT per table, the data-version bump, COMMIT), beside the RSA floor's CPU per request (the machine's cores over its req/s), the sandbox's own work beyond the floor counted as nothing: a ceiling, not a forecast",
        LimitShape::PerRow.label(),
        LimitShape::MultiRow.label()
    );
    println!(
        "| back end | statements | database CPU per payment us | the floor's CPU per request us | most payments/s with both | of the floor |"
    );
    println!("|---|---|---|---|---|---|");
    let cores = std::thread::available_parallelism().map_or(2.0, |n| n.get() as f64);
    for (name, shape, floor, cpu) in &limits {
        let most = limit_rate(*floor, *cpu);
        println!(
            "| {name} | {shape} | {:.1} | {:.1} | {most:.0} | {} |",
            cpu * 1e6,
            cores / floor * 1e6,
            pct(most / floor)
        );
    }
    // Per back end, the verdict of its cheapest measured shape: below the target even
    // there, the database's own work is the limit on this machine.
    let mut names: Vec<&str> = limits.iter().map(|(n, ..)| *n).collect();
    names.dedup();
    for name in names {
        let requests = LimitShape::MultiRowAndRequests.label();
        let Some((_, shape, floor, cpu)) = limits
            .iter()
            .filter(|(n, shape, ..)| *n == name && *shape != requests)
            .min_by(|a, b| a.3.total_cmp(&b.3))
        else {
            continue;
        };
        let most = limit_rate(*floor, *cpu);
        if most < WRITE_TARGET * floor {
            println!(
                "PHYSICAL LIMIT from {name}'s own CPU per row: the database work of a payment creation in its cheapest measured shape ({shape}: {:.1} us of CPU, one client) beside the RSA floor's verification leaves at most {} of the floor (< {}) on these cores, however little the sandbox itself costs",
                cpu * 1e6,
                pct(most / floor),
                pct(WRITE_TARGET)
            );
        } else {
            println!(
                "CEILING on {name}: the cheapest measured shape ({shape}: {:.1} us of database CPU per payment, one client) leaves up to {} of the floor (target {}): the batch's statements are not the limit",
                cpu * 1e6,
                pct(most / floor),
                pct(WRITE_TARGET)
            );
        }
        // What every request needs of the database besides its batch (many instances on
        // one database: the clock sync's round trip, the replay id).
        if let Some((_, _, floor, cpu)) = limits
            .iter()
            .find(|(n, shape, ..)| *n == name && *shape == requests)
        {
            let most = limit_rate(*floor, *cpu);
            println!(
                "{} on {name} with every request's own database work (the cheapest batch, and per request the clock sync's round trip and its replay id: {:.1} us per payment, one client): at most {} of the floor (target {})",
                if most < WRITE_TARGET * floor {
                    "PHYSICAL LIMIT"
                } else {
                    "CEILING"
                },
                cpu * 1e6,
                pct(most / floor),
                pct(WRITE_TARGET)
            );
        }
    }
    drop(cluster);
}

/// The columns of one `pis_payments` row as the sandbox inserts it (the migration
/// `0100_payments_and_signing_baskets`), for the limit measurements below.
const LIMIT_PAYMENT_COLUMNS: &str = "id, tpp, service, product, kind, status, held_from, \
    funds_available, body, debtor_account, currency, amount_minor, execution_date, dedup_key, \
    created_at, created_day, redirect_uri, tpp_session_id, expected_customer, customer, psu_id, \
    agreement, approved_at, due_at, settled_at, reason";
/// The columns of one `pis_authorisations` row.
const LIMIT_AUTH_COLUMNS: &str = "id, tpp, tpp_name, payment, basket, redirect_uri, \
    tpp_session_id, sca_status, customer, agreement, created_at";
/// A stored payment body of the bench's size (the normalised echo of [`payment_body`]).
const LIMIT_BODY: &str = r#"{"creditorAccount":{"bban":"12345678903"},"creditorName":"Ola Nordmann","debtorAccount":{"bban":"12345678903"},"instructedAmount":{"amount":"1010.00","currency":"NOK"},"remittanceInformationUnstructured":"load 1000 5f0e1a52-7d0c-4f39-9a8e-0c4a6d8c2b11"}"#;

/// Payments per transaction in the limit measurements (the sandbox's batches under 64
/// connections hold a few dozen).
const LIMIT_BATCH: usize = 32;

/// The physical limit of payment creation's database work on SQLite (issue 23, writes): the
/// statements of one payment creation as the sandbox's group commit runs them (a `SAVEPOINT`,
/// the logical-duplicate `SELECT`, the two `INSERT`s, `RELEASE`; [`LIMIT_BATCH`] of them per
/// `BEGIN IMMEDIATE` … `COMMIT`, WAL, `synchronous=NORMAL`), in a tight loop on this thread
/// for `secs` seconds into the state file `db` (the sandbox's, after its run). A state file
/// without the keyed duplicate index (`indexes_006_duplicate_keys_in_memory`: the writer
/// keeps each TPP's day of keys in memory, `store::dup_keys`) checks a new key as that
/// writer does, in a hash map, with no statement. Returns (payments, CPU seconds of this
/// process).
fn sqlite_write_limit(db: &Path, secs: u64) -> (u64, f64) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000")
        .unwrap();
    let keyed: bool = c
        .query_row(
            "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = 'pis_payments_dedup_by_tpp')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut keys: std::collections::HashMap<u64, i64> = std::collections::HashMap::new();
    let hasher = std::hash::RandomState::new();
    let dup = "SELECT EXISTS(SELECT 1 FROM pis_payments WHERE tpp = ?3 AND dedup_key = ?1 \
               AND created_day = ?2 AND status NOT IN ('RJCT', 'CANC'))";
    let pay = format!(
        "INSERT INTO pis_payments ({LIMIT_PAYMENT_COLUMNS}) VALUES (?1, 'limit-tpp', 'payments', \
         'norwegian-domestic-credit-transfers', 'domestic', 'RCVD', NULL, NULL, ?2, 'account', \
         'NOK', 101000, NULL, ?3, 1, '2026-11-27', 'http://127.0.0.1:9/callback', 'session', NULL, \
         NULL, NULL, NULL, NULL, NULL, NULL, 'received')"
    );
    let auth = format!(
        "INSERT INTO pis_authorisations ({LIMIT_AUTH_COLUMNS}) VALUES (?1, 'limit-tpp', \
         'Limit TPP', ?2, NULL, 'http://127.0.0.1:9/callback', 'session', 'received', NULL, \
         NULL, 1)"
    );
    let cpu0 = cpu_secs(std::process::id());
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < Duration::from_secs(secs) {
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        for _ in 0..LIMIT_BATCH {
            n += 1;
            let id = format!("limit-{n}-{}", uuid::Uuid::new_v4());
            let key = format!("key-{id}");
            c.execute_batch("SAVEPOINT group_write").unwrap();
            let exists: bool = if keyed {
                c.prepare_cached(dup)
                    .unwrap()
                    .query_row(rusqlite::params![key, "2026-11-27", "limit-tpp"], |r| {
                        r.get(0)
                    })
                    .unwrap()
            } else {
                use std::hash::BuildHasher;
                keys.contains_key(&hasher.hash_one(&key))
            };
            assert!(!exists);
            c.prepare_cached(&pay)
                .unwrap()
                .execute(rusqlite::params![id, LIMIT_BODY, key])
                .unwrap();
            if !keyed {
                use std::hash::BuildHasher;
                keys.insert(hasher.hash_one(&key), c.last_insert_rowid());
            }
            c.prepare_cached(&auth)
                .unwrap()
                .execute(rusqlite::params![format!("a-{id}"), id])
                .unwrap();
            c.execute_batch("RELEASE group_write").unwrap();
        }
        c.execute_batch("COMMIT").unwrap();
    }
    (n, cpu_secs(std::process::id()) - cpu0)
}

/// The statement shape of a PostgreSQL limit measurement ([`pgbench_write_limit`]).
#[derive(Clone, Copy)]
enum LimitShape {
    /// What the sandbox's group-commit writer sends today: per payment the logical-duplicate
    /// `SELECT` and the two `INSERT`s.
    PerRow,
    /// The cheapest shape with the same meaning: one duplicate check for the whole batch
    /// (`dedup_key = ANY(ARRAY[..])`), one multi-row `INSERT` per table.
    MultiRow,
    /// [`LimitShape::MultiRow`] and what every request needs of the database besides its
    /// write, with many instances on one database: the clock sync's statement
    /// (`tenancy::clock_offsets_since`, offsets read) as its own round trip per payment, and
    /// the replay guard's batch `INSERT … ON CONFLICT` of the batch's request ids.
    MultiRowAndRequests,
}

impl LimitShape {
    fn label(self) -> &'static str {
        match self {
            LimitShape::PerRow => "today's statements per row",
            LimitShape::MultiRow => "multi-row (one check, one INSERT per table)",
            LimitShape::MultiRowAndRequests => {
                "multi-row, and per request the clock sync and the replay id"
            }
        }
    }
}

/// The `pis_payments` values of the limit's payment number variable `n` (a pgbench variable).
fn limit_payment_values(n: &str) -> String {
    format!(
        "('limit-' || :client_id::text || '-' || :{n}::text, 'limit-tpp', 'payments', 'norwegian-domestic-credit-transfers', 'domestic', 'RCVD', NULL, NULL, '{LIMIT_BODY}', 'account', 'NOK', 101000, NULL, 'k' || :{n}::text, 1, '2026-11-27', 'http://127.0.0.1:9/callback', 'session', NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'received')"
    )
}

/// The `pis_authorisations` values of the limit's payment number variable `n`.
fn limit_auth_values(n: &str) -> String {
    format!(
        "('limit-a-' || :client_id::text || '-' || :{n}::text, 'limit-tpp', 'Limit TPP', 'limit-' || :client_id::text || '-' || :{n}::text, NULL, 'http://127.0.0.1:9/callback', 'session', 'received', NULL, NULL, 1)"
    )
}

/// The limit of payment creation's database work on PostgreSQL: `pgbench` with ONE client
/// (one thread, prepared statements) on the cluster and database the sandbox used, each
/// transaction a batch of [`LIMIT_BATCH`] payments as the sandbox's group-commit writer sends
/// it (`BEGIN`, the advisory write lock, the payments' statements in `shape`, the data-version
/// bump, `COMMIT`) in one pipeline (`\startpipeline`), as the writer pipelines it.
/// One client: the database's own cost per row, not 64 backends contending for 2 cores (what
/// session 13's 64-client measure gave: 745 us per payment). Returns the payments made, the CPU
/// seconds PostgreSQL's processes used meanwhile (`postmaster` and its children, live and
/// reaped: pgbench's own CPU is not in it) and pgbench's output; `None` when pgbench is not
/// installed.
fn pgbench_write_limit(
    url: &str,
    postmaster: u32,
    secs: u64,
    shape: LimitShape,
) -> Option<(f64, f64, String)> {
    let mut script =
        String::from("\\startpipeline\nBEGIN;\nSELECT pg_advisory_xact_lock(1347634226);\n");
    let vars: Vec<String> = (0..LIMIT_BATCH).map(|i| format!("n{i}")).collect();
    for n in &vars {
        script.push_str(&format!("\\set {n} random(1, 9000000000000000)\n"));
    }
    match shape {
        LimitShape::PerRow => {
            for n in &vars {
                script.push_str(&format!(
                    "SELECT EXISTS(SELECT 1 FROM pis_payments WHERE tpp = 'limit-tpp' AND dedup_key = 'k' || :{n}::text AND created_day = '2026-11-27' AND status NOT IN ('RJCT', 'CANC'));\n\
                     INSERT INTO pis_payments ({LIMIT_PAYMENT_COLUMNS}) VALUES {};\n\
                     INSERT INTO pis_authorisations ({LIMIT_AUTH_COLUMNS}) VALUES {};\n",
                    limit_payment_values(n),
                    limit_auth_values(n)
                ));
            }
        }
        LimitShape::MultiRow | LimitShape::MultiRowAndRequests => {
            let keys: Vec<String> = vars.iter().map(|n| format!("'k' || :{n}::text")).collect();
            let pays: Vec<String> = vars.iter().map(|n| limit_payment_values(n)).collect();
            let auths: Vec<String> = vars.iter().map(|n| limit_auth_values(n)).collect();
            script.push_str(&format!(
                "SELECT dedup_key FROM pis_payments WHERE tpp = 'limit-tpp' AND dedup_key = ANY(ARRAY[{}]) AND created_day = '2026-11-27' AND status NOT IN ('RJCT', 'CANC');\n\
                 INSERT INTO pis_payments ({LIMIT_PAYMENT_COLUMNS}) VALUES {};\n\
                 INSERT INTO pis_authorisations ({LIMIT_AUTH_COLUMNS}) VALUES {};\n",
                keys.join(", "),
                pays.join(", "),
                auths.join(", ")
            ));
        }
    }
    let requests = matches!(shape, LimitShape::MultiRowAndRequests);
    script.push_str(
        "UPDATE sandbox_data_version SET v = v + 1 WHERE id = 1;\nCOMMIT;\n\\endpipeline\n",
    );
    if requests {
        // The replay guard's statement for the batch's request ids (its own connection and
        // transaction in the sandbox, as here: one statement per batch).
        let ids: Vec<String> = vars
            .iter()
            .map(|n| format!("'{{\"t\":\"limit-tpp\",\"r\":\"' || :{n}::text || '\",\"l\":300}}'"))
            .collect();
        script.push_str(&format!(
            "INSERT INTO replay_request_ids (tpp, request_id, expires) SELECT x.t, x.r, CAST(EXTRACT(EPOCH FROM now()) AS BIGINT) + x.l FROM jsonb_to_recordset(CAST('[' || {} || ']' AS JSONB)) AS x(t TEXT, r TEXT, l BIGINT) WHERE true ON CONFLICT (tpp, request_id) DO UPDATE SET expires = EXCLUDED.expires WHERE replay_request_ids.expires <= CAST(EXTRACT(EPOCH FROM now()) AS BIGINT) RETURNING tpp, request_id;\n",
            ids.join(" || ',' || ")
        ));
        // Every request's clock sync: one statement, one round trip each (outside the
        // pipeline), reading the offsets as it does whenever the data version moved.
        for _ in 0..LIMIT_BATCH {
            script.push_str(
                "SELECT 0, NULL, v FROM sandbox_data_version WHERE id = 1 \
                 UNION ALL SELECT 1, NULL, CAST(value AS INTEGER) FROM sandbox_meta WHERE key = 'clock_offset_nanos' AND (SELECT v FROM sandbox_data_version WHERE id = 1) IS DISTINCT FROM -1 \
                 UNION ALL SELECT 2, tpp, offset_secs FROM tpp_clocks WHERE (SELECT v FROM sandbox_data_version WHERE id = 1) IS DISTINCT FROM -1 \
                 UNION ALL SELECT 3, NULL, 0 WHERE EXISTS (SELECT 1 FROM sandbox_faults);\n",
            );
        }
    }
    let file = tempfile::Builder::new().suffix(".sql").tempfile().unwrap();
    std::fs::write(file.path(), script).unwrap();
    let cpu0 = cluster_cpu_secs(postmaster);
    let out = Command::new("pgbench")
        .args(["-n", "-c", "1", "-j", "1", "-M", "prepared", "-T"])
        .arg(secs.to_string())
        .arg("-f")
        .arg(file.path())
        .arg(url)
        .output()
        .ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The backend exits when pgbench disconnects; the postmaster then reaps it.
    std::thread::sleep(Duration::from_millis(500));
    let cpu = cluster_cpu_secs(postmaster) - cpu0;
    let done = text
        .lines()
        .find(|l| l.starts_with("number of transactions actually processed: "))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())?;
    Some((done * LIMIT_BATCH as f64, cpu, text))
}

/// The CPU seconds (user + system) PostgreSQL's processes used so far: the postmaster
/// `postmaster`, its live children (backends, background writer, WAL writer, ...; found by
/// their parent in `/proc/<pid>/stat`) and its reaped ones.
fn cluster_cpu_secs(postmaster: u32) -> f64 {
    let mut total = cpu_secs(postmaster) + children_cpu_secs(postmaster);
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return total;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the command name: state, then the parent's pid.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if parent == Some(postmaster) {
            total += cpu_secs(pid);
        }
    }
    total
}

/// The CPU time (user + system, seconds) of the reaped children of process `pid` (fields 16
/// and 17 of `/proc/<pid>/stat`); 0 when unreadable.
fn children_cpu_secs(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (ticks(13) + ticks(14)) as f64 / 100.0
}

/// The pid of the PostgreSQL server (postmaster) behind `url`: the parent of a backend.
fn postmaster_pid(rt: &tokio::runtime::Runtime, url: &str) -> Option<u32> {
    // The backend's parent is read while its connection is still open: once the client
    // disconnects the backend exits, and a `/proc` read after that found nothing now and
    // then (the write runs then printed no PostgreSQL CPU and no PostgreSQL limit).
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .ok()?;
        let task = tokio::spawn(conn);
        let backend: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .ok()?
            .get(0);
        let status = std::fs::read_to_string(format!("/proc/{backend}/status")).ok();
        drop(client);
        let _ = task.await;
        status?
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .and_then(|v| v.trim().parse().ok())
    })
}

/// The most writes/s a server could answer on these 2 cores if each write cost the RSA
/// floor's share (the floor's `floor` req/s use the whole machine) plus `extra_cpu` seconds of
/// database work (measured alone, the machine's 2 cores busy), and nothing else.
fn limit_rate(floor: f64, extra_cpu: f64) -> f64 {
    let cores = std::thread::available_parallelism().map_or(2.0, |n| n.get() as f64);
    cores / (cores / floor + extra_cpu)
}

/// The CPU time (user + system, seconds) process `pid` used so far, from `/proc/<pid>/stat`
/// (fields 14 and 15, in clock ticks of 1/100 s, Linux's `USER_HZ`); 0 when unreadable.
/// On PostgreSQL the database server's own processes are not counted.
fn cpu_secs(pid: u32) -> f64 {
    let (user, system) = cpu_split_secs(pid);
    user + system
}

/// The user and system CPU seconds of process `pid` (`/proc/<pid>/stat`, 10 ms ticks; 0 when
/// it is gone).
fn cpu_split_secs(pid: u32) -> (f64, f64) {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return (0.0, 0.0);
    };
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (ticks(11) as f64 / 100.0, ticks(12) as f64 / 100.0)
}

/// The reads over TLS (issue 23, "Over TLS"): `sandbox serve --tls` (client-auth none, its
/// certificate issued by the sandbox CA of its data directory, `--allow-replays`, one signed
/// request per read replayed, keep-alive so handshakes are amortised), wrk over https;
/// beside an RSA floor and a bare axum served with the same rustls configuration (built by
/// [`ServerTls::acceptor`] from the same CA) on the sandbox's server loop. Target: at least
/// 85 % of the TLS floor: for the plain 100 KB pages the TLS floor serving that page (and its
/// bare axum beside it), for every other read the TLS floor's 2 KB answer; each read against
/// the floor's runs alternated with its own ([`alternate`], the median of the pairs).
fn scenario_tls(rt: &tokio::runtime::Runtime, creds: &Credentials) {
    let secs = reads_secs();
    let home = tempfile::tempdir().unwrap();
    let server = start_reads_server(&["--tls", "--allow-replays"], Some(home.path()));
    // With `PSD2_LOAD_CALLGRIND=1` (and `PSD2_LOAD_WRAP="valgrind --tool=callgrind"`): one
    // dump per read's run, as in the reads scenario (TLS encryption included).
    let callgrind_pid = std::env::var("PSD2_LOAD_CALLGRIND")
        .is_ok_and(|v| v == "1")
        .then(|| server.child.id());
    let data = home.path().join("data");
    let (ca_file, _) = psd2_console::cert::ca::ca_files(&data);
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&ca_file).unwrap()).unwrap();
    let http = reqwest::Client::builder()
        .no_gzip()
        .tls_certs_only([ca.clone()])
        .build()
        .unwrap();
    let browser = reqwest::Client::builder()
        .tls_certs_only([ca])
        .redirect(reqwest::redirect::Policy::none())
        .cookie_store(true)
        .build()
        .unwrap();
    let (s, reads) = ais_reads(rt, &http, &browser, creds, &server.base);
    let cert = home.path().join("tpp.pem");
    std::fs::write(&cert, creds.certificate.to_pem()).unwrap();
    // The 100 KB pages are judged against the TLS floor serving the same page (issue 23:
    // "an RSA floor served over the same TLS configuration"); before session 14 they were
    // compared with the 2 KB floor and read 26-38 %.
    let page = reads
        .iter()
        .find(|r| r.label == "transactions, plain")
        .unwrap();
    let big_body = home.path().join("page.json");
    std::fs::write(
        &big_body,
        probe(rt, &http, creds, &server.base, &s.psu_id, page).0,
    )
    .unwrap();
    let servers = BaselineServers {
        axum: start_baseline(&BaselineSpec {
            tls_data: Some(&data),
            big_body: Some(&big_body),
            ..Default::default()
        }),
        floor: start_baseline(&BaselineSpec {
            floor_cert: Some(&cert),
            tls_data: Some(&data),
            big_body: Some(&big_body),
        }),
        big: true,
    };
    let baseline_headers = read_headers(creds, &s.psu_id, "/v1/accounts", None);
    let big_headers = read_headers(creds, &s.psu_id, BIG_PATH, None);
    let fixed = |path: &str| {
        Load::Fixed(if path == BIG_PATH {
            &big_headers
        } else {
            &baseline_headers
        })
    };
    let mut b = Baselines::default();
    measure_baselines(&servers, &fixed, secs, 0, &mut b, "TLS");
    let mut rows = Vec::new();
    // The floor's last run and its path, to start the next read's pairs with.
    let mut last: Option<(&str, WrkFigures)> = None;
    for read in &reads {
        let (plain, wire, coding) = probe(rt, &http, creds, &server.base, &s.psu_id, read);
        let hs = read_headers(creds, &s.psu_id, &read.path, read.coding());
        // A plain 100 KB page beside the floor serving that page.
        let big = read.coding().is_none() && plain.len() >= BIG_ROW_BYTES;
        let path = if big { BIG_PATH } else { "/v1/accounts" };
        let mut sized =
            || floor_beside_on(&servers, &sized_path(wire), &fixed, secs, "TLS", read.label);
        let pairs = alternate(
            load_pairs(),
            last.filter(|(p, _)| *p == path).map(|(_, f)| f),
            &mut || floor_beside_on(&servers, path, &fixed, secs, "TLS", read.label),
            coding
                .is_some()
                .then_some(&mut sized as &mut dyn FnMut() -> WrkFigures),
            &mut |k| replayed_run(&server, read, &hs, secs, callgrind_pid, "TLS, replayed", k),
        );
        last = last_floor(&pairs).map(|f| (path, f));
        rows.push(Row {
            read: read.clone(),
            size: plain.len(),
            wire,
            coding,
            pairs,
        });
    }
    measure_baselines(&servers, &fixed, secs, 1, &mut b, "TLS");
    print_reads_table(
        &format!(
            "reads over TLS (sandbox serve --tls --allow-replays, client-auth none; baselines on the same rustls configuration and server loop), {secs} s per run"
        ),
        &b,
        &rows,
        TLS_TARGET,
        true,
    );
}

/// Checks of the bench's own helpers, run before the scenarios (no server, no timing): the
/// floor verifies a request signed by the library (plain and RFC 2047-encoded `Signature`)
/// and refuses a changed one; wrk's output is read right; pre-signed X-Request-IDs are
/// unique.
fn selfcheck(creds: &Credentials) {
    let floor = RsaFloor::new(creds.certificate.clone());
    let hs = signed(creds, "GET", "/v1/accounts", &[("PSU-ID", "12345")], b"");
    let map = |hs: &[(String, String)]| {
        let mut m = axum::http::HeaderMap::new();
        for (n, v) in hs {
            m.append(
                axum::http::HeaderName::from_bytes(n.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        m
    };
    floor.verify("GET", "/v1/accounts", &map(&hs)).unwrap();
    let encoded: Vec<(String, String)> = hs
        .iter()
        .map(|(n, v)| {
            if n.eq_ignore_ascii_case("Signature") {
                (n.clone(), psd2_console::signing::rfc2047::encode_utf8_b(v))
            } else {
                (n.clone(), v.clone())
            }
        })
        .collect();
    floor.verify("GET", "/v1/accounts", &map(&encoded)).unwrap();
    let changed: Vec<(String, String)> = hs
        .iter()
        .map(|(n, v)| {
            if n.eq_ignore_ascii_case("PSU-ID") {
                (n.clone(), "12346".into())
            } else {
                (n.clone(), v.clone())
            }
        })
        .collect();
    assert!(floor.verify("GET", "/v1/accounts", &map(&changed)).is_err());
    let f = parse_wrk(
        "Running 2s test @ http://127.0.0.1:1/\n  Latency Distribution\n     50%  812.00us\n     75%    1.00ms\n     90%    1.50ms\n     99%    3.21ms\n  71234 requests in 2.00s, 10.00MB read\n  Socket errors: connect 0, read 2, write 0, timeout 1\n  Non-2xx or 3xx responses: 5\nRequests/sec:  35617.00\nTransfer/sec:      5.00MB\ncycled-requests-wrapped: 0\n",
    );
    assert_eq!(f.requests, 71234);
    assert!((f.per_sec - 35617.0).abs() < 0.5);
    assert!((f.p50_ms - 0.812).abs() < 1e-9 && (f.p99_ms - 3.21).abs() < 1e-9);
    assert_eq!((f.non_2xx, f.socket_errors, f.wrapped), (5, 3, Some(0)));
    assert_eq!(f.used, None);
    assert_eq!(
        parse_wrk("cycled-requests-wrapped: 0\ncycled-requests-used: 4321\n").used,
        Some(4321)
    );
    let set = presign(creds, 50, "12345", &|i| {
        (
            "POST",
            PAYMENT_PATH.into(),
            format!("{{\"n\":{i}}}").into_bytes(),
            Vec::new(),
        )
    });
    let raw = std::fs::read(set.file.path()).unwrap();
    assert_eq!(raw.iter().filter(|&&b| b == 0).count(), 50);
    // Sets signed together: each its own file of n requests, no X-Request-ID in two of them.
    let sets = presign_sets(creds, 7, 3, "12345", &|_| {
        ("GET", "/v1/accounts".into(), Vec::new(), Vec::new())
    });
    let mut ids = HashSet::new();
    for set in &sets {
        let raw = std::fs::read(set.file.path()).unwrap();
        assert_eq!((set.count, raw.iter().filter(|&&b| b == 0).count()), (7, 7));
        for request in String::from_utf8(raw).unwrap().split('\0') {
            if let Some(id) = request
                .lines()
                .find_map(|l| l.strip_prefix("X-Request-ID: "))
            {
                assert!(ids.insert(id.to_string()), "{id} in two sets");
            }
        }
    }
    assert_eq!(ids.len(), 21);
    check_pool(creds);
    check_pairs();
    println!(
        "selfcheck: the floor verifies plain and RFC 2047 Signatures and refuses a changed header; wrk output parsed; pre-signed ids unique ({} bytes per pre-signed payment request); sets signed together split and unique; a pool's runs take the next unused requests and a run that got through its file runs again on more; runs alternated with the floor's (and a plain 100 KB page's with bare axum's 100 KB runs) and judged by the median pair",
        raw.len() / 50
    );
}

/// The X-Request-IDs of a pre-signed file, in order.
fn presigned_ids(set: &Presigned) -> Vec<String> {
    let raw = String::from_utf8(std::fs::read(set.file.path()).unwrap()).unwrap();
    raw.split('\0')
        .filter_map(|r| {
            r.lines()
                .find_map(|l| l.strip_prefix("X-Request-ID: "))
                .map(str::to_string)
        })
        .collect()
}

/// Checks of [`Pool`], [`run_need`] and [`run_pooled`] (part of [`selfcheck`]): real
/// signatures, fake wrk runs.
fn check_pool(creds: &Credentials) {
    let sign = |n: usize| {
        presign(creds, n, "12345", &|_| {
            ("GET", "/v1/accounts".into(), Vec::new(), Vec::new())
        })
    };
    let mut pool = Pool::new(&sign, 20);
    let all = presigned_ids(&pool.set);
    assert_eq!((all.len(), pool.left()), (20, 20));
    // A run's file is the next unused requests; only what wrk took is spent.
    let file = pool.take(8);
    assert_eq!(presigned_ids(&file), all[..8]);
    assert_eq!(file.count, 8);
    let ran = |wrapped: u64, used: u64| WrkFigures {
        wrapped: Some(wrapped),
        used: Some(used),
        per_sec: 100.0,
        requests: used,
        ..Default::default()
    };
    pool.spend(&ran(0, 5), file.count);
    let file = pool.take(8);
    assert_eq!(presigned_ids(&file), all[5..13]);
    // A run that got through its file spent all of it (wrk's count starts over).
    pool.spend(&ran(1, 3), file.count);
    assert_eq!(pool.left(), 7);
    assert_eq!(presigned_ids(&pool.take(100)), all[13..]);
    // Enough left: nothing signed; too few: the rest dropped, new ids signed.
    assert_eq!(pool.ensure(7, 50, 1), 0);
    // Too few: new ids signed after the 7 left (fresh, in their Date window), 30 in all.
    assert_eq!(pool.ensure(8, 30, 1), 23);
    assert_eq!((pool.left(), pool.signed), (30, 43));
    let fresh = presigned_ids(&pool.set);
    assert_eq!(fresh[..7], all[13..]);
    assert!(fresh[7..].iter().all(|id| !all.contains(id)));
    assert_eq!(presigned_ids(&pool.take(9))[..8], fresh[..8]);
    // Sizing: the fastest rate × the margin × the seconds, and four per connection.
    assert_eq!(run_need([100.0, 200.0], 1.5, 2), 600 + 4 * CONNECTIONS);
    assert_eq!(run_need([], 1.3, 3), 4 * CONNECTIONS);
    // The bound's factor: the median of the earlier reads', within 0.5–1.
    assert_eq!(calibrate(&[]), 1.0);
    assert_eq!(calibrate(&[0.7, 0.6, 0.9]), 0.7);
    assert_eq!((calibrate(&[0.2]), calibrate(&[1.4])), (0.5, 1.0));
    // A run that gets through its file runs again on twice as many (signed when too few are
    // left), never on ids it was given before, and the bench does not fail.
    let mut given = Vec::new();
    let mut runs = 0;
    let (f, _, (), n) = run_pooled("selfcheck", "/v1/accounts", &mut pool, 10, 1, |file| {
        runs += 1;
        let ids = presigned_ids(file);
        assert!(
            ids.iter().all(|id| !given.contains(id)),
            "an id given twice"
        );
        given.extend(ids);
        let f = if runs < 3 {
            ran(1, file.count as u64)
        } else {
            ran(0, 4)
        };
        (f, String::new(), ())
    });
    assert_eq!((runs, f.wrapped, n), (3, Some(0), 912));
}

/// Checks of the alternation and the verdict (part of [`selfcheck`]): pure, no server.
fn check_pairs() {
    let rate = |per_sec: f64, cpu: Option<f64>| WrkFigures {
        per_sec,
        server_cpu_us: cpu,
        ..Default::default()
    };
    // The order of the runs: F R F R F R F, a gzip page's same-size floor run between the
    // floor's run before and the read's; each floor run shared by the pairs either side.
    let order = std::cell::RefCell::new(Vec::new());
    let mut floors = [100.0, 110.0, 90.0, 100.0].into_iter();
    let mut sized = [80.0, 81.0, 82.0].into_iter();
    let mut sized_run = || {
        order.borrow_mut().push("S");
        rate(sized.next().unwrap(), Some(40.0))
    };
    let pairs = alternate(
        3,
        None,
        &mut || {
            order.borrow_mut().push("F");
            rate(floors.next().unwrap(), Some(20.0))
        },
        Some(&mut sized_run),
        &mut |k| {
            order.borrow_mut().push("R");
            rate([95.0, 50.0, 99.0][k], Some([21.0, 40.0, 22.0][k]))
        },
    );
    assert_eq!(
        order.take(),
        ["F", "S", "R", "F", "S", "R", "F", "S", "R", "F"]
    );
    let at = |p: &Pair| [p.before.per_sec, p.run.per_sec, p.after.per_sec];
    assert_eq!(
        pairs.iter().map(at).collect::<Vec<_>>(),
        [
            [100.0, 95.0, 110.0],
            [110.0, 50.0, 90.0],
            [90.0, 99.0, 100.0]
        ]
    );
    // Each share against the mean of the floor runs either side: 95/105, 50/100, 99/95.
    let share = spread(pairs.iter().map(|p| Some(p.share()))).unwrap();
    assert!((share.median - 95.0 / 105.0).abs() < 1e-12);
    assert!((share.min - 0.5).abs() < 1e-12 && (share.max - 99.0 / 95.0).abs() < 1e-12);
    // The one spoiled pair (50 %) decides nothing: the median passes 90 %.
    assert_eq!(verdict(&share, None, 0.90, "floor"), "PASS");
    // A median below the target misses, whatever the best pair reached.
    assert_eq!(
        verdict(&share, None, 0.95, "floor"),
        "MISS (90.5 % < 95 % of the floor)"
    );
    assert_eq!(
        verdict(&share, Some(5.2), 0.90, "floor"),
        "MISS (p99 5.20 ms ≥ 5 ms)"
    );
    // The CPU ratio per pair (21/20, 40/20, 22/20) and its median; the same-size floor's
    // share of the small floor (80/105, 81/100, 82/95).
    let cpu = spread(pairs.iter().map(Pair::cpu_ratio)).unwrap();
    assert!((cpu.median - 1.1).abs() < 1e-12 && (cpu.max - 2.0).abs() < 1e-12);
    let s = spread(pairs.iter().map(Pair::sized_share)).unwrap();
    assert!((s.median - 0.81).abs() < 1e-12);
    assert!(
        (spread(pairs.iter().map(Pair::sized_cpu_ratio))
            .unwrap()
            .median
            - 0.55)
            .abs()
            < 1e-12
    );
    // A previous read's last floor run starts the next read's pairs: no new floor run first.
    let mut runs = 0;
    let next = alternate(
        1,
        last_floor(&pairs),
        &mut || {
            runs += 1;
            rate(120.0, None)
        },
        None,
        &mut |_| rate(110.0, None),
    );
    assert_eq!(
        (runs, next[0].before.per_sec, next[0].after.per_sec),
        (1, 100.0, 120.0)
    );
    // A plain 100 KB page: bare axum's and the floor's 100 KB runs before every floor run
    // (B F R B F R B F), the previous read's floor run not reused; each share of bare axum
    // against its runs either side: 45/50, 40/50, 60/60 (the verdict's median: 90 %); the
    // 100 KB floor's own share 30/50, 36/50, 42/60 (the limit's median: 70 %).
    let order = std::cell::RefCell::new(Vec::new());
    let mut axum = [50.0, 50.0, 50.0, 70.0].into_iter();
    let mut big_floor = [30.0, 30.0, 42.0, 42.0].into_iter();
    let mut floors = [100.0, 100.0, 100.0, 100.0].into_iter();
    let mut big = || {
        order.borrow_mut().push("B");
        BigBase {
            axum: rate(axum.next().unwrap(), None),
            floor: rate(big_floor.next().unwrap(), None),
        }
    };
    let plain = alternate_big(
        3,
        Some(rate(1.0, None)),
        &mut || {
            order.borrow_mut().push("F");
            rate(floors.next().unwrap(), None)
        },
        Some(&mut big),
        None,
        &mut |k| {
            order.borrow_mut().push("R");
            rate([45.0, 40.0, 60.0][k], None)
        },
        None,
    );
    assert_eq!(
        order.take(),
        ["B", "F", "R", "B", "F", "R", "B", "F", "R", "B", "F"]
    );
    assert_eq!(plain[0].before.per_sec, 100.0);
    let of_axum = spread(plain.iter().map(Pair::big_share)).unwrap();
    assert_eq!((of_axum.median, of_axum.min), (0.9, 0.8));
    assert!((of_axum.max - 1.0).abs() < 1e-12);
    let limit = spread(plain.iter().map(Pair::big_limit)).unwrap();
    assert!((limit.median - 0.7).abs() < 1e-12 && (limit.max - 0.72).abs() < 1e-12);
    let of_floor = spread(plain.iter().map(Pair::big_floor_share)).unwrap();
    assert!((of_floor.median - 60.0 / 42.0).abs() < 1e-12);
    // Setup between two pairs (`between` returns true: it signed) gives the next pair floor
    // runs of its own: F R F | F R F R F.
    let order = std::cell::RefCell::new(Vec::new());
    let mut n = 0.0;
    let setup = alternate_big(
        3,
        None,
        &mut || {
            order.borrow_mut().push("F");
            n += 1.0;
            rate(n, None)
        },
        None,
        None,
        &mut |_| {
            order.borrow_mut().push("R");
            rate(50.0, None)
        },
        Some(&mut |k| {
            order.borrow_mut().push("|");
            k == 1
        }),
    );
    assert_eq!(
        order.take(),
        ["F", "R", "F", "|", "F", "R", "F", "|", "R", "F"]
    );
    assert_eq!(
        setup
            .iter()
            .map(|p| (p.before.per_sec, p.after.per_sec))
            .collect::<Vec<_>>(),
        [(1.0, 2.0), (3.0, 4.0), (4.0, 5.0)]
    );
    // Pairs without 100 KB runs have no such figures.
    assert_eq!(spread(pairs.iter().map(Pair::big_share)), None);
    // A CPU figure missing in one pair gives no ratio at all.
    assert_eq!(spread(next.iter().map(Pair::cpu_ratio)), None);
    // The median of an even count is the mean of the middle two; an empty list has none.
    let even = spread([4.0, 1.0, 3.0, 2.0].map(Some)).unwrap();
    assert_eq!((even.median, even.min, even.max), (2.5, 1.0, 4.0));
    assert_eq!(spread(std::iter::empty()), None);
    // The table's figures of a read: each the median over its runs, requests summed.
    let f = median_figures(&[
        WrkFigures {
            requests: 10,
            per_sec: 3.0,
            p99_ms: 9.0,
            ..Default::default()
        },
        WrkFigures {
            requests: 20,
            per_sec: 1.0,
            p99_ms: 1.0,
            ..Default::default()
        },
        WrkFigures {
            requests: 30,
            per_sec: 2.0,
            p99_ms: 2.0,
            ..Default::default()
        },
    ]);
    assert_eq!((f.requests, f.per_sec, f.p99_ms), (60, 2.0, 2.0));
    assert_eq!(pct_spread(&share), "90 % (50–104 %)");
}

fn main() {
    if let Some(port) = std::env::var(BARE_AXUM_ENV)
        .ok()
        .and_then(|p| p.parse().ok())
    {
        baseline_main(port);
    }
    // `cargo bench` passes `--bench`; a filter argument picks scenarios (`all`: every one).
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let all = filter.is_empty() || filter.iter().any(|f| f == "all");
    let want = |name: &str| all || filter.iter().any(|f| name.contains(f.as_str()));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let creds = Arc::new(credentials_of(&generate_set(&TppCertSpec::default()).unwrap()).unwrap());
    selfcheck(&creds);
    if want("transactions") {
        scenario_transactions(&rt, &creds);
    }
    if want("reads") {
        scenario_reads(&rt, &creds);
    }
    // Only by name: an investigation, not one of issue 23's targets.
    if filter.iter().any(|f| f == "replaycost") {
        scenario_replay_cost(&rt, &creds);
    }
    if want("writes") {
        scenario_writes(&rt, &creds);
    }
    if want("tls") {
        scenario_tls(&rt, &creds);
    }
    if want("payments") {
        scenario_concurrent_payments(&rt, &creds);
    }
    if want("restart") {
        scenario_restart(&rt, &creds);
    }
}
