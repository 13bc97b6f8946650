//! The external programs the benchmark drives: `hyperfine` (Debian) and `oha` (crates.io),
//! installed from the package registries when missing.

use std::{env, path::PathBuf};

use anyhow::{Context, Result};

/// The external programs the benchmark drives.
pub(super) struct Tools {
    pub(super) hyperfine: String,
    pub(super) hyperfine_version: String,
    pub(super) oha: String,
    pub(super) oha_version: String,
}

impl Tools {
    /// Finds `hyperfine` (Debian) and `oha` (crates.io), installing whichever is missing.
    pub(super) fn ensure() -> Result<Self> {
        if crate::output("hyperfine", &["--version"]).is_none() {
            crate::sh("apt-get", ["update", "-q"])?;
            crate::sh("apt-get", ["install", "-y", "-q", "hyperfine"])?;
        }
        let hyperfine = "hyperfine".to_owned();
        let hyperfine_version = version_of(&hyperfine)?;

        let mut oha = cargo_bin("oha");
        if crate::output(&oha, &["--version"]).is_none() {
            crate::sh(&crate::cargo(), ["install", "oha", "--locked"])?;
            oha = cargo_bin("oha");
        }
        let oha_version = version_of(&oha)?;
        Ok(Tools {
            hyperfine,
            hyperfine_version,
            oha,
            oha_version,
        })
    }
}

fn version_of(program: &str) -> Result<String> {
    let out = crate::output(program, &["--version"])
        .with_context(|| format!("`{program} --version` failed"))?;
    Ok(out.trim().to_owned())
}

/// A program `cargo install` put in cargo's bin directory, which need not be on PATH.
fn cargo_bin(name: &str) -> String {
    let home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    match home.map(|h| h.join("bin").join(name)) {
        Some(bin) if bin.exists() => bin.to_string_lossy().into_owned(),
        _ => name.to_owned(),
    }
}
