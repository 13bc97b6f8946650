//! The devops monorepo as every layer sees it: a file to write, where a pull request stands,
//! and which paths may be written at all. The git plumbing and the forges that hold it are
//! adapters of the server; these plain values are what the store, the renderer and the worker
//! exchange with them.

use serde::{Deserialize, Serialize};

/// One file to add or replace, path relative to the repository root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Relative path with `/` separators; never absolute, never with `..`.
    pub path: String,
    /// The whole new content (UTF-8 text).
    pub content: String,
}

/// Who a commit is attributed to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitAuthor {
    /// Display name.
    pub name: String,
    /// E-mail address.
    pub email: String,
}

/// A branch with exactly one commit on top of `base` holding `files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchSpec {
    /// The new branch, e.g. `mirante/42-gpu-workspace-alice`.
    pub branch: String,
    /// The branch it starts from and will be merged into (usually `main`).
    pub base: String,
    /// The commit message.
    pub message: String,
    /// The commit's author.
    pub author: CommitAuthor,
    /// Every file the commit adds or replaces.
    pub files: Vec<FileChange>,
    /// Every file the commit deletes (paths relative to the repository root).
    #[serde(default)]
    pub removed: Vec<String>,
}

/// How a local merge is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergeStyle {
    /// Move the base to the branch's commit when the base has not moved; else a merge commit.
    FastForward,
    /// Always a merge commit.
    MergeCommit,
}

/// Files as `(path, contents)` pairs.
pub type Files = Vec<(String, Vec<u8>)>;

/// Bounds on what a forge's folder read reads, so that a folder grown by mistake can exhaust
/// neither memory nor the forge's rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirLimits {
    /// At most this many files (hidden ones not counted).
    pub max_files: usize,
    /// At most this many bytes in all the files together.
    pub max_bytes: u64,
}

impl DirLimits {
    /// [`TooLarge`] when `files` files are more than allowed in `dir`.
    pub fn check_files(&self, dir: &str, files: usize) -> Result<(), TooLarge> {
        if files > self.max_files {
            return Err(TooLarge(format!(
                "`{dir}/` holds more than {} files, more than the portal reads from one folder",
                self.max_files
            )));
        }
        Ok(())
    }

    /// [`TooLarge`] when `bytes` bytes are more than allowed in `dir`.
    pub fn check_bytes(&self, dir: &str, bytes: u64) -> Result<(), TooLarge> {
        if bytes > self.max_bytes {
            return Err(self.too_many_bytes(dir));
        }
        Ok(())
    }

    /// The error for a folder `dir` whose files hold more bytes than allowed.
    pub fn too_many_bytes(&self, dir: &str) -> TooLarge {
        TooLarge(format!(
            "`{dir}/` holds more than {} bytes, more than the portal reads from one folder",
            self.max_bytes
        ))
    }
}

/// What a forge's folder read found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirRead {
    /// The id of the folder's git tree: the same id means the same files.
    pub tree: String,
    /// Every file, path relative to the folder, sorted by path; `None` when `tree` is the one
    /// the caller already knew, in which case no file was read.
    pub files: Option<Files>,
}

/// A folder holds more files or bytes than [`DirLimits`] allow: retrying will not help until
/// the folder or the limit changes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TooLarge(pub String);

/// Where a pull request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PullRequestState {
    /// Open, waiting for review.
    Open,
    /// Merged into its base.
    Merged,
    /// Closed without merging.
    Closed,
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
