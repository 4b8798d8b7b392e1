//! The Berlin Group schema check of `tests/it/common/schema.rs` (the library's lint, run on
//! every `TestSandbox` response): it maps operations to the file's own component schemas,
//! it fails on wrong bodies (amount as a number, a code outside the status's enum, no
//! `tppMessages`, a status the operation does not have, extra keys in the sandbox customer
//! listing, a 500) and passes right ones; then a set of real requests through a
//! `TestSandbox` validates.

use crate::common;

use common::sandbox::{REDIRECT, TestSandbox};
use common::schema::{check_exchange, exchange, spec};
use serde_json::{Value, json};

fn ok(method: &str, path: &str, status: u16, body: Value) {
    let r = check_exchange(&exchange(method, path, status, &body));
    assert!(r.is_ok(), "{method} {path} {status} {body}: {r:?}");
}

fn bad(method: &str, path: &str, status: u16, body: Value) -> String {
    match check_exchange(&exchange(method, path, status, &body)) {
        Ok(()) => panic!("{method} {path} {status} {body} should be a violation"),
        Err(e) => e,
    }
}

fn error(code: &str) -> Value {
    json!({"tppMessages": [{"category": "ERROR", "code": code, "text": "t"}]})
}

fn balances(amount: Value) -> Value {
    json!({
        "account": {"bban": "12345678903", "currency": "NOK"},
        "balances": [{
            "balanceType": "interimAvailable",
            "balanceAmount": {"currency": "NOK", "amount": amount},
            "lastChangeDateTime": "2026-11-21T10:00:00+01:00",
            "referenceDate": "2026-11-21"
        }]
    })
}

#[test]
fn operations_map_to_the_berlin_group_component_schemas() {
    let s = spec().expect("spec loads");
    let cases = [
        ("GET", "/v1/accounts", 200, "accountList"),
        (
            "GET",
            "/v1/accounts/a1/balances",
            200,
            "readAccountBalanceResponse-200",
        ),
        (
            "GET",
            "/v1/accounts/a1/transactions",
            200,
            "transactionsResponse-200_json",
        ),
        ("GET", "/v1/card-accounts", 200, "cardAccountList"),
        (
            "GET",
            "/v1/card-accounts/c1/balances",
            200,
            "readCardAccountBalanceResponse-200",
        ),
        (
            "POST",
            "/v1/payments/norwegian-domestic-credit-transfers",
            201,
            "paymentInitationRequestResponse-201",
        ),
        (
            "POST",
            "/v1/periodic-payments/norwegian-domestic-credit-transfers",
            201,
            "paymentInitationRequestResponse-201",
        ),
        (
            "GET",
            "/v1/payments/norwegian-domestic-credit-transfers/p1/status",
            200,
            "paymentInitiationStatusResponse-200_json",
        ),
        (
            "DELETE",
            "/v1/payments/norwegian-domestic-credit-transfers/p1",
            202,
            "paymentInitiationCancelResponse-202",
        ),
        (
            "POST",
            "/v1/signing-baskets",
            201,
            "signingBasketResponse-201",
        ),
        (
            "GET",
            "/v1/signing-baskets/b1",
            200,
            "signingBasketResponse-200",
        ),
        (
            "GET",
            "/v1/signing-baskets/b1/status",
            200,
            "signingBasketStatusResponse-200",
        ),
        ("POST", "/v1/consents", 201, "consentsResponse-201"),
        (
            "GET",
            "/v1/consents/c1/status",
            200,
            "consentStatusResponse-200",
        ),
        ("GET", "/v1/accounts", 401, "Error401_NG_AIS"),
        ("GET", "/v1/accounts/a1", 404, "Error404_NG_AIS"),
        (
            "POST",
            "/v1/payments/norwegian-domestic-credit-transfers",
            400,
            "Error400_NG_PIS",
        ),
        (
            "DELETE",
            "/v1/payments/norwegian-domestic-credit-transfers/p1",
            405,
            "Error405_NG_PIS_CANC",
        ),
        ("POST", "/v1/signing-baskets", 400, "Error400_NG_SBS"),
        // Not an operation of the file: the family's error schema by path.
        ("GET", "/v1/no-such-thing", 404, "Error404_NG_AIS"),
        ("POST", "/v1/accounts", 405, "Error405_NG_AIS"),
        ("GET", "/v1/payments/approval", 405, "Error405_NG_PIS"),
        // Interface-document paths with no Berlin Group counterpart.
        ("GET", "/v1/sandbox/customers", 200, "__sandboxCustomers"),
        ("GET", "/v1/sandbox/customers", 400, "__error400"),
    ];
    for (m, p, st, want) in cases {
        assert_eq!(
            s.schema_for(m, p, st).as_deref(),
            Some(want),
            "{m} {p} {st}"
        );
    }
    // No body in the file, or not checked.
    assert_eq!(s.schema_for("DELETE", "/v1/consents/c1", 204), None);
    assert_eq!(s.schema_for("GET", "/v1/users", 200), None);
    assert_eq!(
        s.schema_for(
            "GET",
            "/v1/payments/instant-norwegian-credit-transfers-straks/fee-information",
            200
        ),
        None
    );
    assert_eq!(s.schema_for("GET", "/sca/x", 200), None);
}

