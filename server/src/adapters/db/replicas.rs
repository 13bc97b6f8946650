//! The replicas of the portal, the signals they follow and the work one does for all
//! (`replica`, `replica_signal`, `replica_lease`, `replica_shared`).
//!
//! Each replica writes what it serves (its catalog's hash and revision) every few seconds; a
//! reload someone asks one replica for raises a generation the others watch, so every replica
//! reloads. Work that must run once for all (the live checks) is done by the holder of a
//! lease, which writes what it found for the others to read. All are plain rows, on SQLite
//! too, where there is one replica.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use crate::adapters::db::{Db, DbError};

/// The signal that asks every replica to read the catalog again.
pub const CATALOG_RELOAD: &str = "catalog-reload";

/// What one replica said it serves, last time it wrote.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ReplicaRecord {
    /// The replica (`MIRANTE_WORKER_ID`, by default the host name).
    #[sqlx(rename = "replica_id")]
    pub id: String,
    /// Hash of the catalog it has in force.
    pub catalog_hash: String,
    /// The catalog's git revision, when read from git.
    pub catalog_revision: Option<String>,
    /// When it loaded that catalog.
    pub catalog_loaded_at: DateTime<Utc>,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// When it last wrote this.
    pub seen_at: DateTime<Utc>,
}

impl Db {
    /// Writes what replica `r.id` serves now.
    #[tracing::instrument(name = "db.record_replica", skip_all)]
    pub async fn record_replica(&self, r: &ReplicaRecord) -> Result<(), DbError> {
        // language=sql
        let sql = "insert into replica (replica_id, catalog_hash, catalog_revision,
                                        catalog_loaded_at, started_at, seen_at)
                   values ($1, $2, $3, $4, $5, $6)
                   on conflict (replica_id) do update set
                     catalog_hash = excluded.catalog_hash,
                     catalog_revision = excluded.catalog_revision,
                     catalog_loaded_at = excluded.catalog_loaded_at,
                     started_at = excluded.started_at,
                     seen_at = excluded.seen_at";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(&r.id)
                .bind(&r.catalog_hash)
                .bind(&r.catalog_revision)
                .bind(r.catalog_loaded_at)
                .bind(r.started_at)
                .bind(r.seen_at)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(())
    }

    /// The replicas seen since `since`, by id.
    #[tracing::instrument(name = "db.replicas_seen_since", skip_all)]
    pub async fn replicas_seen_since(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<ReplicaRecord>, DbError> {
        // language=sql
        let sql = "select replica_id, catalog_hash, catalog_revision, catalog_loaded_at,
                          started_at, seen_at
                   from replica where seen_at >= $1 order by replica_id";
        Ok(on_db!(self, |pool| {
            sqlx::query_as(sql).bind(since).fetch_all(pool).await?
        }))
    }

    /// Raises signal `name` by one; answers its new generation.
    #[tracing::instrument(name = "db.raise_signal", skip_all)]
    pub async fn raise_signal(&self, name: &str) -> Result<i64, DbError> {
        // language=sql
        let sql = "insert into replica_signal (name, generation) values ($1, 1)
                   on conflict (name) do update set generation = replica_signal.generation + 1
                   returning generation";
        Ok(on_db!(self, |pool| {
            sqlx::query_scalar(sql).bind(name).fetch_one(pool).await?
        }))
    }

    /// The generation of signal `name` (0 before it was first raised).
    #[tracing::instrument(name = "db.signal", skip_all)]
    pub async fn signal(&self, name: &str) -> Result<i64, DbError> {
        // language=sql
        let sql = "select generation from replica_signal where name = $1";
        let generation: Option<i64> = on_db!(self, |pool| {
            sqlx::query_scalar(sql)
                .bind(name)
                .fetch_optional(pool)
                .await?
        });
        Ok(generation.unwrap_or(0))
    }

    /// Takes or renews the lease `name` for `owner` until `until_ms`: answers whether
    /// `owner` holds it now (it was free, run out at `now_ms`, or already `owner`'s).
    #[tracing::instrument(name = "db.claim_lease", skip_all)]
    pub async fn claim_lease(
        &self,
        name: &str,
        owner: &str,
        now_ms: i64,
        until_ms: i64,
    ) -> Result<bool, DbError> {
        // language=sql
        let sql = "insert into replica_lease (name, owner, until_ms) values ($1, $2, $3)
                   on conflict (name) do update set owner = excluded.owner,
                                                     until_ms = excluded.until_ms
                   where replica_lease.until_ms <= $4 or replica_lease.owner = $2";
        let n = on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(name)
                .bind(owner)
                .bind(until_ms)
                .bind(now_ms)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    /// Takes or renews the lease `name` for one round of a periodic work done every
    /// `interval`: held until a little before `owner`'s next tick, so the holder renews it in
    /// time and another replica takes over one round after the holder stops.
    pub async fn claim_round(
        &self,
        name: &str,
        owner: &str,
        interval: std::time::Duration,
    ) -> Result<bool, DbError> {
        let now = chrono::Utc::now().timestamp_millis();
        let span = i64::try_from(interval.as_millis()).unwrap_or(i64::MAX / 4);
        let until = now + span.saturating_sub(span / 10).max(1);
        self.claim_lease(name, owner, now, until).await
    }

    /// Writes what the work `name` found, for every replica to read.
    #[tracing::instrument(name = "db.put_shared", skip_all)]
    pub async fn put_shared(
        &self,
        name: &str,
        value: &serde_json::Value,
        by: &str,
        at: DateTime<Utc>,
    ) -> Result<(), DbError> {
        // language=sql
        let sql = "insert into replica_shared (name, value, written_by, written_at)
                   values ($1, $2, $3, $4)
                   on conflict (name) do update set value = excluded.value,
                     written_by = excluded.written_by, written_at = excluded.written_at";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(name)
                .bind(Json(value))
                .bind(by)
                .bind(at)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(())
    }

    /// What the work `name` found last, and when; `None` before it first ran.
    #[tracing::instrument(name = "db.shared", skip_all)]
    pub async fn shared(
        &self,
        name: &str,
    ) -> Result<Option<(serde_json::Value, DateTime<Utc>)>, DbError> {
        // language=sql
        let sql = "select value, written_at from replica_shared where name = $1";
        let row: Option<(Json<serde_json::Value>, DateTime<Utc>)> = on_db!(self, |pool| {
            sqlx::query_as(sql).bind(name).fetch_optional(pool).await?
        });
        Ok(row.map(|(Json(value), at)| (value, at)))
    }
}
