//! The embedded sandbox ASPSP: a NextGenPSD2 XS2A 1.3 bank with fake customers, serving the
//! signed `/v1` interface of the interface document and the HTML SCA pages its `scaRedirect`
//! links open.
//!
//! Layout, in three layers that only call downwards (`scripts/sandbox_cycles.py` checks that
//! the modules import each other without cycles):
//!
//! - HTTP: [`router`] wires the routes; [`auth`] verifies every `/v1` request's signature;
//!   the handlers parse a request, call the domain and answer: [`accounts`] (with the one
//!   extractor of a consented account, [`accounts::Consented`]), [`cards`], [`consent`],
//!   [`psu`], [`customers`], [`manage`], [`payments`], [`baskets`], [`batch`]; [`sca`],
//!   [`payment_sca`] and [`pages`] are the SCA pages.
//! - Domain: [`domain`] holds the services the handlers share (access decisions, settlement,
//!   the customer and agreement views); [`model`] the plain domain types; [`ledger`]
//!   generates the transactions and computes balances; [`rules`] the cross-cutting rules.
//! - Store: [`store`] holds the state (all SQL; per-table modules under it), initialized from
//!   [`seed`], on [`db`]; [`clock`] is the injectable time source.
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
//! | GET, POST | `/payment-sca/{token}`, `/login`, `/decision` | payment and basket SCA pages ([`payment_sca`]; `token`: [`sca_pages`]) |
//! | GET | `/sca/{token}` | SCA page (not signed; `token`: [`sca_pages`], never the authorisation id) |
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

pub mod bundle;
pub mod clock;
pub mod domain;
pub mod errors;
pub mod http;
pub mod model;
pub mod store;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use clock::Clock;

use crate::signing::{Verifier, VerifyPolicy};
use domain::access;
use domain::{events, seed};
use errors::ApiError;
use http::{
    access_log, accounts, auth, baskets, batch, cards, consent, customers, faults, health,
    identity, manage, observe, operator, pages, payment_sca, payments, psu, reads, replay, sca,
    sca_pages, serve, snapshot, state, subscribe,
};
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
}

/// Shared state of the handlers.
pub struct App {
    pub clock: Clock,
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
    /// The key of the SCA page addresses ([`sca_pages`]).
    pub sca_pages: sca_pages::PageKeys,
    /// What `POST /v1/sandbox/initialize` resets to ([`SandboxConfig::seed`], else the
    /// built-in [`seed`]).
    pub seed: model::SeedData,
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
        let sca_pages = sca_pages::PageKeys::load(&db).map_err(open_error)?;
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
            (db::Storage::File(f), false) => {
                Some(replay::ReplayGuard::persistent(f, max_skew).map_err(open_error)?)
            }
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
            events: events::Events::default(),
            identity: config.identity,
            operator_token: config.operator_token,
            sca_pages,
            seed: config.seed.unwrap_or_else(seed::seed),
        })
    }
}

/// Schema steps of every module's tables, applied in order (see [`db::Db::migrate`]).
pub const MIGRATIONS: &[db::Migration] = &[
    store::MIGRATION,
    store::unattended::MIGRATION,
    store::access::PSU_MIGRATION,
    store::access::CARDS_MIGRATION,
    store::access::CONSENT_MIGRATION,
    store::payments::MIGRATION,
    store::sca_browsers::MIGRATION,
    store::faults::MIGRATION,
    sca_pages::MIGRATION,
    store::tenancy::MIGRATION,
    // Last: indexes over the tables above (issue 20, finding 4).
    store::indexes::MIGRATION,
];

