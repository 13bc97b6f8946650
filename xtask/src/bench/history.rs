//! The catalog history walk on a long monorepo: a bare repository whose `main` branch has
//! [`COMMITS`] commits, the synthetic catalog under `catalog/` changing in one of every
//! [`CATALOG_EVERY`] of them, served by a server on the local forge; then `GET
//! /api/v1/roadmap/burnup` timed cold (the first read walks the whole first-parent line and
//! loads the catalog of every commit that changed it), warm (the same tip, answered from the
//! history cache) and after one more catalog commit (the cache is extended by that commit).

use std::{
    fs,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail, ensure};
use git2::{
    FileMode, Oid, Repository, RepositoryInitOptions, Signature, Time, build::TreeUpdateBuilder,
};
use serde_json::{Value, json};

use super::{
    Ctx, SEED,
    client::Client,
    median,
    proc::{Memory, TICKS, process_ticks, undisturbed},
    server::{Server, Source},
};

/// Commits on the base branch: as many as the server walks back in one read (its history
/// module's limit), so the whole line is read and none of it is cut off.
pub(super) const COMMITS: usize = 20_000;
/// One commit in this many changes the catalog (one item goes from desired to declared); the
/// others change the monorepo's infrastructure files, as most commits of a devops monorepo
/// do. Every catalog change costs the cold walk one load of the whole catalog, so this sets
/// its cost: 200 loads in 20,000 commits.
pub(super) const CATALOG_EVERY: usize = 100;
/// The branch the server reads, and the catalog's folder on it (the server's defaults).
const BRANCH: &str = "refs/heads/main";
const CATALOG_DIR: &str = "catalog";
/// Hosts whose files the infrastructure commits edit in turn.
const HOSTS: usize = 16;
/// The first commit's time; one commit an hour after it (20,000 commits: 2.3 years).
const EPOCH: i64 = 1_700_000_000;

/// A monorepo written for the benchmark.
pub(super) struct Monorepo {
    pub(super) path: PathBuf,
    pub(super) commits: usize,
    /// Commits that changed the catalog, the first one (which adds it) included: the number
    /// of points of the burn-up.
    pub(super) catalog_commits: usize,
    /// Size of the repository's one pack file.
    pub(super) pack_bytes: u64,
    /// Time taken to write it.
    pub(super) write_s: f64,
    /// The tip of `main` as written.
    tip: Oid,
    /// One more catalog change, for the read after a new commit: the file and its contents.
    next_change: (String, String, String),
}

