use serde_json::json;

use super::*;

fn l(s: &str) -> Localized {
    Localized {
        pt_br: s.to_owned(),
        en: s.to_owned(),
    }
}

fn param(name: &str, kind: ParamType) -> Parameter {
    Parameter {
        name: name.to_owned(),
        kind,
        title: l(name),
        description: None,
        required: false,
        default: None,
        choices: None,
        minimum: None,
        maximum: None,
        min_length: None,
        max_length: None,
        pattern: None,
        pattern_message: None,
        format: None,
        items: None,
        min_items: None,
        max_items: None,
        unique_items: false,
        options: None,
        maximum_from: None,
        cluster_from: None,
    }
}

fn workspace() -> TemplateManifest {
    TemplateManifest {
        id: "gpu-workspace".into(),
        title: l("GPU"),
        description: l("GPU"),
        access: Access::default(),
        approval: Approval::Required,
        target: "clusters/{{ cluster }}/{{ name }}".into(),
        slug: None,
        parameters: vec![
            Parameter {
                required: true,
                format: Some(Format::DnsLabel),
                max_length: Some(40),
                ..param("name", ParamType::String)
            },
            Parameter {
                required: true,
                options: Some(OptionSource::GpuClusters),
                ..param("cluster", ParamType::String)
            },
            Parameter {
                default: Some(json!(1)),
                minimum: Some(1.0),
                maximum: Some(8.0),
                maximum_from: Some("cluster".into()),
                ..param("gpus", ParamType::Integer)
            },
            Parameter {
                choices: Some(vec![json!("small"), json!("large")]),
                default: Some(json!("small")),
                ..param("size", ParamType::String)
            },
            Parameter {
                items: Some(ItemSchema {
                    kind: ParamType::String,
                    min_length: None,
                    max_length: Some(30),
                    pattern: Some("^[a-z][a-z0-9_]*$".into()),
                    pattern_message: Some(Localized {
                        pt_br: "Letras minúsculas, dígitos e _.".into(),
                        en: "Lowercase letters, digits and _.".into(),
                    }),
                    format: None,
                    choices: None,
                }),
                min_items: Some(1),
                max_items: Some(3),
                unique_items: true,
                default: Some(json!(["app"])),
                ..param("databases", ParamType::Array)
            },
            param("backup", ParamType::Boolean),
            Parameter {
                pattern: Some("^[a-z ]*$".into()),
                ..param("note", ParamType::String)
            },
        ],
        version: None,
        day_two: DayTwo::default(),
    }
}

fn catalog() -> CatalogContext {
    CatalogContext {
        gpu_clusters: vec![CatalogOption {
            value: "gpu-sp-01".into(),
            label: "gpu-sp-01".into(),
            detail: "1× NVIDIA RTX A5000".into(),
            capacity: Some(1),
            kubernetes: None,
            folder: Some("clusters/gpu-sp-01".into()),
        }],
        clusters: Vec::new(),
        namespaces: Vec::new(),
        any_namespace: false,
    }
}

fn codes(r: Result<Map<String, Value>, Vec<FieldError>>) -> Vec<(String, ErrorCode)> {
    r.expect_err("expected errors")
        .into_iter()
        .map(|e| (e.field, e.code))
        .collect()
}

#[test]
fn the_example_manifest_has_no_problems() {
    assert_eq!(workspace().problems(), vec![]);
}

#[test]
fn valid_values_come_back_with_defaults_applied_and_absent_ones_as_null() {
    let out = validate(
        &workspace(),
        &json!({"name": "nlp", "cluster": "gpu-sp-01"}),
        &catalog(),
    )
    .unwrap();

    assert_eq!(
        Value::Object(out),
        json!({"name": "nlp", "cluster": "gpu-sp-01", "gpus": 1, "size": "small",
               "databases": ["app"], "backup": null, "note": null})
    );
}

#[test]
fn every_invalid_field_is_reported_at_once() {
    let r = validate(
        &workspace(),
        &json!({"name": "Not A Label", "cluster": "nowhere", "gpus": 99, "size": "huge",
                "backup": "yes", "extra": 1}),
        &catalog(),
    );

    let mut got = codes(r);
    got.sort();
    assert_eq!(
        got,
        vec![
            ("backup".into(), ErrorCode::WrongType),
            ("cluster".into(), ErrorCode::NotAnOption),
            ("extra".into(), ErrorCode::UnknownField),
            ("gpus".into(), ErrorCode::TooLarge),
            ("name".into(), ErrorCode::NotDnsLabel),
            ("size".into(), ErrorCode::NotInEnum),
        ]
    );
}

