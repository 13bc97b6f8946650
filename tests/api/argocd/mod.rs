//! Following a resource past the merge in Argo CD: the real server with the local forge (a
//! real git monorepo) and a fake Argo CD held to Argo CD's API description (`mirante_tests::argocd`).

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use mirante::Config;
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::helpers::*;
use mirante_tests::argocd::{AppStatus, FakeArgo, TOKEN, application};

const TARGET: &str = "apps/sp/gpu-sp-01/workspaces/nlp";

fn follow_with(argocd: &str) -> impl FnOnce(&mut Config, u16) {
    let url = argocd.to_owned();
    move |config: &mut Config, _| {
        config.argocd_url = Some(url);
        config.argocd_token = Some(SecretString::from(TOKEN.to_owned()));
        config.argocd_poll_secs = 1;
        config.argocd_poll_max_secs = 2;
        config.probe_timeout_secs = 2;
    }
}

/// Rui's 1-GPU workspace `nlp`, approved, proposed and merged in the portal; its id.
async fn merged_workspace(app: &TestApp, rui: &reqwest::Client) -> i64 {
    let input = json!({
        "template": "gpu-workspace",
        "values": {"name": "nlp", "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
    });
    crate::requests::merged_workspace(app, rui, &input).await
}

/// The local monorepo's `main` head (the merge) and its first parent (before the merge).
fn merge_and_before(app: &TestApp) -> (String, String) {
    let repo = git2::Repository::open(app.data_dir.join("monorepo")).unwrap();
    let head = repo
        .find_reference("refs/heads/main")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    let parent = head.parent(0).unwrap();
    (head.id().to_string(), parent.id().to_string())
}

/// Reads the resource until `done` holds for it (at most 30 s), and returns it.
pub(crate) async fn resource_until(
    app: &TestApp,
    client: &reqwest::Client,
    id: i64,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = app
            .get_json_as(client, &format!("/api/v1/resources/{id}"), 200)
            .await;
        if done(&r) {
            return r;
        }
        assert!(Instant::now() < deadline, "resource {id} never {what}: {r}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The deployment steps on a request's timeline: (state, actor, comment).
async fn deployment_steps(app: &TestApp, id: i64) -> Vec<(String, String, Value)> {
    let r = app
        .get_json_as(&app.client, &format!("/api/v1/requests/{id}"), 200)
        .await;
    assert_eq!(r["state"], "merged", "the request itself stays merged");
    r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["deployment"].is_null())
        .map(|t| {
            assert_eq!((&t["from"], &t["to"]), (&json!("merged"), &json!("merged")));
            assert!(t["at"].as_str().is_some_and(|at| at.contains('T')), "{t}");
            (
                t["deployment"].as_str().unwrap().to_owned(),
                t["actor"].as_str().unwrap().to_owned(),
                t["comment"].clone(),
            )
        })
        .collect()
}

on_both_databases! {
    async fn a_merged_workspace_is_followed_in_argo_cd_from_syncing_to_live(backend: Backend) {
        let argocd = FakeArgo::up().await;
        let app = spawn_configured(backend, CatalogSetup::Embedded, follow_with(&argocd.base)).await;
        let rui = app.dev_browser("rui").await;
        let id = merged_workspace(&app, &rui).await;
        let (merge, before) = merge_and_before(&app);

        // No Application for the folder yet: still merged, and it says why.
        let waiting = resource_until(&app, &rui, id, "said it has no application", |r| {
            r["deployment"]["error"].as_str().is_some_and(|e| e.starts_with("no Argo CD application deploys apps/sp/gpu-sp-01/workspaces/nlp"))
        }).await;
        assert_eq!(waiting["state"], "merged", "{waiting}");
        assert_eq!(waiting["deployment"]["followed"], true);
        assert_eq!(waiting["deployment"]["merge_commit"], merge.as_str());
        assert!(waiting["note"].as_str().unwrap().contains("no Argo CD application"), "{waiting}");

        // The ApplicationSet made it; Argo CD has not synced the merge yet.
        argocd.put(application("ws-nlp", TARGET, &AppStatus { sync: "OutOfSync", revision: &before, health: "Missing", message: None }));
        let syncing = resource_until(&app, &rui, id, "became syncing", |r| r["state"] == "syncing").await;
        assert_eq!(syncing["deployment"]["application"], "ws-nlp");
        assert_eq!(syncing["deployment"]["revision"], before.as_str());
        assert_eq!(syncing["deployment"]["error"], Value::Null, "cleared by the answer");
        assert!(syncing["access"]["commands"].as_array().is_some_and(|c| !c.is_empty()), "{syncing}");

        argocd.put(application("ws-nlp", TARGET, &AppStatus { sync: "Synced", revision: &merge, health: "Healthy", message: None }));
        let live = resource_until(&app, &rui, id, "became live", |r| r["state"] == "live").await;
        assert_eq!(live["deployment"]["revision"], merge.as_str());
        assert_eq!(live["note"], Value::Null, "{live}");
        let by_state = app.get_json_as(&rui, "/api/v1/resources?state=live", 200).await;
        assert_eq!(by_state["resources"].as_array().unwrap().len(), 1);

        // Later rounds ask again and write nothing new: each step once, with its time.
        let asked = argocd.seen().len();
        let deadline = Instant::now() + Duration::from_secs(15);
        while argocd.seen().len() < asked + 2 {
            assert!(Instant::now() < deadline, "the follower stopped asking");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let steps = deployment_steps(&app, id).await;
        let names: Vec<(&str, &str)> = steps.iter().map(|(s, a, _)| (s.as_str(), a.as_str())).collect();
        assert_eq!(names, [("syncing", "argocd"), ("live", "argocd")]);
        assert!(steps[0].2.as_str().unwrap().contains("OutOfSync"), "{:?}", steps[0]);
        assert!(argocd.seen().iter().all(|s| s == "GET /api/v1/applications"), "{:?}", argocd.seen());
        argocd.assert_clean();
    }

    async fn an_unhealthy_application_makes_the_resource_degraded_with_argo_cds_message(backend: Backend) {
        let argocd = FakeArgo::up().await;
        let app = spawn_configured(backend, CatalogSetup::Embedded, follow_with(&argocd.base)).await;
        let rui = app.dev_browser("rui").await;
        let id = merged_workspace(&app, &rui).await;
        let (merge, _) = merge_and_before(&app);
        let said = "Deployment \"jupyter\" exceeded its progress deadline";

        // Argo CD names the folder with its own spelling of the path.
        argocd.put(application("ws-nlp", &format!("./{TARGET}/"), &AppStatus { sync: "Synced", revision: &merge, health: "Degraded", message: Some(said) }));
        let degraded = resource_until(&app, &rui, id, "became degraded", |r| r["state"] == "degraded").await;

        assert_eq!(degraded["deployment"]["message"], said);
        assert_eq!(degraded["note"], said);
        assert_eq!(deployment_steps(&app, id).await, [("degraded".to_owned(), "argocd".to_owned(), json!(said))]);
        let page = app.get_json_as(&app.client, "/api/v1/resources?state=degraded", 200).await;
        assert_eq!(page["resources"][0]["id"], id);
        argocd.assert_clean();
    }

    async fn argo_cd_down_leaves_the_resource_merged_with_the_error_until_it_answers(backend: Backend) {
        let argocd = FakeArgo::down().await;
        let app = spawn_configured(backend, CatalogSetup::Embedded, follow_with(&argocd.base)).await;
        let rui = app.dev_browser("rui").await;
        let id = merged_workspace(&app, &rui).await;
        let (merge, _) = merge_and_before(&app);

        let down = resource_until(&app, &rui, id, "showed Argo CD down", |r| {
            r["deployment"]["error"].as_str().is_some_and(|e| e.starts_with("cannot reach Argo CD: "))
        }).await;
        assert_eq!(down["state"], "merged", "{down}");
        assert!(down["note"].as_str().unwrap().contains("cannot reach Argo CD"), "{down}");
        assert!(!down.to_string().contains(TOKEN), "no token in what readers see");

        // Up again, but erroring: still merged, Argo CD's own error shown.
        argocd.fail_with(Some(StatusCode::SERVICE_UNAVAILABLE));
        argocd.start().await;
        let erroring = resource_until(&app, &rui, id, "showed Argo CD's error", |r| {
            r["deployment"]["error"].as_str().is_some_and(|e| e.starts_with("Argo CD answered HTTP 503: connection error"))
        }).await;
        assert_eq!(erroring["state"], "merged");

        argocd.fail_with(None);
        argocd.put(application("ws-nlp", TARGET, &AppStatus { sync: "Synced", revision: &merge, health: "Healthy", message: None }));
        let live = resource_until(&app, &rui, id, "became live", |r| r["state"] == "live").await;
        assert_eq!(live["deployment"]["error"], Value::Null);
        assert_eq!(deployment_steps(&app, id).await.len(), 1, "only the step to live");
        argocd.assert_clean();
    }

    async fn a_portal_restarted_while_following_goes_on_from_where_it_stood(backend: Backend) {
        let argocd = FakeArgo::up().await;
        let app = spawn_configured(backend, CatalogSetup::Embedded, follow_with(&argocd.base)).await;
        let rui = app.dev_browser("rui").await;
        let id = merged_workspace(&app, &rui).await;
        let (merge, before) = merge_and_before(&app);
        argocd.put(application("ws-nlp", TARGET, &AppStatus { sync: "OutOfSync", revision: &before, health: "Missing", message: None }));
        resource_until(&app, &rui, id, "became syncing", |r| r["state"] == "syncing").await;

        // The portal stops mid-follow; Argo CD finishes the sync while it is away.
        let app = app.restart(follow_with(&argocd.base)).await;
        argocd.put(application("ws-nlp", TARGET, &AppStatus { sync: "Synced", revision: &merge, health: "Healthy", message: None }));
        let rui = app.dev_browser("rui").await;
        let live = resource_until(&app, &rui, id, "became live after the restart", |r| r["state"] == "live").await;
        assert_eq!(live["deployment"]["merge_commit"], merge.as_str(), "the merge it waited for is kept");
        assert_eq!(live["deployment"]["revision"], merge.as_str());
        // Nothing lost and nothing twice: the request's whole history, each step once.
        let request = app.get_json_as(&rui, &format!("/api/v1/requests/{id}"), 200).await;
        assert_eq!(request["state"], "merged", "{request}");
        let steps = deployment_steps(&app, id).await;
        let names: Vec<&str> = steps.iter().map(|(s, _, _)| s.as_str()).collect();
        assert_eq!(names, ["syncing", "live"]);
        argocd.assert_clean();
    }

    async fn an_application_synced_at_a_revision_without_the_merge_stays_syncing(backend: Backend) {
        let argocd = FakeArgo::up().await;
        let app = spawn_configured(backend, CatalogSetup::Embedded, follow_with(&argocd.base)).await;
        let rui = app.dev_browser("rui").await;
        let id = merged_workspace(&app, &rui).await;
        let (merge, before) = merge_and_before(&app);

        argocd.put(application("ws-nlp", TARGET, &AppStatus { sync: "Synced", revision: &before, health: "Healthy", message: None }));
        let syncing = resource_until(&app, &rui, id, "became syncing", |r| r["state"] == "syncing").await;
        assert!(syncing["deployment"]["message"].as_str().unwrap().contains("does not contain the merge"), "{syncing}");

        // Round after round, Synced and Healthy at the older revision is not live.
        let asked = argocd.seen().len();
        while argocd.seen().len() < asked + 3 {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let still = app.get_json_as(&rui, &format!("/api/v1/resources/{id}"), 200).await;
        assert_eq!(still["state"], "syncing", "{still}");

        // A later commit on main that contains the merge counts as the merge.
        let later = commit_on_main(&app.data_dir.join("monorepo"), "Later change", &[("README.md", Some("# devops\n\nlater\n"))]);
        argocd.put(application("ws-nlp", TARGET, &AppStatus { sync: "Synced", revision: &later, health: "Healthy", message: None }));
        let live = resource_until(&app, &rui, id, "became live", |r| r["state"] == "live").await;
        assert_eq!(live["deployment"]["merge_commit"], merge.as_str());
        assert_eq!(live["deployment"]["revision"], later.as_str());
        argocd.assert_clean();
    }

    async fn a_merged_removal_is_removing_and_holds_its_gpu_until_argo_cd_deletes_the_application(backend: Backend) {
        let argocd = FakeArgo::up().await;
        let app = spawn_configured(backend, CatalogSetup::Embedded, follow_with(&argocd.base)).await;
        let rui = app.dev_browser("rui").await;
        let id = merged_workspace(&app, &rui).await;
        let (merge, _) = merge_and_before(&app);
        argocd.put(application("ws-nlp", TARGET, &AppStatus { sync: "Synced", revision: &merge, health: "Healthy", message: None }));
        resource_until(&app, &rui, id, "became live", |r| r["state"] == "live").await;

        let removal = app.post_json(&rui, &format!("/api/v1/resources/{id}/requests"), &json!({"kind": "remove"}), 201).await;
        let removal_id = removal["id"].as_i64().unwrap();
        crate::requests::wait_for_state(&app, &rui, removal_id, "proposed").await;
        app.post_json(&app.client, &format!("/api/v1/requests/{removal_id}/merge"), &json!({}), 200).await;

        // The folder is gone from main, but Argo CD still runs it: removing, GPU still held.
        let removing = resource_until(&app, &rui, id, "became removing", |r| {
            r["state"] == "removing" && !r["deployment"]["checked_at"].is_null()
        }).await;
        assert_eq!(removing["deployment"]["application"], "ws-nlp", "{removing}");
        assert!(removing["note"].as_str().unwrap().contains("Argo CD still has application ws-nlp"), "{removing}");
        let sp = |capacity: &Value| capacity["clusters"].as_array().unwrap().iter().find(|c| c["id"] == "gpu-sp-01").unwrap().clone();
        let held = sp(&app.get_json_as(&rui, "/api/v1/capacity", 200).await);
        assert_eq!(held["free"], 0, "{held}");
        assert_eq!(held["holders"][0]["stage"], "removing", "{held}");
        assert_eq!(held["holders"][0]["request"], removal_id, "{held}");
        let refused = app.post_json(&rui, "/api/v1/requests", &json!({
            "template": "gpu-workspace",
            "values": {"name": "vision", "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
        }), 422).await;
        assert_eq!(refused["details"][0]["code"], "exceeds_free_capacity", "{refused}");
        let listed = app.get_json_as(&rui, "/api/v1/resources?state=removing", 200).await;
        assert_eq!(listed["resources"][0]["id"], id, "{listed}");

        // The ApplicationSet no longer generates it: removed, and the GPU is free.
        argocd.delete("ws-nlp");
        let removed = resource_until(&app, &rui, id, "became removed", |r| r["state"] == "removed").await;
        assert_eq!(removed["access"], Value::Null, "{removed}");
        let free = sp(&app.get_json_as(&rui, "/api/v1/capacity", 200).await);
        assert_eq!((free["free"].as_i64(), free["holders"].as_array().map(Vec::len)), (Some(1), Some(0)), "{free}");
        let steps = deployment_steps(&app, removal_id).await;
        let names: Vec<&str> = steps.iter().map(|(s, _, _)| s.as_str()).collect();
        assert_eq!(names, ["removing", "removed"]);

        // Removed is final: later rounds ask Argo CD about nothing of this folder.
        let asked = argocd.seen().len();
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert_eq!(argocd.seen().len(), asked, "nothing left to follow: {:?}", argocd.seen());
        argocd.assert_clean();
    }
}
