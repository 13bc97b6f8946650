//! A fake Gitea/Forgejo. Neither publishes its API description in a package registry (each
//! instance serves it at `/swagger.v1.json`, see <https://gitea.com/api/swagger> and
//! <https://codeberg.org/api/swagger>), so the contract below encodes, for each endpoint used,
//! the method, path, parameters and body fields of that published description
//! (`ChangeFilesOptions`, `ChangeFileOperation`, `CreatePullRequestOption`), as an OpenAPI 3
//! document checked by the same code as GitHub's. Unknown body fields are refused.

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use base64::Engine as _;
use mirante::adapters::forge::{Forge, Gitea};
use reqwest::Url;
use secrecy::SecretString;
use serde_json::{Value, json};

use super::{
    contract::{Contract, Op, Req},
    fake::{Answer, Model, Pull, Repo, tree_items},
};

pub const OWNER: &str = "infra";
pub const REPO: &str = "devops";

fn path_param(name: &str, kind: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "schema": {"type": kind}})
}

fn query(name: &str, schema: Value) -> Value {
    json!({"name": name, "in": "query", "required": false, "schema": schema})
}

/// The published contract of the endpoints Mirante uses.
pub fn contract() -> &'static Contract {
    static CONTRACT: OnceLock<Contract> = OnceLock::new();
    CONTRACT.get_or_init(|| {
        let owner = path_param("owner", "string");
        let repo = path_param("repo", "string");
        let page = query("page", json!({"type": "integer", "minimum": 1}));
        let limit = query("limit", json!({"type": "integer", "minimum": 1}));
        let identity = json!({"type": "object", "additionalProperties": false, "properties": {
            "name": {"type": "string"}, "email": {"type": "string", "format": "email"}}});
        let doc = json!({
            "openapi": "3.0.3",
            "info": {"title": "Gitea API v1 (the endpoints Mirante uses)", "version": "1"},
            "paths": {
                // repoGetBranch
                "/repos/{owner}/{repo}/branches/{branch}": {"get": {
                    "operationId": "repoGetBranch",
                    "parameters": [owner, repo, path_param("branch", "string")],
                }},
                // repoGetContents
                "/repos/{owner}/{repo}/contents/{filepath}": {"get": {
                    "operationId": "repoGetContents",
                    "parameters": [owner, repo, path_param("filepath", "string"),
                        query("ref", json!({"type": "string"}))],
                }},
                // repoGetSingleCommit
                "/repos/{owner}/{repo}/git/commits/{sha}": {"get": {
                    "operationId": "repoGetSingleCommit",
                    "parameters": [owner, repo, path_param("sha", "string"),
                        query("stat", json!({"type": "boolean"})),
                        query("verification", json!({"type": "boolean"})),
                        query("files", json!({"type": "boolean"}))],
                }},
                // GetTree: "sha of the commit" (a tree's sha is taken too); `page`: "the
                // 'truncated' field in the response will be true if there are still more
                // items after this page"; `per_page` defaults to 1000
                // (DEFAULT_GIT_TREES_PER_PAGE). https://gitea.com/api/swagger#/repository/GetTree
                "/repos/{owner}/{repo}/git/trees/{sha}": {"get": {
                    "operationId": "GetTree",
                    "parameters": [owner, repo, path_param("sha", "string"),
                        query("recursive", json!({"type": "boolean"})),
                        query("page", json!({"type": "integer", "minimum": 1})),
                        query("per_page", json!({"type": "integer", "minimum": 1}))],
                }},
                // GetBlob: `GitBlobResponse` with the content in base64.
                // https://gitea.com/api/swagger#/repository/GetBlob
                "/repos/{owner}/{repo}/git/blobs/{sha}": {"get": {
                    "operationId": "GetBlob",
                    "parameters": [owner, repo, path_param("sha", "string")],
                }},
                // repoChangeFiles
                "/repos/{owner}/{repo}/contents": {"post": {
                    "operationId": "repoChangeFiles",
                    "parameters": [owner, repo],
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["files"],
                        "properties": {
                            "author": identity,
                            "committer": identity,
                            "branch": {"type": "string"},
                            "new_branch": {"type": "string"},
                            "message": {"type": "string"},
                            "signoff": {"type": "boolean"},
                            "dates": {"type": "object"},
                            "files": {"type": "array", "items": {
                                "type": "object",
                                "additionalProperties": false,
                                "required": ["operation", "path"],
                                "properties": {
                                    "operation": {"type": "string", "enum": ["create", "update", "delete"]},
                                    "path": {"type": "string"},
                                    "content": {"type": "string", "contentEncoding": "base64"},
                                    "sha": {"type": "string"},
                                    "from_path": {"type": "string"}
                                }
                            }}
                        }
                    }}}},
                }},
                "/repos/{owner}/{repo}/pulls": {
                    // repoListPullRequests
                    "get": {
                        "operationId": "repoListPullRequests",
                        "parameters": [owner, repo,
                            query("state", json!({"type": "string", "enum": ["open", "closed", "all"]})),
                            query("sort", json!({"type": "string", "enum": ["oldest", "recentupdate", "leastupdate", "mostcomment", "leastcomment", "priority"]})),
                            query("milestone", json!({"type": "integer"})),
                            page, limit],
                    },
                    // repoCreatePullRequest
                    "post": {
                        "operationId": "repoCreatePullRequest",
                        "parameters": [owner, repo],
                        "requestBody": {"content": {"application/json": {"schema": {
                            "type": "object",
                            "additionalProperties": false,
                            "properties": {
                                "head": {"type": "string"},
                                "base": {"type": "string"},
                                "title": {"type": "string"},
                                "body": {"type": "string"},
                                "assignee": {"type": "string"},
                                "assignees": {"type": "array", "items": {"type": "string"}},
                                "labels": {"type": "array", "items": {"type": "integer"}},
                                "milestone": {"type": "integer"},
                                "due_date": {"type": "string"}
                            }
                        }}}},
                    }
                },
                // repoCompareDiff: `basehead` is `base...head` (or `base..head`), each a
                // branch, a tag or (from Gitea 1.23) a commit id; the answer (`Compare`) holds
                // `total_commits` and `commits`, those of head not in base counted from their
                // merge base. https://gitea.com/api/swagger#/repository/repoCompareDiff
                "/repos/{owner}/{repo}/compare/{basehead}": {"get": {
                    "operationId": "repoCompareDiff",
                    "parameters": [owner, repo, path_param("basehead", "string")],
                }},
                "/repos/{owner}/{repo}/pulls/{index}": {
                    // repoGetPullRequest
                    "get": {
                        "operationId": "repoGetPullRequest",
                        "parameters": [owner, repo, path_param("index", "integer")],
                    },
                    // repoEditPullRequest: `EditPullRequestOption`; `state` is "open" or
                    // "closed". https://gitea.com/api/swagger#/repository/repoEditPullRequest
                    "patch": {
                        "operationId": "repoEditPullRequest",
                        "parameters": [owner, repo, path_param("index", "integer")],
                        "requestBody": {"content": {"application/json": {"schema": {
                            "type": "object",
                            "additionalProperties": false,
                            "properties": {
                                "title": {"type": "string"},
                                "body": {"type": "string"},
                                "base": {"type": "string"},
                                "assignee": {"type": "string"},
                                "assignees": {"type": "array", "items": {"type": "string"}},
                                "labels": {"type": "array", "items": {"type": "integer"}},
                                "milestone": {"type": "integer"},
                                "state": {"type": "string"},
                                "due_date": {"type": "string"},
                                "unset_due_date": {"type": "boolean"},
                                "allow_maintainer_edit": {"type": "boolean"}
                            }
                        }}}},
                    }
                },
                // issueCreateComment: `CreateIssueCommentOption`, `body` required; a pull
                // request is an issue for comments.
                // https://gitea.com/api/swagger#/issue/issueCreateComment
                "/repos/{owner}/{repo}/issues/{index}/comments": {"post": {
                    "operationId": "issueCreateComment",
                    "parameters": [owner, repo, path_param("index", "integer")],
                    "requestBody": {"content": {"application/json": {"schema": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["body"],
                        "properties": {"body": {"type": "string"}}
                    }}}},
                }},
            }
        });
        // Gitea routes `branches/*` and `contents/*` as wildcards: a `/` may stay literal.
        Contract::new(
            "https://gitea.example.org/swagger.v1.json",
            doc,
            &["branch", "filepath"],
        )
    })
}

