//! The profiles screen rendered into ratatui's `TestBackend`: snapshots of the screen (a
//! generated certificate and a session file, volatile values masked) and of the form with
//! validation errors; create / clone / delete round trips on a temporary config dir; the
//! near-expiry warning, a key that does not match, the SCA window and consent age, and that
//! typing in the form never triggers commands.

use std::path::Path;

use psd2_console::cert::Certificate;
use psd2_console::cert::generate::{TppCertSpec, generate_set};
use psd2_console::profile::edit::generate_certificate;
use psd2_console::profile::{DEFAULT_PROFILE, Paths, ProfileSet, SessionState};
use psd2_console::tui::{Action, App, Screen, StatusInfo};
use psd2_console::xs2a::redirect::PsuContext;

use crate::common::tui::{Drive, masked_app, status};

/// "Now" for the session timers, fixed per test run; session times are written relative to
/// it, and generated certificates (valid from the real now) cover it.
fn now() -> i64 {
    use std::sync::OnceLock;
    static NOW: OnceLock<i64> = OnceLock::new();
    *NOW.get_or_init(|| psd2_console::cert::unix_seconds(std::time::SystemTime::now()) + 3600)
}

/// The screen line that contains `label`.
fn line_with<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(label))
        .unwrap_or_else(|| panic!("no line with {label:?} in\n{text}"))
}

/// What the runner does for `Action::LoadProfiles`.
fn reload(app: &mut App, paths: &Paths) {
    app.set_profile_set(ProfileSet::load(Some(&paths.profiles_dir())), paths);
}

/// An app on the profiles screen over the config and data dirs of `home`.
fn profiles_app(home: &Path) -> (App, Paths) {
    let paths = Paths::under(home.to_path_buf());
    let mut app = masked_app();
    app.set_profiles_clock(Some(now()));
    assert_eq!(app.press("2"), Action::LoadProfiles);
    assert_eq!(app.screen(), Screen::Profiles);
    reload(&mut app, &paths);
    (app, paths)
}

fn select(app: &mut App, name: &str) {
    for _ in 0..10 {
        app.keys("k");
    }
    for _ in 0..10 {
        let v = app.profiles_view();
        if v.set.profiles[v.selected].name == name {
            return;
        }
        app.keys("j");
    }
    panic!("no profile {name}");
}

fn write_profile(paths: &Paths, file: &str, text: &str) {
    std::fs::create_dir_all(paths.profiles_dir()).unwrap();
    std::fs::write(paths.profiles_dir().join(file), text).unwrap();
}

#[test]
fn profiles_screen_snapshot() {
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path().to_path_buf());
    // The embedded profile's generated certificate, and a session with a PSU 20 minutes
    // after SCA, consent 12 days old.
    generate_certificate(&paths, DEFAULT_PROFILE, &[]).unwrap();
    SessionState {
        psu_id: Some("8c1d3f0e-5b7a-4c2e-9f10-3a6b2d4e5f60".into()),
        psu_corporate_id: Some("1f2e3d4c-0000-4111-8222-933344445555".into()),
        tpp_session_id: Some("0d9f3c2a-1111-4222-8333-944455556666".into()),
        context: Some(PsuContext::Corporate),
        sca_completed_at: Some(now() - 20 * 60),
        consent_at: Some(now() - 12 * 86_400),
    }
    .save(&paths.session_file("embedded-sandbox"))
    .unwrap();
    let (app, _) = profiles_app(home.path());
    let text = app.screen_text(130, 40);
    assert!(text.contains("40 min 0 s left of 60 min"), "{text}");
    assert!(text.contains("12 of 180 days"), "{text}");
    assert!(text.contains("✓ matches the certificate"), "{text}");
    insta::assert_snapshot!("profiles_screen", text);
}

