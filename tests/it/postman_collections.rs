//! The bank's own Postman collections (`dnb-psd2-v1` and `dnb-psd2-v2`, Postman collection
//! schema v2.0.0, in `shared/spec/` or the copy in `tests/spec/`) replayed against the
//! sandbox: EVERY request is sent as the collection gives it, and each must get a
//! meaningful answer.
//!
//! How a request is sent:
//! - method and URL as given; `https://{{host}}` becomes the sandbox (`http://127.0.0.1:PORT`,
//!   the in-process router of `psd2-console sandbox serve`); surrounding whitespace of the URL
//!   and of header values is trimmed (HTTP parsers drop it too);
//! - headers as given (disabled ones left out), minus `Signature`, `Digest`, `Date` and
//!   `TPP-Signature-Certificate`, which come from signing with the test TPP; no default
//!   header is added (a request without `TPP-Redirect-URI` goes without it);
//! - the raw body as given, byte for byte after variable substitution (its amounts are JSON
//!   numbers, which the sandbox may reject with 400 `FORMAT_ERROR`);
//! - `{{variables}}` come from the run: `{{$guid}}` a new UUID; `{{ssn}}` the PSU-ID that
//!   the sandbox SCA returned (the interface document makes the PSU-ID a UUID obtained from
//!   the redirect, not a national id number); `{{psu_ip_address}}` 127.0.0.1;
//!   `{{tpp_redirect_uri}}` a loopback URL; `{{user_agent}}` a fixed string; `{{today}}` and
//!   `{{validUntil}}` (today + 60 days) from the sandbox clock, as the collections'
//!   pre-request scripts compute them; everything else (`firstAccount`, `firstCard`,
//!   `paymentId`, `basketId`, `consentId`, ...) from the collections' own test scripts
//!   (`pm.globals.set("x", jsonData.a[0].b)`), run on every response. A setup phase first
//!   does the SCA through the HTML forms and the requests that give those values with a
//!   valid PSU-ID (account list, card-account list, a payment, a basket, a consent), running
//!   the matching collection script on each answer. A variable still without a value (e.g.
//!   `{{confirmationLink}}`: the sandbox uses the redirect approach, no `confirmation` link)
//!   is sent literally, as Postman does, and then any 4xx answer will do.
//!
//! What counts as meaningful: a 2xx, or a 4xx whose body has a non-empty `tppMessages`
//! array (and, for `/v1`, every body is checked against the Berlin Group schemas by the
//! `TestSandbox` observer). Never a 5xx or 3xx, and never a 404 for a path the interface
//! document names when its ids are live resources of this run: `/v1/accounts[/{id}[/balances|
//! /transactions]]`, `/v1/card-accounts[...]`, `/v1/consents[/{id}[/status]]`,
//! `/v1/signing-baskets[/{id}[/status|/authorisations]]`, and
//! `/v1/{payments|periodic-payments|bulk-payments}/{product}[/{id}[/status]]` for the
//! products the document names. A trailing slash names the same path (`POST /v1/consents/`
//! of the v1 collection is `POST /v1/consents`, as at a real ASPSP).
//!
//! `/v2/...` (the v2 collection): the interface document says paths are prefixed `/v1/`,
//! so the sandbox does not serve `/v2`; the requests are sent as they are (not mapped to
//! `/v1`, which would pretend to implement an interface version the document does not
//! describe), and a 404 with a `tppMessages` body is the meaningful answer.
//!
//! A table `collection | name | method path | status | code` of every request is printed
//! (`cargo test --test postman_collections -- --nocapture`) and is part of a failure message.

use crate::common;

use std::collections::{HashMap, HashSet};

use common::sandbox::{REDIRECT, Reply, TestSandbox};
use common::schema::spec_path;
use serde_json::{Value, json};

/// Payment products the interface document names ("Other payment facts").
const NAMED_PRODUCTS: &[&str] = &[
    "norwegian-domestic-credit-transfers",
    "instant-norwegian-credit-transfers-straks",
    "domestic-norway-credit-transfers",
];

