//! The response viewer: status, time, size, headers and the body as pretty JSON with
//! syntax colours; search (`/`, `n`, `N`), a jq filter box (`|`, evaluated in-process by
//! jaq), copy body (`y`, OSC 52) and following a link of `_links` (`f`).
//!
//! Large bodies: the body is pretty-printed once, off the UI task
//! ([`ResponseView::from_exchange_owned`]), straight from the received bytes (no
//! `serde_json::Value` kept), and held once as text with an index of line starts
//! ([`Body`]). Drawing touches only the visible lines, and only their visible characters:
//! colouring and search highlights included. Search matches are computed once per query.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use ratatui::text::{Line, Span};

use super::highlight::{cut_segments, styled_line};
pub use super::jq::{
    FilterDone, FilterJob, JqError, MAX_FILTER_BYTES, MAX_FILTER_OUTPUTS, run_jq, spawn_filter,
};
use super::presenter::ScreenMask;
use super::response_links::collect_links;
pub use super::response_links::{LinkRef, LinkTarget, match_href};
pub use super::text::{human_size, human_time};
use super::theme::Theme;
use crate::client::{Exchange, PreparedRequest};

/// Most matches a search keeps (a one-letter search of 20 MB would otherwise hold
/// millions); the count then reads `100000+`.
pub const MAX_MATCHES: usize = 100_000;

/// A text held once, with the byte offset of each line start: line `i` is found in O(1)
/// without a `String` per line. Lines end at `\n` (a `\r` before it is dropped).
#[derive(Debug, Clone, Default)]
pub struct Body {
    pub(crate) text: Arc<String>,
    pub(crate) starts: Vec<u32>,
}

impl Body {
    /// Indexes `text`. Texts over 4 GiB are cut (offsets are 32-bit).
    pub fn new(mut text: String) -> Self {
        if text.len() > u32::MAX as usize {
            let mut cut = u32::MAX as usize;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        let bytes = text.as_bytes();
        let mut starts = Vec::new();
        if !text.is_empty() {
            let n = memchr::memchr_iter(b'\n', bytes).count();
            starts.reserve_exact(n + 1);
            starts.push(0);
            starts.extend(
                memchr::memchr_iter(b'\n', bytes)
                    .filter(|&i| i + 1 < bytes.len())
                    .map(|i| (i + 1) as u32),
            );
        }
        Body {
            text: Arc::new(text),
            starts,
        }
    }

    /// Number of lines (0 for an empty text).
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are no lines.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Byte range of line `i` in [`Body::text`] (without its line break).
    fn range(&self, i: usize) -> Range<usize> {
        let start = self.starts[i] as usize;
        let mut end = match self.starts.get(i + 1) {
            Some(&s) => s as usize - 1,
            None => self.text.len(),
        };
        if end > start && self.text.as_bytes()[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && self.text.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        start..end
    }

    /// Line `i`, or `None` past the end.
    pub fn line(&self, i: usize) -> Option<&str> {
        (i < self.len()).then(|| &self.text[self.range(i)])
    }

    /// The line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s as usize <= offset)
            .saturating_sub(1)
    }

    /// Iterates over the lines.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).filter_map(|i| self.line(i))
    }

    /// Bytes held: the text's and the line index's capacity.
    pub fn held_bytes(&self) -> usize {
        self.text.capacity() + self.starts.capacity() * std::mem::size_of::<u32>()
    }
}

/// The state of a jq filter applied to a response.
#[derive(Debug, Clone)]
pub enum FilterState {
    /// Being evaluated off the UI task.
    Running,
    /// The result: each output value pretty-printed, one after the other.
    Done(Body),
    /// Why the filter failed (with the column of a syntax error), as display lines.
    Failed(Body),
}

/// A jq filter and its state.
#[derive(Debug, Clone)]
pub struct Filtered {
    /// The expression.
    pub expr: String,
    /// Its state.
    pub state: FilterState,
}

