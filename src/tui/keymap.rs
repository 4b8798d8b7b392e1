//! The keymap: one table, [`KEYMAP`], drives both key handling ([`lookup`]) and the help
//! overlay, so the help always tells the truth.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// Switch between the dark and the high-contrast theme.
    ToggleTheme,
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
    /// Browsing the profiles screen.
    ProfilesScreen,
    /// Browsing the history screen.
    HistoryScreen,
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
            Scope::ProfilesScreen => "Profiles screen",
            Scope::HistoryScreen => "History screen",
        }
    }

    /// Help-overlay order of the scopes.
    pub const ORDER: [Scope; 11] = [
        Scope::Always,
        Scope::NotInsert,
        Scope::Normal,
        Scope::ParamsPane,
        Scope::ResponsePane,
        Scope::ProfilesScreen,
        Scope::HistoryScreen,
        Scope::ScaPrompt,
        Scope::Picker,
        Scope::Help,
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
/// (see [`lookup`]).
pub const KEYMAP: &[Binding] = &[
    b(
        Scope::Always,
        &[Key::ctrl('c')],
        Command::ForceQuit,
        "quit",
        None,
    ),
    b(
        Scope::NotInsert,
        &[Key::ch('q')],
        Command::Quit,
        "quit",
        Some("quit"),
    ),
    b(
        Scope::NotInsert,
        &[Key::ch('1'), Key::plain(K::F(1))],
        Command::ShowConsole,
        "console screen: operations, request, response",
        None,
    ),
    b(
        Scope::NotInsert,
        &[Key::ch('2'), Key::plain(K::F(2))],
        Command::ShowProfiles,
        "profiles screen: profiles, certificates, session",
        None,
    ),
    b(
        Scope::NotInsert,
        &[Key::ch('3'), Key::plain(K::F(3))],
        Command::ShowHistory,
        "history screen: every exchange sent",
        None,
    ),
    b(
        Scope::NotInsert,
        &[Key::ch('?')],
        Command::ToggleHelp,
        "show or hide this help",
        Some("help"),
    ),
    b(
        Scope::Normal,
        &[Key::ch('s'), Key::plain(K::Enter)],
        Command::Send,
        "sign and send the selected operation",
        Some("send"),
    ),
    b(
        Scope::Normal,
        &[Key::ch('e')],
        Command::EditParams,
        "edit the parameters of the selected operation",
        Some("edit"),
    ),
    b(
        Scope::Normal,
        &[Key::ch('o')],
        Command::OpenSca,
        "open the last scaRedirect in the browser",
        Some("open SCA"),
    ),
    b(
        Scope::Normal,
        &[Key::ch('r')],
        Command::ResetSession,
        "reset the session: forget the PSU-ID, new TPP-Session-ID",
        Some("reset"),
    ),
    b(
        Scope::Normal,
        &[Key::ch('p')],
        Command::Profiles,
        "choose another profile",
        Some("profiles"),
    ),
    b(
        Scope::Normal,
        &[Key::plain(K::Up), Key::ch('k')],
        Command::Up,
        "move up (operations, parameters) or scroll up",
        None,
    ),
    b(
        Scope::Normal,
        &[Key::plain(K::Down), Key::ch('j')],
        Command::Down,
        "move down (operations, parameters) or scroll down",
        None,
    ),
    b(
        Scope::Normal,
        &[Key::plain(K::Tab)],
        Command::NextFocus,
        "focus the next pane",
        Some("pane"),
    ),
    b(
        Scope::Normal,
        &[Key::plain(K::BackTab)],
        Command::PrevFocus,
        "focus the previous pane",
        None,
    ),
    b(
        Scope::Normal,
        &[Key::plain(K::PageUp)],
        Command::PageUp,
        "scroll the focused pane (else the response) up a page",
        None,
    ),
    b(
        Scope::Normal,
        &[Key::plain(K::PageDown)],
        Command::PageDown,
        "scroll the focused pane (else the response) down a page",
        None,
    ),
    b(
        Scope::Normal,
        &[Key::plain(K::Home), Key::ch('g')],
        Command::Top,
        "scroll to the top",
        None,
    ),
    b(
        Scope::Normal,
        &[Key::plain(K::End), Key::ch('G')],
        Command::Bottom,
        "scroll to the bottom",
        None,
    ),
    b(
        Scope::Normal,
        &[Key::ch('t')],
        Command::ToggleTheme,
        "switch between the dark and the high-contrast theme",
        None,
    ),
    b(
        Scope::ParamsPane,
        &[Key::plain(K::Enter)],
        Command::EditParams,
        "edit the highlighted parameter",
        None,
    ),
    b(
        Scope::ResponsePane,
        &[Key::plain(K::Left), Key::ch('h')],
        Command::ScrollLeft,
        "scroll left",
        None,
    ),
    b(
        Scope::ResponsePane,
        &[Key::plain(K::Right), Key::ch('l')],
        Command::ScrollRight,
        "scroll right",
        None,
    ),
    b(
        Scope::ScaPrompt,
        &[Key::ch('o'), Key::plain(K::Enter)],
        Command::OpenSca,
        "open the URL in the browser",
        None,
    ),
    b(
        Scope::ScaPrompt,
        &[Key::plain(K::Esc)],
        Command::Dismiss,
        "close the prompt (o opens the URL later)",
        None,
    ),
    b(
        Scope::Picker,
        &[Key::plain(K::Up), Key::ch('k')],
        Command::Up,
        "previous profile",
        None,
    ),
    b(
        Scope::Picker,
        &[Key::plain(K::Down), Key::ch('j')],
        Command::Down,
        "next profile",
        None,
    ),
    b(
        Scope::Picker,
        &[Key::plain(K::Enter)],
        Command::Choose,
        "switch to the highlighted profile",
        None,
    ),
    b(
        Scope::Picker,
        &[Key::plain(K::Esc)],
        Command::Dismiss,
        "close without switching",
        None,
    ),
    b(
        Scope::Help,
        &[Key::plain(K::Esc)],
        Command::Dismiss,
        "close the help",
        None,
    ),
    b(
        Scope::Insert,
        &[Key::plain(K::Esc), Key::plain(K::Enter)],
        Command::LeaveInsert,
        "stop typing (the value is kept)",
        Some("done"),
    ),
    b(
        Scope::Insert,
        &[Key::plain(K::Tab), Key::plain(K::Down)],
        Command::NextField,
        "next parameter",
        Some("next"),
    ),
    b(
        Scope::Insert,
        &[Key::plain(K::BackTab), Key::plain(K::Up)],
        Command::PrevField,
        "previous parameter",
        None,
    ),
    b(
        Scope::Insert,
        &[Key::plain(K::Backspace)],
        Command::Backspace,
        "delete before the cursor",
        None,
    ),
    b(
        Scope::Insert,
        &[Key::plain(K::Delete)],
        Command::Delete,
        "delete under the cursor",
        None,
    ),
    b(
        Scope::Insert,
        &[Key::plain(K::Left)],
        Command::CursorLeft,
        "cursor left",
        None,
    ),
    b(
        Scope::Insert,
        &[Key::plain(K::Right)],
        Command::CursorRight,
        "cursor right",
        None,
    ),
    b(
        Scope::Insert,
        &[Key::plain(K::Home)],
        Command::CursorHome,
        "cursor to the start",
        None,
    ),
    b(
        Scope::Insert,
        &[Key::plain(K::End)],
        Command::CursorEnd,
        "cursor to the end",
        None,
    ),
    b(
        Scope::Insert,
        &[Key::ctrl('u')],
        Command::ClearField,
        "clear the value",
        Some("clear"),
    ),
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

/// The command bound to `ev` in `ctx`, if any.
pub fn lookup(ctx: Context, ev: &KeyEvent) -> Option<Command> {
    ctx.scopes().into_iter().find_map(|scope| {
        KEYMAP
            .iter()
            .filter(|bd| bd.scope == scope)
            .find(|bd| bd.keys.iter().any(|k| k.matches(ev)))
            .map(|bd| bd.command)
    })
}

/// The keys of a binding joined for display, e.g. `s / Enter`.
pub fn keys_label(binding: &Binding) -> String {
    binding
        .keys
        .iter()
        .map(Key::label)
        .collect::<Vec<_>>()
        .join(" / ")
}

/// The hint-line entries `(key, label)` of the bindings of `scopes`, scope by scope in the
/// order given, each in table order.
pub fn hints(scopes: &[Scope]) -> Vec<(String, &'static str)> {
    scopes
        .iter()
        .flat_map(|s| KEYMAP.iter().filter(move |bd| bd.scope == *s))
        .filter_map(|bd| bd.hint.map(|h| (bd.keys[0].label(), h)))
        .collect()
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
                lookup(Context::Insert, &key(KeyCode::Char(c), KeyModifiers::NONE)),
                None,
                "{c}"
            );
        }
        assert_eq!(
            lookup(
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
        assert_eq!(lookup(params, &enter), Some(Command::EditParams));
        assert_eq!(lookup(ops, &enter), Some(Command::Send));
        // Shift does not matter for characters, BackTab arrives with SHIFT.
        assert_eq!(
            lookup(ops, &key(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            Some(Command::ToggleHelp)
        );
        assert_eq!(
            lookup(ops, &key(KeyCode::BackTab, KeyModifiers::SHIFT)),
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
