//! The console's engine: one active profile with its credentials, target base URL, the
//! local ASPSP (for `embedded` targets), the SCA redirect listener and the session state
//! learned from SCA.
//!
//! The engine does not know the sandbox: an `embedded` profile's ASPSP is started through a
//! [`LocalAspspStarter`] passed to [`Engine::start`]. The composition layer
//! ([`crate::embedded`]) implements it with the embedded sandbox.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::mpsc;

use super::{ClientError, Exchange, PreparedRequest, RequestContext, prepare};
use crate::cert::generate::{TppCertSpec, write_set};
use crate::cert::{CertError, Credentials};
use crate::client::import::ImportedRequest;
use crate::profile::{Paths, Profile, SessionState, Target};
use crate::redirect::RedirectListener;
use crate::xs2a::operations::Operation;
use crate::xs2a::redirect::ScaCallback;

/// The SCA flow types and the history write error live with the one sender
/// ([`super::sender`]); re-exported here for the engine's callers.
pub use super::sender::{HistoryWriteError, PendingSca, ScaFlow, StatusAfterSca};

/// A boxed future that may move between threads.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A running local ASPSP that an `embedded` profile talks to (the embedded sandbox, started
/// by [`crate::embedded::EmbeddedSandbox`]).
pub trait LocalAspsp: Send + Sync {
    /// Its base URL, e.g. `http://127.0.0.1:8088` (no trailing slash).
    fn base_url(&self) -> &str;

    /// Its clock now: the engine signs requests at this time, so that advancing the ASPSP's
    /// clock keeps its `Date` check passing.
    fn now(&self) -> SystemTime;

    /// Whether it is the sandbox of another psd2-console process serving the same data
    /// directory (a command beside the console, [`crate::embedded::BesideConsole`]): then
    /// [`LocalAspsp::shutdown`] leaves it running, and the engine's callback listener takes
    /// a free port (the console holds the profile's).
    fn shared(&self) -> bool {
        false
    }

    /// Its clock now as the TPP holding `certificate` sees it (a sandbox keeps one clock per
    /// TPP); by default [`LocalAspsp::now`].
    fn now_for(&self, certificate: &crate::cert::Certificate) -> SystemTime {
        let _ = certificate;
        self.now()
    }

    /// The operator token of the local ASPSP (its operator plane, for the monitor), if it
    /// has one.
    fn operator_token(&self) -> Option<&str> {
        None
    }

    /// Stops it; open requests may finish.
    fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()>;
}

/// Starts the local ASPSP of an `embedded` profile; [`Engine::start`] calls it once.
pub trait LocalAspspStarter: Send + Sync {
    /// Starts a local ASPSP listening on `addr` (port 0: any free port) whose state lives
    /// under `paths` (e.g. the data directory); its links name `addr`.
    ///
    /// Errors: it cannot start (port taken, address not of this machine, storage
    /// unreadable); the engine reports it as [`ClientError::Setup`] `embedded sandbox: ...`,
    /// naming the profile field to change for a taken port (an `AddrInUse` error with a
    /// message of its own says who holds the port, e.g. `a psd2-console serving another
    /// data directory`).
    fn start<'a>(
        &'a self,
        paths: &'a Paths,
        addr: SocketAddr,
    ) -> BoxFuture<'a, std::io::Result<Box<dyn LocalAspsp>>>;

    /// [`LocalAspspStarter::start`] over HTTPS (a profile's `sandbox_tls`): the server
    /// certificate issued by `ca` (the data directory's sandbox CA, which the engine's client
    /// trusts), a client certificate asked for but optional (the browser on the SCA pages
    /// has none; the console presents its QWAC). The default refuses: a starter that
    /// cannot serve TLS says so rather than falling back to plain HTTP.
    ///
    /// Errors: as [`LocalAspspStarter::start`]; TLS setup errors as `io::Error`s.
    fn start_tls<'a>(
        &'a self,
        paths: &'a Paths,
        addr: SocketAddr,
        ca: crate::cert::ca::SandboxCa,
    ) -> BoxFuture<'a, std::io::Result<Box<dyn LocalAspsp>>> {
        let _ = (paths, addr, ca);
        Box::pin(async {
            Err(std::io::Error::other(
                "this local ASPSP cannot serve TLS (sandbox_tls)",
            ))
        })
    }
}

