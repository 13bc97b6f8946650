//! The monorepo as a git tree at one commit, for checking IaC references at exactly the
//! revision the catalog was read from.

use std::path::{Component, Path};

use git2::{ErrorCode, ObjectType, Oid, Repository};
use mirante_domain::lint::{Lookup, MAX_IAC_FILE_BYTES, Monorepo, is_inside, lookup_key};

/// The tree of one commit of a git repository (bare or not).
pub(crate) struct GitTreeMonorepo {
    repo: Repository,
    tree: Oid,
}

impl std::fmt::Debug for GitTreeMonorepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitTreeMonorepo")
            .field("repo", &self.repo.path())
            .field("tree", &self.tree)
            .finish()
    }
}

impl GitTreeMonorepo {
    /// The tree of `revision` (a commit id, or anything git resolves to a commit) in the
    /// repository at `repo`. The error says, in one line, why it cannot be read.
    pub(crate) fn open(repo: &Path, revision: &str) -> Result<Self, String> {
        let repository = Repository::open(repo)
            .map_err(|e| format!("the monorepo at {}: {}", repo.display(), e.message()))?;
        let tree = repository
            .revparse_single(revision)
            .and_then(|o| o.peel_to_commit())
            .map(|c| c.tree_id())
            .map_err(|e| format!("revision {revision} of the monorepo: {}", e.message()))?;
        Ok(GitTreeMonorepo {
            repo: repository,
            tree,
        })
    }
}

