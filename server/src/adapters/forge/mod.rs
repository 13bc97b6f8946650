//! Forges: where the devops monorepo lives and where pull requests are opened.
//!
//! Every forge implements [`Forge`]. The proposing worker calls it step by step (branch with one
//! commit, then the pull request) and every step is idempotent: a step that already happened —
//! a branch with that name, a pull request for that branch — is found and reused, so a worker
//! that crashed between two steps resumes without opening a second pull request.

pub mod local;

use std::{fmt, sync::Arc};

use async_trait::async_trait;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::adapters::git::GitError;

mod client;
pub mod gitea;
pub mod github;
pub mod gitlab;
pub mod webhook;

pub use client::DEFAULT_TIMEOUT;
pub use gitea::Gitea;
pub use github::GitHub;
pub use gitlab::GitLab;
pub use mirante_domain::monorepo::{
    BranchSpec, CommitAuthor, DirLimits, DirRead, FileChange, Files, MergeStyle, PullRequestState,
    TooLarge, is_safe_path,
};
pub use webhook::verify_and_parse;

/// Which kind of forge (`MIRANTE_FORGE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    /// A git repository on disk; pull requests are branches plus a record in the portal.
    #[default]
    Local,
    /// GitHub or GitHub Enterprise (REST v3).
    Github,
    /// GitLab (REST v4).
    Gitlab,
    /// Gitea or Forgejo (REST v1).
    Gitea,
}

impl ForgeKind {
    /// The forge's name in settings, logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            ForgeKind::Local => "local",
            ForgeKind::Github => "github",
            ForgeKind::Gitlab => "gitlab",
            ForgeKind::Gitea => "gitea",
        }
    }
}

impl fmt::Display for ForgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pull request (a merge request on GitLab) to open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestSpec {
    /// The branch with the changes.
    pub branch: String,
    /// The branch to merge into.
    pub base: String,
    /// Title (one line).
    pub title: String,
    /// Body (Markdown).
    pub body: String,
}

/// A pull request as the forge knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    /// The forge's number for it (GitHub/Gitea `number`, GitLab `iid`, local record id).
    pub number: u64,
    /// Where a person opens it.
    pub url: String,
    /// Its source branch.
    pub branch: String,
    /// Where it stands.
    pub state: PullRequestState,
}

/// What went wrong talking to a forge. [`ForgeError::is_retryable`] tells the worker whether
/// to try again later.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// The token was refused (401/403): retrying will not help until configuration changes.
    #[error("the forge refused the credentials: {0}")]
    Unauthorized(String),
    /// The repository, branch or pull request does not exist.
    #[error("not found on the forge: {0}")]
    NotFound(String),
    /// Something with that name already exists and is not ours to reuse.
    #[error("already exists on the forge: {0}")]
    Conflict(String),
    /// The forge rejected the request's content (422 and the like).
    #[error("the forge rejected the request: {0}")]
    Rejected(String),
    /// The forge is down, slow or answered 5xx / 429: try again later.
    #[error("the forge is unavailable: {0}")]
    Unavailable(String),
    /// This forge cannot do that (e.g. merging from the portal on a hosted forge).
    #[error("not supported by this forge: {0}")]
    Unsupported(String),
    /// What was asked for is beyond a limit set for reading it (a folder with too many files
    /// or bytes): retrying will not help until the folder or the limit changes.
    #[error("too large to read: {0}")]
    TooLarge(String),
    /// Anything else (a local git error, an answer that does not parse).
    #[error("forge error: {0}")]
    Other(String),
}

impl From<GitError> for ForgeError {
    fn from(e: GitError) -> Self {
        match e {
            GitError::NotFound(m) => ForgeError::NotFound(m),
            GitError::Conflict(m) => ForgeError::Conflict(m),
            GitError::Unavailable(m) => ForgeError::Unavailable(m),
            GitError::Rejected(m) => ForgeError::Rejected(m),
            GitError::TooLarge(m) => ForgeError::TooLarge(m),
            GitError::Other(m) => ForgeError::Other(m),
        }
    }
}

