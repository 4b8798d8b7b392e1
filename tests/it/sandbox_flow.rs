//! The embedded sandbox ASPSP over real HTTP on 127.0.0.1, no mocks: signed requests, the
//! 401 + scaRedirect, the HTML SCA (login, context, consent, cancel), the redirect back to
//! the TPP, then accounts, balances and paged transactions; signature failures; the sandbox
//! customer listing; garbage input.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use psd2_console::cert::Credentials;
use psd2_console::sandbox::{self, Clock, SandboxConfig, SandboxHandle};
use psd2_console::signing::{SignOptions, sign_request};
use psd2_console::xs2a::error::ErrorBody;
use psd2_console::xs2a::redirect::{PsuContext, ScaCallback};
use reqwest::StatusCode;
use scraper::{Html, Selector};
use serde_json::Value;

use crate::common::sandbox::{signed_header_list, strings, tpp, tpp_of};

// ---------------------------------------------------------------------------------------
// Fixtures

/// A TPP of another organisation.
fn other_credentials() -> &'static Credentials {
    tpp_of("Other Test TPP", "PSDNO-FSA-OTHER1", None)
}

const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// One browser for the whole test binary: every client shares one cookie jar (the SCA
/// pages bind each SCA to the browser that opened it).
fn browser() -> reqwest::Client {
    static JAR: OnceLock<Arc<reqwest::cookie::Jar>> = OnceLock::new();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .cookie_provider(JAR.get_or_init(Default::default).clone())
        .build()
        .unwrap()
}

/// The per-step form token of the last page of each SCA (`/sca/{id}` → token), as a
/// browser posts the form of the page it shows.
fn tokens() -> &'static Mutex<std::collections::HashMap<String, String>> {
    static T: OnceLock<Mutex<std::collections::HashMap<String, String>>> = OnceLock::new();
    T.get_or_init(Default::default)
}

/// `/sca/{id}` of an SCA page path.
fn sca_key(path: &str) -> Option<String> {
    let mut parts = path.trim_start_matches('/').split('/');
    match (parts.next(), parts.next()) {
        (Some(p @ ("sca" | "payment-sca")), Some(id)) => Some(format!("/{p}/{id}")),
        _ => None,
    }
}

/// A response: status, headers, raw text and JSON (Null when not JSON).
struct Reply {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    text: String,
    json: Value,
}

impl Reply {
    async fn of(r: reqwest::Response) -> Reply {
        let status = r.status();
        let headers = r.headers().clone();
        let key = sca_key(r.url().path());
        let text = r.text().await.unwrap();
        if let Some(key) = key
            && let Some(token) = forms_token(&text)
        {
            tokens().lock().unwrap().insert(key, token);
        }
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            text,
            json,
        }
    }

    fn error(&self) -> ErrorBody {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("not an ErrorBody ({e}): {} {}", self.status, self.text))
    }

    fn code(&self) -> String {
        self.error().first_code().unwrap_or("").to_string()
    }

    fn error_text(&self) -> String {
        self.error().tpp_messages[0]
            .text
            .clone()
            .unwrap_or_default()
    }

    fn location(&self) -> String {
        self.headers
            .get("location")
            .unwrap_or_else(|| panic!("no Location on {}: {}", self.status, self.text))
            .to_str()
            .unwrap()
            .to_string()
    }
}

/// A TPP talking to one sandbox.
struct Tpp {
    base: String,
    http: reqwest::Client,
    credentials: &'static Credentials,
    /// The `now` used for the Date header.
    now: Option<SystemTime>,
}

impl Tpp {
    fn new(base: &str) -> Tpp {
        Tpp {
            base: base.to_string(),
            http: browser(),
            credentials: tpp(),
            now: None,
        }
    }

    /// The path and query exactly as reqwest will send them.
    fn target(&self, path: &str) -> (url::Url, String) {
        let url = url::Url::parse(&format!("{}{}", self.base, path)).unwrap();
        let pq = match url.query() {
            Some(q) => format!("{}?{}", url.path(), q),
            None => url.path().to_string(),
        };
        (url, pq)
    }

    /// Signed headers for a request with `extra`, at this TPP's `now` (or the system clock):
    /// [`signed_header_list`] with the TPP's credentials.
    fn sign(
        &self,
        method: &str,
        pq: &str,
        extra: &[(&str, &str)],
        body: &[u8],
    ) -> Vec<(String, String)> {
        let now = self.now.unwrap_or_else(SystemTime::now);
        signed_header_list(
            self.credentials,
            method,
            pq,
            extra,
            (!body.is_empty()).then_some(body),
            now,
        )
    }

    async fn send_raw(
        &self,
        method: &str,
        url: url::Url,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Reply {
        let mut req = self
            .http
            .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), url);
        for (n, v) in headers {
            req = req.header(n.as_str(), v.as_str());
        }
        if !body.is_empty() {
            req = req.body(body.to_vec());
        }
        Reply::of(req.send().await.unwrap()).await
    }

    async fn request(
        &self,
        method: &str,
        path: &str,
        extra: &[(&str, &str)],
        body: &[u8],
    ) -> Reply {
        let (url, pq) = self.target(path);
        let headers = self.sign(method, &pq, extra, body);
        self.send_raw(method, url, &headers, body).await
    }

    async fn get(&self, path: &str, extra: &[(&str, &str)]) -> Reply {
        self.request("GET", path, extra, b"").await
    }

    /// [`Tpp::get`], which must answer 200 (panics with the path and the body).
    async fn get_ok(&self, path: &str, extra: &[(&str, &str)]) -> Reply {
        let r = self.get(path, extra).await;
        assert_eq!(r.status, 200, "GET {path}: {}", r.text);
        r
    }

    async fn customers(&self) -> Vec<Value> {
        let r = self.get_ok("/v1/sandbox/customers", &[]).await;
        r.json.as_array().unwrap().clone()
    }
}

async fn start(clock: Clock) -> SandboxHandle {
    sandbox::spawn(
        "127.0.0.1:0".parse().unwrap(),
        SandboxConfig {
            clock,
            // PostgreSQL under `pg_store`'s runs of these tests (issue 21).
            storage: crate::common::sandbox::test_storage(Default::default()),
            ..SandboxConfig::default()
        },
    )
    .await
    .unwrap()
}

// ---------------------------------------------------------------------------------------
// A minimal form-reading browser

#[derive(Debug, Clone)]
struct Input {
    kind: String,
    name: String,
    value: String,
    checked: bool,
}

#[derive(Debug, Clone)]
struct Form {
    id: String,
    action: String,
    inputs: Vec<Input>,
    /// (name, value, formaction)
    buttons: Vec<(String, String, Option<String>)>,
}

