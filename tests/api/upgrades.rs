//! Template upgrades: when a template changes, each resource made from it is rendered again
//! from its values with the new version; where its files differ from the base branch the
//! resource offers the update with the diff, admins see the list per template, and proposing
//! it is an update request whose branch holds exactly that diff.

use std::{path::Path, sync::Arc, time::Duration};

use chrono::Utc;
use mirante::app::clock::ManualClock;
use mirante::app::selfservice::expiry::{ExpiryRemoval, ExpirySettings, ExpirySweep};
use serde_json::{Value, json};

use crate::helpers::*;
use crate::mail::MailSink;
use crate::requests::wait_for_state;

const LABEL: &str = "    mirante.dev/cost-centre: research\n";
const ANCHOR: &str = "    app.kubernetes.io/managed-by: mirante\n";

fn workspace(name: &str) -> Value {
    json!({
        "template": "gpu-workspace",
        "values": {"name": name, "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
    })
}

/// The shipped `gpu-workspace` template's files, by path under its folder, with a label added
/// to the namespace: the template as its authors would change it in the monorepo.
fn changed_template() -> Vec<(String, String)> {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates/self-service/gpu-workspace");
    let mut out = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let mut content = std::fs::read_to_string(&path).unwrap();
            if rel == "skeleton/namespace.yaml" {
                assert!(
                    content.contains(ANCHOR),
                    "the namespace has the managed-by label"
                );
                content = content.replacen(ANCHOR, &format!("{ANCHOR}{LABEL}"), 1);
            }
            out.push((
                format!("self-service/templates/gpu-workspace/{rel}"),
                content,
            ));
        }
    }
    out
}

fn file_on(monorepo: &Path, reference: &str, path: &str) -> Option<String> {
    let repo = git2::Repository::open(monorepo).unwrap();
    let tree = repo
        .revparse_single(reference)
        .unwrap()
        .peel_to_tree()
        .unwrap();
    let entry = tree.get_path(Path::new(path)).ok()?;
    let blob = entry.to_object(&repo).unwrap().peel_to_blob().unwrap();
    Some(String::from_utf8(blob.content().to_vec()).unwrap())
}

