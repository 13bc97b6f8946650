//! Writing the monorepo: a branch with one commit on top of its base, and a merge of a branch
//! into its base.
//!
//! - A branch is one commit on top of the base holding every file of the request. Creating it
//!   again with the same files finds the existing commit (a resumed attempt); other content
//!   under the same name is a conflict.
//! - A merge is a fast-forward when the base has not moved (else a merge commit), or always a
//!   merge commit. The base is moved with a compare-and-swap on the reference, so a concurrent
//!   change to the base is never overwritten.
//! - A reference's lock file (`refs/heads/<name>.lock`, `packed-refs.lock`) that is older than
//!   [`STALE_LOCK_AFTER`] was left by a writer that died mid-write (a crash, a kill): the portal
//!   is the local monorepo's only writer and holds such a lock for milliseconds. It is removed,
//!   with a warning, and the write goes on; a young lock is waited for; a lock that cannot be
//!   removed is reported with its path and why.

use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// How old a reference's lock file must be to have been left by a writer that is gone. A live
/// writer holds one for the time of one file write; ten seconds leaves a margin for a slow
/// disk without blocking the requests behind a dead writer's lock for long.
pub(crate) const STALE_LOCK_AFTER: Duration = Duration::from_secs(10);

/// The lock files that keep `refname` from being written, with their age.
fn ref_locks(repo: &Repository, refname: &str) -> Vec<(PathBuf, Duration)> {
    [
        repo.path().join(format!("{refname}.lock")),
        repo.path().join("packed-refs.lock"),
    ]
    .into_iter()
    .filter_map(|path| {
        let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
        Some((path, modified.elapsed().unwrap_or_default()))
    })
    .collect()
}

/// Removes the lock files of `refname` that a dead writer left (older than
/// [`STALE_LOCK_AFTER`]); answers whether it removed any. One it cannot remove is an error
/// naming it, since every later write of the reference would fail on it too.
fn clear_stale_locks(repo: &Repository, refname: &str) -> GitResult<bool> {
    let mut removed = false;
    for (path, age) in ref_locks(repo, refname) {
        if age < STALE_LOCK_AFTER {
            continue;
        }
        match std::fs::remove_file(&path) {
            Ok(()) => {
                tracing::warn!(
                    lock = %path.display(),
                    age.secs = age.as_secs(),
                    "removed a stale lock file a stopped writer left in the monorepo"
                );
                removed = true;
            }
            // Another attempt removed it first.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => removed = true,
            Err(e) => {
                return Err(GitError::Unavailable(format!(
                    "`{}` is a lock file left {} s ago by a writer that stopped, and it cannot be removed ({e}); remove it by hand",
                    path.display(),
                    age.as_secs()
                )));
            }
        }
    }
    Ok(removed)
}

/// What keeps `refname` locked, for the error once waiting did not help.
fn locked_by(repo: &Repository, refname: &str) -> String {
    let locks: Vec<String> = ref_locks(repo, refname)
        .into_iter()
        .map(|(path, age)| format!("`{}`, {} ms old", path.display(), age.as_millis()))
        .collect();
    if locks.is_empty() {
        String::new()
    } else {
        format!(" ({})", locks.join("; "))
    }
}

/// The tree of `base` with `files` added or replaced and `removed` deleted.
fn tree_with(
    repo: &Repository,
    base: Oid,
    files: &[FileChange],
    removed: &[String],
) -> GitResult<Oid> {
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
    for path in removed {
        if !is_safe_path(path) || !seen.insert(path.as_str()) {
            return Err(GitError::Rejected(format!(
                "`{path}` cannot be deleted in this commit (not a safe path, or also written)"
            )));
        }
        if base_tree.get_path(Path::new(path)).is_err() {
            return Err(GitError::Rejected(format!(
                "`{path}` is not on the base to be deleted"
            )));
        }
        update.remove(path.as_str());
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
    if spec.files.is_empty() && spec.removed.is_empty() {
        return Err(GitError::Rejected(
            "a commit needs at least one file".into(),
        ));
    }
    if let Some(existing) = tip(repo, &spec.branch)? {
        return reuse(repo, existing, spec);
    }
    let base = tip(repo, &spec.base)?
        .ok_or_else(|| GitError::NotFound(format!("base branch `{}`", spec.base)))?;
    let tree_id = tree_with(repo, base, &spec.files, &spec.removed)?;
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
            // A lock a dead writer left is removed and the write tried again at once.
            Err(e) if e.code() == ErrorCode::Locked => {
                if clear_stale_locks(repo, &name)? {
                    continue;
                }
                std::thread::sleep(Duration::from_millis(5));
                if let Some(existing) = tip(repo, &spec.branch)? {
                    return reuse(repo, existing, spec);
                }
            }
            Err(e) => return Err(git_error(e)),
        }
    }
    Err(GitError::Unavailable(format!(
        "branch `{}` stayed locked by another writer{}",
        spec.branch,
        locked_by(repo, &name)
    )))
}

