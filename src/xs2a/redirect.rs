//! Query parameters of the redirect to `TPP-Redirect-URI` after SCA (interface document,
//! Resources, "Redirect parameters after SCA"). The sandbox builds them; the console's
//! redirect listener parses them.

use serde::{Deserialize, Serialize};

/// `context` of a successful SCA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum PsuContext {
    /// `PRIVATE`: the PSU acted as a private person.
    Private,
    /// `CORPORATE`: the PSU acted for a business (`psu-corporate-id` is set).
    Corporate,
}

impl PsuContext {
    /// The wire value, `PRIVATE` or `CORPORATE`.
    pub fn as_str(self) -> &'static str {
        match self {
            PsuContext::Private => "PRIVATE",
            PsuContext::Corporate => "CORPORATE",
        }
    }
}

/// Successful SCA: `psu-id` (UUID, stable per TPP and customer), `tpp-session-id`, `context`,
/// and `psu-corporate-id` in corporate context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaSuccess {
    /// `psu-id`: UUID, stable per TPP and customer.
    pub psu_id: String,
    /// `psu-corporate-id`, in the corporate context only.
    pub psu_corporate_id: Option<String>,
    /// `tpp-session-id`: the session the SCA opened or renewed.
    pub tpp_session_id: String,
    /// `context`.
    pub context: PsuContext,
}

impl ScaSuccess {
    /// A success in the corporate context when `psu_corporate_id` is given (the corporate
    /// agreement the PSU acted under), else in the private context.
    pub(crate) fn in_context(
        psu_id: String,
        psu_corporate_id: Option<String>,
        tpp_session_id: String,
    ) -> Self {
        let context = if psu_corporate_id.is_some() {
            PsuContext::Corporate
        } else {
            PsuContext::Private
        };
        ScaSuccess {
            psu_id,
            psu_corporate_id,
            tpp_session_id,
            context,
        }
    }
}

/// Failed SCA: `system`, `status` (HTTP status), `code` (e.g. `PAYMENT_FAILED`), `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaFailure {
    /// `system`: the system that failed (e.g. the ASPSP's name).
    pub system: String,
    /// `status`: the HTTP status the failure stands for.
    pub status: u16,
    /// `code`: a message code, e.g. `PAYMENT_FAILED`.
    pub code: String,
    /// `message`: human-readable text.
    pub message: String,
    /// Echoed when the ASPSP sends it (the sandbox does), so the console can match it.
    pub tpp_session_id: Option<String>,
}

/// Every parameter name of the redirect after SCA, success and failure.
pub(crate) const REDIRECT_PARAMETERS: &[&str] = &[
    "psu-id",
    "psu-corporate-id",
    "tpp-session-id",
    "context",
    "system",
    "status",
    "code",
    "message",
];

/// The outcome of an SCA as carried by the redirect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScaCallback {
    /// The SCA succeeded.
    Success(ScaSuccess),
    /// The SCA failed or was cancelled.
    Failure(ScaFailure),
}

impl ScaCallback {
    /// The query pairs, in the order of the interface document's tables.
    pub(crate) fn to_query_pairs(&self) -> Vec<(&'static str, String)> {
        match self {
            ScaCallback::Success(s) => {
                let mut v = vec![("psu-id", s.psu_id.clone())];
                if let Some(c) = &s.psu_corporate_id {
                    v.push(("psu-corporate-id", c.clone()));
                }
                v.push(("tpp-session-id", s.tpp_session_id.clone()));
                v.push(("context", s.context.as_str().to_string()));
                v
            }
            ScaCallback::Failure(f) => {
                let mut v = vec![
                    ("system", f.system.clone()),
                    ("status", f.status.to_string()),
                    ("code", f.code.clone()),
                    ("message", f.message.clone()),
                ];
                if let Some(t) = &f.tpp_session_id {
                    v.push(("tpp-session-id", t.clone()));
                }
                v
            }
        }
    }

    /// `redirect_uri` with the parameters appended. The TPP's own query parameters are kept,
    /// except those named like a redirect parameter (`psu-id`, `context`, `code`, ...,
    /// compared case-insensitively): the ASPSP's values replace them, so a TPP-Redirect-URI
    /// holding `psu-id=...` cannot put another PSU-ID ahead of the real one.
    pub(crate) fn redirect_url(&self, redirect_uri: &str) -> Result<String, url::ParseError> {
        let replaced = |k: &str| {
            REDIRECT_PARAMETERS
                .iter()
                .any(|p| k.eq_ignore_ascii_case(p))
        };
        replace_query(redirect_uri, replaced, self.to_query_pairs())
    }

    /// Parses query pairs. Success needs `psu-id`, `tpp-session-id` and `context`; failure
    /// needs `status` and `code` (`system` and `message` default to empty).
    ///
    /// Errors: [`CallbackError`], a sentence naming the missing or malformed parameter.
    pub fn from_query_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, CallbackError> {
        Self::parse_pairs(pairs).map_err(CallbackError)
    }

