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
};

use anyhow::{Context, Result, bail};

mod bench;
mod precompress;

/// Name of the wasm bundle and stylesheet; also set as `LEPTOS_OUTPUT_NAME` in .cargo/config.toml.
const OUTPUT_NAME: &str = "mirante";

const USAGE: &str = "usage: cargo xtask <command> [--release]

commands:
  run      build everything (wasm bundle included) and start the portal on http://127.0.0.1:3000
  build    build the wasm bundle and the server
  test     formatting, lints, every unit/integration test and the browser tests
  setup    install the tools the other commands need
  bench    build for release and measure catalog load, memory, start-up and HTTP latency
           and throughput on synthetic catalogs (--quick: 1,000 items, short runs)
  synth N DIR  write the benchmark's synthetic catalog of N items into DIR (relative to the
           workspace root), for measuring by hand";

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
        Some("bench") => {
            setup(false)?;
            bench::run(&root, &args[1..])
        }
        Some("synth") => {
            let (Some(n), Some(dir)) = (args.get(1), args.get(2)) else {
                bail!("usage: cargo xtask synth N DIR");
            };
            let n: usize = n.parse().context("N must be a number of items")?;
            let (files, bytes) = bench::write_catalog(Path::new(dir), n)?;
            println!("wrote {n} items in {files} files ({bytes} bytes) to {dir}");
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

/// Builds the hydration bundle into `target/site/pkg` and the server binary.
pub(crate) fn build(release: bool) -> Result<()> {
    build_wasm(release)?;
    let mut args = vec!["build", "--package", "mirante", "--bin", "mirante"];
    if release {
        args.push("--release");
    }
    sh(&cargo(), args)
}

fn build_wasm(release: bool) -> Result<()> {
    let profile = if release { "wasm-release" } else { "dev" };
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
    let dir = if release { "wasm-release" } else { "debug" };
    let wasm = format!("target/wasm32-unknown-unknown/{dir}/mirante_frontend.wasm");
    let pkg = Path::new("target/site/pkg");
    fs::create_dir_all(pkg)?;
    sh(
        &wasm_bindgen_bin(),
        [
            "--target",
            "web",
            "--out-dir",
            "target/site/pkg",
            "--out-name",
            OUTPUT_NAME,
            "--no-typescript",
            wasm.as_str(),
        ],
    )?;
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
    if release {
        precompress::bundle(pkg)?;
    }
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
    let bin = if release {
        "target/release/mirante"
    } else {
        "target/debug/mirante"
    };
    let mut cmd = Command::new(bin);
    cmd.arg("serve");
    site_env(&mut cmd);
    run_cmd(&mut cmd)
}

/// Points the server at the built site unless the caller already did.
pub(crate) fn site_env(cmd: &mut Command) {
    if env::var_os("LEPTOS_SITE_ROOT").is_none() {
        cmd.env("LEPTOS_SITE_ROOT", "target/site");
    }
}

/// Everything a change must pass: formatting, lints (server and wasm), all tests on
/// SQLite and PostgreSQL, and the browser tests against the built portal.
fn test() -> Result<()> {
    sh(&cargo(), ["fmt", "--all", "--check"])?;
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
    build(false)?;
    sh(&cargo(), ["test", "--workspace"])?;
    // The test OpenID provider's own self-test.
    let mut oidc = Command::new("node");
    // A test that hangs fails after a minute instead of holding the whole run.
    oidc.args(["--test", "--test-timeout=60000"])
        .current_dir("tests/oidc");
    run_cmd(&mut oidc)?;
    let mut node = Command::new("node");
    node.args(["--test", "--test-concurrency=1", "--test-timeout=300000"])
        .current_dir("tests/browser")
        .env("MIRANTE_BIN", workspace_root().join("target/debug/mirante"))
        .env("LEPTOS_SITE_ROOT", workspace_root().join("target/site"));
    run_cmd(&mut node)
}
