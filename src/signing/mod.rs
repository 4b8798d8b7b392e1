//! Request signing and verification, one module for both sides (the console signs, the
//! embedded sandbox verifies).
//!
//! Source: the interface document, Authentication rules 4–9, which follow
//! draft-cavage-http-signatures: `Digest: SHA-256=<base64>` of the exact body bytes (rule 9);
//! the signing string is `<lower-case name>: <value>` lines joined by `\n` in the order of the
//! `headers` parameter (rule 7); the eligible headers are `date`, `digest`, `x-request-id`,
//! `psu-id`, `psu-corporate-id`, `tpp-redirect-uri` (rule 6); the `Signature` value is
//! `keyId="..",algorithm="rsa-sha256",headers="..",signature="<base64>"` (rule 5) and, when
//! it is not ASCII, the whole value is RFC 2047-encoded (rule 8); `Date` is an RFC 7231
//! IMF-fixdate within 60 s of the server clock (rule 4).

pub mod rfc2047;
mod verify;

use crate::xs2a::headers::{self as h, find};
use std::time::SystemTime;

use base64::Engine as _;

use crate::cert::Credentials;

pub use verify::{
    CERT_CACHE_SIZE, RequestView, SignedHeaders, Signer, TrustedKey, VerifiedRequest, Verifier,
    VerifyError, VerifyPolicy, decimal_serial, parse_key_id, trim_text, verify_request,
    verify_signed_message, verify_signing_string,
};

/// Headers eligible for signing, in signing order (Authentication rule 6).
pub const ELIGIBLE_HEADERS: [&str; 6] = [
    "date",
    "digest",
    "x-request-id",
    "psu-id",
    "psu-corporate-id",
    "tpp-redirect-uri",
];

/// Pseudo-header for the request target: lower-case method, space, path and query.
pub const REQUEST_TARGET: &str = "(request-target)";

/// The only algorithm the interface document allows (rule 5).
pub(crate) const ALGORITHM: &str = "rsa-sha256";

/// The `Digest` header value for `body`: `SHA-256=<base64 of SHA-256 of the bytes>`.
pub fn digest_header_value(body: &[u8]) -> String {
    let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, body);
    format!(
        "SHA-256={}",
        base64::engine::general_purpose::STANDARD.encode(d.as_ref())
    )
}

/// `t` as an RFC 7231 IMF-fixdate, e.g. `Sun, 07 Jun 2026 20:51:35 GMT`. Times outside
/// 1970–9999 (a certificate's UTCTime may say 1950), which httpdate panics on, are written by
/// chrono in the same form (tests/it/fuzz_regressions.rs).
pub fn imf_fixdate(t: SystemTime) -> String {
    if in_httpdate_range(t) {
        return with_cached_fixdate(t, str::to_string);
    }
    chrono::DateTime::<chrono::Utc>::from(t)
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string()
}

/// Whether httpdate can write `t` (1970–9999).
fn in_httpdate_range(t: SystemTime) -> bool {
    (std::time::UNIX_EPOCH..std::time::UNIX_EPOCH + std::time::Duration::from_secs(253_402_300_800))
        .contains(&t)
}

thread_local! {
    /// The last second [`imf_fixdate`] wrote on this thread and its text: the sandbox dates
    /// every answer and checks every request's `Date`, thousands a second within the same
    /// second. One entry per thread, keyed by the exact second.
    static LAST_FIXDATE: std::cell::RefCell<(u64, String)> =
        const { std::cell::RefCell::new((u64::MAX, String::new())) };
}

/// Calls `f` with the IMF-fixdate of `t` (within httpdate's range, 1970–9999), formatted
/// once per second and thread.
fn with_cached_fixdate<R>(t: SystemTime, f: impl Fn(&str) -> R) -> R {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    LAST_FIXDATE
        .try_with(|cell| {
            let mut last = cell.try_borrow_mut().ok()?;
            if last.0 != secs || last.1.is_empty() {
                *last = (secs, httpdate::fmt_http_date(t));
            }
            Some(f(&last.1))
        })
        .ok()
        .flatten()
        // The thread is ending: no cache.
        .unwrap_or_else(|| f(&httpdate::fmt_http_date(t)))
}

