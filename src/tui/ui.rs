//! Drawing: [`App::render`] lays out the status bar, the operation list, the parameter form,
//! the request, the signature inspector, the response and the overlays. Only visible lines
//! are turned into widgets, so a large response costs nothing per frame.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use super::app::{App, Focus, Level, Mode, Preview, ResponseState, Screen, fields_of};
use super::component::Component;
use super::highlight::json_spans;
use super::keymap::{Command, Scope};
use super::overlay::Overlay;
use super::presenter::ScreenMask;
use super::text::{centered, ellipsize, pad, wrap_words};
use super::theme::Theme;
use crate::client::PreparedRequest;
use crate::xs2a::operations::Group;

/// Terminal width from which the request and response get columns of their own.
const WIDE: u16 = 120;

/// Height of a collapsed pane (presenter mode): its title line.
const COLLAPSED_H: u16 = 1;

/// Rows the response keeps in presenter mode below [`WIDE`] before the request pane is
/// shown beside it: borders, status line and at least seven lines of the body.
const PRESENTER_RESPONSE_MIN: u16 = 10;

/// Narrowest text column of the SCA prompt beside its QR code in presenter mode.
const MIN_PROMPT_TEXT_W: u16 = 30;

struct Areas {
    status: Rect,
    /// Presenter mode's step line (under the status bar).
    step: Option<Rect>,
    /// Everything between the status bar (and step line) and the footer.
    main: Rect,
    ops: Rect,
    guide: Option<Rect>,
    params: Rect,
    request: Rect,
    signature: Rect,
    response: Rect,
    footer: Rect,
    /// The lesson panel, while a lesson runs ([`super::lesson`]).
    lesson: Option<Rect>,
}

fn group_title(g: Group) -> &'static str {
    match g {
        Group::Ais => "AIS · account information",
        Group::Pis => "PIS · payment initiation",
        Group::Baskets => "Baskets · signing baskets",
        Group::Psu => "PSU",
        Group::Sandbox => "Sandbox · test data",
    }
}

impl App {
    /// Draws the whole console into `frame`.
    pub fn render(&self, frame: &mut Frame) {
        let area = frame.area();
        frame.render_widget(Block::new().style(self.theme.base), area);
        let a = self.layout(area);
        self.panes
            .hit
            .record(a.ops, a.params, a.request, a.signature, a.response);
        self.draw_status(frame, a.status);
        if let Some(step) = a.step {
            self.draw_step(frame, step);
        }
        if self.screen != Screen::Console {
            let main = a.main;
            let ctx = ctx!(self);
            match self.screen {
                Screen::Profiles => self.screens.profiles.draw(frame, main, &ctx),
                Screen::Flow => self.screens.flow.draw(frame, main, &ctx),
                Screen::Monitor => self.screens.monitor.draw(frame, main, &ctx),
                _ => self.screens.history.draw(frame, main, &ctx),
            }
            self.draw_footer(frame, a.footer);
            self.draw_overlays(frame, area);
            return;
        }
        self.draw_operations(frame, a.ops);
        if let Some(g) = a.guide {
            self.draw_guide(frame, g);
        }
        self.draw_params(frame, a.params);
        self.draw_request(frame, a.request);
        self.draw_signature(frame, a.signature);
        self.response_pane.draw(frame, a.response, &ctx!(self));
        if let Some(l) = a.lesson {
            let selected = self.selected_operation();
            self.lesson.draw_for(frame, l, &ctx!(self), selected);
        }
        self.draw_footer(frame, a.footer);
        self.draw_overlays(frame, area);
    }

    /// The open dialogs over any screen, bottom to top ([`super::overlay`]).
    fn draw_overlays(&self, frame: &mut Frame, area: Rect) {
        let ctx = ctx!(self);
        for overlay in self.overlays.iter() {
            match overlay {
                Overlay::BodyEditor(ed) => ed.draw(frame, area, &self.theme),
                Overlay::ScaPrompt => {
                    if self.sca_prompt().is_some() {
                        self.draw_sca_prompt(frame, area);
                    }
                }
                Overlay::LinkChooser => self.response_pane.draw_chooser(frame, area, &ctx),
                Overlay::Picker(sel) => self.draw_picker(frame, area, *sel),
                Overlay::Lessons(p) => p.draw(frame, area, &ctx),
                Overlay::Help(view) => view.draw(frame, area, &ctx),
                Overlay::Problems => self.draw_log(frame, area),
                Overlay::Palette(p) => p.draw(frame, area, &ctx),
            }
        }
    }

    /// The problems overlay (`!`): every warning and error so far, newest last, wrapped.
    fn draw_log(&self, frame: &mut Frame, area: Rect) {
        let t = &self.theme;
        let w = area.width.saturating_sub(4).min(120);
        let inner_w = w.saturating_sub(4) as usize;
        let mut lines = Vec::new();
        if self.messages.log().is_empty() {
            lines.push(Line::from(Span::styled("No problems so far.", t.dim)));
        }
        let mask = self.screen_mask();
        for m in self.messages.log() {
            let style = if m.level == Level::Error {
                t.error
            } else {
                t.warning
            };
            for (i, l) in wrap_chars(&mask.text(&m.text), inner_w.saturating_sub(2))
                .into_iter()
                .enumerate()
            {
                let lead = if i == 0 { "• " } else { "  " };
                lines.push(Line::from(Span::styled(format!("{lead}{l}"), style)));
            }
        }
        let room = (area.height as usize).saturating_sub(4).max(1);
        // The newest problems stay in view.
        let skip = lines.len().saturating_sub(room);
        let mut lines: Vec<Line> = lines.into_iter().skip(skip).collect();
        lines.push(Line::from(Span::styled("any key closes", t.dim)));
        let h = (lines.len() as u16 + 2).min(area.height);
        let r = centered(area, w, h);
        frame.render_widget(Clear, r);
        let block = t.modal_block(" Problems ");
        frame.render_widget(Paragraph::new(lines).block(block), r);
    }

