//! The console's start (issue 23): the first frame is drawn before the embedded sandbox
//! starts (its SQLite, seed data and HTTP server come after, beside the event loop), and a
//! send asked for before the sandbox is up waits for it instead of failing. Checked from the
//! order of the console's own log lines and the answer on screen, never from timings.
//!
//! Skipped (with a message) when tmux is not installed.

use crate::common;

use common::tmux::{Tmux, ready};

/// The 0-based line of `console.log` (under the home's data directory) that contains
/// `text`; panics with the log when there is none.
fn log_line(log: &str, text: &str) -> usize {
    log.lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no {text:?} in console.log:\n{log}"))
}

#[test]
fn the_first_frame_comes_before_the_sandbox_and_a_send_pressed_at_once_waits_for_it() {
    if !ready() {
        return;
    }
    let t = Tmux::start("startorder");
    // Pressed at once: the key waits in the terminal until the console reads it, right
    // after its first frame, while the sandbox is still starting. It must be sent once the
    // sandbox is up (List accounts, the first operation: 401 and the SCA prompt), not fail.
    t.keys(&["s"]);
    let screen = t.wait_for("the answer of the send pressed at once", |s| {
        s.contains("401") && s.contains("Strong customer authentication")
    });
    assert!(!screen.contains("Not sent"), "{screen}");
    assert!(
        !screen.contains("Embedded sandbox starting"),
        "the status line still says the sandbox is starting:\n{screen}"
    );
    t.keys(&["Escape"]);
    t.quit_and_check_restored();
    let log = std::fs::read_to_string(t.home.path().join("data/console.log")).unwrap();
    let frame = log_line(&log, "console: first frame drawn");
    let network = log_line(&log, "console: network started");
    assert!(
        frame < network,
        "the sandbox started before the first frame:\n{log}"
    );
    // The send went out after the sandbox was up (the SCA flow it started is logged by
    // the sender after the answer).
    assert!(
        !log.contains("error sending request"),
        "the send failed instead of waiting:\n{log}"
    );
}

/// The console asks the terminal nothing before its first frame: no cursor-position query
/// (`ESC [6n`, which `Terminal::clear` sent and then waited for the terminal's answer, a
/// round trip through tmux's server before the first frame; issue 23). Read from the bytes
/// the console wrote to the pane (`tmux pipe-pane -O`), up to its quit.
#[test]
fn the_start_asks_the_terminal_nothing() {
    if !ready() {
        return;
    }
    let t = Tmux::start_shell("startquery", tempfile::tempdir().expect("temp dir"));
    // (capture-pane drops the prompt's trailing space.)
    t.wait_for("the shell prompt", |s| {
        s.lines().any(|l| l.trim_end() == "$")
    });
    let written = t.home.path().join("pane-output");
    let pipe = format!(
        "cat > {}",
        common::tmux::shell_quote(&written.display().to_string())
    );
    let out = t.tmux(&["pipe-pane", "-O", "-t", &t.session, &pipe]);
    assert!(out.status.success(), "pipe-pane failed");
    let bin = common::tmux::shell_quote(env!("CARGO_BIN_EXE_psd2-console"));
    t.type_text(&format!("{bin}; echo console-done"));
    t.keys(&["Enter"]);
    t.wait_for_console();
    t.keys(&["q"]);
    t.wait_for("the console to exit", |s| {
        s.lines().any(|l| l.trim() == "console-done")
    });
    let out = t.tmux(&["pipe-pane", "-t", &t.session]);
    assert!(out.status.success(), "pipe-pane (stop) failed");
    let bytes = std::fs::read(&written).expect("the pane's output");
    let has = |seq: &[u8]| bytes.windows(seq.len()).any(|w| w == seq);
    // What it did write: the alternate screen, cleared, and the first frame.
    assert!(has(b"\x1b[?1049h"), "no alternate screen in the output");
    assert!(has(b"\x1b[2J"), "the screen was not cleared");
    assert!(
        has("List accounts".as_bytes()),
        "no first frame in the output"
    );
    assert!(
        !has(b"\x1b[6n"),
        "the console asked the terminal for its cursor position"
    );
}
