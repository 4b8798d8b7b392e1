//! The console's state: pure data, no terminal and no engine, so every screen can be built
//! and rendered in tests. The runner ([`super::run`]) feeds it keys, prepared requests,
//! responses and SCA callbacks, and performs the [`Action`]s it returns.

pub use super::component::{Action, Confirm, Screen, StatusInfo};
use super::error::BrowserError;
use super::form::Form;
pub use super::form::{Field, Mode, RequestSpec, fields_of};
pub use super::history::HistoryView;
use super::keymap::{self, Command, Scope};
use super::overlay::{Layer, Overlays};
pub use super::panes::Focus;
use super::panes::Panes;
pub use super::profiles::ProfilesView;
use super::status_line::StatusLine;
pub use super::status_line::{LOG_CAP, Level, Message};
use super::theme::Theme;
use crate::client::PreparedRequest;
use crate::profile::ProfileSet;
use crate::xs2a::operations::Operation;

pub use super::mask::mask_request;
pub use super::response::{ResponseState, ResponseView};

/// The request pane's content.
#[derive(Debug, Clone)]
pub enum Preview {
    /// Not prepared yet.
    None,
    /// A signed request; `sent` when it is the one that was sent last.
    Ready {
        /// The request (volatile values masked when [`App::mask_volatile`] is set).
        request: Box<PreparedRequest>,
        /// Whether this is the request as sent (else a preview).
        sent: bool,
    },
    /// The request cannot be built (e.g. a required parameter is missing).
    Error(String),
}

/// The scaRedirect prompt.
#[derive(Debug)]
pub struct ScaPrompt {
    /// The URL the PSU must open.
    pub url: String,
    /// Outcome of the last attempt to open a browser, if any.
    pub browser: Option<Result<(), BrowserError>>,
    /// The URL as a QR code, encoded once when the prompt opens (not on every redraw);
    /// `None` when the URL is too long for one.
    pub qr: Option<super::qr::QrGlyphs>,
    /// The SCA flow the console waits for (armed by the runner, [`App::sca_armed`]); Esc on
    /// the prompt gives it up ([`Action::AbandonSca`]). `None` for a link followed by hand.
    pub flow: Option<crate::client::engine::PendingSca>,
}

impl ScaPrompt {
    /// The prompt for `url`, with its QR code.
    pub fn new(url: String) -> Self {
        let qr = super::qr::QrGlyphs::new(&url).ok();
        ScaPrompt {
            url,
            browser: None,
            qr,
            flow: None,
        }
    }
}

/// A [`Ctx`] over the shared state of `$app`, borrowed field by field so that a component
/// field of the app can be borrowed mutably beside it.
macro_rules! ctx {
    ($app:expr) => {
        $crate::tui::component::Ctx::new(
            &$app.theme,
            &$app.keymap,
            &$app.status,
            &$app.profiles.names,
            &$app.form.ops,
            $app.request.sending,
            $app.mask_volatile,
        )
        .with_screen_mask($app.screen_mask())
        .with_focus($app.shown_focus())
    };
}

/// Runs `$call` (a component call that gets `&mut $ctx`, a [`ctx!`] of `$app`), then shows
/// the messages it left and performs the effect it returned ([`App::apply`]).
macro_rules! with_ctx {
    ($app:ident, |$ctx:ident| $call:expr) => {{
        let mut $ctx = ctx!($app);
        let effect = $call;
        let said = $ctx.into_messages();
        $app.apply(said, effect)
    }};
}

/// The screens besides the console ([`Screen`]), each a component that owns its state,
/// its keys and its drawing ([`super::component::Component`]).
#[derive(Debug, Default)]
pub(crate) struct Screens {
    /// The profiles screen (`2`).
    pub(crate) profiles: ProfilesView,
    /// The history screen (`3`).
    pub(crate) history: HistoryView,
    /// The sandbox monitor screen (`4`).
    pub(crate) monitor: super::monitor::MonitorView,
    /// The flow screen (`5`, [`super::flow_view`]).
    pub(crate) flow: super::flow_view::FlowView,
}

