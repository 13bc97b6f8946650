//! The notification outbox (`notification`): the messages a request's step calls for are
//! queued in the step's own transaction, one row per recipient and channel
//! ([`enqueue_notice!`], used by `record_step!` in [`super::requests`] and by
//! [`super::deployments`]); the delivery loop (`app::notify`) claims due rows with a lease,
//! marks each sent, hands it back with a backoff, or gives it up with its last error. Each
//! person's language and e-mail choice live on `app_user`.

use chrono::{DateTime, Utc};
use mirante_domain::notification::{Audience, Channel, DeliveryState, NoticeKind};
use serde::{Deserialize, Serialize};
use sqlx::types::Json;

use crate::adapters::db::{Db, DbError, Pool};

/// Who is told what: the channels that are on, who the admins are and where the portal is.
/// The default turns every channel off, so nothing is queued.
#[derive(Debug, Clone, Default)]
pub struct OutboxRules {
    /// Whether e-mail is configured (`MIRANTE_SMTP_URL`).
    pub email: bool,
    /// Whether the webhook is configured (`MIRANTE_NOTIFY_WEBHOOK_URL`).
    pub webhook: bool,
    /// Provider groups whose members are admins (`access::role_for`).
    pub admin_groups: Vec<String>,
    /// The portal's address, for links back to requests.
    pub public_url: String,
    /// Woken after a transaction that may have queued messages commits, so the delivery
    /// loop of this process looks at once.
    pub queued: std::sync::Arc<tokio::sync::Notify>,
}

impl OutboxRules {
    /// Whether any channel is on, so that steps queue messages at all.
    pub(crate) fn active(&self) -> bool {
        self.email || self.webhook
    }

    /// Tells this process's delivery loop to look at the outbox (after a commit).
    pub(crate) fn wake(&self) {
        if self.active() {
            self.queued.notify_one();
        }
    }
}

/// What a message says, stored with the row (the webhook's `event` object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// The notice (`approved`, `rejected`, …).
    pub kind: NoticeKind,
    /// The request it is about.
    pub request_id: i64,
    /// The request's title (its template's).
    pub title: String,
    /// The monorepo folder it asks for.
    pub target: String,
    /// The request's state after the step.
    pub state: String,
    /// The request's page.
    pub url: String,
    /// Who made the step: a username, `system` or `argocd`.
    pub actor: String,
    /// The requester's display name.
    pub requester: String,
    /// The admin's comment (rejections, approvals with one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The pull request, once there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request_url: Option<String>,
    /// Why it failed, or what Argo CD says about a degraded resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The request's fields a notice is made from, read inside the step's transaction.
#[derive(sqlx::FromRow)]
pub(crate) struct NoticeSource {
    template_title: String,
    target: String,
    state: String,
    author_user_id: i64,
    author_name: String,
    pr_url: Option<String>,
    decision_comment: Option<String>,
    last_error: Option<String>,
}

/// A possible recipient, read inside the step's transaction.
#[derive(sqlx::FromRow)]
pub(crate) struct Person {
    app_user_id: i64,
    email: Option<String>,
    language: Option<String>,
    email_notifications: bool,
    groups: Json<Vec<String>>,
}

/// The rows one notice becomes.
pub(crate) struct Planned {
    pub(crate) channel: Channel,
    pub(crate) user_id: Option<i64>,
    pub(crate) recipient: Option<String>,
    pub(crate) language: Option<String>,
}

/// The request's row, read for a notice.
pub(crate) const NOTICE_SOURCE: &str = "select template_title, target, state, author_user_id,
    author_name, pr_url, decision_comment, last_error from request where request_id = $1";

/// Everyone, for a notice to the admins (who is one is decided in Rust by
/// `access::role_for`, in [`OutboxRules::plan`]).
pub(crate) const PEOPLE: &str = "select app_user_id, email, language, email_notifications,
    groups from app_user order by app_user_id";

/// The requester alone, for a notice to them.
pub(crate) const PERSON: &str = "select app_user_id, email, language, email_notifications,
    groups from app_user where app_user_id = $1";

