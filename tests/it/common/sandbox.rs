//! A test sandbox on 127.0.0.1 with a signing client, whose every response is checked by
//! [`super::schema::check_exchange`] (Berlin Group component schemas). Violations are
//! collected and fail the test when the [`TestSandbox`] is dropped (or on
//! [`TestSandbox::assert_schema_valid`]).

#![allow(dead_code)]

use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use psd2_console::cert::Credentials;
use psd2_console::cert::generate::{TppCertSpec, credentials_of, generate_set};
use psd2_console::sandbox::http::observe::{ObservedExchange, ResponseObserver};
use psd2_console::sandbox::store::db::Storage;
use psd2_console::sandbox::{self, Clock, SandboxConfig, SandboxHandle};
use psd2_console::signing::{SignOptions, sign_request};
use serde_json::Value;

/// TPP credentials with PSP_AI and PSP_PI, generated once per test binary.
pub fn tpp() -> &'static Credentials {
    static C: OnceLock<Credentials> = OnceLock::new();
    C.get_or_init(|| credentials_of(&generate_set(&TppCertSpec::default()).unwrap()).unwrap())
}

/// Credentials with only the given roles (e.g. a PISP-only TPP), generated once per set.
pub fn tpp_with_roles(roles: &[psd2_console::cert::Psd2Role]) -> Credentials {
    let spec = TppCertSpec {
        roles: roles.to_vec(),
        ..TppCertSpec::default()
    };
    credentials_of(&generate_set(&spec).unwrap()).unwrap()
}

/// Credentials of another TPP organisation (`organisation`, with the id `organisation_id`
/// in its certificate) holding `roles` (`None`: the default PSP_AI and PSP_PI), generated
/// once per organisation id per test binary.
pub fn tpp_of(
    organisation: &str,
    organisation_id: &str,
    roles: Option<&[psd2_console::cert::Psd2Role]>,
) -> &'static Credentials {
    static ALL: OnceLock<Mutex<std::collections::HashMap<String, &'static Credentials>>> =
        OnceLock::new();
    let mut all = ALL.get_or_init(Default::default).lock().unwrap();
    all.entry(organisation_id.to_string()).or_insert_with(|| {
        let defaults = TppCertSpec::default();
        let spec = TppCertSpec {
            organisation: organisation.into(),
            organisation_id: organisation_id.into(),
            roles: roles.map_or_else(|| defaults.roles.clone(), <[_]>::to_vec),
            ..defaults
        };
        Box::leak(Box::new(
            credentials_of(&generate_set(&spec).unwrap()).unwrap(),
        ))
    })
}

/// The sandbox's identity of the TPP holding `credentials` (its world).
pub fn tpp_id(credentials: &Credentials) -> String {
    psd2_console::sandbox::http::auth::tpp_id(&credentials.certificate)
        .0
        .to_string()
}

pub const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// The `PSU-ID` [`TestSandbox::send`] gives a basket creation by default: a UUID no SCA
/// registered, so it binds nobody (the basket's SCA identifies the PSU).
pub const BASKET_PSU_ID: &str = "00000000-0000-4000-8000-00000000ba5e";

/// A reply: status, headers, text and JSON (Null when not JSON).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    /// The body as received (not decoded: the client sends no `Accept-Encoding` of its own).
    pub body: bytes::Bytes,
    pub text: String,
    pub json: Value,
}

