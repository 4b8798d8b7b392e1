//! The sandbox monitor screen (`4`, issue 11) over real HTTP on 127.0.0.1: the app is driven
//! by keys as in the other `tui_*` modules, and the test does what the runner does for its
//! actions with the same functions: follows the event stream
//! ([`psd2_console::client::monitor::follow`]) into `App::monitor_feed`, and performs the
//! management requests ([`psd2_console::client::monitor::perform`]) into
//! `App::monitor_done`. The sandbox runs on a fixed clock, so its times are deterministic.

use crate::common;

use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use common::payments::{DOMESTIC, KARI, domestic, first_bban};
use common::sandbox::{REDIRECT, TestSandbox, signed_headers, tpp};
use common::tui::{Drive, status};
use psd2_console::cert::Credentials;
use psd2_console::cert::generate::{TppCertSpec, credentials_of, generate_set};
use psd2_console::client::monitor::{MonitorEvent, MonitorFeed, follow, perform};
use psd2_console::client::sandbox_admin::SandboxAdmin;
use psd2_console::client::{RequestContext, prepare, send_for_profile};
use psd2_console::profile::{DEFAULT_PROFILE, ProfileSet, SessionState};
use psd2_console::sandbox::http::operator::OperatorToken;
use psd2_console::sandbox::{Clock, SandboxConfig};
use psd2_console::signing::VerifyPolicy;
use psd2_console::tui::monitor::MonitorTab;
use psd2_console::tui::{Action, App, StatusInfo};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The sandbox clock of these tests: 2026-11-24 09:30:00 UTC.
const T0: u64 = 1_795_512_600;

/// Longest wait for the next stream message: a guard against a hanging test, not a timing
/// assertion.
const PATIENCE: Duration = Duration::from_secs(60);

/// The monitor's own TPP (another certificate than [`tpp`]), generated once.
fn monitor_credentials() -> Arc<Credentials> {
    static C: OnceLock<Arc<Credentials>> = OnceLock::new();
    C.get_or_init(|| {
        Arc::new(credentials_of(&generate_set(&TppCertSpec::default()).unwrap()).unwrap())
    })
    .clone()
}

/// `GET /v1/sandbox/clock` as the monitor's TPP: the clock the monitor moves is its own
/// (issue 20: each TPP has its own sandbox clock).
async fn monitor_clock(sb: &TestSandbox) -> common::sandbox::Reply {
    let r = sb
        .send_as(
            &monitor_credentials(),
            "GET",
            "/v1/sandbox/clock",
            &[],
            None,
        )
        .await;
    r.assert_status(200);
    r
}

/// The operator token of the monitored sandbox (the console's embedded sandbox has one of
/// its own, see `embedded`).
const MONITOR_OPERATOR_TOKEN: &str = "monitor-operator-token-for-tests";

/// The screen with what changes from run to run replaced: the sandbox's port, and UUIDs
/// other than `kept` (the monitor's own X-Request-IDs, fault ids).
fn stable(screen: &str, base: &str, kept: &[&str]) -> String {
    let mut out = screen.replace(base, "http://127.0.0.1:‹port›");
    // How many of the monitor's own reads arrived depends on timing (it reads again
    // whenever the sandbox changes).
    if let Some(at) = out.find(" reads of the monitor hidden") {
        let start = out[..at]
            .rfind(|c: char| !c.is_ascii_digit())
            .map_or(0, |i| i + 1);
        out.replace_range(start..at, "‹n›");
    }
    let chars: Vec<char> = out.chars().collect();
    let is_uuid = |w: &[char]| {
        w.len() == 36
            && w.iter().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => *c == '-',
                _ => c.is_ascii_hexdigit(),
            })
    };
    let mut found = Vec::new();
    let mut i = 0;
    while i + 36 <= chars.len() {
        if is_uuid(&chars[i..i + 36]) {
            found.push(chars[i..i + 36].iter().collect::<String>());
            i += 36;
        } else {
            i += 1;
        }
    }
    for u in found {
        if !kept.contains(&u.as_str()) {
            out = out.replace(&u, "‹uuid·······························›");
        }
    }
    out
}

