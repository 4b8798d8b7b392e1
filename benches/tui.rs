//! Console benchmarks (BENCHMARKS.md, "Console"):
//!
//! - (a) start to first frame of the real binary in tmux: the console writes the instant of
//!   its first frame to `PSD2_CONSOLE_TRACE_FIRST_FRAME`; compared with the instant the
//!   bench started `tmux new-session`, less tmux's own start (a pane that only runs `date`);
//! - (b) idle CPU of the real binary: utime + stime from `/proc/<pid>/stat` over 10 s;
//! - (c) peak memory after opening a 20 MB response: this bench binary re-runs itself as a
//!   child (`PSD2_TUI_BENCH_CHILD=memory`) that receives the body as the client does (bytes
//!   plus parsed JSON), builds the view, renders frames and prints `VmHWM`;
//! - (d) frame render time while scrolling that response: criterion, `App::render` into a
//!   200×60 `TestBackend` at several offsets.
//!
//! - (e) a history entry with a 50 MB request body (issue 8 item 12): a child process
//!   (`PSD2_TUI_BENCH_CHILD=history50`) records it in a history file (stored capped at
//!   `BODY_CAP`), loads the history screen, opens the entry (Enter) and presses 30 keys
//!   (focus, field moves, the body editor, typing), each followed by what the runner does
//!   (re-sign the request when it changed, draw a 200×60 frame); prints the slowest and
//!   median keystroke and `VmHWM`.
//!
//! `cargo bench --bench tui` runs all; `-- frame` only (d); `PSD2_TUI_BENCH_SKIP_PROCESS=1`
//! skips (a)–(c) and (e). (a) and (b) are skipped when tmux is missing.

// Tests and benches may unwrap: a panic is their failure report (Cargo.toml [lints]).
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::{Criterion, criterion_group};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use psd2_console::client::{Exchange, PreparedRequest};
use psd2_console::signing::SignatureInspection;
use psd2_console::tui::{App, Focus, ResponseView, StatusInfo};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const BODY_BYTES: usize = 20 << 20;

fn status() -> StatusInfo {
    StatusInfo {
        profile: "default".into(),
        base_url: "http://127.0.0.1:40123".into(),
        embedded: true,
        psu_id: None,
        psu_corporate_id: None,
        context: None,
        redirect_uri: "http://127.0.0.1:40111/callback".into(),
        listener_error: None,
        room: None,
    }
}

fn request() -> PreparedRequest {
    PreparedRequest {
        operation_id: "accounts.transactions".into(),
        params: Vec::new(),
        method: "GET".into(),
        url: "http://127.0.0.1:40123/v1/accounts/acc-1/transactions".into(),
        path_and_query: "/v1/accounts/acc-1/transactions".into(),
        headers: Vec::new(),
        body: Vec::new(),
        inspection: SignatureInspection::default(),
        signed_for: None,
    }
}

/// A compact transactions report of at least `target` bytes, written directly (no
/// `serde_json::Value`, so generating it does not raise the measured peak).
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
    s.push_str(r#"],"pending":[]},"_links":{"account":{"href":"/v1/accounts/acc-1"}}}"#);
    s.into_bytes()
}

/// The body as the client receives it: bytes plus what `client::send` parses of it
/// (`client::json_tree`: no tree above 1 MiB), or, with `PSD2_TUI_BENCH_NO_VALUE` set, a
/// placeholder instead of the parsed JSON (what the view itself costs).
fn exchange(body: Vec<u8>) -> Exchange {
    let json = if std::env::var_os("PSD2_TUI_BENCH_NO_VALUE").is_some() {
        Some(serde_json::Value::Null)
    } else {
        psd2_console::client::json_tree(&body)
    };
    Exchange {
        status: 200,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("content-length".into(), body.len().to_string()),
        ],
        body,
        elapsed: Duration::from_millis(900),
        json,
    }
}

/// An app showing the 20 MB response, focused, drawn once (viewport known).
fn app_with_big_response(terminal: &mut Terminal<TestBackend>) -> App {
    let req = request();
    let view = ResponseView::from_exchange_owned(
        "Account transactions",
        &req,
        exchange(report(BODY_BYTES)),
    );
    let mut app = App::new(status());
    app.begin_send(req);
    app.finish_send(Ok(view));
    for _ in 0..10 {
        if app.focus() == Focus::Response {
            break;
        }
        app.handle_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
    }
    terminal.draw(|f| app.render(f)).expect("draw");
    app
}

