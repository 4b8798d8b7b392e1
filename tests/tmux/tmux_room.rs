//! Room mode end to end on the real binary (issue 12): `psd2-console --presenter --listen
//! 127.0.0.2` (an
//! address of the loopback range standing in for the laptop's LAN address; free ports, as
//! every tmux test has them, [`crate::common::tmux::Tmux::tmux`]) shows the room banner;
//! List accounts answers 401 with the SCA prompt; the QR code decoded from the plain-text
//! capture carries the scaRedirect on 127.0.0.2; a cookie-keeping HTTP client completes the
//! SCA from that URL; the redirect reaches the console's listener on 127.0.0.2; and List
//! accounts answers 200 on screen; in presenter mode the PSU-ID is never on screen in full.
//! Meanwhile a hostile classroom peer (another certificate, on the room address) adds a
//! fault on every account read, jumps its clock 181 days, initializes and reads the event stream:
//! all of it stays in its own world (issue 20), and the trainer's flow completes unchanged.

use crate::common::cli::free_port;
use crate::common::payments::KARI;
use crate::common::qr::decode_qr_text;
use crate::common::sandbox::signed_headers;
use crate::common::tmux::{Tmux, ready};
use crate::common::{browser, sca};
use psd2_console::cert::generate::{TppCertSpec, credentials_of, generate_set};
use serde_json::json;

/// The room address of the test.
const ROOM: &str = "127.0.0.2";

/// The console's command-line arguments for the room: presenter mode on the room address.
fn room_args() -> Vec<&'static str> {
    vec!["--presenter", "--listen", ROOM]
}

/// Starts the console in room mode in a fresh home.
fn start_room_console(test: &str) -> Tmux {
    Tmux::start_in(test, tempfile::tempdir().expect("temp dir"), &room_args())
}

#[test]
fn room_mode_sca_from_the_qr_code_reaches_the_listener_on_the_room_address() {
    if !ready() {
        return;
    }
    let t = start_room_console("room");
    let screen = t.wait_for_console();
    assert!(
        screen.contains(&format!("reachable from the network on {ROOM}")),
        "no room banner:\n{screen}"
    );
    // List accounts is selected first.
    t.keys(&["s"]);
    // Until the whole code is drawn: a capture may catch the prompt half painted.
    let screen = t.wait_for("401 and the SCA prompt with its QR code", |s| {
        s.contains("401")
            && s.contains("Strong customer authentication")
            && decode_qr_text(s).len() == 1
    });
    let codes = decode_qr_text(&screen);
    assert_eq!(codes.len(), 1, "one QR code on screen:\n{screen}");
    let sca_url = codes[0].clone();
    assert!(
        sca_url.starts_with(&format!("http://{ROOM}:")),
        "the QR code's URL {sca_url} is not on {ROOM}"
    );
    // The same link is on screen as text (its start at least: long URLs wrap).
    let shown: String = sca_url.chars().take(40).collect();
    assert!(screen.contains(&shown), "{shown} not on screen:\n{screen}");

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let base: String = sca_url.split('/').take(3).collect::<Vec<_>>().join("/");
    let seen = runtime.block_on(hostile_peer(&base));
    assert!(
        !seen.contains("/v1/accounts") && !seen.contains("\"sca\""),
        "the peer's event stream shows the trainer's flow:\n{seen}"
    );
    let (landing, psu_id) = runtime.block_on(async {
        let to_tpp = sca::complete(&sca_url, KARI, "PRIVATE", sca::tick_all, "Approve").await;
        assert!(
            to_tpp.starts_with(&format!("http://{ROOM}:")),
            "the redirect to the TPP {to_tpp} is not on {ROOM}"
        );
        let psu_id = sca::success(&to_tpp).psu_id;
        let r = browser().get(&to_tpp).send().await.unwrap();
        ((r.status().as_u16(), r.text().await.unwrap()), psu_id)
    });
    assert_eq!(landing.0, 200, "{}", landing.1);
    assert!(landing.1.contains("SCA complete"), "{}", landing.1);
    let screen = t.wait_for("the console to take the callback", |s| {
        s.contains("SCA complete") && !s.contains("no PSU yet")
    });
    assert!(!screen.contains(&psu_id), "PSU-ID in full:\n{screen}");
    t.keys(&["s"]);
    let screen = t.wait_for("List accounts to answer 200", |s| {
        s.contains("200") && s.contains("\"accounts\"")
    });
    assert!(screen.contains("resourceId"), "{screen}");
    assert!(!screen.contains(&psu_id), "PSU-ID in full:\n{screen}");
    let short: String = psu_id.chars().take(2).collect();
    assert!(
        screen.contains(&format!("{short}…")),
        "PSU-ID not shown shortened:\n{screen}"
    );
    t.quit_and_check_restored();
}

