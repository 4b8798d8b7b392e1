//! The doctor's TLS checks for a recorded QWAC (issue 21): when the request went with a
//! client certificate (a profile's `client_certificate` and `client_key`, or `doctor
//! --qwac`), the checks a bank's TLS layer makes before any signature check:
//!
//! - `tls.qwac.validity`: the QWAC is valid at the request's date (the bank's clock: a moved
//!   sandbox clock is applied, as for `Date`);
//! - `tls.qwac.role`: its PSD2 roles (ETSI TS 119 495 qcStatement) include one the
//!   operation needs (PSP_AI for account information, PSP_PI for payments);
//! - `tls.qwac.organisation`: it names the same organizationIdentifier (2.5.4.97) as the
//!   QSealC sent in `TPP-Signature-Certificate` (one TPP, two certificates);
//! - `tls.qwac.key`: the key file is the certificate's key (else the handshake fails when
//!   the console proves it).
//!
//! Sources: Authentication 1 (TLS on every connection) and 2 (the eIDAS certificate); the
//! QWAC rules themselves are the Berlin Group's and ETSI TS 119 495's, as the sandbox's
//! `--client-auth` applies them (docs/sandbox.md).

use std::path::Path;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::{Checks, Context, Status};
use crate::cert::{Certificate, Psd2Role, Validity};

/// The rule of the TLS checks.
const RULE_TLS: &str = "Authentication 1-2 (TLS with a QWAC; ETSI TS 119 495)";

/// OID of organizationIdentifier.
const ORGANIZATION_IDENTIFIER: &str = "2.5.4.97";

/// The client certificate (QWAC) a recorded request went with, and whether its key file
/// is its key.
#[derive(Debug, Clone)]
pub struct Qwac {
    /// The certificate (the first of the file).
    pub certificate: Certificate,
    /// `Some(Ok(()))`: the key file holds the certificate's key; `Some(Err(why))`: it does
    /// not or cannot be read; `None`: no key file given.
    pub key: Option<Result<(), String>>,
    /// Where it came from, e.g. `profile "Bank" (qwac.pem)`.
    pub source: String,
}

impl Qwac {
    /// Reads the QWAC `cert` (PEM or DER) and, when given, checks that `key` (PEM) is its
    /// key; `source` names where they come from in messages.
    ///
    /// Errors: the certificate file cannot be read or is not a certificate (one sentence
    /// naming the file).
    pub fn load(cert: &Path, key: Option<&Path>, source: &str) -> Result<Qwac, String> {
        let certificate = Certificate::load(cert).map_err(|e| e.to_string())?;
        let key = key.map(|k| key_matches(cert, k));
        Ok(Qwac {
            certificate,
            key,
            source: source.to_string(),
        })
    }

    /// The QWAC of `profile` (its `client_certificate` and `client_key`), `None` when it has
    /// none.
    ///
    /// Errors: as [`Qwac::load`].
    pub fn of_profile(profile: &crate::profile::Profile) -> Option<Result<Qwac, String>> {
        let cert = profile.client_certificate.as_ref()?;
        let cert = profile.resolve(cert);
        let key = profile.client_key.as_ref().map(|k| profile.resolve(k));
        Some(Qwac::load(
            &cert,
            key.as_deref(),
            &format!("profile {:?} ({})", profile.name, cert.display()),
        ))
    }
}

/// Whether the PEM key at `key` belongs to the certificate at `cert` (any key type rustls
/// signs with: RSA, ECDSA, Ed25519).
fn key_matches(cert: &Path, key: &Path) -> Result<(), String> {
    let cert_bytes =
        std::fs::read(cert).map_err(|e| format!("cannot read {}: {e}", cert.display()))?;
    let key_bytes =
        std::fs::read(key).map_err(|e| format!("cannot read {}: {e}", key.display()))?;
    let mut chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_bytes)
        .filter_map(Result::ok)
        .collect();
    if chain.is_empty() {
        chain.push(CertificateDer::from(cert_bytes));
    }
    let der = PrivateKeyDer::from_pem_slice(&key_bytes)
        .map_err(|e| format!("{} is not a PEM private key: {e}", key.display()))?;
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    rustls::sign::CertifiedKey::from_der(chain, der, &provider)
        .map(|_| ())
        .map_err(|e| match e {
            rustls::Error::InconsistentKeys(_) => format!(
                "the key {} is not the key of the certificate {} (their public keys differ)",
                key.display(),
                cert.display()
            ),
            other => format!("{}: {other}", key.display()),
        })
}

