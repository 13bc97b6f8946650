//! `cargo xtask bench [--quick]`: catalog load time, RSS, start-up time and HTTP latency and
//! throughput of the release server on synthetic catalogs.
//!
//! For each catalog size N (1,000 and 10,000 items; `--quick`: 1,000 only, shorter runs) it
//!
//! 1. writes `mirante_domain::synthetic::synthetic(N, SEED)` into a temporary directory;
//! 2. before every measurement waits (boundedly) for the machine to be quiet, and measures how
//!    much CPU other processes took during it, measuring again (at most three times) when they
//!    took more than 10 % of the machine; the results record both;
//! 3. times `target/release/mirante catalog check DIR` with `hyperfine` (whole process:
//!    read, parse, validate, build the snapshot);
//! 4. starts `target/release/mirante serve` several times on a fresh data directory and
//!    measures spawn → first `200` on `/readyz` (the port, bound as 0, is read from the
//!    server's `listening` log line, which is part of the time measured);
//! 5. starts it once more (with `MIRANTE_PUBLIC_CATALOG=true`), reads `VmRSS`/`VmHWM` from
//!    `/proc/<pid>/status` when it is ready, signs in through the development sign-in and
//!    makes a personal API token, then runs `oha` (a separate process) against each endpoint
//!    at 2 connections for a fixed time after a warm-up, three times (the run with the median
//!    throughput is reported) — anonymously and with the credentials a real client would
//!    carry — recording where the CPU time went, and reads the memory again.
//!
//! Everything runs on 127.0.0.1, every run has a fixed duration or count, and the servers are
//! stopped when the benchmark ends or fails. Results go to stdout as Markdown and to
//! `target/bench/results.{md,json}` (`target/` being cargo's target directory).
//!
//! The modules, by job: [`catalog`] writes the synthetic catalog and times its load, [`server`]
//! runs the measured server and times its start-up, [`client`] makes the harness's own
//! requests (readiness, sign-in), [`load`] drives the load generator, [`proc`] reads memory and
//! CPU time from `/proc` and tells whether others disturbed a measurement, [`report`] writes
//! the Markdown.

mod catalog;
pub(crate) mod client;
mod history;
mod load;
mod proc;
mod report;
pub(crate) mod server;
mod tools;

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

pub(crate) use catalog::write_catalog;

/// Writes the bare monorepo the history is measured on, with the synthetic catalog of `n`
/// items; returns its commits, the commits that change the catalog, and the seconds taken.
pub(crate) fn write_monorepo(dir: &Path, n: usize) -> Result<(usize, usize, f64)> {
    let repo = history::write_monorepo(dir, n, history::COMMITS, history::CATALOG_EVERY)?;
    Ok((repo.commits, repo.catalog_commits, repo.write_s))
}
use catalog::{LoadTime, load_time};
use client::{Access, Client, sign_in};
use history::HistoryResult;
use load::{Endpoint, HttpRun, load_run};
use proc::{Memory, Patience, machine, wait_for_quiet};
use report::render_markdown;
use server::{Server, Source, Startup, startup_time};
use tools::Tools;

/// Seed of the synthetic catalogs, fixed so that every run measures the same catalog.
const SEED: u64 = 42;
/// Concurrent connections of the load generator (the setting).
const CONNECTIONS: u32 = 2;

/// The targets of issue 2 for 10,000 items.
const TARGET_LOAD_S: f64 = 1.0;
const TARGET_RSS_BYTES: f64 = 50e6;
const TARGET_STARTUP_S: f64 = 1.0;
const TARGET_P99_S: f64 = 0.005;
/// 20 × Backstage's ~1,900 req/s by name.
const TARGET_RPS_BY_ID: f64 = 38_000.0;
/// 20 × Backstage's ~700 req/s for a 50-item filtered list.
const TARGET_RPS_LIST: f64 = 14_000.0;
/// A text query with its total, 50 items a page (issue 16: ≥ 10,000 req/s, 24× Backstage's
/// `by-query` with `fullTextFilterTerm`).
const TARGET_RPS_TEXT: f64 = 10_000.0;
/// The catalog size the targets are stated for.
const TARGET_N: usize = 10_000;
/// The targets for 100,000 items: load and memory, and by id and the filtered list at least
/// 80 % of their throughput at 10,000 items.
const TARGET_LARGE_LOAD_S: f64 = 2.0;
const TARGET_LARGE_RSS_BYTES: f64 = 150e6;
const TARGET_LARGE_RPS_RATIO: f64 = 0.8;

