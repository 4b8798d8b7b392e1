//! History of exchanges: every request the console sends and the response it got, in SQLite
//! (`<data dir>/history.sqlite3`), with `Signature` values redacted. Private keys never reach
//! a request, so they cannot reach the history.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Exchange, PreparedRequest};

/// What replaces a redacted header value.
pub const REDACTED: &str = "[redacted]";

/// Headers whose values are never stored or exported (case-insensitive).
pub(crate) const REDACTED_HEADERS: [&str; 1] = ["signature"];

/// `headers` with the values of [`REDACTED_HEADERS`] replaced by [`REDACTED`].
pub fn redact(headers: &[(String, String)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            if REDACTED_HEADERS.iter().any(|r| n.eq_ignore_ascii_case(r)) {
                (n.clone(), REDACTED.to_string())
            } else {
                (n.clone(), v.clone())
            }
        })
        .collect()
}

/// Largest request or response body the history stores, in bytes (1 MiB). A longer body is
/// stored as its first `BODY_CAP` bytes and a note with the size and SHA-256 of the whole
/// ([`capped_body`]), so a 50 MB body neither fills the disk nor makes the history screen
/// slow (README, "History").
pub const BODY_CAP: usize = 1 << 20;

/// Start of the note that ends a cut body ([`capped_body`]).
pub(crate) const CUT_NOTE: &str = "\n[psd2-console history: body cut at ";

/// What the history stores of `body`: the body itself up to [`BODY_CAP`] bytes; else its
/// first `BODY_CAP` bytes followed by
/// `\n[psd2-console history: body cut at 1048576 of <size> bytes; SHA-256 of the whole body <hex>]`.
pub(crate) fn capped_body(body: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if body.len() <= BODY_CAP {
        return std::borrow::Cow::Borrowed(body);
    }
    let sha = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, body);
    let hex = hex::encode(sha);
    let mut out = Vec::with_capacity(BODY_CAP + 160);
    out.extend_from_slice(&body[..BODY_CAP]);
    out.extend_from_slice(
        format!(
            "{CUT_NOTE}{BODY_CAP} of {} bytes; SHA-256 of the whole body {hex}]",
            body.len()
        )
        .as_bytes(),
    );
    std::borrow::Cow::Owned(out)
}

/// The size and SHA-256 (hex) of the whole body when `stored` is a body cut by
/// [`capped_body`]; `None` for a body stored whole.
pub fn body_cut(stored: &[u8]) -> Option<(usize, String)> {
    let tail = stored.get(BODY_CAP..)?;
    let note = std::str::from_utf8(tail).ok()?.strip_prefix(CUT_NOTE)?;
    let rest = note.strip_prefix(&format!("{BODY_CAP} of "))?;
    let (size, rest) = rest.split_once(" bytes; SHA-256 of the whole body ")?;
    Some((size.parse().ok()?, rest.strip_suffix(']')?.to_string()))
}

/// A row to store, borrowed from an exchange or a [`HistoryEntry`].
struct NewRow<'a> {
    at: i64,
    profile: &'a str,
    operation_id: &'a str,
    params: &'a [(String, String)],
    method: &'a str,
    url: &'a str,
    path_and_query: &'a str,
    request_headers: &'a [(String, String)],
    request_body: &'a [u8],
    status: u16,
    response_headers: &'a [(String, String)],
    response_body: &'a [u8],
    elapsed_ms: u64,
    replay: Option<&'a ReplayInfo>,
    signed_at: Option<i64>,
    clock_offset_secs: Option<i64>,
    /// The TLS session as JSON.
    tls: Option<String>,
}

/// What the history keeps of a replay as given (`send --as-given FILE`,
/// [`crate::client::replay`]): where the request came from and which headers the console
/// changed. Stored in the columns `replay_of` and `changed_headers` (JSON list of names).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct ReplayInfo {
    /// The source: the file and the request's number in it, e.g. `capture.har#2`.
    pub replay_of: String,
    /// Names of the headers changed, added or removed, as in the recorded request (e.g.
    /// `Host`, `Date`, `Digest`, `TPP-Signature-Certificate`, `Signature`); empty when the
    /// request went byte for byte.
    pub changed_headers: Vec<String>,
}

/// One stored exchange.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HistoryEntry {
    /// Row id: the id `history`, `export` and `flow` take.
    pub id: i64,
    /// Seconds since the Unix epoch when the request was sent.
    pub at: i64,
    /// The name of the profile that sent it.
    pub profile: String,
    /// Catalogue operation id, or `raw` for imported requests.
    pub operation_id: String,
    /// Parameter values used (name → value), to prepare the request again.
    pub params: Vec<(String, String)>,
    /// HTTP method.
    pub method: String,
    /// Absolute URL as sent.
    pub url: String,
    /// Path and query as signed for `(request-target)`.
    pub path_and_query: String,
    /// Request headers as sent, `Signature` redacted.
    pub request_headers: Vec<(String, String)>,
    /// Request body bytes as sent (empty for none).
    pub request_body: Vec<u8>,
    /// HTTP status of the answer.
    pub status: u16,
    /// Response headers in wire order.
    pub response_headers: Vec<(String, String)>,
    /// Response body bytes.
    pub response_body: Vec<u8>,
    /// Milliseconds from sending to the whole answer received.
    pub elapsed_ms: u64,
    /// Seconds since the Unix epoch the request was signed for (its `Date`, unless one was
    /// typed): the sandbox's clock for an `embedded` profile, which `sandbox.clock.advance`
    /// moves ([`crate::client::SignedFor`]). `None` when unknown (older entries, replays
    /// sent with their recorded `Signature`).
    pub signed_at: Option<i64>,
    /// How far the signing clock stood from real time when signing, seconds (`signed_at`
    /// minus the real time; 0 unless a sandbox clock was moved); `None` when unknown.
    pub clock_offset_secs: Option<i64>,
}

/// What the History screen's list draws of an exchange ([`History::list_summaries`]): no
/// headers, no bodies, so a search over a large history reads and decodes a few hundred
/// bytes per row instead of whole exchanges. The full entry is [`History::get`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HistorySummary {
    /// Row id ([`HistoryEntry::id`]).
    pub id: i64,
    /// Seconds since the Unix epoch when the request was sent.
    pub at: i64,
    /// The name of the profile that sent it.
    pub profile: String,
    /// Catalogue operation id, or `raw` for imported requests.
    pub operation_id: String,
    /// HTTP method.
    pub method: String,
    /// Path and query as signed for `(request-target)`.
    pub path_and_query: String,
    /// HTTP status of the answer.
    pub status: u16,
    /// Milliseconds from sending to the whole answer received.
    pub elapsed_ms: u64,
}

impl From<&HistoryEntry> for HistorySummary {
    fn from(e: &HistoryEntry) -> Self {
        HistorySummary {
            id: e.id,
            at: e.at,
            profile: e.profile.clone(),
            operation_id: e.operation_id.clone(),
            method: e.method.clone(),
            path_and_query: e.path_and_query.clone(),
            status: e.status,
            elapsed_ms: e.elapsed_ms,
        }
    }
}

/// The columns [`History::summary_row`] reads, in its order (present in every schema
/// version).
const SUMMARY_COLUMNS: &str =
    "exchanges.id, at, profile, operation_id, method, path_and_query, status, elapsed_ms";

/// The history database.
pub struct History {
    conn: Connection,
    /// The schema version in force (`PRAGMA user_version`, [`SCHEMA_VERSION`] once
    /// migrated); a history opened read-only by [`History::open_existing`] may stay older.
    version: i64,
    /// What the last search did ([`History::last_search_work`]).
    work: std::cell::Cell<SearchWork>,
}

/// How a search of [`History::list`] was answered ([`SearchWork::path`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchPath {
    /// No search text: the newest rows.
    #[default]
    All,
    /// A history that could not be migrated: `LIKE` over the columns.
    Like,
    /// One or two characters: the texts scanned newest first.
    Scan,
    /// The trigram index's phrase query.
    Phrase,
    /// The texts of the last trigram's exchanges checked (`History::verified_ids`).
    Verified,
    /// The texts of a rare trigram's exchanges checked (`History::verified_ids`).
    RareTrigram,
    /// [`SearchPath::Verified`] tried, given up, then the phrase query: both paid.
    VerifiedThenPhrase,
}

/// The work of the last search ([`History::last_search_work`]), counted, not timed: for
/// the tests and the bench (BENCHMARKS.md, "r14/history").
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchWork {
    /// How it was answered.
    pub path: SearchPath,
    /// Exchanges whose search text was read and checked.
    pub texts_read: usize,
    /// Bytes of those texts.
    pub text_bytes: usize,
    /// Trigrams whose exchanges were counted to find a rare one.
    pub trigrams_counted: usize,
    /// SQLite virtual machine steps of the statements run (an FTS5 query's own work is a
    /// few steps: see `texts_read`).
    pub vm_steps: i64,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("History")
    }
}

/// Searches of at least this many characters may be answered by
/// [`History::verified_ids`] (shorter phrases have few trigrams: the index is quick).
const VERIFY_MIN_CHARS: usize = 12;

/// Most candidate exchanges [`History::verified_ids`] reads before it leaves the search to
/// the index's phrase query.
const VERIFY_MAX_ROWS: usize = 2_000;

/// Candidates of the last trigram [`History::verified_ids`] reads before it judges, from
/// how many of them hold the text, whether the limit would be reached within
/// [`VERIFY_MAX_ROWS`]; when not, it stops there (r14/history: before, such a key read
/// 2,000 texts and then ran the phrase query all the same).
const VERIFY_PROBE_ROWS: usize = 64;

/// A trigram found in fewer exchanges than this is "rare": when the last trigram's
/// candidates hold the text too seldom, [`History::verified_ids`] counts each trigram's
/// exchanges up to this many and, when one has fewer, checks the texts of those.
const RARE_TRIGRAM_DOCS: i64 = 256;

/// Most text (bytes) [`History::verified_ids`] reads before it leaves the search to the
/// index's phrase query.
const VERIFY_MAX_BYTES: usize = 16 << 20;

/// What [`History::verified_ids`] found and read.
#[derive(Debug, Default)]
struct Verified {
    /// The ids, newest first; `None` when this way did not apply or gave up.
    ids: Option<Vec<i64>>,
    /// Candidate exchanges whose text was read.
    texts_read: usize,
    /// Bytes of those texts.
    text_bytes: usize,
    /// Trigrams whose exchanges were counted ([`History::rarest_trigram`]).
    trigrams_counted: usize,
    /// The ids come from a rare trigram's exchanges, not the last trigram's.
    rare: bool,
    /// SQLite virtual machine steps of the candidates' queries.
    vm_steps: i64,
}

