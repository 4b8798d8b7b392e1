//! Serialized bodies of the everyday AIS reads (account list, account details, balances,
//! transaction details, card account list, details, balances and transactions), reused while nothing they depend on
//! changes.
//!
//! Each of these bodies is a function of the stored data, the sandbox day and, for the lists,
//! of which accounts the consent covers. A [`ReadKey`] names all of that: the read, the
//! resource (or the consent), the query and unattended window where they matter, the sandbox
//! day ([`crate::sandbox::Clock::today`]) and the data version ([`crate::sandbox::store::db::Db::version`], bumped by
//! every committed write). The version is read *before* the data, so a body is never stored
//! under a version older than the data it was built from going stale. Every access check
//! (signature, role, consent, session, unattended limits) still runs on every request: only
//! the body is reused, as [`crate::sandbox::http::accounts::PageCache`] does for transaction pages. At most
//! [`READ_CACHE_ENTRIES`] bodies are kept; the cache is emptied when full.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::HeaderValue;
use axum::http::header::{CONTENT_ENCODING, CONTENT_TYPE, VARY};
use axum::response::Response;
use chrono::NaiveDate;
use serde::Serialize;
use uuid::Uuid;

use crate::sandbox::domain::access::Access;
use crate::sandbox::errors::ApiError;

/// Which read a body answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Read {
    /// `GET /v1/accounts`.
    AccountList,
    /// `GET /v1/accounts/{id}`.
    Account,
    /// `GET /v1/accounts/{id}/balances`.
    AccountBalances,
    /// `GET /v1/card-accounts`.
    CardList,
    /// `GET /v1/card-accounts/{id}`.
    Card,
    /// `GET /v1/card-accounts/{id}/balances`.
    CardBalances,
    /// `GET /v1/card-accounts/{id}/transactions`.
    CardTransactions,
    /// `GET /v1/accounts/{id}/transactions/{transactionId}` (the transaction id is the key's
    /// `entry`, [`ReadKey::one_entry`]; without the PSU present its `from` is the
    /// unattended window).
    TransactionDetails,
}

/// What a body depends on besides the read: the stored data (`version`), the sandbox day
/// (`today`, for the reads that show dates), the resource and, for the lists, the consent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReadKey {
    read: Read,
    /// The account or card account (`Uuid::nil()` for the lists).
    resource: Uuid,
    /// The consent of the list reads (their content is "the consented accounts").
    consent: Option<ListConsent>,
    /// The query as sent (card transactions).
    query: Vec<(String, String)>,
    /// The one entry a read shows (transaction details: the transaction id).
    entry: Option<Uuid>,
    /// The effective earliest booking date without the PSU present (card transactions).
    from: Option<NaiveDate>,
    today: Option<NaiveDate>,
    version: u64,
}

impl ReadKey {
    /// The key of `read` of `resource` at data `version`.
    pub fn new(read: Read, resource: Uuid, version: u64) -> Self {
        ReadKey {
            read,
            resource,
            consent: None,
            query: Vec::new(),
            entry: None,
            from: None,
            today: None,
            version,
        }
    }

    /// With the sandbox day the body shows.
    pub fn on(mut self, today: NaiveDate) -> Self {
        self.today = Some(today);
        self
    }

    /// With the consent whose accounts a list shows: its key and, when `with_accounts`, the
    /// accounts it covers (`consent.accounts`; the card list depends on the key only). The
    /// key holds the request's shared [`Access`] (no copy of the key and the account list
    /// per request, issue 23); it compares and hashes by those values only.
    pub fn consent(mut self, access: &Arc<Access>, with_accounts: bool) -> Self {
        self.consent = Some(ListConsent {
            access: access.clone(),
            with_accounts,
        });
        self
    }

    /// With the query and the unattended window of a transaction list.
    pub fn query(mut self, query: &[(String, String)], from: Option<NaiveDate>) -> Self {
        self.query = query.to_vec();
        self.from = from;
        self
    }

    /// With the transaction a details read shows and its unattended window (the id as a
    /// value: no text made and copied per read, issue 23).
    pub fn one_entry(mut self, id: Uuid, from: Option<NaiveDate>) -> Self {
        self.entry = Some(id);
        self.from = from;
        self
    }
}

