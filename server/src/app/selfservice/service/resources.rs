//! Resources: what the self-service requests made, derived from the requests (who asked, for
//! which folder) and the monorepo's base branch (whether the folder is still there). See
//! `mirante_domain::resource` for the states and the grouping rule.

use std::collections::{BTreeSet, HashMap};

use mirante_domain::KubernetesAccess;
use mirante_domain::access::{self, Principal, Role};
use mirante_domain::request::{Action, RequestState};
use mirante_domain::resource::{
    self, Access, OnBase, RequestFacts, Resource, ResourceFilter, ResourceState,
};
use mirante_domain::selfservice::CatalogOption;
use serde_json::Value as Json;

use super::{SelfService, ServiceError};
use crate::adapters::db::requests::{RequestKind, RequestRecord};
use crate::app::selfservice::{deployments, kubeconfig};

/// The most requests the resources are derived from; far above what a team makes in years.
const MAX_REQUESTS: i64 = 20_000;

impl SelfService {
    /// The resources the caller may see (researchers their own, admins everyone's) that pass
    /// `filter`, newest first.
    pub async fn resources(
        &self,
        principal: &Principal,
        filter: &ResourceFilter,
    ) -> Result<Vec<Resource>, ServiceError> {
        let all = self.derive_resources(None).await?;
        Ok(all
            .into_iter()
            .filter(|r| visible(principal, r) && filter.matches(r))
            .collect())
    }

    /// Every resource, whoever owns it (the expiry sweep's view), newest first.
    pub(crate) async fn all_resources(&self) -> Result<Vec<Resource>, ServiceError> {
        self.derive_resources(None).await
    }

    /// One resource the caller may see; others' do not exist for a researcher.
    pub async fn resource(&self, principal: &Principal, id: i64) -> Result<Resource, ServiceError> {
        let creating = self
            .db
            .request(id)
            .await?
            .filter(|r| r.kind == RequestKind::Template)
            .ok_or_else(|| ServiceError::NotFound(format!("no resource {id}")))?;
        self.derive_resources(Some(&creating.target))
            .await?
            .into_iter()
            .find(|r| r.id == id && visible(principal, r))
            .ok_or_else(|| ServiceError::NotFound(format!("no resource {id}")))
    }

    /// The resource request `id` made or changed, if it is one.
    pub(super) async fn resource_of_request(
        &self,
        r: &RequestRecord,
    ) -> Result<Option<i64>, ServiceError> {
        if r.kind != RequestKind::Template {
            return Ok(None);
        }
        let group = self.requests_for(Some(&r.target)).await?;
        // Whether the folder is on the base branch does not change which resource it is.
        let found = resource::resources(&group, |_| OnBase::Present);
        Ok(resource::resource_of(&found, r.id))
    }

    async fn requests_for(&self, target: Option<&str>) -> Result<Vec<RequestFacts>, ServiceError> {
        let rows = self.template_requests(target).await?;
        Ok(rows.iter().map(|r| facts(&Parsed::of(r))).collect())
    }

    /// The stored template requests (of one folder, or all), oldest first.
    pub(super) async fn template_requests(
        &self,
        target: Option<&str>,
    ) -> Result<Vec<RequestRecord>, ServiceError> {
        Ok(self
            .db
            .requests_of_kind(RequestKind::Template, target, MAX_REQUESTS)
            .await?)
    }

    /// Every resource (of one folder, or all), with merged folders checked on the base branch.
    async fn derive_resources(&self, target: Option<&str>) -> Result<Vec<Resource>, ServiceError> {
        let rows = self.template_requests(target).await?;
        let parsed: Vec<Parsed<'_>> = rows.iter().map(Parsed::of).collect();
        self.derive_from(&parsed, target).await
    }

