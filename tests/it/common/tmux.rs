//! The real binary in a real terminal: `psd2-console` in a detached tmux session (its own
//! tmux server socket, 160×48), driven with `send-keys`, read with `capture-pane`; on quit
//! the shell prints the exit status and the terminal modes so tests can check the terminal
//! was restored. Shared by `tests/tmux_console.rs` and `tests/tmux_profiles.rs`.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// How long the console may take to show something (first run generates a certificate).
pub const PATIENCE: Duration = Duration::from_secs(60);
pub const STEP: Duration = Duration::from_millis(200);
pub const EXIT_MARKER: &str = "console-exited-with-";

pub fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A tmux server and session of one test; both are killed on drop, whatever happened.
pub struct Tmux {
    pub socket: String,
    pub session: String,
    /// The console's `PSD2_CONSOLE_HOME`, removed on drop.
    pub home: tempfile::TempDir,
}

impl Tmux {
    /// Starts the console in a new detached session. After the console exits the shell
    /// prints the exit status and the terminal modes (`stty -a`) and waits, so the pane
    /// stays readable.
    pub fn start(test: &str) -> Tmux {
        Tmux::start_in(test, tempfile::tempdir().expect("temp dir"), &[])
    }

    /// [`Tmux::start`] with a home the test has prepared (profiles, certificates) and extra
    /// command-line arguments for the console (e.g. `--profile NAME`).
    pub fn start_in(test: &str, home: tempfile::TempDir, args: &[&str]) -> Tmux {
        let bin = env!("CARGO_BIN_EXE_psd2-console");
        let script = format!(
            "env PSD2_CONSOLE_HOME={} {}{}; echo {EXIT_MARKER}$?; stty -a; sleep 300",
            shell_quote(&home.path().display().to_string()),
            shell_quote(bin),
            args.iter()
                .map(|a| format!(" {}", shell_quote(a)))
                .collect::<String>(),
        );
        Tmux::new_session(test, home, &script)
    }

    /// A shell (bash, no rc files, prompt `$ `) in `home` with `PSD2_CONSOLE_HOME` set to it,
    /// for tests that run several commands of the real binary one after the other.
    pub fn start_shell(test: &str, home: tempfile::TempDir) -> Tmux {
        let script = format!(
            "cd {dir} && env PSD2_CONSOLE_HOME={dir} PS1='$ ' bash --norc --noprofile",
            dir = shell_quote(&home.path().display().to_string()),
        );
        Tmux::new_session(test, home, &script)
    }

    /// A detached session of 160×48 running `script`, on a tmux server of its own.
    fn new_session(test: &str, home: tempfile::TempDir, script: &str) -> Tmux {
        let unique = format!(
            "psd2c-{}-{}-{}",
            test,
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        let t = Tmux {
            socket: unique.clone(),
            session: unique,
            home,
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
            script,
        ]);
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        t
    }

    /// Runs `tmux args` on this test's server. The server (started by the first call)
    /// passes `PSD2_CONSOLE_FREE_PORTS=1` to everything it runs: the embedded sandbox and the
    /// callback listener of each console take free ports, so tests run in parallel.
    pub fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .env_remove("TMUX")
            .env("PSD2_CONSOLE_FREE_PORTS", "1")
            .output()
            .expect("run tmux")
    }

    pub fn capture(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-t", &self.session]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn display(&self, format: &str) -> String {
        let out = self.tmux(&["display-message", "-p", "-t", &self.session, format]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Sends tmux key names (`Down`, `Escape`, `s`, ...), one `send-keys` call each with a
    /// short pause, so that Escape is never read together with the next key as Alt-key.
    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            let out = self.tmux(&["send-keys", "-t", &self.session, k]);
            assert!(out.status.success(), "send-keys {k} failed");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Polls the screen until `done` holds (bounded), returning that screen.
    pub fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
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

    pub fn wait_for_console(&self) -> String {
        self.wait_for("the operation list", |s| {
            s.contains("Operations")
                && s.contains("List accounts")
                && s.contains("Signature inspector")
        })
    }

    /// Presses `q` and checks the process exited with 0 and left the terminal as it found
    /// it: primary screen, cursor visible, canonical mode with echo.
    pub fn quit_and_check_restored(&self) {
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

/// When tmux tests can run here ([`ready`]): the console started with `args` on a new home
/// ([`Tmux::start_in`]); otherwise `None` (the test is skipped).
pub fn start_if_ready(test: &str, args: &[&str]) -> Option<Tmux> {
    ready().then(|| Tmux::start_in(test, tempfile::tempdir().expect("temp dir"), args))
}

/// [`start_if_ready`] with no arguments, once the console shows its operation list
/// ([`Tmux::wait_for_console`]).
pub fn console_if_ready(test: &str) -> Option<Tmux> {
    let t = start_if_ready(test, &[])?;
    t.wait_for_console();
    Some(t)
}

/// Whether a line of the captured `screen` shows the operation `method summary` selected
/// in the catalogue (the line holds `▸ {method}` and `summary`).
pub fn shows_selected(screen: &str, method: &str, summary: &str) -> bool {
    let marker = format!("▸ {method}");
    screen
        .lines()
        .any(|l| l.contains(&marker) && l.contains(summary))
}

/// Whether tmux tests can run here: false (with a message) when tmux is not installed.
pub fn ready() -> bool {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed");
        return false;
    }
    assert!(Path::new(env!("CARGO_BIN_EXE_psd2-console")).exists());
    true
}

impl Tmux {
    /// Types `text` literally (no key-name lookup).
    pub fn type_text(&self, text: &str) {
        let out = self.tmux(&["send-keys", "-t", &self.session, "-l", text]);
        assert!(out.status.success(), "send-keys -l failed");
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Tmux {
    /// Resizes the window to `width`×`height` (a projector's terminal, e.g. 80×24).
    pub fn resize(&self, width: u16, height: u16) {
        let out = self.tmux(&[
            "resize-window",
            "-t",
            &self.session,
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
        assert!(
            out.status.success(),
            "resize-window failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
