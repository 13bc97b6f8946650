//! Gitea and Forgejo (REST API v1; Forgejo keeps Gitea's API for everything used here).
//!
//! A branch is made by one call to the ChangeFiles API (`POST /repos/{owner}/{repo}/contents`
//! with `new_branch`), which commits every file at once; pull requests use the pulls API, which
//! names a merged pull request's merge commit, and the compare API tells whether one commit
//! contains another. Endpoints as published in the instance's own `/api/swagger` (e.g.
//! <https://gitea.com/api/swagger>, <https://codeberg.org/api/swagger>).

use std::{collections::BTreeSet, time::Duration};

use async_trait::async_trait;
use reqwest::{Method, StatusCode};
use secrecy::SecretString;
use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::{
    BranchSpec, DirLimits, DirRead, Forge, ForgeError, ForgeKind, ForgeResult, PullRequest,
    PullRequestSpec, PullRequestState,
    client::{
        Api, TreeEntry, decode_base64_text, encode_base64, is_commit_id, read_listed_blobs,
        segments,
    },
    github::split_owner_repo,
    is_hidden, settled_before_closing,
};

/// Pulls are listed this many at a time (Gitea's default maximum page size).
const PAGE_SIZE: usize = 50;
/// How many pages of pull requests are searched for a branch's pull request.
const MAX_PAGES: usize = 100;
/// Tree entries are listed this many at a time (Gitea's default for trees).
const TREE_PAGE_SIZE: usize = 1000;

/// A repository on Gitea or Forgejo, reached with an access token with repository write.
#[derive(Debug, Clone)]
pub struct Gitea {
    api: Api,
    owner: String,
    repo: String,
}

#[derive(Deserialize)]
struct Branch {
    commit: BranchCommit,
}

#[derive(Deserialize)]
struct BranchCommit {
    id: String,
}

#[derive(Deserialize)]
struct Commit {
    sha: String,
    #[serde(default)]
    parents: Vec<serde::de::IgnoredAny>,
    #[serde(default)]
    files: Option<Vec<AffectedFile>>,
}

#[derive(Deserialize)]
struct AffectedFile {
    filename: String,
    #[serde(default)]
    status: String,
}

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
}

#[derive(Deserialize)]
struct FilesResponse {
    commit: FileCommit,
}

#[derive(Deserialize)]
struct FileCommit {
    sha: String,
}

#[derive(Deserialize)]
struct Pull {
    number: u64,
    html_url: String,
    state: String,
    #[serde(default)]
    merged: bool,
    /// The commit the merge made on the base branch; set once merged.
    #[serde(default)]
    merge_commit_sha: Option<String>,
    head: PullHead,
}

/// What the compare API answers (`Compare`): the commits of `head` not in `base`.
#[derive(Deserialize)]
struct Compare {
    total_commits: u64,
}

#[derive(Deserialize)]
struct PullHead {
    #[serde(rename = "ref")]
    name: String,
}

