//! Catalog changes end to end on the local forge: an admin's change of an item's state,
//! qualifier and evidence becomes a branch of the monorepo whose only diff is those lines;
//! researchers are refused; invalid changes create nothing.

use std::path::Path;

use serde_json::{Value, json};

use crate::helpers::*;
use crate::requests::wait_for_state;

const ITEM: &str = "vyos-sp";
const FILE: &str = "catalog/layers/03-rede.yaml";

fn change() -> Value {
    json!({
        "state": "declared",
        "qualifier": "partial",
        "evidence": [
            {"kind": "reference", "text": "VyOS SP renumerado pra 192.168.10.0/23 (PR #8)"},
            {"kind": "attestation", "by": "ana", "date": "2026-11-30", "what": "failover: tested # twice, \"really\""}
        ],
        "reason": "The renumbering is in IaC but the failover was only partly tested."
    })
}

/// The lines a branch's one commit removes and adds, per file, as git reports them.
fn branch_diff(monorepo: &Path, branch: &str) -> Vec<(String, char, String)> {
    let repo = git2::Repository::open(monorepo).unwrap();
    let tip = repo
        .find_reference(&format!("refs/heads/{branch}"))
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert_eq!(tip.parent_count(), 1, "one commit on top of main");
    let main = repo
        .find_reference("refs/heads/main")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert_eq!(tip.parent_id(0).unwrap(), main.id(), "made on main's tip");
    let diff = repo
        .diff_tree_to_tree(
            Some(&main.tree().unwrap()),
            Some(&tip.tree().unwrap()),
            None,
        )
        .unwrap();
    let mut lines = Vec::new();
    diff.print(git2::DiffFormat::Patch, |delta, _, line| {
        if matches!(line.origin(), '+' | '-') {
            lines.push((
                delta
                    .new_file()
                    .path()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                line.origin(),
                String::from_utf8_lossy(line.content())
                    .trim_end_matches('\n')
                    .to_owned(),
            ));
        }
        true
    })
    .unwrap();
    lines
}

fn mirante_branches(monorepo: &Path) -> Vec<String> {
    let repo = git2::Repository::open(monorepo).unwrap();
    repo.branches(Some(git2::BranchType::Local))
        .unwrap()
        .map(|b| b.unwrap().0.name().unwrap().unwrap().to_owned())
        .filter(|n| n.starts_with("mirante/"))
        .collect()
}

