//! The operator plane: what spans every TPP of a sandbox (the state database's snapshot, the
//! whole state, the global reset, every TPP's events), as opposed to the TPP plane, where a
//! signed request sees and changes only its own TPP's world (issue 20).
//!
//! A signed `/v1` request is on the operator plane when
//!
//! - its **peer address** (the socket the request came in on, [`ConnectInfo`], set by
//!   [`crate::http_server::serve`] for every connection) is on loopback: the machine the
//!   sandbox runs on. Never `--public-url`, `Host`, `Forwarded` or any other header: those
//!   are the client's to choose; or
//! - it carries [`OPERATOR_TOKEN_HEADER`] with the token of `sandbox serve
//!   --operator-token-file FILE` ([`OperatorToken`]), compared in constant time
//!   ([`aws_lc_rs::constant_time`]) over SHA-256 digests, so neither its content nor its
//!   length shows in the answer's timing. The token is never logged, never in an event (the
//!   rebuilt signing string leaves the header's value out) and never in `Debug` output.
//!
//! Anything else answers 403 `SERVICE_BLOCKED` naming what is missing. The interface
//! document is silent (its sandbox operations are per TPP); this is what a shared sandbox
//! of a bank does: the tenant API is per tenant, the operator console is local or keyed.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::request::Parts;

use crate::sandbox::App;
use crate::sandbox::errors::ApiError;
use crate::xs2a::error::MessageCode;

/// The request header carrying the operator token (`X-Sandbox-Operator-Token`).
pub const OPERATOR_TOKEN_HEADER: &str = crate::xs2a::headers::SANDBOX_OPERATOR_TOKEN;

/// Shortest operator token accepted from `--operator-token-file`, characters.
pub const MIN_TOKEN_CHARS: usize = 16;

/// The operator token of `sandbox serve --operator-token-file FILE`. Only its SHA-256 is
/// kept; `Debug` shows nothing of it.
#[derive(Clone)]
pub struct OperatorToken {
    digest: [u8; 32],
}

impl std::fmt::Debug for OperatorToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OperatorToken(redacted)")
    }
}

/// Why `--operator-token-file` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The file cannot be read.
    #[error("operator token file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why it cannot be read.
        #[source]
        source: std::io::Error,
    },
    /// The token (the file's first line, trimmed) is too short or has control characters.
    #[error(
        "operator token file {path}: the token (its first line) must have at least {MIN_TOKEN_CHARS} printable characters"
    )]
    Weak {
        /// The file.
        path: String,
    },
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

impl OperatorToken {
    /// The token `text` (trimmed).
    ///
    /// Errors: [`TokenError::Weak`] (with `path` empty) for fewer than [`MIN_TOKEN_CHARS`]
    /// characters or control characters.
    pub fn new(text: &str) -> Result<Self, TokenError> {
        let t = text.trim();
        if t.chars().count() < MIN_TOKEN_CHARS || t.chars().any(char::is_control) {
            return Err(TokenError::Weak {
                path: String::new(),
            });
        }
        Ok(OperatorToken {
            digest: sha256(t.as_bytes()),
        })
    }

    /// The token in the first line of `path`.
    ///
    /// Errors: [`TokenError`].
    pub fn from_file(path: &Path) -> Result<Self, TokenError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TokenError::Read {
            path: shown.clone(),
            source,
        })?;
        let first = text.lines().next().unwrap_or("");
        Self::new(first).map_err(|_| TokenError::Weak { path: shown })
    }

    /// A random 256-bit token (hex) and its [`OperatorToken`]: the embedded sandbox's, handed
    /// to the console that started it. `None` when the system's random source fails.
    pub fn generate() -> Option<(String, Self)> {
        let mut bytes = [0u8; 32];
        aws_lc_rs::rand::fill(&mut bytes).ok()?;
        let text = hex::encode(bytes);
        let token = OperatorToken {
            digest: sha256(text.as_bytes()),
        };
        Some((text, token))
    }

    /// Whether `presented` is this token, in constant time.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let d = sha256(presented.trim_ascii());
        aws_lc_rs::constant_time::verify_slices_are_equal(&d, &self.digest).is_ok()
    }
}