/// The `token` hidden input of the first form of `html`.
fn forms_token(html: &str) -> Option<String> {
    forms(html)
        .into_iter()
        .flat_map(|f| f.inputs)
        .find(|i| i.name == "token")
        .map(|i| i.value)
}

fn forms(html: &str) -> Vec<Form> {
    let doc = Html::parse_document(html);
    let form_sel = Selector::parse("form").unwrap();
    let input_sel = Selector::parse("input").unwrap();
    let button_sel = Selector::parse("button").unwrap();
    doc.select(&form_sel)
        .map(|f| {
            let attr = |n: &str| f.value().attr(n).unwrap_or("").to_string();
            assert_eq!(attr("method").to_ascii_lowercase(), "post");
            Form {
                id: attr("id"),
                action: attr("action"),
                inputs: f
                    .select(&input_sel)
                    .map(|i| Input {
                        kind: i.value().attr("type").unwrap_or("text").to_string(),
                        name: i.value().attr("name").unwrap_or("").to_string(),
                        value: i.value().attr("value").unwrap_or("").to_string(),
                        checked: i.value().attr("checked").is_some(),
                    })
                    .collect(),
                buttons: f
                    .select(&button_sel)
                    .map(|b| {
                        (
                            b.value().attr("name").unwrap_or("").to_string(),
                            b.value().attr("value").unwrap_or("").to_string(),
                            b.value().attr("formaction").map(str::to_string),
                        )
                    })
                    .collect(),
            }
        })
        .collect()
}

fn form<'a>(all: &'a [Form], id: &str) -> &'a Form {
    all.iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no form {id:?} in {all:?}"))
}

fn urlencode(pairs: &[(&str, &str)]) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}

