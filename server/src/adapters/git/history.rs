//! The catalog's history, read from the monorepo's git history at read time.
//!
//! The history of a git catalog source is the first-parent line of its branch: each commit
//! whose catalog folder differs from its parent's is a revision, parsed with the same loader
//! as the catalog in force. Each revision's files are named by their blob ids, and only the
//! blobs that were not in the revision before are read and parsed (a catalog commit usually
//! changes one file of many). A revision that does not load is skipped and reported, never
//! fatal. The result is kept in memory keyed by the branch tip: a read finding the same tip
//! answers from the cache; a tip that moved forward is extended with the new commits only; a
//! tip that was rewritten is read again from scratch. Nothing of it is stored in the
//! database: the monorepo stays the only source of truth (ADR 0011).
//!
//! Git work is blocking: callers run [`HistoryCache::get`] on the blocking pool.

use std::{
    path::Path,
    sync::{Arc, Mutex, PoisonError},
};

use chrono::DateTime;
use git2::{ObjectType, Oid, Repository};
use mirante_domain::{
    Diagnostics,
    history::{CatalogHistory, FileStates, HistoryBuilder, NoHistory, Revision},
    load::{self, RevisionLoader},
};

use super::read::tree_blobs;
use crate::adapters::catalog_source::CatalogSource;

/// Most commits walked back from the tip in one read; a longer history starts at the oldest one reached
/// (and says it is truncated), so one read stays bounded on a monorepo with years of commits.
pub(crate) const MAX_COMMITS: usize = 20_000;

/// The history of a catalog source, cached by branch tip.
pub struct HistoryCache {
    source: CatalogSource,
    /// One computation at a time; a reader arriving meanwhile waits and gets its result.
    cached: Mutex<Option<Cached>>,
}

impl std::fmt::Debug for HistoryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryCache")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// What a computation leaves for the next one.
struct Cached {
    /// The tip it was computed at.
    tip: Oid,
    /// The catalog folder's tree at the tip (none when the folder is absent).
    tree: Option<Oid>,
    /// The builder, to be fed the commits after `tip`; it shares the history it answered.
    builder: HistoryBuilder,
}

impl HistoryCache {
    /// The history of `source`; nothing is read until the first [`Self::get`].
    pub fn new(source: CatalogSource) -> Self {
        HistoryCache {
            source,
            cached: Mutex::new(None),
        }
    }

    /// The history at the branch's current tip. Blocking.
    pub fn get(&self) -> Result<Arc<CatalogHistory>, NoHistory> {
        let (repo, branch, dir) = match &self.source {
            CatalogSource::Embedded => return Err(NoHistory::Embedded),
            CatalogSource::Dir { .. } => return Err(NoHistory::Directory),
            CatalogSource::Git { repo, branch, dir } => (repo, branch, dir),
        };
        let mut cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        match compute(repo, branch, dir, cached.take()) {
            Ok(Some(mut fresh)) => {
                let history = fresh.builder.history(Some(fresh.tip.to_string()));
                *cached = Some(fresh);
                Ok(history)
            }
            Ok(None) => Ok(Arc::new(CatalogHistory::default())),
            Err(error) => {
                tracing::error!(%error, monorepo = %repo.display(), "cannot read the catalog history");
                Err(NoHistory::Unreadable)
            }
        }
    }

    /// [`Self::get`] on the blocking pool.
    pub async fn get_async(self: &Arc<Self>) -> Result<Arc<CatalogHistory>, NoHistory> {
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || me.get())
            .await
            .unwrap_or(Err(NoHistory::Unreadable))
    }
}

