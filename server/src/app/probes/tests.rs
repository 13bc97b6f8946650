//! Probes against real HTTP servers on port 0, and the Argo CD reader against a fake of Argo
//! CD's API that checks every request.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use axum::{
    Json, Router,
    extract::{OriginalUri, Path, State},
    http::{HeaderMap, Method, StatusCode, Uri, header},
    response::{IntoResponse, Redirect, Response},
    routing::get,
};
use secrecy::SecretString;
use serde_json::json;

use super::*;

async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}")
}

/// An address nothing listens on: a port bound, then released.
async fn down_address() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

async fn site() -> String {
    serve(
        Router::new()
            .route("/health", get(|| async { "ok" }))
            .route(
                "/broken",
                get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "down for maintenance") }),
            )
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    "late"
                }),
            )
            .route("/loop/a", get(|| async { Redirect::temporary("/loop/b") }))
            .route("/loop/b", get(|| async { Redirect::temporary("/loop/a") }))
            .route(
                "/chain/{n}",
                get(|Path(n): Path<u32>| async move {
                    Redirect::temporary(&format!("/chain/{}", n + 1))
                }),
            )
            .route("/moved", get(|| async { Redirect::permanent("/health") }))
            .route(
                "/cookie",
                get(|headers: HeaderMap| async move {
                    if headers.contains_key(header::COOKIE) {
                        (StatusCode::BAD_REQUEST, "a cookie came back").into_response()
                    } else {
                        (
                            [(header::SET_COOKIE, "session=abc; Path=/")],
                            Redirect::temporary("/health"),
                        )
                            .into_response()
                    }
                }),
            ),
    )
    .await
}

/// A checker whose probes may reach the test servers on 127.0.0.1 (and nothing else internal).
fn checker(timeout_ms: u64, concurrency: usize) -> Checker {
    Checker::new(
        Duration::from_millis(timeout_ms),
        concurrency,
        None,
        ProbeAllow::parse("127.0.0.1").unwrap(),
    )
    .unwrap()
}

fn guarded_checker(allow: &str) -> Checker {
    Checker::new(
        Duration::from_secs(2),
        4,
        None,
        ProbeAllow::parse(allow).unwrap(),
    )
    .unwrap()
}

