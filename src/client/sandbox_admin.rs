//! `psd2-console sandbox fault add|list|clear`: a client of a running sandbox's fault rules
//! (`/v1/sandbox/faults`, see `docs/sandbox.md`, "Faults and events"). Each call is a signed
//! management request like `send sandbox.initialize`: signed with the profile's credentials
//! ([`ensure_credentials`]) at the local time, with a fresh `X-Request-ID`. The sandbox checks
//! the definition; its refusal (400 `FORMAT_ERROR` naming the field) is reported as is.

use std::sync::Arc;
use std::time::SystemTime;

use reqwest::Method;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::ClientError;
use super::engine::ensure_credentials;
use super::tls::http_client_for;
use crate::cert::Credentials;
use crate::profile::{DEFAULT_PROFILE, NoSuchProfile, Paths, ProfileSet, Target};
use crate::signing::{SignOptions, sign_request};
use crate::xs2a::error::{ErrorBody, TppMessage};
use crate::xs2a::headers as h;
use crate::xs2a::wire::{FaultList, FaultRule, FaultsCleared};

/// The state browser's read (customers, consents, payments, baskets).
pub(crate) const STATE_PATH: &str = "/v1/sandbox/state";
/// The sandbox clock (GET reads it, POST `{"advanceSeconds": n}` advances it).
pub(crate) const CLOCK_PATH: &str = "/v1/sandbox/clock";
/// The batch run (POST).
pub(crate) const BATCH_PATH: &str = "/v1/sandbox/batch";
/// The fault rules (GET lists, DELETE clears).
pub(crate) const FAULTS_PATH: &str = "/v1/sandbox/faults";

/// Where the rules live: the sandbox's base URL and the profile that signs.
#[derive(Debug, Clone, clap::Args)]
pub struct FaultTarget {
    /// Base URL of a running `psd2-console sandbox serve`, e.g. http://127.0.0.1:8080
    /// (default: the profile's target URL).
    #[arg(long)]
    pub url: Option<String>,
    /// The profile whose certificate and key sign the requests.
    #[arg(long, default_value = DEFAULT_PROFILE)]
    pub profile: String,
}

/// The `sandbox fault` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum FaultCommand {
    /// Add a rule and print it (JSON with its id).
    Add {
        /// The sandbox and the signing profile.
        #[command(flatten)]
        target: FaultTarget,
        /// error, delay, drop, rejectPayment, insufficientFunds, holdPayment, scaCancel,
        /// scaFail.
        #[arg(long, default_value = "error")]
        action: String,
        /// Only this method (GET, POST, PUT, DELETE, PATCH).
        #[arg(long)]
        method: Option<String>,
        /// Path pattern: `*` any characters, `{name}` one segment, e.g. '/v1/accounts*'.
        #[arg(long)]
        path: Option<String>,
        /// Only requests with this PSU-ID.
        #[arg(long)]
        psu_id: Option<String>,
        /// Answers left (default: until cleared).
        #[arg(long)]
        times: Option<u64>,
        /// HTTP status of an `error` (400-599) or `scaFail`.
        #[arg(long)]
        status: Option<u16>,
        /// Berlin Group code, e.g. SERVICE_BLOCKED.
        #[arg(long)]
        code: Option<String>,
        /// The tppMessages text (or SCA failure message, or payment status reason).
        #[arg(long)]
        text: Option<String>,
        /// Wait before answering, milliseconds.
        #[arg(long)]
        delay_ms: Option<u64>,
    },
    /// List the rules: id, action, method and path, answers left.
    List {
        /// The sandbox and the signing profile.
        #[command(flatten)]
        target: FaultTarget,
    },
    /// Remove one rule (by id) or all of them.
    Clear {
        /// The sandbox and the signing profile.
        #[command(flatten)]
        target: FaultTarget,
        /// The rule's id; every rule when absent.
        id: Option<String>,
    },
}

