//! Case bundles (`psd2-console case export` / `case open`): real sends to the embedded
//! sandbox and to a sandbox on loopback, the bundle written and opened into another home,
//! the same history and sandbox state there; no private key or Signature value in any byte.

use std::io::Read as _;
use std::path::Path;

use psd2_console::case::bundle::Bundle;
use psd2_console::case::exchanges::Selection;
use psd2_console::case::export::{ExportOptions, ExportReport, export};
use psd2_console::client::history::{History, HistoryEntry};
use psd2_console::client::{Engine, PreparedRequest};
use psd2_console::embedded::start_engine;
use psd2_console::profile::{DEFAULT_PROFILE, Paths, ProfileSet};
use psd2_console::xs2a::operations;
use rusqlite::Connection;

use crate::common;
use crate::common::cli;

/// Kari, a private customer of the seed.
const KARI: &str = "31125461118";

/// What the scenario did on the embedded sandbox.
struct Scenario {
    home: tempfile::TempDir,
    paths: Paths,
    psu_id: String,
    payment_id: String,
    /// Its payment product (path segment).
    product: String,
    /// The `Signature` header values of every request sent.
    signatures: Vec<String>,
}

/// Prepares `op` with `params` and sends it, keeping its Signature value.
async fn send(
    engine: &Engine,
    signatures: &mut Vec<String>,
    op: &str,
    params: &[(&str, &str)],
    body: Option<&str>,
) -> psd2_console::client::Exchange {
    let params: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let req: PreparedRequest = engine
        .prepare(operations::find(op).unwrap(), &params, body)
        .unwrap();
    signatures.push(req.header("Signature").unwrap().to_string());
    engine.send(&req).await.unwrap()
}

