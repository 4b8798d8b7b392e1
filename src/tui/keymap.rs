//! The keymap: one table, [`KEYMAP`], plus the config file's overrides makes the
//! [`Keymap`] that drives both key handling ([`Keymap::lookup`]) and the help overlay, so
//! the help always tells the truth.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key does. The name of a command in the config file's `[keys]` table is the
/// snake_case of its variant ([`Command::name`], e.g. `send`, `toggle_theme`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::EnumIter,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(serialize_all = "snake_case")]
pub enum Command {
    /// Quit the console (not while typing a parameter).
    Quit,
    /// Quit the console, always, even while typing.
    ForceQuit,
    /// Show or hide the help overlay.
    ToggleHelp,
    /// Move up in the focused list, or scroll the focused pane up one line.
    Up,
    /// Move down in the focused list, or scroll the focused pane down one line.
    Down,
    /// Focus the next pane.
    NextFocus,
    /// Focus the previous pane.
    PrevFocus,
    /// Sign and send the selected operation.
    Send,
    /// Sign and send without validating first (to reproduce a bad request on purpose).
    SendAnyway,
    /// Body editor: close it, keeping the text (compacted when it is JSON).
    CloseBody,
    /// Body editor: replace the text by the operation's next body template.
    NextTemplate,
    /// Body editor: replace the text by the current template again.
    ResetBody,
    /// Body editor: pretty-print the JSON.
    FormatBody,
    /// Edit the parameters of the selected operation (INSERT mode).
    EditParams,
    /// Open the last scaRedirect in the browser.
    OpenSca,
    /// Scroll the focused pane (or the response) up one page.
    PageUp,
    /// Scroll the focused pane (or the response) down one page.
    PageDown,
    /// Scroll to the top.
    Top,
    /// Scroll to the bottom.
    Bottom,
    /// Scroll the response left.
    ScrollLeft,
    /// Scroll the response right.
    ScrollRight,
    /// Forget the PSU learned from SCA and start a new TPP session.
    ResetSession,
    /// Console: export the request as the request pane would send it, as cURL (signed
    /// afresh) and as Python, Node, Java and Go programs that sign when they run.
    ExportCode,
    /// Switch to the next theme (built-in ones, then the user's).
    ToggleTheme,
    /// Presenter mode on or off: secrets and PSU data masked on screen, high contrast, the
    /// step in words, compact layouts (issue 12).
    TogglePresenter,
    /// Show the problems seen so far (config, profiles, history writes, failed sends).
    ShowProblems,
    /// Open the command palette (every action, searchable).
    Palette,
    /// Open the profile picker.
    Profiles,
    /// Close the help, the SCA prompt or the profile picker.
    Dismiss,
    /// Choose the highlighted profile.
    Choose,
    /// Leave INSERT mode, keeping what was typed.
    LeaveInsert,
    /// Edit the next parameter.
    NextField,
    /// Edit the previous parameter.
    PrevField,
    /// Delete the character before the cursor.
    Backspace,
    /// Delete the character under the cursor.
    Delete,
    /// Move the cursor left.
    CursorLeft,
    /// Move the cursor right.
    CursorRight,
    /// Move the cursor to the start of the value.
    CursorHome,
    /// Move the cursor to the end of the value.
    CursorEnd,
    /// Clear the value.
    ClearField,
    /// Show the console screen (operations, request, response).
    ShowConsole,
    /// Show the profiles screen.
    ShowProfiles,
    /// Show the history screen.
    ShowHistory,
    /// Show the flow screen: the latest flow as a live sequence diagram.
    ShowFlow,
    /// Open the lesson picker (guided walkthroughs).
    Lessons,
    /// Lesson: the next step (selects its operation with its parameters).
    LessonNext,
    /// Lesson: the previous step.
    LessonBack,
    /// Lesson picker: end the running lesson.
    LessonEnd,
    /// Show the sandbox monitor screen (requests, state, clock, faults).
    ShowMonitor,
    /// Profiles screen: create a profile (opens the form).
    ProfileNew,
    /// Profiles screen: edit the highlighted profile (a built-in one offers a clone).
    ProfileEdit,
    /// Profiles screen: clone the highlighted profile into the form.
    ProfileClone,
    /// Profiles screen: delete the highlighted profile (asks y/n first).
    ProfileDelete,
    /// Profiles screen: generate a test certificate for the highlighted profile (or, in
    /// the form, for the profile being edited).
    ProfileGenerateCert,
    /// Profile form: validate and save.
    FormSave,
    /// Confirm the question asked (e.g. delete this profile).
    Confirm,
    /// History screen: type a search (path, status or body text).
    HistorySearch,
    /// History screen: open the highlighted exchange in the console; in the import list,
    /// send the highlighted request.
    HistoryOpen,
    /// History screen: re-send the highlighted exchange, signed afresh.
    HistoryResend,
    /// History screen: mark the highlighted exchange for a diff.
    HistoryMark,
    /// History screen: diff the marked exchange's response with the highlighted one's.
    HistoryDiff,
    /// History screen: export the highlighted exchange as cURL, signed afresh, to a file.
    HistoryExportCurl,
    /// History screen: import requests from a file (Postman, HAR, cURL).
    HistoryImport,
    /// History screen: the doctor's checks of the highlighted request, offline, in the
    /// bank's order (`psd2-console doctor`).
    HistoryDoctor,
    /// Find an operation by words of its name, id, path or group.
    FindOperation,
    /// Response: open the search box.
    ResponseSearch,
    /// Response: next search match.
    SearchNext,
    /// Response: previous search match.
    SearchPrev,
    /// Response: open the jq filter box.
    ResponseFilter,
    /// Response: copy the body (or the filter result) to the clipboard.
    CopyBody,
    /// Response: follow a link of `_links` (prefills the request).
    FollowLink,
    /// Response: clear the jq filter and the search.
    ClearResponse,
    /// Monitor screen: switch between the request log and the state browser.
    MonitorToggleView,
    /// Monitor screen: advance the sandbox clock by one hour.
    MonitorAdvanceHour,
    /// Monitor screen: advance the sandbox clock by one day.
    MonitorAdvanceDay,
    /// Monitor screen: type an offset to advance the sandbox clock by (`90m`, `2h`, `3d`).
    MonitorAdvanceBy,
    /// Monitor screen: run a batch now over every authorised payment.
    MonitorBatch,
    /// Monitor screen: clear every fault rule.
    MonitorClearFaults,
    /// Monitor screen: read the state again (and reconnect the event stream when it ended).
    MonitorRefresh,
    /// Monitor screen: show or hide the monitor's own reads of the sandbox in the log.
    MonitorShowReads,
}

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Everywhere, including INSERT mode.
    Always,
    /// Everywhere except INSERT mode.
    NotInsert,
    /// Browsing (no dialog open, not typing).
    Normal,
    /// Browsing with the Parameters pane focused (takes precedence over `Normal`).
    ParamsPane,
    /// Browsing with the Response pane focused (takes precedence over `Normal`).
    ResponsePane,
    /// While the help overlay is shown.
    Help,
    /// While the SCA prompt is shown.
    ScaPrompt,
    /// While the profile picker is shown.
    Picker,
    /// INSERT mode: every other key types itself.
    Insert,
    /// The multi-line body editor is open: every other key types into the body.
    BodyEditor,
    /// Browsing the profiles screen.
    ProfilesScreen,
    /// Browsing the history screen.
    HistoryScreen,
    /// Browsing the sandbox monitor screen.
    MonitorScreen,
    /// Typing in the operation finder; other keys type themselves.
    Finder,
    /// The profile form (create, edit, clone): every other key types into the field.
    ProfileForm,
    /// The profiles screen asks for a yes/no confirmation.
    ProfileConfirm,
    /// While the command palette is shown: every other key types into its filter box.
    Palette,
    /// While the response's link chooser is shown.
    LinkChooser,
    /// Browsing the flow screen.
    FlowScreen,
    /// While the lesson picker is shown.
    LessonPicker,
}

