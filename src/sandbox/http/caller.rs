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
    checked(h.get(name), name)
}

/// [`header`] of a value already looked up (`name` for the refusal's text).
///
/// Errors: those of [`header`].
pub fn checked<'a>(
    value: Option<&'a axum::http::HeaderValue>,
    name: &str,
) -> Result<Option<&'a str>, ApiError> {
    match value {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(crate::signing::trim_text(s)).filter(|s| !s.is_empty()))
            .map_err(|_| ApiError::format(format!("the {name} header is not visible ASCII"))),
    }
}

/// Header value `value` (of header `name`) as a [`HeaderText`] (its refusal kept for when
/// it is used).
fn text(value: Option<&axum::http::HeaderValue>, name: &str) -> HeaderText {
    match checked(value, name) {
        Ok(None) => HeaderText::Absent,
        Ok(Some(s)) => HeaderText::Text(s.to_string()),
        Err(_) => HeaderText::Invalid,
    }
}

/// The [`psu_context`] slot of a (lower-case) header name: a switch on the length, then
/// one comparison, at most two.
#[inline]
fn slot(name: &str) -> Option<usize> {
    match (name.len(), name) {
        (6, "psu-id") => Some(0),
        (16, "psu-corporate-id") => Some(1),
        (14, "tpp-session-id") => Some(2),
        (16, "tpp-redirect-uri") => Some(3),
        (14, "psu-ip-address") => Some(4),
        _ => None,
    }
}

/// The PSU context of the request headers `h`, read in one pass over them (a hashed
/// look-up per header was five per read, issue 23); each header's first value, as
/// [`HeaderMap::get`] gives it.
pub fn psu_context(h: &HeaderMap) -> PsuContext {
    let mut found: [Option<&axum::http::HeaderValue>; 5] = [None; 5];
    for (name, value) in h {
        if let Some(i) = slot(name.as_str()) {
            found[i].get_or_insert(value);
        }
    }
    let [psu_id, corporate_id, session_id, redirect_uri, ip_address] = found;
    PsuContext {
        psu_id: text(psu_id, headers::PSU_ID),
        corporate_id: text(corporate_id, headers::PSU_CORPORATE_ID),
        session_id: text(session_id, headers::TPP_SESSION_ID),
        redirect_uri: text(redirect_uri, headers::TPP_REDIRECT_URI),
        // Whether the PSU takes part: `PSU-IP-Address` present and not blank (interface
        // document, Authentication 16: present when the PSU requests access in real time,
        // omitted when no PSU is present).
        present: ip_address.is_some_and(|v| !v.as_bytes().trim_ascii().is_empty()),
    }
}

impl<S: Send + Sync> FromRequestParts<S> for PsuContext {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(psu_context(&parts.headers))
    }
}

/// [`header`] of a name given as a [`HeaderName`] (a `const` of
/// [`HeaderName::from_static`]): the name is not parsed and lower-cased per look-up as a
/// `&str` name is (issue 23); `name` is the header's name as the refusal writes it.
///
/// Errors: those of [`header`].
pub fn header_named<'a>(
    h: &'a HeaderMap,
    key: &axum::http::HeaderName,
    name: &str,
) -> Result<Option<&'a str>, ApiError> {
    checked(h.get(key), name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one pass finds each header by its name (any case as sent: names are lower case
    /// in a header map), the first value of each, as a look-up by name does.
    #[test]
    fn the_one_pass_reads_each_headers_first_value() {
        let names = [
            headers::PSU_ID,
            headers::PSU_CORPORATE_ID,
            headers::TPP_SESSION_ID,
            headers::TPP_REDIRECT_URI,
            headers::PSU_IP_ADDRESS,
        ];
        for (i, name) in names.iter().enumerate() {
            let lower = axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap();
            assert_eq!(slot(lower.as_str()), Some(i), "{name}");
        }
        let mut h = HeaderMap::new();
        h.insert(headers::PSU_ID, " 12345 ".parse().unwrap());
        h.append(headers::PSU_ID, "second".parse().unwrap());
        h.insert(headers::TPP_REDIRECT_URI, "https://tpp/cb".parse().unwrap());
        h.insert(
            headers::PSU_CORPORATE_ID,
            axum::http::HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap(),
        );
        h.insert("x-other", "other".parse().unwrap());
        h.insert(headers::PSU_IP_ADDRESS, "127.0.0.1".parse().unwrap());
        let c = psu_context(&h);
        assert_eq!(c.psu_id, HeaderText::Text("12345".into()));
        assert_eq!(c.redirect_uri, HeaderText::Text("https://tpp/cb".into()));
        assert_eq!(c.corporate_id, HeaderText::Invalid);
        assert_eq!(c.session_id, HeaderText::Absent);
        assert!(c.present);
        // A blank first PSU-IP-Address: no PSU, whatever follows; a blank PSU-ID is absent.
        h.insert(headers::PSU_IP_ADDRESS, " ".parse().unwrap());
        h.append(headers::PSU_IP_ADDRESS, "127.0.0.1".parse().unwrap());
        h.insert(headers::PSU_ID, "  ".parse().unwrap());
        h.insert(headers::TPP_SESSION_ID, "s-1".parse().unwrap());
        let c = psu_context(&h);
        assert!(!c.present);
        assert_eq!(c.psu_id, HeaderText::Absent);
        assert_eq!(c.session_id, HeaderText::Text("s-1".into()));
    }
}
