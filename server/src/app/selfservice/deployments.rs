//! Following resources past the merge: with Argo CD configured, a task started with the
//! server finds, for every merged template request, the Argo CD Application that deploys its
//! folder and records where the deployment stands (`syncing`, `live`, `degraded`), each step
//! once on the request's timeline.
//!
//! ```text
//! every poll interval (or at once after a merge in the portal):
//!   merged requests not followed yet (a row per request; only the latest of a folder is asked about) ── merge commit (forge; else the base branch's head) ──► row, due now
//!   due rows ── one GET /api/v1/applications ──► per row: the Application whose
//!     spec.source.path / spec.sources[].path is the folder (any repoURL)
//!       ── synced revision contains the merge commit? (forge: is it, or an ancestor of it)
//!       ── mirante_domain::deployment::judge ──► state, message; a changed state → timeline row
//!   Argo CD down, refusing, no Application yet ──► last_error on the row, state kept,
//!                                                  next check after a capped exponential backoff
//!   a merged removal ──► `removing` while an Application still deploys the folder,
//!                        `removed` once none does (never asked about again)
//! ```
//!
//! Everything is in the database (`resource_deployment`), so a restart resumes where the last
//! process stopped; replicas may follow at the same time, since a change of state is a
//! compare-and-set. Settled deployments (`live`, `degraded`) are asked about again at the
//! longest wait, so a later change in Argo CD still shows.

use std::{collections::HashMap, sync::Arc, time::Duration};

use chrono::Utc;
use mirante_domain::deployment::{self, Observation, Verdict};
use mirante_domain::resource::ResourceState;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::adapters::argocd::Application;
use crate::adapters::argocd::{ArgoClient, one_line};
use crate::adapters::db::deployments::{DeploymentRecord, Observed};
use crate::adapters::db::{Db, DbError};
use crate::adapters::forge::Forge;
use crate::config::Config;

/// The most rows one round starts or checks.
const BATCH: i64 = 500;

/// How the follower polls; from the configuration.
#[derive(Debug, Clone)]
pub struct FollowSettings {
    /// Between two looks at deployments still on their way, and the first wait after an error.
    pub interval: Duration,
    /// The longest wait after errors in a row, and between two looks at a settled deployment.
    pub max_wait: Duration,
    /// The monorepo's base branch.
    pub base_branch: String,
}

impl FollowSettings {
    /// The settings in `config`.
    pub fn from_config(config: &Config) -> Self {
        let interval = Duration::from_secs(config.argocd_poll_secs.max(1));
        FollowSettings {
            interval,
            max_wait: Duration::from_secs(config.argocd_poll_max_secs).max(interval),
            base_branch: config.base_branch.clone(),
        }
    }

    /// The wait after `failures` errors in a row: `interval · 2^(failures-1)`, at most
    /// `max_wait`.
    pub fn backoff(&self, failures: i64) -> Duration {
        let exponent = u32::try_from(failures.saturating_sub(1).clamp(0, 30)).unwrap_or(30);
        self.interval
            .saturating_mul(2u32.saturating_pow(exponent))
            .min(self.max_wait)
    }
}

/// The follower: the database, the forge (for merge commits and ancestry), Argo CD.
pub struct Follower {
    db: Db,
    forge: Arc<dyn Forge>,
    argocd: ArgoClient,
    settings: FollowSettings,
    wake: Notify,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Why a round stopped.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    /// The portal's database failed.
    #[error("the portal's database failed: {0}")]
    Db(#[from] DbError),
}

impl Follower {
    /// A follower over these.
    pub fn new(
        db: Db,
        forge: Arc<dyn Forge>,
        argocd: ArgoClient,
        settings: FollowSettings,
    ) -> Self {
        Follower {
            db,
            forge,
            argocd,
            settings,
            wake: Notify::new(),
        }
    }

    /// Tells the follower a request was merged, so it need not wait for its next round.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Runs rounds until `stop` is cancelled: one at once, then one per interval or wake-up.
    pub fn spawn(self: &Arc<Self>, stop: CancellationToken) {
        let follower = Arc::clone(self);
        tokio::spawn(async move {
            tracing::info!(
                interval_secs = follower.settings.interval.as_secs(),
                "following deployments in Argo CD"
            );
            loop {
                if let Err(error) = follower.round().await {
                    tracing::warn!(%error, "cannot follow deployments");
                }
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = follower.wake.notified() => {}
                    () = tokio::time::sleep(follower.settings.interval) => {}
                }
            }
        });
    }

