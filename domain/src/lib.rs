//! Mirante's domain: the catalog model, its loading and validation, and read queries.
//!
//! Pure code: no server, database or network. The `load` feature adds reading catalog
//! directories from disk with file/line/column diagnostics; the wasm bundle leaves it off.

pub mod access;
mod bits;
pub mod capacity;
#[cfg(feature = "load")]
pub mod catalog_edit;
pub mod deployment;
pub mod diagnostic;
pub mod history;
pub mod link;
pub mod lint;
#[cfg(feature = "load")]
pub mod load;
pub mod model;
pub mod monorepo;
pub mod notification;
pub mod request;
pub mod resource;
pub mod roadmap;
pub mod search;
pub mod selfservice;
pub mod snapshot;
#[cfg(feature = "load")]
pub mod synthetic;
#[cfg(feature = "load")]
pub mod validate;
#[cfg(feature = "webhook")]
pub mod webhook;

pub use access::{Principal, Role, Viewer};
pub use diagnostic::{Diagnostic, Diagnostics};
#[cfg(feature = "load")]
pub use load::{LoadedCatalog, load_bytes, load_dir, load_files};
pub use model::*;
pub use request::{RequestEvent, RequestState};
pub use snapshot::{ItemFilter, Overview, OverviewRow, Snapshot, StateCounts};
