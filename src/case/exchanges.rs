//! The exchanges of a case: which history entries a bundle takes ([`Selection`]) and how they
//! are written in `exchanges.json` ([`CaseExchange`]).

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::CaseError;
use crate::client::history::{History, HistoryEntry};

/// Largest gap between two consecutive exchanges of one console session, seconds (30
/// minutes). The history has no session id, so a session is a run of entries whose times are
/// less than this apart ([`latest_session`]).
pub(crate) const SESSION_GAP_SECS: i64 = 30 * 60;

/// Most entries `--session` looks at (newest first).
pub(crate) const SESSION_SCAN_LIMIT: usize = 10_000;

/// Which history entries go into a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These history ids (in id order in the bundle).
    Ids(Vec<i64>),
    /// The newest entry.
    Last,
    /// The latest console session ([`latest_session`]).
    Session,
}

/// The entries `selection` names, oldest first.
///
/// Errors: [`CaseError::NoEntry`] for an id not in the history, [`CaseError::Empty`] for an
/// empty history, [`CaseError::Sqlite`] when it cannot be read.
pub fn select(history: &History, selection: &Selection) -> Result<Vec<HistoryEntry>, CaseError> {
    let read = CaseError::sqlite;
    let mut out = match selection {
        Selection::Ids(ids) => {
            let mut v = Vec::new();
            for id in ids {
                let e = history
                    .get(*id)
                    .map_err(read("reading the history"))?
                    .ok_or_else(|| CaseError::NoEntry(id.to_string()))?;
                if !v.iter().any(|x: &HistoryEntry| x.id == e.id) {
                    v.push(e);
                }
            }
            v
        }
        Selection::Last => history
            .last()
            .map_err(read("reading the history"))?
            .into_iter()
            .collect(),
        Selection::Session => latest_session(
            history
                .list(None, SESSION_SCAN_LIMIT)
                .map_err(read("reading the history"))?,
        ),
    };
    if out.is_empty() {
        return Err(CaseError::Empty);
    }
    out.sort_by_key(|e| e.id);
    Ok(out)
}

/// The latest session of `newest_first` (history entries, newest first): the newest entry
/// and each older one sent less than [`SESSION_GAP_SECS`] before the next newer one; oldest
/// first.
pub fn latest_session(newest_first: Vec<HistoryEntry>) -> Vec<HistoryEntry> {
    let mut out: Vec<HistoryEntry> = Vec::new();
    for e in newest_first {
        if let Some(newer) = out.last()
            && newer.at - e.at >= SESSION_GAP_SECS
        {
            break;
        }
        out.push(e);
    }
    out.reverse();
    out
}

/// A body in `exchanges.json`: the text when it is UTF-8, else base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CaseBody {
    /// UTF-8 text.
    Text(String),
    /// Any other bytes, standard base64 with padding.
    Base64(String),
}

impl CaseBody {
    /// `bytes` as text when UTF-8, else base64.
    pub fn of(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(t) => CaseBody::Text(t.to_string()),
            Err(_) => CaseBody::Base64(base64::engine::general_purpose::STANDARD.encode(bytes)),
        }
    }

    /// The bytes.
    ///
    /// Errors: base64 that does not decode (a message naming the problem).
    pub fn bytes(&self) -> Result<Vec<u8>, base64::DecodeError> {
        match self {
            CaseBody::Text(t) => Ok(t.as_bytes().to_vec()),
            CaseBody::Base64(b) => base64::engine::general_purpose::STANDARD.decode(b),
        }
    }
}

/// One exchange of `exchanges.json`: what the history stores of it ([`HistoryEntry`]),
/// with the request and the response each in an object (`at` in seconds since the Unix
/// epoch, headers and parameters as `[name, value]` pairs, `Signature` redacted as the
/// history stores it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseExchange {
    /// History id where it was exported from.
    pub id: i64,
    /// When it was sent, seconds since the Unix epoch.
    pub at: i64,
    /// The profile it was sent with.
    pub profile: String,
    /// Catalogue operation id, e.g. `accounts.list`.
    pub operation_id: String,
    /// The form values it was sent with, `(name, value)`.
    pub params: Vec<(String, String)>,
    /// The request as sent.
    pub request: CaseRequest,
    /// The answer.
    pub response: CaseResponse,
    /// Milliseconds from sending to the whole answer.
    pub elapsed_ms: u64,
    /// Seconds since the Unix epoch the request was signed for
    /// ([`HistoryEntry::signed_at`]: the sandbox's clock for an `embedded` profile);
    /// absent when unknown (and in bundles written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_at: Option<i64>,
    /// The signing clock's offset from real time, seconds
    /// ([`HistoryEntry::clock_offset_secs`]: a moved sandbox clock); absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_clock_offset: Option<i64>,
}

