//! The real console binary, measured the way a user meets it (BENCHMARKS.md, "Console: the
//! real binary (issue 23)"). Each figure is printed; nothing is asserted.
//!
//! - `start`: start to first frame (the console writes the instant of its first frame to
//!   `PSD2_CONSOLE_TRACE_FIRST_FRAME`) and the resident memory one second later (`VmRSS`,
//!   split into anonymous and file pages), 10 warm starts on the built-in embedded profile
//!   in tmux 200×50.
//! - `20mb`: a loopback server in this process answers `GET /v1/accounts` with a 20 MB
//!   transaction report (65,000 transactions, compact JSON); the console sends it on a
//!   profile that targets the server. Printed: key press to the answer on screen (polled
//!   with `tmux capture-pane` every 5 ms), the time the console shows (sent to whole body
//!   received), peak RSS (`VmHWM`), RSS 5 s later with the view open, and RSS after a small
//!   answer (`GET /v1/card-accounts`) replaced the view.
//! - `idle`: in the same console, the 20 MB send 1 s after a small send ("hot") and 25 s
//!   after it ("after idle"), three times each.
//! - `history`: a history of 10,000 exchanges with 50 MB of bodies (built once, kept in
//!   `target/bench-history-10k/`); a fresh process (its own peak memory) opens the History
//!   screen and searches an X-Request-ID key by key, each key followed by what the runner
//!   does (read the history for the query, draw a 200×60 frame).
//!
//! `cargo bench --bench console` runs all; `cargo bench --bench console -- 20mb idle` runs
//! those. Needs tmux for all but `history`.

// Tests and benches may unwrap: a panic is their failure report (Cargo.toml [lints]).
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const BIN: &str = env!("CARGO_BIN_EXE_psd2-console");
const BODY_BYTES: usize = 20 << 20;

// ---------------------------------------------------------------------------------------
// Helpers

