//! An immutable, indexed view of a validated catalog, and the read queries over it.
//!
//! The server keeps one `Snapshot` behind an atomic pointer and swaps it whole on reload;
//! every read (API, pages) is a plain function over it, with no locks and no I/O.
//!
//! Built once per load, the indexes make the common reads independent of the catalog's size:
//! a set of item positions (a bitset) per state, qualifier, site and layer (with its
//! sub-layers), so a filter is a few word-wise ANDs and the number of matches a popcount; and
//! the tasks and decisions of each item, so an item's page does not scan them; and the words
//! of items, decisions and tasks ([`CatalogText`]), so a text search reads postings instead of
//! every entry's text.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::bits::Bits;
use crate::model::{Catalog, Decision, Item, Layer, LayerKind, Qualifier, Site, State, Task};
use crate::search::{CatalogText, Query, item_fields};

/// A validated catalog with its indexes and where it came from.
#[derive(Debug, Clone)]
pub struct Snapshot {
    catalog: Catalog,
    /// SHA-256 over the catalog files (names and contents), hex.
    pub hash: String,
    /// Revision of the source (a git commit) when known.
    pub revision: Option<String>,
    /// Item positions, ordered by id, for finding an item by id (a binary search) without a
    /// second copy of every id.
    item_index: Vec<u32>,
    layer_index: HashMap<String, usize>,
    site_index: HashMap<String, usize>,
    /// item index -> indexes of items that depend on it.
    dependents: Rows,
    /// Items per state, in the order of `State::ALL`.
    by_state: [Bits; 3],
    /// Items per qualifier, in the order of `Qualifier::ALL`.
    by_qualifier: [Bits; 5],
    /// Items per site, by site index.
    by_site: Vec<Bits>,
    /// Items per layer, sub-layers included, by layer index.
    by_layer: Vec<Bits>,
    /// item index -> indexes of the tasks that name it.
    item_tasks: Rows,
    /// item index -> indexes of the decisions it names or that name it, in catalog order.
    item_decisions: Rows,
    /// The words of items, decisions and tasks, for searching them.
    text: CatalogText,
}

/// One page of the items matching a filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemMatches<'a> {
    /// The matching items from `offset`, at most `limit` of them, in catalog order.
    pub items: Vec<&'a Item>,
    /// How many items match, over all pages.
    pub total: usize,
}

/// Filters for the item list; `None` means "any".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemFilter {
    /// Site id; only items that list the site match (platform-wide items list none).
    pub site: Option<String>,
    /// Layer id; a parent layer matches its sub-layers.
    pub layer: Option<String>,
    /// State.
    pub state: Option<State>,
    /// Qualifier.
    pub qualifier: Option<Qualifier>,
    /// Words searched in id, name, notes and tags, case and accents folded: every word must
    /// appear, in any order and any of those fields (see [`crate::search`]).
    pub q: Option<String>,
}

/// Counts of items per state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateCounts {
    /// Validated items.
    pub validated: u32,
    /// Declared items.
    pub declared: u32,
    /// Desired items.
    pub desired: u32,
}

impl StateCounts {
    /// Adds one item in `state`.
    pub fn add(&mut self, state: State) {
        match state {
            State::Validated => self.validated += 1,
            State::Declared => self.declared += 1,
            State::Desired => self.desired += 1,
        }
    }

    /// The count for `state`.
    pub fn get(&self, state: State) -> u32 {
        match state {
            State::Validated => self.validated,
            State::Declared => self.declared,
            State::Desired => self.desired,
        }
    }

    /// All items counted.
    pub fn total(&self) -> u32 {
        self.validated + self.declared + self.desired
    }
}

/// One row of the overview matrix: a top-level layer or capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverviewRow {
    /// Layer id.
    pub layer: String,
    /// Label (`0`, `8`, or empty for capabilities).
    pub number: String,
    /// Layer name.
    pub name: String,
    /// Ordered layer or capability.
    pub kind: LayerKind,
    /// Counts per site, in the order of `Overview::sites`.
    pub per_site: Vec<StateCounts>,
    /// Counts of items that concern no single site (platform-wide).
    pub platform_wide: StateCounts,
    /// Counts over the whole row (each item once).
    pub total: StateCounts,
}

