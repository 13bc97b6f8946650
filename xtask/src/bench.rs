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
//! `target/bench/results.{md,json}`.

use std::{
    env,
    fmt::{self, Write as _},
    fs::{self, File},
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// Seed of the synthetic catalogs, fixed so that every run measures the same catalog.
const SEED: u64 = 42;
/// Concurrent connections of the load generator (the issue's setting).
const CONNECTIONS: u32 = 2;
/// How long a server may take to log its address and answer `/readyz`.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// The targets of issue 2 for 10,000 items.
const TARGET_LOAD_S: f64 = 1.0;
const TARGET_RSS_BYTES: f64 = 50e6;
const TARGET_STARTUP_S: f64 = 1.0;
const TARGET_P99_S: f64 = 0.005;
/// 20 × Backstage's ~1,900 req/s by name.
const TARGET_RPS_BY_ID: f64 = 38_000.0;
/// 20 × Backstage's ~700 req/s for a 50-item filtered list.
const TARGET_RPS_LIST: f64 = 14_000.0;
/// The catalog size the targets are stated for.
const TARGET_N: usize = 10_000;

/// Busy fraction of the whole machine, before a size is measured, below which it counts as
/// quiet.
const QUIET_LOAD: f64 = 0.05;
/// How long to wait for a quiet machine before measuring anyway.
const QUIET_WAIT: Duration = Duration::from_secs(120);

/// How much to measure.
struct Plan {
    quick: bool,
    sizes: &'static [usize],
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
}

impl Plan {
    fn new(quick: bool) -> Self {
        if quick {
            Plan {
                quick,
                sizes: &[1_000],
                duration: Duration::from_secs(3),
                warmup: Duration::from_secs(1),
                http_runs: 1,
                load_runs: 5,
                startup_runs: 3,
            }
        } else {
            Plan {
                quick,
                sizes: &[1_000, 10_000],
                duration: Duration::from_secs(10),
                warmup: Duration::from_secs(3),
                http_runs: 3,
                load_runs: 10,
                startup_runs: 5,
            }
        }
    }
}

/// Runs the benchmark; `args` are the command line after `bench`.
pub fn run(args: &[String]) -> Result<()> {
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(other) = args.iter().find(|a| *a != "--quick") {
        bail!("unknown bench option {other:?} (only --quick)");
    }
    let plan = Plan::new(quick);
    let tools = Tools::ensure()?;
    crate::build(true)?;

    let bin = crate::server_bin("release");
    let site_root = crate::site_root();
    let out_dir = crate::target_dir().join("bench");
    fs::create_dir_all(&out_dir)?;
    let scratch = Scratch::new()?;

    let mut results = Vec::new();
    for &n in plan.sizes {
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

/// The external programs the benchmark drives.
struct Tools {
    hyperfine: String,
    hyperfine_version: String,
    oha: String,
    oha_version: String,
}

impl Tools {
    /// Finds `hyperfine` (Debian) and `oha` (crates.io), installing whichever is missing.
    fn ensure() -> Result<Self> {
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

    let background = wait_for_quiet()?;
    let load = load_time(ctx, &catalog, n)?;
    let startup = startup_time(ctx, &catalog, n)?;

    // One server for memory and HTTP.
    let data = ctx.scratch.join(format!("data-{n}-http"));
    let log = ctx.out_dir.join(format!("server-{n}.log"));
    let mut server = Server::start(ctx, &catalog, &data, &log)?;
    let addr = server.wait_ready()?;
    let rss_ready = Memory::of(server.pid())?;

    let item_id = format!("item-{:05}", n / 2);
    let by_id = format!("/api/v1/items/{item_id}");
    let list = "/api/v1/items?state=validated&site=sp&limit=50";
    let page = "/catalog?state=validated";
    let creds = sign_in(addr)?;
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
        let res = http_request(addr, "GET", &e.path, &headers, "")?;
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
    })
}

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
struct LoadTime {
    runs: u32,
    min: f64,
    median: f64,
    mean: f64,
    max: f64,
    command: String,
    /// Share of the machine other processes used meanwhile.
    others: f64,
    attempts: usize,
}

impl LoadTime {
    fn to_json(&self) -> Value {
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

fn load_time(ctx: &Ctx<'_>, catalog: &Path, n: usize) -> Result<LoadTime> {
    let export = ctx.scratch.join(format!("hyperfine-{n}.json"));
    let command = format!("{} catalog check {}", ctx.bin.display(), catalog.display());
    let runs = ctx.plan.load_runs.to_string();
    let ((), others, attempts) = undisturbed("catalog load", || {
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

/// Start-up times (seconds) of several fresh servers.
struct Startup {
    /// Spawn → the `listening` log line.
    to_listening: Vec<f64>,
    /// Spawn → first 200 on `/readyz`.
    to_ready: Vec<f64>,
    /// Share of the machine other processes used during each.
    others: Vec<f64>,
}

impl Startup {
    fn to_json(&self) -> Value {
        json!({
            "runs": self.to_ready.len(),
            "to_listening_s": self.to_listening,
            "to_ready_s": self.to_ready,
            "to_ready_median_s": median(&self.to_ready),
            "to_ready_min_s": min(&self.to_ready),
            "to_ready_max_s": max(&self.to_ready),
            "others_cpu_fraction": self.others,
        })
    }
}

fn startup_time(ctx: &Ctx<'_>, catalog: &Path, n: usize) -> Result<Startup> {
    let mut to_listening = Vec::new();
    let mut to_ready = Vec::new();
    let mut others = Vec::new();
    for k in 0..ctx.plan.startup_runs {
        let mut tries = 0;
        let ((listening, ready), other, _) = undisturbed("start-up", || {
            // A fresh data directory each time: the database is created and migrated too.
            tries += 1;
            let data = ctx.scratch.join(format!("data-{n}-startup-{k}-{tries}"));
            let log = ctx.scratch.join(format!("server-{n}-startup-{k}.log"));
            let mut server = Server::start(ctx, catalog, &data, &log)?;
            server.wait_ready()?;
            let times = (
                server.listening_after.unwrap_or_default().as_secs_f64(),
                server.ready_after.unwrap_or_default().as_secs_f64(),
            );
            server.stop();
            Ok(times)
        })?;
        eprintln!(
            "bench: start-up {}: listening after {:.1} ms, /readyz 200 after {:.1} ms",
            k + 1,
            listening * 1e3,
            ready * 1e3
        );
        to_listening.push(listening);
        to_ready.push(ready);
        others.push(other);
    }
    Ok(Startup {
        to_listening,
        to_ready,
        others,
    })
}

/// A `mirante serve` child process, stopped when dropped.
struct Server {
    child: Option<Child>,
    /// Copies the server's stderr to its log; ends when the server does.
    reader: Option<thread::JoinHandle<()>>,
    started: Instant,
    addr_rx: mpsc::Receiver<SocketAddr>,
    addr: Option<SocketAddr>,
    listening_after: Option<Duration>,
    ready_after: Option<Duration>,
}

impl Server {
    /// Spawns the server on port 0 with its stderr copied to `log`; the clock starts here.
    fn start(ctx: &Ctx<'_>, catalog: &Path, data: &Path, log: &Path) -> Result<Self> {
        let mut cmd = Command::new(ctx.bin);
        cmd.arg("serve");
        // Only what we set: no stray configuration from the caller's environment.
        for (key, _) in env::vars_os() {
            let k = key.to_string_lossy();
            if k.starts_with("MIRANTE_")
                || k.starts_with("LEPTOS_")
                || k == "DATABASE_URL"
                || k == "RUST_LOG"
                // A panic would otherwise symbolize a backtrace, which keeps tens of MB of
                // debug information resident: the default configuration prints none.
                || k == "RUST_BACKTRACE"
                || k == "RUST_LIB_BACKTRACE"
            {
                cmd.env_remove(&key);
            }
        }
        cmd.env("MIRANTE_CATALOG", catalog)
            .env("MIRANTE_BIND", "127.0.0.1:0")
            .env("MIRANTE_DATA_DIR", data)
            .env("LEPTOS_SITE_ROOT", ctx.site_root)
            // Anonymous reads of the catalog, so that the same server is measured with no
            // credentials, an API token and a session; without an OpenID issuer the
            // development sign-in provides the latter two.
            .env("MIRANTE_PUBLIC_CATALOG", "true")
            // No ./mirante.toml is picked up from here.
            .current_dir(ctx.scratch)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut log = File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {}", ctx.bin.display()))?;
        let stderr = child.stderr.take().context("server stderr not piped")?;
        let (tx, addr_rx) = mpsc::channel();
        // Reads the log until the server exits, so the pipe never fills.
        let reader = thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let _ = writeln!(log, "{line}");
                if !sent && let Some(addr) = listening_addr(&line) {
                    sent = tx.send(addr).is_ok();
                }
            }
        });
        Ok(Server {
            child: Some(child),
            reader: Some(reader),
            started,
            addr_rx,
            addr: None,
            listening_after: None,
            ready_after: None,
        })
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Waits for the `listening` line, then polls `/readyz` until it answers 200.
    fn wait_ready(&mut self) -> Result<SocketAddr> {
        let deadline = self.started + READY_TIMEOUT;
        let addr = loop {
            match self.addr_rx.recv_timeout(Duration::from_millis(50)) {
                Ok(addr) => break addr,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    bail!("the server exited before listening (see its log)")
                }
            }
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                bail!("the server exited with {status} before listening (see its log)");
            }
            if Instant::now() > deadline {
                bail!("the server did not log its address within {READY_TIMEOUT:?}");
            }
        };
        self.listening_after = Some(self.started.elapsed());
        loop {
            if let Ok((200, _)) = http_get(addr, "/readyz") {
                break;
            }
            if Instant::now() > deadline {
                bail!("/readyz did not answer 200 within {READY_TIMEOUT:?}");
            }
            thread::sleep(Duration::from_millis(1));
        }
        self.ready_after = Some(self.started.elapsed());
        self.addr = Some(addr);
        Ok(addr)
    }

    /// SIGTERM (graceful shutdown), then SIGKILL if it has not exited within 10 s.
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut exited = false;
        while !exited && Instant::now() < deadline {
            exited = matches!(child.try_wait(), Ok(Some(_)));
            if !exited {
                thread::sleep(Duration::from_millis(20));
            }
        }
        if !exited {
            let _ = child.kill();
            let _ = child.wait();
        }
        // The log is complete once the reader has seen the end of the server's stderr.
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The address in the server's `listening` log line (text or JSON format, with or without
/// colours): `... listening http.addr=127.0.0.1:PORT ...`.
fn listening_addr(line: &str) -> Option<SocketAddr> {
    let plain = strip_ansi(line);
    if !plain.contains("listening") {
        return None;
    }
    let rest = &plain[plain.find("http.addr")? + "http.addr".len()..];
    let rest = rest.trim_start_matches(['"', '=', ':', ' ']);
    let end = rest
        .find(|c: char| !(c.is_ascii_hexdigit() || matches!(c, '.' | ':' | '[' | ']')))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters final-byte
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// An HTTP response as [`http_request`] reads it.
struct Reply {
    status: u16,
    /// Header names in lower case.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> impl Iterator<Item = &str> {
        self.headers
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A minimal HTTP/1.1 request on a fresh connection (`Connection: close`).
fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &str,
) -> Result<Reply> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.set_nodelay(true)?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .context("no status code")?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let body = raw[head_end + 4..].to_vec();
    let mut reply = Reply {
        status,
        headers,
        body,
    };
    if reply
        .header("transfer-encoding")
        .any(|v| v.contains("chunked"))
    {
        reply.body = dechunk(&reply.body)?;
    }
    Ok(reply)
}

/// A plain GET: the status code and the body.
fn http_get(addr: SocketAddr, path: &str) -> Result<(u16, Vec<u8>)> {
    let r = http_request(addr, "GET", path, &[], "")?;
    Ok((r.status, r.body))
}

/// How a measured request proves who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// No credentials: the server runs with `MIRANTE_PUBLIC_CATALOG=true`.
    Anonymous,
    /// `Authorization: Bearer <personal API token>`.
    Token,
    /// The `mirante_session` cookie of a signed-in user.
    Session,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Anonymous => "anonymous",
            Access::Token => "API token",
            Access::Session => "session cookie",
        })
    }
}

