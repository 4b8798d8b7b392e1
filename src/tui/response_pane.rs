//! The response pane on the console, a component ([`Component`]) like the screens: it owns
//! the response shown ([`ResponseState`], the view model of [`super::response`]), its
//! scroll, the search and jq filter boxes and the link chooser's selection; it takes its
//! keys (scroll, search, jq filter, copy, links, clear) and draws itself and the link
//! chooser. What only the `App` can do (send the filter off the UI task, copy, open the
//! SCA prompt, prefill an operation from a link) it asks for with an [`Effect`].

use std::cell::Cell;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::component::{Action, Component, Ctx, Effect, Prefill};
use super::keymap::{Command, Scope};
use super::panes::{Focus, scrolled};
use super::response::*;
use super::status_line::Level;
use super::text::pad;
use crate::xs2a::links::names;

/// The response pane: the response shown and the pane's own state.
#[derive(Debug, Default)]
pub(crate) struct ResponsePane {
    /// What the pane shows.
    pub(crate) state: ResponseState,
    /// First visible display line.
    scroll: usize,
    /// Horizontal scroll of the body, in columns.
    hscroll: usize,
    /// Visible body height at the last draw.
    viewport: Cell<usize>,
    /// Display lines at the last draw.
    content: Cell<usize>,
    /// Width of the body area at the last draw (to scroll a match into view).
    width: Cell<usize>,
    /// The open search or filter box.
    input: Option<InputBox>,
    /// The highlighted entry of the link chooser, while it is open: the `App` keeps the
    /// chooser's [`super::overlay::Layer::LinkChooser`] open exactly while this is set.
    chooser: Option<usize>,
}

impl ResponsePane {
    /// The response shown, when one arrived.
    pub(crate) fn view(&self) -> Option<&ResponseView> {
        match &self.state {
            ResponseState::Done(v) => Some(v),
            _ => None,
        }
    }

    fn view_mut(&mut self) -> Option<&mut ResponseView> {
        match &mut self.state {
            ResponseState::Done(v) => Some(v),
            _ => None,
        }
    }

    /// First visible display line.
    pub(crate) fn scroll(&self) -> usize {
        self.scroll
    }

    /// The search or filter box, when one is open.
    pub(crate) fn input_box(&self) -> Option<&InputBox> {
        self.input.as_ref()
    }

    /// The highlighted entry of the link chooser, when it is open.
    pub(crate) fn chooser(&self) -> Option<usize> {
        self.chooser
    }

    /// Shows `state` from display line `top` (scroll, boxes and link chooser as they are).
    pub(crate) fn show(&mut self, state: ResponseState, top: usize) {
        self.replace_state(state);
        self.scroll = top;
    }

    /// Replaces the response shown by `state` (scroll as it is); the view it replaces is
    /// dropped through [`super::release::release`], so a large answer's memory goes back to
    /// the system once its view closed (issue 23).
    pub(crate) fn replace_state(&mut self, state: ResponseState) {
        let old = std::mem::replace(&mut self.state, state);
        super::release::release(old.held_bytes(), old);
    }

    /// Clears the pane's own state before an answer arrives: scrolled to the top, no box
    /// open, the link chooser closed (the response shown stays until [`Self::show`]).
    pub(crate) fn reset(&mut self) {
        self.scroll = 0;
        self.hscroll = 0;
        self.input = None;
        self.width.set(0);
        self.chooser = None;
    }

    /// The first line the pane shows of a new answer `v`: its top, or in presenter mode
    /// (`presenter`) its body (the JSON the lesson's Watch line points at; the headers are
    /// a PgUp away).
    pub(crate) fn opening_line(v: &ResponseView, presenter: bool) -> usize {
        if presenter { v.head_lines() + 1 } else { 0 }
    }

    /// Scrolls so that display line `line` is the first visible one (clamped at the last
    /// draw's bottom).
    pub(crate) fn scroll_to(&mut self, line: usize) {
        let total = self.view().map(|v| v.total_lines()).unwrap_or(0);
        let max = total.saturating_sub(self.viewport.get().max(1));
        self.scroll = line.min(max);
    }

    /// The largest scroll offset: the response's lines (the last draw's otherwise) less
    /// the visible height.
    fn max_scroll(&self) -> usize {
        let total = match &self.state {
            ResponseState::Done(v) => v.total_lines(),
            _ => self.content.get(),
        };
        total.saturating_sub(self.viewport.get().max(1))
    }

