//! The route table of the sandbox ([`router`]): every route with its handler, the steps
//! around them (signature check, fault injection, SCA page addresses, access log, observer;
//! [`Sandbox`]), and the answers to unknown paths and methods.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::sandbox::errors::ApiError;
use crate::sandbox::http::{
    access_log, accounts, auth, baskets, batch, cards, consent, customers, faults, health,
    identity, manage, observe, pages, payment_sca, payments, psu, sca, sca_pages, serve, snapshot,
    state, subscribe,
};
use crate::sandbox::store::db;
use crate::sandbox::{App, SandboxConfig};

/// The sandbox's routes over its state, with the steps every request goes through around
/// them, as one service ([`Sandbox`]; serve it with [`serve::serve_tls`]). Absolute links
/// (`scaRedirect`) start with [`SandboxConfig::public_url`], never with the request's `Host`.
///
/// Errors: the state database cannot be opened.
pub fn router(config: SandboxConfig) -> Result<Sandbox, db::DbOpenError> {
    let observer = config.observer.clone();
    let app = Arc::new(App::new(config)?);
    // The resources with their own route tables.
    let resources = [
        manage::routes(),
        accounts::routes(),
        cards::routes(),
        consent::routes(),
        psu::routes(),
        payments::routes(),
        baskets::routes(),
        batch::routes(),
        faults::routes(),
        snapshot::routes(),
        state::routes(),
        identity::routes(),
        health::routes(),
        payment_sca::routes(),
    ];
    let routes = resources
        .into_iter()
        .fold(Router::new(), Router::merge)
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
        .route("/v1/sandbox/events", get(subscribe::stream))
        .route("/sca/{id}", get(sca::show))
        .route("/sca/{id}/login", post(sca::login))
        .route("/sca/{id}/context", post(sca::context))
        .route("/sca/{id}/consent", post(sca::consent))
        .route("/sca/{id}/cancel", post(sca::cancel))
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(not_found)
        .with_state(app.clone());
    Ok(Sandbox(Arc::new(Inner {
        app,
        routes,
        observer,
    })))
}

/// The sandbox as one service ([`router`]): the steps every request goes through
/// ([`Inner::steps`]) around the routed router, as a `tower` service of our own. It was an
/// outer `Router` whose fallback service was the routed one, under an axum `from_fn` layer
/// (and the observer's): per request the outer router's route call, the layer's clone of
/// its inner service, a boxed `Next` and boxed futures (issue 23). Now: one reference count
/// and one boxed future per request, then the routed router matches the route once.
///
/// The answer is finished as the outer router's fallback finished it: `Content-Length` set
/// from the body's exact size when absent, and the body dropped for `HEAD`.
#[derive(Clone)]
pub struct Sandbox(Arc<Inner>);

struct Inner {
    app: Arc<App>,
    routes: Router,
    observer: Option<observe::ResponseObserver>,
}

impl<B> tower_service::Service<axum::http::Request<B>> for Sandbox
where
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: axum::http::Request<B>) -> Self::Future {
        let req = req.map(axum::body::Body::new);
        // The answer's own future, not one wrapped in another async block (which the
        // compiler filled by copying the answer's whole future into it once more).
        Box::pin(Inner::answer(self.0.clone(), req))
    }
}

impl Inner {
    /// The observer (when set) around [`Inner::steps`], then the answer finished. The
    /// observer's future (tests only) is boxed: this future, allocated and copied into its
    /// box per request, then holds only the steps' (r18/reads).
    async fn answer(self: Arc<Self>, req: Request) -> Result<Response, Infallible> {
        let head = req.method() == Method::HEAD;
        let mut response = match &self.observer {
            Some(o) => Box::pin(observe::observe(o, req, |req| self.steps(req))).await,
            None => self.steps(req).await,
        };
        set_content_length(&mut response);
        if head {
            *response.body_mut() = axum::body::Body::empty();
        }
        Ok(response)
    }

    /// The steps every request goes through, outermost first, each a function
    /// handed the rest as a continuation:
    ///
    /// 1. the access log ([`access_log::log_request`]: it sees the SCA page's token path and
    ///    the page's owner);
    /// 2. on a shared PostgreSQL database only, the clock offsets other instances wrote
    ///    ([`App::sync_clock`]), before anything reads the clock;
    /// 3. the SCA page addresses ([`sca_pages::translate`], before the routes are matched);
    /// 4. the body read within its time ([`serve::body_in_time`]);
    /// 5. the signature check of `/v1` ([`auth::verify_v1`]);
    /// 6. the request faults ([`faults::inject`]);
    /// 7. the routes.
    ///
    /// A plain function returning the access log's future, each step after it a plain
    /// closure returning the next one's future: no `async` block of their own, each of which
    /// held another copy of the request in the future allocated and copied per request
    /// (issue 23).
    fn steps(&self, req: Request) -> impl Future<Output = Response> + '_ {
        let app = &*self.app;
        access_log::log_request(app, req, move |req| {
            // Run when the access log has started its clock and calls on, as the first thing
            // of the rest.
            if app.db.postgres_url().is_some() {
                app.sync_clock();
            }
            sca_pages::translate(app, req, move |req| {
                serve::body_in_time(req, move |parts, body| {
                    // Each a plain function returning the next one's future (boxed only on
                    // their rare paths: a body to collect, request rules); the routes' future
                    // is boxed, so the steps above hold a pointer instead of it (copied whole
                    // at every step, and twice in each `async fn` that awaits it: memcpy per
                    // request, issue 23).
                    auth::verify_v1(app, parts, body, move |req| {
                        faults::inject(app, req, move |req| Box::pin(self.route(req)))
                    })
                })
            })
        })
    }

    /// The routed router's answer to `req` (its own future mapped, not awaited in an async
    /// block, which would hold it twice).
    fn route(&self, req: Request) -> impl Future<Output = Response> + use<> {
        use futures_util::FutureExt as _;
        tower_service::Service::call(&mut self.routes.clone(), req)
            .map(|r| r.unwrap_or_else(|never| match never {}))
    }
}

/// `Content-Length` from the body's exact size, unless the answer has one (as axum's
/// router does for the answers of its routes).
fn set_content_length(response: &mut Response) {
    use axum::body::HttpBody as _;
    if response.headers().contains_key(header::CONTENT_LENGTH) {
        return;
    }
    if let Some(size) = response.body().size_hint().exact() {
        response
            .headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    }
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