fn epoch_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Field `field` (`VmRSS:`, `VmHWM:`, `RssAnon:`, ...) of `/proc/<pid>/status`, KiB.
fn status_kib(pid: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn stats(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A tmux server of its own with one 200×50 session running the console.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(home: &Path, trace: &Path, args: &str) -> Tmux {
        let socket = format!("psd2c-console-bench-{}-{}", std::process::id(), epoch_ns());
        let t = Tmux { socket };
        let script = format!(
            "exec env PSD2_CONSOLE_FREE_PORTS=1 PSD2_CONSOLE_HOME={} PSD2_CONSOLE_TRACE_FIRST_FRAME={} {} {args}",
            quote(&home.display().to_string()),
            quote(&trace.display().to_string()),
            quote(BIN)
        );
        let out = t.run(&[
            "new-session",
            "-d",
            "-s",
            "b",
            "-x",
            "200",
            "-y",
            "50",
            &script,
        ]);
        assert!(
            out.status.success(),
            "tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        t
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("run tmux")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "b"]).stdout).into_owned()
    }

    fn pid(&self) -> String {
        String::from_utf8_lossy(
            &self
                .run(&["display-message", "-p", "-t", "b", "#{pane_pid}"])
                .stdout,
        )
        .trim()
        .to_string()
    }

    fn key(&self, k: &str) {
        self.run(&["send-keys", "-t", "b", k]);
    }

    /// Polls the screen every 5 ms until `done` holds; the time it took (or `None` after
    /// `patience`).
    fn wait(&self, patience: Duration, done: impl Fn(&str) -> bool) -> Option<Duration> {
        let t = Instant::now();
        while t.elapsed() < patience {
            if done(&self.screen()) {
                return Some(t.elapsed());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        None
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Waits until `trace` holds the first frame's instant; ms from `start_ns`.
fn first_frame_ms(trace: &Path, start_ns: u128) -> Option<f64> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(s) = std::fs::read_to_string(trace)
            && let Ok(ns) = s.trim().parse::<u128>()
        {
            return Some(ns.saturating_sub(start_ns) as f64 / 1e6);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    None
}

// ---------------------------------------------------------------------------------------
// (a) start

fn bench_start() {
    let home = tempfile::tempdir().unwrap();
    let trace = home.path().join("first-frame");
    let mut times = Vec::new();
    let (mut rss, mut anon, mut file) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..11 {
        let _ = std::fs::remove_file(&trace);
        let start = epoch_ns();
        let t = Tmux::start(&home.path().join("home"), &trace, "");
        let Some(ms) = first_frame_ms(&trace, start) else {
            println!("console/start: run {i} gave no first frame");
            continue;
        };
        std::thread::sleep(Duration::from_secs(1));
        let pid = t.pid();
        if i > 0 {
            // The first start creates the data directory and the certificate.
            times.push(ms);
            rss.push(mib(status_kib(&pid, "VmRSS:")));
            anon.push(mib(status_kib(&pid, "RssAnon:")));
            file.push(mib(status_kib(&pid, "RssFile:")));
        }
        drop(t);
        std::thread::sleep(Duration::from_millis(200));
    }
    if times.is_empty() {
        return;
    }
    let (a, b, c) = stats(&mut times);
    println!(
        "console/start: first frame {a:.1} / {b:.1} / {c:.1} ms (min / median / max of {} warm starts, tmux's own start included)",
        times.len()
    );
    let (a, b, c) = stats(&mut rss);
    let (_, an, _) = stats(&mut anon);
    let (_, fi, _) = stats(&mut file);
    println!(
        "console/start: VmRSS 1 s after the first frame {a:.1} / {b:.1} / {c:.1} MiB (median: anonymous {an:.1}, file {fi:.1})"
    );
}

// ---------------------------------------------------------------------------------------
// (b), (c) the 20 MB answer and the send after idle

/// The 20 MB transaction report, written directly.
fn report(target: usize) -> Vec<u8> {
    let mut s = String::with_capacity(target + 4096);
    s.push_str(r#"{"account":{"bban":"12345678903"},"transactions":{"booked":["#);
    let mut i = 0usize;
    while s.len() < target {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            r#"{{"transactionId":"tx-{i:07}","bookingDate":"2026-01-15","valueDate":"2026-01-15","transactionAmount":{{"currency":"NOK","amount":"-{}.{:02}"}},"creditorName":"Rema 1000 Grünerløkka","creditorAccount":{{"bban":"98765432109"}},"remittanceInformationUnstructured":"Card payment {i}","bankTransactionCode":"PMNT-CCRD-POSD"}}"#,
            i % 9999,
            i % 100
        );
        i += 1;
    }
    s.push_str(r#"],"pending":[],"_links":{"account":{"href":"/v1/accounts/acc-1"}}}}"#);
    s.into_bytes()
}

/// A keep-alive HTTP/1.1 server on 127.0.0.1: `GET /v1/accounts` gets `big`, anything
/// else a small card account list; `X-Request-ID` is echoed.
fn serve(big: Arc<Vec<u8>>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let big = big.clone();
            std::thread::spawn(move || connection(conn, &big));
        }
    });
    port
}

fn connection(conn: TcpStream, big: &[u8]) {
    let mut out = conn.try_clone().unwrap();
    let mut rd = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if rd.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let (mut id, mut length) = (String::new(), 0usize);
        loop {
            let mut h = String::new();
            if rd.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((n, v)) = h.split_once(':') {
                if n.eq_ignore_ascii_case("x-request-id") {
                    id = v.trim().to_string();
                } else if n.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut skip = vec![0; length];
        let _ = rd.read_exact(&mut skip);
        let small = br#"{"cardAccounts":[]}"#;
        let body: &[u8] = if path == "/v1/accounts" { big } else { small };
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nX-Request-ID: {id}\r\n\r\n",
            body.len()
        );
        if out.write_all(head.as_bytes()).is_err() || out.write_all(body).is_err() {
            return;
        }
    }
}

/// A home with a certificate and a profile `bench-20mb` that targets `port`.
fn home_for(port: u16) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let certs = home.path().join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    let ok = Command::new(BIN)
        .args(["cert", "new", "--dir"])
        .arg(&certs)
        .env("PSD2_CONSOLE_HOME", home.path())
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let profiles = home.path().join("config").join("profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(
        profiles.join("bench-20mb.toml"),
        format!(
            "name = \"bench-20mb\"\ntarget = \"http://127.0.0.1:{port}\"\ncertificate = {:?}\nkey = {:?}\nroles = [\"PSP_AI\", \"PSP_PI\"]\ntpp_redirect_uri = \"http://127.0.0.1:8089/callback\"\npsu_ip_address = \"127.0.0.1\"\n",
            certs.join("tpp.pem").display().to_string(),
            certs.join("tpp.key").display().to_string(),
        ),
    )
    .unwrap();
    home
}

/// The head line's time of the response shown ("200 OK   366 ms   20.0 MiB").
fn shown_ms(screen: &str) -> Option<u64> {
    let line = screen.lines().find(|l| l.contains("200 OK"))?;
    let after = line.split("200 OK").nth(1)?;
    let mut words = after.split_whitespace();
    let n = words.next()?;
    match words.next()? {
        "ms" => n.parse().ok(),
        "s" => n.parse::<f64>().ok().map(|s| (s * 1000.0) as u64),
        _ => None,
    }
}

fn is_big(s: &str) -> bool {
    s.contains("200 OK") && s.contains("20.0 MiB") && s.contains("Response · List accounts")
}

fn is_small(s: &str) -> bool {
    s.contains("200 OK") && s.contains("Response · List card accounts")
}