const PAYMENT_SERVICES: &[&str] = &["payments", "periodic-payments", "bulk-payments"];

/// Headers that signing sets.
const SIGNING_HEADERS: &[&str] = &["signature", "digest", "date", "tpp-signature-certificate"];

/// One request of a collection.
#[derive(Debug, Clone)]
struct PmRequest {
    name: String,
    method: String,
    /// The raw URL, trimmed.
    url: String,
    headers: Vec<(String, String)>,
    body: Option<String>,
    /// `pm.*.set("var", jsonData.path)` of its test script: (var, path after `jsonData`).
    sets: Vec<(String, String)>,
}

/// The collection's requests, read by the product's own importer
/// (`psd2_console::client::import`), each with the `pm.*.set` lines of its test script.
fn load_collection(file: &str) -> Vec<PmRequest> {
    let path = spec_path(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let imported = psd2_console::client::import::import(&text, file).expect("a Postman collection");
    let doc: Value = serde_json::from_str(&text).expect("a Postman collection");
    let mut scripts = Vec::new();
    script_sets(&doc["item"], &mut scripts);
    assert_eq!(imported.len(), scripts.len(), "one script list per request");
    assert!(!imported.is_empty(), "{file} has no requests");
    imported
        .into_iter()
        .zip(scripts)
        .map(|(r, sets)| PmRequest {
            name: r.name,
            method: r.method,
            url: r.url,
            headers: r.headers,
            body: r.body,
            sets,
        })
        .collect()
}

/// The `pm.*.set(...)` lines of each request's test script, in request order.
fn script_sets(items: &Value, out: &mut Vec<Vec<(String, String)>>) {
    for it in items.as_array().into_iter().flatten() {
        if it.get("item").is_some() {
            script_sets(&it["item"], out);
            continue;
        }
        let mut sets = Vec::new();
        for e in it["event"].as_array().into_iter().flatten() {
            if e["listen"] != "test" {
                continue;
            }
            for line in e["script"]["exec"].as_array().into_iter().flatten() {
                if let Some(s) = line.as_str().and_then(script_set) {
                    sets.push(s);
                }
            }
        }
        out.push(sets);
    }
}

/// `pm.globals.set("firstAccount", jsonData.accounts[0].bban);` → (firstAccount,
/// `.accounts[0].bban`).
fn script_set(line: &str) -> Option<(String, String)> {
    let i = line.find(".set(\"")?;
    let rest = &line[i + 6..];
    let (var, rest) = rest.split_once('"')?;
    let expr = rest.trim_start_matches(',').trim();
    let expr = expr.strip_prefix("jsonData")?;
    let expr = expr.trim_end_matches(';').trim_end_matches(')').trim();
    Some((var.to_string(), expr.to_string()))
}

/// Evaluates `.a[0].b` on `v`; a string or number value.
fn eval(v: &Value, path: &str) -> Option<String> {
    let mut cur = v;
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            cur = cur.get(&r[..end])?;
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let (n, r) = r.split_once(']')?;
            cur = cur.get(n.trim().parse::<usize>().ok()?)?;
            rest = r;
        } else {
            return None;
        }
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Resources of this run that exist, by path.
#[derive(Default)]
struct Live {
    accounts: HashSet<String>,
    cards: HashSet<String>,
    consents: HashSet<String>,
    baskets: HashSet<String>,
    /// `service/product/id`.
    payments: HashSet<String>,
}

/// Path segments after `/v1/` (query and one trailing slash removed); None for other paths.
fn v1_segments(path: &str) -> Option<Vec<String>> {
    let p = path.split('?').next().unwrap_or(path);
    let p = p.strip_prefix("/v1/")?;
    let p = p.strip_suffix('/').unwrap_or(p);
    Some(p.split('/').map(str::to_string).collect())
}

impl Live {
    /// Whether `method path` is a path the interface document names, with live ids: such a
    /// request must not be answered 404.
    fn must_exist(&self, method: &str, path: &str) -> bool {
        let Some(segs) = v1_segments(path) else {
            return false;
        };
        let s: Vec<&str> = segs.iter().map(String::as_str).collect();
        match s.as_slice() {
            ["accounts"] | ["card-accounts"] => method == "GET",
            ["accounts", id] | ["accounts", id, "balances" | "transactions"] => {
                method == "GET" && self.accounts.contains(*id)
            }
            ["card-accounts", id] | ["card-accounts", id, "balances" | "transactions"] => {
                method == "GET" && self.cards.contains(*id)
            }
            ["consents"] | ["signing-baskets"] => method == "POST",
            ["consents", id] | ["consents", id, "status"] => self.consents.contains(*id),
            ["signing-baskets", id] | ["signing-baskets", id, "status" | "authorisations"] => {
                self.baskets.contains(*id)
            }
            [svc, prod] => {
                method == "POST" && PAYMENT_SERVICES.contains(svc) && NAMED_PRODUCTS.contains(prod)
            }
            [svc, prod, id] | [svc, prod, id, "status"] => {
                NAMED_PRODUCTS.contains(prod)
                    && self.payments.contains(&format!("{svc}/{prod}/{id}"))
            }
            _ => false,
        }
    }

    /// Records what `method path` answered with `r` created or removed.
    fn update(&mut self, method: &str, path: &str, r: &Reply) {
        let Some(segs) = v1_segments(path) else {
            return;
        };
        let s: Vec<&str> = segs.iter().map(String::as_str).collect();
        let ok = (200..300).contains(&r.status);
        let ids = |list: &str| -> Vec<String> {
            r.json[list]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a["resourceId"].as_str().map(str::to_string))
                .collect()
        };
        match (method, s.as_slice()) {
            ("GET", ["accounts"]) if ok => self.accounts.extend(ids("accounts")),
            ("GET", ["card-accounts"]) if ok => self.cards.extend(ids("cardAccounts")),
            ("POST", ["consents"]) if ok => {
                self.consents
                    .extend(r.json["consentId"].as_str().map(str::to_string));
            }
            ("POST", ["signing-baskets"]) if ok => {
                self.baskets
                    .extend(r.json["basketId"].as_str().map(str::to_string));
            }
            ("DELETE", ["signing-baskets", id]) if ok => {
                self.baskets.remove(*id);
            }
            ("POST", [svc, prod]) if ok && PAYMENT_SERVICES.contains(svc) => {
                if let Some(id) = r.json["paymentId"].as_str() {
                    self.payments.insert(format!("{svc}/{prod}/{id}"));
                }
            }
            _ => {}
        }
    }
}

