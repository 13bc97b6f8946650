//! GitHub and GitHub Enterprise Server (REST API v3, `2022-11-28`).
//!
//! A branch is made with the git data API in one commit: read the base branch's ref and
//! commit, create a blob per file, a tree on top of the base commit's tree, the commit, and
//! finally the ref — so the branch appears only once its commit is complete. Pull requests
//! use the pulls API; a merged pull request names its merge commit (`merge_commit_sha`), and
//! the compare API tells whether one commit contains another. Endpoints:
//! <https://docs.github.com/en/rest/git>, <https://docs.github.com/en/rest/pulls/pulls> and
//! <https://docs.github.com/en/rest/commits/commits#compare-two-commits>.

use std::time::Duration;

use async_trait::async_trait;
use reqwest::{Method, StatusCode, header::HeaderName};
use secrecy::SecretString;
use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::{
    BranchSpec, DirLimits, DirRead, Forge, ForgeError, ForgeKind, ForgeResult, PullRequest,
    PullRequestSpec, PullRequestState,
    client::{Api, Blob, TreeEntry, decode_base64_text, is_commit_id, read_listed_blobs, segments},
    is_hidden, settled_before_closing,
};

/// The public GitHub API.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// A repository on GitHub, reached with a token (fine-grained or classic).
#[derive(Debug, Clone)]
pub struct GitHub {
    api: Api,
    owner: String,
    repo: String,
}

#[derive(Deserialize)]
struct GitRef {
    object: GitObject,
}

#[derive(Deserialize)]
struct GitObject {
    sha: String,
}

#[derive(Deserialize)]
struct GitCommit {
    sha: String,
    tree: GitObject,
    parents: Vec<GitObject>,
}

#[derive(Deserialize)]
struct Created {
    sha: String,
}

#[derive(Deserialize)]
struct Pull {
    number: u64,
    html_url: String,
    state: String,
    #[serde(default)]
    merged: Option<bool>,
    #[serde(default)]
    merged_at: Option<String>,
    /// Before the merge, GitHub's test merge commit; after it, the commit the merge made on
    /// the base branch (the merge commit, the squashed commit, or the last rebased commit).
    #[serde(default)]
    merge_commit_sha: Option<String>,
    head: PullHead,
}

impl Pull {
    fn is_merged(&self) -> bool {
        self.merged == Some(true) || self.merged_at.is_some()
    }
}

/// What the compare API says of `base...head` (`commit-comparison`): only the status is read.
#[derive(Deserialize)]
struct Comparison {
    status: String,
}

#[derive(Deserialize)]
struct PullHead {
    #[serde(rename = "ref")]
    name: String,
}

impl From<Pull> for PullRequest {
    fn from(pull: Pull) -> Self {
        let state = if pull.is_merged() {
            PullRequestState::Merged
        } else if pull.state == "open" {
            PullRequestState::Open
        } else {
            PullRequestState::Closed
        };
        PullRequest {
            number: pull.number,
            url: pull.html_url,
            branch: pull.head.name,
            state,
        }
    }
}

/// The contents API answers a file with an object and a directory with an array.
#[derive(Deserialize)]
#[serde(untagged)]
enum Contents {
    File(FileContents),
    Directory(Vec<serde::de::IgnoredAny>),
}

#[derive(Deserialize)]
struct FileContents {
    #[serde(rename = "type")]
    kind: String,
    sha: String,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    encoding: Option<String>,
}

impl GitHub {
    /// `api_url` is `https://api.github.com` or, for GitHub Enterprise Server,
    /// `https://HOST/api/v3`; `repo` is `owner/name`.
    pub fn new(
        api_url: &Url,
        repo: &str,
        token: SecretString,
        http: reqwest::Client,
    ) -> Result<Self, String> {
        let (owner, name) = split_owner_repo(repo)?;
        let api = Api::new(
            ForgeKind::Github,
            http,
            api_url,
            (reqwest::header::AUTHORIZATION, "Bearer {token}"),
            token,
            &[
                (reqwest::header::ACCEPT, "application/vnd.github+json"),
                (
                    HeaderName::from_static("x-github-api-version"),
                    "2022-11-28",
                ),
            ],
        )?;
        Ok(GitHub {
            api,
            owner,
            repo: name,
        })
    }

