//! The embedded sandbox ASPSP: a NextGenPSD2 XS2A 1.3 bank with fake customers, serving the
//! signed `/v1` interface of the interface document and the HTML SCA pages its `scaRedirect`
//! links open.
//!
//! Layout, in three layers that only call downwards (http -> domain -> store; the structure
//! test checks the direction):
//!
//! - [`http`]: the route table ([`http::router`]), the signature check ([`http::auth`]), the
//!   request headers the domain needs read once ([`http::caller`]), one handler module per
//!   resource (parse the request, call the domain, answer with the wire types of
//!   [`crate::xs2a::wire`]) and the SCA pages.
//! - [`domain`]: the services the handlers share: access decisions, payment initiation and
//!   SCA decisions, signing baskets, settlement, fault rules, the ledger, the rules, the
//!   seed and the event bus.
//! - [`store`]: the state (all SQL; per-table modules under it) on SQLite ([`store::db`]).
//! - Shared by all layers: [`model`] (the plain domain types), [`clock`] (the injectable
//!   time source) and [`errors`] (the Berlin Group error answers; never in the store).
//!
//! This module keeps the sandbox's state ([`App`]), its configuration ([`SandboxConfig`])
//! and the server's start ([`spawn`], [`serve_forever`]).
//!
//! Routes:
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | GET | `/v1/accounts` | `accountList` of the consented accounts, or 401 + `scaRedirect` |
//! | GET | `/v1/accounts/{id}` | `{"account": accountDetails}` |
//! | GET | `/v1/accounts/{id}/balances` | `readAccountBalanceResponse-200` |
//! | GET | `/v1/accounts/{id}/transactions` | `transactionsResponse-200_json` (paged) |
//! | GET | `/v1/accounts/{id}/transactions/{transactionId}` | `{"transactionsDetails":{"transactionDetails":..}}` |
//! | GET | `/v1/card-accounts`, `/{id}`, `/{id}/balances`, `/{id}/transactions` | [`cards`] |
//! | POST | `/v1/bank-offered-consents`, `/v1/consents` (deprecated) | 201 `consentsResponse-201` ([`consent`]) |
//! | GET | `/v1/users`, `/v1/user`, `/v1/agreements`, `/v1/agreements/{id}[/engagements]` | [`psu`] |
//! | DELETE | `/v1/sandbox/consents/{psuId}` | 204: the PSU revokes its consents ([`psu`]) |
//! | GET | `/v1/sandbox/customers` | array of sandbox customers |
//! | GET | `/v1/sandbox/customers/{customerId}` | one sandbox customer |
//! | POST, DELETE, GET, PUT | `/v1/sandbox/initialize`, `/v1/sandbox/customers[/{id}[/agreements[/{id}[/engagements]]]]`, `/v1/sandbox/accounts[/{id}/transactions,/balances]`, `/v1/sandbox/card-accounts[/{id}/transactions,/balances]` | sandbox management ([`manage`]) |
//! | POST, GET, DELETE | `/v1/{payments,bulk-payments,periodic-payments}/{product}[/{id}[/status,/authorisations]]` | payment initiation ([`payments`]) |
//! | POST, GET, DELETE | `/v1/signing-baskets[/{id}[/status,/authorisations]]` | signing baskets ([`baskets`]) |
//! | POST, GET | `/v1/sandbox/batch`, `/v1/sandbox/clock`, `/v1/sandbox/payments/{id}/hold`, `/release` | batch runs and clock ([`batch`]) |
//! | GET | `/v1/sandbox/snapshot` | the state as a SQLite file, operator plane only ([`snapshot`], [`operator`]) |
//! | GET | `/v1/sandbox/state` | customers, consents, payments and baskets with their statuses, operator plane only ([`state`], [`operator`]) |
//! | GET, POST | `/payment-sca/{token}`, `/login`, `/decision` | payment and basket SCA pages ([`payment_sca`]; `token`: [`http::sca_pages`]) |
//! | GET | `/sca/{token}` | SCA page (not signed; `token`: [`http::sca_pages`], never the authorisation id) |
//! | POST | `/sca/{token}/login`, `/context`, `/consent`, `/cancel` | SCA steps |
//! | POST, GET, DELETE | `/v1/sandbox/faults[/{id}]` | fault injection rules ([`faults`]) |
//! | GET | `/v1/sandbox/events` | server-sent events of the TPP's requests, SCA steps, batch runs and clock changes ([`events`], [`subscribe`]; `?scope=all`: every TPP's, operator plane) |
//! | GET | `/.well-known/psd2-console?challenge=HEX` | the identity check of the embedded sandbox ([`identity`], not signed) |
//! | GET | `/health`, `/ready` | liveness and readiness ([`health`], not signed) |
//! | GET | `/` | a short HTML description |
//!
//! Unknown `/v1` paths answer 404 with a `RESOURCE_UNKNOWN` body, wrong methods 405
//! `SERVICE_INVALID`; no input produces a 500.
//!
//! Against hostile clients: a repeated `X-Request-ID` is refused ([`replay`]), the SCA pages
//! are bound to the PSU's browser ([`sca_guard`]), links come from
//! [`SandboxConfig::public_url`] (never the `Host` header), and the server loop cuts slow
//! clients off ([`serve`]).

