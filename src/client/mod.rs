//! The TPP side: build a request for an operation from a profile, sign it, send it with
//! reqwest, and keep the exchange.
//!
//! [`engine::Engine`] ties a profile to its credentials, a local ASPSP (for `embedded`
//! targets, started through [`engine::LocalAspspStarter`]; [`crate::embedded`] supplies the
//! sandbox) and the SCA redirect listener; the TUI and the `send` command both drive it and
//! both send through its one sender ([`sender`]). Nothing here imports [`crate::sandbox`].

pub mod codegen;
pub mod engine;
pub mod export;
pub mod headless_sca;
pub mod history;
pub mod import;
pub mod monitor;
pub mod recorded;
pub mod replay;
pub mod response_sig;
pub mod sandbox_admin;
pub(crate) mod sender;
pub mod tls;
pub mod tls_session;
pub mod validate;

use std::time::{Duration, Instant, SystemTime};

use crate::cert::Credentials;
use crate::profile::{Profile, SessionState};
use crate::signing::{SignOptions, SignatureInspection, sign_request};
use crate::xs2a::headers as h;
use crate::xs2a::operations::{Operation, ParamKind};

pub use engine::Engine;

/// Errors of building or sending a request.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{0}")]
    /// A parameter is missing or invalid (the text names it).
    Params(String),
    #[error("the body is not valid JSON: {0}")]
    /// The body given is not JSON (the parser's message).
    Body(String),
    #[error("{0}")]
    /// The profile cannot send: credentials, TLS settings or the target (the text says which).
    Setup(String),
    /// No connection to the target (refused, DNS, timeout).
    #[error("cannot reach {url}: {reason}")]
    Connect {
        /// The URL asked for.
        url: String,
        /// Why, in plain words.
        reason: String,
    },
    /// The TLS handshake failed; `reason` says why in plain words ([`tls::describe_send_error`]).
    #[error("TLS handshake with {host} failed: {reason}")]
    Tls {
        /// The host of the target.
        host: String,
        /// Why, in plain words.
        reason: String,
    },
    /// The request was sent but no whole answer came back.
    #[error("request to {url} failed: {reason}")]
    Http {
        /// The URL asked for.
        url: String,
        /// Why, in plain words.
        reason: String,
    },
}

/// A signed request ready to send, with what signing produced for the inspector.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    /// Catalogue operation id (`accounts.list`), or `raw` for an imported request.
    pub operation_id: String,
    /// The parameter values it was built from (to prepare it again, e.g. for export).
    pub params: Vec<(String, String)>,
    /// HTTP method.
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Path and query as signed for `(request-target)`.
    pub path_and_query: String,
    /// Headers in sending order, including the signing headers.
    pub headers: Vec<(String, String)>,
    /// Body bytes exactly as sent and digested (compact JSON), empty for none.
    pub body: Vec<u8>,
    /// What signing produced: the signing string, the signed headers, the Digest.
    pub inspection: SignatureInspection,
    /// When it was signed for and how far the signing clock stood from real time; `None`
    /// for a request the console did not sign (a replay that keeps the recorded
    /// `Signature`, a request rebuilt from the history).
    pub signed_for: Option<SignedFor>,
}

/// The instant a request was signed for ([`RequestContext::now`], the `Date` sent unless a
/// `Date` was typed) and the offset of that clock from real time. An `embedded` profile
/// signs at its sandbox's clock, which `sandbox.clock.advance` moves away from real time;
/// the history, HAR and case exports keep both so the doctor judges `Date` against the
/// sandbox's time, not the real time of the send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignedFor {
    /// The signing instant.
    pub at: SystemTime,
    /// `at` minus the real time when signing, whole seconds: 0 for remote targets and an
    /// unmoved sandbox clock, e.g. `15638400` after `sandbox.clock.advance` by 181 days.
    pub clock_offset_secs: i64,
}

impl SignedFor {
    /// `at`, with its offset from the system clock now (rounded to whole seconds).
    pub(crate) fn now_at(at: SystemTime) -> SignedFor {
        let real = SystemTime::now();
        let offset = match at.duration_since(real) {
            Ok(ahead) => {
                i64::try_from(ahead.as_millis().saturating_add(500) / 1000).unwrap_or(i64::MAX)
            }
            Err(behind) => -i64::try_from(behind.duration().as_millis().saturating_add(500) / 1000)
                .unwrap_or(i64::MAX),
        };
        SignedFor {
            at,
            clock_offset_secs: offset,
        }
    }
}

