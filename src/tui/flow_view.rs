//! The flow screen (`5`, F5): the current flow as a live sequence diagram (issue 12, "Flow
//! view"). Lanes TPP (the console) · ASPSP · PSU browser · callback listener; one arrow per
//! step of [`crate::flow::Flow`] (built from the history of the latest TPP session and,
//! for the embedded sandbox, the browser's steps on the SCA pages that its event stream
//! reported), labelled with the status, the header that matters and the rule of the
//! interface document. Beside it the clocks of [`crate::flow::timers`]: SCA session
//! (1 h), consent (180 days), `Date` window (60 s).
//!
//! The runner feeds it ([`FlowData`]) when the screen opens and after each send, callback
//! and browser step while it is shown; the newest arrow stays in view unless the user
//! scrolled up.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Padding, Paragraph};

use super::component::{Component, Ctx, Effect};
use super::keymap::Command;
use super::text::ellipsize;
use super::theme::rounded_block;
use crate::client::history::HistoryEntry;
use crate::flow::{BrowserStep, Flow, Lane, Timer, timers};
use crate::profile::SessionState;

/// What the flow screen shows, read by the runner.
#[derive(Debug, Clone, Default)]
pub struct FlowData {
    /// The exchanges of the latest flow, oldest first ([`crate::flow::latest_session`]).
    pub entries: Vec<HistoryEntry>,
    /// The browser's steps on the SCA pages since the first of them.
    pub steps: Vec<BrowserStep>,
    /// The session state of the active profile (SCA and consent times).
    pub session: SessionState,
    /// Now, Unix seconds, on the clock requests are signed with (the embedded sandbox's).
    pub now: i64,
    /// Whether the target is the embedded sandbox (its browser steps are shown).
    pub embedded: bool,
    /// Why the history could not be read, if it could not.
    pub error: Option<String>,
}

/// Reads the latest flow ([`crate::flow::latest_flow`]) from `history` (`why`: the reason
/// there is none) for the flow screen, with the clocks at `now` from `session`. Blocking
/// (SQLite): call it off the async workers.
pub fn read_flow(
    history: Option<std::sync::Arc<std::sync::Mutex<crate::client::history::History>>>,
    why: Option<String>,
    session: SessionState,
    now: i64,
    embedded: bool,
) -> FlowData {
    let read = match &history {
        Some(h) => h
            .lock()
            .map_err(|_| "the history lock is poisoned".to_string())
            .and_then(|h| crate::flow::latest_flow(&h).map_err(|e| e.to_string())),
        None => Err(why.unwrap_or_else(|| "no history".into())),
    };
    let (entries, steps, error) = match read {
        Ok((e, s)) => (e, s, None),
        Err(e) => (Vec::new(), Vec::new(), Some(e)),
    };
    FlowData {
        entries,
        steps,
        session,
        now,
        embedded,
        error,
    }
}

/// The flow screen's state.
#[derive(Debug, Default)]
pub struct FlowView {
    data: FlowData,
    flow: Flow,
    /// First arrow shown; `None` follows the newest.
    scroll: Option<usize>,
    /// Arrows that fit at the last draw.
    room: std::cell::Cell<usize>,
}

/// Width of the clocks column when the screen is wide enough for one.
const TIMERS_W: u16 = 34;

impl FlowView {
    /// Shows `data`: the flow is rebuilt from its entries and steps.
    pub fn set_data(&mut self, data: FlowData) {
        self.flow = Flow::from_history_and_steps(&data.entries, &data.steps);
        self.data = data;
    }

    /// Adds a browser step as it happens (the flow is rebuilt).
    pub fn add_step(&mut self, step: BrowserStep) {
        self.data.steps.push(step);
        self.flow = Flow::from_history_and_steps(&self.data.entries, &self.data.steps);
    }

    /// Moves the clocks to `now` (Unix seconds) and `session` (after SCA, a reset).
    pub fn set_clock(&mut self, now: i64, session: SessionState) {
        self.data.now = now;
        self.data.session = session;
    }

    /// The flow shown.
    pub fn flow(&self) -> &Flow {
        &self.flow
    }

