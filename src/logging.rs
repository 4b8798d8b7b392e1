//! Log output of the binary: `tracing` events (the sandbox's access log of
//! [`crate::sandbox::http::access_log`], storage failures, start-up) through `tracing-subscriber`.
//!
//! - `sandbox serve` logs to stderr, one line per event, as text or JSON ([`LogFormat`]).
//! - The console (TUI) logs to a file in its data directory ([`console_log_file`], mode 0600,
//!   appended), never to the terminal, whose screen the TUI owns.
//!
//! Both are filtered by `RUST_LOG` (`tracing_subscriber::EnvFilter` syntax, e.g.
//! `RUST_LOG=warn` or `RUST_LOG=psd2_console::access=off`); without it, [`DEFAULT_FILTER`].
//! Nothing logged carries key bytes or `Signature` values: the access log records method, path,
//! status, code, latency, `X-Request-ID` and the failed verification step only
//! (`tests/it/redaction.rs` checks the output of a real `sandbox serve`).

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tracing_subscriber::EnvFilter;

/// The filter used when `RUST_LOG` is unset or empty: `info` for this crate (one access-log
/// line per request), `warn` for libraries.
pub const DEFAULT_FILTER: &str = "warn,psd2_console=info";

/// How `sandbox serve` writes its log lines (`--log-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `tracing-subscriber`'s text lines: time, level, target, message, `key=value` fields.
    #[default]
    Text,
    /// One JSON object per line (`timestamp`, `level`, `target`, `fields` with `message` and
    /// the event's fields).
    Json,
}

/// The `RUST_LOG` filter, or [`DEFAULT_FILTER`] when unset, empty or invalid (an invalid
/// value is reported on stderr once, then the default applies).
fn filter() -> EnvFilter {
    match std::env::var("RUST_LOG") {
        Ok(v) if !v.trim().is_empty() => EnvFilter::try_new(&v).unwrap_or_else(|e| {
            eprintln!(
                "warning: RUST_LOG={v:?} is not a valid filter ({e}); using {DEFAULT_FILTER:?}"
            );
            EnvFilter::new(DEFAULT_FILTER)
        }),
        _ => EnvFilter::new(DEFAULT_FILTER),
    }
}

/// Installs the global subscriber for `sandbox serve`: stderr, `format`, `RUST_LOG`. Does
/// nothing when a subscriber is already installed.
pub fn init_stderr(format: LogFormat) {
    let lines = StderrLines::new();
    if let Some(b) = &lines.batch {
        // The first writer only: a second subscriber is not installed (below).
        let _ = ACTIVE.set(b.clone());
    }
    let batch_of_access_lines = lines.batch.clone();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(lines)
        .with_timer(SecondCachedTime)
        .with_ansi(false);
    match format {
        LogFormat::Text => {
            // This subscriber's access-log lines are written without their event
            // ([`access_line`]); only when it is the one installed.
            if builder.try_init().is_ok()
                && let Some(b) = batch_of_access_lines
            {
                let _ = DIRECT.set(b);
            }
        }
        LogFormat::Json => {
            let _ = builder.json().flatten_event(false).try_init();
        }
    }
}

/// The batch of `sandbox serve`'s text-format subscriber ([`init_stderr`]), into which
/// [`access_line`] writes access-log lines itself; unset for the JSON format, the console
/// and every other command.
static DIRECT: std::sync::OnceLock<Arc<Batch>> = std::sync::OnceLock::new();

/// The fields of one access-log line (the sandbox's `request` event: target
/// [`ACCESS_LOG_TARGET`], level `info`; see `crate::sandbox::http::access_log` for what each
/// holds).
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    /// Request method.
    pub method: &'a str,
    /// Request path without the query.
    pub path: &'a str,
    /// Response status code.
    pub status: u16,
    /// The first `tppMessages` code of an error answer, else `-`.
    pub code: &'a str,
    /// Microseconds from the request reaching the router to the response head.
    pub latency_us: u64,
    /// The `X-Request-ID` as logged, else `-`.
    pub request_id: &'a str,
    /// The failed signature-verification step, else `-`.
    pub verify: &'a str,
}