#[test]
fn form_shows_validation_errors_next_to_the_fields() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, paths) = profiles_app(home.path());
    assert_eq!(app.press("n"), Action::None);
    app.type_text("embedded sandbox");
    app.keys("Tab");
    app.type_text("ftp://bank.example");
    app.keys("Tab");
    app.type_text("missing.pem");
    // Enter saves: refused, nothing written, the form stays open with the reasons.
    assert_eq!(app.press("Enter"), Action::None);
    assert!(app.profiles_view().form.is_some());
    assert!(
        !paths.profiles_dir().exists()
            || std::fs::read_dir(paths.profiles_dir()).unwrap().count() == 0
    );
    let text = app.screen_text(130, 40);
    assert!(text.contains("exists already"), "{text}");
    assert!(text.contains("must be http or https"), "{text}");
    assert!(text.contains("no such file"), "{text}");
    insta::assert_snapshot!("profiles_form_errors", text);
    // Esc cancels.
    app.keys("Esc");
    assert!(app.profiles_view().form.is_none());
}

#[test]
fn typing_in_the_form_never_triggers_commands() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, _) = profiles_app(home.path());
    app.keys("n");
    // q quits, 1 and 3 switch screens, ? opens help, d deletes, g generates: all typed.
    app.type_text("q13?dgnec");
    assert!(!app.should_quit());
    assert_eq!(app.screen(), Screen::Profiles);
    assert!(!app.help_visible());
    let form = app.profiles_view().form.as_ref().expect("form still open");
    assert_eq!(form.draft.get("name"), "q13?dgnec");
    // Line editing: Left, Backspace, Home, Delete.
    app.keys("Left Backspace Home Delete");
    let form = app.profiles_view().form.as_ref().unwrap();
    assert_eq!(form.draft.get("name"), "13?dgnc");
    // Ctrl-c still quits.
    assert_eq!(app.press("C-c"), Action::Quit);
}

#[test]
fn create_clone_and_delete_round_trip_through_files() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, paths) = profiles_app(home.path());

    // Create.
    app.keys("n");
    app.type_text("My bank");
    app.keys("Tab");
    app.type_text("embedded");
    assert_eq!(app.press("C-s"), Action::LoadProfiles);
    let file = paths.profiles_dir().join("my-bank.toml");
    let text = std::fs::read_to_string(&file).expect("profile file written");
    assert!(text.contains("name = \"My bank\""), "{text}");
    assert!(text.contains("target = \"embedded\""), "{text}");
    reload(&mut app, &paths);
    let v = app.profiles_view();
    assert_eq!(
        v.set.profiles[v.selected].name, "My bank",
        "the new one is highlighted"
    );
    assert!(app.screen_text(130, 40).contains("My bank"));

    // Edit: a rename changes the name key, the file keeps its name (issue 8 item 8).
    app.keys("e C-u");
    app.type_text("My bank 2");
    assert_eq!(app.press("Enter"), Action::LoadProfiles);
    assert!(
        file.exists(),
        "the user's file keeps its name after a rename"
    );
    assert!(!paths.profiles_dir().join("my-bank-2.toml").exists());
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("name = \"My bank 2\"")
    );
    reload(&mut app, &paths);

    // Clone.
    select(&mut app, "My bank 2");
    app.keys("c");
    let form = app.profiles_view().form.as_ref().unwrap();
    assert_eq!(form.draft.get("name"), "My bank 2 (copy)");
    assert_eq!(app.press("Enter"), Action::LoadProfiles);
    let copy = paths.profiles_dir().join("my-bank-2--copy.toml");
    assert!(copy.exists());
    reload(&mut app, &paths);
    assert!(
        app.profiles_view()
            .set
            .profiles
            .iter()
            .any(|p| p.name == "My bank 2 (copy)")
    );

    // Delete asks first; n keeps it, y deletes it.
    select(&mut app, "My bank 2 (copy)");
    app.keys("d");
    assert!(
        app.screen_text(130, 40)
            .contains("Delete profile My bank 2 (copy)?")
    );
    app.keys("n");
    assert!(copy.exists());
    app.keys("d");
    assert_eq!(app.press("y"), Action::LoadProfiles);
    assert!(!copy.exists());
    reload(&mut app, &paths);
    let names: Vec<_> = app
        .profiles_view()
        .set
        .profiles
        .iter()
        .map(|p| p.name.clone())
        .collect();
    assert!(
        !names.contains(&"My bank 2 (copy)".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"My bank 2".to_string()), "{names:?}");
}