#[test]
fn more_gpus_than_the_chosen_cluster_has_is_refused_naming_the_capacity() {
    let errors = validate(
        &workspace(),
        &json!({"name": "nlp", "cluster": "gpu-sp-01", "gpus": 2}),
        &catalog(),
    )
    .unwrap_err();

    assert_eq!(errors.len(), 1);
    let e = &errors[0];
    assert_eq!(e.field, "gpus");
    assert_eq!(e.code, ErrorCode::ExceedsCapacity);
    assert_eq!(e.args["capacity"], json!(1));
    assert_eq!(e.args["option"], json!("gpu-sp-01"));
    assert_eq!(
        e.message,
        "2 asked for, but gpu-sp-01 has 1 (1× NVIDIA RTX A5000)"
    );
}

#[test]
fn a_missing_required_value_is_refused() {
    let got = codes(validate(
        &workspace(),
        &json!({"cluster": "gpu-sp-01"}),
        &catalog(),
    ));

    assert_eq!(got, vec![("name".into(), ErrorCode::Required)]);
}

#[test]
fn values_that_are_not_an_object_are_refused() {
    let got = codes(validate(&workspace(), &json!(["name"]), &catalog()));

    assert_eq!(got, vec![(String::new(), ErrorCode::NotAnObject)]);
}

#[test]
fn newlines_and_invisible_characters_are_refused_in_any_string() {
    for hostile in ["a\nb: c", "a\u{202E}b", "x\u{200B}", "\u{1b}[31m", "a\tb"] {
        let got = codes(validate(
            &workspace(),
            &json!({"name": "ok", "cluster": "gpu-sp-01", "note": hostile}),
            &catalog(),
        ));
        assert_eq!(
            got,
            vec![("note".into(), ErrorCode::ForbiddenCharacter)],
            "{hostile:?}"
        );
    }
}

#[test]
fn overlong_strings_are_refused_even_without_a_max_length() {
    let long = "a".repeat(DEFAULT_MAX_LENGTH as usize + 1);

    let errors = validate(
        &workspace(),
        &json!({"name": "ok", "cluster": "gpu-sp-01", "note": long}),
        &catalog(),
    )
    .unwrap_err();

    assert_eq!(errors[0].code, ErrorCode::TooLong);
    assert_eq!(errors[0].args["max_length"], json!(DEFAULT_MAX_LENGTH));
}

#[test]
fn array_items_are_checked_one_by_one_with_their_index() {
    let errors = validate(
        &workspace(),
        &json!({"name": "ok", "cluster": "gpu-sp-01", "databases": ["app", "Bad-Name"]}),
        &catalog(),
    )
    .unwrap_err();

    assert_eq!(errors[0].code, ErrorCode::Pattern);
    assert_eq!(errors[0].args["index"], json!(1));
}

#[test]
fn a_pattern_with_words_says_them_in_both_languages_instead_of_the_expression() {
    let errors = validate(
        &workspace(),
        &json!({"name": "ok", "cluster": "gpu-sp-01", "databases": ["Bad-Name"]}),
        &catalog(),
    )
    .unwrap_err();

    assert_eq!(
        errors[0].message,
        "item 1: does not have the expected form: Lowercase letters, digits and _."
    );
    assert_eq!(
        errors[0].args["hint"],
        json!({"pt-BR": "Letras minúsculas, dígitos e _.", "en": "Lowercase letters, digits and _."})
    );
    assert_eq!(
        errors[0].args["pattern"], "^[a-z][a-z0-9_]*$",
        "kept for API clients"
    );
}

#[test]
fn repeated_and_too_many_items_are_refused() {
    let dup = codes(validate(
        &workspace(),
        &json!({"name": "ok", "cluster": "gpu-sp-01", "databases": ["a", "a"]}),
        &catalog(),
    ));
    let many = codes(validate(
        &workspace(),
        &json!({"name": "ok", "cluster": "gpu-sp-01", "databases": ["a", "b", "c", "d"]}),
        &catalog(),
    ));

    assert_eq!(dup, vec![("databases".into(), ErrorCode::DuplicateItem)]);
    assert_eq!(many, vec![("databases".into(), ErrorCode::TooManyItems)]);
}

