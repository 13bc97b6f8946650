//! A fake Argo CD API server for the follower, held to Argo CD's published API description:
//! `tests/argocd/applications.swagger.json`, the subset of Argo CD's `assets/swagger.json`
//! (Swagger 2.0) for the two application reads, copied unchanged with its source named in the
//! file.
//!
//! Every request is checked: a GET of a documented path, only documented query parameters
//! of the documented types, and the Bearer token. Every answer is built as Argo CD would and
//! validated before it is sent against the operation's response definition
//! (`v1alpha1ApplicationList`, `v1alpha1Application`, `runtimeError`) read *closed*: an object
//! property the description does not declare is a problem too, so a misspelt field in the
//! fake cannot pass. Problems are collected and [`FakeArgo::assert_clean`] fails the test on
//! any.
//!
//! The applications are set by the test ([`FakeArgo::put`]) or, for a fake that stands in for
//! a whole Argo CD ([`FakeArgo::watching`], the `fake-argocd` binary of the browser tests), made
//! from a git monorepo as Argo CD's ApplicationSet controller and automated sync make them: see
//! [`Monorepo`].

use std::{
    collections::HashMap,
    net::SocketAddr,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    Json, Router,
    extract::{OriginalUri, State},
    http::{HeaderMap, Method, StatusCode, header},
    response::{IntoResponse, Response},
};
use jsonschema::{Draft, Registry, Validator};
use serde_json::{Value, json};

/// The token the portal is configured with.
pub const TOKEN: &str = "argocd-follow-token";

/// Where the fake tells what it saw and what broke the contract ([`FakeArgo::report`]); not
/// part of Argo CD's API, and not counted as a request to it.
pub const REPORT_PATH: &str = "/_fake/report";

const DOC_URI: &str = "https://argocd.example.org/swagger.json";