#[test]
fn built_in_profiles_are_read_only() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, paths) = profiles_app(home.path());
    select(&mut app, DEFAULT_PROFILE);
    app.keys("d");
    assert!(app.profiles_view().confirm_delete.is_none());
    assert!(app.message().unwrap().text.contains("cannot be deleted"));
    // Editing a built-in one edits a copy.
    app.keys("e");
    let form = app.profiles_view().form.as_ref().expect("a form");
    assert_eq!(form.draft.get("name"), "Embedded sandbox (copy)");
    assert!(app.message().unwrap().text.contains("read-only"));
    app.keys("Esc");
    assert!(!paths.profiles_dir().exists());
}

#[test]
fn generated_certificate_is_written_0600_and_the_profile_points_at_it() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, paths) = profiles_app(home.path());
    app.keys("n");
    app.type_text("Generated");
    app.keys("Tab");
    app.type_text("https://bank.example");
    // Roles: AI only.
    for _ in 0..3 {
        app.keys("Tab");
    }
    app.keys("C-u");
    app.type_text("PSP_AI");
    app.keys("C-g");
    let form = app.profiles_view().form.as_ref().unwrap();
    let cert = form.draft.get("certificate").to_string();
    let key_file = form.draft.get("key").to_string();
    assert!(cert.ends_with("generated.pem"), "{cert}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    assert_eq!(app.press("Enter"), Action::LoadProfiles);
    reload(&mut app, &paths);
    let text = app.screen_text(130, 40);
    let roles = line_with(&text, "PSD2 roles");
    assert!(
        roles.contains("PSP_AI") && !roles.contains("PSP_PI"),
        "{roles}"
    );
    assert!(text.contains("✓ matches the certificate"), "{text}");
    assert!(!text.contains("PRIVATE KEY"), "{text}");
    let saved = std::fs::read_to_string(paths.profiles_dir().join("generated.toml")).unwrap();
    assert!(saved.contains("generated.pem"), "{saved}");
}

#[test]
fn near_expiry_and_key_mismatch_are_shown() {
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path().to_path_buf());
    let dir = home.path().join("certs");
    std::fs::create_dir_all(&dir).unwrap();
    let short = generate_set(&TppCertSpec {
        days: 10,
        ..TppCertSpec::default()
    })
    .unwrap();
    let other = generate_set(&TppCertSpec::default()).unwrap();
    std::fs::write(dir.join("short.pem"), &short.tpp_cert_pem).unwrap();
    std::fs::write(dir.join("short.key"), &short.tpp_key_pem).unwrap();
    std::fs::write(dir.join("other.key"), &other.tpp_key_pem).unwrap();
    let cert = Certificate::load(&dir.join("short.pem")).unwrap();
    write_profile(
        &paths,
        "short.toml",
        &format!(
            "name = \"Short\"\ntarget = \"https://bank.example\"\ncertificate = {:?}\nkey = {:?}\n",
            dir.join("short.pem"),
            dir.join("short.key")
        ),
    );
    write_profile(
        &paths,
        "mismatch.toml",
        &format!(
            "name = \"Mismatch\"\ntarget = \"https://bank.example\"\ncertificate = {:?}\nkey = {:?}\n",
            dir.join("short.pem"),
            dir.join("other.key")
        ),
    );
    let mut app = App::new(status());
    app.keys("2");
    reload(&mut app, &paths);

    // Five days (and a minute) before the end.
    app.set_profiles_clock(Some(cert.not_after - 5 * 86_400 - 60));
    select(&mut app, "Short");
    let text = app.screen_text(130, 40);
    assert!(text.contains("⚠ expires in 5 days"), "{text}");
    assert!(text.contains("✓ matches the certificate"), "{text}");
    // After the end.
    app.set_profiles_clock(Some(cert.not_after + 3 * 86_400));
    let text = app.screen_text(130, 40);
    assert!(text.contains("✗ EXPIRED 3 d 0 h ago"), "{text}");
    // Before the start.
    app.set_profiles_clock(Some(cert.not_before - 3600));
    let text = app.screen_text(170, 40);
    assert!(
        text.contains("✗ not valid yet (starts in 1 h 0 min)"),
        "{text}"
    );

    select(&mut app, "Mismatch");
    let text = app.screen_text(130, 40);
    assert!(text.contains("✗ does NOT match the certificate"), "{text}");
}

