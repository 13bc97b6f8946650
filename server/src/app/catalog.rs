//! The catalog store: the snapshot in force, how it is reloaded, and what went wrong last.
//!
//! Reads never wait: the current snapshot sits behind an [`ArcSwap`] and is replaced whole.
//! A reload parses and validates on a blocking thread and swaps only a catalog with no
//! problems; a broken one leaves the last good snapshot in place and is kept as `last_error`
//! for the API and the UI to show.

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use arc_swap::ArcSwap;
use chrono::{DateTime, Utc};
use mirante_domain::{Snapshot, diagnostic::Diagnostics, load::LoadedCatalog};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::{
    adapters::db::{Db, NewAuditEntry, NewSnapshot},
    adapters::git::history::HistoryCache,
};

pub(crate) use crate::adapters::catalog_source::{CatalogSource, embedded_files};

/// What caused a reload; recorded in the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReloadTrigger {
    /// The first load when the server starts.
    Startup,
    /// SIGHUP.
    Signal,
    /// The refresh timer.
    Timer,
    /// `POST /api/v1/catalog/reload`.
    Api {
        /// The signed-in admin (username) who asked.
        user: String,
        /// The caller's address.
        peer: std::net::IpAddr,
    },
    /// An admin merged a request's pull request into the local monorepo.
    Merge {
        /// The admin (username).
        user: String,
        /// The request.
        request: i64,
    },
    /// Another replica was asked to reload (by the API, SIGHUP or a merge), and this one
    /// follows.
    Peer,
}

/// The replicas' signal for "read the catalog again".
const RELOAD_SIGNAL: &str = crate::adapters::db::replicas::CATALOG_RELOAD;

impl ReloadTrigger {
    /// Who to name in the audit log: the admin who asked, or `system`.
    pub fn actor(&self) -> String {
        match self {
            ReloadTrigger::Startup
            | ReloadTrigger::Signal
            | ReloadTrigger::Timer
            | ReloadTrigger::Peer => "system".to_owned(),
            ReloadTrigger::Api { user, .. } | ReloadTrigger::Merge { user, .. } => user.clone(),
        }
    }

    /// Short name for logs.
    pub fn name(&self) -> &'static str {
        match self {
            ReloadTrigger::Startup => "startup",
            ReloadTrigger::Signal => "sighup",
            ReloadTrigger::Timer => "timer",
            ReloadTrigger::Api { .. } => "api",
            ReloadTrigger::Merge { .. } => "merge",
            ReloadTrigger::Peer => "peer",
        }
    }

    /// Whether a person asked for this reload (so even a no-op is worth an audit entry).
    fn is_deliberate(&self) -> bool {
        matches!(
            self,
            ReloadTrigger::Signal | ReloadTrigger::Api { .. } | ReloadTrigger::Merge { .. }
        )
    }
}

/// The snapshot in force and when it was loaded, swapped together so a reader never sees
/// one without the other.
#[derive(Debug)]
pub struct Current {
    /// The snapshot.
    pub snapshot: Arc<Snapshot>,
    /// When this process loaded it.
    pub loaded_at: DateTime<Utc>,
}

/// The last reload that failed, until a later one succeeds.
#[derive(Debug, Clone, Serialize)]
pub struct ReloadFailure {
    /// When it failed.
    pub at: DateTime<Utc>,
    /// What caused the reload.
    pub trigger: ReloadTrigger,
    /// What is wrong with the catalog.
    pub diagnostics: Diagnostics,
}

/// What a successful reload did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ReloadOutcome {
    /// The catalog content is the same as the one in force; nothing was swapped.
    Unchanged {
        /// Hash of the catalog in force.
        hash: String,
    },
    /// A new snapshot is in force.
    Updated {
        /// Hash of the snapshot replaced.
        previous: String,
        /// Hash of the new snapshot.
        hash: String,
    },
}

/// Why a reload did not change the catalog.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The catalog has problems; the last good one stays in force.
    #[error("the catalog is invalid:\n{0}")]
    Invalid(Diagnostics),
    /// The loading thread panicked.
    #[error("catalog loading failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// The catalog in force, its source, and the last reload error.
pub struct CatalogStore {
    current: ArcSwap<Current>,
    source: CatalogSource,
    last_error: Mutex<Option<ReloadFailure>>,
    db: Db,
    /// One reload at a time: a timer tick and a signal arriving together must not race to
    /// swap, nor record the same change twice.
    reload_lock: tokio::sync::Mutex<()>,
    /// The catalog's history, read from the source's git history when asked for.
    history: Arc<HistoryCache>,
    /// The generation of the replicas' reload signal this replica has acted on.
    reload_signal_seen: std::sync::atomic::AtomicI64,
}

