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
//! Git work is blocking and runs on tokio's blocking pool. The repository is usually bare (the
//! one the portal creates is); with a non-bare one, Mirante moves branch references only and
//! never touches the working tree.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use chrono::Utc;
use git2::{
    ErrorCode, FileMode, ObjectType, Oid, Repository, RepositoryInitOptions, Signature,
    build::TreeUpdateBuilder,
};

use super::{
    BranchSpec, DirLimits, DirRead, FileChange, Forge, ForgeError, ForgeKind, ForgeResult,
    MergeStyle, PullRequest, PullRequestSpec, PullRequestState,
};
use crate::{db::Db, selfservice::store::LocalPullRequest};

/// Who commits what the portal writes by itself (the first commit, merge commits).
const PORTAL_NAME: &str = "Mirante";
const PORTAL_EMAIL: &str = "mirante@localhost";

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

    async fn git<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Repository) -> ForgeResult<T> + Send + 'static,
    ) -> ForgeResult<T> {
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let repo = open(&path)?;
            work(&repo)
        })
        .await
        .map_err(|e| ForgeError::Other(format!("git task failed: {e}")))?
    }
}

/// The portal page of the request a `mirante/<id>-<slug>` branch belongs to (the local forge's
/// pull requests are shown there); the request list for any other branch.
fn request_link(public_url: &str, branch: &str) -> String {
    let id = branch
        .strip_prefix("mirante/")
        .and_then(|rest| rest.split('-').next())
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
    match id {
        Some(id) => format!("{public_url}/requests/{id}"),
        None => format!("{public_url}/requests"),
    }
}

fn open(path: &Path) -> ForgeResult<Repository> {
    Repository::open(path).map_err(|e| {
        ForgeError::Unavailable(format!(
            "cannot open the monorepo at {}: {}",
            path.display(),
            e.message()
        ))
    })
}

fn git_error(e: git2::Error) -> ForgeError {
    match e.code() {
        ErrorCode::NotFound => ForgeError::NotFound(e.message().to_owned()),
        ErrorCode::Exists => ForgeError::Conflict(e.message().to_owned()),
        ErrorCode::Locked => ForgeError::Unavailable(e.message().to_owned()),
        _ => ForgeError::Other(e.message().to_owned()),
    }
}

fn branch_ref(branch: &str) -> ForgeResult<String> {
    let name = format!("refs/heads/{branch}");
    if git2::Reference::is_valid_name(&name) {
        Ok(name)
    } else {
        Err(ForgeError::Rejected(format!(
            "`{branch}` is not a valid branch name"
        )))
    }
}

fn tip(repo: &Repository, branch: &str) -> ForgeResult<Option<Oid>> {
    match repo.find_reference(&branch_ref(branch)?) {
        Ok(r) => Ok(r.target()),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(git_error(e)),
    }
}

/// The commit a branch name or a commit id names.
fn resolve(repo: &Repository, rev: &str) -> ForgeResult<Option<Oid>> {
    if let Some(id) = tip(repo, rev).ok().flatten() {
        return Ok(Some(id));
    }
    match Oid::from_str(rev) {
        Ok(id) if rev.len() == 40 => match repo.find_commit(id) {
            Ok(c) => Ok(Some(c.id())),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(git_error(e)),
        },
        _ => Ok(None),
    }
}

/// Whether `path` is a plain relative path inside the repository: `/`-separated, no empty,
/// `.` or `..` segment, nothing under `.git`, no control characters.
pub fn is_safe_path(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= 4096
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.chars().any(char::is_control)
        && path
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != ".." && seg != ".git")
}

fn signature(name: &str, email: &str) -> Signature<'static> {
    Signature::now(name, email).unwrap_or_else(|_| {
        // A name git refuses (angle brackets, only blanks): the portal signs instead.
        Signature::now(PORTAL_NAME, PORTAL_EMAIL).expect("a constant signature is valid")
    })
}

