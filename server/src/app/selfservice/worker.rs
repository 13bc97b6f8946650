//! The proposing worker: takes requests from the outbox (`request_job`) and turns each into a
//! branch with one commit and a pull request, then follows open pull requests by polling.
//!
//! Every step can be repeated: the branch is reused when it holds the same files, the pull
//! request is looked up before one is opened, and the request's state changes by
//! compare-and-set. A worker renews its lease every third of it while it works, and gives the
//! attempt up the moment it finds the lease gone, so two workers never work one job. A worker
//! that crashes anywhere leaves its job leased: when the lease runs out another worker takes it
//! up, and a restarted process (same identity, `MIRANTE_WORKER_ID` or the host name) releases
//! its own leases at once; either carries on from the first step that has not happened. A job
//! is finished only when its request has reached a state the worker has nothing more to do
//! for (proposed, or final). Retryable forge errors (the forge is down) hand the job back
//! with an exponential backoff, capped; permanent ones (refused credentials, a conflicting
//! branch, a target directory that already exists) fail the request. The last error is kept
//! on the request for its page.

use std::{sync::Arc, time::Duration};

use chrono::Utc;
use mirante_domain::request::{RequestEvent, RequestState};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::proposal::CatalogChangeText;
use super::proposal::PullRequestText;
use super::proposal::commit_message;
use crate::adapters::db::jobs::Job;
use crate::adapters::db::requests::Change;
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
use crate::app::catalog_change::content_sha256;
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
    /// Who holds this worker's leases: stable across restarts of one replica.
    pub owner: String,
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
            owner: config.worker_id(),
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
    /// Set when the process shuts down: no job is claimed any more; the one in hand finishes.
    draining: std::sync::atomic::AtomicBool,
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
    /// A worker holding its leases as `settings.owner`.
    pub fn new(db: Db, forge: Arc<dyn Forge>, settings: WorkerSettings) -> Self {
        Worker {
            db,
            forge,
            owner: settings.owner.clone(),
            settings,
            wake: Notify::new(),
            draining: std::sync::atomic::AtomicBool::new(false),
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

    /// Claims no job from now on; a job already claimed is worked to its end. Called when the
    /// process shuts down, so that it leaves no job half done for the lease to free.
    pub fn stop_claiming(&self) {
        self.draining
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Runs the outbox loop and, when configured, the poller until `stop` is cancelled. The
    /// handle ends once the outbox loop has (after the job in hand, if any).
    pub fn spawn(self: &Arc<Self>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        let worker = Arc::clone(self);
        let outbox_stop = stop.clone();
        let outbox = tokio::spawn(async move { worker.run(outbox_stop).await });
        if let Some(every) = self.settings.poll {
            let worker = Arc::clone(self);
            tokio::spawn(async move {
                // The interval is cut into rounds, each reading its share of the open pull
                // requests, so the reads are spread over it instead of all at once.
                let tick = (every / POLL_ROUNDS).max(Duration::from_secs(1));
                let mut ticks = tokio::time::interval(tick);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        () = stop.cancelled() => break,
                        _ = ticks.tick() => {
                            if let Err(error) = worker.poll_round(tick, every).await {
                                tracing::warn!(%error, "cannot check the open pull requests");
                            }
                        }
                    }
                }
            });
        }
        outbox
    }

    async fn run(&self, stop: CancellationToken) {
        tracing::info!(worker.owner = %self.owner, forge = %self.forge.kind(), "proposing worker started");
        self.recover_own_leases().await;
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

    /// Releases the leases an earlier run of this worker left (it was killed while working),
    /// so those jobs are due now instead of when the leases run out.
    pub async fn recover_own_leases(&self) {
        match self.db.release_leases_of(&self.owner).await {
            Ok(0) => {}
            Ok(n) => {
                tracing::info!(worker.owner = %self.owner, jobs = n, "took back the jobs an earlier run left");
            }
            Err(error) => {
                tracing::warn!(%error, "cannot release the leases of an earlier run; they run out on their own");
            }
        }
    }

    /// Works every job that is due now; returns how many it took up.
    pub async fn run_due(&self) -> Result<usize, crate::adapters::db::DbError> {
        let mut done = 0;
        let lease = i64::try_from(self.settings.lease.as_millis()).unwrap_or(i64::MAX / 2);
        while !self.draining.load(std::sync::atomic::Ordering::SeqCst)
            && let Some(job) = self
                .db
                .claim_job(&self.owner, Utc::now().timestamp_millis(), lease)
                .await?
        {
            self.work(job).await;
            done += 1;
        }
        Ok(done)
    }

    #[tracing::instrument(
        name = "worker.propose",
        skip_all,
        fields(request.id = job.request_id, job.attempts = job.attempts)
    )]
    async fn work(&self, job: Job) {
        let request_id = job.request_id;
        tracing::info!(
            request.id = request_id,
            job.attempts = job.attempts,
            "proposing"
        );
        let Some(result) = self.while_leased(&job, self.propose(request_id)).await else {
            // Another worker has the job now (or will, once it sees the lease gone): it
            // carries on from where this attempt stopped.
            crate::metrics::worker_job("lease_lost");
            tracing::warn!(
                request.id = request_id,
                "the job's lease was lost while proposing; leaving it to the next worker"
            );
            return;
        };
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
            // Someone else moved the request meanwhile (a webhook, an admin, another worker).
            // The job ends only if nothing is left to do for it; a request still on its way
            // to a pull request is tried again soon.
            Err(StepError::Transition(TransitionError::Illegal(illegal))) => {
                match self.db.request(request_id).await {
                    Ok(Some(r)) if !needs_proposing(r.state) => {
                        tracing::info!(request.id = request_id, request.state = %r.state, "the request moved on; job finished");
                        self.db
                            .finish_job(job.request_job_id, &self.owner, now)
                            .await
                            .map(drop)
                    }
                    Ok(None) => self
                        .db
                        .finish_job(job.request_job_id, &self.owner, now)
                        .await
                        .map(drop),
                    Ok(Some(_)) | Err(_) => {
                        tracing::info!(request.id = request_id, request.state = %illegal.from, "the request changed under this attempt; trying again");
                        let again = now.timestamp_millis()
                            + i64::try_from(self.settings.retry.as_millis()).unwrap_or(0);
                        self.db
                            .retry_job(job.request_job_id, &self.owner, again, &illegal.to_string())
                            .await
                            .map(drop)
                    }
                }
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

    /// Runs `attempt` while renewing `job`'s lease every third of it. Gives `None` (and drops
    /// the attempt where it stands, as a crash would) once the lease is found gone, or when it
    /// could not be renewed for half of it: by then another worker may take the job.
    async fn while_leased<T>(&self, job: &Job, attempt: impl Future<Output = T>) -> Option<T> {
        let lease = self.settings.lease;
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2);
        let mut beats = tokio::time::interval(lease / 3);
        beats.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        beats.tick().await;
        let mut renewed = tokio::time::Instant::now();
        tokio::pin!(attempt);
        loop {
            tokio::select! {
                done = &mut attempt => return Some(done),
                _ = beats.tick() => {
                    let until = Utc::now().timestamp_millis() + lease_ms;
                    let renewal = tokio::time::timeout(
                        lease / 3,
                        self.db.renew_job(job.request_job_id, &self.owner, until),
                    )
                    .await;
                    match renewal {
                        Ok(Ok(true)) => renewed = tokio::time::Instant::now(),
                        Ok(Ok(false)) => return None,
                        Ok(Err(_)) | Err(_) if renewed.elapsed() >= lease / 2 => return None,
                        Ok(Err(error)) => {
                            tracing::warn!(request.id = job.request_id, %error, "cannot renew the job's lease");
                        }
                        Err(_) => {
                            tracing::warn!(request.id = job.request_id, "renewing the job's lease timed out");
                        }
                    }
                }
            }
        }
    }

    /// One attempt at proposing a request, from wherever it stands.
    async fn propose(&self, id: i64) -> Result<(), StepError> {
        let Some(mut request) = self.db.request(id).await? else {
            return Err(StepError::Permanent(format!("request {id} does not exist")));
        };
        match request.state {
            RequestState::Submitted | RequestState::Approved => {
                let started = self
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
                    .await;
                request = match started {
                    Ok(request) => request,
                    // Another attempt started proposing since this one read the request: the
                    // steps are repeatable, so this one carries on with them.
                    Err(TransitionError::Illegal(i)) if i.from == RequestState::Proposing => {
                        self.db.request(id).await?.ok_or_else(|| {
                            StepError::Permanent(format!("request {id} does not exist"))
                        })?
                    }
                    Err(e) => return Err(e.into()),
                };
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
                removed: request.removed.clone(),
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
            RequestKind::Template if request.action.on_existing() => {
                if !self.forge.path_exists(base, &request.target).await? {
                    return Err(StepError::Permanent(format!(
                        "the resource's folder `{}` is no longer on `{base}`",
                        request.target
                    )));
                }
                for (path, expected) in &request.base_files {
                    let now = self.forge.read_file(base, path).await?;
                    if now.as_deref().map(content_sha256).as_deref() != Some(expected.as_str()) {
                        return Err(StepError::Permanent(format!(
                            "`{path}` changed on `{base}` since this request was made; ask \
                             again from the resource's page to start from what is there now"
                        )));
                    }
                }
            }
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
            // Another attempt recorded the same pull request.
            Err(TransitionError::Illegal(i)) if i.from == RequestState::Proposed => {}
            Err(e) => return Err(e.into()),
        }
        follow(&self.db, request.id, pr.state, SYSTEM).await?;
        Ok(())
    }

    /// Checks every open pull request whose turn has come (all of them, unless another
    /// replica read some within the poll interval) and moves its request on when it was
    /// merged or closed (the fallback for webhooks that never arrived). Returns how many
    /// requests changed.
    pub async fn poll_open(&self) -> Result<usize, crate::adapters::db::DbError> {
        let every = self.settings.poll.unwrap_or_default();
        let open = self.db.count_in_state(RequestState::Proposed).await?;
        Ok(self.poll_due(open, every).await?.changed)
    }

    /// One round of the poller, every `tick` of the interval `every`: reads the due share of
    /// the open pull requests (`tick / every` of them, at least one).
    async fn poll_round(
        &self,
        tick: Duration,
        every: Duration,
    ) -> Result<Polled, crate::adapters::db::DbError> {
        let open = self.db.count_in_state(RequestState::Proposed).await?;
        if open == 0 {
            return Ok(Polled::default());
        }
        let share = (open as f64 * tick.as_secs_f64() / every.as_secs_f64().max(1.0)).ceil();
        // Truncation is what is wanted: the share is at most `open`.
        #[expect(clippy::cast_possible_truncation, reason = "at most `open`, an i64")]
        let budget = (share as i64).clamp(1, open);
        self.poll_due(budget, every).await
    }

    /// Reads back at most `budget` pull requests whose turn has come, the longest due first;
    /// each is claimed in the database until its next turn, one interval `every` later, so
    /// replicas share them and each is read once per interval in all, and newer requests
    /// wait behind no fixed page of older ones. A forge that is unavailable (down, or asking
    /// to wait: its rate limit) ends the round; the requests not yet claimed keep their turn.
    #[tracing::instrument(name = "worker.poll", skip(self))]
    async fn poll_due(
        &self,
        budget: i64,
        every: Duration,
    ) -> Result<Polled, crate::adapters::db::DbError> {
        let every_ms = i64::try_from(every.as_millis()).unwrap_or(i64::MAX / 4);
        let mut polled = Polled::default();
        let mut left = budget;
        while left > 0 {
            let now = Utc::now().timestamp_millis();
            let next = now.saturating_add(every_ms.max(1));
            // One at a time: a round that stops early leaves the rest due.
            let Some(request) = self.db.claim_pr_polls(now, next, 1).await?.pop() else {
                break;
            };
            left -= 1;
            let Some(number) = request.pr_number.and_then(|n| u64::try_from(n).ok()) else {
                continue;
            };
            polled.read += 1;
            match self.forge.pull_request(number).await {
                Ok(pr) => match follow(&self.db, request.id, pr.state, SYSTEM).await {
                    Ok(Some(_)) => polled.changed += 1,
                    Ok(None) => {}
                    Err(error) => {
                        tracing::warn!(request.id = request.id, %error, "cannot follow the pull request");
                    }
                },
                Err(error) if error.is_retryable() => {
                    tracing::warn!(request.id = request.id, pr.number = number, %error, "the forge cannot be read now; the round ends");
                    // Nothing was read: the request keeps its place at the head of the queue.
                    self.db.return_pr_poll(request.id, next, now).await?;
                    break;
                }
                Err(error) => {
                    tracing::warn!(request.id = request.id, pr.number = number, %error, "cannot read the pull request");
                }
            }
        }
        Ok(polled)
    }
}

/// What one round of the poller did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Polled {
    /// Pull requests read back.
    read: usize,
    /// Requests moved on (merged or closed).
    changed: usize,
}