/// `text` as an FTS5 phrase: in double quotes, each `"` doubled.
fn phrase(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// UTF-8 lead bytes `0xC0..=0xFF` to their first bits, as SQLite decodes them
/// (`sqlite3Utf8Trans1`; FTS5's `FTS5_READ_UTF8`).
const UTF8_TRANS1: [u8; 64] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
];

/// Whether the trigram index would find the ASCII text `finder` looks for (built ASCII
/// case-insensitive, without NUL) in `text`, an exchange's search text as stored: the
/// characters as FTS5's trigram tokenizer reads them (`fts5TriTokenize`: UTF-8 decoded as
/// `FTS5_READ_UTF8` does, malformed sequences included; folded by
/// `sqlite3Fts5UnicodeFold(c, 0)`; a character folded to 0, NUL, skipped) hold it
/// consecutively. Of the characters beyond ASCII only U+017F (ſ) and U+212A (Kelvin sign)
/// fold into ASCII (`s`, `k`; the test `only_two_characters_beyond_ascii_fold_into_it`
/// checks it against SQLite); any other stands for itself, which an ASCII text never
/// matches. `folded` is scratch space.
fn trigram_text_holds(
    text: &[u8],
    finder: &aho_corasick::AhoCorasick,
    folded: &mut Vec<u8>,
) -> bool {
    if text.is_ascii() && memchr::memchr(0, text).is_none() {
        return finder.is_match(text);
    }
    folded.clear();
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        i += 1;
        let mut c = u32::from(b);
        if b >= 0xc0 {
            c = u32::from(UTF8_TRANS1[usize::from(b - 0xc0)]);
            while i < text.len() && text[i] & 0xc0 == 0x80 {
                c = (c << 6) + u32::from(text[i] & 0x3f);
                i += 1;
            }
            if c < 0x80 || (c & 0xFFFF_F800) == 0xD800 || (c & 0xFFFF_FFFE) == 0xFFFE {
                c = 0xFFFD;
            }
        }
        match c {
            0 => {}
            0x17F => folded.push(b's'),
            0x212A => folded.push(b'k'),
            // ASCII as it is (the finder ignores ASCII case); any other character as a byte
            // no ASCII text holds.
            c if c < 0x80 => folded.push(c as u8),
            _ => folded.push(0xFF),
        }
    }
    finder.is_match(&folded[..])
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS exchanges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    profile TEXT NOT NULL,
    operation_id TEXT NOT NULL,
    params TEXT NOT NULL,
    method TEXT NOT NULL,
    url TEXT NOT NULL,
    path_and_query TEXT NOT NULL,
    request_headers TEXT NOT NULL,
    request_body BLOB NOT NULL,
    status INTEGER NOT NULL,
    response_headers TEXT NOT NULL,
    response_body BLOB NOT NULL,
    elapsed_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS exchanges_at ON exchanges(at);
";

/// The schema version [`History::open`] migrates to (`PRAGMA user_version`): 0 is the
/// first schema ([`SCHEMA`]); 1 adds `replay_of` and `changed_headers` ([`ReplayInfo`])
/// and the search index `exchanges_fts`; 2 adds `sca_steps`, the PSU browser's steps on the
/// embedded sandbox's SCA pages ([`crate::sandbox_events::BrowserStep`]); 3 adds `signed_at` and
/// `clock_offset`, the time a request was signed for and its clock's offset from real
/// time ([`HistoryEntry::signed_at`], [`HistoryEntry::clock_offset_secs`]); 4 adds `tls`,
/// the TLS session of an HTTPS exchange as JSON ([`History::tls_session`]); 5 adds the
/// covering index `exchanges_summary` the History screen's list is read from
/// ([`History::list_summaries`]).
pub const SCHEMA_VERSION: i64 = 5;

/// Version 4 → 5: an index holding what the History screen's list draws of each exchange
/// ([`SUMMARY_COLUMNS`]), keyed by id. `status` and `elapsed_ms` are stored after the
/// bodies in a row, and SQLite reaches a column after a body of N bytes by reading the N /
/// 4 KiB overflow pages that hold it: read from this index instead, the list reads no body
/// page at all (about 80 bytes per exchange, not the whole exchange).
const MIGRATION_5: &str = "
CREATE INDEX IF NOT EXISTS exchanges_summary ON exchanges(id, at, profile, operation_id, method,
    path_and_query, status, elapsed_ms);
PRAGMA user_version = 5;";

/// Version 3 → 4: the TLS session of an HTTPS exchange (JSON of
/// [`crate::client::tls_session::TlsSession`]; NULL over plain HTTP and for older rows).
const MIGRATION_4: &str = "
ALTER TABLE exchanges ADD COLUMN tls TEXT;
PRAGMA user_version = 4;";

/// Version 2 → 3: when each request was signed for and the signing clock's offset from
/// real time (NULL for the rows already there: not known).
const MIGRATION_3: &str = "
ALTER TABLE exchanges ADD COLUMN signed_at INTEGER;
ALTER TABLE exchanges ADD COLUMN clock_offset INTEGER;
PRAGMA user_version = 3;";

/// Version 1 → 2: the browser's steps on the SCA pages, for the flow diagram (no form
/// field, no PSU data: the SCA id, the step, the page's status and the outcome).
const MIGRATION_2: &str = "
CREATE TABLE IF NOT EXISTS sca_steps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    sca_id TEXT NOT NULL,
    step TEXT NOT NULL,
    status INTEGER NOT NULL,
    outcome TEXT,
    code TEXT
);
CREATE INDEX IF NOT EXISTS sca_steps_at ON sca_steps(at);
PRAGMA user_version = 2;";

/// The text the search index holds for row `{r}` (`new` in the triggers, `exchanges` when
/// the index is built for existing rows): profile, operation id, method and URL, status,
/// request headers as `Name: value` lines (Signature values are stored redacted, so they
/// are not searchable), request body, response headers, response body, replay source.
const SEARCH_TEXT: &str = "coalesce({r}.profile, '') || char(10) || {r}.operation_id || char(10)
    || {r}.method || ' ' || {r}.url || char(10) || {r}.status || char(10)
    || CASE WHEN json_valid({r}.request_headers) THEN (SELECT coalesce(group_concat(
         json_extract(value, '$[0]') || ': ' || json_extract(value, '$[1]'), char(10)), '')
         FROM json_each({r}.request_headers)) ELSE {r}.request_headers END || char(10)
    || coalesce(CAST({r}.request_body AS TEXT), '') || char(10)
    || CASE WHEN json_valid({r}.response_headers) THEN (SELECT coalesce(group_concat(
         json_extract(value, '$[0]') || ': ' || json_extract(value, '$[1]'), char(10)), '')
         FROM json_each({r}.response_headers)) ELSE {r}.response_headers END || char(10)
    || coalesce(CAST({r}.response_body AS TEXT), '') || char(10) || coalesce({r}.replay_of, '')";

/// Version 0 → 1: the replay columns, and the search index (SQLite FTS5 with the trigram
/// tokenizer, so any substring of three or more characters is found, case-insensitively)
/// kept in step with `exchanges` by triggers and built for the rows already there.
fn migration_1() -> String {
    let text = |r: &str| SEARCH_TEXT.replace("{r}", r);
    format!(
        "ALTER TABLE exchanges ADD COLUMN replay_of TEXT;
         ALTER TABLE exchanges ADD COLUMN changed_headers TEXT;
         CREATE VIRTUAL TABLE exchanges_fts USING fts5(text, tokenize = 'trigram');
         CREATE TRIGGER exchanges_fts_insert AFTER INSERT ON exchanges BEGIN
           INSERT INTO exchanges_fts(rowid, text) VALUES (new.id, {new});
         END;
         CREATE TRIGGER exchanges_fts_update AFTER UPDATE ON exchanges BEGIN
           DELETE FROM exchanges_fts WHERE rowid = old.id;
           INSERT INTO exchanges_fts(rowid, text) VALUES (new.id, {new});
         END;
         CREATE TRIGGER exchanges_fts_delete AFTER DELETE ON exchanges BEGIN
           DELETE FROM exchanges_fts WHERE rowid = old.id;
         END;
         INSERT INTO exchanges_fts(rowid, text) SELECT id, {all} FROM exchanges;
         PRAGMA user_version = 1;",
        new = text("new"),
        all = text("exchanges"),
    )
}

/// Brings the history on `conn` to [`SCHEMA_VERSION`] in one `BEGIN IMMEDIATE`
/// transaction (the version is read again inside it, so two processes opening an old
/// history at once migrate it once); returns the version in force.
fn migrate(conn: &mut Connection) -> rusqlite::Result<i64> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current >= SCHEMA_VERSION {
        // Up to date: no write lock taken (`history` runs next to a console that writes).
        return Ok(current);
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version < 1 {
        tx.execute_batch(&migration_1())?;
    }
    if version < 2 {
        tx.execute_batch(MIGRATION_2)?;
    }
    if version < 3 {
        tx.execute_batch(MIGRATION_3)?;
    }
    if version < 4 {
        tx.execute_batch(MIGRATION_4)?;
    }
    if version < 5 {
        tx.execute_batch(MIGRATION_5)?;
    }
    tx.commit()?;
    Ok(version.max(SCHEMA_VERSION))
}

fn to_json(pairs: &[(String, String)]) -> String {
    serde_json::to_string(pairs).unwrap_or_else(|_| "[]".into())
}

fn from_json(text: &str) -> Vec<(String, String)> {
    serde_json::from_str(text).unwrap_or_default()
}

/// Why the history could not be opened. The message is one sentence naming the path.
#[derive(Debug, thiserror::Error)]
pub enum HistoryOpenError {
    /// A directory is where the history database should be.
    #[error("the history path {} is a directory, not a history database: move it away", .0.display())]
    IsDirectory(PathBuf),
    /// No history yet ([`History::open_existing`] creates nothing).
    #[error("no history yet: {} does not exist (send a request first)", .0.display())]
    Missing(PathBuf),
    /// SQLite could not open or read it; `message` says why ([`describe_open_error`]).
    #[error("{message}")]
    Sqlite {
        /// The sentence of [`describe_open_error`].
        message: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
}

impl HistoryOpenError {
    /// SQLite's `source` on the history at `path`, described ([`describe_open_error`]).
    fn sqlite(path: &Path, source: rusqlite::Error) -> Self {
        HistoryOpenError::Sqlite {
            message: describe_open_error(path, &source),
            source,
        }
    }
}

/// What is wrong with the history at `path`, in a sentence: a directory in its place, a
/// directory that cannot be written, a file that is not a database, or SQLite's own words.
pub(crate) fn describe_open_error(path: &Path, e: &rusqlite::Error) -> String {
    let shown = path.display();
    if path.is_dir() {
        return format!(
            "the history path {shown} is a directory, not a history database: move it away"
        );
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(d) = dir
        && !d.is_dir()
    {
        return format!(
            "cannot create the history {shown}: its directory {} cannot be created",
            d.display()
        );
    }
    let read_only = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().readonly())
            .unwrap_or(false)
    };
    if read_only(path) || dir.is_some_and(read_only) {
        return format!("cannot write the history {shown}: read-only ({e})");
    }
    if let rusqlite::Error::SqliteFailure(f, _) = e
        && f.code == rusqlite::ErrorCode::NotADatabase
    {
        return format!("the history {shown} is not a history database (SQLite): {e}");
    }
    format!("cannot open the history {shown}: {e}")
}

