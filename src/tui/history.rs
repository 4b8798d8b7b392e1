//! The history screen (`3`): every exchange sent, newest first, with a search box, a detail
//! pane, re-send, diff of two responses, cURL export, and the import of requests from a
//! file.
//!
//! Keys (rows of [`super::keymap::Scope::HistoryScreen`]):
//! - `↑`/`↓`/`k`/`j` move, `PgUp`/`PgDn` scroll the detail pane (or the diff);
//! - `/` types a search (path, status or body text, via [`History::list`]); `Enter` keeps
//!   it, `Esc` clears it;
//! - `Enter` opens the exchange in the console: its operation selected, its parameters and
//!   body filled in, its response shown;
//! - `r` re-sends it ([`Action::ResendHistory`]): the runner prepares it again with
//!   [`crate::client::export::reprepare`], so it gets a fresh `Date`, `X-Request-ID`,
//!   `Digest` and `Signature`, and the CURRENT session's `TPP-Session-ID`, `PSU-ID` and
//!   `PSU-Corporate-ID` (the stored session may be over; an SCA done now applies);
//! - `m` marks it, `d` diffs the marked exchange's response with the highlighted one's
//!   (status, headers, pretty JSON body; a line diff shown in an overlay, `Esc` closes);
//! - `x` exports it as cURL, signed afresh ([`Action::ExportHistoryCurl`]), to a file in the
//!   data dir;
//! - `i` asks for a file (Postman collection, HAR, cURL), lists its requests; `Enter` sends
//!   the highlighted one re-signed with the active profile ([`Action::SendImported`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell as TableCell, Clear, Paragraph, Row, Table, Wrap};

use super::component::{Action, Component, Confirm, Ctx, Effect, OpenExchange};
pub use super::history_view::HistoryView;
use super::history_view::{DiffView, ImportList, Input, Kind};
use super::keymap::Command;
use super::presenter::ScreenMask;
use super::response::ResponseView;
use super::status_line::{Level, Message};
use super::theme::{Theme, rounded_block};
use crate::client::history::{BODY_CAP, History, HistoryEntry, HistorySummary, body_cut};
use crate::client::import::{self, ImportError, ImportedRequest, Variables};
use crate::client::{ClientError, Engine, Exchange, PreparedRequest, codegen, export};
use crate::signing::SignatureInspection;
use crate::xs2a::operations;

/// How many exchanges the screen loads (newest first).
pub const HISTORY_LIMIT: usize = 500;

