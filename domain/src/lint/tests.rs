use std::fs;

use super::*;
use crate::load::{load_dir, load_files};

fn catalog(items: &str) -> Catalog {
    let yaml =
        format!("layers:\n  - {{id: l0, kind: layer, number: '0', name: Base}}\nitems:\n{items}");
    load_files(vec![("catalog.yaml".to_owned(), yaml)])
        .map_err(|d| d.to_string())
        .expect("test catalog is valid")
        .catalog
}

fn options() -> LintOptions {
    LintOptions {
        today: "2026-11-30".parse().unwrap(),
        stale_after_days: 90,
    }
}

fn codes(findings: &[Finding]) -> Vec<(&str, Code)> {
    findings.iter().map(|f| (f.item.as_str(), f.code)).collect()
}

fn demo() -> Catalog {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");
    load_dir(&dir)
        .map_err(|d| d.to_string())
        .expect("the demo catalog is valid")
        .catalog
}

#[test]
fn a_validated_item_without_evidence_is_a_warning() {
    let c = catalog("  - {id: a, name: A, kind: component, layer: l0, state: validated}\n");

    let f = lint(&c, &options());

    assert_eq!(codes(&f), [("a", Code::ValidatedWithoutEvidence)]);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(
        f[0].to_string(),
        "warning: a: validated, but no evidence (probe, Argo CD application, attestation or \
         reference) [validated-without-evidence]"
    );
}

#[test]
fn an_attestation_older_than_the_limit_is_stale_and_a_recent_one_is_not() {
    let c = catalog(
        "  - {id: old, name: Old, kind: component, layer: l0, state: validated,
     evidence: [{kind: attestation, by: ana, date: '2026-08-31', what: failover drill}]}
  - {id: fresh, name: Fresh, kind: component, layer: l0, state: validated,
     evidence: [{kind: attestation, by: ana, date: '2026-09-01', what: failover drill}]}
",
    );

    let f = lint(&c, &options());

    assert_eq!(codes(&f), [("old", Code::AttestationStale)]);
    assert_eq!(f[0].args["age"], "91");
    assert_eq!(f[0].args["days"], "90");
    assert_eq!(f[0].severity, Severity::Warning);
}

#[test]
fn an_attestation_dated_in_the_future_or_not_as_a_date_is_an_error() {
    let c = catalog(
        "  - {id: a, name: A, kind: component, layer: l0, state: validated, evidence: [
      {kind: attestation, by: ana, date: '2027-01-01', what: restore test},
      {kind: attestation, by: rui, date: last week, what: backups}]}
",
    );

    let f = lint(&c, &options());

    assert_eq!(
        codes(&f),
        [
            ("a", Code::AttestationDateInvalid),
            ("a", Code::AttestationDateInvalid)
        ]
    );
    assert!(f.iter().all(|f| f.severity == Severity::Error));
    assert_eq!(f[1].args["date"], "last week");
}

#[test]
fn failed_live_checks_are_errors_naming_the_reason_on_items_the_catalog_still_has() {
    let c = catalog(
        "  - {id: a, name: A, kind: component, layer: l0, state: validated, evidence: [
      {kind: probe, url: 'https://a.example.org/health'}, {kind: argocd, app: a-app}]}
",
    );
    let failures = [
        LiveFailure::Probe {
            item: "a".into(),
            url: "https://a.example.org/health".into(),
            reason: "expected status 200, got 503".into(),
        },
        LiveFailure::Argocd {
            item: "a".into(),
            app: "a-app".into(),
            reason: "health Degraded, sync OutOfSync".into(),
        },
        LiveFailure::Probe {
            item: "gone".into(),
            url: "https://gone.example.org/".into(),
            reason: "connection refused".into(),
        },
    ];

    let f = lint_live(&c, &failures);

    assert_eq!(
        codes(&f),
        [("a", Code::ProbeFailing), ("a", Code::ArgocdUnhealthy)]
    );
    assert!(f.iter().all(|f| f.severity == Severity::Error));
    assert_eq!(
        f[0].to_string(),
        "error: a: probe of `https://a.example.org/health` fails: expected status 200, got 503 \
         [probe-failing]"
    );
    assert_eq!(
        f[1].message,
        "Argo CD application `a-app`: health Degraded, sync OutOfSync"
    );
}

#[test]
fn a_declared_item_needs_an_iac_reference_and_is_noted_as_not_real_with_one() {
    let c = catalog(
        "  - {id: bare, name: Bare, kind: component, layer: l0, state: declared}
  - {id: ha, name: HA, kind: component, layer: l0, state: declared,
     iac: {path: pulumi/Pulumi.sp.yaml, key: traefik-sp.ha}}
",
    );

    let f = lint(&c, &options());

    assert_eq!(
        codes(&f),
        [
            ("bare", Code::DeclaredWithoutIac),
            ("ha", Code::DeclaredNotReal)
        ]
    );
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(f[1].severity, Severity::Info);
    assert_eq!(
        f[1].message,
        "declared in `pulumi/Pulumi.sp.yaml` (key `traefik-sp.ha`), but not validated in production"
    );
}

