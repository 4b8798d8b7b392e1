//! The history screen (`3`) rendered into ratatui's `TestBackend` (insta snapshots) over an
//! in-memory history with fixed rows, and its keys: search, open in the console, mark and
//! diff, re-send (a fresh signed request), cURL export.

use std::time::{Duration, SystemTime};

use psd2_console::client::export::reprepare;
use psd2_console::client::history::{History, HistoryEntry, REDACTED};
use psd2_console::client::{Exchange, RequestContext, prepare};
use psd2_console::profile::{DEFAULT_PROFILE, ProfileSet, SessionState};
use psd2_console::tui::history::{load_entry, load_keeping};
use psd2_console::tui::{Action, App, ResponseState, Screen, StatusInfo};
use psd2_console::xs2a::operations;

use crate::common::sandbox::tpp;
use crate::common::tui::{self, Drive, REDIRECT_URI, key};

const BASE_URL: &str = "http://127.0.0.1:48080";
const ACCOUNT: &str = "0c3f6a1e-7d4b-4a58-9e21-5b8c7d6e4f30";
/// 2026-05-28 20:26:40 UTC.
const T0: i64 = 1_780_000_000;

/// [`tui::status`] on this module's [`BASE_URL`].
fn status() -> StatusInfo {
    StatusInfo {
        base_url: BASE_URL.into(),
        ..tui::status()
    }
}

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

fn json(v: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&v).unwrap()
}

/// One fixed exchange (`id` is given by the history).
fn entry(
    at: i64,
    op: &str,
    method: &str,
    path: &str,
    status: u16,
    body: serde_json::Value,
    ms: u64,
) -> HistoryEntry {
    HistoryEntry {
        id: 0,
        at,
        profile: DEFAULT_PROFILE.into(),
        operation_id: op.into(),
        params: Vec::new(),
        method: method.into(),
        url: format!("{BASE_URL}{path}"),
        path_and_query: path.into(),
        request_headers: headers(&[
            ("Accept", "application/json"),
            ("X-Request-ID", "9a1b2c3d-0000-4000-8000-000000000001"),
            ("Date", "Thu, 28 May 2026 20:26:40 GMT"),
            (
                "Signature",
                "keyId=\"SN=1,CA=x\",algorithm=\"rsa-sha256\",signature=\"c2VjcmV0\"",
            ),
        ]),
        request_body: Vec::new(),
        status,
        response_headers: headers(&[
            ("content-type", "application/json"),
            ("x-request-id", "9a1b2c3d-0000-4000-8000-000000000001"),
        ]),
        response_body: json(body),
        elapsed_ms: ms,
        ..HistoryEntry::default()
    }
}

/// A history with four exchanges, oldest first: a 401 account list, the account list after
/// SCA, balances, a 404 transactions.
fn fixed_history() -> History {
    let h = History::in_memory().unwrap();
    let rows = [
        entry(
            T0,
            "accounts.list",
            "GET",
            "/v1/accounts",
            401,
            serde_json::json!({"tppMessages": [{"category": "ERROR", "code": "PSU_CREDENTIALS_INVALID", "text": "SCA needed"}]}),
            14,
        ),
        entry(
            T0 + 35,
            "accounts.list",
            "GET",
            "/v1/accounts",
            200,
            serde_json::json!({"accounts": [{"resourceId": ACCOUNT, "bban": "12345678901", "currency": "NOK", "name": "Brukskonto"}]}),
            21,
        ),
        entry(
            T0 + 52,
            "accounts.balances",
            "GET",
            &format!("/v1/accounts/{ACCOUNT}/balances"),
            200,
            serde_json::json!({"balances": [{"balanceType": "interimAvailable", "balanceAmount": {"currency": "NOK", "amount": "1520.50"}}]}),
            9,
        ),
        entry(
            T0 + 80,
            "accounts.transactions",
            "GET",
            "/v1/accounts/nope/transactions?bookingStatus=booked",
            404,
            serde_json::json!({"tppMessages": [{"category": "ERROR", "code": "RESOURCE_UNKNOWN", "text": "No such account"}]}),
            7,
        ),
    ];
    for r in &rows {
        h.insert(r).unwrap();
    }
    h
}

/// Does what the runner does for an action of the history screen that reads the history
/// (the rows for the search, then the whole highlighted exchange when the rows did not
/// bring it).
fn run(app: &mut App, history: &History, action: Action) {
    let mut next = action;
    loop {
        next = match next {
            Action::LoadHistory => {
                let q = app.history_query().to_string();
                let keep = app.highlighted_exchange().map(|e| e.id);
                app.set_history(&q, load_keeping(history, &q, keep))
            }
            Action::LoadHistoryEntry(id) => {
                app.set_history_entry(id, load_entry(history, id));
                Action::None
            }
            _ => return,
        }
    }
}