/// The API description, with every object definition closed.
fn contract() -> Value {
    let text = include_str!("applications.swagger.json");
    let mut doc: Value = serde_json::from_str(text).expect("the Argo CD description is JSON");
    fn close(v: &mut Value) {
        match v {
            Value::Object(map) => {
                if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                    map.insert("additionalProperties".into(), Value::Bool(false));
                }
                for (_, child) in map.iter_mut() {
                    close(child);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(close),
            _ => {}
        }
    }
    close(&mut doc["definitions"]);
    doc
}

/// What the fake answers, and what it saw.
#[derive(Default)]
struct Inner {
    /// The applications Argo CD knows (`v1alpha1Application` objects).
    apps: Vec<Value>,
    /// When set, every answer is this status with a `runtimeError` (Argo CD erroring).
    failing: Option<StatusCode>,
    /// Every request, `METHOD path?query`.
    seen: Vec<String>,
    /// Every way a request or an answer broke the contract.
    problems: Vec<String>,
    /// Where the applications come from when the fake watches a monorepo.
    monorepo: Option<Monorepo>,
}

/// A fake Argo CD.
#[derive(Clone)]
pub struct FakeArgo {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    addr: SocketAddr,
    inner: Arc<Mutex<Inner>>,
    doc: Arc<Value>,
    registry: Arc<Registry<'static>>,
}

impl FakeArgo {
    /// A fake that is not listening yet: its address refuses connections until
    /// [`FakeArgo::start`] (Argo CD down).
    pub async fn down() -> FakeArgo {
        let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = probe.local_addr().unwrap();
        drop(probe);
        let doc = contract();
        let registry = Registry::new()
            .add(DOC_URI, Draft::Draft4.create_resource(doc.clone()))
            .expect("the description is a resource")
            .prepare()
            .expect("the description's references resolve");
        FakeArgo {
            base: format!("http://{addr}"),
            addr,
            inner: Arc::default(),
            doc: Arc::new(doc),
            registry: Arc::new(registry),
        }
    }

    /// A fake that answers at once.
    pub async fn up() -> FakeArgo {
        let fake = FakeArgo::down().await;
        fake.start().await;
        fake
    }

    /// Starts answering on the fake's address.
    pub async fn start(&self) {
        let listener = tokio::net::TcpListener::bind(self.addr).await.unwrap();
        let router = Router::new().fallback(answer).with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
    }

    /// A fake, answering at once, whose applications are those the ApplicationSets on the
    /// `main` branch of the git repository at `repo` make, synced as soon as a folder appears
    /// and healthy `settle` later (see [`Monorepo`]). The repository need not exist yet.
    pub async fn watching(repo: PathBuf, settle: Duration) -> FakeArgo {
        let fake = FakeArgo::down().await;
        fake.inner.lock().unwrap().monorepo = Some(Monorepo {
            path: repo,
            settle,
            first_seen: HashMap::new(),
        });
        fake.start().await;
        fake
    }

    /// What the fake saw and found wrong, as JSON: `{"seen": [...], "problems": [...]}`.
    pub fn report(&self) -> Value {
        let inner = self.inner.lock().unwrap();
        json!({"seen": inner.seen, "problems": inner.problems})
    }

    /// Replaces (by name) or adds an application.
    pub fn put(&self, app: Value) {
        let mut inner = self.inner.lock().unwrap();
        let name = app["metadata"]["name"].clone();
        inner.apps.retain(|a| a["metadata"]["name"] != name);
        inner.apps.push(app);
    }

    /// Forgets the application `name` (Argo CD deleted it, as an ApplicationSet does when
    /// its folder is gone).
    pub fn delete(&self, name: &str) {
        self.inner
            .lock()
            .unwrap()
            .apps
            .retain(|a| a["metadata"]["name"] != name);
    }

    /// Makes every answer an error with `status`, or (`None`) answers normally again.
    pub fn fail_with(&self, status: Option<StatusCode>) {
        self.inner.lock().unwrap().failing = status;
    }

    /// The requests seen so far.
    pub fn seen(&self) -> Vec<String> {
        self.inner.lock().unwrap().seen.clone()
    }

    /// Fails unless at least one request was seen and none broke the contract.
    pub fn assert_clean(&self) {
        let inner = self.inner.lock().unwrap();
        assert!(!inner.seen.is_empty(), "Argo CD was never asked");
        assert!(
            inner.problems.is_empty(),
            "requests or answers that break Argo CD's API description:\n{}",
            inner.problems.join("\n")
        );
    }

    fn problem(&self, p: String) {
        self.inner.lock().unwrap().problems.push(p);
    }

    /// Validates `body` against the definition `name`, recording every error.
    fn check_answer(&self, what: &str, name: &str, body: &Value) {
        let schema = json!({"$ref": format!("{DOC_URI}#/definitions/{name}")});
        let validator: Validator = jsonschema::options()
            .with_draft(Draft::Draft4)
            .with_registry(&self.registry)
            .should_validate_formats(true)
            .build(&schema)
            .unwrap_or_else(|e| panic!("definition {name} does not build: {e}"));
        for error in validator.iter_errors(body) {
            self.problem(format!(
                "{what}: answer at {}: {error}",
                error.instance_path()
            ));
        }
    }

    /// The operation a request is (its path template), after checking method, path and query
    /// against the description.
    fn operation(
        &self,
        what: &str,
        method: &Method,
        path: &str,
        query: &[(String, String)],
    ) -> Option<String> {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let paths = self.doc["paths"].as_object().unwrap();
        let found = paths.iter().find(|(template, _)| {
            let parts: Vec<&str> = template.split('/').filter(|s| !s.is_empty()).collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(p, s)| p.starts_with('{') || p == s)
        });
        let Some((template, item)) = found else {
            self.problem(format!("{what}: no such path in the API"));
            return None;
        };
        let Some(operation) = item.get(method.as_str().to_lowercase()) else {
            self.problem(format!("{what}: {template} has no {method} operation"));
            return None;
        };
        let declared: Vec<&Value> = operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "query")
            .collect();
        for (name, value) in query {
            match declared.iter().find(|p| p["name"] == name.as_str()) {
                None => self.problem(format!("{what}: query parameter {name} is not documented")),
                Some(p) if p["type"] == "string" || p["type"] == "array" => {
                    if value.is_empty() && p["type"] == "string" {
                        self.problem(format!("{what}: query parameter {name} is empty"));
                    }
                }
                Some(p) => self.problem(format!(
                    "{what}: query parameter {name} of type {} is not read by this fake",
                    p["type"]
                )),
            }
        }
        Some(template.clone())
    }
}

/// Argo CD's error body (`runtimeError`) with the gRPC code it uses for `status`.
fn runtime_error(status: StatusCode, message: &str) -> Value {
    let code = match status {
        StatusCode::UNAUTHORIZED => 16,
        StatusCode::NOT_FOUND => 5,
        StatusCode::FORBIDDEN => 7,
        _ => 14,
    };
    json!({"error": message, "code": code, "message": message, "details": []})
}

