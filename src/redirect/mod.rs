//! The SCA callback listener: a small axum server on 127.0.0.1 (in room mode, on the
//! profile's `listen` address) at the path of the profile's `TPP-Redirect-URI`, served with
//! the timeouts of [`crate::http_server`]. The ASPSP redirects the PSU's browser here after SCA with the
//! parameters of the interface document ("Redirect parameters after SCA"); the listener
//! answers the browser with a short page and hands the outcome to the console.
//!
//! A callback is accepted only for an SCA flow the console started and is waiting for
//! ([`RedirectListener::await_flow`], armed when a response carried a `scaRedirect`),
//! carrying that flow's `tpp-session-id`, and only once per flow. Flows of one session are
//! told apart by the `sca-ref` the console puts in the `TPP-Redirect-URI` of the request
//! that starts them ([`SCA_REF_PARAM`]; the ASPSP keeps the TPP's own query parameters when
//! it appends the redirect parameters): a callback goes to the flow it answers, never to an
//! older one of the same session, and a callback for a flow the console gave up
//! ([`RedirectListener::forget_flow`], Esc on the SCA prompt) is rejected. Anything else — a forged
//! or replayed callback, one for no waiting flow, a failure callback without
//! `tpp-session-id` — gets a 400 page and a `tracing::warn!` line and is not handed on, so
//! it changes nothing (no PSU-ID, corporate id or context is taken from it, and a waiting
//! `send --wait-sca` goes on waiting).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use maud::{DOCTYPE, html};
use tokio::sync::{mpsc, oneshot};

use crate::xs2a::redirect::ScaCallback;

mod browser;
pub use browser::{BrowserError, browser_commands, open_browser};

/// Errors of starting the listener.
#[derive(Debug, thiserror::Error)]
pub enum ListenerError {
    #[error(
        "TPP-Redirect-URI {0:?} is not a loopback http URL (http://127.0.0.1:PORT/path or http://localhost:PORT/path), so the console cannot receive the callback"
    )]
    /// The `TPP-Redirect-URI` (given) is not a loopback http URL.
    NotLoopback(String),
    #[error(
        "TPP-Redirect-URI {0:?} is not an http URL with a path (room mode serves the callback over plain http on the listen address)"
    )]
    /// The `TPP-Redirect-URI` (given) is not an http URL with a path (room mode).
    NotHttp(String),
    /// The address could not be bound (taken, or not this machine's).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The query parameter of the `TPP-Redirect-URI` naming the SCA flow a request starts (the
/// request's `X-Request-ID`): `http://127.0.0.1:40111/callback?sca-ref=<uuid>`. Not a redirect
/// parameter of the interface document: the TPP's own, kept by the ASPSP (the sandbox keeps
/// every TPP query parameter not named like a redirect parameter).
pub const SCA_REF_PARAM: &str = "sca-ref";

/// `redirect_uri` with `sca-ref=<sca_ref>` (replacing one it has); unchanged when it is not
/// a URL.
pub fn with_sca_ref(redirect_uri: &str, sca_ref: &str) -> String {
    crate::xs2a::redirect::replace_query(
        redirect_uri,
        |k| k == SCA_REF_PARAM,
        [(SCA_REF_PARAM, sca_ref)],
    )
    .unwrap_or_else(|_| redirect_uri.to_string())
}

/// The `sca-ref` of a `TPP-Redirect-URI` (or of a callback URL), if any.
pub fn sca_ref_of(uri: &str) -> Option<String> {
    let url = url::Url::parse(uri).ok()?;
    url.query_pairs()
        .find(|(k, _)| k == SCA_REF_PARAM)
        .map(|(_, v)| v.into_owned())
}

/// One SCA flow waiting for its callback: its `tpp-session-id` and `sca-ref`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wait {
    session: String,
    sca_ref: Option<String>,
}

/// Most accepted callbacks remembered for [`RedirectListener::route_of`].
const ROUTES_KEPT: usize = 64;

#[derive(Debug, Default)]
struct Routing {
    /// Waiting flows, oldest first.
    waits: Vec<Wait>,
    /// Accepted callbacks with the `sca-ref` of the flow they were accepted for, in the
    /// order they were handed on.
    accepted: std::collections::VecDeque<(ScaCallback, Option<String>)>,
}

/// The waiting flows and the accepted callbacks' routes.
type Waiting = Arc<Mutex<Routing>>;

