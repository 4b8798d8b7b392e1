//! The response pane on the console: its keys (search, jq filter, copy, links, clear) and
//! its drawing, over the response model of [`super::response`].

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::app::{Action, App, Focus, Level, ScaPrompt};
use super::keymap::{Command, Scope};
use super::overlay::{Layer, Overlay};
use super::response::*;
use super::text::pad;
use crate::xs2a::links::names;

impl App {
    fn response_view(&self) -> Option<&ResponseView> {
        match &self.response {
            super::app::ResponseState::Done(v) => Some(v),
            _ => None,
        }
    }

    fn response_view_mut(&mut self) -> Option<&mut ResponseView> {
        match &mut self.response {
            super::app::ResponseState::Done(v) => Some(v),
            _ => None,
        }
    }

    /// The search or filter box, when one is open.
    pub fn response_input(&self) -> Option<&InputBox> {
        self.response_ui.input.as_ref()
    }

    /// The highlighted entry of the link chooser, when it is open.
    pub fn link_chooser(&self) -> Option<usize> {
        self.overlays.link_chooser()
    }

    /// Scrolls the response so that display line `line` is the first visible one (clamped
    /// at the last draw's bottom).
    pub fn scroll_response_to(&mut self, line: usize) {
        let total = self.response_view().map(|v| v.total_lines()).unwrap_or(0);
        let max = total.saturating_sub(self.panes.viewport[2].get().max(1));
        self.panes.scroll[2] = line.min(max);
    }

    /// Keys for the open search or filter box (the [`super::overlay::Layer::Insert`] of the focus chain): they type
    /// text, Enter applies, Esc closes (the filter box also clears the filter). `None`
    /// when no box is open.
    pub(crate) fn response_input_key(&mut self, key: &KeyEvent) -> Option<Action> {
        let input = self.response_ui.input.as_mut()?;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let n = input.text.chars().count();
        match key.code {
            KeyCode::Esc => {
                let kind = input.kind;
                self.response_ui.input = None;
                if kind == InputKind::Filter {
                    self.clear_filter();
                }
            }
            KeyCode::Enter => {
                let input = self.response_ui.input.take()?;
                return Some(match input.kind {
                    InputKind::Search => {
                        self.start_search(&input.text);
                        Action::None
                    }
                    InputKind::Filter => self.start_filter(&input.text),
                });
            }
            KeyCode::Char('u') if ctrl => {
                input.text.clear();
                input.cursor = 0;
            }
            KeyCode::Char(c) if !ctrl && !alt => {
                let at = byte_at(&input.text, input.cursor);
                input.text.insert(at, c);
                input.cursor += 1;
            }
            KeyCode::Backspace if input.cursor > 0 => {
                input.cursor -= 1;
                let at = byte_at(&input.text, input.cursor);
                input.text.remove(at);
            }
            KeyCode::Delete if input.cursor < n => {
                let at = byte_at(&input.text, input.cursor);
                input.text.remove(at);
            }
            KeyCode::Left => input.cursor = input.cursor.saturating_sub(1),
            KeyCode::Right => input.cursor = (input.cursor + 1).min(n),
            KeyCode::Home => input.cursor = 0,
            KeyCode::End => input.cursor = n,
            _ => {}
        }
        Some(Action::None)
    }

    /// Pastes `text` into the open search or filter box (line breaks dropped); false when
    /// no box is open.
    pub fn response_paste(&mut self, text: &str) -> bool {
        let Some(input) = self.response_ui.input.as_mut() else {
            return false;
        };
        for c in text.chars().filter(|c| *c != '\n' && *c != '\r') {
            let at = byte_at(&input.text, input.cursor);
            input.text.insert(at, c);
            input.cursor += 1;
        }
        true
    }

