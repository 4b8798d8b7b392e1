//! The sandbox against a hostile client (issue 9, items 8–12), over real HTTP on 127.0.0.1:
//! replayed X-Request-IDs, SCA steps from another browser or site, links built from the
//! Host header, slow clients, and a TPP-Redirect-URI that already holds redirect
//! parameters. Every `/v1` response is also checked against the Berlin Group schemas.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, SystemTime};

use common::sandbox::{REDIRECT, TestSandbox, signed_headers, tpp, tpp_with_roles};
use common::sca::{fixed_sandbox, form_on, success, tick_all};
use common::{browser, forms, location};
use psd2_console::cert::Psd2Role;
use psd2_console::sandbox::store::db::Storage;
use psd2_console::sandbox::{SandboxConfig, http::serve};

/// A private customer without agreements (no context step at SCA).
const INGRID: &str = "02079146148";

/// The answer to an approval: a 302 to the TPP with a success.
fn approved(done: reqwest::Response) {
    assert_eq!(done.status(), 302);
    success(&location(&done));
}

/// A client without cookies: another browser.
fn stranger() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// Item 8: replays

#[tokio::test]
async fn a_repeated_x_request_id_is_refused_even_on_another_path_or_with_a_query() {
    let sb = TestSandbox::start().await;
    let id = uuid::Uuid::new_v4().to_string();
    sb.get_with_ok("/v1/sandbox/customers", &[("X-Request-ID", &id)])
        .await;
    for path in [
        "/v1/sandbox/customers",
        "/v1/sandbox/customers?x=1",
        "/v1/accounts",
    ] {
        let again = sb.get_with(path, &[("X-Request-ID", &id)]).await;
        assert_eq!(again.status, 400, "{path}: {}", again.text);
        assert_eq!(again.code(), Some("FORMAT_ERROR"));
        let text = again.json["tppMessages"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("X-Request-ID") && text.contains("already used"),
            "{text}"
        );
        assert_eq!(
            again.headers["x-request-id"].to_str().unwrap(),
            id,
            "echoed"
        );
    }
    // Another TPP may use the same id; a new id of the first TPP is fine.
    let other = tpp_with_roles(&[Psd2Role::PspAi]);
    let r = sb
        .get_as(&other, "/v1/sandbox/customers", &[("X-Request-ID", &id)])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    sb.get_ok("/v1/sandbox/customers").await;
    sb.stop().await;
}

#[tokio::test]
async fn the_same_signed_request_sent_twice_is_refused_the_second_time() {
    // The captured bytes, sent again unchanged (reqwest's request cloned).
    let sb = TestSandbox::start().await;
    let no_psu_ip = [("PSU-IP-Address", "")];
    let hs = signed_headers(
        tpp(),
        "GET",
        "/v1/sandbox/customers",
        &no_psu_ip,
        None,
        sb.now(),
    );
    let mut statuses = Vec::new();
    for path in ["/v1/sandbox/customers", "/v1/sandbox/customers?page=2"] {
        let mut rb = sb.http.get(format!("{}{path}", sb.base));
        for (n, v) in &hs {
            rb = rb.header(n, v);
        }
        statuses.push(rb.send().await.unwrap().status().as_u16());
    }
    assert_eq!(statuses, [200, 400]);
    sb.stop().await;
}