/// The tree of `base` with `files` added or replaced.
fn tree_with(repo: &Repository, base: Oid, files: &[FileChange]) -> ForgeResult<Oid> {
    let base_tree = repo
        .find_commit(base)
        .and_then(|c| c.tree())
        .map_err(git_error)?;
    let mut update = TreeUpdateBuilder::new();
    let mut seen = std::collections::HashSet::new();
    for file in files {
        if !is_safe_path(&file.path) {
            return Err(ForgeError::Rejected(format!(
                "`{}` is not a safe path in the repository",
                file.path
            )));
        }
        if !seen.insert(file.path.as_str()) {
            return Err(ForgeError::Rejected(format!(
                "`{}` appears twice in one commit",
                file.path
            )));
        }
        let blob = repo.blob(file.content.as_bytes()).map_err(git_error)?;
        update.upsert(file.path.as_str(), blob, FileMode::Blob);
    }
    update
        .create_updated(repo, &base_tree)
        .map_err(|e| ForgeError::Rejected(format!("cannot build the commit: {}", e.message())))
}

fn create_branch_blocking(repo: &Repository, spec: &BranchSpec) -> ForgeResult<String> {
    let name = branch_ref(&spec.branch)?;
    if spec.files.is_empty() {
        return Err(ForgeError::Rejected(
            "a commit needs at least one file".into(),
        ));
    }
    if let Some(existing) = tip(repo, &spec.branch)? {
        return reuse(repo, existing, spec);
    }
    let base = tip(repo, &spec.base)?
        .ok_or_else(|| ForgeError::NotFound(format!("base branch `{}`", spec.base)))?;
    let tree_id = tree_with(repo, base, &spec.files)?;
    let tree = repo.find_tree(tree_id).map_err(git_error)?;
    let parent = repo.find_commit(base).map_err(git_error)?;
    let author = signature(&spec.author.name, &spec.author.email);
    let committer = signature(PORTAL_NAME, PORTAL_EMAIL);
    let commit = repo
        .commit(None, &author, &committer, &spec.message, &tree, &[&parent])
        .map_err(git_error)?;
    for _ in 0..200 {
        match repo.reference(&name, commit, false, "mirante: branch for a request") {
            Ok(_) => return Ok(commit.to_string()),
            // Another worker created it between our look and our write: theirs stands if it
            // holds the same files.
            Err(e) if e.code() == ErrorCode::Exists => {
                let existing = tip(repo, &spec.branch)?
                    .ok_or_else(|| ForgeError::Other("branch vanished while created".into()))?;
                return reuse(repo, existing, spec);
            }
            // Another worker is writing it right now (it holds the reference's lock file):
            // wait for it, then judge what it wrote; try again if it wrote nothing.
            Err(e) if e.code() == ErrorCode::Locked => {
                std::thread::sleep(std::time::Duration::from_millis(5));
                if let Some(existing) = tip(repo, &spec.branch)? {
                    return reuse(repo, existing, spec);
                }
            }
            Err(e) => return Err(git_error(e)),
        }
    }
    Err(ForgeError::Unavailable(format!(
        "branch `{}` stayed locked by another writer",
        spec.branch
    )))
}

/// An existing branch is ours to reuse when its tip is one commit on top of some commit of
/// the base line holding exactly `spec.files` on top of its parent.
fn reuse(repo: &Repository, existing: Oid, spec: &BranchSpec) -> ForgeResult<String> {
    let commit = repo.find_commit(existing).map_err(git_error)?;
    if commit.parent_count() == 1 {
        let parent = commit.parent_id(0).map_err(git_error)?;
        if tree_with(repo, parent, &spec.files)? == commit.tree_id() {
            return Ok(existing.to_string());
        }
    }
    Err(ForgeError::Conflict(format!(
        "branch `{}` exists with other content",
        spec.branch
    )))
}

