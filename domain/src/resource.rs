//! Resources: what self-service requests create in the monorepo (a GPU workspace, a PostgreSQL
//! cluster), as the researcher who asked for it sees it.
//!
//! A resource is the folder a request targets (`clusters/gpu-sp-01/workspaces/llm`). The
//! monorepo's base branch is the truth about it: once a request for the folder is merged, the
//! resource is what the folder holds there, and a folder that is gone is a removed resource.
//! The portal's database adds only what git cannot know: who asked, and the requests that
//! made and changed it. So a resource has no table of its own: [`resources`] groups requests
//! by target, and the caller says which merged folders still exist on the base branch.
//!
//! ```text
//! pending ──► proposed ──► merged ──► syncing ──► live
//!   (awaiting approval,        │          (Argo CD)  └──► degraded
//!    approved, proposing)      └──► removed (the folder left the base branch)
//! ```
//!
//! A folder whose requests were all rejected, closed or failed before any merge never became a
//! resource and is not listed. `syncing`, `live` and `degraded` come from following the
//! deployment (Argo CD; the rules are [`crate::deployment`], the server applies them to a
//! merged resource and fills [`Resource::deployment`]); without it a merged resource stays
//! `merged` and its note says why.

use std::{collections::BTreeMap, fmt};

use serde::{Deserialize, Serialize};

use crate::request::RequestState;

/// Where a resource stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceState {
    /// Asked for: awaiting approval, approved, or being proposed.
    Pending,
    /// Its pull request is open.
    Proposed,
    /// Its files are on the base branch.
    Merged,
    /// The deployment is applying the merged files.
    Syncing,
    /// Applied and healthy: ready to use.
    Live,
    /// Applied but not healthy.
    Degraded,
    /// Its removal is merged and Argo CD still has the Application that ran it.
    Removing,
    /// Its folder is no longer on the base branch (and, where deployments are followed, Argo
    /// CD no longer has its Application).
    Removed,
}

impl ResourceState {
    /// Every state, in the order of a resource's life.
    pub const ALL: [ResourceState; 8] = [
        ResourceState::Pending,
        ResourceState::Proposed,
        ResourceState::Merged,
        ResourceState::Syncing,
        ResourceState::Live,
        ResourceState::Degraded,
        ResourceState::Removing,
        ResourceState::Removed,
    ];

    /// The identifier used in JSON, query strings and the UI.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceState::Pending => "pending",
            ResourceState::Proposed => "proposed",
            ResourceState::Merged => "merged",
            ResourceState::Syncing => "syncing",
            ResourceState::Live => "live",
            ResourceState::Degraded => "degraded",
            ResourceState::Removing => "removing",
            ResourceState::Removed => "removed",
        }
    }

    /// Whether its files are on the base branch: the states in which it can be changed,
    /// extended or removed, and in which it can expire.
    pub fn has_files_on_base(self) -> bool {
        matches!(
            self,
            ResourceState::Merged
                | ResourceState::Syncing
                | ResourceState::Live
                | ResourceState::Degraded
        )
    }

    /// The state named `s` (as [`ResourceState::as_str`] writes it).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == s)
    }
}

impl fmt::Display for ResourceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A resource as its own page and `GET /api/v1/resources/{id}` show it: with the version of
/// its template its files were rendered with, and the update the template offers since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceDetail {
    /// The resource.
    #[serde(flatten)]
    pub resource: Resource,
    /// The template version its files were rendered with (`None` when made before versions
    /// were recorded).
    pub template_version: Option<String>,
    /// What its template renders differently now, when it does: `None` when the template is
    /// at the resource's version or renders the same files.
    pub update: Option<TemplateUpdate>,
}

/// A template's update for one resource: its files rendered again from the resource's values
/// with the template's current version, where they differ from the base branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateUpdate {
    /// The template's current version.
    pub version: String,
    /// Each file that changes, with its unified diff against the base branch.
    pub files: Vec<UpdateFile>,
    /// Parameters the new version asks for that the resource's values lack (or no longer
    /// satisfy): they are given with the update before it can be proposed.
    pub needs: Vec<String>,
}

