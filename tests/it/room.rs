//! Stable addresses and room mode (issue 12, items 1 and 2): the embedded sandbox and the
//! SCA callback listener on fixed, configurable ports (`sandbox_port`, `callback_port`) so
//! links survive a restart; a taken port named with the field to change; and `listen`
//! (`--listen`) moving both, and the links, to another address. 127.0.0.2, an address of the
//! loopback range, stands in for a LAN address.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use crate::common::cli::free_port;
use crate::common::payments::KARI;
use crate::common::tui::{Drive, status};
use crate::common::{self, browser};
use psd2_console::client::Engine;
use psd2_console::embedded::start_engine;
use psd2_console::profile::{DEFAULT_PROFILE, Paths, Profile, ProfileSet};
use psd2_console::tui::{App, StatusInfo};
use psd2_console::xs2a::operations;
use psd2_console::xs2a::redirect::ScaCallback;

const ROOM: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// The built-in embedded profile on these ports and listen address.
fn embedded(sandbox_port: u16, callback_port: u16, listen: Option<IpAddr>) -> Profile {
    Profile {
        sandbox_port: Some(sandbox_port),
        callback_port: Some(callback_port),
        listen,
        ..ProfileSet::load(None).get(DEFAULT_PROFILE).unwrap().clone()
    }
}

/// Whether something accepts TCP connections at `addr`.
async fn listening(addr: SocketAddr) -> bool {
    tokio::net::TcpStream::connect(addr).await.is_ok()
}

/// Sends List accounts; returns its status and the scaRedirect, if any.
async fn list_accounts(engine: &Engine) -> (u16, Option<String>) {
    let list = operations::find("accounts.list").unwrap();
    let ex = engine
        .send(&engine.prepare(list, &[], None).unwrap())
        .await
        .unwrap();
    (ex.status, ex.sca_redirect())
}

/// Completes the SCA at `href` as KARI, follows the redirect to the console's listener
/// (which must take it), applies the callback and lists the accounts: 200.
async fn finish_sca(engine: &mut Engine, href: &str) {
    let to_tpp =
        common::sca::complete(href, KARI, "PRIVATE", common::sca::tick_all, "Approve").await;
    assert!(
        to_tpp.starts_with(&engine.redirect_uri),
        "{to_tpp} is not on {}",
        engine.redirect_uri
    );
    let landing = browser().get(&to_tpp).send().await.unwrap();
    assert_eq!(landing.status(), 200);
    assert!(landing.text().await.unwrap().contains("SCA complete"));
    let cb = engine.next_callback().await.unwrap();
    assert!(matches!(cb, ScaCallback::Success(_)), "{cb:?}");
    engine.apply_callback(&cb).unwrap();
    assert_eq!(list_accounts(engine).await.0, 200);
}

#[tokio::test]
async fn the_sandbox_and_listener_come_back_on_the_same_ports_and_an_old_sca_link_works() {
    let (_home, paths) = crate::common::temp_home();
    let (sandbox_port, callback_port) = (free_port(), free_port());
    let profile = embedded(sandbox_port, callback_port, None);
    let engine = start_engine(profile.clone(), paths.clone()).await.unwrap();
    assert_eq!(engine.listener_error, None);
    assert_eq!(engine.base_url, format!("http://127.0.0.1:{sandbox_port}"));
    assert_eq!(
        engine.redirect_uri,
        format!("http://127.0.0.1:{callback_port}/callback")
    );
    let (status, sca) = list_accounts(&engine).await;
    assert_eq!(status, 401);
    let sca = sca.expect("a scaRedirect");
    assert!(sca.starts_with(&format!("{}/", engine.base_url)), "{sca}");
    let (base_url, redirect_uri) = (engine.base_url.clone(), engine.redirect_uri.clone());

    engine.shutdown().await;
    let sandbox_addr = SocketAddr::from(([127, 0, 0, 1], sandbox_port));
    assert!(!listening(sandbox_addr).await, "the sandbox still listens");

    let mut engine = start_engine(profile, paths).await.unwrap();
    assert_eq!(engine.listener_error, None);
    assert_eq!(engine.base_url, base_url);
    assert_eq!(engine.redirect_uri, redirect_uri);
    // The restarted console waits for that flow again (its TPP-Session-ID is the session's,
    // kept in the session file); the link made before the restart opens, completes, and
    // comes back to the same callback address.
    engine.expect_sca_at(&format!("{base_url}/v1/accounts"), None, &sca);
    finish_sca(&mut engine, &sca).await;
    engine.shutdown().await;
}