impl Reply {
    pub async fn of(r: reqwest::Response) -> Reply {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let body = r.bytes().await.unwrap();
        let text = String::from_utf8_lossy(&body).into_owned();
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            body,
            text,
            json,
        }
    }

    /// The first tppMessages code, if any.
    pub fn code(&self) -> Option<&str> {
        self.json["tppMessages"][0]["code"].as_str()
    }

    /// The `resourceId` of the first entry of the list `list` (`accounts`, `cardAccounts`);
    /// panics when there is none.
    pub fn first_resource_id(&self, list: &str) -> String {
        self.json[list][0]["resourceId"]
            .as_str()
            .unwrap_or_else(|| panic!("no {list} in {}", self.text))
            .to_string()
    }

    /// The value of the response header `name`; panics when it is missing or not text.
    pub fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name} header on {} {}", self.status, self.text))
            .to_str()
            .unwrap()
            .to_string()
    }

    /// `_links.scaRedirect.href`, if any.
    pub fn sca_redirect(&self) -> Option<&str> {
        self.json["_links"]["scaRedirect"]["href"].as_str()
    }

    /// Asserts a Berlin Group error: HTTP `status` and `code` as the first `tppMessages`
    /// code (interface document, "Error codes"; Berlin Group `tppMessage2XX` schemas).
    /// Panics with the body when either differs.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) -> &Self {
        assert_eq!(
            (self.status, self.code()),
            (status, Some(code)),
            "expected {status} {code}, got {} {}",
            self.status,
            self.text
        );
        self
    }

    /// [`Reply::assert_error`] whose first `tppMessages` entry also names the field `path`
    /// (e.g. `transactionAmount`).
    #[track_caller]
    pub fn assert_error_at(&self, status: u16, code: &str, path: &str) -> &Self {
        self.assert_error(status, code);
        assert_eq!(
            self.json["tppMessages"][0]["path"].as_str(),
            Some(path),
            "{}",
            self.text
        );
        self
    }

    /// The reply of `method path`, which must have the HTTP `status`; panics naming the
    /// request, with the body, when it differs.
    pub fn expect_status(self, status: u16, method: &str, path: &str) -> Self {
        assert_eq!(self.status, status, "{method} {path}: {}", self.text);
        self
    }

    /// Asserts the HTTP `status`; panics with the body when it differs.
    #[track_caller]
    pub fn assert_status(&self, status: u16) -> &Self {
        assert_eq!(self.status, status, "{}", self.text);
        self
    }
}

/// The headers of a request signed with `credentials` at `now`, as [`TestSandbox::send`]
/// sends them: its default headers (unless `headers` gives them; an empty value leaves a
/// header out), then `headers`, then `Date`, `Digest` (with a body),
/// `TPP-Signature-Certificate` and `Signature`.
pub fn signed_headers(
    credentials: &Credentials,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
    now: SystemTime,
) -> Vec<(String, String)> {
    signed_header_list(
        credentials,
        method,
        path,
        headers,
        body.map(str::as_bytes),
        now,
    )
}

/// [`signed_headers`] with a body of any bytes (not only text).
pub fn signed_header_list(
    credentials: &Credentials,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    now: SystemTime,
) -> Vec<(String, String)> {
    let mut hs: Vec<(String, String)> = Vec::new();
    let given = |n: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    if !given("X-Request-ID") {
        hs.push(("X-Request-ID".into(), uuid::Uuid::new_v4().to_string()));
    }
    if !given("TPP-Redirect-URI") {
        hs.push(("TPP-Redirect-URI".into(), REDIRECT.into()));
    }
    if !given("PSU-IP-Address") {
        hs.push(("PSU-IP-Address".into(), "127.0.0.1".into()));
    }
    if method == "POST" && path == "/v1/signing-baskets" {
        for (n, v) in [
            ("x-accept-fix", "amount-as-string".to_string()),
            ("TPP-Session-ID", uuid::Uuid::new_v4().to_string()),
            ("PSU-ID", BASKET_PSU_ID.to_string()),
        ] {
            if !given(n) {
                hs.push((n.into(), v));
            }
        }
    }
    if body.is_some() && !given("Content-Type") {
        hs.push(("Content-Type".into(), "application/json".into()));
    }
    for (n, v) in headers {
        if !v.is_empty() {
            hs.push((n.to_string(), v.to_string()));
        }
    }
    sign_request(
        credentials,
        method,
        path,
        &mut hs,
        body.unwrap_or_default(),
        SignOptions {
            request_target: false,
            now,
        },
    );
    hs
}