/// The console state.
#[derive(Debug)]
pub struct App {
    /// Colours.
    pub theme: Theme,
    /// Replace volatile values (X-Request-ID, Date, TPP-Session-ID, certificate, keyId,
    /// signature) by placeholders in the request and signature panes; for snapshot tests and
    /// screenshots.
    pub mask_volatile: bool,
    pub(crate) status: StatusInfo,
    /// The operation list and the parameter form ([`super::form`]).
    pub(crate) form: Form,
    /// Focus, scroll state and last-draw rectangles of the panes ([`super::panes`]).
    pub(crate) panes: Panes,
    /// The request pane: the prepared request and whether it must be prepared again.
    pub(crate) request: RequestPane,
    /// The response pane, a component owning the response shown, its scroll, boxes and
    /// link chooser ([`super::response_pane`]).
    pub(crate) response_pane: super::response_pane::ResponsePane,
    /// The SCA prompt and what the console knows about the SCA in progress.
    pub(crate) sca: ScaState,
    /// The open dialogs, bottom first: key handling, drawing and the mouse read only this
    /// ([`super::overlay`]).
    pub(crate) overlays: Overlays,
    /// The loaded profiles, for the picker.
    pub(crate) profiles: ProfileList,
    /// The status-line message and the problems log ([`super::status_line`]).
    pub(crate) messages: StatusLine,
    /// The screen shown.
    pub(crate) screen: Screen,
    /// The screens besides the console, each a component owning its state.
    pub(crate) screens: Screens,
    /// The body editor and the validation problems ([`super::editor`]).
    pub(crate) editor: super::body_editor::EditorState,
    /// The keys in force: the keymap with the config file's overrides ([`super::config`]).
    pub(crate) keymap: keymap::Keymap,
    /// The themes `t` cycles through ([`super::theme::ThemeSet`]).
    pub(crate) themes: super::theme::ThemeSet,
    /// A destructive action waiting for y/N.
    pub(crate) confirm: Option<Confirm>,
    /// The lesson being given ([`super::lesson`]).
    pub(crate) lesson: super::lesson::LessonPanel,
    /// Presenter mode: masking, high contrast, the step line ([`super::presenter`]).
    pub(crate) presenter: super::presenter::Presenter,
    /// A quit key was pressed.
    pub(crate) quit: bool,
}

/// The profiles loaded, for the picker (`p`).
#[derive(Debug, Default)]
pub(crate) struct ProfileList {
    /// Their names, the active one included.
    pub(crate) names: Vec<String>,
    /// Profile files that could not be read.
    pub(crate) errors: Vec<String>,
}

/// The request pane's state.
#[derive(Debug)]
pub(crate) struct RequestPane {
    /// What it shows.
    pub(crate) preview: Preview,
    /// The selection or a value changed since the preview was prepared.
    pub(crate) dirty: bool,
    /// Whether a request is in flight (its response pending).
    pub(crate) sending: bool,
    /// What the pane shows when it is not the form's operation: an imported request or a
    /// history exchange sent again ([`App::resend_started`]), until the form's own preview
    /// or send replaces it.
    pub(crate) sent_instead: Option<String>,
}

/// What the console knows about strong customer authentication in this run.
#[derive(Debug, Default)]
pub(crate) struct ScaState {
    /// The scaRedirect of the last response asking for SCA (shown while the
    /// [`super::overlay::Overlay::ScaPrompt`] is open; `o` opens it).
    pub(crate) prompt: Option<ScaPrompt>,
    /// SCA completed since the last send (the guide suggests sending again).
    pub(crate) done: bool,
    /// paymentIds answered 201 in this run that can still go in a signing basket (for its
    /// body): a payment leaves when its own SCA completes or a basket takes it.
    pub(crate) payments_created: Vec<String>,
    /// The payment or basket whose SCA the prompt is for (its status is read after SCA).
    pub(crate) subject: Option<ScaSubject>,
    /// The status read started by a completed payment, basket or consent SCA, until it
    /// answers ([`App::status_read`]).
    pub(crate) status_read: Option<crate::client::engine::PendingSca>,
    /// What that status read found ("payment … approved: ACSC"), for the guide.
    pub(crate) outcome: Option<String>,
    /// What the consent's SCA callback brought ("SCA complete: PSU-ID … (CORPORATE
    /// context)"), kept in front of the status read's outcome so the room still reads it.
    pub(crate) learned: Option<String>,
}

/// A payment or signing basket that asked for SCA: after SCA the console reads its status
/// (GET …/status) instead of sending the creating POST again (which would create another
/// resource).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScaSubject {
    /// `payment` or `basket`.
    pub(crate) kind: &'static str,
    /// paymentId or basketId.
    pub(crate) id: String,
}