/// Errors of a `sandbox fault` command.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error(transparent)]
    /// The profile named by `--profile` does not exist.
    Profile(#[from] NoSuchProfile),
    #[error(transparent)]
    /// The profile's credentials or HTTP client could not be set up.
    Client(#[from] ClientError),
    /// The profile targets the embedded sandbox, which lives only as long as the process
    /// that started it: a running console's own (on `url`, the profile's `listen` address
    /// and `sandbox_port`) or a `sandbox serve` is the one to change.
    #[error(
        "profile {profile:?} targets the embedded sandbox, which lives only inside a running console: give --url {url} to change the sandbox of a console running on this profile, or --url of a running `psd2-console sandbox serve`"
    )]
    Embedded {
        /// The profile's name.
        profile: String,
        /// Where a console running on that profile serves its sandbox.
        url: String,
    },
    /// Not sent, or no answer.
    #[error("request to {url} failed: {source}")]
    Http {
        /// The URL asked for.
        url: String,
        /// reqwest's error.
        #[source]
        source: reqwest::Error,
    },
    /// The sandbox refused: its status and its first `tppMessages` text (with the field).
    #[error("the sandbox answered {status}: {text}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// `CODE (path): text`, or the body when it is not a Berlin Group error.
        text: String,
    },
}

/// A signing client of one sandbox's management operations (`/v1/sandbox/*`): the CLI's
/// `sandbox fault` commands and the console's monitor screen ([`super::monitor`]).
#[derive(Clone)]
pub struct SandboxAdmin {
    base: String,
    credentials: Arc<Credentials>,
    http: reqwest::Client,
    /// The sandbox's operator token (the embedded sandbox's): sent in
    /// [`OPERATOR_TOKEN_HEADER`] with every request; never in `Debug`.
    operator_token: Option<String>,
}

/// The header of a sandbox's operator token (the sandbox's `operator` module).
pub const OPERATOR_TOKEN_HEADER: &str = h::SANDBOX_OPERATOR_TOKEN;