thread_local! {
    /// Set by [`on_postgres`]: the cluster whose new databases replace the in-memory state
    /// of every [`TestSandbox`] started on this thread.
    static POSTGRES: std::cell::RefCell<Option<Arc<super::pg::PgCluster>>> =
        const { std::cell::RefCell::new(None) };
    /// How many PostgreSQL databases [`test_storage`] handed out on this thread.
    static POSTGRES_STATES: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Runs the SQLite test `test` (a `#[tokio::test]`, whose runtime polls it on this thread)
/// with every in-memory [`TestSandbox`] it starts kept in a new PostgreSQL database instead
/// (issue 21: the same tests on both back ends). Skipped, with the reason printed, where
/// PostgreSQL is absent (never in CI: [`super::pg::PgCluster::get`]).
pub fn on_postgres(test: fn()) {
    let Some(cluster) = super::pg::PgCluster::get() else {
        return;
    };
    let before = POSTGRES_STATES.get();
    POSTGRES.with(|p| *p.borrow_mut() = Some(cluster));
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            POSTGRES.with(|p| *p.borrow_mut() = None);
        }
    }
    let _reset = Reset;
    test();
    assert!(
        POSTGRES_STATES.get() > before,
        "the test started no sandbox on PostgreSQL (its state stayed in SQLite)"
    );
}

/// The storage of a test sandbox: a new PostgreSQL database under [`on_postgres`], else
/// `storage` as given.
pub fn test_storage(storage: Storage) -> Storage {
    match storage {
        Storage::InMemory => POSTGRES.with(|p| match &*p.borrow() {
            Some(cluster) => {
                POSTGRES_STATES.set(POSTGRES_STATES.get() + 1);
                Storage::Postgres(cluster.database())
            }
            None => Storage::InMemory,
        }),
        other => other,
    }
}

/// A running sandbox plus a client that signs.
pub struct TestSandbox {
    pub handle: Option<SandboxHandle>,
    pub base: String,
    pub clock: Clock,
    pub http: reqwest::Client,
    pub violations: Arc<Mutex<Vec<String>>>,
    pub seen: Arc<Mutex<usize>>,
}

impl TestSandbox {
    /// A signing client of a sandbox at `base` that the test did not start (a `sandbox
    /// serve` child), on the system clock.
    pub fn remote(base: &str) -> TestSandbox {
        TestSandbox {
            handle: None,
            base: base.to_string(),
            clock: Clock::system(),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            violations: Arc::new(Mutex::new(Vec::new())),
            seen: Arc::new(Mutex::new(0)),
        }
    }

    /// A sandbox in memory on the system clock.
    pub async fn start() -> Self {
        Self::start_with(SandboxConfig::default()).await
    }

    /// A sandbox with `config` (its observer is replaced by the schema check).
    pub async fn start_with(mut config: SandboxConfig) -> Self {
        config.storage = test_storage(std::mem::take(&mut config.storage));
        let violations = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::new(Mutex::new(0usize));
        let (v, s) = (violations.clone(), seen.clone());
        config.observer = Some(ResponseObserver(Arc::new(move |ex: &ObservedExchange| {
            *s.lock().unwrap() += 1;
            if let Err(e) = super::schema::check_exchange(ex) {
                v.lock().unwrap().push(format!(
                    "{} {}{} -> {}: {e}",
                    ex.method,
                    ex.path,
                    ex.query
                        .as_deref()
                        .map(|q| format!("?{q}"))
                        .unwrap_or_default(),
                    ex.status
                ));
            }
        })));
        let clock = config.clock.clone();
        let handle = sandbox::spawn(([127, 0, 0, 1], 0).into(), config)
            .await
            .unwrap();
        TestSandbox {
            base: handle.base_url.clone(),
            handle: Some(handle),
            clock,
            // No automatic Accept-Encoding: tests see the sandbox's answers byte for byte.
            http: reqwest::Client::builder()
                .no_gzip()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            violations,
            seen,
        }
    }

