//! An admin's catalog change with the monorepo on a hosted forge: the portal serves a checkout
//! of the catalog (`MIRANTE_CATALOG`), reads the catalog folder of the base branch through the
//! forge's API, and proposes the edited file as a pull request there.

use serde_json::{Value, json};

use super::fake::{Fake, Model};
use crate::helpers::{TestApp, test_catalog};
use crate::requests::wait_for_state;

const ITEM: &str = "hypervisor-south";
/// The catalog's folder in the fake monorepo (its `catalog/` holds something else).
const FOLDER: &str = "platform/catalog";
const FILE: &str = "platform/catalog/items.yaml";

/// The portal on SQLite with its monorepo on `fake`, whose base branch holds the test catalog
/// in [`FOLDER`] (the portal's own copy is the same catalog, from a directory).
async fn portal_with_catalog_on<M: Model>(fake: &Fake<M>) -> TestApp {
    let files: Vec<(String, String)> = test_catalog()
        .into_iter()
        .map(|(path, content)| (format!("{FOLDER}/{path}"), content))
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    fake.with_repo(|repo| repo.push_branch("main", "main", &files));
    fake.portal(|config| config.monorepo_catalog = FOLDER.into())
        .await
}

fn change() -> Value {
    json!({
        "state": "validated",
        "qualifier": null,
        "evidence": [
            {"kind": "attestation", "by": "ana", "date": "2026-11-30",
             "what": "Both hosts of South boot from the cluster's storage: checked # on site"}
        ],
        "reason": "South's cluster was checked on site."
    })
}

/// The lines of `before` and `after` that differ, as (`-` or `+`, line), in order.
fn changed_lines(before: &str, after: &str) -> Vec<(char, String)> {
    let diff = similar::TextDiff::from_lines(before, after);
    diff.iter_all_changes()
        .filter_map(|c| match c.tag() {
            similar::ChangeTag::Delete => Some(('-', c.value().trim_end().to_owned())),
            similar::ChangeTag::Insert => Some(('+', c.value().trim_end().to_owned())),
            similar::ChangeTag::Equal => None,
        })
        .collect()
}

/// A state change made by an admin arrives as a pull request on the hosted forge whose only
/// difference from the base branch is the item's state, qualifier and evidence lines.
pub async fn proposed_as_a_pull_request<M: Model>() {
    let fake = Fake::<M>::start().await;
    let app = portal_with_catalog_on(&fake).await;
    let path = format!("/api/v1/items/{ITEM}/changes");

    let preview = app
        .post_json(&app.client, &format!("{path}/preview"), &change(), 200)
        .await;
    let submitted = app.post_json(&app.client, &path, &change(), 201).await;
    let id = submitted["id"].as_i64().unwrap();
    let proposed = wait_for_state(&app, &app.client, id, "proposed").await;

    assert_eq!(preview["file"], FILE);
    assert_eq!(preview["from"]["state"], "declared");
    let branch = proposed["branch"].as_str().unwrap().to_owned();
    assert_eq!(branch, format!("mirante/{id}-{ITEM}-state"));
    let (before, after, pull) = fake.with_repo(|repo| {
        (
            repo.file("main", FILE).unwrap(),
            repo.file(&branch, FILE).unwrap(),
            repo.open_pull_for(&branch, "main").cloned(),
        )
    });
    assert_eq!(
        changed_lines(&before, &after),
        [
            ('-', "    state: declared".to_owned()),
            ('-', "    qualifier: partial".to_owned()),
            ('+', "    state: validated".to_owned()),
            ('+', "    evidence:".to_owned()),
            ('+', "      - kind: attestation".to_owned()),
            ('+', "        by: \"ana\"".to_owned()),
            ('+', "        date: \"2026-11-30\"".to_owned()),
            (
                '+',
                "        what: \"Both hosts of South boot from the cluster's storage: checked # on site\""
                    .to_owned()
            ),
        ],
        "{after}"
    );
    let pull = pull.expect("a pull request is open for the branch");
    assert_eq!(proposed["pr_number"].as_u64(), Some(pull.number));
    assert!(
        pull.body.contains("South's cluster was checked on site."),
        "{}",
        pull.body
    );
    fake.assert_contract_kept();
}

/// Without a catalog folder on the base branch there is nothing to change: the admin is told
/// where the portal looked, and no request is made.
pub async fn refused_without_a_catalog_on_the_base_branch<M: Model>() {
    let fake = Fake::<M>::start().await;
    let app = fake
        .portal(|config| config.monorepo_catalog = "ops/catalog".into())
        .await;

    let answer = app
        .post_json(
            &app.client,
            &format!("/api/v1/items/{ITEM}/changes"),
            &change(),
            409,
        )
        .await;

    let message = answer.to_string();
    assert!(message.contains("ops/catalog"), "{message}");
    let requests = app.get_json_as(&app.client, "/api/v1/requests", 200).await;
    assert_eq!(requests["requests"], json!([]), "{requests}");
    fake.assert_contract_kept();
}
