//! HTTPS to remote ASPSPs: the reqwest client a profile gets (rustls, TLS 1.2 or higher per
//! Authentication rule 1, the system roots plus an optional extra CA bundle, an optional
//! QWAC client certificate), and plain-language messages for TLS and connection failures.

use std::error::Error as StdError;
use std::path::Path;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::ClientError;
use super::tls_session::{
    ClientAuth, PlatformVerifier, RecordingResolver, RecordingVerifier, ServerCertRefused,
    TlsRecorder, date,
};
use crate::profile::{Profile, TlsMinVersion};

/// Whole-request timeout of PSD2 calls.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Time allowed to open the TCP connection (and finish the TLS handshake).
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

fn read(profile: &Profile, field: &str, p: &Path) -> Result<Vec<u8>, ClientError> {
    let path = profile.resolve(p);
    std::fs::read(&path).map_err(|e| {
        ClientError::Setup(format!(
            "profile {:?}: cannot read {field} {}: {e}",
            profile.name,
            path.display()
        ))
    })
}

/// The reqwest client for `profile`: rustls; minimum TLS 1.2 (or 1.3 with
/// `tls_min_version = "1.3"`); server certificates checked against the platform's roots plus
/// the certificates of `ca_bundle`; `client_certificate` + `client_key` (a QWAC, PEM)
/// presented when the server asks; no automatic redirects (a 302 is shown, not followed);
/// 30 s per request, 10 s to connect.
///
/// Errors ([`ClientError::Setup`], naming the profile and file): a file cannot be read, the
/// CA bundle holds no PEM certificate, the client certificate or key is not PEM or the key
/// is not the certificate's, or only one of them is set.
pub fn http_client_for(profile: &Profile) -> Result<reqwest::Client, ClientError> {
    http_client_recording(profile).map(|(c, _)| c)
}

/// [`http_client_for`], with the [`TlsRecorder`] that notes what its TLS handshakes showed
/// (server chain, client certificate asked for and sent): the client runs on a rustls
/// `ClientConfig` of our own whose verifier and client certificate resolver record, and
/// reports reqwest's `TlsInfo` on each response ([`super::tls_session`]).
///
/// Errors: as [`http_client_for`].
pub fn http_client_recording(
    profile: &Profile,
) -> Result<(reqwest::Client, TlsRecorder), ClientError> {
    http_client_recording_with(profile, None)
}

