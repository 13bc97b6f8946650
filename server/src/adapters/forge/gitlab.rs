//! GitLab, on gitlab.com or self-managed (REST API v4).
//!
//! The project is addressed by its URL-encoded path. A branch is made by one call to the
//! commits API with `start_branch` and one action per file (`create`, or `update` when the
//! file is on the base branch); merge requests use the merge requests API, which names a merged
//! request's merge (or squash) commit, and the repository's merge base tells whether one commit
//! contains another. Endpoints:
//! <https://docs.gitlab.com/api/commits/#create-a-commit-with-multiple-files-and-actions>,
//! <https://docs.gitlab.com/api/merge_requests/>, <https://docs.gitlab.com/api/branches/>,
//! <https://docs.gitlab.com/api/repository_files/>, <https://docs.gitlab.com/api/repositories/>.

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
    client::{Api, decode_base64_text, is_commit_id},
    is_hidden, settled_before_closing,
};

/// gitlab.com's API.
pub const DEFAULT_API_URL: &str = "https://gitlab.com/api/v4";

/// Diff pages are read this many entries at a time.
const PER_PAGE: usize = 100;

/// A project on GitLab, reached with a project (or personal) access token with the `api`
/// scope.
#[derive(Debug, Clone)]
pub struct GitLab {
    api: Api,
    project: String,
}

#[derive(Deserialize)]
struct Branch {
    commit: CommitId,
}

#[derive(Deserialize)]
struct CommitId {
    id: String,
}

#[derive(Deserialize)]
struct Commit {
    id: String,
    #[serde(default)]
    parent_ids: Vec<String>,
}

#[derive(Deserialize)]
struct File {
    content: String,
    #[serde(default)]
    encoding: Option<String>,
}

#[derive(Deserialize)]
struct DiffEntry {
    new_path: String,
    #[serde(default)]
    deleted_file: bool,
}

#[derive(Deserialize)]
struct MergeRequest {
    iid: u64,
    web_url: String,
    state: String,
    source_branch: String,
    /// The merge commit on the target branch; `null` until merged, and for a fast-forward merge.
    #[serde(default)]
    merge_commit_sha: Option<String>,
    /// The squashed commit of a request merged with squashing; `null` otherwise.
    #[serde(default)]
    squash_commit_sha: Option<String>,
}

impl From<MergeRequest> for PullRequest {
    fn from(mr: MergeRequest) -> Self {
        let state = match mr.state.as_str() {
            "merged" => PullRequestState::Merged,
            "opened" | "locked" => PullRequestState::Open,
            _ => PullRequestState::Closed,
        };
        PullRequest {
            number: mr.iid,
            url: mr.web_url,
            branch: mr.source_branch,
            state,
        }
    }
}

impl GitLab {
    /// `api_url` ends in `/api/v4`; `project` is the project's path, e.g. `infra/devops`.
    /// The token goes in `Authorization: Bearer`, which GitLab accepts for personal, project
    /// and group access tokens as it does `PRIVATE-TOKEN`; unlike a custom header, HTTP
    /// clients drop it when a redirect leads to another host.
    pub fn new(
        api_url: &Url,
        project: &str,
        token: SecretString,
        http: reqwest::Client,
    ) -> Result<Self, String> {
        let project = project.trim().trim_matches('/');
        if project.is_empty() || !project.contains('/') || project.split('/').any(str::is_empty) {
            return Err(format!(
                "the GitLab project must be its path, e.g. group/project, not {project:?}"
            ));
        }
        let api = Api::new(
            ForgeKind::Gitlab,
            http,
            api_url,
            (reqwest::header::AUTHORIZATION, "Bearer {token}"),
            token,
            &[(reqwest::header::ACCEPT, "application/json")],
        )?;
        Ok(GitLab {
            api,
            project: project.trim_end_matches(".git").to_owned(),
        })
    }