async fn post_form(
    web: &reqwest::Client,
    base: &str,
    action: &str,
    pairs: &[(&str, &str)],
) -> Reply {
    let url = url::Url::parse(base).unwrap().join(action).unwrap();
    let mut pairs = pairs.to_vec();
    let token = sca_key(url.path()).and_then(|k| tokens().lock().unwrap().get(&k).cloned());
    if let Some(t) = &token
        && !pairs.iter().any(|(k, _)| *k == "token")
    {
        pairs.push(("token", t));
    }
    Reply::of(
        web.post(url)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(urlencode(&pairs))
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn get_page(web: &reqwest::Client, base: &str, href: &str) -> Reply {
    let url = url::Url::parse(base).unwrap().join(href).unwrap();
    Reply::of(web.get(url).send().await.unwrap()).await
}

/// Follows the sandbox's own 303s after a form post; returns the final page.
async fn settle(web: &reqwest::Client, base: &str, mut r: Reply) -> Reply {
    while r.status == StatusCode::SEE_OTHER {
        let to = r.location();
        assert!(to.starts_with("/sca/"), "{to}");
        r = get_page(web, base, &to).await;
    }
    r
}

/// The context to pick on the context page.
#[derive(Debug, Clone)]
enum Choice {
    Private,
    Corporate(String),
}

/// What an SCA run saw and produced.
struct ScaRun {
    /// Accounts offered on the consent page, in page order.
    offered: Vec<String>,
    /// Accounts pre-selected (checked) on the consent page.
    preselected: Vec<String>,
    /// The Location of the final redirect to the TPP.
    location: String,
}

/// Logs in with `number`, picks `choice` when asked, ticks `select(offered)`, approves.
async fn run_sca(
    base: &str,
    sca_url: &str,
    number: &str,
    choice: Choice,
    select: impl Fn(&[String]) -> Vec<String>,
) -> ScaRun {
    let web = browser();
    let page = get_page(&web, base, sca_url).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(
        !page.text.to_lowercase().contains("<script"),
        "no JavaScript"
    );
    let all = forms(&page.text);
    let login = form(&all, "login");
    assert!(login.inputs.iter().any(|i| i.name == "customerNumber"));
    let mut r = post_form(&web, base, &login.action, &[("customerNumber", number)]).await;
    r = settle(&web, base, r).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let mut all = forms(&r.text);
    if let Some(ctx) = all.iter().find(|f| f.id == "context").cloned() {
        let value = match &choice {
            Choice::Private => "PRIVATE".to_string(),
            Choice::Corporate(a) => format!("CORPORATE:{a}"),
        };
        assert!(
            ctx.inputs
                .iter()
                .any(|i| i.name == "context" && i.value == value),
            "{value} offered"
        );
        r = post_form(&web, base, &ctx.action, &[("context", &value)]).await;
        r = settle(&web, base, r).await;
        assert_eq!(r.status, 200, "{}", r.text);
        all = forms(&r.text);
    } else {
        assert!(matches!(choice, Choice::Private), "no context page");
    }
    let consent = form(&all, "consent");
    let boxes: Vec<&Input> = consent
        .inputs
        .iter()
        .filter(|i| i.kind == "checkbox" && i.name == "account")
        .collect();
    let offered: Vec<String> = boxes.iter().map(|i| i.value.clone()).collect();
    let preselected: Vec<String> = boxes
        .iter()
        .filter(|i| i.checked)
        .map(|i| i.value.clone())
        .collect();
    let approve = consent
        .buttons
        .iter()
        .find(|(_, v, _)| v == "approve")
        .expect("an Approve button");
    let chosen = select(&offered);
    let mut pairs: Vec<(&str, &str)> = chosen.iter().map(|a| ("account", a.as_str())).collect();
    pairs.push((approve.0.as_str(), approve.1.as_str()));
    let done = post_form(&web, base, &consent.action, &pairs).await;
    assert_eq!(done.status, StatusCode::FOUND, "{}", done.text);
    ScaRun {
        offered,
        preselected,
        location: done.location(),
    }
}

fn callback_of(location: &str) -> ScaCallback {
    let url = url::Url::parse(location).unwrap();
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    ScaCallback::from_query_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).unwrap()
}

fn success(location: &str) -> psd2_console::xs2a::redirect::ScaSuccess {
    match callback_of(location) {
        ScaCallback::Success(s) => s,
        other => panic!("not a success: {other:?}"),
    }
}

/// GET /v1/accounts without PSU-ID: the 401's scaRedirect.
async fn sca_link(tpp: &Tpp, session: &str) -> String {
    let r = tpp
        .get(
            "/v1/accounts",
            &[("TPP-Redirect-URI", REDIRECT), ("TPP-Session-ID", session)],
        )
        .await;
    assert_eq!(r.status, 401, "{}", r.text);
    assert_eq!(r.code(), "CONSENT_INVALID");
    let href = psd2_console::xs2a::links::sca_redirect_of(&r.json).expect("scaRedirect");
    assert!(href.starts_with(&format!("{}/sca/", tpp.base)), "{href}");
    href
}

fn private_without_agreements(customers: &[Value]) -> &Value {
    customers
        .iter()
        .find(|c| c["customerType"] == "PRIVATE" && c["agreements"].as_array().unwrap().is_empty())
        .expect("a private customer without agreements")
}

fn private_with_agreement(customers: &[Value]) -> &Value {
    customers
        .iter()
        .find(|c| c["customerType"] == "PRIVATE" && !c["agreements"].as_array().unwrap().is_empty())
        .expect("a private customer with an agreement")
}

fn account_ids(r: &Reply) -> Vec<String> {
    let ids = crate::common::field_strs(&r.json["accounts"], "resourceId");
    ids.into_iter().map(str::to_string).collect()
}

fn assert_amount(v: &Value, currency: &str) {
    assert_eq!(v["currency"], currency, "{v}");
    let s = v["amount"]
        .as_str()
        .unwrap_or_else(|| panic!("amount not a string: {v}"));
    psd2_console::xs2a::model::parse_minor(s).unwrap_or_else(|| panic!("amount {s:?}"));
}

// ---------------------------------------------------------------------------------------
// Tests

#[tokio::test]
pub(crate) async fn main_flow_sca_then_accounts_balances_transactions() {
    // A fixed sandbox day, so repeated reads compare equal even across midnight; requests
    // are signed with the real time, which stays within the 60 s allowed.
    let sandbox = start(Clock::fixed(SystemTime::now())).await;
    let tpp = Tpp::new(&sandbox.base_url);

    // The TPP's redirect endpoint: records the query of each hit.
    let hits: Arc<Mutex<Vec<String>>> = Arc::default();
    let recorder = hits.clone();
    let cb_app = axum::Router::new().route(
        "/cb",
        axum::routing::get(move |axum::extract::RawQuery(q): axum::extract::RawQuery| {
            let recorder = recorder.clone();
            async move {
                recorder.lock().unwrap().push(q.unwrap_or_default());
                "SCA done"
            }
        }),
    );
    let cb_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let cb_url = format!("http://{}/cb", cb_listener.local_addr().unwrap());
    let cb_task = tokio::spawn(async move { axum::serve(cb_listener, cb_app).await });

    let customers = tpp.customers().await;
    let ingrid = private_without_agreements(&customers);
    let number = ingrid["customerNumber"].as_str().unwrap();
    let own_accounts = strings(&ingrid["accounts"]);
    assert_eq!(own_accounts.len(), 2);

    // 1. No consent: 401 with an absolute scaRedirect; echoes X-Request-ID.
    let (url, pq) = tpp.target("/v1/accounts");
    let headers = tpp.sign(
        "GET",
        &pq,
        &[
            ("TPP-Redirect-URI", &cb_url),
            ("TPP-Session-ID", "session-main-1"),
        ],
        b"",
    );
    let first = tpp.send_raw("GET", url, &headers, b"").await;
    assert_eq!(first.status, 401, "{}", first.text);
    assert_eq!(first.code(), "CONSENT_INVALID");
    assert_eq!(
        first.headers["x-request-id"].to_str().unwrap(),
        headers[0].1,
        "X-Request-ID echoed"
    );
    let sca = psd2_console::xs2a::links::sca_redirect_of(&first.json).expect("scaRedirect");
    assert!(
        sca.starts_with(&format!("{}/sca/", sandbox.base_url)),
        "{sca}"
    );

    // 2. The login page lists the customer numbers as hints.
    let web = browser();
    let login_page = get_page(&web, &sandbox.base_url, &sca).await;
    assert_eq!(login_page.status, 200);
    assert!(login_page.text.contains(number));
    assert_eq!(
        login_page.headers["content-type"].to_str().unwrap(),
        "text/html; charset=utf-8"
    );

    // 3. SCA: log in, tick only the first account, approve.
    let run = run_sca(
        &sandbox.base_url,
        &sca,
        number,
        Choice::Private,
        |offered| offered[..1].to_vec(),
    )
    .await;
    let mut offered = run.offered.clone();
    offered.sort();
    let mut own_sorted = own_accounts.clone();
    own_sorted.sort();
    assert_eq!(
        offered, own_sorted,
        "the consent page offers the PSU's accounts"
    );
    assert!(run.preselected.is_empty(), "nothing consented before");
    assert!(run.location.starts_with(&cb_url), "{}", run.location);

    // 4. The browser lands on the TPP's redirect URI.
    let landing = get_page(&web, &cb_url, &run.location).await;
    assert_eq!(landing.status, 200);
    let query = hits
        .lock()
        .unwrap()
        .pop()
        .expect("the TPP endpoint was hit");
    let cb = ScaCallback::from_query_pairs(
        url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect::<Vec<_>>()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str())),
    )
    .unwrap();
    let ScaCallback::Success(ok) = cb else {
        panic!("{cb:?}")
    };
    uuid::Uuid::parse_str(&ok.psu_id).unwrap();
    assert_eq!(ok.tpp_session_id, "session-main-1");
    assert_eq!(ok.context, PsuContext::Private);
    assert_eq!(ok.psu_corporate_id, None);

    // The authorisation cannot be used twice.
    let reused = get_page(&web, &sandbox.base_url, &sca).await;
    assert_eq!(reused.status, 410);

    // 5. With the PSU-ID: exactly the consented account.
    let psu = [
        ("PSU-ID", ok.psu_id.as_str()),
        ("TPP-Redirect-URI", cb_url.as_str()),
    ];
    let accounts = tpp.get_ok("/v1/accounts", &psu).await;
    let ids = account_ids(&accounts);
    assert_eq!(ids, vec![run.offered[0].clone()]);
    assert!(
        !ids.contains(&run.offered[1]),
        "the unticked account is absent"
    );
    let acct = &accounts.json["accounts"][0];
    for key in [
        "resourceId",
        "bban",
        "currency",
        "name",
        "cashAccountType",
        "product",
        "ownerName",
    ] {
        assert!(acct[key].is_string(), "{key} in {acct}");
    }
    assert_eq!(acct["bban"].as_str().unwrap().len(), 11);
    assert_eq!(acct["ownerName"], ingrid["customerName"]);
    assert!(acct["name"].as_str().unwrap().chars().count() <= 70);
    let id = ids[0].clone();
    let currency = acct["currency"].as_str().unwrap().to_string();

    // The unticked account needs a new SCA.
    let other = tpp
        .get(&format!("/v1/accounts/{}/balances", run.offered[1]), &psu)
        .await;
    assert_eq!(other.status, 401, "{}", other.text);
    assert!(psd2_console::xs2a::links::sca_redirect_of(&other.json).is_some());

    // 6. Balances.
    let balances = tpp
        .get_ok(&format!("/v1/accounts/{id}/balances"), &psu)
        .await;
    assert_eq!(balances.json["account"]["bban"], acct["bban"]);
    assert_eq!(balances.json["account"]["currency"], currency.as_str());
    let list = balances.json["balances"].as_array().unwrap();
    let types: Vec<&str> = list
        .iter()
        .map(|b| b["balanceType"].as_str().unwrap())
        .collect();
    assert!(
        types.contains(&"closingBooked") && types.contains(&"expected"),
        "{types:?}"
    );
    for b in list {
        assert_amount(&b["balanceAmount"], &currency);
        chrono::NaiveDate::parse_from_str(b["referenceDate"].as_str().unwrap(), "%Y-%m-%d")
            .unwrap();
    }

    // 7. Transactions: a default page of 200 booked, a next link, pending present.
    let path = format!("/v1/accounts/{id}/transactions");
    let page1 = tpp.get_ok(&path, &psu).await;
    assert_eq!(page1.json["account"]["bban"], acct["bban"]);
    let report = &page1.json["transactions"];
    let booked = report["booked"].as_array().unwrap();
    assert_eq!(booked.len(), 200);
    let pending = report["pending"].as_array().unwrap();
    assert!(!pending.is_empty(), "pending transactions are returned");
    for t in booked.iter().chain(pending) {
        assert_amount(&t["transactionAmount"], &currency);
        assert!(t["valueDate"].is_string());
        assert!(t["remittanceInformationUnstructured"].is_string());
        assert!(
            t["creditorName"].is_string() || t["debtorName"].is_string(),
            "{t}"
        );
    }
    for t in booked {
        assert!(
            t["transactionId"].is_string() && t["bookingDate"].is_string(),
            "{t}"
        );
    }
    let oldest_today = booked.last().unwrap()["bookingDate"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(report["_links"]["account"]["href"].is_string());
    let next = report["_links"]["next"]["href"]
        .as_str()
        .expect("a next link")
        .to_string();
    assert!(report["_links"].get("previous").is_none());

    // The next page continues where the first ended; ids are stable between reads.
    let next_path = if next.starts_with("http") {
        url::Url::parse(&next).unwrap()[url::Position::BeforePath..].to_string()
    } else {
        next.clone()
    };
    let page2 = tpp.get_ok(&next_path, &psu).await;
    let booked2 = page2.json["transactions"]["booked"].as_array().unwrap();
    assert!(!booked2.is_empty());
    assert!(booked2[0]["bookingDate"].as_str().unwrap() <= oldest_today.as_str());
    let ids1: Vec<&str> = booked
        .iter()
        .map(|t| t["transactionId"].as_str().unwrap())
        .collect();
    assert!(
        booked2
            .iter()
            .all(|t| !ids1.contains(&t["transactionId"].as_str().unwrap()))
    );
    assert!(page2.json["transactions"]["_links"]["previous"].is_object());
    let again = tpp.get(&path, &psu).await;
    assert_eq!(
        again.json["transactions"]["booked"],
        page1.json["transactions"]["booked"]
    );

    cb_task.abort();
    sandbox.shutdown().await;
}

