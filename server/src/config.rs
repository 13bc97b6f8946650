//! Configuration: defaults in code, then an optional `mirante.toml`, then the environment.
//!
//! | key                     | environment                    | default                              |
//! |-------------------------|--------------------------------|--------------------------------------|
//! | `bind`                  | `MIRANTE_BIND`                 | `127.0.0.1:3000`                     |
//! | `public_url`            | `MIRANTE_PUBLIC_URL`           | `http://<bind>`                      |
//! | `data_dir`              | `MIRANTE_DATA_DIR`             | `./data`                             |
//! | `database_url`          | `DATABASE_URL`                 | `sqlite://<data_dir>/mirante.db`     |
//! | `database_max_connections` | `MIRANTE_DATABASE_MAX_CONNECTIONS` | `10`                      |
//! | `catalog`               | `MIRANTE_CATALOG`              | the demo catalog built into the binary |
//! | `catalog_refresh_secs`  | `MIRANTE_CATALOG_REFRESH_SECS` | `300` (`0` turns the timer off)      |
//! | `request_timeout_secs`  | `MIRANTE_REQUEST_TIMEOUT_SECS` | `30`                                 |
//! | `replica_heartbeat_secs` | `MIRANTE_REPLICA_HEARTBEAT_SECS` | `5`: how often this replica writes which catalog it serves and looks whether another was asked to reload (`0`: never) |
//! | `shutdown_delay_secs`   | `MIRANTE_SHUTDOWN_DELAY_SECS`  | `5`: on SIGTERM, seconds `/readyz` answers 503 while requests are still served, before the listener closes (ctrl-c skips it) |
//! | `header_read_timeout_secs` | `MIRANTE_HEADER_READ_TIMEOUT_SECS` | `10`: a connection that sends no complete request head for this long (slow headers, an idle keep-alive) is closed |
//! | `max_connections`       | `MIRANTE_MAX_CONNECTIONS`      | `1024`: connections served at once; further ones wait in the listen queue |
//! | `log_format`            | `MIRANTE_LOG_FORMAT`           | `text` (or `json`)                   |
//! | `oidc_issuer`           | `MIRANTE_OIDC_ISSUER`          | unset: the development sign-in       |
//! | `oidc_client_id`        | `MIRANTE_OIDC_CLIENT_ID`       | required with an issuer              |
//! | `oidc_client_secret`    | `MIRANTE_OIDC_CLIENT_SECRET`   | required with an issuer (secret)     |
//! | `admin_groups`          | `MIRANTE_ADMIN_GROUPS`         | `portal-admins` (comma-separated)    |
//! | `session_key`           | `MIRANTE_SESSION_KEY`          | generated in `data_dir` with SQLite; required with PostgreSQL (secret) |
//! | `session_idle_secs`     | `MIRANTE_SESSION_IDLE_SECS`    | `28800` (8 h)                        |
//! | `session_max_secs`      | `MIRANTE_SESSION_MAX_SECS`     | `604800` (7 days)                    |
//! | `public_catalog`        | `MIRANTE_PUBLIC_CATALOG`       | `false`                              |
//! | `forge`                 | `MIRANTE_FORGE`                | `local` (or `github`, `gitlab`, `gitea`) |
//! | `monorepo`              | `MIRANTE_MONOREPO`             | `<data_dir>/monorepo` (local); `owner/repo` or a project path on a hosted forge |
//! | `forge_url`             | `MIRANTE_FORGE_URL`            | the forge's public API (hosted forges) |
//! | `forge_token`           | `MIRANTE_FORGE_TOKEN`          | required with a hosted forge (secret) |
//! | `webhook_secret`        | `MIRANTE_WEBHOOK_SECRET`       | unset: webhooks are refused (secret) |
//! | `base_branch`           | `MIRANTE_BASE_BRANCH`          | `main`                               |
//! | `monorepo_catalog`      | `MIRANTE_MONOREPO_CATALOG`     | `catalog`: the catalog's folder in the monorepo (read there with the local forge; where catalog changes are proposed on any forge) |
//! | `monorepo_templates`    | `MIRANTE_MONOREPO_TEMPLATES`   | `self-service/templates`: the monorepo folder whose templates join the built-in ones (any forge; empty: none) |
//! | `forge_poll_secs`       | `MIRANTE_FORGE_POLL_SECS`      | `60`: how often open pull requests are checked (`0`: off) |
//! | `worker_lease_secs`     | `MIRANTE_WORKER_LEASE_SECS`    | `20`: how long a claimed job is a worker's before another may take it (renewed every third of it while the worker works) |
//! | `worker_id`             | `MIRANTE_WORKER_ID`            | the host name: who holds a job's lease; stable across restarts, so a restarted replica takes its own jobs back at once (give each process on one host its own) |
//! | `worker_retry_secs`     | `MIRANTE_WORKER_RETRY_SECS`    | `5`: first wait after a retryable forge error, doubled each time |
//! | `worker_retry_max_secs` | `MIRANTE_WORKER_RETRY_MAX_SECS` | `600`: the longest wait between two attempts |
//! | `iac_root`              | `MIRANTE_IAC_ROOT`             | unset: IaC references of a catalog read from a directory are not checked (a catalog read from git is checked at its commit) |
//! | `attestation_max_age_days` | `MIRANTE_ATTESTATION_MAX_AGE_DAYS` | `180`                       |
//! | `probe_interval_secs`   | `MIRANTE_PROBE_INTERVAL_SECS`  | `300` (`0` turns live checks off)    |
//! | `probe_timeout_secs`    | `MIRANTE_PROBE_TIMEOUT_SECS`   | `10`                                 |
//! | `probe_concurrency`     | `MIRANTE_PROBE_CONCURRENCY`    | `8`                                  |
//! | `token_max_days`        | `MIRANTE_TOKEN_MAX_DAYS`       | `365`: the longest an API token may be made to work (new tokens default to 90 days) |
//! | `sign_in_per_minute`    | `MIRANTE_SIGN_IN_PER_MINUTE`   | `30`: sign-in attempts a client may make per minute; more answer 429 (`0`: no limit) |
//! | `token_checks_per_minute` | `MIRANTE_TOKEN_CHECKS_PER_MINUTE` | `600`: API requests with a bearer token a client may send per minute (`0`: no limit) |
//! | `webhooks_per_minute`   | `MIRANTE_WEBHOOKS_PER_MINUTE`  | `120`: webhook deliveries a client may send per minute (`0`: no limit) |
//! | `trusted_proxies`       | `MIRANTE_TRUSTED_PROXIES`      | empty: the connection's peer is the client; comma-separated addresses and networks of reverse proxies whose `X-Forwarded-For` names the client (ADR 0019) |
//! | `allow_self_approval`   | `MIRANTE_ALLOW_SELF_APPROVAL`  | unset: `false` with an OpenID provider (an admin neither approves nor merges their own request: another admin does), `true` with the development sign-in (its one demo admin) |
//! | `probe_allow`           | `MIRANTE_PROBE_ALLOW`          | empty: probes never reach loopback, link-local (cloud metadata) or unspecified addresses; comma-separated host names, addresses and networks (`localhost,169.254.0.0/16`) they may reach |
//! | `argocd_url`            | `MIRANTE_ARGOCD_URL`           | unset: Argo CD evidence is not read and merged resources are not followed past the merge |
//! | `argocd_token`          | `MIRANTE_ARGOCD_TOKEN`         | required with `argocd_url` (secret)  |
//! | `argocd_poll_secs`      | `MIRANTE_ARGOCD_POLL_SECS`     | `15`: how often deployments on their way are checked in Argo CD, and the first wait after an error |
//! | `argocd_poll_max_secs`  | `MIRANTE_ARGOCD_POLL_MAX_SECS` | `600`: the longest wait after errors in a row, and between two checks of a live or degraded resource |
//! | `metrics_bind`          | `MIRANTE_METRICS_BIND`         | unset: no metrics listener (e.g. `127.0.0.1:9464`: Prometheus text on `/metrics`) |
//! | `smtp_url`              | `MIRANTE_SMTP_URL`             | unset: no e-mail; `smtps://host:465`, `smtp://host:587?tls=required` (STARTTLS), `smtp://host:25` (plain, local relays only); credentials may be in the URL (secret) |
//! | `smtp_username`         | `MIRANTE_SMTP_USERNAME`        | unset: the URL's user, if any        |
//! | `smtp_password`         | `MIRANTE_SMTP_PASSWORD`        | unset: the URL's password, if any (secret) |
//! | `mail_from`             | `MIRANTE_MAIL_FROM`            | required with `smtp_url`: the sender, `Mirante <portal@example.org>` |
//! | `notify_webhook_url`    | `MIRANTE_NOTIFY_WEBHOOK_URL`   | unset: no webhook; an `http(s)://` incoming webhook (Mattermost, Slack) each notice is POSTed to (secret: such URLs carry a token) |
//! | `notify_webhook_secret` | `MIRANTE_NOTIFY_WEBHOOK_SECRET` | unset: unsigned; the key of `X-Mirante-Signature: sha256=<HMAC of the body>` (secret) |
//! | `expiry_sweep_secs`     | `MIRANTE_EXPIRY_SWEEP_SECS`    | `3600`: how often expiry dates are swept (at start-up, then each interval; `0`: off) |
//! | `expiry_removal`        | `MIRANTE_EXPIRY_REMOVAL`       | `propose`: the day after expiry a removal is opened and proposed at once; `approve`: it waits for an admin |
//! | `expiry_notice_days`    | `MIRANTE_EXPIRY_NOTICE_DAYS`   | `7,1`: days before the expiry date at which the owner is told, each once |
//! | `notify_max_attempts`   | `MIRANTE_NOTIFY_MAX_ATTEMPTS`  | `10`: attempts at one message before it is given up (backoff as the worker's: `worker_retry_secs` doubled, at most `worker_retry_max_secs`) |
//!
//! The file is read from `MIRANTE_CONFIG` when set (and must then exist), otherwise from
//! `./mirante.toml` when present. Relative paths are relative to the working directory.