impl Scope {
    /// Heading of the scope in the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Scope::Always => "Anywhere",
            Scope::NotInsert => "Anywhere except while typing",
            Scope::Normal => "Browsing",
            Scope::ParamsPane => "Parameters pane",
            Scope::ResponsePane => "Response pane",
            Scope::Help => "Help",
            Scope::ScaPrompt => "SCA prompt",
            Scope::Picker => "Profiles",
            Scope::Insert => "Typing a parameter (INSERT); other keys type themselves",
            Scope::BodyEditor => "Body editor; other keys type into the body",
            Scope::ProfilesScreen => "Profiles screen",
            Scope::HistoryScreen => "History screen",
            Scope::MonitorScreen => "Sandbox monitor screen",
            Scope::ProfileForm => "Profile form; other keys type into the field",
            Scope::ProfileConfirm => "Profiles screen: confirm",
            Scope::Finder => "Finding an operation (/); other keys type themselves",
            Scope::Palette => "Command palette; other keys type into the filter",
            Scope::LinkChooser => "Following a link of the response",
            Scope::FlowScreen => "Flow screen",
            Scope::LessonPicker => "Lessons",
        }
    }

    /// Help-overlay order of the scopes.
    pub const ORDER: [Scope; 20] = [
        Scope::Always,
        Scope::NotInsert,
        Scope::Normal,
        Scope::ParamsPane,
        Scope::ResponsePane,
        Scope::ProfilesScreen,
        Scope::ProfileForm,
        Scope::ProfileConfirm,
        Scope::HistoryScreen,
        Scope::FlowScreen,
        Scope::LessonPicker,
        Scope::MonitorScreen,
        Scope::Finder,
        Scope::ScaPrompt,
        Scope::Picker,
        Scope::LinkChooser,
        Scope::Help,
        Scope::Palette,
        Scope::BodyEditor,
        Scope::Insert,
    ];
}

/// A key with its modifiers (`Shift` is ignored for characters, which carry their case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// `CONTROL` and/or `ALT`; other modifiers are not compared.
    pub mods: KeyModifiers,
}

impl Key {
    /// A key without modifiers.
    pub const fn plain(code: KeyCode) -> Self {
        Key {
            code,
            mods: KeyModifiers::NONE,
        }
    }

    /// A character key without modifiers.
    pub const fn ch(c: char) -> Self {
        Key::plain(KeyCode::Char(c))
    }

    /// Control + a character.
    pub const fn ctrl(c: char) -> Self {
        Key {
            code: KeyCode::Char(c),
            mods: KeyModifiers::CONTROL,
        }
    }

    /// Whether `ev` is this key.
    pub fn matches(&self, ev: &KeyEvent) -> bool {
        let relevant = KeyModifiers::CONTROL | KeyModifiers::ALT;
        if ev.modifiers & relevant != self.mods & relevant {
            return false;
        }
        match (self.code, ev.code) {
            (KeyCode::Char(a), KeyCode::Char(b)) => {
                if self.mods.contains(KeyModifiers::CONTROL) {
                    a.eq_ignore_ascii_case(&b)
                } else {
                    a == b
                }
            }
            (a, b) => a == b,
        }
    }

    /// How the key is written in the help, e.g. `Ctrl-c`, `PgDn`, `Shift-Tab`.
    pub fn label(&self) -> String {
        let name = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift-Tab".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Delete => "Del".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        let mut out = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            out.push_str("Ctrl-");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            out.push_str("Alt-");
        }
        out.push_str(&name);
        out
    }
}

/// One row of the keymap.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// Where it applies.
    pub scope: Scope,
    /// The keys (any of them).
    pub keys: &'static [Key],
    /// What they do.
    pub command: Command,
    /// The help text.
    pub help: &'static str,
    /// A short label for the hint line at the bottom, for the most used keys.
    pub hint: Option<&'static str>,
}