impl From<TooLarge> for ForgeError {
    fn from(e: TooLarge) -> Self {
        ForgeError::TooLarge(e.0)
    }
}

impl ForgeError {
    /// Whether the same call may succeed later without anyone changing anything.
    pub fn is_retryable(&self) -> bool {
        matches!(self, ForgeError::Unavailable(_))
    }
}

/// The result of a forge call.
pub type ForgeResult<T> = Result<T, ForgeError>;

/// The pull request a branch stands for among those a forge lists for it (newest first): an
/// open one wins over older closed or merged ones, else the newest.
pub(crate) fn preferred_pull_request(mut found: Vec<PullRequest>) -> Option<PullRequest> {
    match found.iter().position(|p| p.state == PullRequestState::Open) {
        Some(i) => Some(found.swap_remove(i)),
        None => found.into_iter().next(),
    }
}

/// Whether an existing branch whose tip is `tip` is ours to reuse: the tip is one commit
/// (`parents` parents) that changed exactly the paths of `spec` (`changed`, the paths the forge
/// lists for the commit, when it lists them) and each file reads back with our content.
pub(crate) async fn holds_exactly_our_files(
    forge: &dyn Forge,
    tip: &str,
    parents: usize,
    changed: Option<std::collections::BTreeSet<&str>>,
    spec: &BranchSpec,
) -> ForgeResult<bool> {
    if parents != 1 {
        return Ok(false);
    }
    if let Some(changed) = changed {
        let ours: std::collections::BTreeSet<&str> = spec
            .files
            .iter()
            .map(|f| f.path.as_str())
            .chain(spec.removed.iter().map(String::as_str))
            .collect();
        if changed != ours {
            return Ok(false);
        }
    }
    for file in &spec.files {
        if forge.read_file(tip, &file.path).await?.as_deref() != Some(file.content.as_str()) {
            return Ok(false);
        }
    }
    for path in &spec.removed {
        if forge.read_file(tip, path).await?.is_some() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether a path inside a listed folder is hidden (one of its names starts with `.`): such
/// files are left out of [`Forge::read_dir`], as the local forge leaves them out.
pub(crate) fn is_hidden(path: &str) -> bool {
    path.split('/').any(|name| name.starts_with('.'))
}

/// Before closing pull request `number` (as `current` stands): `Some` of it when it is closed
/// already (closing again answers it), a [`ForgeError::Conflict`] when it is merged, `None`
/// when it is open and may be closed.
pub(crate) fn settled_before_closing(
    forge: ForgeKind,
    number: u64,
    current: PullRequest,
) -> ForgeResult<Option<PullRequest>> {
    match current.state {
        PullRequestState::Closed => Ok(Some(current)),
        PullRequestState::Merged => Err(ForgeError::Conflict(format!(
            "{forge}: pull request #{number} is merged"
        ))),
        PullRequestState::Open => Ok(None),
    }
}

/// A forge holding the devops monorepo.
///
/// Errors never carry the token. Implementations must be cheap to share (`Arc<dyn Forge>`).
#[async_trait]
pub trait Forge: Send + Sync {
    /// Which kind this is.
    fn kind(&self) -> ForgeKind;

    /// The commit id at the tip of `branch`, or `None` when the branch does not exist.
    async fn branch_head(&self, branch: &str) -> ForgeResult<Option<String>>;

    /// The content of `path` on `rev` (a branch name), or `None` when there is no such file.
    async fn read_file(&self, rev: &str, path: &str) -> ForgeResult<Option<String>>;

    /// Whether `path` (a file or a directory) exists on `rev`.
    async fn path_exists(&self, rev: &str, path: &str) -> ForgeResult<bool>;

    /// Every file under the folder `dir` (no leading or trailing `/`) on `rev` (a commit id),
    /// at any depth, with paths relative to `dir`; hidden files (a name starting with `.`)
    /// are left out. When the folder's tree id is `known`, no file is read. Fails with
    /// [`ForgeError::NotFound`] when there is no such folder and with
    /// [`ForgeError::TooLarge`] beyond `limits` (before reading any file where the forge
    /// tells the sizes in its listing).
    async fn read_dir(
        &self,
        rev: &str,
        dir: &str,
        known: Option<&str>,
        limits: DirLimits,
    ) -> ForgeResult<DirRead>;

    /// Creates `spec.branch` from `spec.base` with one commit holding `spec.files`, and
    /// returns the commit id. When the branch already exists and its tip holds exactly these
    /// files, returns its tip unchanged (a resumed attempt); when it exists with other
    /// content, fails with [`ForgeError::Conflict`].
    async fn create_branch(&self, spec: &BranchSpec) -> ForgeResult<String>;

    /// The pull request whose source branch is `branch` (open, merged or closed), if any.
    async fn find_pull_request(&self, branch: &str) -> ForgeResult<Option<PullRequest>>;

    /// Opens a pull request. Callers look for an existing one with
    /// [`Forge::find_pull_request`] first; an "already exists" answer from the forge is
    /// answered by returning the existing pull request.
    async fn open_pull_request(&self, spec: &PullRequestSpec) -> ForgeResult<PullRequest>;

    /// The pull request numbered `number`, as it stands now.
    async fn pull_request(&self, number: u64) -> ForgeResult<PullRequest>;

    /// The commit a merged pull request made on its base branch, where the forge tells it:
    /// the local forge's record, GitHub's and Gitea's `merge_commit_sha`, GitLab's merge or
    /// squash commit. `None` while the pull request is not merged, for an unknown number, and
    /// where the forge names no such commit (a GitLab fast-forward merge): the follower then
    /// takes the base branch's head when it first sees the merge, which contains it.
    async fn merge_commit(&self, number: u64) -> ForgeResult<Option<String>> {
        let _ = number;
        Ok(None)
    }

    /// Whether the commit `descendant` contains `ancestor` (is it or descends from it), both
    /// full commit ids: git on the local forge, GitHub's and Gitea's compare API, GitLab's
    /// merge base. `None` when the forge cannot tell: a commit it does not have, a revision
    /// that is not a commit id, a Gitea without a compare API that takes commit ids; the
    /// follower then counts only the merge commit itself and the base branch's head.
    async fn contains(&self, ancestor: &str, descendant: &str) -> ForgeResult<Option<bool>> {
        let _ = (ancestor, descendant);
        Ok(None)
    }

    /// What `branch` proposes against `base` (with `merge_commit`: what its merge brought),
    /// for a forge that has no pull request page of its own: the local forge answers it from
    /// git. A hosted forge answers `None` — its pull request's page shows it.
    async fn branch_change(
        &self,
        base: &str,
        branch: &str,
        merge_commit: Option<&str>,
    ) -> ForgeResult<Option<crate::adapters::git::change::BranchChange>> {
        let _ = (base, branch, merge_commit);
        Ok(None)
    }

    /// Closes an open pull request without merging it, after leaving `comment` on it (why:
    /// its request was withdrawn). A pull request already closed is answered as it stands; a
    /// merged one is a [`ForgeError::Conflict`].
    async fn close_pull_request(&self, number: u64, comment: &str) -> ForgeResult<PullRequest>;

    /// Merges a pull request from the portal. Only the local forge does this; hosted forges
    /// answer [`ForgeError::Unsupported`] (people merge there).
    async fn merge(&self, number: u64, style: MergeStyle) -> ForgeResult<PullRequest> {
        let _ = (number, style);
        Err(ForgeError::Unsupported(format!(
            "merging from the portal on {}",
            self.kind()
        )))
    }
}

/// What a verified forge webhook says about a pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookEvent {
    /// The forge that sent it.
    pub forge: ForgeKind,
    /// The pull request's number (GitLab `iid`).
    pub number: u64,
    /// Its source branch; the portal's branches start with `mirante/`.
    pub branch: String,
    /// Where it stands now.
    pub state: PullRequestState,
}

/// Why a webhook was refused.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The signature or token header is missing or does not match the secret (answer 401 and
    /// write an audit entry).
    #[error("the webhook signature is missing or wrong")]
    BadSignature,
    /// Signed correctly but not a payload this forge sends (answer 400).
    #[error("the webhook payload is malformed: {0}")]
    Malformed(String),
}

