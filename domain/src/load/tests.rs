use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;
use crate::model::State;
use crate::synthetic::synthetic;

/// Sites, hosts, layers and phases every test builds on.
const BASE: &str = "\
platform:
  name: Test platform
sites:
  - id: franca
    name: Franca
    host_groups:
      - id: pve-franca
        name: Proxmox Franca
hosts:
  - id: pve-franca-01
    site: franca
    group: pve-franca
layers:
  - id: l0
    kind: layer
    name: Physical
  - id: l8
    kind: layer
    name: Workloads
  - id: l8a
    kind: layer
    name: GPU
    parent: l8
phases:
  - id: mvp
    name: MVP
    order: 1
";

fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(p, c)| ((*p).to_owned(), (*c).to_owned()))
        .collect()
}

/// Loads files that must fail and returns their diagnostics as displayed.
fn errors(list: &[(&str, &str)]) -> Vec<String> {
    match load_files(files(list)) {
        Ok(c) => panic!(
            "expected diagnostics, loaded {} items",
            c.catalog.items.len()
        ),
        Err(d) => d.iter().map(ToString::to_string).collect(),
    }
}

/// A directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("mirante-load-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }

    fn write(&self, rel: &str, contents: &[u8]) {
        let p = self.0.join(rel);
        fs::create_dir_all(p.parent().expect("parent")).expect("create dirs");
        fs::write(p, contents).expect("write file");
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_valid_minimal_catalog_loads_merged_in_path_order() {
    let items = "\
items:
  - id: proxmox-franca
    name: Proxmox cluster
    kind: component
    layer: l0
    sites: [franca]
    hosts: [pve-franca-01]
    state: validated
    evidence:
      - kind: reference
        text: PR 8
  - id: jupyter
    name: JupyterHub
    kind: workload
    layer: l8a
    state: desired
    qualifier: deferred
    criterion: when GPUs arrive
    depends_on: [proxmox-franca]
    phase: mvp
decisions:
  - id: one-argocd-per-site
    topic: Argo CD topology
    decision: one per site
    layers: [l8]
    items: [jupyter]
tasks:
  - id: buy-gpus
    title: Buy GPUs
    layer: l8a
    items: [jupyter]
    after: [proxmox-franca]
  - id: install-hub
    title: Install the hub
    layer: l8a
    after: [buy-gpus]
";
    // Given out of order: the loader sorts by path.
    let input = files(&[("b/items.yaml", items), ("a.yaml", BASE)]);

    let loaded = load_files(input).expect("valid catalog");

    let c = &loaded.catalog;
    assert_eq!(loaded.files, 2);
    assert_eq!(c.platform.name, "Test platform");
    let ids: Vec<&str> = c.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["proxmox-franca", "jupyter"]);
    assert_eq!(c.items[1].state, State::Desired);
    assert_eq!(c.layers.len(), 3);
    assert_eq!(c.tasks[1].after, ["buy-gpus"]);
    let expected = catalog_hash([
        ("a.yaml", BASE.as_bytes()),
        ("b/items.yaml", items.as_bytes()),
    ]);
    assert_eq!(loaded.hash, expected);
    assert_eq!(loaded.hash.len(), 64);
}

#[test]
fn the_hash_changes_with_a_file_name_or_contents() {
    let a = load_files(files(&[("a.yaml", BASE)])).expect("valid").hash;
    let renamed = load_files(files(&[("b.yaml", BASE)])).expect("valid").hash;
    let edited = format!("{BASE}# a comment\n");
    let changed = load_files(files(&[("a.yaml", &edited)]))
        .expect("valid")
        .hash;

    assert_ne!(a, renamed);
    assert_ne!(a, changed);
}

#[test]
fn an_empty_file_is_a_valid_part_of_a_catalog() {
    let loaded = load_files(files(&[("a.yaml", BASE), ("empty.yaml", "")])).expect("valid");

    assert_eq!(loaded.files, 2);
    assert_eq!(loaded.catalog.sites.len(), 1);
}