/// Which of `waits` (`(tpp-session-id, sca-ref)`, oldest first) a callback of session `id`
/// carrying no `sca-ref` the console knows goes to: the oldest armed without an `sca-ref`
/// (a request whose redirect URI had none), else the newest of the session (an ASPSP that
/// dropped the TPP's query parameters: the SCA the PSU was sent to last).
pub(crate) fn unrouted<'a>(
    waits: impl Iterator<Item = (&'a str, Option<&'a str>)>,
    id: &str,
) -> Option<usize> {
    let mine: Vec<(usize, Option<&str>)> = waits
        .enumerate()
        .filter(|(_, (s, _))| *s == id)
        .map(|(i, (_, r))| (i, r))
        .collect();
    mine.iter()
        .find(|(_, r)| r.is_none())
        .or_else(|| mine.last())
        .map(|(i, _)| *i)
}

/// Takes the flow a callback of session `id` with `sca_ref` answers (see the module docs);
/// returns its `sca-ref`, `None` when no waiting flow takes it.
fn take_wait(r: &mut Routing, id: &str, sca_ref: Option<&str>) -> Option<Option<String>> {
    let exact = sca_ref.and_then(|want| {
        r.waits
            .iter()
            .position(|w| w.session == id && w.sca_ref.as_deref() == Some(want))
    });
    let i = match (exact, sca_ref) {
        (Some(i), _) => i,
        // A ref no flow has: a flow given up (or forged); only a flow armed without a ref
        // may take it.
        (None, Some(_)) => r
            .waits
            .iter()
            .position(|w| w.session == id && w.sca_ref.is_none())?,
        (None, None) => unrouted(
            r.waits
                .iter()
                .map(|w| (w.session.as_str(), w.sca_ref.as_deref())),
            id,
        )?,
    };
    Some(r.waits.remove(i).sca_ref)
}

/// Path used when the profile gives no TPP-Redirect-URI.
pub(crate) const DEFAULT_PATH: &str = "/callback";

#[derive(Clone)]
struct ListenerState {
    path: String,
    waiting: Waiting,
    tx: mpsc::UnboundedSender<ScaCallback>,
}

/// A running listener. Dropping it stops the server.
pub struct RedirectListener {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// The `TPP-Redirect-URI` to send, e.g. `http://127.0.0.1:40111/callback`.
    pub redirect_uri: String,
    waiting: Waiting,
    rx: Option<mpsc::UnboundedReceiver<ScaCallback>>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for RedirectListener {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl RedirectListener {
    /// Starts listening. With `redirect_uri` its port and path are used (the host must be
    /// 127.0.0.1 or localhost; the socket is always bound to 127.0.0.1); without, a free port
    /// is chosen and the path is `/callback`.
    pub async fn start(redirect_uri: Option<&str>) -> Result<Self, ListenerError> {
        Self::start_on(IpAddr::V4(Ipv4Addr::LOCALHOST), redirect_uri, 0).await
    }

    /// Starts listening on `ip`.
    ///
    /// - `ip` 127.0.0.1: as [`RedirectListener::start`], but without `redirect_uri` on
    ///   `port` (0: a free one), path `/callback`, sending `http://127.0.0.1:<port>/callback`.
    /// - another address (room mode): bound on `ip` at the port of `redirect_uri` (any http
    ///   URL; its host is replaced by `ip`) or at `port`, sending `http://<ip>:<port><path>`,
    ///   so a phone on the room's network reaches it. The callback checks are the same.
    ///
    /// A taken port is an error ([`ListenerError::Bind`], `AddrInUse`), never replaced by
    /// another one.
    ///
    /// Errors: [`ListenerError`].
    pub(crate) async fn start_on(
        ip: IpAddr,
        redirect_uri: Option<&str>,
        port: u16,
    ) -> Result<Self, ListenerError> {
        Self::start_inner(ip, redirect_uri, port, false).await
    }

    /// [`RedirectListener::start_on`] on a free port whatever `redirect_uri` says: its host
    /// and path stay, its port becomes the one bound (e.g. `http://127.0.0.1:8089/callback`
    /// → `http://127.0.0.1:41234/callback`). For a command beside a console that holds the
    /// profile's callback port ([`crate::embedded::BesideConsole`]).
    ///
    /// Errors: [`ListenerError`].
    pub(crate) async fn start_on_free_port(
        ip: IpAddr,
        redirect_uri: Option<&str>,
    ) -> Result<Self, ListenerError> {
        Self::start_inner(ip, redirect_uri, 0, true).await
    }

    async fn start_inner(
        ip: IpAddr,
        redirect_uri: Option<&str>,
        port: u16,
        free: bool,
    ) -> Result<Self, ListenerError> {
        let room = ip != IpAddr::V4(Ipv4Addr::LOCALHOST);
        let (port, path, given) = match redirect_uri {
            Some(u) => {
                let parsed = url::Url::parse(u).map_err(|_| match room {
                    true => ListenerError::NotHttp(u.to_string()),
                    false => ListenerError::NotLoopback(u.to_string()),
                })?;
                let host = parsed.host_str().unwrap_or_default();
                if room && parsed.scheme() != "http" {
                    return Err(ListenerError::NotHttp(u.to_string()));
                }
                if !room
                    && (parsed.scheme() != "http" || !(host == "127.0.0.1" || host == "localhost"))
                {
                    return Err(ListenerError::NotLoopback(u.to_string()));
                }
                let port = if free { 0 } else { parsed.port().unwrap_or(80) };
                // Off loopback the URI names the listen address: only its port and path stay.
                let path = parsed.path().to_string();
                let given = (!room).then_some(parsed);
                (port, path, given)
            }
            None => (port, DEFAULT_PATH.to_string(), None),
        };
        let addr = SocketAddr::new(ip, port);
        let socket = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ListenerError::Bind { addr, source })?;
        let addr = socket
            .local_addr()
            .map_err(|source| ListenerError::Bind { addr, source })?;
        let redirect_uri = match given {
            // A free port: the URI names the port bound.
            Some(mut u) if free => {
                let _ = u.set_port(Some(addr.port()));
                u.to_string()
            }
            Some(_) => redirect_uri.unwrap_or_default().to_string(),
            None => format!("http://{addr}{path}"),
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let waiting: Waiting = Arc::default();
        let state = ListenerState {
            path: path.clone(),
            waiting: waiting.clone(),
            tx,
        };
        let app = axum::Router::new().fallback(callback).with_state(state);
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let stopped = async {
                let _ = stop_rx.await;
            };
            if let Err(e) = crate::http_server::serve(socket, app, stopped).await {
                tracing::warn!(error = %e, "the SCA callback listener stopped");
            }
        });
        Ok(RedirectListener {
            addr,
            redirect_uri,
            waiting,
            rx: Some(rx),
            shutdown: Some(stop_tx),
            task: Some(task),
        })
    }