use std::{
    fmt,
    net::SocketAddr,
    path::{Path, PathBuf},
};

use figment::{
    Figment,
    providers::{Env, Format, Toml},
};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use crate::adapters::forge::ForgeKind;
use crate::app::selfservice::expiry::ExpiryRemoval;

/// Environment variable naming the configuration file.
pub const CONFIG_FILE_ENV: &str = "MIRANTE_CONFIG";

/// The configuration file read when [`CONFIG_FILE_ENV`] is unset and the file exists.
pub const DEFAULT_CONFIG_FILE: &str = "mirante.toml";

/// Keys that may come from `MIRANTE_*` variables. Listed so that unrelated variables sharing
/// the prefix (`MIRANTE_CONFIG`, `MIRANTE_TEST_PG_URL`, ...) are not mistaken for settings,
/// while a typo in `mirante.toml` is still an error.
const ENV_KEYS: &[&str] = &[
    "bind",
    "public_url",
    "data_dir",
    "database_max_connections",
    "catalog",
    "catalog_refresh_secs",
    "request_timeout_secs",
    "shutdown_delay_secs",
    "replica_heartbeat_secs",
    "header_read_timeout_secs",
    "max_connections",
    "log_format",
    "oidc_issuer",
    "oidc_client_id",
    "oidc_client_secret",
    "admin_groups",
    "session_key",
    "session_idle_secs",
    "session_max_secs",
    "public_catalog",
    "forge",
    "monorepo",
    "forge_url",
    "forge_token",
    "webhook_secret",
    "base_branch",
    "monorepo_catalog",
    "monorepo_templates",
    "forge_poll_secs",
    "worker_lease_secs",
    "worker_id",
    "worker_retry_secs",
    "worker_retry_max_secs",
    "iac_root",
    "attestation_max_age_days",
    "probe_interval_secs",
    "probe_timeout_secs",
    "probe_concurrency",
    "probe_allow",
    "allow_self_approval",
    "token_max_days",
    "sign_in_per_minute",
    "token_checks_per_minute",
    "webhooks_per_minute",
    "trusted_proxies",
    "argocd_url",
    "argocd_token",
    "argocd_poll_secs",
    "argocd_poll_max_secs",
    "metrics_bind",
    "smtp_url",
    "smtp_username",
    "smtp_password",
    "mail_from",
    "notify_webhook_url",
    "notify_webhook_secret",
    "notify_max_attempts",
    "expiry_sweep_secs",
    "expiry_removal",
    "expiry_notice_days",
];

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// The effective configuration of a Mirante process.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Address the HTTP server listens on.
    #[serde(default = "default_bind")]
    pub bind: SocketAddr,
    /// Address people reach the portal at; `http://<bind>` when unset.
    #[serde(default)]
    pub public_url: Option<String>,
    /// Directory for local state (the default SQLite database).
    #[serde(default = "default_data_dir")]
    pub data_dir: PathBuf,
    /// `sqlite://…` or `postgres://…`; a SQLite file in `data_dir` when unset.
    /// A secret: it may carry a password.
    #[serde(default)]
    pub database_url: Option<SecretString>,
    /// Upper bound of the database connection pool.
    #[serde(default = "default_database_max_connections")]
    pub database_max_connections: u32,
    /// Directory holding the catalog YAML; the built-in demo catalog when unset.
    #[serde(default)]
    pub catalog: Option<PathBuf>,
    /// Seconds between timed catalog reloads; 0 turns the timer off.
    #[serde(default = "default_catalog_refresh_secs")]
    pub catalog_refresh_secs: u64,
    /// Seconds a request may take before it is answered with 408.
    #[serde(default = "default_request_timeout_secs")]
    pub request_timeout_secs: u64,
    /// Seconds between SIGTERM and closing the listener, while `/readyz` answers 503 and
    /// requests are still served, so a load balancer stops sending new ones first.
    #[serde(default = "default_shutdown_delay_secs")]
    pub shutdown_delay_secs: u64,
    /// Seconds between two writes of what this replica serves, each also a look whether
    /// another replica was asked to reload the catalog; 0: never.
    #[serde(default = "default_replica_heartbeat_secs")]
    pub replica_heartbeat_secs: u64,
    /// Seconds a connection may take to send a whole request head, or stay idle between
    /// requests, before it is closed.
    #[serde(default = "default_header_read_timeout_secs")]
    pub header_read_timeout_secs: u64,
    /// Connections served at once; further ones wait in the listen queue until one closes.
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// How log lines are written.
    #[serde(default)]
    pub log_format: LogFormat,
    /// The OpenID issuer (Authentik: `https://<host>/application/o/<slug>/`); the development
    /// sign-in when unset.
    #[serde(default)]
    pub oidc_issuer: Option<String>,
    /// The OpenID client id.
    #[serde(default)]
    pub oidc_client_id: Option<String>,
    /// The OpenID client secret (also the HS256 key when the provider has no signing key).
    #[serde(default)]
    pub oidc_client_secret: Option<SecretString>,
    /// Provider groups whose members are admins, comma-separated.
    #[serde(default = "default_admin_groups")]
    pub admin_groups: String,
    /// Key that signs the session cookie (at least 32 characters).
    #[serde(default)]
    pub session_key: Option<SecretString>,
    /// Seconds without a request after which a session ends.
    #[serde(default = "default_session_idle_secs")]
    pub session_idle_secs: u64,
    /// Seconds after sign-in after which a session ends whatever its use.
    #[serde(default = "default_session_max_secs")]
    pub session_max_secs: u64,
    /// Whether the read-only catalog (pages and API) is readable without signing in.
    #[serde(default)]
    pub public_catalog: bool,
    /// Where the devops monorepo lives and pull requests are opened.
    #[serde(default)]
    pub forge: ForgeKind,
    /// The monorepo: a local path (local forge; `<data_dir>/monorepo` when unset), or
    /// `owner/repo` / a project path on a hosted forge.
    #[serde(default)]
    pub monorepo: Option<String>,
    /// The hosted forge's API base URL (GitHub Enterprise, self-hosted GitLab or Forgejo).
    #[serde(default)]
    pub forge_url: Option<String>,
    /// The token the portal uses on a hosted forge.
    #[serde(default)]
    pub forge_token: Option<SecretString>,
    /// The secret forge webhooks are signed with; webhooks are refused while it is unset.
    #[serde(default)]
    pub webhook_secret: Option<SecretString>,
    /// The monorepo branch requests start from and are merged into.
    #[serde(default = "default_base_branch")]
    pub base_branch: String,
    /// The catalog's folder in the monorepo: the local forge reads the catalog there, and
    /// admins' catalog changes are proposed against its files on any forge.
    #[serde(default = "default_monorepo_catalog")]
    pub monorepo_catalog: String,
    /// The folder of the monorepo's base branch whose self-service templates join (and
    /// replace, by id) the built-in ones, on any forge; empty: none.
    #[serde(default = "default_monorepo_templates")]
    pub monorepo_templates: String,
    /// Seconds between two checks of the open pull requests (the webhook's fallback); 0: off.
    #[serde(default = "default_forge_poll_secs")]
    pub forge_poll_secs: u64,
    /// Seconds a worker holds a claimed job before another worker may take it over.
    #[serde(default = "default_worker_lease_secs")]
    pub worker_lease_secs: u64,
    /// Who holds the leases of this process's worker; the host name when unset. A restarted
    /// process with the same identity releases the leases it held, so its jobs go on at once.
    #[serde(default)]
    pub worker_id: Option<String>,
    /// Seconds to wait after the first retryable forge error; doubled after each further one.
    #[serde(default = "default_worker_retry_secs")]
    pub worker_retry_secs: u64,
    /// The longest wait between two attempts.
    #[serde(default = "default_worker_retry_max_secs")]
    pub worker_retry_max_secs: u64,
    /// A checkout of the devops monorepo that IaC references are checked against.
    #[serde(default)]
    pub iac_root: Option<PathBuf>,
    /// Attestations older than this many days are reported as stale.
    #[serde(default = "default_attestation_max_age_days")]
    pub attestation_max_age_days: u32,
    /// Seconds between runs of the live checks (HTTP probes, Argo CD); 0 turns them off.
    #[serde(default = "default_probe_interval_secs")]
    pub probe_interval_secs: u64,
    /// Seconds one probe or Argo CD request may take.
    #[serde(default = "default_probe_timeout_secs")]
    pub probe_timeout_secs: u64,
    /// Live checks in flight at once, at most.
    #[serde(default = "default_probe_concurrency")]
    pub probe_concurrency: usize,
    /// Internal hosts, addresses and networks probes may reach, comma-separated (see
    /// `probes::guard`).
    #[serde(default)]
    pub probe_allow: String,
    /// Whether an admin may approve and merge their own requests; unset, only with the
    /// development sign-in (see [`Config::self_approval`]).
    #[serde(default)]
    pub allow_self_approval: Option<bool>,
    /// The longest, in days, an API token may be made to work.
    #[serde(default = "default_token_max_days")]
    pub token_max_days: u32,
    /// Sign-in attempts a client may make per minute (`0`: no limit).
    #[serde(default = "default_sign_in_per_minute")]
    pub sign_in_per_minute: u32,
    /// API requests with a bearer token a client may send per minute (`0`: no limit).
    #[serde(default = "default_token_checks_per_minute")]
    pub token_checks_per_minute: u32,
    /// Webhook deliveries a client may send per minute (`0`: no limit).
    #[serde(default = "default_webhooks_per_minute")]
    pub webhooks_per_minute: u32,
    /// Reverse proxies whose `X-Forwarded-For` names the client: comma-separated addresses
    /// and networks.
    #[serde(default)]
    pub trusted_proxies: String,
    /// Argo CD's address (`https://argocd.example.org`); Argo CD evidence is not read when unset.
    #[serde(default)]
    pub argocd_url: Option<String>,
    /// An Argo CD API token (a project or account token with read access to applications).
    #[serde(default)]
    pub argocd_token: Option<SecretString>,
    /// Seconds between two checks in Argo CD of deployments on their way (at least 1), and
    /// the first wait after an error.
    #[serde(default = "default_argocd_poll_secs")]
    pub argocd_poll_secs: u64,
    /// The longest wait after errors in a row, and between two checks of a settled (live or
    /// degraded) deployment.
    #[serde(default = "default_argocd_poll_max_secs")]
    pub argocd_poll_max_secs: u64,
    /// Where `/metrics` is served, apart from the public listener; none when unset.
    #[serde(default)]
    pub metrics_bind: Option<SocketAddr>,
    /// The mail server (`smtps://…`, `smtp://…?tls=required`); no e-mail when unset. A secret:
    /// it may carry credentials.
    #[serde(default)]
    pub smtp_url: Option<SecretString>,
    /// The SMTP user, when not in the URL.
    #[serde(default)]
    pub smtp_username: Option<String>,
    /// The SMTP password, when not in the URL.
    #[serde(default)]
    pub smtp_password: Option<SecretString>,
    /// The sender of the portal's e-mail (`Mirante <portal@example.org>`).
    #[serde(default)]
    pub mail_from: Option<String>,
    /// The incoming webhook every notice is POSTed to; none when unset. A secret: such URLs
    /// carry a token.
    #[serde(default)]
    pub notify_webhook_url: Option<SecretString>,
    /// The key the webhook's body is signed with (`X-Mirante-Signature`).
    #[serde(default)]
    pub notify_webhook_secret: Option<SecretString>,
    /// Attempts at one message before it is given up.
    #[serde(default = "default_notify_max_attempts")]
    pub notify_max_attempts: u32,
    /// Seconds between two expiry sweeps; 0: off.
    #[serde(default = "default_expiry_sweep_secs")]
    pub expiry_sweep_secs: u64,
    /// What the day after a resource's expiry does.
    #[serde(default = "default_expiry_removal")]
    pub expiry_removal: ExpiryRemoval,
    /// Days before the expiry date at which the owner is told, comma-separated.
    #[serde(default = "default_expiry_notice_days")]
    pub expiry_notice_days: String,
}

