//! The consistency lint as the server runs it: the catalog in force, today's date, the
//! configured attestation age and the monorepo IaC references are checked against: the
//! repository's tree at the catalog's own commit when the catalog is read from git, else the
//! checkout `MIRANTE_IAC_ROOT` names, if any.

use std::path::PathBuf;

use chrono::{NaiveDate, Utc};
use mirante_domain::{
    Snapshot,
    lint::{self, DirMonorepo, Finding, LintOptions, LiveFailure},
};

use crate::{adapters::git::lookup as git, app::catalog::CatalogSource, config::Config};

/// Where IaC references are looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IacSource {
    /// Nowhere: IaC references are not checked.
    None,
    /// A checkout on disk (`MIRANTE_IAC_ROOT`), for a catalog read from a plain directory.
    Dir(PathBuf),
    /// The git repository the catalog is read from, at the snapshot's revision (its commit),
    /// so the files checked are those of the very commit the catalog came from.
    Git(PathBuf),
}

/// What the lint needs from the configuration.
#[derive(Debug, Clone)]
pub struct LintSettings {
    /// Where IaC references are checked.
    pub monorepo: IacSource,
    /// Attestations older than this many days are stale.
    pub stale_after_days: u32,
}

impl LintSettings {
    /// The settings of a configuration serving the catalog from `source`: a catalog read from
    /// git is checked against the same repository; otherwise `MIRANTE_IAC_ROOT`, when set.
    pub fn new(config: &Config, source: &CatalogSource) -> Self {
        let monorepo = match (source, &config.iac_root) {
            (CatalogSource::Git { repo, .. }, _) => IacSource::Git(repo.clone()),
            (_, Some(root)) => IacSource::Dir(root.clone()),
            (_, None) => IacSource::None,
        };
        LintSettings {
            monorepo,
            stale_after_days: config.attestation_max_age_days,
        }
    }
}

/// Every finding on a snapshot, with the failed live checks (`live`, from the probe task's last
/// run): errors first, then warnings, then information; in catalog order within a severity.
/// Reads IaC files (a checkout or a git tree), so call it off the async runtime.
pub(crate) fn findings(
    snapshot: &Snapshot,
    settings: &LintSettings,
    today: NaiveDate,
    live: &[LiveFailure],
) -> Vec<Finding> {
    let options = LintOptions {
        today,
        stale_after_days: settings.stale_after_days,
    };
    let mut out = lint::lint(snapshot.catalog(), &options);
    match &settings.monorepo {
        IacSource::None => {}
        IacSource::Dir(root) => {
            out.extend(lint::lint_iac(snapshot.catalog(), &DirMonorepo::new(root)));
        }
        IacSource::Git(repo) => {
            let opened = match snapshot.revision.as_deref() {
                Some(revision) => git::GitTreeMonorepo::open(repo, revision),
                None => Err("the catalog has no revision to read the monorepo at".to_owned()),
            };
            out.extend(match opened {
                Ok(tree) => lint::lint_iac(snapshot.catalog(), &tree),
                Err(reason) => {
                    tracing::warn!(error = %reason, "IaC references cannot be checked");
                    lint::lint_iac(snapshot.catalog(), &git::Unavailable(reason))
                }
            });
        }
    }
    out.extend(lint::lint_live(snapshot.catalog(), live));
    // Item order: the catalog's, so an item's findings stay together within a severity.
    let order: std::collections::HashMap<&str, usize> = snapshot
        .catalog()
        .items
        .iter()
        .enumerate()
        .map(|(i, it)| (it.id.as_str(), i))
        .collect();
    out.sort_by_key(|f| (f.severity, order.get(f.item.as_str()).copied()));
    out
}

/// Today in UTC.
pub(crate) fn today() -> NaiveDate {
    Utc::now().date_naive()
}
