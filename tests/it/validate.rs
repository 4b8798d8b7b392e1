//! The request validation rules of `client::validate`, one test per rule: each builds a
//! request that passes, breaks exactly that rule, and checks that the problem names the
//! field and says why. The templates of the catalogue pass every rule.

use psd2_console::client::validate::{
    MAX_BASKET_PAYMENTS, Problem, engine_fills, is_uuid, validate, validate_body,
};
use psd2_console::xs2a::operations::{self, OPERATIONS, Operation};
use serde_json::{Value, json};

const UUID: &str = "99391c7e-ad88-49ec-a2ad-99ddcb1f7721";

fn op(id: &str) -> &'static Operation {
    operations::find(id).unwrap_or_else(|| panic!("no operation {id}"))
}

fn today() -> chrono::NaiveDate {
    chrono::Utc::now().date_naive()
}

/// The default template of `id`, rendered, as JSON.
fn template(id: &str) -> Value {
    serde_json::from_str(&op(id).templates()[0].render(today())).unwrap()
}

/// Problems of `id` with `body` and the engine filling what it fills after SCA.
fn check(id: &str, params: &[(&str, &str)], body: Option<&Value>) -> Vec<Problem> {
    let o = op(id);
    let params: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let text = body.map(|b| serde_json::to_string_pretty(b).unwrap());
    validate(o, &params, text.as_deref(), &engine_fills(o, true, false))
}

fn fields(p: &[Problem]) -> Vec<&str> {
    p.iter().map(|p| p.field.as_str()).collect()
}

#[test]
fn every_template_of_every_operation_passes() {
    for o in OPERATIONS {
        for t in o.templates() {
            let text = t.render(today());
            assert!(
                !text.contains("{{"),
                "{} {}: unrendered placeholder",
                o.id,
                t.name
            );
            let body: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} {}: not JSON: {e}", o.id, t.name));
            let mut problems = validate_body(o, &[], &text);
            // The basket template holds placeholders on purpose: the ids come from payments
            // created before.
            if o.id == "baskets.create" {
                assert_eq!(
                    fields(&problems),
                    ["body.paymentIds[0]", "body.paymentIds[1]"]
                );
                problems.clear();
            }
            assert!(problems.is_empty(), "{} {}: {problems:?}", o.id, t.name);
            assert!(body.is_object());
        }
    }
}

#[test]
fn a_missing_required_path_parameter_is_named() {
    let p = check("accounts.balances", &[], None);
    assert_eq!(fields(&p), ["account-id"]);
    assert!(p[0].reason.contains("required"), "{}", p[0].reason);
    assert!(check("accounts.balances", &[("account-id", "a1")], None).is_empty());
}

#[test]
fn a_missing_required_header_is_named_unless_the_engine_fills_it() {
    let o = op("baskets.create");
    let body = r#"{"paymentIds": ["p1"]}"#;
    // Before SCA the engine has no PSU-ID, and the basket header table requires one.
    let before = validate(o, &[], Some(body), &engine_fills(o, false, false));
    assert_eq!(fields(&before), ["PSU-ID"]);
    assert!(before[0].reason.contains("SCA"), "{}", before[0].reason);
    // After SCA it is filled, or the user types one.
    assert!(validate(o, &[], Some(body), &engine_fills(o, true, false)).is_empty());
    let typed = vec![("PSU-ID".to_string(), UUID.to_string())];
    assert!(validate(o, &typed, Some(body), &engine_fills(o, false, false)).is_empty());
    // A required header the engine does not fill is reported too.
    assert_eq!(
        fields(&validate(o, &[], Some(body), &[])),
        [
            "X-Request-ID",
            "TPP-Session-ID",
            "PSU-ID",
            "PSU-IP-Address",
            "TPP-Redirect-URI",
            "x-accept-fix",
            "Date",
            "TPP-Signature-Certificate",
            "Signature"
        ]
    );
}

#[test]
fn malformed_uuids_are_named() {
    for h in [
        "X-Request-ID",
        "TPP-Session-ID",
        "PSU-ID",
        "PSU-Corporate-ID",
        "PSU-Device-ID",
    ] {
        let p = check("accounts.list", &[(h, "not-a-uuid")], None);
        assert_eq!(fields(&p), [h], "{h}");
        assert!(p[0].reason.contains("not a UUID"), "{}", p[0].reason);
        assert!(check("accounts.list", &[(h, UUID)], None).is_empty(), "{h}");
    }
    assert!(is_uuid(UUID));
    for bad in [
        "",
        "99391c7ead8849eca2ad99ddcb1f7721",
        "99391c7e-ad88-49ec-a2ad-99ddcb1f772",
        "g9391c7e-ad88-49ec-a2ad-99ddcb1f7721",
    ] {
        assert!(!is_uuid(bad), "{bad}");
    }
}

