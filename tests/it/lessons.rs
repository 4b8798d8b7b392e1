//! Every shipped lesson (`lessons/*.toml`) run end to end in the console (issue 12,
//! "Lessons"): the lesson selects each step's operation with its parameters, the test
//! sends it against the embedded sandbox over real HTTP, completes SCA in the sandbox's
//! pages where the step asks for it, and checks the step's expected outcome. Also the
//! lesson panel's keys, the lesson picker, and `--lesson` with an unknown name.

use psd2_console::lessons::{Lesson, LessonSet};
use psd2_console::tui::Action;

use crate::common::cli::run_headless;
use crate::common::console::{Console, KARI};
use crate::common::tui::Drive;

fn lesson(id: &str) -> Lesson {
    LessonSet::load(None)
        .find(id)
        .expect("a built-in lesson")
        .clone()
}

/// Starts lesson `id` through the picker (`L`, then Enter on it), as a trainer does.
fn start_from_picker(c: &mut Console, id: &str) {
    assert_eq!(c.app.press("L"), Action::LoadLessons);
    c.app.set_lessons(LessonSet::load(None));
    assert!(c.app.lesson_picker_visible());
    let ids: Vec<String> = LessonSet::load(None)
        .lessons
        .iter()
        .map(|l| l.id.clone())
        .collect();
    let at = ids.iter().position(|i| i == id).unwrap();
    for _ in 0..at {
        c.app.press("Down");
    }
    c.app.press("Enter");
    assert!(!c.app.lesson_picker_visible());
    assert_eq!(c.app.lesson().unwrap().lesson.id, id);
}

/// Moves to the next step (`]`) and checks the step shown and the operation selected
/// (`None`: a narration-only step keeps the selection).
fn next_step(c: &mut Console, title: &str, operation: Option<&str>) {
    let before = c.selected();
    assert_eq!(c.app.press("]"), Action::None);
    let p = c.app.lesson().expect("a lesson runs");
    assert_eq!(p.current().title, title);
    assert_eq!(c.selected(), operation.unwrap_or(before), "step {title:?}");
}

/// The `Date` header of the last answer.
fn answer_date(c: &Console) -> std::time::SystemTime {
    let ex = c.last.as_ref().expect("an answer");
    let date = ex
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("date"))
        .map(|(_, v)| v.clone())
        .expect("a Date header");
    httpdate::parse_http_date(&date).unwrap()
}

/// The lesson panel's step line (the line with "Step N of M"), from a 160×48 screen.
fn step_line(c: &Console) -> String {
    let screen = c.app.screen_text(160, 48);
    screen
        .lines()
        .find(|l| l.contains(" of ") && l.contains("Step "))
        .unwrap_or_else(|| panic!("no step line:\n{screen}"))
        .to_string()
}

/// The agreement that lets Kari act for Fjordbris Bakeri AS (sandbox seed).
async fn kari_agreement(c: &Console) -> String {
    let list = psd2_console::xs2a::operations::find("sandbox.customers.list").unwrap();
    let ex = c
        .engine
        .send(
            &c.engine
                .prepare(list, &[("withAgreements".into(), "true".into())], None)
                .unwrap(),
        )
        .await
        .unwrap();
    let customers = ex.json.unwrap();
    let kari = customers
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["customerNumber"] == KARI)
        .cloned()
        .unwrap();
    kari["agreements"][0]["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn lesson_ais_bank_offered_consent_runs_end_to_end() {
    let mut c = Console::start().await;
    start_from_picker(&mut c, "ais-bank-offered-consent");
    assert_eq!(c.selected(), "consents.bank-offered");
    assert_eq!(c.send().await, 201, "{}", c.body());
    assert!(c.json()["_links"]["scaRedirect"]["href"].is_string());

    next_step(&mut c, "The PSU authenticates in the browser", None);
    c.complete_sca(KARI, "PRIVATE").await;
    assert!(c.app.status().psu_id.is_some());

    next_step(&mut c, "List the consented accounts", Some("accounts.list"));
    assert_eq!(c.send().await, 200, "{}", c.body());
    assert!(!c.json()["accounts"].as_array().unwrap().is_empty());

    next_step(&mut c, "Read a balance", Some("accounts.balances"));
    assert_eq!(c.send().await, 200, "{}", c.body());
    assert!(c.json()["balances"][0]["balanceAmount"]["currency"].is_string());

    next_step(
        &mut c,
        "Read booked transactions",
        Some("accounts.transactions"),
    );
    assert_eq!(
        c.app.param_value("accounts.transactions", "bookingStatus"),
        Some("booked")
    );
    assert_eq!(c.send().await, 200, "{}", c.body());
    assert!(c.json()["transactions"]["booked"].is_array());
    c.shutdown().await;
}