#[test]
fn a_problem_after_bare_carriage_returns_is_reported_at_the_line_an_editor_shows() {
    // Found by the catalog_load fuzz target: YAML, like editors, ends a line at a `\r` alone.
    let text = "# old Mac line ends\r\r\r\ritems: [\n";

    let errs = load_files(files(&[("a.yaml", text)])).unwrap_err();

    let first = errs.iter().next().unwrap();
    assert_eq!(first.file, "a.yaml");
    assert!(
        (5..=6).contains(&first.line),
        "line {}: {}",
        first.line,
        first.message
    );
    assert!(
        !first.message.chars().any(char::is_control),
        "{:?}",
        first.message
    );
}

#[test]
fn an_unknown_field_is_reported_at_its_file_line_and_column() {
    let items = "\
items:
  - id: a
    name: A
    kind: component
    layer: l0
    state: validated
    colour: red
";

    let errs = errors(&[("base.yaml", BASE), ("items/a.yaml", items)]);

    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].starts_with("items/a.yaml:7:5: unknown field `colour`, expected one of id, name"),
        "{errs:?}"
    );
}

#[test]
fn a_state_outside_the_enumeration_is_reported_at_the_value() {
    let items = "\
items:
  - id: a
    name: A
    kind: component
    layer: l0
    state: valid
";

    let errs = errors(&[("base.yaml", BASE), ("items.yaml", items)]);

    assert_eq!(
        errs,
        ["items.yaml:6:12: unknown variant `valid`, expected one of validated, declared, desired"]
    );
}

#[test]
fn an_evidence_link_that_is_not_http_is_refused_at_its_entrys_line_and_column() {
    let items = "\
items:
  - id: a
    name: A
    kind: component
    layer: l0
    state: validated
    evidence:
      - kind: reference
        text: Runbook
        url: 'javascript:alert(document.cookie)'
";

    let errs = errors(&[("base.yaml", BASE), ("items.yaml", items)]);

    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("items.yaml:8:9: ")
            && errs[0].contains(
                "`javascript:alert(document.cookie)` is not an http:// or https:// address"
            ),
        "{errs:?}"
    );
}

#[test]
fn a_probe_of_a_file_or_data_address_is_refused_and_an_https_one_loads() {
    let item = |url: &str| {
        format!(
            "items:\n  - {{id: a, name: A, kind: component, layer: l0, state: validated, \
             evidence: [{{kind: probe, url: '{url}'}}]}}\n"
        )
    };
    for bad in ["file:///etc/passwd", "data:text/plain,x", "http://"] {
        let errs = errors(&[("base.yaml", BASE), ("items.yaml", &item(bad))]);
        assert!(
            errs.len() == 1 && errs[0].contains("is not an http:// or https:// address"),
            "{bad}: {errs:?}"
        );
    }

    let ok = load_files(files(&[
        ("base.yaml", BASE),
        (
            "items.yaml",
            &item("https://grafana.example.org/api/health"),
        ),
    ]))
    .expect("an https probe loads");
    assert_eq!(ok.catalog.items[0].evidence.len(), 1);
}

#[test]
fn a_yaml_syntax_error_is_reported_at_its_position() {
    let items = "\
items:
  - id: a
   name: A
";

    let errs = errors(&[("base.yaml", BASE), ("items.yaml", items)]);

    assert_eq!(errs.len(), 1);
    assert!(errs[0].starts_with("items.yaml:3:4: "), "{errs:?}");
    assert!(
        errs[0].contains("did not find expected '-' indicator"),
        "{errs:?}"
    );
}

#[test]
fn a_syntax_error_in_each_file_is_reported_for_every_file() {
    let a = "items: [\n";
    let b = "layers:\n  - id: \"x\n";

    let errs = errors(&[("a.yaml", a), ("b.yaml", b), ("base.yaml", BASE)]);

    assert_eq!(
        errs,
        [
            "a.yaml:1:8: unclosed bracket '['",
            "b.yaml:2:9: unclosed quote"
        ]
    );
}