impl std::fmt::Debug for CatalogStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogStore")
            .field("hash", &self.snapshot().hash)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl CatalogStore {
    /// Loads the catalog for the first time. Fails, with every problem found, when it is
    /// invalid: a server never starts with no catalog or a broken one.
    pub async fn open(source: CatalogSource, db: Db) -> Result<Self, ReloadError> {
        let (loaded, revision) = load_blocking(source.clone()).await?;
        let snapshot = Arc::new(loaded.into_snapshot(revision));
        let now = Utc::now();
        let store = CatalogStore {
            current: ArcSwap::from_pointee(Current {
                snapshot: Arc::clone(&snapshot),
                loaded_at: now,
            }),
            source: source.clone(),
            last_error: Mutex::new(None),
            db,
            reload_lock: tokio::sync::Mutex::new(()),
            history: Arc::new(HistoryCache::new(source)),
            reload_signal_seen: std::sync::atomic::AtomicI64::new(0),
        };
        // Reloads asked for before this replica started are in the catalog it just read.
        match store.db.signal(RELOAD_SIGNAL).await {
            Ok(generation) => store
                .reload_signal_seen
                .store(generation, std::sync::atomic::Ordering::SeqCst),
            Err(error) => tracing::warn!(%error, "cannot read the replicas' reload signal"),
        }
        let new_content = store.record(&snapshot, now).await;
        tracing::info!(
            catalog.hash = %snapshot.hash,
            catalog.items = snapshot.catalog().items.len(),
            catalog.source = %store.source.describe(),
            "catalog loaded"
        );
        if new_content {
            store
                .audit(
                    &ReloadTrigger::Startup,
                    serde_json::json!({
                        "trigger": ReloadTrigger::Startup,
                        "outcome": "loaded",
                        "hash": snapshot.hash,
                        "item_count": snapshot.catalog().items.len(),
                    }),
                )
                .await;
        }
        Ok(store)
    }

    /// The snapshot in force and when it was loaded.
    pub fn current(&self) -> Arc<Current> {
        self.current.load_full()
    }

    /// Where the catalog is read from.
    pub fn source(&self) -> &CatalogSource {
        &self.source
    }

    /// The catalog's history (from the monorepo's git history, for a git source).
    pub fn history(&self) -> Arc<HistoryCache> {
        Arc::clone(&self.history)
    }

    /// The last failed reload, if no reload has succeeded since.
    pub fn last_error(&self) -> Option<ReloadFailure> {
        self.last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Reads the source again and puts the result in force if it is valid and different.
    ///
    /// On a broken catalog the last good snapshot stays, the problems are kept as
    /// [`Self::last_error`] and returned. Reloads that change the catalog, fail, or were asked
    /// for by someone are written to the audit log; a timer finding nothing new, or the
    /// same problems as last time, is not, so the log does not fill with ticks.
    pub async fn reload(&self, trigger: ReloadTrigger) -> Result<ReloadOutcome, ReloadError> {
        let deliberate = trigger.is_deliberate();
        let outcome = self.reload_here(trigger).await;
        // What someone asked this replica for, the others do too.
        if deliberate {
            match self.db.raise_signal(RELOAD_SIGNAL).await {
                Ok(generation) => {
                    self.reload_signal_seen
                        .fetch_max(generation, std::sync::atomic::Ordering::SeqCst);
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot tell the other replicas to reload; their timers will");
                }
            }
        }
        outcome
    }

    /// Reloads when another replica was asked to since this one last looked; answers
    /// whether it did.
    pub async fn follow_peers(&self) -> Result<bool, crate::adapters::db::DbError> {
        let generation = self.db.signal(RELOAD_SIGNAL).await?;
        let seen = self
            .reload_signal_seen
            .fetch_max(generation, std::sync::atomic::Ordering::SeqCst);
        if generation <= seen {
            return Ok(false);
        }
        tracing::info!(
            signal.generation = generation,
            "another replica reloaded the catalog; reloading"
        );
        // Errors are logged and kept as last_error by the reload itself.
        let _ = self.reload_here(ReloadTrigger::Peer).await;
        Ok(true)
    }

    async fn reload_here(&self, trigger: ReloadTrigger) -> Result<ReloadOutcome, ReloadError> {
        let _guard = self.reload_lock.lock().await;
        let previous = self.current();
        match load_blocking(self.source.clone()).await {
            Err(ReloadError::Invalid(diagnostics)) => {
                let repeated = self
                    .last_error()
                    .is_some_and(|e| e.diagnostics == diagnostics);
                tracing::warn!(
                    catalog.trigger = trigger.name(),
                    catalog.errors = diagnostics.len(),
                    catalog.first_error = %diagnostics.iter().next().map(ToString::to_string).unwrap_or_default(),
                    catalog.hash = %previous.snapshot.hash,
                    "catalog reload refused; the last good catalog stays in force"
                );
                *self
                    .last_error
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(ReloadFailure {
                    at: Utc::now(),
                    trigger: trigger.clone(),
                    diagnostics: diagnostics.clone(),
                });
                crate::metrics::catalog_reload("refused");
                if !(repeated && trigger == ReloadTrigger::Timer) {
                    self.audit(
                        &trigger,
                        serde_json::json!({
                            "trigger": trigger,
                            "outcome": "failed",
                            "hash": previous.snapshot.hash,
                            "error_count": diagnostics.len(),
                            "errors": diagnostics.iter().take(20).map(ToString::to_string).collect::<Vec<_>>(),
                        }),
                    )
                    .await;
                }
                Err(ReloadError::Invalid(diagnostics))
            }
            Err(other) => Err(other),
            Ok((loaded, revision)) => {
                *self
                    .last_error
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = None;
                if loaded.hash == previous.snapshot.hash {
                    tracing::debug!(catalog.trigger = trigger.name(), catalog.hash = %loaded.hash, "catalog unchanged");
                    crate::metrics::catalog_reload("unchanged");
                    if trigger.is_deliberate() {
                        self.audit(
                            &trigger,
                            serde_json::json!({
                                "trigger": trigger,
                                "outcome": "unchanged",
                                "hash": loaded.hash,
                            }),
                        )
                        .await;
                    }
                    return Ok(ReloadOutcome::Unchanged { hash: loaded.hash });
                }
                let snapshot = Arc::new(loaded.into_snapshot(revision));
                crate::metrics::catalog_reload("updated");
                let now = Utc::now();
                // Swap before recording: the catalog in git is the truth, so a database
                // outage must not keep stale content in force. The history then misses a
                // row, which the error log says.
                self.current.store(Arc::new(Current {
                    snapshot: Arc::clone(&snapshot),
                    loaded_at: now,
                }));
                tracing::info!(
                    catalog.trigger = trigger.name(),
                    catalog.previous_hash = %previous.snapshot.hash,
                    catalog.hash = %snapshot.hash,
                    catalog.items = snapshot.catalog().items.len(),
                    "catalog reloaded"
                );
                self.record(&snapshot, now).await;
                self.audit(
                    &trigger,
                    serde_json::json!({
                        "trigger": trigger,
                        "outcome": "updated",
                        "previous_hash": previous.snapshot.hash,
                        "hash": snapshot.hash,
                        "item_count": snapshot.catalog().items.len(),
                    }),
                )
                .await;
                Ok(ReloadOutcome::Updated {
                    previous: previous.snapshot.hash.clone(),
                    hash: snapshot.hash.clone(),
                })
            }
        }
    }

    /// Records the snapshot in the catalog history; returns whether its content was new.
    /// Failures are logged, not returned: history is not worth refusing a catalog over.
    async fn record(&self, snapshot: &Snapshot, loaded_at: DateTime<Utc>) -> bool {
        let source = self.source.describe();
        let row = NewSnapshot {
            hash: &snapshot.hash,
            revision: snapshot.revision.as_deref(),
            source: &source,
            item_count: i64::try_from(snapshot.catalog().items.len()).unwrap_or(i64::MAX),
            loaded_at,
        };
        match self.db.record_snapshot(&row).await {
            Ok(new) => new,
            Err(error) => {
                tracing::error!(%error, catalog.hash = %snapshot.hash, "cannot record the catalog snapshot");
                false
            }
        }
    }

    /// Appends a `catalog.reload` audit entry; failures are logged, as for [`Self::record`].
    async fn audit(&self, trigger: &ReloadTrigger, detail: serde_json::Value) {
        let actor = trigger.actor();
        let entry = NewAuditEntry {
            at: Utc::now(),
            actor: &actor,
            action: "catalog.reload",
            target: "catalog",
            detail,
        };
        if let Err(error) = self.db.append_audit(&entry).await {
            tracing::error!(%error, audit.action = entry.action, "cannot write the audit entry");
        }
    }

    /// Reloads on SIGHUP and, when `every` is set, on a timer, until `stop` is cancelled.
    pub fn spawn_reloaders(self: &Arc<Self>, every: Option<Duration>, stop: CancellationToken) {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            match signal(SignalKind::hangup()) {
                Ok(mut hangups) => {
                    let store = Arc::clone(self);
                    let stop = stop.clone();
                    tokio::spawn(async move {
                        loop {
                            tokio::select! {
                                () = stop.cancelled() => break,
                                got = hangups.recv() => {
                                    if got.is_none() { break; }
                                    tracing::info!("SIGHUP received: reloading the catalog");
                                    // Errors are logged and kept as last_error by reload.
                                    let _ = store.reload(ReloadTrigger::Signal).await;
                                }
                            }
                        }
                    });
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot listen for SIGHUP; reload by API or timer only")
                }
            }
        }
        if let Some(every) = every.filter(|d| !d.is_zero()) {
            let store = Arc::clone(self);
            tokio::spawn(async move {
                let mut ticks = tokio::time::interval(every);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                // The first tick is immediate and the catalog was just loaded.
                ticks.tick().await;
                loop {
                    tokio::select! {
                        () = stop.cancelled() => break,
                        _ = ticks.tick() => {
                            let _ = store.reload(ReloadTrigger::Timer).await;
                        }
                    }
                }
            });
        }
    }
}