/// [`http_client_recording`] also trusting the CA certificates of `extra_ca_pem` (PEM):
/// the sandbox CA for an embedded profile with `sandbox_tls`.
///
/// Errors: as [`http_client_for`]; `extra_ca_pem` holds no readable certificate.
pub fn http_client_recording_with(
    profile: &Profile,
    extra_ca_pem: Option<&[u8]>,
) -> Result<(reqwest::Client, TlsRecorder), ClientError> {
    let setup = |what: String| ClientError::Setup(format!("profile {:?}: {what}", profile.name));
    let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let versions: &[&'static rustls::SupportedProtocolVersion] = match profile.tls_min_version {
        Some(TlsMinVersion::Tls13) => &[&rustls::version::TLS13],
        _ => &[&rustls::version::TLS13, &rustls::version::TLS12],
    };
    let mut extra_roots = Vec::new();
    if let Some(p) = &profile.ca_bundle {
        let pem = read(profile, "ca_bundle", p)?;
        for c in CertificateDer::pem_slice_iter(&pem) {
            extra_roots.push(c.map_err(|e| setup(format!("ca_bundle {}: {e}", p.display())))?);
        }
        if extra_roots.is_empty() {
            return Err(setup(format!(
                "ca_bundle {} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                p.display()
            )));
        }
    }
    if let Some(pem) = extra_ca_pem {
        for c in CertificateDer::pem_slice_iter(pem) {
            extra_roots.push(c.map_err(|e| setup(format!("sandbox CA: {e}")))?);
        }
    }
    // The extra roots are checked here (an unreadable one refuses the profile); the
    // platform's roots are read at the first handshake (issue 23).
    let inner = PlatformVerifier::new(extra_roots, provider.clone())
        .map_err(|e| setup(format!("TLS roots: {e}")))?;
    let key = match (&profile.client_certificate, &profile.client_key) {
        (Some(c), Some(k)) => {
            let bad = |why: String| {
                setup(format!(
                    "client certificate {} / key {}: {why} (both must be PEM)",
                    c.display(),
                    k.display(),
                ))
            };
            let cert_pem = read(profile, "client_certificate", c)?;
            let key_pem = read(profile, "client_key", k)?;
            let chain = CertificateDer::pem_slice_iter(&cert_pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad(e.to_string()))?;
            if chain.is_empty() {
                return Err(bad("no PEM certificate in the certificate file".into()));
            }
            let der = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| bad(e.to_string()))?;
            let ck = rustls::sign::CertifiedKey::from_der(chain, der, &provider)
                .map_err(|e| bad(e.to_string()))?;
            Some(std::sync::Arc::new(ck))
        }
        (None, None) => None,
        _ => {
            return Err(setup(
                "client_certificate and client_key go together (set both or neither)".into(),
            ));
        }
    };
    let mut recorder = TlsRecorder::default();
    let inner = std::sync::Arc::new(inner);
    recorder.set_verifier(inner.clone());
    let verifier = std::sync::Arc::new(RecordingVerifier {
        inner,
        recorder: recorder.clone(),
    });
    let resolver = std::sync::Arc::new(RecordingResolver {
        key,
        recorder: recorder.clone(),
    });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .map_err(|e| setup(format!("TLS versions: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_client_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    // Every new connection makes a full handshake, so its chain and CertificateRequest are
    // seen (a resumed session skips both).
    config.resumption = rustls::client::Resumption::disabled();
    recorder.set_config(std::sync::Arc::new(config.clone()));
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("psd2-console/", env!("CARGO_PKG_VERSION")))
        .tls_backend_preconfigured(config)
        .tls_info(true)
        .build()
        .map_err(|e| setup(format!("HTTP client: {}", chain_text(&e))))?;
    Ok((client, recorder))
}

/// Every message of an error's `source()` chain joined with `: ` (repeats skipped).
pub(crate) fn chain_text(e: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = cur {
        let s = err.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = err.source();
    }
    parts.join(": ")
}

/// `host:port` of a URL (the default port filled in), or the URL itself when it has none.
pub(crate) fn host_port(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port_or_known_default()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => url.to_string(),
        },
        Err(_) => url.to_string(),
    }
}

/// What went wrong below HTTP, found by walking the error chain.
enum Cause<'a> {
    Rustls(&'a rustls::Error),
    Io(std::io::ErrorKind),
}

fn causes<'a>(e: &'a (dyn StdError + 'static)) -> Vec<Cause<'a>> {
    let mut out = Vec::new();
    collect_causes(e, &mut out, 0);
    out
}

/// Walks `source()`, and the error wrapped inside each `io::Error` (whose `source()` skips
/// it), collecting rustls errors and I/O error kinds.
fn collect_causes<'a>(e: &'a (dyn StdError + 'static), out: &mut Vec<Cause<'a>>, depth: usize) {
    let mut cur: Option<&'a (dyn StdError + 'static)> = Some(e);
    while let Some(err) = cur {
        if depth > 16 {
            return;
        }
        if let Some(r) = err.downcast_ref::<rustls::Error>() {
            out.push(Cause::Rustls(r));
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            out.push(Cause::Io(io.kind()));
            if let Some(inner) = io.get_ref() {
                let inner: &'a (dyn StdError + 'static) = inner;
                collect_causes(inner, out, depth + 1);
            }
        }
        cur = err.source();
    }
}

/// What a TLS failure message can name besides the error itself.
#[derive(Default)]
struct Context<'a> {
    /// `host:port`.
    host: &'a str,
    /// The profile, named in hints.
    profile: Option<&'a str>,
    /// The client authentication of the failed handshake, when the recorder saw it.
    client_auth: Option<ClientAuth>,
}

impl Context<'_> {
    fn in_profile(&self) -> String {
        self.profile
            .map(|p| format!(" in profile {p:?}"))
            .unwrap_or_default()
    }

    fn host_name(&self) -> &str {
        self.host
            .rsplit_once(':')
            .map(|(h, _)| h)
            .unwrap_or(self.host)
    }

    /// ` (the server names these CAs: A; B)` or ``.
    fn named_cas(&self) -> String {
        match &self.client_auth {
            Some(ca) if ca.asked && !ca.acceptable_cas.is_empty() => format!(
                "; the server accepts client certificates issued by: {}",
                ca.acceptable_cas.join("; ")
            ),
            _ => String::new(),
        }
    }
}