impl PreparedRequest {
    /// Value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        crate::xs2a::headers::find(&self.headers, name)
    }
}

/// Everything [`prepare`] needs besides the operation.
#[derive(Debug)]
pub struct RequestContext<'a> {
    /// The profile sending (headers, `sign_request_target`).
    pub profile: &'a Profile,
    /// Its session state (consent id, PSU-ID, corporate id, TPP-Session-ID).
    pub session: &'a SessionState,
    /// The certificate and key that sign.
    pub credentials: &'a Credentials,
    /// Base URL without trailing slash, e.g. `http://127.0.0.1:40123`.
    pub base_url: &'a str,
    /// The `TPP-Redirect-URI` to send.
    pub redirect_uri: &'a str,
    /// Signing instant (Date).
    pub now: SystemTime,
}

impl RequestContext<'_> {
    /// When a request signed with this context is signed for ([`RequestContext::now`]) and
    /// that clock's offset from real time ([`SignedFor::now_at`]).
    pub fn signed_for(&self) -> SignedFor {
        SignedFor::now_at(self.now)
    }

    /// The request `method path_and_query` to this context's base URL with `headers` and
    /// `body`, signed with this context's credentials, the profile's `(request-target)`
    /// setting and the instant [`RequestContext::now`] (see [`sign_request`]; the signing
    /// headers are added to `headers`).
    fn signed(
        &self,
        operation_id: String,
        params: Vec<(String, String)>,
        method: &str,
        path_and_query: String,
        mut headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> PreparedRequest {
        let inspection = sign_request(
            self.credentials,
            method,
            &path_and_query,
            &mut headers,
            &body,
            SignOptions {
                request_target: self.profile.sign_request_target,
                now: self.now,
            },
        );
        PreparedRequest {
            operation_id,
            params,
            method: method.to_string(),
            url: format!("{}{}", self.base_url, path_and_query),
            path_and_query,
            headers,
            body,
            inspection,
            signed_for: Some(self.signed_for()),
        }
    }
}

/// Compacts a JSON body: the interface document asks for no insignificant whitespace, and the
/// Digest covers exactly these bytes.
pub(crate) fn compact_json(text: &str) -> Result<Vec<u8>, ClientError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ClientError::Body(e.to_string()))?;
    serde_json::to_vec(&v).map_err(|e| ClientError::Body(e.to_string()))
}

/// Builds and signs the request for `op` with parameter values `params` (name → value) and an
/// optional body text (JSON, compacted before signing).
///
/// Headers sent: `X-Request-ID` (new UUID), `TPP-Redirect-URI`, `TPP-Redirect-Preferred`,
/// `TPP-Session-ID`, `PSU-ID`/`PSU-Corporate-ID` (when learned and the operation is
/// PSU-bound), `PSU-IP-Address`, `x-accept-fix`, `Accept`, `Content-Type` with a body; then
/// `Date`, `Digest`, `TPP-Signature-Certificate` and `Signature` from signing.
///
/// Header parameters ([`ParamKind::Header`]) with a value replace the header of that name, or
/// are added: before signing (so `Date`, `X-Request-ID`, `PSU-ID` ... are signed as typed),
/// except `Digest`, `TPP-Signature-Certificate` and `Signature`, which replace the signed
/// values afterwards (to reproduce a bad request on purpose). Without a body text the
/// operation's default template is sent ([`Operation::default_body`]).
pub fn prepare(
    op: &Operation,
    params: &[(String, String)],
    body: Option<&str>,
    ctx: &RequestContext<'_>,
) -> Result<PreparedRequest, ClientError> {
    let body = match body {
        Some(t) => BodyInput::Json(t),
        None => BodyInput::Default,
    };
    prepare_with(op, params, body, ctx)
}

