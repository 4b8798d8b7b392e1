//! SCA in a real browser: headless Chromium, driven over WebDriver (`chromedriver`) with
//! `fantoccini`. The PSU first registers through the account consent SCA (`GET /v1/accounts`
//! → 401 `scaRedirect`), which gives the PSU-ID and a debtor account; then a payment
//! (`POST /v1/payments/norwegian-domestic-credit-transfers`, `TPP-Redirect-URI` = the
//! console's redirect listener, `TPP-Session-ID` the listener expects) gets its own SCA
//! (interface document, Authentication 15): Chromium opens the payment's `scaRedirect`, logs
//! in with a sandbox customerNumber (Authentication 14), approves, and lands on the listener,
//! which shows "SCA complete" and hands `ScaCallback::Success` with that tpp-session-id on.
//!
//! Needs the Debian packages `chromium` and `chromium-driver` (`.ci/run` installs them).
//! Binaries: `$CHROMEDRIVER` (default `/usr/bin/chromedriver`, else `chromedriver` on
//! `PATH`) and `$CHROMIUM` (default `/usr/bin/chromium`). When they are missing the test
//! FAILS, naming the install command, unless `PSD2_SKIP_BROWSER=1` is set.
//!
//! A second test shows SCA in a frame (interface document, Authentication 11: "redirects
//! the PSU (or shows it in a frame)"): the sandbox serves TLS, a TPP page on another site
//! (`https://localhost:…`, the sandbox being `https://127.0.0.1:…`) shows the consent's
//! `scaRedirect` in an `<iframe>`, and the PSU completes the SCA inside it; the binding
//! cookie is `SameSite=None; Secure` over TLS, else the frame's form posts would come
//! without it and get the 403 page. That browser is started with
//! `--ignore-certificate-errors` as well: Chromium on Linux takes its trusted CAs from an NSS
//! database, which only `certutil` (Debian `libnss3-tools`, not installed) can write, and
//! what is tested here is the frame and the cookie, not the trust, which
//! `tests/it/tls_server.rs` shows with reqwest, curl and openssl and the exported CA.
//!
//! The browser is started with `--headless=new --no-sandbox --disable-gpu --disable-quic
//! --no-first-run --disable-background-networking --disable-component-update --disable-sync
//! --disable-dev-shm-usage --user-data-dir=<fresh temp dir>`, and only ever talks to
//! 127.0.0.1 (the sandbox, the listener, chromedriver). chromedriver runs in its own process
//! group, killed as a whole when the test ends, fails or times out.

// Tests and benches may unwrap: a panic is their failure report (Cargo.toml [lints]).
#![allow(clippy::unwrap_used)]

#[path = "it/common/mod.rs"]
mod common;

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::sandbox::TestSandbox;
use fantoccini::{Client, ClientBuilder, Locator};
use psd2_console::redirect::RedirectListener;
use psd2_console::xs2a::redirect::{ScaCallback, ScaSuccess};
use serde_json::json;

/// A chromedriver child process, leader of its own process group (the Chromium it starts
/// joins the group); on drop the whole group is killed and chromedriver reaped, so a failing
/// test leaves no browser behind.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The group id is chromedriver's pid (process_group(0) at spawn).
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--"])
            .arg(format!("-{}", self.child.id()))
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// The binary named by `env`, else `default`, else `name` on PATH.
fn binary(env: &str, default: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    Some(PathBuf::from(default))
        .filter(|p| p.is_file())
        .or_else(|| which(name))
}

