//! Sites, layers, decisions, tasks and the overview.

use serde_json::json;

use crate::helpers::*;

on_both_databases! {
    async fn sites_are_listed_with_their_host_groups_and_hosts(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/sites", 200).await;

        let sites = body["sites"].as_array().unwrap();
        assert_eq!(sites.len(), 2);
        assert_eq!(sites[0]["id"], "north");
        assert_eq!(sites[0]["host_groups"][0]["pattern"], "pve-n-*");
        assert_eq!(sites[0]["hosts"][0]["id"], "pve-n-01");
        assert_eq!(sites[1]["hosts"][0]["gpus"][0]["model"], "NVIDIA RTX A5000");
    }

    async fn layers_are_listed_with_sub_layers_and_capabilities(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/layers", 200).await;

        let layers = body["layers"].as_array().unwrap();
        let ids: Vec<&str> = layers.iter().map(|l| l["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["l0", "l8", "l8a", "secrets"]);
        assert_eq!(layers[2]["parent"], "l8");
        assert_eq!(layers[3]["kind"], "capability");
    }

    async fn decisions_are_listed_with_what_was_rejected_and_why(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/decisions", 200).await;

        let decision = &body["decisions"][0];
        assert_eq!(decision["id"], "hypervisor-choice");
        assert_eq!(decision["rejected"], "VMware");
        assert_eq!(decision["reason"], "Licence cost.");
    }

    async fn tasks_are_listed_with_priority_and_what_they_wait_for(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/tasks", 200).await;

        let task = &body["tasks"][0];
        assert_eq!(task["id"], "replicate-storage");
        assert_eq!(task["after"], json!(["hypervisor-south"]));
    }

    async fn the_overview_counts_items_per_layer_site_and_state(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/overview", 200).await;

        assert_eq!(body["sites"], json!([["north", "North"], ["south", "South"]]));
        assert_eq!(body["totals"], json!({"validated": 2, "declared": 1, "desired": 3}));
        let l0 = &body["rows"][0];
        assert_eq!(l0["layer"], "l0");
        assert_eq!(l0["total"], json!({"validated": 1, "declared": 1, "desired": 2}));
        assert_eq!(l0["per_site"][0], json!({"validated": 1, "declared": 0, "desired": 2}));
        let rows = body["rows"].as_array().unwrap();
        let secrets = rows.iter().find(|r| r["layer"] == "secrets").unwrap();
        assert_eq!(secrets["platform_wide"], json!({"validated": 1, "declared": 0, "desired": 0}));
    }

    async fn list_routes_refuse_query_parameters_they_do_not_take(backend: Backend) {
        let app = spawn_app(backend).await;

        for path in [
            "/api/v1/sites?x=1",
            "/api/v1/layers?kind=layer",
            "/api/v1/decisions?q=a",
            "/api/v1/tasks?layer=l0",
            "/api/v1/overview?site=north",
            "/api/v1/catalog?full=1",
        ] {
            let body = app.get_json(path, 400).await;
            assert!(body["error"].as_str().unwrap().contains("unknown query parameter"), "{path}");
        }
    }
}
