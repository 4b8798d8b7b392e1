//! The signature checks of the doctor, in the verifier's order
//! ([`crate::signing::verify_request`]): the certificate, the `Signature` parameters (RFC 2047,
//! the four parts, the header names), the `keyId`, the signed headers, and the RSA signature
//! with the usual mistakes tried when it does not verify.

use crate::cert::{Certificate, DistinguishedName, Validity};
use crate::client::history::REDACTED;
use crate::signing::{
    ALGORITHM, ELIGIBLE_HEADERS, REQUEST_TARGET, SignatureParams, TrustedKey, build_signing_string,
    decimal_serial, imf_fixdate, parse_key_id, request_target, rfc2047,
};
use crate::xs2a::headers as h;

use super::{Checks, Context, Status};

const RULE_CERT: &str = "Authentication 2";
const RULE_VALIDITY: &str = "Authentication 2 (certificate valid when sent)";
const RULE_ENCODING: &str = "Authentication 8";
const RULE_FORMAT: &str = "Authentication 5";
const RULE_NAMES: &str = "Authentication 5, 6";
const RULE_KEY_ID: &str = "Authentication 5 (keyId)";
const RULE_LISTED: &str = "Authentication 5, 7";
const RULE_ELIGIBLE: &str = "Authentication 6";
const RULE_VERIFY: &str = "Authentication 5, 7";
const RULE_REDACTED: &str = "Authentication 5-8";

/// The four parts of the `Signature` value, in the document's order (rule 5).
const PARTS: [&str; 4] = ["keyId", "algorithm", "headers", "signature"];

/// Most header names whose orders are all tried (7! = 5040 RSA verifications).
const MAX_PERMUTED: usize = 7;

/// Id of the one check that stands for all signature checks when the recording's
/// `Signature` is redacted (the history never stores it).
pub(super) const REDACTED_CHECK: &str = "signature.redacted";

/// Why a later check cannot run.
pub(super) enum Skip {
    /// Each skipped check says "not checked: " and this reason.
    Because(String),
    /// The `Signature` is redacted: [`REDACTED_CHECK`] already says what is not checked,
    /// so the skipped checks add nothing.
    Redacted,
}

impl From<String> for Skip {
    fn from(why: String) -> Self {
        Skip::Because(why)
    }
}

/// Pushes `id` as a warning "not checked: `why`", or nothing for a redacted `Signature`.
fn not_checked(checks: &mut Checks, id: &'static str, rule: &'static str, why: &Skip) {
    if let Skip::Because(why) = why {
        checks.push(id, Status::Warn, rule, format!("not checked: {why}"));
    }
}

/// `cert.parse` and `cert.validity`: the `TPP-Signature-Certificate` as the verifier loads it,
/// valid at the bank's time when the request was sent.
pub(super) fn certificate(cx: &Context<'_>, checks: &mut Checks) -> Result<TrustedKey, String> {
    let key = match cx.request.header(h::TPP_SIGNATURE_CERTIFICATE) {
        None => Err(
            "the request has no TPP-Signature-Certificate header (expected the base64 DER of \
             the eIDAS certificate)"
                .to_string(),
        ),
        Some(v) => Certificate::from_header_value(v.trim())
            .map_err(|e| e.to_string())
            .and_then(|c| TrustedKey::new(c, false).map_err(|e| e.to_string())),
    };
    let key = match key {
        Ok(k) => k,
        Err(message) => {
            checks.push("cert.parse", Status::Fail, RULE_CERT, message.clone());
            checks.push(
                "cert.validity",
                Status::Warn,
                RULE_VALIDITY,
                "not checked: no usable certificate",
            );
            return Err(message);
        }
    };
    let c = &key.certificate;
    checks.push(
        "cert.parse",
        Status::Pass,
        RULE_CERT,
        format!(
            "serial {}, subject {}, issuer {}",
            c.serial_hex(),
            c.subject,
            c.issuer
        ),
    );
    let sent = crate::cert::unix_seconds(cx.bank_at);
    let outside = |what: &str, bound: std::time::SystemTime| {
        format!(
            "{what} {}, the request was sent {}",
            imf_fixdate(bound),
            cx.bank_time()
        )
    };
    let (status, message) = match c.validity_at(sent) {
        Validity::Expired { .. } => (
            Status::Fail,
            outside("expired: valid until", c.not_after_time()),
        ),
        Validity::NotYetValid { .. } => (
            Status::Fail,
            outside("not yet valid: valid from", c.not_before_time()),
        ),
        Validity::ExpiresSoon { days } => (
            Status::Warn,
            format!(
                "valid when sent, but expires in {days} day(s) ({})",
                imf_fixdate(c.not_after_time())
            ),
        ),
        Validity::Valid { .. } => (
            Status::Pass,
            format!(
                "valid when sent ({} to {})",
                imf_fixdate(c.not_before_time()),
                imf_fixdate(c.not_after_time())
            ),
        ),
    };
    checks.push("cert.validity", status, RULE_VALIDITY, message);
    Ok(key)
}