#[tokio::test]
async fn transactions_parameters_filter_and_fail_cleanly() {
    let sandbox = start(Clock::fixed(SystemTime::now())).await;
    let tpp = Tpp::new(&sandbox.base_url);
    let customers = tpp.customers().await;
    let c = private_without_agreements(&customers);
    let sca = sca_link(&tpp, "s-params").await;
    let run = run_sca(
        &sandbox.base_url,
        &sca,
        c["customerNumber"].as_str().unwrap(),
        Choice::Private,
        |o| o.to_vec(),
    )
    .await;
    let ok = success(&run.location);
    let psu = [
        ("PSU-ID", ok.psu_id.as_str()),
        ("TPP-Redirect-URI", REDIRECT),
    ];
    let id = &run.offered[0];
    let base = format!("/v1/accounts/{id}/transactions");

    let all = tpp
        .get_ok(&format!("{base}?bookingStatus=booked&limit=5000"), &psu)
        .await;
    let booked = all.json["transactions"]["booked"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        booked.len() > 200,
        "more than one default page: {}",
        booked.len()
    );
    assert!(all.json["transactions"].get("pending").is_none());
    let dates: Vec<&str> = booked
        .iter()
        .map(|t| t["bookingDate"].as_str().unwrap())
        .collect();
    let oldest = chrono::NaiveDate::parse_from_str(dates.last().unwrap(), "%Y-%m-%d").unwrap();
    let newest = chrono::NaiveDate::parse_from_str(dates[0], "%Y-%m-%d").unwrap();
    assert!((newest - oldest).num_days() > 365, "{oldest}..{newest}");

    // A date window filters booked ones only; pending are all returned.
    let (from, to) = (dates[dates.len() / 2], dates[dates.len() / 3]);
    let in_window = format!("{base}?bookingStatus=both&dateFrom={from}&dateTo={to}");
    let window = tpp.get_ok(&in_window, &psu).await;
    let w = window.json["transactions"]["booked"].as_array().unwrap();
    let expected = dates.iter().filter(|d| **d >= from && **d <= to).count();
    assert_eq!(w.len(), expected.min(200));
    assert!(w.iter().all(|t| {
        let d = t["bookingDate"].as_str().unwrap();
        d >= from && d <= to
    }));
    let pending = format!("{base}?bookingStatus=pending");
    let pending_all = tpp.get(&pending, &psu).await;
    assert_eq!(
        window.json["transactions"]["pending"],
        pending_all.json["transactions"]["pending"]
    );
    assert!(pending_all.json["transactions"].get("booked").is_none());

    // limit/offset paging.
    let third_page = format!("{base}?bookingStatus=booked&limit=7&offset=14");
    let p = tpp.get(&third_page, &psu).await;
    let page = p.json["transactions"]["booked"].as_array().unwrap();
    assert_eq!(page.as_slice(), &booked[14..21]);
    let links = &p.json["transactions"]["_links"];
    for l in ["first", "next", "previous", "last", "account"] {
        assert!(links[l]["href"].is_string(), "{l} in {links}");
    }

    for (query, code) in [
        ("dateFrom=2024-13-01", "FORMAT_ERROR"),
        ("dateFrom=yesterday", "FORMAT_ERROR"),
        ("dateFrom=2025-02-01&dateTo=2025-01-01", "PERIOD_INVALID"),
        ("bookingStatus=whatever", "FORMAT_ERROR"),
        ("bookingStatus=information", "PARAMETER_NOT_SUPPORTED"),
        ("limit=0", "FORMAT_ERROR"),
        ("limit=abc", "FORMAT_ERROR"),
        ("offset=-3", "FORMAT_ERROR"),
    ] {
        let r = tpp.get(&format!("{base}?{query}"), &psu).await;
        assert_eq!(r.status, 400, "{query}: {}", r.text);
        assert_eq!(r.code(), code, "{query}");
    }

    // An account that is not this PSU's.
    let stranger = uuid::Uuid::new_v4();
    let r = tpp
        .get(&format!("/v1/accounts/{stranger}/balances"), &psu)
        .await;
    assert_eq!(r.status, 403, "{}", r.text);
    assert_eq!(r.code(), "RESOURCE_UNKNOWN");
    let corp_account = strings(
        &customers
            .iter()
            .find(|c| c["customerType"] == "CORPORATE")
            .unwrap()["accounts"],
    )[0]
    .clone();
    let r = tpp
        .get(&format!("/v1/accounts/{corp_account}/transactions"), &psu)
        .await;
    assert_eq!(r.status, 403, "{}", r.text);

    // Unknown paths and methods.
    let r = tpp.get("/v1/nothing/here", &[]).await;
    assert_eq!(r.status, 404, "{}", r.text);
    assert_eq!(r.code(), "RESOURCE_UNKNOWN");
    let r = tpp.request("DELETE", "/v1/accounts", &psu, b"").await;
    assert_eq!(r.status, 405, "{}", r.text);
    assert_eq!(r.code(), "SERVICE_INVALID");

    // Invalid PSU-ID; missing TPP-Redirect-URI.
    let r = tpp.get("/v1/accounts", &[("PSU-ID", "not-a-uuid")]).await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "FORMAT_ERROR")
    );
    let r = tpp.get("/v1/accounts", &[("TPP-Redirect-URI", "")]).await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "FORMAT_ERROR")
    );
    assert!(r.error_text().contains("TPP-Redirect-URI"), "{}", r.text);
    // Without TPP-Session-ID one is generated and echoed in the redirect.
    let sca = sca_link(&tpp, "").await;
    let run = run_sca(
        &sandbox.base_url,
        &sca,
        c["customerNumber"].as_str().unwrap(),
        Choice::Private,
        |o| o.to_vec(),
    )
    .await;
    assert!(!success(&run.location).tpp_session_id.is_empty());
    sandbox.shutdown().await;
}