    fn layout(&self, area: Rect) -> Areas {
        let step_h = if self.presenter.on {
            self.step_height(area.width)
        } else {
            0
        };
        let [status, step, main, footer] = Layout::vertical([
            Constraint::Length(2),
            Constraint::Length(step_h),
            Constraint::Min(0),
            Constraint::Length(2),
        ])
        .areas(area);
        // A running lesson takes a band under the panes.
        // Only on the console: the other screens have no lesson panel, and a band left
        // blank there cost them 7-8 rows at 80×24.
        let band = if self.screen == Screen::Console {
            self.lesson
                .height(
                    area.width,
                    &ctx!(self),
                    self.presenter.on
                        && matches!(self.panes.focus, Focus::Signature | Focus::Request),
                    self.selected_operation(),
                )
                .min(main.height / 2)
        } else {
            0
        };
        let [main, lesson] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(band)]).areas(main);
        let lesson = (band > 0).then_some(lesson);
        let step = self.presenter.on.then_some(step);
        let nfields = fields_of(self.selected_operation()).len();
        // Validation problems get room under their fields.
        let params_max = if self.problems().is_empty() { 12 } else { 20 };
        let params_h = (nfields.max(1) + 3).min(params_max) as u16;
        let ops_h = (self.form.rows() + 2) as u16;
        if area.width >= WIDE {
            let [left, middle, right] = Layout::horizontal([
                Constraint::Length(32),
                Constraint::Fill(5),
                Constraint::Fill(6),
            ])
            .areas(main);
            let [ops, guide] =
                Layout::vertical([Constraint::Length(ops_h), Constraint::Min(0)]).areas(left);
            let rest = middle.height.saturating_sub(params_h);
            let want = self.request_line_count(middle.width.saturating_sub(4)) as u16 + 2;
            let request_h = want.clamp(5.min(rest), (rest * 3 / 5).max(5.min(rest)));
            let [params, request, signature] = Layout::vertical([
                Constraint::Length(params_h),
                Constraint::Length(request_h),
                Constraint::Min(0),
            ])
            .areas(middle);
            Areas {
                status,
                step,
                main,
                ops,
                guide: (guide.height >= 5).then_some(guide),
                params,
                request,
                signature,
                response: right,
                footer,
                lesson,
            }
        } else {
            let [left, right] =
                Layout::horizontal([Constraint::Length(30), Constraint::Min(0)]).areas(main);
            // The catalogue is longer than a narrow screen: the list scrolls, and the
            // parameters keep their room below it.
            let ops_h = ops_h.min(left.height.saturating_sub(params_h.max(5)));
            // Less than a bordered row: none (a lone border line shows nothing).
            let ops_h = if ops_h < 3 { 0 } else { ops_h };
            let [ops, params] =
                Layout::vertical([Constraint::Length(ops_h), Constraint::Min(0)]).areas(left);
            // Presenter mode: the request and the signature inspector share one pane's
            // room, the one without focus collapsed to its title, so the response keeps
            // its head in view at 80×24 (issue 12).
            let [request_c, signature_c, response_c] = if self.presenter.on {
                self.presenter_right_column(right)
            } else {
                [
                    Constraint::Fill(1),
                    Constraint::Fill(1),
                    Constraint::Fill(2),
                ]
            };
            let [request, signature, response] =
                Layout::vertical([request_c, signature_c, response_c]).areas(right);
            Areas {
                status,
                step,
                main,
                ops,
                guide: None,
                params,
                request,
                signature,
                response,
                footer,
                lesson,
            }
        }
    }

    /// Presenter mode below [`WIDE`]: the heights of the request, the signature inspector
    /// and the response in the right column `right`, so what the room watches is whole
    /// at 80×24 and 100×30 (issue 18): the focused request or signature inspector takes
    /// the column, the other two collapsed to their titles; else the response takes it,
    /// with the request above at its own height only while the response keeps
    /// [`PRESENTER_RESPONSE_MIN`] rows (its status, and the JSON the step points at).
    fn presenter_right_column(&self, right: Rect) -> [Constraint; 3] {
        let collapsed = Constraint::Length(COLLAPSED_H);
        match self.panes.focus {
            Focus::Signature => [collapsed, Constraint::Fill(1), collapsed],
            Focus::Request => [Constraint::Fill(1), collapsed, collapsed],
            _ => {
                let has_response = !matches!(self.response_pane.state, ResponseState::Empty);
                let want = self.request_line_count(right.width.saturating_sub(4)) as u16 + 2;
                let min_response = if has_response {
                    PRESENTER_RESPONSE_MIN
                } else {
                    4
                };
                let room = right
                    .height
                    .saturating_sub(COLLAPSED_H + min_response)
                    .min(want);
                if room >= 5 {
                    [Constraint::Length(room), collapsed, Constraint::Fill(1)]
                } else {
                    [collapsed, collapsed, Constraint::Fill(1)]
                }
            }
        }
    }

    fn request_line_count(&self, width: u16) -> usize {
        match &self.request.preview {
            Preview::Ready { request, .. } => {
                request_lines(request, width as usize, &self.theme, &self.screen_mask()).len()
            }
            _ => 4,
        }
    }

    pub(crate) fn pane(&self, title: impl Into<String>, focus: Option<Focus>) -> Block<'static> {
        self.theme
            .pane_block(title, focus == Some(self.shown_focus()))
    }

    fn draw_status(&self, frame: &mut Frame, area: Rect) {
        let t = &self.theme;
        let s = &self.status;
        let sep = Span::styled("   ", t.status_bar);
        let label = |l: &str| Span::styled(format!(" {l} "), t.status_label);
        let val = |v: String| Span::styled(v, t.status_bar.add_modifier(Modifier::BOLD));
        let target = if s.embedded {
            format!("{} (embedded sandbox)", s.base_url)
        } else {
            s.base_url.clone()
        };
        let mut line1 = Vec::new();
        if let Some(addr) = &s.room {
            line1.push(Span::styled(
                // Short, so that the profile and target still fit at a projector's 100
                // columns; the README says what is reachable (sandbox and callback).
                format!(" ROOM MODE: reachable from the network on {addr} "),
                t.status_attention
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED),
            ));
            line1.push(sep.clone());
        }
        // The screen tabs are never cut: the names are shortened first, then the target
        // loses its "(embedded sandbox)", then the names go (the shown one stays named).
        let width = area.width as usize;
        let used = |v: &[Span]| v.iter().map(|s| s.content.chars().count()).sum::<usize>();
        let targets = [
            target.clone(),
            if s.embedded {
                format!("{} (embedded)", s.base_url)
            } else {
                target.clone()
            },
            s.base_url.clone(),
        ];
        let mut chosen = None;
        'fit: for names in [true, false] {
            for target in &targets {
                let mut l = line1.clone();
                l.extend([
                    label("Profile"),
                    val(s.profile.clone()),
                    sep.clone(),
                    label("Target"),
                    val(target.clone()),
                    sep.clone(),
                ]);
                let room = width.saturating_sub(used(&l));
                let tabs = tab_spans(self.screen, room, t.status_label, t.status_bar);
                let named = tabs.iter().all(|s| s.content.trim().len() > 1);
                if used(&tabs) <= room && (named || !names) {
                    l.extend(tabs);
                    chosen = Some(l);
                    break 'fit;
                }
            }
        }
        let line1 = Line::from(chosen.unwrap_or_else(|| {
            let mut l = line1;
            l.extend([
                label("Profile"),
                val(s.profile.clone()),
                sep.clone(),
                label("Target"),
                val(target),
                sep.clone(),
            ]);
            l.extend(tab_spans(self.screen, 0, t.status_label, t.status_bar));
            l
        }));
        let mask = self.screen_mask();
        let psu = match &s.psu_id {
            Some(p) => val(mask.personal(p).into_owned()),
            None => Span::styled("no PSU yet", t.status_attention),
        };
        let mut l2 = vec![label("PSU-ID"), psu];
        if let Some(c) = &s.psu_corporate_id {
            l2.push(sep.clone());
            l2.push(label("PSU-Corporate-ID"));
            l2.push(val(mask.personal(c).into_owned()));
        }
        l2.push(sep.clone());
        l2.push(label("Context"));
        l2.push(val(s.context.clone().unwrap_or_else(|| "–".into())));
        l2.push(sep);
        l2.push(label("TPP-Redirect-URI"));
        l2.push(val(mask.text(&s.redirect_uri).into_owned()));
        let (line1, l2) = if self.presenter.on {
            // Projectors are narrow: what does not fit whole is left out, not cut.
            let w = area.width as usize;
            (
                Line::from(whole_spans(line1.spans, w, t.status_label)),
                whole_spans(l2, w, t.status_label),
            )
        } else {
            (line1, l2)
        };
        frame.render_widget(
            Paragraph::new(vec![line1, Line::from(l2)]).style(t.status_bar),
            area,
        );
    }

    fn draw_operations(&self, frame: &mut Frame, area: Rect) {
        let t = &self.theme;
        let block = self.pane("Operations", Some(Focus::Operations));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let width = inner.width as usize;
        let mut lines = Vec::new();
        let mut selected_row = 0;
        let mut last_group = None;
        let mw = self
            .form
            .ops
            .iter()
            .map(|o| o.method.len())
            .max()
            .unwrap_or(3);
        let finder = self.operation_finder();
        if let Some(f) = finder {
            lines.push(Line::from(vec![
                Span::styled("/ ", t.key),
                Span::styled(format!("{}▏", f.query), t.selected),
            ]));
            lines.push(Line::from(Span::styled(
                format!("{} of {} operations", f.matches.len(), self.form.ops.len()),
                t.dim,
            )));
        }
        for (i, op) in self.form.ops.iter().enumerate() {
            if finder.is_some_and(|f| !f.matches.contains(&i)) {
                continue;
            }
            if last_group != Some(op.group) {
                last_group = Some(op.group);
                lines.push(Line::from(Span::styled(group_title(op.group), t.group)));
            }
            let text = format!("  {:<mw$} {}", op.method, op.title);
            if i == self.form.selected {
                selected_row = lines.len();
                let style = if self.panes.focus == Focus::Operations {
                    t.selected
                } else {
                    t.selected_unfocused
                };
                lines.push(Line::from(Span::styled(
                    pad(&format!("▸{}", &text[1..]), width),
                    style,
                )));
            } else {
                lines.push(Line::from(vec![
                    Span::raw("  "),
                    Span::styled(format!("{:<mw$}", op.method), t.method(op.method)),
                    Span::raw(format!(" {}", op.title)),
                ]));
            }
        }
        let h = inner.height as usize;
        let skip = (selected_row + 1).saturating_sub(h);
        self.panes.hit.set_ops_top(skip);
        let mut visible: Vec<Line> = lines.into_iter().skip(skip).take(h).collect();
        if finder.is_some() && skip > 0 {
            // Keep the query line in view however far the matches scroll.
            visible.remove(0);
            visible.insert(
                0,
                Line::from(vec![
                    Span::styled("/ ", t.key),
                    Span::styled(
                        format!("{}▏", finder.map(|f| f.query.as_str()).unwrap_or("")),
                        t.selected,
                    ),
                ]),
            );
        }
        frame.render_widget(Paragraph::new(visible), inner);
    }

    fn draw_guide(&self, frame: &mut Frame, area: Rect) {
        let t = &self.theme;
        let block = self.pane("Next step", None);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let k = |scope, cmd| self.keymap.key_for(scope, cmd);
        let send = k(Scope::Normal, Command::Send);
        let steps: Vec<String> = match &self.response_pane.state {
            _ if self.request.sending => vec!["Waiting for the answer …".into()],
            _ if self.sca.outcome.is_some() => vec![
                format!("{}.", self.sca.outcome.as_deref().unwrap_or_default()),
                format!(
                    "{} is selected with its id: press {send} to read the status again.",
                    self.selected_operation().title
                ),
            ],
            _ if self.sca.done => {
                // "again" only for the operation whose answer asked for the SCA.
                let title = self.selected_operation().title;
                let again = match &self.response_pane.state {
                    ResponseState::Done(v) if v.operation == title => " again",
                    _ => "",
                };
                vec![format!(
                    "SCA complete. Press {send} to send {title}{again}: the request now carries the PSU-ID."
                )]
            }
            ResponseState::Done(v) if v.sca_redirect.is_some() => vec![
                format!(
                    "1. Press {} (or open the URL yourself) and complete SCA in the browser.",
                    k(Scope::ScaPrompt, Command::OpenSca)
                ),
                "2. The bank sends the browser back to the TPP-Redirect-URI; the console picks the result up by itself.".into(),
                match self.sca_subject_text() {
                    Some(what) => format!(
                        "3. Then the console reads the status of {what} by itself (the initiation is not sent again)."
                    ),
                    None => format!("3. Then press {send} to send the request again."),
                },
            ],
            ResponseState::Done(v) => {
                let mut v2 = vec![format!(
                    "{} {}. {} moves the focus to the response; {} / {} scroll it.",
                    v.status_text(),
                    if v.status < 300 { "received" } else { "returned" },
                    k(Scope::Normal, Command::NextFocus),
                    k(Scope::Normal, Command::PageUp),
                    k(Scope::Normal, Command::PageDown),
                )];
                if v.first_account_id.is_some() {
                    let per_account: Vec<&str> = self
                        .form
                        .ops
                        .iter()
                        .filter(|o| o.params.iter().any(|p| p.name == "account-id"))
                        .map(|o| o.title)
                        .collect();
                    v2.push(format!(
                        "{} now have an account-id: select one and send it.",
                        per_account.join(" and ")
                    ));
                }
                v2
            }
            _ => vec![
                format!("Select an operation with ↑/↓ and press {send} to sign and send it."),
                format!(
                    "{} edits its parameters; the request pane shows exactly what will be sent.",
                    k(Scope::Normal, Command::EditParams)
                ),
            ],
        };
        let mask = self.screen_mask();
        let lines: Vec<Line> = steps
            .into_iter()
            .map(|s| Line::from(Span::styled(mask.text(&s).into_owned(), t.dim)))
            .collect();
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
    }

    fn draw_params(&self, frame: &mut Frame, area: Rect) {
        let t = &self.theme;
        let op = self.selected_operation();
        // After an imported request or a history exchange was sent, the request pane shows
        // that one: the title says the form is not what was sent.
        let title = match &self.request.sent_instead {
            Some(_) => format!("Parameters (not sent) · {}", op.title),
            None => format!("Parameters · {}", op.title),
        };
        let block = self.pane(title, Some(Focus::Params));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let fields = fields_of(op);
        if fields.is_empty() {
            let send = self.keymap.key_for(Scope::Normal, Command::Send);
            frame.render_widget(
                Paragraph::new(Line::from(Span::styled(
                    format!("No parameters: press {send} to send."),
                    t.dim,
                )))
                .wrap(Wrap { trim: false }),
                inner,
            );
            return;
        }
        let name_w = fields
            .iter()
            .map(|f| f.name.len() + 1)
            .max()
            .unwrap_or(0)
            .min((inner.width as usize / 2).max(4));
        let avail = (inner.width as usize).saturating_sub(name_w + 3).max(1);
        let focused = self.panes.focus == Focus::Params;
        let editing = self.form.mode == Mode::Insert;
        let problems = self.problems();
        let mask = self.screen_mask();
        // Every line of the form with the field it belongs to: the field's own line, a
        // "Headers" heading, and the red problem lines under a field.
        let mut rows: Vec<(Option<usize>, Line)> = Vec::new();
        let mut cur_line = 0;
        let mut cursor_x = None;
        let mut headers_seen = false;
        for (i, f) in fields.iter().enumerate() {
            if f.is_header && !headers_seen {
                headers_seen = true;
                rows.push((None, Line::from(Span::styled(" Headers", t.group))));
            }
            let value = &self.form.values[self.form.selected][i];
            let is_cur = focused && i == self.form.field;
            let mark = if f.required { "*" } else { "" };
            let label = ellipsize(&format!("{}{mark}", f.name), name_w);
            let name = format!(" {label:<name_w$}");
            let name_style = if is_cur && !editing {
                t.selected
            } else if is_cur {
                t.key
            } else {
                t.header_name
            };
            let mut spans = vec![Span::styled(name, name_style), Span::raw("  ")];
            if is_cur {
                cur_line = rows.len();
            }
            if is_cur && editing {
                let (shown, start) = window(value, self.form.cursor, avail);
                spans.push(Span::styled(pad(&shown, avail), t.input_active));
                cursor_x = Some(name_w + 3 + self.form.cursor - start);
            } else if value.is_empty() {
                let ph = if !f.default.is_empty() {
                    format!("(default: {})", f.default)
                } else if f.auto {
                    "(auto)".to_string()
                } else if f.is_body {
                    "(template; Enter edits)".to_string()
                } else if f.required {
                    "(required)".to_string()
                } else {
                    "(optional)".to_string()
                };
                let style = if f.required && !f.auto {
                    t.warning
                } else {
                    t.dim
                };
                spans.push(Span::styled(ph, style));
            } else {
                let shown = mask.header(f.name, value);
                spans.push(Span::styled(ellipsize(&shown, avail), t.input));
            }
            rows.push((Some(i), Line::from(spans)));
            let width = (inner.width as usize).saturating_sub(4).max(1);
            for p in problems.iter().filter(|p| {
                if f.is_body {
                    p.is_body()
                } else {
                    p.field.eq_ignore_ascii_case(f.name)
                }
            }) {
                let text = if f.is_body {
                    format!("↳ {p}")
                } else {
                    format!("↳ {}", p.reason)
                };
                for (k, part) in wrap_words(&text, width.saturating_sub(2))
                    .into_iter()
                    .enumerate()
                {
                    let indent = if k == 0 { "   " } else { "     " };
                    rows.push((
                        Some(i),
                        Line::from(Span::styled(format!("{indent}{part}"), t.error)),
                    ));
                }
            }
        }
        let height = (inner.height as usize).saturating_sub(1).max(1);
        // Keep the current field's line and its problems in view.
        let cur_end = rows[cur_line..]
            .iter()
            .take_while(|(fi, _)| *fi == rows[cur_line].0)
            .count()
            + cur_line;
        let mut skip = cur_end.saturating_sub(height);
        if skip > cur_line {
            skip = cur_line;
        }
        if let Some(x) = cursor_x {
            let y = inner.y + (cur_line - skip) as u16;
            let x = inner.x + x as u16;
            frame.set_cursor_position(Position::new(x.min(inner.right().saturating_sub(1)), y));
        }
        let mut lines: Vec<Line> = rows
            .into_iter()
            .skip(skip)
            .take(height)
            .map(|(_, l)| l)
            .collect();
        let help_field = fields[self.form.field.min(fields.len() - 1)];
        let help = if editing {
            format!("{}: {}", help_field.name, help_field.help)
        } else {
            format!(
                "{}: {}   ({} edits)",
                help_field.name,
                help_field.help,
                self.keymap.key_for(Scope::Normal, Command::EditParams)
            )
        };
        lines.push(Line::from(Span::styled(format!(" {help}"), t.dim)));
        frame.render_widget(Paragraph::new(lines), inner);
    }

    fn draw_request(&self, frame: &mut Frame, area: Rect) {
        let title = match &self.request.preview {
            Preview::Ready { sent: true, .. } => "Request · as sent",
            Preview::Ready { sent: false, .. } => {
                "Request · preview (Date, X-Request-ID renewed on send)"
            }
            _ => "Request",
        };
        if area.height <= COLLAPSED_H {
            self.draw_collapsed(frame, area, title);
            return;
        }
        let block = self.pane(title, Some(Focus::Request));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let w = inner.width as usize;
        let lines = match &self.request.preview {
            Preview::Ready { request, .. } => {
                request_lines(request, w, &self.theme, &self.screen_mask())
            }
            Preview::Error(e) => {
                let mut v = vec![Line::from(Span::styled(
                    "The request cannot be built yet:",
                    self.theme.warning,
                ))];
                v.extend(wrap_chars(e, w).into_iter().map(Line::from));
                v.push(Line::default());
                v.push(Line::from(Span::styled(
                    format!(
                        "Press {} to fill in the parameters.",
                        self.keymap.key_for(Scope::Normal, Command::EditParams)
                    ),
                    self.theme.dim,
                )));
                v
            }
            Preview::None => vec![Line::from(Span::styled("Preparing …", self.theme.dim))],
        };
        self.render_scrolled(frame, inner, 0, lines);
    }

    fn draw_signature(&self, frame: &mut Frame, area: Rect) {
        if area.height <= COLLAPSED_H {
            self.draw_collapsed(frame, area, "Signature inspector");
            return;
        }
        let block = self.pane("Signature inspector", Some(Focus::Signature));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let lines = match &self.request.preview {
            Preview::Ready { request, .. } => signature_lines(
                request,
                inner.width as usize,
                &self.theme,
                &self.screen_mask(),
            ),
            _ => vec![Line::from(Span::styled(
                "Nothing signed yet.",
                self.theme.dim,
            ))],
        };
        self.render_scrolled(frame, inner, 1, lines);
    }

    /// Renders `lines` scrolled by the pane's offset and records the sizes for the keys.
    fn render_scrolled(&self, frame: &mut Frame, inner: Rect, slot: usize, lines: Vec<Line>) {
        let h = inner.height as usize;
        self.panes.viewport[slot].set(h);
        self.panes.content[slot].set(lines.len());
        let top = self.panes.scroll[slot].min(lines.len().saturating_sub(h));
        let visible: Vec<Line> = lines.into_iter().skip(top).take(h).collect();
        frame.render_widget(Paragraph::new(visible), inner);
    }

    fn draw_footer(&self, frame: &mut Frame, area: Rect) {
        let t = &self.theme;
        let [msg_area, hint_area] =
            Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area);
        if let Some(m) = self.messages.message() {
            let style = match m.level {
                Level::Info => t.info,
                Level::Success => t.success,
                Level::Warning => t.warning,
                Level::Error => t.error,
            };
            frame.render_widget(
                Paragraph::new(Line::from(Span::styled(
                    format!(" {}", self.screen_mask().text(&m.text)),
                    style,
                ))),
                msg_area,
            );
        }
        let (badge, scopes): (&str, &[Scope]) = if self.body_editor_open() {
            (" BODY ", &[Scope::BodyEditor, Scope::Always])
        } else if self.form.mode == Mode::Insert {
            (" INSERT ", &[Scope::Insert, Scope::Always])
        } else {
            match self.screen {
                Screen::Console => (" NORMAL ", &[Scope::Normal, Scope::NotInsert]),
                Screen::Profiles => (" PROFILES ", self.screens.profiles.hint_scopes()),
                Screen::History => (" HISTORY ", &[Scope::HistoryScreen, Scope::NotInsert]),
                Screen::Flow => (" FLOW ", &[Scope::FlowScreen, Scope::NotInsert]),
                Screen::Monitor => (" MONITOR ", &[Scope::MonitorScreen, Scope::NotInsert]),
            }
        };
        let badge_style = if self.form.mode == Mode::Insert {
            t.mode_badge
        } else {
            t.status_label
        };
        let mut hints = self.keymap.hints(scopes);
        if self.form.mode == Mode::Insert {
            let quit = self.keymap.key_for(Scope::Always, Command::ForceQuit);
            hints.push((quit, "quit"));
        }
        let badge = vec![Span::styled(badge, badge_style), Span::raw(" ")];
        let spans = footer_spans(badge, hints, hint_area.width as usize, t);
        frame.render_widget(Paragraph::new(Line::from(spans)), hint_area);
    }

    /// The text of the SCA prompt wrapped to `inner_w`: the full wording, or in presenter
    /// mode a compact one that leads with the operation and its status (the room reads it
    /// beside the QR code). The URL is masked for PSU data only (the QR code keeps it
    /// whole, so the link still works).
    fn sca_prompt_lines(&self, p: &super::app::ScaPrompt, inner_w: usize) -> Vec<Line<'static>> {
        let t = &self.theme;
        let mask = self.screen_mask();
        let compact = self.presenter.on;
        let url = mask.text(&p.url);
        let url_lines = wrap_soft(&url, inner_w, &['&', '?', '/']);
        let open_key = self.keymap.key_for(Scope::ScaPrompt, Command::OpenSca);
        let close_key = self.keymap.key_for(Scope::ScaPrompt, Command::Dismiss);
        let mut lines = Vec::new();
        if compact {
            if let ResponseState::Done(v) = &self.response_pane.state {
                for l in wrap_words(&format!("{}: {}", v.operation, v.status_text()), inner_w) {
                    lines.push(Line::from(Span::styled(l, t.http_status(v.status))));
                }
            }
            for l in wrap_words(
                "The bank asks the PSU to authenticate (SCA). Scan the code or open:",
                inner_w,
            ) {
                lines.push(Line::from(l));
            }
        } else {
            // Wrapped here, not by the paragraph: the box is as tall as these lines, and a
            // line the paragraph wraps pushed the last one (the QR code's size note) out.
            for l in wrap_words(
                "The bank asks the PSU to authenticate (scaRedirect). Open this URL in a browser:",
                inner_w,
            ) {
                lines.push(Line::from(l));
            }
        }
        lines.push(Line::default());
        lines.extend(
            url_lines
                .into_iter()
                .map(|l| Line::from(Span::styled(l, t.url))),
        );
        lines.push(Line::default());
        if compact {
            lines.push(Line::from(vec![
                Span::styled(open_key, t.key),
                Span::raw("  open it in the browser"),
            ]));
            lines.push(Line::from(vec![
                Span::styled(close_key, t.key),
                Span::raw("  close this prompt"),
            ]));
        } else {
            lines.push(Line::from(vec![
                Span::styled(open_key, t.key),
                Span::raw("  open it in the browser        "),
                Span::styled(close_key, t.key),
                Span::raw("  close this prompt"),
            ]));
        }
        lines.push(Line::default());
        match &p.browser {
            Some(Ok(())) => lines.push(Line::from(Span::styled(
                "Browser opened. Complete SCA there.",
                t.success,
            ))),
            Some(Err(e)) => lines.push(Line::from(Span::styled(
                format!("The browser could not be opened: {e}. Copy the URL instead."),
                t.error,
            ))),
            None => {}
        }
        let waiting = format!(
            "After SCA the bank redirects the browser to {}; the console picks the result up by itself{}.",
            mask.text(&self.status.redirect_uri),
            self.sca_subject_text()
                .map(|w| format!(" and reads the status of {w}"))
                .unwrap_or_default()
        );
        for l in wrap_words(&waiting, inner_w) {
            lines.push(Line::from(Span::styled(l, t.dim)));
        }
        if !compact {
            for l in wrap_words(
                "No browser on this machine (ssh)? Open the URL where that redirect address reaches this console.",
                inner_w,
            ) {
                lines.push(Line::from(Span::styled(l, t.dim)));
            }
        }
        lines
    }

    fn draw_sca_prompt(&self, frame: &mut Frame, area: Rect) {
        let Some(p) = self.sca_prompt() else {
            return;
        };
        let t = &self.theme;
        let mut w = area.width.saturating_sub(4).min(100);
        let mut lines = self.sca_prompt_lines(p, w.saturating_sub(4) as usize);
        // The scaRedirect as a QR code for a phone in the room (issue 12): below the text
        // when the terminal is tall enough, else beside it when wide enough, else a note
        // with the size it needs (a cut code cannot be scanned). Presenter mode tries
        // beside first, the text narrowed to what the code leaves, and covers the whole
        // screen if need be: at 80×24 a sandbox link's code fits beside the text.
        let qr = p.qr.as_ref();
        let mut text_h = lines.len() as u16;
        let mut placement = qr.as_ref().map(|q| {
            if text_h + q.height() + 3 <= area.height && q.width() + 4 <= area.width {
                QrPlacement::Below
            } else if w + q.width() + 3 <= area.width && q.height() + 2 <= area.height {
                QrPlacement::Beside
            } else {
                QrPlacement::TooSmall
            }
        });
        if self.presenter.on
            && let Some(q) = qr
            && placement != Some(QrPlacement::Below)
        {
            let beside_w = area.width.saturating_sub(q.width() + 3);
            let beside = self.sca_prompt_lines(p, beside_w.saturating_sub(4) as usize);
            if beside_w >= MIN_PROMPT_TEXT_W
                && q.height() + 2 <= area.height
                && beside.len() as u16 + 2 <= area.height
            {
                w = beside_w;
                lines = beside;
                text_h = lines.len() as u16;
                placement = Some(QrPlacement::Beside);
            }
        }
        if let (Some(q), Some(QrPlacement::TooSmall)) = (qr, placement) {
            lines.push(Line::from(Span::styled(
                format!(
                    "A QR code of this link needs a terminal of {}×{} or more.",
                    q.width() + 4,
                    text_h + q.height() + 3
                ),
                t.dim,
            )));
        }
        let (box_w, box_h) = match (qr, placement) {
            (Some(q), Some(QrPlacement::Below)) => {
                (w.max(q.width() + 4), lines.len() as u16 + q.height() + 3)
            }
            (Some(q), Some(QrPlacement::Beside)) => {
                (w + q.width() + 3, (lines.len() as u16).max(q.height()) + 2)
            }
            _ => (w, lines.len() as u16 + 2),
        };
        let r = centered(area, box_w.min(area.width), box_h.min(area.height));
        frame.render_widget(Clear, r);
        let block = t.modal_block(" Strong customer authentication ");
        let inner = block.inner(r);
        frame.render_widget(block, r);
        let text_area = match placement {
            Some(QrPlacement::Beside) => Rect {
                width: w.saturating_sub(2),
                ..inner
            },
            _ => inner,
        };
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), text_area);
        if let Some(q) = qr {
            let at = match placement {
                Some(QrPlacement::Below) => Some(Rect {
                    x: inner.x + (inner.width.saturating_sub(q.width())) / 2,
                    y: inner.y + text_h + 1,
                    width: q.width(),
                    height: q.height(),
                }),
                Some(QrPlacement::Beside) => Some(Rect {
                    x: inner.x + w.saturating_sub(1),
                    y: inner.y,
                    width: q.width(),
                    height: q.height(),
                }),
                _ => None,
            };
            if let Some(at) = at {
                frame.render_widget(q, at.intersection(inner));
            }
        }
    }

    /// Presenter mode's step line: where the flow stands, in words, over the whole width
    /// ([`App::presenter_step`]), masked like everything else.
    fn draw_step(&self, frame: &mut Frame, area: Rect) {
        let t = &self.theme;
        let text = self.screen_mask().text(&self.presenter_step()).into_owned();
        let lines: Vec<Line> = wrap_words(&text, area.width.saturating_sub(2) as usize)
            .into_iter()
            .map(|l| {
                Line::from(Span::styled(
                    pad(&format!(" {l}"), area.width as usize),
                    t.selected,
                ))
            })
            .collect();
        frame.render_widget(Paragraph::new(lines).style(t.selected), area);
    }

    /// Rows the step line takes at width `width`: one, two when the words need it.
    fn step_height(&self, width: u16) -> u16 {
        let text = self.screen_mask().text(&self.presenter_step()).into_owned();
        (wrap_words(&text, width.saturating_sub(2) as usize).len() as u16).clamp(1, 2)
    }

    /// A pane collapsed to its title line (presenter mode): `Tab` gives it the room.
    pub(crate) fn draw_collapsed(&self, frame: &mut Frame, area: Rect, title: &str) {
        let key = self.keymap.key_for(Scope::Normal, Command::NextFocus);
        frame.render_widget(self.theme.collapsed_block(title, &key), area);
    }

    fn draw_picker(&self, frame: &mut Frame, area: Rect, sel: usize) {
        let t = &self.theme;
        let w = area.width.saturating_sub(4).min(80);
        let mut lines = Vec::new();
        for (i, name) in self.profiles.names.iter().enumerate() {
            let active = *name == self.status.profile;
            let text = format!(
                "{} {}{}",
                if i == sel { "▸" } else { " " },
                name,
                if active { "  (active)" } else { "" }
            );
            let style = if i == sel { t.selected } else { t.base };
            lines.push(Line::from(Span::styled(
                pad(&text, w.saturating_sub(4) as usize),
                style,
            )));
        }
        if !self.profiles.errors.is_empty() {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled("Not loaded:", t.warning)));
            for e in &self.profiles.errors {
                for l in wrap_chars(e, w.saturating_sub(4) as usize) {
                    lines.push(Line::from(Span::styled(l, t.error)));
                }
            }
        }
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled(self.keymap.key_for(Scope::Picker, Command::Choose), t.key),
            Span::styled(" switch   ", t.dim),
            Span::styled(self.keymap.key_for(Scope::Picker, Command::Dismiss), t.key),
            Span::styled(" close", t.dim),
        ]));
        let h = (lines.len() as u16 + 2).min(area.height);
        let r = centered(area, w, h);
        frame.render_widget(Clear, r);
        let block = t.modal_block(" Profiles ");
        frame.render_widget(Paragraph::new(lines).block(block), r);
    }
}

