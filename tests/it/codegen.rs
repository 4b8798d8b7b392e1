//! Issue 22, part 1: `export --format python|node|java|go` writes a program that signs the
//! exchange's request afresh at run time. Every program runs with its real runtime against a
//! `sandbox serve` and must get the answer the console got: a consented accounts read, a
//! payment initiation with a body, a keyId whose issuer is not ASCII (RFC 2047) and a PSU-ID
//! with a corporate context. A copy whose body is changed after signing is refused.

use std::path::Path;

use psd2_console::client::Engine;
use psd2_console::client::codegen::{self, CodeRequest, Language};
use psd2_console::profile::{Paths, ProfileSet};
use psd2_console::xs2a::operations;

use crate::common::{self, browser, cli, programs};

const KARI: &str = "31125461118";

/// A `sandbox serve`, a home with a profile `Served` targeting it, and an engine on it.
struct Served {
    _server: cli::Server,
    base: String,
    home: tempfile::TempDir,
    engine: Engine,
}

/// [`Served`]; `cert` replaces the profile's certificate and key (PEM texts).
async fn served(cert: Option<(String, String)>) -> Served {
    let (server, base) = cli::serve_in_memory();
    let home = tempfile::tempdir().unwrap();
    cli::served_profile(home.path(), "Served", &base);
    // The PSU is present (payments need PSU-IP-Address).
    let file = home.path().join("config/profiles/served.toml");
    let toml = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{toml}psu_ip_address = \"127.0.0.1\"\n")).unwrap();
    if let Some((cert_pem, key_pem)) = cert {
        std::fs::write(home.path().join("tpp-certs/tpp.pem"), cert_pem).unwrap();
        std::fs::write(home.path().join("tpp-certs/tpp.key"), key_pem).unwrap();
    }
    let paths = Paths::under(home.path().to_path_buf());
    let profile = ProfileSet::load(Some(&paths.profiles_dir()))
        .get("Served")
        .cloned()
        .unwrap();
    let engine = psd2_console::embedded::start_engine(common::any_ports(profile), paths)
        .await
        .unwrap();
    Served {
        _server: server,
        base,
        home,
        engine,
    }
}

/// Sends operation `op` with `params` through the console's engine (recorded in the history).
async fn console_send(
    engine: &Engine,
    op: &str,
    params: &[(&str, &str)],
) -> psd2_console::client::Exchange {
    let params: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let req = engine
        .prepare(operations::find(op).unwrap(), &params, None)
        .unwrap();
    engine.send(&req).await.unwrap()
}

/// `psd2-console export --format <lang> last [extra]` on `home`: the program text.
fn export(home: &Path, lang: Language, extra: &[&str]) -> String {
    let mut args = vec!["export", "--format", lang.name(), "last"];
    args.extend_from_slice(extra);
    let (code, out, err) = cli::run(home, &args);
    assert_eq!(code, 0, "export --format {}: {err}", lang.name());
    out
}

/// Completes the SCA of `first`'s scaRedirect as Kari in `context` and hands the callback
/// to the engine.
async fn sca(engine: &mut Engine, first: &psd2_console::client::Exchange, context: &str) {
    let href = first.sca_redirect().expect("a scaRedirect");
    let to_tpp =
        common::sca::complete(&href, KARI, context, common::sca::tick_all, "Approve").await;
    assert_eq!(browser().get(&to_tpp).send().await.unwrap().status(), 200);
    let cb = engine.next_callback().await.unwrap();
    engine.apply_sca_callback(&cb).unwrap();
}

