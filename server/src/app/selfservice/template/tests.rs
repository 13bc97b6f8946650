use std::sync::LazyLock;

use chrono::TimeZone;
use mirante_domain::selfservice::ErrorCode;
use proptest::prelude::*;
use serde_json::{Value as Json, json};

use super::*;
use crate::app::catalog::CatalogSource;

static CATALOG: LazyLock<Snapshot> = LazyLock::new(|| {
    CatalogSource::Embedded
        .load()
        .expect("the demo catalog loads")
        .into_snapshot(None)
});

static SHIPPED: LazyLock<TemplateSet> = LazyLock::new(TemplateSet::embedded);

fn ctx() -> RenderContext<'static> {
    RenderContext {
        catalog: &CATALOG,
        requester: Requester {
            username: "alice".into(),
            name: "Alice Souza".into(),
            email: Some("alice@example.org".into()),
        },
        now: Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap(),
        namespaces: None,
    }
}

fn render(id: &str, values: Json) -> Result<Rendered, RenderError> {
    SHIPPED
        .get(id)
        .unwrap_or_else(|| panic!("no template {id}"))
        .render(&values, &ctx())
}

fn render_with(id: &str, values: Json, ctx: &RenderContext<'_>) -> Result<Rendered, RenderError> {
    SHIPPED.get(id).unwrap().render(&values, ctx)
}

/// The documents of a rendered file, parsed.
fn docs(r: &Rendered, name: &str) -> Vec<Json> {
    let path = format!("{}/{name}", r.target);
    let f = r
        .files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path} in {:?}", paths(r)));
    serde_saphyr::from_multiple::<Json>(&f.content)
        .unwrap()
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

fn doc(r: &Rendered, name: &str) -> Json {
    let mut d = docs(r, name);
    assert_eq!(d.len(), 1, "{name} holds one document");
    d.remove(0)
}

fn paths(r: &Rendered) -> Vec<&str> {
    r.files.iter().map(|f| f.path.as_str()).collect()
}

fn field_codes(e: RenderError) -> Vec<(String, ErrorCode)> {
    match e {
        RenderError::Invalid(errors) => errors.into_iter().map(|e| (e.field, e.code)).collect(),
        RenderError::Template(m) => panic!("expected invalid values, got a template error: {m}"),
    }
}

fn workspace(extra: Json) -> Json {
    let mut v = json!({"name": "nlp", "cluster": "gpu-sp-01"});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v
}

fn database(extra: Json) -> Json {
    let mut v = json!({"name": "corpus", "cluster": "gpu-sp-01", "namespace": "ws-nlp", "databases": ["corpus"]});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v
}

#[test]
fn the_shipped_templates_load_without_problems() {
    let ids: Vec<&str> = SHIPPED
        .templates()
        .iter()
        .map(|t| t.manifest().id.as_str())
        .collect();

    assert_eq!(SHIPPED.problems(), &[] as &[Diagnostic]);
    assert_eq!(ids, ["gpu-workspace", "postgres-cnpg"]);
}

#[test]
fn a_gpu_workspace_becomes_a_namespace_and_a_quota_with_the_numbers_asked() {
    let r = render(
        "gpu-workspace",
        workspace(json!({"gpus": 1, "memory_gib": 48, "cpu": 12, "days": 10,
                         "purpose": "Fine-tuning a pt-BR model"})),
    )
    .unwrap();

    assert_eq!(r.target, "apps/sp/gpu-sp-01/workspaces/nlp");
    assert_eq!(r.slug, "gpu-workspace-alice-nlp");
    assert_eq!(
        paths(&r),
        [
            "apps/sp/gpu-sp-01/workspaces/nlp/README.md",
            "apps/sp/gpu-sp-01/workspaces/nlp/limitrange.yaml",
            "apps/sp/gpu-sp-01/workspaces/nlp/namespace.yaml",
            "apps/sp/gpu-sp-01/workspaces/nlp/networkpolicy.yaml",
            "apps/sp/gpu-sp-01/workspaces/nlp/resourcequota.yaml",
            "apps/sp/gpu-sp-01/workspaces/nlp/rolebinding.yaml",
        ]
    );
    let ns = doc(&r, "namespace.yaml");
    assert_eq!(ns["kind"], "Namespace");
    assert_eq!(ns["metadata"]["name"], "ws-nlp");
    assert_eq!(ns["metadata"]["labels"]["mirante.dev/owner"], "alice");
    assert_eq!(
        ns["metadata"]["labels"]["mirante.dev/expires"],
        "2026-12-10"
    );
    assert_eq!(
        ns["metadata"]["annotations"]["mirante.dev/purpose"],
        "Fine-tuning a pt-BR model"
    );
    assert_eq!(
        ns["metadata"]["annotations"]["mirante.dev/requester-email"],
        "alice@example.org"
    );
    let quota = doc(&r, "resourcequota.yaml");
    assert_eq!(quota["kind"], "ResourceQuota");
    assert_eq!(quota["metadata"]["namespace"], "ws-nlp");
    assert_eq!(
        quota["spec"]["hard"],
        json!({
            "requests.nvidia.com/gpu": "1", "limits.nvidia.com/gpu": "1",
            "requests.cpu": "12", "limits.cpu": "12",
            "requests.memory": "48Gi", "limits.memory": "48Gi",
        })
    );
    assert_eq!(r.values["days"], json!(10));
}