/// Why a `Date` header value is not an IMF-fixdate (RFC 9110 section 5.6.7, formerly RFC
/// 7231 section 7.1.1.1).
#[derive(Debug, thiserror::Error)]
pub enum DateError {
    /// Not an HTTP date at all.
    #[error(
        "Date {value:?} is not an RFC 7231 IMF-fixdate (e.g. \"Sun, 07 Jun 2026 20:51:35 GMT\")"
    )]
    Syntax {
        /// The value as given.
        value: String,
        /// httpdate's error.
        #[source]
        source: httpdate::Error,
    },
    /// An HTTP date that is not the canonical IMF-fixdate of its instant (RFC 850 or asctime
    /// form, a wrong weekday).
    #[error("Date {value:?} is not a valid IMF-fixdate: that instant is written {canonical:?}")]
    NotCanonical {
        /// The value as given.
        value: String,
        /// The IMF-fixdate of the same instant.
        canonical: String,
    },
}

thread_local! {
    /// The last text [`parse_imf_fixdate`] accepted on this thread and its instant: the
    /// sandbox checks every request's `Date`, thousands a second with the same text (issue
    /// 23). Only accepted texts are kept; the answer is a function of the text alone.
    static LAST_PARSED: std::cell::RefCell<(String, SystemTime)> =
        const { std::cell::RefCell::new((String::new(), std::time::UNIX_EPOCH)) };
}

/// Parses a strict IMF-fixdate: the obsolete RFC 850 and asctime forms and a weekday that
/// does not match the date are refused (the text must re-format to itself). The text last
/// accepted on the thread is answered without parsing it again.
///
/// Errors: [`DateError`].
pub fn parse_imf_fixdate(s: &str) -> Result<SystemTime, DateError> {
    let kept = LAST_PARSED
        .try_with(|cell| {
            let last = cell.try_borrow().ok()?;
            (!last.0.is_empty() && last.0 == s).then_some(last.1)
        })
        .ok()
        .flatten();
    if let Some(t) = kept {
        return Ok(t);
    }
    let t = parse_imf_fixdate_text(s)?;
    // The thread is ending, or the cell is in use: nothing kept.
    let _ = LAST_PARSED.try_with(|cell| {
        if let Ok(mut last) = cell.try_borrow_mut() {
            last.0.clear();
            last.0.push_str(s);
            last.1 = t;
        }
    });
    Ok(t)
}

/// [`parse_imf_fixdate`] without the kept text.
fn parse_imf_fixdate_text(s: &str) -> Result<SystemTime, DateError> {
    let t = httpdate::parse_http_date(s).map_err(|source| DateError::Syntax {
        value: s.to_string(),
        source,
    })?;
    let canonical = if in_httpdate_range(t) {
        with_cached_fixdate(t, |canonical| canonical == s)
    } else {
        imf_fixdate(t) == s
    };
    if !canonical {
        return Err(DateError::NotCanonical {
            value: s.to_string(),
            canonical: imf_fixdate(t),
        });
    }
    Ok(t)
}

/// The `(request-target)` value: lower-case method, space, path and query.
pub fn request_target(method: &str, path_and_query: &str) -> String {
    format!("{} {}", method.to_ascii_lowercase(), path_and_query)
}

/// Why a signing string could not be built (Authentication rule 7 of the interface document:
/// every header the `headers` parameter lists must be in the request).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigningStringError {
    /// A listed header the request does not carry; its lower-case name.
    #[error("{0}")]
    HeaderMissing(String),
}

/// Builds the signing string for `header_names` (lower-case, `(request-target)` allowed),
/// looking header values up with `lookup` (case-insensitive name → value).
///
/// Errors: [`SigningStringError::HeaderMissing`] with the name of the first listed header
/// the request does not carry.
pub fn build_signing_string<'a>(
    method: &str,
    path_and_query: &str,
    header_names: &[String],
    lookup: impl Fn(&str) -> Option<&'a str>,
) -> Result<String, SigningStringError> {
    let mut out = String::with_capacity(256);
    for (i, name) in header_names.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        // The verifier's names are lower case already: no copy then.
        let lname: std::borrow::Cow<'_, str> = if name.bytes().any(|b| b.is_ascii_uppercase()) {
            std::borrow::Cow::Owned(name.to_ascii_lowercase())
        } else {
            std::borrow::Cow::Borrowed(name)
        };
        out.push_str(&lname);
        out.push_str(": ");
        if lname == REQUEST_TARGET {
            out.push_str(&method.to_ascii_lowercase());
            out.push(' ');
            out.push_str(path_and_query);
        } else {
            let v = lookup(&lname)
                .ok_or_else(|| SigningStringError::HeaderMissing(lname.to_string()))?;
            out.push_str(v.trim());
        }
    }
    Ok(out)
}

/// The four parameters of a `Signature` header (rule 5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureParams {
    /// `keyId`: `SN=<hex serial>,CA=<issuer DN>`.
    pub key_id: String,
    /// `algorithm`: `rsa-sha256`.
    pub algorithm: String,
    /// Lower-case header names in signing order.
    pub headers: Vec<String>,
    /// The raw RSA signature bytes.
    pub signature: Vec<u8>,
}

