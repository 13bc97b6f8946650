//! Searching the catalog: items, decisions and pending tasks whose text holds what was typed,
//! with case and accents folded (`integracao` finds "Integração", `ARGO` finds "ArgoCD").
//! Every word typed must appear, in any order and any field of the entry.
//!
//! Each [`Snapshot`] builds a [`TextIndex`] of its items, decisions and tasks when it is made,
//! so a query reads postings instead of folding every entry's text; the catalog filter
//! (`q=`) and the header search both go through it. The portal adds the templates and
//! requests the reader may see, which are not catalog entries; [`Query::matches`] decides for
//! them, and is the plain definition the index is tested against.

use std::collections::HashMap;

use memchr::memmem;
use unicode_normalization::{UnicodeNormalization, char::is_combining_mark};

use crate::bits::Bits;
use crate::model::{Decision, Item, SmolStr, Task};
use crate::snapshot::Snapshot;

/// `s` lowercased, without accents (canonical decomposition, combining marks dropped).
pub fn fold(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    s.nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The words of folded text: its longest runs of letters and digits.
fn tokens(folded: &str) -> impl Iterator<Item = &str> {
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
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

/// The words of a set of entries (documents of a few fields each), and which entries hold
/// each word.
///
/// A word typed matches an entry when it is part of the entry's folded text. A word made only
/// of letters and digits can only lie inside one of the text's own words, so the index finds
/// every word of the vocabulary that contains it (one substring search over the vocabulary,
/// which is far smaller than the text) and takes the union of their entries: the answer, with
/// nothing left to check. A typed word with other characters (`item-00`, `argo.cd`) narrows
/// the entries by its letter-and-digit parts first, then checks those entries' text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TextIndex {
    /// How many entries.
    len: usize,
    /// The distinct words, each preceded by a NUL, which no word holds.
    vocabulary: String,
    /// Where each word starts in `vocabulary` (after its NUL), ascending.
    starts: Vec<u32>,
    /// Word `w`'s entries are `postings[offsets[w]..offsets[w + 1]]`, ascending.
    offsets: Vec<u32>,
    postings: Vec<u32>,
}

impl TextIndex {
    /// The index of `entries`, in order: each is the fields of one entry.
    pub(crate) fn build<'a, E, F>(entries: E) -> Self
    where
        E: IntoIterator<Item = F>,
        F: IntoIterator<Item = &'a str>,
    {
        let mut words: HashMap<String, Vec<u32>> = HashMap::new();
        let mut len = 0usize;
        for (i, fields) in entries.into_iter().enumerate() {
            len = i + 1;
            let i = u32::try_from(i).expect("fewer than 2^32 entries");
            for field in fields {
                let folded = fold(field);
                for t in tokens(&folded) {
                    match words.get_mut(t) {
                        Some(list) => {
                            if list.last() != Some(&i) {
                                list.push(i);
                            }
                        }
                        None => {
                            words.insert(t.to_owned(), vec![i]);
                        }
                    }
                }
            }
        }
        let mut words: Vec<(String, Vec<u32>)> = words.into_iter().collect();
        words.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut index = TextIndex {
            len,
            vocabulary: String::with_capacity(words.iter().map(|(w, _)| w.len() + 1).sum()),
            starts: Vec::with_capacity(words.len()),
            offsets: Vec::with_capacity(words.len() + 1),
            postings: Vec::with_capacity(words.iter().map(|(_, p)| p.len()).sum()),
        };
        for (word, list) in words {
            index.vocabulary.push('\0');
            index.starts.push(offset(index.vocabulary.len()));
            index.vocabulary.push_str(&word);
            index.offsets.push(offset(index.postings.len()));
            index.postings.extend(list);
        }
        index.offsets.push(offset(index.postings.len()));
        index
    }

    /// The entries among `within` that match every word of `query`. `fields(i)` is entry
    /// `i`'s text, as given to [`TextIndex::build`], read only for typed words that are not
    /// all letters and digits.
    pub(crate) fn matching<'a, F, I>(&self, query: &Query, mut within: Bits, fields: F) -> Bits
    where
        F: Fn(usize) -> I,
        I: IntoIterator<Item = &'a str>,
    {
        for word in &query.words {
            let mut parts = tokens(word).peekable();
            let plain = parts.peek().is_some_and(|p| p.len() == word.len());
            for part in parts {
                within.and(&self.containing(part));
            }
            if !plain {
                within.retain(|i| {
                    fields(i)
                        .into_iter()
                        .any(|f| fold(f).contains(word.as_str()))
                });
            }
        }
        within
    }

    /// The entries holding a word of the vocabulary that contains `part`.
    fn containing(&self, part: &str) -> Bits {
        let mut found = Bits::empty(self.len);
        let mut last = usize::MAX;
        for at in memmem::find_iter(self.vocabulary.as_bytes(), part.as_bytes()) {
            let w = self.starts.partition_point(|&s| s as usize <= at) - 1;
            if w == last {
                continue;
            }
            last = w;
            let (from, to) = (self.offsets[w] as usize, self.offsets[w + 1] as usize);
            for &i in &self.postings[from..to] {
                found.insert(i as usize);
            }
        }
        found
    }
}

/// `n` as a `u32` offset.
fn offset(n: usize) -> u32 {
    u32::try_from(n).expect("an index smaller than 4 GiB")
}

/// The fields an item is searched by: id, name, notes and tags.
pub fn item_fields(i: &Item) -> impl Iterator<Item = &str> {
    [i.id.as_str(), &i.name, &i.notes]
        .into_iter()
        .chain(i.tags.iter().map(SmolStr::as_str))
}

/// The fields a decision is searched by: id, topic, decision, what was rejected, reason and
/// ADRs.
pub fn decision_fields(d: &Decision) -> impl Iterator<Item = &str> {
    [
        d.id.as_str(),
        d.topic.as_str(),
        d.decision.as_str(),
        d.rejected.as_str(),
        d.reason.as_str(),
    ]
    .into_iter()
    .chain(d.adrs.iter().map(String::as_str))
}

/// The fields a task is searched by: id, title and notes.
pub fn task_fields(t: &Task) -> impl Iterator<Item = &str> {
    [t.id.as_str(), t.title.as_str(), t.notes.as_str()].into_iter()
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
    /// The entries of `all` that `index` (built from `all` by `fields`) finds for `query`.
    fn found<I: IntoIterator<Item = &'a str>>(
        all: &'a [T],
        index: &TextIndex,
        query: &Query,
        limit: usize,
        fields: impl Fn(&'a T) -> I,
    ) -> Self {
        let set = index.matching(query, Bits::full(all.len()), |i| fields(&all[i]));
        Hits {
            first: set.positions().take(limit).map(|i| &all[i]).collect(),
            total: set.count(),
        }
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
    let text = snapshot.text();
    CatalogHits {
        items: Hits::found(&c.items, &text.items, query, limit, item_fields),
        decisions: Hits::found(&c.decisions, &text.decisions, query, limit, decision_fields),
        tasks: Hits::found(&c.tasks, &text.tasks, query, limit, task_fields),
    }
}

/// The text indexes of a catalog's items, decisions and tasks, in catalog order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CatalogText {
    /// Items, by [`item_fields`].
    pub(crate) items: TextIndex,
    /// Decisions, by [`decision_fields`].
    pub(crate) decisions: TextIndex,
    /// Tasks, by [`task_fields`].
    pub(crate) tasks: TextIndex,
}

impl CatalogText {
    /// The indexes of `c`'s entries, in its order.
    pub(crate) fn build(c: &crate::model::Catalog) -> Self {
        CatalogText {
            items: TextIndex::build(c.items.iter().map(item_fields)),
            decisions: TextIndex::build(c.decisions.iter().map(decision_fields)),
            tasks: TextIndex::build(c.tasks.iter().map(task_fields)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry whose fields match `query` by [`Query::matches`], the plain definition.
    fn scanned(entries: &[Vec<String>], query: &Query) -> Vec<usize> {
        (0..entries.len())
            .filter(|&i| query.matches(entries[i].iter().map(String::as_str)))
            .collect()
    }

    fn indexed(entries: &[Vec<String>], query: &Query) -> Vec<usize> {
        let index = TextIndex::build(entries.iter().map(|e| e.iter().map(String::as_str)));
        let set = index.matching(query, Bits::full(entries.len()), |i| {
            entries[i].iter().map(String::as_str)
        });
        set.positions().collect()
    }

    proptest::proptest! {
        #[test]
        fn the_index_finds_exactly_what_a_scan_of_every_entry_finds(
            entries in proptest::collection::vec(
                proptest::collection::vec("[aAãÃçb1 .,:-]{0,12}", 0..4),
                0..150,
            ),
            typed in "[aAãçÇb1 .:-]{1,6}",
        ) {
            if let Some(query) = Query::parse(&typed) {
                proptest::prop_assert_eq!(indexed(&entries, &query), scanned(&entries, &query));
            }
        }
    }

    #[test]
    fn the_index_matches_parts_of_words_and_punctuation_as_typed() {
        let entries: Vec<Vec<String>> = [
            vec!["argocd", "Argo CD"],
            vec!["item-0012", "Integração contínua"],
            vec!["item-0120", "Serviço"],
        ]
        .iter()
        .map(|e| e.iter().map(|s| (*s).to_owned()).collect())
        .collect();
        let found = |q: &str| indexed(&entries, &Query::parse(q).unwrap());

        assert_eq!(found("RGO"), [0]);
        assert_eq!(found("item-01"), [2]);
        assert_eq!(found("item-0"), [1, 2]);
        assert_eq!(found("INTEGRACAO continua"), [1]);
        assert_eq!(found("servico item"), [2]);
        assert_eq!(
            found("-"),
            [1, 2],
            "a word of punctuation alone is searched as typed"
        );
        assert!(found("argo item").is_empty());
    }

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
