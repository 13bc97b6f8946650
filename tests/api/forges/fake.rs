//! A fake forge: a real HTTP server on 127.0.0.1:0 that checks every request against the
//! forge's contract (an undocumented request is answered 400 and fails the test), then
//! answers as the forge does from an in-memory repository: branches, commits, pull requests.

use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Router,
    body::{Body, to_bytes},
    extract::{Request, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use mirante::adapters::forge::Forge;
use reqwest::Url;
use secrecy::SecretString;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::contract::{Op, Req};

/// The token the fake accepts.
pub const TOKEN: &str = "forge-token-3b9f4e27c1d8a6";

/// What a fake answers.
pub struct Answer {
    pub status: u16,
    pub body: Value,
    /// Extra headers (GitLab's `Link` for the next page).
    pub headers: Vec<(String, String)>,
    /// A body that is not JSON (a raw file), sent as it is.
    pub raw: Option<Vec<u8>>,
}

impl Answer {
    pub fn new(status: u16, body: Value) -> Answer {
        Answer {
            status,
            body,
            headers: Vec::new(),
            raw: None,
        }
    }

    /// A 200 whose body is `bytes` as they are (`text/plain`).
    pub fn raw(bytes: Vec<u8>) -> Answer {
        Answer {
            raw: Some(bytes),
            ..Answer::new(200, Value::Null)
        }
    }

    pub fn with_header(mut self, name: &str, value: String) -> Answer {
        self.headers.push((name.to_owned(), value));
        self
    }
}

/// One forge's contract and behaviour.
pub trait Model: Send + 'static {
    /// Where the API lives on the host, e.g. `/api/v3`.
    const PREFIX: &'static str;
    /// The operation that makes a commit.
    const COMMIT_OP: &'static str;
    /// The operation that opens a pull request.
    const OPEN_PULL_OP: &'static str;
    /// The operation that reads one file of a listed folder.
    const FOLDER_FILE_OP: &'static str;
    /// The operation that reads a branch's head.
    const HEAD_OP: &'static str;
    /// The operation that lists a tree (a folder).
    const TREE_OP: &'static str;
    /// The operation that tells whether one commit contains another.
    const CONTAINS_OP: &'static str;
    /// Which forge this is, for the portal's configuration.
    const KIND: mirante::adapters::forge::ForgeKind;

    fn new(repo: Repo) -> Self;
    /// Checks method, path, query, headers and body against the documented API.
    fn check(&self, req: &Req) -> Result<Op, Vec<String>>;
    /// The token the request carries, in this forge's header.
    fn token<'r>(&self, req: &'r Req) -> Option<&'r str>;
    /// The forge's answer to a refused token.
    fn unauthorized() -> Answer;
    /// The forge's answer.
    fn answer(&mut self, op: &Op, req: &Req) -> Answer;
    fn repo(&mut self) -> &mut Repo;
    /// The client under test, with a short timeout.
    fn forge(api: &Url, token: SecretString) -> Arc<dyn Forge>;
}

/// A scripted answer for the next call of an operation.
struct Fault {
    op: &'static str,
    /// The answer instead of the forge's; `None`: the forge's, after the delay.
    answer: Option<Answer>,
    delay: Duration,
}

struct Shared<M> {
    model: Mutex<M>,
    calls: Mutex<Vec<String>>,
    violations: Mutex<Vec<String>>,
    faults: Mutex<VecDeque<Fault>>,
}

/// A running fake forge.
pub struct Fake<M: Model> {
    /// The API base URL (`http://127.0.0.1:PORT/api/...`).
    pub api: Url,
    shared: Arc<Shared<M>>,
    server: tokio::task::JoinHandle<()>,
}

impl<M: Model> Drop for Fake<M> {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl<M: Model> Fake<M> {
    pub async fn start() -> Fake<M> {
        Self::start_with(Repo::seeded()).await
    }

