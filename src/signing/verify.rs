//! Server-side verification of signed requests (interface document, Authentication 2–9).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use aws_lc_rs::signature::{
    ParsedPublicKey, RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY, RSA_PKCS1_2048_8192_SHA256,
};

use super::{
    ALGORITHM, ELIGIBLE_HEADERS, SignatureParams, SigningStringError, build_signing_string,
    digest_header_value, imf_fixdate, parse_imf_fixdate,
};
use crate::cert::{Certificate, DistinguishedName};
use crate::xs2a::error::MessageCode;

/// Why a request's signature was refused. Each message says what differed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("signature missing: the request has no Signature header")]
    /// No `Signature` header (rule 3).
    SignatureMissing,
    #[error("certificate missing: the request has no TPP-Signature-Certificate header")]
    /// No `TPP-Signature-Certificate` header (rule 4).
    CertificateMissing,
    #[error("certificate invalid: {0}")]
    /// The certificate does not parse, or its key is not RSA of an allowed size: why.
    CertificateInvalid(String),
    #[error("certificate expired: valid until {not_after}, server time is {now}")]
    /// The certificate's validity ended.
    CertificateExpired {
        /// End of validity (RFC 3339).
        not_after: String,
        /// The server's time (RFC 3339).
        now: String,
    },
    #[error("certificate not yet valid: valid from {not_before}, server time is {now}")]
    /// The certificate's validity has not begun.
    CertificateNotYetValid {
        /// Start of validity (RFC 3339).
        not_before: String,
        /// The server's time (RFC 3339).
        now: String,
    },
    #[error("malformed Signature header: {0}")]
    /// The `Signature` header does not parse (rule 5): why.
    MalformedSignature(String),
    #[error(
        "algorithm mismatch: Signature says algorithm=\"{algorithm}\", the certificate's RSA key needs \"rsa-sha256\""
    )]
    /// The `algorithm` parameter is not `rsa-sha256`.
    AlgorithmMismatch {
        /// The parameter as sent.
        algorithm: String,
    },
    #[error("malformed keyId {key_id:?}: {reason} (expected SN=<hex serial>,CA=<issuer DN>)")]
    /// The `keyId` is not `SN=<hex serial>,CA=<issuer DN>`.
    KeyIdMalformed {
        /// The keyId as sent.
        key_id: String,
        /// What is wrong with it.
        reason: String,
    },
    #[error(
        "keyId serial mismatch: keyId has SN={key_id_serial}, the certificate's serial is {certificate_serial}"
    )]
    /// The keyId's serial is not the certificate's.
    KeyIdSerialMismatch {
        /// `SN=` of the keyId.
        key_id_serial: String,
        /// The certificate's serial, upper-case hex.
        certificate_serial: String,
    },
    /// The keyId's serial is the certificate's, written in decimal (a common library
    /// mistake: `SN=527820713466720751813449` for `6FC537DCAFFD49298349`); rule 5 writes it
    /// in hex.
    #[error(
        "keyId serial in decimal: SN={key_id_serial} is the certificate's serial {certificate_serial}, the same serial in decimal; write it in upper-case hex: SN={certificate_serial}"
    )]
    KeyIdSerialDecimal {
        /// `SN=` of the keyId (decimal).
        key_id_serial: String,
        /// The certificate's serial, upper-case hex.
        certificate_serial: String,
    },
    #[error(
        "keyId issuer mismatch: keyId has CA={key_id_issuer}, the certificate's issuer is {certificate_issuer} ({difference})"
    )]
    /// The keyId's issuer DN is not the certificate's.
    KeyIdIssuerMismatch {
        /// `CA=` of the keyId.
        key_id_issuer: String,
        /// The certificate's issuer, RFC 2253.
        certificate_issuer: String,
        /// Which attribute differs (or that the order is reversed).
        difference: String,
    },
    #[error("digest missing: the request has a body but no Digest header")]
    /// A body without a `Digest` header (rule 7).
    DigestMissing,
    #[error("digest unsupported: {0:?} (expected SHA-256=<base64>)")]
    /// A `Digest` that is not `SHA-256=<base64>`: the value.
    DigestUnsupported(String),
    #[error("digest mismatch: header {header}, body hashes to {computed}")]
    /// The body does not hash to the `Digest`.
    DigestMismatch {
        /// The `Digest` as sent.
        header: String,
        /// The body's `SHA-256=<base64>`.
        computed: String,
    },
    #[error("digest not signed: the Digest header is not listed in the Signature's headers")]
    /// `Digest` is sent but not in the signature's `headers`.
    DigestNotSigned,
    #[error("date missing: the request has no Date header")]
    /// No `Date` header (rule 6).
    DateMissing,
    #[error("date invalid: {0}")]
    /// A `Date` that is not an IMF-fixdate: why.
    DateInvalid(String),
    #[error(
        "date out of range: Date {date} is {skew_secs} s from server time {server_time}; at most {max_secs} s is allowed"
    )]
    /// The `Date` is too far from the server's time.
    DateSkew {
        /// The `Date` as sent.
        date: String,
        /// The server's time, IMF-fixdate.
        server_time: String,
        /// `Date` minus server time, seconds.
        skew_secs: i64,
        /// The allowed distance, seconds.
        max_secs: u64,
    },
    #[error("signed header missing: Signature lists {0:?} but the request has no such header")]
    /// The signature lists a header the request lacks: its name.
    SignedHeaderMissing(String),
    #[error(
        "header not signed: the request carries {0} but the Signature's headers parameter does not list it"
    )]
    /// A header that must be signed is not in the signature's `headers`: its name.
    HeaderNotSigned(String),
    #[error(
        "signature invalid: the RSA signature does not verify with the certificate's key over the signing string {signing_string:?}"
    )]
    /// The RSA signature does not verify.
    SignatureInvalid {
        /// The signing string the verifier rebuilt.
        signing_string: String,
    },
}