#[tokio::test]
async fn used_x_request_ids_are_still_refused_after_a_restart_on_a_file_database() {
    let dir = tempfile::tempdir().unwrap();
    let config = || SandboxConfig {
        storage: Storage::File(dir.path().join("sandbox.sqlite3")),
        ..SandboxConfig::default()
    };
    let id = uuid::Uuid::new_v4().to_string();
    let sb = TestSandbox::start_with(config()).await;
    sb.get_with_ok("/v1/sandbox/customers", &[("X-Request-ID", &id)])
        .await;
    // The ids are written in the background: wait until the writer has stored this one.
    let file = dir.path().join("sandbox.sqlite3");
    common::wait_until("the X-Request-ID in the database file", || {
        let db = rusqlite::Connection::open(&file).unwrap();
        db.query_row(
            "SELECT count(*) FROM replay_request_ids WHERE request_id = ?1",
            [&id],
            |row| row.get::<_, i64>(0),
        )
        .is_ok_and(|n| n == 1)
    })
    .await;
    sb.stop().await;
    let sb = TestSandbox::start_with(config()).await;
    let r = sb
        .get_with("/v1/sandbox/customers", &[("X-Request-ID", &id)])
        .await;
    r.assert_error(400, "FORMAT_ERROR");
    sb.stop().await;
}

/// Issue 20, finding 5: a lesson moves the sandbox clock 181 days ahead, sends requests and
/// initializes. `initialize` forgets the caller's X-Request-IDs (it resets the caller's
/// sandbox), never another TPP's, and requests after it are answered normally, however the
/// clock moved. (The bound of the remembered set over time is the unit test
/// `sandbox::http::replay::tests::a_clock_jump_and_initialize_never_fill_the_guard`.)
#[tokio::test]
async fn initialize_forgets_the_callers_request_ids_after_a_clock_jump() {
    let sb = TestSandbox::start().await;
    sb.post_ok(
        "/v1/sandbox/clock",
        &serde_json::json!({ "advanceSeconds": 181 * 86_400 }),
    )
    .await;
    let other = tpp_with_roles(&[Psd2Role::PspAi]);
    let (mine, theirs) = (
        uuid::Uuid::new_v4().to_string(),
        uuid::Uuid::new_v4().to_string(),
    );
    let their_id = [("X-Request-ID", theirs.as_str())];
    for i in 0..64 {
        let id = if i == 0 {
            mine.clone()
        } else {
            uuid::Uuid::new_v4().to_string()
        };
        sb.get_with_ok("/v1/sandbox/customers", &[("X-Request-ID", &id)])
            .await;
    }
    let r = sb.get_as(&other, "/v1/sandbox/customers", &their_id).await;
    assert_eq!(r.status, 200, "{}", r.text);
    sb.post_ok("/v1/sandbox/initialize", &serde_json::json!({}))
        .await;
    // The clock is back at real time; the caller's ids are forgotten, the other TPP's kept.
    sb.get_with_ok("/v1/sandbox/customers", &[("X-Request-ID", &mine)])
        .await;
    let r = sb.get_as(&other, "/v1/sandbox/customers", &their_id).await;
    r.assert_error(400, "FORMAT_ERROR");
    // A fresh TPP's first request.
    let fresh = tpp_with_roles(&[Psd2Role::PspPi]);
    let r = sb.get_as(&fresh, "/v1/sandbox/customers", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    sb.stop().await;
}

#[tokio::test]
async fn allow_replays_turns_the_check_off_for_load_benchmarks() {
    let sb = TestSandbox::start_with(SandboxConfig {
        allow_replays: true,
        ..SandboxConfig::default()
    })
    .await;
    let id = uuid::Uuid::new_v4().to_string();
    for _ in 0..3 {
        sb.get_with_ok("/v1/sandbox/customers", &[("X-Request-ID", &id)])
            .await;
    }
    sb.stop().await;
}

// ---------------------------------------------------------------------------------------
// Item 9: SCA pages bound to the PSU's browser

async fn consent_link(sb: &TestSandbox, redirect: &str) -> String {
    let r = sb
        .get_with("/v1/accounts", &[("TPP-Redirect-URI", redirect)])
        .await;
    assert_eq!(r.status, 401, "{}", r.text);
    r.sca_redirect().unwrap().to_string()
}

/// Posts `pairs` to `url` with `client`, optionally with an `Origin`.
async fn post(
    client: &reqwest::Client,
    url: &str,
    pairs: &[(&str, &str)],
    origin: Option<&str>,
) -> reqwest::Response {
    let mut rb = client.post(url).form(pairs);
    if let Some(o) = origin {
        rb = rb.header("Origin", o);
    }
    rb.send().await.unwrap()
}

fn is_bank_403(status: u16, html: &str) {
    assert_eq!(status, 403, "{html}");
    assert!(html.contains("psd2-console Sandbox Bank"), "{html}");
    assert!(html.contains("Not allowed from here"), "{html}");
}

#[tokio::test]
async fn consent_sca_steps_from_another_browser_or_site_get_a_403_page_and_the_psu_finishes() {
    let sb = TestSandbox::start().await;
    let href = consent_link(&sb, REDIRECT).await;
    let psu = browser();
    let page = psu.get(&href).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let cookie = page
        .headers()
        .get("set-cookie")
        .expect("the first opening sets the cookie")
        .to_str()
        .unwrap()
        .to_string();
    for attr in ["HttpOnly", "SameSite=Lax", "Path=/sca/"] {
        assert!(cookie.contains(attr), "{cookie}");
    }
    let url = page.url().to_string();
    let html = page.text().await.unwrap();
    let login = forms(&html, &url).remove(0);
    let token = login.value("token").to_string();
    let action = login.action.clone();
    let evil = stranger();
    // Another client: no cookie, with or without a foreign Origin, even with the token.
    for (origin, with_token) in [
        (Some("https://evil.example"), false),
        (None, false),
        (None, true),
    ] {
        let mut pairs = vec![("customerNumber", INGRID)];
        if with_token {
            pairs.push(("token", &token));
        }
        let r = post(&evil, &action, &pairs, origin).await;
        let status = r.status().as_u16();
        is_bank_403(status, &r.text().await.unwrap());
    }
    let r = evil.get(&href).send().await.unwrap();
    is_bank_403(r.status().as_u16(), &r.text().await.unwrap());
    // The PSU's own browser: a foreign Origin, or a missing or wrong token, are refused too.
    let r = post(
        &psu,
        &action,
        &[("customerNumber", INGRID), ("token", &token)],
        Some("https://evil.example"),
    )
    .await;
    is_bank_403(r.status().as_u16(), &r.text().await.unwrap());
    for t in ["", "00000000000000000000000000000000"] {
        let r = post(
            &psu,
            &action,
            &[("customerNumber", INGRID), ("token", t)],
            None,
        )
        .await;
        is_bank_403(r.status().as_u16(), &r.text().await.unwrap());
    }
    // ...and then finishes (with its own Origin, as a browser sends it).
    let r = post(
        &psu,
        &action,
        &[("customerNumber", INGRID), ("token", &token)],
        Some(&sb.base),
    )
    .await;
    assert_eq!(r.status(), 200);
    let url = r.url().to_string();
    let html = r.text().await.unwrap();
    let mut consent = forms(&html, &url).remove(0);
    let consent_token = consent.value("token").to_string();
    assert_ne!(consent_token, token, "a token per step");
    // The login step's token posted again (the back button) shows the current page.
    let r = post(
        &psu,
        &action,
        &[("customerNumber", INGRID), ("token", &token)],
        None,
    )
    .await;
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("Give consent"));
    tick_all(&mut consent);
    approved(consent.submit(&psu, "Approve").await);
    sb.stop().await;
}

