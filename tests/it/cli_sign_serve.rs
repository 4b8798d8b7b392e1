//! `psd2-console sign` output is accepted by `psd2-console sandbox serve`; the same request
//! with a changed body, a changed signed header, a Date 61 s off or another certificate is
//! rejected with the matching code and an explanation. Real binary, real HTTP on loopback.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use psd2_console::xs2a::error::ErrorBody;

use crate::common::cli::{BIN, Server, free_port, serve_in_memory, wait_listening};

fn cert_new(dir: &Path, name: &str) {
    let stdout = crate::common::cli::cert_new(dir, name);
    assert!(stdout.contains("keyId:       SN="), "{stdout}");
}

/// Runs `psd2-console sign` and returns the headers it printed.
fn sign(
    dir: &Path,
    name: &str,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: Option<&[u8]>,
) -> Vec<(String, String)> {
    let mut cmd = Command::new(BIN);
    cmd.arg("sign")
        .arg("--cert")
        .arg(dir.join(format!("{name}.pem")))
        .arg("--key")
        .arg(dir.join(format!("{name}.key")))
        .args(["--method", method, "--path", path]);
    for (n, v) in headers {
        cmd.arg("--header").arg(format!("{n}: {v}"));
    }
    if let Some(b) = body {
        let f = dir.join("body.json");
        std::fs::write(&f, b).unwrap();
        cmd.arg("--body-file").arg(&f);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (n, v) = l.split_once(": ").expect("Name: value");
            (n.to_string(), v.to_string())
        })
        .collect()
}

async fn send(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
) -> (u16, serde_json::Value) {
    let client = reqwest::Client::new();
    let mut rb = client.request(method.parse().unwrap(), format!("{base}{path}"));
    for (n, v) in headers {
        rb = rb.header(n, v);
    }
    if let Some(b) = body {
        rb = rb.body(b.to_vec());
    }
    let resp = rb.send().await.unwrap();
    let status = resp.status().as_u16();
    let json = resp.json().await.unwrap_or(serde_json::Value::Null);
    (status, json)
}

fn code_and_text(v: &serde_json::Value) -> (String, String) {
    let e: ErrorBody = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"));
    let m = &e.tpp_messages[0];
    (m.code.clone(), m.text.clone().unwrap_or_default())
}