/// One file an update changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateFile {
    /// Its path in the monorepo.
    pub path: String,
    /// Its unified diff against the base branch.
    pub diff: String,
}

/// What [`resources`] needs to know of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFacts {
    /// The request's id.
    pub id: i64,
    /// The template it used.
    pub template: String,
    /// The folder in the monorepo it targets.
    pub target: String,
    /// Where it stands.
    pub state: RequestState,
    /// Who asked (username).
    pub author: String,
    /// The requester's row in the user table.
    pub author_user_id: i64,
    /// The cluster the files are for, when the template names one.
    pub cluster: Option<String>,
    /// The Kubernetes namespace the files live in, when they name one.
    pub namespace: Option<String>,
    /// The expiry date the files carry (`YYYY-MM-DD`), when the template sets one.
    pub expires: Option<String>,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
}

/// A resource, as the API and the pages show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// Its id: the id of the request that created it.
    pub id: i64,
    /// The template it was made from.
    pub template: String,
    /// Who asked for it (username).
    pub owner: String,
    /// The owner's row in the user table (not serialized: access rules use it).
    #[serde(skip)]
    pub owner_user_id: i64,
    /// The cluster it runs on, when the template names one.
    pub cluster: Option<String>,
    /// Its Kubernetes namespace, when its files name one.
    pub namespace: Option<String>,
    /// Its folder in the monorepo.
    pub target: String,
    /// Where it stands.
    pub state: ResourceState,
    /// The requests that made and changed it, oldest first.
    pub requests: Vec<i64>,
    /// When it expires (`YYYY-MM-DD`), when its template sets a date.
    pub expires: Option<String>,
    /// How to reach it, once it exists.
    pub access: Option<Access>,
    /// Why the state may be out of date or cannot say more (the base branch could not be
    /// read; Argo CD is not configured, cannot be reached, or says why it is not live), when
    /// it may.
    pub note: Option<String>,
    /// Its deployment after the merge, once merged: whether it is followed and what Argo CD
    /// last said.
    #[serde(default)]
    pub deployment: Option<Deployment>,
    /// When it was first asked for (RFC 3339, UTC).
    pub created_at: String,
}

/// A merged resource's deployment, as followed in Argo CD.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deployment {
    /// Whether the portal follows it: `false` when Argo CD is not configured, and the resource
    /// then stays `merged`.
    pub followed: bool,
    /// The Argo CD Application that deploys the folder, once found.
    pub application: Option<String>,
    /// The commit of the base branch that must be deployed (the merge, or the base branch's
    /// head when the merge was first followed, where the forge does not tell the merge).
    pub merge_commit: Option<String>,
    /// The revision Argo CD last reported for the Application.
    pub revision: Option<String>,
    /// What Argo CD said: why it is degraded, or why it is still syncing.
    pub message: Option<String>,
    /// The last error asking Argo CD (down, refusing the token, no Application for the
    /// folder); cleared by the next good answer.
    pub error: Option<String>,
    /// When Argo CD was last asked (RFC 3339, UTC).
    pub checked_at: Option<String>,
}

/// The note of a merged resource whose deployment is not followed.
pub const NOT_FOLLOWED_NOTE: &str = "Argo CD is not configured (MIRANTE_ARGOCD_URL), so the portal cannot tell whether the files are applied on the cluster";

impl Deployment {
    /// What a reader is told about it, in one English sentence, when there is something to
    /// tell (the API's `note`; the UI says the same from the fields, in the reader's language).
    pub fn note(&self) -> Option<String> {
        if !self.followed {
            return Some(NOT_FOLLOWED_NOTE.to_owned());
        }
        match (&self.error, &self.message) {
            (Some(e), _) => Some(format!("cannot follow the deployment: {e}")),
            (None, Some(m)) => Some(m.clone()),
            (None, None) if self.checked_at.is_none() => {
                Some("waiting for the first answer of Argo CD".to_owned())
            }
            (None, None) => None,
        }
    }
}