    /// One round: starts following newly merged requests, then asks Argo CD once about every
    /// due deployment. Returns how many were checked.
    pub async fn round(&self) -> Result<usize, FollowError> {
        self.start_new().await?;
        let now = Utc::now();
        let due = self
            .db
            .due_deployments(now.timestamp_millis(), BATCH)
            .await?;
        if due.is_empty() {
            return Ok(0);
        }
        let apps = match self.argocd.applications().await {
            Ok(apps) => apps,
            Err(error) => {
                tracing::warn!(%error, deployments = due.len(), "Argo CD cannot tell about deployments");
                for d in &due {
                    self.failed(d, &error.to_string()).await?;
                }
                return Ok(due.len());
            }
        };
        let mut base_head: Option<Option<String>> = None;
        for d in &due {
            self.check(d, &apps, &mut base_head).await?;
        }
        Ok(due.len())
    }

    /// Makes the rows of merged requests not followed yet. A request whose merge commit cannot
    /// be told now (the forge is down) waits for the next round.
    async fn start_new(&self) -> Result<(), FollowError> {
        for u in self.db.merged_unfollowed(BATCH).await? {
            let from_pr = match u.pr_number.and_then(|n| u64::try_from(n).ok()) {
                Some(n) => self.forge.merge_commit(n).await,
                None => Ok(None),
            };
            let commit = match from_pr {
                Ok(Some(c)) => Some(c),
                Ok(None) => self.base_head().await,
                Err(error) => {
                    tracing::warn!(request.id = u.request_id, %error, "cannot read the merge commit");
                    None
                }
            };
            match commit {
                Some(commit) => {
                    tracing::info!(request.id = u.request_id, target = %u.target, %commit, "following the deployment");
                    self.db
                        .start_deployment(u.request_id, &commit, Utc::now())
                        .await?;
                }
                None => {
                    tracing::warn!(
                        request.id = u.request_id,
                        "no merge commit yet; trying again next round"
                    );
                }
            }
        }
        Ok(())
    }

    async fn base_head(&self) -> Option<String> {
        match self.forge.branch_head(&self.settings.base_branch).await {
            Ok(head) => head,
            Err(error) => {
                tracing::warn!(%error, "cannot read the base branch");
                None
            }
        }
    }

    async fn check(
        &self,
        d: &DeploymentRecord,
        apps: &[Application],
        base_head: &mut Option<Option<String>>,
    ) -> Result<(), FollowError> {
        if d.removal {
            return self.check_removal(d, apps).await;
        }
        let Some(app) = application_for(apps, &d.target) else {
            let error = format!(
                "no Argo CD application deploys {} (spec.source.path or spec.sources[].path)",
                d.target
            );
            return self.failed(d, &error).await;
        };
        let observation = observe(app);
        let mut contains = false;
        for revision in &observation.revisions {
            match self.contains(&d.merge_commit, revision, base_head).await {
                Ok(true) => {
                    contains = true;
                    break;
                }
                Ok(false) => {}
                Err(error) => {
                    let error = format!(
                        "cannot tell whether revision {} contains the merge: {error}",
                        deployment::short(revision)
                    );
                    return self.failed(d, &error).await;
                }
            }
        }
        let verdict = deployment::judge(&observation, contains);
        let state = verdict.state();
        let next = match verdict {
            Verdict::Syncing(_) => self.settings.interval,
            Verdict::Live | Verdict::Degraded(_) => self.settings.max_wait,
        };
        let now = Utc::now();
        let seen = Observed {
            state,
            application: Some(&observation.application),
            revision: observation.revisions.first().map(String::as_str),
            message: verdict.message(),
        };
        let changed = self
            .db
            .record_deployment(d, &seen, now, now.timestamp_millis() + millis(next))
            .await?;
        if changed {
            tracing::info!(request.id = d.request_id, from = %d.state, to = %state, application = %observation.application, "deployment moved on");
        }
        Ok(())
    }