/// The body of a request to [`prepare_with`].
#[derive(Debug, Clone, Copy)]
pub enum BodyInput<'a> {
    /// The operation's default template ([`Operation::default_body`]), or none.
    Default,
    /// JSON text, compacted before signing ([`compact_json`]).
    Json(&'a str),
    /// Bytes sent exactly as given (not parsed, may be invalid JSON or not UTF-8); the
    /// `Digest` covers these bytes. `Content-Type: application/json` is sent when non-empty.
    Raw(&'a [u8]),
}

/// [`prepare`] with any [`BodyInput`] (`send --raw-body FILE` sends [`BodyInput::Raw`]).
///
/// Errors: a path parameter is missing, or a JSON body is not JSON.
pub fn prepare_with(
    op: &Operation,
    params: &[(String, String)],
    body: BodyInput<'_>,
    ctx: &RequestContext<'_>,
) -> Result<PreparedRequest, ClientError> {
    let path_and_query = op
        .path_and_query(params)
        .map_err(|e| ClientError::Params(e.to_string()))?;
    let body = match body {
        BodyInput::Raw(b) => b.to_vec(),
        BodyInput::Json(t) => compact_json(t)?,
        BodyInput::Default => match op.default_body() {
            Some(t) => compact_json(&t)?,
            None => Vec::new(),
        },
    };
    let typed: Vec<(&str, &str)> = params
        .iter()
        .filter_map(|(k, v)| {
            op.param(k)
                .filter(|p| p.kind == ParamKind::Header && !v.is_empty())
                .map(|p| (p.name, v.as_str()))
        })
        .collect();
    let after_signing =
        |n: &str| [h::DIGEST, h::SIGNATURE, h::TPP_SIGNATURE_CERTIFICATE].contains(&n);
    let mut headers: Vec<(String, String)> = vec![
        (h::ACCEPT.into(), "application/json".into()),
        (h::X_REQUEST_ID.into(), uuid::Uuid::new_v4().to_string()),
        (h::TPP_REDIRECT_URI.into(), ctx.redirect_uri.to_string()),
    ];
    if let Some(p) = ctx.profile.tpp_redirect_preferred {
        headers.push((h::TPP_REDIRECT_PREFERRED.into(), p.to_string()));
    }
    if let Some(s) = &ctx.session.tpp_session_id {
        headers.push((h::TPP_SESSION_ID.into(), s.clone()));
    }
    if op.psu_headers {
        if let Some(p) = ctx.session.psu_id.as_ref().or(ctx.profile.psu_id.as_ref()) {
            headers.push((h::PSU_ID.into(), p.clone()));
        }
        if let Some(c) = &ctx.session.psu_corporate_id {
            headers.push((h::PSU_CORPORATE_ID.into(), c.clone()));
        }
    }
    if let Some(ip) = &ctx.profile.psu_ip_address {
        headers.push((h::PSU_IP_ADDRESS.into(), ip.clone()));
    }
    if !ctx.profile.x_accept_fix.is_empty() {
        headers.push((h::X_ACCEPT_FIX.into(), ctx.profile.x_accept_fix.join(",")));
    }
    if !body.is_empty() {
        headers.push((h::CONTENT_TYPE.into(), "application/json".into()));
    }
    for (n, v) in typed.iter().filter(|(n, _)| !after_signing(n)) {
        set_header(&mut headers, n, v);
    }
    let mut req = ctx.signed(
        op.id.to_string(),
        params.to_vec(),
        op.method,
        path_and_query,
        headers,
        body,
    );
    for (n, v) in typed.iter().filter(|(n, _)| after_signing(n)) {
        set_header(&mut req.headers, n, v);
    }
    Ok(req)
}

/// Replaces the value of header `name` (case-insensitive), or appends it.
fn set_header(headers: &mut Vec<(String, String)>, name: &str, value: &str) {
    match headers
        .iter_mut()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
    {
        Some((_, v)) => *v = value.to_string(),
        None => headers.push((name.to_string(), value.to_string())),
    }
}

/// The operation id of the catalogue that `method` and `path_and_query` fit
/// ([`crate::xs2a::operations::find_request`], e.g. `accounts.list` for `GET /v1/accounts`),
/// else `raw`: how the history names an imported or replayed request.
pub(crate) fn operation_id_of(method: &str, path_and_query: &str) -> String {
    crate::xs2a::operations::find_request(method, path_and_query)
        .map_or("raw", |(op, _)| op.id)
        .to_string()
}

/// Builds and signs an imported request (method, URL path and query, headers and body as
/// imported) against `ctx.base_url`: the signing headers are replaced, `X-Request-ID` is new,
/// and `TPP-Redirect-URI`, `PSU-ID`, `PSU-Corporate-ID` and `TPP-Session-ID` take the
/// profile's values when the import has none or a `{{variable}}` placeholder; so do
/// `PSU-IP-Address`, `x-accept-fix`, `TPP-Redirect-Preferred` (when the profile sets them)
/// and `Accept: application/json`.
///
/// Errors: the URL has no path, or the body is not JSON.
pub fn prepare_imported(
    imported: &import::ImportedRequest,
    ctx: &RequestContext<'_>,
) -> Result<PreparedRequest, ClientError> {
    // `{{host}}/v1/...`, `https://{{host}}/v1/...` or an absolute URL: keep path and query.
    let path_and_query = import::path_and_query_of(&imported.url)
        .ok_or_else(|| ClientError::Params(format!("{:?} has no path to send", imported.url)))?
        .to_string();
    let body = match &imported.body {
        Some(b) => compact_json(b)?,
        None => Vec::new(),
    };
    let placeholder = |v: &str| v.contains("{{");
    let mut headers: Vec<(String, String)> = imported
        .headers
        .iter()
        .filter(|(n, v)| !placeholder(v) && !n.eq_ignore_ascii_case(h::X_REQUEST_ID))
        .cloned()
        .collect();
    let has = |hs: &[(String, String)], n: &str| hs.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    headers.push((h::X_REQUEST_ID.into(), uuid::Uuid::new_v4().to_string()));
    if !has(&headers, h::TPP_REDIRECT_URI) {
        headers.push((h::TPP_REDIRECT_URI.into(), ctx.redirect_uri.to_string()));
    }
    for (name, value) in [
        (h::PSU_ID, &ctx.session.psu_id),
        (h::PSU_CORPORATE_ID, &ctx.session.psu_corporate_id),
        (h::TPP_SESSION_ID, &ctx.session.tpp_session_id),
    ] {
        if let Some(v) = value
            && !has(&headers, name)
        {
            headers.push((name.into(), v.clone()));
        }
    }
    // Headers the profile gives that the file lacks (a bank's collection often leaves out
    // PSU-IP-Address, without which the 5th unattended call a day answers 429).
    let profile_headers = [
        (h::PSU_IP_ADDRESS, ctx.profile.psu_ip_address.clone()),
        (
            h::X_ACCEPT_FIX,
            (!ctx.profile.x_accept_fix.is_empty()).then(|| ctx.profile.x_accept_fix.join(",")),
        ),
        (
            h::TPP_REDIRECT_PREFERRED,
            ctx.profile.tpp_redirect_preferred.map(|p| p.to_string()),
        ),
    ];
    for (name, value) in profile_headers {
        if let Some(v) = value
            && !has(&headers, name)
        {
            headers.push((name.into(), v));
        }
    }
    if !has(&headers, h::ACCEPT) {
        headers.push((h::ACCEPT.into(), "application/json".into()));
    }
    if !body.is_empty() && !has(&headers, h::CONTENT_TYPE) {
        headers.push((h::CONTENT_TYPE.into(), "application/json".into()));
    }
    Ok(ctx.signed(
        operation_id_of(&imported.method, &path_and_query),
        Vec::new(),
        &imported.method,
        path_and_query,
        headers,
        body,
    ))
}

/// Largest body parsed into a JSON tree ([`Exchange::json`]): 1 MiB. A tree takes about
/// eight times the text (a 20 MB transaction list about 160 MiB), so larger bodies are kept
/// as bytes only; the console pretty-prints them straight from the bytes and reads their
/// `_links` with a skeleton parse (`tui::response`).
pub(crate) const JSON_TREE_LIMIT: usize = 1024 * 1024;

/// The body as a JSON tree, as [`send`] keeps it in [`Exchange::json`]: `None` when it is
/// not JSON or longer than [`JSON_TREE_LIMIT`].
pub fn json_tree(body: &[u8]) -> Option<serde_json::Value> {
    if body.len() <= JSON_TREE_LIMIT {
        serde_json::from_slice(body).ok()
    } else {
        None
    }
}

/// Most bytes a response's `Content-Length` reserves before its body arrives (256 MiB): a
/// body is read into one buffer of the announced size, but a lying header does not reserve
/// more than this.
const BODY_PRESIZE_MAX: u64 = 256 << 20;

/// A response as received.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// HTTP status.
    pub status: u16,
    /// Response headers in wire order.
    pub headers: Vec<(String, String)>,
    /// Response body bytes.
    pub body: Vec<u8>,
    /// Time from sending to the whole body received.
    pub elapsed: Duration,
    /// The body parsed as JSON, when it is JSON and at most [`JSON_TREE_LIMIT`] bytes long
    /// (larger bodies are kept as bytes only).
    pub json: Option<serde_json::Value>,
}

