//! What the tests that run the real `mirante` binary share.

// Each test binary compiles this module and uses a part of it.
#![allow(dead_code)]

use std::{
    process::Child,
    time::{Duration, Instant},
};

/// A port nothing listens on now, for a portal to bind.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until the portal at `address` answers `/readyz` with 200; fails if it stops first
/// or is not ready within a minute.
pub async fn wait_ready(child: &mut Child, address: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(r) = reqwest::get(format!("{address}/readyz")).await
            && r.status() == 200
        {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("mirante serve stopped: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "mirante serve never became ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A PostgreSQL database of the test's own (`MIRANTE_TEST_PG_URL`'s server, by default the
/// local one), dropped again by [`TestDatabase::drop_now`].
pub struct TestDatabase {
    admin: sqlx::PgConnection,
    name: String,
    /// The URL of the new database.
    pub url: String,
}

impl TestDatabase {
    /// Makes an empty database named after `prefix` and the process.
    pub async fn create(prefix: &str) -> TestDatabase {
        use sqlx::Connection;
        let admin_url = std::env::var("MIRANTE_TEST_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
        let name = format!("{prefix}_{}", std::process::id());
        let mut admin = sqlx::PgConnection::connect(&admin_url)
            .await
            .expect("cannot reach PostgreSQL at MIRANTE_TEST_PG_URL");
        for sql in [
            format!(r#"drop database if exists "{name}" with (force)"#),
            format!(r#"create database "{name}""#),
        ] {
            sqlx::query(&sql).execute(&mut admin).await.unwrap();
        }
        let mut url = url::Url::parse(&admin_url).unwrap();
        url.set_path(&name);
        TestDatabase {
            admin,
            name,
            url: url.into(),
        }
    }

    /// Drops the database.
    pub async fn drop_now(mut self) {
        sqlx::query(&format!(
            r#"drop database if exists "{}" with (force)"#,
            self.name
        ))
        .execute(&mut self.admin)
        .await
        .unwrap();
    }
}