    pub async fn start_with(repo: Repo) -> Fake<M> {
        let shared = Arc::new(Shared {
            model: Mutex::new(M::new(repo)),
            calls: Mutex::new(Vec::new()),
            violations: Mutex::new(Vec::new()),
            faults: Mutex::new(VecDeque::new()),
        });
        let app = Router::new()
            .fallback(handle::<M>)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        let api = Url::parse(&format!("http://127.0.0.1:{port}{}", M::PREFIX)).unwrap();
        Fake {
            api,
            shared,
            server,
        }
    }

    /// The client under test, with the token the fake accepts.
    pub fn forge(&self) -> Arc<dyn Forge> {
        M::forge(&self.api, SecretString::from(TOKEN))
    }

    /// The client under test with another token.
    pub fn forge_with_token(&self, token: &str) -> Arc<dyn Forge> {
        M::forge(&self.api, SecretString::from(token))
    }

    /// The next call of `op` gets this answer instead of the forge's.
    pub fn fail_next(&self, op: &'static str, status: u16, body: Value) {
        self.answer_next(op, Answer::new(status, body));
    }

    /// The next call of `op` gets `answer` (headers and all) instead of the forge's.
    pub fn answer_next(&self, op: &'static str, answer: Answer) {
        self.shared.faults.lock().unwrap().push_back(Fault {
            op,
            answer: Some(answer),
            delay: Duration::ZERO,
        });
    }

    /// The next call of `op` is answered only after `delay`.
    pub fn delay_next(&self, op: &'static str, delay: Duration) {
        self.shared.faults.lock().unwrap().push_back(Fault {
            op,
            answer: None,
            delay,
        });
    }

    /// Puts the small `scratch-space` template (one namespace) in the monorepo's templates
    /// folder on `main`, for tests that need a request to propose.
    pub fn with_scratch_template(&self) {
        use crate::requests::{SCRATCH_NAMESPACE, SCRATCH_TEMPLATE};
        self.with_repo(|repo| {
            repo.push_branch(
                "main",
                "main",
                &[
                    (
                        "self-service/templates/scratch-space/template.yaml",
                        SCRATCH_TEMPLATE,
                    ),
                    (
                        "self-service/templates/scratch-space/skeleton/namespace.yaml",
                        SCRATCH_NAMESPACE,
                    ),
                ],
            )
        });
    }

    /// How many calls of `op` the fake received.
    pub fn calls(&self, op: &str) -> usize {
        self.shared
            .calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| *c == op)
            .count()
    }

    /// The portal on SQLite (with the small test catalog) with its monorepo `infra/devops` on
    /// this fake, no background polling, and whatever else `more` sets.
    pub async fn portal(&self, more: impl FnOnce(&mut mirante::Config)) -> crate::helpers::TestApp {
        self.portal_on(crate::helpers::Backend::Sqlite, more).await
    }

    /// [`Fake::portal`] on `backend`.
    pub async fn portal_on(
        &self,
        backend: crate::helpers::Backend,
        more: impl FnOnce(&mut mirante::Config),
    ) -> crate::helpers::TestApp {
        use crate::helpers::{CatalogSetup, spawn_configured};
        let api = self.api.to_string();
        spawn_configured(backend, CatalogSetup::Small, move |config, _| {
            config.forge = M::KIND;
            config.monorepo = Some("infra/devops".into());
            config.forge_url = Some(api);
            config.forge_token = Some(SecretString::from(TOKEN));
            config.forge_poll_secs = 0;
            more(config);
        })
        .await
    }

    /// Changes the repository behind the fake.
    pub fn with_repo<T>(&self, f: impl FnOnce(&mut Repo) -> T) -> T {
        f(self.shared.model.lock().unwrap().repo())
    }

