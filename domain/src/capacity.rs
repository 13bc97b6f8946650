//! The GPU capacity ledger: how many GPUs each GPU cluster of the catalog has, how many are
//! held, by whom, and whether a request still fits.
//!
//! Pure arithmetic over three inputs the server gathers: the clusters with their total (from
//! the catalog), the workspaces found on the monorepo's base branch (from their files, so a
//! hand edit in git counts) and the requests not yet merged (from the database). The base
//! branch is the truth: a request whose folder is already there is counted once, by its
//! files, and named as their request.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::request::RequestState;
use crate::selfservice::{ErrorCode, FieldError};

/// A GPU cluster and the GPUs the catalog records for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The catalog item's id.
    pub id: String,
    /// Its GPUs.
    pub total: u64,
}

/// A workspace on the base branch: a folder whose files ask for GPUs on a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workspace {
    /// The cluster's catalog id.
    pub cluster: String,
    /// Its folder in the monorepo (`clusters/<cluster>/workspaces/<name>`).
    pub target: String,
    /// The Kubernetes namespace.
    pub namespace: String,
    /// GPUs its quota grants (`requests.nvidia.com/gpu`).
    pub gpus: u64,
}

/// How far a request's claim on GPUs has gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Awaiting an admin's decision: counted as pending, not allocated.
    Pending,
    /// Approved (or needing no approval) and not merged yet: allocated.
    Allocated,
    /// Merged: its files on the base branch count (if they are still there); the request only
    /// names them.
    Merged,
    /// A merged removal whose Application Argo CD has not deleted yet: its GPUs are still in
    /// use, so they count as allocated although the folder is gone from the base branch.
    Removing,
}

impl Stage {
    /// The stage of a request in `state`; `None` when it holds nothing (rejected, closed,
    /// failed).
    pub fn of(state: RequestState) -> Option<Stage> {
        match state {
            RequestState::AwaitingApproval => Some(Stage::Pending),
            RequestState::Submitted
            | RequestState::Approved
            | RequestState::Proposing
            | RequestState::Proposed => Some(Stage::Allocated),
            RequestState::Merged => Some(Stage::Merged),
            RequestState::Rejected | RequestState::Closed | RequestState::Failed => None,
        }
    }

    /// Whether a holder at this stage holds its GPUs (allocated, or still running while its
    /// removal goes through).
    pub fn holds(self) -> bool {
        matches!(self, Stage::Allocated | Stage::Removing)
    }
}

/// A request that asks for GPUs and is not merged yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// The request's id.
    pub request: i64,
    /// The cluster's catalog id.
    pub cluster: String,
    /// The folder its files go to.
    pub target: String,
    /// The namespace its files create.
    pub namespace: String,
    /// GPUs asked for.
    pub gpus: u64,
    /// Where it stands.
    pub stage: Stage,
}

/// Where a holder was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Files on the base branch.
    Monorepo,
    /// A request not merged yet.
    Request,
}

/// Something that holds (or waits for) GPUs of a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The namespace.
    pub namespace: String,
    /// The request that made it, if any is known.
    pub request: Option<i64>,
    /// GPUs.
    pub gpus: u64,
    /// Allocated or pending.
    pub stage: Stage,
    /// Files on the base branch or a request.
    pub source: Source,
    /// The folder in the monorepo.
    pub target: String,
}

/// One cluster's ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterCapacity {
    /// The catalog item's id.
    pub id: String,
    /// GPUs the catalog records.
    pub total: u64,
    /// GPUs held on the base branch plus those of requests approved and not merged.
    pub allocated: u64,
    /// GPUs of requests awaiting approval.
    pub pending: u64,
    /// `total − allocated`; negative when an admin overcommitted.
    pub free: i64,
    /// Who holds them: workspaces on the base branch first, then requests, each by namespace.
    pub holders: Vec<Holder>,
}

impl ClusterCapacity {
    /// Whether `asked` more GPUs fit, and the numbers when they do not.
    pub fn check(&self, asked: u64) -> Result<(), OverAsk> {
        if i128::from(asked) <= i128::from(self.free) {
            return Ok(());
        }
        Err(OverAsk {
            asked,
            cluster: self.id.clone(),
            total: self.total,
            allocated: self.allocated,
            free: self.free,
            allocated_to: self
                .holders
                .iter()
                .filter(|h| h.stage.holds())
                .map(|h| h.namespace.clone())
                .collect(),
        })
    }
}

