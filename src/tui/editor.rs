//! The request editor's multi-line body editor ([`ratatui_textarea`]) and the validation
//! before sending ([`crate::client::validate`]).
//!
//! Enter or `e` on the `body` field opens the editor over the right side of the console with
//! the body pretty-printed. Every key goes into the text except the editor's own keys (scope
//! "Body editor" of the keymap: Esc closes and keeps the text, compacted when it is JSON;
//! Ctrl-t cycles the operation's templates; Ctrl-g resets to the template; Ctrl-l
//! pretty-prints). Ctrl-c still quits. The body's problems are shown live under the text.
//!
//! `s` validates first: with problems nothing is sent, the problems are shown next to their
//! fields and the status line says how to send anyway (`S`).

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};
use ratatui_textarea::TextArea;

use super::app::{Action, App, Focus, Level, fields_of};
use super::keymap::{Command, Context};

/// The commands the body editor acts on; every other key goes into the text.
const BODY_COMMANDS: [Command; 4] = [
    Command::CloseBody,
    Command::NextTemplate,
    Command::ResetBody,
    Command::FormatBody,
];
use super::theme::Theme;
use crate::client::validate::{self, Problem};
use crate::xs2a::operations::Operation;

/// State of the request editor: the open body editor, if any, and the problems found by the
/// last validation.
#[derive(Debug, Default)]
pub struct EditorState {
    /// The body editor, while open.
    pub(crate) body: Option<BodyEditor>,
    /// Problems of the last validation of the operation with id `problems_for`.
    pub(crate) problems: Vec<Problem>,
    /// The operation the problems belong to.
    pub(crate) problems_for: Option<&'static str>,
    /// The template last chosen per operation id.
    templates: Vec<(&'static str, usize)>,
}

/// The open body editor.
#[derive(Debug)]
pub struct BodyEditor {
    /// The text being edited.
    pub(crate) text: TextArea<'static>,
    /// The operation whose body it is.
    pub(crate) op: &'static Operation,
    /// Index of the operation in the console's list.
    pub(crate) op_index: usize,
    /// Index of the `body` field in the form.
    pub(crate) field: usize,
    /// Index of the template in [`Operation::templates`].
    pub(crate) template: usize,
    /// Problems of the text as it is now.
    pub(crate) problems: Vec<Problem>,
}

impl BodyEditor {
    /// The text, lines joined by `\n`.
    pub fn text(&self) -> String {
        self.text.lines().join("\n")
    }
}

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

fn new_textarea(text: &str, theme: &Theme) -> TextArea<'static> {
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

fn today() -> chrono::NaiveDate {
    chrono::Utc::now().date_naive()
}

impl App {
    /// Whether the body editor is open.
    pub fn body_editor_open(&self) -> bool {
        self.editor.body.is_some()
    }

    /// The text of the open body editor.
    pub fn body_editor_text(&self) -> Option<String> {
        self.editor.body.as_ref().map(BodyEditor::text)
    }

    /// Name of the template the body editor shows (or the operation's default).
    pub fn body_template_name(&self) -> Option<&'static str> {
        let op = self.selected_operation();
        let i = self
            .editor
            .body
            .as_ref()
            .map(|b| b.template)
            .unwrap_or_else(|| self.template_choice(op.id));
        op.templates().get(i).map(|t| t.name)
    }

    /// Problems found by the last validation of the selected operation (empty when it passed
    /// or was not validated).
    pub fn problems(&self) -> &[Problem] {
        if self.editor.problems_for == Some(self.selected_operation().id) {
            &self.editor.problems
        } else {
            &[]
        }
    }

    fn template_choice(&self, op_id: &str) -> usize {
        self.editor
            .templates
            .iter()
            .find(|(id, _)| *id == op_id)
            .map(|(_, i)| *i)
            .unwrap_or(0)
    }

    /// Opens the body editor on the highlighted `body` field: its text pretty-printed, or
    /// the chosen template when it is empty.
    pub(crate) fn open_body_editor(&mut self) {
        let op = self.selected_operation();
        let Some(field) = fields_of(op).iter().position(|f| f.is_body) else {
            return;
        };
        let template = self.template_choice(op.id);
        let current = self.values[self.selected][field].clone();
        let text = if current.trim().is_empty() {
            op.templates()
                .get(template)
                .map(|t| pretty(&t.render(today())))
                .unwrap_or_default()
        } else {
            pretty(&current)
        };
        let mut ed = BodyEditor {
            text: new_textarea(&text, &self.theme),
            op,
            op_index: self.selected,
            field,
            template,
            problems: Vec::new(),
        };
        self.field = field;
        ed.problems = self.body_problems(&ed);
        self.editor.body = Some(ed);
        self.set_message(
            Level::Info,
            "Editing the body: Esc closes (text kept), Ctrl-t next template, Ctrl-g reset, Ctrl-l format",
        );
    }

    fn body_problems(&self, ed: &BodyEditor) -> Vec<Problem> {
        let values = self.param_pairs(ed.op_index);
        validate::validate_body(ed.op, &values, &ed.text())
    }

    /// `(name, value)` of the non-body fields of operation `oi` with a value.
    fn param_pairs(&self, oi: usize) -> Vec<(String, String)> {
        fields_of(self.ops[oi])
            .iter()
            .zip(&self.values[oi])
            .filter(|(f, v)| !f.is_body && !v.is_empty())
            .map(|(f, v)| (f.name.to_string(), v.clone()))
            .collect()
    }

