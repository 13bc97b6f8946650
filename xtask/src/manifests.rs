//! `cargo xtask manifests`: renders every Kustomize overlay under deploy/kubernetes/overlays
//! and checks it, with the Argo CD Applications (and the demo monorepo's ApplicationSets), against Kubernetes' strict schemas (PyPI's
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
/// Property-based tests of the served API (`xtask/src/schemathesis.rs`).
const SCHEMATHESIS: &str = "schemathesis==4.32.5";
/// aiosmtpd, pinned: the mail server the notification tests send to and read back from.
const AIOSMTPD: &str = "aiosmtpd==1.4.6";
const PYTHON_PACKAGES: [&str; 4] = [
    KUBERNETES_VALIDATE,
    OPENAPI_SPEC_VALIDATOR,
    SCHEMATHESIS,
    AIOSMTPD,
];

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
    files.extend(files_in(&root.join("argocd"))?);
    // The demo monorepo's Argo CD ApplicationSets, which deploy what self-service merges.
    files.extend(files_in(Path::new("demo-monorepo/argocd"))?);

    run_checks(&python, &files)
}

/// Values the shipped self-service templates whose output is made of Kubernetes' own objects
/// are rendered with for [`check_templates`], every optional part switched on. (The
/// CloudNativePG objects of `postgres-cnpg` are checked against their CRDs by the template
/// tests, `server/tests/fixtures/crds`, which hold the Database and ObjectStore schemas the npm
/// models lack.)
const TEMPLATE_SAMPLES: [(&str, &str); 1] = [(
    "gpu-workspace",
    r#"{"name": "nlp", "cluster": "gpu-sp-01", "gpus": 1, "cpu": 1, "memory_gib": 2,
        "days": 30, "purpose": "Fine-tuning a pt-BR model"}"#,
)];

/// Renders the [`TEMPLATE_SAMPLES`] with `mirante template render` (the server
/// binary `bin`, over the demo catalog) and checks what it writes as the overlays are checked:
/// core objects against Kubernetes' strict schemas, CloudNativePG objects against their CRDs.
pub fn check_templates(bin: &Path) -> Result<()> {
    let python = python_packages()?;
    let root = Path::new("deploy/kubernetes");
    npm_ci(&root.join("test"))?;
    let out = target_dir().join("template-samples");
    if out.exists() {
        fs::remove_dir_all(&out)?;
    }
    let mut files = Vec::new();
    for (id, values) in TEMPLATE_SAMPLES {
        let dir = out.join(id);
        let values_file = out.join(format!("{id}.json"));
        fs::create_dir_all(&dir)?;
        fs::write(&values_file, values)?;
        let mut render = Command::new(bin);
        render
            .args(["template", "render", id, "--values"])
            .arg(&values_file)
            .arg("--out")
            .arg(&dir)
            // The demo catalog, whatever the caller's environment configures.
            .args(["--catalog", "catalog"]);
        run_cmd(&mut render)?;
        let mut yaml = Vec::new();
        collect_yaml(&dir, &mut yaml)?;
        yaml.sort();
        if yaml.is_empty() {
            bail!("`mirante template render {id}` wrote no YAML file");
        }
        let mut joined = String::new();
        for f in yaml {
            joined.push_str("---\n");
            joined.push_str(&fs::read_to_string(&f)?);
        }
        let file = out.join(format!("{id}.yaml"));
        fs::write(&file, joined)?;
        files.push(file);
    }
    run_checks(&python, &files)
}

/// Runs deploy/kubernetes/test/check.py on `files` with the Python packages in `python`.
fn run_checks(python: &Path, files: &[std::path::PathBuf]) -> Result<()> {
    let mut cmd = Command::new("python3");
    cmd.arg("deploy/kubernetes/test/check.py")
        .arg(KUBERNETES_VERSION)
        .args(files)
        .env("PYTHONPATH", python);
    run_cmd(&mut cmd)
}

/// The files of `dir`, sorted.
fn files_in(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.sort();
    Ok(files)
}

fn collect_yaml(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_yaml(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
    Ok(())
}

/// Installs the pinned Python checkers (kubernetes-validate, openapi-spec-validator,
/// schemathesis), the test mail server (aiosmtpd) and their dependencies into the cache once; returns the directory to put on
/// PYTHONPATH.
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
