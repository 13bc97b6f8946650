//! Live checks of validated items' evidence: HTTP probes and Argo CD applications.
//!
//! Every `probe_interval_secs` the server reads the catalog in force, takes the `probe` and
//! `argocd` evidence of its validated items (only URLs and names from the reviewed catalog,
//! never from a request) and checks them, at most `probe_concurrency` at a time, each within
//! `probe_timeout_secs`. The last result of each check replaces the previous one in memory
//! ([`ProbeBoard`]); `GET /api/v1/probes` lists them and failed ones become lint findings.
//!
//! Probes follow at most [`MAX_REDIRECTS`] redirects and fail on a loop; they send no cookies
//! and keep none, use no proxy, and never reach an internal address ([`guard`]). Argo CD is read at
//! `GET /api/v1/applications/{name}` with a Bearer token, through `adapters::argocd`.

use std::{sync::Arc, time::Duration};

use arc_swap::ArcSwap;
use chrono::{DateTime, Utc};
use mirante_domain::{Catalog, Evidence, State, lint::LiveFailure};
use reqwest::redirect;
use serde::Serialize;
use tokio::{task::JoinSet, time::Instant};
use tokio_util::sync::CancellationToken;
use url::Url;
use utoipa::ToSchema;

use crate::adapters::argocd::{ArgoClient, ArgoSettingsError};
use crate::{app::catalog::CatalogStore, config::Config};

pub(crate) use crate::adapters::argocd::ArgoCd;

pub(crate) mod guard;

use guard::{GuardedResolver, ProbeAllow};

/// Redirects a probe follows before it fails.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// What kind of evidence a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// An HTTP probe: the URL must answer with the expected status.
    Probe,
    /// An Argo CD application: it must be Healthy and Synced.
    Argocd,
}

/// The last result of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct CheckResult {
    /// The item whose evidence it is.
    pub item: String,
    /// Probe or Argo CD application.
    pub kind: CheckKind,
    /// The probed URL, or the Argo CD application's name.
    pub target: String,
    /// Whether the evidence holds.
    pub ok: bool,
    /// HTTP status of the answer (the probed URL's, or Argo CD's), when there was one.
    pub status: Option<u16>,
    /// Argo CD's health status (`Healthy`, `Degraded`, ...).
    pub health: Option<String>,
    /// Argo CD's sync status (`Synced`, `OutOfSync`, ...).
    pub sync: Option<String>,
    /// Milliseconds until the answer (or the failure); shown to admins only.
    pub latency_ms: Option<u64>,
    /// Why the check failed, in one line; absent when it passed, and shown to admins only.
    pub reason: Option<String>,
    /// When the check ran.
    pub checked_at: DateTime<Utc>,
}

impl CheckResult {
    /// What a reader who is not an admin sees: whether the check holds, not how the portal's
    /// network answered (timings, statuses and errors of internal hosts).
    pub fn for_reader(mut self) -> Self {
        self.latency_ms = None;
        self.status = None;
        self.reason = None;
        self
    }

    /// The lint's view of a failed check.
    fn failure(&self) -> Option<LiveFailure> {
        if self.ok {
            return None;
        }
        let reason = self.reason.clone().unwrap_or_default();
        Some(match self.kind {
            CheckKind::Probe => LiveFailure::Probe {
                item: self.item.clone(),
                url: self.target.clone(),
                reason,
            },
            CheckKind::Argocd => LiveFailure::Argocd {
                item: self.item.clone(),
                app: self.target.clone(),
                reason,
            },
        })
    }
}

/// The last results of every check, replaced as a whole after each run.
#[derive(Debug, Default)]
pub struct ProbeBoard {
    results: ArcSwap<Vec<CheckResult>>,
    last_run: ArcSwap<Option<DateTime<Utc>>>,
}

impl ProbeBoard {
    /// The last results, in catalog order.
    pub fn results(&self) -> Arc<Vec<CheckResult>> {
        self.results.load_full()
    }

    /// When the last run finished; `None` before the first.
    pub fn last_run(&self) -> Option<DateTime<Utc>> {
        **self.last_run.load()
    }

    /// The failed checks, for the lint.
    pub fn failures(&self) -> Vec<LiveFailure> {
        self.results
            .load()
            .iter()
            .filter_map(CheckResult::failure)
            .collect()
    }

    /// Replaces the results with those of a run.
    pub fn store(&self, results: Vec<CheckResult>) {
        self.store_run(results, Utc::now());
    }

    /// Replaces the results with those of a run that finished `at` (on another replica).
    pub fn store_run(&self, results: Vec<CheckResult>, at: DateTime<Utc>) {
        self.results.store(Arc::new(results));
        self.last_run.store(Arc::new(Some(at)));
    }
}