/// Presses `keys` (space-separated, as [`Drive::keys`]) and does what the runner does for
/// the reads they ask for.
fn keys(app: &mut App, history: &History, keys: &str) {
    for k in keys.split_whitespace() {
        let a = app.press(k);
        run(app, history, a);
    }
}

/// The app on the history screen with the rows of `history` loaded.
fn history_app(history: &History) -> App {
    let mut app = App::new(status());
    app.mask_volatile = true;
    let a = app.press("3");
    assert_eq!(
        a,
        Action::LoadHistory,
        "showing the screen loads the history"
    );
    assert_eq!(app.screen(), Screen::History);
    run(&mut app, history, a);
    app
}

#[test]
fn history_screen_lists_newest_first_with_the_detail_of_the_highlighted() {
    let h = fixed_history();
    let mut app = history_app(&h);
    let ids: Vec<i64> = app.history_rows().iter().map(|e| e.id).collect();
    assert_eq!(ids, vec![4, 3, 2, 1], "newest first");
    // The stored Signature is redacted, and the detail pane shows it so.
    let text = app.screen_text(160, 40);
    assert!(text.contains(&format!("Signature: {REDACTED}")), "{text}");
    assert!(!text.contains("c2VjcmV0"), "{text}");
    keys(&mut app, &h, "j");
    assert_eq!(app.highlighted_exchange().unwrap().id, 3);
    insta::assert_snapshot!("history_screen", app.screen_text(160, 40));
}

#[test]
fn search_filters_by_path_status_and_body_text_and_never_runs_commands() {
    let h = fixed_history();
    let mut app = history_app(&h);
    assert_eq!(app.press("/"), Action::None);
    // Typing: each key reloads with the new search; `q`, `r`, `x` are text here.
    let mut last = Action::None;
    for c in "balances".chars() {
        last = app.handle_key(key(c));
        assert_eq!(last, Action::LoadHistory);
        run(&mut app, &h, last.clone());
    }
    assert!(!app.should_quit());
    assert_eq!(app.history_query(), "balances");
    let paths: Vec<&str> = app
        .history_rows()
        .iter()
        .map(|e| e.path_and_query.as_str())
        .collect();
    assert_eq!(paths, vec![format!("/v1/accounts/{ACCOUNT}/balances")]);
    let _ = last;

    // Backspace everything, then a status.
    for _ in 0..8 {
        let a = app.press("Backspace");
        run(&mut app, &h, a);
    }
    assert_eq!(app.history_rows().len(), 4);
    for c in "401".chars() {
        let a = app.handle_key(key(c));
        run(&mut app, &h, a);
    }
    let ids: Vec<i64> = app.history_rows().iter().map(|e| e.id).collect();
    assert_eq!(ids, vec![1]);

    // Body text, typed with a `q` in it: not a quit.
    let a = app.press("C-u");
    run(&mut app, &h, a);
    for c in "RESOURCE_UNKNOWN".chars() {
        let a = app.handle_key(key(c));
        run(&mut app, &h, a);
    }
    let ids: Vec<i64> = app.history_rows().iter().map(|e| e.id).collect();
    assert_eq!(ids, vec![4], "the 404's body names RESOURCE_UNKNOWN");
    for c in "q".chars() {
        let a = app.handle_key(key(c));
        run(&mut app, &h, a);
    }
    assert!(!app.should_quit(), "q typed into the search box");
    assert!(app.history_rows().is_empty());
    insta::assert_snapshot!("history_search_no_match", app.screen_text(120, 24));

    // Enter keeps the search and leaves the box; Esc then clears it.
    assert_eq!(app.press("Enter"), Action::None);
    assert_eq!(app.history_query(), "RESOURCE_UNKNOWNq");
    let a = app.press("Esc");
    assert_eq!(a, Action::LoadHistory);
    run(&mut app, &h, a);
    assert_eq!(app.history_query(), "");
    assert_eq!(app.history_rows().len(), 4);
    // Outside the box, q quits again.
    assert_eq!(app.press("q"), Action::Quit);
}

#[test]
fn diff_of_two_responses_in_an_overlay() {
    let h = fixed_history();
    let mut app = history_app(&h);
    // Mark the 401 (oldest, last row), then highlight the 200 account list and diff.
    for _ in 0..3 {
        keys(&mut app, &h, "Down");
    }
    assert_eq!(app.highlighted_exchange().unwrap().id, 1);
    assert_eq!(app.press("m"), Action::None);
    keys(&mut app, &h, "Up");
    assert_eq!(app.highlighted_exchange().unwrap().id, 2);
    assert_eq!(app.press("d"), Action::None);
    assert!(app.history_diff_visible());
    let text = app.screen_text(120, 32);
    assert!(text.contains("- status: 401 Unauthorized"), "{text}");
    assert!(text.contains("+ status: 200 OK"), "{text}");
    assert!(text.contains("+   \"accounts\": ["), "{text}");
    insta::assert_snapshot!("history_diff", text);
    // Esc closes the overlay, not the screen.
    keys(&mut app, &h, "Esc");
    assert!(!app.history_diff_visible());
    assert_eq!(app.screen(), Screen::History);
}