/// A sandbox on a fixed clock, the console's app on the monitor screen with its event stream
/// followed, and the admin client the runner would use.
struct Monitored {
    sb: TestSandbox,
    app: App,
    admin: SandboxAdmin,
    feed: mpsc::UnboundedReceiver<MonitorFeed>,
}

impl Monitored {
    /// Shows screen 4 (which asks to follow the stream), follows it as the runner does until
    /// the subscription exists, and reads the state.
    async fn start() -> Monitored {
        Monitored::start_with(SandboxConfig::default()).await
    }

    /// [`Monitored::start`] on a sandbox with `config` (its clock and verify policy set
    /// here).
    async fn start_with(config: SandboxConfig) -> Monitored {
        // The test certificates are valid from the day the test runs, not at T0.
        let sb = TestSandbox::start_with(SandboxConfig {
            clock: Clock::fixed(SystemTime::UNIX_EPOCH + Duration::from_secs(T0)),
            verify_policy: VerifyPolicy {
                check_validity: false,
                ..VerifyPolicy::default()
            },
            operator_token: Some(OperatorToken::new(MONITOR_OPERATOR_TOKEN).unwrap()),
            ..config
        })
        .await;
        let mut app = App::new(StatusInfo {
            base_url: sb.base.clone(),
            ..status()
        });
        app.mask_volatile = true;
        assert_eq!(app.press("4"), Action::MonitorStart);
        // As the console on its embedded sandbox: the operator plane, with the token the
        // sandbox was started with (every TPP's events, the whole state).
        let admin = SandboxAdmin::new(&sb.base, monitor_credentials(), reqwest::Client::new())
            .with_operator_token(Some(MONITOR_OPERATOR_TOKEN.to_string()));
        let (tx, feed) = mpsc::unbounded_channel();
        tokio::spawn(follow(admin.clone(), sb.now(), tx));
        let mut m = Monitored {
            sb,
            app,
            admin,
            feed,
        };
        // The first message is the subscription; the app then asks to read the state.
        let first = tokio::time::timeout(PATIENCE, m.feed.recv())
            .await
            .expect("no subscription within 60 s")
            .expect("the event stream task ended");
        assert_eq!(first, MonitorFeed::Subscribed);
        let action = m.app.monitor_feed(first);
        assert_eq!(
            action,
            Action::Monitor(psd2_console::client::monitor::MonitorRequest::Refresh)
        );
        m.run(action).await;
        m
    }

    /// Feeds what the stream sends into the app until `done` holds, doing what the runner
    /// does with the reads it asks for.
    async fn pump_until(&mut self, done: impl Fn(&App) -> bool) {
        while !done(&self.app) {
            let feed = tokio::time::timeout(PATIENCE, self.feed.recv())
                .await
                .expect("nothing from the event stream within 60 s")
                .unwrap_or_else(|| {
                    panic!(
                        "the event stream task ended: {:?}",
                        self.app.monitor().stream()
                    )
                });
            // The runner performs what the app asks for (a read of the changed sandbox).
            let action = self.app.monitor_feed(feed);
            if action != Action::None {
                self.run(action).await;
            }
        }
    }

    /// Feeds events until one request event with X-Request-ID `id` is in the log.
    async fn pump_until_request(&mut self, id: &str) {
        self.pump_until(|app| request_of(app, id).is_some()).await;
    }

    /// Feeds events until the clock event that set the sandbox time to `now` is in the log.
    async fn pump_until_clock(&mut self, now: &str) {
        self.pump_until(|app| {
            app.monitor()
                .events()
                .any(|e| matches!(e, MonitorEvent::Clock(c) if c.now == now))
        })
        .await;
    }

    /// Does what the runner does for `action` (a monitor request), and for the read the
    /// answer asks for when the sandbox changed meanwhile.
    async fn run(&mut self, action: Action) {
        let mut action = action;
        loop {
            let Action::Monitor(request) = action else {
                panic!("not a monitor request: {action:?}");
            };
            // Signed at the monitor's TPP's own clock, as the console does (`Engine::now`).
            let at = self
                .sb
                .clock
                .now_in(&common::sandbox::tpp_id(&monitor_credentials()));
            let r = perform(&self.admin, request, at).await;
            action = self.app.monitor_done(r.map_err(|e| e.to_string()));
            if action == Action::None {
                return;
            }
        }
    }