async fn answer(
    State(fake): State<FakeArgo>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let path = uri.path().to_owned();
    let query = crate::query_pairs(&uri);
    // The test's own window on the fake, outside Argo CD's API.
    if path == REPORT_PATH {
        return Json(fake.report()).into_response();
    }
    let what = format!("{method} {}", uri);
    fake.inner.lock().unwrap().seen.push(what.clone());
    let operation = fake.operation(&what, &method, &path, &query);

    let send = |status: StatusCode, name: &str, body: Value| {
        fake.check_answer(&what, name, &body);
        (status, Json(body)).into_response()
    };
    let authorised = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {TOKEN}"));
    if !authorised {
        fake.problem(format!("{what}: no or a wrong Bearer token"));
        return send(
            StatusCode::UNAUTHORIZED,
            "runtimeError",
            runtime_error(StatusCode::UNAUTHORIZED, "no session information"),
        );
    }
    if let Some(status) = fake.inner.lock().unwrap().failing {
        return send(
            status,
            "runtimeError",
            runtime_error(
                status,
                "connection error: desc = \"transport: Error while dialing: dial tcp 10.96.0.12:8081: connect: connection refused\"",
            ),
        );
    }
    let apps = {
        let mut inner = fake.inner.lock().unwrap();
        let watched = inner.monorepo.as_mut().map(Monorepo::applications);
        match watched {
            Some(Ok(apps)) => apps,
            Some(Err(e)) => {
                inner
                    .problems
                    .push(format!("{what}: the watched monorepo: {e}"));
                Vec::new()
            }
            None => inner.apps.clone(),
        }
    };
    match operation.as_deref() {
        Some("/api/v1/applications") => {
            let mut items = apps;
            if let Some((_, repo)) = query.iter().find(|(k, _)| k == "repo") {
                items.retain(|a| a["spec"]["source"]["repoURL"] == repo.as_str());
            }
            send(
                StatusCode::OK,
                "v1alpha1ApplicationList",
                json!({"metadata": {"resourceVersion": "48213"}, "items": items}),
            )
        }
        Some("/api/v1/applications/{name}") => {
            let name = path.rsplit('/').next().unwrap_or_default();
            match apps.into_iter().find(|a| a["metadata"]["name"] == name) {
                Some(app) => send(StatusCode::OK, "v1alpha1Application", app),
                None => send(
                    StatusCode::NOT_FOUND,
                    "runtimeError",
                    runtime_error(
                        StatusCode::NOT_FOUND,
                        &format!("applications.argoproj.io \"{name}\" not found"),
                    ),
                ),
            }
        }
        _ => send(
            StatusCode::NOT_FOUND,
            "runtimeError",
            runtime_error(StatusCode::NOT_FOUND, "Not Found"),
        ),
    }
}

/// How an Application stands, for [`application`].
pub struct AppStatus<'a> {
    /// `Synced`, `OutOfSync`.
    pub sync: &'a str,
    /// The revision compared.
    pub revision: &'a str,
    /// `Healthy`, `Progressing`, `Degraded`, `Missing`.
    pub health: &'a str,
    /// Argo CD's health message.
    pub message: Option<&'a str>,
}

/// An Application as the ApplicationSet of the demo monorepo makes one for a folder: the
/// folder as `spec.source.path`, the namespace of the workspace, the status given.
pub fn application(name: &str, path: &str, status: &AppStatus<'_>) -> Value {
    let source = json!({
        "repoURL": "https://git.example.org/infra/devops.git",
        "path": path,
        "targetRevision": "main"
    });
    let destination = json!({"server": "https://kubernetes.default.svc", "namespace": name});
    let mut health = json!({"status": status.health, "lastTransitionTime": "2026-12-03T10:00:00Z"});
    if let Some(m) = status.message {
        health["message"] = json!(m);
    }
    json!({
        "metadata": {
            "name": name,
            "namespace": "argocd",
            "uid": "5d3c4a8e-2f1b-4c6d-9e8f-7a6b5c4d3e2f",
            "resourceVersion": "48213",
            "creationTimestamp": "2026-12-03T09:59:00Z",
            "labels": {"app.kubernetes.io/managed-by": "applicationset"}
        },
        "spec": {
            "project": "default",
            "source": source,
            "destination": destination,
            "syncPolicy": {"automated": {"prune": true, "selfHeal": true}}
        },
        "status": {
            "sync": {
                "status": status.sync,
                "revision": status.revision,
                "comparedTo": {"source": source, "destination": destination}
            },
            "health": health,
            "reconciledAt": "2026-12-03T10:00:05Z",
            "sourceType": "Directory",
            "summary": {}
        }
    })
}

