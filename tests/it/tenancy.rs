//! Issue 20 part 1: many TPPs on one sandbox. Each TPP has its own world (clock, fault
//! rules, reset, the customers it created, its event stream), sandbox operations need a PSD2
//! role, the SCA page address is a token only the TPP's own scaRedirect carries, and what
//! spans every TPP is on the operator plane (a loopback peer address or the operator token,
//! never `--public-url`). Three certificates: [`tpp`] (PSP_AI, PSP_PI, organisation
//! PSDNO-FSA-TEST01), [`rival`] (PSP_AI, PSP_PI, another organisation) and [`unregistered`]
//! (no PSD2 roles). Non-loopback peers are injected (`ConnectInfo` set by a layer of the test
//! router); nothing is sent off 127.0.0.1.

use std::net::SocketAddr;

use crate::common;

use axum::extract::ConnectInfo;
use common::payments::{DOMESTIC, KARI, kari_payment, kari_pays};
use common::sandbox::{Reply, TestSandbox, signed_headers, tpp, tpp_of};
use common::sse::EventStream;
use psd2_console::cert::Credentials;
use psd2_console::sandbox::http::operator::{OPERATOR_TOKEN_HEADER, OperatorToken};
use psd2_console::sandbox::{self, SandboxConfig};
use serde_json::{Value, json};

/// A second registered TPP, of another organisation.
fn rival() -> &'static Credentials {
    tpp_of("Rival Fintech AS", "PSDNO-FSA-RIVAL2", None)
}

/// A self-made certificate without PSD2 roles.
fn unregistered() -> &'static Credentials {
    tpp_of("Nobody", "PSDNO-FSA-NOBODY", Some(&[]))
}

/// A `POST path` with the JSON `body` as the [`rival`].
async fn rival_post(sb: &TestSandbox, path: &str, body: Value) -> Reply {
    as_(sb, rival(), "POST", path, Some(&body)).await
}

/// The [`rival`] creates the private customer "Rival Person" in its world (201).
async fn rival_customer(sb: &TestSandbox) -> Reply {
    let body = json!({"customerType": "PRIVATE", "customerName": "Rival Person"});
    let r = rival_post(sb, "/v1/sandbox/customers", body).await;
    r.assert_status(201);
    r
}

/// A `GET path` as the [`rival`].
async fn rival_get(sb: &TestSandbox, path: &str) -> Reply {
    as_(sb, rival(), "GET", path, None).await
}

