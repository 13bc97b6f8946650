//! The proposing worker: takes requests from the outbox (`request_job`) and turns each into a
//! branch with one commit and a pull request, then follows open pull requests by polling.
//!
//! Every step can be repeated: the branch is reused when it holds the same files, the pull
//! request is looked up before one is opened, and the request's state changes by
//! compare-and-set. A worker that crashes anywhere leaves its job leased; when the lease runs
//! out another worker (or the restarted process) takes it up and carries on from the first
//! step that has not happened. Retryable forge errors (the forge is down) hand the job back
//! with an exponential backoff, capped; permanent ones (refused credentials, a conflicting
//! branch, a target directory that already exists) fail the request. The last error is kept
//! on the request for its page.

use std::{sync::Arc, time::Duration};

use askama::Template;
use chrono::Utc;
use mirante_domain::request::{RequestEvent, RequestState};
use rand::RngCore;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::adapters::db::requests::Change;
use crate::adapters::db::requests::Job;
use crate::adapters::db::requests::RequestKind;
use crate::adapters::db::requests::RequestRecord;
use crate::adapters::db::requests::TransitionError;
use crate::adapters::forge::BranchSpec;
use crate::adapters::forge::CommitAuthor;
use crate::adapters::forge::Forge;
use crate::adapters::forge::ForgeError;
use crate::adapters::forge::PullRequest;
use crate::adapters::forge::PullRequestSpec;
use crate::adapters::forge::PullRequestState;
use crate::app::catalog_change::ItemFields;
use crate::app::catalog_change::content_sha256;
use crate::app::catalog_change::evidence_line;
use crate::app::catalog_change::one_line;
use crate::{adapters::db::Db, config::Config};

/// The actor named in the timeline for what the worker and the forge do.
pub const SYSTEM: &str = "system";

/// How the worker behaves; from the configuration.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// The branch requests start from and are merged into.
    pub base_branch: String,
    /// The portal's address, for links back to requests.
    pub public_url: String,
    /// How long a claimed job is this worker's.
    pub lease: Duration,
    /// The first wait after a retryable error.
    pub retry: Duration,
    /// The longest wait.
    pub retry_max: Duration,
    /// How often open pull requests are checked; `None`: never.
    pub poll: Option<Duration>,
}

impl WorkerSettings {
    /// The settings in `config`.
    pub fn from_config(config: &Config) -> Self {
        WorkerSettings {
            base_branch: config.base_branch.clone(),
            public_url: config.public_url(),
            lease: Duration::from_secs(config.worker_lease_secs.max(1)),
            retry: Duration::from_secs(config.worker_retry_secs.max(1)),
            retry_max: Duration::from_secs(
                config
                    .worker_retry_max_secs
                    .max(config.worker_retry_secs.max(1)),
            ),
            poll: Some(Duration::from_secs(config.forge_poll_secs)).filter(|d| !d.is_zero()),
        }
    }

    /// The wait before attempt `attempts + 1`: `retry · 2^(attempts-1)`, at most `retry_max`.
    pub fn backoff(&self, attempts: i64) -> Duration {
        let exponent = u32::try_from(attempts.saturating_sub(1).clamp(0, 30)).unwrap_or(30);
        self.retry
            .saturating_mul(2u32.saturating_pow(exponent))
            .min(self.retry_max)
    }
}

/// Fires a crash point for the crash-and-resume test: with the `failpoints` feature (never
/// in a shipped build) and `MIRANTE_FAILPOINT=<name>`, the process exits on the spot, as a
/// killed worker would.
fn failpoint(name: &str) {
    #[cfg(feature = "failpoints")]
    if std::env::var("MIRANTE_FAILPOINT").is_ok_and(|v| v == name) {
        eprintln!("failpoint `{name}` reached: exiting");
        std::process::exit(86);
    }
    #[cfg(not(feature = "failpoints"))]
    let _ = name;
}

