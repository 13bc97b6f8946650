//! The short history the demo monorepo starts with, so that the history views have a story to
//! tell on first start: over about four months the infra team inventories the platform,
//! then storage, network, ingress, Kubernetes, GitOps and the first GPU node move from desired
//! to declared to validated.
//!
//! Earlier revisions are derived from the files of [`super::demo_monorepo`]: the table below
//! says which state an item had at which step, applied by rewriting the `state:` line of that
//! item in the YAML text, and which folders arrived later. The last step is the demo
//! monorepo itself, byte for byte. Files outside `catalog/` are all in the first commit, so
//! the history follows whatever files the demo monorepo holds.

use mirante_domain::State;

use mirante_domain::monorepo::FileChange;

use crate::adapters::git::SeedCommit;

/// Who commits in the demo.
const TEAM: [(&str, &str); 4] = [
    ("Renata Albuquerque", "renata.albuquerque@infra.example.org"),
    ("Thiago Moreira", "thiago.moreira@infra.example.org"),
    ("Camila Nogueira", "camila.nogueira@infra.example.org"),
    ("Bruno Tavares", "bruno.tavares@infra.example.org"),
];

/// One commit of the demo history.
struct Step {
    /// Days before the monorepo is created.
    days_ago: i64,
    /// Hour of the day (UTC) and minute.
    at: (i64, i64),
    /// Index into [`TEAM`].
    author: usize,
    /// The commit message.
    message: &'static str,
}

const STEPS: [Step; 8] = [
    Step {
        days_ago: 124,
        at: (13, 12),
        author: 0,
        message: "Catalog: first inventory of layers 0 to 8\n\n\
                  Items as the architecture document describes them. Nothing is validated \
                  until it has evidence.",
    },
    Step {
        days_ago: 109,
        at: (17, 40),
        author: 1,
        message: "Storage: Proxmox clusters and LINSTOR SP SSD validated in production\n\n\
                  The controller VIP survived the node-loss drill. LINSTOR Franca is now in \
                  Ansible (declared).",
    },
    Step {
        days_ago: 93,
        at: (14, 5),
        author: 2,
        message: "Network: VyOS routers at SP, Franca and the backup router validated",
    },
    Step {
        days_ago: 80,
        at: (11, 27),
        author: 0,
        message: "Capabilities: TLS, observability and supply chain join the catalog\n\n\
                  Next to secrets, IAM and IaC CI/CD; every new item starts as desired.",
    },
    Step {
        days_ago: 64,
        at: (16, 51),
        author: 3,
        message: "Ingress and K3s declared on both sites; LINSTOR Franca validated\n\n\
                  Traefik, K3s Franca and Argo CD Franca are in the monorepo; the SP NVMe \
                  pool is declared, pending the pve-ippri-34 interface fix.",
    },
    Step {
        days_ago: 47,
        at: (19, 18),
        author: 1,
        message: "K3s Franca with Cilium validated; Traefik in production on both sites\n\n\
                  The SP Traefik HA pair and gpu-sp-01 are declared.",
    },
    Step {
        days_ago: 29,
        at: (12, 33),
        author: 3,
        message: "GitOps: Argo CD Franca validated, Open edX deployed from it\n\n\
                  OpenObserve is declared as a workload and as the observability backend.",
    },
    Step {
        days_ago: 9,
        at: (15, 2),
        author: 2,
        message: "Workloads: gpu-sp-01 validated with the first research workload",
    },
];

/// States an item had before the demo catalog's, each from a step on.
type Earlier = &'static [(usize, State)];

