//! `GET /api/v1/resources[/{id}]`: what the requests made, followed from the request to the
//! monorepo's base branch, with who may see which.

use git2::Repository;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::requests::wait_for_state;

fn workspace(name: &str) -> Value {
    json!({
        "template": "gpu-workspace",
        "values": {"name": name, "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
    })
}

/// The ids and states of a resource list.
fn listed(body: &Value) -> Vec<(i64, String)> {
    body["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

on_both_databases! {
    async fn a_workspace_is_a_resource_from_its_request_to_the_base_branch_and_gone_when_its_folder_is(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let monorepo = app.data_dir.join("monorepo");

        let submitted = app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await;
        let id = submitted["id"].as_i64().unwrap();
        assert_eq!(submitted["resource"], id, "the creating request names its resource");

        let pending = app.get_json_as(&rui, &format!("/api/v1/resources/{id}"), 200).await;
        assert_eq!(pending["state"], "pending", "{pending}");
        assert_eq!(pending["template"], "gpu-workspace");
        assert_eq!(pending["owner"], "rui");
        assert_eq!(pending["cluster"], "gpu-sp-01");
        assert_eq!(pending["namespace"], "ws-nlp");
        assert_eq!(pending["target"], "apps/sp/gpu-sp-01/workspaces/nlp");
        assert_eq!(pending["requests"], json!([id]));
        let expires = pending["expires"].as_str().unwrap();
        assert_eq!(chrono::NaiveDate::parse_from_str(expires, "%Y-%m-%d").map(|_| ()), Ok(()), "{expires}");
        assert_eq!(pending["access"], Value::Null, "nothing to reach before the merge");

        app.post_json(&app.client, &format!("/api/v1/requests/{id}/approve"), &json!({}), 200).await;
        wait_for_state(&app, &rui, id, "proposed").await;
        let proposed = app.get_json_as(&rui, &format!("/api/v1/resources/{id}"), 200).await;
        assert_eq!(proposed["state"], "proposed");

        app.post_json(&app.client, &format!("/api/v1/requests/{id}/merge"), &json!({}), 200).await;
        let merged = app.get_json_as(&rui, &format!("/api/v1/resources/{id}"), 200).await;
        assert_eq!(merged["state"], "merged", "{merged}");
        // Without Argo CD the portal cannot tell more, and says so.
        assert_eq!(merged["deployment"], json!({
            "followed": false, "application": null, "merge_commit": null, "revision": null,
            "message": null, "error": null, "checked_at": null
        }));
        assert_eq!(
            merged["note"],
            "Argo CD is not configured (MIRANTE_ARGOCD_URL), so the portal cannot tell whether the files are applied on the cluster"
        );
        let commands: Vec<&str> = merged["access"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(&commands[..2], ["kubectl krew install oidc-login", "kubectl -n ws-nlp get pods"]);
        assert!(commands[2].contains("nvidia.com/gpu") && commands[2].starts_with("kubectl -n ws-nlp run"), "{commands:?}");
        assert_eq!(merged["access"]["readme"], "apps/sp/gpu-sp-01/workspaces/nlp/README.md");
        // The demo catalog says how to reach gpu-sp-01: a kubeconfig for the namespace.
        let kubeconfig: Value = serde_saphyr::from_str(merged["access"]["kubeconfig"].as_str().unwrap()).unwrap();
        assert_eq!(kubeconfig["contexts"][0]["context"]["namespace"], "ws-nlp");
        assert_eq!(kubeconfig["clusters"][0]["cluster"]["server"], "https://gpu-sp-01.k8s.example.org:6443");
        assert_eq!(kubeconfig["users"][0]["user"]["exec"]["args"][0], "oidc-login");
        // The files on the base branch grant Rui the namespace, as the cluster names him.
        let binding = Repository::open(&monorepo)
            .unwrap()
            .revparse_single("main:apps/sp/gpu-sp-01/workspaces/nlp/rolebinding.yaml")
            .unwrap()
            .peel_to_blob()
            .unwrap()
            .content()
            .to_vec();
        let binding: Value = serde_saphyr::from_str(std::str::from_utf8(&binding).unwrap()).unwrap();
        assert_eq!(binding["subjects"][0]["name"], "oidc:rui");
        assert_eq!(binding["roleRef"]["name"], "edit");

        // The base branch is the truth: the folder removed by hand is a removed resource.
        commit_on_main(&monorepo, "Remove apps/sp/gpu-sp-01/workspaces/nlp", &[("apps/sp/gpu-sp-01/workspaces/nlp", None)]);
        let removed = app.get_json_as(&rui, &format!("/api/v1/resources/{id}"), 200).await;
        assert_eq!(removed["state"], "removed", "{removed}");
        let by_state = app.get_json_as(&rui, "/api/v1/resources?state=removed", 200).await;
        assert_eq!(listed(&by_state), [(id, "removed".to_owned())]);
        let live = app.get_json_as(&rui, "/api/v1/resources?state=live", 200).await;
        assert_eq!(listed(&live), []);
    }

    async fn researchers_see_their_own_resources_admins_see_all_and_filters_are_strict(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let bia = app.with_token(&seed_token(&app.db, "bia", &["researchers"]).await);
        let rui_ws = app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await["id"].as_i64().unwrap();
        let bia_ws = app.post_json(&bia, "/api/v1/requests", &workspace("vision"), 201).await["id"].as_i64().unwrap();

        let mine = app.get_json_as(&rui, "/api/v1/resources", 200).await;
        assert_eq!(listed(&mine), [(rui_ws, "pending".to_owned())]);
        app.get_json_as(&rui, &format!("/api/v1/resources/{bia_ws}"), 404).await;
        let theirs = app.get_json_as(&rui, "/api/v1/resources?owner=bia", 200).await;
        assert_eq!(listed(&theirs), [], "a researcher's filter cannot widen what they see");

        let all = app.get_json_as(&app.client, "/api/v1/resources", 200).await;
        assert_eq!(listed(&all), [(bia_ws, "pending".to_owned()), (rui_ws, "pending".to_owned())]);
        let bias = app.get_json_as(&app.client, "/api/v1/resources?owner=bia&template=gpu-workspace&cluster=gpu-sp-01", 200).await;
        assert_eq!(listed(&bias), [(bia_ws, "pending".to_owned())]);
        let elsewhere = app.get_json_as(&app.client, "/api/v1/resources?cluster=gpu-franca-01", 200).await;
        assert_eq!(listed(&elsewhere), []);
        app.get_json_as(&app.client, &format!("/api/v1/resources/{bia_ws}"), 200).await;

        for bad in ["state=gone", "stat=live", "owner=a&owner=b"] {
            let body = app.get_json_as(&app.client, &format!("/api/v1/resources?{bad}"), 400).await;
            assert!(body["error"].as_str().is_some(), "{bad}: {body}");
        }
        for path in ["/api/v1/resources".to_owned(), format!("/api/v1/resources/{rui_ws}")] {
            let anonymous = app.anonymous.get(format!("{}{path}", app.address)).send().await.unwrap();
            assert_eq!(anonymous.status().as_u16(), 401, "{path}");
        }
    }

    async fn a_request_rejected_before_any_merge_makes_no_resource(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let id = app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await["id"].as_i64().unwrap();

        let rejected = app
            .post_json(&app.client, &format!("/api/v1/requests/{id}/reject"), &json!({"comment": "no GPU this month"}), 200)
            .await;

        assert_eq!(rejected["resource"], Value::Null, "{rejected}");
        app.get_json_as(&rui, &format!("/api/v1/resources/{id}"), 404).await;
        assert_eq!(listed(&app.get_json_as(&rui, "/api/v1/resources", 200).await), []);
    }

    async fn a_researchers_database_goes_only_in_one_of_their_own_workspaces_an_admins_anywhere(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        let bia = app.with_token(&seed_token(&app.db, "bia", &["researchers"]).await);
        let db_in = |ns: &str| json!({"template": "postgres-cnpg", "values": {"cluster": "gpu-sp-01", "name": "appdb", "namespace": ns, "databases": ["app"]}});

        // No workspace yet: no namespace is Rui's, not even one he has only asked for.
        app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await;
        for ns in ["ws-nlp", "kube-system", "default"] {
            let refused = app.post_json(&rui, "/api/v1/requests/preview", &db_in(ns), 422).await;
            assert_eq!(refused["details"][0]["field"], "namespace", "{ns}: {refused}");
            assert_eq!(refused["details"][0]["code"], "not_an_option", "{ns}: {refused}");
        }
        // Once his workspace is on the base branch, its namespace is his to use — and only his.
        let ws = app.get_json_as(&rui, "/api/v1/resources", 200).await["resources"][0]["id"].as_i64().unwrap();
        app.post_json(&app.client, &format!("/api/v1/requests/{ws}/approve"), &json!({}), 200).await;
        wait_for_state(&app, &rui, ws, "proposed").await;
        app.post_json(&app.client, &format!("/api/v1/requests/{ws}/merge"), &json!({}), 200).await;
        app.post_json(&rui, "/api/v1/requests/preview", &db_in("ws-nlp"), 200).await;
        app.post_json(&rui, "/api/v1/requests/preview", &db_in("kube-system"), 422).await;
        // His namespace is on gpu-sp-01: a database for it on another cluster is refused.
        let mut elsewhere = db_in("ws-nlp");
        elsewhere["values"]["cluster"] = json!("k3s-franca");
        let refused = app.post_json(&rui, "/api/v1/requests/preview", &elsewhere, 422).await;
        assert_eq!(refused["details"][0]["field"], "namespace", "{refused}");
        assert_eq!(refused["details"][0]["code"], "not_on_cluster", "{refused}");
        assert_eq!(
            refused["details"][0]["message"],
            "`ws-nlp` is not on k3s-franca, where you have no namespace",
            "{refused}"
        );
        let theirs = app.post_json(&bia, "/api/v1/requests/preview", &db_in("ws-nlp"), 422).await;
        assert_eq!(theirs["details"][0]["code"], "not_an_option", "{theirs}");
        // An admin may name any namespace, still a well-formed one.
        app.post_json(&app.client, "/api/v1/requests/preview", &db_in("kube-system"), 200).await;
        app.post_json(&app.client, "/api/v1/requests/preview", &db_in("Not A Namespace"), 422).await;
    }

    async fn a_merged_database_says_how_to_connect_without_any_password(backend: Backend) {
        let app = spawn_app_with(backend, CatalogSetup::Embedded).await;
        let rui = app.dev_browser("rui").await;
        // Rui's workspace first: a researcher's database goes in one of their namespaces.
        let ws = app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await["id"].as_i64().unwrap();
        app.post_json(&app.client, &format!("/api/v1/requests/{ws}/approve"), &json!({}), 200).await;
        wait_for_state(&app, &rui, ws, "proposed").await;
        app.post_json(&app.client, &format!("/api/v1/requests/{ws}/merge"), &json!({}), 200).await;
        let input = json!({
            "template": "postgres-cnpg",
            "values": {"cluster": "gpu-sp-01", "name": "analytics", "namespace": "ws-nlp", "databases": ["results"], "owner": "rui"}
        });
        let id = app.post_json(&rui, "/api/v1/requests", &input, 201).await["id"].as_i64().unwrap();
        app.post_json(&app.client, &format!("/api/v1/requests/{id}/approve"), &json!({}), 200).await;
        wait_for_state(&app, &rui, id, "proposed").await;
        app.post_json(&app.client, &format!("/api/v1/requests/{id}/merge"), &json!({}), 200).await;

        let db = app.get_json_as(&rui, &format!("/api/v1/resources/{id}"), 200).await;

        assert_eq!(db["state"], "merged", "{db}");
        assert_eq!(db["namespace"], "ws-nlp");
        assert_eq!(db["cluster"], "gpu-sp-01", "the cluster picked in the form");
        assert_eq!(
            db["access"]["commands"],
            json!([
                "kubectl -n ws-nlp get secret analytics-app -o jsonpath='{.data.password}' | base64 -d",
                "kubectl -n ws-nlp port-forward svc/analytics-rw 5432:5432",
                "psql -h 127.0.0.1 -U rui results",
            ])
        );
        assert_eq!(db["access"]["host"], "analytics-rw.ws-nlp.svc:5432");
        assert_eq!(db["access"]["secret"], "analytics-app");
        // The catalog says how to reach gpu-sp-01: the kubectl lines above work with this.
        let kubeconfig = db["access"]["kubeconfig"].as_str().unwrap_or_default();
        assert!(kubeconfig.contains("server: https://gpu-sp-01.k8s.example.org:6443"), "{db}");
        assert!(kubeconfig.contains("namespace: ws-nlp"), "{db}");
        assert!(!db.to_string().to_lowercase().contains("password:"), "{db}");
    }
}
