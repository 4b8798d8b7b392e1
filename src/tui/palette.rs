//! The command palette (`Ctrl-p`): every action of the active keymap with its keys and where
//! it applies, filtered by what is typed, and run with Enter as if its key had been pressed
//! where it applies (the screen is switched, the pane focused, the dialog opened first).
//!
//! The filter box is a text input: characters always type, so a letter never runs a
//! command; the palette's own keys (`Scope::Palette`: ↑/↓, Enter, Esc) come from the keymap.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph};

use super::app::{Action, App, Focus, Level, Mode, Screen};
use super::keymap::{ActiveBinding, Command, Context, Scope};

/// State of the command palette.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaletteView {
    /// Whether the palette is shown.
    pub open: bool,
    /// The filter text.
    pub query: String,
    /// Index of the highlighted entry among the filtered ones.
    pub selected: usize,
}

/// Whether `b` matches every word of `query` (case-insensitive, in its help text, keys,
/// scope or command name).
fn matches(b: &ActiveBinding, query: &str) -> bool {
    let hay = format!(
        "{} {} {} {}",
        b.help,
        b.keys_label(),
        b.scope.title(),
        b.command.name().replace('_', " ")
    )
    .to_lowercase();
    query
        .to_lowercase()
        .split_whitespace()
        .all(|w| hay.contains(w))
}

impl App {
    /// Whether the command palette is shown.
    pub fn palette_visible(&self) -> bool {
        self.palette.open
    }

    /// The palette's filter text.
    pub fn palette_query(&self) -> &str {
        &self.palette.query
    }

    /// Opens the palette with an empty filter.
    pub(crate) fn open_palette(&mut self) {
        self.palette = PaletteView {
            open: true,
            ..PaletteView::default()
        };
    }

    /// The actions shown for the current filter: every binding of the keymap except the
    /// palette's own, in help-overlay order.
    pub fn palette_entries(&self) -> Vec<&ActiveBinding> {
        Scope::ORDER
            .iter()
            .filter(|s| **s != Scope::Palette)
            .flat_map(|s| self.keymap.in_scope(*s))
            .filter(|b| matches(b, &self.palette.query))
            .collect()
    }

