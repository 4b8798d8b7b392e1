//! The response viewer: status, time, size, headers and the body as pretty JSON with
//! syntax colours; search (`/`, `n`, `N`), a jq filter box (`|`, evaluated in-process by
//! jaq), copy body (`y`, OSC 52) and following a link of `_links` (`f`).
//!
//! Large bodies: the body is pretty-printed once, off the UI task
//! ([`ResponseView::from_exchange_owned`]), straight from the received bytes (no
//! `serde_json::Value` kept), and held once as text with an index of line starts
//! ([`Body`]). Drawing touches only the visible lines, and only their visible characters:
//! colouring and search highlights included. Search matches are computed once per query.

use std::cell::Cell;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::presenter::ScreenMask;
use super::theme::Theme;
use crate::client::{Exchange, PreparedRequest};
use crate::xs2a::links::names;
use crate::xs2a::operations::{OPERATIONS, Operation, ParamKind};

/// Most matches a search keeps (a one-letter search of 20 MB would otherwise hold
/// millions); the count then reads `100000+`.
pub const MAX_MATCHES: usize = 100_000;

/// Most values a jq filter may produce before it is stopped.
pub const MAX_FILTER_OUTPUTS: usize = 100_000;

/// Most bytes of filter output kept (the rest is cut with a note).
pub const MAX_FILTER_BYTES: usize = 64 << 20;

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
}

/// One entry of the response's `_links` (Berlin Group `_linksAll`): its name, `href` and
/// `verbs` (when the bank gives them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRef {
    /// Link name, e.g. `balances`, `next`, `scaRedirect`.
    pub name: String,
    /// Where it sits in the body, as a JSON path: `_links.balances`,
    /// `transactions._links.next`, `transactions.booked[0]._links.transactionDetails`.
    pub path: String,
    /// Absolute URL or path.
    pub href: String,
    /// HTTP methods allowed on it (`verbs`), often empty.
    pub verbs: Vec<String>,
}

/// What following a link means: the catalogue operation and the parameter values taken
/// from the `href` (path parameters and the operation's query parameters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkTarget {
    /// The operation whose method and path template match.
    pub op: &'static Operation,
    /// `(name, value)` for each parameter found in the `href`, percent-decoded.
    pub params: Vec<(String, String)>,
}

/// Finds the catalogue operation a link leads to: the `href`'s path (from `/v1/` on; an
/// absolute URL's origin and any base path before it are ignored) is matched against each
/// operation's path template, preferring the method the link implies
/// (`startAuthorisation` → POST, else the first of `verbs`, else GET) and, among equals,
/// the template with the most literal segments (so `/v1/accounts/{id}/balances` wins over
/// `/v1/{payment-service}/{payment-product}/{payment-id}`). Query parameters the operation
/// knows (e.g. `bookingStatus`, `limit`, `offset` of the paging links) are taken too.
///
/// `None` when no operation matches (e.g. `scaStatus`, which has no catalogue entry) or
/// the href has no `/v1/` path.
pub fn match_href(name: &str, href: &str, verbs: &[String]) -> Option<LinkTarget> {
    let (path, query) = split_href(href)?;
    let at = if path.starts_with("/v1/") {
        0
    } else {
        path.find("/v1/")?
    };
    let path = &path[at..];
    let segs: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let wanted = if name == names::START_AUTHORISATION {
        "POST".to_string()
    } else {
        verbs
            .first()
            .map(|v| v.to_ascii_uppercase())
            .unwrap_or_else(|| "GET".into())
    };
    let mut best: Option<(usize, LinkTarget)> = None;
    for op in OPERATIONS {
        let Some((literals, params)) = match_template(op.path, &segs) else {
            continue;
        };
        // Exact method first, then GET, then anything.
        let method_rank = if op.method == wanted {
            2
        } else if op.method == "GET" {
            1
        } else {
            0
        };
        let score = method_rank * 1000 + literals;
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, LinkTarget { op, params }));
        }
    }
    let (_, LinkTarget { op, mut params }) = best?;
    if let Some(q) = query {
        for (k, v) in url::form_urlencoded::parse(q.as_bytes()) {
            if op
                .params
                .iter()
                .any(|p| p.kind == ParamKind::Query && p.name == k)
            {
                params.push((k.into_owned(), v.into_owned()));
            }
        }
    }
    Some(LinkTarget { op, params })
}

