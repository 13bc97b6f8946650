//! Mirante's server: the JSON API, the host of the web UI, catalog ingestion, storage and
//! the command line, as a library so that tests can start the real thing on port 0.

pub mod adapters;
pub mod api;
pub mod auth;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod db;
pub mod evidence;
pub mod exports;
pub mod middleware;
pub mod probes;
pub mod selfservice;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod web;

pub use config::Config;
pub use startup::Application;
pub use state::AppState;
