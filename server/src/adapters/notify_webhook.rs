//! The outgoing notification webhook: one JSON POST per notice to an incoming webhook
//! (Mattermost, Slack: they read `text`), signed with `X-Mirante-Signature: sha256=<hex
//! HMAC-SHA256 of the body>` when a secret is set. No redirect is followed; errors name
//! neither the URL (such URLs carry a token) nor the secret.

use std::time::Duration;

use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;

/// The header carrying the body's signature.
pub const SIGNATURE_HEADER: &str = "x-mirante-signature";

/// Why a call failed; `retryable` unless the receiver refused it for good (4xx but 408/429).
#[derive(Debug, thiserror::Error)]
#[error("the webhook: {message}")]
pub(crate) struct WebhookError {
    pub(crate) message: String,
    pub(crate) retryable: bool,
}

/// The webhook of the configuration.
pub(crate) struct WebhookClient {
    client: reqwest::Client,
    url: SecretString,
    secret: Option<SecretString>,
}

impl std::fmt::Debug for WebhookClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookClient")
            .field("signed", &self.secret.is_some())
            .finish_non_exhaustive()
    }
}

/// `sha256=<hex HMAC-SHA256 of body under secret>`.
pub fn signature(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

impl WebhookClient {
    /// A client of `url`, signing with `secret` when set; each call gives up after `timeout`.
    pub(crate) fn new(
        url: SecretString,
        secret: Option<SecretString>,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .user_agent(concat!("mirante/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(WebhookClient {
            client,
            url,
            secret,
        })
    }

    /// POSTs `body` (JSON); done on a 2xx answer.
    pub(crate) async fn post(&self, body: Vec<u8>) -> Result<(), WebhookError> {
        let mut request = self
            .client
            .post(self.url.expose_secret())
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        if let Some(secret) = &self.secret {
            request = request.header(
                SIGNATURE_HEADER,
                signature(secret.expose_secret().as_bytes(), &body),
            );
        }
        match request.body(body).send().await {
            Ok(answer) if answer.status().is_success() => Ok(()),
            Ok(answer) => {
                let status = answer.status();
                Err(WebhookError {
                    message: format!("answered {status}"),
                    retryable: status.is_server_error()
                        || status == reqwest::StatusCode::REQUEST_TIMEOUT
                        || status == reqwest::StatusCode::TOO_MANY_REQUESTS,
                })
            }
            Err(error) => Err(WebhookError {
                message: error.without_url().to_string(),
                retryable: true,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_hex_hmac_sha256_of_the_body() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature(b"Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
