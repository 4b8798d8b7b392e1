//! The sandbox monitor screen (`4`, issue 11): what the sandbox of the active profile sees
//! and holds, for the embedded sandbox and a `psd2-console sandbox serve` on this machine.
//!
//! - The request log: one row per request the sandbox answered (its clock time, method,
//!   path, status, Berlin Group code, latency, `X-Request-ID`, `FAULT` when a fault rule
//!   answered), SCA steps, batch runs and clock changes, newest first, the last
//!   [`LOG_CAPACITY`] kept. Below it the verifier's breakdown of the highlighted request:
//!   the check that failed and the signing string as the server rebuilt it.
//! - The state browser (`Tab`): customers with their agreements, consents (`consentStatus`),
//!   payments (`transactionStatus`, `scaStatus`), signing baskets.
//! - The clock, the next batch run and the fault rules in effect, always on top; keys advance
//!   the clock, run a batch, clear the faults.
//!
//! The events come from the sandbox's event stream, followed by the runner from the first
//! time the screen is shown ([`Action::MonitorStart`], [`crate::client::monitor::follow`]);
//! the state from signed management requests ([`Action::Monitor`]), read first once the
//! stream is subscribed, and again whenever an event tells that the sandbox changed (a
//! fault rule added with `psd2-console sandbox fault add`, the clock advanced, a payment
//! made), so the header follows changes made elsewhere. The monitor's own reads are hidden
//! from the log by default (`m` shows them): they neither fill it nor take the highlight.
//! A sandbox reachable from the network (room mode) refuses to list its state (403
//! `SERVICE_BLOCKED`: every TPP's PSU data); the clock, batch runs and fault rules still
//! work and the state browser says why it is empty ([`STATE_WITHHELD`]). A remote bank has
//! neither: the screen says so. Keys: rows of [`Scope::MonitorScreen`](super::keymap::Scope).

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use serde_json::Value;

use super::component::{Action, Component, Ctx, Effect};
use super::keymap::{Command, Scope};
use super::status_line::Level;
use super::text::{ellipsize, pad};
use super::theme::{Theme, rounded_block};
use crate::client::monitor::{
    BatchEvent, ClockEvent, MonitorEvent, MonitorFeed, MonitorRequest, RequestEvent, SandboxState,
    ScaEvent, changes_state, describe_seconds, is_monitor_read,
};
use crate::client::sandbox_admin::describe;

/// Events the log keeps (the oldest go first).
pub const LOG_CAPACITY: usize = 500;

/// What the state browser says when the sandbox keeps its state to itself (403
/// `SERVICE_BLOCKED`: its public URL is not on loopback, as in room mode). The clock, the
/// batch run and the fault rules still work.
pub const STATE_WITHHELD: &str = "The sandbox lists its customers, consents and payments only to its operator (a loopback peer or the operator token): they hold every TPP's PSU data, and this profile is one TPP. Your clock, batch runs and fault rules work as usual.";

/// Largest offset the typed box takes (the sandbox's limit for one advance: 400 days).
const MAX_OFFSET_SECS: u64 = 400 * 86_400;

/// The event stream as the screen knows it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StreamState {
    /// Not asked for yet (the screen was never shown).
    #[default]
    Off,
    /// Asked for, not yet subscribed.
    Connecting,
    /// Subscribed: every request from now on shows.
    Live,
    /// Ended or refused; why.
    Ended(String),
}

/// Which half of the screen is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MonitorTab {
    /// The request log and the verifier's breakdown.
    #[default]
    Log,
    /// Customers, consents, payments, baskets.
    State,
}

/// State of the monitor screen.
#[derive(Debug, Default)]
pub struct MonitorView {
    /// Newest first, the monitor's own reads included (shown with [`Command::MonitorShowReads`]).
    events: VecDeque<MonitorEvent>,
    /// Index of the highlighted event in `events` (always a shown one while any is).
    selected: usize,
    /// The monitor's own reads of the sandbox are shown in the log
    /// ([`crate::client::monitor::is_monitor_read`]); hidden by default.
    show_reads: bool,
    /// An event told that the sandbox changed while a read was on its way: read again when
    /// it is answered.
    stale: bool,
    stream: StreamState,
    tab: MonitorTab,
    /// The sandbox as last read.
    sandbox: Option<SandboxState>,
    /// Why the last read or change failed.
    error: Option<String>,
    /// A management request is on its way.
    busy: bool,
    /// The typed clock offset, while its box is open.
    offset: Option<String>,
    /// First line of the state browser shown.
    state_scroll: usize,
    /// Events the stream lost because the console read too slowly.
    lost: u64,
}