#[test]
fn a_validated_item_depending_on_an_unvalidated_one_is_an_error() {
    let c = catalog(
        "  - {id: base, name: Base, kind: component, layer: l0, state: desired}
  - {id: ok, name: Ok, kind: component, layer: l0, state: validated,
     evidence: [{kind: argocd, app: ok}]}
  - {id: top, name: Top, kind: component, layer: l0, state: validated, depends_on: [ok, base],
     evidence: [{kind: attestation, by: ana, date: '2026-10-01', what: runbook followed}]}
",
    );

    let f = lint(&c, &options());

    assert_eq!(codes(&f), [("top", Code::ValidatedDependsOnUnvalidated)]);
    assert_eq!(f[0].args["dependency"], "base");
    assert_eq!(f[0].args["state"], "desired");
    assert_eq!(f[0].severity, Severity::Error);
}

#[test]
fn deferred_needs_a_criterion_and_rejected_a_reason_even_if_blank() {
    let c = catalog(
        "  - {id: d, name: D, kind: component, layer: l0, state: desired, qualifier: deferred}
  - {id: d2, name: D2, kind: component, layer: l0, state: desired, qualifier: deferred,
     criterion: 5+ clusters}
  - {id: r, name: R, kind: component, layer: l0, state: desired, qualifier: rejected,
     reason: '  '}
",
    );

    let f = lint(&c, &options());

    assert_eq!(
        codes(&f),
        [
            ("d", Code::DeferredWithoutCriterion),
            ("r", Code::RejectedWithoutReason)
        ]
    );
}

#[test]
fn dotted_keys_follow_maps_lists_and_keys_that_contain_dots() {
    let doc: doc::Value = serde_saphyr::from_str(
        "\
config:
  proxmox:traefik-sp:
    ha: true
linstor_pools.nvme-pool:
  nodes: [pve-ippri-31, {name: pve-ippri-34}]
1: numeric key
",
    )
    .unwrap();

    assert!(has_key(&doc, "config.proxmox:traefik-sp.ha"));
    assert!(has_key(&doc, "linstor_pools.nvme-pool.nodes.1.name"));
    assert!(has_key(&doc, "1"));
    assert!(!has_key(&doc, "config.proxmox:traefik-sp.ha.deeper"));
    assert!(!has_key(&doc, "linstor_pools.nvme-pool.nodes.2"));
    assert!(!has_key(&doc, "config.traefik-sp"));
}

fn monorepo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("pulumi/proxmox")).unwrap();
    fs::write(
        root.join("pulumi/proxmox/Pulumi.sp.yaml"),
        "config:\n  traefik-sp:\n    ha: true\n",
    )
    .unwrap();
    fs::write(root.join("apps.json"), r#"{"apps": [{"name": "grafana"}]}"#).unwrap();
    fs::write(root.join("stack.toml"), "[vault]\nreplicas = 3\n").unwrap();
    fs::write(root.join("broken.yaml"), "a: [unclosed\n").unwrap();
    fs::write(root.join("main.py"), "print('hi')\n").unwrap();
    dir
}

#[test]
fn the_monorepo_on_disk_answers_paths_and_keys_in_yaml_json_and_toml() {
    let dir = monorepo();
    let repo = DirMonorepo::new(dir.path());

    let yaml = "pulumi/proxmox/Pulumi.sp.yaml";
    assert_eq!(repo.lookup(yaml, None), Lookup::Found);
    assert_eq!(repo.lookup("pulumi", None), Lookup::Found);
    assert_eq!(
        repo.lookup(yaml, Some("config.traefik-sp.ha")),
        Lookup::Found
    );
    assert_eq!(
        repo.lookup(yaml, Some("config.traefik-sp.vip")),
        Lookup::MissingKey
    );
    assert_eq!(repo.lookup("apps.json", Some("apps.0.name")), Lookup::Found);
    assert_eq!(
        repo.lookup("stack.toml", Some("vault.replicas")),
        Lookup::Found
    );
    assert_eq!(
        repo.lookup("stack.toml", Some("vault.ha")),
        Lookup::MissingKey
    );
    assert_eq!(repo.lookup("ansible/site.yml", None), Lookup::MissingPath);
    assert!(matches!(
        repo.lookup("broken.yaml", Some("a")),
        Lookup::Unreadable(_)
    ));
    assert!(
        matches!(repo.lookup("main.py", Some("x")), Lookup::Unreadable(e) if e.contains("YAML, JSON and TOML"))
    );
    assert!(matches!(
        repo.lookup("pulumi", Some("x")),
        Lookup::Unreadable(_)
    ));
}