const fn b(
    scope: Scope,
    keys: &'static [Key],
    command: Command,
    help: &'static str,
    hint: Option<&'static str>,
) -> Binding {
    Binding {
        scope,
        keys,
        command,
        help,
        hint,
    }
}

use KeyCode as K;

/// The keymap. Within a context the first matching row of the most specific scope wins
/// (see [`Keymap::lookup`]).
#[rustfmt::skip]
pub const KEYMAP: &[Binding] = &[
    b(Scope::Always, &[Key::ctrl('c')], Command::ForceQuit, "quit", None),
    b(Scope::NotInsert, &[Key::ch('q')], Command::Quit, "quit", Some("quit")),
    b(Scope::NotInsert, &[Key::ch('1'), Key::plain(K::F(1))], Command::ShowConsole, "console screen: operations, request, response", None),
    b(Scope::NotInsert, &[Key::ch('2'), Key::plain(K::F(2))], Command::ShowProfiles, "profiles screen: profiles, certificates, session", None),
    b(Scope::NotInsert, &[Key::ch('3'), Key::plain(K::F(3))], Command::ShowHistory, "history screen: every exchange sent", None),
    b(Scope::NotInsert, &[Key::ch('5'), Key::plain(K::F(5))], Command::ShowFlow, "flow screen: the latest flow as a live sequence diagram, with its clocks", None),
    b(Scope::NotInsert, &[Key::ch('4'), Key::plain(K::F(4))], Command::ShowMonitor, "sandbox monitor: live requests, state, clock, batch, faults", None),
    b(Scope::NotInsert, &[Key::ch('?')], Command::ToggleHelp, "show or hide this help", Some("help")),
    b(Scope::NotInsert, &[Key::ctrl('p')], Command::Palette, "command palette: search every action and run it", None),
    b(Scope::NotInsert, &[Key::ch('P')], Command::TogglePresenter, "presenter mode: mask secrets and PSU data, high contrast", None),
    b(Scope::Normal, &[Key::ch('s'), Key::plain(K::Enter)], Command::Send, "sign and send the selected operation", Some("send")),
    b(Scope::Normal, &[Key::ch('S')], Command::SendAnyway, "send without validating first (bad requests on purpose)", None),
    b(Scope::Normal, &[Key::ch('/')], Command::FindOperation, "find an operation: type words of its name, id, path or group", Some("find")),
    b(Scope::Finder, &[Key::plain(K::Enter)], Command::Choose, "keep the highlighted operation", Some("keep")),
    b(Scope::Finder, &[Key::plain(K::Esc)], Command::Dismiss, "close, back to the operation selected before", Some("cancel")),
    b(Scope::Finder, &[Key::plain(K::Up)], Command::Up, "previous match", None),
    b(Scope::Finder, &[Key::plain(K::Down)], Command::Down, "next match", None),
    b(Scope::Finder, &[Key::plain(K::Backspace)], Command::Backspace, "delete the last character", None),
    b(Scope::Finder, &[Key::ctrl('u')], Command::ClearField, "clear the query", None),
    b(Scope::BodyEditor, &[Key::plain(K::Esc)], Command::CloseBody, "close, keeping the text (compacted when it is JSON)", Some("done")),
    b(Scope::BodyEditor, &[Key::ctrl('t')], Command::NextTemplate, "next body template of the operation", Some("template")),
    b(Scope::BodyEditor, &[Key::ctrl('g')], Command::ResetBody, "reset the body to the template", Some("reset")),
    b(Scope::BodyEditor, &[Key::ctrl('l')], Command::FormatBody, "pretty-print the JSON body", Some("format")),
    b(Scope::Normal, &[Key::ch('e')], Command::EditParams, "edit the parameters of the selected operation", Some("edit")),
    b(Scope::Normal, &[Key::ch('o')], Command::OpenSca, "open the last scaRedirect in the browser", Some("open SCA")),
    b(Scope::Normal, &[Key::ch('r')], Command::ResetSession, "reset the session: forget the PSU-ID, new TPP-Session-ID", Some("reset")),
    b(Scope::Normal, &[Key::ch('x')], Command::ExportCode, "export the request as cURL (signed afresh) and as Python, Node, Java, Go programs that sign, to the data dir", None),
    b(Scope::Normal, &[Key::ch('p')], Command::Profiles, "choose another profile", Some("profiles")),
    b(Scope::Normal, &[Key::plain(K::Up), Key::ch('k')], Command::Up, "move up (operations, parameters) or scroll up", None),
    b(Scope::Normal, &[Key::plain(K::Down), Key::ch('j')], Command::Down, "move down (operations, parameters) or scroll down", None),
    b(Scope::Normal, &[Key::plain(K::Tab)], Command::NextFocus, "focus the next pane", Some("pane")),
    b(Scope::Normal, &[Key::plain(K::BackTab)], Command::PrevFocus, "focus the previous pane", None),
    b(Scope::Normal, &[Key::plain(K::PageUp)], Command::PageUp, "scroll the focused pane (else the response) up a page", None),
    b(Scope::Normal, &[Key::plain(K::PageDown)], Command::PageDown, "scroll the focused pane (else the response) down a page", None),
    b(Scope::Normal, &[Key::plain(K::Home), Key::ch('g')], Command::Top, "scroll to the top", None),
    b(Scope::Normal, &[Key::plain(K::End), Key::ch('G')], Command::Bottom, "scroll to the bottom", None),
    b(Scope::Normal, &[Key::ch('t')], Command::ToggleTheme, "next theme: dark, light, high-contrast, then your own", None),
    b(Scope::Normal, &[Key::ch('!')], Command::ShowProblems, "show problems: the warnings and errors so far", None),
    b(Scope::NotInsert, &[Key::ch('L')], Command::Lessons, "lessons: choose a guided walkthrough to give", None),
    b(Scope::NotInsert, &[Key::ch(']')], Command::LessonNext, "lesson: next step (selects its operation, prefilled)", None),
    b(Scope::NotInsert, &[Key::ch('[')], Command::LessonBack, "lesson: previous step", None),
    b(Scope::ParamsPane, &[Key::plain(K::Enter)], Command::EditParams, "edit the highlighted parameter", None),
    b(Scope::ResponsePane, &[Key::plain(K::Left), Key::ch('h')], Command::ScrollLeft, "scroll left", None),
    b(Scope::ResponsePane, &[Key::plain(K::Right), Key::ch('l')], Command::ScrollRight, "scroll right", None),
    b(Scope::ResponsePane, &[Key::ch('/')], Command::ResponseSearch, "search the body (Enter jumps to the first match)", Some("search")),
    b(Scope::ResponsePane, &[Key::ch('n')], Command::SearchNext, "next match", None),
    b(Scope::ResponsePane, &[Key::ch('N')], Command::SearchPrev, "previous match", None),
    b(Scope::ResponsePane, &[Key::ch('|')], Command::ResponseFilter, "jq filter (jaq, in-process); empty or Esc clears", Some("jq")),
    b(Scope::ResponsePane, &[Key::ch('y')], Command::CopyBody, "copy the body (or the filter result) to the clipboard (OSC 52)", Some("copy")),
    b(Scope::ResponsePane, &[Key::ch('f')], Command::FollowLink, "follow a link of _links: prefills the next request", Some("follow")),
    b(Scope::ResponsePane, &[Key::plain(K::Esc)], Command::ClearResponse, "clear the jq filter and the search", None),
    b(Scope::LinkChooser, &[Key::plain(K::Up), Key::ch('k')], Command::Up, "previous link", None),
    b(Scope::LinkChooser, &[Key::plain(K::Down), Key::ch('j')], Command::Down, "next link", None),
    b(Scope::LinkChooser, &[Key::plain(K::Enter)], Command::Choose, "follow the highlighted link", None),
    b(Scope::LinkChooser, &[Key::plain(K::Esc)], Command::Dismiss, "close without following", None),
    b(Scope::HistoryScreen, &[Key::plain(K::Up), Key::ch('k')], Command::Up, "previous exchange (diff: scroll up)", None),
    b(Scope::HistoryScreen, &[Key::plain(K::Down), Key::ch('j')], Command::Down, "next exchange (diff: scroll down)", None),
    b(Scope::HistoryScreen, &[Key::plain(K::PageUp)], Command::PageUp, "scroll the exchange or diff up a page", None),
    b(Scope::HistoryScreen, &[Key::plain(K::PageDown)], Command::PageDown, "scroll the exchange or diff down a page", None),
    b(Scope::HistoryScreen, &[Key::ch('/')], Command::HistorySearch, "search path, status, body (Enter keeps, Esc clears)", Some("search")),
    b(Scope::HistoryScreen, &[Key::plain(K::Enter)], Command::HistoryOpen, "open in the console (import list: send it)", Some("open")),
    b(Scope::HistoryScreen, &[Key::ch('r')], Command::HistoryResend, "re-send, signed afresh (new Date, X-Request-ID)", Some("re-send")),
    b(Scope::HistoryScreen, &[Key::ch('m')], Command::HistoryMark, "mark for a diff (again: unmark)", Some("mark")),
    b(Scope::HistoryScreen, &[Key::ch('d')], Command::HistoryDiff, "diff the marked response with this one", Some("diff")),
    b(Scope::HistoryScreen, &[Key::ch('x')], Command::HistoryExportCurl, "export as cURL (signed afresh) and as Python, Node, Java, Go programs that sign, to the data dir", Some("export")),
    b(Scope::HistoryScreen, &[Key::ch('i')], Command::HistoryImport, "import a Postman, HAR or cURL file, send a request", Some("import")),
    b(Scope::HistoryScreen, &[Key::ch('c')], Command::HistoryDoctor, "doctor: check the request as the bank would, offline", Some("doctor")),
    b(Scope::HistoryScreen, &[Key::plain(K::Esc)], Command::Dismiss, "close the diff, doctor or import list, else clear the search", None),
    b(Scope::FlowScreen, &[Key::plain(K::Up), Key::ch('k')], Command::Up, "earlier arrows", None),
    b(Scope::FlowScreen, &[Key::plain(K::Down), Key::ch('j')], Command::Down, "later arrows", None),
    b(Scope::FlowScreen, &[Key::plain(K::PageUp)], Command::PageUp, "earlier arrows, a page", None),
    b(Scope::FlowScreen, &[Key::plain(K::PageDown)], Command::PageDown, "later arrows, a page", None),
    b(Scope::FlowScreen, &[Key::plain(K::Home), Key::ch('g')], Command::Top, "the first arrow", None),
    b(Scope::FlowScreen, &[Key::plain(K::End), Key::ch('G')], Command::Bottom, "the newest arrow (and follow new ones)", Some("follow")),
    b(Scope::LessonPicker, &[Key::plain(K::Up), Key::ch('k')], Command::Up, "previous lesson", None),
    b(Scope::LessonPicker, &[Key::plain(K::Down), Key::ch('j')], Command::Down, "next lesson", None),
    b(Scope::LessonPicker, &[Key::plain(K::Enter)], Command::Choose, "start the highlighted lesson", None),
    b(Scope::LessonPicker, &[Key::ch('x')], Command::LessonEnd, "end the running lesson", None),
    b(Scope::LessonPicker, &[Key::plain(K::Esc)], Command::Dismiss, "close the lesson picker", None),
    b(Scope::MonitorScreen, &[Key::plain(K::Up), Key::ch('k')], Command::Up, "previous (newer) row", None),
    b(Scope::MonitorScreen, &[Key::plain(K::Down), Key::ch('j')], Command::Down, "next (older) row", None),
    b(Scope::MonitorScreen, &[Key::plain(K::Home), Key::ch('g')], Command::Top, "the newest row", None),
    b(Scope::MonitorScreen, &[Key::plain(K::End), Key::ch('G')], Command::Bottom, "the oldest row", None),
    b(Scope::MonitorScreen, &[Key::plain(K::Tab), Key::ch('v')], Command::MonitorToggleView, "switch between the request log and the state browser", Some("log/state")),
    b(Scope::MonitorScreen, &[Key::ch('+')], Command::MonitorAdvanceHour, "advance the sandbox clock by 1 hour", Some("+1 h")),
    b(Scope::MonitorScreen, &[Key::ch('D')], Command::MonitorAdvanceDay, "advance the sandbox clock by 1 day", Some("+1 day")),
    b(Scope::MonitorScreen, &[Key::ch('a')], Command::MonitorAdvanceBy, "advance the sandbox clock by a typed offset (90m, 2h, 3d, 1d6h; Enter, Esc)", Some("advance")),
    b(Scope::MonitorScreen, &[Key::ch('b')], Command::MonitorBatch, "run a batch now (every authorised payment)", Some("batch")),
    b(Scope::MonitorScreen, &[Key::ch('x')], Command::MonitorClearFaults, "clear every fault rule", Some("clear faults")),
    b(Scope::MonitorScreen, &[Key::ch('r')], Command::MonitorRefresh, "read the state again; reconnect the event stream when it ended", Some("refresh")),
    b(Scope::MonitorScreen, &[Key::ch('m')], Command::MonitorShowReads, "show or hide the monitor's own reads of the sandbox in the log", None),
    b(Scope::ScaPrompt, &[Key::ch('o'), Key::plain(K::Enter)], Command::OpenSca, "open the URL in the browser", None),
    b(Scope::ScaPrompt, &[Key::plain(K::Esc)], Command::Dismiss, "give up this SCA: its callback is no longer awaited", None),
    b(Scope::Picker, &[Key::plain(K::Up), Key::ch('k')], Command::Up, "previous profile", None),
    b(Scope::Picker, &[Key::plain(K::Down), Key::ch('j')], Command::Down, "next profile", None),
    b(Scope::Picker, &[Key::plain(K::Enter)], Command::Choose, "switch to the highlighted profile", None),
    b(Scope::Picker, &[Key::plain(K::Esc)], Command::Dismiss, "close without switching", None),
    b(Scope::Help, &[Key::plain(K::Up), Key::ch('k')], Command::Up, "scroll the help up", None),
    b(Scope::Help, &[Key::plain(K::Down), Key::ch('j')], Command::Down, "scroll the help down", None),
    b(Scope::Help, &[Key::plain(K::PageUp)], Command::PageUp, "scroll the help up a page", None),
    b(Scope::Help, &[Key::plain(K::PageDown), Key::ch(' ')], Command::PageDown, "scroll the help down a page", None),
    b(Scope::Help, &[Key::plain(K::Esc)], Command::Dismiss, "close the help", None),
    b(Scope::Palette, &[Key::plain(K::Up), Key::ctrl('k')], Command::Up, "previous action", None),
    b(Scope::Palette, &[Key::plain(K::Down), Key::ctrl('j')], Command::Down, "next action", None),
    b(Scope::Palette, &[Key::plain(K::Enter)], Command::Choose, "run the highlighted action", None),
    b(Scope::Palette, &[Key::plain(K::Esc), Key::ctrl('p')], Command::Dismiss, "close the palette", None),
    b(Scope::ProfilesScreen, &[Key::plain(K::Up), Key::ch('k')], Command::Up, "previous profile", None),
    b(Scope::ProfilesScreen, &[Key::plain(K::Down), Key::ch('j')], Command::Down, "next profile", None),
    b(Scope::ProfilesScreen, &[Key::plain(K::Enter)], Command::Choose, "switch to the highlighted profile", Some("use")),
    b(Scope::ProfilesScreen, &[Key::ch('n')], Command::ProfileNew, "new profile", Some("new")),
    b(Scope::ProfilesScreen, &[Key::ch('e')], Command::ProfileEdit, "edit the highlighted profile (built-in ones are cloned instead)", Some("edit")),
    b(Scope::ProfilesScreen, &[Key::ch('c')], Command::ProfileClone, "clone the highlighted profile", Some("clone")),
    b(Scope::ProfilesScreen, &[Key::ch('d')], Command::ProfileDelete, "delete the highlighted profile (asks first)", Some("delete")),
    b(Scope::ProfilesScreen, &[Key::ch('g')], Command::ProfileGenerateCert, "generate a test certificate for the highlighted profile", Some("gen cert")),
    b(Scope::ProfileForm, &[Key::plain(K::Tab), Key::plain(K::Down)], Command::NextField, "next field", Some("next")),
    b(Scope::ProfileForm, &[Key::plain(K::BackTab), Key::plain(K::Up)], Command::PrevField, "previous field", None),
    b(Scope::ProfileForm, &[Key::plain(K::Enter), Key::ctrl('s')], Command::FormSave, "check and save the profile", Some("save")),
    b(Scope::ProfileForm, &[Key::plain(K::Esc)], Command::Dismiss, "cancel (nothing is saved)", Some("cancel")),
    b(Scope::ProfileForm, &[Key::ctrl('g')], Command::ProfileGenerateCert, "generate a test certificate with the roles typed; fills in certificate and key", Some("gen cert")),
    b(Scope::ProfileForm, &[Key::ctrl('u')], Command::ClearField, "clear the field", None),
    b(Scope::ProfileConfirm, &[Key::ch('y')], Command::Confirm, "yes", Some("yes")),
    b(Scope::ProfileConfirm, &[Key::ch('n'), Key::plain(K::Esc)], Command::Dismiss, "no", Some("no")),
    b(Scope::Insert, &[Key::plain(K::Esc), Key::plain(K::Enter)], Command::LeaveInsert, "stop typing (the value is kept)", Some("done")),
    b(Scope::Insert, &[Key::plain(K::Tab), Key::plain(K::Down)], Command::NextField, "next parameter", Some("next")),
    b(Scope::Insert, &[Key::plain(K::BackTab), Key::plain(K::Up)], Command::PrevField, "previous parameter", None),
    b(Scope::Insert, &[Key::plain(K::Backspace)], Command::Backspace, "delete before the cursor", None),
    b(Scope::Insert, &[Key::plain(K::Delete)], Command::Delete, "delete under the cursor", None),
    b(Scope::Insert, &[Key::plain(K::Left)], Command::CursorLeft, "cursor left", None),
    b(Scope::Insert, &[Key::plain(K::Right)], Command::CursorRight, "cursor right", None),
    b(Scope::Insert, &[Key::plain(K::Home)], Command::CursorHome, "cursor to the start", None),
    b(Scope::Insert, &[Key::plain(K::End)], Command::CursorEnd, "cursor to the end", None),
    b(Scope::Insert, &[Key::ctrl('u')], Command::ClearField, "clear the value", Some("clear")),
];