/// Whether the active profile's target is a sandbox the monitor can watch: the embedded one,
/// or a URL on loopback (a local `sandbox serve`).
fn watchable(ctx: &Ctx) -> bool {
    ctx.status.embedded || crate::profile::is_loopback_url(&ctx.status.base_url)
}

/// Parses a typed clock offset: a number of seconds, or numbers with units `s`, `m`/`min`,
/// `h`, `d` (`90m`, `2h`, `1d 6h`, `1h30m`), 1 s to 400 days.
///
/// Errors: the sentence the status line shows.
pub fn parse_offset(text: &str) -> Result<u64, String> {
    let bad = || {
        format!("{text:?} is not an offset: write e.g. 90m, 2h, 3d, 1d6h or a number of seconds")
    };
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = compact.parse::<u64>() {
        return check_offset(secs, text);
    }
    let mut total: u64 = 0;
    let mut rest = compact.as_str();
    while !rest.is_empty() {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest.chars().take_while(|c| c.is_ascii_alphabetic()).count();
        let size = match &rest[..unit_len] {
            "s" => 1,
            "m" | "min" => 60,
            "h" => 3_600,
            "d" => 86_400,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total = n
            .checked_mul(size)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
    }
    check_offset(total, text)
}

fn check_offset(secs: u64, text: &str) -> Result<u64, String> {
    if (1..=MAX_OFFSET_SECS).contains(&secs) {
        Ok(secs)
    } else {
        Err(format!(
            "{text:?}: the sandbox clock moves forward by 1 s to 400 days at a time"
        ))
    }
}

impl MonitorView {
    /// What to do when the screen is shown: follow the stream the first time (or after it
    /// ended), else read the state again; nothing for a remote bank.
    pub(crate) fn shown(&mut self, ctx: &Ctx) -> Option<Action> {
        if !watchable(ctx) {
            return None;
        }
        Some(match self.stream {
            StreamState::Off | StreamState::Ended(_) => {
                self.stream = StreamState::Connecting;
                self.busy = true;
                Action::MonitorStart
            }
            _ => self.ask(MonitorRequest::Refresh),
        })
    }

    fn ask(&mut self, request: MonitorRequest) -> Action {
        self.busy = true;
        Action::Monitor(request)
    }

    /// Takes what the stream task sent; once subscribed, asks to read the state. An event
    /// that changes the sandbox (a fault rule added from the CLI, the clock advanced, a
    /// payment made: [`changes_state`]) reads it again, so the header follows changes made
    /// elsewhere; while a read is on its way, once it is answered ([`MonitorView::done`]).
    pub fn feed(&mut self, feed: MonitorFeed) -> Option<Action> {
        match feed {
            MonitorFeed::Subscribed => {
                self.stream = StreamState::Live;
                return Some(self.ask(MonitorRequest::Refresh));
            }
            MonitorFeed::Ended(why) => {
                self.stream = StreamState::Ended(why);
                self.busy = false;
            }
            MonitorFeed::Event(MonitorEvent::Lagged { missed }) => self.lost += missed,
            MonitorFeed::Event(e) => {
                let changed = changes_state(&e);
                // A highlighted older event stays highlighted while new ones arrive above
                // it; on the newest shown row the highlight follows the newest shown event
                // (a hidden read never takes it).
                let following = self.events.is_empty() || Some(self.selected) == self.first_shown();
                let shown = self.in_log(&e);
                self.events.push_front(e);
                if following && shown {
                    self.selected = 0;
                } else if self.events.len() > 1 {
                    self.selected += 1;
                }
                self.events.truncate(LOG_CAPACITY);
                if self.selected >= self.events.len() {
                    self.selected = self.last_shown().unwrap_or(0);
                }
                if changed && self.sandbox.is_some() {
                    if self.busy {
                        self.stale = true;
                    } else {
                        return Some(self.ask(MonitorRequest::Refresh));
                    }
                }
            }
        }
        None
    }

    /// Whether the log shows `e` (the monitor's own reads only when asked).
    fn in_log(&self, e: &MonitorEvent) -> bool {
        self.show_reads || !is_monitor_read(e)
    }

    /// Indexes into `events` of the rows the log shows, newest first.
    fn shown_indexes(&self) -> Vec<usize> {
        (0..self.events.len())
            .filter(|i| self.in_log(&self.events[*i]))
            .collect()
    }

    fn first_shown(&self) -> Option<usize> {
        self.events.iter().position(|e| self.in_log(e))
    }

    fn last_shown(&self) -> Option<usize> {
        self.events.iter().rposition(|e| self.in_log(e))
    }

    /// The monitor's own reads hidden from the log now.
    pub fn hidden_reads(&self) -> usize {
        if self.show_reads {
            0
        } else {
            self.events.iter().filter(|e| is_monitor_read(e)).count()
        }
    }

    /// Takes the answer of a management request; its outcome goes to the status line. A
    /// state the sandbox withheld (room mode) is no error: the state browser says why.
    /// Answers a new read when the sandbox changed meanwhile.
    pub(crate) fn done(&mut self, result: Result<SandboxState, String>, ctx: &mut Ctx) -> Action {
        self.busy = false;
        let again = std::mem::take(&mut self.stale) && result.is_ok();
        match result {
            Ok(state) => {
                if let Some(d) = &state.done {
                    ctx.say(Level::Success, d.clone());
                }
                self.error = None;
                self.sandbox = Some(state);
            }
            Err(e) => {
                ctx.say(Level::Error, format!("Sandbox monitor: {e}"));
                self.error = Some(e);
            }
        }
        if again {
            self.ask(MonitorRequest::Refresh)
        } else {
            Action::None
        }
    }

    /// Forgets everything (another profile became active: another sandbox, or none).
    pub fn reset(&mut self) {
        *self = MonitorView::default();
    }

    /// The events in the log, newest first.
    pub fn events(&self) -> impl Iterator<Item = &MonitorEvent> {
        self.events.iter()
    }

    /// The highlighted event.
    pub fn selected_event(&self) -> Option<&MonitorEvent> {
        self.events.get(self.selected).filter(|e| self.in_log(e))
    }

    /// Whether the log shows the monitor's own reads.
    pub fn shows_reads(&self) -> bool {
        self.show_reads
    }

    /// The event stream's state.
    pub fn stream(&self) -> &StreamState {
        &self.stream
    }

    /// The sandbox as last read.
    pub fn sandbox(&self) -> Option<&SandboxState> {
        self.sandbox.as_ref()
    }

    /// The half shown.
    pub fn tab(&self) -> MonitorTab {
        self.tab
    }

    /// Whether the typed offset box is open.
    pub fn typing(&self) -> bool {
        self.offset.is_some()
    }

    fn request(&mut self, request: MonitorRequest, ctx: &mut Ctx) -> Effect {
        if self.busy {
            ctx.say(Level::Warning, "Still waiting for the sandbox's answer");
            return Effect::None;
        }
        Effect::Run(self.ask(request))
    }

    fn move_by(&mut self, delta: isize) {
        match self.tab {
            MonitorTab::Log => {
                let shown = self.shown_indexes();
                let at = shown.iter().position(|i| *i >= self.selected).unwrap_or(0);
                let to = at
                    .saturating_add_signed(delta)
                    .min(shown.len().saturating_sub(1));
                self.selected = shown.get(to).copied().unwrap_or(0);
            }
            MonitorTab::State => {
                self.state_scroll = self.state_scroll.saturating_add_signed(delta);
            }
        }
    }
}

impl Component for MonitorView {
    fn handle(&mut self, cmd: Command, ctx: &mut Ctx) -> Option<Effect> {
        let remote_only = matches!(
            cmd,
            Command::MonitorAdvanceHour
                | Command::MonitorAdvanceDay
                | Command::MonitorAdvanceBy
                | Command::MonitorBatch
                | Command::MonitorClearFaults
                | Command::MonitorRefresh
        );
        if remote_only && !watchable(ctx) {
            ctx.say(
                Level::Info,
                "The monitor needs the embedded sandbox or a local `sandbox serve`",
            );
            return Some(Effect::None);
        }
        Some(match cmd {
            Command::Up => {
                self.move_by(-1);
                Effect::None
            }
            Command::Down => {
                self.move_by(1);
                Effect::None
            }
            Command::Top => {
                self.selected = self.first_shown().unwrap_or(0);
                self.state_scroll = 0;
                Effect::None
            }
            Command::Bottom => {
                self.selected = self.last_shown().unwrap_or(0);
                Effect::None
            }
            Command::MonitorShowReads => {
                // The highlight stays on its event; a hidden read hands it to the next
                // older shown row.
                self.show_reads = !self.show_reads;
                if !self
                    .events
                    .get(self.selected)
                    .is_some_and(|e| self.in_log(e))
                {
                    self.selected = (self.selected..self.events.len())
                        .find(|i| self.in_log(&self.events[*i]))
                        .or_else(|| self.first_shown())
                        .unwrap_or(0);
                }
                ctx.say(
                    Level::Info,
                    if self.show_reads {
                        "The log shows the monitor's own reads of the sandbox"
                    } else {
                        "The monitor's own reads of the sandbox are hidden from the log"
                    },
                );
                Effect::None
            }
            Command::MonitorToggleView => {
                self.tab = match self.tab {
                    MonitorTab::Log => MonitorTab::State,
                    MonitorTab::State => MonitorTab::Log,
                };
                if self.tab == MonitorTab::State && self.sandbox.is_none() && !self.busy {
                    return Some(self.request(MonitorRequest::Refresh, ctx));
                }
                Effect::None
            }
            Command::MonitorAdvanceHour => self.request(MonitorRequest::Advance(3_600), ctx),
            Command::MonitorAdvanceDay => self.request(MonitorRequest::Advance(86_400), ctx),
            Command::MonitorAdvanceBy => {
                self.offset = Some(String::new());
                Effect::None
            }
            Command::MonitorBatch => self.request(MonitorRequest::Batch, ctx),
            Command::MonitorClearFaults => self.request(MonitorRequest::ClearFaults, ctx),
            Command::MonitorRefresh => match self.stream {
                StreamState::Off | StreamState::Ended(_) => match self.shown(ctx) {
                    Some(a) => Effect::Run(a),
                    None => Effect::None,
                },
                _ => self.request(MonitorRequest::Refresh, ctx),
            },
            _ => return None,
        })
    }

    fn input(&mut self, key: &KeyEvent, ctx: &mut Ctx) -> Option<Effect> {
        let text = self.offset.as_mut()?;
        let typed = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char(c) if typed => text.push(c),
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => text.clear(),
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Esc => self.offset = None,
            KeyCode::Enter => match parse_offset(text) {
                Ok(secs) => {
                    self.offset = None;
                    return Some(self.request(MonitorRequest::Advance(secs), ctx));
                }
                Err(e) => ctx.say(Level::Error, e),
            },
            _ => {}
        }
        Some(Effect::None)
    }

    fn typing(&self) -> bool {
        self.offset.is_some()
    }

    fn paste(&mut self, text: &str) -> bool {
        match self.offset.as_mut() {
            Some(t) => {
                t.extend(text.chars().filter(|c| !c.is_control()));
                true
            }
            None => false,
        }
    }

    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let t = ctx.theme;
        if !watchable(ctx) {
            let text = format!(
                "The sandbox monitor needs the embedded sandbox or a local `psd2-console sandbox serve` \
                 (a loopback URL such as http://127.0.0.1:8080). Profile {} targets {}, a remote bank: \
                 its requests and state cannot be watched from here. Choose an embedded profile with p.",
                ctx.status.profile, ctx.status.base_url
            );
            frame.render_widget(
                Paragraph::new(Span::styled(text, t.warning))
                    .wrap(Wrap { trim: true })
                    .block(block(t, " Sandbox monitor ".into(), false)),
                area,
            );
            return;
        }
        let [head, main] =
            Layout::vertical([Constraint::Length(3), Constraint::Min(0)]).areas(area);
        frame.render_widget(Paragraph::new(self.header(ctx)), head);
        match self.tab {
            MonitorTab::Log => self.draw_log(frame, main, ctx),
            MonitorTab::State => self.draw_state(frame, main, t),
        }
    }
}

