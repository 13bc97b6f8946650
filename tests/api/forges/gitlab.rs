//! A fake GitLab. GitLab publishes no complete machine-readable description of these
//! endpoints in a package registry, so the contract below encodes GitLab's REST API
//! documentation for each endpoint used (method, path, parameters with their types and
//! whether they are required, request body fields), as an OpenAPI 3 document checked by the
//! same code as GitHub's. Unknown body fields are refused (GitLab would ignore them silently,
//! which is exactly the mistake worth catching).

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use base64::Engine as _;
use mirante::adapters::forge::{Forge, GitLab};
use reqwest::Url;
use secrecy::SecretString;
use serde_json::{Value, json};

use super::{
    contract::{Contract, Op, Req},
    fake::{Answer, Model, Pull, Repo, subtree, tree_items},
};

pub const PROJECT: &str = "infra/devops";

fn path_param(name: &str, kind: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "schema": {"type": kind}})
}

fn query(name: &str, schema: Value, required: bool) -> Value {
    json!({"name": name, "in": "query", "required": required, "schema": schema})
}

fn pagination() -> [Value; 2] {
    [
        query("page", json!({"type": "integer", "minimum": 1}), false),
        query(
            "per_page",
            json!({"type": "integer", "minimum": 1, "maximum": 100}),
            false,
        ),
    ]
}

