//! Who serves this port: an unsigned identity check, so that a `psd2-console` command run
//! beside a console on the same data directory can use the console's embedded sandbox
//! instead of failing on its taken port (issue 18, cause D; [`crate::embedded`]).
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | GET | `/.well-known/psd2-console?challenge=HEX` | 200 `{"product":"psd2-console","version":..,"proof":HEX,"now":MS}`; 404 when the sandbox has no [`InstanceKey`] |
//! | GET | `/.well-known/psd2-console` (no challenge) | 200 `{"product":"psd2-console","version":..}` on every sandbox: no proof, only "this is a psd2-console sandbox" for `sca complete` |
//!
//! The proof is HMAC-SHA256 (aws-lc-rs) of `psd2-console identity v1\n` + the challenge
//! under the data directory's secret key ([`InstanceKey`], the file
//! `<data>/sandbox-identity.key`, mode 0600, created once). The key never leaves the file
//! and the process: the answer proves only that the server can read that file, so a program
//! that merely holds the port (or a psd2-console of another home) cannot pass, and a stale
//! answer cannot be replayed (a fresh random challenge each time). `now` is the sandbox
//! clock's time (Unix milliseconds), so the command signs its requests at the sandbox's
//! possibly moved clock. Neither document defines such a route; it is the console's own, outside
//! `/v1`, and unsigned because the asking command proves nothing about itself (it reads
//! nothing but the proof).

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::sandbox::App;

/// The path of the identity check.
pub const PATH: &str = "/.well-known/psd2-console";

/// `product` of an identity answer.
pub const PRODUCT: &str = "psd2-console";

/// What the proof's HMAC covers before the challenge.
const CONTEXT: &[u8] = b"psd2-console identity v1\n";

/// Longest challenge accepted, characters (hex).
const MAX_CHALLENGE: usize = 256;

/// A data directory's secret key (32 random bytes), shared by every psd2-console serving
/// that directory. Its `Debug` does not show it.
#[derive(Clone)]
pub struct InstanceKey(Arc<[u8]>);

impl std::fmt::Debug for InstanceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InstanceKey(..)")
    }
}

impl InstanceKey {
    /// A key of these bytes.
    pub fn new(bytes: &[u8]) -> Self {
        InstanceKey(Arc::from(bytes))
    }

    /// The proof for `challenge`: hex of HMAC-SHA256 over [`CONTEXT`] + challenge.
    pub fn proof(&self, challenge: &str) -> String {
        let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &self.0);
        let mut ctx = aws_lc_rs::hmac::Context::with_key(&key);
        ctx.update(CONTEXT);
        ctx.update(challenge.as_bytes());
        to_hex(ctx.sign().as_ref())
    }

    /// Whether `proof` (hex) is this key's proof for `challenge`, compared in constant time.
    pub fn verify(&self, challenge: &str, proof: &str) -> bool {
        let Some(tag) = from_hex(proof) else {
            return false;
        };
        let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &self.0);
        let mut msg = CONTEXT.to_vec();
        msg.extend_from_slice(challenge.as_bytes());
        aws_lc_rs::hmac::verify(&key, &msg, &tag).is_ok()
    }
}

/// Lowercase hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// The bytes of lowercase or uppercase hex `text` (`None` when it is not hex).
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    hex::decode(text).ok()
}

/// The identity answer (JSON).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IdentityAnswer {
    /// Always [`PRODUCT`].
    pub product: String,
    /// The answering console's version (`CARGO_PKG_VERSION`).
    pub version: String,
    /// [`InstanceKey::proof`] of the challenge.
    pub proof: String,
    /// The sandbox clock's time, Unix milliseconds.
    pub now: i64,
}

#[derive(serde::Deserialize)]
struct Challenge {
    challenge: Option<String>,
}

/// The identity route (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new().route(PATH, get(identity))
}

/// The answer without a challenge: `{"product":"psd2-console","version":..}`, on every
/// sandbox (`sandbox serve` too), proving nothing; `sca complete` asks it before it walks a
/// link ([`crate::client::headless_sca::check_sandbox`]).
async fn identity(State(app): State<Arc<App>>, Query(q): Query<Challenge>) -> Response {
    let Some(challenge) = q.challenge else {
        return Json(serde_json::json!({
            "product": PRODUCT,
            "version": env!("CARGO_PKG_VERSION"),
        }))
        .into_response();
    };
    let Some(key) = &app.identity else {
        return (StatusCode::NOT_FOUND, "no identity here\n").into_response();
    };
    if challenge.is_empty()
        || challenge.len() > MAX_CHALLENGE
        || !challenge.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return (
            StatusCode::BAD_REQUEST,
            "give ?challenge= with up to 256 hex digits\n",
        )
            .into_response();
    }
    let now = app
        .clock
        .now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    Json(IdentityAnswer {
        product: PRODUCT.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        proof: key.proof(&challenge),
        now,
    })
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_verifies_under_its_key_only() {
        let k = InstanceKey::new(&[7; 32]);
        let p = k.proof("abcd");
        assert!(k.verify("abcd", &p));
        assert!(!k.verify("abce", &p));
        assert!(!InstanceKey::new(&[8; 32]).verify("abcd", &p));
        assert!(!k.verify("abcd", "zz"));
        assert_eq!(from_hex(&to_hex(&[0, 255, 16])), Some(vec![0, 255, 16]));
    }
}