fn block(t: &Theme, title: String, focused: bool) -> Block<'static> {
    rounded_block(
        title,
        if focused { t.border_focused } else { t.border },
        t.title,
    )
}

fn status_style(t: &Theme, status: u16) -> Style {
    match status {
        200..=299 => t.status_ok,
        300..=399 => t.status_redirect,
        400..=499 => t.status_client_error,
        _ => t.status_server_error,
    }
}

/// `HH:MM:SS` of an RFC 3339 time (`2026-11-24T10:00:00Z`), else the text.
fn time_of(rfc3339: &str) -> String {
    rfc3339.get(11..19).unwrap_or(rfc3339).to_string()
}

/// A log line of an event without a request: its time (`HH:MM:SS` of `at`, RFC 3339) dimmed,
/// then `text` in `style`.
fn stamped_line(t: &Theme, at: &str, text: String, style: Style) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{} ", time_of(at)), t.dim),
        Span::styled(text, style),
    ])
}

impl MonitorView {
    /// Stream and clock, the faults in effect (or the offset box).
    fn header(&self, ctx: &Ctx) -> Vec<Line<'static>> {
        let t = ctx.theme;
        let label = |s: &str| Span::styled(format!("{s} "), t.dim);
        let (stream, style) = match &self.stream {
            StreamState::Off => ("not followed".to_string(), t.dim),
            StreamState::Connecting => ("connecting …".to_string(), t.warning),
            StreamState::Live => ("live".to_string(), t.success),
            StreamState::Ended(why) => (format!("ended: {why} (r reconnects)"), t.error),
        };
        let clock = self.sandbox.as_ref().map(|s| &s.clock);
        let text =
            |v: Option<&Value>, k: &str| v.and_then(|v| v[k].as_str()).unwrap_or("–").to_string();
        let mut first = vec![
            label("Event stream"),
            Span::styled(stream, style),
            Span::raw("   "),
            label("Sandbox clock"),
            Span::styled(text(clock, "now"), t.input),
            Span::raw("   "),
            label("Next batch run"),
            Span::styled(text(clock, "nextBatchRun"), t.input),
            Span::raw("   "),
            // Which plane the monitor reads (issue 20, `client::monitor::plane`): the
            // operator's on its own embedded sandbox, this TPP's own elsewhere.
            label("Plane"),
            Span::styled(
                if ctx.status.embedded {
                    "operator: every TPP"
                } else {
                    "TPP: this profile's"
                },
                t.dim,
            ),
        ];
        if self.busy {
            first.push(Span::styled("   asking the sandbox …", t.dim));
        }
        let second = match &self.offset {
            Some(typed) => Line::from(vec![
                Span::styled("Advance the sandbox clock by: ", t.key),
                Span::styled(format!("{typed}▏"), t.input_active),
                Span::styled("  (90m, 2h, 3d, 1d6h; Enter advances, Esc cancels)", t.dim),
            ]),
            None => match (&self.error, &self.sandbox) {
                (Some(e), _) => Line::from(Span::styled(format!("Sandbox: {e}"), t.error)),
                (None, Some(s)) if s.faults.is_empty() => {
                    Line::from(vec![label("Faults in effect"), Span::styled("none", t.dim)])
                }
                (None, Some(s)) => {
                    let mut spans = vec![
                        label("Faults in effect"),
                        Span::styled(format!("{} (x clears)  ", s.faults.len()), t.warning),
                    ];
                    let rules: Vec<String> = s
                        .faults
                        .iter()
                        .map(|f| describe(f).replace('\t', " "))
                        .collect();
                    spans.push(Span::styled(rules.join(" · "), t.warning));
                    Line::from(spans)
                }
                (None, None) => Line::from(Span::styled("Reading the sandbox …", t.dim)),
            },
        };
        let reads_key = ctx
            .keymap
            .key_for(Scope::MonitorScreen, Command::MonitorShowReads);
        let hidden = self.hidden_reads();
        let mut third = vec![
            label("Log"),
            Span::styled(
                format!(
                    "{} events, last {LOG_CAPACITY} kept",
                    self.events.len() - hidden
                ),
                t.dim,
            ),
            Span::styled(
                if self.show_reads {
                    format!(" · the monitor's own reads shown ({reads_key} hides)")
                } else {
                    format!(" · {hidden} reads of the monitor hidden ({reads_key} shows)")
                },
                t.dim,
            ),
        ];
        if self.lost > 0 {
            third.push(Span::styled(
                format!("   {} events lost (the console read too slowly)", self.lost),
                t.warning,
            ));
        }
        vec![Line::from(first), second, Line::from(third)]
    }

    /// One log row.
    fn row(&self, e: &MonitorEvent, width: usize, ctx: &Ctx) -> Line<'static> {
        let t = ctx.theme;
        match e {
            MonitorEvent::Request(r) => {
                let latency = if ctx.mask {
                    "‹ms›".to_string()
                } else {
                    format!("{:.1} ms", r.latency_us as f64 / 1000.0)
                };
                // time 9, method 7, status 4, code 22, latency 10, mark 6, X-Request-ID 36; on
                // a narrow screen no latency and the X-Request-ID cut (whole in the verifier's
                // breakdown).
                let narrow = width < 130;
                let (code_w, id_w, fixed) = if narrow { (18, 13, 58) } else { (22, 36, 96) };
                let path_w = width.saturating_sub(fixed).clamp(12, 60);
                let mut spans = vec![
                    Span::styled(format!("{} ", time_of(&r.at)), t.dim),
                    Span::styled(pad(&r.method, 7), t.method_read),
                    Span::raw(pad(&ellipsize(&r.path, path_w), path_w + 1)),
                    Span::styled(format!("{} ", r.status), status_style(t, r.status)),
                    Span::styled(
                        pad(
                            &ellipsize(r.code.as_deref().unwrap_or("–"), code_w - 1),
                            code_w,
                        ),
                        t.warning,
                    ),
                ];
                if !narrow {
                    spans.push(Span::styled(pad(&latency, 10), t.dim));
                }
                spans.push(Span::styled(
                    if r.injected { "FAULT " } else { "      " },
                    t.error,
                ));
                spans.push(Span::raw(ellipsize(
                    r.request_id.as_deref().unwrap_or("–"),
                    id_w,
                )));
                Line::from(spans)
            }
            MonitorEvent::Sca(ScaEvent {
                sca_id,
                step,
                status,
                outcome,
                code,
                injected,
                ..
            }) => {
                let mut text = format!("SCA {step} {}", ellipsize(sca_id, 12));
                if let Some(o) = outcome {
                    text.push_str(&format!(" → {o}"));
                }
                if let Some(c) = code {
                    text.push_str(&format!(" {c}"));
                }
                let mut spans = vec![
                    Span::styled("–        ", t.dim),
                    Span::styled(text, t.info),
                    Span::styled(format!("  {status}"), status_style(t, *status)),
                ];
                if *injected {
                    spans.push(Span::styled("  FAULT", t.error));
                }
                Line::from(spans)
            }
            MonitorEvent::Batch(BatchEvent {
                ran_at,
                settled,
                insufficient_funds,
                all,
            }) => stamped_line(
                t,
                ran_at,
                format!(
                    "BATCH {}: {settled} settled, {insufficient_funds} without funds",
                    if *all { "run now" } else { "due run" }
                ),
                t.success,
            ),
            MonitorEvent::Clock(ClockEvent {
                now,
                offset_secs,
                reason,
            }) => stamped_line(
                t,
                now,
                format!(
                    "CLOCK {reason}: now {now} (offset +{})",
                    describe_seconds(*offset_secs)
                ),
                t.info,
            ),
            MonitorEvent::Lagged { missed } => {
                Line::from(Span::styled(format!("{missed} events lost"), t.warning))
            }
        }
    }

    fn draw_log(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let t = ctx.theme;
        let [list, detail] =
            Layout::vertical([Constraint::Percentage(55), Constraint::Min(0)]).areas(area);
        let shown = self.shown_indexes();
        let title = format!(" Requests ({}) · Tab: state ", shown.len());
        let b = block(t, title, true);
        let inner = b.inner(list);
        frame.render_widget(b, list);
        if shown.is_empty() {
            let text = match self.stream {
                StreamState::Live => {
                    "No request yet: send one from the console (1) and it appears here."
                }
                _ => "Waiting for the event stream …",
            };
            frame.render_widget(Paragraph::new(Span::styled(text, t.dim)), inner);
        } else {
            let rows = usize::from(inner.height).max(1);
            let at = shown.iter().position(|i| *i == self.selected).unwrap_or(0);
            let first = at.saturating_sub(rows - 1);
            let lines: Vec<Line> = shown
                .iter()
                .skip(first)
                .take(rows)
                .map(|&i| {
                    let line = self.row(&self.events[i], usize::from(inner.width), ctx);
                    if i == self.selected {
                        line.style(t.selected)
                    } else {
                        line
                    }
                })
                .collect();
            frame.render_widget(Paragraph::new(lines), inner);
        }
        let b = block(
            t,
            " Verifier: the request as the sandbox checked it ".into(),
            false,
        );
        let lines = match self.selected_event() {
            Some(MonitorEvent::Request(r)) => verifier_lines(r, t),
            Some(_) => vec![Line::from(Span::styled(
                "Not a request: nothing was verified.",
                t.dim,
            ))],
            None => Vec::new(),
        };
        frame.render_widget(
            Paragraph::new(lines).wrap(Wrap { trim: false }).block(b),
            detail,
        );
    }

    fn draw_state(&self, frame: &mut Frame, area: Rect, t: &Theme) {
        let b = block(t, " Sandbox state · Tab: log · r: read again ".into(), true);
        let inner = b.inner(area);
        frame.render_widget(b, area);
        let Some(s) = &self.sandbox else {
            let text = match &self.error {
                Some(e) => Span::styled(
                    format!("The sandbox's state could not be read: {e}"),
                    t.error,
                ),
                None => Span::styled("Reading the sandbox's state …", t.dim),
            };
            frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), inner);
            return;
        };
        if s.state_withheld.is_some() {
            frame.render_widget(
                Paragraph::new(Span::styled(STATE_WITHHELD, t.info)).wrap(Wrap { trim: true }),
                inner,
            );
            return;
        }
        let lines = state_lines(&s.state, t);
        let scroll = self
            .state_scroll
            .min(lines.len().saturating_sub(usize::from(inner.height)));
        frame.render_widget(
            Paragraph::new(lines.into_iter().skip(scroll).collect::<Vec<_>>()),
            inner,
        );
    }
}

