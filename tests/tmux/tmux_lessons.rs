//! All six built-in lessons one after another in ONE console on the real binary (issue 18,
//! acceptance: "All six lessons run one after another in one console (tmux) without losing
//! an SCA; each lesson's step line matches the screen").
//!
//! The lessons are started from the lesson picker (`L`) in its order; every step is entered
//! with `]` and its step line checked against the screen: the step number and title, and
//! the note — "(selected: X; …)" with X the operation highlighted in the catalogue, "(on
//! screen: Y — the console moved on …)" after the console selected another operation by
//! itself, or where the room acts for a step without an operation (browser, terminal).
//! Every SCA is completed over HTTP in the sandbox's pages, as the PSU's browser does, and
//! must reach the console: the status bar shows the PSU, corporate id and context of the
//! SCA just approved, and after a payment's or basket's SCA the console reads its status
//! and finds it approved. The corporate-context lesson must read the company's accounts,
//! and the consent-expiry lesson's consent (a private one) must replace the corporate
//! context. If the test fails, the screen is printed ([`ScreenOnFailure`]).

use std::path::{Path, PathBuf};

use psd2_console::lessons::{Act, Lesson, LessonSet};
use psd2_console::xs2a::operations;

use crate::common::console::KARI;
use crate::common::tmux::{EXIT_MARKER, Tmux, start_if_ready};

/// Prints the screen when the test fails (a panic while it is alive), so that the failure
/// shows what the console showed.
struct ScreenOnFailure<'a>(&'a Tmux);

impl Drop for ScreenOnFailure<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "---- the screen when the test failed ----\n{}\n----",
                self.0.capture()
            );
        }
    }
}

/// The history database of the console's home.
fn history(home: &Path) -> psd2_console::client::history::History {
    psd2_console::client::history::History::open_existing(
        &home.join("data").join("history.sqlite3"),
    )
    .unwrap()
}

/// The JSON body of the newest exchange in the history.
fn last_body(home: &Path) -> serde_json::Value {
    let last = history(home).last().unwrap().expect("an exchange");
    serde_json::from_slice(&last.response_body).unwrap_or(serde_json::Value::Null)
}

/// The scaRedirect of the newest exchange.
fn last_sca_redirect(home: &Path) -> String {
    let body = last_body(home);
    body["_links"]["scaRedirect"]["href"]
        .as_str()
        .unwrap_or_else(|| panic!("no scaRedirect in {body}"))
        .to_string()
}

/// The PSU completes the SCA of the newest exchange's scaRedirect in the sandbox's pages
/// (every account ticked, approved) and the browser lands on the console's listener.
fn complete_sca(rt: &tokio::runtime::Runtime, home: &Path, context: &str) {
    let href = last_sca_redirect(home);
    rt.block_on(async {
        let to_tpp = crate::common::sca::complete(
            &href,
            KARI,
            context,
            crate::common::sca::tick_all,
            "Approve",
        )
        .await;
        let landing = crate::common::browser().get(&to_tpp).send().await.unwrap();
        assert_eq!(landing.status(), 200, "{to_tpp}");
    });
}

/// The lesson panel's step line of `screen` ("Step 2 of 5 · …").
fn step_line(screen: &str) -> Option<&str> {
    screen
        .lines()
        .find(|l| l.contains("Step ") && l.contains(" of ") && l.contains(" · "))
}

/// Whether the catalogue shows an operation whose title starts like `title` selected (the
/// catalogue's column may cut long titles).
fn catalogue_selects(screen: &str, title: &str) -> bool {
    let head: String = title.chars().take(14).collect();
    screen
        .lines()
        .any(|l| l.contains("▸ ") && l.contains(head.as_str()))
}

/// Whether the step line of `screen` matches the screen: it names the step `n` of `lesson`,
/// and its note says what the screen shows (the operation selected in the catalogue, or
/// where the room acts).
fn step_matches(screen: &str, lesson: &Lesson, n: usize) -> bool {
    let step = &lesson.steps[n];
    let Some(line) = step_line(screen) else {
        return false;
    };
    let head = format!("Step {} of {} · {}", n + 1, lesson.steps.len(), step.title);
    if !line.contains(&head) {
        return false;
    }
    match (&step.operation, step.act) {
        (Some(_), _) => {
            if let Some(rest) = line.split("(selected: ").nth(1) {
                let title = rest.split(';').next().unwrap_or_default();
                catalogue_selects(screen, title)
            } else if let Some(rest) = line.split("(on screen: ").nth(1) {
                let title = rest.split(" — ").next().unwrap_or_default();
                catalogue_selects(screen, title)
            } else {
                false
            }
        }
        (None, Some(Act::Browser)) => line.contains("(no request: the PSU acts in the browser)"),
        (None, Some(Act::Terminal)) => line.contains("(no request: act in a terminal"),
        (None, None) => false,
    }
}

