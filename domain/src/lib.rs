//! Mirante's domain: the catalog model, its loading and validation, and read queries.
//!
//! Pure code: no server, database or network. The `load` feature adds reading catalog
//! directories from disk with file/line/column diagnostics; the wasm bundle leaves it off.

pub mod model;
pub mod snapshot;

pub use model::*;
pub use snapshot::{ItemFilter, Overview, OverviewRow, Snapshot, StateCounts};