/// The part of `s` shown in a field `w` wide so that the cursor is visible, and the index
/// of its first character.
fn window(s: &str, cursor: usize, w: usize) -> (String, usize) {
    let start = (cursor + 1).saturating_sub(w);
    (s.chars().skip(start).take(w).collect(), start)
}

/// The spans of a status-bar line that fit `width` whole: the first that does not fit and
/// all after it are left out, with the label (style `label`) whose value was left out and
/// the separators left dangling at the end.
fn whole_spans(spans: Vec<Span<'static>>, width: usize, label: Style) -> Vec<Span<'static>> {
    let mut used = 0;
    let mut kept = Vec::new();
    let mut rest = spans.into_iter();
    let mut dropped = None;
    for s in rest.by_ref() {
        let n = s.content.chars().count();
        if used + n > width {
            dropped = Some(s);
            break;
        }
        used += n;
        kept.push(s);
    }
    if dropped.is_some_and(|d| !d.content.trim().is_empty())
        && kept.last().is_some_and(|l: &Span| l.style == label)
    {
        kept.pop();
    }
    while kept.last().is_some_and(|l| l.content.trim().is_empty()) {
        kept.pop();
    }
    kept
}

/// The key hints of the footer after `badge`, each key with its name: as many as fit
/// `width` whole (never a key without its name, never half a name), and the help key's
/// hint (`? help`, the way to every other key) always, in place of the last ones that fit.
fn footer_spans(
    badge: Vec<Span<'static>>,
    hints: Vec<(String, &'static str)>,
    width: usize,
    t: &Theme,
) -> Vec<Span<'static>> {
    let pair = |k: &str, label: &str| {
        [
            Span::styled(format!(" {k}"), t.key),
            Span::styled(format!(" {label} "), t.dim),
        ]
    };
    let len = |spans: &[Span]| {
        spans
            .iter()
            .map(|s| s.content.chars().count())
            .sum::<usize>()
    };
    let (help, rest): (Vec<_>, Vec<_>) = hints.into_iter().partition(|(_, l)| *l == "help");
    let tail: Vec<Span> = help.iter().flat_map(|(k, l)| pair(k, l)).collect();
    let mut spans = badge;
    let room = width.saturating_sub(len(&tail));
    // The last name's trailing space may fall off the edge.
    let slack = usize::from(tail.is_empty());
    for (k, l) in rest {
        let p = pair(&k, l);
        if len(&spans) + len(&p) > room + slack {
            break;
        }
        spans.extend(p);
    }
    if len(&spans) + len(&tail) <= width + 1 {
        spans.extend(tail);
    }
    spans
}

/// The screen tabs of the status bar (`1 Console` … `5 Flow`, the shown one in `active`
/// style, the others in `plain`), in `width` columns or fewer: the names in full when they
/// fit, else the shown screen's name and the others' numbers with their first three letters
/// (`2 Pro`), else the numbers only (the shown one still named).
fn tab_spans(shown: Screen, width: usize, active: Style, plain: Style) -> Vec<Span<'static>> {
    const TABS: [(char, &str, Screen); 5] = [
        ('1', "Console", Screen::Console),
        ('2', "Profiles", Screen::Profiles),
        ('3', "History", Screen::History),
        ('4', "Monitor", Screen::Monitor),
        ('5', "Flow", Screen::Flow),
    ];
    let build = |short: Option<usize>| -> Vec<Span<'static>> {
        TABS.iter()
            .map(|(n, name, screen)| {
                let style = if *screen == shown { active } else { plain };
                let name: String = match short {
                    Some(k) if *screen != shown => name.chars().take(k).collect(),
                    _ => (*name).to_string(),
                };
                let text = if name.is_empty() {
                    format!(" {n} ")
                } else {
                    format!(" {n} {name} ")
                };
                Span::styled(text, style)
            })
            .collect()
    };
    let width_of = |v: &[Span]| v.iter().map(|s| s.content.chars().count()).sum::<usize>();
    for short in [None, Some(3), Some(0)] {
        let v = build(short);
        if width_of(&v) <= width {
            return v;
        }
    }
    build(Some(0))
}

