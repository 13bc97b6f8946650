//! Sign-in against a real OpenID provider (tests/oidc: oidc-provider shaped like Authentik),
//! the development sign-in, sessions, CSRF, API tokens and the route-by-route policy.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
};

use mirante::http::auth::policy::{self, Access};
use reqwest::{Client, Response, StatusCode, Url};
use secrecy::SecretString;
use serde_json::Value;

use crate::helpers::*;

const CLIENT_ID: &str = "mirante";
const CLIENT_SECRET: &str = "test-client-secret-long-enough-for-hs256-0123456789abcdef";

/// The test OpenID provider, stopped when dropped.
pub struct Provider {
    child: Child,
    /// `http://127.0.0.1:PORT/application/o/mirante/`.
    pub issuer: String,
    events: String,
}

impl Provider {
    /// Starts `tests/oidc/provider.mjs` for a portal on `port`, with extra arguments, and
    /// waits for its readiness line. A provider that is not ready within 30 s is killed and
    /// started again (seen once: node stuck before printing the line), at most three times.
    pub fn start(port: u16, extra: &[&str]) -> Provider {
        for _ in 0..3 {
            if let Some(provider) = Self::try_start(port, extra) {
                return provider;
            }
            eprintln!("the test OpenID provider was not ready in 30 s; starting it again");
        }
        panic!("the test OpenID provider did not start");
    }

    fn try_start(port: u16, extra: &[&str]) -> Option<Provider> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/oidc/provider.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .args(["--port", "0", "--client-id", CLIENT_ID])
            .args(["--client-secret", CLIENT_SECRET])
            .args([
                "--redirect-uri",
                &format!("http://127.0.0.1:{port}/auth/callback"),
            ])
            .args([
                "--post-logout-redirect-uri",
                &format!("http://127.0.0.1:{port}/"),
            ])
            .arg("--exit-with-stdin")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cannot start node tests/oidc/provider.mjs (run `npm ci` in tests/oidc)");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(30)) else {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        };
        let ready: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("provider did not start ({e}): {line}"));
        Some(Provider {
            child,
            issuer: ready["issuer"].as_str().unwrap().to_owned(),
            events: ready["events"].as_str().unwrap().to_owned(),
        })
    }

    /// The recorded events named `kind`.
    pub async fn events(&self, kind: &str) -> Vec<Value> {
        reqwest::get(format!("{}?event={kind}", self.events))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A portal signing in with a provider started with `extra` arguments.
async fn spawn_with_provider(backend: Backend, extra: &[&str]) -> (TestApp, Provider) {
    spawn_with_provider_and(backend, extra, |_| {}).await
}

async fn spawn_with_provider_and(
    backend: Backend,
    extra: &[&str],
    more: impl FnOnce(&mut mirante::Config),
) -> (TestApp, Provider) {
    let mut provider = None;
    let app = spawn_configured(backend, CatalogSetup::Small, |config, port| {
        let p = Provider::start(port, extra);
        config.oidc_issuer = Some(p.issuer.clone());
        config.oidc_client_id = Some(CLIENT_ID.to_owned());
        config.oidc_client_secret = Some(SecretString::from(CLIENT_SECRET));
        more(config);
        provider = Some(p);
    })
    .await;
    (app, provider.unwrap())
}

/// Where a redirect points, resolved against the request URL.
fn location(response: &Response) -> Url {
    let raw = response
        .headers()
        .get("location")
        .unwrap_or_else(|| panic!("no Location in a {} answer", response.status()))
        .to_str()
        .unwrap();
    response.url().join(raw).unwrap()
}

/// Drives the provider from the portal's `/auth/login?next=...` to the redirect back to the
/// portal's callback; returns the callback URL (not yet visited).
async fn through_provider(
    app: &TestApp,
    browser: &Client,
    next: &str,
    user: &str,
    password: &str,
) -> Url {
    let start = browser
        .get(format!("{}/auth/login?next={next}", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), StatusCode::SEE_OTHER);
    let authorize = location(&start);
    let r = browser.get(authorize).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER, "authorize");
    let interaction = location(&r);
    let r = browser.get(interaction.clone()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "login form");
    let r = browser
        .post(format!("{interaction}/login"))
        .form(&[("username", user), ("password", password)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER, "login");
    let resume = location(&r);
    let r = browser.get(resume).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER, "resume");
    let callback = location(&r);
    assert!(
        callback
            .as_str()
            .starts_with(&format!("{}/auth/callback", app.address)),
        "{callback}"
    );
    callback
}

/// Signs in through the provider; returns the browser and where the portal sent it.
async fn sign_in(app: &TestApp, next: &str, user: &str, password: &str) -> (Client, Url) {
    let browser = app.browser();
    let callback = through_provider(app, &browser, next, user, password).await;
    let r = browser.get(callback).send().await.unwrap();
    assert_eq!(
        r.status(),
        StatusCode::SEE_OTHER,
        "callback: {}",
        r.text().await.unwrap()
    );
    let landed = location(&r);
    (browser, landed)
}

