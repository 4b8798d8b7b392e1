//! The real binary in tmux (its own tmux server socket, 160×48, a temp
//! `PSD2_CONSOLE_HOME`): a `psd2-console sandbox serve` started by the test, a profile
//! targeting it with a certificate made by `cert new`; in the console, the history screen's
//! import (`3`, `i`, the path of the bank's v1 Postman collection, Enter) lists the
//! collection's requests, Enter sends the first one (`POST /v1/consents`) re-signed with the
//! profile, the response shows in the console; back on the history screen the exchange is
//! listed and `x` exports it as cURL, signed afresh, to the data dir (and beside it the four
//! programs that sign when they run); the test runs that cURL
//! command against the served sandbox: exit 0 and HTTP 2xx.
//!
//! Skipped (with a message) when tmux or curl is not installed.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::cli::{serve_in_memory, served_profile};
use common::tmux::{EXIT_MARKER, Tmux, ready};

const PROFILE: &str = "Served sandbox";

fn available(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn collection() -> PathBuf {
    let shared = Path::new("/work/shared/spec/dnb-psd2-v1.postman_collection.json");
    if shared.exists() {
        return shared.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spec/dnb-psd2-v1.postman_collection.json")
}

#[test]
fn import_the_v1_collection_send_a_request_export_it_as_curl_and_run_it() {
    if !ready() {
        return;
    }
    if !available("curl", "--version") {
        eprintln!("skipped: curl is not installed");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (_server, base_url) = serve_in_memory();
    served_profile(home.path(), PROFILE, &base_url);

    let t = Tmux::start_in("import", home, &["--profile", PROFILE]);
    t.wait_for("the console on the served profile", |s| {
        s.contains("Operations") && s.contains(&base_url)
    });

    // History screen, import the collection.
    t.keys(&["3"]);
    t.wait_for("the history screen", |s| s.contains("No exchanges yet"));
    t.keys(&["i"]);
    t.wait_for("the import box", |s| s.contains("Import file"));
    t.type_text(&collection().display().to_string());
    t.keys(&["Enter"]);
    let screen = t.wait_for("the imported requests", |s| s.contains("Imported from"));
    assert!(screen.contains("POST"), "{screen}");
    assert!(screen.contains("/v1/consents"), "{screen}");
    // The first request, POST /v1/consents, is highlighted: send it.
    t.keys(&["Enter"]);
    let screen = t.wait_for("the response in the console", |s| {
        // "Parameters (not sent)" is the form's title after an import send, not an error.
        s.contains("201 Created")
            || s.replace("Parameters (not sent)", "").contains("not sent")
            || s.contains("failed")
    });
    assert!(screen.contains("201 Created"), "{screen}");

    // The consent asks for SCA: close the prompt (not needed for the export).
    if screen.contains("Strong customer authentication") {
        t.keys(&["Escape"]);
        t.wait_for("the SCA prompt to close", |s| {
            !s.contains("Strong customer authentication")
        });
    }

    // Back on the history screen, the exchange is listed; export it as cURL.
    t.keys(&["3"]);
    t.wait_for("the exchange in the history", |s| {
        s.lines()
            .any(|l| l.contains("POST") && l.contains("/v1/consents") && l.contains("201"))
    });
    t.keys(&["x"]);
    let screen = t.wait_for("the cURL export", |s| {
        s.contains("written to") || s.contains("export of")
    });
    assert!(screen.contains("written to"), "{screen}");
    let exports: Vec<PathBuf> = std::fs::read_dir(t.home.path().join("data/exports"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    assert_eq!(exports.len(), 1, "{exports:?}");
    // Beside the script, the programs that sign when they run (issue 22).
    let programs = exports[0].with_extension("");
    for file in ["request.py", "request.mjs", "Main.java", "main.go"] {
        assert!(programs.join(file).is_file(), "{}", programs.display());
    }
    let text = std::fs::read_to_string(&exports[0]).unwrap();
    let command = text.trim_start_matches("#!/bin/sh\n").trim_end();
    assert!(command.starts_with("curl "), "{text}");
    assert!(
        command.contains(&format!("{base_url}/v1/consents")),
        "{text}"
    );
    assert!(
        command.contains("Signature: keyId="),
        "signed afresh: {text}"
    );

    // Run it as exported, against the served sandbox.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{command} --max-time 20 -o /dev/null -w '%{{http_code}}'"
        ))
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "curl failed: {status} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(status.starts_with('2'), "HTTP {status} for:\n{command}");

    t.keys(&["q"]);
    let screen = t.wait_for("the console to exit", |s| s.contains(EXIT_MARKER));
    assert!(screen.contains(&format!("{EXIT_MARKER}0")), "{screen}");
}
