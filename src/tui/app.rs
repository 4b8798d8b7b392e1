//! The console's state: pure data, no terminal and no engine, so every screen can be built
//! and rendered in tests. The runner ([`super::run`]) feeds it keys, prepared requests,
//! responses and SCA callbacks, and performs the [`Action`]s it returns.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::keymap::{self, Command, Context};
use super::theme::Theme;
use crate::client::{Engine, PreparedRequest};
use crate::profile::{ProfileSet, Target};
use crate::xs2a::headers as h;
use crate::xs2a::operations::{OPERATIONS, Operation};
use crate::xs2a::redirect::ScaCallback;

/// What the runner must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing beyond redrawing.
    None,
    /// Leave the console.
    Quit,
    /// Prepare (sign) the selected operation afresh and send it ([`App::request_spec`]).
    Send,
    /// Open this URL in the browser.
    OpenBrowser(String),
    /// Forget the PSU-ID and start a new TPP session ([`crate::client::Engine::reset_session`]).
    ResetSession,
    /// Start the profile with this name and make it active.
    SwitchProfile(String),
    /// Read the profiles again for the profiles screen ([`App::set_profiles`]).
    LoadProfiles,
    /// Read the history for the history screen ([`super::history::load`] with
    /// [`App::history_query`], then [`App::set_history`]).
    LoadHistory,
    /// Re-send the history exchange with this id, prepared and signed afresh
    /// ([`crate::client::export::reprepare`]).
    ResendHistory(i64),
    /// Write the history exchange with this id as a cURL command, signed afresh, to a file
    /// in the data dir.
    ExportHistoryCurl(i64),
    /// Import the requests of this file (Postman, HAR, cURL) ([`App::set_imported`]).
    ImportFile(String),
    /// Send the imported request at this index ([`App::imported_request`]), re-signed with
    /// the active profile.
    SendImported(usize),
    /// Copy this text to the clipboard (OSC 52, [`crossterm::clipboard::CopyToClipboard`]).
    Copy(String),
    /// Evaluate a jq filter off the UI task ([`super::response::spawn_filter`]), then
    /// [`App::filter_finished`].
    RunFilter(super::response::FilterJob),
}

/// The screens, switched with `1`/`2`/`3` (F1–F3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Screen {
    /// Operations, parameters, request, signature, response.
    #[default]
    Console,
    /// Profiles, their certificates and session state ([`super::profiles`]).
    Profiles,
    /// Every exchange sent ([`super::history`]).
    History,
}

/// The panes that can have focus, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The operation list.
    Operations,
    /// The parameter form of the selected operation.
    Params,
    /// The request as it will be (or was) sent.
    Request,
    /// The signature inspector.
    Signature,
    /// The response.
    Response,
}

impl Focus {
    const ORDER: [Focus; 5] = [
        Focus::Operations,
        Focus::Params,
        Focus::Request,
        Focus::Signature,
        Focus::Response,
    ];

    fn index(self) -> usize {
        Focus::ORDER.iter().position(|f| *f == self).unwrap_or(0)
    }

    /// Index into the scroll state of scrollable panes.
    fn scroll_slot(self) -> Option<usize> {
        match self {
            Focus::Request => Some(0),
            Focus::Signature => Some(1),
            Focus::Response => Some(2),
            _ => None,
        }
    }
}

/// Whether keys type text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Keys are commands.
    Normal,
    /// Keys type into the highlighted parameter (only Ctrl-c and the INSERT keys are
    /// commands).
    Insert,
}

/// Severity of a status-line message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Neutral information.
    Info,
    /// Something worked.
    Success,
    /// Needs attention.
    Warning,
    /// Failed.
    Error,
}

/// A status-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Severity.
    pub level: Level,
    /// One line of text.
    pub text: String,
}

/// What the status bar shows about the active profile and session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatusInfo {
    /// Profile name.
    pub profile: String,
    /// Base URL requests go to.
    pub base_url: String,
    /// Whether the target is the embedded sandbox.
    pub embedded: bool,
    /// PSU-ID learned from SCA.
    pub psu_id: Option<String>,
    /// PSU-Corporate-ID learned from SCA (corporate context).
    pub psu_corporate_id: Option<String>,
    /// `PRIVATE` or `CORPORATE`.
    pub context: Option<String>,
    /// The TPP-Redirect-URI sent (where the SCA callback arrives).
    pub redirect_uri: String,
    /// Why the redirect listener is not running, if it is not.
    pub listener_error: Option<String>,
}

