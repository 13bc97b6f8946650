//! What every hosted forge client must do, written once and run against each checked fake.

use mirante::adapters::forge::{
    BranchSpec, CommitAuthor, DirLimits, FileChange, ForgeError, PullRequestSpec, PullRequestState,
};
use serde_json::json;

use super::fake::{Answer, Fake, Model, TOKEN};

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
        removed: Vec::new(),
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

pub async fn a_withdrawn_request_s_pull_request_is_closed_with_a_comment_and_a_merged_one_is_not<
    M: Model,
>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    forge.create_branch(&branch_spec()).await.unwrap();
    let pr = forge.open_pull_request(&pull_spec()).await.unwrap();
    let comment = "Withdrawn in Mirante by Alice (alice): request #42 was taken back.";

    let closed = forge.close_pull_request(pr.number, comment).await.unwrap();
    let again = forge.close_pull_request(pr.number, comment).await.unwrap();

    assert_eq!(closed.state, PullRequestState::Closed);
    assert_eq!(
        again.state,
        PullRequestState::Closed,
        "closing twice answers it closed"
    );
    assert_eq!(
        forge.pull_request(pr.number).await.unwrap().state,
        PullRequestState::Closed
    );
    fake.with_repo(|repo| {
        let pull = repo.pulls.iter().find(|p| p.number == pr.number).unwrap();
        assert_eq!(
            pull.comments,
            vec![comment.to_owned()],
            "one comment, left once"
        );
        assert!(!pull.merged);
    });

    // A merged pull request is not closed.
    let spec = BranchSpec {
        branch: "mirante/43-other".into(),
        ..branch_spec()
    };
    forge.create_branch(&spec).await.unwrap();
    let other = forge
        .open_pull_request(&PullRequestSpec {
            branch: spec.branch.clone(),
            ..pull_spec()
        })
        .await
        .unwrap();
    fake.with_repo(|repo| {
        repo.merge_pull(other.number, false);
    });
    let refused = forge
        .close_pull_request(other.number, comment)
        .await
        .unwrap_err();
    assert!(matches!(refused, ForgeError::Conflict(_)), "{refused:?}");
    fake.assert_contract_kept();
}

pub async fn a_branch_that_deletes_files_holds_none_of_them_and_is_reused_when_made_again<
    M: Model,
>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let spec = BranchSpec {
        files: vec![FileChange {
            path: "apps/shared/README.md".into(),
            content: "Shared values moved to the cluster's folder.\n".into(),
        }],
        removed: vec!["apps/shared/values.yaml".into()],
        ..branch_spec()
    };

    let sha = forge.create_branch(&spec).await.unwrap();
    let again = forge.create_branch(&spec).await.unwrap();

    assert_eq!(again, sha, "the same branch is reused, not made twice");
    fake.with_repo(|repo| {
        assert_eq!(repo.commits_ahead(BRANCH, "main"), 1);
        let tree = &repo.resolve(BRANCH).unwrap().tree;
        assert!(!tree.contains_key("apps/shared/values.yaml"), "{tree:?}");
        assert_eq!(
            tree.get("apps/shared/README.md").map(String::as_str),
            Some("Shared values moved to the cluster's folder.\n")
        );
        assert!(
            repo.file("main", "apps/shared/values.yaml").is_some(),
            "main is untouched"
        );
    });
    fake.assert_contract_kept();
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

pub async fn a_rate_limited_forge_is_not_called_again_before_the_time_it_names<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    forge.create_branch(&branch_spec()).await.unwrap();
    fake.answer_next(
        M::OPEN_PULL_OP,
        Answer::new(429, json!({"message": "Too Many Requests"}))
            .with_header("retry-after", "2".into()),
    );

    let limited = forge.open_pull_request(&pull_spec()).await.unwrap_err();
    let while_waiting = forge.open_pull_request(&pull_spec()).await.unwrap_err();
    let sent_while_waiting = fake.calls(M::OPEN_PULL_OP);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let after = forge.open_pull_request(&pull_spec()).await;

    assert!(limited.is_retryable(), "{limited:?}");
    assert!(while_waiting.is_retryable(), "{while_waiting:?}");
    assert!(
        while_waiting.to_string().contains("rate limit"),
        "{while_waiting}"
    );
    assert_eq!(sent_while_waiting, 1, "the call while waiting was not sent");
    assert!(after.is_ok(), "{after:?}");
    assert_eq!(fake.calls(M::OPEN_PULL_OP), 2);
    fake.assert_contract_kept();
}

/// GitHub's way: a 403 whose headers say the budget is spent until a reset time.
pub async fn a_spent_budget_pauses_calls_until_its_reset<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let reset = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 2;
    fake.answer_next(
        M::HEAD_OP,
        Answer::new(403, json!({"message": "API rate limit exceeded"}))
            .with_header("x-ratelimit-remaining", "0".into())
            .with_header("x-ratelimit-reset", reset.to_string()),
    );

    let limited = forge.branch_head("main").await.unwrap_err();
    let while_waiting = forge.branch_head("main").await.unwrap_err();
    let sent_while_waiting = fake.calls(M::HEAD_OP);

    assert!(
        limited.is_retryable(),
        "a rate limit, not a refusal: {limited:?}"
    );
    assert!(
        while_waiting.to_string().contains("rate limit"),
        "{while_waiting}"
    );
    assert_eq!(sent_while_waiting, 1, "the call while waiting was not sent");
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

/// Limits no test folder comes near.
const ROOMY: DirLimits = DirLimits {
    max_files: 100,
    max_bytes: 1 << 20,
};

