//! The catalog's history: how each item's state changed from one revision of the monorepo to
//! the next, and how many items were in each state at every revision (the burn-up).
//!
//! Pure: the caller reads the revisions (from git, oldest first) and hands each one's item
//! states, file by file, or the reason it did not load, to a [`HistoryBuilder`]. The builder
//! can be kept and fed more revisions later, so a history is extended when the branch moves
//! forward instead of being computed again.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::{SmolStr, State};
use crate::snapshot::StateCounts;

/// The state of each item of one catalog file, in the file's order.
///
/// A file that a revision keeps unchanged from the one before is handed to the
/// [`HistoryBuilder`] as the same allocation (a clone of the `Arc`): the builder then knows,
/// without reading them, that its items did not change.
pub type FileStates = Arc<[(SmolStr, State)]>;

/// A revision of the catalog: the commit that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    /// Commit id (40 hex digits).
    pub commit: String,
    /// When it was committed, RFC 3339 in UTC (`2026-08-03T14:12:00Z`).
    pub date: String,
    /// Author's name.
    pub author: String,
    /// First line of the commit message.
    pub summary: String,
}

/// One change of an item's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateChange {
    /// The state before; none when the item appeared in this revision.
    pub from: Option<State>,
    /// The state after; none when the item was removed in this revision.
    pub to: Option<State>,
    /// The revision that made the change (shared by every change it made).
    #[serde(flatten)]
    pub revision: Arc<Revision>,
}

/// How many items were in each state at a revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BurnupPoint {
    /// When the revision was committed, RFC 3339 in UTC.
    pub date: String,
    /// Its commit id.
    pub commit: String,
    /// Validated items.
    pub validated: u32,
    /// Declared items.
    pub declared: u32,
    /// Desired items.
    pub desired: u32,
}

impl BurnupPoint {
    /// Every item of the revision.
    pub fn total(&self) -> u32 {
        self.validated + self.declared + self.desired
    }
}

/// A revision whose catalog did not load: left out of the history, and said so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedRevision {
    /// The revision.
    #[serde(flatten)]
    pub revision: Revision,
    /// What was wrong, as the loader said it (the first problem and how many there were).
    pub error: String,
}

/// The history of a catalog along one branch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogHistory {
    /// The branch tip this history was computed at; none for a branch with no commit.
    pub tip: Option<String>,
    /// Each item's state changes, oldest first, by item id. Items removed since are kept.
    pub changes: BTreeMap<String, Vec<StateChange>>,
    /// One point per revision that changed the catalog and loaded, oldest first.
    pub burnup: Vec<BurnupPoint>,
    /// Revisions whose catalog did not load, oldest first.
    pub skipped: Vec<SkippedRevision>,
    /// Whether the walk stopped before the first commit (a very long history): what it
    /// reached first counts as the moment every item of that revision appeared.
    pub truncated: bool,
}

impl CatalogHistory {
    /// An item's state changes, oldest first (empty for an item the history never saw).
    pub fn item(&self, id: &str) -> &[StateChange] {
        self.changes.get(id).map_or(&[], Vec::as_slice)
    }
}

/// Why there is no history to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoHistory {
    /// The catalog is read from a plain directory (`MIRANTE_CATALOG`), which has no history.
    Directory,
    /// The catalog is the demo built into the binary, which has no history.
    Embedded,
    /// The monorepo could not be read; the server's log says why.
    Unreadable,
}

impl NoHistory {
    /// The identifier used in JSON.
    pub fn as_str(&self) -> &'static str {
        match self {
            NoHistory::Directory => "directory",
            NoHistory::Embedded => "embedded",
            NoHistory::Unreadable => "unreadable",
        }
    }

    /// A sentence for API clients.
    pub fn explain(&self) -> &'static str {
        match self {
            NoHistory::Directory => {
                "the catalog is read from a directory (MIRANTE_CATALOG), which has no history; \
                 history comes from the monorepo's git history"
            }
            NoHistory::Embedded => {
                "the catalog is the demo built into the server, which has no history; \
                 history comes from the local monorepo's git history"
            }
            NoHistory::Unreadable => "the monorepo's history could not be read",
        }
    }
}

/// Builds a [`CatalogHistory`] from revisions given oldest first.
///
/// The history it answers is shared with it: answering costs nothing, and a later revision
/// copies the history only while a reader still holds the one answered before.
#[derive(Debug, Clone, Default)]
pub struct HistoryBuilder {
    history: Arc<CatalogHistory>,
    /// The files of the last revision that loaded.
    last: Vec<FileStates>,
}

/// Identity of a file's states: the address of its shared allocation.
fn identity(file: &FileStates) -> usize {
    Arc::as_ptr(file).cast::<()>() as usize
}