impl StatusInfo {
    /// The status of a running engine.
    pub fn from_engine(engine: &Engine) -> Self {
        StatusInfo {
            profile: engine.profile.name.clone(),
            base_url: engine.base_url.clone(),
            embedded: engine.profile.target == Target::Embedded,
            psu_id: engine.session.psu_id.clone(),
            psu_corporate_id: engine.session.psu_corporate_id.clone(),
            context: engine.session.context.map(|c| c.as_str().to_string()),
            redirect_uri: engine.redirect_uri.clone(),
            listener_error: engine.listener_error.clone(),
        }
    }
}

/// One entry of an operation's parameter form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Parameter name (`body` for the JSON body).
    pub name: &'static str,
    /// Short explanation.
    pub help: &'static str,
    /// Whether the request cannot be built without it.
    pub required: bool,
    /// Value used when left empty (`""`: omitted).
    pub default: &'static str,
    /// The JSON body rather than a path or query parameter.
    pub is_body: bool,
    /// A request header ([`crate::xs2a::operations::ParamKind::Header`]).
    pub is_header: bool,
    /// The engine fills it when left empty (shown as `auto`).
    pub auto: bool,
}

/// The form fields of `op`: its path and query parameters, `body` when it takes one, then
/// its request headers ([`Operation::header_params`]).
pub fn fields_of(op: &Operation) -> Vec<Field> {
    let field = |p: &crate::xs2a::operations::Param| Field {
        name: p.name,
        help: p.help,
        required: p.required,
        default: p.default,
        is_body: false,
        is_header: p.kind == crate::xs2a::operations::ParamKind::Header,
        auto: p.auto,
    };
    let mut v: Vec<Field> = op.params.iter().map(field).collect();
    if op.body.is_some() {
        v.push(Field {
            name: "body",
            help: "JSON body: Enter or e opens the editor (templates: Ctrl-t)",
            required: false,
            default: "",
            is_body: true,
            is_header: false,
            auto: false,
        });
    }
    v.extend(op.header_params().iter().map(field));
    v
}

/// What to prepare: the operation, its non-empty parameter values, and the body text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSpec {
    /// The operation.
    pub op: &'static Operation,
    /// `(name, value)` of every parameter the user filled in.
    pub params: Vec<(String, String)>,
    /// The body text, when the operation takes one.
    pub body: Option<String>,
}

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaPrompt {
    /// The URL the PSU must open.
    pub url: String,
    /// Outcome of the last attempt to open a browser, if any.
    pub browser: Option<Result<(), String>>,
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
    pub(crate) ops: Vec<&'static Operation>,
    pub(crate) selected: usize,
    pub(crate) values: Vec<Vec<String>>,
    pub(crate) focus: Focus,
    pub(crate) mode: Mode,
    pub(crate) field: usize,
    pub(crate) cursor: usize,
    pub(crate) preview: Preview,
    preview_dirty: bool,
    pub(crate) response: ResponseState,
    /// Scroll offsets of Request, Signature, Response.
    pub(crate) scroll: [usize; 3],
    pub(crate) hscroll: usize,
    /// Visible height and content length of the scrollable panes at the last draw.
    pub(crate) viewport: [Cell<usize>; 3],
    pub(crate) content: [Cell<usize>; 3],
    pub(crate) sca: Option<ScaPrompt>,
    pub(crate) sca_visible: bool,
    pub(crate) help: bool,
    pub(crate) picker: Option<usize>,
    pub(crate) profiles: Vec<String>,
    pub(crate) profile_errors: Vec<String>,
    pub(crate) message: Option<Message>,
    pub(crate) sending: bool,
    /// SCA completed since the last send (the guide suggests sending again).
    pub(crate) sca_done: bool,
    /// The screen shown.
    pub(crate) screen: Screen,
    /// State of the profiles screen.
    pub(crate) profiles_view: super::profiles::ProfilesView,
    /// State of the history screen.
    pub(crate) history_view: super::history::HistoryView,
    /// The body editor and the validation problems ([`super::editor`]).
    pub(crate) editor: super::editor::EditorState,
    /// The operation finder (`/`), while open.
    pub(crate) finder: Option<super::catalogue::OperationFinder>,
    /// State of the response viewer (search and filter boxes, link chooser).
    pub(crate) response_ui: super::response::ResponseUi,
    /// The keys in force: the keymap with the config file's overrides ([`super::config`]).
    pub(crate) keymap: keymap::Keymap,
    /// The themes `t` cycles through ([`super::theme::ThemeSet`]).
    pub(crate) themes: super::theme::ThemeSet,
    /// The command palette (`Ctrl-p`, [`super::palette`]).
    pub(crate) palette: super::palette::PaletteView,
    /// Scroll state of the help overlay ([`super::palette::HelpView`]).
    pub(crate) help_view: super::palette::HelpView,
    /// Pane rectangles of the last draw, for the mouse ([`super::mouse`]).
    pub(crate) hit: super::mouse::HitAreas,
    auto_account_id: Option<String>,
    quit: bool,
}