on_both_databases! {
    async fn an_admins_state_change_arrives_as_a_branch_whose_only_diff_is_the_intended_lines(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let monorepo = app.data_dir.join("monorepo");
        let path = format!("/api/v1/items/{ITEM}/changes");

        let preview = app.post_json(&app.client, &format!("{path}/preview"), &change(), 200).await;
        let submitted = app.post_json(&app.client, &path, &change(), 201).await;
        let id = submitted["id"].as_i64().unwrap();
        let proposed = wait_for_state(&app, &app.client, id, "proposed").await;

        assert_eq!(preview["file"], FILE);
        assert_eq!(preview["from"]["state"], "validated");
        assert_eq!(preview["to"]["state"], "declared");
        let diff = preview["diff"].as_str().unwrap();
        assert!(diff.contains("\n-    state: validated\n+    state: declared\n"), "{diff}");
        let branch = proposed["branch"].as_str().unwrap();
        assert_eq!(branch, format!("mirante/{id}-{ITEM}-state"));
        let lines = branch_diff(&monorepo, branch);
        let expected: Vec<(String, char, String)> = [
            ('-', "    state: validated"),
            ('+', "    state: declared"),
            ('+', "    qualifier: partial"),
            ('+', "      - kind: attestation"),
            ('+', "        by: \"ana\""),
            ('+', "        date: \"2026-11-30\""),
            ('+', "        what: \"failover: tested # twice, \\\"really\\\"\""),
        ]
        .into_iter()
        .map(|(o, l)| (FILE.to_owned(), o, l.to_owned()))
        .collect();
        let mut sorted = lines.clone();
        sorted.sort_by_key(|(_, o, _)| *o == '+');
        assert_eq!(sorted, expected, "{lines:?}");
        // The request needed no approval and follows its pull request.
        let timeline: Vec<(&str, &str)> = proposed["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["to"].as_str().unwrap(), t["actor"].as_str().unwrap()))
            .collect();
        assert_eq!(
            timeline,
            [("submitted", "test-admin"), ("proposing", "system"), ("proposed", "system")]
        );
        let pr = app
            .db
            .local_pull_request_by_branch(branch)
            .await
            .unwrap()
            .expect("a local pull request");
        assert_eq!(pr.title, format!("Catalog: {ITEM} validated → declared (request #{id})"));
        assert!(pr.body.contains("The renumbering is in IaC"), "{}", pr.body);
        assert!(pr.body.contains("+ attestation by ana on 2026-11-30"), "{}", pr.body);
    }

    async fn a_second_change_to_a_catalog_file_with_an_open_change_is_refused_naming_the_first(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let first = app.post_json(&app.client, &format!("/api/v1/items/{ITEM}/changes"), &change(), 201).await;
        let first_id = first["id"].as_i64().unwrap();
        // Another item of the same file: its branch would be made on the file the first changes.
        let other = json!({"state": "declared", "qualifier": "partial", "evidence": [], "reason": "Not tested since the move."});

        let refused = app.post_json(&app.client, "/api/v1/items/vyos-backup/changes", &other, 409).await;

        assert_eq!(refused["request"], first_id, "{refused}");
        assert!(refused["error"].as_str().unwrap().contains(FILE), "{refused}");
        let requests = app.get_json_as(&app.client, "/api/v1/requests", 200).await;
        assert_eq!(requests["requests"].as_array().unwrap().len(), 1);
    }

    async fn a_researcher_can_neither_preview_nor_propose_a_catalog_change(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;

        for path in [format!("/api/v1/items/{ITEM}/changes/preview"), format!("/api/v1/items/{ITEM}/changes")] {
            let refused = app.post_json(&rui, &path, &change(), 403).await;
            assert!(refused["error"].is_string(), "{refused}");
        }

        assert!(mirante_branches(&app.data_dir.join("monorepo")).is_empty());
        let requests = app.get_json_as(&app.client, "/api/v1/requests", 200).await;
        assert_eq!(requests["requests"], json!([]));
    }

    async fn an_invalid_change_lists_every_bad_field_and_creates_nothing(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let invalid = json!({
            "state": "done",
            "qualifier": "someday",
            "evidence": [{"kind": "attestation", "by": "", "date": "yesterday", "what": "a\u{202e}b"}],
            "reason": ""
        });

        let refused = app
            .post_json(&app.client, &format!("/api/v1/items/{ITEM}/changes"), &invalid, 422)
            .await;

        let mut fields: Vec<(&str, &str)> = refused["details"]
            .as_array()
            .unwrap_or_else(|| panic!("{refused}"))
            .iter()
            .map(|d| (d["field"].as_str().unwrap(), d["code"].as_str().unwrap()))
            .collect();
        fields.sort_unstable();
        assert_eq!(
            fields,
            [
                ("evidence.by", "required"),
                ("evidence.date", "pattern"),
                ("evidence.what", "forbidden_character"),
                ("qualifier", "not_in_enum"),
                ("reason", "required"),
                ("state", "not_in_enum"),
            ]
        );
        assert!(mirante_branches(&app.data_dir.join("monorepo")).is_empty());
        let requests = app.get_json_as(&app.client, "/api/v1/requests", 200).await;
        assert_eq!(requests["requests"], json!([]));
        // An unknown item is a 404, a change that changes nothing a 400.
        app.post_json(&app.client, "/api/v1/items/nope/changes/preview", &change(), 404).await;
        let same = json!({
            "state": "validated",
            "evidence": [{"kind": "reference", "text": "VyOS SP renumerado pra 192.168.10.0/23 (PR #8)"}],
            "reason": "no-op"
        });
        app.post_json(&app.client, &format!("/api/v1/items/{ITEM}/changes/preview"), &same, 400).await;
    }

    async fn a_change_to_validated_on_free_text_only_is_refused_and_an_attestation_makes_it_pass(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let path = "/api/v1/items/franca-renumbering/changes/preview";
        let told = json!({
            "state": "validated",
            "evidence": [{"kind": "reference", "text": "done, trust me"}],
            "reason": "It works."
        });

        let refused = app.post_json(&app.client, path, &told, 422).await;
        let fields: Vec<(&str, &str)> = refused["details"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["field"].as_str().unwrap(), e["code"].as_str().unwrap()))
            .collect();
        assert_eq!(fields, [("evidence", "needs_verifiable_evidence")]);

        let attested = json!({
            "state": "validated",
            "evidence": [
                {"kind": "reference", "text": "done"},
                {"kind": "attestation", "by": "ana", "date": "2026-11-30", "what": "both sites reach the new range"}
            ],
            "reason": "It works."
        });
        let preview = app.post_json(&app.client, path, &attested, 200).await;
        assert_eq!(preview["to"]["state"], "validated");
        assert!(mirante_branches(&app.data_dir.join("monorepo")).is_empty(), "a preview writes nothing");
    }
}
