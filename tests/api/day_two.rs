//! Day two on the local forge: a resource that exists is extended, updated and removed through
//! requests of their own (each a branch and a pull request, merged like the first), a request
//! is withdrawn before it is proposed, and a file changed by hand since a request was made
//! fails it instead of being overwritten.

use serde_json::{Value, json};

use crate::helpers::*;
use crate::requests::wait_for_state;

const FOLDER: &str = "apps/sp/gpu-sp-01/workspaces/nlp";

fn workspace(name: &str) -> Value {
    json!({
        "template": "gpu-workspace",
        "values": {"name": name, "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
    })
}

/// Rui's workspace `nlp`, approved by Ada and merged: the resource's id.
async fn merged_workspace(app: &TestApp, rui: &reqwest::Client) -> i64 {
    crate::requests::merged_workspace(app, rui, &workspace("nlp")).await
}

/// What the base branch holds under `dir`, as sorted paths.
fn on_main(app: &TestApp, dir: &str) -> Vec<String> {
    let repo = git2::Repository::open(app.data_dir.join("monorepo")).unwrap();
    let tree = repo
        .find_reference("refs/heads/main")
        .unwrap()
        .peel_to_tree()
        .unwrap();
    let mut paths = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
        let path = format!("{root}{}", entry.name().unwrap_or_default());
        if path.starts_with(dir) && entry.kind() == Some(git2::ObjectType::Blob) {
            paths.push(path);
        }
        git2::TreeWalkResult::Ok
    })
    .unwrap();
    paths
}

