//! Screens of the console rendered into ratatui's `TestBackend` and compared with insta
//! snapshots, plus key-handling checks. No terminal, no engine, no network: the App is fed
//! a real signed `PreparedRequest` (fixed clock, volatile values masked) and fake responses.

use psd2_console::client::{Exchange, PreparedRequest};
use psd2_console::profile::SessionState;
use psd2_console::tui::{
    Action, App, Focus, Level, Mode, Preview, ResponseState, ResponseView, StatusInfo,
};
use psd2_console::xs2a::redirect::{PsuContext, ScaCallback, ScaSuccess};

use crate::common::tui::{self, BASE_URL, Drive, REDIRECT_URI, key, prepare_as_runner};

const PSU_ID: &str = "8c1d3f0e-5b7a-4c2e-9f10-3a6b2d4e5f60";
const SESSION_ID: &str = "0d9f3c2a-1111-4222-8333-944455556666";

fn session(psu: bool) -> SessionState {
    SessionState {
        psu_id: psu.then(|| PSU_ID.to_string()),
        tpp_session_id: Some(SESSION_ID.to_string()),
        context: psu.then_some(PsuContext::Private),
        ..SessionState::default()
    }
}

/// [`tui::status`], with the PSU of [`session`] when `psu`.
fn status(psu: bool) -> StatusInfo {
    StatusInfo {
        psu_id: psu.then(|| PSU_ID.to_string()),
        context: psu.then(|| "PRIVATE".to_string()),
        ..tui::status()
    }
}

/// Prepares what the app asks for, as the runner does, with a fixed clock.
fn prepare_for(app: &mut App, psu: bool) -> Option<PreparedRequest> {
    let spec = app.take_prepare_request()?;
    let r = prepare_as_runner(&spec, &session(psu));
    let out = r.as_ref().ok().cloned();
    app.set_preview(r.map_err(|e| e.to_string()));
    out
}

fn new_app() -> App {
    let mut app = App::new(status(false));
    app.mask_volatile = true;
    prepare_for(&mut app, false);
    app
}

fn exchange(status: u16, body: serde_json::Value, ms: u64) -> Exchange {
    tui::json_exchange(status, body, ms, "<x-request-id>")
}

fn sca_redirect_url() -> String {
    format!(
        "{BASE_URL}/sca/authorise?authorisationId=4f1c2a8e-0b7d-4e61-9a3c-5d2e8f7b6a10&tpp-session-id={SESSION_ID}&return={REDIRECT_URI}"
    )
}

fn response_401(app: &mut App) {
    let req = app.preview_request();
    let ex = exchange(
        401,
        serde_json::json!({
            "tppMessages": [{
                "category": "ERROR",
                "code": "PSU_CREDENTIALS_INVALID",
                "text": "No PSU-ID: the PSU must authenticate first"
            }],
            "_links": {"scaRedirect": {"href": sca_redirect_url()}}
        }),
        42,
    );
    app.begin_send(req.clone());
    app.finish_send(Ok(ResponseView::from_exchange("List accounts", &req, &ex)));
}

trait PreviewRequest {
    fn preview_request(&self) -> PreparedRequest;
}

impl PreviewRequest for App {
    fn preview_request(&self) -> PreparedRequest {
        match self.preview() {
            Preview::Ready { request, .. } => (**request).clone(),
            other => panic!("no prepared request: {other:?}"),
        }
    }
}

#[test]
fn initial_screen() {
    let app = new_app();
    let s = app.screen_text(160, 48);
    assert!(s.contains("List accounts"));
    assert!(s.contains("Sandbox customers"));
    assert!(s.contains("GET http://127.0.0.1:40123/v1/accounts"));
    assert!(s.contains("Signature inspector"));
    assert!(s.contains("no PSU yet"));
    assert!(!s.contains("PRIVATE KEY"), "no key material on screen");
    insta::assert_snapshot!("initial_screen", s);
}

#[test]
fn narrow_terminal_still_shows_every_pane() {
    let app = new_app();
    let s = app.screen_text(100, 32);
    for pane in [
        "Operations",
        "Parameters",
        "Request",
        "Signature inspector",
        "Response",
    ] {
        assert!(s.contains(pane), "{pane} missing:\n{s}");
    }
    insta::assert_snapshot!("narrow_screen", s);
}

