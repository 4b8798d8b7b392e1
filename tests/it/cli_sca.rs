//! `psd2-console send` and SCA on the real binary (issue 8 items 1 and 2): on an embedded
//! profile `send` waits for SCA by default, and after a payment SCA it reads the payment's
//! status instead of sending the creating POST again.

use crate::common;
use crate::common::cli::{headless, run_headless as run, run_ok_in_new_home};

use std::process::Stdio;

const KARI: &str = "31125461118";

#[tokio::test(flavor = "multi_thread")]
async fn send_waits_for_the_payment_sca_and_reads_its_status_without_a_second_post() {
    let home = tempfile::tempdir().unwrap();
    let mut child = headless(
        home.path(),
        &[
            "send",
            "payments.instant.create",
            "--param",
            "allowLogicalDuplicate=true",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = common::cli::StderrLines::of(&mut child);
    let href = stderr.sca_link();
    let note = stderr.next();
    assert!(
        note.contains("lives only as long as this command"),
        "item 2: says why it waits: {note}"
    );
    let to_tpp = common::sca::complete(&href, KARI, "PRIVATE", |_| {}, "Approve").await;
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
    let id = v["paymentId"].as_str().expect("the payment id is printed");
    let status = v["transactionStatus"].as_str().unwrap();
    assert!(["ACTC", "ACSC", "ACCP", "ACCC"].contains(&status), "{v}");
    assert!(
        rest.iter()
            .any(|l| l.starts_with(&format!("payment {id} approved: {status}"))),
        "{rest:?}"
    );

    // One POST only, then the status GET.
    let (code, history, err) = run(home.path(), &["history"]);
    assert_eq!(code, 0, "{err}");
    let posts = history
        .lines()
        .filter(|l| l.contains("\tpayments.instant.create\tPOST "))
        .count();
    assert_eq!(posts, 1, "{history}");
    assert!(
        history
            .lines()
            .next()
            .unwrap()
            .contains(&format!("{id}/status")),
        "{history}"
    );
}

#[test]
fn no_wait_prints_the_link_with_a_note_that_it_dies_with_the_command() {
    let (_home, out, err) = run_ok_in_new_home(
        "send payments.instant.create --no-wait --param allowLogicalDuplicate=true",
    );
    assert!(err.contains("SCA needed: http://127.0.0.1:"), "{err}");
    assert!(err.contains("dies with this command"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["transactionStatus"], "RCVD");
}