#[test]
fn duplicate_ids_are_reported_at_both_places() {
    let one = "\
items:
  - id: dup
    name: First
    kind: component
    layer: l0
    state: desired
";
    let two = "\
items:
  - id: other
    name: Other
    kind: component
    layer: l0
    state: desired
  - id: dup
    name: Second
    kind: component
    layer: l0
    state: desired
";

    let errs = errors(&[("base.yaml", BASE), ("one.yaml", one), ("two.yaml", two)]);

    assert_eq!(
        errs,
        [
            "one.yaml:2:9: duplicate item id `dup` (also at two.yaml:7:9)",
            "two.yaml:7:9: duplicate item id `dup` (also at one.yaml:2:9)",
        ]
    );
}

#[test]
fn the_same_id_in_two_different_kinds_is_allowed() {
    let tasks = "\
tasks:
  - id: l0
    title: Task named like a layer
    layer: l0
";

    let loaded = load_files(files(&[("base.yaml", BASE), ("tasks.yaml", tasks)]));

    assert!(loaded.is_ok(), "{loaded:?}");
}

#[test]
fn a_malformed_id_is_reported_at_the_id() {
    let items = "\
items:
  - id: Proxmox_SP
    name: A
    kind: component
    layer: l0
    state: desired
";

    let errs = errors(&[("base.yaml", BASE), ("items.yaml", items)]);

    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].starts_with("items.yaml:2:9: malformed item id `Proxmox_SP`"),
        "{errs:?}"
    );
}

#[test]
fn a_dangling_depends_on_is_reported_at_the_reference() {
    let items = "\
items:
  - id: a
    name: A
    kind: component
    layer: l0
    state: desired
    depends_on:
      - a-missing
";

    let errs = errors(&[("base.yaml", BASE), ("items.yaml", items)]);

    assert_eq!(
        errs,
        ["items.yaml:8:9: item `a`: `depends_on` names unknown item `a-missing`"]
    );
}

#[test]
fn dangling_references_of_every_kind_are_all_reported() {
    let refs = "\
hosts:
  - {id: h1, site: nowhere, group: no-group}
layers:
  - {id: lx, kind: layer, name: X, parent: no-layer}
items:
  - id: a
    name: A
    kind: component
    layer: no-layer
    sites: [franca, no-site]
    hosts: [no-host]
    state: desired
    depends_on: [no-item]
    decisions: [no-decision]
    phase: no-phase
decisions:
  - {id: d, topic: T, decision: D, layers: [no-layer], items: [no-item]}
tasks:
  - {id: t, title: T, layer: no-layer, items: [no-item], sites: [no-site], after: [no-task]}
";

    let errs = errors(&[("base.yaml", BASE), ("refs.yaml", refs)]);

    assert_eq!(
        errs,
        [
            "refs.yaml:2:20: host `h1`: `site` names unknown site `nowhere`",
            "refs.yaml:2:36: host `h1`: `group` names unknown host group `no-group`",
            "refs.yaml:4:44: layer `lx`: `parent` names unknown layer `no-layer`",
            "refs.yaml:9:12: item `a`: `layer` names unknown layer `no-layer`",
            "refs.yaml:10:21: item `a`: `sites` names unknown site `no-site`",
            "refs.yaml:11:13: item `a`: `hosts` names unknown host `no-host`",
            "refs.yaml:13:18: item `a`: `depends_on` names unknown item `no-item`",
            "refs.yaml:14:17: item `a`: `decisions` names unknown decision `no-decision`",
            "refs.yaml:15:12: item `a`: `phase` names unknown phase `no-phase`",
            "refs.yaml:17:45: decision `d`: `layers` names unknown layer `no-layer`",
            "refs.yaml:17:64: decision `d`: `items` names unknown item `no-item`",
            "refs.yaml:19:30: task `t`: `layer` names unknown layer `no-layer`",
            "refs.yaml:19:48: task `t`: `items` names unknown item `no-item`",
            "refs.yaml:19:66: task `t`: `sites` names unknown site `no-site`",
            "refs.yaml:19:84: task `t`: `after` names unknown task or item `no-task`",
        ]
    );
}

