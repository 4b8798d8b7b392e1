//! History and exports: every exchange sent through the engine is stored with the Signature
//! redacted; HAR exports carry no Signature value; a cURL export (signed afresh) runs as-is.

use psd2_console::client::export::{curl_command, har};
use psd2_console::client::history::REDACTED;
use psd2_console::xs2a::operations;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exchanges_are_recorded_redacted_and_export_as_har_and_runnable_curl() {
    let (_home, paths, engine) = crate::common::default_engine().await;
    let op = operations::find("sandbox.customers.list").unwrap();
    let params = vec![("withAccounts".to_string(), "false".to_string())];
    let req = engine.prepare(op, &params, None).unwrap();
    let signature = req.header("Signature").unwrap().to_string();
    let ex = engine.send(&req).await.unwrap();
    assert_eq!(ex.status, 200);

    let (last, entries) = {
        let history = engine.history.as_ref().unwrap().lock().unwrap();
        let last = history.last().unwrap().unwrap();
        assert_eq!(history.list(Some("customers"), 10).unwrap().len(), 1);
        assert!(history.list(Some("no-such-thing"), 10).unwrap().is_empty());
        (last, history.list(None, 10).unwrap())
    };
    assert_eq!(last.operation_id, "sandbox.customers.list");
    assert_eq!(last.params, params);
    assert_eq!(last.status, 200);
    let sig = crate::common::header_value(&last.request_headers, "Signature");
    assert_eq!(sig, REDACTED);

    // The history file holds no Signature value.
    let raw = std::fs::read(paths.data.join("history.sqlite3")).unwrap();
    let needle = &signature.split("signature=\"").nth(1).unwrap().as_bytes()[..40];
    assert!(!raw.windows(needle.len()).any(|w| w == needle));

    let h = har(&entries);
    assert_eq!(h["log"]["version"], "1.2");
    let e = &h["log"]["entries"][0];
    assert_eq!(e["response"]["status"], 200);
    let text = serde_json::to_string(&h).unwrap();
    assert!(!text.contains(&signature[signature.len() - 40..]));
    assert!(text.contains(REDACTED));

    // cURL: signed afresh at export time, runs as-is against the live sandbox.
    let fresh = engine.prepare(op, &last.params, None).unwrap();
    let cmd = curl_command(&fresh);
    if std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok()
    {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{} --max-time 20 -o /dev/null -w '%{{http_code}}'",
                cmd.trim_end()
            ))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "200", "{cmd}");
    } else {
        eprintln!("curl is not installed; the cURL export was not run");
    }
    engine.shutdown().await;
}