thread_local! {
    /// [`access_line`]'s line buffer (one per thread, reused: no allocation per line).
    static LINE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Writes the access-log line of `a` straight into the batch of `sandbox serve`'s text
/// subscriber, byte for byte the line tracing-subscriber's text format writes for its event
/// (the test below), without the `tracing` event and its field visits (issue 23: ~3.5 k instructions per request). Returns
/// `false` when the caller must emit the event instead: no such subscriber is installed (JSON,
/// the console, tests), or a span is entered (whose context the default format prints).
/// Filtering is `RUST_LOG`'s as for the event: a line `RUST_LOG` turns off is dropped here
/// (`true`, nothing written).
pub fn access_line(a: &Access<'_>) -> bool {
    let Some(batch) = DIRECT.get() else {
        return false;
    };
    if !tracing::enabled!(target: ACCESS_LOG_TARGET, tracing::Level::INFO) {
        return true;
    }
    if !tracing::Span::current().is_none() {
        return false;
    }
    let pushed = LINE.try_with(|cell| {
        let mut line = cell.try_borrow_mut().ok()?;
        line.clear();
        format_access_line(&SecondCachedTime, a, &mut line);
        Some(batch.push(line.as_bytes()))
    });
    // Nowhere to report a failed write: the log is standard error itself.
    matches!(pushed, Ok(Some(_)))
}

/// The text line of `a` as tracing-subscriber's full text format writes its event (time by
/// `timer`, the level padded to five characters, target, message, the fields in order with
/// text values quoted and escaped as `{:?}` does, numbers bare, newline), appended to `out`.
fn format_access_line<T: tracing_subscriber::fmt::time::FormatTime>(
    timer: &T,
    a: &Access<'_>,
    out: &mut String,
) {
    {
        let mut w = tracing_subscriber::fmt::format::Writer::new(out);
        if timer.format_time(&mut w).is_err() {
            let _ = w.write_str("<unknown time>");
        }
    }
    // The names are this line's own (none is `r#…` or `log.…`): written as they are.
    out.push_str("  INFO ");
    out.push_str(ACCESS_LOG_TARGET);
    out.push_str(": request method=");
    quoted(out, a.method);
    out.push_str(" path=");
    quoted(out, a.path);
    out.push_str(" status=");
    out.push_str(itoa::Buffer::new().format(a.status));
    out.push_str(" code=");
    quoted(out, a.code);
    out.push_str(" latency_us=");
    out.push_str(itoa::Buffer::new().format(a.latency_us));
    out.push_str(" request_id=");
    quoted(out, a.request_id);
    out.push_str(" verify=");
    quoted(out, a.verify);
    out.push('\n');
}

/// `value` as `{:?}` writes it (quoted, escaped), appended to `out`: copied between its
/// quotes when it needs no escape.
fn quoted(out: &mut String, value: &str) {
    if debug_is_quoted_as_is(value) {
        out.reserve(value.len() + 2);
        out.push('"');
        out.push_str(value);
        out.push('"');
    } else {
        use std::fmt::Write as _;
        let _ = write!(out, "{value:?}");
    }
}

/// The writer of `sandbox serve`'s lines ([`init_stderr`]): its own handle on the process's
/// standard error (a duplicate of file descriptor 2), so each line (formatted whole by
/// tracing-subscriber) goes out without taking the lock of the process's `Stderr`. The two
/// runtime workers waited on each other there for every access-log line: about one `futex`
/// per request under load (BENCHMARKS.md, "two quiet runs of every table, session 12").
///
/// Access-log lines ([`ACCESS_LOG_TARGET`], level `info`) are batched (issue 23: one
/// `write(2)` per request was the one system call a read made beyond the RSA floor's):
/// each is appended whole to a buffer that is written with one `write(2)` when it holds
/// [`BATCH_BYTES`], when a runtime worker thread is about to park, i.e. has nothing left to
/// do ([`flush_pending_lines`], installed as the runtime's `on_thread_park` hook), before
/// any other line (so lines keep their order) and when the process ends
/// ([`flush_pending_lines`] after the runtime has stopped). An idle sandbox therefore writes
/// each line right after its answer; under load a line waits for at most [`BATCH_BYTES`] of
/// others (a few milliseconds). A process that is killed (SIGKILL) while busy loses the
/// lines not yet written; a stopped one (SIGTERM, Ctrl-C) loses none. Every other line
/// (warnings, errors, start-up) is written at once, with one `write(2)`. Falls back to
/// `std::io::stderr`, unbatched, when the descriptor cannot be duplicated.
pub struct StderrLines {
    batch: Option<Arc<Batch>>,
}

/// Bytes of access-log lines kept before they are written ([`StderrLines`]): about 40
/// lines.
pub const BATCH_BYTES: usize = 8 * 1024;

/// The open file of a [`StderrLines`] and its access-log lines not yet written.
pub struct Batch {
    file: std::fs::File,
    pending: std::sync::Mutex<Vec<u8>>,
    /// `write(2)` calls made (tests).
    writes: std::sync::atomic::AtomicU64,
}

impl Batch {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes `bytes` with one `write_all`, counted.
    fn write_all(&self, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write as _;
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (&self.file).write_all(bytes)
    }

    /// Appends an access-log line; writes the batch once it holds [`BATCH_BYTES`].
    fn push(&self, line: &[u8]) -> std::io::Result<()> {
        let mut pending = self.lock();
        pending.extend_from_slice(line);
        if pending.len() < BATCH_BYTES {
            return Ok(());
        }
        let r = self.write_all(&pending);
        pending.clear();
        r
    }

    /// Writes `line` now, after the lines pending (one `write(2)` for both).
    fn write_now(&self, line: &[u8]) -> std::io::Result<()> {
        let mut pending = self.lock();
        if pending.is_empty() {
            return self.write_all(line);
        }
        pending.extend_from_slice(line);
        let r = self.write_all(&pending);
        pending.clear();
        r
    }

    /// Writes the lines pending, if any.
    fn flush(&self) {
        let mut pending = self.lock();
        if !pending.is_empty() {
            // Nowhere to report a failure: the log is standard error itself.
            let _ = self.write_all(&pending);
            pending.clear();
        }
    }
}

/// The [`StderrLines`] of the installed subscriber ([`init_stderr`]), for
/// [`flush_pending_lines`].
static ACTIVE: std::sync::OnceLock<Arc<Batch>> = std::sync::OnceLock::new();

/// Writes the access-log lines [`init_stderr`]'s writer holds ([`StderrLines`]); nothing
/// when there are none or no such writer is installed (the console, the other commands).
/// The binary's runtime calls it when a worker thread is about to park and once after the
/// runtime has stopped.
pub fn flush_pending_lines() {
    if let Some(batch) = ACTIVE.get() {
        batch.flush();
    }
}

impl StderrLines {
    /// A duplicate of the process's standard error.
    pub fn new() -> Self {
        use std::os::fd::AsFd as _;
        Self::of(
            std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .ok()
                .map(std::fs::File::from),
        )
    }

    /// Lines into `file` instead (tests).
    pub fn to(file: std::fs::File) -> Self {
        Self::of(Some(file))
    }

    fn of(file: Option<std::fs::File>) -> Self {
        Self {
            batch: file.map(|file| {
                Arc::new(Batch {
                    file,
                    pending: std::sync::Mutex::new(Vec::with_capacity(BATCH_BYTES + 1024)),
                    writes: std::sync::atomic::AtomicU64::new(0),
                })
            }),
        }
    }

    /// Writes the access-log lines held back (as [`flush_pending_lines`] does for the
    /// installed writer).
    pub fn flush(&self) {
        if let Some(b) = &self.batch {
            b.flush();
        }
    }

    /// How many `write(2)` calls the lines took so far (tests).
    pub fn writes(&self) -> u64 {
        self.batch
            .as_ref()
            .map_or(0, |b| b.writes.load(std::sync::atomic::Ordering::Relaxed))
    }
}

impl Default for StderrLines {
    fn default() -> Self {
        Self::new()
    }
}

/// One event's writer of [`StderrLines`].
pub enum StderrLine<'a> {
    /// An access-log line: into the batch.
    Batched(&'a Arc<Batch>),
    /// Any other line: written at once, after the batch.
    Now(&'a Arc<Batch>),
    /// The process's `Stderr` (the fallback).
    Std(std::io::Stderr),
}

impl std::io::Write for StderrLine<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            StderrLine::Batched(b) => b.push(buf).map(|()| buf.len()),
            StderrLine::Now(b) => b.write_now(buf).map(|()| buf.len()),
            StderrLine::Std(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            StderrLine::Batched(_) | StderrLine::Now(_) => Ok(()),
            StderrLine::Std(s) => s.flush(),
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for StderrLines {
    type Writer = StderrLine<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        match &self.batch {
            Some(b) => StderrLine::Now(b),
            None => StderrLine::Std(std::io::stderr()),
        }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
        match &self.batch {
            Some(b)
                if meta.target() == ACCESS_LOG_TARGET && *meta.level() == tracing::Level::INFO =>
            {
                StderrLine::Batched(b)
            }
            _ => self.make_writer(),
        }
    }
}

/// The target of the sandbox's access log (`crate::sandbox::http::access_log::ACCESS_TARGET`,
/// the same text: a unit test there checks it).
pub const ACCESS_LOG_TARGET: &str = "psd2_console::access";

/// Whether `{:?}` of `s` is `s` between double quotes: visible ASCII and space, no `"` or `\`.
fn debug_is_quoted_as_is(s: &str) -> bool {
    // Every byte looked at (no early exit), which the compiler can do several at a time.
    s.bytes().fold(true, |ok, b| {
        ok & (0x20..0x7f).contains(&b) & (b != b'"') & (b != b'\\')
    })
}

/// The time of a log line exactly as `tracing-subscriber`'s default timer writes it
/// (`2026-11-27T00:47:12.123456Z`, UTC, microseconds), with the date and time up to the second
/// formatted once per second and thread instead of once per line: the access log writes a
/// line per request (issue 23).
#[derive(Debug, Clone, Copy, Default)]
pub struct SecondCachedTime;

thread_local! {
    /// The second last written on this thread and its `YYYY-MM-DDTHH:MM:SS.` text.
    static LAST_SECOND: std::cell::RefCell<(i64, String)> =
        const { std::cell::RefCell::new((i64::MIN, String::new())) };
}

impl tracing_subscriber::fmt::time::FormatTime for SecondCachedTime {
    fn format_time(&self, w: &mut tracing_subscriber::fmt::format::Writer<'_>) -> std::fmt::Result {
        let now = chrono::Utc::now();
        let secs = now.timestamp();
        // Years 0–9999 only (as the default timer writes them); others go the slow way.
        if !(0..=9999).contains(&chrono::Datelike::year(&now)) {
            return tracing_subscriber::fmt::time::FormatTime::format_time(
                &tracing_subscriber::fmt::time::SystemTime,
                w,
            );
        }
        let micros = now.timestamp_subsec_micros().min(999_999);
        let mut digits = [b'0'; 7];
        let mut m = micros;
        for d in digits[..6].iter_mut().rev() {
            *d = b'0' + (m % 10) as u8;
            m /= 10;
        }
        digits[6] = b'Z';
        let tail = std::str::from_utf8(&digits).unwrap_or("000000Z");
        let written = LAST_SECOND.try_with(|cell| {
            let mut last = cell.try_borrow_mut().ok()?;
            if last.0 != secs || last.1.is_empty() {
                *last = (secs, now.format("%Y-%m-%dT%H:%M:%S.").to_string());
            }
            Some(w.write_str(&last.1))
        });
        match written {
            Ok(Some(r)) => r?,
            _ => w.write_str(&now.format("%Y-%m-%dT%H:%M:%S.").to_string())?,
        }
        w.write_str(tail)
    }
}

/// The console's log file: `<data dir>/console.log`.
pub fn console_log_file(data_dir: &Path) -> PathBuf {
    data_dir.join("console.log")
}

/// Installs the global subscriber for the console: text lines appended to `file` (created
/// with its directory, mode 0600 on Unix; an existing file's mode is set to 0600 too),
/// `RUST_LOG`, never the terminal.
///
/// Errors: the file cannot be created or opened.
pub fn init_file(file: &Path) -> std::io::Result<()> {
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let f = options.open(file)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::sync::Mutex::new(f))
        .with_ansi(false)
        .try_init();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_written_by_two_threads_at_once_arrive_whole_and_none_is_lost() {
        use std::io::Write as _;
        use tracing_subscriber::fmt::MakeWriter as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let lines = StderrLines::to(std::fs::File::create(&path).unwrap());
        std::thread::scope(|s| {
            for t in 0..2 {
                let lines = &lines;
                s.spawn(move || {
                    for i in 0..2000 {
                        let line = format!("thread={t} line={i} {}\n", "x".repeat(200));
                        lines.make_writer().write_all(line.as_bytes()).unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&path).unwrap();
        let got: Vec<&str> = text.lines().collect();
        assert_eq!(got.len(), 4000);
        for t in 0..2 {
            let mine: Vec<&str> = got
                .iter()
                .copied()
                .filter(|l| l.starts_with(&format!("thread={t} ")))
                .collect();
            assert_eq!(mine.len(), 2000, "every line of thread {t}, whole");
            for (i, l) in mine.iter().enumerate() {
                assert_eq!(*l, format!("thread={t} line={i} {}", "x".repeat(200)));
            }
        }
    }

    /// [`StderrLines`] shared with the test that reads its counters.
    struct Shared(Arc<StderrLines>);

    impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Shared {
        type Writer = StderrLine<'a>;
        fn make_writer(&'a self) -> Self::Writer {
            self.0.make_writer()
        }
        fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
            self.0.make_writer_for(meta)
        }
    }

    /// Access-log lines go out in batches (issue 23: one `write(2)` per request was the
    /// one system call a read made beyond the RSA floor's), whole and in order; any other
    /// line is written at once, after the access lines before it; what is held back is
    /// written by `flush` (the runtime's park hook and the end of the process).
    #[test]
    fn access_lines_are_written_in_batches_in_order_and_none_is_lost_by_a_flush() {
        use tracing_subscriber::fmt::MakeWriter as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let lines = Arc::new(StderrLines::to(std::fs::File::create(&path).unwrap()));
        let sub = tracing_subscriber::fmt()
            .with_writer(Shared(lines.clone()))
            .with_ansi(false)
            .with_max_level(tracing::Level::TRACE)
            .finish();
        tracing::subscriber::with_default(sub, || {
            for i in 0..1000u64 {
                tracing::info!(target: ACCESS_LOG_TARGET, n = i, "request");
            }
            tracing::warn!(target: "psd2_console::other", "after the first 1000");
            for i in 1000..1010u64 {
                tracing::info!(target: ACCESS_LOG_TARGET, n = i, "request");
            }
            // Not an access line (another level): written at once.
            tracing::warn!(target: ACCESS_LOG_TARGET, "odd");
            for i in 1010..1020u64 {
                tracing::info!(target: ACCESS_LOG_TARGET, n = i, "request");
            }
        });
        let before_flush = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            before_flush.lines().count(),
            1012,
            "the last ten access lines wait for the flush"
        );
        lines.flush();
        let text = std::fs::read_to_string(&path).unwrap();
        let got: Vec<&str> = text.lines().collect();
        assert_eq!(got.len(), 1022, "{text}");
        let access: Vec<&str> = got
            .iter()
            .copied()
            .filter(|l| l.contains(" INFO psd2_console::access: request n="))
            .collect();
        assert_eq!(access.len(), 1020);
        for (i, l) in access.iter().enumerate() {
            assert!(l.ends_with(&format!("request n={i}")), "{l}");
        }
        assert!(got[1000].contains("after the first 1000"), "{}", got[1000]);
        assert!(got[1011].contains("odd"), "{}", got[1011]);
        let writes = lines.writes();
        assert!(
            writes <= 1022 * 120 / BATCH_BYTES as u64 + 4,
            "{writes} writes for 1022 lines"
        );
        // Another flush writes nothing more.
        lines.flush();
        assert_eq!(lines.writes(), writes);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        // Lines made without their metadata are written at once.
        use std::io::Write as _;
        lines.make_writer().write_all(b"plain\n").unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("plain\n"));
    }

    /// A log sink for the tests.
    #[derive(Clone, Default)]
    struct Buf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[derive(Clone, Copy)]
    struct Fixed;

    impl tracing_subscriber::fmt::time::FormatTime for Fixed {
        fn format_time(
            &self,
            w: &mut tracing_subscriber::fmt::format::Writer<'_>,
        ) -> std::fmt::Result {
            w.write_str("2026-11-27T00:47:12.123456Z")
        }
    }

    /// [`access_line`]'s text (written without the event) is the line tracing-subscriber's
    /// own text format writes for the event, byte for byte, escapes included; without
    /// `sandbox serve`'s text subscriber installed it leaves the line to the event.
    #[test]
    fn the_access_line_written_without_its_event_is_the_events_line() {
        let cases = [
            (
                "GET",
                "/v1/accounts",
                200u16,
                "-",
                123u64,
                "99391c7e-ad88-49ec-a2ad-99ddcb1f7721",
                "-",
            ),
            (
                "POST",
                "/v1/a\"b\\c d",
                400,
                "FORMAT_ERROR",
                0,
                "é\u{7}x\u{1b}[31m",
                "SignatureInvalid",
            ),
            ("DELETE", "", 500, "", u64::MAX, "", ""),
            (
                "GET",
                "/sca/\t\n",
                429,
                "ACCESS_EXCEEDED",
                7,
                "\u{7f}~ !",
                "-",
            ),
        ];
        let theirs = Buf::default();
        let b = theirs.clone();
        let sub = tracing_subscriber::fmt()
            .with_writer(move || b.clone())
            .with_timer(Fixed)
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(sub, || {
            for (method, path, status, code, latency_us, request_id, verify) in cases {
                tracing::info!(
                    target: ACCESS_LOG_TARGET,
                    method,
                    path,
                    status,
                    code,
                    latency_us,
                    request_id,
                    verify,
                    "request"
                );
            }
        });
        let mut ours = String::new();
        for (method, path, status, code, latency_us, request_id, verify) in cases {
            let a = Access {
                method,
                path,
                status,
                code,
                latency_us,
                request_id,
                verify,
            };
            format_access_line(&Fixed, &a, &mut ours);
            assert!(!access_line(&a), "no text subscriber of sandbox serve here");
        }
        let theirs = String::from_utf8(theirs.0.lock().unwrap().clone()).unwrap();
        assert_eq!(ours.lines().count(), 4, "{ours}");
        assert_eq!(ours, theirs);
    }

    /// The console's log file: created 0600 in the data dir, receives the events (this is the
    /// only test of the library installing a global subscriber).
    #[test]
    fn console_logs_go_to_a_private_file_in_the_data_dir() {
        let dir = tempfile::tempdir().unwrap();
        let file = console_log_file(&dir.path().join("data"));
        init_file(&file).unwrap();
        tracing::warn!(target: "psd2_console::test", marker = "logging-file-test", "hello");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("logging-file-test"), "{text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }
}
