//! What every hosted forge client must do, written once and run against each checked fake.

use mirante::selfservice::forge::{
    BranchSpec, CommitAuthor, FileChange, ForgeError, PullRequestSpec, PullRequestState,
};
use serde_json::json;

use super::fake::{Fake, Model, TOKEN};

pub const BRANCH: &str = "mirante/42-gpu-workspace-alice";

pub fn branch_spec() -> BranchSpec {
    BranchSpec {
        branch: BRANCH.into(),
        base: "main".into(),
        message: "gpu-workspace: alice on gpu-sp-01\n\nRequested by Alice through Mirante.".into(),
        author: CommitAuthor {
            name: "Mirante".into(),
            email: "mirante@example.org".into(),
        },
        files: vec![
            FileChange {
                path: "apps/gpu/alice/namespace.yaml".into(),
                content: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: alice\n".into(),
            },
            FileChange {
                path: "apps/gpu/alice/quota.yaml".into(),
                content: "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: gpu\n  namespace: alice\nspec:\n  hard:\n    requests.nvidia.com/gpu: \"1\"\n".into(),
            },
            // A file that already exists on the base branch: an update, not a creation.
            FileChange {
                path: "apps/shared/values.yaml".into(),
                content: "replicas: 2\n".into(),
            },
        ],
    }
}

pub fn pull_spec() -> PullRequestSpec {
    PullRequestSpec {
        branch: BRANCH.into(),
        base: "main".into(),
        title: "GPU workspace for alice".into(),
        body:
            "Requested by **Alice**: 1 GPU on gpu-sp-01.\n\n[Request 42](http://portal/requests/42)"
                .into(),
    }
}

/// Neither the error's message nor its debug form shows the token.
fn assert_no_token(error: &ForgeError, token: &str) {
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains(token), "the token leaked: {shown}");
}

pub async fn proposing_makes_one_commit_on_a_new_branch_and_opens_one_pull_request<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let spec = branch_spec();

    assert_eq!(forge.branch_head(BRANCH).await.unwrap(), None);
    assert!(forge.find_pull_request(BRANCH).await.unwrap().is_none());
    let sha = forge.create_branch(&spec).await.unwrap();
    let pull = forge.open_pull_request(&pull_spec()).await.unwrap();

    assert_eq!(forge.branch_head(BRANCH).await.unwrap(), Some(sha.clone()));
    fake.with_repo(|repo| {
        assert_eq!(repo.commits_ahead(BRANCH, "main"), 1);
        let commit = repo.resolve(BRANCH).unwrap();
        assert_eq!(commit.sha, sha);
        assert_eq!(commit.message, spec.message);
        assert_eq!(
            commit.author,
            ("Mirante".into(), "mirante@example.org".into())
        );
        for file in &spec.files {
            assert_eq!(
                commit.tree.get(&file.path),
                Some(&file.content),
                "{}",
                file.path
            );
        }
        // Everything else on the base is still there.
        assert_eq!(
            commit.tree.get("catalog/sites.yaml").map(String::as_str),
            Some("sites:\n  - id: franca\n")
        );
        assert_eq!(repo.pulls.len(), 1);
        assert_eq!(repo.pulls[0].title, "GPU workspace for alice");
        assert_eq!(repo.pulls[0].body, pull_spec().body);
        assert_eq!(repo.pulls[0].base, "main");
    });
    assert_eq!(pull.branch, BRANCH);
    assert_eq!(pull.state, PullRequestState::Open);
    assert!(pull.url.starts_with("https://"), "{}", pull.url);
    assert_eq!(
        forge.find_pull_request(BRANCH).await.unwrap(),
        Some(pull.clone())
    );
    assert_eq!(forge.pull_request(pull.number).await.unwrap(), pull);
    assert_eq!(fake.calls(M::COMMIT_OP), 1);
    assert_eq!(fake.calls(M::OPEN_PULL_OP), 1);
    fake.assert_contract_kept();
}

pub async fn files_and_directories_are_read_from_a_branch<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();

    assert_eq!(
        forge
            .read_file("main", "catalog/sites.yaml")
            .await
            .unwrap()
            .as_deref(),
        Some("sites:\n  - id: franca\n")
    );
    assert_eq!(
        forge
            .read_file("main", "catalog/absent.yaml")
            .await
            .unwrap(),
        None
    );
    assert!(forge.path_exists("main", "apps/shared").await.unwrap());
    assert!(
        forge
            .path_exists("main", "apps/shared/values.yaml")
            .await
            .unwrap()
    );
    assert!(!forge.path_exists("main", "apps/gpu/alice").await.unwrap());
    fake.assert_contract_kept();
}

pub async fn a_resumed_proposal_reuses_the_branch_and_the_pull_request<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let first = forge.create_branch(&branch_spec()).await.unwrap();
    forge.open_pull_request(&pull_spec()).await.unwrap();

    // The worker starts over after a crash: the same steps, as it would run them.
    let again = forge.create_branch(&branch_spec()).await.unwrap();
    let found = forge.find_pull_request(BRANCH).await.unwrap();

    assert_eq!(again, first);
    assert!(found.is_some_and(|p| p.state == PullRequestState::Open));
    assert_eq!(fake.calls(M::COMMIT_OP), 1, "no second commit");
    assert_eq!(fake.calls(M::OPEN_PULL_OP), 1, "no second pull request");
    fake.with_repo(|repo| {
        assert_eq!(repo.commits_ahead(BRANCH, "main"), 1);
        assert_eq!(repo.pulls.len(), 1);
    });
    fake.assert_contract_kept();
}

