//! Lessons in the console (issue 12, "Lessons"): the lesson panel under the console's panes
//! shows the step's narration, the section of the interface document and what to watch;
//! `]` and `[` step forward and back, and each step selects its operation with its
//! prefilled parameters ([`Effect::Prefill`]), so the trainer only sends. `L` (or the
//! palette) opens the lesson picker ([`LessonPicker`]); `psd2-console --lesson NAME` starts
//! one at once. The lessons themselves are [`crate::lessons`].

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Padding, Paragraph};

use super::component::{Component, Ctx, Effect, Prefill};
use super::keymap::{Command, Scope};
use super::overlay::Layer;
pub use super::overlay::LessonPicker;
use super::status_line::Level;
use super::text::{centered, ellipsize, wrap_words};
use super::theme::rounded_block;
use crate::lessons::{Lesson, LessonProgress, Step};
use crate::xs2a::operations::{self, Operation};

/// The lesson being given, if any.
#[derive(Debug, Default)]
pub struct LessonPanel {
    progress: Option<LessonProgress>,
}

impl LessonPanel {
    /// The lesson and step shown.
    pub fn progress(&self) -> Option<&LessonProgress> {
        self.progress.as_ref()
    }

    /// Starts `lesson` at its first step; returns what the step prepares.
    pub(crate) fn start(&mut self, lesson: Lesson, ctx: &mut Ctx) -> Effect {
        ctx.say(
            Level::Info,
            format!(
                "Lesson: {} ({} steps). {} next step, {} back",
                lesson.title,
                lesson.steps.len(),
                ctx.keymap.key_for(Scope::NotInsert, Command::LessonNext),
                ctx.keymap.key_for(Scope::NotInsert, Command::LessonBack),
            ),
        );
        let progress = LessonProgress::new(lesson);
        let effect = step_effect(progress.current());
        self.progress = Some(progress);
        effect
    }

    /// Ends the lesson (the panel closes; the console keeps what the steps filled in).
    pub(crate) fn end(&mut self) -> Option<Lesson> {
        self.progress.take().map(|p| p.lesson)
    }

    /// Rows the panel wants on a screen `width` columns wide (0 without a lesson), with
    /// `selected` the operation selected on screen: its lines ([`panel_lines`]) and borders,
    /// at most 14; `essentials`: only the step's title, Section and Watch (presenter mode
    /// while the room looks at the request or the signature inspector, which need the rows).
    pub(crate) fn height(
        &self,
        width: u16,
        ctx: &Ctx,
        essentials: bool,
        selected: &Operation,
    ) -> u16 {
        let Some(p) = &self.progress else {
            return 0;
        };
        let inner = width.saturating_sub(4).max(20) as usize;
        let (lines, first) = panel_lines(p, inner, ctx, selected);
        let n = if essentials { first } else { lines.len() };
        (n + 2).min(14) as u16
    }
}

/// The panel's lines wrapped at `width`: the step's title line, then its Section and
/// Watch (first, so that a short panel never cuts what the room should look at), then the
/// lesson's summary (first step only; not in presenter mode, where the trainer says it)
/// and the narration. Also the number of lines before the summary and narration.
fn panel_lines(
    p: &LessonProgress,
    width: usize,
    ctx: &Ctx,
    selected: &Operation,
) -> (Vec<Line<'static>>, usize) {
    let t = ctx.theme;
    let step = p.current();
    let presenter = ctx.screen_mask.is_on();
    let send = ctx.keymap.key_for(Scope::Normal, Command::Send);
    let mut lines = Vec::new();
    // A labelled text wrapped under itself: the label styled on the first line.
    let labelled = |lines: &mut Vec<Line<'static>>,
                    label: &str,
                    label_style: Style,
                    text: &str,
                    text_style: Style| {
        for (i, l) in wrap_words(&format!("{label}{text}"), width)
            .into_iter()
            .enumerate()
        {
            lines.push(match l.strip_prefix(label).filter(|_| i == 0) {
                Some(rest) => Line::from(vec![
                    Span::styled(label.to_string(), label_style),
                    Span::styled(rest.to_string(), text_style),
                ]),
                None => Line::from(Span::styled(l, text_style)),
            });
        }
    };
    // The projector's narrow panel: the room sees the selected operation in the list.
    let what = if presenter && step.operation.as_deref() == Some(selected.id) {
        format!("  (press {send} to send)")
    } else {
        step_note(step, selected, &send)
    };
    labelled(
        &mut lines,
        &format!("{} · ", p.position()),
        t.dim,
        &format!("{}{what}", step.title),
        t.header_name,
    );
    labelled(
        &mut lines,
        "Section: ",
        t.header_name,
        &step.section,
        t.base,
    );
    if let Some(w) = &step.watch {
        labelled(&mut lines, "Watch: ", t.header_name, w, t.warning);
    }
    let essentials = lines.len();
    if p.step == 0 && !presenter {
        labelled(
            &mut lines,
            "",
            t.dim,
            &p.lesson.summary.replace('\n', " "),
            t.dim,
        );
    }
    labelled(
        &mut lines,
        "",
        t.base,
        &step.narration.replace('\n', " "),
        t.base,
    );
    (lines, essentials)
}

/// The note after the step's title on the step line: what the screen shows for the step,
/// with `selected` the operation selected on screen and `send` the key that sends.
///
/// - the step's operation is selected: "(selected: List accounts; press s to send)";
/// - the console has moved on to another operation since (after a payment's SCA it selects
///   Payment status and reads it by itself): "(on screen: Payment status — the console moved
///   on from this step's Initiate payment)";
/// - a step without an operation says where the room acts ([`crate::lessons::Act`]): "(no
///   request: the PSU acts in the browser)", "(no request: act in a terminal, outside the
///   console)".
pub(crate) fn step_note(step: &Step, selected: &Operation, send: &str) -> String {
    match step.operation.as_deref() {
        Some(id) if id == selected.id => {
            format!("  (selected: {}; press {send} to send)", selected.title)
        }
        Some(id) => format!(
            "  (on screen: {} — the console moved on from this step's {})",
            selected.title,
            operations::find(id).map_or(id, |o| o.title)
        ),
        None => format!(
            "  ({})",
            step.act.map_or("no request", crate::lessons::Act::words)
        ),
    }
}

