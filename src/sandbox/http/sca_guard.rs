//! Binds each SCA to the browser that opened it (the consent SCA pages of [`crate::sandbox::http::sca`] and
//! the payment and basket pages of [`crate::sandbox::http::payment_sca`]).
//!
//! Without it, anyone holding a `scaRedirect` link could post the login and the approval
//! from another client. The interface document is silent (its SCA is the bank's own
//! pages); this is what a bank's login pages do:
//!
//! - The first `GET` of a usable authorisation binds it: the answer sets the cookie
//!   [`COOKIE`], a random 256-bit secret, `HttpOnly`, `Path` the authorisation's pages,
//!   `Max-Age` one hour, and ([`same_site`]) on plain HTTP `SameSite=Lax` (cross-site posts
//!   never carry it; the PSU re-opening the link from the TPP's site still does), over TLS
//!   (an https public URL) `SameSite=None; Secure`, so that the SCA pages also work shown
//!   in a frame of the TPP's page (interface document, Authentication 11: "redirects the PSU
//!   (or shows it in a frame)"), where a browser sends `Lax` cookies with no request of the
//!   frame. The per-step token and the `Origin` check below keep cross-site posts out
//!   without `Lax`. Only its SHA-256 is stored (table `sca_browsers`).
//! - Every form carries a hidden `token`: HMAC-SHA-256 keyed with the browser's secret over
//!   the authorisation id and the step the page shows, so it differs per step and cannot be
//!   made without the cookie.
//! - A later `GET`, and every `POST`, must carry the bound cookie; a `POST` must carry the
//!   current step's token, and an `Origin` header, when present, must be the sandbox's own
//!   origin ([`crate::sandbox::App::public_origin`]). Otherwise the answer is a 403 page in the bank's
//!   style. A token of an earlier step of the same browser (a form posted twice, the back
//!   button) gets the current step's page.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::html;

use crate::sandbox::App;
use crate::sandbox::http::pages;
use crate::sandbox::store::sca_browsers as store;

/// The cookie's name.
pub const COOKIE: &str = "sb_sca";

/// How long the cookie lives, seconds (the longest SCA lives one hour).
pub const COOKIE_MAX_AGE: u64 = 3600;

/// The form field of the per-step token.
pub const TOKEN_FIELD: &str = "token";

/// The browser an SCA is bound to, as far as this request shows it.
#[derive(Debug, Clone)]
pub struct Browser {
    secret: String,
    /// The `Set-Cookie` to send (the request that bound the SCA).
    set_cookie: Option<HeaderValue>,
}

fn sha256(s: &str) -> String {
    hex::encode(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, s.as_bytes()).as_ref())
}

fn cookies<'a>(headers: &'a HeaderMap) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='))
}

/// The 403 page of a step from another browser or site.
pub fn forbidden(why: &str) -> Response {
    pages::error(
        StatusCode::FORBIDDEN,
        "Not allowed from here",
        &format!(
            "{why} For your security this approval can only be completed in the browser \
             window that opened it from the application. Go back to the application and \
             start again."
        ),
    )
    .into_response()
}

fn stored_hash(app: &App, id: &str) -> Result<Option<String>, Box<Response>> {
    app.db
        .read(|c| store::hash_of(c, id))
        .map_err(|_| Box::new(storage_page()))
}

fn storage_page() -> Response {
    pages::error(
        StatusCode::SERVICE_UNAVAILABLE,
        "Please try again",
        "The bank could not read its records just now.",
    )
    .into_response()
}

/// The cookie of `headers` whose hash is `hash`.
fn matching(headers: &HeaderMap, hash: &str) -> Option<String> {
    cookies(headers)
        .find(|c| sha256(c) == hash)
        .map(str::to_string)
}

/// For the `GET` of a usable authorisation `id` whose pages live under `path`
/// (`/sca/{id}`): binds it to this browser when nobody has opened it yet, else checks the
/// cookie.
///
/// Errors: the 403 page (another browser), or a 503 page (the database failed), boxed.
pub fn open(
    app: &App,
    id: &str,
    path: &str,
    headers: &HeaderMap,
) -> Result<Browser, Box<Response>> {
    if let Some(hash) = stored_hash(app, id)? {
        return match matching(headers, &hash) {
            Some(secret) => Ok(Browser {
                secret,
                set_cookie: None,
            }),
            None => Err(Box::new(forbidden(
                "This approval was opened in another browser.",
            ))),
        };
    }
    let mut raw = [0u8; 32];
    aws_lc_rs::rand::fill(&mut raw).map_err(|_| Box::new(storage_page()))?;
    let secret = hex::encode(raw);
    let hash = sha256(&secret);
    let inserted = crate::sandbox::domain::access::bind_browser(
        &app.domain(),
        id,
        &hash,
        2 * COOKIE_MAX_AGE as i64,
    )
    .map_err(|_| Box::new(storage_page()))?;
    if inserted == 0 {
        // Another request bound it a moment ago.
        return open(app, id, path, headers);
    }
    let same_site = same_site(&app.public_url);
    let cookie =
        format!("{COOKIE}={secret}; Path={path}; Max-Age={COOKIE_MAX_AGE}; HttpOnly; {same_site}");
    Ok(Browser {
        secret,
        set_cookie: HeaderValue::from_str(&cookie).ok(),
    })
}