impl App {
    /// A console showing the whole operation catalogue, grouped, with the first operation
    /// ("List accounts") selected and a welcome message.
    pub fn new(status: StatusInfo) -> Self {
        let mut ops: Vec<&'static Operation> = OPERATIONS.iter().collect();
        ops.sort_by_key(|o| o.group); // stable: catalogue order within a group
        let values = ops
            .iter()
            .map(|o| vec![String::new(); fields_of(o).len()])
            .collect();
        let mut app = App {
            theme: Theme::dark(),
            mask_volatile: false,
            profiles: vec![status.profile.clone()],
            status,
            ops,
            selected: 0,
            values,
            focus: Focus::Operations,
            mode: Mode::Normal,
            field: 0,
            cursor: 0,
            preview: Preview::None,
            preview_dirty: true,
            response: ResponseState::Empty,
            scroll: [0; 3],
            hscroll: 0,
            viewport: Default::default(),
            content: Default::default(),
            sca: None,
            sca_visible: false,
            help: false,
            picker: None,
            profile_errors: Vec::new(),
            message: None,
            sending: false,
            sca_done: false,
            screen: Screen::Console,
            profiles_view: Default::default(),
            history_view: Default::default(),
            editor: Default::default(),
            finder: None,
            response_ui: Default::default(),
            keymap: Default::default(),
            themes: Default::default(),
            palette: Default::default(),
            help_view: Default::default(),
            hit: Default::default(),
            auto_account_id: None,
            quit: false,
        };
        app.message = Some(match &app.status.listener_error {
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
        self.profiles = set.profiles.iter().map(|p| p.name.clone()).collect();
        if !self.profiles.contains(&self.status.profile) {
            self.profiles.insert(0, self.status.profile.clone());
        }
        self.profile_errors = set.errors.iter().map(|e| e.to_string()).collect();
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
        &self.ops
    }

    /// The selected operation.
    pub fn selected_operation(&self) -> &'static Operation {
        self.ops[self.selected]
    }

    /// Selects the operation with id `id`; false when there is none.
    pub fn select_operation(&mut self, id: &str) -> bool {
        match self.ops.iter().position(|o| o.id == id) {
            Some(i) => {
                self.select_index(i);
                true
            }
            None => false,
        }
    }

    pub(crate) fn select_index(&mut self, i: usize) {
        if i != self.selected {
            self.selected = i;
            self.field = 0;
            self.scroll[0] = 0;
            self.scroll[1] = 0;
            self.preview_dirty = true;
        }
    }

    /// The value typed for parameter `name` of operation `op_id` (`""` when empty).
    pub fn param_value(&self, op_id: &str, name: &str) -> Option<&str> {
        let oi = self.ops.iter().position(|o| o.id == op_id)?;
        let fi = fields_of(self.ops[oi])
            .iter()
            .position(|f| f.name == name)?;
        Some(self.values[oi][fi].as_str())
    }

    /// Sets parameter `name` of operation `op_id`; false when there is no such parameter.
    pub fn set_param(&mut self, op_id: &str, name: &str, value: &str) -> bool {
        let Some(oi) = self.ops.iter().position(|o| o.id == op_id) else {
            return false;
        };
        let Some(fi) = fields_of(self.ops[oi]).iter().position(|f| f.name == name) else {
            return false;
        };
        self.values[oi][fi] = value.to_string();
        if oi == self.selected {
            self.preview_dirty = true;
        }
        true
    }

    /// Current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Focused pane.
    pub fn focus(&self) -> Focus {
        self.focus
    }

    /// Index of the highlighted parameter in the form.
    pub fn field_index(&self) -> usize {
        self.field
    }

    /// The screen shown.
    pub fn screen(&self) -> Screen {
        self.screen
    }

    /// Whether the help overlay is shown.
    pub fn help_visible(&self) -> bool {
        self.help
    }

    /// The scaRedirect URL when the SCA prompt is shown.
    pub fn sca_prompt(&self) -> Option<&ScaPrompt> {
        self.sca.as_ref().filter(|_| self.sca_visible)
    }

    /// The status-line message.
    pub fn message(&self) -> Option<&Message> {
        self.message.as_ref()
    }

    /// Sets the status-line message.
    pub fn set_message(&mut self, level: Level, text: impl Into<String>) {
        self.message = Some(Message {
            level,
            text: text.into(),
        });
    }

    /// Whether a quit key was pressed.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// The request pane's content.
    pub fn preview(&self) -> &Preview {
        &self.preview
    }

    /// The response pane's content.
    pub fn response(&self) -> &ResponseState {
        &self.response
    }

    /// Whether a request is in flight.
    pub fn is_sending(&self) -> bool {
        self.sending
    }

    /// First visible line of the response pane.
    pub fn response_scroll(&self) -> usize {
        self.scroll[2]
    }

    /// The request to prepare for the selected operation now.
    pub fn request_spec(&self) -> RequestSpec {
        let op = self.ops[self.selected];
        let mut params = Vec::new();
        let mut body = None;
        for (f, v) in fields_of(op).iter().zip(&self.values[self.selected]) {
            if f.is_body {
                body = Some(v.clone()).filter(|b| !b.trim().is_empty());
            } else if !v.is_empty() {
                params.push((f.name.to_string(), v.clone()));
            }
        }
        RequestSpec { op, params, body }
    }

    /// The request to prepare for the preview, when the selection or the parameters changed
    /// since the last call (so signing happens only on change, never per frame).
    pub fn take_prepare_request(&mut self) -> Option<RequestSpec> {
        if !self.preview_dirty {
            return None;
        }
        self.preview_dirty = false;
        Some(self.request_spec())
    }

    /// Shows a prepared preview (or why it cannot be built).
    pub fn set_preview(&mut self, result: Result<PreparedRequest, String>) {
        self.preview = match result {
            Ok(r) => Preview::Ready {
                request: Box::new(self.displayed(r)),
                sent: false,
            },
            Err(e) => Preview::Error(humanize(&e)),
        };
    }

    fn displayed(&self, r: PreparedRequest) -> PreparedRequest {
        if self.mask_volatile {
            mask_request(r)
        } else {
            r
        }
    }

    /// Records that `request` is being sent: the request pane shows it as sent and the
    /// response pane waits.
    pub fn begin_send(&mut self, request: PreparedRequest) {
        self.response = ResponseState::Sending {
            method: request.method.clone(),
            url: request.url.clone(),
        };
        self.preview = Preview::Ready {
            request: Box::new(self.displayed(request)),
            sent: true,
        };
        self.sending = true;
        self.sca_done = false;
        self.sca_visible = false;
        self.set_message(
            Level::Info,
            format!("Sending {} …", self.ops[self.selected].title),
        );
    }

    /// Shows the outcome of a send. A scaRedirect opens the SCA prompt; an account list
    /// pre-fills `account-id` of the other operations (unless the user typed one).
    pub fn finish_send(&mut self, result: Result<ResponseView, String>) {
        self.sending = false;
        self.scroll[2] = 0;
        self.hscroll = 0;
        self.response_ui = Default::default();
        let view = match result {
            Ok(v) => v,
            Err(e) => {
                self.set_message(Level::Error, e.clone());
                self.response = ResponseState::Failed(e);
                return;
            }
        };
        let status = view.status_text();
        let ms = view.elapsed_ms();
        if let Some(url) = &view.sca_redirect {
            self.sca = Some(ScaPrompt {
                url: url.clone(),
                browser: None,
            });
            self.sca_visible = true;
            self.set_message(
                Level::Warning,
                format!(
                    "{status} in {ms} ms: the bank asks for SCA. Press o to open the browser, or open the URL in the prompt"
                ),
            );
        } else {
            let level = if (200..300).contains(&view.status) {
                Level::Success
            } else if view.status >= 500 {
                Level::Error
            } else {
                Level::Warning
            };
            self.set_message(level, format!("{status} in {ms} ms ({})", view.operation));
        }
        if let Some(id) = view.first_account_id.clone() {
            self.prefill_account_id(&id);
        }
        self.response = ResponseState::Done(Box::new(view));
    }

    fn prefill_account_id(&mut self, id: &str) {
        let mut filled = Vec::new();
        for (oi, op) in self.ops.iter().enumerate() {
            if let Some(fi) = fields_of(op).iter().position(|f| f.name == "account-id") {
                let cur = &self.values[oi][fi];
                if cur.is_empty() || Some(cur) == self.auto_account_id.as_ref() {
                    if cur != id {
                        filled.push(op.title);
                        if oi == self.selected {
                            self.preview_dirty = true;
                        }
                    }
                    self.values[oi][fi] = id.to_string();
                }
            }
        }
        self.auto_account_id = Some(id.to_string());
        if !filled.is_empty()
            && let Some(m) = &mut self.message
        {
            m.text.push_str(&format!(
                "; account-id {id} filled in for {}",
                filled.join(", ")
            ));
        }
    }

    /// Shows the outcome of an SCA callback: `summary` is what
    /// [`crate::client::Engine::apply_callback`] returned, `status` the updated status bar.
    /// Success closes the prompt and re-prepares the request (now with PSU-ID).
    pub fn sca_finished(
        &mut self,
        callback: &ScaCallback,
        summary: Result<String, String>,
        status: StatusInfo,
    ) {
        self.status = status;
        self.sca_visible = false;
        self.preview_dirty = true;
        match (callback, summary) {
            (ScaCallback::Success(_), Ok(s)) => {
                self.sca = None;
                self.sca_done = true;
                self.set_message(Level::Success, s);
            }
            (ScaCallback::Failure(_), Ok(s)) => self.set_message(Level::Error, s),
            (_, Err(e)) => self.set_message(
                Level::Error,
                format!("The SCA result could not be stored: {e}"),
            ),
        }
    }

    /// Shows the outcome of opening the browser.
    pub fn browser_opened(&mut self, result: Result<(), String>) {
        match &result {
            Ok(()) => self.set_message(
                Level::Info,
                "Browser opened: complete SCA there; the console updates by itself",
            ),
            Err(e) => self.set_message(
                Level::Error,
                format!("Could not open a browser ({e}); copy the URL from the prompt"),
            ),
        }
        if let Some(p) = &mut self.sca {
            p.browser = Some(result);
        }
    }

    /// Records a session reset: new status, re-prepared request.
    pub fn session_reset(&mut self, status: StatusInfo) {
        self.status = status;
        self.sca_done = false;
        self.preview_dirty = true;
        self.sca = None;
        self.sca_visible = false;
        self.set_message(
            Level::Info,
            "Session reset: PSU-ID forgotten, new TPP-Session-ID",
        );
    }

    /// Records a profile switch: new status, the request re-prepared for the new target.
    pub fn profile_switched(&mut self, status: StatusInfo) {
        self.set_message(
            Level::Success,
            format!("Profile {} is active", status.profile),
        );
        self.status = status;
        self.preview_dirty = true;
        self.sca = None;
        self.sca_visible = false;
        self.response = ResponseState::Empty;
        self.scroll = [0; 3];
    }

    /// Asks for the request preview to be prepared again.
    pub fn invalidate_preview(&mut self) {
        self.preview_dirty = true;
    }

    pub(crate) fn context(&self) -> Context {
        if self.mode == Mode::Insert {
            Context::Insert
        } else if self.palette.open {
            Context::Palette
        } else if self.help {
            Context::Help
        } else if self.picker.is_some() {
            Context::Picker
        } else if self.response_ui.chooser.is_some() {
            Context::LinkChooser
        } else if self.sca_prompt().is_some() {
            Context::ScaPrompt
        } else if self.screen == Screen::Profiles {
            Context::Profiles
        } else if self.screen == Screen::History {
            Context::History
        } else {
            Context::Normal {
                params_focused: self.focus == Focus::Params,
                response_focused: self.focus == Focus::Response,
            }
        }
    }

    /// Handles one key and says what the runner must do.
    pub fn handle_key(&mut self, key: KeyEvent) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        let ctx = self.context();
        if ctx != Context::Insert
            && self.keymap.lookup(ctx, &key) != Some(Command::ForceQuit)
            && let Some(action) = self.text_input_key(&key)
        {
            return action;
        }
        match self.keymap.lookup(ctx, &key) {
            Some(cmd) => self.command(ctx, cmd),
            None => {
                if ctx == Context::Insert
                    && let KeyCode::Char(c) = key.code
                    && !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                {
                    self.type_char(c);
                }
                Action::None
            }
        }
    }