/// The doctor overlay's line of check `id` in screen `text`.
#[track_caller]
fn check_line(text: &str, id: &str) -> String {
    text.lines()
        .find(|l| l.contains(&format!(" {id} ")))
        .unwrap_or_else(|| panic!("no {id} line: {text}"))
        .to_string()
}

#[test]
fn c_shows_the_doctors_checks_of_the_highlighted_request() {
    let h = fixed_history();
    let mut app = history_app(&h);
    assert_eq!(app.press("c"), Action::None);
    assert!(app.history_diff_visible(), "the doctor uses the overlay");
    let text = app.screen_text(160, 48);
    assert!(text.contains("Doctor: #4 GET"), "{text}");
    // The recorded request has no TPP-Redirect-URI (Authentication 11) and no certificate.
    let line = |id: &str| check_line(&text, id);
    assert!(line("headers.required").contains('✘'), "{text}");
    assert!(
        line("headers.required").contains("TPP-Redirect-URI"),
        "{text}"
    );
    assert!(line("cert.parse").contains('✘'), "{text}");
    assert!(text.contains("verdict: "), "{text}");
    // The recorded answer (a 404 RESOURCE_UNKNOWN) is linted too.
    assert!(text.contains("answer 404: lint: "), "{text}");
    // c again (or Esc) closes it.
    keys(&mut app, &h, "c");
    assert!(!app.history_diff_visible());
}

// Issue 18 (defect 16): the doctor overlay wraps long lines instead of cutting them.
#[test]
fn the_doctor_overlay_wraps_long_lines() {
    let h = fixed_history();
    let mut app = history_app(&h);
    keys(&mut app, &h, "c");
    assert!(app.history_diff_visible());
    let text = app.screen_text(80, 24);
    // The first check's line is longer than the overlay is wide: its end (the rule) is on
    // the next row, not cut.
    assert!(text.contains("[Endpoints]"), "{text}");
    assert!(text.contains("(Account transactions)"), "{text}");
    insta::assert_snapshot!("history_doctor_80x24", text);
}

#[test]
fn diff_needs_a_mark_first() {
    let h = fixed_history();
    let mut app = history_app(&h);
    keys(&mut app, &h, "d");
    assert!(!app.history_diff_visible());
    assert!(
        app.message()
            .unwrap()
            .text
            .contains("Mark an exchange with m")
    );
}

#[test]
fn enter_opens_the_exchange_in_the_console() {
    let h = History::in_memory().unwrap();
    let mut e = entry(
        T0,
        "accounts.balances",
        "GET",
        &format!("/v1/accounts/{ACCOUNT}/balances"),
        200,
        serde_json::json!({"balances": []}),
        5,
    );
    e.params = vec![("account-id".into(), ACCOUNT.into())];
    h.insert(&e).unwrap();
    let mut app = history_app(&h);
    assert_eq!(app.press("Enter"), Action::None);
    assert_eq!(app.screen(), Screen::Console);
    assert_eq!(app.selected_operation().id, "accounts.balances");
    assert_eq!(
        app.param_value("accounts.balances", "account-id"),
        Some(ACCOUNT)
    );
    match app.response() {
        ResponseState::Done(v) => {
            assert_eq!(v.status, 200);
            assert!(v.url.ends_with("/balances"));
        }
        other => panic!("no response shown: {other:?}"),
    }
}