/// Writes a bare monorepo at `path` with `commits` commits on `main`, the synthetic catalog of
/// `n` items under `catalog/` in the first one and changed in one of every `catalog_every`.
/// The objects are written to memory and then to one pack, as a cloned repository holds them.
pub(super) fn write_monorepo(
    path: &Path,
    n: usize,
    commits: usize,
    catalog_every: usize,
) -> Result<Monorepo> {
    ensure!(commits > 0 && catalog_every > 0, "a monorepo needs commits");
    let started = Instant::now();
    let mut options = RepositoryInitOptions::new();
    options.bare(true).mkpath(true).initial_head("main");
    let repo = Repository::init_opts(path, &options)
        .with_context(|| format!("creating a repository at {}", path.display()))?;
    let odb = repo.odb()?;
    // Above the loose and pack backends, so that every object written goes to memory.
    let mempack = odb.add_new_mempack_backend(1_000)?;

    let mut catalog = Catalog::new(n);
    let mut tree = {
        let empty = repo.treebuilder(None)?.write()?;
        let mut update = TreeUpdateBuilder::new();
        update.upsert(
            "README.md",
            repo.blob(b"# devops\n\nThe team's infrastructure and its catalog.\n")?,
            FileMode::Blob,
        );
        for (rel, text) in &catalog.files {
            update.upsert(
                format!("{CATALOG_DIR}/{rel}"),
                repo.blob(text.as_bytes())?,
                FileMode::Blob,
            );
        }
        for h in 0..HOSTS {
            update.upsert(
                host_path(h),
                repo.blob(host_file(h, 0).as_bytes())?,
                FileMode::Blob,
            );
        }
        update.create_updated(&repo, &repo.find_tree(empty)?)?
    };
    let mut parent: Option<Oid> = None;
    let mut catalog_commits = 0;
    for i in 0..commits {
        let message;
        if i > 0 {
            let mut update = TreeUpdateBuilder::new();
            if i % catalog_every == 0 {
                let (rel, text, summary) = catalog.next_change()?;
                update.upsert(
                    format!("{CATALOG_DIR}/{rel}"),
                    repo.blob(text.as_bytes())?,
                    FileMode::Blob,
                );
                message = summary;
                catalog_commits += 1;
            } else {
                let h = i % HOSTS;
                update.upsert(
                    host_path(h),
                    repo.blob(host_file(h, i).as_bytes())?,
                    FileMode::Blob,
                );
                message = format!("Infra: {} revision {i}", host_name(h));
            }
            tree = update.create_updated(&repo, &repo.find_tree(tree)?)?;
        } else {
            message = "Inventory: the catalog of the platform".to_owned();
            catalog_commits += 1;
        }
        let sig = signature(i)?;
        let parents = parent.map(|id| repo.find_commit(id)).transpose()?;
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        parent = Some(repo.commit(None, &sig, &sig, &message, &repo.find_tree(tree)?, &parents)?);
    }
    let tip = parent.context("no commit written")?;

    let mut pack = git2::Buf::new();
    mempack.dump(&repo, &mut pack)?;
    let mut writer = odb.packwriter()?;
    std::io::Write::write_all(&mut writer, &pack)?;
    writer.commit()?;
    // The objects are in the pack now; the copies in memory can go.
    mempack.reset()?;
    repo.reference(BRANCH, tip, true, "the benchmark's monorepo")?;
    let next_change = catalog.next_change()?;
    Ok(Monorepo {
        path: path.to_owned(),
        commits,
        catalog_commits,
        pack_bytes: pack.len() as u64,
        write_s: started.elapsed().as_secs_f64(),
        tip,
        next_change,
    })
}

impl Monorepo {
    /// Puts `main` back where [`write_monorepo`] left it (a retried measurement starts from
    /// the same history).
    fn reset(&self) -> Result<()> {
        let repo = Repository::open_bare(&self.path)?;
        repo.reference(BRANCH, self.tip, true, "back to the benchmark's tip")?;
        Ok(())
    }

    /// Commits the prepared catalog change on top of `main`, as a merge of a catalog change
    /// would.
    fn commit_next_change(&self) -> Result<Oid> {
        let repo = Repository::open_bare(&self.path)?;
        let head = repo.find_reference(BRANCH)?.peel_to_commit()?;
        let (rel, text, message) = &self.next_change;
        let mut update = TreeUpdateBuilder::new();
        update.upsert(
            format!("{CATALOG_DIR}/{rel}"),
            repo.blob(text.as_bytes())?,
            FileMode::Blob,
        );
        let tree = update.create_updated(&repo, &head.tree()?)?;
        let sig = signature(self.commits)?;
        Ok(repo.commit(
            Some(BRANCH),
            &sig,
            &sig,
            message,
            &repo.find_tree(tree)?,
            &[&head],
        )?)
    }
}

/// The synthetic catalog as it changes commit after commit: an item goes from desired to
/// declared, taken in turn from each file so that successive changes touch different files;
/// once a file's desired items are all declared, they go back to desired one by one, and so
/// on, so that a small catalog can have as many changes as a large one.
struct Catalog {
    files: Vec<(String, String)>,
    /// Per file, the ids of the items that were desired in the synthetic catalog.
    desired: Vec<Vec<String>>,
    /// Per file, how many changes it has had.
    changes: Vec<usize>,
    next_file: usize,
}

