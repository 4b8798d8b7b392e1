//! The command palette (`Ctrl-p`): every action of the active keymap with its keys and where
//! it applies, filtered by what is typed, and run with Enter as if its key had been pressed
//! where it applies (the screen is switched, the pane focused, the dialog opened first).
//!
//! The filter box is a text input: characters always type, so a letter never runs a
//! command; the palette's own keys (`Scope::Palette`: ↑/↓, Enter, Esc) come from the keymap.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph};

use super::app::{Action, App, Focus, Level, Mode, Screen};
use super::keymap::{ActiveBinding, Command, Context, Scope};
pub use super::overlay::{HelpView, PaletteView};
use super::overlay::{Layer, Overlay};

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
        self.overlays.is_open(Layer::Palette)
    }

    /// The palette's filter text.
    pub fn palette_query(&self) -> &str {
        self.overlays.palette().map_or("", |p| p.query.as_str())
    }

    /// Opens the palette with an empty filter.
    pub(crate) fn open_palette(&mut self) {
        self.overlays.open(Overlay::Palette(PaletteView::default()));
    }

    /// The actions shown for the current filter: every binding of the keymap except the
    /// palette's own, in help-overlay order.
    pub fn palette_entries(&self) -> Vec<&ActiveBinding> {
        Scope::ORDER
            .iter()
            .filter(|s| **s != Scope::Palette)
            .flat_map(|s| self.keymap.in_scope(*s))
            .filter(|b| matches(b, self.palette_query()))
            .collect()
    }

    /// Keys while the palette is open (called from [`App::text_input_key`]): `None` when it
    /// is closed. Characters type into the filter, Backspace deletes, Ctrl-u clears; the
    /// palette scope's keys move, run and close.
    pub(crate) fn palette_key(&mut self, key: &KeyEvent) -> Option<Action> {
        let n = self.palette_entries().len();
        let cmd = self.keymap.lookup(Context::Palette, key);
        let palette = self.overlays.palette_mut()?;
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if let (KeyCode::Char(c), true) = (key.code, plain) {
            palette.query.push(c);
            palette.selected = 0;
            return Some(Action::None);
        }
        match cmd {
            Some(Command::ForceQuit) => return None,
            Some(Command::Up) => palette.selected = palette.selected.saturating_sub(1),
            Some(Command::Down) => {
                palette.selected = (palette.selected + 1).min(n.saturating_sub(1))
            }
            Some(Command::Dismiss) => {
                self.overlays.close(Layer::Palette);
            }
            Some(Command::Choose) => return Some(self.run_palette_entry()),
            _ => match key.code {
                KeyCode::Backspace => {
                    palette.query.pop();
                    palette.selected = 0;
                }
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    palette.query.clear();
                    palette.selected = 0;
                }
                _ => {}
            },
        }
        Some(Action::None)
    }

    /// Closes the palette and runs the highlighted action where it applies.
    fn run_palette_entry(&mut self) -> Action {
        let selected = self.overlays.palette().map_or(0, |p| p.selected);
        let chosen = self
            .palette_entries()
            .get(selected)
            .map(|b| (b.scope, b.command));
        self.overlays.close(Layer::Palette);
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

    /// Draws the palette over `area` when it is open.
    pub(crate) fn draw_palette(&self, frame: &mut Frame, area: Rect, palette: &PaletteView) {
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
                Span::styled(palette.query.clone(), t.input),
            ]),
            Line::default(),
        ];
        let x = inner.x + 2 + palette.query.chars().count() as u16;
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
        let skip = (palette.selected + 1).saturating_sub(rows);
        for (i, b) in entries.iter().enumerate().skip(skip).take(rows) {
            let text = format!(
                "{:<help_w$} {:<key_w$} {}",
                cut(b.help, help_w),
                cut(&b.keys_label(), key_w),
                cut(b.scope.title(), scope_w),
            );
            if i == palette.selected {
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

impl App {
    /// Commands while the help is shown: ↑/↓/PgUp/PgDn scroll it; `None` for the others.
    pub(crate) fn help_command(&mut self, cmd: Command) -> Option<Action> {
        if matches!(cmd, Command::ToggleHelp | Command::Dismiss) {
            self.overlays.close(Layer::Help);
            return Some(Action::None);
        }
        self.overlays
            .help_mut()
            .is_some_and(|v| v.scroll_by(cmd))
            .then_some(Action::None)
    }

    /// When the help does not fit, says which lines are shown and how to scroll, on the
    /// bottom border of `r`.
    pub(crate) fn draw_help_more(&self, frame: &mut Frame, r: Rect, view: &HelpView) {
        let rows = view.rows.get();
        let height = view.height.get();
        if rows <= height || r.height < 3 {
            return;
        }
        let top = view.scroll.min(rows - height);
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