    /// Presses `key`, which must ask for a monitor request, and performs it.
    async fn press_and_run(&mut self, key: &str) {
        let action = self.app.press(key);
        self.run(action).await;
    }

    fn screen(&self) -> String {
        self.app.screen_text(160, 44)
    }
}

/// The request event with X-Request-ID `id` in the monitor's log.
fn request_of<'a>(
    app: &'a App,
    id: &str,
) -> Option<&'a psd2_console::client::monitor::RequestEvent> {
    app.monitor().events().find_map(|e| match e {
        MonitorEvent::Request(r) if r.request_id.as_deref() == Some(id) => Some(r),
        _ => None,
    })
}

/// Highlights the request with X-Request-ID `id` (moving down from the newest row).
fn highlight(app: &mut App, id: &str) {
    app.keys("Home");
    for _ in 0..50 {
        if matches!(app.monitor().selected_event(), Some(MonitorEvent::Request(r)) if r.request_id.as_deref() == Some(id))
        {
            return;
        }
        app.keys("Down");
    }
    panic!("no row with X-Request-ID {id}");
}

#[tokio::test]
async fn a_request_sent_by_the_console_shows_in_the_log_with_status_and_request_id() {
    let mut m = Monitored::start().await;
    let profiles = ProfileSet::load(None);
    let profile = profiles.get(DEFAULT_PROFILE).unwrap();
    let session = SessionState::default();
    let ctx = RequestContext {
        profile,
        session: &session,
        credentials: tpp(),
        base_url: &m.sb.base,
        redirect_uri: REDIRECT,
        now: m.sb.now(),
    };
    let op = psd2_console::xs2a::operations::find("accounts.list").unwrap();
    let req = prepare(op, &[], None, &ctx).unwrap();
    let id = req
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("x-request-id"))
        .map(|(_, v)| v.clone())
        .unwrap();
    let ex = send_for_profile(&reqwest::Client::new(), &req, None)
        .await
        .unwrap();
    m.pump_until_request(&id).await;
    let seen = request_of(&m.app, &id).unwrap().clone();
    assert_eq!(seen.status, ex.status);
    assert_eq!(seen.path, "/v1/accounts");
    assert_eq!(seen.at, "2026-11-24T09:30:00Z");
    let screen = m.screen();
    let row = screen
        .lines()
        .find(|l| l.contains(&id))
        .unwrap_or_else(|| panic!("no row with {id}:\n{screen}"));
    assert!(row.contains("09:30:00"), "{row}");
    assert!(row.contains("GET"), "{row}");
    assert!(row.contains("/v1/accounts"), "{row}");
    assert!(row.contains(&ex.status.to_string()), "{row}");
    m.sb.stop().await;
}

#[tokio::test]
async fn a_broken_signature_shows_the_failing_check_and_the_rebuilt_signing_string() {
    let mut m = Monitored::start().await;
    let mut headers = signed_headers(
        tpp(),
        "GET",
        "/v1/accounts",
        &[("X-Request-ID", "a1111111-1111-4111-8111-111111111111")],
        None,
        m.sb.now(),
    );
    // Changed after signing: the signature no longer covers what is sent.
    for (n, v) in &mut headers {
        if n.eq_ignore_ascii_case("x-request-id") {
            *v = "b2222222-2222-4222-8222-222222222222".into();
        }
    }
    let mut rb = m.sb.http.get(format!("{}/v1/accounts", m.sb.base));
    for (n, v) in &headers {
        rb = rb.header(n, v);
    }
    let r = rb.send().await.unwrap();
    assert!(r.status().is_client_error(), "{}", r.status());
    let id = "b2222222-2222-4222-8222-222222222222";
    m.pump_until_request(id).await;
    highlight(&mut m.app, id);
    let screen = m.screen();
    assert!(
        screen.contains("✘ failed check: SignatureInvalid"),
        "{screen}"
    );
    assert!(
        screen.contains("Signing string as the server rebuilt it:"),
        "{screen}"
    );
    assert!(screen.contains(&format!("x-request-id: {id}")), "{screen}");
    assert!(screen.contains("SIGNATURE_INVALID"), "{screen}");
    m.sb.stop().await;
}

