//! HTTPS to remote ASPSPs: the reqwest client a profile gets (rustls, TLS 1.2 or higher per
//! Authentication rule 1, the system roots plus an optional extra CA bundle, an optional
//! QWAC client certificate), and plain-language messages for TLS and connection failures.

use std::error::Error as StdError;
use std::path::Path;
use std::time::Duration;

use super::ClientError;
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
/// CA bundle holds no PEM certificate, the client certificate or key is not PEM, or only one
/// of them is set.
pub fn http_client_for(profile: &Profile) -> Result<reqwest::Client, ClientError> {
    let setup = |what: String| ClientError::Setup(format!("profile {:?}: {what}", profile.name));
    let mut b = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("psd2-console/", env!("CARGO_PKG_VERSION")))
        .tls_version_min(match profile.tls_min_version {
            Some(TlsMinVersion::Tls13) => reqwest::tls::Version::TLS_1_3,
            _ => reqwest::tls::Version::TLS_1_2,
        });
    if let Some(p) = &profile.ca_bundle {
        let pem = read(profile, "ca_bundle", p)?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| setup(format!("ca_bundle {}: {e}", p.display())))?;
        if certs.is_empty() {
            return Err(setup(format!(
                "ca_bundle {} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                p.display()
            )));
        }
        b = b.tls_certs_merge(certs);
    }
    match (&profile.client_certificate, &profile.client_key) {
        (Some(c), Some(k)) => {
            let mut pem = read(profile, "client_certificate", c)?;
            pem.push(b'\n');
            pem.extend(read(profile, "client_key", k)?);
            let id = reqwest::Identity::from_pem(&pem).map_err(|e| {
                setup(format!(
                    "client certificate {} / key {}: {} (both must be PEM)",
                    c.display(),
                    k.display(),
                    chain_text(&e)
                ))
            })?;
            b = b.identity(id);
        }
        (None, None) => {}
        _ => {
            return Err(setup(
                "client_certificate and client_key go together (set both or neither)".into(),
            ));
        }
    }
    b.build()
        .map_err(|e| setup(format!("HTTP client: {}", chain_text(&e))))
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

/// A sentence for a rustls failure; `profile` names where to fix it.
fn tls_reason(e: &rustls::Error, host: &str, profile: Option<&str>) -> String {
    use rustls::{AlertDescription as A, CertificateError as C, Error as E};
    let in_profile = profile
        .map(|p| format!(" in profile {p:?}"))
        .unwrap_or_default();
    match e {
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
                host.rsplit_once(':').map(|(h, _)| h).unwrap_or(host)
            ),
            C::Revoked => "the server certificate is revoked (Revoked)".into(),
            C::BadSignature => "the server certificate's signature is invalid (BadSignature): it was not issued by the CA that claims it; check `ca_bundle` holds the right CA".into(),
            C::BadEncoding => "the server certificate is not valid DER (BadEncoding): the server must send a well-formed X.509 certificate".into(),
            C::InvalidPurpose | C::InvalidPurposeContext { .. } => "the server certificate is not for TLS servers (InvalidPurpose): it needs extendedKeyUsage serverAuth".into(),
            C::UnhandledCriticalExtension => "the server certificate has a critical extension TLS clients do not know (UnhandledCriticalExtension): issue it without that extension".into(),
            C::UnsupportedSignatureAlgorithmContext { .. }
            | C::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => "the server certificate is signed with an algorithm the console does not accept (e.g. SHA-1): issue it with SHA-256 or better".into(),
            C::Other(o) => webpki_reason(&format!("{o:?}"), &in_profile),
            other => format!("the server certificate was refused ({other:?})"),
        },
        E::AlertReceived(A::CertificateRequired) => format!(
            "the server requires a client certificate (QWAC); set `client_certificate` and `client_key`{in_profile}"
        ),
        E::AlertReceived(A::BadCertificate | A::UnknownCA | A::CertificateUnknown) => {
            format!("the server refused the client certificate (QWAC){in_profile} ({e})")
        }
        E::AlertReceived(A::ProtocolVersion) | E::PeerIncompatible(_) => format!(
            "no TLS version or cipher in common with the server ({e}); the console requires TLS 1.2 or higher (`tls_min_version`{in_profile})"
        ),
        E::AlertReceived(A::HandshakeFailure) => format!(
            "the server ended the handshake (HandshakeFailure): it may require a client certificate (QWAC){in_profile}, or share no cipher or TLS version"
        ),
        E::InvalidMessage(_) => {
            "the server does not speak TLS here (is the target http:// rather than https://?)"
                .into()
        }
        other => other.to_string(),
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
    describe_plain(url, e, profile)
}

fn describe_plain(url: &str, e: &reqwest::Error, profile: Option<&str>) -> ClientError {
    let host = host_port(url);
    let full = chain_text(e);
    let causes = causes(e);
    if let Some(r) = causes.iter().find_map(|c| match c {
        Cause::Rustls(r) => Some(*r),
        _ => None,
    }) {
        return ClientError::Tls {
            host: host.clone(),
            reason: tls_reason(r, &host, profile),
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
