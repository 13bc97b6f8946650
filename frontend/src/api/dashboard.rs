//! The admins' home dashboard: what needs attention now, each part a summary of a full page.

use leptos::prelude::*;
use mirante_domain::{
    Priority, Snapshot, State,
    history::CatalogHistory,
    lint::{Finding, Severity},
};
use serde::{Deserialize, Serialize};

use super::selfservice::RequestSummary;

/// Most findings, failing checks, tasks, requests and changes the dashboard lists; the
/// counts cover all of them and each part links to its full page.
pub const DASHBOARD_LIMIT: usize = 5;

/// What the dashboard shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DashboardPage {
    /// The lint's findings: counts per severity and the most serious few.
    pub findings: FindingsSummary,
    /// The live checks' last run and those failing now.
    pub checks: LiveChecks,
    /// Pending tasks by priority and site, the most urgent few.
    pub tasks: TasksSummary,
    /// Requests awaiting an admin's decision, newest first (at most [`DASHBOARD_LIMIT`]).
    pub approvals: Vec<RequestSummary>,
    /// How many requests await a decision in all.
    pub approvals_total: usize,
    /// Each template's title in both languages, to name the requests in the reader's.
    #[serde(default)]
    pub titles: Vec<(String, mirante_domain::selfservice::Localized)>,
    /// The latest changes of items' states.
    pub changes: RecentChanges,
    /// The resources on each cluster, by state, with its free GPUs.
    pub resources: Vec<ClusterResources>,
}

/// One cluster's part of the resources card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterResources {
    /// The cluster's catalog id; `None` for resources on no cluster (a database names none).
    pub cluster: Option<String>,
    /// How many resources are in each state, in the states' order, only those with some.
    pub counts: Vec<(mirante_domain::resource::ResourceState, usize)>,
    /// Its GPUs, for a GPU cluster.
    pub gpus: Option<super::selfservice::GpuCapacity>,
}

/// The resources per cluster: GPU clusters first (in the catalog's order, also those with no
/// resource yet), then the other clusters by name, then resources on no cluster.
pub fn cluster_resources(
    resources: &[mirante_domain::resource::Resource],
    capacity: &[super::selfservice::GpuCapacity],
) -> Vec<ClusterResources> {
    use mirante_domain::resource::ResourceState;
    let mut clusters: Vec<Option<String>> = capacity.iter().map(|c| Some(c.id.clone())).collect();
    let mut others: Vec<Option<String>> = resources
        .iter()
        .map(|r| r.cluster.clone())
        .filter(|c| !clusters.contains(c))
        .collect();
    others.sort_by_key(|c| (c.is_none(), c.clone()));
    others.dedup();
    clusters.extend(others);
    clusters
        .into_iter()
        .map(|cluster| ClusterResources {
            counts: ResourceState::ALL
                .into_iter()
                .map(|s| {
                    let n = resources
                        .iter()
                        .filter(|r| r.cluster == cluster && r.state == s)
                        .count();
                    (s, n)
                })
                .filter(|&(_, n)| n > 0)
                .collect(),
            gpus: capacity
                .iter()
                .find(|c| Some(&c.id) == cluster.as_ref())
                .cloned(),
            cluster,
        })
        .collect()
}

/// The findings part of the dashboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingsSummary {
    /// How many findings of each severity, most serious first.
    pub counts: Vec<(Severity, usize)>,
    /// The first findings, errors first.
    pub top: Vec<Finding>,
    /// Names of the items the top findings name, by id.
    pub names: Vec<(String, String)>,
}

/// The live checks (probes, Argo CD applications) as their last run left them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveChecks {
    /// How many checks the last run made.
    pub total: usize,
    /// When it finished (RFC 3339, UTC); `None` before the first run.
    pub last_run: Option<String>,
    /// The checks that failed, in catalog order.
    pub failing: Vec<FailingCheck>,
}

/// A live check that failed on its last run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailingCheck {
    /// The item whose evidence it is.
    pub item: String,
    /// The item's name.
    pub name: String,
    /// `probe` or `argocd`.
    pub kind: String,
    /// The probed URL, or the Argo CD application's name.
    pub target: String,
    /// Why it failed, in one line.
    pub reason: String,
}

/// The pending tasks part of the dashboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TasksSummary {
    /// How many tasks in all.
    pub total: usize,
    /// How many per priority, most urgent first; `None` counts tasks without one.
    pub by_priority: Vec<(Option<Priority>, usize)>,
    /// How many per site (id, name, count), in catalog order; tasks for no site in particular
    /// are counted in `platform_wide`.
    pub by_site: Vec<(String, String, usize)>,
    /// Tasks that name no site.
    pub platform_wide: usize,
    /// The most urgent tasks (critical, then MVP, then the rest), catalog order within.
    pub top: Vec<TaskRow>,
}

