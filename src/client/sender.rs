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

use super::history::History;
use super::response_sig::ResponseSignature;
use super::{ClientError, Exchange, PreparedRequest, send_observed};
use crate::profile::Profile;
use crate::xs2a::links::names;
use crate::xs2a::status::Verdict;
use crate::xs2a::wire::{AnswerLinks, CreatedAnswer};
use serde::Deserialize;

/// Why an exchange was not stored in the history ([`Engine::record`]); the history is best
/// effort, so the send itself succeeded.
#[derive(Debug, thiserror::Error)]
pub enum HistoryWriteError {
    /// The history could not be opened when the engine started (the reason, as in
    /// [`Engine::history_error`]).
    #[error("{0}")]
    NotOpen(String),
    /// A thread panicked while it held the history.
    #[error("the history is unusable after an internal error")]
    Poisoned,
    /// SQLite refused the write; `message` says why
    /// ([`super::history::describe_open_error`]).
    #[error("the exchange was not stored in the history: {message}")]
    Write {
        /// The sentence naming the history path.
        message: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
}

/// What an SCA flow authorises, from the path of the request whose response started it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaFlow {
    /// An account information read (`/v1/accounts...`, `/v1/card-accounts...`): the SCA
    /// gives the session its PSU, context and consent; the read is sent again after it.
    AisRead,
    /// A consent (`/v1/consents`, `/v1/bank-offered-consents`): like [`ScaFlow::AisRead`]
    /// for the session; afterwards the consent's status is read.
    Consent,
    /// A payment (`/v1/payments`, `/v1/bulk-payments`, `/v1/periodic-payments`): the
    /// session's AIS context stays as it is; afterwards the payment's status is read.
    Payment,
    /// A signing basket (`/v1/signing-baskets`): as [`ScaFlow::Payment`].
    Basket,
}

impl ScaFlow {
    /// The flow of a request to `path` (path and query, or an absolute URL).
    pub(crate) fn of_path(path: &str) -> ScaFlow {
        let path = path_of(path);
        let first = path
            .trim_start_matches("/v1/")
            .split('/')
            .next()
            .unwrap_or("");
        match first {
            "payments" | "bulk-payments" | "periodic-payments" => ScaFlow::Payment,
            "signing-baskets" => ScaFlow::Basket,
            "consents" | "bank-offered-consents" => ScaFlow::Consent,
            _ => ScaFlow::AisRead,
        }
    }

    /// Whether the SCA sets the session's AIS context (PSU-ID, PSU-Corporate-ID, context).
    pub(crate) fn sets_ais_context(self) -> bool {
        matches!(self, ScaFlow::AisRead | ScaFlow::Consent)
    }

    /// `payment`, `signing basket`, `consent` or `account access`.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            ScaFlow::AisRead => "account access",
            ScaFlow::Consent => "consent",
            ScaFlow::Payment => "payment",
            ScaFlow::Basket => "signing basket",
        }
    }
}

/// An SCA flow the console started and waits for ([`Engine::expect_sca`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSca {
    /// The `TPP-Session-ID` the flow's request carried (the callback must echo it).
    pub tpp_session_id: String,
    /// What the SCA approves: a payment, a basket, a consent, or an account read.
    pub flow: ScaFlow,
    /// The resource's id (`paymentId`, `basketId`, `consentId`) when known.
    pub resource_id: Option<String>,
    /// Path of the resource's status (`.../status`, from `_links.status` or built from the
    /// request path and the id), for [`Engine::status_after_sca`]; `None` for AIS reads.
    pub status_path: Option<String>,
    /// The `scaRedirect` link.
    pub sca_redirect: String,
    /// The `sca-ref` query parameter of the `TPP-Redirect-URI` the flow's request carried
    /// ([`crate::redirect::SCA_REF_PARAM`]): the ASPSP keeps it in the redirect after SCA, so
    /// the callback names the SCA it answers. `None` when the request carried none (a
    /// resend, an import, a TPP-Redirect-URI typed by hand).
    pub sca_ref: Option<String>,
}

impl PendingSca {
    /// The flow started by a response to `method url` with JSON `body` (`None` when unknown:
    /// then the id and status path come from the URL alone, e.g. for start-authorisation).
    pub fn from_response(
        tpp_session_id: &str,
        url: &str,
        body: Option<&serde_json::Value>,
        sca_redirect: &str,
    ) -> PendingSca {
        let path = path_of(url);
        let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
        let flow = ScaFlow::of_path(path);
        let created = body
            .and_then(|b| CreatedAnswer::deserialize(b).ok())
            .unwrap_or_default();
        let body_id = match flow {
            ScaFlow::Payment => created.payment_id,
            ScaFlow::Basket => created.basket_id,
            ScaFlow::Consent => created.consent_id,
            ScaFlow::AisRead => None,
        };
        // `.../{id}/authorisations` (start authorisation): the resource is the prefix.
        let (resource, resource_id) = match path.strip_suffix("/authorisations") {
            Some(prefix) => (
                Some(prefix.to_string()),
                prefix.rsplit('/').next().map(str::to_string),
            ),
            None => (
                body_id.as_ref().map(|id| format!("{path}/{id}")),
                body_id.clone(),
            ),
        };
        let linked = body
            .and_then(|b| AnswerLinks::deserialize(b).ok())
            .and_then(|a| {
                a.links
                    .get(names::STATUS)
                    .map(|l| path_of(&l.href).to_string())
            });
        let status_path = match flow {
            ScaFlow::AisRead => None,
            _ => linked.or_else(|| resource.map(|r| format!("{r}/status"))),
        };
        PendingSca {
            tpp_session_id: tpp_session_id.to_string(),
            flow,
            resource_id,
            status_path,
            sca_redirect: sca_redirect.to_string(),
            sca_ref: None,
        }
    }
}