#[test]
fn reference_copies_in_tests_spec_match_shared_spec() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in [
        "dnb-psd2-v1.postman_collection.json",
        "dnb-psd2-v2.postman_collection.json",
    ] {
        let copy = std::fs::read(root.join("tests/spec").join(file))
            .unwrap_or_else(|e| panic!("tests/spec/{file}: {e}"));
        let shared = root.join("../shared/spec").join(file);
        if shared.is_file() {
            assert!(
                std::fs::read(&shared).unwrap() == copy,
                "tests/spec/{file} differs from {}",
                shared.display()
            );
        }
    }
    // The Berlin Group file is built into the binary: tests/it/lint.rs checks that copy.
}

#[test]
fn amount_as_a_json_number_is_a_violation() {
    let e = bad(
        "GET",
        "/v1/accounts/a1/balances",
        200,
        balances(json!(12.5)),
    );
    assert!(e.contains("readAccountBalanceResponse-200"), "{e}");
    assert!(e.contains("/balances/0/balanceAmount/amount"), "{e}");
    ok(
        "GET",
        "/v1/accounts/a1/balances",
        200,
        balances(json!("12.50")),
    );
}

#[test]
fn date_formats_are_checked() {
    let mut b = balances(json!("1.00"));
    b["balances"][0]["referenceDate"] = json!("2026-13-01");
    bad("GET", "/v1/accounts/a1/balances", 200, b);
    let mut b = balances(json!("1.00"));
    b["balances"][0]["lastChangeDateTime"] = json!("2026-11-21T10:00:00");
    bad("GET", "/v1/accounts/a1/balances", 200, b);
}