/// The consent part of a list's [`ReadKey`]: equal and hashed by the consent key and, with
/// `with_accounts`, the consent's accounts.
#[derive(Debug, Clone)]
struct ListConsent {
    access: Arc<Access>,
    with_accounts: bool,
}

impl ListConsent {
    fn accounts(&self) -> &[Uuid] {
        if self.with_accounts {
            &self.access.consent.accounts
        } else {
            &[]
        }
    }
}

impl PartialEq for ListConsent {
    fn eq(&self, other: &Self) -> bool {
        self.access.key == other.access.key && self.accounts() == other.accounts()
    }
}

impl Eq for ListConsent {}

impl std::hash::Hash for ListConsent {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.access.key.hash(state);
        self.accounts().hash(state);
    }
}

/// A serialized transaction page and, made on first demand, its gzip encoding.
///
/// Neither the interface document nor the Berlin Group file speak of content codings; ASPSP
/// gateways compress large JSON answers for clients that send `Accept-Encoding: gzip`
/// (reqwest, curl `--compressed`, browsers), and so does the sandbox for transaction pages,
/// the one large answer. The gzip body is cached with the page, so a compressed answer costs
/// no more than a plain one. Answers carry `Vary: Accept-Encoding`.
#[derive(Debug, Clone)]
pub struct Page {
    json: bytes::Bytes,
    gzip: Arc<std::sync::OnceLock<Option<bytes::Bytes>>>,
}

impl Page {
    /// The page of the serialized JSON `json` (gzip made on first demand).
    pub(crate) fn new(json: bytes::Bytes) -> Self {
        Page {
            json,
            gzip: Arc::default(),
        }
    }

    /// The gzip encoding of the page (`None` if the encoder failed: then served plain).
    ///
    /// Made once per page (it is kept), at libdeflate's level 10: a ~100 KB transaction page
    /// is ~11 % fewer bytes than flate2's `Compression::default()` (and `best()`, which is no
    /// smaller here) gives, about 9,800 against 10,943 bytes; every later answer sends the
    /// fewer bytes, which over TLS are also fewer to encrypt (issue 23, BENCHMARKS.md
    /// "r20/tls"). Level 12 saves 1 % more of those bytes for three times the one-off time
    /// (~30 ms per page on a tokio worker, against ~10 ms), so 10. A standard single-member
    /// gzip stream (RFC 1952) that any gzip decoder reads.
    fn gzip(&self) -> Option<bytes::Bytes> {
        self.gzip
            .get_or_init(|| {
                let mut enc =
                    libdeflater::Compressor::new(libdeflater::CompressionLvl::new(10).ok()?);
                let mut out = vec![0; enc.gzip_compress_bound(self.json.len())];
                let n = enc.gzip_compress(&self.json, &mut out).ok()?;
                out.truncate(n);
                Some(bytes::Bytes::from(out))
            })
            .clone()
    }

    /// The plain JSON body.
    pub(crate) fn json(&self) -> bytes::Bytes {
        self.json.clone()
    }

    /// The `200` answer: gzip-encoded when `gzip` (the client accepts it), else plain JSON.
    pub(crate) fn response(&self, gzip: bool) -> Response {
        self.body(gzip).response()
    }

    /// The body the answer sends: the gzip encoding when `gzip` (made now on first demand)
    /// and the encoder did not fail, else the JSON.
    fn body(&self, gzip: bool) -> SentBody {
        match gzip.then(|| self.gzip()).flatten() {
            Some(body) => SentBody::Gzip(body),
            None => SentBody::Json(self.json.clone()),
        }
    }

    /// [`Page::body`] when it needs no encoding work: `None` only for a gzip answer whose
    /// encoding is not made yet (so a cache's lock is never held while a page is compressed).
    pub(crate) fn ready_body(&self, gzip: bool) -> Option<SentBody> {
        if !gzip {
            return Some(SentBody::Json(self.json.clone()));
        }
        Some(match self.gzip.get()? {
            Some(body) => SentBody::Gzip(body.clone()),
            None => SentBody::Json(self.json.clone()),
        })
    }
}

/// `Content-Type: application/json`, made at compile time (a `&str` header value is checked
/// and converted per answer).
const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");
/// `Vary: accept-encoding` of the transaction pages' answers.
const VARY_ACCEPT_ENCODING: HeaderValue = HeaderValue::from_static("accept-encoding");
/// `Content-Encoding: gzip`.
const GZIP: HeaderValue = HeaderValue::from_static("gzip");

