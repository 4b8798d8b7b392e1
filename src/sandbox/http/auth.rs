//! Signature check of every `/v1` request (interface document, Authentication 2–9) and the
//! TPP identity it yields.
//!
//! The middleware reads the whole body, verifies method, path and query as received, headers
//! and body with the shared [`crate::signing::Verifier`] at the sandbox clock's `now`, then
//! hands the request on with a [`Verified`] extension (the [`Tpp`] and its certificate).
//! Failures answer the verifier's code with
//! that code's status. Paths outside `/v1` (the SCA pages a browser opens) pass unchecked.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequestParts, Request};
use axum::http::HeaderValue;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use crate::cert::Certificate;
use crate::sandbox::App;
use crate::sandbox::domain::rules::TppRoles;
use crate::sandbox::errors::{ApiError, ApiPath};
use crate::sandbox::http::access_log::X_REQUEST_ID_NAME;
use crate::sandbox::model::TppId;
use crate::signing::{RequestView, SignedHeaders};
use crate::xs2a::error::MessageCode;
use crate::xs2a::headers;

/// Largest request body read, bytes (defined with the protocol model).
pub use crate::xs2a::limits::MAX_BODY_BYTES;

pub use crate::sandbox::model::{ORGANISATION_IDENTIFIER, Tpp, tpp_id};

/// [`Tpp::of`] per certificate: the verifier hands out the same `Arc<Certificate>` for a
/// certificate it has cached, so the identity (a SHA-256 of the DER) is computed once per
/// certificate instead of per request. Entries hold their `Arc`, so an address cannot be
/// reused while it is a key; at most [`TPP_CACHE_ENTRIES`] are kept (emptied when full).
#[derive(Debug, Default)]
pub struct TppCache {
    map: std::sync::Mutex<
        std::collections::HashMap<usize, (Arc<Certificate>, Tpp), foldhash::fast::RandomState>,
    >,
    /// [`tpp_id`] by `TPP-Signature-Certificate` value, before the signature is checked: the
    /// Date window is the claimed TPP's clock (a forged claim still fails the signature).
    by_header:
        std::sync::Mutex<std::collections::HashMap<String, TppId, foldhash::fast::RandomState>>,
}

/// Most identities a [`TppCache`] keeps.
pub const TPP_CACHE_ENTRIES: usize = 256;

impl TppCache {
    /// The identity of `certificate` ([`Tpp::of`]).
    pub fn of(&self, certificate: &Arc<Certificate>) -> Tpp {
        let addr = Arc::as_ptr(certificate) as usize;
        if let Ok(map) = self.map.lock()
            && let Some((c, tpp)) = map.get(&addr)
            && Arc::ptr_eq(c, certificate)
        {
            return tpp.clone();
        }
        let tpp = Tpp::of(certificate);
        if let Ok(mut map) = self.map.lock() {
            if map.len() >= TPP_CACHE_ENTRIES {
                map.clear();
            }
            map.insert(addr, (certificate.clone(), tpp.clone()));
        }
        tpp
    }

    /// The [`tpp_id`] of the certificate in header value `value` (base64 DER); `None` when
    /// it is not a certificate.
    pub fn id_of_header(&self, value: &str) -> Option<TppId> {
        if let Ok(map) = self.by_header.lock()
            && let Some(id) = map.get(value)
        {
            return Some(id.clone());
        }
        let id = tpp_id(&Certificate::from_header_value(value).ok()?);
        if let Ok(mut map) = self.by_header.lock() {
            if map.len() >= TPP_CACHE_ENTRIES {
                map.clear();
            }
            map.insert(value.to_string(), id.clone());
        }
        Some(id)
    }
}

/// What the signature check ([`verify_v1`]) hands the handlers of a verified request, as
/// one request extension (each extension is a box allocated per request, issue 23): the
/// TPP and its verified certificate (for role checks such as `payments::require_role`).
#[derive(Clone)]
pub struct Verified {
    /// The verified TPP.
    pub tpp: Tpp,
    /// Its certificate, the one the signature verified with.
    pub certificate: Arc<Certificate>,
}

impl<S: Send + Sync> FromRequestParts<S> for Tpp {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Verified>()
            .map(|v| v.tpp.clone())
            .ok_or_else(|| {
                ApiError::new(
                    MessageCode::SignatureMissing,
                    "the request was not verified as signed",
                )
            })
    }
}