    /// The response viewer's commands (search, filter, copy, follow link, clear).
    pub(crate) fn response_command(&mut self, cmd: Command) -> Action {
        if self.response_view().is_none() {
            self.set_message(Level::Info, "No response yet: send a request first");
            return Action::None;
        }
        match cmd {
            Command::ResponseSearch => self.open_input(InputKind::Search),
            Command::ResponseFilter => {
                if self.response_view().is_some_and(|v| !v.is_json) {
                    self.set_message(Level::Warning, "The body is not JSON: nothing to filter");
                } else {
                    self.open_input(InputKind::Filter)
                }
            }
            Command::SearchNext => self.next_match(1),
            Command::SearchPrev => self.next_match(-1),
            Command::CopyBody => return self.copy_body(),
            Command::FollowLink => return self.follow_link(),
            Command::ClearResponse => {
                let had = self
                    .response_view()
                    .is_some_and(|v| v.filter.is_some() || v.search.is_some());
                self.clear_filter();
                if let Some(v) = self.response_view_mut() {
                    v.search = None;
                }
                if had {
                    self.set_message(Level::Info, "Filter and search cleared");
                }
            }
            _ => {}
        }
        Action::None
    }

    fn open_input(&mut self, kind: InputKind) {
        let text = self
            .response_view()
            .and_then(|v| match kind {
                InputKind::Search => v.search.as_ref().map(|s| s.query.clone()),
                InputKind::Filter => v.filter.as_ref().map(|f| f.expr.clone()),
            })
            .unwrap_or_default();
        let cursor = text.chars().count();
        self.response_ui.input = Some(InputBox { kind, text, cursor });
    }

    fn start_search(&mut self, query: &str) {
        let Some(v) = self.response_view_mut() else {
            return;
        };
        if query.is_empty() {
            v.search = None;
            return;
        }
        v.set_search(query);
        let s = v.search.as_ref().map(|s| (s.count(), s.position_text()));
        match s {
            Some((0, _)) => self.set_message(Level::Warning, format!("No match for {query:?}")),
            Some((_, pos)) => {
                self.jump_to_match();
                self.set_message(
                    Level::Info,
                    format!("Match {pos} for {query:?}; n next, N previous"),
                );
            }
            None => {}
        }
    }

    fn next_match(&mut self, delta: isize) {
        let Some(v) = self.response_view_mut() else {
            return;
        };
        let Some(s) = &v.search else {
            self.set_message(Level::Info, "No search: press / to search the body");
            return;
        };
        if s.count() == 0 {
            let q = s.query.clone();
            self.set_message(Level::Warning, format!("No match for {q:?}"));
            return;
        }
        v.step_match(delta);
        let pos = v
            .search
            .as_ref()
            .map(|s| s.position_text())
            .unwrap_or_default();
        self.jump_to_match();
        self.set_message(Level::Info, format!("Match {pos}"));
    }

    /// Scrolls the current match into view (a third from the top, its column visible).
    fn jump_to_match(&mut self) {
        let Some((line, col)) = self.response_view().and_then(|v| v.current_match_line()) else {
            return;
        };
        let h = self.panes.viewport[2].get().max(1);
        self.scroll_response_to(line.saturating_sub(h / 3));
        let w = self.response_ui.width.get().max(1);
        if col < self.panes.hscroll || col >= self.panes.hscroll + w {
            self.panes.hscroll = col.saturating_sub(w / 4);
        }
    }

    fn start_filter(&mut self, expr: &str) -> Action {
        let expr = expr.trim().to_string();
        if expr.is_empty() {
            self.clear_filter();
            return Action::None;
        }
        let Some(v) = self.response_view_mut() else {
            return Action::None;
        };
        let input = v.body.text.clone();
        v.filter = Some(Box::new(Filtered {
            expr: expr.clone(),
            state: FilterState::Running,
        }));
        v.search = None;
        self.set_message(Level::Info, format!("Filtering with {expr} …"));
        Action::RunFilter(FilterJob { expr, input })
    }

    /// Shows the outcome of a jq filter ([`Action::RunFilter`]); ignored when the response
    /// or the filter changed meanwhile.
    pub fn filter_finished(&mut self, done: FilterDone) {
        let Some(v) = self.response_view_mut() else {
            return;
        };
        let current = matches!(&v.filter, Some(f) if f.expr == done.expr
            && matches!(f.state, FilterState::Running))
            && Arc::ptr_eq(&v.body.text, &done.input);
        if !current {
            return;
        }
        let (state, msg) = match done.result {
            Ok(text) => {
                let b = Body::new(text);
                let n = b.len();
                (
                    FilterState::Done(b),
                    (
                        Level::Success,
                        format!("Filtered: {} ({n} lines)", done.expr),
                    ),
                )
            }
            Err(e) => (
                FilterState::Failed(Body::new(format!("jq filter {}\n{e}", done.expr))),
                (Level::Error, format!("Filter failed: {e}")),
            ),
        };
        v.filter = Some(Box::new(Filtered {
            expr: done.expr,
            state,
        }));
        self.panes.scroll[2] = 0;
        self.panes.hscroll = 0;
        self.set_message(msg.0, msg.1);
    }