    /// Changes how long one call may take (30 s by default).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.api.set_timeout(timeout);
        self
    }

    /// `/projects/<url-encoded path>/…`: the path is one segment, so its `/` become `%2F`.
    fn project_url<'a>(&'a self, rest: impl IntoIterator<Item = &'a str>) -> Url {
        let mut all = vec!["projects", self.project.as_str()];
        all.extend(rest);
        self.api.url(all)
    }

    fn file_url(&self, rev: &str, path: &str) -> Url {
        // The file path is one URL-encoded segment as well.
        let mut url = self.project_url(["repository", "files", path]);
        url.query_pairs_mut().append_pair("ref", rev);
        url
    }

    async fn file(&self, rev: &str, path: &str) -> ForgeResult<Option<File>> {
        self.api.get_optional(self.file_url(rev, path)).await
    }

    /// The paths a commit adds or changes, across the diff's pages.
    async fn changed_paths(&self, sha: &str, removed: &[String]) -> ForgeResult<BTreeSet<String>> {
        let mut paths = BTreeSet::new();
        for page in 1.. {
            let mut url = self.project_url(["repository", "commits", sha, "diff"]);
            url.query_pairs_mut()
                .append_pair("per_page", &PER_PAGE.to_string())
                .append_pair("page", &page.to_string());
            let diff: Vec<DiffEntry> = self.api.get(url).await?;
            let len = diff.len();
            for entry in diff {
                if entry.deleted_file && !removed.contains(&entry.new_path) {
                    // We delete only the files a removal names: another deletion means it is
                    // not our commit.
                    paths.insert(format!("\0deleted {}", entry.new_path));
                } else {
                    paths.insert(entry.new_path);
                }
            }
            if len < PER_PAGE {
                break;
            }
        }
        Ok(paths)
    }

    /// An existing branch is ours to reuse when its tip is one commit that changes exactly
    /// our files and they hold exactly our content.
    async fn reuse_existing(&self, tip: String, spec: &BranchSpec) -> ForgeResult<String> {
        let commit: Commit = self
            .api
            .get(self.project_url(["repository", "commits", tip.as_str()]))
            .await?;
        if commit.parent_ids.len() != 1 {
            return Err(self.conflict(spec));
        }
        let changed = self.changed_paths(&commit.id, &spec.removed).await?;
        let changed = changed.iter().map(String::as_str).collect();
        if super::holds_exactly_our_files(self, &commit.id, 1, Some(changed), spec).await? {
            Ok(commit.id)
        } else {
            Err(self.conflict(spec))
        }
    }

    fn conflict(&self, spec: &BranchSpec) -> ForgeError {
        ForgeError::Conflict(format!(
            "gitlab: branch {} exists in {} with other content",
            spec.branch, self.project
        ))
    }
}

/// An entry of the repository tree listing.
#[derive(Deserialize)]
struct TreeEntry {
    /// The object id: a tree's for a folder, a blob's for a file.
    id: String,
    name: String,
    #[serde(rename = "type")]
    kind: String,
    path: String,
}

/// The most pages of a tree listing read for one folder.
const MAX_TREE_PAGES: usize = 1000;

/// The `page_token` of the `rel="next"` link of a keyset-paginated answer.
fn next_page_token(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (target, params) = part.split_once(';')?;
        if !params.contains("rel=\"next\"") {
            return None;
        }
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        Url::parse(target)
            .ok()?
            .query_pairs()
            .find(|(k, _)| k == "page_token")
            .map(|(_, v)| v.into_owned())
    })
}

