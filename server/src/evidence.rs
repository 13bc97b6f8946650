//! The consistency lint as the server runs it: the catalog in force, today's date, the
//! configured attestation age and, when configured, the monorepo checkout for IaC references.

use std::path::PathBuf;

use chrono::{NaiveDate, Utc};
use mirante_domain::{
    Snapshot,
    lint::{self, DirMonorepo, Finding, LintOptions, LiveFailure},
};

use crate::config::Config;

/// What the lint needs from the configuration.
#[derive(Debug, Clone)]
pub struct LintSettings {
    /// The monorepo checkout IaC references are checked against, if any.
    pub monorepo: Option<PathBuf>,
    /// Attestations older than this many days are stale.
    pub stale_after_days: u32,
}

impl LintSettings {
    /// The settings of a configuration.
    pub fn from_config(config: &Config) -> Self {
        LintSettings {
            monorepo: config.iac_root.clone(),
            stale_after_days: config.attestation_max_age_days,
        }
    }
}

/// Every finding on a snapshot, with the failed live checks (`live`, from the probe task's last
/// run): errors first, then warnings, then information; in catalog order within a severity.
/// Reads IaC files when a monorepo is configured, so call it off the async runtime for large
/// catalogs.
pub fn findings(
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
    if let Some(root) = &settings.monorepo {
        out.extend(lint::lint_iac(snapshot.catalog(), &DirMonorepo::new(root)));
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
pub fn today() -> NaiveDate {
    Utc::now().date_naive()
}
