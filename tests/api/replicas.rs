//! Two replicas of the portal on one PostgreSQL database and one catalog: a reload one of them
//! is asked for reaches the other, and each says which catalog it serves.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::*;

/// What the replica at `app` says it serves on `/readyz`.
async fn serves(app: &TestApp) -> Value {
    app.get_json("/readyz", 200).await
}

#[tokio::test]
async fn a_reload_asked_of_one_replica_reaches_the_other_and_each_says_what_it_serves() {
    let first = spawn_configured(Backend::Postgres, CatalogSetup::Small, |config, _| {
        config.worker_id = Some("replica-a".into());
    })
    .await;
    let second = first
        .replica(|config, _| config.worker_id = Some("replica-b".into()))
        .await;
    let before = serves(&second).await;
    first.write_catalog_file(
        "items.yaml",
        &ITEMS.replace("Two hosts in production.", "Three hosts in production."),
    );

    let reloaded: Value = first
        .post("/api/v1/catalog/reload")
        .await
        .json()
        .await
        .unwrap();
    let new_hash = reloaded["catalog"]["hash"].clone();
    let deadline = Instant::now() + Duration::from_secs(20);
    let followed = loop {
        let now = serves(&second).await;
        if now["catalog_hash"] == new_hash {
            break now;
        }
        assert!(
            Instant::now() < deadline,
            "the second replica never followed: {now}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Both have written what they serve since.
    let deadline = Instant::now() + Duration::from_secs(20);
    let listed = loop {
        let listed = second
            .get_json_as(&second.client, "/api/v1/replicas", 200)
            .await;
        let agreeing = listed["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["catalog_hash"] == new_hash)
            .count();
        if agreeing == 2 {
            break listed;
        }
        assert!(
            Instant::now() < deadline,
            "the replicas never agreed: {listed}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let rui = second.dev_browser("rui").await;
    let refused = second.get_json_as(&rui, "/api/v1/replicas", 403).await;

    assert_eq!(reloaded["outcome"], "updated", "{reloaded}");
    assert_ne!(before["catalog_hash"], new_hash);
    assert_eq!(followed["replica"], "replica-b");
    let found = second.get_json("/api/v1/items?q=three%20hosts", 200).await;
    assert_eq!(found["items"][0]["id"], "hypervisor-north", "{found}");
    let replicas: Vec<(&str, bool, bool)> = listed["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap(),
                r["agrees"].as_bool().unwrap(),
                r["this"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        replicas,
        [("replica-a", true, false), ("replica-b", true, true)]
    );
    assert!(refused["error"].as_str().is_some());
    let audit = second.db.list_audit(20).await.unwrap();
    assert!(
        audit
            .iter()
            .any(|e| e.action == "catalog.reload" && e.detail["trigger"]["kind"] == "peer"),
        "the follow is audited as the peer's"
    );
}
