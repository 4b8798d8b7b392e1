//! Remote targets over HTTPS: a local TLS server on 127.0.0.1 (tokio-rustls, certificates
//! from rcgen) and the console's client as a profile builds it (`client::tls`). Shows the
//! clear messages for an untrusted server, a missing client certificate (QWAC), no common
//! TLS version and a refused connection, and that the CA bundle, the QWAC and TLS 1.2 work;
//! plus the verification of a signed response.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use psd2_console::cert::Credentials;
use psd2_console::client::history::History;
use psd2_console::client::response_sig::{ASPSP_SIGNATURE_CERTIFICATE, ResponseSignature};
use psd2_console::client::tls::{http_client_for, http_client_recording};
use psd2_console::client::tls_session::TlsSession;
use psd2_console::client::{
    ClientError, Exchange, RequestContext, prepare, response_sig, send_observed,
};
use psd2_console::profile::{Profile, SessionState, Target, TlsMinVersion};
use psd2_console::signing::{digest_header_value, imf_fixdate, sign_with_names};
use psd2_console::xs2a::operations::OPERATIONS;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use crate::common::sandbox::{tpp, tpp_of};

/// A CA (PEM) and its issuer, for server and client certificates.
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> Ca {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::default();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        issuer: Issuer::new(params, key),
    }
}

/// A leaf certificate issued by `ca`: (certificate PEM, key PEM).
fn leaf(ca: &Ca, server: bool) -> (String, String) {
    leaf_tweaked(ca, server, None)
}

