//! The key of the SCA pages' addresses: the page of authorisation `a` is `/sca/{token}` or
//! `/payment-sca/{token}`, `token` being AES-128 of the id's 16 bytes under this sandbox's
//! random key, base64url without padding (22 characters); see
//! [`crate::sandbox::http::sca_pages`] for why and for the layer that translates tokens back.
//!
//! The key lives in table `sca_page_keys` ([`crate::sandbox::store::page_keys`]).

use aws_lc_rs::cipher::{AES_128, DecryptingKey, EncryptingKey, UnboundCipherKey};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use uuid::Uuid;

use crate::sandbox::store::db::Db;
use crate::sandbox::store::page_keys;

/// The AES-128 key of the page tokens. `Debug` shows nothing of it.
pub struct PageKeys {
    key: [u8; 16],
    /// `key` expanded for encryption once (issue 23: [`PageKeys::token`] expanded it for
    /// every `scaRedirect` of a consent or payment creation); `None` if AWS-LC refused it,
    /// and then each token is made as before.
    encrypting: Option<EncryptingKey>,
}

impl std::fmt::Debug for PageKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PageKeys(redacted)")
    }
}

impl PageKeys {
    /// The key stored in `db`, made (from aws-lc-rs's random source) and stored when there
    /// is none.
    ///
    /// Errors: the database fails, or no random bytes can be had (reported as
    /// `sql::Error::Other`).
    pub fn load(db: &Db) -> crate::sandbox::store::sql::Result<Self> {
        let key = db.write_raw(|tx| {
            page_keys::key_or_insert(tx, || {
                let mut k = [0u8; 16];
                aws_lc_rs::rand::fill(&mut k).map_err(|_| {
                    crate::sandbox::store::sql::Error::Other(
                        "no random bytes for the SCA page key".into(),
                    )
                })?;
                Ok(k)
            })
        })?;
        Ok(PageKeys::new(key))
    }

    /// The page keys of AES-128 key `key`.
    pub fn new(key: [u8; 16]) -> Self {
        let encrypting = UnboundCipherKey::new(&AES_128, &key)
            .and_then(EncryptingKey::ecb)
            .ok();
        PageKeys { key, encrypting }
    }

    fn block(&self, bytes: [u8; 16], encrypt: bool) -> Option<[u8; 16]> {
        let mut block = bytes;
        if encrypt && let Some(k) = &self.encrypting {
            k.encrypt(&mut block).ok()?;
            return Some(block);
        }
        let unbound = UnboundCipherKey::new(&AES_128, &self.key).ok()?;
        if encrypt {
            EncryptingKey::ecb(unbound).ok()?.encrypt(&mut block).ok()?;
        } else {
            let ctx = aws_lc_rs::cipher::DecryptionContext::None;
            DecryptingKey::ecb(unbound)
                .ok()?
                .decrypt(&mut block, ctx)
                .ok()?;
        }
        Some(block)
    }

    /// The page token of authorisation `id` (a UUID; any other text, or a cipher failure,
    /// gives a token that opens nothing).
    pub fn token(&self, id: &str) -> String {
        let bytes = Uuid::parse_str(id)
            .map(|u| *u.as_bytes())
            .unwrap_or([0; 16]);
        match self.block(bytes, true) {
            Some(b) => URL_SAFE_NO_PAD.encode(b),
            None => "-".to_string(),
        }
    }

    /// The authorisation id (hyphenated UUID) of page token `token`; `None` when it is not
    /// a token (not 16 bytes of base64url).
    pub fn authorisation(&self, token: &str) -> Option<String> {
        let raw = URL_SAFE_NO_PAD.decode(token).ok()?;
        let bytes = <[u8; 16]>::try_from(raw.as_slice()).ok()?;
        let plain = self.block(bytes, false)?;
        Some(Uuid::from_bytes(plain).to_string())
    }

    /// The absolute page URL of authorisation `id` under `prefix` (`/sca` or `/payment-sca`,
    /// one of [`crate::sandbox::http::sca_pages::PREFIXES`] without its trailing slash), e.g. `https://sandbox.example/sca/{token}`.
    pub fn href(&self, public_url: &str, prefix: &str, id: &str) -> String {
        // `concat`, not `format!` (issue 23).
        [public_url, prefix, "/", &self.token(id)].concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> PageKeys {
        PageKeys::new([7u8; 16])
    }

    #[test]
    fn tokens_round_trip_and_differ_from_the_id() {
        let k = keys();
        let id = "5f0c2a8e-3b1d-4c6e-9a7f-0123456789ab";
        let t = k.token(id);
        assert_eq!(t.len(), 22);
        assert!(!t.contains(id) && !id.contains(&t));
        assert_eq!(k.authorisation(&t).as_deref(), Some(id));
        let other = PageKeys::new([8u8; 16]);
        assert_ne!(
            other.token(id),
            t,
            "another sandbox's key gives another token"
        );
        assert_eq!(k.authorisation(id), None, "an id is not a token");
        assert_eq!(k.authorisation("short"), None);
    }

    /// The key expanded once gives the tokens the key expanded per token gives.
    #[test]
    fn the_kept_encryption_key_makes_the_same_tokens() {
        for key in [[7u8; 16], [0u8; 16], *b"0123456789abcdef"] {
            let kept = PageKeys::new(key);
            assert!(kept.encrypting.is_some());
            let fresh = PageKeys {
                key,
                encrypting: None,
            };
            for _ in 0..50 {
                let id = Uuid::new_v4().to_string();
                let t = kept.token(&id);
                assert_eq!(t, fresh.token(&id));
                assert_eq!(kept.authorisation(&t).as_deref(), Some(id.as_str()));
            }
            assert_eq!(kept.token("not a uuid"), fresh.token("not a uuid"));
        }
    }
}