    /// The resources `rows` (the template requests of `target`, or all) made.
    async fn derive_from(
        &self,
        rows: &[Parsed<'_>],
        target: Option<&str>,
    ) -> Result<Vec<Resource>, ServiceError> {
        let facts: Vec<RequestFacts> = rows.iter().map(facts).collect();
        let merged: BTreeSet<&str> = rows
            .iter()
            .filter(|r| r.record.state == RequestState::Merged)
            .map(|r| r.record.target.as_str())
            .collect();
        let on_base = self.on_base(&merged).await;
        let mut found = resource::resources(&facts, |t| {
            on_base.get(t).copied().unwrap_or(OnBase::Unknown)
        });
        let snapshot = self.catalog.current().snapshot.clone();
        let followed = self.follower.is_some();
        let rows_by_request = if followed && !merged.is_empty() {
            deployments::by_request(self.db.deployments(target).await?)
        } else {
            HashMap::new()
        };
        // The latest merged request of a folder: the one that made it what it is, whose
        // deployment (or removal) the resource shows.
        let latest_merged = |target: &str| {
            rows.iter()
                .rev()
                .find(|q| q.record.target == target && q.record.state == RequestState::Merged)
        };
        for r in &mut found {
            if matches!(r.state, ResourceState::Merged) {
                // How to reach it, from the files of that request.
                let files = latest_merged(&r.target);
                let cluster = r
                    .cluster
                    .as_deref()
                    .and_then(|c| snapshot.item(c))
                    .and_then(|i| i.kubernetes.as_deref().map(|k| (i.id.as_str(), k)));
                r.access = files.map(|f| access_for(f, cluster));
                // Its deployment: that of the latest merged request.
                let row = files.and_then(|q| rows_by_request.get(&q.record.id));
                let deployment = deployments::deployment_view(followed, row);
                r.state = deployments::shown_state(row);
                if r.note.is_none() {
                    r.note = deployment.note();
                }
                r.deployment = Some(deployment);
            } else if followed && matches!(r.state, ResourceState::Removed) {
                // A removal counts once Argo CD no longer has the Application that ran it.
                let removal = latest_merged(&r.target);
                if let Some(q) = removal.filter(|q| q.record.action == Action::Remove) {
                    let row = rows_by_request.get(&q.record.id);
                    r.state = deployments::removal_state(row);
                    let deployment = deployments::deployment_view(followed, row);
                    if r.state == ResourceState::Removing && r.note.is_none() {
                        r.note = deployment.note();
                    }
                    r.deployment = Some(deployment);
                }
            }
        }
        Ok(found)
    }

    /// Whether each folder is on the base branch's head; `Unknown` for all when the forge
    /// cannot be read (the error is logged, the resources still listed).
    async fn on_base(&self, targets: &BTreeSet<&str>) -> HashMap<String, OnBase> {
        let mut out = HashMap::new();
        if targets.is_empty() {
            return out;
        }
        let forge = self.forge();
        let head = match forge.branch_head(&self.base_branch).await {
            Ok(Some(head)) => head,
            Ok(None) => {
                tracing::warn!(branch = %self.base_branch, "the base branch does not exist");
                return out;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the base branch for resources");
                return out;
            }
        };
        for target in targets {
            let state = match forge.path_exists(&head, target).await {
                Ok(true) => OnBase::Present,
                Ok(false) => OnBase::Absent,
                Err(e) => {
                    tracing::warn!(error = %e, target, "cannot check a resource's folder");
                    OnBase::Unknown
                }
            };
            out.insert((*target).to_owned(), state);
        }
        out
    }
}

fn visible(principal: &Principal, r: &Resource) -> bool {
    access::may_view_request(principal.user_id, &principal.viewer, r.owner_user_id)
}

/// A stored request with its YAML files parsed once, for both its [`facts`] and, merged, its
/// [`access_for`].
struct Parsed<'a> {
    record: &'a RequestRecord,
    /// The record's [`yaml_documents`].
    docs: Vec<Json>,
}

impl<'a> Parsed<'a> {
    fn of(record: &'a RequestRecord) -> Self {
        Parsed {
            record,
            docs: yaml_documents(record),
        }
    }
}

/// What the grouping needs of a stored request: the cluster from its values, the namespace
/// and the expiry date from its rendered files.
fn facts(parsed: &Parsed<'_>) -> RequestFacts {
    let (r, docs) = (parsed.record, &parsed.docs);
    let namespace = docs.iter().find_map(|d| {
        if d["kind"] == "Namespace" {
            d["metadata"]["name"].as_str().map(str::to_owned)
        } else {
            d["metadata"]["namespace"].as_str().map(str::to_owned)
        }
    });
    let expires = docs.iter().find_map(|d| {
        d["metadata"]["labels"]["mirante.dev/expires"]
            .as_str()
            .map(str::to_owned)
    });
    RequestFacts {
        id: r.id,
        template: r.template.clone(),
        target: r.target.clone(),
        state: r.state,
        author: r.author.username.clone(),
        author_user_id: r.author.user_id,
        cluster: r.values["cluster"].as_str().map(str::to_owned),
        namespace,
        expires,
        created_at: r
            .created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }
}

/// The request's YAML files as JSON values (one per document); files that do not parse are
/// skipped (they were validated when rendered).
fn yaml_documents(r: &RequestRecord) -> Vec<Json> {
    r.files
        .iter()
        .filter(|f| f.path.ends_with(".yaml") || f.path.ends_with(".yml"))
        .flat_map(|f| serde_saphyr::from_multiple::<Json>(&f.content).unwrap_or_default())
        .collect()
}