/// A search of the shown body: computed once per query.
#[derive(Debug, Clone)]
pub struct Search {
    /// The text searched for; all lower case searches ignoring ASCII case (smart case).
    pub query: String,
    /// Byte offsets of the matches in the shown body, in order (at most [`MAX_MATCHES`]).
    pub(crate) matches: Vec<u32>,
    /// Whether there were more than [`MAX_MATCHES`].
    pub(crate) capped: bool,
    /// Index of the current match.
    pub(crate) current: usize,
}

impl Search {
    /// Finds `query` in `text`: smart case (case-insensitive for ASCII unless the query has
    /// an upper-case letter), non-overlapping, at most [`MAX_MATCHES`].
    pub fn run(query: &str, text: &str) -> Search {
        let mut matches = Vec::new();
        let mut capped = false;
        if !query.is_empty() {
            let ci = !query.chars().any(char::is_uppercase);
            if let Ok(ac) = aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(ci)
                .build([query])
            {
                for m in ac.find_iter(text) {
                    if matches.len() == MAX_MATCHES {
                        capped = true;
                        break;
                    }
                    matches.push(m.start() as u32);
                }
            }
        }
        Search {
            query: query.to_string(),
            matches,
            capped,
            current: 0,
        }
    }

    /// Number of matches kept.
    pub fn count(&self) -> usize {
        self.matches.len()
    }

    /// `3 of 17`, `0 of 0`, `1 of 100000+`.
    pub fn position_text(&self) -> String {
        let plus = if self.capped { "+" } else { "" };
        if self.matches.is_empty() {
            "no match".to_string()
        } else {
            format!("{} of {}{plus}", self.current + 1, self.matches.len())
        }
    }

    /// Matches overlapping bytes `range` of the text, as byte ranges, with whether each is
    /// the current one (binary search: O(log n + matches in range)).
    fn in_range(&self, range: Range<usize>) -> impl Iterator<Item = (Range<usize>, bool)> + '_ {
        let qlen = self.query.len();
        let first = self
            .matches
            .partition_point(|&m| (m as usize) + qlen <= range.start);
        self.matches[first..]
            .iter()
            .enumerate()
            .take_while(move |(_, m)| (**m as usize) < range.end)
            .map(move |(k, &m)| {
                let m = m as usize;
                (m..m + qlen, first + k == self.current)
            })
    }
}

/// A response made ready for display: the body pretty-printed once and indexed by line, so
/// that drawing touches only the visible lines, however large the body.
#[derive(Debug, Clone)]
pub struct ResponseView {
    /// Title of the operation sent.
    pub operation: String,
    /// Method sent.
    pub method: String,
    /// URL sent.
    pub url: String,
    /// HTTP status.
    pub status: u16,
    /// Time from sending to the whole body received.
    pub elapsed: Duration,
    /// Response headers as received.
    pub headers: Vec<(String, String)>,
    /// Body size in bytes, as received.
    pub body_bytes: usize,
    /// Whether the body is JSON (then the body lines are pretty JSON).
    pub is_json: bool,
    /// `_links.scaRedirect.href`, if present.
    pub sca_redirect: Option<String>,
    /// `accounts[0].resourceId`, if present.
    pub first_account_id: Option<String>,
    /// Every `_links` entry, nested ones too, in the body's order ([`LinkRef::path`]).
    pub links: Vec<LinkRef>,
    /// Top-level `paymentId` (payment initiation answer, BG `paymentInitationRequestResponse-201`).
    pub payment_id: Option<String>,
    /// Top-level `basketId` (signing basket answer, BG `signingBasketResponse-201`).
    pub basket_id: Option<String>,
    /// The first `transactionId` under `transactions` (booked before pending), if any.
    pub transaction_id: Option<String>,
    /// Top-level `transactionStatus` (payment or basket status, BG `transactionStatus`).
    pub transaction_status: Option<String>,
    /// Why the exchange could not be written to the history, when that failed (the send
    /// itself succeeded).
    pub history_error: Option<String>,
    /// The outcome of verifying the response's signature, when the profile asks for it
    /// (`verify_response_signatures`; Authentication rule 10).
    pub signature: Option<crate::client::response_sig::ResponseSignature>,
    /// The conformance lint of the answer ([`crate::lint::check_response`] against the
    /// Berlin Group 1.3.11 file and the interface document's response rules), in the order
    /// found; empty when it conforms. Shown as a badge in the head line and, when not
    /// empty, one line per finding between the headers and the body.
    pub lint: Vec<crate::lint::Finding>,
    /// The TLS section (issue 21): [`crate::client::tls_session::TlsSession::lines`] of an
    /// HTTPS exchange, shown after the headers and lint findings; empty over plain HTTP.
    pub tls: Vec<String>,
    pub(crate) body: Body,
    pub(crate) filter: Option<Box<Filtered>>,
    pub(crate) search: Option<Box<Search>>,
}

