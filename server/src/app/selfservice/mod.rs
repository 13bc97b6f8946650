//! Self-service: templates rendered from a form become a pull request on the devops monorepo,
//! followed until it is merged or closed.
//!
//! - [`template`]: template folders (manifest + skeleton), loaded and rendered safely into the
//!   files of a request.
//! - [`worker`]: the background worker that proposes requests and follows pull requests.
//! - [`proposal`]: the commit message and pull-request text the worker writes.
//! - [`deployments`]: the follower that, with Argo CD configured, follows merged resources to
//!   `syncing`, `live` or `degraded`.
//! - [`service`]: the operations the JSON API and the web UI call, with their authorization.
//! - the web UI's view of the service layer is `crate::http::ui`.
//! - [`capacity`]: what the GPU capacity ledger is computed from (the catalog, the base
//!   branch's workspace files, the requests).
//! - [`demo_history`]: the back-dated commits the demo monorepo starts with.
//! - [`kubeconfig`]: the kubeconfig and commands a researcher reaches a workspace with.
//!
//! The forges (`crate::adapters::forge`) and the requests' tables
//! (`crate::adapters::db::requests`) are adapters; the state machine itself is pure and lives in
//! `mirante_domain::request`.

pub(crate) mod capacity;
pub(crate) use mirante_domain::catalog_edit;
pub(crate) mod demo_history;
pub(crate) mod deployments;
pub mod expiry;
pub(crate) mod kubeconfig;
pub mod proposal;
pub mod service;
pub(crate) mod template;
pub mod worker;

use std::{path::Path, sync::Arc};

use anyhow::Context;

use crate::adapters::forge::Forge;
use crate::adapters::forge::ForgeKind;
use crate::adapters::forge::local::LocalForge;
use crate::adapters::forge::{self, FileChange};
use crate::{adapters::db::Db, config::Config};

/// Infrastructure-as-code files of the demo monorepo (`demo-monorepo/` in the source tree),
/// built in like the catalog: what the demo catalog's `iac:` references point at.
static DEMO_IAC: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../demo-monorepo");

/// The demo monorepo's IaC files as (path in the monorepo, contents), sorted by path; the
/// folder's own README stays out.
pub fn demo_iac_files() -> Vec<FileChange> {
    fn walk(dir: &include_dir::Dir<'static>, out: &mut Vec<FileChange>) {
        for file in dir.files() {
            let path = file.path().to_string_lossy().replace('\\', "/");
            if path != "README.md" {
                out.push(FileChange {
                    path,
                    content: String::from_utf8_lossy(file.contents()).into_owned(),
                });
            }
        }
        for sub in dir.dirs() {
            walk(sub, out);
        }
    }
    let mut out = Vec::new();
    walk(&DEMO_IAC, &mut out);
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The files of the monorepo the portal creates on first start: the demo catalog under
/// `catalog/`, the IaC files its references point at, and a README.
pub fn demo_monorepo() -> Vec<FileChange> {
    let mut files = vec![FileChange {
        path: "README.md".to_owned(),
        content: "# Devops monorepo\n\nCreated by Mirante with its demo catalog in `catalog/`. \
                  Requests made in the portal arrive as branches `mirante/<id>-<name>`.\n"
            .to_owned(),
    }];
    files.extend(
        crate::app::catalog::embedded_files()
            .into_iter()
            .map(|(path, bytes)| FileChange {
                path: format!("catalog/{path}"),
                content: String::from_utf8_lossy(&bytes).into_owned(),
            }),
    );
    files.extend(demo_iac_files());
    files
}

/// The forge of the configuration. For the local forge, creates the monorepo with the demo
/// catalog and a short back-dated history ([`demo_history`]) when there is none yet.
pub async fn open_forge(config: &Config, db: &Db) -> anyhow::Result<Arc<dyn Forge>> {
    match config.forge {
        ForgeKind::Local => {
            let path = std::path::absolute(config.local_monorepo())
                .context("cannot resolve the monorepo path")?;
            let (init_path, base) = (path.clone(), config.base_branch.clone());
            let created = tokio::task::spawn_blocking(move || {
                let files = demo_monorepo();
                match demo_history::commits(&files, chrono::Utc::now().timestamp()) {
                    Ok(commits) => {
                        crate::adapters::git::init_monorepo_with_history(&init_path, &base, &commits)
                    }
                    Err(problem) => {
                        tracing::warn!(%problem, "the demo history does not fit the demo catalog; creating the monorepo in one commit");
                        crate::adapters::git::init_monorepo(&init_path, &base, &files)
                    }
                }
            })
            .await?
            .with_context(|| format!("cannot create the local monorepo at {}", path.display()))?;
            if created {
                tracing::info!(monorepo = %path.display(), "created the local monorepo with the demo catalog");
            }
            Ok(Arc::new(LocalForge::new(
                path,
                db.clone(),
                &config.public_url(),
            )))
        }
        kind => {
            let url = config
                .forge_url
                .as_deref()
                .map(url::Url::parse)
                .transpose()
                .context("MIRANTE_FORGE_URL is not a URL")?;
            let token = config
                .forge_token
                .clone()
                .context("MIRANTE_FORGE_TOKEN is not set")?;
            let repo = config.monorepo.as_deref().unwrap_or_default().trim();
            let http = reqwest::Client::builder()
                .timeout(forge::DEFAULT_TIMEOUT)
                .user_agent(concat!("mirante/", env!("CARGO_PKG_VERSION")))
                .build()
                .context("cannot build the HTTP client for the forge")?;
            let forge = forge::hosted(kind, url.as_ref(), repo, token, http)?;
            tracing::info!(forge = %kind, monorepo = repo, "pull requests go to a hosted forge");
            Ok(forge)
        }
    }
}

/// Where the catalog comes from: `MIRANTE_CATALOG` when set; else, with the local forge, the
/// `catalog/` folder of the monorepo's base branch; else the demo catalog built in.
pub fn catalog_source(config: &Config) -> crate::app::catalog::CatalogSource {
    use crate::app::catalog::CatalogSource;
    match (&config.catalog, config.forge) {
        (Some(dir), _) => CatalogSource::dir(dir),
        (None, ForgeKind::Local) => {
            let repo = config.local_monorepo();
            CatalogSource::Git {
                repo: std::path::absolute(&repo).unwrap_or_else(|_| Path::new(&repo).to_owned()),
                branch: config.base_branch.clone(),
                dir: config.catalog_folder().to_owned(),
            }
        }
        (None, _) => CatalogSource::Embedded,
    }
}
