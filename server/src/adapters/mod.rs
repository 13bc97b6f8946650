//! Adapters: the parts that talk to something outside the process (git today; the database,
//! the forges and the identity provider as they move here), over the domain's plain values.
//! They never depend on the application services nor on the HTTP layer.

pub mod catalog_source;
pub mod db;
pub mod forge;
pub mod git;
pub mod oidc;
pub mod session_store;