/// The one documented exception (docs/sandbox.md): signature and certificate failures are
/// 400 in the interface document (Authentication 3, Errors table) with the Berlin Group's
/// 401 codes; exactly those five codes pass under 400, for every family, and nothing else.
#[test]
fn signature_and_certificate_codes_under_400_are_the_only_documented_exception() {
    for code in [
        "SIGNATURE_MISSING",
        "SIGNATURE_INVALID",
        "CERTIFICATE_MISSING",
        "CERTIFICATE_INVALID",
        "CERTIFICATE_EXPIRED",
    ] {
        ok("GET", "/v1/accounts", 400, error(code));
        ok(
            "POST",
            "/v1/payments/norwegian-domestic-credit-transfers",
            400,
            error(code),
        );
        ok("POST", "/v1/signing-baskets", 400, error(code));
        ok("GET", "/v1/sandbox/customers", 400, error(code));
        // Not under another status that lacks them.
        bad("GET", "/v1/accounts", 403, error(code));
    }
    // The crate sends exactly these codes with 400.
    let crate_codes: Vec<&str> = psd2_console::xs2a::error::SIGNATURE_FAILURE_CODES
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(crate_codes.len(), 5);
    for c in &crate_codes {
        assert!(psd2_console::lint::DOCUMENTED_400_CODES.contains(c), "{c}");
    }
    // Other 401 codes stay 401-only, and an unknown code is no exception either.
    for code in [
        "ROLE_INVALID",
        "CONSENT_INVALID",
        "CORPORATE_ID_INVALID",
        "PSU_CREDENTIALS_INVALID",
        "CERTIFICATE_BLOCKED",
        "SIGNATURE_BROKEN",
    ] {
        bad("GET", "/v1/accounts", 400, error(code));
    }
    // A message list is checked message by message.
    bad(
        "GET",
        "/v1/accounts",
        400,
        json!({"tppMessages": [
            {"category": "ERROR", "code": "SIGNATURE_INVALID"},
            {"category": "ERROR", "code": "CONSENT_INVALID"}
        ]}),
    );
}

#[test]
fn error_code_outside_the_enum_of_its_status_is_a_violation() {
    ok("GET", "/v1/accounts", 400, error("FORMAT_ERROR"));
    ok("GET", "/v1/accounts", 401, error("SIGNATURE_INVALID"));
    ok("GET", "/v1/accounts", 401, error("CONSENT_INVALID"));
    // CONSENT_INVALID and ROLE_INVALID are 401 codes only; FORMAT_ERROR a 400 code only.
    let e = bad("GET", "/v1/accounts", 400, error("CONSENT_INVALID"));
    assert!(e.contains("Error400_NG_AIS"), "{e}");
    bad("GET", "/v1/accounts", 400, error("ROLE_INVALID"));
    bad("GET", "/v1/accounts", 401, error("FORMAT_ERROR"));
    bad("GET", "/v1/accounts", 404, error("NOT_A_CODE"));
    // PAYMENT_FAILED is PIS only.
    ok(
        "POST",
        "/v1/payments/norwegian-domestic-credit-transfers",
        400,
        error("PAYMENT_FAILED"),
    );
    bad("GET", "/v1/accounts", 400, error("PAYMENT_FAILED"));
    // REFERENCE_MIX_INVALID is a signing-basket code.
    ok(
        "POST",
        "/v1/signing-baskets",
        400,
        error("REFERENCE_MIX_INVALID"),
    );
    bad(
        "POST",
        "/v1/payments/norwegian-domestic-credit-transfers",
        400,
        error("REFERENCE_MIX_INVALID"),
    );
    // Paths without a Berlin Group counterpart: any code of the status's enums.
    ok("GET", "/v1/sandbox/customers", 400, error("FORMAT_ERROR"));
    bad(
        "GET",
        "/v1/sandbox/customers",
        400,
        error("CONSENT_EXPIRED"),
    );
    // A wrong category.
    bad(
        "GET",
        "/v1/accounts",
        400,
        json!({"tppMessages": [{"category": "FATAL", "code": "FORMAT_ERROR"}]}),
    );
}

#[test]
fn error_without_tpp_messages_is_a_violation() {
    let e = bad(
        "GET",
        "/v1/accounts",
        400,
        json!({"error": "FORMAT_ERROR", "message": "bad"}),
    );
    assert!(e.contains("tppMessages"), "{e}");
    bad("GET", "/v1/accounts", 400, json!({"tppMessages": []}));
    bad("GET", "/v1/sandbox/customers", 400, json!({"code": "x"}));
    bad("GET", "/v1/accounts", 404, Value::Null);
    // Plain text is not JSON.
    let mut ex = exchange("GET", "/v1/accounts", 400, &Value::Null);
    ex.body = bytes::Bytes::from_static(b"Invalid request");
    ex.content_type = Some("text/plain".into());
    assert!(check_exchange(&ex).is_err());
}

