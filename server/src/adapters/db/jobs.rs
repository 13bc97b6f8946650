//! The proposing outbox (`request_job`): a request's job is queued with the step that calls
//! for it (in [`super::requests`]), then claimed with a lease by one worker at a time,
//! renewed while it works, handed back with a backoff or finished.

use chrono::{DateTime, Utc};

use crate::adapters::db::{Db, DbError, Pool};

/// A claimed outbox row.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Job {
    /// Key.
    pub request_job_id: i64,
    /// The request it is for.
    pub request_id: i64,
    /// What to do (`propose`).
    pub kind: String,
    /// Claims so far, this one included.
    pub attempts: i64,
}

/// The outbox row of a request, for tests and the request page.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct JobRecord {
    /// Key.
    pub request_job_id: i64,
    /// Not before this time (Unix ms).
    pub run_after_ms: i64,
    /// Who holds it.
    pub lease_owner: Option<String>,
    /// Until when (Unix ms).
    pub lease_until_ms: Option<i64>,
    /// Claims so far.
    pub attempts: i64,
    /// The last error.
    pub last_error: Option<String>,
    /// When it finished.
    pub done_at: Option<DateTime<Utc>>,
}

impl Db {
    /// Claims the next due outbox row for `owner` until `now + lease`: a row that is not
    /// finished, is due, and is not held by a live lease. Two workers never hold the same row
    /// (SQLite serialises writers; PostgreSQL skips rows another transaction has locked).
    #[tracing::instrument(name = "db.claim_job", skip_all)]
    pub async fn claim_job(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<Option<Job>, DbError> {
        if self.breaker().is_open() {
            return Err(super::Breaker::refused().into());
        }
        let job = match self.pool() {
            Pool::Sqlite(pool) => {
                // language=sqlite
                let sql = "update request_job
                           set lease_owner = $1, lease_until_ms = $2, attempts = attempts + 1
                           where request_job_id = (
                               select request_job_id from request_job
                               where done_at is null and run_after_ms <= $3
                                 and (lease_until_ms is null or lease_until_ms < $3)
                               order by run_after_ms, request_job_id limit 1)
                           returning request_job_id, request_id, kind, attempts";
                sqlx::query_as(sql)
                    .bind(owner)
                    .bind(now_ms + lease_ms)
                    .bind(now_ms)
                    .fetch_optional(pool)
                    .await?
            }
            Pool::Postgres(pool) => {
                // language=postgresql
                let sql = "update request_job
                           set lease_owner = $1, lease_until_ms = $2, attempts = attempts + 1
                           where request_job_id = (
                               select request_job_id from request_job
                               where done_at is null and run_after_ms <= $3
                                 and (lease_until_ms is null or lease_until_ms < $3)
                               order by run_after_ms, request_job_id limit 1
                               for update skip locked)
                           returning request_job_id, request_id, kind, attempts";
                sqlx::query_as(sql)
                    .bind(owner)
                    .bind(now_ms + lease_ms)
                    .bind(now_ms)
                    .fetch_optional(pool)
                    .await?
            }
        };
        if let Some(job) = &job {
            let job: &Job = job;
            // language=sql
            let sql = "update request set attempts = attempts + 1 where request_id = $1";
            on_db!(self, |pool| {
                sqlx::query(sql).bind(job.request_id).execute(pool).await?;
            });
        }
        Ok(job)
    }

    /// Finishes a job `owner` holds. Returns whether it still held it.
    #[tracing::instrument(name = "db.finish_job", skip_all)]
    pub async fn finish_job(
        &self,
        job_id: i64,
        owner: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, DbError> {
        // language=sql
        let sql = "update request_job set done_at = $1, lease_owner = null, lease_until_ms = null
                   where request_job_id = $2 and lease_owner = $3 and done_at is null";
        let n = on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(at)
                .bind(job_id)
                .bind(owner)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    /// Hands a job back to be tried again at `run_after_ms`, keeping the error.
    #[tracing::instrument(name = "db.retry_job", skip_all)]
    pub async fn retry_job(
        &self,
        job_id: i64,
        owner: &str,
        run_after_ms: i64,
        error: &str,
    ) -> Result<bool, DbError> {
        // language=sql
        let sql = "update request_job
                   set run_after_ms = $1, last_error = $2, lease_owner = null, lease_until_ms = null
                   where request_job_id = $3 and lease_owner = $4 and done_at is null";
        let n = on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(run_after_ms)
                .bind(error)
                .bind(job_id)
                .bind(owner)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    /// Extends the lease `owner` holds on a job to `until_ms`. Returns whether it still held
    /// it (false: the lease ran out and another worker took the job, or it is finished).
    #[tracing::instrument(name = "db.renew_job", skip_all)]
    pub async fn renew_job(
        &self,
        job_id: i64,
        owner: &str,
        until_ms: i64,
    ) -> Result<bool, DbError> {
        // language=sql
        let sql = "update request_job set lease_until_ms = $1
                   where request_job_id = $2 and lease_owner = $3 and done_at is null";
        let n = on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(until_ms)
                .bind(job_id)
                .bind(owner)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    /// Releases every unfinished job `owner` holds, so that it is due at once: a worker calls
    /// it when it starts, since a lease held under its identity belongs to an earlier run of
    /// it that is gone. Returns how many it released.
    #[tracing::instrument(name = "db.release_leases_of", skip_all)]
    pub async fn release_leases_of(&self, owner: &str) -> Result<u64, DbError> {
        // language=sql
        let sql = "update request_job set lease_owner = null, lease_until_ms = null
                   where lease_owner = $1 and done_at is null";
        Ok(on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(owner)
                .execute(pool)
                .await?
                .rows_affected()
        }))
    }

    /// A request's outbox row, if it has one.
    #[tracing::instrument(name = "db.job_of_request", skip_all)]
    pub async fn job_of_request(&self, request_id: i64) -> Result<Option<JobRecord>, DbError> {
        // language=sql
        let sql = "select request_job_id, run_after_ms, lease_owner, lease_until_ms, attempts,
                          last_error, done_at
                   from request_job where request_id = $1 and kind = 'propose'";
        Ok(on_db!(self, |pool| {
            sqlx::query_as(sql)
                .bind(request_id)
                .fetch_optional(pool)
                .await?
        }))
    }

    /// The earliest time an unfinished job is due (Unix ms), so an idle worker knows how long
    /// it may sleep.
    #[tracing::instrument(name = "db.next_job_due", skip_all)]
    pub async fn next_job_due(&self) -> Result<Option<i64>, DbError> {
        // language=sql
        let sql =
            "select min(case when lease_until_ms is not null and lease_until_ms > run_after_ms
                                   then lease_until_ms else run_after_ms end)
                   from request_job where done_at is null";
        Ok(on_db!(self, |pool| {
            sqlx::query_scalar::<_, Option<i64>>(sql)
                .fetch_one(pool)
                .await?
        }))
    }

    /// When the oldest unfinished job was queued; `None` when none is waiting.
    #[tracing::instrument(name = "db.oldest_open_job", skip_all)]
    pub async fn oldest_open_job(&self) -> Result<Option<DateTime<Utc>>, DbError> {
        // language=sql
        let sql = "select min(created_at) from request_job where done_at is null";
        Ok(on_db!(self, |pool| {
            sqlx::query_scalar::<_, Option<DateTime<Utc>>>(sql)
                .fetch_one(pool)
                .await?
        }))
    }
}