/// What is read from the parsed JSON before it is dropped.
struct Meta {
    pub(crate) sca_redirect: Option<String>,
    pub(crate) first_account_id: Option<String>,
    pub(crate) links: Vec<LinkRef>,
    pub(crate) payment_id: Option<String>,
    pub(crate) basket_id: Option<String>,
    pub(crate) transaction_id: Option<String>,
    pub(crate) transaction_status: Option<String>,
}

/// What [`Meta`] reads of a body too large for a JSON tree ([`crate::client::JSON_TREE_LIMIT`]):
/// parsed with everything else skipped, so it costs no memory beyond these fields.
#[derive(serde::Deserialize)]
struct Skeleton {
    #[serde(rename = "_links", default)]
    pub(crate) links: Option<serde_json::Value>,
    #[serde(default)]
    pub(crate) accounts: Option<Vec<SkeletonAccount>>,
    #[serde(default)]
    pub(crate) transactions: Option<SkeletonTransactions>,
}

#[derive(serde::Deserialize)]
struct SkeletonAccount {
    #[serde(rename = "resourceId", default)]
    pub(crate) resource_id: Option<String>,
}

#[derive(serde::Deserialize)]
struct SkeletonTransactions {
    #[serde(rename = "_links", default)]
    pub(crate) links: Option<serde_json::Value>,
}

impl Meta {
    /// The meta of a body kept as bytes only, and whether it is JSON at all.
    fn of_large(body: &[u8]) -> (Meta, bool) {
        if let Ok(s) = serde_json::from_slice::<Skeleton>(body) {
            let mut v = serde_json::Map::new();
            if let Some(l) = s.links {
                v.insert("_links".into(), l);
            }
            if let Some(a) = s.accounts {
                let ids = a
                    .into_iter()
                    .map(|a| serde_json::json!({ "resourceId": a.resource_id }))
                    .collect();
                v.insert("accounts".into(), serde_json::Value::Array(ids));
            }
            if let Some(t) = s.transactions {
                let mut tv = serde_json::Map::new();
                if let Some(l) = t.links {
                    tv.insert("_links".into(), l);
                }
                v.insert("transactions".into(), serde_json::Value::Object(tv));
            }
            let v = serde_json::Value::Object(v);
            return (Meta::of(Some(&v)), true);
        }
        let is_json = serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok();
        (Meta::of(None), is_json)
    }