#[test]
fn sca_window_and_consent_age_run_out() {
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path().to_path_buf());
    SessionState {
        psu_id: Some("p".into()),
        tpp_session_id: Some("s".into()),
        sca_completed_at: Some(now() - 2 * 3600),
        consent_at: Some(now() - 170 * 86_400),
        ..SessionState::default()
    }
    .save(&paths.session_file("embedded-sandbox"))
    .unwrap();
    let (app, _) = profiles_app(home.path());
    let text = app.screen_text(130, 40);
    // SCA two hours ago: the 1-hour window ended an hour ago.
    assert!(text.contains("expired 1 h 0 min ago"), "{text}");
    assert!(
        text.contains("⚠ 170 of 180 days: renew with SCA within 10 days"),
        "{text}"
    );
}

#[test]
fn enter_switches_to_the_highlighted_profile() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, _) = profiles_app(home.path());
    select(&mut app, "Remote sandbox example");
    assert_eq!(
        app.press("Enter"),
        Action::SwitchProfile("Remote sandbox example".into())
    );
    select(&mut app, DEFAULT_PROFILE);
    assert_eq!(app.press("Enter"), Action::None);
}

/// A hand-written profile: its own file name, comments, key order and spacing.
const HAND_WRITTEN: &str = r#"# My bank's test profile -- hand-written, keep these notes.
name = "My bank"
target = "embedded"   # the built-in sandbox

# Issued by the sandbox CA on 2026-01-01.
certificate = "old.pem"
key = "old.key"
psu_ip_address    = "10.0.0.7"  # office
verify_response_signatures = false
"#;

#[test]
fn editing_a_profile_keeps_its_file_name_comments_and_untouched_keys() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, paths) = profiles_app(home.path());
    // No certificate files here: the form would refuse paths that do not exist.
    let hand_written = HAND_WRITTEN.replace("certificate = \"old.pem\"\nkey = \"old.key\"\n", "");
    let hand_written = hand_written.as_str();
    write_profile(&paths, "mybank.toml", hand_written);
    reload(&mut app, &paths);
    let file = paths.profiles_dir().join("mybank.toml");
    // e, Enter with no change: the file is unchanged byte for byte.
    select(&mut app, "My bank");
    app.keys("e");
    assert_eq!(app.press("Enter"), Action::LoadProfiles);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), hand_written);
    assert_eq!(std::fs::read_dir(paths.profiles_dir()).unwrap().count(), 1);
    reload(&mut app, &paths);
    // Change PSU-IP-Address only: that value changes, its comment and everything else stay.
    select(&mut app, "My bank");
    app.keys("e");
    for _ in 0..6 {
        app.keys("Tab");
    }
    app.keys("C-u");
    app.type_text("192.0.2.1");
    assert_eq!(app.press("Enter"), Action::LoadProfiles);
    let after = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        after,
        hand_written.replace("\"10.0.0.7\"", "\"192.0.2.1\""),
        "only the edited value changed"
    );
    assert!(!paths.profiles_dir().join("my-bank.toml").exists());
}