/// One line of the table.
struct Row {
    collection: String,
    name: String,
    method: String,
    path: String,
    status: u16,
    code: String,
    verdict: Result<(), String>,
}

struct Replay<'a> {
    collection: &'a str,
    sb: &'a TestSandbox,
    requests: Vec<PmRequest>,
    vars: HashMap<String, String>,
    live: Live,
    rows: Vec<Row>,
}

impl Replay<'_> {
    /// `s` with `{{var}}` replaced; names without a value are kept literally and returned.
    fn substitute(&self, s: &str) -> (String, Vec<String>) {
        let mut out = String::new();
        let mut missing = Vec::new();
        let mut rest = s;
        while let Some(i) = rest.find("{{") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let Some(j) = after.find("}}") else {
                out.push_str(&rest[i..]);
                rest = "";
                break;
            };
            let name = &after[..j];
            if name == "$guid" {
                out.push_str(&uuid::Uuid::new_v4().to_string());
            } else if let Some(v) = self.vars.get(name) {
                out.push_str(v);
            } else {
                out.push_str(&rest[i..i + 2 + j + 2]);
                missing.push(name.to_string());
            }
            rest = &after[j + 2..];
        }
        out.push_str(rest);
        (out, missing)
    }

    /// Runs the test script of the collection request `method` `template` (a URL suffix
    /// such as `/accounts`) on `r`.
    fn run_script_of(&mut self, method: &str, suffix: &str, r: &Reply) {
        let sets: Vec<(String, String)> = self
            .requests
            .iter()
            .filter(|q| q.method == method && q.url.trim_end_matches('/').ends_with(suffix))
            .flat_map(|q| q.sets.clone())
            .collect();
        self.apply(&sets, r);
    }

    fn apply(&mut self, sets: &[(String, String)], r: &Reply) {
        for (var, path) in sets {
            if let Some(v) = eval(&r.json, path) {
                self.vars.insert(var.clone(), v);
            }
        }
    }

    fn record(
        &mut self,
        name: &str,
        method: &str,
        path: &str,
        r: &Reply,
        verdict: Result<(), String>,
    ) {
        self.rows.push(Row {
            collection: self.collection.to_string(),
            name: name.to_string(),
            method: method.to_string(),
            path: path.to_string(),
            status: r.status,
            code: r.code().unwrap_or("").to_string(),
            verdict,
        });
    }

    /// A setup request (signed, with the TestSandbox's default headers and `h`).
    async fn setup(
        &mut self,
        what: &str,
        method: &str,
        path: &str,
        h: &[(&str, &str)],
        body: Option<&str>,
    ) -> Reply {
        let r = self.sb.send(method, path, h, body).await;
        let must_exist = self.live.must_exist(method, path);
        let verdict = judge(path, r.status, &r.json, must_exist, &[]);
        self.live.update(method, path, &r);
        self.record(&format!("(setup) {what}"), method, path, &r, verdict);
        r
    }

    /// Sends collection request `i` as it is.
    async fn send(&mut self, i: usize) {
        let q = self.requests[i].clone();
        let Some(at) = q.url.find("{{host}}") else {
            self.rows.push(Row {
                collection: self.collection.to_string(),
                name: q.name.clone(),
                method: q.method.clone(),
                path: q.url.clone(),
                status: 0,
                code: String::new(),
                verdict: Err("URL without {{host}}".into()),
            });
            return;
        };
        let (mut path, mut missing) = self.substitute(&q.url[at + "{{host}}".len()..]);
        if !path.starts_with('/') {
            path.insert(0, '/');
        }
        let mut headers: Vec<(String, String)> = Vec::new();
        for (n, v) in &q.headers {
            if SIGNING_HEADERS.contains(&n.to_ascii_lowercase().as_str()) {
                continue;
            }
            let (v, m) = self.substitute(v);
            missing.extend(m);
            headers.push((n.clone(), v));
        }
        // No defaults: a header the collection does not send is not sent.
        for d in ["X-Request-ID", "TPP-Redirect-URI", "PSU-IP-Address"] {
            if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(d)) {
                headers.push((d.to_string(), String::new()));
            }
        }
        let body = q.body.as_ref().map(|b| {
            let (b, m) = self.substitute(b);
            missing.extend(m);
            b
        });
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let r = self.sb.send(&q.method, &path, &h, body.as_deref()).await;
        let must_exist = missing.is_empty() && self.live.must_exist(&q.method, &path);
        let verdict = judge(&path, r.status, &r.json, must_exist, &missing);
        self.live.update(&q.method, &path, &r);
        self.apply(&q.sets, &r);
        self.record(&q.name, &q.method, &path, &r, verdict);
    }
}