/// Why one attempt at proposing stopped.
#[derive(Debug, thiserror::Error)]
enum StepError {
    #[error(transparent)]
    Forge(#[from] ForgeError),
    #[error("the portal's database failed: {0}")]
    Db(#[from] crate::adapters::db::DbError),
    #[error("the request cannot move on: {0}")]
    Transition(#[from] TransitionError),
    #[error("{0}")]
    Permanent(String),
}

impl StepError {
    fn is_retryable(&self) -> bool {
        match self {
            StepError::Forge(e) => e.is_retryable(),
            StepError::Db(_) => true,
            StepError::Transition(TransitionError::Db(_)) => true,
            StepError::Transition(_) | StepError::Permanent(_) => false,
        }
    }
}

/// The worker: the database, the forge, and its settings.
pub struct Worker {
    db: Db,
    forge: Arc<dyn Forge>,
    settings: WorkerSettings,
    owner: String,
    wake: Notify,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("owner", &self.owner)
            .field("forge", &self.forge.kind())
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker with a fresh owner id (process id and random bits, so replicas and restarts
    /// never share one).
    pub fn new(db: Db, forge: Arc<dyn Forge>, settings: WorkerSettings) -> Self {
        let mut bits = [0u8; 6];
        rand::rngs::OsRng.fill_bytes(&mut bits);
        Worker {
            db,
            forge,
            settings,
            owner: format!("worker-{}-{}", std::process::id(), hex::encode(bits)),
            wake: Notify::new(),
        }
    }

    /// The forge it proposes on.
    pub fn forge(&self) -> &Arc<dyn Forge> {
        &self.forge
    }

    /// Its settings.
    pub fn settings(&self) -> &WorkerSettings {
        &self.settings
    }

    /// Tells the worker there is new work (a submission or an approval), so it need not wait
    /// for its next look at the outbox.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Runs the outbox loop and, when configured, the poller until `stop` is cancelled.
    pub fn spawn(self: &Arc<Self>, stop: CancellationToken) {
        let worker = Arc::clone(self);
        let outbox_stop = stop.clone();
        tokio::spawn(async move { worker.run(outbox_stop).await });
        if let Some(every) = self.settings.poll {
            let worker = Arc::clone(self);
            tokio::spawn(async move {
                let mut ticks = tokio::time::interval(every);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        () = stop.cancelled() => break,
                        _ = ticks.tick() => {
                            if let Err(error) = worker.poll_open().await {
                                tracing::warn!(%error, "cannot check the open pull requests");
                            }
                        }
                    }
                }
            });
        }
    }

    async fn run(&self, stop: CancellationToken) {
        tracing::info!(worker.owner = %self.owner, forge = %self.forge.kind(), "proposing worker started");
        loop {
            if let Err(error) = self.run_due().await {
                tracing::warn!(%error, "cannot read the outbox");
            }
            // Sleep until the next job is due (a backoff or a lease running out), a wake-up,
            // or at most half a minute: another replica may have queued work.
            let now = Utc::now().timestamp_millis();
            let wait = match self.db.next_job_due().await {
                Ok(Some(due)) => Duration::from_millis(u64::try_from(due - now).unwrap_or(0)),
                _ => Duration::from_secs(30),
            }
            .clamp(Duration::from_millis(50), Duration::from_secs(30));
            tokio::select! {
                () = stop.cancelled() => break,
                () = self.wake.notified() => {}
                () = tokio::time::sleep(wait) => {}
            }
        }
        tracing::info!("proposing worker stopped");
    }

    /// Works every job that is due now; returns how many it took up.
    pub async fn run_due(&self) -> Result<usize, crate::adapters::db::DbError> {
        let mut done = 0;
        let lease = i64::try_from(self.settings.lease.as_millis()).unwrap_or(i64::MAX / 2);
        while let Some(job) = self
            .db
            .claim_job(&self.owner, Utc::now().timestamp_millis(), lease)
            .await?
        {
            self.work(job).await;
            done += 1;
        }
        Ok(done)
    }

    async fn work(&self, job: Job) {
        let request_id = job.request_id;
        tracing::info!(
            request.id = request_id,
            job.attempts = job.attempts,
            "proposing"
        );
        let result = self.propose(request_id).await;
        crate::metrics::worker_job(match &result {
            Ok(()) => "proposed",
            Err(error) if error.is_retryable() => "retry",
            Err(StepError::Transition(TransitionError::Illegal(_))) => "moved_on",
            Err(_) => "failed",
        });
        let now = Utc::now();
        let outcome = match result {
            Ok(()) => self
                .db
                .finish_job(job.request_job_id, &self.owner, now)
                .await
                .map(drop),
            Err(error) if error.is_retryable() => {
                let wait = self.settings.backoff(job.attempts);
                let message = error.to_string();
                tracing::warn!(
                    request.id = request_id,
                    job.attempts = job.attempts,
                    retry.in_secs = wait.as_secs_f64(),
                    error = %message,
                    "proposing failed; will try again"
                );
                let again = now.timestamp_millis()
                    + i64::try_from(wait.as_millis()).unwrap_or(i64::MAX / 2);
                let noted = self
                    .db
                    .note_request_error(
                        request_id,
                        Some(&format!(
                            "{message} (attempt {}; trying again in {}s)",
                            job.attempts,
                            wait.as_secs()
                        )),
                        now,
                    )
                    .await;
                match noted {
                    Ok(()) => self
                        .db
                        .retry_job(job.request_job_id, &self.owner, again, &message)
                        .await
                        .map(drop),
                    Err(e) => Err(e),
                }
            }
            // Someone else moved the request meanwhile (a webhook, an admin): its state
            // stands, and there is nothing left for this job to do.
            Err(StepError::Transition(TransitionError::Illegal(illegal))) => {
                tracing::info!(request.id = request_id, request.state = %illegal.from, "the request moved on; job finished");
                self.db
                    .finish_job(job.request_job_id, &self.owner, now)
                    .await
                    .map(drop)
            }
            Err(error) => {
                let message = error.to_string();
                tracing::warn!(request.id = request_id, error = %message, "proposing failed for good");
                let failed = self
                    .db
                    .transition_request(
                        request_id,
                        RequestEvent::Fail,
                        &Change {
                            actor: SYSTEM,
                            error: Some(&message),
                            ..Change::default()
                        },
                        now,
                    )
                    .await;
                if let Err(e) = failed {
                    // Not proposing (e.g. never started): keep the error on the request.
                    tracing::warn!(request.id = request_id, error = %e, "cannot mark the request failed");
                    let _ = self
                        .db
                        .note_request_error(request_id, Some(&message), now)
                        .await;
                }
                self.db
                    .finish_job(job.request_job_id, &self.owner, now)
                    .await
                    .map(drop)
            }
        };
        if let Err(error) = outcome {
            // The lease runs out and the job is taken up again.
            tracing::error!(request.id = request_id, %error, "cannot record the outcome of a job");
        }
    }

    /// One attempt at proposing a request, from wherever it stands.
    async fn propose(&self, id: i64) -> Result<(), StepError> {
        let Some(mut request) = self.db.request(id).await? else {
            return Err(StepError::Permanent(format!("request {id} does not exist")));
        };
        match request.state {
            RequestState::Submitted | RequestState::Approved => {
                request = self
                    .db
                    .transition_request(
                        id,
                        RequestEvent::StartProposing,
                        &Change {
                            actor: SYSTEM,
                            ..Change::default()
                        },
                        Utc::now(),
                    )
                    .await?;
            }
            RequestState::Proposing => {}
            // Done already, or not ours to propose: nothing to do.
            _ => return Ok(()),
        }
        let base = &self.settings.base_branch;

        // Step 1: the branch with one commit.
        if self.forge.branch_head(&request.branch).await?.is_none() {
            self.check_base(&request).await?;
        }
        self.forge
            .create_branch(&BranchSpec {
                branch: request.branch.clone(),
                base: base.clone(),
                message: commit_message(&request),
                author: CommitAuthor {
                    name: request.author.name.clone(),
                    email: request
                        .author
                        .email
                        .clone()
                        .unwrap_or_else(|| format!("{}@users.mirante", request.author.username)),
                },
                files: request.files.clone(),
            })
            .await?;
        failpoint("after-branch");

        // Step 2: the pull request, found or opened.
        let pr = match self.forge.find_pull_request(&request.branch).await? {
            Some(pr) => pr,
            None => {
                let (title, body) = match request.kind {
                    RequestKind::Template => {
                        let text = PullRequestText::of(&request, &self.settings);
                        (text.title(), text.body())
                    }
                    RequestKind::CatalogChange => {
                        let text = CatalogChangeText::of(&request, &self.settings);
                        (text.title(), text.body())
                    }
                };
                self.forge
                    .open_pull_request(&PullRequestSpec {
                        branch: request.branch.clone(),
                        base: base.clone(),
                        title,
                        body,
                    })
                    .await?
            }
        };
        failpoint("after-pull-request");

        // Step 3: the request follows the pull request.
        self.record_proposed(&request, &pr).await?;
        Ok(())
    }

    /// Before the branch is made: a template's target directory must still be absent from
    /// the base branch; a catalog change's file must still be the one it was computed from
    /// (otherwise the change would undo what was merged since).
    async fn check_base(&self, request: &RequestRecord) -> Result<(), StepError> {
        let base = &self.settings.base_branch;
        match request.kind {
            RequestKind::Template => {
                if self.forge.path_exists(base, &request.target).await? {
                    return Err(StepError::Permanent(format!(
                        "the target directory `{}` already exists on `{base}`",
                        request.target
                    )));
                }
            }
            RequestKind::CatalogChange => {
                let expected = request
                    .values
                    .get("base_sha256")
                    .and_then(serde_json::Value::as_str);
                let now = self.forge.read_file(base, &request.target).await?;
                if now.as_deref().map(content_sha256).as_deref() != expected {
                    return Err(StepError::Permanent(format!(
                        "`{}` changed on `{base}` since this change was made; propose it again \
                         from the item's page",
                        request.target
                    )));
                }
            }
        }
        Ok(())
    }

    async fn record_proposed(
        &self,
        request: &RequestRecord,
        pr: &PullRequest,
    ) -> Result<(), StepError> {
        let number = i64::try_from(pr.number)
            .map_err(|_| StepError::Permanent("pull request number out of range".into()))?;
        let now = Utc::now();
        self.db
            .set_request_pull_request(request.id, number, &pr.url, now)
            .await?;
        let proposed = self
            .db
            .transition_request(
                request.id,
                RequestEvent::Propose,
                &Change {
                    actor: SYSTEM,
                    pull_request: Some((number, &pr.url)),
                    ..Change::default()
                },
                now,
            )
            .await;
        match proposed {
            Ok(_) => {}
            // A webhook got there first (the pull request was merged or closed while this
            // attempt ran): the request already stands where it should.
            Err(TransitionError::Illegal(i)) if i.from.is_final() => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        follow(&self.db, request.id, pr.state, SYSTEM).await?;
        Ok(())
    }

    /// Checks every open pull request on the forge and moves its request on when it was
    /// merged or closed (the fallback for webhooks that never arrived). Returns how many
    /// requests changed.
    pub async fn poll_open(&self) -> Result<usize, crate::adapters::db::DbError> {
        let mut changed = 0;
        for request in self
            .db
            .requests_in_state(RequestState::Proposed, 500)
            .await?
        {
            let Some(number) = request.pr_number.and_then(|n| u64::try_from(n).ok()) else {
                continue;
            };
            match self.forge.pull_request(number).await {
                Ok(pr) => match follow(&self.db, request.id, pr.state, SYSTEM).await {
                    Ok(Some(_)) => changed += 1,
                    Ok(None) => {}
                    Err(error) => {
                        tracing::warn!(request.id = request.id, %error, "cannot follow the pull request");
                    }
                },
                Err(error) => {
                    tracing::warn!(request.id = request.id, pr.number = number, %error, "cannot read the pull request");
                }
            }
        }
        Ok(changed)
    }
}

/// Moves a proposed request to `merged` or `closed` when its pull request is; returns the
/// request when it changed. Shared by the poller, the webhook and the local merge.
pub async fn follow(
    db: &Db,
    request_id: i64,
    state: PullRequestState,
    actor: &str,
) -> Result<Option<RequestRecord>, TransitionError> {
    let event = match state {
        PullRequestState::Open => return Ok(None),
        PullRequestState::Merged => RequestEvent::Merge,
        PullRequestState::Closed => RequestEvent::Close,
    };
    match db
        .transition_request(
            request_id,
            event,
            &Change {
                actor,
                ..Change::default()
            },
            Utc::now(),
        )
        .await
    {
        Ok(r) => Ok(Some(r)),
        // Already merged or closed (a webhook and the poller both saw it).
        Err(TransitionError::Illegal(i)) if i.from.is_final() => Ok(None),
        Err(e) => Err(e),
    }
}

fn commit_message(request: &RequestRecord) -> String {
    if request.kind == RequestKind::CatalogChange {
        let item = request
            .values
            .get("item")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        return format!(
            "catalog: {} {} (request #{})\n\nProposed by {} through Mirante.",
            one_line(item),
            CatalogChangeText::summary(&request.values),
            request.id,
            one_line(&request.author.username)
        );
    }
    format!(
        "{}: {} (request #{})\n\nRequested by {} through Mirante.",
        request.template,
        request.target,
        request.id,
        one_line(&request.author.username)
    )
}

/// A catalog change's pull request title and body (`templates/forge/catalog_change_*`).
#[derive(Debug, Clone)]
pub struct CatalogChangeText {
    id: i64,
    item: String,
    name: String,
    file: String,
    summary: String,
    author_username: String,
    author_name: String,
    base: String,
    link: String,
    changes: String,
    reason: String,
    fence: String,
}

#[derive(Template)]
#[template(path = "forge/catalog_change_title.txt", escape = "none")]
struct CatalogTitleTemplate<'a> {
    id: i64,
    item: &'a str,
    summary: &'a str,
}

#[derive(Template)]
#[template(path = "forge/catalog_change_body.md", escape = "none")]
struct CatalogBodyTemplate<'a> {
    id: i64,
    item: &'a str,
    name: &'a str,
    file: &'a str,
    author_username: &'a str,
    author_name: &'a str,
    base: &'a str,
    link: &'a str,
    changes: &'a str,
    reason: &'a str,
    fence: &'a str,
}

impl CatalogChangeText {
    fn fields(values: &serde_json::Value) -> Option<(ItemFields, ItemFields)> {
        let from = serde_json::from_value(values.get("from")?.clone()).ok()?;
        let to = serde_json::from_value(values.get("to")?.clone()).ok()?;
        Some((from, to))
    }

