//! `GET /api/v1/catalog` (what is in force and what went wrong last),
//! `POST /api/v1/catalog/reload` (on every replica), and `GET /api/v1/replicas` (which catalog
//! each replica serves).

use std::{net::SocketAddr, sync::Arc};

use axum::{
    Extension, Json,
    extract::{ConnectInfo, RawQuery, State},
};
use chrono::{DateTime, Utc};
use mirante_domain::diagnostic::Diagnostic;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{query::Params, schema};
use crate::http::error::{ApiError, ErrorBody};
use crate::{
    app::catalog::{CatalogSource, CatalogStore, ReloadOutcome, ReloadTrigger},
    http::auth::Principal,
    http::state::AppState,
};

/// The catalog routes.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(reload))
        .routes(routes!(replicas))
}

/// The catalog in force and the last reload error.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CatalogStatus {
    /// SHA-256 over the catalog files, hex.
    pub hash: String,
    /// Source revision (a git commit), when known.
    pub revision: Option<String>,
    /// When this process put the catalog in force.
    pub loaded_at: DateTime<Utc>,
    /// Number of items.
    pub item_count: usize,
    /// Where the catalog is read from.
    #[schema(value_type = schema::CatalogSource)]
    pub source: CatalogSource,
    /// The last reload that failed, until one succeeds; `null` when the last one succeeded.
    pub last_error: Option<LastError>,
}

/// A reload that was refused.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LastError {
    /// When.
    pub at: DateTime<Utc>,
    /// What caused the reload.
    #[schema(value_type = schema::ReloadTrigger)]
    pub trigger: ReloadTrigger,
    /// Every problem found, with its position.
    #[schema(value_type = Vec<schema::Diagnostic>)]
    pub diagnostics: Vec<Diagnostic>,
}

impl CatalogStatus {
    /// The status of a store now, as `viewer` may read it: where on the server's disk the
    /// catalog lies is for admins; others read the folder's name alone.
    pub(crate) fn of(store: &CatalogStore, admin: bool) -> Self {
        let current = store.current();
        let source = if admin {
            store.source().clone()
        } else {
            store.source().without_server_paths()
        };
        CatalogStatus {
            hash: current.snapshot.hash.clone(),
            revision: current.snapshot.revision.clone(),
            loaded_at: current.loaded_at,
            item_count: current.snapshot.catalog().items.len(),
            source,
            last_error: store.last_error().map(|e| LastError {
                at: e.at,
                trigger: e.trigger,
                diagnostics: e.diagnostics.0,
            }),
        }
    }
}

/// What the catalog in force is, and the last reload error.
#[utoipa::path(
    get,
    path = "/api/v1/catalog",
    tag = "catalog",
    responses(
        (status = 200, description = "The catalog in force", body = CatalogStatus),
        (status = 400, description = "A query parameter was given", body = ErrorBody),
    )
)]
pub(crate) async fn status(
    State(catalog): State<Arc<CatalogStore>>,
    principal: Option<Extension<Principal>>,
    RawQuery(raw): RawQuery,
) -> Result<Json<CatalogStatus>, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let admin = principal.is_some_and(|p| p.viewer.role == mirante_domain::Role::Admin);
    Ok(Json(CatalogStatus::of(&catalog, admin)))
}

/// Whether a reload changed the catalog.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// A new catalog is in force.
    Updated,
    /// The source has the content already in force.
    Unchanged,
}

/// The answer to a successful reload.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ReloadResponse {
    /// Whether the catalog changed.
    pub outcome: Outcome,
    /// Hash of the catalog replaced, when it changed.
    pub previous_hash: Option<String>,
    /// The catalog now in force.
    pub catalog: CatalogStatus,
}

/// Reads the catalog source again and puts it in force if it is valid; the other replicas
/// follow within a few seconds (`GET /api/v1/replicas` shows what each serves).
///
/// Admins only (the policy in `http::auth::policy` decides; see ADR 0003). A catalog with problems is refused whole with 422 and every problem
/// with its file, line and column; the last good catalog stays in force.
#[utoipa::path(
    post,
    path = "/api/v1/catalog/reload",
    tag = "catalog",
    responses(
        (status = 200, description = "The catalog was read; it changed or was already in force", body = ReloadResponse),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Signed in without the admin role", body = ErrorBody),
        (status = 422, description = "The catalog has problems; `details` lists them; the last good catalog stays", body = ErrorBody),
    )
)]
pub(crate) async fn reload(
    State(catalog): State<Arc<CatalogStore>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(principal): Extension<Principal>,
    RawQuery(raw): RawQuery,
) -> Result<Json<ReloadResponse>, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let outcome = catalog
        .reload(ReloadTrigger::Api {
            user: principal.viewer.username,
            peer: peer.ip().to_canonical(),
        })
        .await?;
    let (outcome, previous_hash) = match outcome {
        ReloadOutcome::Updated { previous, .. } => (Outcome::Updated, Some(previous)),
        ReloadOutcome::Unchanged { .. } => (Outcome::Unchanged, None),
    };
    Ok(Json(ReloadResponse {
        outcome,
        previous_hash,
        catalog: CatalogStatus::of(&catalog, true),
    }))
}

/// What one replica serves, as it last wrote it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Replica {
    /// The replica (`MIRANTE_WORKER_ID`, by default the host name).
    pub id: String,
    /// Hash of the catalog it has in force.
    pub catalog_hash: String,
    /// The catalog's git revision, when read from git.
    pub catalog_revision: Option<String>,
    /// When it loaded that catalog.
    pub catalog_loaded_at: DateTime<Utc>,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// When it last wrote this (every few seconds while it runs).
    pub seen_at: DateTime<Utc>,
    /// Whether it serves the same catalog as the replica answering.
    pub agrees: bool,
    /// Whether it is the replica answering.
    pub this: bool,
}

/// The replicas seen in the last minute.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Replicas {
    /// By id.
    pub replicas: Vec<Replica>,
}

/// Which catalog each replica of the portal serves: those that wrote in the last minute.
///
/// Admins only. A reload asked of one replica reaches the others within their next
/// heartbeat (`MIRANTE_REPLICA_HEARTBEAT_SECS`); a replica whose `agrees` stays false has a
/// catalog it cannot read.
#[utoipa::path(
    get,
    path = "/api/v1/replicas",
    tag = "catalog",
    responses(
        (status = 200, description = "The replicas seen in the last minute", body = Replicas),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Signed in without the admin role", body = ErrorBody),
    )
)]
pub(crate) async fn replicas(
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Replicas>, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let ours = state.catalog.snapshot();
    let this = state.config.worker_id();
    let seen = state
        .db
        .replicas_seen_since(Utc::now() - chrono::Duration::minutes(1))
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    Ok(Json(Replicas {
        replicas: seen
            .into_iter()
            .map(|r| Replica {
                agrees: r.catalog_hash == ours.hash,
                this: r.id == this,
                id: r.id,
                catalog_hash: r.catalog_hash,
                catalog_revision: r.catalog_revision,
                catalog_loaded_at: r.catalog_loaded_at,
                started_at: r.started_at,
                seen_at: r.seen_at,
            })
            .collect(),
    }))
}