/// chromedriver and chromium, or `None` when the test is to be skipped; panics with the
/// install command when they are missing and skipping was not asked for.
fn browser_binaries() -> Option<(PathBuf, PathBuf)> {
    let driver = binary("CHROMEDRIVER", "/usr/bin/chromedriver", "chromedriver");
    let chromium = binary("CHROMIUM", "/usr/bin/chromium", "chromium");
    match (driver, chromium) {
        (Some(d), Some(c)) => Some((d, c)),
        (d, c) => {
            let missing = [("chromedriver", d.is_none()), ("chromium", c.is_none())]
                .iter()
                .filter(|(_, m)| *m)
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(" and ");
            if std::env::var("PSD2_SKIP_BROWSER").as_deref() == Ok("1") {
                eprintln!("PSD2_SKIP_BROWSER=1: skipping the browser SCA test ({missing} missing)");
                None
            } else {
                panic!(
                    "{missing} not found: install the packages with \
                     `apt-get update && apt-get install -y chromium chromium-driver` \
                     (or set CHROMEDRIVER / CHROMIUM to the binaries, or PSD2_SKIP_BROWSER=1 \
                     to skip this test)"
                );
            }
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Starts chromedriver on a free loopback port and waits until it answers `/status`.
async fn start_driver(path: &Path) -> Driver {
    let port = free_port();
    let child = Command::new(path)
        .arg(format!("--port={port}"))
        .arg("--allowed-ips=127.0.0.1")
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", path.display()));
    let driver = Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let http = reqwest::Client::new();
    for _ in 0..300 {
        if let Ok(r) = http.get(format!("{}/status", driver.url)).send().await
            && r.status().is_success()
        {
            return driver;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not answer on {}", driver.url);
}

async fn start_browser(driver: &Driver, chromium: &Path, profile: &Path) -> Client {
    start_browser_with(driver, chromium, profile, &[]).await
}

/// [`start_browser`] with more Chromium arguments.
async fn start_browser_with(
    driver: &Driver,
    chromium: &Path,
    profile: &Path,
    extra: &[&str],
) -> Client {
    let mut caps = json!({
        "goog:chromeOptions": {
            "binary": chromium.to_string_lossy(),
            "args": [
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                format!("--user-data-dir={}", profile.display()),
            ]
        }
    });
    if let Some(args) = caps["goog:chromeOptions"]["args"].as_array_mut() {
        args.extend(extra.iter().map(|a| json!(a)));
    }
    let serde_json::Value::Object(caps) = caps else {
        unreachable!()
    };
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .unwrap_or_else(|e| panic!("cannot start Chromium through chromedriver: {e}"));
    client
        .update_timeouts(fantoccini::wd::TimeoutConfiguration::new(
            Some(Duration::from_secs(30)),
            Some(Duration::from_secs(30)),
            Some(Duration::ZERO),
        ))
        .await
        .expect("WebDriver timeouts");
    client
}

/// Clicks `button` and waits until the browser has left the page (its `<html>` element is
/// gone), so the next look at the page sees the new one.
async fn click_and_wait(c: &Client, button: &fantoccini::elements::Element) {
    let old = c.find(Locator::Css("html")).await.expect("the page");
    button.click().await.expect("click");
    for _ in 0..300 {
        if old.tag_name().await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the page did not change after a click");
}

/// Clicks the first submit button whose value or text contains one of `words`
/// (case-insensitive); false when there is none.
async fn click_button(c: &Client, words: &[&str]) -> bool {
    let buttons = c
        .find_all(Locator::Css("button[type=submit], input[type=submit]"))
        .await
        .unwrap_or_default();
    for w in words {
        for b in &buttons {
            let text = b.text().await.unwrap_or_default();
            let value = b.attr("value").await.ok().flatten().unwrap_or_default();
            if format!("{text} {value}").to_lowercase().contains(w) {
                click_and_wait(c, b).await;
                return true;
            }
        }
    }
    false
}

/// Walks the sandbox SCA pages in the browser until it leaves the sandbox: types
/// `customer_number` on the login page, keeps the private context, ticks an account when
/// none is ticked, approves.
async fn complete_sca_in_browser(c: &Client, sandbox_base: &str, customer_number: &str) {
    for _ in 0..10 {
        let url = c.current_url().await.expect("current URL");
        if !url.as_str().starts_with(sandbox_base) {
            return;
        }
        if let Ok(input) = c.find(Locator::Css("input[name=customerNumber]")).await {
            input.clear().await.expect("clear");
            input.send_keys(customer_number).await.expect("type");
            let login = c
                .find(Locator::Css(
                    "form#login button[type=submit]:not([value=cancel])",
                ))
                .await
                .expect("the Log in button");
            click_and_wait(c, &login).await;
            continue;
        }
        if let Ok(private) = c
            .find(Locator::Css(
                "input[type=radio][name=context][value=PRIVATE]",
            ))
            .await
        {
            private.click().await.expect("choose PRIVATE");
        }
        let boxes = c
            .find_all(Locator::Css("input[type=checkbox]"))
            .await
            .unwrap_or_default();
        let mut any = false;
        for b in &boxes {
            any |= b.is_selected().await.unwrap_or(false);
        }
        if !any && let Some(b) = boxes.first() {
            b.click().await.expect("tick an account");
        }
        let page = c.source().await.unwrap_or_default();
        assert!(
            click_button(c, &["approve", "confirm", "continue", "next"]).await,
            "no approve/continue button on {url}:\n{page}"
        );
    }
    panic!("still on the sandbox after 10 SCA steps");
}

/// Waits for the listener's next callback and returns its success.
async fn next_success(listener: &mut RedirectListener) -> ScaSuccess {
    let cb = tokio::time::timeout(Duration::from_secs(30), listener.next())
        .await
        .expect("the listener handed a callback on")
        .expect("a callback");
    match cb {
        ScaCallback::Success(ok) => ok,
        other => panic!("not a success: {other:?}"),
    }
}

/// Asserts the browser is on the listener's page saying "SCA complete".
async fn assert_landed(browser: &Client, listener: &RedirectListener) {
    let landed = browser.current_url().await.expect("current URL");
    assert!(
        landed.as_str().starts_with(&listener.redirect_uri),
        "the browser landed on {landed}, not the listener {}",
        listener.redirect_uri
    );
    let page = browser.source().await.expect("page source");
    assert!(page.contains("SCA complete"), "{page}");
}

/// Upper bound of the whole browser run: a hung WebDriver command or page fails the test
/// (and the drops kill the browser) instead of blocking the suite.
const BROWSER_RUN_LIMIT: Duration = Duration::from_secs(240);

#[tokio::test]
async fn payment_sca_completes_in_headless_chromium() {
    let Some((driver_bin, chromium)) = browser_binaries() else {
        return;
    };
    tokio::time::timeout(
        BROWSER_RUN_LIMIT,
        payment_sca_in_browser(&driver_bin, &chromium),
    )
    .await
    .unwrap_or_else(|_| panic!("the browser SCA did not finish within {BROWSER_RUN_LIMIT:?}"));
}

/// Registers the PSU through the account consent SCA, then creates a payment and completes
/// its SCA, both in Chromium, landing on the redirect listener each time.
async fn payment_sca_in_browser(driver_bin: &Path, chromium: &Path) {
    let sb = TestSandbox::start().await;
    let mut listener = RedirectListener::start(None)
        .await
        .expect("redirect listener");

    let customers = sb.send("GET", "/v1/sandbox/customers", &[], None).await;
    assert_eq!(customers.status, 200, "{}", customers.text);
    let number = common::private_customer_number(&customers.json);

    let driver = start_driver(driver_bin).await;
    let profile = tempfile::tempdir().expect("a profile dir");
    let browser = start_browser(&driver, chromium, profile.path()).await;

    // First the PSU registers through the account consent SCA (401 + scaRedirect), which
    // gives the PSU-ID and the debtor account.
    let ais_session = format!("browser-ais-{}", uuid::Uuid::new_v4());
    listener.expect_session(&ais_session);
    let h = [
        ("TPP-Redirect-URI", listener.redirect_uri.as_str()),
        ("TPP-Session-ID", ais_session.as_str()),
    ];
    let first = sb.send("GET", "/v1/accounts", &h, None).await;
    assert_eq!(first.status, 401, "{}", first.text);
    let sca = first
        .sca_redirect()
        .unwrap_or_else(|| panic!("no scaRedirect: {}", first.text))
        .to_string();
    browser.goto(&sca).await.expect("open the scaRedirect");
    complete_sca_in_browser(&browser, &sb.base, &number).await;
    assert_landed(&browser, &listener).await;
    let registered = next_success(&mut listener).await;
    assert_eq!(registered.tpp_session_id, ais_session);
    let psu = registered.psu_id;
    let accounts = sb
        .send(
            "GET",
            "/v1/accounts",
            &[("PSU-ID", &psu), ("TPP-Session-ID", &ais_session)],
            None,
        )
        .await;
    assert_eq!(accounts.status, 200, "{}", accounts.text);
    let debtor = accounts.json["accounts"][0]["bban"]
        .as_str()
        .expect("an account with a bban")
        .to_string();

    // The payment: its own SCA (interface document, Authentication 15), in the browser.
    let session = format!("browser-pis-{}", uuid::Uuid::new_v4());
    listener.expect_session(&session);
    let body = json!({
        "instructedAmount": {"currency": "NOK", "amount": "12.50"},
        "debtorAccount": {"bban": debtor, "currency": "NOK"},
        "creditorAccount": {"bban": "12094355778", "currency": "NOK"},
        "creditorName": "Foo Bar",
        "remittanceInformationUnstructured": "browser SCA test"
    })
    .to_string();
    let created = sb
        .send(
            "POST",
            "/v1/payments/norwegian-domestic-credit-transfers",
            &[
                ("TPP-Redirect-URI", &listener.redirect_uri),
                ("TPP-Session-ID", &session),
                ("PSU-ID", &psu),
            ],
            Some(&body),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let payment_id = created.json["paymentId"]
        .as_str()
        .expect("paymentId")
        .to_string();
    let sca = created
        .sca_redirect()
        .unwrap_or_else(|| panic!("no scaRedirect on the payment: {}", created.text))
        .to_string();
    assert!(sca.starts_with(&sb.base), "{sca}");
    browser
        .goto(&sca)
        .await
        .expect("open the payment scaRedirect");
    complete_sca_in_browser(&browser, &sb.base, &number).await;
    assert_landed(&browser, &listener).await;
    let ok = next_success(&mut listener).await;
    assert_eq!(ok.tpp_session_id, session);
    assert_eq!(ok.psu_id, psu, "the PSU-ID is stable per TPP");

    // The approved payment is no longer waiting for SCA.
    let status = sb
        .send(
            "GET",
            &format!("/v1/payments/norwegian-domestic-credit-transfers/{payment_id}/status"),
            &[("PSU-ID", &psu)],
            None,
        )
        .await;
    assert_eq!(status.status, 200, "{}", status.text);
    assert_ne!(status.json["transactionStatus"], "RCVD", "{}", status.text);

    let _ = browser.close().await;
    drop(driver);
    sb.stop().await;
}

/// The URL of the document in the current browsing context (the frame the driver is in;
/// WebDriver's current URL is always the top-level page's).
async fn frame_url(c: &Client) -> String {
    c.execute("return window.location.href;", vec![])
        .await
        .expect("the frame's location")
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn consent_sca_completes_inside_a_cross_site_iframe_over_tls() {
    let Some((driver_bin, chromium)) = browser_binaries() else {
        return;
    };
    tokio::time::timeout(BROWSER_RUN_LIMIT, sca_in_frame(&driver_bin, &chromium))
        .await
        .unwrap_or_else(|_| {
            panic!("the SCA in a frame did not finish within {BROWSER_RUN_LIMIT:?}")
        });
}

/// The TPP's site: `/tpp?sca=URL` is a page showing URL in an `<iframe>`, `/callback` the
/// TPP-Redirect-URI (its queries recorded).
async fn tpp_site(
    ca: &psd2_console::cert::ca::SandboxCa,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use axum::extract::{Query, RawQuery};
    use axum::response::Html;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let app = axum::Router::new()
        .route(
            "/tpp",
            axum::routing::get(
                |Query(q): Query<std::collections::HashMap<String, String>>| async move {
                    let src = q.get("sca").cloned().unwrap_or_default().replace('"', "");
                    Html(format!(
                        "<!doctype html><html><body><h1>Example TPP</h1>\
                         <iframe id=\"sca\" src=\"{src}\" width=\"900\" height=\"700\">\
                         </iframe></body></html>"
                    ))
                },
            ),
        )
        .route(
            "/callback",
            axum::routing::get(move |RawQuery(q): RawQuery| {
                let record = record.clone();
                async move {
                    record.lock().unwrap().push(q.unwrap_or_default());
                    Html("<!doctype html><html><body><p>TPP callback</p></body></html>")
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let acceptor = psd2_console::sandbox::tls::ServerTls::new(ca.clone())
        .unwrap()
        .acceptor(&["localhost".to_string()])
        .unwrap();
    tokio::spawn(psd2_console::http_server::serve_tls(
        listener,
        app,
        Some(acceptor),
        std::future::pending(),
    ));
    (format!("https://localhost:{port}"), seen)
}

/// The sandbox over TLS; a TPP page on another site frames the consent's scaRedirect; the
/// PSU completes the SCA inside the frame, which ends on the TPP's callback.
async fn sca_in_frame(driver_bin: &Path, chromium: &Path) {
    let ca = psd2_console::cert::ca::SandboxCa::generate().unwrap();
    let tls = psd2_console::sandbox::tls::ServerTls::new(ca.clone()).unwrap();
    let mut sb = TestSandbox::start_with(psd2_console::sandbox::SandboxConfig {
        tls: Some(tls),
        ..Default::default()
    })
    .await;
    assert!(sb.base.starts_with("https://127.0.0.1:"), "{}", sb.base);
    sb.http = reqwest::Client::builder()
        .no_gzip()
        .redirect(reqwest::redirect::Policy::none())
        .tls_certs_only([reqwest::Certificate::from_pem(ca.cert_pem().as_bytes()).unwrap()])
        .build()
        .unwrap();
    let (tpp, callbacks) = tpp_site(&ca).await;

    let customers = sb.send("GET", "/v1/sandbox/customers", &[], None).await;
    assert_eq!(customers.status, 200, "{}", customers.text);
    let number = common::private_customer_number(&customers.json);
    let callback = format!("{tpp}/callback");
    let first = sb
        .send(
            "GET",
            "/v1/accounts",
            &[("TPP-Redirect-URI", &callback)],
            None,
        )
        .await;
    assert_eq!(first.status, 401, "{}", first.text);
    let sca = first.sca_redirect().expect("a scaRedirect").to_string();

    let driver = start_driver(driver_bin).await;
    let profile = tempfile::tempdir().expect("a profile dir");
    let browser = start_browser_with(
        &driver,
        chromium,
        profile.path(),
        &["--ignore-certificate-errors"],
    )
    .await;
    let page = format!(
        "{tpp}/tpp?sca={}",
        percent_encoding::utf8_percent_encode(&sca, percent_encoding::NON_ALPHANUMERIC)
    );
    browser.goto(&page).await.expect("open the TPP page");
    browser.enter_frame(0).await.expect("enter the SCA frame");
    for _ in 0..10 {
        let url = frame_url(&browser).await;
        if url.starts_with(&callback) {
            break;
        }
        assert!(url.starts_with(&sb.base), "the frame left for {url}");
        if let Ok(input) = browser
            .find(Locator::Css("input[name=customerNumber]"))
            .await
        {
            input.send_keys(&number).await.expect("type");
            let login = browser
                .find(Locator::Css(
                    "form#login button[type=submit]:not([value=cancel])",
                ))
                .await
                .expect("the Log in button");
            click_and_wait(&browser, &login).await;
            continue;
        }
        if let Ok(private) = browser
            .find(Locator::Css(
                "input[type=radio][name=context][value=PRIVATE]",
            ))
            .await
        {
            private.click().await.expect("choose PRIVATE");
        }
        let boxes = browser
            .find_all(Locator::Css("input[type=checkbox]"))
            .await
            .unwrap_or_default();
        let mut any = false;
        for b in &boxes {
            any |= b.is_selected().await.unwrap_or(false);
        }
        if !any && let Some(b) = boxes.first() {
            b.click().await.expect("tick an account");
        }
        let html = browser.source().await.unwrap_or_default();
        let html = html
            .rsplit("</style>")
            .next()
            .unwrap_or_default()
            .to_string();
        assert!(
            click_button(&browser, &["approve", "confirm", "continue", "next"]).await,
            "no approve/continue button in the frame at {url}:\n{html}"
        );
    }
    let url = frame_url(&browser).await;
    assert!(url.starts_with(&callback), "the frame ended on {url}");
    let top = browser.current_url().await.expect("the top page");
    assert!(
        top.as_str().starts_with(&format!("{tpp}/tpp")),
        "the TPP page stayed: {top}"
    );
    let seen = callbacks.lock().unwrap().clone();
    assert!(
        seen.iter().any(|q| q.contains("psu-id=")),
        "the TPP's callback got the SCA's success: {seen:?}"
    );

    let _ = browser.close().await;
    drop(driver);
    sb.stop().await;
}
