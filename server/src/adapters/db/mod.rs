//! Storage on SQLite (the default) or PostgreSQL, picked from the database URL's scheme.
//!
//! Queries are plain SQL strings run with `sqlx::query`/`query_as` and `bind`, written once for
//! both databases: `$1`-style placeholders, which both drivers bind by number, and JSON through
//! [`sqlx::types::Json`] (text on SQLite, `jsonb` on PostgreSQL). [`on_db!`] runs a statement on
//! whichever pool is open; see `docs/adr/0001-runtime-sql-for-two-databases.md`. The
//! integration tests run every query on both databases.

/// Runs `$body` with `$pool` bound to whichever pool `$db` holds; the body is compiled once
/// per database, so the same statement text serves both.
///
/// While the database is believed down ([`Breaker`]), the statement is not even tried: the
/// enclosing function returns a "cannot be reached" error at once instead of waiting for the
/// pool's timeout.
macro_rules! on_db {
    ($db:expr, |$pool:ident| $body:expr) => {{
        let db: &$crate::adapters::db::Db = &$db;
        if db.breaker.is_open() {
            return Err($crate::adapters::db::Breaker::refused().into());
        }
        match &db.pool {
            $crate::adapters::db::Pool::Sqlite($pool) => $body,
            $crate::adapters::db::Pool::Postgres($pool) => $body,
        }
    }};
}

#[macro_use]
pub mod notifications;
pub mod deployments;
pub mod jobs;
pub mod local_pulls;
pub mod replicas;
pub mod requests;

use std::{
    str::FromStr,
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
    time::Duration,
};

use chrono::{DateTime, Utc};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use sqlx::{
    PgPool, SqlitePool,
    postgres::{PgConnectOptions, PgPoolOptions},
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
    types::Json,
};

/// Which database a URL points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// An SQLite file (or `sqlite::memory:`).
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

impl Backend {
    /// The backend for a `sqlite:` or `postgres:`/`postgresql:` URL.
    pub fn from_url(url: &str) -> Option<Self> {
        let scheme = url.split_once(':')?.0.to_ascii_lowercase();
        match scheme.as_str() {
            "sqlite" => Some(Backend::Sqlite),
            "postgres" | "postgresql" => Some(Backend::Postgres),
            _ => None,
        }
    }
}

/// Why the database could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The URL is neither `sqlite:` nor `postgres:`.
    #[error("unsupported database URL: expected sqlite://… or postgres://…")]
    UnsupportedScheme,
    /// The directory for the SQLite file could not be created.
    #[error("cannot create the database directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A connection or a query failed.
    #[error(transparent)]
    Sqlx(#[from] sqlx::Error),
    /// Applying the migrations failed.
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A stored JSON value did not parse.
    #[error("stored JSON is malformed: {0}")]
    Json(#[from] serde_json::Error),
}

/// The connection pool's use now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUse {
    /// Connections open.
    pub open: u32,
    /// Open and idle.
    pub idle: usize,
    /// The most it opens.
    pub max: u32,
}

impl Db {
    /// How many connections the pool holds and how many are idle.
    pub fn pool_use(&self) -> PoolUse {
        fn of<DB: sqlx::Database>(pool: &sqlx::Pool<DB>) -> PoolUse {
            PoolUse {
                open: pool.size(),
                idle: pool.num_idle(),
                max: pool.options().get_max_connections(),
            }
        }
        match &self.pool {
            Pool::Sqlite(pool) => of(pool),
            Pool::Postgres(pool) => of(pool),
        }
    }
}

/// What a caller is told when the database cannot be reached.
pub const DATABASE_UNAVAILABLE: &str =
    "the portal's database cannot be reached at the moment; try again shortly";

impl DbError {
    /// Whether the database could not be reached (down, cut off, refusing connections, the
    /// pool out of time) rather than refusing this statement: worth trying again later.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, DbError::Sqlx(error) if sqlx_unavailable(error))
    }

    /// Whether any cause in `error`'s chain is a database that cannot be reached.
    pub fn unavailable_in(error: &anyhow::Error) -> bool {
        error.chain().any(|cause| {
            cause
                .downcast_ref::<DbError>()
                .is_some_and(DbError::is_unavailable)
                || cause
                    .downcast_ref::<sqlx::Error>()
                    .is_some_and(sqlx_unavailable)
        })
    }
}

