//! `GET /api/v1/roadmap` and `GET /api/v1/findings`.

use std::sync::Arc;

use axum::{
    Json,
    extract::{RawQuery, State},
    response::{IntoResponse, Response},
};
use mirante_domain::{
    lint::{Finding, Severity},
    roadmap::Roadmap,
};
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{query::Params, schema};
use crate::http::error::{ApiError, ErrorBody};
use crate::{
    app::catalog::CatalogStore,
    app::evidence::{self, LintSettings},
    app::probes::ProbeBoard,
    config::Config,
    http::state::AppState,
};

/// The roadmap and findings routes.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_roadmap))
        .routes(routes!(list_findings))
}

/// The roadmap of the catalog in force: phases with their items and progress, every item
/// with `done` / `ready` / `blocked_by`, pending tasks (critical and MVP first), and progress
/// per site and layer.
#[utoipa::path(
    get,
    path = "/api/v1/roadmap",
    tag = "roadmap",
    responses(
        (status = 200, description = "The roadmap", body = schema::Roadmap),
        (status = 400, description = "A query parameter was given", body = ErrorBody),
    )
)]
pub(crate) async fn get_roadmap(
    State(catalog): State<Arc<CatalogStore>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let snapshot = catalog.current().snapshot.clone();
    Ok(Json(Roadmap::of(&snapshot)).into_response())
}

/// Query parameters of `GET /api/v1/findings`.
#[derive(Debug, Default, IntoParams)]
#[into_params(parameter_in = Query)]
#[expect(
    dead_code,
    reason = "fields are only described for OpenAPI; the handler reads the raw query"
)]
pub(crate) struct FindingQuery {
    /// Only findings of this severity.
    #[param(value_type = Option<schema::Severity>)]
    severity: Option<String>,
}

/// A finding with the address of the item it is about.
#[derive(Debug, Serialize)]
pub(crate) struct FindingView {
    /// The finding.
    #[serde(flatten)]
    pub finding: Finding,
    /// The item's page.
    pub link: String,
}

/// Findings and how many there are of each severity (before filtering).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FindingList {
    /// Errors first, then warnings, then information; catalog order within a severity.
    #[schema(value_type = Vec<schema::Finding>)]
    pub findings: Vec<FindingView>,
    /// Number of findings per severity in the whole catalog.
    #[schema(value_type = schema::SeverityCounts)]
    pub counts: SeverityCounts,
}

/// Number of findings per severity.
#[derive(Debug, Default, Serialize)]
pub(crate) struct SeverityCounts {
    /// Errors.
    pub error: usize,
    /// Warnings.
    pub warning: usize,
    /// Information.
    pub info: usize,
}

impl SeverityCounts {
    /// Counts a list of findings.
    pub(crate) fn of(findings: &[Finding]) -> Self {
        let n = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
        SeverityCounts {
            error: n(Severity::Error),
            warning: n(Severity::Warning),
            info: n(Severity::Info),
        }
    }
}

/// The consistency lint on the catalog in force (admins): validated without evidence, stale
/// attestations, declared without an IaC reference or with one the monorepo does not have
/// (when `MIRANTE_IAC_ROOT` is set), validated depending on unvalidated, deferred without a
/// criterion, rejected without a reason, and the live checks (probes, Argo CD applications)
/// that failed on their last run.
#[utoipa::path(
    get,
    path = "/api/v1/findings",
    tag = "roadmap",
    params(FindingQuery),
    responses(
        (status = 200, description = "The lint's findings", body = FindingList),
        (status = 400, description = "Unknown parameter or severity", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an admin", body = ErrorBody),
    )
)]
pub(crate) async fn list_findings(
    State(catalog): State<Arc<CatalogStore>>,
    State(config): State<Arc<Config>>,
    State(probes): State<Arc<ProbeBoard>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let params = Params::parse(raw.as_deref(), &["severity"])?;
    let severity = params.parse_with(
        "severity",
        |v| Severity::ALL.into_iter().find(|s| s.as_str() == v),
        "one of: error, warning, info",
    )?;
    let snapshot = catalog.current().snapshot.clone();
    let settings = LintSettings::new(&config, catalog.source());
    let live = probes.failures();
    // IaC references may be read from disk.
    let all = tokio::task::spawn_blocking(move || {
        evidence::findings(&snapshot, &settings, evidence::today(), &live)
    })
    .await
    .map_err(|e| ApiError::Internal(e.into()))?;
    let counts = SeverityCounts::of(&all);
    let findings = all
        .into_iter()
        .filter(|f| severity.is_none_or(|s| f.severity == s))
        .map(|finding| FindingView {
            link: format!("/items/{}", finding.item),
            finding,
        })
        .collect();
    Ok(Json(FindingList { findings, counts }).into_response())
}
