//! Issue 8 items 1, 5 and 6 on the console's state (no engine, no network): ids of one
//! answer carried into the operations that take them, every nested `_links` entry offered by
//! `f` with its JSON path, and a payment's SCA followed by a status read (never by sending
//! the initiation again).

use std::time::Duration;

use psd2_console::client::Exchange;
use psd2_console::client::engine::{PendingSca, ScaApplied, StatusAfterSca};
use psd2_console::tui::{Action, App, Focus, Level, ResponseView};
use psd2_console::xs2a::redirect::{PsuContext, ScaCallback, ScaSuccess};
use serde_json::{Value, json};

use crate::common::tui::{self, Drive, buffer_text, status_of};

fn exchange(status: u16, body: &Value) -> Exchange {
    let bytes = serde_json::to_vec(body).unwrap();
    Exchange {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: bytes,
        elapsed: Duration::from_millis(42),
        json: Some(body.clone()),
    }
}

/// Selects `op`, sends it (as the runner would) and shows `body` with `status`.
fn answer(app: &mut App, op: &str, method: &str, path: &str, status: u16, body: &Value) {
    assert!(app.select_operation(op), "{op}");
    let req = tui::unsigned_request(op, method, path);
    app.begin_send(req.clone());
    let title = app.selected_operation().title;
    app.finish_send(Ok(ResponseView::from_exchange(
        title,
        &req,
        &exchange(status, body),
    )));
}

/// The screen as text with trailing spaces kept (the snapshots of this module have them).
fn screen(app: &App, w: u16, h: u16) -> String {
    buffer_text(&app.buffer(w, h), false)
}

const PAY: &str = "/v1/payments/sepa-credit-transfers";

fn payment_created(app: &mut App, id: &str, sca: bool) {
    let mut body = json!({
        "transactionStatus": "RCVD",
        "paymentId": id,
        "_links": {
            "self": {"href": format!("{PAY}/{id}")},
            "status": {"href": format!("{PAY}/{id}/status")}
        }
    });
    if sca {
        body["_links"]["scaRedirect"] = json!({"href": format!("https://bank.example/sca/{id}")});
    }
    answer(app, "payments.sepa.create", "POST", PAY, 201, &body);
}

#[test]
fn payment_basket_and_transaction_ids_are_carried_into_later_operations() {
    let mut app = App::new(status_of("default"));
    payment_created(&mut app, "pay-1", false);
    for op in [
        "payments.get",
        "payments.status",
        "payments.delete",
        "payments.start-authorisation",
    ] {
        assert_eq!(app.param_value(op, "payment-id"), Some("pay-1"), "{op}");
        assert_eq!(
            app.param_value(op, "payment-service"),
            Some("payments"),
            "{op}"
        );
        assert_eq!(
            app.param_value(op, "payment-product"),
            Some("sepa-credit-transfers"),
            "{op}: the product the payment was created with"
        );
    }
    assert!(
        app.message()
            .unwrap()
            .text
            .contains("payment-id pay-1 filled in")
    );
    // A second payment: the auto-filled ids follow, the basket body lists both.
    payment_created(&mut app, "pay-2", false);
    assert_eq!(
        app.param_value("payments.status", "payment-id"),
        Some("pay-2")
    );
    let basket = app
        .param_value("baskets.create", "body")
        .unwrap()
        .to_string();
    assert!(!basket.contains("<paymentId>"), "{basket}");
    let v: Value = serde_json::from_str(&basket).unwrap();
    assert_eq!(v, json!({"paymentIds": ["pay-1", "pay-2"]}));
    assert!(app.select_operation("baskets.create"));
    assert_eq!(app.request_spec().body.as_deref(), Some(basket.as_str()));
    // A value typed by the user is not replaced.
    assert!(app.set_param("payments.get", "payment-id", "mine"));
    payment_created(&mut app, "pay-3", false);
    assert_eq!(app.param_value("payments.get", "payment-id"), Some("mine"));
    assert_eq!(
        app.param_value("payments.status", "payment-id"),
        Some("pay-3")
    );

    // basketId after a basket.
    answer(
        &mut app,
        "baskets.create",
        "POST",
        "/v1/signing-baskets",
        201,
        &json!({"transactionStatus": "RCVD", "basketId": "bkt-9"}),
    );
    for op in [
        "baskets.get",
        "baskets.status",
        "baskets.start-authorisation",
        "baskets.delete",
    ] {
        assert_eq!(app.param_value(op, "basket-id"), Some("bkt-9"), "{op}");
    }

    // transactionId from a transaction list.
    answer(
        &mut app,
        "accounts.transactions",
        "GET",
        "/v1/accounts/acc-1/transactions",
        200,
        &json!({"transactions": {"booked": [{"transactionId": "tx-77", "transactionAmount": {"currency": "NOK", "amount": "-1.00"}}]}}),
    );
    assert_eq!(
        app.param_value("accounts.transaction-details", "transaction-id"),
        Some("tx-77")
    );
}