#[test]
fn whole_floats_count_as_integers_and_fractions_do_not() {
    let ok = validate(
        &workspace(),
        &json!({"name": "ok", "cluster": "gpu-sp-01", "gpus": 1.0}),
        &catalog(),
    )
    .unwrap();
    let bad = codes(validate(
        &workspace(),
        &json!({"name": "ok", "cluster": "gpu-sp-01", "gpus": 1.5}),
        &catalog(),
    ));

    assert_eq!(ok["gpus"], json!(1));
    assert_eq!(bad, vec![("gpus".into(), ErrorCode::WrongType)]);
}

#[test]
fn a_numeric_string_is_not_an_integer() {
    let got = codes(validate(
        &workspace(),
        &json!({"name": "ok", "cluster": "gpu-sp-01", "gpus": "1"}),
        &catalog(),
    ));

    assert_eq!(got, vec![("gpus".into(), ErrorCode::WrongType)]);
}

#[test]
fn gpu_clusters_are_the_catalog_items_that_record_gpus() {
    use crate::model::{Catalog, Gpu, Item, ItemKind, State};
    let item = |id: &str, gpus: Vec<Gpu>| Item {
        id: id.into(),
        name: format!("{id} name").into(),
        kind: ItemKind::Component,
        layer: "l8b".into(),
        sites: [].into(),
        hosts: [].into(),
        state: State::Validated,
        qualifier: None,
        notes: "".into(),
        evidence: [].into(),
        iac: None,
        reason: None,
        criterion: None,
        depends_on: [].into(),
        decisions: [].into(),
        phase: None,
        gpus: gpus.into(),
        kubernetes: None,
        gitops: None,
        tags: [].into(),
    };
    let gpu = |model: &str, count| Gpu {
        model: model.into(),
        count: Some(count),
    };
    let catalog = Catalog {
        items: vec![
            item("no-gpus", vec![]),
            item("two-kinds", vec![gpu("A5000", 2), gpu("A5500", 1)]),
            item("zero", vec![gpu("A5000", 0)]),
        ],
        ..Catalog::default()
    };
    let snapshot = Snapshot::new(catalog, String::new(), None);

    let ctx = CatalogContext::from_snapshot(&snapshot);

    assert_eq!(
        ctx.gpu_clusters,
        vec![CatalogOption {
            value: "two-kinds".into(),
            label: "two-kinds name".into(),
            detail: "2× A5000, 1× A5500".into(),
            capacity: Some(3),
            kubernetes: None,
            folder: Some("clusters/two-kinds".into()),
        }]
    );
}

#[test]
fn manifest_problems_name_the_parameter() {
    let mut m = workspace();
    m.parameters.push(Parameter {
        pattern: Some("(".into()),
        ..param("broken", ParamType::String)
    });
    m.parameters.push(Parameter {
        minimum: Some(1.0),
        ..param("flag", ParamType::Boolean)
    });
    m.parameters.push(param("now", ParamType::String));
    m.parameters.push(Parameter {
        default: Some(json!(10)),
        maximum: Some(5.0),
        ..param("n", ParamType::Integer)
    });
    m.parameters.push(param("name", ParamType::String));

    let problems: Vec<(Option<String>, String)> = m
        .problems()
        .into_iter()
        .map(|p| (p.parameter, p.message))
        .collect();

    let has = |name: &str, text: &str| {
        problems
            .iter()
            .any(|(p, m)| p.as_deref() == Some(name) && m.contains(text))
    };
    assert!(has("broken", "pattern does not compile"), "{problems:?}");
    assert!(
        has("flag", "`minimum` applies to numbers only"),
        "{problems:?}"
    );
    assert!(has("now", "reserved"), "{problems:?}");
    assert!(
        has("n", "the default is invalid: must be at most 5"),
        "{problems:?}"
    );
    assert!(has("name", "declared twice"), "{problems:?}");
}

#[test]
fn access_lets_listed_roles_and_groups_and_admins_in() {
    let mut m = workspace();
    m.access = Access {
        roles: vec![],
        groups: vec!["gpu-users".into()],
    };

    assert!(m.may_use(Role::Admin, &[]));
    assert!(m.may_use(Role::Researcher, &["gpu-users".into()]));
    assert!(!m.may_use(Role::Researcher, &["others".into()]));
    m.access = Access::default();
    assert!(m.may_use(Role::Researcher, &[]));
}