/// A transaction page's body as it is sent: its JSON or its gzip encoding (each the kept
/// [`bytes::Bytes`], not a copy).
#[derive(Debug, Clone)]
pub(crate) enum SentBody {
    /// The plain JSON.
    Json(bytes::Bytes),
    /// The gzip encoding.
    Gzip(bytes::Bytes),
}

impl SentBody {
    /// The `200` answer of a transaction page: `Content-Type: application/json`, `Vary:
    /// accept-encoding` and, for the gzip body, `Content-Encoding: gzip`, in that order: the
    /// answer `(headers, [(CONTENT_ENCODING, "gzip")], body).into_response()` gave (test),
    /// with its header values made once, not parsed from text per answer (issue 23).
    pub(crate) fn response(self) -> Response {
        let (body, gzip) = match self {
            SentBody::Json(b) => (b, false),
            SentBody::Gzip(b) => (b, true),
        };
        let mut r = Response::new(axum::body::Body::from(body));
        let h = r.headers_mut();
        h.insert(CONTENT_TYPE, APPLICATION_JSON);
        h.insert(VARY, VARY_ACCEPT_ENCODING);
        if gzip {
            h.insert(CONTENT_ENCODING, GZIP);
        }
        r
    }
}

/// Most bodies a [`ReadCache`] keeps.
pub const READ_CACHE_ENTRIES: usize = 1024;

/// Serialized read bodies by [`ReadKey`].
#[derive(Debug, Default)]
pub struct ReadCache {
    bodies: Mutex<HashMap<ReadKey, Page, foldhash::fast::RandomState>>,
}

impl ReadCache {
    /// The `200` JSON answer for `key`: the cached body, or `build`'s value serialized (and
    /// kept) when there is none. The answer is what `axum::Json` of the same value sends:
    /// the body and `Content-Type: application/json`.
    ///
    /// Errors: those of `build` (nothing is kept then); a value that cannot be serialized
    /// answers 400 `FORMAT_ERROR` like the transaction pages (it does not happen for these
    /// types).
    pub fn answer<T: Serialize>(
        &self,
        key: ReadKey,
        build: impl FnOnce() -> Result<T, ApiError>,
    ) -> Result<Response, ApiError> {
        if let Some(body) = self.kept_json(&key) {
            return Ok(json(body));
        }
        Ok(json(self.page(key, build)?.json()))
    }

    /// [`ReadCache::answer`] for a large body (card transactions): gzip-encoded when `gzip`
    /// (the client's `Accept-Encoding` accepts it), the encoding made once and kept with the
    /// body, as the account transaction pages do ([`Page`]); `Vary: Accept-Encoding`.
    ///
    /// Errors: as [`ReadCache::answer`].
    pub fn answer_encoded<T: Serialize>(
        &self,
        key: ReadKey,
        gzip: bool,
        build: impl FnOnce() -> Result<T, ApiError>,
    ) -> Result<Response, ApiError> {
        if let Some(body) = self.ready(&key, gzip) {
            return Ok(body.response());
        }
        Ok(self.page(key, build)?.response(gzip))
    }

    /// The kept page of `key`, or `build`'s value serialized and kept.
    fn page<T: Serialize>(
        &self,
        key: ReadKey,
        build: impl FnOnce() -> Result<T, ApiError>,
    ) -> Result<Page, ApiError> {
        if let Some(page) = self.get(&key) {
            return Ok(page);
        }
        let value = build()?;
        let body = serde_json::to_vec(&value)
            .map(bytes::Bytes::from)
            .map_err(|e| ApiError::format(format!("the answer could not be written: {e}")))?;
        let page = Page::new(body);
        self.put(key, page.clone());
        Ok(page)
    }

    fn get(&self, key: &ReadKey) -> Option<Page> {
        self.bodies.lock().ok()?.get(key).cloned()
    }

    /// The kept body of `key` as it is sent ([`Page::ready_body`]): only the sent
    /// [`bytes::Bytes`] is cloned under the lock, not the page (its two reference counts,
    /// which every worker thread's answers share, counted up and down again; issue 23).
    fn ready(&self, key: &ReadKey, gzip: bool) -> Option<SentBody> {
        self.bodies.lock().ok()?.get(key)?.ready_body(gzip)
    }