#[tokio::test]
async fn the_state_browser_lists_a_consent_created_in_the_test_with_its_consent_status() {
    let mut m = Monitored::start().await;
    let r = m.sb.send("POST", "/v1/consents", &[], Some("")).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let consent = r.json["consentId"].as_str().unwrap().to_string();
    m.app.keys("Tab");
    assert_eq!(m.app.monitor().tab(), MonitorTab::State);
    m.press_and_run("r").await;
    let state = &m.app.monitor().sandbox().unwrap().state;
    let listed = state["consents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["consentId"] == consent.as_str())
        .unwrap_or_else(|| panic!("{consent} not listed: {state}"));
    assert_eq!(listed["consentStatus"], "received");
    let screen = m.screen();
    let row = screen
        .lines()
        .find(|l| l.contains(&consent))
        .unwrap_or_else(|| panic!("no row with {consent}:\n{screen}"));
    assert!(row.contains("received"), "{row}");
    assert!(screen.contains("Customers ("), "{screen}");
    m.sb.stop().await;
}

#[tokio::test]
async fn advancing_the_clock_from_the_monitor_changes_the_sandbox_clock_and_the_event_shows() {
    let mut m = Monitored::start().await;
    m.press_and_run("+").await;
    let clock = monitor_clock(&m.sb).await;
    assert_eq!(clock.json["now"], "2026-11-24T10:30:00Z");
    m.pump_until_clock("2026-11-24T10:30:00Z").await;
    // A typed offset: the box takes every key (no global key fires), Enter advances.
    m.app.keys("a");
    assert!(m.app.monitor().typing());
    m.app.type_text("1d6h");
    assert_eq!(m.app.screen(), psd2_console::tui::Screen::Monitor);
    let action = m.app.press("Enter");
    assert_eq!(
        action,
        Action::Monitor(psd2_console::client::monitor::MonitorRequest::Advance(
            108_000
        ))
    );
    m.run(action).await;
    let clock = monitor_clock(&m.sb).await;
    assert_eq!(clock.json["now"], "2026-11-25T16:30:00Z");
    m.pump_until_clock("2026-11-25T16:30:00Z").await;
    let screen = m.screen();
    assert!(
        screen.contains("CLOCK advance: now 2026-11-25T16:30:00Z (offset +1 d 7 h)"),
        "{screen}"
    );
    assert!(
        screen.contains("Sandbox clock 2026-11-25T16:30:00Z"),
        "{screen}"
    );
    // A batch run from the monitor is an event too.
    m.press_and_run("b").await;
    m.pump_until(|app| {
        app.monitor()
            .events()
            .any(|e| matches!(e, MonitorEvent::Batch(b) if b.all))
    })
    .await;
    assert!(m.screen().contains("BATCH run now"), "{}", m.screen());
    m.sb.stop().await;
}

#[tokio::test]
async fn an_injected_fault_is_marked_in_the_log_and_clearing_it_from_the_monitor_clears_it() {
    let mut m = Monitored::start().await;
    // The rule and the request are the monitor's TPP's, as in the console (one certificate
    // for both): fault rules are per TPP (issue 20).
    let body = json!({"action": "error", "method": "GET", "path": "/v1/accounts",
                    "status": 503, "code": "SERVICE_BLOCKED", "text": "maintenance"});
    let rule =
        m.sb.send_as(
            &monitor_credentials(),
            "POST",
            "/v1/sandbox/faults",
            &[],
            Some(&body.to_string()),
        )
        .await;
    assert_eq!(rule.status, 201, "{}", rule.text);
    let fault = rule.json["id"].as_str().unwrap().to_string();
    m.press_and_run("r").await;
    assert!(
        m.screen().contains("Faults in effect 1 (x clears)"),
        "{}",
        m.screen()
    );
    let id = "c3333333-3333-4333-8333-333333333333";
    let r =
        m.sb.send_as(
            &monitor_credentials(),
            "GET",
            "/v1/accounts",
            &[("X-Request-ID", id)],
            None,
        )
        .await;
    assert_eq!(r.status, 503);
    m.pump_until_request(id).await;
    let seen = request_of(&m.app, id).unwrap();
    assert!(seen.injected);
    let screen = m.screen();
    let row = screen.lines().find(|l| l.contains(id)).unwrap();
    assert!(row.contains("FAULT"), "{row}");
    assert!(row.contains("503"), "{row}");
    highlight(&mut m.app, id);
    assert!(
        m.screen()
            .contains(&format!("⚠ answered by fault rule {fault}")),
        "{}",
        m.screen()
    );
    m.press_and_run("x").await;
    let left =
        m.sb.send_as(
            &monitor_credentials(),
            "GET",
            "/v1/sandbox/faults",
            &[],
            None,
        )
        .await;
    assert_eq!(left.json["faults"], json!([]));
    let screen = m.screen();
    assert!(screen.contains("Faults in effect none"), "{screen}");
    assert!(screen.contains("Cleared 1 fault rules"), "{screen}");
    m.sb.stop().await;
}

#[test]
fn a_remote_profile_shows_why_the_monitor_cannot_watch_it() {
    let mut app = App::new(StatusInfo {
        base_url: "https://xs2a.bank.example".into(),
        embedded: false,
        ..status()
    });
    assert_eq!(app.press("4"), Action::None);
    assert_eq!(app.press("+"), Action::None);
    let screen = app.screen_text(120, 30);
    let flat = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "The sandbox monitor needs the embedded sandbox or a local `psd2-console sandbox serve`"
        ),
        "{screen}"
    );
    assert!(
        flat.contains("targets https://xs2a.bank.example, a remote bank"),
        "{screen}"
    );
}