impl App {
    /// A console showing the whole operation catalogue, grouped, with the first operation
    /// ("List accounts") selected and a welcome message.
    pub fn new(status: StatusInfo) -> Self {
        let mut app = App {
            theme: Theme::dark(),
            mask_volatile: false,
            profiles: ProfileList {
                names: vec![status.profile.clone()],
                errors: Vec::new(),
            },
            status,
            form: Form::default(),
            panes: Panes::default(),
            request: RequestPane {
                preview: Preview::None,
                dirty: true,
                sending: false,
                sent_instead: None,
            },
            response_pane: Default::default(),
            sca: ScaState::default(),
            overlays: Overlays::default(),
            messages: StatusLine::default(),
            screen: Screen::Console,
            screens: Default::default(),
            editor: Default::default(),
            keymap: Default::default(),
            themes: Default::default(),
            confirm: None,
            lesson: Default::default(),
            presenter: Default::default(),
            quit: false,
        };
        app.messages.show(match &app.status.listener_error {
            Some(e) => Message {
                level: Level::Warning,
                text: format!(
                    "The SCA callback listener is not running ({e}); SCA results cannot arrive"
                ),
            },
            None => Message {
                level: Level::Info,
                text:
                    "Welcome. Pick an operation with ↑/↓ and press s to send it; ? lists every key."
                        .into(),
            },
        });
        app
    }

    /// Lists the loaded profiles (for the picker) and reports profile files that failed to
    /// load.
    pub fn set_profiles(&mut self, set: &ProfileSet) {
        self.profiles.names = set.profiles.iter().map(|p| p.name.clone()).collect();
        if !self.profiles.names.contains(&self.status.profile) {
            self.profiles.names.insert(0, self.status.profile.clone());
        }
        self.profiles.errors = set.errors.iter().map(|e| e.to_string()).collect();
        for e in &set.errors {
            self.log_problem(Message {
                level: Level::Warning,
                text: e.to_string(),
            });
        }
        if !set.errors.is_empty() {
            self.set_message(
                Level::Warning,
                format!(
                    "{} profile file(s) could not be read; press p to see which",
                    set.errors.len()
                ),
            );
        }
    }

    /// The status bar data.
    pub fn status(&self) -> &StatusInfo {
        &self.status
    }

    /// Replaces the status bar data (after SCA, a session reset or a profile switch).
    pub fn set_status(&mut self, status: StatusInfo) {
        self.status = status;
    }

    /// The operations in display order (grouped).
    pub fn operations(&self) -> &[&'static Operation] {
        &self.form.ops
    }

