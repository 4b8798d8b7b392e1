//! Issue 18, cause D, on the real binary: the console open in tmux on a home, and
//! `psd2-console send ...` in another process on the same home beside it. The commands use
//! the console's embedded sandbox (its port is taken by the console) and a free port for
//! their own callback listener: `send accounts.list` completes its SCA through that
//! listener and prints the accounts; `send payments.instant.create --no-wait` prints a link
//! that still opens after the command has ended, because the console's sandbox serves it.
//!
//! Skipped (with a message) when tmux is not installed.

use crate::common;

use std::process::Stdio;

use common::cli::{BIN, free_port};
use common::tmux::{Tmux, ready};

const KARI: &str = "31125461118";

/// A home with a profile `Beside` on the embedded sandbox at fixed free ports.
fn home_with_profile(sandbox_port: u16, callback_port: u16) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("config/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("beside.toml"),
        format!(
            "name = \"Beside\"\ntarget = \"embedded\"\nsandbox_port = {sandbox_port}\n\
             callback_port = {callback_port}\npsu_ip_address = \"127.0.0.1\"\n"
        ),
    )
    .unwrap();
    home
}

/// `psd2-console args` on `home`, headless, its pipes taken.
fn command(home: &std::path::Path, args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new(BIN);
    c.env("PSD2_CONSOLE_HOME", home)
        .env_remove("PSD2_CONSOLE_FREE_PORTS")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("BROWSER")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_beside_the_console_use_its_sandbox_and_their_links_stay_valid() {
    if !ready() {
        return;
    }
    let (sandbox_port, callback_port) = (free_port(), free_port());
    let home = home_with_profile(sandbox_port, callback_port);
    let dir = home.path().to_path_buf();
    let t = Tmux::start_in("beside", home, &["--profile", "Beside"]);
    let screen = t.wait_for_console();
    assert!(screen.contains("Beside"), "{screen}");
    let base = format!("http://127.0.0.1:{sandbox_port}");

    // 1. send accounts.list: SCA through the command's own listener, then the accounts.
    let mut child = command(&dir, &["send", "accounts.list", "--profile", "Beside"])
        .spawn()
        .unwrap();
    let mut stderr = common::cli::StderrLines::of(&mut child);
    let href = stderr.sca_link();
    assert!(
        stderr.seen.iter().any(|l| l.contains(&format!(
            "using the embedded sandbox of the psd2-console running on this data directory ({base})"
        ))),
        "{:?}",
        stderr.seen
    );
    assert!(href.starts_with(&format!("{base}/")), "{href}");
    let to_tpp =
        common::sca::complete(&href, KARI, "PRIVATE", common::sca::tick_all, "Approve").await;
    assert!(to_tpp.starts_with("http://127.0.0.1:"), "{to_tpp}");
    assert!(
        !to_tpp.starts_with(&format!("http://127.0.0.1:{callback_port}/")),
        "the command's listener is not on the console's callback port: {to_tpp}"
    );
    let out = common::cli::land_and_wait(&to_tpp, child).await;
    let rest = stderr.rest();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{:?}\n{rest:?}",
        stderr.seen
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        v["accounts"].as_array().is_some_and(|a| !a.is_empty()),
        "{v}"
    );

    // 2. An SCA-needing send with --no-wait: its link outlives the command.
    let out = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || {
            command(
                &dir,
                &[
                    "send",
                    "payments.instant.create",
                    "--profile",
                    "Beside",
                    "--no-wait",
                    "--param",
                    "allowLogicalDuplicate=true",
                ],
            )
            .output()
            .unwrap()
        }
    })
    .await
    .unwrap();
    let (code, stdout, stderr) = common::cli::outcome(out);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let link = stderr
        .lines()
        .find_map(|l| l.strip_prefix("SCA needed: "))
        .unwrap_or_else(|| panic!("no link: {stderr}"))
        .to_string();
    assert!(link.starts_with(&format!("{base}/")), "{link}");
    assert!(
        stderr.contains("stays valid while the console runs"),
        "{stderr}"
    );
    assert!(!stderr.contains("dies with this command"), "{stderr}");
    let page = common::browser().get(&link).send().await.unwrap();
    assert_eq!(page.status(), 200, "the link opens after the command ended");
    assert!(page.text().await.unwrap().contains("customerNumber"));

    // The console is still there, and quits cleanly.
    let screen = t.capture();
    assert!(screen.contains("Operations"), "{screen}");
    t.quit_and_check_restored();
}