pub async fn a_pull_request_the_forge_says_already_exists_is_reused<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    forge.create_branch(&branch_spec()).await.unwrap();
    // Opened by an attempt whose answer was lost.
    let number = fake.with_repo(|repo| repo.open_pull(BRANCH, "main", "earlier", ""));

    let pull = forge.open_pull_request(&pull_spec()).await.unwrap();

    assert_eq!(pull.number, number);
    assert_eq!(pull.state, PullRequestState::Open);
    fake.with_repo(|repo| assert_eq!(repo.pulls.len(), 1));
    assert_eq!(fake.calls(M::OPEN_PULL_OP), 1);
    fake.assert_contract_kept();
}

pub async fn a_branch_holding_other_content_is_a_conflict<M: Model>() {
    let fake = Fake::<M>::start().await;
    fake.with_repo(|repo| repo.push_branch(BRANCH, "main", &[("apps/gpu/alice/x.yaml", "a: 1\n")]));
    let forge = fake.forge();

    let error = forge.create_branch(&branch_spec()).await.unwrap_err();

    assert!(matches!(error, ForgeError::Conflict(_)), "{error:?}");
    assert!(!error.is_retryable());
    assert_eq!(fake.calls(M::COMMIT_OP), 0);
    fake.assert_contract_kept();
}

pub async fn merged_and_closed_pull_requests_are_reported_so<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    forge.create_branch(&branch_spec()).await.unwrap();
    let pull = forge.open_pull_request(&pull_spec()).await.unwrap();

    fake.with_repo(|repo| {
        repo.pulls[0].open = false;
        repo.pulls[0].merged = true;
    });
    assert_eq!(
        forge.pull_request(pull.number).await.unwrap().state,
        PullRequestState::Merged
    );
    assert_eq!(
        forge
            .find_pull_request(BRANCH)
            .await
            .unwrap()
            .map(|p| p.state),
        Some(PullRequestState::Merged)
    );
    fake.with_repo(|repo| repo.pulls[0].merged = false);
    assert_eq!(
        forge.pull_request(pull.number).await.unwrap().state,
        PullRequestState::Closed
    );
    fake.assert_contract_kept();
}

pub async fn a_refused_token_is_unauthorized_and_not_retried<M: Model>() {
    let fake = Fake::<M>::start().await;
    let wrong = "wrong-token-5e1c0a9b77";
    let forge = fake.forge_with_token(wrong);

    let error = forge.create_branch(&branch_spec()).await.unwrap_err();

    assert!(matches!(error, ForgeError::Unauthorized(_)), "{error:?}");
    assert!(!error.is_retryable());
    assert_no_token(&error, wrong);
    assert_eq!(fake.calls(M::COMMIT_OP), 0);
    fake.assert_contract_kept();
}

pub async fn a_server_error_is_unavailable_and_the_retry_completes<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    // A forge that echoes the token in its error page must not get it into ours.
    fake.fail_next(
        M::COMMIT_OP,
        502,
        json!({"message": format!("upstream failed while handling {TOKEN}")}),
    );

    let error = forge.create_branch(&branch_spec()).await.unwrap_err();
    assert!(matches!(error, ForgeError::Unavailable(_)), "{error:?}");
    assert!(error.is_retryable());
    assert_no_token(&error, TOKEN);
    assert!(error.to_string().contains("502"), "{error}");

    let sha = forge.create_branch(&branch_spec()).await.unwrap();
    fake.with_repo(|repo| {
        assert_eq!(repo.branches.get(BRANCH), Some(&sha));
        assert_eq!(repo.commits_ahead(BRANCH, "main"), 1);
    });
    fake.assert_contract_kept();
}

pub async fn rate_limiting_is_unavailable<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    fake.fail_next(
        M::OPEN_PULL_OP,
        429,
        json!({"message": "Too Many Requests"}),
    );
    forge.create_branch(&branch_spec()).await.unwrap();

    let error = forge.open_pull_request(&pull_spec()).await.unwrap_err();

    assert!(error.is_retryable(), "{error:?}");
    fake.assert_contract_kept();
}

pub async fn a_forge_too_slow_to_answer_is_unavailable<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    forge.create_branch(&branch_spec()).await.unwrap();
    fake.delay_next(M::OPEN_PULL_OP, std::time::Duration::from_secs(4));

    let error = forge.open_pull_request(&pull_spec()).await.unwrap_err();

    assert!(matches!(error, ForgeError::Unavailable(_)), "{error:?}");
    assert!(error.to_string().contains("timed out"), "{error}");
    fake.assert_contract_kept();
}

pub async fn a_dead_port_is_unavailable_and_retried<M: Model>() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let api = reqwest::Url::parse(&format!("http://127.0.0.1:{port}{}", M::PREFIX)).unwrap();
    let forge = M::forge(&api, secrecy::SecretString::from(TOKEN));

    let error = forge.branch_head(BRANCH).await.unwrap_err();

    assert!(matches!(error, ForgeError::Unavailable(_)), "{error:?}");
    assert!(error.is_retryable());
    assert_no_token(&error, TOKEN);
}
