//! The console's state: pure data, no terminal and no engine, so every screen can be built
//! and rendered in tests. The runner ([`super::run`]) feeds it keys, prepared requests,
//! responses and SCA callbacks, and performs the [`Action`]s it returns.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::catalogue::OperationFinder;
pub use super::component::{Action, Confirm, Screen, StatusInfo};
use super::component::{Component, Effect, OpenExchange};
use super::error::{BrowserError, SendError};
pub use super::form::{Field, Mode, RequestSpec, fields_of};
use super::form::{Form, step};
use super::history::HistoryError;
pub use super::history::HistoryView;
use super::keymap::{self, Command, Context, Scope};
use super::overlay::{Layer, Overlay, Overlays};
use super::palette::{HelpView, PaletteView};
pub use super::panes::Focus;
use super::panes::Panes;
pub use super::profiles::ProfilesView;
use super::status_line::StatusLine;
pub use super::status_line::{LOG_CAP, Level, Message};
use super::theme::Theme;
use crate::client::history::HistoryEntry;
use crate::client::import::{ImportedRequest, Variables};
use crate::client::{ClientError, PreparedRequest};
use crate::profile::ProfileSet;
use crate::xs2a::headers as h;
use crate::xs2a::operations::Operation;
use crate::xs2a::redirect::ScaCallback;

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
    pub(crate) response: ResponseState,
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
    /// State of the response viewer (search and filter boxes, link chooser).
    pub(crate) response_ui: super::response::ResponseUi,
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
    quit: bool,
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
    kind: &'static str,
    /// paymentId or basketId.
    id: String,
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
            response: ResponseState::Empty,
            sca: ScaState::default(),
            overlays: Overlays::default(),
            messages: StatusLine::default(),
            screen: Screen::Console,
            screens: Default::default(),
            editor: Default::default(),
            response_ui: Default::default(),
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

    /// Asks y/N before `what` (status line: `question (y/N) note`); the next key answers.
    pub(crate) fn ask(&mut self, what: Confirm, question: String, note: &str) {
        self.confirm = Some(what);
        self.messages.show(Message {
            level: Level::Warning,
            text: format!("{question} (y/N) {note}").trim_end().to_string(),
        });
    }

    /// Cancels the y/N question (a paste or a click answers it so), saying so.
    pub(crate) fn cancel_confirm(&mut self) {
        let text = match self.confirm.take() {
            Some(Confirm::ResendOtherProfile { .. }) => "Cancelled: nothing sent",
            Some(_) => "Cancelled: nothing changed",
            None => return,
        };
        self.set_message(Level::Info, text);
    }

    /// The answer to [`App::ask`]: `y` runs the action, any other key cancels it (a re-send
    /// under another profile also takes `a`: the active profile).
    fn confirm_key(&mut self, key: &KeyEvent) -> Option<Action> {
        let what = self.confirm.take()?;
        if let Confirm::ResendOtherProfile { id, recorded } = &what {
            return Some(match (key.code, recorded) {
                (KeyCode::Char('y' | 'Y'), Some(p)) => Action::ResendHistoryAs(*id, p.clone()),
                (KeyCode::Char('y' | 'Y'), None) | (KeyCode::Char('a' | 'A'), _) => {
                    Action::ResendHistory(*id)
                }
                _ => {
                    self.set_message(Level::Info, "Cancelled: nothing sent");
                    Action::None
                }
            });
        }
        if !matches!(key.code, KeyCode::Char('y' | 'Y')) {
            self.set_message(Level::Info, "Cancelled: nothing changed");
            return Some(Action::None);
        }
        Some(match what {
            Confirm::ResetSession => Action::ResetSession,
            Confirm::GenerateCert(name) => with_ctx!(self, |ctx| Some(Effect::Run(
                self.screens.profiles.generate_confirmed(&name, &mut ctx)
            )))
            .unwrap_or(Action::None),
            Confirm::ResendOtherProfile { .. } => Action::None,
        })
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
        &self.response
    }

    /// Whether a request is in flight.
    pub fn is_sending(&self) -> bool {
        self.request.sending
    }

    /// First visible line of the response pane.
    pub fn response_scroll(&self) -> usize {
        self.panes.scroll[2]
    }

    /// The request to prepare for the selected operation now.
    pub fn request_spec(&self) -> RequestSpec {
        self.form.request_spec()
    }

    /// The request to prepare for the preview, when the selection or the parameters changed
    /// since the last call (so signing happens only on change, never per frame).
    pub fn take_prepare_request(&mut self) -> Option<RequestSpec> {
        if !self.request.dirty {
            return None;
        }
        self.request.dirty = false;
        Some(self.request_spec())
    }

    /// Shows a prepared preview (or why it cannot be built: the error's text, in the
    /// console's wording, [`humanize`]).
    pub fn set_preview<E: std::fmt::Display>(&mut self, result: Result<PreparedRequest, E>) {
        self.request.sent_instead = None;
        self.request.preview = match result {
            Ok(r) => Preview::Ready {
                request: Box::new(self.displayed(r)),
                sent: false,
            },
            Err(e) => Preview::Error(humanize(&e.to_string())),
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
        self.request.preview = Preview::Ready {
            request: Box::new(self.displayed(request)),
            sent: true,
        };
        self.request.sending = true;
        self.request.sent_instead = None;
        self.sca.done = false;
        self.sca.outcome = None;
        self.overlays.close(Layer::ScaPrompt);
        self.set_message(
            Level::Info,
            format!("Sending {} …", self.form.ops[self.form.selected].title),
        );
    }

    /// Shows the outcome of a send. A scaRedirect opens the SCA prompt; an account list
    /// pre-fills `account-id` of the other operations (unless the user typed one).
    pub fn finish_send(&mut self, result: Result<ResponseView, SendError>) {
        self.request.sending = false;
        self.panes.scroll[2] = 0;
        self.panes.hscroll = 0;
        self.response_ui = Default::default();
        self.overlays.close(Layer::LinkChooser);
        let view = match result {
            Ok(v) => v,
            Err(e) => {
                let e = e.to_string();
                self.set_message(Level::Error, e.clone());
                self.response = ResponseState::Failed(e);
                return;
            }
        };
        let status = view.status_text();
        let ms = view.elapsed_ms();
        if view.sca_redirect.is_some() {
            self.sca.subject = self.subject_of(&view);
        }
        if let Some(url) = &view.sca_redirect {
            self.sca.prompt = Some(ScaPrompt::new(url.clone()));
            self.overlays.open(Overlay::ScaPrompt);
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
        if let Some(e) = &view.history_error {
            self.set_message(
                Level::Warning,
                format!("{status} in {ms} ms, but not written to the history: {e}"),
            );
        }
        if let Some(id) = view.first_account_id.clone() {
            self.prefill_announced("account-id", &id);
        }
        if (200..300).contains(&view.status) {
            self.prefill_ids(&view);
        }
        self.panes.scroll[2] = self.response_opening_line(&view);
        self.response = ResponseState::Done(Box::new(view));
    }

    /// "payment <id>" / "basket <id>" while the SCA prompt is for one.
    pub(crate) fn sca_subject_text(&self) -> Option<String> {
        self.sca
            .subject
            .as_ref()
            .map(|s| format!("{} {}", s.kind, s.id))
    }

    /// The payment or basket a response with a scaRedirect is about: the id in its body
    /// (a 201 initiation), else the id parameter of the operation sent (a start-authorisation).
    fn subject_of(&self, view: &ResponseView) -> Option<ScaSubject> {
        let op = self.form.ops[self.form.selected];
        let param_of = |name: &str| {
            self.param_value(op.id, name)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        if let Some(id) = view.payment_id.clone().or_else(|| {
            op.id
                .starts_with("payments.")
                .then(|| param_of("payment-id"))
                .flatten()
        }) {
            return Some(ScaSubject {
                kind: "payment",
                id,
            });
        }
        let id = view.basket_id.clone().or_else(|| {
            op.id
                .starts_with("baskets.")
                .then(|| param_of("basket-id"))
                .flatten()
        })?;
        Some(ScaSubject { kind: "basket", id })
    }

    /// Carries the ids of a 2xx answer into the operations that take them (Issue 8 item 5):
    /// paymentId (with the payment service and product of the URL it was created at) into
    /// every payment operation and the signing basket body, basketId into the basket
    /// operations, the first transactionId into Transaction details.
    fn prefill_ids(&mut self, view: &ResponseView) {
        if let Some(id) = &view.payment_id {
            if let Some((service, product)) = payment_route(&view.url) {
                self.prefill("payment-service", &service);
                self.prefill("payment-product", &product);
            }
            self.prefill_announced("payment-id", id);
            if view.status == 201 && !self.sca.payments_created.contains(id) {
                self.sca.payments_created.push(id.clone());
                self.prefill_basket_body();
            }
        }
        if view.basket_id.is_some() && self.form.operation().id == "baskets.create" {
            // Its payments are in a basket now: the next basket takes newer ones.
            self.sca.payments_created.clear();
        }
        if let Some(id) = &view.basket_id {
            self.prefill_announced("basket-id", id);
        }
        if let Some(id) = &view.transaction_id {
            self.prefill_announced("transaction-id", id);
        }
    }

    /// The signing basket's body: the payments created in this run that can still go in a
    /// basket (not authorised on their own, not in a basket yet), the newest 100.
    fn prefill_basket_body(&mut self) {
        let n = self.sca.payments_created.len();
        let ids = &self.sca.payments_created[n.saturating_sub(100)..];
        let body =
            serde_json::to_string(&serde_json::json!({ "paymentIds": ids })).unwrap_or_default();
        self.prefill_body("baskets.create", &body);
    }

    /// [`App::prefill`], naming the operations filled in the status message.
    fn prefill_announced(&mut self, name: &str, id: &str) {
        let filled = self.prefill(name, id);
        if !filled.is_empty() {
            self.messages.append(&format!(
                "; {name} {id} filled in for {}",
                filled.join(", ")
            ));
        }
    }

    /// [`Form::prefill`]; the preview is prepared again when the selected operation changed.
    fn prefill(&mut self, name: &str, value: &str) -> Vec<&'static str> {
        let (filled, selected) = self.form.prefill(name, value);
        self.request.dirty |= selected;
        filled
    }

    /// [`Form::prefill_body`]; the preview is prepared again when the selected operation
    /// changed.
    fn prefill_body(&mut self, op_id: &str, body: &str) {
        self.request.dirty |= self.form.prefill_body(op_id, body);
    }

    /// Shows the outcome of an SCA callback that no waiting flow was found for (as
    /// [`App::sca_applied`] without a flow): `summary` is what
    /// [`crate::client::Engine::apply_callback`] returned, `status` the updated status bar.
    pub fn sca_finished(
        &mut self,
        callback: &ScaCallback,
        summary: Result<String, ClientError>,
        status: StatusInfo,
    ) -> Action {
        let applied = summary.map(|summary| crate::client::engine::ScaApplied {
            summary,
            flow: None,
        });
        self.sca_applied(callback, applied, status)
    }

    /// Shows the outcome of an SCA callback as the engine applied it
    /// ([`crate::client::Engine::apply_sca_callback`]: the flow it answered, routed by its
    /// `tpp-session-id` and `sca-ref`), `status` the updated status bar. Success closes the
    /// prompt and re-prepares the request (now with PSU-ID).
    ///
    /// After the SCA of a payment, basket or consent the creating POST is not sent again
    /// (that would create another one): the returned [`Action::ReadStatus`] has the runner
    /// read its status with the one sender, and [`App::status_read`] shows what it found
    /// ("payment <id> approved: <status>"). Payment status (Basket status) is selected with
    /// its id meanwhile.
    pub fn sca_applied(
        &mut self,
        callback: &ScaCallback,
        applied: Result<crate::client::engine::ScaApplied, ClientError>,
        status: StatusInfo,
    ) -> Action {
        use crate::client::engine::ScaFlow;
        self.status = status;
        self.request.dirty = true;
        let applied = match applied {
            Ok(a) => a,
            Err(e) => {
                self.overlays.close(Layer::ScaPrompt);
                self.set_message(
                    Level::Error,
                    format!("The SCA result could not be stored: {e}"),
                );
                return Action::None;
            }
        };
        // The prompt closes when its own SCA ended (or when it has no flow to tell).
        let own = match (
            self.sca.prompt.as_ref().and_then(|p| p.flow.as_ref()),
            &applied.flow,
        ) {
            (Some(mine), Some(done)) => {
                mine.tpp_session_id == done.tpp_session_id && mine.sca_ref == done.sca_ref
            }
            _ => true,
        };
        if own {
            self.overlays.close(Layer::ScaPrompt);
            if matches!(callback, ScaCallback::Success(_)) {
                self.sca.prompt = None;
                self.sca.subject = None;
            }
        }
        let s = applied.summary;
        let read = applied
            .flow
            .filter(|f| f.status_path.is_some() && f.flow != ScaFlow::AisRead);
        match (callback, read) {
            (ScaCallback::Success(_), Some(flow)) => {
                let s = s.trim_end_matches("; send the request again");
                let id = flow.resource_id.clone().unwrap_or_default();
                let (op, param) = match flow.flow {
                    ScaFlow::Payment => (Some("payments.status"), "payment-id"),
                    ScaFlow::Basket => (Some("baskets.status"), "basket-id"),
                    _ => (None, ""),
                };
                if flow.flow == ScaFlow::Payment && !id.is_empty() {
                    // Authorised on its own: a signing basket refuses it.
                    self.sca.payments_created.retain(|p| *p != id);
                    self.prefill_basket_body();
                }
                if let Some(op) = op
                    && !id.is_empty()
                {
                    self.select_operation(op);
                    self.set_param(op, param, &id);
                }
                self.set_message(
                    Level::Success,
                    format!("{s}; reading the status of {} {id} …", flow.flow.noun()),
                );
                self.sca.learned = (flow.flow == ScaFlow::Consent).then(|| s.to_string());
                self.request.sending = true;
                self.sca.status_read = Some(flow.clone());
                return Action::ReadStatus(Box::new(flow));
            }
            (ScaCallback::Success(_), None) => {
                self.sca.done = true;
                self.set_message(Level::Success, s);
            }
            (ScaCallback::Failure(_), Some(flow)) => {
                // A failed payment SCA may still have changed the payment (the sandbox
                // rejects an instant payment for lack of funds at approval): read it.
                self.set_message(Level::Error, s);
                self.request.sending = true;
                self.sca.status_read = Some(flow.clone());
                return Action::ReadStatus(Box::new(flow));
            }
            (ScaCallback::Failure(_), None) => self.set_message(Level::Error, s),
        }
        Action::None
    }

    /// The runner armed `flow` for the response just shown ([`App::finish_send`]): the SCA
    /// prompt belongs to it, so Esc gives it up.
    pub fn sca_armed(&mut self, flow: crate::client::engine::PendingSca) {
        if let Some(p) = &mut self.sca.prompt {
            p.flow = Some(flow);
        }
    }

    /// Shows the status read after an SCA ([`Action::ReadStatus`]; the runner shows its
    /// request with [`App::begin_send`] first): the answer in the response pane and the sender's verdict in the status line ("payment <id> approved:
    /// ACSC", "payment <id> rejected: lack of funds (ACCP)").
    pub fn status_read(
        &mut self,
        result: Result<(crate::client::engine::StatusAfterSca, ResponseView), SendError>,
    ) {
        use crate::xs2a::status::Verdict;
        self.sca.status_read = None;
        match result {
            Ok((st, view)) => {
                let text = match self.sca.learned.take() {
                    Some(learned) => format!("{learned}; {}", st.summary()),
                    None => st.summary(),
                };
                let level = match st.verdict {
                    Verdict::Approved => Level::Success,
                    Verdict::Pending => Level::Warning,
                    Verdict::Rejected(_) => Level::Error,
                };
                self.finish_send(Ok(view));
                // After a consent's SCA the guide suggests sending the account read again.
                self.sca.done = st.flow == crate::client::engine::ScaFlow::Consent;
                self.sca.outcome = Some(text.clone());
                self.set_message(level, text);
            }
            Err(e) => self.finish_send(Err(e)),
        }
    }

    /// Shows the outcome of opening the browser.
    pub fn browser_opened(&mut self, result: Result<(), BrowserError>) {
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
        if let Some(p) = &mut self.sca.prompt {
            p.browser = Some(result);
        }
    }

    /// Records a session reset: new status, re-prepared request.
    pub fn session_reset(&mut self, status: StatusInfo) {
        self.status = status;
        self.sca.done = false;
        self.request.dirty = true;
        self.sca.prompt = None;
        self.overlays.close(Layer::ScaPrompt);
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
        self.request.dirty = true;
        self.sca.prompt = None;
        self.overlays.close(Layer::ScaPrompt);
        self.response = ResponseState::Empty;
        self.panes.scroll = [0; 3];
    }

    /// Asks for the request preview to be prepared again.
    pub fn invalidate_preview(&mut self) {
        self.request.dirty = true;
    }

    /// The focus chain, topmost first: the open overlays ([`super::overlay::Overlays`]) and
    /// the console's states that take input before the screen (the y/N question, the
    /// operation finder, a text box of the screen shown), ordered by their [`Layer`]. Keys
    /// ([`App::handle_key`]), paste ([`App::handle_paste`]) and the mouse
    /// ([`App::handle_mouse`]) all go to its first layer; the screen shown takes them when it
    /// is empty.
    pub(crate) fn focus_chain(&self) -> Vec<Layer> {
        let mut chain: Vec<Layer> = self
            .overlays
            .layers_top_down()
            // A hidden prompt's layer without a URL takes nothing.
            .filter(|l| *l != Layer::ScaPrompt || self.sca.prompt.is_some())
            .collect();
        if self.confirm.is_some() {
            chain.push(Layer::Confirm);
        }
        if self.screen == Screen::Console && self.form.finder.is_some() {
            chain.push(Layer::Finder);
        }
        if self.screen_typing() {
            chain.push(Layer::Insert);
        }
        chain.sort_by(|a, b| b.cmp(a));
        chain
    }

    /// The layer that takes input now ([`App::focus_chain`]); `None`: the screen shown.
    pub(crate) fn focused(&self) -> Option<Layer> {
        self.focus_chain().first().copied()
    }

    /// Whether a text box of the screen shown is open ([`Layer::Insert`]): a parameter in
    /// INSERT mode or the response's search or filter box on the console, a screen
    /// component's box elsewhere.
    fn screen_typing(&self) -> bool {
        match self.screen {
            Screen::Console => self.form.mode == Mode::Insert || self.response_ui.input.is_some(),
            Screen::Profiles => self.screens.profiles.typing(),
            Screen::History => self.screens.history.typing(),
            Screen::Flow => self.screens.flow.typing(),
            Screen::Monitor => self.screens.monitor.typing(),
        }
    }

    /// The keymap's context of the focus chain: its first layer with keys of its own in the
    /// keymap, else the screen's. The y/N question, the problems log, the finder and the
    /// body editor take their keys before the keymap ([`App::handle_key`]).
    pub(crate) fn context(&self) -> Context {
        let dialog = self.focus_chain().into_iter().find_map(|l| match l {
            Layer::Palette => Some(Context::Palette),
            Layer::Help => Some(Context::Help),
            Layer::Picker => Some(Context::Picker),
            Layer::LinkChooser => Some(Context::LinkChooser),
            Layer::Lessons => Some(Context::Lessons),
            Layer::Insert if self.form.mode == Mode::Insert => Some(Context::Insert),
            Layer::ScaPrompt => Some(Context::ScaPrompt),
            _ => None,
        });
        if let Some(ctx) = dialog {
            return ctx;
        }
        match self.screen {
            Screen::Profiles => Context::Profiles,
            Screen::History => Context::History,
            Screen::Flow => Context::Flow,
            Screen::Monitor => Context::Monitor,
            Screen::Console => Context::Normal {
                params_focused: self.panes.focus == Focus::Params,
                response_focused: self.panes.focus == Focus::Response,
            },
        }
    }

    /// Handles one key and says what the runner must do: the first layer of the focus chain
    /// takes it ([`App::focus_chain`]), then the keymap in its context. Ctrl-c (force quit)
    /// never reaches a text box.
    pub fn handle_key(&mut self, key: KeyEvent) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        let ctx = self.context();
        let cmd = self.keymap.lookup(ctx, &key);
        if cmd == Some(Command::ForceQuit) {
            return self.command(ctx, Command::ForceQuit);
        }
        if let Some(action) = self.layer_key(&key) {
            return action;
        }
        match cmd {
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

    /// The first layer of the focus chain takes `key` before the keymap when it reads keys
    /// itself (the y/N question, the problems log, the palette's filter, the finder, a text
    /// box, the body editor); `None` leaves the key to the keymap.
    fn layer_key(&mut self, key: &KeyEvent) -> Option<Action> {
        match self.focused()? {
            Layer::Confirm => self.confirm_key(key),
            Layer::Problems => {
                // Any key closes the problems overlay.
                self.overlays.close(Layer::Problems);
                Some(Action::None)
            }
            Layer::Palette => with_ctx!(self, |ctx| self
                .overlays
                .palette_mut()
                .and_then(|p| p.input(key, &mut ctx))),
            Layer::Finder => with_ctx!(self, |ctx| self
                .form
                .finder
                .as_mut()
                .and_then(|f| f.input(key, &mut ctx))),
            Layer::Insert if self.form.mode == Mode::Insert => None,
            Layer::Insert => match self.response_input_key(key) {
                Some(a) => Some(a),
                None => self.on_screen(|screen, ctx| screen.input(key, ctx)),
            },
            Layer::BodyEditor => self.body_editor_key(key),
            Layer::ScaPrompt
            | Layer::LinkChooser
            | Layer::Picker
            | Layer::Lessons
            | Layer::Help => None,
        }
    }

    /// Handles pasted text (bracketed paste): the first layer of the focus chain takes it
    /// ([`App::focus_chain`]). A text box types it (line breaks dropped, except in the body
    /// editor); the y/N question is cancelled by it; elsewhere it is ignored, so a paste
    /// never fires commands.
    pub fn handle_paste(&mut self, text: &str) {
        let taken = match self.focused() {
            Some(Layer::Confirm) => {
                self.cancel_confirm();
                return;
            }
            Some(Layer::BodyEditor) => self.body_editor_paste(text),
            Some(Layer::Insert) if self.form.mode == Mode::Insert => {
                for c in text.chars().filter(|c| *c != '\n' && *c != '\r') {
                    self.type_char(c);
                }
                true
            }
            Some(Layer::Insert) => {
                self.response_paste(text)
                    || match self.screen {
                        Screen::Profiles => self.screens.profiles.paste(text),
                        Screen::Monitor => self.screens.monitor.paste(text),
                        Screen::History => self.screens.history.paste(text),
                        Screen::Flow => self.screens.flow.paste(text),
                        Screen::Console => false,
                    }
            }
            _ => false,
        };
        if !taken {
            self.set_message(
                Level::Info,
                "Paste ignored: press e to edit a parameter first",
            );
        }
    }

    /// Whether the screen's own commands take `cmd` (see [`super::profiles`] and
    /// [`super::history`]).
    fn screen_command(&mut self, ctx: Context, cmd: Command) -> Option<Action> {
        match ctx {
            Context::Profiles | Context::History | Context::Flow | Context::Monitor => {
                self.on_screen(|screen, ctx| screen.handle(cmd, ctx))
            }
            Context::Lessons => {
                with_ctx!(self, |ctx| self
                    .overlays
                    .lessons_mut()
                    .and_then(|p| p.handle(cmd, &mut ctx)))
            }
            Context::Help => {
                with_ctx!(self, |ctx| self
                    .overlays
                    .help_mut()
                    .and_then(|h| h.handle(cmd, &mut ctx)))
            }
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
                self.panes.focus = Focus::Operations;
                self.form.finder = Some(OperationFinder::open(&self.form.ops, self.form.selected));
            }
            Command::ShowProfiles => {
                self.screen = Screen::Profiles;
                return Action::LoadProfiles;
            }
            Command::ShowHistory => {
                self.screen = Screen::History;
                return Action::LoadHistory;
            }
            Command::ShowFlow => {
                self.screen = Screen::Flow;
                return Action::LoadFlow;
            }
            Command::Lessons => return Action::LoadLessons,
            Command::LessonNext | Command::LessonBack => {
                return with_ctx!(self, |ctx| self.lesson.handle(cmd, &mut ctx))
                    .unwrap_or(Action::None);
            }
            // Taken by the lesson picker; nothing elsewhere.
            Command::LessonEnd => {}
            Command::ShowMonitor => {
                self.screen = Screen::Monitor;
                let ctx = ctx!(self);
                return self.screens.monitor.shown(&ctx).unwrap_or(Action::None);
            }
            Command::Quit | Command::ForceQuit => {
                self.quit = true;
                return Action::Quit;
            }
            Command::ToggleHelp => {
                if self.overlays.close(Layer::Help).is_none() {
                    self.overlays.open(Overlay::Help(Default::default()));
                }
            }
            Command::Dismiss => match ctx {
                Context::Help => {
                    self.overlays.close(Layer::Help);
                }
                Context::Picker => {
                    self.overlays.close(Layer::Picker);
                }
                Context::ScaPrompt => {
                    self.overlays.close(Layer::ScaPrompt);
                    // Esc gives the SCA up: its callback is no longer awaited, so it cannot
                    // be taken for the next SCA of the session.
                    if let Some(flow) = self.sca.prompt.as_mut().and_then(|p| p.flow.take()) {
                        let what = format!(
                            "{}{}",
                            flow.flow.noun(),
                            flow.resource_id
                                .as_ref()
                                .map(|i| format!(" {i}"))
                                .unwrap_or_default()
                        );
                        self.sca.prompt = None;
                        self.sca.subject = None;
                        self.set_message(
                            Level::Info,
                            format!(
                                "SCA of the {what} abandoned: its callback is no longer awaited; send again for a new SCA"
                            ),
                        );
                        return Action::AbandonSca(Box::new(flow));
                    }
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
                self.panes.focus = Focus::ORDER[(self.panes.focus.index() + 1) % Focus::ORDER.len()]
            }
            Command::PrevFocus => {
                self.panes.focus = Focus::ORDER
                    [(self.panes.focus.index() + Focus::ORDER.len() - 1) % Focus::ORDER.len()]
            }
            Command::Send => {
                if self.request.sending {
                    self.set_message(Level::Warning, "Still waiting for the previous response");
                } else if self.validate_before_send() {
                    return Action::Send;
                }
            }
            Command::SendAnyway => {
                if self.request.sending {
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
            Command::OpenSca => match &self.sca.prompt {
                Some(p) => {
                    let url = p.url.clone();
                    self.overlays.open(Overlay::ScaPrompt);
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
                self.panes.scroll[slot] = 0;
            }
            Command::Bottom => {
                let slot = self.scroll_target();
                self.panes.scroll[slot] = self.max_scroll(slot);
            }
            Command::ScrollLeft => self.panes.hscroll = self.panes.hscroll.saturating_sub(8),
            Command::ScrollRight => self.panes.hscroll += 8,
            Command::ResetSession => {
                self.ask(
                    Confirm::ResetSession,
                    format!("Reset the session of {}?", self.status.profile),
                    "The PSU-ID is forgotten and a new TPP session starts.",
                );
            }
            Command::ShowProblems => self.overlays.open(Overlay::Problems),
            Command::ToggleTheme => self.cycle_theme(),
            Command::ExportCode => return Action::ExportCode,
            Command::TogglePresenter => {
                let on = !self.presenter.on;
                self.set_presenter(on);
            }
            Command::Palette => self.overlays.open(Overlay::Palette(PaletteView::default())),
            Command::Profiles => {
                let cur = self
                    .profiles
                    .names
                    .iter()
                    .position(|p| *p == self.status.profile)
                    .unwrap_or(0);
                self.overlays.open(Overlay::Picker(cur));
            }
            Command::Choose => {
                if let Some(Overlay::Picker(i)) = self.overlays.close(Layer::Picker)
                    && let Some(name) = self.profiles.names.get(i).cloned()
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
                self.form.mode = Mode::Normal;
                self.request.dirty = true;
                self.revalidate();
            }
            Command::NextField => self.form.move_field(1),
            Command::PrevField => self.form.move_field(-1),
            Command::Backspace => {
                if self.form.cursor > 0 {
                    self.form.cursor -= 1;
                    self.remove_at_cursor();
                }
            }
            Command::Delete => self.remove_at_cursor(),
            Command::CursorLeft => self.form.cursor = self.form.cursor.saturating_sub(1),
            Command::CursorRight => {
                self.form.cursor =
                    (self.form.cursor + 1).min(self.form.current_value().chars().count())
            }
            Command::CursorHome => self.form.cursor = 0,
            Command::CursorEnd => self.form.cursor = self.form.current_value().chars().count(),
            Command::ClearField => {
                self.form.clear_field();
                self.request.dirty = true;
            }
            // Taken by the history screen ([`HistoryView`]); nothing elsewhere.
            Command::HistorySearch
            | Command::HistoryOpen
            | Command::HistoryResend
            | Command::HistoryMark
            | Command::HistoryDiff
            | Command::HistoryExportCurl
            | Command::HistoryImport
            | Command::HistoryDoctor => {}
            // Taken by the monitor screen ([`super::monitor`]); nothing elsewhere.
            Command::MonitorToggleView
            | Command::MonitorAdvanceHour
            | Command::MonitorAdvanceDay
            | Command::MonitorAdvanceBy
            | Command::MonitorBatch
            | Command::MonitorClearFaults
            | Command::MonitorRefresh
            | Command::MonitorShowReads => {}
            // Taken by the profiles screen ([`ProfilesView`]); nothing elsewhere.
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
            if let Some(i) = self.overlays.picker() {
                let n = self.profiles.names.len().max(1);
                self.overlays.open(Overlay::Picker(step(i, delta, n)));
            }
            return;
        }
        match self.panes.focus {
            Focus::Operations => {
                let i = step(self.form.selected, delta, self.form.ops.len());
                self.select_index(i);
            }
            Focus::Params => {
                let n = fields_of(self.form.ops[self.form.selected]).len();
                if n > 0 {
                    self.form.field = step(self.form.field, delta, n);
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
        self.panes.focus.scroll_slot().unwrap_or(2)
    }

    fn max_scroll(&self, slot: usize) -> usize {
        let content = match (slot, &self.response) {
            (2, ResponseState::Done(v)) => Some(v.total_lines()),
            _ => None,
        };
        self.panes.max_scroll(slot, content)
    }

    fn scroll_lines(&mut self, slot: usize, delta: isize) {
        let max = self.max_scroll(slot);
        self.panes.scroll_lines(slot, delta, max);
    }

    fn scroll_page(&mut self, dir: isize) {
        let slot = self.scroll_target();
        self.scroll_lines(slot, dir * self.panes.page(slot));
    }

    fn start_editing(&mut self) {
        let op = self.form.ops[self.form.selected];
        let n = fields_of(op).len();
        if n == 0 {
            self.set_message(
                Level::Info,
                format!("{} has no parameters: press s to send it", op.title),
            );
            return;
        }
        self.panes.focus = Focus::Params;
        self.form.field = self.form.field.min(n - 1);
        if fields_of(op)[self.form.field].is_body {
            self.open_body_editor();
            return;
        }
        self.form.mode = Mode::Insert;
        self.form.cursor = self.form.current_value().chars().count();
    }

    fn type_char(&mut self, c: char) {
        self.request.dirty |= self.form.type_char(c);
    }

    fn remove_at_cursor(&mut self) {
        self.request.dirty |= self.form.remove_at_cursor();
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

/// The screens' components: what the runner and the tests ask of them, and the effects they
/// return.
impl App {
    /// Shows the messages a component left, in order, then performs its effect; `None` when
    /// the component did not take the key.
    pub(crate) fn apply(&mut self, said: Vec<Message>, effect: Option<Effect>) -> Option<Action> {
        for m in said {
            self.set_message(m.level, m.text);
        }
        Some(match effect? {
            Effect::None => Action::None,
            Effect::Run(action) => action,
            Effect::Ask {
                what,
                question,
                note,
            } => {
                self.ask(what, question, &note);
                Action::None
            }
            Effect::OpenExchange(o) => {
                self.open_exchange(*o);
                Action::None
            }
            Effect::Select { index, close } => {
                if close {
                    self.form.finder = None;
                }
                self.select_index(index);
                Action::None
            }
            Effect::Close(layer) => {
                self.overlays.close(layer);
                Action::None
            }
            Effect::RunInScope(scope, cmd) => {
                self.overlays.close(Layer::Palette);
                self.run_in_scope(scope, cmd)
            }
            Effect::Prefill(p) => {
                self.prefill_operation(*p);
                Action::None
            }
            Effect::StartLesson(lesson) => {
                self.overlays.close(Layer::Lessons);
                self.start_lesson(*lesson);
                Action::None
            }
            Effect::EndLesson => {
                self.overlays.close(Layer::Lessons);
                match self.lesson.end() {
                    Some(l) => self.set_message(Level::Info, format!("Lesson ended: {}", l.title)),
                    None => self.set_message(Level::Info, "No lesson is running"),
                }
                Action::None
            }
        })
    }

    /// Selects `p`'s operation on the console screen with its parameters and body (a
    /// lesson's step): the trainer only sends.
    fn prefill_operation(&mut self, p: super::component::Prefill) {
        self.screen = Screen::Console;
        self.form.finder = None;
        // The prompt of an earlier answer would hide the step (`o` still opens its URL).
        self.overlays.close(Layer::ScaPrompt);
        if !self.select_operation(p.op.id) {
            return;
        }
        self.panes.focus = Focus::Operations;
        for (name, value) in &p.params {
            self.set_param(p.op.id, name, value);
        }
        if let Some(body) = &p.body {
            self.set_param(p.op.id, "body", body);
        }
        self.request.dirty = true;
    }

    /// Starts `lesson` at its first step: the lesson panel opens under the console and the
    /// step's operation is selected with its parameters.
    pub fn start_lesson(&mut self, lesson: crate::lessons::Lesson) {
        with_ctx!(self, |ctx| Some(self.lesson.start(lesson, &mut ctx)));
    }

    /// The lesson being given and its step.
    pub fn lesson(&self) -> Option<&crate::lessons::LessonProgress> {
        self.lesson.progress()
    }

    /// Opens the lesson picker on `set` (its unreadable files go to the problems log).
    pub fn set_lessons(&mut self, set: crate::lessons::LessonSet) {
        for e in &set.errors {
            self.log_problem(Message {
                level: Level::Warning,
                text: format!("lesson not loaded: {e}"),
            });
        }
        if !set.errors.is_empty() {
            self.set_message(
                Level::Warning,
                format!(
                    "{} lesson file(s) could not be read (! lists them)",
                    set.errors.len()
                ),
            );
        }
        let running = self.lesson.progress().map(|p| p.lesson.id.clone());
        let selected = running
            .as_ref()
            .and_then(|id| set.lessons.iter().position(|l| &l.id == id))
            .unwrap_or(0);
        self.overlays
            .open(Overlay::Lessons(super::lesson::LessonPicker {
                lessons: set.lessons,
                selected,
                running: running.is_some(),
            }));
    }

    /// Whether the lesson picker is shown.
    pub fn lesson_picker_visible(&self) -> bool {
        self.overlays.is_open(Layer::Lessons)
    }

    /// Shows `data` on the flow screen ([`super::flow_view::FlowView::set_data`]).
    pub fn set_flow(&mut self, data: super::flow_view::FlowData) {
        self.screens.flow.set_data(data);
    }

    /// Adds a step of the PSU's browser on the SCA pages to the flow screen.
    pub fn add_browser_step(&mut self, step: crate::flow::BrowserStep) {
        self.screens.flow.add_step(step);
    }

    /// Moves the flow screen's clocks to `now` (Unix seconds) with `session`.
    pub fn set_flow_clock(&mut self, now: i64, session: crate::profile::SessionState) {
        self.screens.flow.set_clock(now, session);
    }

    /// The flow screen's state.
    pub fn flow_view(&self) -> &super::flow_view::FlowView {
        &self.screens.flow
    }

    /// The operation finder's state while it is open.
    pub fn operation_finder(&self) -> Option<&OperationFinder> {
        self.form.finder.as_ref()
    }

    /// Whether the command palette is shown.
    pub fn palette_visible(&self) -> bool {
        self.overlays.is_open(Layer::Palette)
    }

    /// The palette's filter text.
    pub fn palette_query(&self) -> &str {
        self.overlays.palette().map_or("", |p| p.query.as_str())
    }

    /// The actions the palette shows for its filter ([`PaletteView::entries`]).
    pub fn palette_entries(&self) -> Vec<&keymap::ActiveBinding> {
        self.overlays
            .palette()
            .map(|p| p.entries(&self.keymap))
            .unwrap_or_else(|| PaletteView::default().entries(&self.keymap))
    }

    /// Runs `cmd` as if its key had been pressed in a context where `scope` applies:
    /// switches the screen, focuses the pane or opens the dialog first.
    pub fn run_in_scope(&mut self, scope: Scope, cmd: Command) -> Action {
        let close_dialogs = |app: &mut App| {
            for layer in [Layer::Help, Layer::Picker, Layer::ScaPrompt] {
                app.overlays.close(layer);
            }
        };
        let mut first = Action::None;
        let console = [
            Scope::Normal,
            Scope::ParamsPane,
            Scope::ResponsePane,
            Scope::Insert,
        ];
        let ctx = if console.contains(&scope) {
            close_dialogs(self);
            self.screen = Screen::Console;
            if scope == Scope::ParamsPane {
                self.panes.focus = Focus::Params;
            } else if scope == Scope::ResponsePane {
                self.panes.focus = Focus::Response;
            }
            if scope == Scope::Insert && self.form.mode != Mode::Insert {
                let ctx = self.context();
                self.command(ctx, Command::EditParams);
                if self.form.mode != Mode::Insert {
                    return Action::None;
                }
            }
            self.context()
        } else if [
            Scope::ProfilesScreen,
            Scope::HistoryScreen,
            Scope::MonitorScreen,
        ]
        .contains(&scope)
        {
            close_dialogs(self);
            let (screen, show) = match scope {
                Scope::ProfilesScreen => (Screen::Profiles, Command::ShowProfiles),
                Scope::HistoryScreen => (Screen::History, Command::ShowHistory),
                _ => (Screen::Monitor, Command::ShowMonitor),
            };
            if self.screen != screen {
                let ctx = self.context();
                first = self.command(ctx, show);
            }
            self.context()
        } else if scope == Scope::FlowScreen {
            close_dialogs(self);
            if self.screen != Screen::Flow {
                let ctx = self.context();
                first = self.command(ctx, Command::ShowFlow);
            }
            self.context()
        } else if scope == Scope::LessonPicker {
            if !self.overlays.is_open(Layer::Lessons) {
                // The picker opens once the lessons are read; the command waits for a key.
                return Action::LoadLessons;
            }
            Context::Lessons
        } else if scope == Scope::Help {
            if !self.overlays.is_open(Layer::Help) {
                self.overlays.open(Overlay::Help(HelpView::default()));
            }
            Context::Help
        } else if scope == Scope::ScaPrompt {
            if self.sca.prompt.is_none() {
                self.set_message(
                    Level::Info,
                    "No SCA prompt: the last response did not ask for SCA",
                );
                return Action::None;
            }
            close_dialogs(self);
            self.overlays.open(Overlay::ScaPrompt);
            Context::ScaPrompt
        } else if scope == Scope::Picker {
            self.overlays.close(Layer::Help);
            if !self.overlays.is_open(Layer::Picker) {
                let ctx = self.context();
                self.command(ctx, Command::Profiles);
            }
            Context::Picker
        } else {
            self.context()
        };
        match self.command(ctx, cmd) {
            Action::None => first,
            a => a,
        }
    }

    /// Shows a recorded exchange in the console: its operation selected with its parameters
    /// and body, its response in the response pane, focused.
    fn open_exchange(&mut self, o: OpenExchange) {
        if let Some(op) = o.op
            && self.select_operation(op.id)
        {
            for (name, value) in &o.params {
                self.set_param(op.id, name, value);
            }
            if let Some(body) = &o.body {
                self.set_param(op.id, "body", body);
            }
        }
        self.set_message(o.message.level, o.message.text);
        self.response = ResponseState::Done(Box::new(o.view));
        self.panes.scroll[2] = 0;
        self.panes.focus = Focus::Response;
        self.screen = Screen::Console;
    }

    /// Hands a key to the component of the screen shown (history, profiles) and performs
    /// its effect; `None` on the console screen or when the component does not take it.
    fn on_screen(
        &mut self,
        f: impl FnOnce(&mut dyn Component, &mut super::component::Ctx) -> Option<Effect>,
    ) -> Option<Action> {
        let mut ctx = ctx!(self);
        let screen: &mut dyn Component = match self.screen {
            Screen::History => &mut self.screens.history,
            Screen::Profiles => &mut self.screens.profiles,
            Screen::Flow => &mut self.screens.flow,
            Screen::Monitor => &mut self.screens.monitor,
            Screen::Console => return None,
        };
        let effect = f(screen, &mut ctx);
        let said = ctx.into_messages();
        self.apply(said, effect)
    }

    /// Shows `set` on the profiles screen and in the picker, reading each profile's
    /// certificate and session from `paths` ([`ProfilesView::set_profile_set`]).
    pub fn set_profile_set(&mut self, set: ProfileSet, paths: &crate::profile::Paths) {
        self.set_profiles(&set);
        self.screens.profiles.set_profile_set(set, paths);
    }

    /// The profile to restart after the profiles were read again (the active one was
    /// edited), taken once.
    pub fn take_apply_after_load(&mut self) -> Option<String> {
        self.screens.profiles.take_apply_after_load()
    }

    /// Fixes the profiles screen's clock (Unix seconds) for the SCA window, consent age and
    /// expiry warnings; `None` uses the system clock.
    pub fn set_profiles_clock(&mut self, now: Option<i64>) {
        self.screens.profiles.clock = now;
    }

    /// The profiles screen's state.
    pub fn profiles_view(&self) -> &ProfilesView {
        &self.screens.profiles
    }

    /// The sandbox monitor screen's state.
    pub fn monitor(&self) -> &super::monitor::MonitorView {
        &self.screens.monitor
    }

    /// Hands the monitor what its event stream task sent
    /// ([`crate::client::monitor::follow`]); once subscribed it asks to read the sandbox's
    /// state ([`Action::Monitor`]).
    pub fn monitor_feed(&mut self, feed: crate::client::monitor::MonitorFeed) -> Action {
        self.screens.monitor.feed(feed).unwrap_or(Action::None)
    }

    /// Hands the monitor the answer of its management request ([`Action::Monitor`]); the
    /// outcome goes to the status line. Answers a new read ([`Action::Monitor`]) when the
    /// sandbox changed while this one was on its way.
    pub fn monitor_done(
        &mut self,
        result: Result<crate::client::monitor::SandboxState, String>,
    ) -> Action {
        let mut ctx = ctx!(self);
        let again = self.screens.monitor.done(result, &mut ctx);
        let said = ctx.into_messages();
        self.apply(said, Some(Effect::None));
        again
    }

    /// After another profile became active: the monitor forgets the old sandbox and, when
    /// it is shown, follows the new one.
    pub fn monitor_restart(&mut self) -> Action {
        self.screens.monitor.reset();
        if self.screen == Screen::Monitor {
            let ctx = ctx!(self);
            return self.screens.monitor.shown(&ctx).unwrap_or(Action::None);
        }
        Action::None
    }

    /// The search text of the history screen (what [`super::history::load`] filters by).
    pub fn history_query(&self) -> &str {
        self.screens.history.query()
    }

    /// Shows the rows read for search `query` on the history screen
    /// ([`HistoryView::set_rows`]).
    pub fn set_history(&mut self, query: &str, rows: Result<Vec<HistoryEntry>, HistoryError>) {
        self.screens.history.set_rows(query, rows);
    }

    /// The exchanges shown on the history screen, newest first.
    pub fn history_rows(&self) -> &[HistoryEntry] {
        self.screens.history.rows()
    }

    /// The exchange with history id `id`, if it is shown.
    pub fn history_entry(&self, id: i64) -> Option<&HistoryEntry> {
        self.screens.history.entry(id)
    }

    /// The highlighted exchange of the history screen.
    pub fn highlighted_exchange(&self) -> Option<&HistoryEntry> {
        self.screens.history.highlighted()
    }

    /// Whether the diff overlay of the history screen is shown.
    pub fn history_diff_visible(&self) -> bool {
        self.screens.history.diff_visible()
    }

    /// Lists the requests imported from `source` (a file) in the import overlay, or says why
    /// the file could not be imported.
    pub fn set_imported(
        &mut self,
        source: &str,
        result: Result<(Vec<ImportedRequest>, Variables), HistoryError>,
    ) {
        with_ctx!(self, |ctx| {
            self.screens.history.set_imported(source, result, &mut ctx);
            None
        });
    }

    /// The imported request at `index` of the import overlay, with its variables resolved,
    /// and the names of the variables without a value.
    pub fn imported_request(&self, index: usize) -> Option<(ImportedRequest, Vec<String>)> {
        self.screens.history.imported_request(index)
    }

    /// Records that history exchange `id` (or imported request `what`) is being re-sent:
    /// call after [`App::begin_send`]; shows the console, where the response arrives.
    pub fn resend_started(&mut self, what: &str) {
        self.request.sent_instead = Some(what.to_string());
        self.screens.history.close_import();
        self.screen = Screen::Console;
        self.panes.focus = Focus::Response;
        self.set_message(
            Level::Info,
            format!(
                "Sending {what} again with profile {}, signed afresh (new Date, X-Request-ID, Signature) …",
                self.status.profile
            ),
        );
    }

    /// Shows where a cURL export of exchange `id` was written, or why it failed.
    /// Says where `x` on the console wrote the request's cURL script and programs, or why it
    /// could not.
    pub fn request_exported(
        &mut self,
        title: &str,
        result: Result<(std::path::PathBuf, std::path::PathBuf), HistoryError>,
    ) {
        match result {
            Ok((script, dir)) => self.set_message(
                Level::Success,
                format!(
                    "{title}: cURL, signed now, written to {} (run it within 60 s); programs that sign when they run (Python, Node, Java, Go) in {}",
                    script.display(),
                    dir.display()
                ),
            ),
            Err(e) => self.set_message(Level::Error, format!("Export of {title} failed: {e}")),
        }
    }

    pub fn curl_exported(
        &mut self,
        id: i64,
        result: Result<(std::path::PathBuf, std::path::PathBuf), HistoryError>,
    ) {
        with_ctx!(self, |ctx| {
            HistoryView::curl_exported(id, result, &mut ctx);
            None
        });
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
        let (response, failed) = match &self.response {
            ResponseState::Done(v) => (
                Some((v.status, v.status_text(), v.operation.as_str())),
                None,
            ),
            ResponseState::Failed(e) => (None, Some(e.as_str())),
            _ => (None, None),
        };
        let sca_waiting = self.sca.prompt.is_some()
            && matches!(&self.response, ResponseState::Done(v) if v.sca_redirect.is_some());
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
            consent_response: matches!(&self.response, ResponseState::Done(v)
                if v.operation == super::status_read_title(crate::client::engine::ScaFlow::Consent)
                    || crate::xs2a::operations::OPERATIONS
                        .iter()
                        .any(|o| o.title == v.operation && o.group == Group::Ais)),
        })
    }
}

/// Rewrites the CLI wording of parameter errors (`needs --param account-id=...`) for the
/// console (`needs account-id`).
/// `(payment-service, payment-product)` of a payment URL (`…/v1/payments/sepa-credit-transfers…`).
fn payment_route(url: &str) -> Option<(String, String)> {
    let path = url.split(['?', '#']).next()?;
    let rest = &path[path.find("/v1/")? + 4..];
    let mut segs = rest.split('/');
    let service = segs.next()?;
    let product = segs.next().filter(|p| !p.is_empty())?;
    ["payments", "bulk-payments", "periodic-payments"]
        .contains(&service)
        .then(|| (service.to_string(), product.to_string()))
}

pub(crate) fn humanize(e: &str) -> String {
    e.replace("--param ", "").replace("=...", "")
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