/// The situation a key arrives in, which decides the scopes searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Browsing; `params_focused` / `response_focused` add the pane scopes.
    Normal {
        /// The Parameters pane has focus.
        params_focused: bool,
        /// The Response pane has focus.
        response_focused: bool,
    },
    /// Typing a parameter.
    Insert,
    /// The help overlay is shown.
    Help,
    /// The SCA prompt is shown.
    ScaPrompt,
    /// The profile picker is shown.
    Picker,
    /// Browsing the profiles screen.
    Profiles,
    /// Browsing the history screen.
    History,
    /// Browsing the sandbox monitor screen.
    Monitor,
    /// Typing in the operation finder.
    Finder,
    /// The command palette is shown (its filter box takes every other key).
    Palette,
    /// The body editor is open (every other key types into the body).
    BodyEditor,
    /// The response's link chooser is shown.
    LinkChooser,
    /// Browsing the flow screen.
    Flow,
    /// The lesson picker is shown.
    Lessons,
}

impl Context {
    /// The scopes searched, most specific first.
    pub fn scopes(self) -> Vec<Scope> {
        match self {
            Context::Insert => vec![Scope::Always, Scope::Insert],
            Context::Help => vec![Scope::Always, Scope::Help, Scope::NotInsert],
            Context::ScaPrompt => vec![Scope::Always, Scope::ScaPrompt, Scope::NotInsert],
            Context::Picker => vec![Scope::Always, Scope::Picker, Scope::NotInsert],
            Context::Profiles => vec![Scope::Always, Scope::ProfilesScreen, Scope::NotInsert],
            Context::History => vec![Scope::Always, Scope::HistoryScreen, Scope::NotInsert],
            Context::Monitor => vec![Scope::Always, Scope::MonitorScreen, Scope::NotInsert],
            Context::Finder => vec![Scope::Always, Scope::Finder],
            Context::Palette => vec![Scope::Always, Scope::Palette],
            Context::BodyEditor => vec![Scope::Always, Scope::BodyEditor],
            Context::LinkChooser => vec![Scope::Always, Scope::LinkChooser, Scope::NotInsert],
            Context::Flow => vec![Scope::Always, Scope::FlowScreen, Scope::NotInsert],
            Context::Lessons => vec![Scope::Always, Scope::LessonPicker, Scope::NotInsert],
            Context::Normal {
                params_focused,
                response_focused,
            } => {
                let mut v = vec![Scope::Always];
                if params_focused {
                    v.push(Scope::ParamsPane);
                }
                if response_focused {
                    v.push(Scope::ResponsePane);
                }
                v.push(Scope::NotInsert);
                v.push(Scope::Normal);
                v
            }
        }
    }
}

