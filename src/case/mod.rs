//! Case bundles: one file that carries a support case from the person who met a problem to
//! the person who looks at it (issue 11, "Case bundles").
//!
//! `psd2-console case export --out FILE [HISTORY-ID...|last|--session] [--pseudonymize]`
//! ([`export::export`]) writes a gzip-compressed tar archive (`.tar.gz`, written atomically,
//! mode 0600: it holds PSU data) with these members ([`bundle`]):
//!
//! | Member | What |
//! |---|---|
//! | `manifest.json` | [`bundle::Manifest`]: format version, creation time, console version, profile, target, sandbox clock, the exchanges |
//! | `exchanges.json` | the exchanges as the history stores them (`Signature` values already redacted), [`exchanges::CaseExchange`] |
//! | `exchanges.har` | the same exchanges as HAR 1.2 ([`crate::client::export::har`]) |
//! | `tpp-certificate.pem` | the profile's TPP certificate, public part only |
//! | `sandbox.sqlite3` | the sandbox's state, copied with SQLite's online backup API ([`crate::sandbox::bundle::copy_state`], or `GET /v1/sandbox/snapshot` of a `sandbox serve`), when the target is the embedded sandbox or a `sandbox serve` on loopback |
//!
//! A bundle never holds a private key or a `Signature` value: the certificate is written from
//! its DER alone, and the history redacts `Signature` before it stores an exchange.
//!
//! `psd2-console case open FILE --into DIR [--force]` ([`open::open_into`]) makes an
//! isolated home in `DIR` (the layout of [`crate::profile::Paths::under`], used with
//! `PSD2_CONSOLE_HOME=DIR`): a history holding the exchanges, the embedded sandbox's state
//! replaced by the snapshot, and a profile [`CASE_PROFILE`] on the embedded sandbox.
//! `psd2-console --case FILE` opens a bundle into a fresh directory under the data directory
//! ([`open::open_fresh`]) and starts the console on it.
//!
//! This module is a composition layer like [`crate::embedded`]: it knows both the client's
//! history and the sandbox's state.

pub mod bundle;
pub mod cli;
pub mod exchanges;
pub mod export;
pub mod open;
pub mod pseudo;

use std::path::PathBuf;

/// The profile a case is opened on: the embedded sandbox (`<config>/profiles/case.toml`).
pub(crate) const CASE_PROFILE: &str = "Case";

/// What can go wrong with a case bundle. Each message names the file or the value at fault;
/// the underlying error is the `source` (printed after it by `{:#}`, not repeated in it).
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// A file could not be read or written.
    #[error("{}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// SQLite failed on the history, the sandbox state or its copy.
    #[error("{what}")]
    Sqlite {
        /// Which database, and what was being done.
        what: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The history cannot be opened.
    #[error(transparent)]
    History(#[from] crate::client::history::HistoryOpenError),
    /// The output file exists (the user's files are never overwritten without `--force`).
    #[error("not overwriting {} (give --force to replace it)", .0.display())]
    Exists(PathBuf),
    /// `case open --into DIR` on a directory that holds something.
    #[error("{} is not empty (give --force to open the case into it anyway)", .0.display())]
    NotEmpty(PathBuf),
    /// An exchange asked for is not in the history.
    #[error("no history entry {0} (see `psd2-console history`)")]
    NoEntry(String),
    /// Nothing to export.
    #[error("the history is empty: nothing to export")]
    Empty,
    /// The file is not a case bundle this console reads.
    #[error("{} is not a case bundle: {reason}", path.display())]
    NotABundle {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The profile's credentials or HTTP client could not be set up.
    #[error(transparent)]
    Client(#[from] crate::client::ClientError),
    /// The bundled or generated certificate cannot be read.
    #[error(transparent)]
    Cert(#[from] crate::cert::CertError),
    /// `GET /v1/sandbox/snapshot` did not answer 200.
    #[error("the sandbox at {url} did not give its snapshot: HTTP {status}: {text}")]
    SnapshotRefused {
        /// The snapshot URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the answer's body.
        text: String,
    },
    /// The manifest or exchanges cannot be (de)serialized.
    #[error("{what}")]
    Json {
        /// Which member.
        what: &'static str,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
}

impl CaseError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> CaseError {
        let path = path.into();
        move |source| CaseError::Io { path, source }
    }

    /// A SQLite error while doing `what`.
    pub(crate) fn sqlite(what: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> CaseError {
        let what = what.into();
        move |source| CaseError::Sqlite { what, source }
    }
}