/// Item id, the states it had before the demo catalog's (each from a step on, in step order),
/// and the step from which it has the demo catalog's state. Items not listed have the demo
/// catalog's state throughout.
const STATES: &[(&str, Earlier, usize)] = &[
    ("proxmox-clusters", &[(0, State::Declared)], 1),
    ("linstor-sp-ssd", &[(0, State::Declared)], 1),
    (
        "linstor-franca",
        &[(0, State::Desired), (1, State::Declared)],
        4,
    ),
    ("linstor-sp-nvme", &[(0, State::Desired)], 4),
    ("vyos-sp", &[(0, State::Declared)], 2),
    ("vyos-franca", &[(0, State::Declared)], 2),
    ("vyos-backup", &[(0, State::Declared)], 2),
    (
        "traefik-sp",
        &[(0, State::Desired), (4, State::Declared)],
        5,
    ),
    (
        "traefik-franca",
        &[(0, State::Desired), (4, State::Declared)],
        5,
    ),
    ("traefik-sp-ha", &[(0, State::Desired)], 5),
    (
        "k3s-franca",
        &[(0, State::Desired), (4, State::Declared)],
        5,
    ),
    (
        "argocd-franca",
        &[(0, State::Desired), (4, State::Declared)],
        6,
    ),
    ("tutor-openedx", &[(0, State::Desired)], 6),
    ("openobserve", &[(0, State::Desired)], 6),
    ("obs-openobserve", &[(3, State::Desired)], 6),
    ("gpu-sp-01", &[(0, State::Desired), (5, State::Declared)], 7),
];

/// Files (or folders, ending with `/`) that arrive at a step, absent before it.
const ADDED_AT: &[(&str, usize)] = &[
    ("catalog/capabilities/02-tls.yaml", 3),
    ("catalog/capabilities/04-observability.yaml", 3),
    ("catalog/capabilities/06-supply-chain.yaml", 3),
];

/// The commits of the demo monorepo ending with `files` exactly, dated back from `now`
/// (seconds since the epoch). An error names the table entry that no longer matches the
/// demo catalog.
pub(crate) fn commits(files: &[FileChange], now: i64) -> Result<Vec<SeedCommit>, String> {
    let today = now.div_euclid(86_400) * 86_400;
    let mut commits = Vec::with_capacity(STEPS.len());
    for (n, step) in STEPS.iter().enumerate() {
        let (name, email) = TEAM[step.author];
        commits.push(SeedCommit {
            message: step.message.to_owned(),
            author: Some((name.to_owned(), email.to_owned())),
            time: Some(today - step.days_ago * 86_400 + step.at.0 * 3600 + step.at.1 * 60),
            files: files_at(files, n)?,
        });
    }
    Ok(commits)
}

/// The files present at step `n`, with the states items had then.
fn files_at(files: &[FileChange], n: usize) -> Result<Vec<FileChange>, String> {
    let mut out = Vec::with_capacity(files.len());
    let mut found = std::collections::BTreeSet::new();
    for file in files {
        if ADDED_AT
            .iter()
            .any(|(prefix, at)| n < *at && file.path.starts_with(prefix))
        {
            continue;
        }
        let mut content = file.content.clone();
        if file.path.starts_with("catalog/") {
            for (id, state) in earlier_states(n) {
                if let Some(edited) = with_state(&content, id, state) {
                    content = edited;
                    found.insert(id);
                }
            }
        }
        out.push(FileChange {
            path: file.path.clone(),
            content,
        });
    }
    // Every table entry must have found its item.
    if let Some((id, _)) = earlier_states(n).find(|(id, _)| !found.contains(id)) {
        return Err(format!(
            "the demo history gives item `{id}` a state at step {n}, but the demo catalog \
             has no such item there"
        ));
    }
    Ok(out)
}

/// The items whose state at step `n` is not the demo catalog's, with that state.
fn earlier_states(n: usize) -> impl Iterator<Item = (&'static str, State)> {
    STATES.iter().filter_map(move |(id, earlier, final_at)| {
        (n < *final_at)
            .then(|| earlier.iter().rev().find(|(from, _)| *from <= n))
            .flatten()
            .map(|(_, state)| (*id, *state))
    })
}