/// A sentence for a rustls failure; `profile` names where to fix it.
#[cfg(test)]
fn tls_reason(e: &rustls::Error, host: &str, profile: Option<&str>) -> String {
    tls_reason_in(
        e,
        &Context {
            host,
            profile,
            client_auth: None,
        },
    )
}

/// What an alert the server sent about our client certificate means.
fn client_alert_meaning(a: rustls::AlertDescription) -> &'static str {
    use rustls::AlertDescription as A;
    match a {
        A::UnknownCA => "it does not trust the CA that issued it",
        A::CertificateExpired => "it says the certificate has expired or is not valid yet",
        A::CertificateRevoked => "it says the certificate is revoked",
        A::BadCertificate => "the certificate is malformed or its signature does not verify",
        A::UnsupportedCertificate => "it does not accept this type of certificate",
        A::AccessDenied => "the certificate is valid but not allowed access",
        A::DecryptError => {
            "the proof of the private key did not verify (key and certificate do not match?)"
        }
        _ => "it did not accept the certificate",
    }
}

fn tls_reason_in(e: &rustls::Error, cx: &Context<'_>) -> String {
    use rustls::{AlertDescription as A, CertificateError as C, Error as E};
    let in_profile = cx.in_profile();
    let host = cx.host;
    match e {
        E::InvalidCertificate(C::Other(o)) => {
            let err: &(dyn StdError + 'static) = &*o.0;
            if let Some(refused) = err.downcast_ref::<ServerCertRefused>() {
                return refused_reason(refused, cx);
            }
            webpki_reason(&format!("{o:?}"), &in_profile)
        }
        E::InvalidCertificate(c) => match c {
            C::UnknownIssuer => format!(
                "the server certificate is not trusted (UnknownIssuer); add the CA that issued it to `ca_bundle`{in_profile}"
            ),
            C::Expired | C::ExpiredContext { .. } => {
                "the server certificate has expired (Expired): the server needs a renewed certificate (or this machine's clock is wrong)".into()
            }
            C::NotValidYet | C::NotValidYetContext { .. } => {
                "the server certificate is not valid yet (NotValidYet): check this machine's clock, or wait until its notBefore".into()
            }
            C::NotValidForName | C::NotValidForNameContext { .. } => format!(
                "the server certificate is not issued for {} (NotValidForName); check the target URL{in_profile}",
                cx.host_name()
            ),
            C::Revoked => "the server certificate is revoked (Revoked)".into(),
            C::BadSignature => "the server certificate's signature is invalid (BadSignature): it was not issued by the CA that claims it; check `ca_bundle` holds the right CA".into(),
            C::BadEncoding => "the server certificate is not valid DER (BadEncoding): the server must send a well-formed X.509 certificate".into(),
            C::InvalidPurpose | C::InvalidPurposeContext { .. } => "the server certificate is not for TLS servers (InvalidPurpose): it needs extendedKeyUsage serverAuth".into(),
            C::UnhandledCriticalExtension => "the server certificate has a critical extension TLS clients do not know (UnhandledCriticalExtension): issue it without that extension".into(),
            C::UnsupportedSignatureAlgorithmContext { .. }
            | C::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => "the server certificate is signed with an algorithm the console does not accept (e.g. SHA-1): issue it with SHA-256 or better".into(),
            other => format!("the server certificate was refused ({other:?})"),
        },
        E::AlertReceived(A::CertificateRequired) => format!(
            "the server requires a client certificate (QWAC) and the console sent none: set `client_certificate` and `client_key`{in_profile}{}",
            cx.named_cas()
        ),
        E::AlertReceived(a @ (A::BadCertificate
        | A::UnknownCA
        | A::CertificateUnknown
        | A::CertificateExpired
        | A::CertificateRevoked
        | A::UnsupportedCertificate
        | A::AccessDenied
        | A::DecryptError)) => {
            let sent = cx.client_auth.as_ref().and_then(|c| c.sent.clone());
            match sent {
                Some(s) => format!(
                    "the server refused the client certificate (QWAC) {} (serial {}) with alert {a:?}: {}{in_profile}{}",
                    s.subject,
                    s.serial,
                    client_alert_meaning(*a),
                    cx.named_cas()
                ),
                None if cx.client_auth.as_ref().is_some_and(|c| c.asked) => format!(
                    "the server requires a client certificate (QWAC) and the console sent none (alert {a:?}): set `client_certificate` and `client_key`{in_profile}{}",
                    cx.named_cas()
                ),
                None => format!(
                    "the server refused the client certificate (QWAC){in_profile} (alert {a:?}: {})",
                    client_alert_meaning(*a)
                ),
            }
        }
        E::PeerIncompatible(rustls::PeerIncompatible::ServerDoesNotSupportTls12Or13) => format!(
            "{host} speaks only TLS 1.1 or older, which the console refuses: Authentication rule 1 asks TLS 1.2 or higher on every connection; the server must be upgraded"
        ),
        E::AlertReceived(A::ProtocolVersion) | E::PeerIncompatible(_) => format!(
            "no TLS version or cipher in common with the server ({e}); the console requires TLS 1.2 or higher (`tls_min_version`{in_profile})"
        ),
        E::AlertReceived(A::HandshakeFailure) => match &cx.client_auth {
            Some(ca) if ca.asked && ca.sent.is_none() => format!(
                "the server requires a client certificate (QWAC) and the console sent none (alert HandshakeFailure): set `client_certificate` and `client_key`{in_profile}{}",
                cx.named_cas()
            ),
            Some(ClientAuth {
                sent: Some(s), ..
            }) => format!(
                "the server refused the client certificate (QWAC) {} (serial {}) (alert HandshakeFailure){in_profile}{}",
                s.subject,
                s.serial,
                cx.named_cas()
            ),
            _ => format!(
                "the server ended the handshake (HandshakeFailure): it may require a client certificate (QWAC){in_profile}, or share no cipher or TLS version"
            ),
        },
        E::InvalidMessage(_) => {
            "the server does not speak TLS here (is the target http:// rather than https://?)"
                .into()
        }
        other => other.to_string(),
    }
}

/// The message for a server certificate the verifier refused, naming what the chain shows.
fn refused_reason(r: &ServerCertRefused, cx: &Context<'_>) -> String {
    use rustls::CertificateError as C;
    let in_profile = cx.in_profile();
    let leaf = r.chain.first().cloned().unwrap_or_default();
    let host = if r.host.is_empty() {
        cx.host_name().to_string()
    } else {
        r.host.clone()
    };
    let secs = |t: &rustls::pki_types::UnixTime| t.as_secs() as i64;
    match &r.cause {
        C::UnknownIssuer => {
            let issuer = r.chain.last().map(|c| c.issuer.clone()).unwrap_or_default();
            format!(
                "the server certificate of {host} ({}) was issued by {issuer:?}, a CA the console does not trust (UnknownIssuer): \
                 put that CA's certificate (PEM) into a file and set `ca_bundle`{in_profile} to it; \
                 for a `psd2-console sandbox serve --tls` server, `psd2-console cert ca --out sandbox-ca.pem` writes its CA",
                leaf.subject
            )
        }
        C::Expired | C::ExpiredContext { .. } => {
            let (now, not_after) = match &r.cause {
                C::ExpiredContext { time, not_after } => (Some(secs(time)), secs(not_after)),
                _ => (None, leaf.not_after),
            };
            format!(
                "the server certificate of {host} ({}) expired on {} (valid {}){} (Expired): the server needs a renewed certificate (or this machine's clock is wrong)",
                leaf.subject,
                date(not_after),
                leaf.validity_text(),
                now.map(|n| format!("; it is now {}", date(n)))
                    .unwrap_or_default()
            )
        }
        C::NotValidYet | C::NotValidYetContext { .. } => {
            let (now, not_before) = match &r.cause {
                C::NotValidYetContext { time, not_before } => (Some(secs(time)), secs(not_before)),
                _ => (None, leaf.not_before),
            };
            format!(
                "the server certificate of {host} ({}) is not valid before {} (valid {}){} (NotValidYet): check this machine's clock, or wait until then",
                leaf.subject,
                date(not_before),
                leaf.validity_text(),
                now.map(|n| format!("; it is now {}", date(n)))
                    .unwrap_or_default()
            )
        }
        C::NotValidForName | C::NotValidForNameContext { .. } => {
            let names = match &r.cause {
                _ if !leaf.san.is_empty() => leaf.san.join(", "),
                C::NotValidForNameContext { presented, .. } if !presented.is_empty() => {
                    presented.join(", ")
                }
                _ => "no subjectAltName".to_string(),
            };
            format!(
                "the server certificate names {names}, not {host} (NotValidForName): use one of those names in the target URL{in_profile}, or give the server a certificate whose subjectAltName has {host}"
            )
        }
        other => format!(
            "{} (server certificate {}, issued by {})",
            tls_reason_in(&rustls::Error::InvalidCertificate(other.clone()), cx),
            leaf.subject,
            leaf.issuer
        ),
    }
}

/// What to change for a certificate path error that rustls passes on from webpki as
/// `CertificateError::Other` (`debug` is its Debug text, e.g. `OtherError(CaUsedAsEndEntity)`).
fn webpki_reason(debug: &str, in_profile: &str) -> String {
    let table: [(&str, &str); 6] = [
        (
            "CaUsedAsEndEntity",
            "the server presents a CA certificate as its own (CaUsedAsEndEntity): configure the server with a leaf certificate issued by that CA (basicConstraints CA:FALSE), and put the CA into `ca_bundle`",
        ),
        (
            "EndEntityUsedAsCa",
            "the certificate that issued the server's is not a CA (EndEntityUsedAsCa): issue the server certificate from a CA certificate (basicConstraints CA:TRUE)",
        ),
        (
            "PathLenConstraintViolated",
            "the server's chain is longer than its CA allows (PathLenConstraintViolated): issue the server certificate closer to the root, or from a CA without pathLen limit",
        ),
        (
            "NameConstraintViolation",
            "the server certificate names a host its CA may not issue for (NameConstraintViolation): issue it from a CA allowed for that name",
        ),
        (
            "MaximumPathDepthExceeded",
            "the server's chain is too long (MaximumPathDepthExceeded): send a shorter chain",
        ),
        (
            "UnsupportedCertVersion",
            "the server certificate is not X.509 v3 (UnsupportedCertVersion): reissue it as v3",
        ),
    ];
    for (name, text) in table {
        if debug.contains(name) {
            return text.to_string();
        }
    }
    format!(
        "the server certificate was refused ({debug}); check the server's certificate chain and `ca_bundle`{in_profile}"
    )
}

/// Turns a reqwest send error into a clear [`ClientError`]: TLS handshake failures
/// ([`ClientError::Tls`]: untrusted, expired or misnamed server certificate, client
/// certificate required or refused, no common TLS version), connection refused, DNS
/// failures and timeouts ([`ClientError::Connect`]), with the host and port. `profile` is
/// named in hints about what to change.
pub fn describe_send_error(url: &str, e: &reqwest::Error, profile: Option<&str>) -> ClientError {
    describe_send_error_with_body(url, e, profile, 0)
}

/// [`describe_send_error`] for a request with a body of `body_len` bytes: when the server
/// closed the connection while the body was being written (broken pipe or reset, and no
/// answer was read), says so with the body size and the sandbox's limit
/// ([`crate::xs2a::limits::MAX_BODY_BYTES`]); an answer that did come is shown as a
/// response, not here.
pub(crate) fn describe_send_error_with_body(
    url: &str,
    e: &reqwest::Error,
    profile: Option<&str>,
    body_len: usize,
) -> ClientError {
    describe_send_error_recorded(url, e, profile, body_len, None)
}

/// [`describe_send_error_with_body`] for a client built by [`http_client_recording`]: the
/// message also names what the handshake showed (the CAs the server accepts client
/// certificates from, the certificate the console sent).
pub(crate) fn describe_send_error_recorded(
    url: &str,
    e: &reqwest::Error,
    profile: Option<&str>,
    body_len: usize,
    recorder: Option<&TlsRecorder>,
) -> ClientError {
    let full = chain_text(e);
    let closed = causes(e).iter().any(|c| {
        matches!(
            c,
            Cause::Io(std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset)
        )
    }) || full.contains("Broken pipe");
    let limit = crate::xs2a::limits::MAX_BODY_BYTES;
    // hyper says "error writing a body" for a broken pipe, but a reset can surface as a plain
    // connection error before it gets there: a body over the limit explains both.
    if body_len > 0 && closed && (full.contains("body") || body_len > limit) {
        return ClientError::Connect {
            url: url.to_string(),
            reason: format!(
                "{} closed the connection while the request body ({body_len} bytes) was being sent, without an answer; \
                 the body is probably over its size limit (the embedded sandbox and `sandbox serve` take at most {limit} bytes, {} MiB)",
                host_port(url),
                limit / (1024 * 1024)
            ),
        };
    }
    describe_plain(url, e, profile, recorder)
}

fn describe_plain(
    url: &str,
    e: &reqwest::Error,
    profile: Option<&str>,
    recorder: Option<&TlsRecorder>,
) -> ClientError {
    let host = host_port(url);
    let full = chain_text(e);
    let causes = causes(e);
    if let Some(r) = causes.iter().find_map(|c| match c {
        Cause::Rustls(r) => Some(*r),
        _ => None,
    }) {
        let name = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_string()))
            .unwrap_or_default();
        let cx = Context {
            host: &host,
            profile,
            client_auth: recorder.and_then(|r| r.client_auth_with(&name)),
        };
        return ClientError::Tls {
            host: host.clone(),
            reason: tls_reason_in(r, &cx),
        };
    }
    let io_kind = causes.iter().find_map(|c| match c {
        Cause::Io(k) => Some(k.to_owned()),
        _ => None,
    });
    let reason = if e.is_timeout() || io_kind == Some(std::io::ErrorKind::TimedOut) {
        format!(
            "no answer from {host} in time (timeout; {} s to connect, {} s per request)",
            CONNECT_TIMEOUT.as_secs(),
            REQUEST_TIMEOUT.as_secs()
        )
    } else if io_kind == Some(std::io::ErrorKind::ConnectionRefused) {
        format!("connection refused at {host}: nothing listens there")
    } else if full.contains("dns error") || full.contains("failed to lookup address") {
        let name = host.rsplit_once(':').map(|(h, _)| h).unwrap_or(&host);
        format!("DNS: no such host {name:?} ({full})")
    } else if io_kind == Some(std::io::ErrorKind::ConnectionReset)
        || io_kind == Some(std::io::ErrorKind::UnexpectedEof)
    {
        format!("{host} closed the connection ({full})")
    } else if e.is_connect() {
        format!("cannot connect to {host}: {full}")
    } else {
        return ClientError::Http {
            url: url.to_string(),
            reason: full,
        };
    };
    ClientError::Connect {
        url: url.to_string(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_platform_roots_are_read_at_the_first_use_not_when_the_client_is_built() {
        let profile = crate::profile::Profile::new_embedded("default");
        let (_http, recorder) = http_client_recording(&profile).unwrap();
        assert!(
            !recorder.verifier_built(),
            "the system roots were read when the client was built"
        );
        recorder.warm_up_verifier();
        assert!(recorder.verifier_built());
        // A clone of the recorder (the engine's) sees the same verifier.
        assert!(recorder.clone().verifier_built());
    }

    #[test]
    fn a_bad_extra_root_still_refuses_the_profile_when_the_client_is_built() {
        // A PEM certificate block whose DER is not a certificate (INTEGER 0).
        let pem = "-----BEGIN CERTIFICATE-----\nAgEA\n-----END CERTIFICATE-----\n";
        let profile = crate::profile::Profile::new_embedded("default");
        let msg = http_client_recording_with(&profile, Some(pem.as_bytes()))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("TLS roots"), "{msg}");
    }

    /// Stands in for webpki's error of that name (rustls passes it on as `Other`).
    #[derive(Debug)]
    struct CaUsedAsEndEntity;

    impl std::fmt::Display for CaUsedAsEndEntity {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("CaUsedAsEndEntity")
        }
    }

    impl StdError for CaUsedAsEndEntity {}

    #[test]
    fn rustls_certificate_errors_say_what_to_change() {
        use rustls::{CertificateError as C, Error as E, OtherError};
        let other =
            E::InvalidCertificate(C::Other(OtherError(std::sync::Arc::new(CaUsedAsEndEntity))));
        let text = tls_reason(&other, "bank.example:443", Some("Bank"));
        assert!(text.contains("CaUsedAsEndEntity"), "{text}");
        assert!(text.contains("leaf certificate"), "{text}");
        assert!(text.contains("`ca_bundle`"), "{text}");
        for (e, words) in [
            (C::BadEncoding, "well-formed"),
            (C::InvalidPurpose, "serverAuth"),
            (C::UnhandledCriticalExtension, "without that extension"),
            (C::Expired, "renewed"),
            (C::NotValidYet, "clock"),
        ] {
            let text = tls_reason(&E::InvalidCertificate(e.clone()), "h:443", None);
            assert!(text.contains(words), "{e:?}: {text}");
            assert!(
                !text.starts_with("the server certificate was refused ("),
                "{text}"
            );
        }
    }
}