async fn me(app: &TestApp, browser: &Client) -> Response {
    browser
        .get(format!("{}/api/v1/me", app.address))
        .send()
        .await
        .unwrap()
}

/// The session's CSRF token, from the profile page's forms.
async fn csrf_token(app: &TestApp, browser: &Client) -> String {
    let html = browser
        .get(format!("{}/profile", app.address))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    const FIELD: &str = r#"name="csrf_token" value=""#;
    let at = html.find(FIELD).expect("no csrf_token field") + FIELD.len();
    html[at..at + html[at..].find('"').unwrap()].to_owned()
}

async fn actions(app: &TestApp) -> Vec<(String, Value)> {
    app.db
        .list_audit(50)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.action, e.detail))
        .collect()
}

fn failure_reason(audit: &[(String, Value)]) -> String {
    audit
        .iter()
        .find(|(a, _)| a == "auth.sign_in_failed")
        .map(|(_, d)| d["reason"].as_str().unwrap().to_owned())
        .expect("no auth.sign_in_failed entry")
}

on_both_databases! {
    async fn a_provider_down_at_start_up_is_used_once_it_answers(backend: Backend) {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let issuer = format!("http://127.0.0.1:{port}/application/o/mirante/");
        let app = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.oidc_issuer = Some(issuer.clone());
            config.oidc_client_id = Some(CLIENT_ID.to_owned());
            config.oidc_client_secret = Some(SecretString::from(CLIENT_SECRET));
        })
        .await;
        let browser = app.browser();

        let down = browser.get(format!("{}/auth/login", app.address)).send().await.unwrap();
        assert_eq!(down.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(down.text().await.unwrap().contains("cannot be reached"));

        let portal_port: u16 = app.address.rsplit(':').next().unwrap().parse().unwrap();
        let provider = Provider::start(portal_port, &["--port", &port.to_string()]);
        assert_eq!(provider.issuer, issuer);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let r = browser.get(format!("{}/auth/login", app.address)).send().await.unwrap();
            if r.status() == StatusCode::SEE_OTHER {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "sign-in never became available");
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
        let (admin, _) = sign_in(&app, "/", "admin", "admin-pass").await;
        let body: Value = me(&app, &admin).await.json().await.unwrap();
        assert_eq!(body["role"], "admin");
    }

    async fn sign_in_pages_speak_portuguese_to_a_portuguese_browser(backend: Backend) {
        let (app, _provider) = spawn_with_provider(backend, &[]).await;
        let browser = app.browser();

        let r = browser
            .get(format!("{}/auth/callback?code=x&state=y", app.address))
            .header("accept-language", "pt-BR,pt;q=0.9,en;q=0.5")
            .send()
            .await
            .unwrap();

        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        let page = r.text().await.unwrap();
        assert!(page.contains(r#"<html lang="pt-BR">"#), "{page}");
        assert!(page.contains("Falha ao entrar"), "{page}");
    }

    async fn an_admin_and_a_researcher_sign_in_through_the_provider_with_their_roles(backend: Backend) {
        let (app, provider) = spawn_with_provider(backend, &[]).await;

        let (admin, landed) = sign_in(&app, "%2Fcatalog%3Fstate%3Ddesired", "admin", "admin-pass").await;
        let (researcher, _) = sign_in(&app, "/", "researcher", "researcher-pass").await;
        let (visitor, _) = sign_in(&app, "/", "visitor", "visitor-pass").await;

        assert_eq!(landed.path(), "/catalog");
        assert_eq!(landed.query(), Some("state=desired"));
        let admin: Value = me(&app, &admin).await.json().await.unwrap();
        assert_eq!(admin["username"], "admin");
        assert_eq!(admin["name"], "Ana Admin");
        assert_eq!(admin["email"], "ana.admin@example.org");
        assert_eq!(admin["role"], "admin");
        assert_eq!(admin["groups"], serde_json::json!(["portal-admins", "researchers"]));
        let researcher: Value = me(&app, &researcher).await.json().await.unwrap();
        assert_eq!(researcher["role"], "researcher");
        let visitor: Value = me(&app, &visitor).await.json().await.unwrap();
        assert_eq!(visitor["role"], "researcher", "a user in no group is a researcher");
        let authorizations = provider.events("authorization").await;
        assert!(authorizations.iter().all(|e| e["code_challenge_method"] == "S256"));
        let audit = actions(&app).await;
        assert_eq!(audit.iter().filter(|(a, _)| a == "auth.sign_in").count(), 3);
        assert!(audit.iter().any(|(a, d)| a == "auth.sign_in" && d["role"] == "admin" && d["issuer"] == provider.issuer));
    }

    async fn the_session_cookie_is_http_only_same_site_lax_and_gets_a_new_id_at_sign_in(backend: Backend) {
        let (app, _provider) = spawn_with_provider(backend, &[]).await;
        let browser = app.browser();
        let set_cookie = |r: &Response| {
            r.headers()
                .get_all("set-cookie")
                .iter()
                .map(|v| v.to_str().unwrap().to_owned())
                .find(|c| c.starts_with("mirante_session="))
                .expect("no mirante_session cookie")
        };

        let start = browser.get(format!("{}/auth/login", app.address)).send().await.unwrap();
        let before = set_cookie(&start);
        let r = browser.get(location(&start)).send().await.unwrap();
        let interaction = location(&r);
        browser.get(interaction.clone()).send().await.unwrap();
        let r = browser
            .post(format!("{interaction}/login"))
            .form(&[("username", "admin"), ("password", "admin-pass")])
            .send()
            .await
            .unwrap();
        let r = browser.get(location(&r)).send().await.unwrap();
        let signed_in = browser.get(location(&r)).send().await.unwrap();
        let after = set_cookie(&signed_in);

        for cookie in [&before, &after] {
            assert!(cookie.contains("HttpOnly"), "{cookie}");
            assert!(cookie.contains("SameSite=Lax"), "{cookie}");
            assert!(cookie.contains("Path=/"), "{cookie}");
            assert!(!cookie.contains("Secure"), "plain http: {cookie}");
        }
        let id = |c: &str| c.split(';').next().unwrap().to_owned();
        assert_ne!(id(&before), id(&after), "the session id changes at sign-in");
    }

    async fn hs256_id_tokens_signed_with_the_client_secret_are_accepted(backend: Backend) {
        let (app, _provider) = spawn_with_provider(backend, &["--hs256"]).await;

        let (admin, _) = sign_in(&app, "/", "admin", "admin-pass").await;

        let body: Value = me(&app, &admin).await.json().await.unwrap();
        assert_eq!(body["role"], "admin");
    }

    async fn an_external_next_is_ignored(backend: Backend) {
        let (app, _provider) = spawn_with_provider(backend, &[]).await;

        let (_, landed) = sign_in(&app, "https%3A%2F%2Fevil.example%2F", "researcher", "researcher-pass").await;
        let (_, landed2) = sign_in(&app, "%2F%2Fevil.example%2Fx", "researcher", "researcher-pass").await;

        assert_eq!(landed.as_str(), format!("{}/", app.address));
        assert_eq!(landed2.as_str(), format!("{}/", app.address));
    }

    async fn a_tampered_state_is_refused_with_a_page_and_an_audit_entry(backend: Backend) {
        let (app, _provider) = spawn_with_provider(backend, &[]).await;
        let browser = app.browser();
        let mut callback = through_provider(&app, &browser, "/", "admin", "admin-pass").await;
        let pairs: Vec<(String, String)> = callback
            .query_pairs()
            .map(|(k, v)| {
                let v = if k == "state" { format!("{v}x") } else { v.into_owned() };
                (k.into_owned(), v)
            })
            .collect();
        callback.query_pairs_mut().clear().extend_pairs(pairs);

        let r = browser.get(callback).send().await.unwrap();

        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        assert!(r.text().await.unwrap().contains("Sign-in failed: state mismatch"));
        assert_eq!(failure_reason(&actions(&app).await), "state mismatch");
        assert_eq!(me(&app, &browser).await.status(), StatusCode::UNAUTHORIZED);
    }

    async fn a_replayed_code_is_refused(backend: Backend) {
        let (app, provider) = spawn_with_provider(backend, &[]).await;
        let browser = app.browser();
        let callback = through_provider(&app, &browser, "/", "admin", "admin-pass").await;
        assert_eq!(browser.get(callback.clone()).send().await.unwrap().status(), StatusCode::SEE_OTHER);

        // The same callback again: the attempt is used up.
        let again = browser.get(callback.clone()).send().await.unwrap();
        assert_eq!(again.status(), StatusCode::BAD_REQUEST);
        assert!(failure_reason(&actions(&app).await).contains("no sign-in in progress"));

        // The old code with the state of a new attempt: the provider refuses the code.
        let other = app.browser();
        let start = other
            .get(format!("{}/auth/login", app.address))
            .send()
            .await
            .unwrap();
        let state = location(&start)
            .query_pairs()
            .find(|(k, _)| k == "state")
            .unwrap()
            .1
            .into_owned();
        let code = callback.query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
        let replay = other
            .get(format!("{}/auth/callback", app.address))
            .query(&[("code", code.as_str()), ("state", state.as_str())])
            .send()
            .await
            .unwrap();

        assert_eq!(replay.status(), StatusCode::BAD_REQUEST);
        assert!(replay.text().await.unwrap().contains("invalid_grant"));
        assert!(failure_reason(&actions(&app).await).contains("invalid_grant"));
        let tokens = provider.events("token").await;
        assert!(tokens.iter().any(|e| e["ok"] == false && e["error"] == "invalid_grant"));
        assert_eq!(me(&app, &other).await.status(), StatusCode::UNAUTHORIZED);
    }

    async fn an_id_token_for_another_audience_is_refused(backend: Backend) {
        let (app, _provider) = spawn_with_provider(backend, &["--id-token-aud", "someone-else"]).await;
        let browser = app.browser();
        let callback = through_provider(&app, &browser, "/", "admin", "admin-pass").await;

        let r = browser.get(callback).send().await.unwrap();

        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        let page = r.text().await.unwrap();
        assert!(page.contains("ID token was rejected"), "{page}");
        assert!(failure_reason(&actions(&app).await).contains("ID token was rejected"));
        assert_eq!(me(&app, &browser).await.status(), StatusCode::UNAUTHORIZED);
    }

    async fn an_expired_session_is_refused_with_a_page_and_an_audit_entry(backend: Backend) {
        let (app, _provider) = spawn_with_provider_and(backend, &[], |c| c.session_max_secs = 1).await;
        let (browser, _) = sign_in(&app, "/", "researcher", "researcher-pass").await;
        assert_eq!(me(&app, &browser).await.status(), StatusCode::OK);

        tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
        let r = browser.get(format!("{}/catalog", app.address)).send().await.unwrap();

        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert!(r.text().await.unwrap().contains("Session expired"));
        assert!(actions(&app).await.iter().any(|(a, _)| a == "auth.session_expired"));
        assert_eq!(me(&app, &browser).await.status(), StatusCode::UNAUTHORIZED);
    }

    async fn a_session_ends_after_the_idle_timeout_and_activity_pushes_it_back(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Small, |c, _| c.session_idle_secs = 4).await;
        let browser = app.dev_browser("rui").await;

        for _ in 0..2 {
            tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
            assert_eq!(me(&app, &browser).await.status(), StatusCode::OK, "active: still signed in");
        }
        tokio::time::sleep(std::time::Duration::from_millis(4500)).await;

        assert_eq!(me(&app, &browser).await.status(), StatusCode::UNAUTHORIZED, "idle: signed out");
    }

    async fn sign_out_ends_the_session_and_reaches_the_providers_end_session(backend: Backend) {
        let (app, provider) = spawn_with_provider(backend, &[]).await;
        let (browser, _) = sign_in(&app, "/", "admin", "admin-pass").await;
        let token = csrf_token(&app, &browser).await;

        let r = browser
            .post(format!("{}/auth/logout", app.address))
            .form(&[("csrf_token", token.as_str())])
            .send()
            .await
            .unwrap();

        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        let end_session = location(&r);
        assert!(end_session.as_str().starts_with(&format!("{}end-session/", provider.issuer)), "{end_session}");
        assert_eq!(me(&app, &browser).await.status(), StatusCode::UNAUTHORIZED);
        let r = browser.get(end_session).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let events = provider.events("end_session").await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["ok"], true);
        assert_eq!(events[0]["id_token_hint"], true);
        assert_eq!(events[0]["post_logout_redirect_uri"], format!("{}/", app.address));
        assert!(actions(&app).await.iter().any(|(a, _)| a == "auth.sign_out"));
    }

    async fn the_development_sign_in_offers_an_admin_and_a_researcher(backend: Backend) {
        let app = spawn_app(backend).await;

        let page = app.anonymous.get(format!("{}/auth/login", app.address)).send().await.unwrap();
        let page = page.text().await.unwrap();
        let admin = app.dev_browser("ada").await;
        let researcher = app.dev_browser("rui").await;

        assert!(page.contains("Development sign-in"), "{page}");
        let admin: Value = me(&app, &admin).await.json().await.unwrap();
        assert_eq!(admin["role"], "admin");
        let researcher: Value = me(&app, &researcher).await.json().await.unwrap();
        assert_eq!(researcher["role"], "researcher");
    }

    async fn pages_and_the_api_need_a_session(backend: Backend) {
        let app = spawn_app(backend).await;

        let page = app.anonymous.get(format!("{}/catalog?state=desired", app.address)).send().await.unwrap();
        let api = app.anonymous.get(format!("{}/api/v1/items", app.address)).send().await.unwrap();
        let health = app.anonymous.get(format!("{}/healthz", app.address)).send().await.unwrap();

        assert_eq!(page.status(), StatusCode::SEE_OTHER);
        assert_eq!(page.headers()["location"], "/auth/login?next=%2Fcatalog%3Fstate%3Ddesired");
        assert_eq!(api.status(), StatusCode::UNAUTHORIZED);
        let body: Value = api.json().await.unwrap();
        assert_eq!(body["error"], "sign-in required");
        assert_eq!(health.status(), StatusCode::OK);
    }

    async fn a_public_catalog_is_readable_without_a_session_but_reload_is_not(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Small, |c, _| c.public_catalog = true).await;

        let api = app.anonymous.get(format!("{}/api/v1/items", app.address)).send().await.unwrap();
        let page = app.anonymous.get(format!("{}/catalog", app.address)).send().await.unwrap();
        let reload = app.anonymous.post(format!("{}/api/v1/catalog/reload", app.address)).send().await.unwrap();
        let me = app.anonymous.get(format!("{}/api/v1/me", app.address)).send().await.unwrap();

        assert_eq!(api.status(), StatusCode::OK);
        assert_eq!(page.status(), StatusCode::OK);
        assert_eq!(reload.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(me.status(), StatusCode::UNAUTHORIZED);
    }

    async fn a_post_without_the_csrf_token_or_from_another_origin_is_refused(backend: Backend) {
        let app = spawn_app(backend).await;
        let browser = app.dev_browser("ada").await;
        let token = csrf_token(&app, &browser).await;

        let no_token = browser.post(format!("{}/auth/logout", app.address)).form(&[("x", "y")]).send().await.unwrap();
        let foreign = browser
            .post(format!("{}/auth/logout", app.address))
            .header("origin", "https://evil.example")
            .form(&[("csrf_token", token.as_str())])
            .send()
            .await
            .unwrap();
        let foreign_fn = browser
            .post(format!("{}/_fn/overview", app.address))
            .header("origin", "https://evil.example")
            .send()
            .await
            .unwrap();
        let foreign_api = browser
            .post(format!("{}/api/v1/catalog/reload", app.address))
            .header("origin", "https://evil.example")
            .send()
            .await
            .unwrap();

        assert_eq!(no_token.status(), StatusCode::FORBIDDEN);
        assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
        assert_eq!(foreign_fn.status(), StatusCode::FORBIDDEN);
        assert_eq!(foreign_api.status(), StatusCode::FORBIDDEN);
        assert_eq!(me(&app, &browser).await.status(), StatusCode::OK, "still signed in");
        let ok = browser
            .post(format!("{}/auth/logout", app.address))
            .form(&[("csrf_token", token.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(ok.status(), StatusCode::SEE_OTHER);
        assert_eq!(ok.headers()["location"], "/auth/login");
        assert_eq!(me(&app, &browser).await.status(), StatusCode::UNAUTHORIZED);
    }

    async fn an_api_token_is_shown_once_works_and_stops_working_when_revoked(backend: Backend) {
        let app = spawn_app(backend).await;
        let browser = app.dev_browser("rui").await;
        let csrf = csrf_token(&app, &browser).await;

        let page = browser
            .post(format!("{}/profile/tokens", app.address))
            .form(&[("csrf_token", csrf.as_str()), ("name", "ci")])
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), StatusCode::OK);
        let page = page.text().await.unwrap();
        let at = page.find("mrt_").expect("the token is shown");
        let token = page[at..at + page[at..].find('<').unwrap()].to_owned();
        let again = browser.get(format!("{}/profile", app.address)).send().await.unwrap().text().await.unwrap();
        assert!(!again.contains(&token), "shown once");
        let with_token = |t: &str| {
            app.anonymous
                .get(format!("{}/api/v1/me", app.address))
                .bearer_auth(t.to_owned())
                .send()
        };
        let used = with_token(&token).await.unwrap();
        assert_eq!(used.status(), StatusCode::OK);
        let body: Value = used.json().await.unwrap();
        assert_eq!(body["username"], "rui");
        let items = app.anonymous.get(format!("{}/api/v1/items", app.address)).bearer_auth(&token).send().await.unwrap();
        assert_eq!(items.status(), StatusCode::OK);

        let at = again.find("/profile/tokens/").unwrap();
        let revoke_path = &again[at..at + again[at..].find('"').unwrap()];
        let revoked = browser
            .post(format!("{}{revoke_path}", app.address))
            .form(&[("csrf_token", csrf.as_str())])
            .send()
            .await
            .unwrap();

        assert_eq!(revoked.status(), StatusCode::SEE_OTHER);
        assert_eq!(with_token(&token).await.unwrap().status(), StatusCode::UNAUTHORIZED);
        let audit = actions(&app).await;
        assert!(audit.iter().any(|(a, d)| a == "auth.token_created" && d["name"] == "ci"));
        assert!(audit.iter().any(|(a, _)| a == "auth.token_revoked"));
        let stored = app.db.list_audit(50).await.unwrap();
        assert!(stored.iter().all(|e| !e.detail.to_string().contains(&token)), "the token is not logged");
    }

    async fn the_new_token_form_sent_twice_makes_one_token_and_says_so(backend: Backend) {
        let app = spawn_app(backend).await;
        let browser = app.dev_browser("rui").await;
        let csrf = csrf_token(&app, &browser).await;
        let profile = browser.get(format!("{}/profile", app.address)).send().await.unwrap().text().await.unwrap();
        let at = profile.find("name=\"request_key\" value=\"").expect("the form carries a key") + 26;
        let key = profile[at..at + profile[at..].find('"').unwrap()].to_owned();
        let send = || {
            browser
                .post(format!("{}/profile/tokens", app.address))
                .header("accept-language", "en")
                .form(&[("csrf_token", csrf.as_str()), ("name", "ci"), ("request_key", key.as_str())])
                .send()
        };

        let first = send().await.unwrap().text().await.unwrap();
        let second = send().await.unwrap().text().await.unwrap();

        assert!(first.contains("mrt_"), "the first shows the token");
        assert!(!second.contains("mrt_"), "the second makes and shows none");
        assert!(second.contains("This form was sent again"), "{second}");
        let again = browser.get(format!("{}/profile", app.address)).send().await.unwrap().text().await.unwrap();
        assert_eq!(again.matches("/revoke\"").count(), 1, "one token in the list: {again}");
        assert!(!again.contains(&format!("value=\"{key}\"")), "a new form gets a new key");
    }

    async fn a_token_works_until_its_expiry_which_its_owner_picks_within_the_maximum(backend: Backend) {
        let app = spawn_configured(backend, CatalogSetup::Small, |config, _| {
            config.token_max_days = 30;
        })
        .await;
        let browser = app.dev_browser("rui").await;
        let csrf = csrf_token(&app, &browser).await;
        let make = |name: &'static str, days: &'static str| {
            let request = browser
                .post(format!("{}/profile/tokens", app.address))
                .form(&[("csrf_token", csrf.as_str()), ("name", name), ("days", days)]);
            async move { request.send().await.unwrap().text().await.unwrap() }
        };
        let me = |token: String| {
            let request = app.anonymous.get(format!("{}/api/v1/me", app.address)).bearer_auth(token);
            async move { request.send().await.unwrap().status().as_u16() }
        };

        make("week", "7").await;
        make("greedy", "4000").await;
        let profile = browser.get(format!("{}/profile", app.address)).send().await.unwrap().text().await.unwrap();
        let expired = seed_token_until(&app.db, "script", &["researchers"], chrono::Utc::now() - chrono::Duration::seconds(1)).await;
        let current = seed_token_until(&app.db, "script", &["researchers"], chrono::Utc::now() + chrono::Duration::days(1)).await;

        let day = |days: i64| (chrono::Utc::now() + chrono::Duration::days(days)).format("%Y-%m-%d").to_string();
        assert!(profile.contains(&day(7)), "a week's token expires in a week");
        assert!(profile.contains(&day(30)), "a token asked for 4000 days gets the maximum of 30");
        assert!(!profile.contains(&day(4000)));
        assert!(profile.contains(r#"max="30""#), "the form offers no more than the maximum");
        assert_eq!(me(current).await, 200);
        assert_eq!(me(expired).await, 401);
    }

    async fn a_token_used_again_within_a_minute_costs_no_write(backend: Backend) {
        let app = spawn_app(backend).await;
        let token = seed_token(&app.db, "script", &["researchers"]).await;
        let hash = mirante::http::auth::token_hash(&token);
        let use_it = || app.anonymous.get(format!("{}/api/v1/me", app.address)).bearer_auth(&token).send();

        assert_eq!(use_it().await.unwrap().status(), StatusCode::OK);
        let first = app.db.active_api_token(&hash).await.unwrap().unwrap().last_used_at;
        assert_eq!(use_it().await.unwrap().status(), StatusCode::OK);
        let second = app.db.active_api_token(&hash).await.unwrap().unwrap().last_used_at;

        assert!(first.is_some(), "the first use is noted");
        assert_eq!(first, second, "a second use within the minute is not written");
    }

    async fn a_token_keeps_the_role_it_was_checked_with_until_someone_signs_in(backend: Backend) {
        let app = spawn_app(backend).await;
        let token = seed_token(&app.db, "script", &["researchers"]).await;
        let role = || async {
            let me = app.anonymous.get(format!("{}/api/v1/me", app.address)).bearer_auth(&token).send().await.unwrap();
            assert_eq!(me.status(), StatusCode::OK);
            me.json::<Value>().await.unwrap()["role"].as_str().unwrap().to_owned()
        };

        assert_eq!(role().await, "researcher");
        // Made an admin behind the portal's back, as another instance sharing the database would.
        seed_token(&app.db, "script", &["portal-admins"]).await;
        let before_sign_in = role().await;
        app.dev_browser("ada").await;
        let after_sign_in = role().await;

        assert_eq!(before_sign_in, "researcher", "answered from the checked token");
        assert_eq!(after_sign_in, "admin", "a sign-in in this process forgets checked tokens");
    }

    async fn every_route_answers_anonymous_researchers_and_admins_as_the_policy_says(backend: Backend) {
        let app = spawn_app(backend).await;
        let anonymous = app.browser();
        let researcher = app.dev_browser("rui").await;
        let admin = app.dev_browser("ada").await;
        let csrf_r = csrf_token(&app, &researcher).await;
        let csrf_a = csrf_token(&app, &admin).await;
        let researcher_token = seed_token(&app.db, "rui-script", &["researchers"]).await;
        let admin_token = seed_token(&app.db, "ada-script", &["portal-admins"]).await;
        let mut routes = mirante::http::routes::all_routes();
        routes.sort_by(|a, b| (a.1.as_str(), a.0.as_str()).cmp(&(b.1.as_str(), b.0.as_str())));
        routes.dedup();
        let mut wrong = Vec::new();

        for (method, pattern) in &routes {
            let access = policy::lookup(method, pattern)
                .unwrap_or_else(|| panic!("{method} {pattern} has no decision in the policy"));
            let path = pattern
                .replace("/items/{id}", "/items/vault")
                .replace("/layers/{id}", "/layers/l0")
                .replace("/sites/{id}", "/sites/sp")
                .replace("{*path}", "mirante.css")
                .replace("{id}", "1");
            let api = path.starts_with("/api/") || path.starts_with("/_fn/");
            // A token speaks for its owner on the JSON API only: pages and server functions
            // answer a token as they answer nobody.
            let by_token = |role| if path.starts_with("/api/") { role } else { "anonymous" };
            for (who, as_whom, client, csrf, token) in [
                ("anonymous", "anonymous", &anonymous, "", None),
                ("researcher", "researcher", &researcher, csrf_r.as_str(), None),
                ("admin", "admin", &admin, csrf_a.as_str(), None),
                ("researcher's token", by_token("researcher"), &anonymous, "", Some(&researcher_token)),
                ("admin's token", by_token("admin"), &anonymous, "", Some(&admin_token)),
            ] {
                // Signing in or out here would change who the walker is; those routes have
                // tests of their own.
                if token.is_none() && who != "anonymous" && (path == "/auth/logout" || path == "/auth/dev") {
                    continue;
                }
                let url = format!("{}{path}", app.address);
                let mut request = if *method == reqwest::Method::POST {
                    client.post(url).form(&[("csrf_token", csrf)])
                } else {
                    client.request(method.clone(), url)
                };
                if let Some(token) = token {
                    request = request.bearer_auth(token);
                }
                let response = request.send().await.unwrap();
                let status = response.status().as_u16();
                let to_login = response
                    .headers()
                    .get("location")
                    .is_some_and(|l| l.to_str().unwrap().starts_with("/auth/login?next="));
                let signed_out = status == 401 || to_login;
                let body = response.text().await.unwrap_or_default();
                let expected = match (access, as_whom) {
                    // Forge webhooks: public, and refused by the route itself (not the sign-in
                    // check) when unsigned, whoever sends them.
                    (Access::Public, _) if policy::signed_by_sender(&path) => {
                        status == 401 && body.contains("signature")
                    }
                    (Access::Public, _) => !signed_out && status != 403,
                    (Access::Catalog | Access::SignedIn | Access::Admin, "anonymous") => {
                        if api || *method != reqwest::Method::GET { status == 401 } else { to_login }
                    }
                    (Access::Admin, "researcher") => status == 403,
                    (_, _) => !signed_out && status != 403,
                };
                if !expected {
                    wrong.push(format!("{who}: {method} {path} ({access:?}) answered {status}"));
                }
            }
        }

        assert!(routes.len() > 25, "{routes:?}");
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    async fn no_other_spelling_of_a_route_reaches_a_handler_or_a_page(backend: Backend) {
        let app = spawn_app(backend).await;
        let cookie = app.dev_cookie("rui").await;
        let mut routes = mirante::http::routes::all_routes();
        routes.sort_by(|a, b| (a.1.as_str(), a.0.as_str()).cmp(&(b.1.as_str(), b.0.as_str())));
        routes.dedup();
        let mut wrong = Vec::new();
        let mut sent = 0;

        for (method, pattern) in &routes {
            let path = pattern
                .replace("/items/{id}", "/items/vault")
                .replace("/layers/{id}", "/layers/l0")
                .replace("/sites/{id}", "/sites/sp")
                .replace("{*path}", "mirante.css")
                .replace("{file}", "vault.svg")
                .replace("{id}", "1");
            let readable = *method == reqwest::Method::GET;
            let mut variants: Vec<(String, bool)> = [
                format!("{path}/"),
                format!("/.{path}"),
                format!("/{path}"),
                format!("{path}/."),
                format!("/catalog/..{path}"),
                format!("{path}//"),
            ]
            .into_iter()
            .map(|v| (v, readable))
            .collect();
            // Spellings that name no route at all: another case, a percent-encoded letter.
            if let Some(first) = path[1..].split('/').next().filter(|s| !s.is_empty()) {
                let rest = &path[1 + first.len()..];
                variants.push((format!("/{}{rest}", first.to_uppercase()), false));
                let (head, tail) = first.split_at(1);
                variants.push((format!("/%{:02X}{tail}{rest}", head.as_bytes()[0]), false));
            }
            for (variant, redirected) in variants {
                let answer = app.raw(method.as_str(), &variant, &[("Cookie", &cookie), ("Origin", &app.address)]).await;
                sent += 1;
                let expected = if redirected {
                    answer.status == 308 && answer.location.as_deref() == Some(path.as_str())
                } else {
                    answer.status == 404 && !answer.body.contains("data-hydrated")
                };
                if !expected {
                    wrong.push(format!(
                        "{method} {variant} answered {} (location {:?})",
                        answer.status, answer.location
                    ));
                }
            }
        }

        assert!(sent > 400, "{sent}");
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    async fn a_researcher_asking_for_findings_by_another_spelling_is_sent_to_the_refusal(backend: Backend) {
        let app = spawn_app(backend).await;
        let cookie = app.dev_cookie("rui").await;
        let headers = [("Cookie", cookie.as_str())];

        let variant = app.raw("GET", "/findings/?severity=error", &headers).await;
        let canonical = app.raw("GET", "/findings?severity=error", &headers).await;
        let case = app.raw("GET", "/Findings", &headers).await;

        assert_eq!(variant.status, 308);
        assert_eq!(variant.location.as_deref(), Some("/findings?severity=error"));
        assert_eq!(canonical.status, 403);
        assert_eq!(case.status, 404);
        for answer in [&variant, &canonical, &case] {
            assert!(!answer.body.contains("validated-only-free-text"), "{answer:?}");
            assert!(!answer.body.contains("Information"), "{answer:?}");
        }
    }

    async fn a_page_elsewhere_cannot_sign_in_by_pointing_its_name_at_the_portal(backend: Backend) {
        let app = spawn_app(backend).await;
        let port = app.address.rsplit(':').next().unwrap().to_owned();
        let rebound = format!("rebind.example:{port}");
        let origin = format!("http://{rebound}");

        let sign_in = app
            .raw_with_body("POST", "/auth/dev", &[("Host", &rebound), ("Origin", &origin)], "user=ada&next=%2F")
            .await;
        let at_home = app
            .raw_with_body("POST", "/auth/dev", &[("Origin", &app.address)], "user=ada&next=%2F")
            .await;
        let page = app.raw("GET", "/catalog", &[("Host", &rebound)]).await;
        let probe = app.raw("GET", "/healthz", &[("Host", "10.42.0.7:3000")]).await;
        let loopback = app.raw("GET", "/healthz", &[("Host", &format!("localhost:{port}"))]).await;

        assert_eq!(sign_in.status, 421, "{sign_in:?}");
        assert_eq!(sign_in.set_cookie, None);
        assert_eq!(at_home.status, 303, "the same form from the portal's own page signs in");
        assert!(at_home.set_cookie.is_some());
        assert_eq!(page.status, 421);
        assert_eq!(probe.status, 200, "kubelet probes name the pod's address");
        assert_eq!(loopback.status, 200);
    }

    async fn a_server_function_answers_a_clients_mistake_with_a_client_error(backend: Backend) {
        let app = spawn_app(backend).await;
        let admin = app.dev_browser("ada").await;
        let call = |path: &'static str, body: Vec<u8>, json: bool| {
            let request = admin.post(format!("{}{path}", app.address)).body(body);
            let request = if json {
                request.header("content-type", "application/json")
            } else {
                request.header("content-type", "application/x-www-form-urlencoded")
            };
            async move { request.send().await.unwrap().status().as_u16() }
        };

        let not_json = call("/_fn/items", b"garbage".to_vec(), true).await;
        let wrong_type = call("/_fn/items", br#"{"query":5}"#.to_vec(), true).await;
        let bad_number = call("/_fn/request", b"id=abc".to_vec(), false).await;
        let stale_form = call("/_fn/merge", b"id=1&csrf_token=stale".to_vec(), false).await;
        let huge = call("/_fn/preview", vec![b'a'; 3 * 1024 * 1024], false).await;
        let huge_api = admin
            .post(format!("{}/api/v1/requests/preview", app.address))
            .header("content-type", "application/json")
            .body(vec![b' '; 3 * 1024 * 1024])
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();

        assert_eq!((not_json, wrong_type, bad_number), (400, 400, 400));
        assert_eq!(stale_form, 403);
        assert_eq!((huge, huge_api), (413, 413));
    }

    async fn a_method_a_route_does_not_take_is_answered_405_with_the_methods_it_does(backend: Backend) {
        let app = spawn_app(backend).await;

        let trace = app.raw("TRACE", "/api/v1/items", &[]).await;
        let delete = app.raw("DELETE", "/requests/1", &[]).await;
        let unknown = app.raw("GET", "/api/v1/nowhere", &[]).await;

        assert_eq!(trace.status, 405);
        assert_eq!(trace.allow.as_deref(), Some("GET, HEAD"));
        assert_eq!(delete.status, 405);
        assert_eq!(unknown.status, 404);
        assert!(unknown.body.contains("no such API route"), "{unknown:?}");
    }
}