/// Why the history screen could not read, export or import (the text is what the screen
/// shows).
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The SQLite query failed.
    #[error("reading the history failed: {0}")]
    Read(#[source] rusqlite::Error),
    /// There is no history: it could not be opened (why, as the engine reported it).
    #[error("The history is not available: {0}")]
    Unavailable(String),
    /// A writer panicked while it held the history.
    #[error("the history is not available (a writer failed)")]
    Poisoned,
    /// The background task reading it failed.
    #[error("internal error: {0}")]
    Task(#[source] tokio::task::JoinError),
    /// The recorded request no longer builds.
    #[error(transparent)]
    Request(#[from] ClientError),
    /// The export file could not be written.
    #[error(transparent)]
    Write(#[from] std::io::Error),
    /// The file to import cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    ReadFile {
        /// The file (with `~/` expanded).
        path: PathBuf,
        /// The read error.
        source: std::io::Error,
    },
    /// The file is not a Postman collection, HAR or cURL command (or a malformed one).
    #[error(transparent)]
    Import(#[from] ImportError),
}

/// What one read of the history screen brings ([`load`]): the rows of the list and the
/// whole exchange to show in the detail pane.
#[derive(Debug, Clone, Default)]
pub struct HistoryPage {
    /// The newest [`HISTORY_LIMIT`] matching exchanges, as the list draws them.
    pub rows: Vec<HistorySummary>,
    /// The whole exchange of the row to highlight: the one asked to keep when it is in
    /// `rows`, else the first; `None` when `rows` is empty.
    pub entry: Option<HistoryEntry>,
}

/// Reads the rows of the history screen: the newest [`HISTORY_LIMIT`] exchanges whose text
/// (URL, operation, status, headers, bodies: [`History::list`]) contains `query` (all when
/// it is empty), as summaries ([`History::list_summaries`]: no header or body is read or
/// decoded for them), with the whole first exchange for the detail. This is what the
/// runner does on [`Action::LoadHistory`], off the UI thread.
///
/// Errors: [`HistoryError::Read`] with the SQLite error.
pub fn load(history: &History, query: &str) -> Result<HistoryPage, HistoryError> {
    load_keeping(history, query, None)
}

/// [`load`], bringing the whole exchange `keep` (the highlighted one) instead of the first
/// when it is among the rows.
///
/// Errors: [`HistoryError::Read`] with the SQLite error.
pub fn load_keeping(
    history: &History,
    query: &str,
    keep: Option<i64>,
) -> Result<HistoryPage, HistoryError> {
    let q = query.trim();
    let rows = history
        .list_summaries((!q.is_empty()).then_some(q), HISTORY_LIMIT)
        .map_err(HistoryError::Read)?;
    let shown = keep
        .filter(|id| rows.iter().any(|r| r.id == *id))
        .or_else(|| rows.first().map(|r| r.id));
    let entry = match shown {
        Some(id) => history.get(id).map_err(HistoryError::Read)?,
        None => None,
    };
    Ok(HistoryPage { rows, entry })
}

/// The whole exchange `id` for the detail pane (`None` when it is gone). This is what the
/// runner does on [`Action::LoadHistoryEntry`], off the UI thread.
///
/// Errors: [`HistoryError::Read`] with the SQLite error.
pub fn load_entry(history: &History, id: i64) -> Result<Option<HistoryEntry>, HistoryError> {
    history.get(id).map_err(HistoryError::Read)
}

/// The whole exchange `id` read from `history` on the calling thread, for the runner's
/// re-send and export when the screen has not read it yet; `None` without a history, when
/// it is gone or the read fails.
pub(crate) fn read_entry(history: Option<&Arc<Mutex<History>>>, id: i64) -> Option<HistoryEntry> {
    history?.lock().ok()?.get(id).ok().flatten()
}

/// Runs `read` on the history off the async workers; without a history (it could not be
/// opened) the reason `unavailable` is the error.
async fn off_the_workers<T: Send + 'static>(
    history: Option<Arc<Mutex<History>>>,
    unavailable: Option<String>,
    read: impl FnOnce(&History) -> Result<T, HistoryError> + Send + 'static,
) -> Result<T, HistoryError> {
    let Some(h) = history else {
        let why = unavailable.unwrap_or_else(|| "no history file".into());
        return Err(HistoryError::Unavailable(why));
    };
    tokio::task::spawn_blocking(move || match h.lock() {
        Ok(h) => read(&h),
        Err(_) => Err(HistoryError::Poisoned),
    })
    .await
    .unwrap_or_else(|e| Err(HistoryError::Task(e)))
}

/// [`load_keeping`] off the async workers, for the runner: `(query, page)`; without a
/// history (it could not be opened) the reason `unavailable` is the error.
pub async fn load_async(
    history: Option<Arc<Mutex<History>>>,
    unavailable: Option<String>,
    query: String,
    keep: Option<i64>,
) -> (String, Result<HistoryPage, HistoryError>) {
    let q = query.clone();
    let page = off_the_workers(history, unavailable, move |h| load_keeping(h, &q, keep)).await;
    (query, page)
}

/// [`load_entry`] off the async workers, for the runner: `(id, entry)`.
pub async fn load_entry_async(
    history: Option<Arc<Mutex<History>>>,
    unavailable: Option<String>,
    id: i64,
) -> (i64, Result<Option<HistoryEntry>, HistoryError>) {
    (
        id,
        off_the_workers(history, unavailable, move |h| load_entry(h, id)).await,
    )
}

/// Title shown for a request that is not a catalogue operation.
pub const IMPORTED_TITLE: &str = "imported request";

/// The request of history `entry` prepared afresh on `engine` for a re-send (see
/// [`crate::client::export::reprepare`]), with the title of its operation.
///
/// Errors: the stored request no longer builds.
pub fn resend_request(
    engine: &Engine,
    entry: &HistoryEntry,
) -> Result<(PreparedRequest, &'static str), ClientError> {
    let title = operations::find(&entry.operation_id)
        .map(|o| o.title)
        .unwrap_or(IMPORTED_TITLE);
    export::reprepare(entry, &engine.request_context()).map(|r| (r, title))
}

/// Writes the cURL command of history `entry`, prepared and signed afresh now on `engine`,
/// to `<data dir>/exports/exchange-<id>-<unix seconds>.sh` (atomically, mode 0600) and
/// returns the path. The command runs as-is while the `Date` is within the bank's window
/// (60 s at the sandbox) and the target is up (the embedded sandbox lives as long as the
/// console).
///
/// Errors: the request no longer builds ([`HistoryError::Request`]), or the file cannot be
/// written ([`HistoryError::Write`]).
pub fn export_curl(engine: &Engine, entry: &HistoryEntry) -> Result<PathBuf, HistoryError> {
    let req = export::reprepare(entry, &engine.request_context())?;
    let secs = crate::cert::unix_seconds(std::time::SystemTime::now());
    let path = engine
        .paths
        .data
        .join("exports")
        .join(format!("exchange-{}-{secs}.sh", entry.id));
    let text = export::curl_script(&req);
    crate::fsutil::write_atomic(&path, text.as_bytes(), true)?;
    Ok(path)
}

/// The programs of the code export (Python, Node, Java, Go; [`crate::client::codegen`]) for
/// `req`, prepared on `engine`, written into the directory `dir` (created when missing); the
/// programs read the profile's certificate and key files when they run.
///
/// Errors: the profile names only one of certificate and key
/// ([`HistoryError::Request`]), or a file cannot be written ([`HistoryError::Write`]).
pub fn write_programs(
    engine: &Engine,
    req: &PreparedRequest,
    title: &str,
    dir: &std::path::Path,
) -> Result<(), HistoryError> {
    let (cert, key) = codegen::credential_files(&engine.profile, &engine.paths)?;
    let code = codegen::CodeRequest::from_prepared(
        req,
        title,
        engine.profile.sign_request_target,
        &cert,
        &key,
    );
    codegen::write_programs(dir, &code)?;
    Ok(())
}

/// `x` on the console: the request `req` (just prepared on `engine`) as a cURL script
/// `<data dir>/exports/request-<unix seconds>.sh` and, beside it, the directory
/// `request-<unix seconds>/` with the four programs that sign when they run
/// ([`write_programs`]). Returns (script, directory).
///
/// Errors: the profile names only one of certificate and key, or a file cannot be written.
pub fn export_request(
    engine: &Engine,
    req: &PreparedRequest,
    title: &str,
) -> Result<(PathBuf, PathBuf), HistoryError> {
    let secs = crate::cert::unix_seconds(std::time::SystemTime::now());
    let exports = engine.paths.data.join("exports");
    let script = exports.join(format!("request-{secs}.sh"));
    crate::fsutil::write_atomic(&script, export::curl_script(req).as_bytes(), true)?;
    let dir = exports.join(format!("request-{secs}"));
    let title = format!(
        "{} {} ({title}, profile {})",
        req.method, req.path_and_query, engine.profile.name
    );
    write_programs(engine, req, &title, &dir)?;
    Ok((script, dir))
}

/// `x` on the history screen: [`export_curl`], and beside the script the directory
/// `exchange-<id>-<unix seconds>/` with the four programs that sign when they run
/// ([`write_programs`]). Returns (script, directory).
///
/// Errors: those of [`export_curl`] and [`write_programs`].
pub fn export_exchange(
    engine: &Engine,
    entry: &HistoryEntry,
) -> Result<(PathBuf, PathBuf), HistoryError> {
    let script = export_curl(engine, entry)?;
    let dir = script.with_extension("");
    let req = export::reprepare(entry, &engine.request_context())?;
    let title = format!(
        "{} {} (psd2-console history #{}, profile {})",
        req.method, req.path_and_query, entry.id, entry.profile
    );
    write_programs(engine, &req, &title, &dir)?;
    Ok((script, dir))
}

/// Reads and imports the file at `path` (Postman collection, HAR or cURL commands), with the
/// collection's variables.
///
/// Errors: unreadable file ([`HistoryError::ReadFile`]) or unknown format
/// ([`HistoryError::Import`], naming the file).
pub fn import_path(path: &str) -> Result<(Vec<ImportedRequest>, Variables), HistoryError> {
    let expanded = expand_home(path);
    let text = std::fs::read_to_string(&expanded).map_err(|source| HistoryError::ReadFile {
        path: expanded.clone(),
        source,
    })?;
    let imported = import::import_file(&text, path)?;
    let variables = Variables::new(&imported.variables, &[]);
    Ok((imported.requests, variables))
}

/// `path` as typed, with a leading `~/` standing for `$HOME`.
fn expand_home(path: &str) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(rest))
            .unwrap_or_else(|| PathBuf::from(path)),
        None => PathBuf::from(path),
    }
}