/// Whether sqlx's `error` says the database could not be reached rather than that it refused
/// the statement: the one list both [`DbError::is_unavailable`] and the session store use.
pub(crate) fn sqlx_unavailable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => true,
        // SQLSTATE class 08 (connection exception), 57P01-57P03 (the server shutting down or
        // starting), 53300 (too many connections).
        sqlx::Error::Database(e) => e.code().is_some_and(|code| {
            code.starts_with("08") || code.starts_with("57P") || code == "53300"
        }),
        _ => false,
    }
}

/// A connection pool to one of the supported databases, with the breaker that remembers the
/// database could not be reached. Cheap to clone; clones share the pool and the breaker.
#[derive(Debug, Clone)]
pub struct Db {
    pool: Pool,
    breaker: Arc<Breaker>,
    /// Who is told about what a request's steps do (the notification outbox's rules).
    outbox: Arc<notifications::OutboxRules>,
}

/// The pool of one of the supported databases.
#[derive(Debug, Clone)]
pub enum Pool {
    /// SQLite.
    Sqlite(SqlitePool),
    /// PostgreSQL.
    Postgres(PgPool),
}

/// Remembers for a moment that the database could not be reached, so that the calls in
/// between fail at once (the portal answers that it is degraded without a wait) and the first
/// one after [`Breaker::HOLD`] tries the database again. Opened by the session store's failed
/// reads and by every answer the HTTP layer turns into "degraded" (503).
#[derive(Debug, Default)]
pub struct Breaker {
    open_until_ms: AtomicI64,
}

impl Breaker {
    /// How long a failure to reach the database is believed without asking again.
    pub const HOLD: Duration = Duration::from_secs(2);

    fn now_ms() -> i64 {
        Utc::now().timestamp_millis()
    }

    /// Whether the database failed less than [`Breaker::HOLD`] ago.
    pub fn is_open(&self) -> bool {
        Self::now_ms() < self.open_until_ms.load(Ordering::Relaxed)
    }

    /// Notes that the database could not be reached just now. An open breaker is not held
    /// longer: the calls it refused say nothing new, and the first call after the hold must
    /// reach the database.
    pub fn open(&self) {
        let now = Self::now_ms();
        let hold = i64::try_from(Self::HOLD.as_millis()).unwrap_or(2000);
        let _ = self
            .open_until_ms
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |until| {
                (until <= now).then_some(now + hold)
            });
    }

    /// Notes that the database answered.
    pub fn close(&self) {
        self.open_until_ms.store(0, Ordering::Relaxed);
    }

    /// The error a call gets while the breaker is open (one [`sqlx_unavailable`] knows).
    pub(crate) fn refused() -> sqlx::Error {
        sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the database could not be reached a moment ago; not asking again yet",
        ))
    }
}

/// What [`Db::create_api_token`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenCreated {
    /// The token's id.
    pub id: i64,
    /// Whether its request key named a token made earlier (nothing new was made).
    pub replayed: bool,
}

/// A catalog snapshot to record.
#[derive(Debug, Clone)]
pub struct NewSnapshot<'a> {
    /// Content hash.
    pub hash: &'a str,
    /// Source revision, when known.
    pub revision: Option<&'a str>,
    /// `embedded` or `dir:<path>`.
    pub source: &'a str,
    /// Number of items.
    pub item_count: i64,
    /// When it was loaded.
    pub loaded_at: DateTime<Utc>,
}

/// A recorded catalog snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct SnapshotRecord {
    /// Key.
    pub catalog_snapshot_id: i64,
    /// Content hash.
    pub hash: String,
    /// Source revision, when known.
    pub revision: Option<String>,
    /// `embedded` or `dir:<path>`.
    pub source: String,
    /// Number of items.
    pub item_count: i64,
    /// When this content was first loaded.
    pub loaded_at: DateTime<Utc>,
}

/// An audit entry to append.
#[derive(Debug, Clone)]
pub struct NewAuditEntry<'a> {
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Who did it.
    pub actor: &'a str,
    /// What was done (`catalog.reload`).
    pub action: &'a str,
    /// What it was done to.
    pub target: &'a str,
    /// Anything else worth keeping.
    pub detail: serde_json::Value,
}

/// A stored audit entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditEntry {
    /// Key.
    pub audit_log_id: i64,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Who did it.
    pub actor: String,
    /// What was done.
    pub action: String,
    /// What it was done to.
    pub target: String,
    /// Anything else worth keeping.
    pub detail: serde_json::Value,
}