/// The sandbox's routes over its state. Absolute links (`scaRedirect`) start with
/// [`SandboxConfig::public_url`], never with the request's `Host`.
///
/// Errors: the state database cannot be opened.
pub fn router(config: SandboxConfig) -> Result<Router, db::DbOpenError> {
    let observer = config.observer.clone();
    let app = Arc::new(App::new(config)?);
    let router = Router::new()
        .route("/", get(home))
        .route("/v1/accounts", get(accounts::list))
        .route("/v1/accounts/{id}", get(accounts::one))
        .route("/v1/accounts/{id}/balances", get(accounts::balances))
        .route(
            "/v1/accounts/{id}/transactions",
            get(accounts::transactions),
        )
        .route("/v1/sandbox/customers", get(customers::list))
        .route("/v1/sandbox/customers/{id}", get(customers::one))
        .merge(manage::routes())
        .merge(accounts::routes())
        .merge(cards::routes())
        .merge(consent::routes())
        .merge(psu::routes())
        .merge(payments::routes())
        .merge(baskets::routes())
        .merge(batch::routes())
        .merge(faults::routes())
        .route("/v1/sandbox/events", get(subscribe::stream))
        .merge(snapshot::routes())
        .merge(state::routes())
        .merge(identity::routes())
        .merge(health::routes())
        .merge(payment_sca::routes())
        .route("/sca/{id}", get(sca::show))
        .route("/sca/{id}/login", post(sca::login))
        .route("/sca/{id}/context", post(sca::context))
        .route("/sca/{id}/consent", post(sca::consent))
        .route("/sca/{id}/cancel", post(sca::cancel))
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            faults::inject,
        ))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            auth::verify_v1,
        ))
        .layer(axum::middleware::from_fn(serve::body_in_time))
        .with_state(app.clone());
    // The SCA page layer rewrites the path (token to authorisation id), so it runs before
    // the routes are matched: around the routed router as a fallback service (a
    // `Router::layer` middleware runs after routing), inside the access log (which sees the
    // token path and the page's owner).
    let router = Router::new()
        .fallback_service(router)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            sca_pages::translate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            app,
            access_log::log_request,
        ));
    Ok(match observer {
        Some(o) => router.layer(axum::middleware::from_fn(move |req, next| {
            observe::observe(o.clone(), req, next)
        })),
        None => router,
    })
}

async fn home(axum::extract::State(app): axum::extract::State<Arc<App>>) -> pages::Page {
    pages::Page {
        status: StatusCode::OK,
        html: pages::home(&app.public_url),
    }
}

/// Whether `path` looks like another version of the API (`/v2/...`): answered with a Berlin
/// Group body, not an HTML page, so API clients get a machine-readable 404.
fn is_other_api_version(path: &str) -> bool {
    let rest = path.strip_prefix("/v").unwrap_or("");
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && (rest.len() == digits || rest.as_bytes()[digits] == b'/')
}

async fn not_found(uri: Uri) -> Response {
    if auth::is_v1(uri.path()) {
        ApiError::not_found(format!("no resource at {}", uri.path())).into_response()
    } else if is_other_api_version(uri.path()) {
        ApiError::not_found(format!(
            "no resource at {}: this sandbox serves the /v1/ interface of the interface document (Versioning: paths are prefixed /v1/)",
            uri.path()
        ))
        .into_response()
    } else {
        pages::error(
            StatusCode::NOT_FOUND,
            "Page not found",
            "There is no page at this address.",
        )
        .into_response()
    }
}

async fn method_not_allowed(method: axum::http::Method, uri: Uri) -> Response {
    if auth::is_v1(uri.path()) {
        ApiError::method_not_allowed(format!("{method} is not supported on {}", uri.path()))
            .into_response()
    } else {
        pages::error(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method not allowed",
            "This page cannot be used that way.",
        )
        .into_response()
    }
}

/// A running sandbox: where it listens, and how to stop it.
pub struct SandboxHandle {
    /// The bound address (the real port when asked for port 0).
    pub addr: SocketAddr,
    /// `http://{addr}`.
    pub base_url: String,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl SandboxHandle {
    /// Stops accepting, lets open requests finish (at most 5 s), and waits for the server.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(());
        let mut task = self.task;
        if tokio::time::timeout(std::time::Duration::from_secs(5), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
}

/// Binds `addr` (e.g. `127.0.0.1:0`) and serves the sandbox in a tokio task, with the
/// timeouts of [`serve`]. Links use `http://{bound address}` unless `config.public_url` is
/// set.
///
/// Errors: binding fails.
pub async fn spawn(addr: SocketAddr, mut config: SandboxConfig) -> std::io::Result<SandboxHandle> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (tx, rx) = oneshot::channel::<()>();
    config
        .public_url
        .get_or_insert_with(|| format!("http://{addr}"));
    let app = router(config).map_err(std::io::Error::other)?;
    let task = tokio::spawn(serve::serve(listener, app, async move {
        let _ = rx.await;
    }));
    Ok(SandboxHandle {
        addr,
        base_url: format!("http://{addr}"),
        shutdown: tx,
        task,
    })
}

/// Binds `addr` and serves the sandbox until the process ends (`psd2-console sandbox serve`),
/// with the timeouts of [`serve`]. Links use `http://{bound address}` unless
/// `config.public_url` is set (`--public-url`).
///
/// Errors: binding or serving fails.
pub async fn serve_forever(addr: SocketAddr, mut config: SandboxConfig) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tracing::info!(addr = %bound, "sandbox ASPSP listening");
    config
        .public_url
        .get_or_insert_with(|| format!("http://{bound}"));
    let app = router(config).map_err(std::io::Error::other)?;
    serve::serve(listener, app, std::future::pending()).await
}