impl Command {
    /// The command's name in the config file's `[keys]` table: the snake_case of the
    /// variant (`send`, `toggle_theme`, `force_quit`).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The command called `name` ([`Command::name`]), if any.
    pub fn from_name(name: &str) -> Option<Command> {
        name.trim().parse().ok()
    }

    /// Every command, in declaration order.
    pub fn all() -> impl Iterator<Item = Command> {
        <Command as strum::IntoEnumIterator>::iter()
    }
}

/// Commands deliberately bound to no key in [`KEYMAP`] (they can only be run from code);
/// every other command has at least one row there (tested).
pub const UNBOUND: &[Command] = &[];

impl Scope {
    /// Scopes whose other keys type text (INSERT mode, the body editor, the finder, the
    /// profile form, the palette's filter): the global `NotInsert` keys do not apply there.
    pub fn is_typing(self) -> bool {
        matches!(
            self,
            Scope::Insert | Scope::BodyEditor | Scope::Palette | Scope::Finder | Scope::ProfileForm
        )
    }

    /// Whether a key bound in both `self` and `other` would clash: the same scope, or a
    /// global scope and one it is searched together with.
    pub fn overlaps(self, other: Scope) -> bool {
        self == other
            || self == Scope::Always
            || other == Scope::Always
            || (self == Scope::NotInsert && !other.is_typing())
            || (other == Scope::NotInsert && !self.is_typing())
    }
}