impl Catalog {
    fn new(n: usize) -> Self {
        let files = mirante_domain::synthetic::synthetic(n, SEED);
        let desired: Vec<Vec<String>> = files
            .iter()
            .map(|(_, text)| {
                items(text)
                    .filter(|(_, block)| block.contains(DESIRED))
                    .map(|(id, _)| id.to_owned())
                    .collect()
            })
            .collect();
        Catalog {
            changes: vec![0; files.len()],
            files,
            desired,
            next_file: 0,
        }
    }

    /// The next change: the file changed, its new contents and the commit message.
    fn next_change(&mut self) -> Result<(String, String, String)> {
        for _ in 0..self.files.len() {
            let f = self.next_file;
            self.next_file = (self.next_file + 1) % self.files.len();
            let ids = &self.desired[f];
            if ids.is_empty() {
                continue;
            }
            let k = self.changes[f];
            self.changes[f] += 1;
            let id = &ids[k % ids.len()];
            let (from, to, now) = if (k / ids.len()).is_multiple_of(2) {
                (DESIRED, DECLARED, "declared")
            } else {
                (DECLARED, DESIRED, "desired again")
            };
            let (rel, text) = &mut self.files[f];
            let start = text
                .find(&format!("  - id: {id}\n"))
                .context("an item of the catalog went missing")?;
            let state = start
                + text[start..]
                    .find(from)
                    .context("an item of the catalog has no state")?;
            text.replace_range(state..state + from.len(), to);
            return Ok((rel.clone(), text.clone(), format!("Catalog: {id} is {now}")));
        }
        bail!("the synthetic catalog has no desired item to change")
    }
}

const DESIRED: &str = "\n    state: desired\n";
const DECLARED: &str = "\n    state: declared\n";

/// The items of a catalog file as (id, its YAML block), in order.
fn items(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.split("\n  - id: ").skip(1).filter_map(|block| {
        let id = block.lines().next()?.trim();
        Some((id, block))
    })
}

fn host_name(h: usize) -> String {
    let site = if h.is_multiple_of(2) { "franca" } else { "sp" };
    format!("pve-{site}-{:02}", h / 2 + 1)
}

fn host_path(h: usize) -> String {
    format!("infra/hosts/{}.yaml", host_name(h))
}

fn host_file(h: usize, revision: usize) -> String {
    format!(
        "host: {}\nrevision: {revision}\nkernel: 6.8.{}\n",
        host_name(h),
        revision % 40
    )
}

/// The author of commit `i`, one of a small team, an hour after the previous commit.
fn signature(i: usize) -> Result<Signature<'static>> {
    const TEAM: [(&str, &str); 4] = [
        ("Renata Albuquerque", "renata@example.org"),
        ("Tiago Moura", "tiago@example.org"),
        ("Ana Kaufmann", "ana@example.org"),
        ("Rui Prado", "rui@example.org"),
    ];
    let (name, email) = TEAM[i % TEAM.len()];
    Ok(Signature::new(
        name,
        email,
        &Time::new(EPOCH + i as i64 * 3_600, 0),
    )?)
}

/// The history reads measured for one catalog size.
pub(super) struct HistoryResult {
    pub(super) commits: usize,
    pub(super) catalog_commits: usize,
    pub(super) pack_bytes: u64,
    pub(super) write_s: f64,
    /// The first read after start-up: the whole walk.
    pub(super) cold_s: f64,
    /// The server's CPU time for it.
    pub(super) cold_server_cpu_s: f64,
    /// Reads at the same tip, from the cache.
    pub(super) warm_s: Vec<f64>,
    /// The read after one more catalog commit.
    pub(super) after_commit_s: f64,
    /// Size of the burn-up answer.
    pub(super) body_bytes: usize,
    pub(super) rss_ready: Memory,
    pub(super) rss_after: Memory,
    pub(super) others: f64,
    pub(super) attempts: usize,
}