/// The `SameSite` (and `Secure`) attributes of the binding cookie for the sandbox at
/// `public_url`: `SameSite=None; Secure` over TLS (an https public URL), so the SCA pages
/// work inside a cross-site frame of the TPP's page (browsers only send `SameSite=None`
/// cookies that are `Secure`); `SameSite=Lax` on plain HTTP (a loopback sandbox shown as a
/// top-level page), where `None` without `Secure` would be refused by browsers.
pub fn same_site(public_url: &str) -> &'static str {
    if public_url.starts_with("https:") {
        "SameSite=None; Secure"
    } else {
        "SameSite=Lax"
    }
}

/// What a form post may do.
#[derive(Debug)]
pub enum Post {
    /// The current step's token: go on.
    Current(Browser),
    /// A token of another step of this browser: show the current step's page.
    Stale(Browser),
}

/// For a `POST` to the pages of authorisation `id`: checks `Origin`, the bound cookie and
/// the `token` of `form` against `current` (the step the authorisation is at) and `steps`
/// (every step name).
///
/// Errors: the 403 page, or a 503 page (the database failed), boxed.
pub fn post(
    app: &App,
    id: &str,
    headers: &HeaderMap,
    form: &[(String, String)],
    current: &str,
    steps: &[&str],
) -> Result<Post, Box<Response>> {
    if let Some(origin) = headers.get(header::ORIGIN)
        && origin.as_bytes() != app.public_origin.as_bytes()
    {
        return Err(Box::new(forbidden("The form was sent from another site.")));
    }
    let Some(hash) = stored_hash(app, id)? else {
        return Err(Box::new(forbidden(
            "This approval was not opened in this browser.",
        )));
    };
    let Some(secret) = matching(headers, &hash) else {
        return Err(Box::new(forbidden(
            "This approval was opened in another browser.",
        )));
    };
    let browser = Browser {
        secret,
        set_cookie: None,
    };
    let sent = form
        .iter()
        .rev()
        .find(|(k, _)| k == TOKEN_FIELD)
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    if constant_eq(sent, &browser.token(id, current)) {
        return Ok(Post::Current(browser));
    }
    if steps
        .iter()
        .any(|s| constant_eq(sent, &browser.token(id, s)))
    {
        return Ok(Post::Stale(browser));
    }
    Err(Box::new(forbidden(
        "The form is not one this bank showed you.",
    )))
}

fn constant_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && aws_lc_rs::constant_time::verify_slices_are_equal(a.as_bytes(), b.as_bytes()).is_ok()
}

impl Browser {
    /// The token of step `step` of authorisation `id` (hex, 128 bits).
    pub fn token(&self, id: &str, step: &str) -> String {
        let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, self.secret.as_bytes());
        let tag = aws_lc_rs::hmac::sign(&key, format!("sca-step:{id}:{step}").as_bytes());
        hex::encode(&tag.as_ref()[..16])
    }

    /// `response` with the token of `step` in every form of its HTML page, and the cookie
    /// when this request bound the SCA.
    pub async fn finish(&self, id: &str, step: Option<&str>, response: Response) -> Response {
        let (mut parts, body) = response.into_parts();
        if let Some(c) = &self.set_cookie {
            parts.headers.append(header::SET_COOKIE, c.clone());
        }
        let Some(step) = step else {
            return Response::from_parts(parts, body);
        };
        let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
            return storage_page();
        };
        let html = String::from_utf8_lossy(&bytes);
        if !html.contains("<form") {
            return Response::from_parts(parts, Body::from(bytes));
        }
        let html = with_token(&html, &self.token(id, step));
        parts.headers.remove(header::CONTENT_LENGTH);
        Response::from_parts(parts, Body::from(html))
    }
}

/// `html` with `<input type="hidden" name="token" value="{token}">` first in every form.
fn with_token(html: &str, token: &str) -> String {
    let input = html! { input type="hidden" name=(TOKEN_FIELD) value=(token); }.into_string();
    let mut out = String::with_capacity(html.len() + 128);
    let mut rest = html;
    while let Some(at) = rest.find("<form") {
        let Some(end) = rest[at..].find('>') else {
            break;
        };
        out.push_str(&rest[..at + end + 1]);
        out.push_str(&input);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_gets_the_token_and_tokens_differ_per_step() {
        let html = "<p>x</p><form id=\"a\" method=\"post\"><b></b></form><form id=\"b\">y</form>";
        let out = with_token(html, "t0k");
        assert_eq!(out.matches("name=\"token\" value=\"t0k\"").count(), 2);
        assert!(out.starts_with("<p>x</p><form id=\"a\" method=\"post\"><input"));
        let b = Browser {
            secret: "s".into(),
            set_cookie: None,
        };
        assert_ne!(b.token("id", "login"), b.token("id", "decision"));
        assert_ne!(b.token("id", "login"), b.token("id2", "login"));
        let other = Browser {
            secret: "t".into(),
            set_cookie: None,
        };
        assert_ne!(b.token("id", "login"), other.token("id", "login"));
    }
}
