//! `GET /api/v1/items/{id}/history` and `GET /api/v1/roadmap/burnup`: the catalog's history
//! read from the local monorepo's git history.

use git2::Repository;
use serde_json::Value;

use crate::helpers::*;

fn transitions(body: &Value) -> Vec<(Value, Value)> {
    body["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["from"].clone(), c["to"].clone()))
        .collect()
}

/// Commits on the monorepo's `main`, by someone working outside the portal, a change of the
/// `state:` line of `item` in the catalog file `path`.
fn commit_state_change(monorepo: &std::path::Path, path: &str, item: &str, from: &str, to: &str) {
    let text = Repository::open(monorepo)
        .unwrap()
        .revparse_single(&format!("main:{path}"))
        .unwrap()
        .peel_to_blob()
        .unwrap()
        .content()
        .to_vec();
    let text = String::from_utf8(text).unwrap();
    let start = text.find(&format!("  - id: {item}\n")).unwrap();
    let at = start + text[start..].find(&format!("    state: {from}\n")).unwrap();
    let edited = format!(
        "{}    state: {to}\n{}",
        &text[..at],
        &text[at + format!("    state: {from}\n").len()..]
    );
    commit_on_main(
        monorepo,
        &format!("Backup: {item} {to}"),
        &[(path, Some(&edited))],
    );
}

on_both_databases! {
    async fn an_item_of_the_demo_monorepo_has_its_state_changes_with_commit_date_and_author(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;

        let body = app.get_json("/api/v1/items/linstor-franca/history", 200).await;

        assert_eq!(body["item"], "linstor-franca");
        assert_eq!(body["available"], true);
        assert_eq!(body["reason"], Value::Null);
        assert_eq!(
            transitions(&body),
            [
                (Value::Null, "desired".into()),
                ("desired".into(), "declared".into()),
                ("declared".into(), "validated".into()),
            ]
        );
        let changes = body["changes"].as_array().unwrap();
        assert!(changes[0]["summary"].as_str().unwrap().starts_with("Catalog: first inventory"));
        assert_eq!(changes[2]["author"], "Bruno Tavares");
        let dates: Vec<&str> = changes.iter().map(|c| c["date"].as_str().unwrap()).collect();
        assert!(dates.windows(2).all(|w| w[0] < w[1]), "{dates:?}");
        let commit = changes[2]["commit"].as_str().unwrap();
        assert!(commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()));
        let tip = body["tip"].as_str().unwrap();
        let (head, _) = mirante::adapters::git::read_dir_at(&app.data_dir.join("monorepo"), "main", "catalog").unwrap();
        assert_eq!(tip, head);
    }

    async fn the_burnup_ends_with_the_counts_of_the_catalog_in_force(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;

        let body = app.get_json("/api/v1/roadmap/burnup", 200).await;

        assert_eq!(body["available"], true);
        let series = body["series"].as_array().unwrap();
        assert!(series.len() >= 6, "{} points", series.len());
        let last = series.last().unwrap();
        for state in ["validated", "declared", "desired"] {
            let now = app.get_json(&format!("/api/v1/items?state={state}&limit=0"), 200).await;
            assert_eq!(last[state], now["total"], "{state}");
        }
        assert!(series[0]["validated"].as_u64() < last["validated"].as_u64());
        assert_eq!(body["skipped"], Value::Array(vec![]));
        assert_eq!(body["truncated"], false);
    }

    async fn a_commit_landing_on_the_base_branch_shows_in_the_history_at_once(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let before = app.get_json("/api/v1/items/pbs-sp/history", 200).await;
        let points_before = app.get_json("/api/v1/roadmap/burnup", 200).await["series"].as_array().unwrap().len();

        commit_state_change(&app.data_dir.join("monorepo"), "catalog/layers/02-backup.yaml", "pbs-sp", "desired", "declared");
        let after = app.get_json("/api/v1/items/pbs-sp/history", 200).await;
        let burnup = app.get_json("/api/v1/roadmap/burnup", 200).await;

        assert_eq!(transitions(&before), [(Value::Null, "desired".into())]);
        assert_eq!(
            transitions(&after),
            [(Value::Null, "desired".into()), ("desired".into(), "declared".into())]
        );
        assert_eq!(after["changes"][1]["summary"], "Backup: pbs-sp declared");
        assert_ne!(after["tip"], before["tip"]);
        assert_eq!(burnup["series"].as_array().unwrap().len(), points_before + 1);
    }

    async fn a_catalog_read_from_a_directory_has_no_history_and_says_why(backend: Backend) {
        let app = spawn_app(backend).await;

        let item = app.get_json("/api/v1/items/vault/history", 200).await;
        let burnup = app.get_json("/api/v1/roadmap/burnup", 200).await;

        for body in [&item, &burnup] {
            assert_eq!(body["available"], false);
            assert_eq!(body["reason"], "directory");
            assert!(body["message"].as_str().unwrap().contains("MIRANTE_CATALOG"));
        }
        assert_eq!(item["changes"], Value::Array(vec![]));
        assert_eq!(burnup["series"], Value::Array(vec![]));
    }

    async fn an_unknown_item_has_no_history_and_anonymous_callers_are_turned_away(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;

        let unknown = app.get_json("/api/v1/items/no-such-item/history", 404).await;
        let anonymous = app
            .anonymous
            .get(format!("{}/api/v1/items/linstor-franca/history", app.address))
            .send()
            .await
            .unwrap();
        let anonymous_burnup = app
            .anonymous
            .get(format!("{}/api/v1/roadmap/burnup", app.address))
            .send()
            .await
            .unwrap();

        assert!(unknown["error"].as_str().unwrap().contains("no-such-item"), "{unknown}");
        assert_eq!(anonymous.status().as_u16(), 401);
        assert_eq!(anonymous_burnup.status().as_u16(), 401);
    }
}