/// The path as git names tree entries: `/`-separated, without `.` segments.
fn tree_path(path: &str) -> String {
    Path::new(path)
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

impl Monorepo for GitTreeMonorepo {
    fn lookup(&self, path: &str, key: Option<&str>) -> Lookup {
        if !is_inside(path) {
            return Lookup::Outside;
        }
        let tree = match self.repo.find_tree(self.tree) {
            Ok(t) => t,
            Err(e) => return Lookup::Unreadable(format!("the commit's tree: {}", e.message())),
        };
        let relative = tree_path(path);
        if relative.is_empty() {
            // The root itself.
            return match key {
                None => Lookup::Found,
                Some(_) => Lookup::Unreadable("not a file".to_owned()),
            };
        }
        let entry = match tree.get_path(Path::new(&relative)) {
            Ok(e) => e,
            Err(e) if e.code() == ErrorCode::NotFound => return Lookup::MissingPath,
            Err(e) => return Lookup::Unreadable(e.message().to_owned()),
        };
        let Some(key) = key else {
            return Lookup::Found;
        };
        if entry.kind() != Some(ObjectType::Blob) {
            return Lookup::Unreadable("not a file".to_owned());
        }
        // A symbolic link is stored as a blob holding its target; following it could lead
        // anywhere, so only regular files are read.
        if entry.filemode() == i32::from(git2::FileMode::Link) {
            return Lookup::Unreadable("a symbolic link, not a file".to_owned());
        }
        let blob = match self.repo.find_blob(entry.id()) {
            Ok(b) => b,
            Err(e) => return Lookup::Unreadable(e.message().to_owned()),
        };
        if blob.size() as u64 > MAX_IAC_FILE_BYTES {
            return Lookup::Unreadable(format!(
                "larger than {} MiB",
                MAX_IAC_FILE_BYTES / 1024 / 1024
            ));
        }
        lookup_key(&relative, blob.content().to_vec(), key)
    }
}

/// A monorepo that cannot be read: every reference is reported unreadable with the reason,
/// rather than silently unchecked.
#[derive(Debug, Clone)]
pub(crate) struct Unavailable(pub String);

impl Monorepo for Unavailable {
    fn lookup(&self, path: &str, _key: Option<&str>) -> Lookup {
        if !is_inside(path) {
            return Lookup::Outside;
        }
        Lookup::Unreadable(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{Signature, Time};

    /// Commits `files` (path, contents) as the whole tree on top of `parent`; answers the
    /// commit id.
    fn commit(repo: &Repository, files: &[(&str, &str)], parent: Option<Oid>) -> Oid {
        let mut index = git2::Index::new().unwrap();
        for (path, contents) in files {
            let blob = repo.blob(contents.as_bytes()).unwrap();
            let entry = git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o100644,
                uid: 0,
                gid: 0,
                file_size: contents.len() as u32,
                id: blob,
                flags: 0,
                flags_extended: 0,
                path: path.as_bytes().to_vec(),
            };
            index.add(&entry).unwrap();
        }
        let tree = repo.find_tree(index.write_tree_to(repo).unwrap()).unwrap();
        let who = Signature::new("Test", "test@example.org", &Time::new(0, 0)).unwrap();
        let parents: Vec<git2::Commit> = parent
            .into_iter()
            .map(|p| repo.find_commit(p).unwrap())
            .collect();
        let parents: Vec<&git2::Commit> = parents.iter().collect();
        repo.commit(Some("HEAD"), &who, &who, "files", &tree, &parents)
            .unwrap()
    }

    struct History {
        _dir: tempfile::TempDir,
        path: std::path::PathBuf,
        first: Oid,
        second: Oid,
    }

    /// A repository whose first commit has the keys and whose second removed them.
    fn history() -> History {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("monorepo.git");
        let repo = Repository::init_bare(&path).unwrap();
        let first = commit(
            &repo,
            &[
                (
                    "pulumi/proxmox/Pulumi.sp.yaml",
                    "traefik-sp:\n  ha: true\n  on_boot: true\n",
                ),
                (
                    "argocd/apps.json",
                    r#"{"apps": {"grafana": {"sync": "auto"}}}"#,
                ),
                ("ansible/cfg.toml", "[pools]\nnvme = \"drbd\"\n"),
            ],
            None,
        );
        let second = commit(
            &repo,
            &[
                (
                    "pulumi/proxmox/Pulumi.sp.yaml",
                    "traefik-sp:\n  on_boot: true\n",
                ),
                ("argocd/apps.json", r#"{"apps": {}}"#),
                ("ansible/cfg.toml", "[pools]\n"),
            ],
            Some(first),
        );
        History {
            _dir: dir,
            path,
            first,
            second,
        }
    }

    #[test]
    fn keys_present_at_a_commit_are_found_there_and_missing_at_a_later_one() {
        let h = history();
        let at_first = GitTreeMonorepo::open(&h.path, &h.first.to_string()).unwrap();
        let at_second = GitTreeMonorepo::open(&h.path, &h.second.to_string()).unwrap();

        for (path, key) in [
            ("pulumi/proxmox/Pulumi.sp.yaml", "traefik-sp.ha"),
            ("argocd/apps.json", "apps.grafana.sync"),
            ("ansible/cfg.toml", "pools.nvme"),
        ] {
            assert_eq!(at_first.lookup(path, Some(key)), Lookup::Found, "{path}");
            assert_eq!(
                at_second.lookup(path, Some(key)),
                Lookup::MissingKey,
                "{path}"
            );
        }
    }

    #[test]
    fn a_path_the_commit_does_not_have_is_missing() {
        let h = history();
        let repo = GitTreeMonorepo::open(&h.path, &h.second.to_string()).unwrap();

        assert_eq!(
            repo.lookup("pulumi/proxmox/Pulumi.franca.yaml", None),
            Lookup::MissingPath
        );
        assert_eq!(
            repo.lookup("pulumi/missing/Pulumi.sp.yaml", Some("traefik-sp.ha")),
            Lookup::MissingPath
        );
    }

    #[test]
    fn a_key_the_file_does_not_have_is_missing_but_the_path_alone_is_found() {
        let h = history();
        let repo = GitTreeMonorepo::open(&h.path, &h.first.to_string()).unwrap();

        assert_eq!(
            repo.lookup("pulumi/proxmox/Pulumi.sp.yaml", Some("traefik-sp.replicas")),
            Lookup::MissingKey
        );
        assert_eq!(
            repo.lookup("./pulumi/proxmox/Pulumi.sp.yaml", None),
            Lookup::Found
        );
        assert_eq!(repo.lookup("pulumi/proxmox", None), Lookup::Found);
    }

    #[test]
    fn paths_outside_the_repository_and_folders_with_keys_are_refused() {
        let h = history();
        let repo = GitTreeMonorepo::open(&h.path, "HEAD").unwrap();

        assert_eq!(repo.lookup("../etc/passwd", None), Lookup::Outside);
        assert_eq!(repo.lookup("/etc/passwd", None), Lookup::Outside);
        assert!(matches!(
            repo.lookup("pulumi", Some("traefik-sp")),
            Lookup::Unreadable(e) if e == "not a file"
        ));
    }

    #[test]
    fn an_unknown_revision_says_which_one_it_could_not_read() {
        let h = history();

        let err =
            GitTreeMonorepo::open(&h.path, "0123456789abcdef0123456789abcdef01234567").unwrap_err();

        assert!(err.contains("0123456789abcdef"), "{err}");
    }

    #[test]
    fn every_iac_reference_of_the_demo_catalog_resolves_in_the_demo_monorepo() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("monorepo.git");
        let files = crate::app::selfservice::demo_monorepo();
        crate::adapters::git::init_monorepo(&path, "main", &files).unwrap();
        let catalog = crate::adapters::catalog_source::CatalogSource::Embedded
            .load()
            .unwrap()
            .catalog;
        let repo = GitTreeMonorepo::open(&path, "main").unwrap();

        let findings = mirante_domain::lint::lint_iac(&catalog, &repo);

        assert!(catalog.items.iter().filter(|i| i.iac.is_some()).count() >= 2);
        assert_eq!(findings, Vec::new());
    }
}