/// One `key=value` part of a `Signature` value as written.
struct Part {
    key: String,
    value: String,
    quoted: bool,
}

/// Splits a (decoded) `Signature` value at the commas outside quotes.
fn parts(value: &str) -> Vec<Part> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_quotes = false;
    for c in value.chars().chain(std::iter::once(',')) {
        match c {
            '"' => {
                in_quotes = !in_quotes;
                current.push(c);
            }
            ',' if !in_quotes => {
                let text = std::mem::take(&mut current);
                let text = text.trim();
                if text.is_empty() {
                    continue;
                }
                let (key, value) = text.split_once('=').unwrap_or((text, ""));
                let value = value.trim();
                let quoted = value.len() >= 2 && value.starts_with('"') && value.ends_with('"');
                out.push(Part {
                    key: key.trim().to_string(),
                    value: if quoted {
                        value[1..value.len() - 1].to_string()
                    } else {
                        value.to_string()
                    },
                    quoted,
                });
            }
            _ => current.push(c),
        }
    }
    out
}

/// `signature.encoding`, `signature.format` and `signature.names`: the `Signature` value as
/// the document writes it (rules 5, 6, 8), parsed as the verifier parses it.
pub(super) fn parameters(cx: &Context<'_>, checks: &mut Checks) -> Result<SignatureParams, Skip> {
    let skip_all = |checks: &mut Checks, status: Status, why: &str| -> Result<_, Skip> {
        checks.push(
            "signature.encoding",
            Status::Warn,
            RULE_ENCODING,
            format!("not checked: {why}"),
        );
        checks.push("signature.format", status, RULE_FORMAT, why.to_string());
        checks.push(
            "signature.names",
            Status::Warn,
            RULE_NAMES,
            format!("not checked: {why}"),
        );
        Err(Skip::Because(why.to_string()))
    };
    let Some(raw) = cx.request.header(h::SIGNATURE).map(str::trim) else {
        return skip_all(
            checks,
            Status::Fail,
            "the request has no Signature header (Authentication 3: every request is signed)",
        );
    };
    if raw == REDACTED {
        // One warning, not one per check it stops.
        checks.push(
            REDACTED_CHECK,
            Status::Warn,
            RULE_REDACTED,
            "the Signature value is redacted in this recording (the console never stores it), \
             so its encoding and format, keyId, the signed headers and the RSA signature are \
             not checked",
        );
        return Err(Skip::Redacted);
    }
    // RFC 2047 (rule 8)
    let decoded = match rfc2047::decode_if_encoded(raw) {
        Ok(d) => d.into_owned(),
        Err(e) => {
            let why = format!("the RFC 2047 encoded word does not decode: {e}");
            checks.push(
                "signature.encoding",
                Status::Fail,
                RULE_ENCODING,
                why.clone(),
            );
            checks.push(
                "signature.format",
                Status::Warn,
                RULE_FORMAT,
                "not checked: undecodable",
            );
            checks.push(
                "signature.names",
                Status::Warn,
                RULE_NAMES,
                "not checked: undecodable",
            );
            return Err(why.into());
        }
    };
    let encoded = rfc2047::is_encoded(raw);
    let (status, message) = match (encoded, decoded.is_ascii()) {
        (false, true) => (Status::Pass, "ASCII, sent plain".to_string()),
        (true, false) => (
            Status::Pass,
            "not ASCII, sent RFC 2047-encoded as one encoded word".to_string(),
        ),
        (true, true) => (
            Status::Pass,
            "RFC 2047-encoded (the plain value would be ASCII too)".to_string(),
        ),
        (false, false) => {
            let c = decoded.chars().find(|c| !c.is_ascii()).unwrap_or('?');
            (
                Status::Fail,
                format!(
                    "the value holds {c:?} (not ASCII) but is sent plain; expected the whole \
                     value RFC 2047-encoded: {}",
                    shorten(&rfc2047::encode_utf8_b(&decoded))
                ),
            )
        }
    };
    checks.push("signature.encoding", status, RULE_ENCODING, message);
    // The four parts (rule 5)
    let written = parts(&decoded);
    let mut problems = Vec::new();
    let keys: Vec<&str> = written.iter().map(|p| p.key.as_str()).collect();
    if keys != PARTS {
        problems.push(format!(
            "expected the parts {} in that order, found {}",
            PARTS.join(", "),
            if keys.is_empty() {
                "none".to_string()
            } else {
                keys.join(", ")
            }
        ));
    }
    for p in written.iter().filter(|p| !p.quoted) {
        problems.push(format!(
            "{} is not quoted: expected {}=\"{}\"",
            p.key, p.key, p.value
        ));
    }
    let params = match SignatureParams::parse(raw) {
        Ok(p) => p,
        Err(e) => {
            problems.push(e.to_string());
            let why = problems.join("; ");
            checks.push("signature.format", Status::Fail, RULE_FORMAT, why.clone());
            checks.push(
                "signature.names",
                Status::Warn,
                RULE_NAMES,
                "not checked: unparsable",
            );
            return Err(why.into());
        }
    };
    if !params.algorithm.eq_ignore_ascii_case(ALGORITHM) {
        problems.push(format!(
            "algorithm=\"{}\"; expected \"{ALGORITHM}\" (the certificate's RSA key)",
            params.algorithm
        ));
    }
    if problems.is_empty() {
        checks.push(
            "signature.format",
            Status::Pass,
            RULE_FORMAT,
            "keyId, algorithm=\"rsa-sha256\", headers, signature: in order and quoted",
        );
    } else {
        checks.push(
            "signature.format",
            Status::Fail,
            RULE_FORMAT,
            problems.join("; "),
        );
    }
    // Header names (rules 5, 6): lower case, eligible, once each.
    let names_written: Vec<&str> = written
        .iter()
        .find(|p| p.key == "headers")
        .map(|p| p.value.split_whitespace().collect())
        .unwrap_or_default();
    let mut problems = Vec::new();
    let upper: Vec<&str> = names_written
        .iter()
        .copied()
        .filter(|n| *n != n.to_ascii_lowercase())
        .collect();
    if !upper.is_empty() {
        problems.push(format!(
            "expected lower-case names, found {}",
            upper.join(" ")
        ));
    }
    let ineligible: Vec<&str> = names_written
        .iter()
        .copied()
        .filter(|n| {
            let l = n.to_ascii_lowercase();
            l != REQUEST_TARGET && !ELIGIBLE_HEADERS.contains(&l.as_str())
        })
        .collect();
    if !ineligible.is_empty() {
        problems.push(format!(
            "{} not eligible for signing (eligible: {}, and {REQUEST_TARGET})",
            ineligible.join(" "),
            ELIGIBLE_HEADERS.join(" ")
        ));
    }
    for (i, n) in params.headers.iter().enumerate() {
        if params.headers[..i].contains(n) {
            problems.push(format!("{n} is listed twice"));
        }
    }
    if problems.is_empty() {
        checks.push(
            "signature.names",
            Status::Pass,
            RULE_NAMES,
            format!("headers=\"{}\"", params.headers.join(" ")),
        );
    } else {
        checks.push(
            "signature.names",
            Status::Fail,
            RULE_NAMES,
            problems.join("; "),
        );
    }
    Ok(params)
}

