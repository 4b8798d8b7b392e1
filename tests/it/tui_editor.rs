//! The request editor: header forms, the multi-line body editor, templates and validation
//! before sending. Screens are rendered into ratatui's `TestBackend` (insta snapshots); the
//! requests are prepared with `client::prepare` as the runner does; the last test sends
//! every template of every operation to the embedded sandbox.

use crate::common;

use common::sandbox::{TestSandbox, tpp};
use common::tui::{Drive, key, masked_app, prepare_as_runner};
use psd2_console::client::validate;
use psd2_console::client::{PreparedRequest, RequestContext, prepare};
use psd2_console::profile::{DEFAULT_PROFILE, ProfileSet, SessionState};
use psd2_console::tui::{Action, App, Focus, Mode};
use psd2_console::xs2a::operations::{self, Group, OPERATIONS};
use serde_json::{Value, json};

const SESSION_ID: &str = "0d9f3c2a-1111-4222-8333-944455556666";
const SEPA: &str = "payments.sepa.create";

fn session() -> SessionState {
    SessionState {
        tpp_session_id: Some(SESSION_ID.to_string()),
        ..SessionState::default()
    }
}

/// Prepares the app's request as the runner does (fixed clock); shows it as the preview.
fn prepare_now(app: &mut App) -> Result<PreparedRequest, String> {
    let r = prepare_as_runner(&app.request_spec(), &session()).map_err(|e| e.to_string());
    app.set_preview(r.clone());
    r
}

/// The SEPA template with the amount as a number and no town name.
fn bad_sepa_body() -> String {
    let t = operations::find(SEPA).unwrap().templates()[0].body;
    let mut v: Value = serde_json::from_str(t).unwrap();
    v["instructedAmount"]["amount"] = json!(250.00);
    v["creditorAddress"]
        .as_object_mut()
        .unwrap()
        .remove("townName");
    v.to_string()
}

/// Selects `id`, focuses the form and opens the body editor on its body field.
fn open_body_editor(app: &mut App, id: &str) {
    assert!(app.select_operation(id));
    app.focus_on(Focus::Params);
    for _ in 0..5 {
        app.keys("Up");
    }
    // Path and query parameters come first, then the body.
    for _ in 0..5 {
        app.keys("Enter");
        if app.body_editor_open() {
            return;
        }
        assert_eq!(app.mode(), Mode::Insert);
        app.keys("Esc Down");
    }
    panic!("no body field in {id}");
}

#[test]
fn request_editor_shows_validation_errors_next_to_the_fields() {
    let mut app = masked_app();
    assert!(app.select_operation(SEPA));
    assert!(app.set_param(SEPA, "body", &bad_sepa_body()));
    assert!(app.set_param(SEPA, "X-Request-ID", "not-a-uuid"));
    prepare_now(&mut app).unwrap();
    app.focus_on(Focus::Params);
    assert_eq!(
        app.press("s"),
        Action::None,
        "s with problems does not send"
    );
    let msg = app.message().unwrap().text.clone();
    assert!(
        msg.starts_with("3 problems: fix them, or press S to send anyway"),
        "{msg}"
    );
    let fields: Vec<&str> = app.problems().iter().map(|p| p.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "X-Request-ID",
            "body.instructedAmount.amount",
            "body.creditorAddress.townName"
        ]
    );
    let s = app.screen_text(160, 48);
    assert!(
        s.contains("↳ body.instructedAmount.amount: must be a JSON"),
        "{s}"
    );
    assert!(s.contains("↳ body.creditorAddress.townName: SEPA"), "{s}");
    assert!(s.contains("↳ \"not-a-uuid\" is not a UUID"), "{s}");
    insta::assert_snapshot!("request_editor_validation_error", s);

    // S sends anyway; fixing the fields makes s send.
    assert_eq!(app.press("S-S"), Action::Send);
    assert!(app.problems().is_empty());
    let t = operations::find(SEPA).unwrap().templates()[0].body;
    app.set_param(SEPA, "body", t);
    app.set_param(SEPA, "X-Request-ID", "");
    assert_eq!(app.press("s"), Action::Send);
}