/// An imported request (variables already resolved) prepared and signed on `engine`.
///
/// Errors: no path to send, or a body that is not JSON.
pub fn imported_request_prepared(
    engine: &Engine,
    request: &ImportedRequest,
) -> Result<PreparedRequest, ClientError> {
    crate::client::prepare_imported(request, &engine.request_context())
}

impl HistoryView {
    /// The search text (what [`load`] filters by).
    pub fn query(&self) -> &str {
        &self.query
    }

    /// Shows the rows read for search `query` (see [`load`]); a result for another query
    /// than the current one (typing went on meanwhile; spaces around it do not count) is
    /// ignored. Returns the read of the highlighted exchange when the page did not bring it
    /// ([`Action::LoadHistoryEntry`]), else [`Action::None`].
    pub fn set_rows(&mut self, query: &str, rows: Result<HistoryPage, HistoryError>) -> Action {
        if query.trim() != self.query.trim() {
            return Action::None;
        }
        let keep = self.rows.get(self.selected).map(|e| e.id);
        self.loaded = true;
        let mut page_entry = None;
        match rows {
            Ok(page) => {
                self.rows = page.rows;
                page_entry = page.entry;
                self.error = None;
            }
            Err(e) => {
                self.rows.clear();
                self.error = Some(e.to_string());
            }
        }
        self.selected = keep
            .and_then(|id| self.rows.iter().position(|e| e.id == id))
            .unwrap_or(0);
        let shown = self.rows.get(self.selected).map(|e| e.id);
        if let Some(e) = page_entry.filter(|e| Some(e.id) == shown) {
            self.current = Some(e);
        }
        self.after_move()
    }

    /// Shows the whole exchange `id` read for the detail (ignored unless it is still the
    /// highlighted one).
    pub fn set_entry(&mut self, id: i64, entry: Result<Option<HistoryEntry>, HistoryError>) {
        if self.highlighted_row().map(|e| e.id) != Some(id) {
            return;
        }
        match entry {
            Ok(Some(e)) => {
                self.current = Some(e);
                self.refresh_detail();
            }
            Ok(None) => {
                self.current = None;
                self.detail = vec![(
                    Kind::Text,
                    format!("Exchange #{id} is no longer in the history."),
                )];
            }
            Err(e) => {
                self.current = None;
                self.detail = vec![(Kind::Text, e.to_string())];
            }
        }
    }

    /// After the highlighted row changed (or the rows did): the detail of its whole
    /// exchange when it has been read (the current or the marked one), else the read of it.
    fn after_move(&mut self) -> Action {
        let Some(id) = self.highlighted_row().map(|e| e.id) else {
            self.current = None;
            self.refresh_detail();
            return Action::None;
        };
        if self.current.as_ref().is_some_and(|e| e.id == id) {
            // Already shown: keep the detail and its scroll.
            if self.detail.is_empty() || self.detail_for != Some(id) {
                self.refresh_detail();
            }
            return Action::None;
        }
        if let Some(m) = self.marked_entry.as_ref().filter(|e| e.id == id) {
            self.current = Some(m.clone());
            self.refresh_detail();
            return Action::None;
        }
        self.current = None;
        self.refresh_detail();
        Action::LoadHistoryEntry(id)
    }

    /// The rows shown, newest first.
    pub fn rows(&self) -> &[HistorySummary] {
        &self.rows
    }

    /// The whole exchange with history id `id`, if it has been read (the highlighted or the
    /// marked one).
    pub fn entry(&self, id: i64) -> Option<&HistoryEntry> {
        self.current
            .as_ref()
            .filter(|e| e.id == id)
            .or_else(|| self.marked_entry.as_ref().filter(|e| e.id == id))
    }

    /// The whole highlighted exchange, once read.
    pub fn highlighted(&self) -> Option<&HistoryEntry> {
        let id = self.highlighted_row()?.id;
        self.current.as_ref().filter(|e| e.id == id)
    }

    /// The highlighted row.
    pub fn highlighted_row(&self) -> Option<&HistorySummary> {
        self.rows.get(self.selected)
    }

    /// Whether the diff overlay is shown.
    pub fn diff_visible(&self) -> bool {
        self.diff.is_some()
    }

    /// Lists the requests imported from `source` (a file) in the import overlay, or says why
    /// the file could not be imported.
    pub(crate) fn set_imported(
        &mut self,
        source: &str,
        result: Result<(Vec<ImportedRequest>, Variables), HistoryError>,
        ctx: &mut Ctx,
    ) {
        match result {
            Ok((requests, _)) if requests.is_empty() => {
                ctx.say(Level::Warning, format!("{source} holds no requests"))
            }
            Ok((requests, variables)) => {
                ctx.say(
                    Level::Success,
                    format!(
                        "{} request(s) imported from {source}: Enter sends the highlighted one with profile {}",
                        requests.len(),
                        ctx.status.profile
                    ),
                );
                self.import = Some(ImportList {
                    source: source.to_string(),
                    requests,
                    variables,
                    selected: 0,
                });
            }
            Err(e) => ctx.say(Level::Error, format!("Import failed: {e}")),
        }
    }

