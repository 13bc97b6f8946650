//! `mirante backup FILE` and `mirante restore FILE`: a copy of the embedded SQLite database
//! taken while the portal runs, and putting one back while it does not.
//!
//! The backup is SQLite's `VACUUM INTO`: one read transaction, so the copy is the database as
//! of one moment even while the portal writes, with no WAL file beside it. A restore checks the
//! file (SQLite's integrity check, Mirante's migrations, none newer than this binary's),
//! refuses while any connection has the database open (the portal's pool keeps one; a stopped
//! portal has none), keeps the database it replaces beside it as
//! `<name>.before-restore-<time>`, and swaps the files while it holds SQLite's exclusive lock.
//! PostgreSQL is backed up by CloudNativePG (deploy/kubernetes/base/database.yaml).

use std::{
    fmt, fs,
    path::{Path, PathBuf},
    process::ExitCode,
    str::FromStr,
    time::Duration,
};

use chrono::Utc;
use secrecy::ExposeSecret;
use sqlx::{
    Connection, Row, SqliteConnection,
    sqlite::{SqliteConnectOptions, SqliteLockingMode},
};

use crate::{adapters::db::Backend, config::Config};

/// The migrations this binary applies, to refuse a backup made by a newer Mirante.
static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");

/// What PostgreSQL users are told instead.
const POSTGRES_ADVICE: &str = "the database is PostgreSQL: back it up with CloudNativePG \
     (the `backup` section of its Cluster and a ScheduledBackup, see \
     deploy/kubernetes/base/database.yaml and docs/operations.md) or pg_dump; \
     `mirante backup` and `mirante restore` copy the embedded SQLite database only";

/// Why a backup or a restore did not happen. Nothing was changed when one of these is
/// returned.
#[derive(Debug)]
pub enum BackupError {
    /// The configured database is PostgreSQL.
    Postgres,
    /// The configured database URL is neither SQLite nor PostgreSQL, or names no file.
    Url(String),
    /// The file to write already exists.
    Exists(PathBuf),
    /// The file to read is missing or not a Mirante database.
    NotABackup(PathBuf, String),
    /// The backup was made by a newer Mirante (its migrations are unknown to this binary).
    Newer(PathBuf, i64, i64),
    /// A connection has the live database open.
    InUse(PathBuf),
    /// SQLite or the file system failed.
    Io(String),
}

impl fmt::Display for BackupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackupError::Postgres => f.write_str(POSTGRES_ADVICE),
            BackupError::Url(why) => write!(f, "{why}"),
            BackupError::Exists(p) => write!(
                f,
                "{} already exists: a backup never overwrites a file; name a new one",
                p.display()
            ),
            BackupError::NotABackup(p, why) => {
                write!(f, "{} is not a Mirante database: {why}", p.display())
            }
            BackupError::Newer(p, theirs, ours) => write!(
                f,
                "{} was made by a newer Mirante (migration {theirs}; this binary knows up to \
                 {ours}): restore it with that version",
                p.display()
            ),
            BackupError::InUse(p) => write!(
                f,
                "{} is open (a portal is running on it, or another command holds it): stop \
                 every portal on this database, then restore; nothing was changed",
                p.display()
            ),
            BackupError::Io(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for BackupError {}

impl From<sqlx::Error> for BackupError {
    fn from(e: sqlx::Error) -> Self {
        BackupError::Io(format!("SQLite: {e}"))
    }
}

/// What a backup or a restore copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    /// Requests in the copy.
    pub requests: i64,
    /// Size of the copy in bytes.
    pub bytes: u64,
    /// Where the replaced database was kept (restore only, when there was one).
    pub kept: Option<PathBuf>,
}

/// `mirante backup FILE`.
pub(super) fn backup_command(file: &Path) -> ExitCode {
    run(
        |config| backup(config, file),
        |c| {
            format!(
                "backed up to {}: {} request(s), {} bytes",
                file.display(),
                c.requests,
                c.bytes
            )
        },
    )
}

