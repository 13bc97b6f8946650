//! `cargo xtask`: build, run, test and benchmark Mirante with plain cargo.
//!
//! Every command installs what it needs and is missing (the wasm target, a wasm-bindgen-cli
//! pinned to the version in Cargo.lock, Debian's Chromium and the npm packages of the browser
//! tests), using only the package registries.

use std::{
    env,
    ffi::OsStr,
    fs,
    path::{Path, PathBuf},
    process::{Command, ExitCode},
    sync::OnceLock,
};

use anyhow::{Context, Result, bail};

mod bench;
mod container;
mod fingerprint;
mod fuzz;
mod manifests;
mod precompress;
mod schemathesis;

/// Name of the wasm bundle and stylesheet; also set as `LEPTOS_OUTPUT_NAME` in .cargo/config.toml.
const OUTPUT_NAME: &str = "mirante";

const USAGE: &str = "usage: cargo xtask <command> [--release]

commands:
  run      build everything (wasm bundle included) and start the portal on http://127.0.0.1:3000
  build    build the wasm bundle and the server
  test     formatting, lints, every unit/integration test and the browser tests
  setup    install the tools the other commands need
  container  build the container image with podman around the debug build and check a
           container of it (health check, /readyz, sign-in, catalog)
  fuzz     run each fuzz target of fuzz/ for MIRANTE_FUZZ_SECS (60) seconds (nightly)
  deny     check the dependency tree against deny.toml (licenses, bans, sources; advisories
           when the advisory database can be fetched)
  schemathesis  build the server and run schemathesis against its OpenAPI document as an
           admin and as a researcher (tests/schemathesis/schemathesis.toml)
  manifests  render the Kubernetes overlays (deploy/kubernetes) and check them against
           Kubernetes' schemas and the CloudNativePG and Argo CD CRDs, and the same for
           what each shipped self-service template renders
  bench    build for release and measure catalog load, memory, start-up and HTTP latency
           and throughput on synthetic catalogs, and the catalog history on a monorepo of
           20,000 commits (--quick: 1,000 items, short runs; --large: 100,000 items too;
           --sizes N,N: only those sizes)
  synth N DIR [--monorepo]  write the benchmark's synthetic catalog of N items into DIR
           (relative to the workspace root), for measuring by hand; --monorepo: the bare
           monorepo of 20,000 commits the history is measured on, with that catalog";

/// The cargo-deny release the test command installs (`cargo install --locked`).
const CARGO_DENY: &str = "0.20.2";
/// The cargo-fuzz release the test command installs (`cargo install --locked`).
const CARGO_FUZZ: &str = "0.13.2";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = env::args().skip(1).collect();
    let release = args.iter().any(|a| a == "--release");
    let root = workspace_root();
    env::set_current_dir(&root)?;
    match args.first().map(String::as_str) {
        Some("run") => {
            setup(false)?;
            build(release)?;
            serve(release)
        }
        Some("build") => {
            setup(false)?;
            build(release)
        }
        Some("test") => {
            setup(true)?;
            test()
        }
        Some("setup") => setup(true),
        Some("manifests") => {
            manifests::check()?;
            sh(&cargo(), ["build", "--package", "mirante"])?;
            manifests::check_templates(&server_bin("debug"))
        }
        Some("fuzz") => {
            setup(true)?;
            fuzz::run()
        }
        Some("deny") => {
            setup(true)?;
            deny()
        }
        Some("schemathesis") => {
            setup(false)?;
            build(false)?;
            schemathesis::run()
        }
        Some("container") => {
            setup(false)?;
            build(false)?;
            container::test()
        }
        Some("bench") => {
            setup(false)?;
            bench::run(&args[1..])
        }
        Some("synth") => {
            let (Some(n), Some(dir)) = (args.get(1), args.get(2)) else {
                bail!("usage: cargo xtask synth N DIR [--monorepo]");
            };
            let n: usize = n.parse().context("N must be a number of items")?;
            match args.get(3).map(String::as_str) {
                None => {
                    let (files, bytes) = bench::write_catalog(Path::new(dir), n)?;
                    println!("wrote {n} items in {files} files ({bytes} bytes) to {dir}");
                }
                Some("--monorepo") => {
                    let (commits, catalog_commits, seconds) =
                        bench::write_monorepo(Path::new(dir), n)?;
                    println!(
                        "wrote a bare monorepo of {commits} commits on main ({catalog_commits} \
                         change its catalog of {n} items) to {dir} in {seconds:.1} s"
                    );
                }
                Some(other) => bail!("unknown synth option {other:?} (only --monorepo)"),
            }
            Ok(())
        }
        _ => {
            println!("{USAGE}");
            Ok(())
        }
    }
}