async fn as_(
    sb: &TestSandbox,
    c: &Credentials,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Reply {
    let text = body.map(Value::to_string);
    sb.send_as(c, method, path, &[], text.as_deref()).await
}

/// The sandbox time `c` sees (`GET /v1/sandbox/clock`).
async fn now_of(sb: &TestSandbox, c: &Credentials) -> chrono::DateTime<chrono::FixedOffset> {
    let r = as_(sb, c, "GET", "/v1/sandbox/clock", None).await;
    r.assert_status(200);
    chrono::DateTime::parse_from_rfc3339(r.json["now"].as_str().unwrap()).unwrap()
}

/// Finding 1: every sandbox operation refuses a certificate without PSP_AI or PSP_PI with
/// 401 ROLE_INVALID, as the production operations do; a registered TPP is let through.
#[tokio::test]
async fn sandbox_operations_need_a_psd2_role() {
    let sb = TestSandbox::start().await;
    let fault = json!({"action": "error", "path": "/v1/accounts*", "status": 503,
        "code": "SERVICE_BLOCKED", "text": "attacker was here"});
    let customer = json!({"customerType": "PRIVATE", "customerName": "Mallory"});
    let seeded = sb.customers().await[0]["customerId"]
        .as_str()
        .unwrap()
        .to_string();
    let calls: Vec<(&str, String, Option<Value>)> = vec![
        ("POST", "/v1/sandbox/faults".into(), Some(fault)),
        ("GET", "/v1/sandbox/faults".into(), None),
        (
            "POST",
            "/v1/sandbox/clock".into(),
            Some(json!({"advanceSeconds": 15_638_400})),
        ),
        ("POST", "/v1/sandbox/initialize".into(), Some(json!({}))),
        ("GET", "/v1/sandbox/customers".into(), None),
        ("POST", "/v1/sandbox/customers".into(), Some(customer)),
        ("DELETE", format!("/v1/sandbox/customers/{seeded}"), None),
        ("GET", "/v1/sandbox/events".into(), None),
        ("POST", "/v1/sandbox/batch".into(), None),
        ("GET", "/v1/sandbox/state".into(), None),
        ("GET", "/v1/sandbox/snapshot".into(), None),
    ];
    for (method, path, body) in &calls {
        let r = as_(&sb, unregistered(), method, path, body.as_ref()).await;
        r.assert_error(401, "ROLE_INVALID");
        assert!(
            r.text.contains("PSP_AI or PSP_PI"),
            "{method} {path}: {}",
            r.text
        );
    }
    // Nothing changed: no fault answers, the clock did not move, the customer is there.
    assert!(
        sb.get("/v1/sandbox/faults").await.json["faults"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let r = sb.get(&format!("/v1/sandbox/customers/{seeded}")).await;
    r.assert_status(200);
    // A registered TPP gets through.
    let r = rival_get(&sb, "/v1/sandbox/customers").await;
    r.assert_status(200);
}

/// Clock offset, fault rules, initialize and created customers are the calling TPP's: what
/// a rival TPP does there never changes what this TPP sees; the seeded customers are in
/// every world and a TPP deletes only its own customers.
#[tokio::test]
pub(crate) async fn clock_faults_reset_and_customers_are_each_tpps_own() {
    let sb = TestSandbox::start().await;
    // This TPP's payment, before the rival acts.
    let (payment, _) = kari_pays(&sb, DOMESTIC, "10.00", "mine").await;
    let mine_before = now_of(&sb, tpp()).await;

    // The rival: a fault on every account read, +181 days, a customer of its own, a reset.
    let r = rival_post(
        &sb,
        "/v1/sandbox/faults",
        json!({
        "action": "error", "path": "/v1/accounts*", "status": 503, "code": "SERVICE_BLOCKED",
        "text": "attacker was here"}),
    )
    .await;
    r.assert_status(201);
    let r = rival_post(
        &sb,
        "/v1/sandbox/clock",
        json!({"advanceSeconds": 181 * 86_400}),
    )
    .await;
    r.assert_status(200);
    let theirs = rival_customer(&sb).await;
    let their_id = theirs.json["customerId"].as_str().unwrap().to_string();

    // The rival's own world has all of it.
    let r = rival_get(&sb, "/v1/sandbox/faults").await;
    r.assert_status(200);
    assert_eq!(r.json["faults"].as_array().unwrap().len(), 1);
    let r = rival_get(&sb, "/v1/sandbox/customers").await;
    r.assert_status(200);
    assert!(r.text.contains(&their_id));
    assert!(now_of(&sb, rival()).await - mine_before >= chrono::Duration::days(181));

    // This TPP's world: no fault, its clock where it was, no rival customer.
    let faults = sb.get("/v1/sandbox/faults").await;
    faults.assert_status(200);
    assert!(
        faults.json["faults"].as_array().unwrap().is_empty(),
        "{}",
        faults.text
    );
    let drift = now_of(&sb, tpp()).await - mine_before;
    assert!(
        drift < chrono::Duration::hours(1),
        "my clock moved by {drift}"
    );
    let accounts = sb.get("/v1/accounts").await;
    assert_ne!(
        accounts.status, 503,
        "the rival's fault answered me: {}",
        accounts.text
    );
    let theirs = rival_get(&sb, "/v1/accounts").await;
    theirs.assert_error(503, "SERVICE_BLOCKED");
    let listed = sb.customers().await;
    assert!(!listed.iter().any(|c| c["customerId"] == their_id.as_str()));
    assert!(
        listed.iter().any(|c| c["customerNumber"] == KARI),
        "the seed is in my world"
    );
    sb.get(&format!("/v1/sandbox/customers/{their_id}"))
        .await
        .assert_error(404, "RESOURCE_UNKNOWN");
    sb.delete(&format!("/v1/sandbox/customers/{their_id}"))
        .await
        .assert_error(404, "RESOURCE_UNKNOWN");
    // The seeded customers are everybody's: nobody deletes them from the TPP plane.
    let kari = listed.iter().find(|c| c["customerNumber"] == KARI).unwrap();
    let kari_id = kari["customerId"].as_str().unwrap();
    as_(
        &sb,
        rival(),
        "DELETE",
        &format!("/v1/sandbox/customers/{kari_id}"),
        None,
    )
    .await
    .assert_error(403, "SERVICE_BLOCKED");

    // The rival resets its world: this TPP's payment stays.
    rival_post(&sb, "/v1/sandbox/initialize", json!({}))
        .await
        .assert_status(200);
    sb.get_ok(&format!("/v1/payments/{DOMESTIC}/{payment}/status"))
        .await;
    // ... and the rival's own world is reset: its clock, fault and customer are gone.
    let r = rival_get(&sb, "/v1/sandbox/faults").await;
    assert!(
        r.json["faults"].as_array().unwrap().is_empty(),
        "{}",
        r.text
    );
    assert!(now_of(&sb, rival()).await - mine_before < chrono::Duration::hours(1));
    rival_get(&sb, &format!("/v1/sandbox/customers/{their_id}"))
        .await
        .assert_error(404, "RESOURCE_UNKNOWN");
    // A global reset is the operator's: `scope=all` is answered on loopback only.
    sb.post_ok("/v1/sandbox/initialize?scope=all", &json!({}))
        .await;
}

/// The event stream carries only the subscriber's own requests: another TPP's PSU-ID, paths
/// and signing strings never reach it.
#[tokio::test]
async fn the_event_stream_never_carries_another_tpps_psu_id() {
    let sb = TestSandbox::start().await;
    let mut rivals = EventStream::open_as(&sb, rival(), "/v1/sandbox/events").await;
    let secret_psu = "victim-psu-4711";
    let r = sb
        .send(
            "POST",
            "/v1/bank-offered-consents",
            &[("PSU-ID", secret_psu)],
            Some("{}"),
        )
        .await;
    assert!(r.status < 500, "{}", r.text);
    let (_, sca) = kari_pays(&sb, DOMESTIC, "10.00", "mine").await;
    let page = sb.get_page(&sca).await;
    assert_eq!(page.status, 200);
    // The rival's own request ends its reading.
    rival_get(&sb, "/v1/sandbox/clock").await.assert_status(200);
    let seen = rivals
        .until(|e| e.name == "request" && e.data["path"] == "/v1/sandbox/clock")
        .await;
    for e in &seen {
        assert!(
            !e.raw.contains(secret_psu),
            "another TPP's PSU-ID leaked: {}",
            e.raw
        );
        assert_ne!(e.name, "sca", "another TPP's SCA step leaked: {}", e.raw);
        assert_ne!(e.data["path"], "/v1/bank-offered-consents", "{}", e.raw);
    }
    assert_eq!(seen.len(), 1, "only the rival's own request: {seen:?}");
    // Every TPP's events are the operator's (`scope=all`), and the loopback test client is one.
    let mut all = EventStream::open(&sb).await;
    sb.get("/v1/sandbox/clock").await.assert_status(200);
    all.requests_to("/v1/sandbox/clock", 1).await;
}

/// Finding 2: a second TPP that sees everything it can see (its own event stream, the
/// customer list, even the victim's authorisation ids) cannot reach the victim's SCA page:
/// the page's address is a token distinct from the authorisation id, carried only by the
/// victim's own scaRedirect.
#[tokio::test]
pub(crate) async fn a_second_tpp_cannot_reach_another_tpps_sca_page() {
    let sb = TestSandbox::start().await;
    let mut rivals = EventStream::open_as(&sb, rival(), "/v1/sandbox/events").await;
    // The victim's payment SCA and consent SCA.
    let r = sb
        .initiate(DOMESTIC, &kari_payment("99.00", "victim"))
        .await;
    r.assert_status(201);
    let sca = r.sca_redirect().unwrap().to_string();
    let status_link = r.json["_links"]["scaStatus"]["href"]
        .as_str()
        .unwrap()
        .to_string();
    let auth_id = status_link.rsplit('/').next().unwrap().to_string();
    let consent = sb
        .send("POST", "/v1/bank-offered-consents", &[], Some("{}"))
        .await;
    let consent_sca = consent.sca_redirect().unwrap().to_string();
    sb.get(&status_link).await.assert_status(200);
    // The page token is not the authorisation id and does not hold it.
    let token = sca.rsplit('/').next().unwrap();
    assert_ne!(token, auth_id);
    assert!(!sca.contains(&auth_id), "{sca} holds {auth_id}");
    // What the rival sees: its own (empty) stream and the customer list.
    rival_get(&sb, "/v1/sandbox/clock").await.assert_status(200);
    let seen = rivals
        .until(|e| e.name == "request" && e.data["path"] == "/v1/sandbox/clock")
        .await;
    assert!(
        seen.iter()
            .all(|e| !e.raw.contains(&auth_id) && !e.raw.contains(token))
    );
    rival_get(&sb, "/v1/sandbox/customers")
        .await
        .assert_status(200);
    // Even knowing the authorisation ids, the rival's browser finds no page.
    for path in [
        format!("/payment-sca/{auth_id}"),
        format!("/payment-sca/{auth_id}/login"),
        format!("/sca/{auth_id}"),
    ] {
        let r = sb.get_page(&format!("{}{path}", sb.base)).await;
        assert_eq!(r.status, 404, "{path}: {}", r.text);
    }
    let consent_auth = consent.json["_links"]["scaStatus"]["href"]
        .as_str()
        .map(|h| h.rsplit('/').next().unwrap().to_string());
    if let Some(id) = consent_auth {
        let r = sb.get_page(&format!("{}/sca/{id}", sb.base)).await;
        assert_eq!(r.status, 404, "{}", r.text);
    }
    // The victim's own links work, and the page never shows the authorisation id.
    let page = sb.get_page(&sca).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(
        !page.text.contains(&auth_id),
        "the page shows the authorisation id"
    );
    assert!(page.text.contains(&format!("/payment-sca/{token}/")));
    let page = sb.get_page(&consent_sca).await;
    assert_eq!(page.status, 200, "{}", page.text);
}

/// A sandbox whose every request seems to come from `peer` (a `ConnectInfo` layer inside
/// the server's own): its links still on 127.0.0.1, as with `--public-url http://127.0.0.1:P`.
async fn sandbox_seen_from(
    peer: SocketAddr,
    token: Option<&str>,
) -> (String, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let sandbox = sandbox::router(SandboxConfig {
        public_url: Some(format!("http://{addr}")),
        operator_token: token.map(|t| OperatorToken::new(t).unwrap()),
        ..SandboxConfig::default()
    })
    .unwrap();
    let app = axum::Router::new()
        .fallback_service(sandbox)
        .layer(axum::Extension(ConnectInfo(peer)));
    let task = tokio::spawn(sandbox::http::serve::serve(
        listener,
        app,
        std::future::pending(),
    ));
    (format!("http://{addr}"), task)
}

async fn get_from(base: &str, path: &str, extra: &[(&str, &str)]) -> Reply {
    let hs = signed_headers(tpp(), "GET", path, &[], None, std::time::SystemTime::now());
    let mut rb = reqwest::Client::new().get(format!("{base}{path}"));
    for (n, v) in hs.iter() {
        rb = rb.header(n.as_str(), v.as_str());
    }
    for (n, v) in extra {
        rb = rb.header(*n, *v);
    }
    Reply::of(rb.send().await.unwrap()).await
}

/// Finding 3: `state` and `snapshot` follow the socket's peer address, not `--public-url`:
/// from a non-loopback peer they are refused although the public URL is on loopback, and
/// answered with the operator token (as are every TPP's events and the global reset).
#[tokio::test]
async fn state_and_snapshot_follow_the_peer_address_and_the_operator_token() {
    let token = "a-long-operator-token-for-tests";
    let peer: SocketAddr = "192.0.2.10:40000".parse().unwrap();
    let with_token = [(OPERATOR_TOKEN_HEADER, token)];
    let (base, task) = sandbox_seen_from(peer, Some(token)).await;
    for path in [
        "/v1/sandbox/state",
        "/v1/sandbox/snapshot",
        "/v1/sandbox/events?scope=all",
    ] {
        let r = get_from(&base, path, &[]).await;
        r.assert_error(403, "SERVICE_BLOCKED");
        let r = get_from(
            &base,
            path,
            &[(OPERATOR_TOKEN_HEADER, "wrong-token-of-same-size")],
        )
        .await;
        r.assert_error(403, "SERVICE_BLOCKED");
    }
    // The TPP plane still works from there.
    get_from(&base, "/v1/sandbox/clock", &[])
        .await
        .assert_status(200);
    let r = get_from(&base, "/v1/sandbox/state", &with_token).await;
    r.assert_status(200);
    assert!(r.json["customers"].is_array());
    let r = get_from(&base, "/v1/sandbox/snapshot", &with_token).await;
    r.assert_status(200);
    assert!(r.body.starts_with(b"SQLite format 3\0"));
    task.abort();

    // Without a token nothing from the network reaches the operator plane.
    let (base, task) = sandbox_seen_from(peer, None).await;
    let r = get_from(&base, "/v1/sandbox/state", &with_token).await;
    r.assert_error(403, "SERVICE_BLOCKED");
    task.abort();

    // A loopback peer is the operator (the embedded sandbox, a local `sandbox serve`).
    let (base, task) = sandbox_seen_from("127.0.0.1:40000".parse().unwrap(), None).await;
    get_from(&base, "/v1/sandbox/state", &[])
        .await
        .assert_status(200);
    task.abort();
}

/// Issue 20: a customer another TPP created is not in this TPP's world on the SCA pages
/// either: its customerNumber is not among the login page's customers, and logging in with
/// it is refused as an unknown number; the seeded customers are listed for everybody.
#[tokio::test]
pub(crate) async fn another_tpps_created_customer_is_neither_listed_nor_accepted_at_my_sca_login() {
    use psd2_console::client::headless_sca::{self as headless, AccountChoice, Context, ScaPlan};
    let sb = TestSandbox::start().await;
    let theirs = rival_customer(&sb).await;
    let number = theirs.json["customerNumber"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", theirs.text))
        .to_string();
    let consent = sb
        .send("POST", "/v1/bank-offered-consents", &[], Some("{}"))
        .await;
    let sca = consent.sca_redirect().unwrap().to_string();
    // One browser (cookies) for the look at the login page and the attempt.
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = client.get(&sca).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let text = page.text().await.unwrap();
    assert!(text.contains(KARI), "the seed is listed: {text}");
    assert!(
        !text.contains(&number) && !text.contains("Rival Person"),
        "another TPP's customer is listed: {text}"
    );
    let plan = ScaPlan {
        customer: number.clone(),
        context: Context::Private,
        accounts: AccountChoice::AsOffered,
        reject: false,
    };
    let refused = headless::walk(&client, &sca, &plan, |_| {}).await;
    let err = refused.expect_err("another TPP's customer logged in at my SCA page");
    assert!(
        err.to_string()
            .contains("No sandbox customer has the number"),
        "{err}"
    );
}

/// Another TPP's payment is never a logical duplicate of mine: the same debtor, creditor,
/// amount and remittance initiated by the [`rival`] first still answers 201 for [`tpp`] (a
/// 400 would tell it that somebody else initiated that payment), while a TPP's own second
/// initiation of it is refused as before.
#[tokio::test]
pub(crate) async fn another_tpps_payment_is_not_a_logical_duplicate_of_mine() {
    let sb = TestSandbox::start().await;
    let body = kari_payment("42.00", "same for both TPPs");
    let path = format!("/v1/payments/{DOMESTIC}");
    rival_post(&sb, &path, body.clone())
        .await
        .assert_status(201);
    let r = sb.initiate(DOMESTIC, &body).await;
    r.assert_status(201);
    sb.initiate(DOMESTIC, &body)
        .await
        .assert_error(400, "PAYMENT_FAILED");
    rival_post(&sb, &path, body)
        .await
        .assert_error(400, "PAYMENT_FAILED");
}
