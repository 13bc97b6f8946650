//! Resources over JSON: what the self-service requests made. Owners see theirs, admins all;
//! [`SelfService`] applies that rule, the route-level one is in `http::auth::policy::ROUTES`.

use std::sync::Arc;

use crate::http::auth::Principal;
use axum::{
    Extension, Json,
    extract::{RawQuery, State},
};
use mirante_domain::resource::{Resource, ResourceFilter, ResourceState};
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::query::Params;
use super::schema;
use crate::app::selfservice::service::SelfService;
use crate::http::error::{ApiError, ApiPath, ErrorBody};
use crate::http::state::AppState;

/// The resource routes.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_resources))
        .routes(routes!(get_resource))
}

/// Query parameters of `GET /api/v1/resources` (documentation; parsing is strict, see
/// [`parse_filter`]).
#[derive(Debug, Default, IntoParams)]
#[into_params(parameter_in = Query)]
#[expect(
    dead_code,
    reason = "fields are only described for OpenAPI; `parse_filter` reads the raw query"
)]
pub(crate) struct ResourceQuery {
    /// Only this owner's (username).
    #[param(example = "rui", min_length = 1)]
    owner: Option<String>,
    /// Only those made from this template.
    #[param(example = "gpu-workspace", min_length = 1)]
    template: Option<String>,
    /// Only those on this cluster (a catalog item id).
    #[param(example = "gpu-sp-01", min_length = 1)]
    cluster: Option<String>,
    /// Only those in this state.
    #[param(value_type = Option<schema::ResourceState>)]
    state: Option<String>,
}

const RESOURCE_PARAMS: &[&str] = &["owner", "template", "cluster", "state"];

/// The filter a query string asks for; unknown parameters and states are 400s.
fn parse_filter(raw: Option<&str>) -> Result<ResourceFilter, ApiError> {
    let params = Params::parse(raw, RESOURCE_PARAMS)?;
    let state = params.parse_with(
        "state",
        ResourceState::parse,
        &format!(
            "one of: {}",
            ResourceState::ALL.map(ResourceState::as_str).join(", ")
        ),
    )?;
    Ok(ResourceFilter {
        owner: params.get("owner").map(str::to_owned),
        template: params.get("template").map(str::to_owned),
        cluster: params.get("cluster").map(str::to_owned),
        state,
    })
}

/// The resources the caller may see.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ResourceList {
    /// Newest first.
    #[schema(value_type = Vec<schema::Resource>)]
    pub resources: Vec<Resource>,
}

/// Resources: researchers their own, admins everyone's, filtered.
#[utoipa::path(
    get,
    path = "/api/v1/resources",
    tag = "self-service",
    params(ResourceQuery),
    responses(
        (status = 200, description = "The resources the caller may see", body = ResourceList),
        (status = 400, description = "An unknown parameter or state", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
    )
)]
pub(crate) async fn list_resources(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    RawQuery(raw): RawQuery,
) -> Result<Json<ResourceList>, ApiError> {
    let filter = parse_filter(raw.as_deref())?;
    Ok(Json(ResourceList {
        resources: service.resources(&principal, &filter).await?,
    }))
}

/// A resource; 404 for one the caller may not see.
#[utoipa::path(
    get,
    path = "/api/v1/resources/{id}",
    tag = "self-service",
    params(("id" = i64, Path, description = "Resource id (the request that created it)")),
    responses(
        (status = 200, description = "The resource", body = schema::Resource),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "No such resource, or not the caller's", body = ErrorBody),
    )
)]
pub(crate) async fn get_resource(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<Resource>, ApiError> {
    Ok(Json(service.resource(&principal, id).await?))
}