#[test]
fn the_requester_may_edit_in_their_workspace_as_the_user_the_clusters_oidc_makes_of_them() {
    let r = render("gpu-workspace", workspace(json!({}))).unwrap();

    let binding = doc(&r, "rolebinding.yaml");
    assert_eq!(binding["kind"], "RoleBinding");
    assert_eq!(binding["metadata"]["namespace"], "ws-nlp");
    assert_eq!(
        binding["subjects"],
        json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "oidc:alice"}])
    );
    assert_eq!(
        binding["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"})
    );
}

#[test]
fn the_user_name_prefix_is_the_one_the_catalog_records_for_the_cluster() {
    let mut catalog = CATALOG.catalog().clone();
    let item = catalog
        .items
        .iter_mut()
        .find(|i| i.id == "gpu-sp-01")
        .unwrap();
    item.kubernetes.as_mut().unwrap().oidc.username_prefix = "authentik#".into();
    let snapshot = Snapshot::new(catalog, String::new(), None);
    let ctx = RenderContext {
        catalog: &snapshot,
        ..ctx()
    };

    let r = render_with("gpu-workspace", workspace(json!({})), &ctx).unwrap();

    assert_eq!(
        doc(&r, "rolebinding.yaml")["subjects"][0]["name"],
        "authentik#alice"
    );
}

#[test]
fn the_workspaces_containers_get_default_requests_and_limits_within_its_quota() {
    for (cpu, memory, default_cpu, default_memory) in
        [(12, 48, "2", "4Gi"), (1, 2, "1", "2Gi"), (2, 4, "2", "4Gi")]
    {
        let r = render(
            "gpu-workspace",
            workspace(json!({"cpu": cpu, "memory_gib": memory})),
        )
        .unwrap();
        let limits = &doc(&r, "limitrange.yaml")["spec"]["limits"][0];
        assert_eq!(limits["type"], "Container");
        assert_eq!(limits["default"]["cpu"], default_cpu, "cpu {cpu}");
        assert_eq!(
            limits["default"]["memory"], default_memory,
            "memory {memory}"
        );
        assert_eq!(
            limits["defaultRequest"],
            json!({"cpu": "500m", "memory": "1Gi"})
        );
        assert_eq!(limits["max"]["cpu"], cpu.to_string());
        assert_eq!(limits["max"]["memory"], format!("{memory}Gi"));
    }
}

#[test]
fn the_workspace_denies_all_traffic_but_its_own_pods_and_dns() {
    let r = render("gpu-workspace", workspace(json!({}))).unwrap();

    let policies = docs(&r, "networkpolicy.yaml");
    let names: Vec<&str> = policies
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["default-deny", "allow-same-namespace", "allow-dns-egress"]
    );
    for p in &policies {
        assert_eq!(p["kind"], "NetworkPolicy");
        assert_eq!(p["metadata"]["namespace"], "ws-nlp");
        assert_eq!(
            p["spec"]["podSelector"],
            json!({}),
            "every pod of the namespace"
        );
    }
    assert_eq!(
        policies[0]["spec"]["policyTypes"],
        json!(["Ingress", "Egress"])
    );
    assert!(
        policies[0]["spec"].get("ingress").is_none() && policies[0]["spec"].get("egress").is_none()
    );
    let dns = &policies[2]["spec"]["egress"][0];
    assert_eq!(
        dns["to"][0]["podSelector"]["matchLabels"]["k8s-app"],
        "kube-dns"
    );
    assert_eq!(
        dns["ports"],
        json!([{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}])
    );
}

#[test]
fn the_workspace_readme_carries_a_kubeconfig_when_the_catalog_says_how_to_reach_the_cluster() {
    let r = render("gpu-workspace", workspace(json!({}))).unwrap();
    let readme = &r
        .files
        .iter()
        .find(|f| f.path.ends_with("/README.md"))
        .unwrap()
        .content;

    let block = readme
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .unwrap_or_else(|| panic!("no yaml block in {readme}"));
    let config: Json = serde_saphyr::from_str(block).unwrap();
    assert_eq!(config["contexts"][0]["context"]["namespace"], "ws-nlp");
    assert_eq!(
        config["clusters"][0]["cluster"]["server"],
        "https://gpu-sp-01.k8s.example.org:6443"
    );
    assert_eq!(config["users"][0]["user"]["exec"]["args"][0], "oidc-login");
    assert!(readme.contains("oidc:alice"), "{readme}");

    // A cluster the catalog gives no address: no kubeconfig, the rest as before.
    let mut catalog = CATALOG.catalog().clone();
    catalog
        .items
        .iter_mut()
        .find(|i| i.id == "gpu-sp-01")
        .unwrap()
        .kubernetes = None;
    let snapshot = Snapshot::new(catalog, String::new(), None);
    let ctx = RenderContext {
        catalog: &snapshot,
        ..ctx()
    };
    let r = render_with("gpu-workspace", workspace(json!({})), &ctx).unwrap();
    let readme = &r
        .files
        .iter()
        .find(|f| f.path.ends_with("/README.md"))
        .unwrap()
        .content;
    assert!(!readme.contains("```"), "{readme}");
    assert!(
        readme.contains("oidc:alice"),
        "the default prefix: {readme}"
    );
}

#[test]
fn a_code_block_cannot_be_closed_by_the_text_inside_it() {
    let mut s = String::new();
    render::fenced_for_test(&mut s, "a\n````\nb");
    assert!(s.starts_with("`````yaml\n"), "{s}");
    assert!(s.ends_with("\n`````"), "{s}");
}

