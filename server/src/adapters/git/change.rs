//! What a branch proposes against its base, as a hosted forge shows a pull request: the commits
//! on it that the base did not have, and every file they change with its unified diff (git's
//! own, from `git2`).
//!
//! ```text
//! open:   merge base of (base head, branch head) ──diff──► branch head;  commits: branch ^base
//! merged: first parent of the merge commit ──diff──► merge commit;      commits: branch ^parent
//! ```

use std::path::Path;

use chrono::{DateTime, TimeZone, Utc};
use git2::{Delta, DiffOptions, Oid, Patch, Repository, Sort};

use super::{GitError, GitResult, git_error, open, resolve, tip};

/// Most commits listed; a portal branch holds one.
pub(crate) const MAX_COMMITS: usize = 50;
/// Most files listed with their diffs.
pub(crate) const MAX_FILES: usize = 300;
/// Most bytes of one file's diff; a longer one is cut and says so.
pub(crate) const MAX_DIFF_BYTES: usize = 256 * 1024;

/// One commit of the branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitLine {
    /// Its id.
    pub id: String,
    /// The first line of its message.
    pub summary: String,
    /// Its author's name.
    pub author: String,
    /// When it was authored.
    pub at: DateTime<Utc>,
}

/// How a file changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChangeKind {
    /// New.
    Added,
    /// Changed.
    Modified,
    /// Deleted.
    Deleted,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// Its path (the new one for a rename).
    pub path: String,
    /// How it changes.
    pub kind: FileChangeKind,
    /// Its unified diff (cut at [`MAX_DIFF_BYTES`], with a last line saying so); empty for a
    /// binary file.
    pub diff: String,
}

/// What a branch proposes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchChange {
    /// The commit the diff starts from.
    pub from: String,
    /// The commit it ends at (the branch's head, or the merge commit).
    pub to: String,
    /// The branch's commits the base did not have, newest first (at most [`MAX_COMMITS`]).
    pub commits: Vec<CommitLine>,
    /// The files changed, by path (at most [`MAX_FILES`]).
    pub files: Vec<ChangedFile>,
    /// Whether more files changed than are listed.
    pub more_files: bool,
}

/// What `branch` proposes against `base` in the repository at `path`; with `merge_commit`
/// (it is merged), what that merge brought to the base. `None` when the branch does not
/// exist. Blocking.
pub(crate) fn branch_change(
    path: &Path,
    base: &str,
    branch: &str,
    merge_commit: Option<&str>,
) -> GitResult<Option<BranchChange>> {
    let repo = open(path)?;
    let Some(head) = tip(&repo, branch)? else {
        return Ok(None);
    };
    let (from, to, hide) = match merge_commit {
        Some(merge) => {
            let merge = resolve(&repo, merge)?
                .ok_or_else(|| GitError::NotFound(format!("commit `{merge}`")))?;
            let parent = repo
                .find_commit(merge)
                .and_then(|c| c.parent_id(0))
                .map_err(git_error)?;
            (parent, merge, parent)
        }
        None => {
            let base_head =
                tip(&repo, base)?.ok_or_else(|| GitError::NotFound(format!("branch `{base}`")))?;
            let from = repo.merge_base(base_head, head).map_err(git_error)?;
            (from, head, base_head)
        }
    };
    let commits = commits_between(&repo, head, hide)?;
    let (files, more_files) = changed_files(&repo, from, to)?;
    Ok(Some(BranchChange {
        from: from.to_string(),
        to: to.to_string(),
        commits,
        files,
        more_files,
    }))
}

/// The commits reachable from `head` and not from `hide`, newest first.
fn commits_between(repo: &Repository, head: Oid, hide: Oid) -> GitResult<Vec<CommitLine>> {
    let mut walk = repo.revwalk().map_err(git_error)?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)
        .map_err(git_error)?;
    walk.push(head).map_err(git_error)?;
    walk.hide(hide).map_err(git_error)?;
    let mut out = Vec::new();
    for id in walk.take(MAX_COMMITS) {
        let commit = repo
            .find_commit(id.map_err(git_error)?)
            .map_err(git_error)?;
        let author = commit.author();
        out.push(CommitLine {
            id: commit.id().to_string(),
            summary: commit.summary().unwrap_or_default().to_owned(),
            author: author.name().unwrap_or_default().to_owned(),
            at: Utc
                .timestamp_opt(author.when().seconds(), 0)
                .single()
                .unwrap_or_default(),
        });
    }
    Ok(out)
}