/// Whether an answer is meaningful (module documentation).
fn judge(
    path: &str,
    status: u16,
    json: &Value,
    must_exist: bool,
    missing: &[String],
) -> Result<(), String> {
    if (200..300).contains(&status) {
        return Ok(());
    }
    if !(400..500).contains(&status) {
        return Err(format!("answered {status}"));
    }
    if !missing.is_empty() {
        // Sent with a literal {{variable}}: any 4xx will do.
        return Ok(());
    }
    let has_messages = json["tppMessages"]
        .as_array()
        .is_some_and(|m| !m.is_empty());
    if !has_messages {
        return Err(format!("{status} without a tppMessages body"));
    }
    if status == 404 && must_exist {
        return Err(format!(
            "404 for {path}, a path the interface document names, with ids of live resources"
        ));
    }
    Ok(())
}

fn table(rows: &[Row]) -> String {
    let mut s = String::from("collection | name | method path | status | code | verdict\n");
    for r in rows {
        s.push_str(&format!(
            "{} | {} | {} {} | {} | {} | {}\n",
            r.collection,
            r.name,
            r.method,
            r.path,
            r.status,
            if r.code.is_empty() { "-" } else { &r.code },
            match &r.verdict {
                Ok(()) => "ok".to_string(),
                Err(e) => format!("FAIL: {e}"),
            }
        ));
    }
    s
}