#[test]
fn the_gpu_workspace_defaults_fill_in_what_is_not_given() {
    let r = render("gpu-workspace", workspace(json!({}))).unwrap();

    let quota = doc(&r, "resourcequota.yaml");
    assert_eq!(quota["spec"]["hard"]["requests.nvidia.com/gpu"], "1");
    assert_eq!(quota["spec"]["hard"]["requests.memory"], "32Gi");
    let ns = doc(&r, "namespace.yaml");
    assert_eq!(
        ns["metadata"]["labels"]["mirante.dev/expires"],
        "2026-12-30"
    );
    assert!(
        ns["metadata"]["annotations"]
            .get("mirante.dev/purpose")
            .is_none()
    );
}

#[test]
fn more_gpus_than_the_cluster_has_is_refused_naming_its_capacity() {
    let e = render("gpu-workspace", workspace(json!({"gpus": 2}))).unwrap_err();

    let RenderError::Invalid(errors) = e else {
        panic!("expected invalid values")
    };
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].field, "gpus");
    assert_eq!(errors[0].code, ErrorCode::ExceedsCapacity);
    assert_eq!(errors[0].args["capacity"], json!(1));
    assert!(
        errors[0]
            .message
            .contains("gpu-sp-01 has 1 (1× NVIDIA RTX A5000)"),
        "{}",
        errors[0].message
    );
}

#[test]
fn only_clusters_the_catalog_records_with_gpus_are_offered() {
    // gpu-franca-cluster is in the catalog but records no GPUs.
    let got = field_codes(
        render(
            "gpu-workspace",
            workspace(json!({"cluster": "gpu-franca-cluster"})),
        )
        .unwrap_err(),
    );

    assert_eq!(got, [("cluster".to_owned(), ErrorCode::NotAnOption)]);
}