#[tokio::test]
async fn payment_sca_steps_from_another_browser_get_a_403_page_and_the_psu_finishes() {
    let sb = TestSandbox::start().await;
    let body = common::payments::domestic(&common::payments::first_bban(INGRID), "10.00", "x");
    let r = sb
        .post_created("/v1/payments/norwegian-domestic-credit-transfers", &body)
        .await;
    let href = r.sca_redirect().unwrap().to_string();
    let psu = browser();
    let page = psu.get(&href).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let cookie = page.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("Path=/payment-sca/"),
        "{cookie}"
    );
    let url = page.url().to_string();
    let html = page.text().await.unwrap();
    let mut login = forms(&html, &url)
        .into_iter()
        .find(|f| f.fields.iter().any(|(n, _)| n == "customerNumber"))
        .unwrap();
    let token = login.value("token").to_string();
    let evil = stranger();
    let decision = href.clone() + "/decision";
    for (url, pairs) in [
        (
            login.action.as_str(),
            vec![("customerNumber", INGRID), ("token", token.as_str())],
        ),
        (
            decision.as_str(),
            vec![("action", "approve"), ("token", token.as_str())],
        ),
    ] {
        let r = post(&evil, url, &pairs, Some("https://evil.example")).await;
        is_bank_403(r.status().as_u16(), &r.text().await.unwrap());
    }
    let r = evil.get(&href).send().await.unwrap();
    is_bank_403(r.status().as_u16(), &r.text().await.unwrap());
    login.set("customerNumber", INGRID);
    let decide = form_on(login.submit(&psu, "Log in").await, "/decision").await;
    approved(decide.submit(&psu, "Approve").await);
    sb.stop().await;
}

