//! The bodies Mirante's JSON API answers and takes, and that the web UI's server functions
//! pass to the pages: one type per thing, so the OpenAPI document, the API handlers and the
//! pages cannot drift apart. With the `openapi` feature each type also derives its OpenAPI
//! schema (the server's document); the browser's bundle leaves it off.
//!
//! The types are values only: how they are made from the database's records and the
//! catalog is the server's business, how they are shown the frontend's.

pub mod catalog_change;
pub mod selfservice;