/// How to reach a resource: commands to copy, with what they need.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// The file of the resource's folder that explains how to use it (its README), if any.
    pub readme: Option<String>,
    /// Shell commands to copy, in order.
    pub commands: Vec<String>,
    /// A kubeconfig for the resource's namespace, signing in through `kubectl oidc-login`,
    /// when the catalog records how to reach its cluster.
    #[serde(default)]
    pub kubeconfig: Option<String>,
    /// The address a database is reached at inside the cluster (`appdb-rw.ws-nlp.svc:5432`).
    #[serde(default)]
    pub host: Option<String>,
    /// The Kubernetes Secret holding the credentials (never their value).
    #[serde(default)]
    pub secret: Option<String>,
}

/// Whether a merged folder is still on the base branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnBase {
    /// The folder is there.
    Present,
    /// The folder is gone.
    Absent,
    /// The base branch could not be read.
    Unknown,
}

/// The resources `requests` make, newest first. `on_base` answers, for a target whose request
/// was merged, whether its folder is still on the base branch.
pub fn resources(
    requests: &[RequestFacts],
    mut on_base: impl FnMut(&str) -> OnBase,
) -> Vec<Resource> {
    let mut by_target: BTreeMap<&str, Vec<&RequestFacts>> = BTreeMap::new();
    for r in requests {
        by_target.entry(r.target.as_str()).or_default().push(r);
    }
    let mut out = Vec::new();
    for (target, mut group) in by_target {
        group.sort_by_key(|r| r.id);
        let merged = group.iter().any(|r| r.state == RequestState::Merged);
        let latest = group.last().copied();
        let Some(latest) = latest else { continue };
        let (state, note) = if merged {
            match on_base(target) {
                OnBase::Present => (ResourceState::Merged, None),
                OnBase::Absent => (ResourceState::Removed, None),
                OnBase::Unknown => (
                    ResourceState::Merged,
                    Some("the base branch could not be read; shown as last merged".to_owned()),
                ),
            }
        } else {
            match latest.state {
                RequestState::Submitted
                | RequestState::AwaitingApproval
                | RequestState::Approved
                | RequestState::Proposing => (ResourceState::Pending, None),
                RequestState::Proposed => (ResourceState::Proposed, None),
                // Rejected, closed or failed before any merge: it never existed.
                _ => continue,
            }
        };
        let first = group[0];
        // What the folder is now comes from the latest request that got merged, else the
        // latest one asked.
        let current = group
            .iter()
            .rev()
            .find(|r| r.state == RequestState::Merged)
            .copied()
            .unwrap_or(latest);
        out.push(Resource {
            id: first.id,
            template: first.template.clone(),
            owner: first.author.clone(),
            owner_user_id: first.author_user_id,
            cluster: current.cluster.clone(),
            namespace: current.namespace.clone(),
            target: target.to_owned(),
            state,
            requests: group.iter().map(|r| r.id).collect(),
            expires: current.expires.clone(),
            access: None,
            note,
            deployment: None,
            created_at: first.created_at.clone(),
        });
    }
    out.sort_by_key(|r| std::cmp::Reverse(r.id));
    out
}

/// The resource a request belongs to: the id of the first request for the same target, if
/// that target is a resource.
pub fn resource_of(resources: &[Resource], request: i64) -> Option<i64> {
    resources
        .iter()
        .find(|r| r.requests.contains(&request))
        .map(|r| r.id)
}

/// Which resources a list shows: every field that is set must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceFilter {
    /// Only this owner's (username).
    pub owner: Option<String>,
    /// Only those made from this template.
    pub template: Option<String>,
    /// Only those on this cluster.
    pub cluster: Option<String>,
    /// Only those in this state.
    pub state: Option<ResourceState>,
}

