//! Input routing of the [`App`]: the one focus chain ([`App::focus_chain`]) that keys,
//! paste and the mouse read, the y/N question, and the keymap's commands on the console.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::{Action, App, Confirm, Focus, Level, Message, Mode, Screen, fields_of};
use super::catalogue::OperationFinder;
use super::component::{Component, Ctx, Effect};
use super::form::step;
use super::keymap::{Command, Context, Scope};
use super::overlay::{Layer, Overlay};
use super::palette::{HelpView, PaletteView};
use super::response_pane::ResponsePane;

impl App {
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
    pub(crate) fn confirm_key(&mut self, key: &KeyEvent) -> Option<Action> {
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
    pub(crate) fn screen_typing(&self) -> bool {
        match self.screen {
            Screen::Console => self.form.mode == Mode::Insert || self.response_pane.typing(),
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
    pub(crate) fn layer_key(&mut self, key: &KeyEvent) -> Option<Action> {
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
            Layer::Insert if self.screen == Screen::Console => {
                self.on_response(|pane, ctx| pane.input(key, ctx))
            }
            Layer::Insert => self.on_screen(|screen, ctx| screen.input(key, ctx)),
            Layer::BodyEditor => with_ctx!(self, |ctx| self
                .overlays
                .body_editor_mut()
                .and_then(|e| e.input(key, &mut ctx))),
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
            Some(Layer::BodyEditor) => self
                .overlays
                .body_editor_mut()
                .is_some_and(|e| e.paste(text)),
            Some(Layer::Insert) if self.form.mode == Mode::Insert => {
                for c in text.chars().filter(|c| *c != '\n' && *c != '\r') {
                    self.type_char(c);
                }
                true
            }
            Some(Layer::Insert) => match self.screen {
                Screen::Profiles => self.screens.profiles.paste(text),
                Screen::Monitor => self.screens.monitor.paste(text),
                Screen::History => self.screens.history.paste(text),
                Screen::Flow => self.screens.flow.paste(text),
                Screen::Console => self.response_pane.paste(text),
            },
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
    pub(crate) fn screen_command(&mut self, ctx: Context, cmd: Command) -> Option<Action> {
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
            Context::LinkChooser => self.on_response(|pane, ctx| pane.handle(cmd, ctx)),
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
            | Command::ClearResponse
            | Command::ScrollLeft
            | Command::ScrollRight => {
                return self
                    .on_response(|pane, ctx| pane.handle(cmd, ctx))
                    .unwrap_or(Action::None);
            }
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
            | Command::FormatBody => {
                return with_ctx!(self, |ctx| self
                    .overlays
                    .body_editor_mut()
                    .and_then(|e| e.handle(cmd, &mut ctx)))
                .unwrap_or(Action::None);
            }
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
            // The focused pane scrolls, else the response.
            Command::PageUp | Command::PageDown | Command::Top | Command::Bottom => {
                match self.panes.focus.scroll_slot() {
                    Some(slot) => match cmd {
                        Command::PageUp => self.scroll_lines(slot, -self.panes.page(slot)),
                        Command::PageDown => self.scroll_lines(slot, self.panes.page(slot)),
                        Command::Top => self.panes.scroll[slot] = 0,
                        _ => self.panes.scroll[slot] = self.max_scroll(slot),
                    },
                    None => {
                        return self
                            .on_response(|pane, ctx| pane.handle(cmd, ctx))
                            .unwrap_or(Action::None);
                    }
                }
            }
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

    pub(crate) fn move_by(&mut self, ctx: Context, delta: isize) {
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
            Focus::Response => {
                let cmd = if delta < 0 {
                    Command::Up
                } else {
                    Command::Down
                };
                self.on_response(|pane, ctx| pane.handle(cmd, ctx));
            }
            f => {
                if let Some(slot) = f.scroll_slot() {
                    self.scroll_lines(slot, delta);
                }
            }
        }
    }

    pub(crate) fn max_scroll(&self, slot: usize) -> usize {
        self.panes.max_scroll(slot, None)
    }

    pub(crate) fn scroll_lines(&mut self, slot: usize, delta: isize) {
        let max = self.max_scroll(slot);
        self.panes.scroll_lines(slot, delta, max);
    }

    /// Hands a call to the response pane ([`ResponsePane`]) and performs its effect; the
    /// link chooser's layer is then open exactly while the pane has a chooser selection.
    pub(crate) fn on_response(
        &mut self,
        f: impl FnOnce(&mut ResponsePane, &mut Ctx) -> Option<Effect>,
    ) -> Option<Action> {
        let action = with_ctx!(self, |ctx| f(&mut self.response_pane, &mut ctx));
        let chooser = self.response_pane.chooser().is_some();
        if chooser != self.overlays.is_open(Layer::LinkChooser) {
            if chooser {
                self.overlays.open(Overlay::LinkChooser);
            } else {
                self.overlays.close(Layer::LinkChooser);
            }
        }
        action
    }

    pub(crate) fn start_editing(&mut self) {
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

    pub(crate) fn type_char(&mut self, c: char) {
        self.request.dirty |= self.form.type_char(c);
    }

    pub(crate) fn remove_at_cursor(&mut self) {
        self.request.dirty |= self.form.remove_at_cursor();
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
}