#[tokio::test]
async fn lesson_corporate_context_runs_end_to_end() {
    let mut c = Console::start().await;
    let agreement = kari_agreement(&c).await;
    c.app.start_lesson(lesson("corporate-context"));
    assert_eq!(c.selected(), "consents.bank-offered");
    assert_eq!(c.send().await, 201, "{}", c.body());

    next_step(&mut c, "Choose the corporate context during SCA", None);
    c.complete_sca(KARI, &format!("CORPORATE:{agreement}"))
        .await;
    assert_eq!(c.app.status().context.as_deref(), Some("CORPORATE"));
    assert_eq!(
        c.app.status().psu_corporate_id.as_deref(),
        Some(agreement.as_str())
    );

    next_step(
        &mut c,
        "List the agreements of the PSU",
        Some("psu.agreements"),
    );
    assert_eq!(c.send().await, 200, "{}", c.body());
    assert!(c.body().contains(&agreement), "{}", c.body());

    next_step(&mut c, "Read the company's accounts", Some("accounts.list"));
    assert_eq!(c.send().await, 200, "{}", c.body());
    assert!(!c.json()["accounts"].as_array().unwrap().is_empty());
    c.shutdown().await;
}

#[tokio::test]
async fn lesson_domestic_payment_runs_end_to_end() {
    let mut c = Console::start().await;
    c.app.start_lesson(lesson("domestic-payment"));
    assert_eq!(c.selected(), "payments.domestic.create");
    assert_eq!(c.send().await, 201, "{}", c.body());
    assert_eq!(c.json()["transactionStatus"], "RCVD");

    next_step(&mut c, "The PSU approves the payment", None);
    // After the payment's SCA the console reads its status by itself.
    assert!(matches!(
        c.complete_sca(KARI, "PRIVATE").await,
        Action::ReadStatus(_)
    ));
    assert_eq!(c.selected(), "payments.status");

    next_step(&mut c, "Read the payment status", Some("payments.status"));
    assert_eq!(c.send().await, 200, "{}", c.body());
    let after_sca = c.json()["transactionStatus"].as_str().unwrap().to_string();
    assert!(
        ["ACTC", "ACCP", "PDNG", "ACSP"].contains(&after_sca.as_str()),
        "{after_sca}"
    );

    next_step(&mut c, "Run the bank's batch", Some("sandbox.batch.run"));
    let status = c.send().await;
    assert!((200..300).contains(&status), "{}", c.body());

    next_step(&mut c, "Read the status again", Some("payments.status"));
    assert_eq!(c.send().await, 200, "{}", c.body());
    let booked = c.json()["transactionStatus"].as_str().unwrap().to_string();
    assert!(["ACSC", "RJCT"].contains(&booked.as_str()), "{}", c.body());
    c.shutdown().await;
}