const FOLDER: &str = "self-service/templates";

/// Pushes `files` (paths relative to [`FOLDER`]) onto `main`; returns the new head.
fn push_to_folder<M: Model>(fake: &Fake<M>, files: &[(&str, &str)]) -> String {
    let files: Vec<(String, &str)> = files
        .iter()
        .map(|(p, c)| (format!("{FOLDER}/{p}"), *c))
        .collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
    fake.with_repo(|repo| repo.push_branch("main", "main", &files))
}

/// A folder is read whole, and not again while its tree is unchanged.
pub async fn a_folder_is_read_once_per_tree<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let head = push_to_folder(
        &fake,
        &[
            ("scratch/template.yaml", "id: scratch\n"),
            ("scratch/skeleton/ns.yaml", "kind: Namespace\n"),
            ("README.md", "# Templates\n"),
            (".hidden/secret.yaml", "hidden: true\n"),
        ],
    );

    let first = forge.read_dir(&head, FOLDER, None, ROOMY).await.unwrap();

    let files = first.files.clone().expect("a first read reads the files");
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), std::str::from_utf8(c).unwrap()))
        .collect();
    assert_eq!(
        files,
        [
            ("README.md", "# Templates\n"),
            ("scratch/skeleton/ns.yaml", "kind: Namespace\n"),
            ("scratch/template.yaml", "id: scratch\n"),
        ]
    );
    let reads = fake.calls(M::FOLDER_FILE_OP);
    assert_eq!(reads, 3, "one read per file, none for hidden ones");

    // The branch moves for a file elsewhere: the folder's tree is the same, nothing is read.
    let moved = fake.with_repo(|repo| repo.push_branch("main", "main", &[("README.md", "# x\n")]));
    let again = forge
        .read_dir(&moved, FOLDER, Some(&first.tree), ROOMY)
        .await
        .unwrap();
    assert_eq!(again.tree, first.tree);
    assert_eq!(again.files, None);
    assert_eq!(fake.calls(M::FOLDER_FILE_OP), reads);

    // A template changes: another tree, read again.
    let changed = push_to_folder(&fake, &[("scratch/template.yaml", "id: scratch-2\n")]);
    let third = forge
        .read_dir(&changed, FOLDER, Some(&first.tree), ROOMY)
        .await
        .unwrap();
    assert_ne!(third.tree, first.tree);
    let files = third.files.expect("a changed folder is read again");
    assert!(files.contains(&(
        "scratch/template.yaml".to_owned(),
        b"id: scratch-2\n".to_vec()
    )));
    fake.assert_contract_kept();
}

pub async fn a_folder_that_is_not_there_is_not_found<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let head = fake.with_repo(|repo| repo.branches["main"].clone());

    let missing = forge.read_dir(&head, FOLDER, None, ROOMY).await;

    assert!(
        matches!(missing, Err(ForgeError::NotFound(_))),
        "{missing:?}"
    );
    fake.assert_contract_kept();
}

pub async fn a_folder_beyond_the_limits_is_refused_clearly<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let head = push_to_folder(
        &fake,
        &[
            ("a/template.yaml", "id: a\n"),
            ("b/template.yaml", "id: b\n"),
            ("c/template.yaml", "id: c\n"),
        ],
    );
    let two_files = DirLimits {
        max_files: 2,
        max_bytes: 1 << 20,
    };
    let ten_bytes = DirLimits {
        max_files: 100,
        max_bytes: 10,
    };

    let too_many = forge.read_dir(&head, FOLDER, None, two_files).await;
    let files_read = fake.calls(M::FOLDER_FILE_OP);
    let too_big = forge.read_dir(&head, FOLDER, None, ten_bytes).await;

    match too_many {
        Err(ForgeError::TooLarge(m)) => {
            assert!(
                m.contains("self-service/templates/` holds more than 2 files"),
                "{m}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(files_read, 0, "refused before reading the files");
    match too_big {
        Err(ForgeError::TooLarge(m)) => assert!(m.contains("more than 10 bytes"), "{m}"),
        other => panic!("{other:?}"),
    }
    fake.assert_contract_kept();
}

pub async fn a_folder_listed_over_several_pages_is_read_whole<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let head = push_to_folder(
        &fake,
        &[
            ("a/template.yaml", "id: a\n"),
            ("b/template.yaml", "id: b\n"),
            ("c/template.yaml", "id: c\n"),
        ],
    );
    fake.with_repo(|repo| repo.listing_limit = Some(2));

    let read = forge.read_dir(&head, FOLDER, None, ROOMY).await.unwrap();

    let paths: Vec<String> = read.files.unwrap().into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        paths,
        ["a/template.yaml", "b/template.yaml", "c/template.yaml"]
    );
    fake.assert_contract_kept();
}

pub async fn a_truncated_listing_is_refused_clearly<M: Model>() {
    let fake = Fake::<M>::start().await;
    let forge = fake.forge();
    let head = push_to_folder(
        &fake,
        &[
            ("a/template.yaml", "id: a\n"),
            ("b/template.yaml", "id: b\n"),
            ("c/template.yaml", "id: c\n"),
        ],
    );
    fake.with_repo(|repo| repo.listing_limit = Some(2));

    let read = forge.read_dir(&head, FOLDER, None, ROOMY).await;

    match read {
        Err(ForgeError::TooLarge(m)) => {
            assert!(m.contains("more entries than GitHub lists at once"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    fake.assert_contract_kept();
}