#[test]
fn edits_to_the_active_profile_apply_at_once() {
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path().to_path_buf());
    let hand_written = HAND_WRITTEN.replace("certificate = \"old.pem\"\nkey = \"old.key\"\n", "");
    write_profile(&paths, "mybank.toml", &hand_written);
    let mut app = App::new(StatusInfo {
        profile: "My bank".into(),
        ..status()
    });
    assert_eq!(app.press("2"), Action::LoadProfiles);
    reload(&mut app, &paths);
    select(&mut app, "My bank");
    app.keys("e");
    assert_eq!(app.press("Enter"), Action::LoadProfiles);
    assert!(app.message().unwrap().text.contains("applied now"));
    // The runner reloads the profiles, then restarts the active one with the edits.
    reload(&mut app, &paths);
    assert_eq!(app.take_apply_after_load().as_deref(), Some("My bank"));
    assert_eq!(app.take_apply_after_load(), None, "once");
}

#[test]
fn g_asks_first_and_keeps_a_hand_written_file() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, paths) = profiles_app(home.path());
    write_profile(&paths, "mybank.toml", HAND_WRITTEN);
    reload(&mut app, &paths);
    let file = paths.profiles_dir().join("mybank.toml");
    select(&mut app, "My bank");
    // g asks; n (or any key but y) changes nothing.
    assert_eq!(app.press("g"), Action::None);
    let text = app.screen_text(130, 40);
    assert!(
        text.contains("Generate a new test certificate and key for My bank"),
        "{text}"
    );
    assert!(text.contains("(y/N)"), "{text}");
    assert_eq!(app.press("n"), Action::None);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), HAND_WRITTEN);
    assert!(!paths.certs_dir().exists());
    // g, y: generated; the file keeps its name and comments, only certificate and key change.
    app.keys("g");
    assert_eq!(app.press("y"), Action::LoadProfiles);
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.starts_with("# My bank's test profile -- hand-written, keep these notes.\n"));
    assert!(
        after.contains("# Issued by the sandbox CA on 2026-01-01.\n"),
        "{after}"
    );
    assert!(
        after.contains("target = \"embedded\"   # the built-in sandbox"),
        "{after}"
    );
    assert!(
        after.contains("psu_ip_address    = \"10.0.0.7\"  # office"),
        "{after}"
    );
    assert!(!after.contains("old.pem"), "{after}");
    assert_eq!(std::fs::read_dir(paths.profiles_dir()).unwrap().count(), 1);
}

#[test]
fn r_asks_before_resetting_the_session() {
    let mut app = App::new(status());
    assert_eq!(app.press("r"), Action::None, "asks first");
    assert!(app.message().unwrap().text.contains("(y/N)"));
    assert_eq!(app.press("x"), Action::None, "any other key cancels");
    assert!(app.message().unwrap().text.contains("nothing changed"));
    assert_eq!(app.press("s"), Action::Send, "keys work again");
    app.keys("r");
    assert_eq!(app.press("y"), Action::ResetSession);
}

#[test]
fn new_profiles_default_psu_ip_address_to_loopback() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, paths) = profiles_app(home.path());
    app.keys("n");
    let form = app.profiles_view().form.as_ref().unwrap();
    assert_eq!(form.draft.get("psu_ip_address"), "127.0.0.1");
    app.type_text("Fresh");
    app.keys("Tab");
    app.type_text("embedded");
    assert_eq!(app.press("Enter"), Action::LoadProfiles);
    let text = std::fs::read_to_string(paths.profiles_dir().join("fresh.toml")).unwrap();
    assert!(text.contains("psu_ip_address = \"127.0.0.1\""), "{text}");
}

