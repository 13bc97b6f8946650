//! `cargo xtask manifests`: renders every Kustomize overlay under deploy/kubernetes/overlays
//! and checks it, with the Argo CD Applications, against Kubernetes' strict schemas (PyPI's
//! kubernetes-validate), the CloudNativePG and Argo CD CRDs (npm's @kubernetes-models) and
//! what docs/operations.md promises (deploy/kubernetes/test/check.py).
//!
//! kustomize is the one built into kubectl (part of this project's machine image); the Python
//! packages go to a cache under the target directory, the npm ones beside their lockfile.

use std::{fs, path::Path, process::Command};

use anyhow::{Context, Result, bail};

use crate::{npm_ci, run_cmd, target_dir};

/// The Kubernetes version the manifests are checked against: the K3s the sites run.
const KUBERNETES_VERSION: &str = "1.31.0";
/// kubernetes-validate, pinned: its schemas are what the manifests are checked against.
const KUBERNETES_VALIDATE: &str = "kubernetes-validate==1.37.0";
/// openapi-spec-validator, pinned: it checks the JSON API's OpenAPI 3.1 document.
const OPENAPI_SPEC_VALIDATOR: &str = "openapi-spec-validator==0.7.2";
/// Installed together, so that pip resolves their shared dependencies (jsonschema) once.
const PYTHON_PACKAGES: [&str; 2] = [KUBERNETES_VALIDATE, OPENAPI_SPEC_VALIDATOR];

/// Renders and checks the manifests; fails listing every problem.
pub fn check() -> Result<()> {
    let root = Path::new("deploy/kubernetes");
    if Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true)
    {
        bail!(
            "kubectl (for its built-in kustomize) is not on PATH: install it to render \
             deploy/kubernetes"
        );
    }
    let python = python_packages()?;
    npm_ci(&root.join("test"))?;

    let out = target_dir().join("manifests");
    fs::create_dir_all(&out)?;
    let mut files = Vec::new();
    let mut overlays: Vec<_> = fs::read_dir(root.join("overlays"))
        .context("reading deploy/kubernetes/overlays")?
        .collect::<Result<_, _>>()?;
    overlays.sort_by_key(|e| e.file_name());
    for overlay in overlays {
        let site = overlay.file_name().to_string_lossy().into_owned();
        let rendered = Command::new("kubectl")
            .arg("kustomize")
            .arg(overlay.path())
            .output()
            .context("running kubectl kustomize")?;
        if !rendered.status.success() {
            bail!(
                "kubectl kustomize {} failed: {}",
                overlay.path().display(),
                String::from_utf8_lossy(&rendered.stderr).trim()
            );
        }
        let file = out.join(format!("{site}.yaml"));
        fs::write(&file, &rendered.stdout)?;
        files.push(file);
    }
    if files.is_empty() {
        bail!("no overlay under deploy/kubernetes/overlays");
    }
    let mut applications: Vec<_> = fs::read_dir(root.join("argocd"))
        .context("reading deploy/kubernetes/argocd")?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    applications.sort();
    files.extend(applications);

    let mut cmd = Command::new("python3");
    cmd.arg(root.join("test/check.py"))
        .arg(KUBERNETES_VERSION)
        .args(&files)
        .env("PYTHONPATH", &python);
    run_cmd(&mut cmd)
}

/// Installs the pinned Python checkers (kubernetes-validate, openapi-spec-validator) and their
/// dependencies into the cache once; returns the directory to put on PYTHONPATH.
pub fn python_packages() -> Result<std::path::PathBuf> {
    let dir = target_dir().join("tools/python");
    let marker = dir.join(".installed");
    let wanted = PYTHON_PACKAGES.join(" ");
    if fs::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(dir);
    }
    let mut pip = Command::new("python3");
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ])
    .args(["--upgrade", "--target"])
    .arg(&dir)
    .args(PYTHON_PACKAGES);
    run_cmd(&mut pip)?;
    fs::write(&marker, wanted)?;
    Ok(dir)
}