/// Reading a folder: the parent folder's listing gives the folder's tree id; then the folder
/// is listed recursively with keyset pagination (following the `page_token` of the `Link`
/// header; `X-Next-Page` on versions that answer with offset pages) and each file is read raw.
/// Endpoints: <https://docs.gitlab.com/api/repositories/#list-repository-tree>,
/// <https://docs.gitlab.com/api/repository_files/#get-raw-file-from-repository>.
impl GitLab {
    /// The entries of `path` (the root when `None`) on `rev`, every page, or `None` when there
    /// is no such folder; stops early once more than `cap` entries satisfy `wanted`.
    async fn tree_entries(
        &self,
        rev: &str,
        path: Option<&str>,
        recursive: bool,
        wanted: impl Fn(&TreeEntry) -> bool,
        cap: usize,
    ) -> ForgeResult<Option<Vec<TreeEntry>>> {
        let mut found = Vec::new();
        let mut next: Option<(&str, String)> = None;
        for _ in 0..MAX_TREE_PAGES {
            let mut url = self.project_url(["repository", "tree"]);
            {
                let mut query = url.query_pairs_mut();
                if let Some(path) = path {
                    query.append_pair("path", path);
                }
                query.append_pair("ref", rev);
                if recursive {
                    query.append_pair("recursive", "true");
                }
                query
                    .append_pair("per_page", &PER_PAGE.to_string())
                    .append_pair("pagination", "keyset");
                if let Some((name, value)) = &next {
                    query.append_pair(name, value);
                }
            }
            let reply = self.api.send::<()>(Method::GET, url, None).await?;
            if reply.status == StatusCode::NOT_FOUND {
                return Ok(None);
            }
            let token = reply.header("link").and_then(next_page_token);
            let page = reply
                .header("x-next-page")
                .filter(|p| !p.is_empty())
                .map(str::to_owned);
            let entries: Vec<TreeEntry> = reply.json()?;
            let empty = entries.is_empty();
            found.extend(entries.into_iter().filter(|e| wanted(e)));
            next = match (token, page) {
                (Some(token), _) => Some(("page_token", token)),
                (None, Some(page)) => Some(("page", page)),
                (None, None) => None,
            };
            if next.is_none() || empty || found.len() > cap {
                break;
            }
        }
        Ok(Some(found))
    }

    /// The tree id of `dir` on `rev`, `None` when there is no such folder.
    async fn folder_tree(&self, rev: &str, dir: &str) -> ForgeResult<Option<String>> {
        let (parent, name) = match dir.rsplit_once('/') {
            Some((parent, name)) => (Some(parent), name),
            None => (None, dir),
        };
        let entries = self
            .tree_entries(
                rev,
                parent,
                false,
                |e| e.name == name && e.kind == "tree",
                0,
            )
            .await?;
        Ok(entries.and_then(|e| e.into_iter().next()).map(|e| e.id))
    }

    async fn read_folder(
        &self,
        rev: &str,
        dir: &str,
        known: Option<&str>,
        limits: DirLimits,
    ) -> ForgeResult<DirRead> {
        let not_found = || ForgeError::NotFound(format!("gitlab: `{dir}/` on {rev}"));
        if dir.is_empty() {
            return Err(not_found());
        }
        let tree = self.folder_tree(rev, dir).await?.ok_or_else(not_found)?;
        if known == Some(tree.as_str()) {
            return Ok(DirRead { tree, files: None });
        }
        let prefix = format!("{dir}/");
        let blobs = self
            .tree_entries(
                rev,
                Some(dir),
                true,
                |e| {
                    e.kind == "blob"
                        && e.path
                            .strip_prefix(&prefix)
                            .is_some_and(|rest| !is_hidden(rest))
                },
                limits.max_files,
            )
            .await?
            .ok_or_else(not_found)?;
        limits.check_files(dir, blobs.len())?;
        // The listing gives no sizes: each file is read with what is left of the budget.
        let mut files = Vec::with_capacity(blobs.len());
        let mut bytes = 0u64;
        for entry in blobs {
            let mut url = self.project_url(["repository", "files", entry.path.as_str(), "raw"]);
            url.query_pairs_mut().append_pair("ref", rev);
            let what = format!("gitlab: `{dir}/` (at {})", entry.path);
            let content = self
                .api
                .get_raw(url, limits.max_bytes.saturating_sub(bytes), &what)
                .await
                .map_err(|e| match e {
                    ForgeError::TooLarge(_) => limits.too_many_bytes(dir).into(),
                    other => other,
                })?
                .ok_or_else(|| ForgeError::NotFound(format!("gitlab: {} on {rev}", entry.path)))?;
            bytes += content.len() as u64;
            limits.check_bytes(dir, bytes)?;
            let relative = entry.path[prefix.len()..].to_owned();
            files.push((relative, content));
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(DirRead {
            tree,
            files: Some(files),
        })
    }
}

#[async_trait]
impl Forge for GitLab {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Gitlab
    }

