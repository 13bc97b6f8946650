//! Mirante's server: the JSON API, the host of the web UI, catalog ingestion, storage and
//! the command line, as a library so that tests can start the real thing on port 0.

#![warn(unreachable_pub)]

pub mod adapters;
pub mod app;
pub mod cli;
pub mod config;
pub mod http;
pub(crate) mod metrics;
pub mod startup;
pub mod telemetry;

pub use config::Config;
pub use http::AppState;
pub use startup::Application;