/// Why a key of the config file is not a key ([`parse_key`]); each holds the key as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyParseError {
    /// Nothing was written.
    #[error("an empty key")]
    Empty,
    /// Not a character nor a known key name.
    #[error(
        "\"{0}\" is not a key (examples: a, A, ctrl-x, alt-x, enter, esc, tab, backtab, up, pgdn, f1, space)"
    )]
    Unknown(String),
    /// `shift-` before a character that is not a letter.
    #[error(
        "\"{0}\": shift- only goes with letters and tab (write the character itself, e.g. ? or A)"
    )]
    ShiftOnCharacter(String),
    /// `shift-` before a named key other than `tab`.
    #[error("\"{0}\": shift- only goes with letters and tab")]
    ShiftOnKey(String),
}

/// Parses a key as written in the config file: a character (`a`, `A`, `?`), a name
/// (`enter`, `esc`, `tab`, `backtab`, `up`, `down`, `left`, `right`, `pgup`, `pgdn`,
/// `home`, `end`, `space`, `backspace`, `del`, `f1`..`f12`), optionally after `ctrl-`,
/// `alt-` (and `shift-` for `tab` and letters). Names are case-insensitive; a single
/// character keeps its case (`A` is Shift-a).
///
/// Errors: an empty string, an unknown name, `shift-` on a key other than a letter or tab
/// ([`KeyParseError`]).
pub fn parse_key(s: &str) -> Result<Key, KeyParseError> {
    let written = s.trim();
    let mut rest = written;
    let mut mods = KeyModifiers::NONE;
    let mut shift = false;
    while rest.chars().count() > 1 {
        let lower = rest.to_ascii_lowercase();
        if lower.starts_with("ctrl-") {
            mods |= KeyModifiers::CONTROL;
            rest = &rest[5..];
        } else if lower.starts_with("alt-") {
            mods |= KeyModifiers::ALT;
            rest = &rest[4..];
        } else if lower.starts_with("shift-") {
            shift = true;
            rest = &rest[6..];
        } else {
            break;
        }
    }
    let bad = || KeyParseError::Unknown(written.to_string());
    let mut chars = rest.chars();
    let code = match (chars.next(), chars.next()) {
        (None, _) => return Err(KeyParseError::Empty),
        (Some(c), None) => {
            let c = if shift {
                if !c.is_alphabetic() {
                    return Err(KeyParseError::ShiftOnCharacter(written.to_string()));
                }
                c.to_uppercase().next().unwrap_or(c)
            } else if mods.contains(KeyModifiers::CONTROL) {
                c.to_ascii_lowercase()
            } else {
                c
            };
            KeyCode::Char(c)
        }
        _ => {
            let name = rest.to_ascii_lowercase();
            let code = match name.as_str() {
                "enter" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "tab" if shift => KeyCode::BackTab,
                "tab" => KeyCode::Tab,
                "backtab" => KeyCode::BackTab,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "pgup" | "pageup" => KeyCode::PageUp,
                "pgdn" | "pagedown" => KeyCode::PageDown,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "space" => KeyCode::Char(' '),
                "backspace" => KeyCode::Backspace,
                "del" | "delete" => KeyCode::Delete,
                f if f.starts_with('f') => match f[1..].parse::<u8>() {
                    Ok(n @ 1..=12) => KeyCode::F(n),
                    _ => return Err(bad()),
                },
                _ => return Err(bad()),
            };
            if shift && code != KeyCode::BackTab {
                return Err(KeyParseError::ShiftOnKey(written.to_string()));
            }
            code
        }
    };
    Ok(Key { code, mods })
}

