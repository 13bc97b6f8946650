//! `GET /healthz` (the process answers) and `GET /readyz` (it can serve: database reachable,
//! catalog loaded, not shutting down).

use std::time::Duration;

use axum::{Json, extract::State};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::{ApiError, ErrorBody};
use crate::http::state::AppState;

/// How long readiness waits for the database before calling it unreachable; well under the
/// probe timeouts Kubernetes uses by default.
const PING_TIMEOUT: Duration = Duration::from_secs(2);

/// The health routes.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
}

/// Liveness: the process is up and answering.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "health",
    responses((status = 200, description = "The process is up", body = String, content_type = "text/plain", example = "ok"))
)]
pub(crate) async fn healthz() -> &'static str {
    "ok"
}

/// What readiness found.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Readiness {
    /// Always `ready` in a 200 answer.
    pub status: &'static str,
    /// `sqlite` or `postgres`.
    pub database: &'static str,
    /// Hash of the catalog in force.
    pub catalog_hash: String,
    /// The catalog's git revision, when read from git.
    pub catalog_revision: Option<String>,
    /// Which replica answers (`MIRANTE_WORKER_ID`, by default the host name); what every
    /// replica serves is `GET /api/v1/replicas`.
    pub replica: String,
}

/// Readiness: the database answers and a catalog is in force.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "health",
    responses(
        (status = 200, description = "Ready to serve", body = Readiness),
        (status = 503, description = "Not ready, or shutting down; `error` says which", body = ErrorBody),
    )
)]
pub(crate) async fn readyz(State(state): State<AppState>) -> Result<Json<Readiness>, ApiError> {
    if state.draining.load(std::sync::atomic::Ordering::SeqCst) {
        // Shutting down: the load balancer stops sending requests here, while those it
        // still sends are served until the listener closes.
        return Err(ApiError::Unavailable("shutting down".to_owned()));
    }
    match tokio::time::timeout(PING_TIMEOUT, state.db.ping()).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            tracing::warn!(%error, "readiness: database ping failed");
            return Err(ApiError::Unavailable("database unreachable".to_owned()));
        }
        Err(_) => {
            tracing::warn!(
                timeout.secs = PING_TIMEOUT.as_secs(),
                "readiness: database ping timed out"
            );
            return Err(ApiError::Unavailable("database unreachable".to_owned()));
        }
    }
    let current = state.catalog.current();
    if current.snapshot.hash.is_empty() {
        return Err(ApiError::Unavailable("no catalog loaded".to_owned()));
    }
    Ok(Json(Readiness {
        status: "ready",
        database: match state.db.backend() {
            crate::adapters::db::Backend::Sqlite => "sqlite",
            crate::adapters::db::Backend::Postgres => "postgres",
        },
        catalog_hash: current.snapshot.hash.clone(),
        catalog_revision: current.snapshot.revision.clone(),
        replica: state.config.worker_id(),
    }))
}
