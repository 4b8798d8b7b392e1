//! The console's engine: one active profile with its credentials, target base URL, the
//! embedded sandbox (for `embedded` targets), the SCA redirect listener and the session state
//! learned from SCA.

use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::mpsc;

use super::{ClientError, Exchange, PreparedRequest, RequestContext, prepare, send_for_profile};
use crate::cert::generate::{TppCertSpec, write_set};
use crate::cert::{CertError, Credentials};
use crate::profile::{Paths, Profile, SessionState, Target};
use crate::redirect::RedirectListener;
use crate::sandbox::{SandboxConfig, SandboxHandle};
use crate::xs2a::operations::Operation;
use crate::xs2a::redirect::ScaCallback;

/// Loads the profile's certificate and key; for an `embedded` profile without them, the
/// generated test certificate in `<data>/certs/<slug>.pem` (created on first use, key 0600).
///
/// Errors: files missing or unreadable, key not matching the certificate (all named).
pub fn ensure_credentials(profile: &Profile, paths: &Paths) -> Result<Credentials, ClientError> {
    let setup = |e: CertError| ClientError::Setup(format!("profile {:?}: {e}", profile.name));
    match (&profile.certificate, &profile.key) {
        (Some(c), Some(k)) => {
            Credentials::load(&profile.resolve(c), &profile.resolve(k)).map_err(setup)
        }
        (None, None) if profile.target == Target::Embedded => {
            let dir = paths.certs_dir();
            let stem = profile.slug();
            let cert = dir.join(format!("{stem}.pem"));
            let key = dir.join(format!("{stem}.key"));
            if !(cert.exists() && key.exists()) {
                let spec = TppCertSpec {
                    roles: profile.roles.clone(),
                    ..TppCertSpec::default()
                };
                write_set(&dir, &stem, &spec).map_err(setup)?;
            }
            Credentials::load(&cert, &key).map_err(setup)
        }
        _ => Err(ClientError::Setup(format!(
            "profile {:?} needs both certificate and key (only an embedded profile may omit them)",
            profile.name
        ))),
    }
}

/// A running profile.
pub struct Engine {
    pub profile: Profile,
    pub paths: Paths,
    pub session: SessionState,
    pub credentials: Arc<Credentials>,
    /// Base URL of the target, without trailing slash.
    pub base_url: String,
    pub http: reqwest::Client,
    /// The TPP-Redirect-URI sent with every request.
    pub redirect_uri: String,
    /// Why the redirect listener could not start, if it could not.
    pub listener_error: Option<String>,
    listener: Option<RedirectListener>,
    sandbox: Option<SandboxHandle>,
    /// The embedded sandbox's clock: requests are signed at its time, so advancing it
    /// (`sandbox.clock.advance`) keeps the Date check passing.
    sandbox_clock: Option<crate::sandbox::Clock>,
    /// Every exchange sent through [`Engine::send`] (Signature redacted); `None` when the
    /// history file cannot be opened (the reason is in `history_error`).
    pub history: Option<std::sync::Arc<std::sync::Mutex<super::history::History>>>,
    pub history_error: Option<String>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("profile", &self.profile.name)
            .field("base_url", &self.base_url)
            .field("redirect_uri", &self.redirect_uri)
            .finish()
    }
}

impl Engine {
    /// Starts `profile`: loads or generates credentials, starts the embedded sandbox on a
    /// free loopback port for `embedded` targets, starts the redirect listener, and loads the
    /// session state (creating a TPP-Session-ID when there is none).
    pub async fn start(profile: Profile, paths: Paths) -> Result<Engine, ClientError> {
        let credentials = Arc::new(ensure_credentials(&profile, &paths)?);
        let http = super::tls::http_client_for(&profile)?;
        let (base_url, sandbox, sandbox_clock) = match &profile.target {
            Target::Embedded => {
                let clock = crate::sandbox::Clock::system();
                let handle = crate::sandbox::spawn(
                    std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
                    SandboxConfig {
                        clock: clock.clone(),
                        storage: crate::sandbox::db::Storage::File(
                            crate::sandbox::db::default_file(&paths.data),
                        ),
                        ..SandboxConfig::default()
                    },
                )
                .await
                .map_err(|e| ClientError::Setup(format!("embedded sandbox: {e}")))?;
                (handle.base_url.clone(), Some(handle), Some(clock))
            }
            Target::Url(u) => (u.clone(), None, None),
        };
        let (listener, listener_error) =
            match RedirectListener::start(profile.tpp_redirect_uri.as_deref()).await {
                Ok(l) => (Some(l), None),
                Err(e) => (None, Some(e.to_string())),
            };
        let redirect_uri = match (&listener, &profile.tpp_redirect_uri) {
            (Some(l), _) => l.redirect_uri.clone(),
            (None, Some(u)) => u.clone(),
            (None, None) => "http://127.0.0.1/callback".to_string(),
        };
        let session_file = paths.session_file(&profile.slug());
        let mut session = SessionState::load(&session_file)
            .map_err(|e| ClientError::Setup(format!("session state: {e}")))?;
        if session.tpp_session_id.is_none() {
            session.tpp_session_id = Some(uuid::Uuid::new_v4().to_string());
            session
                .save(&session_file)
                .map_err(|e| ClientError::Setup(format!("session state: {e}")))?;
        }
        if let (Some(l), Some(id)) = (&listener, &session.tpp_session_id) {
            l.expect_session(id);
        }
        let (history, history_error) =
            match super::history::History::open(&paths.data.join("history.sqlite3")) {
                Ok(h) => (Some(std::sync::Arc::new(std::sync::Mutex::new(h))), None),
                Err(e) => (None, Some(format!("history: {e}"))),
            };
        Ok(Engine {
            history,
            history_error,
            profile,
            paths,
            session,
            credentials,
            base_url,
            http,
            redirect_uri,
            listener_error,
            listener,
            sandbox,
            sandbox_clock,
        })
    }