/// What `sandbox_tls = true` sets up for an embedded profile ([`embedded_tls`]).
struct EmbeddedTls {
    /// The data directory's sandbox CA, for the sandbox.
    ca: crate::cert::ca::SandboxCa,
    /// Its certificate (PEM), trusted by the console's client.
    ca_pem: String,
    /// The QWAC the console presents: certificate and key files.
    qwac: (std::path::PathBuf, std::path::PathBuf),
}

/// The sandbox CA of `paths` and the QWAC of `profile`: its `client_certificate` and
/// `client_key`, or else `<data>/certs/<slug>-qwac.pem` and `.key`, issued by the sandbox CA
/// on first use for the organisation (organizationIdentifier, name, country) of the signing
/// certificate `credentials` with the profile's roles.
///
/// Errors: the CA or the QWAC cannot be read, made or written.
fn embedded_tls(
    profile: &Profile,
    paths: &Paths,
    credentials: &Credentials,
) -> Result<EmbeddedTls, ClientError> {
    let setup =
        |e: String| ClientError::Setup(format!("profile {:?}: sandbox_tls: {e}", profile.name));
    let ca = crate::cert::ca::SandboxCa::load_or_create(&paths.data)
        .map_err(|e| setup(format!("sandbox CA: {e}")))?;
    let ca_pem = ca.cert_pem().to_string();
    let qwac = match (&profile.client_certificate, &profile.client_key) {
        (Some(c), Some(k)) => (profile.resolve(c), profile.resolve(k)),
        _ => {
            let dir = paths.certs_dir();
            let cert = dir.join(format!("{}-qwac.pem", profile.slug()));
            let key = dir.join(format!("{}-qwac.key", profile.slug()));
            if !(cert.exists() && key.exists()) {
                let subject = &credentials.certificate.subject;
                let attr = |oid: &str| {
                    subject
                        .attributes
                        .iter()
                        .find(|a| a.oid == oid)
                        .map(|a| a.value.clone())
                };
                let default = TppCertSpec::default();
                let spec = TppCertSpec {
                    organisation: attr("2.5.4.10").unwrap_or(default.organisation.clone()),
                    organisation_id: attr("2.5.4.97").unwrap_or(default.organisation_id.clone()),
                    country: attr("2.5.4.6").unwrap_or(default.country.clone()),
                    roles: profile.roles.clone(),
                    qwac: true,
                    ..default
                };
                let (cert_pem, key_pem) = ca
                    .issue_tpp(&spec)
                    .map_err(|e| setup(format!("QWAC: {e}")))?;
                std::fs::create_dir_all(&dir)
                    .map_err(|e| setup(format!("{}: {e}", dir.display())))?;
                crate::fsutil::write_atomic(&key, key_pem.as_bytes(), true)
                    .map_err(|e| setup(format!("{}: {e}", key.display())))?;
                crate::fsutil::write_atomic(&cert, cert_pem.as_bytes(), false)
                    .map_err(|e| setup(format!("{}: {e}", cert.display())))?;
            }
            (cert, key)
        }
    };
    Ok(EmbeddedTls { ca, ca_pem, qwac })
}

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
    /// The profile it runs (with `listen` and ports as started).
    pub profile: Profile,
    /// The home: data and config directories.
    pub paths: Paths,
    /// The session state of the profile (consent, PSU-ID, context), saved in the home.
    pub session: SessionState,
    /// The TPP certificate and key that sign every request.
    pub credentials: Arc<Credentials>,
    /// Base URL of the target, without trailing slash.
    pub base_url: String,
    /// The HTTP client of the profile (its TLS settings and timeouts).
    pub http: reqwest::Client,
    /// What the TLS handshakes of `http` showed (issue 21): the TLS session of a response.
    pub tls: super::tls_session::TlsRecorder,
    /// The TPP-Redirect-URI sent with every request.
    pub redirect_uri: String,
    /// Why the redirect listener could not start, if it could not.
    pub listener_error: Option<String>,
    listener: Option<RedirectListener>,
    /// The local ASPSP of an `embedded` profile: requests are signed at its clock's time, so
    /// advancing it (`sandbox.clock.advance`) keeps the Date check passing.
    local: Option<Box<dyn LocalAspsp>>,
    /// Every exchange sent through [`Engine::send`] (Signature redacted); `None` when the
    /// history file cannot be opened (the reason is in `history_error`).
    pub history: Option<std::sync::Arc<std::sync::Mutex<super::history::History>>>,
    /// Why the history file could not be opened, if it could not.
    pub history_error: Option<String>,
    /// Whether the local ASPSP and the callback listener were started
    /// ([`Engine::network_started`]).
    network_started: bool,
    /// SCA flows started by responses with a `scaRedirect` and waiting for their callback,
    /// oldest first ([`Engine::expect_sca`]).
    pending_sca: std::sync::Mutex<Vec<PendingSca>>,
}