    fn of(json: Option<&serde_json::Value>) -> Meta {
        let first_account_id = json
            .and_then(|j| j.get("accounts"))
            .and_then(|a| a.as_array())
            .and_then(|a| a.first())
            .and_then(|a| a.get("resourceId"))
            .and_then(|r| r.as_str())
            .map(str::to_string);
        let mut links = Vec::new();
        if let Some(j) = json {
            collect_links(j, "", &mut links);
        }
        let top = |k: &str| {
            json.and_then(|j| j.get(k))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let transaction_id = json.and_then(|j| j.get("transactions")).and_then(|t| {
            ["booked", "pending"].iter().find_map(|k| {
                t.get(*k)?
                    .as_array()?
                    .iter()
                    .find_map(|x| x.get("transactionId")?.as_str().map(str::to_string))
            })
        });
        Meta {
            sca_redirect: json.and_then(crate::xs2a::links::sca_redirect_of),
            first_account_id,
            links,
            payment_id: top("paymentId"),
            basket_id: top("basketId"),
            transaction_id,
            transaction_status: top("transactionStatus"),
        }
    }
}

/// `body` pretty-printed (two-space indent, `"key": value`) straight from the bytes,
/// without building a `serde_json::Value`; `None` when it is not one JSON value.
pub fn pretty_json(body: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(body.len() + body.len() / 2);
    let mut de = serde_json::Deserializer::from_slice(body);
    {
        let mut ser = serde_json::Serializer::pretty(&mut out);
        serde_transcode::transcode(&mut de, &mut ser).ok()?;
    }
    de.end().ok()?;
    out.shrink_to_fit();
    String::from_utf8(out).ok()
}

/// The conformance lint of `exchange`, the answer to `request` with body bytes `body`
/// (the request's `X-Request-ID` is the one the answer must echo).
fn lint_of(
    request: &PreparedRequest,
    exchange: &Exchange,
    body: &[u8],
) -> Vec<crate::lint::Finding> {
    let asked = crate::lint::Asked::request(&request.method, &request.path_and_query)
        .with_request_id(request.header(crate::xs2a::headers::X_REQUEST_ID));
    crate::lint::check_response(&asked, exchange.status, &exchange.headers, body)
}

impl ResponseView {
    /// Builds the view of `exchange`, the answer to `request` (an operation titled
    /// `operation`). Pretty-printing a large body takes a while: call this off the UI task.
    pub fn from_exchange(operation: &str, request: &PreparedRequest, exchange: &Exchange) -> Self {
        if exchange.json.is_none() {
            let (meta, is_json) = Meta::of_large(&exchange.body);
            return Self::build_with(
                operation,
                request,
                exchange,
                meta,
                Cow::Borrowed(&exchange.body),
                is_json,
                None,
            );
        }
        let meta = Meta::of(exchange.json.as_ref());
        Self::build(
            operation,
            request,
            exchange,
            meta,
            &exchange.body,
            exchange.json.as_ref(),
        )
    }

    /// As [`ResponseView::from_exchange`], taking the exchange so that its parsed JSON is
    /// dropped before the body is pretty-printed and its raw bytes right after (before the
    /// index of the text's lines is built): a large body is never held three times, and
    /// its received bytes go back to the system while the view is shown (issue 23).
    pub fn from_exchange_owned(
        operation: &str,
        request: &PreparedRequest,
        mut exchange: Exchange,
    ) -> Self {
        let json = exchange.json.take();
        let (meta, is_json) = match &json {
            Some(v) => (Meta::of(Some(v)), true),
            None => Meta::of_large(&exchange.body),
        };
        drop(json);
        let body = std::mem::take(&mut exchange.body);
        Self::build_with(
            operation,
            request,
            &exchange,
            meta,
            Cow::Owned(body),
            is_json,
            None,
        )
    }

    fn build(
        operation: &str,
        request: &PreparedRequest,
        exchange: &Exchange,
        meta: Meta,
        body: &[u8],
        json: Option<&serde_json::Value>,
    ) -> Self {
        Self::build_with(
            operation,
            request,
            exchange,
            meta,
            Cow::Borrowed(body),
            json.is_some(),
            json,
        )
    }