    /// Builds and signs the request for `op` now.
    pub fn prepare(
        &self,
        op: &Operation,
        params: &[(String, String)],
        body: Option<&str>,
    ) -> Result<PreparedRequest, ClientError> {
        let req = prepare(
            op,
            params,
            body,
            &RequestContext {
                profile: &self.profile,
                session: &self.session,
                credentials: &self.credentials,
                base_url: &self.base_url,
                redirect_uri: &self.redirect_uri,
                now: self.now(),
            },
        )?;
        if let (Some(l), Some(id)) = (&self.listener, req.header("TPP-Session-ID")) {
            l.expect_session(id);
        }
        Ok(req)
    }

    /// The signing time: the embedded sandbox's clock, or the system clock for remote targets.
    pub fn now(&self) -> SystemTime {
        self.sandbox_clock
            .as_ref()
            .map(|c| c.now())
            .unwrap_or_else(SystemTime::now)
    }

    /// Sends a prepared request and records the exchange in the history.
    pub async fn send(&self, req: &PreparedRequest) -> Result<Exchange, ClientError> {
        let exchange = send_for_profile(&self.http, req, Some(&self.profile.name)).await?;
        self.record(req, &exchange);
        Ok(exchange)
    }

    /// Records an exchange in the history (errors are ignored: history is best effort and
    /// never blocks a send). Returns the entry id.
    pub fn record(&self, req: &PreparedRequest, exchange: &Exchange) -> Option<i64> {
        let h = self.history.as_ref()?;
        let h = h.lock().ok()?;
        h.record(&self.profile.name, &req.params, req, exchange)
            .ok()
    }

    /// Waits for the next accepted SCA callback (`None` without a listener).
    pub async fn next_callback(&mut self) -> Option<ScaCallback> {
        match self.listener.as_mut() {
            Some(l) => l.next().await,
            None => None,
        }
    }

    /// Takes the callback receiver, for an event loop that selects over several sources.
    pub fn take_callback_receiver(&mut self) -> Option<mpsc::UnboundedReceiver<ScaCallback>> {
        self.listener.as_mut().and_then(|l| l.take_receiver())
    }

    /// Applies an SCA outcome: on success stores PSU-ID, PSU-Corporate-ID, context and
    /// TPP-Session-ID, persisted atomically. Returns a one-line summary for the user.
    pub fn apply_callback(&mut self, cb: &ScaCallback) -> Result<String, ClientError> {
        match cb {
            ScaCallback::Success(s) => {
                self.session.psu_id = Some(s.psu_id.clone());
                self.session.psu_corporate_id = s.psu_corporate_id.clone();
                self.session.context = Some(s.context);
                self.session.tpp_session_id = Some(s.tpp_session_id.clone());
                let now = crate::cert::unix_seconds(SystemTime::now());
                self.session.sca_completed_at = Some(now);
                // Consent is gathered during SCA (bank-offered consent, rule 11): each
                // completed SCA (re)starts its 180 days.
                self.session.consent_at = Some(now);
                self.save_session()?;
                Ok(format!(
                    "SCA complete: PSU-ID {}{} ({} context); send the request again",
                    s.psu_id,
                    s.psu_corporate_id
                        .as_ref()
                        .map(|c| format!(", PSU-Corporate-ID {c}"))
                        .unwrap_or_default(),
                    s.context.as_str()
                ))
            }
            ScaCallback::Failure(f) => Ok(format!(
                "SCA failed: {} {} from {}: {}",
                f.status, f.code, f.system, f.message
            )),
        }
    }

    /// Forgets the PSU learned from SCA and starts a new TPP-Session-ID.
    pub fn reset_session(&mut self) -> Result<(), ClientError> {
        self.session = SessionState {
            tpp_session_id: Some(uuid::Uuid::new_v4().to_string()),
            ..SessionState::default()
        };
        if let (Some(l), Some(id)) = (&self.listener, &self.session.tpp_session_id) {
            l.expect_session(id);
        }
        self.save_session()
    }

    fn save_session(&self) -> Result<(), ClientError> {
        self.session
            .save(&self.paths.session_file(&self.profile.slug()))
            .map_err(|e| ClientError::Setup(format!("saving session state: {e}")))
    }

    /// Stops the embedded sandbox and the listener.
    pub async fn shutdown(mut self) {
        self.listener.take();
        if let Some(s) = self.sandbox.take() {
            s.shutdown().await;
        }
    }
}