fn total_lines(app: &App) -> usize {
    match app.response() {
        psd2_console::tui::ResponseState::Done(v) => v.total_lines(),
        _ => 0,
    }
}

fn frame_bench(c: &mut Criterion) {
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    let mut app = app_with_big_response(&mut terminal);
    let total = total_lines(&app);
    let mut g = c.benchmark_group("frame_20mb");
    for (name, line) in [("top", 0), ("middle", total / 2), ("bottom", total)] {
        app.scroll_response_to(line);
        g.bench_function(name, |b| {
            b.iter(|| {
                terminal.draw(|f| black_box(&app).render(f)).expect("draw");
            })
        });
    }
    // Scrolling: each frame one page further (PgDn), as a held key does.
    app.scroll_response_to(0);
    g.bench_function("page_down_each_frame", |b| {
        b.iter(|| {
            app.handle_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
            terminal.draw(|f| app.render(f)).expect("draw");
        })
    });
    // A search with many matches highlighted on screen.
    for c in "/nok".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    app.scroll_response_to(total / 2);
    g.bench_function("middle_with_search", |b| {
        b.iter(|| {
            terminal.draw(|f| black_box(&app).render(f)).expect("draw");
        })
    });
    g.finish();
}

criterion_group!(frames, frame_bench);

// ---------------------------------------------------------------------------------------
// Processes

fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// (c) in the child: prints `VmHWM` and `VmRSS` in KiB after opening and scrolling.
fn memory_child() {
    let base = proc_status_kib("VmHWM:");
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    let t = Instant::now();
    let mut app = app_with_big_response(&mut terminal);
    let built = t.elapsed();
    let total = total_lines(&app);
    for k in 0..=20 {
        app.scroll_response_to(total * k / 20);
        terminal.draw(|f| app.render(f)).expect("draw");
    }
    let pretty = match app.response() {
        psd2_console::tui::ResponseState::Done(v) => v.body_lines().text().len(),
        _ => 0,
    };
    println!(
        "hwm_kib={} rss_kib={} (baseline hwm {base}) lines={total} pretty_bytes={pretty} open_ms={}",
        proc_status_kib("VmHWM:"),
        proc_status_kib("VmRSS:"),
        built.as_millis()
    );
}