impl ResourceFilter {
    /// Whether `r` passes.
    pub fn matches(&self, r: &Resource) -> bool {
        self.owner.as_ref().is_none_or(|o| *o == r.owner)
            && self.template.as_ref().is_none_or(|t| *t == r.template)
            && self
                .cluster
                .as_ref()
                .is_none_or(|c| r.cluster.as_ref() == Some(c))
            && self.state.is_none_or(|s| s == r.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RequestState as S;

    fn facts(id: i64, target: &str, state: RequestState) -> RequestFacts {
        RequestFacts {
            id,
            template: "gpu-workspace".into(),
            target: target.into(),
            state,
            author: "rui".into(),
            author_user_id: 7,
            cluster: Some("gpu-sp-01".into()),
            namespace: Some("ws-llm".into()),
            expires: Some("2027-01-01".into()),
            created_at: format!("2026-12-0{id}T10:00:00Z"),
        }
    }

    fn states(requests: &[RequestFacts], on_base: OnBase) -> Vec<(i64, ResourceState)> {
        resources(requests, |_| on_base)
            .iter()
            .map(|r| (r.id, r.state))
            .collect()
    }

    #[test]
    fn a_request_on_its_way_is_a_pending_then_proposed_resource() {
        for state in [S::Submitted, S::AwaitingApproval, S::Approved, S::Proposing] {
            let r = [facts(1, "a", state)];
            assert_eq!(states(&r, OnBase::Present), [(1, ResourceState::Pending)]);
        }
        let r = [facts(1, "a", S::Proposed)];
        assert_eq!(states(&r, OnBase::Present), [(1, ResourceState::Proposed)]);
    }

    #[test]
    fn a_merged_resource_is_what_the_base_branch_holds() {
        let r = [facts(1, "a", S::Merged)];
        assert_eq!(states(&r, OnBase::Present), [(1, ResourceState::Merged)]);
        assert_eq!(states(&r, OnBase::Absent), [(1, ResourceState::Removed)]);
        let unknown = resources(&r, |_| OnBase::Unknown);
        assert_eq!(unknown[0].state, ResourceState::Merged);
        assert!(unknown[0].note.as_deref().unwrap().contains("base branch"));
    }

    #[test]
    fn a_request_refused_before_any_merge_never_made_a_resource() {
        for state in [S::Rejected, S::Closed, S::Failed] {
            let r = [facts(1, "a", state)];
            assert!(states(&r, OnBase::Present).is_empty(), "{state}");
        }
    }

    #[test]
    fn later_requests_for_the_same_folder_join_the_resource_the_first_one_made() {
        let mut change = facts(4, "a", S::Proposed);
        change.expires = Some("2027-02-01".into());
        let r = [facts(1, "a", S::Merged), change, facts(2, "b", S::Proposed)];
        let all = resources(&r, |_| OnBase::Present);
        assert_eq!(all.len(), 2);
        let a = all.iter().find(|x| x.target == "a").unwrap();
        assert_eq!((a.id, a.requests.clone()), (1, vec![1, 4]));
        // Still what the merged request made until the change is merged.
        assert_eq!(a.state, ResourceState::Merged);
        assert_eq!(a.expires.as_deref(), Some("2027-01-01"));
        assert_eq!(resource_of(&all, 4), Some(1));
        assert_eq!(resource_of(&all, 99), None);
        // Newest first.
        assert_eq!(all[0].id, 2);
    }

    #[test]
    fn a_filter_keeps_what_matches_every_field_it_sets() {
        let all = resources(&[facts(1, "a", S::Proposed)], |_| OnBase::Present);
        let r = &all[0];
        assert!(ResourceFilter::default().matches(r));
        let by = |f: ResourceFilter| f.matches(r);
        assert!(by(ResourceFilter {
            owner: Some("rui".into()),
            cluster: Some("gpu-sp-01".into()),
            state: Some(ResourceState::Proposed),
            template: Some("gpu-workspace".into()),
        }));
        assert!(!by(ResourceFilter {
            owner: Some("ada".into()),
            ..Default::default()
        }));
        assert!(!by(ResourceFilter {
            state: Some(ResourceState::Live),
            ..Default::default()
        }));
        assert!(!by(ResourceFilter {
            cluster: Some("gpu-franca-01".into()),
            ..Default::default()
        }));
    }

    #[test]
    fn every_state_reads_back_from_its_name() {
        for s in ResourceState::ALL {
            assert_eq!(ResourceState::parse(s.as_str()), Some(s));
        }
        assert_eq!(ResourceState::parse("gone"), None);
    }
}
