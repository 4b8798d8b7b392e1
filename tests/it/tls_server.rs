//! `sandbox serve --tls` (issue 21, TLS and QWAC, server side) on the real binary over real
//! TLS on loopback: the exported sandbox CA trusted by reqwest and curl, TLS 1.1 refused and
//! TLS 1.2 accepted (`openssl s_client`), client certificates (`--client-auth required`: no
//! certificate refused at the handshake, the right QWAC served), and the QWAC rules judged
//! per request (401 `CERTIFICATE_INVALID`: another organisation than the QSealC, expired at
//! the sandbox's time, a missing role, an untrusted issuer until `--client-ca`), and the SCA
//! cookie over TLS (`SameSite=None; Secure; Partitioned`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use psd2_console::cert::Credentials;
use psd2_console::cert::generate::{TppCertSpec, generate_set};

use crate::common::cli::{BIN, Server, free_port, run};
use crate::common::sandbox::{Reply, signed_headers, tpp};

/// A `sandbox serve --tls` child on a free port of 127.0.0.1 with its own data directory,
/// and that directory's sandbox CA written by `cert ca --out`.
struct TlsSandbox {
    home: tempfile::TempDir,
    _server: Server,
    base: String,
    port: u16,
    ca: PathBuf,
}

impl TlsSandbox {
    /// Starts `sandbox serve --in-memory --tls` plus `extra` arguments on a new data
    /// directory.
    fn start(extra: &[&str]) -> TlsSandbox {
        Self::start_in(tempfile::tempdir().unwrap(), extra)
    }

