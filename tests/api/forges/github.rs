//! A fake GitHub checked against GitHub's official OpenAPI description (npm
//! `@octokit/openapi`, `generated/api.github.com.json`, installed in `tests/forges`): every
//! request must be an operation of that document, with declared parameters of the declared
//! types and a body valid against the operation's request body schema, plus the headers
//! GitHub asks every client to send.

use std::{
    collections::BTreeMap,
    sync::{Arc, OnceLock},
    time::Duration,
};

use base64::Engine as _;
use mirante::adapters::forge::{Forge, GitHub};
use reqwest::Url;
use secrecy::SecretString;
use serde_json::{Value, json};

use super::{
    contract::{Contract, Op, Req},
    fake::{Answer, Model, Pull, Repo, tree_items},
};

pub const OWNER: &str = "infra";
pub const REPO: &str = "devops";
const DOCS: &str = "https://docs.github.com/rest";

/// GitHub's OpenAPI description, loaded once per test run.
pub fn contract() -> &'static Contract {
    static CONTRACT: OnceLock<Contract> = OnceLock::new();
    CONTRACT.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/forges/node_modules/@octokit/openapi/generated/api.github.com.json"
        );
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
            panic!("{path}: {e} (run `npm ci` in tests/forges, or `cargo xtask setup`)")
        });
        let doc: Value = serde_json::from_str(&text).expect("GitHub's OpenAPI description parses");
        // `{ref}` is `heads/<branch>` and `{path}` a file path: both may hold `/`.
        Contract::new("https://api.github.com/openapi.json", doc, &["ref", "path"])
    })
}

pub struct GitHubModel {
    repo: Repo,
}

fn not_found() -> Answer {
    Answer::new(
        404,
        json!({"message": "Not Found", "documentation_url": DOCS, "status": "404"}),
    )
}

fn validation_failed(errors: Value) -> Answer {
    Answer::new(
        422,
        json!({"message": "Validation Failed", "errors": errors, "documentation_url": DOCS, "status": "422"}),
    )
}

impl GitHubModel {
    fn api(&self, path: &str) -> String {
        format!("https://api.github.com/repos/{OWNER}/{REPO}/{path}")
    }

    fn pull_json(&self, pull: &Pull) -> Value {
        json!({
            "url": self.api(&format!("pulls/{}", pull.number)),
            "id": 1000 + pull.number,
            "number": pull.number,
            "state": if pull.open { "open" } else { "closed" },
            "title": pull.title,
            "body": pull.body,
            "html_url": format!("https://github.com/{OWNER}/{REPO}/pull/{}", pull.number),
            "merged": pull.merged,
            "merged_at": if pull.merged { json!("2026-11-30T12:00:00Z") } else { Value::Null },
            // Before the merge GitHub names the test merge commit it made for the pull
            // request, which is on no branch; after, the commit the merge made on the base.
            "merge_commit_sha": match &pull.merge_commit {
                Some(sha) if pull.merged => json!(sha),
                _ if pull.open => json!(Repo::hash("test-merge", &pull.number.to_string())),
                _ => Value::Null,
            },
            "head": {"ref": pull.head, "label": format!("{OWNER}:{}", pull.head)},
            "base": {"ref": pull.base, "label": format!("{OWNER}:{}", pull.base)},
        })
    }

    fn commit_json(&self, sha: &str) -> Option<Value> {
        let commit = self.repo.commits.get(sha)?;
        Some(json!({
            "sha": commit.sha,
            "url": self.api(&format!("git/commits/{}", commit.sha)),
            "message": commit.message,
            "author": {"name": commit.author.0, "email": commit.author.1, "date": "2026-11-30T12:00:00Z"},
            "tree": {"sha": Repo::tree_sha(&commit.tree), "url": ""},
            "parents": commit.parents.iter().map(|p| json!({"sha": p, "url": ""})).collect::<Vec<_>>(),
        }))
    }

    /// A commit as the REST commits API shows it (`commit`), for comparisons.
    fn rest_commit_json(&self, sha: &str) -> Value {
        let commit = &self.repo.commits[sha];
        let who = json!({"name": commit.author.0, "email": commit.author.1, "date": "2026-11-30T12:00:00Z"});
        json!({
            "url": self.api(&format!("commits/{sha}")),
            "sha": sha,
            "node_id": format!("C_{sha}"),
            "html_url": format!("https://github.com/{OWNER}/{REPO}/commit/{sha}"),
            "comments_url": self.api(&format!("commits/{sha}/comments")),
            "commit": {
                "url": self.api(&format!("git/commits/{sha}")),
                "author": who, "committer": who, "message": commit.message, "comment_count": 0,
                "tree": {"sha": Repo::tree_sha(&commit.tree), "url": ""},
            },
            "author": Value::Null,
            "committer": Value::Null,
            "parents": commit.parents.iter().map(|p| json!({"sha": p, "url": ""})).collect::<Vec<_>>(),
        })
    }