/// The organizationIdentifier of a distinguished name.
fn organisation_id(c: &Certificate) -> Option<String> {
    c.subject
        .attributes
        .iter()
        .find(|a| a.oid == ORGANIZATION_IDENTIFIER)
        .map(|a| a.value.clone())
}

fn role_names(r: &[Psd2Role]) -> String {
    if r.is_empty() {
        "none".to_string()
    } else {
        r.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
    }
}

/// The TLS checks of `qwac` for the request of `cx`, in the order a bank's TLS layer makes
/// them (see the module docs).
pub(super) fn checks(cx: &Context<'_>, qwac: &Qwac, checks: &mut Checks) {
    let c = &qwac.certificate;
    let valid = format!(
        "{} .. {}",
        crate::client::tls_session::date(c.not_before),
        crate::client::tls_session::date(c.not_after)
    );
    let at = crate::cert::unix_seconds(cx.bank_at);
    let (status, message) = match c.validity_at(at) {
        Validity::NotYetValid { .. } => (
            Status::Fail,
            format!(
                "the QWAC of {} ({}) is not valid yet at {}: valid {valid}",
                qwac.source,
                c.subject.to_rfc2253(),
                cx.bank_time()
            ),
        ),
        Validity::Expired { .. } => (
            Status::Fail,
            format!(
                "the QWAC of {} ({}) had expired at {}: valid {valid}",
                qwac.source,
                c.subject.to_rfc2253(),
                cx.bank_time()
            ),
        ),
        _ => (
            Status::Pass,
            format!(
                "the QWAC {} is valid at {} (valid {valid})",
                c.subject.to_rfc2253(),
                cx.bank_time()
            ),
        ),
    };
    checks.push("tls.qwac.validity", status, RULE_TLS, message);

    match &cx.operation {
        Some((op, _)) => {
            let needed = super::content::roles_needed(op.group, op.id);
            let have = c.roles();
            let (status, message) = if needed.is_empty() {
                (Status::Pass, format!("{} needs no PSD2 role", op.id))
            } else if needed.iter().any(|r| have.contains(r)) {
                (
                    Status::Pass,
                    format!(
                        "{} needs {}; the QWAC has {}",
                        op.id,
                        role_names(needed),
                        role_names(&have)
                    ),
                )
            } else {
                (
                    Status::Fail,
                    format!(
                        "{} needs the PSD2 role {} in the QWAC; it has {}",
                        op.id,
                        role_names(needed).replace(", ", " or "),
                        role_names(&have)
                    ),
                )
            };
            checks.push("tls.qwac.role", status, RULE_TLS, message);
        }
        None => checks.push(
            "tls.qwac.role",
            Status::Warn,
            RULE_TLS,
            "not checked: unknown operation",
        ),
    }

    let qseal = cx
        .request
        .header(crate::xs2a::headers::TPP_SIGNATURE_CERTIFICATE)
        .map(|v| Certificate::from_header_value(v.trim()));
    let (status, message) = match qseal {
        None => (
            Status::Warn,
            "not checked: the request has no TPP-Signature-Certificate (QSealC)".to_string(),
        ),
        Some(Err(e)) => (
            Status::Warn,
            format!("not checked: the QSealC cannot be read ({e})"),
        ),
        Some(Ok(seal)) => match (organisation_id(c), organisation_id(&seal)) {
            (Some(a), Some(b)) if a == b => (
                Status::Pass,
                format!("the QWAC and the QSealC name the same organizationIdentifier {a}"),
            ),
            (Some(a), Some(b)) => (
                Status::Fail,
                format!(
                    "the QWAC names organizationIdentifier {a}, the QSealC {b}: both must be \
                     the same TPP's"
                ),
            ),
            (None, _) => (
                Status::Fail,
                format!(
                    "the QWAC ({}) has no organizationIdentifier in its subject",
                    c.subject.to_rfc2253()
                ),
            ),
            (Some(a), None) => (
                Status::Fail,
                format!("the QWAC names organizationIdentifier {a}; the QSealC names none"),
            ),
        },
    };
    checks.push("tls.qwac.organisation", status, RULE_TLS, message);

    let (status, message) = match &qwac.key {
        None => (
            Status::Warn,
            "not checked: no key file for the QWAC".to_string(),
        ),
        Some(Ok(())) => (Status::Pass, "the key file is the QWAC's key".to_string()),
        Some(Err(why)) => (Status::Fail, why.clone()),
    };
    checks.push("tls.qwac.key", status, RULE_TLS, message);
}
