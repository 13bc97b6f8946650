//! Reading the monorepo: a folder's files at a revision (all of them, or within limits and only
//! when its tree changed), one file, whether a path exists. Hidden entries (a name starting
//! with `.`) are left out of every folder read.

use std::path::Path;

use git2::{ObjectType, Repository};
use mirante_domain::monorepo::{DirLimits, DirRead, Files, is_safe_path};

use super::{GitError, GitResult, git_error, open, resolve};

/// Reads every file under `dir` (a tree path, `""` for the root) on `rev`: the commit id and
/// `(path relative to dir, contents)` pairs, hidden entries left out. Blocking.
pub fn read_dir_at(repo_path: &Path, rev: &str, dir: &str) -> GitResult<(String, Files)> {
    let repo = open(repo_path)?;
    let commit = resolve(&repo, rev)?
        .ok_or_else(|| GitError::NotFound(format!("`{rev}` in {}", repo_path.display())))?;
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(git_error)?;
    let sub = if dir.is_empty() {
        tree
    } else {
        let entry = tree
            .get_path(Path::new(dir))
            .map_err(|_| GitError::NotFound(format!("`{dir}/` on `{rev}`")))?;
        entry
            .to_object(&repo)
            .and_then(|o| o.peel_to_tree())
            .map_err(|_| GitError::NotFound(format!("`{dir}/` is not a directory on `{rev}`")))?
    };
    Ok((commit.to_string(), tree_files(&repo, &sub)?))
}

/// Every file of `tree` as `(path relative to the tree, contents)` pairs in path order, hidden
/// entries left out. Blocking.
pub fn tree_files(repo: &Repository, tree: &git2::Tree<'_>) -> GitResult<Files> {
    tree_blobs(tree)?
        .into_iter()
        .map(|(path, id)| {
            let blob = repo.find_blob(id).map_err(git_error)?;
            Ok((path, blob.content().to_vec()))
        })
        .collect()
}

/// Every file of `tree` as `(path relative to the tree, blob id)` pairs in path order, hidden
/// entries (a name starting with `.`) and what is under them left out; no blob is read.
pub(crate) fn tree_blobs(tree: &git2::Tree<'_>) -> GitResult<Vec<(String, git2::Oid)>> {
    let mut blobs = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
        let name = entry.name().unwrap_or("");
        if name.starts_with('.') {
            return git2::TreeWalkResult::Skip;
        }
        if entry.kind() == Some(ObjectType::Blob) {
            blobs.push((format!("{parent}{name}"), entry.id()));
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(git_error)?;
    blobs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(blobs)
}

/// The folder `dir` of the repository at `path` on `rev`: its tree id first, then (unless it
/// is `known`) every file below it within `limits`, hidden entries left out. A path that is
/// not a safe folder path is not found. Blocking.
pub(crate) fn read_folder(
    path: &Path,
    rev: &str,
    dir: &str,
    known: Option<&str>,
    limits: DirLimits,
) -> GitResult<DirRead> {
    if !dir.is_empty() && !is_safe_path(dir) {
        return Err(GitError::NotFound(format!("`{dir}/` is not a folder path")));
    }
    let repo = &open(path)?;
    let commit =
        resolve(repo, rev)?.ok_or_else(|| GitError::NotFound(format!("revision `{rev}`")))?;
    let root = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(git_error)?;
    let folder = if dir.is_empty() {
        root
    } else {
        let not_found = || GitError::NotFound(format!("`{dir}/` on `{rev}`"));
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
    for (path, id) in tree_blobs(&folder)? {
        let blob = repo.find_blob(id).map_err(git_error)?;
        bytes += blob.size() as u64;
        limits.check_files(dir, files.len() + 1)?;
        limits.check_bytes(dir, bytes)?;
        files.push((path, blob.content().to_vec()));
    }
    Ok(DirRead {
        tree,
        files: Some(files),
    })
}

/// The content of `file` on `rev` in the repository at `path`, or `None` when there is no such
/// file (an unsafe path and a directory are no file). Blocking.
pub(crate) fn read_file(path: &Path, rev: &str, file: &str) -> GitResult<Option<String>> {
    if !is_safe_path(file) {
        return Ok(None);
    }
    let repo = open(path)?;
    let commit =
        resolve(&repo, rev)?.ok_or_else(|| GitError::NotFound(format!("revision `{rev}`")))?;
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(git_error)?;
    let Ok(entry) = tree.get_path(Path::new(file)) else {
        return Ok(None);
    };
    match entry.to_object(&repo).and_then(|o| o.peel_to_blob()) {
        Ok(blob) => Ok(Some(String::from_utf8_lossy(blob.content()).into_owned())),
        // A directory is not a file.
        Err(_) => Ok(None),
    }
}

/// Whether `file` (a file or a directory) exists on `rev` in the repository at `path`.
/// Blocking.
pub(crate) fn path_exists(path: &Path, rev: &str, file: &str) -> GitResult<bool> {
    let file = file.trim_end_matches('/');
    if !is_safe_path(file) {
        return Ok(false);
    }
    let repo = open(path)?;
    let commit =
        resolve(&repo, rev)?.ok_or_else(|| GitError::NotFound(format!("revision `{rev}`")))?;
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(git_error)?;
    Ok(tree.get_path(Path::new(file)).is_ok())
}
