//! Cross-cutting rules of the sandbox over real HTTP, signed with the test TPP, SCA done in
//! the HTML pages: the SCA session per TPP-Session-ID (interface document, SCA session state
//! 1–4), the limits without the PSU present (Limits: 4 calls a day, 90 days), the PSD2 roles
//! of the TPP certificate, and the characters the bank's systems refuse (Errors). Every
//! response is also checked against the Berlin Group schemas by the test sandbox's observer.

use crate::common;

use std::time::Duration;

use common::sandbox::{TestSandbox, signed_headers, tpp_with_roles};
use psd2_console::cert::Psd2Role;
use psd2_console::xs2a::redirect::{ScaCallback, ScaSuccess};
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// Helpers

use common::sca::{callback, fixed_sandbox, success, tick_all};

/// Logs in as `number` at `href` (PRIVATE context when asked), ticks every account and card
/// account, and presses `button` (`Approve` or `Cancel`); returns the redirect to the TPP.
async fn complete(href: &str, number: &str, button: &str) -> String {
    common::sca::complete(href, number, "PRIVATE", tick_all, button).await
}

/// A private customer without agreements, with a card account.
async fn private_customer(sb: &TestSandbox) -> Value {
    let r = sb.get_ok("/v1/sandbox/customers").await;
    r.json
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["customerType"] == "PRIVATE"
                && c["agreements"].as_array().is_some_and(|a| a.is_empty())
                && c["cardAccounts"].as_array().is_some_and(|a| !a.is_empty())
        })
        .cloned()
        .expect("a private customer")
}

fn number(c: &Value) -> String {
    c["customerNumber"].as_str().unwrap().to_string()
}

/// A consent SCA started by `GET /v1/accounts` without PSU-ID in `session`.
async fn consent(sb: &TestSandbox, c: &Value, session: &str) -> ScaSuccess {
    let r = sb
        .get_with("/v1/accounts", &[("TPP-Session-ID", session)])
        .await;
    assert_eq!(r.status, 401, "{}", r.text);
    let href = r.sca_redirect().expect("scaRedirect").to_string();
    success(&complete(&href, &number(c), "Approve").await)
}

/// A sandbox on a fixed clock, its [`private_customer`] and that customer's [`consent`]
/// completed in `session`.
async fn consented(session: &str) -> (TestSandbox, Value, ScaSuccess) {
    let sb = fixed_sandbox().await;
    let c = private_customer(&sb).await;
    let ok = consent(&sb, &c, session).await;
    (sb, c, ok)
}

fn first_account(c: &Value) -> String {
    c["accounts"][0].as_str().unwrap().to_string()
}

fn today(sb: &TestSandbox) -> chrono::NaiveDate {
    chrono::DateTime::<chrono::Utc>::from(sb.now()).date_naive()
}

// ---------------------------------------------------------------------------------------
// SCA sessions (SCA session state rules 1–4)

#[tokio::test]
async fn sca_session_is_valid_for_one_hour_then_psu_present_requests_need_sca() {
    let (sb, c, ok) = consented("s-hour").await;
    let present = [("PSU-ID", ok.psu_id.as_str()), ("TPP-Session-ID", "s-hour")];
    let balances = format!("/v1/accounts/{}/balances", first_account(&c));

    // Rule 2: within the hour, no new SCA for account services.
    sb.clock.advance(Duration::from_secs(59 * 60));
    for path in ["/v1/accounts", balances.as_str(), "/v1/card-accounts"] {
        let r = sb.get_with(path, &present).await;
        assert_eq!(r.status, 200, "{path} after 59 min: {}", r.text);
    }
    // Rule 1: after the hour a PSU-present request needs a new SCA.
    sb.clock.advance(Duration::from_secs(2 * 60));
    let r = sb.get_with("/v1/accounts", &present).await;
    r.assert_error(401, "CONSENT_INVALID");
    assert!(r.text.contains("1 hour"), "{}", r.text);
    let href = r.sca_redirect().expect("scaRedirect").to_string();
    // Without the PSU present (no PSU-IP-Address) the 180-day consent is enough.
    let unattended = [("PSU-ID", ok.psu_id.as_str()), ("PSU-IP-Address", "")];
    sb.get_with_ok("/v1/accounts", &unattended).await;
    // Without TPP-Session-ID the request belongs to the PSU's current session: expired too.
    let r = sb
        .get_with("/v1/accounts", &[("PSU-ID", ok.psu_id.as_str())])
        .await;
    assert_eq!(r.status, 401, "{}", r.text);
    // The new SCA renews the session.
    let again = success(&complete(&href, &number(&c), "Approve").await);
    assert_eq!(again.tpp_session_id, "s-hour");
    sb.get_with_ok("/v1/accounts", &present).await;
}

