//! `fake-argocd <monorepo> [settle-ms]`: the fake Argo CD of the browser tests as a process.
//!
//! It answers Argo CD's application reads for the git monorepo at `<monorepo>` as Argo CD
//! running that monorepo's ApplicationSets would (see `mirante_tests::argocd::Monorepo`), with
//! every request checked against Argo CD's API description and the Bearer token
//! `mirante_tests::argocd::TOKEN`. It prints `listening http://127.0.0.1:<port>` once it
//! answers, and serves until it is killed; `GET /_fake/report` tells what it saw and every
//! request or answer that broke the contract.

use std::{path::PathBuf, process::ExitCode, time::Duration};

use mirante_tests::argocd::FakeArgo;

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(repo) = args.next() else {
        eprintln!("usage: fake-argocd <monorepo> [settle-ms]");
        return ExitCode::from(2);
    };
    let settle = match args.next().map(|s| s.parse::<u64>()) {
        None => Duration::from_secs(2),
        Some(Ok(ms)) => Duration::from_millis(ms),
        Some(Err(e)) => {
            eprintln!("settle-ms: {e}");
            return ExitCode::from(2);
        }
    };
    let fake = FakeArgo::watching(PathBuf::from(repo), settle).await;
    println!("listening {}", fake.base);
    std::future::pending::<()>().await;
    ExitCode::SUCCESS
}