#[test]
fn f_offers_nested_links_with_their_json_paths() {
    let mut app = App::new(status_of("default"));
    let acc = "/v1/accounts/acc-1";
    answer(
        &mut app,
        "accounts.transactions",
        "GET",
        &format!("{acc}/transactions"),
        200,
        &json!({
            "account": {"bban": "12345678903"},
            "transactions": {
                "booked": [
                    {"transactionId": "tx-1", "_links": {"transactionDetails": {"href": format!("{acc}/transactions/tx-1")}}},
                    {"transactionId": "tx-2", "_links": {"transactionDetails": {"href": format!("{acc}/transactions/tx-2")}}}
                ],
                "_links": {
                    "account": {"href": acc},
                    "next": {"href": format!("{acc}/transactions?bookingStatus=booked&offset=200")},
                    "last": {"href": format!("{acc}/transactions?bookingStatus=booked&offset=400")}
                }
            }
        }),
    );
    let ResponseState::Done(view) = app.response() else {
        panic!("no response")
    };
    let paths: Vec<&str> = view.links.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "transactions.booked[0]._links.transactionDetails",
            "transactions.booked[1]._links.transactionDetails",
            "transactions._links.account",
            "transactions._links.next",
            "transactions._links.last",
        ]
    );
    app.focus_on(Focus::Response);
    app.keys("f");
    assert_eq!(app.link_chooser(), Some(0));
    let s = screen(&app, 160, 40);
    assert!(s.contains("transactions._links.next"), "{s}");
    insta::assert_snapshot!("nested_link_chooser", s);
    app.keys("Down Enter");
    assert_eq!(app.selected_operation().id, "accounts.transaction-details");
    assert_eq!(
        app.param_value("accounts.transaction-details", "transaction-id"),
        Some("tx-2")
    );
    assert!(
        app.message()
            .unwrap()
            .text
            .contains("transactions.booked[1]._links.transactionDetails")
    );
}

use psd2_console::tui::ResponseState;

fn success() -> ScaCallback {
    ScaCallback::Success(ScaSuccess {
        psu_id: "31125461118".into(),
        psu_corporate_id: None,
        tpp_session_id: "sess-1".into(),
        context: PsuContext::Private,
    })
}

/// The flow the runner arms for a payment answer ([`PendingSca::from_response`]).
fn payment_flow(id: &str) -> PendingSca {
    let body =
        json!({"paymentId": id, "_links": {"status": {"href": format!("{PAY}/{id}/status")}}});
    PendingSca::from_response(
        "sess-1",
        PAY,
        Some(&body),
        &format!("https://bank.example/sca/{id}"),
    )
}

/// What the one sender's status read returns for `body` (a 200 answer).
fn status_read(flow: &PendingSca, body: &Value) -> (StatusAfterSca, ResponseView) {
    let ex = exchange(200, body);
    let (status, verdict) = psd2_console::xs2a::status::verdict_of_body(body).unwrap();
    let st = StatusAfterSca {
        flow: flow.flow,
        resource_id: flow.resource_id.clone(),
        status,
        verdict,
        exchange: ex.clone(),
    };
    let path = flow.status_path.clone().unwrap();
    let req = tui::unsigned_request("payments.status", "GET", &path);
    (st, ResponseView::from_exchange("Payment status", &req, &ex))
}

/// The status read as the runner performs [`Action::ReadStatus`]: the request shown as
/// sent, then the sender's answer.
fn read_status(app: &mut App, flow: &PendingSca, body: &Value) {
    let path = flow.status_path.clone().unwrap();
    app.begin_send(tui::unsigned_request("payments.status", "GET", &path));
    app.status_read(Ok(status_read(flow, body)));
}

