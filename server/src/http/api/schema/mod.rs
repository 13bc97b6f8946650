//! OpenAPI schemas of the catalog types the API returns.
//!
//! The API serializes the domain types themselves (one name for one thing: YAML, Rust and
//! JSON agree). The domain crate stays free of HTTP concerns, so their schemas are described
//! here, field for field; a test serializes fully populated domain values and checks that the
//! properties match exactly, so a field added to the model and not here fails the build's
//! tests rather than going undocumented.
//!
//! - [`catalog`]: items, layers, sites, decisions, tasks, the overview and the catalog's source.
//! - [`roadmap`]: the roadmap and the consistency lint's findings.
//! - [`resources`]: what self-service requests made.

mod catalog;
mod resources;
mod roadmap;

pub(crate) use self::{catalog::*, resources::*, roadmap::*};

#[cfg(test)]
mod tests {
    use mirante_domain::{
        Decision, Evidence, Gitops, Gpu, Host, HostGroup, IacRef, Item, ItemKind, KubernetesAccess,
        KubernetesOidc, Layer, LayerKind, Priority, Qualifier, Section, Site, State, Task,
        TaskKind,
    };
    use serde_json::Value;
    use utoipa::{
        PartialSchema,
        openapi::{RefOr, Schema},
    };

    /// The property names of an object schema.
    fn properties<T: PartialSchema>() -> Vec<String> {
        match T::schema() {
            RefOr::T(Schema::Object(o)) => {
                let mut p: Vec<String> = o.properties.keys().cloned().collect();
                p.sort();
                p
            }
            _ => panic!("not an object schema"),
        }
    }

