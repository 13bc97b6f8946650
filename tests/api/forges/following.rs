//! Following a request merged on a hosted forge in Argo CD: the portal, configured for a
//! checked fake forge and a fake Argo CD, waits for the commit the merge made (not whatever the
//! base branch holds when it notices), and counts a later revision as deployed because the
//! forge says it contains the merge.

use mirante::Config;
use secrecy::SecretString;
use serde_json::json;

use super::fake::{Fake, Model};
use crate::{argocd::resource_until, requests::wait_for_state};
use mirante_tests::argocd::{AppStatus, FakeArgo, TOKEN, application};

const TARGET: &str = "scratch/tmp1";

fn follow(argocd: &str) -> impl FnOnce(&mut Config) {
    let url = argocd.to_owned();
    move |config| {
        config.argocd_url = Some(url);
        config.argocd_token = Some(SecretString::from(TOKEN.to_owned()));
        config.argocd_poll_secs = 1;
        config.argocd_poll_max_secs = 2;
        config.probe_timeout_secs = 2;
        // The portal learns of the merge by asking the forge.
        config.forge_poll_secs = 1;
    }
}

pub async fn a_request_merged_on_the_forge_is_live_at_a_later_revision_that_contains_it<
    M: Model,
>() {
    let argocd = FakeArgo::up().await;
    let fake = Fake::<M>::start().await;
    fake.with_scratch_template();
    let app = fake.portal(follow(&argocd.base)).await;
    let rui = app.dev_browser("rui").await;
    let input = json!({"template": "scratch-space", "values": {"name": "tmp1"}});
    let id = app.post_json(&rui, "/api/v1/requests", &input, 201).await["id"]
        .as_i64()
        .unwrap();
    wait_for_state(&app, &rui, id, "proposed").await;

    // Merged on the forge, and the base branch moves on twice before the portal looks.
    let (before, merge, later, newest) = fake.with_repo(|repo| {
        let before = repo.branches["main"].clone();
        let number = repo.pulls[0].number;
        let merge = repo.merge_pull(number, false);
        let later = repo.push_branch("main", "main", &[("README.md", "# later\n")]);
        let newest = repo.push_branch("main", "main", &[("README.md", "# newest\n")]);
        (before, merge, later, newest)
    });
    wait_for_state(&app, &rui, id, "merged").await;

    argocd.put(application(
        "scratch-tmp1",
        TARGET,
        &AppStatus {
            sync: "Synced",
            revision: &before,
            health: "Healthy",
            message: None,
        },
    ));
    let syncing = resource_until(&app, &rui, id, "became syncing", |r| {
        r["state"] == "syncing"
    })
    .await;
    assert_eq!(
        syncing["deployment"]["merge_commit"],
        merge.as_str(),
        "the merge's own commit, not the base branch's head ({newest})"
    );
    assert!(
        syncing["deployment"]["message"]
            .as_str()
            .unwrap()
            .contains("does not contain the merge"),
        "{syncing}"
    );

    // Neither the merge commit nor the base branch's head: the forge says it contains it.
    argocd.put(application(
        "scratch-tmp1",
        TARGET,
        &AppStatus {
            sync: "Synced",
            revision: &later,
            health: "Healthy",
            message: None,
        },
    ));
    let live = resource_until(&app, &rui, id, "became live", |r| r["state"] == "live").await;
    assert_eq!(live["deployment"]["revision"], later.as_str());
    assert!(fake.calls(M::CONTAINS_OP) >= 2, "asked the forge");
    fake.assert_contract_kept();
    argocd.assert_clean();
}
