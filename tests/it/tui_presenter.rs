//! Presenter mode (issue 12, item 4) on ratatui's `TestBackend`: at projector sizes (80×24,
//! 100×30) the console with a signed request and a response, the SCA prompt with its QR code
//! and the history screen are snapshotted, and each screen is checked programmatically: no
//! secret is visible (the Signature value, the certificate's base64, the full PSU-ID and
//! PSU-Corporate-ID, nor pieces of them), and the essentials are (operation, status, the
//! step line). The request is really signed (fixed clock and X-Request-ID), not masked for
//! snapshots, so the checks look for the real values.

use psd2_console::client::history::{History, HistoryEntry};
use psd2_console::client::{Exchange, PreparedRequest};
use psd2_console::profile::SessionState;
use psd2_console::tui::history::load;
use psd2_console::tui::{App, Focus, Preview, ResponseView, Screen, StatusInfo};
use psd2_console::xs2a::redirect::PsuContext;
use ratatui::buffer::Buffer;

use crate::common::tui::{self, Drive, buffer_text, prepare_as_runner};

const PSU_ID: &str = "8c1d3f0e-5b7a-4c2e-9f10-3a6b2d4e5f60";
const PSU_CORPORATE_ID: &str = "917364528-treasury";
const SESSION_ID: &str = "0d9f3c2a-1111-4222-8333-944455556666";
/// Typed into the form, so the signed request (and its snapshot) is the same every run.
const X_REQUEST_ID: &str = "5f0c1e2d-3b4a-4c5d-8e6f-7a8b9c0d1e2f";
/// The projector sizes of issue 12.
const SIZES: [(u16, u16); 2] = [(80, 24), (100, 30)];

fn session() -> SessionState {
    SessionState {
        psu_id: Some(PSU_ID.into()),
        psu_corporate_id: Some(PSU_CORPORATE_ID.into()),
        tpp_session_id: Some(SESSION_ID.into()),
        context: Some(PsuContext::Corporate),
        ..SessionState::default()
    }
}

fn status() -> StatusInfo {
    StatusInfo {
        psu_id: Some(PSU_ID.into()),
        psu_corporate_id: Some(PSU_CORPORATE_ID.into()),
        context: Some("CORPORATE".into()),
        ..tui::status()
    }
}

/// The console after SCA in a corporate context, List accounts prepared and signed as the
/// runner would (the request's real Signature and certificate), presenter mode on.
fn presenter_app() -> (App, PreparedRequest) {
    let mut app = App::new(status());
    assert!(app.set_param("accounts.list", "X-Request-ID", X_REQUEST_ID));
    app.set_presenter(true);
    let req = prepare(&mut app);
    (app, req)
}

fn prepare(app: &mut App) -> PreparedRequest {
    let spec = app.take_prepare_request().expect("a request to prepare");
    let req = prepare_as_runner(&spec, &session()).expect("signed");
    app.set_preview(Ok::<_, String>(req.clone()));
    req
}

fn exchange(status: u16, body: serde_json::Value) -> Exchange {
    tui::json_exchange(status, body, 23, X_REQUEST_ID)
}

fn accounts_body() -> serde_json::Value {
    serde_json::json!({"accounts": [
        {"resourceId": "0c3f6a1e-7d4b-4a58-9e21-5b8c7d6e4f30", "bban": "86011117947",
         "currency": "NOK", "name": "Driftskonto", "cashAccountType": "CACC"},
        {"resourceId": "5b8c7d6e-4f30-4a58-9e21-0c3f6a1e7d4b", "bban": "86011117955",
         "currency": "NOK", "name": "Skattetrekk", "cashAccountType": "TAXE"}
    ]})
}

/// Sends `req` as the runner does and answers `status` with `body`.
fn answer(app: &mut App, req: &PreparedRequest, status: u16, body: serde_json::Value) {
    app.begin_send(req.clone());
    let ex = exchange(status, body);
    app.finish_send(Ok(ResponseView::from_exchange("List accounts", req, &ex)));
}