/// A binding of the active keymap ([`Keymap`]): a row of [`KEYMAP`], its keys possibly
/// replaced from the config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveBinding {
    /// Where it applies.
    pub scope: Scope,
    /// The keys (any of them); empty when the config file unbound the command.
    pub keys: Vec<Key>,
    /// What they do.
    pub command: Command,
    /// The help text.
    pub help: &'static str,
    /// A short label for the hint line.
    pub hint: Option<&'static str>,
}

impl ActiveBinding {
    /// The keys joined for display, e.g. `s / Enter`; `(none)` when unbound.
    pub fn keys_label(&self) -> String {
        if self.keys.is_empty() {
            return "(none)".to_string();
        }
        self.keys
            .iter()
            .map(Key::label)
            .collect::<Vec<_>>()
            .join(" / ")
    }
}

/// One entry of the config file's `[keys]` table: `command = ["key", ...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyOverride {
    /// The command name as written ([`Command::name`]).
    pub command: String,
    /// The keys as written ([`parse_key`]).
    pub keys: Vec<String>,
    /// Where it was written, `file:line`, for messages.
    pub origin: String,
}

/// The keys in force: [`KEYMAP`] with the config file's overrides applied. Key handling,
/// the help overlay, the hint line and the command palette all read it, so they always
/// agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    bindings: Vec<ActiveBinding>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap::from_table(KEYMAP)
    }
}

impl Keymap {
    /// The keymap of a table of bindings, without overrides.
    pub fn from_table(table: &[Binding]) -> Self {
        Keymap {
            bindings: table
                .iter()
                .map(|b| ActiveBinding {
                    scope: b.scope,
                    keys: b.keys.to_vec(),
                    command: b.command,
                    help: b.help,
                    hint: b.hint,
                })
                .collect(),
        }
    }

    /// Every binding, in table order.
    pub fn bindings(&self) -> &[ActiveBinding] {
        &self.bindings
    }

    /// The bindings of `scope`, in table order.
    pub fn in_scope(&self, scope: Scope) -> impl Iterator<Item = &ActiveBinding> {
        self.bindings.iter().filter(move |b| b.scope == scope)
    }

    /// The command bound to `ev` in `ctx`: the first matching row of the most specific
    /// scope.
    pub fn lookup(&self, ctx: Context, ev: &KeyEvent) -> Option<Command> {
        ctx.scopes().into_iter().find_map(|scope| {
            self.in_scope(scope)
                .find(|bd| bd.keys.iter().any(|k| k.matches(ev)))
                .map(|bd| bd.command)
        })
    }

    /// The keys bound to `cmd` in `scope` (empty when none).
    pub fn keys_of(&self, scope: Scope, cmd: Command) -> &[Key] {
        self.in_scope(scope)
            .find(|b| b.command == cmd)
            .map(|b| b.keys.as_slice())
            .unwrap_or(&[])
    }

    /// The label of the first key bound to `cmd` in `scope` (`""` when none).
    pub fn key_for(&self, scope: Scope, cmd: Command) -> String {
        self.keys_of(scope, cmd)
            .first()
            .map(Key::label)
            .unwrap_or_default()
    }

    /// The hint-line entries `(key, label)` of the bindings of `scopes`, scope by scope in
    /// the order given, each in table order; unbound commands are left out.
    pub fn hints(&self, scopes: &[Scope]) -> Vec<(String, &'static str)> {
        scopes
            .iter()
            .flat_map(|s| self.in_scope(*s))
            .filter_map(|bd| Some((bd.keys.first()?.label(), bd.hint?)))
            .collect()
    }

