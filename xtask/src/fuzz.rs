//! The fuzz targets of `fuzz/` (cargo fuzz, libFuzzer), each for a bounded time from its
//! committed seed corpus. See fuzz/README.md for what each target checks.

use std::{env, fs, path::Path, process::Command};

use anyhow::{Context, Result, bail};

use crate::{output, run_cmd, target_dir, workspace_root};

/// The targets, in the order they run.
const TARGETS: [&str; 4] = ["catalog_load", "yaml_quote", "catalog_edit", "webhook"];

/// libFuzzer's seed when `MIRANTE_FUZZ_SEED` is not set.
const DEFAULT_SEED: &str = "20261204";

/// Seconds each target runs when `MIRANTE_FUZZ_SECS` is not set.
const DEFAULT_SECS: u64 = 60;

/// Builds every target once, then runs each for its time; fails on the first crash, naming
/// the input that caused it.
pub(crate) fn run() -> Result<()> {
    let toolchains = output("rustup", &["toolchain", "list"]).unwrap_or_default();
    if !toolchains.lines().any(|l| l.starts_with("nightly")) {
        bail!("the fuzz targets need the nightly toolchain (`rustup toolchain install nightly`)");
    }
    let secs = match env::var("MIRANTE_FUZZ_SECS") {
        Ok(v) => v
            .parse::<u64>()
            .with_context(|| format!("MIRANTE_FUZZ_SECS={v:?} is not a number of seconds"))?,
        Err(_) => DEFAULT_SECS,
    };
    // Fixed, so that a run can be repeated: the same seeds and corpus explore the same inputs
    // first. MIRANTE_FUZZ_SEED picks another (0: libFuzzer draws one).
    let seed = env::var("MIRANTE_FUZZ_SEED").unwrap_or_else(|_| DEFAULT_SEED.to_owned());
    let dir = workspace_root().join("fuzz");
    let work = target_dir().join("fuzz");
    let build_dir = work.join("build");
    let mut build = fuzz_command(&dir, &build_dir, "build");
    run_cmd(&mut build)?;
    for target in TARGETS {
        // New inputs go to the scratch corpus (the first folder); the seeds are only read.
        let found = work.join("corpus").join(target);
        let artifacts = work.join("artifacts").join(target);
        fs::create_dir_all(&found)?;
        fs::create_dir_all(&artifacts)?;
        let mut cmd = fuzz_command(&dir, &build_dir, "run");
        cmd.arg(target)
            .arg(&found)
            .arg(Path::new("corpus").join(target))
            .arg("--")
            .arg(format!("-max_total_time={secs}"))
            .arg(format!("-seed={seed}"))
            .arg("-rss_limit_mb=2048")
            .arg("-timeout=10")
            .arg(format!("-artifact_prefix={}/", artifacts.display()));
        if let Err(error) = run_cmd(&mut cmd) {
            bail!(
                "fuzz target {target} failed ({error:#}); its input is in {}; reproduce with \
                 `cargo +nightly fuzz run -O {target} <file>` in fuzz/",
                artifacts.display()
            );
        }
    }
    Ok(())
}

/// `cargo +nightly fuzz <verb> -O` in `dir`, building into `build_dir`.
fn fuzz_command(dir: &Path, build_dir: &Path, verb: &str) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.args(["+nightly", "fuzz", verb, "-O", "--target-dir"])
        .arg(build_dir)
        .current_dir(dir)
        // The stable toolchain's settings of the main build are not the nightly build's.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO");
    cmd
}