#[tokio::test]
async fn signed_requests_are_accepted_and_tampered_ones_rejected_with_reasons() {
    let tmp = tempfile::tempdir().unwrap();
    cert_new(tmp.path(), "tpp");
    cert_new(tmp.path(), "other");
    let (_server, base) = serve_in_memory();

    let request_headers = |id: &str| {
        vec![
            ("X-Request-ID", id.to_string()),
            ("TPP-Redirect-URI", "http://127.0.0.1:9/cb".to_string()),
        ]
    };
    let path = "/v1/sandbox/customers?withAccounts=true&withAgreements=false";
    let mk = |extra: Vec<(String, String)>, base_headers: &[(&str, String)]| {
        let mut all: Vec<(String, String)> = base_headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        all.extend(extra);
        all
    };

    // Accepted as signed.
    let hs = request_headers("11111111-1111-4111-8111-111111111111");
    let added = sign(tmp.path(), "tpp", "GET", path, &hs, None);
    let names: Vec<&str> = added.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Date", "TPP-Signature-Certificate", "Signature"]);
    let ok = mk(added.clone(), &hs);
    let (status, body) = send(&base, "GET", path, &ok, None).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.as_array().is_some_and(|a| !a.is_empty()), "{body}");

    // A changed signed header.
    let mut changed = ok.clone();
    changed[0].1 = "22222222-2222-4222-8222-222222222222".into();
    let (status, body) = send(&base, "GET", path, &changed, None).await;
    let (code, text) = code_and_text(&body);
    assert_eq!(
        (status, code.as_str()),
        (400, "SIGNATURE_INVALID"),
        "{text}"
    );
    assert!(text.contains("x-request-id: 22222222"), "{text}");

    // Another certificate.
    let other = sign(tmp.path(), "other", "GET", path, &hs, None);
    let other_cert = other
        .iter()
        .find(|(n, _)| n == "TPP-Signature-Certificate")
        .unwrap()
        .1
        .clone();
    let mut swapped = ok.clone();
    for h in swapped.iter_mut() {
        if h.0 == "TPP-Signature-Certificate" {
            h.1 = other_cert.clone();
        }
    }
    let (status, body) = send(&base, "GET", path, &swapped, None).await;
    let (code, text) = code_and_text(&body);
    assert_eq!(
        (status, code.as_str()),
        (400, "PARAMETER_NOT_CONSISTENT"),
        "{text}"
    );
    assert!(text.contains("keyId serial mismatch"), "{text}");

    // A Date 61 s off.
    let old = psd2_console::signing::imf_fixdate(SystemTime::now() - Duration::from_secs(61));
    let mut hs_old = request_headers("33333333-3333-4333-8333-333333333333");
    hs_old.push(("Date", old.clone()));
    let added_old = sign(tmp.path(), "tpp", "GET", path, &hs_old, None);
    assert!(
        !added_old.iter().any(|(n, _)| n == "Date"),
        "a given Date is kept"
    );
    let (status, body) = send(&base, "GET", path, &mk(added_old, &hs_old), None).await;
    let (code, text) = code_and_text(&body);
    assert_eq!(
        (status, code.as_str()),
        (400, "TIMESTAMP_INVALID"),
        "{text}"
    );
    assert!(text.contains(&old) && text.contains("60 s"), "{text}");

    // A changed body.
    let body_bytes = br#"{"customerName":"Kari Nordmann"}"#;
    let post_path = "/v1/sandbox/customers";
    let hs_post = request_headers("44444444-4444-4444-8444-444444444444");
    let added_post = sign(
        tmp.path(),
        "tpp",
        "POST",
        post_path,
        &hs_post,
        Some(body_bytes),
    );
    assert!(
        added_post
            .iter()
            .any(|(n, v)| n == "Digest" && v.starts_with("SHA-256="))
    );
    let mut post_headers = mk(added_post, &hs_post);
    post_headers.push(("Content-Type".into(), "application/json".into()));
    let tampered = br#"{"customerName":"Kari Nordmenn"}"#;
    let (status, body) = send(&base, "POST", post_path, &post_headers, Some(tampered)).await;
    let (code, text) = code_and_text(&body);
    assert_eq!((status, code.as_str()), (400, "FORMAT_ERROR"), "{text}");
    assert!(
        text.starts_with("digest mismatch: header SHA-256="),
        "{text}"
    );
    assert!(text.contains("body hashes to SHA-256="), "{text}");

    // Unsigned.
    let (status, body) = send(&base, "GET", path, &mk(vec![], &hs), None).await;
    let (code, _) = code_and_text(&body);
    assert_eq!((status, code.as_str()), (400, "SIGNATURE_MISSING"));
}