#[test]
fn resend_asks_the_runner_for_a_fresh_signed_request() {
    // A real exchange: list accounts signed at T0 and stored (Signature redacted).
    let profiles = ProfileSet::load(None);
    let profile = profiles.get(DEFAULT_PROFILE).unwrap();
    let old_session = SessionState {
        tpp_session_id: Some("0d9f3c2a-1111-4222-8333-944455556666".into()),
        ..SessionState::default()
    };
    let op = operations::find("accounts.balances").unwrap();
    let params = vec![("account-id".to_string(), ACCOUNT.to_string())];
    let ctx = |session, now| RequestContext {
        profile,
        session,
        credentials: tpp(),
        base_url: BASE_URL,
        redirect_uri: REDIRECT_URI,
        now,
    };
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(T0 as u64);
    let sent = prepare(op, &params, None, &ctx(&old_session, t0)).unwrap();
    let h = History::in_memory().unwrap();
    let ex = Exchange {
        status: 200,
        headers: headers(&[("content-type", "application/json")]),
        body: b"{\"balances\":[]}".to_vec(),
        elapsed: Duration::from_millis(3),
        json: None,
    };
    let id = h.record(DEFAULT_PROFILE, &params, &sent, &ex).unwrap();

    let mut app = history_app(&h);
    let action = app.press("r");
    assert_eq!(action, Action::ResendHistory(id));

    // What the runner does with it: prepare the stored entry again, now, with the current
    // session (a PSU-ID learned since).
    let stored = app.history_entry(id).unwrap().clone();
    let header = |hs: &[(String, String)], n: &str| {
        hs.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        header(&stored.request_headers, "Signature").unwrap(),
        REDACTED
    );
    let now_session = SessionState {
        psu_id: Some("8c1d3f0e-5b7a-4c2e-9f10-3a6b2d4e5f60".into()),
        tpp_session_id: Some("11111111-2222-4333-8444-555555555555".into()),
        ..SessionState::default()
    };
    let later = t0 + Duration::from_secs(3600);
    let fresh = reprepare(&stored, &ctx(&now_session, later)).unwrap();
    assert_eq!(fresh.method, stored.method);
    assert_eq!(fresh.path_and_query, stored.path_and_query);
    assert_eq!(fresh.params, stored.params);
    let old_date = header(&stored.request_headers, "Date").unwrap();
    let old_xid = header(&stored.request_headers, "X-Request-ID").unwrap();
    assert_ne!(fresh.header("Date").unwrap(), old_date, "a fresh Date");
    assert_eq!(
        fresh.header("Date").unwrap(),
        httpdate::fmt_http_date(later),
        "signed at the runner's clock"
    );
    assert_ne!(
        fresh.header("X-Request-ID").unwrap(),
        old_xid,
        "a new X-Request-ID"
    );
    let sig = fresh.header("Signature").unwrap();
    assert!(
        sig.contains("signature=\"") && !sig.contains(REDACTED),
        "{sig}"
    );
    assert_ne!(sig, sent.header("Signature").unwrap());
    // The current session's headers, not the stored ones.
    assert_eq!(
        fresh.header("TPP-Session-ID"),
        now_session.tpp_session_id.as_deref()
    );
    assert_eq!(fresh.header("PSU-ID"), now_session.psu_id.as_deref());
}

#[test]
fn resend_of_an_imported_request_re_signs_its_stored_headers_and_body() {
    let h = History::in_memory().unwrap();
    let mut e = entry(
        T0,
        "raw",
        "POST",
        "/v1/payments/sepa-credit-transfers",
        201,
        serde_json::json!({"paymentId": "p1"}),
        5,
    );
    e.request_body = b"{\"a\":\"1\"}".to_vec();
    e.request_headers.push(("PSU-ID".into(), "old-psu".into()));
    e.request_headers.push(("X-Custom".into(), "kept".into()));
    h.insert(&e).unwrap();
    let mut app = history_app(&h);
    let Action::ResendHistory(id) = app.press("r") else {
        panic!("r re-sends");
    };
    let profiles = ProfileSet::load(None);
    let session = SessionState::default();
    let fresh = reprepare(
        app.history_entry(id).unwrap(),
        &RequestContext {
            profile: profiles.get(DEFAULT_PROFILE).unwrap(),
            session: &session,
            credentials: tpp(),
            base_url: "http://127.0.0.1:9",
            redirect_uri: REDIRECT_URI,
            now: SystemTime::now(),
        },
    )
    .unwrap();
    assert_eq!(
        fresh.url,
        "http://127.0.0.1:9/v1/payments/sepa-credit-transfers"
    );
    assert_eq!(fresh.body, b"{\"a\":\"1\"}");
    assert_eq!(fresh.header("X-Custom"), Some("kept"));
    assert_eq!(
        fresh.header("PSU-ID"),
        None,
        "session headers come from the session"
    );
    assert!(fresh.header("Digest").is_some());
    assert_eq!(
        fresh
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("Signature"))
            .count(),
        1
    );
}

#[test]
fn x_asks_for_a_curl_export_and_keys_outside_the_list_do_nothing() {
    let h = fixed_history();
    let mut app = history_app(&h);
    assert_eq!(app.press("x"), Action::ExportHistoryCurl(4));
    // i opens the import path box: typed keys are text, Enter asks to import.
    assert_eq!(app.press("i"), Action::None);
    for c in "/tmp/x.json".chars() {
        assert_eq!(app.handle_key(key(c)), Action::None);
    }
    assert_eq!(app.press("Enter"), Action::ImportFile("/tmp/x.json".into()));
    // Issue 18 defect 16: i again starts with an empty box, the last path is not kept and
    // appended to.
    assert_eq!(app.press("i"), Action::None);
    for c in "/tmp/y.har".chars() {
        assert_eq!(app.handle_key(key(c)), Action::None);
    }
    assert_eq!(app.press("Enter"), Action::ImportFile("/tmp/y.har".into()));
    // An empty history: the keys are harmless.
    let empty = History::in_memory().unwrap();
    let mut app = history_app(&empty);
    for c in ['r', 'x', 'm', 'd', 'j', 'k'] {
        let a = app.handle_key(key(c));
        assert_eq!(a, Action::None, "{c}");
    }
    keys(&mut app, &h, "Enter");
    assert_eq!(app.screen(), Screen::History);
}

