//! Delivering the notification outbox: a loop on every replica claims due messages with a
//! lease (its stable worker identity, as the proposing worker), renders each e-mail in its
//! recipient's language from the askama templates in `templates/notify/` and sends it over
//! SMTP, or POSTs a notice to the webhook; then marks the row sent, hands it back with the
//! worker's backoff, or gives it up after `MIRANTE_NOTIFY_MAX_ATTEMPTS` with its last error.
//!
//! A message is sent at most once per claim that succeeds, and the row is marked sent right
//! after the server accepted it. A process killed between the two sends it again after its
//! restart; each e-mail carries a `Message-ID` made from the row, so receivers can drop the
//! second copy (ADR 0022).

use std::{sync::Arc, time::Duration};

use askama::Template;
use chrono::Utc;
use mirante_domain::notification::{Channel, NoticeKind};
use mirante_frontend::i18n::{self, Lang};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::{
    adapters::{
        db::{
            Db, DbError,
            notifications::{Notice, NotificationRecord},
        },
        mail::{MailError, Mailer, Outgoing},
        notify_webhook::WebhookClient,
    },
    config::Config,
};

/// How the delivery loop behaves; from the configuration.
#[derive(Debug, Clone)]
pub struct DeliverySettings {
    /// Who holds the leases: the worker identity, stable across restarts.
    pub owner: String,
    /// How long a claimed message is this loop's.
    pub lease: Duration,
    /// The first wait after an error, doubled after each further one.
    pub retry: Duration,
    /// The longest wait.
    pub retry_max: Duration,
    /// Attempts before a message is given up.
    pub max_attempts: i64,
}

impl DeliverySettings {
    /// The settings in `config`.
    pub fn from_config(config: &Config) -> Self {
        let retry = Duration::from_secs(config.worker_retry_secs.max(1));
        DeliverySettings {
            owner: config.worker_id(),
            lease: Duration::from_secs(config.worker_lease_secs.max(1)),
            retry,
            retry_max: Duration::from_secs(config.worker_retry_max_secs).max(retry),
            max_attempts: i64::from(config.notify_max_attempts.max(1)),
        }
    }

    /// The wait before attempt `attempts + 1`: `retry · 2^(attempts-1)`, at most `retry_max`.
    pub fn backoff(&self, attempts: i64) -> Duration {
        let exponent = u32::try_from(attempts.saturating_sub(1).clamp(0, 30)).unwrap_or(30);
        self.retry
            .saturating_mul(2u32.saturating_pow(exponent))
            .min(self.retry_max)
    }

    /// How long one send may take: well within the lease, so that a message is never sent
    /// by two loops because the first one's lease ran out while it was still sending.
    fn send_timeout(&self) -> Duration {
        (self.lease / 2).max(Duration::from_secs(1))
    }
}

/// The delivery loop: the outbox, the channels configured, and its settings.
pub struct Deliverer {
    db: Db,
    mailer: Option<Mailer>,
    webhook: Option<WebhookClient>,
    settings: DeliverySettings,
    public_url: String,
    wake: Arc<Notify>,
}

impl std::fmt::Debug for Deliverer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deliverer")
            .field("owner", &self.settings.owner)
            .field("email", &self.mailer.is_some())
            .field("webhook", &self.webhook.is_some())
            .finish_non_exhaustive()
    }
}

impl Deliverer {
    /// The loop of `config`'s channels, or `None` when neither e-mail nor a webhook is
    /// configured (then no message is queued either).
    pub fn from_config(db: Db, config: &Config) -> anyhow::Result<Option<Self>> {
        let db_wake = Arc::clone(&db.outbox_rules().queued);
        let settings = DeliverySettings::from_config(config);
        let mailer = match &config.smtp_url {
            Some(url) => Some(Mailer::new(
                url,
                config.smtp_username.as_deref(),
                config.smtp_password.as_ref(),
                config.mail_from.as_deref().unwrap_or(""),
                settings.send_timeout(),
            )?),
            None => None,
        };
        let webhook = match &config.notify_webhook_url {
            Some(url) => Some(WebhookClient::new(
                url.clone(),
                config.notify_webhook_secret.clone(),
                settings.send_timeout(),
            )?),
            None => None,
        };
        if mailer.is_none() && webhook.is_none() {
            return Ok(None);
        }
        Ok(Some(Deliverer {
            db,
            mailer,
            webhook,
            settings,
            public_url: config.public_url(),
            wake: Arc::clone(&db_wake),
        }))
    }