#[test]
fn header_values_must_be_ascii() {
    let p = check("accounts.list", &[("PSU-User-Agent", "Mozilla ø")], None);
    assert_eq!(fields(&p), ["PSU-User-Agent"]);
    assert!(check("accounts.list", &[("PSU-User-Agent", "Mozilla/5.0")], None).is_empty());
}

#[test]
fn malformed_json_gives_line_and_column() {
    let o = op("payments.domestic.create");
    let p = validate_body(
        o,
        &[],
        "{\n  \"instructedAmount\": {\"currency\": \"NOK\",,}\n}",
    );
    assert_eq!(fields(&p), ["body"]);
    assert!(p[0].reason.contains("line 2, column"), "{}", p[0].reason);
    assert!(validate_body(o, &[], &template("payments.domestic.create").to_string()).is_empty());
}

#[test]
fn an_amount_must_be_a_string_with_at_most_two_decimals() {
    let mut b = template("payments.domestic.create");
    b["instructedAmount"]["amount"] = json!(123.5);
    let p = check("payments.domestic.create", &[], Some(&b));
    assert_eq!(fields(&p), ["body.instructedAmount.amount"]);
    assert!(p[0].reason.contains("string"), "{}", p[0].reason);
    b["instructedAmount"]["amount"] = json!("123.505");
    let p = check("payments.domestic.create", &[], Some(&b));
    assert_eq!(fields(&p), ["body.instructedAmount.amount"]);
    assert!(p[0].reason.contains("2 fraction digits"), "{}", p[0].reason);
    // Inside bulk entries too.
    let mut bulk = template("payments.bulk.create");
    bulk["payments"][1]["instructedAmount"]["amount"] = json!(200);
    let p = check("payments.bulk.create", &[], Some(&bulk));
    assert_eq!(fields(&p), ["body.payments[1].instructedAmount.amount"]);
    b["instructedAmount"]["amount"] = json!("123.50");
    assert!(check("payments.domestic.create", &[], Some(&b)).is_empty());
}

/// The Berlin Group pattern `-?[0-9]{1,14}(\.[0-9]{1,3})?`, the same check as the sandbox's
/// (`psd2_console::xs2a::amount`); an instructed amount above zero.
#[test]
fn an_amount_outside_the_berlin_group_pattern_or_not_positive_is_named() {
    let mut b = template("payments.domestic.create");
    for bad in [" 10", "+10", "10.", "1e3", "0", "-1.00"] {
        b["instructedAmount"]["amount"] = json!(bad);
        let p = check("payments.domestic.create", &[], Some(&b));
        assert_eq!(fields(&p), ["body.instructedAmount.amount"], "{bad:?}");
        assert!(
            p[0].reason.contains("-?[0-9]{1,14}") || p[0].reason.contains("greater than zero"),
            "{bad:?}: {}",
            p[0].reason
        );
        // The sandbox refuses the same strings, with the same sentence.
        let shared = psd2_console::xs2a::amount::check_amount(bad, true).unwrap_err();
        assert_eq!(p[0].reason, shared.reason(bad));
    }
    for good in ["10", "10.5", "0.01"] {
        b["instructedAmount"]["amount"] = json!(good);
        assert!(
            check("payments.domestic.create", &[], Some(&b)).is_empty(),
            "{good:?}"
        );
    }
}

/// KID references: the sandbox's check (`psd2_console::xs2a::check_digits::check_kid`).
#[test]
fn a_kid_with_a_wrong_check_digit_or_length_is_named() {
    let mut b = template("payments.domestic.create");
    for (kid, fine) in [
        ("1234567897", true),
        ("1234567892", true),
        ("1234567891", false),
        ("1", false),
    ] {
        b["remittanceInformationStructuredArray"] =
            json!([{"reference": kid, "referenceType": "KID"}]);
        let p = check("payments.domestic.create", &[], Some(&b));
        if fine {
            assert!(p.is_empty(), "{kid}: {p:?}");
        } else {
            assert_eq!(
                fields(&p),
                ["body.remittanceInformationStructuredArray[0].reference"],
                "{kid}"
            );
            assert!(p[0].reason.contains("KID"), "{}", p[0].reason);
        }
    }
}