impl CatalogStore {
    /// The snapshot in force now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.current.load().snapshot)
    }
}

async fn load_blocking(
    source: CatalogSource,
) -> Result<(LoadedCatalog, Option<String>), ReloadError> {
    tokio::task::spawn_blocking(move || source.load_with_revision())
        .await?
        .map_err(ReloadError::Invalid)
}

/// A one-line summary of a valid catalog, as `mirante catalog check` prints it.
pub(crate) fn summary(snapshot: &Snapshot) -> String {
    let c = snapshot.catalog();
    format!(
        "{} items, {} sites, {} layers, {} decisions, {} tasks (hash {})",
        c.items.len(),
        c.sites.len(),
        c.layers.len(),
        c.decisions.len(),
        c.tasks.len(),
        snapshot.hash.get(..8).unwrap_or(&snapshot.hash),
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn the_embedded_demo_catalog_hashes_the_same_as_the_directory_it_was_built_from() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");

        let embedded = CatalogSource::Embedded
            .load()
            .expect("embedded catalog invalid");
        let on_disk = CatalogSource::dir(&dir).load().expect("catalog/ invalid");

        assert_eq!(embedded.hash, on_disk.hash);
        assert_eq!(embedded.files, on_disk.files);
    }

    #[test]
    fn a_timer_reload_is_attributed_to_the_system_and_an_api_reload_to_the_caller() {
        let api = ReloadTrigger::Api {
            user: "ada".to_owned(),
            peer: "127.0.0.1".parse().unwrap(),
        };

        assert_eq!(ReloadTrigger::Timer.actor(), "system");
        assert_eq!(api.actor(), "ada");
        assert!(api.is_deliberate());
        assert!(!ReloadTrigger::Timer.is_deliberate());
    }

    const CATALOG: &str = "layers:\n  - id: l0\n    kind: layer\n    name: Base\nitems:\n  - id: a\n    name: A\n    kind: component\n    layer: l0\n    state: desired\n";

    async fn store_on(dir: &Path) -> CatalogStore {
        let db = Db::connect(&secrecy::SecretString::from("sqlite::memory:"), 1)
            .await
            .unwrap();
        db.migrate().await.unwrap();
        CatalogStore::open(CatalogSource::dir(dir), db)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_timer_finding_the_same_problems_again_does_not_fill_the_audit_log() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.yaml"), CATALOG).unwrap();
        let store = store_on(dir.path()).await;
        let good = store.current().snapshot.hash.clone();
        std::fs::write(
            dir.path().join("c.yaml"),
            CATALOG.replace("desired", "wished"),
        )
        .unwrap();

        for _ in 0..3 {
            let result = store.reload(ReloadTrigger::Timer).await;
            assert!(matches!(result, Err(ReloadError::Invalid(_))));
        }

        assert_eq!(store.current().snapshot.hash, good);
        assert_eq!(store.last_error().unwrap().diagnostics.len(), 1);
        let audit = store.db.list_audit(10).await.unwrap();
        let failures = audit
            .iter()
            .filter(|e| e.detail["outcome"] == "failed")
            .count();
        assert_eq!(failures, 1);
    }

    #[tokio::test]
    async fn a_timer_finding_nothing_new_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.yaml"), CATALOG).unwrap();
        let store = store_on(dir.path()).await;

        let outcome = store.reload(ReloadTrigger::Timer).await.unwrap();

        assert!(matches!(outcome, ReloadOutcome::Unchanged { .. }));
        assert_eq!(
            store.db.list_audit(10).await.unwrap().len(),
            1,
            "only the start-up entry"
        );
        assert_eq!(store.db.list_snapshots(10).await.unwrap().len(), 1);
    }
}
