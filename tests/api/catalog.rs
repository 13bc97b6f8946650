//! `GET /api/v1/catalog`, `POST /api/v1/catalog/reload`, start-up with good and bad catalogs.

use mirante::Application;
use serde_json::json;
use tempfile::TempDir;

use crate::helpers::*;

async fn any_port() -> tokio::net::TcpListener {
    tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()
}

/// The test catalog's items file with one bad enum value, and where the value is.
fn broken_items() -> (String, u64, u64) {
    let text = ITEMS.replacen("state: declared", "state: maybe", 1);
    let (n, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("state: maybe"))
        .unwrap();
    let column = line.find("maybe").unwrap() + 1;
    (text, n as u64 + 1, column as u64)
}

on_both_databases! {
    async fn catalog_status_reports_hash_source_and_item_count(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/catalog", 200).await;

        assert_eq!(body["hash"].as_str().unwrap().len(), 64);
        assert_eq!(body["item_count"], 6);
        assert_eq!(body["source"]["kind"], "dir");
        assert_eq!(body["revision"], json!(null));
        assert_eq!(body["last_error"], json!(null));
        assert!(body["loaded_at"].as_str().is_some());
    }

    async fn where_the_catalog_lies_on_the_servers_disk_is_shown_to_admins_only(backend: Backend) {
        let app = spawn_app(backend).await;
        let researcher = app.dev_browser("rui").await;
        let admin = app.dev_browser("ada").await;

        let as_researcher = app.get_json_as(&researcher, "/api/v1/catalog", 200).await;
        let as_admin = app.get_json_as(&admin, "/api/v1/catalog", 200).await;

        let shown = as_researcher["source"]["path"].as_str().unwrap();
        let full = as_admin["source"]["path"].as_str().unwrap();
        assert!(!shown.is_empty() && !shown.contains('/'), "{shown}");
        assert!(full.starts_with('/') && full.ends_with(shown), "{full}");
    }

    async fn starting_records_the_catalog_snapshot_and_an_audit_entry(backend: Backend) {
        let app = spawn_app(backend).await;
        let status = app.get_json("/api/v1/catalog", 200).await;

        let snapshots = app.db.list_snapshots(10).await.unwrap();
        let audit = app.db.list_audit(10).await.unwrap();

        assert_eq!(snapshots.len(), 1);
        assert_eq!(snapshots[0].hash, status["hash"].as_str().unwrap());
        assert_eq!(snapshots[0].item_count, 6);
        assert!(snapshots[0].source.starts_with("dir:"), "{}", snapshots[0].source);
        assert_eq!(audit.len(), 1);
        assert_eq!(audit[0].action, "catalog.reload");
        assert_eq!(audit[0].actor, "system");
        assert_eq!(audit[0].detail["outcome"], "loaded");
    }

    async fn reloading_a_broken_catalog_keeps_the_last_good_one_and_returns_diagnostics(backend: Backend) {
        let app = spawn_app(backend).await;
        let before = app.get_json("/api/v1/catalog", 200).await;
        let (broken, line, column) = broken_items();
        app.write_catalog_file("items.yaml", &broken);

        let reload = app.post("/api/v1/catalog/reload").await;

        assert_eq!(reload.status().as_u16(), 422);
        let body: serde_json::Value = reload.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().contains("last good catalog"), "{body}");
        let detail = &body["details"][0];
        assert_eq!(detail["file"], "items.yaml");
        assert_eq!(detail["line"], line);
        assert_eq!(detail["column"], column);
        assert!(detail["message"].as_str().unwrap().contains("maybe"), "{detail}");
        // The last good catalog is still served.
        let item = app.get_json("/api/v1/items/hypervisor-south", 200).await;
        assert_eq!(item["item"]["state"], "declared");
        let after = app.get_json("/api/v1/catalog", 200).await;
        assert_eq!(after["hash"], before["hash"]);
        assert_eq!(after["last_error"]["trigger"]["kind"], "api");
        assert_eq!(after["last_error"]["diagnostics"][0]["file"], "items.yaml");
        assert_eq!(after["last_error"]["diagnostics"][0]["line"], line);
        // Refused reloads are audited and add nothing to the history.
        let audit = app.db.list_audit(1).await.unwrap();
        assert_eq!(audit[0].detail["outcome"], "failed");
        assert_eq!(app.db.list_snapshots(10).await.unwrap().len(), 1);
    }

    async fn reloading_a_changed_catalog_records_a_snapshot_row_and_an_audit_entry(backend: Backend) {
        let app = spawn_app(backend).await;
        let before = app.get_json("/api/v1/catalog", 200).await;
        let changed = ITEMS.replace("Two hosts in production.", "Three hosts in production.");
        app.write_catalog_file("items.yaml", &changed);

        let body = app.post("/api/v1/catalog/reload").await;

        assert_eq!(body.status().as_u16(), 200);
        let body: serde_json::Value = body.json().await.unwrap();
        assert_eq!(body["outcome"], "updated");
        assert_eq!(body["previous_hash"], before["hash"]);
        assert_ne!(body["catalog"]["hash"], before["hash"]);
        let found = app.get_json("/api/v1/items?q=three%20hosts", 200).await;
        assert_eq!(ids(&found), ["hypervisor-north"]);
        let snapshots = app.db.list_snapshots(10).await.unwrap();
        assert_eq!(snapshots.len(), 2);
        assert_eq!(snapshots[0].hash, body["catalog"]["hash"].as_str().unwrap());
        let audit = app.db.list_audit(10).await.unwrap();
        assert_eq!(audit.len(), 2);
        assert_eq!(audit[0].action, "catalog.reload");
        assert_eq!(audit[0].actor, "test-admin");
        assert_eq!(audit[0].target, "catalog");
        assert_eq!(audit[0].detail["outcome"], "updated");
        assert_eq!(audit[0].detail["previous_hash"], before["hash"]);
        assert_eq!(audit[0].detail["trigger"]["kind"], "api");
    }

    async fn a_good_reload_after_a_broken_one_clears_the_error(backend: Backend) {
        let app = spawn_app(backend).await;
        app.write_catalog_file("items.yaml", &broken_items().0);
        assert_eq!(app.post("/api/v1/catalog/reload").await.status().as_u16(), 422);
        app.write_catalog_file("items.yaml", ITEMS);

        let body = app.post("/api/v1/catalog/reload").await;

        assert_eq!(body.status().as_u16(), 200);
        let body: serde_json::Value = body.json().await.unwrap();
        assert_eq!(body["outcome"], "unchanged");
        assert_eq!(body["catalog"]["last_error"], json!(null));
    }

    async fn reloading_an_unchanged_catalog_reports_it_and_records_no_new_snapshot(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.post("/api/v1/catalog/reload").await;

        assert_eq!(body.status().as_u16(), 200);
        let body: serde_json::Value = body.json().await.unwrap();
        assert_eq!(body["outcome"], "unchanged");
        assert_eq!(body["previous_hash"], json!(null));
        assert_eq!(app.db.list_snapshots(10).await.unwrap().len(), 1);
        // Someone asked: the no-op is still audited.
        assert_eq!(app.db.list_audit(1).await.unwrap()[0].detail["outcome"], "unchanged");
    }

    async fn reload_is_for_admins_only(backend: Backend) {
        let app = spawn_app(backend).await;
        let researcher = seed_token(&app.db, "res", &["researchers"]).await;
        let url = format!("{}/api/v1/catalog/reload", app.address);

        let anonymous = app.anonymous.post(&url).send().await.unwrap();
        let as_researcher = app
            .anonymous
            .post(&url)
            .bearer_auth(&researcher)
            .send()
            .await
            .unwrap();

        assert_eq!(anonymous.status().as_u16(), 401);
        assert_eq!(as_researcher.status().as_u16(), 403);
        let body: serde_json::Value = as_researcher.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().contains("admin"), "{body}");
    }

    async fn the_demo_catalog_is_read_from_the_local_monorepo_created_on_first_start(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;

        let status = app.get_json("/api/v1/catalog", 200).await;
        let sites = app.get_json("/api/v1/sites", 200).await;
        let validated_in_sp = app.get_json("/api/v1/items?state=validated&site=sp", 200).await;

        assert_eq!(status["source"]["kind"], "git", "{status}");
        assert_eq!(status["source"]["branch"], "main");
        assert_eq!(status["source"]["dir"], "catalog");
        assert_eq!(status["revision"].as_str().map(str::len), Some(40), "{status}");
        assert!(status["item_count"].as_u64().unwrap() >= 50, "{status}");
        let site_ids: Vec<&str> = sites["sites"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        assert_eq!(site_ids, ["franca", "sp"]);
        assert!(validated_in_sp["total"].as_u64().unwrap() > 0);
    }

    async fn a_server_refuses_to_start_with_a_broken_catalog_and_says_where(backend: Backend) {
        let data_dir = TempDir::new().unwrap();
        let (mut config, _pg) = test_config(backend, data_dir.path()).await;
        let (broken, line, column) = broken_items();
        let catalog = write_catalog(&[("items.yaml", broken)]);
        config.catalog = Some(catalog.path().to_owned());

        let result = Application::build_with_listener(config, any_port().await).await;

        let Err(error) = result else { panic!("a broken catalog was accepted") };
        let shown = format!("{error:#}");
        assert!(shown.contains(&format!("items.yaml:{line}:{column}:")), "{shown}");
    }

    async fn two_servers_on_one_database_share_the_snapshot_row(backend: Backend) {
        let data_dir = TempDir::new().unwrap();
        let (mut config, _pg) = test_config(backend, data_dir.path()).await;
        let catalog = write_catalog(&test_catalog());
        config.catalog = Some(catalog.path().to_owned());
        let first = Application::build_with_listener(config.clone(), any_port().await)
            .await
            .unwrap();

        let second = Application::build_with_listener(config, any_port().await)
            .await
            .unwrap();

        let snapshots = second.state().db.list_snapshots(10).await.unwrap();
        assert_eq!(snapshots.len(), 1);
        // Only the first start saw new content, so only it wrote an audit entry.
        assert_eq!(second.state().db.list_audit(10).await.unwrap().len(), 1);
        first.state().db.close().await;
        second.state().db.close().await;
    }
}