#[tokio::test]
async fn a_taken_port_is_an_error_naming_the_field_to_change() {
    let (_home, paths) = crate::common::temp_home();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();

    // The sandbox's port: the engine does not start, and says which field to change.
    let e = start_engine(embedded(port, 0, None), paths.clone())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("port {port} on 127.0.0.1 is taken")),
        "{e}"
    );
    assert!(e.contains("`sandbox_port`"), "{e}");
    assert!(e.contains("built-in profile"), "{e}");

    // The listener's port: the console starts (a remote bank needs no listener to answer),
    // the listener does not move to another port, and the error names `callback_port`.
    let engine = start_engine(embedded(0, port, None), paths.clone())
        .await
        .unwrap();
    let e = engine.listener_error.clone().expect("a listener error");
    assert!(
        e.contains(&format!("port {port} on 127.0.0.1 is taken")),
        "{e}"
    );
    assert!(e.contains("`callback_port`"), "{e}");
    engine.shutdown().await;

    // A user's profile: the message names its file.
    let dir = paths.profiles_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mine.toml");
    std::fs::write(
        &file,
        format!("name = \"Mine\"\ntarget = \"embedded\"\nsandbox_port = {port}\n"),
    )
    .unwrap();
    let mine = ProfileSet::load(Some(&dir)).get("Mine").unwrap().clone();
    let e = start_engine(mine, paths).await.unwrap_err().to_string();
    assert!(
        e.contains(&format!("set `sandbox_port` in {}", file.display())),
        "{e}"
    );
    drop(taken);
}

#[test]
fn the_cli_names_the_field_when_the_sandbox_port_is_taken() {
    let home = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = Paths::under(home.path().to_path_buf()).profiles_dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mine.toml"),
        format!("name = \"Mine\"\ntarget = \"embedded\"\nsandbox_port = {port}\n"),
    )
    .unwrap();
    // Without PSD2_CONSOLE_FREE_PORTS: the profile's port counts.
    let out = std::process::Command::new(crate::common::cli::BIN)
        .env("PSD2_CONSOLE_HOME", home.path())
        .env_remove("PSD2_CONSOLE_FREE_PORTS")
        .args(["send", "accounts.list", "--profile", "Mine", "--no-wait"])
        .output()
        .unwrap();
    let (code, _, err) = crate::common::cli::outcome(out);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("port {port} on 127.0.0.1 is taken")),
        "{err}"
    );
    assert!(err.contains("`sandbox_port`"), "{err}");
    drop(taken);
}

