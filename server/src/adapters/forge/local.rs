//! The local forge: the devops monorepo as a git repository on disk (through `git2`, no `git`
//! binary needed), with pull requests kept as rows of the portal's database.
//!
//! - A branch is one commit on top of the base holding every file of the request. Creating it
//!   again with the same files finds the existing commit (a resumed attempt); other content
//!   under the same name is a conflict.
//! - A pull request is the branch plus a `local_pull_request` row, one per branch (a unique
//!   key, so two workers racing cannot open two). The rows live in the database rather than in
//!   files of the repository: they change state together with the requests that own them, are
//!   shared by replicas on PostgreSQL, and keep the repository an ordinary git repository that
//!   holds only the team's files.
//! - An admin merges from the portal: a fast-forward when the base has not moved (else a merge
//!   commit), or always a merge commit. The base is moved with a compare-and-swap on the
//!   reference, so a concurrent change to the base is never overwritten.
//!
//! The git work itself is `crate::adapters::git` (blocking, run here on tokio's blocking
//! pool); this module adds the pull request records and the links into the portal.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use chrono::Utc;

use super::{
    BranchSpec, DirLimits, DirRead, Forge, ForgeError, ForgeKind, ForgeResult, MergeStyle,
    PullRequest, PullRequestSpec, PullRequestState, settled_before_closing,
};
use crate::adapters::db::Db;
use crate::adapters::db::local_pulls::LocalPullRequest;
use crate::adapters::git;
use crate::adapters::git::GitResult;

/// A git repository on disk with pull requests in the database.
#[derive(Debug, Clone)]
pub struct LocalForge {
    path: PathBuf,
    db: Db,
    public_url: String,
}

impl LocalForge {
    /// The forge on the repository at `path`; pull request links point into the portal at
    /// `public_url`.
    pub fn new(path: PathBuf, db: Db, public_url: &str) -> Self {
        LocalForge {
            path,
            db,
            public_url: public_url.trim_end_matches('/').to_owned(),
        }
    }

    /// The repository's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn pull_request_of(&self, row: &LocalPullRequest) -> ForgeResult<PullRequest> {
        Ok(PullRequest {
            number: u64::try_from(row.local_pull_request_id)
                .map_err(|_| ForgeError::Other("negative pull request number".into()))?,
            url: request_link(&self.public_url, &row.branch),
            branch: row.branch.clone(),
            state: row.pr_state(),
        })
    }

    /// Pull request `number`'s row, with its id.
    async fn row(&self, number: u64) -> ForgeResult<(i64, LocalPullRequest)> {
        let id = i64::try_from(number)
            .map_err(|_| ForgeError::NotFound(format!("pull request #{number}")))?;
        let row = self
            .db
            .local_pull_request(id)
            .await
            .map_err(|e| ForgeError::Unavailable(format!("database: {e}")))?
            .ok_or_else(|| ForgeError::NotFound(format!("pull request #{number}")))?;
        Ok((id, row))
    }

    /// Runs `work` on the repository's path on the blocking pool.
    async fn git<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Path) -> GitResult<T> + Send + 'static,
    ) -> ForgeResult<T> {
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || work(&path).map_err(ForgeError::from))
            .await
            .map_err(|e| ForgeError::Other(format!("git task failed: {e}")))?
    }
}

/// The portal page of the change a `mirante/<id>-<slug>` branch proposes (the local forge's
/// pull requests are shown there); the request list for any other branch.
fn request_link(public_url: &str, branch: &str) -> String {
    let id = branch
        .strip_prefix("mirante/")
        .and_then(|rest| rest.split('-').next())
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
    match id {
        Some(id) => format!("{public_url}/requests/{id}/change"),
        None => format!("{public_url}/requests"),
    }
}

