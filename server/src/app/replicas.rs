//! What makes the replicas of the portal agree: every `MIRANTE_REPLICA_HEARTBEAT_SECS` each
//! writes which catalog it serves (for `GET /api/v1/replicas`, `/readyz` and the
//! "replicas disagree" alert) and looks whether another replica was asked to reload the
//! catalog (the API, SIGHUP, a merge), reloading too when one was.

use std::{sync::Arc, time::Duration};

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use crate::adapters::db::{Db, replicas::ReplicaRecord};
use crate::app::catalog::CatalogStore;

/// One replica's heartbeat.
#[derive(Debug, Clone)]
pub(crate) struct Heartbeat {
    /// The replica (`Config::worker_id`).
    pub id: String,
    pub started_at: DateTime<Utc>,
    pub catalog: Arc<CatalogStore>,
    pub db: Db,
}

impl Heartbeat {
    /// Follows the other replicas' reloads, then writes what this one serves.
    pub(crate) async fn beat(&self) {
        if let Err(error) = self.catalog.follow_peers().await {
            tracing::warn!(%error, "cannot look whether another replica reloaded the catalog");
        }
        let current = self.catalog.current();
        let record = ReplicaRecord {
            id: self.id.clone(),
            catalog_hash: current.snapshot.hash.clone(),
            catalog_revision: current.snapshot.revision.clone(),
            catalog_loaded_at: current.loaded_at,
            started_at: self.started_at,
            seen_at: Utc::now(),
        };
        if let Err(error) = self.db.record_replica(&record).await {
            tracing::warn!(%error, "cannot write which catalog this replica serves");
        }
    }

    /// Beats now and then every `every` until `stop` is cancelled.
    pub(crate) fn spawn(self, every: Duration, stop: CancellationToken) {
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    _ = ticks.tick() => self.beat().await,
                }
            }
        });
    }
}