/// (e) in a child: with `record`, signs a 50 MB payment body and records it in the history
/// file in `PSD2_TUI_BENCH_DIR` (prints the time); else, in a fresh process (its own peak
/// memory), opens that history, the entry, and presses 30 keys.
fn history50_child(record: bool) {
    use psd2_console::cert::generate::{TppCertSpec, credentials_of, generate_set};
    use psd2_console::client::history::History;
    use psd2_console::client::{RequestContext, prepare};
    use psd2_console::profile::{DEFAULT_PROFILE, ProfileSet, SessionState};
    use psd2_console::tui::Action;

    let creds = credentials_of(&generate_set(&TppCertSpec::default()).expect("generate"))
        .expect("credentials");
    let profiles = ProfileSet::load(None);
    let profile = profiles.get(DEFAULT_PROFILE).expect("built-in profile");
    let session = SessionState::default();
    let ctx = || RequestContext {
        profile,
        session: &session,
        credentials: &creds,
        base_url: "http://127.0.0.1:40123",
        redirect_uri: "http://127.0.0.1:40111/callback",
        now: SystemTime::now(),
    };
    let dir = std::path::PathBuf::from(std::env::var_os("PSD2_TUI_BENCH_DIR").expect("dir"));
    let history = History::open(&dir.join("history.sqlite3")).expect("history");
    if record {
        // The 50 MB payment body, recorded as the runner records a sent exchange.
        let mut body = String::with_capacity(50 << 20);
        body.push_str(r#"{"instructedAmount":{"currency":"NOK","amount":"1.00"},"creditorName":"Big","remittanceInformationUnstructured":""#);
        while body.len() < (50 << 20) - 2 {
            body.push_str("0123456789abcdef");
        }
        body.push_str("\"}");
        let op = psd2_console::xs2a::operations::find("payments.sepa.create").expect("op");
        let req = prepare(op, &[], Some(&body), &ctx()).expect("prepare 50 MB");
        drop(body);
        let ex = Exchange {
            status: 413,
            headers: vec![("content-type".into(), "application/json".into())],
            body: br#"{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR","text":"too large"}]}"#.to_vec(),
            elapsed: Duration::from_millis(40),
            json: None,
        };
        let t = Instant::now();
        history
            .record(DEFAULT_PROFILE, &[], &req, &ex)
            .expect("record");
        println!("record_ms={}", t.elapsed().as_millis());
        return;
    }
    let base = proc_status_kib("VmHWM:");
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    let mut app = App::new(status());
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    // What the runner does after a key: read the history, re-sign a changed request, draw.
    let mut step = |app: &mut App, k: KeyEvent| -> Duration {
        let t = Instant::now();
        if app.handle_key(k) == Action::LoadHistory {
            let q = app.history_query().to_string();
            app.set_history(&q, psd2_console::tui::history::load(&history, &q));
        }
        if let Some(spec) = app.take_prepare_request() {
            let r = prepare(spec.op, &spec.params, spec.body.as_deref(), &ctx())
                .map_err(|e| e.to_string());
            app.set_preview(r);
        }
        terminal.draw(|f| app.render(f)).expect("draw");
        t.elapsed()
    };
    let open_screen = step(&mut app, key(KeyCode::Char('3')));
    let open_entry = step(&mut app, key(KeyCode::Enter));
    // 30 keystrokes in the console with the entry open: focus the parameters, walk to the
    // body, open the editor, move and type in it, close it, scroll the response.
    let mut keys = vec![key(KeyCode::BackTab); 3];
    keys.extend([key(KeyCode::Down); 2]);
    keys.push(key(KeyCode::Enter)); // the body editor
    keys.extend([key(KeyCode::Down); 3]);
    keys.extend([key(KeyCode::End)]);
    keys.extend("typed text".chars().map(|c| key(KeyCode::Char(c))));
    keys.push(key(KeyCode::Esc)); // close the editor
    keys.extend([key(KeyCode::Tab); 3]); // to the response
    keys.extend([key(KeyCode::PageDown); 3]);
    keys.extend([key(KeyCode::Up); 3]);
    assert_eq!(keys.len(), 30);
    let mut times: Vec<f64> = keys
        .into_iter()
        .map(|k| step(&mut app, k).as_secs_f64() * 1000.0)
        .collect();
    if std::env::var_os("PSD2_TUI_BENCH_VERBOSE").is_some() {
        eprintln!("per key ms: {times:.1?}");
    }
    let slowest = times.iter().copied().fold(0.0, f64::max);
    let m = median(&mut times);
    println!(
        "open_history_ms={:.1} open_entry_ms={:.1} keys=30 slowest_key_ms={slowest:.2} median_key_ms={m:.2} hwm_kib={} rss_kib={} (hwm before the history screen {base})",
        open_screen.as_secs_f64() * 1000.0,
        open_entry.as_secs_f64() * 1000.0,
        proc_status_kib("VmHWM:"),
        proc_status_kib("VmRSS:"),
    );
}

fn tmux(socket: &str, args: &[&str]) -> std::process::Output {
    Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .expect("run tmux")
}

fn epoch_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Starts `script` in a new tmux server/session and waits until `trace` holds a time;
/// returns (ms from spawn to that time, the pane's pid).
fn spawn_and_wait(socket: &str, script: &str, trace: &Path) -> Option<(f64, u32)> {
    let _ = std::fs::remove_file(trace);
    let start = epoch_ns();
    let out = tmux(
        socket,
        &[
            "new-session",
            "-d",
            "-s",
            "bench",
            "-x",
            "200",
            "-y",
            "60",
            script,
        ],
    );
    if !out.status.success() {
        eprintln!("tmux: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(s) = std::fs::read_to_string(trace)
            && let Ok(ns) = s.trim().parse::<u128>()
        {
            let pid = String::from_utf8_lossy(
                &tmux(
                    socket,
                    &["display-message", "-p", "-t", "bench", "#{pane_pid}"],
                )
                .stdout,
            )
            .trim()
            .parse()
            .unwrap_or(0);
            return Some((ns.saturating_sub(start) as f64 / 1e6, pid));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    None
}

fn cpu_ticks(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the `(comm)`: state is field 3; utime 14, stime 15.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

fn clk_tck() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100)
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn process_benches() {
    // (c) peak memory, in a child process of its own.
    let exe = std::env::current_exe().expect("bench exe");
    // (e) the 50 MB history entry: recorded by one child, opened by another (its own peak
    // memory).
    let dir = tempfile::tempdir().expect("temp dir");
    for mode in ["history50-record", "history50"] {
        match Command::new(&exe)
            .env("PSD2_TUI_BENCH_CHILD", mode)
            .env("PSD2_TUI_BENCH_DIR", dir.path())
            .output()
        {
            Ok(o) => println!(
                "tui/{mode}: {}{}",
                String::from_utf8_lossy(&o.stdout).trim(),
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .filter(|l| l.contains("panicked"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            Err(e) => println!("tui/{mode}: cannot run the child: {e}"),
        }
    }
    for (name, no_value) in [("as_received", false), ("view_only", true)] {
        let mut cmd = Command::new(&exe);
        cmd.env("PSD2_TUI_BENCH_CHILD", "memory");
        if no_value {
            cmd.env("PSD2_TUI_BENCH_NO_VALUE", "1");
        }
        match cmd.output() {
            Ok(o) => println!(
                "tui/peak_memory_20mb/{name}: {}",
                String::from_utf8_lossy(&o.stdout).trim()
            ),
            Err(e) => println!("tui/peak_memory_20mb/{name}: cannot run the child: {e}"),
        }
    }

    if Command::new("tmux").arg("-V").output().is_err() {
        println!("tui/first_frame, tui/idle_cpu: skipped (tmux is not installed)");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_psd2-console");
    let home = tempfile::tempdir().expect("temp dir");
    let trace = home.path().join("first-frame");
    let socket = format!("psd2c-bench-{}", std::process::id());
    // tmux's own start: a pane that only writes the time.
    let mut base = Vec::new();
    for _ in 0..10 {
        let script = format!("exec sh -c 'date +%s%N > {}; sleep 60'", trace.display());
        if let Some((ms, _)) = spawn_and_wait(&socket, &script, &trace) {
            base.push(ms);
        }
        let _ = tmux(&socket, &["kill-server"]);
    }
    let script = format!(
        "exec env PSD2_CONSOLE_FREE_PORTS=1 PSD2_CONSOLE_HOME={} PSD2_CONSOLE_TRACE_FIRST_FRAME={} {}",
        quote(&home.path().join("home").display().to_string()),
        quote(&trace.display().to_string()),
        quote(bin)
    );
    // (a) first frame: the first start creates the data dir; then warm starts.
    let mut runs = Vec::new();
    let mut idle_pid = None;
    for i in 0..11 {
        let r = spawn_and_wait(&socket, &script, &trace);
        match r {
            Some((ms, pid)) => {
                if i == 0 {
                    println!(
                        "tui/first_frame_cold: {ms:.1} ms (spawn to first frame, first start)"
                    );
                } else {
                    runs.push(ms);
                }
                if i == 10 {
                    idle_pid = Some(pid);
                    break; // keep the last one running for (b)
                }
            }
            None => println!("tui/first_frame: run {i} gave no trace"),
        }
        let _ = tmux(&socket, &["kill-server"]);
        std::thread::sleep(Duration::from_millis(100));
    }
    if !runs.is_empty() {
        let b = if base.is_empty() {
            0.0
        } else {
            median(&mut base)
        };
        let m = median(&mut runs);
        println!(
            "tui/first_frame: median {m:.1} ms over {} warm starts (min {:.1}, max {:.1}); tmux alone {b:.1} ms → console {:.1} ms",
            runs.len(),
            runs[0],
            runs[runs.len() - 1],
            m - b
        );
    }
    // (b) idle CPU of the console started last, over 10 s.
    if let Some(pid) = idle_pid.filter(|p| *p > 0) {
        std::thread::sleep(Duration::from_secs(1));
        let a = cpu_ticks(pid);
        std::thread::sleep(Duration::from_secs(10));
        let b = cpu_ticks(pid);
        match (a, b) {
            (Some(a), Some(b)) => {
                let hz = clk_tck();
                let ms = (b - a) as f64 * 1000.0 / hz as f64;
                println!(
                    "tui/idle_cpu: {} ticks ({ms:.0} ms CPU) in 10 s = {:.2} % of one core (pid {pid}, {hz} ticks/s)",
                    b - a,
                    ms / 100.0
                );
            }
            _ => println!("tui/idle_cpu: /proc/{pid}/stat not readable"),
        }
    }
    let _ = tmux(&socket, &["kill-server"]);
}

fn main() {
    match std::env::var("PSD2_TUI_BENCH_CHILD").as_deref() {
        Ok("memory") => return memory_child(),
        Ok("history50-record") => return history50_child(true),
        Ok("history50") => return history50_child(false),
        _ => {}
    }
    frames();
    if std::env::var_os("PSD2_TUI_BENCH_SKIP_PROCESS").is_none()
        && std::env::args().skip(1).all(|a| a.starts_with('-'))
    {
        process_benches();
    }
    Criterion::default().configure_from_args().final_summary();
}