    /// Tells the loop a message was queued, so it need not wait for its next look.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Runs the loop until `stop` is cancelled.
    pub fn spawn(self: &Arc<Self>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        let deliverer = Arc::clone(self);
        tokio::spawn(async move { deliverer.run(stop).await })
    }

    async fn run(&self, stop: CancellationToken) {
        tracing::info!(worker.owner = %self.settings.owner, "notification delivery started");
        match self
            .db
            .release_notification_leases_of(&self.settings.owner)
            .await
        {
            Ok(0) => {}
            Ok(n) => {
                tracing::info!(messages = n, "took back the messages an earlier run left");
            }
            Err(error) => {
                tracing::warn!(%error, "cannot release the leases of an earlier run; they run out on their own");
            }
        }
        loop {
            if let Err(error) = self.run_due(&stop).await {
                tracing::warn!(%error, "cannot read the notification outbox");
            }
            let now = Utc::now().timestamp_millis();
            // Sleep until the next message is due, a wake-up, or at most a few seconds:
            // another replica, or a step of the worker, may have queued one.
            let wait = match self.db.next_notification_due().await {
                Ok(Some(due)) => Duration::from_millis(u64::try_from(due - now).unwrap_or(0)),
                _ => Duration::from_secs(5),
            }
            .clamp(Duration::from_millis(50), Duration::from_secs(5));
            tokio::select! {
                () = stop.cancelled() => break,
                () = self.wake.notified() => {}
                () = tokio::time::sleep(wait) => {}
            }
        }
        tracing::info!("notification delivery stopped");
    }

    /// Delivers every message due now; returns how many it took up.
    pub async fn run_due(&self, stop: &CancellationToken) -> Result<usize, DbError> {
        let lease = i64::try_from(self.settings.lease.as_millis()).unwrap_or(i64::MAX / 2);
        let mut done = 0;
        while !stop.is_cancelled()
            && let Some(message) = self
                .db
                .claim_notification(&self.settings.owner, Utc::now().timestamp_millis(), lease)
                .await?
        {
            self.deliver(message).await?;
            done += 1;
        }
        Ok(done)
    }

    #[tracing::instrument(
        name = "notify.deliver",
        skip_all,
        fields(notification.id = message.id, notification.channel = message.channel.as_str())
    )]
    async fn deliver(&self, message: NotificationRecord) -> Result<(), DbError> {
        let owner = &self.settings.owner;
        let channel = message.channel;
        let outcome = match channel {
            Channel::Email => self.send_email(&message).await,
            Channel::Webhook => self.post_webhook(&message).await,
        };
        match outcome {
            Ok(()) => {
                crate::metrics::notification(channel.as_str(), "sent");
                if !self
                    .db
                    .notification_sent(message.id, owner, Utc::now())
                    .await?
                {
                    tracing::warn!("the message's lease ran out while it was sent");
                }
            }
            Err((error, retryable))
                if retryable && message.attempts < self.settings.max_attempts =>
            {
                crate::metrics::notification(channel.as_str(), "retry");
                let wait = self.settings.backoff(message.attempts);
                tracing::warn!(
                    attempts = message.attempts,
                    retry.in_secs = wait.as_secs(),
                    %error,
                    "cannot deliver a notification; will try again"
                );
                let again = Utc::now().timestamp_millis()
                    + i64::try_from(wait.as_millis()).unwrap_or(i64::MAX / 2);
                self.db
                    .notification_retry(message.id, owner, again, &error)
                    .await?;
            }
            Err((error, _)) => {
                crate::metrics::notification(channel.as_str(), "failed");
                tracing::error!(attempts = message.attempts, %error, "a notification was given up");
                self.db
                    .notification_failed(message.id, owner, &error)
                    .await?;
            }
        }
        Ok(())
    }

    async fn send_email(&self, message: &NotificationRecord) -> Result<(), (String, bool)> {
        let Some(mailer) = &self.mailer else {
            return Err(("e-mail is not configured on this replica".to_owned(), true));
        };
        let Some(to) = &message.recipient else {
            return Err(("the message has no recipient".to_owned(), false));
        };
        let lang = message
            .language
            .as_deref()
            .and_then(Lang::from_tag)
            .unwrap_or_else(default_lang);
        let rendered = render_email(&message.notice, lang, &self.public_url)
            .map_err(|e| (format!("cannot render the message: {e}"), false))?;
        let outgoing = Outgoing {
            to: to.clone(),
            subject: rendered.subject,
            text: rendered.text,
            html: rendered.html,
            message_id: message_id(message, mailer.domain()),
            language: lang.tag(),
        };
        // lettre's timeout bounds each command; this bounds the whole conversation, so the
        // lease always outlives a send.
        match tokio::time::timeout(self.settings.send_timeout(), mailer.send(&outgoing)).await {
            Ok(sent) => sent.map_err(|e: MailError| {
                let retryable = e.is_retryable();
                (e.to_string(), retryable)
            }),
            Err(_) => Err((
                "the mail server did not finish within the time allowed".to_owned(),
                true,
            )),
        }
    }

    async fn post_webhook(&self, message: &NotificationRecord) -> Result<(), (String, bool)> {
        let Some(webhook) = &self.webhook else {
            return Err((
                "the webhook is not configured on this replica".to_owned(),
                true,
            ));
        };
        let body = webhook_body(&message.notice, message.id);
        webhook
            .post(body)
            .await
            .map_err(|e| (e.to_string(), e.retryable))
    }
}

