//! Writing the monorepo: a branch with one commit on top of its base, and a merge of a branch
//! into its base.
//!
//! - A branch is one commit on top of the base holding every file of the request. Creating it
//!   again with the same files finds the existing commit (a resumed attempt); other content
//!   under the same name is a conflict.
//! - A merge is a fast-forward when the base has not moved (else a merge commit), or always a
//!   merge commit. The base is moved with a compare-and-swap on the reference, so a concurrent
//!   change to the base is never overwritten.

use std::path::Path;

use git2::{ErrorCode, FileMode, Oid, Repository, build::TreeUpdateBuilder};
use mirante_domain::monorepo::{BranchSpec, FileChange, MergeStyle, is_safe_path};

use super::{
    GitError, GitResult, PORTAL_EMAIL, PORTAL_NAME, branch_ref, git_error, open, signature, tip,
};

/// Creates `spec.branch` in the repository at `path` (see [`create_branch_in`]).
pub(crate) fn create_branch(path: &Path, spec: &BranchSpec) -> GitResult<String> {
    create_branch_in(&open(path)?, spec)
}

/// Merges `branch` into `base` in the repository at `path`; returns the base's new tip.
pub(crate) fn merge(
    path: &Path,
    base: &str,
    branch: &str,
    style: MergeStyle,
    message: &str,
) -> GitResult<String> {
    merge_in(&open(path)?, base, branch, style, message)
}

/// The tree of `base` with `files` added or replaced.
fn tree_with(repo: &Repository, base: Oid, files: &[FileChange]) -> GitResult<Oid> {
    let base_tree = repo
        .find_commit(base)
        .and_then(|c| c.tree())
        .map_err(git_error)?;
    let mut update = TreeUpdateBuilder::new();
    let mut seen = std::collections::HashSet::new();
    for file in files {
        if !is_safe_path(&file.path) {
            return Err(GitError::Rejected(format!(
                "`{}` is not a safe path in the repository",
                file.path
            )));
        }
        if !seen.insert(file.path.as_str()) {
            return Err(GitError::Rejected(format!(
                "`{}` appears twice in one commit",
                file.path
            )));
        }
        let blob = repo.blob(file.content.as_bytes()).map_err(git_error)?;
        update.upsert(file.path.as_str(), blob, FileMode::Blob);
    }
    update
        .create_updated(repo, &base_tree)
        .map_err(|e| GitError::Rejected(format!("cannot build the commit: {}", e.message())))
}

/// Creates `spec.branch` from `spec.base` with one commit holding `spec.files` and returns the
/// commit id; an existing branch holding exactly these files is returned unchanged, one with
/// other content is a conflict.
fn create_branch_in(repo: &Repository, spec: &BranchSpec) -> GitResult<String> {
    let name = branch_ref(&spec.branch)?;
    if spec.files.is_empty() {
        return Err(GitError::Rejected(
            "a commit needs at least one file".into(),
        ));
    }
    if let Some(existing) = tip(repo, &spec.branch)? {
        return reuse(repo, existing, spec);
    }
    let base = tip(repo, &spec.base)?
        .ok_or_else(|| GitError::NotFound(format!("base branch `{}`", spec.base)))?;
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
                    .ok_or_else(|| GitError::Other("branch vanished while created".into()))?;
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
    Err(GitError::Unavailable(format!(
        "branch `{}` stayed locked by another writer",
        spec.branch
    )))
}

/// An existing branch is ours to reuse when its tip is one commit on top of some commit of
/// the base line holding exactly `spec.files` on top of its parent.
fn reuse(repo: &Repository, existing: Oid, spec: &BranchSpec) -> GitResult<String> {
    let commit = repo.find_commit(existing).map_err(git_error)?;
    if commit.parent_count() == 1 {
        let parent = commit.parent_id(0).map_err(git_error)?;
        if tree_with(repo, parent, &spec.files)? == commit.tree_id() {
            return Ok(existing.to_string());
        }
    }
    Err(GitError::Conflict(format!(
        "branch `{}` exists with other content",
        spec.branch
    )))
}

/// Merges `branch` into `base`; returns the base's new tip.
fn merge_in(
    repo: &Repository,
    base: &str,
    branch: &str,
    style: MergeStyle,
    message: &str,
) -> GitResult<String> {
    let base_ref = branch_ref(base)?;
    // The base may move between reading it and moving it (another merge); try again then.
    for _ in 0..5 {
        let head =
            tip(repo, base)?.ok_or_else(|| GitError::NotFound(format!("base branch `{base}`")))?;
        let theirs =
            tip(repo, branch)?.ok_or_else(|| GitError::NotFound(format!("branch `{branch}`")))?;
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
                return Err(GitError::Conflict(format!(
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
    Err(GitError::Unavailable(format!(
        "`{base}` kept moving while merging `{branch}`"
    )))
}