impl VerifyError {
    /// The Berlin Group code sent for this error; its status is [`MessageCode::status`]:
    /// 400 for every verification failure (interface document, Authentication 3: "requests
    /// whose signature fails validation, are answered with 400"; Errors table). Signature and
    /// certificate failures keep the Berlin Group's `SIGNATURE_*` / `CERTIFICATE_*` codes,
    /// which that file lists under 401 only: the document wins on the status
    /// ([`crate::xs2a::error::SIGNATURE_FAILURE_CODES`]). The other failures have a 400
    /// code of their own: digest and header format (`FORMAT_ERROR`), Date
    /// (`TIMESTAMP_INVALID`), keyId not matching the certificate (`PARAMETER_NOT_CONSISTENT`,
    /// the document's "KID errors: 400").
    pub fn message_code(&self) -> MessageCode {
        use VerifyError::*;
        match self {
            SignatureMissing => MessageCode::SignatureMissing,
            CertificateMissing => MessageCode::CertificateMissing,
            CertificateInvalid(_) | CertificateNotYetValid { .. } => {
                MessageCode::CertificateInvalid
            }
            CertificateExpired { .. } => MessageCode::CertificateExpired,
            MalformedSignature(_)
            | DigestMissing
            | DigestUnsupported(_)
            | DigestMismatch { .. } => MessageCode::FormatError,
            SignedHeaderMissing(_) | KeyIdMalformed { .. } => MessageCode::FormatError,
            KeyIdSerialMismatch { .. } | KeyIdSerialDecimal { .. } | KeyIdIssuerMismatch { .. } => {
                MessageCode::ParameterNotConsistent
            }
            DateMissing | DateInvalid(_) | DateSkew { .. } => MessageCode::TimestampInvalid,
            AlgorithmMismatch { .. }
            | DigestNotSigned
            | HeaderNotSigned(_)
            | SignatureInvalid { .. } => MessageCode::SignatureInvalid,
        }
    }
}

/// What a verifier enforces beyond the signature itself.
#[derive(Debug, Clone, Copy)]
pub struct VerifyPolicy {
    /// Largest allowed |Date − now|, seconds (rule 4: 60).
    pub max_skew_secs: u64,
    /// Require every eligible header present in the request to be signed (rule 6).
    pub require_eligible_signed: bool,
    /// Require a valid `Date` header.
    pub require_date: bool,
    /// Check the certificate's validity period against `now`.
    pub check_validity: bool,
    /// Accept 1024-bit RSA keys (only for the cavage Appendix C vectors).
    pub allow_legacy_1024: bool,
}

impl Default for VerifyPolicy {
    fn default() -> Self {
        VerifyPolicy {
            max_skew_secs: 60,
            require_eligible_signed: true,
            require_date: true,
            check_validity: true,
            allow_legacy_1024: false,
        }
    }
}

/// A request as the verifier sees it.
#[derive(Debug, Clone, Copy)]
pub struct RequestView<'a> {
    /// HTTP method as received.
    pub method: &'a str,
    /// Path and query exactly as received, e.g. `/v1/accounts?withBalance=true`.
    pub path_and_query: &'a str,
    /// The request headers.
    pub headers: &'a http::HeaderMap,
    /// The body bytes.
    pub body: &'a [u8],
}

/// A verified request: the TPP's certificate and the parsed Signature.
#[derive(Debug, Clone)]
pub struct VerifiedRequest {
    /// The TPP's certificate from `TPP-Signature-Certificate`.
    pub certificate: Arc<Certificate>,
    /// The parsed `Signature` header.
    pub params: SignatureParams,
    /// The request's `Date` as the Date check parsed and accepted it (whole seconds), or
    /// `None` when the request has no `Date` (a policy without `require_date`). The replay
    /// check keeps the request's `X-Request-ID` until this `Date` leaves the window, without
    /// parsing the header again (issue 23).
    pub date: Option<SystemTime>,
}

/// A certificate ready for verification: parsed once, with its public key parsed.
pub struct TrustedKey {
    /// The parsed certificate.
    pub certificate: Arc<Certificate>,
    /// `certificate.key_id()`, so the common case (the keyId exactly as we print it) skips
    /// parsing the DN.
    key_id: String,
    public_key: ParsedPublicKey,
}

