//! Test peers shared by the API tests (`api/`) and the browser tests (`browser/`): the fake
//! Argo CD ([`argocd`]), held to Argo CD's published API description. The API tests' own
//! helpers live in `api/helpers.rs`.

#[path = "argocd/fake.rs"]
pub mod argocd;