#[test]
fn a_reference_cannot_leave_the_monorepo() {
    let dir = monorepo();
    let repo = DirMonorepo::new(dir.path().join("pulumi"));

    assert_eq!(repo.lookup("../apps.json", None), Lookup::Outside);
    assert_eq!(repo.lookup("/etc/passwd", None), Lookup::Outside);
    assert_eq!(repo.lookup("", None), Lookup::Outside);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("apps.json"), dir.path().join("pulumi/link"))
            .unwrap();
        assert_eq!(repo.lookup("link", None), Lookup::Outside);
    }
}

#[test]
fn iac_findings_name_the_path_and_key_that_are_missing() {
    let dir = monorepo();
    let c = catalog(
        "  - {id: ok, name: Ok, kind: component, layer: l0, state: declared,
     iac: {path: pulumi/proxmox/Pulumi.sp.yaml, key: config.traefik-sp.ha}}
  - {id: nokey, name: No key, kind: component, layer: l0, state: declared,
     iac: {path: pulumi/proxmox/Pulumi.sp.yaml, key: config.traefik-franca.ha}}
  - {id: nopath, name: No path, kind: component, layer: l0, state: declared,
     iac: {path: ansible/linstor.yml}}
  - {id: bad, name: Bad, kind: component, layer: l0, state: declared,
     iac: {path: broken.yaml, key: a}}
",
    );

    let f = lint_iac(&c, &DirMonorepo::new(dir.path()));

    assert_eq!(
        codes(&f),
        [
            ("nokey", Code::IacKeyMissing),
            ("nopath", Code::IacPathMissing),
            ("bad", Code::IacUnreadable)
        ]
    );
    assert!(f.iter().all(|f| f.severity == Severity::Error));
    assert_eq!(
        f[0].message,
        "IaC key `config.traefik-franca.ha` not found in `pulumi/proxmox/Pulumi.sp.yaml`"
    );
}

#[test]
fn the_demo_catalog_has_no_errors_and_flags_traefik_sp_ha_as_declared_but_not_real() {
    let c = demo();

    let f = lint(&c, &options());

    let errors: Vec<String> = f
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(ToString::to_string)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(
        f.iter()
            .any(|f| f.item == "traefik-sp-ha" && f.code == Code::DeclaredNotReal),
        "{f:#?}"
    );
    let free_text: Vec<&str> = f
        .iter()
        .filter(|f| f.code == Code::ValidatedOnlyFreeText)
        .map(|f| f.item.as_str())
        .collect();
    assert!(
        free_text.is_empty(),
        "every validated item of the demo rests on something verifiable: {free_text:?}"
    );
}

#[test]
fn the_synthetic_catalog_has_no_lint_error_and_its_validated_items_have_dependencies() {
    let c = load_files(crate::synthetic::synthetic(2_000, 42))
        .map_err(|d| d.to_string())
        .expect("the synthetic catalog is valid")
        .catalog;

    let errors: Vec<_> = lint(&c, &options())
        .into_iter()
        .filter(|f| f.code.severity() == Severity::Error)
        .collect();

    assert!(errors.is_empty(), "{:?}", codes(&errors));
    assert!(
        c.items
            .iter()
            .any(|i| i.state == State::Validated && !i.depends_on.is_empty())
    );
}

#[test]
fn a_validated_item_resting_on_free_text_only_is_a_warning_and_one_verifiable_entry_clears_it() {
    let c = catalog(
        "  - {id: told, name: Told, kind: component, layer: l0, state: validated, evidence: [
      {kind: reference, text: 'in production'}]}
  - {id: attested, name: Attested, kind: component, layer: l0, state: validated, evidence: [
      {kind: reference, text: 'in production'},
      {kind: attestation, by: ana, date: '2026-10-01', what: 'restored a VM'}]}
  - {id: coded, name: Coded, kind: component, layer: l0, state: validated,
     iac: {path: ansible/site.yml}, evidence: [{kind: reference, text: 'in production'}]}
  - {id: planned, name: Planned, kind: component, layer: l0, state: desired, evidence: [
      {kind: reference, text: 'someday'}]}
",
    );

    let f = lint(&c, &options());

    let free_text: Vec<_> = f
        .iter()
        .filter(|f| f.code == Code::ValidatedOnlyFreeText)
        .collect();
    assert_eq!(free_text.len(), 1, "{f:?}");
    assert_eq!(free_text[0].item, "told");
    assert_eq!(free_text[0].severity, Severity::Warning);
}