    /// The imported request at `index` of the import overlay, with its variables resolved
    /// (see [`crate::client::import::Variables::resolve`]), and the names of the variables
    /// without a value.
    pub fn imported_request(&self, index: usize) -> Option<(ImportedRequest, Vec<String>)> {
        let list = self.import.as_ref()?;
        let req = list.requests.get(index)?;
        let r = list.variables.resolve(req);
        Some((r.request, r.unknown))
    }

    /// Closes the import overlay (its request is being sent).
    pub(crate) fn close_import(&mut self) {
        self.import = None;
    }

    /// Says where a cURL export of exchange `id` was written, or why it failed.
    pub(crate) fn curl_exported(
        id: i64,
        result: Result<(PathBuf, PathBuf), HistoryError>,
        ctx: &mut Ctx,
    ) {
        match result {
            Ok((script, dir)) => ctx.say(
                Level::Success,
                format!(
                    "cURL of #{id}, signed now, written to {} (run it within 60 s); programs that sign when they run (Python, Node, Java, Go) in {}",
                    script.display(),
                    dir.display()
                ),
            ),
            Err(e) => ctx.say(
                Level::Error,
                format!("cURL and code export of #{id} failed: {e}"),
            ),
        }
    }

    /// `r`: the re-send of the highlighted exchange, or the question to ask first when it
    /// was recorded under another profile (another certificate and target, issue 8 item 15).
    fn resend(&mut self, ctx: &mut Ctx) -> Effect {
        let Some((id, recorded)) = self.highlighted_row().map(|e| (e.id, e.profile.clone())) else {
            return Effect::None;
        };
        if ctx.busy() {
            return Effect::None;
        }
        if recorded == ctx.status.profile {
            return Effect::Run(Action::ResendHistory(id));
        }
        let known = ctx.profiles.contains(&recorded);
        let active = &ctx.status.profile;
        let (question, note) = if known {
            (
                format!("#{id} was recorded under profile {recorded}; send it with {recorded}?"),
                format!(
                    "y: switch to {recorded} and send · a: send with the active profile {active} · other keys cancel"
                ),
            )
        } else {
            (
                format!(
                    "#{id} was recorded under profile {recorded}, which is not loaded; send it with the active profile {active}?"
                ),
                format!("a or y: send with {active} · other keys cancel"),
            )
        };
        Effect::Ask {
            what: Confirm::ResendOtherProfile {
                id,
                recorded: known.then_some(recorded),
            },
            question,
            note,
        }
    }

    /// Commands while the diff overlay is open; `None` for the ones it does not take.
    fn diff_command(&mut self, cmd: Command) -> Option<Effect> {
        let d = self.diff.as_mut()?;
        let page = self.viewport.get().saturating_sub(1).max(1);
        let max = d.lines.len().saturating_sub(1);
        match cmd {
            Command::Up => d.scroll = d.scroll.saturating_sub(1),
            Command::Down => d.scroll = (d.scroll + 1).min(max),
            Command::PageUp => d.scroll = d.scroll.saturating_sub(page),
            Command::PageDown => d.scroll = (d.scroll + page).min(max),
            Command::Top => d.scroll = 0,
            Command::Bottom => d.scroll = max,
            Command::Dismiss | Command::HistoryDiff | Command::HistoryDoctor => self.diff = None,
            _ => return None,
        }
        Some(Effect::None)
    }

    fn import_command(&mut self, cmd: Command, ctx: &mut Ctx) -> Option<Effect> {
        let list = self.import.as_mut()?;
        let n = list.requests.len();
        match cmd {
            Command::Up => list.selected = list.selected.saturating_sub(1),
            Command::Down => list.selected = (list.selected + 1).min(n.saturating_sub(1)),
            Command::Dismiss => self.import = None,
            Command::HistoryDoctor => self.open_import_doctor(ctx),
            Command::HistoryOpen => {
                if !ctx.busy() {
                    return Some(Effect::Run(Action::SendImported(list.selected)));
                }
            }
            _ => return None,
        }
        Some(Effect::None)
    }

    fn refresh_detail(&mut self) {
        self.detail_scroll = 0;
        self.detail_for = self.highlighted().map(|e| e.id);
        self.detail = match (self.highlighted(), self.highlighted_row()) {
            (Some(e), _) => detail_lines(e),
            (None, Some(_)) => vec![(Kind::Text, "Loading …".to_string())],
            (None, None) => Vec::new(),
        };
    }

    fn mark(&mut self, ctx: &mut Ctx) {
        match self.highlighted_row().map(|e| e.id) {
            Some(id) if self.marked == Some(id) => {
                self.marked = None;
                self.marked_entry = None;
                ctx.say(Level::Info, format!("Exchange #{id} unmarked"));
            }
            Some(id) => {
                self.marked = Some(id);
                self.marked_entry = self.highlighted().cloned();
                ctx.say(
                    Level::Info,
                    format!("Exchange #{id} marked: highlight another and press d to diff"),
                );
            }
            None => {}
        }
    }

    /// `c`: the doctor's checks of the highlighted request in the overlay the diff uses
    /// (`crate::doctor::diagnose`; the stored Signature is redacted, so the signature and
    /// keyId checks show as not checked), and the conformance lint of its recorded answer.
    fn open_doctor(&mut self, ctx: &mut Ctx) {
        let Some(e) = self.highlighted() else {
            ctx.say(Level::Info, "No exchange to check");
            return;
        };
        let d = crate::doctor::diagnose(
            &crate::doctor::input::from_history(e),
            &crate::doctor::Options::default(),
        );
        self.diff = Some(DiffView {
            title: format!(" Doctor: #{} {} {} ", e.id, e.method, path_of(e)),
            lines: doctor_lines(&d),
            scroll: 0,
        });
    }