#[test]
fn a_cycle_in_depends_on_is_reported_with_its_path() {
    let items = "\
items:
  - {id: a, name: A, kind: component, layer: l0, state: desired, depends_on: [b]}
  - {id: b, name: B, kind: component, layer: l0, state: desired, depends_on: [c]}
  - {id: c, name: C, kind: component, layer: l0, state: desired, depends_on: [a]}
  - {id: d, name: D, kind: component, layer: l0, state: desired, depends_on: [a]}
";

    let errs = errors(&[("base.yaml", BASE), ("items.yaml", items)]);

    assert_eq!(
        errs,
        ["items.yaml:4:79: cycle in item `depends_on`: a -> b -> c -> a"]
    );
}

#[test]
fn an_item_depending_on_itself_is_a_cycle() {
    let items = "\
items:
  - {id: a, name: A, kind: component, layer: l0, state: desired, depends_on: [a]}
";

    let errs = errors(&[("base.yaml", BASE), ("items.yaml", items)]);

    assert_eq!(
        errs,
        ["items.yaml:2:79: cycle in item `depends_on`: a -> a"]
    );
}

#[test]
fn a_long_cycle_is_shown_shortened() {
    let mut items = String::from("items:\n");
    for i in 0..20 {
        let next = (i + 1) % 20;
        items.push_str(&format!(
            "  - {{id: n{i}, name: N, kind: component, layer: l0, state: desired, depends_on: [n{next}]}}\n"
        ));
    }

    let errs = errors(&[("base.yaml", BASE), ("ring.yaml", &items)]);

    assert_eq!(
        errs,
        [
            "ring.yaml:21:81: cycle in item `depends_on`: n0 -> n1 -> n2 -> n3 -> n4 -> n5 -> … (9 more) \
          -> n15 -> n16 -> n17 -> n18 -> n19 -> n0"
        ]
    );
}

#[test]
fn an_id_repeated_many_times_names_three_other_places_and_counts_the_rest() {
    let item = "  - {id: same, name: S, kind: component, layer: l0, state: desired}\n";
    let items = format!("items:\n{}", item.repeat(6));

    let errs = errors(&[("base.yaml", BASE), ("dups.yaml", &items)]);

    assert_eq!(errs.len(), 6);
    assert_eq!(
        errs[0],
        "dups.yaml:2:10: duplicate item id `same` (also at dups.yaml:3:10, dups.yaml:4:10, \
         dups.yaml:5:10, 2 more)"
    );
}

#[test]
fn past_a_thousand_problems_the_rest_are_counted() {
    let item = "  - {id: x, name: X, kind: component, layer: nope, state: desired}\n";
    let mut items = String::from("items:\n");
    for i in 0..1_200 {
        items.push_str(&item.replace("id: x", &format!("id: x{i}")));
    }

    let err = load_files(files(&[("base.yaml", BASE), ("many.yaml", &items)])).expect_err("bad");

    assert_eq!(err.len(), MAX_DIAGNOSTICS + 1);
    assert_eq!(
        err.0[MAX_DIAGNOSTICS].to_string(),
        ".: 200 more problems not shown"
    );
    assert_eq!(
        err.0[0].to_string(),
        "many.yaml:2:47: item `x0`: `layer` names unknown layer `nope`"
    );
}

#[test]
fn a_cycle_in_layer_parents_is_reported() {
    let layers = "\
layers:
  - {id: x, kind: layer, name: X, parent: y}
  - {id: y, kind: layer, name: Y, parent: x}
";

    let errs = errors(&[("base.yaml", BASE), ("layers.yaml", layers)]);

    assert_eq!(
        errs,
        ["layers.yaml:3:43: cycle in layer `parent`: x -> y -> x"]
    );
}

#[test]
fn a_cycle_in_task_after_is_reported_and_items_in_after_do_not_count() {
    let tasks = "\
items:
  - {id: i, name: I, kind: component, layer: l0, state: desired}
tasks:
  - {id: t1, title: One, layer: l0, after: [i, t2]}
  - {id: t2, title: Two, layer: l0, after: [t1]}
";

    let errs = errors(&[("base.yaml", BASE), ("tasks.yaml", tasks)]);

    assert_eq!(
        errs,
        ["tasks.yaml:5:45: cycle in task `after`: t1 -> t2 -> t1"]
    );
}