    /// `validated → declared`, or what else changes when the state does not.
    pub fn summary(values: &serde_json::Value) -> String {
        match Self::fields(values) {
            Some((from, to)) if from.state != to.state => {
                format!("{} → {}", from.state.as_str(), to.state.as_str())
            }
            Some((from, to)) if from.qualifier != to.qualifier => format!(
                "qualifier {} → {}",
                from.qualifier.map_or("none", |q| q.as_str()),
                to.qualifier.map_or("none", |q| q.as_str())
            ),
            _ => "evidence".to_owned(),
        }
    }

    /// The text for a catalog-change request.
    pub fn of(request: &RequestRecord, settings: &WorkerSettings) -> Self {
        let text = |key: &str| {
            request
                .values
                .get(key)
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let mut changes = String::new();
        if let Some((from, to)) = Self::fields(&request.values) {
            changes.push_str(&format!(
                "state:     {} → {}\n",
                from.state.as_str(),
                to.state.as_str()
            ));
            changes.push_str(&format!(
                "qualifier: {} → {}\n",
                from.qualifier.map_or("(none)", |q| q.as_str()),
                to.qualifier.map_or("(none)", |q| q.as_str())
            ));
            changes.push_str("evidence:\n");
            for e in &to.evidence {
                let mark = if from.evidence.contains(e) { ' ' } else { '+' };
                changes.push_str(&format!("  {mark} {}\n", evidence_line(e)));
            }
            for e in from.evidence.iter().filter(|e| !to.evidence.contains(e)) {
                changes.push_str(&format!("  - {}\n", evidence_line(e)));
            }
        }
        let changes = changes.trim_end().to_owned();
        // The reason keeps its lines; control characters other than line breaks are gone.
        let reason: String = text("reason")
            .chars()
            .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
            .collect();
        // A fence longer than any run of backticks in what it holds, so nothing closes it.
        let longest = changes
            .split(|c| c != '`')
            .chain(reason.split(|c| c != '`'))
            .map(str::len)
            .max()
            .unwrap_or(0);
        CatalogChangeText {
            id: request.id,
            item: one_line(&text("item")),
            name: one_line(&text("name")),
            file: one_line(&request.target),
            summary: Self::summary(&request.values),
            author_username: one_line(&request.author.username),
            author_name: one_line(&request.author.name),
            base: settings.base_branch.clone(),
            link: format!("{}/requests/{}", settings.public_url, request.id),
            changes,
            reason,
            fence: "`".repeat(longest.max(2) + 1),
        }
    }

    /// One line.
    pub fn title(&self) -> String {
        CatalogTitleTemplate {
            id: self.id,
            item: &self.item,
            summary: &self.summary,
        }
        .render()
        .map(|t| t.trim().to_owned())
        .unwrap_or_else(|_| format!("Mirante catalog change #{}", self.id))
    }

    /// Markdown.
    pub fn body(&self) -> String {
        CatalogBodyTemplate {
            id: self.id,
            item: &self.item,
            name: &self.name,
            file: &self.file,
            author_username: &self.author_username,
            author_name: &self.author_name,
            base: &self.base,
            link: &self.link,
            changes: &self.changes,
            reason: &self.reason,
            fence: &self.fence,
        }
        .render()
        .unwrap_or_else(|e| {
            format!(
                "Mirante catalog change #{}: {}\n\n(body not rendered: {e})",
                self.id, self.link
            )
        })
    }
}

/// The pull request's title and body (askama templates in `templates/forge/`).
#[derive(Debug, Clone)]
pub struct PullRequestText {
    id: i64,
    template: String,
    template_title: String,
    author_username: String,
    author_name: String,
    target: String,
    base: String,
    link: String,
    decided_by: Option<String>,
    decision_comment: Option<String>,
    overcommit_reason: Option<String>,
    values: String,
    fence: String,
    files: Vec<String>,
    checks: Vec<String>,
}

#[derive(Template)]
#[template(path = "forge/pull_request_title.txt", escape = "none")]
struct TitleTemplate<'a> {
    id: i64,
    template_title: &'a str,
    author_username: &'a str,
    target: &'a str,
}

#[derive(Template)]
#[template(path = "forge/pull_request_body.md", escape = "none")]
struct BodyTemplate<'a> {
    id: i64,
    template: &'a str,
    template_title: &'a str,
    author_username: &'a str,
    author_name: &'a str,
    target: &'a str,
    base: &'a str,
    link: &'a str,
    decided_by: &'a Option<String>,
    decision_comment: &'a Option<String>,
    overcommit_reason: &'a Option<String>,
    values: &'a str,
    fence: &'a str,
    files: &'a [String],
    checks: &'a [String],
}

