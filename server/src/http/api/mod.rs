//! The JSON API under `/api/v1`, plus `/healthz` and `/readyz`.
//!
//! Each area has its own `router()`; they are merged here. Routes are declared through
//! `utoipa-axum`, so a route cannot exist without its OpenAPI description:
//! `GET /api/v1/openapi.json` is generated from the same list the server routes with.

pub(crate) mod capacity;
pub(crate) mod catalog;
pub(crate) mod health;
pub(crate) mod history;
pub(crate) mod items;
pub(crate) mod notifications;
pub(crate) mod probes;
pub(crate) mod query;
pub(crate) mod reference;
pub(crate) mod refusals;
pub(crate) mod resources;
pub(crate) mod roadmap;
pub(crate) mod schema;
pub(crate) mod selfservice;
pub(crate) mod webhook;

use std::sync::LazyLock;

use axum::{
    Router,
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
    routing::any,
};
use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::{ApiError, state::AppState};

/// The document's fixed parts; paths and schemas come from the routes.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Mirante API",
        description = "Read the infrastructure catalog (items with their validated / declared / desired state, sites, layers, decisions, tasks) and manage its ingestion.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    tags(
        (name = "catalog", description = "The catalog in force: items, sites, layers, decisions, tasks, overview, reload"),
        (name = "roadmap", description = "What is done, ready or blocked; progress; the consistency lint's findings; the live checks of evidence"),
        (name = "health", description = "Liveness and readiness probes"),
        (name = "self-service", description = "Templates, requests that become pull requests on the devops monorepo, their approval and merge, and the forge webhook"),
        (name = "auth", description = "Who is signed in (session or `Authorization: Bearer` API token)"),
        (name = "meta", description = "This document"),
    )
)]
struct ApiDoc;

/// Every API route with its description.
fn documented() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(health::router())
        .merge(items::router())
        .merge(reference::router())
        .merge(catalog::router())
        .merge(selfservice::router())
        .merge(capacity::router())
        .merge(resources::router())
        .merge(webhook::router())
        .merge(roadmap::router())
        .merge(history::router())
        .merge(probes::router())
        .merge(notifications::router())
        .routes(routes!(crate::http::auth::me))
        .routes(routes!(crate::http::auth::set_my_notifications))
        .routes(routes!(openapi_json))
}

/// The OpenAPI document of this API.
pub(crate) fn openapi() -> utoipa::openapi::OpenApi {
    with_shared_responses(documented().into_openapi())
}

/// Adds the answers that come from the layers around every handler rather than from the
/// handler: 400 for a path parameter that cannot be read (an id out of range, bytes that are
/// not UTF-8), and 429 on `/api/*` for a client over its rate limit (`http::auth::limits`).
fn with_shared_responses(mut doc: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    use utoipa::openapi::{
        ContentBuilder, HeaderBuilder, Ref, RefOr, ResponseBuilder, Type, path::ParameterIn,
        schema::ObjectBuilder,
    };
    let error = |description: &str| {
        ResponseBuilder::new().description(description).content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build(),
        )
    };
    let bad_path = error("A path parameter that cannot be read (an id out of range, not UTF-8)");
    let too_many = error(
        "Too many requests of this kind from this address (API requests with a token, webhook \
         deliveries); retry after `Retry-After` seconds",
    )
    .header(
        "Retry-After",
        HeaderBuilder::new()
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(1)),
            ))
            .description(Some("Seconds to wait before the next request"))
            .build(),
    );
    let (bad_path, too_many) = (bad_path.build(), too_many.build());
    for (path, item) in &mut doc.paths.paths {
        let api = path.starts_with("/api/");
        for op in [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
        {
            let has_path_params = op
                .parameters
                .iter()
                .flatten()
                .any(|p| matches!(p, RefOr::T(p) if p.parameter_in == ParameterIn::Path));
            let responses = &mut op.responses.responses;
            if has_path_params {
                responses
                    .entry("400".to_owned())
                    .or_insert_with(|| RefOr::T(bad_path.clone()));
            }
            if api {
                responses
                    .entry("429".to_owned())
                    .or_insert_with(|| RefOr::T(too_many.clone()));
            }
        }
    }
    doc
}

/// The API routes, ready to merge at the root.
pub(crate) fn router() -> Router<AppState> {
    let (router, _) = documented().split_for_parts();
    // Unknown API paths answer JSON, not the web UI's HTML 404.
    router.route("/api/v1/{*rest}", any(unknown_route))
}

/// Serialized once: the document does not change while the process runs.
static OPENAPI_JSON: LazyLock<String> = LazyLock::new(|| {
    openapi()
        .to_pretty_json()
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialize the API description: {e}\"}}"))
});

/// The OpenAPI 3.1 description of this API.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "meta",
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json", body = Object))
)]
pub(crate) async fn openapi_json() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        OPENAPI_JSON.as_str(),
    )
        .into_response()
}

async fn unknown_route() -> ApiError {
    ApiError::NotFound("no such API route; see /api/v1/openapi.json".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_describes_every_route_the_server_serves() {
        let doc = openapi();
        let paths: Vec<&str> = doc.paths.paths.keys().map(String::as_str).collect();

        for path in [
            "/healthz",
            "/readyz",
            "/api/v1/items",
            "/api/v1/items/{id}",
            "/api/v1/items/{id}/changes",
            "/api/v1/items/{id}/changes/preview",
            "/api/v1/sites",
            "/api/v1/layers",
            "/api/v1/decisions",
            "/api/v1/tasks",
            "/api/v1/overview",
            "/api/v1/catalog",
            "/api/v1/catalog/reload",
            "/api/v1/replicas",
            "/api/v1/openapi.json",
            "/api/v1/me",
            "/api/v1/me/notifications",
            "/api/v1/notifications",
            "/api/v1/templates",
            "/api/v1/templates/{id}",
            "/api/v1/requests",
            "/api/v1/requests/preview",
            "/api/v1/requests/{id}",
            "/api/v1/requests/{id}/approve",
            "/api/v1/requests/{id}/reject",
            "/api/v1/requests/{id}/merge",
            "/api/v1/capacity",
            "/api/v1/forge/webhook",
            "/api/v1/roadmap",
            "/api/v1/roadmap/burnup",
            "/api/v1/items/{id}/history",
            "/api/v1/findings",
            "/api/v1/probes",
        ] {
            assert!(paths.contains(&path), "{path} missing from {paths:?}");
        }
    }

    #[test]
    fn every_schema_reference_resolves() {
        let json = serde_json::to_value(openapi()).unwrap();
        let schemas = json["components"]["schemas"].as_object().unwrap();
        let mut missing = Vec::new();
        fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    if let Some(serde_json::Value::String(r)) = m.get("$ref") {
                        out.push(r.clone());
                    }
                    m.values().for_each(|x| walk(x, out));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        let mut refs = Vec::new();
        walk(&json, &mut refs);
        for r in refs {
            let name = r.trim_start_matches("#/components/schemas/");
            if !schemas.contains_key(name) {
                missing.push(r);
            }
        }

        assert!(missing.is_empty(), "unresolved: {missing:?}");
    }
}