#[test]
fn body_editor_opens_pretty_printed_over_the_right_side() {
    let mut app = masked_app();
    app.set_param(SEPA, "body", &bad_sepa_body());
    open_body_editor(&mut app, SEPA);
    let text = app.body_editor_text().unwrap();
    assert!(text.lines().count() > 5, "pretty-printed: {text}");
    assert!(text.contains("\"amount\": 250.0"), "{text}");
    let s = app.screen_text(160, 48);
    assert!(
        s.contains("Body · SEPA payment · template SEPA (1/2)"),
        "{s}"
    );
    assert!(
        s.contains("body.instructedAmount.amount"),
        "live problems: {s}"
    );
    assert!(s.contains(" BODY "), "footer: {s}");
    insta::assert_snapshot!("body_editor", s);
}

#[test]
fn keys_typed_in_the_body_editor_go_into_the_text() {
    let mut app = masked_app();
    open_body_editor(&mut app, SEPA);
    // Go to the end of the first line, then type global keys.
    app.keys("Home");
    for c in ['q', 's', '?', '1', '2', 'S', 'e'] {
        assert_eq!(app.handle_key(key(c)), Action::None, "{c}");
    }
    assert!(!app.should_quit());
    assert!(!app.help_visible());
    assert!(app.body_editor_open());
    let text = app.body_editor_text().unwrap();
    assert!(text.starts_with("qs?12Se{"), "{text}");
    // Enter is a line break, not send.
    assert_eq!(app.press("Enter"), Action::None);
    assert!(app.body_editor_text().unwrap().starts_with("qs?12Se\n{"));
    // Esc closes; the text is kept as typed (not JSON, so not compacted).
    app.keys("Esc");
    assert!(!app.body_editor_open());
    assert!(
        app.param_value(SEPA, "body")
            .unwrap()
            .starts_with("qs?12Se\n{")
    );
    // And the problem is reported with its position on s.
    assert_eq!(app.press("s"), Action::None);
    assert_eq!(app.problems()[0].field, "body");
    assert!(
        app.problems()[0].reason.contains("line 1, column 1"),
        "{:?}",
        app.problems()
    );
    // Ctrl-c still quits from the editor.
    open_body_editor(&mut app, SEPA);
    assert_eq!(app.press("C-c"), Action::Quit);
}

#[test]
fn esc_keeps_the_body_compacted_and_templates_cycle() {
    let mut app = masked_app();
    open_body_editor(&mut app, SEPA);
    assert_eq!(app.body_template_name(), Some("SEPA"));
    app.keys("C-t");
    assert_eq!(app.body_template_name(), Some("SEPA, regulatory reporting"));
    assert!(
        app.body_editor_text()
            .unwrap()
            .contains("regulatoryReportingCode")
    );
    app.keys("C-t");
    assert_eq!(app.body_template_name(), Some("SEPA"), "cycles back");
    // Edit, then reset to the template.
    app.keys("x");
    assert!(app.body_editor_text().unwrap().starts_with('x'));
    app.keys("C-g");
    let pretty = app.body_editor_text().unwrap();
    assert!(pretty.starts_with("{\n"), "{pretty}");
    app.keys("Esc");
    let stored = app.param_value(SEPA, "body").unwrap().to_string();
    assert!(!stored.contains('\n'), "compacted: {stored}");
    let t: Value =
        serde_json::from_str(operations::find(SEPA).unwrap().templates()[0].body).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&stored).unwrap(), t);
    // Ctrl-l pretty-prints a compact text.
    open_body_editor(&mut app, SEPA);
    assert!(app.body_editor_text().unwrap().lines().count() > 5);
    // The periodic operation offers MonthlyVariable first, with today's dates filled in.
    app.keys("Esc");
    open_body_editor(&mut app, "payments.periodic.create");
    let text = app.body_editor_text().unwrap();
    assert!(
        text.contains("MonthlyVariable") && !text.contains("{{"),
        "{text}"
    );
}

