//! The shape every screen and dialog of the console shares: a component owns its state,
//! takes the commands of the keymap ([`Component::handle`]) and raw keys while a text box of
//! its own is open ([`Component::input`]), draws itself ([`Component::draw`]), and returns an
//! [`Effect`] for what only the [`App`](crate::tui::App) can do (hand work to the runner,
//! ask y/N, show an exchange in the console). It reads what it needs of the rest through a
//! [`Ctx`] and never sees the `App`.
//!
//! The idiom follows gitui's `Component` (event in, "consumed" out) and slumber's
//! `Draw`/`EventHandler` split, kept to two methods and one context.
//!
//! This module also holds the types that cross between the components, the `App` and the
//! runner: [`Action`], [`Screen`], [`StatusInfo`] and [`Confirm`] (re-exported by
//! [`super::app`]).

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::keymap::{Command, Keymap, Scope};
use super::overlay::Layer;
use super::panes::Focus;
use super::presenter::ScreenMask;
use super::response::ResponseView;
use super::status_line::{Level, Message};
use super::theme::Theme;
use crate::client::Engine;
use crate::profile::Target;
use crate::xs2a::operations::Operation;

/// What the runner must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing beyond redrawing.
    None,
    /// Leave the console.
    Quit,
    /// Prepare (sign) the selected operation afresh and send it ([`App::request_spec`](crate::tui::App::request_spec)).
    Send,
    /// Open this URL in the browser.
    OpenBrowser(String),
    /// Forget the PSU-ID and start a new TPP session ([`crate::client::Engine::reset_session`]).
    ResetSession,
    /// Export the request of [`App::request_spec`](crate::tui::App::request_spec) as cURL
    /// and as programs that sign ([`crate::tui::history::export_request`]).
    ExportCode,
    /// Start the profile with this name and make it active.
    SwitchProfile(String),
    /// Read the profiles again for the profiles screen ([`App::set_profiles`](crate::tui::App::set_profiles)).
    LoadProfiles,
    /// Read the history for the history screen ([`super::history::load`] with
    /// [`App::history_query`](crate::tui::App::history_query), then [`App::set_history`](crate::tui::App::set_history)).
    LoadHistory,
    /// Read the whole exchange with this id for the history screen's detail
    /// ([`super::history::load_entry`], then
    /// [`App::set_history_entry`](crate::tui::App::set_history_entry)).
    LoadHistoryEntry(i64),
    /// Re-send the history exchange with this id, prepared and signed afresh
    /// ([`crate::client::export::reprepare`]).
    ResendHistory(i64),
    /// Switch to the profile (the one the exchange was recorded under), then re-send the
    /// history exchange with this id as [`Action::ResendHistory`].
    ResendHistoryAs(i64, String),
    /// Write the history exchange with this id as a cURL command, signed afresh, to a file
    /// in the data dir.
    ExportHistoryCurl(i64),
    /// Import the requests of this file (Postman, HAR, cURL) ([`App::set_imported`](crate::tui::App::set_imported)).
    ImportFile(String),
    /// Send the imported request at this index ([`App::imported_request`](crate::tui::App::imported_request)), re-signed with
    /// the active profile.
    SendImported(usize),
    /// Copy this text to the clipboard (OSC 52, [`crossterm::clipboard::CopyToClipboard`]).
    Copy(String),
    /// Evaluate a jq filter off the UI task ([`super::response::spawn_filter`]), then
    /// [`App::filter_finished`](crate::tui::App::filter_finished).
    RunFilter(super::response::FilterJob),
    /// Read the lessons (built-in and `<config>/lessons`) for the lesson picker
    /// ([`App::set_lessons`](crate::tui::App::set_lessons)).
    LoadLessons,
    /// Read the latest flow from the history for the flow screen
    /// ([`App::set_flow`](crate::tui::App::set_flow)).
    LoadFlow,
    /// Follow the active sandbox's event stream ([`crate::client::monitor::follow`], fed
    /// to [`App::monitor_feed`](crate::tui::App::monitor_feed), which asks to read the
    /// state once subscribed).
    MonitorStart,
    /// Ask the active sandbox ([`crate::client::monitor::perform`]), then
    /// [`App::monitor_done`](crate::tui::App::monitor_done).
    Monitor(crate::client::monitor::MonitorRequest),
    /// Read the status of the resource whose SCA completed, with the one sender
    /// ([`crate::client::sender::Sender::read_status`]), then
    /// [`App::status_read`](crate::tui::App::status_read).
    ReadStatus(Box<crate::client::engine::PendingSca>),
    /// Stop waiting for this SCA's callback ([`crate::client::Engine::abandon_sca`]): Esc on
    /// its prompt.
    AbandonSca(Box<crate::client::engine::PendingSca>),
}

