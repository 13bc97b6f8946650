//! `/roadmap.md`, `/roadmap.csv`, `/roadmap/graph.svg` and `/badge/items/{id}.svg`.

use reqwest::Response;

use crate::helpers::*;

/// `GET` a page-like path as a signed-in browser (API tokens are for `/api/*` only).
async fn get(app: &TestApp, path: &str) -> Response {
    app.dev_browser("ada")
        .await
        .get(format!("{}{path}", app.address))
        .send()
        .await
        .unwrap()
}

on_both_databases! {
    async fn the_csv_export_has_one_quoted_row_per_item(backend: Backend) {
        let app = spawn_app(backend).await;

        let response = get(&app, "/roadmap.csv").await;

        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(response.headers()["content-type"], "text/csv; charset=utf-8");
        let body = response.text().await.unwrap();
        let mut reader = csv::Reader::from_reader(body.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
        assert_eq!(
            header,
            ["id", "name", "layer", "sites", "state", "qualifier", "phase", "status", "depends_on", "blocked_by"]
        );
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 6);
        let gpu = rows.iter().find(|r| &r[0] == "gpu-workspace").unwrap();
        assert_eq!(&gpu[7], "blocked");
        assert_eq!(&gpu[9], "storage-replication hypervisor-south");
        let tape = rows.iter().find(|r| &r[0] == "tape-backup").unwrap();
        assert_eq!(&tape[5], "rejected");
    }

    async fn the_markdown_export_lists_phases_tasks_and_progress_with_links(backend: Backend) {
        let app = spawn_app(backend).await;

        let response = get(&app, "/roadmap.md").await;

        assert_eq!(response.status().as_u16(), 200);
        assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/markdown"));
        let body = response.text().await.unwrap();
        assert!(body.starts_with("# Roadmap — Test platform\n"), "{body}");
        assert!(body.contains(&format!(
            "| blocked | [GPU workspaces]({}/items/gpu-workspace) | desired (in progress) | storage-replication, hypervisor-south |",
            app.address
        )), "{body}");
        assert!(body.contains("| critical | Set up replication between the two sites |  | blocked | hypervisor-south |"), "{body}");
        assert!(body.contains("## Progress by site"), "{body}");
    }

    async fn a_badge_shows_the_state_in_its_colour_and_can_be_revalidated(backend: Backend) {
        let app = spawn_app(backend).await;

        let response = get(&app, "/badge/items/hypervisor-south.svg").await;

        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(response.headers()["content-type"], "image/svg+xml");
        assert_eq!(response.headers()["cache-control"], "private, max-age=300");
        let etag = response.headers()["etag"].to_str().unwrap().to_owned();
        let body = response.text().await.unwrap();
        assert!(body.contains(">hypervisor-south</text>"), "{body}");
        assert!(body.contains(">declared · partial</text>"), "{body}");
        assert!(body.contains("fill=\"#b76e00\""), "{body}");
        let again = app
            .dev_browser("ada")
            .await
            .get(format!("{}/badge/items/hypervisor-south.svg", app.address))
            .header("if-none-match", etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status().as_u16(), 304);
    }

    async fn a_badge_for_an_unknown_item_is_a_404_image(backend: Backend) {
        let app = spawn_app(backend).await;

        for path in ["/badge/items/no-such-item.svg", "/badge/items/vault.png", "/badge/items/%3Cscript%3E.svg"] {
            let response = get(&app, path).await;

            assert_eq!(response.status().as_u16(), 404, "{path}");
            assert_eq!(response.headers()["content-type"], "image/svg+xml", "{path}");
            let body = response.text().await.unwrap();
            assert!(body.contains(">not found</text>"), "{body}");
            assert!(!body.contains("<script>"), "{body}");
        }
    }

    async fn badges_are_public_with_the_public_catalog_and_need_a_session_otherwise(backend: Backend) {
        let private = spawn_app(backend).await;
        let public = spawn_configured(backend, CatalogSetup::Small, |c, _| c.public_catalog = true).await;

        let closed = private.anonymous.get(format!("{}/badge/items/vault.svg", private.address)).send().await.unwrap();
        let open = public.anonymous.get(format!("{}/badge/items/vault.svg", public.address)).send().await.unwrap();

        assert_ne!(closed.status().as_u16(), 200);
        assert_eq!(open.status().as_u16(), 200);
        assert_eq!(open.headers()["cache-control"], "public, max-age=300");
    }

    async fn the_graph_file_links_nodes_to_items_and_marks_the_critical_path(backend: Backend) {
        let app = spawn_app(backend).await;

        let plain = get(&app, "/roadmap/graph.svg").await;
        let to = get(&app, "/roadmap/graph.svg?to=gpu-workspace").await;
        let unknown = get(&app, "/roadmap/graph.svg?to=nope").await;

        assert_eq!(plain.headers()["content-type"], "image/svg+xml");
        let plain = plain.text().await.unwrap();
        assert!(plain.contains("href=\"/items/storage-replication\""), "{plain}");
        assert!(!plain.contains(" path\""), "no path without ?to: {plain}");
        let to = to.text().await.unwrap();
        for id in ["hypervisor-north", "storage-replication", "gpu-workspace"] {
            assert!(to.contains(&format!("path\" href=\"/items/{id}\"")), "{id}: {to}");
        }
        // vault and tape-backup take part in no dependency.
        assert!(!to.contains("/items/vault"), "{to}");
        assert_eq!(unknown.status().as_u16(), 404);
    }
}