fn bench_20mb(idle: bool, big_only: bool) {
    let big = Arc::new(report(BODY_BYTES));
    let port = serve(big);
    let home = home_for(port);
    let trace = home.path().join("first-frame");
    let t = Tmux::start(home.path(), &trace, "--profile bench-20mb");
    let patience = Duration::from_secs(120);
    if t.wait(patience, |s| {
        s.contains("List accounts") && s.contains("Signature inspector")
    })
    .is_none()
    {
        println!("console/20mb: the console did not start:\n{}", t.screen());
        return;
    }
    std::thread::sleep(Duration::from_secs(1));
    let pid = t.pid();
    let before = status_kib(&pid, "VmRSS:");
    // Each send: the key, then the screen until the answer is shown.
    let send = |done: fn(&str) -> bool| -> Option<(Duration, Option<u64>)> {
        t.key("s");
        let took = t.wait(patience, done)?;
        Some((took, shown_ms(&t.screen())))
    };
    let Some((took, shown)) = send(is_big) else {
        println!("console/20mb: no answer:\n{}", t.screen());
        return;
    };
    let hwm = status_kib(&pid, "VmHWM:");
    std::thread::sleep(Duration::from_secs(5));
    let open = status_kib(&pid, "VmRSS:");
    // List card accounts: 5 rows down.
    for _ in 0..5 {
        t.key("Down");
    }
    std::thread::sleep(Duration::from_millis(300));
    send(is_small);
    std::thread::sleep(Duration::from_secs(2));
    let closed = status_kib(&pid, "VmRSS:");
    println!(
        "console/20mb: on screen {:.0} ms after the key (the console shows {} ms from sending to the whole body); VmRSS before {:.1} MiB, peak (VmHWM) {:.1} MiB, 5 s later with the view open {:.1} MiB, after a small answer replaced it {:.1} MiB",
        took.as_secs_f64() * 1000.0,
        shown.map_or("?".into(), |v| v.to_string()),
        mib(before),
        mib(hwm),
        mib(open),
        mib(closed)
    );
    if big_only || !idle {
        return;
    }
    // (c) hot and after-idle 20 MB sends, the small answer on screen before each.
    let (mut hot, mut cold) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        for (wait, into) in [(1u64, &mut hot), (25, &mut cold)] {
            // The small answer on screen (card accounts are selected), then the pause.
            send(is_small);
            std::thread::sleep(Duration::from_secs(wait));
            for _ in 0..5 {
                t.key("Up");
            }
            std::thread::sleep(Duration::from_millis(300));
            let t0 = Instant::now();
            t.key("s");
            if let Some(took) = t.wait(patience, is_big) {
                let _ = t0;
                into.push((
                    took.as_secs_f64() * 1000.0,
                    shown_ms(&t.screen()).unwrap_or(0),
                ));
            }
            for _ in 0..5 {
                t.key("Down");
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    let fmt = |v: &[(f64, u64)]| {
        v.iter()
            .map(|(a, b)| format!("{a:.0} ms (shown {b} ms)"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "console/idle: 20 MB send 1 s after the last send: {}",
        fmt(&hot)
    );
    println!(
        "console/idle: 20 MB send 25 s after the last send: {}",
        fmt(&cold)
    );
}

// ---------------------------------------------------------------------------------------
// (d) history of 10,000 exchanges

const HISTORY_ROWS: usize = 10_000;
const HISTORY_BODY_BYTES: usize = 5 * 1024;

/// The X-Request-ID of row `i`.
fn request_id(i: usize) -> String {
    format!("6f1c2a7e-0000-4000-8000-{i:012}")
}

/// Builds (once) a history of 10,000 exchanges, 5 KiB of response body each (50 MB).
fn history_file() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("bench-history-10k");
    let path = dir.join("history.sqlite3");
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let tmp = dir.join("history.sqlite3.building");
    let _ = std::fs::remove_file(&tmp);
    drop(psd2_console::client::history::History::open(&tmp).unwrap());
    let t = Instant::now();
    let mut conn = rusqlite::Connection::open(&tmp).unwrap();
    let tx = conn.transaction().unwrap();
    {
        let mut st = tx
            .prepare(
                "INSERT INTO exchanges (at, profile, operation_id, params, method, url,
                   path_and_query, request_headers, request_body, status, response_headers,
                   response_body, elapsed_ms)
                 VALUES (?1, 'Embedded sandbox', 'accounts.transactions', '[]', 'GET', ?2, ?3, ?4,
                   x'', 200, ?5, ?6, 12)",
            )
            .unwrap();
        for i in 0..HISTORY_ROWS {
            let path = format!("/v1/accounts/acc-{}/transactions", i % 37);
            let req = serde_json::to_string(&[
                ("Accept", "application/json".to_string()),
                ("X-Request-ID", request_id(i)),
                ("PSU-ID", format!("psu-{}", i % 11)),
                ("Signature", "[redacted]".to_string()),
            ])
            .unwrap();
            let resp = serde_json::to_string(&[
                ("content-type", "application/json".to_string()),
                ("x-request-id", request_id(i)),
            ])
            .unwrap();
            let mut body =
                format!(r#"{{"account":{{"iban":"NO93860111{i:05}"}},"transactions":{{"booked":["#);
            let mut k = 0;
            while body.len() < HISTORY_BODY_BYTES - 200 {
                let _ = write!(
                    body,
                    r#"{{"transactionId":"t{i}-{k}","bookingDate":"2026-01-15","transactionAmount":{{"currency":"NOK","amount":"-{k}.00"}}}},"#
                );
                k += 1;
            }
            body.push_str(r#"{}]}}"#);
            st.execute(rusqlite::params![
                1_800_000_000 + i as i64,
                format!("http://127.0.0.1:8088{path}"),
                path,
                req,
                resp,
                body.as_bytes()
            ])
            .unwrap();
        }
    }
    tx.commit().unwrap();
    drop(conn);
    std::fs::rename(&tmp, &path).unwrap();
    println!(
        "console/history: built {HISTORY_ROWS} exchanges ({} MB of bodies) in {:.1} s: {}",
        HISTORY_ROWS * HISTORY_BODY_BYTES / 1_000_000,
        t.elapsed().as_secs_f64(),
        path.display()
    );
    path
}

/// In a fresh process: opens the history, the History screen, searches an X-Request-ID key
/// by key; prints the times and the peak memory.
fn history_child(path: &Path) {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use psd2_console::tui::{Action, App, StatusInfo};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    let history = psd2_console::client::history::History::open_existing(path).unwrap();
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut app = App::new(StatusInfo {
        profile: "Embedded sandbox".into(),
        base_url: "http://127.0.0.1:8088".into(),
        embedded: true,
        psu_id: None,
        psu_corporate_id: None,
        context: None,
        redirect_uri: "http://127.0.0.1:8089/callback".into(),
        listener_error: None,
        room: None,
    });
    terminal.draw(|f| app.render(f)).unwrap();
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    let mut reads = Vec::new();
    let mut step = |app: &mut App, k: KeyEvent| -> f64 {
        let t = Instant::now();
        if app.handle_key(k) == Action::LoadHistory {
            let q = app.history_query().to_string();
            let r = Instant::now();
            let rows = psd2_console::tui::history::load(&history, &q);
            reads.push(r.elapsed().as_secs_f64() * 1000.0);
            app.set_history(&q, rows);
        }
        terminal.draw(|f| app.render(f)).unwrap();
        t.elapsed().as_secs_f64() * 1000.0
    };
    let open = step(&mut app, key(KeyCode::Char('3')));
    step(&mut app, key(KeyCode::Char('/')));
    let id = request_id(HISTORY_ROWS / 3);
    let mut keys: Vec<f64> = id
        .chars()
        .map(|c| step(&mut app, key(KeyCode::Char(c))))
        .collect();
    let last = *keys.last().unwrap();
    let (a, b, c) = stats(&mut keys);
    let (ra, rb, rc) = stats(&mut reads);
    println!(
        "console/history: {HISTORY_ROWS} exchanges: open the History screen {open:.1} ms; search an X-Request-ID key by key ({} keys): per key min {a:.1} / median {b:.1} / max {c:.1} ms, the whole id {last:.1} ms (of which the history read: min {ra:.1} / median {rb:.1} / max {rc:.1} ms); VmHWM {:.1} MiB",
        id.len(),
        mib(status_kib("self", "VmHWM:"))
    );
}

fn bench_history() {
    let path = history_file();
    let exe = std::env::current_exe().unwrap();
    match Command::new(exe)
        .env("PSD2_CONSOLE_BENCH_CHILD", "history")
        .env("PSD2_CONSOLE_BENCH_HISTORY", &path)
        .output()
    {
        Ok(o) => print!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .filter(|l| l.contains("panicked"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        Err(e) => println!("console/history: cannot run the child: {e}"),
    }
}

fn main() {
    if std::env::var("PSD2_CONSOLE_BENCH_CHILD").as_deref() == Ok("history") {
        let path = PathBuf::from(std::env::var_os("PSD2_CONSOLE_BENCH_HISTORY").unwrap());
        return history_child(&path);
    }
    let asked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |name: &str| asked.is_empty() || asked.iter().any(|a| a == name);
    if wants("history") {
        bench_history();
    }
    let tmux = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !tmux {
        println!("console/start, 20mb, idle: skipped (tmux is not installed)");
        return;
    }
    if wants("start") {
        bench_start();
    }
    if wants("20mb") || wants("idle") {
        bench_20mb(wants("idle"), !wants("idle"));
    }
}