impl PullRequestText {
    /// The text for a request.
    pub fn of(request: &RequestRecord, settings: &WorkerSettings) -> Self {
        let values =
            serde_json::to_string_pretty(&request.values).unwrap_or_else(|_| "{}".to_owned());
        // A fence longer than any run of backticks in the values, so none can close it.
        let longest = values.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let mut checks = vec![
            "values validated on the server against the template's parameters".to_owned(),
            "every file rendered from the template parses as YAML, with apiVersion, kind and a valid metadata.name in each document".to_owned(),
            format!(
                "the target directory `{}` did not exist on `{}`",
                one_line(&request.target),
                settings.base_branch
            ),
        ];
        if let Some(by) = &request.decided_by {
            checks.push(format!("approved in the portal by `{}`", one_line(by)));
        }
        PullRequestText {
            id: request.id,
            template: one_line(&request.template),
            template_title: one_line(&request.template_title),
            author_username: one_line(&request.author.username),
            author_name: one_line(&request.author.name),
            target: one_line(&request.target),
            base: settings.base_branch.clone(),
            link: format!("{}/requests/{}", settings.public_url, request.id),
            decided_by: request.decided_by.as_deref().map(one_line),
            decision_comment: request.decision_comment.as_deref().map(one_line),
            overcommit_reason: request.overcommit_reason.as_deref().map(one_line),
            values,
            fence: "`".repeat(longest.max(2) + 1),
            files: request.files.iter().map(|f| one_line(&f.path)).collect(),
            checks,
        }
    }

