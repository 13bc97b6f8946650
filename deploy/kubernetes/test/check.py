"""Checks rendered Kubernetes manifests: core objects against Kubernetes' strict schemas
(kubernetes-validate: unknown fields are errors), custom resources against their CRDs' schemas
(crds.mjs), then what the deployment promises (docs/operations.md).

usage: python3 check.py K8S_VERSION FILE...   (each FILE a multi-document YAML file)
Prints every problem and exits 1 when there is any. `cargo xtask manifests` runs it.
"""

import json
import os
import subprocess
import sys

import kubernetes_validate
import yaml

CRD_GROUPS = ("postgresql.cnpg.io/", "argoproj.io/")
HERE = os.path.dirname(os.path.abspath(__file__))


def core_problems(source, doc, version):
    try:
        kubernetes_validate.validate(doc, version, strict=True)
        return []
    except kubernetes_validate.ValidationError as e:
        path = ".".join(str(p) for p in e.path)
        return [f"{source}: {doc['kind']}/{doc['metadata'].get('name')}: {path}: {e.message}"]
    except kubernetes_validate.SchemaNotFoundError as e:
        return [f"{source}: {e.message}"]


def crd_problems(objects):
    if not objects:
        return []
    run = subprocess.run(
        ["node", os.path.join(HERE, "crds.mjs")],
        input=json.dumps(objects),
        capture_output=True,
        text=True,
        cwd=HERE,
    )
    if run.returncode not in (0, 1):
        return [f"crds.mjs failed: {run.stderr.strip()}"]
    return [line for line in run.stdout.splitlines() if line]


def validate(docs, version):
    problems = []
    custom = []
    for source, doc in docs:
        if doc.get("kind") == "Secret":
            problems.append(
                f"{source}: Secret/{doc['metadata'].get('name')}: secrets are referenced, never "
                "kept in the manifests"
            )
        elif doc.get("apiVersion", "").startswith(CRD_GROUPS):
            custom.append({"source": source, "object": doc})
        else:
            problems.extend(core_problems(source, doc, version))
    return problems + crd_problems(custom)


def matches(selector, labels):
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", selector).items())


def promises(source, docs):
    """What docs/operations.md says about a site's deployment."""
    by_kind = {}
    for _, doc in docs:
        by_kind.setdefault(doc["kind"], []).append(doc)
    problems = []

    def need(ok, what):
        if not ok:
            problems.append(f"{source}: {what}")

    deployments = by_kind.get("Deployment", [])
    need(len(deployments) == 1, "exactly one Deployment")
    if not deployments:
        return problems
    deployment = deployments[0]
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    need(deployment["spec"].get("replicas", 1) >= 2, "the Deployment runs two replicas or more")
    need(
        any(matches(p["spec"]["selector"], labels) and p["spec"].get("minAvailable") == 1
            for p in by_kind.get("PodDisruptionBudget", [])),
        "a PodDisruptionBudget keeps one replica available",
    )
    need(
        any(matches(n["spec"]["podSelector"], labels)
            and {"Ingress", "Egress"} <= set(n["spec"].get("policyTypes", []))
            for n in by_kind.get("NetworkPolicy", [])),
        "a NetworkPolicy limits the portal's traffic both ways",
    )
    need(
        any(s["spec"].get("selector") and matches(s["spec"]["selector"], labels)
            for s in by_kind.get("Service", [])),
        "a Service selects the portal's pods",
    )
    containers = pod["spec"]["containers"] + pod["spec"].get("initContainers", [])
    for c in containers:
        need("requests" in c.get("resources", {}) and "limits" in c.get("resources", {}),
             f"container {c['name']} has resource requests and limits")
        for env in c.get("env", []):
            need("value" not in env or not any(w in env["name"] for w in ("SECRET", "TOKEN",
                                                                          "PASSWORD", "KEY")),
                 f"container {c['name']}: {env['name']} comes from a Secret")
    portal = next(c for c in pod["spec"]["containers"] if c["name"] == "mirante")
    need(portal.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/readyz",
         "readiness is /readyz")
    need(portal.get("livenessProbe", {}).get("httpGet", {}).get("path") == "/healthz",
         "liveness is /healthz")
    need(any(c.get("restartPolicy") == "Always" and "git-sync" in c["image"]
             for c in pod["spec"].get("initContainers", [])),
         "a git-sync sidecar keeps the catalog fresh")
    clusters = by_kind.get("Cluster", [])
    need(len(clusters) == 1 and "barmanObjectStore" in clusters[0]["spec"].get("backup", {}),
         "a CloudNativePG Cluster with backups to object storage")
    need(bool(by_kind.get("ScheduledBackup")), "a ScheduledBackup of the database")
    return problems


def self_check(version):
    """The validators must refuse what Kubernetes would: a run that passes everything proves
    nothing."""
    bad = [
        ("self-check", {"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": "bad"},
                        "spec": {"replicas": 2, "selector": {}, "template": {},
                                 "replicaz": 3}}),
        ("self-check", {"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
                        "metadata": {"name": "bad"},
                        "spec": {"instances": "two", "storage": {"size": "1Gi"}}}),
        ("self-check", {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                        "metadata": {"name": "bad"},
                        "spec": {"source": {"repoURL": "x"}}}),
    ]
    found = validate(bad, version)
    refused = {p.split(": ")[1] for p in found}
    want = {"Deployment/bad", "Cluster/bad", "Application/bad"}
    if refused != want:
        return [f"self-check: the validators refused {sorted(refused)}, not {sorted(want)}: "
                f"{found}"]
    return []


def main():
    version, files = sys.argv[1], sys.argv[2:]
    problems = self_check(version)
    for path in files:
        with open(path) as f:
            docs = [(os.path.basename(path), d) for d in yaml.safe_load_all(f) if d]
        problems += validate(docs, version)
        if any(d["kind"] == "Deployment" for _, d in docs):
            problems += promises(os.path.basename(path), docs)
        print(f"{path}: {len(docs)} object(s) checked")
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
