//! Teaching on the real binary: `--lesson` opens the console giving a lesson, the step's
//! operation is selected, SCA is completed in the embedded sandbox's pages over HTTP, and
//! the flow screen (`5`) shows the browser's steps the console saw on the sandbox's event
//! stream; after quitting, `psd2-console flow` shows them from the history.

use crate::common::console::KARI;
use crate::common::tmux::{EXIT_MARKER, shows_selected, start_if_ready};

/// The scaRedirect of the newest exchange in the history of `home`.
fn last_sca_redirect(home: &std::path::Path) -> String {
    let h = psd2_console::client::history::History::open_existing(
        &home.join("data").join("history.sqlite3"),
    )
    .unwrap();
    let last = h.last().unwrap().expect("an exchange");
    let body: serde_json::Value = serde_json::from_slice(&last.response_body).unwrap();
    body["_links"]["scaRedirect"]["href"]
        .as_str()
        .unwrap_or_else(|| panic!("no scaRedirect in {body}"))
        .to_string()
}

#[test]
fn a_lesson_runs_in_the_real_console_and_the_flow_screen_shows_the_browser_steps() {
    let Some(t) = start_if_ready("lesson", &["--lesson", "ais-bank-offered-consent"]) else {
        return;
    };
    let screen = t.wait_for("the lesson panel", |s| {
        s.contains("Lesson: Account information with a bank-offered consent")
    });
    assert!(screen.contains("Step 1 of 5"), "{screen}");
    assert!(
        shows_selected(&screen, "POST", "Bank-offered consen"),
        "the step selected its operation:\n{screen}"
    );
    t.keys(&["s"]);
    t.wait_for("201 and the SCA prompt", |s| {
        s.contains("201") && s.contains("Strong customer authentication")
    });
    t.keys(&["]"]);
    t.wait_for("step 2", |s| s.contains("Step 2 of 5"));
    // The PSU completes SCA in the browser: the redirect reaches the console's listener.
    let href = last_sca_redirect(t.home.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let to_tpp = crate::common::sca::complete(
            &href,
            KARI,
            "PRIVATE",
            crate::common::sca::tick_all,
            "Approve",
        )
        .await;
        let landing = crate::common::browser().get(&to_tpp).send().await.unwrap();
        assert_eq!(landing.status(), 200);
    });
    t.wait_for("the PSU-ID learned", |s| !s.contains("no PSU yet"));
    t.keys(&["]"]);
    t.wait_for("step 3 selects List accounts", |s| {
        s.contains("Step 3 of 5") && shows_selected(s, "GET", "List accounts")
    });
    t.keys(&["s"]);
    t.wait_for("200", |s| s.contains("200 OK"));
    t.keys(&["5"]);
    let flow = t.wait_for("the flow screen with the browser's steps", |s| {
        s.contains("POST login (customerNumber)") && s.contains("GET /v1/accounts + PSU-ID")
    });
    assert!(
        flow.contains("POST consent (accounts ticked) → 302"),
        "{flow}"
    );
    assert!(flow.contains("SCA session"), "{flow}");
    assert!(!flow.contains(EXIT_MARKER), "{flow}");
    t.quit_and_check_restored();
    // The browser's steps were stored with the history.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_psd2-console"))
        .env("PSD2_CONSOLE_HOME", t.home.path())
        .args(["flow"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("POST login (customerNumber) → 200"), "{text}");
    assert!(text.contains("psu-id learned"), "{text}");
}
