//! Test certificates: a self-signed sandbox CA and a TPP QSealC (or QWAC) it issues, with
//! chosen PSD2 roles in the qcStatements extension (rcgen, RSA-2048 keys from aws-lc-rs).
//! The sandbox's own persistent CA, which issues QWACs the TLS sandbox trusts, is
//! [`super::ca::SandboxCa`].
//!
//! These are for the embedded sandbox and for trying remote sandboxes that accept any
//! well-formed certificate; they are not eIDAS-qualified.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CustomExtension, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PKCS_RSA_SHA256, RsaKeySize, SerialNumber,
};

use super::qc::{self, Psd2Role, Psd2Statement};
use super::{CertError, Certificate, Credentials, PrivateKey};

/// What to put in a generated TPP certificate.
#[derive(Debug, Clone)]
pub struct TppCertSpec {
    /// Subject organisation name, e.g. `Example TPP AS`.
    pub organisation: String,
    /// Subject organizationIdentifier (2.5.4.97), e.g. `PSDNO-FSA-123456`.
    pub organisation_id: String,
    /// Country code of subject and NCA, e.g. `NO`.
    pub country: String,
    /// PSD2 roles of the PSD2 statement.
    pub roles: Vec<Psd2Role>,
    /// Validity in days from now.
    pub days: u32,
    /// A QWAC (a TLS client certificate, ETSI TS 119 495 5.1): key usage
    /// `digitalSignature` and extended key usage `clientAuth` (RFC 5280 4.2.1.12), as a TLS
    /// server checks it; else a QSealC (`digitalSignature`, `contentCommitment`). Both
    /// carry the PSD2 qcStatement with the roles.
    pub qwac: bool,
}

impl Default for TppCertSpec {
    fn default() -> Self {
        TppCertSpec {
            organisation: "psd2-console Test TPP".into(),
            organisation_id: "PSDNO-FSA-TEST01".into(),
            country: "NO".into(),
            roles: vec![Psd2Role::PspAi, Psd2Role::PspPi],
            days: 730,
            qwac: false,
        }
    }
}

/// PEM texts of a generated set. The CA key is kept so that more TPP certificates can be
/// issued later.
pub struct GeneratedSet {
    /// The test CA's certificate.
    pub ca_cert_pem: String,
    /// The test CA's private key (PKCS#8).
    pub ca_key_pem: String,
    /// The TPP's certificate, issued by the CA.
    pub tpp_cert_pem: String,
    /// The TPP's private key (PKCS#8).
    pub tpp_key_pem: String,
}

impl std::fmt::Debug for GeneratedSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GeneratedSet(keys redacted)")
    }
}

pub(super) fn gen_err(e: impl std::fmt::Display) -> CertError {
    CertError::Generate(e.to_string())
}

pub(super) fn random_serial() -> SerialNumber {
    let mut bytes = *uuid::Uuid::new_v4().as_bytes();
    bytes[0] &= 0x7f; // positive
    if bytes[0] == 0 {
        bytes[0] = 1;
    }
    SerialNumber::from_slice(&bytes[..10])
}

pub(super) fn validity(days: u32) -> (time::OffsetDateTime, time::OffsetDateTime) {
    let now = time::OffsetDateTime::now_utc();
    (
        now - time::Duration::minutes(5),
        now + time::Duration::days(i64::from(days)),
    )
}

fn ca_params(country: &str) -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(DnType::CountryName, country);
    params
        .distinguished_name
        .push(DnType::OrganizationName, "psd2-console Sandbox Bank");
    params
        .distinguished_name
        .push(DnType::CommonName, "psd2-console Sandbox CA");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.serial_number = Some(random_serial());
    let (nb, na) = validity(3650);
    params.not_before = nb;
    params.not_after = na;
    params
}

/// Generates a sandbox CA and a TPP QSealC issued by it.
pub fn generate_set(spec: &TppCertSpec) -> Result<GeneratedSet, CertError> {
    let ca_key = KeyPair::generate_rsa_for(&PKCS_RSA_SHA256, RsaKeySize::_2048).map_err(gen_err)?;
    let ca_params = ca_params(&spec.country);
    let ca_cert = ca_params.self_signed(&ca_key).map_err(gen_err)?;
    let issuer = Issuer::from_params(&ca_params, &ca_key);
    let tpp_key =
        KeyPair::generate_rsa_for(&PKCS_RSA_SHA256, RsaKeySize::_2048).map_err(gen_err)?;
    let tpp_cert = tpp_params(spec)
        .signed_by(&tpp_key, &issuer)
        .map_err(gen_err)?;
    Ok(GeneratedSet {
        ca_cert_pem: ca_cert.pem(),
        ca_key_pem: ca_key.serialize_pem(),
        tpp_cert_pem: tpp_cert.pem(),
        tpp_key_pem: tpp_key.serialize_pem(),
    })
}