    /// The clocks at the data's `now`; the `Date` window counts from the last request's
    /// signing time: its `Date` header (the clock it was signed with, the sandbox's for an
    /// embedded profile), else its history time.
    pub fn timers(&self) -> [Timer; 3] {
        let last = self.data.entries.last().map(|e| {
            e.request_headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("Date"))
                .and_then(|(_, v)| httpdate::parse_http_date(v).ok())
                .map_or(e.at, crate::cert::unix_seconds)
        });
        timers(&self.data.session, last, self.data.now)
    }

    fn first_shown(&self) -> usize {
        let n = self.flow.arrows.len();
        let room = self.room.get().max(1);
        self.scroll
            .unwrap_or_else(|| n.saturating_sub(room))
            .min(n.saturating_sub(1))
    }

    fn scroll_by(&mut self, delta: isize) {
        let n = self.flow.arrows.len();
        let room = self.room.get().max(1);
        let last_start = n.saturating_sub(room);
        let next = self
            .first_shown()
            .saturating_add_signed(delta)
            .min(last_start);
        self.scroll = (next < last_start).then_some(next);
    }

    /// The x of each lane's lifeline in a diagram `width` wide.
    fn lane_x(width: u16) -> [u16; 4] {
        let w = width.max(8);
        let step = w / 4;
        [
            step / 2,
            step + step / 2,
            2 * step + step / 2,
            3 * step + step / 2,
        ]
    }

    fn draw_diagram(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let t = ctx.theme;
        let block =
            rounded_block(" Flow: the latest TPP session ", t.border, t.title).style(t.base);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height < 4 || inner.width < 20 {
            return;
        }
        let xs = Self::lane_x(inner.width);
        let buf = frame.buffer_mut();
        let put = |buf: &mut ratatui::buffer::Buffer, x: u16, y: u16, s: &str, style: Style| {
            if y < inner.y + inner.height && x < inner.x + inner.width {
                let room = (inner.x + inner.width - x) as usize;
                buf.set_stringn(x, y, s, room, style);
            }
        };
        // Lane headings, centred on their lifeline.
        let col_w = (inner.width / 4) as usize;
        for (lane, x) in Lane::ALL.iter().zip(xs) {
            let title = ellipsize(lane.title(), col_w.saturating_sub(1));
            let start = (inner.x + x).saturating_sub(title.chars().count() as u16 / 2);
            put(buf, start.max(inner.x), inner.y, &title, t.header_name);
        }
        let top = inner.y + 1;
        let rows = inner.height - 1;
        let room = (rows / 2) as usize;
        self.room.set(room.max(1));
        // Lifelines.
        for y in top..top + rows {
            for x in xs {
                put(buf, inner.x + x, y, "│", t.dim);
            }
        }
        if self.flow.arrows.is_empty() {
            let text = match &self.data.error {
                Some(e) => format!("The history cannot be read: {e}"),
                None => "No exchange yet: send a request (console, 1) and its flow appears here."
                    .to_string(),
            };
            put(buf, inner.x + 1, top + 1, &text, t.dim);
            return;
        }
        let first = self.first_shown();
        for (row, (i, arrow)) in self
            .flow
            .arrows
            .iter()
            .enumerate()
            .skip(first)
            .take(room)
            .enumerate()
        {
            let y = top + (row as u16) * 2;
            let lane = |l: Lane| Lane::ALL.iter().position(|x| *x == l).unwrap_or(0);
            let (a, b) = (xs[lane(arrow.from)], xs[lane(arrow.to)]);
            let (lo, hi) = (a.min(b), a.max(b));
            let style = arrow_style(arrow.label.as_str(), t);
            // Label above the arrow, from just right of its left end; a label longer than
            // the room to the right edge moves left (over the lanes before it).
            let mut label = format!("{}. {}", i + 1, arrow.label);
            if let Some(rule) = arrow.rule {
                label.push_str(&format!("  [{rule}]"));
            }
            let len = label.chars().count() as u16;
            let lx = inner.x + (lo + 1).min(inner.width.saturating_sub(len)).max(1);
            let room = (inner.x + inner.width).saturating_sub(lx) as usize;
            put(buf, lx, y, &ellipsize(&label, room), style);
            // The arrow itself.
            let mut line = String::new();
            for x in lo..=hi {
                line.push(if x == a && a < b {
                    '├'
                } else if x == a {
                    '┤'
                } else if x == b && a < b {
                    '▶'
                } else if x == b {
                    '◀'
                } else {
                    '─'
                });
            }
            put(buf, inner.x + lo, y + 1, &line, style);
        }
        let shown_last = (first + room).min(self.flow.arrows.len());
        if first > 0 || shown_last < self.flow.arrows.len() {
            let note = format!(
                " {}–{} of {} ",
                first + 1,
                shown_last,
                self.flow.arrows.len()
            );
            let x = (area.x + area.width).saturating_sub(note.chars().count() as u16 + 2);
            frame
                .buffer_mut()
                .set_stringn(x, area.y, &note, note.len(), t.dim);
        }
    }

    /// The clocks; `compact`: one line each (narrow screens), else name, time and rule.
    fn draw_timers(&self, frame: &mut Frame, area: Rect, ctx: &Ctx, compact: bool) {
        let t = ctx.theme;
        let block = rounded_block(" Clocks ", t.border, t.title)
            .style(t.base)
            .padding(Padding::horizontal(1));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let mut lines = Vec::new();
        for timer in self.timers() {
            let style = match timer.remaining_secs {
                None => t.dim,
                Some(r) if r <= 0 => t.error,
                Some(r) if r * 10 < timer.total_secs => t.warning,
                Some(_) => t.success,
            };
            let left = if ctx.mask && timer.remaining_secs.is_some() {
                "<time>".to_string()
            } else {
                timer.describe()
            };
            if compact {
                lines.push(Line::from(vec![
                    Span::styled(format!("{}: ", timer.name), t.header_name),
                    Span::styled(left, style),
                    Span::styled(format!("  [{}]", timer.rule), t.dim),
                ]));
                continue;
            }
            lines.push(Line::from(Span::styled(timer.name, t.header_name)));
            lines.push(Line::from(Span::styled(left, style)));
            lines.push(Line::from(Span::styled(timer.rule, t.dim)));
        }
        if !self.data.embedded && !compact {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                "Remote bank: the browser's steps are not seen, only what the console sends and receives.",
                t.dim,
            )));
        }
        frame.render_widget(
            if compact {
                Paragraph::new(lines)
            } else {
                Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: true })
            },
            inner,
        );
    }
}

