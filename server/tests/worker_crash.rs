//! Crash and resume: the real `mirante` binary dies right after creating a request's branch
//! (the `after-branch` crash point, compiled in only with the `failpoints` feature), is
//! started again under the same worker identity, takes its job back without waiting for the
//! lease, and finishes the request with exactly one branch and one pull request.
//! Runs on SQLite and on a PostgreSQL database made for the test.

mod support;

use std::{
    path::Path,
    process::{Child, Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

use chrono::Utc;
use mirante::adapters::{
    db::{
        Db, NewUser,
        requests::{Author, NewRequest},
    },
    forge::FileChange,
};
use mirante_domain::request::RequestState;
use secrecy::SecretString;
use tempfile::TempDir;

/// Starts `mirante serve` on a free port with the test's data directory and database.
fn start(data: &Path, database_url: &str, failpoint: Option<&str>) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mirante"));
    cmd.arg("serve")
        .current_dir(data)
        .env_clear()
        .env("MIRANTE_BIND", "127.0.0.1:0")
        .env("MIRANTE_DATA_DIR", data)
        .env("DATABASE_URL", database_url)
        .env(
            "MIRANTE_SESSION_KEY",
            "crash-test-session-key-0123456789abcdef",
        )
        // A lease far longer than the test may wait: the restart, under the same identity,
        // takes its job back at start-up instead of waiting for the lease to run out.
        .env("MIRANTE_WORKER_LEASE_SECS", "600")
        .env("MIRANTE_WORKER_ID", "replica-1")
        .env("MIRANTE_FORGE_POLL_SECS", "0")
        .env("MIRANTE_CATALOG_REFRESH_SECS", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    if let Some(name) = failpoint {
        cmd.env("MIRANTE_FAILPOINT", name);
    }
    cmd.spawn().expect("cannot start the mirante binary")
}

fn wait_exit(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("mirante did not reach the crash point within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

async fn seed_request(db: &Db) -> (i64, Vec<FileChange>) {
    let user_id = db
        .upsert_user(&NewUser {
            issuer: "dev",
            subject: "rui",
            username: "rui",
            name: "Rui Researcher",
            email: Some("rui@example.org"),
            groups: &[],
            at: Utc::now(),
        })
        .await
        .unwrap();
    let files = vec![
        FileChange {
            path: "workspaces/rui-nlp/namespace.yaml".into(),
            content: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: rui-nlp\n".into(),
        },
        FileChange {
            path: "workspaces/rui-nlp/quota.yaml".into(),
            content: "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: gpu\n".into(),
        },
    ];
    let request = db
        .insert_request(&NewRequest {
            template: "gpu-workspace",
            template_title: "GPU workspace",
            values: &serde_json::json!({"name": "rui-nlp", "gpus": 1}),
            files: &files,
            target: "workspaces/rui-nlp",
            slug: "gpu-workspace-rui-nlp",
            author: &Author {
                user_id,
                username: "rui".into(),
                name: "Rui Researcher".into(),
                email: Some("rui@example.org".into()),
            },
            needs_approval: false,
            at: Utc::now(),
            idempotency: None,
        })
        .await
        .unwrap();
    (request.id, files)
}

fn branches(repo: &git2::Repository) -> Vec<String> {
    let mut names: Vec<String> = repo
        .branches(Some(git2::BranchType::Local))
        .unwrap()
        .map(|b| b.unwrap().0.name().unwrap().unwrap().to_owned())
        .filter(|n| n.starts_with("mirante/"))
        .collect();
    names.sort();
    names
}

async fn crash_between_branch_and_pull_request_then_resume(database_url: &str, data: &TempDir) {
    let db = Db::connect(&SecretString::from(database_url.to_owned()), 2)
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let (id, files) = seed_request(&db).await;

    // First run: dies right after the branch exists.
    let mut first = start(data.path(), database_url, Some("after-branch"));
    let status = wait_exit(&mut first, Duration::from_secs(120));

    assert_eq!(
        status.code(),
        Some(86),
        "the crash point did not fire: {status}"
    );
    let repo = git2::Repository::open(data.path().join("monorepo")).unwrap();
    let branch = format!("mirante/{id}-gpu-workspace-rui-nlp");
    assert_eq!(branches(&repo), std::slice::from_ref(&branch));
    let crashed = db.request(id).await.unwrap().unwrap();
    assert_eq!(crashed.state, RequestState::Proposing);
    assert_eq!(crashed.pr_number, None, "no pull request before the crash");

    // Second run: takes its job back at once, reuses the branch.
    let mut second = start(data.path(), database_url, None);
    let deadline = Instant::now() + Duration::from_secs(120);
    // The worker moves the request to proposed, then finishes its job: wait for both before
    // stopping the second run, or the stop may fall between the two.
    let resumed = loop {
        let r = db.request(id).await.unwrap().unwrap();
        let job_done = db
            .job_of_request(id)
            .await
            .unwrap()
            .is_some_and(|j| j.done_at.is_some());
        if r.state == RequestState::Proposed && job_done {
            break r;
        }
        if let Some(status) = second.try_wait().unwrap() {
            panic!("the restarted server stopped: {status}");
        }
        assert!(Instant::now() < deadline, "not resumed: {r:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    second.kill().unwrap();
    second.wait().unwrap();

    assert_eq!(
        branches(&repo),
        std::slice::from_ref(&branch),
        "exactly one branch"
    );
    let pr = db
        .local_pull_request_by_branch(&branch)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(resumed.pr_number, Some(pr.local_pull_request_id));
    assert_eq!(
        db.local_pull_request(pr.local_pull_request_id + 1)
            .await
            .unwrap(),
        None
    );
    // The branch is one commit on main with exactly the request's files.
    let tip = repo
        .find_reference(&format!("refs/heads/{branch}"))
        .unwrap()
        .peel_to_commit()
        .unwrap();
    let main = repo
        .find_reference("refs/heads/main")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert_eq!(tip.parent_ids().collect::<Vec<_>>(), [main.id()]);
    let diff = repo
        .diff_tree_to_tree(
            Some(&main.tree().unwrap()),
            Some(&tip.tree().unwrap()),
            None,
        )
        .unwrap();
    let changed: Vec<String> = diff
        .deltas()
        .map(|d| d.new_file().path().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        changed,
        files.iter().map(|f| f.path.clone()).collect::<Vec<_>>()
    );
    for f in &files {
        let entry = tip.tree().unwrap().get_path(Path::new(&f.path)).unwrap();
        let blob = repo.find_blob(entry.id()).unwrap();
        assert_eq!(blob.content(), f.content.as_bytes());
    }
    let timeline: Vec<_> = db
        .transitions(id)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.to)
        .collect();
    assert_eq!(
        timeline,
        [
            RequestState::Submitted,
            RequestState::Proposing,
            RequestState::Proposed
        ]
    );
    let job = db.job_of_request(id).await.unwrap().unwrap();
    assert!(job.done_at.is_some());
    assert_eq!(job.attempts, 2, "claimed once by each run");
    db.close().await;
}

#[tokio::test]
async fn a_worker_killed_between_branch_and_pull_request_resumes_with_one_of_each_on_sqlite() {
    let data = TempDir::new().unwrap();
    let url = format!("sqlite://{}", data.path().join("mirante.db").display());
    crash_between_branch_and_pull_request_then_resume(&url, &data).await;
}

#[tokio::test]
async fn a_worker_killed_between_branch_and_pull_request_resumes_with_one_of_each_on_postgres() {
    let database = support::TestDatabase::create("mirante_crash").await;
    let data = TempDir::new().unwrap();

    crash_between_branch_and_pull_request_then_resume(&database.url, &data).await;

    database.drop_now().await;
}
