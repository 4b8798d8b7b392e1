//! The command palette (`Ctrl-p`): every action of the active keymap with its keys and where
//! it applies, filtered by what is typed, and run with Enter as if its key had been pressed
//! where it applies (the screen is switched, the pane focused, the dialog opened first).
//!
//! The filter box is a text input: characters always type, so a letter never runs a
//! command; the palette's own keys (`Scope::Palette`: ↑/↓, Enter, Esc) come from the keymap.
//!
//! The help overlay (`?`) is here too: both are [`Component`]s over their overlay state
//! ([`PaletteView`], [`HelpView`]); running a chosen action is the app's
//! ([`Effect::RunInScope`]).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::component::{Component, Ctx, Effect};
use super::keymap::{ActiveBinding, Command, Context, Keymap, Scope};
use super::overlay::Layer;
pub use super::overlay::{HelpView, PaletteView};
use super::status_line::Level;
use super::text::{centered, ellipsize as cut, pad, wrap_words};
use super::theme::Theme;

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

/// A dialog's frame: double border, `title`, and `bottom` right-aligned on the bottom border.
fn dialog_block<'a>(t: &Theme, title: &'a str, bottom: String) -> Block<'a> {
    t.modal_block(title)
        .title_bottom(Line::from(Span::styled(bottom, t.dim)).right_aligned())
}

impl PaletteView {
    /// The actions shown for the current filter: every binding of `keymap` except the
    /// palette's own, in help-overlay order.
    pub(crate) fn entries<'k>(&self, keymap: &'k Keymap) -> Vec<&'k ActiveBinding> {
        Scope::ORDER
            .iter()
            .filter(|s| **s != Scope::Palette)
            .flat_map(|s| keymap.in_scope(*s))
            .filter(|b| matches(b, &self.query))
            .collect()
    }
}

/// How many actions the palette lists without a filter.
fn palette_total(keymap: &Keymap) -> usize {
    keymap
        .bindings()
        .iter()
        .filter(|b| b.scope != Scope::Palette)
        .count()
}

impl Component for PaletteView {
    /// Every key while the palette is open: characters type into the filter, Backspace
    /// deletes, Ctrl-u clears; the palette scope's keys move, run and close. `None` only for
    /// the force-quit key.
    fn input(&mut self, key: &KeyEvent, ctx: &mut Ctx) -> Option<Effect> {
        let n = self.entries(ctx.keymap).len();
        let cmd = ctx.keymap.lookup(Context::Palette, key);
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if let (KeyCode::Char(c), true) = (key.code, plain) {
            self.query.push(c);
            self.selected = 0;
            return Some(Effect::None);
        }
        match cmd {
            Some(Command::ForceQuit) => return None,
            Some(Command::Up) => self.selected = self.selected.saturating_sub(1),
            Some(Command::Down) => self.selected = (self.selected + 1).min(n.saturating_sub(1)),
            Some(Command::Dismiss) => return Some(Effect::Close(Layer::Palette)),
            Some(Command::Choose) => {
                let chosen = self
                    .entries(ctx.keymap)
                    .get(self.selected)
                    .map(|b| (b.scope, b.command));
                return Some(match chosen {
                    Some((scope, cmd)) => Effect::RunInScope(scope, cmd),
                    None => {
                        ctx.say(Level::Info, "No action matches the filter");
                        Effect::Close(Layer::Palette)
                    }
                });
            }
            _ => match key.code {
                KeyCode::Backspace => {
                    self.query.pop();
                    self.selected = 0;
                }
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    self.query.clear();
                    self.selected = 0;
                }
                _ => {}
            },
        }
        Some(Effect::None)
    }

    /// The palette takes its keys as text ([`Component::input`]), never as commands.
    fn handle(&mut self, _cmd: Command, _ctx: &mut Ctx) -> Option<Effect> {
        None
    }

    /// Draws the palette over `area`.
    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let t = ctx.theme;
        let palette = self;
        let entries = self.entries(ctx.keymap);
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
        let k = |cmd| ctx.keymap.key_for(Scope::Palette, cmd);
        let block = dialog_block(
            t,
            " Commands ",
            format!(
                " {}/{} choose · {} runs · {} closes · {} of {} ",
                k(Command::Up),
                k(Command::Down),
                k(Command::Choose),
                k(Command::Dismiss),
                entries.len(),
                palette_total(ctx.keymap)
            ),
        );
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
}

