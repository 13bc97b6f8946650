//! The HTTP layer: routers, the middleware stack, authentication and the access policy, the
//! API's error type, the route inventory, the sign-in and profile pages, the Leptos mount and
//! the web UI's view of the application services. Handlers translate between HTTP and the
//! application services (`crate::app`-level modules); nothing below this layer imports it.

pub(crate) mod api;
pub mod auth;
pub(crate) mod compression;
pub(crate) mod error;
pub(crate) mod exports;
pub(crate) mod middleware;
pub mod routes;
pub(crate) mod serve;
pub(crate) mod state;
pub(crate) mod ui;
pub(crate) mod web;

pub use error::ApiError;
pub use state::AppState;

/// The JSON API's OpenAPI document, pretty-printed (`mirante openapi`).
pub fn openapi_json() -> serde_json::Result<String> {
    api::openapi().to_pretty_json()
}
