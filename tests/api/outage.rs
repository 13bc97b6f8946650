//! A database that goes away: the portal on PostgreSQL through a TCP proxy the test cuts.
//! Signed-in people are told the portal is degraded (503 with `Retry-After`), never asked to
//! sign in again as if they were nobody; writes answer 503, not 500; once the database is
//! back the same session goes on, and nothing was lost.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use secrecy::{ExposeSecret, SecretString};
use tokio::{
    net::{TcpListener, TcpStream},
    sync::watch,
};

use crate::helpers::*;

/// A TCP proxy to PostgreSQL that the test can cut (every connection closed, new ones closed
/// at once, or held open with no answer: a partition) and mend.
struct Proxy {
    addr: SocketAddr,
    up: Arc<AtomicBool>,
    silent: Arc<AtomicBool>,
    cut: watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let up = Arc::new(AtomicBool::new(true));
        let silent = Arc::new(AtomicBool::new(false));
        let (cut, _) = watch::channel(0u64);
        let (task_up, task_silent, task_cut) = (Arc::clone(&up), Arc::clone(&silent), cut.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    continue;
                };
                if !task_up.load(Ordering::SeqCst) {
                    if task_silent.load(Ordering::SeqCst) {
                        // Held, never answered, for longer than the test.
                        tokio::spawn(async move {
                            tokio::time::sleep(std::time::Duration::from_secs(120)).await;
                            drop(client);
                        });
                    } else {
                        drop(client);
                    }
                    continue;
                }
                let mut cuts = task_cut.subscribe();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cuts.changed() => {}
                    }
                });
            }
        });
        Proxy {
            addr,
            up,
            silent,
            cut,
            task,
        }
    }

    /// Like a network partition: connections are accepted and never answered.
    fn silence(&self) {
        self.silent.store(true, Ordering::SeqCst);
        self.cut();
    }

    fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.cut.send_modify(|n| *n += 1);
    }

    fn mend(&self) {
        self.silent.store(false, Ordering::SeqCst);
        self.up.store(true, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The portal on a PostgreSQL database of its own, reached through a proxy.
async fn behind_a_proxy() -> (Proxy, TestApp) {
    let upstream: SocketAddr = "127.0.0.1:5432".parse().unwrap();
    let proxy = Proxy::start(upstream).await;
    let proxy_addr = proxy.addr;
    let app = spawn_configured(Backend::Postgres, CatalogSetup::Small, move |config, _| {
        let url = config.database_url.as_ref().unwrap().expose_secret();
        let through_proxy = url.replace("127.0.0.1:5432", &proxy_addr.to_string());
        assert_ne!(
            &through_proxy, url,
            "the test database is on 127.0.0.1:5432"
        );
        config.database_url = Some(SecretString::from(through_proxy));
    })
    .await;
    (proxy, app)
}

/// `GET path` with `client` until it answers 200, for at most 10 s (a failure to reach the
/// database is believed for a moment after it is back); the body.
async fn once_back(app: &TestApp, client: &reqwest::Client, path: &str) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let response = client
            .get(format!("{}{path}", app.address))
            .send()
            .await
            .unwrap();
        if response.status() == 200 {
            return response.json().await.unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still {} after the database came back",
            response.status()
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn while_the_database_is_away_a_signed_in_person_is_told_the_portal_is_degraded_not_signed_out()
 {
    let (proxy, app) = behind_a_proxy().await;
    let rui = app.dev_browser("rui").await;
    let before = app.get_json_as(&rui, "/api/v1/requests", 200).await;
    // An API token's owner is kept in memory for a while: the call gets past sign-in and
    // meets the database in the handler.
    app.get_json_as(&app.client, "/api/v1/requests", 200).await;

    proxy.cut();
    let api = rui
        .get(format!("{}/api/v1/requests", app.address))
        .send()
        .await
        .unwrap();
    let (api_status, api_retry) = (
        api.status().as_u16(),
        api.headers().get("retry-after").cloned(),
    );
    let api_body: serde_json::Value = api.json().await.unwrap();
    let page = rui
        .get(format!("{}/catalog", app.address))
        .header("accept-language", "en")
        .send()
        .await
        .unwrap();
    let (page_status, page_location) = (
        page.status().as_u16(),
        page.headers().get("location").cloned(),
    );
    let page_text = page.text().await.unwrap();
    let with_token = app
        .client
        .get(format!("{}/api/v1/requests", app.address))
        .send()
        .await
        .unwrap();
    let token_status = with_token.status().as_u16();
    let token_body: serde_json::Value = with_token.json().await.unwrap();
    // A public route needs nobody's identity: it is served, cookie or not (the stylesheet of
    // the degraded page is such a route).
    let public = rui
        .get(format!("{}/healthz", app.address))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    proxy.mend();
    let after = once_back(&app, &rui, "/api/v1/requests").await;

    assert_eq!(api_status, 503, "{api_body}");
    assert_eq!(api_retry.as_ref().and_then(|v| v.to_str().ok()), Some("5"));
    assert!(
        api_body["error"].as_str().unwrap().contains("database"),
        "{api_body}"
    );
    assert_eq!(page_status, 503, "{page_text}");
    assert_eq!(page_location, None, "not sent to the sign-in page");
    assert!(page_text.contains("The portal is degraded"), "{page_text}");
    assert_eq!(token_status, 503, "{token_body}");
    assert!(
        token_body["error"].as_str().unwrap().contains("database"),
        "{token_body}"
    );
    assert_eq!(public, 200);
    assert_eq!(
        after, before,
        "the same session goes on once the database is back"
    );
}

#[tokio::test]
async fn once_the_database_is_known_to_be_away_pages_answer_at_once_instead_of_waiting_each_time() {
    let (proxy, app) = behind_a_proxy().await;
    let rui = app.dev_browser("rui").await;
    app.get_json_as(&rui, "/api/v1/requests", 200).await;
    let page = || {
        rui.get(format!("{}/catalog", app.address))
            .header("accept-language", "en")
            .send()
    };

    proxy.silence();
    let first_started = std::time::Instant::now();
    let first = page().await.unwrap().status().as_u16();
    let first_took = first_started.elapsed();
    let second_started = std::time::Instant::now();
    let second = page().await.unwrap().status().as_u16();
    let second_took = second_started.elapsed();
    proxy.mend();
    let back = once_back(&app, &rui, "/api/v1/requests").await;

    assert_eq!((first, second), (503, 503));
    assert!(
        first_took >= std::time::Duration::from_secs(1),
        "the first waited for the pool: {first_took:?}"
    );
    assert!(
        second_took < first_took / 2,
        "the second did not wait again: {second_took:?} after {first_took:?}"
    );
    assert!(back["requests"].is_array(), "{back}");
}

#[tokio::test]
async fn once_an_api_call_found_the_database_away_the_next_calls_answer_at_once_too() {
    let (proxy, app) = behind_a_proxy().await;
    // A token's owner is kept in memory: no session is read, the handler meets the database.
    app.get_json_as(&app.client, "/api/v1/requests", 200).await;
    let call = || async {
        let started = std::time::Instant::now();
        let status = app
            .client
            .get(format!("{}/api/v1/requests", app.address))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        (status, started.elapsed())
    };

    proxy.silence();
    let (first, first_took) = call().await;
    let (second, second_took) = call().await;
    proxy.mend();
    let back = once_back(&app, &app.client, "/api/v1/requests").await;

    assert_eq!((first, second), (503, 503));
    assert!(
        first_took >= std::time::Duration::from_secs(1),
        "the first waited for the pool: {first_took:?}"
    );
    assert!(
        second_took < first_took / 2,
        "the second did not wait again: {second_took:?} after {first_took:?}"
    );
    assert!(back["requests"].is_array(), "{back}");
}