// ---------------------------------------------------------------------------------------
// SCA through the HTML forms

fn query_param(location: &str, name: &str) -> Option<String> {
    url::Url::parse(location)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.to_string())
}

// ---------------------------------------------------------------------------------------
// The replay

async fn replay(collection: &str) {
    let sb = TestSandbox::start().await;
    let requests = load_collection(collection);
    let today = sb.clock.today();
    let mut run = Replay {
        collection: collection.trim_end_matches(".postman_collection.json"),
        sb: &sb,
        requests,
        vars: HashMap::new(),
        live: Live::default(),
        rows: Vec::new(),
    };
    let host = sb.base.trim_start_matches("http://").to_string();
    for (k, v) in [
        ("host", host.as_str()),
        ("psu_ip_address", "127.0.0.1"),
        ("tpp_redirect_uri", REDIRECT),
        ("user_agent", "psd2-console postman replay"),
    ] {
        run.vars.insert(k.into(), v.into());
    }
    run.vars.insert("today".into(), today.to_string());
    run.vars.insert(
        "validUntil".into(),
        (today + chrono::Duration::days(60)).to_string(),
    );

    // Setup: SCA, then the values the collection's scripts take from answers.
    let customers = run
        .setup("customers", "GET", "/v1/sandbox/customers", &[], None)
        .await;
    let number = common::private_customer_number(&customers.json);
    let session = format!("postman-{}", uuid::Uuid::new_v4());
    let first = run
        .setup(
            "SCA",
            "GET",
            "/v1/accounts",
            &[("TPP-Session-ID", &session)],
            None,
        )
        .await;
    let sca = first
        .sca_redirect()
        .unwrap_or_else(|| panic!("no scaRedirect: {} {}", first.status, first.text))
        .to_string();
    let to_tpp = common::sca::complete_sca(&sca, &number).await;
    let psu = query_param(&to_tpp, "psu-id").unwrap_or_else(|| panic!("no psu-id: {to_tpp}"));
    run.vars.insert("ssn".into(), psu.clone());
    let h = [
        ("PSU-ID", psu.as_str()),
        ("TPP-Session-ID", session.as_str()),
    ];

    let accounts = run.setup("accounts", "GET", "/v1/accounts", &h, None).await;
    run.run_script_of("GET", "/accounts", &accounts);
    let cards = run
        .setup("card accounts", "GET", "/v1/card-accounts", &h, None)
        .await;
    run.run_script_of("GET", "/card-accounts", &cards);
    let debtor = accounts.json["accounts"][0]["bban"].clone();
    let payment = |text: &str| {
        json!({
            "instructedAmount": {"currency": "NOK", "amount": "13.37"},
            "debtorAccount": {"bban": debtor, "currency": "NOK"},
            "creditorAccount": {"bban": "12094355778", "currency": "NOK"},
            "creditorName": "Foo Bar",
            "remittanceInformationUnstructured": text,
            "requestedExecutionDate": today.to_string()
        })
        .to_string()
    };
    let product = "/v1/payments/norwegian-domestic-credit-transfers";
    let for_basket = run
        .setup(
            "payment for a basket",
            "POST",
            product,
            &h,
            Some(&payment("basket")),
        )
        .await;
    if let Some(id) = for_basket.json["paymentId"].as_str() {
        let body = json!({ "paymentIds": [id] }).to_string();
        let basket = run
            .setup(
                "signing basket",
                "POST",
                "/v1/signing-baskets",
                &h,
                Some(&body),
            )
            .await;
        run.run_script_of("POST", "/signing-baskets", &basket);
    }
    let paid = run
        .setup("payment", "POST", product, &h, Some(&payment("replay")))
        .await;
    run.run_script_of(
        "POST",
        "/payments/norwegian-domestic-credit-transfers",
        &paid,
    );
    let consent_body = json!({
        "access": {"balances": [], "accounts": [], "transactions": []},
        "recurringIndicator": true,
        "validUntil": run.vars["validUntil"],
        "frequencyPerDay": 4,
        "combinedServiceIndicator": false
    })
    .to_string();
    let consent = run
        .setup("consent", "POST", "/v1/consents", &h, Some(&consent_body))
        .await;
    run.run_script_of("POST", "/consents", &consent);

    // Every request of the collection, in order.
    for i in 0..run.requests.len() {
        run.send(i).await;
    }

    let report = table(&run.rows);
    println!("{report}");
    let failures: Vec<String> = run
        .rows
        .iter()
        .filter_map(|r| {
            r.verdict
                .as_ref()
                .err()
                .map(|e| format!("{} {} {} ({}): {e}", r.collection, r.method, r.path, r.name))
        })
        .collect();
    let violations = sb.violations.lock().unwrap().clone();
    let sent = run
        .rows
        .iter()
        .filter(|r| !r.name.starts_with("(setup)"))
        .count();
    assert_eq!(sent, run.requests.len(), "every request was sent");
    assert!(
        failures.is_empty() && violations.is_empty(),
        "{collection}: {} answers not meaningful, {} schema violations\n\n{}\n{}\n\n{report}",
        failures.len(),
        violations.len(),
        failures.join("\n"),
        violations.join("\n"),
    );
    drop(run);
    sb.stop().await;
}