/// One endpoint to measure, and the throughput target it has (at 10,000 items).
struct Endpoint {
    name: String,
    path: String,
    access: Access,
    /// Throughput target; endpoints with one also have the p99 target.
    rps_target: Option<f64>,
}

impl Endpoint {
    fn new(name: &str, path: &str, access: Access, rps_target: Option<f64>) -> Self {
        Endpoint {
            name: name.to_owned(),
            path: path.to_owned(),
            access,
            rps_target,
        }
    }
}

/// Credentials of a researcher signed in through the development sign-in.
struct Credentials {
    cookie: String,
    token: String,
}

impl Credentials {
    fn headers(&self, access: Access) -> Vec<(String, String)> {
        match access {
            Access::Anonymous => vec![],
            Access::Token => vec![("Authorization".into(), format!("Bearer {}", self.token))],
            Access::Session => vec![("Cookie".into(), self.cookie.clone())],
        }
    }
}

/// Signs in as the development sign-in's researcher (`rui`) and makes a personal API token,
/// as a person would in the browser: `POST /auth/dev`, `GET /profile`, `POST /profile/tokens`.
fn sign_in(addr: SocketAddr) -> Result<Credentials> {
    let origin = vec![
        ("Origin".to_owned(), format!("http://{addr}")),
        (
            "Content-Type".to_owned(),
            "application/x-www-form-urlencoded".to_owned(),
        ),
    ];
    let r = http_request(addr, "POST", "/auth/dev", &origin, "user=rui&next=%2F")?;
    let cookie = r
        .header("set-cookie")
        .filter_map(|c| c.split(';').next())
        .filter(|c| c.starts_with("mirante_session="))
        .last()
        .map(str::to_owned)
        .with_context(|| {
            format!(
                "the development sign-in answered {} with no session",
                r.status
            )
        })?;
    let with_cookie = |mut h: Vec<(String, String)>| {
        h.push(("Cookie".to_owned(), cookie.clone()));
        h
    };
    let profile = http_request(addr, "GET", "/profile", &with_cookie(vec![]), "")?;
    let html = String::from_utf8_lossy(&profile.body);
    let csrf = between(&html, "name=\"csrf_token\" value=\"", "\"")
        .with_context(|| format!("no CSRF token on /profile (status {})", profile.status))?;
    let made = http_request(
        addr,
        "POST",
        "/profile/tokens",
        &with_cookie(origin),
        &format!("csrf_token={csrf}&name=bench"),
    )?;
    let html = String::from_utf8_lossy(&made.body);
    let token = between(&html, "<code id=\"new-token\">", "<")
        .with_context(|| format!("no new token on the profile page (status {})", made.status))?;
    Ok(Credentials {
        cookie,
        token: token.to_owned(),
    })
}

