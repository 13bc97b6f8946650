//! The catalog's reference lists: sites, layers, decisions, tasks, and the overview matrix.

use std::sync::Arc;

use axum::{
    Json,
    extract::{RawQuery, State},
    response::{IntoResponse, Response},
};
use mirante_domain::{Decision, Host, Layer, Site, Task};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{query::Params, schema};
use crate::http::error::{ApiError, ErrorBody};
use crate::{app::catalog::CatalogStore, http::state::AppState};

/// The reference routes.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_sites))
        .routes(routes!(list_layers))
        .routes(routes!(list_decisions))
        .routes(routes!(list_tasks))
        .routes(routes!(overview))
}

/// A site with the hosts the catalog places there.
#[derive(Debug, Serialize)]
pub(crate) struct SiteView<'a> {
    /// The site.
    #[serde(flatten)]
    pub site: &'a Site,
    /// Its hosts.
    pub hosts: Vec<&'a Host>,
}

/// Every site.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SiteList<'a> {
    /// Sites, in catalog order.
    #[schema(value_type = Vec<schema::Site>)]
    pub sites: Vec<SiteView<'a>>,
}

/// Sites and their hosts.
#[utoipa::path(
    get,
    path = "/api/v1/sites",
    tag = "catalog",
    responses(
        (status = 200, description = "Every site", body = SiteList),
        (status = 400, description = "A query parameter was given", body = ErrorBody),
    )
)]
pub(crate) async fn list_sites(
    State(catalog): State<Arc<CatalogStore>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let snapshot = catalog.current().snapshot.clone();
    let c = snapshot.catalog();
    let sites = c
        .sites
        .iter()
        .map(|site| SiteView {
            site,
            hosts: c.hosts.iter().filter(|h| h.site == site.id).collect(),
        })
        .collect();
    Ok(Json(SiteList { sites }).into_response())
}

/// Every layer and capability.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LayerList<'a> {
    /// Ordered layers (0–8 and sub-layers) bottom-up, then cross-cutting capabilities.
    #[schema(value_type = Vec<schema::Layer>)]
    pub layers: Vec<&'a Layer>,
}

/// Layers and cross-cutting capabilities.
#[utoipa::path(
    get,
    path = "/api/v1/layers",
    tag = "catalog",
    responses(
        (status = 200, description = "Every layer and capability", body = LayerList),
        (status = 400, description = "A query parameter was given", body = ErrorBody),
    )
)]
pub(crate) async fn list_layers(
    State(catalog): State<Arc<CatalogStore>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let snapshot = catalog.current().snapshot.clone();
    let layers = snapshot.catalog().layers.iter().collect();
    Ok(Json(LayerList { layers }).into_response())
}

/// Every decision.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DecisionList<'a> {
    /// Decisions, in catalog order.
    #[schema(value_type = Vec<schema::Decision>)]
    pub decisions: Vec<&'a Decision>,
}

/// The architectural decisions (the ADR table).
#[utoipa::path(
    get,
    path = "/api/v1/decisions",
    tag = "catalog",
    responses(
        (status = 200, description = "Every decision", body = DecisionList),
        (status = 400, description = "A query parameter was given", body = ErrorBody),
    )
)]
pub(crate) async fn list_decisions(
    State(catalog): State<Arc<CatalogStore>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let snapshot = catalog.current().snapshot.clone();
    let decisions = snapshot.catalog().decisions.iter().collect();
    Ok(Json(DecisionList { decisions }).into_response())
}

/// Every pending task.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TaskList<'a> {
    /// Tasks and open decisions, in catalog order.
    #[schema(value_type = Vec<schema::Task>)]
    pub tasks: Vec<&'a Task>,
}

/// Pending tasks and open decisions.
#[utoipa::path(
    get,
    path = "/api/v1/tasks",
    tag = "catalog",
    responses(
        (status = 200, description = "Every pending task", body = TaskList),
        (status = 400, description = "A query parameter was given", body = ErrorBody),
    )
)]
pub(crate) async fn list_tasks(
    State(catalog): State<Arc<CatalogStore>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let snapshot = catalog.current().snapshot.clone();
    let tasks = snapshot.catalog().tasks.iter().collect();
    Ok(Json(TaskList { tasks }).into_response())
}

/// The layers × sites matrix with counts per state.
#[utoipa::path(
    get,
    path = "/api/v1/overview",
    tag = "catalog",
    responses(
        (status = 200, description = "Counts per layer, site and state", body = schema::Overview),
        (status = 400, description = "A query parameter was given", body = ErrorBody),
    )
)]
pub(crate) async fn overview(
    State(catalog): State<Arc<CatalogStore>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let snapshot = catalog.current().snapshot.clone();
    Ok(Json(snapshot.overview()).into_response())
}