/// One outbox row.
pub(crate) const INSERT: &str = "insert into notification
    (kind, request_id, channel, recipient_user_id, recipient, language, payload, state,
     run_after_ms, attempts, created_at)
    values ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, 0, $9)";

impl NoticeSource {
    /// The requester's user.
    pub(crate) fn requester(&self) -> i64 {
        self.author_user_id
    }
}

impl OutboxRules {
    /// The notice of `kind` about a request as `source` has it.
    pub(crate) fn notice(
        &self,
        kind: NoticeKind,
        request_id: i64,
        source: &NoticeSource,
        actor: &str,
        detail: Option<&str>,
    ) -> Notice {
        Notice {
            kind,
            request_id,
            title: source.template_title.clone(),
            target: source.target.clone(),
            state: source.state.clone(),
            url: format!(
                "{}/requests/{request_id}",
                self.public_url.trim_end_matches('/')
            ),
            actor: actor.to_owned(),
            requester: source.author_name.clone(),
            comment: source
                .decision_comment
                .clone()
                .filter(|_| matches!(kind, NoticeKind::Approved | NoticeKind::Rejected)),
            pull_request_url: source.pr_url.clone(),
            detail: detail.map(str::to_owned).or_else(|| {
                source
                    .last_error
                    .clone()
                    .filter(|_| kind == NoticeKind::Failed)
            }),
        }
    }

    /// The rows a notice becomes: an e-mail to each person of its audience who has an address
    /// and wants e-mail, and one webhook call.
    pub(crate) fn plan(
        &self,
        kind: NoticeKind,
        source: &NoticeSource,
        people: Vec<Person>,
    ) -> Vec<Planned> {
        let mut rows = Vec::new();
        if self.email {
            for person in people {
                let addressed = match kind.audience() {
                    Audience::Requester => person.app_user_id == source.author_user_id,
                    Audience::Admins => {
                        mirante_domain::access::role_for(&person.groups.0, &self.admin_groups)
                            == mirante_domain::Role::Admin
                    }
                };
                let Some(address) = person.email.filter(|e| !e.trim().is_empty()) else {
                    continue;
                };
                if addressed && person.email_notifications {
                    rows.push(Planned {
                        channel: Channel::Email,
                        user_id: Some(person.app_user_id),
                        recipient: Some(address),
                        language: person.language,
                    });
                }
            }
        }
        if self.webhook {
            rows.push(Planned {
                channel: Channel::Webhook,
                user_id: None,
                recipient: None,
                language: None,
            });
        }
        rows
    }
}

/// Queues, in transaction `$tx`, the messages of notice `$kind` about request `$id`, after a
/// step made by `$actor` at `$at` (`$detail`: what Argo CD said, for deployment notices):
/// one row per recipient and channel the outbox rules `$rules` call for.
macro_rules! enqueue_notice {
    ($tx:ident, $rules:expr, $kind:expr, $id:expr, $at:expr, $actor:expr, $detail:expr) => {{
        let rules: &$crate::adapters::db::notifications::OutboxRules = $rules;
        if rules.active() {
            let kind: mirante_domain::notification::NoticeKind = $kind;
            let id: i64 = $id;
            let at: chrono::DateTime<chrono::Utc> = $at;
            let source: $crate::adapters::db::notifications::NoticeSource =
                sqlx::query_as($crate::adapters::db::notifications::NOTICE_SOURCE)
                    .bind(id)
                    .fetch_one(&mut *$tx)
                    .await?;
            let people: Vec<$crate::adapters::db::notifications::Person> = if !rules.email {
                Vec::new()
            } else if kind.audience() == mirante_domain::notification::Audience::Admins {
                sqlx::query_as($crate::adapters::db::notifications::PEOPLE)
                    .fetch_all(&mut *$tx)
                    .await?
            } else {
                sqlx::query_as($crate::adapters::db::notifications::PERSON)
                    .bind(source.requester())
                    .fetch_all(&mut *$tx)
                    .await?
            };
            let notice = rules.notice(kind, id, &source, $actor, $detail);
            for row in rules.plan(kind, &source, people) {
                sqlx::query($crate::adapters::db::notifications::INSERT)
                    .bind(kind.as_str())
                    .bind(id)
                    .bind(row.channel.as_str())
                    .bind(row.user_id)
                    .bind(row.recipient)
                    .bind(row.language)
                    .bind(sqlx::types::Json(&notice))
                    .bind(at.timestamp_millis())
                    .bind(at)
                    .execute(&mut *$tx)
                    .await?;
            }
        }
    }};
}

