//! The measured server: `mirante serve` as a child process on port 0, stopped when dropped,
//! and its start-up time.

use std::{
    env,
    fs::File,
    io::{BufRead, BufReader, Write},
    net::SocketAddr,
    path::Path,
    process::{Child, Command, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::{Ctx, client::Client, max, median, min, proc::undisturbed};

/// How long a server may take to log its address and answer `/readyz`.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Start-up times (seconds) of several fresh servers.
pub(super) struct Startup {
    /// Spawn → the `listening` log line.
    to_listening: Vec<f64>,
    /// Spawn → first 200 on `/readyz`.
    pub(super) to_ready: Vec<f64>,
    /// Share of the machine other processes used during each.
    pub(super) others: Vec<f64>,
}

impl Startup {
    pub(super) fn to_json(&self) -> Value {
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

pub(super) fn startup_time(ctx: &Ctx<'_>, catalog: &Path, n: usize) -> Result<Startup> {
    let mut to_listening = Vec::new();
    let mut to_ready = Vec::new();
    let mut others = Vec::new();
    for k in 0..ctx.plan.startup_runs {
        let mut tries = 0;
        let ((listening, ready), other, _) = undisturbed(ctx.plan.patience, "start-up", || {
            // A fresh data directory each time: the database is created and migrated too.
            tries += 1;
            let data = ctx.scratch.join(format!("data-{n}-startup-{k}-{tries}"));
            let log = ctx.scratch.join(format!("server-{n}-startup-{k}.log"));
            let mut server = Server::start(ctx, Source::Dir(catalog), &data, &log)?;
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

/// The binary a [`Server`] runs, its hydration bundle, and the folder it runs in.
pub(crate) struct Place<'a> {
    pub(crate) bin: &'a Path,
    pub(crate) site_root: &'a Path,
    pub(crate) scratch: &'a Path,
}

/// A `mirante serve` child process, stopped when dropped.
pub(crate) struct Server {
    child: Option<Child>,
    /// Copies the server's stderr to its log; ends when the server does.
    reader: Option<thread::JoinHandle<()>>,
    pub(super) started: Instant,
    addr_rx: mpsc::Receiver<SocketAddr>,
    addr: Option<SocketAddr>,
    listening_after: Option<Duration>,
    ready_after: Option<Duration>,
}

/// Where a measured server reads its catalog.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source<'a> {
    /// A directory of YAML files (`MIRANTE_CATALOG`).
    Dir(&'a Path),
    /// The `catalog/` folder of the `main` branch of a bare monorepo, through the local forge
    /// (`MIRANTE_MONOREPO`), with the catalog's history read from its commits.
    Monorepo(&'a Path),
}

impl Server {
    /// Spawns the server on port 0 with its stderr copied to `log`; the clock starts here.
    pub(super) fn start(
        ctx: &Ctx<'_>,
        source: Source<'_>,
        data: &Path,
        log: &Path,
    ) -> Result<Self> {
        let place = Place {
            bin: ctx.bin,
            site_root: ctx.site_root,
            scratch: ctx.scratch,
        };
        Self::spawn(&place, source, data, log, &[])
    }

    /// [`Server::start`] outside a benchmark, with `settings` set last (they win over the
    /// benchmark's own).
    pub(crate) fn spawn(
        place: &Place<'_>,
        source: Source<'_>,
        data: &Path,
        log: &Path,
        settings: &[(&str, &str)],
    ) -> Result<Self> {
        let mut cmd = Command::new(place.bin);
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
        match source {
            Source::Dir(dir) => cmd.env("MIRANTE_CATALOG", dir),
            Source::Monorepo(repo) => cmd
                .env("MIRANTE_MONOREPO", repo)
                // The first read of a long history may take longer than the default 30 s;
                // it is measured, not cut short (the report says when it is over 30 s).
                .env("MIRANTE_REQUEST_TIMEOUT_SECS", "3600"),
        };
        cmd.env("MIRANTE_BIND", "127.0.0.1:0")
            .env("MIRANTE_DATA_DIR", data)
            .env("LEPTOS_SITE_ROOT", place.site_root)
            // Anonymous reads of the catalog, so that the same server is measured with no
            // credentials, an API token and a session; without an OpenID issuer the
            // development sign-in provides the latter two.
            .env("MIRANTE_PUBLIC_CATALOG", "true")
            // Stopped by the harness, not taken out of a load balancer: no drain delay.
            .env("MIRANTE_SHUTDOWN_DELAY_SECS", "0")
            // One client sends tens of thousands of token requests a second here; the default
            // budget (600 a minute per client) would measure the 429 path. The limiter still
            // runs on every request, with a budget the load cannot reach.
            .env("MIRANTE_TOKEN_CHECKS_PER_MINUTE", "1000000000")
            .envs(settings.iter().copied())
            // No ./mirante.toml is picked up from here.
            .current_dir(place.scratch)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut log = File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {}", place.bin.display()))?;
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

    pub(super) fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Waits for the `listening` line, then polls `/readyz` until it answers 200.
    pub(crate) fn wait_ready(&mut self) -> Result<SocketAddr> {
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
        let client = Client::new(addr, Duration::from_secs(10));
        loop {
            if client.get("/readyz", &[]).is_ok_and(|r| r.status == 200) {
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
    pub(crate) fn stop(&mut self) {
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
}
