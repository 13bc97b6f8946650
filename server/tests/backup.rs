//! `mirante backup` and `mirante restore` on a real SQLite database holding requests, with the
//! real binary: the backup is taken while `mirante serve` runs on the database, the restore is
//! refused while it runs and done once it has stopped.

mod support;

use std::{
    path::Path,
    process::{Child, Command, Output, Stdio},
};

use chrono::Utc;
use mirante::adapters::db::{
    Db, NewUser,
    requests::{Author, NewRequest},
};
use mirante_domain::monorepo::FileChange;
use secrecy::SecretString;
use tempfile::TempDir;

fn mirante(data: &Path, database_url: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mirante"));
    cmd.current_dir(data)
        .env_clear()
        .env("MIRANTE_DATA_DIR", data)
        .env("DATABASE_URL", database_url)
        .env(
            "MIRANTE_SESSION_KEY",
            "backup-test-session-key-0123456789abcdef",
        )
        .env("MIRANTE_FORGE_POLL_SECS", "0")
        .env("MIRANTE_CATALOG_REFRESH_SECS", "0")
        .env("MIRANTE_PROBE_INTERVAL_SECS", "0");
    cmd
}

fn run(data: &Path, database_url: &str, args: &[&str]) -> Output {
    mirante(data, database_url)
        .args(args)
        .output()
        .expect("cannot run the mirante binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Starts `mirante serve` and waits until `/readyz` answers 200.
async fn serve(data: &Path, database_url: &str) -> Child {
    let port = support::free_port();
    let mut child = mirante(data, database_url)
        .arg("serve")
        .env("MIRANTE_BIND", format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cannot start the mirante binary");
    support::wait_ready(&mut child, &format!("http://127.0.0.1:{port}")).await;
    child
}

async fn open(database_url: &str) -> Db {
    Db::connect(&SecretString::from(database_url.to_owned()), 1)
        .await
        .unwrap()
}

/// Saves a request for the workspace `name`, as the API would.
async fn seed_request(db: &Db, name: &str) -> i64 {
    let user_id = db
        .upsert_user(&NewUser {
            issuer: "dev",
            subject: "rui",
            username: "rui",
            name: "Rui Researcher",
            email: None,
            groups: &[],
            at: Utc::now(),
        })
        .await
        .unwrap();
    let files = vec![FileChange {
        path: format!("workspaces/{name}/namespace.yaml"),
        content: format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n"),
    }];
    db.insert_request(&NewRequest {
        template: "gpu-workspace",
        template_title: "GPU workspace",
        values: &serde_json::json!({"name": name, "gpus": 1}),
        files: &files,
        target: &format!("workspaces/{name}"),
        slug: &format!("gpu-workspace-{name}"),
        author: &Author {
            user_id,
            username: "rui".into(),
            name: "Rui Researcher".into(),
            email: None,
        },
        // Waits for approval: the running portal leaves it as it is.
        needs_approval: true,
        at: Utc::now(),
        idempotency: None,
    })
    .await
    .unwrap()
    .id
}

async fn request_ids(database_url: &str) -> Vec<i64> {
    let db = open(database_url).await;
    let mirante::adapters::db::Pool::Sqlite(pool) = db.pool() else {
        unreachable!()
    };
    let ids = sqlx::query_scalar("select request_id from request order by request_id")
        .fetch_all(pool)
        .await
        .unwrap();
    db.close().await;
    ids
}

#[tokio::test]
async fn a_backup_taken_while_the_portal_runs_is_restored_once_it_has_stopped() {
    let data = TempDir::new().unwrap();
    let live = data.path().join("mirante.db");
    let url = format!("sqlite://{}", live.display());
    let db = open(&url).await;
    db.migrate().await.unwrap();
    let first = seed_request(&db, "rui-nlp").await;
    let second = seed_request(&db, "rui-vision").await;
    db.close().await;
    let mut portal = serve(data.path(), &url).await;
    let backup = data.path().join("backup.db");

    let taken = run(data.path(), &url, &["backup", backup.to_str().unwrap()]);
    let again = run(data.path(), &url, &["backup", backup.to_str().unwrap()]);
    // Written after the backup: the restore takes the database back to before it.
    let db = open(&url).await;
    let later = seed_request(&db, "rui-speech").await;
    db.close().await;
    let while_running = run(data.path(), &url, &["restore", backup.to_str().unwrap()]);
    let before_stop = request_ids(&url).await;
    // Stopped the hard way: the WAL is left behind, as after a crash.
    portal.kill().unwrap();
    portal.wait().unwrap();
    let restored = run(data.path(), &url, &["restore", backup.to_str().unwrap()]);

    assert!(taken.status.success(), "{}", text(&taken.stderr));
    assert!(
        text(&taken.stdout).contains("2 request(s)"),
        "{}",
        text(&taken.stdout)
    );
    assert!(!again.status.success());
    assert!(text(&again.stderr).contains("already exists"));
    assert!(!while_running.status.success());
    assert!(
        text(&while_running.stderr).contains("stop every portal"),
        "{}",
        text(&while_running.stderr)
    );
    assert_eq!(
        before_stop,
        [first, second, later],
        "the refusal changed nothing"
    );
    assert!(restored.status.success(), "{}", text(&restored.stderr));
    let out = text(&restored.stdout);
    assert!(out.contains("2 request(s)"), "{out}");
    assert_eq!(request_ids(&url).await, [first, second]);
    let kept = std::fs::read_dir(data.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("mirante.db.before-restore-"))
        .expect("the replaced database is kept");
    assert!(out.contains(&kept.display().to_string()), "{out}");
    let kept_url = format!("sqlite://{}", kept.display());
    assert_eq!(request_ids(&kept_url).await, [first, second, later]);
    // The portal starts on the restored database.
    let mut again = serve(data.path(), &url).await;
    again.kill().unwrap();
    again.wait().unwrap();
}

#[tokio::test]
async fn a_file_that_is_not_a_mirante_database_is_refused_and_the_database_kept() {
    let data = TempDir::new().unwrap();
    let url = format!("sqlite://{}", data.path().join("mirante.db").display());
    let db = open(&url).await;
    db.migrate().await.unwrap();
    let id = seed_request(&db, "rui-nlp").await;
    db.close().await;
    let junk = data.path().join("notes.txt");
    std::fs::write(&junk, "not a database\n").unwrap();
    let empty = data.path().join("empty.db");
    sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=rwc", empty.display()))
        .await
        .unwrap()
        .close()
        .await;

    let from_junk = run(data.path(), &url, &["restore", junk.to_str().unwrap()]);
    let from_empty = run(data.path(), &url, &["restore", empty.to_str().unwrap()]);

    assert!(!from_junk.status.success());
    assert!(
        text(&from_junk.stderr).contains("is not a Mirante database"),
        "{}",
        text(&from_junk.stderr)
    );
    assert!(!from_empty.status.success());
    assert!(
        text(&from_empty.stderr).contains("no migrations table"),
        "{}",
        text(&from_empty.stderr)
    );
    assert_eq!(request_ids(&url).await, [id]);
}

#[tokio::test]
async fn on_postgresql_backup_and_restore_point_to_cloudnativepg() {
    let data = TempDir::new().unwrap();
    let url = "postgres://postgres@127.0.0.1:5432/mirante";

    let backup = run(data.path(), url, &["backup", "out.db"]);
    let restore = run(data.path(), url, &["restore", "out.db"]);

    for out in [backup, restore] {
        assert!(!out.status.success());
        assert!(
            text(&out.stderr).contains("CloudNativePG"),
            "{}",
            text(&out.stderr)
        );
    }
    assert!(!data.path().join("out.db").exists());
}