    /// A merged removal: `removing` while an Application still deploys the folder (Argo CD
    /// has not pruned it yet), `removed` once none does — asked about no more after that.
    async fn check_removal(
        &self,
        d: &DeploymentRecord,
        apps: &[Application],
    ) -> Result<(), FollowError> {
        let app = application_for(apps, &d.target);
        let name = app.and_then(|a| a.metadata.name.as_deref());
        let message = name.map(|n| {
            format!(
                "Argo CD still has application {n}; the resource is removed once Argo CD deletes it"
            )
        });
        let (state, next) = match app {
            Some(_) => (ResourceState::Removing, self.settings.interval),
            None => (ResourceState::Removed, Duration::MAX),
        };
        let revision = app
            .and_then(|a| a.status.sync.as_ref())
            .and_then(|s| s.all_revisions().into_iter().next());
        let now = Utc::now();
        let seen = Observed {
            state,
            application: name.or(d.application.as_deref()),
            revision: revision.as_deref(),
            message: message.as_deref(),
        };
        let next_ms = now.timestamp_millis().saturating_add(millis(next));
        if self.db.record_deployment(d, &seen, now, next_ms).await? {
            tracing::info!(request.id = d.request_id, from = %d.state, to = %state, target = %d.target, "removal moved on");
        }
        Ok(())
    }

    /// Whether `revision` contains `merge`: it is the merge, or the forge says the merge is
    /// its ancestor; where the forge cannot tell, whether it is the base branch's head (which
    /// contains every merge made before it was read).
    async fn contains(
        &self,
        merge: &str,
        revision: &str,
        base_head: &mut Option<Option<String>>,
    ) -> Result<bool, crate::adapters::forge::ForgeError> {
        if revision == merge {
            return Ok(true);
        }
        if let Some(known) = self.forge.contains(merge, revision).await? {
            return Ok(known);
        }
        if base_head.is_none() {
            *base_head = Some(self.base_head().await);
        }
        Ok(base_head.as_ref().and_then(Option::as_deref) == Some(revision))
    }

    async fn failed(&self, d: &DeploymentRecord, error: &str) -> Result<(), FollowError> {
        let failures = d.failures.saturating_add(1);
        let now = Utc::now();
        let next = now.timestamp_millis() + millis(self.settings.backoff(failures));
        self.db
            .deployment_error(d.request_id, &one_line(error), failures, now, next)
            .await?;
        Ok(())
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2)
}

/// The Application deploying `target`: one of whose source paths is the folder, whatever its
/// repository URL; the first by name when several do.
fn application_for<'a>(apps: &'a [Application], target: &str) -> Option<&'a Application> {
    let mut found: Vec<&Application> = apps
        .iter()
        .filter(|a| {
            a.spec
                .all_sources()
                .filter_map(|s| s.path.as_deref())
                .any(|p| deployment::same_folder(target, p))
        })
        .collect();
    found.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    found.into_iter().next()
}

/// Argo CD's answer about one Application, as the domain's rules read it.
fn observe(app: &Application) -> Observation {
    let status = &app.status;
    Observation {
        application: app.metadata.name.clone().unwrap_or_default(),
        sync: status.sync.as_ref().and_then(|s| s.status.clone()),
        revisions: status
            .sync
            .as_ref()
            .map(|s| s.all_revisions())
            .unwrap_or_default(),
        health: status.health.as_ref().and_then(|h| h.status.clone()),
        health_message: status.health.as_ref().and_then(|h| h.message.clone()),
        conditions: status
            .conditions
            .iter()
            .flatten()
            .map(|c| (c.kind.clone(), c.message.clone()))
            .collect(),
        operation_phase: status
            .operation_state
            .as_ref()
            .and_then(|o| o.phase.clone()),
        operation_message: status
            .operation_state
            .as_ref()
            .and_then(|o| o.message.clone()),
    }
}

/// A resource's deployment as the API shows it, from its latest merged request's row (`None`:
/// not picked up yet) and whether deployments are followed at all.
pub(crate) fn deployment_view(
    followed: bool,
    row: Option<&DeploymentRecord>,
) -> mirante_domain::resource::Deployment {
    let mut view = mirante_domain::resource::Deployment {
        followed,
        ..Default::default()
    };
    if !followed {
        return view;
    }
    if let Some(row) = row {
        view.application = row.application.clone();
        view.merge_commit = Some(row.merge_commit.clone());
        view.revision = row.revision.clone();
        view.message = row.message.clone();
        view.error = row.last_error.clone();
        view.checked_at = row
            .checked_at
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    }
    view
}