#[tokio::test]
async fn room_mode_puts_the_sandbox_the_listener_and_the_links_on_the_listen_address() {
    let (_home, paths) = crate::common::temp_home();
    // Ports free on 127.0.0.1 a moment ago: nothing of ours may appear there.
    let (sandbox_port, callback_port) = (free_port(), free_port());
    let mut engine = start_engine(embedded(sandbox_port, callback_port, Some(ROOM)), paths)
        .await
        .unwrap();
    assert_eq!(engine.listener_error, None);
    assert_eq!(engine.room_address(), Some(ROOM));
    assert_eq!(engine.base_url, format!("http://127.0.0.2:{sandbox_port}"));
    assert_eq!(
        engine.redirect_uri,
        format!("http://127.0.0.2:{callback_port}/callback")
    );
    let list = operations::find("accounts.list").unwrap();
    let req = engine.prepare(list, &[], None).unwrap();
    assert_eq!(
        req.header("TPP-Redirect-URI"),
        Some(engine.redirect_uri.as_str())
    );
    assert!(listening(SocketAddr::new(ROOM, sandbox_port)).await);
    assert!(listening(SocketAddr::new(ROOM, callback_port)).await);
    for port in [sandbox_port, callback_port] {
        assert!(
            !listening(SocketAddr::from(([127, 0, 0, 1], port))).await,
            "something listens on 127.0.0.1:{port}"
        );
    }

    let (status, sca) = list_accounts(&engine).await;
    assert_eq!(status, 401);
    let sca = sca.expect("a scaRedirect");
    assert!(
        sca.starts_with(&format!("http://127.0.0.2:{sandbox_port}/")),
        "{sca}"
    );
    // The callback checks hold on the network address: a forged callback (another
    // tpp-session-id) is refused and changes nothing.
    let forged = browser()
        .get(format!(
            "{}?psu-id={}&tpp-session-id=forged&context=PRIVATE",
            engine.redirect_uri,
            uuid::Uuid::new_v4()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 400);
    // The SCA pages stay bound to the browser that opened them: another browser (no
    // cookie), even with the page's token, gets a 403 page from the login form.
    let page = browser().get(&sca).send().await.unwrap();
    let url = page.url().to_string();
    let html = page.text().await.unwrap();
    let mut login = common::forms(&html, &url).remove(0);
    login.set("customerNumber", KARI);
    let stranger = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    assert_eq!(login.submit(&stranger, "Log in").await.status(), 403);

    finish_sca(&mut engine, &sca).await;
    engine.shutdown().await;
}

#[test]
fn the_room_banner_is_drawn_only_in_room_mode() {
    let banner = "ROOM MODE";
    let off = App::new(status()).screen_text(160, 40);
    assert!(!off.contains(banner), "{off}");
    let on = App::new(StatusInfo {
        room: Some("127.0.0.2".into()),
        ..status()
    });
    let text = on.screen_text(160, 40);
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("ROOM MODE: reachable from the network on 127.0.0.2"),
        "{text}"
    );
    // Still there at a projector's 80 columns, and the target beside it at 100.
    let narrow = on.screen_text(80, 24);
    assert!(narrow.lines().next().unwrap().contains(banner), "{narrow}");
    let wide = on.screen_text(100, 30);
    assert!(wide.lines().next().unwrap().contains("Target"), "{wide}");
}

#[test]
fn the_room_banner_is_drawn_for_a_remote_profile_too() {
    let text = App::new(StatusInfo {
        room: Some("192.168.1.20".into()),
        embedded: false,
        ..status()
    })
    .screen_text(160, 40);
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("ROOM MODE: reachable from the network on 192.168.1.20"),
        "{text}"
    );
}

#[test]
fn cli_commands_say_on_stderr_when_room_mode_is_on() {
    use crate::common::cli::run_headless;
    let home = tempfile::tempdir().unwrap();
    let args = ["send", "accounts.list", "--no-wait"];
    let (code, _, err) = run_headless(home.path(), &args);
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains("room mode"), "{err}");
    assert!(err.contains("SCA needed: http://127.0.0.1:"), "{err}");

    let room: Vec<&str> = ["--listen", "127.0.0.2"]
        .iter()
        .chain(&args)
        .copied()
        .collect();
    let (code, _, err) = run_headless(home.path(), &room);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("room mode: reachable from the network on 127.0.0.2: the embedded sandbox (http://127.0.0.2:"),
        "{err}"
    );
    assert!(err.contains("SCA needed: http://127.0.0.2:"), "{err}");

    // An address links cannot name is refused before anything starts.
    let (code, _, err) = run_headless(
        home.path(),
        &["--listen", "0.0.0.0", "send", "accounts.list"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("0.0.0.0 cannot be named in links"), "{err}");
}

