//! Server functions of the catalog's history: an item's state changes and the roadmap's
//! burn-up, both read from the monorepo's git history on the server.

use leptos::prelude::*;
use mirante_domain::history::{BurnupPoint, NoHistory, StateChange};
use serde::{Deserialize, Serialize};

/// What an item's timeline shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemTimeline {
    /// Why there is no history, when there is none.
    pub unavailable: Option<NoHistory>,
    /// The item's state changes, oldest first.
    pub changes: Vec<StateChange>,
}

/// What the roadmap's burn-up shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BurnupData {
    /// Why there is no history, when there is none.
    pub unavailable: Option<NoHistory>,
    /// Items per state at each revision of the catalog, oldest first.
    pub series: Vec<BurnupPoint>,
    /// How many revisions were left out because their catalog did not load.
    pub skipped: usize,
}

/// The catalog's history on the blocking pool (it reads git when the branch moved).
#[cfg(feature = "ssr")]
pub(crate) async fn history()
-> Result<Result<std::sync::Arc<mirante_domain::history::CatalogHistory>, NoHistory>, ServerFnError>
{
    let portal = use_context::<crate::ssr::PortalHandle>()
        .ok_or_else(|| ServerFnError::new("portal data is not available"))?;
    // Reads git when the branch moved.
    tokio::task::spawn_blocking(move || portal.history())
        .await
        .map_err(|e| ServerFnError::new(format!("the history did not finish: {e}")))
}

/// An item's state changes.
#[server(prefix = "/_fn", endpoint = "item_history")]
pub async fn get_item_history(id: String) -> Result<ItemTimeline, ServerFnError> {
    crate::ssr::authorize("item_history")?;
    Ok(match history().await? {
        Ok(h) => ItemTimeline {
            unavailable: None,
            changes: h.item(&id).to_vec(),
        },
        Err(no) => ItemTimeline {
            unavailable: Some(no),
            changes: Vec::new(),
        },
    })
}

/// The burn-up series of the catalog.
#[server(prefix = "/_fn", endpoint = "burnup")]
pub async fn get_burnup() -> Result<BurnupData, ServerFnError> {
    crate::ssr::authorize("burnup")?;
    Ok(match history().await? {
        Ok(h) => BurnupData {
            unavailable: None,
            series: h.burnup.clone(),
            skipped: h.skipped.len(),
        },
        Err(no) => BurnupData {
            unavailable: Some(no),
            series: Vec::new(),
            skipped: 0,
        },
    })
}