/// A resource's status read after its SCA ([`Engine::status_after_sca`]).
#[derive(Debug, Clone)]
pub struct StatusAfterSca {
    /// What the SCA approves: a payment, a basket, a consent, or an account read.
    pub flow: ScaFlow,
    /// `paymentId`, `basketId` or `consentId`, when known.
    pub resource_id: Option<String>,
    /// `transactionStatus` or `consentStatus` (empty when the answer had none).
    pub status: String,
    /// [`crate::xs2a::status::verdict`] of `status` with the answer's `fundsAvailable`
    /// (pending for a non-2xx answer).
    pub verdict: Verdict,
    /// The status exchange as received.
    pub exchange: Exchange,
}

impl StatusAfterSca {
    /// "payment 1234 approved: ACSC", "payment 1234 not approved yet: RCVD",
    /// "payment 1234 rejected: lack of funds (ACCP)" and the like.
    pub fn summary(&self) -> String {
        let id = self
            .resource_id
            .as_ref()
            .map(|i| format!("{i} "))
            .unwrap_or_default();
        let status = if self.status.is_empty() {
            format!("HTTP {}", self.exchange.status)
        } else {
            self.status.clone()
        };
        let noun = self.flow.noun();
        match &self.verdict {
            Verdict::Approved => format!("{noun} {id}approved: {status}"),
            Verdict::Pending => format!("{noun} {id}not approved yet: {status}"),
            Verdict::Rejected(why) => format!("{noun} {id}rejected: {why} ({status})"),
        }
    }
}

/// The path and query of `url` (an absolute URL or already a path).
fn path_of(url: &str) -> &str {
    match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map(|i| &rest[i..]).unwrap_or("/"),
        None => url,
    }
}

/// Everything sending needs, owned (cheap to clone), so that a front end can send off its
/// UI task while the engine stays where it is ([`super::Engine::sender`]).
#[derive(Clone)]
pub struct Sender {
    pub(super) http: reqwest::Client,
    /// What the handshakes of `http` showed ([`super::tls_session`]).
    pub(super) tls: super::tls_session::TlsRecorder,
    pub(super) profile: Profile,
    pub(super) history: Option<Arc<Mutex<History>>>,
    /// Why the history is not open (when `history` is `None`).
    pub(super) history_error: Option<String>,
    pub(super) history_path: std::path::PathBuf,
    /// The session's `TPP-Session-ID`, for a request that carries none.
    pub(super) tpp_session_id: Option<String>,
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
    /// The TLS session of an HTTPS exchange (version, cipher, server chain, client
    /// certificate asked for and sent); `None` over plain HTTP. Stored with the exchange in
    /// the history.
    pub tls: Option<super::tls_session::TlsSession>,
}

impl Sender {
    /// Sends `request`, records it, checks the response signature and describes the SCA
    /// flow a `scaRedirect` started (see the module docs). The history write and the
    /// signature check run off the async workers.
    ///
    /// Errors: those of [`send_for_profile`] (connect, TLS, HTTP); a failed history write is
    /// not an error ([`Sent::recorded`]).
    pub async fn send(&self, request: PreparedRequest) -> Result<Sent, ClientError> {
        let (exchange, info) = send_observed(
            &self.http,
            &request,
            Some(&self.profile.name),
            Some(&self.tls),
        )
        .await?;
        let tls = match info {
            Some(i) => Some(
                self.tls
                    .session_for(&request.url, i.peer_certificate(), i.version())
                    .await,
            ),
            None => None,
        };
        let this = self.clone();
        let done = tokio::task::spawn_blocking(move || {
            let recorded = this.record_with_tls(&request, &exchange, tls.as_ref());
            let signature =
                super::response_sig::verify_response(&this.profile, &exchange, SystemTime::now());
            let sca = this.sca_started(&request, &exchange);
            Sent {
                request,
                exchange,
                recorded,
                signature,
                sca,
                tls,
            }
        })
        .await;
        done.map_err(|e| ClientError::Setup(format!("the send task failed: {e}")))
    }

    /// The SCA flow `exchange` (the answer to `request`) started, when it carries a
    /// `scaRedirect`: keyed by the request's `TPP-Session-ID` (else the session's) and the
    /// `sca-ref` of its `TPP-Redirect-URI`.
    pub(crate) fn sca_started(
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
        self.record_with_tls(req, exchange, None)
    }

    /// [`Sender::record`] with the exchange's TLS session (column `tls`).
    ///
    /// Errors: [`HistoryWriteError`].
    pub fn record_with_tls(
        &self,
        req: &PreparedRequest,
        exchange: &Exchange,
        tls: Option<&super::tls_session::TlsSession>,
    ) -> Result<i64, HistoryWriteError> {
        let Some(h) = self.history.as_ref() else {
            return Err(HistoryWriteError::NotOpen(
                self.history_error.clone().unwrap_or_else(|| {
                    format!("history {} is not open", self.history_path.display())
                }),
            ));
        };
        let h = h.lock().map_err(|_| HistoryWriteError::Poisoned)?;
        h.record_tls(&self.profile.name, &req.params, req, exchange, tls)
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
pub(crate) fn status_operation(flow: ScaFlow) -> &'static str {
    match flow {
        ScaFlow::Payment => "payments.status",
        ScaFlow::Basket => "baskets.status",
        _ => "raw",
    }
}
