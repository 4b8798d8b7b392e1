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
    assert!(curl.starts_with("curl "), "{curl}");
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