/// The colour of an arrow: answers by their status class, the rest plain.
fn arrow_style(label: &str, t: &super::theme::Theme) -> Style {
    match label
        .split_whitespace()
        .next()
        .and_then(|w| w.parse::<u16>().ok())
    {
        Some(200..=299) => t.status_ok,
        Some(300..=399) => t.status_redirect,
        Some(400..=499) => t.status_client_error,
        Some(500..) => t.status_server_error,
        _ => t.base,
    }
}

impl Component for FlowView {
    fn handle(&mut self, cmd: Command, _ctx: &mut Ctx) -> Option<Effect> {
        let page = self.room.get().max(1) as isize;
        match cmd {
            Command::Up => self.scroll_by(-1),
            Command::Down => self.scroll_by(1),
            Command::PageUp => self.scroll_by(-page),
            Command::PageDown => self.scroll_by(page),
            Command::Top => self.scroll = Some(0),
            Command::Bottom => self.scroll = None,
            _ => return None,
        }
        Some(Effect::None)
    }

    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        if area.width >= 100 {
            let [diagram, clocks] =
                Layout::horizontal([Constraint::Min(0), Constraint::Length(TIMERS_W)]).areas(area);
            self.draw_diagram(frame, diagram, ctx);
            self.draw_timers(frame, clocks, ctx, false);
        } else {
            let [diagram, clocks] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(5)]).areas(area);
            self.draw_diagram(frame, diagram, ctx);
            self.draw_timers(frame, clocks, ctx, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_date_window_counts_from_the_last_requests_date_header() {
        let signed = |date: Option<&str>| HistoryEntry {
            at: 100,
            request_headers: date
                .map(|d| vec![("Date".to_string(), d.to_string())])
                .unwrap_or_default(),
            ..HistoryEntry::default()
        };
        let mut view = FlowView::default();
        // 1970-01-01 00:16:40 is 1000 s: the sandbox's clock, ahead of the history's time.
        view.set_data(FlowData {
            entries: vec![signed(Some("Thu, 01 Jan 1970 00:16:40 GMT"))],
            now: 1030,
            ..FlowData::default()
        });
        assert_eq!(view.timers()[2].remaining_secs, Some(30));
        view.set_data(FlowData {
            entries: vec![signed(None)],
            now: 130,
            ..FlowData::default()
        });
        assert_eq!(view.timers()[2].remaining_secs, Some(30));
    }
}