/// `s` cut into pieces of `w` characters (URLs and base64 have no spaces to wrap at).
fn wrap_chars(s: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(w).map(|c| c.iter().collect()).collect()
}

/// `s` cut into lines of at most `w` characters, preferably just after one of `breaks`
/// (in the second half of a line), else exactly at `w`.
fn wrap_soft(s: &str, w: usize, breaks: &[char]) -> Vec<String> {
    let w = w.max(1);
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    while chars.len() - start > w {
        let end = start + w;
        let cut = (start + w / 2..end)
            .rev()
            .find(|&i| breaks.contains(&chars[i]))
            .map(|i| i + 1)
            .unwrap_or(end);
        out.push(chars[start..cut].iter().collect());
        start = cut;
    }
    out.push(chars[start..].iter().collect());
    out
}

/// Where the signature inspector prefers to wrap (not inside base64).
const SOFT_BREAKS: [char; 2] = [' ', ','];

/// A `label value` line with the value wrapped under itself.
fn labelled(label: &str, value: &str, w: usize, t: &Theme) -> Vec<Line<'static>> {
    const LW: usize = 11;
    let vw = w.saturating_sub(LW).max(8);
    wrap_soft(value, vw, &SOFT_BREAKS)
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let lab = if i == 0 {
                format!("{label:<LW$}")
            } else {
                " ".repeat(LW)
            };
            Line::from(vec![Span::styled(lab, t.header_name), Span::raw(chunk)])
        })
        .collect()
}