/// The documented contract of the endpoints Mirante uses.
pub fn contract() -> &'static Contract {
    static CONTRACT: OnceLock<Contract> = OnceLock::new();
    CONTRACT.get_or_init(|| {
        let id = path_param("id", "string");
        let [page, per_page] = pagination();
        let doc = json!({
            "openapi": "3.0.3",
            "info": {"title": "GitLab REST API v4 (the endpoints Mirante uses)", "version": "v4"},
            "paths": {
                // https://docs.gitlab.com/api/branches/#get-single-repository-branch
                "/projects/{id}/repository/branches/{branch}": {"get": {
                    "operationId": "branches/get",
                    "parameters": [id, path_param("branch", "string")],
                }},
                // https://docs.gitlab.com/api/repository_files/#get-file-from-repository
                "/projects/{id}/repository/files/{file_path}": {"get": {
                    "operationId": "files/get",
                    "parameters": [id, path_param("file_path", "string"),
                        query("ref", json!({"type": "string"}), true)],
                }},
                // https://docs.gitlab.com/api/repository_files/#get-raw-file-from-repository
                "/projects/{id}/repository/files/{file_path}/raw": {"get": {
                    "operationId": "files/raw",
                    "parameters": [id, path_param("file_path", "string"),
                        query("ref", json!({"type": "string"}), false),
                        query("lfs", json!({"type": "boolean"}), false)],
                }},
                // https://docs.gitlab.com/api/repositories/#list-repository-tree: with
                // `pagination=keyset` the next page is the `Link` header's `rel="next"` URL,
                // whose `page_token` is the last entry's
                // (https://docs.gitlab.com/api/rest/#keyset-based-pagination).
                "/projects/{id}/repository/tree": {"get": {
                    "operationId": "tree/list",
                    "parameters": [id,
                        query("path", json!({"type": "string"}), false),
                        query("ref", json!({"type": "string"}), false),
                        query("recursive", json!({"type": "boolean"}), false),
                        query("pagination", json!({"type": "string", "enum": ["legacy", "keyset"]}), false),
                        query("page_token", json!({"type": "string"}), false),
                        page, per_page],
                }},
                // https://docs.gitlab.com/api/commits/#get-a-single-commit
                "/projects/{id}/repository/commits/{sha}": {"get": {
                    "operationId": "commits/get",
                    "parameters": [id, path_param("sha", "string"),
                        query("stats", json!({"type": "boolean"}), false)],
                }},
                // https://docs.gitlab.com/api/commits/#get-the-diff-of-a-commit
                "/projects/{id}/repository/commits/{sha}/diff": {"get": {
                    "operationId": "commits/diff",
                    "parameters": [id, path_param("sha", "string"),
                        query("unidiff", json!({"type": "boolean"}), false), page, per_page],
                }},
                // https://docs.gitlab.com/api/commits/#create-a-commit-with-multiple-files-and-actions
                "/projects/{id}/repository/commits": {"post": {
                    "operationId": "commits/create",
                    "parameters": [id],
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["branch", "commit_message", "actions"],
                        "properties": {
                            "branch": {"type": "string", "minLength": 1},
                            "commit_message": {"type": "string", "minLength": 1},
                            "start_branch": {"type": "string"},
                            "start_sha": {"type": "string"},
                            "start_project": {"type": ["integer", "string"]},
                            "author_email": {"type": "string"},
                            "author_name": {"type": "string"},
                            "stats": {"type": "boolean"},
                            "force": {"type": "boolean"},
                            "actions": {"type": "array", "minItems": 1, "items": {
                                "type": "object",
                                "additionalProperties": false,
                                "required": ["action", "file_path"],
                                "properties": {
                                    "action": {"type": "string", "enum": ["create", "delete", "move", "update", "chmod"]},
                                    "file_path": {"type": "string", "minLength": 1},
                                    "previous_path": {"type": "string"},
                                    "content": {"type": "string"},
                                    "encoding": {"type": "string", "enum": ["text", "base64"]},
                                    "last_commit_id": {"type": "string"},
                                    "execute_filemode": {"type": "boolean"}
                                }
                            }}
                        }
                    }}}},
                }},
                "/projects/{id}/merge_requests": {
                    // https://docs.gitlab.com/api/merge_requests/#list-project-merge-requests
                    "get": {
                        "operationId": "merge_requests/list",
                        "parameters": [id,
                            query("source_branch", json!({"type": "string"}), false),
                            query("target_branch", json!({"type": "string"}), false),
                            query("state", json!({"type": "string", "enum": ["opened", "closed", "locked", "merged"]}), false),
                            query("order_by", json!({"type": "string"}), false),
                            query("sort", json!({"type": "string", "enum": ["asc", "desc"]}), false),
                            page, per_page],
                    },
                    // https://docs.gitlab.com/api/merge_requests/#create-mr
                    "post": {
                        "operationId": "merge_requests/create",
                        "parameters": [id],
                        "requestBody": {"required": true, "content": {"application/json": {"schema": {
                            "type": "object",
                            "additionalProperties": false,
                            "required": ["source_branch", "target_branch", "title"],
                            "properties": {
                                "source_branch": {"type": "string", "minLength": 1},
                                "target_branch": {"type": "string", "minLength": 1},
                                "title": {"type": "string", "minLength": 1},
                                "description": {"type": "string", "maxLength": 1048576},
                                "assignee_id": {"type": "integer"},
                                "labels": {"type": "string"},
                                "remove_source_branch": {"type": "boolean"},
                                "squash": {"type": "boolean"},
                                "target_project_id": {"type": "integer"}
                            }
                        }}}},
                    }
                },
                // https://docs.gitlab.com/api/repositories/#merge-base: `refs` is an array
                // of commit ids, branch or tag names (`refs[]=a&refs[]=b`), at least two.
                "/projects/{id}/repository/merge_base": {"get": {
                    "operationId": "repository/merge_base",
                    "parameters": [id, query("refs[]", json!({"type": "array", "minItems": 2,
                        "items": {"type": "string", "minLength": 1}}), true)],
                }},
                // https://docs.gitlab.com/api/merge_requests/#get-single-mr
                "/projects/{id}/merge_requests/{merge_request_iid}": {
                    // https://docs.gitlab.com/api/merge_requests/#get-single-mr
                    "get": {
                        "operationId": "merge_requests/get",
                        "parameters": [id, path_param("merge_request_iid", "integer")],
                    },
                    // https://docs.gitlab.com/api/merge_requests/#update-mr: `state_event`
                    // `close` or `reopen`.
                    "put": {
                        "operationId": "merge_requests/update",
                        "parameters": [id, path_param("merge_request_iid", "integer")],
                        "requestBody": {"required": true, "content": {"application/json": {"schema": {
                            "type": "object",
                            "additionalProperties": false,
                            "minProperties": 1,
                            "properties": {
                                "add_labels": {"type": "string"},
                                "allow_collaboration": {"type": "boolean"},
                                "assignee_id": {"type": "integer"},
                                "assignee_ids": {"type": "array", "items": {"type": "integer"}},
                                "description": {"type": "string"},
                                "discussion_locked": {"type": "boolean"},
                                "labels": {"type": "string"},
                                "milestone_id": {"type": "integer"},
                                "remove_labels": {"type": "string"},
                                "remove_source_branch": {"type": "boolean"},
                                "reviewer_ids": {"type": "array", "items": {"type": "integer"}},
                                "squash": {"type": "boolean"},
                                "state_event": {"type": "string", "enum": ["close", "reopen"]},
                                "target_branch": {"type": "string"},
                                "title": {"type": "string"}
                            }
                        }}}},
                    }
                },
                // https://docs.gitlab.com/api/notes/#create-new-merge-request-note: `body`
                // required (at most 1,000,000 characters).
                "/projects/{id}/merge_requests/{merge_request_iid}/notes": {"post": {
                    "operationId": "notes/create",
                    "parameters": [id, path_param("merge_request_iid", "integer")],
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["body"],
                        "properties": {
                            "body": {"type": "string", "minLength": 1, "maxLength": 1000000},
                            "created_at": {"type": "string"},
                            "internal": {"type": "boolean"},
                            "merge_request_diff_head_sha": {"type": "string"}
                        }
                    }}}},
                }},
            }
        });
        Contract::new("https://gitlab.example.org/contract.json", doc, &[])
    })
}