/// `mirante restore FILE`.
pub(super) fn restore_command(file: &Path) -> ExitCode {
    run(
        |config| restore(config, file),
        |c| {
            let kept = c.kept.as_ref().map_or(String::new(), |k| {
                format!("; the previous database is kept as {}", k.display())
            });
            format!(
                "restored {}: {} request(s), {} bytes{kept}",
                file.display(),
                c.requests,
                c.bytes
            )
        },
    )
}

fn run<F, Fut>(work: F, done: impl FnOnce(&Copied) -> String) -> ExitCode
where
    F: FnOnce(Config) -> Fut,
    Fut: Future<Output = Result<Copied, BackupError>>,
{
    let config = match Config::load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(work(config)) {
        Ok(copied) => {
            println!("{}", done(&copied));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The live SQLite file of `config`.
fn live_file(config: &Config) -> Result<PathBuf, BackupError> {
    let url = config.database_url();
    let url = url.expose_secret();
    match Backend::from_url(url) {
        Some(Backend::Postgres) => return Err(BackupError::Postgres),
        Some(Backend::Sqlite) => {}
        None => {
            return Err(BackupError::Url(
                "the database URL is neither sqlite://… nor postgres://…".into(),
            ));
        }
    }
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| BackupError::Url(format!("the SQLite URL does not parse: {e}")))?;
    let file = options.get_filename();
    if file.as_os_str() == ":memory:" || file.as_os_str().is_empty() {
        return Err(BackupError::Url(
            "the database is in memory: there is nothing to back up or restore".into(),
        ));
    }
    Ok(file.to_owned())
}

fn options(file: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(file)
        .create_if_missing(false)
        .busy_timeout(Duration::from_secs(5))
}

/// Copies the configured SQLite database to `file`, which must not exist, while the portal
/// may be running.
pub async fn backup(config: Config, file: &Path) -> Result<Copied, BackupError> {
    let live = live_file(&config)?;
    if file.exists() {
        return Err(BackupError::Exists(file.to_owned()));
    }
    if !live.is_file() {
        return Err(BackupError::NotABackup(
            live,
            "the configured database file does not exist".into(),
        ));
    }
    let mut conn = SqliteConnection::connect_with(&options(&live)).await?;
    sqlx::query("vacuum into ?")
        .bind(file.to_string_lossy().into_owned())
        .execute(&mut conn)
        .await?;
    conn.close().await?;
    let (requests, _) = check(file).await?;
    Ok(Copied {
        requests,
        bytes: size(file)?,
        kept: None,
    })
}

/// Replaces the configured SQLite database by the backup `file`, refusing while the database
/// is open.
pub async fn restore(config: Config, file: &Path) -> Result<Copied, BackupError> {
    let live = live_file(&config)?;
    let (requests, version) = check(file).await?;
    let ours = MIGRATIONS.iter().map(|m| m.version).max().unwrap_or(0);
    if version > ours {
        return Err(BackupError::Newer(file.to_owned(), version, ours));
    }
    let dir = live
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)
        .map_err(|e| BackupError::Io(format!("cannot create {}: {e}", dir.display())))?;
    let name = live
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mirante.db".into());
    // A clean copy next to the live file, so that the swap is a rename on one file system.
    let staged = dir.join(format!("{name}.restoring"));
    remove_if_there(&staged)?;
    let mut source = SqliteConnection::connect_with(&options(file).read_only(true)).await?;
    let copied = sqlx::query("vacuum into ?")
        .bind(staged.to_string_lossy().into_owned())
        .execute(&mut source)
        .await;
    source.close().await?;
    copied?;

    let swapped = swap(&live, &staged, dir, &name).await;
    if swapped.is_err() {
        let _ = fs::remove_file(&staged);
    }
    let kept = swapped?;
    Ok(Copied {
        requests,
        bytes: size(&live)?,
        kept,
    })
}

/// Puts `staged` in the place of `live`, keeping `live` aside; refuses when `live` is open.
async fn swap(
    live: &Path,
    staged: &Path,
    dir: &Path,
    name: &str,
) -> Result<Option<PathBuf>, BackupError> {
    if !live.exists() {
        rename(staged, live)?;
        return Ok(None);
    }
    // An exclusive lock is granted only when no other connection has the file open: in WAL
    // mode every open connection holds a shared lock for as long as it lives.
    let mut conn = SqliteConnection::connect_with(
        &options(live)
            .busy_timeout(Duration::ZERO)
            .locking_mode(SqliteLockingMode::Exclusive),
    )
    .await
    .map_err(|e| in_use_or(live, e))?;
    let locked = sqlx::query("begin exclusive")
        .execute(&mut conn)
        .await
        .map_err(|e| in_use_or(live, e));
    if let Err(e) = locked {
        let _ = conn.close().await;
        return Err(e);
    }
    sqlx::query("commit").execute(&mut conn).await?;
    // Folds the WAL into the file kept aside, so that it is whole on its own.
    sqlx::query("pragma journal_mode = delete")
        .execute(&mut conn)
        .await
        .map_err(|e| in_use_or(live, e))?;
    let kept = dir.join(format!(
        "{name}.before-restore-{}",
        Utc::now().format("%Y%m%dT%H%M%SZ")
    ));
    // The lock stays held on the kept file while the restored one takes its name.
    rename(live, &kept)?;
    for suffix in ["-wal", "-shm"] {
        remove_if_there(&dir.join(format!("{name}{suffix}")))?;
    }
    let placed = rename(staged, live);
    conn.close().await?;
    placed?;
    Ok(Some(kept))
}

fn in_use_or(live: &Path, e: sqlx::Error) -> BackupError {
    // SQLITE_BUSY (5) and SQLITE_LOCKED (6), with their extended codes.
    let busy = e
        .as_database_error()
        .and_then(|d| d.code())
        .and_then(|c| c.parse::<i64>().ok())
        .is_some_and(|c| matches!(c & 0xff, 5 | 6));
    if busy {
        BackupError::InUse(live.to_owned())
    } else {
        e.into()
    }
}

/// Opens `file` read-only and checks that it is a whole Mirante database; returns its number
/// of requests and its latest migration.
async fn check(file: &Path) -> Result<(i64, i64), BackupError> {
    let not = |why: String| BackupError::NotABackup(file.to_owned(), why);
    if !file.is_file() {
        return Err(not("no such file".into()));
    }
    let mut conn = SqliteConnection::connect_with(&options(file).read_only(true))
        .await
        .map_err(|e| not(e.to_string()))?;
    let result = async {
        let integrity: String = sqlx::query_scalar("pragma integrity_check")
            .fetch_one(&mut conn)
            .await
            .map_err(|e| not(e.to_string()))?;
        if integrity != "ok" {
            return Err(not(format!("SQLite's integrity check says {integrity}")));
        }
        let version: Option<i64> =
            sqlx::query("select max(version) as v from _sqlx_migrations where success")
                .fetch_one(&mut conn)
                .await
                .map_err(|_| not("it has no migrations table".into()))?
                .get("v");
        let version = version.ok_or_else(|| not("no migration was applied".into()))?;
        let requests: i64 = sqlx::query_scalar("select count(*) from request")
            .fetch_one(&mut conn)
            .await
            .map_err(|_| not("it has no request table".into()))?;
        Ok((requests, version))
    }
    .await;
    let _ = conn.close().await;
    result
}

fn size(file: &Path) -> Result<u64, BackupError> {
    fs::metadata(file)
        .map(|m| m.len())
        .map_err(|e| BackupError::Io(format!("cannot read {}: {e}", file.display())))
}

fn rename(from: &Path, to: &Path) -> Result<(), BackupError> {
    fs::rename(from, to).map_err(|e| {
        BackupError::Io(format!(
            "cannot move {} to {}: {e}",
            from.display(),
            to.display()
        ))
    })
}

fn remove_if_there(file: &Path) -> Result<(), BackupError> {
    match fs::remove_file(file) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(BackupError::Io(format!(
            "cannot remove {}: {e}",
            file.display()
        ))),
    }
}