impl std::fmt::Debug for SandboxAdmin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxAdmin")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl SandboxAdmin {
    /// A client of the sandbox at `base_url` (e.g. `http://127.0.0.1:8080`), signing with
    /// `credentials`, sending with `http` (the engine's client of the profile).
    pub fn new(base_url: &str, credentials: Arc<Credentials>, http: reqwest::Client) -> Self {
        SandboxAdmin {
            base: base_url.trim_end_matches('/').to_string(),
            credentials,
            http,
            operator_token: None,
        }
    }

    /// This client with the sandbox's operator token: its requests are on the sandbox's
    /// operator plane (every TPP's events and state).
    pub fn with_operator_token(mut self, token: Option<String>) -> Self {
        self.operator_token = token;
        self
    }

    /// Whether this client holds the operator token.
    pub(crate) fn is_operator(&self) -> bool {
        self.operator_token.is_some()
    }

    /// The sandbox's base URL (no trailing slash).
    pub fn base_url(&self) -> &str {
        &self.base
    }

    fn of(target: &FaultTarget, paths: &Paths) -> Result<Self, AdminError> {
        let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
        let profile = profiles.require(&target.profile)?;
        let base = match (&target.url, &profile.target) {
            (Some(u), _) | (None, Target::Url(u)) => u.trim_end_matches('/').to_string(),
            (None, Target::Embedded) => {
                return Err(AdminError::Embedded {
                    profile: profile.name.clone(),
                    url: embedded_url(profile),
                });
            }
        };
        Ok(SandboxAdmin {
            base,
            credentials: Arc::new(ensure_credentials(profile, paths)?),
            http: http_client_for(profile)?,
            operator_token: None,
        })
    }

    /// Sends a request signed at `now` (the sandbox's clock for the embedded sandbox, see
    /// [`super::Engine::now`]) with a fresh `X-Request-ID`; answers the response as it
    /// arrives (the body not read). `timeout` replaces the client's whole-request timeout
    /// (the event stream lives longer than any request).
    ///
    /// Errors: not sent or no answer ([`AdminError::Http`]).
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        now: SystemTime,
        timeout: Option<std::time::Duration>,
    ) -> Result<reqwest::Response, AdminError> {
        let bytes = body.map(Value::to_string).unwrap_or_default().into_bytes();
        let mut headers = vec![(
            h::X_REQUEST_ID.to_string(),
            uuid::Uuid::new_v4().to_string(),
        )];
        if body.is_some() {
            headers.push((h::CONTENT_TYPE.into(), "application/json".into()));
        }
        sign_request(
            &self.credentials,
            method.as_str(),
            path,
            &mut headers,
            &bytes,
            SignOptions {
                request_target: false,
                now,
            },
        );
        let url = format!("{}{path}", self.base);
        let mut rb = self.http.request(method, &url);
        for (n, v) in &headers {
            rb = rb.header(n, v);
        }
        // Not signed: the token is a credential of its own, and a signed header would show
        // in the signing string of the sandbox's events.
        if let Some(t) = &self.operator_token {
            rb = rb.header(OPERATOR_TOKEN_HEADER, t);
        }
        if let Some(t) = timeout {
            rb = rb.timeout(t);
        }
        rb.body(bytes)
            .send()
            .await
            .map_err(|source| AdminError::Http { url, source })
    }

    /// Sends a request signed at `now` ([`SandboxAdmin::request`]); returns the answer read
    /// as a `T`: `Value` for the JSON body as sent (`Null` for none), or one of the answer
    /// types of [`crate::xs2a::wire`] (a field the answer lacks, or has in another shape,
    /// reads as empty: `T::default()` for an answer that is no `T`).
    ///
    /// Errors: not sent or no answer ([`AdminError::Http`]); a status other than 2xx
    /// ([`AdminError::Refused`], with the first `tppMessages` code, path and text).
    pub async fn send<T: DeserializeOwned + Default>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        now: SystemTime,
    ) -> Result<T, AdminError> {
        let r = self.request(method, path, body, now, None).await?;
        let answer = self.answer(path, r).await?;
        Ok(T::deserialize(&answer).unwrap_or_default())
    }

    /// The JSON body of answer `r` to a request to `path` (`Null` for none).
    ///
    /// Errors: the body cannot be read ([`AdminError::Http`]); a status other than 2xx
    /// ([`AdminError::Refused`], with the first `tppMessages` code, path and text).
    pub async fn answer(&self, path: &str, r: reqwest::Response) -> Result<Value, AdminError> {
        let http = |source| AdminError::Http {
            url: format!("{}{path}", self.base),
            source,
        };
        let status = r.status().as_u16();
        let text = r.text().await.map_err(http)?;
        let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if !(200..300).contains(&status) {
            let first = ErrorBody::deserialize(&json)
                .ok()
                .and_then(|b| b.tpp_messages.into_iter().next());
            let text = match first {
                Some(TppMessage {
                    code,
                    path: Some(p),
                    text: Some(t),
                    ..
                }) => format!("{code} ({p}): {t}"),
                Some(TppMessage {
                    code,
                    text: Some(t),
                    ..
                }) => format!("{code}: {t}"),
                _ => text,
            };
            return Err(AdminError::Refused { status, text });
        }
        Ok(json)
    }
}

/// One line of `sandbox fault list`: id, action, method (or `*`) and path, answers left.
pub fn describe(rule: &FaultRule) -> String {
    let left = match rule.remaining {
        Some(n) => format!("{n} left"),
        None => "until cleared".to_string(),
    };
    let mut line = format!(
        "{}\t{}\t{} {}\t{left}",
        rule.id,
        rule.action,
        rule.method.as_deref().unwrap_or("*"),
        rule.path
    );
    if let Some(st) = rule.status {
        line.push_str(&format!("\t{st} {}", rule.code.as_deref().unwrap_or("")));
    }
    if let Some(ms) = rule.delay_ms {
        line.push_str(&format!("\tdelay {ms} ms"));
    }
    line
}

