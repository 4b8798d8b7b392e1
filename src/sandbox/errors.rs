//! Berlin Group error responses of the sandbox's `/v1` interface: status plus an
//! [`ErrorBody`] (`{"tppMessages":[{"category":"ERROR","code":..,"text":..}],"_links":..}`),
//! and extractors whose rejections are such bodies (never axum's plain-text ones).

use axum::extract::{FromRequestParts, Path};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use crate::sandbox::store::error::StoreError;
use crate::signing::VerifyError;
use crate::xs2a::error::{ErrorBody, MessageCode};
use crate::xs2a::links::{Link, Links, names};

/// An error answer of the `/v1` interface.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status of the answer.
    pub status: StatusCode,
    /// The Berlin Group error body (`tppMessages`).
    pub body: ErrorBody,
}

impl ApiError {
    /// `code` with its own status ([`MessageCode::status`]).
    pub fn new(code: MessageCode, text: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::from_u16(code.status()).unwrap_or(StatusCode::BAD_REQUEST),
            body: ErrorBody::new(code, text),
        }
    }

    /// `FORMAT_ERROR` (400).
    pub fn format(text: impl Into<String>) -> Self {
        ApiError::new(MessageCode::FormatError, text)
    }

    /// 404 with code `RESOURCE_UNKNOWN`: the Berlin Group enums list `RESOURCE_UNKNOWN`
    /// under 400, 403 and 404 (`MessageCode404_AIS`); [`MessageCode::status`] gives 400, so
    /// the status is set here.
    pub fn not_found(text: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::NOT_FOUND,
            body: ErrorBody::new(MessageCode::ResourceUnknown, text),
        }
    }

    /// 403 with code `RESOURCE_UNKNOWN` (`MessageCode403_AIS`): a resource addressed by path
    /// that this PSU cannot see.
    pub fn forbidden_unknown(text: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::FORBIDDEN,
            body: ErrorBody::new(MessageCode::ResourceUnknown, text),
        }
    }

    /// 405 `SERVICE_INVALID`.
    pub fn method_not_allowed(text: impl Into<String>) -> Self {
        ApiError::new(MessageCode::ServiceInvalid405, text)
    }

    /// The state database failed (disk full, file locked by another process). 503 with
    /// `SERVICE_BLOCKED` and the reason: the Berlin Group file defines no 5xx codes, and the
    /// sandbox never answers a bare 500.
    pub fn storage(text: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            body: ErrorBody::new(
                MessageCode::ServiceBlocked,
                format!("sandbox storage unavailable: {}", text.into()),
            ),
        }
    }

    /// A signature verification failure: its code, always with 400 (interface document,
    /// Authentication 3; see [`crate::xs2a::error::SIGNATURE_FAILURE_CODES`]).
    pub fn from_verify(err: &VerifyError) -> Self {
        ApiError::new(err.message_code(), err.to_string())
    }

    /// Adds `_links.scaRedirect`.
    pub fn with_sca_redirect(mut self, href: impl Into<String>) -> Self {
        let mut links = Links::new();
        links.insert(names::SCA_REDIRECT.to_string(), Link::href(href));
        self.body = self.body.with_links(links);
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // The code travels to the access log (`ErrorCode`).
        let code = self.body.first_code().map(|c| ErrorCode(c.into()));
        let mut response = (self.status, axum::Json(self.body)).into_response();
        if let Some(code) = code {
            response.extensions_mut().insert(code);
        }
        response
    }
}

/// A failure of the state database as an answer, so handlers and domain functions use `?`
/// on the store's results: [`ApiError::storage`] (503 `SERVICE_BLOCKED`, the reason in the
/// text), logged at `error` level when converted. Never a "not found" or an empty list.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        tracing::error!(error = %e, "sandbox database failed");
        ApiError::storage(e.to_string())
    }
}

/// A database failure inside a transaction ([`crate::sandbox::store::db::Db::write`]) run
/// with `ApiError` as its error: as [`StoreError`] (503 `SERVICE_BLOCKED`, logged).
impl From<crate::sandbox::store::sql::Error> for ApiError {
    fn from(e: crate::sandbox::store::sql::Error) -> Self {
        ApiError::from(StoreError::from(e))
    }
}

/// Like [`axum::extract::Path`], rejecting with a `FORMAT_ERROR` body.
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(v)) => Ok(ApiPath(v)),
            Err(e) => Err(ApiError::format(format!("invalid path: {}", e.body_text()))),
        }
    }
}

/// The query string as decoded (name, value) pairs, in order. Never rejects.
pub struct QueryPairs(pub Vec<(String, String)>);

impl QueryPairs {
    /// The query string of `parts`, decoded (`application/x-www-form-urlencoded`).
    pub fn of(parts: &Parts) -> Self {
        let q = parts.uri.query().unwrap_or("");
        QueryPairs(
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect(),
        )
    }

    /// The last value of `name`, if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A boolean parameter (`true`/`false`, case-insensitive); `default` when absent.
    pub fn bool(&self, name: &str, default: bool) -> Result<bool, ApiError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(ApiError::format(format!(
                "query parameter {name}={v:?} is not a boolean (true or false)"
            ))),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for QueryPairs {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(QueryPairs::of(parts))
    }
}

/// The Berlin Group code of an error answer, set as a response extension by
/// [`ApiError`]'s `IntoResponse`, read by the access log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCode(pub String);