    fn keys(v: &Value) -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    }

    fn item() -> Item {
        Item {
            id: "i".into(),
            name: "I".into(),
            kind: ItemKind::Component,
            layer: "l0".into(),
            sites: ["sp".into()].into(),
            hosts: ["h".into()].into(),
            state: State::Validated,
            qualifier: Some(Qualifier::Partial),
            notes: "n".into(),
            evidence: [Evidence::Reference {
                text: "t".into(),
                url: Some("u".into()),
            }]
            .into(),
            iac: Some(IacRef {
                path: "p".into(),
                key: Some("k".into()),
            }),
            reason: Some("r".into()),
            criterion: Some("c".into()),
            depends_on: ["d".into()].into(),
            decisions: ["x".into()].into(),
            phase: Some("mvp".into()),
            gpus: [Gpu {
                model: "A5000".into(),
                count: Some(1),
            }]
            .into(),
            kubernetes: Some(Box::new(KubernetesAccess {
                api: "https://k".into(),
                ca: None,
                oidc: KubernetesOidc {
                    issuer: "https://i".into(),
                    client_id: "c".into(),
                    username_prefix: "oidc:".into(),
                    groups_prefix: "oidc:".into(),
                },
            })),
            gitops: Some(Box::new(Gitops {
                folder: "apps/sp/k".into(),
            })),
            tags: ["t".into()].into(),
        }
    }

    #[test]
    fn kubernetes_access_schemas_match_what_the_catalog_serializes() {
        let item = serde_json::to_value(item()).unwrap();
        assert_eq!(
            keys(&item["kubernetes"]),
            properties::<super::KubernetesAccess>()
        );
        assert_eq!(
            keys(&item["kubernetes"]["oidc"]),
            properties::<super::KubernetesOidc>()
        );
        assert_eq!(keys(&item["gitops"]), properties::<super::Gitops>());
    }

    #[test]
    fn roadmap_schemas_match_what_the_roadmap_serializes() {
        let catalog = mirante_domain::load_files(vec![(
            "c.yaml".to_owned(),
            "layers: [{id: l0, kind: layer, number: '0', name: L}]\n\
             phases: [{id: mvp, name: MVP, order: 1}]\n\
             items:\n\
             - {id: a, name: A, kind: component, layer: l0, state: desired}\n\
             - {id: b, name: B, kind: component, layer: l0, state: desired, depends_on: [a],\n\
                phase: mvp, sites: []}\n\
             tasks: [{id: t, title: T, layer: l0, after: [a]}]\n"
                .to_owned(),
        )])
        .unwrap()
        .into_snapshot(None);
        let r = mirante_domain::roadmap::Roadmap::of(&catalog);
        let json = serde_json::to_value(&r).unwrap();

        assert_eq!(keys(&json), properties::<super::Roadmap>());
        assert_eq!(keys(&json["items"][1]), properties::<super::RoadmapItem>());
        assert_eq!(
            keys(&json["items"][1]["blocked_by"][0]),
            properties::<super::Blocker>()
        );
        assert_eq!(keys(&json["tasks"][0]), properties::<super::RoadmapTask>());
        assert_eq!(
            keys(&json["phases"][0]),
            properties::<super::RoadmapPhase>()
        );
        assert_eq!(
            keys(&json["progress"]),
            properties::<super::RoadmapProgress>()
        );
        assert_eq!(
            keys(&json["progress"]["layers"][0]),
            properties::<super::Progress>()
        );
    }

    #[test]
    fn the_finding_schema_is_the_finding_plus_its_link() {
        let item = item();
        let catalog = mirante_domain::Catalog {
            items: vec![Item {
                state: State::Declared,
                iac: None,
                ..item
            }],
            ..Default::default()
        };
        let options = mirante_domain::lint::LintOptions {
            today: "2026-01-01".parse().unwrap(),
            stale_after_days: 1,
        };
        let finding = mirante_domain::lint::lint(&catalog, &options).remove(0);
        let view = crate::http::api::roadmap::FindingView {
            link: "/items/i".into(),
            finding,
        };

        assert_eq!(
            keys(&serde_json::to_value(view).unwrap()),
            properties::<super::Finding>()
        );
    }

    #[test]
    fn item_schema_lists_exactly_the_fields_an_item_serializes() {
        let json = serde_json::to_value(item()).unwrap();

        assert_eq!(keys(&json), properties::<super::Item>());
    }

    #[test]
    fn layer_decision_and_task_schemas_match_their_serialized_fields() {
        let layer = Layer {
            id: "l0".into(),
            kind: LayerKind::Layer,
            number: "0".into(),
            name: "L".into(),
            parent: Some("p".into()),
            role: "r".into(),
            components: vec!["c".into()],
            rationale: "r".into(),
            priority: Some(Priority::Mvp),
            notes: "n".into(),
            sections: vec![Section {
                title: "t".into(),
                entries: vec!["e".into()],
            }],
        };
        let decision = Decision {
            id: "d".into(),
            topic: "t".into(),
            decision: "d".into(),
            rejected: "r".into(),
            reason: "r".into(),
            adrs: vec!["ADR-001".into()],
            refs: vec!["Tiers".into()],
            layers: vec!["l0".into()],
            items: vec!["i".into()],
        };
        let task = Task {
            id: "t".into(),
            title: "T".into(),
            kind: TaskKind::Task,
            layer: "l0".into(),
            items: vec!["i".into()],
            sites: vec!["sp".into()],
            priority: Some(Priority::Critical),
            after: vec!["x".into()],
            notes: "n".into(),
        };

        assert_eq!(
            keys(&serde_json::to_value(layer).unwrap()),
            properties::<super::Layer>()
        );
        assert_eq!(
            keys(&serde_json::to_value(decision).unwrap()),
            properties::<super::Decision>()
        );
        assert_eq!(
            keys(&serde_json::to_value(task).unwrap()),
            properties::<super::Task>()
        );
    }

    #[test]
    fn resource_schema_lists_every_field_a_resource_serializes() {
        use mirante_domain::resource::{Access, Deployment, Resource, ResourceState};
        let resource = Resource {
            id: 1,
            template: "gpu-workspace".into(),
            owner: "rui".into(),
            owner_user_id: 7,
            cluster: Some("gpu-sp-01".into()),
            namespace: Some("ws-llm".into()),
            target: "clusters/gpu-sp-01/workspaces/llm".into(),
            state: ResourceState::Merged,
            requests: vec![1],
            expires: Some("2027-01-01".into()),
            access: Some(Access {
                readme: Some("README.md".into()),
                commands: vec!["kubectl -n ws-llm get pods".into()],
                kubeconfig: Some("apiVersion: v1".into()),
                host: None,
                secret: None,
            }),
            note: Some("n".into()),
            deployment: Some(Deployment {
                followed: true,
                application: Some("ws-llm".into()),
                ..Deployment::default()
            }),
            created_at: "2026-12-03T10:00:00Z".into(),
        };
        let json = serde_json::to_value(&resource).unwrap();
        assert_eq!(keys(&json), properties::<super::Resource>());
        assert_eq!(keys(&json["access"]), properties::<super::ResourceAccess>());
        assert_eq!(
            keys(&json["deployment"]),
            properties::<super::ResourceDeployment>()
        );
    }

    #[test]
    fn site_schema_is_the_site_plus_its_hosts() {
        let site = Site {
            id: "sp".into(),
            name: "São Paulo".into(),
            location: "l".into(),
            notes: "n".into(),
            host_groups: vec![HostGroup {
                id: "g".into(),
                name: "G".into(),
                pattern: "p-*".into(),
                count: Some(2),
                notes: "n".into(),
            }],
        };
        let host = Host {
            id: "h".into(),
            site: "sp".into(),
            group: Some("g".into()),
            tier: Some("1".into()),
            roles: vec!["r".into()],
            gpus: vec![],
            notes: "n".into(),
        };
        let mut site_keys = keys(&serde_json::to_value(site).unwrap());
        site_keys.push("hosts".into());
        site_keys.sort();

        assert_eq!(site_keys, properties::<super::Site>());
        assert_eq!(
            keys(&serde_json::to_value(host).unwrap()),
            properties::<super::Host>()
        );
    }
}