/// `(path, query)` of an href: absolute URLs are parsed, paths split at `?` (a fragment is
/// dropped).
fn split_href(href: &str) -> Option<(String, Option<String>)> {
    let href = href.trim();
    if href.starts_with("http://") || href.starts_with("https://") {
        let u = url::Url::parse(href).ok()?;
        return Some((u.path().to_string(), u.query().map(str::to_string)));
    }
    let href = href.split('#').next().unwrap_or("");
    match href.split_once('?') {
        Some((p, q)) => Some((p.to_string(), Some(q.to_string()))),
        None => Some((href.to_string(), None)),
    }
}

/// Matches path segments against a template ([`crate::xs2a::paths::fit`]): the number of
/// literal segments and the captured `{name}` values, percent-decoded.
fn match_template(template: &str, segs: &[&str]) -> Option<(usize, Vec<(String, String)>)> {
    crate::xs2a::paths::fit(template, &segs.join("/"))
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

/// Every `_links` object in `v`, nested ones too (Berlin Group puts paging links under
/// `transactions._links` and `transactionDetails` under each transaction's `_links`), in
/// the body's order, each entry named with its JSON path (`prefix` is the path of `v`).
/// Entries without a string `href` are skipped.
fn collect_links(v: &serde_json::Value, prefix: &str, out: &mut Vec<LinkRef>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        serde_json::Value::Object(o) => {
            for (k, child) in o {
                if k == "_links"
                    && let Some(lo) = child.as_object()
                {
                    for (name, l) in lo {
                        let Some(href) = l.get("href").and_then(|h| h.as_str()) else {
                            continue;
                        };
                        let verbs = l
                            .get("verbs")
                            .and_then(|v| v.as_array())
                            .map(|a| {
                                a.iter()
                                    .filter_map(|x| x.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default();
                        out.push(LinkRef {
                            name: name.clone(),
                            path: format!("{}.{name}", join("_links")),
                            href: href.to_string(),
                            verbs,
                        });
                    }
                } else {
                    collect_links(child, &join(k), out);
                }
            }
        }
        serde_json::Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                collect_links(child, &format!("{prefix}[{i}]"), out);
            }
        }
        _ => {}
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
                &exchange.body,
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
    /// dropped before the body is pretty-printed and its raw bytes right after: a large
    /// body is never held three times.
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
        Self::build_with(operation, request, &exchange, meta, &body, is_json, None)
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
            body,
            json.is_some(),
            json,
        )
    }

    /// `json`: the parsed body, used only if the bytes cannot be pretty-printed directly.
    fn build_with(
        operation: &str,
        request: &PreparedRequest,
        exchange: &Exchange,
        meta: Meta,
        body: &[u8],
        is_json: bool,
        json: Option<&serde_json::Value>,
    ) -> Self {
        let text = if is_json {
            pretty_json(body)
                .or_else(|| json.and_then(|v| serde_json::to_string_pretty(v).ok()))
                .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned())
        } else {
            String::from_utf8_lossy(body).into_owned()
        };
        ResponseView {
            operation: operation.to_string(),
            method: request.method.clone(),
            url: request.url.clone(),
            status: exchange.status,
            elapsed: exchange.elapsed,
            headers: exchange.headers.clone(),
            body_bytes: body.len(),
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
            lint: lint_of(request, exchange, body),
            body: Body::new(text),
            filter: None,
            search: None,
        }
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

    /// Number of scrollable lines: headers, lint findings, a blank line, the shown body.
    pub fn total_lines(&self) -> usize {
        self.head_lines() + 1 + self.shown_body().len().max(1)
    }

    /// Lines before the blank line and the body: the headers, then one per lint finding.
    pub fn head_lines(&self) -> usize {
        self.headers.len() + self.lint.len()
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

/// `n` bytes in human units (IEC): `512 B`, `1.5 KiB`, `20.0 MiB`, `1.2 GiB`.
pub fn human_size(n: usize) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// A duration for the head line: `42 ms` below a second, else `1.25 s`.
pub fn human_time(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.2} s", d.as_secs_f64())
    }
}

