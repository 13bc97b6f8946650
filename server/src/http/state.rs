//! What every handler can reach.

use std::sync::Arc;

use axum::{
    extract::FromRef,
    http::{Method, request::Parts},
};
use leptos::config::LeptosOptions;
use mirante_frontend::ssr::PortalHandle;

use mirante_domain::{
    Snapshot,
    history::{CatalogHistory, NoHistory},
    lint::Finding,
};
use mirante_frontend::{
    api::dashboard::{FailingCheck, LiveChecks},
    ssr::PortalData,
};

use crate::{
    adapters::db::Db,
    app::catalog::CatalogStore,
    app::evidence::{self, LintSettings},
    app::probes::{CheckKind, ProbeBoard},
    app::selfservice::{service::SelfService, worker::Worker},
    config::Config,
    http::auth::{
        Auth, Principal,
        policy::{self, Caller, Decision},
    },
};

/// Shared state of the HTTP server. Cheap to clone: every field is a handle.
///
/// `FromRef` lets a handler take just the part it needs (`State<Arc<CatalogStore>>`,
/// `State<LeptosOptions>`).
#[derive(Clone, FromRef)]
pub struct AppState {
    /// The effective configuration.
    pub config: Arc<Config>,
    /// The database.
    pub db: Db,
    /// The catalog in force.
    pub catalog: Arc<CatalogStore>,
    /// Where the web UI's compiled assets are and what they are called.
    pub leptos: LeptosOptions,
    /// Sign-in: the OpenID provider (or the development sign-in) and session settings.
    pub auth: Arc<Auth>,
    /// The proposing worker (and through it the forge).
    pub worker: Arc<Worker>,
    /// The self-service operations the API and the UI call.
    pub selfservice: Arc<SelfService>,
    /// The last results of the live checks (probes, Argo CD).
    pub probes: Arc<ProbeBoard>,
    /// Refusals counted so that floods of them are written once per window.
    pub(crate) refusals: Arc<crate::http::api::refusals::Refusals>,
    /// Set once the process is shutting down: `/readyz` answers 503 from then on, while
    /// requests are still served until the listener closes.
    pub(crate) draining: Arc<std::sync::atomic::AtomicBool>,
}

impl AppState {
    /// The catalog as the web UI reads it.
    pub fn portal(&self) -> PortalHandle {
        Arc::new(Portal {
            public_catalog: self.auth.public_catalog,
            catalog: Arc::clone(&self.catalog),
            lint: LintSettings::new(&self.config, self.catalog.source()),
            probes: Arc::clone(&self.probes),
        })
    }
}

/// What the web UI reads on the server: the catalog in force and the lint on it.
struct Portal {
    /// Whether anonymous readers see the catalog (`MIRANTE_PUBLIC_CATALOG`).
    public_catalog: bool,
    catalog: Arc<CatalogStore>,
    lint: LintSettings,
    probes: Arc<ProbeBoard>,
}

impl PortalData for Portal {
    fn snapshot(&self) -> Arc<Snapshot> {
        self.catalog.snapshot()
    }

    fn findings(&self) -> Vec<Finding> {
        evidence::findings(
            &self.catalog.snapshot(),
            &self.lint,
            evidence::today(),
            &self.probes.failures(),
        )
    }

    fn history(&self) -> Result<Arc<CatalogHistory>, NoHistory> {
        self.catalog.history().get()
    }

    fn may_call(&self, caller: &Parts, path: &str) -> bool {
        let caller = Caller::of(caller.extensions.get::<Principal>());
        // Every server function answers POST; the table's line for it says who may.
        policy::decide(
            policy::access(&Method::POST, path),
            caller,
            self.public_catalog,
        ) == Decision::Allow
    }

    fn live_checks(&self) -> LiveChecks {
        let snapshot = self.catalog.snapshot();
        let results = self.probes.results();
        LiveChecks {
            total: results.len(),
            last_run: self.probes.last_run().map(|t| t.to_rfc3339()),
            failing: results
                .iter()
                .filter(|r| !r.ok)
                .map(|r| FailingCheck {
                    item: r.item.clone(),
                    name: snapshot
                        .item(&r.item)
                        .map_or_else(|| r.item.clone(), |i| i.name.to_string()),
                    kind: match r.kind {
                        CheckKind::Probe => "probe",
                        CheckKind::Argocd => "argocd",
                    }
                    .to_owned(),
                    target: r.target.clone(),
                    reason: r.reason.clone().unwrap_or_default(),
                })
                .collect(),
        }
    }
}