    fn scroll_by(&mut self, delta: isize) {
        self.scroll = scrolled(self.scroll, delta, self.max_scroll());
    }

    /// Lines of one page (the last visible height less one, at least one).
    fn page(&self) -> isize {
        self.viewport.get().saturating_sub(1).max(1) as isize
    }

    /// The viewer's commands (search, filter, copy, follow link, clear); `None` for any
    /// other command. Without a response they only say so.
    fn command(&mut self, cmd: Command, ctx: &mut Ctx) -> Option<Effect> {
        let run: fn(&mut Self, &mut Ctx) -> Effect = match cmd {
            Command::ResponseSearch => |pane, _| pane.open_input(InputKind::Search),
            Command::ResponseFilter => Self::open_filter,
            Command::SearchNext => |pane, ctx| pane.next_match(1, ctx),
            Command::SearchPrev => |pane, ctx| pane.next_match(-1, ctx),
            Command::CopyBody => Self::copy_body,
            Command::FollowLink => Self::follow_link,
            Command::ClearResponse => Self::clear,
            _ => return None,
        };
        if self.view().is_none() {
            ctx.say(Level::Info, "No response yet: send a request first");
            return Some(Effect::None);
        }
        Some(run(self, ctx))
    }

    fn open_filter(&mut self, ctx: &mut Ctx) -> Effect {
        if self.view().is_some_and(|v| !v.is_json) {
            ctx.say(Level::Warning, "The body is not JSON: nothing to filter");
            return Effect::None;
        }
        self.open_input(InputKind::Filter)
    }

    /// Clears the jq filter and the search.
    fn clear(&mut self, ctx: &mut Ctx) -> Effect {
        let had = self
            .view()
            .is_some_and(|v| v.filter.is_some() || v.search.is_some());
        self.clear_filter();
        if let Some(v) = self.view_mut() {
            v.search = None;
        }
        if had {
            ctx.say(Level::Info, "Filter and search cleared");
        }
        Effect::None
    }

    fn open_input(&mut self, kind: InputKind) -> Effect {
        let text = self
            .view()
            .and_then(|v| match kind {
                InputKind::Search => v.search.as_ref().map(|s| s.query.clone()),
                InputKind::Filter => v.filter.as_ref().map(|f| f.expr.clone()),
            })
            .unwrap_or_default();
        let cursor = text.chars().count();
        self.input = Some(InputBox { kind, text, cursor });
        Effect::None
    }

    fn start_search(&mut self, query: &str, ctx: &mut Ctx) {
        let Some(v) = self.view_mut() else {
            return;
        };
        if query.is_empty() {
            v.search = None;
            return;
        }
        v.set_search(query);
        let s = v.search.as_ref().map(|s| (s.count(), s.position_text()));
        match s {
            Some((0, _)) => ctx.say(Level::Warning, format!("No match for {query:?}")),
            Some((_, pos)) => {
                self.jump_to_match();
                ctx.say(
                    Level::Info,
                    format!("Match {pos} for {query:?}; n next, N previous"),
                );
            }
            None => {}
        }
    }

    fn next_match(&mut self, delta: isize, ctx: &mut Ctx) -> Effect {
        let Some(v) = self.view_mut() else {
            return Effect::None;
        };
        let Some(s) = &v.search else {
            ctx.say(Level::Info, "No search: press / to search the body");
            return Effect::None;
        };
        if s.count() == 0 {
            let q = s.query.clone();
            ctx.say(Level::Warning, format!("No match for {q:?}"));
            return Effect::None;
        }
        v.step_match(delta);
        let pos = v
            .search
            .as_ref()
            .map(|s| s.position_text())
            .unwrap_or_default();
        self.jump_to_match();
        ctx.say(Level::Info, format!("Match {pos}"));
        Effect::None
    }

    /// Scrolls the current match into view (a third from the top, its column visible).
    fn jump_to_match(&mut self) {
        let Some((line, col)) = self.view().and_then(|v| v.current_match_line()) else {
            return;
        };
        let h = self.viewport.get().max(1);
        self.scroll_to(line.saturating_sub(h / 3));
        let w = self.width.get().max(1);
        if col < self.hscroll || col >= self.hscroll + w {
            self.hscroll = col.saturating_sub(w / 4);
        }
    }

