//! `GET /api/v1/probes` and the live checks' findings, with the server probing real local HTTP
//! servers.

use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;

use crate::helpers::*;

/// A server answering 200 at `/health`, and an address nothing listens on.
async fn up_and_down() -> (String, String) {
    let up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_addr = up.local_addr().unwrap();
    let router = axum::Router::new().route("/health", axum::routing::get(|| async { "ok" }));
    tokio::spawn(async move { axum::serve(up, router).await });
    let down = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let down_addr = down.local_addr().unwrap();
    drop(down);
    (
        format!("http://{up_addr}/health"),
        format!("http://{down_addr}/health"),
    )
}

/// The small test catalog with `vault` (validated) backed by both probes as well, and a
/// probe on a desired item, which is not run.
fn catalog_probing(up: &str, down: &str) -> TempDir {
    let attestation = "      - kind: attestation\n        by: ana";
    let items = ITEMS.replacen(
        attestation,
        &format!(
            "      - kind: probe\n        url: {up}\n      - kind: probe\n        url: {down}\n        expect_status: 204\n{attestation}"
        ),
        1,
    );
    let items = items.replacen(
        "    state: desired\n    depends_on: [hypervisor-north, hypervisor-south]",
        &format!(
            "    state: desired\n    depends_on: [hypervisor-north, hypervisor-south]\n    evidence:\n      - kind: probe\n        url: {down}"
        ),
        1,
    );
    assert_ne!(items, ITEMS, "the test catalog changed shape");
    let mut files = test_catalog();
    files.retain(|(name, _)| *name != "items.yaml");
    files.push(("items.yaml", items));
    write_catalog(&files)
}