/// The screens, switched with `1`–`5` (F1–F5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Screen {
    /// Operations, parameters, request, signature, response.
    #[default]
    Console,
    /// Profiles, their certificates and session state ([`super::profiles`]).
    Profiles,
    /// Every exchange sent ([`super::history`]).
    History,
    /// The latest flow as a live sequence diagram ([`super::flow_view`]).
    Flow,
    /// The sandbox monitor: its requests, state, clock and faults ([`super::monitor`]).
    Monitor,
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
    /// Room mode: the address the embedded sandbox and the callback listener are reachable
    /// on from the network (`--listen`, the profile's `listen`); `None` on 127.0.0.1.
    pub room: Option<String>,
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
            room: engine.room_address().map(|a| a.to_string()),
        }
    }
}

/// A destructive action that waits for `y` (any other key cancels it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    /// Reset the session (`r`): forget the PSU-ID and start a new TPP session.
    ResetSession,
    /// Generate a new certificate and key for this profile (`g` on the Profiles screen).
    GenerateCert(String),
    /// Re-send history exchange `id`, recorded under another profile than the active one:
    /// `y` switches to `recorded` (when it is loaded) and sends, `a` sends with the active
    /// profile.
    ResendOtherProfile {
        /// The history exchange.
        id: i64,
        /// The profile it was recorded under, when it is loaded.
        recorded: Option<String>,
    },
}

/// What a component reads of the console, and where it leaves status-line messages. Built
/// by the `App` for each call; the messages are shown, in order, once the call returns.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    /// Colours.
    pub(crate) theme: &'a Theme,
    /// The keys in force (with the config file's overrides).
    pub(crate) keymap: &'a Keymap,
    /// The active profile and session (status bar data).
    pub(crate) status: &'a StatusInfo,
    /// The names of the loaded profiles (the active one included).
    pub(crate) profiles: &'a [String],
    /// The console's operations, in display order.
    pub(crate) ops: &'a [&'static Operation],
    /// Whether a request is in flight.
    pub(crate) sending: bool,
    /// Whether volatile values (serials, times, home directories) are masked, for
    /// snapshots.
    pub(crate) mask: bool,
    /// Presenter mode's masking of secrets and PSU data: every text drawn goes through it
    /// ([`ScreenMask::text`]).
    pub(crate) screen_mask: ScreenMask,
    /// The console pane drawn as focused (the parameters while typing in INSERT mode);
    /// `None` outside the console's panes.
    pub(crate) focus: Option<Focus>,
    said: Vec<Message>,
}

impl<'a> Ctx<'a> {
    /// A context over the console's shared state, with no message yet.
    pub(crate) fn new(
        theme: &'a Theme,
        keymap: &'a Keymap,
        status: &'a StatusInfo,
        profiles: &'a [String],
        ops: &'a [&'static Operation],
        sending: bool,
        mask: bool,
    ) -> Self {
        Ctx {
            theme,
            keymap,
            status,
            profiles,
            ops,
            sending,
            mask,
            screen_mask: ScreenMask::off(),
            focus: None,
            said: Vec::new(),
        }
    }

    /// The context with presenter mode's masking ([`ScreenMask`]).
    pub(crate) fn with_screen_mask(mut self, screen_mask: ScreenMask) -> Self {
        self.screen_mask = screen_mask;
        self
    }

    /// The context with `focus` as the console pane drawn as focused.
    pub(crate) fn with_focus(mut self, focus: Focus) -> Self {
        self.focus = Some(focus);
        self
    }

    /// Leaves `text` for the status line (warnings and errors also go to the problems log).
    pub(crate) fn say(&mut self, level: Level, text: impl Into<String>) {
        self.said.push(Message {
            level,
            text: text.into(),
        });
    }

    /// True, with a warning in the status line, while a request is in flight (a second send
    /// waits for it).
    pub(crate) fn busy(&mut self) -> bool {
        if self.sending {
            self.say(Level::Warning, "Still waiting for the previous response");
        }
        self.sending
    }

    /// The messages left by the call, oldest first.
    pub(crate) fn into_messages(self) -> Vec<Message> {
        self.said
    }
}