    /// Handles pasted text (bracketed paste): typed into the parameter being edited, line
    /// breaks dropped; outside INSERT mode it is ignored, so a paste never fires commands.
    pub fn handle_paste(&mut self, text: &str) {
        if self.profiles_paste(text) {
            return;
        }
        if self.body_editor_paste(text) {
            return;
        }
        if self.response_paste(text) {
            return;
        }
        if self.mode != Mode::Insert {
            self.set_message(
                Level::Info,
                "Paste ignored: press e to edit a parameter first",
            );
            return;
        }
        for c in text.chars().filter(|c| *c != '\n' && *c != '\r') {
            self.type_char(c);
        }
    }

    /// Text inputs of the components (boxes, forms, editors) get keys before the keymap, so
    /// typing never triggers a command; each returns `None` when it is not active. Ctrl-c
    /// never reaches them.
    fn text_input_key(&mut self, key: &KeyEvent) -> Option<Action> {
        if let Some(a) = self.body_editor_key(key) {
            return Some(a);
        }
        if let Some(a) = self.palette_key(key) {
            return Some(a);
        }
        if let Some(a) = self.finder_key(key) {
            return Some(a);
        }
        if let Some(a) = self.response_input_key(key) {
            return Some(a);
        }
        if let Some(a) = self.history_text_input(key) {
            return Some(a);
        }
        if let Some(a) = self.profiles_text_input(key) {
            return Some(a);
        }
        None
    }