/// Builds every cluster's ledger, in the clusters' order. Workspaces and claims of a cluster
/// the catalog does not list are left out; a claim whose target is already a workspace on the
/// base branch is not counted again — the workspace is, named as that request's. A merged
/// claim only names its workspace: when its folder is gone from the base branch, it holds
/// nothing.
pub fn ledger(
    clusters: &[Cluster],
    workspaces: &[Workspace],
    claims: &[Claim],
) -> Vec<ClusterCapacity> {
    let merged: BTreeMap<&str, i64> = claims
        .iter()
        .filter(|c| workspaces.iter().any(|w| w.target == c.target))
        .map(|c| (c.target.as_str(), c.request))
        .collect();
    clusters
        .iter()
        .map(|cluster| {
            let mut holders: Vec<Holder> = workspaces
                .iter()
                .filter(|w| w.cluster == cluster.id)
                .map(|w| Holder {
                    namespace: w.namespace.clone(),
                    request: merged.get(w.target.as_str()).copied(),
                    gpus: w.gpus,
                    stage: Stage::Allocated,
                    source: Source::Monorepo,
                    target: w.target.clone(),
                })
                .collect();
            holders.sort_by(|a, b| a.namespace.cmp(&b.namespace));
            let mut pending: Vec<Holder> = claims
                .iter()
                .filter(|c| {
                    c.cluster == cluster.id
                        && c.stage != Stage::Merged
                        && !merged.contains_key(c.target.as_str())
                })
                .map(|c| Holder {
                    namespace: c.namespace.clone(),
                    request: Some(c.request),
                    gpus: c.gpus,
                    stage: c.stage,
                    source: Source::Request,
                    target: c.target.clone(),
                })
                .collect();
            pending.sort_by_key(|h| h.request);
            holders.extend(pending);
            let sum = |stage: Stage| -> u64 {
                holders
                    .iter()
                    .filter(|h| h.stage == stage)
                    .map(|h| h.gpus)
                    .sum()
            };
            let allocated = sum(Stage::Allocated) + sum(Stage::Removing);
            let pending = sum(Stage::Pending);
            ClusterCapacity {
                id: cluster.id.clone(),
                total: cluster.total,
                allocated,
                pending,
                free: i64::try_from(cluster.total)
                    .unwrap_or(i64::MAX)
                    .saturating_sub(i64::try_from(allocated).unwrap_or(i64::MAX)),
                holders,
            }
        })
        .collect()
}

/// More GPUs asked for than a cluster has free.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverAsk {
    /// GPUs asked for.
    pub asked: u64,
    /// The cluster.
    pub cluster: String,
    /// Its GPUs.
    pub total: u64,
    /// GPUs allocated.
    pub allocated: u64,
    /// `total − allocated`.
    pub free: i64,
    /// The namespaces holding the allocated GPUs.
    pub allocated_to: Vec<String>,
}

impl fmt::Display for OverAsk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "asks {}, {} has {}, ",
            self.asked, self.cluster, self.total
        )?;
        if self.allocated_to.is_empty() {
            write!(f, "{} allocated", self.allocated)
        } else {
            write!(
                f,
                "{} allocated to {}",
                self.allocated,
                self.allocated_to.join(", ")
            )
        }
    }
}