impl TrustedKey {
    /// Parses the public key of `certificate`.
    pub fn new(certificate: Certificate, allow_legacy_1024: bool) -> Result<Self, VerifyError> {
        if !certificate.is_rsa() {
            return Err(VerifyError::CertificateInvalid(format!(
                "public key algorithm {} is not RSA",
                certificate.key_algorithm
            )));
        }
        let alg = if allow_legacy_1024 {
            &RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY
        } else {
            &RSA_PKCS1_2048_8192_SHA256
        };
        let public_key = ParsedPublicKey::new(alg, &certificate.public_key).map_err(|e| {
            VerifyError::CertificateInvalid(format!("unusable RSA public key: {e}"))
        })?;
        Ok(TrustedKey {
            key_id: certificate.key_id(),
            certificate: Arc::new(certificate),
            public_key,
        })
    }

    /// RSASSA-PKCS1-v1_5 SHA-256 verification of `signature` over `message`.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        self.public_key.verify_sig(message, signature).is_ok()
    }
}

/// Verifies `signature` over `signing_string` with an RSA public key given as PKCS#1
/// `RSAPublicKey` or SPKI DER. Used for keys that come without a certificate (cavage tests).
pub fn verify_signing_string(
    public_key_der: &[u8],
    signing_string: &str,
    signature: &[u8],
    allow_legacy_1024: bool,
) -> bool {
    let alg = if allow_legacy_1024 {
        &RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY
    } else {
        &RSA_PKCS1_2048_8192_SHA256
    };
    match ParsedPublicKey::new(alg, public_key_der) {
        Ok(k) => k.verify_sig(signing_string.as_bytes(), signature).is_ok(),
        Err(_) => false,
    }
}

/// `s` without leading and trailing whitespace, exactly as [`str::trim`] (Unicode
/// whitespace), returned as it is at once when it starts and ends with visible ASCII (every
/// header value a client normally sends): [`str::trim`] decodes a character at each end and
/// looks it up, ~75 instructions per header and a dozen headers per request (issue 23).
#[inline]
pub fn trim_text(s: &str) -> &str {
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (Some(first), Some(last)) if first.is_ascii_graphic() && last.is_ascii_graphic() => s,
        _ => s.trim(),
    }
}

fn header<'a>(headers: &'a http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
        .map(trim_text)
}

/// [`header`] of a name the signing string lists (lower case): an [`ELIGIBLE_HEADERS`] name
/// is taken from `seen` (the headers of `headers` found in one pass, issue 23), any other is
/// looked up by its text.
fn signed_header<'a>(
    headers: &'a http::HeaderMap,
    seen: &SignedHeaders<'a>,
    name: &str,
) -> Option<&'a str> {
    match eligible_index(name) {
        Some(i) => seen.text[i],
        None => header(headers, name),
    }
}

/// The index in [`ELIGIBLE_HEADERS`] of header name `name` (lower case, as the Signature's
/// `headers` parameter is parsed), if it is one.
fn eligible_index(name: &str) -> Option<usize> {
    slot(name).filter(|&i| i < ELIGIBLE_HEADERS.len())
}

/// A header value as [`header`] reads it: UTF-8, trimmed; `None` when absent or not UTF-8.
fn text_of(value: Option<&http::HeaderValue>) -> Option<&str> {
    value
        .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
        .map(trim_text)
}

/// The headers a verification reads, found in one pass over a request's header map
/// ([`SignedHeaders::of`]) instead of one hashed look-up per use: a read looked up 18
/// headers, some of them three times (issue 23). Each holds the first value of its name, as
/// [`http::HeaderMap::get`] gives it.
///
/// The eligible headers ([`ELIGIBLE_HEADERS`], in that order) are kept as values and as
/// text (UTF-8, trimmed; `None` when absent or not UTF-8, as a look-up by name reads them),
/// `Signature` and `TPP-Signature-Certificate` as values only (the certificate's 1.3 KB are
/// checked only when it is not cached, [`Verifier::signer_in`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SignedHeaders<'h> {
    eligible: [Option<&'h http::HeaderValue>; 6],
    text: [Option<&'h str>; 6],
    signature: Option<&'h http::HeaderValue>,
    certificate: Option<&'h http::HeaderValue>,
}

/// Where a header name goes in [`SignedHeaders`]: an index of [`ELIGIBLE_HEADERS`], or one
/// of the two below.
const SLOT_SIGNATURE: usize = 6;
const SLOT_CERTIFICATE: usize = 7;

impl<'h> SignedHeaders<'h> {
    /// The headers of `headers`, in one pass over them.
    pub fn of(headers: &'h http::HeaderMap) -> Self {
        let mut seen = SignedHeaders::default();
        for (name, value) in headers {
            seen.note(name, value);
        }
        seen.finish();
        seen
    }

    /// Takes `value` when `name` is one of the headers kept and the first of its name.
    /// For a caller's own pass over the headers, reading more of them in it (then
    /// [`SignedHeaders::finish`]).
    pub fn note(&mut self, name: &http::HeaderName, value: &'h http::HeaderValue) -> bool {
        let Some(slot) = slot(name.as_str()) else {
            return false;
        };
        let place = match slot {
            SLOT_SIGNATURE => &mut self.signature,
            SLOT_CERTIFICATE => &mut self.certificate,
            i => &mut self.eligible[i],
        };
        if place.is_none() {
            *place = Some(value);
        }
        true
    }

    /// Once every header is noted: the eligible headers' text.
    pub fn finish(&mut self) {
        for (text, value) in self.text.iter_mut().zip(&self.eligible) {
            *text = value
                .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
                .map(trim_text);
        }
    }

    /// The first value of eligible header `name` (one of [`ELIGIBLE_HEADERS`], lower case);
    /// `None` when absent or not eligible.
    pub fn value(&self, name: &str) -> Option<&'h http::HeaderValue> {
        let i = ELIGIBLE_HEADERS.iter().position(|e| *e == name)?;
        self.eligible[i]
    }

    /// The `X-Request-ID` value.
    pub fn x_request_id(&self) -> Option<&'h http::HeaderValue> {
        self.eligible[2]
    }

    /// The `TPP-Redirect-URI` value.
    pub fn tpp_redirect_uri(&self) -> Option<&'h http::HeaderValue> {
        self.eligible[5]
    }

    /// The `TPP-Signature-Certificate` value.
    pub fn certificate(&self) -> Option<&'h http::HeaderValue> {
        self.certificate
    }
}