    /// The selected operation.
    pub fn selected_operation(&self) -> &'static Operation {
        self.form.operation()
    }

    /// Selects the operation with id `id`; false when there is none.
    pub fn select_operation(&mut self, id: &str) -> bool {
        match self.form.index_of(id) {
            Some(i) => {
                self.select_index(i);
                true
            }
            None => false,
        }
    }

    pub(crate) fn select_index(&mut self, i: usize) {
        if i != self.form.selected {
            self.form.selected = i;
            self.form.field = 0;
            self.panes.scroll[0] = 0;
            self.panes.scroll[1] = 0;
            self.request.dirty = true;
        }
    }

    /// The value typed for parameter `name` of operation `op_id` (`""` when empty).
    pub fn param_value(&self, op_id: &str, name: &str) -> Option<&str> {
        self.form.value(op_id, name)
    }

    /// Sets parameter `name` of operation `op_id`; false when there is no such parameter.
    pub fn set_param(&mut self, op_id: &str, name: &str, value: &str) -> bool {
        match self.form.set(op_id, name, value) {
            Some(selected) => {
                self.request.dirty |= selected;
                true
            }
            None => false,
        }
    }

    /// Current mode.
    pub fn mode(&self) -> Mode {
        self.form.mode
    }

    /// Focused pane.
    pub fn focus(&self) -> Focus {
        self.panes.focus
    }

    /// Index of the highlighted parameter in the form.
    pub fn field_index(&self) -> usize {
        self.form.field
    }

    /// The screen shown.
    pub fn screen(&self) -> Screen {
        self.screen
    }

    /// Whether the help overlay is shown.
    pub fn help_visible(&self) -> bool {
        self.overlays.is_open(Layer::Help)
    }

    /// The scaRedirect URL when the SCA prompt is shown.
    pub fn sca_prompt(&self) -> Option<&ScaPrompt> {
        self.sca
            .prompt
            .as_ref()
            .filter(|_| self.overlays.is_open(Layer::ScaPrompt))
    }

    /// The status-line message.
    pub fn message(&self) -> Option<&Message> {
        self.messages.message()
    }

    /// Sets the status-line message.
    pub fn set_message(&mut self, level: Level, text: impl Into<String>) {
        self.messages.set(level, text);
    }

    /// Adds `m` to the problems log (not the status line); a repeat of the last entry is
    /// not added again.
    pub(crate) fn log_problem(&mut self, m: Message) {
        self.messages.log_problem(m);
    }

    /// The warnings and errors seen so far, oldest first (what `!` lists).
    pub fn log(&self) -> &[Message] {
        self.messages.log()
    }

    /// Whether the problems overlay is shown.
    pub fn log_visible(&self) -> bool {
        self.overlays.is_open(Layer::Problems)
    }

    /// The destructive action waiting for y/N, if any.
    pub fn pending_confirm(&self) -> Option<&Confirm> {
        self.confirm.as_ref()
    }

    /// Whether a quit key was pressed.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// The request pane's content.
    pub fn preview(&self) -> &Preview {
        &self.request.preview
    }

    /// The response pane's content.
    pub fn response(&self) -> &ResponseState {
        &self.response_pane.state
    }

    /// Whether a request is in flight.
    pub fn is_sending(&self) -> bool {
        self.request.sending
    }

    /// First visible line of the response pane.
    pub fn response_scroll(&self) -> usize {
        self.response_pane.scroll()
    }

    /// Scrolls the response so that display line `line` is the first visible one (clamped
    /// at the last draw's bottom).
    pub fn scroll_response_to(&mut self, line: usize) {
        self.response_pane.scroll_to(line);
    }

    /// The response pane's search or filter box, when one is open.
    pub fn response_input(&self) -> Option<&super::response::InputBox> {
        self.response_pane.input_box()
    }

    /// The highlighted entry of the response's link chooser, when it is open.
    pub fn link_chooser(&self) -> Option<usize> {
        self.response_pane
            .chooser()
            .filter(|_| self.overlays.is_open(Layer::LinkChooser))
    }

    /// Shows the outcome of a jq filter ([`Action::RunFilter`]) in the response pane;
    /// ignored when the response or the filter changed meanwhile.
    pub fn filter_finished(&mut self, done: super::response::FilterDone) {
        self.on_response(|pane, ctx| {
            pane.filter_finished(done, ctx);
            None
        });
    }

    /// The console pane drawn as focused: the parameters while typing in INSERT mode, else
    /// the focused one.
    pub(crate) fn shown_focus(&self) -> Focus {
        match self.form.mode {
            Mode::Insert => Focus::Params,
            Mode::Normal => self.panes.focus,
        }
    }

    /// The request to prepare for the selected operation now.
    pub fn request_spec(&self) -> RequestSpec {
        self.form.request_spec()
    }
}

/// The console's setup (keys and themes of the config file, [`super::config`]).
impl App {
    /// Takes the keys, themes and start theme of `setup`; its problems, if any, go to the
    /// status line.
    pub fn apply_setup(&mut self, setup: super::config::Setup) {
        self.keymap = setup.keymap;
        self.themes = setup.themes;
        self.theme = setup.theme;
        self.presenter.mask_customer_numbers = setup.mask_customer_numbers;
        if self.presenter.on {
            // Presenter mode keeps high contrast; the file's theme comes back when it is off.
            self.presenter.on = false;
            self.set_presenter(true);
        }
        for p in &setup.problems {
            self.log_problem(Message {
                level: Level::Warning,
                text: p.clone(),
            });
        }
        match setup.problems.len() {
            0 => {}
            1 => self.messages.show(Message {
                level: Level::Warning,
                text: format!("{} (! lists problems)", setup.problems[0]),
            }),
            n => self.messages.show(Message {
                level: Level::Warning,
                text: format!(
                    "{n} config problems (! lists them): {}",
                    setup.problems.join("; ")
                ),
            }),
        }
    }

    /// The keys in force.
    pub fn keymap(&self) -> &keymap::Keymap {
        &self.keymap
    }
}

impl App {
    /// Switches to the next theme of [`App::themes`] and says which in the status line.
    pub(crate) fn cycle_theme(&mut self) {
        self.theme = self.themes.next(&self.theme.name);
        let names = self.themes.names();
        let pos = names
            .iter()
            .position(|n| *n == self.theme.name)
            .unwrap_or(0);
        let key = self
            .keymap
            .key_for(keymap::Scope::Normal, Command::ToggleTheme);
        let text = format!(
            "Theme: {} ({} of {}: {}){}",
            self.theme.name,
            pos + 1,
            names.len(),
            names.join(", "),
            if key.is_empty() {
                String::new()
            } else {
                format!(" · {key} for the next")
            }
        );
        self.set_message(Level::Info, text);
    }

