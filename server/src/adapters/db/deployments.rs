//! Merged requests' deployments, followed in Argo CD (`resource_deployment`), and the
//! deployment steps on their timeline.
//!
//! A row is made once per merged template request, with the commit the deployment must
//! contain; each answer of Argo CD updates it. A change of state is a compare-and-set on the
//! state it was read in, written with its timeline row in one transaction, so several
//! replicas following the same resource write each step once.

use chrono::{DateTime, Utc};
use mirante_domain::resource::ResourceState;

use crate::adapters::db::{Db, DbError};
use mirante_domain::notification::NoticeKind;

/// The actor of the deployment steps on a timeline.
pub const ARGOCD_ACTOR: &str = "argocd";

/// A merged request's deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeploymentRecord {
    /// The merged request.
    pub request_id: i64,
    /// Its folder in the monorepo.
    pub target: String,
    /// Whether the request removes its folder: its deployment is over once Argo CD no longer
    /// has the Application.
    pub removal: bool,
    /// `merged` (no answer about it yet), `syncing`, `live` or `degraded`; for a removal,
    /// `removing` or `removed`.
    pub state: ResourceState,
    /// The commit of the base branch the deployment must contain.
    pub merge_commit: String,
    /// The Argo CD Application found for the folder.
    pub application: Option<String>,
    /// The revision Argo CD last reported.
    pub revision: Option<String>,
    /// What Argo CD said (why degraded, why still syncing).
    pub message: Option<String>,
    /// The last error asking Argo CD.
    pub last_error: Option<String>,
    /// Errors in a row.
    pub failures: i64,
    /// When Argo CD was last asked.
    pub checked_at: Option<DateTime<Utc>>,
    /// Not checked again before this time (Unix ms).
    pub next_check_ms: i64,
}

#[derive(sqlx::FromRow)]
struct DeploymentRow {
    request_id: i64,
    target: String,
    action: String,
    state: String,
    merge_commit: String,
    application: Option<String>,
    revision: Option<String>,
    message: Option<String>,
    last_error: Option<String>,
    failures: i64,
    checked_at: Option<DateTime<Utc>>,
    next_check_ms: i64,
}

impl TryFrom<DeploymentRow> for DeploymentRecord {
    type Error = DbError;

    fn try_from(r: DeploymentRow) -> Result<Self, DbError> {
        let state = ResourceState::parse(&r.state).ok_or_else(|| {
            DbError::Sqlx(sqlx::Error::Decode(
                format!("unknown deployment state `{}`", r.state).into(),
            ))
        })?;
        Ok(DeploymentRecord {
            request_id: r.request_id,
            target: r.target,
            removal: r.action == mirante_domain::request::Action::Remove.as_str(),
            state,
            merge_commit: r.merge_commit,
            application: r.application,
            revision: r.revision,
            message: r.message,
            last_error: r.last_error,
            failures: r.failures,
            checked_at: r.checked_at,
            next_check_ms: r.next_check_ms,
        })
    }
}

/// A merged template request whose deployment is not followed yet.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Unfollowed {
    /// The request.
    pub request_id: i64,
    /// Its pull request's number.
    pub pr_number: Option<i64>,
    /// Its folder.
    pub target: String,
}

/// What one answer of Argo CD says about a deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed<'a> {
    /// `syncing`, `live` or `degraded`; for a removal, `removing` or `removed`.
    pub state: ResourceState,
    /// The Application (none when a removal finds it gone and none was seen before).
    pub application: Option<&'a str>,
    /// The revision it reported.
    pub revision: Option<&'a str>,
    /// What it said.
    pub message: Option<&'a str>,
}

// language=sql
const SELECT: &str =
    "select d.request_id, r.target, r.action, d.state, d.merge_commit, d.application,
                             d.revision, d.message, d.last_error, d.failures, d.checked_at,
                             d.next_check_ms
                      from resource_deployment d join request r on r.request_id = d.request_id";

// A later merged request on the same folder: the row it supersedes is not asked about again.
// language=sql
const LATER_MERGE: &str =
    "select 1 from request l where l.target = r.target and l.kind = 'template'
                           and l.state = 'merged' and l.request_id > d.request_id";

impl Db {
    /// Merged template requests with no deployment row yet, oldest first.
    #[tracing::instrument(name = "db.merged_unfollowed", skip_all)]
    pub async fn merged_unfollowed(&self, limit: i64) -> Result<Vec<Unfollowed>, DbError> {
        // language=sql
        let sql = "select r.request_id, r.pr_number, r.target
                   from request r left join resource_deployment d on d.request_id = r.request_id
                   where r.kind = 'template' and r.state = 'merged' and d.request_id is null
                   order by r.request_id limit $1";
        Ok(on_db!(self, |pool| sqlx::query_as(sql)
            .bind(limit)
            .fetch_all(pool)
            .await?))
    }