/// The help's content (every binding, page by page) is `tests/tui_keys.rs::help_overlay_snapshot`.
#[test]
fn help_toggles_with_question_mark_and_closes_with_esc() {
    let mut app = new_app();
    assert_eq!(app.press("?"), Action::None);
    assert!(app.help_visible());
    assert!(app.screen_text(160, 48).contains("Keys"));
    app.keys("?");
    assert!(!app.help_visible(), "? toggles the help off again");
    app.keys("? Esc");
    assert!(!app.help_visible(), "Esc closes the help");
}

#[test]
fn the_sca_prompt_shows_the_sca_redirect_as_a_qr_code_a_phone_can_read() {
    let mut app = new_app();
    response_401(&mut app);
    // Tall enough: under the text; short and wide: beside it. Both decode to the link.
    for (w, h) in [(160, 48), (200, 34)] {
        let buf = app.buffer(w, h);
        let found = crate::qr::decode_qr(&buf, buf.area);
        assert_eq!(found, vec![sca_redirect_url()], "at {w}×{h}");
    }
    // Too small for an uncut code: none drawn, and a note says what size it needs.
    let buf = app.buffer(100, 30);
    assert!(crate::qr::decode_qr(&buf, buf.area).is_empty());
    assert!(
        app.screen_text(100, 30)
            .contains("A QR code of this link needs a terminal of")
    );
    // Issue 18 defect 10: at 80×24 outside presenter mode too, the note is in the prompt
    // (it used to be cut off below the box's last row).
    let buf = app.buffer(80, 24);
    assert!(crate::qr::decode_qr(&buf, buf.area).is_empty());
    let s = app.screen_text(80, 24);
    let flat = s
        .lines()
        .filter_map(|l| {
            let a = l.find('║')?;
            let b = l.rfind('║')?;
            (b > a).then(|| l[a + '║'.len_utf8()..b].trim().to_string())
        })
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains("A QR code of this link needs a terminal of"),
        "{s}"
    );
}

#[test]
fn response_401_opens_the_sca_prompt() {
    let mut app = new_app();
    response_401(&mut app);
    let prompt = app.sca_prompt().expect("prompt shown");
    assert_eq!(prompt.url, sca_redirect_url());
    let s = app.screen_text(160, 48);
    assert!(s.contains("401 Unauthorized"));
    assert!(s.contains("42 ms"));
    assert!(s.contains("Strong customer authentication"));
    assert!(s.contains("open it in the browser"));
    // The URL is shown in full (wrapped), so it can be copied when no browser opens.
    let joined: String = s
        .lines()
        .filter_map(|l| {
            // the text inside the prompt's double-line frame
            let a = l.find('║')?;
            let b = l.rfind('║')?;
            (b > a).then(|| l[a + '║'.len_utf8()..b].trim())
        })
        .collect();
    assert!(joined.contains(&sca_redirect_url()), "{s}");
    insta::assert_snapshot!("response_401_sca_prompt", s);

    // o asks the runner to open the browser; a failure lands in the status line.
    assert_eq!(app.press("o"), Action::OpenBrowser(sca_redirect_url()));
    app.browser_opened(Err(psd2_console::tui::BrowserError::NoGraphicalSession));
    assert_eq!(app.message().unwrap().level, Level::Error);
    assert!(app.message().unwrap().text.contains("no graphical session"));
    // Esc dismisses the prompt; o brings the URL back.
    app.keys("Esc");
    assert!(app.sca_prompt().is_none());
    assert!(matches!(app.press("o"), Action::OpenBrowser(_)));
    assert!(app.sca_prompt().is_some());
}

