//! What the admins' dashboard reads that the catalog snapshot alone does not hold.
//!
//! The dashboard's "recent changes" come from the catalog's history (see [`crate::history`])
//! through [`HistoryData`]: the latest state changes along the monorepo's base branch, newest
//! first, named as the catalog in force names them. A catalog without history (read from a
//! directory, or the built-in demo) gives [`RecentChanges::unavailable`], and the dashboard
//! says that the history is not available.

use std::sync::Arc;

use mirante_domain::history::CatalogHistory;
use mirante_frontend::{
    api::dashboard::{RecentChanges, StateChange},
    ssr::HistoryData,
};

use crate::catalog::CatalogStore;

/// Recent state changes read from the catalog store's history cache.
#[derive(Clone)]
pub struct CatalogHistoryData {
    catalog: Arc<CatalogStore>,
}

impl CatalogHistoryData {
    /// Reads the history of `catalog`'s source.
    pub fn new(catalog: Arc<CatalogStore>) -> Self {
        CatalogHistoryData { catalog }
    }
}

#[async_trait::async_trait]
impl HistoryData for CatalogHistoryData {
    async fn recent_changes(&self, limit: usize) -> RecentChanges {
        match self.catalog.history().get_async().await {
            Ok(history) => recent(&history, &self.catalog.snapshot(), limit),
            Err(_) => RecentChanges::unavailable(),
        }
    }
}

/// The `limit` latest changes of `history`, newest first. Items that left the catalog are
/// listed under their id; a removal is not a state and is not listed.
fn recent(
    history: &CatalogHistory,
    snapshot: &mirante_domain::Snapshot,
    limit: usize,
) -> RecentChanges {
    let mut changes: Vec<StateChange> = history
        .changes
        .iter()
        .flat_map(|(item, changes)| {
            changes.iter().filter_map(move |change| {
                let to = change.to?;
                Some(StateChange {
                    item: item.clone(),
                    name: snapshot
                        .item(item)
                        .map_or_else(|| item.clone(), |i| i.name.clone()),
                    from: change.from,
                    to,
                    at: change.revision.date.clone(),
                    revision: Some(change.revision.commit.clone()),
                })
            })
        })
        .collect();
    // Newest first; within one commit, by item id for a stable order.
    changes.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| a.item.cmp(&b.item)));
    changes.truncate(limit);
    RecentChanges {
        available: true,
        changes,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use mirante_domain::{
        State,
        history::{HistoryBuilder, Revision},
    };

    use super::*;

    fn revision(commit: &str, date: &str) -> Revision {
        Revision {
            commit: commit.to_owned(),
            date: date.to_owned(),
            author: "Ana".to_owned(),
            summary: "catalog".to_owned(),
        }
    }

    #[test]
    fn recent_changes_are_the_newest_state_changes_first_and_skip_removals() {
        let mut builder = HistoryBuilder::new();
        builder.revision(
            &revision("c1", "2026-08-01T10:00:00+00:00"),
            BTreeMap::from([
                ("a".to_owned(), State::Desired),
                ("b".to_owned(), State::Desired),
            ]),
        );
        builder.revision(
            &revision("c2", "2026-09-01T10:00:00+00:00"),
            BTreeMap::from([
                ("a".to_owned(), State::Declared),
                ("b".to_owned(), State::Desired),
            ]),
        );
        builder.revision(
            &revision("c3", "2026-10-01T10:00:00+00:00"),
            BTreeMap::from([("a".to_owned(), State::Validated)]),
        );
        let history = builder.history(Some("c3".to_owned()));
        let snapshot = mirante_domain::Snapshot::new(Default::default(), String::new(), None);

        let recent = recent(&history, &snapshot, 3);

        assert!(recent.available);
        let seen: Vec<_> = recent
            .changes
            .iter()
            .map(|c| (c.item.as_str(), c.from, c.to, c.revision.as_deref()))
            .collect();
        assert_eq!(
            seen,
            vec![
                ("a", Some(State::Declared), State::Validated, Some("c3")),
                ("a", Some(State::Desired), State::Declared, Some("c2")),
                ("a", None, State::Desired, Some("c1")),
            ]
        );
    }
}