fn default_expiry_sweep_secs() -> u64 {
    3600
}

fn default_expiry_removal() -> ExpiryRemoval {
    ExpiryRemoval::Propose
}

fn default_expiry_notice_days() -> String {
    "7,1".to_owned()
}

fn default_notify_max_attempts() -> u32 {
    10
}

fn default_argocd_poll_secs() -> u64 {
    15
}

fn default_argocd_poll_max_secs() -> u64 {
    600
}

fn default_probe_interval_secs() -> u64 {
    300
}

fn default_probe_timeout_secs() -> u64 {
    10
}

fn default_probe_concurrency() -> usize {
    8
}

fn default_monorepo_catalog() -> String {
    "catalog".to_owned()
}

fn default_monorepo_templates() -> String {
    "self-service/templates".to_owned()
}

fn default_base_branch() -> String {
    "main".to_owned()
}

fn default_forge_poll_secs() -> u64 {
    60
}

fn default_worker_lease_secs() -> u64 {
    20
}

fn default_worker_retry_secs() -> u64 {
    5
}

fn default_worker_retry_max_secs() -> u64 {
    600
}

fn default_attestation_max_age_days() -> u32 {
    mirante_domain::lint::DEFAULT_STALE_AFTER_DAYS
}

fn default_admin_groups() -> String {
    "portal-admins".to_owned()
}

