//! The real binary's memory (issue 23): a 20 MB JSON answer from a loopback server, shown
//! by the console as a user gets it (sent, recorded, linted, viewed). Checked from
//! `/proc/<pid>`, never from timings:
//!
//! - the anonymous peak (`VmHWM` less the file pages resident afterwards: the binary's own
//!   pages are 30+ MiB in a debug build) stays under 100 MiB: the lint reads a large
//!   answer element by element instead of as one JSON tree (it was about 320 MiB);
//! - no transparent huge page backs the process (`AnonHugePages` 0 where the kernel gives
//!   them on request, `madvise` mode): mimalloc used to ask for them, so each thread's first
//!   allocation made 2 MiB resident, and after an idle pause the memory it had given back
//!   was faulted in again as huge pages, with the kernel compacting memory synchronously
//!   (`defrag` = `madvise`) before the first send after idle could go on.
//!
//! Skipped (with a message) when tmux is not installed.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;

use common::tmux::{Tmux, ready};

/// A compact transaction report of at least `target` bytes.
fn report(target: usize) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(target + 4096);
    s.push_str(r#"{"account":{"bban":"12345678903"},"transactions":{"booked":["#);
    let mut i = 0usize;
    while s.len() < target {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            r#"{{"transactionId":"tx-{i:07}","bookingDate":"2026-01-15","valueDate":"2026-01-15","transactionAmount":{{"currency":"NOK","amount":"-{}.{:02}"}},"creditorName":"Rema 1000","remittanceInformationUnstructured":"Card payment {i}"}}"#,
            i % 9999,
            i % 100
        );
        i += 1;
    }
    s.push_str(r#"],"pending":[],"_links":{"account":{"href":"/v1/accounts/acc-1"}}}}"#);
    s.into_bytes()
}

/// Answers every request on `conn` with `body` (keep-alive), echoing `X-Request-ID`.
fn answer(conn: TcpStream, body: &[u8]) {
    let mut out = conn.try_clone().unwrap();
    let mut rd = BufReader::new(conn);
    loop {
        let (mut id, mut length) = (String::new(), 0usize);
        let mut first = true;
        loop {
            let mut h = String::new();
            if rd.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() && !first {
                break;
            }
            first = false;
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
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nX-Request-ID: {id}\r\n\r\n",
            body.len()
        );
        if out.write_all(head.as_bytes()).is_err() || out.write_all(body).is_err() {
            return;
        }
    }
}

/// KiB of `field` in `/proc/<pid>/<file>`.
fn kib(pid: &str, file: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The console's pid: the child of the pane's shell.
fn console_pid(t: &Tmux) -> String {
    let shell = t.display("#{pane_pid}");
    let children =
        std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap_or_default();
    children
        .split_whitespace()
        .next()
        .unwrap_or_else(|| panic!("no console under the pane's shell {shell}"))
        .to_string()
}

#[test]
fn a_20_mb_answer_peaks_under_100_mib_anonymous_and_no_huge_page_backs_the_console() {
    if !ready() {
        return;
    }
    let body = report(20 << 20);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let body = body.clone();
            std::thread::spawn(move || answer(conn, &body));
        }
    });
    let home = tempfile::tempdir().unwrap();
    let certs = home.path().join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    let made = Command::new(env!("CARGO_BIN_EXE_psd2-console"))
        .args(["cert", "new", "--dir"])
        .arg(&certs)
        .env("PSD2_CONSOLE_HOME", home.path())
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let profiles = home.path().join("config/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(
        profiles.join("big.toml"),
        format!(
            "name = \"big\"\ntarget = \"http://127.0.0.1:{port}\"\ncertificate = {:?}\nkey = {:?}\nroles = [\"PSP_AI\", \"PSP_PI\"]\ntpp_redirect_uri = \"http://127.0.0.1:8089/callback\"\n",
            certs.join("tpp.pem").display().to_string(),
            certs.join("tpp.key").display().to_string(),
        ),
    )
    .unwrap();
    let t = Tmux::start_in("memory", home, &["--profile", "big"]);
    t.wait_for_console();
    let pid = console_pid(&t);
    t.keys(&["s"]);
    t.wait_for("the 20 MB answer", |s| {
        s.contains("200 OK") && s.contains("20.0 MiB") && s.contains("\"transactionId\"")
    });
    let hwm = kib(&pid, "status", "VmHWM:");
    let file = kib(&pid, "status", "RssFile:");
    let anon_peak = hwm.saturating_sub(file);
    assert!(
        anon_peak < 100 * 1024,
        "anonymous peak {anon_peak} KiB (VmHWM {hwm} KiB, file pages {file} KiB): over 100 MiB"
    );
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if thp.contains("[madvise]") {
        let huge = kib(&pid, "smaps_rollup", "AnonHugePages:");
        assert_eq!(
            huge, 0,
            "{huge} KiB of the console in transparent huge pages"
        );
    } else {
        eprintln!("transparent huge pages: {thp:?}, not checked (only `madvise` mode is)");
    }
    t.quit_and_check_restored();
}