/// Issue 18, cause D: a command (`start_command_engine`) beside a console (`start_engine`)
/// on the same home uses the console's sandbox (same base URL, same state: an SCA link
/// the console's sandbox made completes), and takes a free port for its own callback
/// listener, whose TPP-Redirect-URI the sandbox redirects to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_beside_the_console_uses_its_sandbox_and_a_free_callback_port() {
    let (_home, paths) = crate::common::temp_home();
    let (sandbox_port, callback_port) = (free_port(), free_port());
    let profile = embedded(sandbox_port, callback_port, None);
    let console = start_engine(profile.clone(), paths.clone()).await.unwrap();
    let key = paths.data.join(psd2_console::embedded::INSTANCE_KEY_FILE);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the identity key is private: {mode:o}");
    }

    let mut command = psd2_console::embedded::start_command_engine(profile, paths.clone())
        .await
        .unwrap();
    assert!(command.shares_sandbox());
    assert!(!console.shares_sandbox());
    assert_eq!(command.base_url, console.base_url);
    assert_eq!(command.listener_error, None);
    assert_ne!(command.redirect_uri, console.redirect_uri);
    assert!(
        command.redirect_uri.starts_with("http://127.0.0.1:")
            && command.redirect_uri.ends_with("/callback"),
        "{}",
        command.redirect_uri
    );
    let (status, sca) = list_accounts(&command).await;
    assert_eq!(status, 401);
    let sca = sca.expect("a scaRedirect");
    assert!(sca.starts_with(&format!("{}/", console.base_url)), "{sca}");
    // The browser comes back to the command's listener (finish_sca checks the redirect).
    finish_sca(&mut command, &sca).await;
    // Stopping the command leaves the console's sandbox running.
    command.shutdown().await;
    assert!(listening(SocketAddr::from(([127, 0, 0, 1], sandbox_port))).await);
    console.shutdown().await;
}

/// Issue 18, cause D: a foreign program on the sandbox port (a plain TCP listener that is
/// no psd2-console), or a psd2-console of another home, is still an error naming the
/// profile field, and says what holds the port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_program_or_another_home_on_the_port_stays_an_error_for_a_command() {
    let (_home, paths) = crate::common::temp_home();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let e =
        match psd2_console::embedded::start_command_engine(embedded(port, 0, None), paths.clone())
            .await
        {
            Ok(_) => panic!("a foreign program on the port is an error"),
            Err(e) => e.to_string(),
        };
    crate::common::assert_contains_all(
        &e,
        &[
            &format!("port {port} on 127.0.0.1 is taken"),
            "`sandbox_port`",
            "not a psd2-console serving this data directory",
        ],
    );
    drop(taken);

    // A console of another home on the port: its proof fails under this home's key.
    let (_other, other_paths) = crate::common::temp_home();
    let port = free_port();
    let console = start_engine(embedded(port, 0, None), other_paths)
        .await
        .unwrap();
    let e = match psd2_console::embedded::start_command_engine(embedded(port, 0, None), paths).await
    {
        Ok(_) => panic!("another home's console is an error"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("a psd2-console serving another data directory"),
        "{e}"
    );
    assert!(e.contains("`sandbox_port`"), "{e}");
    console.shutdown().await;
}

/// Issue 18, defect 17: `--listen 127.0.0.1` and `--listen ::1` are loopback, not room
/// mode: no "room mode" on stderr.
#[test]
fn loopback_listen_addresses_are_not_room_mode() {
    use crate::common::cli::run_headless;
    let home = tempfile::tempdir().unwrap();
    for addr in ["127.0.0.1", "::1"] {
        let (code, _, err) = run_headless(
            home.path(),
            &["--listen", addr, "send", "accounts.list", "--no-wait"],
        );
        assert_eq!(code, 1, "{addr}: {err}");
        assert!(!err.contains("room mode"), "{addr}: {err}");
        assert!(err.contains("SCA needed: http://"), "{addr}: {err}");
    }
    for addr in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] {
        let p = embedded(0, 0, Some(addr.parse().unwrap()));
        assert_eq!(p.room_address(), None, "{addr}");
    }
    assert_eq!(embedded(0, 0, Some(ROOM)).room_address(), Some(ROOM));
}