impl OverAsk {
    /// The refusal as the value error of the parameter `field` (code
    /// [`ErrorCode::ExceedsFreeCapacity`]), with the numbers as arguments: `value`, `option`,
    /// `capacity`, `allocated`, `free` and `holders` (the namespaces, comma-separated).
    pub fn field_error(&self, field: &str) -> FieldError {
        let mut args = Map::new();
        args.insert("value".into(), Value::from(self.asked));
        args.insert("option".into(), Value::from(self.cluster.clone()));
        args.insert("capacity".into(), Value::from(self.total));
        args.insert("allocated".into(), Value::from(self.allocated));
        args.insert("free".into(), Value::from(self.free));
        args.insert(
            "holders".into(),
            Value::from(if self.allocated_to.is_empty() {
                "—".to_owned()
            } else {
                self.allocated_to.join(", ")
            }),
        );
        FieldError {
            field: field.to_owned(),
            code: ErrorCode::ExceedsFreeCapacity,
            args,
            message: self.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp() -> Vec<Cluster> {
        vec![Cluster {
            id: "gpu-sp-01".into(),
            total: 1,
        }]
    }

    fn workspace(name: &str, gpus: u64) -> Workspace {
        Workspace {
            cluster: "gpu-sp-01".into(),
            target: format!("clusters/gpu-sp-01/workspaces/{name}"),
            namespace: format!("ws-{name}"),
            gpus,
        }
    }

    fn claim(request: i64, name: &str, gpus: u64, stage: Stage) -> Claim {
        Claim {
            request,
            cluster: "gpu-sp-01".into(),
            target: format!("clusters/gpu-sp-01/workspaces/{name}"),
            namespace: format!("ws-{name}"),
            gpus,
            stage,
        }
    }

    #[test]
    fn an_empty_cluster_has_all_its_gpus_free() {
        let l = ledger(&sp(), &[], &[]);
        assert_eq!(l.len(), 1);
        assert_eq!(
            (l[0].total, l[0].allocated, l[0].pending, l[0].free),
            (1, 0, 0, 1)
        );
        assert!(l[0].holders.is_empty());
        assert_eq!(l[0].check(1), Ok(()));
    }

    #[test]
    fn workspaces_on_the_base_branch_and_approved_requests_are_allocated_and_awaiting_ones_pending()
    {
        let clusters = vec![Cluster {
            id: "gpu-sp-01".into(),
            total: 8,
        }];
        let l = ledger(
            &clusters,
            &[workspace("hand", 2)],
            &[
                claim(3, "llm", 1, Stage::Allocated),
                claim(4, "vision", 4, Stage::Pending),
            ],
        );
        assert_eq!((l[0].allocated, l[0].pending, l[0].free), (3, 4, 5));
        let names: Vec<_> = l[0].holders.iter().map(|h| h.namespace.as_str()).collect();
        assert_eq!(names, ["ws-hand", "ws-llm", "ws-vision"]);
        assert_eq!(l[0].holders[0].source, Source::Monorepo);
        assert_eq!(l[0].holders[0].request, None);
    }

    #[test]
    fn a_request_whose_folder_is_already_merged_is_counted_once_by_its_files() {
        let l = ledger(
            &sp(),
            &[workspace("rui-llm", 1)],
            &[claim(1, "rui-llm", 1, Stage::Allocated)],
        );
        assert_eq!((l[0].allocated, l[0].free), (1, 0));
        assert_eq!(l[0].holders.len(), 1);
        assert_eq!(l[0].holders[0].request, Some(1));
        assert_eq!(l[0].holders[0].source, Source::Monorepo);
    }

    #[test]
    fn a_merged_request_whose_folder_was_removed_by_hand_holds_nothing() {
        let l = ledger(&sp(), &[], &[claim(1, "rui-llm", 1, Stage::Merged)]);
        assert_eq!((l[0].allocated, l[0].pending, l[0].free), (0, 0, 1));
        assert!(l[0].holders.is_empty());
    }

    #[test]
    fn a_removal_argo_cd_has_not_finished_still_holds_its_gpus_and_is_named_in_a_refusal() {
        let l = ledger(&sp(), &[], &[claim(7, "rui-llm", 1, Stage::Removing)]);
        assert_eq!((l[0].allocated, l[0].pending, l[0].free), (1, 0, 0));
        assert_eq!(l[0].holders[0].request, Some(7));
        assert_eq!(l[0].holders[0].source, Source::Request);
        let refused = l[0].check(1).unwrap_err();
        assert_eq!(refused.allocated_to, ["ws-rui-llm"]);
    }

    #[test]
    fn a_merged_request_names_the_workspace_its_files_made() {
        let l = ledger(
            &sp(),
            &[workspace("rui-llm", 1)],
            &[claim(1, "rui-llm", 1, Stage::Merged)],
        );
        assert_eq!(l[0].allocated, 1);
        assert_eq!(l[0].holders[0].request, Some(1));
    }

    #[test]
    fn the_files_count_when_an_admin_changed_the_gpus_by_hand() {
        let l = ledger(
            &sp(),
            &[workspace("rui-llm", 3)],
            &[claim(1, "rui-llm", 1, Stage::Allocated)],
        );
        assert_eq!((l[0].allocated, l[0].free), (3, -2));
    }

    #[test]
    fn an_over_ask_names_the_numbers_and_the_namespaces_holding_them() {
        let l = ledger(&sp(), &[workspace("rui-llm", 1)], &[]);
        let refused = l[0].check(1).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "asks 1, gpu-sp-01 has 1, 1 allocated to ws-rui-llm"
        );
        let e = refused.field_error("gpus");
        assert_eq!(e.code, ErrorCode::ExceedsFreeCapacity);
        assert_eq!(e.field, "gpus");
        assert_eq!(e.args["holders"], "ws-rui-llm");
        assert_eq!(e.args["free"], 0);
    }

    #[test]
    fn pending_requests_do_not_keep_others_from_asking() {
        let l = ledger(&sp(), &[], &[claim(7, "a", 1, Stage::Pending)]);
        assert_eq!((l[0].allocated, l[0].pending, l[0].free), (0, 1, 1));
        assert_eq!(l[0].check(1), Ok(()));
        assert!(l[0].check(2).is_err());
    }

    #[test]
    fn workspaces_of_clusters_the_catalog_does_not_list_are_left_out() {
        let mut other = workspace("x", 5);
        other.cluster = "gpu-rj-09".into();
        let l = ledger(&sp(), &[other], &[]);
        assert_eq!(l[0].allocated, 0);
    }

    #[test]
    fn merged_and_finished_requests_hold_nothing_in_the_database() {
        assert_eq!(Stage::of(RequestState::Merged), Some(Stage::Merged));
        assert_eq!(Stage::of(RequestState::Rejected), None);
        assert_eq!(Stage::of(RequestState::Failed), None);
        assert_eq!(Stage::of(RequestState::Proposed), Some(Stage::Allocated));
        assert_eq!(
            Stage::of(RequestState::AwaitingApproval),
            Some(Stage::Pending)
        );
    }
}