    /// Stops listening and waits (at most 5 s) until the port is free again, so that it can
    /// be bound at once (a restart on the same port).
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(std::time::Duration::from_secs(5), &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
    }

    /// Arms one SCA flow the console started (a response carried a `scaRedirect`) with the
    /// `TPP-Session-ID` it sent, without an `sca-ref`: the next callback carrying that id is
    /// accepted, once. Arm again for each further flow.
    pub fn await_callback(&self, tpp_session_id: &str) {
        self.await_flow(tpp_session_id, None);
    }

    /// Arms one SCA flow with the `TPP-Session-ID` and the `sca-ref` its request sent
    /// ([`SCA_REF_PARAM`]): a callback carrying both is accepted for it, once.
    pub fn await_flow(&self, tpp_session_id: &str, sca_ref: Option<&str>) {
        if let Ok(mut w) = self.waiting.lock() {
            w.waits.push(Wait {
                session: tpp_session_id.to_string(),
                sca_ref: sca_ref.map(str::to_string),
            });
        }
    }

    /// Disarms the flow of `tpp_session_id` and `sca_ref` (the console gave it up): its
    /// callback is rejected from now on. Returns whether it was waiting.
    pub fn forget_flow(&self, tpp_session_id: &str, sca_ref: Option<&str>) -> bool {
        let Ok(mut w) = self.waiting.lock() else {
            return false;
        };
        match w
            .waits
            .iter()
            .rposition(|x| x.session == tpp_session_id && x.sca_ref.as_deref() == sca_ref)
        {
            Some(i) => {
                w.waits.remove(i);
                true
            }
            None => false,
        }
    }

    /// The `sca-ref` of the flow an accepted callback equal to `cb` was accepted for (the
    /// first such callback not asked about yet): `Some(None)` for a flow armed without one,
    /// `None` when this listener did not hand `cb` on.
    pub fn route_of(&self, cb: &ScaCallback) -> Option<Option<String>> {
        let mut w = self.waiting.lock().ok()?;
        let i = w.accepted.iter().position(|(c, _)| c == cb)?;
        w.accepted.remove(i).map(|(_, r)| r)
    }

    /// The former name of [`RedirectListener::await_callback`] (arms one flow).
    pub fn expect_session(&self, tpp_session_id: &str) {
        self.await_callback(tpp_session_id);
    }