    /// Sends a request signed with [`tpp`] at the sandbox clock's now. Default headers
    /// (`X-Request-ID`, `TPP-Redirect-URI`, `PSU-IP-Address`, `Content-Type` with a body;
    /// for `POST /v1/signing-baskets` also the other headers its table requires:
    /// `x-accept-fix`, `TPP-Session-ID` and a `PSU-ID` no SCA registered, [`BASKET_PSU_ID`])
    /// are added unless `headers` gives them; a header given with an empty value is left out.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Reply {
        self.send_as(tpp(), method, path, headers, body).await
    }

    /// Like [`TestSandbox::send`] with other credentials.
    pub async fn send_as(
        &self,
        credentials: &Credentials,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Reply {
        let request = self.signed(credentials, method, path, headers, body);
        Reply::of(request.send().await.unwrap()).await
    }

    /// The request [`TestSandbox::send_as`] sends, not yet sent (for answers read as a
    /// stream, e.g. the event stream).
    pub fn signed(
        &self,
        credentials: &Credentials,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> reqwest::RequestBuilder {
        // Signed at the TPP's own sandbox clock (each TPP moves only its own).
        let at = self.clock.now_in(&tpp_id(credentials));
        let hs = signed_headers(credentials, method, path, headers, body, at);
        let mut rb = self
            .http
            .request(method.parse().unwrap(), format!("{}{}", self.base, path));
        for (n, v) in &hs {
            rb = rb.header(n, v);
        }
        if let Some(b) = body {
            rb = rb.body(b.as_bytes().to_vec());
        }
        rb
    }

    /// A signed `GET path` as the TPP holding `credentials`, with `headers` besides (or
    /// instead of) the defaults of [`TestSandbox::send`].
    pub async fn get_as(
        &self,
        credentials: &Credentials,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Reply {
        self.send_as(credentials, "GET", path, headers, None).await
    }

    /// Sends each of `requests` (`(method, path)`, no body) as the TPP holding `credentials`
    /// and asserts a 403 for each (another TPP's resources); returns the answers.
    pub async fn assert_forbidden_to(
        &self,
        credentials: &Credentials,
        requests: &[(&str, String)],
    ) -> Vec<Reply> {
        let mut out = Vec::new();
        for (method, path) in requests {
            let r = self.send_as(credentials, method, path, &[], None).await;
            assert_eq!(r.status, 403, "{method} {path}: {}", r.text);
            out.push(r);
        }
        out
    }

    /// A signing basket creation, `POST /v1/signing-baskets` with the text `body`, as the
    /// TPP holding `credentials` with `headers` besides the defaults of [`TestSandbox::send`]
    /// (interface document, "Signing baskets").
    pub async fn create_basket_as(
        &self,
        credentials: &Credentials,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Reply {
        self.send_as(
            credentials,
            "POST",
            "/v1/signing-baskets",
            headers,
            Some(body),
        )
        .await
    }

    /// [`TestSandbox::create_basket_as`] as the default TPP ([`tpp`]).
    pub async fn create_basket(&self, headers: &[(&str, &str)], body: &str) -> Reply {
        self.create_basket_as(tpp(), headers, body).await
    }

    /// Overrides the balances of the account `account` (`accounts/{id}` or
    /// `card-accounts/{id}`): `PUT /v1/sandbox/{account}/balances` with the booked and
    /// available NOK amounts, which must answer 200 (docs/sandbox.md, "Sandbox management
    /// and state"); returns the answer.
    pub async fn set_balances(&self, account: &str, booked: &str, available: &str) -> Reply {
        let nok = |amount: &str| serde_json::json!({"currency": "NOK", "amount": amount});
        let body = serde_json::json!({"booked": nok(booked), "available": nok(available)});
        let r = self
            .send_json("PUT", &format!("/v1/sandbox/{account}/balances"), &body)
            .await;
        r.assert_status(200);
        r
    }

    /// A signed `GET path` with the default headers of [`TestSandbox::send`].
    pub async fn get(&self, path: &str) -> Reply {
        self.send("GET", path, &[], None).await
    }

    /// A signed `GET path` with `headers` besides (or instead of) the defaults of
    /// [`TestSandbox::send`], e.g. `[("PSU-ID", psu)]`.
    pub async fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.send("GET", path, headers, None).await
    }

    /// A signed `POST path` with `body` as JSON and the default headers of
    /// [`TestSandbox::send`].
    pub async fn post_json(&self, path: &str, body: &Value) -> Reply {
        self.send("POST", path, &[], Some(&body.to_string())).await
    }

    /// A signed `method path` with `body` as JSON and the default headers of
    /// [`TestSandbox::send`].
    pub async fn send_json(&self, method: &str, path: &str, body: &Value) -> Reply {
        self.send(method, path, &[], Some(&body.to_string())).await
    }

    /// [`TestSandbox::get`], which must answer 200 (panics with the path and the body).
    pub async fn get_ok(&self, path: &str) -> Reply {
        self.get(path).await.expect_status(200, "GET", path)
    }

    /// [`TestSandbox::get_with`], which must answer 200 (panics with the path and the body).
    pub async fn get_with_ok(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.get_with(path, headers)
            .await
            .expect_status(200, "GET", path)
    }

    /// [`TestSandbox::post_json`], which must answer 200 (panics with the path and the body).
    pub async fn post_ok(&self, path: &str, body: &Value) -> Reply {
        self.post_json(path, body)
            .await
            .expect_status(200, "POST", path)
    }

    /// [`TestSandbox::post_json`], which must answer 201 (panics with the path and the body).
    pub async fn post_created(&self, path: &str, body: &Value) -> Reply {
        self.post_json(path, body)
            .await
            .expect_status(201, "POST", path)
    }

    /// A signed `DELETE path` with the default headers of [`TestSandbox::send`].
    pub async fn delete(&self, path: &str) -> Reply {
        self.send("DELETE", path, &[], None).await
    }

    /// The sandbox's customers: `GET /v1/sandbox/customers`, which must answer 200 with an
    /// array (docs/sandbox.md, "Sandbox management and state").
    pub async fn customers(&self) -> Vec<Value> {
        let r = self.get("/v1/sandbox/customers").await;
        r.assert_status(200);
        r.json.as_array().unwrap().clone()
    }

    /// A payment initiation: `POST /v1/payments/{product}` with `body` (interface document,
    /// "Payment initiation"; the product is one of the seed's, e.g.
    /// [`super::payments::DOMESTIC`]).
    pub async fn initiate(&self, product: &str, body: &Value) -> Reply {
        self.post_json(&format!("/v1/payments/{product}"), body)
            .await
    }

    /// [`TestSandbox::initiate`] with extra request headers (e.g. `TPP-Session-ID`).
    pub async fn initiate_with(
        &self,
        product: &str,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> Reply {
        let path = format!("/v1/payments/{product}");
        self.send("POST", &path, headers, Some(&body.to_string()))
            .await
    }

    /// [`TestSandbox::initiate`], which must answer 201; returns `(paymentId, scaRedirect)`
    /// (the redirect empty when there is none).
    pub async fn create_payment(&self, product: &str, body: &Value) -> (String, String) {
        let r = self.initiate(product, body).await;
        r.assert_status(201);
        (
            r.json["paymentId"].as_str().unwrap().to_string(),
            r.sca_redirect().unwrap_or_default().to_string(),
        )
    }

    /// An unsigned GET (SCA pages, or to test signature errors).
    pub async fn get_page(&self, url: &str) -> Reply {
        Reply::of(self.http.get(url).send().await.unwrap()).await
    }

    pub fn now(&self) -> SystemTime {
        self.clock.now()
    }

    /// Panics listing every response that did not validate.
    pub fn assert_schema_valid(&self) {
        let v = self.violations.lock().unwrap();
        assert!(
            v.is_empty(),
            "responses not valid per the Berlin Group schemas:\n{}",
            v.join("\n")
        );
    }

    /// Stops the server (checks the schema violations first).
    pub async fn stop(mut self) {
        self.assert_schema_valid();
        if let Some(h) = self.handle.take() {
            h.shutdown().await;
        }
    }
}

impl Drop for TestSandbox {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.assert_schema_valid();
        }
    }
}

/// The strings of the JSON array `v` (e.g. a customer's `accounts` ids); panics when `v` is
/// not an array of strings.
pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}