/// The layers × sites matrix with counts per state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overview {
    /// Site ids and names, column order.
    pub sites: Vec<(String, String)>,
    /// One row per top-level layer, then per capability.
    pub rows: Vec<OverviewRow>,
    /// Counts over the whole catalog.
    pub totals: StateCounts,
}

/// Puts ordered layers before capabilities (each group in catalog order) and items in the
/// order of their layers, so lists read bottom-up like the architecture, whatever the file
/// layout of the catalog.
fn order_by_layer(catalog: &mut Catalog) {
    catalog
        .layers
        .sort_by_key(|l| l.kind == LayerKind::Capability);
    let rank: HashMap<&str, usize> = catalog
        .layers
        .iter()
        .enumerate()
        .map(|(i, l)| (l.id.as_str(), i))
        .collect();
    let mut keyed: Vec<(usize, Item)> = std::mem::take(&mut catalog.items)
        .into_iter()
        .map(|it| {
            (
                rank.get(it.layer.as_str()).copied().unwrap_or(usize::MAX),
                it,
            )
        })
        .collect();
    keyed.sort_by_key(|(r, _)| *r);
    catalog.items = keyed.into_iter().map(|(_, it)| it).collect();
}

/// A list of positions (items, tasks, decisions) for each item, in two allocations: for a large
/// catalog, where most items have none, a list per item would cost more than the positions.
#[derive(Debug, Clone)]
struct Rows {
    /// Row `i` is `positions[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    positions: Vec<u32>,
}

impl Rows {
    /// `n` rows holding the `(row, position)` pairs, each row ascending and without repeats.
    fn new(n: usize, pairs: impl Iterator<Item = (usize, usize)>) -> Self {
        let narrow = |x: usize| u32::try_from(x).expect("fewer than 2^32 entries");
        let mut pairs: Vec<(u32, u32)> = pairs.map(|(r, p)| (narrow(r), narrow(p))).collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut starts = Vec::with_capacity(n + 1);
        let mut at = 0;
        for row in 0..n {
            starts.push(narrow(at));
            while pairs.get(at).is_some_and(|&(r, _)| r as usize == row) {
                at += 1;
            }
        }
        starts.push(narrow(at));
        let mut positions: Vec<u32> = pairs.into_iter().map(|(_, p)| p).collect();
        // Collected in place, the list would keep the pairs' allocation, twice its size.
        positions.shrink_to_fit();
        Rows { starts, positions }
    }

    /// The positions of row `i`, ascending.
    fn row(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let (from, to) = (self.starts[i] as usize, self.starts[i + 1] as usize);
        self.positions[from..to].iter().map(|&p| p as usize)
    }
}

/// `(named, entry)` for every id that an entry of `entries` lists in its `names` (dependencies,
/// a task's or a decision's items, an item's decisions): the position `find` gives the id, and
/// the entry's.
fn naming<'a, T, S: AsRef<str> + 'a>(
    entries: &'a [T],
    names: impl Fn(&'a T) -> &'a [S] + 'a,
    find: &'a impl Fn(&str) -> Option<usize>,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    entries.iter().enumerate().flat_map(move |(k, entry)| {
        names(entry)
            .iter()
            .filter_map(|id| find(id.as_ref()))
            .map(move |i| (i, k))
    })
}

/// The position in `items` of the item `id`, by a binary search of `index` (positions ordered
/// by id).
fn position(index: &[u32], items: &[Item], id: &str) -> Option<usize> {
    index
        .binary_search_by(|&i| items[i as usize].id.as_str().cmp(id))
        .ok()
        .map(|k| index[k] as usize)
}