/// Merges `branch` into `base`; returns the base's new tip.
fn merge_blocking(
    repo: &Repository,
    base: &str,
    branch: &str,
    style: MergeStyle,
    message: &str,
) -> ForgeResult<String> {
    let base_ref = branch_ref(base)?;
    // The base may move between reading it and moving it (another merge); try again then.
    for _ in 0..5 {
        let head = tip(repo, base)?
            .ok_or_else(|| ForgeError::NotFound(format!("base branch `{base}`")))?;
        let theirs =
            tip(repo, branch)?.ok_or_else(|| ForgeError::NotFound(format!("branch `{branch}`")))?;
        if head == theirs || repo.graph_descendant_of(head, theirs).map_err(git_error)? {
            // Already in the base (a merge whose record was not written yet).
            return Ok(head.to_string());
        }
        let new_tip = if style == MergeStyle::FastForward
            && repo.graph_descendant_of(theirs, head).map_err(git_error)?
        {
            theirs
        } else {
            let ours_commit = repo.find_commit(head).map_err(git_error)?;
            let theirs_commit = repo.find_commit(theirs).map_err(git_error)?;
            let mut index = repo
                .merge_commits(&ours_commit, &theirs_commit, None)
                .map_err(git_error)?;
            if index.has_conflicts() {
                let mut paths: Vec<String> = index
                    .conflicts()
                    .map_err(git_error)?
                    .filter_map(Result::ok)
                    .filter_map(|c| c.our.or(c.their).or(c.ancestor))
                    .map(|e| String::from_utf8_lossy(&e.path).into_owned())
                    .collect();
                paths.sort();
                paths.dedup();
                return Err(ForgeError::Conflict(format!(
                    "`{branch}` conflicts with `{base}` in: {}",
                    paths.join(", ")
                )));
            }
            let tree_id = index.write_tree_to(repo).map_err(git_error)?;
            let tree = repo.find_tree(tree_id).map_err(git_error)?;
            let sig = signature(PORTAL_NAME, PORTAL_EMAIL);
            repo.commit(
                None,
                &sig,
                &sig,
                message,
                &tree,
                &[&ours_commit, &theirs_commit],
            )
            .map_err(git_error)?
        };
        match repo.reference_matching(&base_ref, new_tip, true, head, message) {
            Ok(_) => return Ok(new_tip.to_string()),
            Err(e) if matches!(e.code(), ErrorCode::Modified | ErrorCode::Locked) => continue,
            Err(e) => return Err(git_error(e)),
        }
    }
    Err(ForgeError::Unavailable(format!(
        "`{base}` kept moving while merging `{branch}`"
    )))
}

/// Files as `(path, contents)` pairs.
pub type Files = Vec<(String, Vec<u8>)>;

/// Reads every file under `dir` (a tree path, `""` for the root) on `rev`: the commit id and
/// `(path relative to dir, contents)` pairs, hidden entries left out. Blocking.
pub fn read_dir_at(repo_path: &Path, rev: &str, dir: &str) -> ForgeResult<(String, Files)> {
    let repo = open(repo_path)?;
    let commit = resolve(&repo, rev)?
        .ok_or_else(|| ForgeError::NotFound(format!("`{rev}` in {}", repo_path.display())))?;
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(git_error)?;
    let sub = if dir.is_empty() {
        tree
    } else {
        let entry = tree
            .get_path(Path::new(dir))
            .map_err(|_| ForgeError::NotFound(format!("`{dir}/` on `{rev}`")))?;
        entry
            .to_object(&repo)
            .and_then(|o| o.peel_to_tree())
            .map_err(|_| ForgeError::NotFound(format!("`{dir}/` is not a directory on `{rev}`")))?
    };
    Ok((commit.to_string(), tree_files(&repo, &sub)?))
}

/// Every file of `tree` as `(path relative to the tree, contents)` pairs in path order, hidden
/// entries left out. Blocking.
pub fn tree_files(repo: &Repository, tree: &git2::Tree<'_>) -> ForgeResult<Files> {
    let mut files = Vec::new();
    let mut failure = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
        let name = entry.name().unwrap_or("");
        if name.starts_with('.') {
            return git2::TreeWalkResult::Skip;
        }
        if entry.kind() == Some(ObjectType::Blob) {
            match entry.to_object(repo).and_then(|o| o.peel_to_blob()) {
                Ok(blob) => files.push((format!("{parent}{name}"), blob.content().to_vec())),
                Err(e) => {
                    failure = Some(git_error(e));
                    return git2::TreeWalkResult::Abort;
                }
            }
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(|e| failure.take().unwrap_or_else(|| git_error(e)))?;
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// [`Forge::read_dir`] on an open repository: the folder's tree id first, then (unless it is
/// `known`) every file below it within `limits`, hidden entries left out. Blocking.
fn read_folder_blocking(
    repo: &Repository,
    rev: &str,
    dir: &str,
    known: Option<&str>,
    limits: DirLimits,
) -> ForgeResult<DirRead> {
    let commit =
        resolve(repo, rev)?.ok_or_else(|| ForgeError::NotFound(format!("revision `{rev}`")))?;
    let root = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(git_error)?;
    let folder = if dir.is_empty() {
        root
    } else {
        let not_found = || ForgeError::NotFound(format!("`{dir}/` on `{rev}`"));
        root.get_path(Path::new(dir))
            .map_err(|_| not_found())?
            .to_object(repo)
            .and_then(|o| o.peel_to_tree())
            .map_err(|_| not_found())?
    };
    let tree = folder.id().to_string();
    if known == Some(tree.as_str()) {
        return Ok(DirRead { tree, files: None });
    }
    let mut files: Files = Vec::new();
    let mut bytes = 0u64;
    let mut failure = None;
    folder
        .walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
            let name = entry.name().unwrap_or("");
            if name.starts_with('.') {
                return git2::TreeWalkResult::Skip;
            }
            if entry.kind() != Some(ObjectType::Blob) {
                return git2::TreeWalkResult::Ok;
            }
            let read = entry
                .to_object(repo)
                .and_then(|o| o.peel_to_blob())
                .map_err(git_error)
                .and_then(|blob| {
                    bytes += blob.size() as u64;
                    limits.check_files(dir, files.len() + 1)?;
                    limits.check_bytes(dir, bytes)?;
                    Ok(blob.content().to_vec())
                });
            match read {
                Ok(content) => {
                    files.push((format!("{parent}{name}"), content));
                    git2::TreeWalkResult::Ok
                }
                Err(e) => {
                    failure = Some(e);
                    git2::TreeWalkResult::Abort
                }
            }
        })
        .map_err(|e| failure.take().unwrap_or_else(|| git_error(e)))?;
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(DirRead {
        tree,
        files: Some(files),
    })
}