/// Whether a request with these `extensions` and `headers` is on the operator plane (see
/// the module documentation).
pub fn is_operator(app: &App, extensions: &axum::http::Extensions, headers: &HeaderMap) -> bool {
    let loopback_peer = extensions
        .get::<ConnectInfo<SocketAddr>>()
        .is_some_and(|c| is_loopback_peer(c.0));
    loopback_peer
        || match (&app.operator_token, headers.get(OPERATOR_TOKEN_HEADER)) {
            (Some(token), Some(v)) => token.matches(v.as_bytes()),
            _ => false,
        }
}

/// Whether `peer` is on loopback (IPv4 127.0.0.0/8, IPv6 `::1`, or an IPv4-mapped loopback).
pub fn is_loopback_peer(peer: SocketAddr) -> bool {
    match peer.ip() {
        std::net::IpAddr::V4(v4) => v4.is_loopback(),
        std::net::IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// 403 `SERVICE_BLOCKED` for an operator-plane operation asked from the TPP plane: `what`
/// names the operation.
pub fn refused(what: &str) -> ApiError {
    ApiError::new(
        MessageCode::ServiceBlocked,
        format!(
            "{what} spans every TPP of this sandbox: it is an operator operation, answered only \
             to a client on the sandbox's own machine (a loopback peer address) or with the \
             operator token of `sandbox serve --operator-token-file` in \
             {OPERATOR_TOKEN_HEADER}"
        ),
    )
}

/// The operator plane, as an extractor: the request is from a loopback peer or carries the
/// operator token ([`is_operator`]).
///
/// Errors (the rejection): 403 `SERVICE_BLOCKED` ([`refused`]).
#[derive(Debug, Clone, Copy)]
pub struct Operator;

impl FromRequestParts<Arc<App>> for Operator {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        app: &Arc<App>,
    ) -> Result<Self, Self::Rejection> {
        if is_operator(app, &parts.extensions, &parts.headers) {
            Ok(Operator)
        } else {
            Err(refused(&format!("{} {}", parts.method, parts.uri.path())))
        }
    }
}

/// Whether the request asks for the operator scope with `?scope=all` (the global reset,
/// every TPP's events).
pub fn wants_all(parts: &Parts) -> bool {
    parts.uri.query().is_some_and(|q| {
        url::form_urlencoded::parse(q.as_bytes()).any(|(k, v)| k == "scope" && v == "all")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_only_themselves_and_never_show() {
        let t = OperatorToken::new("  correct horse battery staple \n").unwrap();
        assert!(t.matches(b"correct horse battery staple"));
        assert!(!t.matches(b"correct horse battery stapl"));
        assert!(!t.matches(b""));
        assert_eq!(format!("{t:?}"), "OperatorToken(redacted)");
        assert!(OperatorToken::new("short").is_err());
        assert!(OperatorToken::new("sixteen chars\u{7}xxxxx").is_err());
        let (text, g) = OperatorToken::generate().unwrap();
        assert_eq!(text.len(), 64);
        assert!(g.matches(text.as_bytes()));
    }

    #[test]
    fn loopback_peers() {
        for p in [
            "127.0.0.1:1",
            "127.9.9.9:2",
            "[::1]:3",
            "[::ffff:127.0.0.1]:4",
        ] {
            assert!(is_loopback_peer(p.parse().unwrap()), "{p}");
        }
        for p in [
            "10.0.0.1:1",
            "192.168.1.2:2",
            "[fe80::1]:3",
            "[::ffff:10.0.0.1]:4",
        ] {
            assert!(!is_loopback_peer(p.parse().unwrap()), "{p}");
        }
    }
}