/// The history at the tip of `branch`, extending `previous` when the tip moved forward along
/// its first-parent line. `None` when the branch does not exist.
fn compute(
    repo_path: &Path,
    branch: &str,
    dir: &str,
    previous: Option<Cached>,
) -> Result<Option<Cached>, git2::Error> {
    let repo = Repository::open(repo_path)?;
    let Some(tip) = repo
        .find_reference(&format!("refs/heads/{branch}"))
        .ok()
        .and_then(|r| r.target())
    else {
        return Ok(None);
    };
    if previous.as_ref().is_some_and(|p| p.tip == tip) {
        return Ok(previous);
    }
    // Walk back along first parents to the tip already read, or to the first commit.
    let mut chain = Vec::new();
    let mut reached_previous = false;
    let mut cursor = Some(repo.find_commit(tip)?);
    let mut truncated = false;
    while let Some(commit) = cursor {
        if previous.as_ref().is_some_and(|p| p.tip == commit.id()) {
            reached_previous = true;
            break;
        }
        if chain.len() >= MAX_COMMITS {
            truncated = true;
            break;
        }
        chain.push(commit.id());
        cursor = commit.parents().next();
    }
    let (mut builder, mut tree) = match previous {
        Some(p) if reached_previous => (p.builder, p.tree),
        // The branch was rewritten (or first read): start over.
        _ => (HistoryBuilder::new(), None),
    };
    if truncated {
        builder.truncated();
    }
    // The revisions: each commit whose catalog folder differs from the one before it.
    let mut revisions = Vec::new();
    for id in chain.iter().rev() {
        let commit = repo.find_commit(*id)?;
        let catalog = catalog_tree(&commit, dir)?;
        if catalog == tree {
            continue;
        }
        tree = catalog;
        revisions.push((revision_of(&commit), catalog));
    }
    // The files of the last revision read, parsed; dropped with the walk.
    let mut loader = RevisionLoader::new();
    for window in revisions.chunks(WINDOW) {
        for ((revision, _), loaded) in window.iter().zip(load_trees(&repo, window, &mut loader)) {
            match loaded {
                Ok(files) => builder.revision(revision, files),
                Err(error) => builder.broken(revision, error),
            }
        }
    }
    Ok(Some(Cached { tip, tree, builder }))
}

/// Revisions whose catalogs are read and parsed one after the other, then checked side by
/// side ([`RevisionLoader::item_states_each`]); bounds the files held at once.
const WINDOW: usize = 16;

/// The id of the catalog folder's tree in `commit`, if it has one.
fn catalog_tree(commit: &git2::Commit<'_>, dir: &str) -> Result<Option<Oid>, git2::Error> {
    let root = commit.tree()?;
    if dir.is_empty() {
        return Ok(Some(root.id()));
    }
    Ok(root
        .get_path(Path::new(dir))
        .ok()
        .filter(|e| e.kind() == Some(ObjectType::Tree))
        .map(|e| e.id()))
}

/// Loads the catalog of each revision (the catalog folder's tree, none when the commit has
/// no such folder) as the catalog source does, into item states by file; the loader's first
/// problem (and how many there were) for a revision that does not load. Only the blobs
/// `loader` did not see in the revision before are read.
fn load_trees(
    repo: &Repository,
    revisions: &[(Revision, Option<Oid>)],
    loader: &mut RevisionLoader<Oid>,
) -> Vec<Result<Vec<FileStates>, String>> {
    // What each revision's tree holds; the files of those that list go to the loader.
    let mut to_load = Vec::new();
    let listed: Vec<Listing> = revisions
        .iter()
        .map(|(_, tree)| match tree.map(|id| catalog_files(repo, id)) {
            None => Listing::Absent,
            Some(Err(error)) => Listing::Unlisted(error),
            Some(Ok(files)) => {
                to_load.push(files);
                Listing::Files
            }
        })
        .collect();
    let read = |id: &Oid| {
        repo.find_blob(*id)
            .map(|blob| blob.content().to_vec())
            .map_err(|e| format!("cannot read: {}", e.message()))
    };
    let mut loaded = loader.item_states_each(to_load, read).into_iter();
    listed
        .into_iter()
        .map(|listing| match listing {
            Listing::Absent => Ok(Vec::new()),
            Listing::Unlisted(error) => Err(error),
            Listing::Files => loaded
                .next()
                .unwrap_or_else(|| Err(Diagnostics::default()))
                .map_err(first_problem),
        })
        .collect()
}

