//! A real mail server for the notification tests: PyPI's aiosmtpd running
//! `tests/mail/smtp_sink.py`, which writes every message it accepts to a directory as JSON.
//! The package comes from `MIRANTE_TEST_PYTHONPATH` (`cargo xtask test` sets it to its Python
//! cache), else from the Python installation.

#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

/// A message the server accepted.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Received {
    /// The envelope's recipients.
    pub rcpt_to: Vec<String>,
    /// The `From:` header.
    pub from: String,
    /// The `To:` header.
    pub to: String,
    /// The subject, decoded.
    pub subject: String,
    /// The `Message-ID:` header.
    pub message_id: String,
    /// The `Content-Language:` header.
    pub language: String,
    /// The plain-text body, decoded.
    pub text: String,
    /// The HTML body, decoded.
    pub html: String,
}

/// The running mail server; stopped when dropped.
pub struct MailSink {
    child: Child,
    dir: tempfile::TempDir,
    /// Where it listens on 127.0.0.1.
    pub port: u16,
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mail/smtp_sink.py")
}

impl MailSink {
    /// Starts the server on a free port; with `stall`, it holds every message before
    /// answering DATA until [`MailSink::release`].
    pub fn start(stall: bool) -> Self {
        Self::start_on(free_port(), stall)
    }

    /// Starts the server on `port`.
    pub fn start_on(port: u16, stall: bool) -> Self {
        let dir = tempfile::TempDir::new().unwrap();
        let mut cmd = Command::new("python3");
        cmd.arg(script())
            .arg("--port")
            .arg(port.to_string())
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if stall {
            cmd.arg("--stall");
        }
        if let Some(path) = std::env::var_os("MIRANTE_TEST_PYTHONPATH") {
            cmd.env("PYTHONPATH", path);
        }
        let mut child = cmd
            .spawn()
            .expect("cannot run python3 for the test mail server");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !dir.path().join("ready").exists() {
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                if let Some(mut stderr) = child.stderr.take() {
                    use std::io::Read;
                    let _ = stderr.read_to_string(&mut err);
                }
                panic!(
                    "the test mail server stopped ({status}). It needs PyPI's aiosmtpd: run the \
                     tests through `cargo xtask test`, or `pip install --target <dir> \
                     aiosmtpd==1.4.6` and set MIRANTE_TEST_PYTHONPATH=<dir>.\n{err}"
                );
            }
            assert!(
                Instant::now() < deadline,
                "the test mail server did not start within 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        MailSink { child, dir, port }
    }

    /// `smtp://127.0.0.1:<port>` (plain: the server is on this host).
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message accepted so far, in the order they arrived.
    pub fn messages(&self) -> Vec<Received> {
        let mut numbered: Vec<(u64, Received)> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .filter_map(|e| {
                let path = e.ok()?.path();
                let n: u64 = path
                    .file_name()?
                    .to_str()?
                    .strip_suffix(".json")?
                    .parse()
                    .ok()?;
                let text = std::fs::read_to_string(&path).ok()?;
                Some((
                    n,
                    serde_json::from_str(&text).expect("the sink writes JSON"),
                ))
            })
            .collect();
        numbered.sort_by_key(|(n, _)| *n);
        numbered.into_iter().map(|(_, m)| m).collect()
    }

    /// Waits until at least `count` messages arrived (at most `within`), then answers all.
    pub async fn wait_for(&self, count: usize, within: Duration) -> Vec<Received> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.messages();
            if got.len() >= count {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "expected {count} messages within {within:?}, got {}: {got:#?}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Whether a message is held before its answer to DATA.
    pub fn stalled(&self) -> bool {
        self.dir.path().join("stalled").exists()
    }

    /// Lets held messages through, and every later one.
    pub fn release(&self) {
        std::fs::write(self.dir.path().join("release"), "release\n").unwrap();
    }
}

impl Drop for MailSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