pub struct GiteaModel {
    repo: Repo,
}

fn not_found() -> Answer {
    Answer::new(
        404,
        json!({"errors": [], "message": "The target couldn't be found.", "url": "https://gitea.example.org/api/swagger"}),
    )
}

fn unprocessable(message: String) -> Answer {
    Answer::new(
        422,
        json!({"message": message, "url": "https://gitea.example.org/api/swagger"}),
    )
}

impl GiteaModel {
    fn pull_json(pull: &Pull) -> Value {
        json!({
            "id": 7000 + pull.number,
            "number": pull.number,
            "state": if pull.open { "open" } else { "closed" },
            "title": pull.title,
            "body": pull.body,
            "merged": pull.merged,
            "merge_commit_sha": pull.merge_commit.as_ref().filter(|_| pull.merged),
            "html_url": format!("https://gitea.example.org/{OWNER}/{REPO}/pulls/{}", pull.number),
            "head": {"ref": pull.head, "label": pull.head},
            "base": {"ref": pull.base, "label": pull.base},
        })
    }
}

impl Model for GiteaModel {
    const PREFIX: &'static str = "/api/v1";
    const COMMIT_OP: &'static str = "repoChangeFiles";
    const OPEN_PULL_OP: &'static str = "repoCreatePullRequest";
    const FOLDER_FILE_OP: &'static str = "GetBlob";
    const HEAD_OP: &'static str = "repoGetBranch";
    const TREE_OP: &'static str = "GetTree";
    const CONTAINS_OP: &'static str = "repoCompareDiff";
    const KIND: mirante::adapters::forge::ForgeKind = mirante::adapters::forge::ForgeKind::Gitea;

