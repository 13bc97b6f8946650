//! Self-service templates from the monorepo on a hosted forge: the portal, configured for a
//! checked fake, offers a template as soon as it is on the base branch, keeps the last good
//! templates while the forge is down or the folder is too large, and says why to admins.

use mirante::app::selfservice::service::MONOREPO_TEMPLATES_MAX_FILES;
use serde_json::{Value, json};

use super::fake::{Fake, Model, TOKEN};
use crate::{
    helpers::TestApp,
    requests::{SCRATCH_NAMESPACE, SCRATCH_TEMPLATE, preview_files},
};

const FOLDER: &str = "self-service/templates";

/// Pushes `files` (paths relative to the templates folder) onto `main`, as a merge would.
fn merge_into_folder<M: Model>(fake: &Fake<M>, files: &[(&str, &str)]) {
    let files: Vec<(String, &str)> = files
        .iter()
        .map(|(p, c)| (format!("{FOLDER}/{p}"), *c))
        .collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
    fake.with_repo(|repo| repo.push_branch("main", "main", &files));
}

async fn template_ids(app: &TestApp, client: &reqwest::Client) -> Vec<String> {
    let list = app.get_json_as(client, "/api/v1/templates", 200).await;
    list["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

/// What the admins' page `/admin/templates` lists, through its server function.
async fn problems(app: &TestApp, admin: &reqwest::Client) -> Vec<Value> {
    let answer = admin
        .post(format!("{}/_fn/template-problems", app.address))
        .header("origin", &app.address)
        .form(&[] as &[(&str, &str)])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    answer.json::<Vec<Value>>().await.unwrap()
}

/// A template added to the base branch is offered without a redeploy.
pub async fn offered_without_a_redeploy<M: Model>() {
    let fake = Fake::<M>::start().await;
    let app = fake.portal(|_| {}).await;
    let rui = app.dev_browser("rui").await;
    let ada = app.dev_browser("ada").await;
    let before = template_ids(&app, &rui).await;
    assert!(!before.contains(&"scratch-space".to_owned()), "{before:?}");

    merge_into_folder(
        &fake,
        &[
            ("scratch-space/template.yaml", SCRATCH_TEMPLATE),
            ("scratch-space/skeleton/namespace.yaml", SCRATCH_NAMESPACE),
            ("broken/template.yaml", "id: [broken\n"),
        ],
    );

    let after = template_ids(&app, &rui).await;
    assert!(after.contains(&"scratch-space".to_owned()), "{after:?}");
    assert!(
        after.contains(&"gpu-workspace".to_owned()),
        "the built-in ones stay: {after:?}"
    );
    assert!(!after.contains(&"broken".to_owned()), "{after:?}");
    let input = json!({ "template": "scratch-space", "values": { "name": "tmp1" } });
    let preview = app
        .post_json(&rui, "/api/v1/requests/preview", &input, 200)
        .await;
    let files = preview_files(&preview);
    assert_eq!(files.len(), 1, "{preview}");
    assert_eq!(files[0].0, "scratch/tmp1/namespace.yaml");
    assert!(
        files[0].1.contains("name: \"scratch-tmp1\""),
        "{}",
        files[0].1
    );
    let listed = problems(&app, &ada).await;
    assert!(
        listed
            .iter()
            .any(|p| p["file"] == "monorepo:self-service/templates/broken/template.yaml"),
        "{listed:?}"
    );

    // Nothing changed in the folder: its files are not read again, even when the branch moves.
    let reads = fake.calls(M::FOLDER_FILE_OP);
    fake.with_repo(|repo| repo.push_branch("main", "main", &[("README.md", "# devops!\n")]));
    let again = template_ids(&app, &rui).await;
    assert_eq!(again, after);
    assert_eq!(fake.calls(M::FOLDER_FILE_OP), reads);
    fake.assert_contract_kept();
}

/// A forge that is down keeps the templates read last, and admins are told why.
pub async fn kept_while_the_forge_is_down<M: Model>() {
    let fake = Fake::<M>::start().await;
    let app = fake.portal(|_| {}).await;
    let rui = app.dev_browser("rui").await;
    let ada = app.dev_browser("ada").await;
    merge_into_folder(
        &fake,
        &[
            ("scratch-space/template.yaml", SCRATCH_TEMPLATE),
            ("scratch-space/skeleton/namespace.yaml", SCRATCH_NAMESPACE),
        ],
    );
    assert!(
        template_ids(&app, &rui)
            .await
            .contains(&"scratch-space".to_owned())
    );

    fake.fail_next(M::HEAD_OP, 503, json!({"message": "Service Unavailable"}));
    let while_down = template_ids(&app, &rui).await;
    fake.fail_next(M::HEAD_OP, 503, json!({"message": "Service Unavailable"}));
    let told = problems(&app, &ada).await;

    assert!(
        while_down.contains(&"scratch-space".to_owned()),
        "{while_down:?}"
    );
    let failure = told.first().expect("the failure is listed");
    assert_eq!(failure["file"], FOLDER, "{told:?}");
    let message = failure["message"].as_str().unwrap();
    assert!(
        message.contains("cannot read this folder on `main`"),
        "{message}"
    );
    assert!(message.contains("the forge is unavailable"), "{message}");
    assert!(
        message.contains("the templates read at commit"),
        "{message}"
    );
    assert!(!message.contains(TOKEN), "{message}");

    // The forge answers again: the failure is gone, the templates are the same.
    let back = problems(&app, &ada).await;
    assert!(back.iter().all(|p| p["file"] != FOLDER), "{back:?}");
    assert!(
        template_ids(&app, &rui)
            .await
            .contains(&"scratch-space".to_owned())
    );
    fake.assert_contract_kept();
}

/// An oversized folder is refused clearly, without reading its files; the last templates stay.
pub async fn oversized_folder_refused<M: Model>() {
    let fake = Fake::<M>::start().await;
    let app = fake.portal(|_| {}).await;
    let rui = app.dev_browser("rui").await;
    let ada = app.dev_browser("ada").await;
    merge_into_folder(
        &fake,
        &[
            ("scratch-space/template.yaml", SCRATCH_TEMPLATE),
            ("scratch-space/skeleton/namespace.yaml", SCRATCH_NAMESPACE),
        ],
    );
    assert!(
        template_ids(&app, &rui)
            .await
            .contains(&"scratch-space".to_owned())
    );
    let reads = fake.calls(M::FOLDER_FILE_OP);

    let bulk: Vec<(String, String)> = (0..=MONOREPO_TEMPLATES_MAX_FILES)
        .map(|i| (format!("bulk/file-{i:04}.txt"), format!("{i}\n")))
        .collect();
    let bulk: Vec<(&str, &str)> = bulk.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    merge_into_folder(&fake, &bulk);
    let ids = template_ids(&app, &rui).await;
    let told = problems(&app, &ada).await;

    assert!(ids.contains(&"scratch-space".to_owned()), "{ids:?}");
    let failure = told.first().expect("the refusal is listed");
    assert_eq!(failure["file"], FOLDER, "{told:?}");
    let message = failure["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "holds more than {MONOREPO_TEMPLATES_MAX_FILES} files"
        )),
        "{message}"
    );
    assert_eq!(
        fake.calls(M::FOLDER_FILE_OP),
        reads,
        "no file of the oversized folder is read"
    );

    // Refused for good at this head: the next use does not list the folder again.
    let listings = fake.calls(M::TREE_OP);
    assert!(
        template_ids(&app, &rui)
            .await
            .contains(&"scratch-space".to_owned())
    );
    assert_eq!(fake.calls(M::TREE_OP), listings);
    assert_eq!(problems(&app, &ada).await.first(), Some(failure));
    fake.assert_contract_kept();
}