/// The text between `start` and the next `end`.
fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = s.find(start)? + start.len();
    let len = s[from..].find(end)?;
    Some(&s[from..from + len])
}

fn dechunk(mut raw: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("bad chunk")?;
        let size_str = String::from_utf8_lossy(&raw[..eol]);
        let size = usize::from_str_radix(size_str.split(';').next().unwrap_or("").trim(), 16)
            .context("bad chunk size")?;
        raw = &raw[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(raw.get(..size).context("short chunk")?);
        raw = raw.get(size + 2..).context("short chunk")?;
    }
}

/// Resident memory of a process, from `/proc/<pid>/status` (bytes).
struct Memory {
    /// `VmRSS`: resident set size now.
    rss: u64,
    /// `VmHWM`: the peak resident set size so far.
    hwm: u64,
    /// `RssAnon`: the part of `VmRSS` that is the process's own memory (heap, stacks).
    anon: u64,
    /// `RssFile`: the part of `VmRSS` that is mapped files, mostly the binary's own pages,
    /// shared and reclaimable.
    file: u64,
}

impl Memory {
    fn of(pid: u32) -> Result<Self> {
        let status = fs::read_to_string(format!("/proc/{pid}/status"))?;
        let field = |name: &str| -> Result<u64> {
            let line = status
                .lines()
                .find(|l| l.starts_with(name))
                .with_context(|| format!("no {name} in /proc/{pid}/status"))?;
            let kib: u64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse().ok())
                .with_context(|| format!("bad {name} line: {line}"))?;
            Ok(kib * 1024)
        };
        Ok(Memory {
            rss: field("VmRSS:")?,
            hwm: field("VmHWM:")?,
            anon: field("RssAnon:")?,
            file: field("RssFile:")?,
        })
    }

    fn to_json(&self) -> Value {
        json!({
            "vm_rss_bytes": self.rss,
            "vm_hwm_bytes": self.hwm,
            "rss_anon_bytes": self.anon,
            "rss_file_bytes": self.file,
        })
    }
}