/// The [`SignedHeaders`] slot of a (lower-case) header name: a switch on the length, then
/// one comparison at most two.
#[inline]
fn slot(name: &str) -> Option<usize> {
    match (name.len(), name) {
        (4, "date") => Some(0),
        (6, "digest") => Some(1),
        (12, "x-request-id") => Some(2),
        (6, "psu-id") => Some(3),
        (16, "psu-corporate-id") => Some(4),
        (16, "tpp-redirect-uri") => Some(5),
        (9, "signature") => Some(SLOT_SIGNATURE),
        (25, "tpp-signature-certificate") => Some(SLOT_CERTIFICATE),
        _ => None,
    }
}

/// Parses a keyId `SN=<hex serial>,CA=<issuer DN, RFC 2253>` (Authentication rule 5) into
/// the serial (big-endian bytes without leading zeros; a `0x` prefix and either letter case
/// accepted) and the issuer DN.
///
/// Errors: [`VerifyError::KeyIdMalformed`] saying which part is wrong.
pub fn parse_key_id(key_id: &str) -> Result<(Vec<u8>, DistinguishedName), VerifyError> {
    let bad = |reason: &str| VerifyError::KeyIdMalformed {
        key_id: key_id.to_string(),
        reason: reason.to_string(),
    };
    let rest = key_id
        .trim()
        .strip_prefix("SN=")
        .ok_or_else(|| bad("does not start with SN="))?;
    let (sn, ca) = rest.split_once(",CA=").ok_or_else(|| bad("no ,CA= part"))?;
    let sn = sn.trim();
    let sn = sn
        .strip_prefix("0x")
        .or_else(|| sn.strip_prefix("0X"))
        .unwrap_or(sn);
    if sn.is_empty() || !sn.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(bad("the serial is not hexadecimal"));
    }
    let padded = if sn.len() % 2 == 1 {
        format!("0{sn}")
    } else {
        sn.to_string()
    };
    let mut serial: Vec<u8> = (0..padded.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&padded[i..i + 2], 16).unwrap_or(0))
        .collect();
    let zeros = serial.iter().take_while(|&&b| b == 0).count();
    serial.drain(..zeros);
    let issuer = DistinguishedName::parse_rfc2253(ca).map_err(|e| bad(&e.reason))?;
    Ok((serial, issuer))
}