#[test]
fn payment_sca_reads_the_status_instead_of_sending_again() {
    let mut app = App::new(status_of("default"));
    payment_created(&mut app, "pay-7", true);
    app.sca_armed(payment_flow("pay-7"));
    assert!(app.sca_prompt().is_some());
    let s = screen(&app, 160, 48);
    assert!(s.contains("reads the status of"), "{s}");
    assert!(s.contains("payment pay-7"), "{s}");
    let action = app.sca_applied(
        &success(),
        Ok(ScaApplied {
            summary:
                "SCA of the payment pay-7 complete; the session's PSU and context are unchanged"
                    .into(),
            flow: Some(payment_flow("pay-7")),
        }),
        status_of("default"),
    );
    assert_eq!(
        action,
        Action::ReadStatus(Box::new(payment_flow("pay-7"))),
        "the runner reads the status with the one sender"
    );
    assert_eq!(app.selected_operation().id, "payments.status");
    assert_eq!(
        app.param_value("payments.status", "payment-id"),
        Some("pay-7")
    );
    assert!(
        !app.message()
            .unwrap()
            .text
            .contains("send the request again")
    );
    // The status read answers: the TUI shows the sender's verdict.
    read_status(
        &mut app,
        &payment_flow("pay-7"),
        &json!({"transactionStatus": "ACSC"}),
    );
    let m = app.message().unwrap();
    assert_eq!(m.text, "payment pay-7 approved: ACSC");
    assert_eq!(m.level, Level::Success);
    let s = screen(&app, 160, 48);
    assert!(s.contains("payment pay-7 approved: ACSC"), "{s}");
    assert!(!s.contains("send the request again"), "{s}");
    insta::assert_snapshot!("payment_sca_status_read", s);

    // A rejected payment says so, with the reason.
    let mut app = App::new(status_of("default"));
    payment_created(&mut app, "pay-8", true);
    app.status_read(Ok(status_read(
        &payment_flow("pay-8"),
        &json!({"transactionStatus": "RJCT"}),
    )));
    assert_eq!(
        app.message().unwrap().text,
        "payment pay-8 rejected: refused by the PSU or the bank (RJCT)"
    );

    // ACCP is a rejection for lack of funds in the interface document, never "approved"
    // (issue 18 B: the TUI called it approved).
    let mut app = App::new(status_of("default"));
    payment_created(&mut app, "pay-9", true);
    app.status_read(Ok(status_read(
        &payment_flow("pay-9"),
        &json!({"transactionStatus": "ACCP", "fundsAvailable": false}),
    )));
    let m = app.message().unwrap();
    assert_eq!(m.text, "payment pay-9 rejected: lack of funds (ACCP)");
    assert_eq!(m.level, Level::Error);
    // PATC (some, not all, authorisations) is not approved either.
    let mut app = App::new(status_of("default"));
    app.status_read(Ok(status_read(
        &payment_flow("pay-10"),
        &json!({"transactionStatus": "PATC"}),
    )));
    assert_eq!(
        app.message().unwrap().text,
        "payment pay-10 not approved yet: PATC"
    );

    // An AIS SCA still suggests sending the request again.
    let mut app = App::new(status_of("default"));
    answer(
        &mut app,
        "accounts.list",
        "GET",
        "/v1/accounts",
        401,
        &json!({"_links": {"scaRedirect": {"href": "https://bank.example/sca/x"}}}),
    );
    assert_eq!(
        app.sca_finished(&success(), Ok("SCA complete".into()), status_of("default")),
        Action::None
    );
    assert_eq!(app.selected_operation().id, "accounts.list");
}

#[test]
fn a_failed_history_write_is_shown_without_failing_the_send() {
    let mut app = App::new(status_of("default"));
    assert!(app.select_operation("accounts.list"));
    let req = tui::unsigned_request("accounts.list", "GET", "/v1/accounts");
    app.begin_send(req.clone());
    let mut view = ResponseView::from_exchange(
        "List accounts",
        &req,
        &exchange(200, &json!({"accounts": []})),
    );
    view.history_error = Some("history.sqlite3 is a directory".into());
    app.finish_send(Ok(view));
    let m = app.message().unwrap();
    assert_eq!(m.level, Level::Warning);
    assert!(
        m.text
            .contains("not written to the history: history.sqlite3 is a directory"),
        "{}",
        m.text
    );
    assert!(
        matches!(app.response(), ResponseState::Done(_)),
        "the answer is shown"
    );
    assert!(
        app.log()
            .iter()
            .any(|m| m.text.contains("history.sqlite3 is a directory")),
        "kept in the problems log"
    );
}