pub(crate) mod bundle;
pub mod clock;
pub mod domain;
pub mod errors;
pub mod http;
pub mod model;
pub mod store;

/// The sandbox over TLS (`sandbox serve --tls`): [`http::tls`].
pub use http::tls;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use clock::Clock;
pub use http::router::router;

use crate::signing::{Verifier, VerifyPolicy};
use domain::access;
use domain::{events, seed};
use http::{accounts, auth, faults, identity, observe, operator, reads, replay, serve};
use model::SeedData;
use store::Store;
use store::db;

/// Configuration of a sandbox instance.
#[derive(Debug, Clone, Default)]
pub struct SandboxConfig {
    /// Time source for Date checks, certificate validity, SCA and consent expiry and the
    /// "today" of generated transactions.
    pub clock: Clock,
    /// What the signature check enforces (default: 60 s Date skew, all eligible headers
    /// signed, certificate validity checked).
    pub verify_policy: VerifyPolicy,
    /// Called with every response (tests validate bodies with it); `None` costs nothing.
    pub observer: Option<observe::ResponseObserver>,
    /// Where the state lives (default: in memory).
    pub storage: db::Storage,
    /// Accept a repeated `X-Request-ID` (no replay check, see [`replay`]): only for load
    /// benchmarks that send one signed request many times (`sandbox serve --allow-replays`).
    pub allow_replays: bool,
    /// The base URL of absolute links (`scaRedirect`, the home page), e.g.
    /// `https://sandbox.example` (no trailing slash); never taken from the request's `Host`.
    /// `None`: `http://{listen address}` in [`spawn`] and [`serve_forever`],
    /// `http://localhost` for a bare [`router`].
    pub public_url: Option<String>,
    /// The data directory's secret key: with it the sandbox answers the identity check
    /// ([`identity`], `GET /.well-known/psd2-console`), so that a command beside the console
    /// can use this sandbox. `None`: that route answers 404.
    pub identity: Option<identity::InstanceKey>,
    /// The operator token (`sandbox serve --operator-token-file`): with it a client on
    /// another machine reaches the operator plane ([`operator`]); `None`: only loopback
    /// peers do.
    pub operator_token: Option<operator::OperatorToken>,
    /// The initial state instead of the built-in [`seed`] (`sandbox serve --seed FILE`,
    /// [`seed_file`]): the state is reset to it when the sandbox starts (an existing database
    /// too), and `POST /v1/sandbox/initialize` resets to it. `None`: the built-in seed, a
    /// kept database kept.
    pub seed: Option<model::SeedData>,
    /// Serve HTTPS ([`tls`], `sandbox serve --tls`): the server certificate, the client
    /// certificate (QWAC) mode and its trusted CAs. `None`: plain HTTP. With it the default
    /// [`SandboxConfig::public_url`] is `https://{listen address}`.
    pub tls: Option<tls::ServerTls>,
}