    /// Starts following a merged request's deployment: state `merged`, due at once. A row
    /// that exists is left as it is.
    #[tracing::instrument(name = "db.start_deployment", skip_all)]
    pub async fn start_deployment(
        &self,
        request_id: i64,
        merge_commit: &str,
        at: DateTime<Utc>,
    ) -> Result<(), DbError> {
        // language=sql
        let sql = "insert into resource_deployment
                       (request_id, state, merge_commit, failures, next_check_ms, created_at,
                        updated_at)
                   values ($1, 'merged', $2, 0, $3, $4, $4)
                   on conflict (request_id) do nothing";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(request_id)
                .bind(merge_commit)
                .bind(at.timestamp_millis())
                .bind(at)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Deployments due at `now_ms`, the longest waiting first.
    #[tracing::instrument(name = "db.due_deployments", skip_all)]
    pub async fn due_deployments(
        &self,
        now_ms: i64,
        limit: i64,
    ) -> Result<Vec<DeploymentRecord>, DbError> {
        let sql = format!(
            "{SELECT} where d.next_check_ms <= $1 and not exists ({LATER_MERGE})
             order by d.next_check_ms, d.request_id limit $2"
        );
        let rows: Vec<DeploymentRow> = on_db!(self, |pool| sqlx::query_as(&sql)
            .bind(now_ms)
            .bind(limit)
            .fetch_all(pool)
            .await?);
        rows.into_iter().map(DeploymentRecord::try_from).collect()
    }

    /// Every deployment row (one per merged request), or those of the folder `target`.
    #[tracing::instrument(name = "db.deployments", skip_all)]
    pub async fn deployments(
        &self,
        target: Option<&str>,
    ) -> Result<Vec<DeploymentRecord>, DbError> {
        let sql = format!("{SELECT} where ($1 is null or r.target = $1) order by d.request_id");
        let rows: Vec<DeploymentRow> = on_db!(self, |pool| sqlx::query_as(&sql)
            .bind(target)
            .fetch_all(pool)
            .await?);
        rows.into_iter().map(DeploymentRecord::try_from).collect()
    }

    /// Records an answer of Argo CD about `current`: its state, Application, revision and
    /// message, the error cleared, next check at `next_ms`. When the state changes (and only
    /// if nobody changed it meanwhile), the step goes on the request's timeline in the same
    /// transaction. Returns whether the state changed.
    #[tracing::instrument(name = "db.record_deployment", skip_all)]
    pub async fn record_deployment(
        &self,
        current: &DeploymentRecord,
        seen: &Observed<'_>,
        at: DateTime<Utc>,
        next_ms: i64,
    ) -> Result<bool, DbError> {
        let changed = on_db!(self, |pool| {
            let mut tx = pool.begin().await?;
            // language=sql
            let sql = "update resource_deployment
                       set state = $1, application = $2, revision = $3, message = $4,
                           last_error = null, failures = 0, checked_at = $5,
                           next_check_ms = $6, updated_at = $5
                       where request_id = $7 and state = $8";
            let done = sqlx::query(sql)
                .bind(seen.state.as_str())
                .bind(seen.application)
                .bind(seen.revision)
                .bind(seen.message)
                .bind(at)
                .bind(next_ms)
                .bind(current.request_id)
                .bind(current.state.as_str())
                .execute(&mut *tx)
                .await?
                .rows_affected();
            let changed = done == 1 && seen.state != current.state;
            if changed {
                // language=sql
                let sql = "insert into request_transition
                               (request_id, from_state, to_state, at, actor, comment, deployment)
                           values ($1, 'merged', 'merged', $2, $3, $4, $5)";
                sqlx::query(sql)
                    .bind(current.request_id)
                    .bind(at)
                    .bind(ARGOCD_ACTOR)
                    .bind(seen.message)
                    .bind(seen.state.as_str())
                    .execute(&mut *tx)
                    .await?;
                let notice = match seen.state {
                    ResourceState::Live => Some(NoticeKind::Live),
                    ResourceState::Degraded => Some(NoticeKind::Degraded),
                    _ => None,
                };
                if let Some(kind) = notice {
                    let detail = seen.message.filter(|_| kind == NoticeKind::Degraded);
                    enqueue_notice!(
                        tx,
                        self.outbox_rules(),
                        kind,
                        current.request_id,
                        at,
                        ARGOCD_ACTOR,
                        detail
                    );
                }
            }
            tx.commit().await?;
            if changed {
                self.outbox_rules().wake();
            }
            changed
        });
        Ok(changed)
    }

    /// Records that Argo CD could not tell about a deployment: the error, one more failure in
    /// a row, next check at `next_ms`. The state stays the last one Argo CD gave.
    #[tracing::instrument(name = "db.deployment_error", skip_all)]
    pub async fn deployment_error(
        &self,
        request_id: i64,
        error: &str,
        failures: i64,
        at: DateTime<Utc>,
        next_ms: i64,
    ) -> Result<(), DbError> {
        // language=sql
        let sql = "update resource_deployment
                   set last_error = $1, failures = $2, checked_at = $3, next_check_ms = $4,
                       updated_at = $3
                   where request_id = $5";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(error)
                .bind(failures)
                .bind(at)
                .bind(next_ms)
                .bind(request_id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use mirante_domain::monorepo::FileChange;
    use mirante_domain::request::RequestEvent;
    use secrecy::SecretString;

    use super::*;
    use crate::adapters::db::requests::{Author, Change, NewRequest};

    /// A database with one merged template request; its id.
    async fn merged_request() -> (Db, i64) {
        let db = Db::connect(&SecretString::from("sqlite::memory:"), 1)
            .await
            .unwrap();
        db.migrate().await.unwrap();
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
        let author = Author {
            user_id,
            username: "rui".into(),
            name: "Rui Researcher".into(),
            email: None,
        };
        let files = [FileChange {
            path: "ws/nlp/namespace.yaml".into(),
            content: "kind: Namespace\n".into(),
        }];
        let r = db
            .insert_request(&NewRequest {
                template: "gpu-workspace",
                template_title: "GPU workspace",
                values: &serde_json::json!({}),
                files: &files,
                target: "ws/nlp",
                slug: "nlp",
                author: &author,
                needs_approval: false,
                at: Utc::now(),
                idempotency: None,
            })
            .await
            .unwrap();
        let system = Change {
            actor: "system",
            pull_request: Some((1, "http://portal.test/requests/1")),
            ..Change::default()
        };
        for event in [
            RequestEvent::StartProposing,
            RequestEvent::Propose,
            RequestEvent::Merge,
        ] {
            db.transition_request(r.id, event, &system, Utc::now())
                .await
                .unwrap();
        }
        (db, r.id)
    }

    #[tokio::test]
    async fn a_merged_request_is_followed_once_and_each_step_is_written_once() {
        let (db, id) = merged_request().await;
        assert_eq!(db.merged_unfollowed(10).await.unwrap()[0].request_id, id);
        let now = Utc::now();
        db.start_deployment(id, "abc", now).await.unwrap();
        db.start_deployment(id, "other", now).await.unwrap();
        assert!(db.merged_unfollowed(10).await.unwrap().is_empty());
        let due = db
            .due_deployments(now.timestamp_millis(), 10)
            .await
            .unwrap();
        assert_eq!(
            (due.len(), due[0].merge_commit.as_str(), due[0].state),
            (1, "abc", ResourceState::Merged)
        );

        // Two replicas read the row in the same state and both saw it syncing.
        let seen = Observed {
            state: ResourceState::Syncing,
            application: Some("ws-nlp"),
            revision: Some("old"),
            message: Some("OutOfSync"),
        };
        let first = db.record_deployment(&due[0], &seen, now, 0).await.unwrap();
        let second = db.record_deployment(&due[0], &seen, now, 0).await.unwrap();

        assert!(
            first && !second,
            "the second writer's compare-and-set misses"
        );
        let steps: Vec<_> = db
            .transitions(id)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|t| t.deployment.map(|d| (d, t.actor, t.comment)))
            .collect();
        assert_eq!(
            steps,
            [(
                ResourceState::Syncing,
                ARGOCD_ACTOR.to_owned(),
                Some("OutOfSync".to_owned())
            )]
        );

        // An error keeps the state and counts; the next answer clears it.
        db.deployment_error(id, "cannot reach Argo CD", 1, now, 5)
            .await
            .unwrap();
        let failed = db.deployments(Some("ws/nlp")).await.unwrap().remove(0);
        assert_eq!(
            (failed.state, failed.failures, failed.last_error.as_deref()),
            (ResourceState::Syncing, 1, Some("cannot reach Argo CD"))
        );
        let live = Observed {
            state: ResourceState::Live,
            revision: Some("abc"),
            message: None,
            ..seen
        };
        assert!(db.record_deployment(&failed, &live, now, 0).await.unwrap());
        let after = db.deployments(None).await.unwrap().remove(0);
        assert_eq!(
            (after.state, after.failures, after.last_error),
            (ResourceState::Live, 0, None)
        );
    }
}