impl HistoryBuilder {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// A revision whose catalog loaded, with the item states of each of its files (every id
    /// once, as a catalog that loaded has it): records what changed since the last revision
    /// that loaded, and a burn-up point.
    ///
    /// Only the files that are not the last revision's own allocations are read for changes:
    /// an item of a file kept as it was is in no other file of either revision, so its state
    /// is the same in both.
    pub fn revision(&mut self, revision: &Revision, files: Vec<FileStates>) {
        let history = Arc::make_mut(&mut self.history);
        let revision = Arc::new(revision.clone());
        let mut push = |id: &str, from: Option<State>, to: Option<State>| {
            let change = StateChange {
                from,
                to,
                revision: Arc::clone(&revision),
            };
            match history.changes.get_mut(id) {
                Some(changes) => changes.push(change),
                None => {
                    history.changes.insert(id.to_owned(), vec![change]);
                }
            }
        };
        let kept: HashSet<usize> = files.iter().map(identity).collect();
        let was: HashSet<usize> = self.last.iter().map(identity).collect();
        // The states before of the items of the files that went or changed.
        let mut before: HashMap<&str, State> = HashMap::new();
        for file in self.last.iter().filter(|f| !kept.contains(&identity(f))) {
            before.extend(file.iter().map(|(id, state)| (id.as_str(), *state)));
        }
        let mut counts = StateCounts::default();
        for file in &files {
            let new = !was.contains(&identity(file));
            for (id, to) in file.iter() {
                counts.add(*to);
                if new {
                    let from = before.remove(id.as_str());
                    if from != Some(*to) {
                        push(id, from, Some(*to));
                    }
                }
            }
        }
        for (id, from) in before {
            push(id, Some(from), None);
        }
        history.burnup.push(BurnupPoint {
            date: revision.date.clone(),
            commit: revision.commit.clone(),
            validated: counts.validated,
            declared: counts.declared,
            desired: counts.desired,
        });
        self.last = files;
    }

    /// A revision whose catalog did not load: recorded as skipped; the next revision that
    /// loads is compared with the last one that did.
    pub fn broken(&mut self, revision: &Revision, error: String) {
        Arc::make_mut(&mut self.history)
            .skipped
            .push(SkippedRevision {
                revision: revision.clone(),
                error,
            });
    }

    /// Marks the history as starting after the first commit.
    pub fn truncated(&mut self) {
        Arc::make_mut(&mut self.history).truncated = true;
    }

