//! The route table of the sandbox ([`router`]): every route with its handler, the
//! middleware around them (signature check, fault injection, SCA page addresses, access log,
//! observer), and the answers to unknown paths and methods.

use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, Uri};
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

/// The sandbox's routes over its state. Absolute links (`scaRedirect`) start with
/// [`SandboxConfig::public_url`], never with the request's `Host`.
///
/// Errors: the state database cannot be opened.
pub fn router(config: SandboxConfig) -> Result<Router, db::DbOpenError> {
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
    let router = resources
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
    // Everything that runs around the routes, in one middleware ([`per_request`]): the SCA
    // page layer rewrites the path (token to authorisation id), so it runs before the
    // routes are matched: around the routed router as a fallback service (a `Router::layer`
    // middleware runs after routing).
    let router = Router::new()
        .fallback_service(router)
        .layer(axum::middleware::from_fn_with_state(app, per_request));
    Ok(match observer {
        Some(o) => router.layer(axum::middleware::from_fn(move |req, next| {
            observe::observe(o.clone(), req, next)
        })),
        None => router,
    })
}

/// The one middleware around the routes: the steps every request goes through, outermost
/// first, each a plain `async fn` handed the rest as a continuation (one axum `from_fn`
/// layer instead of five: each layer clones its inner service and boxes a future per
/// request, issue 23):
///
/// 1. the access log ([`access_log::log_request`]: it sees the SCA page's token path and
///    the page's owner);
/// 2. on a shared PostgreSQL database only, the clock offsets other instances wrote
///    ([`App::sync_clock`]), before anything reads the clock;
/// 3. the SCA page addresses ([`sca_pages::translate`], before the routes are matched);
/// 4. the body read within its time ([`serve::body_in_time`]);
/// 5. the signature check of `/v1` ([`auth::verify_v1`]);
/// 6. the request faults ([`faults::inject`]);
/// 7. the routes (`next`).
async fn per_request(
    axum::extract::State(app): axum::extract::State<Arc<App>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let app = &*app;
    access_log::log_request(app, req, move |req| async move {
        if app.db.postgres_url().is_some() {
            app.sync_clock();
        }
        sca_pages::translate(app, req, move |req| {
            serve::body_in_time(req, move |req| {
                // Boxed, so the steps above hold a pointer instead of the nested futures
                // (which were copied whole at every step: memcpy per request).
                Box::pin(auth::verify_v1(app, req, move |req| {
                    Box::pin(faults::inject(app, req, move |req| next.run(req)))
                }))
            })
        })
        .await
    })
    .await
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