/// Why a hosted forge could not be set up from configuration.
#[derive(Debug, thiserror::Error)]
pub enum HostedForgeError {
    /// `MIRANTE_FORGE` names a forge that is not hosted (`local`).
    #[error("{0} is not a hosted forge")]
    NotHosted(ForgeKind),
    /// Gitea and Forgejo have no public default: `MIRANTE_FORGE_URL` is required.
    #[error("MIRANTE_FORGE_URL is required for {0}")]
    UrlRequired(ForgeKind),
    /// The URL, repository or token cannot be used.
    #[error("{kind}: {reason}")]
    Invalid {
        /// The forge being configured.
        kind: ForgeKind,
        /// What is wrong (never the token itself).
        reason: String,
    },
}

/// The API URL a forge is reached at when `MIRANTE_FORGE_URL` is unset (Gitea has none).
pub fn default_api_url(kind: ForgeKind) -> Option<Url> {
    let url = match kind {
        ForgeKind::Github => github::DEFAULT_API_URL,
        ForgeKind::Gitlab => gitlab::DEFAULT_API_URL,
        ForgeKind::Gitea | ForgeKind::Local => return None,
    };
    Url::parse(url).ok()
}

/// The API URL for a configured forge URL. People often give the address they open in a
/// browser, so the API path is added when it is missing: `https://github.example.org` becomes
/// `https://github.example.org/api/v3` (GitHub Enterprise Server; `https://github.com` becomes
/// `https://api.github.com`), GitLab gets `/api/v4` and Gitea/Forgejo `/api/v1`.
pub fn api_url(kind: ForgeKind, configured: Option<&Url>) -> Result<Url, HostedForgeError> {
    let Some(url) = configured else {
        return default_api_url(kind).ok_or(match kind {
            ForgeKind::Local => HostedForgeError::NotHosted(kind),
            _ => HostedForgeError::UrlRequired(kind),
        });
    };
    let suffix = match kind {
        ForgeKind::Local => return Err(HostedForgeError::NotHosted(kind)),
        ForgeKind::Github if url.host_str() == Some("github.com") => {
            return default_api_url(kind).ok_or(HostedForgeError::UrlRequired(kind));
        }
        ForgeKind::Github if url.host_str() == Some("api.github.com") => "",
        ForgeKind::Github => "/api/v3",
        ForgeKind::Gitlab => "/api/v4",
        ForgeKind::Gitea => "/api/v1",
    };
    let mut url = url.clone();
    let path = url.path().trim_end_matches('/').to_owned();
    if !suffix.is_empty() && !path.ends_with(suffix) {
        url.set_path(&format!("{path}{suffix}"));
    }
    Ok(url)
}

