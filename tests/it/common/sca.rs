//! SCA in the sandbox's HTML pages, shared by the sandbox test files: log in, choose the
//! context, tick the consent, press a button, read the redirect to the TPP.

#![allow(dead_code)]

use std::time::SystemTime;

use psd2_console::sandbox::{Clock, SandboxConfig};
use psd2_console::xs2a::redirect::{ScaCallback, ScaSuccess};

use super::sandbox::TestSandbox;
use super::{Form, browser, forms, location};

/// A test sandbox on a fixed clock (tests move it with `clock.advance`).
pub async fn fixed_sandbox() -> TestSandbox {
    TestSandbox::start_with(SandboxConfig {
        clock: Clock::fixed(SystemTime::now()),
        ..SandboxConfig::default()
    })
    .await
}

/// The SCA outcome carried by a redirect `Location` to the TPP.
pub fn callback(loc: &str) -> ScaCallback {
    let url = url::Url::parse(loc).unwrap();
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    ScaCallback::from_query_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).unwrap()
}

/// [`callback`], which must be a success.
pub fn success(loc: &str) -> ScaSuccess {
    match callback(loc) {
        ScaCallback::Success(s) => s,
        other => panic!("not a success: {other:?}"),
    }
}

/// Ticks every account and card account box.
pub fn tick_all(f: &mut Form) {
    for (n, v) in f.unchecked.clone() {
        if n == "account" || n == "cardAccount" {
            f.check(&n, &v);
        }
    }
}

/// Completes the SCA at `href` in the HTML pages: logs in as `number`, chooses `context`
/// when asked (`PRIVATE` or `CORPORATE:{agreement}`), lets `tick` adjust the consent form and
/// presses `button`; returns the redirect to the TPP.
pub async fn complete(
    href: &str,
    number: &str,
    context: &str,
    tick: impl Fn(&mut Form),
    button: &str,
) -> String {
    let web = browser();
    let r = web.get(href).send().await.unwrap();
    assert_eq!(r.status(), 200, "SCA page {href}");
    let url = r.url().to_string();
    let html = r.text().await.unwrap();
    let mut login = forms(&html, &url)
        .into_iter()
        .find(|f| f.fields.iter().any(|(n, _)| n == "customerNumber"))
        .expect("a login form");
    login.set("customerNumber", number);
    let mut resp = login.submit(&web, "Log in").await;
    for _ in 0..3 {
        if resp.status().is_redirection() {
            return location(&resp);
        }
        let status = resp.status();
        let url = resp.url().to_string();
        let html = resp.text().await.unwrap();
        assert_eq!(status, 200, "{url}: {html}");
        let mut f = forms(&html, &url).remove(0);
        if f.fields
            .iter()
            .chain(&f.unchecked)
            .any(|(n, _)| n == "context")
        {
            f.choose("context", context);
            resp = f.submit(&web, "Continue").await;
        } else {
            tick(&mut f);
            resp = f.submit(&web, button).await;
        }
    }
    panic!("no redirect to the TPP after SCA at {href}");
}