/// The PSD2 roles of the request's certificate (`TPP-Signature-Certificate`, already verified
/// by [`verify_v1`]); empty when the certificate has no PSD2 qcStatement.
///
/// Errors: 400 `CERTIFICATE_MISSING` / `CERTIFICATE_INVALID` when the header is absent or
/// unparsable (the signature middleware refuses such requests first, so this is a guard).
fn roles(h: &axum::http::HeaderMap) -> Result<Vec<crate::cert::Psd2Role>, ApiError> {
    let Some(value) = h
        .get(headers::TPP_SIGNATURE_CERTIFICATE)
        .and_then(|v| v.to_str().ok())
    else {
        return Err(ApiError::new(
            MessageCode::CertificateMissing,
            "the TPP-Signature-Certificate header is missing",
        ));
    };
    Certificate::from_header_value(value)
        .map(|c| c.roles())
        .map_err(|e| ApiError::new(MessageCode::CertificateInvalid, e.to_string()))
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for TppRoles {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        if let Some(v) = parts.extensions.get::<Verified>() {
            return Ok(TppRoles(v.certificate.roles()));
        }
        roles(&parts.headers).map(TppRoles)
    }
}

/// The TPP of an account-information operation, as an extractor: the verified [`Tpp`],
/// which must hold the AISP role (`PSP_AI`, [`TppRoles::require_ais`]). The role is checked
/// when the handler's arguments are extracted, before the ones that follow it.
///
/// Errors (the rejection): those of [`Tpp`] and [`TppRoles`]; 401 `ROLE_INVALID` without
/// `PSP_AI`.
#[derive(Debug, Clone)]
pub struct AisTpp(pub Tpp);

impl<S: Send + Sync> FromRequestParts<S> for AisTpp {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let tpp = Tpp::from_request_parts(parts, state).await?;
        TppRoles::from_request_parts(parts, state)
            .await?
            .require_ais()?;
        Ok(AisTpp(tpp))
    }
}

/// What the operations on one resource of the TPP extract first, in this order: the
/// verified [`Tpp`], its [`TppRoles`] and the request path's one parameter (`{id}`,
/// `{consentId}`).
///
/// Errors (the rejection): those of [`Tpp`], [`TppRoles`] and [`ApiPath`].
pub struct TppResource {
    /// The verified TPP.
    pub tpp: Tpp,
    /// Its certificate's PSD2 roles (not checked here).
    pub roles: TppRoles,
    /// The path parameter.
    pub id: String,
}

impl<S: Send + Sync> FromRequestParts<S> for TppResource {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Ok(TppResource {
            tpp: Tpp::from_request_parts(parts, state).await?,
            roles: TppRoles::from_request_parts(parts, state).await?,
            id: ApiPath::<String>::from_request_parts(parts, state).await?.0,
        })
    }
}

/// Whether `path` belongs to the signed interface.
pub fn is_v1(path: &str) -> bool {
    path == "/v1" || path.starts_with("/v1/")
}

/// The middleware: verifies `/v1` requests, requires `X-Request-ID`, echoes it on the
/// response, and dates the response (`Date`, IMF-fixdate) at the sandbox clock's time when
/// it is answered ([`date_response`]). `next` runs the rest of the request (the fault
/// injection and the routes, [`crate::sandbox::router`]): a plain continuation, not an axum
/// `from_fn` layer of its own (each such layer clones its inner service and boxes a future
/// per request, issue 23).
///
/// `parts` and `body` are the request's head and its whole body, collected once by the
/// router's body read ([`crate::sandbox::http::serve::body_in_time`]); the request handed
/// to `next` carries the same bytes (a payment's body was collected again here, and boxed
/// in a future of its own, issue 23).
///
/// The check itself runs when this is called, not when the future is first polled; the
/// future is `next`'s own (outside `/v1`), or `next`'s run in the TPP's world with the
/// answer's headers added after it, or a ready refusal.
pub fn verify_v1<F, Fut>(
    app: &App,
    parts: Parts,
    body: axum::body::Bytes,
    next: F,
) -> impl Future<Output = Response>
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    use futures_util::future::Either;
    if !is_v1(parts.uri.path()) {
        return Either::Left(next(Request::from_parts(parts, body_of(body))));
    }
    Either::Right(verify_parts(app, parts, body, next))
}

