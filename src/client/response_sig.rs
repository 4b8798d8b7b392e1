//! Verification of signed responses (interface document, Authentication rule 10: "The ASPSP
//! may sign response bodies; the TPP should verify them").
//!
//! Neither the interface document nor the Berlin Group 1.3.11 OpenAPI file names the headers
//! of a signed response, so the console reads the request-side ones mirrored: `Signature`
//! (rule 5 format), `Digest` over the body (rule 9) and the certificate, base64 DER, in
//! `ASPSP-Signature-Certificate` (else the profile's `aspsp_certificate` file). The checks
//! are the sandbox's request verifier ([`crate::signing::verify_signed_message`]): validity,
//! keyId, Digest, Date (within 5 minutes) and the RSA signature over the listed headers.

use std::sync::Arc;
use std::time::SystemTime;

use super::Exchange;
use crate::cert::Certificate;
use crate::profile::Profile;
use crate::signing::{RequestView, TrustedKey, VerifyPolicy, verify_signed_message};

/// The header that carries the ASPSP's signing certificate (base64 DER) in a response.
pub const ASPSP_SIGNATURE_CERTIFICATE: &str = "ASPSP-Signature-Certificate";

/// Largest |Date − now| accepted on a signed response, seconds.
pub(crate) const RESPONSE_MAX_SKEW_SECS: u64 = 300;

/// The outcome of checking a response's signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseSignature {
    /// The signature verifies; `key_id` as signed, `certificate_from` says where the
    /// certificate came from (the response header or the profile's file).
    Verified {
        /// The keyId of the Signature header.
        key_id: String,
        /// `ASPSP-Signature-Certificate` or the file name.
        certificate_from: String,
    },
    /// The response is signed but the signature does not verify; why.
    Failed(String),
    /// The response carries no `Signature` header.
    Unsigned,
}

impl ResponseSignature {
    /// One line for the response pane, e.g. `signature OK (SN=1A,CA=…)`.
    pub fn summary(&self) -> String {
        match self {
            ResponseSignature::Verified {
                key_id,
                certificate_from,
            } => format!("signature OK ({key_id}; certificate from {certificate_from})"),
            ResponseSignature::Failed(why) => format!("signature FAILED: {why}"),
            ResponseSignature::Unsigned => "unsigned response".into(),
        }
    }

    /// Whether the signature verified.
    pub fn is_ok(&self) -> bool {
        matches!(self, ResponseSignature::Verified { .. })
    }
}

/// Checks `exchange` when `profile.verify_response_signatures` is on (`None` when off), at
/// `now`. The certificate is the `ASPSP-Signature-Certificate` header's, else the file
/// `aspsp_certificate` of the profile.
pub fn verify_response(
    profile: &Profile,
    exchange: &Exchange,
    now: SystemTime,
) -> Option<ResponseSignature> {
    if !profile.verify_response_signatures {
        return None;
    }
    let configured = match &profile.aspsp_certificate {
        Some(p) => {
            let path = profile.resolve(p);
            match Certificate::load(&path) {
                Ok(c) => Some((c, path.display().to_string())),
                Err(e) => {
                    return Some(ResponseSignature::Failed(format!(
                        "the profile's aspsp_certificate cannot be used: {e}"
                    )));
                }
            }
        }
        None => None,
    };
    Some(verify_response_with(
        &exchange.headers,
        &exchange.body,
        configured,
        now,
    ))
}