fn default_session_idle_secs() -> u64 {
    8 * 3600
}

fn default_session_max_secs() -> u64 {
    7 * 24 * 3600
}

fn default_bind() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 3000))
}

fn default_data_dir() -> PathBuf {
    PathBuf::from("./data")
}

fn default_database_max_connections() -> u32 {
    10
}

fn default_catalog_refresh_secs() -> u64 {
    300
}

fn default_request_timeout_secs() -> u64 {
    30
}

fn default_shutdown_delay_secs() -> u64 {
    5
}

fn default_replica_heartbeat_secs() -> u64 {
    5
}

fn default_header_read_timeout_secs() -> u64 {
    10
}

fn default_max_connections() -> usize {
    1024
}

fn default_token_max_days() -> u32 {
    365
}

fn default_sign_in_per_minute() -> u32 {
    30
}

fn default_token_checks_per_minute() -> u32 {
    600
}

fn default_webhooks_per_minute() -> u32 {
    120
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: default_bind(),
            public_url: None,
            data_dir: default_data_dir(),
            database_url: None,
            database_max_connections: default_database_max_connections(),
            catalog: None,
            catalog_refresh_secs: default_catalog_refresh_secs(),
            request_timeout_secs: default_request_timeout_secs(),
            shutdown_delay_secs: default_shutdown_delay_secs(),
            replica_heartbeat_secs: default_replica_heartbeat_secs(),
            header_read_timeout_secs: default_header_read_timeout_secs(),
            max_connections: default_max_connections(),
            log_format: LogFormat::default(),
            oidc_issuer: None,
            oidc_client_id: None,
            oidc_client_secret: None,
            admin_groups: default_admin_groups(),
            session_key: None,
            session_idle_secs: default_session_idle_secs(),
            session_max_secs: default_session_max_secs(),
            public_catalog: false,
            forge: ForgeKind::default(),
            monorepo: None,
            forge_url: None,
            forge_token: None,
            webhook_secret: None,
            base_branch: default_base_branch(),
            monorepo_catalog: default_monorepo_catalog(),
            monorepo_templates: default_monorepo_templates(),
            forge_poll_secs: default_forge_poll_secs(),
            worker_lease_secs: default_worker_lease_secs(),
            worker_retry_secs: default_worker_retry_secs(),
            worker_retry_max_secs: default_worker_retry_max_secs(),
            iac_root: None,
            attestation_max_age_days: default_attestation_max_age_days(),
            probe_interval_secs: default_probe_interval_secs(),
            probe_timeout_secs: default_probe_timeout_secs(),
            probe_concurrency: default_probe_concurrency(),
            probe_allow: String::new(),
            allow_self_approval: None,
            token_max_days: default_token_max_days(),
            sign_in_per_minute: default_sign_in_per_minute(),
            token_checks_per_minute: default_token_checks_per_minute(),
            webhooks_per_minute: default_webhooks_per_minute(),
            trusted_proxies: String::new(),
            argocd_url: None,
            argocd_token: None,
            smtp_url: None,
            smtp_username: None,
            smtp_password: None,
            mail_from: None,
            notify_webhook_url: None,
            notify_webhook_secret: None,
            notify_max_attempts: default_notify_max_attempts(),
            expiry_sweep_secs: default_expiry_sweep_secs(),
            expiry_removal: default_expiry_removal(),
            expiry_notice_days: default_expiry_notice_days(),
            argocd_poll_secs: default_argocd_poll_secs(),
            argocd_poll_max_secs: default_argocd_poll_max_secs(),
            metrics_bind: None,
            worker_id: None,
        }
    }
}

/// Why the configuration could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `MIRANTE_CONFIG` names a file that does not exist.
    #[error("configuration file {0} does not exist")]
    MissingFile(PathBuf),
    /// A value is malformed or a key unknown.
    #[error("invalid configuration: {0}")]
    Invalid(#[from] Box<figment::Error>),
    /// The database URL cannot be parsed.
    #[error("invalid database_url: {0}")]
    DatabaseUrl(String),
    /// Sign-in settings are incomplete or unsafe.
    #[error("invalid sign-in configuration: {0}")]
    Auth(String),
    /// Forge settings are incomplete.
    #[error("invalid forge configuration: {0}")]
    Forge(String),
    /// E-mail or webhook settings cannot work.
    #[error("invalid notification configuration: {0}")]
    Notify(String),
}

impl Config {
    /// Reads the configuration from the process environment and the optional file.
    pub fn load() -> Result<Self, ConfigError> {
        let file = match std::env::var_os(CONFIG_FILE_ENV) {
            Some(path) => {
                let path = PathBuf::from(path);
                if !path.is_file() {
                    return Err(ConfigError::MissingFile(path));
                }
                Some(path)
            }
            None => Some(PathBuf::from(DEFAULT_CONFIG_FILE)).filter(|p| p.is_file()),
        };
        Self::from_figment(Self::figment(file.as_deref()))
    }

    /// The layered sources: the file (if any), then `MIRANTE_*` and `DATABASE_URL`.
    /// Defaults are the serde defaults on [`Config`].
    pub fn figment(file: Option<&Path>) -> Figment {
        let mut figment = Figment::new();
        if let Some(file) = file {
            figment = figment.merge(Toml::file_exact(file));
        }
        figment
            .merge(Env::prefixed("MIRANTE_").only(ENV_KEYS))
            .merge(Env::raw().only(&["DATABASE_URL"]))
    }

    /// Extracts and checks a configuration from any figment (tests build their own).
    pub fn from_figment(figment: Figment) -> Result<Self, ConfigError> {
        let config: Config = figment.extract().map_err(Box::new)?;
        // Fail at start, not at first connection, on a URL we cannot even parse.
        config.backend()?;
        Ok(config)
    }

