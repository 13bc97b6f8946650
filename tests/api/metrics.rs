//! `/metrics`: Prometheus text on its own listener (`MIRANTE_METRICS_BIND`), scraped as
//! Prometheus would. The recorder is the process's, shared by every test server in this binary,
//! so counts are compared before and after, never to absolute numbers.

use std::time::{Duration, Instant};

use chrono::Utc;
use mirante_domain::monorepo::FileChange;

use crate::helpers::{Backend, CatalogSetup, TestApp, refusing_address, spawn_configured};

async fn spawn_with_metrics() -> (TestApp, String) {
    let app = spawn_configured(Backend::Sqlite, CatalogSetup::Small, |config, _| {
        config.metrics_bind = Some("127.0.0.1:0".parse().unwrap());
    })
    .await;
    let metrics = app
        .metrics_address
        .clone()
        .expect("a metrics listener was configured");
    (app, metrics)
}

async fn scrape(metrics: &str) -> String {
    let response = reqwest::get(format!("{metrics}/metrics")).await.unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    response.text().await.unwrap()
}

/// The sum of the samples of `name` whose labels include all of `labels`.
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (metric, rest) = series.split_once('{').unwrap_or((series, "}"));
            if metric != name {
                return None;
            }
            let all = labels
                .iter()
                .all(|(k, v)| rest.contains(&format!("{k}=\"{v}\"")));
            all.then(|| value.parse::<f64>().ok()).flatten()
        })
        .sum()
}

#[tokio::test]
async fn requests_are_counted_and_timed_by_route_template_and_status() {
    let (app, metrics) = spawn_with_metrics().await;
    let items = [
        ("method", "GET"),
        ("route", "/api/v1/items"),
        ("status", "200"),
    ];
    let one_item = [
        ("method", "GET"),
        ("route", "/api/v1/items/{id}"),
        ("status", "404"),
    ];
    let before = scrape(&metrics).await;

    app.get_json("/api/v1/items", 200).await;
    app.get_json("/api/v1/items", 200).await;
    let missing = app.get("/api/v1/items/no-such-item").await;
    let after = scrape(&metrics).await;

    assert_eq!(missing.status(), 404);
    assert!(
        sample(&after, "mirante_http_requests_total", &items)
            >= sample(&before, "mirante_http_requests_total", &items) + 2.0
    );
    assert!(
        sample(&after, "mirante_http_requests_total", &one_item)
            >= sample(&before, "mirante_http_requests_total", &one_item) + 1.0,
        "the route template, not the path, labels the request:\n{after}"
    );
    assert!(
        !after.contains("no-such-item"),
        "a path never becomes a label"
    );
    let count = sample(
        &after,
        "mirante_http_request_duration_seconds_count",
        &items,
    );
    let inf = sample(
        &after,
        "mirante_http_request_duration_seconds_bucket",
        &[
            ("method", "GET"),
            ("route", "/api/v1/items"),
            ("status", "200"),
            ("le", "+Inf"),
        ],
    );
    assert!(count >= 2.0, "{after}");
    assert_eq!(
        inf, count,
        "the histogram's +Inf bucket holds every request"
    );
    assert!(after.contains("# TYPE mirante_http_request_duration_seconds histogram"));
}

#[tokio::test]
async fn the_public_listener_does_not_serve_metrics() {
    let (app, _metrics) = spawn_with_metrics().await;

    let public = app.get("/metrics").await;
    let status = public.status().as_u16();
    let body = public.text().await.unwrap();

    assert_ne!(status, 200, "{body}");
    assert!(!body.contains("mirante_http_requests_total"));
}

#[tokio::test]
async fn no_metrics_listener_runs_unless_one_is_configured() {
    let app = spawn_configured(Backend::Sqlite, CatalogSetup::Small, |_, _| {}).await;

    assert!(app.metrics_address.is_none());
}

#[tokio::test]
async fn catalog_reloads_and_the_catalog_served_are_shown() {
    let (app, metrics) = spawn_with_metrics().await;
    let before = scrape(&metrics).await;

    let reloaded = app
        .client
        .post(format!("{}/api/v1/catalog/reload", app.address))
        .send()
        .await
        .unwrap();
    let hash = app.get_json("/api/v1/catalog", 200).await["hash"]
        .as_str()
        .map(str::to_owned);
    let after = scrape(&metrics).await;

    assert_eq!(reloaded.status(), 200);
    let unchanged = [("outcome", "unchanged")];
    assert!(
        sample(&after, "mirante_catalog_reloads_total", &unchanged)
            >= sample(&before, "mirante_catalog_reloads_total", &unchanged) + 1.0,
        "{after}"
    );
    let hash = hash.expect("the catalog endpoint names its hash");
    assert_eq!(
        sample(&after, "mirante_catalog_info", &[("hash", &hash)]),
        1.0,
        "{after}"
    );
    assert!(
        sample(&after, "mirante_catalog_items", &[]) > 0.0,
        "{after}"
    );
}

