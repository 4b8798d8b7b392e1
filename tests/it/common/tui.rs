//! The console test harness shared by the `tui_*` modules: an [`App`] driven by keys written
//! as text and rendered into ratatui's `TestBackend`, in the style of slumber's
//! `TestComponent` (`app.keys("3 / s").type_text("404").enter()`).
//!
//! No terminal, no engine, no network: what the runner would do for an [`Action`] (prepare a
//! signed request, load the history) the tests do themselves, e.g. with [`prepare_as_runner`].

#![allow(dead_code)]

use std::time::{Duration, SystemTime};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use psd2_console::client::{ClientError, PreparedRequest, RequestContext, prepare};
use psd2_console::profile::{DEFAULT_PROFILE, ProfileSet, SessionState};
use psd2_console::signing::SignatureInspection;
use psd2_console::tui::app::RequestSpec;
use psd2_console::tui::{Action, App, Focus, StatusInfo};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

/// The embedded sandbox's base URL the screens show (nothing listens there).
pub const BASE_URL: &str = "http://127.0.0.1:40123";
/// The redirect listener's callback URL the screens show.
pub const REDIRECT_URI: &str = "http://127.0.0.1:40111/callback";
/// "Now" of [`prepare_as_runner`]: 2026-05-28 20:26:40 UTC, seconds since the Unix epoch.
pub const PREPARED_AT: u64 = 1_780_000_000;

/// The status line of the built-in profile on the embedded sandbox at [`BASE_URL`], no PSU.
pub fn status() -> StatusInfo {
    StatusInfo {
        profile: DEFAULT_PROFILE.into(),
        base_url: BASE_URL.into(),
        embedded: true,
        psu_id: None,
        psu_corporate_id: None,
        context: None,
        redirect_uri: REDIRECT_URI.into(),
        listener_error: None,
        room: None,
    }
}

/// [`status`] with another profile name.
pub fn status_of(profile: &str) -> StatusInfo {
    StatusInfo {
        profile: profile.into(),
        ..status()
    }
}

/// An app on [`status`] with volatile values (dates, ids, signatures) masked, as the
/// snapshots want.
pub fn masked_app() -> App {
    let mut app = App::new(status());
    app.mask_volatile = true;
    app
}

/// Prepares `spec` as the runner does: the built-in profile, the test TPP's credentials
/// ([`super::sandbox::tpp`]), `session`, [`BASE_URL`] and the fixed clock [`PREPARED_AT`].
///
/// Errors: what [`prepare`] rejects (parameters, body).
pub fn prepare_as_runner(
    spec: &RequestSpec,
    session: &SessionState,
) -> Result<PreparedRequest, ClientError> {
    let profiles = ProfileSet::load(None);
    let profile = profiles.get(DEFAULT_PROFILE).expect("built-in profile");
    let ctx = RequestContext {
        profile,
        session,
        credentials: super::sandbox::tpp(),
        base_url: BASE_URL,
        redirect_uri: REDIRECT_URI,
        now: SystemTime::UNIX_EPOCH + Duration::from_secs(PREPARED_AT),
    };
    prepare(spec.op, &spec.params, spec.body.as_deref(), &ctx)
}

/// A request of operation `op` to `method` [`BASE_URL`]`path` as the runner would hand it
/// over, with no headers, no body and an empty signature inspection (for screens fed fake
/// answers).
pub fn unsigned_request(op: &str, method: &str, path: &str) -> PreparedRequest {
    PreparedRequest {
        operation_id: op.into(),
        params: Vec::new(),
        method: method.into(),
        url: format!("{BASE_URL}{path}"),
        path_and_query: path.into(),
        headers: Vec::new(),
        body: Vec::new(),
        inspection: SignatureInspection::default(),
        signed_for: None,
    }
}

/// The key `c` with no modifier.
pub fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// The key `c` with Shift (crossterm reports upper-case letters so).
pub fn shift(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::SHIFT)
}

