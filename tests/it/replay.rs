//! Faithful replay (`send --as-given FILE`, `import FILE --as-given --send`): a recorded
//! request reaches the embedded sandbox over real HTTP with its own headers and its exact
//! body bytes, re-signed with the profile's test certificate; `--keep-signature` sends it
//! byte for byte and so reproduces the sandbox's answer to a stale `Date`; the history
//! records the profile, the source and the changed headers.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use psd2_console::client::RequestContext;
use psd2_console::client::history::{History, REDACTED, ReplayInfo};
use psd2_console::client::recorded::parse_raw_http;
use psd2_console::client::replay::{SignatureMode, prepare_as_given, send_replay};
use psd2_console::profile::{DEFAULT_PROFILE, Paths};
use psd2_console::signing::{SignOptions, digest_header_value, sign_request};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::cli::{run, run_headless};
use crate::common::payments::{DOMESTIC, KARI, domestic, first_bban};
use crate::common::sandbox::tpp;

/// A TCP relay on 127.0.0.1 in front of `target` (`host:port`) that keeps every byte the
/// client sent, so a test sees the request exactly as it went over the wire. Returns its
/// base URL and the bytes.
async fn tee_proxy(target: String) -> (String, Arc<Mutex<Vec<u8>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let server = tokio::net::TcpStream::connect(&target).await.unwrap();
            let kept = kept.clone();
            tokio::spawn(async move {
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                let up = async {
                    let mut buf = [0u8; 8192];
                    while let Ok(n @ 1..) = client_read.read(&mut buf).await {
                        kept.lock().unwrap().extend_from_slice(&buf[..n]);
                        if server_write.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = server_write.shutdown().await;
                };
                let down = tokio::io::copy(&mut server_read, &mut client_write);
                let _ = tokio::join!(up, down);
            });
        }
    });
    (base, seen)
}

/// Raw HTTP/1.1 text of a request: request line, `headers`, empty line, `body`.
fn raw_http(request_line: &str, headers: &[(String, String)], body: &str) -> String {
    let mut s = format!("{request_line}\r\n");
    for (n, v) in headers {
        s.push_str(&format!("{n}: {v}\r\n"));
    }
    s.push_str("\r\n");
    s.push_str(body);
    s
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_request_replays_with_its_own_headers_and_exact_body_bytes() {
    let (_home, _, engine) = crate::common::default_engine().await;
    let (proxy, wire) = tee_proxy(engine.base_url.trim_start_matches("http://").into()).await;

    // Pretty-printed JSON with a trailing newline: valid, but not what the console sends.
    let body = format!(
        "{}\n",
        serde_json::to_string_pretty(&domestic(&first_bban(KARI), "12.30", "as given")).unwrap()
    );
    let request_id = uuid::Uuid::new_v4().to_string();
    let trace = "case 4711; note=\"a  b\"";
    let recorded_headers = pairs(&[
        ("Host", "bank.example"),
        ("X-Request-ID", &request_id),
        ("TPP-Redirect-URI", "http://127.0.0.1:9/callback"),
        ("PSU-IP-Address", "10.20.30.40"),
        ("Content-Type", "application/json"),
        ("X-Customer-Trace", trace),
        ("Content-Length", &body.len().to_string()),
        ("Date", "Mon, 02 Mar 2026 10:00:00 GMT"),
        ("Digest", "SHA-256=Y3VzdG9tZXI="),
        ("TPP-Signature-Certificate", "MIIBY3VzdG9tZXI="),
        (
            "Signature",
            "keyId=\"SN=1,CA=customer\",algorithm=\"rsa-sha256\",headers=\"digest x-request-id\",signature=\"Y3VzdG9tZXI=\"",
        ),
    ]);
    let raw = raw_http(
        &format!("POST /v1/payments/{DOMESTIC} HTTP/1.1"),
        &recorded_headers,
        &body,
    );
    let recorded = parse_raw_http(raw.as_bytes(), "capture.http").unwrap();
    assert_eq!(recorded.body, body.as_bytes());
    assert_eq!(recorded.headers, recorded_headers);

    let ctx = RequestContext {
        profile: &engine.profile,
        session: &engine.session,
        credentials: &engine.credentials,
        base_url: &proxy,
        redirect_uri: &engine.redirect_uri,
        now: engine.now(),
    };
    let replay =
        prepare_as_given(&recorded, "capture.http#1", &ctx, SignatureMode::Remake).unwrap();
    assert_eq!(
        replay.info.changed_headers,
        [
            "Host",
            "Date",
            "Digest",
            "TPP-Signature-Certificate",
            "Signature"
        ]
    );
    // The recorded order and spelling; only the connection's headers are left to the client.
    let names: Vec<&str> = replay
        .request
        .headers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    let expected: Vec<&str> = recorded_headers
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !["Host", "Content-Length"].contains(n))
        .collect();
    assert_eq!(names, expected);

    let (exchange, id) = send_replay(&engine, &replay).await.unwrap();
    // 201: the sandbox checked the signature and the Digest over the bytes it received.
    assert_eq!(exchange.status, 201, "{}", exchange.pretty_body());

    let wire = wire.lock().unwrap().clone();
    let end = wire.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&wire[..end]).to_string();
    assert_eq!(&wire[end + 4..], body.as_bytes(), "the exact body bytes");
    let sent = |name: &str| {
        head.lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            })
            .map(|(_, v)| v.trim().to_string())
    };
    assert_eq!(sent("x-customer-trace").as_deref(), Some(trace), "{head}");
    assert_eq!(sent("x-request-id"), Some(request_id.clone()));
    assert_eq!(sent("psu-ip-address").as_deref(), Some("10.20.30.40"));
    assert_eq!(
        sent("host").as_deref(),
        Some(proxy.trim_start_matches("http://"))
    );
    assert_eq!(sent("digest"), Some(digest_header_value(body.as_bytes())));
    assert_ne!(
        sent("date").as_deref(),
        Some("Mon, 02 Mar 2026 10:00:00 GMT")
    );

    {
        let history = engine.history.as_ref().unwrap().lock().unwrap();
        let id = id.unwrap();
        assert_eq!(
            history.replay_info(id).unwrap(),
            Some(ReplayInfo {
                replay_of: "capture.http#1".into(),
                changed_headers: replay.info.changed_headers.clone(),
            })
        );
        let entry = history.get(id).unwrap().unwrap();
        assert_eq!(entry.profile, DEFAULT_PROFILE);
        assert_eq!(entry.request_body, body.as_bytes());
        let signature = crate::common::header_value(&entry.request_headers, "Signature");
        assert_eq!(signature, REDACTED);
    }
    engine.shutdown().await;
}

