//! The synthetic catalog the benchmark measures, and how long `mirante catalog check` takes to
//! load it.

use std::{fs, path::Path, process::Command};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::{Ctx, SEED, proc::undisturbed};

/// Writes the synthetic catalog of `n` items; returns the number of files and bytes.
pub(crate) fn write_catalog(dir: &Path, n: usize) -> Result<(usize, usize)> {
    let files = mirante_domain::synthetic::synthetic(n, SEED);
    let mut bytes = 0;
    for (rel, yaml) in &files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, yaml).with_context(|| format!("writing {}", path.display()))?;
        bytes += yaml.len();
    }
    Ok((files.len(), bytes))
}

/// `mirante catalog check` wall time, as hyperfine reports it (seconds).
pub(super) struct LoadTime {
    runs: u32,
    pub(super) min: f64,
    pub(super) median: f64,
    mean: f64,
    pub(super) max: f64,
    command: String,
    /// Share of the machine other processes used meanwhile.
    pub(super) others: f64,
    pub(super) attempts: usize,
}

impl LoadTime {
    pub(super) fn to_json(&self) -> Value {
        json!({
            "command": self.command,
            "runs": self.runs,
            "min_s": self.min,
            "median_s": self.median,
            "mean_s": self.mean,
            "max_s": self.max,
            "others_cpu_fraction": self.others,
            "attempts": self.attempts,
        })
    }
}

pub(super) fn load_time(ctx: &Ctx<'_>, catalog: &Path, n: usize) -> Result<LoadTime> {
    let export = ctx.scratch.join(format!("hyperfine-{n}.json"));
    let command = format!("{} catalog check {}", ctx.bin.display(), catalog.display());
    let runs = ctx.plan.load_runs.to_string();
    let ((), others, attempts) = undisturbed(ctx.plan.patience, "catalog load", || {
        let mut cmd = Command::new(&ctx.tools.hyperfine);
        cmd.args(["--shell=none", "--warmup", "2", "--runs", runs.as_str()])
            .args(["--style", "basic", "--export-json"])
            .arg(&export)
            .arg(&command)
            // stdout is the results table; the tools' progress goes to stderr.
            .stdout(std::io::stderr());
        crate::run_cmd(&mut cmd)
    })?;
    let v: Value = serde_json::from_str(&fs::read_to_string(&export)?)?;
    let r = &v["results"][0];
    let num = |k: &str| {
        r[k].as_f64()
            .with_context(|| format!("hyperfine JSON has no {k}"))
    };
    Ok(LoadTime {
        runs: ctx.plan.load_runs,
        min: num("min")?,
        median: num("median")?,
        mean: num("mean")?,
        max: num("max")?,
        command: format!(
            "hyperfine --shell=none --warmup 2 --runs {runs} 'target/release/mirante catalog check DIR'"
        ),
        others,
        attempts,
    })
}