/// One check to run, taken from the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// Request `url`, expect `expect_status`.
    Probe {
        /// The item.
        item: String,
        /// The URL (http or https; others are left to the lint).
        url: Url,
        /// The status that means up.
        expect_status: u16,
    },
    /// Read the Argo CD application `app`.
    Argocd {
        /// The item.
        item: String,
        /// The application's name.
        app: String,
    },
}

/// The checks of a catalog: the `probe` evidence of validated items whose URL is http(s), and
/// their `argocd` evidence when `with_argocd`.
pub(crate) fn targets(catalog: &Catalog, with_argocd: bool) -> Vec<Target> {
    let mut out = Vec::new();
    for item in catalog.items.iter().filter(|i| i.state == State::Validated) {
        for e in &item.evidence {
            match e {
                Evidence::Probe { url, expect_status } => {
                    if let Ok(url) = Url::parse(url)
                        && matches!(url.scheme(), "http" | "https")
                        && url.has_host()
                    {
                        out.push(Target::Probe {
                            item: item.id.to_string(),
                            url,
                            expect_status: *expect_status,
                        });
                    }
                }
                Evidence::Argocd { app, .. } if with_argocd => out.push(Target::Argocd {
                    item: item.id.to_string(),
                    app: app.clone(),
                }),
                _ => {}
            }
        }
    }
    out
}

/// The Argo CD that `MIRANTE_ARGOCD_URL` and `MIRANTE_ARGOCD_TOKEN` name, if any.
pub(crate) fn argocd_settings(config: &Config) -> Result<Option<ArgoCd>, SettingsError> {
    ArgoCd::from_settings(config.argocd_url.as_deref(), config.argocd_token.as_ref()).map_err(|e| {
        match e {
            ArgoSettingsError::Url(url) => SettingsError::ArgocdUrl(url),
            ArgoSettingsError::Token => SettingsError::ArgocdToken,
        }
    })
}