/// The catalog sizes of a full run.
const SIZES: [usize; 2] = [1_000, 10_000];
/// The size `--large` adds. Behind a flag: its history walk alone loads a 39 MB catalog 200
/// times, several minutes on this machine, on top of the HTTP runs of a third size.
const LARGE: usize = 100_000;

/// How much to measure.
struct Plan {
    quick: bool,
    sizes: Vec<usize>,
    /// Length of each measured HTTP run.
    duration: Duration,
    /// Length of the discarded HTTP run before the measured ones of an endpoint.
    warmup: Duration,
    /// Measured HTTP runs per endpoint; the one with the median throughput is reported.
    http_runs: usize,
    /// Measured `catalog check` runs (after 2 discarded ones).
    load_runs: u32,
    /// Server start-ups timed.
    startup_runs: usize,
    /// Reads of the catalog history at an unchanged tip, after the first one.
    warm_history_reads: usize,
    patience: Patience,
}

impl Plan {
    /// The plan of `cargo xtask bench ARGS`: `--quick` (a smoke run: N = 1,000, short runs, no
    /// waiting for a quiet machine), `--large` (N = 100,000 too), `--sizes N,N,...` (only
    /// those sizes).
    fn parse(args: &[String]) -> Result<Self> {
        let mut quick = false;
        let mut large = false;
        let mut sizes = None;
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--quick" => quick = true,
                "--large" => large = true,
                "--sizes" => {
                    let list = args
                        .next()
                        .context("--sizes needs a list such as 1000,100000")?;
                    let parsed = list
                        .split(',')
                        .map(|n| n.trim().replace('_', "").parse::<usize>())
                        .collect::<Result<Vec<_>, _>>()
                        .with_context(|| format!("--sizes {list:?}: not a list of numbers"))?;
                    if parsed.is_empty() || parsed.contains(&0) {
                        bail!("--sizes {list:?}: every size must be at least 1 item");
                    }
                    sizes = Some(parsed);
                }
                other => bail!("unknown bench option {other:?} (--quick, --large, --sizes N,N)"),
            }
        }
        let sizes = sizes.unwrap_or_else(|| {
            let mut sizes = if quick {
                vec![SIZES[0]]
            } else {
                SIZES.to_vec()
            };
            if large {
                sizes.push(LARGE);
            }
            sizes
        });
        Ok(if quick {
            Plan {
                quick,
                sizes,
                duration: Duration::from_secs(3),
                warmup: Duration::from_secs(1),
                http_runs: 1,
                load_runs: 5,
                startup_runs: 3,
                warm_history_reads: 3,
                patience: Patience::SMOKE,
            }
        } else {
            Plan {
                quick,
                sizes,
                duration: Duration::from_secs(10),
                warmup: Duration::from_secs(3),
                http_runs: 3,
                load_runs: 10,
                startup_runs: 5,
                warm_history_reads: 5,
                patience: Patience::RECORD,
            }
        })
    }
}