#[test]
fn a_typed_header_reaches_the_prepared_request() {
    let mut app = masked_app();
    let id = "accounts.list";
    assert!(app.select_operation(id));
    let psu = "8c1d3f0e-5b7a-4c2e-9f10-3a6b2d4e5f60";
    let xid = "11111111-2222-4333-8444-555555555555";
    assert!(app.set_param(id, "PSU-ID", psu));
    assert!(app.set_param(id, "X-Request-ID", xid));
    assert!(app.set_param(id, "PSU-Geo-Location", "GEO:59.91,10.75"));
    assert!(app.set_param(id, "Signature", "broken"));
    let req = prepare_now(&mut app).unwrap();
    assert_eq!(req.header("PSU-ID"), Some(psu));
    assert_eq!(req.header("X-Request-ID"), Some(xid));
    assert_eq!(req.header("PSU-Geo-Location"), Some("GEO:59.91,10.75"));
    assert_eq!(
        req.header("Signature"),
        Some("broken"),
        "replaced after signing"
    );
    assert_eq!(
        req.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("PSU-ID"))
            .count(),
        1
    );
    assert!(
        req.inspection
            .signing_string
            .contains(&format!("psu-id: {psu}"))
    );
    assert!(
        req.inspection
            .signing_string
            .contains(&format!("x-request-id: {xid}"))
    );
    assert_eq!(
        req.path_and_query, "/v1/accounts",
        "headers are not query parameters"
    );
    // Left empty, X-Request-ID is new on every preparation.
    app.set_param(id, "X-Request-ID", "");
    let a = prepare_now(&mut app).unwrap();
    let b = prepare_now(&mut app).unwrap();
    assert_ne!(a.header("X-Request-ID"), b.header("X-Request-ID"));
    assert!(validate::is_uuid(a.header("X-Request-ID").unwrap()));
    // The form shows the header fields, required ones marked, engine-filled ones as auto.
    app.focus_on(Focus::Params);
    let s = app.screen_text(160, 48);
    assert!(s.contains("X-Request-ID*"), "{s}");
    assert!(s.contains("(auto)"), "{s}");
}

/// Every template of every payment, basket and consent operation passes validation and is
/// accepted (2xx) by the embedded sandbox, prepared with `client::prepare` and sent with
/// `client::send` as the console does.
#[tokio::test]
async fn every_template_is_accepted_by_the_sandbox() {
    let sb = TestSandbox::start().await;
    let profiles = ProfileSet::load(None);
    let profile = profiles.get(DEFAULT_PROFILE).unwrap();
    let session = session();
    let http = psd2_console::client::http_client().unwrap();
    let today = chrono::Utc::now().date_naive();
    let mut single_ids = Vec::new();
    let mut sent = 0;
    let ops: Vec<_> = OPERATIONS
        .iter()
        .filter(|o| o.group != Group::Sandbox && !o.templates().is_empty())
        .filter(|o| o.id != "baskets.create")
        .chain(operations::find("baskets.create"))
        .collect();
    for o in ops {
        for t in o.templates() {
            let mut text = t.render(today);
            if o.id == "baskets.create" {
                text = json!({ "paymentIds": single_ids[..2] }).to_string();
            }
            // As after SCA (the basket header table requires a PSU-ID; the sandbox binds the
            // basket to the payments' PSU without one).
            let fills = validate::engine_fills(o, true, false);
            // The domestic operations offer the same templates: the second send of one is a
            // logical duplicate unless allowed.
            let mut params: Vec<(String, String)> = o
                .param("allowLogicalDuplicate")
                .map(|_| vec![("allowLogicalDuplicate".to_string(), "true".to_string())])
                .unwrap_or_default();
            // The basket's header table requires PSU-ID: one no SCA registered binds nobody.
            if o.id == "baskets.create" {
                params.push((
                    "PSU-ID".to_string(),
                    common::sandbox::BASKET_PSU_ID.to_string(),
                ));
            }
            let problems = validate::validate(o, &params, Some(&text), &fills);
            assert!(problems.is_empty(), "{} {}: {problems:?}", o.id, t.name);
            let ctx = RequestContext {
                profile,
                session: &session,
                credentials: tpp(),
                base_url: &sb.base,
                redirect_uri: common::sandbox::REDIRECT,
                now: sb.now(),
            };
            let req = prepare(o, &params, Some(&text), &ctx).unwrap();
            let ex = psd2_console::client::send(&http, &req).await.unwrap();
            assert!(
                ex.is_success(),
                "{} {}: {} {}",
                o.id,
                t.name,
                ex.status,
                String::from_utf8_lossy(&ex.body)
            );
            if o.path.starts_with("/v1/payments/") {
                single_ids.push(
                    ex.json.as_ref().unwrap()["paymentId"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                );
            }
            sent += 1;
        }
    }
    assert!(sent >= 18, "{sent} templates sent");
    sb.stop().await;
}