#[tokio::test]
async fn new_session_id_needs_sca_and_the_old_one_ends_only_when_it_completes() {
    let (sb, c, ok) = consented("s-old").await;
    let old = [("PSU-ID", ok.psu_id.as_str()), ("TPP-Session-ID", "s-old")];
    let new = [("PSU-ID", ok.psu_id.as_str()), ("TPP-Session-ID", "s-new")];
    assert_eq!(sb.get_with("/v1/accounts", &old).await.status, 200);

    // Rule 3: a new TPP-Session-ID before the old one expires needs a new SCA ...
    let r = sb.get_with("/v1/accounts", &new).await;
    r.assert_error(401, "CONSENT_INVALID");
    let href = r.sca_redirect().unwrap().to_string();
    // ... which, when aborted, leaves the old id valid.
    let cancelled = callback(&complete(&href, &number(&c), "Cancel").await);
    assert!(
        matches!(cancelled, ScaCallback::Failure(_)),
        "{cancelled:?}"
    );
    assert_eq!(sb.get_with("/v1/accounts", &old).await.status, 200);
    assert_eq!(sb.get_with("/v1/accounts", &new).await.status, 401);

    // When it completes, the new id works and the old one is no longer valid.
    let r = sb.get_with("/v1/accounts", &new).await;
    let done = success(&complete(r.sca_redirect().unwrap(), &number(&c), "Approve").await);
    assert_eq!(done.tpp_session_id, "s-new");
    assert_eq!(done.psu_id, ok.psu_id);
    assert_eq!(sb.get_with("/v1/accounts", &new).await.status, 200);
    let r = sb.get_with("/v1/accounts", &old).await;
    r.assert_error(401, "CONSENT_INVALID");
    assert!(r.sca_redirect().is_some());
    // Without TPP-Session-ID: the current (new) session.
    sb.get_with_ok("/v1/accounts", &[("PSU-ID", ok.psu_id.as_str())])
        .await;
}

// ---------------------------------------------------------------------------------------
// PSU not present (no PSU-IP-Address)

#[tokio::test]
async fn unattended_balances_allow_four_calls_per_account_per_day_then_429() {
    let (sb, c, ok) = consented("limit-b").await;
    let unattended = [("PSU-ID", ok.psu_id.as_str()), ("PSU-IP-Address", "")];
    let accounts = crate::common::sandbox::strings(&c["accounts"]);
    let path = format!("/v1/accounts/{}/balances", accounts[0]);
    for i in 1..=4 {
        let r = sb.get_with(&path, &unattended).await;
        assert_eq!(r.status, 200, "call {i}: {}", r.text);
        sb.clock.advance(Duration::from_secs(60));
    }
    let r = sb.get_with(&path, &unattended).await;
    r.assert_error(429, "ACCESS_EXCEEDED");
    // Another account has its own count; the PSU present is not limited.
    let other = format!("/v1/accounts/{}/balances", accounts[1]);
    assert_eq!(sb.get_with(&other, &unattended).await.status, 200);
    let present = [("PSU-ID", ok.psu_id.as_str())];
    assert_eq!(sb.get_with(&path, &present).await.status, 200);
    // The count is per 24 hours on the sandbox clock.
    sb.clock.advance(Duration::from_secs(24 * 3600 - 4 * 60));
    assert_eq!(sb.get_with(&path, &unattended).await.status, 200);
    let card = c["cardAccounts"][0].as_str().unwrap();
    let card_path = format!("/v1/card-accounts/{card}/balances");
    for _ in 0..4 {
        assert_eq!(sb.get_with(&card_path, &unattended).await.status, 200);
    }
    let r = sb.get_with(&card_path, &unattended).await;
    r.assert_error(429, "ACCESS_EXCEEDED");
}