#[test]
fn a_second_platform_is_reported_with_the_first_ones_place() {
    let other = "platform:\n  name: Another\n";

    let errs = errors(&[("base.yaml", BASE), ("other.yaml", other)]);

    assert_eq!(
        errs,
        [
            "other.yaml:2:3: a second `platform`; the catalog holds at most one (first at base.yaml:2:3)"
        ]
    );
}

#[test]
fn every_error_of_every_file_is_collected() {
    let bad_yaml = "items: [\n";
    let bad_refs = "\
items:
  - {id: a, name: A, kind: component, layer: nope, state: desired}
  - {id: B, name: B, kind: component, layer: l0, state: desired}
";

    let errs = errors(&[
        ("a.yaml", bad_yaml),
        ("base.yaml", BASE),
        ("c.yaml", bad_refs),
    ]);

    // The syntax error hides a.yaml's ids, so dangling references are not checked, but the
    // malformed id in c.yaml still is.
    assert_eq!(
        errs,
        [
            "a.yaml:1:8: unclosed bracket '['",
            "c.yaml:3:10: malformed item id `B`: use lowercase letters, digits, `.`, `_` and `-`, \
             starting with a letter or digit",
        ]
    );
}

#[test]
fn a_non_utf8_file_is_reported_at_its_first_bad_byte() {
    let mut bytes = b"items:\n  - id: caf".to_vec();
    bytes.push(0xe9);

    let err = load_bytes(vec![("latin1.yaml".to_owned(), bytes)]).expect_err("not UTF-8");

    assert_eq!(err.to_string(), "latin1.yaml:2:12: not valid UTF-8");
}

#[test]
fn an_oversized_file_is_refused_without_parsing() {
    let big = format!("# {}\n", "x".repeat(MAX_FILE_BYTES));

    let errs = errors(&[("base.yaml", BASE), ("big.yaml", &big)]);

    assert_eq!(errs, ["big.yaml: file larger than 4 MiB"]);
}

#[test]
fn an_empty_list_of_files_is_an_error() {
    let err = load_files(Vec::new()).expect_err("no files");

    assert_eq!(err.to_string(), ".: no catalog files (*.yaml, *.yml)");
}

#[test]
fn a_billion_laughs_alias_bomb_is_refused() {
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }

    let errs = errors(&[("bomb.yaml", &bomb)]);

    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].starts_with("bomb.yaml:6:15: budget breached"),
        "{errs:?}"
    );
}

#[test]
fn truncated_files_never_panic() {
    let files = synthetic(8, 3);
    let (path, text) = &files[2];
    assert!(path.starts_with("items/"), "{path}");

    // About 400 prefixes, cut anywhere (mid-key, mid-scalar, mid-flow-list): each must give a
    // result, never a panic. Alone, so dangling references are exercised too.
    let step = (text.len() / 400).max(1);
    for cut in (0..text.len())
        .step_by(step)
        .filter(|&i| text.is_char_boundary(i))
    {
        let _ = load_files(vec![(path.clone(), text[..cut].to_owned())]);
    }
}

#[test]
fn the_synthetic_catalog_of_1000_items_loads_without_diagnostics() {
    let input = synthetic(1_000, 42);

    let loaded = load_files(input).map_err(|d| d.to_string());

    let loaded = loaded.expect("synthetic catalog is valid");
    assert_eq!(loaded.catalog.items.len(), 1_000);
    assert_eq!(loaded.files, 5);
    assert_eq!(loaded.catalog.sites.len(), 2);
    assert!(
        loaded
            .catalog
            .items
            .iter()
            .any(|i| !i.depends_on.is_empty())
    );
}