impl SignatureParams {
    /// The plain header value `keyId="..",algorithm="..",headers="..",signature=".."`.
    pub fn to_plain_value(&self) -> String {
        format!(
            "keyId=\"{}\",algorithm=\"{}\",headers=\"{}\",signature=\"{}\"",
            self.key_id,
            self.algorithm,
            self.headers.join(" "),
            base64::engine::general_purpose::STANDARD.encode(&self.signature)
        )
    }

    /// The header value as sent: plain when ASCII, else RFC 2047 `=?utf-8?B?...?=` (rule 8).
    pub fn to_header_value(&self) -> String {
        let plain = self.to_plain_value();
        if plain.is_ascii() {
            plain
        } else {
            rfc2047::encode_utf8_b(&plain)
        }
    }

    /// Parses a header value, plain or RFC 2047-encoded (`B` or `Q`, either case).
    ///
    /// Errors: [`VerifyError::MalformedSignature`] saying what is wrong.
    pub fn parse(value: &str) -> Result<Self, VerifyError> {
        let decoded = rfc2047::decode_if_encoded(value.trim())
            .map_err(|e| VerifyError::MalformedSignature(format!("RFC 2047: {e}")))?;
        parse_params(&decoded)
    }
}

fn parse_params(s: &str) -> Result<SignatureParams, VerifyError> {
    let bad = |m: String| VerifyError::MalformedSignature(m);
    // Slices of `s` until the end: only the four values kept are copied (issue 23: the
    // parse runs on every request).
    let mut key_id = None;
    let mut algorithm = None;
    let mut headers = None;
    let mut signature = None;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b',' || bytes[i] == b'\t') {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        // The ends are found with `memchr` (the signature's 344 base64 characters and the
        // keyId's issuer name are most of the header: a byte-at-a-time scan with bounds
        // checks cost ~3.5 k instructions per request, issue 23).
        let ks = i;
        let Some(eq) = memchr::memchr(b'=', &bytes[ks..]) else {
            return Err(bad(format!("parameter {:?} has no value", &s[ks..])));
        };
        i = ks + eq;
        let key = s[ks..i].trim();
        i += 1;
        let value = if i < bytes.len() && bytes[i] == b'"' {
            i += 1;
            let vs = i;
            let Some(close) = memchr::memchr(b'"', &bytes[vs..]) else {
                return Err(bad(format!("unterminated quoted value of {key}")));
            };
            i = vs + close;
            let v = &s[vs..i];
            i += 1;
            v
        } else {
            let vs = i;
            i = memchr::memchr(b',', &bytes[vs..]).map_or(bytes.len(), |c| vs + c);
            s[vs..i].trim()
        };
        match key {
            "keyId" => key_id = Some(value),
            "algorithm" => algorithm = Some(value),
            "headers" => headers = Some(value),
            "signature" => signature = Some(value),
            // created/expires of later drafts are tolerated and not used
            _ => {}
        }
    }
    let key_id = key_id.ok_or_else(|| bad("no keyId parameter".into()))?;
    let signature_b64 = signature.ok_or_else(|| bad("no signature parameter".into()))?;
    let signature = base64::engine::general_purpose::STANDARD
        .decode(signature_b64.trim())
        .map_err(|e| bad(format!("signature is not base64: {e}")))?;
    // cavage: a missing headers parameter means `date` only.
    let headers = headers
        .map(|h| {
            h.split_whitespace()
                .map(|n| n.to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .unwrap_or_else(|| vec!["date".to_string()]);
    Ok(SignatureParams {
        key_id: key_id.to_string(),
        algorithm: algorithm.unwrap_or(ALGORITHM).to_string(),
        headers,
        signature,
    })
}

/// Signs the headers `names` (in that order) of a request whose headers are already complete
/// (`Date`, `Digest` included): returns the signing string and the Signature parameters.
/// [`sign_request`] uses this with the order of [`ELIGIBLE_HEADERS`]; other orders exist in
/// the field (the test vectors sign `date` last) and verify the same way.
///
/// Errors: [`SigningStringError::HeaderMissing`] with the lower-case name of a listed header
/// the request lacks.
pub fn sign_with_names(
    credentials: &Credentials,
    method: &str,
    path_and_query: &str,
    headers: &[(String, String)],
    names: &[String],
) -> Result<(String, SignatureParams), SigningStringError> {
    let signing_string = build_signing_string(method, path_and_query, names, |n| find(headers, n))?;
    let params = SignatureParams {
        key_id: credentials.certificate.key_id(),
        algorithm: ALGORITHM.to_string(),
        headers: names.to_vec(),
        signature: credentials.key.sign_rsa_sha256(signing_string.as_bytes()),
    };
    Ok((signing_string, params))
}

/// Options of [`sign_request`].
#[derive(Debug, Clone, Copy)]
pub struct SignOptions {
    /// Put `(request-target)` first in the signed headers (a profile setting).
    pub request_target: bool,
    /// The instant used for a `Date` header when the request has none.
    pub now: SystemTime,
}

impl Default for SignOptions {
    fn default() -> Self {
        SignOptions {
            request_target: false,
            now: SystemTime::now(),
        }
    }
}

/// What signing produced, for the console's signature inspector and the `sign` command.
/// The default is an unsigned request's: every part empty.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SignatureInspection {
    /// `Digest` value, when the request has a body.
    pub digest: Option<String>,
    /// The signing string that was signed (lines joined by `\n`).
    pub signing_string: String,
    /// The `keyId` sent.
    pub key_id: String,
    /// Lower-case names that were signed, in order.
    pub signed_headers: Vec<String>,
    /// The `Signature` header value as sent.
    pub signature_header: String,
    /// The headers signing added (`Date`, `Digest`, `TPP-Signature-Certificate`, `Signature`),
    /// in that order, as (name, value).
    pub added_headers: Vec<(String, String)>,
}

/// Signs a request in place: adds `Date` (when absent), `Digest` (when `body` is not empty),
/// `TPP-Signature-Certificate` and `Signature`, replacing earlier values of the last three.
///
/// `headers` are (name, value) pairs in sending order; `path_and_query` is the request target
/// as sent (e.g. `/v1/accounts?withBalance=true`). The signed headers are the eligible ones
/// present, in the order of [`ELIGIBLE_HEADERS`], preceded by `(request-target)` when asked.
pub fn sign_request(
    credentials: &Credentials,
    method: &str,
    path_and_query: &str,
    headers: &mut Vec<(String, String)>,
    body: &[u8],
    options: SignOptions,
) -> SignatureInspection {
    let mut added = Vec::new();
    headers.retain(|(n, _)| {
        !n.eq_ignore_ascii_case("signature")
            && !n.eq_ignore_ascii_case("tpp-signature-certificate")
            && !(n.eq_ignore_ascii_case("digest"))
    });
    if find(headers, "date").is_none() {
        let d = imf_fixdate(options.now);
        headers.push((h::DATE.into(), d.clone()));
        added.push((h::DATE.into(), d));
    }
    let digest = if body.is_empty() {
        None
    } else {
        let d = digest_header_value(body);
        headers.push((h::DIGEST.into(), d.clone()));
        added.push((h::DIGEST.into(), d.clone()));
        Some(d)
    };
    let mut names: Vec<String> = Vec::new();
    if options.request_target {
        names.push(REQUEST_TARGET.to_string());
    }
    for n in ELIGIBLE_HEADERS {
        if find(headers, n).is_some() {
            names.push(n.to_string());
        }
    }
    let (signing_string, params) =
        sign_with_names(credentials, method, path_and_query, headers, &names)
            .expect("every listed header was found above");
    let key_id = params.key_id.clone();
    let signature_header = params.to_header_value();
    let cert_value = credentials.certificate.header_value();
    headers.push((h::TPP_SIGNATURE_CERTIFICATE.into(), cert_value.clone()));
    headers.push((h::SIGNATURE.into(), signature_header.clone()));
    added.push((h::TPP_SIGNATURE_CERTIFICATE.into(), cert_value));
    added.push((h::SIGNATURE.into(), signature_header.clone()));
    SignatureInspection {
        digest,
        signing_string,
        key_id,
        signed_headers: names,
        signature_header,
        added_headers: added,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text kept from the last parse answers only for exactly that text: another valid
    /// text gets its own instant, and a refused one is refused after a kept one as before.
    #[test]
    fn the_kept_date_answers_only_for_its_own_text() {
        let a = "Sun, 07 Jun 2026 20:51:35 GMT";
        let b = "Sun, 07 Jun 2026 20:51:36 GMT";
        let ta = parse_imf_fixdate(a).unwrap();
        assert_eq!(parse_imf_fixdate(a).unwrap(), ta);
        assert_eq!(
            parse_imf_fixdate(b).unwrap(),
            ta + std::time::Duration::from_secs(1)
        );
        for bad in [
            "Mon, 07 Jun 2026 20:51:36 GMT",
            "Sun, 07 Jun 2026 20:51:36 GMT ",
            "Sunday, 07-Jun-26 20:51:36 GMT",
            "",
        ] {
            assert!(parse_imf_fixdate(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_imf_fixdate(a).unwrap(), ta);
    }
}