/// A row of the outbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotificationRecord {
    /// Key.
    pub id: i64,
    /// The notice.
    pub kind: String,
    /// The request it is about.
    pub request_id: Option<i64>,
    /// E-mail or webhook.
    pub channel: Channel,
    /// The recipient's user, for e-mail.
    pub recipient_user_id: Option<i64>,
    /// The e-mail address, for e-mail.
    pub recipient: Option<String>,
    /// The recipient's language (BCP 47); `None`: the portal's default.
    pub language: Option<String>,
    /// What the message says.
    pub notice: Notice,
    /// Pending, sent or failed.
    pub state: DeliveryState,
    /// Not before this time (Unix ms).
    pub run_after_ms: i64,
    /// Claims so far, this one included.
    pub attempts: i64,
    /// The last error.
    pub last_error: Option<String>,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// When it was sent.
    pub sent_at: Option<DateTime<Utc>>,
}

#[derive(sqlx::FromRow)]
struct NotificationRow {
    notification_id: i64,
    kind: String,
    request_id: Option<i64>,
    channel: String,
    recipient_user_id: Option<i64>,
    recipient: Option<String>,
    language: Option<String>,
    payload: Json<Notice>,
    state: String,
    run_after_ms: i64,
    attempts: i64,
    last_error: Option<String>,
    created_at: DateTime<Utc>,
    sent_at: Option<DateTime<Utc>>,
}

fn decode(what: &str, value: &str) -> DbError {
    DbError::Sqlx(sqlx::Error::Decode(
        format!("unknown notification {what} `{value}`").into(),
    ))
}

impl TryFrom<NotificationRow> for NotificationRecord {
    type Error = DbError;

    fn try_from(r: NotificationRow) -> Result<Self, DbError> {
        Ok(NotificationRecord {
            id: r.notification_id,
            channel: Channel::parse(&r.channel).ok_or_else(|| decode("channel", &r.channel))?,
            state: DeliveryState::parse(&r.state).ok_or_else(|| decode("state", &r.state))?,
            kind: r.kind,
            request_id: r.request_id,
            recipient_user_id: r.recipient_user_id,
            recipient: r.recipient,
            language: r.language,
            notice: r.payload.0,
            run_after_ms: r.run_after_ms,
            attempts: r.attempts,
            last_error: r.last_error,
            created_at: r.created_at,
            sent_at: r.sent_at,
        })
    }
}

const COLUMNS: &str = "notification_id, kind, request_id, channel, recipient_user_id, recipient,
    language, payload, state, run_after_ms, attempts, last_error, created_at, sent_at";

/// A person's choices for the messages the portal sends them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotificationPrefs {
    /// Whether they receive e-mail.
    pub email: bool,
    /// The language of the UI they last used (BCP 47).
    pub language: Option<String>,
}

impl Db {
    /// The rules steps queue notifications by.
    pub(crate) fn outbox_rules(&self) -> &OutboxRules {
        &self.outbox
    }