/// The cells of the overlay's rows between its left and right border must all be the
/// overlay's: nothing of the panes underneath shows inside or at the right edge.
fn assert_overlay_covers(s: &str, top_left: char, top_right: char) {
    let rows: Vec<&str> = s.lines().collect();
    let top = rows
        .iter()
        .position(|l| l.contains(top_left))
        .unwrap_or_else(|| panic!("no overlay\n{s}"));
    let top_line: Vec<char> = rows[top].chars().collect();
    let left = top_line.iter().position(|c| *c == top_left).unwrap();
    let right = top_line.iter().rposition(|c| *c == top_right).unwrap();
    for (i, row) in rows.iter().enumerate().skip(top + 1) {
        let cells: Vec<char> = row.chars().collect();
        if cells.get(left) == Some(&'╰') {
            assert_eq!(
                cells.get(right),
                Some(&'╯'),
                "row {i}: bottom right corner\n{s}"
            );
            return;
        }
        assert_eq!(cells.get(left), Some(&'│'), "row {i}: left border\n{s}");
        assert_eq!(cells.get(right), Some(&'│'), "row {i}: right border\n{s}");
        // Nothing of the panes underneath in the margins.
        assert!(
            cells[..left]
                .iter()
                .chain(&cells[right + 1..])
                .all(|c| *c == ' '),
            "row {i}: the pane underneath shows through: {row}\n{s}"
        );
    }
    panic!("the overlay has no bottom border\n{s}");
}

#[test]
fn diff_and_import_overlays_cover_what_is_underneath_at_200x50_and_80x24() {
    let h = fixed_history();
    let mut app = history_app(&h);
    for _ in 0..3 {
        keys(&mut app, &h, "Down");
    }
    keys(&mut app, &h, "m Up d");
    assert!(app.history_diff_visible());
    let big = app.screen_text(200, 50);
    assert_overlay_covers(&big, '╭', '╮');
    insta::assert_snapshot!("history_diff_200x50", big);
    let small = app.screen_text(80, 24);
    insta::assert_snapshot!("history_diff_80x24", small);
    keys(&mut app, &h, "Esc");

    // The import list.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("req.curl");
    std::fs::write(
        &file,
        "curl -X GET 'http://127.0.0.1:48080/v1/accounts' -H 'Accept: application/json'\n",
    )
    .unwrap();
    let path = file.display().to_string();
    app.set_imported(&path, psd2_console::tui::history::import_path(&path));
    let big = app.screen_text(200, 50);
    assert!(big.contains("Imported from"), "{big}");
    assert_overlay_covers(&big, '╭', '╮');
    // The temporary directory's name changes from run to run.
    let dir_name = dir.path().display().to_string();
    insta::assert_snapshot!("history_import_200x50", big.replace(&dir_name, "<tmp>"));
    let small = app.screen_text(80, 24);
    insta::assert_snapshot!("history_import_80x24", small.replace(&dir_name, "<tmp>"));
}

#[test]
fn r_on_an_exchange_of_another_profile_names_it_and_offers_the_recorded_one() {
    let h = History::in_memory().unwrap();
    let mut e = entry(
        T0,
        "accounts.list",
        "GET",
        "/v1/accounts",
        200,
        serde_json::json!({"accounts": []}),
        5,
    );
    e.profile = "My bank".into();
    let id = h.insert(&e).unwrap();
    let mut app = history_app(&h);
    let mut set = ProfileSet::load(None);
    let mut mine = set.get(DEFAULT_PROFILE).unwrap().clone();
    mine.name = "My bank".into();
    mine.source = Some("/nowhere/mybank.toml".into());
    set.profiles.push(mine);
    app.set_profiles(&set);
    // r asks, naming both profiles; nothing is sent yet.
    assert_eq!(app.press("r"), Action::None);
    let m = app.message().unwrap().text.clone();
    assert!(
        m.contains(&format!("#{id} was recorded under profile My bank")),
        "{m}"
    );
    assert!(
        m.contains(&format!(
            "a: send with the active profile {DEFAULT_PROFILE}"
        )),
        "{m}"
    );
    let s = app.screen_text(200, 50);
    assert!(s.contains("recorded under profile My bank"), "{s}");
    // y: switch to the recorded profile and send.
    assert_eq!(
        app.press("y"),
        Action::ResendHistoryAs(id, "My bank".into())
    );
    // a: send with the active profile.
    keys(&mut app, &h, "r");
    assert_eq!(app.press("a"), Action::ResendHistory(id));
    // Any other key: nothing.
    keys(&mut app, &h, "r");
    assert_eq!(app.press("q"), Action::None);
    assert!(!app.should_quit());
    // The re-send says which profile sends it.
    app.resend_started(&format!("#{id}"));
    assert!(
        app.message()
            .unwrap()
            .text
            .contains(&format!("with profile {DEFAULT_PROFILE}"))
    );
    // An exchange of the active profile is re-sent at once.
    let h = fixed_history();
    let mut app = history_app(&h);
    assert_eq!(app.press("r"), Action::ResendHistory(4));
}