    fn clear_filter(&mut self) {
        if let Some(v) = self.response_view_mut()
            && v.filter.take().is_some()
        {
            v.search = None;
            self.panes.scroll[2] = 0;
            self.panes.hscroll = 0;
        }
    }

    fn copy_body(&mut self) -> Action {
        let Some(v) = self.response_view() else {
            return Action::None;
        };
        let text = v.copy_text().to_string();
        let what = if matches!(
            v.filter.as_ref().map(|f| &f.state),
            Some(FilterState::Done(_))
        ) {
            "filter result"
        } else {
            "body"
        };
        if text.is_empty() {
            self.set_message(Level::Info, format!("The {what} is empty: nothing copied"));
            return Action::None;
        }
        self.set_message(
            Level::Success,
            format!(
                "Copied the {what} ({} bytes) to the clipboard (OSC 52)",
                text.len()
            ),
        );
        Action::Copy(text)
    }

    fn follow_link(&mut self) -> Action {
        let n = self.response_view().map(|v| v.links.len()).unwrap_or(0);
        match n {
            0 => {
                self.set_message(Level::Info, "This response has no _links to follow");
                Action::None
            }
            1 => self.follow(0),
            _ => {
                self.overlays.open(Overlay::LinkChooser(0));
                Action::None
            }
        }
    }

    /// Keys of the link chooser (context [`super::keymap::Context::LinkChooser`]).
    pub(crate) fn links_command(&mut self, cmd: Command) -> Option<Action> {
        let i = self.overlays.link_chooser()?;
        let n = self.response_view().map(|v| v.links.len()).unwrap_or(0);
        match cmd {
            Command::Up => self
                .overlays
                .open(Overlay::LinkChooser(i.saturating_sub(1))),
            Command::Down => {
                let i = (i + 1).min(n.saturating_sub(1));
                self.overlays.open(Overlay::LinkChooser(i));
            }
            Command::Choose => {
                self.overlays.close(Layer::LinkChooser);
                return Some(self.follow(i));
            }
            Command::Dismiss => {
                self.overlays.close(Layer::LinkChooser);
            }
            _ => return None,
        }
        Some(Action::None)
    }

    /// Follows link `i` of the response: scaRedirect opens the SCA prompt; any other link
    /// selects the matching operation and fills its parameters from the href.
    fn follow(&mut self, i: usize) -> Action {
        let Some(link) = self.response_view().and_then(|v| v.links.get(i).cloned()) else {
            return Action::None;
        };
        if link.name == names::SCA_REDIRECT {
            let url = if link.href.starts_with('/') {
                format!(
                    "{}{}",
                    self.status.base_url.trim_end_matches('/'),
                    link.href
                )
            } else {
                link.href.clone()
            };
            self.sca.prompt = Some(ScaPrompt::new(url));
            self.overlays.open(Overlay::ScaPrompt);
            self.set_message(
                Level::Info,
                "scaRedirect: press o to open it in the browser",
            );
            return Action::None;
        }
        let Some(target) = match_href(&link.name, &link.href, &link.verbs) else {
            self.set_message(
                Level::Warning,
                format!(
                    "No operation of the catalogue matches {} ({})",
                    link.path, link.href
                ),
            );
            return Action::None;
        };
        let op = target.op;
        self.select_operation(op.id);
        for p in op.params {
            let v = target
                .params
                .iter()
                .rev()
                .find(|(k, _)| k == p.name)
                .map(|(_, v)| v.as_str())
                .unwrap_or("");
            self.set_param(op.id, p.name, v);
        }
        self.panes.focus = Focus::Operations;
        self.set_message(
            Level::Success,
            format!(
                "{} prefilled from {}: press s to send it",
                op.title, link.path
            ),
        );
        Action::None
    }
}

fn byte_at(s: &str, char_index: usize) -> usize {
    s.char_indices()
        .nth(char_index)
        .map(|(i, _)| i)
        .unwrap_or(s.len())
}

