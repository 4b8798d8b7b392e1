//! The addresses of the SCA pages: an unguessable token per authorisation, distinct from
//! the authorisation id (issue 20, finding 2).
//!
//! A TPP sees authorisation ids (`authorisationId`, the `scaStatus` link, the event stream
//! of its own requests); if the SCA page lived at `/sca/{authorisationId}`, anyone who saw
//! an id could open that SCA first, log in and approve. So the page of authorisation `a` is
//! `/sca/{token}` (consents) or `/payment-sca/{token}` (payments, baskets), where `token`
//! is AES-128 of the id's 16 bytes under a random key of this sandbox
//! ([`crate::sandbox::domain::sca_pages::PageKeys`]),
//! base64url without padding (22 characters). It is in the TPP's own `scaRedirect` and
//! nowhere else; without the key it cannot be derived from the id, and a made-up token
//! decrypts to an id no authorisation has (a 2^-122 chance otherwise).
//!
//! [`translate`] is the layer in front of the page routes: it decrypts the token of the
//! request path into the authorisation id the page handlers work with, and writes the token
//! back over the id in the page's HTML (form actions, links) and in its cookie's `Path`, so
//! the browser only ever sees the token. A path whose token does not decrypt answers the
//! pages' 404.
//!
//! The layer also runs the page in its authorisation's TPP's world ([`crate::sandbox::clock`]) and
//! marks its events as that TPP's ([`crate::sandbox::domain::events::Owner`]).
//!
//! The key lives in table `sca_page_keys` (kept by `POST /v1/sandbox/initialize`, so links
//! survive a reset and a restart; left out of snapshots, see [`crate::sandbox::http::snapshot`]).

use crate::sandbox::store::sql::{Conn, OptionalExtension};
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::sandbox::App;
use crate::sandbox::http::pages;

/// Largest SCA page answer rewritten by [`translate`], bytes (the pages are a few kB).
pub const MAX_PAGE_BYTES: usize = 1024 * 1024;

/// The page prefixes: consent SCA and payment/basket SCA.
pub const PREFIXES: [&str; 2] = ["/sca/", "/payment-sca/"];

/// Deletes the page key from a copy of the database (a snapshot, a case bundle's state),
/// overwriting its bytes (`secure_delete`): whoever holds the copy must not be able to
/// derive page addresses from the authorisation ids in it. A copy without the table is left
/// as it is.
///
/// Errors: SQLite's.
pub fn forget_key(copy: &Conn<'_>) -> crate::sandbox::store::sql::Result<()> {
    let has: bool = copy.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sca_page_keys')",
        [],
        |r| r.get(0),
    )?;
    if has {
        copy.execute_batch("PRAGMA secure_delete = ON; DELETE FROM sca_page_keys;")?;
    }
    Ok(())
}

/// `(prefix, token, rest)` of an SCA page path (`/sca/{token}[/rest]`).
fn split(path: &str) -> Option<(&'static str, &str, &str)> {
    PREFIXES.iter().find_map(|p| {
        let after = path.strip_prefix(p)?;
        let (token, rest) = after.split_at(after.find('/').unwrap_or(after.len()));
        Some((*p, token, rest))
    })
}

fn unknown_page() -> Response {
    pages::error(
        StatusCode::NOT_FOUND,
        "Unknown authorisation",
        "This approval link is not known to the bank. Go back to the application and start \
         again.",
    )
    .into_response()
}

/// The layer in front of the SCA pages (see the module documentation): token to
/// authorisation id on the way in, id to token on the way out. `next` runs the rest of the
/// request, routes included ([`crate::sandbox::router`]).
///
/// A request outside the SCA pages gets `next`'s own future, an SCA page a boxed future
/// that translates it: the steps around this one hold the small one by value (the
/// translation's state, ~1 KB, was in every request's future, allocated and copied per
/// request; issue 23, as [`crate::sandbox::http::serve::body_in_time`] does for the body).
pub fn translate<F, Fut>(app: &App, req: Request, next: F) -> impl Future<Output = Response>
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    use futures_util::future::Either;
    if split(req.uri().path()).is_none() {
        Either::Left(next(req))
    } else {
        Either::Right(Box::pin(translate_page(app, req, next)))
    }
}

/// [`translate`] for an SCA page's address.
async fn translate_page<F, Fut>(app: &App, mut req: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let Some((prefix, token, rest)) = split(req.uri().path()) else {
        return next(req).await;
    };
    let Some(id) = app.sca_pages.authorisation(token) else {
        return unknown_page();
    };
    let token = token.to_string();
    let inner = format!("{prefix}{id}{rest}");
    let inner = match req.uri().query() {
        Some(q) => format!("{inner}?{q}"),
        None => inner,
    };
    match inner.parse::<Uri>() {
        Ok(u) => *req.uri_mut() = u,
        Err(_) => return unknown_page(),
    }
    // The page runs in its TPP's world (that TPP's clock), and its events are the TPP's.
    let owner = app.db.read_raw(|c| tpp_of(c, &id)).ok().flatten();
    let mut response = match &owner {
        Some(tpp) => crate::sandbox::clock::in_world(tpp.as_str(), next(req)).await,
        None => next(req).await,
    };
    if let Some(tpp) = owner {
        response
            .extensions_mut()
            .insert(crate::sandbox::domain::events::Owner(tpp.into()));
    }
    rewrite(response, &id, &token).await
}

/// The TPP of authorisation `id` (a consent or a payment/basket SCA).
fn tpp_of(c: &Conn<'_>, id: &str) -> crate::sandbox::store::sql::Result<Option<String>> {
    c.prepare_cached(
        "SELECT tpp FROM sca_authorisations WHERE id = ?1 \
         UNION ALL SELECT tpp FROM pis_authorisations WHERE id = ?1 LIMIT 1",
    )?
    .query_row([id], |r| r.get(0))
    .optional()
}

/// `response` with every `id` replaced by `token` in its HTML body and `Set-Cookie` headers.
async fn rewrite(response: Response, id: &str, token: &str) -> Response {
    let (mut parts, body) = response.into_parts();
    let cookies: Vec<HeaderValue> = parts
        .headers
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| HeaderValue::from_str(&v.replace(id, token)).ok())
        .collect();
    if !cookies.is_empty() {
        parts.headers.remove(header::SET_COOKIE);
        for c in cookies {
            parts.headers.append(header::SET_COOKIE, c);
        }
    }
    let html = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if !html {
        return Response::from_parts(parts, body);
    }
    let Ok(bytes) = axum::body::to_bytes(body, MAX_PAGE_BYTES).await else {
        return pages::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Page too large",
            "The bank could not show this page.",
        )
        .into_response();
    };
    let text = String::from_utf8_lossy(&bytes).replace(id, token);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_paths_split() {
        assert_eq!(split("/sca/abc"), Some(("/sca/", "abc", "")));
        assert_eq!(
            split("/payment-sca/abc/decision"),
            Some(("/payment-sca/", "abc", "/decision"))
        );
        assert_eq!(split("/v1/accounts"), None);
    }
}