    /// Keys while the palette is open (called from [`App::text_input_key`]): `None` when it
    /// is closed. Characters type into the filter, Backspace deletes, Ctrl-u clears; the
    /// palette scope's keys move, run and close.
    pub(crate) fn palette_key(&mut self, key: &KeyEvent) -> Option<Action> {
        if !self.palette.open {
            return None;
        }
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if let (KeyCode::Char(c), true) = (key.code, plain) {
            self.palette.query.push(c);
            self.palette.selected = 0;
            return Some(Action::None);
        }
        let n = self.palette_entries().len();
        match self.keymap.lookup(Context::Palette, key) {
            Some(Command::ForceQuit) => return None,
            Some(Command::Up) => self.palette.selected = self.palette.selected.saturating_sub(1),
            Some(Command::Down) => {
                self.palette.selected = (self.palette.selected + 1).min(n.saturating_sub(1))
            }
            Some(Command::Dismiss) => self.palette = PaletteView::default(),
            Some(Command::Choose) => return Some(self.run_palette_entry()),
            _ => match key.code {
                KeyCode::Backspace => {
                    self.palette.query.pop();
                    self.palette.selected = 0;
                }
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    self.palette.query.clear();
                    self.palette.selected = 0;
                }
                _ => {}
            },
        }
        Some(Action::None)
    }

    /// Closes the palette and runs the highlighted action where it applies.
    fn run_palette_entry(&mut self) -> Action {
        let chosen = self
            .palette_entries()
            .get(self.palette.selected)
            .map(|b| (b.scope, b.command));
        self.palette = PaletteView::default();
        let Some((scope, cmd)) = chosen else {
            self.set_message(Level::Info, "No action matches the filter");
            return Action::None;
        };
        self.run_in_scope(scope, cmd)
    }

    /// Runs `cmd` as if its key had been pressed in a context where `scope` applies:
    /// switches the screen, focuses the pane or opens the dialog first.
    pub fn run_in_scope(&mut self, scope: Scope, cmd: Command) -> Action {
        let close_dialogs = |app: &mut App| {
            app.help = false;
            app.picker = None;
            app.sca_visible = false;
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
                self.focus = Focus::Params;
            } else if scope == Scope::ResponsePane {
                self.focus = Focus::Response;
            }
            if scope == Scope::Insert && self.mode != Mode::Insert {
                let ctx = self.context();
                self.command(ctx, Command::EditParams);
                if self.mode != Mode::Insert {
                    return Action::None;
                }
            }
            self.context()
        } else if scope == Scope::ProfilesScreen || scope == Scope::HistoryScreen {
            close_dialogs(self);
            let (screen, show) = if scope == Scope::ProfilesScreen {
                (Screen::Profiles, Command::ShowProfiles)
            } else {
                (Screen::History, Command::ShowHistory)
            };
            if self.screen != screen {
                let ctx = self.context();
                first = self.command(ctx, show);
            }
            self.context()
        } else if scope == Scope::Help {
            self.help = true;
            Context::Help
        } else if scope == Scope::ScaPrompt {
            if self.sca.is_none() {
                self.set_message(
                    Level::Info,
                    "No SCA prompt: the last response did not ask for SCA",
                );
                return Action::None;
            }
            close_dialogs(self);
            self.sca_visible = true;
            Context::ScaPrompt
        } else if scope == Scope::Picker {
            self.help = false;
            if self.picker.is_none() {
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

    /// Draws the palette over `area` when it is open.
    pub(crate) fn draw_palette(&self, frame: &mut Frame, area: Rect) {
        if !self.palette.open {
            return;
        }
        let t = &self.theme;
        let entries = self.palette_entries();
        let w = area.width.saturating_sub(4).min(110);
        let h = area
            .height
            .saturating_sub(4)
            .min(entries.len().max(1) as u16 + 5);
        let r = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + 2.min(area.height.saturating_sub(h)),
            w,
            h,
        );
        let k = |cmd| self.keymap.key_for(Scope::Palette, cmd);
        let block = Block::bordered()
            .border_type(BorderType::Double)
            .border_style(t.modal_border)
            .title(Span::styled(" Commands ", t.modal_border))
            .title_bottom(
                Line::from(Span::styled(
                    format!(
                        " {}/{} choose · {} runs · {} closes · {} of {} ",
                        k(Command::Up),
                        k(Command::Down),
                        k(Command::Choose),
                        k(Command::Dismiss),
                        entries.len(),
                        self.palette_total()
                    ),
                    t.dim,
                ))
                .right_aligned(),
            )
            .style(t.base)
            .padding(Padding::horizontal(1));
        let inner = block.inner(r);
        frame.render_widget(Clear, r);
        frame.render_widget(block, r);
        let width = inner.width as usize;
        let mut lines = vec![
            Line::from(vec![
                Span::styled("> ", t.key),
                Span::styled(self.palette.query.clone(), t.input),
            ]),
            Line::default(),
        ];
        let x = inner.x + 2 + self.palette.query.chars().count() as u16;
        frame.set_cursor_position(Position::new(
            x.min(inner.right().saturating_sub(1)),
            inner.y,
        ));
        let rows = (inner.height as usize).saturating_sub(2);
        if entries.is_empty() {
            lines.push(Line::from(Span::styled(
                "No action matches: Backspace to widen the filter",
                t.dim,
            )));
        }
        let key_w = 18.min(width / 4);
        let scope_w = 26.min(width / 4);
        let help_w = width.saturating_sub(key_w + scope_w + 2).max(1);
        let skip = (self.palette.selected + 1).saturating_sub(rows);
        for (i, b) in entries.iter().enumerate().skip(skip).take(rows) {
            let text = format!(
                "{:<help_w$} {:<key_w$} {}",
                cut(b.help, help_w),
                cut(&b.keys_label(), key_w),
                cut(b.scope.title(), scope_w),
            );
            if i == self.palette.selected {
                lines.push(Line::from(Span::styled(pad(&text, width), t.selected)));
            } else {
                lines.push(Line::from(vec![
                    Span::styled(format!("{:<help_w$} ", cut(b.help, help_w)), t.base),
                    Span::styled(format!("{:<key_w$} ", cut(&b.keys_label(), key_w)), t.key),
                    Span::styled(cut(b.scope.title(), scope_w), t.dim),
                ]));
            }
        }
        frame.render_widget(Paragraph::new(lines), inner);
    }

    fn palette_total(&self) -> usize {
        self.keymap
            .bindings()
            .iter()
            .filter(|b| b.scope != Scope::Palette)
            .count()
    }
}