#[test]
fn a_loopback_url_is_watched_like_the_embedded_sandbox() {
    let mut app = App::new(StatusInfo {
        base_url: "http://127.0.0.1:8080".into(),
        embedded: false,
        ..status()
    });
    assert_eq!(app.press("F4"), Action::MonitorStart);
}

#[tokio::test]
async fn monitor_screen_with_events() {
    let mut m = Monitored::start().await;
    let ok = "d4444444-4444-4444-8444-444444444444";
    m.sb.get_with("/v1/sandbox/customers", &[("X-Request-ID", ok)])
        .await;
    let unsigned = "e5555555-5555-4555-8555-555555555555";
    m.sb.http
        .get(format!("{}/v1/accounts", m.sb.base))
        .header("X-Request-ID", unsigned)
        .header("TPP-Redirect-URI", REDIRECT)
        .send()
        .await
        .unwrap();
    let rule =
        m.sb.post_json(
            "/v1/sandbox/faults",
            &json!({"action": "error", "method": "GET", "path": "/v1/accounts", "times": 1,
                    "status": 503, "code": "SERVICE_BLOCKED", "text": "maintenance"}),
        )
        .await;
    assert_eq!(rule.status, 201, "{}", rule.text);
    let faulted = "f6666666-6666-4666-8666-666666666666";
    m.sb.get_with("/v1/accounts", &[("X-Request-ID", faulted)])
        .await;
    let consent = m.sb.send("POST", "/v1/consents", &[], Some("")).await;
    assert_eq!(consent.status, 201, "{}", consent.text);
    let (payment, _) =
        m.sb.create_payment(DOMESTIC, &domestic(&first_bban(KARI), "12.50", "monitor"))
            .await;
    m.press_and_run("+").await;
    // Every answer so far: the stream is in order, so once the advance's clock event is
    // in, so are the five requests before it (the monitor's own reads, hidden, come
    // whenever the sandbox changed: their number is masked below).
    m.pump_until(|app| {
        app.monitor()
            .events()
            .any(|e| matches!(e, MonitorEvent::Clock(_)))
    })
    .await;
    highlight(&mut m.app, unsigned);
    insta::assert_snapshot!(
        "monitor_log",
        stable(&m.screen(), &m.sb.base, &[ok, unsigned, faulted])
    );
    m.app.keys("Tab");
    let screen = m.screen();
    assert!(screen.contains(&payment), "{screen}");
    insta::assert_snapshot!("monitor_state", stable(&screen, &m.sb.base, &[]));
    m.sb.stop().await;
}