#[async_trait]
impl Forge for LocalForge {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Local
    }

    async fn branch_head(&self, branch: &str) -> ForgeResult<Option<String>> {
        let branch = branch.to_owned();
        self.git(move |path| git::branch_head(path, &branch)).await
    }

    async fn read_file(&self, rev: &str, path: &str) -> ForgeResult<Option<String>> {
        let (rev, file) = (rev.to_owned(), path.to_owned());
        self.git(move |path| git::read::read_file(path, &rev, &file))
            .await
    }

    async fn path_exists(&self, rev: &str, path: &str) -> ForgeResult<bool> {
        let (rev, file) = (rev.to_owned(), path.to_owned());
        self.git(move |path| git::read::path_exists(path, &rev, &file))
            .await
    }

    async fn read_dir(
        &self,
        rev: &str,
        dir: &str,
        known: Option<&str>,
        limits: DirLimits,
    ) -> ForgeResult<DirRead> {
        let (rev, dir, known) = (rev.to_owned(), dir.to_owned(), known.map(str::to_owned));
        self.git(move |path| git::read::read_folder(path, &rev, &dir, known.as_deref(), limits))
            .await
    }

    async fn create_branch(&self, spec: &BranchSpec) -> ForgeResult<String> {
        let spec = spec.clone();
        self.git(move |path| git::write::create_branch(path, &spec))
            .await
    }

    async fn find_pull_request(&self, branch: &str) -> ForgeResult<Option<PullRequest>> {
        let row = self
            .db
            .local_pull_request_by_branch(branch)
            .await
            .map_err(|e| ForgeError::Unavailable(format!("database: {e}")))?;
        row.as_ref().map(|r| self.pull_request_of(r)).transpose()
    }

    async fn open_pull_request(&self, spec: &PullRequestSpec) -> ForgeResult<PullRequest> {
        let (branch, base) = (spec.branch.clone(), spec.base.clone());
        let (has_branch, has_base) = self
            .git(move |path| {
                Ok((
                    git::branch_head(path, &branch)?.is_some(),
                    git::branch_head(path, &base)?.is_some(),
                ))
            })
            .await?;
        if !has_branch {
            return Err(ForgeError::NotFound(format!("branch `{}`", spec.branch)));
        }
        if !has_base {
            return Err(ForgeError::NotFound(format!("base branch `{}`", spec.base)));
        }
        let row = self
            .db
            .open_local_pull_request(
                &spec.branch,
                &spec.base,
                &spec.title,
                &spec.body,
                Utc::now(),
            )
            .await
            .map_err(|e| ForgeError::Unavailable(format!("database: {e}")))?;
        self.pull_request_of(&row)
    }

    async fn pull_request(&self, number: u64) -> ForgeResult<PullRequest> {
        let (_, row) = self.row(number).await?;
        self.pull_request_of(&row)
    }

    async fn merge_commit(&self, number: u64) -> ForgeResult<Option<String>> {
        let Ok(id) = i64::try_from(number) else {
            return Ok(None);
        };
        let row = self
            .db
            .local_pull_request(id)
            .await
            .map_err(|e| ForgeError::Unavailable(format!("database: {e}")))?;
        Ok(row
            .filter(|r| r.pr_state() == PullRequestState::Merged)
            .and_then(|r| r.merge_commit))
    }

    async fn contains(&self, ancestor: &str, descendant: &str) -> ForgeResult<Option<bool>> {
        let (a, d) = (ancestor.to_owned(), descendant.to_owned());
        self.git(move |path| git::contains(path, &a, &d)).await
    }

    async fn branch_change(
        &self,
        base: &str,
        branch: &str,
        merge_commit: Option<&str>,
    ) -> ForgeResult<Option<git::change::BranchChange>> {
        let (base, branch, merge) = (
            base.to_owned(),
            branch.to_owned(),
            merge_commit.map(str::to_owned),
        );
        self.git(move |path| git::change::branch_change(path, &base, &branch, merge.as_deref()))
            .await
    }

    /// Marks the pull request closed; the comment is on the request's timeline, which is where
    /// the local forge's pull requests are read.
    async fn close_pull_request(&self, number: u64, comment: &str) -> ForgeResult<PullRequest> {
        let _ = comment;
        let (id, row) = self.row(number).await?;
        if let Some(closed) =
            settled_before_closing(self.kind(), number, self.pull_request_of(&row)?)?
        {
            return Ok(closed);
        }
        self.db
            .set_local_pull_request_state(id, PullRequestState::Closed, None, Utc::now())
            .await
            .map_err(|e| ForgeError::Unavailable(format!("database: {e}")))?;
        self.pull_request(number).await
    }

    async fn merge(&self, number: u64, style: MergeStyle) -> ForgeResult<PullRequest> {
        let (id, row) = self.row(number).await?;
        match row.pr_state() {
            PullRequestState::Merged => return self.pull_request_of(&row),
            PullRequestState::Closed => {
                return Err(ForgeError::Conflict(format!(
                    "pull request #{number} is closed"
                )));
            }
            PullRequestState::Open => {}
        }
        let message = format!("Merge branch '{}' (#{number})\n\n{}", row.branch, row.title);
        let (base, branch) = (row.base.clone(), row.branch.clone());
        let commit = self
            .git(move |path| git::write::merge(path, &base, &branch, style, &message))
            .await?;
        self.db
            .set_local_pull_request_state(id, PullRequestState::Merged, Some(&commit), Utc::now())
            .await
            .map_err(|e| ForgeError::Unavailable(format!("database: {e}")))?;
        self.pull_request(number).await
    }
}

