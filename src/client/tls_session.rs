//! The TLS session of an HTTPS exchange, as the console shows it (issue 21): the TLS version,
//! the cipher suite, the server's certificate chain (subject, issuer, validity, SAN per
//! certificate), whether the server asked for a client certificate (and which CAs it named)
//! and which certificate was sent (subject and serial; never the key).
//!
//! How it is learnt. reqwest hides the rustls connection, so the profile's client
//! ([`super::tls::http_client_recording`]) is built from a rustls `ClientConfig` of our own
//! whose server certificate verifier ([`RecordingVerifier`]) and client certificate resolver
//! ([`RecordingResolver`]) wrap the real ones and note, per handshake, the chain the server
//! sent and the `CertificateRequest` it made ([`TlsRecorder`]). reqwest's `TlsInfo` on each
//! response names the connection's server certificate (leaf, DER) and TLS version, which
//! picks that handshake's record. The negotiated cipher suite is the one field neither
//! reqwest nor a verifier can see: it comes from a separate handshake probe with the same
//! `ClientConfig` to the same host and port ([`TlsRecorder::session_for`]), once per server
//! certificate, and the screen says so ("cipher … (from a second handshake)").
//!
//! Limits: a `CertificateRequest` is noted when it arrives and joined to the server
//! certificate verified next (both TLS 1.2 and 1.3 send it first); two handshakes of one
//! client at the same instant could swap those notes (the console sends one request at a
//! time per profile, and both would be to the same server). Session resumption is off in
//! this configuration, so every new connection is a full handshake that is seen.

use std::io::{Read, Write};
use std::net::ToSocketAddrs;
use std::sync::{Arc, Mutex};

use rustls::client::ResolvesClientCert;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use serde::{Deserialize, Serialize};

/// Time allowed to the cipher probe to connect, and to each of its reads and writes (as the
/// client's connect timeout).
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How many handshakes a [`TlsRecorder`] remembers (per server certificate and per host).
const REMEMBERED: usize = 16;

/// One certificate of a chain, as shown.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CertSummary {
    /// Subject distinguished name (RFC 2253).
    pub subject: String,
    /// Issuer distinguished name (RFC 2253).
    pub issuer: String,
    /// Serial number, hex.
    pub serial: String,
    /// `notBefore`, seconds since the Unix epoch.
    pub not_before: i64,
    /// `notAfter`, seconds since the Unix epoch.
    pub not_after: i64,
    /// subjectAltName entries: `DNS:host`, `IP:1.2.3.4`, `URI:...`, `email:...`.
    pub san: Vec<String>,
}

impl CertSummary {
    /// Reads a DER certificate; `None` when it is not one X.509 certificate.
    pub fn of_der(der: &[u8]) -> Option<CertSummary> {
        let (_, x) = x509_parser::parse_x509_certificate(der).ok()?;
        let tbs = &x.tbs_certificate;
        let san = match x.subject_alternative_name() {
            Ok(Some(ext)) => ext
                .value
                .general_names
                .iter()
                .map(|g| {
                    use x509_parser::extensions::GeneralName as G;
                    match g {
                        G::DNSName(d) => format!("DNS:{d}"),
                        G::IPAddress(b) => match b.len() {
                            4 => format!("IP:{}", std::net::Ipv4Addr::new(b[0], b[1], b[2], b[3])),
                            16 => {
                                let mut a = [0u8; 16];
                                a.copy_from_slice(b);
                                format!("IP:{}", std::net::Ipv6Addr::from(a))
                            }
                            _ => format!("IP:{}", hex::encode(b)),
                        },
                        G::URI(u) => format!("URI:{u}"),
                        G::RFC822Name(m) => format!("email:{m}"),
                        other => format!("{other:?}"),
                    }
                })
                .collect(),
            _ => Vec::new(),
        };
        Some(CertSummary {
            subject: crate::cert::dn::DistinguishedName::from_x509(&tbs.subject).to_rfc2253(),
            issuer: crate::cert::dn::DistinguishedName::from_x509(&tbs.issuer).to_rfc2253(),
            serial: hex::encode(strip_zeros(tbs.raw_serial())),
            not_before: tbs.validity.not_before.timestamp(),
            not_after: tbs.validity.not_after.timestamp(),
            san,
        })
    }

    /// `2026-11-26 .. 2027-11-26` (UTC dates of notBefore and notAfter).
    pub fn validity_text(&self) -> String {
        format!("{} .. {}", date(self.not_before), date(self.not_after))
    }
}