/// One measured `oha` run.
struct HttpRun {
    name: String,
    url: String,
    access: Access,
    rps_target: Option<f64>,
    requests: u64,
    non_200: u64,
    errors: u64,
    /// Requests in flight when the time was up, which oha cancels (not failures).
    aborted_at_deadline: u64,
    rps: f64,
    p50: f64,
    p99: f64,
    p999: f64,
    max: f64,
    bytes_per_response: f64,
    cpu: CpuUse,
    /// Share of the machine other processes used during the measured run.
    others: f64,
    attempts: usize,
    /// Throughput of every measured run of this endpoint, this one's included, in order.
    rps_runs: Vec<f64>,
}

impl HttpRun {
    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "url": self.url,
            "access": self.access.to_string(),
            "requests": self.requests,
            "non_200": self.non_200,
            "errors": self.errors,
            "aborted_at_deadline": self.aborted_at_deadline,
            "requests_per_s": self.rps,
            "p50_s": self.p50,
            "p99_s": self.p99,
            "p99_9_s": self.p999,
            "max_s": self.max,
            "bytes_per_response": self.bytes_per_response,
            "cpu": self.cpu.to_json(),
            "others_cpu_fraction": self.others,
            "attempts": self.attempts,
            "requests_per_s_every_run": self.rps_runs,
            "server_cpu_us_per_request": self.cpu.server_s * 1e6 / self.requests.max(1) as f64,
        })
    }
}

/// Where the CPU time of the machine went during a measured run (CPU-seconds).
struct CpuUse {
    wall_s: f64,
    /// Every CPU of the machine, busy (not idle or waiting for I/O).
    machine_busy_s: f64,
    server_s: f64,
    oha_s: f64,
}

impl CpuUse {
    fn to_json(&self) -> Value {
        json!({
            "wall_s": self.wall_s,
            "machine_busy_s": self.machine_busy_s,
            "server_s": self.server_s,
            "oha_s": self.oha_s,
        })
    }
}

/// Clock ticks per second of `/proc` CPU times (`USER_HZ`, 100 on Linux).
const TICKS: f64 = 100.0;

/// Busy ticks of all CPUs together, from the first line of `/proc/stat`.
fn machine_busy_ticks() -> Result<u64> {
    let stat = fs::read_to_string("/proc/stat")?;
    let cpu = stat.lines().next().context("empty /proc/stat")?;
    let v: Vec<u64> = cpu
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal ...
    let get = |i: usize| v.get(i).copied().unwrap_or(0);
    Ok(get(0) + get(1) + get(2) + get(5) + get(6) + get(7))
}

