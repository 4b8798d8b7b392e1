//! The sandbox's PostgreSQL back end (issue 21): the test cluster harness
//! ([`crate::common::pg`]) and the store against PostgreSQL.

use crate::common::pg::PgCluster;

/// `on_postgres!(module: test, ..)`: a module `pg_store::module` whose tests run the SQLite
/// tests `crate::module::test` with their sandbox's state in a new PostgreSQL database of the
/// shared test cluster ([`crate::common::sandbox::on_postgres`]).
macro_rules! on_postgres {
    ($module:ident: $($test:ident),+ $(,)?) => {
        mod $module {
            $(
                #[test]
                fn $test() {
                    crate::common::sandbox::on_postgres(crate::$module::$test);
                }
            )+
        }
    };
}

// The representative set of issue 21: consent + SCA + accounts, payments, baskets, faults,
// tenancy, management and the state's initialization.
on_postgres!(sandbox_flow: main_flow_sca_then_accounts_balances_transactions, corporate_context_uses_the_agreement, same_sca_twice_gives_the_same_psu_id_and_preselects_the_consent, authorisations_and_consents_expire_with_the_sandbox_clock);
on_postgres!(sandbox_ais: accounts_have_short_names_iso_cash_account_types_and_balances_in_their_currency, booked_transaction_ids_are_stable_across_calls_and_clock_advances, card_accounts_outside_the_consent_need_sca, bank_offered_consents_answers_201_with_an_sca_redirect);
on_postgres!(sandbox_payments: initiation_answers_201_rcvd_with_absolute_sca_redirect_self_and_status_links, logical_duplicate_is_rejected_unless_allow_logical_duplicate_is_true, malformed_bodies_get_berlin_group_errors_never_500, x_psu_identity_creates_the_psu_id_sca_gives_and_is_idempotent);
on_postgres!(sandbox_baskets: a_basket_answers_201_rcvd_with_sca_redirect_and_links_with_verbs, the_basket_sca_authorises_every_payment_in_it, rejecting_the_basket_sca_rejects_its_payments, the_basket_status_is_the_worst_case_over_its_payments);
on_postgres!(faults: injected_503_answers_twice_is_marked_in_the_event_stream_then_normal_answers_resume, payment_override_rejects_the_next_payment_only, payment_overrides_insufficient_funds_and_hold_past_a_batch_run, sca_fail_outcome_fails_the_payment_sca_with_the_given_code, rules_are_listed_deleted_one_by_one_and_never_answer_their_own_routes);
on_postgres!(tenancy: clock_faults_reset_and_customers_are_each_tpps_own, a_second_tpp_cannot_reach_another_tpps_sca_page, another_tpps_created_customer_is_neither_listed_nor_accepted_at_my_sca_login, another_tpps_payment_is_not_a_logical_duplicate_of_mine);
on_postgres!(sandbox_manage: created_customer_gets_default_accounts_like_the_seed_and_is_listed, deleting_a_customer_drops_its_accounts_and_consents, created_transactions_are_listed_booked_or_pending_with_stable_ids, balance_update_sets_what_the_balance_endpoint_returns, agreement_grants_a_private_customer_the_corporate_context);
on_postgres!(sandbox_state: a_new_database_is_seeded_with_the_known_state, concurrent_customer_creations_neither_lose_nor_duplicate_rows, the_state_is_paginated_with_totals_and_next_links_per_list);

/// The harness starts a private cluster (as `nobody` when run as root) and hands out empty
/// databases reachable over loopback TCP; skipped where PostgreSQL is absent (never in CI).
#[test]
fn the_harness_starts_a_private_cluster_and_hands_out_databases() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let a = cluster.database();
    let b = cluster.database();
    assert_ne!(a, b);
    assert!(a.starts_with("postgres://psd2@127.0.0.1:"), "{a}");
    let tcp = std::net::TcpStream::connect(("127.0.0.1", cluster.port));
    assert!(
        tcp.is_ok(),
        "the cluster listens on 127.0.0.1:{}",
        cluster.port
    );
}