#[cfg(test)]
mod tests {
    use secrecy::SecretString;

    use git2::{Oid, Repository};
    use mirante_domain::monorepo::FileChange;

    use super::*;
    use crate::adapters::forge::CommitAuthor;
    use crate::adapters::git::init_monorepo;
    use crate::adapters::git::read_dir_at;

    async fn forge() -> (tempfile::TempDir, LocalForge) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("monorepo");
        let created = init_monorepo(
            &path,
            "main",
            &[
                file("catalog/platform.yaml", "platform:\n  name: Test\n"),
                file("README.md", "# devops\n"),
            ],
        )
        .unwrap();
        assert!(created);
        let db = Db::connect(&SecretString::from("sqlite::memory:"), 1)
            .await
            .unwrap();
        db.migrate().await.unwrap();
        (dir, LocalForge::new(path, db, "http://portal.test/"))
    }

    fn file(path: &str, content: &str) -> FileChange {
        FileChange {
            path: path.into(),
            content: content.into(),
        }
    }

    fn spec(branch: &str, files: Vec<FileChange>) -> BranchSpec {
        BranchSpec {
            branch: branch.into(),
            base: "main".into(),
            message: "a request".into(),
            author: CommitAuthor {
                name: "Rui Researcher".into(),
                email: "rui@example.org".into(),
            },
            files,
            removed: Vec::new(),
        }
    }

    fn pr_spec(branch: &str) -> PullRequestSpec {
        PullRequestSpec {
            branch: branch.into(),
            base: "main".into(),
            title: "Add a workspace".into(),
            body: "Body".into(),
        }
    }

    /// Branches `mirante/1-a` with `a` and `mirante/2-b` with `b`, both from `main`, each with
    /// its pull request.
    async fn two_pull_requests(
        forge: &LocalForge,
        a: FileChange,
        b: FileChange,
    ) -> (PullRequest, PullRequest) {
        let mut pulls = Vec::new();
        for (branch, file) in [("mirante/1-a", a), ("mirante/2-b", b)] {
            forge
                .create_branch(&spec(branch, vec![file]))
                .await
                .unwrap();
        }
        for branch in ["mirante/1-a", "mirante/2-b"] {
            pulls.push(forge.open_pull_request(&pr_spec(branch)).await.unwrap());
        }
        let b = pulls.pop().unwrap();
        (pulls.pop().unwrap(), b)
    }

    #[tokio::test]
    async fn the_monorepo_is_created_once_with_its_files_on_main() {
        let (_dir, forge) = forge().await;

        let again = init_monorepo(forge.path(), "main", &[file("x.yaml", "x: 1\n")]).unwrap();

        assert!(!again, "an existing repository is left alone");
        assert_eq!(
            forge
                .read_file("main", "README.md")
                .await
                .unwrap()
                .as_deref(),
            Some("# devops\n")
        );
        assert!(forge.path_exists("main", "catalog").await.unwrap());
        assert!(!forge.path_exists("main", "x.yaml").await.unwrap());
        let (commit, files) = read_dir_at(forge.path(), "main", "catalog").unwrap();
        assert_eq!(forge.branch_head("main").await.unwrap(), Some(commit));
        assert_eq!(
            files,
            [(
                "platform.yaml".to_owned(),
                b"platform:\n  name: Test\n".to_vec()
            )]
        );
    }

    #[tokio::test]
    async fn a_branch_is_one_commit_on_main_with_every_file() {
        let (_dir, forge) = forge().await;
        let main = forge.branch_head("main").await.unwrap().unwrap();
        let files = vec![
            file("ws/rui/namespace.yaml", "kind: Namespace\n"),
            file("ws/rui/quota.yaml", "kind: ResourceQuota\n"),
        ];

        let commit = forge
            .create_branch(&spec("mirante/1-ws", files))
            .await
            .unwrap();

        let repo = Repository::open(forge.path()).unwrap();
        let c = repo.find_commit(Oid::from_str(&commit).unwrap()).unwrap();
        assert_eq!(c.parent_count(), 1);
        assert_eq!(c.parent_id(0).unwrap().to_string(), main);
        assert_eq!(c.author().name(), Some("Rui Researcher"));
        assert_eq!(
            forge
                .read_file("mirante/1-ws", "ws/rui/quota.yaml")
                .await
                .unwrap()
                .as_deref(),
            Some("kind: ResourceQuota\n")
        );
        assert_eq!(
            forge
                .read_file("mirante/1-ws", "README.md")
                .await
                .unwrap()
                .as_deref(),
            Some("# devops\n"),
            "the rest of main is kept"
        );
        assert!(
            !forge.path_exists("main", "ws").await.unwrap(),
            "main is untouched"
        );
    }

    #[tokio::test]
    async fn creating_the_same_branch_again_reuses_it_and_other_content_is_a_conflict() {
        let (_dir, forge) = forge().await;
        let files = vec![file("ws/a.yaml", "a: 1\n")];
        let first = forge
            .create_branch(&spec("mirante/1-a", files.clone()))
            .await
            .unwrap();

        let again = forge
            .create_branch(&spec("mirante/1-a", files))
            .await
            .unwrap();
        let other = forge
            .create_branch(&spec("mirante/1-a", vec![file("ws/a.yaml", "a: 2\n")]))
            .await;

        assert_eq!(first, again);
        assert!(matches!(other, Err(ForgeError::Conflict(_))), "{other:?}");
    }

    #[tokio::test]
    async fn unsafe_paths_and_branch_names_are_refused() {
        let (_dir, forge) = forge().await;
        for bad in [
            "../x.yaml",
            "/etc/x",
            "a/../../x",
            ".git/config",
            "a//b",
            "a\\b",
            "a/\u{7}",
        ] {
            let result = forge
                .create_branch(&spec("mirante/2-x", vec![file(bad, "x")]))
                .await;
            assert!(
                matches!(result, Err(ForgeError::Rejected(_))),
                "{bad}: {result:?}"
            );
        }
        let result = forge
            .create_branch(&spec("bad..name", vec![file("a.yaml", "x")]))
            .await;
        assert!(matches!(result, Err(ForgeError::Rejected(_))), "{result:?}");
        assert_eq!(forge.branch_head("mirante/2-x").await.unwrap(), None);
    }

    #[tokio::test]
    async fn one_pull_request_per_branch_even_when_opened_twice() {
        let (_dir, forge) = forge().await;
        forge
            .create_branch(&spec("mirante/7-a", vec![file("ws/a.yaml", "a: 1\n")]))
            .await
            .unwrap();

        let first = forge
            .open_pull_request(&pr_spec("mirante/7-a"))
            .await
            .unwrap();
        let second = forge
            .open_pull_request(&pr_spec("mirante/7-a"))
            .await
            .unwrap();
        let found = forge.find_pull_request("mirante/7-a").await.unwrap();

        assert_eq!(first, second);
        assert_eq!(found, Some(first.clone()));
        assert_eq!(first.state, PullRequestState::Open);
        assert_eq!(first.url, "http://portal.test/requests/7/change");
        assert_eq!(forge.find_pull_request("mirante/8-b").await.unwrap(), None);
        let missing = forge.open_pull_request(&pr_spec("mirante/8-b")).await;
        assert!(
            matches!(missing, Err(ForgeError::NotFound(_))),
            "{missing:?}"
        );
    }

    #[tokio::test]
    async fn merging_an_untouched_base_fast_forwards_it() {
        let (_dir, forge) = forge().await;
        let tip = forge
            .create_branch(&spec("mirante/1-a", vec![file("ws/a.yaml", "a: 1\n")]))
            .await
            .unwrap();
        let pr = forge
            .open_pull_request(&pr_spec("mirante/1-a"))
            .await
            .unwrap();

        let merged = forge
            .merge(pr.number, MergeStyle::FastForward)
            .await
            .unwrap();
        let again = forge
            .merge(pr.number, MergeStyle::FastForward)
            .await
            .unwrap();

        assert_eq!(merged.state, PullRequestState::Merged);
        assert_eq!(again, merged);
        assert_eq!(forge.branch_head("main").await.unwrap(), Some(tip));
        assert_eq!(
            forge
                .read_file("main", "ws/a.yaml")
                .await
                .unwrap()
                .as_deref(),
            Some("a: 1\n")
        );
    }

    #[tokio::test]
    async fn two_branches_from_the_same_base_both_merge_the_second_with_a_merge_commit() {
        let (_dir, forge) = forge().await;
        let (a, b) = two_pull_requests(
            &forge,
            file("ws/a.yaml", "a: 1\n"),
            file("db/b.yaml", "b: 1\n"),
        )
        .await;

        forge
            .merge(a.number, MergeStyle::FastForward)
            .await
            .unwrap();
        forge
            .merge(b.number, MergeStyle::FastForward)
            .await
            .unwrap();

        let repo = Repository::open(forge.path()).unwrap();
        let head = repo
            .find_commit(Oid::from_str(&forge.branch_head("main").await.unwrap().unwrap()).unwrap())
            .unwrap();
        assert_eq!(head.parent_count(), 2, "the base had moved: a merge commit");
        assert!(forge.path_exists("main", "ws/a.yaml").await.unwrap());
        assert!(forge.path_exists("main", "db/b.yaml").await.unwrap());
    }

    #[tokio::test]
    async fn a_merge_commit_is_made_on_request_and_conflicts_are_refused() {
        let (_dir, forge) = forge().await;
        let (a, b) = two_pull_requests(
            &forge,
            file("shared.yaml", "v: 1\n"),
            file("shared.yaml", "v: 2\n"),
        )
        .await;

        forge
            .merge(a.number, MergeStyle::MergeCommit)
            .await
            .unwrap();
        let conflict = forge.merge(b.number, MergeStyle::MergeCommit).await;

        let repo = Repository::open(forge.path()).unwrap();
        let head = repo
            .find_commit(Oid::from_str(&forge.branch_head("main").await.unwrap().unwrap()).unwrap())
            .unwrap();
        assert_eq!(head.parent_count(), 2);
        let Err(ForgeError::Conflict(message)) = conflict else {
            panic!("{conflict:?}")
        };
        assert!(message.contains("shared.yaml"), "{message}");
        assert_eq!(
            forge.pull_request(b.number).await.unwrap().state,
            PullRequestState::Open
        );
    }

    #[tokio::test]
    async fn a_merged_pull_request_tells_its_merge_commit_which_later_commits_contain() {
        let (_dir, forge) = forge().await;
        let (a, b) = two_pull_requests(
            &forge,
            file("ws/a.yaml", "a: 1\n"),
            file("ws/b.yaml", "b: 1\n"),
        )
        .await;
        let before = forge.branch_head("main").await.unwrap().unwrap();
        assert_eq!(forge.merge_commit(a.number).await.unwrap(), None, "open");

        forge
            .merge(a.number, MergeStyle::MergeCommit)
            .await
            .unwrap();
        let merged_a = forge.merge_commit(a.number).await.unwrap().unwrap();
        forge
            .merge(b.number, MergeStyle::MergeCommit)
            .await
            .unwrap();
        let head = forge.branch_head("main").await.unwrap().unwrap();

        assert_eq!(
            forge.contains(&merged_a, &merged_a).await.unwrap(),
            Some(true)
        );
        assert_eq!(forge.contains(&merged_a, &head).await.unwrap(), Some(true));
        assert_eq!(
            forge.contains(&merged_a, &before).await.unwrap(),
            Some(false)
        );
        let unknown = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(forge.contains(&merged_a, unknown).await.unwrap(), None);
        assert_eq!(forge.contains(&merged_a, "main").await.unwrap(), None);
        assert_eq!(forge.merge_commit(999).await.unwrap(), None);
    }

    #[tokio::test]
    async fn branches_created_concurrently_for_the_same_request_end_as_one() {
        let (_dir, forge) = forge().await;
        let files = vec![file("ws/a.yaml", "a: 1\n")];
        let mut tasks = Vec::new();
        for _ in 0..6 {
            let forge = forge.clone();
            let spec = spec("mirante/3-a", files.clone());
            tasks.push(tokio::spawn(
                async move { forge.create_branch(&spec).await },
            ));
        }
        let mut tips = Vec::new();
        for task in tasks {
            tips.push(task.await.unwrap().unwrap());
        }
        tips.dedup();
        assert_eq!(tips.len(), 1, "{tips:?}");
        assert_eq!(forge.branch_head("mirante/3-a").await.unwrap(), tips.pop());
    }

    #[test]
    fn links_point_at_the_request_page() {
        assert_eq!(
            request_link("http://p", "mirante/12-gpu-x"),
            "http://p/requests/12/change"
        );
        assert_eq!(request_link("http://p", "feature/x"), "http://p/requests");
    }
}