    /// Whether the screen's own commands take `cmd` (see [`super::profiles`] and
    /// [`super::history`]).
    fn screen_command(&mut self, ctx: Context, cmd: Command) -> Option<Action> {
        match ctx {
            Context::Profiles => self.profiles_command(cmd),
            Context::History => self.history_command(cmd),
            Context::Help => self.help_command(cmd),
            Context::LinkChooser => self.links_command(cmd),
            _ => None,
        }
    }

    pub(crate) fn command(&mut self, ctx: Context, cmd: Command) -> Action {
        if let Some(action) = self.screen_command(ctx, cmd) {
            return action;
        }
        match cmd {
            Command::ShowConsole => self.screen = Screen::Console,
            Command::ResponseSearch
            | Command::ResponseFilter
            | Command::SearchNext
            | Command::SearchPrev
            | Command::CopyBody
            | Command::FollowLink
            | Command::ClearResponse => return self.response_command(cmd),
            Command::FindOperation => {
                self.focus = Focus::Operations;
                self.open_finder();
            }
            Command::ShowProfiles => {
                self.screen = Screen::Profiles;
                return Action::LoadProfiles;
            }
            Command::ShowHistory => {
                self.screen = Screen::History;
                return Action::LoadHistory;
            }
            Command::Quit | Command::ForceQuit => {
                self.quit = true;
                return Action::Quit;
            }
            Command::ToggleHelp => self.help = !self.help,
            Command::Dismiss => match ctx {
                Context::Help => self.help = false,
                Context::Picker => self.picker = None,
                Context::ScaPrompt => {
                    self.sca_visible = false;
                    self.set_message(
                        Level::Info,
                        "SCA prompt closed; press o to open the URL, s to send again after SCA",
                    );
                }
                _ => {}
            },
            Command::Up => self.move_by(ctx, -1),
            Command::Down => self.move_by(ctx, 1),
            Command::NextFocus => {
                self.focus = Focus::ORDER[(self.focus.index() + 1) % Focus::ORDER.len()]
            }
            Command::PrevFocus => {
                self.focus =
                    Focus::ORDER[(self.focus.index() + Focus::ORDER.len() - 1) % Focus::ORDER.len()]
            }
            Command::Send => {
                if self.sending {
                    self.set_message(Level::Warning, "Still waiting for the previous response");
                } else if self.validate_before_send() {
                    return Action::Send;
                }
            }
            Command::SendAnyway => {
                if self.sending {
                    self.set_message(Level::Warning, "Still waiting for the previous response");
                } else {
                    self.send_anyway();
                    return Action::Send;
                }
            }
            Command::CloseBody
            | Command::NextTemplate
            | Command::ResetBody
            | Command::FormatBody => self.body_editor_command(cmd),
            Command::EditParams => self.start_editing(),
            Command::OpenSca => match &self.sca {
                Some(p) => {
                    let url = p.url.clone();
                    self.sca_visible = true;
                    self.set_message(Level::Info, "Opening the browser …");
                    return Action::OpenBrowser(url);
                }
                None => self.set_message(
                    Level::Info,
                    "No scaRedirect to open: the last response did not ask for SCA",
                ),
            },
            Command::PageUp => self.scroll_page(-1),
            Command::PageDown => self.scroll_page(1),
            Command::Top => {
                let slot = self.scroll_target();
                self.scroll[slot] = 0;
            }
            Command::Bottom => {
                let slot = self.scroll_target();
                self.scroll[slot] = self.max_scroll(slot);
            }
            Command::ScrollLeft => self.hscroll = self.hscroll.saturating_sub(8),
            Command::ScrollRight => self.hscroll += 8,
            Command::ResetSession => return Action::ResetSession,
            Command::ToggleTheme => self.cycle_theme(),
            Command::Palette => self.open_palette(),
            Command::Profiles => {
                let cur = self
                    .profiles
                    .iter()
                    .position(|p| *p == self.status.profile)
                    .unwrap_or(0);
                self.picker = Some(cur);
            }
            Command::Choose => {
                if let Some(i) = self.picker.take()
                    && let Some(name) = self.profiles.get(i).cloned()
                {
                    if name == self.status.profile {
                        self.set_message(Level::Info, format!("Profile {name} is already active"));
                    } else {
                        self.set_message(Level::Info, format!("Starting profile {name} …"));
                        return Action::SwitchProfile(name);
                    }
                }
            }
            Command::LeaveInsert => {
                self.mode = Mode::Normal;
                self.preview_dirty = true;
                self.revalidate();
            }
            Command::NextField => self.move_field(1),
            Command::PrevField => self.move_field(-1),
            Command::Backspace => {
                if self.cursor > 0 {
                    self.cursor -= 1;
                    self.remove_at_cursor();
                }
            }
            Command::Delete => self.remove_at_cursor(),
            Command::CursorLeft => self.cursor = self.cursor.saturating_sub(1),
            Command::CursorRight => {
                self.cursor = (self.cursor + 1).min(self.current_value().chars().count())
            }
            Command::CursorHome => self.cursor = 0,
            Command::CursorEnd => self.cursor = self.current_value().chars().count(),
            Command::ClearField => {
                if let Some(v) = self.current_value_mut() {
                    v.clear();
                }
                self.cursor = 0;
                self.preview_dirty = true;
            }
            // Taken by the history screen (`history_command`); nothing elsewhere.
            Command::HistorySearch
            | Command::HistoryOpen
            | Command::HistoryResend
            | Command::HistoryMark
            | Command::HistoryDiff
            | Command::HistoryExportCurl
            | Command::HistoryImport => {}
            // Taken by the profiles screen (`profiles_command`); nothing elsewhere.
            Command::ProfileNew
            | Command::ProfileEdit
            | Command::ProfileClone
            | Command::ProfileDelete
            | Command::ProfileGenerateCert
            | Command::FormSave
            | Command::Confirm => {}
        }
        Action::None
    }