impl History {
    /// A history on `conn` at schema `version`.
    fn from_parts(conn: Connection, version: i64) -> Self {
        History {
            conn,
            version,
            work: std::cell::Cell::new(SearchWork::default()),
        }
    }

    /// What the last search ([`History::list`], [`History::list_summaries`],
    /// [`History::ids_by_index`]) did: how it was answered and how much it read.
    #[doc(hidden)]
    pub fn last_search_work(&self) -> SearchWork {
        self.work.get()
    }

    /// Opens (creating) the history at `path`. A new database file is created 0600 (it
    /// holds PSU-IDs and payment bodies); SQLite gives its `-wal` and `-shm` files the same
    /// mode. Existing files that are readable by others are tightened to 0600.
    ///
    /// Errors: [`HistoryOpenError::Sqlite`], a sentence naming the path and what is wrong
    /// with it ([`describe_open_error`]).
    pub fn open(path: &Path) -> Result<Self, HistoryOpenError> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        crate::fsutil::create_private(path);
        let mut conn = Connection::open(path).map_err(|e| HistoryOpenError::sqlite(path, e))?;
        let version = conn
            .pragma_update(None, "journal_mode", "WAL")
            .and_then(|()| conn.execute_batch(SCHEMA))
            .and_then(|()| migrate(&mut conn))
            .map_err(|e| HistoryOpenError::sqlite(path, e))?;
        crate::fsutil::tighten_sqlite(path);
        Ok(History::from_parts(conn, version))
    }

    /// Opens an existing history without creating anything (for read-only commands such as
    /// `history` and `export`). An older history is migrated ([`SCHEMA_VERSION`]) when it
    /// can be written; one that cannot is read as it is (search then scans the columns).
    ///
    /// Errors: no history at `path` yet, `path` is a directory or not a database, or it
    /// cannot be opened (each a [`HistoryOpenError`] whose sentence names the path).
    pub fn open_existing(path: &Path) -> Result<Self, HistoryOpenError> {
        if path.is_dir() {
            return Err(HistoryOpenError::IsDirectory(path.to_path_buf()));
        }
        if !path.exists() {
            return Err(HistoryOpenError::Missing(path.to_path_buf()));
        }
        let mut conn = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .or_else(|_| Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY))
        .map_err(|e| HistoryOpenError::sqlite(path, e))?;
        conn.query_row("SELECT count(*) FROM exchanges", [], |_| Ok(()))
            .map_err(|e| HistoryOpenError::sqlite(path, e))?;
        let version = match migrate(&mut conn) {
            Ok(v) => v,
            Err(_) => conn
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(|e| HistoryOpenError::sqlite(path, e))?,
        };
        Ok(History::from_parts(conn, version))
    }

    /// An in-memory history (tests).
    pub fn in_memory() -> rusqlite::Result<Self> {
        let mut conn = Connection::open_in_memory()?;
        conn.execute_batch(SCHEMA)?;
        let version = migrate(&mut conn)?;
        Ok(History::from_parts(conn, version))
    }

    /// The schema version in force ([`SCHEMA_VERSION`] unless the history could only be
    /// read).
    pub fn schema_version(&self) -> i64 {
        self.version
    }

    /// Stores an exchange (Signature redacted) and returns its id.
    pub fn record(
        &self,
        profile: &str,
        params: &[(String, String)],
        request: &PreparedRequest,
        response: &Exchange,
    ) -> rusqlite::Result<i64> {
        self.insert_exchange(profile, params, request, response, None, None)
    }

    /// [`History::record`] with the exchange's TLS session (`None` over plain HTTP), stored
    /// in the column `tls` ([`History::tls_session`]).
    pub fn record_tls(
        &self,
        profile: &str,
        params: &[(String, String)],
        request: &PreparedRequest,
        response: &Exchange,
        tls: Option<&crate::client::tls_session::TlsSession>,
    ) -> rusqlite::Result<i64> {
        self.insert_exchange(profile, params, request, response, None, tls)
    }

    /// The TLS session stored with entry `id` (an HTTPS exchange sent by a console that
    /// records it); `None` for plain HTTP, older rows and older histories.
    pub fn tls_session(
        &self,
        id: i64,
    ) -> rusqlite::Result<Option<crate::client::tls_session::TlsSession>> {
        if self.version < 4 {
            return Ok(None);
        }
        let text: Option<Option<String>> = self
            .conn
            .query_row("SELECT tls FROM exchanges WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(text.flatten().and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// [`History::record`] for a replay as given: also stores where it came from and which
    /// headers were changed ([`ReplayInfo`]). The request's `params` are stored (usually
    /// none).
    pub(crate) fn record_replay(
        &self,
        profile: &str,
        request: &PreparedRequest,
        response: &Exchange,
        replay: &ReplayInfo,
    ) -> rusqlite::Result<i64> {
        self.insert_exchange(
            profile,
            &request.params,
            request,
            response,
            Some(replay),
            None,
        )
    }

    /// The row of an exchange sent now.
    fn insert_exchange(
        &self,
        profile: &str,
        params: &[(String, String)],
        request: &PreparedRequest,
        response: &Exchange,
        replay: Option<&ReplayInfo>,
        tls: Option<&crate::client::tls_session::TlsSession>,
    ) -> rusqlite::Result<i64> {
        self.insert_row(NewRow {
            at: crate::cert::unix_seconds(SystemTime::now()),
            profile,
            operation_id: &request.operation_id,
            params,
            method: &request.method,
            url: &request.url,
            path_and_query: &request.path_and_query,
            request_headers: &request.headers,
            request_body: &request.body,
            status: response.status,
            response_headers: &response.headers,
            response_body: &response.body,
            elapsed_ms: u64::try_from(response.elapsed.as_millis()).unwrap_or(u64::MAX),
            replay,
            signed_at: request.signed_for.map(|s| crate::cert::unix_seconds(s.at)),
            clock_offset_secs: request.signed_for.map(|s| s.clock_offset_secs),
            tls: tls.and_then(|t| serde_json::to_string(t).ok()),
        })
    }

    /// What entry `id` replayed as given, or `None` for an ordinary exchange (or an entry
    /// of a history older than [`SCHEMA_VERSION`]).
    pub fn replay_info(&self, id: i64) -> rusqlite::Result<Option<ReplayInfo>> {
        if self.version < 1 {
            return Ok(None);
        }
        let row: Option<(Option<String>, Option<String>)> = self
            .conn
            .query_row(
                "SELECT replay_of, changed_headers FROM exchanges WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        Ok(row.and_then(|(of, changed)| {
            Some(ReplayInfo {
                replay_of: of?,
                changed_headers: changed
                    .and_then(|c| serde_json::from_str(&c).ok())
                    .unwrap_or_default(),
            })
        }))
    }

    /// Stores `entry` as given (its `id` is ignored; header values of
    /// [`REDACTED_HEADERS`] are redacted) and returns the new id. For imports and tests, where
    /// the time of the exchange is not now.
    pub fn insert(&self, entry: &HistoryEntry) -> rusqlite::Result<i64> {
        self.insert_row(NewRow {
            at: entry.at,
            profile: &entry.profile,
            operation_id: &entry.operation_id,
            params: &entry.params,
            method: &entry.method,
            url: &entry.url,
            path_and_query: &entry.path_and_query,
            request_headers: &entry.request_headers,
            request_body: &entry.request_body,
            status: entry.status,
            response_headers: &entry.response_headers,
            response_body: &entry.response_body,
            elapsed_ms: entry.elapsed_ms,
            replay: None,
            signed_at: entry.signed_at,
            clock_offset_secs: entry.clock_offset_secs,
            tls: None,
        })
    }

    /// The one INSERT, where every parameter and header list is redacted.
    fn insert_row(&self, r: NewRow<'_>) -> rusqlite::Result<i64> {
        let replay_of = r.replay.map(|i| i.replay_of.as_str());
        let changed = r
            .replay
            .map(|i| serde_json::to_string(&i.changed_headers).unwrap_or_else(|_| "[]".into()));
        // A history that could not be migrated lacks the newer columns: their parameters
        // are bound all the same (one parameter list for every schema) and not stored.
        let sql = if self.version >= 4 {
            "INSERT INTO exchanges (at, profile, operation_id, params, method, url, path_and_query,
               request_headers, request_body, status, response_headers, response_body, elapsed_ms,
               replay_of, changed_headers, signed_at, clock_offset, tls)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"
        } else if self.version >= 3 {
            "INSERT INTO exchanges (at, profile, operation_id, params, method, url, path_and_query,
               request_headers, request_body, status, response_headers, response_body, elapsed_ms,
               replay_of, changed_headers, signed_at, clock_offset)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17
             WHERE coalesce(?18, 1) IS NOT NULL"
        } else if self.version >= 1 {
            "INSERT INTO exchanges (at, profile, operation_id, params, method, url, path_and_query,
               request_headers, request_body, status, response_headers, response_body, elapsed_ms,
               replay_of, changed_headers)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15
             WHERE coalesce(?16, ?17, ?18, 1) IS NOT NULL"
        } else {
            "INSERT INTO exchanges (at, profile, operation_id, params, method, url, path_and_query,
               request_headers, request_body, status, response_headers, response_body, elapsed_ms)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13
             WHERE coalesce(?14, ?15, ?16, ?17, ?18, 1) IS NOT NULL"
        };
        self.conn.execute(
            sql,
            params![
                r.at,
                r.profile,
                r.operation_id,
                to_json(&redact(r.params)),
                r.method,
                r.url,
                r.path_and_query,
                to_json(&redact(r.request_headers)),
                &capped_body(r.request_body)[..],
                r.status,
                to_json(&redact(r.response_headers)),
                &capped_body(r.response_body)[..],
                i64::try_from(r.elapsed_ms).unwrap_or(i64::MAX),
                replay_of,
                changed,
                r.signed_at,
                r.clock_offset_secs,
                r.tls,
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HistoryEntry> {
        Ok(HistoryEntry {
            id: r.get(0)?,
            at: r.get(1)?,
            profile: r.get(2)?,
            operation_id: r.get(3)?,
            params: from_json(&r.get::<_, String>(4)?),
            method: r.get(5)?,
            url: r.get(6)?,
            path_and_query: r.get(7)?,
            request_headers: from_json(&r.get::<_, String>(8)?),
            request_body: r.get(9)?,
            status: r.get::<_, i64>(10)? as u16,
            response_headers: from_json(&r.get::<_, String>(11)?),
            response_body: r.get(12)?,
            elapsed_ms: r.get::<_, i64>(13)? as u64,
            signed_at: r.get(14)?,
            clock_offset_secs: r.get(15)?,
        })
    }

    /// The columns [`History::row`] reads, in its order; `NULL` for the signing clock of a
    /// history older than schema version 3 that could not be migrated.
    fn columns(&self) -> &'static str {
        if self.version >= 3 {
            "id, at, profile, operation_id, params, method, url, path_and_query,
            request_headers, request_body, status, response_headers, response_body, elapsed_ms,
            signed_at, clock_offset"
        } else {
            "id, at, profile, operation_id, params, method, url, path_and_query,
            request_headers, request_body, status, response_headers, response_body, elapsed_ms,
            NULL, NULL"
        }
    }

    /// Newest first, at most `limit`; `search` (taken literally, case-insensitive) is any
    /// text of the exchange: URL (path and query), method, operation id, status, profile,
    /// request and response header values (`X-Request-ID`, `TPP-Session-ID`, `PSU-ID`,
    /// `Location`, ...), request and response bodies (`paymentId`, `consentId`, ...), the
    /// source of a replay. `Signature` values are stored redacted, so never found.
    ///
    /// A search of three or more characters uses the FTS5 trigram index `exchanges_fts`
    /// (one of [`VERIFY_MIN_CHARS`] or more ASCII characters through its last trigram and
    /// the texts it finds, [`History::verified_ids`]: the same rows); a shorter one scans
    /// its text (ASCII case-insensitive). A history that could not be
    /// migrated (read-only, older than [`SCHEMA_VERSION`]) is searched with `LIKE` over the
    /// same columns.
    pub fn list(&self, search: Option<&str>, limit: usize) -> rusqlite::Result<Vec<HistoryEntry>> {
        self.list_counted(search, limit).map(|(rows, _)| rows)
    }

    /// [`History::list`], with the number of SQLite virtual machine steps the query took (a
    /// measure of the work that does not depend on the machine's speed).
    fn list_counted(
        &self,
        search: Option<&str>,
        limit: usize,
    ) -> rusqlite::Result<(Vec<HistoryEntry>, i32)> {
        self.search_counted(search, limit, "exchanges", self.columns(), Self::row)
    }

    /// The rows of [`History::list`] for the same `search` and `limit`, in the same order,
    /// as [`HistorySummary`]: the search still covers headers and bodies (through the
    /// index), but the query reads no header or body column of the rows it returns.
    ///
    /// Errors: SQLite's.
    pub fn list_summaries(
        &self,
        search: Option<&str>,
        limit: usize,
    ) -> rusqlite::Result<Vec<HistorySummary>> {
        self.list_summaries_counted(search, limit)
            .map(|(rows, _)| rows)
    }

    /// [`History::list_summaries`] with the SQLite virtual machine steps it took.
    fn list_summaries_counted(
        &self,
        search: Option<&str>,
        limit: usize,
    ) -> rusqlite::Result<(Vec<HistorySummary>, i32)> {
        // From the covering index when the history has it (every migrated history): no
        // page of a row, so no body, is read for the rows listed.
        let table = if self.version >= 5 {
            "exchanges INDEXED BY exchanges_summary"
        } else {
            "exchanges"
        };
        self.search_counted(search, limit, table, SUMMARY_COLUMNS, Self::summary_row)
    }

    fn summary_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HistorySummary> {
        Ok(HistorySummary {
            id: r.get(0)?,
            at: r.get(1)?,
            profile: r.get(2)?,
            operation_id: r.get(3)?,
            method: r.get(4)?,
            path_and_query: r.get(5)?,
            status: r.get::<_, i64>(6)? as u16,
            elapsed_ms: r.get::<_, i64>(7)? as u64,
        })
    }

    /// The ids [`History::list`] gives for `search` and `limit`, found through the trigram
    /// index's phrase query alone (never [`History::verified_ids`]): the reference the
    /// tests compare the searches with.
    ///
    /// Errors: SQLite's.
    #[doc(hidden)]
    pub fn ids_by_index(&self, search: Option<&str>, limit: usize) -> rusqlite::Result<Vec<i64>> {
        let read = |r: &rusqlite::Row<'_>| r.get::<_, i64>(0);
        self.search_with(search, limit, "exchanges", "exchanges.id", read, false)
            .map(|(ids, _)| ids)
    }

    /// The search of [`History::list`] selecting `columns` of `table` (`exchanges`, maybe
    /// with an `INDEXED BY`), each row read by `row`; with the SQLite virtual machine steps
    /// it took.
    fn search_counted<T>(
        &self,
        search: Option<&str>,
        limit: usize,
        table: &str,
        columns: &str,
        row: fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<(Vec<T>, i32)> {
        self.search_with(search, limit, table, columns, row, true)
    }

    /// [`History::search_counted`]; `verify`: a long text may be answered by
    /// [`History::verified_ids`] (same rows, same order). What it did is kept for
    /// [`History::last_search_work`].
    fn search_with<T>(
        &self,
        search: Option<&str>,
        limit: usize,
        table: &str,
        columns: &str,
        row: fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
        verify: bool,
    ) -> rusqlite::Result<(Vec<T>, i32)> {
        let mut work = SearchWork::default();
        let found = self.search_into(search, limit, table, columns, row, verify, &mut work);
        self.work.set(work);
        found.map(|rows| (rows, i32::try_from(work.vm_steps).unwrap_or(i32::MAX)))
    }

    /// [`History::search_with`], counting its work in `work`.
    #[allow(clippy::too_many_arguments)]
    fn search_into<T>(
        &self,
        search: Option<&str>,
        limit: usize,
        table: &str,
        columns: &str,
        row: fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
        verify: bool,
        work: &mut SearchWork,
    ) -> rusqlite::Result<Vec<T>> {
        let steps = |st: &rusqlite::Statement<'_>| {
            i64::from(st.get_status(rusqlite::StatementStatus::VmStep))
        };
        let search = search.unwrap_or("");
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let (filter, arg) = if search.is_empty() {
            ("?1 = ''", String::new())
        } else if self.version < 1 {
            work.path = SearchPath::Like;
            let escaped = search
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            (
                "url LIKE ?1 ESCAPE '\\' OR operation_id LIKE ?1 ESCAPE '\\'
                 OR CAST(status AS TEXT) LIKE ?1 ESCAPE '\\'
                 OR request_headers LIKE ?1 ESCAPE '\\' OR response_headers LIKE ?1 ESCAPE '\\'
                 OR CAST(request_body AS TEXT) LIKE ?1 ESCAPE '\\'
                 OR CAST(response_body AS TEXT) LIKE ?1 ESCAPE '\\'",
                format!("%{escaped}%"),
            )
        } else if search.chars().count() >= 3 {
            work.path = SearchPath::Phrase;
            if verify {
                let verified = self.verified_ids(search, limit)?;
                work.texts_read = verified.texts_read;
                work.text_bytes = verified.text_bytes;
                work.trigrams_counted = verified.trigrams_counted;
                work.vm_steps = verified.vm_steps;
                if let Some(ids) = verified.ids {
                    work.path = if verified.rare {
                        SearchPath::RareTrigram
                    } else {
                        SearchPath::Verified
                    };
                    let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
                    let mut stmt = self.conn.prepare(&format!(
                        "SELECT {columns} FROM {table} WHERE exchanges.id IN ({list})
                         ORDER BY exchanges.id DESC"
                    ))?;
                    let rows = stmt
                        .query_map([], row)?
                        .collect::<rusqlite::Result<Vec<_>>>()?;
                    work.vm_steps += steps(&stmt);
                    return Ok(rows);
                }
                if verified.texts_read > 0 {
                    work.path = SearchPath::VerifiedThenPhrase;
                }
            }
            // The index answers newest first and stops at `limit`: a search that matches
            // most of a large history (the common prefix of X-Request-IDs as they are typed)
            // costs `limit` rows, not all of them.
            (
                "exchanges.id IN (SELECT rowid FROM exchanges_fts WHERE exchanges_fts MATCH ?1
                        ORDER BY rowid DESC LIMIT ?2)",
                phrase(search),
            )
        } else {
            // Too short for the trigram index: the texts are scanned newest first, and the
            // scan stops at the `limit`-th match (`instr` on each, no subquery that scans all).
            work.path = SearchPath::Scan;
            let mut stmt = self.conn.prepare(&format!(
                "SELECT {columns} FROM exchanges_fts f JOIN {table} ON exchanges.id = f.rowid
                 WHERE instr(lower(f.text), lower(?1)) > 0 ORDER BY f.rowid DESC LIMIT ?2"
            ))?;
            let rows = stmt
                .query_map(params![search, limit], row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            work.vm_steps += steps(&stmt);
            return Ok(rows);
        };
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {columns} FROM {table} WHERE {filter} ORDER BY exchanges.id DESC LIMIT ?2"
        ))?;
        let rows = stmt
            .query_map(params![arg, limit], row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        work.vm_steps += steps(&stmt);
        Ok(rows)
    }

    /// The ids of the newest `limit` exchanges whose search text holds `search`, newest
    /// first, exactly as the trigram index's phrase query finds them, or no ids when this
    /// way does not apply or gives up (then the phrase query answers); with what it read.
    ///
    /// Why: the phrase query of a long text steps every one of its trigrams' lists of
    /// exchanges (a typed X-Request-ID: 30 to 34 trigrams, each in all 10,000 exchanges of
    /// a large history, in each of the index's segments) from the newest exchange down to
    /// its `limit`-th match: 59–68 million instructions for the last keys of an id in the
    /// bench's history (BENCHMARKS.md, "r13/memory"). Here the index is asked for one
    /// trigram only (the last of `search`, what typing adds), newest first, and each
    /// exchange it gives is checked by reading its text: about 500–520 texts for those
    /// keys, 4–7 million instructions.
    ///
    /// When, after [`VERIFY_PROBE_ROWS`] candidates, too few of them hold the text to reach
    /// `limit` within [`VERIFY_MAX_ROWS`] (a last trigram in most exchanges, a text in few:
    /// a `transactionId` copied from a body), it stops and looks for a rare trigram of
    /// `search` instead: each distinct trigram's exchanges counted up to
    /// [`RARE_TRIGRAM_DOCS`] (rowids only, no text); the texts of the rarest one's
    /// exchanges, when it has fewer, are checked. Without one, the phrase query answers:
    /// the key pays [`VERIFY_PROBE_ROWS`] texts and the counts on top of it, not 2,000
    /// texts (BENCHMARKS.md, "r14/history").
    ///
    /// Applies to texts of [`VERIFY_MIN_CHARS`] or more characters, all ASCII, without NUL
    /// (the check below is exact for those); gives up after [`VERIFY_MAX_ROWS`] candidates
    /// or [`VERIFY_MAX_BYTES`] of text.
    fn verified_ids(&self, search: &str, limit: i64) -> rusqlite::Result<Verified> {
        let mut out = Verified::default();
        if search.len() < VERIFY_MIN_CHARS || !search.is_ascii() || search.contains('\0') {
            return Ok(out);
        }
        let needle = search.to_ascii_lowercase();
        let Ok(finder) = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build([needle.as_bytes()])
        else {
            return Ok(out);
        };
        let last = &needle[needle.len() - 3..];
        if let Some(ids) = self.check_candidates(last, limit, &finder, true, &mut out)? {
            out.ids = Some(ids);
            return Ok(out);
        }
        if out.texts_read > VERIFY_PROBE_ROWS {
            // Gave up for the size of the work, not for the rate of matches.
            return Ok(out);
        }
        let Some(rare) = self.rarest_trigram(&needle, &mut out)? else {
            return Ok(out);
        };
        out.ids = self.check_candidates(&rare, limit, &finder, false, &mut out)?;
        out.rare = true;
        Ok(out)
    }

    /// The trigram of `needle` (ASCII, lower case) found in the fewest exchanges, when one
    /// is found in fewer than [`RARE_TRIGRAM_DOCS`]: each distinct trigram's exchanges
    /// counted up to that many (rowids only: the index's lists, no text).
    fn rarest_trigram(&self, needle: &str, out: &mut Verified) -> rusqlite::Result<Option<String>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT count(*) FROM (SELECT rowid FROM exchanges_fts WHERE exchanges_fts MATCH ?1
             LIMIT ?2)",
        )?;
        let mut seen: Vec<&str> = Vec::new();
        let mut best: Option<(i64, &str)> = None;
        for start in (0..=needle.len() - 3).rev() {
            let t = &needle[start..start + 3];
            if seen.contains(&t) {
                continue;
            }
            seen.push(t);
            let cap = best.map_or(RARE_TRIGRAM_DOCS, |(n, _)| n);
            let n: i64 = stmt.query_row(params![phrase(t), cap], |r| r.get(0))?;
            out.trigrams_counted += 1;
            if n < cap {
                best = Some((n, t));
                if n == 0 {
                    break;
                }
            }
        }
        out.vm_steps += i64::from(stmt.reset_status(rusqlite::StatementStatus::VmStep));
        Ok(best.map(|(_, t)| t.to_string()))
    }

    /// Reads the exchanges whose text holds the trigram `trigram`, newest first, and keeps
    /// the ids of those whose text holds `finder`'s text, up to `limit`. `None` when it gave
    /// up: after [`VERIFY_MAX_ROWS`] candidates or [`VERIFY_MAX_BYTES`], or (`judge`) after
    /// [`VERIFY_PROBE_ROWS`] candidates too few of which hold the text to reach `limit`
    /// within [`VERIFY_MAX_ROWS`].
    fn check_candidates(
        &self,
        trigram: &str,
        limit: i64,
        finder: &aho_corasick::AhoCorasick,
        judge: bool,
        out: &mut Verified,
    ) -> rusqlite::Result<Option<Vec<i64>>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT rowid, text FROM exchanges_fts WHERE exchanges_fts MATCH ?1
             ORDER BY rowid DESC",
        )?;
        let mut found = Vec::new();
        let mut gave_up = false;
        let mut folded = Vec::new();
        let (mut read, mut bytes) = (0usize, 0usize);
        {
            let mut rows = stmt.query([phrase(trigram)])?;
            while (found.len() as i64) < limit {
                let Some(r) = rows.next()? else { break };
                let text = match r.get_ref(1)? {
                    rusqlite::types::ValueRef::Text(b) | rusqlite::types::ValueRef::Blob(b) => b,
                    _ => &[][..],
                };
                read += 1;
                bytes += text.len();
                if read > VERIFY_MAX_ROWS || bytes > VERIFY_MAX_BYTES {
                    gave_up = true;
                    break;
                }
                if trigram_text_holds(text, finder, &mut folded) {
                    found.push(r.get::<_, i64>(0)?);
                }
                // Projected candidates to reach `limit` at this rate of matches, beyond
                // the most this way reads: stop now rather than after 2,000.
                if judge
                    && read == VERIFY_PROBE_ROWS
                    && (found.len() as u128) * (VERIFY_MAX_ROWS as u128)
                        < (read as u128) * (limit.max(0) as u128)
                {
                    gave_up = true;
                    break;
                }
            }
        }
        out.texts_read += read;
        out.text_bytes += bytes;
        out.vm_steps += i64::from(stmt.reset_status(rusqlite::StatementStatus::VmStep));
        Ok((!gave_up).then_some(found))
    }

    /// One entry.
    pub fn get(&self, id: i64) -> rusqlite::Result<Option<HistoryEntry>> {
        self.conn
            .query_row(
                &format!("SELECT {} FROM exchanges WHERE id = ?1", self.columns()),
                [id],
                Self::row,
            )
            .optional()
    }

    /// Stores a step of the PSU's browser on the SCA pages (for [`crate::flow`]) and
    /// returns its id.
    ///
    /// Errors: SQLite's, e.g. a history that could only be opened read-only.
    pub fn record_browser_step(
        &self,
        step: &crate::sandbox_events::BrowserStep,
    ) -> rusqlite::Result<i64> {
        self.conn.execute(
            "INSERT INTO sca_steps (at, sca_id, step, status, outcome, code)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![
                step.at,
                step.sca_id,
                step.step,
                step.status,
                step.outcome,
                step.code
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The browser steps stored at or after `since` (Unix seconds), oldest first; empty for
    /// a history older than schema version 2 that could not be migrated.
    ///
    /// Errors: SQLite's.
    pub(crate) fn browser_steps_since(
        &self,
        since: i64,
    ) -> rusqlite::Result<Vec<crate::sandbox_events::BrowserStep>> {
        if self.version < 2 {
            return Ok(Vec::new());
        }
        let mut st = self.conn.prepare(
            "SELECT at, sca_id, step, status, outcome, code FROM sca_steps
             WHERE at >= ?1 ORDER BY id",
        )?;
        let rows = st.query_map([since], |r| {
            Ok(crate::sandbox_events::BrowserStep {
                at: r.get(0)?,
                sca_id: r.get(1)?,
                step: r.get(2)?,
                status: r.get(3)?,
                outcome: r.get(4)?,
                code: r.get(5)?,
            })
        })?;
        rows.collect()
    }

    /// The newest entry.
    pub fn last(&self) -> rusqlite::Result<Option<HistoryEntry>> {
        self.conn
            .query_row(
                &format!(
                    "SELECT {} FROM exchanges ORDER BY id DESC LIMIT 1",
                    self.columns()
                ),
                [],
                Self::row,
            )
            .optional()
    }
}

/// How much of a history file [`warm_file`] brings in per `posix_fadvise` call, bytes: each
/// call submits the reads of its range and returns (the kernel caps one call's readahead:
/// a single call over a 170 MB file brought in 8 MB); between calls the warm-up checks
/// whether it was cancelled.
const WARM_CHUNK: u64 = 2 << 20;

/// Most of a history file [`warm_file`] brings in, bytes, counted from its end (the
/// newest exchanges, their search texts and the index segments written last).
const WARM_MAX_BYTES: u64 = 512 << 20;

/// A [`HistoryWarmer`] does not start again within this long of its last start: the
/// pages it brought in stay in the page cache for about a minute without use on the
/// machine measured (BENCHMARKS.md, "r15/history": a memory cgroup evicts file pages idle
/// for ~60 s), and a History screen in use keeps reading them.
pub const WARM_AGAIN_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// What [`warm_file`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WarmReport {
    /// Bytes of the history file (and its `-wal`) asked for (`POSIX_FADV_WILLNEED`): read
    /// from the disk when not in the page cache, in the background by the kernel.
    pub bytes_advised: u64,
    /// `posix_fadvise` calls made.
    pub chunks: u64,
    /// It stopped because `cancel` was set.
    pub cancelled: bool,
    /// From its start to its end (the last chunk read).
    pub took: std::time::Duration,
    /// CPU time of the thread that ran it over that span (user and kernel: the calls and
    /// the kernel's work submitting the reads; Linux only, else zero).
    pub cpu: std::time::Duration,
}

