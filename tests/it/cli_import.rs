//! `psd2-console import`: the bank's Postman collections, HAR and cURL files import, and the
//! imported requests are sent to the embedded sandbox re-signed with the active profile.

use crate::common::cli::run;

fn spec(file: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/spec")
        .join(file)
        .display()
        .to_string()
}

fn requests_in(collection: &str) -> usize {
    fn count(v: &serde_json::Value) -> usize {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                if i.get("item").is_some() {
                    count(&i["item"])
                } else {
                    1
                }
            })
            .sum()
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(spec(collection)).unwrap()).unwrap();
    count(&doc["item"])
}

#[test]
fn both_postman_collections_import_and_every_request_is_sent_re_signed() {
    let home = tempfile::tempdir().unwrap();
    for collection in [
        "dnb-psd2-v1.postman_collection.json",
        "dnb-psd2-v2.postman_collection.json",
    ] {
        let (code, out, err) = run(home.path(), &["import", &spec(collection)]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.lines().count(), requests_in(collection), "{out}");
        assert!(out.contains("{{host}}"), "URLs are kept as written: {out}");

        let (code, out, err) = run(home.path(), &["import", "--send", &spec(collection)]);
        // Not every request answers 2xx here (no SCA, other banks' products): exit 1.
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains(&format!("sent {}: 2xx ", requests_in(collection) - 1))
                || err.contains(&format!("sent {}: 2xx ", requests_in(collection))),
            "{err}"
        );
        let mut statuses = Vec::new();
        let mut not_sent = Vec::new();
        for line in out.lines() {
            let cols: Vec<&str> = line.split('\t').collect();
            assert!(cols.len() >= 2, "{line}");
            match cols[1].parse::<u16>() {
                Ok(status) => {
                    assert!(status < 500, "{line}");
                    statuses.push(status);
                }
                // Only a request whose whole path is a Postman variable set by an earlier
                // response (`{{host}}{{confirmationLink}}`) cannot be sent as imported.
                Err(_) => {
                    assert!(
                        cols[1] == "not sent" && line.contains("has no path"),
                        "{line}"
                    );
                    not_sent.push(line.to_string());
                }
            }
        }
        assert!(not_sent.len() <= 1, "{not_sent:?}");
        assert_eq!(statuses.len() + not_sent.len(), requests_in(collection));
        if collection.contains("v1") {
            assert!(
                statuses.iter().any(|s| (200..300).contains(s)),
                "some requests succeed: {out}"
            );
        } else {
            // The interface document serves /v1/ only: a Berlin Group 404 for /v2 paths.
            assert!(out.contains("\t404\tRESOURCE_UNKNOWN"), "{out}");
        }
        // Every request was signed: none is refused for its signature.
        assert!(!out.contains("SIGNATURE_"), "{out}");
    }
}