    /// `json`: the parsed body, used only if the bytes cannot be pretty-printed directly.
    /// An owned `body` goes to [`super::release::release`] once linted and pretty-printed.
    fn build_with(
        operation: &str,
        request: &PreparedRequest,
        exchange: &Exchange,
        meta: Meta,
        body: Cow<'_, [u8]>,
        is_json: bool,
        json: Option<&serde_json::Value>,
    ) -> Self {
        let lint = lint_of(request, exchange, &body);
        let text = if is_json {
            pretty_json(&body)
                .or_else(|| json.and_then(|v| serde_json::to_string_pretty(v).ok()))
                .unwrap_or_else(|| String::from_utf8_lossy(&body).into_owned())
        } else {
            String::from_utf8_lossy(&body).into_owned()
        };
        let body_bytes = body.len();
        if let Cow::Owned(bytes) = body {
            super::release::release(bytes.capacity(), bytes);
        }
        ResponseView {
            operation: operation.to_string(),
            method: request.method.clone(),
            url: request.url.clone(),
            status: exchange.status,
            elapsed: exchange.elapsed,
            headers: exchange.headers.clone(),
            body_bytes,
            is_json,
            sca_redirect: meta.sca_redirect,
            first_account_id: meta.first_account_id,
            links: meta.links,
            payment_id: meta.payment_id,
            basket_id: meta.basket_id,
            transaction_id: meta.transaction_id,
            transaction_status: meta.transaction_status,
            history_error: None,
            signature: None,
            lint,
            tls: Vec::new(),
            body: Body::new(text),
            filter: None,
            search: None,
        }
    }

    /// Bytes held in the view's large buffers: the body's text and line index, a filter's
    /// result, a search's matches (what [`super::release::release`] is given when the view
    /// closes).
    pub fn held_bytes(&self) -> usize {
        let filter = match self.filter.as_ref().map(|f| &f.state) {
            Some(FilterState::Done(b)) | Some(FilterState::Failed(b)) => b.held_bytes(),
            _ => 0,
        };
        let search = self
            .search
            .as_ref()
            .map_or(0, |s| s.matches.capacity() * std::mem::size_of::<u32>());
        self.body.held_bytes() + filter + search
    }

    /// The body as received (pretty JSON or text), unfiltered.
    pub fn body_lines(&self) -> &Body {
        &self.body
    }

    /// The body shown: the filter's result or error when a filter is applied, else the
    /// body.
    pub fn shown_body(&self) -> &Body {
        match self.filter.as_ref().map(|f| &f.state) {
            Some(FilterState::Done(b)) | Some(FilterState::Failed(b)) => b,
            _ => &self.body,
        }
    }

    /// The jq filter applied, if any.
    pub fn filter(&self) -> Option<&Filtered> {
        self.filter.as_deref()
    }

    /// The active search, if any.
    pub fn search(&self) -> Option<&Search> {
        self.search.as_deref()
    }

    /// Shows the TLS session of the exchange as its own section (`None`: plain HTTP).
    pub fn set_tls(&mut self, tls: Option<&crate::client::tls_session::TlsSession>) {
        self.tls = tls.map(|t| t.lines()).unwrap_or_default();
    }

    /// Number of scrollable lines: headers, lint findings, the TLS section, a blank line,
    /// the shown body.
    pub fn total_lines(&self) -> usize {
        self.head_lines() + 1 + self.shown_body().len().max(1)
    }

    /// Lines before the blank line and the body: the headers, one per lint finding, then
    /// the TLS section.
    pub fn head_lines(&self) -> usize {
        self.headers.len() + self.lint.len() + self.tls.len()
    }

    /// The lint badge of the head line: `lint ✔` (conforms), `lint ✘ N` (N errors) or
    /// `lint ⚠ N` (warnings only).
    pub fn lint_badge(&self) -> String {
        let errors = self
            .lint
            .iter()
            .filter(|f| f.severity == crate::lint::Severity::Error)
            .count();
        match (errors, self.lint.len()) {
            (_, 0) => "lint ✔".to_string(),
            (0, n) => format!("lint ⚠ {n}"),
            (e, _) => format!("lint ✘ {e}"),
        }
    }

    /// `200 OK`, `401 Unauthorized`, ...
    pub fn status_text(&self) -> String {
        let reason = http::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        format!("{} {}", self.status, reason).trim_end().to_string()
    }

    /// Elapsed time in whole milliseconds.
    pub fn elapsed_ms(&self) -> u128 {
        self.elapsed.as_millis()
    }