/// `s` cut to `w` characters with `…` when longer.
fn cut(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(w.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// `s` padded with spaces to `w` characters (or cut).
fn pad(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n >= w {
        s.chars().take(w).collect()
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

/// Scroll state of the help overlay: the first line shown, and the sizes of the last draw.
#[derive(Debug, Default)]
pub struct HelpView {
    /// First line shown (clamped when drawing).
    pub scroll: usize,
    rows: Cell<usize>,
    height: Cell<usize>,
}

impl App {
    /// Commands while the help is shown: ↑/↓/PgUp/PgDn scroll it; `None` for the others.
    pub(crate) fn help_command(&mut self, cmd: Command) -> Option<Action> {
        let height = self.help_view.height.get().max(1);
        let max = self.help_view.rows.get().saturating_sub(height);
        let cur = self.help_view.scroll.min(max);
        self.help_view.scroll = match cmd {
            Command::Up => cur.saturating_sub(1),
            Command::Down => (cur + 1).min(max),
            Command::PageUp => cur.saturating_sub(height.saturating_sub(1).max(1)),
            Command::PageDown => (cur + height.saturating_sub(1).max(1)).min(max),
            Command::ToggleHelp | Command::Dismiss => {
                self.help = false;
                self.help_view.scroll = 0;
                return Some(Action::None);
            }
            _ => return None,
        };
        Some(Action::None)
    }

    /// First help line to show for `rows` lines in `height` rows; records both for the keys.
    pub(crate) fn help_top(&self, rows: usize, height: u16) -> u16 {
        self.help_view.rows.set(rows);
        self.help_view.height.set(height as usize);
        let max = rows.saturating_sub(height as usize);
        self.help_view.scroll.min(max).min(u16::MAX as usize) as u16
    }

    /// When the help does not fit, says which lines are shown and how to scroll, on the
    /// bottom border of `r`.
    pub(crate) fn draw_help_more(&self, frame: &mut Frame, r: Rect) {
        let rows = self.help_view.rows.get();
        let height = self.help_view.height.get();
        if rows <= height || r.height < 3 {
            return;
        }
        let top = self.help_view.scroll.min(rows - height);
        let text = format!(
            " lines {}–{} of {} · {}/{} {}/{} scroll ",
            top + 1,
            top + height,
            rows,
            self.keymap.key_for(Scope::Help, Command::Up),
            self.keymap.key_for(Scope::Help, Command::Down),
            self.keymap.key_for(Scope::Help, Command::PageUp),
            self.keymap.key_for(Scope::Help, Command::PageDown),
        );
        let w = (text.chars().count() as u16).min(r.width.saturating_sub(4));
        frame.render_widget(
            Paragraph::new(Span::styled(text, self.theme.dim)),
            Rect::new(r.x + 2, r.bottom() - 1, w, 1),
        );
    }
}
