use super::*;
use crate::load::{load_dir, load_files};

fn snapshot(yaml: &str) -> Snapshot {
    load_files(vec![("catalog.yaml".to_owned(), yaml.to_owned())])
        .map_err(|d| d.to_string())
        .expect("test catalog is valid")
        .into_snapshot(None)
}

fn demo() -> Snapshot {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");
    load_dir(&dir)
        .map_err(|d| d.to_string())
        .expect("the demo catalog is valid")
        .into_snapshot(None)
}

/// a (validated) <- b (declared) <- c (desired) <- d (desired); e depends on a only.
const CHAIN: &str = "\
sites:
  - {id: x, name: Site X}
  - {id: y, name: Site Y}
layers:
  - {id: l0, kind: layer, number: '0', name: Base}
  - {id: l1, kind: layer, number: '1', name: Top}
  - {id: l1a, kind: layer, number: 1a, name: Sub, parent: l1}
  - {id: sec, kind: capability, name: Secrets}
phases:
  - {id: two, name: Two, order: 2}
  - {id: one, name: One, order: 1}
items:
  - {id: a, name: A, kind: component, layer: l0, sites: [x], state: validated, phase: one}
  - {id: b, name: B, kind: component, layer: l0, sites: [x, y], state: declared,
     depends_on: [a], phase: one}
  - {id: c, name: C, kind: component, layer: l1, sites: [y], state: desired, depends_on: [b],
     phase: two}
  - {id: d, name: D, kind: component, layer: l1a, state: desired, depends_on: [c, a]}
  - {id: e, name: E, kind: capability, layer: sec, state: desired, depends_on: [a]}
tasks:
  - {id: t-later, title: Later, layer: l0, priority: later}
  - {id: t-fix, title: Fix, layer: l0, priority: critical}
  - {id: t-after-fix, title: After fix, layer: l0, priority: critical, after: [t-fix]}
  - {id: t-after-a, title: After A, layer: l0, priority: mvp, after: [a]}
  - {id: t-after-c, title: After C, layer: l1, after: [c]}
";

fn blockers(r: &Roadmap, id: &str) -> Vec<(String, String)> {
    let b = match (r.item(id), r.task(id)) {
        (Some(i), _) => &i.blocked_by,
        (None, Some(t)) => &t.blocked_by,
        _ => panic!("no {id}"),
    };
    b.iter().map(|b| (b.id.clone(), b.via.clone())).collect()
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_owned(), b.to_owned())
}

#[test]
fn a_validated_item_is_done_and_blocked_by_nothing() {
    let r = Roadmap::of(&snapshot(CHAIN));

    let a = r.item("a").unwrap();
    assert_eq!(a.status, Status::Done);
    assert!(a.done && !a.ready);
    assert!(a.blocked_by.is_empty());
}

#[test]
fn an_item_whose_dependencies_are_all_validated_is_ready() {
    let r = Roadmap::of(&snapshot(CHAIN));

    for id in ["b", "e"] {
        let it = r.item(id).unwrap();
        assert_eq!(it.status, Status::Ready, "{id}");
        assert!(it.ready && !it.done);
    }
}

#[test]
fn blockers_are_transitive_and_name_the_direct_dependency_they_come_through() {
    let r = Roadmap::of(&snapshot(CHAIN));

    assert_eq!(r.item("c").unwrap().status, Status::Blocked);
    assert_eq!(blockers(&r, "c"), vec![pair("b", "b")]);
    // d -> c -> b; a is validated and stops the walk.
    assert_eq!(blockers(&r, "d"), vec![pair("c", "c"), pair("b", "c")]);
    assert_eq!(
        r.item("d").unwrap().blocked_by[1].state,
        Some(State::Declared)
    );
}

#[test]
fn a_task_waits_for_pending_tasks_and_unvalidated_items() {
    let r = Roadmap::of(&snapshot(CHAIN));

    assert_eq!(r.task("t-fix").unwrap().status, Status::Ready);
    assert_eq!(blockers(&r, "t-after-fix"), vec![pair("t-fix", "t-fix")]);
    assert_eq!(
        r.task("t-after-fix").unwrap().blocked_by[0].kind,
        BlockerKind::Task
    );
    assert_eq!(r.task("t-after-a").unwrap().status, Status::Ready);
    assert_eq!(
        blockers(&r, "t-after-c"),
        vec![pair("c", "c"), pair("b", "c")]
    );
}