/// User + system ticks of a process, from `/proc/<pid>/stat`.
fn process_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; the fields after it are fixed.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 (utime) and 15 (stime) of the whole line; `rest` starts at field 3.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Share of the machine (0 to 1) that other processes may use during a measurement before it
/// is measured again.
const MAX_DISTURBANCE: f64 = 0.10;
/// Attempts at a measurement disturbed by other processes; the last one is kept either way.
const ATTEMPTS: usize = 3;

/// User + system ticks of a process and of its children it has waited for, and its parent.
fn process_ticks_with_children(pid: &str) -> Option<(u64, u32)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    // Whole-line fields 4 (ppid), 14–17 (utime, stime, cutime, cstime); `rest` starts at 3.
    let ppid = f.get(1)?.parse().ok()?;
    Some((num(11)? + num(12)? + num(13)? + num(14)?, ppid))
}

/// CPU ticks of this benchmark: this process, the children it has waited for, and the
/// children still running (the server, oha, hyperfine).
fn our_ticks() -> Result<u64> {
    let me = std::process::id();
    let (mut ticks, _) =
        process_ticks_with_children("self").context("cannot read /proc/self/stat")?;
    for entry in fs::read_dir("/proc")? {
        let name = entry?.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if let Some((t, ppid)) = process_ticks_with_children(pid)
            && ppid == me
        {
            ticks += t;
        }
    }
    Ok(ticks)
}

/// Measures how much CPU the rest of the machine used while something was being measured.
struct Meter {
    started: Instant,
    busy: u64,
    ours: u64,
}

impl Meter {
    fn start() -> Result<Self> {
        Ok(Meter {
            started: Instant::now(),
            busy: machine_busy_ticks()?,
            ours: our_ticks()?,
        })
    }

    /// The share of the whole machine (0 to 1) busy with anything but this benchmark.
    fn others(&self) -> Result<f64> {
        let wall = self.started.elapsed().as_secs_f64();
        let busy = machine_busy_ticks()?.saturating_sub(self.busy);
        let ours = our_ticks()?.saturating_sub(self.ours);
        let cpus = thread::available_parallelism().map_or(1, usize::from) as f64;
        Ok((busy.saturating_sub(ours) as f64 / TICKS / (wall * cpus)).clamp(0.0, 1.0))
    }
}

/// Runs `measure` until other processes leave it undisturbed (at most [`ATTEMPTS`] times,
/// waiting for a quiet machine before each); returns the result, the share of the machine
/// others used during it, and the number of attempts.
fn undisturbed<T>(what: &str, mut measure: impl FnMut() -> Result<T>) -> Result<(T, f64, usize)> {
    let mut attempt = 1;
    loop {
        wait_for_quiet()?;
        let meter = Meter::start()?;
        let value = measure()?;
        let others = meter.others()?;
        if others <= MAX_DISTURBANCE || attempt == ATTEMPTS {
            if others > MAX_DISTURBANCE {
                eprintln!(
                    "bench: WARNING: {what}: other processes used {:.0}% of the machine; \
                     kept after {attempt} attempts (the results record it)",
                    others * 100.0
                );
            }
            return Ok((value, others, attempt));
        }
        eprintln!(
            "bench: {what}: other processes used {:.0}% of the machine; measuring again",
            others * 100.0
        );
        attempt += 1;
    }
}

/// Fraction of the whole machine busy over `window` (0 to 1).
fn background_load(window: Duration) -> Result<f64> {
    let cpus = thread::available_parallelism().map_or(1, usize::from) as f64;
    let a = machine_busy_ticks()?;
    thread::sleep(window);
    let b = machine_busy_ticks()?;
    Ok((b - a) as f64 / TICKS / window.as_secs_f64() / cpus)
}

/// Waits (at most [`QUIET_WAIT`]) until other processes leave the machine mostly idle, so
/// that a compiler running beside the benchmark does not halve its numbers; returns the
/// busy fraction last seen, which the results record.
fn wait_for_quiet() -> Result<f64> {
    let deadline = Instant::now() + QUIET_WAIT;
    loop {
        let load = background_load(Duration::from_secs(2))?;
        if load <= QUIET_LOAD {
            return Ok(load);
        }
        if Instant::now() > deadline {
            eprintln!(
                "bench: WARNING: the machine is still {:.0}% busy with other work; \
                 measuring anyway (the results record it)",
                load * 100.0
            );
            return Ok(load);
        }
        eprintln!(
            "bench: the machine is {:.0}% busy with other work; waiting for it to settle",
            load * 100.0
        );
        thread::sleep(Duration::from_secs(8));
    }
}