/// A server on `ip` that counts the requests it gets and redirects `/to?u=URL` to URL.
async fn counting_server(ip: &str) -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&hits);
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = Router::new().fallback(move |uri: Uri| {
        let counted = Arc::clone(&counted);
        async move {
            counted.fetch_add(1, Ordering::SeqCst);
            match uri.query().and_then(|q| q.strip_prefix("u=")) {
                Some(to) => Redirect::temporary(to).into_response(),
                None => "secret".into_response(),
            }
        }
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{addr}"), hits)
}

#[tokio::test]
async fn a_probe_of_a_loopback_address_is_refused_without_a_request() {
    let (base, hits) = counting_server("127.0.0.1").await;

    let r = guarded_checker("")
        .check(&probe(&format!("{base}/admin"), 200))
        .await;

    assert!(!r.ok);
    let reason = r.reason.unwrap();
    assert!(
        reason.starts_with("refused: 127.0.0.1 is an internal address"),
        "{reason}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_probe_of_a_name_that_resolves_to_loopback_is_refused_without_a_request() {
    let (base, hits) = counting_server("127.0.0.1").await;
    let by_name = base.replace("127.0.0.1", "localhost");

    let r = guarded_checker("").check(&probe(&by_name, 200)).await;

    assert!(!r.ok);
    let reason = r.reason.unwrap();
    assert!(
        reason.contains("refused: localhost is an internal address"),
        "{reason}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_redirect_from_an_allowed_host_into_an_internal_one_is_not_followed() {
    let (allowed, _) = counting_server("127.0.0.2").await;
    let (internal, hits) = counting_server("127.0.0.1").await;

    let r = guarded_checker("127.0.0.2")
        .check(&probe(&format!("{allowed}/to?u={internal}/secret"), 200))
        .await;

    assert!(!r.ok);
    let reason = r.reason.unwrap();
    assert!(
        reason.starts_with("redirect refused: 127.0.0.1 is an internal address"),
        "{reason}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_address_the_allow_list_names_is_probed() {
    let (base, hits) = counting_server("127.0.0.1").await;

    let r = guarded_checker("127.0.0.0/8")
        .check(&probe(&format!("{base}/health"), 200))
        .await;

    assert!(r.ok, "{r:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[test]
fn a_reader_sees_whether_a_check_holds_but_not_its_status_latency_or_reason() {
    let r = CheckResult {
        item: "svc".into(),
        kind: CheckKind::Probe,
        target: "http://10.0.0.1/".into(),
        ok: false,
        status: Some(503),
        health: None,
        sync: None,
        latency_ms: Some(12),
        reason: Some("expected status 200, got 503".into()),
        checked_at: Utc::now(),
    };

    let seen = r.clone().for_reader();

    assert_eq!(
        (seen.ok, seen.status, seen.latency_ms, seen.reason),
        (false, None, None, None)
    );
    assert_eq!((seen.item, seen.target), (r.item, r.target));
}

fn probe(url: &str, expect_status: u16) -> Target {
    Target::Probe {
        item: "svc".into(),
        url: Url::parse(url).unwrap(),
        expect_status,
    }
}

#[tokio::test]
async fn a_probe_of_a_server_that_answers_the_expected_status_passes() {
    let base = site().await;

    let r = checker(2000, 4)
        .check(&probe(&format!("{base}/health"), 200))
        .await;

    assert!(r.ok, "{r:?}");
    assert_eq!((r.status, r.reason), (Some(200), None));
    assert_eq!((r.item.as_str(), r.kind), ("svc", CheckKind::Probe));
}

#[tokio::test]
async fn a_probe_of_a_server_that_is_down_fails_saying_it_cannot_connect() {
    let base = down_address().await;

    let r = checker(2000, 4)
        .check(&probe(&format!("{base}/health"), 200))
        .await;

    assert!(!r.ok);
    assert_eq!(r.status, None);
    let reason = r.reason.unwrap();
    assert!(reason.starts_with("cannot connect: "), "{reason}");
    assert!(reason.to_lowercase().contains("refused"), "{reason}");
}

#[tokio::test]
async fn a_probe_of_a_server_slower_than_the_timeout_fails_within_the_timeout() {
    let base = site().await;
    let started = std::time::Instant::now();

    let r = checker(300, 4)
        .check(&probe(&format!("{base}/slow"), 200))
        .await;

    assert!(
        started.elapsed() < Duration::from_secs(2),
        "it waited for the answer"
    );
    assert!(!r.ok);
    assert_eq!(r.reason.as_deref(), Some("no answer within 300 ms"));
}

#[tokio::test]
async fn a_probe_answered_with_another_status_fails_naming_both() {
    let base = site().await;

    let r = checker(2000, 4)
        .check(&probe(&format!("{base}/broken"), 200))
        .await;

    assert!(!r.ok);
    assert_eq!(r.status, Some(503));
    assert_eq!(r.reason.as_deref(), Some("expected status 200, got 503"));
}

#[tokio::test]
async fn a_redirect_loop_fails_naming_the_address_visited_twice() {
    let base = site().await;

    let r = checker(2000, 4)
        .check(&probe(&format!("{base}/loop/a"), 200))
        .await;

    assert!(!r.ok);
    assert_eq!(
        r.reason.as_deref(),
        Some(format!("redirect loop: {base}/loop/a was already visited").as_str())
    );
}

#[tokio::test]
async fn an_endless_chain_of_redirects_stops_at_the_limit() {
    let base = site().await;

    let r = checker(2000, 4)
        .check(&probe(&format!("{base}/chain/0"), 200))
        .await;

    assert!(!r.ok);
    assert_eq!(
        r.reason.as_deref(),
        Some(format!("more than {MAX_REDIRECTS} redirects").as_str())
    );
}

#[tokio::test]
async fn redirects_are_followed_unless_the_probe_expects_a_redirect() {
    let base = site().await;
    let c = checker(2000, 4);

    let followed = c.check(&probe(&format!("{base}/moved"), 200)).await;
    let kept = c.check(&probe(&format!("{base}/moved"), 308)).await;

    assert!(followed.ok && followed.status == Some(200), "{followed:?}");
    assert!(kept.ok && kept.status == Some(308), "{kept:?}");
}

#[tokio::test]
async fn a_probe_sends_back_no_cookie_a_server_set() {
    let base = site().await;

    let r = checker(2000, 4)
        .check(&probe(&format!("{base}/cookie"), 200))
        .await;

    assert!(r.ok, "{r:?}");
}

#[tokio::test]
async fn no_more_probes_run_at_once_than_the_concurrency_limit() {
    #[derive(Default)]
    struct Count {
        now: AtomicUsize,
        most: AtomicUsize,
        total: AtomicUsize,
    }
    let count = Arc::new(Count::default());
    let base = serve(
        Router::new()
            .route(
                "/{n}",
                get(|State(c): State<Arc<Count>>| async move {
                    let now = c.now.fetch_add(1, Ordering::SeqCst) + 1;
                    c.most.fetch_max(now, Ordering::SeqCst);
                    c.total.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    c.now.fetch_sub(1, Ordering::SeqCst);
                    "ok"
                }),
            )
            .with_state(Arc::clone(&count)),
    )
    .await;
    let evidence: String = (0..10)
        .map(|n| format!("      - {{kind: probe, url: '{base}/{n}'}}\n"))
        .collect();
    let catalog = catalog_with(&format!(
        "  - id: svc\n    name: Service\n    kind: component\n    layer: l0\n    state: validated\n    evidence:\n{evidence}"
    ));

    let results = checker(5000, 3).run(&catalog).await;

    assert_eq!(results.len(), 10);
    assert!(results.iter().all(|r| r.ok), "{results:?}");
    assert_eq!(count.total.load(Ordering::SeqCst), 10);
    assert_eq!(
        count.most.load(Ordering::SeqCst),
        3,
        "at most 3 at once, and 3 were"
    );
    let urls: Vec<String> = results.iter().map(|r| r.target.clone()).collect();
    let expected: Vec<String> = (0..10).map(|n| format!("{base}/{n}")).collect();
    assert_eq!(urls, expected, "results keep the catalog's order");
}

fn catalog_with(items: &str) -> Catalog {
    let yaml =
        format!("layers:\n  - {{id: l0, kind: layer, number: '0', name: Base}}\nitems:\n{items}");
    mirante_domain::load::load_files(vec![("catalog.yaml".to_owned(), yaml)])
        .map_err(|d| d.to_string())
        .expect("test catalog is valid")
        .catalog
}

#[test]
fn only_validated_items_http_probes_and_configured_argocd_apps_are_checked() {
    let catalog = catalog_with(
        "  - id: live
    name: Live
    kind: component
    layer: l0
    state: validated
    evidence:
      - {kind: probe, url: 'https://live.example.org/health'}
      - {kind: argocd, app: live-app}
  - id: planned
    name: Planned
    kind: component
    layer: l0
    state: desired
    evidence:
      - {kind: probe, url: 'https://planned.example.org/'}
",
    );

    let without = targets(&catalog, false);
    let with = targets(&catalog, true);

    assert_eq!(
        without,
        [Target::Probe {
            item: "live".into(),
            url: Url::parse("https://live.example.org/health").unwrap(),
            expect_status: 200,
        }]
    );
    assert_eq!(with.len(), 2);
    assert_eq!(
        with[1],
        Target::Argocd {
            item: "live".into(),
            app: "live-app".into()
        }
    );
}

// ---- Argo CD -------------------------------------------------------------------------------

const TOKEN: &str = "argocd-test-token";

/// A request the fake Argo CD received.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    method: Method,
    path: String,
    authorization: Option<String>,
}

#[derive(Clone, Default)]
struct FakeArgo {
    seen: Arc<Mutex<Vec<Seen>>>,
}

fn record(fake: &FakeArgo, method: &Method, uri: &Uri, headers: &HeaderMap) {
    fake.seen.lock().unwrap().push(Seen {
        method: method.clone(),
        path: uri.path().to_owned(),
        authorization: headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    });
}

/// Argo CD's error body (`runtimeError` in its API description).
fn argo_error(status: StatusCode, grpc_code: u16, message: &str) -> Response {
    (
        status,
        Json(json!({"error": message, "code": grpc_code, "message": message, "details": []})),
    )
        .into_response()
}

/// `GET /api/v1/applications/{name}` as Argo CD answers it: 401 without the right Bearer
/// token, 404 for an unknown application, the `v1alpha1Application` otherwise.
async fn get_application(
    State(fake): State<FakeArgo>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    record(&fake, &method, &uri, &headers);
    let authorised = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {TOKEN}"));
    if !authorised {
        return argo_error(StatusCode::UNAUTHORIZED, 16, "no session information");
    }
    let (health, sync) = match name.as_str() {
        "web" => ("Healthy", "Synced"),
        "db" => ("Degraded", "OutOfSync"),
        _ => {
            return argo_error(
                StatusCode::NOT_FOUND,
                5,
                &format!("applications.argoproj.io \"{name}\" not found"),
            );
        }
    };
    Json(json!({
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://git.example.org/devops.git", "path": name, "targetRevision": "HEAD"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": name}
        },
        "status": {
            "health": {"status": health},
            "sync": {"status": sync, "revision": "4f2a9c1"},
            "reconciledAt": "2026-11-30T12:00:00Z"
        }
    }))
    .into_response()
}

/// Anything else is not part of the API the reader may use.
async fn unexpected(
    State(fake): State<FakeArgo>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    record(&fake, &method, &uri, &headers);
    argo_error(StatusCode::NOT_FOUND, 5, "Not Found")
}

async fn fake_argo() -> (String, FakeArgo) {
    let fake = FakeArgo::default();
    let base = serve(
        Router::new()
            .route("/api/v1/applications/{name}", get(get_application))
            .fallback(unexpected)
            .with_state(fake.clone()),
    )
    .await;
    (base, fake)
}

fn argo_checker(base: &str, token: &str) -> Checker {
    // Argo CD's address is the operator's, not the catalog's: reached although it is loopback.
    Checker::new(
        Duration::from_secs(2),
        4,
        Some(ArgoCd {
            url: Url::parse(base).unwrap(),
            token: SecretString::from(token.to_owned()),
        }),
        ProbeAllow::default(),
    )
    .unwrap()
}

fn app(name: &str) -> Target {
    Target::Argocd {
        item: "svc".into(),
        app: name.into(),
    }
}

fn assert_only_documented_requests(fake: &FakeArgo, token: &str, names: &[&str]) {
    let seen = fake.seen.lock().unwrap().clone();
    let expected: Vec<Seen> = names
        .iter()
        .map(|n| Seen {
            method: Method::GET,
            path: format!("/api/v1/applications/{n}"),
            authorization: Some(format!("Bearer {token}")),
        })
        .collect();
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn a_healthy_and_synced_argocd_application_passes() {
    let (base, fake) = fake_argo().await;

    let r = argo_checker(&base, TOKEN).check(&app("web")).await;

    assert!(r.ok, "{r:?}");
    assert_eq!(
        (r.health.as_deref(), r.sync.as_deref()),
        (Some("Healthy"), Some("Synced"))
    );
    assert_eq!((r.status, r.reason), (Some(200), None));
    assert_only_documented_requests(&fake, TOKEN, &["web"]);
}

#[tokio::test]
async fn a_degraded_and_out_of_sync_application_fails_saying_both() {
    let (base, fake) = fake_argo().await;

    let r = argo_checker(&base, TOKEN).check(&app("db")).await;

    assert!(!r.ok);
    assert_eq!(
        r.reason.as_deref(),
        Some("health Degraded, sync OutOfSync (expected Healthy and Synced)")
    );
    assert_eq!(r.health.as_deref(), Some("Degraded"));
    assert_only_documented_requests(&fake, TOKEN, &["db"]);
}

#[tokio::test]
async fn an_application_argocd_does_not_know_fails_as_not_found() {
    let (base, fake) = fake_argo().await;

    let r = argo_checker(&base, TOKEN).check(&app("ghost")).await;

    assert!(!r.ok);
    assert_eq!(r.status, Some(404));
    assert_eq!(
        r.reason.as_deref(),
        Some("application not found in Argo CD: applications.argoproj.io \"ghost\" not found")
    );
    assert_only_documented_requests(&fake, TOKEN, &["ghost"]);
}

#[tokio::test]
async fn a_token_argocd_refuses_fails_without_showing_the_token() {
    let (base, fake) = fake_argo().await;

    let r = argo_checker(&base, "expired-token")
        .check(&app("web"))
        .await;

    assert!(!r.ok);
    assert_eq!(r.status, Some(401));
    let reason = r.reason.unwrap();
    assert_eq!(
        reason,
        "Argo CD refused the token (HTTP 401): no session information"
    );
    assert!(!reason.contains("expired-token"));
    assert_only_documented_requests(&fake, "expired-token", &["web"]);
}

#[tokio::test]
async fn argocd_under_a_path_prefix_and_odd_application_names_stay_in_one_segment() {
    let fake = FakeArgo::default();
    let base = serve(
        Router::new()
            .nest(
                "/argocd",
                Router::new().route("/api/v1/applications/{name}", get(get_application)),
            )
            .fallback(unexpected)
            .with_state(fake.clone()),
    )
    .await;

    let r = argo_checker(&format!("{base}/argocd/"), TOKEN)
        .check(&app("a/../b"))
        .await;

    assert_eq!(r.status, Some(404), "{r:?}");
    let seen = fake.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/argocd/api/v1/applications/a%2F..%2Fb");
}

#[tokio::test]
async fn argocd_down_fails_saying_it_cannot_be_reached() {
    let base = down_address().await;

    let r = argo_checker(&base, TOKEN).check(&app("web")).await;

    assert!(!r.ok);
    let reason = r.reason.unwrap();
    assert!(
        reason.starts_with("cannot reach Argo CD: cannot connect: "),
        "{reason}"
    );
}

#[test]
fn argocd_settings_need_a_token_and_an_http_url() {
    let mut config = Config {
        argocd_url: Some("https://argocd.example.org".into()),
        ..Config::default()
    };
    assert!(matches!(
        Checker::from_config(&config),
        Err(SettingsError::ArgocdToken)
    ));
    config.argocd_token = Some(SecretString::from("t".to_owned()));
    assert!(Checker::from_config(&config).unwrap().reads_argocd());
    config.argocd_url = Some("ftp://argocd.example.org".into());
    assert!(matches!(
        Checker::from_config(&config),
        Err(SettingsError::ArgocdUrl(_))
    ));
    config.argocd_url = None;
    assert!(!Checker::from_config(&config).unwrap().reads_argocd());
}
