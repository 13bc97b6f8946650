//! The fakes' contract checks catch requests outside each forge's documented API, so a test
//! that passes against a fake says something about the real forge.

use axum::http::{HeaderMap, HeaderValue};
use reqwest::Method;
use serde_json::{Value, json};

use super::{
    contract::Req,
    fake::{Fake, Model, TOKEN},
    gitea::GiteaModel,
    github::GitHubModel,
    gitlab::GitLabModel,
};

fn github_headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        "accept",
        HeaderValue::from_static("application/vnd.github+json"),
    );
    h.insert(
        "x-github-api-version",
        HeaderValue::from_static("2022-11-28"),
    );
    h.insert("user-agent", HeaderValue::from_static("mirante-test"));
    h.insert(
        "authorization",
        HeaderValue::from_str(&format!("Bearer {TOKEN}")).unwrap(),
    );
    h.insert("content-type", HeaderValue::from_static("application/json"));
    h
}

fn req(
    method: Method,
    path: &str,
    query: &[(&str, &str)],
    headers: HeaderMap,
    body: Option<Value>,
) -> Req {
    Req {
        method,
        segments: path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        query: query
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        headers,
        body,
    }
}

fn github() -> GitHubModel {
    GitHubModel::new(super::fake::Repo::seeded())
}

#[test]
fn a_documented_github_request_passes_the_openapi_check() {
    let ok = req(
        Method::POST,
        "repos/infra/devops/git/refs",
        &[],
        github_headers(),
        Some(json!({"ref": "refs/heads/x", "sha": "aa218f56b14c9653891f9e74264a383fa43fefbd"})),
    );
    assert_eq!(github().check(&ok).unwrap().id, "git/create-ref");
}

#[test]
fn a_github_body_missing_a_required_field_breaks_the_contract() {
    let missing_sha = req(
        Method::POST,
        "repos/infra/devops/git/refs",
        &[],
        github_headers(),
        Some(json!({"ref": "refs/heads/x"})),
    );
    let problems = github().check(&missing_sha).unwrap_err();
    assert!(problems.iter().any(|p| p.contains("sha")), "{problems:?}");
}

#[test]
fn a_github_body_of_the_wrong_type_breaks_the_contract() {
    let parents_not_array = req(
        Method::POST,
        "repos/infra/devops/git/commits",
        &[],
        github_headers(),
        Some(json!({"message": "m", "tree": "t", "parents": "not-an-array"})),
    );
    assert!(github().check(&parents_not_array).is_err());
}

#[test]
fn an_undocumented_github_path_query_or_header_breaks_the_contract() {
    let path = req(
        Method::GET,
        "repos/infra/devops/branches-of-mine",
        &[],
        github_headers(),
        None,
    );
    assert!(github().check(&path).is_err());
    let query = req(
        Method::GET,
        "repos/infra/devops/pulls",
        &[("head_ref", "x")],
        github_headers(),
        None,
    );
    assert!(github().check(&query).is_err());
    let state = req(
        Method::GET,
        "repos/infra/devops/pulls",
        &[("state", "merged")],
        github_headers(),
        None,
    );
    assert!(
        github().check(&state).is_err(),
        "state=merged is not in the enum"
    );
    let number = req(
        Method::GET,
        "repos/infra/devops/pulls/seven",
        &[],
        github_headers(),
        None,
    );
    assert!(github().check(&number).is_err());
    let mut old_version = github_headers();
    old_version.insert(
        "x-github-api-version",
        HeaderValue::from_static("2021-01-01"),
    );
    let header = req(
        Method::GET,
        "repos/infra/devops/pulls",
        &[],
        old_version,
        None,
    );
    assert!(github().check(&header).is_err());
}