/// The state route itself: customers with agreements, consents, payments and baskets with
/// their statuses; read only, and only on loopback.
#[tokio::test]
async fn the_state_route_lists_resources_with_their_statuses() {
    let sb = TestSandbox::start().await;
    let consent = sb.send("POST", "/v1/consents", &[], Some("")).await;
    let state: Value = sb.get_ok("/v1/sandbox/state").await.json;
    assert!(
        state["customers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| !c["agreements"].as_array().unwrap().is_empty()),
        "{state}"
    );
    let listed = &state["consents"][0];
    assert_eq!(listed["consentId"], consent.json["consentId"]);
    assert_eq!(listed["consentStatus"], "received");
    let (payment, _) = sb
        .create_payment(DOMESTIC, &domestic(&first_bban(KARI), "12.50", "monitor"))
        .await;
    let basket = sb
        .post_json("/v1/signing-baskets", &json!({"paymentIds": [payment]}))
        .await;
    assert_eq!(basket.status, 201, "{}", basket.text);
    let state: Value = sb.get_ok("/v1/sandbox/state").await.json;
    let p = &state["payments"][0];
    assert_eq!(p["paymentId"], payment.as_str());
    assert_eq!(p["transactionStatus"], "RCVD");
    assert_eq!(p["scaStatus"], "received");
    assert_eq!(
        p["instructedAmount"],
        json!({"currency": "NOK", "amount": "12.50"})
    );
    let b = &state["baskets"][0];
    assert_eq!(b["basketId"], basket.json["basketId"]);
    assert_eq!(b["paymentIds"], json!([payment]));
    assert_eq!(b["transactionStatus"], "RCVD");
    sb.stop().await;
    // Issue 20: the state follows the socket's peer address, not the public URL: this
    // client is on the sandbox's machine (a network peer is refused:
    // `tenancy::state_and_snapshot_follow_the_peer_address_and_the_operator_token`).
    let public = TestSandbox::start_with(SandboxConfig {
        public_url: Some("https://sandbox.example".into()),
        ..SandboxConfig::default()
    })
    .await;
    public.get("/v1/sandbox/state").await.assert_status(200);
    public.stop().await;
}

/// An app on the monitor screen of the embedded sandbox at the harness's URL, subscribed.
fn subscribed_app() -> App {
    let mut app = App::new(status());
    assert_eq!(app.press("4"), Action::MonitorStart);
    assert!(matches!(
        app.monitor_feed(MonitorFeed::Subscribed),
        Action::Monitor(_)
    ));
    app
}

/// A request event as the stream sends it, with X-Request-ID `id`.
fn request_event(id: &str) -> MonitorFeed {
    MonitorFeed::Event(MonitorEvent::Request(
        psd2_console::client::monitor::RequestEvent {
            at: "2026-11-24T09:30:00Z".into(),
            method: "GET".into(),
            path: "/v1/accounts".into(),
            status: 200,
            code: None,
            latency_us: 1_000,
            request_id: Some(id.into()),
            verify: None,
            signing_string: Some(format!("x-request-id: {id}")),
            injected: false,
            fault: None,
        },
    ))
}

#[test]
fn the_log_keeps_the_last_500_events() {
    let mut app = subscribed_app();
    for i in 0..600 {
        let _ = app.monitor_feed(request_event(&format!("id-{i}")));
    }
    let ids: Vec<String> = app
        .monitor()
        .events()
        .filter_map(|e| match e {
            MonitorEvent::Request(r) => r.request_id.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), psd2_console::tui::monitor::LOG_CAPACITY);
    assert_eq!(ids.first().map(String::as_str), Some("id-599"));
    assert_eq!(ids.last().map(String::as_str), Some("id-100"));
    // A highlighted older row stays highlighted while new events arrive.
    app.keys("Down Down");
    let _ = app.monitor_feed(request_event("id-600"));
    assert!(matches!(
        app.monitor().selected_event(),
        Some(MonitorEvent::Request(r)) if r.request_id.as_deref() == Some("id-597")
    ));
}

#[test]
fn an_ended_stream_is_shown_and_r_reconnects() {
    let mut app = subscribed_app();
    let _ = app.monitor_feed(MonitorFeed::Ended(
        "the sandbox at http://127.0.0.1:40123 closed the event stream".into(),
    ));
    let screen = app.screen_text(160, 30);
    assert!(
        screen.contains(
            "Event stream ended: the sandbox at http://127.0.0.1:40123 closed the event stream (r reconnects)"
        ),
        "{screen}"
    );
    assert_eq!(app.press("r"), Action::MonitorStart);
}

#[test]
fn another_profile_starts_the_monitor_afresh() {
    let mut app = subscribed_app();
    let _ = app.monitor_feed(request_event("before-the-switch"));
    assert_eq!(app.monitor_restart(), Action::MonitorStart);
    assert_eq!(app.monitor().events().count(), 0);
    // Not on the monitor screen: it follows the new sandbox when next shown.
    app.keys("1");
    assert_eq!(app.monitor_restart(), Action::None);
    assert_eq!(app.press("4"), Action::MonitorStart);
}

#[test]
fn at_80_columns_rows_are_cut_and_the_breakdown_has_the_whole_request_id() {
    let mut app = subscribed_app();
    let id = "a7777777-7777-4777-8777-777777777777";
    let _ = app.monitor_feed(request_event(id));
    let screen = app.screen_text(80, 24);
    let row = screen
        .lines()
        .find(|l| l.contains("/v1/accounts") && l.contains(" 200 "))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(row.contains("a7777777-777…"), "{row}");
    assert!(screen.contains(&format!("X-Request-ID {id}")), "{screen}");
}

/// Issue 18 defect 5: in room mode the sandbox's public URL is not on loopback. The
/// console's monitor reads its own embedded sandbox on the operator plane (issue 20: the
/// sandbox's operator token, whatever the public URL says), so clock, next batch run,
/// faults and the whole state are read, `+` advances the clock, and no 403 shows.
#[tokio::test]
async fn in_room_mode_the_clock_faults_and_state_are_read_on_the_operator_plane() {
    let mut m = Monitored::start_with(SandboxConfig {
        public_url: Some("http://192.168.1.20:8088".into()),
        ..SandboxConfig::default()
    })
    .await;
    let screen = m.screen();
    assert!(
        screen.contains("Sandbox clock 2026-11-24T09:30:00Z"),
        "{screen}"
    );
    assert!(screen.contains("Next batch run 2026-"), "{screen}");
    assert!(screen.contains("Faults in effect none"), "{screen}");
    assert!(screen.contains("Plane operator"), "{screen}");
    assert!(!screen.contains("SERVICE_BLOCKED"), "{screen}");
    // As a number of its own: the random port of the target URL may hold the digits
    // (it did: "http://127.0.0.1:40325").
    assert!(
        !screen
            .split(|c: char| !c.is_ascii_digit())
            .any(|number| number == "403"),
        "{screen}"
    );
    m.press_and_run("+").await;
    let screen = m.screen();
    assert!(
        screen.contains("Sandbox clock 2026-11-24T10:30:00Z"),
        "{screen}"
    );
    assert!(screen.contains("Sandbox clock advanced by 1 h"), "{screen}");
    m.app.keys("Tab");
    let flat = m.screen().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("Customers (5)"), "{flat}");
    assert!(!flat.contains("Reading the sandbox's state"), "{flat}");
    m.sb.stop().await;
}

