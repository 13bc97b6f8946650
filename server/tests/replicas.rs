//! Two processes of the real `mirante` binary on one PostgreSQL database and one catalog
//! directory: a reload one of them is told to make (SIGHUP) reaches the other through the
//! database, and each says on `/readyz` which catalog it serves.

mod support;

use std::{
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::Value;
use tempfile::TempDir;

/// Starts `mirante serve` as replica `id` on `port`, reading the catalog from `catalog`.
fn start(id: &str, port: u16, data: &Path, catalog: &Path, database_url: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mirante"))
        .arg("serve")
        .current_dir(data)
        .env_clear()
        .env("MIRANTE_BIND", format!("127.0.0.1:{port}"))
        .env("MIRANTE_DATA_DIR", data)
        .env("MIRANTE_CATALOG", catalog)
        .env("DATABASE_URL", database_url)
        .env(
            "MIRANTE_SESSION_KEY",
            "replica-test-session-key-0123456789abcdef",
        )
        .env("MIRANTE_WORKER_ID", id)
        .env("MIRANTE_REPLICA_HEARTBEAT_SECS", "1")
        .env("MIRANTE_CATALOG_REFRESH_SECS", "0")
        .env("MIRANTE_PROBE_INTERVAL_SECS", "0")
        .env("MIRANTE_FORGE_POLL_SECS", "0")
        .env("MIRANTE_SHUTDOWN_DELAY_SECS", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cannot start the mirante binary")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

async fn readyz(address: &str) -> Value {
    reqwest::get(format!("{address}/readyz"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Waits until `address` serves a catalog other than `hash`; what it then says.
async fn serving_other_than(address: &str, hash: &Value) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = readyz(address).await;
        if now["catalog_hash"] != *hash {
            return now;
        }
        assert!(
            Instant::now() < deadline,
            "{address} still serves {hash}: {now}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_reload_one_process_is_told_to_make_reaches_the_other_process() {
    let database = support::TestDatabase::create("mirante_replicas").await;
    let scratch = TempDir::new().unwrap();
    let catalog = scratch.path().join("catalog");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog"),
        &catalog,
    );
    let (data_a, data_b) = (scratch.path().join("a"), scratch.path().join("b"));
    std::fs::create_dir_all(&data_a).unwrap();
    std::fs::create_dir_all(&data_b).unwrap();
    let (port_a, port_b) = (support::free_port(), support::free_port());
    let (address_a, address_b) = (
        format!("http://127.0.0.1:{port_a}"),
        format!("http://127.0.0.1:{port_b}"),
    );
    let mut a = start("replica-a", port_a, &data_a, &catalog, &database.url);
    support::wait_ready(&mut a, &address_a).await;
    let mut b = start("replica-b", port_b, &data_b, &catalog, &database.url);
    support::wait_ready(&mut b, &address_b).await;
    let before_a = readyz(&address_a).await;
    let before_b = readyz(&address_b).await;
    let sites = catalog.join("sites.yaml");
    let text = std::fs::read_to_string(&sites).unwrap();
    std::fs::write(
        &sites,
        format!("{text}\n# edited while both replicas run\n"),
    )
    .unwrap();

    let hup = Command::new("kill")
        .args(["-HUP", &a.id().to_string()])
        .status()
        .unwrap();
    let after_a = serving_other_than(&address_a, &before_a["catalog_hash"]).await;
    let after_b = serving_other_than(&address_b, &before_b["catalog_hash"]).await;
    for child in [&mut a, &mut b] {
        let _ = child.kill();
        let _ = child.wait();
    }
    database.drop_now().await;

    assert!(hup.success());
    assert_eq!(before_a["catalog_hash"], before_b["catalog_hash"]);
    assert_eq!(
        (before_a["replica"].as_str(), before_b["replica"].as_str()),
        (Some("replica-a"), Some("replica-b"))
    );
    assert_eq!(
        after_b["catalog_hash"], after_a["catalog_hash"],
        "the process that was not told reloaded to the same catalog"
    );
}
