//! The sandbox over TLS (`sandbox serve --tls`, issue 21): the rustls server configuration
//! and the QWAC (TLS client certificate) rules.
//!
//! Interface document, Authentication 1: "Transport: TLS 1.2 or higher on every connection".
//! The server speaks TLS 1.3 and 1.2 only (RFC 8446, RFC 5246); a TLS 1.0/1.1 client is
//! refused at the handshake. Its certificate comes from `--tls-cert/--tls-key`, or is issued
//! at start by the sandbox CA ([`SandboxCa`]) for the listen address, `localhost` and the
//! `--public-url` host.
//!
//! Client certificates ([`ClientAuth`]): with `optional` the server asks for one, with
//! `required` a client without one is refused at the handshake. A presented certificate must
//! prove its key at the handshake (the TLS CertificateVerify signature); everything else is
//! judged per request by [`QwacPolicy::check`], after the request's signature has identified
//! the TPP, so that validity is judged at the sandbox's time of that TPP
//! ([`crate::sandbox::clock`]) and each refusal is a Berlin Group 401 `CERTIFICATE_INVALID`
//! saying what differed:
//!
//! 1. the chain ends at a trusted CA: the sandbox CA or one of `--client-ca` (RFC 5280 path
//!    validation by rustls-webpki, with extended key usage `clientAuth` where the certificate
//!    has an extended key usage);
//! 2. the certificate is valid at the sandbox's time (not at the machine's);
//! 3. its PSD2 qcStatement (ETSI TS 119 495) carries the role the operation needs
//!    ([`roles_needed`]);
//! 4. its subject organizationIdentifier (2.5.4.97, ETSI TS 119 495 5.2.1) is the QSealC's
//!    (`TPP-Signature-Certificate`): one TPP, one organisation.
//!
//! Accepting any chain at the handshake and judging it in the request is what a TLS
//! front-end does when it hands the client certificate to the application (nginx
//! `ssl_verify_client optional_no_ca`); a production ASPSP refuses an unknown issuer at the
//! handshake. The sandbox answers in words instead, so that a TPP sees why.

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};

use crate::cert::ca::SandboxCa;
use crate::cert::{CertError, Certificate, Psd2Role};

pub use crate::http_server::{HANDSHAKE_TIMEOUT, PeerCertificates};

/// Whether the server asks for a TLS client certificate (`sandbox serve --client-auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ClientAuth {
    /// No client certificate is asked for.
    #[default]
    None,
    /// Asked for; a client without one is served, one with one has it checked.
    Optional,
    /// Asked for and needed: a client without one is refused at the handshake.
    Required,
}