/// How to reach what the files describe: the folder's README and commands for the kinds of
/// object the files hold (a namespace to work in, with a kubeconfig when the catalog records
/// how to reach its `cluster`; a CloudNativePG cluster to connect to). No secret is ever part
/// of it: the database password is read from the cluster by the owner.
fn access_for(parsed: &Parsed<'_>, cluster: Option<(&str, &KubernetesAccess)>) -> Access {
    let (r, docs) = (parsed.record, &parsed.docs);
    let readme = r
        .files
        .iter()
        .find(|f| f.path.rsplit('/').next() == Some("README.md"))
        .map(|f| f.path.clone());
    let mut access = Access {
        readme,
        ..Access::default()
    };
    let gpus: u64 = docs
        .iter()
        .filter(|d| d["kind"] == "ResourceQuota")
        .filter_map(|d| {
            let v = &d["spec"]["hard"]["requests.nvidia.com/gpu"];
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .sum();
    for d in docs {
        let name = d["metadata"]["name"].as_str().unwrap_or_default();
        let kind = d["kind"].as_str().unwrap_or_default();
        let api = d["apiVersion"].as_str().unwrap_or_default();
        if kind == "Namespace" && !name.is_empty() {
            access.commands.extend(kubeconfig::gpu_commands(name, gpus));
            if let Some((cluster, k)) = cluster {
                access.kubeconfig = Some(kubeconfig::kubeconfig(k, cluster, name));
            }
        } else if kind == "Cluster" && api.starts_with("postgresql.cnpg.io/") {
            let ns = d["metadata"]["namespace"].as_str().unwrap_or("default");
            let owner = d["spec"]["bootstrap"]["initdb"]["owner"]
                .as_str()
                .unwrap_or("app");
            let database = d["spec"]["bootstrap"]["initdb"]["database"]
                .as_str()
                .unwrap_or("app");
            access.host = Some(format!("{name}-rw.{ns}.svc:5432"));
            access.secret = Some(format!("{name}-app"));
            access.commands.push(format!(
                "kubectl -n {ns} get secret {name}-app -o jsonpath='{{.data.password}}' | base64 -d"
            ));
            access.commands.push(format!(
                "kubectl -n {ns} port-forward svc/{name}-rw 5432:5432"
            ));
            access
                .commands
                .push(format!("psql -h 127.0.0.1 -U {owner} {database}"));
            if let Some((cluster, k)) = cluster {
                access.kubeconfig = Some(kubeconfig::kubeconfig(k, cluster, ns));
            }
        }
    }
    access
}

impl SelfService {
    /// The namespaces the caller may put things in through an `own-namespaces` parameter:
    /// `None` (any) for an admin; for anyone else the namespaces their own workspaces made —
    /// a resource whose files create the `Namespace` — that are on the base branch (merged,
    /// or being applied), with the cluster each is on.
    pub async fn own_namespaces(
        &self,
        principal: &Principal,
    ) -> Result<Option<Vec<CatalogOption>>, ServiceError> {
        if principal.viewer.role == Role::Admin {
            return Ok(None);
        }
        // One read and one parse of the requests for both the resources and the files that
        // made them.
        let rows = self.template_requests(None).await?;
        let parsed: Vec<Parsed<'_>> = rows.iter().map(Parsed::of).collect();
        let mine: Vec<Resource> = self
            .derive_from(&parsed, None)
            .await?
            .into_iter()
            .filter(|r| r.owner_user_id == principal.user_id && r.state.has_files_on_base())
            .collect();
        let mut out: Vec<CatalogOption> = Vec::new();
        for r in &mine {
            let Some(namespace) = &r.namespace else {
                continue;
            };
            let creates = parsed.iter().any(|q| {
                q.record.target == r.target
                    && q.record.state == RequestState::Merged
                    && q.docs.iter().any(|d| {
                        d["kind"] == "Namespace" && d["metadata"]["name"] == namespace.as_str()
                    })
            });
            if creates && !out.iter().any(|o| &o.value == namespace) {
                let cluster = r.cluster.clone().unwrap_or_default();
                out.push(CatalogOption {
                    value: namespace.clone(),
                    label: if cluster.is_empty() {
                        namespace.clone()
                    } else {
                        format!("{namespace} ({cluster})")
                    },
                    detail: cluster,
                    capacity: None,
                    kubernetes: None,
                    folder: None,
                });
            }
        }
        out.sort_by(|a, b| a.value.cmp(&b.value));
        Ok(Some(out))
    }
}