/// Brings the history file at `path` (and its `-wal`, when there is one) into the page
/// cache, newest end first, so the History screen's first searches read it from memory
/// rather than wait for the disk (BENCHMARKS.md, "r17/history": a cold file made the first
/// key of a search wait 36–105 ms for 2.7 MB of texts). It tells the kernel which ranges
/// will be needed (`posix_fadvise(POSIX_FADV_WILLNEED)`, [`WARM_CHUNK`] bytes per call,
/// from the end of the file back, at most [`WARM_MAX_BYTES`]): the kernel reads them ahead;
/// nothing is copied into this process (its memory does not grow) and no SQLite connection
/// or lock is used, so a search on the history is never queued behind it. The file is
/// opened read-only. `cancel` is checked before each call; `before_chunk` runs before each
/// call too (tests hold the warm-up there).
///
/// Linux only (elsewhere it does nothing). Errors: the file cannot be opened.
pub fn warm_file(
    path: &Path,
    cancel: &std::sync::atomic::AtomicBool,
    before_chunk: &mut dyn FnMut(),
) -> std::io::Result<WarmReport> {
    let (began, cpu) = (std::time::Instant::now(), thread_cpu());
    let mut report = warm_chunks(path, cancel, before_chunk)?;
    report.took = began.elapsed();
    report.cpu = thread_cpu().saturating_sub(cpu);
    Ok(report)
}