/// The portal's language when a person has chosen none: the UI's, for a reader who sends
/// no preference.
fn default_lang() -> Lang {
    i18n::negotiate(None, None)
}

/// The `Message-ID` of an outbox row (without angle brackets): the same for every attempt at
/// it, different for every row and every database.
pub fn message_id(message: &NotificationRecord, domain: &str) -> String {
    format!(
        "mirante.notification.{}.{}@{domain}",
        message.id,
        message.created_at.timestamp_millis()
    )
}

/// An e-mail's subject and bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedEmail {
    /// The subject line.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// The HTML body.
    pub html: String,
}

/// The sentences of one e-mail, in its language; the templates lay them out.
struct Email<'a> {
    lang: &'static str,
    subject: String,
    headline: String,
    comment_label: String,
    comment: Option<&'a str>,
    pull_request_label: String,
    pull_request: Option<&'a str>,
    detail_label: String,
    detail: Option<&'a str>,
    open_label: String,
    url: &'a str,
    footer: String,
}

#[derive(Template)]
#[template(path = "notify/email.txt")]
struct TextBody<'a> {
    m: &'a Email<'a>,
}

#[derive(Template)]
#[template(path = "notify/email.html")]
struct HtmlBody<'a> {
    m: &'a Email<'a>,
}