/// Runs the benchmark; `args` are the command line after `bench`.
pub fn run(args: &[String]) -> Result<()> {
    let plan = Plan::parse(args)?;
    let tools = Tools::ensure()?;
    crate::build(true)?;

    let bin = crate::server_bin("release");
    let site_root = crate::site_root();
    let out_dir = crate::target_dir().join("bench");
    fs::create_dir_all(&out_dir)?;
    let scratch = Scratch::new()?;

    let mut results = Vec::new();
    for &n in &plan.sizes {
        eprintln!("== bench: N = {n} items");
        let ctx = Ctx {
            bin: &bin,
            site_root: &site_root,
            out_dir: &out_dir,
            scratch: &scratch.0,
            tools: &tools,
            plan: &plan,
        };
        results.push(bench_size(&ctx, n)?);
    }

    let machine = machine()?;
    let markdown = render_markdown(&plan, &machine, &tools, &results);
    let doc = json!({
        "mode": if plan.quick { "quick" } else { "full" },
        "seed": SEED,
        "connections": CONNECTIONS,
        "duration_s": plan.duration.as_secs_f64(),
        "warmup_s": plan.warmup.as_secs_f64(),
        "machine": machine.to_json(),
        "tools": { "oha": tools.oha_version, "hyperfine": tools.hyperfine_version },
        "git_commit": crate::output("git", &["rev-parse", "HEAD"]).map(|s| s.trim().to_owned()),
        // Uncommitted changes to what was measured, if any.
        "git_uncommitted": crate::output(
            "git",
            &["status", "--porcelain", "--", "server", "domain", "frontend", "Cargo.lock"],
        )
        .map(|s| s.lines().map(str::to_owned).collect::<Vec<_>>()),
        "targets": {
            "n_items": TARGET_N,
            "load_s": TARGET_LOAD_S,
            "rss_bytes": TARGET_RSS_BYTES,
            "startup_s": TARGET_STARTUP_S,
            "p99_s": TARGET_P99_S,
            "rps_by_id": TARGET_RPS_BY_ID,
            "rps_filtered_list": TARGET_RPS_LIST,
            "rps_text_query": TARGET_RPS_TEXT,
        },
        "results": results.iter().map(SizeResult::to_json).collect::<Vec<_>>(),
    });
    fs::write(out_dir.join("results.md"), &markdown)?;
    fs::write(
        out_dir.join("results.json"),
        serde_json::to_string_pretty(&doc)? + "\n",
    )?;
    print!("{markdown}");
    eprintln!(
        "bench: wrote {} and {}",
        out_dir.join("results.md").display(),
        out_dir.join("results.json").display()
    );
    Ok(())
}

/// A scratch directory under the system temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self> {
        let dir = env::temp_dir().join(format!("mirante-bench-{}", std::process::id()));
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// What every measurement of one size needs.
struct Ctx<'a> {
    bin: &'a Path,
    site_root: &'a Path,
    out_dir: &'a Path,
    scratch: &'a Path,
    tools: &'a Tools,
    plan: &'a Plan,
}

/// Everything measured for one catalog size.
struct SizeResult {
    n: usize,
    /// Busy fraction of the machine just before measuring (other processes).
    background: f64,
    files: usize,
    bytes: usize,
    load: LoadTime,
    startup: Startup,
    rss_ready: Memory,
    rss_after: Memory,
    http: Vec<HttpRun>,
    /// Panics the measured server logged (`panicked at` lines).
    panics: usize,
    history: HistoryResult,
}

impl SizeResult {
    fn to_json(&self) -> Value {
        json!({
            "n_items": self.n,
            "background_busy_fraction": self.background,
            "catalog_files": self.files,
            "catalog_bytes": self.bytes,
            "load": self.load.to_json(),
            "startup": self.startup.to_json(),
            "memory_ready": self.rss_ready.to_json(),
            "memory_after_http": self.rss_after.to_json(),
            "http": self.http.iter().map(HttpRun::to_json).collect::<Vec<_>>(),
            "server_panics": self.panics,
            "history": self.history.to_json(),
        })
    }
}

