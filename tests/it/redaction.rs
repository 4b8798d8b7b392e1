//! Redaction: after a full flow against the embedded sandbox (list accounts → 401 → SCA in
//! the sandbox's HTML pages → accounts, balances, a payment), no private key bytes are
//! anywhere outside the key files, and no Signature value sent is in the history database
//! (raw bytes, WAL and SHM included), a HAR export, or the console's output (stdout and
//! stderr of the CLI commands run on the same data dir), nor in the log of a real `sandbox serve`
//! (`RUST_LOG=trace`, JSON and text) the flow's signed requests are replayed to.
//!
//! Private key bytes looked for: every line of the PEM bodies, the DER bytes (in 24-byte
//! pieces) and the base64 of the DER (in 32-character pieces, standard and URL-safe
//! alphabets), for every `*.key` file under the data dir (the TPP key and the test CA key).
//! Signature values looked for: every `signature="..."` value of every request sent (taken
//! from the `PreparedRequest`s), and, generically, any `signature="` followed by a long
//! base64 run, so that requests sent by the CLI are covered too.
//!
//! The exception is a cURL export: it is signed afresh when exported (new Date and
//! signature), so that it runs as-is; it is still checked for key bytes.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use common::payments::{KARI, domestic, first_bban};
use common::sca::{complete, tick_all};
use psd2_console::client::PreparedRequest;
use psd2_console::client::export::har;
use psd2_console::client::history::REDACTED;
use psd2_console::profile::DEFAULT_PROFILE;
use psd2_console::xs2a::operations;

const BIN: &str = env!("CARGO_BIN_EXE_psd2-console");

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Byte strings that would show a private key: PEM body lines, DER pieces, base64 pieces.
fn key_needles(key_files: &[PathBuf]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for f in key_files {
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name == psd2_console::embedded::INSTANCE_KEY_FILE {
            // The identity check's HMAC key (hex, not PEM): a secret of its own, never sent.
            let hex = text.trim();
            assert!(hex.len() >= 32, "{} holds a key", f.display());
            out.push((format!("{name}: the key"), hex.as_bytes().to_vec()));
            out.push((
                format!("{name}: its first half"),
                hex.as_bytes()[..hex.len() / 2].to_vec(),
            ));
            continue;
        }
        assert!(text.contains("PRIVATE KEY"), "{} is a PEM key", f.display());
        for line in text
            .lines()
            .filter(|l| !l.starts_with("-----") && l.len() >= 32)
        {
            out.push((format!("{name}: PEM line"), line.as_bytes().to_vec()));
        }
        let der = pem::parse(text.as_bytes()).unwrap().into_contents();
        assert!(der.len() > 100);
        for (i, piece) in der.chunks(24).enumerate().filter(|(_, c)| c.len() == 24) {
            out.push((format!("{name}: DER bytes {}", i * 24), piece.to_vec()));
        }
        for (label, b64) in [
            (
                "base64",
                base64::engine::general_purpose::STANDARD.encode(&der),
            ),
            (
                "base64url",
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&der),
            ),
        ] {
            for (i, piece) in b64.as_bytes().chunks(32).enumerate() {
                if piece.len() == 32 {
                    out.push((
                        format!("{name}: {label} of DER at {}", i * 32),
                        piece.to_vec(),
                    ));
                }
            }
        }
    }
    out
}

/// The public material under `home`: every certificate file (PEM text, DER, and base64 of
/// the DER as in `TPP-Signature-Certificate`), joined.
fn public_corpus(home: &Path, key_files: &[PathBuf]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in files_under(home) {
        if key_files.contains(&f) || f.extension().is_none_or(|e| e != "pem") {
            continue;
        }
        let text = std::fs::read(&f).unwrap();
        for block in pem::parse_many(&text).unwrap_or_default() {
            if block.tag() == "CERTIFICATE" {
                let der = block.contents();
                out.extend_from_slice(der);
                out.push(0);
                out.extend_from_slice(
                    base64::engine::general_purpose::STANDARD
                        .encode(der)
                        .as_bytes(),
                );
                out.push(0);
            }
        }
        out.extend_from_slice(&text);
        out.push(0);
    }
    out
}

/// The base64 value of `signature="..."` in a Signature header.
fn signature_value(req: &PreparedRequest) -> String {
    let h = req.header("Signature").expect("signed");
    let v = h.split("signature=\"").nth(1).unwrap();
    v[..v.find('"').unwrap()].to_string()
}

/// Whether `hay` holds `signature="` followed by 40 or more base64 characters (any
/// Signature value that was not redacted).
fn has_signature_value(hay: &[u8]) -> bool {
    let needle = b"signature=\"";
    let mut from = 0;
    while let Some(i) = hay[from..]
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
    {
        let start = from + i + needle.len();
        let run = hay[start..]
            .iter()
            .take_while(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_')
            })
            .count();
        if run >= 40 {
            return true;
        }
        from = start;
    }
    false
}