    /// Fails the test if any request broke the contract.
    pub fn assert_contract_kept(&self) {
        let violations = self.shared.violations.lock().unwrap();
        assert!(
            violations.is_empty(),
            "requests outside the forge's documented API:\n{}",
            violations.join("\n")
        );
        assert!(
            !self.shared.calls.lock().unwrap().is_empty(),
            "the fake received no request"
        );
    }
}

async fn handle<M: Model>(State(shared): State<Arc<Shared<M>>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, 10 << 20).await.unwrap_or_default();
    let path = parts.uri.path();
    let Some(rest) = path.strip_prefix(M::PREFIX) else {
        shared.violations.lock().unwrap().push(format!(
            "{} {path}: outside {}",
            parts.method,
            M::PREFIX
        ));
        return answer(Answer::new(404, json!({"message": "Not Found"})));
    };
    let segments = rest
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let query = mirante_tests::query_pairs(&parts.uri);
    let body = if bytes.is_empty() {
        None
    } else {
        match serde_json::from_slice(&bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                shared.violations.lock().unwrap().push(format!(
                    "{} {path}: the body is not JSON: {e}",
                    parts.method
                ));
                return answer(Answer::new(
                    400,
                    json!({"message": "Problems parsing JSON"}),
                ));
            }
        }
    };
    let req = Req {
        method: parts.method.clone(),
        segments,
        query,
        headers: parts.headers.clone(),
        body,
    };

    let checked = shared.model.lock().unwrap().check(&req);
    let op = match checked {
        Ok(op) => op,
        Err(problems) => {
            shared.violations.lock().unwrap().extend(problems);
            return answer(Answer::new(400, json!({"message": "undocumented request"})));
        }
    };
    shared.calls.lock().unwrap().push(op.id.clone());

    let token_ok = shared.model.lock().unwrap().token(&req) == Some(TOKEN);
    if !token_ok {
        return answer(M::unauthorized());
    }

    let fault = {
        let mut faults = shared.faults.lock().unwrap();
        let at = faults.iter().position(|f| f.op == op.id);
        at.and_then(|i| faults.remove(i))
    };
    if let Some(fault) = fault {
        tokio::time::sleep(fault.delay).await;
        if let Some(scripted) = fault.answer {
            return answer(scripted);
        }
    }
    let reply = shared.model.lock().unwrap().answer(&op, &req);
    answer(reply)
}

fn answer(answer: Answer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap();
    let mut response = if let Some(raw) = answer.raw {
        (
            status,
            [("content-type", "text/plain; charset=utf-8")],
            Body::from(raw),
        )
            .into_response()
    } else if answer.body.is_null() {
        status.into_response()
    } else {
        (
            status,
            [("content-type", "application/json; charset=utf-8")],
            Body::from(answer.body.to_string()),
        )
            .into_response()
    };
    for (name, value) in answer.headers {
        response.headers_mut().insert(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            axum::http::HeaderValue::from_str(&value).unwrap(),
        );
    }
    response
}

/// A commit in the fake repository: the whole tree (path → content) and its parents.
#[derive(Debug, Clone)]
pub struct Commit {
    pub sha: String,
    pub tree: BTreeMap<String, String>,
    pub parents: Vec<String>,
    pub message: String,
    pub author: (String, String),
}

/// A pull request in the fake repository.
#[derive(Debug, Clone)]
pub struct Pull {
    pub number: u64,
    pub head: String,
    pub base: String,
    pub title: String,
    pub body: String,
    pub open: bool,
    pub merged: bool,
    /// The commit the merge made on the base branch: a merge commit, or with `squashed` the
    /// one commit holding the pull request's changes.
    pub merge_commit: Option<String>,
    pub squashed: bool,
    /// Comments left on it, oldest first.
    pub comments: Vec<String>,
}

