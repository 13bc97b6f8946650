//! Requests and their timeline in the portal's database (SQLite or PostgreSQL); the proposing
//! outbox's rows are queued here, with the step that calls for them, and worked through
//! [`super::jobs`]; the local forge's pull requests are in [`super::local_pulls`].
//!
//! The statements use `$1`-style placeholders, which both drivers bind by number, and JSON
//! goes through [`sqlx::types::Json`] (text on SQLite, `jsonb` on PostgreSQL), so most
//! statements are written once and run on either pool by [`on_db!`]. A state change is a
//! compare-and-set (`… where state = <the state it was read in>`) written together with its
//! timeline row and, when it calls for work, its outbox row, in one transaction: a crash
//! leaves either all of it or none.

use chrono::{DateTime, Utc};
use mirante_domain::request::{self, Action, IllegalTransition, RequestEvent, RequestState};
use serde::Serialize;
use sqlx::types::Json;

use crate::adapters::db::{Backend, Db, DbError};
use std::collections::BTreeMap;

use mirante_domain::capacity::OverAsk;
use mirante_domain::monorepo::FileChange;
use mirante_domain::notification::NoticeKind;
use mirante_domain::resource::ResourceState;

/// Who made a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Author {
    /// Their row in `app_user`.
    pub user_id: i64,
    /// Login name.
    pub username: String,
    /// Display name.
    pub name: String,
    /// E-mail address.
    pub email: Option<String>,
}

/// What a request is: files from a template, or an admin's change of a catalog item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// Files rendered from a self-service template into a new directory of the monorepo.
    #[default]
    Template,
    /// One catalog item's state, qualifier and evidence changed in its catalog file.
    CatalogChange,
}

impl RequestKind {
    /// The value of the `request.kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::Template => "template",
            RequestKind::CatalogChange => "catalog_change",
        }
    }

    fn parse(s: &str) -> Result<Self, DbError> {
        match s {
            "template" => Ok(RequestKind::Template),
            "catalog_change" => Ok(RequestKind::CatalogChange),
            other => Err(DbError::Sqlx(sqlx::Error::Decode(
                format!("unknown request kind `{other}`").into(),
            ))),
        }
    }
}

/// A request to store.
#[derive(Debug, Clone)]
pub struct NewRequest<'a> {
    /// The template's id.
    pub template: &'a str,
    /// The template's title (English), kept for lists.
    pub template_title: &'a str,
    /// The form's values.
    pub values: &'a serde_json::Value,
    /// The rendered files.
    pub files: &'a [FileChange],
    /// The monorepo directory the files go to.
    pub target: &'a str,
    /// Short name for the branch.
    pub slug: &'a str,
    /// Who asks.
    pub author: &'a Author,
    /// Whether an admin must approve it first.
    pub needs_approval: bool,
    /// When.
    pub at: DateTime<Utc>,
    /// The client's name for this creation (`Idempotency-Key`), with a fingerprint of what it
    /// asked; `None`: every call makes a request.
    pub idempotency: Option<Idempotency<'a>>,
}

/// What a template request does to its resource: make it, or act on the one request
/// `resource` made (`removed` lists the files a removal deletes).
#[derive(Debug, Clone, Copy)]
pub struct Acting<'a> {
    /// Make, update, extend or remove.
    pub action: Action,
    /// The request that made the resource, for every action but `create`.
    pub resource: Option<i64>,
    /// The files the commit deletes.
    pub removed: &'a [String],
    /// The SHA-256 of each file it changes or deletes, as the base branch held it.
    pub base_files: &'a BTreeMap<String, String>,
    /// Who its creation is recorded as made by on the timeline, when not its author (`system`
    /// for the removal the expiry sweep opens on the owner's behalf).
    pub recorded_by: Option<&'a str>,
    /// The ended request (rejected, withdrawn, failed) this one makes again.
    pub resubmits: Option<i64>,
    /// The version of the template its files were rendered with.
    pub template_version: Option<&'a str>,
}

static NO_BASE_FILES: BTreeMap<String, String> = BTreeMap::new();

impl Acting<'_> {
    /// A request that makes its resource (and every catalog change).
    pub const CREATE: Acting<'static> = Acting {
        action: Action::Create,
        resource: None,
        removed: &[],
        base_files: &NO_BASE_FILES,
        recorded_by: None,
        resubmits: None,
        template_version: None,
    };
}

/// A client's `Idempotency-Key` for one creation and the fingerprint of what it asked.
#[derive(Debug, Clone, Copy)]
pub struct Idempotency<'a> {
    /// The key, as the client sent it.
    pub key: &'a str,
    /// A digest of the request's input: the same key with other input is refused.
    pub fingerprint: &'a str,
}

/// What [`Db::create_request`] did.
#[derive(Debug, Clone)]
pub struct Created {
    /// The request, as stored.
    pub request: RequestRecord,
    /// Whether it was stored earlier under the same idempotency key (nothing new was made).
    pub replayed: bool,
}

/// Why a request was not stored.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// An open request already asks for the same target directory.
    #[error("request #{} already asks for `{}` and is {}", .0.id, .0.target, .0.state)]
    TargetTaken(Box<RequestRecord>),
    /// The idempotency key was used before, for other input.
    #[error("the idempotency key was used for request #{0} with other values")]
    KeyReused(i64),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for CreateError {
    fn from(e: sqlx::Error) -> Self {
        CreateError::Db(e.into())
    }
}