/// Why the live-check settings cannot work.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SettingsError {
    /// `MIRANTE_ARGOCD_URL` is not an http(s) URL.
    #[error("MIRANTE_ARGOCD_URL is not an http(s) URL: {0}")]
    ArgocdUrl(String),
    /// `MIRANTE_ARGOCD_URL` without a token.
    #[error("MIRANTE_ARGOCD_URL is set but MIRANTE_ARGOCD_TOKEN is not")]
    ArgocdToken,
    /// No check could run.
    #[error("MIRANTE_PROBE_CONCURRENCY must be at least 1")]
    Concurrency,
    /// `MIRANTE_PROBE_ALLOW` has an entry that cannot be read.
    #[error(transparent)]
    Allow(#[from] guard::BadAllowEntry),
    /// The HTTP client cannot be built.
    #[error("cannot build the HTTP client for live checks: {0}")]
    Client(#[from] reqwest::Error),
}

/// Runs checks: the HTTP clients and limits.
#[derive(Debug, Clone)]
pub(crate) struct Checker {
    /// Follows redirects (up to [`MAX_REDIRECTS`], failing on a loop).
    follow: reqwest::Client,
    /// Follows none: for probes that expect a redirect status.
    no_follow: reqwest::Client,
    /// The internal addresses probes may reach anyway.
    allow: Arc<ProbeAllow>,
    timeout: Duration,
    concurrency: usize,
    /// Argo CD, at the address the operator configured: not guarded, follows no redirect.
    argocd: Option<ArgoClient>,
}

impl Checker {
    /// A checker with these limits.
    pub(crate) fn new(
        timeout: Duration,
        concurrency: usize,
        argocd: Option<ArgoCd>,
        allow: ProbeAllow,
    ) -> Result<Self, SettingsError> {
        if concurrency == 0 {
            return Err(SettingsError::Concurrency);
        }
        let allow = Arc::new(allow);
        let builder = || {
            reqwest::Client::builder()
                .timeout(timeout)
                .connect_timeout(timeout)
                .user_agent(concat!("mirante-probe/", env!("CARGO_PKG_VERSION")))
        };
        // A proxy would resolve the names itself, past the guard.
        let guarded = || {
            builder()
                .no_proxy()
                .dns_resolver(Arc::new(GuardedResolver::new(Arc::clone(&allow))))
        };
        Ok(Checker {
            follow: guarded()
                .redirect(redirect_policy(Arc::clone(&allow)))
                .build()?,
            no_follow: guarded().redirect(redirect::Policy::none()).build()?,
            allow,
            timeout,
            concurrency,
            argocd: argocd.map(|a| ArgoClient::new(a, timeout)).transpose()?,
        })
    }

    /// The checker the configuration describes.
    pub(crate) fn from_config(config: &Config) -> Result<Self, SettingsError> {
        let argocd = argocd_settings(config)?;
        Checker::new(
            Duration::from_secs(config.probe_timeout_secs.max(1)),
            config.probe_concurrency,
            argocd,
            ProbeAllow::parse(&config.probe_allow)?,
        )
    }

    /// Whether Argo CD evidence is read.
    pub(crate) fn reads_argocd(&self) -> bool {
        self.argocd.is_some()
    }

    /// Runs every check of the catalog, at most `concurrency` at once; results in the
    /// catalog's order.
    ///
    /// A check is started only when one finishes, so no more than `concurrency` of them exist
    /// at a time: a catalog with tens of thousands of probes does not hold a task for each
    /// while it waits.
    pub(crate) async fn run(&self, catalog: &Catalog) -> Vec<CheckResult> {
        let mut targets = targets(catalog, self.reads_argocd())
            .into_iter()
            .enumerate();
        let mut tasks = JoinSet::new();
        let mut results = Vec::with_capacity(targets.len());
        loop {
            while tasks.len() < self.concurrency {
                let Some((i, target)) = targets.next() else {
                    break;
                };
                let checker = self.clone();
                tasks.spawn(async move { (i, checker.check(&target).await) });
            }
            match tasks.join_next().await {
                Some(Ok(r)) => results.push(r),
                Some(Err(error)) => tracing::error!(%error, "a live check panicked"),
                None => break,
            }
        }
        results.sort_by_key(|(i, _)| *i);
        results.into_iter().map(|(_, r)| r).collect()
    }

    /// Runs one check.
    pub(crate) async fn check(&self, target: &Target) -> CheckResult {
        match target {
            Target::Probe {
                item,
                url,
                expect_status,
            } => self.probe(item, url, *expect_status).await,
            Target::Argocd { item, app } => self.argocd(item, app).await,
        }
    }

    async fn probe(&self, item: &str, url: &Url, expect_status: u16) -> CheckResult {
        let client = if (300..400).contains(&expect_status) {
            &self.no_follow
        } else {
            &self.follow
        };
        let mut result = CheckResult {
            item: item.to_owned(),
            kind: CheckKind::Probe,
            target: url.to_string(),
            ok: false,
            status: None,
            health: None,
            sync: None,
            latency_ms: None,
            reason: None,
            checked_at: Utc::now(),
        };
        if let Some(refused) = self.allow.refuse_literal(url) {
            result.reason = Some(refused);
            return result;
        }
        let started = Instant::now();
        let answer = client.get(url.clone()).send().await;
        result.latency_ms = Some(elapsed_ms(started));
        match answer {
            Ok(response) => {
                let status = response.status().as_u16();
                result.status = Some(status);
                result.ok = status == expect_status;
                if !result.ok {
                    result.reason = Some(format!("expected status {expect_status}, got {status}"));
                }
            }
            Err(error) => result.reason = Some(self.reason(&error)),
        }
        result
    }

    async fn argocd(&self, item: &str, app: &str) -> CheckResult {
        let mut result = CheckResult {
            item: item.to_owned(),
            kind: CheckKind::Argocd,
            target: app.to_owned(),
            ok: false,
            status: None,
            health: None,
            sync: None,
            latency_ms: None,
            reason: None,
            checked_at: Utc::now(),
        };
        let Some(argocd) = &self.argocd else {
            result.reason = Some("Argo CD is not configured".to_owned());
            return result;
        };
        let started = Instant::now();
        let answer = argocd.application(app).await;
        result.latency_ms = Some(elapsed_ms(started));
        let application = match answer {
            Ok(answer) => {
                result.status = Some(answer.status);
                answer.body
            }
            Err(error) => {
                result.status = error.status();
                result.reason = Some(error.to_string());
                return result;
            }
        };
        let status = application.status;
        let health = status.health.and_then(|h| h.status);
        let sync = status.sync.and_then(|s| s.status);
        result.ok = health.as_deref() == Some("Healthy") && sync.as_deref() == Some("Synced");
        if !result.ok {
            result.reason = Some(format!(
                "health {}, sync {} (expected Healthy and Synced)",
                health.as_deref().unwrap_or("unknown"),
                sync.as_deref().unwrap_or("unknown")
            ));
        }
        result.health = health;
        result.sync = sync;
        result
    }

    /// One line saying why a request failed.
    fn reason(&self, error: &reqwest::Error) -> String {
        if let Some(refused) = find_source::<RedirectRefused>(error) {
            return refused.to_string();
        }
        if let Some(refused) = find_source::<guard::Refused>(error) {
            return refused.to_string();
        }
        if error.is_timeout() {
            return format!("no answer within {} ms", self.timeout.as_millis());
        }
        let root = root_cause(error);
        if error.is_connect() {
            return format!("cannot connect: {root}");
        }
        format!("request failed: {root}")
    }
}

/// Why a redirect was not followed.
#[derive(Debug, thiserror::Error)]
enum RedirectRefused {
    #[error("redirect loop: {0} was already visited")]
    Loop(String),
    #[error("more than {0} redirects")]
    TooMany(usize),
    #[error("redirect {0}")]
    Internal(String),
}

fn redirect_policy(allow: Arc<ProbeAllow>) -> redirect::Policy {
    redirect::Policy::custom(move |attempt| {
        if let Some(refused) = allow.refuse_literal(attempt.url()) {
            attempt.error(RedirectRefused::Internal(refused))
        } else if !matches!(attempt.url().scheme(), "http" | "https") {
            let url = attempt.url().to_string();
            attempt.error(RedirectRefused::Internal(format!(
                "refused: {url} is not http(s)"
            )))
        } else if attempt.previous().iter().any(|u| u == attempt.url()) {
            let url = attempt.url().to_string();
            attempt.error(RedirectRefused::Loop(url))
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(RedirectRefused::TooMany(MAX_REDIRECTS))
        } else {
            attempt.follow()
        }
    })
}

fn find_source<'a, T: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        current = e.source();
    }
    None
}

fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    one_line(&current.to_string())
}

fn one_line(s: &str) -> String {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    line.chars().take(300).collect()
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The lease and the shared results of the live checks among the replicas.
const PROBES: &str = "probes";

/// Where the checks run: one replica a round for all of them, the others read its results.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    /// The replicas' database.
    pub db: crate::adapters::db::Db,
    /// This replica (`Config::worker_id`).
    pub replica: String,
}

impl Shared {
    /// Whether this replica runs this round's checks: it holds, or takes, the lease until
    /// just before the next round, so the holder keeps it while it runs and another replica
    /// takes over one round after it stops. A database that cannot be read leaves the checks
    /// to each replica, as before there were several.
    async fn runs_this_round(&self, interval: Duration) -> bool {
        match self.db.claim_round(PROBES, &self.replica, interval).await {
            Ok(held) => held,
            Err(error) => {
                tracing::warn!(%error, "cannot share the live checks with the other replicas; running them here");
                true
            }
        }
    }

    async fn publish(&self, results: &[CheckResult]) {
        let value = serde_json::to_value(results).unwrap_or_default();
        if let Err(error) = self
            .db
            .put_shared(PROBES, &value, &self.replica, Utc::now())
            .await
        {
            tracing::warn!(%error, "cannot share the live checks' results with the other replicas");
        }
    }

    /// The results the replica holding the lease last wrote.
    async fn read(&self) -> Option<(Vec<CheckResult>, DateTime<Utc>)> {
        match self.db.shared(PROBES).await {
            Ok(Some((value, at))) => match serde_json::from_value(value) {
                Ok(results) => Some((results, at)),
                Err(error) => {
                    tracing::warn!(%error, "the shared live checks' results do not read");
                    None
                }
            },
            Ok(None) => None,
            Err(error) => {
                tracing::warn!(%error, "cannot read the live checks' results another replica wrote");
                None
            }
        }
    }
}

/// Runs the checks every `interval` (the first run at once) until `stop` is cancelled. One
/// replica a round runs them and writes the results to `shared`; the others read them.
pub(crate) fn spawn(
    checker: Checker,
    catalog: Arc<CatalogStore>,
    board: Arc<ProbeBoard>,
    interval: Duration,
    shared: Shared,
    stop: CancellationToken,
) {
    if interval.is_zero() {
        tracing::info!("live checks are off (MIRANTE_PROBE_INTERVAL_SECS=0)");
        return;
    }
    tokio::spawn(async move {
        let mut every = tokio::time::interval(interval);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                _ = every.tick() => {
                    if !shared.runs_this_round(interval).await {
                        if let Some((results, at)) = shared.read().await {
                            board.store_run(results, at);
                        }
                        continue;
                    }
                    let snapshot = catalog.snapshot();
                    let results = tokio::select! {
                        () = stop.cancelled() => break,
                        r = checker.run(snapshot.catalog()) => r,
                    };
                    let failing = results.iter().filter(|r| !r.ok).count();
                    tracing::info!(checks = results.len(), failing, "live checks ran");
                    shared.publish(&results).await;
                    board.store(results);
                }
            }
        }
    });
}

#[cfg(test)]
mod tests;