/// The serial written as decimal digits `sn` (e.g. `527820713466720751813449`), as
/// big-endian bytes without leading zeros (as [`Certificate::serial`]); `None` when `sn` is
/// not all ASCII digits. For telling a keyId whose serial is the certificate's written in
/// decimal ([`VerifyError::KeyIdSerialDecimal`]); 0 is the empty vector.
pub fn decimal_serial(sn: &str) -> Option<Vec<u8>> {
    let sn = sn.trim();
    if sn.is_empty() || !sn.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Little-endian base-256 digits, times 10 plus the next decimal digit each step.
    let mut le: Vec<u8> = Vec::new();
    for d in sn.bytes().map(|b| b - b'0') {
        let mut carry = u16::from(d);
        for byte in le.iter_mut() {
            let v = u16::from(*byte) * 10 + carry;
            *byte = (v & 0xff) as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            le.push((carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    while le.last() == Some(&0) {
        le.pop();
    }
    le.reverse();
    Some(le)
}

/// Compares a keyId with the certificate: serial as an integer, issuer DN attribute by
/// attribute.
fn check_key_id(key_id: &str, cert: &Certificate) -> Result<(), VerifyError> {
    let (serial, issuer) = parse_key_id(key_id)?;
    let sn_text = key_id
        .trim()
        .strip_prefix("SN=")
        .and_then(|r| r.split_once(",CA="))
        .map(|(sn, _)| sn.trim())
        .unwrap_or_default();
    if serial != cert.serial && decimal_serial(sn_text).is_some_and(|d| d == cert.serial) {
        return Err(VerifyError::KeyIdSerialDecimal {
            key_id_serial: sn_text.to_string(),
            certificate_serial: cert.serial_hex(),
        });
    }
    if serial != cert.serial {
        return Err(VerifyError::KeyIdSerialMismatch {
            key_id_serial: hex::encode_upper(&serial)
                .trim_start_matches('0')
                .to_string(),
            certificate_serial: cert.serial_hex(),
        });
    }
    if !issuer.matches(&cert.issuer) {
        return Err(VerifyError::KeyIdIssuerMismatch {
            key_id_issuer: issuer.to_rfc2253(),
            certificate_issuer: cert.issuer.to_rfc2253(),
            difference: issuer.difference(&cert.issuer).unwrap_or_default(),
        });
    }
    Ok(())
}

/// Verifies a signed request without caching (see [`Verifier`] for the cached form).
pub fn verify_request(
    policy: &VerifyPolicy,
    request: &RequestView<'_>,
    now: SystemTime,
) -> Result<VerifiedRequest, VerifyError> {
    verify_with(policy, request, now, |value| {
        let cert = Certificate::from_header_value(value)
            .map_err(|e| VerifyError::CertificateInvalid(e.to_string()))?;
        TrustedKey::new(cert, policy.allow_legacy_1024).map(Arc::new)
    })
}

/// A verifier with a cache of parsed certificates keyed by the `TPP-Signature-Certificate`
/// value, so a TPP's certificate is parsed once, not per request.
pub struct Verifier {
    /// What the verifier accepts.
    pub policy: VerifyPolicy,
    /// Keyed by the exact header value ([`ExactCache`]).
    cache: Mutex<ExactCache<Arc<TrustedKey>>>,
}

/// Values by the exact bytes of a long key (a 1.3 KB `TPP-Signature-Certificate` value),
/// hashed by the key's length and its last [`TAIL`] bytes only and compared in full: hashing
/// the whole key cost ~0.75 k instructions per request (issue 23), and a key is found only
/// under its own bytes, however alike two keys are (the same tail, the same length). Keys
/// with the same length and tail share a bucket, a list searched by full comparison; at most
/// [`CERT_CACHE_SIZE`] entries in all (emptied when full), so no bucket grows past that.
#[derive(Debug)]
struct ExactCache<V> {
    buckets: HashMap<Bucket, Vec<Entry<V>>, foldhash::fast::RandomState>,
    entries: usize,
}

/// A key's length and its last [`TAIL`] bytes (zero-filled when shorter): what
/// [`ExactCache`] hashes.
type Bucket = (usize, [u8; TAIL]);

/// A key's bytes and its value.
type Entry<V> = (Box<[u8]>, V);

/// How many trailing bytes of a key [`ExactCache`] hashes (the end of a base64 certificate
/// is its issuer's signature).
const TAIL: usize = 32;

impl<V: Clone> ExactCache<V> {
    fn new() -> Self {
        ExactCache {
            buckets: HashMap::with_hasher(foldhash::fast::RandomState::default()),
            entries: 0,
        }
    }

    /// The [`Bucket`] of `key`.
    fn bucket(key: &[u8]) -> Bucket {
        let mut tail = [0; TAIL];
        let n = key.len().min(TAIL);
        tail[..n].copy_from_slice(&key[key.len() - n..]);
        (key.len(), tail)
    }

    /// The value stored under exactly `key`.
    fn get(&self, key: &[u8]) -> Option<V> {
        self.buckets
            .get(&Self::bucket(key))?
            .iter()
            .find(|(k, _)| **k == *key)
            .map(|(_, v)| v.clone())
    }

    /// Stores `value` under `key` (replacing the value of the same key); empties the cache
    /// first when it holds [`CERT_CACHE_SIZE`] entries.
    fn insert(&mut self, key: &[u8], value: V) {
        if self.entries >= CERT_CACHE_SIZE {
            self.buckets.clear();
            self.entries = 0;
        }
        let bucket = self.buckets.entry(Self::bucket(key)).or_default();
        match bucket.iter_mut().find(|(k, _)| **k == *key) {
            Some(entry) => entry.1 = value,
            None => {
                bucket.push((key.into(), value));
                self.entries += 1;
            }
        }
    }

    fn len(&self) -> usize {
        self.entries
    }
}

/// A request's signer as [`Verifier::signer_of`] found it in a header map.
#[derive(Clone)]
pub struct Signer<'h> {
    /// The cached key of the `TPP-Signature-Certificate`.
    pub key: Arc<TrustedKey>,
    /// The header map it was read from.
    headers: &'h http::HeaderMap,
    /// The headers the verification reads, found in `headers`.
    seen: SignedHeaders<'h>,
    /// The `Signature` value, trimmed.
    signature: &'h str,
}

/// Most certificates kept by a [`Verifier`]; the cache is emptied when it is full.
pub const CERT_CACHE_SIZE: usize = 256;

impl Verifier {
    /// A verifier with an empty certificate cache.
    pub fn new(policy: VerifyPolicy) -> Self {
        Verifier {
            policy,
            cache: Mutex::new(ExactCache::new()),
        }
    }

    /// Verifies `request` at `now` (the injectable clock).
    pub fn verify(
        &self,
        request: &RequestView<'_>,
        now: SystemTime,
    ) -> Result<VerifiedRequest, VerifyError> {
        verify_with(&self.policy, request, now, |value| self.load(value))
    }

    /// The request's signer as [`Verifier::verify`] finds it, for a caller that needs the
    /// certificate before the signature is checked (the sandbox dates a request by the
    /// claimed TPP's clock) and then calls [`Verifier::verify_signer`], so the certificate
    /// is looked up once per request (the cached [`TrustedKey`] of the
    /// `TPP-Signature-Certificate` value) and the `Signature` header read and UTF-8-checked
    /// once (issue 23).
    ///
    /// Errors, in [`Verifier::verify`]'s order: [`VerifyError::SignatureMissing`],
    /// [`VerifyError::CertificateMissing`], [`VerifyError::CertificateInvalid`].
    pub fn signer_of<'h>(&self, headers: &'h http::HeaderMap) -> Result<Signer<'h>, VerifyError> {
        self.signer_in(headers, SignedHeaders::of(headers))
    }

    /// [`Verifier::signer_of`] with the headers of `headers` already found (`seen`, of the
    /// same map: [`SignedHeaders::of`], or a caller's own pass noting them).
    ///
    /// Errors: those of [`Verifier::signer_of`].
    pub fn signer_in<'h>(
        &self,
        headers: &'h http::HeaderMap,
        seen: SignedHeaders<'h>,
    ) -> Result<Signer<'h>, VerifyError> {
        let signature = text_of(seen.signature).ok_or(VerifyError::SignatureMissing)?;
        // The header's bytes as received are looked up first: a certificate seen before
        // is found without checking its 1.3 KB for UTF-8 and trimming it (issue 23). Every
        // key in the cache is a trimmed text that parsed, so raw bytes that differ from it
        // (surrounding spaces, not UTF-8) miss here and take the checked way below.
        let key = match seen.certificate.and_then(|raw| self.cached(raw.as_bytes())) {
            Some(key) => key,
            None => self.load(text_of(seen.certificate).ok_or(VerifyError::CertificateMissing)?)?,
        };
        Ok(Signer {
            key,
            headers,
            seen,
            signature,
        })
    }

    /// The key of [`Verifier::signer_of`] alone.
    ///
    /// Errors: those of [`Verifier::signer_of`].
    pub fn key_of(&self, headers: &http::HeaderMap) -> Result<Arc<TrustedKey>, VerifyError> {
        self.signer_of(headers).map(|s| s.key)
    }

    /// The cached key whose header text is exactly `value`, if any.
    fn cached(&self, value: &[u8]) -> Option<Arc<TrustedKey>> {
        self.cache.lock().ok()?.get(value)
    }

    /// [`Verifier::verify`] with the signer `key` found by [`Verifier::key_of`] for the
    /// same request: the same checks in the same order.
    ///
    /// Errors: those of [`Verifier::verify`].
    pub fn verify_keyed(
        &self,
        request: &RequestView<'_>,
        now: SystemTime,
        key: &Arc<TrustedKey>,
    ) -> Result<VerifiedRequest, VerifyError> {
        verify_signed_message(&self.policy, request, now, key)
    }

    /// [`Verifier::verify`] with the `signer` found by [`Verifier::signer_of`] in
    /// `request`'s headers: the same checks in the same order, with the `Signature` value
    /// `signer_of` read (read again when `request` has another header map).
    ///
    /// Errors: those of [`Verifier::verify`].
    pub fn verify_signer(
        &self,
        request: &RequestView<'_>,
        now: SystemTime,
        signer: &Signer<'_>,
    ) -> Result<VerifiedRequest, VerifyError> {
        if std::ptr::eq(request.headers, signer.headers) {
            verify_with_key(
                &self.policy,
                request,
                &signer.seen,
                now,
                signer.signature,
                &signer.key,
            )
        } else {
            verify_signed_message(&self.policy, request, now, &signer.key)
        }
    }

    /// The cached key of the certificate in header value `value`, parsed on a miss. Keyed by
    /// the exact header text, so two certificates never share an entry, however alike.
    fn load(&self, value: &str) -> Result<Arc<TrustedKey>, VerifyError> {
        if let Some(k) = self.cached(value.as_bytes()) {
            return Ok(k);
        }
        let cert = Certificate::from_header_value(value)
            .map_err(|e| VerifyError::CertificateInvalid(e.to_string()))?;
        let key = Arc::new(TrustedKey::new(cert, self.policy.allow_legacy_1024)?);
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(value.as_bytes(), key.clone());
        }
        Ok(key)
    }

    /// How many certificates are cached (tests).
    pub fn cached_keys(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }
}