#[tokio::test]
async fn lesson_signing_basket_runs_end_to_end() {
    let mut c = Console::start().await;
    c.app.start_lesson(lesson("signing-basket"));
    assert_eq!(c.selected(), "psu.users");
    let status = c.send().await;
    assert!(
        c.json()["_links"]["scaRedirect"]["href"].is_string(),
        "{status} {}",
        c.body()
    );

    next_step(&mut c, "The PSU logs in once", None);
    c.complete_sca(KARI, "PRIVATE").await;
    assert!(c.app.status().psu_id.is_some());

    next_step(
        &mut c,
        "Initiate the first payment",
        Some("payments.domestic.create"),
    );
    assert_eq!(c.send().await, 201, "{}", c.body());
    let first = c.json()["paymentId"].as_str().unwrap().to_string();

    next_step(
        &mut c,
        "Initiate the second payment",
        Some("payments.domestic.create"),
    );
    assert_eq!(c.send().await, 201, "{}", c.body());
    let second = c.json()["paymentId"].as_str().unwrap().to_string();
    assert_ne!(first, second);

    next_step(&mut c, "Create the basket", Some("baskets.create"));
    // The console put both paymentIds in the basket's body.
    let body = c
        .app
        .param_value("baskets.create", "body")
        .unwrap()
        .to_string();
    assert!(body.contains(&first) && body.contains(&second), "{body}");
    assert_eq!(c.send().await, 201, "{}", c.body());
    assert!(c.json()["basketId"].is_string());
    assert!(c.json()["_links"]["scaRedirect"]["href"].is_string());

    next_step(&mut c, "The PSU approves the basket", None);
    assert!(matches!(
        c.complete_sca(KARI, "PRIVATE").await,
        Action::ReadStatus(_)
    ));

    next_step(&mut c, "Read the basket status", Some("baskets.status"));
    assert_eq!(c.send().await, 200, "{}", c.body());
    assert!(c.json()["transactionStatus"].is_string());

    next_step(&mut c, "Read one payment's status", Some("payments.status"));
    assert_eq!(c.send().await, 200, "{}", c.body());
    assert!(c.json()["transactionStatus"].is_string());
    c.shutdown().await;
}

#[tokio::test]
async fn lesson_consent_expiry_runs_end_to_end() {
    let mut c = Console::start().await;
    c.app.start_lesson(lesson("consent-expiry"));
    assert_eq!(c.selected(), "consents.bank-offered");
    assert_eq!(c.send().await, 201, "{}", c.body());
    c.complete_sca(KARI, "PRIVATE").await;

    next_step(&mut c, "Read the accounts", Some("accounts.list"));
    assert_eq!(c.send().await, 200, "{}", c.body());

    let before = c.engine.now();
    next_step(
        &mut c,
        "Move the sandbox clock by 181 days",
        Some("sandbox.clock.advance"),
    );
    let status = c.send().await;
    assert!((200..300).contains(&status), "{}", c.body());
    let moved = c.engine.now().duration_since(before).unwrap().as_secs();
    assert!(moved >= 181 * 86_400, "the sandbox clock moved {moved} s");
    // The answer is dated at the sandbox's time, the time the console signs at (issue 18
    // defect 11: it showed the machine's real time, 181 days behind).
    let dated = answer_date(&c);
    assert!(
        // (+1 s: the header has whole seconds)
        dated + std::time::Duration::from_secs(1)
            >= before + std::time::Duration::from_secs(181 * 86_400),
        "the answer's Date {dated:?} is not the sandbox's time"
    );

    next_step(&mut c, "Read the accounts again", Some("accounts.list"));
    let signed_at = c.engine.now();
    assert_eq!(c.send().await, 401, "{}", c.body());
    let dated = answer_date(&c);
    assert!(
        dated + std::time::Duration::from_secs(60) >= signed_at,
        "the answer's Date {dated:?} is behind the sandbox time {signed_at:?}"
    );
    assert_eq!(c.code(), Some("CONSENT_EXPIRED"), "{}", c.body());
    assert!(c.json()["_links"]["scaRedirect"]["href"].is_string());
    c.shutdown().await;
}