/// What a component asks of the `App` after a key.
#[derive(Debug)]
pub(crate) enum Effect {
    /// Taken; nothing beyond redrawing.
    None,
    /// Hand this to the runner.
    Run(Action),
    /// Ask y/N before `what` (status line: `question (y/N) note`).
    Ask {
        /// The action waiting for `y`.
        what: Confirm,
        /// The question.
        question: String,
        /// What the answers do.
        note: String,
    },
    /// Show a recorded exchange in the console (history `Enter`).
    OpenExchange(Box<OpenExchange>),
    /// Close this dialog.
    Close(Layer),
    /// Show the SCA prompt for this scaRedirect URL (a `_links.scaRedirect` followed by
    /// hand in the response pane).
    ScaPrompt(String),
    /// Select operation `index` of the console's list; `close`: the finder closes.
    Select {
        /// Index into the operation list.
        index: usize,
        /// Whether the operation finder closes.
        close: bool,
    },
    /// Close the palette and run `Command` as if its key had been pressed where `Scope`
    /// applies (the screen switched, the pane focused, the dialog opened first).
    RunInScope(Scope, Command),
    /// Select an operation with these parameters and body in the console (a lesson's step).
    Prefill(Box<Prefill>),
    /// Close the lesson picker and start this lesson ([`super::lesson`]).
    StartLesson(Box<crate::lessons::Lesson>),
    /// Close the lesson picker and end the running lesson.
    EndLesson,
    /// Close the body editor and keep its text in the form ([`super::body_editor`]).
    CloseBody,
    /// Remember `template` as the one chosen for operation `op` (the body editor opens on
    /// it next time).
    KeepTemplate {
        /// The operation id.
        op: &'static str,
        /// Index into the operation's templates.
        template: usize,
    },
}

/// An operation to select in the console with prefilled values (a lesson's step).
#[derive(Debug)]
pub(crate) struct Prefill {
    /// The operation.
    pub(crate) op: &'static Operation,
    /// Parameter values (path, query, header), name → value.
    pub(crate) params: Vec<(String, String)>,
    /// The request body; `None` keeps the form's body.
    pub(crate) body: Option<String>,
}

/// A recorded exchange shown in the console: its operation selected with its parameters and
/// body, its response in the response pane, the console focused on it.
#[derive(Debug)]
pub(crate) struct OpenExchange {
    /// The catalogue operation to select (none for an imported request).
    pub(crate) op: Option<&'static Operation>,
    /// Its parameters, as recorded.
    pub(crate) params: Vec<(String, String)>,
    /// Its request body for the form (at most the history's body cap), when it has one.
    pub(crate) body: Option<String>,
    /// The response as recorded.
    pub(crate) view: ResponseView,
    /// What the status line says about it.
    pub(crate) message: Message,
}

/// A screen or dialog that owns its state (see the module documentation).
pub(crate) trait Component {
    /// Takes command `cmd` of the keymap; `None` when the component does not take it (the
    /// `App` then handles it).
    fn handle(&mut self, cmd: Command, ctx: &mut Ctx) -> Option<Effect>;

    /// Takes `key` before the keymap while a text box of the component is open (so typing
    /// never fires a command); `None` when none is open.
    fn input(&mut self, _key: &KeyEvent, _ctx: &mut Ctx) -> Option<Effect> {
        None
    }

    /// Takes pasted text; false when no text box of the component is open.
    fn paste(&mut self, _text: &str) -> bool {
        false
    }

    /// Whether a text box of the component is open, so that it takes the keys as text
    /// ([`Component::input`]) and pasted text ([`Component::paste`]): the
    /// [`Layer::Insert`] of the focus chain.
    fn typing(&self) -> bool {
        false
    }

    /// Draws the component into `area`.
    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx);
}
