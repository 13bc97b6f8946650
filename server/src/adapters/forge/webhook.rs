//! Forge webhooks at the HTTP edge: the headers of the request and the configured forge are
//! handed to [`mirante_domain::webhook`], which checks the signature before anything in the
//! body is read and says what the event means for a pull request.

use axum::http::HeaderMap;
use mirante_domain::webhook::{self, Headers, Sender, WebhookRefusal};
use secrecy::{ExposeSecret, SecretString};

use super::{ForgeKind, WebhookError, WebhookEvent};

/// A request's header map as the domain reads headers.
struct HttpHeaders<'a>(&'a HeaderMap);

impl Headers for HttpHeaders<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Checks that `body` was sent by the forge that knows `secret`, then reads what it says
/// about a pull request. `Ok(None)`: a genuine event that is not about a pull request's state
/// (a push, a ping, a label change). An empty secret accepts nothing.
pub fn verify_and_parse(
    kind: ForgeKind,
    headers: &HeaderMap,
    body: &[u8],
    secret: &SecretString,
) -> Result<Option<WebhookEvent>, WebhookError> {
    let sender = match kind {
        ForgeKind::Github => Sender::Github,
        ForgeKind::Gitlab => Sender::Gitlab,
        ForgeKind::Gitea => Sender::Gitea,
        // The local forge has no webhooks; nothing could have signed this.
        ForgeKind::Local => return Err(WebhookError::BadSignature),
    };
    let change = webhook::verify_and_parse(
        sender,
        &HttpHeaders(headers),
        body,
        secret.expose_secret().as_bytes(),
    )
    .map_err(|refusal| match refusal {
        WebhookRefusal::BadSignature => WebhookError::BadSignature,
        WebhookRefusal::Malformed(why) => WebhookError::Malformed(why),
    })?;
    Ok(change.map(|c| WebhookEvent {
        forge: kind,
        number: c.number,
        branch: c.branch,
        state: c.state,
    }))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use hmac::{Hmac, Mac};
    use sha2::Sha256;

    use super::*;
    use crate::adapters::forge::PullRequestState;

    type HmacSha256 = Hmac<Sha256>;

    fn secret() -> SecretString {
        SecretString::from("webhook-secret")
    }

    fn sign(body: &[u8]) -> String {
        let mut mac = HmacSha256::new_from_slice(b"webhook-secret").unwrap();
        mac.update(body);
        hex::encode(mac.finalize().into_bytes())
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    const GITEA_MERGED: &str = r#"{"action":"closed","number":7,"pull_request":{"number":7,"merged":true,"state":"closed","head":{"ref":"mirante/1-db"}}}"#;

    #[test]
    fn a_gitea_merge_signed_with_the_secret_is_a_merged_event() {
        let body = GITEA_MERGED.as_bytes();
        let h = headers(&[
            ("x-gitea-event", "pull_request"),
            ("x-gitea-signature", &sign(body)),
        ]);
        let event = verify_and_parse(ForgeKind::Gitea, &h, body, &secret()).unwrap();
        assert_eq!(
            event,
            Some(WebhookEvent {
                forge: ForgeKind::Gitea,
                number: 7,
                branch: "mirante/1-db".into(),
                state: PullRequestState::Merged
            })
        );
    }

    #[test]
    fn forgejo_headers_are_accepted_like_giteas() {
        let body = GITEA_MERGED.as_bytes();
        let h = headers(&[
            ("x-forgejo-event", "pull_request"),
            ("x-forgejo-signature", &sign(body)),
        ]);
        let event = verify_and_parse(ForgeKind::Gitea, &h, body, &secret()).unwrap();
        assert_eq!(event.map(|e| e.state), Some(PullRequestState::Merged));
    }

    #[test]
    fn a_gitea_body_changed_after_signing_is_refused() {
        let h = headers(&[
            ("x-gitea-event", "pull_request"),
            ("x-gitea-signature", &sign(GITEA_MERGED.as_bytes())),
        ]);
        let tampered = GITEA_MERGED.replace("\"number\":7", "\"number\":8");
        assert!(matches!(
            verify_and_parse(ForgeKind::Gitea, &h, tampered.as_bytes(), &secret()),
            Err(WebhookError::BadSignature)
        ));
    }

    #[test]
    fn a_garbage_body_is_refused_for_its_signature_before_it_is_parsed() {
        let h = headers(&[
            ("x-gitea-event", "pull_request"),
            ("x-gitea-signature", "zz"),
        ]);
        assert!(matches!(
            verify_and_parse(ForgeKind::Gitea, &h, b"not json", &secret()),
            Err(WebhookError::BadSignature)
        ));
        let h = headers(&[
            ("x-gitea-event", "pull_request"),
            ("x-gitea-signature", &sign(b"not json")),
        ]);
        assert!(matches!(
            verify_and_parse(ForgeKind::Gitea, &h, b"not json", &secret()),
            Err(WebhookError::Malformed(_))
        ));
    }

    #[test]
    fn an_empty_secret_accepts_nothing() {
        let body = GITEA_MERGED.as_bytes();
        let mut mac = HmacSha256::new_from_slice(b"").unwrap();
        mac.update(body);
        let h = headers(&[
            ("x-gitea-event", "pull_request"),
            (
                "x-gitea-signature",
                &hex::encode(mac.finalize().into_bytes()),
            ),
        ]);
        assert!(matches!(
            verify_and_parse(ForgeKind::Gitea, &h, body, &SecretString::from("")),
            Err(WebhookError::BadSignature)
        ));
    }

    const GITLAB_MERGE: &str = r#"{"object_kind":"merge_request","event_type":"merge_request","object_attributes":{"iid":3,"source_branch":"mirante/2-gpu","target_branch":"main","state":"merged","action":"merge"}}"#;

    #[test]
    fn a_gitlab_merge_with_the_right_token_is_a_merged_event() {
        let h = headers(&[
            ("x-gitlab-event", "Merge Request Hook"),
            ("x-gitlab-token", "webhook-secret"),
        ]);
        let event = verify_and_parse(ForgeKind::Gitlab, &h, GITLAB_MERGE.as_bytes(), &secret())
            .unwrap()
            .unwrap();
        assert_eq!(event.number, 3);
        assert_eq!(event.branch, "mirante/2-gpu");
        assert_eq!(event.state, PullRequestState::Merged);
    }

    #[test]
    fn a_gitlab_hook_with_a_wrong_or_missing_token_is_refused() {
        for h in [
            headers(&[
                ("x-gitlab-event", "Merge Request Hook"),
                ("x-gitlab-token", "webhook-secreT"),
            ]),
            headers(&[("x-gitlab-event", "Merge Request Hook")]),
        ] {
            assert!(matches!(
                verify_and_parse(ForgeKind::Gitlab, &h, GITLAB_MERGE.as_bytes(), &secret()),
                Err(WebhookError::BadSignature)
            ));
        }
    }

    #[test]
    fn gitlab_closing_reopening_and_updating_map_to_states_or_nothing() {
        let h = headers(&[
            ("x-gitlab-event", "Merge Request Hook"),
            ("x-gitlab-token", "webhook-secret"),
        ]);
        let with = |action: &str, state: &str| {
            let body = GITLAB_MERGE
                .replace("\"merge\"", &format!("\"{action}\""))
                .replace("\"merged\"", &format!("\"{state}\""));
            verify_and_parse(ForgeKind::Gitlab, &h, body.as_bytes(), &secret())
                .unwrap()
                .map(|e| e.state)
        };
        assert_eq!(with("close", "closed"), Some(PullRequestState::Closed));
        assert_eq!(with("reopen", "opened"), Some(PullRequestState::Open));
        assert_eq!(with("update", "opened"), None);
        let push = headers(&[
            ("x-gitlab-event", "Push Hook"),
            ("x-gitlab-token", "webhook-secret"),
        ]);
        assert_eq!(
            verify_and_parse(
                ForgeKind::Gitlab,
                &push,
                b"{\"object_kind\":\"push\"}",
                &secret()
            )
            .unwrap(),
            None
        );
    }
}
