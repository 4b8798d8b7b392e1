//! The request headers the domain needs, read once: the PSU context of a request
//! ([`PsuContext`], an extractor) and the one reader of a header value ([`header`]).

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::request::Parts;

use crate::sandbox::domain::access::{HeaderText, PsuContext};
use crate::sandbox::errors::ApiError;
use crate::xs2a::headers;

/// The value of header `name`, trimmed, `None` when absent or blank.
///
/// Errors: 400 `FORMAT_ERROR` when it is not visible ASCII.
pub fn header<'a>(h: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, ApiError> {
    match h.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim()).filter(|s| !s.is_empty()))
            .map_err(|_| ApiError::format(format!("the {name} header is not visible ASCII"))),
    }
}

/// Header `name` of `h` as a [`HeaderText`] (its refusal kept for when it is used).
fn text(h: &HeaderMap, name: &str) -> HeaderText {
    match header(h, name) {
        Ok(None) => HeaderText::Absent,
        Ok(Some(s)) => HeaderText::Text(s.to_string()),
        Err(_) => HeaderText::Invalid,
    }
}

/// Whether the PSU takes part in the request: `PSU-IP-Address` present and not blank
/// (interface document, Authentication 16: present when the PSU requests access in real
/// time, omitted when no PSU is present).
pub fn psu_present(h: &HeaderMap) -> bool {
    h.get(headers::PSU_IP_ADDRESS)
        .is_some_and(|v| !v.as_bytes().trim_ascii().is_empty())
}

/// The PSU context of the request headers `h`.
pub fn psu_context(h: &HeaderMap) -> PsuContext {
    PsuContext {
        psu_id: text(h, headers::PSU_ID),
        corporate_id: text(h, headers::PSU_CORPORATE_ID),
        session_id: text(h, headers::TPP_SESSION_ID),
        redirect_uri: text(h, headers::TPP_REDIRECT_URI),
        present: psu_present(h),
    }
}

impl<S: Send + Sync> FromRequestParts<S> for PsuContext {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(psu_context(&parts.headers))
    }
}