    /// https://docs.github.com/en/rest/commits/commits#compare-two-commits: `BASE...HEAD`
    /// compared from their merge base; `status` says how HEAD stands to BASE. A commit the
    /// repository does not have is 404.
    fn compare_json(&self, basehead: &str, per_page: usize) -> Option<Value> {
        let (base, head) = basehead.split_once("...")?;
        let (base, head) = (
            self.repo.resolve(base)?.sha.clone(),
            self.repo.resolve(head)?.sha.clone(),
        );
        let merge_base = self.repo.merge_base(&base, &head)?;
        let ahead = self.repo.commits_between(&base, &head);
        let behind = self.repo.commits_between(&head, &base);
        let status = match (ahead.len(), behind.len()) {
            (0, 0) => "identical",
            (_, 0) => "ahead",
            (0, _) => "behind",
            _ => "diverged",
        };
        let url = |host: &str| format!("https://{host}/{OWNER}/{REPO}/compare/{basehead}");
        Some(json!({
            "url": self.api(&format!("compare/{basehead}")),
            "html_url": url("github.com"),
            "permalink_url": url("github.com"),
            "diff_url": url("github.com") + ".diff",
            "patch_url": url("github.com") + ".patch",
            "base_commit": self.rest_commit_json(&base),
            "merge_base_commit": self.rest_commit_json(&merge_base),
            "status": status,
            "ahead_by": ahead.len(),
            "behind_by": behind.len(),
            "total_commits": ahead.len(),
            "commits": ahead.iter().take(per_page).map(|c| self.rest_commit_json(c)).collect::<Vec<_>>(),
            "files": [],
        }))
    }

    fn ref_json(&self, branch: &str) -> Option<Value> {
        let sha = self.repo.branches.get(branch)?;
        Some(json!({
            "ref": format!("refs/heads/{branch}"),
            "url": self.api(&format!("git/refs/heads/{branch}")),
            "object": {"type": "commit", "sha": sha, "url": ""},
        }))
    }
}

impl Model for GitHubModel {
    const PREFIX: &'static str = "/api/v3";
    const COMMIT_OP: &'static str = "git/create-commit";
    const OPEN_PULL_OP: &'static str = "pulls/create";
    const FOLDER_FILE_OP: &'static str = "git/get-blob";
    const HEAD_OP: &'static str = "git/get-ref";
    const TREE_OP: &'static str = "git/get-tree";
    const CONTAINS_OP: &'static str = "repos/compare-commits-with-basehead";
    const KIND: mirante::adapters::forge::ForgeKind = mirante::adapters::forge::ForgeKind::Github;

    fn new(repo: Repo) -> Self {
        GitHubModel { repo }
    }