#[test]
fn a_database_request_becomes_a_cluster_with_one_database_object_per_database() {
    let r = render(
        "postgres-cnpg",
        database(
            json!({"instances": 3, "storage_gib": 20, "storage_class": "linstor-ssd",
                        "owner": "corpus_owner", "databases": ["corpus", "corpus_raw", "stats"]}),
        ),
    )
    .unwrap();

    assert_eq!(r.target, "apps/sp/gpu-sp-01/databases/ws-nlp/corpus");
    assert_eq!(r.slug, "postgres-alice-corpus");
    assert_eq!(
        paths(&r),
        [
            "apps/sp/gpu-sp-01/databases/ws-nlp/corpus/cluster.yaml",
            "apps/sp/gpu-sp-01/databases/ws-nlp/corpus/databases.yaml",
        ]
    );
    let cluster = doc(&r, "cluster.yaml");
    assert_eq!(cluster["apiVersion"], "postgresql.cnpg.io/v1");
    assert_eq!(cluster["kind"], "Cluster");
    assert_eq!(cluster["metadata"]["namespace"], "ws-nlp");
    assert_eq!(cluster["spec"]["instances"], json!(3));
    assert_eq!(
        cluster["spec"]["storage"],
        json!({"size": "20Gi", "storageClass": "linstor-ssd"})
    );
    assert_eq!(
        cluster["spec"]["bootstrap"]["initdb"],
        json!({"database": "corpus", "owner": "corpus_owner"})
    );
    let roles = cluster["spec"]["managed"]["roles"].as_array().unwrap();
    assert_eq!(roles.len(), 1);
    assert_eq!(roles[0]["name"], "corpus_owner");
    assert_eq!(roles[0]["login"], json!(true));
    assert!(cluster["spec"].get("plugins").is_none());

    let dbs = docs(&r, "databases.yaml");
    let summary: Vec<(String, String, String, String)> = dbs
        .iter()
        .map(|d| {
            assert_eq!(d["apiVersion"], "postgresql.cnpg.io/v1");
            assert_eq!(d["kind"], "Database");
            (
                d["metadata"]["name"].as_str().unwrap().to_owned(),
                d["spec"]["name"].as_str().unwrap().to_owned(),
                d["spec"]["owner"].as_str().unwrap().to_owned(),
                d["spec"]["cluster"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let s = |a: &str, b: &str| {
        (
            a.to_owned(),
            b.to_owned(),
            "corpus_owner".to_owned(),
            "corpus".to_owned(),
        )
    };
    assert_eq!(
        summary,
        [
            s("corpus-corpus", "corpus"),
            s("corpus-corpus-raw", "corpus_raw"),
            s("corpus-stats", "stats"),
        ]
    );
}

#[test]
fn a_database_with_backup_gets_an_object_store_and_a_scheduled_backup_but_no_secret() {
    let r = render(
        "postgres-cnpg",
        database(json!({"backup_destination": "s3://pg-backups/nlp/",
                        "backup_endpoint": "https://rgw.example.org",
                        "backup_schedule": "weekly", "backup_retention_days": 14})),
    )
    .unwrap();

    let cluster = doc(&r, "cluster.yaml");
    assert_eq!(
        cluster["spec"]["plugins"],
        json!([{"name": "barman-cloud.cloudnative-pg.io", "isWALArchiver": true,
                "parameters": {"barmanObjectName": "corpus-backup"}}])
    );
    let store = doc(&r, "objectstore.yaml");
    assert_eq!(store["apiVersion"], "barmancloud.cnpg.io/v1");
    assert_eq!(store["kind"], "ObjectStore");
    assert_eq!(store["spec"]["retentionPolicy"], "14d");
    assert_eq!(
        store["spec"]["configuration"]["destinationPath"],
        "s3://pg-backups/nlp/"
    );
    assert_eq!(
        store["spec"]["configuration"]["endpointURL"],
        "https://rgw.example.org"
    );
    assert_eq!(
        store["spec"]["configuration"]["s3Credentials"],
        json!({"accessKeyId": {"name": "backup-s3-credentials", "key": "ACCESS_KEY_ID"},
               "secretAccessKey": {"name": "backup-s3-credentials", "key": "ACCESS_SECRET_KEY"}})
    );
    let scheduled = doc(&r, "scheduledbackup.yaml");
    assert_eq!(scheduled["kind"], "ScheduledBackup");
    assert_eq!(scheduled["spec"]["schedule"], "0 0 3 * * 0");
    assert_eq!(scheduled["spec"]["method"], "plugin");
    assert_eq!(scheduled["spec"]["cluster"]["name"], "corpus");
    for f in &r.files {
        assert!(!f.content.contains("kind: Secret"), "{}", f.path);
        assert!(
            !f.content.to_lowercase().contains("password:"),
            "{}",
            f.path
        );
    }
}

#[test]
fn instances_outside_one_to_five_are_refused() {
    let low = field_codes(render("postgres-cnpg", database(json!({"instances": 0}))).unwrap_err());
    let high = field_codes(render("postgres-cnpg", database(json!({"instances": 6}))).unwrap_err());

    assert_eq!(low, [("instances".to_owned(), ErrorCode::TooSmall)]);
    assert_eq!(high, [("instances".to_owned(), ErrorCode::TooLarge)]);
}

#[test]
fn hostile_values_are_refused_with_the_right_field_error() {
    let cases: Vec<(Json, &str, ErrorCode)> = vec![
        (
            json!({"purpose": "x\nkind: Secret"}),
            "purpose",
            ErrorCode::ForbiddenCharacter,
        ),
        (
            json!({"purpose": "x\r\n---\nkind: Secret"}),
            "purpose",
            ErrorCode::ForbiddenCharacter,
        ),
        (
            json!({"purpose": "ok\u{202E}txt.exe"}),
            "purpose",
            ErrorCode::ForbiddenCharacter,
        ),
        (
            json!({"purpose": "zero\u{200B}width"}),
            "purpose",
            ErrorCode::ForbiddenCharacter,
        ),
        (
            json!({"purpose": "a".repeat(201)}),
            "purpose",
            ErrorCode::TooLong,
        ),
        (json!({"name": "../../etc"}), "name", ErrorCode::NotDnsLabel),
        (
            json!({"name": "/etc/passwd"}),
            "name",
            ErrorCode::NotDnsLabel,
        ),
        (json!({"name": "a\\b"}), "name", ErrorCode::NotDnsLabel),
        (
            json!({"name": "ａｄｍｉｎ"}),
            "name",
            ErrorCode::NotDnsLabel,
        ),
        (
            json!({"name": "kube-system\nx"}),
            "name",
            ErrorCode::ForbiddenCharacter,
        ),
        (json!({"name": "a".repeat(41)}), "name", ErrorCode::TooLong),
        (json!({"name": 7}), "name", ErrorCode::WrongType),
        (json!({"gpus": "1"}), "gpus", ErrorCode::WrongType),
        (json!({"gpus": 1.5}), "gpus", ErrorCode::WrongType),
        (json!({"gpus": -1}), "gpus", ErrorCode::TooSmall),
        (json!({"gpus": 1e300}), "gpus", ErrorCode::WrongType),
        (json!({"days": 91}), "days", ErrorCode::TooLarge),
        (
            json!({"cluster": "../gpu-sp-01"}),
            "cluster",
            ErrorCode::NotAnOption,
        ),
        (json!({"cpu": [8]}), "cpu", ErrorCode::WrongType),
        (
            json!({"namespace": "kube-system"}),
            "namespace",
            ErrorCode::UnknownField,
        ),
    ];
    for (extra, field, code) in cases {
        let got = field_codes(render("gpu-workspace", workspace(extra.clone())).unwrap_err());
        assert_eq!(got, [(field.to_owned(), code)], "{extra}");
    }
}

#[test]
fn hostile_database_values_are_refused() {
    let cases: Vec<(Json, &str, ErrorCode)> = vec![
        (
            json!({"databases": []}),
            "databases",
            ErrorCode::TooFewItems,
        ),
        (
            json!({"databases": ["a", "a"]}),
            "databases",
            ErrorCode::DuplicateItem,
        ),
        (
            json!({"databases": ["x\n- y"]}),
            "databases",
            ErrorCode::ForbiddenCharacter,
        ),
        (
            json!({"databases": ["Robert'); DROP TABLE students;--"]}),
            "databases",
            ErrorCode::Pattern,
        ),
        (
            json!({"databases": ["a__b"]}),
            "databases",
            ErrorCode::Pattern,
        ),
        (json!({"databases": [1]}), "databases", ErrorCode::WrongType),
        (
            json!({"databases": "corpus"}),
            "databases",
            ErrorCode::WrongType,
        ),
        (
            json!({"owner": "postgres\"; --"}),
            "owner",
            ErrorCode::Pattern,
        ),
        (
            json!({"storage_class": "x: y"}),
            "storage_class",
            ErrorCode::Pattern,
        ),
        (
            json!({"backup_destination": "s3://b/../../x"}),
            "backup_destination",
            ErrorCode::Pattern,
        ),
        (
            json!({"backup_destination": "s3://b/x\n"}),
            "backup_destination",
            ErrorCode::ForbiddenCharacter,
        ),
        (
            json!({"backup_endpoint": "https://a.b/path?x=1"}),
            "backup_endpoint",
            ErrorCode::Pattern,
        ),
        (
            json!({"backup_endpoint": "http://169.254.169.254"}),
            "backup_endpoint",
            ErrorCode::NotExternalUrl,
        ),
        (
            json!({"backup_endpoint": "http://localhost:9000"}),
            "backup_endpoint",
            ErrorCode::NotExternalUrl,
        ),
        (
            json!({"backup_schedule": "hourly"}),
            "backup_schedule",
            ErrorCode::NotInEnum,
        ),
        (
            json!({"backup_credentials_secret": "Secret"}),
            "backup_credentials_secret",
            ErrorCode::NotDnsLabel,
        ),
        (
            json!({"password": "hunter2"}),
            "password",
            ErrorCode::UnknownField,
        ),
    ];
    for (extra, field, code) in cases {
        let got = field_codes(render("postgres-cnpg", database(extra.clone())).unwrap_err());
        assert_eq!(got, [(field.to_owned(), code)], "{extra}");
    }
}

#[test]
fn quotes_colons_hashes_and_template_syntax_in_a_value_stay_one_inert_string() {
    let purpose = r#"a": b, c: {d: e} # '---' [x] {{ 7*7 }} {% if %} & *ref !!python/object ü 🚀"#;

    let r = render("gpu-workspace", workspace(json!({"purpose": purpose}))).unwrap();

    let ns = doc(&r, "namespace.yaml");
    assert_eq!(
        ns["metadata"]["annotations"]["mirante.dev/purpose"],
        purpose
    );
    assert_eq!(ns["metadata"]["annotations"].as_object().unwrap().len(), 5);
    assert_eq!(ns["metadata"].as_object().unwrap().len(), 3);
}

#[test]
fn a_hostile_requester_name_cannot_add_keys_or_documents() {
    // Names and usernames come from the identity provider, not the form: they are not
    // validated, so quoting alone must hold.
    let mut c = ctx();
    c.requester = Requester {
        username: "../../Eve Admin\n".into(),
        name: "Eve\nkind: Secret\n---\napiVersion: v1\u{2028}x\u{85}y\u{0}".into(),
        email: Some("eve@example.org\"\n  evil: true".into()),
    };

    let r = render_with("gpu-workspace", workspace(json!({})), &c).unwrap();

    let all = docs(&r, "namespace.yaml");
    assert_eq!(all.len(), 1);
    let ns = &all[0];
    assert_eq!(
        ns["metadata"]["annotations"]["mirante.dev/requested-by"],
        c.requester.name
    );
    assert_eq!(
        ns["metadata"]["annotations"]["mirante.dev/requester-email"],
        c.requester.email.clone().unwrap()
    );
    assert_eq!(ns["metadata"]["labels"]["mirante.dev/owner"], "eve-admin");
    assert_eq!(r.slug, "gpu-workspace-eve-admin-nlp");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any purpose validation accepts comes back out of the YAML exactly, as one annotation.
    #[test]
    fn any_accepted_purpose_renders_as_exactly_that_string(purpose in "\\PC{1,200}") {
        let values = workspace(json!({"purpose": purpose}));
        match render("gpu-workspace", values) {
            Ok(r) => {
                let ns = doc(&r, "namespace.yaml");
                prop_assert_eq!(&ns["metadata"]["annotations"]["mirante.dev/purpose"], &json!(purpose));
                prop_assert_eq!(ns["metadata"]["annotations"].as_object().unwrap().len(), 5);
            }
            Err(RenderError::Invalid(errors)) => {
                prop_assert!(errors.iter().all(|e| e.field == "purpose"
                    && matches!(e.code, ErrorCode::ForbiddenCharacter | ErrorCode::TooLong)));
            }
            Err(e) => prop_assert!(false, "template error: {e}"),
        }
    }

    /// Any requester name, control characters included, is one annotation value.
    #[test]
    fn any_requester_name_renders_as_exactly_that_string(name in any::<String>()) {
        let mut c = ctx();
        c.requester.name = name.clone();
        let r = render_with("gpu-workspace", workspace(json!({})), &c).unwrap();
        let all = docs(&r, "namespace.yaml");
        prop_assert_eq!(all.len(), 1);
        prop_assert_eq!(&all[0]["metadata"]["annotations"]["mirante.dev/requested-by"], &json!(name));
    }

    /// Whatever the name, the rendered paths stay under the target.
    #[test]
    fn any_accepted_name_keeps_every_file_under_the_target(name in "[a-z0-9./\\\\-]{1,50}") {
        if let Ok(r) = render("postgres-cnpg", database(json!({"name": name}))) {
            let prefix = format!("{}/", r.target);
            prop_assert!(r.files.iter().all(|f| f.path.starts_with(&prefix)));
            prop_assert!(!r.target.contains(".."));
        }
    }
}

/// A template set from in-memory files: `(path under the templates folder, contents)`.
fn set(files: &[(&str, &str)]) -> TemplateSet {
    TemplateSet::from_files(
        "t",
        files
            .iter()
            .map(|(p, c)| ((*p).to_owned(), c.as_bytes().to_vec()))
            .collect(),
    )
}

const MINIMAL: &str = r#"id: mini
title: {pt-BR: Mini, en: Mini}
description: {pt-BR: Mini, en: Mini}
approval: none
target: "apps/{{ app }}"
parameters:
  - name: app
    type: string
    title: {pt-BR: App, en: App}
"#;

#[test]
fn a_value_that_would_leave_the_target_is_refused_as_an_unsafe_path() {
    // `app` has no format, so only the path formatter stands between it and the file system.
    let s = set(&[
        ("mini/template.yaml", MINIMAL),
        ("mini/skeleton/{{ app }}.txt", "hello {{ app }}\n"),
    ]);
    let t = s.get("mini").unwrap();

    for hostile in [
        "../../etc",
        "/etc",
        "a/b",
        "..",
        ".",
        ".git",
        "a\\b",
        "a b",
        "é",
    ] {
        let e = t.render(&json!({"app": hostile}), &ctx()).unwrap_err();
        assert_eq!(
            field_codes(e),
            [("app".to_owned(), ErrorCode::UnsafePath)],
            "{hostile}"
        );
    }
    let ok = t.render(&json!({"app": "web.v2"}), &ctx()).unwrap();
    assert_eq!(paths(&ok), ["apps/web.v2/web.v2.txt"]);
    assert_eq!(ok.files[0].content, "hello web.v2\n");
}

#[test]
fn a_template_whose_output_lacks_a_name_or_carries_secret_data_is_a_template_error() {
    let s = set(&[
        ("mini/template.yaml", MINIMAL),
        (
            "mini/skeleton/bad.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  password: x\n",
        ),
    ]);

    let e = s
        .get("mini")
        .unwrap()
        .render(&json!({"app": "a"}), &ctx())
        .unwrap_err();

    let RenderError::Template(m) = e else {
        panic!("expected a template error")
    };
    assert!(
        m.contains("apps/a/bad.yaml: document 1: no metadata.name"),
        "{m}"
    );
    assert!(
        m.contains("apps/a/bad.yaml: document 2: a Secret with data or stringData"),
        "{m}"
    );
}

#[test]
fn a_typo_in_a_skeleton_is_a_template_error_with_its_file_and_line() {
    let s = set(&[
        ("mini/template.yaml", MINIMAL),
        (
            "mini/skeleton/x.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ ap }}\n",
        ),
    ]);

    let e = s
        .get("mini")
        .unwrap()
        .render(&json!({"app": "a"}), &ctx())
        .unwrap_err();

    let RenderError::Template(m) = e else {
        panic!("expected a template error")
    };
    assert!(
        m.starts_with("t/mini/skeleton/x.yaml:4: undefined value"),
        "{m}"
    );
}

#[test]
fn a_broken_template_is_reported_with_file_and_line_and_the_good_one_still_loads() {
    let dir = tempfile::tempdir().unwrap();
    let write = |p: &str, c: &str| {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c).unwrap();
    };
    write("mini/template.yaml", MINIMAL);
    write("mini/skeleton/a.txt", "{{ app }}\n");
    write(
        "broken/template.yaml",
        "id: broken\ntitle: {pt-BR: B, en: B}\ndescription: [oops\n",
    );
    write("broken/skeleton/a.txt", "x\n");
    write(
        "badjinja/template.yaml",
        &MINIMAL.replace("id: mini", "id: badjinja"),
    );
    write("badjinja/skeleton/a.txt", "line 1\n{% if app %}\nno end\n");
    write(
        "badparam/template.yaml",
        &MINIMAL
            .replace("id: mini", "id: badparam")
            .replace("type: string", "type: integer\n    pattern: \"(\""),
    );
    write("badparam/skeleton/a.txt", "x\n");

    let s = TemplateSet::load(&[dir.path().to_path_buf()]);

    let ids: Vec<&str> = s
        .templates()
        .iter()
        .map(|t| t.manifest().id.as_str())
        .collect();
    assert_eq!(ids, ["mini"]);
    let root = dir.path().display().to_string();
    let shown: Vec<String> = s
        .problems()
        .iter()
        .map(|d| d.to_string().replace(&root, "ROOT"))
        .collect();
    assert_eq!(shown.len(), 4, "{shown:#?}");
    assert!(
        shown[0].starts_with("ROOT/badjinja/skeleton/a.txt:3:1: syntax error"),
        "{shown:#?}"
    );
    assert!(
        shown.iter().any(|l| l.starts_with(
            "ROOT/badparam/template.yaml:7:5: parameter `app`: `pattern` applies to strings only"
        )),
        "{shown:#?}"
    );
    assert!(
        shown.iter().any(|l| l.starts_with(
            "ROOT/badparam/template.yaml:7:5: parameter `app`: pattern does not compile"
        )),
        "{shown:#?}"
    );
    assert!(
        shown
            .iter()
            .any(|l| l.starts_with("ROOT/broken/template.yaml:3:14:")),
        "{shown:#?}"
    );
}

#[test]
fn a_template_folder_id_must_match_and_needs_a_skeleton() {
    let s = set(&[
        ("other/template.yaml", MINIMAL),
        ("other/skeleton/a.txt", "x"),
        (
            "empty/template.yaml",
            &MINIMAL.replace("id: mini", "id: empty"),
        ),
    ]);

    let shown: Vec<String> = s.problems().iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "t/empty/skeleton: no files under skeleton/: the template would render nothing",
            "t/other/template.yaml:1:1: id `mini` differs from the folder name `other`",
        ]
    );
    assert!(s.templates().is_empty());
}

#[test]
fn a_later_folder_replaces_a_template_with_the_same_id() {
    let first = set(&[
        ("mini/template.yaml", MINIMAL),
        ("mini/skeleton/a.txt", "one {{ app }}"),
    ]);
    let second = set(&[
        ("mini/template.yaml", MINIMAL),
        ("mini/skeleton/a.txt", "two {{ app }}"),
    ]);

    let merged = first.with_overrides(second);

    let r = merged
        .get("mini")
        .unwrap()
        .render(&json!({"app": "x"}), &ctx())
        .unwrap();
    assert_eq!(merged.templates().len(), 1);
    assert_eq!(r.files[0].content, "two x");
}

#[test]
fn yaml_quoting_escapes_everything_that_could_end_the_scalar() {
    let mut s = String::new();

    render::yaml_quote(
        &mut s,
        "a\"b\\c\nd\te\u{85}f\u{2028}g\u{1b}h\u{FEFF}i\u{10FFFF}é",
    );

    assert_eq!(
        s,
        "\"a\\\"b\\\\c\\nd\\te\\u0085f\\u2028g\\u001Bh\\uFEFFi\u{10FFFF}é\""
    );
    let back: String = serde_saphyr::from_str(&s).unwrap();
    assert_eq!(
        back,
        "a\"b\\c\nd\te\u{85}f\u{2028}g\u{1b}h\u{FEFF}i\u{10FFFF}é"
    );
}

#[test]
fn dns_label_makes_any_text_a_label() {
    assert_eq!(
        render::dns_label("Alice.Souza@Example.org"),
        "alice-souza-example-org"
    );
    assert_eq!(render::dns_label("../../"), "x");
    assert_eq!(render::dns_label(&"a".repeat(100)).len(), 63);
}

#[test]
fn unsafe_rendered_paths_are_recognised() {
    for bad in [
        "",
        "/a",
        "a//b",
        "a/../b",
        "./a",
        "a\\b",
        "a/.git/x",
        "c:/x",
        "a\nb",
        "a\u{202E}b",
    ] {
        assert!(render::check_path(bad).is_err(), "{bad:?}");
    }
    for ok in ["a", "a/b.yaml", "clusters/gpu-sp-01/workspaces/nlp"] {
        assert!(render::check_path(ok).is_ok(), "{ok:?}");
    }
}

/// The CloudNativePG schemas the postgres-cnpg output must follow (see the fixtures' README).
const CRDS: [&str; 4] = [
    include_str!("../../../../tests/fixtures/crds/clusters.json"),
    include_str!("../../../../tests/fixtures/crds/databases.json"),
    include_str!("../../../../tests/fixtures/crds/scheduledbackups.json"),
    include_str!("../../../../tests/fixtures/crds/objectstores.json"),
];

/// The schema for a document's apiVersion and kind.
fn crd_schema(doc: &Json) -> Json {
    CRDS.iter()
        .map(|s| serde_json::from_str::<Json>(s).unwrap())
        .find(|c| {
            doc["apiVersion"]
                == json!(format!(
                    "{}/{}",
                    c["group"].as_str().unwrap(),
                    c["version"].as_str().unwrap()
                ))
                && doc["kind"] == c["kind"]
        })
        .map(|c| c["schema"].clone())
        .unwrap_or_else(|| panic!("no schema for {} {}", doc["apiVersion"], doc["kind"]))
}

/// Checks `v` against a Kubernetes structural schema as the API server would, except that a
/// field the schema does not know is an error here (the API server would silently prune it,
/// which is how a misspelt field goes unnoticed).
fn structural(v: &Json, schema: &Json, at: &str, errors: &mut Vec<String>) {
    if schema["x-kubernetes-int-or-string"] == json!(true) {
        if !(v.is_string() || v.is_i64() || v.is_u64()) {
            errors.push(format!("{at}: expected an integer or a string, got {v}"));
        }
        return;
    }
    let ok = match schema["type"].as_str() {
        Some("object") => v.is_object(),
        Some("array") => v.is_array(),
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        _ => true,
    };
    if !ok {
        errors.push(format!("{at}: expected {}, got {v}", schema["type"]));
        return;
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(v)
    {
        errors.push(format!("{at}: {v} is not one of {allowed:?}"));
    }
    if let (Some(p), Some(s)) = (schema["pattern"].as_str(), v.as_str())
        && !regex::Regex::new(p).unwrap().is_match(s)
    {
        errors.push(format!("{at}: {s:?} does not match {p}"));
    }
    if let (Some(min), Some(n)) = (schema["minimum"].as_f64(), v.as_f64())
        && n < min
    {
        errors.push(format!("{at}: {n} is below {min}"));
    }
    if let (Some(max), Some(n)) = (schema["maximum"].as_f64(), v.as_f64())
        && n > max
    {
        errors.push(format!("{at}: {n} is above {max}"));
    }
    if let Some(obj) = v.as_object() {
        for r in schema["required"].as_array().into_iter().flatten() {
            if !obj.contains_key(r.as_str().unwrap()) {
                errors.push(format!("{at}: missing {r}"));
            }
        }
        let props = schema["properties"].as_object();
        let open = schema["x-kubernetes-preserve-unknown-fields"] == json!(true);
        for (k, child) in obj {
            let here = format!("{at}.{k}");
            if let Some(s) = props.and_then(|p| p.get(k)) {
                structural(child, s, &here, errors);
            } else if let Some(s) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                structural(child, s, &here, errors);
            } else if !open && props.is_some() {
                errors.push(format!("{here}: not in the schema"));
            }
        }
    }
    if let (Some(items), Some(schema)) = (v.as_array(), schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            structural(item, schema, &format!("{at}[{i}]"), errors);
        }
    }
}