#[test]
fn sca_callback_closes_the_prompt_and_resigns_with_psu_id() {
    let mut app = new_app();
    response_401(&mut app);
    let cb = ScaCallback::Success(ScaSuccess {
        psu_id: PSU_ID.into(),
        psu_corporate_id: None,
        tpp_session_id: SESSION_ID.into(),
        context: PsuContext::Private,
    });
    let summary =
        format!("SCA complete: PSU-ID {PSU_ID} (PRIVATE context); send the request again");
    app.sca_finished(&cb, Ok(summary.clone()), status(true));
    assert!(app.sca_prompt().is_none());
    assert_eq!(app.message().unwrap().text, summary);
    assert_eq!(app.message().unwrap().level, Level::Success);
    let req = prepare_for(&mut app, true).expect("request re-prepared after SCA");
    assert_eq!(req.header("PSU-ID"), Some(PSU_ID));
    let s = app.screen_text(160, 48);
    assert!(s.contains(&format!("PSU-ID: {PSU_ID}")), "{s}");
    assert!(s.contains(&format!("psu-id: {PSU_ID}")), "signed: {s}");
    insta::assert_snapshot!("after_sca_callback", s);
    // Nothing else to prepare until something changes.
    assert!(app.take_prepare_request().is_none());
    assert_eq!(app.press("s"), Action::Send);
}

#[test]
fn scrolled_json_response() {
    let mut app = new_app();
    let accounts: Vec<serde_json::Value> = (1..=40)
        .map(|i| {
            serde_json::json!({
                "resourceId": format!("acc-{i:03}"),
                "iban": format!("NO93860111179{i:02}"),
                "currency": "NOK",
                "name": format!("Account {i}"),
            })
        })
        .collect();
    let req = app.preview_request();
    let ex = exchange(200, serde_json::json!({ "accounts": accounts }), 7);
    app.begin_send(req.clone());
    app.finish_send(Ok(ResponseView::from_exchange("List accounts", &req, &ex)));
    let ResponseState::Done(view) = app.response() else {
        panic!("no response")
    };
    assert!(view.body_lines().len() > 200);
    // First account pre-filled for the per-account operations.
    assert_eq!(
        app.param_value("accounts.balances", "account-id"),
        Some("acc-001")
    );
    assert_eq!(
        app.param_value("accounts.transactions", "account-id"),
        Some("acc-001")
    );
    app.screen_text(160, 48); // learn the viewport
    app.focus_on(Focus::Response);
    app.keys("PageDown j Down");
    let top = app.response_scroll();
    assert!(top > 30, "scrolled a page and two lines: {top}");
    let s = app.screen_text(160, 48);
    assert!(s.contains(&format!("lines {}–", top + 1)), "{s}");
    insta::assert_snapshot!("scrolled_json_response", s);
    app.keys("End");
    app.screen_text(160, 48);
    assert_eq!(
        app.response_scroll() + 40,
        view_total(&app),
        "End shows the last line"
    );
    app.keys("Home");
    assert_eq!(app.response_scroll(), 0);
    app.keys("PageUp");
    assert_eq!(app.response_scroll(), 0);
}

fn view_total(app: &App) -> usize {
    match app.response() {
        ResponseState::Done(v) => v.total_lines(),
        _ => 0,
    }
}

#[test]
fn a_user_typed_account_id_is_not_overwritten() {
    let mut app = new_app();
    assert!(app.set_param("accounts.balances", "account-id", "mine"));
    let req = app.preview_request();
    let ex = exchange(
        200,
        serde_json::json!({"accounts": [{"resourceId": "acc-9"}]}),
        1,
    );
    app.finish_send(Ok(ResponseView::from_exchange("List accounts", &req, &ex)));
    assert_eq!(
        app.param_value("accounts.balances", "account-id"),
        Some("mine")
    );
    assert_eq!(
        app.param_value("accounts.transactions", "account-id"),
        Some("acc-9")
    );
}

#[test]
fn insert_mode_types_global_keys_as_text() {
    let mut app = new_app();
    assert!(app.select_operation("accounts.transactions"));
    prepare_for(&mut app, false);
    assert!(matches!(app.preview(), Preview::Error(e) if e.contains("account-id")));
    assert_eq!(app.press("e"), Action::None);
    assert_eq!(app.mode(), Mode::Insert);
    assert_eq!(app.focus(), Focus::Params);
    for c in "acc-q?s".chars() {
        assert_eq!(app.handle_key(key(c)), Action::None, "{c} is typed");
    }
    assert!(!app.should_quit(), "q in INSERT mode does not quit");
    assert!(
        !app.help_visible(),
        "? in INSERT mode does not open the help"
    );
    assert_eq!(app.mode(), Mode::Insert);
    assert_eq!(
        app.param_value("accounts.transactions", "account-id"),
        Some("acc-q?s")
    );
    app.keys("Backspace Backspace Left 1");
    assert_eq!(
        app.param_value("accounts.transactions", "account-id"),
        Some("acc-1q")
    );
    // Tab moves to the next field without leaving INSERT mode.
    app.keys("Tab");
    assert_eq!(app.field_index(), 1);
    for c in "booked".chars() {
        app.handle_key(key(c));
    }
    let req = prepare_for(&mut app, false).expect("prepared with the typed values");
    assert!(
        req.url
            .ends_with("/v1/accounts/acc-1q/transactions?bookingStatus=booked"),
        "{}",
        req.url
    );
    let s = app.screen_text(160, 48);
    assert!(s.contains("INSERT"));
    insta::assert_snapshot!("insert_mode", s);
    // Esc leaves INSERT mode and keeps the value; now q quits.
    app.keys("Esc");
    assert_eq!(app.mode(), Mode::Normal);
    assert_eq!(
        app.param_value("accounts.transactions", "bookingStatus"),
        Some("booked")
    );
    assert_eq!(app.press("q"), Action::Quit);
    assert!(app.should_quit());
}

