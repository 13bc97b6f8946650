//! The application: what the portal does, without HTTP types. The catalog store and its
//! reloads, the live checks, the IaC reference check, self-service (templates, requests, the
//! proposing worker), catalog changes, and the replicas' heartbeat. It uses the adapters and the domain; the HTTP layer
//! calls it.

pub(crate) mod catalog;
pub(crate) mod catalog_change;
pub mod clock;
pub(crate) mod evidence;
pub mod notify;
pub(crate) mod probes;
pub(crate) mod replicas;
pub mod selfservice;