/// Renders `notice` as an e-mail in `lang`.
pub fn render_email(
    notice: &Notice,
    lang: Lang,
    public_url: &str,
) -> Result<RenderedEmail, askama::Error> {
    let args = |extra: &[(&'static str, String)]| {
        let mut args: Vec<(&'static str, i18n::FluentValue<'static>)> = vec![
            ("id", notice.request_id.to_string().into()),
            ("title", notice.title.clone().into()),
            ("actor", notice.actor.clone().into()),
            ("requester", notice.requester.clone().into()),
            ("target", notice.target.clone().into()),
        ];
        args.extend(extra.iter().map(|(k, v)| (*k, v.clone().into())));
        args
    };
    let kind = notice.kind.as_str().replace('_', "-");
    let email = Email {
        lang: lang.tag(),
        subject: i18n::t_args(lang, &format!("notify-subject-{kind}"), &args(&[])),
        headline: i18n::t_args(lang, &format!("notify-headline-{kind}"), &args(&[])),
        comment_label: i18n::t(lang, "notify-comment"),
        comment: notice.comment.as_deref(),
        pull_request_label: i18n::t(lang, "notify-pull-request"),
        pull_request: notice
            .pull_request_url
            .as_deref()
            .filter(|_| notice.kind != NoticeKind::AwaitsApproval),
        detail_label: i18n::t(lang, "notify-detail"),
        detail: notice.detail.as_deref(),
        open_label: i18n::t(lang, "notify-open"),
        url: &notice.url,
        footer: i18n::t_args(
            lang,
            "notify-footer",
            &args(&[(
                "profile",
                format!("{}/profile", public_url.trim_end_matches('/')),
            )]),
        ),
    };
    Ok(RenderedEmail {
        text: TextBody { m: &email }.render()?,
        html: HtmlBody { m: &email }.render()?,
        subject: email.subject,
    })
}

/// The webhook's JSON: `text` for Mattermost and Slack, `event` for programs. Written in the
/// portal's default language.
pub fn webhook_body(notice: &Notice, id: i64) -> Vec<u8> {
    let lang = default_lang();
    let kind = notice.kind.as_str().replace('_', "-");
    let args: Vec<(&'static str, i18n::FluentValue<'static>)> = vec![
        ("id", notice.request_id.to_string().into()),
        ("title", notice.title.clone().into()),
        ("actor", notice.actor.clone().into()),
        ("requester", notice.requester.clone().into()),
        ("target", notice.target.clone().into()),
    ];
    let mut text = format!(
        "{} {}",
        i18n::t_args(lang, &format!("notify-headline-{kind}"), &args),
        notice.url
    );
    if let Some(comment) = &notice.comment {
        text.push_str(&format!("\n> {comment}"));
    }
    if let Some(detail) = &notice.detail {
        text.push_str(&format!("\n> {detail}"));
    }
    let body = serde_json::json!({
        "text": text,
        "event": {
            "id": id,
            "kind": notice.kind,
            "request_id": notice.request_id,
            "title": notice.title,
            "target": notice.target,
            "state": notice.state,
            "url": notice.url,
            "actor": notice.actor,
            "requester": notice.requester,
            "comment": notice.comment,
            "pull_request_url": notice.pull_request_url,
            "detail": notice.detail,
        }
    });
    serde_json::to_vec(&body).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice(kind: NoticeKind) -> Notice {
        Notice {
            kind,
            request_id: 7,
            title: "GPU workspace".to_owned(),
            target: "workspaces/rui-nlp".to_owned(),
            state: "rejected".to_owned(),
            url: "https://portal.test/requests/7".to_owned(),
            actor: "ada".to_owned(),
            requester: "Rui Researcher".to_owned(),
            comment: Some("no GPUs <left>".to_owned()),
            pull_request_url: None,
            detail: None,
        }
    }

    #[test]
    fn a_rejection_is_written_in_the_recipients_language_with_the_comment_escaped_in_html() {
        let en = render_email(
            &notice(NoticeKind::Rejected),
            Lang::En,
            "https://portal.test",
        )
        .unwrap();
        let pt = render_email(
            &notice(NoticeKind::Rejected),
            Lang::PtBr,
            "https://portal.test",
        )
        .unwrap();

        assert_eq!(en.subject, "[Mirante] Request #7 rejected: GPU workspace");
        assert!(
            en.text.contains("ada rejected your request #7"),
            "{}",
            en.text
        );
        assert!(en.text.contains("Comment: no GPUs <left>"), "{}", en.text);
        assert!(
            en.text.contains("https://portal.test/profile"),
            "{}",
            en.text
        );
        assert!(
            en.html.contains("no GPUs &#60;left&#62;") || en.html.contains("no GPUs &lt;left&gt;"),
            "{}",
            en.html
        );
        assert_eq!(pt.subject, "[Mirante] Pedido #7 recusado: GPU workspace");
        assert!(
            pt.text.contains("Comentário: no GPUs <left>"),
            "{}",
            pt.text
        );
        assert!(pt.html.contains(r#"<html lang="pt-BR">"#), "{}", pt.html);
    }

    #[test]
    fn every_notice_has_a_subject_and_a_headline_in_both_languages() {
        for kind in NoticeKind::ALL {
            for lang in Lang::ALL {
                let mail = render_email(&notice(kind), lang, "https://portal.test").unwrap();
                assert!(
                    mail.subject.contains("#7"),
                    "{kind:?} {lang:?}: {}",
                    mail.subject
                );
                assert!(
                    !mail.text.contains("notify-"),
                    "{kind:?} {lang:?}: {}",
                    mail.text
                );
            }
        }
    }

    #[test]
    fn the_webhook_body_carries_a_chat_text_and_the_structured_event() {
        let body: serde_json::Value =
            serde_json::from_slice(&webhook_body(&notice(NoticeKind::Rejected), 42)).unwrap();

        assert!(
            body["text"]
                .as_str()
                .unwrap()
                .contains("https://portal.test/requests/7"),
            "{body}"
        );
        assert_eq!(body["event"]["id"], 42);
        assert_eq!(body["event"]["kind"], "rejected");
        assert_eq!(body["event"]["comment"], "no GPUs <left>");
    }

    #[test]
    fn the_backoff_doubles_up_to_its_cap() {
        let settings = DeliverySettings {
            owner: "a".to_owned(),
            lease: Duration::from_secs(20),
            retry: Duration::from_secs(5),
            retry_max: Duration::from_secs(30),
            max_attempts: 10,
        };
        let waits: Vec<u64> = (1..=5).map(|a| settings.backoff(a).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 30, 30]);
        assert_eq!(settings.send_timeout(), Duration::from_secs(10));
    }
}
