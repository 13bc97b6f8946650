//! Self-service requests end to end on the local forge: templates, preview, submission,
//! approval, the worker's branches and pull requests in a real git repository, the merge and
//! the catalog reload; who may do what; a forge that is down.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use chrono::Utc;
use mirante::adapters::{
    db::requests::{Author, NewRequest},
    forge::FileChange,
};
use serde_json::{Value, json};

use crate::helpers::*;

fn workspace() -> Value {
    json!({
        "template": "gpu-workspace",
        "values": {"name": "nlp", "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
    })
}

fn database() -> Value {
    json!({
        "template": "postgres-cnpg",
        "values": {"cluster": "gpu-sp-01", "name": "analytics", "namespace": "ws-nlp", "databases": ["results"]}
    })
}

/// Waits until the request reaches `state` (as `client` sees it), or fails after 60 s.
pub(crate) async fn wait_for_state(
    app: &TestApp,
    client: &reqwest::Client,
    id: i64,
    state: &str,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = app
            .get_json_as(client, &format!("/api/v1/requests/{id}"), 200)
            .await;
        if r["state"] == state {
            return r;
        }
        assert!(
            Instant::now() < deadline,
            "request {id} never became {state}: {r}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Rui's GPU workspace request `input` (`{"template": "gpu-workspace", "values": …}`),
/// approved by Ada, proposed and merged in the portal; its id (the resource's).
pub(crate) async fn merged_workspace(app: &TestApp, rui: &reqwest::Client, input: &Value) -> i64 {
    let id = app.post_json(rui, "/api/v1/requests", input, 201).await["id"]
        .as_i64()
        .unwrap();
    app.post_json(
        &app.client,
        &format!("/api/v1/requests/{id}/approve"),
        &serde_json::json!({}),
        200,
    )
    .await;
    wait_for_state(app, rui, id, "proposed").await;
    app.post_json(
        &app.client,
        &format!("/api/v1/requests/{id}/merge"),
        &serde_json::json!({}),
        200,
    )
    .await;
    id
}

/// The files a branch adds or changes on top of `main`, with their contents.
fn branch_files(monorepo: &Path, branch: &str) -> Vec<(String, String)> {
    let repo = git2::Repository::open(monorepo).unwrap();
    let tip = repo
        .find_reference(&format!("refs/heads/{branch}"))
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert_eq!(tip.parent_count(), 1, "one commit on top of main");
    let parent = tip.parent(0).unwrap();
    let diff = repo
        .diff_tree_to_tree(
            Some(&parent.tree().unwrap()),
            Some(&tip.tree().unwrap()),
            None,
        )
        .unwrap();
    let mut files: Vec<(String, String)> = diff
        .deltas()
        .map(|d| {
            let blob = repo.find_blob(d.new_file().id()).unwrap();
            (
                d.new_file().path().unwrap().to_string_lossy().into_owned(),
                String::from_utf8(blob.content().to_vec()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

fn mirante_branches(monorepo: &Path) -> Vec<String> {
    let repo = git2::Repository::open(monorepo).unwrap();
    let mut names: Vec<String> = repo
        .branches(Some(git2::BranchType::Local))
        .unwrap()
        .map(|b| b.unwrap().0.name().unwrap().unwrap().to_owned())
        .filter(|n| n.starts_with("mirante/"))
        .collect();
    names.sort();
    names
}

/// The `(path, content)` pairs of a preview's or a request's `files`, sorted.
pub(crate) fn preview_files(preview: &Value) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = preview["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    files.sort();
    files
}

/// A request written straight to the database, as a future portal edit of the catalog would
/// make one (no template involved), queued for the worker.
async fn seed_request(app: &TestApp, target: &str, files: Vec<FileChange>) -> i64 {
    seed_request_at(app, target, files, Utc::now()).await
}

/// [`seed_request`] made (and queued) at `at`.
pub(crate) async fn seed_request_at(
    app: &TestApp,
    target: &str,
    files: Vec<FileChange>,
    at: chrono::DateTime<Utc>,
) -> i64 {
    let user_id = app
        .db
        .upsert_user(&mirante::adapters::db::NewUser {
            issuer: "test",
            subject: "test-admin",
            username: "test-admin",
            name: "test-admin",
            email: None,
            groups: &["portal-admins".to_owned()],
            at: Utc::now(),
        })
        .await
        .unwrap();
    let request = app
        .db
        .insert_request(&NewRequest {
            template: "catalog-edit",
            template_title: "Catalog edit",
            values: &json!({}),
            files: &files,
            target,
            slug: "catalog-edit",
            author: &Author {
                user_id,
                username: "test-admin".into(),
                name: "test-admin".into(),
                email: None,
            },
            needs_approval: false,
            at,
            idempotency: None,
        })
        .await
        .unwrap();
    app.worker.wake();
    request.id
}

/// A request that the forge has pull request `number` for, as the worker leaves it.
async fn seed_proposed(app: &TestApp, number: i64) -> i64 {
    use mirante::adapters::db::requests::Change;
    use mirante_domain::request::RequestEvent;
    let id = seed_request(
        app,
        "notes/hook",
        vec![FileChange {
            path: "notes/hook/a.yaml".into(),
            content: "a: 1\n".into(),
        }],
    )
    .await;
    let url = format!("https://gitlab.example/infra/devops/-/merge_requests/{number}");
    // The worker may start proposing first (and then wait for the unreachable forge).
    let _ = app
        .db
        .transition_request(
            id,
            RequestEvent::StartProposing,
            &Change {
                actor: "system",
                ..Change::default()
            },
            Utc::now(),
        )
        .await;
    app.db
        .transition_request(
            id,
            RequestEvent::Propose,
            &Change {
                actor: "system",
                pull_request: Some((number, &url)),
                ..Change::default()
            },
            Utc::now(),
        )
        .await
        .unwrap();
    id
}

on_both_databases! {
    async fn a_researchers_workspace_and_database_are_approved_proposed_as_two_branches_and_one_is_merged(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let monorepo = app.data_dir.join("monorepo");

        let templates = app.get_json_as(&rui, "/api/v1/templates", 200).await;
        let ids: Vec<&str> = templates["templates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&"gpu-workspace") && ids.contains(&"postgres-cnpg"), "{ids:?}");
        let detail = app.get_json_as(&rui, "/api/v1/templates/gpu-workspace", 200).await;
        assert!(detail["manifest"]["parameters"].as_array().is_some(), "{detail}");

        // Preview, submit, approve and follow each request; the workspace is merged before the
        // database is asked for, since a researcher's database goes in one of their own
        // workspaces' namespaces.
        let mut requests = Vec::new();
        for input in [workspace(), database()] {
            let preview = app.post_json(&rui, "/api/v1/requests/preview", &input, 200).await;
            let files = preview["files"].as_array().unwrap();
            assert!(!files.is_empty(), "{preview}");
            for f in files {
                assert_eq!(f["status"], "added", "{f}");
                assert!(f["diff"].as_str().unwrap().starts_with("--- /dev/null\n+++ b/"), "{f}");
            }
            let submitted = app.post_json(&rui, "/api/v1/requests", &input, 201).await;
            assert_eq!(submitted["state"], "awaiting_approval", "{submitted}");
            assert_eq!(submitted["author"], "rui");
            // Exactly the files the preview showed.
            assert_eq!(preview_files(&submitted), preview_files(&preview));
            let id = submitted["id"].as_i64().unwrap();
            let before = mirante_branches(&monorepo);
            assert!(!before.iter().any(|b| b.starts_with(&format!("mirante/{id}-"))), "nothing is proposed before approval");

            // A researcher cannot approve; an admin does.
            let refused = rui
                .post(format!("{}/api/v1/requests/{id}/approve", app.address))
                .json(&json!({}))
                .send()
                .await
                .unwrap();
            assert_eq!(refused.status().as_u16(), 403);
            let approved = app
                .post_json(&app.client, &format!("/api/v1/requests/{id}/approve"), &json!({"comment": "fine"}), 200)
                .await;
            assert_eq!(approved["state"], "approved", "{approved}");

            // The worker proposes it: a branch holding exactly the previewed files.
            let r = wait_for_state(&app, &rui, id, "proposed").await;
            let branch = r["branch"].as_str().unwrap().to_owned();
            assert!(branch.starts_with(&format!("mirante/{id}-")), "{branch}");
            assert_eq!(branch_files(&monorepo, &branch), preview_files(&submitted));
            assert_eq!(preview_files(&r), preview_files(&submitted));
            assert!(r["pr_number"].as_i64().is_some(), "{r}");
            assert_eq!(r["pr_url"], format!("{}/requests/{id}/change", app.address));
            assert_eq!(r["last_error"], Value::Null);
            assert_eq!(mirante_branches(&monorepo).len(), before.len() + 1);
            requests.push((id, submitted));
            if requests.len() == 1 {
                let merged = app
                    .post_json(&app.client, &format!("/api/v1/requests/{id}/merge"), &json!({}), 200)
                    .await;
                assert_eq!(merged["state"], "merged", "{merged}");
            }
        }

        // The admin merged the workspace; the request shows merged with its timeline.
        let (ws_id, ws_submitted) = &requests[0];
        let seen = app.get_json_as(&rui, &format!("/api/v1/requests/{ws_id}"), 200).await;
        assert_eq!(seen["state"], "merged");
        let timeline: Vec<(&str, &str)> = seen["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["to"].as_str().unwrap(), t["actor"].as_str().unwrap()))
            .collect();
        assert_eq!(
            timeline,
            [
                ("submitted", "rui"),
                ("awaiting_approval", "rui"),
                ("approved", "test-admin"),
                ("proposing", "system"),
                ("proposed", "system"),
                ("merged", "test-admin"),
            ]
        );
        assert_eq!(seen["timeline"][2]["comment"], "fine");
        // main now holds the workspace's files; the database request is still open.
        let repo = git2::Repository::open(&monorepo).unwrap();
        let main = repo.find_reference("refs/heads/main").unwrap().peel_to_commit().unwrap();
        for (path, content) in preview_files(ws_submitted) {
            let entry = main.tree().unwrap().get_path(Path::new(&path)).unwrap();
            assert_eq!(repo.find_blob(entry.id()).unwrap().content(), content.as_bytes());
        }
        let db_request = app.get_json_as(&rui, &format!("/api/v1/requests/{}", requests[1].0), 200).await;
        assert_eq!(db_request["state"], "proposed");

        // The same workspace again: its directory now exists in the monorepo.
        let again = rui
            .post(format!("{}/api/v1/requests/preview", app.address))
            .json(&workspace())
            .send()
            .await
            .unwrap();
        assert_eq!(again.status().as_u16(), 409);

        let actions: Vec<String> = app
            .db
            .list_audit(50)
            .await
            .unwrap()
            .into_iter()
            .filter(|e| e.action.starts_with("request."))
            .map(|e| e.action)
            .collect();
        for action in ["request.submit", "request.approve", "request.merge"] {
            assert!(actions.iter().any(|a| a == action), "{action} not audited: {actions:?}");
        }
    }

    async fn researchers_see_only_their_own_requests_and_cannot_decide_them(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let bia = app.with_token(&seed_token(&app.db, "bia", &["researchers"]).await);
        let submitted = app.post_json(&rui, "/api/v1/requests", &workspace(), 201).await;
        let id = submitted["id"].as_i64().unwrap();

        let as_bia = app.get_json_as(&bia, &format!("/api/v1/requests/{id}"), 404).await;
        let bia_list = app.get_json_as(&bia, "/api/v1/requests", 200).await;
        let rui_list = app.get_json_as(&rui, "/api/v1/requests", 200).await;
        let admin_list = app.get_json_as(&app.client, "/api/v1/requests", 200).await;

        assert!(as_bia["error"].as_str().is_some());
        assert_eq!(bia_list["requests"], json!([]));
        assert_eq!(rui_list["requests"][0]["id"], id);
        assert_eq!(admin_list["requests"][0]["id"], id);
        for action in ["approve", "reject", "merge"] {
            let refused = bia
                .post(format!("{}/api/v1/requests/{id}/{action}", app.address))
                .json(&json!({"comment": "no"}))
                .send()
                .await
                .unwrap();
            assert_eq!(refused.status().as_u16(), 403, "{action}");
        }
        for path in ["/api/v1/requests", "/api/v1/templates", &format!("/api/v1/requests/{id}")] {
            let anonymous = app.anonymous.get(format!("{}{path}", app.address)).send().await.unwrap();
            assert_eq!(anonymous.status().as_u16(), 401, "{path}");
        }
        let anonymous = app
            .anonymous
            .post(format!("{}/api/v1/requests", app.address))
            .json(&workspace())
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status().as_u16(), 401);
        let still = app.get_json_as(&rui, &format!("/api/v1/requests/{id}"), 200).await;
        assert_eq!(still["state"], "awaiting_approval");
        assert_eq!(still["can_decide"], false);
    }

    async fn an_admin_neither_approves_nor_merges_their_own_request_while_four_eyes_hold(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Embedded, |config, _| {
            config.allow_self_approval = Some(false);
        })
        .await;
        let ada = app.dev_browser("ada").await;
        let id = app.post_json(&ada, "/api/v1/requests", &workspace(), 201).await["id"]
            .as_i64()
            .unwrap();

        let own = app.get_json_as(&ada, &format!("/api/v1/requests/{id}"), 200).await;
        let own_approval = app
            .post_json(&ada, &format!("/api/v1/requests/{id}/approve"), &json!({}), 403)
            .await;
        let seen_by_other = app.get_json_as(&app.client, &format!("/api/v1/requests/{id}"), 200).await;
        app.post_json(&app.client, &format!("/api/v1/requests/{id}/approve"), &json!({"comment": "fine"}), 200)
            .await;
        let proposed = wait_for_state(&app, &ada, id, "proposed").await;
        let own_merge = app
            .post_json(&ada, &format!("/api/v1/requests/{id}/merge"), &json!({}), 403)
            .await;
        let merged = app
            .post_json(&app.client, &format!("/api/v1/requests/{id}/merge"), &json!({}), 200)
            .await;

        assert_eq!((own["can_decide"].clone(), own["another_admin_decides"].clone()), (json!(false), json!(true)));
        assert!(own_approval["error"].as_str().unwrap().contains("another admin"), "{own_approval}");
        assert_eq!((seen_by_other["can_decide"].clone(), seen_by_other["another_admin_decides"].clone()), (json!(true), json!(false)));
        assert_eq!((proposed["can_merge"].clone(), proposed["another_admin_decides"].clone()), (json!(false), json!(true)));
        assert!(own_merge["error"].as_str().unwrap().contains("another admin"), "{own_merge}");
        assert_eq!(merged["state"], "merged");
    }

    async fn with_the_development_sign_in_the_one_demo_admin_approves_their_own_request(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let ada = app.dev_browser("ada").await;
        let id = app.post_json(&ada, "/api/v1/requests", &workspace(), 201).await["id"]
            .as_i64()
            .unwrap();

        let approved = app
            .post_json(&ada, &format!("/api/v1/requests/{id}/approve"), &json!({}), 200)
            .await;

        assert_eq!(approved["state"], "approved");
        assert_eq!(approved["another_admin_decides"], false);
    }

    async fn a_rejection_needs_a_comment_and_ends_the_request(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let id = app.post_json(&rui, "/api/v1/requests", &workspace(), 201).await["id"]
            .as_i64()
            .unwrap();

        let no_comment = app
            .post_json(&app.client, &format!("/api/v1/requests/{id}/reject"), &json!({"comment": "  "}), 400)
            .await;
        let rejected = app
            .post_json(&app.client, &format!("/api/v1/requests/{id}/reject"), &json!({"comment": "no GPUs left this month"}), 200)
            .await;
        let approve_after = app
            .post_json(&app.client, &format!("/api/v1/requests/{id}/approve"), &json!({}), 409)
            .await;

        assert!(no_comment["error"].as_str().unwrap().contains("comment"), "{no_comment}");
        assert_eq!(rejected["state"], "rejected");
        assert_eq!(rejected["decision_comment"], "no GPUs left this month");
        assert!(approve_after["error"].as_str().unwrap().contains("rejected"), "{approve_after}");
        assert!(app.db.job_of_request(id).await.unwrap().is_none(), "nothing queued");
        let audit = app.db.list_audit(5).await.unwrap();
        assert!(audit.iter().any(|e| e.action == "request.reject" && e.target == format!("request:{id}")));
    }

    async fn invalid_values_are_refused_with_every_field_listed(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let bad = json!({
            "template": "gpu-workspace",
            "values": {"name": "Not A Name!", "cluster": "gpu-sp-01", "gpus": 64, "days": 0}
        });

        let preview = app.post_json(&rui, "/api/v1/requests/preview", &bad, 422).await;
        let submit = app.post_json(&rui, "/api/v1/requests", &bad, 422).await;
        let unknown = app
            .post_json(&rui, "/api/v1/requests", &json!({"template": "nope", "values": {}}), 404)
            .await;
        let not_json = rui
            .post(format!("{}/api/v1/requests", app.address))
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap();

        let fields: Vec<&str> = preview["details"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["field"].as_str().unwrap())
            .collect();
        for field in ["name", "gpus", "days"] {
            assert!(fields.contains(&field), "{field} not in {preview}");
        }
        assert_eq!(submit["details"], preview["details"]);
        assert!(unknown["error"].as_str().is_some());
        assert_eq!(not_json.status().as_u16(), 400);

        // A pattern is explained in the template's words (the UI reads them in both languages).
        let database = json!({
            "template": "postgres-cnpg",
            "values": {"cluster": "gpu-sp-01", "name": "appdb", "namespace": "ws-nlp", "databases": ["app"], "owner": "Bad-Owner"}
        });
        let refused = app.post_json(&rui, "/api/v1/requests/preview", &database, 422).await;
        let owner = refused["details"].as_array().unwrap().iter().find(|d| d["field"] == "owner").unwrap_or_else(|| panic!("{refused}"));
        assert_eq!(owner["code"], "pattern", "{owner}");
        assert!(owner["message"].as_str().unwrap().starts_with("does not have the expected form: Lowercase letters"), "{owner}");
        assert!(app.db.list_requests(None, 10).await.unwrap().is_empty(), "nothing stored");
    }

    async fn a_forge_that_is_down_is_retried_with_backoff_showing_the_last_error_and_nothing_is_lost(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Embedded, |config, _| {
            config.worker_retry_secs = 1;
            config.worker_retry_max_secs = 2;
        })
        .await;
        let monorepo = app.data_dir.join("monorepo");
        let away = app.data_dir.join("monorepo-away");
        // The repository is out of reach: every forge call answers Unavailable.
        std::fs::rename(&monorepo, &away).unwrap();
        let files = vec![FileChange {
            path: "notes/outage.yaml".into(),
            content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outage\n".into(),
        }];
        let id = seed_request(&app, "notes", files.clone()).await;

        let deadline = Instant::now() + Duration::from_secs(60);
        let (down, job) = loop {
            let r = app.db.request(id).await.unwrap().unwrap();
            let job = app.db.job_of_request(id).await.unwrap().unwrap();
            if job.attempts >= 3 && job.lease_owner.is_none() {
                break (r, job);
            }
            assert!(Instant::now() < deadline, "not retried: {r:?} {job:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(down.state, mirante_domain::request::RequestState::Proposing);
        let error = down.last_error.clone().unwrap();
        assert!(error.contains("unavailable"), "{error}");
        assert!(error.contains("trying again in"), "{error}");
        assert!(job.done_at.is_none(), "the job is kept");
        assert!(job.last_error.is_some());
        let shown = app.get_json(&format!("/api/v1/requests/{id}"), 200).await;
        assert_eq!(shown["last_error"], error.as_str());

        // The forge comes back: the next attempt proposes it.
        std::fs::rename(&away, &monorepo).unwrap();
        let r = wait_for_state(&app, &app.client, id, "proposed").await;
        assert_eq!(r["last_error"], Value::Null);
        let branch = r["branch"].as_str().unwrap();
        assert_eq!(
            branch_files(&monorepo, branch),
            files.iter().map(|f| (f.path.clone(), f.content.clone())).collect::<Vec<_>>()
        );
        assert_eq!(mirante_branches(&monorepo).len(), 1);
    }

    async fn merging_a_catalog_change_reloads_the_catalog_from_the_monorepo(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let before = app.get_json("/api/v1/catalog", 200).await;
        let (commit, _) = mirante::adapters::git::read_dir_at(
            &app.data_dir.join("monorepo"),
            "main",
            "catalog",
        )
        .unwrap();
        assert_eq!(before["revision"], commit.as_str());
        app.get_json("/api/v1/items/merged-gpu-pool", 404).await;
        let item = "items:\n  - id: merged-gpu-pool\n    name: GPU pool added by a merged request\n    kind: component\n    layer: l8b\n    state: desired\n";
        let id = seed_request(
            &app,
            "catalog/requested",
            vec![FileChange { path: "catalog/requested/gpu-pool.yaml".into(), content: item.into() }],
        )
        .await;
        wait_for_state(&app, &app.client, id, "proposed").await;
        app.get_json("/api/v1/items/merged-gpu-pool", 404).await;

        let merged = app
            .post_json(&app.client, &format!("/api/v1/requests/{id}/merge"), &json!({"style": "merge-commit"}), 200)
            .await;

        assert_eq!(merged["state"], "merged");
        let after = app.get_json("/api/v1/catalog", 200).await;
        assert_ne!(after["hash"], before["hash"]);
        assert_ne!(after["revision"], before["revision"]);
        let item = app.get_json("/api/v1/items/merged-gpu-pool", 200).await;
        assert_eq!(item["item"]["name"], "GPU pool added by a merged request");
        let reload = app.db.list_audit(10).await.unwrap().into_iter().find(|e| e.action == "catalog.reload").unwrap();
        assert_eq!(reload.detail["trigger"]["kind"], "merge");
        assert_eq!(reload.actor, "test-admin");
    }

    async fn a_webhook_without_a_valid_signature_is_refused_and_audited_once_per_window(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.webhook_secret = Some(secrecy::SecretString::from("hook-secret"));
        })
        .await;

        let mut flood = Vec::new();
        for _ in 0..31 {
            let forged = app.forged_webhook().await;
            flood.push(forged.status().as_u16());
        }

        assert!(flood.iter().all(|s| *s == 401), "{flood:?}");
        let audit = app.db.list_audit(100).await.unwrap();
        let refused: Vec<_> = audit.iter().filter(|e| e.action == "forge.webhook_refused").collect();
        assert_eq!(refused.len(), 1, "a flood of forgeries is written once per window");
        assert_eq!(refused[0].actor, "anonymous");
        assert_eq!(refused[0].detail["reason"], "bad signature");
        assert_eq!(refused[0].detail["repeated"], 0);
    }

    async fn a_signed_webhook_moves_the_request_of_its_pull_request_and_ignores_others(backend: Backend) {
        let (_dead, dead_address) = refusing_address();
        let app = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.forge = mirante::adapters::forge::ForgeKind::Gitlab;
            config.monorepo = Some("infra/devops".into());
            config.forge_url = Some(format!("http://{dead_address}"));
            config.forge_token = Some(secrecy::SecretString::from("glpat-test"));
            config.webhook_secret = Some(secrecy::SecretString::from("hook-secret"));
            config.forge_poll_secs = 0;
        })
        .await;
        let id = seed_proposed(&app, 5).await;
        let branch = app.db.request(id).await.unwrap().unwrap().branch;
        let hook = |iid: u64, branch: &str, token: &str| {
            app.anonymous
                .post(format!("{}/api/v1/forge/webhook", app.address))
                .header("x-gitlab-event", "Merge Request Hook")
                .header("x-gitlab-token", token)
                .json(&json!({
                    "object_kind": "merge_request",
                    "object_attributes": {"iid": iid, "source_branch": branch, "state": "merged", "action": "merge"}
                }))
                .send()
        };

        let wrong_token = hook(5, &branch, "guess").await.unwrap();
        let other_branch = hook(9, "feature/elsewhere", "hook-secret").await.unwrap();
        let other_number = hook(6, &branch, "hook-secret").await.unwrap();
        let still = app.db.request(id).await.unwrap().unwrap();
        let ours = hook(5, &branch, "hook-secret").await.unwrap();
        let again = hook(5, &branch, "hook-secret").await.unwrap();

        assert_eq!(wrong_token.status().as_u16(), 401);
        assert_eq!(other_branch.status().as_u16(), 202);
        assert_eq!(other_number.status().as_u16(), 202);
        assert_eq!(still.state, mirante_domain::request::RequestState::Proposed);
        assert_eq!(ours.status().as_u16(), 200);
        let body: Value = ours.json().await.unwrap();
        assert_eq!(body, json!({"outcome": "updated", "request": id, "state": "merged"}));
        assert_eq!(again.status().as_u16(), 200);
        assert_eq!(again.json::<Value>().await.unwrap()["outcome"], "unchanged");
        let merged = app.get_json(&format!("/api/v1/requests/{id}"), 200).await;
        assert_eq!(merged["state"], "merged");
        assert_eq!(merged["timeline"].as_array().unwrap().last().unwrap()["actor"], "forge:gitlab");
    }
}

on_both_databases! {
    async fn a_submission_sent_with_its_previews_time_holds_exactly_the_previewed_files(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;

        let preview = app.post_json(&rui, "/api/v1/requests/preview", &workspace(), 200).await;
        let mut input = workspace();
        input["at"] = preview["at"].clone();
        let submitted = app.post_json(&rui, "/api/v1/requests", &input, 201).await;

        // Byte for byte, the time the templates write down included.
        assert_eq!(preview_files(&submitted), preview_files(&preview));
        let mut stale = database();
        stale["at"] = json!((Utc::now() - chrono::TimeDelta::days(2)).to_rfc3339());
        let refused = app.post_json(&rui, "/api/v1/requests", &stale, 400).await;
        assert!(refused["error"].as_str().unwrap().contains("preview again"), "{refused}");
    }
}

pub(crate) const SCRATCH_TEMPLATE: &str = r#"id: scratch-space
title:
  pt-BR: Espaço temporário
  en: Scratch space
description:
  pt-BR: Um namespace temporário.
  en: A scratch namespace.
access:
  roles: [researcher, admin]
approval: none
target: "scratch/{{ name }}"
parameters:
  - name: name
    type: string
    format: dns-label
    required: true
    title:
      pt-BR: Nome
      en: Name
"#;

pub(crate) const SCRATCH_NAMESPACE: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: {{ "scratch-" ~ name }}
"#;

on_both_databases! {
    async fn a_template_merged_into_the_monorepo_is_offered_without_a_redeploy(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let monorepo = app.data_dir.join("monorepo");
        let ids = |templates: &Value| -> Vec<String> {
            templates["templates"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_owned()).collect()
        };
        let before = app.get_json_as(&rui, "/api/v1/templates", 200).await;
        assert!(!ids(&before).contains(&"scratch-space".to_owned()), "{before}");

        commit_on_main(&monorepo, "Templates for the portal", &[
            ("self-service/templates/scratch-space/template.yaml", Some(SCRATCH_TEMPLATE)),
            ("self-service/templates/scratch-space/skeleton/namespace.yaml", Some(SCRATCH_NAMESPACE)),
            ("self-service/templates/broken/template.yaml", Some("id: [broken\n")),
        ]);

        let after = app.get_json_as(&rui, "/api/v1/templates", 200).await;
        let after = ids(&after);
        assert!(after.contains(&"scratch-space".to_owned()), "{after:?}");
        assert!(after.contains(&"gpu-workspace".to_owned()), "the built-in ones stay: {after:?}");
        assert!(!after.contains(&"broken".to_owned()), "{after:?}");
        let input = json!({ "template": "scratch-space", "values": { "name": "tmp1" } });
        let preview = app.post_json(&rui, "/api/v1/requests/preview", &input, 200).await;
        let files = preview_files(&preview);
        assert_eq!(files.len(), 1, "{preview}");
        assert_eq!(files[0].0, "scratch/tmp1/namespace.yaml");
        assert!(files[0].1.contains("name: \"scratch-tmp1\""), "{}", files[0].1);
    }
}

/// `POST /api/v1/requests` with `body` and, when given, an `Idempotency-Key`; answers the
/// status, the `Idempotent-Replayed` header and the JSON body.
async fn post_keyed(
    app: &TestApp,
    client: &reqwest::Client,
    key: Option<&str>,
    body: &Value,
) -> (u16, Option<String>, Value) {
    let mut post = client
        .post(format!("{}/api/v1/requests", app.address))
        .json(body);
    if let Some(key) = key {
        post = post.header("Idempotency-Key", key);
    }
    let response = post.send().await.expect("request failed");
    let status = response.status().as_u16();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = response.json().await.unwrap_or(Value::Null);
    (status, replayed, body)
}

fn workspace_named(name: &str) -> Value {
    let mut input = workspace();
    input["values"]["name"] = json!(name);
    input
}

on_both_databases! {
    async fn a_creation_sent_again_with_its_idempotency_key_answers_the_first_request_instead_of_a_second(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;

        let first = post_keyed(&app, &rui, Some("submit-nlp-1"), &workspace()).await;
        let again = post_keyed(&app, &rui, Some("submit-nlp-1"), &workspace()).await;
        // Five clients retrying one creation at the same moment.
        let cv = workspace_named("cv");
        let race = || post_keyed(&app, &rui, Some("submit-cv-1"), &cv);
        let (a, b, c, d, e) = tokio::join!(race(), race(), race(), race(), race());
        let racing = [a, b, c, d, e];
        let other_values = post_keyed(&app, &rui, Some("submit-nlp-1"), &workspace_named("other")).await;
        let listed = app.get_json_as(&rui, "/api/v1/requests", 200).await;

        assert_eq!((first.0, first.1.as_deref()), (201, Some("false")), "{}", first.2);
        assert_eq!((again.0, again.1.as_deref()), (201, Some("true")), "{}", again.2);
        assert_eq!(again.2["id"], first.2["id"]);
        assert_eq!(again.2["state"], "awaiting_approval");
        let racing_ids: Vec<&Value> = racing.iter().map(|(status, _, body)| {
            assert_eq!(*status, 201, "{body}");
            &body["id"]
        }).collect();
        assert!(racing_ids.iter().all(|id| *id == racing_ids[0]), "{racing_ids:?}");
        assert_eq!(racing.iter().filter(|r| r.1.as_deref() == Some("false")).count(), 1, "one of them made it");
        assert_eq!(other_values.0, 422, "{}", other_values.2);
        assert!(other_values.2["error"].as_str().unwrap().contains("Idempotency-Key"), "{}", other_values.2);
        assert_eq!(listed["requests"].as_array().unwrap().len(), 2, "{listed}");
    }

    async fn a_malformed_idempotency_key_is_refused_and_stores_nothing(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let long = "k".repeat(256);

        let spaced = post_keyed(&app, &rui, Some("two words"), &workspace()).await;
        let too_long = post_keyed(&app, &rui, Some(&long), &workspace()).await;
        let listed = app.get_json_as(&rui, "/api/v1/requests", 200).await;

        for (status, _, body) in [&spaced, &too_long] {
            assert_eq!(*status, 400, "{body}");
            assert!(body["error"].as_str().unwrap().contains("Idempotency-Key"), "{body}");
        }
        assert_eq!(listed["requests"], json!([]));
    }

    async fn a_second_open_request_for_the_same_folder_is_refused_naming_the_first(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let first = app.post_json(&rui, "/api/v1/requests", &workspace(), 201).await;
        let id = first["id"].as_i64().unwrap();

        let (status, _, second) = post_keyed(&app, &rui, None, &workspace()).await;
        app.post_json(&app.client, &format!("/api/v1/requests/{id}/reject"), &json!({"comment": "ask again later"}), 200)
            .await;
        let after_rejection = app.post_json(&rui, "/api/v1/requests", &workspace(), 201).await;

        assert_eq!(status, 409, "{second}");
        assert_eq!(second["request"], id, "{second}");
        assert!(second["error"].as_str().unwrap().contains(&format!("#{id}")), "{second}");
        assert_ne!(after_rejection["id"], id, "a rejected request no longer holds the folder");
    }
}
