//! `GET /api/v1/items/{id}/history` and `GET /api/v1/roadmap/burnup`: the catalog's history
//! from the monorepo's git history (see [`crate::adapters::git::history`]).
//!
//! A catalog read from a directory or built in has no history: both routes answer 200 with
//! `available: false` and the reason, so clients need no special case for an error.

use std::sync::Arc;

use axum::{
    Json,
    extract::{RawQuery, State},
};
use mirante_domain::{
    State as ItemState,
    history::{BurnupPoint, CatalogHistory, NoHistory, SkippedRevision, StateChange},
};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{query::Params, schema};
use crate::http::error::{ApiError, ApiPath, ErrorBody, quoted};
use crate::{app::catalog::CatalogStore, http::state::AppState};

/// The history routes.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_item_history))
        .routes(routes!(get_burnup))
}

/// Whether a history is available, and why not.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Availability {
    /// Whether the catalog has a history: it does when read from the monorepo's branch.
    pub available: bool,
    /// Why not: `directory` (`MIRANTE_CATALOG`), `embedded` (the built-in demo) or
    /// `unreadable` (the monorepo could not be read; the server's log says why).
    pub reason: Option<&'static str>,
    /// The reason in a sentence.
    pub message: Option<&'static str>,
    /// The branch tip the history was read at.
    pub tip: Option<String>,
}

impl Availability {
    fn of(history: &Result<Arc<CatalogHistory>, NoHistory>) -> Self {
        match history {
            Ok(h) => Availability {
                available: true,
                reason: None,
                message: None,
                tip: h.tip.clone(),
            },
            Err(no) => Availability {
                available: false,
                reason: Some(no.as_str()),
                message: Some(no.explain()),
                tip: None,
            },
        }
    }
}

/// One change of an item's state and the commit that made it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct StateChangeView {
    /// The state before; null when the item appeared in this commit.
    #[schema(value_type = Option<schema::State>)]
    pub from: Option<ItemState>,
    /// The state after; null when the item was removed in this commit.
    #[schema(value_type = Option<schema::State>)]
    pub to: Option<ItemState>,
    /// Commit id.
    pub commit: String,
    /// Commit date, RFC 3339 in UTC.
    #[schema(example = "2026-08-03T14:12:00Z")]
    pub date: String,
    /// Author's name.
    pub author: String,
    /// First line of the commit message.
    pub summary: String,
}

impl From<&StateChange> for StateChangeView {
    fn from(c: &StateChange) -> Self {
        StateChangeView {
            from: c.from,
            to: c.to,
            commit: c.revision.commit.clone(),
            date: c.revision.date.clone(),
            author: c.revision.author.clone(),
            summary: c.revision.summary.clone(),
        }
    }
}

/// An item's state changes.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ItemHistory {
    /// The item id.
    pub item: String,
    /// Whether there is a history, and why not.
    #[serde(flatten)]
    pub availability: Availability,
    /// State changes, oldest first; the first is when the item appeared.
    pub changes: Vec<StateChangeView>,
}

/// The state changes of an item along the first-parent history of the monorepo's base branch:
/// each with its commit, date, author and summary.
#[utoipa::path(
    get,
    path = "/api/v1/items/{id}/history",
    tag = "catalog",
    params(("id" = String, Path, description = "Item id", example = "linstor-sp-ssd")),
    responses(
        (status = 200, description = "The item's state changes (empty with a reason when the catalog has no history)", body = ItemHistory),
        (status = 404, description = "No item with that id, now or in the history", body = ErrorBody),
    )
)]
pub(crate) async fn get_item_history(
    State(catalog): State<Arc<CatalogStore>>,
    ApiPath(id): ApiPath<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<ItemHistory>, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let history = catalog.history().get_async().await;
    let known_now = catalog.snapshot().item(&id).is_some();
    let changes: Vec<StateChangeView> = history
        .as_ref()
        .map(|h| h.item(&id).iter().map(StateChangeView::from).collect())
        .unwrap_or_default();
    // A removed item still has its history.
    if !known_now && changes.is_empty() {
        return Err(ApiError::NotFound(format!(
            "no item with id {}",
            quoted(&id)
        )));
    }
    Ok(Json(ItemHistory {
        item: id,
        availability: Availability::of(&history),
        changes,
    }))
}

/// A commit whose catalog did not load.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SkippedView {
    /// Commit id.
    pub commit: String,
    /// Commit date, RFC 3339 in UTC.
    pub date: String,
    /// Author's name.
    pub author: String,
    /// First line of the commit message.
    pub summary: String,
    /// The loader's first problem.
    pub error: String,
}

impl From<&SkippedRevision> for SkippedView {
    fn from(s: &SkippedRevision) -> Self {
        SkippedView {
            commit: s.revision.commit.clone(),
            date: s.revision.date.clone(),
            author: s.revision.author.clone(),
            summary: s.revision.summary.clone(),
            error: s.error.clone(),
        }
    }
}

/// Items per state at one commit.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct BurnupPointView {
    /// Commit date, RFC 3339 in UTC.
    pub date: String,
    /// Commit id.
    pub commit: String,
    /// Validated items.
    pub validated: u32,
    /// Declared items.
    pub declared: u32,
    /// Desired items.
    pub desired: u32,
}

impl From<&BurnupPoint> for BurnupPointView {
    fn from(p: &BurnupPoint) -> Self {
        BurnupPointView {
            date: p.date.clone(),
            commit: p.commit.clone(),
            validated: p.validated,
            declared: p.declared,
            desired: p.desired,
        }
    }
}

/// The burn-up series.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Burnup {
    /// Whether there is a history, and why not.
    #[serde(flatten)]
    pub availability: Availability,
    /// One point per commit that changed the catalog, oldest first.
    pub series: Vec<BurnupPointView>,
    /// Commits whose catalog did not load, left out of the series.
    pub skipped: Vec<SkippedView>,
    /// Whether the history was cut at its oldest commits (a very long history).
    pub truncated: bool,
}

/// How many items were validated, declared and desired at each commit of the monorepo's base
/// branch that changed the catalog: the roadmap's burn-up.
#[utoipa::path(
    get,
    path = "/api/v1/roadmap/burnup",
    tag = "roadmap",
    responses(
        (status = 200, description = "The series (empty with a reason when the catalog has no history)", body = Burnup),
        (status = 400, description = "A query parameter was given", body = ErrorBody),
    )
)]
pub(crate) async fn get_burnup(
    State(catalog): State<Arc<CatalogStore>>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Burnup>, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let history = catalog.history().get_async().await;
    let (series, skipped, truncated) = match &history {
        Ok(h) => (
            h.burnup.iter().map(BurnupPointView::from).collect(),
            h.skipped.iter().map(SkippedView::from).collect(),
            h.truncated,
        ),
        Err(_) => (Vec::new(), Vec::new(), false),
    };
    Ok(Json(Burnup {
        availability: Availability::of(&history),
        series,
        skipped,
        truncated,
    }))
}