    /// Changes how long one call may take (30 s by default).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.api.set_timeout(timeout);
        self
    }

    fn repo_url<'a>(&'a self, rest: impl IntoIterator<Item = &'a str>) -> Url {
        let mut all = vec!["repos", self.owner.as_str(), self.repo.as_str()];
        all.extend(rest);
        self.api.url(all)
    }

    fn ref_url(&self, branch: &str) -> Url {
        let mut rest = vec!["git", "ref", "heads"];
        rest.extend(segments(branch));
        self.repo_url(rest)
    }

    async fn commit(&self, sha: &str) -> ForgeResult<GitCommit> {
        self.api.get(self.repo_url(["git", "commits", sha])).await
    }

    /// Blobs for every file and a tree holding them on top of `base_tree`; returns the tree's
    /// sha. Git objects are content-addressed, so the same files on the same base give the
    /// same tree.
    async fn tree_with(&self, base_tree: &str, spec: &BranchSpec) -> ForgeResult<String> {
        let mut entries = Vec::with_capacity(spec.files.len());
        for file in &spec.files {
            let blob: Created = self
                .api
                .post(
                    self.repo_url(["git", "blobs"]),
                    &json!({"content": file.content, "encoding": "utf-8"}),
                )
                .await?;
            entries.push(json!({
                "path": file.path,
                "mode": "100644",
                "type": "blob",
                "sha": blob.sha,
            }));
        }
        // A null sha deletes the path from the base tree.
        for path in &spec.removed {
            entries.push(json!({
                "path": path,
                "mode": "100644",
                "type": "blob",
                "sha": null,
            }));
        }
        let tree: Created = self
            .api
            .post(
                self.repo_url(["git", "trees"]),
                &json!({"base_tree": base_tree, "tree": entries}),
            )
            .await?;
        Ok(tree.sha)
    }

    /// An existing branch is ours to reuse when its tip is one commit on top of some base
    /// commit and holds exactly the files we would commit on that base.
    async fn reuse_existing(&self, tip: String, spec: &BranchSpec) -> ForgeResult<String> {
        let commit = self.commit(&tip).await?;
        let [parent] = commit.parents.as_slice() else {
            return Err(self.conflict(spec));
        };
        let parent = self.commit(&parent.sha).await?;
        let tree = self.tree_with(&parent.tree.sha, spec).await?;
        if tree == commit.tree.sha {
            Ok(commit.sha)
        } else {
            Err(self.conflict(spec))
        }
    }

    fn conflict(&self, spec: &BranchSpec) -> ForgeError {
        ForgeError::Conflict(format!(
            "github: branch {} exists in {}/{} with other content",
            spec.branch, self.owner, self.repo
        ))
    }

    async fn file(&self, rev: &str, path: &str) -> ForgeResult<Option<Contents>> {
        let mut rest = vec!["contents"];
        rest.extend(segments(path));
        let mut url = self.repo_url(rest);
        url.query_pairs_mut().append_pair("ref", rev);
        self.api.get_optional(url).await
    }
}

/// A tree as the git trees API lists it.
#[derive(Deserialize)]
struct Tree {
    tree: Vec<TreeEntry>,
    #[serde(default)]
    truncated: bool,
}

/// Reading a folder: the commit's tree, then one tree per level down to the folder (each a
/// small listing, never the whole monorepo), then the folder's tree recursively and a blob per
/// file. Endpoints: <https://docs.github.com/en/rest/git/trees#get-a-tree>,
/// <https://docs.github.com/en/rest/git/blobs#get-a-blob>.
impl GitHub {
    async fn tree(&self, sha: &str, recursive: bool) -> ForgeResult<Tree> {
        let mut url = self.repo_url(["git", "trees", sha]);
        if recursive {
            url.query_pairs_mut().append_pair("recursive", "1");
        }
        self.api.get(url).await
    }

    /// The tree id of `dir` on commit `rev`, `None` when there is no such folder.
    async fn folder_tree(&self, rev: &str, dir: &str) -> ForgeResult<Option<String>> {
        let mut at = self.commit(rev).await?.tree.sha;
        for name in segments(dir) {
            let listing = self.tree(&at, false).await?;
            match listing
                .tree
                .into_iter()
                .find(|e| e.path == name && e.kind == "tree")
            {
                Some(entry) => at = entry.sha,
                None => return Ok(None),
            }
        }
        Ok(Some(at))
    }

