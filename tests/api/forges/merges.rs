//! What a hosted forge tells of a merge, written once and run against each checked fake: the
//! commit a merged pull request made on its base branch, and whether a later revision (the one
//! Argo CD synced) contains it.

use mirante::adapters::forge::{Forge, ForgeError};
use serde_json::json;

use super::fake::{Fake, Model};
use super::scenarios::{BRANCH, branch_spec, pull_spec};

/// A commit id no fake repository has.
const UNKNOWN: &str = "0123456789abcdef0123456789abcdef01234567";

/// The portal's branch proposed and its pull request opened on the fake; its number.
async fn proposed<M: Model>(fake: &Fake<M>, forge: &dyn Forge) -> u64 {
    forge.create_branch(&branch_spec()).await.unwrap();
    let number = forge.open_pull_request(&pull_spec()).await.unwrap().number;
    fake.with_repo(|repo| assert!(repo.branches.contains_key(BRANCH)));
    number
}

pub async fn a_merged_pull_request_names_its_merge_commit<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let number = proposed(&fake, forge.as_ref()).await;

    let while_open = forge.merge_commit(number).await.unwrap();
    let merge = fake.with_repo(|repo| repo.merge_pull(number, false));
    let once_merged = forge.merge_commit(number).await.unwrap();

    assert_eq!(
        while_open, None,
        "an open pull request has made no commit yet"
    );
    assert_eq!(once_merged.as_deref(), Some(merge.as_str()));
    fake.with_repo(|repo| assert_eq!(repo.branches["main"], merge));
    fake.assert_contract_kept();
}

pub async fn a_squashed_pull_request_names_the_commit_squashed_onto_its_base<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let number = proposed(&fake, forge.as_ref()).await;

    let squashed = fake.with_repo(|repo| repo.merge_pull(number, true));

    assert_eq!(
        forge.merge_commit(number).await.unwrap().as_deref(),
        Some(squashed.as_str())
    );
    fake.with_repo(|repo| assert_eq!(repo.commits[&squashed].parents.len(), 1));
    fake.assert_contract_kept();
}

pub async fn a_closed_or_unknown_pull_request_names_no_merge_commit<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let number = proposed(&fake, forge.as_ref()).await;
    fake.with_repo(|repo| repo.pulls[0].open = false);

    assert_eq!(forge.merge_commit(number).await.unwrap(), None, "closed");
    assert_eq!(forge.merge_commit(999).await.unwrap(), None, "unknown");
    fake.assert_contract_kept();
}

pub async fn the_forge_tells_whether_a_revision_contains_the_merge<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let number = proposed(&fake, forge.as_ref()).await;
    let before = fake.with_repo(|repo| repo.branches["main"].clone());
    // Someone else's branch, made before the merge and never merged.
    let aside = fake.with_repo(|repo| repo.push_branch("aside", "main", &[("x.yaml", "x: 1\n")]));
    let merge = fake.with_repo(|repo| repo.merge_pull(number, false));
    let later = fake
        .with_repo(|repo| repo.push_branch("main", "main", &[("README.md", "# devops, later\n")]));

    assert_eq!(forge.contains(&merge, &merge).await.unwrap(), Some(true));
    assert_eq!(forge.contains(&merge, &later).await.unwrap(), Some(true));
    assert_eq!(forge.contains(&merge, &before).await.unwrap(), Some(false));
    assert_eq!(forge.contains(&merge, &aside).await.unwrap(), Some(false));
    assert_eq!(forge.contains(&before, &later).await.unwrap(), Some(true));
    fake.assert_contract_kept();
}

pub async fn an_unknown_commit_is_answered_cannot_tell<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let head = fake.with_repo(|repo| repo.branches["main"].clone());

    assert_eq!(forge.contains(&head, UNKNOWN).await.unwrap(), None);
    assert_eq!(forge.contains(UNKNOWN, &head).await.unwrap(), None);
    fake.assert_contract_kept();
}

pub async fn a_revision_that_is_not_a_commit_id_is_answered_cannot_tell_without_asking<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let head = fake.with_repo(|repo| repo.branches["main"].clone());

    // A branch name, an abbreviated id, a Helm chart version Argo CD reports as a revision.
    for revision in ["main", &head[..7], "1.2.3"] {
        assert_eq!(
            forge.contains(&head, revision).await.unwrap(),
            None,
            "{revision}"
        );
        assert_eq!(
            forge.contains(revision, &head).await.unwrap(),
            None,
            "{revision}"
        );
    }
    assert_eq!(fake.calls(M::CONTAINS_OP), 0);
}

pub async fn a_forge_failing_to_compare_is_unavailable_and_retried<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let head = fake.with_repo(|repo| repo.branches["main"].clone());
    fake.fail_next(
        M::CONTAINS_OP,
        503,
        json!({"message": "Service Unavailable"}),
    );

    let error = forge.contains(&head, &head).await.unwrap_err();
    let again = forge.contains(&head, &head).await.unwrap();

    assert!(matches!(error, ForgeError::Unavailable(_)), "{error:?}");
    assert!(error.is_retryable());
    assert_eq!(again, Some(true));
    fake.assert_contract_kept();
}

/// GitLab names neither a merge nor a squash commit for a request merged by fast-forward (its
/// own commits are on the target branch).
pub async fn a_fast_forward_merge_names_no_merge_commit<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let number = proposed(&fake, forge.as_ref()).await;
    fake.with_repo(|repo| {
        let tip = repo.branches[BRANCH].clone();
        repo.branches.insert("main".into(), tip);
        repo.pulls[0].open = false;
        repo.pulls[0].merged = true;
    });

    assert_eq!(forge.merge_commit(number).await.unwrap(), None);
    assert_eq!(
        forge.pull_request(number).await.unwrap().state,
        mirante::adapters::forge::PullRequestState::Merged
    );
    fake.assert_contract_kept();
}

/// Gitea 1.22's compare takes branch and tag names only, and answers 404 for commit ids.
pub async fn a_compare_that_takes_no_commit_ids_cannot_tell<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let head = fake.with_repo(|repo| repo.branches["main"].clone());
    fake.fail_next(
        M::CONTAINS_OP,
        404,
        json!({"errors": [], "message": "The target couldn't be found.", "url": "https://gitea.example.org/api/swagger"}),
    );

    assert_eq!(forge.contains(&head, &head).await.unwrap(), None);
    assert_eq!(fake.calls(M::CONTAINS_OP), 1);
    fake.assert_contract_kept();
}
