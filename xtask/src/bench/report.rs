//! The Markdown report of a run.

use std::fmt::{self, Write as _};

use super::{
    CONNECTIONS, Plan, SizeResult, TARGET_LOAD_S, TARGET_N, TARGET_P99_S, TARGET_RSS_BYTES,
    TARGET_STARTUP_S, max, median, min, proc::Machine, tools::Tools,
};

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

pub(super) fn ms(s: f64) -> String {
    format!("{:.2} ms", s * 1e3)
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

pub(super) fn render_markdown(
    plan: &Plan,
    m: &Machine,
    tools: &Tools,
    results: &[SizeResult],
) -> String {
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
    fn thousands_are_separated_by_commas() {
        assert_eq!(thousands(38_000), "38,000");
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(999), "999");
    }
}