/// Shared state of the handlers.
pub struct App {
    /// The sandbox clock.
    pub clock: Clock,
    /// The state (reads and writes of the tables).
    pub store: Store,
    /// The durable state (SQLite); see [`db`]. Shared with [`Store`].
    pub db: Arc<db::Db>,
    /// One verifier for all requests, so certificates are parsed once (its cache).
    pub verifier: Verifier,
    /// Serialized transaction pages (see [`accounts::PageCache`]).
    pub pages: accounts::PageCache,
    /// Granted access decisions (see [`access::Decisions`]).
    pub decisions: access::Decisions,
    /// TPP identities per verified certificate (see [`auth::TppCache`]).
    pub tpps: auth::TppCache,
    /// `X-Request-ID`s already used ([`replay`]); `None` with `allow_replays`.
    pub replay: Option<replay::ReplayGuard>,
    /// Base of absolute links, without a trailing slash ([`SandboxConfig::public_url`]).
    pub public_url: String,
    /// The origin (`scheme://host[:port]`) of `public_url`: form posts of the SCA pages
    /// with another `Origin` are refused ([`sca_guard`]).
    pub public_origin: String,
    /// Serialized bodies of the everyday AIS reads (see [`reads::ReadCache`]).
    pub reads: reads::ReadCache,
    /// The request fault rules ([`faults`]), mirrored from the database.
    pub faults: faults::Faults,
    /// The event stream's sender ([`events`]).
    pub events: events::Events,
    /// The key of the identity check ([`SandboxConfig::identity`]).
    pub identity: Option<identity::InstanceKey>,
    /// The operator token ([`SandboxConfig::operator_token`]).
    pub operator_token: Option<operator::OperatorToken>,
    /// The key of the SCA page addresses ([`domain::sca_pages`]).
    pub sca_pages: domain::sca_pages::PageKeys,
    /// What `POST /v1/sandbox/initialize` resets to ([`SandboxConfig::seed`], else the
    /// built-in [`seed`]).
    pub seed: model::SeedData,
    /// The QWAC rules of requests over TLS with client authentication
    /// ([`tls::QwacPolicy`]); `None` on plain HTTP or without client certificates.
    pub qwac: Option<Arc<tls::QwacPolicy>>,
    /// On PostgreSQL, the data version of [`App::sync_clock`]'s last look and the clock
    /// offsets [`App::clock`] last took from the database.
    clock_seen: std::sync::Mutex<(i64, Option<store::tenancy::ClockOffsets>)>,
}

impl App {
    /// A sandbox over `config.storage`, initialized when new.
    ///
    /// Errors: the database cannot be opened or migrated.
    pub fn new(config: SandboxConfig) -> Result<Self, db::DbOpenError> {
        let db = Arc::new(db::Db::open(&config.storage)?);
        let open_error = |source| db::DbOpenError {
            location: db::Db::describe(&config.storage),
            source,
        };
        db.migrate(MIGRATIONS).map_err(open_error)?;
        let store = match &config.seed {
            Some(data) => {
                db.write_raw(|tx| {
                    store::clear_all_tables(tx)?;
                    store::insert_seed(tx, data)
                })
                .map_err(open_error)?;
                Store::open(db.clone(), SeedData::default).map_err(open_error)?
            }
            None => Store::open(db.clone(), seed::seed).map_err(open_error)?,
        };
        let faults = faults::Faults::load(&db).map_err(open_error)?;
        let sca_pages = domain::sca_pages::PageKeys::load(&db).map_err(open_error)?;
        if let Some(offset) = store.clock_offset().map_err(open_error)? {
            config.clock.set_offset(offset);
        }
        for (tpp, secs) in db
            .read_raw(store::tenancy::clock_offsets)
            .map_err(open_error)?
        {
            config
                .clock
                .set_world_offset(&tpp, std::time::Duration::from_secs(secs));
        }
        let max_skew = config.verify_policy.max_skew_secs;
        let replay = match (&config.storage, config.allow_replays) {
            (_, true) => None,
            (db::Storage::InMemory, false) => Some(replay::ReplayGuard::in_memory(max_skew)),
            (db::Storage::File(f), false) => Some(
                replay::ReplayGuard::persistent(f, max_skew).map_err(|e| open_error(e.into()))?,
            ),
            // Issue 21: on PostgreSQL the ids are in the database, shared by every instance.
            (db::Storage::Postgres(url), false) => {
                Some(replay::ReplayGuard::shared(url, max_skew).map_err(open_error)?)
            }
        };
        // Issue 21: on PostgreSQL the event stream is shared by every instance.
        let events = match &config.storage {
            db::Storage::Postgres(url) => events::Events::shared(url).map_err(open_error)?,
            _ => events::Events::default(),
        };
        let public_url = config
            .public_url
            .as_deref()
            .unwrap_or("http://localhost")
            .trim_end_matches('/')
            .to_string();
        let public_origin = url::Url::parse(&public_url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|_| public_url.clone());
        Ok(App {
            clock: config.clock,
            store,
            db,
            verifier: Verifier::new(config.verify_policy),
            pages: accounts::PageCache::default(),
            decisions: access::Decisions::default(),
            tpps: auth::TppCache::default(),
            replay,
            public_url,
            public_origin,
            reads: reads::ReadCache::default(),
            faults,
            events,
            identity: config.identity,
            operator_token: config.operator_token,
            sca_pages,
            seed: config.seed.unwrap_or_else(seed::seed),
            qwac: config.tls.as_ref().and_then(tls::ServerTls::policy),
            clock_seen: std::sync::Mutex::new((-1, None)),
        })
    }
}