/// The body handed on: the collected `bytes`, or for none (every `GET`) an empty body, which
/// allocates nothing (a body of bytes is a box per request).
fn body_of(bytes: axum::body::Bytes) -> Body {
    if bytes.is_empty() {
        Body::empty()
    } else {
        Body::from(bytes)
    }
}

/// [`verify_v1`] with the request's body collected (`bytes`): the check now, then the
/// future of the answer (a refusal's, ready, or `next`'s run in the verified TPP's world).
fn verify_parts<F, Fut>(
    app: &App,
    mut parts: Parts,
    bytes: axum::body::Bytes,
    next: F,
) -> impl Future<Output = Response>
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    use futures_util::FutureExt as _;
    use futures_util::future::{Either, ready};
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or_else(|| parts.uri.path());
    let view = RequestView {
        method: parts.method.as_str(),
        path_and_query,
        headers: &parts.headers,
        body: &bytes,
    };
    // The headers the check reads, found in one pass over the request's headers (a
    // hashed look-up per use was 18 per read, issue 23).
    let seen = SignedHeaders::of(&parts.headers);
    let request_id = seen
        .x_request_id()
        .filter(|v| !v.as_bytes().trim_ascii().is_empty())
        .cloned();
    // The signer's certificate, looked up once (by the exact header text) for the claimed
    // TPP's clock and for the verification itself.
    let key = app.verifier.signer_in(&parts.headers, seen);
    // The Date window is the claimed TPP's own clock (see `crate::sandbox::clock`); a forged
    // claim still fails the signature.
    let mut signer = key.as_ref().ok().map(|k| app.tpps.of(&k.key.certificate));
    let claimed = match &signer {
        Some(tpp) => Some(tpp.id.clone()),
        None => seen
            .certificate()
            .and_then(|v| v.to_str().ok())
            .and_then(|v| app.tpps.id_of_header(v)),
    };
    let now = match &claimed {
        Some(id) => app.clock.now_in(&id.0),
        None => app.clock.now(),
    };
    let verified = key.and_then(|k| app.verifier.verify_signer(&view, now, &k));
    let outcome = match verified {
        Err(e) => {
            let mut r = ApiError::from_verify(&e).into_response();
            r.extensions_mut()
                .insert(crate::sandbox::http::access_log::VerifyStep::of(&e));
            Err(r)
        }
        Ok(_) if request_id.is_none() => Err(ApiError::format(
            "the X-Request-ID header is missing; every request needs one",
        )
        .into_response()),
        Ok(_) if lacks_redirect_uri(parts.uri.path(), seen.tpp_redirect_uri()) => {
            Err(missing_redirect_uri().into_response())
        }
        Ok(verified) => {
            // The verified certificate is the one `signer_of` found (the same `Arc`).
            let tpp = signer
                .take()
                .unwrap_or_else(|| app.tpps.of(&verified.certificate));
            // Over TLS, the QWAC's rules first (a refused request does not use up its
            // X-Request-ID); then a repeated X-Request-ID of this TPP is a replay (see
            // `crate::sandbox::http::replay`).
            let refused = qwac_refusal(app, &parts, &verified.certificate, now).or_else(|| {
                match (&app.replay, &request_id) {
                    (Some(guard), Some(id)) => {
                        // UTF-8 (every id a client sends) is borrowed as it is; the
                        // lossy copy only for other bytes (the same text either way).
                        let id = match std::str::from_utf8(id.as_bytes()) {
                            Ok(text) => std::borrow::Cow::Borrowed(text),
                            Err(_) => String::from_utf8_lossy(id.as_bytes()),
                        };
                        guard
                            .check(&tpp.id, &id, verified.date, now)
                            .err()
                            .map(|r| r.to_error(&id))
                    }
                    _ => None,
                }
            });
            let unregistered = is_management(parts.uri.path())
                && !verified
                    .certificate
                    .roles()
                    .iter()
                    .any(|r| MANAGEMENT_ROLES.contains(r));
            match refused {
                Some(e) => Err(e.into_response()),
                None if unregistered => Err(management_role_missing(&verified.certificate)),
                None => {
                    let world = tpp.id.0.clone();
                    // The TPP and the verified certificate itself, in one extension.
                    parts.extensions.insert(Verified {
                        tpp,
                        certificate: verified.certificate.clone(),
                    });
                    Ok((Request::from_parts(parts, body_of(bytes)), world))
                }
            }
        }
    };
    // What the answer gets once it is there: the request's id echoed, and `Date` by the
    // clock the Date check used (the claimed TPP's), read when the handler has answered, so
    // the answer to a clock advance carries the new time.
    let finish = move |response: &mut Response| {
        if let Some(id) = request_id {
            echo_request_id(response, id);
        }
        let answered_at = match &claimed {
            Some(id) => app.clock.now_in(&id.0),
            None => app.clock.now(),
        };
        date_response(response, answered_at);
    };
    match outcome {
        Ok((req, world)) => {
            // The handler runs in the TPP's world (its clock), and its answer's events
            // belong to the TPP: marked on the answer when its events are sent (a
            // response extension is a map and a box allocated per answer, issue 23).
            let owner = crate::sandbox::http::access_log::publishing(req.extensions())
                .then(|| crate::sandbox::domain::events::Owner(world.clone()));
            let run = crate::sandbox::clock::in_world(world, next(req));
            Either::Left(run.map(move |mut r| {
                if let Some(owner) = owner {
                    r.extensions_mut().insert(owner);
                }
                finish(&mut r);
                r
            }))
        }
        Err(mut refusal) => {
            finish(&mut refusal);
            Either::Right(ready(refusal))
        }
    }
}