#[test]
fn a_directory_is_read_recursively_skipping_hidden_and_other_files() {
    let dir = TempDir::new("recursive");
    dir.write("00-base.yaml", BASE.as_bytes());
    dir.write(
        "items/a.yml",
        b"items:\n  - {id: a, name: A, kind: component, layer: l0, state: desired}\n",
    );
    dir.write("README.md", b"not yaml: [");
    dir.write(".hidden/x.yaml", b"not: [valid");

    let loaded = load_dir(&dir.0).map_err(|d| d.to_string()).expect("valid");

    assert_eq!(loaded.files, 2);
    assert_eq!(loaded.catalog.items[0].id, "a");
    let same = load_files(vec![
        ("00-base.yaml".to_owned(), BASE.to_owned()),
        (
            "items/a.yml".to_owned(),
            "items:\n  - {id: a, name: A, kind: component, layer: l0, state: desired}\n".to_owned(),
        ),
    ])
    .expect("valid");
    assert_eq!(loaded.hash, same.hash);
}

#[test]
fn a_non_utf8_file_in_a_directory_is_a_diagnostic() {
    let dir = TempDir::new("latin1");
    dir.write("base.yaml", BASE.as_bytes());
    dir.write("sub/bad.yaml", b"# ol\xe1\n");

    let err = load_dir(&dir.0).expect_err("not UTF-8");

    assert_eq!(err.to_string(), "sub/bad.yaml:1:5: not valid UTF-8");
}