impl Exchange {
    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as pretty JSON, or as text when it is not JSON.
    pub fn pretty_body(&self) -> String {
        match &self.json {
            Some(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
            None => String::from_utf8_lossy(&self.body).into_owned(),
        }
    }

    /// `_links.scaRedirect.href`, when the response carries one.
    pub fn sca_redirect(&self) -> Option<String> {
        self.json
            .as_ref()
            .and_then(crate::xs2a::links::sca_redirect_of)
    }
}

/// A reqwest client for PSD2 calls with no profile options: rustls, TLS 1.2 or higher, no
/// automatic redirects (a 302 is shown, not followed), 30 s timeout. See
/// [`tls::http_client_for`] for a profile's client (CA bundle, QWAC).
pub fn http_client() -> Result<reqwest::Client, ClientError> {
    tls::http_client_for(&crate::profile::Profile::new_embedded("default"))
}

/// Sends `req` and reads the whole response.
pub async fn send(http: &reqwest::Client, req: &PreparedRequest) -> Result<Exchange, ClientError> {
    send_for_profile(http, req, None).await
}

/// [`send`], naming `profile` in the hints of TLS failure messages (e.g. "add the CA to
/// `ca_bundle` in profile X").
///
/// Errors: [`ClientError::Tls`] for handshake failures, [`ClientError::Connect`] for refused
/// connections, DNS failures and timeouts, [`ClientError::Http`] otherwise.
pub async fn send_for_profile(
    http: &reqwest::Client,
    req: &PreparedRequest,
    profile: Option<&str>,
) -> Result<Exchange, ClientError> {
    send_observed(http, req, profile, None)
        .await
        .map(|(exchange, _)| exchange)
}

/// [`send_for_profile`], also returning reqwest's `TlsInfo` of the connection (server leaf
/// certificate and TLS version; `None` over plain HTTP or for a client without
/// `tls_info`). `recorder` ([`tls::http_client_recording`]) lets a TLS failure name what
/// the handshake showed (e.g. the CAs a server asked client certificates from).
///
/// Errors: as [`send_for_profile`].
pub async fn send_observed(
    http: &reqwest::Client,
    req: &PreparedRequest,
    profile: Option<&str>,
    recorder: Option<&tls_session::TlsRecorder>,
) -> Result<(Exchange, Option<reqwest::tls::TlsInfo>), ClientError> {
    let method = reqwest::Method::from_bytes(req.method.as_bytes())
        .map_err(|e| ClientError::Params(format!("method {}: {e}", req.method)))?;
    let mut rb = http.request(method, &req.url);
    for (n, v) in &req.headers {
        rb = rb.header(n.as_str(), v.as_str());
    }
    if !req.body.is_empty() {
        rb = rb.body(req.body.clone());
    }
    let started = Instant::now();
    let resp = rb.send().await.map_err(|e| {
        tls::describe_send_error_recorded(&req.url, &e, profile, req.body.len(), recorder)
    })?;
    let tls_info = resp.extensions().get::<reqwest::tls::TlsInfo>().cloned();
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    // Read chunk by chunk into one buffer of the announced size: `bytes()` and a copy into
    // a `Vec` held a large body two or three times at once (a 20 MB answer: 60 MB).
    let failed = |e: reqwest::Error| ClientError::Http {
        url: req.url.clone(),
        reason: e.to_string(),
    };
    let announced = resp.content_length().unwrap_or(0);
    let mut body =
        Vec::with_capacity(usize::try_from(announced.min(BODY_PRESIZE_MAX)).unwrap_or(0));
    let mut resp = resp;
    while let Some(chunk) = resp.chunk().await.map_err(failed)? {
        body.extend_from_slice(&chunk);
    }
    let elapsed = started.elapsed();
    let json = json_tree(&body);
    Ok((
        Exchange {
            status,
            headers,
            body,
            elapsed,
            json,
        },
        tls_info,
    ))
}