    async fn branch_head(&self, branch: &str) -> ForgeResult<Option<String>> {
        let found: Option<Branch> = self
            .api
            .get_optional(self.project_url(["repository", "branches", branch]))
            .await?;
        Ok(found.map(|b| b.commit.id))
    }

    async fn read_file(&self, rev: &str, path: &str) -> ForgeResult<Option<String>> {
        let Some(file) = self.file(rev, path).await? else {
            return Ok(None);
        };
        let what = format!("gitlab: {path} on {rev}");
        match file.encoding.as_deref() {
            Some("base64") => decode_base64_text(&file.content, &what).map(Some),
            _ => Ok(Some(file.content)),
        }
    }

    async fn path_exists(&self, rev: &str, path: &str) -> ForgeResult<bool> {
        if self.file(rev, path).await?.is_some() {
            return Ok(true);
        }
        // Not a file: a directory has entries in the tree (a missing one answers 404).
        let mut url = self.project_url(["repository", "tree"]);
        url.query_pairs_mut()
            .append_pair("path", path)
            .append_pair("ref", rev)
            .append_pair("per_page", "1");
        let entries: Option<Vec<serde::de::IgnoredAny>> = self.api.get_optional(url).await?;
        Ok(entries.is_some_and(|e| !e.is_empty()))
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
        let mut actions = Vec::with_capacity(spec.files.len());
        for file in &spec.files {
            let action = if self.file(&spec.base, &file.path).await?.is_some() {
                "update"
            } else {
                "create"
            };
            actions.push(json!({
                "action": action,
                "file_path": file.path,
                "content": file.content,
                "encoding": "text",
            }));
        }
        for path in &spec.removed {
            actions.push(json!({"action": "delete", "file_path": path}));
        }
        let reply = self
            .api
            .send(
                Method::POST,
                self.project_url(["repository", "commits"]),
                Some(&json!({
                    "branch": spec.branch,
                    "start_branch": spec.base,
                    "commit_message": spec.message,
                    "author_name": spec.author.name,
                    "author_email": spec.author.email,
                    "actions": actions,
                })),
            )
            .await?;
        if reply.is_success() {
            return reply.json::<Commit>().map(|c| c.id);
        }
        // "A branch called … already exists": made since we looked; reuse it if the same.
        if reply.status.is_client_error()
            && reply.status != StatusCode::UNAUTHORIZED
            && reply.status != StatusCode::FORBIDDEN
            && reply.message().contains("already exists")
            && let Some(tip) = self.branch_head(&spec.branch).await?
        {
            return self.reuse_existing(tip, spec).await;
        }
        Err(reply.into_error())
    }

    async fn find_pull_request(&self, branch: &str) -> ForgeResult<Option<PullRequest>> {
        let mut url = self.project_url(["merge_requests"]);
        url.query_pairs_mut()
            // Without `state`, every state is listed.
            .append_pair("source_branch", branch)
            .append_pair("per_page", "100");
        let found: Vec<MergeRequest> = self.api.get(url).await?;
        Ok(super::preferred_pull_request(
            found
                .into_iter()
                .filter(|mr| mr.source_branch == branch)
                .map(PullRequest::from)
                .collect(),
        ))
    }

    async fn open_pull_request(&self, spec: &PullRequestSpec) -> ForgeResult<PullRequest> {
        let reply = self
            .api
            .send(
                Method::POST,
                self.project_url(["merge_requests"]),
                Some(&json!({
                    "source_branch": spec.branch,
                    "target_branch": spec.base,
                    "title": spec.title,
                    "description": spec.body,
                })),
            )
            .await?;
        // "Another open merge request already exists for this source branch".
        if reply.status == StatusCode::CONFLICT && reply.message().contains("already exists") {
            return self
                .find_pull_request(&spec.branch)
                .await?
                .ok_or_else(|| reply.into_error());
        }
        reply.json::<MergeRequest>().map(PullRequest::from)
    }