/// The verifier's breakdown of one request.
fn verifier_lines(r: &RequestEvent, t: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{} {} ", r.method, r.path), t.header_name),
        Span::styled(format!("→ {}", r.status), status_style(t, r.status)),
        Span::styled(
            r.code
                .as_deref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default(),
            t.warning,
        ),
        Span::styled(
            format!("  X-Request-ID {}", r.request_id.as_deref().unwrap_or("–")),
            t.dim,
        ),
    ])];
    lines.push(match (&r.verify, r.path.starts_with("/v1")) {
        (Some(step), _) => Line::from(vec![
            Span::styled("✘ failed check: ", t.error),
            Span::styled(step.clone(), t.error),
        ]),
        (None, true) => Line::from(Span::styled(
            "✔ signature verified (certificate, keyId, Digest, Date, signature)",
            t.success,
        )),
        (None, false) => Line::from(Span::styled("not signed: an SCA page or a link", t.dim)),
    });
    if r.injected {
        lines.push(Line::from(Span::styled(
            format!(
                "⚠ answered by fault rule {}, not by the sandbox's rules",
                r.fault.as_deref().unwrap_or("?")
            ),
            t.warning,
        )));
    }
    match &r.signing_string {
        Some(s) => {
            lines.push(Line::from(Span::styled(
                "Signing string as the server rebuilt it:",
                t.dim,
            )));
            lines.extend(
                s.lines()
                    .map(|l| Line::from(Span::styled(format!("  {l}"), t.json_string))),
            );
        }
        None if r.path.starts_with("/v1") => lines.push(Line::from(Span::styled(
            "No signing string: a header the Signature lists is missing.",
            t.dim,
        ))),
        None => {}
    }
    lines
}