/// A test process that ends without dropping its cluster (the last handle kept until
/// `exit`, as an abort or a kill would leave it) does not leave the server running: the
/// cluster's watcher stops it. The test runs itself as that process.
#[test]
fn a_cluster_is_stopped_when_its_test_process_ends_without_dropping_it() {
    const CHILD: &str = "PSD2_TEST_PG_ABANDONED_CLUSTER";
    if std::env::var_os(CHILD).is_some() {
        let Some(cluster) = PgCluster::get() else {
            std::process::exit(3);
        };
        // On the line of libtest's "test … ..." (printed without its newline).
        println!("POSTMASTER {}", cluster.postmaster_pid().unwrap_or(0));
        std::process::exit(0);
    }
    if crate::common::pg::pg_bin_dir().is_none() && !crate::common::pg::postgres_required() {
        return;
    }
    let name = "pg_store::a_cluster_is_stopped_when_its_test_process_ends_without_dropping_it";
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let pid: u32 = stdout
        .lines()
        .find_map(|l| l.split("POSTMASTER ").nth(1))
        .and_then(|p| p.trim().parse().ok())
        .filter(|p| *p > 0)
        .unwrap_or_else(|| {
            panic!(
                "the child started no cluster: {stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    // Not a speed check: the deadline only turns a server that is never stopped into a
    // failure instead of a hang.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the postmaster {pid} still runs 60 s after its test process ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `psd2-console sandbox serve --db postgres://…` (the real binary) keeps its state in
/// PostgreSQL and serves a consent (SCA, then the accounts) and a payment (SCA, then its
/// status); `/ready` names the database; the state is still there after a restart.
#[tokio::test(flavor = "multi_thread")]
async fn sandbox_serve_on_postgres_serves_a_consent_and_a_payment() {
    use crate::common::cli::{BIN, Server, free_port, wait_listening};
    use crate::common::payments::{DOMESTIC, KARI};
    use crate::common::sandbox::TestSandbox;
    use crate::common::sca::{callback_of, complete_sca, sca_decide, success};
    use psd2_console::xs2a::redirect::ScaCallback;
    use std::process::{Command, Stdio};
    use std::sync::{Arc, Mutex};

    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let url = cluster.database();
    let serve = move |port: u16| {
        let child = Command::new(BIN)
            .env("PSD2_CONSOLE_FREE_PORTS", "1")
            .args(["sandbox", "serve", "--db", &url, "--addr"])
            .arg(format!("127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Server(child);
        wait_listening(port, std::time::Duration::from_secs(60));
        server
    };
    let port = free_port();
    let first = serve.clone();
    let server = tokio::task::spawn_blocking(move || first(port))
        .await
        .unwrap();
    let sb = TestSandbox {
        handle: None,
        base: format!("http://127.0.0.1:{port}"),
        clock: psd2_console::sandbox::Clock::system(),
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        violations: Arc::new(Mutex::new(Vec::new())),
        seen: Arc::new(Mutex::new(0)),
    };

    let ready: serde_json::Value = reqwest::get(format!("{}/ready", sb.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ready["status"], "READY", "{ready}");
    assert_eq!(ready["database"], "postgresql", "{ready}");

    // A consent: 401 with an scaRedirect, the SCA as Kari, then the accounts.
    let r = sb
        .get_with("/v1/accounts", &[("TPP-Session-ID", "pg-session")])
        .await;
    r.assert_error(401, "CONSENT_INVALID");
    let ok = success(&complete_sca(r.sca_redirect().unwrap(), KARI).await);
    let accounts = sb
        .get_with(
            "/v1/accounts",
            &[
                ("PSU-ID", &ok.psu_id),
                ("TPP-Session-ID", &ok.tpp_session_id),
            ],
        )
        .await;
    accounts.assert_status(200);
    assert!(!accounts.json["accounts"].as_array().unwrap().is_empty());

    // A payment: 201 RCVD, the SCA approved, then a status past RCVD.
    let (id, sca) = crate::common::payments::kari_pays(&sb, DOMESTIC, "12.00", "PG").await;
    let ScaCallback::Success(_) = callback_of(&sca_decide(&sca, KARI, "Approve").await) else {
        panic!("the payment SCA did not succeed");
    };
    let status = sb
        .get_ok(&format!("/v1/payments/{DOMESTIC}/{id}/status"))
        .await;
    assert_ne!(status.json["transactionStatus"], "RCVD", "{}", status.text);
    drop(sb);
    drop(server);

    // The state is PostgreSQL's: a new process serves the same payment.
    let port = free_port();
    let _server = tokio::task::spawn_blocking(move || serve(port))
        .await
        .unwrap();
    let sb = TestSandbox {
        handle: None,
        base: format!("http://127.0.0.1:{port}"),
        clock: psd2_console::sandbox::Clock::system(),
        http: reqwest::Client::new(),
        violations: Arc::new(Mutex::new(Vec::new())),
        seen: Arc::new(Mutex::new(0)),
    };
    let again = sb.get_ok(&format!("/v1/payments/{DOMESTIC}/{id}")).await;
    assert_eq!(
        again.json["instructedAmount"]["amount"], "12.00",
        "{}",
        again.text
    );
}

/// Two `sandbox serve` processes started together on one new PostgreSQL database (issue 21,
/// first multi-instance step) migrate and seed it once; a consent whose SCA ran on A is read through B; a payment created through A is
/// authorised with its login page on B and its decision posted to A (the browser binding
/// and the step tokens hold across instances), and its status read through B.
#[tokio::test(flavor = "multi_thread")]
async fn two_instances_on_one_database_share_consents_payments_and_sca_pages() {
    use crate::common::browser;
    use crate::common::payments::{DOMESTIC, KARI, kari_pays};
    use crate::common::sca::{callback_of, complete_sca, form_on, sca_login, success};
    use psd2_console::xs2a::redirect::ScaCallback;

    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let url = cluster.database();
    // Both start at once on the new database: the migrations and the seed are applied once
    // (under the write lock), and both become ready.
    let start = |url: String| {
        tokio::task::spawn_blocking(move || crate::common::cli::serve_with(&["--db", &url]))
    };
    let (first, second) = tokio::join!(start(url.clone()), start(url.clone()));
    let ((a_server, a_base), (b_server, b_base)) = (first.unwrap(), second.unwrap());
    let (a, b) = (
        crate::common::sandbox::TestSandbox::remote(&a_base),
        crate::common::sandbox::TestSandbox::remote(&b_base),
    );
    for base in [&a_base, &b_base] {
        let ready: serde_json::Value = reqwest::get(format!("{base}/ready"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(ready["database"], "postgresql", "{ready}");
    }
    assert_eq!(
        a.customers().await,
        b.customers().await,
        "one seed, seen by both"
    );

    // A consent: the SCA on A, the accounts through B.
    let r = a
        .get_with("/v1/accounts", &[("TPP-Session-ID", "two-instances")])
        .await;
    r.assert_error(401, "CONSENT_INVALID");
    let ok = success(&complete_sca(r.sca_redirect().unwrap(), KARI).await);
    let psu = [
        ("PSU-ID", ok.psu_id.as_str()),
        ("TPP-Session-ID", ok.tpp_session_id.as_str()),
    ];
    let via_b = b.get_with("/v1/accounts", &psu).await;
    via_b.assert_status(200);
    let via_a = a.get_with("/v1/accounts", &psu).await;
    assert_eq!(via_a.json, via_b.json, "both instances read one state");
    // B remembers the balances it answered; a change through A is what B answers next.
    let account = via_b.first_resource_id("accounts");
    let balances = format!("/v1/accounts/{account}/balances");
    let before = b.get_with(&balances, &psu).await;
    before.assert_status(200);
    assert_eq!(b.get_with(&balances, &psu).await.json, before.json);
    a.set_balances(&format!("accounts/{account}"), "1234.56", "1000.00")
        .await;
    let after = b.get_with(&balances, &psu).await;
    after.assert_status(200);
    assert!(
        after.text.contains("1234.56"),
        "B answers A's change: {}",
        after.text
    );

    // A payment through A; its SCA login on B, the decision posted to A.
    let (id, sca) = kari_pays(&a, DOMESTIC, "7.00", "two instances").await;
    let on_b = sca.replacen(&a_base, &b_base, 1);
    assert_ne!(on_b, sca);
    let mut decision = form_on(sca_login(&on_b, KARI).await, "/decision").await;
    assert!(decision.action.starts_with(&b_base), "{}", decision.action);
    decision.action = decision.action.replacen(&b_base, &a_base, 1);
    let done = decision.submit(&browser(), "Approve").await;
    let ScaCallback::Success(_) = callback_of(&done) else {
        panic!("the payment SCA across instances did not succeed");
    };
    let status = b
        .get_ok(&format!("/v1/payments/{DOMESTIC}/{id}/status"))
        .await;
    assert_ne!(status.json["transactionStatus"], "RCVD", "{}", status.text);
    drop((a_server, b_server));
}

/// `sandbox serve --db postgres://user:password@…` that cannot reach its database ends with
/// an error naming the database without the password (needs no PostgreSQL: nothing listens
/// on the port).
#[test]
fn an_unreachable_postgres_url_fails_without_showing_its_password() {
    let port = crate::common::cli::free_port();
    let out = std::process::Command::new(crate::common::cli::BIN)
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .args(["sandbox", "serve", "--addr", "127.0.0.1:0", "--db"])
        .arg(format!(
            "postgres://sandbox:hunter2-secret@127.0.0.1:{port}/state"
        ))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("hunter2-secret"), "{text}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
}

/// On PostgreSQL there is no state file: `GET /v1/sandbox/snapshot` answers 503
/// `SERVICE_BLOCKED` naming `pg_dump` (the SQLite answer is `case::` and `tenancy::`'s).
#[test]
fn the_snapshot_on_postgres_answers_503_naming_pg_dump() {
    crate::common::sandbox::on_postgres(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let sb = crate::common::sandbox::TestSandbox::start().await;
                let r = sb.get("/v1/sandbox/snapshot").await;
                r.assert_error(503, "SERVICE_BLOCKED");
                assert!(r.text.contains("pg_dump"), "{}", r.text);
            });
    });
}