fn request_lines(
    req: &PreparedRequest,
    w: usize,
    t: &Theme,
    mask: &ScreenMask,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let first = format!("{} {}", req.method, mask.text(&req.url));
    for (i, chunk) in wrap_chars(&first, w).into_iter().enumerate() {
        if i == 0 && chunk.len() >= req.method.len() {
            let (m, rest) = chunk.split_at(req.method.len());
            lines.push(Line::from(vec![
                Span::styled(
                    m.to_string(),
                    t.method(&req.method).add_modifier(Modifier::BOLD),
                ),
                Span::styled(rest.to_string(), t.base.add_modifier(Modifier::BOLD)),
            ]));
        } else {
            lines.push(Line::from(Span::styled(
                chunk,
                t.base.add_modifier(Modifier::BOLD),
            )));
        }
    }
    lines.push(Line::default());
    for (name, value) in &req.headers {
        let value = mask.header(name, value);
        let head = format!("{name}: ");
        let room = w.saturating_sub(head.chars().count());
        let n = value.chars().count();
        let shown = if n <= room {
            value.into_owned()
        } else {
            let note = format!("… ({n} chars)");
            let keep = room.saturating_sub(note.chars().count());
            format!("{}{note}", value.chars().take(keep).collect::<String>())
        };
        lines.push(Line::from(vec![
            Span::styled(head, t.header_name),
            Span::raw(shown),
        ]));
    }
    lines.push(Line::default());
    if req.body.is_empty() {
        lines.push(Line::from(Span::styled("(no body)", t.dim)));
    } else {
        lines.push(Line::from(Span::styled(
            format!("Body ({} bytes, compact on the wire):", req.body.len()),
            t.dim,
        )));
        // The pane is rebuilt every frame: a large body shows its first PANE_BODY_LIMIT
        // bytes as text (a 1 MiB body pretty-printed per frame made every key slow).
        let text = if req.body.len() <= PANE_BODY_LIMIT {
            super::response::pretty_json(&req.body)
                .unwrap_or_else(|| String::from_utf8_lossy(&req.body).into_owned())
        } else {
            String::from_utf8_lossy(&req.body[..PANE_BODY_LIMIT]).into_owned()
        };
        for l in text.lines() {
            let l = mask.text(l);
            let cut = l.char_indices().nth(w).map_or(&*l, |(i, _)| &l[..i]);
            lines.push(Line::from(json_spans(cut, 0, w, t)));
        }
        if req.body.len() > PANE_BODY_LIMIT {
            lines.push(Line::from(Span::styled(
                format!(
                    "… {} more bytes not shown here (the editor has the whole body)",
                    req.body.len() - PANE_BODY_LIMIT
                ),
                t.dim,
            )));
        }
    }
    lines
}