    /// Pairs of bindings that share a key in overlapping scopes ([`Scope::overlaps`]), as
    /// messages; empty for a sound keymap.
    pub fn collisions(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, a) in self.bindings.iter().enumerate() {
            for b in &self.bindings[i + 1..] {
                if a.command == b.command || !a.scope.overlaps(b.scope) {
                    continue;
                }
                for k in a.keys.iter().filter(|k| b.keys.contains(k)) {
                    out.push(format!(
                        "{} is both {} ({}) and {} ({})",
                        k.label(),
                        a.command.name(),
                        a.scope.title(),
                        b.command.name(),
                        b.scope.title()
                    ));
                }
            }
        }
        out
    }

    /// The first clash of the keys of `cmd` with another command's.
    fn clash_of(&self, cmd: Command) -> Option<String> {
        for mine in self.bindings.iter().filter(|b| b.command == cmd) {
            for other in &self.bindings {
                if other.command == cmd || !mine.scope.overlaps(other.scope) {
                    continue;
                }
                if let Some(k) = mine.keys.iter().find(|k| other.keys.contains(k)) {
                    return Some(format!(
                        "{} is already {} ({})",
                        k.label(),
                        other.command.name(),
                        other.scope.title()
                    ));
                }
            }
        }
        None
    }

    /// Applies the config file's `[keys]` entries: each replaces the keys of its command in
    /// every scope where the command is bound (an empty list unbinds it). Entries with an
    /// unknown command, a key that does not parse, or a key that clashes with another
    /// binding in an overlapping scope are ignored; `ctrl-c` stays bound to `force_quit`.
    /// Returns the problems as `file:line: reason`: those of single entries in the order of
    /// `overrides`, then the clashes.
    pub fn apply_overrides(&mut self, overrides: &[KeyOverride]) -> Vec<String> {
        let mut problems = Vec::new();
        let mut parsed: Vec<(Command, Vec<Key>, &KeyOverride)> = Vec::new();
        for o in overrides {
            let Some(cmd) = Command::from_name(&o.command) else {
                problems.push(format!(
                    "{}: unknown command \"{}\" (names are like send, quit, toggle_theme); ignored",
                    o.origin, o.command
                ));
                continue;
            };
            if !self.bindings.iter().any(|b| b.command == cmd) {
                problems.push(format!(
                    "{}: {} has no key binding to replace; ignored",
                    o.origin, o.command
                ));
                continue;
            }
            let mut keys = Vec::new();
            let mut bad = None;
            for k in &o.keys {
                match parse_key(k) {
                    Ok(key) if !keys.contains(&key) => keys.push(key),
                    Ok(_) => {}
                    Err(e) => {
                        bad = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = bad {
                problems.push(format!("{}: {}: {e}; ignored", o.origin, o.command));
                continue;
            }
            if cmd == Command::ForceQuit && !keys.contains(&Key::ctrl('c')) {
                keys.insert(0, Key::ctrl('c'));
                problems.push(format!(
                    "{}: ctrl-c cannot be unbound: it always quits",
                    o.origin
                ));
            }
            parsed.push((cmd, keys, o));
        }
        let original = self.bindings.clone();
        let mut accepted = vec![true; parsed.len()];
        loop {
            let mut map = Keymap {
                bindings: original.clone(),
            };
            for ((cmd, keys, _), _) in parsed.iter().zip(&accepted).filter(|(_, ok)| **ok) {
                for b in map.bindings.iter_mut().filter(|b| b.command == *cmd) {
                    b.keys = keys.clone();
                }
            }
            let clash = parsed
                .iter()
                .enumerate()
                .filter(|(i, _)| accepted[*i])
                .find_map(|(i, (cmd, _, o))| map.clash_of(*cmd).map(|c| (i, c, *o)));
            match clash {
                Some((i, why, o)) => {
                    accepted[i] = false;
                    problems.push(format!("{}: {}: {why}; ignored", o.origin, o.command));
                }
                None => {
                    *self = map;
                    return problems;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn insert_mode_never_sees_global_letters() {
        for c in ['q', '?', 's', 'e', 'o', 'r', 'p', 'j', 'k'] {
            assert_eq!(
                Keymap::default()
                    .lookup(Context::Insert, &key(KeyCode::Char(c), KeyModifiers::NONE)),
                None,
                "{c}"
            );
        }
        assert_eq!(
            Keymap::default().lookup(
                Context::Insert,
                &key(KeyCode::Char('c'), KeyModifiers::CONTROL)
            ),
            Some(Command::ForceQuit)
        );
    }

    #[test]
    fn pane_scope_wins_over_normal() {
        let enter = key(KeyCode::Enter, KeyModifiers::NONE);
        let params = Context::Normal {
            params_focused: true,
            response_focused: false,
        };
        let ops = Context::Normal {
            params_focused: false,
            response_focused: false,
        };
        assert_eq!(
            Keymap::default().lookup(params, &enter),
            Some(Command::EditParams)
        );
        assert_eq!(Keymap::default().lookup(ops, &enter), Some(Command::Send));
        // Shift does not matter for characters, BackTab arrives with SHIFT.
        assert_eq!(
            Keymap::default().lookup(ops, &key(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            Some(Command::ToggleHelp)
        );
        assert_eq!(
            Keymap::default().lookup(ops, &key(KeyCode::BackTab, KeyModifiers::SHIFT)),
            Some(Command::PrevFocus)
        );
    }

    #[test]
    fn no_key_is_bound_twice_in_one_scope() {
        for scope in Scope::ORDER {
            let mut seen = Vec::new();
            for bd in KEYMAP.iter().filter(|bd| bd.scope == scope) {
                for k in bd.keys {
                    assert!(!seen.contains(k), "{scope:?}: {} bound twice", k.label());
                    seen.push(*k);
                }
            }
        }
    }
}