impl App {
    /// On PostgreSQL, where other instances share the database (issue 21, "two or more
    /// instances behave as one sandbox"), takes the clock offsets another instance wrote (`POST
    /// /v1/sandbox/clock`, a TPP's initialize) into [`App::clock`]: the shared offset when one
    /// is stored, and every TPP's own offset, replacing this instance's. One statement per
    /// request ([`store::tenancy::clock_offsets_since`]: one round trip): the data version, and
    /// the offsets only when the version moved since the last look; they are applied only when
    /// they differ from the last ones taken; and whether any fault rule is stored, handed to
    /// [`App::faults`] ([`faults::Faults::saw`]: while none is, the request faults read
    /// nothing). On SQLite (one instance per file) nothing. A database that does not answer is
    /// logged; the request then runs on the offsets held.
    pub fn sync_clock(&self) {
        if self.db.postgres_url().is_none() {
            return;
        }
        let lock = || self.clock_seen.lock().unwrap_or_else(|p| p.into_inner());
        let seen_version = lock().0;
        let read = self
            .db
            .read_single(|c| store::tenancy::clock_offsets_since(c, seen_version));
        // The same statement says whether any fault rule is stored (the request faults then
        // need no read of their own), or, when it failed, nothing is known.
        self.faults
            .saw(read.as_ref().ok().map(|r| (r.version, r.any_fault)));
        match read {
            Ok(store::tenancy::SyncRead { offsets: None, .. }) => {}
            Ok(store::tenancy::SyncRead {
                version,
                offsets: Some(offsets),
                ..
            }) => {
                let mut seen = lock();
                seen.0 = version.unwrap_or(-1);
                if seen.1.as_ref() == Some(&offsets) {
                    return;
                }
                if let Some(n) = offsets.shared_nanos {
                    self.clock.set_offset(std::time::Duration::from_nanos(
                        u64::try_from(n).unwrap_or(0),
                    ));
                }
                self.clock.replace_worlds(
                    offsets
                        .tpps
                        .iter()
                        .map(|(tpp, secs)| (tpp.clone(), std::time::Duration::from_secs(*secs))),
                );
                seen.1 = Some(offsets);
            }
            Err(e) => tracing::warn!(error = %e, "the clock offsets could not be read"),
        }
    }

    /// The domain's view of this state for one call ([`domain::Ctx`]): what the domain
    /// services take instead of the whole state.
    pub fn domain(&self) -> domain::Ctx<'_> {
        domain::Ctx {
            clock: &self.clock,
            store: &self.store,
            db: &self.db,
            decisions: &self.decisions,
            events: &self.events,
            pages: &self.sca_pages,
            public_url: &self.public_url,
        }
    }
}

