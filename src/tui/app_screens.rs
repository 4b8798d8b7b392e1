//! The [`App`]'s side of the components: the effects they return ([`App::apply`]), and
//! what the runner and the tests ask of the screens (profiles, history, flow, monitor),
//! the lessons and the palette.

use super::app::{
    Action, App, Focus, HistoryView, Level, Message, ProfilesView, ResponseState, Screen,
};
use super::catalogue::OperationFinder;
use super::component::{Component, Effect, OpenExchange};
use super::history::{HistoryError, HistoryPage};
use super::keymap::{self};
use super::overlay::{Layer, Overlay};
use super::palette::PaletteView;
use crate::client::history::{HistoryEntry, HistorySummary};
use crate::client::import::{ImportedRequest, Variables};
use crate::profile::ProfileSet;

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
            Effect::ScaPrompt(url) => {
                self.sca.prompt = Some(super::app::ScaPrompt::new(url));
                self.overlays.open(super::overlay::Overlay::ScaPrompt);
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
            Effect::CloseBody => {
                self.close_body_editor();
                Action::None
            }
            Effect::KeepTemplate { op, template } => {
                self.keep_template(op, template);
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
    pub(crate) fn prefill_operation(&mut self, p: super::component::Prefill) {
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

    /// Shows a recorded exchange in the console: its operation selected with its parameters
    /// and body, its response in the response pane, focused.
    pub(crate) fn open_exchange(&mut self, o: OpenExchange) {
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
        self.response_pane
            .show(ResponseState::Done(Box::new(o.view)), 0);
        self.panes.focus = Focus::Response;
        self.screen = Screen::Console;
    }

    /// Hands a key to the component of the screen shown (history, profiles) and performs
    /// its effect; `None` on the console screen or when the component does not take it.
    pub(crate) fn on_screen(
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
    /// ([`HistoryView::set_rows`]); returns the read of the highlighted exchange when the
    /// page did not bring it ([`Action::LoadHistoryEntry`]), else [`Action::None`].
    pub fn set_history(&mut self, query: &str, rows: Result<HistoryPage, HistoryError>) -> Action {
        self.screens.history.set_rows(query, rows)
    }

    /// Shows the whole exchange `id` read for the history screen's detail
    /// ([`HistoryView::set_entry`]).
    pub fn set_history_entry(
        &mut self,
        id: i64,
        entry: Result<Option<HistoryEntry>, HistoryError>,
    ) {
        self.screens.history.set_entry(id, entry);
    }

    /// The rows shown on the history screen, newest first.
    pub fn history_rows(&self) -> &[HistorySummary] {
        self.screens.history.rows()
    }

    /// The whole exchange with history id `id`, if it has been read (the highlighted or
    /// the marked one).
    pub fn history_entry(&self, id: i64) -> Option<&HistoryEntry> {
        self.screens.history.entry(id)
    }

    /// The highlighted row of the history screen.
    pub fn highlighted_exchange(&self) -> Option<&HistorySummary> {
        self.screens.history.highlighted_row()
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

    /// Shows where a cURL export of history exchange `id` was written, or why it failed.
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
