//! A request's proposed change on the local forge (`GET /api/v1/requests/{id}/change`): what its
//! branch proposes, read from the real git monorepo, while open and once merged.

use serde_json::{Value, json};

use crate::helpers::*;
use crate::requests::wait_for_state;

fn workspace() -> Value {
    json!({
        "template": "gpu-workspace",
        "values": {"name": "nlp", "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
    })
}

on_both_databases! {
    async fn a_proposed_request_shows_its_branch_s_commit_and_diffs_open_then_merged(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let bia = app.with_token(&seed_token(&app.db, "bia", &[]).await);
        let submitted = app.post_json(&rui, "/api/v1/requests", &workspace(), 201).await;
        let id = submitted["id"].as_i64().unwrap();
        let path = format!("/api/v1/requests/{id}/change");

        // Awaiting approval: no pull request yet.
        let early = app.get_json_as(&rui, &path, 409).await;
        assert!(early["error"].as_str().unwrap().contains("no pull request yet"), "{early}");

        app.post_json(&app.client, &format!("/api/v1/requests/{id}/approve"), &json!({}), 200).await;
        let proposed = wait_for_state(&app, &rui, id, "proposed").await;
        let open = app.get_json_as(&rui, &path, 200).await;
        assert_eq!(open["state"], "open", "{open}");
        assert_eq!(open["branch"], proposed["branch"]);
        assert_eq!(open["base"], "main");
        assert_eq!(open["commits"].as_array().unwrap().len(), 1, "{open}");
        let mut from_git: Vec<&str> = open["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
        let mut asked: Vec<&str> = proposed["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
        from_git.sort_unstable();
        asked.sort_unstable();
        assert_eq!(from_git, asked, "git's diff holds exactly the request's files");
        for f in open["files"].as_array().unwrap() {
            assert_eq!(f["status"], "added", "{f}");
            assert!(f["diff"].as_str().unwrap().contains("\n+"), "{f}");
        }
        let to = open["to"].as_str().unwrap().to_owned();

        // Another researcher does not see it; nobody signed out does.
        app.get_json_as(&bia, &path, 404).await;
        let anonymous = app.anonymous.get(format!("{}{path}", app.address)).send().await.unwrap();
        assert_eq!(anonymous.status().as_u16(), 401);

        // Merged: what the merge brought, from the base before it to the merge commit.
        app.post_json(&app.client, &format!("/api/v1/requests/{id}/merge"), &json!({}), 200).await;
        let merged = app.get_json_as(&app.client, &path, 200).await;
        assert_eq!(merged["state"], "merged", "{merged}");
        assert_eq!(merged["from"], open["from"], "the base before the merge");
        assert!(!merged["to"].as_str().unwrap().is_empty() && !to.is_empty());
        assert_eq!(merged["files"].as_array().unwrap().len(), from_git.len(), "{merged}");
        assert_eq!(merged["commits"][0]["id"], open["commits"][0]["id"], "{merged}");
    }
}
