//! Server-rendered pages as a reader without JavaScript gets them: the admins' dashboard on the
//! home page, and the roadmap pages in the reader's language.

use reqwest::Client;

use crate::helpers::*;

/// The HTML of `path` for `browser`, in the language `accept_language` asks for.
async fn page(app: &TestApp, browser: &Client, path: &str, accept_language: &str) -> String {
    let response = browser
        .get(format!("{}{path}", app.address))
        .header("accept-language", accept_language)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "{path}");
    response.text().await.unwrap()
}

/// The page without its scripts: the data serialized for hydration carry the API's English
/// `message` next to the code and values the page translates.
fn visible(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find("<script") {
        out.push_str(&rest[..start]);
        rest = rest[start..]
            .find("</script>")
            .map_or("", |end| &rest[start + end..]);
    }
    out.push_str(rest);
    out
}

on_both_databases! {
    async fn an_admin_lands_on_the_dashboard_above_the_overview(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let admin = app.dev_browser("ada").await;

        let html = page(&app, &admin, "/", "en").await;

        for part in [
            "id=\"dash-findings\"",
            "id=\"dash-checks\"",
            "id=\"dash-tasks\"",
            "id=\"dash-approvals\"",
            "id=\"dash-changes\"",
        ] {
            assert!(html.contains(part), "{part} missing");
        }
        // Each part links to its full page; the overview's matrix follows.
        for link in ["href=\"/findings\"", "href=\"/roadmap\"", "href=\"/requests?state=awaiting_approval\""] {
            assert!(html.contains(link), "{link} missing");
        }
        assert!(html.contains("class=\"matrix\""), "the overview matrix is kept");
        // The demo monorepo's history gives the latest state changes, each linking to its item.
        let changes = &html[html.find("id=\"dash-changes\"").unwrap()..];
        let changes = &changes[..changes.find("</section>").unwrap_or(changes.len())];
        assert!(!changes.contains("History not available"), "the demo has a history");
        assert!(changes.contains("href=\"/items/"), "recent changes link to their items");
        assert!(html.contains("The live checks have not run yet."));
        // The demo's critical task comes first among the pending tasks.
        let tasks = &html[html.find("id=\"dash-tasks\"").unwrap()..];
        assert!(tasks.contains("p-priority-critical"), "critical tasks are listed");
    }

    async fn an_admin_is_told_when_the_catalog_has_no_history(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Small).await;
        let admin = app.dev_browser("ada").await;

        let html = page(&app, &admin, "/", "en").await;

        assert!(html.contains("id=\"dash-changes\""));
        assert!(html.contains("History not available"), "a catalog read from a directory has no history");
    }

    async fn a_researcher_and_an_anonymous_reader_see_the_overview_without_the_dashboard(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Embedded, |config, _| {
            config.public_catalog = true;
        })
        .await;
        let researcher = app.dev_browser("rui").await;
        let anonymous = app.browser();

        for browser in [&researcher, &anonymous] {
            let html = page(&app, browser, "/", "en").await;

            assert!(html.contains("class=\"matrix\""));
            assert!(!html.contains("class=\"dashboard\""), "{html}");
        }
        let direct = researcher
            .post(format!("{}/_fn/dashboard", app.address))
            .send()
            .await
            .unwrap();
        assert_eq!(direct.status().as_u16(), 403, "the dashboard's data are for admins");
    }

    async fn the_dashboard_lists_requests_awaiting_approval(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let researcher = app.dev_browser("rui").await;
        let request = serde_json::json!({
            "template": "gpu-workspace",
            "values": {"name": "nlp", "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
        });
        let body = app.post_json(&researcher, "/api/v1/requests", &request, 201).await;
        assert_eq!(body["state"], "awaiting_approval", "{body}");
        let admin = app.dev_browser("ada").await;

        let html = page(&app, &admin, "/", "pt-BR").await;

        let approvals = &html[html.find("id=\"dash-approvals\"").unwrap()..];
        let approvals = &approvals[..approvals.find("</section>").unwrap()];
        assert!(approvals.contains(&format!("href=\"/requests/{}\"", body["id"])), "{approvals}");
        assert!(approvals.contains("Um pedido aguarda decisão."), "{approvals}");
    }

    async fn the_resources_page_shows_a_researcher_their_own_and_an_admin_everyones_per_cluster(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let request = serde_json::json!({
            "template": "gpu-workspace",
            "values": {"name": "nlp", "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
        });
        let empty = visible(&page(&app, &rui, "/resources", "en").await);
        let id = app.post_json(&rui, "/api/v1/requests", &request, 201).await["id"].as_i64().unwrap();
        let admin = app.dev_browser("ada").await;

        let mine = visible(&page(&app, &rui, "/resources", "pt-BR").await);
        let all = visible(&page(&app, &admin, "/resources", "en").await);

        let card = &mine[mine.find(&format!("data-id=\"{id}\"")).expect("rui's resource")..];
        assert!(card.contains("ws-nlp") && card.contains("data-state=\"pending\""), "{card}");
        assert!(card.contains("pendente") && card.contains("Aguardando a aprovação"), "in Portuguese: {card}");
        assert!(empty.contains("No resources yet."), "{empty}");
        let group = &all[all.find("data-cluster=\"gpu-sp-01\"").expect("a section per cluster")..];
        assert!(group.contains(&format!("data-id=\"{id}\"")), "{group}");
        let anonymous = app.anonymous.get(format!("{}/resources", app.address)).send().await.unwrap();
        assert_ne!(anonymous.status().as_u16(), 200, "the page needs a session");
    }

    async fn the_roadmap_and_the_findings_speak_portuguese_to_a_portuguese_reader(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let admin = app.dev_browser("ada").await;
        let pt = "pt-BR,pt;q=0.9,en;q=0.5";

        let roadmap = page(&app, &admin, "/roadmap", pt).await;
        let graph = page(&app, &admin, "/roadmap/graph?to=traefik-sp-ha", pt).await;
        let findings = page(&app, &admin, "/findings", pt).await;
        let markdown = page(&app, &admin, "/roadmap.md", pt).await;

        assert!(roadmap.contains(r#"<html lang="pt-BR""#));
        for text in ["Fases", "Pendências", "Progresso por site", "Progresso por camada", "bloqueado"] {
            assert!(roadmap.contains(text), "{text} missing from /roadmap");
        }
        for english in ["Phases", "Pending tasks", "Progress by", "blocked by", ">done<", ">ready<"] {
            assert!(!roadmap.contains(english), "{english} in /roadmap");
        }
        assert!(graph.contains("Grafo de dependências"), "the SVG's title");
        assert!(!graph.contains("Dependency graph"));
        assert!(!graph.contains(", blocked)") && !graph.contains(", ready)"), "node tooltips");
        assert!(findings.contains("Achados"));
        assert!(findings.contains("mas não validado em produção"), "messages in Portuguese");
        assert!(!visible(&findings).contains("not validated in production"), "{findings}");
        assert!(markdown.contains("| situação | item | estado | bloqueado por |"), "{markdown}");
        assert!(markdown.contains("## Pendências"));
        assert!(!markdown.contains("Pending tasks") && !markdown.contains("Progress by"));
    }
}

/// Another portal starting in the same process (as test servers do, or an embedder building a
/// second `Application`) never leaves a page of a running one waiting: each server start
/// used to walk the app for its routes, and resources first polled during that walk never
/// loaded.
#[test]
fn pages_render_while_other_portals_start_in_the_same_process() {
    use std::sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    };

    let starting = Arc::new(AtomicBool::new(true));
    let starter = {
        let starting = Arc::clone(&starting);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            for _ in 0..12 {
                runtime.block_on(async {
                    spawn_app_with(Backend::Sqlite, CatalogSetup::Small).await;
                });
            }
            starting.store(false, Ordering::Relaxed);
        })
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rendered = runtime.block_on(async {
        let app = spawn_app_with(Backend::Sqlite, CatalogSetup::Small).await;
        let reader = app.dev_browser("rui").await;
        let mut rendered = 0;
        while starting.load(Ordering::Relaxed) {
            let response = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                reader.get(format!("{}/", app.address)).send(),
            )
            .await
            .expect("the overview answered within 10 s while another portal started")
            .unwrap();
            assert_eq!(response.status().as_u16(), 200);
            rendered += 1;
        }
        rendered
    });
    starter.join().unwrap();
    assert!(rendered > 0, "pages were requested while portals started");
}