#[test]
fn q_quits_outside_insert_mode() {
    let mut app = new_app();
    assert_eq!(app.press("q"), Action::Quit);
    assert!(app.should_quit());
}

#[test]
fn ctrl_c_quits_even_in_insert_mode() {
    let mut app = new_app();
    app.select_operation("accounts.balances");
    app.keys("e");
    assert_eq!(app.mode(), Mode::Insert);
    assert_eq!(app.press("C-c"), Action::Quit);
    assert!(app.should_quit());
}

#[test]
fn keys_for_the_main_flow() {
    let mut app = new_app();
    assert_eq!(app.selected_operation().id, "accounts.list");
    let ops = psd2_console::xs2a::operations::OPERATIONS;
    app.keys("j");
    assert_eq!(app.selected_operation().id, ops[1].id);
    app.keys("Down");
    assert_eq!(app.selected_operation().id, ops[2].id);
    // The last operation stays selected at the end of the list.
    let last = ops[ops.len() - 1].id;
    app.select_operation(last);
    let _ = app.take_prepare_request();
    app.keys("Down");
    assert_eq!(app.selected_operation().id, last);
    app.keys("k");
    assert_eq!(app.selected_operation().id, ops[ops.len() - 2].id);
    assert!(
        app.take_prepare_request().is_some(),
        "selection re-prepares"
    );
    assert!(app.take_prepare_request().is_none(), "only once per change");
    assert_eq!(app.press("s"), Action::Send);
    assert_eq!(app.press("Enter"), Action::Send);
    // r asks first (y/N): y resets.
    assert_eq!(app.press("r"), Action::None);
    assert_eq!(app.press("y"), Action::ResetSession);
    // Enter on the parameters edits instead of sending.
    app.keys("Tab");
    assert_eq!(app.focus(), Focus::Params);
    // (its first field is the body, which opens the body editor: go to a header)
    app.keys("Down");
    assert_eq!(app.press("Enter"), Action::None);
    assert_eq!(app.mode(), Mode::Insert);
    app.keys("Enter");
    assert_eq!(app.mode(), Mode::Normal);
    app.keys("S-BackTab");
    assert_eq!(app.focus(), Focus::Operations);
    // o without a scaRedirect only explains.
    assert_eq!(app.press("o"), Action::None);
    // While a request is in flight, s does not send twice.
    let req = app.preview_request_or_list();
    app.begin_send(req);
    assert_eq!(app.press("s"), Action::None);
    assert!(app.is_sending());
}

trait OrList {
    fn preview_request_or_list(&mut self) -> PreparedRequest;
}

impl OrList for App {
    fn preview_request_or_list(&mut self) -> PreparedRequest {
        self.select_operation("accounts.list");
        prepare_for(self, false).expect("list accounts prepares")
    }
}

#[test]
fn paste_types_only_while_editing() {
    let mut app = new_app();
    app.select_operation("accounts.balances");
    app.handle_paste("sq?");
    assert!(!app.should_quit() && !app.help_visible());
    assert_eq!(app.param_value("accounts.balances", "account-id"), Some(""));
    app.keys("e");
    app.handle_paste("c86d2be7-2c2c\n");
    assert_eq!(
        app.param_value("accounts.balances", "account-id"),
        Some("c86d2be7-2c2c")
    );
}
