//! The real binary in a real terminal: each test starts `psd2-console` in a detached tmux
//! session (its own tmux server socket, 160×48), drives it with `send-keys` and reads the
//! screen with `capture-pane`, then quits with `q` and checks that the process exited and
//! the terminal was restored (primary screen, cursor shown, cooked mode).
//!
//! Skipped (with a message) when tmux is not installed.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// How long the console may take to show something (first run generates a certificate).
const PATIENCE: Duration = Duration::from_secs(60);
const STEP: Duration = Duration::from_millis(200);
const EXIT_MARKER: &str = "console-exited-with-";

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A tmux server and session of one test; both are killed on drop, whatever happened.
struct Tmux {
    socket: String,
    session: String,
    _home: tempfile::TempDir,
}

impl Tmux {
    /// Starts the console in a new detached session. After the console exits the shell
    /// prints the exit status and the terminal modes (`stty -a`) and waits, so the pane
    /// stays readable.
    fn start(test: &str) -> Tmux {
        let home = tempfile::tempdir().expect("temp dir");
        let unique = format!(
            "psd2c-{}-{}-{}",
            test,
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        let bin = env!("CARGO_BIN_EXE_psd2-console");
        let script = format!(
            "env PSD2_CONSOLE_HOME={} {}; echo {EXIT_MARKER}$?; stty -a; sleep 300",
            shell_quote(&home.path().display().to_string()),
            shell_quote(bin),
        );
        let t = Tmux {
            socket: unique.clone(),
            session: unique,
            _home: home,
        };
        let out = t.tmux(&[
            "new-session",
            "-d",
            "-s",
            &t.session,
            "-x",
            "160",
            "-y",
            "48",
            &script,
        ]);
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        t
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("run tmux")
    }

    fn capture(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-t", &self.session]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn display(&self, format: &str) -> String {
        let out = self.tmux(&["display-message", "-p", "-t", &self.session, format]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Sends tmux key names (`Down`, `Escape`, `s`, ...), one `send-keys` call each with a
    /// short pause, so that Escape is never read together with the next key as Alt-key.
    fn keys(&self, keys: &[&str]) {
        for k in keys {
            let out = self.tmux(&["send-keys", "-t", &self.session, k]);
            assert!(out.status.success(), "send-keys {k} failed");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Polls the screen until `done` holds (bounded), returning that screen.
    fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if done(&screen) {
                return screen;
            }
            if start.elapsed() > PATIENCE {
                panic!("gave up waiting for {what}; the screen was:\n{screen}");
            }
            std::thread::sleep(STEP);
        }
    }

    fn wait_for_console(&self) -> String {
        self.wait_for("the operation list", |s| {
            s.contains("Operations")
                && s.contains("List accounts")
                && s.contains("Signature inspector")
        })
    }

    /// Presses `q` and checks the process exited with 0 and left the terminal as it found
    /// it: primary screen, cursor visible, canonical mode with echo.
    fn quit_and_check_restored(&self) {
        self.keys(&["q"]);
        let screen = self.wait_for("the console to exit", |s| s.contains(EXIT_MARKER));
        assert!(
            screen.contains(&format!("{EXIT_MARKER}0")),
            "exit status not 0:\n{screen}"
        );
        let screen = self.wait_for("stty output", |s| s.contains("icanon"));
        let modes: Vec<&str> = screen.split_whitespace().collect();
        assert!(
            modes.contains(&"icanon") && !modes.contains(&"-icanon"),
            "raw mode left on:\n{screen}"
        );
        assert!(
            modes.contains(&"echo") && !modes.contains(&"-echo"),
            "echo left off:\n{screen}"
        );
        assert_eq!(
            self.display("#{alternate_on}"),
            "0",
            "alternate screen left on"
        );
        assert_eq!(self.display("#{cursor_flag}"), "1", "cursor left hidden");
        assert!(
            !screen.contains("Signature inspector"),
            "console still drawn:\n{screen}"
        );
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-session", "-t", &self.session]);
        let _ = self.tmux(&["kill-server"]);
    }
}

macro_rules! require_tmux {
    () => {
        if !tmux_available() {
            eprintln!("skipped: tmux is not installed");
            return;
        }
        assert!(Path::new(env!("CARGO_BIN_EXE_psd2-console")).exists());
    };
}

fn crate_operations_count() -> usize {
    psd2_console::xs2a::operations::OPERATIONS.len() + 8
}

#[test]
fn sandbox_customers_are_listed_and_q_restores_the_terminal() {
    require_tmux!();
    let t = Tmux::start("customers");
    t.wait_for_console();
    // Walk down the catalogue until "Sandbox customers" is selected (bounded).
    let selected = |s: &str| {
        s.lines()
            .any(|l| l.contains("▸ GET") && l.contains("Sandbox customers"))
            && s.contains("/v1/sandbox/customers")
    };
    for _ in 0..crate_operations_count() {
        if selected(&t.capture()) {
            break;
        }
        t.keys(&["Down"]);
    }
    t.wait_for("Sandbox customers selected", selected);
    t.keys(&["s"]);
    let screen = t.wait_for("the 200 response", |s| s.contains("200 OK"));
    assert!(screen.contains("Response · Sandbox customers"), "{screen}");
    assert!(screen.contains("Request · as sent"), "{screen}");
    t.quit_and_check_restored();
    // The console recorded the exchange in the history (Signature redacted).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_psd2-console"))
        .env("PSD2_CONSOLE_HOME", t._home.path())
        .args(["export", "--format", "har", "last"])
        .output()
        .unwrap();
    let har = String::from_utf8_lossy(&out.stdout);
    assert!(har.contains("/v1/sandbox/customers"), "{har}");
    assert!(
        har.contains("[redacted]") && !har.contains("signature=\""),
        "{har}"
    );
}

#[test]
fn list_accounts_gets_401_and_the_sca_prompt() {
    require_tmux!();
    let t = Tmux::start("accounts");
    let screen = t.wait_for_console();
    assert!(screen.contains("no PSU yet"), "{screen}");
    assert!(
        screen
            .lines()
            .any(|l| l.contains("▸ GET") && l.contains("List accounts")),
        "List accounts is selected first:\n{screen}"
    );
    t.keys(&["s"]);
    let screen = t.wait_for("401 and the SCA prompt", |s| {
        s.contains("401") && s.contains("Strong customer authentication")
    });
    assert!(screen.contains("open it in the browser"), "{screen}");
    // q inside the prompt would quit; Esc only closes it.
    t.keys(&["Escape"]);
    t.wait_for("the prompt to close", |s| {
        !s.contains("Strong customer authentication") && s.contains("SCA prompt closed")
    });
    // Typing q while editing a parameter does not quit.
    t.keys(&["Down", "e", "q", "Escape"]);
    let screen = t.wait_for("q typed into account-id", |s| {
        s.lines()
            .any(|l| l.contains("account-id*") && l.contains(" q"))
    });
    assert!(!screen.contains(EXIT_MARKER), "{screen}");
    t.quit_and_check_restored();
}