    /// Sign-in settings that cannot work: an issuer without client credentials, a short
    /// session key, the development sign-in on a non-loopback address. Checked when the server
    /// starts (not by `mirante config`, which shows the settings whatever they are).
    pub fn check_auth(&self) -> Result<(), ConfigError> {
        if self.oidc_issuer.is_some() {
            if self.oidc_client_id.as_deref().unwrap_or("").is_empty() {
                return Err(ConfigError::Auth(
                    "MIRANTE_OIDC_ISSUER is set but MIRANTE_OIDC_CLIENT_ID is not".to_owned(),
                ));
            }
            if self
                .oidc_client_secret
                .as_ref()
                .is_none_or(|s| s.expose_secret().is_empty())
            {
                return Err(ConfigError::Auth(
                    "MIRANTE_OIDC_ISSUER is set but MIRANTE_OIDC_CLIENT_SECRET is not".to_owned(),
                ));
            }
        } else if !self.bind.ip().to_canonical().is_loopback() {
            return Err(ConfigError::Auth(format!(
                "the development sign-in (MIRANTE_OIDC_ISSUER unset) is only allowed on a loopback address, not {}; set MIRANTE_OIDC_ISSUER or bind to 127.0.0.1",
                self.bind
            )));
        }
        if let Some(key) = &self.session_key
            && key.expose_secret().len() < 32
        {
            return Err(ConfigError::Auth(
                "MIRANTE_SESSION_KEY must be at least 32 characters".to_owned(),
            ));
        }
        if self.session_key.is_none() && self.backend()? == crate::adapters::db::Backend::Postgres {
            return Err(ConfigError::Auth(
                "MIRANTE_SESSION_KEY is required with PostgreSQL (it is generated and kept in the data directory only for SQLite)".to_owned(),
            ));
        }
        Ok(())
    }

    /// Forge settings that cannot work: a hosted forge without a repository or a token, a
    /// base branch that is not a branch name. Checked when the server starts.
    pub fn check_forge(&self) -> Result<(), ConfigError> {
        if self.base_branch.trim().is_empty()
            || self.base_branch.starts_with(['-', '/'])
            || self
                .base_branch
                .contains([' ', '~', '^', ':', '?', '*', '[', '\\'])
            || self.base_branch.contains("..")
        {
            return Err(ConfigError::Forge(format!(
                "MIRANTE_BASE_BRANCH `{}` is not a branch name",
                self.base_branch
            )));
        }
        let catalog = self.monorepo_catalog.trim_end_matches('/');
        if catalog.is_empty() || !mirante_domain::monorepo::is_safe_path(catalog) {
            return Err(ConfigError::Forge(format!(
                "MIRANTE_MONOREPO_CATALOG `{}` is not a folder inside the monorepo",
                self.monorepo_catalog
            )));
        }
        let folder = self.monorepo_templates.trim_end_matches('/');
        if !folder.is_empty() && !mirante_domain::monorepo::is_safe_path(folder) {
            return Err(ConfigError::Forge(format!(
                "MIRANTE_MONOREPO_TEMPLATES `{}` is not a folder inside the monorepo",
                self.monorepo_templates
            )));
        }
        if self.forge == ForgeKind::Local {
            return Ok(());
        }
        if self.monorepo.as_deref().unwrap_or("").trim().is_empty() {
            return Err(ConfigError::Forge(format!(
                "MIRANTE_FORGE={} needs MIRANTE_MONOREPO (owner/repo or the project path)",
                self.forge
            )));
        }
        if self
            .forge_token
            .as_ref()
            .is_none_or(|t| t.expose_secret().is_empty())
        {
            return Err(ConfigError::Forge(format!(
                "MIRANTE_FORGE={} needs MIRANTE_FORGE_TOKEN",
                self.forge
            )));
        }
        Ok(())
    }

    /// Notification settings that cannot work: an SMTP URL that is not `smtp://` or
    /// `smtps://`, e-mail without a sender, a webhook that is not `http(s)://`. Checked when
    /// the server starts; the messages never carry a secret.
    pub fn check_notify(&self) -> Result<(), ConfigError> {
        if let Some(url) = &self.smtp_url {
            let parsed = url::Url::parse(url.expose_secret())
                .map_err(|_| ConfigError::Notify("MIRANTE_SMTP_URL is not a URL".to_owned()))?;
            if !matches!(parsed.scheme(), "smtp" | "smtps") || parsed.host_str().is_none() {
                return Err(ConfigError::Notify(
                    "MIRANTE_SMTP_URL must be smtp://host[:port] or smtps://host[:port]".to_owned(),
                ));
            }
            let from = self.mail_from.as_deref().unwrap_or("").trim();
            if from.is_empty() {
                return Err(ConfigError::Notify(
                    "MIRANTE_SMTP_URL is set but MIRANTE_MAIL_FROM is not".to_owned(),
                ));
            }
            if from.parse::<lettre::message::Mailbox>().is_err() {
                return Err(ConfigError::Notify(format!(
                    "MIRANTE_MAIL_FROM `{from}` is not an address (`Name <portal@example.org>`)"
                )));
            }
        }
        if let Some(url) = &self.notify_webhook_url {
            let ok = url::Url::parse(url.expose_secret())
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
            if !ok {
                return Err(ConfigError::Notify(
                    "MIRANTE_NOTIFY_WEBHOOK_URL must be an http:// or https:// URL".to_owned(),
                ));
            }
        }
        if self.notify_max_attempts == 0 {
            return Err(ConfigError::Notify(
                "MIRANTE_NOTIFY_MAX_ATTEMPTS must be at least 1".to_owned(),
            ));
        }
        if self.expiry_notice_days().is_none() {
            return Err(ConfigError::Notify(
                "MIRANTE_EXPIRY_NOTICE_DAYS must be days separated by commas, e.g. 7,1".to_owned(),
            ));
        }
        Ok(())
    }