/// The response pane's content.
#[derive(Debug, Clone)]
pub enum ResponseState {
    /// Nothing sent yet.
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

// ---------------------------------------------------------------------------------------
// jq (jaq)

/// A jq filter to evaluate off the UI task ([`Action::RunFilter`]): the expression and the
/// shown body it applies to (shared, not copied).
#[derive(Debug, Clone)]
pub struct FilterJob {
    /// The jq expression.
    pub expr: String,
    pub(crate) input: Arc<String>,
}

impl PartialEq for FilterJob {
    fn eq(&self, other: &Self) -> bool {
        self.expr == other.expr && Arc::ptr_eq(&self.input, &other.input)
    }
}

impl Eq for FilterJob {}

/// The outcome of a [`FilterJob`], for [`crate::tui::App::filter_finished`].
#[derive(Debug)]
pub struct FilterDone {
    pub(crate) expr: String,
    pub(crate) input: Arc<String>,
    pub(crate) result: Result<String, JqError>,
}

/// Why a jq filter gave no output (the text is what the response pane shows).
#[derive(Debug, thiserror::Error)]
pub enum JqError {
    /// The body is not JSON.
    #[error("the body is not JSON: {0}")]
    NotJson(#[source] jaq_json::read::Error),
    /// The expression does not parse, or names an undefined filter or variable (each
    /// problem with its column, `; `-separated).
    #[error("{0}")]
    Compile(String),
    /// Evaluation raised an error (`.a` on an array, `error(...)`): jaq's message.
    #[error("jq error: {0}")]
    Eval(String),
    /// The filter called `halt`.
    #[error("the filter stopped (halt)")]
    Halt,
    /// An output value could not be written.
    #[error(transparent)]
    Write(#[from] std::io::Error),
    /// The thread evaluating it could not start.
    #[error("cannot start the filter: {0}")]
    Spawn(#[source] std::io::Error),
}

impl FilterJob {
    /// Evaluates the filter (slow on a large body: call it off the UI task).
    pub fn run(self) -> FilterDone {
        let result = run_jq(&self.expr, &self.input);
        FilterDone {
            expr: self.expr,
            input: self.input,
            result,
        }
    }
}

/// Evaluates `expr` with jaq (jq's language with jaq's standard library) on the JSON
/// `input` and returns every output value pretty-printed (two-space indent), one after the
/// other. At most [`MAX_FILTER_OUTPUTS`] values and [`MAX_FILTER_BYTES`] bytes are kept;
/// a note says when the output was cut.
///
/// Errors: the input is not JSON; the expression does not parse (`… at column N`) or uses
/// an undefined filter or variable; evaluation fails (`.a` on an array, `error(...)`,
/// `halt`).
pub fn run_jq(expr: &str, input: &str) -> Result<String, JqError> {
    use jaq_core::load::{Arena, File, Loader};
    use jaq_core::{Compiler, Ctx, Vars, data};
    use jaq_json::Val;

    let input = jaq_json::read::parse_single(input.as_bytes()).map_err(JqError::NotJson)?;
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let loader = Loader::new(defs);
    let arena = Arena::default();
    let program = File {
        code: expr,
        path: (),
    };
    let modules = loader
        .load(&arena, program)
        .map_err(|errs| JqError::Compile(load_error(expr, errs)))?;
    let filter = Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|errs| {
            let mut out = Vec::new();
            for (_, es) in errs {
                for (s, undefined) in es {
                    out.push(format!(
                        "undefined {} {s}{}",
                        undefined.as_str(),
                        column_note(expr, s)
                    ));
                }
            }
            JqError::Compile(out.join("; "))
        })?;
    let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
    let pp = jaq_json::write::Pp {
        indent: Some("  ".to_string()),
        sep_space: true,
        ..Default::default()
    };
    let mut out: Vec<u8> = Vec::new();
    for (n, item) in filter.id.run((ctx, input)).enumerate() {
        if n == MAX_FILTER_OUTPUTS || out.len() > MAX_FILTER_BYTES {
            out.extend_from_slice(
                format!(
                    "… output cut after {n} values ({})\n",
                    human_size(out.len())
                )
                .as_bytes(),
            );
            break;
        }
        match item {
            Ok(v) => {
                jaq_json::write::write(&mut out, &pp, 0, &v)?;
                out.push(b'\n');
            }
            Err(exn) => {
                return Err(match exn.get_err() {
                    Ok(e) => JqError::Eval(e.to_string()),
                    Err(_) => JqError::Halt,
                });
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The messages of load (lex and parse) errors with their column in `expr`.
fn load_error<P>(expr: &str, errs: jaq_core::load::Errors<&str, P>) -> String {
    use jaq_core::load::Error;
    let mut out = Vec::new();
    for (_, e) in errs {
        match e {
            Error::Io(v) => out.extend(v.into_iter().map(|(path, msg)| format!("{path}: {msg}"))),
            Error::Lex(v) => out.extend(v.into_iter().map(|(expect, got)| {
                format!("expected {}{}", lex_expect(&expect), column_note(expr, got))
            })),
            Error::Parse(v) => out.extend(v.into_iter().map(|(expect, got)| {
                let found = if got.is_empty() {
                    "the end".to_string()
                } else {
                    format!("{:?}", got.chars().take(20).collect::<String>())
                };
                format!(
                    "expected {}, found {found}{}",
                    expect.as_str(),
                    column_note(expr, got)
                )
            })),
        }
    }
    if out.is_empty() {
        "the filter does not parse".to_string()
    } else {
        out.join("; ")
    }
}

fn lex_expect(e: &jaq_core::load::lex::Expect<&str>) -> &'static str {
    use jaq_core::load::lex::Expect;
    match e {
        Expect::Delim(d) if !["(", "[", "{", "\""].contains(d) => "closing delimiter",
        other => other.as_str(),
    }
}

/// ` at column N` when `part` is a slice of `expr` (1-based, in characters).
fn column_note(expr: &str, part: &str) -> String {
    let start = expr.as_ptr() as usize;
    let p = part.as_ptr() as usize;
    if p < start || p > start + expr.len() {
        return String::new();
    }
    let off = p - start;
    match expr.get(..off) {
        Some(before) => format!(" at column {}", before.chars().count() + 1),
        None => String::new(),
    }
}

/// Starts `job` on a thread of its own (a runaway filter never blocks the console, and a
/// detached thread does not hold up quitting); the receiver gets the outcome.
pub fn spawn_filter(job: FilterJob) -> tokio::sync::oneshot::Receiver<FilterDone> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let expr = job.expr.clone();
    let input = job.input.clone();
    let spawned = std::thread::Builder::new()
        .name("jq-filter".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let _ = tx.send(job.run());
        });
    if let Err(e) = spawned {
        let (tx, rx2) = tokio::sync::oneshot::channel();
        let _ = tx.send(FilterDone {
            expr,
            input,
            result: Err(JqError::Spawn(e)),
        });
        return rx2;
    }
    rx
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

/// The response viewer's own UI state in [`App`] (the per-response state, filter and
/// search, lives in the [`ResponseView`]).
#[derive(Debug, Default)]
pub struct ResponseUi {
    /// The open search or filter box.
    pub(crate) input: Option<InputBox>,
    /// Width of the body area at the last draw (to scroll a match into view).
    pub(crate) width: Cell<usize>,
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

/// Colours `line` (JSON tokens when `json`, else `base`), paints the search `marks`
/// (byte ranges, `true` for the current match) over them, and cuts the result to the
/// characters `skip..skip + w`. Work is bounded by `skip + w` characters, not by the
/// line's length.
fn styled_line(
    line: &str,
    json: bool,
    base: Style,
    marks: &[(Range<usize>, bool)],
    skip: usize,
    w: usize,
    t: &Theme,
) -> Vec<Span<'static>> {
    let end = line
        .char_indices()
        .nth(skip + w)
        .map(|(i, _)| i)
        .unwrap_or(line.len());
    let segs = if json {
        json_tokens(line, end, t)
    } else {
        vec![(base, 0..end)]
    };
    let segs = overlay(segs, marks, t);
    let texts = segs
        .into_iter()
        .filter(|(_, r)| r.start < r.end)
        .map(|(s, r)| (s, sanitize(&line[r])))
        .collect();
    cut_segments(texts, skip, w)
}

/// Paints search marks over token segments.
fn overlay(
    segs: Vec<(Style, Range<usize>)>,
    marks: &[(Range<usize>, bool)],
    t: &Theme,
) -> Vec<(Style, Range<usize>)> {
    if marks.is_empty() {
        return segs;
    }
    let current = t.selected;
    let other = Style::new().add_modifier(Modifier::REVERSED);
    let mut out = Vec::with_capacity(segs.len() + 2 * marks.len());
    for (style, r) in segs {
        let mut pos = r.start;
        for (m, cur) in marks {
            if m.end <= pos || m.start >= r.end {
                continue;
            }
            let ms = m.start.max(pos);
            let me = m.end.min(r.end);
            if ms > pos {
                out.push((style, pos..ms));
            }
            let hs = if *cur { current } else { style.patch(other) };
            out.push((hs, ms..me));
            pos = me;
        }
        if pos < r.end {
            out.push((style, pos..r.end));
        }
    }
    out
}

/// The line with tabs as spaces and other control characters as `�` (char for char, so
/// columns stay put).
fn sanitize(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| match c {
            '\t' => ' ',
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// How far past the visible part a string is scanned to tell a key (followed by `:`) from a
/// value.
const KEY_PEEK: usize = 512;

/// Token segments (style, byte range) of a pretty-JSON line up to byte `end`: keys,
/// strings, numbers, literals (`true`, `false`, `null`), punctuation, spaces.
fn json_tokens(line: &str, end: usize, t: &Theme) -> Vec<(Style, Range<usize>)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < end {
        let c = b[i];
        let start = i;
        let style = if c == b'"' {
            let limit = (end + KEY_PEEK).min(b.len());
            let mut j = i + 1;
            let mut closed = false;
            while j < limit {
                match b[j] {
                    b'\\' => j += 2,
                    b'"' => {
                        closed = true;
                        j += 1;
                        break;
                    }
                    _ => j += 1,
                }
            }
            let j = j.min(b.len());
            let mut k = j;
            while k < b.len() && k < j + 4 && b[k] == b' ' {
                k += 1;
            }
            i = j;
            if closed && k < b.len() && b[k] == b':' {
                t.json_key
            } else {
                t.json_string
            }
        } else if c == b'-' || c.is_ascii_digit() {
            i += 1;
            while i < end
                && (b[i].is_ascii_digit() || matches!(b[i], b'+' | b'-' | b'.' | b'e' | b'E'))
            {
                i += 1;
            }
            t.json_number
        } else if c.is_ascii_alphabetic() {
            while i < end && b[i].is_ascii_alphabetic() {
                i += 1;
            }
            t.json_literal
        } else if c == b' ' {
            while i < end && b[i] == b' ' {
                i += 1;
            }
            t.base
        } else if c.is_ascii() {
            i += 1;
            t.json_punct
        } else {
            // Not JSON syntax (cannot happen in pretty JSON): take the whole character.
            i += line[i..].chars().next().map(char::len_utf8).unwrap_or(1);
            t.base
        };
        out.push((style, start..i.min(end)));
    }
    out
}

/// Styled segments with the first `skip` characters dropped and cut to `w` characters.
pub(crate) fn cut_segments(
    segs: Vec<(Style, String)>,
    skip: usize,
    w: usize,
) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut to_skip = skip;
    let mut room = w;
    for (style, text) in segs {
        if room == 0 {
            break;
        }
        let n = text.chars().count();
        if to_skip >= n {
            to_skip -= n;
            continue;
        }
        let piece: String = text.chars().skip(to_skip).take(room).collect();
        to_skip = 0;
        room -= piece.chars().count();
        out.push(Span::styled(piece, style));
    }
    out
}

/// Colours one line of pretty JSON (keys, strings, numbers, literals, punctuation), looking
/// only at the characters that can be visible (`skip..skip + w`).
pub(crate) fn json_spans(line: &str, skip: usize, w: usize, t: &Theme) -> Vec<Span<'static>> {
    styled_line(line, true, t.base, &[], skip, w, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str, href: &str) -> Option<(&'static str, Vec<(String, String)>)> {
        match_href(name, href, &[]).map(|t| (t.op.id, t.params))
    }

    fn p(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn sandbox_links_match_catalogue_operations() {
        // accounts.rs / manage.rs / psu.rs: balances, transactions, account.
        assert_eq!(
            target("balances", "/v1/accounts/acc-1/balances"),
            Some(("accounts.balances", vec![p("account-id", "acc-1")]))
        );
        assert_eq!(
            target("transactions", "/v1/accounts/acc-1/transactions"),
            Some(("accounts.transactions", vec![p("account-id", "acc-1")]))
        );
        assert_eq!(
            target("account", "/v1/accounts/acc%201").map(|t| t.0),
            Some("accounts.get")
        );
        assert_eq!(
            target("account", "/v1/accounts").map(|t| t.0),
            Some("accounts.list")
        );
        // cards.rs
        assert_eq!(
            target("balances", "/v1/card-accounts/c-9/balances"),
            Some(("card-accounts.balances", vec![p("card-account-id", "c-9")]))
        );
        // accounts.rs paging: next / previous / first / last keep the query.
        assert_eq!(
            target(
                "next",
                "/v1/accounts/acc-1/transactions?bookingStatus=booked&dateFrom=2026-01-01&limit=200&offset=400"
            ),
            Some((
                "accounts.transactions",
                vec![
                    p("account-id", "acc-1"),
                    p("bookingStatus", "booked"),
                    p("dateFrom", "2026-01-01"),
                    p("limit", "200"),
                    p("offset", "400"),
                ]
            ))
        );
        // payments.rs: self, status, startAuthorisation (POST), absolute URLs with a base path.
        let pay = "/v1/payments/norwegian-domestic-credit-transfers/pay-7";
        let ids = vec![
            p("payment-service", "payments"),
            p("payment-product", "norwegian-domestic-credit-transfers"),
            p("payment-id", "pay-7"),
        ];
        assert_eq!(target("self", pay), Some(("payments.get", ids.clone())));
        assert_eq!(
            target("status", &format!("https://bank.example/xs2a{pay}/status")),
            Some(("payments.status", ids.clone()))
        );
        assert_eq!(
            target("startAuthorisation", &format!("{pay}/authorisations")),
            Some(("payments.start-authorisation", ids))
        );
        // baskets.rs (verbs given).
        assert_eq!(
            match_href(
                "startAuthorisation",
                "/v1/signing-baskets/b-1/authorisations",
                &["POST".to_string()]
            )
            .map(|t| t.op.id),
            Some("baskets.start-authorisation")
        );
        assert_eq!(
            match_href(
                "self",
                "/v1/signing-baskets/b-1",
                &["GET".into(), "DELETE".into()]
            )
            .map(|t| t.op.id),
            Some("baskets.get")
        );
        // No operation: scaStatus, a non-payment service, no /v1/.
        assert_eq!(
            target("scaStatus", &format!("{pay}/authorisations/a-1")),
            None
        );
        assert_eq!(target("x", "/v1/accounts-typo/a/b"), None);
        assert_eq!(target("x", "https://example.com/elsewhere"), None);
    }

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
    fn colours_and_cuts() {
        let t = Theme::dark();
        let spans = json_spans("  \"key\": \"value\",", 0, 80, &t);
        let text: String = spans.iter().map(|s| s.content.to_string()).collect();
        assert_eq!(text, "  \"key\": \"value\",");
        assert_eq!(spans[1].style, t.json_key);
        assert_eq!(spans[1].content, "\"key\"");
        assert_eq!(spans[4].style, t.json_string);
        let styles: Vec<_> = json_spans("  \"n\": -1.5e3, true, null", 0, 80, &t)
            .into_iter()
            .map(|s| (s.content.to_string(), s.style))
            .collect();
        assert!(styles.contains(&("-1.5e3".into(), t.json_number)));
        assert!(styles.contains(&("true".into(), t.json_literal)));
        assert!(styles.contains(&("null".into(), t.json_literal)));
        assert!(styles.contains(&(":".into(), t.json_punct)));
        let cut: String = json_spans("  \"key\": 12", 4, 3, &t)
            .iter()
            .map(|s| s.content.to_string())
            .collect();
        assert_eq!(cut, "ey\"");
        // A key cut off by the window is still a key.
        assert_eq!(
            json_spans("  \"longkey\": 1", 0, 5, &t)[1].style,
            t.json_key
        );
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

    #[test]
    fn jq_results_and_errors() {
        let input = r#"{"accounts": [{"resourceId": "a1"}, {"resourceId": "a2"}]}"#;
        assert_eq!(
            run_jq(".accounts[].resourceId", input).unwrap(),
            "\"a1\"\n\"a2\"\n"
        );
        assert_eq!(
            run_jq(".accounts[0]", input).unwrap(),
            "{\n  \"resourceId\": \"a1\"\n}\n"
        );
        let e = run_jq(".accounts[", input).unwrap_err().to_string();
        assert!(e.contains("column"), "{e}");
        let e = run_jq(".accounts | nosuchfn", input)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nosuchfn") && e.contains("column 13"), "{e}");
        let e = run_jq(".accounts.x", input).unwrap_err().to_string();
        assert!(e.starts_with("jq error"), "{e}");
        assert!(run_jq("halt", input).is_err());
        assert!(
            run_jq(".", "not json")
                .unwrap_err()
                .to_string()
                .contains("not JSON")
        );
        let many = run_jq("range(200000)", "null").unwrap();
        assert!(many.contains("output cut after"), "capped");
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