/// A classroom peer with a registered certificate of its own, on the room address `base`:
/// subscribes to the event stream, adds a fault answering 503 on every account read, jumps its
/// clock 181 days and initializes (each accepted: they are its own world's), then reads its
/// stream up to its own initialize; returns what the stream held.
async fn hostile_peer(base: &str) -> String {
    let spec = TppCertSpec {
        organisation: "Classroom Peer".into(),
        organisation_id: "PSDNO-FSA-PEER01".into(),
        ..TppCertSpec::default()
    };
    let creds = credentials_of(&generate_set(&spec).unwrap()).unwrap();
    let http = reqwest::Client::new();
    let request = |method: &str, path: &str, body: Option<String>, at: std::time::SystemTime| {
        let hs = signed_headers(&creds, method, path, &[], body.as_deref(), at);
        let mut rb = http.request(method.parse().unwrap(), format!("{base}{path}"));
        for (n, v) in &hs {
            rb = rb.header(n.as_str(), v.as_str());
        }
        rb.body(body.unwrap_or_default())
    };
    let now = std::time::SystemTime::now();
    let mut events = request("GET", "/v1/sandbox/events", None, now)
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    let fault = json!({"action": "error", "path": "/v1/accounts*", "status": 503,
        "code": "SERVICE_BLOCKED", "text": "attacker was here"});
    let r = request("POST", "/v1/sandbox/faults", Some(fault.to_string()), now)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
    let days = 181 * 86_400;
    let jump = json!({"advanceSeconds": days});
    let r = request("POST", "/v1/sandbox/clock", Some(jump.to_string()), now)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let later = now + std::time::Duration::from_secs(days);
    let r = request("POST", "/v1/sandbox/initialize", Some("{}".into()), later)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let mut seen = String::new();
    while !seen.contains("/v1/sandbox/initialize") {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(60), events.chunk())
            .await
            .expect("the peer's own events within 60 s")
            .unwrap()
            .expect("the event stream ended");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    seen
}

/// Highlights `name` in the profile picker (`p`) and presses Enter.
fn pick_profile(t: &Tmux, name: &str) {
    t.keys(&["p"]);
    t.wait_for("the profile picker", |s| s.contains("▸"));
    // Down to the end of the list, then up: the list does not wrap.
    for step in 0..12 {
        let screen = t.capture();
        if screen.lines().any(|l| l.contains('▸') && l.contains(name)) {
            t.keys(&["Enter"]);
            return;
        }
        t.keys(&[if step < 6 { "Down" } else { "Up" }]);
    }
    panic!("{name} not in the picker:\n{}", t.capture());
}

#[test]
fn switching_between_profiles_on_the_same_fixed_ports_works() {
    if !ready() {
        return;
    }
    // Two profiles on the same fixed ports (set in the files, so PSD2_CONSOLE_FREE_PORTS
    // leaves them): the switch must free them before the next profile listens.
    let (sandbox_port, callback_port) = (free_port(), free_port());
    let home = tempfile::tempdir().expect("temp dir");
    let dir = home.path().join("config/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    for (file, name) in [("a.toml", "Room A"), ("b.toml", "Room B")] {
        std::fs::write(
            dir.join(file),
            format!(
                "name = \"{name}\"\ntarget = \"embedded\"\nsandbox_port = {sandbox_port}\ncallback_port = {callback_port}\n"
            ),
        )
        .unwrap();
    }
    let t = Tmux::start_in("switch", home, &["--profile", "Room A"]);
    let target = format!("http://127.0.0.1:{sandbox_port}");
    let screen = t.wait_for_console();
    assert!(
        screen.contains("Room A") && screen.contains(&target),
        "{screen}"
    );
    for name in ["Room B", "Room A"] {
        pick_profile(&t, name);
        let screen = t.wait_for(&format!("{name} active"), |s| {
            s.contains(&format!("Profile {name} is active")) || s.contains("could not start")
        });
        assert!(!screen.contains("could not start"), "{screen}");
        assert!(!screen.contains("is taken"), "{screen}");
        assert!(screen.contains(&target), "{screen}");
    }
    // The callback listener came back on its port too: List accounts gets its SCA prompt
    // naming the same TPP-Redirect-URI.
    t.keys(&["s"]);
    let screen = t.wait_for("the SCA prompt", |s| {
        s.contains("Strong customer authentication")
    });
    assert!(
        screen.contains(&format!("http://127.0.0.1:{callback_port}/callback")),
        "{screen}"
    );
    t.keys(&["Escape"]);
    t.quit_and_check_restored();
}
