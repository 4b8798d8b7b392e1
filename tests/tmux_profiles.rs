//! The real binary in tmux: create a profile on the profiles screen with a generated test
//! certificate (press 2, n, type the name and target, Ctrl-g, Enter), then check the
//! profile file, the 0600 key file, and that `psd2-console profile list` shows it.
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
    home: tempfile::TempDir,
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

impl Tmux {
    /// Types `text` literally (no key-name lookup).
    fn type_text(&self, text: &str) {
        let out = self.tmux(&["send-keys", "-t", &self.session, "-l", text]);
        assert!(out.status.success(), "send-keys -l failed");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn create_a_profile_with_a_generated_certificate() {
    require_tmux!();
    let t = Tmux::start("profiles");
    t.wait_for_console();
    t.keys(&["2"]);
    t.wait_for("the profiles screen", |s| {
        s.contains("[built-in] read-only") && s.contains("Remote sandbox example")
    });
    t.keys(&["n"]);
    t.wait_for("the form", |s| {
        s.contains("New profile") && s.contains("Client cert (QWAC)")
    });
    t.type_text("Tmux bank");
    t.keys(&["Tab"]);
    t.type_text("https://bank.example");
    t.keys(&["C-g"]);
    t.wait_for("the generated certificate", |s| {
        s.contains("Test certificate (PSP_AI, PSP_PI) written")
    });
    t.keys(&["Enter"]);
    let screen = t.wait_for("the saved profile", |s| s.contains("Saved Tmux bank"));
    assert!(screen.contains("✓ matches the certificate"), "{screen}");
    assert!(screen.contains("PSP_AI, PSP_PI"), "{screen}");

    let home = t.home.path();
    let file = home.join("config/profiles/tmux-bank.toml");
    let text = std::fs::read_to_string(&file).expect("profile file");
    assert!(text.contains("name = \"Tmux bank\""), "{text}");
    assert!(text.contains("target = \"https://bank.example\""), "{text}");
    let key = home.join("data/certs/tmux-bank.key");
    assert!(text.contains(&key.display().to_string()), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "key file mode");
    }
    assert!(!text.contains("PRIVATE KEY"));

    let out = Command::new(env!("CARGO_BIN_EXE_psd2-console"))
        .args(["profile", "list"])
        .env("PSD2_CONSOLE_HOME", home)
        .output()
        .expect("profile list");
    assert!(out.status.success());
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(
        list.lines().any(|l| l.starts_with("Tmux bank")),
        "profile list:\n{list}"
    );
    t.quit_and_check_restored();
}