// ---------------------------------------------------------------------------------------
// Drawing

impl App {
    /// The first line the response pane shows of a new answer `v`: its top, or in presenter
    /// mode its body (the JSON the lesson's Watch line points at; the headers are a PgUp
    /// away).
    pub(crate) fn response_opening_line(&self, v: &ResponseView) -> usize {
        if self.presenter.on {
            v.head_lines() + 1
        } else {
            0
        }
    }

    /// Draws the response pane: only the visible lines are built.
    pub(crate) fn draw_response(&self, frame: &mut Frame, area: Rect) {
        let t = &self.theme;
        let title = match &self.response {
            super::app::ResponseState::Sending { .. } => "Response · waiting …".to_string(),
            super::app::ResponseState::Done(v) => format!("Response · {}", v.operation),
            _ => "Response".to_string(),
        };
        if area.height <= 1 {
            // Collapsed to its title (presenter mode, another pane has the room).
            self.draw_collapsed(frame, area, &title);
            return;
        }
        let mut block = self.pane(title, Some(Focus::Response));
        let inner_full = block.inner(area);
        let w = inner_full.width as usize;
        let v = match &self.response {
            super::app::ResponseState::Done(v) => v,
            other => {
                frame.render_widget(block, area);
                let lines = match other {
                    super::app::ResponseState::Sending { method, url } => {
                        vec![
                            Line::from(Span::styled("Sending …", t.dim)),
                            Line::from(format!("{method} {}", self.screen_mask().text(url))),
                        ]
                    }
                    super::app::ResponseState::Failed(e) => vec![
                        Line::from(Span::styled("No response:", t.error)),
                        Line::from(self.screen_mask().text(e).into_owned()),
                    ],
                    _ => vec![Line::from(Span::styled(
                        format!(
                            "No response yet. Select an operation and press {}.",
                            self.keymap.key_for(Scope::Normal, Command::Send)
                        ),
                        t.dim,
                    ))],
                };
                frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner_full);
                return;
            }
        };
        let input_h = u16::from(self.response_ui.input.is_some());
        // The filter's row under the status line; in presenter mode only while a filter is
        // applied (the room's rows go to the body).
        let marker_h = u16::from(!self.presenter.on || v.filter.is_some());
        let body_h = inner_full.height.saturating_sub(1 + marker_h + input_h) as usize;
        let total = v.total_lines();
        let top = self.panes.scroll[2].min(total.saturating_sub(body_h));
        self.panes.viewport[2].set(body_h);
        self.panes.content[2].set(total);
        self.response_ui.width.set(w);
        let mut bottom = Vec::new();
        if let Some(s) = &v.search {
            bottom.push(Span::styled(
                format!(" /{} · {} ", s.query, s.position_text()),
                t.key,
            ));
        }
        if total > body_h {
            bottom.push(Span::styled(
                format!(
                    " lines {}–{} of {} ",
                    top + 1,
                    (top + body_h).min(total),
                    total
                ),
                t.dim,
            ));
        }
        if !bottom.is_empty() {
            block = block.title_bottom(Line::from(bottom).right_aligned());
        }
        frame.render_widget(block, area);
        let [head, marker, body, input_area] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(marker_h),
            Constraint::Min(0),
            Constraint::Length(input_h),
        ])
        .areas(inner_full);
        let mut head_spans = vec![
            Span::styled(v.status_text(), t.http_status(v.status)),
            Span::styled(format!("   {}", human_time(v.elapsed)), t.base),
            Span::styled(format!("   {}", v.size_text()), t.dim),
            Span::styled(if v.is_json { "   JSON" } else { "" }.to_string(), t.dim),
        ];
        if let Some(sig) = &v.signature {
            let style = match sig {
                crate::client::response_sig::ResponseSignature::Verified { .. } => t.success,
                crate::client::response_sig::ResponseSignature::Failed(_) => t.error,
                crate::client::response_sig::ResponseSignature::Unsigned => t.warning,
            };
            head_spans.push(Span::styled(format!("   {}", sig.summary()), style));
        }
        let lint_style = if crate::lint::has_errors(&v.lint) {
            t.error
        } else if v.lint.is_empty() {
            t.success
        } else {
            t.warning
        };
        head_spans.push(Span::styled(format!("   {}", v.lint_badge()), lint_style));
        frame.render_widget(Paragraph::new(Line::from(head_spans)), head);
        if let Some(f) = &v.filter {
            let state = match f.state {
                FilterState::Running => " (running …)",
                FilterState::Failed(_) => " (error)",
                FilterState::Done(_) => "",
            };
            let clear = self
                .keymap
                .key_for(Scope::ResponsePane, Command::ClearResponse);
            let line = Line::from(vec![
                Span::styled(format!("filtered: {}{state}", f.expr), t.warning),
                Span::styled(format!("   {clear} clears"), t.dim),
            ]);
            frame.render_widget(Paragraph::new(line), marker);
        }
        let mask = self.screen_mask();
        let lines: Vec<Line> = (top..(top + body_h).min(total))
            .map(|i| view_line(v, i, self.panes.hscroll, w, t, &mask))
            .collect();
        frame.render_widget(Paragraph::new(lines), body);
        if let Some(input) = &self.response_ui.input {
            let label = match input.kind {
                InputKind::Search => "/",
                InputKind::Filter => "jq ",
            };
            let room = w.saturating_sub(label.len() + 1).max(1);
            let start = (input.cursor + 1).saturating_sub(room);
            let shown: String = input.text.chars().skip(start).take(room).collect();
            frame.render_widget(
                Paragraph::new(Line::from(vec![
                    Span::styled(label, t.key),
                    Span::styled(format!("{shown:<room$}"), t.input_active),
                ])),
                input_area,
            );
            let x = input_area.x + (label.len() + input.cursor - start) as u16;
            frame.set_cursor_position(Position::new(
                x.min(input_area.right().saturating_sub(1)),
                input_area.y,
            ));
        }
    }

    /// The link chooser overlay (several `_links`).
    pub(crate) fn draw_link_chooser(&self, frame: &mut Frame, area: Rect, sel: usize) {
        let Some(v) = self.response_view() else {
            return;
        };
        let t = &self.theme;
        let w = area.width.saturating_sub(4).min(100);
        let inner_w = w.saturating_sub(4) as usize;
        let name_w = v
            .links
            .iter()
            .map(|l| l.path.chars().count())
            .max()
            .unwrap_or(4)
            .min(inner_w / 2)
            + 2;
        let targets: Vec<String> = v
            .links
            .iter()
            .map(|l| {
                if l.name == names::SCA_REDIRECT {
                    "SCA prompt".to_string()
                } else {
                    match_href(&l.name, &l.href, &l.verbs)
                        .map(|m| m.op.title.to_string())
                        .unwrap_or_else(|| "(no operation)".into())
                }
            })
            .collect();
        let target_w = targets.iter().map(|x| x.chars().count()).max().unwrap_or(0) + 2;
        let mut lines = Vec::new();
        let mask = self.screen_mask();
        // Room for the entries: the screen less the border and the two hint lines; the
        // list scrolls so the selected entry stays in view.
        let room = (area.height as usize).saturating_sub(4).max(1);
        let skip = (sel + 1).saturating_sub(room);
        for (i, (l, target)) in v
            .links
            .iter()
            .zip(&targets)
            .enumerate()
            .skip(skip)
            .take(room)
        {
            let text = format!(
                "{} {:<name_w$}→ {target:<target_w$}{}",
                if i == sel { "▸" } else { " " },
                l.path,
                mask.text(&l.href)
            );
            let style = if i == sel { t.selected } else { t.base };
            lines.push(Line::from(Span::styled(pad(&text, inner_w), style)));
        }
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled(
                self.keymap.key_for(Scope::LinkChooser, Command::Choose),
                t.key,
            ),
            Span::styled(" follow (prefills the request; s sends)   ", t.dim),
            Span::styled(
                self.keymap.key_for(Scope::LinkChooser, Command::Dismiss),
                t.key,
            ),
            Span::styled(" close", t.dim),
        ]));
        let h = (lines.len() as u16 + 2).min(area.height);
        let r = Rect::new(
            area.x + (area.width - w.min(area.width)) / 2,
            area.y + (area.height - h) / 2,
            w.min(area.width),
            h,
        );
        frame.render_widget(Clear, r);
        let block = t.modal_block(" Follow a link ");
        frame.render_widget(Paragraph::new(lines).block(block), r);
    }
}