fn schema_errors(doc: &Json) -> Vec<String> {
    let mut errors = Vec::new();
    let schema = crd_schema(doc);
    structural(doc, &schema, "", &mut errors);
    errors
}

#[test]
fn every_postgres_cnpg_object_follows_the_cloudnativepg_schemas() {
    let r = render(
        "postgres-cnpg",
        database(
            json!({"instances": 5, "storage_gib": 1024, "storage_class": "linstor-ssd",
                        "owner": "corpus_owner", "databases": ["corpus", "corpus_raw"],
                        "backup_destination": "s3://pg-backups/nlp/",
                        "backup_endpoint": "http://rgw.internal:7480",
                        "backup_schedule": "daily", "backup_retention_days": 365}),
        ),
    )
    .unwrap();

    let mut kinds = Vec::new();
    for f in &r.files {
        for doc in docs(&r, f.path.rsplit('/').next().unwrap()) {
            kinds.push(doc["kind"].as_str().unwrap().to_owned());
            let errors = schema_errors(&doc);
            assert!(errors.is_empty(), "{}: {errors:#?}", f.path);
        }
    }
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "Cluster",
            "Database",
            "Database",
            "ObjectStore",
            "ScheduledBackup"
        ]
    );
}

#[test]
fn the_schema_check_catches_a_misspelt_or_mistyped_field() {
    let r = render("postgres-cnpg", database(json!({}))).unwrap();
    let mut cluster = doc(&r, "cluster.yaml");
    cluster["spec"]["instance"] = json!(3);
    cluster["spec"]["managed"]["roles"][0]["login"] = json!("yes");
    cluster["spec"]["managed"]["roles"][0]["ensure"] = json!("exists");

    let errors = schema_errors(&cluster);

    assert_eq!(
        errors,
        [
            ".spec.instance: not in the schema",
            ".spec.managed.roles[0].ensure: \"exists\" is not one of [String(\"present\"), String(\"absent\")]",
            ".spec.managed.roles[0].login: expected \"boolean\", got \"yes\"",
        ]
    );
}