/// Runs the CLI on the data dir and returns stdout + stderr.
fn cli(home: &Path, args: &[&str]) -> (bool, Vec<u8>) {
    let out = Command::new(BIN)
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .env("PSD2_CONSOLE_HOME", home)
        .env("RUST_LOG", "trace")
        .args(args)
        .output()
        .unwrap();
    let mut all = out.stdout;
    all.extend_from_slice(&out.stderr);
    (out.status.success(), all)
}

/// Runs `sandbox serve --log-format format` with `RUST_LOG=trace` on the data dir, replays
/// the signed requests of the flow to it (their Signature, certificate and body as sent) and
/// returns its stderr, which must hold one access-log line per request.
async fn serve_log(home: &Path, format: &str, sent: &[PreparedRequest]) -> (String, Vec<u8>) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = home.join(format!("serve-{format}.stderr"));
    let child = Command::new(BIN)
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .env("PSD2_CONSOLE_HOME", home)
        .env("RUST_LOG", "trace")
        .args([
            "sandbox",
            "serve",
            "--in-memory",
            "--log-format",
            format,
            "--addr",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "sandbox serve did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let http = reqwest::Client::new();
    for req in sent {
        let mut rb = http.request(
            req.method.parse().unwrap(),
            format!("http://127.0.0.1:{port}{}", req.path_and_query),
        );
        for (n, v) in &req.headers {
            rb = rb.header(n, v);
        }
        // Whatever the answer (the replayed Date may be stale), the request was logged.
        rb.body(req.body.clone()).send().await.unwrap();
    }
    // Stopped as an operator stops it (SIGTERM), so that every line it logged is written
    // (the access-log lines go out in batches: a killed server may not have written the
    // last ones).
    crate::common::cli::Server(child).stop();
    let out = std::fs::read(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    let text = String::from_utf8_lossy(&out);
    assert_eq!(
        text.matches("psd2_console::access").count(),
        sent.len(),
        "one access-log line per request: {text}"
    );
    (
        format!("stderr of sandbox serve --log-format {format}"),
        out,
    )
}

/// Checks every file under `home` (key files aside) and each `(label, bytes)` of `extra`.
fn scan(
    home: &Path,
    key_files: &[PathBuf],
    keys: &[(String, Vec<u8>)],
    signatures: &[String],
    extra: &[(String, Vec<u8>)],
) -> usize {
    let mut checked = 0;
    let files: Vec<(String, Vec<u8>, bool)> = files_under(home)
        .into_iter()
        .filter(|f| !key_files.contains(f))
        .map(|f| {
            let curl = f.extension().is_some_and(|e| e == "sh")
                && f.parent().is_some_and(|p| p.ends_with("exports"));
            (f.display().to_string(), std::fs::read(&f).unwrap(), curl)
        })
        .chain(extra.iter().map(|(l, b)| (l.clone(), b.clone(), false)))
        .collect();
    for (label, bytes, curl_export) in &files {
        checked += 1;
        for (what, needle) in keys {
            assert!(!contains(bytes, needle), "{what} found in {label}");
        }
        if *curl_export {
            continue;
        }
        for s in signatures {
            assert!(
                !contains(bytes, s.as_bytes()) && !contains(bytes, &s.as_bytes()[..40]),
                "a Signature value sent is in {label}"
            );
        }
        assert!(
            !has_signature_value(bytes),
            "{label} holds a Signature value"
        );
    }
    checked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_private_key_bytes_or_signature_values_outside_their_place_after_a_full_flow() {
    let (home, paths, mut engine) = crate::common::default_engine().await;
    let mut sent: Vec<PreparedRequest> = Vec::new();

    // List accounts: 401 with a scaRedirect.
    let list = operations::find("accounts.list").unwrap();
    let req = engine.prepare(list, &[], None).unwrap();
    let first = engine.send(&req).await.unwrap();
    sent.push(req);
    assert_eq!(first.status, 401, "{}", first.pretty_body());
    let href = first.sca_redirect().expect("scaRedirect");

    // SCA in the sandbox's pages; the browser lands on the console's redirect listener.
    let to_tpp = complete(&href, KARI, "PRIVATE", tick_all, "Approve").await;
    let landing = common::browser().get(&to_tpp).send().await.unwrap();
    assert_eq!(landing.status(), 200);
    let cb = engine.next_callback().await.unwrap();
    engine.apply_callback(&cb).unwrap();

    // Accounts, balances, a payment.
    let req = engine.prepare(list, &[], None).unwrap();
    let accounts = engine.send(&req).await.unwrap();
    sent.push(req);
    assert_eq!(accounts.status, 200, "{}", accounts.pretty_body());
    let id = accounts.json.as_ref().unwrap()["accounts"][0]["resourceId"]
        .as_str()
        .unwrap()
        .to_string();
    let balances = operations::find("accounts.balances").unwrap();
    let req = engine
        .prepare(balances, &[("account-id".into(), id)], None)
        .unwrap();
    let b = engine.send(&req).await.unwrap();
    sent.push(req);
    assert_eq!(b.status, 200, "{}", b.pretty_body());
    let pay = operations::find("payments.domestic.create").unwrap();
    let body = domestic(&first_bban(KARI), "120.00", "redaction test").to_string();
    let req = engine.prepare(pay, &[], Some(&body)).unwrap();
    let p = engine.send(&req).await.unwrap();
    sent.push(req);
    assert!(p.is_success(), "{}", p.pretty_body());

    let signatures: Vec<String> = sent.iter().map(signature_value).collect();
    assert!(signatures.iter().all(|s| s.len() >= 40));

    // The history holds every exchange, Signature redacted.
    let entries = {
        let h = engine.history.as_ref().unwrap().lock().unwrap();
        h.list(None, 100).unwrap()
    };
    assert_eq!(entries.len(), sent.len());
    for e in &entries {
        let sig = e
            .request_headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("Signature"))
            .unwrap();
        assert_eq!(sig.1, REDACTED);
    }

    // A HAR export to a file, and a cURL export (signed afresh) to the exports dir.
    let har_text = serde_json::to_string_pretty(&har(&entries)).unwrap();
    std::fs::write(home.path().join("export.har"), &har_text).unwrap();
    let curl_file = psd2_console::tui::history::export_curl(&engine, &entries[0]).unwrap();
    let curl_text = std::fs::read_to_string(&curl_file).unwrap();
    assert!(
        has_signature_value(curl_text.as_bytes()),
        "the cURL export carries a fresh signature"
    );

    let key_files: Vec<PathBuf> = files_under(home.path())
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "key"))
        .collect();
    assert!(
        key_files.len() >= 2,
        "the TPP key and the CA key: {key_files:?}"
    );
    #[cfg(unix)]
    for k in &key_files {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(k).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", k.display());
    }
    // A key holds its public part too (an RSA key its modulus), which is rightly in the
    // certificates and in TPP-Signature-Certificate: pieces found in public data are not
    // secrets. What stays (the private exponent, primes, CRT values) must be most of it.
    let all_keys = key_needles(&key_files);
    let public = public_corpus(home.path(), &key_files);
    let keys: Vec<(String, Vec<u8>)> = all_keys
        .iter()
        .filter(|(_, n)| !contains(&public, n))
        .cloned()
        .collect();
    assert!(
        keys.len() * 3 > all_keys.len() * 2,
        "{} of {} key pieces are private",
        keys.len(),
        all_keys.len()
    );

    // While the engine runs the history's WAL holds the latest pages: scan now too.
    let wal = paths.data.join("history.sqlite3-wal");
    assert!(
        paths.data.join("history.sqlite3").exists(),
        "the history database is in the data dir"
    );
    let n = scan(home.path(), &key_files, &keys, &signatures, &[]);
    assert!(n >= 4, "scanned {n} files");
    let wal_seen = wal.exists();
    engine.shutdown().await;

    // The CLI on the same data dir: its output (stdout and stderr), with tracing on.
    let mut logs = Vec::new();
    for args in [
        &["history"][..],
        &["export", "--format", "har", "last"][..],
        &["send", "accounts.list"][..],
        &["profile", "show", DEFAULT_PROFILE][..],
        &["history", "--search", "payments"][..],
    ] {
        let (ok, out) = cli(home.path(), args);
        assert!(ok, "{args:?}: {}", String::from_utf8_lossy(&out));
        logs.push((format!("output of {args:?}"), out));
    }
    // A real `sandbox serve` logging everything (RUST_LOG=trace), as JSON and as text, while
    // the CLI sends signed requests to it: its stderr is scanned too.
    for format in ["json", "text"] {
        logs.push(serve_log(home.path(), format, &sent).await);
    }
    let har_out = &logs[1].1;
    assert!(
        String::from_utf8_lossy(har_out).contains(REDACTED),
        "the HAR export shows the redaction"
    );
    let n = scan(home.path(), &key_files, &keys, &signatures, &logs);
    assert!(n >= 9, "scanned {n} files and outputs");
    eprintln!(
        "scanned {n} files and outputs for {} key pieces and {} Signature values (WAL seen: {wal_seen})",
        keys.len(),
        signatures.len()
    );
}
