//! What the GPU capacity ledger (`mirante_domain::capacity`) is computed from: the GPU
//! clusters of the catalog in force, the workspaces on the monorepo's base branch (read
//! through the forge, so a hand edit in git counts) and the requests in the database.
//!
//! A cluster's workspaces are the folders under `<folder>/workspaces/` on the base branch,
//! where `<folder>` is the cluster's GitOps folder (the catalog's `gitops.folder`, else
//! `clusters/<cluster>`) and where the `gpu-workspace` template puts them. A folder counts with the GPUs of the
//! ResourceQuota among its YAML files (`spec.hard["requests.nvidia.com/gpu"]`, else
//! `nvidia.com/gpu`, else `limits.nvidia.com/gpu`) and the name of its Namespace (else the
//! quota's namespace, else the folder's name). A request counts when its template has a
//! number capped by a GPU cluster (`maximumFrom` a parameter with `options: gpu-clusters`).

use std::collections::BTreeMap;

use mirante_domain::capacity::{Claim, Cluster, Stage, Workspace};
use mirante_domain::selfservice::{CatalogContext, CatalogOption, OptionSource, TemplateManifest};
use serde_json::Value;

use crate::adapters::db::requests::RequestRecord;
use crate::adapters::forge::{DirLimits, Forge, ForgeError};
use crate::app::selfservice::template::TemplateSet;

/// Most files one cluster's `workspaces/` folder may hold for the ledger to read it.
pub(crate) const WORKSPACES_MAX_FILES: usize = 5000;
/// Most bytes of them.
pub(crate) const WORKSPACES_MAX_BYTES: u64 = 16 << 20;

/// The folder of a cluster's workspaces in the monorepo, under its GitOps folder.
pub(crate) fn workspaces_folder(cluster: &CatalogOption) -> String {
    let folder = cluster
        .folder
        .clone()
        .unwrap_or_else(|| mirante_domain::default_gitops_folder(&cluster.value));
    format!("{folder}/workspaces")
}

/// The GPU clusters of the catalog with their totals.
pub(crate) fn clusters(catalog: &CatalogContext) -> Vec<Cluster> {
    catalog
        .gpu_clusters
        .iter()
        .map(|o| Cluster {
            id: o.value.clone(),
            total: o.capacity.unwrap_or(0),
        })
        .collect()
}

/// What one workspace's files say: its namespace (if a file names one) and its GPUs (if a
/// ResourceQuota grants any).
pub(crate) fn read_workspace<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> (Option<String>, Option<u64>) {
    let mut namespace = None;
    let mut quota_namespace = None;
    let mut gpus: Option<u64> = None;
    for (path, content) in files {
        if !(path.ends_with(".yaml") || path.ends_with(".yml")) {
            continue;
        }
        let Ok(docs) = serde_saphyr::from_multiple::<Value>(content) else {
            continue;
        };
        for doc in docs {
            let name = doc.pointer("/metadata/name").and_then(Value::as_str);
            match doc.get("kind").and_then(Value::as_str) {
                Some("Namespace") => namespace = namespace.or(name.map(str::to_owned)),
                Some("ResourceQuota") => {
                    quota_namespace = quota_namespace.or(doc
                        .pointer("/metadata/namespace")
                        .and_then(Value::as_str)
                        .map(str::to_owned));
                    let hard = doc.pointer("/spec/hard");
                    let found = [
                        "requests.nvidia.com/gpu",
                        "nvidia.com/gpu",
                        "limits.nvidia.com/gpu",
                    ]
                    .iter()
                    .find_map(|k| hard.and_then(|h| h.get(*k)).and_then(quantity));
                    if let Some(n) = found {
                        gpus = Some(gpus.unwrap_or(0) + n);
                    }
                }
                _ => {}
            }
        }
    }
    (namespace.or(quota_namespace), gpus)
}