/// The files that differ from commit `from` to commit `to`, each with its diff.
fn changed_files(repo: &Repository, from: Oid, to: Oid) -> GitResult<(Vec<ChangedFile>, bool)> {
    let tree = |id: Oid| repo.find_commit(id).and_then(|c| c.tree());
    let (old, new) = (tree(from).map_err(git_error)?, tree(to).map_err(git_error)?);
    let mut options = DiffOptions::new();
    options.context_lines(3);
    let diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut options))
        .map_err(git_error)?;
    let count = diff.deltas().len();
    let mut files = Vec::with_capacity(count.min(MAX_FILES));
    for (index, delta) in diff.deltas().enumerate().take(MAX_FILES) {
        let kind = match delta.status() {
            Delta::Added => FileChangeKind::Added,
            Delta::Deleted => FileChangeKind::Deleted,
            _ => FileChangeKind::Modified,
        };
        let file = if kind == FileChangeKind::Deleted {
            delta.old_file()
        } else {
            delta.new_file()
        };
        let path = file
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = match Patch::from_diff(&diff, index).map_err(git_error)? {
            Some(mut patch) => {
                let buf = patch.to_buf().map_err(git_error)?;
                cut(&String::from_utf8_lossy(&buf))
            }
            None => String::new(),
        };
        files.push(ChangedFile {
            path,
            kind,
            diff: text,
        });
    }
    Ok((files, count > MAX_FILES))
}

/// `diff` within [`MAX_DIFF_BYTES`], cut at a line end with a last line saying so.
fn cut(diff: &str) -> String {
    if diff.len() <= MAX_DIFF_BYTES {
        return diff.to_owned();
    }
    let end = diff[..MAX_DIFF_BYTES].rfind('\n').map_or(0, |i| i + 1);
    format!(
        "{}… the diff goes on for {} more bytes\n",
        &diff[..end],
        diff.len() - end
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::git::write::{create_branch, merge};
    use mirante_domain::monorepo::{BranchSpec, CommitAuthor, FileChange, MergeStyle};

    fn file(path: &str, content: &str) -> FileChange {
        FileChange {
            path: path.into(),
            content: content.into(),
        }
    }

    fn monorepo() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("monorepo");
        crate::adapters::git::init_monorepo(
            &path,
            "main",
            &[
                file("apps/a/values.yaml", "replicas: 1\nimage: a\n"),
                file("apps/gone/x.yaml", "kind: X\n"),
            ],
        )
        .unwrap();
        (dir, path)
    }

    fn spec(branch: &str) -> BranchSpec {
        BranchSpec {
            branch: branch.into(),
            base: "main".into(),
            message: "Scale a, add new, remove gone".into(),
            author: CommitAuthor {
                name: "Rui Researcher".into(),
                email: "rui@example.org".into(),
            },
            files: vec![
                file("apps/a/values.yaml", "replicas: 2\nimage: a\n"),
                file("apps/new/ns.yaml", "kind: Namespace\n"),
            ],
            removed: vec!["apps/gone/x.yaml".into()],
        }
    }

    #[test]
    fn an_open_branch_shows_its_commit_and_each_file_with_gits_diff() {
        let (_dir, path) = monorepo();
        create_branch(&path, &spec("mirante/1-a")).unwrap();

        let change = branch_change(&path, "main", "mirante/1-a", None)
            .unwrap()
            .unwrap();

        assert_eq!(change.commits.len(), 1);
        assert_eq!(change.commits[0].summary, "Scale a, add new, remove gone");
        assert_eq!(change.commits[0].author, "Rui Researcher");
        let kinds: Vec<(&str, FileChangeKind)> = change
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("apps/a/values.yaml", FileChangeKind::Modified),
                ("apps/gone/x.yaml", FileChangeKind::Deleted),
                ("apps/new/ns.yaml", FileChangeKind::Added),
            ]
        );
        assert!(
            change.files[0]
                .diff
                .contains("-replicas: 1\n+replicas: 2\n"),
            "{}",
            change.files[0].diff
        );
        assert!(
            change.files[2].diff.contains("+kind: Namespace"),
            "{}",
            change.files[2].diff
        );
        assert!(!change.more_files);
        assert_eq!(
            branch_change(&path, "main", "mirante/none", None).unwrap(),
            None
        );
    }

    #[test]
    fn a_merged_branch_shows_what_its_merge_brought_to_the_base() {
        let (_dir, path) = monorepo();
        create_branch(&path, &spec("mirante/2-a")).unwrap();
        let merged = merge(
            &path,
            "main",
            "mirante/2-a",
            MergeStyle::MergeCommit,
            "Merge #2",
        )
        .unwrap();

        let change = branch_change(&path, "main", "mirante/2-a", Some(&merged))
            .unwrap()
            .unwrap();

        assert_eq!(change.to, merged);
        assert_eq!(change.files.len(), 3, "{:?}", change.files);
        assert_eq!(
            change.commits.len(),
            1,
            "the branch's commit, not the merge"
        );
    }

    #[test]
    fn a_long_diff_is_cut_at_a_line_end_and_says_how_much_is_left() {
        let long = "+x\n".repeat(MAX_DIFF_BYTES);
        let shown = cut(&long);
        assert!(shown.len() < long.len());
        assert!(
            shown.ends_with("more bytes\n"),
            "{}",
            &shown[shown.len() - 60..]
        );
        assert_eq!(cut("+a\n"), "+a\n");
    }
}