#[test]
fn a_template_that_loops_without_end_runs_out_of_fuel_quickly() {
    let s = set(&[
        ("mini/template.yaml", MINIMAL),
        (
            "mini/skeleton/a.txt",
            "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}",
        ),
    ]);
    let started = std::time::Instant::now();

    let e = s
        .get("mini")
        .unwrap()
        .render(&json!({"app": "a"}), &ctx())
        .unwrap_err();

    let RenderError::Template(m) = e else {
        panic!("expected a template error")
    };
    assert!(m.contains("fuel"), "{m}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn hidden_files_and_files_beside_the_templates_are_neither_loaded_nor_proposed() {
    let s = set(&[
        ("mini/template.yaml", MINIMAL),
        ("mini/skeleton/a.txt", "{{ app }}"),
        ("mini/skeleton/.gitkeep", ""),
        ("mini/skeleton/.hidden/b.txt", "{{ nope }}"),
        (".github/workflows/x.yaml", "not a template"),
        ("README.md", "How to write a template"),
    ]);

    let r = s
        .get("mini")
        .unwrap()
        .render(&json!({"app": "a"}), &ctx())
        .unwrap();

    assert_eq!(s.problems(), &[] as &[Diagnostic]);
    assert_eq!(paths(&r), ["apps/a/a.txt"]);
}

#[test]
fn a_template_set_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync + 'static>(_: &T) {}

    shareable(&*SHIPPED);
    let handle = std::thread::spawn(|| SHIPPED.templates().len());

    assert_eq!(handle.join().unwrap(), 2);
}