/// How many rounds the poller cuts its interval into.
const POLL_ROUNDS: u32 = 10;

/// Whether a request in `state` still waits for the worker: not proposed yet (a request
/// awaiting approval has no job; one proposed waits for the forge, not the worker).
fn needs_proposing(state: RequestState) -> bool {
    matches!(
        state,
        RequestState::Submitted | RequestState::Approved | RequestState::Proposing
    )
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
            owner: "test-worker".into(),
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
            idempotency: None,
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
    async fn the_poller_reaches_every_open_pull_request_in_turn_and_none_twice_in_an_interval() {
        let (_dir, db, worker) = setup(&[FileChange {
            path: "README.md".into(),
            content: "x\n".into(),
        }])
        .await;
        for name in ["a", "b", "c", "d", "e"] {
            request(&db, &format!("ws/{name}"), false).await;
        }
        assert_eq!(worker.run_due().await.unwrap(), 5);
        let hour = Duration::from_secs(3600);

        let rounds = [
            worker.poll_due(2, hour).await.unwrap().read,
            worker.poll_due(2, hour).await.unwrap().read,
            worker.poll_due(2, hour).await.unwrap().read,
            worker.poll_due(2, hour).await.unwrap().read,
        ];
        // Another replica's worker on the same database.
        let other = Worker::new(
            db.clone(),
            Arc::clone(worker.forge()),
            WorkerSettings {
                owner: "another-replica".into(),
                ..settings()
            },
        );
        let other_round = other.poll_due(10, hour).await.unwrap().read;

        assert_eq!(
            rounds,
            [2, 2, 1, 0],
            "all five, then none before the hour is up"
        );
        assert_eq!(other_round, 0, "another replica reads none of them again");
    }

    #[tokio::test]
    async fn a_worker_told_to_stop_claiming_leaves_due_jobs_to_the_next_one() {
        let (_dir, db, worker) = setup(&[FileChange {
            path: "README.md".into(),
            content: "x\n".into(),
        }])
        .await;
        let r = request(&db, "ws/nlp", false).await;

        worker.stop_claiming();
        let worked = worker.run_due().await.unwrap();

        assert_eq!(worked, 0);
        let job = db.job_of_request(r.id).await.unwrap().unwrap();
        assert_eq!((job.attempts, job.done_at), (0, None), "{job:?}");
        assert_eq!(
            db.request(r.id).await.unwrap().unwrap().state,
            RequestState::Submitted
        );
    }

    #[tokio::test]
    async fn a_restarted_worker_takes_back_at_once_the_jobs_its_earlier_run_left() {
        let (_dir, db, worker) = setup(&[FileChange {
            path: "README.md".into(),
            content: "x\n".into(),
        }])
        .await;
        let r = request(&db, "ws/nlp", false).await;
        // An earlier run under the same identity claimed the job for an hour and was killed.
        let now = Utc::now().timestamp_millis();
        let held = db.claim_job("test-worker", now, 3_600_000).await.unwrap();
        assert!(held.is_some());
        let other = Worker::new(
            db.clone(),
            Arc::clone(worker.forge()),
            WorkerSettings {
                owner: "another-replica".into(),
                ..settings()
            },
        );
        assert_eq!(
            other.run_due().await.unwrap(),
            0,
            "the lease holds for others"
        );

        worker.recover_own_leases().await;
        let worked = worker.run_due().await.unwrap();

        assert_eq!(worked, 1);
        let r = db.request(r.id).await.unwrap().unwrap();
        assert_eq!(r.state, RequestState::Proposed);
    }

    #[tokio::test]
    async fn a_request_another_attempt_left_proposing_is_carried_on_not_dropped() {
        let (_dir, db, worker) = setup(&[FileChange {
            path: "README.md".into(),
            content: "x\n".into(),
        }])
        .await;
        let r = request(&db, "ws/nlp", false).await;
        // Another attempt started proposing and stopped there (its process died).
        db.transition_request(
            r.id,
            RequestEvent::StartProposing,
            &Change {
                actor: SYSTEM,
                ..Change::default()
            },
            Utc::now(),
        )
        .await
        .unwrap();

        assert_eq!(worker.run_due().await.unwrap(), 1);

        let r = db.request(r.id).await.unwrap().unwrap();
        assert_eq!(r.state, RequestState::Proposed);
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
