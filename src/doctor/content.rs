//! The doctor's checks of what is signed and sent besides the signature: the operation,
//! `Digest`, `Date`, the operation's header table, the PSD2 role and the body rules.

use crate::cert::Psd2Role;
use crate::client::validate;
use crate::signing::{TrustedKey, VerifyPolicy, digest_header_value, imf_fixdate};
use crate::xs2a::headers as h;
use crate::xs2a::operations::{Group, ParamKind};

use super::{Checks, Context, SentAtSource, Status};

const RULE_OPERATION: &str = "Endpoints";
const RULE_DIGEST: &str = "Authentication 9";
const RULE_DATE: &str = "Authentication 4 (RFC 7231 IMF-fixdate)";
const RULE_SKEW: &str = "Authentication 4; Limits (clock deviation 60 s)";
const RULE_HEADERS: &str = "Endpoints (header tables); Authentication 11, 12, 16";
const RULE_VALUES: &str = "Endpoints (header tables); Resources (UUID, RFC 4122)";
const RULE_ROLE: &str = "What the service does (registered AISP/PISP); Authentication 2";
const RULE_BODY: &str = "Payment initiation body; Errors (UTF-8 characters, KID); Versioning (amount-as-string, structured addresses)";
const RULE_COMPACT: &str = "Payment initiation body (sent with no insignificant whitespace)";

/// `operation`: which operation of the catalogue the method and path are.
pub(super) fn operation(cx: &Context<'_>, checks: &mut Checks) {
    let r = cx.request;
    match &cx.operation {
        Some((op, _)) => checks.push(
            "operation",
            Status::Pass,
            RULE_OPERATION,
            format!("{} {} is {} ({})", r.method, r.path(), op.id, op.title),
        ),
        None => checks.push(
            "operation",
            Status::Warn,
            RULE_OPERATION,
            format!(
                "{} {} is no operation of the interface document: its header table, PSD2 role \
                 and body rules are not checked",
                r.method,
                r.path()
            ),
        ),
    }
}

/// `digest`: the `Digest` header against the exact body bytes (rule 9: `SHA-256=<base64>`);
/// when it differs, whether it matches the body re-serialised.
pub(super) fn digest(cx: &Context<'_>, checks: &mut Checks) {
    let body = &cx.request.body;
    let Some(header) = cx.request.header(h::DIGEST).map(str::trim) else {
        if body.is_empty() {
            checks.push("digest", Status::Pass, RULE_DIGEST, "no body, no Digest");
        } else {
            checks.push(
                "digest",
                Status::Fail,
                RULE_DIGEST,
                format!(
                    "the body has {} bytes but there is no Digest header; expected Digest: {}",
                    body.len(),
                    digest_header_value(body)
                ),
            );
        }
        return;
    };
    let computed = digest_header_value(body);
    let (algorithm, value) = header.split_once('=').unwrap_or((header, ""));
    if algorithm == "SHA-256" || algorithm == "sha-256" {
        if value == &computed["SHA-256=".len()..] {
            checks.push(
                "digest",
                Status::Pass,
                RULE_DIGEST,
                format!("SHA-256 of the {} body bytes matches", body.len()),
            );
            return;
        }
        let message = match reserialisation(body, header) {
            Some(form) => format!(
                "Digest {header} matches the body re-serialised as {form}, not the {} bytes \
                 sent (which hash to {computed}): the body was re-serialised after signing; \
                 sign and send the same bytes",
                body.len()
            ),
            None => format!(
                "expected {computed} (SHA-256 of the {} body bytes), found {header}",
                body.len()
            ),
        };
        checks.push("digest", Status::Fail, RULE_DIGEST, message);
        return;
    }
    let message = if algorithm.eq_ignore_ascii_case("SHA-512") {
        let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA512, body);
        let matches = base64_encode(d.as_ref()) == value;
        format!(
            "the document allows SHA-256 only; found SHA-512 ({}); expected {computed}",
            if matches {
                "it matches the body"
            } else {
                "it does not match the body either"
            }
        )
    } else {
        format!("expected {computed}, found the algorithm {algorithm:?} ({header})")
    };
    checks.push("digest", Status::Fail, RULE_DIGEST, message);
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The form of the body (compact or pretty JSON, with or without a final newline) whose
/// `Digest` is `header`, if any.
fn reserialisation(body: &[u8], header: &str) -> Option<&'static str> {
    let json: serde_json::Value = serde_json::from_slice(body).ok()?;
    let compact = serde_json::to_vec(&json).ok()?;
    let pretty = serde_json::to_vec_pretty(&json).ok()?;
    let with_newline = |mut v: Vec<u8>| {
        v.push(b'\n');
        v
    };
    let forms = [
        ("compact JSON", compact.clone()),
        ("pretty-printed JSON", pretty.clone()),
        ("compact JSON with a final newline", with_newline(compact)),
        (
            "pretty-printed JSON with a final newline",
            with_newline(pretty),
        ),
    ];
    forms
        .into_iter()
        .find(|(_, bytes)| digest_header_value(bytes) == header.replacen("sha-256=", "SHA-256=", 1))
        .map(|(name, _)| name)
}