#[test]
fn tasks_come_critical_first_then_mvp_keeping_catalog_order_within_a_priority() {
    let r = Roadmap::of(&snapshot(CHAIN));

    let ids: Vec<&str> = r.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        ["t-fix", "t-after-fix", "t-after-a", "t-later", "t-after-c"]
    );
}

#[test]
fn progress_is_counted_per_phase_in_order_per_site_and_per_top_layer() {
    let r = Roadmap::of(&snapshot(CHAIN));

    let phases: Vec<(&str, u32, u32, u32)> = r
        .phases
        .iter()
        .map(|p| {
            (
                p.id.as_str(),
                p.counts.validated,
                p.counts.declared,
                p.counts.desired,
            )
        })
        .collect();
    assert_eq!(phases, [("one", 1, 1, 0), ("two", 0, 0, 1), ("", 0, 0, 2)]);
    let sites: Vec<(&str, u32)> = r
        .progress
        .sites
        .iter()
        .map(|p| (p.id.as_str(), p.counts.total()))
        .collect();
    assert_eq!(sites, [("x", 2), ("y", 2), ("", 2)]);
    assert_eq!(r.progress.sites[0].percent(State::Validated), 50);
    let layers: Vec<(&str, u32)> = r
        .progress
        .layers
        .iter()
        .map(|p| (p.id.as_str(), p.counts.total()))
        .collect();
    // d (in l1a) rolls up to l1; the capability comes last.
    assert_eq!(layers, [("l0", 2), ("l1", 2), ("sec", 1)]);
    assert_eq!(r.progress.totals.total(), 5);
}

#[test]
fn percentages_round_down_and_an_empty_group_is_zero() {
    assert_eq!(percent(1, 3), 33);
    assert_eq!(percent(2, 3), 66);
    assert_eq!(percent(0, 0), 0);
    assert_eq!(percent(4, 4), 100);
}

#[test]
fn the_critical_path_is_the_longest_dependency_chain_to_the_item() {
    let s = snapshot(CHAIN);

    assert_eq!(critical_path(&s, "d").unwrap(), ["a", "b", "c", "d"]);
    assert_eq!(critical_path(&s, "a").unwrap(), ["a"]);
    assert_eq!(critical_path(&s, "nope"), None);
}

#[test]
fn the_graph_puts_each_item_in_the_column_of_its_longest_chain() {
    let s = snapshot(CHAIN);
    let r = Roadmap::of(&s);

    let g = layered_graph(&s, &r, Some("d"));

    let col = |id: &str| g.nodes.iter().find(|n| n.id == id).unwrap().column;
    assert_eq!(
        (col("a"), col("b"), col("c"), col("d"), col("e")),
        (0, 1, 2, 3, 1)
    );
    assert_eq!(g.columns, 4);
    assert_eq!(g.edges.len(), 5);
    let on_path: Vec<&str> = g
        .nodes
        .iter()
        .filter(|n| n.on_path)
        .map(|n| n.id.as_str())
        .collect();
    assert_eq!(on_path, ["a", "b", "c", "d"]);
    // a->b, b->c, c->d are on the path; a->d and a->e are not.
    assert_eq!(g.edges.iter().filter(|e| e.on_path).count(), 3);
    // No two nodes share a place.
    let mut places: Vec<(usize, usize)> = g.nodes.iter().map(|n| (n.column, n.row)).collect();
    places.sort();
    places.dedup();
    assert_eq!(places.len(), g.nodes.len());
}