#[test]
fn error_links_must_be_href_objects() {
    let mut b = error("CONSENT_INVALID");
    b["_links"] = json!({"scaRedirect": {"href": "http://127.0.0.1:1/sca/x"}});
    ok("GET", "/v1/accounts", 401, b.clone());
    b["_links"] = json!({"scaRedirect": "http://127.0.0.1:1/sca/x"});
    bad("GET", "/v1/accounts", 401, b);
}

#[test]
fn status_the_operation_does_not_have_is_a_violation() {
    let body = json!({"transactionStatus": "RCVD", "paymentId": "p1",
                      "_links": {"scaRedirect": {"href": "/sca/1"}}});
    ok(
        "POST",
        "/v1/payments/norwegian-domestic-credit-transfers",
        201,
        body.clone(),
    );
    let e = bad(
        "POST",
        "/v1/payments/norwegian-domestic-credit-transfers",
        200,
        body,
    );
    assert!(e.contains("201"), "{e}");
    // Missing required paymentId.
    bad(
        "POST",
        "/v1/payments/norwegian-domestic-credit-transfers",
        201,
        json!({"transactionStatus": "RCVD", "_links": {}}),
    );
    // An unknown transaction status.
    bad(
        "POST",
        "/v1/signing-baskets",
        201,
        json!({"transactionStatus": "DONE", "basketId": "b", "_links": {}}),
    );
    ok(
        "POST",
        "/v1/signing-baskets",
        201,
        json!({"transactionStatus": "RCVD", "basketId": "b", "_links": {}}),
    );
}

#[test]
fn no_content_answer_has_no_body() {
    ok("DELETE", "/v1/consents/c1", 204, Value::Null);
    bad("DELETE", "/v1/consents/c1", 204, json!({"deleted": true}));
}

#[test]
fn answer_500_is_always_a_violation() {
    bad("GET", "/v1/accounts", 500, error("FORMAT_ERROR"));
    bad("GET", "/v1/sandbox/customers", 500, Value::Null);
    // Other 5xx need the generic error body.
    ok("GET", "/v1/accounts", 503, error("SERVICE_BLOCKED"));
    bad("GET", "/v1/accounts", 503, Value::Null);
}

fn customer() -> Value {
    let link = |h: &str| json!({"href": h, "verbs": ["GET"]});
    json!({
        "customerId": "c1",
        "customerNumber": "01017012345",
        "customerType": "CORPORATE",
        "customerName": "Kari Nordmann",
        "agreements": [{
            "id": "ag1", "name": "Nordmann AS", "engagements": ["e1"],
            "_links": {"self": link("/v1/agreements/ag1"),
                       "engagements": link("/v1/agreements/ag1/engagements")}
        }],
        "accounts": ["a1", "a2"],
        "cardAccounts": ["k1"],
        "_links": {"self": link("/v1/sandbox/customers/c1")}
    })
}

#[test]
fn sandbox_customer_listing_has_exactly_the_documented_keys() {
    ok("GET", "/v1/sandbox/customers", 200, json!([customer()]));
    ok("GET", "/v1/sandbox/customers/c1", 200, customer());
    let mut extra = customer();
    extra["email"] = json!("kari@example.com");
    bad("GET", "/v1/sandbox/customers", 200, json!([extra]));
    let mut missing = customer();
    missing.as_object_mut().unwrap().remove("cardAccounts");
    bad("GET", "/v1/sandbox/customers", 200, json!([missing]));
    let mut no_verbs = customer();
    no_verbs["_links"]["self"] = json!({"href": "/v1/sandbox/customers/c1"});
    bad("GET", "/v1/sandbox/customers", 200, json!([no_verbs]));
    let mut agreement_links = customer();
    agreement_links["agreements"][0]["_links"]
        .as_object_mut()
        .unwrap()
        .remove("engagements");
    bad(
        "GET",
        "/v1/sandbox/customers",
        200,
        json!([agreement_links]),
    );
    let mut kind = customer();
    kind["customerType"] = json!("BUSINESS");
    bad("GET", "/v1/sandbox/customers", 200, json!([kind]));
    // Not an array.
    bad("GET", "/v1/sandbox/customers", 200, customer());
}

