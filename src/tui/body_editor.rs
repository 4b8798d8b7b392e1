//! The body editor: a multi-line JSON editor ([`ratatui_textarea`]) on one operation's
//! `body` field, with the problems of its text shown live under it. A component
//! ([`Component`]) in the overlay stack ([`super::overlay::Overlay::BodyEditor`]); the
//! `App` opens it on the `body` field and stores its text when it closes
//! ([`Effect::CloseBody`]).
//!
//! Every key goes into the text except the editor's own keys (scope "Body editor" of the
//! keymap: Esc closes and keeps the text, compacted when it is JSON; Ctrl-t cycles the
//! operation's templates; Ctrl-g resets to the template; Ctrl-l pretty-prints). Ctrl-c
//! still quits. The body's problems are shown live under the text.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui_textarea::TextArea;

use crossterm::event::KeyEvent;

use super::component::{Component, Ctx, Effect};
use super::keymap::{Command, Context};
pub use super::overlay::BodyEditor;
use super::status_line::Level;
use super::theme::{Theme, rounded_block};
use crate::client::validate::{self, Problem};

/// The commands the body editor acts on; every other key goes into the text.
const BODY_COMMANDS: [Command; 4] = [
    Command::CloseBody,
    Command::NextTemplate,
    Command::ResetBody,
    Command::FormatBody,
];

/// `text` pretty-printed when it is JSON, else unchanged.
pub fn pretty(text: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_else(|_| text.to_string()),
        Err(_) => text.to_string(),
    }
}

/// `text` compacted when it is JSON, else unchanged.
pub fn compact(text: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => serde_json::to_string(&v).unwrap_or_else(|_| text.to_string()),
        Err(_) => text.to_string(),
    }
}

pub(crate) fn new_textarea(text: &str, theme: &Theme) -> TextArea<'static> {
    let lines: Vec<String> = if text.is_empty() {
        vec![String::new()]
    } else {
        text.lines().map(str::to_string).collect()
    };
    let mut t = TextArea::new(lines);
    t.set_max_histories(200);
    t.set_style(theme.base);
    t.set_line_number_style(theme.dim);
    t.set_cursor_line_style(theme.base);
    t.set_cursor_style(theme.base.add_modifier(Modifier::REVERSED));
    t
}

pub(crate) fn today() -> chrono::NaiveDate {
    chrono::Utc::now().date_naive()
}

/// State of the request editor: the problems found by the last validation and the
/// templates chosen (the open body editor lives in the overlay stack,
/// [`super::overlay::Overlay::BodyEditor`]).
#[derive(Debug, Default)]
pub struct EditorState {
    /// Problems of the last validation of the operation with id `problems_for`.
    pub(crate) problems: Vec<Problem>,
    /// The operation the problems belong to.
    pub(crate) problems_for: Option<&'static str>,
    /// The template last chosen per operation id.
    pub(crate) templates: Vec<(&'static str, usize)>,
}

impl BodyEditor {
    /// The text, lines joined by `\n`.
    pub fn text(&self) -> String {
        self.text.lines().join("\n")
    }

    /// Validates the text as it is now ([`validate::validate_body`]) into
    /// [`BodyEditor::problems`].
    pub(crate) fn refresh_problems(&mut self) {
        self.problems = validate::validate_body(self.op, &self.params, &self.text());
    }