// ---------------------------------------------------------------------------------------
// Item 10: links never from the Host header

#[tokio::test]
async fn links_come_from_the_public_url_never_from_the_host_header() {
    let sb = TestSandbox::start().await;
    let r = sb
        .get_with("/v1/accounts", &[("Host", "evil.example")])
        .await;
    assert_eq!(r.status, 401, "{}", r.text);
    let href = r.sca_redirect().unwrap();
    assert!(href.starts_with(&format!("{}/sca/", sb.base)), "{href}");
    let body = common::payments::domestic(&common::payments::first_bban(INGRID), "10.00", "x");
    let r = sb
        .send(
            "POST",
            "/v1/payments/norwegian-domestic-credit-transfers",
            &[("Host", "evil.example")],
            Some(&body.to_string()),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let href = r.sca_redirect().unwrap();
    assert!(
        href.starts_with(&format!("{}/payment-sca/", sb.base)),
        "{href}"
    );
    sb.stop().await;

    let sb = TestSandbox::start_with(SandboxConfig {
        public_url: Some("https://sandbox.example/bank".into()),
        ..SandboxConfig::default()
    })
    .await;
    let r = sb.get("/v1/accounts").await;
    let href = r.sca_redirect().unwrap();
    assert!(
        href.starts_with("https://sandbox.example/bank/sca/"),
        "{href}"
    );
    sb.stop().await;
}

// ---------------------------------------------------------------------------------------
// Item 11: timeouts

/// Reads until the server closes the connection (or 60 s pass: then the test fails).
fn read_until_closed(s: &mut TcpStream) -> String {
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("the server kept the slow connection open: {e}"),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_cut_off_while_other_requests_are_served() {
    let sb = TestSandbox::start().await;
    let addr = sb.handle.as_ref().unwrap().addr;
    // Headers trickled one byte a second, never finished.
    let trickle = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        let started = SystemTime::now();
        for b in b"GET /v1/sandbox/customers HTTP/1.1\r\nHost: x\r\nX-Padding: "
            .iter()
            .cycle()
        {
            if s.write_all(&[*b]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
            if started.elapsed().unwrap() > Duration::from_secs(90) {
                panic!("the server kept a trickling client for 90 s");
            }
        }
    });
    // A body announced but never sent.
    let body = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(
            b"POST /v1/sandbox/customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":",
        )
        .unwrap();
        read_until_closed(&mut s)
    });
    // An idle keep-alive connection.
    let idle = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        read_until_closed(&mut s)
    });
    // Meanwhile others are served.
    for _ in 0..5 {
        sb.get_ok("/v1/sandbox/customers").await;
    }
    let (trickle, body, idle) =
        tokio::task::spawn_blocking(move || (trickle.join(), body.join(), idle.join()))
            .await
            .unwrap();
    trickle.expect("the trickling connection was closed");
    let body = body.unwrap();
    assert!(body.starts_with("HTTP/1.1 400"), "{body}");
    assert!(body.contains("did not arrive within"), "{body}");
    assert_eq!(
        idle.unwrap(),
        "",
        "an idle connection is closed without an answer"
    );
    assert!(serve::HEADER_READ_TIMEOUT <= Duration::from_secs(30));
    sb.stop().await;
}

