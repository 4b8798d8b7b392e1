//! eIDAS certificates and RSA keys: loading (PEM or DER; PKCS#8 or PKCS#1 keys), the keyId of
//! the interface document (Authentication rule 5), PSD2 roles from the qcStatements extension
//! (OID 1.3.6.1.5.5.7.1.3, ETSI TS 119 495), and test-certificate generation.

pub mod ca;
pub(crate) mod dn;
pub mod generate;
pub mod qc;

use std::fmt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::signature::KeyPair as _;
use base64::Engine as _;

pub use dn::{DistinguishedName, DnAttribute};
pub use qc::{Psd2Role, Psd2Statement};

/// Errors of loading and checking certificates and keys.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// Reading a file failed. The I/O error is in the message only (not a `source`), so
    /// `{:#}` chains do not print it twice.
    #[error("cannot read {path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        error: std::io::Error,
    },
    /// Writing a file (or creating its directory) failed.
    #[error("cannot write {path}: {error}")]
    Write {
        /// The file.
        path: String,
        /// What the system said.
        error: std::io::Error,
    },
    /// The bytes are not a certificate.
    #[error("{what} is not a PEM or DER X.509 certificate: {reason}")]
    BadCertificate {
        /// Where the bytes came from (a path, a header).
        what: String,
        /// What the parser said.
        reason: String,
    },
    /// The bytes are not an RSA private key.
    #[error("{what} is not an RSA private key in PKCS#8 or PKCS#1 (PEM or DER): {reason}")]
    BadKey {
        /// Where the bytes came from.
        what: String,
        /// What the parser said.
        reason: String,
    },
    /// The key is not the certificate's.
    #[error(
        "the private key does not match the certificate (certificate {subject}, serial {serial})"
    )]
    KeyMismatch {
        /// The certificate's subject, RFC 2253.
        subject: String,
        /// The certificate's serial, upper-case hex.
        serial: String,
    },
    /// The certificate's key is not RSA.
    #[error("the certificate's public key is not RSA (algorithm {oid}); only rsa-sha256 is used")]
    NotRsa {
        /// Dotted OID of the key's algorithm.
        oid: String,
    },
    /// Generating a certificate set failed: why.
    #[error("certificate generation failed: {0}")]
    Generate(String),
}

/// Reads the file at `path` and parses its bytes with `parse(bytes, what)`, `what` being the
/// path as shown in messages ([`Certificate::load`], [`PrivateKey::load`]).
///
/// Errors: [`CertError::Io`] when the file cannot be read; what `parse` returns.
fn load_file<T>(
    path: &Path,
    parse: impl FnOnce(&[u8], &str) -> Result<T, CertError>,
) -> Result<T, CertError> {
    let what = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| CertError::Io {
        path: what.clone(),
        error,
    })?;
    parse(&bytes, &what)
}

/// Days before `notAfter` from which a certificate is reported as expiring soon.
pub(crate) const EXPIRY_WARNING_DAYS: i64 = 30;

/// A certificate's validity at some instant ([`Certificate::validity_at`]); durations in
/// seconds, days rounded down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validity {
    /// Before `notBefore`; `starts_in` seconds until it is.
    NotYetValid {
        /// Seconds until `notBefore`.
        starts_in: i64,
    },
    /// After `notAfter`, since `ago` seconds.
    Expired {
        /// Seconds since `notAfter`.
        ago: i64,
    },
    /// Valid, but `notAfter` is less than [`EXPIRY_WARNING_DAYS`] away.
    ExpiresSoon {
        /// Whole days left.
        days: i64,
    },
    /// Valid for `days_left` more days.
    Valid {
        /// Whole days left.
        days_left: i64,
    },
}

impl Validity {
    /// Whether the certificate can be used now (valid or expiring soon).
    pub fn is_usable(self) -> bool {
        matches!(self, Validity::ExpiresSoon { .. } | Validity::Valid { .. })
    }
}

/// OID of `rsaEncryption` (PKCS#1).
pub(crate) const RSA_ENCRYPTION_OID: &str = "1.2.840.113549.1.1.1";