#[test]
fn keep_signature_replays_byte_for_byte_and_reproduces_the_stale_date_answer() {
    let home = tempfile::tempdir().unwrap();
    let path = "/v1/sandbox/customers?withAccounts=false";
    let mut headers = pairs(&[
        ("Host", "bank.example"),
        ("X-Request-ID", &uuid::Uuid::new_v4().to_string()),
        ("TPP-Redirect-URI", "http://127.0.0.1:9/callback"),
        ("PSU-IP-Address", "127.0.0.1"),
        ("X-Support-Case", "4711"),
    ]);
    // Signed by "the customer" two hours ago: valid then, stale now.
    sign_request(
        tpp(),
        "GET",
        path,
        &mut headers,
        b"",
        SignOptions {
            request_target: false,
            now: SystemTime::now() - Duration::from_secs(2 * 3600),
        },
    );
    let file = home.path().join("stale.http");
    std::fs::write(
        &file,
        raw_http(&format!("GET {path} HTTP/1.1"), &headers, ""),
    )
    .unwrap();
    let file = file.to_str().unwrap();

    let (code, out, err) = run_headless(
        home.path(),
        &["send", "--as-given", file, "--keep-signature"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("HTTP 400 "), "{err}");
    assert!(
        err.contains(&format!(
            "{file}#1: as given with profile \"{DEFAULT_PROFILE}\", signature kept: changed Host"
        )),
        "{err}"
    );
    let answer: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        answer["tppMessages"][0]["code"], "TIMESTAMP_INVALID",
        "{out}"
    );

    // The same file re-signed with the profile's certificate goes through.
    let (code, out, err) = run_headless(home.path(), &["send", "--as-given", file]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(
        err.contains("changed Host, Date, TPP-Signature-Certificate, Signature"),
        "{err}"
    );

    let (code, out, err) = run(home.path(), &["history"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].contains("\t200\tsandbox.customers.list\tGET "),
        "replays are named by their operation: {out}"
    );
    assert!(
        lines[0].ends_with(&format!(
            "\tas-given {file}#1 changed Host,Date,TPP-Signature-Certificate,Signature"
        )),
        "{out}"
    );
    assert!(
        lines[1].contains("\t400\tsandbox.customers.list\tGET "),
        "{out}"
    );
    assert!(
        lines[1].ends_with(&format!("\tas-given {file}#1 changed Host")),
        "{out}"
    );

    let history =
        History::open_existing(&Paths::under(home.path().to_path_buf()).history_file()).unwrap();
    let entries = history.list(None, 10).unwrap();
    assert_eq!(entries.len(), 2);
    for e in &entries {
        assert_eq!(e.profile, DEFAULT_PROFILE);
        assert!(
            e.request_headers
                .iter()
                .any(|(n, v)| n == "X-Support-Case" && v == "4711")
        );
    }
    let kept = history.replay_info(entries[1].id).unwrap().unwrap();
    assert_eq!(kept.changed_headers, ["Host"]);
}

#[test]
fn a_har_file_replays_as_given_request_by_request() {
    let home = tempfile::tempdir().unwrap();
    let body = format!(
        "{}\n",
        serde_json::to_string_pretty(&domestic(&first_bban(KARI), "5.00", "har")).unwrap()
    );
    let har = serde_json::json!({"log": {"version": "1.2", "entries": [
        {"request": {"method": "GET", "url": "https://bank.example/v1/sandbox/customers?withAccounts=false",
          "headers": [{"name": "X-Request-ID", "value": uuid::Uuid::new_v4().to_string()},
                      {"name": "TPP-Redirect-URI", "value": "http://127.0.0.1:9/callback"},
                      {"name": "Signature", "value": "keyId=\"x\",signature=\"eA==\""}]}},
        {"request": {"method": "POST", "url": format!("https://bank.example/v1/payments/{DOMESTIC}"),
          "headers": [{"name": "X-Request-ID", "value": uuid::Uuid::new_v4().to_string()},
                      {"name": "TPP-Redirect-URI", "value": "http://127.0.0.1:9/callback"},
                      {"name": "PSU-IP-Address", "value": "127.0.0.1"},
                      {"name": "Content-Type", "value": "application/json"}],
          "postData": {"mimeType": "application/json", "text": body}}}
    ]}});
    let file = home.path().join("capture.har");
    std::fs::write(&file, har.to_string()).unwrap();
    let file = file.to_str().unwrap();

    let (code, out, err) = run(home.path(), &["import", file, "--as-given"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.starts_with(&format!("{file}#1\tGET https://bank.example/v1/sandbox/")));

    let (code, _, err) = run_headless(home.path(), &["send", "--as-given", file]);
    assert_eq!(code, 1);
    assert!(err.contains("holds 2 requests"), "{err}");

    let (code, out, err) = run_headless(
        home.path(),
        &["import", file, "--as-given", "--send", "--request", "2"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("{file}#2\t201\t\n"));
    assert!(
        err.contains("changed Host, Date, Digest, TPP-Signature-Certificate, Signature"),
        "{err}"
    );
    assert!(err.contains("sent 1: 2xx 1, 4xx 0, 5xx 0"), "{err}");

    let history =
        History::open_existing(&Paths::under(home.path().to_path_buf()).history_file()).unwrap();
    let last = history.last().unwrap().unwrap();
    assert_eq!(last.request_body, body.as_bytes());
    assert_eq!(
        history.replay_info(last.id).unwrap().unwrap().replay_of,
        format!("{file}#2")
    );
}

/// Issue 18, cause C: one reader. A raw HTTP file with obsolete folded header lines (a
/// signed `Date` among them) and a body followed by bytes beyond its `Content-Length`: the
/// doctor verifies the Digest and the signature over exactly the bytes `send --as-given`
/// sends, and both join the folded lines the same way.
#[test]
fn doctor_and_send_as_given_read_the_same_bytes_of_a_raw_request() {
    let home = tempfile::tempdir().unwrap();
    let body = serde_json::to_string(&domestic(&first_bban(KARI), "7.00", "same bytes")).unwrap();
    let path = format!("/v1/payments/{DOMESTIC}");
    let mut headers = pairs(&[
        ("X-Request-ID", &uuid::Uuid::new_v4().to_string()),
        ("TPP-Redirect-URI", "http://127.0.0.1:9/callback"),
        ("PSU-IP-Address", "127.0.0.1"),
        ("Content-Type", "application/json"),
        ("X-Customer-Trace", "case 4711"),
        ("Content-Length", &body.len().to_string()),
    ]);
    sign_request(
        tpp(),
        "POST",
        &path,
        &mut headers,
        body.as_bytes(),
        SignOptions {
            request_target: false,
            now: SystemTime::now(),
        },
    );
    let date = crate::common::header_value(&headers, "Date");
    let (day, time) = date.rsplit_once(' ').unwrap().0.rsplit_once(' ').unwrap();
    let mut text = format!("POST {path} HTTP/1.1\r\n");
    for (n, v) in &headers {
        match n.as_str() {
            // `Date: Sun, 07 Jun 2026\r\n 20:51:35 GMT`: one value over two lines.
            "Date" => text.push_str(&format!("Date: {day}\r\n {time} GMT\r\n")),
            "X-Customer-Trace" => text.push_str("X-Customer-Trace: case \r\n\t 4711\r\n"),
            _ => text.push_str(&format!("{n}: {v}\r\n")),
        }
    }
    text.push_str("\r\n");
    text.push_str(&body);
    text.push_str("\r\n{\"trailing\": \"bytes beyond Content-Length\"}\r\n");
    let file = home.path().join("folded.http");
    std::fs::write(&file, &text).unwrap();
    let file = file.to_str().unwrap();

    let (code, out, err) = run(home.path(), &["doctor", file, "--format", "json"]);
    let report: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let status = |id: &str| {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["status"].clone())
    };
    for id in ["digest", "date.format", "signature.verify"] {
        assert_eq!(status(id), Some("pass".into()), "{id}: {out}{err}");
    }
    assert_eq!(report["source"], format!("raw HTTP in {file}"), "{out}");
    assert!(code == 0 || code == 1, "{err}");

    let (code, _, err) = run_headless(home.path(), &["send", "--as-given", file]);
    assert_eq!(code, 0, "{err}");
    let history =
        History::open_existing(&Paths::under(home.path().to_path_buf()).history_file()).unwrap();
    let last = history.last().unwrap().unwrap();
    assert_eq!(
        last.request_body,
        body.as_bytes(),
        "the Content-Length bytes"
    );
    assert_eq!(
        crate::common::header_value(&last.request_headers, "X-Customer-Trace"),
        "case 4711"
    );
    assert_eq!(last.operation_id, "payments.domestic.create");
}

/// Issue 18, defect 12: a HAR entry (no `Host` header) went to its URL's host; replayed
/// with `--keep-signature` to the profile's target, the host changed and stderr says so.
#[test]
fn keep_signature_says_the_host_changed_for_a_har_entry_without_host() {
    let home = tempfile::tempdir().unwrap();
    let har = serde_json::json!({"log": {"version": "1.2", "entries": [
        {"request": {"method": "GET", "url": "https://bank.example/v1/sandbox/customers?withAccounts=false",
          "headers": [{"name": "X-Request-ID", "value": uuid::Uuid::new_v4().to_string()},
                      {"name": "TPP-Redirect-URI", "value": "http://127.0.0.1:9/callback"}]}}
    ]}});
    let file = home.path().join("capture.har");
    std::fs::write(&file, har.to_string()).unwrap();
    let file = file.to_str().unwrap();
    let (_, _, err) = run_headless(
        home.path(),
        &["send", "--as-given", file, "--keep-signature"],
    );
    assert!(
        err.contains(&format!(
            "{file}#1: as given with profile \"{DEFAULT_PROFILE}\", signature kept: changed Host"
        )),
        "{err}"
    );
    assert!(!err.contains("nothing changed"), "{err}");
}

/// Issue 18, defect 12: `import --send` names the URL a request went to (the profile's
/// target), not the file's URL, beside the answer.
#[test]
fn import_send_names_the_target_not_the_files_url() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("x.sh");
    std::fs::write(
        &file,
        "curl -sS -X GET 'http://192.0.2.1:1/v1/sandbox/customers?withAccounts=false' -H 'X-Request-ID: 1'\n",
    )
    .unwrap();
    let (code, out, err) = run(home.path(), &["import", "--send", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains("192.0.2.1"),
        "the file's URL beside the answer: {out}"
    );
    assert!(
        out.starts_with("curl 1 GET http://127.0.0.1:")
            && out.contains("/v1/sandbox/customers?withAccounts=false\t200\t"),
        "{out}"
    );
}