/// One task on the dashboard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRow {
    /// Task id.
    pub id: String,
    /// What is to be done.
    pub title: String,
    /// How urgent.
    pub priority: Option<Priority>,
    /// Its layer's id, for the link.
    pub layer: String,
    /// Its layer's label.
    pub layer_label: String,
    /// Names of the sites it concerns.
    pub sites: Vec<String>,
}

/// The latest changes of items' states, from the catalog's history.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecentChanges {
    /// Whether the portal keeps a history of the catalog; when not, the dashboard says so
    /// instead of showing an empty list as if nothing had changed.
    pub available: bool,
    /// Changes, newest first.
    pub changes: Vec<StateChange>,
}

impl RecentChanges {
    /// No history to read.
    pub fn unavailable() -> Self {
        RecentChanges::default()
    }
}

/// One item changing state in the catalog's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateChange {
    /// The item.
    pub item: String,
    /// Its name.
    pub name: String,
    /// Its state before; `None` when the change added the item.
    pub from: Option<State>,
    /// Its state after.
    pub to: State,
    /// When (RFC 3339 or an ISO date).
    pub at: String,
    /// The revision (commit) that made the change, when known.
    pub revision: Option<String>,
}

/// Priorities in the order the dashboard lists them, most urgent first; `None` last.
pub const PRIORITY_ORDER: [Option<Priority>; 5] = [
    Some(Priority::Critical),
    Some(Priority::Mvp),
    Some(Priority::Later),
    Some(Priority::Normal),
    None,
];

/// Position of a priority in [`PRIORITY_ORDER`].
pub fn priority_rank(p: Option<Priority>) -> usize {
    PRIORITY_ORDER
        .iter()
        .position(|x| *x == p)
        .unwrap_or(PRIORITY_ORDER.len())
}

/// The pending tasks of a catalog, summarised.
pub fn tasks_summary(snap: &mirante_domain::Snapshot, limit: usize) -> TasksSummary {
    let c = snap.catalog();
    let by_priority = PRIORITY_ORDER
        .iter()
        .map(|p| (*p, c.tasks.iter().filter(|t| t.priority == *p).count()))
        .filter(|(_, n)| *n > 0)
        .collect();
    let by_site = c
        .sites
        .iter()
        .map(|s| {
            let n = c.tasks.iter().filter(|t| t.sites.contains(&s.id)).count();
            (s.id.clone(), s.name.clone(), n)
        })
        .collect();
    let mut ordered: Vec<&mirante_domain::Task> = c.tasks.iter().collect();
    // Stable: catalog order within a priority.
    ordered.sort_by_key(|t| priority_rank(t.priority));
    let top = ordered
        .into_iter()
        .take(limit)
        .map(|t| TaskRow {
            id: t.id.clone(),
            title: t.title.clone(),
            priority: t.priority,
            layer: t.layer.clone(),
            layer_label: snap
                .layer(&t.layer)
                .map(|l| mirante_domain::layer_label(&l.number, &l.name))
                .unwrap_or_else(|| t.layer.clone()),
            sites: t
                .sites
                .iter()
                .map(|s| snap.site(s).map_or_else(|| s.clone(), |x| x.name.clone()))
                .collect(),
        })
        .collect();
    TasksSummary {
        total: c.tasks.len(),
        by_priority,
        by_site,
        platform_wide: c.tasks.iter().filter(|t| t.sites.is_empty()).count(),
        top,
    }
}

/// The `limit` latest state changes of `history`, newest first, named as `snapshot` names
/// them. Items that left the catalog are listed under their id; a removal is not a state and
/// is not listed.
pub fn recent_changes(
    history: &CatalogHistory,
    snapshot: &Snapshot,
    limit: usize,
) -> RecentChanges {
    let mut changes: Vec<StateChange> = history
        .changes
        .iter()
        .flat_map(|(item, changes)| {
            changes.iter().filter_map(move |change| {
                let to = change.to?;
                Some(StateChange {
                    item: item.clone(),
                    name: snapshot
                        .item(item)
                        .map_or_else(|| item.clone(), |i| i.name.to_string()),
                    from: change.from,
                    to,
                    at: change.revision.date.clone(),
                    revision: Some(change.revision.commit.clone()),
                })
            })
        })
        .collect();
    // Newest first; within one commit, by item id for a stable order.
    changes.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| a.item.cmp(&b.item)));
    changes.truncate(limit);
    RecentChanges {
        available: true,
        changes,
    }
}

