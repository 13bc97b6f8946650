//! The local forge's pull requests (`local_pull_request`): a branch of the monorepo on disk
//! with a title, a body and a state, recorded by the portal.

use chrono::{DateTime, Utc};
use mirante_domain::monorepo::PullRequestState;

use crate::adapters::db::{Db, DbError};

/// A pull request of the local forge.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct LocalPullRequest {
    /// Its number.
    pub local_pull_request_id: i64,
    /// Source branch.
    pub branch: String,
    /// Target branch.
    pub base: String,
    /// Title.
    pub title: String,
    /// Body (Markdown).
    pub body: String,
    /// `open`, `merged` or `closed`.
    pub state: String,
    /// The commit on the base that merged it.
    pub merge_commit: Option<String>,
}

impl LocalPullRequest {
    /// Its state as the forge trait says it.
    pub fn pr_state(&self) -> PullRequestState {
        match self.state.as_str() {
            "merged" => PullRequestState::Merged,
            "closed" => PullRequestState::Closed,
            _ => PullRequestState::Open,
        }
    }
}

impl Db {
    /// The local forge's pull request for `branch`.
    #[tracing::instrument(name = "db.local_pull_request_by_branch", skip_all)]
    pub async fn local_pull_request_by_branch(
        &self,
        branch: &str,
    ) -> Result<Option<LocalPullRequest>, DbError> {
        let sql = format!("{LOCAL_PR_SELECT} where branch = $1");
        Ok(on_db!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(branch)
                .fetch_optional(pool)
                .await?
        }))
    }

    /// The local forge's pull request numbered `number`.
    #[tracing::instrument(name = "db.local_pull_request", skip_all)]
    pub async fn local_pull_request(
        &self,
        number: i64,
    ) -> Result<Option<LocalPullRequest>, DbError> {
        let sql = format!("{LOCAL_PR_SELECT} where local_pull_request_id = $1");
        Ok(on_db!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(number)
                .fetch_optional(pool)
                .await?
        }))
    }

    /// Opens a local pull request for `branch`, or leaves the one it has: one per branch.
    #[tracing::instrument(name = "db.open_local_pull_request", skip_all)]
    pub async fn open_local_pull_request(
        &self,
        branch: &str,
        base: &str,
        title: &str,
        body: &str,
        at: DateTime<Utc>,
    ) -> Result<LocalPullRequest, DbError> {
        // language=sql
        let sql = "insert into local_pull_request
                       (branch, base, title, body, state, created_at, updated_at)
                   values ($1, $2, $3, $4, 'open', $5, $5)
                   on conflict (branch) do nothing";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(branch)
                .bind(base)
                .bind(title)
                .bind(body)
                .bind(at)
                .execute(pool)
                .await?;
        });
        self.local_pull_request_by_branch(branch)
            .await?
            .ok_or(DbError::Sqlx(sqlx::Error::RowNotFound))
    }

    /// Marks a local pull request merged (with its merge commit) or closed.
    #[tracing::instrument(name = "db.set_local_pull_request_state", skip_all)]
    pub async fn set_local_pull_request_state(
        &self,
        number: i64,
        state: PullRequestState,
        merge_commit: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), DbError> {
        let state = match state {
            PullRequestState::Open => "open",
            PullRequestState::Merged => "merged",
            PullRequestState::Closed => "closed",
        };
        // language=sql
        let sql = "update local_pull_request
                   set state = $1, merge_commit = coalesce($2, merge_commit), updated_at = $3
                   where local_pull_request_id = $4";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(state)
                .bind(merge_commit)
                .bind(at)
                .bind(number)
                .execute(pool)
                .await?;
        });
        Ok(())
    }
}

// language=sql
const LOCAL_PR_SELECT: &str = "select local_pull_request_id, branch, base, title, body, state,
                                      merge_commit
                               from local_pull_request";