/// A parsed X.509 certificate with the fields PSD2 signing needs.
#[derive(Clone)]
pub struct Certificate {
    /// The DER encoding, as sent base64-encoded in `TPP-Signature-Certificate`.
    pub der: Vec<u8>,
    /// Serial number as a big-endian magnitude without leading zero bytes.
    pub serial: Vec<u8>,
    /// The issuer (the CA), the `CA=` of the keyId.
    pub issuer: DistinguishedName,
    /// The subject (the TPP).
    pub subject: DistinguishedName,
    /// Validity start and end, seconds since the Unix epoch.
    pub not_before: i64,
    /// End of validity, seconds since the Unix epoch.
    pub not_after: i64,
    /// The ETSI TS 119 495 PSD2 statement, when the certificate has one.
    pub psd2: Option<Psd2Statement>,
    /// Dotted OID of the subject public key algorithm.
    pub key_algorithm: String,
    /// The subject public key bits: for RSA the PKCS#1 `RSAPublicKey` DER.
    pub public_key: Vec<u8>,
}

impl fmt::Debug for Certificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Certificate")
            .field("serial", &self.serial_hex())
            .field("issuer", &self.issuer.to_rfc2253())
            .field("subject", &self.subject.to_rfc2253())
            .field("not_before", &self.not_before)
            .field("not_after", &self.not_after)
            .field("psd2", &self.psd2)
            .finish()
    }
}

impl Certificate {
    /// Parses a DER certificate.
    ///
    /// Errors: [`CertError::BadCertificate`] when the bytes are not one X.509 certificate.
    pub fn from_der(der: &[u8], what: &str) -> Result<Self, CertError> {
        let bad = |reason: String| CertError::BadCertificate {
            what: what.to_string(),
            reason,
        };
        let (rest, x509) =
            x509_parser::parse_x509_certificate(der).map_err(|e| bad(e.to_string()))?;
        if !rest.is_empty() {
            return Err(bad(format!("{} bytes after the certificate", rest.len())));
        }
        let tbs = &x509.tbs_certificate;
        let serial = strip_leading_zeros(tbs.raw_serial()).to_vec();
        let psd2 = match tbs
            .extensions()
            .iter()
            .find(|e| e.oid.to_id_string() == qc::QC_STATEMENTS_OID)
        {
            Some(ext) => qc::parse_qc_statements(ext.value).map_err(|e| bad(e.to_string()))?,
            None => None,
        };
        Ok(Certificate {
            der: der.to_vec(),
            serial,
            issuer: DistinguishedName::from_x509(&tbs.issuer),
            subject: DistinguishedName::from_x509(&tbs.subject),
            not_before: tbs.validity.not_before.timestamp(),
            not_after: tbs.validity.not_after.timestamp(),
            psd2,
            key_algorithm: tbs.subject_pki.algorithm.algorithm.to_id_string(),
            public_key: tbs.subject_pki.subject_public_key.data.to_vec(),
        })
    }

    /// Parses PEM (`CERTIFICATE`) or DER bytes.
    pub fn from_pem_or_der(bytes: &[u8], what: &str) -> Result<Self, CertError> {
        if looks_like_pem(bytes) {
            let block = pem::parse(bytes).map_err(|e| CertError::BadCertificate {
                what: what.to_string(),
                reason: e.to_string(),
            })?;
            if block.tag() != "CERTIFICATE" {
                return Err(CertError::BadCertificate {
                    what: what.to_string(),
                    reason: format!("PEM block is {:?}, expected CERTIFICATE", block.tag()),
                });
            }
            Self::from_der(block.contents(), what)
        } else {
            Self::from_der(bytes, what)
        }
    }

    /// Reads a certificate file (PEM or DER).
    pub fn load(path: &Path) -> Result<Self, CertError> {
        load_file(path, Self::from_pem_or_der)
    }

    /// Parses the value of a `TPP-Signature-Certificate` header: base64 of the DER (a PEM
    /// body with or without its armour and line breaks is accepted too).
    pub fn from_header_value(value: &str) -> Result<Self, CertError> {
        let what = "TPP-Signature-Certificate";
        let body: String = value
            .lines()
            .filter(|l| !l.starts_with("-----"))
            .collect::<String>()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(body.as_bytes())
            .map_err(|e| CertError::BadCertificate {
                what: what.to_string(),
                reason: format!("not base64: {e}"),
            })?;
        Self::from_der(&der, what)
    }