#[test]
fn har_and_curl_exports_import_again() {
    let home = tempfile::tempdir().unwrap();
    let (code, _, err) = run(home.path(), &["send", "sandbox.customers.list"]);
    assert_eq!(code, 0, "{err}");
    let (_, har, _) = run(home.path(), &["export", "--format", "har"]);
    let har_file = home.path().join("x.har");
    std::fs::write(&har_file, har).unwrap();
    let (code, out, err) = run(home.path(), &["import", har_file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("GET http://127.0.0.1:"), "{out}");
    assert!(out.contains("/v1/sandbox/customers"), "{out}");

    let curl_file = home.path().join("x.sh");
    std::fs::write(
        &curl_file,
        "curl -sS -X GET 'http://127.0.0.1:1/v1/sandbox/customers?withAccounts=false' \\\n  -H 'X-Request-ID: 1' \\\n  -H 'Signature: old'\n",
    )
    .unwrap();
    let (code, out, err) = run(
        home.path(),
        &["import", "--send", curl_file.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\t200\t"),
        "re-signed and sent to the embedded sandbox: {out}"
    );

    let bad = home.path().join("bad.json");
    std::fs::write(&bad, "{\"hello\": 1}").unwrap();
    let (code, _, err) = run(home.path(), &["import", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("bad.json"), "{err}");
}

/// Issue 8 item 13: headers the file lacks come from the profile (PSU-IP-Address), a summary
/// is printed, the exit status is 1 when any request is not 2xx, and the console's own cURL
/// export (`#!/bin/sh` first) imports and sends.
#[test]
fn import_send_fills_profile_headers_summarises_and_reads_console_exports() {
    let home = tempfile::tempdir().unwrap();
    let collection = spec("dnb-psd2-v1.postman_collection.json");
    let (code, _, err) = run(home.path(), &["import", "--send", &collection]);
    assert_eq!(code, 1, "{err}");
    let summary = err.lines().last().unwrap();
    assert!(
        summary.starts_with("sent ") && summary.contains(", 4xx "),
        "{err}"
    );
    let h = psd2_console::client::history::History::open_existing(
        &home.path().join("data/history.sqlite3"),
    )
    .unwrap();
    let entries = h.list(None, 1000).unwrap();
    assert!(entries.len() > 40);
    for e in &entries {
        assert!(
            e.request_headers
                .iter()
                .any(|(n, v)| n.eq_ignore_ascii_case("PSU-IP-Address") && !v.is_empty()),
            "{} {}: {:?}",
            e.method,
            e.url,
            e.request_headers
        );
    }
    // Where the file had only a `{{psu_ip_address}}` placeholder, the profile's value went.
    assert!(entries.iter().any(|e| {
        e.request_headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("PSU-IP-Address") && v == "127.0.0.1")
    }));

    // The console's own cURL export, as the history screen writes it.
    let file = home.path().join("export.sh");
    std::fs::write(
        &file,
        "#!/bin/sh\ncurl -sS -X GET 'http://127.0.0.1:1/v1/sandbox/customers?withAccounts=false' \\\n  -H 'Accept: application/json'\n",
    )
    .unwrap();
    let (code, out, err) = run(home.path(), &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    let (code, out, err) = run(home.path(), &["import", "--send", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\t200\t"), "{out}");
    assert!(err.contains("sent 1: 2xx 1, 4xx 0, 5xx 0"), "{err}");
}

/// Issue 18, defect 4: a HAR file whose URL sets the terminal's title and clears the screen
/// (`ESC]0;title BEL ESC[2J`), with CR LF in its method: `doctor`, `import` and `import
/// --as-given` print it with the control characters escaped, and the doctor's first line
/// stays one line.
#[test]
fn control_characters_of_a_hostile_file_never_reach_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let har = serde_json::json!({"log": {"version": "1.2", "entries": [
        {"comment": "hostile \u{1b}[31m entry",
         "request": {"method": "GET\r\nX-Evil: 1",
                     "url": "https://bank.example/v1/accounts\u{1b}]0;owned\u{7}\u{1b}[2J",
                     "headers": [{"name": "X-Request-ID", "value": "a\u{1b}[2Jb"}]}}
    ]}});
    let file = home.path().join("hostile.har");
    std::fs::write(&file, har.to_string()).unwrap();
    let f = file.to_str().unwrap();
    let raw = |s: &str| s.chars().any(|c| c.is_control() && c != '\n' && c != '\t');
    let escaped = "\\u{1b}]0;owned\\u{7}\\u{1b}[2J";
    for args in [
        &["doctor", f][..],
        &["import", f],
        &["import", f, "--as-given"],
    ] {
        let (_, out, err) = run(home.path(), args);
        assert!(!raw(&out) && !raw(&err), "{args:?}: {out:?} {err:?}");
        assert!(out.contains(escaped), "{args:?}: {out}");
    }
    let (code, out, err) = run(home.path(), &["doctor", f]);
    assert_eq!(code, 1, "{err}");
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with(&format!(
            "GET\\r\\nX-Evil: 1 /v1/accounts{escaped} (entry 1 of "
        )),
        "{first}"
    );
}

/// Issue 18, defect 18: a HAR entry whose `request` is not a request object is unreadable
/// input (the doctor exits 2), not a request with an empty URL; nothing is sent.
#[test]
fn a_har_entry_that_is_not_a_request_is_unreadable() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("odd.har");
    std::fs::write(&file, r#"{"log": {"entries": [{"request": 42}]}}"#).unwrap();
    let f = file.to_str().unwrap();
    let said = "HAR entry 1: `request` is 42, not a request object";
    let (code, _, err) = run(home.path(), &["doctor", f]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(said), "{err}");
    for args in [
        &["send", "--as-given", f][..],
        &["import", f],
        &["import", f, "--send"],
    ] {
        let (code, _, err) = run(home.path(), args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
    assert!(
        !home.path().join("data/history.sqlite3").exists(),
        "nothing was sent"
    );
}
