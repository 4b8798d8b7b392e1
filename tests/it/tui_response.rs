//! The response viewer rendered into ratatui's `TestBackend`: syntax colours, search,
//! the jq filter (result and error), copy body, following `_links` (prefilled requests) and
//! a 20 MB body. No terminal, no engine, no network.

use std::time::Duration;

use psd2_console::client::{Exchange, PreparedRequest};
use psd2_console::tui::response::FilterState;
use psd2_console::tui::{Action, App, Focus, ResponseState, ResponseView};
use ratatui::buffer::Buffer;
use serde_json::{Value, json};

use crate::common::tui::{Drive, status_of, unsigned_request};

const W: u16 = 160;
const H: u16 = 40;

fn request() -> PreparedRequest {
    unsigned_request("accounts.list", "GET", "/v1/accounts")
}

fn exchange(status: u16, body: &Value) -> Exchange {
    let bytes = serde_json::to_vec(body).unwrap();
    Exchange {
        status,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("content-length".into(), bytes.len().to_string()),
        ],
        body: bytes,
        elapsed: Duration::from_millis(42),
        json: Some(body.clone()),
    }
}

/// An app showing `body` as the answer to "List accounts", the response pane focused.
fn app_with(body: &Value) -> App {
    let mut app = App::new(status_of("default"));
    let req = request();
    app.begin_send(req.clone());
    app.finish_send(Ok(ResponseView::from_exchange(
        "List accounts",
        &req,
        &exchange(200, body),
    )));
    if app.sca_prompt().is_some() {
        app.keys("Esc");
    }
    app.focus_on(Focus::Response);
    render(&app);
    app
}

fn render(app: &App) -> Buffer {
    app.buffer(W, H)
}

/// The response pane's box: from its top-left corner (left of the `Response` title) to
/// the right edge, down to its bottom border.
fn pane_rect(buf: &Buffer) -> (u16, u16, u16) {
    for y in 0..buf.area.height {
        let row: Vec<&str> = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        let text: String = row.concat();
        if let Some(at) = text.find("Response") {
            let col = text[..at].chars().count() as u16;
            let left = (0..col)
                .rev()
                .find(|&x| buf[(x, y)].symbol() == "╭")
                .unwrap();
            let bottom = (y..buf.area.height)
                .find(|&yy| buf[(left, yy)].symbol() == "╰")
                .unwrap();
            return (left, y, bottom);
        }
    }
    panic!("no response pane")
}

