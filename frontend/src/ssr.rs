//! What the UI needs from its host on the server side. The server crate implements
//! [`PortalData`] and provides it as Leptos context; server functions read it from there.

use std::sync::Arc;

use mirante_domain::Snapshot;

/// Server-side data the UI reads.
pub trait PortalData: Send + Sync + 'static {
    /// The catalog snapshot in force now.
    fn snapshot(&self) -> Arc<Snapshot>;
}

/// The handle the server puts in Leptos context.
pub type PortalHandle = Arc<dyn PortalData>;
