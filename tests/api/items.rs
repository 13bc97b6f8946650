//! `GET /api/v1/items` and `GET /api/v1/items/{id}`.

use crate::helpers::*;

on_both_databases! {
    async fn listing_items_without_filters_returns_the_whole_catalog_in_layer_order(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/items", 200).await;

        assert_eq!(ids(&body), ITEM_IDS);
        assert_eq!(body["total"], 6);
        assert_eq!(body["limit"], 50);
        assert_eq!(body["offset"], 0);
    }

    async fn items_carry_the_same_field_names_as_the_yaml(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/items?q=hypervisor-south", 200).await;

        let item = &body["items"][0];
        assert_eq!(item["id"], "hypervisor-south");
        assert_eq!(item["name"], "Hypervisor cluster South");
        assert_eq!(item["state"], "declared");
        assert_eq!(item["qualifier"], "partial");
        assert_eq!(item["sites"], serde_json::json!(["south"]));
        assert_eq!(item["layer"], "l0");
        assert_eq!(item["iac"]["path"], "pulumi/south/cluster.ts");
    }

    async fn a_text_query_folds_case_and_accents_and_takes_its_words_in_any_order(backend: Backend) {
        let app = spawn_app(backend).await;

        let words = app.get_json("/api/v1/items?q=SOUTH%20Cl%C3%BAster", 200).await;
        let part = app.get_json("/api/v1/items?q=replic&state=desired", 200).await;
        let none = app.get_json("/api/v1/items?q=south%20no-such-word", 200).await;

        assert_eq!(ids(&words), ["hypervisor-south"]);
        assert_eq!(words["total"], 1);
        assert_eq!(ids(&part), ["storage-replication"]);
        assert_eq!(none["total"], 0);
    }

    async fn filtering_by_state_returns_only_items_in_that_state(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/items?state=validated", 200).await;

        assert_eq!(ids(&body), ["hypervisor-north", "vault"]);
        assert_eq!(body["total"], 2);
    }

    async fn filtering_by_site_returns_the_items_that_list_the_site(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/items?site=south", 200).await;

        assert_eq!(ids(&body), ["hypervisor-south", "storage-replication", "gpu-workspace"]);
    }

    async fn filtering_by_a_layer_includes_its_sub_layers(backend: Backend) {
        let app = spawn_app(backend).await;

        let parent = app.get_json("/api/v1/items?layer=l8", 200).await;
        let child = app.get_json("/api/v1/items?layer=l8a", 200).await;

        assert_eq!(ids(&parent), ["gpu-workspace"]);
        assert_eq!(ids(&child), ["gpu-workspace"]);
    }

    async fn filtering_by_qualifier_returns_only_items_with_it(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/items?qualifier=rejected", 200).await;

        assert_eq!(ids(&body), ["tape-backup"]);
    }

    async fn text_search_matches_names_notes_and_tags_ignoring_case(backend: Backend) {
        let app = spawn_app(backend).await;

        let by_tag = app.get_json("/api/v1/items?q=RESEARCH", 200).await;
        let by_notes = app.get_json("/api/v1/items?q=two%20hosts", 200).await;

        assert_eq!(ids(&by_tag), ["gpu-workspace"]);
        assert_eq!(ids(&by_notes), ["hypervisor-north"]);
    }

    async fn filters_combine(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/items?state=desired&site=north&layer=l0", 200).await;

        assert_eq!(ids(&body), ["storage-replication", "tape-backup"]);
    }

    async fn an_empty_filter_value_is_refused_and_says_to_leave_it_out(backend: Backend) {
        let app = spawn_app(backend).await;

        for query in ["state=", "site=&q=gpu", "q=", "qualifier=%20"] {
            let body = app.get_json(&format!("/api/v1/items?{query}"), 400).await;

            assert!(body["error"].as_str().unwrap().contains("is empty; leave it out"), "{query}: {body}");
        }
        let resources = app.get_json("/api/v1/resources?state=", 400).await;
        assert!(resources["error"].as_str().unwrap().contains("`state` is empty"), "{resources}");
    }

    async fn items_are_paginated_with_limit_and_offset(backend: Backend) {
        let app = spawn_app(backend).await;

        let page = app.get_json("/api/v1/items?limit=2&offset=1", 200).await;
        let past_the_end = app.get_json("/api/v1/items?offset=10", 200).await;

        assert_eq!(ids(&page), &ITEM_IDS[1..3]);
        assert_eq!(page["total"], 6);
        assert_eq!(page["limit"], 2);
        assert_eq!(page["offset"], 1);
        assert!(ids(&past_the_end).is_empty());
        assert_eq!(past_the_end["total"], 6);
    }

    async fn an_unknown_query_parameter_is_a_400_naming_it(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/items?stat=validated", 400).await;

        let error = body["error"].as_str().unwrap();
        assert!(error.contains("`stat`"), "{error}");
    }

    async fn an_unknown_state_or_qualifier_is_a_400_naming_the_value(backend: Backend) {
        let app = spawn_app(backend).await;

        let state = app.get_json("/api/v1/items?state=done", 400).await;
        let qualifier = app.get_json("/api/v1/items?qualifier=soon", 400).await;

        let state = state["error"].as_str().unwrap();
        assert!(state.contains("state") && state.contains("`done`"), "{state}");
        assert!(state.contains("validated, declared, desired"), "{state}");
        let qualifier = qualifier["error"].as_str().unwrap();
        assert!(qualifier.contains("`soon`"), "{qualifier}");
    }

    async fn a_site_or_layer_that_does_not_exist_is_a_400_naming_it(backend: Backend) {
        let app = spawn_app(backend).await;

        let site = app.get_json("/api/v1/items?site=east", 400).await;
        let layer = app.get_json("/api/v1/items?layer=l9", 400).await;

        let site = site["error"].as_str().unwrap();
        assert!(site.contains("`east`") && site.contains("north, south"), "{site}");
        assert!(layer["error"].as_str().unwrap().contains("`l9`"));
    }

    async fn a_limit_above_1000_or_not_a_number_is_a_400(backend: Backend) {
        let app = spawn_app(backend).await;

        let too_big = app.get_json("/api/v1/items?limit=1001", 400).await;
        let not_a_number = app.get_json("/api/v1/items?offset=-1", 400).await;

        assert!(too_big["error"].as_str().unwrap().contains("limit"));
        assert!(not_a_number["error"].as_str().unwrap().contains("offset"));
    }

    async fn a_repeated_query_parameter_is_a_400(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/items?state=desired&state=validated", 400).await;

        assert!(body["error"].as_str().unwrap().contains("more than once"));
    }

    async fn item_detail_lists_dependents_tasks_and_decisions(backend: Backend) {
        let app = spawn_app(backend).await;

        let replication = app.get_json("/api/v1/items/storage-replication", 200).await;
        let north = app.get_json("/api/v1/items/hypervisor-north", 200).await;
        let south = app.get_json("/api/v1/items/hypervisor-south", 200).await;

        assert_eq!(replication["item"]["id"], "storage-replication");
        assert_eq!(replication["dependents"], serde_json::json!(["gpu-workspace"]));
        assert_eq!(replication["tasks"][0]["id"], "replicate-storage");
        assert_eq!(replication["tasks"][0]["priority"], "critical");
        assert_eq!(north["dependents"], serde_json::json!(["storage-replication"]));
        // Named by the item and naming the item both count.
        assert_eq!(north["decisions"][0]["id"], "hypervisor-choice");
        assert_eq!(south["decisions"][0]["id"], "hypervisor-choice");
    }

    async fn a_missing_item_is_a_json_404(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/items/no-such-item", 404).await;

        assert!(body["error"].as_str().unwrap().contains("`no-such-item`"));
    }

    async fn an_unknown_api_route_is_a_json_404(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/itemz", 404).await;

        assert!(body["error"].as_str().unwrap().contains("openapi.json"));
    }
}