    async fn read_folder(
        &self,
        rev: &str,
        dir: &str,
        known: Option<&str>,
        limits: DirLimits,
    ) -> ForgeResult<DirRead> {
        let tree = self
            .folder_tree(rev, dir)
            .await?
            .ok_or_else(|| ForgeError::NotFound(format!("github: `{dir}/` on {rev}")))?;
        if known == Some(tree.as_str()) {
            return Ok(DirRead { tree, files: None });
        }
        let listing = self.tree(&tree, true).await?;
        if listing.truncated {
            return Err(ForgeError::TooLarge(format!(
                "github: `{dir}/` has more entries than GitHub lists at once"
            )));
        }
        let blobs: Vec<TreeEntry> = listing
            .tree
            .into_iter()
            .filter(|e| e.kind == "blob" && !is_hidden(&e.path))
            .collect();
        let files = read_listed_blobs(
            &self.api,
            |sha| self.repo_url(["git", "blobs", sha]),
            dir,
            blobs,
            limits,
        )
        .await?;
        Ok(DirRead {
            tree,
            files: Some(files),
        })
    }
}

#[async_trait]
impl Forge for GitHub {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Github
    }

    async fn branch_head(&self, branch: &str) -> ForgeResult<Option<String>> {
        let found: Option<GitRef> = self.api.get_optional(self.ref_url(branch)).await?;
        Ok(found.map(|r| r.object.sha))
    }

    async fn read_file(&self, rev: &str, path: &str) -> ForgeResult<Option<String>> {
        let Some(Contents::File(file)) = self.file(rev, path).await? else {
            return Ok(None);
        };
        if file.kind != "file" {
            return Ok(None);
        }
        let what = format!("github: {path} on {rev}");
        match (file.encoding.as_deref(), file.content) {
            (Some("base64"), Some(content)) => decode_base64_text(&content, &what).map(Some),
            // Files over 1 MB come without content; the blob API serves them.
            _ => {
                let blob: Blob = self
                    .api
                    .get(self.repo_url(["git", "blobs", file.sha.as_str()]))
                    .await?;
                decode_base64_text(&blob.content, &what).map(Some)
            }
        }
    }

    async fn path_exists(&self, rev: &str, path: &str) -> ForgeResult<bool> {
        Ok(match self.file(rev, path).await? {
            Some(Contents::File(_)) => true,
            Some(Contents::Directory(entries)) => !entries.is_empty(),
            None => false,
        })
    }

    async fn read_dir(
        &self,
        rev: &str,
        dir: &str,
        known: Option<&str>,
        limits: DirLimits,
    ) -> ForgeResult<DirRead> {
        self.read_folder(rev, dir, known, limits).await
    }

    async fn create_branch(&self, spec: &BranchSpec) -> ForgeResult<String> {
        if let Some(tip) = self.branch_head(&spec.branch).await? {
            return self.reuse_existing(tip, spec).await;
        }
        let base = self.branch_head(&spec.base).await?.ok_or_else(|| {
            ForgeError::NotFound(format!("github: base branch {} does not exist", spec.base))
        })?;
        let base_commit = self.commit(&base).await?;
        let tree = self.tree_with(&base_commit.tree.sha, spec).await?;
        let commit: Created = self
            .api
            .post(
                self.repo_url(["git", "commits"]),
                &json!({
                    "message": spec.message,
                    "tree": tree,
                    "parents": [base],
                    "author": {"name": spec.author.name, "email": spec.author.email},
                }),
            )
            .await?;
        let reply = self
            .api
            .send(
                Method::POST,
                self.repo_url(["git", "refs"]),
                Some(&json!({"ref": format!("refs/heads/{}", spec.branch), "sha": commit.sha})),
            )
            .await?;
        if reply.is_success() {
            return Ok(commit.sha);
        }
        // Someone made the branch between our look and now: reuse it if it is the same.
        if reply.status == StatusCode::UNPROCESSABLE_ENTITY
            && reply.message().contains("already exists")
            && let Some(tip) = self.branch_head(&spec.branch).await?
        {
            return self.reuse_existing(tip, spec).await;
        }
        Err(reply.into_error())
    }

    async fn find_pull_request(&self, branch: &str) -> ForgeResult<Option<PullRequest>> {
        let mut url = self.repo_url(["pulls"]);
        url.query_pairs_mut()
            .append_pair("head", &format!("{}:{branch}", self.owner))
            .append_pair("state", "all")
            .append_pair("per_page", "100");
        let pulls: Vec<Pull> = self.api.get(url).await?;
        // Newest first; an open one wins over older closed ones.
        Ok(super::preferred_pull_request(
            pulls
                .into_iter()
                .filter(|p| p.head.name == branch)
                .map(PullRequest::from)
                .collect(),
        ))
    }

    async fn open_pull_request(&self, spec: &PullRequestSpec) -> ForgeResult<PullRequest> {
        let reply = self
            .api
            .send(
                Method::POST,
                self.repo_url(["pulls"]),
                Some(&json!({
                    "title": spec.title,
                    "head": spec.branch,
                    "base": spec.base,
                    "body": spec.body,
                })),
            )
            .await?;
        if reply.status == StatusCode::UNPROCESSABLE_ENTITY
            && reply.message().contains("already exists")
        {
            return self
                .find_pull_request(&spec.branch)
                .await?
                .ok_or_else(|| reply.into_error());
        }
        reply.json::<Pull>().map(PullRequest::from)
    }

    async fn pull_request(&self, number: u64) -> ForgeResult<PullRequest> {
        let number = number.to_string();
        self.api
            .get::<Pull>(self.repo_url(["pulls", number.as_str()]))
            .await
            .map(PullRequest::from)
    }

    /// `POST /repos/{owner}/{repo}/issues/{number}/comments` (a pull request is an issue for
    /// comments), then `PATCH /repos/{owner}/{repo}/pulls/{number}` with `state: closed`.
    async fn close_pull_request(&self, number: u64, comment: &str) -> ForgeResult<PullRequest> {
        let current = self.pull_request(number).await?;
        if let Some(closed) = settled_before_closing(self.kind(), number, current)? {
            return Ok(closed);
        }
        let n = number.to_string();
        let _: serde_json::Value = self
            .api
            .post(
                self.repo_url(["issues", n.as_str(), "comments"]),
                &json!({ "body": comment }),
            )
            .await?;
        self.api
            .send(
                Method::PATCH,
                self.repo_url(["pulls", n.as_str()]),
                Some(&json!({ "state": "closed" })),
            )
            .await?
            .json::<Pull>()
            .map(PullRequest::from)
    }

    /// `merge_commit_sha` of the pull request, read only once it is merged (before, it names
    /// GitHub's test merge commit, which is on no branch); `None` for an unknown number.
    async fn merge_commit(&self, number: u64) -> ForgeResult<Option<String>> {
        let number = number.to_string();
        let pull: Option<Pull> = self
            .api
            .get_optional(self.repo_url(["pulls", number.as_str()]))
            .await?;
        Ok(pull
            .filter(Pull::is_merged)
            .and_then(|p| p.merge_commit_sha)
            .filter(|sha| !sha.is_empty()))
    }

    /// `GET /repos/{owner}/{repo}/compare/{ancestor}...{descendant}` (one page of one commit:
    /// only the status is read): `identical` or `ahead` (the descendant is the ancestor or
    /// has it in its history) contains it, `behind` or `diverged` does not. A commit GitHub
    /// does not have is answered 404: cannot tell.
    async fn contains(&self, ancestor: &str, descendant: &str) -> ForgeResult<Option<bool>> {
        if !is_commit_id(ancestor) || !is_commit_id(descendant) {
            return Ok(None);
        }
        let basehead = format!("{ancestor}...{descendant}");
        let mut url = self.repo_url(["compare", basehead.as_str()]);
        url.query_pairs_mut().append_pair("per_page", "1");
        let Some(comparison) = self.api.get_optional::<Comparison>(url).await? else {
            return Ok(None);
        };
        match comparison.status.as_str() {
            "identical" | "ahead" => Ok(Some(true)),
            "behind" | "diverged" => Ok(Some(false)),
            other => Err(ForgeError::Other(format!(
                "github: comparing {basehead}: unexpected status {other:?}"
            ))),
        }
    }
}

/// `owner/name`, both non-empty, nothing else.
pub(crate) fn split_owner_repo(repo: &str) -> Result<(String, String), String> {
    match repo.trim().trim_matches('/').split('/').collect::<Vec<_>>()[..] {
        [owner, name] if !owner.is_empty() && !name.is_empty() => {
            Ok((owner.to_owned(), name.trim_end_matches(".git").to_owned()))
        }
        _ => Err(format!(
            "the repository must be written owner/name, not {repo:?}"
        )),
    }
}
