//! The route inventory: every route the server serves, read off the routers themselves (the
//! OpenAPI document, the web UI's route list, the server functions, the sign-in routes), for the
//! access policy's completeness test and the route walk of the integration tests.

use axum::http::Method;

/// Every route the server serves, for the policy's completeness test and the route walk: the
/// OpenAPI paths, the web UI's pages and server functions, and the sign-in routes.
pub fn all_routes() -> Vec<(Method, String)> {
    let mut routes = Vec::new();
    for (path, item) in super::api::openapi().paths.paths {
        for (method, op) in [
            (Method::GET, &item.get),
            (Method::POST, &item.post),
            (Method::PUT, &item.put),
            (Method::DELETE, &item.delete),
            (Method::PATCH, &item.patch),
        ] {
            if op.is_some() {
                routes.push((method, path.clone()));
            }
        }
    }
    for listing in super::web::route_list() {
        routes.push((Method::GET, listing.path().to_owned()));
    }
    for (path, method) in leptos::server_fn::axum::server_fn_paths() {
        routes.push((method, path.to_owned()));
    }
    for (method, path) in super::auth::ROUTES {
        routes.push((method.clone(), (*path).to_owned()));
    }
    routes.push((Method::GET, "/pkg/{*path}".to_owned()));
    routes
}