/// A long value cut for a message.
fn shorten(s: &str) -> String {
    if s.chars().count() <= 60 {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(57).collect::<String>())
    }
}

/// `keyid.format`, `keyid.serial` and `keyid.issuer`: `SN=<upper-case hex serial>,CA=<issuer
/// DN in RFC 2253 form>` against the certificate (rule 5).
pub(super) fn key_id(
    params: Result<&SignatureParams, &Skip>,
    key: Result<&TrustedKey, &String>,
    checks: &mut Checks,
) {
    let ids = ["keyid.format", "keyid.serial", "keyid.issuer"];
    let (params, key) = match (params, key) {
        (Ok(p), Ok(k)) => (p, k),
        (Err(why), _) => {
            for id in ids {
                not_checked(checks, id, RULE_KEY_ID, why);
            }
            return;
        }
        (_, Err(why)) => {
            for id in ids {
                checks.push(id, Status::Warn, RULE_KEY_ID, format!("not checked: {why}"));
            }
            return;
        }
    };
    let cert = &key.certificate;
    let (serial, issuer) = match parse_key_id(&params.key_id) {
        Ok(x) => x,
        Err(e) => {
            checks.push(ids[0], Status::Fail, RULE_KEY_ID, e.to_string());
            for id in &ids[1..] {
                checks.push(
                    id,
                    Status::Warn,
                    RULE_KEY_ID,
                    "not checked: malformed keyId",
                );
            }
            return;
        }
    };
    checks.push(
        ids[0],
        Status::Pass,
        RULE_KEY_ID,
        format!("keyId=\"{}\"", params.key_id),
    );
    let rest = params.key_id.trim().trim_start_matches("SN=");
    let (sn_text, ca_text) = rest.split_once(",CA=").unwrap_or((rest, ""));
    let expected_sn = cert.serial_hex();
    if serial != cert.serial && decimal_serial(sn_text).is_some_and(|d| d == cert.serial) {
        checks.push(
            ids[1],
            Status::Fail,
            RULE_KEY_ID,
            format!(
                "SN={sn_text} is the certificate's serial {expected_sn} written in decimal: the \
                 same serial in decimal; write it in upper-case hex: SN={expected_sn}"
            ),
        );
    } else if serial != cert.serial {
        checks.push(
            ids[1],
            Status::Fail,
            RULE_KEY_ID,
            format!("expected SN={expected_sn} (the certificate's serial), found SN={sn_text}"),
        );
    } else if sn_text != expected_sn {
        checks.push(
            ids[1],
            Status::Warn,
            RULE_KEY_ID,
            format!(
                "SN={sn_text} is the certificate's serial, but the document writes it \
                 upper-case hex without prefix or leading zeros: SN={expected_sn}"
            ),
        );
    } else {
        checks.push(ids[1], Status::Pass, RULE_KEY_ID, format!("SN={sn_text}"));
    }
    let expected_ca = cert.issuer.to_rfc2253();
    if issuer.matches(&cert.issuer) {
        if ca_text == expected_ca {
            checks.push(ids[2], Status::Pass, RULE_KEY_ID, format!("CA={ca_text}"));
        } else {
            checks.push(
                ids[2],
                Status::Warn,
                RULE_KEY_ID,
                format!(
                    "CA={ca_text} names the issuer attribute by attribute, but is not written \
                     in the RFC 2253 form a strict bank compares: CA={expected_ca}"
                ),
            );
        }
        return;
    }
    let reversed = DistinguishedName {
        attributes: issuer.attributes.iter().rev().cloned().collect(),
    };
    let message = if reversed.matches(&cert.issuer) {
        format!(
            "the issuer DN is in X.500 order (most significant attribute first): found \
             CA={ca_text}, expected RFC 2253 order (most specific first) CA={expected_ca}"
        )
    } else {
        format!(
            "expected CA={expected_ca} (the certificate's issuer), found CA={ca_text} ({})",
            issuer.difference(&cert.issuer).unwrap_or_default()
        )
    };
    checks.push(ids[2], Status::Fail, RULE_KEY_ID, message);
}

