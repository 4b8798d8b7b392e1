//! Reading a recorded request for the doctor: a HAR 1.2 file (an entry's request, its
//! `startedDateTime` and its recorded `response`), a cURL command, a Postman item, raw HTTP
//! text (request line, headers, a blank line, the body: `Content-Length` bytes of it when
//! given), all through [`crate::client::recorded::read`], the reader `send --as-given` uses
//! too, so both see the same bytes; or a history entry.

use crate::client::history::HistoryEntry;
use crate::client::import::ImportError;

use super::{RecordedClock, RecordedRequest};

/// Why a recorded request could not be read (the `doctor` command exits 2).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file (or standard input) could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file, or `-` for standard input.
        path: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Not a HAR file, a cURL command, a Postman collection nor raw HTTP, or a malformed one
    /// (e.g. a HAR entry whose `request` is not a request object).
    #[error(transparent)]
    Import(#[from] ImportError),
    /// `--entry N` beyond the requests of the file.
    #[error("{source_name} holds {count} request(s): there is no entry {entry}")]
    NoEntry {
        /// The file.
        source_name: String,
        /// The entry asked for (1-based).
        entry: usize,
        /// Requests in the file.
        count: usize,
    },
}

/// Reads the `entry`-th (1-based) request of `bytes` ([`crate::client::recorded::read`]).
///
/// Errors: [`InputError`] for text in none of the forms read, a malformed one, or an entry
/// that does not exist.
pub fn parse(bytes: &[u8], source_name: &str, entry: usize) -> Result<RecordedRequest, InputError> {
    let requests = crate::client::recorded::read(bytes, source_name)?.requests;
    let count = requests.len();
    entry
        .checked_sub(1)
        .and_then(|i| requests.into_iter().nth(i))
        .ok_or_else(|| InputError::NoEntry {
            source_name: source_name.to_string(),
            entry,
            count,
        })
}

/// A history entry as a recorded request (its `Signature` is redacted: the signature checks
/// say so instead of failing).
pub fn from_history(entry: &HistoryEntry) -> RecordedRequest {
    RecordedRequest {
        name: format!("history {}", entry.id),
        method: entry.method.clone(),
        url: entry.url.clone(),
        path_and_query: entry.path_and_query.clone(),
        headers: entry.request_headers.clone(),
        body: entry.request_body.clone(),
        sent_at: Some(crate::cert::from_unix_seconds(entry.at)),
        source: format!("history entry {} ({})", entry.id, entry.profile),
        response: Some(super::RecordedResponse {
            status: entry.status,
            headers: entry.response_headers.clone(),
            body: entry.response_body.clone(),
        }),
        clock: RecordedClock {
            signed_at: entry.signed_at.map(crate::cert::from_unix_seconds),
            offset_secs: entry.clock_offset_secs,
        },
    }
}