/// Checks a response given as headers and body. `configured` is a known ASPSP certificate
/// (and where it came from), used when the response has no certificate header.
pub(crate) fn verify_response_with(
    headers: &[(String, String)],
    body: &[u8],
    configured: Option<(Certificate, String)>,
    now: SystemTime,
) -> ResponseSignature {
    let find = |n: &str| crate::xs2a::headers::find(headers, n);
    if find(crate::xs2a::headers::SIGNATURE).is_none() {
        return ResponseSignature::Unsigned;
    }
    let (cert, from) = match (find(ASPSP_SIGNATURE_CERTIFICATE), configured) {
        (Some(v), _) => match Certificate::from_header_value(v) {
            Ok(c) => (c, ASPSP_SIGNATURE_CERTIFICATE.to_string()),
            Err(e) => return ResponseSignature::Failed(e.to_string()),
        },
        (None, Some((c, from))) => (c, from),
        (None, None) => {
            return ResponseSignature::Failed(format!(
                "the response has no {ASPSP_SIGNATURE_CERTIFICATE} header; set `aspsp_certificate` in the profile to verify it"
            ));
        }
    };
    let key = match TrustedKey::new(cert, false) {
        Ok(k) => Arc::new(k),
        Err(e) => return ResponseSignature::Failed(e.to_string()),
    };
    let mut map = http::HeaderMap::new();
    for (n, v) in headers {
        if let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(n.as_bytes()),
            http::HeaderValue::from_str(v),
        ) {
            map.append(n, v);
        }
    }
    let policy = VerifyPolicy {
        max_skew_secs: RESPONSE_MAX_SKEW_SECS,
        require_eligible_signed: false,
        require_date: false,
        check_validity: true,
        allow_legacy_1024: false,
    };
    let view = RequestView {
        method: "",
        path_and_query: "",
        headers: &map,
        body,
    };
    match verify_signed_message(&policy, &view, now, &key) {
        Ok(v) => ResponseSignature::Verified {
            key_id: v.params.key_id,
            certificate_from: from,
        },
        Err(e) => ResponseSignature::Failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cert::generate::{TppCertSpec, credentials_of, generate_set};
    use crate::signing::{digest_header_value, imf_fixdate, sign_with_names};

    fn signed(body: &[u8], with_cert: bool) -> (Vec<(String, String)>, Certificate) {
        let creds = credentials_of(&generate_set(&TppCertSpec::default()).unwrap()).unwrap();
        let mut headers = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("Date".to_string(), imf_fixdate(SystemTime::now())),
            ("Digest".to_string(), digest_header_value(body)),
            ("X-Request-ID".to_string(), uuid::Uuid::new_v4().to_string()),
        ];
        let names: Vec<String> = ["date", "digest", "x-request-id"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (_, params) = sign_with_names(&creds, "", "", &headers, &names).unwrap();
        headers.push(("Signature".into(), params.to_header_value()));
        if with_cert {
            headers.push((
                ASPSP_SIGNATURE_CERTIFICATE.into(),
                creds.certificate.header_value(),
            ));
        }
        (headers, creds.certificate.clone())
    }

    #[test]
    fn verified_tampered_unsigned_and_configured_certificate() {
        let body = br#"{"accounts":[]}"#;
        let (headers, cert) = signed(body, true);
        let now = SystemTime::now();
        let ok = verify_response_with(&headers, body, None, now);
        assert!(ok.is_ok(), "{ok:?}");
        let bad = verify_response_with(&headers, br#"{"accounts":[1]}"#, None, now);
        assert!(
            matches!(&bad, ResponseSignature::Failed(m) if m.contains("digest mismatch")),
            "{bad:?}"
        );
        assert_eq!(
            verify_response_with(&headers[..1], body, None, now),
            ResponseSignature::Unsigned
        );
        let (no_cert, own) = signed(body, false);
        let missing = verify_response_with(&no_cert, body, None, now);
        assert!(
            matches!(&missing, ResponseSignature::Failed(m) if m.contains("aspsp_certificate")),
            "{missing:?}"
        );
        // The other key signed `no_cert`: the configured certificate must not verify it.
        let wrong = verify_response_with(&no_cert, body, Some((cert, "file".into())), now);
        assert!(!wrong.is_ok(), "{wrong:?}");
        let right = verify_response_with(&no_cert, body, Some((own, "aspsp.pem".into())), now);
        assert!(
            matches!(&right, ResponseSignature::Verified { certificate_from, .. } if certificate_from == "aspsp.pem"),
            "{right:?}"
        );
    }
}