/// Issues a TPP certificate of `spec` (a fresh RSA-2048 key) signed by `issuer`: (certificate
/// PEM, PKCS#8 key PEM).
///
/// Errors: [`CertError::Generate`] when rcgen fails.
pub fn issue_tpp(
    spec: &TppCertSpec,
    issuer: &Issuer<'_, impl rcgen::SigningKey>,
) -> Result<(String, String), CertError> {
    let key = KeyPair::generate_rsa_for(&PKCS_RSA_SHA256, RsaKeySize::_2048).map_err(gen_err)?;
    let cert = tpp_params(spec).signed_by(&key, issuer).map_err(gen_err)?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn tpp_params(spec: &TppCertSpec) -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CountryName, spec.country.as_str());
    params
        .distinguished_name
        .push(DnType::OrganizationName, spec.organisation.as_str());
    params.distinguished_name.push(
        DnType::CustomDnType(vec![2, 5, 4, 97]),
        spec.organisation_id.as_str(),
    );
    params
        .distinguished_name
        .push(DnType::CommonName, spec.organisation.as_str());
    params.is_ca = IsCa::ExplicitNoCa;
    if spec.qwac {
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    } else {
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::ContentCommitment,
        ];
    }
    params.serial_number = Some(random_serial());
    let (nb, na) = validity(spec.days);
    params.not_before = nb;
    params.not_after = na;
    let statement = Psd2Statement {
        roles: spec.roles.clone(),
        nca_name: "Finanstilsynet".into(),
        nca_id: format!("{}-FSA", spec.country),
    };
    params
        .custom_extensions
        .push(CustomExtension::from_oid_content(
            &[1, 3, 6, 1, 5, 5, 7, 1, 3],
            qc::encode_qc_statements(&statement),
        ));
    params
}

/// Files written by [`write_set`].
#[derive(Debug, Clone)]
pub struct WrittenSet {
    /// The CA's certificate file.
    pub ca_cert: PathBuf,
    /// The CA's key file.
    pub ca_key: PathBuf,
    /// The TPP's certificate file.
    pub tpp_cert: PathBuf,
    /// The TPP's key file.
    pub tpp_key: PathBuf,
}

impl WrittenSet {
    /// The four file paths of set `stem` in `dir` (nothing is read or written).
    pub fn paths(dir: &Path, stem: &str) -> WrittenSet {
        WrittenSet {
            ca_cert: dir.join(format!("{stem}-ca.pem")),
            ca_key: dir.join(format!("{stem}-ca.key")),
            tpp_cert: dir.join(format!("{stem}.pem")),
            tpp_key: dir.join(format!("{stem}.key")),
        }
    }

    /// Those of the four files that exist already (`cert new` refuses to overwrite them
    /// without `--force`).
    pub fn existing(&self) -> Vec<&Path> {
        [&self.ca_cert, &self.ca_key, &self.tpp_cert, &self.tpp_key]
            .into_iter()
            .map(PathBuf::as_path)
            .filter(|p| p.exists())
            .collect()
    }
}

/// Generates a set and writes it into `dir` as `<stem>-ca.pem`, `<stem>-ca.key`,
/// `<stem>.pem`, `<stem>.key`; keys are created 0600, every file atomically.
pub fn write_set(dir: &Path, stem: &str, spec: &TppCertSpec) -> Result<WrittenSet, CertError> {
    let set = generate_set(spec)?;
    let paths = WrittenSet::paths(dir, stem);
    let io = |path: &Path, e: std::io::Error| CertError::Write {
        path: path.display().to_string(),
        error: e,
    };
    for (p, text, private) in [
        (&paths.ca_cert, &set.ca_cert_pem, false),
        (&paths.ca_key, &set.ca_key_pem, true),
        (&paths.tpp_cert, &set.tpp_cert_pem, false),
        (&paths.tpp_key, &set.tpp_key_pem, true),
    ] {
        crate::fsutil::write_atomic(p, text.as_bytes(), private).map_err(|e| io(p, e))?;
    }
    // Prove the pair loads and matches before handing it out.
    Credentials::load(&paths.tpp_cert, &paths.tpp_key)?;
    Ok(paths)
}

/// Parses the generated TPP certificate and key of a set (for tests and in-memory use).
pub fn credentials_of(set: &GeneratedSet) -> Result<Credentials, CertError> {
    Credentials::new(
        Certificate::from_pem_or_der(set.tpp_cert_pem.as_bytes(), "generated certificate")?,
        PrivateKey::from_pem_or_der(set.tpp_key_pem.as_bytes(), "generated key")?,
    )
}