/// The calling thread's CPU time so far (`CLOCK_THREAD_CPUTIME_ID`).
#[cfg(target_os = "linux")]
fn thread_cpu() -> std::time::Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    std::time::Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

#[cfg(not(target_os = "linux"))]
fn thread_cpu() -> std::time::Duration {
    std::time::Duration::ZERO
}

/// [`warm_file`] without its time.
fn warm_chunks(
    path: &Path,
    cancel: &std::sync::atomic::AtomicBool,
    before_chunk: &mut dyn FnMut(),
) -> std::io::Result<WarmReport> {
    let mut report = WarmReport::default();
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    for (i, file) in [PathBuf::from(wal), path.to_path_buf()].iter().enumerate() {
        let f = match std::fs::File::open(file) {
            Ok(f) => f,
            // No `-wal` (checkpointed, or not in WAL mode): nothing to warm there.
            Err(_) if i == 0 => continue,
            Err(e) => return Err(e),
        };
        let size = f.metadata()?.len();
        let low = size.saturating_sub(WARM_MAX_BYTES.saturating_sub(report.bytes_advised));
        let mut end = size;
        while end > low {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                report.cancelled = true;
                return Ok(report);
            }
            before_chunk();
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                report.cancelled = true;
                return Ok(report);
            }
            let start = end.saturating_sub(WARM_CHUNK).max(low);
            advise_will_need(&f, start, end - start);
            report.bytes_advised += end - start;
            report.chunks += 1;
            end = start;
        }
    }
    Ok(report)
}