    fn move_by(&mut self, ctx: Context, delta: isize) {
        if ctx == Context::Picker {
            if let Some(i) = self.picker {
                let n = self.profiles.len().max(1);
                self.picker = Some(step(i, delta, n));
            }
            return;
        }
        match self.focus {
            Focus::Operations => {
                let i = step(self.selected, delta, self.ops.len());
                self.select_index(i);
            }
            Focus::Params => {
                let n = fields_of(self.ops[self.selected]).len();
                if n > 0 {
                    self.field = step(self.field, delta, n);
                }
            }
            f => {
                if let Some(slot) = f.scroll_slot() {
                    self.scroll_lines(slot, delta);
                }
            }
        }
    }

    fn scroll_target(&self) -> usize {
        self.focus.scroll_slot().unwrap_or(2)
    }

    fn max_scroll(&self, slot: usize) -> usize {
        let content = match (slot, &self.response) {
            (2, ResponseState::Done(v)) => v.total_lines(),
            _ => self.content[slot].get(),
        };
        content.saturating_sub(self.viewport[slot].get().max(1))
    }

    fn scroll_lines(&mut self, slot: usize, delta: isize) {
        let max = self.max_scroll(slot);
        let cur = self.scroll[slot].min(max);
        self.scroll[slot] = if delta < 0 {
            cur.saturating_sub(delta.unsigned_abs())
        } else {
            (cur + delta as usize).min(max)
        };
    }