#[test]
fn a_gitlab_commit_with_an_unknown_action_or_field_breaks_the_contract() {
    let mut h = HeaderMap::new();
    h.insert("private-token", HeaderValue::from_static(TOKEN));
    h.insert("content-type", HeaderValue::from_static("application/json"));
    let model = GitLabModel::new(super::fake::Repo::seeded());
    let body = |action: &str, extra: Option<(&str, Value)>| {
        let mut b = json!({"branch": "b", "commit_message": "m",
            "actions": [{"action": action, "file_path": "a.yaml", "content": "x"}]});
        if let Some((k, v)) = extra {
            b[k] = v;
        }
        Some(b)
    };
    let path = "projects/infra%2Fdevops/repository/commits".replace("%2F", "/");
    // The project id is one URL-encoded segment; a literal `/` is another path.
    assert!(
        model
            .check(&req(
                Method::POST,
                &path,
                &[],
                h.clone(),
                body("create", None)
            ))
            .is_err()
    );
    let segments = vec![
        "projects".into(),
        "infra/devops".into(),
        "repository".into(),
        "commits".into(),
    ];
    let mut good = req(Method::POST, "", &[], h.clone(), body("create", None));
    good.segments = segments.clone();
    assert_eq!(model.check(&good).unwrap().id, "commits/create");
    let mut upsert = good.clone();
    upsert.body = body("upsert", None);
    assert!(model.check(&upsert).is_err());
    let mut typo = good.clone();
    typo.body = body("create", Some(("comit_message", json!("m"))));
    assert!(model.check(&typo).is_err());
}

#[test]
fn a_gitlab_merge_base_needs_two_refs_given_as_the_documented_array() {
    let mut h = HeaderMap::new();
    h.insert("private-token", HeaderValue::from_static(TOKEN));
    let model = GitLabModel::new(super::fake::Repo::seeded());
    let merge_base = |query: &[(&str, &str)]| {
        let mut r = req(Method::GET, "", query, h.clone(), None);
        r.segments = vec![
            "projects".into(),
            "infra/devops".into(),
            "repository".into(),
            "merge_base".into(),
        ];
        model.check(&r)
    };
    let (a, b) = ("a".repeat(40), "b".repeat(40));

    assert_eq!(
        merge_base(&[("refs[]", &a), ("refs[]", &b)]).unwrap().id,
        "repository/merge_base"
    );
    assert!(merge_base(&[("refs[]", &a)]).is_err(), "one ref");
    assert!(merge_base(&[]).is_err(), "no refs");
    assert!(
        merge_base(&[("refs", &a), ("refs", &b)]).is_err(),
        "refs without []"
    );
    assert!(
        merge_base(&[("refs[]", &a), ("refs[]", "")]).is_err(),
        "an empty ref"
    );
}

#[test]
fn a_query_parameter_given_twice_where_one_is_documented_breaks_the_contract() {
    let model = github();
    let compare = |query: &[(&str, &str)]| {
        model.check(&req(
            Method::GET,
            &format!(
                "repos/infra/devops/compare/{}...{}",
                "a".repeat(40),
                "b".repeat(40)
            ),
            query,
            github_headers(),
            None,
        ))
    };

    assert_eq!(
        compare(&[("per_page", "1")]).unwrap().id,
        "repos/compare-commits-with-basehead"
    );
    assert!(compare(&[("per_page", "1"), ("per_page", "2")]).is_err());
    assert!(compare(&[("per_page", "one")]).is_err());
}

#[test]
fn a_gitea_change_without_files_or_with_an_unknown_field_breaks_the_contract() {
    let mut h = HeaderMap::new();
    h.insert(
        "authorization",
        HeaderValue::from_str(&format!("token {TOKEN}")).unwrap(),
    );
    h.insert("content-type", HeaderValue::from_static("application/json"));
    let model = GiteaModel::new(super::fake::Repo::seeded());
    let good = req(
        Method::POST,
        "repos/infra/devops/contents",
        &[],
        h.clone(),
        Some(
            json!({"branch": "main", "new_branch": "b", "files": [{"operation": "create", "path": "a", "content": "eA=="}]}),
        ),
    );
    assert_eq!(model.check(&good).unwrap().id, "repoChangeFiles");
    let no_files = req(
        Method::POST,
        "repos/infra/devops/contents",
        &[],
        h.clone(),
        Some(json!({"branch": "main"})),
    );
    assert!(model.check(&no_files).is_err());
    let unknown = req(
        Method::POST,
        "repos/infra/devops/contents",
        &[],
        h,
        Some(json!({"files": [], "newBranch": "b"})),
    );
    assert!(model.check(&unknown).is_err());
}

#[tokio::test]
async fn a_request_outside_the_contract_fails_the_test_that_made_it() {
    let fake = Fake::<GitHubModel>::start().await;
    let answer = reqwest::Client::new()
        .get(format!("{}/repos/infra/devops/branches-of-mine", fake.api))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);

    let verdict =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fake.assert_contract_kept()));

    let message = verdict.unwrap_err();
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("no such operation"), "{message}");
}