fn verify_with(
    policy: &VerifyPolicy,
    request: &RequestView<'_>,
    now: SystemTime,
    load_cert: impl Fn(&str) -> Result<Arc<TrustedKey>, VerifyError>,
) -> Result<VerifiedRequest, VerifyError> {
    let seen = SignedHeaders::of(request.headers);
    let signature_value = text_of(seen.signature).ok_or(VerifyError::SignatureMissing)?;
    let cert_value = text_of(seen.certificate).ok_or(VerifyError::CertificateMissing)?;
    let key = load_cert(cert_value)?;
    verify_with_key(policy, request, &seen, now, signature_value, &key)
}

/// Verifies a signed message (a request, or a signed response with `method` and
/// `path_and_query` empty) whose signer's certificate is already known: validity period,
/// Signature parameters, keyId against the certificate, Digest, Date, the signed headers and
/// the RSA signature, in that order (Authentication rules 4–9).
///
/// Errors: the first check that fails, as a [`VerifyError`] that says what differed.
pub fn verify_signed_message(
    policy: &VerifyPolicy,
    message: &RequestView<'_>,
    now: SystemTime,
    key: &Arc<TrustedKey>,
) -> Result<VerifiedRequest, VerifyError> {
    let seen = SignedHeaders::of(message.headers);
    let signature_value = text_of(seen.signature).ok_or(VerifyError::SignatureMissing)?;
    verify_with_key(policy, message, &seen, now, signature_value, key)
}