fn strip_zeros(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|x| **x == 0).count();
    if n == b.len() {
        &b[b.len().saturating_sub(1)..]
    } else {
        &b[n..]
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC` of seconds since the Unix epoch.
pub(crate) fn date(secs: i64) -> String {
    match time::OffsetDateTime::from_unix_timestamp(secs) {
        Ok(t) => format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        ),
        Err(_) => format!("{secs} (seconds since 1970)"),
    }
}

/// The certificate the console sent as its client certificate (QWAC): never the key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SentCertificate {
    /// Subject distinguished name (RFC 2253).
    pub subject: String,
    /// Serial number, hex.
    pub serial: String,
}

/// Client authentication in one handshake.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClientAuth {
    /// Whether the server sent a `CertificateRequest`.
    pub asked: bool,
    /// The CAs the request named (RFC 2253 distinguished names; empty: any CA).
    pub acceptable_cas: Vec<String>,
    /// The certificate sent, when one was (`None`: none configured, or the server did not
    /// ask).
    pub sent: Option<SentCertificate>,
}

/// The TLS session of one HTTPS exchange.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TlsSession {
    /// `TLS 1.3` or `TLS 1.2`.
    pub version: String,
    /// The negotiated cipher suite (e.g. `TLS13_AES_256_GCM_SHA384`), learnt by a second
    /// handshake with the same settings (see the module docs); `None` when that probe failed
    /// (`cipher_note` says why).
    pub cipher_suite: Option<String>,
    /// Where the cipher suite comes from, or why it is unknown.
    pub cipher_note: String,
    /// The server's chain as sent, leaf first.
    pub server_chain: Vec<CertSummary>,
    /// Client authentication (QWAC) in the handshake.
    pub client_auth: ClientAuth,
}

impl TlsSession {
    /// The section's lines as shown in the response pane and by `send --tls` (no trailing
    /// newline; values are certificate text, control characters replaced by `?`).
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("TLS: {}", self.version)];
        match &self.cipher_suite {
            Some(c) => out.push(format!("  cipher suite: {c} ({})", self.cipher_note)),
            None => out.push(format!("  cipher suite: unknown ({})", self.cipher_note)),
        }
        for (i, c) in self.server_chain.iter().enumerate() {
            let role = if i == 0 {
                "server certificate"
            } else {
                "chain"
            };
            out.push(format!("  {role} [{i}]: {}", c.subject));
            out.push(format!("    issuer: {}", c.issuer));
            out.push(format!("    valid: {}", c.validity_text()));
            if !c.san.is_empty() {
                out.push(format!("    SAN: {}", c.san.join(", ")));
            }
        }
        let ca = &self.client_auth;
        if !ca.asked {
            out.push("  client certificate: not asked for by the server".into());
        } else {
            let named = if ca.acceptable_cas.is_empty() {
                "any CA".to_string()
            } else {
                ca.acceptable_cas.join("; ")
            };
            out.push(format!(
                "  client certificate: asked for (CAs named: {named})"
            ));
            match &ca.sent {
                Some(s) => out.push(format!("    sent: {} (serial {})", s.subject, s.serial)),
                None => out.push("    sent: none (no client_certificate in the profile)".into()),
            }
        }
        out.into_iter().map(|l| sanitize(&l)).collect()
    }
}

/// Control characters (from a certificate) replaced by `?`.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// What one handshake showed.
#[derive(Debug, Clone, Default)]
struct Handshake {
    chain: Vec<CertSummary>,
    client_auth: ClientAuth,
}

#[derive(Debug, Default)]
struct RecorderState {
    /// The `CertificateRequest` of the handshake under way (it comes before the server's
    /// certificate is verified, in TLS 1.2 and 1.3).
    pending: Option<ClientAuth>,
    /// Handshakes by server leaf certificate (DER), newest last.
    by_leaf: Vec<(Vec<u8>, Handshake)>,
    /// Handshakes by host name, newest last (also those whose certificate was refused).
    by_host: Vec<(String, Handshake)>,
    /// Cipher suites learnt by probes, by server leaf certificate.
    ciphers: Vec<(Vec<u8>, Result<String, String>)>,
}

fn remember<K: PartialEq, V>(list: &mut Vec<(K, V)>, key: K, value: V) {
    list.retain(|(k, _)| *k != key);
    list.push((key, value));
    if list.len() > REMEMBERED {
        list.remove(0);
    }
}

/// Notes what the handshakes of one HTTP client showed (see the module docs). Cheap to
/// clone; all clones share the notes.
#[derive(Clone, Default)]
pub struct TlsRecorder {
    state: Arc<Mutex<RecorderState>>,
    /// The client's rustls configuration, for the cipher probe.
    config: Option<Arc<rustls::ClientConfig>>,
    /// The client's server certificate verifier, built at its first use.
    verifier: Option<Arc<PlatformVerifier>>,
}

impl std::fmt::Debug for TlsRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsRecorder")
    }
}

impl TlsRecorder {
    pub(crate) fn set_config(&mut self, config: Arc<rustls::ClientConfig>) {
        self.config = Some(config);
    }

    pub(crate) fn set_verifier(&mut self, verifier: Arc<PlatformVerifier>) {
        self.verifier = Some(verifier);
    }

    /// Builds the client's server certificate verifier now if it was not yet
    /// ([`PlatformVerifier`]: the platform's roots read and parsed), so the first
    /// TLS handshake does not wait for it. Blocking (file reads, a few ms): call it off the
    /// async worker threads (`spawn_blocking`). A failure is kept for the first handshake.
    pub fn warm_up_verifier(&self) {
        if let Some(v) = &self.verifier {
            v.warm_up();
        }
    }

    /// Whether the client's verifier has read the platform's roots (false before the first
    /// handshake or [`TlsRecorder::warm_up_verifier`]).
    pub fn verifier_built(&self) -> bool {
        self.verifier.as_ref().is_some_and(|v| v.is_built())
    }

    fn with<T>(&self, f: impl FnOnce(&mut RecorderState) -> T) -> Option<T> {
        self.state.lock().ok().map(|mut s| f(&mut s))
    }

    /// The client authentication of the last handshake with `host` (a name or IP address
    /// without port), when one was seen: for error messages.
    pub(crate) fn client_auth_with(&self, host: &str) -> Option<ClientAuth> {
        self.with(|s| {
            s.by_host
                .iter()
                .rev()
                .find(|(h, _)| h == host)
                .map(|(_, hs)| hs.client_auth.clone())
        })
        .flatten()
    }

    /// The TLS session of a response whose connection presented `leaf` (DER) with `version`
    /// (reqwest's `TlsInfo`), sent to `url`. The cipher suite comes from a probe handshake
    /// to the same host and port with the same configuration, once per server certificate
    /// (remembered afterwards); the probe runs off the async workers.
    pub async fn session_for(
        &self,
        url: &str,
        leaf: Option<&[u8]>,
        version: Option<reqwest::tls::Version>,
    ) -> TlsSession {
        let leaf = leaf.map(<[u8]>::to_vec).unwrap_or_default();
        let hs = self
            .with(|s| {
                s.by_leaf
                    .iter()
                    .rev()
                    .find(|(l, _)| *l == leaf)
                    .map(|(_, h)| h.clone())
            })
            .flatten()
            .unwrap_or_else(|| Handshake {
                chain: CertSummary::of_der(&leaf).into_iter().collect(),
                client_auth: ClientAuth::default(),
            });
        let known = self
            .with(|s| {
                s.ciphers
                    .iter()
                    .find(|(l, _)| *l == leaf)
                    .map(|(_, c)| c.clone())
            })
            .flatten();
        let cipher = match known {
            Some(c) => c,
            None => {
                let c = match self.config.clone() {
                    Some(config) => {
                        let url = url.to_string();
                        tokio::task::spawn_blocking(move || probe(&config, &url))
                            .await
                            .unwrap_or_else(|e| Err(format!("the probe task failed: {e}")))
                    }
                    None => Err("no TLS configuration to probe with".into()),
                };
                if c.as_ref().is_ok_and(|p| p.leaf == leaf) || c.is_err() {
                    let kept = c.as_ref().map(|p| p.cipher.clone()).map_err(String::clone);
                    self.with(|s| remember(&mut s.ciphers, leaf.clone(), kept));
                }
                match c {
                    Ok(p) if p.leaf == leaf => Ok(p.cipher),
                    Ok(_) => Err("the second handshake met another server certificate".into()),
                    Err(e) => Err(e),
                }
            }
        };
        let version = match version {
            Some(v) if v == reqwest::tls::Version::TLS_1_3 => "TLS 1.3".to_string(),
            Some(v) if v == reqwest::tls::Version::TLS_1_2 => "TLS 1.2".to_string(),
            Some(v) => format!("{v:?}"),
            None => "TLS (version not reported)".into(),
        };
        let (cipher_suite, cipher_note) = match cipher {
            Ok(c) => (
                Some(c),
                "from a second handshake with the same settings".to_string(),
            ),
            Err(e) => (
                None,
                format!("the second handshake to learn it failed: {e}"),
            ),
        };
        TlsSession {
            version,
            cipher_suite,
            cipher_note,
            server_chain: hs.chain,
            client_auth: hs.client_auth,
        }
    }
}

/// What a probe handshake learnt.
struct Probed {
    leaf: Vec<u8>,
    cipher: String,
}

/// A TLS handshake with `config` to the host and port of `url` (blocking, 10 s timeouts),
/// closed right after: the negotiated cipher suite and the server's leaf certificate.
fn probe(config: &Arc<rustls::ClientConfig>, url: &str) -> Result<Probed, String> {
    let u = url::Url::parse(url).map_err(|e| format!("URL {url}: {e}"))?;
    let host = u.host_str().ok_or("no host in the URL")?.to_string();
    let port = u.port_or_known_default().unwrap_or(443);
    let bare = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let name = ServerName::try_from(bare.clone()).map_err(|e| format!("{host}: {e}"))?;
    let addr = (bare.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("no address")?;
    let timeout = PROBE_TIMEOUT;
    let mut sock =
        std::net::TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    sock.set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let mut conn =
        rustls::ClientConnection::new(config.clone(), name).map_err(|e| e.to_string())?;
    while conn.is_handshaking() {
        conn.complete_io(&mut sock).map_err(|e| e.to_string())?;
    }
    let cipher = conn
        .negotiated_cipher_suite()
        .map(|s| format!("{:?}", s.suite()))
        .ok_or("no cipher suite negotiated")?;
    let leaf = conn
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| c.to_vec())
        .unwrap_or_default();
    conn.send_close_notify();
    let _ = conn.write_tls(&mut sock);
    let _ = sock.flush();
    // Drain what the server still sends (tickets, its close_notify) without waiting long.
    let mut buf = [0u8; 512];
    let _ = sock.set_read_timeout(Some(std::time::Duration::from_millis(50)));
    let _ = sock.read(&mut buf);
    Ok(Probed { leaf, cipher })
}

/// A server certificate the verifier refused, with the chain it came with: rustls passes it
/// on as `CertificateError::Other`, so the message can name the issuer, the dates or the
/// names ([`super::tls::describe_send_error`]).
#[derive(Debug, Clone)]
pub(crate) struct ServerCertRefused {
    /// What the real verifier said.
    pub(crate) cause: CertificateError,
    /// The chain as sent, leaf first.
    pub(crate) chain: Vec<CertSummary>,
    /// The host name the console connected to.
    pub(crate) host: String,
}

impl std::fmt::Display for ServerCertRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.cause)
    }
}

impl std::error::Error for ServerCertRefused {}

/// The server certificate verifier of a profile's client: the real one (the platform's
/// roots plus `ca_bundle`), noting each chain and wrapping a refusal with its chain.
#[derive(Debug)]
pub(crate) struct RecordingVerifier {
    pub(crate) inner: Arc<dyn ServerCertVerifier>,
    pub(crate) recorder: TlsRecorder,
}

impl ServerCertVerifier for RecordingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let chain: Vec<CertSummary> = std::iter::once(end_entity)
            .chain(intermediates)
            .filter_map(|c| CertSummary::of_der(c))
            .collect();
        let host = server_name.to_str().into_owned();
        let leaf = end_entity.to_vec();
        let chain2 = chain.clone();
        self.recorder.with(|s| {
            let hs = Handshake {
                chain: chain2,
                client_auth: s.pending.take().unwrap_or_default(),
            };
            remember(&mut s.by_leaf, leaf, hs.clone());
            remember(&mut s.by_host, host.clone(), hs);
        });
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .map_err(|e| match e {
                rustls::Error::InvalidCertificate(cause) => {
                    rustls::Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(
                        Arc::new(ServerCertRefused { cause, chain, host }),
                    )))
                }
                other => other,
            })
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

    fn requires_raw_public_keys(&self) -> bool {
        self.inner.requires_raw_public_keys()
    }

    fn root_hint_subjects(&self) -> Option<&[rustls::DistinguishedName]> {
        self.inner.root_hint_subjects()
    }
}

/// The server certificate verifier of a profile's client: the platform's
/// ([`rustls_platform_verifier::Verifier`]: on Linux the system roots of
/// `/etc/ssl/certs`, read and parsed, with the extra roots), built at its first use, not
/// when the client is built. Reading the system roots (about 150 certificates, a file per
/// root besides the bundle) was half the instructions of the console's start to its first
/// frame, and a plain-HTTP profile (the embedded sandbox) never needs them (BENCHMARKS.md,
/// issue 23). [`TlsRecorder::warm_up_verifier`] builds it ahead of the first handshake.
///
/// The extra roots (`ca_bundle`, the sandbox CA) are parsed in [`PlatformVerifier::new`],
/// so a bad one still refuses the profile at its start; a system without any root (and no
/// extra one) fails the first handshake instead, with the platform verifier's error.
#[derive(Debug)]
pub(crate) struct PlatformVerifier {
    extra_roots: Vec<CertificateDer<'static>>,
    provider: std::sync::Arc<rustls::crypto::CryptoProvider>,
    built: std::sync::OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl PlatformVerifier {
    /// A verifier trusting the platform's roots and `extra_roots` (DER certificates).
    ///
    /// Errors: an extra root that is not a usable trust anchor (rustls's error).
    pub(crate) fn new(
        extra_roots: Vec<CertificateDer<'static>>,
        provider: std::sync::Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<Self, rustls::Error> {
        let mut check = rustls::RootCertStore::empty();
        for c in &extra_roots {
            check.add(c.clone())?;
        }
        Ok(PlatformVerifier {
            extra_roots,
            provider,
            built: std::sync::OnceLock::new(),
        })
    }

    /// The platform verifier, built on the first call.
    ///
    /// Errors: the platform verifier's (no root could be loaded from the system).
    fn get(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        self.built
            .get_or_init(|| {
                if self.extra_roots.is_empty() {
                    rustls_platform_verifier::Verifier::new(self.provider.clone())
                } else {
                    rustls_platform_verifier::Verifier::new_with_extra_roots(
                        self.extra_roots.iter().cloned(),
                        self.provider.clone(),
                    )
                }
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Builds the platform verifier now, if not yet ([`PlatformVerifier::get`]).
    pub(crate) fn warm_up(&self) {
        let _ = self.get();
    }

    /// Whether the platform's roots were read (the verifier was built).
    pub(crate) fn is_built(&self) -> bool {
        self.built.get().is_some()
    }
}

impl rustls::client::danger::ServerCertVerifier for PlatformVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        self.get()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        // What the platform verifier (WebPKI) answers: the provider's algorithms, which need
        // no root; the ClientHello does not wait for the roots.
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The client certificate resolver of a profile's client: the profile's QWAC (or none),
/// noting each `CertificateRequest` and what was sent.
#[derive(Debug)]
pub(crate) struct RecordingResolver {
    pub(crate) key: Option<Arc<CertifiedKey>>,
    pub(crate) recorder: TlsRecorder,
}

impl ResolvesClientCert for RecordingResolver {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        let acceptable_cas = root_hint_subjects
            .iter()
            .map(|dn| dn_text(dn))
            .collect::<Vec<_>>();
        let usable = self
            .key
            .as_ref()
            .filter(|k| k.key.choose_scheme(sigschemes).is_some());
        let sent = usable.and_then(|k| {
            k.cert.first().and_then(|c| {
                CertSummary::of_der(c).map(|s| SentCertificate {
                    subject: s.subject,
                    serial: s.serial,
                })
            })
        });
        self.recorder.with(|s| {
            s.pending = Some(ClientAuth {
                asked: true,
                acceptable_cas,
                sent,
            })
        });
        usable.cloned()
    }

    fn has_certs(&self) -> bool {
        self.key.is_some()
    }
}

/// A DER `Name` (as rustls gives the CAs of a `CertificateRequest`) as RFC 2253 text.
fn dn_text(der: &[u8]) -> String {
    use x509_parser::prelude::FromDer;
    match x509_parser::x509::X509Name::from_der(der) {
        Ok((_, name)) => crate::cert::dn::DistinguishedName::from_x509(&name).to_rfc2253(),
        Err(_) => format!("(unreadable name, {} bytes)", der.len()),
    }
}