/// `date.format` and `date.skew`: an IMF-fixdate (rule 4) within 60 s of the send time.
pub(super) fn date(cx: &Context<'_>, checks: &mut Checks) {
    let Some(value) = cx.request.header(h::DATE).map(str::trim) else {
        checks.push(
            "date.format",
            Status::Fail,
            RULE_DATE,
            "the request has no Date header; expected e.g. \"Sun, 07 Jun 2026 20:51:35 GMT\"",
        );
        checks.push("date.skew", Status::Warn, RULE_SKEW, "not checked: no Date");
        return;
    };
    match crate::signing::parse_imf_fixdate(value) {
        Ok(_) => checks.push("date.format", Status::Pass, RULE_DATE, value.to_string()),
        Err(e) => checks.push("date.format", Status::Fail, RULE_DATE, e.to_string()),
    }
    let Ok(date) = httpdate::parse_http_date(value) else {
        checks.push(
            "date.skew",
            Status::Warn,
            RULE_SKEW,
            "not checked: no date in the Date header",
        );
        return;
    };
    let max = VerifyPolicy::default().max_skew_secs;
    // The bank judges Date at its own clock: with a moved sandbox clock that is the send
    // time plus the offset (the console signs at the sandbox's time).
    let skew = crate::cert::unix_seconds(date) - crate::cert::unix_seconds(cx.bank_at);
    let when = match cx.sent_at_source {
        SentAtSource::Option => "--sent-at",
        SentAtSource::Recorded => "as recorded",
        SentAtSource::Now => "now: give --sent-at for an old request",
    };
    let sent = match cx.clock_offset {
        Some(offset) => format!(
            "the sandbox's time when it was sent, {} (the send time {} ({when}) {offset:+} s: \
             a sandbox clock offset was in effect)",
            imf_fixdate(cx.bank_at),
            imf_fixdate(cx.sent_at),
        ),
        None => format!("the send time {} ({when})", imf_fixdate(cx.sent_at)),
    };
    if skew.unsigned_abs() > max {
        checks.push(
            "date.skew",
            Status::Fail,
            RULE_SKEW,
            format!(
                "Date {value} is {} s {} {sent}; expected at most {max} s",
                skew.unsigned_abs(),
                if skew < 0 { "before" } else { "after" }
            ),
        );
    } else {
        checks.push(
            "date.skew",
            Status::Pass,
            RULE_SKEW,
            format!("{skew} s from {sent}; at most {max} s"),
        );
    }
}

/// The request's path parameters and headers as the validator's (name, value) list.
fn values(cx: &Context<'_>) -> Vec<(String, String)> {
    let mut v = cx
        .operation
        .as_ref()
        .map(|(_, path)| path.clone())
        .unwrap_or_default();
    v.extend(cx.request.headers.iter().cloned());
    v
}

/// `headers.required` and `headers.values`: the operation's header table (the console's
/// [`crate::xs2a::operations::Operation::header_params`]) and the header value rules of the
/// request validator ([`validate::validate`]).
pub(super) fn headers(cx: &Context<'_>, checks: &mut Checks) {
    let Some((op, _)) = &cx.operation else {
        for (id, rule) in [
            ("headers.required", RULE_HEADERS),
            ("headers.values", RULE_VALUES),
        ] {
            checks.push(id, Status::Warn, rule, "not checked: unknown operation");
        }
        return;
    };
    let present = |name: &str| {
        cx.request
            .header(name)
            .is_some_and(|v| !v.trim().is_empty())
    };
    let missing: Vec<&str> = op
        .header_params()
        .iter()
        .filter(|p| p.required && !present(p.name))
        .map(|p| p.name)
        .collect();
    let (status, message) = if missing.is_empty() {
        (
            Status::Pass,
            format!("every header {} requires is present", op.id),
        )
    } else {
        (
            Status::Fail,
            format!("{} requires {}: missing", op.id, missing.join(", ")),
        )
    };
    checks.push("headers.required", status, RULE_HEADERS, message);
    let problems: Vec<String> = validate::validate(op, &values(cx), None, &[])
        .into_iter()
        // The characters of the Signature value are `signature.encoding`'s rule (RFC 2047).
        .filter(|p| !p.field.eq_ignore_ascii_case(h::SIGNATURE))
        .filter(|p| {
            op.param(&p.field)
                .is_some_and(|param| param.kind == ParamKind::Header)
                && present(&p.field)
        })
        .map(|p| p.to_string())
        .collect();
    checks.pass_unless(
        "headers.values",
        RULE_VALUES,
        &problems,
        "header values are well-formed",
    );
}