fn free_on_sp(capacity: &Value) -> i64 {
    capacity["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "gpu-sp-01")
        .unwrap()["free"]
        .as_i64()
        .unwrap()
}

on_both_databases! {
    async fn a_workspace_is_extended_then_removed_through_pull_requests_and_its_gpu_is_free_again(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let id = merged_workspace(&app, &rui).await;
        let path = format!("/api/v1/resources/{id}/requests");
        let in_60_days = (chrono::Utc::now().date_naive() + chrono::Days::new(60)).to_string();

        // The template lets extensions of up to 30 days through: 60 waits for an admin, who
        // approves it; only the expiry lines change.
        let short = app.post_json(&rui, &path, &json!({"kind": "extend", "values": {"days": 20}}), 201).await;
        assert_eq!(short["needs_approval"], false, "{short}");
        assert_ne!(short["state"], "awaiting_approval", "proposed at once");
        let short_id = short["id"].as_i64().unwrap();
        wait_for_state(&app, &rui, short_id, "proposed").await;
        app.post_json(&app.client, &format!("/api/v1/requests/{short_id}/merge"), &json!({}), 200).await;
        let extension = app.post_json(&rui, &path, &json!({"kind": "extend", "values": {"days": 60}}), 201).await;
        let extension_id = extension["id"].as_i64().unwrap();
        assert_eq!(extension["action"], "extend", "{extension}");
        assert_eq!(extension["needs_approval"], true, "beyond the template's 30 days");
        app.post_json(&app.client, &format!("/api/v1/requests/{extension_id}/approve"), &json!({}), 200).await;
        assert_eq!(extension["resource"], id, "it acts on the resource");
        let files = extension["files"].as_array().unwrap();
        assert!(!files.is_empty());
        assert!(files.iter().all(|f| f["path"].as_str().unwrap().starts_with(FOLDER)), "{extension}");
        assert!(files.iter().any(|f| f["content"].as_str().unwrap().contains(&in_60_days)), "{extension}");
        wait_for_state(&app, &rui, extension_id, "proposed").await;
        app.post_json(&app.client, &format!("/api/v1/requests/{extension_id}/merge"), &json!({}), 200).await;
        let extended = app.get_json_as(&rui, &format!("/api/v1/resources/{id}"), 200).await;
        assert_eq!(extended["expires"], in_60_days.as_str(), "{extended}");
        assert_eq!(extended["requests"], json!([id, short_id, extension_id]));

        // Two GPUs where the cluster has one: refused, on the GPUs field.
        let refused = app.post_json(&rui, &path, &json!({"kind": "update", "values": {"gpus": 2}}), 422).await;
        assert_eq!(refused["details"][0]["field"], "gpus", "{refused}");
        assert_eq!(free_on_sp(&app.get_json_as(&rui, "/api/v1/capacity", 200).await), 0);

        // Removed: the pull request deletes every file of the folder.
        let before: Vec<String> = on_main(&app, FOLDER);
        assert!(!before.is_empty());
        let removal = app.post_json(&rui, &path, &json!({"kind": "remove"}), 201).await;
        let removal_id = removal["id"].as_i64().unwrap();
        assert_eq!(removal["action"], "remove");
        assert_eq!(removal["files"], json!([]));
        let mut removed: Vec<String> = removal["removed"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_owned()).collect();
        removed.sort();
        assert_eq!(removed, before);
        wait_for_state(&app, &rui, removal_id, "proposed").await;
        app.post_json(&app.client, &format!("/api/v1/requests/{removal_id}/merge"), &json!({}), 200).await;

        assert_eq!(on_main(&app, FOLDER), Vec::<String>::new(), "the folder is gone from main");
        let gone = app.get_json_as(&rui, &format!("/api/v1/resources/{id}"), 200).await;
        assert_eq!(gone["state"], "removed", "{gone}");
        assert_eq!(free_on_sp(&app.get_json_as(&rui, "/api/v1/capacity", 200).await), 1, "the GPU is free again");
        let next = app.post_json(&rui, "/api/v1/requests", &workspace("vision"), 201).await;
        assert_eq!(next["state"], "awaiting_approval", "{next}");
        let again = app.post_json(&rui, &path, &json!({"kind": "extend", "values": {"days": 10}}), 409).await;
        assert!(again["error"].as_str().unwrap().contains("removed"), "{again}");
    }

    async fn a_request_is_withdrawn_by_its_author_before_it_is_merged_its_pull_request_closed(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let waiting = app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await;
        let id = waiting["id"].as_i64().unwrap();
        assert_eq!(waiting["can_withdraw"], true, "{waiting}");

        let withdrawn = app.post_json(&rui, &format!("/api/v1/requests/{id}/withdraw"), &json!({}), 200).await;

        assert_eq!(withdrawn["state"], "closed", "{withdrawn}");
        assert_eq!(withdrawn["can_withdraw"], false);
        let last = withdrawn["timeline"].as_array().unwrap().last().unwrap().clone();
        assert_eq!((last["actor"].as_str(), last["comment"].as_str()), (Some("rui"), Some("withdrawn")), "{last}");
        app.post_json(&app.client, &format!("/api/v1/requests/{id}/approve"), &json!({}), 409).await;
        // Nothing is held for it any more: the folder can be asked for again.
        let again = app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await;
        let again_id = again["id"].as_i64().unwrap();
        // Someone else's request does not exist for a researcher; an admin may withdraw it.
        let bia = app.with_token(&seed_token(&app.db, "bia", &[]).await);
        app.post_json(&bia, &format!("/api/v1/requests/{again_id}/withdraw"), &json!({}), 404).await;
        app.post_json(&app.client, &format!("/api/v1/requests/{again_id}/approve"), &json!({}), 200).await;
        let proposed = wait_for_state(&app, &rui, again_id, "proposed").await;
        assert_eq!(proposed["can_withdraw"], true, "{proposed}");
        // Proposed: its pull request is closed on the forge, and the request with it.
        let late = app.post_json(&rui, &format!("/api/v1/requests/{again_id}/withdraw"), &json!({}), 200).await;
        assert_eq!(late["state"], "closed", "{late}");
        assert_eq!(late["can_withdraw"], false);
        let last = late["timeline"].as_array().unwrap().last().unwrap().clone();
        assert_eq!((last["actor"].as_str(), last["comment"].as_str()), (Some("rui"), Some("withdrawn")), "{last}");
        // Closed, not merged: merging it now is refused, and the folder is free again.
        app.post_json(&app.client, &format!("/api/v1/requests/{again_id}/merge"), &json!({}), 409).await;
        app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await;
    }

    async fn only_the_owner_or_an_admin_changes_a_resource_and_only_once_its_files_are_merged(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let pending = app.post_json(&rui, "/api/v1/requests", &workspace("draft"), 201).await["id"].as_i64().unwrap();
        let not_yet = app.post_json(&rui, &format!("/api/v1/resources/{pending}/requests"), &json!({"kind": "remove"}), 409).await;
        assert!(not_yet["error"].as_str().unwrap().contains("pending"), "{not_yet}");
        let id = merged_workspace(&app, &rui).await;
        let path = format!("/api/v1/resources/{id}/requests");

        let bia = app.with_token(&seed_token(&app.db, "bia", &[]).await);
        app.post_json(&bia, &path, &json!({"kind": "remove"}), 404).await;
        let create = app.post_json(&rui, &path, &json!({"kind": "create"}), 422).await;
        assert_eq!(create["details"][0]["field"], "kind", "{create}");
        let too_much = app.post_json(&rui, &path, &json!({"kind": "extend", "values": {"days": 10, "gpus": 1}}), 422).await;
        assert_eq!(too_much["details"][0]["field"], "gpus", "{too_much}");
        let no_days = app.post_json(&rui, &path, &json!({"kind": "extend", "values": {}}), 422).await;
        assert_eq!(no_days["details"][0]["field"], "days", "{no_days}");
        let moved = app.post_json(&rui, &path, &json!({"kind": "update", "values": {"name": "elsewhere"}}), 422).await;
        assert!(moved["details"][0]["message"].as_str().unwrap().contains("would move"), "{moved}");
        let bad_kind = app.post_json(&rui, &path, &json!({"kind": "explode"}), 400).await;
        assert!(bad_kind["error"].as_str().unwrap().contains("`update`, `extend`, `remove`"), "{bad_kind}");
        // An admin may; and while that request is open, a second one is refused naming it.
        let update = app.post_json(&app.client, &path, &json!({"kind": "update", "values": {"memory_gib": 64}}), 201).await;
        assert_eq!(update["state"], "awaiting_approval", "an update asks for approval as the template does");
        let second = app.post_json(&rui, &path, &json!({"kind": "remove"}), 409).await;
        assert_eq!(second["request"], update["id"], "{second}");
    }

    async fn a_file_changed_by_hand_since_the_request_fails_it_instead_of_being_overwritten(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let id = merged_workspace(&app, &rui).await;
        let update = app.post_json(&rui, &format!("/api/v1/resources/{id}/requests"), &json!({"kind": "update", "values": {"memory_gib": 64}}), 201).await;
        let update_id = update["id"].as_i64().unwrap();
        let changed = update["files"].as_array().unwrap().iter().find(|f| f["path"].as_str().unwrap().ends_with("resourcequota.yaml")).expect("the quota changes").clone();
        let quota = changed["path"].as_str().unwrap();
        commit_on_main(&app.data_dir.join("monorepo"), "quota raised by hand", &[(quota, Some("# raised by hand\n"))]);

        app.post_json(&app.client, &format!("/api/v1/requests/{update_id}/approve"), &json!({}), 200).await;
        let failed = wait_for_state(&app, &rui, update_id, "failed").await;

        let error = failed["last_error"].as_str().unwrap();
        assert!(error.contains(quota) && error.contains("changed on `main`"), "{error}");
        let repo = git2::Repository::open(app.data_dir.join("monorepo")).unwrap();
        let blob = repo.revparse_single(&format!("main:{quota}")).unwrap().peel_to_blob().unwrap();
        assert_eq!(blob.content(), b"# raised by hand\n", "the hand-made change stands");
    }

    async fn a_rejected_request_is_resubmitted_with_changed_values_as_a_new_request_that_links_the_old(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let first = app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await;
        let id = first["id"].as_i64().unwrap();
        // Not ended yet: nothing to resubmit.
        assert_eq!(first["can_resubmit"], false, "{first}");
        app.post_json(&rui, &format!("/api/v1/requests/{id}/resubmit"), &json!({}), 409).await;
        app.post_json(&app.client, &format!("/api/v1/requests/{id}/reject"), &json!({"comment": "state a purpose the lab can check"}), 200)
            .await;
        let rejected = app.get_json_as(&rui, &format!("/api/v1/requests/{id}"), 200).await;
        assert_eq!(rejected["can_resubmit"], true, "{rejected}");

        // Every field is checked again: a bad value is refused and nothing is stored.
        let refused = app
            .post_json(&rui, &format!("/api/v1/requests/{id}/resubmit"), &json!({"values": {"gpus": 0, "memory_gib": 9999}}), 422)
            .await;
        let fields: Vec<&str> = refused["details"].as_array().unwrap().iter().map(|d| d["field"].as_str().unwrap()).collect();
        assert!(fields.contains(&"gpus") && fields.contains(&"memory_gib"), "{refused}");

        let path = format!("/api/v1/requests/{id}/resubmit");
        let body = json!({"values": {"purpose": "thesis chapter 3: fine-tuning on the lab's corpus"}});
        let again = app.post_json_with_key(&rui, &path, &body, "resubmit-1", 201).await;
        let again_id = again["id"].as_i64().unwrap();
        assert_ne!(again_id, id);
        assert_eq!(again["resubmits"], id, "{again}");
        assert_eq!(again["state"], "awaiting_approval", "the same approval as a first request");
        // The old values stay unless changed: same name, cluster and GPUs, the new purpose.
        assert_eq!(again["values"]["name"], "nlp");
        assert_eq!(again["values"]["gpus"], 1);
        assert_eq!(again["values"]["purpose"], "thesis chapter 3: fine-tuning on the lab's corpus");
        assert!(again["files"].as_array().unwrap().iter().any(|f| f["content"].as_str().unwrap().contains("fine-tuning")), "{again}");
        // Sent again with its key, the same request answers; the old one links the new.
        let replayed = app.post_json_with_key(&rui, &path, &body, "resubmit-1", 201).await;
        assert_eq!(replayed["id"], again_id);
        let old = app.get_json_as(&rui, &format!("/api/v1/requests/{id}"), 200).await;
        assert_eq!(old["resubmitted_as"], again_id, "{old}");
        assert_eq!(old["can_resubmit"], false, "made again once");
        // Someone else's request does not exist for a researcher.
        let bia = app.with_token(&seed_token(&app.db, "bia", &[]).await);
        app.post_json(&bia, &path, &json!({}), 404).await;
    }

    async fn a_day_two_request_is_previewed_with_its_diff_and_nothing_is_stored(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let id = merged_workspace(&app, &rui).await;
        let path = format!("/api/v1/resources/{id}/requests/preview");
        let before = app.get_json_as(&rui, "/api/v1/requests", 200).await["requests"].as_array().unwrap().len();

        let removal = app.post_json(&rui, &path, &json!({"kind": "remove"}), 200).await;
        let files = removal["files"].as_array().unwrap();
        assert!(files.len() >= 2, "{removal}");
        for f in files {
            assert_eq!(f["status"], "deleted", "{f}");
            let diff = f["diff"].as_str().unwrap();
            assert!(diff.contains("+++ /dev/null"), "{diff}");
        }
        assert_eq!(removal["needs_approval"], false);

        let memory = app.post_json(&rui, &path, &json!({"kind": "update", "values": {"memory_gib": 64}}), 200).await;
        assert_eq!(memory["needs_approval"], true, "an update asks as the template does");
        let quota = memory["files"].as_array().unwrap().iter().find(|f| f["path"].as_str().unwrap().ends_with("resourcequota.yaml")).unwrap();
        assert_eq!(quota["status"], "modified");
        assert!(quota["diff"].as_str().unwrap().contains("+    requests.memory: \"64Gi\""), "{quota}");

        // Refused as the request would be, with every field.
        let refused = app.post_json(&rui, &path, &json!({"kind": "update", "values": {"gpus": 0, "cpu": 999}}), 422).await;
        assert_eq!(refused["details"].as_array().unwrap().len(), 2, "{refused}");
        let after = app.get_json_as(&rui, "/api/v1/requests", 200).await["requests"].as_array().unwrap().len();
        assert_eq!(after, before, "a preview stores nothing");
    }
}