    /// The history so far, at `tip`.
    pub fn history(&mut self, tip: Option<String>) -> Arc<CatalogHistory> {
        if self.history.tip != tip {
            Arc::make_mut(&mut self.history).tip = tip;
        }
        Arc::clone(&self.history)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(n: u8) -> Revision {
        Revision {
            commit: format!("{n:040}"),
            date: format!("2026-0{n}-01T00:00:00Z"),
            author: "Renata".to_owned(),
            summary: format!("step {n}"),
        }
    }

    /// A revision of one file holding `pairs`.
    fn states(pairs: &[(&str, State)]) -> Vec<FileStates> {
        vec![file(pairs)]
    }

    fn file(pairs: &[(&str, State)]) -> FileStates {
        pairs.iter().map(|(i, s)| (SmolStr::from(*i), *s)).collect()
    }

    /// Each item's changes as (from, to, revision summary), by id.
    fn changes(h: &CatalogHistory) -> Vec<(&str, Option<State>, Option<State>, &str)> {
        h.changes
            .iter()
            .flat_map(|(id, cs)| {
                cs.iter()
                    .map(move |c| (id.as_str(), c.from, c.to, c.revision.summary.as_str()))
            })
            .collect()
    }

    #[test]
    fn an_item_appears_changes_state_and_is_removed_in_that_order() {
        let mut b = HistoryBuilder::new();

        b.revision(&rev(1), states(&[("a", State::Desired)]));
        b.revision(&rev(2), states(&[("a", State::Declared)]));
        b.revision(&rev(3), states(&[("a", State::Declared)]));
        b.revision(&rev(4), states(&[]));
        let h = b.history(Some("tip".into()));
        let again = b.history(Some("tip".into()));

        let steps: Vec<(Option<State>, Option<State>, &str)> = h
            .item("a")
            .iter()
            .map(|c| (c.from, c.to, c.revision.summary.as_str()))
            .collect();
        assert_eq!(
            steps,
            [
                (None, Some(State::Desired), "step 1"),
                (Some(State::Desired), Some(State::Declared), "step 2"),
                (Some(State::Declared), None, "step 4"),
            ]
        );
        assert_eq!(h.burnup.len(), 4);
        assert_eq!(h.burnup[1].declared, 1);
        assert_eq!(h.burnup[3].total(), 0);
        assert_eq!(h.tip.as_deref(), Some("tip"));
        assert!(Arc::ptr_eq(&h, &again), "answering twice copies nothing");
    }

    #[test]
    fn a_broken_revision_is_skipped_and_the_next_one_compares_with_the_last_good_one() {
        let mut b = HistoryBuilder::new();

        b.revision(&rev(1), states(&[("a", State::Desired)]));
        b.broken(&rev(2), "c.yaml:3:5: unknown state".to_owned());
        b.revision(&rev(3), states(&[("a", State::Validated)]));
        let h = b.history(None);

        assert_eq!(h.skipped.len(), 1);
        assert_eq!(h.skipped[0].revision.summary, "step 2");
        let last = h.item("a").last().unwrap();
        assert_eq!(
            (last.from, last.to),
            (Some(State::Desired), Some(State::Validated))
        );
        assert_eq!(h.burnup.len(), 2, "no point for the broken revision");
    }

    #[test]
    fn a_history_already_answered_stays_as_it_was_when_the_builder_goes_on() {
        let mut b = HistoryBuilder::new();
        b.revision(&rev(1), states(&[("a", State::Desired)]));
        let before = b.history(Some("one".into()));

        b.revision(
            &rev(2),
            states(&[("a", State::Validated), ("b", State::Desired)]),
        );
        let after = b.history(Some("two".into()));

        assert_eq!(before.tip.as_deref(), Some("one"));
        assert_eq!((before.item("a").len(), before.burnup.len()), (1, 1));
        assert_eq!((after.item("a").len(), after.burnup.len()), (2, 2));
        assert!(
            Arc::ptr_eq(&after.item("a")[1].revision, &after.item("b")[0].revision),
            "one revision, shared by the changes it made"
        );
    }

    #[test]
    fn only_the_files_that_changed_are_compared_and_an_item_may_move_between_files() {
        use State::{Declared, Desired, Validated};
        let mut b = HistoryBuilder::new();
        let kept = file(&[("k", Desired)]);
        let (moves, leaves) = (file(&[("m", Desired), ("x", Declared)]), file(&[]));

        b.revision(&rev(1), vec![Arc::clone(&kept), moves]);
        // `m` moves to a new file unchanged, `x` goes; `kept` is the same allocation.
        b.revision(
            &rev(2),
            vec![Arc::clone(&kept), file(&[("m", Desired)]), leaves],
        );
        // `m` moves again and is validated; `n` appears; the empty file goes.
        let moved = file(&[("m", Validated), ("n", Declared)]);
        b.revision(&rev(3), vec![Arc::clone(&kept), moved]);
        // `kept`'s contents read again (a new allocation) with a new state for `k`.
        b.revision(
            &rev(4),
            vec![file(&[("k", Declared)]), file(&[("n", Declared)])],
        );
        let h = b.history(None);

        assert_eq!(
            changes(&h),
            [
                ("k", None, Some(Desired), "step 1"),
                ("k", Some(Desired), Some(Declared), "step 4"),
                ("m", None, Some(Desired), "step 1"),
                ("m", Some(Desired), Some(Validated), "step 3"),
                ("m", Some(Validated), None, "step 4"),
                ("n", None, Some(Declared), "step 3"),
                ("x", None, Some(Declared), "step 1"),
                ("x", Some(Declared), None, "step 2"),
            ]
        );
        let totals: Vec<(u32, u32, u32)> = h
            .burnup
            .iter()
            .map(|p| (p.validated, p.declared, p.desired))
            .collect();
        assert_eq!(totals, [(0, 1, 2), (0, 0, 2), (1, 1, 1), (0, 2, 0)]);
    }

    #[test]
    fn a_file_unchanged_across_a_broken_revision_is_compared_with_the_last_good_one() {
        use State::{Declared, Desired};
        let mut b = HistoryBuilder::new();
        let same = file(&[("a", Desired)]);

        b.revision(&rev(1), vec![Arc::clone(&same), file(&[("b", Desired)])]);
        b.broken(&rev(2), "b.yaml:1:1: not YAML".to_owned());
        b.revision(&rev(3), vec![same, file(&[("b", Declared)])]);
        let h = b.history(None);

        assert_eq!(
            changes(&h),
            [
                ("a", None, Some(Desired), "step 1"),
                ("b", None, Some(Desired), "step 1"),
                ("b", Some(Desired), Some(Declared), "step 3"),
            ]
        );
    }

    #[test]
    fn a_state_change_serializes_with_its_revision_inline() {
        let change = StateChange {
            from: None,
            to: Some(State::Desired),
            revision: Arc::new(rev(1)),
        };

        let json = serde_json::to_value(&change).unwrap();

        assert_eq!(json["from"], serde_json::Value::Null);
        assert_eq!(json["to"], "desired");
        assert_eq!(json["summary"], "step 1");
        assert_eq!(json["author"], "Renata");
    }
}