/// What applying an SCA callback did ([`Engine::apply_sca_callback`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaApplied {
    /// One line for the user.
    pub summary: String,
    /// The flow the callback completed (`None` when none was waiting).
    pub flow: Option<PendingSca>,
}

/// How a resource stands after SCA: the one verdict of [`crate::xs2a::status`].
pub use crate::xs2a::status::Verdict;

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
    /// Starts `profile`: loads or generates credentials, starts the local ASPSP with `local`
    /// for `embedded` targets (the console passes [`crate::embedded::EmbeddedSandbox`], or
    /// calls [`crate::embedded::start_engine`]), starts the redirect listener, and loads the
    /// session state (creating a TPP-Session-ID when there is none).
    ///
    /// Errors: [`ClientError::Setup`] for the data directory, credentials, the local ASPSP
    /// and the session state; those of the HTTP client.
    pub async fn start(
        profile: Profile,
        paths: Paths,
        local: &dyn LocalAspspStarter,
    ) -> Result<Engine, ClientError> {
        let (mut engine, tls_ca) = Engine::start_parts(profile, paths)?;
        let network = start_network(&engine.profile, &engine.paths, local, tls_ca).await?;
        engine.adopt_network(RestartedNetwork(network));
        Ok(engine)
    }

    /// [`Engine::start`] without the network: credentials, HTTP client, session state and
    /// history, but neither the local ASPSP nor the callback listener
    /// ([`Engine::network_started`] is false). The console draws its first frame with it,
    /// then starts the network beside its event loop ([`Engine::network_restart`], then
    /// [`Engine::adopt_network`]), so the embedded sandbox (its SQLite, seed data and HTTP
    /// server) does not delay the first frame (issue 23). Until then
    /// `base_url` is the address the local ASPSP will listen on
    /// (`listen:sandbox_port`; port 0 until a free one is taken) and the
    /// TPP-Redirect-URI the profile's or a placeholder.
    ///
    /// Errors: as [`Engine::start`], but none of the local ASPSP's.
    pub fn start_offline(profile: Profile, paths: Paths) -> Result<Engine, ClientError> {
        Engine::start_parts(profile, paths).map(|(engine, _)| engine)
    }

    /// Whether the local ASPSP (for an `embedded` target) and the callback listener were
    /// started: false after [`Engine::start_offline`] and [`Engine::take_network`] until
    /// [`Engine::adopt_network`].
    pub fn network_started(&self) -> bool {
        self.network_started
    }

    /// Everything of [`Engine::start`] but the network, and the sandbox CA of a
    /// `sandbox_tls` profile for it.
    fn start_parts(
        profile: Profile,
        paths: Paths,
    ) -> Result<(Engine, Option<crate::cert::ca::SandboxCa>), ClientError> {
        paths
            .ensure_data_dir()
            .map_err(|e| ClientError::Setup(e.to_string()))?;
        let credentials = Arc::new(ensure_credentials(&profile, &paths)?);
        let embedded_tls = match profile.target == Target::Embedded && profile.sandbox_tls {
            true => Some(embedded_tls(&profile, &paths, &credentials)?),
            false => None,
        };
        let (http, tls) = match &embedded_tls {
            Some(t) => {
                let mut p = profile.clone();
                p.client_certificate = Some(t.qwac.0.clone());
                p.client_key = Some(t.qwac.1.clone());
                super::tls::http_client_recording_with(&p, Some(t.ca_pem.as_bytes()))?
            }
            None => super::tls::http_client_recording(&profile)?,
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
        let (history, history_error) = match super::history::History::open(&paths.history_file()) {
            Ok(h) => (Some(std::sync::Arc::new(std::sync::Mutex::new(h))), None),
            Err(e) => (None, Some(format!("history: {e}"))),
        };
        let base_url = match &profile.target {
            Target::Embedded => {
                let scheme = if profile.sandbox_tls { "https" } else { "http" };
                let addr = SocketAddr::new(profile.listen_address(), profile.sandbox_port());
                format!("{scheme}://{addr}")
            }
            Target::Url(u) => u.clone(),
        };
        let redirect_uri = profile
            .tpp_redirect_uri
            .clone()
            .unwrap_or_else(|| "http://127.0.0.1/callback".to_string());
        let engine = Engine {
            pending_sca: std::sync::Mutex::default(),
            history,
            history_error,
            profile,
            paths,
            session,
            credentials,
            base_url,
            http,
            tls,
            redirect_uri,
            listener_error: None,
            listener: None,
            local: None,
            network_started: false,
        };
        Ok((engine, embedded_tls.map(|t| t.ca)))
    }

    /// The room-mode address the embedded sandbox and the callback listener listen on
    /// (the profile's `listen` or `--listen`), `None` on 127.0.0.1.
    pub fn room_address(&self) -> Option<std::net::IpAddr> {
        self.profile.room_address()
    }

    /// Whether this engine uses the embedded sandbox of another psd2-console process on the
    /// same data directory (a command beside the console, [`LocalAspsp::shared`]): its
    /// links outlive this engine.
    pub fn shares_sandbox(&self) -> bool {
        self.local.as_ref().is_some_and(|l| l.shared())
    }

    /// Takes the local ASPSP and the callback listener out of the engine, for a profile
    /// switch: [`StoppedNetwork::stop`] frees their ports, so the next profile can listen on
    /// the same ones. The engine sends nothing meanwhile; [`Engine::restart_network`] starts
    /// them again (the same ports) when the next profile could not start.
    pub fn take_network(&mut self) -> StoppedNetwork {
        self.network_started = false;
        StoppedNetwork {
            listener: self.listener.take(),
            local: self.local.take(),
        }
    }

    /// Starts the local ASPSP and the callback listener again after
    /// [`Engine::take_network`], on the profile's ports, and arms the listener again for
    /// the SCA flows still waiting: [`Engine::network_restart`] then
    /// [`Engine::adopt_network`], awaited in place.
    ///
    /// Errors: as [`Engine::start`] for the local ASPSP.
    pub async fn restart_network(
        &mut self,
        local: impl LocalAspspStarter + 'static,
    ) -> Result<(), ClientError> {
        let network = self.network_restart(local).await?;
        self.adopt_network(network);
        Ok(())
    }

    /// The start of the local ASPSP and the callback listener again after
    /// [`Engine::take_network`], on the profile's ports, as a future that owns what it
    /// needs (the profile, the paths, `local`) and borrows no engine: the console spawns it
    /// and keeps handling keys and drawing while it runs, then hands its outcome to
    /// [`Engine::adopt_network`] (as the engine shutdown is spawned).
    ///
    /// Errors: as [`Engine::start`] for the local ASPSP.
    pub fn network_restart(
        &self,
        local: impl LocalAspspStarter + 'static,
    ) -> BoxFuture<'static, Result<RestartedNetwork, ClientError>> {
        let profile = self.profile.clone();
        let paths = self.paths.clone();
        let credentials = self.credentials.clone();
        Box::pin(async move {
            let tls_ca = match profile.target == Target::Embedded && profile.sandbox_tls {
                true => Some(embedded_tls(&profile, &paths, &credentials)?.ca),
                false => None,
            };
            start_network(&profile, &paths, &local, tls_ca)
                .await
                .map(RestartedNetwork)
        })
    }

    /// Makes `network` ([`Engine::network_restart`]) the engine's local ASPSP and callback
    /// listener (base URL, TPP-Redirect-URI, listener error with them), and arms the
    /// listener again for the SCA flows still waiting.
    pub fn adopt_network(&mut self, network: RestartedNetwork) {
        let network = network.0;
        self.base_url = network.base_url;
        self.redirect_uri = network.redirect_uri;
        self.listener_error = network.listener_error;
        self.listener = network.listener;
        self.local = network.local;
        self.network_started = true;
        if let Some(l) = &self.listener {
            for flow in self.pending_sca() {
                l.await_callback(&flow.tpp_session_id);
            }
        }
    }

    /// What signing a request of this engine needs now: profile, session, credentials,
    /// target and TPP-Redirect-URI, at [`Engine::now`].
    pub fn request_context(&self) -> RequestContext<'_> {
        RequestContext {
            profile: &self.profile,
            session: &self.session,
            credentials: &self.credentials,
            base_url: &self.base_url,
            redirect_uri: &self.redirect_uri,
            now: self.now(),
        }
    }

    /// Builds and signs the request for `op` now.
    pub fn prepare(
        &self,
        op: &Operation,
        params: &[(String, String)],
        body: Option<&str>,
    ) -> Result<PreparedRequest, ClientError> {
        prepare(op, params, body, &self.request_context())
    }

    /// [`Engine::prepare`] with any body ([`super::BodyInput`], e.g. raw bytes).
    ///
    /// Errors: a path parameter is missing, or a JSON body is not JSON.
    pub fn prepare_with(
        &self,
        op: &Operation,
        params: &[(String, String)],
        body: super::BodyInput<'_>,
    ) -> Result<PreparedRequest, ClientError> {
        super::prepare_with(op, params, body, &self.request_context())
    }

    /// [`Engine::prepare_with`] for a request about to be sent by the `send` command or the
    /// console: its `TPP-Redirect-URI` carries `sca-ref=<its X-Request-ID>`
    /// ([`crate::redirect::SCA_REF_PARAM`]), so the callback of an SCA it starts names that
    /// SCA (the ASPSP appends the redirect parameters and keeps the TPP's own). A
    /// `TPP-Redirect-URI` or `X-Request-ID` typed as a parameter wins.
    ///
    /// Errors: a path parameter is missing, or a JSON body is not JSON.
    pub fn prepare_to_send(
        &self,
        op: &Operation,
        params: &[(String, String)],
        body: super::BodyInput<'_>,
    ) -> Result<PreparedRequest, ClientError> {
        let given = |name: &str| {
            params
                .iter()
                .find(|(k, v)| k.eq_ignore_ascii_case(name) && !v.is_empty())
                .map(|(_, v)| v.clone())
        };
        let request_id = given(crate::xs2a::headers::X_REQUEST_ID)
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let redirect_uri = crate::redirect::with_sca_ref(&self.redirect_uri, &request_id);
        let mut with_id = params.to_vec();
        if given(crate::xs2a::headers::X_REQUEST_ID).is_none() {
            with_id.retain(|(k, _)| !k.eq_ignore_ascii_case(crate::xs2a::headers::X_REQUEST_ID));
            with_id.push((crate::xs2a::headers::X_REQUEST_ID.to_string(), request_id));
        }
        let mut ctx = self.request_context();
        ctx.redirect_uri = &redirect_uri;
        let mut req = super::prepare_with(op, &with_id, body, &ctx)?;
        req.params = params.to_vec();
        Ok(req)
    }

    /// The signing time: the local ASPSP's clock, or the system clock for remote targets.
    pub fn now(&self) -> SystemTime {
        self.local.as_ref().map_or_else(SystemTime::now, |l| {
            l.now_for(&self.credentials.certificate)
        })
    }

    /// The operator token of the embedded sandbox ([`LocalAspsp::operator_token`]); `None`
    /// for a remote target.
    pub fn operator_token(&self) -> Option<&str> {
        self.local.as_ref().and_then(|l| l.operator_token())
    }

    /// Sends a prepared request, records the exchange in the history, and when the
    /// response carries a `scaRedirect` arms the callback listener for that flow
    /// ([`Engine::expect_sca`]). A failing history write does not fail the send: see
    /// [`Engine::send_recorded`] to learn about it.
    pub async fn send(&self, req: &PreparedRequest) -> Result<Exchange, ClientError> {
        self.send_recorded(req).await.map(|(ex, _)| ex)
    }

    /// [`Engine::send`], also returning the history outcome: the new entry id, or why the
    /// exchange was not stored (a sentence naming the history path; the CLI prints it as a
    /// warning, the console shows it in its status line).
    pub async fn send_recorded(
        &self,
        req: &PreparedRequest,
    ) -> Result<(Exchange, Result<i64, HistoryWriteError>), ClientError> {
        let sent = self.send_full(req.clone()).await?;
        Ok((sent.exchange, sent.recorded))
    }

    /// The one sender ([`super::sender::Sender::send`]) for this engine: sends, records,
    /// checks the response signature, and arms the SCA flow a `scaRedirect` started.
    ///
    /// Errors: those of [`super::send_for_profile`].
    pub async fn send_full(
        &self,
        req: PreparedRequest,
    ) -> Result<super::sender::Sent, ClientError> {
        let sent = self.sender().send(req).await?;
        if let Some(flow) = &sent.sca {
            self.arm(flow.clone());
        }
        Ok(sent)
    }

    /// An owned [`super::sender::Sender`] for this engine, to send off the caller's task (the
    /// TUI); arm what it returns with [`Engine::arm`].
    pub fn sender(&self) -> super::sender::Sender {
        super::sender::Sender {
            http: self.http.clone(),
            tls: self.tls.clone(),
            profile: self.profile.clone(),
            history: self.history.clone(),
            history_error: self.history_error.clone(),
            history_path: self.paths.history_file(),
            tpp_session_id: self.session.tpp_session_id.clone(),
        }
    }

    /// Records an exchange in the history and returns the entry id. History is best effort
    /// and never blocks a send; the error says why nothing was stored: the history could not
    /// be opened ([`Engine::history_error`]) or the write failed (e.g. a read-only disk).
    ///
    /// Errors: [`HistoryWriteError`], one sentence naming the history path.
    pub fn record(
        &self,
        req: &PreparedRequest,
        exchange: &Exchange,
    ) -> Result<i64, HistoryWriteError> {
        self.sender().record(req, exchange)
    }

    /// Notes that `exchange` (the answer to `req`) started an SCA at `sca_redirect` and
    /// arms the callback listener for it: one callback with the request's `TPP-Session-ID`
    /// is then accepted. [`Engine::send`] calls this; a front end that sends by itself (the
    /// TUI) calls it when a response carries a `scaRedirect`. Returns the flow.
    pub(crate) fn expect_sca(
        &self,
        req: &PreparedRequest,
        exchange: &Exchange,
        sca_redirect: &str,
    ) -> Option<PendingSca> {
        let mut flow = self.sender().sca_started(req, exchange)?;
        flow.sca_redirect = sca_redirect.to_string();
        self.arm(flow.clone());
        Some(flow)
    }

    /// [`Engine::expect_sca`] for a front end that kept only the request URL and the
    /// response's JSON body (`None` when not at hand): the session's current
    /// `TPP-Session-ID` is the flow's.
    pub fn expect_sca_at(
        &self,
        url: &str,
        body: Option<&serde_json::Value>,
        sca_redirect: &str,
    ) -> Option<PendingSca> {
        let session = self.session.tpp_session_id.clone()?;
        let flow = PendingSca::from_response(&session, url, body, sca_redirect);
        self.arm(flow.clone());
        Some(flow)
    }

    /// Arms the listener for `flow` (its `TPP-Session-ID` and `sca-ref`) and remembers it
    /// (see [`Engine::expect_sca`]).
    pub fn arm(&self, flow: PendingSca) {
        if let Some(l) = &self.listener {
            l.await_flow(&flow.tpp_session_id, flow.sca_ref.as_deref());
        }
        if let Ok(mut p) = self.pending_sca.lock() {
            p.push(flow);
        }
    }

    /// Gives up waiting for `flow`'s callback (Esc on the console's SCA prompt): the listener
    /// rejects it from now on and no other SCA's callback is taken for it. Returns whether it
    /// was waiting.
    pub fn abandon_sca(&self, flow: &PendingSca) -> bool {
        if let Some(l) = &self.listener {
            l.forget_flow(&flow.tpp_session_id, flow.sca_ref.as_deref());
        }
        let Ok(mut p) = self.pending_sca.lock() else {
            return false;
        };
        match p
            .iter()
            .position(|f| f.tpp_session_id == flow.tpp_session_id && f.sca_ref == flow.sca_ref)
        {
            Some(i) => {
                p.remove(i);
                true
            }
            None => false,
        }
    }

    /// The SCA flows waiting for their callback, oldest first.
    pub fn pending_sca(&self) -> Vec<PendingSca> {
        self.pending_sca
            .lock()
            .map(|p| p.clone())
            .unwrap_or_default()
    }

    /// Reads the status of the resource whose SCA `flow` completed (GET its status path,
    /// signed like any request): for the CLI's `send --wait-sca` and the console's hint after
    /// a payment, basket or consent SCA. The creating request is never sent again.
    ///
    /// Errors: `flow` is an AIS read or its status path is unknown
    /// ([`ClientError::Params`]), or the GET fails.
    pub async fn status_after_sca(&self, flow: &PendingSca) -> Result<StatusAfterSca, ClientError> {
        let req = self.prepare_status_read(flow)?;
        let (st, _) = self.sender().read_status(flow, req).await?;
        Ok(st)
    }

    /// The signed GET of `flow`'s status path, for [`super::sender::Sender::read_status`].
    ///
    /// Errors: `flow` is an AIS read or its status path is unknown
    /// ([`ClientError::Params`]).
    pub fn prepare_status_read(&self, flow: &PendingSca) -> Result<PreparedRequest, ClientError> {
        let Some(path) = &flow.status_path else {
            return Err(ClientError::Params(format!(
                "no status to read after the SCA of this {}",
                flow.flow.noun()
            )));
        };
        let imported = ImportedRequest {
            name: "status after SCA".into(),
            method: "GET".into(),
            url: path.clone(),
            ..ImportedRequest::default()
        };
        let mut req = super::prepare_imported(&imported, &self.request_context())?;
        req.operation_id = super::sender::status_operation(flow.flow).into();
        Ok(req)
    }

    /// Waits for the next accepted SCA callback (`None` without a listener).
    pub async fn next_callback(&mut self) -> Option<ScaCallback> {
        match self.listener.as_mut() {
            Some(l) => l.next().await,
            None => None,
        }
    }

    /// Takes the callback receiver, for an event loop that selects over several sources.
    pub(crate) fn take_callback_receiver(
        &mut self,
    ) -> Option<mpsc::UnboundedReceiver<ScaCallback>> {
        self.listener.as_mut().and_then(|l| l.take_receiver())
    }

    /// Applies an SCA outcome; see [`Engine::apply_sca_callback`]. Returns a one-line
    /// summary for the user.
    pub fn apply_callback(&mut self, cb: &ScaCallback) -> Result<String, ClientError> {
        self.apply_sca_callback(cb).map(|a| a.summary)
    }

    /// Applies an SCA outcome to the flow it answers: the waiting flow with the callback's
    /// `tpp-session-id` and the `sca-ref` the listener matched (see
    /// [`crate::redirect::RedirectListener::route_of`]); without one, the oldest flow of that
    /// session armed without an `sca-ref`, else its newest. A successful SCA of an account read or a consent stores PSU-ID,
    /// PSU-Corporate-ID, context and TPP-Session-ID (persisted atomically); a payment or
    /// basket SCA leaves the session's AIS context as it is (its `context` is the payment's,
    /// not the session's). Returns the summary and the flow, whose status the caller reads
    /// with [`Engine::status_after_sca`] for payments, baskets and consents.
    pub fn apply_sca_callback(&mut self, cb: &ScaCallback) -> Result<ScaApplied, ClientError> {
        // The listener says which SCA it accepted the callback for (its `sca-ref`).
        let routed = self.listener.as_ref().and_then(|l| l.route_of(cb));
        let flow = cb.tpp_session_id().and_then(|id| {
            let mut p = self.pending_sca.lock().ok()?;
            let i = match &routed {
                Some(r) => p
                    .iter()
                    .position(|f| f.tpp_session_id == id && &f.sca_ref == r)
                    .or_else(|| {
                        crate::redirect::unrouted(
                            p.iter().map(|f| (&*f.tpp_session_id, f.sca_ref.as_deref())),
                            id,
                        )
                    })?,
                None => crate::redirect::unrouted(
                    p.iter().map(|f| (&*f.tpp_session_id, f.sca_ref.as_deref())),
                    id,
                )?,
            };
            Some(p.remove(i))
        });
        let kind = flow.as_ref().map(|f| f.flow).unwrap_or(ScaFlow::AisRead);
        let summary = match cb {
            ScaCallback::Success(_) if !kind.sets_ais_context() => format!(
                "SCA of the {}{} complete; the session's PSU and context are unchanged",
                kind.noun(),
                flow.as_ref()
                    .and_then(|f| f.resource_id.as_ref())
                    .map(|i| format!(" {i}"))
                    .unwrap_or_default()
            ),
            _ => self.apply_ais_callback(cb)?,
        };
        Ok(ScaApplied { summary, flow })
    }

    fn apply_ais_callback(&mut self, cb: &ScaCallback) -> Result<String, ClientError> {
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
        self.save_session()
    }

    fn save_session(&self) -> Result<(), ClientError> {
        self.session
            .save(&self.paths.session_file(&self.profile.slug()))
            .map_err(|e| ClientError::Setup(format!("saving session state: {e}")))
    }

    /// Stops the local ASPSP and the listener; their ports are free when it returns.
    pub async fn shutdown(mut self) {
        self.take_network().stop().await;
    }
}