impl From<Pull> for PullRequest {
    fn from(pull: Pull) -> Self {
        let state = if pull.merged {
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

impl Gitea {
    /// `api_url` ends in `/api/v1`; `repo` is `owner/name`. The token goes in
    /// `Authorization: token …`.
    pub fn new(
        api_url: &Url,
        repo: &str,
        token: SecretString,
        http: reqwest::Client,
    ) -> Result<Self, String> {
        let (owner, name) = split_owner_repo(repo)?;
        let api = Api::new(
            ForgeKind::Gitea,
            http,
            api_url,
            (reqwest::header::AUTHORIZATION, "token {token}"),
            token,
            &[(reqwest::header::ACCEPT, "application/json")],
        )?;
        Ok(Gitea {
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

    async fn contents(&self, rev: &str, path: &str) -> ForgeResult<Option<Contents>> {
        let mut rest = vec!["contents"];
        rest.extend(segments(path));
        let mut url = self.repo_url(rest);
        url.query_pairs_mut().append_pair("ref", rev);
        self.api.get_optional(url).await
    }

    async fn file_sha(&self, rev: &str, path: &str) -> ForgeResult<Option<String>> {
        Ok(match self.contents(rev, path).await? {
            Some(Contents::File(file)) if file.kind == "file" => Some(file.sha),
            _ => None,
        })
    }

    /// An existing branch is ours to reuse when its tip is one commit that touches exactly
    /// our files and they hold exactly our content.
    async fn reuse_existing(&self, tip: String, spec: &BranchSpec) -> ForgeResult<String> {
        let commit: Commit = self
            .api
            .get(self.repo_url(["git", "commits", tip.as_str()]))
            .await?;
        if let Some(files) = &commit.files {
            // We never rename, and delete only the files a removal names: any other such
            // commit is not ours.
            if files.iter().any(|f| {
                f.status == "renamed"
                    || (matches!(f.status.as_str(), "removed" | "deleted")
                        && !spec.removed.contains(&f.filename))
            }) {
                return Err(self.conflict(spec));
            }
        }
        let changed: Option<BTreeSet<&str>> = commit
            .files
            .as_ref()
            .map(|files| files.iter().map(|f| f.filename.as_str()).collect());
        let parents = commit.parents.len();
        if super::holds_exactly_our_files(self, &commit.sha, parents, changed, spec).await? {
            Ok(commit.sha)
        } else {
            Err(self.conflict(spec))
        }
    }

    fn conflict(&self, spec: &BranchSpec) -> ForgeError {
        ForgeError::Conflict(format!(
            "gitea: branch {} exists in {}/{} with other content",
            spec.branch, self.owner, self.repo
        ))
    }

    async fn list_pulls(&self, state: &str, branch: &str) -> ForgeResult<Vec<PullRequest>> {
        let mut found = Vec::new();
        for page in 1..=MAX_PAGES {
            let mut url = self.repo_url(["pulls"]);
            url.query_pairs_mut()
                .append_pair("state", state)
                .append_pair("page", &page.to_string())
                .append_pair("limit", &PAGE_SIZE.to_string());
            let pulls: Vec<Pull> = self.api.get(url).await?;
            let len = pulls.len();
            found.extend(
                pulls
                    .into_iter()
                    .filter(|p| p.head.name == branch)
                    .map(PullRequest::from),
            );
            if len < PAGE_SIZE || !found.is_empty() {
                break;
            }
        }
        Ok(found)
    }
}

/// One page of a tree as the git trees API lists it (`GitTreeResponse`).
#[derive(Deserialize)]
struct TreePage {
    #[serde(default)]
    tree: Vec<TreeEntry>,
    /// More entries on the next page.
    #[serde(default)]
    truncated: bool,
}

/// Reading a folder: the commit's root tree (the trees API takes a commit id), one listing per
/// level down to the folder, then the folder's tree recursively, page by page, and a blob per
/// file (`GetTree`, `GetBlob` in the instance's `/api/swagger`).
impl Gitea {
    /// The entries of tree (or commit) `sha`, every page; stops early once more than `cap`
    /// entries satisfy `wanted`.
    async fn tree_entries(
        &self,
        sha: &str,
        recursive: bool,
        wanted: impl Fn(&TreeEntry) -> bool,
        cap: usize,
    ) -> ForgeResult<Vec<TreeEntry>> {
        let mut found = Vec::new();
        for page in 1.. {
            let mut url = self.repo_url(["git", "trees", sha]);
            url.query_pairs_mut()
                .append_pair("recursive", if recursive { "true" } else { "false" })
                .append_pair("page", &page.to_string())
                .append_pair("per_page", &TREE_PAGE_SIZE.to_string());
            let listing: TreePage = self.api.get(url).await?;
            let empty = listing.tree.is_empty();
            found.extend(listing.tree.into_iter().filter(|e| wanted(e)));
            if !listing.truncated || empty || found.len() > cap {
                break;
            }
        }
        Ok(found)
    }

    /// The tree id of `dir` on commit `rev`, `None` when there is no such folder.
    async fn folder_tree(&self, rev: &str, dir: &str) -> ForgeResult<Option<String>> {
        let mut at = rev.to_owned();
        for name in segments(dir) {
            let entries = self
                .tree_entries(&at, false, |e| e.path == name && e.kind == "tree", 0)
                .await?;
            match entries.into_iter().next() {
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
            .ok_or_else(|| ForgeError::NotFound(format!("gitea: `{dir}/` on {rev}")))?;
        if known == Some(tree.as_str()) {
            return Ok(DirRead { tree, files: None });
        }
        let blobs = self
            .tree_entries(
                &tree,
                true,
                |e| e.kind == "blob" && !is_hidden(&e.path),
                limits.max_files,
            )
            .await?;
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
impl Forge for Gitea {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Gitea
    }

    async fn branch_head(&self, branch: &str) -> ForgeResult<Option<String>> {
        let mut rest = vec!["branches"];
        rest.extend(segments(branch));
        let found: Option<Branch> = self.api.get_optional(self.repo_url(rest)).await?;
        Ok(found.map(|b| b.commit.id))
    }

    async fn read_file(&self, rev: &str, path: &str) -> ForgeResult<Option<String>> {
        match self.contents(rev, path).await? {
            Some(Contents::File(file)) if file.kind == "file" => {
                let what = format!("gitea: {path} on {rev}");
                decode_base64_text(file.content.as_deref().unwrap_or_default(), &what).map(Some)
            }
            _ => Ok(None),
        }
    }

    async fn path_exists(&self, rev: &str, path: &str) -> ForgeResult<bool> {
        Ok(match self.contents(rev, path).await? {
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
        let mut files = Vec::with_capacity(spec.files.len());
        for file in &spec.files {
            let entry = match self.file_sha(&spec.base, &file.path).await? {
                Some(sha) => json!({
                    "operation": "update",
                    "path": file.path,
                    "content": encode_base64(&file.content),
                    "sha": sha,
                }),
                None => json!({
                    "operation": "create",
                    "path": file.path,
                    "content": encode_base64(&file.content),
                }),
            };
            files.push(entry);
        }
        for path in &spec.removed {
            let sha = self.file_sha(&spec.base, path).await?.ok_or_else(|| {
                ForgeError::Conflict(format!(
                    "gitea: `{path}` is not on {} to be deleted",
                    spec.base
                ))
            })?;
            files.push(json!({"operation": "delete", "path": path, "sha": sha}));
        }
        let reply = self
            .api
            .send(
                Method::POST,
                self.repo_url(["contents"]),
                Some(&json!({
                    "branch": spec.base,
                    "new_branch": spec.branch,
                    "message": spec.message,
                    "author": {"name": spec.author.name, "email": spec.author.email},
                    "files": files,
                })),
            )
            .await?;
        if reply.is_success() {
            return reply.json::<FilesResponse>().map(|r| r.commit.sha);
        }
        // A branch made since we looked (422 "branch already exists"): reuse it if the same.
        if matches!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY | StatusCode::CONFLICT
        ) && reply.message().contains("already exists")
            && let Some(tip) = self.branch_head(&spec.branch).await?
        {
            return self.reuse_existing(tip, spec).await;
        }
        Err(reply.into_error())
    }

    async fn find_pull_request(&self, branch: &str) -> ForgeResult<Option<PullRequest>> {
        // Open ones are few, so they are searched first; then every state, newest first.
        if let Some(open) = self.list_pulls("open", branch).await?.into_iter().next() {
            return Ok(Some(open));
        }
        Ok(self.list_pulls("all", branch).await?.into_iter().next())
    }

    async fn open_pull_request(&self, spec: &PullRequestSpec) -> ForgeResult<PullRequest> {
        let reply = self
            .api
            .send(
                Method::POST,
                self.repo_url(["pulls"]),
                Some(&json!({
                    "head": spec.branch,
                    "base": spec.base,
                    "title": spec.title,
                    "body": spec.body,
                })),
            )
            .await?;
        // 409 "pull request already exists for these targets" (some versions answer 422).
        if matches!(
            reply.status,
            StatusCode::CONFLICT | StatusCode::UNPROCESSABLE_ENTITY
        ) && reply.message().contains("already exists")
        {
            return self
                .find_pull_request(&spec.branch)
                .await?
                .ok_or_else(|| reply.into_error());
        }
        reply.json::<Pull>().map(PullRequest::from)
    }

    /// `POST /repos/{owner}/{repo}/issues/{index}/comments`, then
    /// `PATCH /repos/{owner}/{repo}/pulls/{index}` with `state: closed`.
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

    async fn pull_request(&self, number: u64) -> ForgeResult<PullRequest> {
        let number = number.to_string();
        self.api
            .get::<Pull>(self.repo_url(["pulls", number.as_str()]))
            .await
            .map(PullRequest::from)
    }

    /// A merged pull request's `merge_commit_sha`; `None` while it is not merged, or for an
    /// unknown number.
    async fn merge_commit(&self, number: u64) -> ForgeResult<Option<String>> {
        let number = number.to_string();
        let pull: Option<Pull> = self
            .api
            .get_optional(self.repo_url(["pulls", number.as_str()]))
            .await?;
        Ok(pull
            .filter(|p| p.merged)
            .and_then(|p| p.merge_commit_sha)
            .filter(|sha| !sha.is_empty()))
    }

    /// `GET /repos/{owner}/{repo}/compare/{descendant}...{ancestor}` (`repoCompareDiff`):
    /// the commits of the ancestor that the descendant lacks, counted from their merge base.
    /// None (`total_commits` 0) means the descendant contains the ancestor; any means it does
    /// not. Asked this way round, the answer holds no commit in the usual case, where the
    /// deployed revision already has the merge. The compare API takes commit ids from Gitea
    /// 1.23 on (Forgejo likewise where its compare takes them); Gitea 1.22 compares branches
    /// and tags only, and older releases have no such endpoint: those answer 404, as does a
    /// commit the forge does not have, and the answer is "cannot tell".
    async fn contains(&self, ancestor: &str, descendant: &str) -> ForgeResult<Option<bool>> {
        if !is_commit_id(ancestor) || !is_commit_id(descendant) {
            return Ok(None);
        }
        let basehead = format!("{descendant}...{ancestor}");
        let url = self.repo_url(["compare", basehead.as_str()]);
        Ok(self
            .api
            .get_optional::<Compare>(url)
            .await?
            .map(|c| c.total_commits == 0))
    }
}