/// `signature.listed` and `signature.eligible`: every listed header is present (rule 7), every
/// eligible header present is listed (rule 6).
pub(super) fn signed_headers(
    cx: &Context<'_>,
    params: Result<&SignatureParams, &Skip>,
    checks: &mut Checks,
) {
    let params = match params {
        Ok(p) => p,
        Err(why) => {
            for (id, rule) in [
                ("signature.listed", RULE_LISTED),
                ("signature.eligible", RULE_ELIGIBLE),
            ] {
                not_checked(checks, id, rule, why);
            }
            return;
        }
    };
    let absent: Vec<&str> = params
        .headers
        .iter()
        .map(String::as_str)
        .filter(|n| *n != REQUEST_TARGET && cx.request.header(n).is_none())
        .collect();
    if absent.is_empty() {
        checks.push(
            "signature.listed",
            Status::Pass,
            RULE_LISTED,
            "every listed header is in the request",
        );
    } else {
        checks.push(
            "signature.listed",
            Status::Fail,
            RULE_LISTED,
            format!(
                "the Signature lists {} but the request has no such header",
                absent.join(", ")
            ),
        );
    }
    let unsigned: Vec<&str> = ELIGIBLE_HEADERS
        .into_iter()
        .filter(|n| cx.request.header(n).is_some() && !params.headers.iter().any(|l| l == n))
        .collect();
    if unsigned.is_empty() {
        checks.push(
            "signature.eligible",
            Status::Pass,
            RULE_ELIGIBLE,
            "every eligible header in the request is signed",
        );
    } else {
        checks.push(
            "signature.eligible",
            Status::Fail,
            RULE_ELIGIBLE,
            format!(
                "{} in the request but not signed: expected every eligible header present \
                 ({}) in the headers parameter",
                unsigned.join(", "),
                ELIGIBLE_HEADERS.join(" ")
            ),
        );
    }
}