/// The state a merged resource shows: the deployment's when Argo CD has told one.
pub(crate) fn shown_state(row: Option<&DeploymentRecord>) -> ResourceState {
    match row.map(|r| r.state) {
        Some(s @ (ResourceState::Syncing | ResourceState::Live | ResourceState::Degraded)) => s,
        _ => ResourceState::Merged,
    }
}

/// The state a resource whose removal is merged shows: `removed` once the follower found no
/// Application deploying its folder, `removing` until then (not checked yet included).
pub(crate) fn removal_state(row: Option<&DeploymentRecord>) -> ResourceState {
    match row.map(|r| r.state) {
        Some(ResourceState::Removed) => ResourceState::Removed,
        _ => ResourceState::Removing,
    }
}

/// Rows by request id.
pub(crate) fn by_request(rows: Vec<DeploymentRecord>) -> HashMap<i64, DeploymentRecord> {
    rows.into_iter().map(|r| (r.request_id, r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(name: &str, json: serde_json::Value) -> Application {
        let mut v: Application = serde_json::from_value(json).unwrap();
        v.metadata.name = Some(name.into());
        v
    }

    #[test]
    fn the_application_of_a_folder_is_found_by_any_of_its_source_paths() {
        let apps = [
            app(
                "other",
                serde_json::json!({"spec": {"source": {"path": "clusters/x/ws/b"}}}),
            ),
            app(
                "zeta",
                serde_json::json!({"spec": {"source": {"path": "./clusters/x/ws/a/"}}}),
            ),
            app(
                "multi",
                serde_json::json!({"spec": {"sources": [{"chart": "c"}, {"path": "clusters/x/ws/a", "repoURL": "git@elsewhere:devops.git"}]}}),
            ),
        ];
        let found = application_for(&apps, "clusters/x/ws/a").unwrap();
        assert_eq!(
            found.metadata.name.as_deref(),
            Some("multi"),
            "first by name"
        );
        assert!(application_for(&apps, "clusters/x/ws/c").is_none());
    }

    #[test]
    fn the_backoff_doubles_up_to_the_longest_wait() {
        let s = FollowSettings {
            interval: Duration::from_secs(5),
            max_wait: Duration::from_secs(60),
            base_branch: "main".into(),
        };
        let waits: Vec<u64> = (1..=6).map(|n| s.backoff(n).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 60, 60]);
    }

    #[test]
    fn an_unfollowed_deployment_says_so_and_a_followed_one_shows_its_row() {
        let off = deployment_view(false, None);
        assert!(!off.followed);
        assert!(off.note().unwrap().contains("MIRANTE_ARGOCD_URL"));
        let waiting = deployment_view(true, None);
        assert!(waiting.note().unwrap().contains("first answer"));
        let row = DeploymentRecord {
            request_id: 1,
            target: "a".into(),
            removal: false,
            state: ResourceState::Live,
            merge_commit: "m".into(),
            application: Some("ws-a".into()),
            revision: Some("r".into()),
            message: None,
            last_error: Some("cannot reach Argo CD: cannot connect: refused".into()),
            failures: 2,
            checked_at: Some(Utc::now()),
            next_check_ms: 0,
        };
        let view = deployment_view(true, Some(&row));
        assert_eq!(view.application.as_deref(), Some("ws-a"));
        assert!(
            view.note()
                .unwrap()
                .starts_with("cannot follow the deployment: ")
        );
        assert_eq!(shown_state(Some(&row)), ResourceState::Live);
        assert_eq!(shown_state(None), ResourceState::Merged);
    }

    #[test]
    fn a_merged_removal_is_removing_until_the_follower_finds_no_application() {
        let row = |state| DeploymentRecord {
            request_id: 2,
            target: "a".into(),
            removal: true,
            state,
            merge_commit: "m".into(),
            application: Some("ws-a".into()),
            revision: None,
            message: None,
            last_error: None,
            failures: 0,
            checked_at: None,
            next_check_ms: 0,
        };
        assert_eq!(
            removal_state(None),
            ResourceState::Removing,
            "not asked yet"
        );
        assert_eq!(
            removal_state(Some(&row(ResourceState::Merged))),
            ResourceState::Removing
        );
        assert_eq!(
            removal_state(Some(&row(ResourceState::Removing))),
            ResourceState::Removing
        );
        assert_eq!(
            removal_state(Some(&row(ResourceState::Removed))),
            ResourceState::Removed
        );
    }
}