/// Bytes of a request body the request pane shows (64 KiB).
const PANE_BODY_LIMIT: usize = 64 << 10;

fn signature_lines(
    req: &PreparedRequest,
    w: usize,
    t: &Theme,
    mask: &ScreenMask,
) -> Vec<Line<'static>> {
    let ins = &req.inspection;
    let mut lines = Vec::new();
    lines.extend(labelled("keyId", &mask.text(&ins.key_id), w, t));
    lines.extend(labelled("algorithm", crate::signing::ALGORITHM, w, t));
    lines.extend(labelled("headers", &ins.signed_headers.join(" "), w, t));
    match &ins.digest {
        Some(d) => lines.extend(labelled("Digest", d, w, t)),
        None => lines.push(Line::from(vec![
            Span::styled(format!("{:<11}", "Digest"), t.header_name),
            Span::styled("none (no body)", t.dim),
        ])),
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "Signing string (signed with the private key):",
        t.group,
    )));
    for l in ins.signing_string.lines() {
        for chunk in wrap_soft(&mask.text(l), w.saturating_sub(2), &SOFT_BREAKS) {
            lines.push(Line::from(format!("  {chunk}")));
        }
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Signature header:", t.group)));
    let signature_header = mask.header(crate::xs2a::headers::SIGNATURE, &ins.signature_header);
    for chunk in wrap_soft(&signature_header, w.saturating_sub(2), &SOFT_BREAKS) {
        lines.push(Line::from(format!("  {chunk}")));
    }
    lines.push(Line::default());
    for l in wrap_words(
        "The private key stays in its file: only the signature and the certificate are sent.",
        w,
    ) {
        lines.push(Line::from(Span::styled(l, t.dim)));
    }
    lines
}