#[test]
fn sign_prints_one_line_certificate_and_digest() {
    let tmp = tempfile::tempdir().unwrap();
    cert_new(tmp.path(), "tpp");
    let added = sign(
        tmp.path(),
        "tpp",
        "post",
        "/v1/payments/norwegian-domestic-credit-transfers",
        &[("X-Request-ID", "abc".to_string())],
        Some(b"{\"a\":\"1\"}"),
    );
    let names: Vec<&str> = added.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["Date", "Digest", "TPP-Signature-Certificate", "Signature"]
    );
    let cert = &added[2].1;
    assert!(!cert.contains(' ') && !cert.contains("BEGIN"));
    psd2_console::cert::Certificate::from_header_value(cert).unwrap();
    assert!(
        added[3].1.contains("headers=\"date digest x-request-id\""),
        "{}",
        added[3].1
    );
    // key files are private
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(tmp.path().join("tpp.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

/// `sandbox serve` with `args` and `rust_log` (unset when `None`), stderr into `log`.
fn start_logging_server(args: &[&str], rust_log: Option<&str>, log: &Path) -> (Server, String) {
    let port = free_port();
    let mut cmd = Command::new(BIN);
    cmd.args(["sandbox", "serve", "--in-memory", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap());
    match rust_log {
        Some(v) => cmd.env("RUST_LOG", v),
        None => cmd.env_remove("RUST_LOG"),
    };
    let server = Server(cmd.spawn().expect("start sandbox serve"));
    wait_listening(port, Duration::from_secs(60));
    (server, format!("http://127.0.0.1:{port}"))
}

/// The access-log lines of a stopped server's stderr.
fn access_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("psd2_console::access"))
        .map(str::to_string)
        .collect()
}

/// Issue 20, finding 6: the text access log quotes and escapes every text value, so an
/// `X-Request-ID` of `abc status=200` (or with a quote) cannot add or forge a field for a
/// logfmt reader.
#[tokio::test]
async fn text_access_log_quotes_every_value_so_a_request_id_cannot_forge_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("text.log");
    let (server, base) = start_logging_server(&[], Some("info"), &log);
    let hostile = [("X-Request-ID".to_string(), "abc status=200".to_string())];
    let (status, _) = send(&base, "GET", "/v1/accounts", &hostile, None).await;
    assert_ne!(status, 200);
    let quote = [(
        "X-Request-ID".to_string(),
        "x\" status=200 code=\"-".to_string(),
    )];
    send(&base, "GET", "/v1/accounts", &quote, None).await;
    server.stop();
    let lines = access_lines(&log);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines[0].contains("request_id=\"abc status=200\""),
        "quoted: {}",
        lines[0]
    );
    assert!(
        lines[1].contains(r#"request_id="x\" status=200 code=\"-""#),
        "escaped: {}",
        lines[1]
    );
    for l in &lines {
        // Exactly one bare `status=` field: the real one (401), outside any quotes.
        let fields = logfmt_keys(l);
        assert_eq!(
            fields.iter().filter(|k| k.as_str() == "status").count(),
            1,
            "one status field in {l}: {fields:?}"
        );
        assert!(l.contains(&format!("status={status}")), "{l}");
    }
}

/// The keys of a logfmt line (`key=value` or `key="quoted \" value"` pairs).
fn logfmt_keys(line: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut chars = line.chars().peekable();
    let mut word = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                // Skip a quoted value with its escapes.
                while let Some(q) = chars.next() {
                    if q == '\\' {
                        chars.next();
                    } else if q == '"' {
                        break;
                    }
                }
                word.clear();
            }
            '=' => {
                keys.push(std::mem::take(&mut word));
            }
            ' ' => word.clear(),
            c => word.push(c),
        }
    }
    keys
}

