//! The real binary in tmux: create a profile on the profiles screen with a generated test
//! certificate (press 2, n, type the name and target, Ctrl-g, Enter), then check the
//! profile file, the 0600 key file, and that `psd2-console profile list` shows it.
//!
//! Skipped (with a message) when tmux is not installed.

use crate::common;

use std::process::Command;

use common::tmux::console_if_ready;

#[test]
fn create_a_profile_with_a_generated_certificate() {
    let Some(t) = console_if_ready("profiles") else {
        return;
    };
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
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
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