/// A whole number of GPUs from a quantity (`1`, `"2"`).
fn quantity(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The workspaces of `cluster` on the base branch at commit `rev`: none when the folder does
/// not exist.
pub(crate) async fn workspaces_on(
    forge: &dyn Forge,
    rev: &str,
    cluster: &CatalogOption,
) -> Result<Vec<Workspace>, ForgeError> {
    let folder = workspaces_folder(cluster);
    let limits = DirLimits {
        max_files: WORKSPACES_MAX_FILES,
        max_bytes: WORKSPACES_MAX_BYTES,
    };
    let files = match forge.read_dir(rev, &folder, None, limits).await {
        Ok(read) => read.files.unwrap_or_default(),
        Err(ForgeError::NotFound(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut by_name: BTreeMap<&str, Vec<(&str, String)>> = BTreeMap::new();
    for (path, bytes) in &files {
        let Some((name, rest)) = path.split_once('/') else {
            continue;
        };
        by_name
            .entry(name)
            .or_default()
            .push((rest, String::from_utf8_lossy(bytes).into_owned()));
    }
    Ok(by_name
        .into_iter()
        .filter_map(|(name, files)| {
            let (namespace, gpus) = read_workspace(files.iter().map(|(p, c)| (*p, c.as_str())));
            Some(Workspace {
                cluster: cluster.value.clone(),
                target: format!("{folder}/{name}"),
                namespace: namespace.unwrap_or_else(|| name.to_owned()),
                gpus: gpus?,
            })
        })
        .collect())
}

/// Which parameters of a template name a GPU cluster and its number of GPUs.
pub(crate) fn gpu_parameters(manifest: &TemplateManifest) -> Option<(&str, &str)> {
    manifest.parameters.iter().find_map(|p| {
        let from = p.maximum_from.as_deref()?;
        let cluster = manifest.parameter(from)?;
        (cluster.options == Some(OptionSource::GpuClusters))
            .then_some((cluster.name.as_str(), p.name.as_str()))
    })
}

/// What a request asks of a GPU cluster: `None` when its template asks for no GPUs (or is
/// gone) or its state holds nothing.
pub(crate) fn claim_of(request: &RequestRecord, set: &TemplateSet) -> Option<Claim> {
    let stage = Stage::of(request.state)?;
    let template = set.get(&request.template)?;
    let (cluster, gpus) = gpu_parameters(template.manifest())?;
    let cluster = request.values.get(cluster)?.as_str()?.to_owned();
    let gpus = request.values.get(gpus).and_then(quantity)?;
    let (namespace, _) = read_workspace(
        request
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.content.as_str())),
    );
    let namespace = namespace.unwrap_or_else(|| {
        request
            .target
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned()
    });
    Some(Claim {
        request: request.id,
        cluster,
        target: request.target.clone(),
        namespace,
        gpus,
        stage,
    })
}

/// The claims of merged `removals` whose removal is not over (`removed` answers whether it
/// is): for each, the claim of the latest merged request before it on the same folder (among
/// `open`), held by the removal at stage [`Stage::Removing`].
pub(crate) fn removing_claims(
    removals: &[&RequestRecord],
    open: &[RequestRecord],
    set: &TemplateSet,
    removed: impl Fn(i64) -> bool,
) -> Vec<Claim> {
    removals
        .iter()
        .filter(|r| !removed(r.id))
        .filter_map(|r| {
            let last = open
                .iter()
                .filter(|o| {
                    o.target == r.target
                        && o.id < r.id
                        && o.state == mirante_domain::request::RequestState::Merged
                        && o.action != mirante_domain::request::Action::Remove
                })
                .max_by_key(|o| o.id)?;
            claim_of(last, set).map(|c| Claim {
                request: r.id,
                stage: Stage::Removing,
                ..c
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_counts_its_quota_s_gpus_under_its_namespace_s_name() {
        let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ws-rui-llm\n";
        let quota = "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\n  namespace: ws-rui-llm\nspec:\n  hard:\n    requests.nvidia.com/gpu: \"2\"\n    limits.nvidia.com/gpu: \"2\"\n";
        let got = read_workspace([
            ("namespace.yaml", namespace),
            ("resourcequota.yaml", quota),
            ("README.md", "# not yaml: ["),
        ]);
        assert_eq!(got, (Some("ws-rui-llm".to_owned()), Some(2)));
    }

    #[test]
    fn a_hand_written_file_with_several_documents_and_a_bare_number_counts_too() {
        let text = "kind: ResourceQuota\nmetadata:\n  namespace: lab\nspec:\n  hard:\n    nvidia.com/gpu: 3\n---\nkind: ConfigMap\nmetadata:\n  name: x\n";
        assert_eq!(
            read_workspace([("all.yml", text)]),
            (Some("lab".to_owned()), Some(3))
        );
    }

    #[test]
    fn a_folder_without_a_gpu_quota_holds_no_gpus() {
        let text = "kind: Namespace\nmetadata:\n  name: ws-x\n";
        assert_eq!(
            read_workspace([("ns.yaml", text), ("broken.yaml", ": : :\n\t[")]),
            (Some("ws-x".to_owned()), None)
        );
    }
}
