//! The load generator: `oha` runs against each endpoint, with the CPU accounting of every run.

use std::{
    fmt::Write as _,
    fs::{self, File},
    net::SocketAddr,
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::{
    CONNECTIONS, Ctx,
    client::Access,
    proc::{TICKS, machine_busy_ticks, process_ticks, undisturbed},
};

/// One endpoint to measure, and the throughput target it has (at 10,000 items).
pub(super) struct Endpoint {
    pub(super) name: String,
    pub(super) path: String,
    pub(super) access: Access,
    /// Throughput target; endpoints with one also have the p99 target.
    pub(super) rps_target: Option<f64>,
}

impl Endpoint {
    pub(super) fn new(name: &str, path: &str, access: Access, rps_target: Option<f64>) -> Self {
        Endpoint {
            name: name.to_owned(),
            path: path.to_owned(),
            access,
            rps_target,
        }
    }
}

/// One measured `oha` run.
pub(super) struct HttpRun {
    pub(super) name: String,
    url: String,
    pub(super) access: Access,
    pub(super) rps_target: Option<f64>,
    pub(super) requests: u64,
    non_200: u64,
    errors: u64,
    /// Requests in flight when the time was up, which oha cancels (not failures).
    aborted_at_deadline: u64,
    pub(super) rps: f64,
    pub(super) p50: f64,
    pub(super) p99: f64,
    p999: f64,
    pub(super) max: f64,
    pub(super) bytes_per_response: f64,
    pub(super) cpu: CpuUse,
    /// Share of the machine other processes used during the measured run.
    pub(super) others: f64,
    pub(super) attempts: usize,
    /// Throughput of every measured run of this endpoint, this one's included, in order.
    pub(super) rps_runs: Vec<f64>,
}

impl HttpRun {
    pub(super) fn to_json(&self) -> Value {
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
pub(super) struct CpuUse {
    wall_s: f64,
    /// Every CPU of the machine, busy (not idle or waiting for I/O).
    machine_busy_s: f64,
    pub(super) server_s: f64,
    oha_s: f64,
}

impl CpuUse {
    pub(super) fn to_json(&self) -> Value {
        json!({
            "wall_s": self.wall_s,
            "machine_busy_s": self.machine_busy_s,
            "server_s": self.server_s,
            "oha_s": self.oha_s,
        })
    }
}

/// Runs `oha -c 2 -z <d>` against `url`, returning its JSON report and the CPU accounting.
pub(super) fn oha(
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
pub(super) fn load_run(
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
    let ((v, cpu), others, attempts) = undisturbed(ctx.plan.patience, &name, || {
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
