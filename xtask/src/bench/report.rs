//! The Markdown report of a run.

use std::fmt::{self, Write as _};

use super::{
    CONNECTIONS, LARGE, Plan, SizeResult, TARGET_LARGE_LOAD_S, TARGET_LARGE_RPS_RATIO,
    TARGET_LARGE_RSS_BYTES, TARGET_LOAD_S, TARGET_N, TARGET_P99_S, TARGET_RSS_BYTES,
    TARGET_STARTUP_S,
    load::HttpRun,
    max, median, min,
    proc::{Machine, Memory},
    tools::Tools,
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
    let growth_column = results.len() > 1;
    if growth_column {
        header.push_str(" growth: each size over the one before |");
        rule.push_str("---:|");
    }
    header.push_str(" target (N = 10,000) | met? |");
    rule.push_str("---|---|");
    let _ = writeln!(out, "{header}\n{rule}");

    let mut row = |label: &str,
                   cell: &dyn Fn(&SizeResult) -> String,
                   value: Option<&dyn Fn(&SizeResult) -> f64>,
                   target: &str,
                   ok: Verdict| {
        let mut line = format!("| {label} |");
        for r in results {
            let _ = write!(line, " {} |", cell(r));
        }
        if growth_column {
            let _ = write!(
                line,
                " {} |",
                value.map_or_else(String::new, |v| growth(results, v))
            );
        }
        let _ = writeln!(out, "{line} {target} | {ok} |");
    };

    row(
        "catalog files / size",
        &|r| format!("{} / {}", r.files, mb(r.bytes as u64)),
        Some(&|r| r.bytes as f64),
        "",
        Verdict::NotApplicable,
    );
    row(
        "other processes' share of the machine: before / worst during a measurement",
        &|r| {
            format!(
                "{:.0}% / {:.0}%",
                r.background * 100.0,
                worst_others(r) * 100.0
            )
        },
        None,
        "",
        Verdict::NotApplicable,
    );
    row(
        "catalog load: `mirante catalog check`, median (min)",
        &|r| format!("{} ({})", ms(r.load.median), ms(r.load.min)),
        Some(&|r| r.load.median),
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
        Some(&|r| median(&r.startup.to_ready)),
        "< 1 s",
        verdict(with_target.map(|r| median(&r.startup.to_ready) < TARGET_STARTUP_S)),
    );
    row(
        "RSS when ready: VmRSS (anonymous + file-backed)",
        &|r| memory(&r.rss_ready),
        Some(&|r| r.rss_ready.rss as f64),
        "< 50 MB",
        verdict(with_target.map(|r| (r.rss_ready.rss as f64) < TARGET_RSS_BYTES)),
    );
    row(
        "RSS after the HTTP runs: VmRSS (anonymous + file-backed) / peak VmHWM",
        &|r| format!("{} / {}", memory(&r.rss_after), mb(r.rss_after.hwm)),
        Some(&|r| r.rss_after.rss as f64),
        "< 50 MB",
        verdict(with_target.map(|r| (r.rss_after.hwm as f64) < TARGET_RSS_BYTES)),
    );
    row(
        "panics in the server's log during the HTTP runs",
        &|r| r.panics.to_string(),
        None,
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
            Some(&|r| r.http[i].rps),
            &target,
            ok,
        );
        row(
            &format!("{name}: p50 / p99"),
            &|r| format!("{} / {}", ms(r.http[i].p50), ms(r.http[i].p99)),
            Some(&|r| r.http[i].p99),
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
                    server_us_per_request(h)
                )
            },
            Some(&|r| server_us_per_request(&r.http[i])),
            "",
            Verdict::NotApplicable,
        );
    }
    row(
        &format!(
            "catalog history: monorepo of {} commits ({} change the catalog), pack size",
            thousands(first.history.commits),
            thousands(first.history.catalog_commits)
        ),
        &|r| mb(r.history.pack_bytes),
        Some(&|r| r.history.pack_bytes as f64),
        "",
        Verdict::NotApplicable,
    );
    row(
        "catalog history: first `GET /api/v1/roadmap/burnup` after start-up (the whole walk), server CPU",
        &|r| {
            let h = &r.history;
            let over = if h.cold_s > DEFAULT_REQUEST_TIMEOUT_S {
                " (**over the default 30 s request timeout**)"
            } else {
                ""
            };
            format!(
                "{}, {:.2} CPU-s{over}",
                seconds(h.cold_s),
                h.cold_server_cpu_s
            )
        },
        Some(&|r| r.history.cold_s),
        "",
        Verdict::NotApplicable,
    );
    row(
        "catalog history: the same read again at the same tip, median (min–max)",
        &|r| {
            let w = &r.history.warm_s;
            format!("{} ({}–{})", ms(median(w)), ms(min(w)), ms(max(w)))
        },
        Some(&|r| median(&r.history.warm_s)),
        "",
        Verdict::NotApplicable,
    );
    row(
        "catalog history: the read after one more catalog commit",
        &|r| seconds(r.history.after_commit_s),
        Some(&|r| r.history.after_commit_s),
        "",
        Verdict::NotApplicable,
    );
    row(
        "catalog history: burn-up body; RSS after the reads: VmRSS (anonymous + file-backed)",
        &|r| {
            format!(
                "{:.0} KB; {}",
                r.history.body_bytes as f64 / 1e3,
                memory(&r.history.rss_after)
            )
        },
        Some(&|r| r.history.rss_after.rss as f64),
        "",
        Verdict::NotApplicable,
    );
    large_targets(&mut out, results);
    out
}