#[test]
fn big_bodies_are_capped_in_the_history_with_size_and_sha256() {
    use psd2_console::client::history::{BODY_CAP, body_cut};
    let h = History::in_memory().unwrap();
    let big: Vec<u8> = std::iter::repeat_n(b'x', 50 << 20).collect();
    let sha: String = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &big)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut e = entry(
        T0,
        "payments.sepa.create",
        "POST",
        "/v1/payments/sepa-credit-transfers",
        400,
        serde_json::json!({}),
        5,
    );
    e.request_body = big.clone();
    let id = h.insert(&e).unwrap();
    drop(big);
    let stored = h.list(None, 10).unwrap();
    let got = stored.iter().find(|r| r.id == id).unwrap();
    assert!(
        got.request_body.len() < BODY_CAP + 200,
        "{}",
        got.request_body.len()
    );
    assert!(got.request_body[..BODY_CAP].iter().all(|b| *b == b'x'));
    assert_eq!(body_cut(&got.request_body), Some((50 << 20, sha.clone())));
    assert_eq!(body_cut(b"{}"), None);

    // The history screen shows it; r refuses to send a cut body; Enter opens it cut.
    let mut app = history_app(&h);
    let s = app.screen_text(160, 40);
    assert!(s.contains("body cut at 1048576 of 52428800 bytes"), "{s}");
    assert_eq!(app.press("r"), Action::None);
    let m = app.message().unwrap().text.clone();
    assert!(m.contains("not re-sent") && m.contains(&sha), "{m}");
    keys(&mut app, &h, "Enter");
    assert_eq!(app.screen(), Screen::Console);
    let body = app.param_value("payments.sepa.create", "body").unwrap();
    assert!(body.len() <= BODY_CAP + 200, "{}", body.len());
    assert!(
        app.message()
            .unwrap()
            .text
            .contains("was cut to 1048576 bytes")
    );
}

/// `c` on the import list: the doctor's checks of the highlighted imported request before it
/// is sent, as the file recorded it (original `Signature` kept). The cURL file holds a
/// request signed here whose keyId gives the issuer DN in X.500 order (as tests/it/doctor.rs
/// builds it); the view names that check and the cause, `Esc` goes back to the import list.
#[test]
fn c_on_the_import_list_shows_the_doctor_of_the_imported_request() {
    use psd2_console::cert::generate::{TppCertSpec, credentials_of, generate_set};
    use psd2_console::signing::{ELIGIBLE_HEADERS, imf_fixdate, sign_with_names};

    let creds = credentials_of(&generate_set(&TppCertSpec::default()).unwrap()).unwrap();
    let mut headers = headers(&[
        ("X-Request-ID", "6f1c9a52-3b7e-4d0a-9c2e-8e5f1a7b3c40"),
        ("PSU-ID", "0b3c8f0e-9a1d-4c6b-8e2f-7d5a4c3b2a10"),
        ("TPP-Redirect-URI", "http://127.0.0.1:8080/callback"),
        ("PSU-IP-Address", "127.0.0.1"),
    ]);
    headers.push(("Date".into(), imf_fixdate(SystemTime::now())));
    let names: Vec<String> = ELIGIBLE_HEADERS
        .iter()
        .filter(|n| headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(n)))
        .map(|n| n.to_string())
        .collect();
    let (_, mut params) = sign_with_names(&creds, "GET", "/v1/accounts", &headers, &names).unwrap();
    let cert = &creds.certificate;
    let mut x500 = cert.issuer.clone();
    x500.attributes.reverse();
    params.key_id = format!("SN={},CA={}", cert.serial_hex(), x500.to_rfc2253());
    headers.push(("TPP-Signature-Certificate".into(), cert.header_value()));
    headers.push(("Signature".into(), params.to_header_value()));
    let mut curl = format!("curl -X GET '{BASE_URL}/v1/accounts'");
    for (n, v) in &headers {
        curl.push_str(&format!(" \\\n  -H '{n}: {v}'"));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("customer.curl");
    std::fs::write(&file, curl + "\n").unwrap();
    let path = file.display().to_string();

    let h = fixed_history();
    let mut app = history_app(&h);
    app.set_imported(&path, psd2_console::tui::history::import_path(&path));
    assert!(app.screen_text(160, 48).contains("Imported from"));
    assert_eq!(app.press("c"), Action::None, "nothing is sent");
    assert!(app.history_diff_visible(), "the doctor uses the overlay");
    let text = app.screen_text(200, 50);
    assert!(text.contains("Doctor: cURL command 1 of"), "{text}");
    let line = |id: &str| check_line(&text, id);
    // The original Signature was kept: the keyId is checked and its fault named.
    assert!(line("keyid.issuer").contains('✘'), "{text}");
    assert!(line("keyid.issuer").contains("X.500 order"), "{text}");
    assert!(line("headers.required").contains('✔'), "{text}");
    assert!(text.contains("verdict: "), "{text}");
    // Esc closes the doctor and shows the import list again; Enter there would send.
    keys(&mut app, &h, "Esc");
    assert!(!app.history_diff_visible());
    assert!(app.screen_text(160, 48).contains("Imported from"));
}