    /// Base64 of the DER on one line, the `TPP-Signature-Certificate` header value.
    pub fn header_value(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.der)
    }

    /// PEM text of the certificate.
    pub fn to_pem(&self) -> String {
        pem::encode(&pem::Pem::new("CERTIFICATE", self.der.clone()))
    }

    /// Serial in upper-case hex without leading zeros (`0` for a zero serial).
    pub fn serial_hex(&self) -> String {
        if self.serial.is_empty() {
            return "0".into();
        }
        let hex = hex::encode_upper(&self.serial);
        hex.trim_start_matches('0').to_string()
    }

    /// The keyId of Authentication rule 5: `SN=<upper-case hex serial>,CA=<issuer RFC 2253>`.
    pub fn key_id(&self) -> String {
        format!("SN={},CA={}", self.serial_hex(), self.issuer.to_rfc2253())
    }

    /// PSD2 roles from the qcStatements extension (empty when there is none).
    pub fn roles(&self) -> Vec<Psd2Role> {
        self.psd2
            .as_ref()
            .map(|p| p.roles.clone())
            .unwrap_or_default()
    }

    /// Whether `now` lies within the validity period.
    pub fn is_valid_at(&self, now: SystemTime) -> bool {
        let t = unix_seconds(now);
        self.not_before <= t && t <= self.not_after
    }

    /// The verdict on the validity period at `now` (Unix seconds), as the console shows it
    /// (profile inspector, `cert show`): [`Validity::NotYetValid`] before `notBefore`,
    /// [`Validity::Expired`] after `notAfter`, [`Validity::ExpiresSoon`] within
    /// [`EXPIRY_WARNING_DAYS`] of `notAfter`, else [`Validity::Valid`].
    pub fn validity_at(&self, now: i64) -> Validity {
        let left = self.not_after - now;
        if now < self.not_before {
            Validity::NotYetValid {
                starts_in: self.not_before - now,
            }
        } else if left < 0 {
            Validity::Expired { ago: -left }
        } else if left < EXPIRY_WARNING_DAYS * 86_400 {
            Validity::ExpiresSoon {
                days: left / 86_400,
            }
        } else {
            Validity::Valid {
                days_left: left / 86_400,
            }
        }
    }

    /// The roles of `expected` that the certificate's PSD2 statement lacks, in `expected`'s
    /// order (all of them when it has no statement).
    pub fn missing_roles(&self, expected: &[Psd2Role]) -> Vec<Psd2Role> {
        let have = self.roles();
        expected
            .iter()
            .filter(|r| !have.contains(r))
            .copied()
            .collect()
    }

    /// Whether the public key is RSA.
    pub(crate) fn is_rsa(&self) -> bool {
        self.key_algorithm == RSA_ENCRYPTION_OID
    }

    /// Validity end as a `SystemTime`.
    pub fn not_after_time(&self) -> SystemTime {
        from_unix_seconds(self.not_after)
    }

    /// Validity start as a `SystemTime`.
    pub fn not_before_time(&self) -> SystemTime {
        from_unix_seconds(self.not_before)
    }
}

/// Seconds since the Unix epoch (negative before 1970).
pub fn unix_seconds(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

/// Inverse of [`unix_seconds`].
pub fn from_unix_seconds(s: i64) -> SystemTime {
    if s >= 0 {
        UNIX_EPOCH + Duration::from_secs(s as u64)
    } else {
        UNIX_EPOCH - Duration::from_secs(s.unsigned_abs())
    }
}

fn strip_leading_zeros(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|&&x| x == 0).count();
    &b[n..]
}

fn looks_like_pem(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64)];
    String::from_utf8_lossy(head)
        .trim_start()
        .starts_with("-----BEGIN")
}

/// An RSA private key (aws-lc-rs). Its `Debug` output never shows key material.
pub struct PrivateKey {
    key_pair: aws_lc_rs::rsa::KeyPair,
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PrivateKey(RSA-{}, redacted)",
            self.key_pair.public_modulus_len() * 8
        )
    }
}

