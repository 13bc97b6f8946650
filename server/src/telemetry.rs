//! Logging: `tracing` events to stderr, filtered by `RUST_LOG` (default `info`), as text or
//! JSON lines.

use std::io::IsTerminal;

use tracing_subscriber::{EnvFilter, fmt, prelude::*};

use crate::config::LogFormat;

/// Installs the global subscriber. Call once, before anything logs.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let registry = tracing_subscriber::registry().with(filter);
    // try_init: a second call (tests) keeps the first subscriber instead of panicking.
    // Colours only for a person at a terminal, not for log files and collectors.
    let ansi = std::io::stderr().is_terminal();
    let _ = match format {
        LogFormat::Text => registry
            .with(fmt::layer().with_ansi(ansi).with_writer(std::io::stderr))
            .try_init(),
        LogFormat::Json => registry
            .with(fmt::layer().json().with_writer(std::io::stderr))
            .try_init(),
    };
}