on_both_databases! {
    async fn a_changed_template_offers_its_resources_the_update_and_proposing_one_commits_exactly_that_diff(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let monorepo = app.data_dir.join("monorepo");
        // Two workspaces on gpu-sp-01, which the catalog now records with two GPUs.
        let catalog = "catalog/layers/08-workloads.yaml";
        let layer = file_on(&monorepo, "main", catalog).unwrap();
        let two = layer.replacen("model: NVIDIA RTX A5000\n        count: 1", "model: NVIDIA RTX A5000\n        count: 2", 1);
        assert_ne!(two, layer, "the cluster's GPU count is in the demo catalog");
        commit_on_main(&monorepo, "gpu-sp-01: a second GPU", &[(catalog, Some(&two))]);
        app.post_json(&app.client, "/api/v1/catalog/reload", &json!({}), 200).await;
        let nlp = crate::requests::merged_workspace(&app, &rui, &workspace("nlp")).await;
        let cv = crate::requests::merged_workspace(&app, &rui, &workspace("cv")).await;

        // At the template's version: nothing to offer.
        let before = app.get_json_as(&rui, &format!("/api/v1/resources/{nlp}"), 200).await;
        assert!(before["update"].is_null(), "{before}");
        let old_version = before["template_version"].as_str().unwrap().to_owned();
        assert!(old_version.starts_with("sha256:"), "{old_version}");

        let template = changed_template();
        let changes: Vec<(&str, Option<&str>)> = template.iter().map(|(p, c)| (p.as_str(), Some(c.as_str()))).collect();
        commit_on_main(&monorepo, "gpu-workspace: a cost centre on every namespace", &changes);

        // Both workspaces offer the update: the namespace gains the label, nothing else.
        let mut version = String::new();
        for (id, name) in [(nlp, "nlp"), (cv, "cv")] {
            let detail = app.get_json_as(&rui, &format!("/api/v1/resources/{id}"), 200).await;
            let update = &detail["update"];
            assert_eq!(detail["template_version"], old_version.as_str(), "{detail}");
            version = update["version"].as_str().unwrap().to_owned();
            assert_ne!(version, old_version);
            let path = format!("apps/sp/gpu-sp-01/workspaces/{name}/namespace.yaml");
            let files = update["files"].as_array().unwrap();
            assert_eq!(files.len(), 1, "{update}");
            assert_eq!(files[0]["path"], path.as_str());
            let diff = files[0]["diff"].as_str().unwrap();
            let added: Vec<&str> = diff.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).collect();
            assert_eq!(added, vec![format!("+{}", LABEL.trim_end())], "{diff}");
            assert_eq!(update["needs"], json!([]));
        }
        // Admins see the list per template; researchers do not.
        let list = app.get_json_as(&app.client, "/api/v1/templates/gpu-workspace/updates", 200).await;
        let mut ids: Vec<i64> = list["resources"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect();
        ids.sort_unstable();
        assert_eq!(ids, vec![nlp, cv], "{list}");
        app.get_json_as(&rui, "/api/v1/templates/gpu-workspace/updates", 403).await;
        app.get_json_as(&app.client, "/api/v1/templates/no-such/updates", 404).await;

        // Proposed with one click (no values): an update whose branch holds exactly the diff.
        let up = app.post_json(&rui, &format!("/api/v1/resources/{nlp}/requests"), &json!({"kind": "update"}), 201).await;
        let up_id = up["id"].as_i64().unwrap();
        assert_eq!(up["action"], "update", "{up}");
        app.post_json(&app.client, &format!("/api/v1/requests/{up_id}/approve"), &json!({}), 200).await;
        wait_for_state(&app, &rui, up_id, "proposed").await;
        let branch = app.get_json_as(&rui, &format!("/api/v1/requests/{up_id}"), 200).await["branch"].as_str().unwrap().to_owned();
        let path = "apps/sp/gpu-sp-01/workspaces/nlp/namespace.yaml";
        let on_main = file_on(&monorepo, "main", path).unwrap();
        let on_branch = file_on(&monorepo, &branch, path).unwrap();
        assert_eq!(on_branch, on_main.replacen(ANCHOR, &format!("{ANCHOR}{LABEL}"), 1), "exactly the label is added");
        for other in ["resourcequota.yaml", "limitrange.yaml", "rolebinding.yaml", "networkpolicy.yaml", "README.md"] {
            let p = format!("apps/sp/gpu-sp-01/workspaces/nlp/{other}");
            assert_eq!(file_on(&monorepo, &branch, &p), file_on(&monorepo, "main", &p), "{p} is unchanged");
        }
        app.post_json(&app.client, &format!("/api/v1/requests/{up_id}/merge"), &json!({}), 200).await;

        // Merged: nlp is at the new version with nothing more to offer; cv still offers it.
        let after = app.get_json_as(&rui, &format!("/api/v1/resources/{nlp}"), 200).await;
        assert!(after["update"].is_null(), "{after}");
        assert_eq!(after["template_version"], version.as_str());
        let cv_after = app.get_json_as(&rui, &format!("/api/v1/resources/{cv}"), 200).await;
        assert_eq!(cv_after["update"]["version"], version.as_str(), "{cv_after}");
    }

    async fn the_sweep_tells_the_owner_once_of_a_template_update_for_their_resource(backend: Backend) {
        let sink = MailSink::start(false);
        let app = spawn_with_mail(backend, sink.url(), |c, _| c.expiry_sweep_secs = 0).await;
        let rui = app.dev_browser("rui").await;
        let monorepo = app.data_dir.join("monorepo");
        let nlp = crate::requests::merged_workspace(&app, &rui, &workspace("nlp")).await;
        let sweep = ExpirySweep::new(
            app.selfservice.clone(),
            app.db.clone(),
            Arc::new(ManualClock::at(Utc::now())),
            ExpirySettings { removal: ExpiryRemoval::Propose, notice_days: vec![7, 1] },
        );
        assert_eq!(sweep.run_once().await.unwrap().updates, Vec::<i64>::new(), "at the template's version");

        let template = changed_template();
        let changes: Vec<(&str, Option<&str>)> = template.iter().map(|(p, c)| (p.as_str(), Some(c.as_str()))).collect();
        commit_on_main(&monorepo, "gpu-workspace: a cost centre on every namespace", &changes);

        assert_eq!(sweep.run_once().await.unwrap().updates, vec![nlp]);
        assert_eq!(sweep.run_once().await.unwrap().updates, Vec::<i64>::new(), "told once per version");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let mails = sink.messages();
            if let Some(m) = mails.iter().find(|m| m.subject.contains("has a template update")) {
                assert_eq!(m.rcpt_to, ["rui@example.org"]);
                assert!(m.text.contains("1 file(s) change"), "{}", m.text);
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no update notice: {mails:#?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