/// Argo CD as it stands for a monorepo: the ApplicationSets on its `main` branch (YAML files
/// under `argocd/` of `kind: ApplicationSet`) each turn every folder their git directory
/// generator matches into an Application (named as the demo ApplicationSets name theirs,
/// `mirante-` and the path with `/` made `-`, sourced from that folder). Automated sync
/// applies a folder at the branch's head as soon as it appears; its resources report
/// `Progressing` for `settle` and `Healthy` after.
pub struct Monorepo {
    path: PathBuf,
    settle: Duration,
    /// When each folder was first seen.
    first_seen: HashMap<String, Instant>,
}

/// One ApplicationSet's git directory generator.
struct Generator {
    repo_url: String,
    include: Vec<glob::Pattern>,
    exclude: Vec<glob::Pattern>,
}

impl Monorepo {
    /// The applications the monorepo's `main` makes now; none while it does not exist.
    fn applications(&mut self) -> Result<Vec<Value>, String> {
        let Ok(repo) = git2::Repository::open(&self.path) else {
            return Ok(Vec::new());
        };
        let head = repo
            .find_reference("refs/heads/main")
            .and_then(|r| r.peel_to_commit())
            .map_err(|e| format!("no main branch: {e}"))?;
        let tree = head.tree().map_err(|e| e.to_string())?;
        let mut folders = Vec::new();
        let mut generators = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let path = format!("{dir}{}", entry.name().unwrap_or_default());
            match entry.kind() {
                Some(git2::ObjectType::Tree) => folders.push(path),
                Some(git2::ObjectType::Blob)
                    if dir == "argocd/" && (path.ends_with(".yaml") || path.ends_with(".yml")) =>
                {
                    if let Ok(blob) = repo.find_blob(entry.id()) {
                        generators.push((path, blob.content().to_vec()));
                    }
                }
                _ => {}
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(|e| e.to_string())?;
        let generators = generators
            .into_iter()
            .map(|(path, bytes)| parse_application_set(&bytes).map_err(|e| format!("{path}: {e}")))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .flatten()
            .collect::<Vec<_>>();
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..glob::MatchOptions::new()
        };
        let revision = head.id().to_string();
        let now = Instant::now();
        let mut apps = Vec::new();
        for folder in &folders {
            let Some(generator) = generators.iter().find(|g| {
                g.include.iter().any(|p| p.matches_with(folder, options))
                    && !g.exclude.iter().any(|p| p.matches_with(folder, options))
            }) else {
                continue;
            };
            let seen = *self.first_seen.entry(folder.clone()).or_insert(now);
            let health = if now.duration_since(seen) < self.settle {
                "Progressing"
            } else {
                "Healthy"
            };
            let name = format!("mirante-{}", folder.replace(['/', '.', '_'], "-"));
            let mut app = application(
                &name,
                folder,
                &AppStatus {
                    sync: "Synced",
                    revision: &revision,
                    health,
                    message: None,
                },
            );
            app["spec"]["source"]["repoURL"] = json!(generator.repo_url);
            app["status"]["sync"]["comparedTo"]["source"]["repoURL"] = json!(generator.repo_url);
            apps.push(app);
        }
        Ok(apps)
    }
}

/// The git directory generators of a YAML file, if it is an ApplicationSet.
fn parse_application_set(bytes: &[u8]) -> Result<Vec<Generator>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    let doc: Value = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    if doc["kind"] != "ApplicationSet" {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for generator in doc["spec"]["generators"].as_array().into_iter().flatten() {
        let git = &generator["git"];
        let Some(dirs) = git["directories"].as_array() else {
            continue;
        };
        let (mut include, mut exclude) = (Vec::new(), Vec::new());
        for dir in dirs {
            let path = dir["path"].as_str().ok_or("a directory without a path")?;
            let pattern = glob::Pattern::new(path).map_err(|e| format!("{path}: {e}"))?;
            if dir["exclude"] == true {
                exclude.push(pattern);
            } else {
                include.push(pattern);
            }
        }
        out.push(Generator {
            repo_url: git["repoURL"].as_str().unwrap_or_default().to_owned(),
            include,
            exclude,
        });
    }
    Ok(out)
}
