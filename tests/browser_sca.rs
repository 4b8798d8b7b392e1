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
    let caps = json!({
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