#[tokio::test]
async fn worker_jobs_are_counted_by_outcome() {
    let (app, metrics) = spawn_with_metrics().await;
    let proposed = [("outcome", "proposed")];
    let before = sample(
        &scrape(&metrics).await,
        "mirante_worker_jobs_total",
        &proposed,
    );
    crate::requests::seed_request_at(
        &app,
        "notes/metrics",
        vec![FileChange {
            path: "notes/metrics/a.yaml".into(),
            content: "a: 1\n".into(),
        }],
        Utc::now(),
    )
    .await;
    app.worker.wake();
    let deadline = Instant::now() + Duration::from_secs(30);
    let after = loop {
        let text = scrape(&metrics).await;
        let now = sample(&text, "mirante_worker_jobs_total", &proposed);
        if now > before || Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };

    assert!(
        sample(&after, "mirante_worker_jobs_total", &proposed) >= before + 1.0,
        "{after}"
    );
}

#[tokio::test]
async fn the_pool_the_oldest_waiting_job_and_the_live_checks_are_shown() {
    // A forge nothing answers at: the proposing job stays queued, retried.
    let (_dead, dead_address) = refusing_address();
    let app = spawn_configured(Backend::Sqlite, CatalogSetup::Small, |config, _| {
        config.metrics_bind = Some("127.0.0.1:0".parse().unwrap());
        config.forge = mirante::adapters::forge::ForgeKind::Github;
        config.monorepo = Some("infra/devops".into());
        config.forge_url = Some(format!("http://{dead_address}"));
        config.forge_token = Some(secrecy::SecretString::from("token".to_owned()));
    })
    .await;
    let metrics = app.metrics_address.clone().unwrap();
    crate::requests::seed_request_at(
        &app,
        "notes/waiting",
        vec![FileChange {
            path: "notes/waiting/a.yaml".into(),
            content: "a: 1\n".into(),
        }],
        // Queued an hour ago.
        Utc::now() - chrono::Duration::hours(1),
    )
    .await;

    let text = scrape(&metrics).await;

    let age = sample(&text, "mirante_worker_oldest_job_age_seconds", &[]);
    assert!((3600.0..3700.0).contains(&age), "{age}: {text}");
    let max = sample(&text, "mirante_db_connections", &[("state", "max")]);
    assert!(max >= 1.0, "{text}");
    assert!(
        text.contains("mirante_db_connections{state=\"in_use\"}"),
        "{text}"
    );
    assert!(
        text.contains("mirante_probe_checks{result=\"failing\"}"),
        "{text}"
    );
}

#[tokio::test]
async fn notification_deliveries_are_counted_by_channel_and_outcome_and_the_pending_ones_shown() {
    // A mail server nothing answers at: the message stays pending, retried.
    let (_dead, dead_address) = refusing_address();
    let smtp = format!("smtp://{dead_address}");
    let app = spawn_configured(Backend::Sqlite, CatalogSetup::Embedded, move |config, _| {
        config.metrics_bind = Some("127.0.0.1:0".parse().unwrap());
        config.smtp_url = Some(secrecy::SecretString::from(smtp));
        config.mail_from = Some("portal@mirante.test".into());
        config.worker_retry_secs = 1;
        config.worker_retry_max_secs = 1;
    })
    .await;
    let metrics = app.metrics_address.clone().unwrap();
    let retry = [("channel", "email"), ("outcome", "retry")];
    let before = sample(
        &scrape(&metrics).await,
        "mirante_notifications_total",
        &retry,
    );
    let admins = ["portal-admins".to_owned()];
    app.db
        .upsert_user(&mirante::adapters::db::NewUser {
            issuer: "dev",
            subject: "ada",
            username: "ada",
            name: "Ada Admin",
            email: Some("ada@example.org"),
            groups: &admins,
            at: Utc::now(),
        })
        .await
        .unwrap();
    let rui = crate::helpers::seed_token(&app.db, "rui", &[]).await;
    let waiting = app
        .with_token(&rui)
        .post(format!("{}/api/v1/requests", app.address))
        .json(&serde_json::json!({
            "template": "gpu-workspace",
            "values": {"name": "nlp", "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(
        waiting.status().as_u16(),
        201,
        "{}",
        waiting.text().await.unwrap()
    );

    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = scrape(&metrics).await;
        let retried = sample(&text, "mirante_notifications_total", &retry);
        let pending = sample(&text, "mirante_notifications_pending", &[]);
        if retried > before && pending >= 1.0 {
            break;
        }
        assert!(Instant::now() < deadline, "{text}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