/// `(id, name)` of each item the findings concern, once each, in the findings' order.
pub fn finding_names(
    snap: &mirante_domain::Snapshot,
    findings: &[Finding],
) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = Vec::new();
    for f in findings {
        if !names.iter().any(|(id, _)| *id == f.item)
            && let Some(i) = snap.item(&f.item)
        {
            names.push((i.id.to_string(), i.name.to_string()));
        }
    }
    names
}

/// The findings summarised: counts of all, the first `limit` (they come errors first).
pub fn findings_summary(
    snap: &mirante_domain::Snapshot,
    findings: &[Finding],
    limit: usize,
) -> FindingsSummary {
    let top: Vec<Finding> = findings.iter().take(limit).cloned().collect();
    let names = finding_names(snap, &top);
    FindingsSummary {
        counts: Severity::ALL
            .into_iter()
            .map(|s| (s, findings.iter().filter(|f| f.severity == s).count()))
            .collect(),
        top,
        names,
    }
}

/// The dashboard's data; `None` for readers who do not get the dashboard (everyone but
/// admins), who see the overview alone.
#[server(prefix = "/_fn", endpoint = "dashboard")]
pub async fn get_dashboard() -> Result<Option<DashboardPage>, ServerFnError> {
    use mirante_domain::request::RequestState;

    // Server rendering calls this in-process, where the route table is not consulted: the
    // viewer's role is checked here as well.
    let Some(parts) = use_context::<http::request::Parts>() else {
        return Ok(None);
    };
    let Some(viewer) = parts.extensions.get::<mirante_domain::Viewer>().cloned() else {
        return Ok(None);
    };
    if !viewer.sees_dashboard() {
        return Ok(None);
    }
    crate::ssr::authorize("dashboard")?;
    let portal = use_context::<crate::ssr::PortalHandle>()
        .ok_or_else(|| ServerFnError::new("portal data is not available"))?;
    let selfservice = use_context::<crate::ssr::SelfServiceHandle>()
        .ok_or_else(|| ServerFnError::new("self-service is not available"))?;
    let snap = portal.snapshot();
    let checks = portal.live_checks();
    // The lint may read the monorepo's files.
    let lint_portal = portal.clone();
    let findings = tokio::task::spawn_blocking(move || lint_portal.findings())
        .await
        .map_err(|e| ServerFnError::new(format!("the lint did not finish: {e}")))?;
    let awaiting: Vec<RequestSummary> = selfservice
        .requests(&parts)
        .await?
        .into_iter()
        .filter(|r| r.state == RequestState::AwaitingApproval)
        .collect();
    let resources = selfservice.resources(&parts).await?;
    let capacity = selfservice.gpu_capacity(&parts).await?;
    let titles = super::selfservice::template_titles(&selfservice, &parts).await;
    Ok(Some(DashboardPage {
        titles,
        resources: cluster_resources(&resources, &capacity),
        findings: findings_summary(&snap, &findings, DASHBOARD_LIMIT),
        checks,
        tasks: tasks_summary(&snap, DASHBOARD_LIMIT),
        approvals_total: awaiting.len(),
        approvals: awaiting.into_iter().take(DASHBOARD_LIMIT).collect(),
        changes: match super::history::history().await? {
            Ok(history) => recent_changes(&history, &snap, DASHBOARD_LIMIT),
            Err(_) => RecentChanges::unavailable(),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_are_counted_per_cluster_gpu_clusters_first_and_empty_ones_kept() {
        use mirante_domain::resource::{Resource, ResourceState};
        let r = |id: i64, cluster: Option<&str>, state| Resource {
            id,
            template: "t".into(),
            owner: "rui".into(),
            owner_user_id: 1,
            cluster: cluster.map(str::to_owned),
            namespace: None,
            target: format!("t/{id}"),
            state,
            requests: vec![id],
            expires: None,
            access: None,
            note: None,
            deployment: None,
            created_at: String::new(),
        };
        let gpu = |id: &str, total, free| super::super::selfservice::GpuCapacity {
            id: id.into(),
            total,
            free,
        };
        let resources = [
            r(1, Some("gpu-b"), ResourceState::Merged),
            r(2, None, ResourceState::Pending),
            r(3, Some("gpu-b"), ResourceState::Merged),
            r(4, Some("k3s"), ResourceState::Live),
            r(5, Some("gpu-b"), ResourceState::Pending),
        ];
        let capacity = [gpu("gpu-a", 2, 2), gpu("gpu-b", 2, 0)];

        let rows = cluster_resources(&resources, &capacity);

        type Shown<'a> = (Option<&'a str>, Vec<(ResourceState, usize)>, Option<i64>);
        let shown: Vec<Shown<'_>> = rows
            .iter()
            .map(|c| {
                (
                    c.cluster.as_deref(),
                    c.counts.clone(),
                    c.gpus.as_ref().map(|g| g.free),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                (Some("gpu-a"), vec![], Some(2)),
                (
                    Some("gpu-b"),
                    vec![(ResourceState::Pending, 1), (ResourceState::Merged, 2)],
                    Some(0)
                ),
                (Some("k3s"), vec![(ResourceState::Live, 1)], None),
                (None, vec![(ResourceState::Pending, 1)], None),
            ]
        );
    }

    fn revision(commit: &str, date: &str) -> mirante_domain::history::Revision {
        mirante_domain::history::Revision {
            commit: commit.to_owned(),
            date: date.to_owned(),
            author: "Ana".to_owned(),
            summary: "catalog".to_owned(),
        }
    }

    #[test]
    fn recent_changes_are_the_newest_state_changes_first_and_skip_removals() {
        let file = |pairs: &[(&str, State)]| -> mirante_domain::history::FileStates {
            pairs.iter().map(|(id, s)| ((*id).into(), *s)).collect()
        };
        let mut builder = mirante_domain::history::HistoryBuilder::new();
        builder.revision(
            &revision("c1", "2026-08-01T10:00:00+00:00"),
            vec![file(&[("a", State::Desired), ("b", State::Desired)])],
        );
        builder.revision(
            &revision("c2", "2026-09-01T10:00:00+00:00"),
            vec![file(&[("a", State::Declared), ("b", State::Desired)])],
        );
        builder.revision(
            &revision("c3", "2026-10-01T10:00:00+00:00"),
            vec![file(&[("a", State::Validated)])],
        );
        let history = builder.history(Some("c3".to_owned()));
        let snapshot = Snapshot::new(Default::default(), String::new(), None);

        let recent = recent_changes(&history, &snapshot, 3);

        assert!(recent.available);
        let seen: Vec<_> = recent
            .changes
            .iter()
            .map(|c| (c.item.as_str(), c.from, c.to, c.revision.as_deref()))
            .collect();
        assert_eq!(
            seen,
            vec![
                ("a", Some(State::Declared), State::Validated, Some("c3")),
                ("a", Some(State::Desired), State::Declared, Some("c2")),
                ("a", None, State::Desired, Some("c1")),
            ]
        );
    }

    fn demo() -> mirante_domain::Snapshot {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");
        mirante_domain::load::load_dir(&dir)
            .expect("the demo catalog loads")
            .into_snapshot(None)
    }

    #[test]
    fn tasks_come_critical_first_then_mvp_and_are_counted_per_priority_and_site() {
        let snap = demo();

        let s = tasks_summary(&snap, 8);

        let ranks: Vec<usize> = s.top.iter().map(|t| priority_rank(t.priority)).collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
        assert_eq!(s.top[0].priority, Some(Priority::Critical));
        assert_eq!(
            s.by_priority.iter().map(|(_, n)| n).sum::<usize>(),
            s.total,
            "every task has one priority bucket"
        );
        let critical = snap
            .catalog()
            .tasks
            .iter()
            .filter(|t| t.priority == Some(Priority::Critical))
            .count();
        assert_eq!(s.by_priority[0], (Some(Priority::Critical), critical));
        let sp = s.by_site.iter().find(|(id, _, _)| id == "sp").unwrap();
        assert_eq!(
            sp.2,
            snap.catalog()
                .tasks
                .iter()
                .filter(|t| t.sites.iter().any(|x| x == "sp"))
                .count()
        );
    }

    #[test]
    fn the_findings_summary_counts_all_and_lists_the_first_few_with_their_item_names() {
        let snap = demo();
        let item = &snap.catalog().items[0];
        let finding = |severity| Finding {
            severity,
            code: mirante_domain::lint::Code::DeclaredNotReal,
            item: item.id.to_string(),
            message: String::new(),
            args: Default::default(),
        };
        let all = vec![
            finding(Severity::Error),
            finding(Severity::Warning),
            finding(Severity::Warning),
        ];

        let s = findings_summary(&snap, &all, 2);

        assert_eq!(
            s.counts,
            [
                (Severity::Error, 1),
                (Severity::Warning, 2),
                (Severity::Info, 0)
            ]
        );
        assert_eq!(s.top.len(), 2);
        assert_eq!(s.names, [(item.id.to_string(), item.name.to_string())]);
    }
}
