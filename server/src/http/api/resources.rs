//! Resources over JSON: what the self-service requests made. Owners see theirs, admins all;
//! [`SelfService`] applies that rule, the route-level one is in `http::auth::policy::ROUTES`.

use std::sync::Arc;

use crate::http::auth::Principal;
use axum::{
    Extension, Json,
    extract::{RawQuery, State},
};
use mirante_domain::resource::{Resource, ResourceDetail, ResourceFilter, ResourceState};
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
        .routes(routes!(template_updates))
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

/// A resource, with the version of its template its files were rendered with and the update
/// its template offers since (`update`: `null`, or the files that change with their diffs);
/// 404 for one the caller may not see.
#[utoipa::path(
    get,
    path = "/api/v1/resources/{id}",
    tag = "self-service",
    params(("id" = i64, Path, description = "Resource id (the request that created it)")),
    responses(
        (status = 200, description = "The resource", body = schema::ResourceDetail),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "No such resource, or not the caller's", body = ErrorBody),
        (status = 503, description = "The forge is unavailable (the update is checked on the base branch)", body = ErrorBody),
    )
)]
pub(crate) async fn get_resource(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<ResourceDetail>, ApiError> {
    Ok(Json(service.resource_detail(&principal, id).await?))
}

/// The resources of one template that its current version would change (admins).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TemplateUpdates {
    /// Each resource with its update, newest first.
    #[schema(value_type = Vec<schema::ResourceDetail>)]
    resources: Vec<ResourceDetail>,
}

/// The resources made from a template that its current version renders differently (admins):
/// each with the files that change and their diffs. The owner or an admin proposes one as
/// an update request with no values (`POST /api/v1/resources/{id}/requests`,
/// `{"kind": "update"}`), plus the parameters `needs` names, if any.
#[utoipa::path(
    get,
    path = "/api/v1/templates/{id}/updates",
    tag = "self-service",
    params(("id" = String, Path, description = "Template id")),
    responses(
        (status = 200, description = "The resources with an update", body = TemplateUpdates),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an admin", body = ErrorBody),
        (status = 404, description = "No such template", body = ErrorBody),
        (status = 503, description = "The forge is unavailable", body = ErrorBody),
    )
)]
pub(crate) async fn template_updates(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<TemplateUpdates>, ApiError> {
    Ok(Json(TemplateUpdates {
        resources: service.template_updates(&principal, &id).await?,
    }))
}
