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
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .with_timer(SecondCachedTime)
        .with_ansi(false);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(false).try_init(),
    };
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
