//! `/healthz` and `/readyz`.

use crate::helpers::*;

on_both_databases! {
    async fn health_check_answers_ok(backend: Backend) {
        let app = spawn_app(backend).await;

        let response = app.get("/healthz").await;

        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(response.text().await.unwrap(), "ok");
    }

    async fn readiness_is_200_when_the_database_answers_and_a_catalog_is_loaded(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/readyz", 200).await;

        assert_eq!(body["status"], "ready");
        let expected = match backend {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        };
        assert_eq!(body["database"], expected);
        assert_eq!(body["catalog_hash"].as_str().unwrap().len(), 64);
    }

    async fn readiness_is_503_with_a_json_error_when_the_database_is_gone(backend: Backend) {
        let app = spawn_app(backend).await;
        app.db.close().await;

        let body = app.get_json("/readyz", 503).await;

        assert_eq!(body["error"], "database unreachable");
        assert!(body["details"].as_array().unwrap().is_empty());
    }
}