impl HistoryResult {
    pub(super) fn to_json(&self) -> Value {
        json!({
            "commits": self.commits,
            "catalog_commits": self.catalog_commits,
            "pack_bytes": self.pack_bytes,
            "write_s": self.write_s,
            "burnup_cold_s": self.cold_s,
            "burnup_cold_server_cpu_s": self.cold_server_cpu_s,
            "burnup_warm_s": self.warm_s,
            "burnup_warm_median_s": median(&self.warm_s),
            "burnup_after_one_commit_s": self.after_commit_s,
            "burnup_body_bytes": self.body_bytes,
            "memory_ready": self.rss_ready.to_json(),
            "memory_after_history": self.rss_after.to_json(),
            "others_cpu_fraction": self.others,
            "attempts": self.attempts,
        })
    }
}

/// Writes the monorepo for `n` items and measures the history reads on a server started on it.
pub(super) fn measure(ctx: &Ctx<'_>, n: usize) -> Result<HistoryResult> {
    let path = ctx.scratch.join(format!("monorepo-{n}.git"));
    let repo = write_monorepo(&path, n, COMMITS, CATALOG_EVERY)?;
    eprintln!(
        "bench: wrote a monorepo of {} commits ({} change the catalog), a {:.1} MB pack, in {:.1} s",
        repo.commits,
        repo.catalog_commits,
        repo.pack_bytes as f64 / 1e6,
        repo.write_s
    );
    let mut tries = 0;
    let (reads, others, attempts) = undisturbed(ctx.plan.patience, "catalog history", || {
        tries += 1;
        repo.reset()?;
        let data = ctx.scratch.join(format!("data-{n}-history-{tries}"));
        let log = ctx.out_dir.join(format!("server-{n}-history.log"));
        let mut server = Server::start(ctx, Source::Monorepo(&repo.path), &data, &log)?;
        let addr = server.wait_ready()?;
        let rss_ready = Memory::of(server.pid())?;
        let client = Client::new(addr, Duration::from_secs(3_600));

        let cpu0 = process_ticks(server.pid()).context("the server is gone")?;
        let (cold_s, body) = burnup(&client, repo.catalog_commits)?;
        let cold_server_cpu_s =
            (process_ticks(server.pid()).context("the server is gone")? - cpu0) as f64 / TICKS;
        let warm_s = (0..ctx.plan.warm_history_reads)
            .map(|_| burnup(&client, repo.catalog_commits).map(|(s, _)| s))
            .collect::<Result<Vec<_>>>()?;
        repo.commit_next_change()?;
        let (after_commit_s, _) = burnup(&client, repo.catalog_commits + 1)?;
        let rss_after = Memory::of(server.pid())?;
        server.stop();
        eprintln!(
            "bench: history of {n} items: cold {:.3} s (server CPU {cold_server_cpu_s:.2} s), \
             warm {:.4} s, after one more commit {:.3} s",
            cold_s,
            median(&warm_s),
            after_commit_s
        );
        Ok((
            cold_s,
            cold_server_cpu_s,
            warm_s,
            after_commit_s,
            body,
            rss_ready,
            rss_after,
        ))
    })?;
    let (cold_s, cold_server_cpu_s, warm_s, after_commit_s, body_bytes, rss_ready, rss_after) =
        reads;
    fs::remove_dir_all(&path).ok();
    Ok(HistoryResult {
        commits: repo.commits,
        catalog_commits: repo.catalog_commits,
        pack_bytes: repo.pack_bytes,
        write_s: repo.write_s,
        cold_s,
        cold_server_cpu_s,
        warm_s,
        after_commit_s,
        body_bytes,
        rss_ready,
        rss_after,
        others,
        attempts,
    })
}

