//! Forge webhooks, without the HTTP: the signature is checked before anything in the body is
//! read, then a pull request event becomes a [`PullRequestChange`]; every other event is
//! ignored. Headers are read through a function, so that any HTTP library's map serves.
//!
//! - GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, event in
//!   `X-GitHub-Event` (<https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries>).
//! - GitLab: `X-Gitlab-Token` carries the secret itself, event in `X-Gitlab-Event`
//!   (<https://docs.gitlab.com/user/project/integrations/webhooks/>).
//! - Gitea/Forgejo: `X-Gitea-Signature` or `X-Forgejo-Signature`: hex HMAC-SHA256 of the body,
//!   event in `X-Gitea-Event` or `X-Forgejo-Event`
//!   (<https://docs.gitea.com/usage/webhooks>, <https://forgejo.org/docs/latest/user/webhooks/>).

use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::monorepo::PullRequestState;

/// The hosted forges that send webhooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    /// GitHub or GitHub Enterprise.
    Github,
    /// GitLab.
    Gitlab,
    /// Gitea or Forgejo.
    Gitea,
}

/// What a webhook says about one pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequestChange {
    /// The pull request's number (GitLab `iid`).
    pub number: u64,
    /// Its source branch.
    pub branch: String,
    /// Where it stands now.
    pub state: PullRequestState,
}

/// A request's headers, by lower-case name; a header that is not text is absent.
pub trait Headers {
    /// The value of header `name`.
    fn header(&self, name: &str) -> Option<&str>;
}

/// Why a webhook was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookRefusal {
    /// The signature or token header is missing or does not match the secret.
    #[error("the webhook signature is missing or wrong")]
    BadSignature,
    /// Signed correctly but not a payload this forge sends.
    #[error("the webhook payload is malformed: {0}")]
    Malformed(String),
}

type HmacSha256 = Hmac<Sha256>;

/// Checks that `body` was sent by the forge that knows `secret`, then reads what it says
/// about a pull request. `Ok(None)`: a genuine event that is not about a pull request's state
/// (a push, a ping, a label change). An empty secret accepts nothing.
pub fn verify_and_parse(
    sender: Sender,
    headers: &dyn Headers,
    body: &[u8],
    secret: &[u8],
) -> Result<Option<PullRequestChange>, WebhookRefusal> {
    verify(sender, headers, body, secret)?;
    match sender {
        Sender::Github => parse_github(headers, body),
        Sender::Gitlab => parse_gitlab(headers, body),
        Sender::Gitea => parse_gitea(headers, body),
    }
}

/// The signature check alone.
pub fn verify(
    sender: Sender,
    headers: &dyn Headers,
    body: &[u8],
    secret: &[u8],
) -> Result<(), WebhookRefusal> {
    if secret.is_empty() {
        return Err(WebhookRefusal::BadSignature);
    }
    match sender {
        Sender::Github => {
            let signature = header(headers, "x-hub-signature-256")
                .and_then(|v| v.strip_prefix("sha256="))
                .ok_or(WebhookRefusal::BadSignature)?;
            verify_hmac(secret, body, signature)
        }
        Sender::Gitea => {
            let signature = header(headers, "x-gitea-signature")
                .or_else(|| header(headers, "x-forgejo-signature"))
                .ok_or(WebhookRefusal::BadSignature)?;
            verify_hmac(secret, body, signature)
        }
        Sender::Gitlab => {
            let token = header(headers, "x-gitlab-token").ok_or(WebhookRefusal::BadSignature)?;
            if bool::from(token.as_bytes().ct_eq(secret)) {
                Ok(())
            } else {
                Err(WebhookRefusal::BadSignature)
            }
        }
    }
}

/// Compares a hex HMAC-SHA256 in constant time (the `hmac` crate's `verify_slice`).
fn verify_hmac(secret: &[u8], body: &[u8], hex_signature: &str) -> Result<(), WebhookRefusal> {
    let expected = hex::decode(hex_signature.trim()).map_err(|_| WebhookRefusal::BadSignature)?;
    let mut mac = HmacSha256::new_from_slice(secret).map_err(|_| WebhookRefusal::BadSignature)?;
    mac.update(body);
    mac.verify_slice(&expected)
        .map_err(|_| WebhookRefusal::BadSignature)
}

fn header<'a>(headers: &'a dyn Headers, name: &str) -> Option<&'a str> {
    headers.header(name)
}

fn json<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, WebhookRefusal> {
    serde_json::from_slice(body).map_err(|e| WebhookRefusal::Malformed(e.to_string()))
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
fn pull_request_event(payload: PullRequestPayload) -> Option<PullRequestChange> {
    let state = match payload.action.as_str() {
        "opened" | "reopened" => PullRequestState::Open,
        "closed" if payload.pull_request.merged == Some(true) => PullRequestState::Merged,
        "closed" => PullRequestState::Closed,
        _ => return None,
    };
    Some(PullRequestChange {
        number: payload.pull_request.number,
        branch: payload.pull_request.head.name,
        state,
    })
}

fn parse_github(
    headers: &dyn Headers,
    body: &[u8],
) -> Result<Option<PullRequestChange>, WebhookRefusal> {
    let event = header(headers, "x-github-event")
        .ok_or_else(|| WebhookRefusal::Malformed("no X-GitHub-Event header".into()))?;
    if event != "pull_request" {
        return Ok(None);
    }
    Ok(pull_request_event(json(body)?))
}

fn parse_gitea(
    headers: &dyn Headers,
    body: &[u8],
) -> Result<Option<PullRequestChange>, WebhookRefusal> {
    let event = header(headers, "x-gitea-event")
        .or_else(|| header(headers, "x-forgejo-event"))
        .ok_or_else(|| WebhookRefusal::Malformed("no X-Gitea-Event header".into()))?;
    if event != "pull_request" {
        return Ok(None);
    }
    Ok(pull_request_event(json(body)?))
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

fn parse_gitlab(
    headers: &dyn Headers,
    body: &[u8],
) -> Result<Option<PullRequestChange>, WebhookRefusal> {
    let event = header(headers, "x-gitlab-event")
        .ok_or_else(|| WebhookRefusal::Malformed("no X-Gitlab-Event header".into()))?;
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
        .ok_or_else(|| WebhookRefusal::Malformed("no object_attributes".into()))?;
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
    Ok(Some(PullRequestChange {
        number: attributes.iid,
        branch: attributes.source_branch,
        state,
    }))
}