/// A hosted forge from configuration: `MIRANTE_FORGE` (`kind`), `MIRANTE_FORGE_URL`
/// (`url`, see [`api_url`]), `MIRANTE_MONOREPO` (`repo`: `owner/name`, or the project path on
/// GitLab) and `MIRANTE_FORGE_TOKEN` (`token`). `http` should not follow redirects blindly
/// nor carry cookies; every call gets its own timeout ([`DEFAULT_TIMEOUT`]).
pub fn hosted(
    kind: ForgeKind,
    url: Option<&Url>,
    repo: &str,
    token: SecretString,
    http: reqwest::Client,
) -> Result<Arc<dyn Forge>, HostedForgeError> {
    let api = api_url(kind, url)?;
    let invalid = |reason: String| HostedForgeError::Invalid { kind, reason };
    Ok(match kind {
        ForgeKind::Github => Arc::new(GitHub::new(&api, repo, token, http).map_err(invalid)?),
        ForgeKind::Gitlab => Arc::new(GitLab::new(&api, repo, token, http).map_err(invalid)?),
        ForgeKind::Gitea => Arc::new(Gitea::new(&api, repo, token, http).map_err(invalid)?),
        ForgeKind::Local => return Err(HostedForgeError::NotHosted(kind)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn each_hosted_forge_has_its_api_url_from_a_browser_address() {
        assert_eq!(
            api_url(ForgeKind::Github, None).unwrap().as_str(),
            "https://api.github.com/"
        );
        assert_eq!(
            api_url(ForgeKind::Github, Some(&url("https://github.com")))
                .unwrap()
                .as_str(),
            "https://api.github.com/"
        );
        assert_eq!(
            api_url(ForgeKind::Github, Some(&url("https://ghe.example.org/")))
                .unwrap()
                .as_str(),
            "https://ghe.example.org/api/v3"
        );
        assert_eq!(
            api_url(ForgeKind::Gitlab, None).unwrap().as_str(),
            "https://gitlab.com/api/v4"
        );
        assert_eq!(
            api_url(
                ForgeKind::Gitlab,
                Some(&url("https://git.example.org/api/v4"))
            )
            .unwrap()
            .as_str(),
            "https://git.example.org/api/v4"
        );
        assert_eq!(
            api_url(ForgeKind::Gitea, Some(&url("https://codeberg.org")))
                .unwrap()
                .as_str(),
            "https://codeberg.org/api/v1"
        );
    }

    #[test]
    fn a_hosted_forge_never_shows_its_token_when_debugged() {
        let token = "glpat-very-secret-token-value";
        let api = url("https://git.example.org/api/v4");
        let shown = [
            format!(
                "{:?}",
                GitHub::new(
                    &api,
                    "a/b",
                    SecretString::from(token),
                    reqwest::Client::new()
                )
                .unwrap()
            ),
            format!(
                "{:?}",
                GitLab::new(
                    &api,
                    "a/b",
                    SecretString::from(token),
                    reqwest::Client::new()
                )
                .unwrap()
            ),
            format!(
                "{:?}",
                Gitea::new(
                    &api,
                    "a/b",
                    SecretString::from(token),
                    reqwest::Client::new()
                )
                .unwrap()
            ),
        ];
        for shown in shown {
            assert!(!shown.contains(token), "{shown}");
            assert!(shown.contains("git.example.org"), "{shown}");
        }
    }

    #[test]
    fn gitea_without_a_url_and_the_local_forge_are_refused() {
        assert!(matches!(
            api_url(ForgeKind::Gitea, None),
            Err(HostedForgeError::UrlRequired(ForgeKind::Gitea))
        ));
        assert!(matches!(
            hosted(
                ForgeKind::Local,
                None,
                "a/b",
                SecretString::from("t"),
                reqwest::Client::new()
            ),
            Err(HostedForgeError::NotHosted(ForgeKind::Local))
        ));
    }

    #[test]
    fn a_repository_that_is_not_owner_slash_name_is_refused() {
        for bad in ["", "justone", "a/b/c", "/b"] {
            let err = hosted(
                ForgeKind::Github,
                None,
                bad,
                SecretString::from("t"),
                reqwest::Client::new(),
            )
            .err()
            .unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert!(matches!(err, HostedForgeError::Invalid { .. }), "{err}");
        }
        assert!(
            hosted(
                ForgeKind::Gitlab,
                None,
                "group/sub/project",
                SecretString::from("t"),
                reqwest::Client::new()
            )
            .is_ok()
        );
    }
}