/// Runs `oha -c 2 -z <d>` against `url`, returning its JSON report and the CPU accounting.
fn oha(
    ctx: &Ctx<'_>,
    server_pid: u32,
    d: Duration,
    url: &str,
    headers: &[(String, String)],
) -> Result<(Value, CpuUse)> {
    let secs = format!("{}s", d.as_secs());
    let conns = CONNECTIONS.to_string();
    let report = ctx.scratch.join("oha.json");
    let mut cmd = Command::new(&ctx.tools.oha);
    cmd.args(["-z", secs.as_str(), "-c", conns.as_str()]).args([
        "--no-tui",
        "--output-format",
        "json",
    ]);
    let mut shown = String::new();
    for (k, v) in headers {
        cmd.arg("-H").arg(format!("{k}: {v}"));
        // Credentials are not echoed.
        let _ = write!(shown, " -H '{k}: …'");
    }
    cmd.arg(url)
        .stdin(Stdio::null())
        .stdout(File::create(&report)?)
        .stderr(Stdio::inherit());
    eprintln!("+ oha -z {secs} -c {conns} --no-tui --output-format json{shown} {url}");
    let busy0 = machine_busy_ticks()?;
    let server0 = process_ticks(server_pid).context("the server is gone")?;
    let started = Instant::now();
    let mut child = cmd.spawn().context("starting oha")?;
    let deadline = started + d + Duration::from_secs(30);
    // oha's CPU time, read until it exits (its last 20 ms may be missed).
    let mut oha_ticks = 0;
    let status = loop {
        if let Some(t) = process_ticks(child.id()) {
            oha_ticks = oha_ticks.max(t);
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("oha did not finish within {:?}", deadline - started);
        }
        thread::sleep(Duration::from_millis(20));
    };
    let wall_s = started.elapsed().as_secs_f64();
    let cpu = CpuUse {
        wall_s,
        machine_busy_s: (machine_busy_ticks()? - busy0) as f64 / TICKS,
        server_s: (process_ticks(server_pid).context("the server is gone")? - server0) as f64
            / TICKS,
        oha_s: oha_ticks as f64 / TICKS,
    };
    if !status.success() {
        bail!("oha failed with {status}");
    }
    let v = serde_json::from_str(&fs::read_to_string(&report)?).context("oha's JSON")?;
    Ok((v, cpu))
}

/// A discarded warm-up run, then [`Plan::http_runs`] measured ones; returns the run with the
/// median throughput. One 10 s run now and then lands in a slow mode (half the throughput, twice
/// the p50, with the machine otherwise idle), which a single run would report as the result.
fn load_run(
    ctx: &Ctx<'_>,
    server_pid: u32,
    addr: SocketAddr,
    e: &Endpoint,
    headers: &[(String, String)],
) -> Result<HttpRun> {
    let url = format!("http://{addr}{}", e.path);
    oha(ctx, server_pid, ctx.plan.warmup, &url, headers)?;
    let mut runs = (0..ctx.plan.http_runs.max(1))
        .map(|_| measured_run(ctx, server_pid, &url, e, headers))
        .collect::<Result<Vec<_>>>()?;
    let rps_runs: Vec<f64> = runs.iter().map(|r| r.rps).collect();
    runs.sort_by(|a, b| a.rps.total_cmp(&b.rps));
    let mut median = runs.swap_remove(runs.len() / 2);
    median.rps_runs = rps_runs;
    Ok(median)
}

/// One measured run, repeated while other processes disturb it.
fn measured_run(
    ctx: &Ctx<'_>,
    server_pid: u32,
    url: &str,
    e: &Endpoint,
    headers: &[(String, String)],
) -> Result<HttpRun> {
    let name = format!("{} ({})", e.name, e.access);
    let ((v, cpu), others, attempts) = undisturbed(&name, || {
        oha(ctx, server_pid, ctx.plan.duration, url, headers)
    })?;
    let s = &v["summary"];
    let p = &v["latencyPercentiles"];
    let f = |x: &Value, what: &str| {
        x.as_f64()
            .with_context(|| format!("oha's JSON has no {what}"))
    };
    let mut requests = 0;
    let mut non_200 = 0;
    if let Some(codes) = v["statusCodeDistribution"].as_object() {
        for (code, count) in codes {
            let count = count.as_u64().unwrap_or(0);
            requests += count;
            if code != "200" {
                non_200 += count;
            }
        }
    }
    let mut errors = 0;
    let mut aborted_at_deadline = 0;
    if let Some(e) = v["errorDistribution"].as_object() {
        for (what, count) in e {
            let count = count.as_u64().unwrap_or(0);
            if what == "aborted due to deadline" {
                aborted_at_deadline += count;
            } else {
                eprintln!("bench: {name}: {count} × {what}");
                errors += count;
            }
        }
    }
    let run = HttpRun {
        name: e.name.clone(),
        url: url.to_owned(),
        access: e.access,
        rps_target: e.rps_target,
        requests,
        non_200,
        errors,
        aborted_at_deadline,
        rps: f(&s["requestsPerSec"], "requestsPerSec")?,
        p50: f(&p["p50"], "p50")?,
        p99: f(&p["p99"], "p99")?,
        p999: f(&p["p99.9"], "p99.9")?,
        max: f(&s["slowest"], "slowest")?,
        bytes_per_response: s["sizePerRequest"].as_f64().unwrap_or(0.0),
        cpu,
        others,
        attempts,
        rps_runs: Vec::new(),
    };
    eprintln!(
        "bench: {name}: {:.0} req/s, p50 {:.3} ms, p99 {:.3} ms ({} requests, {} not 200, \
         {} errors); CPU-s: server {:.2}, oha {:.2} in {:.1} s; others {:.0}% of the machine",
        run.rps,
        run.p50 * 1e3,
        run.p99 * 1e3,
        run.requests,
        run.non_200,
        run.errors,
        run.cpu.server_s,
        run.cpu.oha_s,
        run.cpu.wall_s,
        run.others * 100.0,
    );
    if run.non_200 > 0 || run.errors > 0 {
        bail!(
            "{name}: {} non-200 answers, {} errors",
            run.non_200,
            run.errors
        );
    }
    Ok(run)
}