/// On the embedded sandbox of a new home: AIS SCA as Kari, accounts read with the PSU-ID,
/// an instant payment initiated (left RCVD), the sandbox clock advanced by 2 hours.
async fn scenario() -> Scenario {
    let (home, paths, mut engine) = crate::common::default_engine().await;
    let mut sigs = Vec::new();
    let first = send(&engine, &mut sigs, "accounts.list", &[], None).await;
    let sca = first.sca_redirect().expect("scaRedirect");
    let to_tpp =
        common::sca::complete(&sca, KARI, "PRIVATE", common::sca::tick_all, "Approve").await;
    assert_eq!(
        common::browser()
            .get(&to_tpp)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let cb = engine.next_callback().await.unwrap();
    engine.apply_sca_callback(&cb).unwrap();
    let psu_id = engine.session.psu_id.clone().expect("a PSU-ID after SCA");
    let accounts = send(&engine, &mut sigs, "accounts.list", &[], None).await;
    assert_eq!(accounts.status, 200, "{}", accounts.pretty_body());
    let created = send(
        &engine,
        &mut sigs,
        "payments.instant.create",
        &[("allowLogicalDuplicate", "true")],
        None,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.pretty_body());
    let payment_id = created.json.as_ref().unwrap()["paymentId"]
        .as_str()
        .unwrap()
        .to_string();
    let clock = send(
        &engine,
        &mut sigs,
        "sandbox.clock.advance",
        &[],
        Some(r#"{"advanceSeconds": 7200}"#),
    )
    .await;
    assert_eq!(clock.status, 200, "{}", clock.pretty_body());
    engine.shutdown().await;
    let url = entries(&paths.history_file())
        .into_iter()
        .find(|e| e.operation_id == "payments.instant.create")
        .unwrap()
        .url;
    let path = url.split('?').next().unwrap();
    let product = path.rsplit('/').next().unwrap().to_string();
    Scenario {
        home,
        paths,
        psu_id,
        payment_id,
        product,
        signatures: sigs,
    }
}

/// The uncompressed tar stream of a bundle: every byte its members hold.
/// `case export --pseudonymize` of the scenario's session into `bundle`.
async fn export_pseudonymized(s: &Scenario, bundle: &Path) -> ExportReport {
    let options = ExportOptions {
        out: bundle.to_path_buf(),
        selection: Selection::Session,
        pseudonymize: true,
        force: false,
        profile: None,
    };
    export(&s.paths, &options).await.unwrap()
}

fn unpacked(bundle: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(bundle).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Asserts that no byte sequence of the profile's private key (PEM text, DER, each PEM line
/// and each 24-byte piece of the DER that is not also in the certificate: the modulus is in
/// both) nor of any Signature value sent (whole header, signature parameter) is in `bytes`.
fn assert_no_secrets(bytes: &[u8], key_file: &Path, cert_file: &Path, signatures: &[String]) {
    let key_pem = std::fs::read_to_string(key_file).unwrap();
    let der = pem::parse(&key_pem).unwrap().into_contents();
    let cert_pem = std::fs::read_to_string(cert_file).unwrap();
    let cert_der = pem::parse(&cert_pem).unwrap().into_contents();
    let cert_text = cert_pem.replace(['\n', '\r'], "");
    assert!(!contains(bytes, key_pem.as_bytes()));
    assert!(!contains(bytes, &der), "the key's DER is in the bundle");
    assert!(
        !contains(bytes, b"PRIVATE KEY"),
        "a PEM key label is in the bundle"
    );
    let lines: Vec<&str> = key_pem
        .lines()
        .filter(|l| !l.starts_with("-----") && !cert_text.contains(*l))
        .collect();
    assert!(lines.len() >= 10, "the key's private lines are checked");
    for line in lines {
        assert!(
            !contains(bytes, line.as_bytes()),
            "a key PEM line is in the bundle"
        );
    }
    let pieces: Vec<&[u8]> = der
        .chunks(24)
        .filter(|c| c.len() == 24 && !contains(&cert_der, c))
        .collect();
    assert!(pieces.len() >= 20, "the key's private bytes are checked");
    for piece in pieces {
        assert!(
            !contains(bytes, piece),
            "a piece of the key's DER is in the bundle"
        );
    }
    assert!(!signatures.is_empty());
    for s in signatures {
        let value = s
            .split("signature=\"")
            .nth(1)
            .unwrap()
            .trim_end_matches('"');
        assert!(value.len() > 40);
        assert!(
            !contains(bytes, s.as_bytes()),
            "a Signature header is in the bundle"
        );
        assert!(
            !contains(bytes, value.as_bytes()),
            "a signature value is in the bundle"
        );
    }
}

/// The entries of the history at `file`, oldest first, without their ids.
fn entries(file: &Path) -> Vec<HistoryEntry> {
    let h = History::open_existing(file).unwrap();
    let mut v = h.list(None, 1000).unwrap();
    v.reverse();
    v.into_iter().map(|e| HistoryEntry { id: 0, ..e }).collect()
}

fn one<T: rusqlite::types::FromSql>(db: &Path, sql: &str, p: &str) -> T {
    Connection::open(db)
        .unwrap()
        .query_row(sql, [p], |r| r.get(0))
        .unwrap()
}

/// The TPPs' own clock offsets (issue 20: each TPP moves its own clock; the case's TPP is
/// rekeyed to the new certificate, so the sums compare).
const OFFSET_SQL: &str = "SELECT COALESCE(SUM(offset_secs), 0) FROM tpp_clocks WHERE ?1 = ?1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_then_open_gives_the_same_history_and_sandbox_state_without_secrets() {
    let s = scenario().await;
    let bundle = s.home.path().join("case.tar.gz");
    let b = bundle.to_str().unwrap();
    let (code, out, err) = cli::run(s.home.path(), &["case", "export", "--out", b]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("4 exchange(s)"), "{out}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&bundle).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    // Never overwritten without --force.
    let (code, _, err) = cli::run(s.home.path(), &["case", "export", "--out", b, "last"]);
    assert_ne!(code, 0);
    assert!(err.contains("--force"), "{err}");

    let bytes = unpacked(&bundle);
    let key = s.paths.certs_dir().join("embedded-sandbox.key");
    let cert = s.paths.certs_dir().join("embedded-sandbox.pem");
    assert_no_secrets(&bytes, &key, &cert, &s.signatures);

    let read = Bundle::read(&bundle).unwrap();
    let m = &read.manifest;
    assert_eq!(m.profile, DEFAULT_PROFILE);
    assert_eq!(m.target, "embedded");
    let state = m.sandbox.as_ref().expect("the sandbox state");
    assert!(
        (7200..7260).contains(&state.clock_offset_seconds),
        "{state:?}"
    );
    let ops: Vec<&str> = m
        .exchanges
        .iter()
        .map(|e| e.operation_id.as_str())
        .collect();
    assert_eq!(
        ops,
        [
            "accounts.list",
            "accounts.list",
            "payments.instant.create",
            "sandbox.clock.advance"
        ]
    );
    let cert = read.certificate_pem.as_deref().unwrap();
    assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
    assert!(!cert.contains("PRIVATE KEY"));

    // Open into a new home; a non-empty one is refused without --force.
    let other = tempfile::tempdir().unwrap();
    let into = other.path().join("case-home");
    let into_s = into.to_str().unwrap();
    let (code, out, err) = cli::run(other.path(), &["case", "open", b, "--into", into_s]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "PSD2_CONSOLE_HOME='{into_s}' psd2-console --profile 'Case'"
        )),
        "{out}"
    );
    let (code, _, err) = cli::run(other.path(), &["case", "open", b, "--into", into_s]);
    assert_ne!(code, 0);
    assert!(err.contains("not empty"), "{err}");
    let (code, out, err) = cli::run(
        other.path(),
        &["case", "open", b, "--into", into_s, "--force"],
    );
    assert_eq!(code, 0, "{out}{err}");

    // `--case FILE` opens into a fresh home under the data directory; a file that is not a
    // bundle is refused before any console starts, and so is `--case` with a command.
    let fresh = psd2_console::case::open::open_fresh(&bundle, &other.path().join("data")).unwrap();
    assert!(
        fresh
            .home
            .starts_with(other.path().join("data").join("cases"))
    );
    assert_eq!(entries(&fresh.paths.history_file()).len(), 4);
    let junk = other.path().join("junk.tar.gz");
    std::fs::write(&junk, "not a bundle").unwrap();
    let (code, _, err) = cli::run(other.path(), &["--case", junk.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("is not a case bundle"), "{err}");
    let (code, _, err) = cli::run(other.path(), &["--case", b, "history"]);
    assert_ne!(code, 0);
    assert!(err.contains("without a command"), "{err}");

    // The same history, through the library and through `history` on the new home.
    let opened = Paths::under(into.clone());
    assert_eq!(
        entries(&opened.history_file()),
        entries(&s.paths.history_file())
    );
    let (code, listed, err) = cli::run(&into, &["history"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(listed.lines().count(), 4, "{listed}");
    assert!(listed.contains("payments.instant.create"), "{listed}");

    // The same sandbox state: the payment, the consent of the PSU, the clock offset.
    let live = s.paths.data.join("sandbox.sqlite3");
    let copy = opened.data.join("sandbox.sqlite3");
    let status_sql = "SELECT status FROM pis_payments WHERE id = ?1";
    assert_eq!(one::<String>(&copy, status_sql, &s.payment_id), "RCVD");
    let consent_sql = "SELECT COUNT(*) FROM consents WHERE psu_id = ?1";
    assert_eq!(one::<i64>(&copy, consent_sql, &s.psu_id), 1);
    assert_eq!(
        one::<i64>(&copy, OFFSET_SQL, ""),
        one::<i64>(&live, OFFSET_SQL, "")
    );

    // The console on the case: the new certificate owns the exported TPP's payment and
    // consent, the session carries the PSU-ID, and the sandbox answers as the exported one
    // does (same state, same clock).
    let status_params = [
        ("payment-service", "payments"),
        ("payment-product", s.product.as_str()),
        ("payment-id", s.payment_id.as_str()),
    ];
    let profile = ProfileSet::load(Some(&opened.profiles_dir()))
        .get("Case")
        .cloned()
        .expect("the case profile");
    let engine = start_engine(crate::common::any_ports(profile), opened.clone())
        .await
        .unwrap();
    assert_eq!(engine.session.psu_id.as_deref(), Some(s.psu_id.as_str()));
    let mut sigs = Vec::new();
    let st = send(&engine, &mut sigs, "payments.status", &status_params, None).await;
    assert_eq!(st.status, 200, "{}", st.pretty_body());
    let accounts = send(&engine, &mut sigs, "accounts.list", &[], None).await;
    engine.shutdown().await;

    let profile = ProfileSet::load(None).get(DEFAULT_PROFILE).unwrap().clone();
    let engine = start_engine(crate::common::any_ports(profile), s.paths.clone())
        .await
        .unwrap();
    let live_st = send(&engine, &mut sigs, "payments.status", &status_params, None).await;
    assert_eq!(live_st.status, 200, "{}", live_st.pretty_body());
    let live_accounts = send(&engine, &mut sigs, "accounts.list", &[], None).await;
    engine.shutdown().await;
    assert_eq!(
        st.json.as_ref().unwrap()["transactionStatus"],
        live_st.json.as_ref().unwrap()["transactionStatus"]
    );
    // The session's SCA is 2 sandbox hours old on both: the same answer (consent found,
    // SCA session over), not "no consent" for an unknown TPP.
    let code = |e: &psd2_console::client::Exchange| {
        e.json.as_ref().unwrap()["tppMessages"][0]["code"].clone()
    };
    assert_eq!(
        accounts.status,
        live_accounts.status,
        "{}",
        accounts.pretty_body()
    );
    assert_eq!(code(&accounts), code(&live_accounts));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pseudonymized_bundles_replace_psu_values_consistently_and_leave_the_live_state_alone() {
    let s = scenario().await;
    let bundle = s.home.path().join("pseudo.tar.gz");
    let report = export_pseudonymized(&s, &bundle).await;
    assert!(report.manifest.pseudonymized);
    assert!(report.pseudonyms >= 3, "{}", report.summary());

    let bytes = unpacked(&bundle);
    assert!(
        !contains(&bytes, s.psu_id.as_bytes()),
        "the PSU-ID is in the bundle"
    );
    assert!(
        !contains(&bytes, KARI.as_bytes()),
        "Kari's customer number is in the bundle"
    );
    let key = s.paths.certs_dir().join("embedded-sandbox.key");
    let cert = s.paths.certs_dir().join("embedded-sandbox.pem");
    assert_no_secrets(&bytes, &key, &cert, &s.signatures);

    // The pseudonym of the PSU-ID is one UUID in every exchange and in the sandbox state.
    let read = Bundle::read(&bundle).unwrap();
    let sent: Vec<&str> = read
        .exchanges
        .iter()
        .flat_map(|e| &e.request.headers)
        .filter(|(n, _)| n.eq_ignore_ascii_case("PSU-ID"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert!(sent.len() >= 2, "{sent:?}");
    assert!(sent.iter().all(|v| *v == sent[0]), "{sent:?}");
    let pseudonym = sent[0];
    assert!(uuid::Uuid::parse_str(pseudonym).is_ok());
    assert_ne!(pseudonym, s.psu_id);
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snap.sqlite3");
    std::fs::write(&snap, read.snapshot.as_ref().unwrap()).unwrap();
    let consent_sql = "SELECT COUNT(*) FROM consents WHERE psu_id = ?1";
    assert_eq!(one::<i64>(&snap, consent_sql, pseudonym), 1);
    assert_eq!(one::<i64>(&snap, consent_sql, &s.psu_id), 0);
    let number_sql = "SELECT COUNT(*) FROM customers WHERE number = ?1";
    assert_eq!(one::<i64>(&snap, number_sql, KARI), 0);
    let status_sql = "SELECT status FROM pis_payments WHERE id = ?1";
    assert_eq!(one::<String>(&snap, status_sql, &s.payment_id), "RCVD");

    // The live history and sandbox still hold the real values.
    let live = s.paths.data.join("sandbox.sqlite3");
    assert_eq!(one::<i64>(&live, consent_sql, &s.psu_id), 1);
    assert_eq!(one::<i64>(&live, number_sql, KARI), 1);
    let real = entries(&s.paths.history_file());
    assert!(
        real.iter()
            .any(|e| e.request_headers.iter().any(|(_, v)| v == &s.psu_id))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_sandbox_gives_its_snapshot_to_signed_requests_and_the_export_takes_it() {
    let sb = common::sandbox::TestSandbox::start().await;
    let (payment_id, _) = sb
        .create_payment(
            common::payments::DOMESTIC,
            &common::payments::domestic(&common::payments::first_bban(KARI), "10.00", "case"),
        )
        .await;
    let reply = sb.get("/v1/sandbox/snapshot").await;
    reply.assert_status(200);
    assert!(reply.body.starts_with(b"SQLite format 3\0"));
    assert_eq!(reply.headers["content-type"], "application/vnd.sqlite3");
    let unsigned = reqwest::get(format!("{}/v1/sandbox/snapshot", sb.base))
        .await
        .unwrap();
    assert!(
        unsigned.status().is_client_error(),
        "an unsigned request gets no state"
    );
    let body = unsigned.bytes().await.unwrap();
    assert!(!body.starts_with(b"SQLite format 3"));

    // A profile on that sandbox, with certificate files; one exchange in its history.
    let (home, paths) = crate::common::temp_home();
    let certs = home.path().join("certs");
    let set = psd2_console::cert::generate::write_set(
        &certs,
        "tpp",
        &psd2_console::cert::generate::TppCertSpec::default(),
    )
    .unwrap();
    std::fs::create_dir_all(paths.profiles_dir()).unwrap();
    std::fs::write(
        paths.profiles_dir().join("local.toml"),
        format!(
            "name = \"Local\"\ntarget = \"{}\"\ncertificate = \"{}\"\nkey = \"{}\"\n",
            sb.base,
            set.tpp_cert.display(),
            set.tpp_key.display()
        ),
    )
    .unwrap();
    let profile = ProfileSet::load(Some(&paths.profiles_dir()))
        .get("Local")
        .cloned()
        .unwrap();
    let engine = start_engine(crate::common::any_ports(profile), paths.clone())
        .await
        .unwrap();
    let mut sigs = Vec::new();
    let customers = send(&engine, &mut sigs, "sandbox.customers.list", &[], None).await;
    assert_eq!(customers.status, 200);
    engine.shutdown().await;

    let bundle = home.path().join("local.tar.gz");
    let report = export(
        &paths,
        &ExportOptions {
            out: bundle.clone(),
            selection: Selection::Last,
            pseudonymize: false,
            force: false,
            profile: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(report.manifest.target, sb.base);
    let read = Bundle::read(&bundle).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snap.sqlite3");
    std::fs::write(&snap, read.snapshot.as_ref().expect("the served state")).unwrap();
    let status_sql = "SELECT status FROM pis_payments WHERE id = ?1";
    assert_eq!(one::<String>(&snap, status_sql, &payment_id), "RCVD");
    assert_no_secrets(&unpacked(&bundle), &set.tpp_key, &set.tpp_cert, &sigs);
    // The snapshot is a SQLite file, not a Berlin Group JSON body: the schema check's only
    // complaints are about it.
    sb.violations
        .lock()
        .unwrap()
        .retain(|v| !v.starts_with("GET /v1/sandbox/snapshot -> 200"));
}

/// Issue 20 finding 3: the snapshot follows the socket's peer address, not the public URL:
/// a client on the sandbox's machine gets it even from a sandbox whose links name a public
/// host (a non-loopback peer is refused whatever the public URL says:
/// `tenancy::state_and_snapshot_follow_the_peer_address_and_the_operator_token`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_gives_its_snapshot_by_the_peer_address_not_the_public_url() {
    let sb = common::sandbox::TestSandbox::start_with(psd2_console::sandbox::SandboxConfig {
        public_url: Some("https://sandbox.example".into()),
        ..psd2_console::sandbox::SandboxConfig::default()
    })
    .await;
    let reply = sb.get("/v1/sandbox/snapshot").await;
    reply.assert_status(200);
    assert!(reply.body.starts_with(b"SQLite format 3"));
    // The snapshot is a SQLite file, not a Berlin Group JSON body.
    sb.violations
        .lock()
        .unwrap()
        .retain(|v| !v.starts_with("GET /v1/sandbox/snapshot -> 200"));
}

/// Issue 18, defect 15: `--pseudonymize` also replaces the customers' names (`ownerName`,
/// names inside account names), the account names and the BBANs, in the exchanges, the HAR
/// and the sandbox state alike (one BBAN, one pseudonym everywhere), and the manifest says
/// which kinds of values were replaced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pseudonymized_bundles_hide_names_account_names_and_bbans_consistently() {
    let s = scenario().await;
    let live = s.paths.data.join("sandbox.sqlite3");
    let conn = Connection::open(&live).unwrap();
    let mut st = conn
        .prepare(
            "SELECT a.bban, a.name, c.name FROM accounts a JOIN customers c ON a.owner = c.id \
             WHERE c.number = ?1 ORDER BY a.seq",
        )
        .unwrap();
    let kari: Vec<(String, String, String)> = st
        .query_map([KARI], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    drop(st);
    drop(conn);
    assert!(!kari.is_empty());
    let (bban, account_name, customer_name) = kari[0].clone();
    // The exchanges carry them (the accounts list), so the test is not empty.
    let history = entries(&s.paths.history_file());
    assert!(
        history
            .iter()
            .any(|e| contains(&e.response_body, bban.as_bytes())),
        "the accounts list carries the BBAN"
    );

    let bundle = s.home.path().join("pseudo-names.tar.gz");
    let report = export_pseudonymized(&s, &bundle).await;
    let bytes = unpacked(&bundle);
    for (b, a, c) in &kari {
        assert!(!contains(&bytes, b.as_bytes()), "BBAN {b} is in the bundle");
        assert!(
            !contains(&bytes, a.as_bytes()),
            "account name {a:?} is in the bundle"
        );
        assert!(
            !contains(&bytes, c.as_bytes()),
            "name {c:?} is in the bundle"
        );
    }
    let surname = customer_name.split_whitespace().last().unwrap();
    assert!(
        !contains(&bytes, surname.as_bytes()),
        "{surname:?} is in the bundle"
    );
    let kinds = &report.manifest.pseudonymized_kinds;
    for k in ["PSU-ID", "customerNumber", "account names", "BBAN"] {
        assert!(kinds.iter().any(|x| x == k), "{k} not in {kinds:?}");
    }
    assert!(kinds.iter().any(|x| x.starts_with("names")), "{kinds:?}");
    let read = Bundle::read(&bundle).unwrap();
    assert_eq!(read.manifest.pseudonymized_kinds, *kinds);

    // One pseudonym per BBAN: the accounts list's BBANs are the snapshot's accounts.
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snap.sqlite3");
    std::fs::write(&snap, read.snapshot.as_ref().unwrap()).unwrap();
    let listed: Vec<String> = read
        .exchanges
        .iter()
        .filter_map(|e| {
            serde_json::from_slice::<serde_json::Value>(&e.response.body.bytes().unwrap()).ok()
        })
        .filter_map(|j| j["accounts"].as_array().cloned())
        .flatten()
        .filter_map(|a| a["bban"].as_str().map(str::to_string))
        .collect();
    assert!(!listed.is_empty(), "the bundle's accounts list has BBANs");
    for b in &listed {
        assert!(
            psd2_console::xs2a::check_digits::is_norwegian_bban(b),
            "{b} keeps the BBAN shape"
        );
        let sql = "SELECT COUNT(*) FROM accounts WHERE bban = ?1";
        assert_eq!(one::<i64>(&snap, sql, b), 1, "{b} is not in the snapshot");
    }
    // The owner's name inside the account name is replaced; the product word stays.
    let renamed: String = Connection::open(&snap)
        .unwrap()
        .query_row(
            "SELECT name FROM accounts WHERE bban = ?1",
            [&listed[0]],
            |r| r.get(0),
        )
        .unwrap();
    let first_word = |n: &str| n.split_whitespace().next().unwrap().to_string();
    assert!(
        kari.iter()
            .any(|(_, a, _)| first_word(a) == first_word(&renamed)),
        "{renamed} keeps the product word of one of {kari:?}"
    );
    assert!(!kari.iter().any(|(_, a, _)| *a == renamed), "{renamed}");
    assert!(!account_name.is_empty());
    // The live state keeps the real values.
    assert_eq!(
        one::<i64>(
            &live,
            "SELECT COUNT(*) FROM accounts WHERE bban = ?1",
            &bban
        ),
        1
    );
}

/// Issue 18, defect 13: `case open --into casedir` (relative) prints the absolute home in
/// its command line.
#[test]
fn case_open_into_a_relative_directory_prints_an_absolute_home() {
    use psd2_console::case::bundle::{FORMAT, Manifest, VERSION};
    let work = tempfile::tempdir().unwrap();
    let bundle = work.path().join("empty.tar.gz");
    Bundle {
        manifest: Manifest {
            format: FORMAT.into(),
            version: VERSION,
            created_at: "2026-01-01T00:00:00Z".into(),
            console_version: "0".into(),
            profile: "Embedded sandbox".into(),
            target: "embedded".into(),
            sandbox: None,
            sandbox_note: Some("none".into()),
            pseudonymized: false,
            pseudonymized_kinds: Vec::new(),
            certificate: None,
            exchanges: Vec::new(),
        },
        exchanges: Vec::new(),
        har: None,
        certificate_pem: None,
        snapshot: None,
    }
    .write(&bundle, false)
    .unwrap();
    let out = std::process::Command::new(cli::BIN)
        .current_dir(work.path())
        .env("PSD2_CONSOLE_HOME", work.path().join("home"))
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .args(["case", "open", "empty.tar.gz", "--into", "casedir"])
        .output()
        .unwrap();
    let (code, out, err) = cli::outcome(out);
    assert_eq!(code, 0, "{err}");
    let abs = std::fs::canonicalize(work.path()).unwrap().join("casedir");
    let printed = format!("{out}{err}");
    let line = printed
        .lines()
        .find(|l| l.contains("PSD2_CONSOLE_HOME="))
        .unwrap_or_else(|| panic!("no command line in {printed}"));
    let quoted = line
        .split("PSD2_CONSOLE_HOME=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .trim_matches('\'');
    assert!(Path::new(quoted).is_absolute(), "{line}");
    assert_eq!(std::fs::canonicalize(quoted).unwrap(), abs, "{line}");
}

/// A gzip file whose tar holds `members` (name, bytes) and then `big` named member of
/// `big_len` zero bytes, written without ever holding those zeros: raw deflate pieces, each
/// ending at a full flush (so they can be joined), one of 1 MiB of zeros repeated.
fn bundle_with_zeros(members: &[(&str, Vec<u8>)], big: &str, big_len: u64) -> Vec<u8> {
    use flate2::{Compress, Compression, Crc, FlushCompress};
    fn header(name: &str, size: u64) -> Vec<u8> {
        let mut h = tar::Header::new_gnu();
        h.set_path(name).unwrap();
        h.set_size(size);
        h.set_mode(0o600);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        h.as_bytes().to_vec()
    }
    fn deflate(data: &[u8], flush: FlushCompress) -> Vec<u8> {
        let mut c = Compress::new(Compression::best(), false);
        let mut out = Vec::with_capacity(data.len() + 1024);
        c.compress_vec(data, &mut out, flush).unwrap();
        assert_eq!(c.total_in(), data.len() as u64);
        out
    }
    let mut prefix = Vec::new();
    for (name, bytes) in members {
        prefix.extend(header(name, bytes.len() as u64));
        prefix.extend(bytes);
        prefix.resize(prefix.len().div_ceil(512) * 512, 0);
    }
    prefix.extend(header(big, big_len));
    const CHUNK: u64 = 1 << 20;
    assert_eq!(big_len % CHUNK, 0);
    // After the member: its (no) padding and the end-of-archive blocks, zeros too.
    let tail = vec![0u8; 1024];
    let zeros = vec![0u8; CHUNK as usize];
    let chunk = deflate(&zeros, FlushCompress::Full);
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(deflate(&prefix, FlushCompress::Full));
    let mut crc = Crc::new();
    crc.update(&prefix);
    let mut chunk_crc = Crc::new();
    chunk_crc.update(&zeros);
    for _ in 0..big_len / CHUNK {
        out.extend(&chunk);
        crc.combine(&chunk_crc);
    }
    out.extend(deflate(&tail, FlushCompress::Finish));
    crc.update(&tail);
    out.extend(crc.sum().to_le_bytes());
    let total = prefix.len() as u64 + big_len + tail.len() as u64;
    out.extend(((total & 0xffff_ffff) as u32).to_le_bytes());
    out
}

/// Issue 18, defect 14: a ~1 MB bundle whose snapshot member unpacks to 1 GiB of zeros is
/// refused at once, naming the member as too big, without reading it into memory.
#[test]
fn a_bundle_member_of_a_gibibyte_is_refused_by_name_before_it_is_read() {
    use psd2_console::case::bundle::{FORMAT, VERSION};
    let manifest = serde_json::json!({
        "format": FORMAT, "version": VERSION, "createdAt": "2026-01-01T00:00:00Z",
        "consoleVersion": "0", "profile": "p", "target": "embedded",
        "sandbox": {"snapshot": "sandbox.sqlite3", "clockOffsetSeconds": 0, "now": "2026-01-01T00:00:00Z"},
        "pseudonymized": false, "exchanges": []
    });
    let gz = bundle_with_zeros(
        &[
            ("manifest.json", serde_json::to_vec(&manifest).unwrap()),
            ("exchanges.json", b"[]".to_vec()),
        ],
        "sandbox.sqlite3",
        1 << 30,
    );
    assert!(gz.len() < 2 << 20, "a small file: {} bytes", gz.len());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bomb.tar.gz");
    std::fs::write(&file, &gz).unwrap();
    let e = Bundle::read(&file).unwrap_err().to_string();
    assert!(e.contains("member sandbox.sqlite3 is too big"), "{e}");
    assert!(e.contains("1073741824 bytes"), "{e}");
    assert!(!e.contains("unexpected EOF"), "{e}");

    // The same stream with a small member reads (the builder makes real bundles).
    let ok = bundle_with_zeros(
        &[
            ("manifest.json", serde_json::to_vec(&manifest).unwrap()),
            ("exchanges.json", b"[]".to_vec()),
        ],
        "sandbox.sqlite3",
        1 << 20,
    );
    std::fs::write(&file, &ok).unwrap();
    let b = Bundle::read(&file).unwrap();
    assert_eq!(b.snapshot.map(|s| s.len()), Some(1 << 20));
}