/// Issue 18 defect 16: after an imported request was sent (as the runner does: begin the
/// send, then [`App::resend_started`]), the parameter pane's title no longer passes the
/// form's operation off as what was sent; the form's next preview makes it current again.
#[test]
fn the_parameter_title_says_the_form_was_not_sent_after_an_import_send() {
    let mut app = App::new(status());
    let spec = app.take_prepare_request().expect("a request to prepare");
    let req = tui::prepare_as_runner(&spec, &SessionState::default()).expect("signed");
    app.set_preview(Ok::<_, String>(req.clone()));
    assert!(
        app.screen_text(160, 48)
            .contains("Parameters · List accounts")
    );
    app.begin_send(req.clone());
    app.resend_started("GET accounts (imported)");
    let s = app.screen_text(160, 48);
    assert!(s.contains("Parameters (not sent) · List accounts"), "{s}");
    app.set_preview(Ok::<_, String>(req));
    let s = app.screen_text(160, 48);
    assert!(!s.contains("(not sent)"), "{s}");
}

/// A history of `n` exchanges whose X-Request-IDs share a prefix, each with a body naming
/// its transactions (text found only in bodies) and every fifth a 401.
fn typed_id_history(n: usize) -> History {
    let h = History::in_memory().unwrap();
    for i in 0..n {
        let mut e = entry(
            T0 + i as i64,
            "accounts.transactions",
            "GET",
            &format!("/v1/accounts/acc-{}/transactions", i % 7),
            if i % 5 == 0 { 401 } else { 200 },
            serde_json::json!({"transactions": {"booked": [{"transactionId": format!("tx-{i}-a")}]}}),
            i as u64,
        );
        e.request_headers[1].1 = format!("6f1c2a7e-0000-4000-8000-{i:012}");
        h.insert(&e).unwrap();
    }
    h
}