/// Runs a `sandbox fault` command against the sandbox; returns what to print.
///
/// Errors: [`AdminError`] (no such profile, credentials, the sandbox unreachable or
/// refusing).
pub async fn run(command: FaultCommand, paths: &Paths) -> Result<String, AdminError> {
    match command {
        FaultCommand::Add {
            target,
            action,
            method,
            path,
            psu_id,
            times,
            status,
            code,
            text,
            delay_ms,
        } => {
            let mut body = Map::new();
            body.insert("action".into(), json!(action));
            let mut put = |k: &str, v: Option<Value>| {
                if let Some(v) = v {
                    body.insert(k.into(), v);
                }
            };
            put("method", method.map(Value::from));
            put("path", path.map(Value::from));
            put("psuId", psu_id.map(Value::from));
            put("times", times.map(Value::from));
            put("status", status.map(Value::from));
            put("code", code.map(Value::from));
            put("text", text.map(Value::from));
            put("delayMs", delay_ms.map(Value::from));
            let rule: Value = send_now(
                &target,
                paths,
                Method::POST,
                FAULTS_PATH,
                Some(&Value::Object(body)),
            )
            .await?;
            Ok(serde_json::to_string_pretty(&rule).unwrap_or_default())
        }
        FaultCommand::List { target } => {
            let list: FaultList = send_now(&target, paths, Method::GET, FAULTS_PATH, None).await?;
            let rules = list.faults;
            if rules.is_empty() {
                return Ok("no fault rules".into());
            }
            Ok(rules.iter().map(describe).collect::<Vec<_>>().join("\n"))
        }
        FaultCommand::Clear {
            target,
            id: Some(id),
        } => {
            let path = format!(
                "{FAULTS_PATH}/{}",
                percent_encoding::utf8_percent_encode(&id, percent_encoding::NON_ALPHANUMERIC)
            );
            send_now::<Value>(&target, paths, Method::DELETE, &path, None).await?;
            Ok(format!("removed fault rule {id}"))
        }
        FaultCommand::Clear { target, id: None } => {
            let r: FaultsCleared =
                send_now(&target, paths, Method::DELETE, FAULTS_PATH, None).await?;
            Ok(cleared(r.cleared))
        }
    }
}

/// What `sandbox fault clear` says: `cleared 1 fault rule`, `cleared 3 fault rules`.
fn cleared(n: u64) -> String {
    format!("cleared {n} fault rule{}", if n == 1 { "" } else { "s" })
}

/// Where a console running on the embedded profile `profile` serves its sandbox:
/// `http://<listen address>:<sandbox_port>` (127.0.0.1:8088 by default).
fn embedded_url(profile: &crate::profile::Profile) -> String {
    let host = match profile.listen {
        Some(std::net::IpAddr::V6(a)) => format!("[{a}]"),
        Some(a) => a.to_string(),
        None => "127.0.0.1".to_string(),
    };
    format!("http://{host}:{}", profile.sandbox_port())
}

/// Sends `method path` (with JSON `body`) to the sandbox of `target`, signed now
/// ([`SandboxAdmin::send`]); returns the answer as a `T` (`Value`: the JSON as sent).
///
/// Errors: those of [`SandboxAdmin::of`] and [`SandboxAdmin::send`].
async fn send_now<T: DeserializeOwned + Default>(
    target: &FaultTarget,
    paths: &Paths,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Result<T, AdminError> {
    SandboxAdmin::of(target, paths)?
        .send(method, path, body, SystemTime::now())
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_lines_name_id_action_path_and_answers_left() {
        let r = json!({"id": "f1", "action": "error", "method": "GET", "path": "/v1/accounts*",
                       "status": 503, "code": "SERVICE_BLOCKED", "remaining": 2});
        let r: FaultRule = serde_json::from_value(r).unwrap();
        assert_eq!(
            describe(&r),
            "f1\terror\tGET /v1/accounts*\t2 left\t503 SERVICE_BLOCKED"
        );
        let r = json!({"id": "f2", "action": "drop", "path": "*", "remaining": null});
        let r: FaultRule = serde_json::from_value(r).unwrap();
        assert_eq!(describe(&r), "f2\tdrop\t* *\tuntil cleared");
    }

    #[test]
    fn clearing_counts_in_words() {
        assert_eq!(cleared(1), "cleared 1 fault rule");
        assert_eq!(cleared(0), "cleared 0 fault rules");
        assert_eq!(cleared(2), "cleared 2 fault rules");
    }
}
