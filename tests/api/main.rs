//! API integration tests: the real server on 127.0.0.1:0, every test once on SQLite and once
//! on a fresh PostgreSQL database (see `helpers::spawn_app` and `on_both_databases!`).
//!
//! One test binary for the whole API, so it links once.

// The forge contracts are large `json!` literals.
#![recursion_limit = "512"]

#[macro_use]
mod helpers;

#[path = "../mail/sink.rs"]
mod mail;

mod argocd;
mod auth;
mod capacity;
mod catalog;
mod catalog_changes;
mod day_two;
mod expiry;
mod exports;
mod forges;
mod health;
mod history;
mod items;
mod limits;
mod metrics;
mod middleware;
mod notifications;
mod openapi;
mod outage;
mod pages;
mod probes;
mod proposed;
mod reference;
mod replicas;
mod requests;
mod resources;
mod roadmap;
mod upgrades;