impl PrivateKey {
    /// Parses PKCS#8 (`PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`), PEM or DER.
    ///
    /// Errors: [`CertError::BadKey`] naming `what` (the file) and why.
    pub fn from_pem_or_der(bytes: &[u8], what: &str) -> Result<Self, CertError> {
        let bad = |reason: String| CertError::BadKey {
            what: what.to_string(),
            reason,
        };
        if looks_like_pem(bytes) {
            let block = pem::parse(bytes).map_err(|e| bad(e.to_string()))?;
            let key_pair = match block.tag() {
                "PRIVATE KEY" => aws_lc_rs::rsa::KeyPair::from_pkcs8(block.contents())
                    .map_err(|e| bad(format!("PKCS#8: {e}")))?,
                "RSA PRIVATE KEY" => aws_lc_rs::rsa::KeyPair::from_der(block.contents())
                    .map_err(|e| bad(format!("PKCS#1: {e}")))?,
                other => {
                    return Err(bad(format!(
                        "PEM block is {other:?}, expected PRIVATE KEY or RSA PRIVATE KEY"
                    )));
                }
            };
            Ok(PrivateKey { key_pair })
        } else {
            let key_pair = aws_lc_rs::rsa::KeyPair::from_pkcs8(bytes)
                .or_else(|_| aws_lc_rs::rsa::KeyPair::from_der(bytes))
                .map_err(|e| bad(format!("neither PKCS#8 nor PKCS#1 DER: {e}")))?;
            Ok(PrivateKey { key_pair })
        }
    }

    /// Reads a key file.
    pub fn load(path: &Path) -> Result<Self, CertError> {
        load_file(path, Self::from_pem_or_der)
    }

    /// The public key as PKCS#1 `RSAPublicKey` DER.
    pub fn public_key_der(&self) -> &[u8] {
        self.key_pair.public_key().as_ref()
    }

    /// Whether this key belongs to `cert`.
    pub fn matches(&self, cert: &Certificate) -> bool {
        cert.is_rsa() && cert.public_key == self.public_key_der()
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 over `message` (deterministic).
    pub fn sign_rsa_sha256(&self, message: &[u8]) -> Vec<u8> {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let mut sig = vec![0u8; self.key_pair.public_modulus_len()];
        self.key_pair
            .sign(
                &aws_lc_rs::signature::RSA_PKCS1_SHA256,
                &rng,
                message,
                &mut sig,
            )
            .expect("RSA signing with a validated key cannot fail");
        sig
    }

    /// Size of the modulus in bits.
    pub fn bits(&self) -> usize {
        self.key_pair.public_modulus_len() * 8
    }
}

/// A certificate and its matching key, as a TPP signs with them.
#[derive(Debug)]
pub struct Credentials {
    /// The certificate sent in `TPP-Signature-Certificate`.
    pub certificate: Certificate,
    /// Its private key, which signs.
    pub key: PrivateKey,
}

impl Credentials {
    /// Pairs a certificate and a key, refusing a key that does not match.
    pub fn new(certificate: Certificate, key: PrivateKey) -> Result<Self, CertError> {
        if !certificate.is_rsa() {
            return Err(CertError::NotRsa {
                oid: certificate.key_algorithm.clone(),
            });
        }
        if !key.matches(&certificate) {
            return Err(CertError::KeyMismatch {
                subject: certificate.subject.to_rfc2253(),
                serial: certificate.serial_hex(),
            });
        }
        Ok(Credentials { certificate, key })
    }

    /// Loads and pairs a certificate file and a key file.
    pub fn load(cert_path: &Path, key_path: &Path) -> Result<Self, CertError> {
        Self::new(Certificate::load(cert_path)?, PrivateKey::load(key_path)?)
    }
}

#[cfg(test)]
mod validity_tests {
    use super::*;

    /// The verdict `cert show` and the profile inspector print (issue 8 item 20).
    #[test]
    fn validity_verdicts_and_missing_roles() {
        let pem = include_bytes!("../../tests/vectors/tpp_qsealc_cert.pem");
        let c = Certificate::from_pem_or_der(pem, "vector").unwrap();
        let day = 86_400;
        assert_eq!(
            c.validity_at(c.not_before - 2 * day),
            Validity::NotYetValid { starts_in: 2 * day }
        );
        assert_eq!(
            c.validity_at(c.not_after + 3 * day),
            Validity::Expired { ago: 3 * day }
        );
        assert_eq!(
            c.validity_at(c.not_after - 5 * day - 10),
            Validity::ExpiresSoon { days: 5 }
        );
        assert!(matches!(
            c.validity_at(c.not_before + day),
            Validity::Valid { .. }
        ));
        assert!(!c.validity_at(c.not_after + 1).is_usable());
        assert_eq!(
            c.missing_roles(&[Psd2Role::PspAi, Psd2Role::PspIc]),
            vec![Psd2Role::PspIc]
        );
    }
}