/// What must never be on a presenter's screen: the Signature header's value and its
/// signature bytes, the certificate's base64, the PSU-ID and PSU-Corporate-ID, and the
/// TPP-Session-ID (the callback listener's binding of the SCA flow).
fn secrets(req: &PreparedRequest) -> Vec<(&'static str, String)> {
    let sig = req.header("Signature").expect("signed").to_string();
    let bytes = sig
        .split("signature=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("signature bytes")
        .to_string();
    let cert = req
        .header("TPP-Signature-Certificate")
        .expect("certificate")
        .to_string();
    assert!(
        bytes.len() > 100 && cert.len() > 500,
        "real values: {bytes} {cert}"
    );
    vec![
        ("Signature value", sig),
        ("signature bytes", bytes),
        ("certificate base64", cert),
        ("PSU-ID", PSU_ID.into()),
        ("PSU-Corporate-ID", PSU_CORPORATE_ID.into()),
        ("TPP-Session-ID", SESSION_ID.into()),
    ]
}

/// Fails when a secret of `secrets`, or a piece of it, is on `screen`: the whole value, or
/// any 8 characters of it in one row (a wrapped secret leaves pieces on several rows). The
/// Signature header's value is only checked whole: its keyId, algorithm and header list
/// are shown on purpose, its signature bytes are checked piece by piece.
fn assert_no_secret(screen: &str, secrets: &[(&str, String)], what: &str) {
    let rows: Vec<&str> = screen.lines().collect();
    let flat: String = screen.lines().map(str::trim).collect();
    for (name, value) in secrets {
        assert!(
            !flat.contains(value.as_str()),
            "{what}: the {name} is on screen:\n{screen}"
        );
        if *name == "Signature value" {
            continue;
        }
        let chars: Vec<char> = value.chars().collect();
        for piece in chars.windows(8) {
            let piece: String = piece.iter().collect();
            if let Some(row) = rows.iter().find(|r| r.contains(&piece)) {
                panic!("{what}: a piece of the {name} ({piece}) is on screen: {row}\n{screen}");
            }
        }
    }
}

/// Every row as text, trailing spaces trimmed.
fn text_of(buf: &Buffer) -> String {
    buffer_text(buf, true)
}

#[test]
fn console_with_a_signed_request_and_a_response_masks_secrets_at_projector_sizes() {
    let (mut app, req) = presenter_app();
    let secrets = secrets(&req);
    answer(&mut app, &req, 200, accounts_body());
    for (w, h) in SIZES {
        let s = app.screen_text(w, h);
        assert_no_secret(&s, &secrets, &format!("console at {w}×{h}"));
        // The essentials: the operation, the status, the step in words, the head of the
        // response, the shortened PSU data.
        assert!(s.contains("List accounts"), "{w}×{h}:\n{s}");
        assert!(s.contains("200 OK"), "{w}×{h}:\n{s}");
        assert!(
            s.contains("Step: List accounts answered 200 OK — consent valid"),
            "{w}×{h}:\n{s}"
        );
        assert!(
            s.contains("\"accounts\""),
            "head of the body at {w}×{h}:\n{s}"
        );
        assert!(
            s.contains("PSU-ID 8c…"),
            "PSU-ID shortened at {w}×{h}:\n{s}"
        );
        // The signature inspector is collapsed to its title; Tab gives it the room.
        assert!(
            s.contains("Signature inspector · Tab shows it"),
            "{w}×{h}:\n{s}"
        );
        insta::assert_snapshot!(format!("presenter_console_{w}x{h}"), s);
    }
    // Wide, every pane whole: the request's headers masked where they are shown.
    let s = app.screen_text(160, 48);
    assert_no_secret(&s, &secrets, "console at 160×48");
    assert!(s.contains("PSU-ID: 8c…"), "request header:\n{s}");
    assert!(s.contains("PSU-Corporate-ID: 91…"), "{s}");
    assert!(s.contains("TPP-Signature-Certificate: [masked]"), "{s}");
    assert!(s.contains("psu-id: 8c…"), "signing string:\n{s}");
    // Every scroll position of the request, the signature inspector and the response at
    // both sizes: nothing secret, and the masked forms are where the values were.
    let mut seen = String::new();
    for (w, h) in SIZES {
        for focus in [Focus::Request, Focus::Signature, Focus::Response] {
            app.focus_on(focus).keys("Home");
            for _ in 0..20 {
                let s = app.screen_text(w, h);
                assert_no_secret(&s, &secrets, &format!("{focus:?} scrolled at {w}×{h}"));
                seen.push_str(&s);
                app.keys("PageDown");
            }
        }
    }
    for shown in [
        "PSU-ID: 8c…",
        "PSU-Corporate-ID: 91…",
        "TPP-Signature-Certificate: [masked]",
        "psu-id: 8c…",
        "psu-corporate-id: 91…",
        "signature=\"[masked]\"",
        "Request · as sent · Tab shows it",
        "Signing string",
    ] {
        assert!(seen.contains(shown), "{shown} never shown");
    }
    // The test TPP's certificate is made per run: for the snapshot its serial (in the
    // keyId) is masked as the other console snapshots mask it.
    app.mask_volatile = true;
    app.set_preview(Ok::<_, String>(req.clone()));
    app.focus_on(Focus::Response).keys("Home");
    app.focus_on(Focus::Signature).keys("Home");
    insta::assert_snapshot!(
        "presenter_signature_inspector_100x30",
        app.screen_text(100, 30)
    );
}

/// The sandbox's scaRedirect (`{public_url}/sca/{authorisationId}`).
const SCA_URL: &str = "http://127.0.0.1:40123/sca/4f1c2a8e-0b7d-4e61-9a3c-5d2e8f7b6a10";

#[test]
fn sca_prompt_fits_its_qr_code_at_projector_sizes_and_the_code_reads_back() {
    let mut app = App::new(StatusInfo {
        psu_id: None,
        psu_corporate_id: None,
        context: None,
        ..status()
    });
    assert!(app.set_param("accounts.list", "X-Request-ID", X_REQUEST_ID));
    app.set_presenter(true);
    let spec = app.take_prepare_request().unwrap();
    let req = prepare_as_runner(
        &spec,
        &SessionState {
            tpp_session_id: Some(SESSION_ID.into()),
            ..SessionState::default()
        },
    )
    .unwrap();
    app.set_preview(Ok::<_, String>(req.clone()));
    let secrets: Vec<_> = secrets(&req)
        .into_iter()
        .filter(|(n, _)| !n.starts_with("PSU"))
        .collect();
    answer(
        &mut app,
        &req,
        401,
        serde_json::json!({
            "tppMessages": [{"category": "ERROR", "code": "PSU_CREDENTIALS_INVALID",
                             "text": "No PSU-ID: the PSU must authenticate first"}],
            "_links": {"scaRedirect": {"href": SCA_URL}}
        }),
    );
    assert!(app.sca_prompt().is_some());
    for (w, h) in SIZES {
        let buf = app.buffer(w, h);
        let s = text_of(&buf);
        // Uncut, so a phone in the room can scan it: it decodes to the scaRedirect.
        assert_eq!(
            crate::qr::decode_qr(&buf, buf.area),
            vec![SCA_URL.to_string()],
            "QR code at {w}×{h}:\n{s}"
        );
        assert!(!s.contains("A QR code of this link needs"), "{w}×{h}:\n{s}");
        assert_no_secret(&s, &secrets, &format!("SCA prompt at {w}×{h}"));
        // The essentials: operation and status, the link in full (it has no PSU data), the
        // keys, the step line.
        assert!(
            s.contains("List accounts: 401 Unauthorized"),
            "{w}×{h}:\n{s}"
        );
        assert!(prompt_text(&s).contains(SCA_URL), "{w}×{h}:\n{s}");
        assert!(s.contains("open it in the browser"), "{w}×{h}:\n{s}");
        insta::assert_snapshot!(format!("presenter_sca_prompt_{w}x{h}"), s);
    }
    // Behind the prompt (closed), the step line says what the room waits for.
    app.keys("Esc");
    let s = app.screen_text(80, 24);
    assert!(
        s.contains("Step: waiting for the PSU to complete SCA in the browser"),
        "{s}"
    );
}

/// The text column of the SCA prompt, its rows joined: what is inside the frame left of the
/// QR code.
fn prompt_text(screen: &str) -> String {
    screen
        .lines()
        .filter_map(|l| {
            let inside = l.strip_prefix("║")?;
            let end = inside.find(['█', '▀', '▄', '║']).unwrap_or(inside.len());
            Some(inside[..end].trim().to_string())
        })
        .collect()
}

#[test]
fn the_sca_prompt_masks_psu_data_in_the_link_but_the_qr_code_keeps_it() {
    // A bank whose scaRedirect carries the PSU's id: the text shortens it, the QR code
    // (what the phone opens) holds the link unchanged.
    let url = format!("http://127.0.0.1:40123/sca/start?psu-id={PSU_ID}&a=4f1c");
    let (mut app, req) = presenter_app();
    answer(
        &mut app,
        &req,
        401,
        serde_json::json!({"_links": {"scaRedirect": {"href": url}}}),
    );
    let buf = app.buffer(100, 30);
    let s = text_of(&buf);
    assert_no_secret(&s, &secrets(&req), "SCA prompt with a PSU-ID in the link");
    assert!(prompt_text(&s).contains("psu-id=8c…&a=4f1c"), "{s}");
    assert_eq!(crate::qr::decode_qr(&buf, buf.area), vec![url]);
}

#[test]
fn history_screen_masks_recorded_secrets_at_projector_sizes() {
    let (mut app, req) = presenter_app();
    let secrets = secrets(&req);
    let history = History::in_memory().unwrap();
    let mut headers = req.headers.clone();
    headers.push(("X-Unrelated".into(), "kept".into()));
    for (i, (status, body)) in [
        (401, serde_json::json!({"tppMessages": [{"category": "ERROR", "code": "PSU_CREDENTIALS_INVALID"}]})),
        (200, accounts_body()),
    ]
    .into_iter()
    .enumerate()
    {
        history
            .insert(&HistoryEntry {
                id: 0,
                at: 1_780_000_000 + 40 * i as i64,
                profile: "sandbox".into(),
                operation_id: "accounts.list".into(),
                params: Vec::new(),
                method: "GET".into(),
                url: req.url.clone(),
                path_and_query: req.path_and_query.clone(),
                request_headers: headers.clone(),
                request_body: Vec::new(),
                status,
                response_headers: exchange(status, body.clone()).headers,
                response_body: serde_json::to_vec(&body).unwrap(),
                elapsed_ms: 20 + i as u64,
                ..HistoryEntry::default()
            })
            .unwrap();
    }
    app.keys("3");
    assert_eq!(app.screen(), Screen::History);
    app.set_history("", load(&history, ""));
    for (w, h) in SIZES {
        let s = app.screen_text(w, h);
        assert_no_secret(&s, &secrets, &format!("history at {w}×{h}"));
        assert!(s.contains("/v1/accounts"), "{w}×{h}:\n{s}");
        assert!(s.contains("Exchange #2"), "{w}×{h}:\n{s}");
        assert!(s.contains("Step:"), "{w}×{h}:\n{s}");
        insta::assert_snapshot!(format!("presenter_history_{w}x{h}"), s);
    }
    // The detail scrolled to the request headers: the stored certificate and PSU data are
    // there in the history, masked on screen only.
    let stored = app.history_entry(app.history_rows()[0].id).unwrap();
    assert!(
        stored
            .request_headers
            .iter()
            .any(|(n, v)| n == "PSU-ID" && v == PSU_ID),
        "the history keeps the real value"
    );
    app.keys("PageDown");
    for (w, h) in SIZES {
        let s = app.screen_text(w, h);
        assert_no_secret(&s, &secrets, &format!("history detail at {w}×{h}"));
    }
}

#[test]
fn p_toggles_masking_and_the_high_contrast_theme() {
    let mut app = App::new(status());
    assert!(app.set_param("accounts.list", "X-Request-ID", X_REQUEST_ID));
    let req = prepare(&mut app);
    let secrets = secrets(&req);
    let start_theme = app.theme.clone();
    assert_eq!(start_theme.name, "dark");
    let plain = app.screen_text(100, 30);
    assert!(plain.contains(PSU_ID), "off: values in full:\n{plain}");
    assert!(!plain.contains("Step:"));

    app.keys("P");
    assert!(app.presenter());
    assert_eq!(app.theme.name, "high-contrast");
    let s = app.screen_text(100, 30);
    assert_no_secret(&s, &secrets, "after P");
    assert!(s.contains("Step: consent valid — list accounts"), "{s}");
    assert!(
        s.contains("Presenter mode"),
        "the status line says so:\n{s}"
    );

    // Masking is at render time: the request kept is the real one.
    match app.preview() {
        Preview::Ready { request, .. } => assert_eq!(request.header("PSU-ID"), Some(PSU_ID)),
        other => panic!("{other:?}"),
    }

    app.keys("P");
    assert!(!app.presenter());
    assert_eq!(app.theme, start_theme, "the theme before comes back");
    let s = app.screen_text(100, 30);
    assert!(s.contains(PSU_ID), "off again:\n{s}");
    assert!(!s.contains("Step:"));

    // P works on the other screens and over the SCA prompt, but types itself while a
    // parameter is edited.
    app.keys("3 P");
    assert!(app.presenter());
    app.keys("P 1 e");
    assert!(!app.presenter());
    app.type_text("P");
    assert!(!app.presenter(), "typed, not a command");
}

#[test]
fn the_palette_and_the_help_list_presenter_mode() {
    let mut app = App::new(status());
    app.keys("C-p");
    app.type_text("presenter");
    let entries = app.palette_entries();
    assert!(
        entries
            .iter()
            .any(|b| b.command == psd2_console::tui::keymap::Command::TogglePresenter),
        "{entries:?}"
    );
    app.keys("Esc ?");
    let help: String = (0..6)
        .map(|_| {
            let s = app.screen_text(160, 48);
            app.keys("PageDown");
            s
        })
        .collect();
    assert!(help.contains("presenter mode"), "{help}");
}

#[test]
fn customer_numbers_are_masked_only_when_the_config_file_asks() {
    use psd2_console::tui::config::parse_config;
    let cfg = parse_config(
        "theme = \"dark\"\n[presenter]\nmask_customer_numbers = true\n",
        "config.toml",
    );
    assert!(
        cfg.mask_customer_numbers && cfg.problems.is_empty(),
        "{cfg:?}"
    );
    let bad = parse_config(
        "[presenter]\nmask_customer_numbers = \"yes\"\nshow = 1\n",
        "config.toml",
    );
    assert!(!bad.mask_customer_numbers);
    assert_eq!(bad.problems.len(), 2, "{:?}", bad.problems);
    assert!(
        bad.problems[0].starts_with("config.toml:2:"),
        "{:?}",
        bad.problems
    );

    let number = "31125461118";
    let (mut app, req) = presenter_app();
    answer(
        &mut app,
        &req,
        200,
        serde_json::json!({"customers": [{"customerNumber": number, "customerName": "Kari Nordmann"}]}),
    );
    let s = app.screen_text(100, 30);
    assert!(
        s.contains(number),
        "off by default: the trainer types it:\n{s}"
    );
    app.set_mask_customer_numbers(true);
    let s = app.screen_text(100, 30);
    assert!(!s.contains(number), "{s}");
    assert!(s.contains("\"customerNumber\": \"31…\""), "{s}");
}

#[test]
fn profiles_screen_masks_the_session_psu() {
    use psd2_console::profile::{Paths, ProfileSet};
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path().to_path_buf());
    session()
        .save(&paths.session_file("embedded-sandbox"))
        .unwrap();
    let (mut app, req) = presenter_app();
    let secrets = secrets(&req);
    app.keys("2");
    assert_eq!(app.screen(), Screen::Profiles);
    app.set_profile_set(ProfileSet::load(Some(&paths.profiles_dir())), &paths);
    let mut seen = String::new();
    for (w, h) in [(80, 24), (100, 30), (160, 48)] {
        let s = app.screen_text(w, h);
        assert_no_secret(&s, &secrets, &format!("profiles at {w}×{h}"));
        seen.push_str(&s);
    }
    assert!(seen.contains("PSU-ID            8c…"), "{seen}");
    assert!(seen.contains("PSU-Corporate-ID  91…"), "{seen}");
    // Presenter mode off: the session's values in full.
    app.keys("P");
    assert!(app.screen_text(160, 48).contains(PSU_ID));
}