/// Issue 18, defect 17: a room-mode profile's detail does not call its embedded sandbox
/// "loopback"; one on ::1 (loopback) does.
#[test]
fn the_profile_detail_says_room_mode_not_loopback_for_a_room_profile() {
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path().to_path_buf());
    write_profile(
        &paths,
        "room.toml",
        "name = \"Room\"\ntarget = \"embedded\"\nlisten = \"127.0.0.2\"\n",
    );
    write_profile(
        &paths,
        "local6.toml",
        "name = \"Local6\"\ntarget = \"embedded\"\nlisten = \"::1\"\n",
    );
    let (mut app, _) = profiles_app(home.path());
    select(&mut app, "Room");
    let text = app.screen_text(160, 40);
    let target = line_with(&text, "(in this process");
    assert!(!target.contains("loopback"), "{target}");
    assert!(
        target.contains("room mode: reachable from the network on 127.0.0.2"),
        "{target}"
    );
    select(&mut app, "Local6");
    let text = app.screen_text(160, 40);
    let target = line_with(&text, "(in this process");
    assert!(target.contains("loopback"), "{target}");
}

/// Issue 18 defect 16: after a rename in the form, `g` asks about the profile by its new
/// name (and generates for it).
#[test]
fn g_after_a_rename_names_the_renamed_profile() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, paths) = profiles_app(home.path());
    app.keys("n");
    app.type_text("Old name");
    app.keys("Tab");
    app.type_text("embedded");
    assert_eq!(app.press("C-s"), Action::LoadProfiles);
    reload(&mut app, &paths);
    select(&mut app, "Old name");
    app.keys("e C-u");
    app.type_text("New name");
    assert_eq!(app.press("Enter"), Action::LoadProfiles);
    reload(&mut app, &paths);
    assert_eq!(app.press("g"), Action::None);
    let text = app.screen_text(130, 40);
    assert!(
        text.contains("Generate a new test certificate and key for New name?"),
        "{text}"
    );
    assert!(!text.contains("for Old name"), "{text}");
    assert_eq!(app.press("y"), Action::LoadProfiles);
    let text = app.screen_text(130, 40);
    assert!(!text.contains("Old name"), "{text}");
}

/// A local ASPSP starter that waits until its gate gets a permit, then starts the embedded
/// sandbox: a network restart that blocks until the test releases it.
struct GatedSandbox(std::sync::Arc<tokio::sync::Semaphore>);

impl psd2_console::client::engine::LocalAspspStarter for GatedSandbox {
    fn start<'a>(
        &'a self,
        paths: &'a Paths,
        addr: std::net::SocketAddr,
    ) -> psd2_console::client::engine::BoxFuture<
        'a,
        std::io::Result<Box<dyn psd2_console::client::engine::LocalAspsp>>,
    > {
        Box::pin(async move {
            let _permit = self.0.acquire().await.map_err(std::io::Error::other)?;
            psd2_console::embedded::EmbeddedSandbox
                .start(paths, addr)
                .await
        })
    }
}

/// Issue 19: after a failed profile switch the active profile's sandbox and listener start
/// again in a spawned task that borrows no engine (the console's loop keeps taking keys,
/// signing previews and drawing meanwhile), and the engine adopts the network once it is up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_restart_is_spawned_and_the_engine_stays_usable_until_it_is_released() {
    let (_home, _paths, mut engine) = crate::common::default_engine().await;
    engine.take_network().stop().await;
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let restart = tokio::spawn(engine.network_restart(GatedSandbox(gate.clone())));
    // While the restart waits at its gate, the engine is free: it signs a request and
    // starts a new session (the loop's work on a key).
    let op = psd2_console::xs2a::operations::find("accounts.list").expect("operation");
    engine
        .prepare(op, &[], None)
        .expect("prepared while restarting");
    engine
        .reset_session()
        .expect("session reset while restarting");
    tokio::task::yield_now().await;
    assert!(!restart.is_finished(), "the restart waits for its gate");
    gate.add_permits(1);
    let network = restart.await.expect("task").expect("restarted");
    engine.adopt_network(network);
    let addr = engine
        .base_url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    tokio::net::TcpStream::connect(&addr)
        .await
        .unwrap_or_else(|e| panic!("the restarted sandbox listens on {addr}: {e}"));
}