    /// The body size in human units: `512 B`, `1.5 KiB`, `20.0 MiB`.
    pub fn size_text(&self) -> String {
        human_size(self.body_bytes)
    }

    /// What `y` copies: the filter's result when a filter is applied, else the body.
    pub fn copy_text(&self) -> &str {
        match self.filter.as_ref().map(|f| &f.state) {
            Some(FilterState::Done(b)) => b.text(),
            _ => self.body.text(),
        }
    }

    /// Searches the shown body for `query` (replacing any previous search).
    pub fn set_search(&mut self, query: &str) {
        self.search = Some(Box::new(Search::run(query, self.shown_body().text())));
    }

    /// The display line (header, blank line and body lines counted) of the current match.
    pub(crate) fn current_match_line(&self) -> Option<(usize, usize)> {
        let s = self.search.as_ref()?;
        let off = *s.matches.get(s.current)? as usize;
        let body = self.shown_body();
        let li = body.line_of(off);
        let col = body.text()[body.range(li).start..off].chars().count();
        Some((self.head_lines() + 1 + li, col))
    }

    /// Moves the current match by `delta`, wrapping around.
    pub(crate) fn step_match(&mut self, delta: isize) {
        if let Some(s) = &mut self.search {
            let n = s.matches.len();
            if n > 0 {
                s.current = (s.current as isize + delta).rem_euclid(n as isize) as usize;
            }
        }
    }
}

/// The response pane's content.
#[derive(Debug, Clone, Default)]
pub enum ResponseState {
    /// Nothing sent yet.
    #[default]
    Empty,
    /// Waiting for an answer to `method url`.
    Sending {
        /// Method sent.
        method: String,
        /// URL sent.
        url: String,
    },
    /// An answer arrived.
    Done(Box<ResponseView>),
    /// No answer: the request could not be sent or the connection failed.
    Failed(String),
}

impl ResponseState {
    /// Bytes held in the large buffers of the view shown ([`ResponseView::held_bytes`]; 0
    /// without one).
    pub fn held_bytes(&self) -> usize {
        match self {
            ResponseState::Done(v) => v.held_bytes(),
            _ => 0,
        }
    }
}

// ---------------------------------------------------------------------------------------
// App state and keys

/// Which box is open at the bottom of the response pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `/` search.
    Search,
    /// `|` jq filter.
    Filter,
}

/// A one-line text box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputBox {
    /// Search or filter.
    pub kind: InputKind,
    /// The text typed.
    pub text: String,
    /// Cursor position in characters.
    pub cursor: usize,
}