#[test]
fn names_over_70_characters_are_named() {
    for field in [
        "creditorName",
        "debtorName",
        "ultimateCreditor",
        "ultimateDebtor",
    ] {
        let mut b = template("payments.domestic.create");
        b[field] = json!("x".repeat(71));
        let p = check("payments.domestic.create", &[], Some(&b));
        assert_eq!(fields(&p), [format!("body.{field}").as_str()], "{field}");
        assert!(p[0].reason.contains("71 characters"), "{}", p[0].reason);
        b[field] = json!("ø".repeat(70)); // characters, not bytes
        assert!(
            check("payments.domestic.create", &[], Some(&b)).is_empty(),
            "{field}"
        );
    }
}

#[test]
fn sepa_and_swift_need_the_structured_address_and_the_bic() {
    for id in [
        "payments.sepa.create",
        "payments.swift.create",
        "payments.cross-border.create",
    ] {
        let mut b = template(id);
        assert!(check(id, &[], Some(&b)).is_empty(), "{id}");
        b["creditorAddress"]
            .as_object_mut()
            .unwrap()
            .remove("townName");
        b.as_object_mut().unwrap().remove("creditorAgent");
        let p = check(id, &[], Some(&b));
        assert_eq!(
            fields(&p),
            ["body.creditorAddress.townName", "body.creditorAgent"],
            "{id}"
        );
        assert!(p[0].reason.contains("2026-08-13"), "{}", p[0].reason);
        b.as_object_mut().unwrap().remove("creditorAddress");
        let p = check(id, &[], Some(&b));
        assert!(
            fields(&p).contains(&"body.creditorAddress.country"),
            "{id}: {p:?}"
        );
    }
    // A domestic payment needs none of it.
    let mut d = template("payments.domestic.create");
    d.as_object_mut().unwrap().remove("creditorAddress");
    assert!(check("payments.domestic.create", &[], Some(&d)).is_empty());
    // The generic payment operations know the product from the path parameter (no body
    // there, so nothing to check), and a SEPA template body is fine anywhere it is valid.
}

#[test]
fn a_basket_holds_1_to_100_distinct_payments() {
    let ids = |n: usize| -> Vec<String> { (0..n).map(|i| format!("pay-{i}")).collect() };
    let ok = json!({ "paymentIds": ids(MAX_BASKET_PAYMENTS) });
    assert!(check("baskets.create", &[("PSU-ID", UUID)], Some(&ok)).is_empty());
    let over = json!({ "paymentIds": ids(MAX_BASKET_PAYMENTS + 1) });
    let p = check("baskets.create", &[("PSU-ID", UUID)], Some(&over));
    assert_eq!(fields(&p), ["body.paymentIds"]);
    assert!(p[0].reason.contains("101"), "{}", p[0].reason);
    let dup = json!({ "paymentIds": ["a", "b", "a"] });
    let p = check("baskets.create", &[("PSU-ID", UUID)], Some(&dup));
    assert_eq!(fields(&p), ["body.paymentIds[2]"]);
    assert!(p[0].reason.contains("twice"), "{}", p[0].reason);
    let empty = json!({ "paymentIds": [] });
    assert_eq!(
        fields(&check("baskets.create", &[("PSU-ID", UUID)], Some(&empty))),
        ["body.paymentIds"]
    );
    let placeholder = json!({ "paymentIds": ["<paymentId>"] });
    let p = check("baskets.create", &[("PSU-ID", UUID)], Some(&placeholder));
    assert!(p[0].reason.contains("placeholder"), "{}", p[0].reason);
}

#[test]
fn characters_the_bank_refuses_are_named_with_their_path() {
    let mut b = template("payments.domestic.create");
    b["remittanceInformationUnstructured"] = json!("Pizza 🍕");
    let p = check("payments.domestic.create", &[], Some(&b));
    assert_eq!(fields(&p), ["body.remittanceInformationUnstructured"]);
    assert!(p[0].reason.contains("U+1F355"), "{}", p[0].reason);
    b["remittanceInformationUnstructured"] = json!("Bøker – «ærlig» €");
    assert!(check("payments.domestic.create", &[], Some(&b)).is_empty());
    b["creditorName"] = json!("Иван");
    assert_eq!(
        fields(&check("payments.domestic.create", &[], Some(&b))),
        ["body.creditorName"]
    );
    // The same definition as the sandbox's.
    for c in ['🍕', 'И', '\n', 'ø', '€', 'a'] {
        assert_eq!(
            psd2_console::xs2a::charset::is_allowed_char(c),
            psd2_console::sandbox::domain::rules::is_allowed_char(c)
        );
    }
}

#[test]
fn periodic_months_must_be_distinct() {
    let mut b = template("payments.periodic.create");
    b["monthsOfExecution"] = json!(["1", "3", "3"]);
    let p = check("payments.periodic.create", &[], Some(&b));
    assert_eq!(fields(&p), ["body.monthsOfExecution[2]"]);
}
