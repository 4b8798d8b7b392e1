//! Liveness and readiness of the sandbox for CI and orchestrators (issues 21 and 22): unsigned
//! routes outside `/v1`. Neither document defines them; they are what a service behind a
//! load balancer or in a CI job offers (Kubernetes' liveness and readiness probes):
//!
//! | Method | Path | Answer |
//! |---|---|---|
//! | GET | `/health` | 200 `{"status":"UP"}` while the process serves HTTP |
//! | GET | `/ready` | 200 `{"status":"READY","migrations":N,"database":"sqlite"|"postgresql"}` when the database (SQLite or PostgreSQL) answers, every migration of [`crate::sandbox::MIGRATIONS`] is applied and the state is initialized; else 503 `{"status":"NOT_READY","reason":..}` |
//!
//! `sandbox serve --ready-file PATH` writes its file once `/ready` would answer 200.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::sandbox::App;

/// The liveness route.
pub const HEALTH_PATH: &str = "/health";

/// The readiness route.
pub const READY_PATH: &str = "/ready";

/// The two routes (merged into [`crate::sandbox::router`]).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(HEALTH_PATH, get(health))
        .route(READY_PATH, get(ready))
}

async fn health() -> Json<serde_json::Value> {
    Json(json!({"status": "UP"}))
}

/// Why the sandbox is not ready, or the number of applied migrations.
///
/// Errors: the database does not answer, a migration is missing, or the state was never
/// initialized (the reason in words).
pub fn readiness(app: &App) -> Result<usize, String> {
    let (applied, initialized) = app
        .db
        .read_raw(|c| {
            let names: Vec<String> = c
                .prepare("SELECT name FROM schema_migrations")?
                .query_map([], |r| r.get(0))?
                .collect::<crate::sandbox::store::sql::Result<_>>()?;
            let initialized: bool = c.query_row(
                "SELECT EXISTS(SELECT 1 FROM sandbox_meta WHERE key = 'initialized_at')",
                [],
                |r| r.get(0),
            )?;
            Ok((names, initialized))
        })
        .map_err(|e| format!("the database does not answer: {e}"))?;
    if let Some((name, _)) = crate::sandbox::MIGRATIONS
        .iter()
        .find(|(name, _)| !applied.iter().any(|a| a == name))
    {
        return Err(format!("migration {name} is not applied"));
    }
    if !initialized {
        return Err("the sandbox state is not initialized".into());
    }
    Ok(crate::sandbox::MIGRATIONS.len())
}

async fn ready(State(app): State<Arc<App>>) -> Response {
    match readiness(&app) {
        Ok(n) => Json(json!({
            "status": "READY",
            "migrations": n,
            "database": match app.db.backend() {
                crate::sandbox::store::sql::Backend::Sqlite => "sqlite",
                crate::sandbox::store::sql::Backend::Postgres => "postgresql",
            },
        }))
        .into_response(),
        Err(reason) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "NOT_READY", "reason": reason})),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{MIGRATIONS, SandboxConfig};

    #[test]
    fn ready_only_with_every_migration_applied_and_the_state_initialized() {
        let app = App::new(SandboxConfig::default()).unwrap();
        assert_eq!(readiness(&app), Ok(MIGRATIONS.len()));
        app.db
            .write_raw(|tx| tx.execute("DELETE FROM sandbox_meta WHERE key = 'initialized_at'", []))
            .unwrap();
        assert!(readiness(&app).unwrap_err().contains("not initialized"));
        app.db
            .write_raw(|tx| {
                tx.execute(
                    "DELETE FROM schema_migrations WHERE name = ?1",
                    [MIGRATIONS[0].0],
                )
            })
            .unwrap();
        let why = readiness(&app).unwrap_err();
        assert!(
            why.contains(MIGRATIONS[0].0) && why.contains("not applied"),
            "{why}"
        );
    }
}
