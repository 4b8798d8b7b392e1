//! A tiny form-filling "browser" for the sandbox's server-rendered SCA pages: it reads the
//! forms with `scraper`, fills fields, and submits them over real HTTP without following
//! redirects, so tests see every 302.

#![allow(dead_code)]

use psd2_console::client::headless_sca;

/// One form of a page: the library's form reader's [`headless_sca::Form`] (method, absolute
/// action URL, fields, unchecked boxes, buttons: `sca complete` walks the same ones), with
/// chaining setters and a submit for tests.
#[derive(Debug, Clone)]
pub struct Form(pub headless_sca::Form);

impl std::ops::Deref for Form {
    type Target = headless_sca::Form;
    fn deref(&self) -> &headless_sca::Form {
        &self.0
    }
}

impl std::ops::DerefMut for Form {
    fn deref_mut(&mut self) -> &mut headless_sca::Form {
        &mut self.0
    }
}

/// Parses every form of `html`, resolving actions against `page_url`.
pub fn forms(html: &str, page_url: &str) -> Vec<Form> {
    let base = url::Url::parse(page_url).unwrap();
    headless_sca::forms(html, &base)
        .into_iter()
        .map(Form)
        .collect()
}

impl Form {
    /// Sets a text field (replacing its value, or adding it).
    pub fn set(&mut self, name: &str, value: &str) -> &mut Self {
        self.0.set(name, value);
        self
    }

    /// Checks the checkbox `name`=`value` (others of the same name stay as they are).
    pub fn check(&mut self, name: &str, value: &str) -> &mut Self {
        self.0.check(name, value);
        self
    }

    /// Chooses the radio `name`=`value`: the group's other values are unchecked.
    pub fn choose(&mut self, name: &str, value: &str) -> &mut Self {
        self.0.choose(name, value);
        self
    }

    /// Unchecks the checkbox `name`=`value`.
    pub fn uncheck(&mut self, name: &str, value: &str) -> &mut Self {
        self.0.uncheck(name, value);
        self
    }

    /// The value of the (first) field `name`, e.g. the page's `token`; panics when the form
    /// has no such field.
    pub fn value(&self, name: &str) -> &str {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no field {name:?} in {:?}", self.fields))
    }

    /// Submits with the button whose label or value contains `button` (case-insensitive).
    pub async fn submit(&self, client: &reqwest::Client, button: &str) -> reqwest::Response {
        let mut fields = self.fields.clone();
        let wanted = button.to_lowercase();
        let b = self
            .buttons
            .iter()
            .find(|b| {
                b.label.to_lowercase().contains(&wanted) || b.value.to_lowercase().contains(&wanted)
            })
            .unwrap_or_else(|| panic!("no button {button:?} in {:?}", self.buttons));
        if !b.name.is_empty() {
            fields.push((b.name.clone(), b.value.clone()));
        }
        let request = if self.method == "POST" {
            client.post(&self.action).form(&fields)
        } else {
            client.get(&self.action).query(&fields)
        };
        request.send().await.unwrap()
    }
}

/// A reqwest client that does not follow redirects and keeps cookies, like one browser:
/// every client of a test binary shares one cookie jar (the SCA pages bind each SCA to the
/// browser that opened it with a cookie). A client without cookies is another browser.
pub fn browser() -> reqwest::Client {
    static JAR: std::sync::OnceLock<std::sync::Arc<reqwest::cookie::Jar>> =
        std::sync::OnceLock::new();
    let jar = JAR.get_or_init(Default::default).clone();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .cookie_provider(jar)
        .build()
        .unwrap()
}

/// The `Location` of a redirect response, resolved against `base`.
pub fn location(resp: &reqwest::Response) -> String {
    let loc = resp
        .headers()
        .get("location")
        .unwrap_or_else(|| panic!("no Location on {}", resp.status()))
        .to_str()
        .unwrap();
    resp.url().join(loc).unwrap().to_string()
}

/// `headers` ((name, value) pairs, in order; repeated names kept) as an `http::HeaderMap`,
/// for the signature verifier's request views.
pub fn header_map(headers: &[(String, String)]) -> http::HeaderMap {
    let mut m = http::HeaderMap::new();
    for (n, v) in headers {
        m.append(
            http::HeaderName::from_bytes(n.as_bytes()).unwrap(),
            http::HeaderValue::from_bytes(v.as_bytes()).unwrap(),
        );
    }
    m
}

/// The body of `GET url` in the shared [`browser`] (an SCA page, read as text).
pub async fn page_text(url: &str) -> String {
    browser()
        .get(url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

pub mod cli;
pub mod console;
pub mod payments;
pub mod pg;
pub mod programs;
pub mod qr;
pub mod sandbox;
pub mod sca;
pub mod schema;
pub mod sse;
pub mod tmux;
pub mod tui;
pub mod vectors;

/// The value of the first header named `name` (exact case) among `headers` (a request's
/// `(name, value)` pairs as recorded in the history); panics when there is none.
pub fn header_value<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} header in {headers:?}"))
}