#[tokio::test]
async fn unattended_transactions_allow_four_calls_per_day_and_reach_back_90_days() {
    let (sb, c, ok) = consented("limit-t").await;
    let unattended = [("PSU-ID", ok.psu_id.as_str()), ("PSU-IP-Address", "")];
    let base = format!("/v1/accounts/{}/transactions", first_account(&c));
    let earliest = today(&sb) - chrono::Duration::days(90);

    // The default listing starts 90 days back.
    let all_booked = format!("{base}?bookingStatus=booked&limit=5000");
    let r = sb.get_with_ok(&all_booked, &unattended).await;
    let booked = r.json["transactions"]["booked"].as_array().unwrap();
    assert!(!booked.is_empty());
    let oldest = booked.last().unwrap()["bookingDate"].as_str().unwrap();
    assert!(
        oldest >= earliest.to_string().as_str(),
        "{oldest} within 90 days"
    );
    // An older dateFrom is refused (and not counted).
    let older = earliest - chrono::Duration::days(1);
    let r = sb
        .get_with(&format!("{base}?dateFrom={older}"), &unattended)
        .await;
    r.assert_error(400, "PERIOD_INVALID");
    // With the PSU present the whole history is there.
    let present = [("PSU-ID", ok.psu_id.as_str())];
    sb.get_with_ok(&format!("{base}?dateFrom={older}"), &present)
        .await;

    for i in 2..=4 {
        let r = sb
            .get_with(&format!("{base}?dateFrom={earliest}"), &unattended)
            .await;
        assert_eq!(r.status, 200, "call {i}: {}", r.text);
    }
    let r = sb.get_with(&base, &unattended).await;
    r.assert_error(429, "ACCESS_EXCEEDED");
    let card = c["cardAccounts"][0].as_str().unwrap();
    let card_path = format!("/v1/card-accounts/{card}/transactions");
    for _ in 0..4 {
        let r = sb.get_with_ok(&card_path, &unattended).await;
        let oldest = r.json["cardTransactions"]["booked"]
            .as_array()
            .unwrap()
            .last()
            .map(|t| t["bookingDate"].as_str().unwrap().to_string())
            .unwrap_or_default();
        assert!(oldest >= earliest.to_string(), "{oldest}");
    }
    let r = sb.get_with(&card_path, &unattended).await;
    r.assert_error(429, "ACCESS_EXCEEDED");
}

// ---------------------------------------------------------------------------------------
// Roles and characters

#[tokio::test]
async fn account_information_needs_the_psp_ai_role() {
    let (sb, c, ok) = consented("roles").await;
    let pisp = tpp_with_roles(&[Psd2Role::PspPi]);
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let account = first_account(&c);
    for (method, path, body) in [
        ("GET", "/v1/accounts".to_string(), None),
        ("GET", format!("/v1/accounts/{account}"), None),
        ("GET", format!("/v1/accounts/{account}/balances"), None),
        ("GET", format!("/v1/accounts/{account}/transactions"), None),
        ("GET", "/v1/card-accounts".to_string(), None),
        ("POST", "/v1/bank-offered-consents".to_string(), Some("{}")),
        ("POST", "/v1/consents".to_string(), Some("{}")),
    ] {
        let r = sb.send_as(&pisp, method, &path, &psu, body).await;
        assert_eq!(
            (r.status, r.code()),
            (401, Some("ROLE_INVALID")),
            "{path}: {}",
            r.text
        );
        assert!(r.text.contains("PSP_AI"), "{}", r.text);
    }
    // The same requests with PSP_AI pass the role check.
    let aisp = tpp_with_roles(&[Psd2Role::PspAi]);
    sb.get_as(&aisp, "/v1/accounts", &[])
        .await
        .assert_error(401, "CONSENT_INVALID");
}