/// Schema steps of every module's tables, applied in order (see [`db::Db::migrate`]).
pub const MIGRATIONS: &[db::Migration] = &[
    store::schema::MIGRATION,
    store::unattended::MIGRATION,
    store::access::PSU_MIGRATION,
    store::access::CARDS_MIGRATION,
    store::access::CONSENT_MIGRATION,
    store::payments::MIGRATION,
    store::sca_browsers::MIGRATION,
    store::faults::MIGRATION,
    store::page_keys::MIGRATION,
    store::tenancy::MIGRATION,
    // Last: indexes over the tables above (issue 20, finding 4).
    store::indexes::MIGRATION,
    store::indexes::MIGRATION_TPP_DUPLICATES,
    store::indexes::MIGRATION_SCA_PURGE_PER_TPP,
    store::indexes::MIGRATION_PARTIAL,
    store::indexes::MIGRATION_CHECKS_WITHOUT_IN,
    store::indexes::MIGRATION_DUPLICATES_IN_MEMORY,
];

/// A running sandbox: where it listens, and how to stop it.
pub struct SandboxHandle {
    /// The bound address (the real port when asked for port 0).
    pub addr: SocketAddr,
    /// `http://{addr}`, or `https://{addr}` over TLS.
    pub base_url: String,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

/// How long [`SandboxHandle::shutdown`] lets the requests under way finish before it drops
/// their connections (`sandbox serve` on SIGTERM or SIGINT). Neither document speaks of it; 5 s
/// is well under the grace period of a service manager or orchestrator (systemd's default
/// `TimeoutStopSec` 90 s, Kubernetes' `terminationGracePeriodSeconds` 30 s) and above any
/// answer of the sandbox but an injected delay.
pub const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

impl SandboxHandle {
    /// Stops accepting, closes idle keep-alive connections, lets the requests under way
    /// finish (at most [`DRAIN_TIMEOUT`]), and waits for the server.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(());
        let mut task = self.task;
        if tokio::time::timeout(DRAIN_TIMEOUT, &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
}

/// The TLS acceptor of `config` for the bound address `bound` (`None` on plain HTTP), and
/// the scheme of the default public URL. A server certificate of the sandbox CA names
/// `localhost`, `127.0.0.1`, the bound address and the public URL's host.
fn acceptor_of(
    config: &SandboxConfig,
    bound: SocketAddr,
) -> std::io::Result<(Option<tokio_rustls::TlsAcceptor>, &'static str)> {
    let Some(tls) = &config.tls else {
        return Ok((None, "http"));
    };
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    if !bound.ip().is_unspecified() {
        names.push(bound.ip().to_string());
    }
    if let Some(host) = config
        .public_url
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_string()))
    {
        names.push(host);
    }
    let acceptor = tls.acceptor(&names).map_err(std::io::Error::other)?;
    Ok((Some(acceptor), "https"))
}

/// Binds `addr` (e.g. `127.0.0.1:0`) and serves the sandbox in a tokio task, with the
/// timeouts of [`serve`], over TLS when `config.tls` is set ([`tls`]). Links use
/// `http(s)://{bound address}` unless `config.public_url` is set.
///
/// Errors: binding fails; the TLS setup fails (a server certificate cannot be issued).
pub async fn spawn(addr: SocketAddr, mut config: SandboxConfig) -> std::io::Result<SandboxHandle> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (tx, rx) = oneshot::channel::<()>();
    let (acceptor, scheme) = acceptor_of(&config, addr)?;
    config
        .public_url
        .get_or_insert_with(|| format!("{scheme}://{addr}"));
    let app = router(config).map_err(std::io::Error::other)?;
    let task = tokio::spawn(serve::serve_tls(listener, app, acceptor, async move {
        let _ = rx.await;
    }));
    Ok(SandboxHandle {
        addr,
        base_url: format!("{scheme}://{addr}"),
        shutdown: tx,
        task,
    })
}

/// Binds `addr` and serves the sandbox until the process ends, with the timeouts of
/// [`serve`], over TLS when `config.tls` is set. Links use `http(s)://{bound address}`
/// unless `config.public_url` is set (`--public-url`).
///
/// Errors: binding, the TLS setup or serving fails.
pub async fn serve_forever(addr: SocketAddr, mut config: SandboxConfig) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tracing::info!(addr = %bound, "sandbox ASPSP listening");
    let (acceptor, scheme) = acceptor_of(&config, bound)?;
    config
        .public_url
        .get_or_insert_with(|| format!("{scheme}://{bound}"));
    let app = router(config).map_err(std::io::Error::other)?;
    serve::serve_tls(listener, app, acceptor, std::future::pending()).await
}