/// Enters step `n` of `lesson` (`]`, except for the first) and waits until the step line
/// shows it and matches the screen; a step with an operation must have selected it.
fn enter_step(t: &Tmux, lesson: &Lesson, n: usize) -> String {
    if n > 0 {
        t.keys(&["]"]);
    }
    let what = format!("{} step {}", lesson.id, n + 1);
    let screen = t.wait_for(&what, |s| step_matches(s, lesson, n));
    if let Some(op) = lesson.steps[n].operation.as_deref() {
        let title = operations::find(op).unwrap().title;
        let line = step_line(&screen).unwrap_or_default();
        assert!(
            line.contains(&format!("(selected: {title};")),
            "{what} did not select {op}:\n{screen}"
        );
    }
    screen
}

/// Sends the selected operation (`s`) and waits for an answer with `status` ("200 OK").
fn send(t: &Tmux, what: &str, status: &str) -> String {
    // The previous answer may show the same status: wait for the request to leave first.
    t.keys(&["s"]);
    t.wait_for(what, |s| {
        s.contains(status) && !s.contains("Sending ") && !s.contains("waiting for the answer")
    })
}

/// Starts lesson `id` from the picker: `L`, down to it from the highlighted one (the
/// running lesson, or the first), Enter.
fn start_lesson(t: &Tmux, set: &LessonSet, id: &str, running: Option<&str>) -> Lesson {
    let ids: Vec<&str> = set.lessons.iter().map(|l| l.id.as_str()).collect();
    let from = running.and_then(|r| ids.iter().position(|i| *i == r));
    let to = ids.iter().position(|i| *i == id).unwrap();
    t.keys(&["L"]);
    t.wait_for("the lesson picker", |s| {
        s.contains(" Lessons ") && s.contains("Enter starts")
    });
    for _ in from.unwrap_or(0)..to {
        t.keys(&["Down"]);
    }
    t.keys(&["Enter"]);
    let lesson = set.find(id).unwrap().clone();
    t.wait_for(&format!("lesson {id}"), |s| {
        s.contains(&format!("Lesson: {}", lesson.title)) && !s.contains("Enter starts")
    });
    lesson
}

/// The status bar's second line ("PSU-ID … Context …").
fn status_bar(screen: &str) -> &str {
    screen
        .lines()
        .find(|l| l.contains("PSU-ID") && l.contains("Context"))
        .unwrap_or_default()
}

/// The consent's SCA reached the console as a consent's (not swallowed by another flow
/// waiting for its callback): the message says the PSU-ID and `context` were learned.
fn consent_sca_applied(screen: &str, context: &str) {
    assert!(
        screen.contains("SCA complete: PSU-ID") && screen.contains(&format!("({context} context)")),
        "the consent's SCA was not applied as a consent's:\n{screen}"
    );
}

/// The newest cURL export of the console's home.
fn newest_export(home: &Path) -> PathBuf {
    let dir = home.join("data").join("exports");
    // The cURL scripts (`x` also writes a folder of programs beside each).
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "sh"));
    files.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    files
        .pop()
        .unwrap_or_else(|| panic!("no export in {}", dir.display()))
}

