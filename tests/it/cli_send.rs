//! `psd2-console send`, `profile` and `cert show` on the real binary against the embedded
//! sandbox (in-process, loopback).

use std::process::Command;

use crate::common::cli::{run, run_into_closed_pipe, run_ok_in_new_home, serve_in_memory};

#[test]
fn send_prints_json_and_exits_by_status() {
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = run(home.path(), &["send", "--list"]);
    assert_eq!(code, 0, "{err}");
    let ids: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert!(ids.contains(&"accounts.list") && ids.contains(&"sandbox.customers.list"));

    let (code, out, err) = run(
        home.path(),
        &[
            "send",
            "sandbox.customers.list",
            "--profile",
            "Embedded sandbox",
            "--param",
            "withAccounts=false",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("HTTP 200"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let first = &v.as_array().unwrap()[0];
    assert_eq!(first["accounts"], serde_json::json!([]));

    // No consent yet: 401 with a scaRedirect, exit status 1 (--no-wait: the embedded
    // profile would otherwise wait for the SCA).
    let (code, out, err) = run(home.path(), &["send", "accounts.list", "--no-wait"]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["_links"]["scaRedirect"]["href"]
            .as_str()
            .unwrap()
            .contains("/sca/")
    );
    assert_eq!(v["tppMessages"][0]["code"], "CONSENT_INVALID");

    // Bad input: a clear error, exit 1.
    let (code, _, err) = run(home.path(), &["send", "accounts.balances"]);
    assert_eq!(code, 1);
    assert!(err.contains("account-id"), "{err}");
    let (code, _, err) = run(home.path(), &["send", "no.such.op"]);
    assert_eq!(code, 1);
    assert!(err.contains("no operation"), "{err}");
}

#[test]
fn profiles_are_listed_and_a_broken_one_is_reported() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("config/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mine.toml"), "name = \"Mine\"\ntarget = \"https://bank.example\"\ncertificate = \"c.pem\"\nkey = \"c.key\"\n").unwrap();
    std::fs::write(dir.join("broken.toml"), "name = \"Broken\"\ntarget = 42\n").unwrap();
    let (code, out, err) = run(home.path(), &["profile", "list"]);
    assert_eq!(code, 0);
    let names: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert!(
        names.contains(&"Embedded sandbox") && names.contains(&"Mine"),
        "{out}"
    );
    assert!(!names.contains(&"Broken"));
    assert!(err.contains("broken.toml:2"), "{err}");
    let (code, out, _) = run(home.path(), &["profile", "show", "Mine"]);
    assert_eq!(code, 0);
    assert!(out.contains("target = \"https://bank.example\""), "{out}");
}

#[test]
fn cert_show_reads_the_vector_certificate() {
    let home = tempfile::tempdir().unwrap();
    let cert =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/tpp_qsealc_cert.pem");
    let (code, out, err) = run(home.path(), &["cert", "show", cert.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("keyId:    SN=1A2B3C4D5E,CA=CN=Sandbox CA,O=Example Bank,C=NO"),
        "{out}"
    );
    assert!(out.contains("PSP_PI, PSP_AI"), "{out}");
    assert!(out.contains("Finanstilsynet (NO-FSA)"), "{out}");
}

#[test]
fn history_and_exports_from_the_command_line() {
    // Headless: the send needs no SCA, so no browser is asked to open.
    let (home, _, _) =
        run_ok_in_new_home("send sandbox.customers.list --param withAgreements=false");
    let (code, out, _) = run(home.path(), &["history"]);
    assert_eq!(code, 0);
    let first = out.lines().next().expect("one entry");
    assert!(
        first.contains("\t200\tsandbox.customers.list\tGET "),
        "{out}"
    );

    let (code, out, _) = run(home.path(), &["export", "--format", "har", "last"]);
    assert_eq!(code, 0);
    let har: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(har["log"]["version"], "1.2");
    let sig = har["log"]["entries"][0]["request"]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "Signature")
        .unwrap()["value"]
        .clone();
    assert_eq!(sig, "[redacted]");

    // The embedded sandbox ends with each command: cURL needs a running sandbox serve.
    let (code, _, err) = run(home.path(), &["export", "--format", "curl"]);
    assert_eq!(code, 1);
    assert!(err.contains("--base-url"), "{err}");

    let (_server, base) = serve_in_memory();
    let (code, curl, err) = run(
        home.path(),
        &["export", "--format", "curl", "--base-url", &base],
    );
    assert_eq!(code, 0, "{err}");
    assert!(curl.starts_with("#!/bin/sh\ncurl "), "{curl}");
    if Command::new("curl").arg("--version").output().is_ok() {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{} --max-time 20 -o /dev/null -w '%{{http_code}}'",
                curl.trim_end()
            ))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "200", "{curl}");
    }
}

#[test]
fn a_closed_pipe_ends_listing_quietly_with_status_0() {
    // `psd2-console send --list | head -1`: the reader is gone before the first line.
    let home = tempfile::tempdir().unwrap();
    for args in [&["send", "--list"][..], &["profile", "list"][..]] {
        let (code, err) = run_into_closed_pipe(home.path(), args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Issue 18, defect 8: `export --format curl` on an embedded profile needs no `--base-url`:
/// the command goes to the embedded sandbox's address, signed at its clock, and runs while
/// the console (here an engine on the same home) serves it; the export starts with
/// `#!/bin/sh` as the console's does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_export_of_an_embedded_profile_needs_no_base_url_and_is_a_script() {
    use psd2_console::profile::{Paths, ProfileSet};
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path().to_path_buf());
    let port = crate::common::cli::free_port();
    std::fs::create_dir_all(paths.profiles_dir()).unwrap();
    std::fs::write(
        paths.profiles_dir().join("fixed.toml"),
        format!(
            "name = \"Fixed\"\ntarget = \"embedded\"\nsandbox_port = {port}\ncallback_port = 0\n"
        ),
    )
    .unwrap();
    let h = home.path().to_path_buf();
    let (code, _, err) = tokio::task::spawn_blocking(move || {
        run(
            &h,
            &[
                "send",
                "sandbox.customers.list",
                "--profile",
                "Fixed",
                "--param",
                "withAgreements=false",
            ],
        )
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{err}");

    // Nothing serves the address: the script is still written, with a note.
    let h = home.path().to_path_buf();
    let (code, curl, err) =
        tokio::task::spawn_blocking(move || run(&h, &["export", "--format", "curl"]))
            .await
            .unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(curl.starts_with("#!/bin/sh\ncurl "), "{curl}");
    assert!(
        curl.contains(&format!("'http://127.0.0.1:{port}/v1/sandbox/customers")),
        "{curl}"
    );
    assert!(
        err.contains("no psd2-console on this data directory serves"),
        "{err}"
    );

    // A console on the home: the script runs against its sandbox as-is.
    let profile = ProfileSet::load(Some(&paths.profiles_dir()))
        .get("Fixed")
        .cloned()
        .unwrap();
    let console = psd2_console::embedded::start_engine(profile, paths.clone())
        .await
        .unwrap();
    let h = home.path().to_path_buf();
    let (code, curl, err) =
        tokio::task::spawn_blocking(move || run(&h, &["export", "--format", "curl", "last"]))
            .await
            .unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("no psd2-console"), "{err}");
    if Command::new("curl").arg("--version").output().is_ok() {
        let out = tokio::task::spawn_blocking(move || {
            Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "{} --max-time 20 -o /dev/null -w '%{{http_code}}'",
                    curl.trim_end()
                ))
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "200");
    }
    console.shutdown().await;
}