/// The machine the numbers were taken on.
struct Machine {
    cpus: usize,
    cpu_model: String,
    mem_total_bytes: u64,
    kernel: String,
}

impl Machine {
    fn to_json(&self) -> Value {
        json!({
            "cpus": self.cpus,
            "cpu_model": self.cpu_model,
            "mem_total_bytes": self.mem_total_bytes,
            "kernel": self.kernel,
        })
    }
}

fn machine() -> Result<Machine> {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or_else(|| "unknown".to_owned(), |(_, m)| m.trim().to_owned());
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_total_bytes = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024;
    Ok(Machine {
        cpus: thread::available_parallelism().map_or(0, usize::from),
        cpu_model,
        mem_total_bytes,
        kernel: crate::output("uname", &["-r"]).map_or_else(String::new, |s| s.trim().to_owned()),
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

/// Whether a measured value meets its target, for the 10,000-item column only.
enum Verdict {
    Met,
    Missed,
    NotApplicable,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Met => "met",
            Verdict::Missed => "**missed**",
            Verdict::NotApplicable => "—",
        })
    }
}

fn verdict(ok: Option<bool>) -> Verdict {
    match ok {
        Some(true) => Verdict::Met,
        Some(false) => Verdict::Missed,
        None => Verdict::NotApplicable,
    }
}

