//! Killed during e-mail delivery: the real `mirante` binary sends the notification outbox to a
//! real mail server (aiosmtpd, `tests/mail/`) that holds the first message before answering
//! DATA; the portal is killed with SIGKILL right then, the server never accepted that message,
//! and the restarted portal (same worker identity) takes its leases back and delivers every
//! message exactly once. Runs on SQLite and on a PostgreSQL database made for the test.

#[path = "../../tests/mail/sink.rs"]
mod mail;

use std::{
    collections::BTreeSet,
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use chrono::Utc;
use mail::MailSink;
use mirante::adapters::db::{
    Db, NewUser,
    notifications::OutboxRules,
    requests::{Author, NewRequest},
};
use mirante_domain::{monorepo::FileChange, notification::DeliveryState};
use secrecy::SecretString;
use tempfile::TempDir;

/// Starts `mirante serve` with e-mail through `smtp_url`, under a stable worker identity and
/// a lease far longer than the test: a restart takes its own messages back at once.
fn start(data: &Path, database_url: &str, smtp_url: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mirante"))
        .arg("serve")
        .current_dir(data)
        .env_clear()
        .env("MIRANTE_BIND", "127.0.0.1:0")
        .env("MIRANTE_DATA_DIR", data)
        .env("DATABASE_URL", database_url)
        .env(
            "MIRANTE_SESSION_KEY",
            "crash-test-session-key-0123456789abcdef",
        )
        .env("MIRANTE_WORKER_LEASE_SECS", "600")
        .env("MIRANTE_WORKER_ID", "replica-1")
        .env("MIRANTE_FORGE_POLL_SECS", "0")
        .env("MIRANTE_CATALOG_REFRESH_SECS", "0")
        .env("MIRANTE_PROBE_INTERVAL_SECS", "0")
        .env("MIRANTE_SMTP_URL", smtp_url)
        .env("MIRANTE_MAIL_FROM", "Mirante <portal@mirante.test>")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cannot start the mirante binary")
}

async fn user(db: &Db, name: &str, groups: &[String]) -> Author {
    let user_id = db
        .upsert_user(&NewUser {
            issuer: "dev",
            subject: name,
            username: name,
            name,
            email: Some(&format!("{name}@example.org")),
            groups,
            at: Utc::now(),
        })
        .await
        .unwrap();
    Author {
        user_id,
        username: name.to_owned(),
        name: name.to_owned(),
        email: Some(format!("{name}@example.org")),
    }
}

/// Two admins and two requests awaiting approval: four e-mails queued with the requests.
async fn seed(db: &Db) {
    let admins = ["portal-admins".to_owned()];
    user(db, "ada", &admins).await;
    user(db, "bea", &admins).await;
    let rui = user(db, "rui", &[]).await;
    for name in ["nlp", "vision"] {
        let files = vec![FileChange {
            path: format!("workspaces/rui-{name}/namespace.yaml"),
            content: "kind: Namespace\n".to_owned(),
        }];
        db.insert_request(&NewRequest {
            template: "gpu-workspace",
            template_title: "GPU workspace",
            values: &serde_json::json!({"name": name}),
            files: &files,
            target: &format!("workspaces/rui-{name}"),
            slug: &format!("gpu-workspace-rui-{name}"),
            author: &rui,
            needs_approval: true,
            at: Utc::now(),
            idempotency: None,
        })
        .await
        .unwrap();
    }
}

async fn killed_while_the_mail_server_holds_a_message_then_restarted(database_url: &str) {
    let data = TempDir::new().unwrap();
    let db = Db::connect(&SecretString::from(database_url.to_owned()), 2)
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let db = db.with_outbox(OutboxRules {
        email: true,
        webhook: false,
        admin_groups: vec!["portal-admins".to_owned()],
        public_url: "http://portal.test".to_owned(),
        queued: Default::default(),
    });
    seed(&db).await;
    let queued = db.notifications(None, 100).await.unwrap();
    assert_eq!(queued.len(), 4, "{queued:#?}");

    // First run: the mail server holds the first message before its answer to DATA.
    let sink = MailSink::start(true);
    let mut first = start(data.path(), database_url, &sink.url());
    let deadline = Instant::now() + Duration::from_secs(120);
    while !sink.stalled() {
        if let Some(status) = first.try_wait().unwrap() {
            panic!("mirante stopped before sending: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "no message reached the mail server"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    first.kill().unwrap();
    first.wait().unwrap();
    // The server sees the connection go before it answered: that message was never taken.
    tokio::time::sleep(Duration::from_millis(500)).await;
    sink.release();
    let held = db.notifications(None, 100).await.unwrap();
    assert_eq!(
        held.iter()
            .filter(|n| n.state == DeliveryState::Pending)
            .count(),
        4,
        "nothing was marked sent: {held:#?}"
    );
    assert_eq!(
        sink.messages().len(),
        0,
        "the held message was not accepted"
    );

    // Second run: takes its lease back at once and delivers all four, once each.
    let mut second = start(data.path(), database_url, &sink.url());
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let sent = db.count_notifications(DeliveryState::Sent).await.unwrap();
        if sent == 4 {
            break;
        }
        if let Some(status) = second.try_wait().unwrap() {
            panic!("the restarted portal stopped: {status}");
        }
        assert!(Instant::now() < deadline, "only {sent} of 4 sent");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Anything sent twice would arrive within this.
    tokio::time::sleep(Duration::from_secs(2)).await;
    second.kill().unwrap();
    second.wait().unwrap();

    let mails = sink.messages();
    let rows = db.notifications(None, 100).await.unwrap();
    assert_eq!(mails.len(), 4, "every message exactly once: {mails:#?}");
    let ids: BTreeSet<&str> = mails.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(ids.len(), 4, "four different messages: {ids:?}");
    for row in &rows {
        let expected = format!(
            "<mirante.notification.{}.{}@mirante.test>",
            row.id,
            row.created_at.timestamp_millis()
        );
        let mail = mails
            .iter()
            .find(|m| m.message_id == expected)
            .unwrap_or_else(|| panic!("no mail for row {row:?}"));
        assert_eq!(mail.rcpt_to, [row.recipient.clone().unwrap()]);
        assert!(
            mail.subject.contains("awaits your approval"),
            "{}",
            mail.subject
        );
    }
    let recipients: BTreeSet<String> = mails.iter().map(|m| m.rcpt_to[0].clone()).collect();
    assert_eq!(
        recipients,
        BTreeSet::from(["ada@example.org".to_owned(), "bea@example.org".to_owned()])
    );
    let retried: Vec<i64> = rows.iter().map(|r| r.attempts).collect();
    assert_eq!(
        retried.iter().filter(|a| **a == 2).count(),
        1,
        "the held message was claimed by each run: {retried:?}"
    );
    db.close().await;
}

#[tokio::test]
async fn a_portal_killed_while_the_mail_server_holds_a_message_delivers_each_exactly_once_after_restart_on_sqlite()
 {
    let data = TempDir::new().unwrap();
    let url = format!("sqlite://{}", data.path().join("mirante.db").display());
    killed_while_the_mail_server_holds_a_message_then_restarted(&url).await;
}

#[tokio::test]
async fn a_portal_killed_while_the_mail_server_holds_a_message_delivers_each_exactly_once_after_restart_on_postgres()
 {
    use sqlx::Connection;
    let admin_url = std::env::var("MIRANTE_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let name = format!("mirante_mail_crash_{}", std::process::id());
    let mut admin = sqlx::PgConnection::connect(&admin_url)
        .await
        .expect("cannot reach PostgreSQL at MIRANTE_TEST_PG_URL");
    sqlx::query(&format!(r#"drop database if exists "{name}" with (force)"#))
        .execute(&mut admin)
        .await
        .unwrap();
    sqlx::query(&format!(r#"create database "{name}""#))
        .execute(&mut admin)
        .await
        .unwrap();
    let mut url = url::Url::parse(&admin_url).unwrap();
    url.set_path(&name);

    killed_while_the_mail_server_holds_a_message_then_restarted(url.as_str()).await;

    sqlx::query(&format!(r#"drop database if exists "{name}" with (force)"#))
        .execute(&mut admin)
        .await
        .unwrap();
}