    fn start_filter(&mut self, expr: &str, ctx: &mut Ctx) -> Effect {
        let expr = expr.trim().to_string();
        if expr.is_empty() {
            self.clear_filter();
            return Effect::None;
        }
        let Some(v) = self.view_mut() else {
            return Effect::None;
        };
        let input = v.body.text.clone();
        let old = v.filter.replace(Box::new(Filtered {
            expr: expr.clone(),
            state: FilterState::Running,
        }));
        release_filter(old);
        v.search = None;
        ctx.say(Level::Info, format!("Filtering with {expr} …"));
        Effect::Run(Action::RunFilter(FilterJob { expr, input }))
    }

    /// Shows the outcome of a jq filter ([`Action::RunFilter`]); ignored when the response
    /// or the filter changed meanwhile.
    pub(crate) fn filter_finished(&mut self, done: FilterDone, ctx: &mut Ctx) {
        let Some(v) = self.view_mut() else {
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
        self.scroll = 0;
        self.hscroll = 0;
        ctx.say(msg.0, msg.1);
    }

    fn clear_filter(&mut self) {
        if let Some(v) = self.view_mut()
            && let Some(old) = v.filter.take()
        {
            release_filter(Some(old));
            v.search = None;
            self.scroll = 0;
            self.hscroll = 0;
        }
    }

    fn copy_body(&mut self, ctx: &mut Ctx) -> Effect {
        let Some(v) = self.view() else {
            return Effect::None;
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
            ctx.say(Level::Info, format!("The {what} is empty: nothing copied"));
            return Effect::None;
        }
        ctx.say(
            Level::Success,
            format!(
                "Copied the {what} ({} bytes) to the clipboard (OSC 52)",
                text.len()
            ),
        );
        Effect::Run(Action::Copy(text))
    }

    fn follow_link(&mut self, ctx: &mut Ctx) -> Effect {
        let n = self.view().map(|v| v.links.len()).unwrap_or(0);
        match n {
            0 => {
                ctx.say(Level::Info, "This response has no _links to follow");
                Effect::None
            }
            1 => self.follow(0, ctx),
            _ => {
                self.chooser = Some(0);
                Effect::None
            }
        }
    }

    /// Keys of the link chooser (context [`super::keymap::Context::LinkChooser`]).
    fn chooser_command(&mut self, i: usize, cmd: Command, ctx: &mut Ctx) -> Option<Effect> {
        let n = self.view().map(|v| v.links.len()).unwrap_or(0);
        match cmd {
            Command::Up => self.chooser = Some(i.saturating_sub(1)),
            Command::Down => self.chooser = Some((i + 1).min(n.saturating_sub(1))),
            Command::Choose => {
                self.chooser = None;
                return Some(self.follow(i, ctx));
            }
            Command::Dismiss => self.chooser = None,
            _ => return None,
        }
        Some(Effect::None)
    }

    /// Follows link `i` of the response: scaRedirect opens the SCA prompt; any other link
    /// selects the matching operation and fills its parameters from the href.
    fn follow(&mut self, i: usize, ctx: &mut Ctx) -> Effect {
        let Some(link) = self.view().and_then(|v| v.links.get(i).cloned()) else {
            return Effect::None;
        };
        if link.name == names::SCA_REDIRECT {
            let url = if link.href.starts_with('/') {
                format!("{}{}", ctx.status.base_url.trim_end_matches('/'), link.href)
            } else {
                link.href.clone()
            };
            ctx.say(
                Level::Info,
                "scaRedirect: press o to open it in the browser",
            );
            return Effect::ScaPrompt(url);
        }
        let Some(target) = match_href(&link.name, &link.href, &link.verbs) else {
            ctx.say(
                Level::Warning,
                format!(
                    "No operation of the catalogue matches {} ({})",
                    link.path, link.href
                ),
            );
            return Effect::None;
        };
        let op = target.op;
        let params = op
            .params
            .iter()
            .map(|p| {
                let v = target
                    .params
                    .iter()
                    .rev()
                    .find(|(k, _)| k == p.name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                (p.name.to_string(), v)
            })
            .collect();
        ctx.say(
            Level::Success,
            format!(
                "{} prefilled from {}: press s to send it",
                op.title, link.path
            ),
        );
        Effect::Prefill(Box::new(Prefill {
            op,
            params,
            body: None,
        }))
    }
}

impl Component for ResponsePane {
    /// The pane's scroll keys and the viewer's commands; while the link chooser is open,
    /// its keys.
    fn handle(&mut self, cmd: Command, ctx: &mut Ctx) -> Option<Effect> {
        if let Some(i) = self.chooser {
            return self.chooser_command(i, cmd, ctx);
        }
        match cmd {
            Command::Up => self.scroll_by(-1),
            Command::Down => self.scroll_by(1),
            Command::PageUp => self.scroll_by(-self.page()),
            Command::PageDown => self.scroll_by(self.page()),
            Command::Top => self.scroll = 0,
            Command::Bottom => self.scroll = self.max_scroll(),
            Command::ScrollLeft => self.hscroll = self.hscroll.saturating_sub(8),
            Command::ScrollRight => self.hscroll += 8,
            _ => return self.command(cmd, ctx),
        }
        Some(Effect::None)
    }

    /// Keys for the open search or filter box (the [`super::overlay::Layer::Insert`] of the focus chain):
    /// they type text, Enter applies, Esc closes (the filter box also clears the filter).
    /// `None` when no box is open.
    fn input(&mut self, key: &KeyEvent, ctx: &mut Ctx) -> Option<Effect> {
        let input = self.input.as_mut()?;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let n = input.text.chars().count();
        match key.code {
            KeyCode::Esc => {
                let kind = input.kind;
                self.input = None;
                if kind == InputKind::Filter {
                    self.clear_filter();
                }
            }
            KeyCode::Enter => {
                let input = self.input.take()?;
                return Some(match input.kind {
                    InputKind::Search => {
                        self.start_search(&input.text, ctx);
                        Effect::None
                    }
                    InputKind::Filter => self.start_filter(&input.text, ctx),
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
        Some(Effect::None)
    }

    /// Pastes `text` into the open search or filter box (line breaks dropped); false when
    /// no box is open.
    fn paste(&mut self, text: &str) -> bool {
        let Some(input) = self.input.as_mut() else {
            return false;
        };
        for c in text.chars().filter(|c| *c != '\n' && *c != '\r') {
            let at = byte_at(&input.text, input.cursor);
            input.text.insert(at, c);
            input.cursor += 1;
        }
        true
    }

    fn typing(&self) -> bool {
        self.input.is_some()
    }

    /// Draws the response pane: only the visible lines are built.
    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let t = ctx.theme;
        let presenter = ctx.screen_mask.is_on();
        let title = match &self.state {
            ResponseState::Sending { .. } => "Response · waiting …".to_string(),
            ResponseState::Done(v) => format!("Response · {}", v.operation),
            _ => "Response".to_string(),
        };
        if area.height <= 1 {
            // Collapsed to its title (presenter mode, another pane has the room).
            let key = ctx.keymap.key_for(Scope::Normal, Command::NextFocus);
            frame.render_widget(t.collapsed_block(&title, &key), area);
            return;
        }
        let mut block = t.pane_block(title, ctx.focus == Some(Focus::Response));
        let inner_full = block.inner(area);
        let w = inner_full.width as usize;
        let v = match &self.state {
            ResponseState::Done(v) => v,
            other => {
                frame.render_widget(block, area);
                let lines = match other {
                    ResponseState::Sending { method, url } => {
                        vec![
                            Line::from(Span::styled("Sending …", t.dim)),
                            Line::from(format!("{method} {}", ctx.screen_mask.text(url))),
                        ]
                    }
                    ResponseState::Failed(e) => vec![
                        Line::from(Span::styled("No response:", t.error)),
                        Line::from(ctx.screen_mask.text(e).into_owned()),
                    ],
                    _ => vec![Line::from(Span::styled(
                        format!(
                            "No response yet. Select an operation and press {}.",
                            ctx.keymap.key_for(Scope::Normal, Command::Send)
                        ),
                        t.dim,
                    ))],
                };
                frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner_full);
                return;
            }
        };
        let input_h = u16::from(self.input.is_some());
        // The filter's row under the status line; in presenter mode only while a filter is
        // applied (the room's rows go to the body).
        let marker_h = u16::from(!presenter || v.filter.is_some());
        let body_h = inner_full.height.saturating_sub(1 + marker_h + input_h) as usize;
        let total = v.total_lines();
        let top = self.scroll.min(total.saturating_sub(body_h));
        self.viewport.set(body_h);
        self.content.set(total);
        self.width.set(w);
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
            let clear = ctx
                .keymap
                .key_for(Scope::ResponsePane, Command::ClearResponse);
            let line = Line::from(vec![
                Span::styled(format!("filtered: {}{state}", f.expr), t.warning),
                Span::styled(format!("   {clear} clears"), t.dim),
            ]);
            frame.render_widget(Paragraph::new(line), marker);
        }
        let lines: Vec<Line> = (top..(top + body_h).min(total))
            .map(|i| view_line(v, i, self.hscroll, w, t, &ctx.screen_mask))
            .collect();
        frame.render_widget(Paragraph::new(lines), body);
        if let Some(input) = &self.input {
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
}

impl ResponsePane {
    /// Draws the link chooser overlay (several `_links`), while it is open.
    pub(crate) fn draw_chooser(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let (Some(v), Some(sel)) = (self.view(), self.chooser) else {
            return;
        };
        let t = ctx.theme;
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
        let mask = &ctx.screen_mask;
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
                ctx.keymap.key_for(Scope::LinkChooser, Command::Choose),
                t.key,
            ),
            Span::styled(" follow (prefills the request; s sends)   ", t.dim),
            Span::styled(
                ctx.keymap.key_for(Scope::LinkChooser, Command::Dismiss),
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

fn byte_at(s: &str, char_index: usize) -> usize {
    s.char_indices()
        .nth(char_index)
        .map(|(i, _)| i)
        .unwrap_or(s.len())
}

/// Drops a jq filter's result through [`super::release::release`] (a filter of a large
/// answer can hold as much as the answer).
fn release_filter(filter: Option<Box<Filtered>>) {
    let bytes = match filter.as_ref().map(|f| &f.state) {
        Some(FilterState::Done(b)) | Some(FilterState::Failed(b)) => b.held_bytes(),
        _ => 0,
    };
    super::release::release(bytes, filter);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Exchange, PreparedRequest};
    use crate::tui::component::StatusInfo;
    use crate::tui::keymap::Keymap;
    use crate::tui::theme::Theme;

    /// A pane showing `body` as the answer to "List accounts".
    fn pane_with(body: serde_json::Value) -> ResponsePane {
        let mut pane = ResponsePane::default();
        pane.show(ResponseState::Done(Box::new(view_of(body))), 0);
        pane.viewport.set(4);
        pane
    }

    /// The view of `body` as the answer to "List accounts".
    fn view_of(body: serde_json::Value) -> ResponseView {
        let bytes = serde_json::to_vec(&body).expect("json");
        let request = PreparedRequest {
            operation_id: "accounts.list".into(),
            params: Vec::new(),
            method: "GET".into(),
            url: "http://127.0.0.1:1/v1/accounts".into(),
            path_and_query: "/v1/accounts".into(),
            headers: Vec::new(),
            body: Vec::new(),
            inspection: Default::default(),
            signed_for: None,
        };
        let exchange = Exchange {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: bytes,
            elapsed: std::time::Duration::from_millis(3),
            json: Some(body),
        };
        ResponseView::from_exchange("List accounts", &request, &exchange)
    }

    /// A body whose view holds about 2 MiB.
    fn large_body() -> serde_json::Value {
        serde_json::json!({ "filler": "x".repeat(2 << 20) })
    }

    /// Issue 23: a large answer's memory went back to the system only when mimalloc
    /// happened to collect (RSS 94–95 MiB after a small answer replaced the 20 MB view). The
    /// view a send, a failure, another answer or a profile switch replaces goes to the
    /// release thread ([`crate::tui::release`]), which drops it and ends after the purge
    /// delay; a small one is dropped where it is.
    #[test]
    fn a_large_view_goes_to_the_release_thread_when_the_pane_shows_something_else() {
        crate::tui::release::take_sent();
        let mut pane = pane_with(large_body());
        let held = pane.state.held_bytes();
        assert!(held >= 2 << 20, "the view holds its text: {held}");
        pane.replace_state(ResponseState::Sending {
            method: "GET".into(),
            url: "http://127.0.0.1:1/v1/card-accounts".into(),
        });
        assert_eq!(crate::tui::release::take_sent(), vec![held]);

        // A small view, then the states without a view: nothing sent.
        pane.show(
            ResponseState::Done(Box::new(view_of(serde_json::json!({"a": 1})))),
            0,
        );
        pane.replace_state(ResponseState::Failed("refused".into()));
        pane.show(ResponseState::Empty, 0);
        assert!(crate::tui::release::take_sent().is_empty());

        // Another answer replacing a large one, and a large jq result cleared.
        pane.show(ResponseState::Done(Box::new(view_of(large_body()))), 0);
        pane.show(
            ResponseState::Done(Box::new(view_of(serde_json::json!({"a": 1})))),
            0,
        );
        assert_eq!(crate::tui::release::take_sent().len(), 1);
        if let ResponseState::Done(v) = &mut pane.state {
            v.filter = Some(Box::new(Filtered {
                expr: ".".into(),
                state: FilterState::Done(Body::new("y".repeat(2 << 20))),
            }));
        }
        pane.clear_filter();
        assert_eq!(crate::tui::release::take_sent().len(), 1);
    }

    /// The same through the console's own steps: the send that follows a large answer
    /// ([`crate::tui::App::begin_send`]) sends the large view to the release thread.
    #[test]
    fn a_send_after_a_large_answer_sends_its_view_to_the_release_thread() {
        crate::tui::release::take_sent();
        let mut app = crate::tui::App::new(StatusInfo::default());
        app.finish_send(Ok(view_of(large_body())));
        assert!(
            crate::tui::release::take_sent().is_empty(),
            "shown, not sent"
        );
        let request = PreparedRequest {
            operation_id: "cards.list".into(),
            params: Vec::new(),
            method: "GET".into(),
            url: "http://127.0.0.1:1/v1/card-accounts".into(),
            path_and_query: "/v1/card-accounts".into(),
            headers: Vec::new(),
            body: Vec::new(),
            inspection: Default::default(),
            signed_for: None,
        };
        app.begin_send(request);
        let sent = crate::tui::release::take_sent();
        assert_eq!(sent.len(), 1);
        assert!(sent[0] >= 2 << 20);
    }

    /// Runs `f` with a context over default console state.
    fn with_ctx<T>(f: impl FnOnce(&mut Ctx) -> T) -> T {
        let (theme, keymap, status) = (Theme::dark(), Keymap::default(), StatusInfo::default());
        let mut ctx = Ctx::new(&theme, &keymap, &status, &[], &[], false, false);
        f(&mut ctx)
    }

    /// Issue 19: the response pane is a component: its scroll keys, its search box and its
    /// link chooser go through [`Component`] on the pane alone (no `App`), and its scroll is
    /// its own.
    #[test]
    fn the_response_pane_takes_its_keys_through_the_component_trait() {
        let links = serde_json::json!({
            "accounts": [{"resourceId": "acc-1"}],
            "_links": {
                "balances": {"href": "/v1/accounts/acc-1/balances"},
                "transactions": {"href": "/v1/accounts/acc-1/transactions"}
            },
            "filler": (0..40).collect::<Vec<u32>>()
        });
        let mut pane = pane_with(links);
        with_ctx(|ctx| {
            assert!(matches!(
                pane.handle(Command::PageDown, ctx),
                Some(Effect::None)
            ));
            assert_eq!(pane.scroll(), 3, "a page of four lines less one");
            pane.handle(Command::Bottom, ctx);
            let bottom = pane.scroll();
            assert!(bottom > 3);
            pane.handle(Command::Top, ctx);
            assert_eq!(pane.scroll(), 0);
            // Commands of other panes are not its own.
            assert!(pane.handle(Command::Send, ctx).is_none());

            // `/` opens its box: typing goes to it, Enter searches and scrolls to the match.
            pane.handle(Command::ResponseSearch, ctx);
            assert!(pane.typing());
            for c in "acc-1".chars() {
                let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
                assert!(pane.input(&key, ctx).is_some());
            }
            assert!(pane.paste("\n"));
            assert_eq!(pane.input_box().map(|b| b.text.as_str()), Some("acc-1"));
            let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
            pane.input(&enter, ctx);
            assert!(!pane.typing());
            assert_eq!(
                pane.view().and_then(|v| v.search()).map(|s| s.count()),
                Some(3)
            );

            // `f` with two links opens the chooser; its keys move it, Enter follows.
            assert!(matches!(
                pane.handle(Command::FollowLink, ctx),
                Some(Effect::None)
            ));
            assert_eq!(pane.chooser(), Some(0));
            pane.handle(Command::Down, ctx);
            assert_eq!(
                pane.chooser(),
                Some(1),
                "Down moves the chooser, not the scroll"
            );
            match pane.handle(Command::Choose, ctx) {
                Some(Effect::Prefill(p)) => {
                    assert_eq!(p.op.id, "accounts.transactions");
                    assert!(p.params.contains(&("account-id".into(), "acc-1".into())));
                }
                other => panic!("expected a prefill, got {other:?}"),
            }
            assert_eq!(pane.chooser(), None);
        });
    }
}
