//! The kubeconfig a researcher uses to reach their namespace: the cluster's API server and CA
//! from the catalog, and a user that signs in through `kubectl oidc-login` (kubelogin) against
//! the issuer the API server trusts. It holds no secret: the token is fetched on the
//! researcher's machine, in their browser, when kubectl first needs it.

use base64::Engine as _;
use mirante_domain::model::KubernetesAccess;
use serde::Serialize;

/// The kubeconfig for `namespace` on `cluster`, as YAML.
pub(crate) fn kubeconfig(access: &KubernetesAccess, cluster: &str, namespace: &str) -> String {
    let user = format!("oidc@{cluster}");
    let context = format!("{namespace}@{cluster}");
    let config = Config {
        api_version: "v1",
        kind: "Config",
        clusters: vec![Named {
            name: cluster.to_owned(),
            cluster: ClusterEntry {
                server: access.api.clone(),
                certificate_authority_data: access
                    .ca
                    .as_ref()
                    .map(|pem| base64::engine::general_purpose::STANDARD.encode(pem)),
            },
        }],
        contexts: vec![NamedContext {
            name: context.clone(),
            context: ContextEntry {
                cluster: cluster.to_owned(),
                namespace: namespace.to_owned(),
                user: user.clone(),
            },
        }],
        current_context: context,
        users: vec![NamedUser {
            name: user,
            user: UserEntry {
                exec: Exec {
                    api_version: "client.authentication.k8s.io/v1",
                    command: "kubectl",
                    args: vec![
                        "oidc-login".into(),
                        "get-token".into(),
                        format!("--oidc-issuer-url={}", access.oidc.issuer),
                        format!("--oidc-client-id={}", access.oidc.client_id),
                        // `preferred_username` and `groups`, which the API server maps to the
                        // user and groups, come with Authentik's `profile` scope.
                        "--oidc-extra-scope=profile".into(),
                        "--oidc-extra-scope=email".into(),
                    ],
                    interactive_mode: "IfAvailable",
                    provide_cluster_info: false,
                },
            },
        }],
    };
    serde_saphyr::to_string(&config).unwrap_or_else(|e| {
        // Plain strings and lists only: serializing them cannot fail.
        tracing::error!(error = %e, "cannot write a kubeconfig");
        String::new()
    })
}

/// The commands that show a namespace works and how to run on its GPUs.
pub(crate) fn gpu_commands(namespace: &str, gpus: u64) -> Vec<String> {
    let mut commands = vec![
        "kubectl krew install oidc-login".to_owned(),
        format!("kubectl -n {namespace} get pods"),
    ];
    if gpus > 0 {
        commands.push(format!(
            "kubectl -n {namespace} run gpu-check --rm -it --restart=Never \
             --image=nvidia/cuda:12.4.1-base-ubuntu22.04 \
             --overrides='{{\"spec\":{{\"containers\":[{{\"name\":\"gpu-check\",\
             \"image\":\"nvidia/cuda:12.4.1-base-ubuntu22.04\",\"command\":[\"nvidia-smi\"],\
             \"resources\":{{\"limits\":{{\"nvidia.com/gpu\":1,\"cpu\":\"1\",\"memory\":\"1Gi\"}}}}}}]}}}}'"
        ));
    }
    commands
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct Config {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    clusters: Vec<Named>,
    contexts: Vec<NamedContext>,
    current_context: String,
    users: Vec<NamedUser>,
}

#[derive(Serialize)]
struct Named {
    name: String,
    cluster: ClusterEntry,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterEntry {
    server: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    certificate_authority_data: Option<String>,
}

#[derive(Serialize)]
struct NamedContext {
    name: String,
    context: ContextEntry,
}

#[derive(Serialize)]
struct ContextEntry {
    cluster: String,
    namespace: String,
    user: String,
}

#[derive(Serialize)]
struct NamedUser {
    name: String,
    user: UserEntry,
}

#[derive(Serialize)]
struct UserEntry {
    exec: Exec,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Exec {
    api_version: &'static str,
    command: &'static str,
    args: Vec<String>,
    interactive_mode: &'static str,
    provide_cluster_info: bool,
}

#[cfg(test)]
mod tests {
    use mirante_domain::model::KubernetesOidc;
    use serde_json::Value;

    use super::*;

    fn access(ca: Option<&str>) -> KubernetesAccess {
        KubernetesAccess {
            api: "https://gpu-sp-01.example.org:6443".into(),
            ca: ca.map(str::to_owned),
            oidc: KubernetesOidc {
                issuer: "https://auth.example.org/application/o/kubernetes/".into(),
                client_id: "kubernetes".into(),
                username_prefix: "oidc:".into(),
                groups_prefix: "oidc:".into(),
            },
        }
    }

    #[test]
    fn the_kubeconfig_points_at_the_namespace_and_signs_in_with_oidc_login() {
        let yaml = kubeconfig(&access(None), "gpu-sp-01", "ws-nlp");
        let v: Value = serde_saphyr::from_str(&yaml).unwrap();
        assert_eq!(v["current-context"], "ws-nlp@gpu-sp-01");
        assert_eq!(v["contexts"][0]["context"]["namespace"], "ws-nlp");
        assert_eq!(
            v["clusters"][0]["cluster"]["server"],
            "https://gpu-sp-01.example.org:6443"
        );
        assert!(v["clusters"][0]["cluster"]["certificate-authority-data"].is_null());
        let exec = &v["users"][0]["user"]["exec"];
        assert_eq!(exec["command"], "kubectl");
        let args: Vec<&str> = exec["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(&args[..2], ["oidc-login", "get-token"]);
        assert!(
            args.contains(&"--oidc-issuer-url=https://auth.example.org/application/o/kubernetes/")
        );
        assert!(args.contains(&"--oidc-client-id=kubernetes"));
        assert_eq!(v["users"][0]["name"], v["contexts"][0]["context"]["user"]);
    }

    #[test]
    fn the_ca_is_carried_base64_encoded() {
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let yaml = kubeconfig(&access(Some(pem)), "c", "ns");
        let v: Value = serde_saphyr::from_str(&yaml).unwrap();
        let data = v["clusters"][0]["cluster"]["certificate-authority-data"]
            .as_str()
            .unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        assert_eq!(decoded, pem.as_bytes());
    }

    #[test]
    fn the_gpu_example_asks_for_one_gpu_only_when_the_workspace_has_some() {
        let with = gpu_commands("ws-a", 1);
        assert!(with.iter().any(|c| c.contains("nvidia.com/gpu")));
        let overrides = with[2].split("--overrides='").nth(1).unwrap();
        let json: Value = serde_json::from_str(overrides.trim_end_matches('\'')).unwrap();
        assert_eq!(
            json["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"],
            1
        );
        assert!(!gpu_commands("ws-a", 0).iter().any(|c| c.contains("nvidia")));
    }
}
