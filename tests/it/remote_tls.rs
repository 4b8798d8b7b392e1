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
use psd2_console::client::response_sig::{ASPSP_SIGNATURE_CERTIFICATE, ResponseSignature};
use psd2_console::client::tls::http_client_for;
use psd2_console::client::{
    ClientError, Exchange, RequestContext, prepare, response_sig, send_for_profile,
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
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// How the test server behaves.
struct ServerSpec {
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
    let (cert_pem, key_pem) = leaf(&server_ca, true);
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
    let http = http_client_for(profile)?;
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
    tokio::time::timeout(
        Duration::from_secs(60),
        send_for_profile(&http, &req, Some(&profile.name)),
    )
    .await
    .expect("the send finishes")
}

fn no_client_cert() -> ServerSpec {
    ServerSpec {
        tls12_only: false,
        client_ca: None,
        sign_with: None,
    }
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
            "not trusted (UnknownIssuer)",
            "`ca_bundle` in profile \"Remote test bank\"",
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
        tls12_only: false,
        client_ca: Some(client_ca.pem.clone()),
        sign_with: None,
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut profile = remote_profile(port);
    profile.ca_bundle = Some(write(dir.path(), "ca.pem", &server_ca.pem));

    let err = send_accounts(&profile).await.unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ClientError::Tls { .. }), "{err:?}: {msg}");
    assert!(msg.contains("client certificate (QWAC)"), "{msg}");
    assert!(msg.contains("client_certificate"), "{msg}");

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
    assert!(
        msg.contains("refused the client certificate (QWAC)"),
        "{msg}"
    );
}

#[tokio::test]
async fn tls12_is_accepted_and_a_tls13_minimum_is_a_clear_mismatch() {
    let (port, server_ca) = https_server(ServerSpec {
        tls12_only: true,
        client_ca: None,
        sign_with: None,
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
        tls12_only: false,
        client_ca: None,
        sign_with: Some(aspsp),
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