/// `yaml` with the `state:` line of item `id` set to `state`; `None` when the file has no
/// such item (or the item no `state:` line).
fn with_state(yaml: &str, id: &str, state: State) -> Option<String> {
    let start = format!("  - id: {id}");
    let mut in_item = false;
    let mut done = false;
    let mut out = String::with_capacity(yaml.len());
    for line in yaml.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == start {
            in_item = true;
        } else if in_item
            && (bare.starts_with("  - ") || !bare.starts_with(' ') && !bare.is_empty())
        {
            in_item = false;
        }
        if in_item && !done && bare.starts_with("    state: ") {
            out.push_str("    state: ");
            out.push_str(state.as_str());
            out.push_str(&line[bare.len()..]);
            done = true;
        } else {
            out.push_str(line);
        }
    }
    done.then_some(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use git2::Repository;

    use super::*;
    use crate::{
        adapters::git::{self, history::HistoryCache},
        app::catalog::CatalogSource,
        app::selfservice::demo_monorepo,
    };

    const NOW: i64 = 1_796_000_000;

    fn created() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("monorepo");
        let commits = commits(&demo_monorepo(), NOW).unwrap();
        assert!(git::init_monorepo_with_history(&path, "main", &commits).unwrap());
        (dir, path)
    }

    #[test]
    fn the_last_commit_holds_exactly_the_demo_monorepo() {
        let (_dir, path) = created();

        let (_, files) = git::read_dir_at(&path, "main", "").unwrap();

        let mut expected: Vec<(String, Vec<u8>)> = demo_monorepo()
            .into_iter()
            .map(|f| (f.path, f.content.into_bytes()))
            .collect();
        expected.sort();
        assert_eq!(files, expected);
    }

    #[test]
    fn every_commit_is_back_dated_in_order_and_its_catalog_loads() {
        let (_dir, path) = created();
        let repo = Repository::open(&path).unwrap();
        let mut walk = repo.revwalk().unwrap();
        walk.push_ref("refs/heads/main").unwrap();

        let ids: Vec<git2::Oid> = walk.map(Result::unwrap).collect();

        assert_eq!(ids.len(), STEPS.len());
        let mut times = Vec::new();
        for id in &ids {
            let commit = repo.find_commit(*id).unwrap();
            times.push(commit.time().seconds());
            let (_, files) = git::read_dir_at(&path, &id.to_string(), "catalog").unwrap();
            let files = files
                .into_iter()
                .filter(|(p, _)| mirante_domain::load::is_catalog_path(p))
                .collect();
            if let Err(d) = mirante_domain::load::load_bytes(files) {
                panic!("{}: {d}", commit.summary().unwrap());
            }
        }
        assert!(
            times.windows(2).all(|w| w[0] > w[1]),
            "newest first: {times:?}"
        );
        assert!(times[0] < NOW && times[ids.len() - 1] > NOW - 130 * 86_400);
    }

    #[test]
    fn items_progress_from_desired_to_validated_through_the_demo_history() {
        let (_dir, path) = created();
        let cache = HistoryCache::new(CatalogSource::Git {
            repo: path,
            branch: "main".to_owned(),
            dir: "catalog".to_owned(),
        });

        let h = cache.get().unwrap();

        let story = |id: &str| -> Vec<(Option<State>, Option<State>)> {
            h.item(id).iter().map(|c| (c.from, c.to)).collect()
        };
        assert_eq!(
            story("linstor-franca"),
            [
                (None, Some(State::Desired)),
                (Some(State::Desired), Some(State::Declared)),
                (Some(State::Declared), Some(State::Validated)),
            ]
        );
        assert_eq!(
            story("obs-openobserve").first(),
            Some(&(None, Some(State::Desired)))
        );
        assert!(h.skipped.is_empty(), "{:?}", h.skipped);
        let first = h.burnup.first().unwrap();
        let last = h.burnup.last().unwrap();
        assert!(first.validated < last.validated);
        assert!(first.total() < last.total(), "capabilities arrive later");
        let authors: BTreeMap<&str, usize> =
            h.changes
                .values()
                .flatten()
                .fold(BTreeMap::new(), |mut m, c| {
                    *m.entry(c.revision.author.as_str()).or_default() += 1;
                    m
                });
        assert_eq!(authors.len(), TEAM.len(), "{authors:?}");
    }

    #[test]
    fn only_the_state_line_of_the_named_item_changes() {
        let yaml = "items:\n  - id: a\n    name: A\n    state: validated\n\n  - id: ab\n    state: validated\n";

        let edited = with_state(yaml, "a", State::Desired).unwrap();

        assert_eq!(
            edited,
            "items:\n  - id: a\n    name: A\n    state: desired\n\n  - id: ab\n    state: validated\n"
        );
        assert_eq!(with_state(yaml, "c", State::Desired), None);
    }
}
