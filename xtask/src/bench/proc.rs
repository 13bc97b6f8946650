//! Accounting from `/proc`: resident memory, the CPU time of the machine, the server and the
//! harness, and whether other processes disturbed a measurement.

use std::{
    fs, thread,
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use serde_json::{Value, json};

/// Busy fraction of the whole machine, before a size is measured, below which it counts as
/// quiet.
const QUIET_LOAD: f64 = 0.05;

/// How long a run waits for a quiet machine, and how often it measures again what other
/// processes disturbed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Patience {
    /// How long to wait for a quiet machine before measuring anyway.
    pub(super) quiet_wait: Duration,
    /// Attempts at a measurement disturbed by other processes; the last one is kept either
    /// way.
    pub(super) attempts: usize,
}

impl Patience {
    /// For numbers that go on record: up to 2 minutes of waiting, three attempts.
    pub(super) const RECORD: Patience = Patience {
        quiet_wait: Duration::from_secs(120),
        attempts: 3,
    };
    /// For a smoke run: measure at once, once; the share others used is still recorded.
    pub(super) const SMOKE: Patience = Patience {
        quiet_wait: Duration::ZERO,
        attempts: 1,
    };
}

/// Resident memory of a process, from `/proc/<pid>/status` (bytes).
pub(super) struct Memory {
    /// `VmRSS`: resident set size now.
    pub(super) rss: u64,
    /// `VmHWM`: the peak resident set size so far.
    pub(super) hwm: u64,
    /// `RssAnon`: the part of `VmRSS` that is the process's own memory (heap, stacks).
    pub(super) anon: u64,
    /// `RssFile`: the part of `VmRSS` that is mapped files, mostly the binary's own pages,
    /// shared and reclaimable.
    pub(super) file: u64,
}

impl Memory {
    pub(super) fn of(pid: u32) -> Result<Self> {
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

    pub(super) fn to_json(&self) -> Value {
        json!({
            "vm_rss_bytes": self.rss,
            "vm_hwm_bytes": self.hwm,
            "rss_anon_bytes": self.anon,
            "rss_file_bytes": self.file,
        })
    }
}

/// Clock ticks per second of `/proc` CPU times (`USER_HZ`, 100 on Linux).
pub(super) const TICKS: f64 = 100.0;

/// Busy ticks of all CPUs together, from the first line of `/proc/stat`.
pub(super) fn machine_busy_ticks() -> Result<u64> {
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
pub(super) fn process_ticks(pid: u32) -> Option<u64> {
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
    pub(super) started: Instant,
    busy: u64,
    ours: u64,
}

impl Meter {
    pub(super) fn start() -> Result<Self> {
        Ok(Meter {
            started: Instant::now(),
            busy: machine_busy_ticks()?,
            ours: our_ticks()?,
        })
    }

    /// The share of the whole machine (0 to 1) busy with anything but this benchmark.
    pub(super) fn others(&self) -> Result<f64> {
        let wall = self.started.elapsed().as_secs_f64();
        let busy = machine_busy_ticks()?.saturating_sub(self.busy);
        let ours = our_ticks()?.saturating_sub(self.ours);
        let cpus = thread::available_parallelism().map_or(1, usize::from) as f64;
        Ok((busy.saturating_sub(ours) as f64 / TICKS / (wall * cpus)).clamp(0.0, 1.0))
    }
}

/// Runs `measure` until other processes leave it undisturbed (at most `patience.attempts`
/// times, waiting for a quiet machine before each); returns the result, the share of the
/// machine others used during it, and the number of attempts.
pub(super) fn undisturbed<T>(
    patience: Patience,
    what: &str,
    mut measure: impl FnMut() -> Result<T>,
) -> Result<(T, f64, usize)> {
    let mut attempt = 1;
    loop {
        wait_for_quiet(patience)?;
        let meter = Meter::start()?;
        let value = measure()?;
        let others = meter.others()?;
        if others <= MAX_DISTURBANCE || attempt >= patience.attempts {
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

/// Waits (at most `patience.quiet_wait`) until other processes leave the machine mostly
/// idle, so that a compiler running beside the benchmark does not halve its numbers; returns
/// the busy fraction last seen, which the results record.
pub(super) fn wait_for_quiet(patience: Patience) -> Result<f64> {
    let deadline = Instant::now() + patience.quiet_wait;
    loop {
        let load = background_load(Duration::from_secs(2))?;
        if load <= QUIET_LOAD {
            return Ok(load);
        }
        if Instant::now() >= deadline {
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

/// The machine the numbers were taken on.
pub(super) struct Machine {
    pub(super) cpus: usize,
    pub(super) cpu_model: String,
    pub(super) mem_total_bytes: u64,
    pub(super) kernel: String,
}

impl Machine {
    pub(super) fn to_json(&self) -> Value {
        json!({
            "cpus": self.cpus,
            "cpu_model": self.cpu_model,
            "mem_total_bytes": self.mem_total_bytes,
            "kernel": self.kernel,
        })
    }
}

pub(super) fn machine() -> Result<Machine> {
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
