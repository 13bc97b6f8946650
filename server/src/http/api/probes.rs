//! `GET /api/v1/probes`: the last result of every live check.

use std::sync::Arc;

use axum::{
    Extension, Json,
    extract::{RawQuery, State},
    response::{IntoResponse, Response},
};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::query::Params;
use crate::http::error::{ApiError, ErrorBody};
use mirante_domain::Role;

use crate::{
    app::probes::{CheckResult, ProbeBoard},
    config::Config,
    http::auth::Principal,
    http::state::AppState,
};

/// The live-check routes.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_probes))
}

/// The last results of the live checks, and how they are run.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ProbeList {
    /// Whether the checks run (`MIRANTE_PROBE_INTERVAL_SECS` is not 0).
    pub enabled: bool,
    /// Seconds between runs.
    pub interval_secs: u64,
    /// Whether Argo CD evidence is read (`MIRANTE_ARGOCD_URL` and `MIRANTE_ARGOCD_TOKEN` set).
    pub argocd: bool,
    /// When the last run finished; absent before the first.
    pub last_run: Option<DateTime<Utc>>,
    /// One result per probe and Argo CD application of a validated item, in catalog order.
    pub checks: Vec<CheckResult>,
    /// How many of `checks` failed.
    pub failing: usize,
}

/// The last result of every live check: the HTTP probes and Argo CD applications that the
/// catalog gives as evidence for validated items, run by the server every
/// `MIRANTE_PROBE_INTERVAL_SECS`. Failed checks also appear in `GET /api/v1/findings`
/// (`probe-failing`, `argocd-unhealthy`). Admins see each check's status, latency and
/// reason; other readers see whether it holds.
#[utoipa::path(
    get,
    path = "/api/v1/probes",
    tag = "roadmap",
    responses(
        (status = 200, description = "The last results", body = ProbeList),
        (status = 400, description = "A query parameter was given", body = ErrorBody),
        (status = 401, description = "Not signed in (unless the catalog is public)", body = ErrorBody),
    )
)]
pub(crate) async fn list_probes(
    State(board): State<Arc<ProbeBoard>>,
    State(config): State<Arc<Config>>,
    principal: Option<Extension<Principal>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let admin = principal.is_some_and(|Extension(p)| p.viewer.role == Role::Admin);
    let mut checks = board.results().as_ref().clone();
    if !admin {
        checks = checks.into_iter().map(CheckResult::for_reader).collect();
    }
    let failing = checks.iter().filter(|c| !c.ok).count();
    Ok(Json(ProbeList {
        enabled: config.probe_interval_secs > 0,
        interval_secs: config.probe_interval_secs,
        argocd: config.argocd_url.is_some(),
        last_run: board.last_run(),
        checks,
        failing,
    })
    .into_response())
}
