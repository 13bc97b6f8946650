//! `GET /api/v1/items` and `GET /api/v1/items/{id}`.

use std::sync::Arc;

use axum::{
    Json,
    extract::{RawQuery, State},
    response::{IntoResponse, Response},
};
use mirante_domain::{Decision, Item, ItemFilter, Qualifier, Snapshot, State as ItemState, Task};
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{query::Params, schema};
use crate::http::error::{ApiError, ApiPath, ErrorBody, quoted};
use crate::{app::catalog::CatalogStore, http::state::AppState};

/// Page size when `limit` is not given.
pub(crate) const DEFAULT_LIMIT: usize = 50;
/// Largest page a client may ask for.
pub(crate) const MAX_LIMIT: usize = 1000;

/// The item routes.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_items))
        .routes(routes!(get_item))
}

/// Query parameters of `GET /api/v1/items` (documentation; parsing is strict, see
/// [`ItemQuery::parse`]).
#[derive(Debug, Default, IntoParams)]
#[into_params(parameter_in = Query)]
#[expect(
    dead_code,
    reason = "fields are only described for OpenAPI; `parse` reads the raw query"
)]
pub(crate) struct ItemQuery {
    /// Site id; matches the items that list the site (platform-wide items list none).
    #[param(example = "sp", min_length = 1)]
    site: Option<String>,
    /// Layer id; a layer matches its sub-layers (`l8` matches `l8a`).
    #[param(example = "l2", min_length = 1)]
    layer: Option<String>,
    /// State.
    #[param(value_type = Option<schema::State>)]
    state: Option<ItemState>,
    /// Qualifier.
    #[param(value_type = Option<schema::Qualifier>)]
    qualifier: Option<Qualifier>,
    /// Words searched in id, name, notes and tags, case and accents folded: every word must
    /// appear, in any order and any of those fields.
    #[param(min_length = 1)]
    q: Option<String>,
    /// Page size, 0 to 1000.
    #[param(default = 50, maximum = 1000)]
    limit: Option<usize>,
    /// Items to skip.
    #[param(default = 0)]
    offset: Option<usize>,
}

const ITEM_PARAMS: &[&str] = &[
    "site",
    "layer",
    "state",
    "qualifier",
    "q",
    "limit",
    "offset",
];

impl ItemQuery {
    /// Parses and checks a query string against the snapshot: unknown parameters, values
    /// outside an enumeration, and site or layer ids the catalog does not have are 400s.
    pub(crate) fn parse(
        raw: Option<&str>,
        snapshot: &Snapshot,
    ) -> Result<(ItemFilter, usize, usize), ApiError> {
        let params = Params::parse(raw, ITEM_PARAMS)?;
        let state = params.parse_with(
            "state",
            ItemState::parse,
            &one_of(ItemState::ALL.map(ItemState::as_str)),
        )?;
        let qualifier = params.parse_with(
            "qualifier",
            Qualifier::parse,
            &one_of(Qualifier::ALL.map(Qualifier::as_str)),
        )?;
        let site = params.get("site").map(str::to_owned);
        if let Some(site) = &site
            && snapshot.site(site).is_none()
        {
            let known: Vec<&str> = snapshot
                .catalog()
                .sites
                .iter()
                .map(|s| s.id.as_str())
                .collect();
            return Err(ApiError::BadRequest(format!(
                "unknown site {}; the catalog has: {}",
                quoted(site),
                known.join(", ")
            )));
        }
        let layer = params.get("layer").map(str::to_owned);
        if let Some(layer) = &layer
            && snapshot.layer(layer).is_none()
        {
            return Err(ApiError::BadRequest(format!(
                "unknown layer {}; see GET /api/v1/layers for the layer ids",
                quoted(layer)
            )));
        }
        let limit = params
            .parse_with(
                "limit",
                |v| v.parse::<usize>().ok().filter(|n| *n <= MAX_LIMIT),
                "an integer from 0 to 1000",
            )?
            .unwrap_or(DEFAULT_LIMIT);
        let offset = params
            .parse_with(
                "offset",
                |v| v.parse::<usize>().ok(),
                "a non-negative integer",
            )?
            .unwrap_or(0);
        let filter = ItemFilter {
            site,
            layer,
            state,
            qualifier,
            q: params.get("q").map(str::to_owned),
        };
        Ok((filter, limit, offset))
    }
}

fn one_of<const N: usize>(values: [&str; N]) -> String {
    format!("one of: {}", values.join(", "))
}

/// A page of items.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ItemPage<'a> {
    /// The items of this page, by layer (ordered layers bottom-up, then capabilities) and
    /// as written within a layer.
    #[schema(value_type = Vec<schema::Item>)]
    pub items: Vec<&'a Item>,
    /// How many items match, over all pages.
    pub total: usize,
    /// Page size used.
    pub limit: usize,
    /// Items skipped.
    pub offset: usize,
}

/// Items, filtered and paginated.
#[utoipa::path(
    get,
    path = "/api/v1/items",
    tag = "catalog",
    params(ItemQuery),
    responses(
        (status = 200, description = "A page of matching items", body = ItemPage),
        (status = 400, description = "Unknown parameter, bad value, or unknown site or layer", body = ErrorBody),
    )
)]
pub(crate) async fn list_items(
    State(catalog): State<Arc<CatalogStore>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let snapshot = catalog.current().snapshot.clone();
    let (filter, limit, offset) = ItemQuery::parse(raw.as_deref(), &snapshot)?;
    let page = snapshot.page_items(&filter, offset, limit);
    // Serialized here, while the snapshot is borrowed, so items are not cloned.
    Ok(Json(ItemPage {
        items: page.items,
        total: page.total,
        limit,
        offset,
    })
    .into_response())
}

/// An item with what relates to it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ItemDetail<'a> {
    /// The item.
    #[schema(value_type = schema::Item)]
    pub item: &'a Item,
    /// Ids of the items that depend on it.
    pub dependents: Vec<&'a str>,
    /// Pending tasks that name it.
    #[schema(value_type = Vec<schema::Task>)]
    pub tasks: Vec<&'a Task>,
    /// Decisions that shape it (those it names and those that name it).
    #[schema(value_type = Vec<schema::Decision>)]
    pub decisions: Vec<&'a Decision>,
}

/// One item, its dependents, tasks and decisions.
#[utoipa::path(
    get,
    path = "/api/v1/items/{id}",
    tag = "catalog",
    params(("id" = String, Path, description = "Item id", example = "linstor-sp-ssd")),
    responses(
        (status = 200, description = "The item", body = ItemDetail),
        (status = 404, description = "No item with that id", body = ErrorBody),
    )
)]
pub(crate) async fn get_item(
    State(catalog): State<Arc<CatalogStore>>,
    ApiPath(id): ApiPath<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let snapshot = catalog.current().snapshot.clone();
    let item = snapshot
        .item(&id)
        .ok_or_else(|| ApiError::NotFound(format!("no item with id {}", quoted(&id))))?;
    let detail = ItemDetail {
        item,
        dependents: snapshot
            .dependents(&id)
            .into_iter()
            .map(|d| d.id.as_str())
            .collect(),
        tasks: snapshot.tasks_for_item(&id),
        decisions: snapshot.decisions_for_item(item),
    };
    Ok(Json(detail).into_response())
}