/// Times one `GET /api/v1/roadmap/burnup` and checks that it has a point for each of the
/// `points` catalog commits, nothing skipped and nothing cut off; returns the time and the
/// body's size.
fn burnup(client: &Client, points: usize) -> Result<(f64, usize)> {
    let started = Instant::now();
    let reply = client.get("/api/v1/roadmap/burnup", &[])?;
    let took = started.elapsed().as_secs_f64();
    if reply.status != 200 {
        bail!(
            "the burn-up answered {}: {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        );
    }
    let v: Value = serde_json::from_slice(&reply.body).context("the burn-up is not JSON")?;
    let series = v["series"].as_array().map_or(0, Vec::len);
    let skipped = v["skipped"].as_array().map_or(0, Vec::len);
    if series != points || skipped != 0 || v["truncated"] != Value::Bool(false) {
        bail!(
            "the burn-up has {series} points ({points} expected), {skipped} skipped commits, \
             truncated {}",
            v["truncated"]
        );
    }
    Ok((took, reply.body.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The catalog folder's tree at each commit of `main`'s first-parent line, newest first.
    fn catalog_trees(path: &Path) -> Vec<Oid> {
        let repo = Repository::open_bare(path).unwrap();
        let mut commit = Some(
            repo.find_reference(BRANCH)
                .unwrap()
                .peel_to_commit()
                .unwrap(),
        );
        let mut trees = Vec::new();
        while let Some(c) = commit {
            trees.push(
                c.tree()
                    .unwrap()
                    .get_path(Path::new(CATALOG_DIR))
                    .unwrap()
                    .id(),
            );
            commit = c.parents().next();
        }
        trees
    }

    #[test]
    fn the_monorepo_has_the_commits_asked_and_its_catalog_changes_in_one_of_every_k() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("monorepo.git");

        let repo = write_monorepo(&path, 1_000, 95, 10).unwrap();

        let trees = catalog_trees(&path);
        let changes = trees.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(trees.len(), 95);
        assert_eq!(changes, 9, "commits 10, 20 … 90 change the catalog");
        assert_eq!(repo.catalog_commits, 10, "the first commit adds it");
        let packs = fs::read_dir(path.join("objects/pack")).unwrap().count();
        assert_eq!(packs, 2, "one pack and its index");
    }

    #[test]
    fn a_small_catalog_declares_its_desired_items_and_then_takes_them_back() {
        let mut catalog = Catalog::new(20);
        let desired = catalog.desired.iter().map(Vec::len).sum::<usize>();

        let messages: Vec<String> = (0..desired + 1)
            .map(|_| catalog.next_change().unwrap().2)
            .collect();

        assert!(desired > 0);
        assert!(
            messages[..desired]
                .iter()
                .all(|m| m.ends_with("is declared"))
        );
        let first = catalog.desired.iter().find_map(|ids| ids.first()).unwrap();
        assert_eq!(
            messages[desired],
            format!("Catalog: {first} is desired again")
        );
    }

    #[test]
    fn every_catalog_change_declares_one_more_item_and_the_catalog_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("monorepo.git");
        let repo = write_monorepo(&path, 1_000, 30, 10).unwrap();

        repo.commit_next_change().unwrap();

        let git = Repository::open_bare(&path).unwrap();
        let tip = git
            .find_reference(BRANCH)
            .unwrap()
            .peel_to_commit()
            .unwrap();
        let mut files = Vec::new();
        let catalog = tip
            .tree()
            .unwrap()
            .get_path(Path::new(CATALOG_DIR))
            .unwrap();
        let catalog = git.find_tree(catalog.id()).unwrap();
        catalog
            .walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
                if let Ok(blob) = entry.to_object(&git).and_then(|o| o.peel_to_blob()) {
                    let name = format!("{parent}{}", entry.name().unwrap());
                    files.push((name, blob.content().to_vec()));
                }
                git2::TreeWalkResult::Ok
            })
            .unwrap();
        let loaded = mirante_domain::load::load_bytes(files).unwrap();
        let first = mirante_domain::load::load_bytes(
            mirante_domain::synthetic::synthetic(1_000, SEED)
                .into_iter()
                .map(|(p, t)| (p, t.into_bytes()))
                .collect(),
        )
        .unwrap();
        let declared = |c: &mirante_domain::Catalog| {
            c.items
                .iter()
                .filter(|i| i.state == mirante_domain::State::Declared)
                .count()
        };
        assert_eq!(
            declared(&loaded.catalog),
            declared(&first.catalog) + 3,
            "commits 10 and 20 of 30, and the one committed after"
        );
    }
}
