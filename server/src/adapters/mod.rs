//! Adapters: the parts that talk to something outside the process (git today; the database,
//! the forges and the identity provider as they move here), over the domain's plain values.
//! They never depend on the application services nor on the HTTP layer.

pub(crate) mod argocd;
pub(crate) mod catalog_source;
pub mod db;
pub mod forge;
pub mod git;
pub(crate) mod mail;
pub mod notify_webhook;
pub(crate) mod oidc;
pub(crate) mod session_store;