    /// [`ScaCallback::from_query_pairs`] with the reason as text.
    fn parse_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, String> {
        let mut map = std::collections::HashMap::new();
        for (k, v) in pairs {
            map.insert(k.to_ascii_lowercase(), v.to_string());
        }
        if let Some(psu_id) = map.get("psu-id") {
            uuid::Uuid::parse_str(psu_id)
                .map_err(|_| format!("psu-id {psu_id:?} is not a UUID"))?;
            let tpp_session_id = map
                .get("tpp-session-id")
                .cloned()
                .ok_or("the callback has psu-id but no tpp-session-id")?;
            let context = match map
                .get("context")
                .map(|c| c.to_ascii_uppercase())
                .as_deref()
            {
                Some("PRIVATE") | None => PsuContext::Private,
                Some("CORPORATE") => PsuContext::Corporate,
                Some(other) => {
                    return Err(format!(
                        "context {other:?} is neither PRIVATE nor CORPORATE"
                    ));
                }
            };
            let psu_corporate_id = map.get("psu-corporate-id").cloned();
            if context == PsuContext::Corporate && psu_corporate_id.is_none() {
                return Err("context is CORPORATE but psu-corporate-id is missing".into());
            }
            return Ok(ScaCallback::Success(ScaSuccess {
                psu_id: psu_id.clone(),
                psu_corporate_id,
                tpp_session_id,
                context,
            }));
        }
        if map.contains_key("code") || map.contains_key("status") {
            let status = map
                .get("status")
                .map(|s| {
                    s.parse::<u16>()
                        .map_err(|_| format!("status {s:?} is not a number"))
                })
                .transpose()?
                .unwrap_or(0);
            return Ok(ScaCallback::Failure(ScaFailure {
                system: map.get("system").cloned().unwrap_or_default(),
                status,
                code: map.get("code").cloned().unwrap_or_default(),
                message: map.get("message").cloned().unwrap_or_default(),
                tpp_session_id: map.get("tpp-session-id").cloned(),
            }));
        }
        Err("the callback carries neither psu-id (success) nor status/code (failure)".into())
    }

    /// The `tpp-session-id` carried, if any.
    pub fn tpp_session_id(&self) -> Option<&str> {
        match self {
            ScaCallback::Success(s) => Some(&s.tpp_session_id),
            ScaCallback::Failure(f) => f.tpp_session_id.as_deref(),
        }
    }
}

/// An SCA callback the console does not understand (interface document, Resources, redirect
/// parameters): a sentence naming the missing or malformed parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CallbackError(String);

/// `url` with the query parameters whose name `replaced` picks left out and `added`
/// appended after the others (in order, form-encoded); the other parameters keep their
/// order and values. Used for the redirect after SCA and for the console's `sca-ref`.
///
/// Errors: `url` is not an absolute URL.
pub(crate) fn replace_query<K: AsRef<str>, V: AsRef<str>>(
    url: &str,
    replaced: impl Fn(&str) -> bool,
    added: impl IntoIterator<Item = (K, V)>,
) -> Result<String, url::ParseError> {
    let mut url = url::Url::parse(url)?;
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !replaced(k))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    url.set_query(None);
    {
        let mut q = url.query_pairs_mut();
        for (k, v) in &kept {
            q.append_pair(k, v);
        }
        for (k, v) in added {
            q.append_pair(k.as_ref(), v.as_ref());
        }
    }
    Ok(url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_round_trips_through_a_url() {
        let cb = ScaCallback::Success(ScaSuccess {
            psu_id: uuid::Uuid::new_v4().to_string(),
            psu_corporate_id: Some(uuid::Uuid::new_v4().to_string()),
            tpp_session_id: "s 1&2".into(),
            context: PsuContext::Corporate,
        });
        let url = url::Url::parse(&cb.redirect_url("http://127.0.0.1:1/cb?x=1").unwrap()).unwrap();
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        let parsed = ScaCallback::from_query_pairs(
            pairs
                .iter()
                .filter(|(k, _)| k != "x")
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .unwrap();
        assert_eq!(parsed, cb);
    }

    #[test]
    fn failure_and_garbage() {
        let f = ScaCallback::from_query_pairs([
            ("system", "sca"),
            ("status", "400"),
            ("code", "PAYMENT_FAILED"),
            ("message", "cancelled by PSU"),
        ])
        .unwrap();
        assert!(matches!(f, ScaCallback::Failure(ref x) if x.status == 400));
        assert!(
            ScaCallback::from_query_pairs([("psu-id", "nope"), ("tpp-session-id", "a")]).is_err()
        );
        assert!(ScaCallback::from_query_pairs([("foo", "bar")]).is_err());
    }
}