/// The repository behind a fake: commits, branches, trees, blobs and pull requests.
#[derive(Debug, Default)]
pub struct Repo {
    pub commits: HashMap<String, Commit>,
    pub branches: BTreeMap<String, String>,
    /// Every tree by id, the root of each commit and each folder in it, paths relative to it.
    pub trees: HashMap<String, BTreeMap<String, String>>,
    pub blobs: HashMap<String, String>,
    pub pulls: Vec<Pull>,
    /// The most entries one tree listing holds: GitHub truncates a recursive listing there,
    /// GitLab and Gitea make pages of at most that many (the real limits are far larger; a
    /// test lowers them).
    pub listing_limit: Option<usize>,
    counter: u64,
}

/// An entry of a tree listing.
#[derive(Debug, Clone)]
pub struct TreeItem {
    /// Relative to the listed tree.
    pub path: String,
    pub is_dir: bool,
    /// The blob's or the subtree's id.
    pub sha: String,
    /// A blob's size in bytes.
    pub size: usize,
}

/// The files below `dir` in `tree`, with paths relative to it (empty when there are none).
pub fn subtree(tree: &BTreeMap<String, String>, dir: &str) -> BTreeMap<String, String> {
    if dir.is_empty() {
        return tree.clone();
    }
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    tree.iter()
        .filter_map(|(p, c)| Some((p.strip_prefix(&prefix)?.to_owned(), c.clone())))
        .collect()
}

/// The entries of `tree`: those directly in it, or with `recursive` every file and folder at
/// any depth, sorted by path.
pub fn tree_items(tree: &BTreeMap<String, String>, recursive: bool) -> Vec<TreeItem> {
    let mut dirs = std::collections::BTreeSet::new();
    let mut items = Vec::new();
    for (path, content) in tree {
        let parts: Vec<&str> = path.split('/').collect();
        let depth = if recursive { parts.len() - 1 } else { 1 };
        for end in 1..=depth.min(parts.len() - 1) {
            dirs.insert(parts[..end].join("/"));
        }
        if recursive || parts.len() == 1 {
            items.push(TreeItem {
                path: path.clone(),
                is_dir: false,
                sha: Repo::hash("blob", content),
                size: content.len(),
            });
        }
    }
    for dir in dirs {
        items.push(TreeItem {
            sha: Repo::tree_sha(&subtree(tree, &dir)),
            path: dir,
            is_dir: true,
            size: 0,
        });
    }
    items.sort_by(|a, b| a.path.cmp(&b.path));
    items
}

/// Files on `main` in every fake repository.
pub fn seed_files() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("README.md".to_owned(), "# devops\n".to_owned()),
        (
            "catalog/sites.yaml".to_owned(),
            "sites:\n  - id: franca\n".to_owned(),
        ),
        (
            "apps/shared/values.yaml".to_owned(),
            "replicas: 1\n".to_owned(),
        ),
    ])
}

impl Repo {
    /// A repository whose `main` has [`seed_files`].
    pub fn seeded() -> Repo {
        let mut repo = Repo::default();
        let sha = repo.add_commit(
            &[],
            seed_files(),
            "Initial commit",
            ("Ops", "ops@example.org"),
        );
        repo.branches.insert("main".into(), sha);
        repo
    }

    /// A content address for a tree or blob.
    pub fn hash(kind: &str, text: &str) -> String {
        let digest = Sha256::digest(format!("{kind}\0{text}").as_bytes());
        hex::encode(digest)[..40].to_owned()
    }

    pub fn tree_sha(tree: &BTreeMap<String, String>) -> String {
        let listing: String = tree
            .iter()
            .map(|(p, c)| format!("{p}\0{}\n", Repo::hash("blob", c)))
            .collect();
        Repo::hash("tree", &listing)
    }