    /// `c` on the import list: the doctor's checks of the highlighted imported request
    /// before it is sent, as the file recorded it (`crate::doctor::input::parse` of the
    /// file: every header kept, the original `Signature`, `Date` and `Digest` too; a HAR
    /// entry's `startedDateTime` as the send time and its recorded answer linted), the same
    /// report as `psd2-console doctor FILE --entry N`. The file is read again (it was
    /// imported from disk a moment ago).
    fn open_import_doctor(&mut self, ctx: &mut Ctx) {
        let Some(list) = &self.import else {
            return;
        };
        let entry = list.selected + 1;
        let recorded = std::fs::read(expand_home(&list.source))
            .map_err(|e| format!("cannot read {}: {e}", list.source))
            .and_then(|bytes| {
                crate::doctor::input::parse(&bytes, &list.source, entry).map_err(|e| e.to_string())
            });
        let r = match recorded {
            Ok(r) => r,
            Err(e) => {
                ctx.say(Level::Error, format!("Doctor: {e}"));
                return;
            }
        };
        let d = crate::doctor::diagnose(&r, &crate::doctor::Options::default());
        self.diff = Some(DiffView {
            title: format!(" Doctor: {} · {} {} ", r.source, r.method, r.path()),
            lines: doctor_lines(&d),
            scroll: 0,
        });
    }
}

/// The doctor overlay's lines of diagnosis `d`: one per check (✔/✘/⚠, id, message, rule),
/// the lint of the recorded answer when there is one, then the verdict.
fn doctor_lines(d: &crate::doctor::Diagnosis) -> Vec<(Kind, String)> {
    let width = d.checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut lines: Vec<(Kind, String)> = d
        .checks
        .iter()
        .map(|c| {
            let kind = match c.status {
                crate::doctor::Status::Pass => Kind::Added,
                crate::doctor::Status::Fail => Kind::Removed,
                crate::doctor::Status::Warn => Kind::Header,
            };
            (
                kind,
                format!(
                    "{} {:<width$}  {}  [{}]",
                    c.status.mark(),
                    c.id,
                    c.message,
                    c.rule
                ),
            )
        })
        .collect();
    if let Some(r) = &d.response {
        lines.push((Kind::Text, String::new()));
        lines.push((Kind::Heading, format!("answer {}: {}", r.status, r.summary)));
        lines.extend(r.findings.iter().map(|f| (Kind::Text, format!("  {f}"))));
    }
    lines.push((Kind::Text, String::new()));
    lines.push((Kind::Heading, format!("verdict: {}", d.verdict.message)));
    lines
}

impl HistoryView {
    fn open_diff(&mut self, ctx: &mut Ctx) {
        let Some(marked) = self.marked else {
            ctx.say(
                Level::Info,
                "Mark an exchange with m first, then highlight another and press d",
            );
            return;
        };
        if self.highlighted_row().is_some() && self.highlighted().is_none() {
            ctx.say(Level::Info, "The highlighted exchange is still being read");
            return;
        }
        let (Some(a), Some(b)) = (self.entry(marked), self.highlighted()) else {
            ctx.say(
                Level::Warning,
                format!("The marked exchange #{marked} is not in the list (clear the search)"),
            );
            return;
        };
        let title = format!(
            " Diff of the responses: #{} {} {} (−) → #{} {} {} (+) ",
            a.id,
            a.status,
            path_of(a),
            b.id,
            b.status,
            path_of(b)
        );
        self.diff = Some(DiffView {
            title,
            lines: diff_lines(a, b),
            scroll: 0,
        });
    }
}

/// `Enter`: the highlighted exchange for the console, its operation (when it is one of the
/// catalogue) with its parameters and body, and its response.
fn open_in_console(e: &HistoryEntry) -> OpenExchange {
    let exchange = Exchange {
        status: e.status,
        headers: e.response_headers.clone(),
        body: e.response_body.clone(),
        elapsed: std::time::Duration::from_millis(e.elapsed_ms),
        json: serde_json::from_slice(&e.response_body).ok(),
    };
    let request = PreparedRequest {
        operation_id: e.operation_id.clone(),
        params: e.params.clone(),
        method: e.method.clone(),
        url: e.url.clone(),
        path_and_query: e.path_and_query.clone(),
        headers: e.request_headers.clone(),
        body: e.request_body.clone(),
        inspection: SignatureInspection::default(),
        signed_for: None,
    };
    let op = operations::find(&e.operation_id);
    let (level, text) = match op {
        Some(op) => match body_cut(&e.request_body) {
            Some((size, sha)) => (
                Level::Warning,
                format!(
                    "Exchange #{} opened: {}; its body ({size} bytes, SHA-256 {sha}) was cut to {BODY_CAP} bytes in the history: the form has the first {BODY_CAP}",
                    e.id, op.title
                ),
            ),
            None if e.request_body.len() > BODY_CAP => (
                Level::Warning,
                format!(
                    "Exchange #{} opened: {}; its body of {} bytes is in the form cut to {BODY_CAP}",
                    e.id,
                    op.title,
                    e.request_body.len()
                ),
            ),
            None => (
                Level::Info,
                format!(
                    "Exchange #{} opened: {} with its parameters; s sends it again",
                    e.id, op.title
                ),
            ),
        },
        None => (
            Level::Info,
            format!(
                "Exchange #{} is an imported request, not a catalogue operation: its response is shown; r on the history screen re-sends it",
                e.id
            ),
        ),
    };
    // At most BODY_CAP bytes go into the form (entries stored before bodies were capped can
    // hold more), so the editor stays responsive.
    let body = &e.request_body[..e.request_body.len().min(BODY_CAP)];
    let title = op.map_or(IMPORTED_TITLE, |o| o.title);
    OpenExchange {
        op,
        params: e.params.clone(),
        body: (!body.is_empty()).then(|| String::from_utf8_lossy(body).into_owned()),
        view: ResponseView::from_exchange(title, &request, &exchange),
        message: Message { level, text },
    }
}