impl Component for HelpView {
    /// ↑/↓/PgUp/PgDn scroll it, `?` and Esc close it; `None` for the other commands.
    fn handle(&mut self, cmd: Command, _ctx: &mut Ctx) -> Option<Effect> {
        if matches!(cmd, Command::ToggleHelp | Command::Dismiss) {
            return Some(Effect::Close(Layer::Help));
        }
        self.scroll_by(cmd).then_some(Effect::None)
    }

    /// Draws the help over `area`: every scope's keys in two columns, scrolled.
    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let t = ctx.theme;
        let view = self;
        let w = area.width.saturating_sub(4).min(150);
        let block = dialog_block(
            t,
            " Keys ",
            format!(
                " {} or {} closes · theme: {} ",
                ctx.keymap.key_for(Scope::NotInsert, Command::ToggleHelp),
                ctx.keymap.key_for(Scope::Help, Command::Dismiss),
                t.name
            ),
        );
        let key_w = ctx
            .keymap
            .bindings()
            .iter()
            .map(|b| b.keys_label().chars().count())
            .max()
            .unwrap_or(8)
            + 2;
        // Two columns inside the borders and padding; long help texts wrap under themselves,
        // leaving a gap of two columns before the right column (a text as wide as its
        // column ran into the next one's titles: "down a pageProfiles").
        const GAP: usize = 2;
        let text_w = ((w.saturating_sub(4) / 2) as usize)
            .saturating_sub(2 + key_w + GAP)
            .max(12);
        let section = |scope: Scope| {
            let mut v = vec![Line::from(Span::styled(scope.title(), t.group))];
            for bd in ctx.keymap.in_scope(scope) {
                for (i, chunk) in wrap_words(bd.help, text_w).into_iter().enumerate() {
                    let keys = if i == 0 {
                        bd.keys_label()
                    } else {
                        String::new()
                    };
                    v.push(Line::from(vec![
                        Span::styled(format!("  {keys:<key_w$}"), t.key),
                        Span::raw(chunk),
                    ]));
                }
            }
            v.push(Line::default());
            v
        };
        let all: Vec<Vec<Line>> = Scope::ORDER.iter().map(|s| section(*s)).collect();
        let total: usize = all.iter().map(Vec::len).sum();
        let mut left = Vec::new();
        let mut right = Vec::new();
        for s in all {
            if left.len() + s.len() <= total.div_ceil(2) + 2 && right.is_empty() {
                left.extend(s);
            } else {
                right.extend(s);
            }
        }
        let mut notes = vec![
            Line::from(Span::styled("Notes", t.group)),
            Line::from("  The request pane shows every header as sent; Date and X-Request-ID"),
            Line::from("  are renewed when sending. The private key is never shown."),
        ];
        right.append(&mut notes);
        let h = (left.len().max(right.len()) as u16 + 2).min(area.height);
        let r = centered(area, w, h);
        frame.render_widget(Clear, r);
        let inner = block.inner(r);
        frame.render_widget(block, r);
        let [c1, c2] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(inner);
        let top = view.top(left.len().max(right.len()), inner.height);
        frame.render_widget(Paragraph::new(left).scroll((top, 0)), c1);
        frame.render_widget(Paragraph::new(right).scroll((top, 0)), c2);
        self.draw_more(frame, r, ctx);
    }
}

impl HelpView {
    /// When the help does not fit, says which lines are shown and how to scroll, on the
    /// bottom border of `r`.
    fn draw_more(&self, frame: &mut Frame, r: Rect, ctx: &Ctx) {
        let rows = self.rows.get();
        let height = self.height.get();
        if rows <= height || r.height < 3 {
            return;
        }
        let top = self.scroll.min(rows - height);
        let k = |cmd| ctx.keymap.key_for(Scope::Help, cmd);
        let text = format!(
            " lines {}–{} of {} · {}/{} {}/{} scroll ",
            top + 1,
            top + height,
            rows,
            k(Command::Up),
            k(Command::Down),
            k(Command::PageUp),
            k(Command::PageDown),
        );
        let w = (text.chars().count() as u16).min(r.width.saturating_sub(4));
        frame.render_widget(
            Paragraph::new(Span::styled(text, ctx.theme.dim)),
            Rect::new(r.x + 2, r.bottom() - 1, w, 1),
        );
    }
}