#[test]
fn barycentre_ordering_uncrosses_two_parallel_chains() {
    // Catalog order would put p2 above p1 in column 1 while q1 sits above q2 in column 0.
    let s = snapshot(
        "\
layers:
  - {id: l0, kind: layer, number: '0', name: Base}
items:
  - {id: q1, name: Q1, kind: component, layer: l0, state: desired}
  - {id: q2, name: Q2, kind: component, layer: l0, state: desired}
  - {id: p2, name: P2, kind: component, layer: l0, state: desired, depends_on: [q2]}
  - {id: p1, name: P1, kind: component, layer: l0, state: desired, depends_on: [q1]}
",
    );
    let g = layered_graph(&s, &Roadmap::of(&s), None);

    let row = |id: &str| g.nodes.iter().find(|n| n.id == id).unwrap().row;
    assert_eq!(row("q1") < row("q2"), row("p1") < row("p2"));
}

#[test]
fn items_without_dependencies_stay_out_of_the_graph_unless_highlighted() {
    let s = snapshot(
        "\
layers:
  - {id: l0, kind: layer, number: '0', name: Base}
items:
  - {id: lone, name: Lone, kind: component, layer: l0, state: desired}
  - {id: a, name: A, kind: component, layer: l0, state: validated}
  - {id: b, name: B, kind: component, layer: l0, state: desired, depends_on: [a]}
",
    );
    let r = Roadmap::of(&s);

    let plain = layered_graph(&s, &r, None);
    let lit = layered_graph(&s, &r, Some("lone"));

    assert!(plain.nodes.iter().all(|n| n.id != "lone"));
    assert!(lit.nodes.iter().any(|n| n.id == "lone" && n.on_path));
}

// The seed's real situation, as the demo catalog records it.

#[test]
fn on_the_demo_place_count_three_on_sp_ssd_waits_for_the_pve_ippri_34_fix() {
    let r = Roadmap::of(&demo());

    let t = r.task("l1-sp-ssd-place-count-3").unwrap();

    assert_eq!(t.status, Status::Blocked);
    assert_eq!(t.items, ["linstor-sp-ssd"]);
    assert_eq!(
        blockers(&r, "l1-sp-ssd-place-count-3"),
        vec![pair(
            "l1-fix-pve-ippri-34-linstor-interface",
            "l1-fix-pve-ippri-34-linstor-interface"
        )]
    );
    assert_eq!(
        r.task("l1-fix-pve-ippri-34-linstor-interface")
            .unwrap()
            .status,
        Status::Ready
    );
}

#[test]
fn on_the_demo_clustermesh_is_blocked_by_cilium_on_both_sites() {
    let r = Roadmap::of(&demo());

    let cm = r.item("clustermesh-applicationset").unwrap();

    assert_eq!(cm.status, Status::Blocked);
    let ids: Vec<&str> = cm.blocked_by.iter().map(|b| b.id.as_str()).collect();
    assert!(ids.contains(&"k3s-sp-cilium"), "{ids:?}");
    assert!(ids.contains(&"franca-cilium-migration"), "{ids:?}");
    // K3s Franca runs (validated, partial): it does not block the migration.
    assert!(!ids.contains(&"k3s-franca"), "{ids:?}");
}

#[test]
fn on_the_demo_traefik_sp_runs_but_its_ha_is_only_declared() {
    let r = Roadmap::of(&demo());

    assert_eq!(r.item("traefik-sp").unwrap().status, Status::Done);
    let ha = r.item("traefik-sp-ha").unwrap();
    assert_eq!(ha.state, State::Declared);
    assert!(!ha.done);
}

#[test]
fn on_the_demo_every_task_and_item_has_a_status_and_critical_tasks_lead() {
    let s = demo();
    let r = Roadmap::of(&s);

    assert_eq!(r.items.len(), s.catalog().items.len());
    assert_eq!(r.tasks.len(), s.catalog().tasks.len());
    assert_eq!(r.tasks[0].priority, Some(Priority::Critical));
    assert_eq!(r.progress.totals.total() as usize, s.catalog().items.len());
    let g = layered_graph(&s, &r, Some("clustermesh-applicationset"));
    let path = critical_path(&s, "clustermesh-applicationset").unwrap();
    assert_eq!(path.last().unwrap(), "clustermesh-applicationset");
    assert!(path.len() >= 2);
    assert!(g.nodes.iter().filter(|n| n.on_path).count() == path.len());
}