/// The row as both databases return it: the detail as JSON (text on SQLite, `jsonb` on
/// PostgreSQL, decoded alike by [`Json`]).
#[derive(sqlx::FromRow)]
struct AuditRow {
    audit_log_id: i64,
    at: DateTime<Utc>,
    actor: String,
    action: String,
    target: String,
    detail: Json<serde_json::Value>,
}

impl From<AuditRow> for AuditEntry {
    fn from(row: AuditRow) -> Self {
        AuditEntry {
            audit_log_id: row.audit_log_id,
            at: row.at,
            actor: row.actor,
            action: row.action,
            target: row.target,
            detail: row.detail.0,
        }
    }
}

/// A user as the identity provider describes them at sign-in.
#[derive(Debug, Clone)]
pub struct NewUser<'a> {
    /// The OpenID issuer, or `dev`.
    pub issuer: &'a str,
    /// The subject at that issuer.
    pub subject: &'a str,
    /// Login name.
    pub username: &'a str,
    /// Display name.
    pub name: &'a str,
    /// E-mail address.
    pub email: Option<&'a str>,
    /// Provider groups.
    pub groups: &'a [String],
    /// When they signed in.
    pub at: DateTime<Utc>,
}

/// A stored user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserRecord {
    /// Key.
    pub app_user_id: i64,
    /// The OpenID issuer, or `dev`.
    pub issuer: String,
    /// The subject at that issuer.
    pub subject: String,
    /// Login name.
    pub username: String,
    /// Display name.
    pub name: String,
    /// E-mail address.
    pub email: Option<String>,
    /// Provider groups at the last sign-in.
    pub groups: Vec<String>,
    /// First sign-in.
    pub first_login_at: DateTime<Utc>,
    /// Last sign-in.
    pub last_login_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct UserRow {
    app_user_id: i64,
    issuer: String,
    subject: String,
    username: String,
    name: String,
    email: Option<String>,
    groups: Json<Vec<String>>,
    first_login_at: DateTime<Utc>,
    last_login_at: DateTime<Utc>,
}

impl From<UserRow> for UserRecord {
    fn from(r: UserRow) -> Self {
        UserRecord {
            app_user_id: r.app_user_id,
            issuer: r.issuer,
            subject: r.subject,
            username: r.username,
            name: r.name,
            email: r.email,
            groups: r.groups.0,
            first_login_at: r.first_login_at,
            last_login_at: r.last_login_at,
        }
    }
}

/// A personal API token as its owner sees it (never the token or its hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct ApiTokenRecord {
    /// Key.
    pub api_token_id: i64,
    /// What the owner called it.
    pub name: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it was last used.
    pub last_used_at: Option<DateTime<Utc>>,
    /// When it was revoked.
    pub revoked_at: Option<DateTime<Utc>>,
    /// When it stops working; `None` for a token made before tokens expired.
    pub expires_at: Option<DateTime<Utc>>,
}

/// An active API token as the authentication layer reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveApiToken {
    /// Its id.
    pub api_token_id: i64,
    /// Its owner.
    pub app_user_id: i64,
    /// When it was last noted as used.
    pub last_used_at: Option<DateTime<Utc>>,
    /// When it stops working; `None` for a token made before tokens expired.
    pub expires_at: Option<DateTime<Utc>>,
}

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

