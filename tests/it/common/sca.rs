//! SCA in the sandbox's HTML pages, shared by the sandbox test files: log in, choose the
//! context, tick the consent, press a button, read the redirect to the TPP.

#![allow(dead_code)]

use std::time::SystemTime;

use psd2_console::sandbox::{Clock, SandboxConfig};
use psd2_console::xs2a::redirect::{ScaCallback, ScaSuccess};

use super::sandbox::REDIRECT;
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

/// Completes the SCA at `href` in the HTML pages with the library's headless browser
/// ([`psd2_console::client::headless_sca::walk`], the walk `sca complete` does) in the shared
/// [`browser`]: logs in as `number`, chooses `context` when asked (`PRIVATE` or
/// `CORPORATE:{agreement}`), lets `tick` adjust the consent form and presses `button`
/// (`Approve`, or `Cancel`/`Reject`); returns the redirect to the TPP.
pub async fn complete(
    href: &str,
    number: &str,
    context: &str,
    tick: impl Fn(&mut Form),
    button: &str,
) -> String {
    use psd2_console::client::headless_sca::{self as headless, AccountChoice, Context, ScaPlan};
    let reject = match button.to_ascii_lowercase().as_str() {
        "approve" => false,
        "cancel" | "reject" => true,
        other => panic!("no button {other:?} on the SCA pages (Approve, Cancel, Reject)"),
    };
    let plan = ScaPlan {
        customer: number.to_string(),
        context: match context.strip_prefix("CORPORATE:") {
            Some(agreement) => Context::Corporate(agreement.to_string()),
            None => Context::Private,
        },
        accounts: AccountChoice::AsOffered,
        reject,
    };
    let adjust = |f: &mut headless::Form| {
        let mut mine = Form(f.clone());
        tick(&mut mine);
        *f = mine.0;
    };
    headless::walk(&browser(), href, &plan, adjust)
        .await
        .unwrap_or_else(|e| panic!("no redirect to the TPP after SCA at {href}: {e}"))
}

/// Completes the SCA at `href` as the private customer `number` with every offered account
/// and card account ticked, approved; returns the redirect to the TPP ([`complete`] with
/// `PRIVATE`, [`tick_all`] and `Approve`).
pub async fn complete_sca(href: &str, number: &str) -> String {
    complete(href, number, "PRIVATE", tick_all, "Approve").await
}

/// The form on the page `resp` answered (which must be 200) whose action ends with
/// `action_suffix` (e.g. `/decision`); panics when there is none.
pub async fn form_on(resp: reqwest::Response, action_suffix: &str) -> Form {
    assert_eq!(resp.status(), 200, "{}", resp.url());
    let url = resp.url().to_string();
    let html = resp.text().await.unwrap();
    forms(&html, &url)
        .into_iter()
        .find(|f| f.action.ends_with(action_suffix))
        .unwrap_or_else(|| panic!("no form to {action_suffix} on {url}: {html}"))
}

/// Opens the payment SCA page `sca` (which must answer 200) in the shared [`browser`], logs
/// in as `number` and returns the response to the login post.
pub async fn sca_login(sca: &str, number: &str) -> reqwest::Response {
    let b = browser();
    let mut f = form_on(b.get(sca).send().await.unwrap(), "/login").await;
    assert!(
        f.fields.iter().any(|(n, _)| n == "customerNumber"),
        "a login form"
    );
    f.set("customerNumber", number);
    f.submit(&b, "Log in").await
}

/// [`sca_login`] as `number`, then presses `button` (`Approve` or `Reject`) on the decision
/// form; returns the final response.
pub async fn sca_decide(sca: &str, number: &str, button: &str) -> reqwest::Response {
    let f = form_on(sca_login(sca, number).await, "/decision").await;
    f.submit(&browser(), button).await
}

/// The SCA outcome of `resp`, which must be a 302 to the TPP's [`REDIRECT`].
pub fn callback_of(resp: &reqwest::Response) -> ScaCallback {
    assert_eq!(resp.status(), 302, "a redirect to the TPP");
    let loc = location(resp);
    assert!(loc.starts_with(REDIRECT), "{loc}");
    callback(&loc)
}

/// Asserts that logging in as `number` on the payment SCA page `sca` is refused with 400
/// because the payment is bound to another customer.
pub async fn assert_bound_to_another_customer(sca: &str, number: &str) {
    let resp = sca_login(sca, number).await;
    assert_eq!(resp.status(), 400);
    assert!(resp.text().await.unwrap().contains("another customer"));
}