    pub fn add_commit(
        &mut self,
        parents: &[String],
        tree: BTreeMap<String, String>,
        message: &str,
        author: (&str, &str),
    ) -> String {
        self.counter += 1;
        let sha = Repo::hash("commit", &format!("{}-{message}", self.counter));
        let tree_sha = Repo::tree_sha(&tree);
        for content in tree.values() {
            self.blobs
                .insert(Repo::hash("blob", content), content.clone());
        }
        for item in tree_items(&tree, true).into_iter().filter(|i| i.is_dir) {
            self.trees.insert(item.sha, subtree(&tree, &item.path));
        }
        self.trees.insert(tree_sha, tree.clone());
        self.commits.insert(
            sha.clone(),
            Commit {
                sha: sha.clone(),
                tree,
                parents: parents.to_vec(),
                message: message.to_owned(),
                author: (author.0.to_owned(), author.1.to_owned()),
            },
        );
        sha
    }

    /// A commit by branch name or sha.
    pub fn resolve(&self, rev: &str) -> Option<&Commit> {
        let sha = self.branches.get(rev).map(String::as_str).unwrap_or(rev);
        self.commits.get(sha)
    }

    pub fn file(&self, rev: &str, path: &str) -> Option<String> {
        self.resolve(rev)?.tree.get(path).cloned()
    }

    /// The names directly below `dir` on `rev` (empty when there is no such directory).
    pub fn dir(&self, rev: &str, dir: &str) -> Vec<(String, bool)> {
        let Some(commit) = self.resolve(rev) else {
            return Vec::new();
        };
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let mut names: Vec<(String, bool)> = commit
            .tree
            .keys()
            .filter_map(|p| p.strip_prefix(&prefix))
            .map(|rest| match rest.split_once('/') {
                Some((d, _)) => (d.to_owned(), true),
                None => (rest.to_owned(), false),
            })
            .collect();
        names.dedup();
        names
    }

    /// Paths a commit adds or changes against its first parent, with `added`/`modified`.
    pub fn changes(&self, sha: &str) -> Vec<(String, &'static str)> {
        let Some(commit) = self.commits.get(sha) else {
            return Vec::new();
        };
        let parent = commit
            .parents
            .first()
            .and_then(|p| self.commits.get(p))
            .map(|c| c.tree.clone())
            .unwrap_or_default();
        let mut out = Vec::new();
        for (path, content) in &commit.tree {
            match parent.get(path) {
                None => out.push((path.clone(), "added")),
                Some(old) if old != content => out.push((path.clone(), "modified")),
                Some(_) => {}
            }
        }
        for path in parent.keys() {
            if !commit.tree.contains_key(path) {
                out.push((path.clone(), "removed"));
            }
        }
        out
    }

    /// Makes `branch` point at a new commit on `base` with `files` (as a forge user would).
    pub fn push_branch(&mut self, branch: &str, base: &str, files: &[(&str, &str)]) -> String {
        let parent = self.branches[base].clone();
        let mut tree = self.commits[&parent].tree.clone();
        for (p, c) in files {
            tree.insert((*p).to_owned(), (*c).to_owned());
        }
        let sha = self.add_commit(
            &[parent],
            tree,
            "pushed by hand",
            ("Ops", "ops@example.org"),
        );
        self.branches.insert(branch.to_owned(), sha.clone());
        sha
    }

    pub fn open_pull(&mut self, head: &str, base: &str, title: &str, body: &str) -> u64 {
        let number = self.pulls.iter().map(|p| p.number).max().unwrap_or(0) + 1;
        self.pulls.push(Pull {
            number,
            head: head.to_owned(),
            base: base.to_owned(),
            title: title.to_owned(),
            body: body.to_owned(),
            open: true,
            merged: false,
            merge_commit: None,
            squashed: false,
            comments: Vec::new(),
        });
        number
    }

    /// Pull request `number`, to change it as the forge would.
    pub fn pull_mut(&mut self, number: u64) -> Option<&mut Pull> {
        self.pulls.iter_mut().find(|p| p.number == number)
    }

