//! The one sender of the console: the CLI's `send` ([`super::Engine::send_recorded`]) and the
//! TUI (its runner sends on a task with a [`Sender`] taken from the engine) both send here,
//! so both record the same history rows, check response signatures the same way, arm the
//! same SCA wait and read the same status after SCA.
//!
//! [`Sender::send`]: send with the profile's HTTP client, record the exchange in the
//! history (best effort), verify the response signature (Authentication rule 10, when the
//! profile asks for it), and, when the answer carries a `scaRedirect`, describe the SCA
//! flow it started ([`PendingSca`], from the response body: resource id and status path;
//! keyed by the request's `TPP-Session-ID` and the `sca-ref` of its `TPP-Redirect-URI`,
//! [`crate::redirect::SCA_REF_PARAM`]). The caller arms it on the engine
//! ([`super::Engine::arm`]), which owns the callback listener.
//!
//! [`Sender::read_status`]: after an SCA, GET the resource's status and judge it with the one
//! verdict of [`crate::xs2a::status`].

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::engine::{HistoryWriteError, PendingSca, ScaFlow, StatusAfterSca};
use super::history::History;
use super::response_sig::ResponseSignature;
use super::{ClientError, Exchange, PreparedRequest, send_for_profile};
use crate::profile::Profile;

/// Everything sending needs, owned (cheap to clone), so that a front end can send off its
/// UI task while the engine stays where it is ([`super::Engine::sender`]).
#[derive(Clone)]
pub struct Sender {
    http: reqwest::Client,
    profile: Profile,
    history: Option<Arc<Mutex<History>>>,
    /// Why the history is not open (when `history` is `None`).
    history_error: Option<String>,
    history_path: std::path::PathBuf,
    /// The session's `TPP-Session-ID`, for a request that carries none.
    tpp_session_id: Option<String>,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("profile", &self.profile.name)
            .finish()
    }
}

/// What one send produced ([`Sender::send`]).
#[derive(Debug)]
pub struct Sent {
    /// The request as sent.
    pub request: PreparedRequest,
    /// The answer as received.
    pub exchange: Exchange,
    /// The history entry id, or why the exchange was not stored (the send still succeeded).
    pub recorded: Result<i64, HistoryWriteError>,
    /// The response signature check, when the profile asks for it.
    pub signature: Option<ResponseSignature>,
    /// The SCA flow the answer started (it carried a `scaRedirect`), to be armed with
    /// [`super::Engine::arm`].
    pub sca: Option<PendingSca>,
}

impl Sender {
    /// A sender for `engine`'s profile, HTTP client, history and session.
    pub fn of(engine: &super::Engine) -> Sender {
        Sender {
            http: engine.http.clone(),
            profile: engine.profile.clone(),
            history: engine.history.clone(),
            history_error: engine.history_error.clone(),
            history_path: engine.paths.history_file(),
            tpp_session_id: engine.session.tpp_session_id.clone(),
        }
    }

    /// The profile requests go out under.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Sends `request`, records it, checks the response signature and describes the SCA
    /// flow a `scaRedirect` started (see the module docs). The history write and the
    /// signature check run off the async workers.
    ///
    /// Errors: those of [`send_for_profile`] (connect, TLS, HTTP); a failed history write is
    /// not an error ([`Sent::recorded`]).
    pub async fn send(&self, request: PreparedRequest) -> Result<Sent, ClientError> {
        let exchange = send_for_profile(&self.http, &request, Some(&self.profile.name)).await?;
        let this = self.clone();
        let done = tokio::task::spawn_blocking(move || {
            let recorded = this.record(&request, &exchange);
            let signature =
                super::response_sig::verify_response(&this.profile, &exchange, SystemTime::now());
            let sca = this.sca_started(&request, &exchange);
            Sent {
                request,
                exchange,
                recorded,
                signature,
                sca,
            }
        })
        .await;
        done.map_err(|e| ClientError::Setup(format!("the send task failed: {e}")))
    }

    /// The SCA flow `exchange` (the answer to `request`) started, when it carries a
    /// `scaRedirect`: keyed by the request's `TPP-Session-ID` (else the session's) and the
    /// `sca-ref` of its `TPP-Redirect-URI`.
    pub fn sca_started(
        &self,
        request: &PreparedRequest,
        exchange: &Exchange,
    ) -> Option<PendingSca> {
        let href = exchange.sca_redirect()?;
        let session = request
            .header(crate::xs2a::headers::TPP_SESSION_ID)
            .map(str::to_string)
            .or_else(|| self.tpp_session_id.clone())?;
        let sca_ref = request
            .header(crate::xs2a::headers::TPP_REDIRECT_URI)
            .and_then(crate::redirect::sca_ref_of);
        let mut flow =
            PendingSca::from_response(&session, &request.url, exchange.json.as_ref(), &href);
        flow.sca_ref = sca_ref;
        Some(flow)
    }

    /// Records an exchange in the history and returns the entry id (best effort: the error
    /// says why nothing was stored).
    ///
    /// Errors: [`HistoryWriteError`], one sentence naming the history path.
    pub fn record(
        &self,
        req: &PreparedRequest,
        exchange: &Exchange,
    ) -> Result<i64, HistoryWriteError> {
        let Some(h) = self.history.as_ref() else {
            return Err(HistoryWriteError::NotOpen(
                self.history_error.clone().unwrap_or_else(|| {
                    format!("history {} is not open", self.history_path.display())
                }),
            ));
        };
        let h = h.lock().map_err(|_| HistoryWriteError::Poisoned)?;
        h.record(&self.profile.name, &req.params, req, exchange)
            .map_err(|source| HistoryWriteError::Write {
                message: super::history::describe_open_error(&self.history_path, &source),
                source,
            })
    }

    /// Reads the status of the resource whose SCA `flow` completed with `request` (the
    /// signed GET of its status path, [`super::Engine::prepare_status_read`]) and judges it
    /// with [`crate::xs2a::status::verdict`] (`transactionStatus` or `consentStatus`, with
    /// `fundsAvailable`). A non-2xx answer is pending (nothing known).
    ///
    /// Errors: those of [`Sender::send`].
    pub async fn read_status(
        &self,
        flow: &PendingSca,
        request: PreparedRequest,
    ) -> Result<(StatusAfterSca, Sent), ClientError> {
        let sent = self.send(request).await?;
        let judged = sent
            .exchange
            .json
            .as_ref()
            .and_then(crate::xs2a::status::verdict_of_body);
        let (status, verdict) = match judged {
            Some((s, v)) if sent.exchange.is_success() => (s, v),
            Some((s, _)) => (s, crate::xs2a::status::Verdict::Pending),
            None => (String::new(), crate::xs2a::status::Verdict::Pending),
        };
        let st = StatusAfterSca {
            flow: flow.flow,
            resource_id: flow.resource_id.clone(),
            status,
            verdict,
            exchange: sent.exchange.clone(),
        };
        Ok((st, sent))
    }
}

/// The catalogue operation that reads the status of `flow`'s resource (`payments.status`,
/// `baskets.status`; `raw` for a consent, which the catalogue reads by its own path).
pub fn status_operation(flow: ScaFlow) -> &'static str {
    match flow {
        ScaFlow::Payment => "payments.status",
        ScaFlow::Basket => "baskets.status",
        _ => "raw",
    }
}