/// Issue 18 defect 5, where the state is refused (a monitor in one TPP's scope, off the
/// operator plane: 403 `SERVICE_BLOCKED`): the clock and faults it did read are shown, the
/// state browser says why it is empty in one calm sentence, and the status line stays
/// quiet.
#[test]
fn a_refused_state_is_one_calm_sentence_and_the_clock_still_shows() {
    let mut app = subscribed_app();
    let _ = app.monitor_done(Ok(psd2_console::client::monitor::SandboxState {
        clock: json!({"now": "2026-11-24T09:30:00Z", "nextBatchRun": "2026-11-24T12:00:00Z"}),
        state: serde_json::Value::Null,
        state_withheld: Some("SERVICE_BLOCKED: the sandbox state is on the operator plane".into()),
        faults: Vec::new(),
        done: None,
    }));
    let screen = app.screen_text(160, 40);
    assert!(
        screen.contains("Sandbox clock 2026-11-24T09:30:00Z"),
        "{screen}"
    );
    assert!(!screen.contains("SERVICE_BLOCKED"), "{screen}");
    app.keys("Tab");
    let flat = app
        .screen_text(160, 40)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    // The sentence, wrapped in the pane: its first words on one row.
    let calm: String = psd2_console::tui::monitor::STATE_WITHHELD
        .split_whitespace()
        .take(10)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains(&calm), "{flat}");
    assert!(!flat.contains("Reading the sandbox's state"), "{flat}");
}

