//! A synthetic catalog of any size, in the same YAML format as the real one, for benchmarks
//! and load tests.
//!
//! The output is deterministic for a given `(n_items, seed)` and always valid: every reference
//! names something that exists and dependencies only point at lower-numbered items, so they
//! cannot form a cycle. It is also free of lint errors, as a maintained catalog is: a validated
//! item depends only on validated items, so `mirante catalog check` exits 0 on it.

use std::fmt::Write as _;

/// Items written per file, so large catalogs exercise the multi-file merge as real ones do.
pub const ITEMS_PER_FILE: usize = 500;

/// Writing to a `String` cannot fail; this keeps the generator free of ignored results.
macro_rules! emit {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

const SITES: [&str; 2] = ["franca", "sp"];
const HOSTS_PER_SITE: usize = 8;
/// (id, kind, number, parent)
const LAYERS: [(&str, &str, &str, Option<&str>); 17] = [
    ("l0", "layer", "0", None),
    ("l1", "layer", "1", None),
    ("l2", "layer", "2", None),
    ("l3", "layer", "3", None),
    ("l4", "layer", "4", None),
    ("l5", "layer", "5", None),
    ("l6", "layer", "6", None),
    ("l7", "layer", "7", None),
    ("l8", "layer", "8", None),
    ("l8a", "layer", "8a", Some("l8")),
    ("l8b", "layer", "8b", Some("l8")),
    ("l8c", "layer", "8c", Some("l8")),
    ("secrets", "capability", "", None),
    ("tls", "capability", "", None),
    ("identity", "capability", "", None),
    ("observability", "capability", "", None),
    ("backup", "capability", "", None),
];
const PHASES: [&str; 3] = ["mvp", "phase-2", "phase-3"];
const TAGS: [&str; 6] = ["storage", "network", "gpu", "k8s", "ha", "security"];
const PRIORITIES: [&str; 4] = ["critical", "mvp", "later", "normal"];

/// Generates a valid catalog with `n_items` items as `(relative path, YAML)` pairs, in path
/// order: one file with the platform, sites, hosts, layers and phases; items in files of
/// [`ITEMS_PER_FILE`]; one file of decisions and one of tasks.
pub fn synthetic(n_items: usize, seed: u64) -> Vec<(String, String)> {
    let mut rng = Rng(seed);
    let n_decisions = (n_items / 50).max(3);
    let n_tasks = (n_items / 20).max(3);
    let mut files = vec![("00-platform.yaml".to_owned(), base())];
    files.push((
        "decisions.yaml".to_owned(),
        decisions(&mut rng, n_decisions, n_items),
    ));
    let chunks = n_items.div_ceil(ITEMS_PER_FILE);
    // Positions of the validated items written so far.
    let mut validated = Vec::new();
    for c in 0..chunks {
        let range = c * ITEMS_PER_FILE..((c + 1) * ITEMS_PER_FILE).min(n_items);
        let mut out = String::from("items:\n");
        for i in range {
            item(&mut out, &mut rng, i, n_decisions, &mut validated);
        }
        files.push((format!("items/items-{c:05}.yaml"), out));
    }
    files.push(("tasks.yaml".to_owned(), tasks(&mut rng, n_tasks, n_items)));
    files
}

/// SplitMix64: tiny, fast and good enough to spread values; not for anything secret.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `pct`%.
    fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
}