    /// The days before an expiry date at which its owner is told (`expiry_notice_days`);
    /// `None` when the setting is not a list of numbers.
    pub fn expiry_notice_days(&self) -> Option<Vec<u32>> {
        self.expiry_notice_days
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| d.parse().ok())
            .collect()
    }

    /// The catalog's folder in the monorepo, without a trailing `/`.
    pub fn catalog_folder(&self) -> &str {
        self.monorepo_catalog.trim_end_matches('/')
    }

    /// The local monorepo's directory: `monorepo` when set, else `<data_dir>/monorepo`.
    /// Meaningful only with the local forge.
    pub fn local_monorepo(&self) -> PathBuf {
        match self
            .monorepo
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            Some(path) => PathBuf::from(path),
            None => self.data_dir.join("monorepo"),
        }
    }

    /// The development sign-in is on (no OpenID issuer configured).
    pub fn dev_login(&self) -> bool {
        self.oidc_issuer.is_none()
    }

    /// The admin groups, trimmed, empty entries dropped.
    pub fn admin_group_list(&self) -> Vec<String> {
        self.admin_groups
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// Whether an admin may approve and merge their own requests. The four-eyes rule holds
    /// unless `MIRANTE_ALLOW_SELF_APPROVAL=true`, except with the development sign-in, where
    /// anyone may be the one demo admin and the rule would only stop the demo.
    pub fn self_approval(&self) -> bool {
        self.allow_self_approval
            .unwrap_or(self.oidc_issuer.is_none())
    }

    /// Who holds this process's leases: `MIRANTE_WORKER_ID`, else the host name (a pod's name
    /// in Kubernetes, kept across container restarts), else `mirante`.
    pub fn worker_id(&self) -> String {
        let id = self
            .worker_id
            .as_deref()
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .or_else(|| whoami::fallible::hostname().ok())
            .unwrap_or_else(|| "mirante".to_owned());
        // At most 100 printable characters: it is stored and logged.
        id.chars().filter(|c| !c.is_control()).take(100).collect()
    }

    /// The address people reach the portal at.
    pub fn public_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://{}", self.bind),
        }
    }

    /// The database URL in force: the configured one or a SQLite file in `data_dir`.
    pub fn database_url(&self) -> SecretString {
        match &self.database_url {
            Some(url) => url.clone(),
            None => SecretString::from(format!(
                "sqlite://{}",
                self.data_dir.join("mirante.db").display()
            )),
        }
    }

    /// Which database the URL points at.
    pub fn backend(&self) -> Result<crate::adapters::db::Backend, ConfigError> {
        crate::adapters::db::Backend::from_url(self.database_url().expose_secret()).ok_or_else(
            || ConfigError::DatabaseUrl(redact_url(self.database_url().expose_secret())),
        )
    }

    /// The configuration as TOML, secrets redacted, in the form `mirante.toml` takes.
    pub fn to_redacted_toml(&self) -> String {
        let printable = Printable {
            bind: self.bind,
            public_url: self.public_url(),
            data_dir: &self.data_dir,
            database_url: redact_url(self.database_url().expose_secret()),
            database_max_connections: self.database_max_connections,
            catalog: self.catalog.as_deref(),
            catalog_refresh_secs: self.catalog_refresh_secs,
            request_timeout_secs: self.request_timeout_secs,
            shutdown_delay_secs: self.shutdown_delay_secs,
            replica_heartbeat_secs: self.replica_heartbeat_secs,
            header_read_timeout_secs: self.header_read_timeout_secs,
            max_connections: self.max_connections,
            log_format: self.log_format,
            oidc_issuer: self.oidc_issuer.as_deref(),
            oidc_client_id: self.oidc_client_id.as_deref(),
            admin_groups: &self.admin_groups,
            session_idle_secs: self.session_idle_secs,
            session_max_secs: self.session_max_secs,
            public_catalog: self.public_catalog,
            forge: self.forge,
            monorepo: match self.forge {
                ForgeKind::Local => self.local_monorepo().display().to_string(),
                _ => self.monorepo.clone().unwrap_or_default(),
            },
            forge_url: self.forge_url.as_deref().map(redact_url),
            base_branch: &self.base_branch,
            monorepo_catalog: &self.monorepo_catalog,
            monorepo_templates: &self.monorepo_templates,
            forge_poll_secs: self.forge_poll_secs,
            worker_lease_secs: self.worker_lease_secs,
            worker_id: self.worker_id(),
            worker_retry_secs: self.worker_retry_secs,
            worker_retry_max_secs: self.worker_retry_max_secs,
            iac_root: self.iac_root.as_deref(),
            attestation_max_age_days: self.attestation_max_age_days,
            probe_interval_secs: self.probe_interval_secs,
            probe_timeout_secs: self.probe_timeout_secs,
            probe_concurrency: self.probe_concurrency,
            probe_allow: &self.probe_allow,
            argocd_url: self.argocd_url.as_deref(),
            argocd_poll_secs: self.argocd_poll_secs,
            argocd_poll_max_secs: self.argocd_poll_max_secs,
            metrics_bind: self.metrics_bind,
        };
        let mut out =
            toml::to_string(&printable).unwrap_or_else(|e| format!("# unprintable: {e}\n"));
        if self.oidc_client_secret.is_some() {
            out.push_str("# oidc_client_secret = REDACTED (set)\n");
        }
        if self.session_key.is_some() {
            out.push_str("# session_key = REDACTED (set)\n");
        }
        if self.forge_token.is_some() {
            out.push_str("# forge_token = REDACTED (set)\n");
        }
        if self.webhook_secret.is_some() {
            out.push_str("# webhook_secret = REDACTED (set)\n");
        }
        if self.argocd_token.is_some() {
            out.push_str("# argocd_token = REDACTED (set)\n");
        }
        if let Some(url) = &self.smtp_url {
            out.push_str(&format!(
                "# smtp_url = {}\n",
                redact_url(url.expose_secret())
            ));
        }
        if self.smtp_password.is_some() {
            out.push_str("# smtp_password = REDACTED (set)\n");
        }
        if self.notify_webhook_url.is_some() {
            out.push_str("# notify_webhook_url = REDACTED (set)\n");
        }
        if self.notify_webhook_secret.is_some() {
            out.push_str("# notify_webhook_secret = REDACTED (set)\n");
        }
        if self.catalog.is_none() {
            if self.forge == ForgeKind::Local {
                out.push_str("# catalog: the `catalog/` folder of the local monorepo's base branch (set MIRANTE_CATALOG to a directory)\n");
            } else {
                out.push_str("# catalog: the demo catalog built into the binary (set MIRANTE_CATALOG to a directory)\n");
            }
        }
        out
    }
}