/// The rows of `s` as a vector (trailing spaces trimmed).
fn rows_of(s: &str) -> Vec<&str> {
    s.lines().collect()
}

/// Issue 18 defect 6: every presenter screen at 80×24 and 100×30 with a lesson running
/// shows what the room watches. The console: the lesson's Section and Watch, and the
/// response's JSON (not only its headers); Tab to the signature inspector: its keyId,
/// headers and signing string; history, flow, profiles and monitor reach down to the
/// footer (no band left blank for the lesson panel they do not draw).
#[test]
fn presenter_screens_show_the_steps_subject_with_a_lesson_at_projector_sizes() {
    use psd2_console::lessons::LessonSet;
    use psd2_console::profile::{Paths, ProfileSet};
    let lesson = LessonSet::load(None)
        .find("ais-bank-offered-consent")
        .expect("a built-in lesson")
        .clone();
    let mut app = App::new(status());
    app.mask_volatile = true;
    app.set_presenter(true);
    // The lesson selects its first step's operation (a bank-offered consent) with its
    // parameters; the runner prepares it.
    app.start_lesson(lesson);
    let req = {
        let spec = app.take_prepare_request().expect("a request to prepare");
        let req = prepare_as_runner(&spec, &session()).expect("signed");
        app.set_preview(Ok::<_, String>(req.clone()));
        req
    };
    let secrets = secrets(&req);
    // Step 1 before sending: its Section and Watch are whole.
    for (w, h) in SIZES {
        let s = app.screen_text(w, h);
        assert!(s.contains("Step 1 of 5"), "{w}×{h}:\n{s}");
        assert!(
            s.contains("Section: Authentication 3, 5-7, 11"),
            "{w}×{h}:\n{s}"
        );
        assert!(
            s.contains("Watch: the answer's _links.scaRedirect"),
            "{w}×{h}:\n{s}"
        );
        insta::assert_snapshot!(format!("presenter_lesson_step1_{w}x{h}"), s);
    }
    // The signature inspector of that request, with the lesson panel under it.
    app.focus_on(Focus::Signature).keys("Home");
    for (w, h) in SIZES {
        let s = app.screen_text(w, h);
        assert_no_secret(&s, &secrets, &format!("signature inspector at {w}×{h}"));
        for shown in ["keyId", "algorithm", "headers", "Digest", "Signing string"] {
            assert!(s.contains(shown), "{shown} at {w}×{h}:\n{s}");
        }
        insta::assert_snapshot!(format!("presenter_lesson_signature_{w}x{h}"), s);
    }
    // An answer without scaRedirect (no SCA prompt over it): its JSON is in view.
    app.focus_on(Focus::Operations);
    app.begin_send(req.clone());
    let ex = tui::json_exchange(
        201,
        serde_json::json!({"consentStatus": "received",
            "consentId": "3f2d1c0b-9a8e-4d7c-b6a5-948372615049",
            "_links": {"status": {"href": "/v1/consents/3f2d1c0b-9a8e-4d7c-b6a5-948372615049/status"}}}),
        23,
        X_REQUEST_ID,
    );
    app.finish_send(Ok(ResponseView::from_exchange(
        "Bank-offered consent",
        &req,
        &ex,
    )));
    for (w, h) in SIZES {
        let s = app.screen_text(w, h);
        assert_no_secret(&s, &secrets, &format!("console with lesson at {w}×{h}"));
        assert!(s.contains("Watch: the answer's"), "{w}×{h}:\n{s}");
        assert!(s.contains("201 Created"), "{w}×{h}:\n{s}");
        assert!(
            s.contains("\"consentStatus\": \"received\""),
            "the JSON at {w}×{h}:\n{s}"
        );
        insta::assert_snapshot!(format!("presenter_lesson_console_{w}x{h}"), s);
    }
    app.focus_on(Focus::Operations);
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path().to_path_buf());
    for (key, name) in [
        ("3", "history"),
        ("5", "flow"),
        ("2", "profiles"),
        ("4", "monitor"),
    ] {
        app.keys(key);
        if key == "2" {
            app.set_profile_set(ProfileSet::load(Some(&paths.profiles_dir())), &paths);
        }
        for (w, h) in SIZES {
            let s = app.screen_text(w, h);
            let rows = rows_of(&s);
            // The row above the two footer rows is the screen's bottom border.
            let last = rows[usize::from(h) - 3];
            assert!(
                last.contains('╯') || last.contains('╰'),
                "{name} at {w}×{h} leaves rows blank above the footer:\n{s}"
            );
            assert_no_secret(&s, &secrets, &format!("{name} at {w}×{h}"));
            insta::assert_snapshot!(
                format!("presenter_{name}_screen_{w}x{h}"),
                s.replace(&home.path().display().to_string(), "<home>")
            );
        }
    }
}

/// Issue 18 defect 16: the screen tabs are whole at 100 and 120 columns (shortened, never
/// cut), and the footer at 80 columns ends with whole key names, the help key among them.
#[test]
fn screen_tabs_and_the_footer_are_never_cut() {
    let app = App::new(tui::status());
    for w in [100u16, 120, 160] {
        let s = app.screen_text(w, 30);
        let first = s.lines().next().unwrap();
        assert!(first.contains(" 1 Console "), "{w}: {first}");
        assert!(
            first.trim_end().ends_with(" 5 Flo")
                || first.trim_end().ends_with(" 5 Flow")
                || first.trim_end().ends_with(" 5"),
            "{w}: the tabs are cut: {first}"
        );
        assert!(first.contains(" 2 Pro"), "{w}: {first}");
    }
    let s = app.screen_text(160, 30);
    assert!(
        s.lines()
            .next()
            .unwrap()
            .contains(" 2 Profiles  3 History  4 Monitor  5 Flow")
    );
    let s = app.screen_text(80, 24);
    let footer = s.lines().last().unwrap().trim_end();
    assert!(footer.ends_with("? help"), "{footer}");
    // Every key shown has its name: the hints are pairs after the badge.
    assert!(!footer.ends_with(" q"), "{footer}");
}
