//! Self-service: templates rendered from a form become a pull request on the devops monorepo,
//! followed until it is merged or closed.
//!
//! - [`forge`]: the one trait every forge (the local git repository, GitHub, GitLab,
//!   Gitea/Forgejo) implements, and what it exchanges; [`forge::local`] is the git repository
//!   on disk.
//! - [`template`]: template folders (manifest + skeleton), loaded and rendered safely into the
//!   files of a request.
//! - [`store`]: requests, their timeline, the outbox and local pull requests in the database.
//! - [`worker`]: the background worker that proposes requests and follows pull requests.
//! - [`service`]: the operations the JSON API and the web UI call, with their authorization.
//! - [`ui`]: the web UI's view of the service layer (`mirante_frontend::ssr::SelfServiceData`).
//!
//! The state machine itself is pure and lives in `mirante_domain::request`.

pub mod catalog_edit;
pub mod forge;
pub mod service;
pub mod store;
pub mod template;
pub mod ui;
pub mod worker;

use std::{path::Path, sync::Arc};

use anyhow::Context;

use self::forge::{FileChange, Forge, ForgeKind, local::LocalForge};
use crate::{config::Config, db::Db};

/// The files of the monorepo the portal creates on first start: the demo catalog under
/// `catalog/` and a README.
pub fn demo_monorepo() -> Vec<FileChange> {
    let mut files = vec![FileChange {
        path: "README.md".to_owned(),
        content: "# Devops monorepo\n\nCreated by Mirante with its demo catalog in `catalog/`. \
                  Requests made in the portal arrive as branches `mirante/<id>-<name>`.\n"
            .to_owned(),
    }];
    files.extend(
        crate::catalog::embedded_files()
            .into_iter()
            .map(|(path, bytes)| FileChange {
                path: format!("catalog/{path}"),
                content: String::from_utf8_lossy(&bytes).into_owned(),
            }),
    );
    files
}

/// The forge of the configuration. For the local forge, creates the monorepo with the demo
/// catalog when there is none yet.
pub async fn open_forge(config: &Config, db: &Db) -> anyhow::Result<Arc<dyn Forge>> {
    match config.forge {
        ForgeKind::Local => {
            let path = std::path::absolute(config.local_monorepo())
                .context("cannot resolve the monorepo path")?;
            let (init_path, base) = (path.clone(), config.base_branch.clone());
            let created = tokio::task::spawn_blocking(move || {
                forge::local::init_monorepo(&init_path, &base, &demo_monorepo())
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
pub fn catalog_source(config: &Config) -> crate::catalog::CatalogSource {
    use crate::catalog::CatalogSource;
    match (&config.catalog, config.forge) {
        (Some(dir), _) => CatalogSource::dir(dir),
        (None, ForgeKind::Local) => {
            let repo = config.local_monorepo();
            CatalogSource::Git {
                repo: std::path::absolute(&repo).unwrap_or_else(|_| Path::new(&repo).to_owned()),
                branch: config.base_branch.clone(),
                dir: "catalog".to_owned(),
            }
        }
        (None, _) => CatalogSource::Embedded,
    }
}