/// Issue 9 item 15: `sandbox serve` logs one line per request to stderr, with method, path,
/// status, Berlin Group code, latency, X-Request-ID and the verification step that failed,
/// as JSON (`--log-format json`) or text, filtered by RUST_LOG.
#[tokio::test]
async fn serve_logs_one_line_per_request_as_json_or_text_filtered_by_rust_log() {
    let tmp = tempfile::tempdir().unwrap();
    cert_new(tmp.path(), "tpp");
    let path = "/v1/sandbox/customers";
    let hs = vec![
        (
            "X-Request-ID",
            "33333333-3333-4333-8333-333333333333".to_string(),
        ),
        ("TPP-Redirect-URI", "http://127.0.0.1:9/cb".to_string()),
    ];
    let signed: Vec<(String, String)> = hs
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .chain(sign(tmp.path(), "tpp", "GET", path, &hs, None))
        .collect();
    let mut tampered = signed.clone();
    tampered[0].1 = "44444444-4444-4444-8444-444444444444".into();

    // JSON, default filter.
    let log = tmp.path().join("json.log");
    let (server, base) = start_logging_server(&["--log-format", "json"], None, &log);
    let (ok_status, _) = send(&base, "GET", path, &signed, None).await;
    assert_eq!(ok_status, 200);
    let (bad_status, bad_body) = send(&base, "GET", path, &tampered, None).await;
    let (bad_code, _) = code_and_text(&bad_body);
    let (missing_status, _) = send(&base, "GET", "/v1/accounts?secret=1", &[], None).await;
    server.stop();
    let lines = access_lines(&log);
    assert_eq!(lines.len(), 3, "one line per request: {lines:#?}");
    let events: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let f = |i: usize| events[i]["fields"].clone();
    assert_eq!(events[0]["level"], "INFO");
    assert_eq!(f(0)["method"], "GET");
    assert_eq!(f(0)["path"], path);
    assert_eq!(f(0)["status"], 200);
    assert_eq!(f(0)["code"], "-");
    assert_eq!(f(0)["verify"], "-");
    assert_eq!(f(0)["request_id"], "33333333-3333-4333-8333-333333333333");
    assert!(f(0)["latency_us"].as_u64().is_some(), "{}", lines[0]);
    assert_eq!(f(1)["status"], bad_status);
    assert_eq!(f(1)["code"], bad_code.as_str());
    assert_eq!(f(1)["verify"], "SignatureInvalid");
    assert_eq!(f(1)["request_id"], "44444444-4444-4444-8444-444444444444");
    assert_eq!(f(2)["status"], missing_status);
    assert_eq!(f(2)["verify"], "SignatureMissing");
    assert_eq!(f(2)["request_id"], "-");
    assert!(
        !lines[2].contains("secret"),
        "no query in the log: {}",
        lines[2]
    );

    // Text.
    let log = tmp.path().join("text.log");
    let (server, base) = start_logging_server(&[], Some("info"), &log);
    send(&base, "GET", path, &tampered, None).await;
    server.stop();
    let lines = access_lines(&log);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    for part in [
        "method=\"GET\"",
        "path=\"/v1/sandbox/customers\" ",
        &format!("status={bad_status}"),
        &format!("code=\"{bad_code}\""),
        "request_id=\"44444444-4444-4444-8444-444444444444\" ",
        "verify=\"SignatureInvalid\"",
        "latency_us=",
    ] {
        assert!(lines[0].contains(part), "{part} in {}", lines[0]);
    }

    // RUST_LOG filters.
    let log = tmp.path().join("off.log");
    let (server, base) = start_logging_server(&[], Some("psd2_console::access=off"), &log);
    send(&base, "GET", path, &signed, None).await;
    server.stop();
    assert!(access_lines(&log).is_empty());
}

/// Issue 21 ("graceful shutdown drains requests on SIGTERM"): `sandbox serve` on SIGTERM stops
/// accepting, lets a request under way finish with a complete answer, closes an idle
/// keep-alive connection, and exits 0. The request under way is one whose body is still
/// arriving: the client sends half of it, the signal comes, then the rest.
#[test]
fn sigterm_drains_the_request_under_way_and_exits_zero() {
    use std::io::{Read, Write};
    let port = free_port();
    let mut child = Command::new(BIN)
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .args([
            "sandbox",
            "serve",
            "--in-memory",
            "--addr",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = crate::common::cli::StderrLines::of(&mut child);
    wait_listening(port, Duration::from_secs(60));
    // An idle keep-alive connection: one answered request, then nothing.
    let mut idle = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        idle.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_string)
        })
        .unwrap()
        .parse()
        .unwrap();
    let mut body = vec![0u8; length];
    idle.read_exact(&mut body).unwrap();
    // The request under way: headers and half of its 20-byte body.
    let mut busy = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    busy.write_all(
        b"POST /v1/consents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"access\": ",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    while !stderr.next().contains("SIGTERM") {}
    // New connections are refused while the request under way is still served.
    let refused = (0..50).any(|_| {
        let r = std::net::TcpStream::connect(("127.0.0.1", port)).is_err();
        if !r {
            std::thread::sleep(Duration::from_millis(50));
        }
        r
    });
    assert!(refused, "the listener is closed after SIGTERM");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the server waits for the request under way"
    );
    busy.write_all(b"{\"a\": 1}}").unwrap();
    let mut answer = String::new();
    busy.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    busy.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 4"), "{answer}");
    assert!(
        answer.contains("tppMessages"),
        "a complete answer: {answer}"
    );
    // The idle connection was closed by the server (end of stream, no answer).
    idle.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut rest = Vec::new();
    idle.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{:?}", stderr.seen);
}
