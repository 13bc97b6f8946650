//! One module per page.

pub mod catalog;
pub mod dashboard;
pub mod decisions;
pub mod findings;
pub mod history;
pub mod item;
pub mod item_change;
pub mod layer;
pub mod overview;
pub mod proposed;
pub mod requests;
pub mod resources;
pub mod roadmap;
pub mod search;
pub mod selfservice;
pub mod sites;