    /// Merges pull request `number` as a person would on the forge: a merge commit on its
    /// base (parents: the base's head, then the branch's tip), or with `squash` one commit
    /// with the branch's files on the base's head. Returns the commit made.
    pub fn merge_pull(&mut self, number: u64, squash: bool) -> String {
        let at = self.pulls.iter().position(|p| p.number == number).unwrap();
        let (head, base) = (self.pulls[at].head.clone(), self.pulls[at].base.clone());
        let (base_tip, head_tip) = (self.branches[&base].clone(), self.branches[&head].clone());
        let mut tree = self.commits[&base_tip].tree.clone();
        tree.extend(self.commits[&head_tip].tree.clone());
        let (parents, message) = if squash {
            (
                vec![base_tip],
                format!("{} (#{number})", self.pulls[at].title),
            )
        } else {
            (
                vec![base_tip, head_tip],
                format!("Merge pull request #{number} from {head}"),
            )
        };
        let sha = self.add_commit(&parents, tree, &message, ("Ops", "ops@example.org"));
        self.branches.insert(base, sha.clone());
        let pull = &mut self.pulls[at];
        pull.open = false;
        pull.merged = true;
        pull.merge_commit = Some(sha.clone());
        pull.squashed = squash;
        sha
    }

    /// Every commit `sha` has in its history, itself included; `None` for an unknown commit.
    pub fn history(&self, sha: &str) -> Option<std::collections::BTreeSet<String>> {
        self.commits.get(sha)?;
        let mut seen = std::collections::BTreeSet::new();
        let mut queue = vec![sha.to_owned()];
        while let Some(at) = queue.pop() {
            if seen.insert(at.clone()) {
                queue.extend(self.commits[&at].parents.iter().cloned());
            }
        }
        Some(seen)
    }

    /// Whether `descendant` is `ancestor` or has it in its history; `None` when either is
    /// not a commit of the repository.
    pub fn contains(&self, ancestor: &str, descendant: &str) -> Option<bool> {
        self.commits.get(ancestor)?;
        Some(self.history(descendant)?.contains(ancestor))
    }

    /// The best common ancestor of two commits (one no other common ancestor descends from),
    /// as `git merge-base` finds it; `None` when either is unknown or they share no history.
    pub fn merge_base(&self, a: &str, b: &str) -> Option<String> {
        let (of_a, of_b) = (self.history(a)?, self.history(b)?);
        let common: Vec<&String> = of_a.intersection(&of_b).collect();
        common
            .iter()
            .find(|c| {
                !common
                    .iter()
                    .any(|other| other != *c && self.contains(c, other) == Some(true))
            })
            .map(|c| (*c).clone())
    }

    /// The commits in `head`'s history that are not in `base`'s (`git log base..head`),
    /// oldest first; empty when either is unknown.
    pub fn commits_between(&self, base: &str, head: &str) -> Vec<String> {
        let (Some(of_base), Some(of_head)) = (self.history(base), self.history(head)) else {
            return Vec::new();
        };
        let mut only: Vec<String> = of_head.difference(&of_base).cloned().collect();
        // Commit ids carry no order; a parent always comes before its children here.
        only.sort_by_key(|sha| self.history(sha).map_or(0, |h| h.len()));
        only
    }

    /// The open pull request from `head` into `base`, if any.
    pub fn open_pull_for(&self, head: &str, base: &str) -> Option<&Pull> {
        self.pulls
            .iter()
            .find(|p| p.open && p.head == head && p.base == base)
    }

    /// Commits on `branch` that are not on `base` (walking first parents).
    pub fn commits_ahead(&self, branch: &str, base: &str) -> usize {
        let stop = self.branches.get(base).cloned().unwrap_or_default();
        let mut count = 0;
        let mut at = self.branches.get(branch).cloned();
        while let Some(sha) = at {
            if sha == stop {
                break;
            }
            count += 1;
            at = self
                .commits
                .get(&sha)
                .and_then(|c| c.parents.first().cloned());
        }
        count
    }
}
