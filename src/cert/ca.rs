//! The sandbox's own test CA: one per data directory, generated on first use and kept
//! (`<data dir>/sandbox-ca.pem`, `<data dir>/sandbox-ca.key`, the key 0600, both written
//! atomically), so that clients trust it once (`psd2-console cert ca --out FILE`).
//!
//! It issues the TLS server certificate of `sandbox serve --tls` (when no `--tls-cert` is
//! given) and QWACs (`cert new --qwac`) that the sandbox trusts as TLS client certificates.
//! It is a test CA (ECDSA P-256, ten years); nothing it issues is eIDAS-qualified.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

use super::generate::{TppCertSpec, gen_err, issue_tpp, random_serial, validity};
use super::{CertError, Certificate};

/// File name of the CA certificate in the data directory.
pub const CA_CERT_FILE: &str = "sandbox-ca.pem";
/// File name of the CA key in the data directory (mode 0600).
pub const CA_KEY_FILE: &str = "sandbox-ca.key";
/// Common name of the CA's subject.
pub const CA_COMMON_NAME: &str = "psd2-console Sandbox TLS CA";
/// Validity of the TLS server certificates it issues, days (the CA/Browser Forum's 398-day
/// limit, minus a day).
pub const SERVER_CERT_DAYS: u32 = 397;

/// The sandbox CA: its certificate and key (PEM). `Debug` does not show the key.
#[derive(Clone)]
pub struct SandboxCa {
    cert_pem: String,
    key_pem: String,
    certificate: Certificate,
}

impl std::fmt::Debug for SandboxCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SandboxCa({}, key redacted)", self.certificate.subject)
    }
}

/// The paths of the CA's files in `data_dir`: (certificate, key).
pub fn ca_files(data_dir: &Path) -> (PathBuf, PathBuf) {
    (data_dir.join(CA_CERT_FILE), data_dir.join(CA_KEY_FILE))
}

impl SandboxCa {
    /// The CA of `data_dir`: loaded when its two files exist, else generated and written
    /// (the certificate 0644, the key 0600, each atomically; the key first, so a
    /// certificate file never exists without its key).
    ///
    /// Errors: [`CertError::Io`] / [`CertError::Write`] for the files,
    /// [`CertError::BadCertificate`] / [`CertError::BadKey`] / [`CertError::Generate`] when
    /// the kept files are not a CA certificate and its key, or generation fails.
    pub fn load_or_create(data_dir: &Path) -> Result<SandboxCa, CertError> {
        let (cert_path, key_path) = ca_files(data_dir);
        if cert_path.exists() && key_path.exists() {
            let read = |p: &Path| {
                std::fs::read_to_string(p).map_err(|error| CertError::Io {
                    path: p.display().to_string(),
                    error,
                })
            };
            return SandboxCa::from_pem(read(&cert_path)?, read(&key_path)?);
        }
        let ca = SandboxCa::generate()?;
        let write = |p: &Path, text: &str, private: bool| {
            crate::fsutil::write_atomic(p, text.as_bytes(), private).map_err(|error| {
                CertError::Write {
                    path: p.display().to_string(),
                    error,
                }
            })
        };
        write(&key_path, &ca.key_pem, true)?;
        write(&cert_path, &ca.cert_pem, false)?;
        Ok(ca)
    }

    /// A new CA in memory (tests, a sandbox without a data directory).
    ///
    /// Errors: [`CertError::Generate`].
    pub fn generate() -> Result<SandboxCa, CertError> {
        let key = KeyPair::generate().map_err(gen_err)?;
        let cert = ca_params().self_signed(&key).map_err(gen_err)?;
        SandboxCa::from_pem(cert.pem(), key.serialize_pem())
    }

    /// A CA from its certificate and key PEM.
    ///
    /// Errors: the certificate does not parse, or the key is not a PEM key of it.
    pub fn from_pem(cert_pem: String, key_pem: String) -> Result<SandboxCa, CertError> {
        let certificate = Certificate::from_pem_or_der(cert_pem.as_bytes(), CA_CERT_FILE)?;
        // Proves the pair parses as an issuer (rcgen checks the key against the certificate
        // when it signs; here that the PEM is a key at all).
        let bad_key = |e: rcgen::Error| CertError::BadKey {
            what: CA_KEY_FILE.into(),
            reason: e.to_string(),
        };
        let key = KeyPair::from_pem(&key_pem).map_err(bad_key)?;
        if key.public_key_raw() != certificate.public_key.as_slice() {
            return Err(CertError::KeyMismatch {
                subject: certificate.subject.to_string(),
                serial: certificate.serial_hex(),
            });
        }
        Ok(SandboxCa {
            cert_pem,
            key_pem,
            certificate,
        })
    }