    fn scroll_page(&mut self, dir: isize) {
        let slot = self.scroll_target();
        let page = self.viewport[slot].get().saturating_sub(1).max(1) as isize;
        self.scroll_lines(slot, dir * page);
    }

    fn start_editing(&mut self) {
        let op = self.ops[self.selected];
        let n = fields_of(op).len();
        if n == 0 {
            self.set_message(
                Level::Info,
                format!("{} has no parameters: press s to send it", op.title),
            );
            return;
        }
        self.focus = Focus::Params;
        self.field = self.field.min(n - 1);
        if fields_of(op)[self.field].is_body {
            self.open_body_editor();
            return;
        }
        self.mode = Mode::Insert;
        self.cursor = self.current_value().chars().count();
    }

    fn move_field(&mut self, delta: isize) {
        let n = fields_of(self.ops[self.selected]).len();
        if n == 0 {
            return;
        }
        self.field = step(self.field, delta, n);
        self.cursor = self.current_value().chars().count();
    }

    fn current_value(&self) -> &str {
        self.values[self.selected]
            .get(self.field)
            .map(String::as_str)
            .unwrap_or("")
    }

    fn current_value_mut(&mut self) -> Option<&mut String> {
        self.values[self.selected].get_mut(self.field)
    }

    fn type_char(&mut self, c: char) {
        let cursor = self.cursor;
        if let Some(v) = self.current_value_mut() {
            let at = byte_index(v, cursor);
            v.insert(at, c);
            self.cursor += 1;
            self.preview_dirty = true;
        }
    }