#[test]
fn two_objects_with_the_same_kind_namespace_and_name_are_refused() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n  namespace: ns\n";
    let files = vec![
        FileChange {
            path: "t/a.yaml".into(),
            content: cm.into(),
        },
        FileChange {
            path: "t/b.yaml".into(),
            content: format!("{cm}---\n{}", cm.replace("ns\n", "other\n")),
        },
    ];

    let problems = render::check_manifests(&files);

    assert_eq!(
        problems,
        ["t/b.yaml: document 1: ConfigMap \"same\" is already defined in t/a.yaml: document 1"]
    );
}

#[test]
fn a_value_printed_into_markdown_shows_as_written_and_never_becomes_a_link_html_or_a_cell() {
    let r = render(
        "gpu-workspace",
        workspace(json!({"purpose": "see [docs](javascript:alert(1)) <img src=x onerror=alert(1)> | a*b*_c_ `x` #1 & ok-1.2"})),
    )
    .unwrap();

    let readme = &r
        .files
        .iter()
        .find(|f| f.path.ends_with("/README.md"))
        .unwrap()
        .content;
    let line = readme
        .lines()
        .find(|l| l.starts_with("Purpose: "))
        .unwrap_or_else(|| panic!("{readme}"));
    assert_eq!(
        line,
        r"Purpose: see \[docs\](javascript:alert(1)) \<img src=x onerror=alert(1)\> \| a\*b\*\_c\_ \`x\` \#1 \& ok-1.2"
    );
    // The namespace's YAML keeps the value exactly.
    assert_eq!(
        doc(&r, "namespace.yaml")["metadata"]["annotations"]["mirante.dev/purpose"],
        "see [docs](javascript:alert(1)) <img src=x onerror=alert(1)> | a*b*_c_ `x` #1 & ok-1.2"
    );
}

#[test]
fn a_database_goes_under_the_chosen_clusters_gitops_folder() {
    let r = render(
        "postgres-cnpg",
        database(json!({"cluster": "k3s-franca", "namespace": "team-a"})),
    )
    .unwrap();
    assert_eq!(r.target, "apps/franca/k3s-franca/databases/team-a/corpus");
    assert!(r.files.iter().all(|f| {
        f.path
            .starts_with("apps/franca/k3s-franca/databases/team-a/corpus/")
    }));
}

#[test]
fn a_cluster_the_catalog_does_not_record_is_refused_as_a_database_target() {
    assert_eq!(
        field_codes(
            render("postgres-cnpg", database(json!({"cluster": "kube-system"}))).unwrap_err()
        ),
        [("cluster".to_owned(), ErrorCode::NotAnOption)]
    );
}
