//! Forge webhooks: the signature is checked before anything in the body is read, then a
//! pull request event becomes a [`WebhookEvent`]; every other event is ignored.
//!
//! - GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, event in
//!   `X-GitHub-Event` (<https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries>).
//! - GitLab: `X-Gitlab-Token` carries the secret itself, event in `X-Gitlab-Event`
//!   (<https://docs.gitlab.com/user/project/integrations/webhooks/>).
//! - Gitea/Forgejo: `X-Gitea-Signature` or `X-Forgejo-Signature`: hex HMAC-SHA256 of the body,
//!   event in `X-Gitea-Event` or `X-Forgejo-Event`
//!   (<https://docs.gitea.com/usage/webhooks>, <https://forgejo.org/docs/latest/user/webhooks/>).

use axum::http::HeaderMap;
use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::{ForgeKind, PullRequestState, WebhookError, WebhookEvent};

type HmacSha256 = Hmac<Sha256>;

/// Checks that `body` was sent by the forge that knows `secret`, then reads what it says
/// about a pull request. `Ok(None)`: a genuine event that is not about a pull request's state
/// (a push, a ping, a label change). An empty secret accepts nothing.
pub fn verify_and_parse(
    kind: ForgeKind,
    headers: &HeaderMap,
    body: &[u8],
    secret: &SecretString,
) -> Result<Option<WebhookEvent>, WebhookError> {
    verify(kind, headers, body, secret)?;
    match kind {
        ForgeKind::Github => parse_github(headers, body),
        ForgeKind::Gitlab => parse_gitlab(headers, body),
        ForgeKind::Gitea => parse_gitea(headers, body),
        // The local forge has no webhooks; nothing could have signed this.
        ForgeKind::Local => Err(WebhookError::BadSignature),
    }
}

/// The signature check alone.
fn verify(
    kind: ForgeKind,
    headers: &HeaderMap,
    body: &[u8],
    secret: &SecretString,
) -> Result<(), WebhookError> {
    let secret = secret.expose_secret().as_bytes();
    if secret.is_empty() {
        return Err(WebhookError::BadSignature);
    }
    match kind {
        ForgeKind::Github => {
            let signature = header(headers, "x-hub-signature-256")
                .and_then(|v| v.strip_prefix("sha256="))
                .ok_or(WebhookError::BadSignature)?;
            verify_hmac(secret, body, signature)
        }
        ForgeKind::Gitea => {
            let signature = header(headers, "x-gitea-signature")
                .or_else(|| header(headers, "x-forgejo-signature"))
                .ok_or(WebhookError::BadSignature)?;
            verify_hmac(secret, body, signature)
        }
        ForgeKind::Gitlab => {
            let token = header(headers, "x-gitlab-token").ok_or(WebhookError::BadSignature)?;
            if bool::from(token.as_bytes().ct_eq(secret)) {
                Ok(())
            } else {
                Err(WebhookError::BadSignature)
            }
        }
        ForgeKind::Local => Err(WebhookError::BadSignature),
    }
}

/// Compares a hex HMAC-SHA256 in constant time (the `hmac` crate's `verify_slice`).
fn verify_hmac(secret: &[u8], body: &[u8], hex_signature: &str) -> Result<(), WebhookError> {
    let expected = hex::decode(hex_signature.trim()).map_err(|_| WebhookError::BadSignature)?;
    let mut mac = HmacSha256::new_from_slice(secret).map_err(|_| WebhookError::BadSignature)?;
    mac.update(body);
    mac.verify_slice(&expected)
        .map_err(|_| WebhookError::BadSignature)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn json<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, WebhookError> {
    serde_json::from_slice(body).map_err(|e| WebhookError::Malformed(e.to_string()))
}

/// The part of a GitHub or Gitea `pull_request` payload that matters here.
#[derive(Deserialize)]
struct PullRequestPayload {
    action: String,
    pull_request: PullRequestObject,
}

#[derive(Deserialize)]
struct PullRequestObject {
    number: u64,
    #[serde(default)]
    merged: Option<bool>,
    head: Head,
}

#[derive(Deserialize)]
struct Head {
    #[serde(rename = "ref")]
    name: String,
}

/// `opened`/`reopened` → open, `closed` → merged or closed; other actions (edits, labels,
/// new commits) do not change where a pull request stands.
fn pull_request_event(forge: ForgeKind, payload: PullRequestPayload) -> Option<WebhookEvent> {
    let state = match payload.action.as_str() {
        "opened" | "reopened" => PullRequestState::Open,
        "closed" if payload.pull_request.merged == Some(true) => PullRequestState::Merged,
        "closed" => PullRequestState::Closed,
        _ => return None,
    };
    Some(WebhookEvent {
        forge,
        number: payload.pull_request.number,
        branch: payload.pull_request.head.name,
        state,
    })
}

fn parse_github(headers: &HeaderMap, body: &[u8]) -> Result<Option<WebhookEvent>, WebhookError> {
    let event = header(headers, "x-github-event")
        .ok_or_else(|| WebhookError::Malformed("no X-GitHub-Event header".into()))?;
    if event != "pull_request" {
        return Ok(None);
    }
    Ok(pull_request_event(ForgeKind::Github, json(body)?))
}

fn parse_gitea(headers: &HeaderMap, body: &[u8]) -> Result<Option<WebhookEvent>, WebhookError> {
    let event = header(headers, "x-gitea-event")
        .or_else(|| header(headers, "x-forgejo-event"))
        .ok_or_else(|| WebhookError::Malformed("no X-Gitea-Event header".into()))?;
    if event != "pull_request" {
        return Ok(None);
    }
    Ok(pull_request_event(ForgeKind::Gitea, json(body)?))
}

/// The part of a GitLab merge request event that matters here.
#[derive(Deserialize)]
struct MergeRequestPayload {
    object_kind: String,
    #[serde(default)]
    object_attributes: Option<MergeRequestAttributes>,
}

#[derive(Deserialize)]
struct MergeRequestAttributes {
    iid: u64,
    source_branch: String,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    action: Option<String>,
}

fn parse_gitlab(headers: &HeaderMap, body: &[u8]) -> Result<Option<WebhookEvent>, WebhookError> {
    let event = header(headers, "x-gitlab-event")
        .ok_or_else(|| WebhookError::Malformed("no X-Gitlab-Event header".into()))?;
    // Group and system hooks send the same payload under their own event names.
    if !matches!(event, "Merge Request Hook" | "System Hook") {
        return Ok(None);
    }
    let payload: MergeRequestPayload = json(body)?;
    if payload.object_kind != "merge_request" {
        return Ok(None);
    }
    let attributes = payload
        .object_attributes
        .ok_or_else(|| WebhookError::Malformed("no object_attributes".into()))?;
    let state = match (attributes.action.as_deref(), attributes.state.as_deref()) {
        (Some("open" | "reopen"), _) => PullRequestState::Open,
        (Some("close"), _) => PullRequestState::Closed,
        (Some("merge"), _) => PullRequestState::Merged,
        // Updates, approvals and the like: not a change of state.
        (Some(_), _) => return Ok(None),
        (None, Some("opened")) => PullRequestState::Open,
        (None, Some("merged")) => PullRequestState::Merged,
        (None, Some("closed")) => PullRequestState::Closed,
        (None, _) => return Ok(None),
    };
    Ok(Some(WebhookEvent {
        forge: ForgeKind::Gitlab,
        number: attributes.iid,
        branch: attributes.source_branch,
        state,
    }))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

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