fn bench_size(ctx: &Ctx<'_>, n: usize) -> Result<SizeResult> {
    let catalog = ctx.scratch.join(format!("catalog-{n}"));
    let (files, bytes) = write_catalog(&catalog, n)?;
    eprintln!(
        "bench: wrote {files} files ({:.1} MB) to {}",
        bytes as f64 / 1e6,
        catalog.display()
    );

    // The catalog must be valid, or every number below would measure an error path.
    let check = Command::new(ctx.bin)
        .args(["catalog", "check"])
        .arg(&catalog)
        .output()
        .context("running mirante catalog check")?;
    if !check.status.success() {
        bail!(
            "the synthetic catalog of {n} items is invalid:\n{}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
    eprint!("bench: {}", String::from_utf8_lossy(&check.stdout));

    let background = wait_for_quiet(ctx.plan.patience)?;
    let load = load_time(ctx, &catalog, n)?;
    let startup = startup_time(ctx, &catalog, n)?;

    // One server for memory and HTTP.
    let data = ctx.scratch.join(format!("data-{n}-http"));
    let log = ctx.out_dir.join(format!("server-{n}.log"));
    let mut server = Server::start(ctx, Source::Dir(&catalog), &data, &log)?;
    let addr = server.wait_ready()?;
    let rss_ready = Memory::of(server.pid())?;

    let item_id = format!("item-{:05}", n / 2);
    let by_id = format!("/api/v1/items/{item_id}");
    let list = "/api/v1/items?state=validated&site=sp&limit=50";
    let page = "/catalog?state=validated";
    // A word in no item of the synthetic catalog (every item is looked at without an index),
    // and a tag about a third of the items carry.
    let text_none = "/api/v1/items?q=service&limit=50";
    let text_some = "/api/v1/items?q=gpu&limit=50";
    let search_page = "/search?q=gpu";
    let client = Client::new(addr, Duration::from_secs(30));
    let creds = sign_in(&client)?;
    let endpoints = [
        Endpoint::new(
            "GET /healthz (baseline)",
            "/healthz",
            Access::Anonymous,
            None,
        ),
        Endpoint::new(
            "GET /api/v1/items/{id}",
            &by_id,
            Access::Anonymous,
            Some(TARGET_RPS_BY_ID),
        ),
        Endpoint::new(
            "GET /api/v1/items/{id}",
            &by_id,
            Access::Token,
            Some(TARGET_RPS_BY_ID),
        ),
        Endpoint::new(
            "GET /api/v1/items?state=validated&site=sp&limit=50",
            list,
            Access::Anonymous,
            Some(TARGET_RPS_LIST),
        ),
        Endpoint::new(
            "GET /api/v1/items?state=validated&site=sp&limit=50",
            list,
            Access::Token,
            Some(TARGET_RPS_LIST),
        ),
        Endpoint::new(
            "GET /api/v1/items?q=service&limit=50 (no match)",
            text_none,
            Access::Anonymous,
            Some(TARGET_RPS_TEXT),
        ),
        Endpoint::new(
            "GET /api/v1/items?q=gpu&limit=50",
            text_some,
            Access::Anonymous,
            Some(TARGET_RPS_TEXT),
        ),
        Endpoint::new(
            "GET /search?q=gpu (SSR page)",
            search_page,
            Access::Anonymous,
            None,
        ),
        Endpoint::new(
            "GET /catalog?state=validated (SSR page)",
            page,
            Access::Anonymous,
            None,
        ),
        Endpoint::new(
            "GET /catalog?state=validated (SSR page)",
            page,
            Access::Session,
            None,
        ),
    ];
    let mut http = Vec::new();
    for e in &endpoints {
        let headers = creds.headers(e.access);
        let res = client.get(&e.path, &headers)?;
        if res.status != 200 {
            bail!("{} ({}) answered {}, not 200", e.path, e.access, res.status);
        }
        if e.path.starts_with("/api/v1/items?") && e.access == Access::Anonymous {
            let v: Value = serde_json::from_slice(&res.body)
                .with_context(|| format!("{} did not answer JSON", e.path))?;
            let count = v["items"].as_array().map_or(0, Vec::len);
            eprintln!("bench: {} returns {count} items", e.path);
        }
        http.push(load_run(ctx, server.pid(), addr, e, &headers)?);
    }
    let rss_after = Memory::of(server.pid())?;
    server.stop();
    let panics = fs::read_to_string(&log)?
        .lines()
        .filter(|l| l.contains("panicked at"))
        .count();
    if panics > 0 {
        eprintln!(
            "bench: WARNING: the server logged {panics} panic(s) during the HTTP runs; see {}",
            log.display()
        );
    }

    let history = history::measure(ctx, n)?;

    Ok(SizeResult {
        n,
        background,
        files,
        bytes,
        load,
        startup,
        rss_ready,
        rss_after,
        http,
        panics,
        history,
    })
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
