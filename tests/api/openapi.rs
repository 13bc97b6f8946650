//! `GET /api/v1/openapi.json`.

use serde_json::Value;

use crate::helpers::*;

on_both_databases! {
    async fn the_openapi_document_parses_and_lists_every_route(backend: Backend) {
        let app = spawn_app(backend).await;

        let doc = app.get_json("/api/v1/openapi.json", 200).await;

        assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
        let paths = doc["paths"].as_object().unwrap();
        for (path, method) in [
            ("/healthz", "get"),
            ("/readyz", "get"),
            ("/api/v1/items", "get"),
            ("/api/v1/items/{id}", "get"),
            ("/api/v1/items/{id}/changes", "post"),
            ("/api/v1/items/{id}/changes/preview", "post"),
            ("/api/v1/sites", "get"),
            ("/api/v1/layers", "get"),
            ("/api/v1/decisions", "get"),
            ("/api/v1/tasks", "get"),
            ("/api/v1/overview", "get"),
            ("/api/v1/catalog", "get"),
            ("/api/v1/catalog/reload", "post"),
            ("/api/v1/openapi.json", "get"),
            ("/api/v1/notifications", "get"),
            ("/api/v1/me/notifications", "post"),
            ("/api/v1/templates", "get"),
            ("/api/v1/templates/{id}", "get"),
            ("/api/v1/requests", "get"),
            ("/api/v1/requests", "post"),
            ("/api/v1/requests/preview", "post"),
            ("/api/v1/requests/{id}", "get"),
            ("/api/v1/requests/{id}/approve", "post"),
            ("/api/v1/requests/{id}/reject", "post"),
            ("/api/v1/requests/{id}/merge", "post"),
            ("/api/v1/resources", "get"),
            ("/api/v1/resources/{id}", "get"),
            ("/api/v1/forge/webhook", "post"),
            ("/api/v1/roadmap", "get"),
            ("/api/v1/roadmap/burnup", "get"),
            ("/api/v1/items/{id}/history", "get"),
            ("/api/v1/findings", "get"),
            ("/api/v1/probes", "get"),
        ] {
            assert!(paths.get(path).and_then(|p| p.get(method)).is_some(), "{method} {path} missing");
        }
    }

    async fn every_route_in_the_document_is_served(backend: Backend) {
        let app = spawn_app(backend).await;
        let doc = app.get_json("/api/v1/openapi.json", 200).await;

        for (path, ops) in doc["paths"].as_object().unwrap() {
            // Templates and requests by id are not catalog items; tests/api/requests.rs reads
            // them.
            if ops.get("get").is_none() || (path.contains("{id}") && !path.starts_with("/api/v1/items")) {
                continue;
            }
            let concrete = path.replace("{id}", "vault");
            let status = app.get(&concrete).await.status().as_u16();
            assert_eq!(status, 200, "GET {concrete}");
        }
    }

    async fn served_items_have_exactly_the_properties_the_document_gives_them(backend: Backend) {
        let app = spawn_app(backend).await;
        let doc = app.get_json("/api/v1/openapi.json", 200).await;
        let items = app.get_json("/api/v1/items", 200).await;

        let schema = &doc["components"]["schemas"]["Item"]["properties"];
        let mut documented: Vec<&String> = schema.as_object().unwrap().keys().collect();
        documented.sort();
        for item in items["items"].as_array().unwrap() {
            let mut served: Vec<&String> = item.as_object().unwrap().keys().collect();
            served.sort();
            assert_eq!(served, documented, "item {}", item["id"]);
        }
        let query: Vec<&str> = doc["paths"]["/api/v1/items"]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p: &Value| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(query, ["site", "layer", "state", "qualifier", "q", "limit", "offset"]);
    }

    async fn approval_and_rejection_bodies_name_the_review_decision_and_only_rejection_requires_one(backend: Backend) {
        let app = spawn_app(backend).await;
        let doc = app.get_json("/api/v1/openapi.json", 200).await;

        let body = |action: &str| doc["paths"][format!("/api/v1/requests/{{id}}/{action}")]["post"]["requestBody"].clone();
        let approve = body("approve");
        let reject = body("reject");
        let schema_ref = |b: &Value| b["content"]["application/json"]["schema"].to_string();
        assert!(schema_ref(&approve).contains("#/components/schemas/ReviewDecision"), "{approve}");
        assert!(schema_ref(&reject).contains("#/components/schemas/ReviewDecision"), "{reject}");
        assert_ne!(approve["required"], Value::Bool(true), "an approval may come with no body: {approve}");
        assert_eq!(reject["required"], Value::Bool(true), "{reject}");
        let review = &doc["components"]["schemas"]["ReviewDecision"];
        assert!(review["properties"]["comment"].is_object(), "{review}");
        // The catalog's architectural decision keeps its own name and shape.
        assert!(doc["components"]["schemas"]["Decision"]["required"]
            .as_array()
            .unwrap()
            .contains(&Value::from("topic")));
    }

    async fn answers_from_the_layers_around_the_handlers_are_documented_and_in_json(backend: Backend) {
        let app = spawn_app(backend).await;
        let doc = app.get_json("/api/v1/openapi.json", 200).await;

        // Every API operation may answer 429 (a client over its rate limit), with Retry-After.
        for (path, ops) in doc["paths"].as_object().unwrap() {
            for (method, op) in ops.as_object().unwrap() {
                if path.starts_with("/api/") {
                    let too_many = &op["responses"]["429"];
                    assert!(too_many["headers"]["Retry-After"].is_object(), "{method} {path}: {too_many}");
                }
                if path.contains('{') {
                    assert!(op["responses"]["400"].is_object(), "{method} {path} does not document 400");
                }
            }
        }

        // A path parameter out of range is such a 400, in JSON like every other.
        let out_of_range = app.get("/api/v1/requests/9223372036854775808").await;
        assert_eq!(out_of_range.status().as_u16(), 400);
        let body: Value = out_of_range.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().starts_with("invalid path"), "{body}");
        let bad_resource = app.get("/api/v1/resources/-x").await;
        assert_eq!(bad_resource.status().as_u16(), 400);
        assert_eq!(bad_resource.headers()["content-type"], "application/json");

        // A literal segment is its own route, as the router sees it: `preview` takes only POST.
        let preview = app.get("/api/v1/requests/preview").await;
        assert_eq!(preview.status().as_u16(), 405);
        assert_eq!(preview.headers()["allow"], "POST");
    }
}
