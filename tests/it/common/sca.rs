//! SCA in the sandbox's HTML pages, shared by the sandbox test files: log in, choose the
//! context, tick the consent, press a button, read the redirect to the TPP.

#![allow(dead_code)]

use std::time::SystemTime;

use psd2_console::sandbox::{Clock, SandboxConfig};
use psd2_console::xs2a::redirect::{ScaCallback, ScaSuccess};

use super::sandbox::TestSandbox;
use super::{Form, browser};

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
        let mut mine = Form {
            method: f.method.clone(),
            action: f.action.clone(),
            fields: f.fields.clone(),
            unchecked: f.unchecked.clone(),
            buttons: Vec::new(),
        };
        tick(&mut mine);
        f.fields = mine.fields;
        f.unchecked = mine.unchecked;
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
