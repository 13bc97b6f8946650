//! What the UI needs from its host on the server side. The server crate implements
//! [`PortalData`] and provides it as Leptos context; server functions read it from there.

use std::sync::Arc;

use mirante_domain::{Snapshot, lint::Finding};

/// Server-side data the UI reads.
pub trait PortalData: Send + Sync + 'static {
    /// The catalog snapshot in force now.
    fn snapshot(&self) -> Arc<Snapshot>;

    /// The consistency lint's findings on the catalog in force, errors first. May read the
    /// monorepo's files (IaC references), so server functions call it off the async runtime.
    fn findings(&self) -> Vec<Finding>;
}

/// The handle the server puts in Leptos context.
pub type PortalHandle = Arc<dyn PortalData>;