    /// The CA certificate, PEM (what clients trust: `cert ca`).
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA certificate, parsed.
    pub fn certificate(&self) -> &Certificate {
        &self.certificate
    }

    fn issuer(&self) -> Result<Issuer<'static, KeyPair>, CertError> {
        let key = KeyPair::from_pem(&self.key_pem).map_err(gen_err)?;
        Issuer::from_ca_cert_pem(&self.cert_pem, key).map_err(gen_err)
    }

    /// Issues a TLS server certificate for `names` (DNS names or IP addresses; each one a
    /// subjectAltName, the first also the common name), ECDSA P-256, valid
    /// [`SERVER_CERT_DAYS`] days from five minutes ago, extended key usage `serverAuth`:
    /// (certificate chain PEM: the server certificate then this CA, key PEM).
    ///
    /// Errors: [`CertError::Generate`] (a name that is neither a DNS name nor an address).
    pub fn issue_server_cert(&self, names: &[String]) -> Result<(String, String), CertError> {
        let mut params = CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(
            DnType::CommonName,
            names.first().map_or("localhost", String::as_str),
        );
        params
            .distinguished_name
            .push(DnType::OrganizationName, "psd2-console Sandbox Bank");
        let mut sans = Vec::new();
        for name in names {
            let san = match name.parse::<IpAddr>() {
                Ok(ip) => SanType::IpAddress(ip),
                Err(_) => SanType::DnsName(name.clone().try_into().map_err(gen_err)?),
            };
            if !sans.contains(&san) {
                sans.push(san);
            }
        }
        params.subject_alt_names = sans;
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.serial_number = Some(random_serial());
        let (nb, na) = validity(SERVER_CERT_DAYS);
        params.not_before = nb;
        params.not_after = na;
        let key = KeyPair::generate().map_err(gen_err)?;
        let cert = params.signed_by(&key, &self.issuer()?).map_err(gen_err)?;
        Ok((
            format!("{}{}", cert.pem(), self.cert_pem),
            key.serialize_pem(),
        ))
    }

    /// Issues a TPP certificate of `spec` under this CA (a QWAC when `spec.qwac`): (certificate
    /// PEM, key PEM); see [`super::generate::issue_tpp`].
    ///
    /// Errors: [`CertError::Generate`].
    pub fn issue_tpp(&self, spec: &TppCertSpec) -> Result<(String, String), CertError> {
        issue_tpp(spec, &self.issuer()?)
    }
}

fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::OrganizationName, "psd2-console Sandbox Bank");
    params
        .distinguished_name
        .push(DnType::CommonName, CA_COMMON_NAME);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.serial_number = Some(random_serial());
    let (nb, na) = validity(3650);
    params.not_before = nb;
    params.not_after = na;
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_in_the_data_dir_key_private_and_loaded_again() {
        let dir = tempfile::tempdir().unwrap();
        let first = SandboxCa::load_or_create(dir.path()).unwrap();
        let again = SandboxCa::load_or_create(dir.path()).unwrap();
        assert_eq!(first.cert_pem(), again.cert_pem());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(CA_KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(!format!("{first:?}").contains("PRIVATE"));
    }

    #[test]
    fn issues_server_certificates_and_qwacs_under_itself() {
        let ca = SandboxCa::generate().unwrap();
        let (chain, _key) = ca
            .issue_server_cert(&["127.0.0.1".into(), "localhost".into()])
            .unwrap();
        let leaf = Certificate::from_pem_or_der(chain.as_bytes(), "server").unwrap();
        assert_eq!(
            leaf.issuer.to_string(),
            ca.certificate().subject.to_string()
        );
        let (qwac, _) = ca
            .issue_tpp(&TppCertSpec {
                qwac: true,
                ..TppCertSpec::default()
            })
            .unwrap();
        let qwac = Certificate::from_pem_or_der(qwac.as_bytes(), "qwac").unwrap();
        assert_eq!(
            qwac.issuer.to_string(),
            ca.certificate().subject.to_string()
        );
        assert!(!qwac.roles().is_empty());
    }
}