/// The PSD2 roles of which the certificate needs one for `group` (the sandbox's rules: AIS
/// needs `PSP_AI`, payments and baskets `PSP_PI`, PSU registration `PSP_PI`, agreements
/// either); empty when none is needed.
pub(super) fn roles_needed(group: Group, id: &str) -> &'static [Psd2Role] {
    match (group, id) {
        (Group::Ais, _) => &[Psd2Role::PspAi],
        (Group::Pis | Group::Baskets, _) => &[Psd2Role::PspPi],
        (Group::Psu, "psu.agreements") => &[Psd2Role::PspAi, Psd2Role::PspPi],
        (Group::Psu, _) => &[Psd2Role::PspPi],
        (Group::Sandbox, _) => &[],
    }
}

/// `cert.role`: the PSD2 role the operation needs in the certificate's qcStatements.
pub(super) fn role(cx: &Context<'_>, key: Result<&TrustedKey, &String>, checks: &mut Checks) {
    let (Some((op, _)), Ok(key)) = (&cx.operation, key) else {
        checks.push(
            "cert.role",
            Status::Warn,
            RULE_ROLE,
            "not checked: unknown operation or no usable certificate",
        );
        return;
    };
    let needed = roles_needed(op.group, op.id);
    let have = key.certificate.roles();
    let names = |r: &[Psd2Role]| {
        if r.is_empty() {
            "none".to_string()
        } else {
            r.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
        }
    };
    let (status, message) = if needed.is_empty() {
        (Status::Pass, format!("{} needs no PSD2 role", op.id))
    } else if needed.iter().any(|r| have.contains(r)) {
        (
            Status::Pass,
            format!(
                "{} needs {}; the certificate has {}",
                op.id,
                names(needed),
                names(&have)
            ),
        )
    } else {
        (
            Status::Fail,
            format!(
                "{} ({}) needs the PSD2 role {} in the certificate; found {}",
                op.id,
                op.group.label(),
                names(needed).replace(", ", " or "),
                names(&have)
            ),
        )
    };
    checks.push("cert.role", status, RULE_ROLE, message);
}

/// `body.rules` and `body.compact`: the body rules of the request validator (amounts,
/// characters, KID, structured address, basket), built on the sandbox's own checks.
pub(super) fn body(cx: &Context<'_>, checks: &mut Checks) {
    body_rules(cx, checks);
    let body = &cx.request.body;
    if body.iter().all(u8::is_ascii_whitespace) {
        checks.push("body.compact", Status::Pass, RULE_COMPACT, "no body");
    } else if let Some(offset) = insignificant_whitespace(body) {
        checks.push(
            "body.compact",
            Status::Warn,
            RULE_COMPACT,
            format!(
                "white space between JSON tokens at byte {offset}; the document sends bodies \
                 compact (the Digest covers the bytes as sent either way)"
            ),
        );
    } else {
        checks.push(
            "body.compact",
            Status::Pass,
            RULE_COMPACT,
            "no white space between tokens",
        );
    }
}

fn body_rules(cx: &Context<'_>, checks: &mut Checks) {
    let body = &cx.request.body;
    let Some((op, path_values)) = &cx.operation else {
        checks.push(
            "body.rules",
            Status::Warn,
            RULE_BODY,
            "not checked: unknown operation",
        );
        return;
    };
    if op.body.is_none() {
        // White space only (e.g. the newline `echo` adds to raw HTTP text) is no body.
        if body.iter().all(u8::is_ascii_whitespace) {
            checks.push(
                "body.rules",
                Status::Pass,
                RULE_BODY,
                "no body, none needed",
            );
        } else {
            checks.push(
                "body.rules",
                Status::Warn,
                RULE_BODY,
                format!(
                    "{} takes no body; the request carries {} bytes the bank ignores or refuses",
                    op.id,
                    body.len()
                ),
            );
        }
        return;
    }
    if body.is_empty() {
        checks.push(
            "body.rules",
            Status::Fail,
            RULE_BODY,
            format!("{} takes a JSON body; the request has none", op.id),
        );
        return;
    }
    let Ok(text) = std::str::from_utf8(body) else {
        checks.push(
            "body.rules",
            Status::Fail,
            RULE_BODY,
            "the body is not UTF-8; expected a UTF-8 JSON document (What the service does)",
        );
        return;
    };
    let problems: Vec<String> = validate::validate_body(op, path_values, text)
        .iter()
        .map(ToString::to_string)
        .collect();
    checks.pass_unless(
        "body.rules",
        RULE_BODY,
        &problems,
        format!("the {} body follows the body rules", op.id),
    );
}

/// The offset of the first white space outside JSON strings.
fn insignificant_whitespace(body: &[u8]) -> Option<usize> {
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in body.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b.is_ascii_whitespace() {
            return Some(i);
        }
    }
    None
}