/// `posix_fadvise(POSIX_FADV_WILLNEED)` on `len` bytes of `file` from `offset`, then waits
/// for them (a failure only means the pages are read when needed, as without it).
///
/// The wait: reading the range's last byte waits for that page's read, so the disk's queue
/// holds one [`WARM_CHUNK`] of the warm-up at a time and a search's own read waits behind
/// that much at most, not the whole file (r17/history: without it, a key typed right after
/// the open waited 98 ms behind the 170 MB asked for at once).
#[cfg(target_os = "linux")]
fn advise_will_need(file: &std::fs::File, offset: u64, len: u64) {
    let _ = rustix::fs::fadvise(
        file,
        offset,
        std::num::NonZeroU64::new(len),
        rustix::fs::Advice::WillNeed,
    );
    if len > 0 {
        let _ = std::os::unix::fs::FileExt::read_at(file, &mut [0u8; 1], offset + len - 1);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_will_need(_file: &std::fs::File, _offset: u64, _len: u64) {}

/// The History screen's warm-up of the history file ([`warm_file`]) on a thread of its
/// own: started when the screen opens (or searches) unless it is under way or started
/// within [`WARM_AGAIN_AFTER`], cancelled when the screen closes or this is dropped.
pub struct HistoryWarmer {
    /// The warm-up under way: its cancel flag and thread.
    running: Option<(
        std::sync::Arc<std::sync::atomic::AtomicBool>,
        std::thread::JoinHandle<std::io::Result<WarmReport>>,
    )>,
    /// When the last warm-up started.
    started: Option<std::time::Instant>,
    /// Runs before each `posix_fadvise` call of the warm-up (tests hold it there).
    hook: std::sync::Arc<dyn Fn() + Send + Sync>,
}

impl Default for HistoryWarmer {
    fn default() -> Self {
        HistoryWarmer {
            running: None,
            started: None,
            hook: std::sync::Arc::new(|| {}),
        }
    }
}

impl std::fmt::Debug for HistoryWarmer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryWarmer")
            .field("running", &self.running.is_some())
            .field("started", &self.started)
            .finish()
    }
}

impl HistoryWarmer {
    /// A warmer whose warm-up runs `hook` before each `posix_fadvise` call (tests).
    #[doc(hidden)]
    pub fn with_hook(hook: impl Fn() + Send + Sync + 'static) -> Self {
        HistoryWarmer {
            running: None,
            started: None,
            hook: std::sync::Arc::new(hook),
        }
    }

    /// The History screen opened or searched: starts warming the history file at `path` on
    /// a new thread, unless a warm-up is under way or one started within
    /// [`WARM_AGAIN_AFTER`]. True when it started one.
    pub fn opened(&mut self, path: &Path) -> bool {
        let under_way =
            |(cancel, t): &(
                std::sync::Arc<std::sync::atomic::AtomicBool>,
                std::thread::JoinHandle<_>,
            )| !t.is_finished() && !cancel.load(std::sync::atomic::Ordering::Relaxed);
        if self.running.as_ref().is_some_and(under_way) {
            return false;
        }
        let cancelled = self
            .running
            .as_ref()
            .is_some_and(|(cancel, _)| cancel.load(std::sync::atomic::Ordering::Relaxed));
        // A warm-up cancelled by a close may not have brought the file in: not "recent".
        if !cancelled
            && self
                .started
                .is_some_and(|at| at.elapsed() < WARM_AGAIN_AFTER)
        {
            return false;
        }
        self.running = None;
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (flag, hook, path) = (cancel.clone(), self.hook.clone(), path.to_path_buf());
        let spawned = std::thread::Builder::new()
            .name("history-warm".into())
            .spawn(move || warm_file(&path, &flag, &mut || hook()));
        match spawned {
            Ok(thread) => {
                self.running = Some((cancel, thread));
                self.started = Some(std::time::Instant::now());
                true
            }
            Err(_) => false,
        }
    }

    /// The History screen closed: a warm-up under way stops before its next call (the
    /// thread is not waited for).
    pub fn closed(&mut self) {
        if let Some((cancel, _)) = &self.running {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Waits for the warm-up under way, if any, and gives what it did (tests, the bench).
    #[doc(hidden)]
    pub fn join(&mut self) -> Option<std::io::Result<WarmReport>> {
        let (_, thread) = self.running.take()?;
        thread.join().ok()
    }
}

impl Drop for HistoryWarmer {
    fn drop(&mut self) {
        self.closed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_that_could_not_be_migrated_still_records_and_searches() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        let h = History::from_parts(conn, 0);
        let id = h
            .insert(&HistoryEntry {
                url: "http://x/v1/accounts".into(),
                request_headers: vec![("PSU-ID".into(), "under_score%".into())],
                response_body: b"{\"consentId\":\"c-1\"}".to_vec(),
                ..HistoryEntry::default()
            })
            .unwrap();
        h.insert(&HistoryEntry::default()).unwrap();
        let found =
            |q: &str| -> Vec<i64> { h.list(Some(q), 10).unwrap().iter().map(|e| e.id).collect() };
        assert_eq!(found("under_score%"), [id]);
        assert_eq!(found("C-1"), [id]);
        assert!(found("under-score").is_empty(), "`_` is not a wildcard");
        assert_eq!(h.replay_info(id).unwrap(), None);
        assert_eq!(h.list(None, 10).unwrap().len(), 2);
    }

    /// A history at schema version 2 (before the signing clock), with one row.
    fn version_2(conn: &Connection) {
        conn.execute_batch(SCHEMA).unwrap();
        conn.execute_batch(&migration_1()).unwrap();
        conn.execute_batch(MIGRATION_2).unwrap();
        conn.execute(
            "INSERT INTO exchanges (at, profile, operation_id, params, method, url,
               path_and_query, request_headers, request_body, status, response_headers,
               response_body, elapsed_ms)
             VALUES (1, 'p', 'accounts.list', '[]', 'GET', 'http://x/v1/accounts',
               '/v1/accounts', '[]', x'', 401, '[]', x'', 5)",
            [],
        )
        .unwrap();
    }

    #[test]
    fn a_version_2_history_is_migrated_to_keep_the_signing_clock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        version_2(&Connection::open(&path).unwrap());
        let h = History::open_existing(&path).unwrap();
        assert_eq!(h.schema_version(), SCHEMA_VERSION);
        let old = h.last().unwrap().unwrap();
        assert_eq!(old.status, 401);
        assert_eq!((old.signed_at, old.clock_offset_secs), (None, None));
        let id = h
            .insert(&HistoryEntry {
                at: 2,
                signed_at: Some(15_638_402),
                clock_offset_secs: Some(15_638_400),
                ..HistoryEntry::default()
            })
            .unwrap();
        let new = h.get(id).unwrap().unwrap();
        assert_eq!(new.signed_at, Some(15_638_402));
        assert_eq!(new.clock_offset_secs, Some(15_638_400));
        assert_eq!(h.list(Some("accounts"), 10).unwrap().len(), 1);
        drop(h);
        // Opened again: already at the version, nothing to do.
        assert_eq!(
            History::open(&path).unwrap().schema_version(),
            SCHEMA_VERSION
        );
    }

    #[test]
    fn a_version_2_history_that_could_not_be_migrated_reads_and_records() {
        let conn = Connection::open_in_memory().unwrap();
        version_2(&conn);
        let h = History::from_parts(conn, 2);
        let id = h
            .insert(&HistoryEntry {
                signed_at: Some(5),
                clock_offset_secs: Some(3),
                ..HistoryEntry::default()
            })
            .unwrap();
        let back = h.get(id).unwrap().unwrap();
        assert_eq!((back.signed_at, back.clock_offset_secs), (None, None));
        assert_eq!(h.list(None, 10).unwrap().len(), 2);
    }

    /// A history of `n` exchanges whose X-Request-IDs share a prefix (as ids being typed do).
    fn shared_prefix_history(n: usize) -> History {
        let h = History::in_memory().unwrap();
        for i in 0..n {
            h.insert(&HistoryEntry {
                url: format!("http://x/v1/accounts/a{i}"),
                request_headers: vec![(
                    "X-Request-ID".into(),
                    format!("6f1c2a7e-0000-4000-8000-{i:012}"),
                )],
                response_body: format!("{{\"consentId\":\"c-{i}\"}}").into_bytes(),
                ..HistoryEntry::default()
            })
            .unwrap();
        }
        h
    }

    #[test]
    fn a_search_matching_most_of_the_history_stops_at_the_limit() {
        // The work of a search for a text every exchange has (a typed X-Request-ID's
        // prefix) must not grow with the history: newest first, stop at the limit. Counted
        // in SQLite's virtual machine steps, not time. Before, the index's subquery read
        // every matching row (10x the steps for 10x the rows).
        let (small, large) = (shared_prefix_history(200), shared_prefix_history(2_000));
        for q in ["6f1c2a7e-0000", "6f", "c-"] {
            let (rows_s, steps_s) = small.list_counted(Some(q), 20).unwrap();
            let (rows_l, steps_l) = large.list_counted(Some(q), 20).unwrap();
            assert_eq!((rows_s.len(), rows_l.len()), (20, 20), "{q}");
            assert_eq!(rows_l[0].id, 2_000, "newest first: {q}");
            assert!(
                steps_l < 2 * steps_s,
                "{q}: {steps_l} steps for 2,000 exchanges, {steps_s} for 200"
            );
        }
        // A rare text is still found, wherever it is.
        let (rows, _) = large.list_counted(Some("-000000000007"), 20).unwrap();
        assert_eq!(rows.iter().map(|e| e.id).collect::<Vec<_>>(), [8]);
        let (rows, _) = large.list_counted(Some("c-7\""), 20).unwrap();
        assert_eq!(rows.iter().map(|e| e.id).collect::<Vec<_>>(), [8]);
    }