#[test]
fn pages_outside_v1_are_not_checked() {
    let mut ex = exchange("GET", "/sca/abc", 200, &Value::Null);
    ex.body = bytes::Bytes::from_static(b"<html></html>");
    ex.content_type = Some("text/html".into());
    assert!(check_exchange(&ex).is_ok());
}

// ---------------------------------------------------------------------------------------
// Real requests

fn psu_id_of(location: &str) -> String {
    url::Url::parse(location)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "psu-id")
        .map(|(_, v)| v.to_string())
        .unwrap_or_else(|| panic!("no psu-id in {location}"))
}

#[tokio::test]
async fn real_sandbox_responses_are_schema_valid() {
    let sb = TestSandbox::start().await;
    let customers = sb
        .get_ok("/v1/sandbox/customers?withAccounts=true&withAgreements=true")
        .await;
    let number = common::private_customer_number(&customers.json);

    // Errors of several kinds.
    let no_consent = sb
        .get_with("/v1/accounts", &[("TPP-Session-ID", "s-1")])
        .await;
    assert_eq!(no_consent.status, 401, "{}", no_consent.text);
    let unsigned = sb.get_page(&format!("{}/v1/accounts", sb.base)).await;
    assert!(unsigned.status >= 400, "{}", unsigned.text);
    let unknown = sb.get("/v1/no-such-resource").await;
    assert_eq!(unknown.status, 404, "{}", unknown.text);
    let wrong_method = sb.delete("/v1/accounts").await;
    assert_eq!(wrong_method.status, 405, "{}", wrong_method.text);
    let bad_bool = sb.get("/v1/sandbox/customers?withAccounts=maybe").await;
    assert_eq!(bad_bool.status, 400, "{}", bad_bool.text);

    // SCA, then the account resources.
    let sca = no_consent.sca_redirect().expect("scaRedirect").to_string();
    let to_tpp = common::sca::complete_sca(&sca, &number).await;
    assert!(to_tpp.starts_with(REDIRECT), "{to_tpp}");
    let psu = psu_id_of(&to_tpp);
    let h = [("PSU-ID", psu.as_str()), ("TPP-Session-ID", "s-1")];
    let accounts = sb.get_with_ok("/v1/accounts", &h).await;
    let id = accounts.json["accounts"][0]["resourceId"]
        .as_str()
        .expect("an account")
        .to_string();
    for path in [
        format!("/v1/accounts/{id}"),
        format!("/v1/accounts/{id}/balances"),
        format!("/v1/accounts/{id}/transactions?bookingStatus=both"),
        format!("/v1/accounts/{id}/transactions?bookingStatus=booked&limit=2"),
    ] {
        let r = sb.get_with(&path, &h).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
    }
    let bad_period = sb
        .get_with(
            &format!("/v1/accounts/{id}/transactions?dateFrom=yesterday"),
            &h,
        )
        .await;
    assert_eq!(bad_period.status, 400, "{}", bad_period.text);

    // A payment (any answer is checked; the PIS routes may still be in progress).
    let body = json!({
        "instructedAmount": {"currency": "NOK", "amount": "12.50"},
        "debtorAccount": {"bban": accounts.json["accounts"][0]["bban"], "currency": "NOK"},
        "creditorAccount": {"bban": "12094355778", "currency": "NOK"},
        "creditorName": "Foo Bar",
        "remittanceInformationUnstructured": "schema test"
    })
    .to_string();
    sb.send(
        "POST",
        "/v1/payments/norwegian-domestic-credit-transfers",
        &h,
        Some(&body),
    )
    .await;

    let seen = *sb.seen.lock().unwrap();
    assert!(seen >= 12, "the observer saw {seen} responses");
    sb.stop().await;
}