#[tokio::test]
pub(crate) async fn same_sca_twice_gives_the_same_psu_id_and_preselects_the_consent() {
    let sandbox = start(Clock::system()).await;
    let tpp = Tpp::new(&sandbox.base_url);
    let customers = tpp.customers().await;
    let c = private_without_agreements(&customers);
    let number = c["customerNumber"].as_str().unwrap();

    let first = run_sca(
        &sandbox.base_url,
        &sca_link(&tpp, "s1").await,
        number,
        Choice::Private,
        |o| o[1..].to_vec(),
    )
    .await;
    let a = success(&first.location);
    assert_eq!(a.tpp_session_id, "s1");

    let second = run_sca(
        &sandbox.base_url,
        &sca_link(&tpp, "s2").await,
        number,
        Choice::Private,
        |o| o.to_vec(),
    )
    .await;
    assert_eq!(
        second.preselected,
        first.offered[1..].to_vec(),
        "previous consent ticked"
    );
    let b = success(&second.location);
    assert_eq!(a.psu_id, b.psu_id, "psu-id is stable per TPP and customer");
    assert_eq!(b.tpp_session_id, "s2");
    let psu = [
        ("PSU-ID", b.psu_id.as_str()),
        ("TPP-Redirect-URI", REDIRECT),
    ];
    let r = tpp.get("/v1/accounts", &psu).await;
    assert_eq!(
        account_ids(&r),
        second.offered,
        "the new consent replaced the old"
    );

    // Another TPP gets another psu-id for the same customer, and no access with ours.
    let other = Tpp {
        credentials: other_credentials(),
        ..Tpp::new(&sandbox.base_url)
    };
    let third = run_sca(
        &sandbox.base_url,
        &sca_link(&other, "o1").await,
        number,
        Choice::Private,
        |o| o.to_vec(),
    )
    .await;
    assert!(third.preselected.is_empty(), "consents are per TPP");
    let c3 = success(&third.location);
    assert_ne!(c3.psu_id, a.psu_id);
    let r = other.get("/v1/accounts", &psu).await;
    assert_eq!(r.status, 401, "{}", r.text);
    sandbox.shutdown().await;
}