/// The request of a [`CaseExchange`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseRequest {
    /// HTTP method.
    pub method: String,
    /// The full URL.
    pub url: String,
    /// Path and query, as signed.
    pub path_and_query: String,
    /// Headers in wire order (secrets redacted).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: CaseBody,
}

/// The response of a [`CaseExchange`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseResponse {
    /// HTTP status.
    pub status: u16,
    /// Headers in wire order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: CaseBody,
}

impl From<&HistoryEntry> for CaseExchange {
    fn from(e: &HistoryEntry) -> Self {
        let request = CaseRequest {
            method: e.method.clone(),
            url: e.url.clone(),
            path_and_query: e.path_and_query.clone(),
            headers: e.request_headers.clone(),
            body: CaseBody::of(&e.request_body),
        };
        let response = CaseResponse {
            status: e.status,
            headers: e.response_headers.clone(),
            body: CaseBody::of(&e.response_body),
        };
        CaseExchange {
            id: e.id,
            at: e.at,
            profile: e.profile.clone(),
            operation_id: e.operation_id.clone(),
            params: e.params.clone(),
            request,
            response,
            elapsed_ms: e.elapsed_ms,
            signed_at: e.signed_at,
            sandbox_clock_offset: e.clock_offset_secs,
        }
    }
}

impl CaseExchange {
    /// The history entry again.
    ///
    /// Errors: a base64 body that does not decode.
    pub(crate) fn to_entry(&self) -> Result<HistoryEntry, base64::DecodeError> {
        let (rq, rs) = (&self.request, &self.response);
        Ok(HistoryEntry {
            id: self.id,
            at: self.at,
            profile: self.profile.clone(),
            operation_id: self.operation_id.clone(),
            params: self.params.clone(),
            method: rq.method.clone(),
            url: rq.url.clone(),
            path_and_query: rq.path_and_query.clone(),
            request_headers: rq.headers.clone(),
            request_body: rq.body.bytes()?,
            status: rs.status,
            response_headers: rs.headers.clone(),
            response_body: rs.body.bytes()?,
            elapsed_ms: self.elapsed_ms,
            signed_at: self.signed_at,
            clock_offset_secs: self.sandbox_clock_offset,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(id: i64, at: i64) -> HistoryEntry {
        HistoryEntry {
            id,
            at,
            ..HistoryEntry::default()
        }
    }

    #[test]
    fn the_latest_session_ends_at_a_gap_of_thirty_minutes() {
        // Newest first: 5 and 4 are 29:59 apart, 4 and 3 exactly 30 minutes.
        let list = vec![
            at(5, 10_000),
            at(4, 10_000 - 1799),
            at(3, 10_000 - 1799 - 1800),
            at(2, 0),
        ];
        let ids: Vec<i64> = latest_session(list).iter().map(|e| e.id).collect();
        assert_eq!(ids, vec![4, 5]);
        assert!(latest_session(Vec::new()).is_empty());
    }

    #[test]
    fn bodies_round_trip_as_text_or_base64() {
        let e = HistoryEntry {
            request_body: b"{\"a\":1}".to_vec(),
            response_body: vec![0xff, 0x00, 0x80],
            ..HistoryEntry::default()
        };
        let c = CaseExchange::from(&e);
        assert_eq!(c.request.body, CaseBody::Text("{\"a\":1}".into()));
        assert!(matches!(c.response.body, CaseBody::Base64(_)));
        let json = serde_json::to_string(&c).unwrap();
        let back: CaseExchange = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_entry().unwrap(), e);
    }
}