/// A stored request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRecord {
    /// Key.
    pub id: i64,
    /// What it does to its resource (a catalog change: `create`).
    pub action: Action,
    /// The request that made the resource it acts on, for every action but `create`.
    pub resource: Option<i64>,
    /// The files it deletes (a removal).
    pub removed: Vec<String>,
    /// The SHA-256 of each file it changes or deletes, as the base branch held it when asked.
    pub base_files: BTreeMap<String, String>,
    /// The ended request it makes again, if it does.
    pub resubmits: Option<i64>,
    /// The version of the template its files were rendered with (`None` for catalog changes,
    /// removals and requests older than versions).
    pub template_version: Option<String>,
    /// A template request or a catalog change.
    pub kind: RequestKind,
    /// The template's id.
    pub template: String,
    /// The template's title when the request was made.
    pub template_title: String,
    /// The form's values.
    pub values: serde_json::Value,
    /// The rendered files, exactly as previewed.
    pub files: Vec<FileChange>,
    /// The monorepo directory the files go to.
    pub target: String,
    /// Short name in the branch.
    pub slug: String,
    /// Who asked.
    pub author: Author,
    /// Where it stands.
    pub state: RequestState,
    /// Whether the template asked for approval.
    pub needs_approval: bool,
    /// The admin who approved or rejected it.
    pub decided_by: Option<String>,
    /// When they did.
    pub decided_at: Option<DateTime<Utc>>,
    /// Their comment.
    pub decision_comment: Option<String>,
    /// Why the admin approved more GPUs than the cluster had free, if they did.
    pub overcommit_reason: Option<String>,
    /// `mirante/<id>-<slug>`.
    pub branch: String,
    /// The pull request's number, once open.
    pub pr_number: Option<i64>,
    /// Where people open the pull request.
    pub pr_url: Option<String>,
    /// The last thing that went wrong while proposing or following it.
    pub last_error: Option<String>,
    /// How many times the worker took it up.
    pub attempts: i64,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct RequestRow {
    request_id: i64,
    action: String,
    resource_id: Option<i64>,
    removed: Json<Vec<String>>,
    base_files: Json<BTreeMap<String, String>>,
    resubmits: Option<i64>,
    template_version: Option<String>,
    kind: String,
    template: String,
    template_title: String,
    values: Json<serde_json::Value>,
    files: Json<Vec<FileChange>>,
    target: String,
    slug: String,
    author_user_id: i64,
    author_username: String,
    author_name: String,
    author_email: Option<String>,
    state: String,
    needs_approval: bool,
    decided_by: Option<String>,
    decided_at: Option<DateTime<Utc>>,
    decision_comment: Option<String>,
    overcommit_reason: Option<String>,
    branch: Option<String>,
    pr_number: Option<i64>,
    pr_url: Option<String>,
    last_error: Option<String>,
    attempts: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<RequestRow> for RequestRecord {
    type Error = DbError;

    fn try_from(r: RequestRow) -> Result<Self, DbError> {
        let state = parse_state(&r.state)?;
        let branch = r
            .branch
            .unwrap_or_else(|| branch_name(r.request_id, &r.slug));
        Ok(RequestRecord {
            id: r.request_id,
            action: Action::parse(&r.action).ok_or_else(|| {
                DbError::Sqlx(sqlx::Error::Decode(
                    format!("unknown request action `{}`", r.action).into(),
                ))
            })?,
            resource: r.resource_id,
            removed: r.removed.0,
            base_files: r.base_files.0,
            resubmits: r.resubmits,
            template_version: r.template_version,
            kind: RequestKind::parse(&r.kind)?,
            template: r.template,
            template_title: r.template_title,
            values: r.values.0,
            files: r.files.0,
            target: r.target,
            slug: r.slug,
            author: Author {
                user_id: r.author_user_id,
                username: r.author_username,
                name: r.author_name,
                email: r.author_email,
            },
            state,
            needs_approval: r.needs_approval,
            decided_by: r.decided_by,
            decided_at: r.decided_at,
            decision_comment: r.decision_comment,
            overcommit_reason: r.overcommit_reason,
            branch,
            pr_number: r.pr_number,
            pr_url: r.pr_url,
            last_error: r.last_error,
            attempts: r.attempts,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

fn parse_state(s: &str) -> Result<RequestState, DbError> {
    RequestState::parse(s).ok_or_else(|| {
        DbError::Sqlx(sqlx::Error::Decode(
            format!("unknown request state `{s}`").into(),
        ))
    })
}

/// The branch a request is proposed on: `mirante/<id>-<slug>`.
pub fn branch_name(id: i64, slug: &str) -> String {
    format!("mirante/{id}-{slug}")
}

/// One step of a request's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TransitionRecord {
    /// The state before; `None` for the creation.
    pub from: Option<RequestState>,
    /// The state after.
    pub to: RequestState,
    /// When.
    pub at: DateTime<Utc>,
    /// A username, or `system`.
    pub actor: String,
    /// The admin's comment, for approvals and rejections.
    pub comment: Option<String>,
    /// Why an approval overcommitted the cluster's GPUs, if it did.
    pub overcommit_reason: Option<String>,
    /// For a step of the deployment after the merge (the request stays merged): the state the
    /// resource reached.
    pub deployment: Option<ResourceState>,
}

#[derive(sqlx::FromRow)]
struct TransitionRow {
    from_state: Option<String>,
    to_state: String,
    at: DateTime<Utc>,
    actor: String,
    comment: Option<String>,
    overcommit_reason: Option<String>,
    deployment: Option<String>,
}

/// What else a state change writes.
#[derive(Debug, Clone, Default)]
pub struct Change<'a> {
    /// A username, or `system`.
    pub actor: &'a str,
    /// A comment for the timeline (and, for decisions, the request).
    pub comment: Option<&'a str>,
    /// The pull request, for [`RequestEvent::Propose`] (and merges found on resume).
    pub pull_request: Option<(i64, &'a str)>,
    /// The error, for [`RequestEvent::Fail`]. Any other state change clears the request's last
    /// error in the same write: it described the state being left (a retried attempt's "trying
    /// again"), and a reader must never see the new state next to it.
    pub error: Option<&'a str>,
    /// For [`RequestEvent::Approve`]: why the admin approves beyond the cluster's free GPUs.
    pub overcommit_reason: Option<&'a str>,
}

/// The capacity check an approval makes inside its transaction: the lock taken first (one
/// per GPU cluster), then `check` over every request still holding or awaiting GPUs, read
/// under that lock.
pub struct CapacityGuard<'a> {
    /// What serialises approvals: the cluster's id.
    pub lock: &'a str,
    /// Refuses with the numbers when the request does not fit.
    pub check: &'a (dyn Fn(&[RequestRecord]) -> Result<(), OverAsk> + Send + Sync),
}

/// Why a state change was not made.
#[derive(Debug, thiserror::Error)]
pub enum TransitionError {
    /// There is no such request.
    #[error("no request {0}")]
    NotFound(i64),
    /// The event cannot happen in the request's state.
    #[error(transparent)]
    Illegal(#[from] IllegalTransition),
    /// The approval would hand out GPUs the cluster does not have free.
    #[error("{0}")]
    OverCapacity(OverAsk),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for TransitionError {
    fn from(e: sqlx::Error) -> Self {
        TransitionError::Db(e.into())
    }
}

const REQUEST_COLUMNS: &str = r#"request_id, action, resource_id, removed, base_files, resubmits, template_version, kind, template, template_title, "values", files, target,
    slug, author_user_id, author_username, author_name, author_email, state, needs_approval,
    decided_by, decided_at, decision_comment, overcommit_reason, branch, pr_number, pr_url, last_error, attempts,
    created_at, updated_at"#;

/// The `where` clause of requests holding, awaiting or (merged) naming what they asked for
/// (see `mirante_domain::capacity::Stage::of`).
const OPEN_CLAIMS: &str = "where kind = 'template' and state in ('submitted', 'awaiting_approval',
    'approved', 'proposing', 'proposed', 'merged') order by request_id";

/// Writes a step of a request's journey in transaction `$tx`: its timeline row, then each of
/// its effects (`mirante_domain::request::Effect`), so the two are never apart.
macro_rules! record_step {
    ($tx:ident, $rules:expr, $id:expr, $action:expr, $step:expr, $at:expr, $actor:expr, $comment:expr, $overcommit:expr) => {{
        let step: request::Step = $step;
        // language=sql
        let sql = "insert into request_transition
                       (request_id, from_state, to_state, at, actor, comment, overcommit_reason)
                   values ($1, $2, $3, $4, $5, $6, $7)";
        sqlx::query(sql)
            .bind($id)
            .bind(step.from.map(RequestState::as_str))
            .bind(step.to.as_str())
            .bind($at)
            .bind($actor)
            .bind($comment)
            .bind($overcommit)
            .execute(&mut *$tx)
            .await?;
        for effect in step.effects {
            match effect {
                request::Effect::QueueProposal => {
                    sqlx::query(ENQUEUE)
                        .bind($id)
                        .bind($at.timestamp_millis())
                        .bind($at)
                        .execute(&mut *$tx)
                        .await?;
                }
                request::Effect::Notify => {
                    if let Some(kind) = NoticeKind::of_step(&step) {
                        let action: Action = $action;
                        enqueue_notice!(
                            $tx,
                            $rules,
                            kind.for_action(action),
                            $id,
                            $at,
                            $actor,
                            None
                        );
                    }
                }
            }
        }
    }};
}

impl Db {
    /// Stores a submitted request with the steps `request::submission` gives it (timeline
    /// entries, and the proposing job unless it needs approval) — all in one transaction.
    /// Returns the request.
    #[tracing::instrument(name = "db.insert_request", skip_all)]
    pub async fn insert_request(&self, r: &NewRequest<'_>) -> Result<RequestRecord, CreateError> {
        Ok(self.create_request(RequestKind::Template, r).await?.request)
    }

    /// Stores a request of `kind`, unless its idempotency key names an earlier one (answered
    /// instead, or refused when it asked for something else) or an open request already
    /// targets the same folder or file (a second one would be proposed against files the first
    /// is about to change). The checks and the
    /// insert hold one lock (PostgreSQL: advisory locks on the key and the target; SQLite:
    /// the write lock from `BEGIN IMMEDIATE`), so two concurrent calls never both insert.
    #[tracing::instrument(name = "db.create_request", skip_all)]
    pub async fn create_request(
        &self,
        kind: RequestKind,
        r: &NewRequest<'_>,
    ) -> Result<Created, CreateError> {
        self.create_request_acting(kind, Acting::CREATE, r).await
    }

    /// [`Db::create_request`] for a request that does `acting` to its resource.
    #[tracing::instrument(name = "db.create_request_acting", skip_all)]
    pub async fn create_request_acting(
        &self,
        kind: RequestKind,
        acting: Acting<'_>,
        r: &NewRequest<'_>,
    ) -> Result<Created, CreateError> {
        let steps = request::submission(r.needs_approval);
        let state = steps.last().map_or(RequestState::Submitted, |step| step.to);
        let backend = self.backend();
        let open_for_target = format!(
            "select {REQUEST_COLUMNS} from request where target = $1
               and state in ('submitted', 'awaiting_approval', 'approved', 'proposing', 'proposed')
             order by request_id limit 1"
        );
        let id: i64 = on_db!(self, |pool| {
            let mut tx = match backend {
                Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await?,
                Backend::Postgres => pool.begin().await?,
            };
            if backend == Backend::Postgres {
                // language=sql
                let sql = "select pg_advisory_xact_lock(hashtextextended($1, 0))";
                if let Some(idem) = r.idempotency {
                    sqlx::query(sql)
                        .bind(format!(
                            "mirante.idempotency:{}:{}",
                            r.author.user_id, idem.key
                        ))
                        .execute(&mut *tx)
                        .await?;
                }
                {
                    sqlx::query(sql)
                        .bind(format!("mirante.request-target:{}", r.target))
                        .execute(&mut *tx)
                        .await?;
                }
            }
            if let Some(idem) = r.idempotency {
                // language=sql
                let sql = "select request_id, idempotency_fingerprint from request
                           where author_user_id = $1 and idempotency_key = $2";
                let earlier: Option<(i64, Option<String>)> = sqlx::query_as(sql)
                    .bind(r.author.user_id)
                    .bind(idem.key)
                    .fetch_optional(&mut *tx)
                    .await?;
                if let Some((id, fingerprint)) = earlier {
                    tx.rollback().await?;
                    if fingerprint.as_deref() != Some(idem.fingerprint) {
                        return Err(CreateError::KeyReused(id));
                    }
                    return self
                        .request(id)
                        .await?
                        .map(|request| Created {
                            request,
                            replayed: true,
                        })
                        .ok_or_else(|| CreateError::Db(DbError::Sqlx(sqlx::Error::RowNotFound)));
                }
            }
            {
                let open: Option<RequestRow> = sqlx::query_as(&open_for_target)
                    .bind(r.target)
                    .fetch_optional(&mut *tx)
                    .await?;
                if let Some(open) = open {
                    tx.rollback().await?;
                    return Err(CreateError::TargetTaken(Box::new(RequestRecord::try_from(
                        open,
                    )?)));
                }
            }
            // language=sql
            let sql = r#"insert into request (template, template_title, "values", files, target,
                             slug, author_user_id, author_username, author_name, author_email,
                             state, needs_approval, attempts, created_at, updated_at, kind,
                             idempotency_key, idempotency_fingerprint, action, resource_id,
                             removed, base_files, resubmits, template_version)
                         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0, $13, $13, $14,
                                 $15, $16, $17, $18, $19, $20, $21, $22)
                         returning request_id"#;
            let id: i64 = sqlx::query_scalar(sql)
                .bind(r.template)
                .bind(r.template_title)
                .bind(Json(r.values))
                .bind(Json(r.files))
                .bind(r.target)
                .bind(r.slug)
                .bind(r.author.user_id)
                .bind(&r.author.username)
                .bind(&r.author.name)
                .bind(&r.author.email)
                .bind(state.as_str())
                .bind(r.needs_approval)
                .bind(r.at)
                .bind(kind.as_str())
                .bind(r.idempotency.map(|i| i.key))
                .bind(r.idempotency.map(|i| i.fingerprint))
                .bind(acting.action.as_str())
                .bind(acting.resource)
                .bind(Json(acting.removed))
                .bind(Json(acting.base_files))
                .bind(acting.resubmits)
                .bind(acting.template_version)
                .fetch_one(&mut *tx)
                .await?;
            // language=sql
            let sql = "update request set branch = $1 where request_id = $2";
            sqlx::query(sql)
                .bind(branch_name(id, r.slug))
                .bind(id)
                .execute(&mut *tx)
                .await?;
            for step in steps.iter().copied() {
                record_step!(
                    tx,
                    self.outbox_rules(),
                    id,
                    acting.action,
                    step,
                    r.at,
                    acting.recorded_by.unwrap_or(&r.author.username),
                    None::<&str>,
                    None::<&str>
                );
            }
            tx.commit().await?;
            self.outbox_rules().wake();
            id
        });
        let request = self
            .request(id)
            .await?
            .ok_or_else(|| DbError::Sqlx(sqlx::Error::RowNotFound))?;
        Ok(Created {
            request,
            replayed: false,
        })
    }

    /// A request by id.
    #[tracing::instrument(name = "db.request", skip_all)]
    pub async fn request(&self, id: i64) -> Result<Option<RequestRecord>, DbError> {
        let sql = format!("select {REQUEST_COLUMNS} from request where request_id = $1");
        let row: Option<RequestRow> = on_db!(self, |pool| {
            sqlx::query_as(&sql).bind(id).fetch_optional(pool).await?
        });
        row.map(RequestRecord::try_from).transpose()
    }

    /// Requests newest first: everyone's, or those of `author` only.
    #[tracing::instrument(name = "db.list_requests", skip_all)]
    pub async fn list_requests(
        &self,
        author: Option<i64>,
        limit: i64,
    ) -> Result<Vec<RequestRecord>, DbError> {
        let sql = format!(
            "select {REQUEST_COLUMNS} from request
             where ($1 is null or author_user_id = $1)
             order by request_id desc limit $2"
        );
        let rows: Vec<RequestRow> = on_db!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(author)
                .bind(limit)
                .fetch_all(pool)
                .await?
        });
        rows.into_iter().map(RequestRecord::try_from).collect()
    }

    /// Claims up to `limit` proposed requests whose pull request is due to be read back
    /// (`pr_poll_due_ms` unset or at most `now_ms`), the longest due first, by moving each to
    /// `next_ms`; answers those this call claimed. A request another replica claimed between
    /// the look and the claim is skipped, so each is read once per interval across replicas.
    #[tracing::instrument(name = "db.claim_pr_polls", skip_all)]
    pub async fn claim_pr_polls(
        &self,
        now_ms: i64,
        next_ms: i64,
        limit: i64,
    ) -> Result<Vec<RequestRecord>, DbError> {
        let look = format!(
            "select {REQUEST_COLUMNS} from request
             where state = 'proposed' and pr_number is not null
               and coalesce(pr_poll_due_ms, 0) <= $1
             order by coalesce(pr_poll_due_ms, 0), request_id limit $2"
        );
        // language=sql
        let claim = "update request set pr_poll_due_ms = $1
                     where request_id = $2 and state = 'proposed'
                       and coalesce(pr_poll_due_ms, 0) <= $3";
        let rows: Vec<RequestRow> = on_db!(self, |pool| {
            sqlx::query_as(&look)
                .bind(now_ms)
                .bind(limit)
                .fetch_all(pool)
                .await?
        });
        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            let id = row.request_id;
            let n = on_db!(self, |pool| {
                sqlx::query(claim)
                    .bind(next_ms)
                    .bind(id)
                    .bind(now_ms)
                    .execute(pool)
                    .await?
                    .rows_affected()
            });
            if n == 1 {
                claimed.push(RequestRecord::try_from(row)?);
            }
        }
        Ok(claimed)
    }

    /// Hands a claimed turn back: the request's pull request is due again at `due_ms` (the
    /// forge could not be read, so the claim read nothing). Only while the claim `claimed_ms`
    /// is still the request's, so a turn taken since is not undone.
    #[tracing::instrument(name = "db.return_pr_poll", skip_all)]
    pub async fn return_pr_poll(
        &self,
        id: i64,
        claimed_ms: i64,
        due_ms: i64,
    ) -> Result<(), DbError> {
        // language=sql
        let sql = "update request set pr_poll_due_ms = $1
                   where request_id = $2 and pr_poll_due_ms = $3";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(due_ms)
                .bind(id)
                .bind(claimed_ms)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(())
    }

    /// How many requests are in `state`.
    #[tracing::instrument(name = "db.count_in_state", skip_all)]
    pub async fn count_in_state(&self, state: RequestState) -> Result<i64, DbError> {
        // language=sql
        let sql = "select count(*) from request where state = $1";
        Ok(on_db!(self, |pool| {
            sqlx::query_scalar(sql)
                .bind(state.as_str())
                .fetch_one(pool)
                .await?
        }))
    }

    /// Template requests that hold, await or name GPUs if their template asks for any: those
    /// not rejected, closed or failed, oldest first.
    #[tracing::instrument(name = "db.open_requests", skip_all)]
    pub async fn open_requests(&self) -> Result<Vec<RequestRecord>, DbError> {
        let sql = format!("select {REQUEST_COLUMNS} from request {OPEN_CLAIMS}");
        let rows: Vec<RequestRow> =
            on_db!(self, |pool| sqlx::query_as(&sql).fetch_all(pool).await?);
        rows.into_iter().map(RequestRecord::try_from).collect()
    }

    /// The latest request that makes request `id` again, if one does.
    #[tracing::instrument(name = "db.resubmission_of", skip_all)]
    pub async fn resubmission_of(&self, id: i64) -> Result<Option<i64>, DbError> {
        // language=sql
        let sql = "select request_id from request where resubmits = $1
                   order by request_id desc limit 1";
        Ok(on_db!(self, |pool| {
            sqlx::query_scalar(sql)
                .bind(id)
                .fetch_optional(pool)
                .await?
        }))
    }

    /// Requests of `kind`, oldest first: all of them, or those targeting `target` only (the
    /// resources are derived from these).
    #[tracing::instrument(name = "db.requests_of_kind", skip_all)]
    pub async fn requests_of_kind(
        &self,
        kind: RequestKind,
        target: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RequestRecord>, DbError> {
        let sql = format!(
            "select {REQUEST_COLUMNS} from request
             where kind = $1 and ($2 is null or target = $2)
             order by request_id limit $3"
        );
        let rows: Vec<RequestRow> = on_db!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(kind.as_str())
                .bind(target)
                .bind(limit)
                .fetch_all(pool)
                .await?
        });
        rows.into_iter().map(RequestRecord::try_from).collect()
    }

    /// The request proposed on `branch`, if any.
    #[tracing::instrument(name = "db.request_by_branch", skip_all)]
    pub async fn request_by_branch(&self, branch: &str) -> Result<Option<RequestRecord>, DbError> {
        let sql = format!("select {REQUEST_COLUMNS} from request where branch = $1");
        let row: Option<RequestRow> = on_db!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(branch)
                .fetch_optional(pool)
                .await?
        });
        row.map(RequestRecord::try_from).transpose()
    }

    /// A request's timeline, oldest first.
    #[tracing::instrument(name = "db.transitions", skip_all)]
    pub async fn transitions(&self, id: i64) -> Result<Vec<TransitionRecord>, DbError> {
        // language=sql
        let sql = "select from_state, to_state, at, actor, comment, overcommit_reason, deployment
                   from request_transition
                   where request_id = $1 order by request_transition_id";
        let rows: Vec<TransitionRow> = on_db!(self, |pool| sqlx::query_as(sql)
            .bind(id)
            .fetch_all(pool)
            .await?);
        rows.into_iter()
            .map(|r| {
                Ok(TransitionRecord {
                    from: r.from_state.as_deref().map(parse_state).transpose()?,
                    to: parse_state(&r.to_state)?,
                    at: r.at,
                    actor: r.actor,
                    comment: r.comment,
                    overcommit_reason: r.overcommit_reason,
                    deployment: r
                        .deployment
                        .as_deref()
                        .map(|d| {
                            ResourceState::parse(d).ok_or_else(|| {
                                DbError::Sqlx(sqlx::Error::Decode(
                                    format!("unknown deployment state `{d}`").into(),
                                ))
                            })
                        })
                        .transpose()?,
                })
            })
            .collect()
    }

    /// Applies `event` to a request: checks it against the state machine, then changes the
    /// state only if nobody changed it meanwhile, records the decision or pull-request fields,
    /// the timeline entry and the step's effects (`request::transition` says which: the
    /// proposing job on approval) — in one transaction. Returns the request as it now is.
    #[tracing::instrument(name = "db.transition_request", skip_all)]
    pub async fn transition_request(
        &self,
        id: i64,
        event: RequestEvent,
        change: &Change<'_>,
        at: DateTime<Utc>,
    ) -> Result<RequestRecord, TransitionError> {
        self.transition_request_guarded(id, event, change, at, None)
            .await
    }

    /// [`Db::transition_request`], with `guard`'s capacity check made in the same transaction
    /// after taking its lock: on PostgreSQL a transaction-scoped advisory lock on the cluster,
    /// on SQLite the database's write lock, taken when the transaction begins (`BEGIN
    /// IMMEDIATE`). Two approvals for the last GPU of a cluster are thus made one after the
    /// other, and the second sees the first.
    #[tracing::instrument(name = "db.transition_request_guarded", skip_all)]
    pub async fn transition_request_guarded(
        &self,
        id: i64,
        event: RequestEvent,
        change: &Change<'_>,
        at: DateTime<Utc>,
        guard: Option<&CapacityGuard<'_>>,
    ) -> Result<RequestRecord, TransitionError> {
        let backend = self.backend();
        let open_sql = format!("select {REQUEST_COLUMNS} from request {OPEN_CLAIMS}");
        // A concurrent change makes the compare-and-set miss; read again and re-decide (the
        // event may have become illegal, or already happened).
        for _ in 0..5 {
            let current = self
                .request(id)
                .await?
                .ok_or(TransitionError::NotFound(id))?;
            let step = request::transition(current.state, event)?;
            let to = step.to;
            let decision = matches!(event, RequestEvent::Approve | RequestEvent::Reject);
            let applied = on_db!(self, |pool| {
                let mut tx = match (guard, backend) {
                    (Some(_), Backend::Sqlite) => pool.begin_with("BEGIN IMMEDIATE").await?,
                    _ => pool.begin().await?,
                };
                if let Some(guard) = guard {
                    if backend == Backend::Postgres {
                        // language=sql
                        let sql = "select pg_advisory_xact_lock(hashtextextended($1, 0))";
                        sqlx::query(sql)
                            .bind(format!("mirante.gpu-capacity:{}", guard.lock))
                            .execute(&mut *tx)
                            .await?;
                    }
                    let rows: Vec<RequestRow> =
                        sqlx::query_as(&open_sql).fetch_all(&mut *tx).await?;
                    let open = rows
                        .into_iter()
                        .map(RequestRecord::try_from)
                        .collect::<Result<Vec<_>, _>>()?;
                    if let Err(refused) = (guard.check)(&open) {
                        tx.rollback().await?;
                        return Err(TransitionError::OverCapacity(refused));
                    }
                }
                // language=sql
                let sql = "update request set state = $1, updated_at = $2,
                               decided_by = case when $3 then $4 else decided_by end,
                               decided_at = case when $3 then $2 else decided_at end,
                               decision_comment = case when $3 then $5 else decision_comment end,
                               overcommit_reason = case when $3 then $11 else overcommit_reason end,
                               pr_number = coalesce($6, pr_number),
                               pr_url = coalesce($7, pr_url),
                               last_error = $8
                           where request_id = $9 and state = $10";
                let done = sqlx::query(sql)
                    .bind(to.as_str())
                    .bind(at)
                    .bind(decision)
                    .bind(change.actor)
                    .bind(change.comment)
                    .bind(change.pull_request.map(|p| p.0))
                    .bind(change.pull_request.map(|p| p.1))
                    .bind(change.error)
                    .bind(id)
                    .bind(current.state.as_str())
                    .bind(change.overcommit_reason)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                if done == 1 {
                    record_step!(
                        tx,
                        self.outbox_rules(),
                        id,
                        current.action,
                        step,
                        at,
                        change.actor,
                        change.comment,
                        change.overcommit_reason
                    );
                    tx.commit().await?;
                    self.outbox_rules().wake();
                    true
                } else {
                    tx.rollback().await?;
                    false
                }
            });
            if applied {
                return self.request(id).await?.ok_or(TransitionError::NotFound(id));
            }
        }
        let current = self
            .request(id)
            .await?
            .ok_or(TransitionError::NotFound(id))?;
        Err(TransitionError::Illegal(IllegalTransition {
            from: current.state,
            event,
        }))
    }

    /// Notes what went wrong on a request (shown on its page) without changing its state.
    #[tracing::instrument(name = "db.note_request_error", skip_all)]
    pub async fn note_request_error(
        &self,
        id: i64,
        error: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), DbError> {
        // language=sql
        let sql = "update request set last_error = $1, updated_at = $2 where request_id = $3";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(error)
                .bind(at)
                .bind(id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Records the pull request of a request that is still proposing (so a page shows it even
    /// if the worker stops before the state changes).
    #[tracing::instrument(name = "db.set_request_pull_request", skip_all)]
    pub async fn set_request_pull_request(
        &self,
        id: i64,
        number: i64,
        url: &str,
        at: DateTime<Utc>,
    ) -> Result<(), DbError> {
        // language=sql
        let sql = "update request set pr_number = $1, pr_url = $2, updated_at = $3
                   where request_id = $4";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(number)
                .bind(url)
                .bind(at)
                .bind(id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }
}

/// Queues the proposing job of a request; a request has at most one.
// language=sql
const ENQUEUE: &str =
    "insert into request_job (request_id, kind, run_after_ms, attempts, created_at)
                       values ($1, 'propose', $2, 0, $3)
                       on conflict (request_id, kind) do nothing";

#[cfg(test)]
mod tests {
    use secrecy::SecretString;

    use super::*;

    pub(crate) async fn memory_db() -> Db {
        let db = Db::connect(&SecretString::from("sqlite::memory:"), 1)
            .await
            .unwrap();
        db.migrate().await.unwrap();
        db
    }

    async fn author(db: &Db) -> Author {
        let user_id = db
            .upsert_user(&crate::adapters::db::NewUser {
                issuer: "dev",
                subject: "rui",
                username: "rui",
                name: "Rui Researcher",
                email: Some("rui@example.org"),
                groups: &[],
                at: Utc::now(),
            })
            .await
            .unwrap();
        Author {
            user_id,
            username: "rui".into(),
            name: "Rui Researcher".into(),
            email: Some("rui@example.org".into()),
        }
    }

    /// A request of template `t` with `files` into `x`, as `author` makes it at `at`.
    async fn plain_request(
        db: &Db,
        author: &Author,
        files: &[FileChange],
        needs_approval: bool,
        at: DateTime<Utc>,
    ) -> RequestRecord {
        db.insert_request(&NewRequest {
            template: "t",
            template_title: "T",
            values: &serde_json::json!({}),
            files,
            target: "x",
            slug: "x",
            author,
            needs_approval,
            at,
            idempotency: None,
        })
        .await
        .unwrap()
    }

    fn files() -> Vec<FileChange> {
        vec![FileChange {
            path: "workspaces/rui/namespace.yaml".into(),
            content: "kind: Namespace\n".into(),
        }]
    }

    #[tokio::test]
    async fn a_request_needing_approval_is_stored_awaiting_it_with_no_job() {
        let db = memory_db().await;
        let author = author(&db).await;
        let values = serde_json::json!({"gpus": 1});
        let files = files();

        let r = db
            .insert_request(&NewRequest {
                template: "gpu-workspace",
                template_title: "GPU workspace",
                values: &values,
                files: &files,
                target: "workspaces/rui",
                slug: "gpu-workspace-rui",
                author: &author,
                needs_approval: true,
                at: Utc::now(),
                idempotency: None,
            })
            .await
            .unwrap();

        assert_eq!(r.state, RequestState::AwaitingApproval);
        assert_eq!(r.branch, format!("mirante/{}-gpu-workspace-rui", r.id));
        assert_eq!(r.files, files);
        assert_eq!(r.values, values);
        let timeline = db.transitions(r.id).await.unwrap();
        assert_eq!(
            timeline.iter().map(|t| (t.from, t.to)).collect::<Vec<_>>(),
            [
                (None, RequestState::Submitted),
                (
                    Some(RequestState::Submitted),
                    RequestState::AwaitingApproval
                )
            ]
        );
        assert!(db.job_of_request(r.id).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn approving_queues_one_job_and_a_second_approval_is_refused() {
        let db = memory_db().await;
        let author = author(&db).await;
        let files = files();
        let r = plain_request(&db, &author, &files, true, Utc::now()).await;
        let change = Change {
            actor: "ada",
            comment: Some("fine"),
            ..Change::default()
        };

        let approved = db
            .transition_request(r.id, RequestEvent::Approve, &change, Utc::now())
            .await
            .unwrap();
        let again = db
            .transition_request(r.id, RequestEvent::Approve, &change, Utc::now())
            .await;

        assert_eq!(approved.state, RequestState::Approved);
        assert_eq!(approved.decided_by.as_deref(), Some("ada"));
        assert_eq!(approved.decision_comment.as_deref(), Some("fine"));
        assert!(matches!(again, Err(TransitionError::Illegal(_))));
        let job = db.job_of_request(r.id).await.unwrap().unwrap();
        assert!(job.done_at.is_none());
        let last = db.transitions(r.id).await.unwrap().pop().unwrap();
        assert_eq!(last.actor, "ada");
        assert_eq!(last.comment.as_deref(), Some("fine"));
    }

    #[tokio::test]
    async fn a_state_change_clears_the_error_of_the_state_it_leaves_and_a_failure_sets_its_own() {
        let db = memory_db().await;
        let author = author(&db).await;
        let files = files();
        let r = plain_request(&db, &author, &files, false, Utc::now()).await;
        let system = Change {
            actor: "system",
            ..Change::default()
        };
        db.transition_request(r.id, RequestEvent::StartProposing, &system, Utc::now())
            .await
            .unwrap();
        let retrying = "the forge is unavailable (attempt 1; trying again in 5s)";
        db.note_request_error(r.id, Some(retrying), Utc::now())
            .await
            .unwrap();
        let noted = db.request(r.id).await.unwrap().unwrap();
        assert_eq!(noted.last_error.as_deref(), Some(retrying));

        let proposed = db
            .transition_request(
                r.id,
                RequestEvent::Propose,
                &Change {
                    pull_request: Some((7, "https://forge.test/pr/7")),
                    ..system.clone()
                },
                Utc::now(),
            )
            .await
            .unwrap();
        assert_eq!(proposed.state, RequestState::Proposed);
        assert_eq!(
            proposed.last_error, None,
            "cleared by the transition itself"
        );

        let failed = db
            .transition_request(
                r.id,
                RequestEvent::Fail,
                &Change {
                    error: Some("the pull request is gone"),
                    ..system
                },
                Utc::now(),
            )
            .await
            .unwrap();
        assert_eq!(failed.state, RequestState::Failed);
        assert_eq!(
            failed.last_error.as_deref(),
            Some("the pull request is gone")
        );
    }

    #[tokio::test]
    async fn a_claimed_job_is_not_claimed_again_until_its_lease_runs_out() {
        let db = memory_db().await;
        let author = author(&db).await;
        let files = files();
        let now = Utc::now();
        let r = plain_request(&db, &author, &files, false, now).await;
        let t = now.timestamp_millis();

        let first = db.claim_job("a", t, 1000).await.unwrap().unwrap();
        let while_leased = db.claim_job("b", t + 500, 1000).await.unwrap();
        let after_lease = db.claim_job("b", t + 1500, 1000).await.unwrap().unwrap();

        assert_eq!(first.request_id, r.id);
        assert!(while_leased.is_none());
        assert_eq!(after_lease.request_job_id, first.request_job_id);
        assert_eq!(after_lease.attempts, 2);
        // The first holder lost the row: it can neither finish nor retry it.
        assert!(!db.finish_job(first.request_job_id, "a", now).await.unwrap());
        assert!(db.finish_job(first.request_job_id, "b", now).await.unwrap());
        assert!(db.claim_job("c", t + 10_000, 1000).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_job_handed_back_waits_for_its_time() {
        let db = memory_db().await;
        let author = author(&db).await;
        let files = files();
        let now = Utc::now();
        plain_request(&db, &author, &files, false, now).await;
        let t = now.timestamp_millis();
        let job = db.claim_job("a", t, 60_000).await.unwrap().unwrap();

        assert!(
            db.retry_job(job.request_job_id, "a", t + 5000, "down")
                .await
                .unwrap()
        );

        assert!(db.claim_job("a", t + 4000, 60_000).await.unwrap().is_none());
        assert_eq!(db.next_job_due().await.unwrap(), Some(t + 5000));
        assert!(db.claim_job("a", t + 5000, 60_000).await.unwrap().is_some());
    }
}