#[tokio::test]
pub(crate) async fn corporate_context_uses_the_agreement() {
    let sandbox = start(Clock::system()).await;
    let tpp = Tpp::new(&sandbox.base_url);
    let customers = tpp.customers().await;
    let holder = private_with_agreement(&customers);
    let agreement = &holder["agreements"][0];
    let agreement_id = agreement["id"].as_str().unwrap().to_string();
    let engagements = strings(&agreement["engagements"]);
    assert!(!engagements.is_empty());
    let number = holder["customerNumber"].as_str().unwrap();

    let run = run_sca(
        &sandbox.base_url,
        &sca_link(&tpp, "corp-1").await,
        number,
        Choice::Corporate(agreement_id.clone()),
        |o| o.to_vec(),
    )
    .await;
    let mut offered = run.offered.clone();
    offered.sort();
    let mut expected = engagements.clone();
    expected.sort();
    assert_eq!(offered, expected, "the agreement's accounts are offered");
    let ok = success(&run.location);
    assert_eq!(ok.context, PsuContext::Corporate);
    assert_eq!(ok.psu_corporate_id.as_deref(), Some(agreement_id.as_str()));
    assert_eq!(ok.tpp_session_id, "corp-1");

    let corp = [
        ("PSU-ID", ok.psu_id.as_str()),
        ("PSU-Corporate-ID", agreement_id.as_str()),
        ("TPP-Redirect-URI", REDIRECT),
    ];
    let r = tpp.get_ok("/v1/accounts", &corp).await;
    let mut ids = account_ids(&r);
    ids.sort();
    assert_eq!(ids, expected);
    let own = strings(&holder["accounts"]);
    assert!(ids.iter().all(|i| !own.contains(i)), "no private accounts");
    tpp.get_ok(&format!("/v1/accounts/{}/balances", ids[0]), &corp)
        .await;

    // Without PSU-Corporate-ID: 400.
    let r = tpp
        .get(
            "/v1/accounts",
            &[
                ("PSU-ID", ok.psu_id.as_str()),
                ("TPP-Redirect-URI", REDIRECT),
            ],
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.code(), "FORMAT_ERROR");
    assert!(r.error_text().contains("PSU-Corporate-ID"), "{}", r.text);
    // A PSU-Corporate-ID that is not this PSU's agreement.
    let r = tpp
        .get(
            "/v1/accounts",
            &[
                ("PSU-ID", ok.psu_id.as_str()),
                ("PSU-Corporate-ID", &uuid::Uuid::new_v4().to_string()),
                ("TPP-Redirect-URI", REDIRECT),
            ],
        )
        .await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (401, "CORPORATE_ID_INVALID")
    );

    // The same person in PRIVATE context gets the same psu-id and their own accounts.
    let private = run_sca(
        &sandbox.base_url,
        &sca_link(&tpp, "corp-2").await,
        number,
        Choice::Private,
        |o| o.to_vec(),
    )
    .await;
    let p = success(&private.location);
    assert_eq!(p.psu_id, ok.psu_id);
    assert_eq!(p.context, PsuContext::Private);
    let r = tpp
        .get_ok(
            "/v1/accounts",
            &[
                ("PSU-ID", p.psu_id.as_str()),
                ("TPP-Redirect-URI", REDIRECT),
            ],
        )
        .await;
    let mut mine = account_ids(&r);
    mine.sort();
    let mut own_sorted = own.clone();
    own_sorted.sort();
    assert_eq!(mine, own_sorted);
    sandbox.shutdown().await;
}

#[tokio::test]
async fn cancel_redirects_with_the_failure_parameters() {
    let sandbox = start(Clock::system()).await;
    let tpp = Tpp::new(&sandbox.base_url);
    let web = browser();
    let base = &sandbox.base_url;

    // Cancel on the login page.
    let sca = sca_link(&tpp, "cancel-1").await;
    let page = get_page(&web, base, &sca).await;
    let all = forms(&page.text);
    let login = form(&all, "login");
    let (name, value, action) = login
        .buttons
        .iter()
        .find(|(_, v, _)| v == "cancel")
        .cloned()
        .expect("a Cancel button");
    let action = action.expect("Cancel posts to its own formaction");
    let r = post_form(&web, base, &action, &[(name.as_str(), value.as_str())]).await;
    assert_eq!(r.status, StatusCode::FOUND, "{}", r.text);
    let location = r.location();
    assert!(location.starts_with(REDIRECT), "{location}");
    let ScaCallback::Failure(f) = callback_of(&location) else {
        panic!("{location}")
    };
    assert_eq!(f.system, "sandbox-sca");
    assert_eq!(f.status, 401);
    assert_eq!(f.code, "CONSENT_INVALID");
    assert_eq!(f.message, "PSU cancelled the SCA");
    assert_eq!(f.tpp_session_id.as_deref(), Some("cancel-1"));
    assert_eq!(get_page(&web, base, &sca).await.status, 410);
    assert_eq!(post_form(&web, base, &action, &[]).await.status, 410);

    // Cancel on the consent page.
    let customers = tpp.customers().await;
    let number = private_without_agreements(&customers)["customerNumber"]
        .as_str()
        .unwrap();
    let sca = sca_link(&tpp, "cancel-2").await;
    let page = get_page(&web, base, &sca).await;
    let all = forms(&page.text);
    let r = post_form(
        &web,
        base,
        &form(&all, "login").action,
        &[("customerNumber", number)],
    )
    .await;
    let r = settle(&web, base, r).await;
    let all = forms(&r.text);
    let consent = form(&all, "consent");
    let (_, _, action) = consent
        .buttons
        .iter()
        .find(|(_, v, _)| v == "cancel")
        .unwrap();
    let r = post_form(
        &web,
        base,
        action.as_deref().unwrap(),
        &[("action", "cancel")],
    )
    .await;
    assert_eq!(r.status, StatusCode::FOUND);
    let ScaCallback::Failure(f) = callback_of(&r.location()) else {
        panic!()
    };
    assert_eq!(f.tpp_session_id.as_deref(), Some("cancel-2"));

    // Unknown ids, an unknown number, garbage.
    let unknown = format!("{base}/sca/{}", uuid::Uuid::new_v4());
    assert_eq!(get_page(&web, base, &unknown).await.status, 404);
    assert_eq!(get_page(&web, base, "/sca/not-a-uuid").await.status, 404);
    let sca = sca_link(&tpp, "cancel-3").await;
    let page = get_page(&web, base, &sca).await;
    let login = form(&forms(&page.text), "login").clone();
    let r = post_form(
        &web,
        base,
        &login.action,
        &[("customerNumber", "<b>00000000000</b>")],
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(r.text.contains("&lt;b&gt;00000000000&lt;/b&gt;"), "escaped");
    assert!(!r.text.contains("<b>00000000000"));
    assert!(!forms(&r.text).is_empty(), "the login form again");
    sandbox.shutdown().await;
}

#[tokio::test]
async fn signature_failures_answer_berlin_group_errors() {
    let t0 = SystemTime::now();
    let clock = Clock::fixed(t0);
    let sandbox = start(clock.clone()).await;
    let mut tpp = Tpp::new(&sandbox.base_url);
    tpp.now = Some(t0);
    let path = "/v1/sandbox/customers";

    // Signed at the sandbox's time: accepted.
    tpp.get_ok(path, &[]).await;

    // Unsigned.
    let (url, _) = tpp.target(path);
    let r = tpp
        .send_raw(
            "GET",
            url.clone(),
            &[("X-Request-ID".into(), "x".into())],
            b"",
        )
        .await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "SIGNATURE_MISSING")
    );

    // A tampered body.
    let (purl, ppq) = tpp.target("/v1/accounts");
    let headers = tpp.sign("POST", &ppq, &[], br#"{"a":"1"}"#);
    let r = tpp
        .send_raw("POST", purl.clone(), &headers, br#"{"a":"2"}"#)
        .await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "FORMAT_ERROR")
    );
    assert!(r.error_text().contains("digest mismatch"), "{}", r.text);
    // A GET carrying the Digest of another body.
    let (_, pq) = tpp.target(path);
    let headers = tpp.sign("GET", &pq, &[], b"something");
    let r = tpp.send_raw("GET", url.clone(), &headers, b"").await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "FORMAT_ERROR")
    );
    assert!(r.error_text().contains("digest mismatch"), "{}", r.text);

    // Date 61 s off.
    let mut late = Tpp::new(&sandbox.base_url);
    late.now = Some(t0 - Duration::from_secs(61));
    let r = late.get(path, &[]).await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "TIMESTAMP_INVALID")
    );
    // 60 s is still fine; the sandbox clock moving on makes it stale.
    late.now = Some(t0 - Duration::from_secs(60));
    assert_eq!(late.get(path, &[]).await.status, 200);
    let (_, pq) = tpp.target(path);
    let fresh = tpp.sign("GET", &pq, &[], b"");
    clock.advance(Duration::from_secs(61));
    let r = tpp.send_raw("GET", url.clone(), &fresh, b"").await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "TIMESTAMP_INVALID")
    );
    tpp.now = Some(clock.now());

    // A signed header changed after signing.
    let (_, pq) = tpp.target(path);
    let mut headers = tpp.sign("GET", &pq, &[], b"");
    headers[0].1 = "changed-after-signing".into();
    let r = tpp.send_raw("GET", url.clone(), &headers, b"").await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "SIGNATURE_INVALID")
    );

    // Another certificate than the one that signed.
    let mut headers = tpp.sign("GET", &pq, &[], b"");
    for h in headers.iter_mut() {
        if h.0 == "TPP-Signature-Certificate" {
            h.1 = other_credentials().certificate.header_value();
        }
    }
    let r = tpp.send_raw("GET", url.clone(), &headers, b"").await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "PARAMETER_NOT_CONSISTENT")
    );

    // Garbage certificate and signature headers.
    let mut headers = tpp.sign("GET", &pq, &[], b"");
    for h in headers.iter_mut() {
        if h.0 == "TPP-Signature-Certificate" {
            h.1 = "bm90IGEgY2VydGlmaWNhdGU=".into();
        }
    }
    let r = tpp.send_raw("GET", url.clone(), &headers, b"").await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "CERTIFICATE_INVALID")
    );
    let mut headers = tpp.sign("GET", &pq, &[], b"");
    for h in headers.iter_mut() {
        if h.0 == "Signature" {
            h.1 = "keyId=\"nonsense\"".into();
        }
    }
    let r = tpp.send_raw("GET", url.clone(), &headers, b"").await;
    assert_eq!(r.status, 400, "{}", r.text);
    r.error();

    // Signed but without X-Request-ID.
    let mut headers: Vec<(String, String)> = Vec::new();
    sign_request(
        tpp.credentials,
        "GET",
        &pq,
        &mut headers,
        b"",
        SignOptions {
            request_target: false,
            now: clock.now(),
        },
    );
    let r = tpp.send_raw("GET", url, &headers, b"").await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "FORMAT_ERROR")
    );
    assert!(r.error_text().contains("X-Request-ID"));
    sandbox.shutdown().await;
}

