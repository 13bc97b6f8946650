//! Schemathesis (PyPI) against the OpenAPI document a running portal serves, once with an
//! admin's API token and once with a researcher's: every operation, generated and mutated
//! inputs, bounded in examples and time.
//!
//! It fails on any 5xx, any answer whose status, content type, headers or body the document
//! does not describe, any request the document forbids that the API accepts, and on a
//! document it cannot read. What it checks and for how long is in
//! `tests/schemathesis/schemathesis.toml`.
//!
//! The portal runs with the demo catalog, the development sign-in and no rate limit on token
//! checks (schemathesis sends thousands of requests a minute from one address; the limits
//! have their own tests). The seed is fixed so that a run can be repeated;
//! `MIRANTE_SCHEMATHESIS_SEED` picks another.

use std::{env, fs, process::Command, time::Duration};

use anyhow::{Context, Result};

use crate::{
    bench::{
        client::{Client, sign_in_as},
        server::{Place, Server, Source},
    },
    manifests, run_cmd, server_bin, site_root, target_dir, workspace_root,
};

/// Runs schemathesis as `ada` (admin) and as `rui` (researcher).
pub(crate) fn run() -> Result<()> {
    let python = manifests::python_packages()?;
    let scratch = target_dir().join("schemathesis");
    if scratch.exists() {
        fs::remove_dir_all(&scratch).with_context(|| format!("clearing {}", scratch.display()))?;
    }
    fs::create_dir_all(&scratch)?;
    let bin = server_bin("debug");
    let site = site_root();
    let place = Place {
        bin: &bin,
        site_root: &site,
        scratch: &scratch,
    };
    let catalog = workspace_root().join("catalog");
    let log = scratch.join("server.log");
    let mut server = Server::spawn(
        &place,
        Source::Dir(&catalog),
        &scratch.join("data"),
        &log,
        &[
            ("MIRANTE_PUBLIC_CATALOG", "false"),
            ("MIRANTE_TOKEN_CHECKS_PER_MINUTE", "0"),
            ("MIRANTE_PROBE_INTERVAL_SECS", "0"),
        ],
    )?;
    let addr = server.wait_ready()?;
    let client = Client::new(addr, Duration::from_secs(30));
    let config = workspace_root().join("tests/schemathesis/schemathesis.toml");
    let seed = env::var("MIRANTE_SCHEMATHESIS_SEED").ok();
    let mut failed = Vec::new();
    for user in ["rui", "ada"] {
        let credentials = sign_in_as(&client, user)?;
        eprintln!("schemathesis: as {user} against http://{addr}");
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "schemathesis.cli", "--no-color", "--config-file"])
            .arg(&config)
            .arg("run")
            .arg(format!("http://{addr}/api/v1/openapi.json"))
            // The configuration reads the token from here: not on the command line, which
            // is echoed to the log.
            .env("MIRANTE_API_TOKEN", &credentials.token)
            .env("PYTHONPATH", &python)
            // Its own files (reports, the hypothesis database) stay in the scratch folder.
            .current_dir(&scratch);
        if let Some(seed) = &seed {
            cmd.args(["--seed", seed]);
        }
        if let Err(error) = run_cmd(&mut cmd) {
            failed.push(format!("as {user}: {error:#}"));
        }
    }
    server.stop();
    if failed.is_empty() {
        Ok(())
    } else {
        anyhow::bail!(
            "schemathesis found problems ({}); the portal's log is {}",
            failed.join("; "),
            log.display()
        )
    }
}