impl Component for HistoryView {
    /// The search and import boxes take keys first while one is open.
    fn input(&mut self, key: &KeyEvent, _ctx: &mut Ctx) -> Option<Effect> {
        let input = self.input?;
        let text = match input {
            Input::Search => &mut self.query,
            Input::ImportPath => &mut self.path,
        };
        let typed = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        // What the search asks of the history before the key ([`load`] trims it): a key that
        // leaves it as it was (a space at either end, `Ctrl-U` or `Backspace` on an empty
        // box) reads nothing again.
        let searched = (input == Input::Search).then(|| text.trim().to_string());
        let changed = match key.code {
            KeyCode::Char(c) if typed => {
                text.push(c);
                true
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                text.clear();
                true
            }
            KeyCode::Backspace => text.pop().is_some(),
            KeyCode::Enter => {
                self.input = None;
                let path = self.path.trim();
                return Some(match input {
                    Input::ImportPath if !path.is_empty() => {
                        Effect::Run(Action::ImportFile(path.to_string()))
                    }
                    _ => Effect::None,
                });
            }
            KeyCode::Esc => {
                self.input = None;
                if input == Input::Search && !self.query.is_empty() {
                    self.query.clear();
                    return Some(Effect::Run(Action::LoadHistory));
                }
                return Some(Effect::None);
            }
            _ => false,
        };
        let changed = changed && searched.is_none_or(|old| old != self.query.trim());
        Some(if changed && input == Input::Search {
            Effect::Run(Action::LoadHistory)
        } else {
            Effect::None
        })
    }

    fn typing(&self) -> bool {
        self.input.is_some()
    }

    fn handle(&mut self, cmd: Command, ctx: &mut Ctx) -> Option<Effect> {
        // The diff or doctor overlay is drawn above the import list (the doctor of an
        // imported request opens from it), so it takes the keys first.
        if self.diff.is_some() {
            return self.diff_command(cmd);
        }
        if self.import.is_some() {
            return self.import_command(cmd, ctx);
        }
        let n = self.rows.len();
        let page = self.viewport.get().saturating_sub(1).max(1);
        match cmd {
            Command::Up | Command::Down => {
                let next = if cmd == Command::Up {
                    self.selected.saturating_sub(1)
                } else {
                    (self.selected + 1).min(n.saturating_sub(1))
                };
                if next != self.selected {
                    self.selected = next;
                    let read = self.after_move();
                    if read != Action::None {
                        return Some(Effect::Run(read));
                    }
                }
            }
            Command::PageUp => self.detail_scroll = self.detail_scroll.saturating_sub(page),
            Command::PageDown => {
                self.detail_scroll =
                    (self.detail_scroll + page).min(self.detail.len().saturating_sub(1))
            }
            Command::Top => self.detail_scroll = 0,
            Command::Bottom => self.detail_scroll = self.detail.len().saturating_sub(1),
            Command::HistorySearch => self.input = Some(Input::Search),
            Command::HistoryImport => {
                // A new path each time: the box starts empty (the last one was imported).
                self.path.clear();
                self.input = Some(Input::ImportPath);
            }
            Command::Dismiss => {
                if !self.query.is_empty() {
                    self.query.clear();
                    return Some(Effect::Run(Action::LoadHistory));
                }
            }
            Command::HistoryMark => self.mark(ctx),
            Command::HistoryDiff => self.open_diff(ctx),
            Command::HistoryDoctor => self.open_doctor(ctx),
            Command::HistoryOpen => {
                if let Some(e) = self.highlighted() {
                    return Some(Effect::OpenExchange(Box::new(open_in_console(e))));
                }
            }
            Command::HistoryResend => {
                if let Some(e) = self.highlighted()
                    && let Some((size, sha)) = body_cut(&e.request_body)
                {
                    ctx.say(
                        Level::Warning,
                        format!(
                            "#{} not re-sent: its request body ({size} bytes, SHA-256 {sha}) was cut to {BODY_CAP} bytes in the history",
                            e.id
                        ),
                    );
                } else {
                    return Some(self.resend(ctx));
                }
            }
            Command::HistoryExportCurl => {
                if let Some(id) = self.highlighted_row().map(|e| e.id) {
                    return Some(Effect::Run(Action::ExportHistoryCurl(id)));
                }
            }
            _ => return None,
        }
        Some(Effect::None)
    }