/// A double-quoted YAML scalar: safe for any text, whatever characters it holds.
fn q(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn host_id(site: &str, n: usize) -> String {
    format!("pve-{site}-{:02}", n + 1)
}

fn base() -> String {
    let mut out = String::new();
    emit!(out, "platform:");
    emit!(out, "  name: {}", q("Synthetic platform"));
    emit!(
        out,
        "  description: {}",
        q("A generated catalog for benchmarks: not real.")
    );
    emit!(out, "  principles:");
    emit!(out, "    - title: {}", q("Layer N runs on a stable N-1"));
    emit!(
        out,
        "      text: {}",
        q("Nothing is operated on an unstable base.")
    );
    emit!(out, "sites:");
    for s in SITES {
        emit!(out, "  - id: {s}");
        emit!(out, "    name: {}", q(&format!("Site {s}")));
        emit!(out, "    location: {}", q("Somewhere, BR"));
        emit!(out, "    host_groups:");
        emit!(out, "      - id: pve-{s}");
        emit!(out, "        name: {}", q(&format!("Proxmox {s}")));
        emit!(out, "        pattern: {}", q(&format!("pve-{s}-*")));
        emit!(out, "        count: {HOSTS_PER_SITE}");
    }
    emit!(out, "hosts:");
    for s in SITES {
        for n in 0..HOSTS_PER_SITE {
            emit!(out, "  - id: {}", host_id(s, n));
            emit!(out, "    site: {s}");
            emit!(out, "    group: pve-{s}");
            emit!(out, "    tier: {}", q(if n < 2 { "1" } else { "2A" }));
            emit!(out, "    roles: [{}]", q("hypervisor"));
            if n == 0 {
                emit!(out, "    gpus:");
                emit!(out, "      - model: {}", q("NVIDIA RTX A5000"));
                emit!(out, "        count: 2");
            }
        }
    }
    emit!(out, "layers:");
    for (id, kind, number, parent) in LAYERS {
        emit!(out, "  - id: {id}");
        emit!(out, "    kind: {kind}");
        if !number.is_empty() {
            emit!(out, "    number: {}", q(number));
        }
        emit!(out, "    name: {}", q(&format!("Layer {id}")));
        if let Some(p) = parent {
            emit!(out, "    parent: {p}");
        }
        emit!(out, "    role: {}", q("Generated: what this layer does."));
        emit!(
            out,
            "    components: [{}, {}]",
            q("component a"),
            q("component b")
        );
    }
    emit!(out, "phases:");
    for (k, p) in PHASES.iter().enumerate() {
        emit!(out, "  - id: {p}");
        emit!(out, "    name: {}", q(&format!("Phase {}", k + 1)));
        emit!(out, "    order: {}", k + 1);
    }
    out
}

fn decisions(rng: &mut Rng, n: usize, n_items: usize) -> String {
    let mut out = String::from("decisions:\n");
    for d in 0..n {
        emit!(out, "  - id: decision-{d:04}");
        emit!(out, "    topic: {}", q(&format!("Topic {d}")));
        emit!(
            out,
            "    decision: {}",
            q("Do the simple thing: one instance per site.")
        );
        emit!(out, "    rejected: {}", q("A central instance"));
        emit!(out, "    adrs: [{}]", q(&format!("ADR-{:03}", d + 1)));
        emit!(out, "    layers: [{}]", LAYERS[rng.below(LAYERS.len())].0);
        if n_items > 0 {
            emit!(out, "    items: [item-{:05}]", rng.below(n_items));
        }
    }
    out
}

fn item(out: &mut String, rng: &mut Rng, i: usize, n_decisions: usize, validated: &mut Vec<usize>) {
    let (layer, layer_kind, _, parent) = LAYERS[rng.below(LAYERS.len())];
    let kind = if layer_kind == "capability" {
        "capability"
    } else if layer == "l8" || parent == Some("l8") {
        "workload"
    } else {
        "component"
    };
    emit!(out, "  - id: item-{i:05}");
    emit!(out, "    name: {}", q(&format!("Item {i}")));
    emit!(out, "    kind: {kind}");
    emit!(out, "    layer: {layer}");
    let sites: &[&str] = match rng.below(4) {
        0 => &[],
        1 => &SITES[..1],
        2 => &SITES[1..],
        _ => &SITES,
    };
    if !sites.is_empty() {
        emit!(out, "    sites: [{}]", sites.join(", "));
        if rng.chance(30) {
            let s = sites[rng.below(sites.len())];
            emit!(
                out,
                "    hosts: [{}]",
                host_id(s, rng.below(HOSTS_PER_SITE))
            );
        }
    }
    let state = ["validated", "declared", "desired"][rng.below(3)];
    emit!(out, "    state: {state}");
    let qualifier = match state {
        "validated" => [None, None, Some("partial")][rng.below(3)],
        "declared" => [None, Some("partial"), Some("in_progress")][rng.below(3)],
        _ => [
            None,
            Some("in_progress"),
            Some("deferred"),
            Some("rejected"),
            Some("future"),
        ][rng.below(5)],
    };
    if let Some(qf) = qualifier {
        emit!(out, "    qualifier: {qf}");
    }
    emit!(
        out,
        "    notes: {}",
        q(&format!(
            "Generated item {i}: notes with \"quotes\", colons: and # hashes."
        ))
    );
    match state {
        "validated" => {
            emit!(out, "    evidence:");
            emit!(out, "      - kind: reference");
            emit!(out, "        text: {}", q(&format!("Runbook entry {i}")));
            emit!(
                out,
                "        url: {}",
                q(&format!("https://example.org/pr/{i}"))
            );
            if rng.chance(50) {
                emit!(out, "      - kind: attestation");
                emit!(out, "        by: ana");
                emit!(out, "        date: {}", q("2026-10-01"));
                emit!(out, "        what: {}", q("restored a VM from backup"));
            }
            if rng.chance(30) {
                emit!(out, "      - kind: probe");
                emit!(
                    out,
                    "        url: {}",
                    q(&format!("https://svc-{i}.example.org/healthz"))
                );
            }
            if kind == "workload" && rng.chance(50) {
                emit!(out, "      - kind: argocd");
                emit!(out, "        app: item-{i:05}");
                emit!(out, "        instance: {}", SITES[rng.below(SITES.len())]);
            }
        }
        "declared" => {
            emit!(out, "    iac:");
            emit!(
                out,
                "      path: {}",
                q(&format!("infra/pulumi/{layer}/Pulumi.item-{i}.yaml"))
            );
            if rng.chance(50) {
                emit!(out, "      key: {}", q("config.ha"));
            }
        }
        _ => {}
    }
    match qualifier {
        Some("rejected") => emit!(out, "    reason: {}", q("Too costly for what it gives.")),
        Some("deferred") => emit!(
            out,
            "    criterion: {}",
            q("When a second GPU site exists.")
        ),
        _ => {}
    }
    // Only lower-numbered items, so the dependency graph stays acyclic; a validated item only
    // on validated ones, so the lint has nothing to report.
    let candidates = if state == "validated" {
        validated.len()
    } else {
        i
    };
    if candidates > 0 {
        let mut deps: Vec<usize> = (0..rng.below(4))
            .map(|_| {
                let k = rng.below(candidates);
                if state == "validated" {
                    validated[k]
                } else {
                    k
                }
            })
            .collect();
        deps.sort_unstable();
        deps.dedup();
        if !deps.is_empty() {
            let list: Vec<String> = deps.iter().map(|d| format!("item-{d:05}")).collect();
            emit!(out, "    depends_on: [{}]", list.join(", "));
        }
    }
    if state == "validated" {
        validated.push(i);
    }
    if rng.chance(20) {
        emit!(
            out,
            "    decisions: [decision-{:04}]",
            rng.below(n_decisions)
        );
    }
    if rng.chance(60) {
        emit!(out, "    phase: {}", PHASES[rng.below(PHASES.len())]);
    }
    if kind == "component" && rng.chance(5) {
        emit!(out, "    gpus:");
        emit!(out, "      - model: {}", q("NVIDIA L40S"));
        emit!(out, "        count: {}", 1 + rng.below(4));
    }
    let a = TAGS[rng.below(TAGS.len())];
    let b = TAGS[rng.below(TAGS.len())];
    if a == b {
        emit!(out, "    tags: [{a}]");
    } else {
        emit!(out, "    tags: [{a}, {b}]");
    }
}

fn tasks(rng: &mut Rng, n: usize, n_items: usize) -> String {
    let mut out = String::from("tasks:\n");
    for t in 0..n {
        emit!(out, "  - id: task-{t:05}");
        emit!(out, "    title: {}", q(&format!("Pending work {t}")));
        emit!(
            out,
            "    kind: {}",
            if rng.chance(20) { "decision" } else { "task" }
        );
        emit!(out, "    layer: {}", LAYERS[rng.below(LAYERS.len())].0);
        if n_items > 0 {
            emit!(out, "    items: [item-{:05}]", rng.below(n_items));
        }
        if rng.chance(50) {
            emit!(out, "    sites: [{}]", SITES[rng.below(SITES.len())]);
        }
        emit!(
            out,
            "    priority: {}",
            PRIORITIES[rng.below(PRIORITIES.len())]
        );
        // Only earlier tasks (or items, which have no `after`), so `after` stays acyclic.
        if t > 0 && rng.chance(40) {
            emit!(out, "    after: [task-{:05}]", rng.below(t));
        } else if n_items > 0 && rng.chance(20) {
            emit!(out, "    after: [item-{:05}]", rng.below(n_items));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_size_and_seed_give_the_same_catalog() {
        let a = synthetic(600, 7);
        let b = synthetic(600, 7);

        assert_eq!(a, b);
        assert_ne!(a, synthetic(600, 8));
    }

    #[test]
    fn items_are_split_into_files_of_five_hundred() {
        let files = synthetic(1_200, 1);

        let item_files: Vec<&str> = files
            .iter()
            .map(|(p, _)| p.as_str())
            .filter(|p| p.starts_with("items/"))
            .collect();

        assert_eq!(
            item_files,
            [
                "items/items-00000.yaml",
                "items/items-00001.yaml",
                "items/items-00002.yaml"
            ]
        );
    }

    #[test]
    fn quoting_escapes_quotes_backslashes_and_control_characters() {
        assert_eq!(q("a \"b\" \\ c\n\u{7}"), "\"a \\\"b\\\" \\\\ c\\n\\u0007\"");
    }
}
