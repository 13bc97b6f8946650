//! `GET /api/v1/roadmap` and `GET /api/v1/findings`.

use serde_json::{Value, json};

use crate::helpers::*;

fn item<'a>(body: &'a Value, id: &str) -> &'a Value {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == id)
        .unwrap_or_else(|| panic!("no item {id}"))
}

fn blocker_ids(v: &Value) -> Vec<(&str, &str)> {
    v["blocked_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["id"].as_str().unwrap(), b["via"].as_str().unwrap()))
        .collect()
}

async fn bearer_get(app: &TestApp, token: Option<&str>, path: &str) -> u16 {
    let mut req = app.anonymous.get(format!("{}{path}", app.address));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req.send().await.unwrap().status().as_u16()
}

on_both_databases! {
    async fn the_roadmap_says_what_is_done_ready_and_blocked_and_by_what(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/roadmap", 200).await;

        let north = item(&body, "hypervisor-north");
        assert_eq!((north["status"].as_str(), north["done"].as_bool()), (Some("done"), Some(true)));
        let south = item(&body, "hypervisor-south");
        assert_eq!((south["status"].as_str(), south["ready"].as_bool()), (Some("ready"), Some(true)));
        let replication = item(&body, "storage-replication");
        assert_eq!(replication["status"], "blocked");
        assert_eq!(blocker_ids(replication), [("hypervisor-south", "hypervisor-south")]);
        assert_eq!(replication["blocked_by"][0]["state"], "declared");
        let gpu = item(&body, "gpu-workspace");
        assert_eq!(
            blocker_ids(gpu),
            [("storage-replication", "storage-replication"), ("hypervisor-south", "storage-replication")]
        );
        let task = &body["tasks"][0];
        assert_eq!(task["id"], "replicate-storage");
        assert_eq!(task["status"], "blocked");
        assert_eq!(task["priority"], "critical");
        assert_eq!(blocker_ids(task), [("hypervisor-south", "hypervisor-south")]);
    }

    async fn the_roadmap_counts_progress_per_phase_site_and_layer(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/roadmap", 200).await;

        // The test catalog plans nothing in a phase: one group without an id holds every item.
        assert_eq!(body["phases"].as_array().unwrap().len(), 1);
        assert_eq!(body["phases"][0]["id"], "");
        assert_eq!(body["phases"][0]["items"].as_array().unwrap().len(), 6);
        let p = &body["progress"];
        assert_eq!(p["totals"], json!({"validated": 2, "declared": 1, "desired": 3}));
        assert_eq!(p["sites"][0]["id"], "north");
        assert_eq!(p["sites"][0]["counts"], json!({"validated": 1, "declared": 0, "desired": 2}));
        assert_eq!(p["sites"][1]["id"], "south");
        assert_eq!(p["sites"][1]["counts"], json!({"validated": 0, "declared": 1, "desired": 2}));
        // vault is platform-wide.
        assert_eq!(p["sites"][2]["id"], "");
        assert_eq!(p["sites"][2]["counts"]["validated"], 1);
        let layers: Vec<&str> = p["layers"].as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap()).collect();
        assert_eq!(layers, ["l0", "l8", "secrets"]);
        assert_eq!(p["layers"][1]["counts"]["desired"], 1, "l8a rolls up to l8");
    }

    async fn the_roadmap_refuses_query_parameters(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/roadmap?phase=mvp", 400).await;

        assert!(body["error"].as_str().unwrap().contains("phase"), "{body}");
    }

    async fn findings_come_by_severity_with_a_link_to_the_item(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/findings", 200).await;

        let findings = body["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 1, "{body}");
        let f = &findings[0];
        assert_eq!(f["severity"], "info");
        assert_eq!(f["code"], "declared-not-real");
        assert_eq!(f["item"], "hypervisor-south");
        assert_eq!(f["link"], "/items/hypervisor-south");
        assert_eq!(f["args"]["path"], "pulumi/south/cluster.ts");
        assert_eq!(
            f["message"],
            "declared in `pulumi/south/cluster.ts`, but not validated in production"
        );
        assert_eq!(body["counts"], json!({"error": 0, "warning": 0, "info": 1}));
    }

    async fn findings_check_attestation_age_and_iac_paths_in_the_configured_monorepo(backend: Backend) {
        let monorepo = tempfile::TempDir::new().unwrap();
        let root = monorepo.path().to_owned();
        let app = spawn_configured(backend, CatalogSetup::Small, move |config, _| {
            config.iac_root = Some(root);
            config.attestation_max_age_days = 30;
        })
        .await;

        let body = app.get_json("/api/v1/findings", 200).await;
        let errors = app.get_json("/api/v1/findings?severity=error", 200).await;

        let codes: Vec<(&str, &str)> = body["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["item"].as_str().unwrap(), f["code"].as_str().unwrap()))
            .collect();
        assert_eq!(
            codes,
            [
                ("hypervisor-south", "iac-path-missing"),
                ("vault", "attestation-stale"),
                ("hypervisor-south", "declared-not-real"),
            ]
        );
        assert_eq!(errors["findings"].as_array().unwrap().len(), 1);
        assert_eq!(errors["counts"]["warning"], 1, "counts cover every finding");

        std::fs::create_dir_all(monorepo.path().join("pulumi/south")).unwrap();
        std::fs::write(monorepo.path().join("pulumi/south/cluster.ts"), "export {}\n").unwrap();
        let fixed = app.get_json("/api/v1/findings?severity=error", 200).await;
        assert_eq!(fixed["findings"], json!([]));
    }

    async fn an_unknown_severity_is_refused(backend: Backend) {
        let app = spawn_app(backend).await;

        let body = app.get_json("/api/v1/findings?severity=fatal", 400).await;

        assert!(body["error"].as_str().unwrap().contains("error, warning, info"), "{body}");
    }

    async fn findings_are_for_admins_and_the_roadmap_for_anyone_signed_in(backend: Backend) {
        let app = spawn_app(backend).await;
        let researcher = seed_token(&app.db, "rui", &["researchers"]).await;

        assert_eq!(bearer_get(&app, Some(&researcher), "/api/v1/findings").await, 403);
        assert_eq!(bearer_get(&app, None, "/api/v1/findings").await, 401);
        assert_eq!(bearer_get(&app, Some(&researcher), "/api/v1/roadmap").await, 200);
        assert_eq!(bearer_get(&app, None, "/api/v1/roadmap").await, 401);
    }

    async fn findings_on_the_demo_check_iac_references_at_the_catalogs_own_commit(backend: Backend) {
        // The demo catalog is read from the local monorepo's git; a checkout named by
        // MIRANTE_IAC_ROOT (empty here) is not what its references are checked against.
        let empty = tempfile::TempDir::new().unwrap();
        let root = empty.path().to_owned();
        let app = spawn_configured(backend, CatalogSetup::Embedded, move |config, _| {
            config.iac_root = Some(root);
        })
        .await;

        let body = app.get_json("/api/v1/findings", 200).await;

        let of = |item: &str| -> Vec<(String, Value)> {
            body["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["item"] == item)
                .map(|f| (f["code"].as_str().unwrap().to_owned(), f["args"].clone()))
                .collect()
        };
        // Every reference resolves in the demo monorepo, so no IaC error anywhere...
        let iac_errors: Vec<&Value> = body["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"].as_str().unwrap().starts_with("iac-"))
            .collect();
        assert!(iac_errors.is_empty(), "{iac_errors:?}");
        // ...and what the architecture says is only declared is reported as such: traefik-sp
        // has `ha: true` in its Pulumi config but no real HA, the SP NVMe pool is partial.
        assert_eq!(
            of("traefik-sp-ha"),
            [(
                "declared-not-real".to_owned(),
                json!({"path": "pulumi/proxmox/Pulumi.sp.yaml", "key": "traefik-sp.ha"})
            )]
        );
        assert_eq!(
            of("linstor-sp-nvme"),
            [(
                "declared-not-real".to_owned(),
                json!({
                    "path": "ansible/inventories/sp/group_vars/linstor.yml",
                    "key": "linstor_pools.nvme-pool"
                })
            )]
        );
    }
}
