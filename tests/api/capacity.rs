//! GPU capacity: `GET /api/v1/capacity` through a request's life, submissions beyond the free
//! GPUs refused with the numbers, concurrent approvals of the last GPU, an admin's overcommit
//! with a reason, and a workspace added to the monorepo by hand.

use serde_json::{Value, json};

use crate::helpers::*;
use crate::requests::wait_for_state;

fn workspace(name: &str) -> Value {
    json!({
        "template": "gpu-workspace",
        "values": {"name": name, "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
    })
}

/// The ledger of `gpu-sp-01` (the demo catalog's one GPU cluster, with 1 GPU).
async fn sp(app: &TestApp, client: &reqwest::Client) -> Value {
    let all = app.get_json_as(client, "/api/v1/capacity", 200).await;
    let clusters = all["clusters"].as_array().unwrap();
    clusters
        .iter()
        .find(|c| c["id"] == "gpu-sp-01")
        .unwrap_or_else(|| panic!("no gpu-sp-01 in {all}"))
        .clone()
}

fn numbers(c: &Value) -> (i64, i64, i64, i64) {
    (
        c["total"].as_i64().unwrap(),
        c["allocated"].as_i64().unwrap(),
        c["pending"].as_i64().unwrap(),
        c["free"].as_i64().unwrap(),
    )
}

async fn submit(app: &TestApp, client: &reqwest::Client, name: &str) -> i64 {
    let r = app
        .post_json(client, "/api/v1/requests", &workspace(name), 201)
        .await;
    r["id"].as_i64().unwrap()
}

/// Sends an approval and answers its status and body.
async fn approve(app: &TestApp, id: i64, body: Value) -> (u16, Value) {
    let response = app
        .client
        .post(format!("{}/api/v1/requests/{id}/approve", app.address))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

const HAND_NAMESPACE: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ws-lab\n";
const HAND_QUOTA: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: gpus\n  namespace: ws-lab\nspec:\n  hard:\n    requests.nvidia.com/gpu: \"1\"\n";

on_both_databases! {
    async fn the_ledger_follows_a_workspace_from_submission_through_approval_to_the_merge_counting_it_once(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        assert_eq!(numbers(&sp(&app, &rui).await), (1, 0, 0, 1));

        let id = submit(&app, &rui, "rui-llm").await;
        let pending = sp(&app, &rui).await;
        assert_eq!(numbers(&pending), (1, 0, 1, 1));
        assert_eq!(pending["holders"][0]["namespace"], "ws-rui-llm");
        assert_eq!(pending["holders"][0]["request"], id);
        assert_eq!(pending["holders"][0]["stage"], "pending");
        assert_eq!(pending["holders"][0]["source"], "request");

        let (status, _) = approve(&app, id, json!({})).await;
        assert_eq!(status, 200);
        assert_eq!(numbers(&sp(&app, &rui).await), (1, 1, 0, 0));
        wait_for_state(&app, &rui, id, "proposed").await;
        let proposed = sp(&app, &rui).await;
        assert_eq!(numbers(&proposed), (1, 1, 0, 0));
        assert_eq!(proposed["holders"][0]["stage"], "allocated");

        app.post_json(&app.client, &format!("/api/v1/requests/{id}/merge"), &json!({}), 200).await;
        let merged = sp(&app, &rui).await;
        assert_eq!(numbers(&merged), (1, 1, 0, 0));
        let holders = merged["holders"].as_array().unwrap();
        assert_eq!(holders.len(), 1, "the merged request is counted once: {merged}");
        assert_eq!(holders[0]["source"], "monorepo");
        assert_eq!(holders[0]["request"], id);
        assert_eq!(holders[0]["target"], "apps/sp/gpu-sp-01/workspaces/rui-llm");
    }

    async fn asking_for_more_gpus_than_are_free_is_refused_with_the_numbers(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let id = submit(&app, &rui, "rui-llm").await;
        assert_eq!(approve(&app, id, json!({})).await.0, 200);

        for path in ["/api/v1/requests/preview", "/api/v1/requests"] {
            let refused = app.post_json(&rui, path, &workspace("second"), 422).await;
            let detail = &refused["details"][0];
            assert_eq!(detail["field"], "gpus", "{refused}");
            assert_eq!(detail["code"], "exceeds_free_capacity", "{refused}");
            assert_eq!(detail["message"], "asks 1, gpu-sp-01 has 1, 1 allocated to ws-rui-llm");
        }
        let mine = app.get_json_as(&rui, "/api/v1/requests", 200).await;
        assert_eq!(mine["requests"].as_array().unwrap().len(), 1, "nothing stored: {mine}");
    }

    async fn of_two_concurrent_approvals_for_the_last_gpu_exactly_one_succeeds(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let first = submit(&app, &rui, "one").await;
        let second = submit(&app, &rui, "two").await;
        assert_eq!(numbers(&sp(&app, &rui).await), (1, 0, 2, 1));

        let (a, b) = tokio::join!(approve(&app, first, json!({})), approve(&app, second, json!({})));

        let mut statuses = [a.0, b.0];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "{a:?} {b:?}");
        let (loser, refusal) = if a.0 == 409 { (first, a.1) } else { (second, b.1) };
        assert_eq!(refusal["details"][0]["code"], "exceeds_free_capacity", "{refusal}");
        let winner_ns = if loser == first { "ws-two" } else { "ws-one" };
        assert_eq!(
            refusal["details"][0]["message"],
            format!("asks 1, gpu-sp-01 has 1, 1 allocated to {winner_ns}")
        );
        assert_eq!(numbers(&sp(&app, &rui).await), (1, 1, 1, 0));
        let still = app.get_json_as(&rui, &format!("/api/v1/requests/{loser}"), 200).await;
        assert_eq!(still["state"], "awaiting_approval");
    }

    async fn an_admin_overcommits_only_with_a_reason_which_the_timeline_and_the_pull_request_record(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let first = submit(&app, &rui, "one").await;
        let second = submit(&app, &rui, "two").await;
        assert_eq!(approve(&app, first, json!({})).await.0, 200);
        let (status, _) = approve(&app, second, json!({"overcommit_reason": "  "})).await;
        assert_eq!(status, 409, "a blank reason is no reason");

        let (status, approved) = approve(
            &app,
            second,
            json!({"comment": "ok", "overcommit_reason": "ws-one runs only at night"}),
        )
        .await;

        assert_eq!(status, 200, "{approved}");
        assert_eq!(approved["overcommit_reason"], "ws-one runs only at night");
        let step = approved["timeline"].as_array().unwrap().iter().find(|t| t["to"] == "approved").unwrap().clone();
        assert_eq!(step["overcommit_reason"], "ws-one runs only at night");
        assert_eq!(step["comment"], "ok");
        assert_eq!(numbers(&sp(&app, &rui).await), (1, 2, 0, -1));
        let proposed = wait_for_state(&app, &rui, second, "proposed").await;
        let pr = app
            .db
            .local_pull_request_by_branch(proposed["branch"].as_str().unwrap())
            .await
            .unwrap()
            .unwrap();
        assert!(pr.body.contains("**Overcommitted:**") && pr.body.contains("ws-one runs only at night"), "{}", pr.body);
    }

    async fn a_workspace_added_by_hand_on_the_base_branch_holds_its_gpus(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        commit_on_main(&app.data_dir.join("monorepo"), "Workspace lab", &[
            ("apps/sp/gpu-sp-01/workspaces/lab/namespace.yaml", Some(HAND_NAMESPACE)),
            ("apps/sp/gpu-sp-01/workspaces/lab/quota.yaml", Some(HAND_QUOTA)),
        ]);

        let ledger = sp(&app, &rui).await;

        assert_eq!(numbers(&ledger), (1, 1, 0, 0));
        assert_eq!(ledger["holders"][0]["namespace"], "ws-lab");
        assert_eq!(ledger["holders"][0]["request"], Value::Null);
        assert_eq!(ledger["holders"][0]["source"], "monorepo");
        let refused = app.post_json(&rui, "/api/v1/requests", &workspace("rui-llm"), 422).await;
        assert_eq!(refused["details"][0]["message"], "asks 1, gpu-sp-01 has 1, 1 allocated to ws-lab");
    }

    async fn the_capacity_is_for_signed_in_users(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let response = app.anonymous.get(format!("{}/api/v1/capacity", app.address)).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 401);
    }
}
