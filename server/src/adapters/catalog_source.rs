//! Where the catalog is read from: the demo catalog built in, a directory, or a folder of a
//! branch of the monorepo (read through [`crate::adapters::git`]).

use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};
use mirante_domain::{
    diagnostic::Diagnostics,
    load::{self, LoadedCatalog},
};
use serde::Serialize;

/// The demo catalog, built into the binary so that it runs anywhere with no files beside it.
static DEMO_CATALOG: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../catalog");

/// Where the catalog is read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CatalogSource {
    /// The demo catalog built into the binary.
    Embedded,
    /// A directory of YAML files.
    Dir {
        /// The directory, absolute.
        path: PathBuf,
    },
    /// A folder of a branch of a git repository: the local monorepo's `catalog/` on its base
    /// branch, so that merging a change to the catalog changes what the portal serves.
    Git {
        /// The repository, absolute.
        repo: PathBuf,
        /// The branch read.
        branch: String,
        /// The folder holding the catalog (`catalog`).
        dir: String,
    },
}

impl CatalogSource {
    /// The same source with each directory on the server's disk cut to its last component
    /// (`/srv/devops` → `devops`), for readers who are not admins.
    pub fn without_server_paths(&self) -> Self {
        let name = |p: &Path| PathBuf::from(p.file_name().unwrap_or_default());
        match self {
            CatalogSource::Embedded => CatalogSource::Embedded,
            CatalogSource::Dir { path } => CatalogSource::Dir { path: name(path) },
            CatalogSource::Git { repo, branch, dir } => CatalogSource::Git {
                repo: name(repo),
                branch: branch.clone(),
                dir: dir.clone(),
            },
        }
    }

    /// A directory source; the path is made absolute so that logs and the database say
    /// unambiguously which directory was read.
    pub fn dir(path: &Path) -> Self {
        CatalogSource::Dir {
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_owned()),
        }
    }

    /// The source as stored in the database: `embedded` or `dir:<path>`.
    pub fn describe(&self) -> String {
        match self {
            CatalogSource::Embedded => "embedded".to_owned(),
            CatalogSource::Dir { path } => format!("dir:{}", path.display()),
            CatalogSource::Git { repo, branch, dir } => {
                format!("git:{}#{branch}:{dir}", repo.display())
            }
        }
    }

    /// Reads and validates the catalog. Blocking: file I/O and parsing.
    pub fn load(&self) -> Result<LoadedCatalog, Diagnostics> {
        self.load_with_revision().map(|(loaded, _)| loaded)
    }

    /// Reads and validates the catalog, with the revision it was read at (the commit, for a
    /// git source). Blocking.
    pub fn load_with_revision(&self) -> Result<(LoadedCatalog, Option<String>), Diagnostics> {
        match self {
            CatalogSource::Embedded => Ok((load::load_bytes(embedded_files())?, None)),
            CatalogSource::Dir { path } => Ok((load::load_dir(path)?, None)),
            CatalogSource::Git { repo, branch, dir } => {
                let (commit, files) = crate::adapters::git::read_dir_at(repo, branch, dir)
                    .map_err(|e| {
                        Diagnostics(vec![mirante_domain::Diagnostic::new(
                            format!("{}#{branch}:{dir}", repo.display()),
                            0,
                            0,
                            format!("cannot read the catalog from the monorepo: {e}"),
                        )])
                    })?;
                let files = files
                    .into_iter()
                    .filter(|(path, _)| load::is_catalog_path(path))
                    .collect();
                Ok((load::load_bytes(files)?, Some(commit)))
            }
        }
    }
}

/// The files of the built-in demo catalog as (relative path, contents), chosen as
/// [`load::load_dir`] chooses them on disk (catalog files, no hidden ones), so the embedded
/// catalog hashes the same as the `catalog/` directory it was built from.
pub(crate) fn embedded_files() -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Dir<'static>, out: &mut Vec<(String, Vec<u8>)>) {
        for file in dir.files() {
            let name = file.path().to_string_lossy().replace('\\', "/");
            if load::is_catalog_path(&name) && !is_hidden(&name) {
                out.push((name, file.contents().to_vec()));
            }
        }
        for sub in dir.dirs() {
            if !is_hidden(&sub.path().to_string_lossy()) {
                walk(sub, out);
            }
        }
    }
    fn is_hidden(path: &str) -> bool {
        path.rsplit('/').next().is_some_and(|n| n.starts_with('.'))
    }
    let mut out = Vec::new();
    walk(&DEMO_CATALOG, &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