/// The key `c` with Control.
pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// A named key (`Enter`, `Tab`, arrows…) with no modifier.
pub fn code(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

/// One key written as text: a single character (`q`, `3`, `?`), a crossterm key name
/// (`Enter`, `Esc`, `Tab`, `BackTab`, `Backspace`, `Delete`, `Up`, `Down`, `Left`, `Right`,
/// `Home`, `End`, `PageUp`, `PageDown`, `Space`, `F1`…`F12`), optionally after `C-`
/// (Control), `S-` (Shift) or `A-` (Alt), e.g. `C-p`.
///
/// Panics on a name it does not know (a typo in a test must not pass silently).
pub fn parse_key(spec: &str) -> KeyEvent {
    let mut modifiers = KeyModifiers::NONE;
    let mut rest = spec;
    while rest.len() > 2 {
        let m = match &rest[..2] {
            "C-" => KeyModifiers::CONTROL,
            "S-" => KeyModifiers::SHIFT,
            "A-" => KeyModifiers::ALT,
            _ => break,
        };
        modifiers |= m;
        rest = &rest[2..];
    }
    let mut chars = rest.chars();
    let code = match (chars.next(), chars.next()) {
        (Some(c), None) => KeyCode::Char(c),
        _ => match rest {
            "Enter" => KeyCode::Enter,
            "Esc" => KeyCode::Esc,
            "Tab" => KeyCode::Tab,
            "BackTab" => KeyCode::BackTab,
            "Backspace" => KeyCode::Backspace,
            "Delete" => KeyCode::Delete,
            "Up" => KeyCode::Up,
            "Down" => KeyCode::Down,
            "Left" => KeyCode::Left,
            "Right" => KeyCode::Right,
            "Home" => KeyCode::Home,
            "End" => KeyCode::End,
            "PageUp" => KeyCode::PageUp,
            "PageDown" => KeyCode::PageDown,
            "Space" => KeyCode::Char(' '),
            f if f.starts_with('F') => KeyCode::F(
                f[1..]
                    .parse()
                    .unwrap_or_else(|_| panic!("unknown key {spec:?}")),
            ),
            _ => panic!("unknown key {spec:?}"),
        },
    };
    KeyEvent::new(code, modifiers)
}

/// The rows of `buf` as text, one line per row; with `trim`, trailing spaces cut.
pub fn buffer_text(buf: &Buffer, trim: bool) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        out.push_str(if trim { line.trim_end() } else { &line });
        out.push('\n');
    }
    out
}

/// Driving an [`App`] from a test: keys written as text, chained, and the screen it draws.
pub trait Drive {
    /// Presses the keys of `keys`, separated by spaces (each as [`parse_key`] reads it),
    /// ignoring the actions they ask for.
    fn keys(&mut self, keys: &str) -> &mut Self;
    /// Presses the one key `spec` ([`parse_key`]) and returns the action it asks for.
    fn press(&mut self, spec: &str) -> Action;
    /// Types `text` character by character; each must be taken as text (no action).
    fn type_text(&mut self, text: &str) -> &mut Self;
    /// Presses `Enter`, ignoring the action.
    fn enter(&mut self) -> &mut Self;
    /// Presses `Tab` until `focus` has the focus; panics after ten presses.
    fn focus_on(&mut self, focus: Focus) -> &mut Self;
    /// Draws the app on a `w`×`h` `TestBackend` and returns its buffer.
    fn buffer(&self, w: u16, h: u16) -> Buffer;
    /// The `w`×`h` screen as text, one line per row, trailing spaces trimmed.
    fn screen_text(&self, w: u16, h: u16) -> String;
}

impl Drive for App {
    fn keys(&mut self, keys: &str) -> &mut Self {
        for k in keys.split_whitespace() {
            self.handle_key(parse_key(k));
        }
        self
    }

    fn press(&mut self, spec: &str) -> Action {
        self.handle_key(parse_key(spec))
    }

    fn type_text(&mut self, text: &str) -> &mut Self {
        for c in text.chars() {
            assert_eq!(self.handle_key(key(c)), Action::None, "typing {c:?}");
        }
        self
    }

    fn enter(&mut self) -> &mut Self {
        self.handle_key(code(KeyCode::Enter));
        self
    }

    fn focus_on(&mut self, focus: Focus) -> &mut Self {
        for _ in 0..10 {
            if self.focus() == focus {
                return self;
            }
            self.handle_key(code(KeyCode::Tab));
        }
        panic!("{focus:?} never got the focus");
    }

    fn buffer(&self, w: u16, h: u16) -> Buffer {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| self.render(f)).unwrap();
        terminal.backend().buffer().clone()
    }

    fn screen_text(&self, w: u16, h: u16) -> String {
        buffer_text(&self.buffer(w, h), true)
    }
}

/// A JSON answer as the client would hand it over: `status`, `body`, received in
/// `elapsed_ms`, with `content-type`, `content-length` and `x-request-id` headers.
pub fn json_exchange(
    status: u16,
    body: serde_json::Value,
    elapsed_ms: u64,
    x_request_id: &str,
) -> psd2_console::client::Exchange {
    let bytes = serde_json::to_vec(&body).unwrap();
    psd2_console::client::Exchange {
        status,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("content-length".into(), bytes.len().to_string()),
            ("x-request-id".into(), x_request_id.into()),
        ],
        body: bytes,
        elapsed: Duration::from_millis(elapsed_ms),
        json: Some(body),
    }
}
