//! Presenter mode on the real binary (issue 12, item 4): `psd2-console --presenter` in an
//! 80×24 tmux window lists accounts, gets 401 with the SCA prompt (QR code beside the text,
//! the step line saying what the room waits for), the PSU completes SCA in the sandbox's
//! pages over real HTTP, the browser's redirect reaches the console's listener, and List
//! accounts answers 200, all without the PSU-ID on screen in full; `P` shows it again.

use crate::common;

use common::payments::KARI;
use common::sca::{complete, success, tick_all};
use common::tmux::start_if_ready;

/// The scaRedirect as the prompt's text column shows it: the rows after "open:" up to the
/// next empty one, the QR code's columns cut off, joined.
fn prompt_link(screen: &str) -> String {
    screen
        .lines()
        .skip_while(|l| !l.contains("open:"))
        .skip(2)
        .map(|l| {
            let inside = l.trim_start_matches('║').trim_start();
            let end = inside.find(['█', '▀', '▄', '║']).unwrap_or(inside.len());
            inside[..end].trim().to_string()
        })
        .take_while(|l| !l.is_empty())
        .collect()
}

#[test]
fn a_presenter_runs_the_sca_flow_at_80x24_without_the_psu_id_on_screen() {
    let Some(t) = start_if_ready("presenter", &["--presenter"]) else {
        return;
    };
    t.resize(80, 24);
    let screen = t.wait_for("the console in presenter mode", |s| {
        s.contains("List accounts") && s.contains("Step: no PSU yet")
    });
    assert!(
        screen.contains("Signature inspector · Tab shows it"),
        "{screen}"
    );

    t.keys(&["s"]);
    let screen = t.wait_for("401 and the SCA prompt with its QR code", |s| {
        s.contains("List accounts: 401 Unauthorized") && s.contains("█████████████")
    });
    assert!(!screen.contains("A QR code of this link needs"), "{screen}");
    // The 80×24 layout: the prompt spans the window, the QR code beside its text.
    assert_eq!(screen.lines().count(), 24, "{screen}");
    let frame = screen
        .lines()
        .find(|l| l.contains("Strong customer authentication"))
        .unwrap();
    assert_eq!(frame.chars().count(), 80, "{screen}");
    assert!(
        screen
            .lines()
            .any(|l| l.contains("List accounts: 401") && l.contains("█████")),
        "{screen}"
    );
    let link = prompt_link(&screen);
    assert!(link.contains("/sca/"), "{link}\n{screen}");

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let to_console = runtime.block_on(complete(&link, KARI, "PRIVATE", tick_all, "Approve"));
    let psu_id = success(&to_console).psu_id;
    // The browser follows the redirect to the console's listener.
    let status = runtime.block_on(async {
        common::browser()
            .get(&to_console)
            .send()
            .await
            .unwrap()
            .status()
    });
    assert!(status.is_success(), "{status}");
    let short: String = psu_id.chars().take(2).collect();
    let screen = t.wait_for("the SCA result", |s| s.contains("Step: SCA complete"));
    assert!(!screen.contains(&psu_id), "PSU-ID in full:\n{screen}");
    assert!(screen.contains(&format!("PSU-ID {short}…")), "{screen}");

    t.keys(&["s"]);
    let screen = t.wait_for("the account list", |s| {
        s.contains("200 OK") && s.contains("Step: List accounts answered 200 OK")
    });
    assert!(!screen.contains(&psu_id), "PSU-ID in full:\n{screen}");
    assert!(screen.contains("\"accounts\""), "{screen}");

    // P: presenter mode off, the values in full again.
    t.keys(&["P"]);
    let screen = t.wait_for("presenter mode off", |s| s.contains("Presenter mode off"));
    assert!(screen.contains(&psu_id), "{screen}");
    t.quit_and_check_restored();
}