/// `signature.verify`: the RSA-SHA256 signature over the signing string rebuilt from the
/// headers parameter; when it fails, the usual mistakes are tried ([`likely_mistake`]).
pub(super) fn verify(
    cx: &Context<'_>,
    params: Result<&SignatureParams, &Skip>,
    key: Result<&TrustedKey, &String>,
    checks: &mut Checks,
) {
    let (params, key) = match (params, key) {
        (Ok(p), Ok(k)) => (p, k),
        (Err(why), _) => {
            not_checked(checks, "signature.verify", RULE_VERIFY, why);
            return;
        }
        (_, Err(why)) => {
            checks.push(
                "signature.verify",
                Status::Warn,
                RULE_VERIFY,
                format!("not checked: {why}"),
            );
            return;
        }
    };
    let request = cx.request;
    let signing_string = match build_signing_string(
        &request.method,
        &request.path_and_query,
        &params.headers,
        |n| request.header(n),
    ) {
        Ok(s) => s,
        Err(missing) => {
            checks.push(
                "signature.verify",
                Status::Warn,
                RULE_VERIFY,
                format!("not checked: the listed header {missing} is not in the request"),
            );
            return;
        }
    };
    if key.verify(signing_string.as_bytes(), &params.signature) {
        checks.push(
            "signature.verify",
            Status::Pass,
            RULE_VERIFY,
            format!(
                "RSA-SHA256 verifies with the certificate's key over the {} signed header(s)",
                params.headers.len()
            ),
        );
        return;
    }
    let message = match likely_mistake(cx, params, key, &signing_string) {
        Some(cause) => format!("does not verify over the signing string; likely cause: {cause}"),
        None => format!(
            "does not verify with the certificate's key over the signing string {signing_string:?}; \
             no usual mistake (header order, (request-target), trailing white space) explains \
             it: signed with another key, or a signed header or the path changed after signing"
        ),
    };
    checks.push("signature.verify", Status::Fail, RULE_VERIFY, message);
}