    /// The themes `t` cycles through.
    pub fn themes(&self) -> &super::theme::ThemeSet {
        &self.themes
    }

    /// Replaces the themes `t` cycles through (the theme shown stays until the next `t`).
    pub fn set_themes(&mut self, themes: super::theme::ThemeSet) {
        self.themes = themes;
    }
}

/// Presenter mode (issue 12, item 4; [`super::presenter`]).
impl App {
    /// Whether presenter mode is on.
    pub fn presenter(&self) -> bool {
        self.presenter.on
    }

    /// Switches presenter mode on (secrets and PSU data masked on screen, the high-contrast
    /// theme, the step line, the compact layouts) or off (the theme shown before comes
    /// back), and says so in the status line.
    pub fn set_presenter(&mut self, on: bool) {
        if on == self.presenter.on {
            return;
        }
        self.presenter.on = on;
        if on {
            let high = self
                .themes
                .select(super::presenter::PRESENTER_THEME)
                .unwrap_or_else(|_| Theme::high_contrast());
            self.presenter.theme_before = Some(std::mem::replace(&mut self.theme, high));
        } else if let Some(before) = self.presenter.theme_before.take() {
            self.theme = before;
        }
        let key = self
            .keymap
            .key_for(Scope::NotInsert, Command::TogglePresenter);
        let again = if key.is_empty() {
            String::new()
        } else {
            format!(" · {key} switches it {}", if on { "off" } else { "on" })
        };
        self.set_message(
            Level::Info,
            if on {
                format!("Presenter mode: secrets and PSU data masked on screen{again}")
            } else {
                format!(
                    "Presenter mode off: values in full, theme {}{again}",
                    self.theme.name
                )
            },
        );
    }

    /// Also shortens sandbox customer numbers (`customerNumber`) in presenter mode (the
    /// config file's `[presenter] mask_customer_numbers`).
    pub fn set_mask_customer_numbers(&mut self, on: bool) {
        self.presenter.mask_customer_numbers = on;
    }

    /// The masking function of this frame ([`super::presenter::ScreenMask`]): off outside
    /// presenter mode; else it knows the PSU's identifiers of the session and the secrets
    /// and PSU headers of the request on screen.
    pub(crate) fn screen_mask(&self) -> super::presenter::ScreenMask {
        use super::presenter::ScreenMask;
        if !self.presenter.on {
            return ScreenMask::off();
        }
        let mut m = ScreenMask::on(self.presenter.mask_customer_numbers);
        for v in [&self.status.psu_id, &self.status.psu_corporate_id]
            .into_iter()
            .flatten()
        {
            m.know_personal(v);
        }
        if let Preview::Ready { request, .. } = &self.request.preview {
            m.know_headers(&request.headers);
        }
        m
    }

    /// What the presenter's step line says ([`super::presenter::step_text`]).
    pub fn presenter_step(&self) -> String {
        use super::presenter::{StepFacts, step_text};
        use crate::xs2a::operations::Group;
        let (response, failed) = match &self.response_pane.state {
            ResponseState::Done(v) => (
                Some((v.status, v.status_text(), v.operation.as_str())),
                None,
            ),
            ResponseState::Failed(e) => (None, Some(e.as_str())),
            _ => (None, None),
        };
        let sca_waiting = self.sca.prompt.is_some()
            && matches!(&self.response_pane.state, ResponseState::Done(v) if v.sca_redirect.is_some());
        step_text(&StepFacts {
            operation: self.selected_operation().title,
            sending: self.request.sending,
            sca_waiting,
            sca_done: self.sca.done,
            status_read: self.sca.status_read.as_ref().map(|f| {
                format!(
                    "{} {}",
                    f.flow.noun(),
                    f.resource_id.as_deref().unwrap_or_default()
                )
            }),
            outcome: self.sca.outcome.as_deref(),
            response,
            failed,
            psu_known: self.status.psu_id.is_some(),
            consent_operation: self.selected_operation().group == Group::Ais,
            consent_response: matches!(&self.response_pane.state, ResponseState::Done(v)
                if v.operation == super::status_read_title(crate::client::engine::ScaFlow::Consent)
                    || crate::xs2a::operations::OPERATIONS
                        .iter()
                        .any(|o| o.title == v.operation && o.group == Group::Ais)),
        })
    }
}