/// Display line `i` of the view (headers, a blank line, the shown body), scrolled right by
/// `hscroll` characters and cut to `w`: only those characters are coloured. `mask` is
/// presenter mode's masking ([`ScreenMask`]; a line it changes loses its search marks).
pub fn view_line(
    v: &ResponseView,
    i: usize,
    hscroll: usize,
    w: usize,
    t: &Theme,
    mask: &ScreenMask,
) -> Line<'static> {
    let headers = v.headers.len();
    if i < headers {
        let (n, val) = &v.headers[i];
        let segs = vec![
            (t.header_name, format!("{n}: ")),
            (t.base, mask.header(n, val).into_owned()),
        ];
        return Line::from(cut_segments(segs, hscroll, w));
    }
    let nh = v.head_lines();
    let linted = headers + v.lint.len();
    if i >= linted && i < nh {
        let text = &v.tls[i - linted];
        let segs = match text.split_once(": ") {
            Some((k, rest)) => vec![
                (t.header_name, format!("{k}: ")),
                (t.base, rest.to_string()),
            ],
            _ => vec![(t.base, text.clone())],
        };
        return Line::from(cut_segments(segs, hscroll, w));
    }
    if i < nh {
        let f = &v.lint[i - headers];
        let (mark, style) = match f.severity {
            crate::lint::Severity::Error => ("✘", t.error),
            crate::lint::Severity::Warning => ("⚠", t.warning),
        };
        let segs = vec![
            (style, format!("lint {mark} ")),
            (t.dim, format!("[{}] ", f.rule)),
            (t.base, f.message.clone()),
        ];
        return Line::from(cut_segments(segs, hscroll, w));
    }
    if i == nh {
        return Line::default();
    }
    let body = v.shown_body();
    if body.is_empty() {
        return Line::from(Span::styled("(empty body)", t.dim));
    }
    let bi = i - nh - 1;
    let Some(line) = body.line(bi) else {
        return Line::default();
    };
    let masked = mask.text(line);
    let (line, masked) = match &masked {
        std::borrow::Cow::Borrowed(l) => (*l, false),
        std::borrow::Cow::Owned(l) => (l.as_str(), true),
    };
    let line_start = body.range(bi).start;
    let failed = matches!(
        v.filter.as_ref().map(|f| &f.state),
        Some(FilterState::Failed(_))
    );
    let json = (v.is_json || v.filter.is_some()) && !failed;
    let base = if failed { t.error } else { t.base };
    let marks: Vec<(Range<usize>, bool)> = match &v.search {
        // The marks are byte ranges of the line as stored.
        Some(_) if masked => Vec::new(),
        Some(s) => s
            .in_range(line_start..line_start + line.len())
            .map(|(r, cur)| {
                (
                    r.start.saturating_sub(line_start)..(r.end - line_start).min(line.len()),
                    cur,
                )
            })
            .collect(),
        None => Vec::new(),
    };
    Line::from(styled_line(line, json, base, &marks, hscroll, w, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_index_and_lines() {
        let b = Body::new("a\nbc\r\n\nd".to_string());
        assert_eq!(b.len(), 4);
        assert_eq!(b.iter().collect::<Vec<_>>(), vec!["a", "bc", "", "d"]);
        assert_eq!(b.line_of(0), 0);
        assert_eq!(b.line_of(3), 1);
        assert_eq!(b.line_of(7), 3);
        assert_eq!(Body::new("x\n".into()).len(), 1);
        assert!(Body::new(String::new()).is_empty());
    }

    #[test]
    fn pretty_json_matches_serde() {
        let v = serde_json::json!({"a": [1, 2.5, {"b": null}], "c": "x\"y", "d": {}, "e": []});
        let compact = serde_json::to_vec(&v).unwrap();
        assert_eq!(
            pretty_json(&compact).unwrap(),
            serde_json::to_string_pretty(&v).unwrap()
        );
        assert!(pretty_json(b"{\"a\": 1} trailing").is_none());
    }

    #[test]
    fn search_is_smart_case_and_capped() {
        let s = Search::run("abc", "xABCx abc");
        assert_eq!(s.matches, vec![1, 6]);
        let s = Search::run("ABC", "xABCx abc");
        assert_eq!(s.matches, vec![1]);
        let big = "a".repeat(MAX_MATCHES + 5);
        let s = Search::run("a", &big);
        assert_eq!(s.count(), MAX_MATCHES);
        assert!(s.position_text().ends_with('+'));
    }

    /// Issue 23: the received bytes of a large answer go to the release thread once its
    /// view is built (they are not needed while it is shown).
    #[test]
    fn the_received_bytes_of_a_large_answer_go_to_the_release_thread() {
        crate::tui::release::take_sent();
        let body = serde_json::to_vec(&serde_json::json!({ "f": "x".repeat(2 << 20) })).unwrap();
        let len = body.len();
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
            body,
            elapsed: Duration::from_millis(3),
            json: None,
        };
        let view = ResponseView::from_exchange_owned("List accounts", &request, exchange);
        assert!(view.body_lines().text().contains("xxx"));
        let sent = crate::tui::release::take_sent();
        assert_eq!(sent.len(), 1);
        assert!(sent[0] >= len, "{sent:?} for {len} bytes");
    }

    #[test]
    fn human_units() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(20 << 20), "20.0 MiB");
        assert_eq!(human_time(Duration::from_millis(42)), "42 ms");
        assert_eq!(human_time(Duration::from_millis(1250)), "1.25 s");
    }
}