/// Errors of setting TLS up.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// A certificate or key file (or the sandbox CA).
    #[error(transparent)]
    Cert(#[from] CertError),
    /// A PEM file holds nothing usable.
    #[error("{what}: {reason}")]
    Pem {
        /// The file.
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// rustls refused the configuration (e.g. the key is not the certificate's).
    #[error("TLS configuration: {0}")]
    Rustls(String),
}

/// The server's certificate.
#[derive(Clone)]
enum ServerCertificate {
    /// Issued by the sandbox CA when the server starts.
    Generated,
    /// Given: the chain (leaf first) and its key.
    Given {
        chain: Vec<CertificateDer<'static>>,
        key: Arc<PrivateKeyDer<'static>>,
    },
}

/// How the sandbox serves TLS ([`crate::sandbox::SandboxConfig::tls`]): the sandbox CA, the
/// server certificate, the client-certificate mode and the trusted client CAs.
///
/// Built with [`ServerTls::new`] (a server certificate issued by the CA at start, no client
/// certificate asked for), then [`ServerTls::client_auth`], [`ServerTls::trust_client_cas`],
/// [`ServerTls::server_cert_files`].
#[derive(Clone)]
pub struct ServerTls {
    ca: Arc<SandboxCa>,
    certificate: ServerCertificate,
    mode: ClientAuth,
    /// The sandbox CA, then the `--client-ca` certificates.
    roots: Vec<CertificateDer<'static>>,
    policy: Arc<QwacPolicy>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("ca", &self.ca)
            .field(
                "certificate",
                &match self.certificate {
                    ServerCertificate::Generated => "issued by the sandbox CA",
                    ServerCertificate::Given { .. } => "given (key redacted)",
                },
            )
            .field("client_auth", &self.mode)
            .field("trusted_client_cas", &self.roots.len())
            .finish()
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// Every certificate of a PEM text.
fn pem_certificates(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsSetupError::Pem {
            what: what.into(),
            reason: format!("not a PEM certificate file: {e}"),
        })?;
    if certs.is_empty() {
        return Err(TlsSetupError::Pem {
            what: what.into(),
            reason: "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
        });
    }
    Ok(certs)
}

fn read(path: &Path) -> Result<Vec<u8>, TlsSetupError> {
    std::fs::read(path).map_err(|error| {
        TlsSetupError::Cert(CertError::Io {
            path: path.display().to_string(),
            error,
        })
    })
}

impl ServerTls {
    /// TLS with a server certificate issued by `ca` at start and no client certificate
    /// asked for; `ca` is trusted for client certificates.
    ///
    /// Errors: the CA certificate is not usable as a trust anchor.
    pub fn new(ca: SandboxCa) -> Result<ServerTls, TlsSetupError> {
        let roots = vec![CertificateDer::from(ca.certificate().der.clone())];
        let policy = Arc::new(QwacPolicy::new(&roots)?);
        Ok(ServerTls {
            ca: Arc::new(ca),
            certificate: ServerCertificate::Generated,
            mode: ClientAuth::None,
            roots,
            policy,
        })
    }

    /// The client-certificate mode.
    pub fn client_auth(mut self, mode: ClientAuth) -> ServerTls {
        self.mode = mode;
        self
    }

    /// Also trusts the CA certificates of the PEM bundle `pem` (`--client-ca FILE`; `what`
    /// names it in errors) for client certificates.
    ///
    /// Errors: no PEM certificate in it, or one that is not usable as a trust anchor.
    pub fn trust_client_cas(mut self, pem: &[u8], what: &str) -> Result<ServerTls, TlsSetupError> {
        self.roots.extend(pem_certificates(pem, what)?);
        self.policy = Arc::new(QwacPolicy::new(&self.roots)?);
        Ok(self)
    }

    /// Serves the certificate chain of the PEM file `cert` (leaf first) with the key of the
    /// PEM file `key` (`--tls-cert`, `--tls-key`) instead of one issued by the sandbox CA.
    ///
    /// Errors: a file cannot be read or holds no certificate / no private key; the key is
    /// not the certificate's.
    pub fn server_cert_files(
        mut self,
        cert: &Path,
        key: &Path,
    ) -> Result<ServerTls, TlsSetupError> {
        let chain = pem_certificates(&read(cert)?, &cert.display().to_string())?;
        let key_der =
            PrivateKeyDer::from_pem_slice(&read(key)?).map_err(|e| TlsSetupError::Pem {
                what: key.display().to_string(),
                reason: format!("not a PEM private key (PKCS#8, PKCS#1 or SEC1): {e}"),
            })?;
        self.certificate = ServerCertificate::Given {
            chain,
            key: Arc::new(key_der),
        };
        // Proves the pair now, not at the first connection.
        self.server_config(&[])?;
        Ok(self)
    }

    /// The sandbox CA (its PEM is what clients trust: `cert ca`).
    pub fn ca(&self) -> &SandboxCa {
        &self.ca
    }

    /// The client-certificate mode.
    pub fn mode(&self) -> ClientAuth {
        self.mode
    }

    /// The QWAC rules of requests, `None` when no client certificate is asked for.
    pub fn policy(&self) -> Option<Arc<QwacPolicy>> {
        (self.mode != ClientAuth::None).then(|| self.policy.clone())
    }

    /// The rustls configuration: TLS 1.3 and 1.2, ALPN `http/1.1`, the client-certificate
    /// mode, and the server certificate (issued now for `names` when it is the CA's: DNS
    /// names or IP addresses).
    ///
    /// Errors: issuing the certificate fails, or rustls refuses the key.
    pub fn server_config(&self, names: &[String]) -> Result<rustls::ServerConfig, TlsSetupError> {
        let provider = provider();
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
        let builder = match self.mode {
            ClientAuth::None => builder.with_no_client_auth(),
            mode => builder.with_client_cert_verifier(Arc::new(HandshakeVerifier {
                inner: self.policy.verifier.clone(),
                mandatory: mode == ClientAuth::Required,
            })),
        };
        let (chain, key) = match &self.certificate {
            ServerCertificate::Given { chain, key } => (chain.clone(), key.clone_key()),
            ServerCertificate::Generated => {
                let (chain_pem, key_pem) = self.ca.issue_server_cert(names)?;
                let chain = pem_certificates(chain_pem.as_bytes(), "issued server certificate")?;
                let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
                    .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
                (chain, key)
            }
        };
        let mut config = builder
            .with_single_cert(chain, key)
            .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }

    /// The acceptor of [`ServerTls::server_config`].
    ///
    /// Errors: those of [`ServerTls::server_config`].
    pub fn acceptor(&self, names: &[String]) -> Result<tokio_rustls::TlsAcceptor, TlsSetupError> {
        Ok(tokio_rustls::TlsAcceptor::from(Arc::new(
            self.server_config(names)?,
        )))
    }
}

/// The handshake's client-certificate check: asks for a certificate (needs one when
/// `mandatory`), hints the trusted CAs, checks the client's proof of its key, and leaves the
/// chain, time, roles and organisation to [`QwacPolicy::check`] in the request.
#[derive(Debug)]
struct HandshakeVerifier {
    inner: Arc<dyn ClientCertVerifier>,
    mandatory: bool,
}

impl ClientCertVerifier for HandshakeVerifier {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        self.mandatory
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The QWAC rules of a request (see the module documentation): the trusted CAs and the
/// checks.
#[derive(Debug)]
pub struct QwacPolicy {
    verifier: Arc<dyn ClientCertVerifier>,
}

/// The PSD2 roles of which a `/v1` request on `path` needs one in the QWAC: payment
/// initiation, signing baskets and PSU registration (`/v1/users`) `PSP_PI`; the sandbox's
/// own operations and the agreement and user reads `PSP_AI` or `PSP_PI`; every other
/// operation (accounts, card accounts, consents) `PSP_AI`. The same roles the handlers
/// require of the QSealC.
pub fn roles_needed(path: &str) -> &'static [Psd2Role] {
    const PI: &[Psd2Role] = &[Psd2Role::PspPi];
    const AI: &[Psd2Role] = &[Psd2Role::PspAi];
    const EITHER: &[Psd2Role] = &[Psd2Role::PspAi, Psd2Role::PspPi];
    let first = path
        .strip_prefix("/v1/")
        .and_then(|p| p.split('/').next())
        .unwrap_or("");
    match first {
        "payments" | "bulk-payments" | "periodic-payments" | "signing-baskets" | "users" => PI,
        "sandbox" | "agreements" | "user" => EITHER,
        _ => AI,
    }
}

/// The subject organizationIdentifier (2.5.4.97) of `c`, trimmed; `None` without one.
fn organisation_id(c: &Certificate) -> Option<&str> {
    c.subject
        .attributes
        .iter()
        .find(|a| a.oid == crate::sandbox::model::ORGANISATION_IDENTIFIER)
        .map(|a| a.value.trim())
        .filter(|v| !v.is_empty())
}

impl QwacPolicy {
    /// Trusts `roots` (the sandbox CA first).
    ///
    /// Errors: a root is not a usable trust anchor, or there is none.
    pub fn new(roots: &[CertificateDer<'static>]) -> Result<QwacPolicy, TlsSetupError> {
        let mut store = rustls::RootCertStore::empty();
        for root in roots {
            store.add(root.clone()).map_err(|e| TlsSetupError::Pem {
                what: "trusted client CA".into(),
                reason: format!("not usable as a trust anchor: {e}"),
            })?;
        }
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(store),
            provider(),
        )
        .build()
        .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
        Ok(QwacPolicy { verifier })
    }

    /// Checks the client certificate chain `peer` (leaf first) of a request on `path` signed
    /// with the QSealC `qseal`, at `now` (the sandbox's time of the TPP): the four rules of the
    /// module documentation, in that order.
    ///
    /// Errors: the text of the 401 `CERTIFICATE_INVALID`, saying what differed.
    pub fn check(
        &self,
        peer: &PeerCertificates,
        qseal: &Certificate,
        path: &str,
        now: SystemTime,
    ) -> Result<(), String> {
        let Some((leaf_der, intermediates)) = peer.0.split_first() else {
            return Ok(());
        };
        let leaf = Certificate::from_der(leaf_der.as_ref(), "the QWAC")
            .map_err(|e| format!("the QWAC (TLS client certificate) does not parse: {e}"))?;
        let at = crate::cert::unix_seconds(now);
        let when = crate::signing::imf_fixdate(now);
        if at < leaf.not_before {
            return Err(format!(
                "the QWAC (TLS client certificate, subject {}) is not yet valid at the \
                 sandbox's time {when}: it is valid from {}",
                leaf.subject,
                crate::signing::imf_fixdate(leaf.not_before_time())
            ));
        }
        if at > leaf.not_after {
            return Err(format!(
                "the QWAC (TLS client certificate, subject {}) is expired at the sandbox's \
                 time {when}: it was valid until {}",
                leaf.subject,
                crate::signing::imf_fixdate(leaf.not_after_time())
            ));
        }
        let unix = UnixTime::since_unix_epoch(
            now.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default(),
        );
        if let Err(e) = self
            .verifier
            .verify_client_cert(leaf_der, intermediates, unix)
        {
            return Err(chain_refusal(&leaf, &e, &when));
        }
        let needed = roles_needed(path);
        let has = leaf.roles();
        if !needed.iter().any(|r| has.contains(r)) {
            let names: Vec<&str> = needed.iter().map(|r| r.name()).collect();
            let present: Vec<&str> = has.iter().map(|r| r.name()).collect();
            return Err(format!(
                "the QWAC (TLS client certificate, subject {}) is missing the PSD2 role {} \
                 that this operation needs; its PSD2 statement has {}",
                leaf.subject,
                names.join(" or "),
                if present.is_empty() {
                    "no role (no PSD2 qcStatement)".to_string()
                } else {
                    present.join(", ")
                }
            ));
        }
        let (ours, theirs) = (organisation_id(&leaf), organisation_id(qseal));
        if ours != theirs {
            return Err(format!(
                "the organisation differs: QWAC organisationIdentifier {} vs QSealC \
                 (TPP-Signature-Certificate) organisationIdentifier {}; both certificates \
                 must belong to the same TPP",
                ours.unwrap_or("(none)"),
                theirs.unwrap_or("(none)")
            ));
        }
        Ok(())
    }
}

/// The words for a chain the verifier refused.
fn chain_refusal(leaf: &Certificate, e: &rustls::Error, when: &str) -> String {
    let subject = &leaf.subject;
    match e {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
            "the QWAC (TLS client certificate, subject {subject}) is not from a trusted issuer: \
             its issuer {} is neither the sandbox CA nor a CA of --client-ca",
            leaf.issuer
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. },
        ) => format!(
            "a CA certificate of the QWAC's chain (subject {subject}) is expired or not yet valid \
             at the sandbox's time {when}"
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. },
        ) => format!(
            "the QWAC (TLS client certificate, subject {subject}) is not for TLS client \
             authentication: its extended key usage lacks clientAuth"
        ),
        other => {
            format!("the QWAC (TLS client certificate, subject {subject}) is refused: {other}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_by_operation() {
        assert_eq!(
            roles_needed("/v1/payments/sepa-credit-transfers"),
            &[Psd2Role::PspPi]
        );
        assert_eq!(roles_needed("/v1/accounts"), &[Psd2Role::PspAi]);
        assert_eq!(roles_needed("/v1/consents/x/status"), &[Psd2Role::PspAi]);
        assert_eq!(roles_needed("/v1/sandbox/clock").len(), 2);
    }
}