    /// One line.
    pub fn title(&self) -> String {
        let title = TitleTemplate {
            id: self.id,
            template_title: &self.template_title,
            author_username: &self.author_username,
            target: &self.target,
        }
        .render()
        .unwrap_or_else(|_| format!("Mirante request #{}", self.id));
        title.trim().to_owned()
    }

    /// Markdown.
    pub fn body(&self) -> String {
        BodyTemplate {
            id: self.id,
            template: &self.template,
            template_title: &self.template_title,
            author_username: &self.author_username,
            author_name: &self.author_name,
            target: &self.target,
            base: &self.base,
            link: &self.link,
            decided_by: &self.decided_by,
            decision_comment: &self.decision_comment,
            overcommit_reason: &self.overcommit_reason,
            values: &self.values,
            fence: &self.fence,
            files: &self.files,
            checks: &self.checks,
        }
        .render()
        .unwrap_or_else(|e| {
            format!(
                "Mirante request #{}: {}\n\n(body not rendered: {e})",
                self.id, self.link
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use secrecy::SecretString;

    use super::*;
    use crate::adapters::db::requests::Author;
    use crate::adapters::db::requests::NewRequest;
    use crate::adapters::forge::FileChange;
    use crate::adapters::forge::local::LocalForge;

    fn settings() -> WorkerSettings {
        WorkerSettings {
            base_branch: "main".into(),
            public_url: "http://portal.test".into(),
            lease: Duration::from_secs(60),
            retry: Duration::from_secs(5),
            retry_max: Duration::from_secs(60),
            poll: None,
        }
    }

    async fn setup(existing: &[FileChange]) -> (tempfile::TempDir, Db, Worker) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("monorepo");
        crate::adapters::git::init_monorepo(&path, "main", existing).unwrap();
        let db = Db::connect(&SecretString::from("sqlite::memory:"), 1)
            .await
            .unwrap();
        db.migrate().await.unwrap();
        let forge = Arc::new(LocalForge::new(path, db.clone(), "http://portal.test"));
        let worker = Worker::new(db.clone(), forge, settings());
        (dir, db, worker)
    }

    async fn request(db: &Db, target: &str, needs_approval: bool) -> RequestRecord {
        let user_id = db
            .upsert_user(&crate::adapters::db::NewUser {
                issuer: "dev",
                subject: "rui",
                username: "rui",
                name: "Rui Researcher",
                email: None,
                groups: &[],
                at: Utc::now(),
            })
            .await
            .unwrap();
        let files = vec![FileChange {
            path: format!("{target}/namespace.yaml"),
            content: "kind: Namespace\n".into(),
        }];
        db.insert_request(&NewRequest {
            template: "gpu-workspace",
            template_title: "GPU workspace",
            values: &serde_json::json!({"name": "nlp", "note": "```injected```"}),
            files: &files,
            target,
            slug: "gpu-workspace-rui-nlp",
            author: &Author {
                user_id,
                username: "rui".into(),
                name: "Rui Researcher".into(),
                email: None,
            },
            needs_approval,
            at: Utc::now(),
        })
        .await
        .unwrap()
    }

    #[test]
    fn the_backoff_doubles_up_to_its_cap() {
        let s = settings();
        let waits: Vec<u64> = (1..=6).map(|n| s.backoff(n).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 60, 60]);
        assert_eq!(s.backoff(i64::MAX).as_secs(), 60);
    }

    #[tokio::test]
    async fn a_queued_request_becomes_a_branch_and_an_open_pull_request() {
        let (_dir, db, worker) = setup(&[FileChange {
            path: "README.md".into(),
            content: "x\n".into(),
        }])
        .await;
        let r = request(&db, "ws/nlp", false).await;

        let worked = worker.run_due().await.unwrap();

        assert_eq!(worked, 1);
        let r = db.request(r.id).await.unwrap().unwrap();
        assert_eq!(r.state, RequestState::Proposed);
        assert_eq!(r.last_error, None);
        let pr = worker
            .forge()
            .find_pull_request(&r.branch)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(r.pr_number, Some(i64::try_from(pr.number).unwrap()));
        assert_eq!(worker.run_due().await.unwrap(), 0, "the job is done");
        // Nothing changes while the pull request is open; the poller sees a merge.
        assert_eq!(worker.poll_open().await.unwrap(), 0);
        worker
            .forge()
            .merge(pr.number, crate::adapters::forge::MergeStyle::FastForward)
            .await
            .unwrap();
        assert_eq!(worker.poll_open().await.unwrap(), 1);
        let r = db.request(r.id).await.unwrap().unwrap();
        assert_eq!(r.state, RequestState::Merged);
    }

    #[tokio::test]
    async fn a_target_directory_already_on_the_base_fails_the_request_with_its_reason() {
        let (_dir, db, worker) = setup(&[FileChange {
            path: "ws/nlp/old.yaml".into(),
            content: "x: 1\n".into(),
        }])
        .await;
        let r = request(&db, "ws/nlp", false).await;

        worker.run_due().await.unwrap();

        let r = db.request(r.id).await.unwrap().unwrap();
        assert_eq!(r.state, RequestState::Failed);
        let error = r.last_error.unwrap();
        assert!(
            error.contains("`ws/nlp` already exists on `main`"),
            "{error}"
        );
        assert_eq!(worker.forge().branch_head(&r.branch).await.unwrap(), None);
        assert!(
            db.job_of_request(r.id)
                .await
                .unwrap()
                .unwrap()
                .done_at
                .is_some()
        );
    }

    #[tokio::test]
    async fn a_request_awaiting_approval_is_not_proposed() {
        let (_dir, db, worker) = setup(&[FileChange {
            path: "README.md".into(),
            content: "x\n".into(),
        }])
        .await;
        let r = request(&db, "ws/nlp", true).await;

        assert_eq!(worker.run_due().await.unwrap(), 0);

        assert_eq!(
            db.request(r.id).await.unwrap().unwrap().state,
            RequestState::AwaitingApproval
        );
        assert_eq!(worker.forge().branch_head(&r.branch).await.unwrap(), None);
    }

    #[tokio::test]
    async fn the_pull_request_says_what_was_asked_by_whom_with_a_link_and_the_checks() {
        let (_dir, db, _worker) = setup(&[FileChange {
            path: "README.md".into(),
            content: "x\n".into(),
        }])
        .await;
        let mut r = request(&db, "ws/nlp", true).await;
        r.decided_by = Some("ada".into());
        r.decision_comment = Some("ok\nfor a semester".into());

        let text = PullRequestText::of(&r, &settings());
        let (title, body) = (text.title(), text.body());

        assert_eq!(
            title,
            format!("GPU workspace for rui: ws/nlp (request #{})", r.id)
        );
        assert!(!title.contains('\n'));
        assert!(body.contains("**Rui Researcher** (`rui`)"), "{body}");
        assert!(
            body.contains(&format!("http://portal.test/requests/{}", r.id)),
            "{body}"
        );
        assert!(body.contains("- `ws/nlp/namespace.yaml`"), "{body}");
        assert!(
            body.contains("- [x] the target directory `ws/nlp` did not exist on `main`"),
            "{body}"
        );
        assert!(
            body.contains("Approved by `ada`: ok for a semester"),
            "{body}"
        );
        assert!(!body.contains("Overcommitted"), "{body}");
        // The values sit in a fence longer than any backtick run inside them.
        assert!(body.contains("````json\n"), "{body}");
    }

    #[tokio::test]
    async fn an_overcommitted_approval_shows_its_reason_in_the_pull_request() {
        let (_dir, db, _worker) = setup(&[FileChange {
            path: "README.md".into(),
            content: "x\n".into(),
        }])
        .await;
        let mut r = request(&db, "ws/nlp", true).await;
        r.decided_by = Some("ada".into());
        r.overcommit_reason = Some("the old GPU\nstays idle".into());

        let body = PullRequestText::of(&r, &settings()).body();

        assert!(
            body.contains("**Overcommitted:** the cluster had fewer GPUs free than this request asks for; the approver's reason: the old GPU stays idle"),
            "{body}"
        );
    }
}