    /// Draws the history screen into `area` (between the status bar and the footer).
    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let t = ctx.theme;
        let mask = &ctx.screen_mask;
        let v = self;
        let [search, main] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
        self.draw_search(frame, search, t);
        let (list_area, detail_area) = if main.width >= 120 {
            let [a, b] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(main);
            (a, b)
        } else {
            let [a, b] =
                Layout::vertical([Constraint::Percentage(45), Constraint::Min(0)]).areas(main);
            (a, b)
        };
        let block = |title: String| rounded_block(title, t.border, t.title);
        let list_block = block(format!(
            " Exchanges ({}{}) ",
            v.rows.len(),
            if v.rows.len() >= HISTORY_LIMIT {
                "+"
            } else {
                ""
            }
        ))
        .border_style(t.border_focused);
        if let Some(e) = &v.error {
            frame.render_widget(
                Paragraph::new(Span::styled(e.clone(), t.error)).block(list_block),
                list_area,
            );
        } else if v.rows.is_empty() {
            let text = if !v.loaded {
                "Loading …"
            } else if v.query.is_empty() {
                "No exchanges yet: send a request from the console (1) and it appears here."
            } else {
                "No exchange matches the search (Esc clears it)."
            };
            frame.render_widget(
                Paragraph::new(Span::styled(text, t.dim)).block(list_block),
                list_area,
            );
        } else {
            let inner_h = list_area.height.saturating_sub(3) as usize;
            let rows: Vec<Row> = in_view(&v.rows, v.selected, inner_h.max(1))
                .map(|(i, e)| {
                    let mark = if v.marked == Some(e.id) { "●" } else { " " };
                    let row = Row::new(vec![
                        TableCell::from(format!("{mark}{}", time_of(e.at))),
                        TableCell::from(e.profile.clone()),
                        TableCell::from(Span::styled(e.method.clone(), t.method(&e.method))),
                        TableCell::from(mask.text(&e.path_and_query).into_owned()),
                        TableCell::from(Span::styled(
                            e.status.to_string(),
                            t.http_status(e.status),
                        )),
                        TableCell::from(format!("{} ms", e.elapsed_ms)),
                    ]);
                    if i == v.selected {
                        row.style(t.selected)
                    } else {
                        row
                    }
                })
                .collect();
            let header =
                Row::new(["  time (UTC)", "profile", "method", "path", "st", "time"]).style(t.dim);
            let table = Table::new(
                rows,
                [
                    Constraint::Length(15),
                    Constraint::Length(12),
                    Constraint::Length(6),
                    Constraint::Fill(1),
                    Constraint::Length(3),
                    Constraint::Length(8),
                ],
            )
            .header(header)
            .block(list_block);
            frame.render_widget(table, list_area);
        }
        let detail_title = match self.highlighted_row() {
            Some(e) => format!(" Exchange #{} ", e.id),
            None => " Exchange ".to_string(),
        };
        let inner_h = detail_area.height.saturating_sub(2) as usize;
        v.viewport.set(inner_h);
        let lines = styled_lines(t, mask, &v.detail, v.detail_scroll, inner_h);
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(block(detail_title)),
            detail_area,
        );
        if let Some(list) = &v.import {
            draw_import_list(frame, main, list, t, mask);
        }
        if let Some(d) = &v.diff {
            self.draw_diff(frame, main, d, t, mask);
        }
    }
}

impl HistoryView {
    fn draw_search(&self, frame: &mut Frame, area: Rect, t: &Theme) {
        let v = self;
        let line = match v.input {
            Some(Input::Search) => Line::from(vec![
                Span::styled(" Search: ", t.key),
                Span::styled(format!("{}▏", v.query), t.input_active),
                Span::styled("  Enter keeps · Esc clears", t.dim),
            ]),
            Some(Input::ImportPath) => Line::from(vec![
                Span::styled(" Import file (Postman, HAR, cURL): ", t.key),
                Span::styled(format!("{}▏", v.path), t.input_active),
                Span::styled("  Enter imports · Esc cancels", t.dim),
            ]),
            None if !v.query.is_empty() => Line::from(vec![
                Span::styled(" Search: ", t.dim),
                Span::styled(v.query.clone(), t.input),
                Span::styled("  (/ edits · Esc clears)", t.dim),
            ]),
            None => Line::from(Span::styled(
                " / search by path, status or body · Enter opens · r re-sends · m marks, d diffs · x exports cURL · i imports",
                t.dim,
            )),
        };
        frame.render_widget(Paragraph::new(line), area);
    }

    fn draw_diff(&self, frame: &mut Frame, area: Rect, d: &DiffView, t: &Theme, mask: &ScreenMask) {
        let r = inset(area, 2, 1);
        cover(frame, area, t);
        let inner_h = r.height.saturating_sub(2) as usize;
        self.viewport.set(inner_h);
        let lines = styled_lines(t, mask, &d.lines, d.scroll, inner_h);
        let block = rounded_block(d.title.clone(), t.modal_border, t.title)
            .title_bottom(Span::styled(" ↑/↓ PgUp/PgDn scroll · Esc closes ", t.dim));
        // Long lines (a doctor's check, a diffed body line) wrap rather than being cut.
        frame.render_widget(
            Paragraph::new(lines)
                .style(t.base)
                .wrap(Wrap { trim: false })
                .block(block),
            r,
        );
    }
}

fn draw_import_list(
    frame: &mut Frame,
    area: Rect,
    list: &ImportList,
    t: &Theme,
    mask: &ScreenMask,
) {
    let r = inset(area, 4, 2);
    cover(frame, area, t);
    let inner_h = r.height.saturating_sub(2) as usize;
    let lines: Vec<Line> = in_view(&list.requests, list.selected, inner_h)
        .map(|(i, req)| {
            let (url, _) = list.variables.display_url(req);
            let line = Line::from(vec![
                Span::styled(format!(" {:<6} ", req.method), t.method(&req.method)),
                Span::raw(format!("{:<40} ", req.name)),
                Span::styled(mask.text(&url).into_owned(), t.dim),
            ]);
            if i == list.selected {
                line.style(t.selected)
            } else {
                line
            }
        })
        .collect();
    let block = rounded_block(
        format!(" Imported from {} ({}) ", list.source, list.requests.len()),
        t.modal_border,
        t.title,
    )
    .title_bottom(Span::styled(
        " ↑/↓ choose · Enter sends it re-signed with the active profile · Esc closes · c doctor ",
        t.dim,
    ));
    frame.render_widget(Paragraph::new(lines).style(t.base).block(block), r);
}

/// Clears the whole screen area under an overlay of the history screen, not only the
/// overlay: the panes underneath must not show through its margins.
fn cover(frame: &mut Frame, area: Rect, t: &Theme) {
    frame.render_widget(Clear, area);
    frame.render_widget(Block::new().style(t.base), area);
}

/// The items of a list `rows` high that keep `selected` in view, with their indexes.
fn in_view<T>(items: &[T], selected: usize, rows: usize) -> impl Iterator<Item = (usize, &T)> {
    let first = selected.saturating_sub(rows.saturating_sub(1));
    items.iter().enumerate().skip(first).take(rows)
}

/// `rows` lines of `lines` from `from` on, coloured by kind, masked by `mask` (presenter
/// mode).
fn styled_lines(
    t: &Theme,
    mask: &ScreenMask,
    lines: &[(Kind, String)],
    from: usize,
    rows: usize,
) -> Vec<Line<'static>> {
    lines
        .iter()
        .skip(from)
        .take(rows)
        .map(|(k, s)| styled_line(t, *k, &mask.text(s)))
        .collect()
}