/// Over TLS with client certificates: the 401 `CERTIFICATE_INVALID` (the Berlin Group file
/// lists the code under 401 `UNAUTHORIZED` of every service; 401 here because the client's
/// authentication, not the request's format, fails) of a presented QWAC
/// that breaks a rule of [`crate::sandbox::http::tls::QwacPolicy::check`] (judged at `now`, the
/// sandbox's time of the TPP whose QSealC `qseal` verified the request); `None` when the
/// QWAC passes, none was presented or none is asked for.
fn qwac_refusal(
    app: &App,
    parts: &Parts,
    qseal: &Certificate,
    now: std::time::SystemTime,
) -> Option<ApiError> {
    let policy = app.qwac.as_ref()?;
    let peer = parts
        .extensions
        .get::<crate::sandbox::http::tls::PeerCertificates>()?;
    policy
        .check(peer, qseal, parts.uri.path(), now)
        .err()
        .map(|text| {
            let mut e = ApiError::new(MessageCode::CertificateInvalid, text);
            e.status = axum::http::StatusCode::UNAUTHORIZED;
            e
        })
}

/// Sets the response's `Date` to `now`, the sandbox clock's time (read when the handler has
/// answered, so the answer to a clock advance carries the new time). Without it the HTTP
/// server writes the machine's real time, which after a clock advance (`POST
/// /v1/sandbox/clock`) disagrees with the time the bank checks the request's `Date` against
/// and the console signs at. The interface document is silent on the response's `Date`
/// (Authentication 4 is about the request's); a real ASPSP dates its answers by the clock it
/// checks requests against, so this sandbox does with its own (docs/sandbox.md).
fn date_response(response: &mut Response, now: std::time::SystemTime) {
    if let Some(v) = date_value(now) {
        response.headers_mut().insert(axum::http::header::DATE, v);
    }
}

thread_local! {
    /// The last second [`date_value`] dated on this thread and its header value: every
    /// answer is dated, thousands a second within the same second; a clone of the value
    /// shares its bytes (no text formatted, copied and checked per answer, issue 23).
    static LAST_DATE: std::cell::RefCell<Option<(u64, HeaderValue)>> =
        const { std::cell::RefCell::new(None) };
}

/// The `Date` header value of `now` ([`crate::signing::imf_fixdate`]), made once per second
/// and thread; `None` when the text is not a valid header value (never for an IMF-fixdate).
fn date_value(now: std::time::SystemTime) -> Option<HeaderValue> {
    let make = || {
        HeaderValue::from_maybe_shared(axum::body::Bytes::from(crate::signing::imf_fixdate(now)))
            .ok()
    };
    // Before 1970 (a clock set back that far): not cached.
    let Ok(since) = now.duration_since(std::time::UNIX_EPOCH) else {
        return make();
    };
    let secs = since.as_secs();
    LAST_DATE
        .try_with(|cell| {
            let mut last = cell.try_borrow_mut().ok()?;
            match &*last {
                Some((s, v)) if *s == secs => Some(v.clone()),
                _ => {
                    let v = make()?;
                    *last = Some((secs, v.clone()));
                    Some(v)
                }
            }
        })
        .ok()
        .flatten()
        .or_else(make)
}