#[test]
fn typing_a_search_key_by_key_gives_the_rows_of_a_fresh_search_at_every_key() {
    // What the screen shows after each key (typed, erased, the box cleared) is what a
    // fresh search for the text then in the box gives: same rows, same order, the
    // highlighted one's whole exchange in the detail. The list is read as summaries; the
    // search still covers headers and bodies.
    let h = typed_id_history(40);
    let mut app = history_app(&h);
    assert_eq!(app.press("/"), Action::None);
    let fresh = |q: &str| -> Vec<i64> {
        let q = q.trim();
        h.list((!q.is_empty()).then_some(q), 500)
            .unwrap()
            .iter()
            .map(|e| e.id)
            .collect()
    };
    let steps = [
        "6",
        "f",
        "1",
        "c",
        "Backspace",
        "Backspace",
        "Backspace",
        "Backspace",
        "Backspace",
        "t",
        "x",
        "-",
        "3",
        "Backspace",
        "1",
        "7",
        "Backspace",
        "Backspace",
        "Backspace",
        "4",
        "0",
        "1",
        "C-u",
        "a",
        "c",
        "c",
        "-",
        "3",
        "Space",
        "Backspace",
        "Backspace",
        "Backspace",
        "Backspace",
        "Backspace",
        "Backspace",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "3",
        "9",
    ];
    // Then a whole X-Request-ID typed (from 12 characters on, a search is answered by
    // reading the texts of one trigram's exchanges: issue 23), in upper case at the end.
    let typed: Vec<String> = "6f1c2a7e-0000-4000-8000-000000000017"
        .chars()
        .chain("X-REQUEST-ID: 6F1C2A7E".chars())
        .map(|c| {
            if c == ' ' {
                "Space".to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    let steps = steps
        .iter()
        .copied()
        .chain(["C-u"])
        .chain(typed[..36].iter().map(String::as_str))
        .chain(["C-u"])
        .chain(typed[36..].iter().map(String::as_str));
    let mut seen = 0;
    let mut at_the_id = None;
    for k in steps {
        let a = app.press(k);
        run(&mut app, &h, a);
        let q = app.history_query().to_string();
        let shown: Vec<i64> = app.history_rows().iter().map(|e| e.id).collect();
        assert_eq!(shown, fresh(&q), "after {k:?}, search {q:?}");
        let t = q.trim();
        let by_index = h.ids_by_index((!t.is_empty()).then_some(t), 500).unwrap();
        assert_eq!(
            shown, by_index,
            "the index alone: after {k:?}, search {q:?}"
        );
        if q == "6f1c2a7e-0000-4000-8000-000000000017" {
            at_the_id = Some(shown.clone());
        }
        if let Some(id) = app.highlighted_exchange().map(|e| e.id) {
            let whole = app
                .history_entry(id)
                .expect("the highlighted exchange is read");
            assert_eq!(whole, &h.get(id).unwrap().unwrap(), "search {q:?}");
            seen += 1;
        }
    }
    assert_eq!(at_the_id, Some(vec![18]));
    assert_eq!(app.history_query(), "X-REQUEST-ID: 6F1C2A7E");
    assert_eq!(app.history_rows().len(), 40);
    assert!(seen > 30);
}

#[test]
fn typing_a_transaction_id_copied_from_a_body_gives_the_rows_of_a_fresh_search_at_every_key() {
    // Issue 23, r14/history: a `transactionId` copied from a body with its quotes. Its last
    // keys end in a trigram every exchange holds (`-a"`) while the whole text is in one:
    // such a key is answered from a rare trigram's texts, not by reading every candidate
    // and then the phrase query. Each key gives what a fresh search and the index alone
    // give.
    use psd2_console::client::history::SearchPath;
    let h = typed_id_history(300);
    let mut app = history_app(&h);
    assert_eq!(app.press("/"), Action::None);
    let mut paths = Vec::new();
    for c in r#""transactionId":"tx-217-a""#.chars() {
        let a = app.handle_key(key(c));
        run(&mut app, &h, a);
        paths.push(h.last_search_work().path);
        let q = app.history_query().to_string();
        let shown: Vec<i64> = app.history_rows().iter().map(|e| e.id).collect();
        let fresh: Vec<i64> = h
            .list(Some(&q), 500)
            .unwrap()
            .iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(shown, fresh, "search {q:?}");
        assert_eq!(
            shown,
            h.ids_by_index(Some(&q), 500).unwrap(),
            "{q:?}: the index alone"
        );
    }
    assert_eq!(
        app.history_rows().iter().map(|e| e.id).collect::<Vec<_>>(),
        [218]
    );
    assert_eq!(paths.last(), Some(&SearchPath::RareTrigram), "{paths:?}");
    assert!(
        !paths.contains(&SearchPath::VerifiedThenPhrase),
        "{paths:?}"
    );
}

#[test]
fn a_key_that_leaves_the_search_as_it_was_reads_nothing() {
    let h = fixed_history();
    let mut app = history_app(&h);
    app.press("/");
    // An empty box: Backspace, Ctrl-U and spaces ask for the same (whole) list.
    for k in [
        "Backspace",
        "C-u",
        "Space",
        "Space",
        "Backspace",
        "Backspace",
    ] {
        assert_eq!(app.press(k), Action::None, "{k} on an empty search");
    }
    for c in "balances".chars() {
        let a = app.handle_key(key(c));
        assert_eq!(a, Action::LoadHistory, "{c}");
        run(&mut app, &h, a);
    }
    // A space at the end and its removal: the search (trimmed) is the same.
    assert_eq!(app.press("Space"), Action::None);
    assert_eq!(app.history_query(), "balances ");
    assert_eq!(app.history_rows().len(), 1, "the rows of `balances` stay");
    assert_eq!(app.press("Backspace"), Action::None);
    // A word after the space changes it.
    app.press("Space");
    assert_eq!(app.handle_key(key('x')), Action::LoadHistory);
    // Rows read for a search that differs only by spaces around it are shown.
    let mut app = history_app(&h);
    app.press("/");
    for c in "401 ".chars() {
        app.handle_key(key(c));
    }
    let ignored = app.set_history("401", load_keeping(&h, "401", None));
    assert_eq!(ignored, Action::None);
    assert_eq!(
        app.history_rows().iter().map(|e| e.id).collect::<Vec<_>>(),
        [1]
    );
}

#[test]
fn moving_reads_the_whole_exchange_of_the_highlighted_row_only() {
    // The list holds summaries; the detail pane needs the whole exchange, read for the
    // highlighted row when it moves there (the first comes with the rows).
    let h = fixed_history();
    let mut app = history_app(&h);
    assert!(app.history_entry(4).is_some(), "the first row comes whole");
    assert!(app.history_entry(3).is_none(), "the others are not read");
    assert_eq!(app.press("j"), Action::LoadHistoryEntry(3));
    assert!(
        app.screen_text(160, 40).contains("Loading …"),
        "the detail waits for the read"
    );
    // Enter, d, c do nothing before it arrives; its arrival for another row is ignored.
    app.set_history_entry(2, load_entry(&h, 2));
    assert!(app.history_entry(2).is_none());
    app.set_history_entry(3, load_entry(&h, 3));
    let text = app.screen_text(160, 40);
    assert!(text.contains("Exchange #3"), "{text}");
    assert!(text.contains("interimAvailable"), "{text}");
    // Back to a row already read as the marked one: no read.
    app.press("m");
    assert_eq!(app.press("k"), Action::LoadHistoryEntry(4));
    assert_eq!(app.press("j"), Action::None, "#3 is marked, kept whole");
}