    /// The kept JSON of `key` (as [`ReadCache::ready`], only the sent bytes cloned).
    fn kept_json(&self, key: &ReadKey) -> Option<bytes::Bytes> {
        Some(self.bodies.lock().ok()?.get(key)?.json.clone())
    }

    fn put(&self, key: ReadKey, body: Page) {
        if let Ok(mut bodies) = self.bodies.lock() {
            if bodies.len() >= READ_CACHE_ENTRIES {
                bodies.clear();
            }
            bodies.insert(key, body);
        }
    }

    /// How many bodies are kept (tests).
    pub fn len(&self) -> usize {
        self.bodies.lock().map(|b| b.len()).unwrap_or(0)
    }

    /// Whether no body is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The `200` JSON answer of `body`: `Content-Type: application/json`, what
/// `([(CONTENT_TYPE, "application/json")], body).into_response()` gave (test), the header
/// value made once.
fn json(body: bytes::Bytes) -> Response {
    let mut r = Response::new(axum::body::Body::from(body));
    r.headers_mut().insert(CONTENT_TYPE, APPLICATION_JSON);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transaction page's gzip answer is one standard gzip member that a plain gzip
    /// decoder (flate2's, as reqwest's) reads back to the page's JSON, with nothing after it,
    /// and it is smaller than flate2's best level makes of the same page (the encoder was
    /// flate2's default before issue 23); it is made once and kept.
    #[test]
    fn the_gzip_page_decodes_to_the_json_and_is_smaller_than_flate2_best() {
        use std::io::{Read as _, Write as _};
        let names = ["Rema 1000", "Kiwi", "Vy", "Ruter", "Elkjøp"];
        let transactions: Vec<serde_json::Value> = (0..400u128)
            .map(|n| {
                let creditor = names[(n % 5) as usize];
                serde_json::json!({
                    "transactionId": Uuid::from_u128(0x5eed_0000 + n * 7919).to_string(),
                    "bookingDate": format!("2026-{:02}-{:02}", 1 + n % 12, 1 + n % 28),
                    "transactionAmount": {"currency": "NOK", "amount": format!("-{}.{:02}", n * 37 % 5000, n % 100)},
                    "creditorName": creditor,
                    "remittanceInformationUnstructured": format!("Varekjøp {n}"),
                })
            })
            .collect();
        let json =
            serde_json::to_vec(&serde_json::json!({"transactions": {"booked": transactions}}))
                .unwrap();
        let page = Page::new(json.clone().into());
        let zipped = page.gzip().expect("encoded");
        let mut decoder = flate2::read::GzDecoder::new(&zipped[..]);
        let mut decoded = Vec::new();
        decoder.read_to_end(&mut decoded).unwrap();
        assert_eq!(decoded, json, "the same JSON");
        assert!(
            decoder.into_inner().is_empty(),
            "one member, nothing after it"
        );
        let mut best = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        best.write_all(&json).unwrap();
        let best = best.finish().unwrap();
        assert!(
            zipped.len() < best.len(),
            "{} bytes, flate2 best {}",
            zipped.len(),
            best.len()
        );
        assert_eq!(page.gzip(), Some(zipped), "kept");
        let r = page.response(true);
        assert_eq!(r.headers()["content-encoding"], "gzip");
        assert_eq!(r.headers()["vary"], "accept-encoding");
    }

    /// Status, headers in order (name, value, sensitivity) and body bytes of an answer.
    async fn parts_of(r: Response) -> (u16, Vec<(String, Vec<u8>, bool)>, Vec<u8>) {
        let (parts, body) = r.into_parts();
        let headers = parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    v.as_bytes().to_vec(),
                    v.is_sensitive(),
                )
            })
            .collect();
        let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        (parts.status.as_u16(), headers, body.to_vec())
    }

    /// The answers built with their header values made once are byte for byte those of
    /// axum's tuple conversion they replace (issue 23): the plain read's, and a transaction
    /// page's plain and gzip answers, from the page and from a cache, the first answer (made
    /// then) and a kept one.
    #[tokio::test]
    async fn the_answers_are_those_of_axums_tuple_conversion() {
        use axum::response::IntoResponse;
        let json_bytes = bytes::Bytes::from(serde_json::to_vec(&serde_json::json!({
            "transactions": {"booked": [{"transactionId": "t-1", "remittanceInformationUnstructured": "x".repeat(3000)}]}
        }))
        .unwrap());
        let reference = |body: bytes::Bytes, gzip: bool| {
            let headers = [
                (CONTENT_TYPE, "application/json"),
                (VARY, "accept-encoding"),
            ];
            if gzip {
                (headers, [(CONTENT_ENCODING, "gzip")], body).into_response()
            } else {
                (headers, body).into_response()
            }
        };
        assert_eq!(
            parts_of(json(json_bytes.clone())).await,
            parts_of(([(CONTENT_TYPE, "application/json")], json_bytes.clone()).into_response())
                .await
        );
        let page = Page::new(json_bytes.clone());
        assert!(page.ready_body(true).is_none(), "no gzip made yet");
        let zipped = page.gzip().expect("encoded");
        // The reference answers, plain ([0]) and gzip ([1]).
        let wants = [
            parts_of(reference(json_bytes.clone(), false)).await,
            parts_of(reference(zipped, true)).await,
        ];
        for gzip in [false, true] {
            let want = &wants[usize::from(gzip)];
            assert_eq!(&parts_of(page.response(gzip)).await, want, "gzip {gzip}");
            let ready = page.ready_body(gzip).expect("made");
            assert_eq!(&parts_of(ready.response()).await, want, "gzip {gzip}");
        }
        // Through a cache: the first answer (built, encoded then) and a kept one.
        let cache = ReadCache::default();
        let key = ReadKey::new(Read::CardTransactions, Uuid::nil(), 1);
        let value: serde_json::Value = serde_json::from_slice(&json_bytes).unwrap();
        for gzip in [true, true, false] {
            let r = cache
                .answer_encoded(key.clone(), gzip, || Ok(value.clone()))
                .unwrap();
            let want = &wants[usize::from(gzip)];
            assert_eq!(&parts_of(r).await, want, "gzip {gzip}");
        }
        let key = ReadKey::new(Read::Account, Uuid::nil(), 1);
        for _ in 0..2 {
            let r = cache.answer(key.clone(), || Ok(value.clone())).unwrap();
            assert_eq!(
                parts_of(r).await,
                parts_of(
                    ([(CONTENT_TYPE, "application/json")], json_bytes.clone()).into_response()
                )
                .await
            );
        }
    }

    #[test]
    fn a_body_is_built_once_per_key_and_again_for_a_new_version_or_day() {
        let cache = ReadCache::default();
        let id = Uuid::new_v4();
        let day = NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
        let next = day.succ_opt().unwrap();
        let mut builds = 0;
        for (version, today) in [(1, day), (1, day), (2, day), (2, next), (2, next)] {
            let r = cache
                .answer(
                    ReadKey::new(Read::AccountBalances, id, version).on(today),
                    || {
                        builds += 1;
                        Ok(serde_json::json!({"version": version}))
                    },
                )
                .unwrap();
            assert_eq!(r.status(), 200);
            assert_eq!(r.headers()[CONTENT_TYPE], "application/json");
        }
        assert_eq!(builds, 3);
        // Another read of the same resource is another body; refusals are not kept.
        let r = cache.answer::<serde_json::Value>(ReadKey::new(Read::Account, id, 2), || {
            Err(ApiError::format("no"))
        });
        assert!(r.is_err());
        assert_eq!(cache.len(), 3);
    }

    /// A transaction details key tells apart the transaction and the unattended window:
    /// each transaction its own body, the same transaction and window the kept one.
    #[test]
    fn a_details_body_is_kept_per_transaction_and_window() {
        let cache = ReadCache::default();
        let (account, t1, t2) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
        let day = NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
        let key = |t, from| {
            ReadKey::new(Read::TransactionDetails, account, 1)
                .on(day)
                .one_entry(t, from)
        };
        let mut built = Vec::new();
        for (t, from) in [
            (t1, None),
            (t2, None),
            (t1, None),
            (t1, Some(day)),
            (t2, None),
        ] {
            let r = cache
                .answer(key(t, from), || {
                    built.push((t, from));
                    Ok(serde_json::json!({"transaction": t.to_string()}))
                })
                .unwrap();
            assert_eq!(r.status(), 200);
        }
        assert_eq!(built, [(t1, None), (t2, None), (t1, Some(day))]);
        assert_ne!(
            key(t1, None),
            ReadKey::new(Read::TransactionDetails, account, 1).on(day)
        );
    }
}
