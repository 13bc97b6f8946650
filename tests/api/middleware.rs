//! What every response carries.

use std::time::Duration;

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::helpers::*;

/// Reads what the server has sent so far (at least one byte).
async fn read_some(stream: &mut TcpStream) -> String {
    let mut buf = vec![0u8; 4096];
    let n = stream.read(&mut buf).await.unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Whether the server closes `stream` within `limit` (whatever it sends first).
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 1024];
    tokio::time::timeout(limit, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

on_both_databases! {
    async fn responses_carry_security_headers_and_a_request_id(backend: Backend) {
        let app = spawn_app(backend).await;

        let response = app.get("/api/v1/sites").await;

        let headers = response.headers();
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert_eq!(headers["referrer-policy"], "strict-origin-when-cross-origin");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("'wasm-unsafe-eval'"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(!headers["x-request-id"].is_empty());
    }

    async fn a_page_runs_only_the_inline_scripts_that_carry_its_nonce(backend: Backend) {
        let app = spawn_app(backend).await;
        let researcher = app.dev_browser("rui").await;

        let page = researcher.get(format!("{}/catalog", app.address)).send().await.unwrap();
        let page_csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
        let html = page.text().await.unwrap();
        let api = researcher.get(format!("{}/api/v1/sites", app.address)).send().await.unwrap();
        let api_csp = api.headers()["content-security-policy"].to_str().unwrap().to_owned();
        let again = researcher.get(format!("{}/catalog", app.address)).send().await.unwrap();
        let again_csp = again.headers()["content-security-policy"].to_str().unwrap().to_owned();

        let script_src = |csp: &str| {
            csp.split(';').map(str::trim).find(|d| d.starts_with("script-src")).unwrap().to_owned()
        };
        let nonce = script_src(&page_csp)
            .split_whitespace()
            .find_map(|s| s.strip_prefix("'nonce-")?.strip_suffix('\''))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no nonce in {page_csp}"));
        let scripts: Vec<&str> = html.match_indices("<script").map(|(i, _)| &html[i..i + html[i..].find('>').unwrap()]).collect();
        assert!(!scripts.is_empty(), "the page hydrates from inline scripts");
        for script in &scripts {
            assert!(script.contains(&format!("nonce=\"{nonce}\"")), "{script}");
        }
        for csp in [&page_csp, &api_csp] {
            assert!(!script_src(csp).contains("unsafe-inline"), "{csp}");
            assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
            assert!(csp.contains("object-src 'none'"), "{csp}");
        }
        assert!(!api_csp.contains("nonce-"), "{api_csp}");
        assert_ne!(script_src(&page_csp), script_src(&again_csp), "a fresh nonce per page");
    }

    async fn what_a_signed_in_person_is_shown_is_never_stored(backend: Backend) {
        let app = spawn_app(backend).await;
        let researcher = app.dev_browser("rui").await;

        let store = |path: &'static str, client: reqwest::Client| {
            let url = format!("{}{path}", app.address);
            async move {
                let response = client.get(url).send().await.unwrap();
                response.headers().get("cache-control").map(|v| v.to_str().unwrap().to_owned())
            }
        };

        assert_eq!(store("/catalog", researcher.clone()).await.as_deref(), Some("no-store"));
        assert_eq!(store("/api/v1/requests", researcher.clone()).await.as_deref(), Some("no-store"));
        assert_eq!(store("/api/v1/items/vault", researcher.clone()).await.as_deref(), Some("no-store"));
        assert_eq!(store("/healthz", researcher.clone()).await, None, "public routes keep their own");
        assert_ne!(store("/pkg/mirante.css", researcher).await.as_deref(), Some("no-store"));
    }

    async fn an_https_portal_tells_browsers_to_keep_to_https(backend: Backend) {
        let plain = spawn_app(backend).await;
        let https = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.public_url = Some("https://portal.example".to_owned());
        })
        .await;

        let over_https = https.get("/healthz").await;
        let over_http = plain.get("/healthz").await;

        assert_eq!(over_https.headers()["strict-transport-security"], "max-age=63072000");
        assert!(over_http.headers().get("strict-transport-security").is_none());
    }

    async fn a_connection_that_never_finishes_its_request_head_or_idles_is_closed(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.header_read_timeout_secs = 1;
        })
        .await;
        let host = app.address.trim_start_matches("http://").to_owned();

        let mut slow = TcpStream::connect(&host).await.unwrap();
        slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a").await.unwrap();
        let mut silent = TcpStream::connect(&host).await.unwrap();
        let mut idle = TcpStream::connect(&host).await.unwrap();
        idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
        let first = read_some(&mut idle).await;

        assert!(first.starts_with("HTTP/1.1 200"), "{first}");
        assert!(closed_within(&mut slow, Duration::from_secs(5)).await, "slow headers are cut off");
        assert!(closed_within(&mut silent, Duration::from_secs(5)).await, "a connection that says nothing is closed");
        assert!(closed_within(&mut idle, Duration::from_secs(5)).await, "an idle keep-alive is closed");
        assert_eq!(app.get("/healthz").await.status().as_u16(), 200, "and the server serves on");
    }

    async fn connections_beyond_the_cap_wait_until_one_closes(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.max_connections = 2;
        })
        .await;
        let host = app.address.trim_start_matches("http://").to_owned();
        let request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut c = TcpStream::connect(&host).await.unwrap();
            c.write_all(request).await.unwrap();
            assert!(read_some(&mut c).await.starts_with("HTTP/1.1 200"));
            held.push(c);
        }

        let mut third = TcpStream::connect(&host).await.unwrap();
        third.write_all(request).await.unwrap();
        let mut buf = [0u8; 64];
        let waited = tokio::time::timeout(Duration::from_millis(700), third.read(&mut buf)).await;
        drop(held.remove(0));
        let answer = tokio::time::timeout(Duration::from_secs(5), read_some(&mut third)).await;

        assert!(waited.is_err(), "the third connection waits while two are open");
        assert!(answer.expect("served once one closed").starts_with("HTTP/1.1 200"));
    }

    async fn a_request_id_sent_by_the_client_is_kept(backend: Backend) {
        let app = spawn_app(backend).await;

        let response = app
            .client
            .get(format!("{}/healthz", app.address))
            .header("x-request-id", "trace-me-42")
            .send()
            .await
            .unwrap();

        assert_eq!(response.headers()["x-request-id"], "trace-me-42");
    }

    async fn responses_are_gzip_compressed_when_the_client_accepts_it(backend: Backend) {
        let app = spawn_app(backend).await;

        let response = app
            .client
            .get(format!("{}/api/v1/items", app.address))
            .header("accept-encoding", "gzip")
            .send()
            .await
            .unwrap();

        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(response.headers()["content-encoding"], "gzip");
    }

    async fn responses_under_a_kilobyte_are_sent_uncompressed(backend: Backend) {
        let app = spawn_app(backend).await;

        let response = app
            .client
            .get(format!("{}/healthz", app.address))
            .header("accept-encoding", "gzip")
            .send()
            .await
            .unwrap();

        assert_eq!(response.status().as_u16(), 200);
        assert!(response.headers().get("content-encoding").is_none());
        assert_eq!(response.text().await.unwrap(), "ok");
    }
}