#[tokio::test]
async fn sandbox_customers_have_exactly_the_documented_shape() {
    let sandbox = start(Clock::system()).await;
    let tpp = Tpp::new(&sandbox.base_url);
    let customers = tpp.customers().await;
    assert!(customers.len() >= 5);
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let mut expected = vec![
        "customerId",
        "customerNumber",
        "customerType",
        "customerName",
        "agreements",
        "accounts",
        "cardAccounts",
        "_links",
    ];
    expected.sort();
    let link_ok = |l: &Value| {
        assert!(l["href"].is_string(), "{l}");
        assert!(l["verbs"].as_array().is_some_and(|v| !v.is_empty()), "{l}");
        assert_eq!(keys(l), ["href", "verbs"]);
    };
    let mut numbers = Vec::new();
    for c in &customers {
        assert_eq!(keys(c), expected, "{c}");
        for k in ["customerId", "customerNumber", "customerName"] {
            assert!(c[k].is_string(), "{k}");
        }
        let number = c["customerNumber"].as_str().unwrap();
        assert!(number.bytes().all(|b| b.is_ascii_digit()), "{number}");
        numbers.push(number.to_string());
        let kind = c["customerType"].as_str().unwrap();
        assert!(kind == "PRIVATE" || kind == "CORPORATE");
        assert_eq!(keys(&c["_links"]), ["self"]);
        link_ok(&c["_links"]["self"]);
        assert_eq!(strings(&c["accounts"]).len(), 2, "two accounts each");
        let cards = strings(&c["cardAccounts"]).len();
        assert_eq!(
            cards,
            usize::from(kind == "PRIVATE"),
            "a card account per private customer"
        );
        if kind == "PRIVATE" {
            assert_eq!(number.len(), 11, "an 11-digit mock national id");
        }
        for a in c["agreements"].as_array().unwrap() {
            assert_eq!(keys(a), ["_links", "engagements", "id", "name"]);
            assert!(a["id"].is_string() && a["name"].is_string());
            strings(&a["engagements"]);
            assert_eq!(keys(&a["_links"]), ["engagements", "self"]);
            link_ok(&a["_links"]["self"]);
            link_ok(&a["_links"]["engagements"]);
        }
        // The self link works.
        let href = c["_links"]["self"]["href"].as_str().unwrap();
        let one = tpp.get_ok(href, &[]).await;
        assert_eq!(&one.json, c);
    }
    let n = numbers.len();
    numbers.sort();
    numbers.dedup();
    assert_eq!(numbers.len(), n, "customerNumbers are unique");
    assert_eq!(
        customers
            .iter()
            .filter(|c| c["customerType"] == "PRIVATE")
            .count(),
        3
    );
    assert_eq!(
        customers
            .iter()
            .filter(|c| c["customerType"] == "CORPORATE")
            .count(),
        2
    );
    private_with_agreement(&customers);

    // Same known state in every sandbox.
    let again = start(Clock::system()).await;
    assert_eq!(Tpp::new(&again.base_url).customers().await, customers);
    again.shutdown().await;

    for (query, accounts_empty, agreements_empty) in [
        ("withAccounts=false&withAgreements=true", true, false),
        ("withAccounts=true&withAgreements=false", false, true),
        ("withAccounts=false&withAgreements=false", true, true),
    ] {
        let r = tpp
            .get_ok(&format!("/v1/sandbox/customers?{query}"), &[])
            .await;
        let list = r.json.as_array().unwrap();
        assert_eq!(list.len(), customers.len());
        for c in list {
            assert_eq!(keys(c), expected, "fields always present");
            assert_eq!(c["accounts"].as_array().unwrap().is_empty(), accounts_empty);
            let cards = c["cardAccounts"].as_array().unwrap().len();
            let expected_cards = usize::from(!accounts_empty && c["customerType"] == "PRIVATE");
            assert_eq!(cards, expected_cards);
            if agreements_empty {
                assert!(c["agreements"].as_array().unwrap().is_empty());
            }
        }
        assert_eq!(
            list.iter()
                .any(|c| !c["agreements"].as_array().unwrap().is_empty()),
            !agreements_empty
        );
    }
    let r = tpp
        .get("/v1/sandbox/customers?withAccounts=maybe", &[])
        .await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (400, "FORMAT_ERROR")
    );
    let r = tpp.get("/v1/sandbox/customers/nobody", &[]).await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (404, "RESOURCE_UNKNOWN")
    );
    sandbox.shutdown().await;
}