    /// Keys of the open body editor: its own commands, or typed into the text. `None` when
    /// the editor is closed.
    pub(crate) fn body_editor_key(&mut self, key: &KeyEvent) -> Option<Action> {
        self.editor.body.as_ref()?;
        let cmd = self
            .keymap
            .lookup(Context::BodyEditor, key)
            .filter(|c| BODY_COMMANDS.contains(c));
        match cmd {
            Some(cmd) => {
                self.body_editor_command(cmd);
            }
            None => {
                let changed = self
                    .editor
                    .body
                    .as_mut()
                    .is_some_and(|ed| ed.text.input(*key));
                if changed {
                    self.refresh_body_problems();
                }
            }
        }
        Some(Action::None)
    }

    /// Pasted text goes into the open body editor, line breaks included; false when it is
    /// closed.
    pub(crate) fn body_editor_paste(&mut self, text: &str) -> bool {
        let Some(ed) = self.editor.body.as_mut() else {
            return false;
        };
        ed.text
            .insert_str(text.replace("\r\n", "\n").replace('\r', "\n"));
        self.refresh_body_problems();
        true
    }

    fn refresh_body_problems(&mut self) {
        if let Some(ed) = self.editor.body.take() {
            let problems = self.body_problems(&ed);
            self.editor.body = Some(BodyEditor { problems, ..ed });
        }
    }

    /// The body editor's commands (scope "Body editor" of the keymap).
    pub(crate) fn body_editor_command(&mut self, cmd: Command) {
        let Some(mut ed) = self.editor.body.take() else {
            return;
        };
        match cmd {
            Command::CloseBody => {
                let text = ed.text();
                let stored = if text.trim().is_empty() {
                    String::new()
                } else {
                    compact(&text)
                };
                self.values[ed.op_index][ed.field] = stored;
                self.invalidate_preview();
                let n = ed.problems.len();
                self.set_message(
                    if n == 0 { Level::Info } else { Level::Warning },
                    if n == 0 {
                        "Body kept".to_string()
                    } else {
                        format!("Body kept, with {n} problem(s) shown under it")
                    },
                );
                if self.editor.problems_for == Some(ed.op.id) {
                    self.revalidate();
                }
                return;
            }
            Command::NextTemplate | Command::ResetBody => {
                let templates = ed.op.templates();
                if templates.is_empty() {
                    self.editor.body = Some(ed);
                    return;
                }
                if cmd == Command::NextTemplate {
                    ed.template = (ed.template + 1) % templates.len();
                }
                let t = templates[ed.template];
                ed.text = new_textarea(&pretty(&t.render(today())), &self.theme);
                let id = ed.op.id;
                self.editor.templates.retain(|(o, _)| *o != id);
                self.editor.templates.push((id, ed.template));
                self.set_message(
                    Level::Info,
                    format!(
                        "Template {} ({}/{})",
                        t.name,
                        ed.template + 1,
                        templates.len()
                    ),
                );
            }
            Command::FormatBody => {
                let text = ed.text();
                match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(_) => {
                        let row = ed.text.cursor().0;
                        ed.text = new_textarea(&pretty(&text), &self.theme);
                        for _ in 0..row {
                            ed.text.move_cursor(ratatui_textarea::CursorMove::Down);
                        }
                        self.set_message(Level::Info, "Body formatted");
                    }
                    Err(e) => self.set_message(
                        Level::Warning,
                        format!(
                            "Cannot format: not valid JSON at line {}, column {}",
                            e.line(),
                            e.column()
                        ),
                    ),
                }
            }
            _ => {}
        }
        ed.problems = self.body_problems(&ed);
        self.editor.body = Some(ed);
    }

    /// Validates the selected operation's request ([`validate::validate`]); keeps the
    /// problems for the form and returns them.
    pub fn validate_request(&mut self) -> Vec<Problem> {
        let spec = self.request_spec();
        let fills = validate::engine_fills(
            spec.op,
            self.status.psu_id.is_some(),
            self.status.psu_corporate_id.is_some(),
        );
        let problems = validate::validate(spec.op, &spec.params, spec.body.as_deref(), &fills);
        self.editor.problems = problems.clone();
        self.editor.problems_for = Some(spec.op.id);
        problems
    }

    /// Validates again when problems are shown, so fixed ones disappear.
    pub(crate) fn revalidate(&mut self) {
        if self.editor.problems_for.is_some() {
            self.validate_request();
        }
    }

    /// `s`: validates; true (send) when there are no problems, else the problems are shown
    /// and the status line offers `S`.
    pub(crate) fn validate_before_send(&mut self) -> bool {
        let problems = self.validate_request();
        if problems.is_empty() {
            return true;
        }
        let n = problems.len();
        // Highlight the first field with a problem, so its reason is in view.
        let fields = fields_of(self.selected_operation());
        if let Some(i) = fields.iter().position(|f| {
            if f.is_body {
                problems[0].is_body()
            } else {
                problems[0].field.eq_ignore_ascii_case(f.name)
            }
        }) {
            self.focus = Focus::Params;
            self.field = i;
        }
        self.set_message(
            Level::Error,
            format!(
                "{n} problem{}: fix them, or press S to send anyway (first: {})",
                if n == 1 { "" } else { "s" },
                problems[0]
            ),
        );
        false
    }

    /// `S`: sends without validation (support staff reproduce bad requests on purpose).
    pub(crate) fn send_anyway(&mut self) {
        self.editor.problems.clear();
        self.editor.problems_for = None;
    }

    /// Draws the body editor over the right side of the console.
    pub(crate) fn draw_body_editor(&self, frame: &mut Frame, area: Rect) {
        let Some(ed) = &self.editor.body else {
            return;
        };
        let t = &self.theme;
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
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(t.border_focused)
            .title(Span::styled(
                format!(" ▸ Body · {}{tname} ", ed.op.title),
                t.border_focused,
            ))
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