/// Tries the usual signing mistakes on the lines of `signing_string` (one per listed header)
/// and names the first that makes the signature verify.
fn likely_mistake(
    cx: &Context<'_>,
    params: &SignatureParams,
    key: &TrustedKey,
    signing_string: &str,
) -> Option<String> {
    let lines: Vec<String> = signing_string.split('\n').map(str::to_string).collect();
    let verifies = |lines: &[String]| key.verify(lines.join("\n").as_bytes(), &params.signature);
    // (request-target) signed but not listed, listed but not signed, or another form of it.
    let target = request_target(&cx.request.method, &cx.request.path_and_query);
    let target_line = format!("{REQUEST_TARGET}: {target}");
    let rt_index = params.headers.iter().position(|n| n == REQUEST_TARGET);
    match rt_index {
        None => {
            let mut with = vec![target_line.clone()];
            with.extend(lines.iter().cloned());
            if verifies(&with) {
                return Some(format!(
                    "the signature covers {REQUEST_TARGET} ({target:?}) first, but the headers \
                     parameter does not list it: list it, or sign without it"
                ));
            }
        }
        Some(i) => {
            let mut without = lines.clone();
            without.remove(i);
            if verifies(&without) {
                return Some(format!(
                    "the headers parameter lists {REQUEST_TARGET}, but the signature was made \
                     without it: sign the {REQUEST_TARGET} line too, or do not list it"
                ));
            }
            let method = cx.request.method.to_ascii_uppercase();
            let variants = [
                (
                    format!("{REQUEST_TARGET}: {method} {}", cx.request.path_and_query),
                    "the method in upper case",
                ),
                (
                    format!(
                        "{REQUEST_TARGET}: {}",
                        request_target(&cx.request.method, cx.request.path())
                    ),
                    "the path without its query",
                ),
            ];
            for (line, what) in variants {
                let mut v = lines.clone();
                v[i] = line.clone();
                if line != target_line && verifies(&v) {
                    return Some(format!(
                        "the {REQUEST_TARGET} line was signed with {what} ({line:?}); expected \
                         {target_line:?} (lower-case method, space, path and query as sent)"
                    ));
                }
            }
        }
    }
    // Trailing white space in a header value: signed untrimmed, sent (or read) trimmed.
    for (i, name) in params.headers.iter().enumerate() {
        if name == REQUEST_TARGET {
            continue;
        }
        let raw = cx.request.header(name).unwrap_or_default();
        let mut candidates = vec![format!("{name}: {}", raw.trim_start())];
        candidates.extend([" ", "\t"].map(|ws| format!("{}{ws}", lines[i])));
        for c in candidates {
            let mut v = lines.clone();
            if c == v[i] {
                continue;
            }
            v[i] = c.clone();
            if verifies(&v) {
                return Some(format!(
                    "trailing white space in the {name} value: the signature covers {c:?}, but \
                     header values are signed trimmed ({:?})",
                    lines[i]
                ));
            }
        }
    }
    // Another header order.
    if lines.len() <= MAX_PERMUTED {
        let mut order: Vec<usize> = (0..lines.len()).collect();
        let identity = order.clone();
        let mut found = None;
        permutations(&mut order, 0, &mut |p| {
            if found.is_none() && p != identity.as_slice() {
                let v: Vec<String> = p.iter().map(|&i| lines[i].clone()).collect();
                if verifies(&v) {
                    found = Some(p.to_vec());
                }
            }
        });
        if let Some(p) = found {
            let signed: Vec<&str> = p.iter().map(|&i| params.headers[i].as_str()).collect();
            return Some(format!(
                "another header order: the signature verifies over the headers in the order \
                 \"{}\", but the headers parameter lists \"{}\" (it must list them in signing \
                 order)",
                signed.join(" "),
                params.headers.join(" ")
            ));
        }
    }
    None
}

/// Calls `f` with every permutation of `items[k..]` (after `items[..k]`).
fn permutations(items: &mut Vec<usize>, k: usize, f: &mut impl FnMut(&[usize])) {
    if k == items.len() {
        f(items);
        return;
    }
    for i in k..items.len() {
        items.swap(k, i);
        permutations(items, k + 1, f);
        items.swap(k, i);
    }
}