impl Db {
    /// Opens a pool for the URL, creating the SQLite file (and its directory) when missing.
    ///
    /// Connections are opened lazily beyond the first, which is opened here so that a wrong
    /// URL or an unreachable server fails at start-up.
    #[tracing::instrument(name = "db.connect", skip_all)]
    pub async fn connect(url: &SecretString, max_connections: u32) -> Result<Self, DbError> {
        let url = url.expose_secret();
        match Backend::from_url(url).ok_or(DbError::UnsupportedScheme)? {
            Backend::Sqlite => {
                let options = SqliteConnectOptions::from_str(url)?
                    .create_if_missing(true)
                    // WAL lets readers proceed while a reload writes; NORMAL is durable
                    // enough under WAL and avoids an fsync per commit.
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .foreign_keys(true)
                    .busy_timeout(Duration::from_secs(5));
                let file = options.get_filename();
                if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty())
                    && file.as_os_str() != ":memory:"
                {
                    std::fs::create_dir_all(dir).map_err(|source| DbError::CreateDir {
                        path: dir.display().to_string(),
                        source,
                    })?;
                }
                // No ping before handing out a connection: the database is a local file that
                // cannot drop a connection the way a server can, and the ping was a round trip
                // to the connection's worker thread on every query. A failing connection still
                // fails its query, and sqlx closes it.
                let pool = SqlitePoolOptions::new()
                    .max_connections(max_connections.max(1))
                    .acquire_timeout(Duration::from_secs(5))
                    .test_before_acquire(false)
                    .connect_with(options)
                    .await?;
                Ok(Db::new(Pool::Sqlite(pool)))
            }
            Backend::Postgres => {
                let options = PgConnectOptions::from_str(url)?;
                // The default ping before each hand-out stays: a server, a proxy or a firewall
                // can close an idle connection, and the ping finds that out before a query
                // fails on it.
                let pool = PgPoolOptions::new()
                    .max_connections(max_connections.max(1))
                    .acquire_timeout(Duration::from_secs(5))
                    .connect_with(options)
                    .await?;
                Ok(Db::new(Pool::Postgres(pool)))
            }
        }
    }

    fn new(pool: Pool) -> Self {
        Db {
            pool,
            breaker: Arc::default(),
            outbox: Arc::default(),
        }
    }

    /// This handle with `rules` for the notifications a request's steps queue (which channels
    /// are on, who the admins are); without, no notification is queued. Set before the handle
    /// is cloned: clones made earlier keep the rules they had.
    pub fn with_outbox(mut self, rules: notifications::OutboxRules) -> Self {
        self.outbox = Arc::new(rules);
        self
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        match self.pool {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Postgres(_) => Backend::Postgres,
        }
    }

    /// The pool (SQLite or PostgreSQL), for the adapters that hand it to a library (the
    /// session store) and the tests that read a table directly.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The breaker every call checks first (see [`Breaker`]).
    pub fn breaker(&self) -> &Arc<Breaker> {
        &self.breaker
    }

    /// Applies the migrations embedded in the binary that the database has not seen yet.
    #[tracing::instrument(name = "db.migrate", skip_all)]
    pub async fn migrate(&self) -> Result<(), DbError> {
        match &self.pool {
            Pool::Sqlite(pool) => SQLITE_MIGRATIONS.run(pool).await?,
            Pool::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await?,
        }
        Ok(())
    }

    /// Checks that the database answers.
    #[tracing::instrument(name = "db.ping", skip_all)]
    pub async fn ping(&self) -> Result<(), DbError> {
        on_db!(self, |pool| {
            sqlx::query("select 1").execute(pool).await?;
        });
        Ok(())
    }

    /// Records a catalog snapshot; returns whether this content was new to the database.
    #[tracing::instrument(name = "db.record_snapshot", skip_all)]
    pub async fn record_snapshot(&self, s: &NewSnapshot<'_>) -> Result<bool, DbError> {
        let sql = "insert into catalog_snapshot (hash, revision, source, item_count, loaded_at)
                   values ($1, $2, $3, $4, $5)
                   on conflict (hash) do nothing";
        let affected = on_db!(self, |pool| sqlx::query(sql)
            .bind(s.hash)
            .bind(s.revision)
            .bind(s.source)
            .bind(s.item_count)
            .bind(s.loaded_at)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(affected == 1)
    }

    /// The most recently recorded snapshots, newest first.
    #[tracing::instrument(name = "db.list_snapshots", skip_all)]
    pub async fn list_snapshots(&self, limit: i64) -> Result<Vec<SnapshotRecord>, DbError> {
        let sql = "select catalog_snapshot_id, hash, revision, source, item_count, loaded_at
                   from catalog_snapshot
                   order by catalog_snapshot_id desc
                   limit $1";
        let rows = on_db!(self, |pool| sqlx::query_as(sql)
            .bind(limit)
            .fetch_all(pool)
            .await?);
        Ok(rows)
    }

    /// Appends an audit entry; returns its id.
    #[tracing::instrument(name = "db.append_audit", skip_all)]
    pub async fn append_audit(&self, e: &NewAuditEntry<'_>) -> Result<i64, DbError> {
        let sql = "insert into audit_log (at, actor, action, target, detail)
                   values ($1, $2, $3, $4, $5)
                   returning audit_log_id";
        let id = on_db!(self, |pool| sqlx::query_scalar(sql)
            .bind(e.at)
            .bind(e.actor)
            .bind(e.action)
            .bind(e.target)
            .bind(Json(&e.detail))
            .fetch_one(pool)
            .await?);
        Ok(id)
    }

    /// The most recent audit entries, newest first.
    #[tracing::instrument(name = "db.list_audit", skip_all)]
    pub async fn list_audit(&self, limit: i64) -> Result<Vec<AuditEntry>, DbError> {
        let sql = "select audit_log_id, at, actor, action, target, detail
                   from audit_log
                   order by audit_log_id desc
                   limit $1";
        let rows: Vec<AuditRow> = on_db!(self, |pool| sqlx::query_as(sql)
            .bind(limit)
            .fetch_all(pool)
            .await?);
        Ok(rows.into_iter().map(AuditEntry::from).collect())
    }

    /// Creates or updates the user `(issuer, subject)` at sign-in; returns its id.
    #[tracing::instrument(name = "db.upsert_user", skip_all)]
    pub async fn upsert_user(&self, u: &NewUser<'_>) -> Result<i64, DbError> {
        let sql = "insert into app_user (issuer, subject, username, name, email, groups,
                                         first_login_at, last_login_at)
                   values ($1, $2, $3, $4, $5, $6, $7, $8)
                   on conflict (issuer, subject) do update set
                       username = excluded.username, name = excluded.name,
                       email = excluded.email, groups = excluded.groups,
                       last_login_at = excluded.last_login_at
                   returning app_user_id";
        let id = on_db!(self, |pool| sqlx::query_scalar(sql)
            .bind(u.issuer)
            .bind(u.subject)
            .bind(u.username)
            .bind(u.name)
            .bind(u.email)
            .bind(Json(u.groups))
            .bind(u.at)
            .bind(u.at)
            .fetch_one(pool)
            .await?);
        Ok(id)
    }

    /// A user by id.
    #[tracing::instrument(name = "db.user", skip_all)]
    pub async fn user(&self, id: i64) -> Result<Option<UserRecord>, DbError> {
        let sql = "select app_user_id, issuer, subject, username, name, email, groups,
                          first_login_at, last_login_at
                   from app_user where app_user_id = $1";
        let row: Option<UserRow> = on_db!(self, |pool| sqlx::query_as(sql)
            .bind(id)
            .fetch_optional(pool)
            .await?);
        Ok(row.map(UserRecord::from))
    }

    /// Stores a new API token's hash for a user, working until `expires_at`; returns the
    /// token's id. With `request_key`, a second call with the same key makes nothing and
    /// answers the first token's id as replayed.
    #[tracing::instrument(name = "db.create_api_token", skip_all)]
    pub async fn create_api_token(
        &self,
        user_id: i64,
        name: &str,
        token_hash: &str,
        at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
        request_key: Option<&str>,
    ) -> Result<TokenCreated, DbError> {
        let sql = "insert into api_token
                       (app_user_id, name, token_hash, created_at, expires_at, request_key)
                   values ($1, $2, $3, $4, $5, $6)
                   on conflict (app_user_id, request_key) where request_key is not null
                   do nothing
                   returning api_token_id";
        let id: Option<i64> = on_db!(self, |pool| sqlx::query_scalar(sql)
            .bind(user_id)
            .bind(name)
            .bind(token_hash)
            .bind(at)
            .bind(expires_at)
            .bind(request_key)
            .fetch_optional(pool)
            .await?);
        if let Some(id) = id {
            return Ok(TokenCreated {
                id,
                replayed: false,
            });
        }
        let sql = "select api_token_id from api_token where app_user_id = $1 and request_key = $2";
        let id: i64 = on_db!(self, |pool| sqlx::query_scalar(sql)
            .bind(user_id)
            .bind(request_key)
            .fetch_one(pool)
            .await?);
        Ok(TokenCreated { id, replayed: true })
    }

    /// The token with this hash that is not revoked: its id, its owner, when it was last used
    /// and when it expires (the caller compares with its clock). Read-only, so checking a
    /// token costs no write.
    #[tracing::instrument(name = "db.active_api_token", skip_all)]
    pub async fn active_api_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<ActiveApiToken>, DbError> {
        let sql = "select api_token_id, app_user_id, last_used_at, expires_at from api_token
                   where token_hash = $1 and revoked_at is null";
        type Row = (i64, i64, Option<DateTime<Utc>>, Option<DateTime<Utc>>);
        let row: Option<Row> = on_db!(self, |pool| {
            sqlx::query_as(sql)
                .bind(token_hash)
                .fetch_optional(pool)
                .await?
        });
        Ok(row.map(
            |(api_token_id, app_user_id, last_used_at, expires_at)| ActiveApiToken {
                api_token_id,
                app_user_id,
                last_used_at,
                expires_at,
            },
        ))
    }

    /// Notes that a token was used at `at`.
    #[tracing::instrument(name = "db.touch_api_token", skip_all)]
    pub async fn touch_api_token(
        &self,
        api_token_id: i64,
        at: DateTime<Utc>,
    ) -> Result<(), DbError> {
        let sql = "update api_token set last_used_at = $1 where api_token_id = $2";
        on_db!(self, |pool| {
            sqlx::query(sql)
                .bind(at)
                .bind(api_token_id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Revokes one of a user's tokens; returns its name if it was theirs and active.
    #[tracing::instrument(name = "db.revoke_api_token", skip_all)]
    pub async fn revoke_api_token(
        &self,
        user_id: i64,
        token_id: i64,
        at: DateTime<Utc>,
    ) -> Result<Option<String>, DbError> {
        let sql = "update api_token set revoked_at = $1
                   where api_token_id = $2 and app_user_id = $3 and revoked_at is null
                   returning name";
        let name = on_db!(self, |pool| sqlx::query_scalar(sql)
            .bind(at)
            .bind(token_id)
            .bind(user_id)
            .fetch_optional(pool)
            .await?);
        Ok(name)
    }

    /// A user's tokens, newest first (hashes left out).
    #[tracing::instrument(name = "db.list_api_tokens", skip_all)]
    pub async fn list_api_tokens(&self, user_id: i64) -> Result<Vec<ApiTokenRecord>, DbError> {
        let sql = "select api_token_id, name, created_at, last_used_at, revoked_at, expires_at
                   from api_token where app_user_id = $1
                   order by api_token_id desc";
        let rows = on_db!(self, |pool| sqlx::query_as(sql)
            .bind(user_id)
            .fetch_all(pool)
            .await?);
        Ok(rows)
    }

    /// Closes every connection; waits for those in use to be returned.
    #[tracing::instrument(name = "db.close", skip_all)]
    pub async fn close(&self) {
        match &self.pool {
            Pool::Sqlite(pool) => pool.close().await,
            Pool::Postgres(pool) => pool.close().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn memory_db() -> Db {
        let db = Db::connect(&SecretString::from("sqlite::memory:"), 1)
            .await
            .unwrap();
        db.migrate().await.unwrap();
        db
    }

    #[test]
    fn the_backend_is_picked_from_the_url_scheme() {
        assert_eq!(
            Backend::from_url("sqlite://data/m.db"),
            Some(Backend::Sqlite)
        );
        assert_eq!(Backend::from_url("sqlite::memory:"), Some(Backend::Sqlite));
        assert_eq!(
            Backend::from_url("postgres://u@h/d"),
            Some(Backend::Postgres)
        );
        assert_eq!(
            Backend::from_url("postgresql://u@h/d"),
            Some(Backend::Postgres)
        );
        assert_eq!(Backend::from_url("mysql://u@h/d"), None);
        assert_eq!(Backend::from_url("nonsense"), None);
    }

    #[tokio::test]
    async fn the_same_catalog_content_is_recorded_once() {
        let db = memory_db().await;
        let s = NewSnapshot {
            hash: "abc",
            revision: None,
            source: "embedded",
            item_count: 3,
            loaded_at: Utc::now(),
        };

        let first = db.record_snapshot(&s).await.unwrap();
        let second = db.record_snapshot(&s).await.unwrap();

        assert!(first);
        assert!(!second);
        let rows = db.list_snapshots(10).await.unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].hash, "abc");
        assert_eq!(rows[0].item_count, 3);
    }

    #[tokio::test]
    async fn audit_entries_come_back_newest_first_with_their_detail() {
        let db = memory_db().await;
        for n in 0..3 {
            db.append_audit(&NewAuditEntry {
                at: Utc::now(),
                actor: "system",
                action: "catalog.reload",
                target: "catalog",
                detail: serde_json::json!({ "n": n }),
            })
            .await
            .unwrap();
        }

        let entries = db.list_audit(2).await.unwrap();

        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].detail["n"], 2);
        assert_eq!(entries[1].detail["n"], 1);
    }
}