pub struct GitLabModel {
    repo: Repo,
}

fn not_found(what: &str) -> Answer {
    Answer::new(404, json!({"message": format!("404 {what} Not Found")}))
}

impl GitLabModel {
    fn mr_json(pull: &Pull) -> Value {
        json!({
            "id": 5000 + pull.number,
            "iid": pull.number,
            "project_id": 42,
            "title": pull.title,
            "description": pull.body,
            "state": if pull.merged { "merged" } else if pull.open { "opened" } else { "closed" },
            "source_branch": pull.head,
            "target_branch": pull.base,
            "web_url": format!("https://gitlab.example.org/{PROJECT}/-/merge_requests/{}", pull.number),
            // "SHA of the merge request commit. Returns null until merged"; a squashed request
            // merged without a merge commit names its squash commit only.
            "squash": pull.squashed,
            "merge_commit_sha": pull.merge_commit.as_ref().filter(|_| !pull.squashed),
            "squash_commit_sha": pull.merge_commit.as_ref().filter(|_| pull.squashed),
        })
    }

    fn commit_json(&self, sha: &str) -> Option<Value> {
        let commit = self.repo.commits.get(sha)?;
        Some(json!({
            "id": commit.sha,
            "short_id": &commit.sha[..8],
            "title": commit.message.lines().next().unwrap_or_default(),
            "message": commit.message,
            "author_name": commit.author.0,
            "author_email": commit.author.1,
            "parent_ids": commit.parents,
        }))
    }
}

impl Model for GitLabModel {
    const PREFIX: &'static str = "/api/v4";
    const COMMIT_OP: &'static str = "commits/create";
    const OPEN_PULL_OP: &'static str = "merge_requests/create";
    const FOLDER_FILE_OP: &'static str = "files/raw";
    const HEAD_OP: &'static str = "branches/get";
    const TREE_OP: &'static str = "tree/list";
    const CONTAINS_OP: &'static str = "repository/merge_base";
    const KIND: mirante::adapters::forge::ForgeKind = mirante::adapters::forge::ForgeKind::Gitlab;