/// Changes the body after signing in a copy of the program (one space appended).
fn tampered(lang: Language, text: &str) -> String {
    let (from, to) = match lang {
        Language::Python => ("data=BODY or None", "data=BODY + b\" \""),
        Language::Node => (
            "body: BODY.length > 0 ? BODY : undefined,",
            "body: Buffer.concat([BODY, Buffer.from(\" \")]),",
        ),
        Language::Java => (
            "HttpRequest.BodyPublishers.ofByteArray(BODY)",
            "HttpRequest.BodyPublishers.ofByteArray((new String(BODY, StandardCharsets.UTF_8) + \" \").getBytes(StandardCharsets.UTF_8))",
        ),
        Language::Go => (
            "bytes.NewReader(body)",
            "bytes.NewReader(append(append([]byte{}, body...), ' '))",
        ),
    };
    assert!(text.contains(from), "{} program: no {from:?}", lang.name());
    text.replace(from, to)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_read_consented_accounts_and_initiate_a_payment_as_the_console_did() {
    let langs = programs::available();
    let mut s = served(None).await;
    let work = tempfile::tempdir().unwrap();

    // A consented accounts read: SCA in the sandbox's pages, then the console's read.
    let first = console_send(&s.engine, "accounts.list", &[]).await;
    assert_eq!(first.status, 401, "{}", first.pretty_body());
    sca(&mut s.engine, &first, "PRIVATE").await;
    let console = console_send(&s.engine, "accounts.list", &[]).await;
    assert_eq!(console.status, 200, "{}", console.pretty_body());
    let key_pem = std::fs::read_to_string(s.home.path().join("tpp-certs/tpp.key")).unwrap();
    let key_line = key_pem.lines().nth(3).unwrap().to_string();
    // Exported aimed at nothing (--base-url of the export), retargeted by the program's own
    // --base-url.
    for &lang in &langs {
        let text = export(s.home.path(), lang, &["--base-url", "http://127.0.0.1:9"]);
        assert!(text.contains("\"http://127.0.0.1:9\""), "{text}");
        assert!(!text.contains(&key_line), "never the key itself");
        let got = programs::run(work.path(), lang, &text, &["--base-url", &s.base]);
        assert_eq!((got.code, got.status), (0, 200), "{}: {got:?}", lang.name());
        assert_eq!(
            Some(got.json()),
            console.json,
            "{} got another answer",
            lang.name()
        );
    }

    // A payment initiation with a body, at the profile's target as exported.
    let console = console_send(
        &s.engine,
        "payments.instant.create",
        &[("allowLogicalDuplicate", "true")],
    )
    .await;
    assert_eq!(console.status, 201, "{}", console.pretty_body());
    let console_json = console.json.clone().unwrap();
    for &lang in &langs {
        let text = export(s.home.path(), lang, &[]);
        let got = programs::run(work.path(), lang, &text, &[]);
        assert_eq!((got.code, got.status), (0, 201), "{}: {got:?}", lang.name());
        let json = got.json();
        assert_eq!(
            json["transactionStatus"],
            console_json["transactionStatus"],
            "{}",
            lang.name()
        );
        let keys = |v: &serde_json::Value| {
            v.as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect::<Vec<String>>()
        };
        assert_eq!(keys(&json), keys(&console_json), "{}", lang.name());
        assert_ne!(
            json["paymentId"], console_json["paymentId"],
            "a new payment"
        );

        // The same program with the body changed after signing: the Digest no longer
        // matches, the bank refuses it, the program exits 1.
        let bad = programs::run(work.path(), lang, &tampered(lang, &text), &[]);
        assert_eq!(bad.code, 1, "{}: {bad:?}", lang.name());
        assert_eq!(bad.status, 400, "{}: {bad:?}", lang.name());
        let message = String::from_utf8_lossy(&bad.body).to_lowercase();
        assert!(message.contains("digest"), "{}: {message}", lang.name());
    }
    s.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_send_psu_id_and_psu_corporate_id_as_the_console_did() {
    let langs = programs::available();
    let mut s = served(None).await;
    let work = tempfile::tempdir().unwrap();
    let customers = console_send(
        &s.engine,
        "sandbox.customers.list",
        &[("withAgreements", "true")],
    )
    .await;
    let agreement = crate::common::first_agreement(customers.json.as_ref().unwrap(), KARI);
    let first = console_send(&s.engine, "accounts.list", &[]).await;
    sca(&mut s.engine, &first, &format!("CORPORATE:{agreement}")).await;
    let console = console_send(&s.engine, "accounts.list", &[]).await;
    assert_eq!(console.status, 200, "{}", console.pretty_body());
    for &lang in &langs {
        let text = export(s.home.path(), lang, &[]);
        assert!(text.contains("\"PSU-Corporate-ID\""), "{text}");
        assert!(text.contains(&format!("\"{agreement}\"")), "{text}");
        let got = programs::run(work.path(), lang, &text, &[]);
        assert_eq!((got.code, got.status), (0, 200), "{}: {got:?}", lang.name());
        assert_eq!(Some(got.json()), console.json, "{}", lang.name());
    }
    s.engine.shutdown().await;
}

/// A CA whose organisation is `Bank, Ærø & Co AS` (RFC 2253 escaping and non-ASCII) and a
/// TPP certificate with both roles it issues: (certificate PEM, key PEM).
fn non_ascii_issuer() -> (String, String) {
    use psd2_console::cert::qc::{Psd2Role, Psd2Statement, encode_qc_statements};
    use rcgen::{
        BasicConstraints, CertificateParams, CustomExtension, DnType, IsCa, Issuer, KeyPair,
        PKCS_RSA_SHA256, RsaKeySize, SerialNumber,
    };
    let ca_key = KeyPair::generate_rsa_for(&PKCS_RSA_SHA256, RsaKeySize::_2048).unwrap();
    let mut ca = CertificateParams::default();
    ca.distinguished_name = rcgen::DistinguishedName::new();
    ca.distinguished_name.push(DnType::CountryName, "NO");
    ca.distinguished_name
        .push(DnType::OrganizationName, "Bank, Ærø & Co AS");
    ca.distinguished_name
        .push(DnType::CommonName, "Sandbox CA #2");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let issuer = Issuer::from_params(&ca, &ca_key);
    let key = KeyPair::generate_rsa_for(&PKCS_RSA_SHA256, RsaKeySize::_2048).unwrap();
    let mut tpp = CertificateParams::default();
    tpp.distinguished_name = rcgen::DistinguishedName::new();
    tpp.distinguished_name.push(DnType::CountryName, "NO");
    tpp.distinguished_name.push(DnType::CommonName, "Ærlig TPP");
    tpp.serial_number = Some(SerialNumber::from_slice(&[0x00, 0xF1, 0xE2, 0xD3, 0xC4]));
    tpp.custom_extensions
        .push(CustomExtension::from_oid_content(
            &[1, 3, 6, 1, 5, 5, 7, 1, 3],
            encode_qc_statements(&Psd2Statement {
                roles: vec![Psd2Role::PspAi, Psd2Role::PspPi],
                nca_name: "Finanstilsynet".into(),
                nca_id: "NO-FSA".into(),
            }),
        ));
    let cert = tpp.signed_by(&key, &issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_sign_a_non_ascii_issuer_in_rfc_2047_as_the_console_did() {
    let langs = programs::available();
    let s = served(Some(non_ascii_issuer())).await;
    let work = tempfile::tempdir().unwrap();
    let key_id = s.engine.credentials.certificate.key_id();
    assert_eq!(
        key_id,
        "SN=F1E2D3C4,CA=CN=Sandbox CA #2,O=Bank\\, Ærø & Co AS,C=NO"
    );
    let customers = operations::find("sandbox.customers.list").unwrap();
    let req = s.engine.prepare(customers, &[], None).unwrap();
    assert!(
        req.header("Signature").unwrap().starts_with("=?utf-8?B?"),
        "the console sends the keyId RFC 2047-encoded"
    );
    let console = s.engine.send(&req).await.unwrap();
    assert_eq!(console.status, 200, "{}", console.pretty_body());
    for &lang in &langs {
        let text = export(s.home.path(), lang, &[]);
        let got = programs::run(work.path(), lang, &text, &[]);
        assert_eq!((got.code, got.status), (0, 200), "{}: {got:?}", lang.name());
        assert_eq!(Some(got.json()), console.json, "{}", lang.name());

        // --dry-run shows the Signature: RFC 2047-encoded, the console's keyId inside.
        let dry = programs::output(work.path(), lang, &text, &["--dry-run"]);
        let value = dry
            .lines()
            .find_map(|l| l.strip_prefix("Signature: "))
            .unwrap_or_else(|| panic!("{}: {dry}", lang.name()));
        assert!(value.starts_with("=?utf-8?B?"), "{}: {value}", lang.name());
        let params = psd2_console::signing::SignatureParams::parse(value).unwrap();
        assert_eq!(params.key_id, key_id, "{}", lang.name());
    }
}

/// The four programs for one exchange, fixed paths: the snapshots show what a TPP developer
/// gets.
#[test]
fn the_four_programs_of_one_exchange() {
    let req = CodeRequest {
        title: "POST /v1/payments/instant-norwegian-domestic-credit-transfers (psd2-console history #7, profile Embedded sandbox)".into(),
        method: "POST".into(),
        base_url: "http://127.0.0.1:8080".into(),
        path_and_query: "/v1/payments/instant-norwegian-domestic-credit-transfers".into(),
        headers: vec![
            ("TPP-Redirect-URI".into(), "http://127.0.0.1:8090/callback".into()),
            ("TPP-Session-ID".into(), "5b0e4c1e-3f5a-4d0b-9a51-0c1e2f3a4b5c".into()),
            ("PSU-ID".into(), "d8a2b1c3-1111-4222-8333-944455556666".into()),
            ("PSU-IP-Address".into(), "127.0.0.1".into()),
            ("Accept".into(), "application/json".into()),
            ("Content-Type".into(), "application/json".into()),
        ],
        body: r#"{"instructedAmount":{"currency":"NOK","amount":"125.00"},"debtorAccount":{"bban":"12345678903"},"creditorName":"Ærø \"Kafé\"","creditorAccount":{"bban":"98765432106"}}"#.as_bytes().to_vec(),
        sign_request_target: false,
        cert_file: "/home/tpp/.local/share/psd2-console/certs/embedded-sandbox.pem".into(),
        key_file: "/home/tpp/.local/share/psd2-console/certs/embedded-sandbox.key".into(),
    };
    for lang in Language::ALL {
        insta::assert_snapshot!(lang.name(), codegen::program(lang, &req));
    }

    // Each one, run with --dry-run on the vectors' certificate and PKCS#1 key, prints a
    // request that the sandbox's verifier accepts: the body bytes (quotes, non-ASCII) and
    // their Digest survive the literals, the signing string and keyId are the console's.
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let cert = vectors.join("tpp_qsealc_cert.pem");
    let key = vectors.join("tpp_key.pkcs1.pem");
    let work = tempfile::tempdir().unwrap();
    for lang in programs::available() {
        let out = programs::output(
            work.path(),
            lang,
            &codegen::program(lang, &req),
            &[
                "--dry-run",
                "--cert",
                cert.to_str().unwrap(),
                "--key",
                key.to_str().unwrap(),
            ],
        );
        let (head, body) = out.split_once("\n\n").unwrap();
        assert_eq!(body.as_bytes(), &req.body[..], "{}", lang.name());
        let mut lines = head.lines();
        assert_eq!(
            lines.next(),
            Some(
                "POST http://127.0.0.1:8080/v1/payments/instant-norwegian-domestic-credit-transfers"
            )
        );
        let headers: Vec<(String, String)> = lines
            .map(|l| l.split_once(": ").unwrap())
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let map = common::header_map(&headers);
        let view = psd2_console::signing::RequestView {
            method: "POST",
            path_and_query: &req.path_and_query,
            headers: &map,
            body: &req.body,
        };
        let verified = psd2_console::signing::verify_request(
            &Default::default(),
            &view,
            std::time::SystemTime::now(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}\n{out}", lang.name()));
        assert_eq!(
            verified.params.key_id,
            std::fs::read_to_string(vectors.join("key_id.txt"))
                .unwrap()
                .trim()
        );
        assert_eq!(
            verified.params.headers,
            [
                "date",
                "digest",
                "x-request-id",
                "psu-id",
                "tpp-redirect-uri"
            ]
        );
    }
}

/// `x` in the TUI: on the console it asks for the export of the request as the request pane
/// would send it, on the history screen for the highlighted exchange's; both write the cURL
/// script and, beside it, the four programs, which run against the console's embedded
/// sandbox as they are (the profile's generated certificate and key are their defaults) and
/// get the console's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_writes_the_programs_from_the_console_and_the_history() {
    use psd2_console::tui::Action;
    use psd2_console::tui::history::{export_exchange, export_request};
    let langs = programs::available();
    let mut c = common::console::Console::start().await;
    let work = tempfile::tempdir().unwrap();

    assert_eq!(c.app.handle_key(common::tui::key('x')), Action::ExportCode);
    let spec = c.app.request_spec();
    let req = c
        .engine
        .prepare(spec.op, &spec.params, spec.body.as_deref())
        .unwrap();
    let (script, dir) = export_request(&c.engine, &req, spec.op.title).unwrap();
    assert!(
        std::fs::read_to_string(&script)
            .unwrap()
            .starts_with("#!/bin/sh\ncurl ")
    );
    for lang in Language::ALL {
        let text = std::fs::read_to_string(dir.join(lang.file_name())).unwrap();
        assert!(
            text.contains(&format!("\"{}\"", req.path_and_query)),
            "{text}"
        );
    }

    let status = c.send().await;
    let console = c.last.clone().unwrap();
    let entry = {
        let h = c.engine.history.as_ref().unwrap().lock().unwrap();
        h.last().unwrap().unwrap()
    };
    let (script, dir) = export_exchange(&c.engine, &entry).unwrap();
    assert!(script.exists());
    assert_eq!(dir, script.with_extension(""));
    for &lang in &langs {
        let text = std::fs::read_to_string(dir.join(lang.file_name())).unwrap();
        assert!(
            text.contains(&format!("\"{}\"", c.engine.base_url)),
            "{text}"
        );
        let got = programs::run(work.path(), lang, &text, &[]);
        assert_eq!(got.status, status, "{}: {got:?}", lang.name());
        // The selected operation (accounts.list) asks for SCA: same messages, each answer
        // with its own scaRedirect.
        let json = console.json.as_ref().unwrap();
        assert_eq!(
            got.json()["tppMessages"],
            json["tppMessages"],
            "{}",
            lang.name()
        );
        assert!(got.json()["_links"]["scaRedirect"]["href"].is_string());
    }
    c.shutdown().await;
}