/// The workspace root: the parent of this crate's manifest directory.
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in a workspace")
        .to_path_buf()
}

/// Cargo's target directory for this workspace: `target/` under the root unless
/// `CARGO_TARGET_DIR`, `CARGO_BUILD_TARGET_DIR` or a `.cargo/config.toml` `build.target-dir`
/// says otherwise. Cargo itself resolves those (with their precedence and their rules for
/// relative paths), so it is asked once rather than imitated.
pub(crate) fn target_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        query_target_dir(metadata_command(&workspace_root())).unwrap_or_else(|e| {
            eprintln!("xtask: cannot ask cargo for its target directory: {e:#}");
            std::process::exit(1)
        })
    })
}

/// `cargo metadata` for the workspace at `root`, without resolving dependencies.
fn metadata_command(root: &Path) -> Command {
    let mut cmd = Command::new(cargo());
    cmd.args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root);
    cmd
}

/// The `target_directory` that a `cargo metadata` command reports.
fn query_target_dir(mut metadata: Command) -> Result<PathBuf> {
    let out = metadata.output().context("running cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("cargo metadata did not print JSON")?;
    let dir = v["target_directory"]
        .as_str()
        .context("cargo metadata has no target_directory")?;
    Ok(PathBuf::from(dir))
}

/// Where a binary of the server is built for `profile` (`debug` or `release`).
pub(crate) fn server_bin(profile: &str) -> PathBuf {
    target_dir().join(profile).join("mirante")
}

/// The site the server serves: the hydration bundle in `pkg/`.
pub(crate) fn site_root() -> PathBuf {
    target_dir().join("site")
}

/// Runs a command, echoing it, and fails if it fails.
pub(crate) fn sh<I, S>(program: &str, args: I) -> Result<()>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(program);
    cmd.args(args);
    run_cmd(&mut cmd)
}

/// Runs a prepared command, echoing it, and fails if it fails.
pub(crate) fn run_cmd(cmd: &mut Command) -> Result<()> {
    let shown = format!(
        "{} {}",
        cmd.get_program().to_string_lossy(),
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    );
    eprintln!("+ {shown}");
    let status = cmd
        .status()
        .with_context(|| format!("could not start `{shown}`"))?;
    if !status.success() {
        bail!("`{shown}` failed with {status}");
    }
    Ok(())
}

fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn cargo() -> String {
    env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Installs what is missing: wasm target, pinned wasm-bindgen-cli and, for tests,
/// Chromium and the npm packages of the browser tests and the test OpenID provider.
fn setup(for_tests: bool) -> Result<()> {
    let installed = output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    if !installed
        .lines()
        .any(|l| l.trim() == "wasm32-unknown-unknown")
    {
        sh("rustup", ["target", "add", "wasm32-unknown-unknown"])?;
    }

    let wanted = locked_version("wasm-bindgen")?;
    let have = output(&wasm_bindgen_bin(), &["--version"]).unwrap_or_default();
    if have.split_whitespace().nth(1) != Some(wanted.as_str()) {
        // Without --locked: the CLI's own lockfile names a crate version the registry lacks.
        sh(
            &cargo(),
            ["install", "wasm-bindgen-cli", "--version", wanted.as_str()],
        )?;
    }

    if for_tests {
        // The dependency checks (deny.toml) and the fuzz targets' runner.
        install_cargo_tool("deny", CARGO_DENY)?;
        install_cargo_tool("fuzz", CARGO_FUZZ)?;
        if !Path::new("/usr/bin/chromium").exists() {
            sh("apt-get", ["update", "-q"])?;
            sh("apt-get", ["install", "-y", "-q", "chromium"])?;
        }
        npm_ci(Path::new("tests/browser"))?;
        // The OpenID provider the sign-in tests start.
        npm_ci(Path::new("tests/oidc"))?;
        // GitHub's OpenAPI description and webhook examples the forge fakes check against.
        npm_ci(Path::new("tests/forges"))?;
    }
    Ok(())
}

/// Installs `cargo-<name>` at `version` from crates.io (`--locked`) unless `cargo <name>
/// --version` already says that version.
fn install_cargo_tool(name: &str, version: &str) -> Result<()> {
    let have = output(&cargo(), &[name, "--version"]).unwrap_or_default();
    if have.split_whitespace().nth(1) == Some(version) {
        return Ok(());
    }
    let krate = format!("cargo-{name}");
    sh(
        &cargo(),
        ["install", krate.as_str(), "--version", version, "--locked"],
    )
}

/// The wasm-bindgen CLI that `cargo install` puts in cargo's bin directory, which need not
/// be on PATH.
fn wasm_bindgen_bin() -> String {
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"));
    let bin = cargo_home.join("bin/wasm-bindgen");
    if bin.exists() {
        bin.to_string_lossy().into_owned()
    } else {
        "wasm-bindgen".into()
    }
}

/// Installs a test peer's npm packages from its lockfile when they are not there yet.
pub(crate) fn npm_ci(dir: &Path) -> Result<()> {
    if dir.join("node_modules/.package-lock.json").exists() {
        return Ok(());
    }
    let mut cmd = Command::new("npm");
    cmd.args(["ci", "--no-audit", "--no-fund"]).current_dir(dir);
    run_cmd(&mut cmd)
}

/// The version of a package as resolved in Cargo.lock.
fn locked_version(name: &str) -> Result<String> {
    let lock = fs::read_to_string("Cargo.lock").context("reading Cargo.lock")?;
    let needle = format!("name = \"{name}\"\nversion = \"");
    let start = lock
        .find(&needle)
        .with_context(|| format!("{name} is not in Cargo.lock"))?
        + needle.len();
    let end = lock[start..].find('"').context("malformed Cargo.lock")? + start;
    Ok(lock[start..end].to_string())
}

/// Builds the hydration bundle into `<target dir>/site/pkg` and the server binary.
pub(crate) fn build(release: bool) -> Result<()> {
    build_wasm(release)?;
    let mut args = vec!["build", "--package", "mirante", "--bin", "mirante"];
    if release {
        args.push("--release");
    }
    sh(&cargo(), args)
}

fn build_wasm(release: bool) -> Result<()> {
    let profile = if release { "wasm-release" } else { "wasm-dev" };
    sh(
        &cargo(),
        [
            "build",
            "--package",
            "mirante-frontend",
            "--lib",
            "--target",
            "wasm32-unknown-unknown",
            "--no-default-features",
            "--features",
            "hydrate",
            "--profile",
            profile,
        ],
    )?;
    let wasm = target_dir()
        .join("wasm32-unknown-unknown")
        .join(profile)
        .join("mirante_frontend.wasm");
    let pkg = &site_root().join("pkg");
    fs::create_dir_all(pkg)?;
    let mut bindgen = Command::new(wasm_bindgen_bin());
    bindgen
        .args(["--target", "web", "--out-dir"])
        .arg(pkg)
        .args(["--out-name", OUTPUT_NAME, "--no-typescript"])
        // Function names are a third of an unstripped bundle; a panic still says where.
        .arg("--remove-name-section")
        .arg(&wasm);
    run_cmd(&mut bindgen)?;
    // leptos looks for `<name>.wasm` when LEPTOS_OUTPUT_NAME is set at compile time.
    let bg = pkg.join(format!("{OUTPUT_NAME}_bg.wasm"));
    let out = pkg.join(format!("{OUTPUT_NAME}.wasm"));
    fs::rename(&bg, &out).with_context(|| format!("renaming {}", bg.display()))?;
    if release {
        wasm_opt(&out)?;
    }
    fs::copy(
        "frontend/style/main.css",
        pkg.join(format!("{OUTPUT_NAME}.css")),
    )?;
    precompress::remove_stale(pkg)?;
    let name = fingerprint::write(pkg, OUTPUT_NAME)?;
    // Only the hashed files are named in pages; the unhashed ones are compressed on the fly.
    let level = if release {
        precompress::Level::Best
    } else {
        precompress::Level::Fast
    };
    precompress::bundle(pkg, &name, level)?;
    Ok(())
}

/// Shrinks the release bundle with npm's binaryen (Debian's build breaks hydration).
fn wasm_opt(wasm: &Path) -> Result<()> {
    let tools = Path::new("xtask/tools");
    npm_ci(tools)?;
    let bin = tools.join("node_modules/.bin/wasm-opt");
    let mut cmd = Command::new(bin);
    cmd.arg("-Oz")
        .arg("--enable-bulk-memory")
        .arg("--enable-nontrapping-float-to-int")
        .arg(wasm)
        .arg("-o")
        .arg(wasm);
    run_cmd(&mut cmd)
}

/// Starts the built server in the foreground, passing the environment through.
fn serve(release: bool) -> Result<()> {
    let bin = server_bin(if release { "release" } else { "debug" });
    let mut cmd = Command::new(bin);
    cmd.arg("serve");
    site_env(&mut cmd);
    run_cmd(&mut cmd)
}

/// Points the server at the built site unless the caller already did.
pub(crate) fn site_env(cmd: &mut Command) {
    if env::var_os("LEPTOS_SITE_ROOT").is_none() {
        cmd.env("LEPTOS_SITE_ROOT", site_root());
    }
}

/// Everything a change must pass: formatting, lints (server and wasm), the Kubernetes
/// manifests, the container image, all tests on SQLite and PostgreSQL, and the browser tests
/// against the built portal.
fn test() -> Result<()> {
    sh(&cargo(), ["fmt", "--all", "--check"])?;
    deny()?;
    sh(
        &cargo(),
        [
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    sh(
        &cargo(),
        [
            "clippy",
            "--package",
            "mirante-frontend",
            "--lib",
            "--target",
            "wasm32-unknown-unknown",
            "--no-default-features",
            "--features",
            "hydrate",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    manifests::check()?;
    build(false)?;
    check_openapi()?;
    schemathesis::run()?;
    manifests::check_templates(&server_bin("debug"))?;
    container::test()?;
    // The notification tests start a real mail server (aiosmtpd) from the Python cache.
    let mut tests = Command::new(cargo());
    tests
        .args(["test", "--workspace"])
        .env("MIRANTE_TEST_PYTHONPATH", manifests::python_packages()?);
    run_cmd(&mut tests)?;
    fuzz::run()?;
    // The test OpenID provider's own self-test.
    let mut oidc = Command::new("node");
    // A test that hangs fails after a minute instead of holding the whole run.
    oidc.args(["--test", "--test-timeout=60000"])
        .current_dir("tests/oidc");
    run_cmd(&mut oidc)?;
    // The fake Argo CD the self-service browser tests follow merged resources in.
    sh(
        &cargo(),
        [
            "build",
            "--package",
            "mirante-tests",
            "--bin",
            "fake-argocd",
        ],
    )?;
    let mut node = Command::new("node");
    node.args(["--test", "--test-concurrency=1", "--test-timeout=300000"])
        .current_dir("tests/browser")
        .env("MIRANTE_BIN", server_bin("debug"))
        .env(
            "FAKE_ARGOCD_BIN",
            target_dir().join("debug").join("fake-argocd"),
        )
        .env("LEPTOS_SITE_ROOT", site_root());
    run_cmd(&mut node)
}

/// The dependency tree against deny.toml: licenses, banned crates and sources always; known
/// vulnerabilities when the advisory database can be fetched (it is a git repository on
/// GitHub, which a machine may not reach: then that check is skipped and says so).
fn deny() -> Result<()> {
    sh(
        &cargo(),
        [
            "deny",
            "check",
            "--hide-inclusion-graph",
            "licenses",
            "bans",
            "sources",
        ],
    )?;
    if sh(&cargo(), ["deny", "fetch", "db"]).is_ok() {
        sh(
            &cargo(),
            [
                "deny",
                "check",
                "--disable-fetch",
                "--hide-inclusion-graph",
                "advisories",
            ],
        )
    } else {
        eprintln!("xtask: the advisory database cannot be fetched; advisories are not checked");
        Ok(())
    }
}

/// Validates the server's OpenAPI document with openapi-spec-validator (PyPI), the checker
/// client generators rely on: a document it refuses breaks generated clients.
fn check_openapi() -> Result<()> {
    let doc = Command::new(server_bin("debug"))
        .arg("openapi")
        .output()
        .context("running `mirante openapi`")?;
    if !doc.status.success() {
        bail!(
            "`mirante openapi` failed: {}",
            String::from_utf8_lossy(&doc.stderr).trim()
        );
    }
    let file = target_dir().join("openapi.json");
    fs::write(&file, &doc.stdout)?;
    let python = manifests::python_packages()?;
    let mut check = Command::new("python3");
    check
        .args(["-m", "openapi_spec_validator"])
        .arg(&file)
        .env("PYTHONPATH", python);
    run_cmd(&mut check)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-package workspace in a temporary directory, with `config` as its
    /// `.cargo/config.toml` when given.
    fn workspace(config: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
        )
        .unwrap();
        fs::create_dir(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("src/lib.rs"), "").unwrap();
        if let Some(config) = config {
            fs::create_dir(dir.path().join(".cargo")).unwrap();
            fs::write(dir.path().join(".cargo/config.toml"), config).unwrap();
        }
        dir
    }

    /// The target directory cargo reports for `dir` with only `env` set of the variables that
    /// move it (the caller's own must not leak into the test).
    fn resolved(dir: &Path, env: &[(&str, &Path)]) -> PathBuf {
        let mut cmd = metadata_command(dir);
        cmd.env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR");
        for (key, value) in env {
            cmd.env(key, value);
        }
        query_target_dir(cmd).unwrap()
    }

    #[test]
    fn the_target_directory_is_target_under_the_workspace_by_default() {
        let ws = workspace(None);

        let dir = resolved(ws.path(), &[]);

        assert_eq!(dir, ws.path().canonicalize().unwrap().join("target"));
    }

    #[test]
    fn a_config_files_target_dir_is_read_relative_to_the_folder_holding_cargo() {
        let ws = workspace(Some("[build]\ntarget-dir = \"out/build\"\n"));

        let dir = resolved(ws.path(), &[]);

        assert_eq!(dir, ws.path().canonicalize().unwrap().join("out/build"));
    }

    #[test]
    fn cargo_target_dir_and_cargo_build_target_dir_win_over_the_config_file() {
        let ws = workspace(Some("[build]\ntarget-dir = \"out/build\"\n"));
        let elsewhere = tempfile::tempdir().unwrap();
        let env_dir = elsewhere.path().join("from-env");
        let build_dir = elsewhere.path().join("from-build-env");

        let with_target_dir = resolved(ws.path(), &[("CARGO_TARGET_DIR", &env_dir)]);
        let with_build_target_dir = resolved(ws.path(), &[("CARGO_BUILD_TARGET_DIR", &build_dir)]);

        assert_eq!(with_target_dir, env_dir);
        assert_eq!(with_build_target_dir, build_dir);
    }

    #[test]
    fn a_relative_cargo_target_dir_is_read_from_the_workspace_root() {
        let ws = workspace(None);

        let dir = resolved(ws.path(), &[("CARGO_TARGET_DIR", Path::new("rel/target"))]);

        assert_eq!(dir, ws.path().canonicalize().unwrap().join("rel/target"));
    }
}
