//! The request headers the domain needs, read once: the PSU context of a request
//! ([`PsuContext`], an extractor) and the one reader of a header value ([`header`]).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName};

use crate::sandbox::domain::access::{HeaderText, PsuContext};
use crate::sandbox::errors::ApiError;
use crate::xs2a::headers;

/// The value of header `name`, trimmed, `None` when absent or blank.
///
/// Errors: 400 `FORMAT_ERROR` when it is not visible ASCII.
pub fn header<'a>(h: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, ApiError> {
    checked(h.get(name), name)
}

/// [`header`] of a value already looked up (`name` for the refusal's text).
fn checked<'a>(
    value: Option<&'a axum::http::HeaderValue>,
    name: &str,
) -> Result<Option<&'a str>, ApiError> {
    match value {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim()).filter(|s| !s.is_empty()))
            .map_err(|_| ApiError::format(format!("the {name} header is not visible ASCII"))),
    }
}

/// Header `name` of `h` (looked up by `key`, its name lower-cased at compile time: a `&str`
/// name is parsed and lower-cased on every look-up, five per read, issue 23) as a
/// [`HeaderText`] (its refusal kept for when it is used).
fn text(h: &HeaderMap, key: &HeaderName, name: &str) -> HeaderText {
    match checked(h.get(key), name) {
        Ok(None) => HeaderText::Absent,
        Ok(Some(s)) => HeaderText::Text(s.to_string()),
        Err(_) => HeaderText::Invalid,
    }
}

/// Whether the PSU takes part in the request: `PSU-IP-Address` present and not blank
/// (interface document, Authentication 16: present when the PSU requests access in real
/// time, omitted when no PSU is present).
pub fn psu_present(h: &HeaderMap) -> bool {
    h.get(&PSU_IP_ADDRESS)
        .is_some_and(|v| !v.as_bytes().trim_ascii().is_empty())
}

// The names of `psu_context`'s headers, made at compile time (the `headers::` texts
// lower-cased; a unit test checks they are the same names). `static`, not `const`: a
// `const` name is a new value made and dropped at every use.
static PSU_ID: HeaderName = HeaderName::from_static("psu-id");
static PSU_CORPORATE_ID: HeaderName = HeaderName::from_static("psu-corporate-id");
static TPP_SESSION_ID: HeaderName = HeaderName::from_static("tpp-session-id");
static TPP_REDIRECT_URI: HeaderName = HeaderName::from_static("tpp-redirect-uri");
static PSU_IP_ADDRESS: HeaderName = HeaderName::from_static("psu-ip-address");

/// The PSU context of the request headers `h`.
pub fn psu_context(h: &HeaderMap) -> PsuContext {
    PsuContext {
        psu_id: text(h, &PSU_ID, headers::PSU_ID),
        corporate_id: text(h, &PSU_CORPORATE_ID, headers::PSU_CORPORATE_ID),
        session_id: text(h, &TPP_SESSION_ID, headers::TPP_SESSION_ID),
        redirect_uri: text(h, &TPP_REDIRECT_URI, headers::TPP_REDIRECT_URI),
        present: psu_present(h),
    }
}

impl<S: Send + Sync> FromRequestParts<S> for PsuContext {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(psu_context(&parts.headers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names made at compile time are the headers' names, and the context read with
    /// them is the one read by text name.
    #[test]
    fn the_compile_time_names_are_the_headers_names() {
        for (key, name) in [
            (&PSU_ID, headers::PSU_ID),
            (&PSU_CORPORATE_ID, headers::PSU_CORPORATE_ID),
            (&TPP_SESSION_ID, headers::TPP_SESSION_ID),
            (&TPP_REDIRECT_URI, headers::TPP_REDIRECT_URI),
            (&PSU_IP_ADDRESS, headers::PSU_IP_ADDRESS),
        ] {
            assert_eq!(*key, HeaderName::from_bytes(name.as_bytes()).unwrap());
        }
        let mut h = HeaderMap::new();
        h.insert(headers::PSU_ID, " 12345 ".parse().unwrap());
        h.insert(headers::TPP_REDIRECT_URI, "https://tpp/cb".parse().unwrap());
        h.insert(
            headers::PSU_CORPORATE_ID,
            axum::http::HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap(),
        );
        h.insert(headers::PSU_IP_ADDRESS, "127.0.0.1".parse().unwrap());
        let c = psu_context(&h);
        assert_eq!(c.psu_id, HeaderText::Text("12345".into()));
        assert_eq!(c.redirect_uri, HeaderText::Text("https://tpp/cb".into()));
        assert_eq!(c.corporate_id, HeaderText::Invalid);
        assert_eq!(c.session_id, HeaderText::Absent);
        assert!(c.present);
    }
}