fn styled_line(t: &Theme, kind: Kind, text: &str) -> Line<'static> {
    let style = match kind {
        Kind::Heading => t.title.add_modifier(Modifier::BOLD),
        Kind::Header => t.header_name,
        Kind::Text => t.base,
        Kind::Added => t.success,
        Kind::Removed => t.error,
    };
    Line::from(Span::styled(text.to_string(), style))
}

fn inset(area: Rect, dx: u16, dy: u16) -> Rect {
    Rect {
        x: area.x + dx.min(area.width / 4),
        y: area.y + dy.min(area.height / 4),
        width: area.width.saturating_sub(2 * dx.min(area.width / 4)),
        height: area.height.saturating_sub(2 * dy.min(area.height / 4)),
    }
}

/// `MM-DD HH:MM:SS` in UTC.
fn time_of(at: i64) -> String {
    chrono::DateTime::from_timestamp(at, 0)
        .map(|t| t.format("%m-%d %H:%M:%S").to_string())
        .unwrap_or_default()
}

/// The path and query of an exchange.
fn path_of(e: &HistoryEntry) -> &str {
    &e.path_and_query
}

fn status_text(status: u16) -> String {
    let reason = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    format!("{status} {reason}").trim_end().to_string()
}

/// A body as display lines: pretty JSON when it is JSON, else text; control characters
/// replaced.
///
/// A body longer than [`BODY_CAP`] (stored before bodies were capped) shows its first
/// `BODY_CAP` bytes as text and its size: never a JSON tree of 50 MB.
fn body_lines(body: &[u8]) -> Vec<String> {
    let text = if body.len() > BODY_CAP && body_cut(body).is_none() {
        format!(
            "{}\n[body of {} bytes: shown cut at {BODY_CAP}]",
            String::from_utf8_lossy(&body[..BODY_CAP]),
            body.len()
        )
    } else {
        match super::response::pretty_json(body) {
            Some(t) => t,
            None => String::from_utf8_lossy(body).into_owned(),
        }
    };
    text.lines()
        .map(|l| {
            // The detail pane wraps: a line of a megabyte would be thousands of rows drawn
            // every frame. Long lines are cut with their length.
            let (shown, rest) = match l.char_indices().nth(DETAIL_LINE_CHARS) {
                Some((i, _)) => (&l[..i], l[i..].chars().count()),
                None => (l, 0),
            };
            let mut out: String = shown
                .chars()
                .map(|c| if c.is_control() { '\u{fffd}' } else { c })
                .collect();
            if rest > 0 {
                out.push_str(&format!("… ({rest} more characters on this line)"));
            }
            out
        })
        .collect()
}

/// Characters of one body line the history detail shows.
const DETAIL_LINE_CHARS: usize = 2000;

/// `what`, and for a body cut in the history its whole size and SHA-256.
fn body_heading(what: &str, body: &[u8]) -> String {
    match body_cut(body) {
        Some((size, sha)) => format!(
            "{what}: body cut at {BODY_CAP} of {size} bytes in the history (SHA-256 of the whole {sha})"
        ),
        None => what.to_string(),
    }
}

fn detail_lines(e: &HistoryEntry) -> Vec<(Kind, String)> {
    let mut out = vec![
        (Kind::Heading, format!("{} {}", e.method, e.url)),
        (
            Kind::Text,
            format!(
                "{} UTC · profile {} · operation {} · {} · {} ms",
                chrono::DateTime::from_timestamp(e.at, 0)
                    .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
                    .unwrap_or_default(),
                e.profile,
                e.operation_id,
                status_text(e.status),
                e.elapsed_ms
            ),
        ),
        (Kind::Text, String::new()),
        (Kind::Heading, "Request headers (Signature redacted)".into()),
    ];
    out.extend(
        e.request_headers
            .iter()
            .map(|(n, v)| (Kind::Header, format!("  {n}: {v}"))),
    );
    if !e.request_body.is_empty() {
        out.push((Kind::Heading, body_heading("Request body", &e.request_body)));
        out.extend(
            body_lines(&e.request_body)
                .into_iter()
                .map(|l| (Kind::Text, format!("  {l}"))),
        );
    }
    out.push((Kind::Text, String::new()));
    out.push((Kind::Heading, format!("Response {}", status_text(e.status))));
    out.extend(
        e.response_headers
            .iter()
            .map(|(n, v)| (Kind::Header, format!("  {n}: {v}"))),
    );
    if !e.response_body.is_empty() {
        out.push((
            Kind::Heading,
            body_heading("Response body", &e.response_body),
        ));
        out.extend(
            body_lines(&e.response_body)
                .into_iter()
                .map(|l| (Kind::Text, format!("  {l}"))),
        );
    }
    out
}

/// The text of a response that the diff compares: status, headers (sorted by name, lower
/// case), and the body as pretty JSON.
fn diff_text(e: &HistoryEntry) -> String {
    let mut headers: Vec<(String, &str)> = e
        .response_headers
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.as_str()))
        .collect();
    headers.sort();
    let mut out = format!("status: {}\n", status_text(e.status));
    for (n, v) in headers {
        out.push_str(&format!("{n}: {v}\n"));
    }
    out.push('\n');
    for l in body_lines(&e.response_body) {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// A line diff (the `similar` crate, Myers) of the responses of `old` and `new`: `-` lines
/// only in `old`, `+` lines only in `new`, the others with two spaces.
fn diff_lines(old: &HistoryEntry, new: &HistoryEntry) -> Vec<(Kind, String)> {
    let (a, b) = (diff_text(old), diff_text(new));
    let diff = similar::TextDiff::from_lines(&a, &b);
    diff.iter_all_changes()
        .map(|c| {
            let text = c.value().trim_end_matches('\n');
            match c.tag() {
                similar::ChangeTag::Delete => (Kind::Removed, format!("- {text}")),
                similar::ChangeTag::Insert => (Kind::Added, format!("+ {text}")),
                similar::ChangeTag::Equal => (Kind::Text, format!("  {text}")),
            }
        })
        .collect()
}