/// An existing branch is ours to reuse when its tip is one commit on top of some commit of
/// the base line holding exactly `spec.files` on top of its parent.
fn reuse(repo: &Repository, existing: Oid, spec: &BranchSpec) -> GitResult<String> {
    let commit = repo.find_commit(existing).map_err(git_error)?;
    if commit.parent_count() == 1 {
        let parent = commit.parent_id(0).map_err(git_error)?;
        if tree_with(repo, parent, &spec.files, &spec.removed)? == commit.tree_id() {
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
    let mut locked = false;
    // The base may move between reading it and moving it (another merge), or be locked while
    // another writer moves it; try again then.
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
            Err(e) if e.code() == ErrorCode::Modified => locked = false,
            Err(e) if e.code() == ErrorCode::Locked => {
                locked = true;
                if !clear_stale_locks(repo, &base_ref)? {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            Err(e) => return Err(git_error(e)),
        }
    }
    if locked {
        return Err(GitError::Unavailable(format!(
            "`{base}` stayed locked by another writer while merging `{branch}`{}",
            locked_by(repo, &base_ref)
        )));
    }
    Err(GitError::Unavailable(format!(
        "`{base}` kept moving while merging `{branch}`"
    )))
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use mirante_domain::monorepo::CommitAuthor;

    use super::*;
    use crate::adapters::git::init_monorepo;

    fn monorepo() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("monorepo");
        init_monorepo(
            &path,
            "main",
            &[FileChange {
                path: "README.md".into(),
                content: "# devops\n".into(),
            }],
        )
        .unwrap();
        (dir, path)
    }

    fn branch(path: &Path, name: &str) -> GitResult<String> {
        create_branch(
            path,
            &BranchSpec {
                branch: name.into(),
                base: "main".into(),
                message: "a request".into(),
                author: CommitAuthor {
                    name: "Rui Researcher".into(),
                    email: "rui@example.org".into(),
                },
                files: vec![FileChange {
                    path: format!("{name}/README.md"),
                    content: "x\n".into(),
                }],
                removed: Vec::new(),
            },
        )
    }

    /// Leaves the lock file of `refname` as a writer that stopped `age` ago would.
    fn leave_lock(path: &Path, refname: &str, age: Duration) -> PathBuf {
        let git_dir = open(path).unwrap().path().to_owned();
        let lock = git_dir.join(format!("{refname}.lock"));
        std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
        let file = std::fs::File::create(&lock).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
        lock
    }

    #[test]
    fn a_lock_a_dead_writer_left_on_a_branch_or_the_base_is_removed_and_the_write_goes_on() {
        let (_dir, path) = monorepo();
        let branch_lock = leave_lock(&path, "refs/heads/ws-a", Duration::from_secs(60));
        let created = branch(&path, "ws-a");
        let base_lock = leave_lock(&path, "refs/heads/main", Duration::from_secs(60));

        let merged = merge(&path, "main", "ws-a", MergeStyle::FastForward, "merge ws-a");

        assert_eq!(merged.unwrap(), created.unwrap());
        assert!(!branch_lock.exists() && !base_lock.exists());
    }

    #[test]
    fn a_young_lock_is_a_live_writer_s_and_is_waited_for_then_named_in_the_error() {
        let (_dir, path) = monorepo();
        branch(&path, "ws-a").unwrap();
        let lock = leave_lock(&path, "refs/heads/main", Duration::ZERO);

        let merged = merge(&path, "main", "ws-a", MergeStyle::FastForward, "merge ws-a");
        let other = leave_lock(&path, "refs/heads/ws-b", Duration::ZERO);
        let created = branch(&path, "ws-b");

        let merged = merged.unwrap_err().to_string();
        assert!(
            merged.contains("stayed locked by another writer"),
            "{merged}"
        );
        assert!(merged.contains(&lock.display().to_string()), "{merged}");
        let created = created.unwrap_err().to_string();
        assert!(created.contains(&other.display().to_string()), "{created}");
        assert!(
            lock.exists() && other.exists(),
            "a live writer's lock is left alone"
        );
    }
}