#[test]
fn dns_labels_follow_rfc_1123() {
    for ok in ["a", "a-b", "0a", &"a".repeat(63)] {
        assert!(is_dns_label(ok), "{ok}");
    }
    for bad in ["", "-a", "a-", "A", "a_b", "a.b", &"a".repeat(64), "ａ"] {
        assert!(!is_dns_label(bad), "{bad}");
    }
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::super::*;
    use super::{catalog, workspace};

    /// Any JSON value: scalars of every type, nested arrays and objects, keys that are often
    /// parameter names.
    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            "\\PC{0,40}".prop_map(Value::from),
            any::<String>().prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("name".to_owned()),
                        Just("cluster".to_owned()),
                        Just("gpus".to_owned()),
                        Just("databases".to_owned()),
                        Just("note".to_owned()),
                        "[a-z]{1,8}",
                    ],
                    inner,
                    0..6
                )
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Validation never panics, and what it accepts it accepts again unchanged.
        #[test]
        fn validation_never_panics_and_its_output_validates_to_itself(values in any_json()) {
            if let Ok(normalized) = validate(&workspace(), &values, &catalog()) {
                let again = validate(&workspace(), &Value::Object(normalized.clone()), &catalog());
                prop_assert_eq!(again, Ok(normalized));
            }
        }

        /// Every error names a parameter or an unknown key of the input, and no message holds a
        /// control character.
        #[test]
        fn every_error_names_a_field_and_prints_safely(values in any_json()) {
            if let Err(errors) = validate(&workspace(), &values, &catalog()) {
                prop_assert!(!errors.is_empty());
                for e in errors {
                    prop_assert!(!e.message.chars().any(is_forbidden_char), "{:?}", e.message);
                    prop_assert!(!e.field.chars().any(is_forbidden_char), "{:?}", e.field);
                }
            }
        }
    }
}

#[test]
fn a_researcher_picks_one_of_their_own_namespaces_and_an_admin_any_well_formed_one() {
    let manifest = TemplateManifest {
        id: "db".into(),
        target: "databases/{{ namespace }}".into(),
        parameters: vec![Parameter {
            required: true,
            format: Some(Format::DnsLabel),
            options: Some(OptionSource::OwnNamespaces),
            ..param("namespace", ParamType::String)
        }],
        ..workspace()
    };
    let mine = vec![CatalogOption {
        value: "ws-nlp".into(),
        label: "ws-nlp".into(),
        detail: "gpu-sp-01".into(),
        capacity: None,
        kubernetes: None,
        folder: None,
    }];
    let researcher = catalog().with_namespaces(Some(mine));
    let admin = catalog().with_namespaces(None);
    let ns = |n: &str| json!({ "namespace": n });

    assert!(validate(&manifest, &ns("ws-nlp"), &researcher).is_ok());
    for other in ["kube-system", "ws-someone-else"] {
        assert_eq!(
            codes(validate(&manifest, &ns(other), &researcher)),
            [("namespace".to_owned(), ErrorCode::NotAnOption)],
            "{other}"
        );
    }
    assert!(validate(&manifest, &ns("kube-system"), &admin).is_ok());
    assert_eq!(
        codes(validate(&manifest, &ns("Not A Label"), &admin)),
        [("namespace".to_owned(), ErrorCode::NotDnsLabel)],
        "any namespace, but still a namespace"
    );
}

#[test]
fn a_researchers_namespace_must_be_on_the_cluster_they_chose() {
    let manifest = TemplateManifest {
        id: "db".into(),
        target: "databases/{{ namespace }}".into(),
        parameters: vec![
            Parameter {
                required: true,
                options: Some(OptionSource::Clusters),
                ..param("cluster", ParamType::String)
            },
            Parameter {
                required: true,
                format: Some(Format::DnsLabel),
                options: Some(OptionSource::OwnNamespaces),
                cluster_from: Some("cluster".into()),
                ..param("namespace", ParamType::String)
            },
        ],
        ..workspace()
    };
    assert_eq!(manifest.problems(), vec![]);
    let cluster = |id: &str| CatalogOption {
        value: id.into(),
        label: id.into(),
        detail: String::new(),
        capacity: None,
        kubernetes: None,
        folder: Some(format!("apps/{id}")),
    };
    let namespace = |ns: &str, on: &str| CatalogOption {
        value: ns.into(),
        label: format!("{ns} ({on})"),
        detail: on.into(),
        capacity: None,
        kubernetes: None,
        folder: None,
    };
    let ctx = CatalogContext {
        clusters: vec![cluster("gpu-sp-01"), cluster("k3s-franca")],
        ..catalog()
    };
    let researcher = ctx
        .clone()
        .with_namespaces(Some(vec![namespace("ws-nlp", "gpu-sp-01")]));
    let admin = ctx.with_namespaces(None);
    let ask = |c: &str, n: &str| json!({ "cluster": c, "namespace": n });

    assert!(validate(&manifest, &ask("gpu-sp-01", "ws-nlp"), &researcher).is_ok());
    let refused = validate(&manifest, &ask("k3s-franca", "ws-nlp"), &researcher).unwrap_err();
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].code, ErrorCode::NotOnCluster);
    assert_eq!(refused[0].field, "namespace");
    assert_eq!(
        refused[0].message,
        "`ws-nlp` is not on k3s-franca, where you have no namespace"
    );
    assert_eq!(
        codes(validate(
            &manifest,
            &ask("elsewhere", "ws-nlp"),
            &researcher
        )),
        [("cluster".to_owned(), ErrorCode::NotAnOption)],
        "an unknown cluster is refused once, on its own field"
    );
    assert!(validate(&manifest, &ask("k3s-franca", "anything"), &admin).is_ok());
}