/// Creates the monorepo at `path` when there is nothing there yet: a bare repository whose
/// `base` branch has one commit holding `files` (the demo catalog under `catalog/`). Returns
/// whether it created one; an existing repository is left as it is. Blocking.
pub fn init_monorepo(path: &Path, base: &str, files: &[FileChange]) -> ForgeResult<bool> {
    init_monorepo_with_history(
        path,
        base,
        &[SeedCommit {
            message: "Monorepo created by Mirante with the demo catalog".to_owned(),
            author: None,
            time: None,
            files: files.to_vec(),
        }],
    )
}

/// One commit of the history a new monorepo starts with.
#[derive(Debug, Clone)]
pub struct SeedCommit {
    /// The commit message.
    pub message: String,
    /// Who wrote it (name, email); the portal when none.
    pub author: Option<(String, String)>,
    /// When (seconds since the epoch, UTC); now when none.
    pub time: Option<i64>,
    /// Files added or replaced on top of the previous commit.
    pub files: Vec<FileChange>,
}

/// Creates the monorepo at `path` when there is nothing there yet: a bare repository whose
/// `base` branch holds `commits`, oldest first, each on top of the previous one. Returns
/// whether it created one; an existing repository is never rewritten. Blocking.
pub fn init_monorepo_with_history(
    path: &Path,
    base: &str,
    commits: &[SeedCommit],
) -> ForgeResult<bool> {
    if Repository::open(path).is_ok() {
        return Ok(false);
    }
    if path.exists()
        && std::fs::read_dir(path)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(ForgeError::Other(format!(
            "{} exists and is not a git repository",
            path.display()
        )));
    }
    if commits.is_empty() {
        return Err(ForgeError::Rejected(
            "a new monorepo needs at least one commit".into(),
        ));
    }
    let name = branch_ref(base)?;
    let mut options = RepositoryInitOptions::new();
    options.bare(true).mkpath(true).initial_head(&name);
    let repo = Repository::init_opts(path, &options).map_err(git_error)?;
    let mut tree_id = repo
        .treebuilder(None)
        .and_then(|b| b.write())
        .map_err(git_error)?;
    let mut parent: Option<Oid> = None;
    for seed in commits {
        let mut update = TreeUpdateBuilder::new();
        for file in &seed.files {
            if !is_safe_path(&file.path) {
                return Err(ForgeError::Rejected(format!(
                    "`{}` is not a safe path",
                    file.path
                )));
            }
            let blob = repo.blob(file.content.as_bytes()).map_err(git_error)?;
            update.upsert(file.path.as_str(), blob, FileMode::Blob);
        }
        let previous = repo.find_tree(tree_id).map_err(git_error)?;
        tree_id = update.create_updated(&repo, &previous).map_err(git_error)?;
        let tree = repo.find_tree(tree_id).map_err(git_error)?;
        let sig = seed_signature(seed)?;
        let parents = parent
            .map(|id| repo.find_commit(id))
            .transpose()
            .map_err(git_error)?;
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        parent = Some(
            repo.commit(Some(&name), &sig, &sig, &seed.message, &tree, &parents)
                .map_err(git_error)?,
        );
    }
    Ok(true)
}

