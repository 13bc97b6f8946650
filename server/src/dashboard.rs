//! What the admins' dashboard reads that the catalog snapshot alone does not hold.
//!
//! The dashboard's "recent changes" come from the catalog's history through
//! [`HistoryData`]. [`NoHistory`] is what the portal provides while it keeps no history: the
//! dashboard then says that the history is not available. A history reader implements
//! `HistoryData` and replaces it in `web::context`.

use mirante_frontend::{api::dashboard::RecentChanges, ssr::HistoryData};

/// The catalog's history when the portal keeps none.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHistory;

#[async_trait::async_trait]
impl HistoryData for NoHistory {
    async fn recent_changes(&self, _limit: usize) -> RecentChanges {
        RecentChanges::unavailable()
    }
}