fn ms(s: f64) -> String {
    format!("{:.2} ms", s * 1e3)
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn render_markdown(plan: &Plan, m: &Machine, tools: &Tools, results: &[SizeResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Mirante benchmark ({})\n",
        if plan.quick {
            "quick smoke run: not for the record"
        } else {
            "full run"
        }
    );
    let _ = writeln!(
        out,
        "Machine: {} CPUs ({}), {:.1} GiB RAM, Linux {}. Tools: {}, {}. \
         HTTP: {CONNECTIONS} connections, {} measured run(s) of {} s after a {} s warm-up per \
         endpoint, the run with the median throughput reported (the range of all runs in \
         brackets); server, load generator and this harness share the machine.\n",
        m.cpus,
        m.cpu_model,
        m.mem_total_bytes as f64 / (1u64 << 30) as f64,
        m.kernel,
        tools.oha_version,
        tools.hyperfine_version,
        plan.http_runs,
        plan.duration.as_secs(),
        plan.warmup.as_secs(),
    );
    let with_target = results.iter().find(|r| r.n == TARGET_N);
    let mut header = String::from("| metric |");
    let mut rule = String::from("|---|");
    for r in results {
        let _ = write!(header, " N = {} |", thousands(r.n));
        rule.push_str("---:|");
    }
    header.push_str(" target (N = 10,000) | met? |");
    rule.push_str("---|---|");
    let _ = writeln!(out, "{header}\n{rule}");

    let mut row = |label: &str, cell: &dyn Fn(&SizeResult) -> String, target: &str, ok: Verdict| {
        let mut line = format!("| {label} |");
        for r in results {
            let _ = write!(line, " {} |", cell(r));
        }
        let _ = writeln!(out, "{line} {target} | {ok} |");
    };

    row(
        "catalog files / size",
        &|r| format!("{} / {}", r.files, mb(r.bytes as u64)),
        "",
        Verdict::NotApplicable,
    );
    row(
        "other processes' share of the machine: before / worst during a measurement",
        &|r| {
            let worst = r
                .http
                .iter()
                .map(|h| h.others)
                .chain(r.startup.others.iter().copied())
                .fold(r.load.others, f64::max);
            format!("{:.0}% / {:.0}%", r.background * 100.0, worst * 100.0)
        },
        "",
        Verdict::NotApplicable,
    );
    row(
        "catalog load: `mirante catalog check`, median (min)",
        &|r| format!("{} ({})", ms(r.load.median), ms(r.load.min)),
        "< 1 s",
        verdict(with_target.map(|r| r.load.median < TARGET_LOAD_S)),
    );
    row(
        "start-up: spawn → first 200 on `/readyz`, median (min–max)",
        &|r| {
            format!(
                "{} ({}–{})",
                ms(median(&r.startup.to_ready)),
                ms(min(&r.startup.to_ready)),
                ms(max(&r.startup.to_ready))
            )
        },
        "< 1 s",
        verdict(with_target.map(|r| median(&r.startup.to_ready) < TARGET_STARTUP_S)),
    );
    row(
        "RSS when ready: VmRSS (anonymous + file-backed)",
        &|r| {
            format!(
                "{} ({} + {})",
                mb(r.rss_ready.rss),
                mb(r.rss_ready.anon),
                mb(r.rss_ready.file)
            )
        },
        "< 50 MB",
        verdict(with_target.map(|r| (r.rss_ready.rss as f64) < TARGET_RSS_BYTES)),
    );
    row(
        "RSS after the HTTP runs: VmRSS (anonymous + file-backed) / peak VmHWM",
        &|r| {
            format!(
                "{} ({} + {}) / {}",
                mb(r.rss_after.rss),
                mb(r.rss_after.anon),
                mb(r.rss_after.file),
                mb(r.rss_after.hwm)
            )
        },
        "< 50 MB",
        verdict(with_target.map(|r| (r.rss_after.hwm as f64) < TARGET_RSS_BYTES)),
    );
    row(
        "panics in the server's log during the HTTP runs",
        &|r| r.panics.to_string(),
        "",
        Verdict::NotApplicable,
    );
    let Some(first) = results.first() else {
        return out;
    };
    for (i, run) in first.http.iter().enumerate() {
        let name = format!("{} — {}", run.name, run.access);
        let rps_target = run.rps_target;
        let (target, ok) = match rps_target {
            Some(rps) => (
                format!("≥ {} req/s", thousands(rps as usize)),
                verdict(with_target.map(|r| r.http[i].rps >= rps)),
            ),
            None => (String::new(), Verdict::NotApplicable),
        };
        row(
            &format!("{name}: throughput"),
            &|r| {
                let run = &r.http[i];
                let all = &run.rps_runs;
                let low = all.iter().copied().fold(f64::INFINITY, f64::min);
                let high = all.iter().copied().fold(0.0, f64::max);
                if all.len() > 1 {
                    format!(
                        "{} req/s ({}–{})",
                        thousands(run.rps.round() as usize),
                        thousands(low.round() as usize),
                        thousands(high.round() as usize)
                    )
                } else {
                    format!("{} req/s", thousands(run.rps.round() as usize))
                }
            },
            &target,
            ok,
        );
        row(
            &format!("{name}: p50 / p99"),
            &|r| format!("{} / {}", ms(r.http[i].p50), ms(r.http[i].p99)),
            if rps_target.is_some() {
                "p99 < 5 ms"
            } else {
                ""
            },
            if rps_target.is_some() {
                verdict(with_target.map(|r| r.http[i].p99 < TARGET_P99_S))
            } else {
                Verdict::NotApplicable
            },
        );
        row(
            &format!("{name}: body as sent, server CPU per request"),
            &|r| {
                let h = &r.http[i];
                format!(
                    "{:.0} B, {:.0} µs",
                    h.bytes_per_response,
                    h.cpu.server_s * 1e6 / h.requests.max(1) as f64
                )
            },
            "",
            Verdict::NotApplicable,
        );
    }
    out
}

/// `12345` → `12,345`.
fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_is_read_from_text_and_json_log_lines() {
        let text = "2026-11-30T10:00:00.000000Z  INFO mirante::startup: listening \
                    http.addr=127.0.0.1:40123 http.public_url=http://127.0.0.1:0";
        let coloured = "\u{1b}[2m2026\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m listening \
                        \u{1b}[3mhttp.addr\u{1b}[0m\u{1b}[2m=\u{1b}[0m127.0.0.1:40123 \
                        \u{1b}[3mhttp.public_url\u{1b}[0m\u{1b}[2m=\u{1b}[0mhttp://127.0.0.1:0";
        let json = r#"{"fields":{"message":"listening","http.addr":"127.0.0.1:40123","http.public_url":"http://127.0.0.1:0"}}"#;
        let want: SocketAddr = "127.0.0.1:40123".parse().unwrap();

        assert_eq!(listening_addr(text), Some(want));
        assert_eq!(listening_addr(coloured), Some(want));
        assert_eq!(listening_addr(json), Some(want));
        assert_eq!(listening_addr("INFO database ready"), None);
    }

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
    }

    #[test]
    fn medians_and_thousands() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(thousands(38_000), "38,000");
        assert_eq!(thousands(999), "999");
    }
}