/// What a revision's catalog folder holds, as far as its tree is read.
enum Listing {
    /// No catalog folder: a catalog of nothing.
    Absent,
    /// The folder's tree could not be read.
    Unlisted(String),
    /// Catalog files, handed to the loader.
    Files,
}

/// The catalog's files in a tree: path and blob id.
fn catalog_files(repo: &Repository, tree_id: Oid) -> Result<Vec<(String, Oid)>, String> {
    let tree = repo
        .find_tree(tree_id)
        .map_err(|e| e.message().to_owned())?;
    Ok(tree_blobs(&tree)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|(path, _)| load::is_catalog_path(path))
        .collect())
}

/// The first problem of a revision that does not load, and how many more there were.
fn first_problem(diagnostics: Diagnostics) -> String {
    let first = diagnostics
        .iter()
        .next()
        .map(ToString::to_string)
        .unwrap_or_else(|| "the catalog does not load".to_owned());
    match diagnostics.len() {
        0 | 1 => first,
        n => format!("{first} (and {} more problems)", n - 1),
    }
}

fn revision_of(commit: &git2::Commit<'_>) -> Revision {
    let date = DateTime::from_timestamp(commit.time().seconds(), 0)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default();
    Revision {
        commit: commit.id().to_string(),
        date,
        author: commit.author().name().unwrap_or_default().to_owned(),
        summary: commit.summary().unwrap_or_default().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use git2::{Signature, Time};
    use mirante_domain::State;

    use super::*;

    /// A bare repository written commit by commit, as a team would.
    struct Repo {
        _dir: tempfile::TempDir,
        path: PathBuf,
        time: i64,
    }

    impl Repo {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("monorepo");
            Repository::init_bare(&path).unwrap();
            Repo {
                _dir: dir,
                path,
                time: 1_780_000_000,
            }
        }

        /// Commits `files` (path, content) as the whole tree of the next commit on `main`.
        fn commit(&mut self, message: &str, files: &[(&str, &str)]) -> Oid {
            let repo = Repository::open(&self.path).unwrap();
            let mut update = git2::build::TreeUpdateBuilder::new();
            for (path, content) in files {
                update.upsert(
                    *path,
                    repo.blob(content.as_bytes()).unwrap(),
                    git2::FileMode::Blob,
                );
            }
            let empty = repo
                .find_tree(repo.treebuilder(None).unwrap().write().unwrap())
                .unwrap();
            let tree = repo
                .find_tree(update.create_updated(&repo, &empty).unwrap())
                .unwrap();
            self.time += 86_400;
            let sig = Signature::new(
                "Renata Albuquerque",
                "renata@example.org",
                &Time::new(self.time, 0),
            )
            .unwrap();
            let parent = repo
                .find_reference("refs/heads/main")
                .ok()
                .and_then(|r| r.target())
                .map(|id| repo.find_commit(id).unwrap());
            let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
            repo.commit(
                Some("refs/heads/main"),
                &sig,
                &sig,
                message,
                &tree,
                &parents,
            )
            .unwrap()
        }

        fn cache(&self) -> HistoryCache {
            HistoryCache::new(CatalogSource::Git {
                repo: self.path.clone(),
                branch: "main".to_owned(),
                dir: "catalog".to_owned(),
            })
        }
    }

    const LAYERS: &str = "layers:\n  - id: l0\n    kind: layer\n    name: Base\n";

    fn items(pairs: &[(&str, &str)]) -> String {
        let mut s = "items:\n".to_owned();
        for (id, state) in pairs {
            s.push_str(&format!(
                "  - id: {id}\n    name: {id}\n    kind: component\n    layer: l0\n    state: {state}\n"
            ));
        }
        s
    }

    fn steps(h: &CatalogHistory, id: &str) -> Vec<(Option<State>, Option<State>, String)> {
        h.item(id)
            .iter()
            .map(|c| (c.from, c.to, c.revision.summary.clone()))
            .collect()
    }

    #[test]
    fn each_state_change_is_attributed_to_the_commit_that_made_it() {
        let mut repo = Repo::new();
        repo.commit(
            "First inventory",
            &[
                ("catalog/l.yaml", LAYERS),
                ("catalog/i.yaml", &items(&[("a", "desired")])),
            ],
        );
        let declared = repo.commit(
            "Declare a",
            &[
                ("catalog/l.yaml", LAYERS),
                ("catalog/i.yaml", &items(&[("a", "declared")])),
            ],
        );
        repo.commit(
            "Validate a and add b",
            &[
                ("catalog/l.yaml", LAYERS),
                (
                    "catalog/i.yaml",
                    &items(&[("a", "validated"), ("b", "desired")]),
                ),
            ],
        );

        let h = repo.cache().get().unwrap();

        assert_eq!(
            steps(&h, "a"),
            [
                (None, Some(State::Desired), "First inventory".to_owned()),
                (
                    Some(State::Desired),
                    Some(State::Declared),
                    "Declare a".to_owned()
                ),
                (
                    Some(State::Declared),
                    Some(State::Validated),
                    "Validate a and add b".to_owned()
                ),
            ]
        );
        assert_eq!(
            steps(&h, "b"),
            [(
                None,
                Some(State::Desired),
                "Validate a and add b".to_owned()
            )]
        );
        let change = &h.item("a")[1];
        assert_eq!(change.revision.commit, declared.to_string());
        assert_eq!(change.revision.author, "Renata Albuquerque");
        assert!(
            change.revision.date.ends_with('Z'),
            "{}",
            change.revision.date
        );
        let counts: Vec<(u32, u32, u32)> = h
            .burnup
            .iter()
            .map(|p| (p.validated, p.declared, p.desired))
            .collect();
        assert_eq!(counts, [(0, 0, 1), (0, 1, 0), (1, 0, 1)]);
    }

    #[test]
    fn commits_that_leave_the_catalog_alone_are_not_revisions_and_removed_items_are_recorded() {
        let mut repo = Repo::new();
        repo.commit(
            "Inventory",
            &[
                ("catalog/l.yaml", LAYERS),
                (
                    "catalog/i.yaml",
                    &items(&[("a", "desired"), ("b", "desired")]),
                ),
            ],
        );
        repo.commit(
            "Only the README",
            &[
                ("README.md", "# devops\n"),
                ("catalog/l.yaml", LAYERS),
                (
                    "catalog/i.yaml",
                    &items(&[("a", "desired"), ("b", "desired")]),
                ),
            ],
        );
        repo.commit(
            "Drop b",
            &[
                ("catalog/l.yaml", LAYERS),
                ("catalog/i.yaml", &items(&[("a", "desired")])),
            ],
        );

        let h = repo.cache().get().unwrap();

        assert_eq!(h.burnup.len(), 2, "the README commit is no revision");
        assert_eq!(
            steps(&h, "b"),
            [
                (None, Some(State::Desired), "Inventory".to_owned()),
                (Some(State::Desired), None, "Drop b".to_owned()),
            ]
        );
    }

    #[test]
    fn a_revision_that_does_not_load_is_skipped_and_reported() {
        let mut repo = Repo::new();
        repo.commit(
            "Inventory",
            &[
                ("catalog/l.yaml", LAYERS),
                ("catalog/i.yaml", &items(&[("a", "desired")])),
            ],
        );
        repo.commit(
            "Typo",
            &[
                ("catalog/l.yaml", LAYERS),
                ("catalog/i.yaml", &items(&[("a", "wished")])),
            ],
        );
        repo.commit(
            "Fix the typo, a is declared",
            &[
                ("catalog/l.yaml", LAYERS),
                ("catalog/i.yaml", &items(&[("a", "declared")])),
            ],
        );

        let h = repo.cache().get().unwrap();

        assert_eq!(h.skipped.len(), 1);
        assert_eq!(h.skipped[0].revision.summary, "Typo");
        assert!(
            h.skipped[0].error.contains("i.yaml"),
            "{}",
            h.skipped[0].error
        );
        assert_eq!(
            steps(&h, "a"),
            [
                (None, Some(State::Desired), "Inventory".to_owned()),
                (
                    Some(State::Desired),
                    Some(State::Declared),
                    "Fix the typo, a is declared".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn a_history_longer_than_the_revisions_checked_together_is_read_in_commit_order() {
        let mut repo = Repo::new();
        let states = [
            ("desired", State::Desired),
            ("declared", State::Declared),
            ("validated", State::Validated),
        ];
        let (no_folder, broken) = (WINDOW, WINDOW + 3);
        let commits = 2 * WINDOW + 5;
        let mut expected = Vec::new();
        let mut last = None;
        for k in 0..commits {
            let summary = format!("Step {k}");
            if k == no_folder {
                repo.commit(&summary, &[("README.md", "# devops\n")]);
                if let Some(from) = last.take() {
                    expected.push((Some(from), None, summary));
                }
                continue;
            }
            let (name, state) = if k == broken {
                ("wished", State::Desired)
            } else {
                states[k % 3]
            };
            let file = items(&[("a", name)]);
            repo.commit(
                &summary,
                &[("catalog/l.yaml", LAYERS), ("catalog/i.yaml", &file)],
            );
            if k != broken && last != Some(state) {
                expected.push((last, Some(state), summary));
                last = Some(state);
            }
        }

        let h = repo.cache().get().unwrap();

        assert_eq!(steps(&h, "a"), expected);
        assert_eq!(
            h.burnup.len(),
            commits - 1,
            "every commit but the broken one"
        );
        assert_eq!(h.burnup[no_folder].total(), 0);
        let skipped: Vec<&str> = h
            .skipped
            .iter()
            .map(|s| s.revision.summary.as_str())
            .collect();
        assert_eq!(skipped, [format!("Step {broken}")]);
    }

    #[test]
    fn the_cache_answers_the_same_tip_and_follows_the_tip_when_it_moves() {
        let mut repo = Repo::new();
        repo.commit(
            "Inventory",
            &[
                ("catalog/l.yaml", LAYERS),
                ("catalog/i.yaml", &items(&[("a", "desired")])),
            ],
        );
        let cache = repo.cache();
        let first = cache.get().unwrap();

        let again = cache.get().unwrap();
        let tip = repo.commit(
            "Declare a",
            &[
                ("catalog/l.yaml", LAYERS),
                ("catalog/i.yaml", &items(&[("a", "declared")])),
            ],
        );
        let moved = cache.get().unwrap();

        assert!(Arc::ptr_eq(&first, &again), "same tip, same answer");
        assert_eq!(moved.tip.as_deref(), Some(tip.to_string().as_str()));
        assert_eq!(steps(&moved, "a").len(), 2);
        assert_eq!(
            *moved,
            *repo.cache().get().unwrap(),
            "extending equals computing afresh"
        );
    }

    #[test]
    fn a_rewritten_branch_is_read_again_from_scratch() {
        let mut repo = Repo::new();
        repo.commit(
            "Inventory",
            &[
                ("catalog/l.yaml", LAYERS),
                ("catalog/i.yaml", &items(&[("a", "desired")])),
            ],
        );
        let cache = repo.cache();
        cache.get().unwrap();
        // Another line of history replaces main.
        let other = Repository::open(&repo.path).unwrap();
        other
            .find_reference("refs/heads/main")
            .unwrap()
            .delete()
            .unwrap();
        repo.commit(
            "Fresh start",
            &[
                ("catalog/l.yaml", LAYERS),
                ("catalog/i.yaml", &items(&[("b", "validated")])),
            ],
        );

        let h = cache.get().unwrap();

        assert!(h.item("a").is_empty());
        assert_eq!(
            steps(&h, "b"),
            [(None, Some(State::Validated), "Fresh start".to_owned())]
        );
    }

    #[test]
    fn a_directory_or_the_embedded_demo_has_no_history() {
        let dir = tempfile::tempdir().unwrap();

        assert_eq!(
            HistoryCache::new(CatalogSource::dir(dir.path()))
                .get()
                .unwrap_err(),
            NoHistory::Directory
        );
        assert_eq!(
            HistoryCache::new(CatalogSource::Embedded)
                .get()
                .unwrap_err(),
            NoHistory::Embedded
        );
    }
}