/// The checks of [`verify_signed_message`], with the request's headers found (`seen`, of
/// `request.headers`) and its `Signature` value read.
fn verify_with_key(
    policy: &VerifyPolicy,
    request: &RequestView<'_>,
    seen: &SignedHeaders<'_>,
    now: SystemTime,
    signature_value: &str,
    key: &Arc<TrustedKey>,
) -> Result<VerifiedRequest, VerifyError> {
    let headers = request.headers;
    let cert = &key.certificate;
    if policy.check_validity {
        let t = crate::cert::unix_seconds(now);
        if t > cert.not_after {
            return Err(VerifyError::CertificateExpired {
                not_after: imf_fixdate(cert.not_after_time()),
                now: imf_fixdate(now),
            });
        }
        if t < cert.not_before {
            return Err(VerifyError::CertificateNotYetValid {
                not_before: imf_fixdate(cert.not_before_time()),
                now: imf_fixdate(now),
            });
        }
    }
    let params = SignatureParams::parse(signature_value)?;
    if !params.algorithm.eq_ignore_ascii_case(ALGORITHM) {
        return Err(VerifyError::AlgorithmMismatch {
            algorithm: params.algorithm.clone(),
        });
    }
    if params.key_id != key.key_id {
        check_key_id(&params.key_id, cert)?;
    }
    // The eligible headers the Signature lists, one bit each (by `ELIGIBLE_HEADERS` index):
    // the two checks below test a bit instead of comparing names (issue 23).
    let signed = params
        .headers
        .iter()
        .filter_map(|h| eligible_index(h))
        .fold(0u8, |m, i| m | 1 << i);
    // Digest (rule 9)
    let digest = seen.text[1];
    match digest {
        Some(d) => {
            let Some(b64) = d
                .strip_prefix("SHA-256=")
                .or_else(|| d.strip_prefix("sha-256="))
            else {
                return Err(VerifyError::DigestUnsupported(d.to_string()));
            };
            let computed = digest_header_value(request.body);
            if computed["SHA-256=".len()..] != *b64 {
                return Err(VerifyError::DigestMismatch {
                    header: d.to_string(),
                    computed,
                });
            }
            if signed & 1 << 1 == 0 {
                return Err(VerifyError::DigestNotSigned);
            }
        }
        None if !request.body.is_empty() => return Err(VerifyError::DigestMissing),
        None => {}
    }
    // Date (rule 4)
    let date = match seen.text[0] {
        Some(d) => {
            let date = parse_imf_fixdate(d).map_err(|e| VerifyError::DateInvalid(e.to_string()))?;
            let skew = crate::cert::unix_seconds(date) - crate::cert::unix_seconds(now);
            if skew.unsigned_abs() > policy.max_skew_secs {
                return Err(VerifyError::DateSkew {
                    date: d.to_string(),
                    server_time: imf_fixdate(now),
                    skew_secs: skew,
                    max_secs: policy.max_skew_secs,
                });
            }
            Some(date)
        }
        None if policy.require_date => return Err(VerifyError::DateMissing),
        None => None,
    };
    // Every listed header is present (building the signing string looks each up, and fails
    // on the first one missing), and (policy) every eligible present header is listed.
    let signing_string = build_signing_string(
        request.method,
        request.path_and_query,
        &params.headers,
        |n| signed_header(headers, seen, n),
    )
    .map_err(|SigningStringError::HeaderMissing(name)| VerifyError::SignedHeaderMissing(name))?;
    if policy.require_eligible_signed {
        // A signed name needs no look-up: only an unsigned one can break the rule (the
        // four usually signed headers were looked up once, for the signing string).
        for (i, (name, text)) in ELIGIBLE_HEADERS.iter().zip(&seen.text).enumerate() {
            if text.is_some() && signed & 1 << i == 0 {
                return Err(VerifyError::HeaderNotSigned(name.to_string()));
            }
        }
    }
    if !key.verify(signing_string.as_bytes(), &params.signature) {
        return Err(VerifyError::SignatureInvalid { signing_string });
    }
    Ok(VerifiedRequest {
        certificate: key.certificate.clone(),
        params,
        date,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`trim_text`] is [`str::trim`] on every value: visible ASCII at both ends, ASCII and
    /// Unicode whitespace at either end, empty and blank values.
    #[test]
    fn trim_text_is_str_trim() {
        for v in [
            "",
            " ",
            "\t",
            "a",
            " a",
            "a ",
            "\ta b\t",
            "abc",
            "a b",
            "\u{a0}x",
            "x\u{a0}",
            "\u{2003}x\u{2003}",
            "é",
            " é ",
            "x\u{85}",
            "~",
            "\u{7f}x",
            "x\u{1}",
        ] {
            assert_eq!(trim_text(v), v.trim(), "{v:?}");
        }
    }

    /// Keys of the same length and the same last bytes share a bucket, and each is found
    /// under its own bytes only: never another key's value.
    #[test]
    fn the_certificate_cache_finds_a_value_under_its_exact_key_only() {
        let tail = "T".repeat(TAIL + 8);
        let (a, b) = (format!("A{tail}"), format!("B{tail}"));
        let mut c = ExactCache::new();
        c.insert(a.as_bytes(), 1);
        assert_eq!(c.get(a.as_bytes()), Some(1));
        assert_eq!(
            c.get(b.as_bytes()),
            None,
            "same length and tail, other bytes"
        );
        assert_eq!(c.get(tail.as_bytes()), None, "a suffix of the key");
        c.insert(b.as_bytes(), 2);
        assert_eq!(
            (c.get(a.as_bytes()), c.get(b.as_bytes())),
            (Some(1), Some(2))
        );
        assert_eq!(c.buckets.len(), 1, "a and b share their bucket");
        c.insert(a.as_bytes(), 3);
        assert_eq!((c.get(a.as_bytes()), c.len()), (Some(3), 2));
        // Keys shorter than the tail, and the empty key.
        c.insert(b"x", 4);
        c.insert(b"", 5);
        assert_eq!(
            (c.get(b"x"), c.get(b""), c.get(b"\0x")),
            (Some(4), Some(5), None)
        );
        // Full: emptied before the next entry.
        for i in 0..CERT_CACHE_SIZE {
            c.insert(format!("{i}").as_bytes(), 0);
        }
        assert!(c.len() <= CERT_CACHE_SIZE);
        assert_eq!(c.get(a.as_bytes()), None);
    }

    /// The one pass ([`SignedHeaders::of`]) finds what a look-up by name finds: the first
    /// value of each eligible header (as text: trimmed, `None` when not UTF-8), the
    /// `Signature` and the certificate; [`signed_header`] finds by it what a look-up by
    /// text finds, other headers included.
    #[test]
    fn the_one_pass_finds_what_a_look_up_by_name_finds() {
        let mut h = http::HeaderMap::new();
        for (i, name) in ELIGIBLE_HEADERS.iter().enumerate() {
            assert_eq!((slot(name), eligible_index(name)), (Some(i), Some(i)));
            h.insert(*name, format!(" value {i} ").parse().unwrap());
            h.append(*name, "second".parse().unwrap());
        }
        for other in [
            "signature",
            "tpp-signature-certificate",
            "(request-target)",
            "host",
        ] {
            assert_eq!(eligible_index(other), None, "{other}");
        }
        h.insert("x-other", "other".parse().unwrap());
        h.insert("signature", "sig".parse().unwrap());
        h.insert("tpp-signature-certificate", "cert".parse().unwrap());
        h.insert("psu-ip-address", "127.0.0.1".parse().unwrap());
        let seen = SignedHeaders::of(&h);
        for name in ELIGIBLE_HEADERS.iter().chain(&["x-other", "absent"]) {
            assert_eq!(signed_header(&h, &seen, name), header(&h, name), "{name}");
        }
        assert_eq!(signed_header(&h, &seen, "psu-id"), Some("value 3"));
        assert_eq!(signed_header(&h, &seen, "absent"), None);
        assert_eq!(seen.x_request_id(), h.get("x-request-id"));
        assert_eq!(seen.tpp_redirect_uri(), h.get("tpp-redirect-uri"));
        assert_eq!(seen.value("digest"), h.get("digest"));
        assert_eq!(seen.value("x-other"), None);
        assert_eq!(seen.signature, h.get("signature"));
        assert_eq!(seen.certificate(), h.get("tpp-signature-certificate"));
        // A value that is not UTF-8 reads as absent, as by name.
        h.insert("psu-id", http::HeaderValue::from_bytes(b"caf\xe9").unwrap());
        let seen = SignedHeaders::of(&h);
        assert_eq!(signed_header(&h, &seen, "psu-id"), None);
        assert_eq!(header(&h, "psu-id"), None);
        assert!(seen.value("psu-id").is_some());
        assert_eq!(SignedHeaders::of(&http::HeaderMap::new()).text, [None; 6]);
    }
}
