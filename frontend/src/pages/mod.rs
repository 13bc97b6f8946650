//! One module per page.

pub mod catalog;
pub mod decisions;
pub mod findings;
pub mod item;
pub mod layer;
pub mod overview;
pub mod roadmap;
pub mod sites;