    fn remove_at_cursor(&mut self) {
        let cursor = self.cursor;
        if let Some(v) = self.current_value_mut()
            && cursor < v.chars().count()
        {
            let at = byte_index(v, cursor);
            v.remove(at);
            self.preview_dirty = true;
        }
    }
}

/// Rewrites the CLI wording of parameter errors (`needs --param account-id=...`) for the
/// console (`needs account-id`).
pub(crate) fn humanize(e: &str) -> String {
    e.replace("--param ", "").replace("=...", "")
}

fn step(i: usize, delta: isize, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    if delta < 0 {
        i.saturating_sub(delta.unsigned_abs())
    } else {
        (i + delta as usize).min(n - 1)
    }
}

fn byte_index(s: &str, char_index: usize) -> usize {
    s.char_indices()
        .nth(char_index)
        .map(|(i, _)| i)
        .unwrap_or(s.len())
}

/// Placeholders for values that change on every preparation.
const VOLATILE: [(&str, &str); 4] = [
    (h::X_REQUEST_ID, "<x-request-id>"),
    (h::DATE, "<date>"),
    (h::TPP_SESSION_ID, "<tpp-session-id>"),
    (h::TPP_SIGNATURE_CERTIFICATE, "<certificate>"),
];

/// `req` with its volatile values (X-Request-ID, Date, TPP-Session-ID, certificate,
/// keyId, the signature bytes) replaced by placeholders such as `<date>`, everywhere they
/// appear; the structure of the `Signature` header is kept.
pub fn mask_request(mut req: PreparedRequest) -> PreparedRequest {
    let mut replacements: Vec<(String, &str)> = Vec::new();
    for (name, placeholder) in VOLATILE {
        if let Some(v) = req.header(name) {
            replacements.push((v.to_string(), placeholder));
        }
    }
    replacements.push((req.inspection.key_id.clone(), "<key-id>"));
    let mask = |s: &str| {
        let mut out = s.to_string();
        for (v, p) in &replacements {
            if !v.is_empty() {
                out = out.replace(v.as_str(), p);
            }
        }
        mask_signature_bytes(&out)
    };
    for (_, v) in req.headers.iter_mut() {
        *v = mask(v);
    }
    for (_, v) in req.inspection.added_headers.iter_mut() {
        *v = mask(v);
    }
    req.inspection.signing_string = mask(&req.inspection.signing_string);
    req.inspection.key_id = mask(&req.inspection.key_id);
    req.inspection.signature_header = mask(&req.inspection.signature_header);
    req
}

/// Replaces the value of `signature="..."` by `<signature>`.
fn mask_signature_bytes(s: &str) -> String {
    const START: &str = "signature=\"";
    match s.find(START) {
        Some(i) => {
            let from = i + START.len();
            match s[from..].find('"') {
                Some(len) => format!("{}<signature>{}", &s[..from], &s[from + len..]),
                None => s.to_string(),
            }
        }
        None => s.to_string(),
    }
}