#[test]
fn all_six_lessons_run_in_one_console_without_losing_an_sca() {
    let Some(t) = start_if_ready("lessons", &[]) else {
        return;
    };
    let _screen_on_failure = ScreenOnFailure(&t);
    t.wait_for_console();
    let home = t.home.path().to_path_buf();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let set = LessonSet::load(None);
    let order: Vec<&str> = set.lessons.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(
        order,
        [
            "ais-bank-offered-consent",
            "corporate-context",
            "domestic-payment",
            "signing-basket",
            "consent-expiry",
            "signature-failure"
        ],
        "the picker's order changed: adapt the test"
    );
    let seed = psd2_console::sandbox::domain::seed::seed();
    let kari = seed.customers.iter().find(|c| c.number == KARI).unwrap();
    let agreement = seed
        .agreements
        .iter()
        .find(|a| a.holder == kari.id)
        .unwrap();
    let sca_prompt = |s: &str| s.contains("Strong customer authentication");

    // 1. Account information with a bank-offered consent: Kari, private.
    let l = start_lesson(&t, &set, "ais-bank-offered-consent", None);
    enter_step(&t, &l, 0);
    send(&t, "the consent's 201 and its SCA prompt", "201");
    t.wait_for("the SCA prompt", sca_prompt);
    enter_step(&t, &l, 1);
    complete_sca(&rt, &home, "PRIVATE");
    // The status bar changes at the callback; the message names the SCA once the status
    // read it starts has answered (meanwhile it says "Sending …"): wait for both.
    let s = t.wait_for("Kari's PSU-ID, private", |s| {
        !status_bar(s).contains("no PSU yet")
            && status_bar(s).contains("PRIVATE")
            && s.contains("SCA complete: PSU-ID")
    });
    consent_sca_applied(&s, "PRIVATE");
    assert!(!status_bar(&s).contains("PSU-Corporate-ID"), "{s}");
    for n in 2..5 {
        enter_step(&t, &l, n);
        send(&t, &format!("{} step {}: 200", l.id, n + 1), "200 OK");
    }

    // 2. Corporate context: the same PSU acts for Fjordbris Bakeri AS.
    let l = start_lesson(&t, &set, "corporate-context", Some(&l.id));
    enter_step(&t, &l, 0);
    send(&t, "the corporate consent's 201", "201");
    t.wait_for("the SCA prompt", sca_prompt);
    enter_step(&t, &l, 1);
    complete_sca(&rt, &home, &format!("CORPORATE:{}", agreement.id));
    let s = t.wait_for("the corporate context learned", |s| {
        status_bar(s).contains("PSU-Corporate-ID")
            && status_bar(s).contains("CORPORATE")
            && s.contains("SCA complete: PSU-ID")
    });
    consent_sca_applied(&s, "CORPORATE");
    enter_step(&t, &l, 2);
    send(&t, "the agreements", "200 OK");
    enter_step(&t, &l, 3);
    let s = send(&t, "the company's accounts", "200 OK");
    let body = last_body(&home);
    let read: Vec<&str> = body["accounts"]
        .as_array()
        .unwrap_or_else(|| panic!("no accounts in {body}\n{s}"))
        .iter()
        .filter_map(|a| a["resourceId"].as_str())
        .collect();
    let company: Vec<String> = agreement.accounts.iter().map(|a| a.to_string()).collect();
    assert!(
        !read.is_empty() && read.iter().all(|id| company.iter().any(|c| c == id)),
        "the corporate lesson read {read:?}, not the company's accounts {company:?}"
    );

    // 3. A domestic payment: the PSU approves it while the trainer is still on step 1; the
    // console selects Payment status and reads it, and the step line says it moved on.
    let l = start_lesson(&t, &set, "domestic-payment", Some(&l.id));
    enter_step(&t, &l, 0);
    send(&t, "the payment's 201", "201");
    t.wait_for("the SCA prompt", sca_prompt);
    complete_sca(&rt, &home, "PRIVATE");
    let s = t.wait_for("the payment approved", |s| {
        s.contains("approved:") && s.contains("payment ")
    });
    let line = step_line(&s).unwrap_or_default();
    assert!(
        line.contains("Step 1 of 5")
            && line.contains("(on screen: Payment status — the console moved on")
            && catalogue_selects(&s, "Payment status"),
        "{s}"
    );
    enter_step(&t, &l, 1);
    enter_step(&t, &l, 2);
    send(&t, "the payment's status", "200 OK");
    enter_step(&t, &l, 3);
    send(&t, "the batch run", "200 OK");
    enter_step(&t, &l, 4);
    send(&t, "the status after the batch", "200 OK");
    let status = last_body(&home)["transactionStatus"].clone();
    assert!(status == "ACSC" || status == "RJCT", "{status}");

    // 4. A signing basket: two payments left unapproved, one SCA for the basket.
    let l = start_lesson(&t, &set, "signing-basket", Some(&l.id));
    enter_step(&t, &l, 0);
    t.keys(&["s"]);
    t.wait_for("the registration's SCA prompt", sca_prompt);
    enter_step(&t, &l, 1);
    complete_sca(&rt, &home, "PRIVATE");
    t.wait_for("the registration's SCA reached the console", |s| {
        !sca_prompt(s) && s.contains("SCA")
    });
    let mut payments = Vec::new();
    for n in [2, 3] {
        enter_step(&t, &l, n);
        send(&t, "a payment for the basket", "201");
        t.wait_for("its SCA prompt, left alone", sca_prompt);
        payments.push(
            last_body(&home)["paymentId"]
                .as_str()
                .expect("a paymentId")
                .to_string(),
        );
    }
    enter_step(&t, &l, 4);
    send(&t, "the basket's 201", "201");
    let basket = last_body(&home);
    let basket_id = basket["basketId"]
        .as_str()
        .unwrap_or_else(|| panic!("no basketId in {basket}"))
        .to_string();
    enter_step(&t, &l, 5);
    complete_sca(&rt, &home, "PRIVATE");
    t.wait_for("the basket approved", |s| {
        s.contains(&format!("basket {basket_id} approved"))
    });
    enter_step(&t, &l, 6);
    send(&t, "the basket's status", "200 OK");
    enter_step(&t, &l, 7);
    send(&t, "a payment's status", "200 OK");
    assert_ne!(
        last_body(&home)["transactionStatus"],
        "RCVD",
        "the basket's SCA did not approve its payments {payments:?}"
    );

    // 5. Consent expiry: a new private consent replaces the corporate context; 181 days on
    // it has expired.
    let l = start_lesson(&t, &set, "consent-expiry", Some(&l.id));
    enter_step(&t, &l, 0);
    send(&t, "the consent's 201", "201");
    t.wait_for("the SCA prompt", sca_prompt);
    complete_sca(&rt, &home, "PRIVATE");
    let s = t.wait_for("the consent's SCA applied", |s| {
        s.contains("SCA complete: PSU-ID") || s.contains("complete; the session's PSU")
    });
    consent_sca_applied(&s, "PRIVATE");
    assert!(
        status_bar(&s).contains("PRIVATE") && !status_bar(&s).contains("PSU-Corporate-ID"),
        "not the private context of the consent just approved:\n{s}"
    );
    enter_step(&t, &l, 1);
    send(&t, "the accounts", "200 OK");
    enter_step(&t, &l, 2);
    send(&t, "the clock moved", "200 OK");
    enter_step(&t, &l, 3);
    send(&t, "the expired consent", "401");
    assert_eq!(
        last_body(&home)["tppMessages"][0]["code"],
        "CONSENT_EXPIRED"
    );

    // 6. A signature failure: the request exported as cURL, broken in a terminal, run
    // within the bank's 60 s Date window, then the doctor.
    let l = start_lesson(&t, &set, "signature-failure", Some(&l.id));
    enter_step(&t, &l, 0);
    send(&t, "the good request's answer", "401");
    assert_ne!(
        last_body(&home)["tppMessages"][0]["code"],
        "SIGNATURE_INVALID"
    );
    // The expired consent asks for SCA again; this lesson is about signatures: the trainer
    // closes the prompt (it covers the lesson panel).
    t.wait_for("the renewal's SCA prompt", sca_prompt);
    t.keys(&["Escape"]);
    t.wait_for("the prompt closed", |s| !sca_prompt(s));
    let s = enter_step(&t, &l, 1);
    assert!(s.contains("within 60 s"), "{s}");
    t.keys(&["3"]);
    t.wait_for("the newest exchange in the history", |s| {
        s.lines()
            .any(|l| l.contains("GET") && l.contains("/v1/accounts") && l.contains("401"))
    });
    t.keys(&["x"]);
    let s = t.wait_for("the cURL export", |s| {
        s.contains("written to") || s.contains("export of")
    });
    assert!(s.contains("written to"), "{s}");
    t.keys(&["1"]);
    t.wait_for("the console again", |s| step_matches(s, &l, 1));
    let file = newest_export(&home);
    let text = std::fs::read_to_string(&file).unwrap();
    let start = text
        .find("headers=\\\"")
        .map(|i| i + 10)
        .or_else(|| text.find("headers=\"").map(|i| i + 9))
        .expect("headers=\" in the Signature");
    let end = start + text[start..].find(['"', '\\']).unwrap();
    let mut names: Vec<&str> = text[start..end].split(' ').collect();
    names.swap(0, 1);
    let broken = format!("{}{}{}", &text[..start], names.join(" "), &text[end..]);
    let broken_file = file.with_file_name("broken.sh");
    std::fs::write(&broken_file, &broken).unwrap();
    let req = psd2_console::doctor::input::parse(broken.as_bytes(), "broken.sh", 1).unwrap();
    // `curl -sS -X GET 'http://127.0.0.1:PORT/v1/accounts'`: the sandbox's address.
    let url = broken
        .split_whitespace()
        .find(|w| w.starts_with("'http"))
        .map(|w| w.trim_matches('\''))
        .expect("the URL of the cURL command");
    let code = rt.block_on(async {
        let mut rb = reqwest::Client::new().request(req.method.parse().unwrap(), url);
        for (n, v) in &req.headers {
            rb = rb.header(n, v);
        }
        let answer = rb.body(req.body.clone()).send().await.unwrap();
        assert_eq!(answer.status(), 400);
        let json: serde_json::Value = answer.json().await.unwrap();
        json["tppMessages"][0]["code"].clone()
    });
    assert_eq!(code, "SIGNATURE_INVALID");
    enter_step(&t, &l, 2);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_psd2-console"))
        .env("PSD2_CONSOLE_HOME", &home)
        .args(["doctor", broken_file.to_str().unwrap()])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("another header order"), "{report}");

    let s = t.capture();
    assert!(!s.contains(EXIT_MARKER), "{s}");
    t.quit_and_check_restored();
}