#[test]
fn postman_scripts_are_read_and_evaluated() {
    assert_eq!(
        script_set("pm.globals.set(\"firstAccount\", jsonData.accounts[0].bban);"),
        Some(("firstAccount".into(), ".accounts[0].bban".into()))
    );
    assert_eq!(
        script_set("pm.globals.set(\"confirmationLink\", jsonData._links.confirmation.href)"),
        Some((
            "confirmationLink".into(),
            "._links.confirmation.href".into()
        ))
    );
    assert_eq!(script_set("pm.environment.set(\"today\", today);"), None);
    let v = json!({"accounts": [{"bban": "1"}, {"bban": "2"}], "_links": {"confirmation": {"href": "/x"}}});
    assert_eq!(eval(&v, ".accounts[1].bban").as_deref(), Some("2"));
    assert_eq!(eval(&v, "._links.confirmation.href").as_deref(), Some("/x"));
    assert_eq!(eval(&v, ".accounts[5].bban"), None);
    for file in [
        "dnb-psd2-v1.postman_collection.json",
        "dnb-psd2-v2.postman_collection.json",
    ] {
        let reqs = load_collection(file);
        assert!(reqs.iter().all(|r| r.url.contains("{{host}}")), "{file}");
        assert!(reqs.iter().any(|r| !r.sets.is_empty()), "{file}");
    }
}

#[tokio::test]
async fn dnb_v1_collection_requests_get_meaningful_answers() {
    replay("dnb-psd2-v1.postman_collection.json").await;
}

#[tokio::test]
async fn dnb_v2_collection_requests_get_meaningful_answers() {
    replay("dnb-psd2-v2.postman_collection.json").await;
}
