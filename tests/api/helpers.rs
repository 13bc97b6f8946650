//! Starting a server for a test: its own temp data dir, its own catalog directory, its own
//! database (a SQLite file, or a PostgreSQL database created for the test and dropped after).

use std::{
    path::{Path, PathBuf},
    sync::Once,
};

use mirante::{Application, Config, adapters::db::Db};
use reqwest::{Response, Url};
use secrecy::SecretString;
use serde_json::Value;
use tempfile::TempDir;

/// The database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Generates, for each `async fn name(backend: Backend)`, a module `name` with two tests,
/// `on_sqlite` and `on_postgres`, so every API test runs on both databases:
/// `items::filtering_by_state_returns_only_that_state::on_postgres`.
macro_rules! on_both_databases {
    ($( $(#[$meta:meta])* async fn $name:ident($backend:ident: Backend) $body:block )*) => {
        $(
            $(#[$meta])*
            mod $name {
                use super::*;

                async fn run($backend: $crate::helpers::Backend) $body

                #[tokio::test]
                async fn on_sqlite() {
                    run($crate::helpers::Backend::Sqlite).await
                }

                #[tokio::test]
                async fn on_postgres() {
                    run($crate::helpers::Backend::Postgres).await
                }
            }
        )*
    };
}

/// The catalog a test server starts with.
pub enum CatalogSetup {
    /// [`test_catalog`] written to a temp directory.
    Small,
    /// No catalog directory: the demo catalog, read from the local monorepo the server
    /// creates in its data directory.
    Embedded,
}

/// A running server and what the test needs to talk to it and look behind it.
pub struct TestApp {
    /// `http://127.0.0.1:<port>`.
    pub address: String,
    /// No redirects followed, so a test sees exactly what the server answered; sends an admin's
    /// API token (`Authorization: Bearer`) with every request.
    pub client: reqwest::Client,
    /// The same without credentials.
    pub anonymous: reqwest::Client,
    /// The server's own database pool.
    pub db: Db,
    /// The catalog directory, for tests that change it and reload.
    pub catalog_dir: Option<PathBuf>,
    /// The server's data directory (the local monorepo is `monorepo` in it).
    pub data_dir: PathBuf,
    /// The server's proposing worker, to wake it after writing a request straight to the
    /// database.
    pub worker: std::sync::Arc<mirante::app::selfservice::worker::Worker>,
    /// The self-service operations of the portal (for the expiry sweep's tests).
    pub selfservice: std::sync::Arc<mirante::app::selfservice::service::SelfService>,
    /// `http://<metrics address>` when the test configured `metrics_bind`.
    pub metrics_address: Option<String>,
    /// The configuration the server was built with, for [`TestApp::restart`].
    config: Config,
    /// Stops the server: sent by [`TestApp::restart`], dropped with the app.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The server's run, which ends once it has stopped.
    running: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    _catalog_dir: Option<TempDir>,
    _data_dir: TempDir,
    // Dropped last: drops the PostgreSQL database after the server's pool is gone from use.
    _pg: Option<PgTestDatabase>,
}

impl TestApp {
    /// `GET` a path.
    pub async fn get(&self, path: &str) -> Response {
        self.client
            .get(format!("{}{path}", self.address))
            .send()
            .await
            .expect("request failed")
    }

    /// A GitHub pull request webhook with a signature no secret made, sent without
    /// credentials.
    pub async fn forged_webhook(&self) -> Response {
        self.anonymous
            .post(format!("{}/api/v1/forge/webhook", self.address))
            .header("x-hub-signature-256", "sha256=00")
            .header("x-github-event", "pull_request")
            .body(r#"{"action":"closed"}"#)
            .send()
            .await
            .expect("request failed")
    }

    /// A session cookie (`name=value; …`) for the demo user `user`, for clients that send
    /// their own headers.
    pub async fn dev_cookie(&self, user: &str) -> String {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let response = client
            .post(format!("{}/auth/dev", self.address))
            .header(reqwest::header::ORIGIN, &self.address)
            .form(&[("user", user), ("next", "/")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 303, "dev sign-in as {user}");
        response
            .headers()
            .get_all(reqwest::header::SET_COOKIE)
            .iter()
            .map(|c| c.to_str().unwrap().split(';').next().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Sends `method target` exactly as written (no client tidies `//`, `.` or `%2e` away) with
    /// these extra header lines; answers the status, the `Location` and the body.
    pub async fn raw(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> RawResponse {
        self.raw_with_body(method, target, headers, "").await
    }

    /// [`TestApp::raw`] with a form body.
    pub async fn raw_with_body(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        form: &str,
    ) -> RawResponse {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let host = self.address.trim_start_matches("http://");
        let mut stream = tokio::net::TcpStream::connect(host).await.unwrap();
        let mut request = format!("{method} {target} HTTP/1.1\r\nConnection: close\r\n");
        if !headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("host"))
        {
            request.push_str(&format!("Host: {host}\r\n"));
        }
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        if !form.is_empty() {
            request.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n{form}", form.len()));
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        let answer = String::from_utf8_lossy(&answer).into_owned();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {head:?}"));
        let header = |name: &str| {
            head.lines().find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
            })
        };
        RawResponse {
            status,
            set_cookie: header("set-cookie"),
            location: header("location"),
            allow: header("allow"),
            body: body.to_owned(),
        }
    }

    /// `GET` a path and parse the JSON body, asserting the status.
    pub async fn get_json(&self, path: &str, status: u16) -> Value {
        let response = self.get(path).await;
        assert_eq!(response.status().as_u16(), status, "GET {path}");
        response.json().await.expect("body is not JSON")
    }

    /// A client with a cookie jar, no redirects, and this portal's `Origin` on every request,
    /// as a browser on one of its pages.
    pub fn browser(&self) -> reqwest::Client {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::ORIGIN, self.address.parse().unwrap());
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .cookie_store(true)
            .default_headers(headers)
            .build()
            .unwrap()
    }

    /// A browser signed in through the development sign-in as `ada` (admin) or `rui`
    /// (researcher).
    pub async fn dev_browser(&self, user: &str) -> reqwest::Client {
        let browser = self.browser();
        let response = browser
            .post(format!("{}/auth/dev", self.address))
            .form(&[("user", user), ("next", "/")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 303, "dev sign-in as {user}");
        browser
    }

    /// `POST` JSON to a path with `client`, and parse the answer, asserting the status.
    pub async fn post_json(
        &self,
        client: &reqwest::Client,
        path: &str,
        body: &Value,
        status: u16,
    ) -> Value {
        self.post_json_keyed(client, path, body, None, status).await
    }

    /// [`TestApp::post_json`] with an `Idempotency-Key` header.
    pub async fn post_json_with_key(
        &self,
        client: &reqwest::Client,
        path: &str,
        body: &Value,
        key: &str,
        status: u16,
    ) -> Value {
        self.post_json_keyed(client, path, body, Some(key), status)
            .await
    }

    async fn post_json_keyed(
        &self,
        client: &reqwest::Client,
        path: &str,
        body: &Value,
        key: Option<&str>,
        status: u16,
    ) -> Value {
        let mut post = client.post(format!("{}{path}", self.address)).json(body);
        if let Some(key) = key {
            post = post.header("Idempotency-Key", key);
        }
        let response = post.send().await.expect("request failed");
        let got = response.status().as_u16();
        let text = response.text().await.unwrap();
        assert_eq!(got, status, "POST {path}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// `GET` a path with `client` and parse the answer, asserting the status.
    pub async fn get_json_as(&self, client: &reqwest::Client, path: &str, status: u16) -> Value {
        let response = client
            .get(format!("{}{path}", self.address))
            .send()
            .await
            .expect("request failed");
        let got = response.status().as_u16();
        let text = response.text().await.unwrap();
        assert_eq!(got, status, "GET {path}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// A client that sends `token` as `Authorization: Bearer`.
    pub fn with_token(&self, token: &str) -> reqwest::Client {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {token}").parse().unwrap(),
        );
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .default_headers(headers)
            .build()
            .unwrap()
    }

    /// `POST` to a path with an empty body.
    pub async fn post(&self, path: &str) -> Response {
        self.client
            .post(format!("{}{path}", self.address))
            .send()
            .await
            .expect("request failed")
    }

    /// Writes (or overwrites) a file of the catalog directory.
    pub fn write_catalog_file(&self, name: &str, contents: &str) {
        let dir = self
            .catalog_dir
            .as_ref()
            .expect("this app reads the embedded catalog");
        std::fs::write(dir.join(name), contents).expect("cannot write catalog file");
    }
}

/// Starts a server on `backend` with the small test catalog.
/// What [`TestApp::raw`] read back.
#[derive(Debug)]
pub struct RawResponse {
    /// The status code.
    pub status: u16,
    /// The `Location` header.
    pub location: Option<String>,
    /// The `Allow` header.
    pub allow: Option<String>,
    /// The first `Set-Cookie` header.
    pub set_cookie: Option<String>,
    /// The body as sent (chunked bodies keep their chunk sizes).
    pub body: String,
}

pub async fn spawn_app(backend: Backend) -> TestApp {
    spawn_app_with(backend, CatalogSetup::Small).await
}

/// A configuration for a test: port 0, a temp data dir, no timer reloads, no live checks.
pub async fn test_config(backend: Backend, data_dir: &Path) -> (Config, Option<PgTestDatabase>) {
    init_logging();
    let (database_url, pg) = match backend {
        Backend::Sqlite => (
            format!("sqlite://{}", data_dir.join("mirante.db").display()),
            None,
        ),
        Backend::Postgres => {
            let pg = PgTestDatabase::create().await;
            (pg.url.clone(), Some(pg))
        }
    };
    let config = Config {
        bind: "127.0.0.1:0".parse().unwrap(),
        data_dir: data_dir.to_owned(),
        database_url: Some(SecretString::from(database_url)),
        database_max_connections: 4,
        catalog_refresh_secs: 0,
        // Live checks only where a test turns them on: the demo catalog probes real hosts.
        probe_interval_secs: 0,
        // A restart in a test does not wait for a load balancer.
        shutdown_delay_secs: 0,
        // Replicas in a test follow each other's reloads within a second.
        replica_heartbeat_secs: 1,
        session_key: Some(SecretString::from(
            "test-session-key-0123456789abcdef0123456789",
        )),
        ..Config::default()
    };
    (config, pg)
}

/// Starts a server on `backend` with the given catalog.
pub async fn spawn_app_with(backend: Backend, catalog: CatalogSetup) -> TestApp {
    spawn_configured(backend, catalog, |_, _| {}).await
}

/// Who the portal's e-mails come from in the tests.
pub const MAIL_FROM: &str = "Mirante <portal@mirante.test>";

/// The app sending e-mail to `smtp` (a [`crate::mail::MailSink`]'s URL, or an address where
/// nothing listens) from [`MAIL_FROM`], configured further by `configure`.
pub async fn spawn_with_mail(
    backend: Backend,
    smtp: String,
    configure: impl FnOnce(&mut Config, u16),
) -> TestApp {
    spawn_configured(backend, CatalogSetup::Embedded, move |c, port| {
        c.smtp_url = Some(secrecy::SecretString::from(smtp));
        c.mail_from = Some(MAIL_FROM.to_owned());
        configure(c, port);
    })
    .await
}

/// Starts a server with the small test catalog after `configure` has adjusted its
/// configuration; `configure` also learns the port the server will listen on (to start an
/// OpenID provider that redirects to it).
pub async fn spawn_configured(
    backend: Backend,
    catalog: CatalogSetup,
    configure: impl FnOnce(&mut Config, u16),
) -> TestApp {
    let data_dir = TempDir::new().unwrap();
    let (mut config, pg) = test_config(backend, data_dir.path()).await;
    let catalog_dir = match catalog {
        CatalogSetup::Small => Some(write_catalog(&test_catalog())),
        CatalogSetup::Embedded => None,
    };
    config.catalog = catalog_dir.as_ref().map(|d| d.path().to_owned());

    start(config, configure, catalog_dir, data_dir, pg).await
}

/// An address that refuses every connection for as long as the returned
/// socket lives. The socket is bound but never listens, so no other server
/// started by a test running alongside can take the port.
pub fn refusing_address() -> (tokio::net::TcpSocket, std::net::SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let address = socket.local_addr().unwrap();
    (socket, address)
}

/// Builds and runs a server with `config` after `configure`, on a fresh port.
async fn start(
    mut config: Config,
    configure: impl FnOnce(&mut Config, u16),
    catalog_dir: Option<TempDir>,
    data_dir: TempDir,
    pg: Option<PgTestDatabase>,
) -> TestApp {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    configure(&mut config, port);
    let app = Application::build_with_listener(config.clone(), listener)
        .await
        .expect("the server failed to build");
    let address = format!("http://127.0.0.1:{port}");
    let db = app.state().db.clone();
    let worker = app.state().worker.clone();
    let selfservice = app.state().selfservice.clone();
    let metrics_address = app.metrics_addr().map(|a| format!("http://{a}"));
    // Runs until the app is restarted or dropped; no signal handling in tests.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(app.run_until(async move {
        let _ = stopped.await;
    }));
    let token = seed_token(&db, "test-admin", &["portal-admins"]).await;
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );

    TestApp {
        address,
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .default_headers(headers)
            .build()
            .unwrap(),
        anonymous: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        db,
        catalog_dir: catalog_dir.as_ref().map(|d| d.path().to_owned()),
        data_dir: data_dir.path().to_owned(),
        worker,
        selfservice,
        metrics_address,
        config,
        stop: Some(stop),
        running: Some(running),
        _catalog_dir: catalog_dir,
        _data_dir: data_dir,
        _pg: pg,
    }
}

impl TestApp {
    /// A second server on the same database, catalog and forge settings, with its own port
    /// and data directory, after `configure`: another replica of the portal. It lives as long
    /// as the handle; `self` must outlive it (it owns the files both read).
    pub async fn replica(&self, configure: impl FnOnce(&mut Config, u16)) -> TestApp {
        let mut config = self.config.clone();
        config.bind = "127.0.0.1:0".parse().unwrap();
        let data_dir = TempDir::new().unwrap();
        start(config, configure, None, data_dir, None).await
    }

    /// Stops the server, waits until it has, and starts a new one on the same data directory,
    /// database and catalog, with its configuration adjusted by `configure` (on a new port):
    /// a portal restarted mid-way. Clients of the old server must sign in again.
    pub async fn restart(mut self, configure: impl FnOnce(&mut Config, u16)) -> TestApp {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(running) = self.running.take() {
            running
                .await
                .expect("the server's run panicked")
                .expect("the server did not stop cleanly");
        }
        let mut config = self.config.clone();
        config.bind = "127.0.0.1:0".parse().unwrap();
        start(
            config,
            configure,
            self._catalog_dir.take(),
            std::mem::replace(&mut self._data_dir, TempDir::new().unwrap()),
            self._pg.take(),
        )
        .await
    }
}

/// A user in `groups` with a personal API token, written straight to the database; returns the
/// token.
pub async fn seed_token(db: &Db, username: &str, groups: &[&str]) -> String {
    seed_token_until(
        db,
        username,
        groups,
        chrono::Utc::now() + chrono::Duration::days(90),
    )
    .await
}

/// [`seed_token`] for a token that works until `expires_at`.
pub async fn seed_token_until(
    db: &Db,
    username: &str,
    groups: &[&str],
    expires_at: chrono::DateTime<chrono::Utc>,
) -> String {
    let groups: Vec<String> = groups.iter().map(|g| (*g).to_owned()).collect();
    let user = db
        .upsert_user(&mirante::adapters::db::NewUser {
            issuer: "test",
            subject: username,
            username,
            name: username,
            email: None,
            groups: &groups,
            at: chrono::Utc::now(),
        })
        .await
        .unwrap();
    let token = format!("mrt_test_{}", uuid::Uuid::new_v4().simple());
    db.create_api_token(
        user,
        "tests",
        &mirante::http::auth::token_hash(&token),
        chrono::Utc::now(),
        expires_at,
        None,
    )
    .await
    .unwrap();
    token
}

/// Commits on the monorepo's `main`, as someone working on it outside the portal would:
/// `(path, Some(content))` writes a file, `(path, None)` removes a file or a folder. Returns the
/// commit's id.
pub fn commit_on_main(monorepo: &Path, message: &str, changes: &[(&str, Option<&str>)]) -> String {
    let repo = git2::Repository::open(monorepo).unwrap();
    let head = repo
        .find_reference("refs/heads/main")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    let mut update = git2::build::TreeUpdateBuilder::new();
    for (path, content) in changes {
        match content {
            Some(content) => {
                let blob = repo.blob(content.as_bytes()).unwrap();
                update.upsert(*path, blob, git2::FileMode::Blob)
            }
            None => update.remove(*path),
        };
    }
    let tree = repo
        .find_tree(update.create_updated(&repo, &head.tree().unwrap()).unwrap())
        .unwrap();
    let sig = git2::Signature::now("Ada Lima", "ada@infra.example.org").unwrap();
    repo.commit(
        Some("refs/heads/main"),
        &sig,
        &sig,
        message,
        &tree,
        &[&head],
    )
    .unwrap()
    .to_string()
}

/// Writes catalog files to a new temp directory.
pub fn write_catalog(files: &[(&str, String)]) -> TempDir {
    let dir = TempDir::new().unwrap();
    for (name, contents) in files {
        std::fs::write(dir.path().join(name), contents).unwrap();
    }
    dir
}

/// Logs to the test output when `TEST_LOG` is set (`TEST_LOG=1 cargo test -p mirante-tests`).
fn init_logging() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("TEST_LOG").is_some() {
            let _logs = mirante::telemetry::init(mirante::config::LogFormat::Text);
        }
    });
}

/// A PostgreSQL database made for one test, dropped (best effort) when the test ends.
pub struct PgTestDatabase {
    admin_url: String,
    name: String,
    /// URL of the test database.
    pub url: String,
}

impl PgTestDatabase {
    /// Creates `mirante_test_<random>` on the server at `MIRANTE_TEST_PG_URL`
    /// (default `postgres://postgres@127.0.0.1:5432/postgres`).
    pub async fn create() -> Self {
        let admin_url = std::env::var("MIRANTE_TEST_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
        let name = format!("mirante_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = admin_connection(&admin_url).await;
        // language=postgresql
        sqlx::query(&format!(r#"create database "{name}""#))
            .execute(&mut admin)
            .await
            .expect("cannot create the test database");
        let mut url = Url::parse(&admin_url).expect("MIRANTE_TEST_PG_URL is not a URL");
        url.set_path(&name);
        PgTestDatabase {
            admin_url,
            name,
            url: url.to_string(),
        }
    }
}

async fn admin_connection(admin_url: &str) -> sqlx::PgConnection {
    use sqlx::Connection;
    sqlx::PgConnection::connect(admin_url)
        .await
        .unwrap_or_else(|e| {
            panic!("cannot reach PostgreSQL at MIRANTE_TEST_PG_URL ({admin_url}): {e}")
        })
}

impl Drop for PgTestDatabase {
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let name = self.name.clone();
        // Drop runs inside the test's runtime, which cannot block on its own futures: use a
        // thread with a runtime of its own. `with (force)` ends the server's connections.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async move {
                use sqlx::Connection;
                let mut admin = sqlx::PgConnection::connect(&admin_url).await.ok()?;
                // language=postgresql
                sqlx::query(&format!(r#"drop database if exists "{name}" with (force)"#))
                    .execute(&mut admin)
                    .await
                    .ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(_))) {
            eprintln!("warning: could not drop test database {}", self.name);
        }
    }
}

/// The small catalog most tests run on: two sites, a layer with a sub-layer, a capability,
/// six items covering every state and some qualifiers, one decision, one task.
pub fn test_catalog() -> Vec<(&'static str, String)> {
    vec![
        ("platform.yaml", PLATFORM.to_owned()),
        ("layers.yaml", LAYERS.to_owned()),
        ("items.yaml", ITEMS.to_owned()),
    ]
}

/// Ids of the test catalog's items in the order the API lists them: by layer (ordered layers
/// bottom-up, then capabilities), and as written within a layer.
pub const ITEM_IDS: [&str; 6] = [
    "hypervisor-north",
    "hypervisor-south",
    "storage-replication",
    "tape-backup",
    "gpu-workspace",
    "vault",
];

const PLATFORM: &str = r#"platform:
  name: Test platform
  description: A small catalog for the API tests.
sites:
  - id: north
    name: North
    location: Up there
    host_groups:
      - id: north-pve
        name: North hypervisors
        pattern: pve-n-*
        count: 2
  - id: south
    name: South
hosts:
  - id: pve-n-01
    site: north
    group: north-pve
    tier: "1"
    roles: [hypervisor]
  - id: gpu-s-01
    site: south
    roles: [gpu]
    gpus:
      - model: NVIDIA RTX A5000
        count: 1
"#;

const LAYERS: &str = r#"layers:
  - id: l0
    kind: layer
    number: "0"
    name: Hardware and virtualisation
    role: Runs every virtual machine.
  - id: l8
    kind: layer
    number: "8"
    name: Workloads
  - id: l8a
    kind: layer
    number: 8a
    name: Research workloads
    parent: l8
  - id: secrets
    kind: capability
    name: Secrets
"#;

pub const ITEMS: &str = r#"items:
  - id: hypervisor-north
    name: Hypervisor cluster North
    kind: component
    layer: l0
    sites: [north]
    hosts: [pve-n-01]
    state: validated
    notes: Two hosts in production.
    evidence:
      - kind: reference
        text: In production since spring.
      - kind: argocd
        app: hypervisor-north
    decisions: [hypervisor-choice]
  - id: hypervisor-south
    name: Hypervisor cluster South
    kind: component
    layer: l0
    sites: [south]
    state: declared
    qualifier: partial
    iac:
      path: pulumi/south/cluster.ts
  - id: storage-replication
    name: Storage replication between sites
    kind: component
    layer: l0
    sites: [north, south]
    state: desired
    depends_on: [hypervisor-north, hypervisor-south]
  - id: gpu-workspace
    name: GPU workspaces
    kind: workload
    layer: l8a
    sites: [south]
    hosts: [gpu-s-01]
    state: desired
    qualifier: in_progress
    depends_on: [storage-replication]
    tags: [gpu, research]
  - id: vault
    name: Secret store
    kind: capability
    layer: secrets
    state: validated
    evidence:
      - kind: attestation
        by: ana
        date: "2026-10-01"
        what: Read a secret from a pod.
  - id: tape-backup
    name: Tape backup
    kind: component
    layer: l0
    sites: [north]
    state: desired
    qualifier: rejected
    reason: No tape library on either site.
decisions:
  - id: hypervisor-choice
    topic: Hypervisor
    decision: Proxmox on every site
    rejected: VMware
    reason: Licence cost.
    layers: [l0]
    items: [hypervisor-south]
tasks:
  - id: replicate-storage
    title: Set up replication between the two sites
    layer: l0
    items: [storage-replication]
    priority: critical
    after: [hypervisor-south]
"#;

/// The ids of the items in a list response, in order.
pub fn ids(body: &Value) -> Vec<&str> {
    body["items"]
        .as_array()
        .expect("no items array")
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect()
}