/// The spans of one row of the state browser, from the resource's JSON.
type RowOf<'a> = dyn Fn(&Value) -> Vec<Span<'static>> + 'a;

/// The state browser's lines: customers (with agreements), consents, payments, baskets.
fn state_lines(state: &Value, t: &Theme) -> Vec<Line<'static>> {
    let s = |v: &Value, k: &str| v[k].as_str().unwrap_or("–").to_string();
    // The id and the status of a resource, padded.
    let head = |v: &Value, id: &str, status: &str, w: usize| {
        vec![
            Span::raw(format!("  {}  ", s(v, id))),
            Span::styled(pad(&s(v, status), w), t.json_literal),
        ]
    };
    let sca = |v: &Value| {
        Span::styled(
            pad(&format!("sca {}", s(v, "scaStatus")), 20),
            t.json_literal,
        )
    };
    let customer = |c: &Value| {
        let agreements: Vec<String> = c["agreements"]
            .as_array()
            .map(|a| a.iter().map(|x| s(x, "name")).collect())
            .unwrap_or_default();
        let mut text = format!(
            "  {}  {}  {}",
            pad(&s(c, "customerNumber"), 12),
            pad(&s(c, "customerType"), 10),
            s(c, "customerName")
        );
        if !agreements.is_empty() {
            text.push_str(&format!("  · agreements: {}", agreements.join(", ")));
        }
        vec![Span::raw(text)]
    };
    let consent = |c: &Value| {
        let mut spans = head(c, "consentId", "consentStatus", 16);
        spans.push(Span::styled(
            format!("PSU-ID {}  {}", s(c, "psuId"), s(c, "createdAt")),
            t.dim,
        ));
        spans
    };
    let payment = |p: &Value| {
        let amount = &p["instructedAmount"];
        let mut spans = head(p, "paymentId", "transactionStatus", 6);
        spans.push(sca(p));
        spans.push(Span::raw(pad(
            &format!("{} {}", s(amount, "amount"), s(amount, "currency")),
            18,
        )));
        spans.push(Span::styled(
            format!("{}/{}", s(p, "paymentService"), s(p, "paymentProduct")),
            t.dim,
        ));
        spans
    };
    let basket = |b: &Value| {
        let n = b["paymentIds"].as_array().map_or(0, Vec::len);
        let mut spans = head(b, "basketId", "transactionStatus", 6);
        spans.push(sca(b));
        spans.push(Span::styled(format!("{n} payments"), t.dim));
        spans
    };
    let sections: [(&str, &str, &RowOf); 4] = [
        ("Customers", "customers", &customer),
        ("Consents", "consents", &consent),
        ("Payments", "payments", &payment),
        ("Signing baskets", "baskets", &basket),
    ];
    let mut lines = Vec::new();
    for (title, key, row) in sections {
        let items = state[key].as_array().cloned().unwrap_or_default();
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        // The state is paginated: say so when the page holds fewer than the list.
        let count = match state["totals"][key].as_u64() {
            Some(total) if total > items.len() as u64 => format!("{} of {total}", items.len()),
            _ => items.len().to_string(),
        };
        lines.push(Line::from(Span::styled(
            format!("{title} ({count})"),
            t.group,
        )));
        lines.extend(items.iter().map(|v| Line::from(row(v))));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_take_units_and_plain_seconds() {
        assert_eq!(parse_offset("90m"), Ok(5_400));
        assert_eq!(parse_offset("2h"), Ok(7_200));
        assert_eq!(parse_offset("1d 6h"), Ok(108_000));
        assert_eq!(parse_offset("1h30min"), Ok(5_400));
        assert_eq!(parse_offset("45"), Ok(45));
        assert!(parse_offset("").is_err());
        assert!(parse_offset("2 weeks").is_err());
        assert!(parse_offset("0").is_err());
        assert!(parse_offset("401d").is_err());
        assert!(parse_offset("h").is_err());
    }
}