// ---------------------------------------------------------------------------------------
// Item 12: the sandbox's redirect parameters replace the TPP's

#[tokio::test]
async fn a_redirect_uri_holding_psu_id_gets_the_sandbox_values_not_the_tpps() {
    let sb = fixed_sandbox().await;
    let fake = uuid::Uuid::new_v4().to_string();
    let redirect = format!("http://127.0.0.1:9/callback?psu-id={fake}&Context=CORPORATE&state=abc");
    let href = consent_link(&sb, &redirect).await;
    let to_tpp = common::sca::complete(&href, INGRID, "PRIVATE", tick_all, "Approve").await;
    let url = url::Url::parse(&to_tpp).unwrap();
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let psu_ids: Vec<&str> = pairs
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("psu-id"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(psu_ids.len(), 1, "{to_tpp}");
    assert_ne!(psu_ids[0], fake);
    let contexts: Vec<&str> = pairs
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("context"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(contexts, ["PRIVATE"], "{to_tpp}");
    assert!(pairs.contains(&("state".into(), "abc".into())), "{to_tpp}");
    assert_eq!(success(&to_tpp).psu_id, psu_ids[0]);
    sb.stop().await;
}

// ---------------------------------------------------------------------------------------
// The `sandbox serve` flags of items 8 and 10

/// `sandbox serve --in-memory` with `args` on a free port; killed on drop.
struct Served(std::process::Child, String);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve_with(args: &[&str]) -> Served {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_psd2-console"))
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .args(["sandbox", "serve", "--in-memory", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let served = Served(child, format!("http://127.0.0.1:{port}"));
    for _ in 0..600 {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return served;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("sandbox serve did not start");
}

/// The same signed `GET path` sent twice to `base`: both statuses and the first body.
async fn twice(base: &str, path: &str) -> (u16, u16, serde_json::Value) {
    // No PSU-IP-Address (an empty value leaves the default out): a PSU-less read.
    let headers = [("Host", "evil.example"), ("PSU-IP-Address", "")];
    let hs = signed_headers(tpp(), "GET", path, &headers, None, SystemTime::now());
    let http = reqwest::Client::new();
    let mut out = Vec::new();
    for _ in 0..2 {
        let mut rb = http.get(format!("{base}{path}"));
        for (n, v) in &hs {
            rb = rb.header(n, v);
        }
        let r = rb.send().await.unwrap();
        let status = r.status().as_u16();
        out.push((status, r.json().await.unwrap_or(serde_json::Value::Null)));
    }
    (out[0].0, out[1].0, out[0].1.clone())
}

#[tokio::test]
async fn sandbox_serve_takes_public_url_and_allow_replays() {
    let s = serve_with(&["--public-url", "https://bank.example/sandbox/"]);
    let (first, second, body) = twice(&s.1, "/v1/accounts").await;
    assert_eq!((first, second), (401, 400), "{body}");
    let href = body["_links"]["scaRedirect"]["href"].as_str().unwrap();
    assert!(
        href.starts_with("https://bank.example/sandbox/sca/"),
        "{href}"
    );
    drop(s);
    let s = serve_with(&["--allow-replays"]);
    let (first, second, body) = twice(&s.1, "/v1/accounts").await;
    assert_eq!((first, second), (401, 401), "{body}");
    let href = body["_links"]["scaRedirect"]["href"].as_str().unwrap();
    assert!(href.starts_with(&format!("{}/sca/", s.1)), "{href}");
    // A --public-url that is not an absolute http(s) URL is refused.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_psd2-console"))
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .args(["sandbox", "serve", "--in-memory", "--public-url", "ftp://x"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("absolute http(s) URL"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
