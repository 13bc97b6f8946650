//! The devops monorepo's git plumbing: every `git2` call of the server lives under this folder,
//! as blocking functions over a repository path (callers on tokio run them on the blocking
//! pool). The local forge builds its branches, merges and folder reads from them; the catalog
//! source, the catalog history and the IaC reference check read through them; nothing else
//! opens a repository.
//!
//! - [`read`]: a folder's files at a revision, one file, whether a path exists.
//! - [`change`]: what a branch proposes against its base (its commits, each file's diff).
//! - [`write`]: a branch with one commit holding given files, reused when it already holds
//!   them; a merge moved with a compare-and-swap on the base.
//! - [`seed`]: a new bare monorepo with its first commits.
//! - [`history`]: the catalog's history along the branch's first parents.
//! - [`lookup`]: the IaC files the catalog's references point at, for the lint.
//!
//! The repository is usually bare (the one the portal creates is); with a non-bare one,
//! Mirante moves branch references only and never touches the working tree.

pub(crate) mod change;
pub(crate) mod history;
pub(crate) mod lookup;
pub(crate) mod read;
pub(crate) mod seed;
pub(crate) mod write;

use std::path::Path;

use git2::{ErrorCode, Oid, Repository, Signature};
use mirante_domain::monorepo::TooLarge;

pub use read::{read_dir_at, tree_files};
pub use seed::{SeedCommit, init_monorepo, init_monorepo_with_history};

/// What went wrong in the repository. The local forge maps each kind onto the forge error of
/// the same name, and the messages are worded alike, so a failure reads the same whether it
/// came through the forge or from a direct read (the catalog source, its history).
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No such revision, branch, folder or file.
    #[error("not found on the forge: {0}")]
    NotFound(String),
    /// Something with that name already exists with other content, or a merge conflicts.
    #[error("already exists on the forge: {0}")]
    Conflict(String),
    /// The repository cannot be opened or stays locked by another writer.
    #[error("the forge is unavailable: {0}")]
    Unavailable(String),
    /// The request itself cannot be written (an unsafe path, a bad branch name, no files).
    #[error("the forge rejected the request: {0}")]
    Rejected(String),
    /// A folder beyond the limits it was read with.
    #[error("too large to read: {0}")]
    TooLarge(String),
    /// Anything else git reported.
    #[error("forge error: {0}")]
    Other(String),
}

impl From<TooLarge> for GitError {
    fn from(e: TooLarge) -> Self {
        GitError::TooLarge(e.0)
    }
}

/// The result of a git call.
pub type GitResult<T> = Result<T, GitError>;

/// The commit id at the tip of `branch` in the repository at `path`, or `None` when the
/// branch does not exist.
pub fn branch_head(path: &Path, branch: &str) -> GitResult<Option<String>> {
    let repo = open(path)?;
    Ok(tip(&repo, branch)?.map(|id| id.to_string()))
}

/// Whether the commit `descendant` contains the commit `ancestor` (is it, or has it as an
/// ancestor): `None` when either is not a commit id of the repository.
pub fn contains(path: &Path, ancestor: &str, descendant: &str) -> GitResult<Option<bool>> {
    let repo = open(path)?;
    let commit = |rev: &str| {
        Oid::from_str(rev)
            .ok()
            .filter(|_| rev.len() == 40)
            .and_then(|id| repo.find_commit(id).ok())
            .map(|c| c.id())
    };
    let (Some(a), Some(d)) = (commit(ancestor), commit(descendant)) else {
        return Ok(None);
    };
    if a == d {
        return Ok(Some(true));
    }
    repo.graph_descendant_of(d, a).map(Some).map_err(git_error)
}

/// Who commits what the portal writes by itself (the first commit, merge commits).
pub(super) const PORTAL_NAME: &str = "Mirante";
pub(super) const PORTAL_EMAIL: &str = "mirante@localhost";

pub(super) fn open(path: &Path) -> GitResult<Repository> {
    Repository::open(path).map_err(|e| {
        GitError::Unavailable(format!(
            "cannot open the monorepo at {}: {}",
            path.display(),
            e.message()
        ))
    })
}

pub(super) fn git_error(e: git2::Error) -> GitError {
    match e.code() {
        ErrorCode::NotFound => GitError::NotFound(e.message().to_owned()),
        ErrorCode::Exists => GitError::Conflict(e.message().to_owned()),
        ErrorCode::Locked => GitError::Unavailable(e.message().to_owned()),
        _ => GitError::Other(e.message().to_owned()),
    }
}

pub(super) fn branch_ref(branch: &str) -> GitResult<String> {
    let name = format!("refs/heads/{branch}");
    if git2::Reference::is_valid_name(&name) {
        Ok(name)
    } else {
        Err(GitError::Rejected(format!(
            "`{branch}` is not a valid branch name"
        )))
    }
}

pub(super) fn tip(repo: &Repository, branch: &str) -> GitResult<Option<Oid>> {
    match repo.find_reference(&branch_ref(branch)?) {
        Ok(r) => Ok(r.target()),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(git_error(e)),
    }
}

/// The commit a branch name or a commit id names.
pub(super) fn resolve(repo: &Repository, rev: &str) -> GitResult<Option<Oid>> {
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

pub(super) fn signature(name: &str, email: &str) -> Signature<'static> {
    Signature::now(name, email).unwrap_or_else(|_| {
        // A name git refuses (angle brackets, only blanks): the portal signs instead.
        Signature::now(PORTAL_NAME, PORTAL_EMAIL).expect("a constant signature is valid")
    })
}