/// The response pane as text.
fn pane_text(app: &App) -> String {
    let buf = render(app);
    let (left, top, bottom) = pane_rect(&buf);
    let mut out = String::new();
    for y in top..=bottom {
        let line: String = (left..buf.area.width)
            .map(|x| buf[(x, y)].symbol())
            .collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The pane's body rows as `text«fg,bg,modifiers»` runs of equal style.
fn pane_styles(app: &App, rows: std::ops::Range<u16>) -> String {
    let buf = render(app);
    let (left, top, _) = pane_rect(&buf);
    let mut out = String::new();
    for y in rows {
        let y = top + y;
        let mut cur: Option<String> = None;
        let mut run = String::new();
        for x in left + 2..buf.area.width - 2 {
            let c = &buf[(x, y)];
            let style = format!("{:?},{:?},{:?}", c.fg, c.bg, c.modifier);
            if cur.as_ref() != Some(&style) {
                if let Some(s) = cur.take()
                    && !run.trim().is_empty()
                {
                    out.push_str(&format!("{run}«{s}» "));
                }
                run.clear();
                cur = Some(style);
            }
            run.push_str(c.symbol());
        }
        if let Some(s) = cur
            && !run.trim().is_empty()
        {
            out.push_str(&format!("{}«{s}»", run.trim_end()));
        }
        out.push('\n');
    }
    out
}

fn accounts() -> Value {
    json!({
        "accounts": [
            {"resourceId": "acc-001", "bban": "12345678903", "currency": "NOK", "name": "Brukskonto",
             "balances": [{"amount": -12.5, "booked": true}], "closed": null,
             "_links": {"balances": {"href": "/v1/accounts/acc-001/balances"}}},
            {"resourceId": "acc-002", "bban": "98765432109", "currency": "NOK", "name": "Sparekonto",
             "balances": [], "closed": false,
             "_links": {"balances": {"href": "/v1/accounts/acc-002/balances"}}}
        ]
    })
}

#[test]
fn json_is_pretty_and_coloured() {
    let app = app_with(&accounts());
    let text = pane_text(&app);
    assert!(text.contains("200 OK   42 ms"), "{text}");
    assert!(text.contains("\"resourceId\": \"acc-001\","), "{text}");
    insta::assert_snapshot!("response_json", text);
    // Rows 5.. are the body: keys, strings, numbers, literals and punctuation each have
    // the theme's style.
    let styles = pane_styles(&app, 0..H - 6);
    let t = &app.theme;
    let has = |s: &str, style: ratatui::style::Style| {
        let want = format!(
            "{s}«{:?},{:?},{:?}»",
            style.fg.unwrap_or_default(),
            style.bg.unwrap_or(t.base.bg.unwrap_or_default()),
            style.add_modifier
        );
        assert!(styles.contains(&want), "{want} in\n{styles}");
    };
    has("\"resourceId\"", t.json_key);
    has("\"acc-001\"", t.json_string);
    has("-12.5", t.json_number);
    has("true", t.json_literal);
    has("null", t.json_literal);
    insta::assert_snapshot!("response_json_styles", styles);
}

#[test]
fn search_highlights_and_counts_matches() {
    let mut app = app_with(&accounts());
    assert_eq!(app.press("/"), Action::None);
    app.type_text("nok");
    let text = pane_text(&app);
    assert!(text.contains("/nok"), "the box shows the query:\n{text}");
    app.keys("Enter");
    assert!(app.response_input().is_none());
    let msg = app.message().unwrap().text.clone();
    assert!(msg.contains("1 of 2"), "{msg}");
    let text = pane_text(&app);
    assert!(text.contains("/nok · 1 of 2"), "{text}");
    insta::assert_snapshot!("response_search", text);
    // The current match is drawn in the selection style, the other one reversed.
    let styles = pane_styles(&app, 0..H - 4);
    let sel = app.theme.selected;
    assert!(
        styles.contains(&format!(
            "NOK«{:?},{:?},{:?}»",
            sel.fg.unwrap(),
            sel.bg.unwrap(),
            sel.add_modifier
        )),
        "{styles}"
    );
    assert!(styles.contains("REVERSED"), "{styles}");
    app.keys("n");
    assert!(app.message().unwrap().text.contains("2 of 2"));
    app.keys("n");
    assert!(
        app.message().unwrap().text.contains("1 of 2"),
        "wraps around"
    );
    app.keys("N");
    assert!(app.message().unwrap().text.contains("2 of 2"));
    // Typing in the box never triggers commands: q and s are text there.
    app.keys("/");
    app.type_text("qs");
    assert!(!app.should_quit());
    app.keys("Esc");
    assert!(app.response_input().is_none());
}

/// Runs the filter the app asked for, as the runner does (on this thread).
fn apply_filter(app: &mut App, expr: &str) {
    assert_eq!(app.press("|"), Action::None);
    app.type_text(expr);
    let Action::RunFilter(job) = app.press("Enter") else {
        panic!("Enter runs the filter")
    };
    assert!(pane_text(app).contains(&format!("filtered: {expr} (running …)")));
    app.filter_finished(job.run());
}

fn view(app: &App) -> &ResponseView {
    match app.response() {
        ResponseState::Done(v) => v,
        other => panic!("no response: {other:?}"),
    }
}

#[test]
fn jq_filter_result_and_error() {
    let mut app = app_with(&accounts());
    apply_filter(&mut app, "[.accounts[] | {id: .resourceId, name}]");
    let text = pane_text(&app);
    assert!(
        text.contains("filtered: [.accounts[] | {id: .resourceId, name}]"),
        "{text}"
    );
    assert!(text.contains("\"id\": \"acc-002\","), "{text}");
    assert!(!text.contains("bban"), "only the filter result:\n{text}");
    insta::assert_snapshot!("response_filtered", text);
    // y copies the filter result.
    let Action::Copy(copied) = app.press("y") else {
        panic!("y copies")
    };
    let back: Value = serde_json::from_str(&copied).unwrap();
    assert_eq!(
        back,
        json!([{"id": "acc-001", "name": "Brukskonto"}, {"id": "acc-002", "name": "Sparekonto"}])
    );
    // Esc in the pane clears the filter.
    app.keys("Esc");
    assert!(view(&app).filter().is_none());
    assert!(pane_text(&app).contains("bban"));

    apply_filter(&mut app, ".accounts[] | .name |");
    let f = view(&app).filter().expect("filter kept");
    assert!(matches!(f.state, FilterState::Failed(_)));
    let text = pane_text(&app);
    assert!(text.contains("(error)"), "{text}");
    assert!(text.contains("column"), "the error says where:\n{text}");
    insta::assert_snapshot!("response_filter_error", text);
    // The filter box reopens with the expression; Esc there clears the filter too.
    app.keys("|");
    assert_eq!(
        app.response_input().map(|i| i.text.as_str()),
        Some(".accounts[] | .name |")
    );
    app.keys("Esc");
    assert!(view(&app).filter().is_none());
}

#[test]
fn copy_returns_the_body() {
    let mut app = app_with(&accounts());
    let Action::Copy(copied) = app.press("y") else {
        panic!("y copies")
    };
    assert_eq!(copied, serde_json::to_string_pretty(&accounts()).unwrap());
    let msg = &app.message().unwrap().text;
    assert!(msg.contains(&format!("{} bytes", copied.len())), "{msg}");
}

#[test]
fn following_a_single_link_prefills_the_operation() {
    // Account details answer: one link each for balances and transactions → chooser;
    // a body with only `balances` → followed at once.
    let mut app = app_with(&json!({
        "account": {"resourceId": "acc-7"},
        "_links": {"balances": {"href": "/v1/accounts/acc-7/balances"}}
    }));
    assert_eq!(app.press("f"), Action::None);
    assert_eq!(app.selected_operation().id, "accounts.balances");
    assert_eq!(
        app.param_value("accounts.balances", "account-id"),
        Some("acc-7")
    );
    assert!(app.message().unwrap().text.contains("press s"));
}

#[test]
fn following_payment_status_and_paging_links() {
    let pay = "/v1/payments/norwegian-domestic-credit-transfers/pay-1";
    let mut app = app_with(&json!({
        "transactionStatus": "RCVD",
        "paymentId": "pay-1",
        "_links": {
            "self": {"href": pay},
            "startAuthorisation": {"href": format!("{pay}/authorisations")},
            "status": {"href": format!("{pay}/status")}
        }
    }));
    app.keys("f");
    assert_eq!(
        app.link_chooser(),
        Some(0),
        "several links open the chooser"
    );
    let text = pane_text_full(&app);
    assert!(text.contains("Follow a link"), "{text}");
    assert!(text.contains("→ Payment status"), "{text}");
    assert!(text.contains("→ Start payment authorisation"), "{text}");
    insta::assert_snapshot!("response_link_chooser", text);
    app.keys("Down Down Enter");
    assert_eq!(app.link_chooser(), None);
    assert_eq!(app.selected_operation().id, "payments.status");
    for (k, v) in [
        ("payment-service", "payments"),
        ("payment-product", "norwegian-domestic-credit-transfers"),
        ("payment-id", "pay-1"),
    ] {
        assert_eq!(app.param_value("payments.status", k), Some(v), "{k}");
    }

    // Transactions page with next: path and query prefilled, other query fields emptied.
    let mut app = app_with(&json!({
        "account": {"bban": "12345678903"},
        "transactions": {"booked": []},
        "_links": {
            "account": {"href": "/v1/accounts/acc-1"},
            "next": {"href": "/v1/accounts/acc-1/transactions?bookingStatus=booked&limit=200&offset=200"}
        }
    }));
    assert!(app.set_param("accounts.transactions", "dateTo", "2026-01-31"));
    app.keys("f Down Enter");
    assert_eq!(app.selected_operation().id, "accounts.transactions");
    let p = |k| app.param_value("accounts.transactions", k);
    assert_eq!(p("account-id"), Some("acc-1"));
    assert_eq!(p("bookingStatus"), Some("booked"));
    assert_eq!(p("limit"), Some("200"));
    assert_eq!(p("offset"), Some("200"));
    assert_eq!(p("dateTo"), Some(""), "not in the link: cleared");
    let spec = app.request_spec();
    assert!(
        spec.params
            .contains(&("offset".to_string(), "200".to_string()))
    );

    // Esc closes the chooser without following.
    let mut app = app_with(&json!({"_links": {
        "balances": {"href": "/v1/accounts/a/balances"},
        "transactions": {"href": "/v1/accounts/a/transactions"}
    }}));
    let before = app.selected_operation().id;
    app.keys("f Esc");
    assert_eq!(app.link_chooser(), None);
    assert_eq!(app.selected_operation().id, before);
}

#[test]
fn sca_redirect_link_opens_the_prompt() {
    let mut app =
        app_with(&json!({"_links": {"scaRedirect": {"href": "https://bank.example/sca/1"}}}));
    app.keys("f");
    assert_eq!(
        app.sca_prompt().map(|p| p.url.as_str()),
        Some("https://bank.example/sca/1")
    );
}

/// The whole screen as text.
fn pane_text_full(app: &App) -> String {
    let buf = render(app);
    let mut out = String::new();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A transactions report of about `target` bytes (compact JSON).
fn big_report(target: usize) -> Vec<u8> {
    let mut booked = Vec::new();
    let mut size = 0;
    let mut i = 0;
    while size < target {
        let t = json!({
            "transactionId": format!("tx-{i:07}"),
            "bookingDate": "2026-01-15",
            "valueDate": "2026-01-15",
            "transactionAmount": {"currency": "NOK", "amount": format!("-{}.{:02}", i % 9999, i % 100)},
            "creditorName": "Rema 1000 Grünerløkka",
            "creditorAccount": {"bban": "98765432109"},
            "remittanceInformationUnstructured": format!("Card payment {i}"),
            "bankTransactionCode": "PMNT-CCRD-POSD"
        });
        size += t.to_string().len() + 1;
        booked.push(t);
        i += 1;
    }
    serde_json::to_vec(&json!({
        "account": {"bban": "12345678903"},
        "transactions": {"booked": booked, "pending": []},
        "_links": {"account": {"href": "/v1/accounts/acc-1"}}
    }))
    .unwrap()
}

#[test]
fn a_20_mb_body_shows_its_last_lines_at_the_bottom() {
    let body = big_report(20 << 20);
    assert!(body.len() >= 20 << 20);
    let json: Value = serde_json::from_slice(&body).unwrap();
    let last_id = json["transactions"]["booked"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["transactionId"]
        .as_str()
        .unwrap()
        .to_string();
    let ex = Exchange {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body,
        elapsed: Duration::from_millis(900),
        json: Some(json),
    };
    let req = request();
    let mut app = App::new(status_of("default"));
    app.begin_send(req.clone());
    app.finish_send(Ok(ResponseView::from_exchange_owned(
        "Account transactions",
        &req,
        ex,
    )));
    app.focus_on(Focus::Response);
    render(&app);
    app.keys("End");
    let text = pane_text(&app);
    assert!(text.contains("20.0 MiB"), "human size:\n{text}");
    let rows: Vec<&str> = text.lines().collect();
    // Bottom border, then the body's last lines: the closing braces of the report, the
    // links, and the last transaction a little above.
    let body_rows: Vec<String> = rows[rows.len() - 12..rows.len() - 1]
        .iter()
        .map(|r| {
            r.trim_start_matches('│')
                .trim_end_matches('│')
                .trim()
                .to_string()
        })
        .collect();
    assert_eq!(body_rows.last().map(String::as_str), Some("}"), "{text}");
    assert!(body_rows.iter().any(|r| r == "\"_links\": {"), "{text}");
    assert!(body_rows.iter().any(|r| r == "\"pending\": []"), "{text}");
    let total = view(&app).total_lines();
    assert!(
        text.contains(&format!("of {total} ")),
        "the counter shows the last line:\n{text}"
    );
    // The last transaction is a screen above: search jumps there.
    app.keys("/");
    app.type_text(&last_id);
    app.keys("Enter");
    let text = pane_text(&app);
    assert!(
        text.contains(&format!("\"transactionId\": \"{last_id}\"")),
        "{text}"
    );
    assert!(text.contains("1 of 1"), "{text}");
}

/// Every answer is linted (as `send --lint`): a conforming `accountList` shows `lint ✔` and
/// no finding; one violating the Berlin Group schema (`balances` entries without
/// `balanceAmount` and `balanceType`) shows `lint ✘ 2` and lists both findings, with the
/// schema name and JSON pointer, between the headers and the body.
#[test]
fn lint_badge_and_findings_of_the_answer() {
    let conforming = json!({
        "accounts": [
            {"resourceId": "acc-001", "bban": "12345678903", "currency": "NOK",
             "name": "Brukskonto",
             "_links": {"balances": {"href": "/v1/accounts/acc-001/balances"}}}
        ]
    });
    let app = app_with(&conforming);
    assert!(view(&app).lint.is_empty(), "{:?}", view(&app).lint);
    let text = pane_text(&app);
    assert!(text.contains("lint ✔"), "{text}");
    assert!(!text.contains("lint ✘"), "{text}");
    insta::assert_snapshot!("response_lint_clean", text);

    let app = app_with(&accounts());
    let findings: Vec<String> = view(&app).lint.iter().map(|f| f.to_string()).collect();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        findings
            .iter()
            .all(|f| f.contains("accountList /accounts/0/balances/0")),
        "{findings:?}"
    );
    let text = pane_text(&app);
    assert!(text.contains("lint ✘ 2"), "{text}");
    assert!(
        text.contains("lint ✘ [accountList /accounts/0/balances/0]"),
        "{text}"
    );
    assert!(text.contains("\"balanceAmount\" is a r"), "{text}");
    insta::assert_snapshot!("response_lint_findings", text);
}

/// Issue 21: the TLS session of an HTTPS answer is its own section of the response pane,
/// after the headers and lint findings: version, cipher suite (and where it comes from),
/// the server's chain (subject, issuer, validity, SAN), the client certificate asked for
/// (the CAs named) and the one sent (subject, serial).
#[test]
fn the_tls_session_is_a_section_of_the_response_pane() {
    use psd2_console::client::tls_session::{CertSummary, ClientAuth, SentCertificate, TlsSession};
    let conforming = json!({"accounts": []});
    let mut app = App::new(status_of("default"));
    let req = unsigned_request("accounts.list", "GET", "/v1/accounts");
    app.begin_send(req.clone());
    let mut v = ResponseView::from_exchange("List accounts", &req, &exchange(200, &conforming));
    v.set_tls(Some(&TlsSession {
        version: "TLS 1.3".into(),
        cipher_suite: Some("TLS13_AES_256_GCM_SHA384".into()),
        cipher_note: "from a second handshake with the same settings".into(),
        server_chain: vec![
            CertSummary {
                subject: "CN=api.bank.example".into(),
                issuer: "CN=Bank Issuing CA".into(),
                serial: "0a1b".into(),
                not_before: 1_767_225_600,
                not_after: 1_798_761_600,
                san: vec!["DNS:api.bank.example".into(), "IP:127.0.0.1".into()],
            },
            CertSummary {
                subject: "CN=Bank Issuing CA".into(),
                issuer: "CN=Bank Root CA".into(),
                serial: "02".into(),
                not_before: 1_735_689_600,
                not_after: 2_051_222_400,
                san: Vec::new(),
            },
        ],
        client_auth: ClientAuth {
            asked: true,
            acceptable_cas: vec!["CN=Sandbox QWAC CA".into()],
            sent: Some(SentCertificate {
                subject: "CN=Test TPP,O=Test TPP AS".into(),
                serial: "5f3c".into(),
            }),
        },
    }));
    app.finish_send(Ok(v));
    if app.sca_prompt().is_some() {
        app.keys("Esc");
    }
    app.focus_on(Focus::Response);
    let text = pane_text(&app);
    crate::common::assert_contains_all(
        &text,
        &[
            "TLS: TLS 1.3",
            "cipher suite: TLS13_AES_256_GCM_SHA384 (from a second handshake",
            "server certificate [0]: CN=api.bank.example",
            "SAN: DNS:api.bank.example, IP:127.0.0.1",
            "chain [1]: CN=Bank Issuing CA",
            "client certificate: asked for (CAs named: CN=Sandbox QWAC CA)",
            "sent: CN=Test TPP,O=Test TPP AS (serial 5f3c)",
        ],
    );
    insta::assert_snapshot!("response_tls_section", text);
}
