//! What every response carries.

use crate::helpers::*;

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