    fn start_in(home: tempfile::TempDir, extra: &[&str]) -> TlsSandbox {
        let port = free_port();
        let ready = home.path().join("ready");
        let addr = format!("127.0.0.1:{port}");
        let child = Command::new(BIN)
            .env("PSD2_CONSOLE_HOME", home.path())
            .args(["sandbox", "serve", "--in-memory", "--tls", "--addr", &addr])
            .arg("--ready-file")
            .arg(&ready)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start sandbox serve --tls");
        let server = Server(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !ready.exists() {
            assert!(
                Instant::now() < deadline,
                "sandbox serve --tls did not get ready"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let base = std::fs::read_to_string(&ready).unwrap().trim().to_string();
        assert_eq!(base, format!("https://{addr}"), "the base URL is https");
        let ca = home.path().join("sandbox-ca.pem");
        let (code, out, err) = run(home.path(), &["cert", "ca", "--out", ca.to_str().unwrap()]);
        assert_eq!(code, 0, "{out}{err}");
        TlsSandbox {
            home,
            _server: server,
            base,
            port,
            ca,
        }
    }

    /// `cert new --qwac --name NAME` plus `extra` on this data directory: (certificate,
    /// key) paths.
    fn qwac(&self, name: &str, extra: &[&str]) -> (PathBuf, PathBuf) {
        qwac_in(self.home.path(), name, extra)
    }

    /// A reqwest client trusting only the sandbox CA, presenting `identity` (certificate and
    /// key PEM files) when given.
    fn client(&self, identity: Option<&(PathBuf, PathBuf)>) -> reqwest::Client {
        let ca = reqwest::Certificate::from_pem(&std::fs::read(&self.ca).unwrap()).unwrap();
        let mut b = reqwest::Client::builder()
            .tls_certs_only([ca])
            .redirect(reqwest::redirect::Policy::none());
        if let Some((cert, key)) = identity {
            let mut pem = std::fs::read(cert).unwrap();
            pem.push(b'\n');
            pem.extend(std::fs::read(key).unwrap());
            b = b.identity(reqwest::Identity::from_pem(&pem).unwrap());
        }
        b.build().unwrap()
    }

    /// A request signed with the QSealC `qseal` at `at`, sent with `client`.
    async fn send(
        &self,
        client: &reqwest::Client,
        qseal: &Credentials,
        method: &str,
        path: &str,
        body: Option<&str>,
        at: SystemTime,
    ) -> Reply {
        let hs = signed_headers(qseal, method, path, &[], body, at);
        let mut rb = client.request(method.parse().unwrap(), format!("{}{path}", self.base));
        for (n, v) in &hs {
            rb = rb.header(n, v);
        }
        if let Some(b) = body {
            rb = rb.body(b.to_string());
        }
        Reply::of(rb.send().await.unwrap()).await
    }

    async fn get(&self, client: &reqwest::Client, qseal: &Credentials, path: &str) -> Reply {
        self.send(client, qseal, "GET", path, None, SystemTime::now())
            .await
    }
}

fn qwac_in(home: &Path, name: &str, extra: &[&str]) -> (PathBuf, PathBuf) {
    let dir = home.join("certs");
    let mut args = vec![
        "cert",
        "new",
        "--qwac",
        "--dir",
        dir.to_str().unwrap(),
        "--name",
        name,
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = run(home, &args);
    assert_eq!(code, 0, "{out}{err}");
    (
        dir.join(format!("{name}.pem")),
        dir.join(format!("{name}.key")),
    )
}

/// The text of the first tppMessage.
fn text(r: &Reply) -> String {
    r.json["tppMessages"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn reqwest_trusting_the_exported_ca_is_served_and_the_ca_is_kept_per_data_dir() {
    let sb = TlsSandbox::start(&[]);
    let client = sb.client(None);
    let health = client
        .get(format!("{}/health", sb.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    sb.get(&client, tpp(), "/v1/sandbox/customers")
        .await
        .assert_status(200);
    // A client that does not trust the sandbox CA is refused by its own TLS check.
    let untrusting = reqwest::Client::builder()
        .tls_certs_only(Vec::<reqwest::Certificate>::new())
        .build()
        .unwrap();
    assert!(
        untrusting
            .get(format!("{}/health", sb.base))
            .send()
            .await
            .is_err()
    );
    // The CA is the data directory's: printed again the same, never overwritten silently.
    let (code, printed, _) = run(sb.home.path(), &["cert", "ca"]);
    assert_eq!(code, 0);
    assert_eq!(
        printed.trim(),
        std::fs::read_to_string(&sb.ca).unwrap().trim()
    );
    let (code, _, err) = run(
        sb.home.path(),
        &["cert", "ca", "--out", sb.ca.to_str().unwrap()],
    );
    assert_ne!(code, 0);
    assert!(err.contains("--force"), "{err}");
    let (code, _, err) = run(
        sb.home.path(),
        &["cert", "ca", "--out", sb.ca.to_str().unwrap(), "--force"],
    );
    assert_eq!(code, 0, "{err}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let key = sb.home.path().join("data/sandbox-ca.key");
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", key.display());
    }
}

#[test]
fn curl_with_the_exported_ca_and_a_qwac_under_client_auth_required() {
    let sb = TlsSandbox::start(&["--client-auth", "required"]);
    let (cert, key) = sb.qwac("qwac", &[]);
    let curl = |with_cert: bool| {
        let mut c = Command::new("curl");
        c.args(["-sS", "--max-time", "20", "--cacert"])
            .arg(&sb.ca)
            .arg(format!("{}/health", sb.base));
        if with_cert {
            c.arg("--cert").arg(&cert).arg("--key").arg(&key);
        }
        c.output().expect("curl is installed (.ci/run installs it)")
    };
    let ok = curl(true);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("UP"));
    let refused = curl(false);
    assert!(
        !refused.status.success(),
        "no client certificate must be refused"
    );
}

#[test]
fn openssl_s_client_tls1_1_refused_tls1_2_and_1_3_accepted() {
    let sb = TlsSandbox::start(&[]);
    let connect = format!("127.0.0.1:{}", sb.port);
    let s_client = |version: &str| {
        let out = Command::new("openssl")
            .args(["s_client", "-connect", &connect, version, "-CAfile"])
            .arg(&sb.ca)
            // Lets the client offer TLS 1.1 at all (OpenSSL 3 refuses it by default).
            .args(["-cipher", "DEFAULT@SECLEVEL=0"])
            .stdin(Stdio::null())
            .output()
            .expect("openssl is installed (.ci/run installs it)");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (ok, out) = s_client("-tls1_1");
    assert!(!ok, "TLS 1.1 must be refused: {out}");
    assert!(out.contains("Cipher is (NONE)"), "{out}");
    let (ok, out) = s_client("-tls1_2");
    assert!(ok, "{out}");
    assert!(
        out.contains("Protocol  : TLSv1.2") || out.contains("TLSv1.2"),
        "{out}"
    );
    assert!(out.contains("Verify return code: 0 (ok)"), "{out}");
    let (ok, out) = s_client("-tls1_3");
    assert!(ok && out.contains("TLSv1.3"), "{out}");
}

#[tokio::test]
async fn client_auth_required_refuses_a_client_without_certificate_at_the_handshake_and_serves_the_qwac()
 {
    let sb = TlsSandbox::start(&["--client-auth", "required"]);
    let qwac = sb.qwac("qwac", &[]);
    let err = sb
        .client(None)
        .get(format!("{}/health", sb.base))
        .send()
        .await
        .expect_err("refused at the handshake");
    let chain = format!("{err:?}");
    assert!(
        chain.to_lowercase().contains("certificate"),
        "the TLS alert names the certificate: {chain}"
    );
    let client = sb.client(Some(&qwac));
    sb.get(&client, tpp(), "/v1/sandbox/customers")
        .await
        .assert_status(200);
}

#[tokio::test]
async fn a_qwac_of_another_organisation_than_the_qseal_is_refused_naming_both() {
    let sb = TlsSandbox::start(&["--client-auth", "optional"]);
    let other = sb.qwac("other", &["--organisation-id", "PSDNO-FSA-OTHER9"]);
    let r = sb
        .get(&sb.client(Some(&other)), tpp(), "/v1/sandbox/customers")
        .await;
    r.assert_error(401, "CERTIFICATE_INVALID");
    let t = text(&r);
    for part in [
        "organisation differs",
        "PSDNO-FSA-OTHER9",
        "PSDNO-FSA-TEST01",
        "QSealC",
    ] {
        assert!(t.contains(part), "{part} in {t}");
    }
    // Optional: a client without a certificate is served (signed with the QSealC only).
    sb.get(&sb.client(None), tpp(), "/v1/sandbox/customers")
        .await
        .assert_status(200);
}

#[tokio::test]
async fn a_qwac_expired_at_the_sandbox_time_is_refused() {
    let sb = TlsSandbox::start(&["--client-auth", "required"]);
    let short = sb.qwac("short", &["--days", "1"]);
    let client = sb.client(Some(&short));
    sb.get(&client, tpp(), "/v1/sandbox/customers")
        .await
        .assert_status(200);
    // Two days later on this TPP's sandbox clock (the machine's clock has not moved).
    let advance = 2 * 86_400;
    sb.send(
        &client,
        tpp(),
        "POST",
        "/v1/sandbox/clock",
        Some(&format!("{{\"advanceSeconds\": {advance}}}")),
        SystemTime::now(),
    )
    .await
    .assert_status(200);
    let later = SystemTime::now() + Duration::from_secs(advance);
    let r = sb
        .send(&client, tpp(), "GET", "/v1/sandbox/customers", None, later)
        .await;
    r.assert_error(401, "CERTIFICATE_INVALID");
    assert!(
        text(&r).contains("expired at the sandbox's time"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn a_qwac_without_the_role_of_the_operation_is_refused() {
    let sb = TlsSandbox::start(&["--client-auth", "required"]);
    let pisp_only = sb.qwac("pisp", &["--roles", "PSP_PI"]);
    let r = sb
        .get(&sb.client(Some(&pisp_only)), tpp(), "/v1/accounts")
        .await;
    r.assert_error(401, "CERTIFICATE_INVALID");
    assert!(
        text(&r).contains("missing the PSD2 role PSP_AI"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn a_qwac_of_an_untrusted_issuer_is_refused_until_its_ca_is_given_with_client_ca() {
    let set = generate_set(&TppCertSpec {
        qwac: true,
        ..TppCertSpec::default()
    })
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("foreign");
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key, ca) = (dir.join("q.pem"), dir.join("q.key"), dir.join("ca.pem"));
    std::fs::write(&cert, &set.tpp_cert_pem).unwrap();
    std::fs::write(&key, &set.tpp_key_pem).unwrap();
    std::fs::write(&ca, &set.ca_cert_pem).unwrap();
    let foreign = (cert, key);

    let sb = TlsSandbox::start(&["--client-auth", "required"]);
    let r = sb
        .get(&sb.client(Some(&foreign)), tpp(), "/v1/sandbox/customers")
        .await;
    r.assert_error(401, "CERTIFICATE_INVALID");
    assert!(text(&r).contains("not from a trusted issuer"), "{}", r.text);

    let trusting = TlsSandbox::start_in(
        home,
        &[
            "--client-auth",
            "required",
            "--client-ca",
            ca.to_str().unwrap(),
        ],
    );
    trusting
        .get(
            &trusting.client(Some(&foreign)),
            tpp(),
            "/v1/sandbox/customers",
        )
        .await
        .assert_status(200);
}

#[tokio::test]
async fn the_sca_cookie_over_tls_is_same_site_none_secure_and_partitioned() {
    let sb = TlsSandbox::start(&[]);
    let client = sb.client(None);
    let r = sb.get(&client, tpp(), "/v1/accounts").await;
    assert_eq!(r.status, 401, "{}", r.text);
    let link = r.sca_redirect().unwrap().to_string();
    assert!(link.starts_with(&format!("{}/", sb.base)), "{link}");
    let page = client.get(&link).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let cookie = page
        .headers()
        .get("set-cookie")
        .expect("the first opening sets the cookie")
        .to_str()
        .unwrap()
        .to_string();
    for attr in ["HttpOnly", "SameSite=None", "Secure", "Partitioned"] {
        assert!(cookie.contains(attr), "{attr} in {cookie}");
    }
    assert!(!cookie.contains("SameSite=Lax"), "{cookie}");
}

#[tokio::test]
async fn a_client_that_never_finishes_the_handshake_is_cut_off_while_others_are_served() {
    use tokio::io::AsyncReadExt;
    let ca = psd2_console::cert::ca::SandboxCa::generate().unwrap();
    let ca_pem = ca.cert_pem().to_string();
    let tls = psd2_console::sandbox::tls::ServerTls::new(ca).unwrap();
    let handle = psd2_console::sandbox::spawn(
        ([127, 0, 0, 1], 0).into(),
        psd2_console::sandbox::SandboxConfig {
            tls: Some(tls),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(handle.base_url.starts_with("https://127.0.0.1:"));
    // Connects and sends no ClientHello.
    let mut silent = tokio::net::TcpStream::connect(handle.addr).await.unwrap();
    let client = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca_pem.as_bytes()).unwrap()])
        .build()
        .unwrap();
    let health = client
        .get(format!("{}/health", handle.base_url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200, "served while another handshake hangs");
    // The server closes the silent connection (HANDSHAKE_TIMEOUT); the outer limit only
    // keeps a broken server from hanging the test.
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(
        psd2_console::sandbox::tls::HANDSHAKE_TIMEOUT * 6,
        silent.read(&mut buf),
    )
    .await
    .expect("the server closes a connection whose handshake never finishes");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    handle.shutdown().await;
}

#[tokio::test]
async fn tls_cert_and_tls_key_serve_a_given_server_certificate() {
    let own = psd2_console::cert::ca::SandboxCa::generate().unwrap();
    let (chain, key) = own.issue_server_cert(&["127.0.0.1".into()]).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (cert_file, key_file, own_ca) = (
        home.path().join("server.pem"),
        home.path().join("server.key"),
        home.path().join("own-ca.pem"),
    );
    std::fs::write(&cert_file, chain).unwrap();
    std::fs::write(&key_file, key).unwrap();
    std::fs::write(&own_ca, own.cert_pem()).unwrap();
    let sb = TlsSandbox::start_in(
        home,
        &[
            "--tls-cert",
            cert_file.to_str().unwrap(),
            "--tls-key",
            key_file.to_str().unwrap(),
        ],
    );
    let trusting_own = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(own.cert_pem().as_bytes()).unwrap()])
        .build()
        .unwrap();
    let health = trusting_own
        .get(format!("{}/health", sb.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    // The data directory's sandbox CA did not issue it.
    assert!(
        sb.client(None)
            .get(format!("{}/health", sb.base))
            .send()
            .await
            .is_err()
    );
    // A key that is not the certificate's is refused at start, in words.
    let (code, _, err) = run(
        sb.home.path(),
        &[
            "sandbox",
            "serve",
            "--in-memory",
            "--tls",
            "--addr",
            "127.0.0.1:0",
            "--tls-cert",
            cert_file.to_str().unwrap(),
            "--tls-key",
            sb.home.path().join("data/sandbox-ca.key").to_str().unwrap(),
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("the key is not the certificate's"), "{err}");
}

/// Reads `stream` to its end; a TLS close without close_notify counts as the end.
fn read_all(stream: &mut impl std::io::Read) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => panic!("reading: {e}"),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Issue 21's graceful shutdown holds over TLS: on SIGTERM `sandbox serve --tls` stops
/// accepting, finishes a request whose body is still arriving on a TLS connection with a
/// complete answer, and exits 0.
#[test]
fn sigterm_drains_a_tls_request_under_way_and_exits_zero() {
    use std::io::Write;
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = Command::new(BIN)
        .env("PSD2_CONSOLE_HOME", home.path())
        .args(["sandbox", "serve", "--in-memory", "--tls", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = crate::common::cli::StderrLines::of(&mut child);
    crate::common::cli::wait_listening(port, Duration::from_secs(60));
    let (code, ca_pem, err) = run(home.path(), &["cert", "ca"]);
    assert_eq!(code, 0, "{err}");
    let mut roots = rustls::RootCertStore::empty();
    use rustls::pki_types::pem::PemObject;
    for c in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let conn =
        rustls::ClientConnection::new(std::sync::Arc::new(config), "127.0.0.1".try_into().unwrap())
            .unwrap();
    let tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut busy = rustls::StreamOwned::new(conn, tcp);
    // The request under way over TLS: headers and half of its 20-byte body.
    busy.write_all(
        b"POST /v1/consents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"access\": ",
    )
    .unwrap();
    busy.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    while !stderr.next().contains("SIGTERM") {}
    assert!(
        child.try_wait().unwrap().is_none(),
        "the server waits for the request under way"
    );
    busy.write_all(b"{\"a\": 1}}").unwrap();
    busy.flush().unwrap();
    let answer = read_all(&mut busy);
    assert!(answer.starts_with("HTTP/1.1 4"), "{answer}");
    assert!(
        answer.contains("tppMessages"),
        "a complete answer: {answer}"
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// Issue 21 ("the console's mTLS against `sandbox serve --tls --client-auth required`"): the
/// real console's `send`, on a profile trusting the exported sandbox CA (`ca_bundle`), is
/// refused at the handshake without a QWAC and told so in words; with a QWAC of that CA
/// (`client_certificate`, `client_key`) it is served, and `--tls` names the certificate it
/// sent.
#[test]
fn the_console_sends_over_mtls_to_client_auth_required() {
    let sb = TlsSandbox::start(&["--client-auth", "required"]);
    let home = sb.home.path();
    crate::common::cli::served_profile(home, "Bank TLS", &sb.base);
    let (qwac, qwac_key) = sb.qwac("qwac", &[]);
    let toml = home.join("config/profiles/served.toml");
    let profile = std::fs::read_to_string(&toml).unwrap();
    let trusting = format!("{profile}ca_bundle = \"{}\"\n", sb.ca.display());
    std::fs::write(&toml, &trusting).unwrap();
    let send = |extra: &[&str]| {
        let mut args = vec![
            "send",
            "sandbox.customers.list",
            "--profile",
            "Bank TLS",
            "--no-wait",
        ];
        args.extend_from_slice(extra);
        run(home, &args)
    };
    let (code, out, err) = send(&[]);
    assert_ne!(code, 0, "refused without a QWAC: {out}");
    assert!(
        err.to_lowercase().contains("client certificate"),
        "the refusal names the missing client certificate: {err}"
    );
    std::fs::write(
        &toml,
        format!(
            "{trusting}client_certificate = \"{}\"\nclient_key = \"{}\"\n",
            qwac.display(),
            qwac_key.display()
        ),
    )
    .unwrap();
    let (code, out, err) = send(&["--tls"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        serde_json::from_str::<serde_json::Value>(&out).is_ok(),
        "the sandbox's JSON answer: {out}"
    );
    assert!(err.contains("sent: "), "the QWAC sent is named: {err}");
}