/// Asks until the first run of the live checks is in.
async fn probes_after_first_run(app: &TestApp) -> Value {
    for _ in 0..100 {
        let body = app.get_json("/api/v1/probes", 200).await;
        if !body["last_run"].is_null() {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the live checks did not run within 10 s");
}

on_both_databases! {
    async fn probes_of_validated_items_are_run_and_a_failing_one_is_an_error_finding(backend: Backend) {
        let (up, down) = up_and_down().await;
        let catalog = catalog_probing(&up, &down);
        let dir = catalog.path().to_owned();
        let app = spawn_configured(backend, CatalogSetup::Small, move |config, _| {
            config.catalog = Some(dir);
            config.probe_interval_secs = 60;
            config.probe_timeout_secs = 5;
            // The test servers are on loopback, which probes may not reach by default.
            config.probe_allow = "127.0.0.1".into();
        })
        .await;

        let body = probes_after_first_run(&app).await;

        assert_eq!(body["enabled"], true);
        assert_eq!(body["argocd"], false);
        assert_eq!(body["failing"], 1);
        let checks = body["checks"].as_array().unwrap();
        assert_eq!(checks.len(), 2, "only the validated item's probes: {checks:?}");
        assert_eq!(
            (checks[0]["item"].as_str(), checks[0]["kind"].as_str(), checks[0]["target"].as_str()),
            (Some("vault"), Some("probe"), Some(up.as_str()))
        );
        assert_eq!((checks[0]["ok"].as_bool(), checks[0]["status"].as_u64()), (Some(true), Some(200)));
        assert!(checks[0]["reason"].is_null());
        assert_eq!(checks[1]["target"], down.as_str());
        assert_eq!(checks[1]["ok"], false);
        assert!(checks[1]["status"].is_null());
        let reason = checks[1]["reason"].as_str().unwrap();
        assert!(reason.starts_with("cannot connect: "), "{reason}");

        let findings = app.get_json("/api/v1/findings?severity=error", 200).await;
        let failing: Vec<&Value> = findings["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "probe-failing")
            .collect();
        assert_eq!(failing.len(), 1, "{findings}");
        assert_eq!(failing[0]["item"], "vault");
        assert_eq!(failing[0]["severity"], "error");
        assert_eq!(failing[0]["args"]["url"], down.as_str());
        assert_eq!(failing[0]["args"]["reason"], reason);
        assert_eq!(failing[0]["link"], "/items/vault");

        let rui = app.dev_browser("rui").await;
        let as_reader = app.get_json_as(&rui, "/api/v1/probes", 200).await;
        let seen = as_reader["checks"].as_array().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!((seen[0]["ok"].as_bool(), seen[1]["ok"].as_bool()), (Some(true), Some(false)));
        for check in seen {
            assert!(
                check["status"].is_null() && check["latency_ms"].is_null() && check["reason"].is_null(),
                "a researcher sees how the portal's network answered: {check}"
            );
        }
    }

    async fn a_probe_of_a_loopback_address_is_refused_unless_the_allow_list_names_it(backend: Backend) {
        let (up, down) = up_and_down().await;
        let catalog = catalog_probing(&up, &down);
        let dir = catalog.path().to_owned();
        let app = spawn_configured(backend, CatalogSetup::Small, move |config, _| {
            config.catalog = Some(dir);
            config.probe_interval_secs = 60;
            config.probe_timeout_secs = 5;
        })
        .await;

        let body = probes_after_first_run(&app).await;

        let checks = body["checks"].as_array().unwrap();
        assert_eq!(checks.len(), 2);
        for check in checks {
            assert_eq!(check["ok"], false, "{check}");
            let reason = check["reason"].as_str().unwrap();
            assert!(reason.starts_with("refused: 127.0.0.1 is an internal address"), "{reason}");
        }
    }

    async fn probe_results_are_for_catalog_readers_and_empty_when_checks_are_off(backend: Backend) {
        let app = spawn_app(backend).await;
        let reader = seed_token(&app.db, "reader", &["researchers"]).await;

        let anonymous = app
            .anonymous
            .get(format!("{}/api/v1/probes", app.address))
            .send()
            .await
            .unwrap();
        let as_reader = app
            .anonymous
            .get(format!("{}/api/v1/probes", app.address))
            .bearer_auth(&reader)
            .send()
            .await
            .unwrap();
        let body: Value = as_reader.json().await.unwrap();

        assert_eq!(anonymous.status().as_u16(), 401);
        assert_eq!(body["enabled"], false);
        assert_eq!(body["interval_secs"], 0);
        assert!(body["last_run"].is_null());
        assert_eq!(body["checks"], serde_json::json!([]));
        assert_eq!(app.get("/api/v1/probes?item=vault").await.status().as_u16(), 400);
    }
}

/// A server answering 200 at `/health` that counts the calls.
async fn counting() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    };
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = axum::Router::new().route(
        "/health",
        axum::routing::get(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { "ok" }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{addr}/health"), calls)
}

#[tokio::test]
async fn two_replicas_run_each_round_of_live_checks_once_and_serve_the_same_results() {
    let (up, calls) = counting().await;
    let (_, down) = up_and_down().await;
    let catalog = catalog_probing(&up, &down);
    let dir = catalog.path().to_owned();
    let first = spawn_configured(Backend::Postgres, CatalogSetup::Small, move |config, _| {
        config.catalog = Some(dir);
        config.probe_interval_secs = 2;
        config.probe_timeout_secs = 1;
        config.probe_allow = "127.0.0.1".into();
        config.worker_id = Some("replica-a".into());
    })
    .await;
    let second = first
        .replica(|config, _| config.worker_id = Some("replica-b".into()))
        .await;
    let started = std::time::Instant::now();

    probes_after_first_run(&first).await;
    let times = |body: &Value| -> Vec<Value> {
        body["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["checked_at"].clone())
            .collect()
    };
    // The second serves the very results the first's run found (a run of its own would have
    // its own times), at the latest one round later.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let (a, b) = loop {
        let a = first.get_json("/api/v1/probes", 200).await;
        let b = second.get_json("/api/v1/probes", 200).await;
        if !a["checks"].as_array().unwrap().is_empty() && times(&a) == times(&b) {
            break (a, b);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never the same results: {a} {b}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    tokio::time::sleep(Duration::from_secs(4)).await;
    let rounds = started.elapsed().as_secs() / 2 + 1;
    let calls = calls.load(std::sync::atomic::Ordering::SeqCst) as u64;

    assert_eq!(a["checks"].as_array().unwrap().len(), 2, "{a}");
    assert_eq!(a["checks"], b["checks"]);
    assert!(
        calls <= rounds + 1,
        "{calls} probes of one URL in {rounds} rounds: the replicas probed it each"
    );
    assert!(calls >= 2, "the checks went on: {calls}");
}