#[test]
fn cluster_from_must_name_a_cluster_parameter_and_sit_on_a_namespace_one() {
    let manifest = TemplateManifest {
        id: "db".into(),
        target: "databases/{{ namespace }}".into(),
        parameters: vec![
            Parameter {
                cluster_from: Some("namespace".into()),
                ..param("note", ParamType::String)
            },
            Parameter {
                options: Some(OptionSource::OwnNamespaces),
                cluster_from: Some("note".into()),
                ..param("namespace", ParamType::String)
            },
        ],
        ..workspace()
    };
    let messages: Vec<String> = manifest.problems().into_iter().map(|p| p.message).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("`clusterFrom` applies to `own-namespaces` parameters only")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m
                .contains("clusterFrom `note` must name a parameter with `options: gpu-clusters`")),
        "{messages:?}"
    );
}

#[test]
fn an_external_url_names_no_loopback_link_local_or_metadata_address() {
    let manifest = TemplateManifest {
        id: "db".into(),
        target: "databases/x".into(),
        parameters: vec![Parameter {
            format: Some(Format::ExternalUrl),
            ..param("backup_endpoint", ParamType::String)
        }],
        ..workspace()
    };
    let endpoint = |e: &str| json!({ "backup_endpoint": e });

    for ok in [
        "https://s3.sp.example.org",
        "http://10.20.0.5:9000/",
        "https://rgw.franca.example.org:8443",
        "http://[2001:db8::5]/",
    ] {
        assert!(
            validate(&manifest, &endpoint(ok), &catalog()).is_ok(),
            "{ok}"
        );
    }
    for internal in [
        "http://127.0.0.1:9000",
        "http://127.3.4.5/",
        "http://localhost:9000",
        "http://minio.localhost/",
        "http://LOCALHOST./",
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/",
        "http://0.0.0.0:9000",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[fe80::1]/",
        "http://2130706433/",
        "file:///etc/passwd",
        "gopher://s3.example.org",
        "https://user@s3.example.org",
        "not a url",
    ] {
        assert_eq!(
            codes(validate(&manifest, &endpoint(internal), &catalog())),
            [("backup_endpoint".to_owned(), ErrorCode::NotExternalUrl)],
            "{internal}"
        );
    }
}

#[test]
fn day_two_approval_follows_the_template_unless_its_day_two_policy_says_otherwise() {
    use crate::request::Action;
    let mut m = workspace();
    m.parameters.push(param("days", ParamType::Integer));
    assert!(m.needs_approval(Action::Create, None));
    assert!(
        m.needs_approval(Action::Update, None),
        "an update asks as the template does"
    );
    assert!(!m.needs_approval(Action::Extend, Some(90)));
    assert!(!m.needs_approval(Action::Remove, None));
    m.day_two = DayTwo {
        update: Some(Approval::None),
        extend_approval_over_days: Some(30),
        remove: Some(Approval::Required),
        ..DayTwo::default()
    };
    assert!(!m.needs_approval(Action::Update, None));
    assert!(
        !m.needs_approval(Action::Extend, Some(30)),
        "up to 30 days need no approval"
    );
    assert!(m.needs_approval(Action::Extend, Some(31)));
    assert!(m.needs_approval(Action::Remove, None));
    assert!(
        !m.problems()
            .iter()
            .any(|p| p.message.contains("extendApprovalOverDays"))
    );
    // The limit needs a `days` parameter to apply to.
    m.parameters.retain(|p| p.name != "days");
    assert!(
        m.problems()
            .iter()
            .any(|p| p.message.contains("extendApprovalOverDays")),
        "{:?}",
        m.problems()
    );
}