/// [`leaf`], its parameters changed by `tweak` before signing.
fn leaf_tweaked(
    ca: &Ca,
    server: bool,
    tweak: Option<fn(&mut CertificateParams)>,
) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::default();
    if server {
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        params.subject_alt_names = vec![
            SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            SanType::DnsName("localhost".try_into().unwrap()),
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    } else {
        params
            .distinguished_name
            .push(DnType::CommonName, "Test TPP QWAC");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    }
    if let Some(tweak) = tweak {
        tweak(&mut params);
    }
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// How the test server behaves.
#[derive(Default)]
struct ServerSpec {
    /// Changes the server certificate's parameters (names, validity) before it is signed.
    leaf_tweak: Option<fn(&mut CertificateParams)>,
    /// Accept only TLS 1.2.
    tls12_only: bool,
    /// Require a client certificate issued by this CA.
    client_ca: Option<String>,
    /// Sign the response with these credentials (certificate in the response header).
    sign_with: Option<&'static Credentials>,
}

/// Starts an HTTPS server on 127.0.0.1 answering every request with `200 {"accounts":[]}`;
/// returns its port and the CA that issued its certificate. It serves at most 20
/// connections and stops when the test's runtime ends.
async fn https_server(spec: ServerSpec) -> (u16, Ca) {
    let server_ca = ca("Test Server CA");
    let (cert_pem, key_pem) = leaf_tweaked(&server_ca, true, spec.leaf_tweak);
    let certs = vec![CertificateDer::from_pem_slice(cert_pem.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] = if spec.tls12_only {
        &[&rustls::version::TLS12]
    } else {
        rustls::ALL_VERSIONS
    };
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .unwrap();
    let builder = match &spec.client_ca {
        Some(pem) => {
            let mut roots = rustls::RootCertStore::empty();
            roots
                .add(CertificateDer::from_pem_slice(pem.as_bytes()).unwrap())
                .unwrap();
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let config = builder.with_single_cert(certs, key).unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let sign_with = spec.sign_with;
    tokio::spawn(async move {
        for _ in 0..20 {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let buf = crate::common::read_request_head(&mut tls, 64 * 1024).await;
                if !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    return;
                }
                let body = br#"{"accounts":[]}"#;
                let mut headers = vec![
                    ("Content-Type".to_string(), "application/json".to_string()),
                    ("Date".to_string(), imf_fixdate(SystemTime::now())),
                    ("X-Request-ID".to_string(), uuid::Uuid::new_v4().to_string()),
                ];
                if let Some(creds) = &sign_with {
                    headers.push(("Digest".into(), digest_header_value(body)));
                    let names: Vec<String> = ["date", "digest", "x-request-id"]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                    let (_, params) = sign_with_names(creds, "", "", &headers, &names).unwrap();
                    headers.push(("Signature".into(), params.to_header_value()));
                    headers.push((
                        ASPSP_SIGNATURE_CERTIFICATE.into(),
                        creds.certificate.header_value(),
                    ));
                }
                let mut resp = String::from("HTTP/1.1 200 OK\r\n");
                for (n, v) in &headers {
                    resp.push_str(&format!("{n}: {v}\r\n"));
                }
                resp.push_str(&format!(
                    "Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                ));
                let _ = tls.write_all(resp.as_bytes()).await;
                let _ = tls.write_all(body).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (port, server_ca)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn remote_profile(port: u16) -> Profile {
    let mut p = Profile::new_embedded("Remote test bank");
    p.target = Target::Url(format!("https://127.0.0.1:{port}"));
    p
}

/// Signs `accounts.list` for `profile` and sends it with the profile's client.
async fn send_accounts(profile: &Profile) -> Result<Exchange, ClientError> {
    send_accounts_tls(profile).await.map(|(ex, _)| ex)
}

/// [`send_accounts`] as the console's sender does it (`client::sender`): the recording
/// client, and the TLS session of the answer.
async fn send_accounts_tls(
    profile: &Profile,
) -> Result<(Exchange, Option<TlsSession>), ClientError> {
    let (http, recorder) = http_client_recording(profile)?;
    let Target::Url(base) = &profile.target else {
        panic!("remote profile expected")
    };
    let op = OPERATIONS
        .iter()
        .find(|o| o.id == "accounts.list")
        .expect("accounts.list");
    let creds = tpp();
    let session = SessionState::default();
    let req = prepare(
        op,
        &[],
        None,
        &RequestContext {
            profile,
            session: &session,
            credentials: creds,
            base_url: base,
            redirect_uri: "http://127.0.0.1:1/callback",
            now: SystemTime::now(),
        },
    )?;
    tokio::time::timeout(Duration::from_secs(60), async {
        let (ex, info) = send_observed(&http, &req, Some(&profile.name), Some(&recorder)).await?;
        let tls = match info {
            Some(i) => Some(
                recorder
                    .session_for(&req.url, i.peer_certificate(), i.version())
                    .await,
            ),
            None => None,
        };
        Ok((ex, tls))
    })
    .await
    .expect("the send finishes")
}

fn no_client_cert() -> ServerSpec {
    ServerSpec::default()
}

#[tokio::test]
async fn untrusted_server_is_named_and_the_ca_bundle_fixes_it() {
    let (port, server_ca) = https_server(no_client_cert()).await;
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(port);

    let err = send_accounts(&profile).await.unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ClientError::Tls { .. }), "{err:?}");
    crate::common::assert_contains_all(
        &msg,
        &[
            &format!("TLS handshake with 127.0.0.1:{port} failed"),
            "issued by \"CN=Test Server CA\", a CA the console does not trust (UnknownIssuer)",
            "set `ca_bundle` in profile \"Remote test bank\"",
            "`psd2-console cert ca --out sandbox-ca.pem`",
        ],
    );

    // A bundle with an unrelated certificate first and the server's CA second.
    let other = ca("Unrelated CA");
    profile.ca_bundle = Some(write(
        dir.path(),
        "bundle.pem",
        &format!("{}\n{}", other.pem, server_ca.pem),
    ));
    let ex = send_accounts(&profile)
        .await
        .expect("trusted with the bundle");
    assert_eq!(ex.status, 200);
    assert_eq!(ex.json.unwrap()["accounts"], serde_json::json!([]));
}

#[tokio::test]
async fn client_certificate_required_fails_clearly_and_the_qwac_is_accepted() {
    let client_ca = ca("Test QWAC CA");
    let (port, server_ca) = https_server(ServerSpec {
        client_ca: Some(client_ca.pem.clone()),
        ..ServerSpec::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(port);
    profile.ca_bundle = Some(write(dir.path(), "ca.pem", &server_ca.pem));

    let err = send_accounts(&profile).await.unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ClientError::Tls { .. }), "{err:?}: {msg}");
    crate::common::assert_contains_all(
        &msg,
        &[
            "the server requires a client certificate (QWAC) and the console sent none",
            "set `client_certificate` and `client_key` in profile \"Remote test bank\"",
            "the server accepts client certificates issued by: CN=Test QWAC CA",
        ],
    );

    let (cert, key) = leaf(&client_ca, false);
    profile.client_certificate = Some(write(dir.path(), "qwac.pem", &cert));
    profile.client_key = Some(write(dir.path(), "qwac.key", &key));
    let ex = send_accounts(&profile)
        .await
        .expect("accepted with the QWAC");
    assert_eq!(ex.status, 200);

    // A QWAC from a CA the server does not know is refused, and said so.
    let stranger = ca("Stranger CA");
    let (cert, key) = leaf(&stranger, false);
    profile.client_certificate = Some(write(dir.path(), "other.pem", &cert));
    profile.client_key = Some(write(dir.path(), "other.key", &key));
    let err = send_accounts(&profile).await.unwrap_err();
    let msg = err.to_string();
    crate::common::assert_contains_all(
        &msg,
        &[
            "the server refused the client certificate (QWAC) CN=Test TPP QWAC (serial ",
            "it does not trust the CA that issued it",
            "the server accepts client certificates issued by: CN=Test QWAC CA",
        ],
    );
}

#[tokio::test]
async fn tls12_is_accepted_and_a_tls13_minimum_is_a_clear_mismatch() {
    let (port, server_ca) = https_server(ServerSpec {
        tls12_only: true,
        ..ServerSpec::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(port);
    profile.ca_bundle = Some(write(dir.path(), "ca.pem", &server_ca.pem));
    let ex = send_accounts(&profile).await.expect("TLS 1.2 is allowed");
    assert_eq!(ex.status, 200);

    profile.tls_min_version = Some(TlsMinVersion::Tls13);
    let err = send_accounts(&profile).await.unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ClientError::Tls { .. }), "{err:?}");
    assert!(msg.contains("no TLS version or cipher in common"), "{msg}");
}

#[tokio::test]
async fn refused_connection_names_host_and_port() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let err = send_accounts(&remote_profile(port)).await.unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ClientError::Connect { .. }), "{err:?}");
    assert!(
        msg.contains(&format!("connection refused at 127.0.0.1:{port}")),
        "{msg}"
    );
}

#[test]
fn bad_tls_files_are_named_when_the_client_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(443);
    profile.ca_bundle = Some(dir.path().join("missing.pem"));
    let msg = http_client_for(&profile).unwrap_err().to_string();
    assert!(
        msg.contains("cannot read ca_bundle") && msg.contains("missing.pem"),
        "{msg}"
    );

    profile.ca_bundle = Some(write(dir.path(), "empty.pem", "not a certificate\n"));
    let msg = http_client_for(&profile).unwrap_err().to_string();
    assert!(msg.contains("holds no PEM certificate"), "{msg}");

    profile.ca_bundle = None;
    profile.client_certificate = Some(write(dir.path(), "c.pem", "x"));
    let msg = http_client_for(&profile).unwrap_err().to_string();
    assert!(msg.contains("go together"), "{msg}");
}

#[tokio::test]
async fn signed_responses_are_verified_when_the_profile_asks() {
    // The bank signs with credentials of its own, not the TPP's.
    let aspsp = tpp_of("Test ASPSP", "PSDNO-FSA-ASPSP1", None);
    let (port, server_ca) = https_server(ServerSpec {
        sign_with: Some(aspsp),
        ..ServerSpec::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(port);
    profile.ca_bundle = Some(write(dir.path(), "ca.pem", &server_ca.pem));
    let ex = send_accounts(&profile).await.unwrap();
    assert_eq!(
        response_sig::verify_response(&profile, &ex, SystemTime::now()),
        None,
        "off unless the profile asks"
    );
    profile.verify_response_signatures = true;
    match response_sig::verify_response(&profile, &ex, SystemTime::now()) {
        Some(ResponseSignature::Verified { key_id, .. }) => {
            assert_eq!(key_id, aspsp.certificate.key_id())
        }
        other => panic!("expected a verified signature, got {other:?}"),
    }
    // The same response with a changed body fails, and says why.
    let mut tampered = ex.clone();
    tampered.body = br#"{"accounts":[{}]}"#.to_vec();
    match response_sig::verify_response(&profile, &tampered, SystemTime::now()) {
        Some(ResponseSignature::Failed(why)) => assert!(why.contains("digest mismatch"), "{why}"),
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// Issue 21: the TLS session of a response: version, cipher suite, the server's chain with
/// subject, issuer, validity and SAN, the client certificate asked for (the CAs named) and
/// the one sent; stored with the exchange in the history and read back.
#[tokio::test]
async fn the_tls_session_names_version_cipher_chain_and_the_qwac_sent() {
    let client_ca = ca("Test QWAC CA");
    let (port, server_ca) = https_server(ServerSpec {
        client_ca: Some(client_ca.pem.clone()),
        ..ServerSpec::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(port);
    profile.ca_bundle = Some(write(dir.path(), "ca.pem", &server_ca.pem));
    let (cert, key) = leaf(&client_ca, false);
    profile.client_certificate = Some(write(dir.path(), "qwac.pem", &cert));
    profile.client_key = Some(write(dir.path(), "qwac.key", &key));
    let (ex, tls) = send_accounts_tls(&profile).await.unwrap();
    assert_eq!(ex.status, 200);
    let tls = tls.expect("an HTTPS exchange has a TLS session");
    assert_eq!(tls.version, "TLS 1.3");
    let cipher = tls
        .cipher_suite
        .clone()
        .expect("the probe learnt the cipher");
    assert!(cipher.starts_with("TLS13_"), "{cipher}");
    assert_eq!(tls.server_chain.len(), 1);
    let leaf_cert = &tls.server_chain[0];
    assert_eq!(leaf_cert.subject, "CN=localhost");
    assert_eq!(leaf_cert.issuer, "CN=Test Server CA");
    assert!(leaf_cert.not_before < leaf_cert.not_after);
    assert_eq!(leaf_cert.san, vec!["IP:127.0.0.1", "DNS:localhost"]);
    assert!(tls.client_auth.asked);
    assert_eq!(tls.client_auth.acceptable_cas, vec!["CN=Test QWAC CA"]);
    let sent = tls.client_auth.sent.clone().expect("the QWAC was sent");
    assert_eq!(sent.subject, "CN=Test TPP QWAC");
    assert!(!sent.serial.is_empty());
    let text = tls.lines().join("\n");
    crate::common::assert_contains_all(
        &text,
        &[
            "TLS: TLS 1.3",
            &format!("cipher suite: {cipher} (from a second handshake with the same settings)"),
            "server certificate [0]: CN=localhost",
            "issuer: CN=Test Server CA",
            "SAN: IP:127.0.0.1, DNS:localhost",
            "client certificate: asked for (CAs named: CN=Test QWAC CA)",
            &format!("sent: CN=Test TPP QWAC (serial {})", sent.serial),
        ],
    );
    assert!(!text.contains("PRIVATE KEY"), "{text}");

    // Stored with the exchange and read back.
    let history = History::open(&dir.path().join("history.sqlite3")).unwrap();
    let req = psd2_console::client::PreparedRequest {
        operation_id: "accounts.list".into(),
        params: Vec::new(),
        method: "GET".into(),
        url: format!("https://127.0.0.1:{port}/v1/accounts"),
        path_and_query: "/v1/accounts".into(),
        headers: Vec::new(),
        body: Vec::new(),
        inspection: Default::default(),
        signed_for: None,
    };
    let id = history
        .record_tls("Remote test bank", &[], &req, &ex, Some(&tls))
        .unwrap();
    assert_eq!(history.tls_session(id).unwrap(), Some(tls));
    let plain = history.record("Remote test bank", &[], &req, &ex).unwrap();
    assert_eq!(history.tls_session(plain).unwrap(), None);
}

/// Issue 21: over TLS 1.2 the session says so, with a TLS 1.2 suite; a server that asks
/// for no client certificate is shown as such.
#[tokio::test]
async fn the_tls_session_of_a_tls12_server_without_client_auth() {
    let (port, server_ca) = https_server(ServerSpec {
        tls12_only: true,
        ..ServerSpec::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(port);
    profile.ca_bundle = Some(write(dir.path(), "ca.pem", &server_ca.pem));
    let (_, tls) = send_accounts_tls(&profile).await.unwrap();
    let tls = tls.unwrap();
    assert_eq!(tls.version, "TLS 1.2");
    let cipher = tls.cipher_suite.clone().unwrap();
    assert!(cipher.starts_with("TLS_ECDHE_"), "{cipher}");
    assert!(!tls.client_auth.asked);
    assert!(
        tls.lines()
            .contains(&"  client certificate: not asked for by the server".to_string())
    );
}

/// Issue 21: a server certificate for other names says which names it has and which host
/// was asked for.
#[tokio::test]
async fn a_name_mismatch_names_the_certificates_names_and_the_host() {
    let (port, server_ca) = https_server(ServerSpec {
        leaf_tweak: Some(|p| {
            p.subject_alt_names = vec![SanType::DnsName("bank.example".try_into().unwrap())];
        }),
        ..ServerSpec::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(port);
    profile.ca_bundle = Some(write(dir.path(), "ca.pem", &server_ca.pem));
    let msg = send_accounts(&profile).await.unwrap_err().to_string();
    crate::common::assert_contains_all(
        &msg,
        &[
            "the server certificate names DNS:bank.example, not 127.0.0.1 (NotValidForName)",
            "subjectAltName has 127.0.0.1",
        ],
    );
}

/// Issue 21: an expired server certificate gives its dates.
#[tokio::test]
async fn an_expired_server_certificate_gives_its_dates() {
    let (port, server_ca) = https_server(ServerSpec {
        leaf_tweak: Some(|p| {
            p.not_before = rcgen::date_time_ymd(2020, 1, 1);
            p.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }),
        ..ServerSpec::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(port);
    profile.ca_bundle = Some(write(dir.path(), "ca.pem", &server_ca.pem));
    let msg = send_accounts(&profile).await.unwrap_err().to_string();
    crate::common::assert_contains_all(
        &msg,
        &[
            "the server certificate of 127.0.0.1 (CN=localhost) expired on 2021-01-01 00:00:00 UTC",
            "(valid 2020-01-01 00:00:00 UTC .. 2021-01-01 00:00:00 UTC); it is now ",
            "(Expired): the server needs a renewed certificate",
        ],
    );
}

/// Issue 21: a server certificate not valid yet gives its dates.
#[tokio::test]
async fn a_server_certificate_not_valid_yet_gives_its_dates() {
    let (port, server_ca) = https_server(ServerSpec {
        leaf_tweak: Some(|p| {
            p.not_before = rcgen::date_time_ymd(2090, 1, 1);
            p.not_after = rcgen::date_time_ymd(2091, 1, 1);
        }),
        ..ServerSpec::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(port);
    profile.ca_bundle = Some(write(dir.path(), "ca.pem", &server_ca.pem));
    let msg = send_accounts(&profile).await.unwrap_err().to_string();
    crate::common::assert_contains_all(
        &msg,
        &[
            "the server certificate of 127.0.0.1 (CN=localhost) is not valid before 2090-01-01 00:00:00 UTC",
            "(NotValidYet): check this machine's clock",
        ],
    );
}

/// Issue 21: a server that speaks only TLS 1.1 (it answers the ClientHello with a TLS 1.1
/// ServerHello, as an old OpenSSL server does; rustls cannot serve TLS 1.1) is refused in
/// words.
#[tokio::test]
async fn a_tls11_server_is_refused_in_words() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        for _ in 0..4 {
            let Ok((mut tcp, _)) = listener.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 4096];
            let _ = tcp.read(&mut buf).await;
            // ServerHello: TLS 1.1, a random, no session id, TLS_RSA_WITH_AES_128_CBC_SHA,
            // no compression, no extensions.
            let mut body = vec![0x03, 0x02];
            body.extend([7u8; 32]);
            body.extend([0x00, 0x00, 0x2f, 0x00]);
            let mut hs = vec![0x02, 0x00, 0x00, body.len() as u8];
            hs.extend(&body);
            let mut record = vec![0x16, 0x03, 0x02, 0x00, hs.len() as u8];
            record.extend(&hs);
            let _ = tcp.write_all(&record).await;
            let _ = tcp.read(&mut buf).await;
        }
    });
    let msg = send_accounts(&remote_profile(port))
        .await
        .unwrap_err()
        .to_string();
    crate::common::assert_contains_all(
        &msg,
        &[
            &format!("127.0.0.1:{port} speaks only TLS 1.1 or older, which the console refuses"),
            "TLS 1.2 or higher",
        ],
    );
}

/// Issue 21: `send --tls` prints the TLS session of the exchange on the real binary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_tls_prints_the_session() {
    let client_ca = ca("Test QWAC CA");
    let (port, server_ca) = https_server(ServerSpec {
        client_ca: Some(client_ca.pem.clone()),
        ..ServerSpec::default()
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    let base = format!("https://127.0.0.1:{port}");
    crate::common::cli::served_profile(home.path(), "Remote", &base);
    let (cert, key) = leaf(&client_ca, false);
    let ca_file = write(home.path(), "server-ca.pem", &server_ca.pem);
    let qwac = write(home.path(), "qwac.pem", &cert);
    let qwac_key = write(home.path(), "qwac.key", &key);
    let toml = home.path().join("config/profiles/served.toml");
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str(&format!(
        "ca_bundle = \"{}\"\nclient_certificate = \"{}\"\nclient_key = \"{}\"\n",
        ca_file.display(),
        qwac.display(),
        qwac_key.display()
    ));
    std::fs::write(&toml, text).unwrap();
    let home_path = home.path().to_path_buf();
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        crate::common::cli::run(
            &home_path,
            &[
                "send",
                "accounts.list",
                "--profile",
                "Remote",
                "--no-wait",
                "--tls",
            ],
        )
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"accounts\""), "{out}");
    crate::common::assert_contains_all(
        &err,
        &[
            "TLS: TLS 1.3",
            "cipher suite: TLS13_",
            "server certificate [0]: CN=localhost",
            "client certificate: asked for (CAs named: CN=Test QWAC CA)",
            "sent: CN=Test TPP QWAC (serial ",
        ],
    );
}

/// Issue 21: an embedded profile with `sandbox_tls = true` runs its sandbox over HTTPS:
/// the console trusts the data directory's sandbox CA and presents a QWAC issued by it
/// (the server asks for one, optionally); `send --tls` shows that session.
#[test]
fn sandbox_tls_runs_the_embedded_sandbox_over_https_with_the_qwac() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("config/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("tls.toml"),
        "name = \"TLS bank\"\ntarget = \"embedded\"\nsandbox_tls = true\n",
    )
    .unwrap();
    let (code, out, err) = crate::common::cli::run(
        home.path(),
        &[
            "send",
            "accounts.list",
            "--profile",
            "TLS bank",
            "--no-wait",
            "--tls",
        ],
    );
    assert!(code == 0 || code == 1, "{code}: {out}{err}");
    assert!(err.contains("HTTP "), "{err}");
    assert!(
        !out.contains("CERTIFICATE_INVALID"),
        "the QWAC is accepted: {out}"
    );
    crate::common::assert_contains_all(
        &err,
        &[
            "TLS: TLS 1.3",
            "cipher suite: TLS13_",
            "issuer: CN=psd2-console Sandbox TLS CA",
            "SAN: ",
            "client certificate: asked for",
            "sent: ",
        ],
    );
    assert!(
        home.path().join("data/certs").read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with("-qwac.pem")),
        "the QWAC is kept in <data>/certs"
    );

    // The doctor checks the recorded exchange with the profile's QWAC: its TLS checks pass.
    let (_, out, err) = crate::common::cli::run(home.path(), &["doctor", "last"]);
    crate::common::assert_contains_all(
        &out,
        &[
            "✔ tls.qwac.validity",
            "✔ tls.qwac.role",
            "✔ tls.qwac.organisation",
            "✔ tls.qwac.key",
        ],
    );
    assert!(!err.contains("error"), "{err}");
}