/// Where the SCA prompt draws the QR code of the scaRedirect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QrPlacement {
    /// Under the text (tall terminals).
    Below,
    /// Right of the text (wide, short terminals).
    Beside,
    /// It does not fit: a note says what size it needs.
    TooSmall,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_and_cutting() {
        assert_eq!(wrap_chars("abcdefg", 3), vec!["abc", "def", "g"]);
        assert_eq!(wrap_words("aa bb cc", 5), vec!["aa bb", "cc"]);
        assert_eq!(wrap_soft("ab,cdefgh", 4, &[',']), vec!["ab,", "cdef", "gh"]);
        assert_eq!(
            wrap_soft("a?bcd&efgh", 6, &['&', '?']),
            vec!["a?bcd&", "efgh"]
        );
        assert_eq!(ellipsize("abcdef", 4), "abc…");
        assert_eq!(window("abcdef", 6, 4), ("def".to_string(), 3));
        let t = Theme::dark();
        let spans = json_spans("  \"key\": \"value\",", 0, 80, &t);
        let text: String = spans.iter().map(|s| s.content.to_string()).collect();
        assert_eq!(text, "  \"key\": \"value\",");
        assert_eq!(spans[1].style, t.json_key);
        let cut: String = json_spans("  \"key\": 12", 4, 3, &t)
            .iter()
            .map(|s| s.content.to_string())
            .collect();
        assert_eq!(cut, "ey\"");
    }
}