/// The local ASPSP and the callback listener taken out of an engine
/// ([`Engine::take_network`]).
pub struct StoppedNetwork {
    listener: Option<RedirectListener>,
    local: Option<Box<dyn LocalAspsp>>,
}

impl StoppedNetwork {
    /// Stops both; their ports are free when it returns.
    pub async fn stop(self) {
        if let Some(l) = self.listener {
            l.shutdown().await;
        }
        if let Some(l) = self.local {
            l.shutdown().await;
        }
    }
}

/// The local ASPSP and the callback listener started again by
/// [`Engine::network_restart`], not yet part of an engine ([`Engine::adopt_network`]).
pub struct RestartedNetwork(Network);

impl std::fmt::Debug for RestartedNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestartedNetwork")
            .field("base_url", &self.0.base_url)
            .field("redirect_uri", &self.0.redirect_uri)
            .finish()
    }
}

/// What [`start_network`] started.
struct Network {
    base_url: String,
    local: Option<Box<dyn LocalAspsp>>,
    listener: Option<RedirectListener>,
    listener_error: Option<String>,
    redirect_uri: String,
}

/// Starts the local ASPSP of an `embedded` profile on `listen:sandbox_port` and the
/// callback listener on `listen` at the port of `tpp_redirect_uri` or `callback_port`; when
/// the local ASPSP is another process's ([`LocalAspsp::shared`]), the listener takes a
/// free port instead and the TPP-Redirect-URI names it.
///
/// Errors: [`ClientError::Setup`] when the local ASPSP cannot start (a taken port names the
/// field to change) or `listen` cannot be named in links. A listener that cannot start is
/// not an error: `listener_error` says why (a remote profile works without it).
async fn start_network(
    profile: &Profile,
    paths: &Paths,
    local: &dyn LocalAspspStarter,
    tls_ca: Option<crate::cert::ca::SandboxCa>,
) -> Result<Network, ClientError> {
    let ip = profile.listen_address();
    if let Err(e) = crate::profile::check_listen_address(&ip.to_string()) {
        return Err(ClientError::Setup(format!(
            "listen address of profile {:?} (`listen` or --listen): {e}",
            profile.name
        )));
    }
    let (base_url, local) = match &profile.target {
        Target::Embedded => {
            let addr = SocketAddr::new(ip, profile.sandbox_port());
            let started = match tls_ca {
                Some(ca) => local.start_tls(paths, addr, ca).await,
                None => local.start(paths, addr).await,
            };
            let aspsp = started.map_err(|e| {
                ClientError::Setup(format!(
                    "embedded sandbox: {}",
                    describe_bind_error(profile, "sandbox_port", addr, &e)
                ))
            })?;
            (aspsp.base_url().to_string(), Some(aspsp))
        }
        Target::Url(u) => (u.clone(), None),
    };
    let shared = local.as_ref().is_some_and(|l| l.shared());
    let started = match shared {
        // The console beside us holds the profile's callback port.
        true => RedirectListener::start_on_free_port(ip, profile.tpp_redirect_uri.as_deref()).await,
        false => {
            RedirectListener::start_on(
                ip,
                profile.tpp_redirect_uri.as_deref(),
                profile.callback_port(),
            )
            .await
        }
    };
    let (listener, listener_error) = match started {
        Ok(l) => (Some(l), None),
        Err(crate::redirect::ListenerError::Bind { addr, source }) => {
            let field = match profile.tpp_redirect_uri {
                Some(_) => "tpp_redirect_uri",
                None => "callback_port",
            };
            let why = describe_bind_error(profile, field, addr, &source);
            (None, Some(format!("SCA callback listener: {why}")))
        }
        Err(e) => (None, Some(e.to_string())),
    };
    let redirect_uri = match (&listener, &profile.tpp_redirect_uri) {
        (Some(l), _) => l.redirect_uri.clone(),
        (None, Some(u)) => u.clone(),
        (None, None) => "http://127.0.0.1/callback".to_string(),
    };
    Ok(Network {
        base_url,
        local,
        listener,
        listener_error,
        redirect_uri,
    })
}

/// Why binding `addr` failed, and what to change: for a taken port the profile `field`
/// (where to set it, [`Profile::where_to_set`]), for an address that is not this machine's
/// `listen` / `--listen`.
pub fn describe_bind_error(
    profile: &Profile,
    field: &str,
    addr: SocketAddr,
    e: &std::io::Error,
) -> String {
    match e.kind() {
        std::io::ErrorKind::AddrInUse => format!(
            "port {} on {} is taken by {}: {} to a free port (0: any free port, links then \
             change at every start), or stop the other program",
            addr.port(),
            addr.ip(),
            // A starter that asked the holder says who it is; a bare bind error does not.
            e.get_ref()
                .map(|who| who.to_string())
                .unwrap_or_else(|| "another program".to_string()),
            profile.where_to_set(field),
        ),
        std::io::ErrorKind::AddrNotAvailable => format!(
            "cannot listen on {}: it is not an address of this machine (check --listen or \
             `listen` in the profile)",
            addr.ip()
        ),
        _ => format!("cannot listen on {addr}: {e}"),
    }
}