    /// A history with rows whose texts sit in different places: URL, a header only, a
    /// response body only, a request body only, a status.
    fn mixed_history(h: &History) {
        for i in 0..30i64 {
            h.insert(&HistoryEntry {
                at: 1_800_000_000 + i,
                profile: if i % 2 == 0 { "p" } else { "Embedded sandbox" }.into(),
                operation_id: "accounts.list".into(),
                method: if i % 3 == 0 { "POST" } else { "GET" }.into(),
                url: format!("http://x/v1/accounts/acc-{}", i % 7),
                path_and_query: format!("/v1/accounts/acc-{}", i % 7),
                request_headers: vec![(
                    "X-Request-ID".into(),
                    format!("6f1c2a7e-0000-4000-8000-{i:012}"),
                )],
                request_body: if i % 5 == 0 {
                    format!("{{\"onlyInRequest\":\"zq{i}\"}}").into_bytes()
                } else {
                    Vec::new()
                },
                status: if i % 4 == 0 { 401 } else { 200 },
                response_body: format!("{{\"consentId\":\"Body-Only-{i}\"}}").into_bytes(),
                elapsed_ms: i as u64,
                ..HistoryEntry::default()
            })
            .unwrap();
        }
    }

    /// The ids and summaries of `list` for `search` and `limit`.
    #[track_caller]
    fn same_as_list(h: &History, search: Option<&str>, limit: usize) -> usize {
        let full = h.list(search, limit).unwrap();
        let summaries = h.list_summaries(search, limit).unwrap();
        let expected: Vec<HistorySummary> = full.iter().map(HistorySummary::from).collect();
        assert_eq!(summaries, expected, "search {search:?}, limit {limit}");
        summaries.len()
    }

    #[test]
    fn summaries_list_the_same_rows_in_the_same_order_as_list() {
        let h = History::in_memory().unwrap();
        mixed_history(&h);
        let searches = [
            None,
            Some(""),
            Some("a"),
            Some("6f"),
            Some("zq"),
            Some("Z"),
            Some("401"),
            Some("POST"),
            Some("acc-3"),
            Some("body-only-2"),
            Some("onlyInRequest"),
            Some("000000000017"),
            Some("6f1c2a7e-0000-4000-8000-000000000029"),
            Some("\"consentId\""),
            Some("no such text"),
        ];
        for q in searches {
            for limit in [1, 7, 500] {
                same_as_list(&h, q, limit);
            }
        }
        assert_eq!(same_as_list(&h, Some("body-only-2"), 500), 11, "2, 20..=29");
        assert_eq!(same_as_list(&h, Some("zq"), 500), 6, "request bodies only");
        assert_eq!(same_as_list(&h, None, 500), 30);
    }

    #[test]
    fn summaries_of_older_histories_that_could_not_be_migrated() {
        // Version 0 (no search index: LIKE), version 2 and version 4 (no summary index).
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        let h = History::from_parts(conn, 0);
        mixed_history(&h);
        for q in [
            None,
            Some("acc-3"),
            Some("Body-Only-2"),
            Some("zq"),
            Some("401"),
        ] {
            same_as_list(&h, q, 500);
        }
        let conn = Connection::open_in_memory().unwrap();
        version_2(&conn);
        let h = History::from_parts(conn, 2);
        assert_eq!(same_as_list(&h, Some("accounts"), 10), 1);
        assert_eq!(same_as_list(&h, None, 10), 1);
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        for m in [
            migration_1().as_str(),
            MIGRATION_2,
            MIGRATION_3,
            MIGRATION_4,
        ] {
            conn.execute_batch(m).unwrap();
        }
        let h = History::from_parts(conn, 4);
        mixed_history(&h);
        for q in [None, Some("6f"), Some("body-only-2"), Some("zq")] {
            same_as_list(&h, q, 500);
        }
    }