/// `profile` with any free ports for the embedded sandbox and the callback listener
/// (`sandbox_port = 0`, `callback_port = 0`), so in-process engines of parallel tests do not
/// collide on the fixed defaults.
pub fn any_ports(profile: psd2_console::profile::Profile) -> psd2_console::profile::Profile {
    psd2_console::profile::Profile {
        sandbox_port: Some(0),
        callback_port: Some(0),
        ..profile
    }
}

/// A new home (a temporary directory, removed when the returned `TempDir` is dropped), its
/// [`Paths`](psd2_console::profile::Paths), and an engine started on it with the built-in
/// default profile on any free ports ([`any_ports`]).
pub async fn default_engine() -> (
    tempfile::TempDir,
    psd2_console::profile::Paths,
    psd2_console::client::engine::Engine,
) {
    use psd2_console::profile::{DEFAULT_PROFILE, ProfileSet};
    let (home, paths) = temp_home();
    let profile = ProfileSet::load(None).get(DEFAULT_PROFILE).unwrap().clone();
    let engine = psd2_console::embedded::start_engine(any_ports(profile), paths.clone())
        .await
        .unwrap();
    (home, paths, engine)
}

/// Waits until `done()` holds, checking it every 50 ms; panics naming `what` when it still
/// does not after a minute (a bound for a hung test, not a speed requirement).
pub async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "still waiting for {what} after a minute"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The customer numbered `number` in `customers` (the JSON array `GET /v1/sandbox/customers`
/// answers); panics when it is not there.
pub fn customer<'a>(customers: &'a serde_json::Value, number: &str) -> &'a serde_json::Value {
    customers
        .as_array()
        .unwrap_or_else(|| panic!("not a customer list: {customers}"))
        .iter()
        .find(|c| c["customerNumber"] == number)
        .unwrap_or_else(|| panic!("no customer {number} in the seed"))
}

/// The id of the first corporate agreement of customer `number` in `customers` (listed
/// with `withAgreements=true`); panics when it has none.
pub fn first_agreement(customers: &serde_json::Value, number: &str) -> String {
    customer(customers, number)["agreements"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("customer {number} has no corporate agreement"))
        .to_string()
}

/// The number of the first private customer in `customers` (the JSON array
/// `GET /v1/sandbox/customers` answers); panics when there is none.
pub fn private_customer_number(customers: &serde_json::Value) -> String {
    customers
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["customerType"] == "PRIVATE")
        .and_then(|c| c["customerNumber"].as_str())
        .expect("a private sandbox customer")
        .to_string()
}

/// Asserts that `text` contains every one of `parts`; panics with the first missing part
/// and the whole text.
#[track_caller]
pub fn assert_contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in: {text}");
    }
}

/// Reads an HTTP request's head (up to and including the blank line) from `stream`; stops
/// early at the end of the stream, an error, or when the head grows over `limit` bytes.
pub async fn read_request_head(
    stream: &mut (impl tokio::io::AsyncRead + Unpin),
    limit: usize,
) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() <= limit {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    buf
}

/// A new home (a temporary directory, removed when the returned `TempDir` is dropped) and
/// its [`Paths`](psd2_console::profile::Paths).
pub fn temp_home() -> (tempfile::TempDir, psd2_console::profile::Paths) {
    let home = tempfile::tempdir().unwrap();
    let paths = psd2_console::profile::Paths::under(home.path().to_path_buf());
    (home, paths)
}

/// The balance of `balance_type` (e.g. `interimAvailable`) in the `balances` list of the
/// JSON answer `answer` (a balances read or a balance update); panics when there is none.
pub fn balance_of<'a>(answer: &'a serde_json::Value, balance_type: &str) -> &'a serde_json::Value {
    find_by(&answer["balances"], "balanceType", balance_type)
}

/// The first element of the JSON array `list` whose field `key` is the string `value`;
/// panics when there is none (or `list` is not an array).
pub fn find_by<'a>(list: &'a serde_json::Value, key: &str, value: &str) -> &'a serde_json::Value {
    let items = list.as_array().map(Vec::as_slice).unwrap_or_default();
    let found = items.iter().find(|x| x[key] == value);
    found.unwrap_or_else(|| panic!("no {key} {value:?} in {list}"))
}

/// The string field `key` of every element of the JSON array `list` (e.g. the `resourceId`s
/// of an `accounts` list); panics when `list` is not an array or an element has no such
/// string.
pub fn field_strs<'a>(list: &'a serde_json::Value, key: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|x| x[key].as_str().unwrap_or_else(|| panic!("no {key} in {x}")))
        .collect()
}
