//! The header search over the catalog: items, decisions and pending tasks whose text holds
//! what was typed, with case and accents folded (`integracao` finds "Integração", `ARGO`
//! finds "ArgoCD"). Every word typed must appear, in any order and any field of the entry.
//!
//! The portal adds the templates and requests the reader may see, which are not catalog
//! entries; the same [`Query`] decides for them.

use unicode_normalization::{UnicodeNormalization, char::is_combining_mark};

use crate::model::{Decision, Item, Task};
use crate::snapshot::Snapshot;

/// `s` lowercased, without accents (canonical decomposition, combining marks dropped).
pub fn fold(s: &str) -> String {
    s.nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// What was typed, folded and split into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    words: Vec<String>,
}

impl Query {
    /// The query for `text`; `None` when it holds no word.
    pub fn parse(text: &str) -> Option<Query> {
        let words: Vec<String> = fold(text).split_whitespace().map(str::to_owned).collect();
        (!words.is_empty()).then_some(Query { words })
    }

    /// Whether every word appears in one of `fields`.
    pub fn matches<'a>(&self, fields: impl IntoIterator<Item = &'a str>) -> bool {
        let folded: Vec<String> = fields.into_iter().map(fold).collect();
        self.words
            .iter()
            .all(|w| folded.iter().any(|f| f.contains(w.as_str())))
    }
}

/// Some of the entries of one kind that match, and how many match in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hits<'a, T> {
    /// The first matches, in catalog order.
    pub first: Vec<&'a T>,
    /// How many match.
    pub total: usize,
}

impl<'a, T> Hits<'a, T> {
    fn of(all: impl Iterator<Item = &'a T>, limit: usize) -> Self {
        let (first, total) = first_and_total(all, limit);
        Hits { first, total }
    }
}

/// The first `limit` of `all`, and how many there are in all.
pub fn first_and_total<T>(all: impl IntoIterator<Item = T>, limit: usize) -> (Vec<T>, usize) {
    let mut first = Vec::new();
    let mut total = 0;
    for t in all {
        if first.len() < limit {
            first.push(t);
        }
        total += 1;
    }
    (first, total)
}

/// What the catalog holds for a query, by kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogHits<'a> {
    /// Items, by id, name, notes and tags.
    pub items: Hits<'a, Item>,
    /// Decisions, by id, topic, decision, what was rejected, reason and ADRs.
    pub decisions: Hits<'a, Decision>,
    /// Pending tasks and open decisions, by id, title and notes.
    pub tasks: Hits<'a, Task>,
}

/// The items, decisions and tasks of `snapshot` that match `query`, at most `limit` of each.
pub fn catalog<'a>(snapshot: &'a Snapshot, query: &Query, limit: usize) -> CatalogHits<'a> {
    let c = snapshot.catalog();
    CatalogHits {
        items: Hits::of(
            c.items.iter().filter(|i| {
                query.matches(
                    [i.id.as_str(), i.name.as_str(), i.notes.as_str()]
                        .into_iter()
                        .chain(i.tags.iter().map(String::as_str)),
                )
            }),
            limit,
        ),
        decisions: Hits::of(
            c.decisions.iter().filter(|d| {
                query.matches(
                    [
                        d.id.as_str(),
                        d.topic.as_str(),
                        d.decision.as_str(),
                        d.rejected.as_str(),
                        d.reason.as_str(),
                    ]
                    .into_iter()
                    .chain(d.adrs.iter().map(String::as_str)),
                )
            }),
            limit,
        ),
        tasks: Hits::of(
            c.tasks
                .iter()
                .filter(|t| query.matches([t.id.as_str(), t.title.as_str(), t.notes.as_str()])),
            limit,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_and_accents_are_folded_on_both_sides() {
        assert_eq!(fold("Integração ÁGIL"), "integracao agil");
        let q = Query::parse("  integracao   argo ").unwrap();
        assert!(q.matches(["Integração com o ArgoCD"]));
        assert!(
            q.matches(["Integração", "argocd-sp"]),
            "words may be in different fields"
        );
        assert!(!q.matches(["Integração"]), "every word must appear");
        assert!(Query::parse(" \t ").is_none());
    }

    #[cfg(feature = "load")]
    #[test]
    fn the_demo_catalog_answers_by_kind_with_totals_beyond_the_limit() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");
        let catalog = crate::load::load_dir(&dir)
            .map_err(|d| d.to_string())
            .expect("the demo catalog is valid")
            .catalog;
        let snapshot = Snapshot::new(catalog, String::new(), None);

        let hits = catalog_hits(&snapshot, "cilium", 2);
        assert_eq!(hits.items.first.len(), 2);
        assert!(hits.items.total > 2, "{}", hits.items.total);
        for i in &hits.items.first {
            let text = fold(&format!("{} {} {} {:?}", i.id, i.name, i.notes, i.tags));
            assert!(text.contains("cilium"), "{text}");
        }
        let decisions = catalog_hits(&snapshot, "linstor drbd", 10).decisions;
        assert!(
            decisions
                .first
                .iter()
                .any(|d| d.id == "storage-replication"),
            "{:?}",
            decisions.first
        );
        assert_eq!(
            catalog_hits(&snapshot, "no-such-word-anywhere", 10)
                .items
                .total,
            0
        );
    }

    #[cfg(feature = "load")]
    fn catalog_hits<'a>(snapshot: &'a Snapshot, q: &str, limit: usize) -> CatalogHits<'a> {
        catalog(snapshot, &Query::parse(q).unwrap(), limit)
    }
}
