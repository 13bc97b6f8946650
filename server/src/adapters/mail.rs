//! E-mail over SMTP with `lettre` on tokio, TLS through rustls (as every other client of the
//! portal): `smtps://` (TLS from the first byte), `smtp://…?tls=required` (STARTTLS, refused
//! without it), `smtp://…?tls=opportunistic`, or plain `smtp://` for a relay on the same
//! host. Credentials come from the URL or from the separate settings; errors never carry
//! them. One connection per message, so a message is never half sent on a connection some
//! other message left in an unknown state.

use std::time::Duration;

use lettre::{
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor,
    message::{Mailbox, MultiPart, header},
    transport::smtp::authentication::Credentials,
};
use secrecy::{ExposeSecret, SecretString};

/// A message to send.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    /// The recipient's address.
    pub(crate) to: String,
    /// The subject line.
    pub(crate) subject: String,
    /// The plain-text body.
    pub(crate) text: String,
    /// The HTML body.
    pub(crate) html: String,
    /// `Message-ID`, without the angle brackets: stable for one outbox row, so a receiver can
    /// drop a second copy.
    pub(crate) message_id: String,
    /// The body's language (BCP 47), as `Content-Language`.
    pub(crate) language: &'static str,
}

/// Why a message was not sent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MailError {
    /// The message cannot be made (an address that does not parse): trying again changes
    /// nothing.
    #[error("the message cannot be made: {0}")]
    Message(String),
    /// The mail server answered or failed; `permanent` when it refused for good (5xx).
    #[error("the mail server: {message}")]
    Smtp {
        /// What went wrong, without credentials.
        message: String,
        /// Whether trying again is pointless.
        permanent: bool,
    },
}

impl MailError {
    /// Whether another attempt may succeed.
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            MailError::Message(_) => false,
            MailError::Smtp { permanent, .. } => !permanent,
        }
    }
}

/// The SMTP client of the configuration.
pub(crate) struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl Mailer {
    /// A client of the server at `url`, sending as `from`; `username` and `password`, when
    /// set, replace the URL's credentials. Each attempt gives up after `timeout`.
    pub(crate) fn new(
        url: &SecretString,
        username: Option<&str>,
        password: Option<&SecretString>,
        from: &str,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let from: Mailbox = from
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("MIRANTE_MAIL_FROM is not an address"))?;
        // The error of a malformed URL may quote it: say which setting, not what it holds.
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::from_url(url.expose_secret())
            .map_err(|_| anyhow::anyhow!("MIRANTE_SMTP_URL cannot be used"))?
            .timeout(Some(timeout));
        if let Some(user) = username.filter(|u| !u.is_empty()) {
            let password = password.map_or("", |p| p.expose_secret());
            builder = builder.credentials(Credentials::new(user.to_owned(), password.to_owned()));
        }
        Ok(Mailer {
            transport: builder.build(),
            from,
        })
    }

    /// The sender's domain, for `Message-ID`s.
    pub(crate) fn domain(&self) -> &str {
        self.from.email.domain()
    }

    /// Sends `mail`: done once the server accepted it (its answer to `DATA`).
    pub(crate) async fn send(&self, mail: &Outgoing) -> Result<(), MailError> {
        let to: Mailbox = mail
            .to
            .parse()
            .map_err(|_| MailError::Message(format!("`{}` is not an address", mail.to)))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .message_id(Some(format!("<{}>", mail.message_id)))
            .header(ContentLanguage(mail.language.to_owned()))
            .multipart(MultiPart::alternative_plain_html(
                mail.text.clone(),
                mail.html.clone(),
            ))
            .map_err(|e| MailError::Message(e.to_string()))?;
        self.transport
            .send(message)
            .await
            .map(drop)
            .map_err(|e| MailError::Smtp {
                permanent: e.is_permanent(),
                message: e.to_string(),
            })
    }
}

/// `Content-Language`, which lettre does not define.
#[derive(Debug, Clone)]
struct ContentLanguage(String);

impl header::Header for ContentLanguage {
    fn name() -> header::HeaderName {
        header::HeaderName::new_from_ascii_str("Content-Language")
    }

    fn parse(s: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(ContentLanguage(s.to_owned()))
    }

    fn display(&self) -> header::HeaderValue {
        header::HeaderValue::new(Self::name(), self.0.clone())
    }
}