    fn new(repo: Repo) -> Self {
        GitLabModel { repo }
    }

    fn check(&self, req: &Req) -> Result<Op, Vec<String>> {
        let mut problems = Vec::new();
        // https://docs.gitlab.com/api/rest/authentication/
        let private = req.header("private-token").is_some();
        let bearer = req
            .header("authorization")
            .is_some_and(|a| a.starts_with("Bearer "));
        if !private && !bearer {
            problems.push("a PRIVATE-TOKEN or Authorization: Bearer header is required".into());
        }
        match contract().check(req) {
            Ok(op) if problems.is_empty() => {
                // https://docs.gitlab.com/api/rest/#namespaced-paths: the path, URL-encoded.
                if op.param("id") != PROJECT {
                    return Err(vec![format!("{}: another project", op.id)]);
                }
                Ok(op)
            }
            Ok(op) => Err(problems
                .into_iter()
                .map(|p| format!("{}: {p}", op.id))
                .collect()),
            Err(more) => {
                problems.extend(more);
                Err(problems)
            }
        }
    }

    fn token<'r>(&self, req: &'r Req) -> Option<&'r str> {
        req.header("private-token")
            .or_else(|| req.header("authorization")?.strip_prefix("Bearer "))
    }

    fn unauthorized() -> Answer {
        Answer::new(401, json!({"message": "401 Unauthorized"}))
    }

    fn answer(&mut self, op: &Op, req: &Req) -> Answer {
        let body = req.body();
        match op.id.as_str() {
            "branches/get" => match self.repo.branches.get(op.param("branch")) {
                Some(sha) => Answer::new(
                    200,
                    json!({"name": op.param("branch"), "merged": false, "protected": false,
                        "commit": self.commit_json(sha)}),
                ),
                None => not_found("Branch"),
            },
            "files/get" => {
                let rev = req.query("ref").unwrap_or_default();
                match self.repo.file(rev, op.param("file_path")) {
                    Some(content) => Answer::new(
                        200,
                        json!({
                            "file_name": op.param("file_path").rsplit('/').next(),
                            "file_path": op.param("file_path"),
                            "size": content.len(),
                            "encoding": "base64",
                            "content": base64::engine::general_purpose::STANDARD.encode(&content),
                            "ref": rev,
                            "blob_id": Repo::hash("blob", &content),
                        }),
                    ),
                    None => not_found("File"),
                }
            }
            "tree/list" => {
                let rev = req.query("ref").unwrap_or("main");
                let path = req.query("path").unwrap_or_default().trim_matches('/');
                let Some(commit) = self.repo.resolve(rev) else {
                    return not_found("Tree");
                };
                let tree = subtree(&commit.tree, path);
                if tree.is_empty() {
                    return not_found("Tree");
                }
                let recursive = req.query("recursive") == Some("true");
                let per_page: usize = req
                    .query("per_page")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(20)
                    .min(self.repo.listing_limit.unwrap_or(100));
                let full = |rel: &str| {
                    if path.is_empty() {
                        rel.to_owned()
                    } else {
                        format!("{path}/{rel}")
                    }
                };
                let after = req.query("page_token").map(str::to_owned);
                let items: Vec<_> = tree_items(&tree, recursive)
                    .into_iter()
                    .filter(|i| after.as_deref().is_none_or(|a| full(&i.path).as_str() > a))
                    .collect();
                let more = items.len() > per_page;
                let page: Vec<Value> = items
                    .into_iter()
                    .take(per_page)
                    .map(|i| {
                        json!({"id": i.sha, "name": i.path.rsplit('/').next(),
                            "type": if i.is_dir { "tree" } else { "blob" },
                            "path": full(&i.path), "mode": if i.is_dir { "040000" } else { "100644" }})
                    })
                    .collect();
                let mut answer = Answer::new(200, Value::Array(page.clone()));
                if more && req.query("pagination") == Some("keyset") {
                    let last = page.last().unwrap()["path"].as_str().unwrap().to_owned();
                    let mut next = Url::parse(&format!(
                        "https://gitlab.example.org/api/v4/projects/{}/repository/tree",
                        PROJECT.replace('/', "%2F")
                    ))
                    .unwrap();
                    next.query_pairs_mut()
                        .append_pair("id", PROJECT)
                        .append_pair("page_token", &last)
                        .append_pair("pagination", "keyset")
                        .append_pair("path", path)
                        .append_pair("per_page", &per_page.to_string())
                        .append_pair("recursive", &recursive.to_string())
                        .append_pair("ref", rev);
                    answer = answer.with_header("link", format!("<{next}>; rel=\"next\""));
                }
                answer
            }
            "files/raw" => {
                let rev = req.query("ref").unwrap_or("main");
                match self.repo.file(rev, op.param("file_path")) {
                    Some(content) => Answer::raw(content.into_bytes()),
                    None => not_found("File"),
                }
            }
            "commits/get" => {
                let sha = self
                    .repo
                    .resolve(op.param("sha"))
                    .map(|c| c.sha.clone())
                    .unwrap_or_default();
                self.commit_json(&sha)
                    .map_or_else(|| not_found("Commit"), |c| Answer::new(200, c))
            }
            "commits/diff" => {
                let Some(commit) = self.repo.resolve(op.param("sha")) else {
                    return not_found("Commit");
                };
                let sha = commit.sha.clone();
                let diff: Vec<Value> = self
                    .repo
                    .changes(&sha)
                    .into_iter()
                    .map(|(path, status)| {
                        json!({"old_path": path, "new_path": path, "diff": "",
                            "new_file": status == "added", "renamed_file": false,
                            "deleted_file": status == "removed"})
                    })
                    .collect();
                Answer::new(200, Value::Array(diff))
            }
            "commits/create" => {
                let branch = body["branch"].as_str().unwrap_or_default();
                let start = body["start_branch"].as_str().unwrap_or(branch);
                if self.repo.branches.contains_key(branch) && start != branch {
                    return Answer::new(
                        400,
                        json!({"message": format!("A branch called '{branch}' already exists. Switch to that branch in order to make changes")}),
                    );
                }
                let Some(parent) = self.repo.branches.get(start).cloned() else {
                    return Answer::new(
                        400,
                        json!({"message": "You can only create or edit files when you are on a branch"}),
                    );
                };
                let mut tree = self.repo.commits[&parent].tree.clone();
                for action in body["actions"].as_array().into_iter().flatten() {
                    let path = action["file_path"].as_str().unwrap_or_default();
                    let exists = tree.contains_key(path);
                    match action["action"].as_str() {
                        Some("create") if exists => {
                            return Answer::new(
                                400,
                                json!({"message": "A file with this name already exists"}),
                            );
                        }
                        Some("update" | "delete") if !exists => {
                            return Answer::new(
                                400,
                                json!({"message": "A file with this name doesn't exist"}),
                            );
                        }
                        Some("delete") => {
                            tree.remove(path);
                            continue;
                        }
                        _ => {}
                    }
                    tree.insert(
                        path.to_owned(),
                        action["content"].as_str().unwrap_or_default().to_owned(),
                    );
                }
                let sha = self.repo.add_commit(
                    &[parent],
                    tree,
                    body["commit_message"].as_str().unwrap_or_default(),
                    (
                        body["author_name"].as_str().unwrap_or("token owner"),
                        body["author_email"].as_str().unwrap_or("owner@example.org"),
                    ),
                );
                self.repo.branches.insert(branch.to_owned(), sha.clone());
                Answer::new(201, self.commit_json(&sha).unwrap())
            }
            "merge_requests/list" => {
                let source = req.query("source_branch");
                let list: Vec<Value> = self
                    .repo
                    .pulls
                    .iter()
                    .rev()
                    .filter(|p| source.is_none_or(|s| s == p.head))
                    .map(GitLabModel::mr_json)
                    .filter(|mr| req.query("state").is_none_or(|s| mr["state"] == s))
                    .collect();
                Answer::new(200, Value::Array(list))
            }
            "merge_requests/create" => {
                let head = body["source_branch"].as_str().unwrap_or_default();
                let base = body["target_branch"].as_str().unwrap_or_default();
                if let Some(existing) = self.repo.open_pull_for(head, base) {
                    return Answer::new(
                        409,
                        json!({"message": [format!("Another open merge request already exists for this source branch: !{}", existing.number)]}),
                    );
                }
                if !self.repo.branches.contains_key(head) {
                    return Answer::new(400, json!({"message": {"source_branch": ["is invalid"]}}));
                }
                let number = self.repo.open_pull(
                    head,
                    base,
                    body["title"].as_str().unwrap_or_default(),
                    body["description"].as_str().unwrap_or_default(),
                );
                let pull = self.repo.pulls.iter().find(|p| p.number == number).unwrap();
                Answer::new(201, GitLabModel::mr_json(pull))
            }
            // Unknown refs: 400 "Could not find ref(s): …"; no common ancestor: 404.
            "repository/merge_base" => {
                let refs = req.query_all("refs[]");
                let unknown: Vec<&str> = refs
                    .iter()
                    .copied()
                    .filter(|r| self.repo.resolve(r).is_none())
                    .collect();
                if !unknown.is_empty() {
                    let noun = if unknown.len() == 1 { "ref" } else { "refs" };
                    return Answer::new(
                        400,
                        json!({"message": format!("Could not find {noun}: {}", unknown.join(", "))}),
                    );
                }
                let shas: Vec<String> = refs
                    .iter()
                    .map(|r| self.repo.resolve(r).unwrap().sha.clone())
                    .collect();
                let base = shas[1..].iter().try_fold(shas[0].clone(), |base, other| {
                    self.repo.merge_base(&base, other)
                });
                match base.and_then(|b| self.commit_json(&b)) {
                    Some(commit) => Answer::new(200, commit),
                    None => not_found("Merge Base"),
                }
            }
            "merge_requests/get" => {
                let number: u64 = op.param("merge_request_iid").parse().unwrap_or(0);
                match self.repo.pulls.iter().find(|p| p.number == number) {
                    Some(p) => Answer::new(200, GitLabModel::mr_json(p)),
                    None => not_found(""),
                }
            }
            "notes/create" => {
                let number: u64 = op.param("merge_request_iid").parse().unwrap_or(0);
                let text = body["body"].as_str().unwrap_or_default().to_owned();
                match self.repo.pull_mut(number) {
                    Some(pull) => {
                        pull.comments.push(text.clone());
                        Answer::new(
                            201,
                            json!({"id": 8000 + pull.comments.len(), "body": text, "noteable_iid": number}),
                        )
                    }
                    None => not_found("Merge Request"),
                }
            }
            "merge_requests/update" => {
                let number: u64 = op.param("merge_request_iid").parse().unwrap_or(0);
                let Some(pull) = self.repo.pull_mut(number) else {
                    return not_found("Merge Request");
                };
                if body["state_event"] == "close" && !pull.merged {
                    pull.open = false;
                }
                Answer::new(200, GitLabModel::mr_json(pull))
            }
            other => Answer::new(501, json!({"message": format!("{other} is not answered")})),
        }
    }

    fn repo(&mut self) -> &mut Repo {
        &mut self.repo
    }

    fn forge(api: &Url, token: SecretString) -> Arc<dyn Forge> {
        Arc::new(
            GitLab::new(api, PROJECT, token, reqwest::Client::new())
                .unwrap()
                .with_timeout(Duration::from_secs(2)),
        )
    }
}