    /// Disarms one waiting flow of `tpp_session_id` (the console gave up waiting); returns
    /// whether one was waiting.
    pub fn forget_callback(&self, tpp_session_id: &str) -> bool {
        self.waiting
            .lock()
            .map(|mut w| take_wait(&mut w, tpp_session_id, None).is_some())
            .unwrap_or(false)
    }

    /// How many flows are waiting for a callback.
    pub fn waiting(&self) -> usize {
        self.waiting.lock().map(|w| w.waits.len()).unwrap_or(0)
    }

    /// Waits for the next accepted callback (`None` once the receiver was taken).
    pub async fn next(&mut self) -> Option<ScaCallback> {
        match self.rx.as_mut() {
            Some(rx) => rx.recv().await,
            None => None,
        }
    }

    /// The next accepted callback, if one has arrived.
    pub fn try_next(&mut self) -> Option<ScaCallback> {
        self.rx.as_mut().and_then(|rx| rx.try_recv().ok())
    }

    /// Takes the receiving end, for an event loop that selects over several sources.
    pub(crate) fn take_receiver(&mut self) -> Option<mpsc::UnboundedReceiver<ScaCallback>> {
        self.rx.take()
    }
}

async fn callback(
    State(state): State<ListenerState>,
    uri: axum::http::Uri,
    RawQuery(query): RawQuery,
) -> Response {
    if uri.path() != state.path {
        return page(
            StatusCode::NOT_FOUND,
            "Not the callback",
            &format!(
                "This listener only takes the SCA callback at {}.",
                state.path
            ),
        );
    }
    let query = query.unwrap_or_default();
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let parsed = ScaCallback::from_query_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let cb = match parsed {
        Ok(cb) => cb,
        Err(e) => {
            tracing::warn!(reason = %e, "SCA callback not understood, rejected");
            return page(
                StatusCode::BAD_REQUEST,
                "Callback not understood",
                &e.to_string(),
            );
        }
    };
    let Some(id) = cb.tpp_session_id() else {
        tracing::warn!(
            kind = kind_of(&cb),
            "SCA callback without tpp-session-id rejected"
        );
        return page(
            StatusCode::BAD_REQUEST,
            "Callback rejected",
            "The callback has no tpp-session-id, so it cannot belong to an SCA this console \
             started; the result was not used.",
        );
    };
    let sca_ref = pairs
        .iter()
        .find(|(k, _)| k == SCA_REF_PARAM)
        .map(|(_, v)| v.as_str());
    let accepted = state.waiting.lock().ok().and_then(|mut w| {
        let route = take_wait(&mut w, id, sca_ref)?;
        if w.accepted.len() >= ROUTES_KEPT {
            w.accepted.pop_front();
        }
        w.accepted.push_back((cb.clone(), route.clone()));
        Some(route)
    });
    if accepted.is_none() {
        tracing::warn!(
            kind = kind_of(&cb),
            tpp_session_id = id,
            "SCA callback for no waiting flow rejected (forged, replayed or stale)"
        );
        return page(
            StatusCode::BAD_REQUEST,
            "Callback rejected",
            &format!(
                "No SCA this console started is waiting for a callback with tpp-session-id \
                 {id:?}{} (forged, replayed, given up or already completed); the result was \
                 not used.",
                sca_ref
                    .map(|r| format!(" and sca-ref {r:?}"))
                    .unwrap_or_default()
            ),
        );
    }
    let response = match &cb {
        ScaCallback::Success(s) => page(
            StatusCode::OK,
            "SCA complete",
            &format!(
                "SCA complete ({} context). Return to the console.",
                s.context.as_str()
            ),
        ),
        ScaCallback::Failure(f) => page(
            StatusCode::OK,
            "SCA failed",
            &format!(
                "SCA failed: {} {} from {}: {}. Return to the console.",
                f.status, f.code, f.system, f.message
            ),
        ),
    };
    let _ = state.tx.send(cb);
    response
}

fn kind_of(cb: &ScaCallback) -> &'static str {
    match cb {
        ScaCallback::Success(_) => "success",
        ScaCallback::Failure(_) => "failure",
    }
}

fn page(status: StatusCode, title: &str, text: &str) -> Response {
    let body = html! {
        (DOCTYPE)
        html {
            head {
                meta charset="utf-8";
                title { (title) }
                style { "body{font-family:sans-serif;max-width:40em;margin:4em auto;}" }
            }
            body {
                h1 { (title) }
                p { (text) }
                p { small { "psd2-console redirect listener" } }
            }
        }
    };
    (status, Html(body.into_string())).into_response()
}