impl Snapshot {
    /// Builds the indexes of a catalog that has passed validation.
    pub fn new(mut catalog: Catalog, hash: String, revision: Option<String>) -> Self {
        order_by_layer(&mut catalog);
        let mut item_index: Vec<u32> = (0..catalog.items.len())
            .map(|i| u32::try_from(i).expect("fewer than 2^32 items"))
            .collect();
        item_index.sort_unstable_by(|&a, &b| {
            catalog.items[a as usize]
                .id
                .cmp(&catalog.items[b as usize].id)
        });
        let find = |id: &str| position(&item_index, &catalog.items, id);
        let layer_index: HashMap<String, usize> = catalog
            .layers
            .iter()
            .enumerate()
            .map(|(i, l)| (l.id.clone(), i))
            .collect();
        let site_index: HashMap<String, usize> = catalog
            .sites
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.clone(), i))
            .collect();
        let n = catalog.items.len();
        let dependents = Rows::new(n, naming(&catalog.items, |it| &it.depends_on, &find));
        let mut by_state = std::array::from_fn(|_| Bits::empty(n));
        let mut by_qualifier = std::array::from_fn(|_| Bits::empty(n));
        let mut by_site = vec![Bits::empty(n); catalog.sites.len()];
        let mut by_layer = vec![Bits::empty(n); catalog.layers.len()];
        for (i, item) in catalog.items.iter().enumerate() {
            if let Some(k) = State::ALL.iter().position(|s| *s == item.state) {
                by_state[k].insert(i);
            }
            if let Some(k) = item
                .qualifier
                .and_then(|q| Qualifier::ALL.iter().position(|x| *x == q))
            {
                by_qualifier[k].insert(i);
            }
            for site in &item.sites {
                if let Some(&k) = site_index.get(site.as_str()) {
                    by_site[k].insert(i);
                }
            }
            // The item's layer and every ancestor; the bound guards against a parent cycle,
            // which validation refuses.
            let mut layer = Some(item.layer.as_str());
            for _ in 0..=catalog.layers.len() {
                let Some(&k) = layer.and_then(|l| layer_index.get(l)) else {
                    break;
                };
                by_layer[k].insert(i);
                layer = catalog.layers[k].parent.as_deref();
            }
        }
        let item_tasks = Rows::new(n, naming(&catalog.tasks, |t| &t.items, &find));
        let decision_index: HashMap<&str, usize> = catalog
            .decisions
            .iter()
            .enumerate()
            .map(|(k, d)| (d.id.as_str(), k))
            .collect();
        let find_decision = |id: &str| decision_index.get(id).copied();
        let named_by_decisions = naming(&catalog.decisions, |d| &d.items, &find);
        let named_by_items =
            naming(&catalog.items, |it| &it.decisions, &find_decision).map(|(k, i)| (i, k));
        let item_decisions = Rows::new(n, named_by_decisions.chain(named_by_items));
        drop(decision_index);
        let text = CatalogText::build(&catalog);
        Snapshot {
            catalog,
            hash,
            revision,
            item_index,
            layer_index,
            site_index,
            dependents,
            by_state,
            by_qualifier,
            by_site,
            by_layer,
            item_tasks,
            item_decisions,
            text,
        }
    }

    /// The text indexes of the catalog's items, decisions and tasks.
    pub(crate) fn text(&self) -> &CatalogText {
        &self.text
    }

    /// The whole catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// An item by id.
    pub fn item(&self, id: &str) -> Option<&Item> {
        self.item_position(id).map(|i| &self.catalog.items[i])
    }

    /// The position of an item in `catalog().items`.
    pub fn item_position(&self, id: &str) -> Option<usize> {
        position(&self.item_index, &self.catalog.items, id)
    }

    /// A layer by id.
    pub fn layer(&self, id: &str) -> Option<&Layer> {
        self.layer_index.get(id).map(|&i| &self.catalog.layers[i])
    }

    /// A site by id.
    pub fn site(&self, id: &str) -> Option<&Site> {
        self.site_index.get(id).map(|&i| &self.catalog.sites[i])
    }

    /// Whether `layer` is `ancestor` or one of its sub-layers.
    pub fn layer_within(&self, layer: &str, ancestor: &str) -> bool {
        let mut cur = Some(layer);
        // Parents are validated to be acyclic; the bound guards against misuse anyway.
        for _ in 0..=self.catalog.layers.len() {
            match cur {
                Some(id) if id == ancestor => return true,
                Some(id) => cur = self.layer(id).and_then(|l| l.parent.as_deref()),
                None => return false,
            }
        }
        false
    }

    /// The top-level layer an item's layer rolls up to.
    pub fn top_layer<'a>(&'a self, layer: &'a str) -> &'a str {
        let mut cur = layer;
        for _ in 0..=self.catalog.layers.len() {
            match self.layer(cur).and_then(|l| l.parent.as_deref()) {
                Some(p) => cur = p,
                None => break,
            }
        }
        cur
    }

    /// The positions of the items that pass the filter's site, layer, state and qualifier;
    /// the text is left to the caller.
    fn candidates(&self, f: &ItemFilter) -> Bits {
        let n = self.catalog.items.len();
        let mut bits = Bits::full(n);
        if let Some(s) = f.state
            && let Some(k) = State::ALL.iter().position(|x| *x == s)
        {
            bits.and(&self.by_state[k]);
        }
        if let Some(q) = f.qualifier
            && let Some(k) = Qualifier::ALL.iter().position(|x| *x == q)
        {
            bits.and(&self.by_qualifier[k]);
        }
        // An unknown site or layer matches nothing: no item of a valid catalog names it.
        if let Some(site) = f.site.as_deref() {
            match self.site_index.get(site) {
                Some(&k) => bits.and(&self.by_site[k]),
                None => bits = Bits::empty(n),
            }
        }
        if let Some(layer) = f.layer.as_deref() {
            match self.layer_index.get(layer) {
                Some(&k) => bits.and(&self.by_layer[k]),
                None => bits = Bits::empty(n),
            }
        }
        bits
    }

    /// The positions of the items that pass every part of the filter, the text included.
    fn matches(&self, f: &ItemFilter) -> Bits {
        let bits = self.candidates(f);
        match f.q.as_deref().and_then(Query::parse) {
            None => bits,
            Some(query) => {
                let items = &self.catalog.items;
                self.text
                    .items
                    .matching(&query, bits, |i| item_fields(&items[i]))
            }
        }
    }

    /// Items matching a filter, in catalog order.
    pub fn filter_items<'a>(&'a self, f: &ItemFilter) -> impl Iterator<Item = &'a Item> + 'a {
        self.matches(f)
            .into_positions()
            .map(|i| &self.catalog.items[i])
    }

    /// The items matching a filter from `offset`, at most `limit`, and how many match in all.
    ///
    /// The count is read off the indexes, whatever the catalog's size.
    pub fn page_items(&self, f: &ItemFilter, offset: usize, limit: usize) -> ItemMatches<'_> {
        let bits = self.matches(f);
        ItemMatches {
            items: bits
                .positions()
                .skip(offset)
                .take(limit)
                .map(|i| &self.catalog.items[i])
                .collect(),
            total: bits.count(),
        }
    }

    /// Items that depend on `id`.
    pub fn dependents(&self, id: &str) -> Vec<&Item> {
        self.item_position(id)
            .map(|i| {
                self.dependents
                    .row(i)
                    .map(|d| &self.catalog.items[d])
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Pending tasks that name the item.
    pub fn tasks_for_item(&self, id: &str) -> Vec<&Task> {
        self.item_position(id)
            .map(|i| {
                self.item_tasks
                    .row(i)
                    .map(|t| &self.catalog.tasks[t])
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Pending tasks of a layer and its sub-layers.
    pub fn tasks_for_layer(&self, id: &str) -> Vec<&Task> {
        self.catalog
            .tasks
            .iter()
            .filter(|t| self.layer_within(&t.layer, id))
            .collect()
    }

    /// Decisions that shape the item: those it names and those that name it.
    pub fn decisions_for_item(&self, item: &Item) -> Vec<&Decision> {
        if let Some(i) = self.item_position(&item.id)
            && std::ptr::eq(item, &self.catalog.items[i])
        {
            return self
                .item_decisions
                .row(i)
                .map(|k| &self.catalog.decisions[k])
                .collect();
        }
        // An item from elsewhere (another snapshot, an edited copy): its own references count.
        self.catalog
            .decisions
            .iter()
            .filter(|d| {
                item.decisions.iter().any(|k| *k == d.id) || d.items.iter().any(|i| *i == item.id)
            })
            .collect()
    }

    /// Decisions that concern a layer or one of its sub-layers.
    pub fn decisions_for_layer(&self, id: &str) -> Vec<&Decision> {
        self.catalog
            .decisions
            .iter()
            .filter(|d| d.layers.iter().any(|l| self.layer_within(l, id)))
            .collect()
    }

    /// Sub-layers of a layer.
    pub fn children(&self, id: &str) -> Vec<&Layer> {
        self.catalog
            .layers
            .iter()
            .filter(|l| l.parent.as_deref() == Some(id))
            .collect()
    }

    /// The layers × sites matrix.
    pub fn overview(&self) -> Overview {
        let sites: Vec<(String, String)> = self
            .catalog
            .sites
            .iter()
            .map(|s| (s.id.clone(), s.name.clone()))
            .collect();
        let mut rows: Vec<OverviewRow> = Vec::new();
        let mut row_of: HashMap<&str, usize> = HashMap::new();
        // Layers first (in catalog order), then capabilities.
        for kind in [LayerKind::Layer, LayerKind::Capability] {
            for l in self
                .catalog
                .layers
                .iter()
                .filter(|l| l.kind == kind && l.parent.is_none())
            {
                row_of.insert(&l.id, rows.len());
                rows.push(OverviewRow {
                    layer: l.id.clone(),
                    number: l.number.clone(),
                    name: l.name.clone(),
                    kind: l.kind,
                    per_site: vec![StateCounts::default(); sites.len()],
                    platform_wide: StateCounts::default(),
                    total: StateCounts::default(),
                });
            }
        }
        let mut totals = StateCounts::default();
        for item in &self.catalog.items {
            totals.add(item.state);
            let Some(&r) = row_of.get(self.top_layer(&item.layer)) else {
                continue;
            };
            let row = &mut rows[r];
            row.total.add(item.state);
            if item.sites.is_empty() {
                row.platform_wide.add(item.state);
            }
            for s in &item.sites {
                if let Some(c) = self.site_index.get(s.as_str()) {
                    row.per_site[*c].add(item.state);
                }
            }
        }
        Overview {
            sites,
            rows,
            totals,
        }
    }
}

#[cfg(all(test, feature = "load"))]
mod tests {
    use super::*;
    use crate::load::load_files;

    const CATALOG: &str = "\
sites:
  - {id: franca, name: Franca}
  - {id: sp, name: São Paulo}
layers:
  - {id: l0, kind: layer, number: '0', name: Physical}
  - {id: l8, kind: layer, number: '8', name: Workloads}
  - {id: l8a, kind: layer, number: 8a, name: GPU, parent: l8}
  - {id: secrets, kind: capability, name: Secrets}
items:
  - {id: pve-franca, name: Proxmox Franca, kind: component, layer: l0, sites: [franca],
     state: validated}
  - {id: pve-sp, name: Proxmox SP, kind: component, layer: l0, sites: [sp], state: declared,
     qualifier: partial}
  - {id: vault, name: Secret store, kind: capability, layer: secrets, state: desired,
     qualifier: future, notes: 'HashiCorp Vault, cofre de produção', tags: [security]}
  - {id: jupyter, name: JupyterHub, kind: workload, layer: l8a, sites: [franca], state: desired,
     qualifier: deferred, depends_on: [pve-franca], decisions: [hub-per-site]}
  - {id: argocd, name: Argo CD, kind: workload, layer: l8, sites: [franca, sp], state: validated,
     depends_on: [pve-franca, pve-sp]}
decisions:
  - {id: hub-per-site, topic: Hubs, decision: one per site, layers: [l8a], items: [argocd]}
tasks:
  - {id: gpus, title: Buy GPUs, layer: l8a, items: [jupyter]}
  - {id: rack, title: Rack servers, layer: l0}
";

    fn snapshot() -> Snapshot {
        let loaded = load_files(vec![("catalog.yaml".to_owned(), CATALOG.to_owned())])
            .map_err(|d| d.to_string())
            .expect("test catalog is valid");
        loaded.into_snapshot(Some("abc123".to_owned()))
    }

    fn ids(s: &Snapshot, f: ItemFilter) -> Vec<String> {
        s.filter_items(&f).map(|i| i.id.to_string()).collect()
    }

    #[test]
    fn a_site_filter_keeps_the_items_that_list_the_site() {
        let s = snapshot();
        let at = |site: &str, state: State| ItemFilter {
            site: Some(site.into()),
            state: Some(state),
            ..Default::default()
        };

        // Only validated and declared items: the one platform-wide item (vault) is desired, and
        // whether platform-wide items match a site is the filter's policy, not pinned here.
        let sp_validated = ids(&s, at("sp", State::Validated));
        let sp_declared = ids(&s, at("sp", State::Declared));
        let franca_validated = ids(&s, at("franca", State::Validated));

        assert_eq!(sp_validated, ["argocd"]);
        assert_eq!(sp_declared, ["pve-sp"]);
        assert_eq!(franca_validated, ["pve-franca", "argocd"]);
    }

    #[test]
    fn a_layer_filter_includes_its_sub_layers() {
        let s = snapshot();

        let found = ids(
            &s,
            ItemFilter {
                layer: Some("l8".into()),
                ..Default::default()
            },
        );

        assert_eq!(found, ["argocd", "jupyter"]);
    }

    #[test]
    fn items_and_layers_are_ordered_bottom_up_with_capabilities_last() {
        let s = snapshot();

        let layers: Vec<&str> = s.catalog().layers.iter().map(|l| l.id.as_str()).collect();
        let items: Vec<&str> = s.catalog().items.iter().map(|i| i.id.as_str()).collect();

        assert_eq!(layers, ["l0", "l8", "l8a", "secrets"]);
        assert_eq!(
            items,
            ["pve-franca", "pve-sp", "argocd", "jupyter", "vault"]
        );
        assert_eq!(s.item("vault").map(|i| i.layer.as_str()), Some("secrets"));
    }

    #[test]
    fn state_and_qualifier_filters_combine() {
        let s = snapshot();

        let desired = ids(
            &s,
            ItemFilter {
                state: Some(State::Desired),
                ..Default::default()
            },
        );
        let deferred = ids(
            &s,
            ItemFilter {
                state: Some(State::Desired),
                qualifier: Some(Qualifier::Deferred),
                ..Default::default()
            },
        );

        assert_eq!(desired, ["jupyter", "vault"]);
        assert_eq!(deferred, ["jupyter"]);
    }

    #[test]
    fn text_search_is_case_insensitive_over_id_name_notes_and_tags() {
        let s = snapshot();

        let by_notes = ids(
            &s,
            ItemFilter {
                q: Some("  HASHICORP ".into()),
                ..Default::default()
            },
        );
        let by_tag = ids(
            &s,
            ItemFilter {
                q: Some("security".into()),
                ..Default::default()
            },
        );
        let by_name = ids(
            &s,
            ItemFilter {
                q: Some("proxmox".into()),
                ..Default::default()
            },
        );
        let blank = ids(
            &s,
            ItemFilter {
                q: Some("   ".into()),
                ..Default::default()
            },
        );

        assert_eq!(by_notes, ["vault"]);
        assert_eq!(by_tag, ["vault"]);
        assert_eq!(by_name, ["pve-franca", "pve-sp"]);
        assert_eq!(blank.len(), 5);
    }

    #[test]
    fn the_overview_counts_items_per_top_layer_site_and_state() {
        let s = snapshot();

        let o = s.overview();

        let sites: Vec<&str> = o.sites.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(sites, ["franca", "sp"]);
        let rows: Vec<&str> = o.rows.iter().map(|r| r.layer.as_str()).collect();
        assert_eq!(rows, ["l0", "l8", "secrets"]);
        let l0 = &o.rows[0];
        assert_eq!(
            l0.per_site[0],
            StateCounts {
                validated: 1,
                declared: 0,
                desired: 0
            }
        );
        assert_eq!(
            l0.per_site[1],
            StateCounts {
                validated: 0,
                declared: 1,
                desired: 0
            }
        );
        let l8 = &o.rows[1];
        assert_eq!(
            l8.per_site[0],
            StateCounts {
                validated: 1,
                declared: 0,
                desired: 1
            }
        );
        assert_eq!(
            l8.per_site[1],
            StateCounts {
                validated: 1,
                declared: 0,
                desired: 0
            }
        );
        assert_eq!(
            l8.total,
            StateCounts {
                validated: 1,
                declared: 0,
                desired: 1
            }
        );
        let secrets = &o.rows[2];
        assert_eq!(
            secrets.platform_wide,
            StateCounts {
                validated: 0,
                declared: 0,
                desired: 1
            }
        );
        assert_eq!(
            o.totals,
            StateCounts {
                validated: 2,
                declared: 1,
                desired: 2
            }
        );
    }

    #[test]
    fn dependents_are_the_items_that_depend_on_an_item() {
        let s = snapshot();

        let of_franca: Vec<&str> = s
            .dependents("pve-franca")
            .iter()
            .map(|i| i.id.as_str())
            .collect();
        let of_sp: Vec<&str> = s
            .dependents("pve-sp")
            .iter()
            .map(|i| i.id.as_str())
            .collect();

        assert_eq!(of_franca, ["argocd", "jupyter"]);
        assert_eq!(of_sp, ["argocd"]);
        assert!(s.dependents("argocd").is_empty());
        assert!(s.dependents("no-such-item").is_empty());
    }

    #[test]
    fn tasks_and_decisions_are_found_through_layers_and_items() {
        let s = snapshot();
        let jupyter = s.item("jupyter").expect("jupyter");
        let argocd = s.item("argocd").expect("argocd");

        let l8_tasks: Vec<&str> = s
            .tasks_for_layer("l8")
            .iter()
            .map(|t| t.id.as_str())
            .collect();
        let jupyter_tasks: Vec<&str> = s
            .tasks_for_item("jupyter")
            .iter()
            .map(|t| t.id.as_str())
            .collect();

        assert_eq!(l8_tasks, ["gpus"]);
        assert_eq!(jupyter_tasks, ["gpus"]);
        assert_eq!(s.decisions_for_item(jupyter)[0].id, "hub-per-site");
        assert_eq!(s.decisions_for_item(argocd)[0].id, "hub-per-site");
        assert_eq!(s.decisions_for_layer("l8").len(), 1);
        assert!(s.decisions_for_layer("l0").is_empty());
    }

    /// The filter as a plain scan of every item, to check the indexes against.
    fn scanned<'a>(s: &'a Snapshot, f: &ItemFilter) -> Vec<&'a str> {
        let query = f.q.as_deref().and_then(Query::parse);
        s.catalog()
            .items
            .iter()
            .filter(|it| {
                f.state.is_none_or(|x| it.state == x)
                    && f.qualifier.is_none_or(|q| it.qualifier == Some(q))
                    && f.site
                        .as_deref()
                        .is_none_or(|x| it.sites.iter().any(|y| y == x))
                    && f.layer
                        .as_deref()
                        .is_none_or(|l| s.layer_within(&it.layer, l))
                    && query.as_ref().is_none_or(|q| q.matches(item_fields(it)))
            })
            .map(|it| it.id.as_str())
            .collect()
    }

    /// The snapshot of a synthetic catalog of 1,000 items.
    fn synthetic_snapshot() -> Snapshot {
        load_files(crate::synthetic::synthetic(1000, 7))
            .map_err(|d| d.to_string())
            .expect("synthetic catalog is valid")
            .into_snapshot(None)
    }

    #[test]
    fn rows_hold_their_positions_ascending_once_each_and_rows_without_any_are_empty() {
        let rows = Rows::new(5, [(3, 7), (1, 2), (3, 1), (1, 2), (4, 0)].into_iter());
        let all: Vec<Vec<usize>> = (0..5).map(|i| rows.row(i).collect()).collect();
        assert_eq!(all, [vec![], vec![2], vec![], vec![1, 7], vec![0]]);
        assert_eq!(Rows::new(2, std::iter::empty()).row(1).count(), 0);
    }

    #[test]
    fn every_item_is_found_by_its_id_at_its_own_position_and_no_other_id_is() {
        let s = synthetic_snapshot();
        for (i, item) in s.catalog().items.iter().enumerate() {
            assert_eq!(s.item_position(&item.id), Some(i), "{}", item.id);
            assert!(std::ptr::eq(s.item(&item.id).expect("found"), item));
        }
        for id in ["", "item-", "item-1", "item-99999", "zzz", "Item-00001"] {
            assert_eq!(s.item_position(id), None, "{id}");
        }
        assert_eq!(s.catalog().items.len(), 1000);
    }

    #[test]
    fn indexed_filters_and_counts_agree_with_a_scan_of_every_item() {
        let s = synthetic_snapshot();
        let mut sites: Vec<Option<String>> = s
            .catalog()
            .sites
            .iter()
            .map(|x| Some(x.id.clone()))
            .collect();
        sites.extend([None, Some("no-such-site".to_owned())]);
        let mut layers: Vec<Option<String>> = s
            .catalog()
            .layers
            .iter()
            .map(|x| Some(x.id.clone()))
            .collect();
        layers.extend([None, Some("no-such-layer".to_owned())]);
        let states = State::ALL.map(Some).into_iter().chain([None]);
        let mut checked = 0;

        for state in states {
            for site in &sites {
                for layer in &layers {
                    for q in [
                        None,
                        Some(" GPU ".to_owned()),
                        Some("item-00".to_owned()),
                        Some("ITEM 12 gpu".to_owned()),
                        Some("hashes.".to_owned()),
                        Some("no-such-word".to_owned()),
                    ] {
                        let f = ItemFilter {
                            site: site.clone(),
                            layer: layer.clone(),
                            state,
                            qualifier: None,
                            q,
                        };
                        let expected = scanned(&s, &f);
                        let listed: Vec<&str> = s.filter_items(&f).map(|i| i.id.as_str()).collect();
                        let page = s.page_items(&f, 3, 10);
                        let paged: Vec<&str> = page.items.iter().map(|i| i.id.as_str()).collect();

                        assert_eq!(listed, expected, "{f:?}");
                        assert_eq!(page.total, expected.len(), "{f:?}");
                        assert_eq!(
                            paged,
                            expected
                                .iter()
                                .skip(3)
                                .take(10)
                                .copied()
                                .collect::<Vec<_>>(),
                            "{f:?}"
                        );
                        checked += expected.len();
                    }
                }
            }
        }
        for qualifier in Qualifier::ALL {
            let f = ItemFilter {
                qualifier: Some(qualifier),
                ..Default::default()
            };
            assert_eq!(s.page_items(&f, 0, usize::MAX).total, scanned(&s, &f).len());
        }
        assert!(
            checked > 1000,
            "the filters matched too few items to mean anything"
        );
    }

    #[test]
    fn the_tasks_and_decisions_of_every_item_are_those_a_scan_finds() {
        let s = synthetic_snapshot();
        let mut with_tasks = 0;
        let mut with_decisions = 0;

        for it in &s.catalog().items {
            let tasks: Vec<&str> = s
                .tasks_for_item(&it.id)
                .iter()
                .map(|t| t.id.as_str())
                .collect();
            let decisions: Vec<&str> = s
                .decisions_for_item(it)
                .iter()
                .map(|d| d.id.as_str())
                .collect();
            let copy = it.clone();
            let of_copy: Vec<&str> = s
                .decisions_for_item(&copy)
                .iter()
                .map(|d| d.id.as_str())
                .collect();

            let scanned_tasks: Vec<&str> = s
                .catalog()
                .tasks
                .iter()
                .filter(|t| t.items.iter().any(|i| *i == it.id))
                .map(|t| t.id.as_str())
                .collect();
            let scanned_decisions: Vec<&str> = s
                .catalog()
                .decisions
                .iter()
                .filter(|d| {
                    it.decisions.iter().any(|k| *k == d.id) || d.items.iter().any(|i| *i == it.id)
                })
                .map(|d| d.id.as_str())
                .collect();
            assert_eq!(tasks, scanned_tasks, "{}", it.id);
            assert_eq!(decisions, scanned_decisions, "{}", it.id);
            assert_eq!(of_copy, scanned_decisions, "{}", it.id);
            with_tasks += usize::from(!tasks.is_empty());
            with_decisions += usize::from(!decisions.is_empty());
        }
        assert!(
            with_tasks > 10 && with_decisions > 10,
            "{with_tasks} / {with_decisions}"
        );
        assert!(s.tasks_for_item("no-such-item").is_empty());
    }

    #[test]
    fn text_search_folds_accents_and_takes_words_in_any_order() {
        let s = snapshot();
        let found = |q: &str| {
            ids(
                &s,
                ItemFilter {
                    q: Some(q.into()),
                    ..Default::default()
                },
            )
        };

        assert_eq!(found("PROXMOX SP"), ["pve-sp"]);
        assert_eq!(found("sp proxmox"), ["pve-sp"]);
        assert_eq!(found("PRODUCAO"), ["vault"]);
        assert_eq!(found("produção cofre"), ["vault"]);
        assert_eq!(
            found("rgoc"),
            ["argocd"],
            "a word may be part of a longer one"
        );
        assert_eq!(
            found("vault,"),
            ["vault"],
            "punctuation is matched as typed"
        );
        assert!(found("vault.").is_empty());
        assert!(found("proxmox no-such-word").is_empty());
    }

    #[test]
    fn sub_layers_roll_up_to_their_top_layer() {
        let s = snapshot();

        let children: Vec<&str> = s.children("l8").iter().map(|l| l.id.as_str()).collect();

        assert_eq!(s.top_layer("l8a"), "l8");
        assert_eq!(s.top_layer("l0"), "l0");
        assert_eq!(children, ["l8a"]);
        assert!(s.layer_within("l8a", "l8"));
        assert!(!s.layer_within("l8", "l8a"));
        assert_eq!(s.revision.as_deref(), Some("abc123"));
        assert_eq!(s.site("sp").map(|x| x.name.as_str()), Some("São Paulo"));
    }
}