/// The server's default `MIRANTE_REQUEST_TIMEOUT_SECS`: a slower read answers 408 there.
const DEFAULT_REQUEST_TIMEOUT_S: f64 = 30.0;

/// The targets for 100,000 items, when that size was measured (with 10,000 to compare with).
fn large_targets(out: &mut String, results: &[SizeResult]) {
    let (Some(large), Some(base)) = (
        results.iter().find(|r| r.n == LARGE),
        results.iter().find(|r| r.n == TARGET_N),
    ) else {
        return;
    };
    let _ = writeln!(
        out,
        "\n| target at N = 100,000 | measured | target | met? |\n|---|---:|---|---|"
    );
    let mut line = |what: &str, measured: String, target: &str, ok: bool| {
        let _ = writeln!(
            out,
            "| {what} | {measured} | {target} | {} |",
            verdict(Some(ok))
        );
    };
    line(
        "catalog load, median",
        ms(large.load.median),
        "≤ 2 s",
        large.load.median <= TARGET_LARGE_LOAD_S,
    );
    line(
        "RSS after the HTTP runs (VmRSS)",
        mb(large.rss_after.rss),
        "≤ 150 MB",
        (large.rss_after.rss as f64) <= TARGET_LARGE_RSS_BYTES,
    );
    for (i, run) in large.http.iter().enumerate() {
        if run.rps_target.is_none() {
            continue;
        }
        let ratio = run.rps / base.http[i].rps;
        line(
            &format!(
                "{} — {}: throughput against N = 10,000",
                run.name, run.access
            ),
            format!("{:.0} %", ratio * 100.0),
            "≥ 80 %",
            ratio >= TARGET_LARGE_RPS_RATIO,
        );
    }
}

/// How a figure grows from each size to the next.
fn growth(results: &[SizeResult], value: &dyn Fn(&SizeResult) -> f64) -> String {
    growth_of(&results.iter().map(value).collect::<Vec<_>>())
}

/// `[2, 18, 180]` → `×9.0 · ×10.0`.
fn growth_of(values: &[f64]) -> String {
    values
        .windows(2)
        .map(|pair| {
            if pair[0] > 0.0 && pair[1].is_finite() {
                format!("×{:.1}", pair[1] / pair[0])
            } else {
                "–".to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The largest share of the machine other processes used during any measurement of a size.
fn worst_others(r: &SizeResult) -> f64 {
    r.http
        .iter()
        .map(|h| h.others)
        .chain(r.startup.others.iter().copied())
        .chain([r.history.others])
        .fold(r.load.others, f64::max)
}

fn server_us_per_request(h: &HttpRun) -> f64 {
    h.cpu.server_s * 1e6 / h.requests.max(1) as f64
}

fn memory(m: &Memory) -> String {
    format!("{} ({} + {})", mb(m.rss), mb(m.anon), mb(m.file))
}

fn seconds(s: f64) -> String {
    if s < 1.0 { ms(s) } else { format!("{s:.2} s") }
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
    fn growth_is_each_figure_over_the_one_of_the_size_before() {
        let values = [2.0, 18.0, 180.0];

        let text = growth_of(&values);

        assert_eq!(text, "×9.0 · ×10.0");
    }

    #[test]
    fn thousands_are_separated_by_commas() {
        assert_eq!(thousands(38_000), "38,000");
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(999), "999");
    }
}
