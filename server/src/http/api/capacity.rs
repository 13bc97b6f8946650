//! `GET /api/v1/capacity`: the GPU capacity ledger of every GPU cluster of the catalog.

use std::sync::Arc;

use axum::{Extension, Json, extract::State};
use mirante_domain::capacity::{ClusterCapacity, Holder, Source, Stage};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::selfservice::service::SelfService;
use crate::http::auth::Principal;
use crate::http::error::{ApiError, ErrorBody};
use crate::http::state::AppState;

/// The capacity routes.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_capacity))
}

/// Every GPU cluster's ledger, in catalog order.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CapacityList {
    /// One entry per catalog item that records GPUs.
    pub clusters: Vec<ClusterCapacityBody>,
}

/// One GPU cluster: its GPUs and who holds them.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ClusterCapacityBody {
    /// The catalog item's id.
    #[schema(example = "gpu-sp-01")]
    pub id: String,
    /// GPUs the catalog records (`gpus:` of the item).
    pub total: u64,
    /// GPUs of the workspaces on the monorepo's base branch (read from their ResourceQuota)
    /// plus those of requests approved, proposing or proposed and not merged yet.
    pub allocated: u64,
    /// GPUs of requests awaiting approval.
    pub pending: u64,
    /// `total − allocated`; negative when an admin overcommitted.
    pub free: i64,
    /// What holds or waits for them.
    pub holders: Vec<HolderBody>,
}

/// A workspace or request holding (or waiting for) GPUs of a cluster.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HolderBody {
    /// The Kubernetes namespace.
    #[schema(example = "ws-rui-llm")]
    pub namespace: String,
    /// The request that made it, when one is known (absent for a workspace added by hand).
    pub request: Option<i64>,
    /// GPUs.
    pub gpus: u64,
    /// `allocated`, `pending`, or `removing` (a merged removal whose Application Argo CD
    /// still has: its GPUs stay allocated until it is gone).
    #[schema(example = "allocated")]
    pub stage: String,
    /// `monorepo` (files on the base branch) or `request` (not merged yet).
    #[schema(example = "monorepo")]
    pub source: String,
    /// Its folder in the monorepo.
    #[schema(example = "clusters/gpu-sp-01/workspaces/rui-llm")]
    pub target: String,
}

fn holder(h: Holder) -> HolderBody {
    HolderBody {
        namespace: h.namespace,
        request: h.request,
        gpus: h.gpus,
        stage: match h.stage {
            Stage::Allocated => "allocated",
            Stage::Pending => "pending",
            Stage::Merged => "merged",
            Stage::Removing => "removing",
        }
        .to_owned(),
        source: match h.source {
            Source::Monorepo => "monorepo",
            Source::Request => "request",
        }
        .to_owned(),
        target: h.target,
    }
}

fn cluster(c: ClusterCapacity) -> ClusterCapacityBody {
    ClusterCapacityBody {
        id: c.id,
        total: c.total,
        allocated: c.allocated,
        pending: c.pending,
        free: c.free,
        holders: c.holders.into_iter().map(holder).collect(),
    }
}

/// The GPUs of every GPU cluster of the catalog: total, allocated, pending and free, and which
/// workspaces and requests hold them. Workspaces are read from the files on the monorepo's
/// base branch, so one added or changed by hand in git counts; a request whose folder is
/// already there is counted once, by its files.
#[utoipa::path(
    get,
    path = "/api/v1/capacity",
    tag = "self-service",
    responses(
        (status = 200, description = "Every GPU cluster's ledger", body = CapacityList),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 503, description = "The forge is unavailable", body = ErrorBody),
    )
)]
pub(crate) async fn get_capacity(
    State(service): State<Arc<SelfService>>,
    Extension(_principal): Extension<Principal>,
) -> Result<Json<CapacityList>, ApiError> {
    let ledger = service.capacity().await?;
    Ok(Json(CapacityList {
        clusters: ledger.into_iter().map(cluster).collect(),
    }))
}