/// xorshift64*: deterministic garbage.
struct Garbage(u64);

impl Garbage {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }

    fn junk(&mut self, max: u64) -> String {
        let n = self.next() % (max + 1);
        (0..n)
            .map(|_| {
                let b = (self.next() % 256) as u8;
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    fn bytes(&mut self, max: u64) -> Vec<u8> {
        let n = self.next() % (max + 1);
        (0..n).map(|_| (self.next() % 256) as u8).collect()
    }
}

#[tokio::test]
async fn garbage_never_gives_a_server_error() {
    let sandbox = start(Clock::system()).await;
    let tpp = Tpp::new(&sandbox.base_url);
    let web = browser();
    let base = sandbox.base_url.clone();
    let sca = sca_link(&tpp, "garbage").await;
    let sca_path = url::Url::parse(&sca).unwrap().path().to_string();
    let account = strings(&tpp.customers().await[0]["accounts"])[0].clone();
    let mut g = Garbage(0x9E37_79B9_7F4A_7C15);
    let templates = [
        "/v1/accounts",
        "/v1/accounts/{j}",
        "/v1/accounts/{j}/balances",
        "/v1/accounts/{a}/balances",
        "/v1/accounts/{a}/transactions",
        "/v1/accounts/{j}/transactions",
        "/v1/sandbox/customers",
        "/v1/sandbox/customers/{j}",
        "/v1/{j}",
        "/v1",
        "/v1/",
        "/{j}",
        "/",
        "/sca/{j}",
        "{s}",
        "{s}/login",
        "{s}/context",
        "{s}/consent",
        "{s}/cancel",
        "/sca/{j}/login",
    ];
    let params = [
        "bookingStatus",
        "dateFrom",
        "dateTo",
        "limit",
        "offset",
        "withAccounts",
        "withAgreements",
        "customerNumber",
        "{j}",
    ];
    let values = [
        "both",
        "booked",
        "pending",
        "all",
        "true",
        "false",
        "2025-01-01",
        "9999-99-99",
        "-1",
        "0",
        "18446744073709551616",
        "{j}",
    ];
    let psu_headers = [
        "PSU-ID",
        "PSU-Corporate-ID",
        "TPP-Redirect-URI",
        "TPP-Session-ID",
        "Content-Type",
    ];
    for round in 0..400 {
        let mut path = g
            .pick(&templates)
            .replace("{a}", &account)
            .replace("{s}", &sca_path);
        while path.contains("{j}") {
            let j = g.junk(24);
            path = path.replacen("{j}", &j, 1);
        }
        let n_params = g.next() % 4;
        for i in 0..n_params {
            path.push(if i == 0 { '?' } else { '&' });
            let k = g.pick(&params).replace("{j}", &g.junk(8));
            let v = g.pick(&values).replace("{j}", &g.junk(12));
            path.push_str(&format!("{k}={v}"));
        }
        let method = g.pick(&["GET", "GET", "POST", "PUT", "DELETE", "PATCH"]);
        let body = if g.next().is_multiple_of(2) {
            g.bytes(64)
        } else {
            Vec::new()
        };
        let extra_name = g.pick(&psu_headers);
        let extra_value = g.junk(16);
        let extra = [(extra_name, extra_value.as_str())];
        let r = if g.next().is_multiple_of(2) {
            tpp.request(method, &path, &extra, &body).await
        } else {
            let url = url::Url::parse(&base).unwrap().join(&path).unwrap();
            let mut req = web.request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), url);
            if !body.is_empty() {
                req = req.body(body.clone());
            }
            Reply::of(req.send().await.unwrap()).await
        };
        assert!(
            r.status.as_u16() < 500,
            "round {round}: {method} {path} gave {}: {}",
            r.status,
            r.text
        );
        if path.starts_with("/v1") && r.status.as_u16() >= 400 {
            r.error();
        }
    }
    sandbox.shutdown().await;
}

#[tokio::test]
pub(crate) async fn authorisations_and_consents_expire_with_the_sandbox_clock() {
    let clock = Clock::fixed(SystemTime::now());
    let sandbox = start(clock.clone()).await;
    let mut tpp = Tpp::new(&sandbox.base_url);
    tpp.now = Some(clock.now());
    let web = browser();
    let customers = tpp.customers().await;
    let number = private_without_agreements(&customers)["customerNumber"]
        .as_str()
        .unwrap()
        .to_string();

    // An SCA link unused for more than 30 minutes is gone.
    let stale = sca_link(&tpp, "exp-1").await;
    clock.advance(Duration::from_secs(31 * 60));
    tpp.now = Some(clock.now());
    assert_eq!(get_page(&web, &sandbox.base_url, &stale).await.status, 410);

    // A consent lasts 180 days; after that the account request needs SCA again.
    let sca = sca_link(&tpp, "exp-2").await;
    let run = run_sca(&sandbox.base_url, &sca, &number, Choice::Private, |o| {
        o.to_vec()
    })
    .await;
    let ok = success(&run.location);
    // PSU not present: the 180-day consent counts, not the 1-hour SCA session.
    let psu = [
        ("PSU-ID", ok.psu_id.as_str()),
        ("TPP-Redirect-URI", REDIRECT),
        ("PSU-IP-Address", ""),
    ];
    clock.advance(Duration::from_secs(179 * 24 * 3600));
    tpp.now = Some(clock.now());
    assert_eq!(tpp.get("/v1/accounts", &psu).await.status, 200);
    clock.advance(Duration::from_secs(2 * 24 * 3600));
    tpp.now = Some(clock.now());
    let r = tpp.get("/v1/accounts", &psu).await;
    assert_eq!(
        (r.status.as_u16(), r.code().as_str()),
        (401, "CONSENT_EXPIRED")
    );
    assert!(psd2_console::xs2a::links::sca_redirect_of(&r.json).is_some());
    sandbox.shutdown().await;
}