/// What a step prepares in the console: its operation with its parameters and body, or
/// nothing for a narration-only step.
fn step_effect(step: &Step) -> Effect {
    let Some(op) = step.operation.as_deref().and_then(operations::find) else {
        return Effect::None;
    };
    Effect::Prefill(Box::new(Prefill {
        op,
        params: step.param_values(),
        body: step.body.clone(),
    }))
}

impl Component for LessonPanel {
    fn handle(&mut self, cmd: Command, ctx: &mut Ctx) -> Option<Effect> {
        if !matches!(cmd, Command::LessonNext | Command::LessonBack) {
            return None;
        }
        let Some(p) = &mut self.progress else {
            ctx.say(
                Level::Info,
                format!(
                    "No lesson running: {} chooses one",
                    ctx.keymap.key_for(Scope::NotInsert, Command::Lessons)
                ),
            );
            return Some(Effect::None);
        };
        let moved = if cmd == Command::LessonNext {
            p.forward()
        } else {
            p.back()
        };
        if !moved {
            ctx.say(
                Level::Info,
                if cmd == Command::LessonNext {
                    "This is the last step of the lesson"
                } else {
                    "This is the first step of the lesson"
                },
            );
            return Some(Effect::None);
        }
        ctx.say(
            Level::Info,
            format!("{}: {}", p.position(), p.current().title),
        );
        Some(step_effect(p.current()))
    }

    /// Draws the panel as if the step's own operation were selected; the console draws it
    /// with the operation actually selected ([`LessonPanel::draw_for`]).
    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let selected = self
            .progress
            .as_ref()
            .and_then(|p| p.current().operation.as_deref())
            .and_then(operations::find)
            .or_else(|| ctx.ops.first().copied());
        if let Some(op) = selected {
            self.draw_for(frame, area, ctx, op);
        }
    }
}

impl LessonPanel {
    /// Draws the panel into `area`; the step line names `selected`, the operation selected
    /// on screen ([`step_note`]).
    pub(crate) fn draw_for(&self, frame: &mut Frame, area: Rect, ctx: &Ctx, selected: &Operation) {
        let Some(p) = &self.progress else {
            return;
        };
        let t = ctx.theme;
        let keys = format!(
            " {} next · {} back · {} lessons ",
            ctx.keymap.key_for(Scope::NotInsert, Command::LessonNext),
            ctx.keymap.key_for(Scope::NotInsert, Command::LessonBack),
            ctx.keymap.key_for(Scope::NotInsert, Command::Lessons),
        );
        let block = rounded_block(
            format!(" Lesson: {} ", p.lesson.title),
            t.border_focused,
            t.border_focused,
        )
        .title_bottom(Line::from(Span::styled(keys, t.dim)).right_aligned())
        .style(t.base)
        .padding(Padding::horizontal(1));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let (mut lines, _) = panel_lines(p, usize::from(inner.width), ctx, selected);
        if lines.len() > usize::from(inner.height)
            && let Some(last) = lines.get_mut(usize::from(inner.height).saturating_sub(1))
        {
            // Cut: the last row shown says so.
            last.spans.push(Span::styled(" …", t.dim));
        }
        frame.render_widget(Paragraph::new(lines), inner);
    }
}

impl Component for LessonPicker {
    fn handle(&mut self, cmd: Command, _ctx: &mut Ctx) -> Option<Effect> {
        let n = self.lessons.len().max(1);
        Some(match cmd {
            Command::Up => {
                self.selected = (self.selected + n - 1) % n;
                Effect::None
            }
            Command::Down => {
                self.selected = (self.selected + 1) % n;
                Effect::None
            }
            Command::Choose => match self.lessons.get(self.selected) {
                Some(l) => Effect::StartLesson(Box::new(l.clone())),
                None => Effect::Close(Layer::Lessons),
            },
            Command::LessonEnd => Effect::EndLesson,
            Command::Dismiss => Effect::Close(Layer::Lessons),
            _ => return None,
        })
    }

    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let t = ctx.theme;
        let w = area.width.saturating_sub(4).min(90);
        let h = (self.lessons.len() as u16 + 4).min(area.height);
        let r = centered(area, w, h);
        frame.render_widget(Clear, r);
        let hint = if self.running {
            format!(
                " Enter starts · {} ends the lesson · Esc closes ",
                ctx.keymap.key_for(Scope::LessonPicker, Command::LessonEnd)
            )
        } else {
            " Enter starts · Esc closes ".to_string()
        };
        let block = t
            .modal_block(" Lessons ")
            .title_bottom(Line::from(Span::styled(hint, t.dim)).right_aligned());
        let inner_w = w.saturating_sub(4) as usize;
        let mut lines = Vec::new();
        if self.lessons.is_empty() {
            lines.push(Line::from(Span::styled("No lesson could be read.", t.dim)));
        }
        for (i, l) in self.lessons.iter().enumerate() {
            let text = ellipsize(
                &format!("{:<26} {} ({} steps)", l.id, l.title, l.steps.len()),
                inner_w,
            );
            let style = if i == self.selected {
                t.selected
            } else {
                t.base
            };
            lines.push(Line::from(Span::styled(text, style)));
        }
        frame.render_widget(Paragraph::new(lines).block(block), r);
    }
}