/// What `mirante config` prints: effective values, with the database password replaced.
#[derive(Serialize)]
struct Printable<'a> {
    bind: SocketAddr,
    public_url: String,
    data_dir: &'a Path,
    database_url: String,
    database_max_connections: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    catalog: Option<&'a Path>,
    catalog_refresh_secs: u64,
    request_timeout_secs: u64,
    shutdown_delay_secs: u64,
    replica_heartbeat_secs: u64,
    header_read_timeout_secs: u64,
    max_connections: usize,
    log_format: LogFormat,
    #[serde(skip_serializing_if = "Option::is_none")]
    oidc_issuer: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    oidc_client_id: Option<&'a str>,
    admin_groups: &'a str,
    session_idle_secs: u64,
    session_max_secs: u64,
    public_catalog: bool,
    forge: ForgeKind,
    monorepo: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    forge_url: Option<String>,
    base_branch: &'a str,
    monorepo_catalog: &'a str,
    monorepo_templates: &'a str,
    forge_poll_secs: u64,
    worker_lease_secs: u64,
    worker_id: String,
    worker_retry_secs: u64,
    worker_retry_max_secs: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    iac_root: Option<&'a Path>,
    attestation_max_age_days: u32,
    probe_interval_secs: u64,
    probe_timeout_secs: u64,
    probe_concurrency: usize,
    probe_allow: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    argocd_url: Option<&'a str>,
    argocd_poll_secs: u64,
    argocd_poll_max_secs: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    metrics_bind: Option<SocketAddr>,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("bind", &self.bind)
            .field("public_url", &self.public_url())
            .field("data_dir", &self.data_dir)
            .field(
                "database_url",
                &redact_url(self.database_url().expose_secret()),
            )
            .field("database_max_connections", &self.database_max_connections)
            .field("catalog", &self.catalog)
            .field("catalog_refresh_secs", &self.catalog_refresh_secs)
            .field("request_timeout_secs", &self.request_timeout_secs)
            .field("shutdown_delay_secs", &self.shutdown_delay_secs)
            .field("replica_heartbeat_secs", &self.replica_heartbeat_secs)
            .field("header_read_timeout_secs", &self.header_read_timeout_secs)
            .field("max_connections", &self.max_connections)
            .field("log_format", &self.log_format)
            .field("oidc_issuer", &self.oidc_issuer)
            .field("oidc_client_id", &self.oidc_client_id)
            .field(
                "oidc_client_secret",
                &self.oidc_client_secret.as_ref().map(|_| REDACTED),
            )
            .field("admin_groups", &self.admin_groups)
            .field("session_key", &self.session_key.as_ref().map(|_| REDACTED))
            .field("session_idle_secs", &self.session_idle_secs)
            .field("session_max_secs", &self.session_max_secs)
            .field("public_catalog", &self.public_catalog)
            .field("forge", &self.forge)
            .field("monorepo", &self.monorepo)
            .field("forge_url", &self.forge_url.as_deref().map(redact_url))
            .field("forge_token", &self.forge_token.as_ref().map(|_| REDACTED))
            .field(
                "webhook_secret",
                &self.webhook_secret.as_ref().map(|_| REDACTED),
            )
            .field("base_branch", &self.base_branch)
            .field("monorepo_catalog", &self.monorepo_catalog)
            .field("monorepo_templates", &self.monorepo_templates)
            .field("forge_poll_secs", &self.forge_poll_secs)
            .field("worker_lease_secs", &self.worker_lease_secs)
            .field("worker_retry_secs", &self.worker_retry_secs)
            .field("worker_retry_max_secs", &self.worker_retry_max_secs)
            .field("iac_root", &self.iac_root)
            .field("attestation_max_age_days", &self.attestation_max_age_days)
            .field("probe_interval_secs", &self.probe_interval_secs)
            .field("probe_timeout_secs", &self.probe_timeout_secs)
            .field("probe_concurrency", &self.probe_concurrency)
            .field("probe_allow", &self.probe_allow)
            .field("allow_self_approval", &self.allow_self_approval)
            .field("token_max_days", &self.token_max_days)
            .field("sign_in_per_minute", &self.sign_in_per_minute)
            .field("token_checks_per_minute", &self.token_checks_per_minute)
            .field("webhooks_per_minute", &self.webhooks_per_minute)
            .field("trusted_proxies", &self.trusted_proxies)
            .field("argocd_url", &self.argocd_url)
            .field(
                "argocd_token",
                &self.argocd_token.as_ref().map(|_| REDACTED),
            )
            .field(
                "smtp_url",
                &self
                    .smtp_url
                    .as_ref()
                    .map(|u| redact_url(u.expose_secret())),
            )
            .field("smtp_username", &self.smtp_username)
            .field(
                "smtp_password",
                &self.smtp_password.as_ref().map(|_| REDACTED),
            )
            .field("mail_from", &self.mail_from)
            .field(
                "notify_webhook_url",
                &self.notify_webhook_url.as_ref().map(|_| REDACTED),
            )
            .field(
                "notify_webhook_secret",
                &self.notify_webhook_secret.as_ref().map(|_| REDACTED),
            )
            .field("notify_max_attempts", &self.notify_max_attempts)
            .field("expiry_sweep_secs", &self.expiry_sweep_secs)
            .field("expiry_removal", &self.expiry_removal)
            .field("expiry_notice_days", &self.expiry_notice_days)
            .field("argocd_poll_secs", &self.argocd_poll_secs)
            .field("argocd_poll_max_secs", &self.argocd_poll_max_secs)
            .field("metrics_bind", &self.metrics_bind)
            .field("worker_id", &self.worker_id)
            .finish()
    }
}

/// Placeholder that replaces a secret in printed URLs.
pub const REDACTED: &str = "REDACTED";

