//! The `mirante` binary: see [`mirante::cli`].

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    mirante::cli::run(mirante::cli::Cli::parse())
}
