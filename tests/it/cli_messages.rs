//! Issue 8 on the real binary: `cert new` keeps existing files, private file modes, history
//! failures reported, `--raw-body`, messages (items 9, 10, 11, 16, 19, 20).

use std::path::Path;

use crate::common::cli::{run_headless as run, run_into_closed_pipe, run_ok_in_new_home, words};

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn cert_new_refuses_to_overwrite_without_force() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("keys");
    let d = dir.to_str().unwrap();
    let (code, _, err) = run(home.path(), &["cert", "new", "--dir", d, "--name", "tpp"]);
    assert_eq!(code, 0, "{err}");
    let key = std::fs::read(dir.join("tpp.key")).unwrap();
    let (code, _, err) = run(home.path(), &["cert", "new", "--dir", d, "--name", "tpp"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("not overwriting") && err.contains("tpp.key"),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(dir.join("tpp.key")).unwrap(), key, "key kept");
    let (code, _, err) = run(
        home.path(),
        &["cert", "new", "--dir", d, "--name", "tpp", "--force"],
    );
    assert_eq!(code, 0, "{err}");
    assert_ne!(std::fs::read(dir.join("tpp.key")).unwrap(), key, "replaced");
}

#[test]
fn cert_show_gives_a_verdict_and_missing_roles() {
    let home = tempfile::tempdir().unwrap();
    let d = home.path().to_str().unwrap();
    let (code, _, err) = run(
        home.path(),
        &[
            "cert", "new", "--dir", d, "--name", "ai", "--roles", "PSP_AI",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let pem = home.path().join("ai.pem");
    let (code, out, err) = run(home.path(), &["cert", "show", pem.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("verdict:  valid ("), "{out}");
    assert!(out.contains("missing:  PSP_PI"), "{out}");
}

#[cfg(unix)]
#[test]
fn history_sessions_and_data_dir_are_private() {
    let (home, _, _) = run_ok_in_new_home("send sandbox.customers.list --param withAccounts=false");
    let data = home.path().join("data");
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("history.sqlite3")), 0o600);
    assert_eq!(mode(&data.join("sandbox.sqlite3")), 0o600);
    for extra in [
        "history.sqlite3-wal",
        "history.sqlite3-shm",
        "sandbox.sqlite3-wal",
        "sandbox.sqlite3-shm",
    ] {
        if data.join(extra).exists() {
            assert_eq!(mode(&data.join(extra)), 0o600, "{extra}");
        }
    }
    let sessions: Vec<_> = std::fs::read_dir(data.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!sessions.is_empty());
    for s in sessions {
        assert_eq!(mode(&s), 0o600, "{}", s.display());
    }
}

#[test]
fn a_failing_history_write_is_reported_and_history_names_the_problem() {
    let home = tempfile::tempdir().unwrap();
    // A read-only command creates nothing.
    let (code, _, err) = run(home.path(), &["history"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no history yet"), "{err}");
    assert!(!home.path().join("data/history.sqlite3").exists());

    // A directory where the history database belongs.
    std::fs::create_dir_all(home.path().join("data/history.sqlite3")).unwrap();
    let (code, out, err) = run(
        home.path(),
        &words("send sandbox.customers.list --param withAccounts=false"),
    );
    assert_eq!(code, 0, "the send stands: {err}");
    assert!(out.contains("customerNumber"), "{out}");
    assert!(err.contains("warning: history:"), "{err}");
    assert!(err.contains("is a directory"), "{err}");
    let (code, _, err) = run(home.path(), &["history"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("is a directory, not a history database"),
        "{err}"
    );
}

#[test]
fn raw_body_is_sent_byte_for_byte_with_its_digest() {
    use base64::Engine as _;
    let home = tempfile::tempdir().unwrap();
    let body: &[u8] = b"{\"instructedAmount\": \xff not json";
    let file = home.path().join("broken.json");
    std::fs::write(&file, body).unwrap();
    let (code, _, err) = run(
        home.path(),
        &[
            "send",
            "payments.domestic.create",
            "--raw-body",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "the sandbox refuses it: {err}");
    assert!(err.contains("HTTP 400"), "{err}");
    let h = psd2_console::client::history::History::open_existing(
        &home.path().join("data/history.sqlite3"),
    )
    .unwrap();
    let e = h.last().unwrap().unwrap();
    assert_eq!(e.request_body, body);
    let digest = e
        .request_headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Digest"))
        .unwrap()
        .1
        .clone();
    let sha = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, body);
    assert_eq!(
        digest,
        format!(
            "SHA-256={}",
            base64::engine::general_purpose::STANDARD.encode(sha.as_ref())
        )
    );
}

#[test]
fn messages_say_things_once_and_in_order() {
    let home = tempfile::tempdir().unwrap();
    // A missing file: the OS reason once.
    let (code, _, err) = run(home.path(), &["cert", "show", "/nonexistent/x.pem"]);
    assert_eq!(code, 1);
    assert_eq!(err.matches("(os error 2)").count(), 1, "{err}");

    // A data dir that cannot be created is named as such.
    let blocked = tempfile::tempdir().unwrap();
    std::fs::write(blocked.path().join("data"), "a file").unwrap();
    let (code, _, err) = run(blocked.path(), &["send", "sandbox.customers.list"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot create the data directory"), "{err}");
    assert!(!err.contains("cannot read"), "{err}");

    // `sandbox serve` on a taken port: no "listening" before the error.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (code, _, err) = run(
        home.path(),
        &["sandbox", "serve", "--in-memory", "--addr", &addr],
    );
    assert_eq!(code, 1);
    assert!(!err.contains("listening"), "{err}");
    assert!(err.contains("in use"), "{err}");

    // `sign ... | head -1`: quiet, status 0.
    let v = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let cert = v.join("tpp_qsealc_cert.pem");
    let key = v.join("tpp_key.pkcs8.pem");
    let (code, err) = run_into_closed_pipe(
        home.path(),
        &[
            "sign",
            "--cert",
            cert.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
            "--method",
            "GET",
            "--path",
            "/v1/accounts",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}

/// Issue 8 item 12 (second half): a body the server stops reading. A server that closes
/// without answering gets "closed the connection while the request body (N bytes) was being
/// sent" with the sandbox's limit, not "error writing a body to connection: Broken pipe";
/// the sandbox's own answer is shown when one came.
#[tokio::test(flavor = "multi_thread")]
async fn a_body_cut_off_by_the_server_is_explained_with_the_limit() {
    use psd2_console::client::BodyInput;
    use psd2_console::profile::{DEFAULT_PROFILE, Paths, ProfileSet};
    use tokio::io::AsyncReadExt;
    let home = tempfile::tempdir().unwrap();
    let profile = ProfileSet::load(None).get(DEFAULT_PROFILE).unwrap().clone();
    let engine = psd2_console::embedded::start_engine(
        crate::common::any_ports(profile),
        Paths::under(home.path().to_path_buf()),
    )
    .await
    .unwrap();
    let op = psd2_console::xs2a::operations::find("payments.domestic.create").unwrap();
    let big = vec![b' '; 8 * 1024 * 1024];
    let limit = psd2_console::sandbox::http::auth::MAX_BODY_BYTES.to_string();

    // A server that reads a little and hangs up.
    let rude = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let rude_addr = rude.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = rude.accept().await {
            let mut buf = vec![0u8; 4096];
            let _ = s.read(&mut buf).await;
            drop(s);
        }
    });
    let mut req = engine.prepare_with(op, &[], BodyInput::Raw(&big)).unwrap();
    req.url = format!("http://{rude_addr}{}", req.path_and_query);
    let err = engine.send(&req).await.expect_err("no answer").to_string();
    assert!(
        err.contains("closed the connection while the request body (8388608 bytes) was being sent"),
        "{err}"
    );
    assert!(err.contains(&limit), "{err}");
    assert!(!err.contains("Broken pipe"), "{err}");

    // The sandbox itself: its answer when one came, else the same explanation.
    let req = engine.prepare_with(op, &[], BodyInput::Raw(&big)).unwrap();
    match engine.send(&req).await {
        Ok(ex) => assert!(!ex.is_success(), "{}", ex.pretty_body()),
        Err(e) => assert!(e.to_string().contains(&limit), "{e}"),
    }
    engine.shutdown().await;
}

/// Issue 18, defect 18: `profile list` names the directory of the profile files (the
/// example profile sends the reader there), on stderr so stdout stays one profile a line.
#[test]
fn profile_list_names_the_profiles_directory() {
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = run(home.path(), &["profile", "list"]);
    assert_eq!(code, 0, "{err}");
    let dir = home.path().join("config/profiles");
    assert!(
        err.contains(&format!("profiles directory: {}", dir.display())),
        "{err}"
    );
    assert!(out.lines().all(|l| l.contains('\t')), "{out}");
}

/// Issue 18, defect 18: a home that is a file is an error for `history`, not "no history
/// yet".
#[test]
fn history_in_a_home_that_is_a_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("not-a-dir");
    std::fs::write(&home, "x").unwrap();
    let (code, out, err) = run(&home, &["history"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(!err.contains("no history yet"), "{err}");
    assert!(err.contains("history"), "{err}");
}