/// Whether `path` is one of the sandbox's own operations (`/v1/sandbox/...`: management,
/// clock, faults, events, batch, state).
pub fn is_management(path: &str) -> bool {
    path == "/v1/sandbox" || path.starts_with("/v1/sandbox/")
}

/// The PSD2 roles of which a sandbox operation needs one: the document's sandbox is for
/// registered AISPs and PISPs, so its own operations need what its production operations
/// need (issue 20, finding 1).
pub const MANAGEMENT_ROLES: [crate::cert::Psd2Role; 2] =
    [crate::cert::Psd2Role::PspAi, crate::cert::Psd2Role::PspPi];

/// 401 `ROLE_INVALID` for a sandbox operation signed with a certificate without `PSP_AI` or
/// `PSP_PI` (a self-made certificate without qcStatements, or one with other roles only).
fn management_role_missing(certificate: &Certificate) -> Response {
    let has: Vec<&str> = certificate.roles().iter().map(|r| r.name()).collect();
    ApiError::new(
        MessageCode::RoleInvalid,
        format!(
            "sandbox operations need the PSD2 role PSP_AI or PSP_PI in the TPP certificate, like \
             the account and payment operations; it has {}",
            if has.is_empty() {
                "none".to_string()
            } else {
                has.join(", ")
            }
        ),
    )
    .into_response()
}

/// Whether a production-interface request lacks `TPP-Redirect-URI` (absent or blank):
/// "Every request carries TPP-Redirect-URI" (interface document, Endpoints) and "The header
/// is therefore required on all requests" (Authentication 11). The sandbox's own
/// `/v1/sandbox/*` operations are exempt: the document lists their headers separately
/// (`GET /v1/sandbox/customers`: `X-Request-ID`, `TPP-Signature-Certificate`, `Signature`).
///
/// `value` is the request's `TPP-Redirect-URI` (the first of its name), found with the
/// other headers of the signature check ([`SignedHeaders`]).
pub fn lacks_redirect_uri(path: &str, value: Option<&HeaderValue>) -> bool {
    !is_management(path) && value.is_none_or(|v| v.as_bytes().trim_ascii().is_empty())
}

/// 400 `FORMAT_ERROR` naming the missing `TPP-Redirect-URI` (see [`lacks_redirect_uri`]).
pub fn missing_redirect_uri() -> ApiError {
    ApiError::format(
        "the TPP-Redirect-URI header is missing; the interface document requires it on every \
         request (Authentication 11: after SCA the PSU is redirected to it)",
    )
}

fn echo_request_id(response: &mut Response, id: HeaderValue) {
    response.headers_mut().insert(X_REQUEST_ID_NAME, id);
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    /// The answers of one second share one `Date` value (its bytes, not a new text per
    /// answer: issue 23), each second gets its own, and times the cache does not keep
    /// (before 1970, after 9999) are written as [`crate::signing::imf_fixdate`] writes them.
    #[test]
    fn the_answers_of_one_second_share_one_date_value_with_the_imf_fixdate_text() {
        let t = UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        let a = date_value(t).unwrap();
        let b = date_value(t + Duration::from_millis(999)).unwrap();
        assert_eq!(a.to_str().unwrap(), crate::signing::imf_fixdate(t));
        assert_eq!(a, b);
        assert_eq!(
            a.as_bytes().as_ptr(),
            b.as_bytes().as_ptr(),
            "one value per second, shared"
        );
        let next = t + Duration::from_secs(1);
        assert_eq!(
            date_value(next).unwrap().to_str().unwrap(),
            crate::signing::imf_fixdate(next)
        );
        // Back to the first second (a clock set back): its own text again.
        assert_eq!(date_value(t).unwrap(), a);
        for odd in [
            UNIX_EPOCH - Duration::from_secs(86_400 * 365 * 20),
            UNIX_EPOCH + Duration::from_secs(253_402_300_800 + 86_400),
        ] {
            assert_eq!(
                date_value(odd).unwrap().to_str().unwrap(),
                crate::signing::imf_fixdate(odd)
            );
        }
        let mut r = Response::new(Body::empty());
        date_response(&mut r, t);
        assert_eq!(r.headers()[axum::http::header::DATE], a);
    }
}
