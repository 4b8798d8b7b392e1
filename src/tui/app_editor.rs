//! The body editor's side of the [`App`] ([`super::body_editor`] is the component) and the
//! validation before sending ([`crate::client::validate`]).
//!
//! Enter or `e` on the `body` field opens the editor over the right side of the console with
//! the body pretty-printed. `s` validates first: with problems nothing is sent, the
//! problems are shown next to their fields and the status line says how to send anyway
//! (`S`).

use super::app::{App, Focus, Level, fields_of};
use super::body_editor::{BodyEditor, compact, new_textarea, pretty, today};
use super::overlay::{Layer, Overlay};
use crate::client::validate::{self, Problem};

impl App {
    /// Whether the body editor is open.
    pub fn body_editor_open(&self) -> bool {
        self.overlays.is_open(Layer::BodyEditor)
    }

    /// The text of the open body editor.
    pub fn body_editor_text(&self) -> Option<String> {
        self.overlays.body_editor().map(BodyEditor::text)
    }

    /// Name of the template the body editor shows (or the operation's default).
    pub fn body_template_name(&self) -> Option<&'static str> {
        let op = self.selected_operation();
        let i = self
            .overlays
            .body_editor()
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

    pub(crate) fn template_choice(&self, op_id: &str) -> usize {
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
        let current = self.form.values[self.form.selected][field].clone();
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
            op_index: self.form.selected,
            field,
            template,
            problems: Vec::new(),
            params: self.form.param_pairs(self.form.selected),
        };
        self.form.field = field;
        ed.refresh_problems();
        self.overlays.open(Overlay::BodyEditor(Box::new(ed)));
        self.set_message(
            Level::Info,
            "Editing the body: Esc closes (text kept), Ctrl-t next template, Ctrl-g reset, Ctrl-l format",
        );
    }

    /// Closes the body editor ([`Effect::CloseBody`](super::component::Effect::CloseBody)):
    /// its text, compacted when it is JSON, goes into the form's `body` field.
    pub(crate) fn close_body_editor(&mut self) {
        let Some(ed) = self.overlays.take_body_editor() else {
            return;
        };
        let text = ed.text();
        let stored = if text.trim().is_empty() {
            String::new()
        } else {
            compact(&text)
        };
        self.form.values[ed.op_index][ed.field] = stored;
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
    }

    /// Remembers `template` as the one chosen for operation `op`.
    pub(crate) fn keep_template(&mut self, op: &'static str, template: usize) {
        self.editor.templates.retain(|(o, _)| *o != op);
        self.editor.templates.push((op, template));
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
            self.panes.focus = Focus::Params;
            self.form.field = i;
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
}