fn seed_signature(seed: &SeedCommit) -> ForgeResult<Signature<'static>> {
    let (name, email) = seed
        .author
        .clone()
        .unwrap_or_else(|| (PORTAL_NAME.to_owned(), PORTAL_EMAIL.to_owned()));
    match seed.time {
        None => Ok(signature(&name, &email)),
        Some(at) => Signature::new(&name, &email, &git2::Time::new(at, 0)).map_err(git_error),
    }
}

#[async_trait]
impl Forge for LocalForge {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Local
    }

    async fn branch_head(&self, branch: &str) -> ForgeResult<Option<String>> {
        let branch = branch.to_owned();
        self.git(move |repo| Ok(tip(repo, &branch)?.map(|id| id.to_string())))
            .await
    }

    async fn read_file(&self, rev: &str, path: &str) -> ForgeResult<Option<String>> {
        let (rev, path) = (rev.to_owned(), path.to_owned());
        self.git(move |repo| {
            if !is_safe_path(&path) {
                return Ok(None);
            }
            let commit = resolve(repo, &rev)?
                .ok_or_else(|| ForgeError::NotFound(format!("revision `{rev}`")))?;
            let tree = repo
                .find_commit(commit)
                .and_then(|c| c.tree())
                .map_err(git_error)?;
            let Ok(entry) = tree.get_path(Path::new(&path)) else {
                return Ok(None);
            };
            match entry.to_object(repo).and_then(|o| o.peel_to_blob()) {
                Ok(blob) => Ok(Some(String::from_utf8_lossy(blob.content()).into_owned())),
                // A directory is not a file.
                Err(_) => Ok(None),
            }
        })
        .await
    }

    async fn path_exists(&self, rev: &str, path: &str) -> ForgeResult<bool> {
        let (rev, path) = (rev.to_owned(), path.trim_end_matches('/').to_owned());
        self.git(move |repo| {
            if !is_safe_path(&path) {
                return Ok(false);
            }
            let commit = resolve(repo, &rev)?
                .ok_or_else(|| ForgeError::NotFound(format!("revision `{rev}`")))?;
            let tree = repo
                .find_commit(commit)
                .and_then(|c| c.tree())
                .map_err(git_error)?;
            Ok(tree.get_path(Path::new(&path)).is_ok())
        })
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
        self.git(move |repo| {
            if !dir.is_empty() && !is_safe_path(&dir) {
                return Err(ForgeError::NotFound(format!(
                    "`{dir}/` is not a folder path"
                )));
            }
            read_folder_blocking(repo, &rev, &dir, known.as_deref(), limits)
        })
        .await
    }

    async fn create_branch(&self, spec: &BranchSpec) -> ForgeResult<String> {
        let spec = spec.clone();
        self.git(move |repo| create_branch_blocking(repo, &spec))
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
            .git(move |repo| Ok((tip(repo, &branch)?.is_some(), tip(repo, &base)?.is_some())))
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
        let id = i64::try_from(number)
            .map_err(|_| ForgeError::NotFound(format!("pull request #{number}")))?;
        let row = self
            .db
            .local_pull_request(id)
            .await
            .map_err(|e| ForgeError::Unavailable(format!("database: {e}")))?
            .ok_or_else(|| ForgeError::NotFound(format!("pull request #{number}")))?;
        self.pull_request_of(&row)
    }

    async fn merge(&self, number: u64, style: MergeStyle) -> ForgeResult<PullRequest> {
        let id = i64::try_from(number)
            .map_err(|_| ForgeError::NotFound(format!("pull request #{number}")))?;
        let row = self
            .db
            .local_pull_request(id)
            .await
            .map_err(|e| ForgeError::Unavailable(format!("database: {e}")))?
            .ok_or_else(|| ForgeError::NotFound(format!("pull request #{number}")))?;
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
            .git(move |repo| merge_blocking(repo, &base, &branch, style, &message))
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

    use super::*;
    use crate::selfservice::forge::CommitAuthor;

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
        assert_eq!(first.url, "http://portal.test/requests/7");
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
            "http://p/requests/12"
        );
        assert_eq!(request_link("http://p", "feature/x"), "http://p/requests");
    }
}
