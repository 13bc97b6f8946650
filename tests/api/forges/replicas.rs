//! Two replicas of the portal on one PostgreSQL database and one (checked fake) forge: a
//! proposal slower than the worker's lease is still worked by one worker only, because the
//! worker renews its lease while it works.

use std::time::{Duration, Instant};

use serde_json::json;

use super::fake::{Fake, Model};
use crate::{helpers::Backend, requests::wait_for_state};

pub async fn a_proposal_slower_than_the_lease_is_worked_by_one_replica_only<M: Model>() {
    let fake = Fake::<M>::start().await;
    fake.with_scratch_template();
    let first = fake
        .portal_on(Backend::Postgres, |config| {
            config.worker_lease_secs = 1;
            config.worker_id = Some("replica-a".into());
        })
        .await;
    let second = first
        .replica(|config, _| config.worker_id = Some("replica-b".into()))
        .await;
    // Opening the pull request takes three and a half leases.
    fake.delay_next(M::OPEN_PULL_OP, Duration::from_millis(3500));

    let rui = first.dev_browser("rui").await;
    let input = json!({"template": "scratch-space", "values": {"name": "tmp1"}});
    let id = first.post_json(&rui, "/api/v1/requests", &input, 201).await["id"]
        .as_i64()
        .unwrap();
    // The other replica looks at the outbox all along, as its worker does when woken.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut taken_over = 0;
    loop {
        let request = first.db.request(id).await.unwrap().unwrap();
        if request.state.as_str() == "proposed" {
            break;
        }
        assert!(Instant::now() < deadline, "never proposed: {request:?}");
        taken_over += second.worker.run_due().await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    assert_eq!(
        taken_over, 0,
        "the second replica took a job still being worked"
    );
    wait_for_state(&first, &rui, id, "proposed").await;
    let job = first.db.job_of_request(id).await.unwrap().unwrap();
    assert_eq!(job.attempts, 1, "{job:?}");
    assert!(job.done_at.is_some(), "{job:?}");
    assert_eq!(fake.calls(M::OPEN_PULL_OP), 1);
    assert_eq!(fake.with_repo(|repo| repo.pulls.len()), 1);
    fake.assert_contract_kept();
}

pub async fn replicas_share_the_open_pull_requests_and_read_each_once_per_interval<M: Model>() {
    let fake = Fake::<M>::start().await;
    fake.with_scratch_template();
    // An hour between two reads of one pull request; the background pollers' first round
    // finds nothing open yet.
    let first = fake
        .portal_on(Backend::Postgres, |config| {
            config.forge_poll_secs = 3600;
            config.worker_id = Some("replica-a".into());
        })
        .await;
    let second = first
        .replica(|config, _| config.worker_id = Some("replica-b".into()))
        .await;
    let rui = first.dev_browser("rui").await;
    let mut ids = Vec::new();
    for name in ["tmp1", "tmp2", "tmp3", "tmp4"] {
        let input = json!({"template": "scratch-space", "values": {"name": name}});
        let id = first.post_json(&rui, "/api/v1/requests", &input, 201).await["id"]
            .as_i64()
            .unwrap();
        wait_for_state(&first, &rui, id, "proposed").await;
        ids.push(id);
    }
    // One of them merged on the forge.
    fake.with_repo(|repo| {
        let number = repo.pulls[0].number;
        repo.merge_pull(number, false);
    });
    let reads_before = fake.calls("pulls/get");

    let (a, b) = tokio::join!(first.worker.poll_open(), second.worker.poll_open());
    let again = second.worker.poll_open().await.unwrap();

    assert_eq!(a.unwrap() + b.unwrap(), 1, "the merge is seen once");
    assert_eq!(again, 0);
    assert_eq!(
        fake.calls("pulls/get") - reads_before,
        4,
        "each open pull request read once by the two replicas together"
    );
    wait_for_state(&first, &rui, ids[0], "merged").await;
    fake.assert_contract_kept();
}

pub async fn a_pull_request_the_forge_could_not_be_read_for_keeps_its_turn<M: Model>() {
    let fake = Fake::<M>::start().await;
    fake.with_scratch_template();
    // An hour between two reads of one pull request.
    let app = fake
        .portal_on(Backend::Sqlite, |config| config.forge_poll_secs = 3600)
        .await;
    let rui = app.dev_browser("rui").await;
    let mut ids = Vec::new();
    for name in ["tmp1", "tmp2"] {
        let input = json!({"template": "scratch-space", "values": {"name": name}});
        let id = app.post_json(&rui, "/api/v1/requests", &input, 201).await["id"]
            .as_i64()
            .unwrap();
        wait_for_state(&app, &rui, id, "proposed").await;
        ids.push(id);
    }
    fake.with_repo(|repo| {
        for number in repo.pulls.iter().map(|p| p.number).collect::<Vec<_>>() {
            repo.merge_pull(number, false);
        }
    });
    fake.fail_next("pulls/get", 503, json!({"message": "Service Unavailable"}));

    let down = app.worker.poll_open().await.unwrap();
    let back = app.worker.poll_open().await.unwrap();

    assert_eq!(down, 0, "the round ends at the forge's 503");
    assert_eq!(
        back, 2,
        "the next round reads both again, the one the 503 met included"
    );
    for id in ids {
        wait_for_state(&app, &rui, id, "merged").await;
    }
    fake.assert_contract_kept();
}
