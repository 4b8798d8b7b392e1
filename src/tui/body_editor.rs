//! The body editor: a multi-line JSON editor ([`ratatui_textarea`]) on one operation's
//! `body` field, with the problems of its text shown live under it. It lives in the overlay
//! stack ([`super::overlay::Overlay::BodyEditor`]); [`super::editor`] opens and closes it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui_textarea::TextArea;

use super::theme::{Theme, rounded_block};
use crate::client::validate::Problem;
use crate::xs2a::operations::Operation;

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