    fn check(&self, req: &Req) -> Result<Op, Vec<String>> {
        let mut problems = Vec::new();
        // https://docs.github.com/en/rest/using-the-rest-api/getting-started-with-the-rest-api
        if req.header("accept") != Some("application/vnd.github+json") {
            problems.push("Accept must be application/vnd.github+json".to_owned());
        }
        if req.header("x-github-api-version") != Some("2022-11-28") {
            problems.push("X-GitHub-Api-Version must be 2022-11-28".to_owned());
        }
        if req.header("user-agent").is_none_or(str::is_empty) {
            problems.push("GitHub requires a User-Agent".to_owned());
        }
        if !req
            .header("authorization")
            .is_some_and(|a| a.starts_with("Bearer "))
        {
            problems.push("Authorization must be Bearer <token>".to_owned());
        }
        let op = contract().check(req);
        match op {
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
        req.header("authorization")?.strip_prefix("Bearer ")
    }

    fn unauthorized() -> Answer {
        Answer::new(
            401,
            json!({"message": "Bad credentials", "documentation_url": DOCS, "status": "401"}),
        )
    }

    fn answer(&mut self, op: &Op, req: &Req) -> Answer {
        let body = req.body();
        match op.id.as_str() {
            "git/get-ref" => {
                let Some(branch) = op.param("ref").strip_prefix("heads/") else {
                    return not_found();
                };
                self.ref_json(branch)
                    .map_or_else(not_found, |r| Answer::new(200, r))
            }
            "git/get-commit" => self
                .commit_json(op.param("commit_sha"))
                .map_or_else(not_found, |c| Answer::new(200, c)),
            "git/create-blob" => {
                let content = body["content"].as_str().unwrap_or_default();
                let content = if body["encoding"] == "base64" {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(content)
                        .unwrap_or_default();
                    String::from_utf8_lossy(&bytes).into_owned()
                } else {
                    content.to_owned()
                };
                let sha = Repo::hash("blob", &content);
                self.repo.blobs.insert(sha.clone(), content);
                Answer::new(
                    201,
                    json!({"sha": sha, "url": self.api(&format!("git/blobs/{sha}"))}),
                )
            }
            "git/create-tree" => {
                let mut tree = match body["base_tree"].as_str() {
                    Some(base) => match self.repo.trees.get(base) {
                        Some(t) => t.clone(),
                        None => return validation_failed(json!(["base_tree is not a tree"])),
                    },
                    None => BTreeMap::new(),
                };
                for entry in body["tree"].as_array().into_iter().flatten() {
                    let path = entry["path"].as_str().unwrap_or_default().to_owned();
                    // "sha": null deletes the path (GitHub: "If both tree.sha and content are
                    // null, the file will be deleted").
                    if entry.get("sha").is_some_and(Value::is_null)
                        && entry.get("content").is_none()
                    {
                        if tree.remove(&path).is_none() {
                            return validation_failed(json!([format!(
                                "tree.path {path} does not exist"
                            )]));
                        }
                        continue;
                    }
                    let content = if let Some(sha) = entry["sha"].as_str() {
                        match self.repo.blobs.get(sha) {
                            Some(c) => c.clone(),
                            None => return validation_failed(json!(["tree.sha is not a blob"])),
                        }
                    } else {
                        entry["content"].as_str().unwrap_or_default().to_owned()
                    };
                    tree.insert(path, content);
                }
                let sha = Repo::tree_sha(&tree);
                self.repo.trees.insert(sha.clone(), tree);
                Answer::new(
                    201,
                    json!({"sha": sha, "url": self.api(&format!("git/trees/{sha}")), "tree": [], "truncated": false}),
                )
            }
            "git/create-commit" => {
                let tree_sha = body["tree"].as_str().unwrap_or_default();
                let Some(tree) = self.repo.trees.get(tree_sha).cloned() else {
                    return validation_failed(json!(["tree is not a tree"]));
                };
                let parents: Vec<String> = body["parents"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.as_str().map(str::to_owned))
                    .collect();
                if parents.iter().any(|p| !self.repo.commits.contains_key(p)) {
                    return validation_failed(json!(["parents are not commits"]));
                }
                let author = (
                    body["author"]["name"].as_str().unwrap_or("token owner"),
                    body["author"]["email"]
                        .as_str()
                        .unwrap_or("owner@example.org"),
                );
                let message = body["message"].as_str().unwrap_or_default();
                let sha = self.repo.add_commit(&parents, tree, message, author);
                Answer::new(201, self.commit_json(&sha).unwrap())
            }
            "git/create-ref" => {
                let name = body["ref"].as_str().unwrap_or_default();
                let sha = body["sha"].as_str().unwrap_or_default();
                let Some(branch) = name.strip_prefix("refs/heads/") else {
                    return validation_failed(json!(["ref must start with refs/heads/"]));
                };
                if self.repo.branches.contains_key(branch) {
                    return Answer::new(
                        422,
                        json!({"message": "Reference already exists", "documentation_url": DOCS, "status": "422"}),
                    );
                }
                if !self.repo.commits.contains_key(sha) {
                    return validation_failed(json!(["Object does not exist"]));
                }
                self.repo.branches.insert(branch.to_owned(), sha.to_owned());
                Answer::new(201, self.ref_json(branch).unwrap())
            }
            "repos/get-content" => {
                let path = op.param("path");
                let rev = req.query("ref").unwrap_or("main");
                if let Some(content) = self.repo.file(rev, path) {
                    let encoded = base64::engine::general_purpose::STANDARD.encode(&content);
                    // GitHub wraps the base64 at 60 characters.
                    let wrapped: Vec<String> = encoded
                        .as_bytes()
                        .chunks(60)
                        .map(|c| String::from_utf8_lossy(c).into_owned())
                        .collect();
                    return Answer::new(
                        200,
                        json!({
                            "type": "file", "encoding": "base64", "size": content.len(),
                            "name": path.rsplit('/').next(), "path": path,
                            "content": wrapped.join("\n") + "\n",
                            "sha": Repo::hash("blob", &content),
                        }),
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
                                json!({"type": if dir { "dir" } else { "file" }, "name": name, "path": format!("{path}/{name}")})
                            })
                            .collect(),
                    ),
                )
            }
            // https://docs.github.com/en/rest/git/trees#get-a-tree: a tree by its sha, each
            // entry with its own sha (and a blob's size); `recursive` (any value) lists every
            // level, and `truncated` says the listing was cut at GitHub's limit.
            "git/get-tree" => {
                let Some(tree) = self.repo.trees.get(op.param("tree_sha")) else {
                    return not_found();
                };
                let recursive = req.query("recursive").is_some();
                let mut items = tree_items(tree, recursive);
                let limit = self.repo.listing_limit.unwrap_or(usize::MAX);
                let truncated = recursive && items.len() > limit;
                items.truncate(if recursive { limit } else { usize::MAX });
                let entries: Vec<Value> = items
                    .into_iter()
                    .map(|i| {
                        let mut entry = json!({
                            "path": i.path, "mode": if i.is_dir { "040000" } else { "100644" },
                            "type": if i.is_dir { "tree" } else { "blob" }, "sha": i.sha,
                            "url": self.api(&format!("git/{}/{}", if i.is_dir { "trees" } else { "blobs" }, i.sha)),
                        });
                        if !i.is_dir {
                            entry["size"] = json!(i.size);
                        }
                        entry
                    })
                    .collect();
                Answer::new(
                    200,
                    json!({"sha": op.param("tree_sha"), "url": self.api(&format!("git/trees/{}", op.param("tree_sha"))),
                        "tree": entries, "truncated": truncated}),
                )
            }
            // https://docs.github.com/en/rest/git/blobs#get-a-blob: the content in base64.
            "git/get-blob" => match self.repo.blobs.get(op.param("file_sha")) {
                Some(content) => Answer::new(
                    200,
                    json!({
                        "content": base64::engine::general_purpose::STANDARD.encode(content),
                        "encoding": "base64", "sha": op.param("file_sha"), "size": content.len(),
                    }),
                ),
                None => not_found(),
            },
            "pulls/list" => {
                let head = req.query("head").unwrap_or_default();
                let state = req.query("state").unwrap_or("open");
                let list: Vec<Value> = self
                    .repo
                    .pulls
                    .iter()
                    .rev()
                    .filter(|p| head.is_empty() || format!("{OWNER}:{}", p.head) == head)
                    .filter(|p| match state {
                        "all" => true,
                        "closed" => !p.open,
                        _ => p.open,
                    })
                    .map(|p| self.pull_json(p))
                    .collect();
                Answer::new(200, Value::Array(list))
            }
            "pulls/create" => {
                let head = body["head"].as_str().unwrap_or_default();
                let base = body["base"].as_str().unwrap_or_default();
                if !self.repo.branches.contains_key(head) {
                    return validation_failed(
                        json!([{"resource": "PullRequest", "field": "head", "code": "invalid"}]),
                    );
                }
                if self.repo.open_pull_for(head, base).is_some() {
                    return validation_failed(json!([{
                        "resource": "PullRequest", "code": "custom",
                        "message": format!("A pull request already exists for {OWNER}:{head}."),
                    }]));
                }
                let number = self.repo.open_pull(
                    head,
                    base,
                    body["title"].as_str().unwrap_or_default(),
                    body["body"].as_str().unwrap_or_default(),
                );
                let pull = self.repo.pulls.last().unwrap().clone();
                debug_assert_eq!(pull.number, number);
                Answer::new(201, self.pull_json(&pull))
            }
            "repos/compare-commits-with-basehead" => {
                let per_page = req
                    .query("per_page")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(250);
                self.compare_json(op.param("basehead"), per_page)
                    .map_or_else(not_found, |c| Answer::new(200, c))
            }
            "pulls/get" => {
                let number: u64 = op.param("pull_number").parse().unwrap_or(0);
                match self.repo.pulls.iter().find(|p| p.number == number) {
                    Some(p) => Answer::new(200, self.pull_json(p)),
                    None => not_found(),
                }
            }
            // A pull request is an issue for comments; GitHub answers the comment.
            "issues/create-comment" => {
                let number: u64 = op.param("issue_number").parse().unwrap_or(0);
                let text = body["body"].as_str().unwrap_or_default().to_owned();
                match self.repo.pull_mut(number) {
                    Some(pull) => {
                        pull.comments.push(text.clone());
                        Answer::new(
                            201,
                            json!({
                                "id": 9000 + pull.comments.len(),
                                "body": text,
                                "html_url": format!("https://github.com/{OWNER}/{REPO}/pull/{number}#issuecomment-{}", 9000 + pull.comments.len()),
                            }),
                        )
                    }
                    None => not_found(),
                }
            }
            // `state: closed` closes it; a merged one cannot be reopened or closed again.
            "pulls/update" => {
                let number: u64 = op.param("pull_number").parse().unwrap_or(0);
                let Some(pull) = self.repo.pull_mut(number) else {
                    return not_found();
                };
                if body["state"] == "closed" && !pull.merged {
                    pull.open = false;
                }
                let pull = pull.clone();
                Answer::new(200, self.pull_json(&pull))
            }
            other => Answer::new(
                501,
                json!({"message": format!("{other} is documented but this fake does not answer it")}),
            ),
        }
    }

    fn repo(&mut self) -> &mut Repo {
        &mut self.repo
    }

    fn forge(api: &Url, token: SecretString) -> Arc<dyn Forge> {
        Arc::new(
            GitHub::new(
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