/// Issue 18 defect 9: a fault rule added elsewhere (here over HTTP, as `psd2-console
/// sandbox fault add` does) shows in the monitor's header without a key: its request event
/// makes the monitor read the sandbox again.
#[tokio::test]
async fn the_header_follows_a_fault_rule_added_from_outside() {
    let mut m = Monitored::start().await;
    assert!(
        m.screen().contains("Faults in effect none"),
        "{}",
        m.screen()
    );
    // Added by the same TPP (the profile's certificate, as `sandbox fault add` on that
    // profile does): fault rules belong to the TPP that added them (issue 20).
    let at =
        m.sb.clock
            .now_in(&common::sandbox::tpp_id(&monitor_credentials()));
    let rule: serde_json::Value = m
        .admin
        .send(
            reqwest::Method::POST,
            "/v1/sandbox/faults",
            Some(
                &json!({"action": "error", "method": "GET", "path": "/v1/accounts",
                    "status": 503, "code": "SERVICE_BLOCKED", "text": "maintenance"}),
            ),
            at,
        )
        .await
        .unwrap();
    assert!(
        rule["id"].is_string() || rule["ruleId"].is_string() || rule.is_object(),
        "{rule}"
    );
    m.pump_until(|app| app.monitor().sandbox().is_some_and(|s| s.faults.len() == 1))
        .await;
    assert!(
        m.screen().contains("Faults in effect 1 (x clears)"),
        "{}",
        m.screen()
    );
    m.sb.stop().await;
}

/// Issue 18 defect 9: the monitor's own reads are hidden by default and do not take the
/// highlight from the request being investigated; `m` shows them, the highlight stays.
#[tokio::test]
async fn the_monitors_own_reads_are_hidden_and_keep_the_highlight() {
    let mut m = Monitored::start().await;
    let id = "a8888888-8888-4888-8888-888888888888";
    m.sb.get_with("/v1/accounts", &[("X-Request-ID", id)]).await;
    m.pump_until_request(id).await;
    highlight(&mut m.app, id);
    let before = m.app.monitor().events().count();
    // A refresh: three reads of the sandbox, which arrive as events.
    m.press_and_run("r").await;
    m.pump_until(|app| app.monitor().events().count() >= before + 3)
        .await;
    assert!(
        matches!(m.app.monitor().selected_event(), Some(MonitorEvent::Request(r)) if r.request_id.as_deref() == Some(id)),
        "{:?}",
        m.app.monitor().selected_event()
    );
    let screen = m.screen();
    assert!(!screen.contains("/v1/sandbox/clock"), "{screen}");
    assert!(!screen.contains("/v1/sandbox/state"), "{screen}");
    assert!(
        screen.contains("reads of the monitor hidden (m shows)"),
        "{screen}"
    );
    m.app.keys("m");
    assert!(m.app.monitor().shows_reads());
    let screen = m.screen();
    assert!(screen.contains("/v1/sandbox/clock"), "{screen}");
    assert!(screen.contains("/v1/sandbox/faults"), "{screen}");
    assert!(
        matches!(m.app.monitor().selected_event(), Some(MonitorEvent::Request(r)) if r.request_id.as_deref() == Some(id)),
        "{:?}",
        m.app.monitor().selected_event()
    );
    m.sb.stop().await;
}