    /// Claims the next due pending message for `owner` until `now + lease`: one that is due
    /// and not held by a live lease. Two loops never hold the same row (SQLite serialises
    /// writers; PostgreSQL skips rows another transaction has locked).
    #[tracing::instrument(name = "db.claim_notification", skip_all)]
    pub async fn claim_notification(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<Option<NotificationRecord>, DbError> {
        let lock = match &self.pool {
            Pool::Sqlite(_) => "",
            Pool::Postgres(_) => "for update skip locked",
        };
        let sql = format!(
            "update notification
             set lease_owner = $1, lease_until_ms = $2, attempts = attempts + 1
             where notification_id = (
                 select notification_id from notification
                 where state = 'pending' and run_after_ms <= $3
                   and (lease_until_ms is null or lease_until_ms < $3)
                 order by run_after_ms, notification_id limit 1
                 {lock})
             returning {COLUMNS}"
        );
        let row: Option<NotificationRow> = on_db!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(owner)
                .bind(now_ms + lease_ms)
                .bind(now_ms)
                .fetch_optional(pool)
                .await?
        });
        row.map(NotificationRecord::try_from).transpose()
    }

    /// Marks a message `owner` holds as sent. Returns whether it still held it.
    #[tracing::instrument(name = "db.notification_sent", skip_all)]
    pub async fn notification_sent(
        &self,
        id: i64,
        owner: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, DbError> {
        // language=sql
        let sql = "update notification set state = 'sent', sent_at = $1, last_error = null,
                       lease_owner = null, lease_until_ms = null
                   where notification_id = $2 and lease_owner = $3 and state = 'pending'";
        let n = on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(at)
                .bind(id)
                .bind(owner)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    /// Hands a message back to be tried again at `run_after_ms`, keeping the error.
    #[tracing::instrument(name = "db.notification_retry", skip_all)]
    pub async fn notification_retry(
        &self,
        id: i64,
        owner: &str,
        run_after_ms: i64,
        error: &str,
    ) -> Result<bool, DbError> {
        // language=sql
        let sql = "update notification set run_after_ms = $1, last_error = $4,
                       lease_owner = null, lease_until_ms = null
                   where notification_id = $2 and lease_owner = $3 and state = 'pending'";
        let n = on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(run_after_ms)
                .bind(id)
                .bind(owner)
                .bind(error)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    /// Gives a message up for good with its last error.
    #[tracing::instrument(name = "db.notification_failed", skip_all)]
    pub async fn notification_failed(
        &self,
        id: i64,
        owner: &str,
        error: &str,
    ) -> Result<bool, DbError> {
        // language=sql
        let sql = "update notification set state = 'failed', last_error = $1,
                       lease_owner = null, lease_until_ms = null
                   where notification_id = $2 and lease_owner = $3 and state = 'pending'";
        let n = on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(error)
                .bind(id)
                .bind(owner)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    /// Releases every pending message `owner` holds, so it is due at once: the loop calls it
    /// when it starts, since a lease under its identity belongs to an earlier run that is
    /// gone. Returns how many it released.
    #[tracing::instrument(name = "db.release_notification_leases_of", skip_all)]
    pub async fn release_notification_leases_of(&self, owner: &str) -> Result<u64, DbError> {
        // language=sql
        let sql = "update notification set lease_owner = null, lease_until_ms = null
                   where lease_owner = $1 and state = 'pending'";
        Ok(on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(owner)
                .execute(pool)
                .await?
                .rows_affected()
        }))
    }

    /// The earliest time a pending message is due (Unix ms), so an idle loop knows how long
    /// it may sleep.
    #[tracing::instrument(name = "db.next_notification_due", skip_all)]
    pub async fn next_notification_due(&self) -> Result<Option<i64>, DbError> {
        // language=sql
        let sql =
            "select min(case when lease_until_ms is not null and lease_until_ms > run_after_ms
                             then lease_until_ms else run_after_ms end)
             from notification where state = 'pending'";
        Ok(on_db!(self, |pool| {
            sqlx::query_scalar::<_, Option<i64>>(sql)
                .fetch_one(pool)
                .await?
        }))
    }

    /// Messages newest first, those in `state` only when given.
    #[tracing::instrument(name = "db.notifications", skip_all)]
    pub async fn notifications(
        &self,
        state: Option<DeliveryState>,
        limit: i64,
    ) -> Result<Vec<NotificationRecord>, DbError> {
        let sql = format!(
            "select {COLUMNS} from notification where ($1 is null or state = $1)
             order by notification_id desc limit $2"
        );
        let rows: Vec<NotificationRow> = on_db!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(state.map(DeliveryState::as_str))
                .bind(limit)
                .fetch_all(pool)
                .await?
        });
        rows.into_iter().map(NotificationRecord::try_from).collect()
    }

    /// How many messages are in `state`.
    #[tracing::instrument(name = "db.count_notifications", skip_all)]
    pub async fn count_notifications(&self, state: DeliveryState) -> Result<i64, DbError> {
        // language=sql
        let sql = "select count(*) from notification where state = $1";
        Ok(on_db!(self, |pool| {
            sqlx::query_scalar(sql)
                .bind(state.as_str())
                .fetch_one(pool)
                .await?
        }))
    }

    /// A person's choices for the messages they receive.
    #[tracing::instrument(name = "db.notification_prefs", skip_all)]
    pub async fn notification_prefs(
        &self,
        user_id: i64,
    ) -> Result<Option<NotificationPrefs>, DbError> {
        // language=sql
        let sql = "select email_notifications, language from app_user where app_user_id = $1";
        let row: Option<(bool, Option<String>)> = on_db!(self, |pool| {
            sqlx::query_as(sql)
                .bind(user_id)
                .fetch_optional(pool)
                .await?
        });
        Ok(row.map(|(email, language)| NotificationPrefs { email, language }))
    }

    /// Turns a person's e-mail on or off.
    #[tracing::instrument(name = "db.set_email_notifications", skip_all)]
    pub async fn set_email_notifications(&self, user_id: i64, on: bool) -> Result<(), DbError> {
        // language=sql
        let sql = "update app_user set email_notifications = $1 where app_user_id = $2";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(on)
                .bind(user_id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Records the language a person last chose in the UI.
    #[tracing::instrument(name = "db.set_user_language", skip_all)]
    pub async fn set_user_language(&self, user_id: i64, tag: &str) -> Result<(), DbError> {
        // language=sql
        let sql = "update app_user set language = $1
                   where app_user_id = $2 and (language is null or language <> $1)";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(tag)
                .bind(user_id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }
}

impl Db {
    /// Records that the expiry sweep did `threshold_days`' step for `resource` and its expiry
    /// date `expires`, and queues `notice` (kind, the request it names, its detail) in the
    /// same transaction; answers `false`, queueing nothing, when that step was recorded
    /// before.
    #[tracing::instrument(name = "db.expiry_step_once", skip_all)]
    pub async fn expiry_step_once(
        &self,
        resource: i64,
        expires: &str,
        threshold_days: i64,
        at: DateTime<Utc>,
        notice: Option<(NoticeKind, i64, &str)>,
    ) -> Result<bool, DbError> {
        let rules = self.outbox_rules();
        let inserted = on_db!(self, |pool| {
            let mut tx = pool.begin().await?;
            // language=sql
            let sql = "insert into expiry_notice (resource_id, expires, threshold_days, at)
                       values ($1, $2, $3, $4) on conflict do nothing";
            let n = sqlx::query(sql)
                .bind(resource)
                .bind(expires)
                .bind(threshold_days)
                .bind(at)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if n == 1
                && let Some((kind, request, detail)) = notice
            {
                // Queued for now whatever `at` the sweep's clock says: delivery runs on real
                // time.
                enqueue_notice!(tx, rules, kind, request, Utc::now(), "system", Some(detail));
            }
            tx.commit().await?;
            n == 1
        });
        if inserted {
            rules.wake();
        }
        Ok(inserted)
    }
}

impl Db {
    /// Records that `resource`'s owner is told of its template's `version`, and queues the
    /// notice (naming request `resource`, with `detail`) in the same transaction; answers
    /// `false`, queueing nothing, when they were told of that version before.
    #[tracing::instrument(name = "db.update_notice_once", skip_all)]
    pub async fn update_notice_once(
        &self,
        resource: i64,
        version: &str,
        at: DateTime<Utc>,
        detail: &str,
    ) -> Result<bool, DbError> {
        let rules = self.outbox_rules();
        let inserted = on_db!(self, |pool| {
            let mut tx = pool.begin().await?;
            // language=sql
            let sql = "insert into update_notice (resource_id, version, at)
                       values ($1, $2, $3) on conflict do nothing";
            let n = sqlx::query(sql)
                .bind(resource)
                .bind(version)
                .bind(at)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if n == 1 {
                enqueue_notice!(
                    tx,
                    rules,
                    NoticeKind::UpdateAvailable,
                    resource,
                    Utc::now(),
                    "system",
                    Some(detail)
                );
            }
            tx.commit().await?;
            n == 1
        });
        if inserted {
            rules.wake();
        }
        Ok(inserted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> NoticeSource {
        NoticeSource {
            template_title: "GPU workspace".to_owned(),
            target: "workspaces/rui-nlp".to_owned(),
            state: "awaiting_approval".to_owned(),
            author_user_id: 3,
            author_name: "Rui Researcher".to_owned(),
            pr_url: None,
            decision_comment: None,
            last_error: None,
        }
    }

    fn person(id: i64, email: Option<&str>, wants: bool, groups: &[&str]) -> Person {
        Person {
            app_user_id: id,
            email: email.map(str::to_owned),
            language: None,
            email_notifications: wants,
            groups: Json(groups.iter().map(|g| (*g).to_owned()).collect()),
        }
    }

    fn people() -> Vec<Person> {
        vec![
            person(1, Some("ada@example.org"), true, &["portal-admins"]),
            person(2, Some("bea@example.org"), false, &["portal-admins"]),
            person(3, Some("rui@example.org"), true, &["researchers"]),
            person(4, None, true, &["portal-admins"]),
            person(5, Some("cid@example.org"), true, &["infra", "ops-admins"]),
        ]
    }

    fn rules(email: bool, webhook: bool) -> OutboxRules {
        OutboxRules {
            email,
            webhook,
            admin_groups: vec!["portal-admins".to_owned(), "ops-admins".to_owned()],
            public_url: "https://portal.test/".to_owned(),
            ..OutboxRules::default()
        }
    }

    fn planned(rows: &[Planned]) -> Vec<(Channel, Option<&str>)> {
        rows.iter()
            .map(|r| (r.channel, r.recipient.as_deref()))
            .collect()
    }

    #[test]
    fn a_wait_for_approval_goes_to_every_admin_with_an_address_who_wants_email() {
        let rows = rules(true, true).plan(NoticeKind::AwaitsApproval, &source(), people());

        assert_eq!(
            planned(&rows),
            [
                (Channel::Email, Some("ada@example.org")),
                (Channel::Email, Some("cid@example.org")),
                (Channel::Webhook, None),
            ]
        );
    }

    #[test]
    fn a_decision_goes_to_the_requester_alone_and_nothing_goes_out_with_every_channel_off() {
        let rows = rules(true, false).plan(NoticeKind::Rejected, &source(), people());
        assert_eq!(planned(&rows), [(Channel::Email, Some("rui@example.org"))]);

        let off = rules(false, false);
        assert!(!off.active());
        assert!(
            off.plan(NoticeKind::Rejected, &source(), people())
                .is_empty()
        );
    }

    #[test]
    fn a_notice_links_the_request_and_carries_the_comment_only_for_decisions() {
        let mut decided = source();
        decided.decision_comment = Some("fine".to_owned());
        let rules = rules(true, false);

        let approved = rules.notice(NoticeKind::Approved, 7, &decided, "ada", None);
        let merged = rules.notice(NoticeKind::Merged, 7, &decided, "ada", None);

        assert_eq!(approved.url, "https://portal.test/requests/7");
        assert_eq!(approved.comment.as_deref(), Some("fine"));
        assert_eq!(merged.comment, None);
    }
}