#[tokio::test]
async fn lesson_signature_failure_runs_end_to_end() {
    let mut c = Console::start().await;
    c.app.start_lesson(lesson("signature-failure"));
    assert_eq!(c.selected(), "accounts.list");
    // The bank answers (no consent yet: it asks for SCA); the signature passed.
    let status = c.send().await;
    assert_ne!(c.code(), Some("SIGNATURE_INVALID"), "{status} {}", c.body());

    next_step(&mut c, "Break it in a terminal", None);
    // Export the request as cURL (the history screen's x), swap two names of headers="…".
    let entry = {
        let h = c.engine.history.as_ref().unwrap().lock().unwrap();
        h.last().unwrap().unwrap()
    };
    let file = psd2_console::tui::history::export_curl(&c.engine, &entry).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let start = text
        .find("headers=\\\"")
        .map(|i| i + 10)
        .or_else(|| text.find("headers=\"").map(|i| i + 9))
        .expect("headers=\" in the Signature");
    let end = start + text[start..].find(['"', '\\']).unwrap();
    let names: Vec<&str> = text[start..end].split(' ').collect();
    assert!(names.len() >= 2, "{names:?}");
    let mut swapped = names.clone();
    swapped.swap(0, 1);
    let broken = format!("{}{}{}", &text[..start], swapped.join(" "), &text[end..]);
    let broken_file = file.with_file_name("broken.sh");
    std::fs::write(&broken_file, &broken).unwrap();
    // Run it: the bank rebuilds another signing string.
    let req = psd2_console::doctor::input::parse(broken.as_bytes(), "broken.sh", 1).unwrap();
    let mut rb = reqwest::Client::new().request(
        req.method.parse().unwrap(),
        format!("{}{}", c.engine.base_url, req.path_and_query),
    );
    for (n, v) in &req.headers {
        rb = rb.header(n, v);
    }
    let answer = rb.body(req.body.clone()).send().await.unwrap();
    assert_eq!(answer.status(), 400);
    let json: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(
        json["tppMessages"][0]["code"], "SIGNATURE_INVALID",
        "{json}"
    );

    next_step(&mut c, "Ask the doctor", None);
    let (code, out, err) = run_headless(c.home.path(), &["doctor", broken_file.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("another header order"), "{out}");
    c.shutdown().await;
}

#[tokio::test]
async fn the_lesson_keys_step_forward_and_back_and_select_each_steps_operation() {
    let mut c = Console::start().await;
    // Without a lesson the keys say how to start one.
    c.app.press("]");
    assert!(
        c.app.message().unwrap().text.contains("No lesson running"),
        "{:?}",
        c.app.message()
    );
    c.app.start_lesson(lesson("domestic-payment"));
    assert_eq!(c.app.lesson().unwrap().step, 0);
    c.app.press("[");
    assert_eq!(c.app.lesson().unwrap().step, 0, "no step before the first");
    assert!(c.app.message().unwrap().text.contains("first step"));
    c.app.keys("] ]");
    assert_eq!(c.app.lesson().unwrap().step, 2);
    assert_eq!(c.selected(), "payments.status");
    c.app.press("]");
    assert_eq!(c.selected(), "sandbox.batch.run");
    c.app.press("[");
    assert_eq!(c.app.lesson().unwrap().step, 2);
    assert_eq!(c.selected(), "payments.status");
    c.app.keys("] ] ]");
    assert_eq!(c.app.lesson().unwrap().step, 4, "stays on the last step");
    assert!(c.app.message().unwrap().text.contains("last step"));
    // The panel shows the step's narration, section and what to watch.
    let screen = c.app.screen_text(140, 44);
    assert!(
        screen.contains("Lesson: A domestic payment with SCA"),
        "{screen}"
    );
    assert!(screen.contains("Step 5 of 5"), "{screen}");
    assert!(
        screen.contains("Section: States and transitions: payment statuses"),
        "{screen}"
    );
    assert!(screen.contains("Watch: transactionStatus ACSC"), "{screen}");
    // The picker ends it.
    c.app.press("L");
    c.app.set_lessons(LessonSet::load(None));
    c.app.press("x");
    assert!(c.app.lesson().is_none());
    assert!(!c.app.screen_text(140, 44).contains("Lesson:"));
    c.shutdown().await;
}

#[test]
fn lesson_with_an_unknown_name_is_refused_with_the_list_of_lessons() {
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = run_headless(home.path(), &["--lesson", "no-such-lesson"]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("no lesson called \"no-such-lesson\""), "{err}");
    for l in LessonSet::load(None).lessons {
        assert!(err.contains(&l.id), "{err}");
    }
    assert!(err.contains("lessons"), "{err}");
}

#[test]
fn the_palette_opens_the_lesson_picker_and_the_flow_screen() {
    use crate::common::tui::masked_app;
    use psd2_console::tui::Screen;
    let mut app = masked_app();
    app.keys("C-p");
    app.type_text("guided walkthrough");
    assert_eq!(app.palette_entries().len(), 1);
    assert_eq!(app.press("Enter"), Action::LoadLessons);
    app.set_lessons(LessonSet::load(None));
    assert!(app.lesson_picker_visible());
    let s = app.screen_text(120, 36);
    for l in LessonSet::load(None).lessons {
        assert!(s.contains(&l.id), "{s}");
    }
    app.press("Esc");
    assert!(!app.lesson_picker_visible());
    assert!(app.lesson().is_none(), "Esc starts nothing");
    app.keys("C-p");
    app.type_text("live sequence diagram");
    assert_eq!(app.press("Enter"), Action::LoadFlow);
    assert_eq!(app.screen(), Screen::Flow);
    let s = app.screen_text(120, 36);
    assert!(s.contains("No exchange yet"), "{s}");
    // F5 comes back to it from another screen; 1 leaves it.
    app.press("1");
    assert_eq!(app.screen(), Screen::Console);
    assert_eq!(app.press("F5"), Action::LoadFlow);
    assert_eq!(app.screen(), Screen::Flow);
}

#[test]
fn the_lesson_panel_shows_the_step_under_the_console() {
    use crate::common::tui::masked_app;
    let mut app = masked_app();
    app.start_lesson(lesson("ais-bank-offered-consent"));
    let s = app.screen_text(100, 30);
    // The first step: the summary, the narration, the section, what to watch, the keys.
    assert!(
        s.contains("Step 1 of 5 · Ask for a bank-offered consent"),
        "{s}"
    );
    assert!(s.contains("Section: Authentication 3, 5-7, 11"), "{s}");
    assert!(s.contains("Watch: the answer's _links.scaRedirect"), "{s}");
    assert!(s.contains("] next · [ back · L lessons"), "{s}");
    insta::assert_snapshot!("lesson_panel_100x30", s);
}

#[tokio::test]
async fn the_step_line_names_the_operation_on_screen_after_the_console_moved_on() {
    let mut c = Console::start().await;
    c.app.start_lesson(lesson("domestic-payment"));
    let line = step_line(&c);
    assert!(
        line.contains(
            "Step 1 of 5 · Initiate the payment  (selected: Domestic payment; press s to send)"
        ),
        "{line}"
    );
    assert_eq!(c.send().await, 201, "{}", c.body());
    // The trainer completes the SCA before stepping on: the console selects Payment status
    // and reads it by itself; the step line says so instead of naming the creation.
    assert!(matches!(
        c.complete_sca(KARI, "PRIVATE").await,
        Action::ReadStatus(_)
    ));
    assert_eq!(c.selected(), "payments.status");
    let line = step_line(&c);
    assert!(
        line.contains(
            "(on screen: Payment status — the console moved on from this step's Domestic payment)"
        ),
        "{line}"
    );
    assert!(!line.contains("selected: "), "{line}");
    c.shutdown().await;
}

#[tokio::test]
async fn a_terminal_step_says_so_and_warns_of_the_60_second_date_window() {
    let mut c = Console::start().await;
    c.app.start_lesson(lesson("signature-failure"));
    c.app.press("]");
    let screen = c.app.screen_text(160, 48);
    assert!(
        screen.contains(
            "Break it in a terminal  (no request: act in a terminal, outside the console)"
        ),
        "{screen}"
    );
    assert!(!step_line(&c).contains("browser"), "{}", step_line(&c));
    assert!(screen.contains("within 60 s of the export"), "{screen}");
    // The sandbox's Date window is what the warning says (Authentication 4).
    assert!(screen.contains("TIMESTAMP_INVALID"), "{screen}");
    c.app.press("]");
    assert!(
        step_line(&c).contains("(no request: act in a terminal"),
        "{}",
        step_line(&c)
    );
    // A browser step says the browser.
    c.app.start_lesson(lesson("ais-bank-offered-consent"));
    c.app.press("]");
    assert!(
        step_line(&c).contains("(no request: the PSU acts in the browser)"),
        "{}",
        step_line(&c)
    );
    c.shutdown().await;
}

#[tokio::test]
async fn the_presenter_step_line_says_again_only_after_a_send_and_consent_only_for_accounts() {
    let mut c = Console::start().await;
    c.app.start_lesson(lesson("ais-bank-offered-consent"));
    assert_eq!(c.send().await, 201, "{}", c.body());
    c.app.press("]");
    c.complete_sca(KARI, "PRIVATE").await;
    // Step 3 selects List accounts, never sent yet: no "again".
    c.app.press("]");
    assert_eq!(c.selected(), "accounts.list");
    assert_eq!(
        c.app.presenter_step(),
        "Step: SCA complete, consent valid — send List accounts, now with the PSU-ID"
    );
    // The guide says the same.
    let screen = c.app.screen_text(160, 48);
    assert!(!screen.contains("List accounts again"), "{screen}");
    assert_eq!(c.send().await, 200, "{}", c.body());
    assert!(c.app.presenter_step().contains("consent valid"));
    // The payment lesson in the same console: the PSU-ID is known, but a payment is no
    // consent.
    c.app.start_lesson(lesson("domestic-payment"));
    assert_eq!(c.send().await, 201, "{}", c.body());
    c.app.press("]");
    assert!(matches!(
        c.complete_sca(KARI, "PRIVATE").await,
        Action::ReadStatus(_)
    ));
    c.app.press("]");
    assert_eq!(c.selected(), "payments.status");
    for _ in 0..2 {
        assert!(
            !c.app.presenter_step().contains("consent"),
            "{}",
            c.app.presenter_step()
        );
        assert_eq!(c.send().await, 200, "{}", c.body());
    }
    assert_eq!(
        c.app.presenter_step(),
        "Step: Payment status answered 200 OK"
    );
    c.shutdown().await;
}

#[tokio::test]
async fn the_basket_lesson_after_the_payment_lesson_puts_only_its_own_payments_in_the_basket() {
    // Lessons one after another in one console: the payment approved in the payment lesson
    // is no candidate for the basket (the bank refuses an authorised payment in a basket).
    let mut c = Console::start().await;
    c.app.start_lesson(lesson("domestic-payment"));
    assert_eq!(c.send().await, 201, "{}", c.body());
    let approved = c.json()["paymentId"].as_str().unwrap().to_string();
    assert!(matches!(
        c.complete_sca(KARI, "PRIVATE").await,
        Action::ReadStatus(_)
    ));
    c.app.start_lesson(lesson("signing-basket"));
    c.send().await;
    assert!(c.app.sca_prompt().is_some(), "{}", c.body());
    c.app.press("]");
    c.complete_sca(KARI, "PRIVATE").await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        c.app.press("]");
        assert_eq!(c.send().await, 201, "{}", c.body());
        ids.push(c.json()["paymentId"].as_str().unwrap().to_string());
    }
    c.app.press("]");
    assert_eq!(c.selected(), "baskets.create");
    let body: serde_json::Value =
        serde_json::from_str(c.app.param_value("baskets.create", "body").unwrap()).unwrap();
    assert_eq!(body["paymentIds"], serde_json::json!(ids), "not {approved}");
    assert_eq!(c.send().await, 201, "{}", c.body());
    c.shutdown().await;
}