    #[test]
    fn an_older_history_is_migrated_to_the_summary_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        version_2(&Connection::open(&path).unwrap());
        let h = History::open_existing(&path).unwrap();
        assert_eq!(h.schema_version(), 5);
        let names: Vec<String> = h
            .conn
            .prepare("SELECT name FROM pragma_index_list('exchanges')")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(names.iter().any(|n| n == "exchanges_summary"), "{names:?}");
        assert_eq!(same_as_list(&h, Some("accounts"), 10), 1);
    }

    /// Bytes this thread has read from files so far (`rchar` of `/proc/thread-self/io`):
    /// SQLite reads its pages with `pread`, so a query's page reads show here.
    fn thread_read_bytes() -> u64 {
        let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
        io.lines()
            .find_map(|l| l.strip_prefix("rchar: "))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn the_list_reads_no_page_of_a_body() {
        // Twelve exchanges with a 1 MiB response body each (256 overflow pages). The list of
        // the History screen is read from a fresh connection (empty page cache), and the
        // bytes read from the file are counted. Reading `status` and `elapsed_ms`, stored
        // after the bodies, from the rows would read every body page (12 MiB, as `list`
        // does); from the summary index it reads a few pages.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        let h = History::open(&path).unwrap();
        let body = vec![b'x'; BODY_CAP];
        for i in 0..12 {
            h.insert(&HistoryEntry {
                url: format!("http://x/v1/accounts/a{i}"),
                path_and_query: format!("/v1/accounts/a{i}"),
                request_headers: vec![("X-Request-ID".into(), format!("rid-{i:04}"))],
                status: 200,
                elapsed_ms: 7,
                response_body: body.clone(),
                ..HistoryEntry::default()
            })
            .unwrap();
        }
        drop(h);
        let read = |f: &dyn Fn(&History) -> usize| {
            let h = History::open_existing(&path).unwrap();
            let before = thread_read_bytes();
            let n = f(&h);
            (n, thread_read_bytes() - before)
        };
        let (n, summaries) = read(&|h| h.list_summaries(None, 500).unwrap().len());
        assert_eq!(n, 12);
        assert!(summaries < 64 * 1024, "{summaries} bytes read for the list");
        let (n, found) = read(&|h| h.list_summaries(Some("rid-0007"), 500).unwrap().len());
        assert_eq!(n, 1);
        // The search index holds the body's text too (a trigram per position), but one
        // row's lookup in it and in the summary index reads far less than a body.
        assert!(found < 512 * 1024, "{found} bytes read for one search");
        // The same measure sees the bodies when the rows are read whole.
        let (n, full) = read(&|h| h.list(None, 500).unwrap().len());
        assert_eq!(n, 12);
        assert!(
            full > 12 * BODY_CAP as u64,
            "{full} bytes read for the whole rows"
        );
    }

    #[test]
    fn typed_signature_parameters_are_redacted_like_headers() {
        // Support staff can type a Signature header into the form to reproduce a bad request;
        // the typed value is a parameter and must not reach the database either.
        let h = History::in_memory().unwrap();
        let secret = "keyId=\"SN=1,CA=x\",signature=\"c2VjcmV0LXNpZ25hdHVyZQ==\"";
        let id = h
            .insert(&HistoryEntry {
                params: vec![
                    ("Signature".into(), secret.into()),
                    ("account-id".into(), "abc".into()),
                ],
                request_headers: vec![("signature".into(), secret.into())],
                ..HistoryEntry::default()
            })
            .unwrap();
        let back = h.get(id).unwrap().unwrap();
        assert_eq!(back.params[0], ("Signature".into(), REDACTED.into()));
        assert_eq!(back.params[1], ("account-id".into(), "abc".into()));
        assert_eq!(back.request_headers[0].1, REDACTED);
    }

    /// What [`trigram_text_holds`] relies on: of the characters beyond ASCII, only U+017F
    /// and U+212A fold into ASCII in SQLite's FTS5 (`s`, `k`), and none folds to nothing.
    /// Each code point of the Basic Multilingual Plane and of the Deseret block (the only
    /// one beyond it that folds) is indexed between two `|`; a phrase `|a|` finds a row only
    /// if a character in it folds to `a`.
    #[test]
    fn only_two_characters_beyond_ascii_fold_into_it() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'trigram')")
            .unwrap();
        let chars: Vec<char> = (0x80u32..0x1_0000)
            .chain(0x1_0400..0x1_0450)
            .filter_map(char::from_u32)
            .collect();
        for block in chars.chunks(512) {
            let text: String = block.iter().map(|c| format!("|{c}|")).collect();
            conn.execute("INSERT INTO t(x) VALUES (?1)", [text])
                .unwrap();
        }
        let mut folding = Vec::new();
        for a in (1u8..0x80).map(char::from) {
            let q = format!("\"|{}|\"", a.to_string().replace('"', "\"\""));
            let n: i64 = conn
                .query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [q], |r| r.get(0))
                .unwrap();
            if n > 0 {
                folding.push(a);
            }
        }
        // (`|` is the phrase `|||`, which only a character folded to nothing would make.)
        assert_eq!(folding, ['K', 'S', 'k', 's']);
        let skipped: i64 = conn
            .query_row("SELECT count(*) FROM t WHERE t MATCH '\"|||\"'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(skipped, 0, "no character folds to nothing");
    }

    /// Issue 23: a long search (a typed X-Request-ID) is answered by reading the texts of
    /// the exchanges one trigram finds ([`History::verified_ids`]); it gives the rows the
    /// phrase query gives, also for texts where SQLite's reading differs from a plain
    /// one: characters folded into ASCII (ſ, Kelvin sign), NUL (skipped), malformed UTF-8
    /// (an overlong ſ, a lone continuation byte, a sequence too long), letters beyond
    /// ASCII, upper case.
    #[test]
    fn a_long_search_read_from_the_texts_gives_the_rows_of_the_index() {
        let h = History::in_memory().unwrap();
        let bodies: Vec<Vec<u8>> = vec![
            b"id 6f1c2a7e-s000-4000-8000-000000000001 end".to_vec(),
            "id 6f1c2a7e-\u{17f}000-4000-8000-000000000002 end".into(),
            "id 6F1C2A7E-S000-4000-8000-000000000003 end".into(),
            b"id 6f1c2a7e-\xC0\x85\xBF000-4000-8000-000000000004 end".to_vec(),
            b"id 6f1c2a7e-\xC5\xBF\x80000-4000-8000-000000000005 end".to_vec(),
            b"id 6f1c2a7e-s0\x0000-4000-8000-000000000006 end".to_vec(),
            b"id 6f1c2a7e-s0\x8000-4000-8000-000000000007 end".to_vec(),
            "kelvin \u{212a}ey-of-the-day-0000 and key-of-the-day-0001".into(),
            "stra\u{df}e-4000-8000-0000 \u{e9}t\u{e9} 6f1c2a7e-s000-4000".into(),
            b"\xFF\xFE 6f1c2a7e-s000-4000-8000-00000000000 \xF8\x80\x80\x85\xBF".to_vec(),
        ];
        for (i, body) in bodies.iter().enumerate() {
            h.insert(&HistoryEntry {
                url: format!("http://x/v1/accounts/a{i}"),
                request_headers: vec![(
                    "X-Request-ID".into(),
                    format!("6f1c2a7e-0000-4000-8000-{i:012}"),
                )],
                response_body: body.clone(),
                ..HistoryEntry::default()
            })
            .unwrap();
        }
        let searches = [
            "6f1c2a7e-s000-4000",
            "6F1C2A7E-S000-4000-8000",
            "6f1c2a7e-s000-4000-8000-000000000002",
            "2a7e-s000-4000-8000-00000000000",
            "e-s00-4000-8000",
            "s0000-4000-8000",
            "key-of-the-day",
            "KEY-OF-THE-DAY-000",
            "6f1c2a7e-0000-4000-8000-00000000000",
            "4000-8000-0000",
            "no such text here at all",
            "\"6f1c2a7e-s0\"",
        ];
        for q in searches {
            for limit in [1, 2, 500] {
                let verified = h.verified_ids(q, limit as i64).unwrap();
                let ids = verified
                    .ids
                    .unwrap_or_else(|| panic!("{q}: not read from the texts"));
                let expected = h.ids_by_index(Some(q), limit).unwrap();
                assert_eq!(ids, expected, "search {q:?}, limit {limit}");
                let listed: Vec<i64> = h
                    .list(Some(q), limit)
                    .unwrap()
                    .iter()
                    .map(|e| e.id)
                    .collect();
                assert_eq!(listed, expected, "list: search {q:?}, limit {limit}");
            }
        }
        // The index finds the folded and NUL-split ones, not the malformed ſ.
        assert_eq!(
            h.ids_by_index(Some("6f1c2a7e-s000-4000"), 500).unwrap(),
            [10, 9, 6, 4, 3, 2, 1]
        );
        // Short, non-ASCII or NUL texts are the index's alone.
        assert!(h.verified_ids("6f1c2a7e-s0", 500).unwrap().ids.is_none());
        assert!(
            h.verified_ids("stra\u{df}e-4000-8000", 500)
                .unwrap()
                .ids
                .is_none()
        );
        assert!(
            h.verified_ids("6f1c2a7e-s0\u{0}00-4000", 500)
                .unwrap()
                .ids
                .is_none()
        );
    }

    /// The work of a long search whose text most exchanges hold stops at the limit, and
    /// a rare one reads only the exchanges of its last trigram: counted in the candidates'
    /// SQLite steps, not time.
    #[test]
    fn a_long_search_reads_the_texts_of_its_last_trigram_only() {
        let h = shared_prefix_history(2_000);
        let v = h.verified_ids("6f1c2a7e-0000-4000-8000-0000", 20).unwrap();
        assert_eq!(v.ids.unwrap(), (1_981..=2_000).rev().collect::<Vec<i64>>());
        assert!(v.vm_steps < 200, "{} steps for 20 rows", v.vm_steps);
        let v = h
            .verified_ids("6f1c2a7e-0000-4000-8000-000000001234", 500)
            .unwrap();
        assert_eq!(v.ids.unwrap(), [1_235]);
        assert!(
            v.vm_steps < 200,
            "{} steps: the exchanges holding `234`",
            v.vm_steps
        );
    }

    /// A history of `n` exchanges whose response bodies are `ref=t<i>-end` (four digits),
    /// `alpha-beta-gamma` and `gamma-delta`, with one exchange (`odd`) holding
    /// `alpha-beta-gamma-delta`.
    fn common_trigram_history(n: usize, odd: usize) -> History {
        let h = History::in_memory().unwrap();
        for i in 0..n {
            let tail = if i == odd { "-delta" } else { " gamma-delta" };
            h.insert(&HistoryEntry {
                url: "http://x/v1/accounts".into(),
                response_body: format!("ref=t{i:04}-end alpha-beta-gamma{tail}").into_bytes(),
                ..HistoryEntry::default()
            })
            .unwrap();
        }
        h
    }

    /// A history file of `n` exchanges in a new directory (kept by the `TempDir`).
    fn file_history(n: usize) -> (tempfile::TempDir, PathBuf, History) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        let h = History::open(&path).unwrap();
        for i in 0..n {
            h.insert(&sample_entry(i)).unwrap();
        }
        (dir, path, h)
    }

    /// Exchange `i` of [`file_history`], with a 4 KB body.
    fn sample_entry(i: usize) -> HistoryEntry {
        HistoryEntry {
            url: format!("http://x/v1/accounts/a{i}"),
            response_body: format!("{{\"n\":{i},\"pad\":\"{}\"}}", "x".repeat(4000)).into_bytes(),
            ..HistoryEntry::default()
        }
    }

    /// A warmer whose warm-up, before each chunk, says so on the first channel and waits
    /// for a word on the second (dropped: it goes on).
    fn held_warmer() -> (
        HistoryWarmer,
        std::sync::mpsc::Receiver<()>,
        std::sync::mpsc::Sender<()>,
    ) {
        let (entered_tx, entered) = std::sync::mpsc::channel::<()>();
        let (go, go_rx) = std::sync::mpsc::channel::<()>();
        let (entered_tx, go_rx) = (
            std::sync::Mutex::new(entered_tx),
            std::sync::Mutex::new(go_rx),
        );
        let warmer = HistoryWarmer::with_hook(move || {
            let _ = entered_tx.lock().unwrap().send(());
            let _ = go_rx.lock().unwrap().recv();
        });
        (warmer, entered, go)
    }

    #[test]
    fn the_warm_up_advises_the_whole_file_and_its_wal_and_writes_nothing() {
        let (_dir, path, h) = file_history(40);
        drop(h);
        let before = std::fs::read(&path).unwrap();
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let wal_len = std::fs::metadata(PathBuf::from(&wal)).map_or(0, |m| m.len());
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let mut calls = 0;
        let report = warm_file(&path, &cancel, &mut || calls += 1).unwrap();
        let size = before.len() as u64;
        assert_eq!(report.bytes_advised, size + wal_len);
        assert_eq!(
            report.chunks,
            size.div_ceil(WARM_CHUNK) + wal_len.div_ceil(WARM_CHUNK)
        );
        assert_eq!(calls, report.chunks);
        assert!(!report.cancelled);
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            modified
        );
        assert!(warm_file(&path.with_extension("missing"), &cancel, &mut || {}).is_err());
    }

    #[test]
    fn a_search_and_a_write_are_answered_while_the_warm_up_is_held() {
        let (_dir, path, h) = file_history(30);
        let h = std::sync::Arc::new(std::sync::Mutex::new(h));
        let (mut warmer, entered, go) = held_warmer();
        assert!(warmer.opened(&path));
        // The warm-up is now inside its first chunk's hook, holding nothing of the history.
        entered.recv().unwrap();
        let held = h
            .try_lock()
            .expect("the warm-up never takes the history's lock");
        let rows = held.list_summaries(Some("\"n\":7,"), 500).unwrap();
        assert_eq!(rows.len(), 1);
        held.insert(&sample_entry(99)).unwrap();
        assert_eq!(held.list_summaries(None, 500).unwrap().len(), 31);
        drop(held);
        // Opened again while it runs: not a second warm-up.
        assert!(!warmer.opened(&path));
        drop(go);
        let report = warmer.join().unwrap().unwrap();
        assert!(!report.cancelled);
        assert!(report.chunks >= 1);
        // Within `WARM_AGAIN_AFTER` of the last start: skipped.
        assert!(!warmer.opened(&path));
    }

    #[test]
    fn closing_the_screen_stops_the_warm_up_and_a_reopen_starts_another() {
        let (_dir, path, h) = file_history(5);
        drop(h);
        let (mut warmer, entered, go) = held_warmer();
        assert!(warmer.opened(&path));
        entered.recv().unwrap();
        warmer.closed();
        go.send(()).unwrap();
        let report = warmer.join().unwrap().unwrap();
        assert!(report.cancelled);
        assert_eq!(report.chunks, 0);
        assert_eq!(report.bytes_advised, 0);
        // Cancelled before it brought anything in: a reopen does not count it as recent.
        warmer.closed();
        let (mut warmer, entered, go) = held_warmer();
        assert!(warmer.opened(&path));
        entered.recv().unwrap();
        warmer.closed();
        assert!(warmer.opened(&path), "a reopen after a close warms again");
        drop(go);
        drop(entered);
        let report = warmer.join().unwrap().unwrap();
        assert!(!report.cancelled);
    }

    /// Issue 23, r14/history: a long search whose last trigram is in every exchange but
    /// whose text is in one (a `transactionId` copied from a body) read 2,000 texts and then
    /// ran the phrase query all the same. It now stops after 64 texts, finds a rare trigram
    /// by counting each trigram's exchanges (no text read) and checks that one's texts: the
    /// same rows as the phrase query, counted in texts read, not time.
    #[test]
    fn a_long_search_with_a_common_last_trigram_reads_a_rare_trigram_s_texts() {
        let h = common_trigram_history(2_500, 2_234);
        for q in [
            "ref=t2234-end",
            "REF=T2234-END alpha",
            "t2234-end alpha-beta-gamma-delta",
        ] {
            for limit in [1, 500] {
                let (rows, _) = h.list_summaries_counted(Some(q), limit).unwrap();
                let work = h.last_search_work();
                let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
                assert_eq!(ids, h.ids_by_index(Some(q), limit).unwrap(), "{q}");
                assert_eq!(ids, [2_235], "{q}");
                assert_eq!(work.path, SearchPath::RareTrigram, "{q}: {work:?}");
                assert!(work.texts_read <= 80, "{q}: {work:?}");
            }
        }
        // Every trigram in most exchanges, the text in one: the phrase query answers after
        // 64 texts and the counts, not after 2,000 texts.
        let q = "alpha-beta-gamma-delta";
        let (rows, _) = h.list_summaries_counted(Some(q), 500).unwrap();
        let work = h.last_search_work();
        assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [2_235]);
        assert_eq!(work.path, SearchPath::VerifiedThenPhrase, "{work:?}");
        assert_eq!(work.texts_read, VERIFY_PROBE_ROWS, "{work:?}");
        assert!(work.trigrams_counted > 0, "{work:?}");
        // A text most exchanges hold is still read from the last trigram's texts alone.
        let q = "-end alpha-beta-gamma gamma";
        let (rows, _) = h.list_summaries_counted(Some(q), 500).unwrap();
        let work = h.last_search_work();
        assert_eq!(rows.len(), 500);
        assert_eq!(
            rows.iter().map(|r| r.id).collect::<Vec<_>>(),
            h.ids_by_index(Some(q), 500).unwrap()
        );
        assert_eq!(work.path, SearchPath::Verified, "{work:?}");
        assert_eq!(
            work.texts_read, 501,
            "{work:?}: the odd one is not among them"
        );
    }
}