#[tokio::test]
async fn characters_outside_latin1_are_refused_naming_the_field() {
    let sb = fixed_sandbox().await;
    for (body, field) in [
        (r#"{"note":"pizza 🍕"}"#, "note"),
        (
            r#"{"access":{"accounts":[{"bban":"1503 ✓"}]}}"#,
            "access.accounts[0].bban",
        ),
        ("{\"note\":\"line\\nbreak\"}", "note"),
    ] {
        let r = sb
            .send("POST", "/v1/bank-offered-consents", &[], Some(body))
            .await;
        assert_eq!(
            (r.status, r.code()),
            (400, Some("FORMAT_ERROR")),
            "{body}: {}",
            r.text
        );
        assert_eq!(r.json["tppMessages"][0]["path"], field, "{}", r.text);
        assert!(
            r.json["tppMessages"][0]["text"]
                .as_str()
                .unwrap()
                .contains(field)
        );
    }
    let r = sb
        .send(
            "POST",
            "/v1/bank-offered-consents",
            &[],
            Some(r#"{"note":"Blåbærsyltetøy – «Ærlig» café"}"#),
        )
        .await;
    assert_eq!(r.status, 201, "Latin-1 is accepted: {}", r.text);
}

// ---------------------------------------------------------------------------------------
// Issue 9: signature failures are 400; TPP-Redirect-URI on every request; keyId serials

/// A signed GET of `path` as [`TestSandbox::send`] builds it, changed by `tweak` after
/// signing.
async fn send_tweaked(
    sb: &TestSandbox,
    path: &str,
    tweak: impl FnOnce(&mut Vec<(String, String)>),
) -> common::sandbox::Reply {
    let mut hs = signed_headers(common::sandbox::tpp(), "GET", path, &[], None, sb.now());
    tweak(&mut hs);
    let mut rb = sb.http.get(format!("{}{path}", sb.base));
    for (n, v) in &hs {
        rb = rb.header(n, v);
    }
    common::sandbox::Reply::of(rb.send().await.unwrap()).await
}

/// A change to the signed headers of [`send_tweaked`].
type Tweak = dyn FnOnce(&mut Vec<(String, String)>);

fn set(hs: &mut [(String, String)], name: &str, f: impl FnOnce(&str) -> String) {
    let h = hs
        .iter_mut()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .unwrap_or_else(|| panic!("no {name}"));
    h.1 = f(&h.1);
}

fn with_key_id(hs: &mut [(String, String)], key_id: String) {
    set(hs, "Signature", |v| {
        let mut p = psd2_console::signing::SignatureParams::parse(v).unwrap();
        p.key_id = key_id;
        p.to_header_value()
    });
}

#[tokio::test]
async fn signature_and_certificate_failures_answer_400_as_the_document_says() {
    let sb = TestSandbox::start().await;
    let path = "/v1/accounts";
    let cases: Vec<(&str, &str, Box<Tweak>)> = vec![
        (
            "missing Signature",
            "SIGNATURE_MISSING",
            Box::new(|hs| hs.retain(|(n, _)| n != "Signature")),
        ),
        (
            "missing certificate",
            "CERTIFICATE_MISSING",
            Box::new(|hs| hs.retain(|(n, _)| n != "TPP-Signature-Certificate")),
        ),
        (
            "undecodable certificate",
            "CERTIFICATE_INVALID",
            Box::new(|hs| {
                set(hs, "TPP-Signature-Certificate", |_| {
                    "bm90IGEgY2VydA==".into()
                })
            }),
        ),
        (
            "signature does not verify",
            "SIGNATURE_INVALID",
            Box::new(|hs| set(hs, "X-Request-ID", |_| uuid::Uuid::new_v4().to_string())),
        ),
        (
            "algorithm mismatch",
            "SIGNATURE_INVALID",
            Box::new(|hs| {
                set(hs, "Signature", |v| {
                    let mut p = psd2_console::signing::SignatureParams::parse(v).unwrap();
                    p.algorithm = "hmac-sha256".into();
                    p.to_header_value()
                })
            }),
        ),
        (
            "header present but not signed",
            "SIGNATURE_INVALID",
            Box::new(|hs| {
                hs.push((
                    "PSU-ID".into(),
                    "11111111-1111-4111-8111-111111111111".into(),
                ))
            }),
        ),
    ];
    for (what, code, tweak) in cases {
        let r = send_tweaked(&sb, path, tweak).await;
        assert_eq!(
            (r.status, r.code()),
            (400, Some(code)),
            "{what}: {}",
            r.text
        );
    }
    // Expired and not yet valid certificates: the sandbox clock outside the validity.
    let days = |d: u64| Duration::from_secs(d * 86_400);
    for (clock, code) in [
        (
            std::time::SystemTime::now() + days(800),
            "CERTIFICATE_EXPIRED",
        ),
        (
            std::time::SystemTime::now() - days(2),
            "CERTIFICATE_INVALID",
        ),
    ] {
        let sb = TestSandbox::start_with(psd2_console::sandbox::SandboxConfig {
            clock: psd2_console::sandbox::Clock::fixed(clock),
            ..Default::default()
        })
        .await;
        let r = sb.get(path).await;
        assert_eq!((r.status, r.code()), (400, Some(code)), "{}", r.text);
    }
}

#[tokio::test]
async fn tpp_redirect_uri_is_required_on_every_production_request() {
    let sb = TestSandbox::start().await;
    let c = private_customer(&sb).await;
    let ok = consent(&sb, &c, "s-redirect").await;
    let psu = [("PSU-ID", ok.psu_id.as_str())];
    let r = sb.get_with("/v1/accounts", &psu).await;
    assert_eq!(r.status, 200, "consented: {}", r.text);
    let without: Vec<(&str, &str)> = psu
        .iter()
        .copied()
        .chain([("TPP-Redirect-URI", "")])
        .collect();
    let account = first_account(&c);
    for (method, path) in [
        ("GET", "/v1/accounts".to_string()),
        ("GET", format!("/v1/accounts/{account}/balances")),
        ("GET", "/v1/card-accounts".to_string()),
        ("GET", "/v1/agreements".to_string()),
        ("GET", "/v1/users".to_string()),
        ("POST", "/v1/bank-offered-consents".to_string()),
        (
            "GET",
            "/v1/payments/norwegian-domestic-credit-transfers/x/status".to_string(),
        ),
        ("GET", "/v1/signing-baskets/x".to_string()),
    ] {
        let r = sb.send(method, &path, &without, None).await;
        assert_eq!(r.status, 400, "{method} {path}: {}", r.text);
        assert_eq!(r.code(), Some("FORMAT_ERROR"));
        assert!(r.text.contains("TPP-Redirect-URI"), "{}", r.text);
    }
    // A blank value is no value.
    let r = sb
        .send(
            "GET",
            "/v1/accounts",
            &[("PSU-ID", ok.psu_id.as_str()), ("TPP-Redirect-URI", " ")],
            None,
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    // The sandbox's own management operations do not need it.
    sb.get_with_ok("/v1/sandbox/customers", &[("TPP-Redirect-URI", "")])
        .await;
}

#[tokio::test]
async fn key_id_serials_compare_as_numbers_with_or_without_leading_zeros() {
    let sb = TestSandbox::start().await;
    let cert = &common::sandbox::tpp().certificate;
    let hex = cert.serial_hex();
    // The console writes the document's form: upper-case hex, no leading zeros.
    assert!(!hex.starts_with('0'), "{hex}");
    assert_eq!(hex, hex.to_ascii_uppercase());
    assert_eq!(
        cert.key_id(),
        format!("SN={hex},CA={}", cert.issuer.to_rfc2253())
    );
    let ca = cert.issuer.to_rfc2253();
    // openssl prints whole bytes: an odd-length serial gets a leading 0.
    let openssl = if hex.len() % 2 == 1 {
        format!("0{hex}")
    } else {
        format!("00{hex}")
    };
    let path = "/v1/sandbox/customers";
    for serial in [
        hex.clone(),
        openssl,
        format!("000{hex}"),
        hex.to_ascii_lowercase(),
    ] {
        let key_id = format!("SN={serial},CA={ca}");
        let r = send_tweaked(&sb, path, |hs| with_key_id(hs, key_id.clone())).await;
        assert_eq!(r.status, 200, "{key_id}: {}", r.text);
    }
    // Another number is refused, saying both serials.
    let other = format!("SN=1{hex},CA={ca}");
    let r = send_tweaked(&sb, path, |hs| with_key_id(hs, other)).await;
    r.assert_error(400, "PARAMETER_NOT_CONSISTENT");
    assert!(r.text.contains(&hex), "{}", r.text);
}

/// The decimal digits of the big-endian unsigned integer `bytes` (schoolbook division).
fn decimal(bytes: &[u8]) -> String {
    let mut n = bytes.to_vec();
    let mut digits = Vec::new();
    while n.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in n.iter_mut() {
            let v = rem * 256 + u32::from(*b);
            *b = (v / 10) as u8;
            rem = v % 10;
        }
        digits.push(char::from(b'0' + rem as u8));
    }
    digits.iter().rev().collect()
}

// Issue 18, defect 7: a keyId serial written in decimal (a common library mistake) is
// refused saying so, not "keyId has SN=..., the certificate's serial is ...".
#[tokio::test]
async fn a_key_id_serial_in_decimal_is_refused_naming_the_mistake() {
    let sb = TestSandbox::start().await;
    let cert = &common::sandbox::tpp().certificate;
    let hex = cert.serial_hex();
    let key_id = format!(
        "SN={},CA={}",
        decimal(&cert.serial),
        cert.issuer.to_rfc2253()
    );
    let r = send_tweaked(&sb, "/v1/sandbox/customers", |hs| with_key_id(hs, key_id)).await;
    r.assert_error(400, "PARAMETER_NOT_CONSISTENT");
    assert!(
        r.text
            .contains("the same serial in decimal; write it in upper-case hex"),
        "{}",
        r.text
    );
    assert!(r.text.contains(&format!("SN={hex}")), "{}", r.text);
}