    fn new(repo: Repo) -> Self {
        GiteaModel { repo }
    }

    fn check(&self, req: &Req) -> Result<Op, Vec<String>> {
        let mut problems = Vec::new();
        // https://docs.gitea.com/development/api-usage#authentication
        if !req
            .header("authorization")
            .is_some_and(|a| a.starts_with("token ") || a.starts_with("Bearer "))
        {
            problems.push("Authorization must be `token <token>`".to_owned());
        }
        match contract().check(req) {
            Ok(op) if problems.is_empty() => {
                if op.param("owner") != OWNER || op.param("repo") != REPO {
                    return Err(vec![format!("{}: another repository", op.id)]);
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
        let auth = req.header("authorization")?;
        auth.strip_prefix("token ")
            .or_else(|| auth.strip_prefix("Bearer "))
    }

    fn unauthorized() -> Answer {
        Answer::new(
            401,
            json!({"message": "user does not exist [uid: 0, name: ]", "url": "https://gitea.example.org/api/swagger"}),
        )
    }

    fn answer(&mut self, op: &Op, req: &Req) -> Answer {
        let body = req.body();
        let b64 = &base64::engine::general_purpose::STANDARD;
        match op.id.as_str() {
            "repoGetBranch" => match self.repo.branches.get(op.param("branch")) {
                Some(sha) => Answer::new(
                    200,
                    json!({"name": op.param("branch"), "commit": {"id": sha, "message": ""}, "protected": false}),
                ),
                None => not_found(),
            },
            "repoGetContents" => {
                let rev = req.query("ref").unwrap_or("main");
                let path = op.param("filepath");
                if let Some(content) = self.repo.file(rev, path) {
                    return Answer::new(
                        200,
                        json!({"type": "file", "name": path.rsplit('/').next(), "path": path,
                            "sha": Repo::hash("blob", &content), "size": content.len(),
                            "encoding": "base64", "content": b64.encode(&content)}),
                    );
                }
                let entries = self.repo.dir(rev, path);
                if entries.is_empty() {
                    return not_found();
                }
                Answer::new(
                    200,
                    Value::Array(
                        entries
                            .into_iter()
                            .map(|(name, dir)| {
                                json!({"type": if dir { "dir" } else { "file" }, "name": name,
                                    "path": format!("{path}/{name}")})
                            })
                            .collect(),
                    ),
                )
            }
            "GetTree" => {
                let sha = op.param("sha");
                let tree = match self.repo.commits.get(sha) {
                    Some(commit) => Some(&commit.tree),
                    None => self.repo.trees.get(sha),
                };
                let Some(tree) = tree else {
                    return Answer::new(
                        400,
                        json!({"message": "sha invalid", "url": "https://gitea.example.org/api/swagger"}),
                    );
                };
                let recursive = req.query("recursive") == Some("true");
                let items = tree_items(tree, recursive);
                let page: usize = req.query("page").and_then(|p| p.parse().ok()).unwrap_or(1);
                let per_page: usize = req
                    .query("per_page")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(1000)
                    .min(self.repo.listing_limit.unwrap_or(1000));
                let total = items.len();
                let start = (page.max(1) - 1) * per_page;
                let entries: Vec<Value> = items
                    .into_iter()
                    .skip(start)
                    .take(per_page)
                    .map(|i| {
                        json!({"path": i.path, "mode": if i.is_dir { "040000" } else { "100644" },
                            "type": if i.is_dir { "tree" } else { "blob" }, "size": i.size,
                            "sha": i.sha, "url": ""})
                    })
                    .collect();
                Answer::new(
                    200,
                    json!({"sha": sha, "url": "", "tree": entries, "page": page,
                        "total_count": total, "truncated": start + per_page < total}),
                )
            }
            "GetBlob" => match self.repo.blobs.get(op.param("sha")) {
                Some(content) => Answer::new(
                    200,
                    json!({"content": b64.encode(content), "encoding": "base64",
                        "sha": op.param("sha"), "size": content.len(), "url": ""}),
                ),
                None => not_found(),
            },
            "repoGetSingleCommit" => {
                let Some(commit) = self.repo.resolve(op.param("sha")) else {
                    return not_found();
                };
                let sha = commit.sha.clone();
                let files: Vec<Value> = self
                    .repo
                    .changes(&sha)
                    .into_iter()
                    .map(|(path, status)| json!({"filename": path, "status": status}))
                    .collect();
                let commit = &self.repo.commits[&sha];
                Answer::new(
                    200,
                    json!({"sha": sha, "commit": {"message": commit.message},
                        "parents": commit.parents.iter().map(|p| json!({"sha": p})).collect::<Vec<_>>(),
                        "files": files}),
                )
            }
            "repoChangeFiles" => {
                let base = body["branch"].as_str().unwrap_or("main");
                let new_branch = body["new_branch"].as_str().unwrap_or(base);
                let Some(parent) = self.repo.branches.get(base).cloned() else {
                    return not_found();
                };
                if new_branch != base && self.repo.branches.contains_key(new_branch) {
                    return unprocessable(format!("branch already exists [name: {new_branch}]"));
                }
                let mut tree = self.repo.commits[&parent].tree.clone();
                for file in body["files"].as_array().into_iter().flatten() {
                    let path = file["path"].as_str().unwrap_or_default();
                    if file["operation"].as_str() == Some("delete") {
                        match tree.get(path) {
                            None => return not_found(),
                            Some(old) if file["sha"].as_str() != Some(&Repo::hash("blob", old)) => {
                                return unprocessable(format!(
                                    "sha does not match [given: {}, expected: {}]",
                                    file["sha"],
                                    Repo::hash("blob", old)
                                ));
                            }
                            Some(_) => {
                                tree.remove(path);
                                continue;
                            }
                        }
                    }
                    let content = b64
                        .decode(file["content"].as_str().unwrap_or_default())
                        .ok()
                        .and_then(|b| String::from_utf8(b).ok());
                    let Some(content) = content else {
                        return Answer::new(400, json!({"message": "content is not base64"}));
                    };
                    match (file["operation"].as_str(), tree.get(path)) {
                        (Some("create"), Some(_)) => {
                            return unprocessable(format!(
                                "repository file already exists [path: {path}]"
                            ));
                        }
                        (Some("update"), None) => return not_found(),
                        (Some("update"), Some(old))
                            if file["sha"].as_str() != Some(&Repo::hash("blob", old)) =>
                        {
                            return unprocessable(format!(
                                "sha does not match [given: {}, expected: {}]",
                                file["sha"],
                                Repo::hash("blob", old)
                            ));
                        }
                        _ => {}
                    }
                    tree.insert(path.to_owned(), content);
                }
                let sha = self.repo.add_commit(
                    &[parent],
                    tree,
                    body["message"].as_str().unwrap_or_default(),
                    (
                        body["author"]["name"].as_str().unwrap_or("token owner"),
                        body["author"]["email"]
                            .as_str()
                            .unwrap_or("owner@example.org"),
                    ),
                );
                self.repo
                    .branches
                    .insert(new_branch.to_owned(), sha.clone());
                Answer::new(
                    201,
                    json!({"commit": {"sha": sha, "message": body["message"]}, "files": []}),
                )
            }
            "repoListPullRequests" => {
                let state = req.query("state").unwrap_or("open");
                let page: usize = req.query("page").and_then(|p| p.parse().ok()).unwrap_or(1);
                let limit: usize = req
                    .query("limit")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(30);
                let list: Vec<Value> = self
                    .repo
                    .pulls
                    .iter()
                    .rev()
                    .filter(|p| match state {
                        "all" => true,
                        "closed" => !p.open,
                        _ => p.open,
                    })
                    .skip((page.max(1) - 1) * limit)
                    .take(limit)
                    .map(GiteaModel::pull_json)
                    .collect();
                Answer::new(200, Value::Array(list))
            }
            "repoCreatePullRequest" => {
                let head = body["head"].as_str().unwrap_or_default();
                let base = body["base"].as_str().unwrap_or_default();
                if let Some(existing) = self.repo.open_pull_for(head, base) {
                    return Answer::new(
                        409,
                        json!({"message": format!("pull request already exists for these targets [id: {}, issue_id: {}, head_repo_id: 1, base_repo_id: 1, head_branch: {head}, base_branch: {base}]", 7000 + existing.number, existing.number), "url": ""}),
                    );
                }
                if !self.repo.branches.contains_key(head) {
                    return not_found();
                }
                let number = self.repo.open_pull(
                    head,
                    base,
                    body["title"].as_str().unwrap_or_default(),
                    body["body"].as_str().unwrap_or_default(),
                );
                let pull = self.repo.pulls.iter().find(|p| p.number == number).unwrap();
                Answer::new(201, GiteaModel::pull_json(pull))
            }
            // A side that is neither a branch, a tag nor a commit of the repository is 404.
            "repoCompareDiff" => {
                let basehead = op.param("basehead");
                let Some((base, head)) = basehead
                    .split_once("...")
                    .or_else(|| basehead.split_once(".."))
                else {
                    return not_found();
                };
                let (Some(base), Some(head)) = (self.repo.resolve(base), self.repo.resolve(head))
                else {
                    return not_found();
                };
                let commits: Vec<Value> = self
                    .repo
                    .commits_between(&base.sha, &head.sha)
                    .iter()
                    .map(|sha| {
                        let commit = &self.repo.commits[sha];
                        json!({"sha": sha, "url": "", "html_url": "",
                            "commit": {"message": commit.message},
                            "parents": commit.parents.iter().map(|p| json!({"sha": p})).collect::<Vec<_>>()})
                    })
                    .collect();
                Answer::new(
                    200,
                    json!({"total_commits": commits.len(), "commits": commits}),
                )
            }
            "repoGetPullRequest" => {
                let number: u64 = op.param("index").parse().unwrap_or(0);
                match self.repo.pulls.iter().find(|p| p.number == number) {
                    Some(p) => Answer::new(200, GiteaModel::pull_json(p)),
                    None => not_found(),
                }
            }
            "issueCreateComment" => {
                let number: u64 = op.param("index").parse().unwrap_or(0);
                let text = body["body"].as_str().unwrap_or_default().to_owned();
                match self.repo.pull_mut(number) {
                    Some(pull) => {
                        pull.comments.push(text.clone());
                        Answer::new(201, json!({"id": 6000 + pull.comments.len(), "body": text}))
                    }
                    None => not_found(),
                }
            }
            "repoEditPullRequest" => {
                let number: u64 = op.param("index").parse().unwrap_or(0);
                let Some(pull) = self.repo.pull_mut(number) else {
                    return not_found();
                };
                if body["state"] == "closed" && !pull.merged {
                    pull.open = false;
                }
                Answer::new(201, GiteaModel::pull_json(pull))
            }
            other => Answer::new(501, json!({"message": format!("{other} is not answered")})),
        }
    }

    fn repo(&mut self) -> &mut Repo {
        &mut self.repo
    }

    fn forge(api: &Url, token: SecretString) -> Arc<dyn Forge> {
        Arc::new(
            Gitea::new(
                api,
                &format!("{OWNER}/{REPO}"),
                token,
                reqwest::Client::new(),
            )
            .unwrap()
            .with_timeout(Duration::from_secs(2)),
        )
    }
}
