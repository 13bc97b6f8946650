//! Rate limits: sign-in attempts, API requests with tokens and webhook deliveries each have a
//! budget per client address; beyond it the portal answers 429 with `Retry-After` and does
//! nothing else for the request.

use reqwest::{Response, StatusCode};
use serde_json::Value;

use crate::helpers::*;

/// `POST /auth/dev` as `ada` from a page of the portal, with extra headers.
async fn dev_sign_in(app: &TestApp, forwarded_for: Option<&str>) -> Response {
    let mut request = app
        .anonymous
        .post(format!("{}/auth/dev", app.address))
        .header(reqwest::header::ORIGIN, &app.address)
        .form(&[("user", "ada"), ("next", "/")]);
    if let Some(xff) = forwarded_for {
        request = request.header("x-forwarded-for", xff);
    }
    request.send().await.unwrap()
}

/// The `Retry-After` of a 429, in seconds.
fn retry_after(response: &Response) -> u64 {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .expect("a 429 says when to retry")
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After in whole seconds")
}

on_both_databases! {
    async fn sign_in_attempts_beyond_the_budget_answer_429_with_retry_after_and_no_session(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.sign_in_per_minute = 3;
        })
        .await;

        for _ in 0..3 {
            assert_eq!(dev_sign_in(&app, None).await.status(), StatusCode::SEE_OTHER);
        }
        let refused = dev_sign_in(&app, None).await;

        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        // Three a minute: the next attempt is free within 20 s.
        let wait = retry_after(&refused);
        assert!((1..=20).contains(&wait), "Retry-After: {wait}");
        assert!(refused.headers().get(reqwest::header::SET_COOKIE).is_none(), "no session for a refused attempt");
        let page = refused.text().await.unwrap();
        assert!(page.contains("Too many attempts"), "{page}");

        // The OpenID start shares the budget, and an X-Forwarded-For from a client that is not a
        // trusted proxy buys no fresh one.
        let login = app.anonymous.get(format!("{}/auth/login", app.address)).send().await.unwrap();
        assert_eq!(login.status(), StatusCode::TOO_MANY_REQUESTS);
        let spoofed = dev_sign_in(&app, Some("203.0.113.77")).await;
        assert_eq!(spoofed.status(), StatusCode::TOO_MANY_REQUESTS);

        // Pages that are not sign-in are not limited by it.
        let health = app.anonymous.get(format!("{}/healthz", app.address)).send().await.unwrap();
        assert_eq!(health.status(), StatusCode::OK);
    }

    async fn behind_a_trusted_proxy_each_forwarded_client_has_a_budget_of_its_own(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.sign_in_per_minute = 2;
            config.trusted_proxies = "127.0.0.0/8".into();
        })
        .await;

        for _ in 0..2 {
            let ok = dev_sign_in(&app, Some("203.0.113.5")).await;
            assert_eq!(ok.status(), StatusCode::SEE_OTHER);
        }
        let spent = dev_sign_in(&app, Some("203.0.113.5")).await;
        assert_eq!(spent.status(), StatusCode::TOO_MANY_REQUESTS);

        // The proxy appends the address it saw: what the client wrote further left is not
        // believed, so prepending another address does not help.
        let prepended = dev_sign_in(&app, Some("198.51.100.1, 203.0.113.5")).await;
        assert_eq!(prepended.status(), StatusCode::TOO_MANY_REQUESTS);

        let other = dev_sign_in(&app, Some("203.0.113.6")).await;
        assert_eq!(other.status(), StatusCode::SEE_OTHER, "another client behind the proxy");
    }

    async fn api_requests_with_tokens_beyond_the_budget_answer_429_in_json(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.token_checks_per_minute = 5;
        })
        .await;
        let forger = app.with_token("mrt_not-a-token-at-all");

        for _ in 0..5 {
            let bad = forger.get(format!("{}/api/v1/items", app.address)).send().await.unwrap();
            assert_eq!(bad.status(), StatusCode::UNAUTHORIZED);
        }
        let refused = forger.get(format!("{}/api/v1/items", app.address)).send().await.unwrap();

        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        // Five a minute: the next one is free within 12 s.
        let wait = retry_after(&refused);
        assert!((1..=12).contains(&wait), "Retry-After: {wait}");
        let body: Value = refused.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().starts_with("too many requests"), "{body}");

        // The budget is the address's, whatever token it sends: a good one waits too.
        let good = app.get("/api/v1/items").await;
        assert_eq!(good.status(), StatusCode::TOO_MANY_REQUESTS);

        // A browser's session carries no token and is not counted.
        let cookie = app.dev_cookie("rui").await;
        for _ in 0..3 {
            let by_session = app
                .anonymous
                .get(format!("{}/api/v1/items", app.address))
                .header(reqwest::header::COOKIE, &cookie)
                .send()
                .await
                .unwrap();
            assert_eq!(by_session.status(), StatusCode::OK);
        }
    }

    async fn webhook_deliveries_beyond_the_budget_answer_429_and_write_nothing(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.webhook_secret = Some(secrecy::SecretString::from("hook-secret"));
            config.webhooks_per_minute = 3;
        })
        .await;

        let mut statuses = Vec::new();
        for _ in 0..6 {
            let forged = app.forged_webhook().await;
            if forged.status() == StatusCode::TOO_MANY_REQUESTS {
                assert!(retry_after(&forged) >= 1);
            }
            statuses.push(forged.status().as_u16());
        }

        assert_eq!(statuses, [401, 401, 401, 429, 429, 429]);
        let audit = app.db.list_audit(100).await.unwrap();
        let refused = audit.iter().filter(|e| e.action == "forge.webhook_refused").count();
        assert_eq!(refused, 1, "the refused deliveries wrote no rows of their own");
    }
}