/// A URL with its password (user-info or `password=` query parameter) replaced by
/// [`REDACTED`]; a string that does not parse as a URL is replaced whole, since we cannot
/// tell which part of it is secret.
pub fn redact_url(raw: &str) -> String {
    let Ok(mut url) = url::Url::parse(raw) else {
        return REDACTED.to_owned();
    };
    if url.password().is_some() {
        // Only fails for URLs that cannot carry credentials, which this one just did.
        let _ = url.set_password(Some(REDACTED));
    }
    if url.query_pairs().any(|(k, _)| is_secret_param(&k)) {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let v = if is_secret_param(&k) {
                    REDACTED.to_owned()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    url.to_string()
}

fn is_secret_param(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.contains("password") || key.contains("secret") || key == "sslkey"
}

#[cfg(test)]
mod tests {
    use figment::providers::Serialized;

    use super::*;

    #[test]
    fn four_eyes_hold_with_a_provider_and_not_with_the_development_sign_in() {
        let dev = Config::default();
        let oidc = Config {
            oidc_issuer: Some("https://auth.example/application/o/mirante/".to_owned()),
            ..Config::default()
        };
        let allowed = Config {
            allow_self_approval: Some(true),
            ..oidc.clone()
        };
        assert!(dev.self_approval());
        assert!(!oidc.self_approval());
        assert!(allowed.self_approval());
    }

    #[test]
    fn defaults_are_loopback_port_3000_and_sqlite_in_data() {
        let config = Config::from_figment(Figment::new()).unwrap();
        assert_eq!(config.bind.to_string(), "127.0.0.1:3000");
        assert_eq!(config.public_url(), "http://127.0.0.1:3000");
        assert_eq!(
            config.database_url().expose_secret(),
            "sqlite://./data/mirante.db"
        );
        assert_eq!(config.catalog_refresh_secs, 300);
        assert!(config.catalog.is_none());
        assert_eq!(
            (config.probe_interval_secs, config.probe_timeout_secs),
            (300, 10)
        );
        assert_eq!(config.probe_concurrency, 8);
        assert!(config.argocd_url.is_none());
    }

    #[test]
    fn a_password_never_appears_in_debug_or_printed_configuration() {
        let figment = Figment::new()
            .merge(Serialized::default(
                "database_url",
                "postgres://mirante:hunter2@db.internal:5432/mirante?password=hunter3",
            ))
            .merge(Serialized::default("session_key", "k".repeat(40)))
            .merge(Serialized::default(
                "oidc_issuer",
                "https://sso.example/application/o/m/",
            ))
            .merge(Serialized::default("oidc_client_id", "mirante"))
            .merge(Serialized::default(
                "oidc_client_secret",
                "hunter4-client-secret",
            ))
            .merge(Serialized::default(
                "argocd_url",
                "https://argocd.example.org",
            ))
            .merge(Serialized::default("argocd_token", "hunter5-argocd-token"));
        let config = Config::from_figment(figment).unwrap();
        let printed = config.to_redacted_toml();
        let debugged = format!("{config:?}");
        for text in [&printed, &debugged] {
            assert!(!text.contains("hunter2"), "{text}");
            assert!(!text.contains("hunter3"), "{text}");
            assert!(!text.contains("hunter4"), "{text}");
            assert!(!text.contains("hunter5"), "{text}");
            assert!(!text.contains(&"k".repeat(40)), "{text}");
            assert!(text.contains("mirante:REDACTED@db.internal"), "{text}");
        }
    }

    #[test]
    fn printed_configuration_reads_back_as_the_same_configuration() {
        let figment = Figment::new()
            .merge(Serialized::default("bind", "0.0.0.0:8080"))
            .merge(Serialized::default(
                "oidc_issuer",
                "https://sso.example/application/o/m/",
            ))
            .merge(Serialized::default("oidc_client_id", "mirante"))
            .merge(Serialized::default("oidc_client_secret", "s3cret"))
            .merge(Serialized::default("catalog", "/srv/catalog"));
        let config = Config::from_figment(figment).unwrap();
        let again =
            // Secrets are printed as comments; supply the secret again as a deployment would.
            Config::from_figment(
                Figment::new()
                    .merge(Toml::string(&config.to_redacted_toml()))
                    .merge(Serialized::default("oidc_client_secret", "s3cret")),
            )
            .unwrap();
        assert_eq!(again.bind, config.bind);
        assert_eq!(again.catalog, config.catalog);
        assert_eq!(again.public_url(), "http://0.0.0.0:8080");
    }

    #[test]
    fn an_unknown_key_in_the_file_is_an_error() {
        let figment = Figment::new().merge(Toml::string("bnid = \"127.0.0.1:1\""));
        let err = Config::from_figment(figment).unwrap_err().to_string();
        assert!(err.contains("bnid"), "{err}");
    }

    #[test]
    fn the_development_sign_in_refuses_a_non_loopback_address() {
        let figment = Figment::new().merge(Serialized::default("bind", "0.0.0.0:3000"));
        let err = Config::from_figment(figment)
            .unwrap()
            .check_auth()
            .unwrap_err()
            .to_string();
        assert!(err.contains("development sign-in"), "{err}");
    }

    #[test]
    fn admin_groups_are_a_comma_separated_list() {
        let figment =
            Figment::new().merge(Serialized::default("admin_groups", " ops, portal-admins ,"));
        let config = Config::from_figment(figment).unwrap();
        assert_eq!(config.admin_group_list(), ["ops", "portal-admins"]);
    }

    #[test]
    fn the_worker_is_named_by_its_setting_or_else_by_the_host() {
        let named = Config::from_figment(
            Figment::new().merge(Serialized::default("worker_id", " replica-a\n")),
        )
        .unwrap();
        assert_eq!(named.worker_id(), "replica-a");
        let unnamed = Config::from_figment(Figment::new()).unwrap();
        let host = whoami::fallible::hostname().unwrap_or_else(|_| "mirante".to_owned());
        assert_eq!(unnamed.worker_id(), host);
        assert!(!unnamed.worker_id().is_empty());
    }

    #[test]
    fn the_forge_is_local_by_default_with_the_monorepo_in_the_data_dir() {
        let config = Config::from_figment(Figment::new()).unwrap();
        assert_eq!(config.forge, ForgeKind::Local);
        assert_eq!(config.local_monorepo(), PathBuf::from("./data/monorepo"));
        assert_eq!(config.base_branch, "main");
        config.check_forge().unwrap();
        let printed = config.to_redacted_toml();
        assert!(printed.contains("forge = \"local\""), "{printed}");
        assert!(
            printed.contains("monorepo = \"./data/monorepo\""),
            "{printed}"
        );
    }

    #[test]
    fn forge_token_and_webhook_secret_are_never_printed() {
        let figment = Figment::new()
            .merge(Serialized::default("forge", "github"))
            .merge(Serialized::default("monorepo", "infra/devops"))
            .merge(Serialized::default("forge_token", "ghp_hunter5"))
            .merge(Serialized::default("webhook_secret", "hook-hunter6"));
        let config = Config::from_figment(figment).unwrap();
        config.check_forge().unwrap();
        let printed = config.to_redacted_toml();
        let debugged = format!("{config:?}");
        for text in [&printed, &debugged] {
            assert!(!text.contains("hunter5"), "{text}");
            assert!(!text.contains("hunter6"), "{text}");
        }
        assert!(
            printed.contains("# forge_token = REDACTED (set)"),
            "{printed}"
        );
        assert!(printed.contains("monorepo = \"infra/devops\""), "{printed}");
    }

    #[test]
    fn smtp_and_webhook_secrets_are_never_printed() {
        let figment = Figment::new()
            .merge(Serialized::default(
                "smtp_url",
                "smtps://portal:hunter7@mail.example.org:465",
            ))
            .merge(Serialized::default("smtp_password", "hunter8"))
            .merge(Serialized::default(
                "mail_from",
                "Mirante <portal@example.org>",
            ))
            .merge(Serialized::default(
                "notify_webhook_url",
                "https://chat.example.org/hooks/hunter9",
            ))
            .merge(Serialized::default("notify_webhook_secret", "hunter10"));
        let config = Config::from_figment(figment).unwrap();
        config.check_notify().unwrap();
        let printed = config.to_redacted_toml();
        let debugged = format!("{config:?}");
        for text in [&printed, &debugged] {
            for secret in ["hunter7", "hunter8", "hunter9", "hunter10"] {
                assert!(!text.contains(secret), "{secret} in {text}");
            }
        }
        assert!(printed.contains("mail.example.org"), "{printed}");
    }

    #[test]
    fn notification_settings_that_cannot_work_are_refused_at_start() {
        let refused = |pairs: &[(&str, &str)]| {
            let mut figment = Figment::new();
            for (key, value) in pairs {
                figment = figment.merge(Serialized::default(key, value));
            }
            Config::from_figment(figment)
                .unwrap()
                .check_notify()
                .unwrap_err()
                .to_string()
        };
        let from = ("mail_from", "portal@example.org");
        assert!(refused(&[("smtp_url", "http://mail.example.org"), from]).contains("smtp://"));
        assert!(refused(&[("smtp_url", "smtp://mail.example.org")]).contains("MIRANTE_MAIL_FROM"));
        assert!(
            refused(&[
                ("smtp_url", "smtp://mail.example.org"),
                ("mail_from", "not an address")
            ])
            .contains("MIRANTE_MAIL_FROM")
        );
        assert!(
            refused(&[("notify_webhook_url", "ftp://chat.example.org/hook")])
                .contains("MIRANTE_NOTIFY_WEBHOOK_URL")
        );
    }

    #[test]
    fn a_hosted_forge_needs_a_repository_and_a_token() {
        let figment = Figment::new().merge(Serialized::default("forge", "gitlab"));
        let err = Config::from_figment(figment)
            .unwrap()
            .check_forge()
            .unwrap_err()
            .to_string();
        assert!(err.contains("MIRANTE_MONOREPO"), "{err}");
        let figment = Figment::new()
            .merge(Serialized::default("forge", "gitea"))
            .merge(Serialized::default("monorepo", "infra/devops"));
        let err = Config::from_figment(figment)
            .unwrap()
            .check_forge()
            .unwrap_err()
            .to_string();
        assert!(err.contains("MIRANTE_FORGE_TOKEN"), "{err}");
    }

    #[test]
    fn an_unknown_forge_or_a_bad_base_branch_is_an_error() {
        let figment = Figment::new().merge(Serialized::default("forge", "bitbucket"));
        assert!(Config::from_figment(figment).is_err());
        let figment = Figment::new().merge(Serialized::default("base_branch", "main..x"));
        assert!(
            Config::from_figment(figment)
                .unwrap()
                .check_forge()
                .is_err()
        );
    }

    #[test]
    fn an_unsupported_database_scheme_is_an_error() {
        let figment = Figment::new().merge(Serialized::default("database_url", "mysql://x/y"));
        assert!(Config::from_figment(figment).is_err());
    }
}
