//! A new monorepo: a bare repository whose base branch starts with given commits (the demo
//! catalog, or its back-dated history).

use std::path::Path;

use git2::{FileMode, Oid, Repository, RepositoryInitOptions, Signature, build::TreeUpdateBuilder};
use mirante_domain::monorepo::{FileChange, is_safe_path};

use super::{GitError, GitResult, PORTAL_EMAIL, PORTAL_NAME, branch_ref, git_error, signature};

/// Creates the monorepo at `path` when there is nothing there yet: a bare repository whose
/// `base` branch has one commit holding `files` (the demo catalog under `catalog/`). Returns
/// whether it created one; an existing repository is left as it is. Blocking.
pub fn init_monorepo(path: &Path, base: &str, files: &[FileChange]) -> GitResult<bool> {
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
) -> GitResult<bool> {
    if Repository::open(path).is_ok() {
        return Ok(false);
    }
    if path.exists()
        && std::fs::read_dir(path)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(GitError::Other(format!(
            "{} exists and is not a git repository",
            path.display()
        )));
    }
    if commits.is_empty() {
        return Err(GitError::Rejected(
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
                return Err(GitError::Rejected(format!(
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

fn seed_signature(seed: &SeedCommit) -> GitResult<Signature<'static>> {
    let (name, email) = seed
        .author
        .clone()
        .unwrap_or_else(|| (PORTAL_NAME.to_owned(), PORTAL_EMAIL.to_owned()));
    match seed.time {
        None => Ok(signature(&name, &email)),
        Some(at) => Signature::new(&name, &email, &git2::Time::new(at, 0)).map_err(git_error),
    }
}
