//! The sandbox monitor (screen 4) in the real binary: the runner follows the embedded
//! sandbox's event stream, a request sent from the console shows in the log, `+` advances
//! the sandbox clock and the change shows, and `q` still ends the console promptly and
//! restores the terminal while the stream is open.
//!
//! Skipped (with a message) when tmux is not installed.

use crate::common;

use common::tmux::console_if_ready;

#[test]
fn the_monitor_follows_the_embedded_sandbox_and_advances_its_clock() {
    let Some(t) = console_if_ready("monitor") else {
        return;
    };
    t.keys(&["4"]);
    let screen = t.wait_for("the stream and the sandbox's state", |s| {
        s.contains("Event stream live") && s.contains("Faults in effect none")
    });
    // The monitor's own reads, after the subscription, are hidden from the log; m shows
    // them.
    assert!(!screen.contains("/v1/sandbox/clock"), "{screen}");
    assert!(
        screen.contains("reads of the monitor hidden (m shows)"),
        "{screen}"
    );
    t.keys(&["m"]);
    t.wait_for("the monitor's own reads", |s| {
        s.contains("/v1/sandbox/clock")
    });
    t.keys(&["m"]);
    // A request from the console (List accounts, selected first) shows in the log.
    t.keys(&["1", "s"]);
    t.wait_for("the 401 and the SCA prompt", |s| {
        s.contains("Strong customer authentication")
    });
    t.keys(&["Escape", "4"]);
    let screen = t.wait_for("the request in the monitor's log", |s| {
        s.lines()
            .any(|l| l.contains("GET") && l.contains("/v1/accounts ") && l.contains("401"))
    });
    assert!(
        screen.contains("✔ signature verified") || screen.contains("Verifier"),
        "{screen}"
    );
    t.keys(&["+"]);
    t.wait_for("the clock event", |s| {
        s.contains("CLOCK advance") && s.contains("Sandbox clock advanced by 1 h")
    });
    t.quit_and_check_restored();
}