    /// Draws the editor over the right side of `area` (the console below the status bar,
    /// right of the operation list).
    pub fn draw(&self, frame: &mut Frame, area: Rect, t: &Theme) {
        let ed = self;
        let left = if area.width >= 120 { 32 } else { 30 };
        let area = Rect {
            x: area.x + left.min(area.width / 3),
            y: area.y + 2,
            width: area.width.saturating_sub(left.min(area.width / 3)),
            height: area.height.saturating_sub(4),
        };
        frame.render_widget(Clear, area);
        let templates = ed.op.templates();
        let tname = templates
            .get(ed.template)
            .map(|x| {
                format!(
                    " · template {} ({}/{})",
                    x.name,
                    ed.template + 1,
                    templates.len()
                )
            })
            .unwrap_or_default();
        let cursor = ed.text.cursor();
        let block = rounded_block(
            format!(" ▸ Body · {}{tname} ", ed.op.title),
            t.border_focused,
            t.border_focused,
        )
        .title_bottom(
            Line::from(Span::styled(
                format!(" line {}, column {} ", cursor.0 + 1, cursor.1 + 1),
                t.dim,
            ))
            .right_aligned(),
        )
        .style(t.base);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let plines = ed.problems.len().min(8) as u16;
        let [text_area, sep, plist] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(u16::from(plines > 0)),
            Constraint::Length(plines + u16::from(ed.problems.len() > 8)),
        ])
        .areas(inner);
        frame.render_widget(&ed.text, text_area);
        if plines > 0 {
            frame.render_widget(
                Paragraph::new(Line::from(Span::styled(
                    format!("{} problem(s):", ed.problems.len()),
                    t.error,
                ))),
                sep,
            );
            let mut lines: Vec<Line> = ed
                .problems
                .iter()
                .take(8)
                .map(|p| Line::from(Span::styled(format!(" {p}"), t.error)))
                .collect();
            if ed.problems.len() > 8 {
                lines.push(Line::from(Span::styled(
                    format!(" … and {} more", ed.problems.len() - 8),
                    t.error,
                )));
            }
            frame.render_widget(Paragraph::new(lines), plist);
        }
    }
}

impl Component for BodyEditor {
    /// Ctrl-t, Ctrl-g, Ctrl-l and Esc ([`BODY_COMMANDS`]); other commands are not the
    /// editor's.
    fn handle(&mut self, cmd: Command, ctx: &mut Ctx) -> Option<Effect> {
        match cmd {
            Command::CloseBody => return Some(Effect::CloseBody),
            Command::NextTemplate | Command::ResetBody => {
                let templates = self.op.templates();
                if templates.is_empty() {
                    return Some(Effect::None);
                }
                if cmd == Command::NextTemplate {
                    self.template = (self.template + 1) % templates.len();
                }
                let t = templates[self.template];
                self.text = new_textarea(&pretty(&t.render(today())), ctx.theme);
                ctx.say(
                    Level::Info,
                    format!(
                        "Template {} ({}/{})",
                        t.name,
                        self.template + 1,
                        templates.len()
                    ),
                );
                self.refresh_problems();
                return Some(Effect::KeepTemplate {
                    op: self.op.id,
                    template: self.template,
                });
            }
            Command::FormatBody => {
                let text = self.text();
                match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(_) => {
                        let row = self.text.cursor().0;
                        self.text = new_textarea(&pretty(&text), ctx.theme);
                        for _ in 0..row {
                            self.text.move_cursor(ratatui_textarea::CursorMove::Down);
                        }
                        ctx.say(Level::Info, "Body formatted");
                    }
                    Err(e) => ctx.say(
                        Level::Warning,
                        format!(
                            "Cannot format: not valid JSON at line {}, column {}",
                            e.line(),
                            e.column()
                        ),
                    ),
                }
                self.refresh_problems();
            }
            _ => return None,
        }
        Some(Effect::None)
    }

    /// Every key: the editor's own commands, else typed into the text.
    fn input(&mut self, key: &KeyEvent, ctx: &mut Ctx) -> Option<Effect> {
        let cmd = ctx
            .keymap
            .lookup(Context::BodyEditor, key)
            .filter(|c| BODY_COMMANDS.contains(c));
        if let Some(cmd) = cmd {
            return self.handle(cmd, ctx);
        }
        if self.text.input(*key) {
            self.refresh_problems();
        }
        Some(Effect::None)
    }

    /// Pasted text goes into the text, line breaks included.
    fn paste(&mut self, text: &str) -> bool {
        self.text
            .insert_str(text.replace("\r\n", "\n").replace('\r', "\n"));
        self.refresh_problems();
        true
    }

    fn typing(&self) -> bool {
        true
    }

    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        BodyEditor::draw(self, frame, area, ctx.theme);
    }
}
