//! The flow of a session as a sequence diagram (issue 12, "Flow view"): arrows rebuilt from
//! recorded exchanges, and `psd2-console flow` on the real binary.

use psd2_console::client::history::HistoryEntry;
use psd2_console::flow::{self, Flow, Lane};

use crate::common::cli::run_headless as run;

fn entry(
    id: i64,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    status: u16,
    body: &str,
) -> HistoryEntry {
    HistoryEntry {
        id,
        at: 1_700_000_000 + id * 10,
        method: method.into(),
        path_and_query: path.into(),
        request_headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        status,
        response_body: body.as_bytes().to_vec(),
        ..HistoryEntry::default()
    }
}

const SESSION: (&str, &str) = ("TPP-Session-ID", "3f0c9a57-0f4e-4a55-9a3e-2d1f6b7c8d90");

/// A consent with SCA, then a read with the learned PSU-ID.
fn consent_then_read() -> Vec<HistoryEntry> {
    vec![
        entry(
            1,
            "POST",
            "/v1/bank-offered-consents",
            &[SESSION],
            201,
            r#"{"consentStatus":"received","_links":{"scaRedirect":{"href":"http://127.0.0.1:1/sca/x"}}}"#,
        ),
        entry(
            2,
            "GET",
            "/v1/accounts?withBalance=true",
            &[SESSION, ("PSU-ID", "31125461118")],
            200,
            r#"{"accounts":[]}"#,
        ),
    ]
}

#[test]
fn an_sca_redirect_and_a_learned_psu_id_become_the_browser_and_callback_arrows() {
    let f = Flow::from_history(&consent_then_read());
    let route: Vec<(Lane, Lane, &str)> = f
        .arrows
        .iter()
        .map(|a| (a.from, a.to, a.label.as_str()))
        .collect();
    assert_eq!(
        route,
        vec![
            (Lane::Tpp, Lane::Aspsp, "POST /v1/bank-offered-consents"),
            (Lane::Aspsp, Lane::Tpp, "201 received + scaRedirect"),
            (Lane::Tpp, Lane::Browser, "open scaRedirect"),
            (Lane::Browser, Lane::Aspsp, "SCA: login, context, consent"),
            (
                Lane::Aspsp,
                Lane::Browser,
                "302 to TPP-Redirect-URI with psu-id"
            ),
            (Lane::Browser, Lane::Callback, "GET TPP-Redirect-URI"),
            (Lane::Callback, Lane::Tpp, "psu-id learned"),
            (Lane::Tpp, Lane::Aspsp, "GET /v1/accounts + PSU-ID"),
            (Lane::Aspsp, Lane::Tpp, "200"),
        ]
    );
    assert_eq!(f.arrows[1].rule, Some("Authentication 11"));
    assert_eq!(f.arrows[6].rule, Some("Authentication 12"));
    // Values stay off the slides: no PSU-ID, no query.
    let text = f.to_text() + &f.to_mermaid();
    assert!(!text.contains("31125461118"), "{text}");
    assert!(!text.contains("withBalance"), "{text}");
}

#[test]
fn an_error_answer_shows_its_code_and_no_sca_without_a_redirect() {
    let f = Flow::from_history(&[entry(
        7,
        "GET",
        "/v1/accounts",
        &[],
        400,
        r#"{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR","text":"x"}]}"#,
    )]);
    assert_eq!(f.arrows.len(), 2);
    assert_eq!(f.arrows[1].label, "400 FORMAT_ERROR");
    assert_eq!(f.arrows[1].rule, Some("Errors"));
}

#[test]
fn mermaid_output_is_a_sequence_diagram_with_every_lane() {
    let m = Flow::from_history(&consent_then_read()).to_mermaid();
    let lines: Vec<&str> = m.lines().collect();
    assert_eq!(lines[0], "sequenceDiagram");
    for lane in Lane::ALL {
        assert!(
            m.contains(&format!("participant {} as {}", lane.id(), lane.title())),
            "{m}"
        );
    }
    assert!(
        lines.contains(&"    ASPSP-->>TPP: 201 received + scaRedirect"),
        "{m}"
    );
    assert!(
        lines.contains(&"    Note over ASPSP,TPP: Authentication 11"),
        "{m}"
    );
    assert!(lines.contains(&"    Callback->>TPP: psu-id learned"), "{m}");
}

#[test]
fn the_latest_flow_is_the_newest_exchanges_session_or_the_last_run_without_gaps() {
    let other = entry(
        3,
        "GET",
        "/v1/accounts",
        &[("TPP-Session-ID", "other")],
        200,
        "{}",
    );
    let mut newest_first = consent_then_read();
    newest_first.push(other);
    newest_first.reverse();
    let ids = |v: Vec<HistoryEntry>| v.iter().map(|e| e.id).collect::<Vec<_>>();
    assert_eq!(ids(flow::latest_session(&newest_first, 1800)), vec![3]);
    assert_eq!(ids(flow::session(&newest_first, SESSION.1)), vec![1, 2]);
    // Without a TPP-Session-ID: back to the first gap longer than the limit.
    let mut plain: Vec<HistoryEntry> = (1..=4)
        .map(|i| entry(i, "GET", "/v1/accounts", &[], 200, "{}"))
        .collect();
    plain[1].at = plain[0].at + 5_000;
    plain[2].at = plain[1].at + 60;
    plain[3].at = plain[2].at + 60;
    plain.reverse();
    assert_eq!(ids(flow::latest_session(&plain, 1800)), vec![2, 3, 4]);
}

#[test]
fn the_flow_command_draws_the_latest_flow_of_the_real_history() {
    let home = tempfile::tempdir().unwrap();
    // No consent yet: the embedded sandbox answers with a scaRedirect or an error; either
    // way the history holds the exchange.
    let (_, _, err) = run(home.path(), &["send", "accounts.list", "--no-wait"]);
    let (code, text, err2) = run(home.path(), &["flow"]);
    assert_eq!(code, 0, "{err}\n{err2}");
    assert!(text.contains("TPP → ASPSP"), "{text}");
    assert!(text.contains("GET /v1/accounts"), "{text}");
    let (code, mermaid, _) = run(home.path(), &["flow", "--format", "mermaid"]);
    assert_eq!(code, 0);
    assert!(mermaid.starts_with("sequenceDiagram\n"), "{mermaid}");
    assert!(
        mermaid.contains("TPP->>ASPSP: GET /v1/accounts"),
        "{mermaid}"
    );
    let (code, _, err) = run(home.path(), &["flow", "999"]);
    assert_eq!(code, 1);
    assert!(err.contains("no history entry 999"), "{err}");
}