#[test]
fn a_missing_directory_is_a_diagnostic() {
    let missing = std::env::temp_dir().join("mirante-load-does-not-exist-4f1c");

    let err = load_dir(&missing).expect_err("missing");

    assert_eq!(err.len(), 1);
    let d = &err.0[0];
    assert_eq!(d.file, missing.display().to_string());
    assert_eq!((d.line, d.column), (0, 0));
    assert!(
        d.message.starts_with("cannot read the catalog directory: "),
        "{d:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_is_reported_not_followed() {
    let dir = TempDir::new("symlink");
    dir.write("base.yaml", BASE.as_bytes());
    std::os::unix::fs::symlink("/etc/hostname", dir.0.join("linked.yaml")).expect("symlink");

    let err = load_dir(&dir.0).expect_err("symlink");

    assert_eq!(
        err.to_string(),
        "linked.yaml: symbolic link not followed: put the file in the catalog directory"
    );
}

#[test]
fn a_clusters_kubernetes_access_loads_with_the_default_prefixes() {
    let items = "\
items:
  - id: gpu
    name: GPU
    kind: component
    layer: l0
    state: desired
    kubernetes:
      api: https://gpu.example.org:6443
      ca: |
        -----BEGIN CERTIFICATE-----
        MIIBszCCAVmgAwIBAgIUQk0=
        -----END CERTIFICATE-----
      oidc:
        issuer: https://auth.example.org/application/o/kubernetes/
        client_id: kubernetes
";
    let c = load_files(files(&[("base.yaml", BASE), ("items.yaml", items)])).unwrap();

    let k = c.catalog.items[0].kubernetes.as_ref().unwrap();
    assert_eq!(k.api, "https://gpu.example.org:6443");
    assert_eq!(k.oidc.username_prefix, "oidc:");
    assert_eq!(k.oidc.groups_prefix, "oidc:");
    assert_eq!(k.user("rui"), "oidc:rui");
    assert!(
        k.ca.as_deref()
            .unwrap()
            .ends_with("-----END CERTIFICATE-----\n")
    );
}

#[test]
fn a_clusters_api_that_is_not_http_or_a_ca_that_is_not_pem_is_refused_at_its_line() {
    let item = |api: &str, ca: &str| {
        format!(
            "items:\n  - id: gpu\n    name: GPU\n    kind: component\n    layer: l0\n    \
             state: desired\n    kubernetes:\n      api: '{api}'\n{ca}      oidc: \
             {{issuer: 'https://auth.example.org/', client_id: k}}\n"
        )
    };
    let errs = errors(&[
        ("base.yaml", BASE),
        ("items.yaml", &item("file:///etc/kubernetes", "")),
    ]);
    assert!(
        errs.len() == 1
            && errs[0].starts_with("items.yaml:8:")
            && errs[0].contains("is not an http:// or https:// address"),
        "{errs:?}"
    );
    let errs = errors(&[
        ("base.yaml", BASE),
        (
            "items.yaml",
            &item("https://gpu.example.org", "      ca: 'not a certificate'\n"),
        ),
    ]);
    assert!(
        errs.len() == 1 && errs[0].starts_with("items.yaml:9:") && errs[0].contains("PEM"),
        "{errs:?}"
    );
}

#[test]
fn a_clusters_gitops_folder_loads_and_one_that_leaves_the_monorepo_is_refused_at_its_line() {
    let item = |folder: &str| {
        format!(
            "items:\n  - id: gpu\n    name: GPU\n    kind: component\n    layer: l0\n    \
             state: desired\n    gitops:\n      folder: '{folder}'\n"
        )
    };
    let c = load_files(files(&[
        ("base.yaml", BASE),
        ("items.yaml", &item("apps/sp/gpu-sp-01")),
    ]))
    .unwrap();
    assert_eq!(
        c.catalog.items[0]
            .gitops
            .as_ref()
            .map(|g| g.folder.as_str()),
        Some("apps/sp/gpu-sp-01")
    );
    for bad in [
        "../outside",
        "/etc",
        "apps//sp",
        "apps/sp/",
        "apps/s p",
        "apps/./sp",
    ] {
        let errs = errors(&[("base.yaml", BASE), ("items.yaml", &item(bad))]);
        assert!(
            errs.len() == 1
                && errs[0].starts_with("items.yaml:8:")
                && errs[0].contains("is not a folder of the monorepo"),
            "{bad}: {errs:?}"
        );
    }
}

/// One revision for the [`RevisionLoader`] tests: each file's path and contents, the key
/// being the contents themselves (as a blob id names them).
fn revision(list: &[(&str, &str)]) -> Vec<(String, String)> {
    files(list)
}

fn item(id: &str, state: &str) -> String {
    format!(
        "items:\n  - id: {id}\n    name: {id}\n    kind: component\n    layer: l0\n    state: {state}\n"
    )
}

#[test]
fn loading_revisions_one_after_another_says_what_loading_each_whole_says_and_reads_only_new_files()
{
    let a_desired = item("a", "desired");
    let a_declared = item("a", "declared");
    let b_depends_on_nothing_known = "items:\n  - id: b\n    name: b\n    kind: component\n    layer: l0\n    state: desired\n    depends_on: [ghost]\n";
    let revisions = [
        revision(&[("base.yaml", BASE), ("a.yaml", &a_desired)]),
        // One file changes.
        revision(&[("base.yaml", BASE), ("a.yaml", &a_declared)]),
        // A broken file, then a dangling reference: both refused, with load_bytes's words.
        revision(&[("base.yaml", BASE), ("a.yaml", "items: [\n")]),
        revision(&[
            ("base.yaml", BASE),
            ("a.yaml", &a_declared),
            ("b.yaml", b_depends_on_nothing_known),
        ]),
        // The same contents under another path, and a file dropped.
        revision(&[("base.yaml", BASE), ("moved/a.yaml", &a_declared)]),
        revision(&[("a.yaml", &a_declared)]),
        revision(&[]),
    ];
    let mut loader = RevisionLoader::new();
    let mut reads = Vec::new();
    let mut loaded = Vec::new();

    for files in &revisions {
        let keyed = files.iter().map(|(p, c)| (p.clone(), c.clone())).collect();
        let incremental = loader.item_states(keyed, |contents: &String| {
            reads.push(contents.clone());
            Ok(contents.clone().into_bytes())
        });
        let whole = load_files(files.clone()).map(|l| {
            l.catalog
                .items
                .iter()
                .map(|i| (i.id.clone(), i.state))
                .collect::<BTreeMap<_, _>>()
        });

        let incremental = incremental.map(|by_file| {
            loaded.push(by_file.clone());
            by_file
                .iter()
                .flat_map(|f| f.iter().cloned())
                .collect::<BTreeMap<_, _>>()
        });
        match (&incremental, &whole) {
            (Ok(i), Ok(w)) => assert_eq!(i, w),
            (Err(i), Err(w)) => assert_eq!(
                i.iter().map(ToString::to_string).collect::<Vec<_>>(),
                w.iter().map(ToString::to_string).collect::<Vec<_>>()
            ),
            _ => panic!("incremental {incremental:?}, whole {whole:?}"),
        }
    }
    let states: Vec<_> = [0, 1]
        .map(|k| {
            let keyed = revisions[k].clone();
            RevisionLoader::new()
                .item_states(keyed, |c: &String| Ok(c.clone().into_bytes()))
                .unwrap()[0][0]
                .1
        })
        .to_vec();
    assert_eq!(states, [State::Desired, State::Declared]);
    // Every (path, contents) pair is read once while it stays in consecutive revisions: BASE
    // at `base.yaml` once (revisions 1 to 5), and again after the revision without it.
    assert_eq!(reads.iter().filter(|c| c.as_str() == BASE).count(), 1);
    assert_eq!(reads.iter().filter(|c| **c == a_declared).count(), 4);
    // In path order (`a.yaml`, `base.yaml`): the file kept from the first revision to the
    // second is handed over as the same allocation, the changed one as a new one.
    assert!(Arc::ptr_eq(&loaded[0][1], &loaded[1][1]));
    assert!(!Arc::ptr_eq(&loaded[0][0], &loaded[1][0]));
}

#[test]
fn revisions_checked_side_by_side_say_what_they_say_one_by_one_and_read_each_file_as_often() {
    let a = |state| item("a", state);
    let dangling = "items:\n  - id: b\n    name: b\n    kind: component\n    layer: l0\n    state: desired\n    depends_on: [ghost]\n";
    let revisions: Vec<Vec<(String, String)>> = [
        vec![("base.yaml", BASE), ("a.yaml", &a("desired"))],
        vec![("base.yaml", BASE), ("a.yaml", &a("declared"))],
        vec![("base.yaml", BASE), ("a.yaml", "items: [\n")],
        vec![
            ("base.yaml", BASE),
            ("a.yaml", &a("declared")),
            ("b.yaml", dangling),
        ],
        vec![("base.yaml", BASE), ("a.yaml", &a("validated"))],
        vec![],
    ]
    .iter()
    .map(|r| revision(r))
    .collect();
    let said = |r: &Result<Vec<FileStates>, Diagnostics>| match r {
        Ok(files) => Ok(files.iter().map(|f| f.to_vec()).collect::<Vec<_>>()),
        Err(d) => Err(d.iter().map(ToString::to_string).collect::<Vec<_>>()),
    };
    let (mut one_by_one, mut side_by_side) = (RevisionLoader::new(), RevisionLoader::new());
    let (mut reads_one, mut reads_side) = (0, 0);

    let each: Vec<_> = revisions
        .iter()
        .map(|files| {
            one_by_one.item_states(files.clone(), |c: &String| {
                reads_one += 1;
                Ok(c.clone().into_bytes())
            })
        })
        .collect();
    let together = side_by_side.item_states_each(revisions.clone(), |c: &String| {
        reads_side += 1;
        Ok(c.clone().into_bytes())
    });

    assert_eq!(
        each.iter().map(said).collect::<Vec<_>>(),
        together.iter().map(said).collect::<Vec<_>>()
    );
    assert_eq!(
        together.iter().map(Result::is_ok).collect::<Vec<_>>(),
        [true, true, false, false, true, false]
    );
    assert_eq!(reads_one, reads_side);
    // `base.yaml` is one allocation in every revision that loaded.
    let loaded: Vec<&Vec<FileStates>> = together.iter().flatten().collect();
    assert!(Arc::ptr_eq(&loaded[0][1], &loaded[2][1]));
}

#[test]
fn a_file_that_cannot_be_read_is_reported_at_its_path_and_the_revision_does_not_load() {
    let mut loader = RevisionLoader::new();

    let refused = loader
        .item_states(
            revision(&[("base.yaml", BASE), ("a.yaml", &item("a", "desired"))]),
            |c: &String| {
                if c.contains("id: a") {
                    Err("cannot read: object not found".to_owned())
                } else {
                    Ok(c.clone().into_bytes())
                }
            },
        )
        .unwrap_err();

    assert_eq!(
        refused.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["a.yaml: cannot read: object not found"]
    );
}