    /// `POST /projects/:id/merge_requests/:iid/notes`, then
    /// `PUT /projects/:id/merge_requests/:iid` with `state_event: close`.
    async fn close_pull_request(&self, number: u64, comment: &str) -> ForgeResult<PullRequest> {
        let current = self.pull_request(number).await?;
        if let Some(closed) = settled_before_closing(self.kind(), number, current)? {
            return Ok(closed);
        }
        let n = number.to_string();
        let _: serde_json::Value = self
            .api
            .post(
                self.project_url(["merge_requests", n.as_str(), "notes"]),
                &json!({ "body": comment }),
            )
            .await?;
        self.api
            .send(
                Method::PUT,
                self.project_url(["merge_requests", n.as_str()]),
                Some(&json!({ "state_event": "close" })),
            )
            .await?
            .json::<MergeRequest>()
            .map(PullRequest::from)
    }

    async fn pull_request(&self, number: u64) -> ForgeResult<PullRequest> {
        let number = number.to_string();
        self.api
            .get::<MergeRequest>(self.project_url(["merge_requests", number.as_str()]))
            .await
            .map(PullRequest::from)
    }

    /// A merged request's `merge_commit_sha`, or its `squash_commit_sha` when it was squashed
    /// onto the target without a merge commit. A request merged by fast-forward without
    /// squashing names neither (its own commits are on the target): `None`, as for an open
    /// request or an unknown number.
    async fn merge_commit(&self, number: u64) -> ForgeResult<Option<String>> {
        let number = number.to_string();
        let mr: Option<MergeRequest> = self
            .api
            .get_optional(self.project_url(["merge_requests", number.as_str()]))
            .await?;
        Ok(mr.filter(|mr| mr.state == "merged").and_then(|mr| {
            [mr.merge_commit_sha, mr.squash_commit_sha]
                .into_iter()
                .flatten()
                .find(|sha| !sha.is_empty())
        }))
    }

    /// `GET /projects/:id/repository/merge_base?refs[]=ancestor&refs[]=descendant`
    /// (<https://docs.gitlab.com/api/repositories/#merge-base>): the descendant contains the
    /// ancestor exactly when their merge base is the ancestor itself. The compare endpoint is
    /// not used: it answers the commits and diffs between two refs but not their merge base,
    /// so ancestry would have to be inferred from commit lists. A commit GitLab does not have
    /// is answered 400 "Could not find ref…", two commits without common history 404: cannot
    /// tell.
    async fn contains(&self, ancestor: &str, descendant: &str) -> ForgeResult<Option<bool>> {
        if !is_commit_id(ancestor) || !is_commit_id(descendant) {
            return Ok(None);
        }
        let mut url = self.project_url(["repository", "merge_base"]);
        url.query_pairs_mut()
            .append_pair("refs[]", ancestor)
            .append_pair("refs[]", descendant);
        let reply = self.api.send::<()>(Method::GET, url, None).await?;
        if reply.status == StatusCode::NOT_FOUND
            || (reply.status == StatusCode::BAD_REQUEST
                && reply.message().contains("Could not find"))
        {
            return Ok(None);
        }
        let base: CommitId = reply.json()?;
        Ok(Some(base.id.eq_ignore_ascii_case(ancestor)))
    }
}

#[cfg(test)]
mod tree_listing_tests {
    use super::next_page_token;

    #[test]
    fn the_next_page_token_is_taken_from_the_link_header_s_next_link_only() {
        let link = "<https://gitlab.example.org/api/v4/projects/1/repository/tree?page_token=first&pagination=keyset>; rel=\"first\", \
                    <https://gitlab.example.org/api/v4/projects/1/repository/tree?id=1&page_token=a%2Fb.yaml&pagination=keyset&per_page=100>; rel=\"next\"";
        assert_eq!(next_page_token(link).as_deref(), Some("a/b.yaml"));
        assert_eq!(
            next_page_token("<https://gitlab.example.org/x?page_token=z>; rel=\"prev\""),
            None
        );
        assert_eq!(next_page_token(""), None);
    }
}
