//! Server functions: what each page reads, computed on the server from the catalog snapshot.
//!
//! During server rendering they run in-process; after hydration the browser calls them
//! over HTTP. Each returns exactly what its page shows, so pages stay small.

use leptos::prelude::*;
use mirante_domain::{Decision, Item, ItemFilter, Layer, Overview, Qualifier, State, Task};
use serde::{Deserialize, Serialize};

pub mod catalog_change;
pub mod dashboard;
pub mod search;
pub mod selfservice;

/// A reference to an item with what a link needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemRef {
    /// Item id.
    pub id: String,
    /// Item name.
    pub name: String,
    /// Its state.
    pub state: State,
    /// Its qualifier.
    pub qualifier: Option<Qualifier>,
}

impl From<&Item> for ItemRef {
    fn from(i: &Item) -> Self {
        ItemRef {
            id: i.id.to_string(),
            name: i.name.to_string(),
            state: i.state,
            qualifier: i.qualifier,
        }
    }
}

/// A layer as the filters and headings name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerRef {
    /// Layer id.
    pub id: String,
    /// Label (`0`, `8b`).
    pub number: String,
    /// Name.
    pub name: String,
    /// Enclosing layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Whether it is a cross-cutting capability.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capability: bool,
}

impl LayerRef {
    /// `1 · Storage`, or the bare name for capabilities.
    pub fn label(&self) -> String {
        mirante_domain::layer_label(&self.number, &self.name)
    }
}

impl From<&Layer> for LayerRef {
    fn from(l: &Layer) -> Self {
        LayerRef {
            id: l.id.clone(),
            number: l.number.clone(),
            name: l.name.clone(),
            parent: l.parent.clone(),
            capability: l.kind == mirante_domain::LayerKind::Capability,
        }
    }
}

/// What the overview page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverviewPage {
    /// Platform name.
    pub platform: String,
    /// Platform description.
    pub description: String,
    /// The matrix.
    pub overview: Overview,
    /// Number of open tasks.
    pub tasks: usize,
    /// Number of decisions.
    pub decisions: usize,
    /// Design principles.
    pub principles: Vec<mirante_domain::Principle>,
    /// Further prose about the platform.
    pub sections: Vec<mirante_domain::Section>,
}

/// What the sites page shows: each site with its host groups and hosts, and what runs there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SitesPage {
    /// Sites in catalog order.
    pub sites: Vec<SiteView>,
}

/// One site on the sites page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteView {
    /// The site with its host groups.
    pub site: mirante_domain::Site,
    /// Hosts named in the catalog.
    pub hosts: Vec<mirante_domain::Host>,
    /// Items that offer GPUs at the site.
    pub gpu_items: Vec<ItemRef>,
    /// Counts of the site's items per state.
    pub counts: mirante_domain::StateCounts,
}

/// The decisions page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionsPage {
    /// Every decision, in the catalog's order.
    pub decisions: Vec<Decision>,
    /// Where ADRs are read (the platform's `adr_url`).
    pub adr_url: Option<String>,
}

/// One site's page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SitePage {
    /// The site as the sites page shows it.
    pub view: SiteView,
    /// Every item at the site.
    pub items: ItemRows,
}

/// What the catalog list shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemsPage {
    /// The matching items on the page asked for, at most [`PAGE_SIZE`], with every layer of
    /// the catalog (the rows' labels and the filter bar's layers, sent once).
    pub items: ItemRows,
    /// How many items match in all.
    pub total: usize,
    /// The page shown, from 1; a page past the last shows the last.
    pub page: usize,
    /// Sites for the filter bar: id and name.
    pub sites: Vec<(String, String)>,
}

/// One row of the catalog list.
///
/// Up to a page of these travel in every list page's hydration data, so empty fields are left
/// out of the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemRow {
    /// Item id.
    pub id: String,
    /// Item name.
    pub name: String,
    /// State.
    pub state: State,
    /// Qualifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qualifier: Option<Qualifier>,
    /// Site ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sites: Vec<String>,
    /// Layer id; its label is in [`ItemRows::layers`].
    pub layer: String,
    /// First line of the notes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
}

/// The rows of an item table, with the layers they name (each once, for the rows' labels).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ItemRows {
    /// The rows, in the table's order.
    pub rows: std::sync::Arc<[ItemRow]>,
    /// Every layer a row names, each once (the catalog page sends all the catalog's layers
    /// here, which its filter bar lists too).
    pub layers: std::sync::Arc<[LayerRef]>,
    /// The rows written as HTML on the server, once however many times the page's view is
    /// built (`pages::catalog::ItemTable`). Shared by the clones of a page's data; never sent.
    #[cfg(feature = "ssr")]
    #[serde(skip)]
    pub(crate) html: std::sync::Arc<std::sync::OnceLock<std::sync::Arc<str>>>,
}

impl PartialEq for ItemRows {
    fn eq(&self, other: &Self) -> bool {
        self.rows == other.rows && self.layers == other.layers
    }
}

impl Eq for ItemRows {}

impl ItemRows {
    /// Rows with the layers they name.
    pub fn new(rows: Vec<ItemRow>, layers: Vec<LayerRef>) -> Self {
        ItemRows {
            rows: rows.into(),
            layers: layers.into(),
            #[cfg(feature = "ssr")]
            html: std::sync::Arc::default(),
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.rows.len()
    }
}

/// What a layer page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerPage {
    /// The layer.
    pub layer: Layer,
    /// Its parent, for sub-layers.
    pub parent: Option<LayerRef>,
    /// Its sub-layers.
    pub children: Vec<LayerRef>,
    /// Items of the layer and its sub-layers, grouped by sub-layer id.
    pub items: ItemRows,
    /// Pending tasks.
    pub tasks: Vec<Task>,
    /// Names of what the tasks wait for (`after`): id and title.
    pub after_names: Vec<(String, String)>,
    /// Related decisions.
    pub decisions: Vec<Decision>,
    /// Where ADRs are read (the platform's `adr_url`).
    pub adr_url: Option<String>,
    /// Site id → name, for labels.
    pub sites: Vec<(String, String)>,
}

/// What an item page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemPage {
    /// The item.
    pub item: Item,
    /// Its layer.
    pub layer: LayerRef,
    /// Its sites: id and name.
    pub sites: Vec<(String, String)>,
    /// Items it depends on.
    pub depends_on: Vec<ItemRef>,
    /// Items that depend on it.
    pub dependents: Vec<ItemRef>,
    /// Pending tasks that name it.
    pub tasks: Vec<Task>,
    /// Names of what the tasks wait for (`after`): id and title.
    pub after_names: Vec<(String, String)>,
    /// Decisions that shape it.
    pub decisions: Vec<Decision>,
    /// Where ADRs are read (the platform's `adr_url`).
    pub adr_url: Option<String>,
    /// Phase name, when it has one.
    pub phase: Option<String>,
}

/// Query of the catalog list, as it appears in the URL.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListQuery {
    /// Site id.
    pub site: Option<String>,
    /// Layer id.
    pub layer: Option<String>,
    /// State identifier.
    pub state: Option<String>,
    /// Qualifier identifier.
    pub qualifier: Option<String>,
    /// Text search.
    pub q: Option<String>,
    /// Page number, from 1, as typed in the URL (anything else reads as the first page).
    pub page: Option<String>,
}

impl ListQuery {
    /// The domain filter; values the catalog does not know are dropped, so a stale link still
    /// shows a list rather than an error page.
    pub fn to_filter(&self) -> ItemFilter {
        ItemFilter {
            site: self.site.clone().filter(|s| !s.is_empty()),
            layer: self.layer.clone().filter(|s| !s.is_empty()),
            state: self.state.as_deref().and_then(State::parse),
            qualifier: self.qualifier.as_deref().and_then(Qualifier::parse),
            q: self.q.clone().filter(|s| !s.trim().is_empty()),
        }
    }

    /// The page asked for, from 1.
    pub fn page(&self) -> usize {
        self.page
            .as_deref()
            .and_then(|p| p.trim().parse::<usize>().ok())
            .filter(|&p| p > 0)
            .unwrap_or(1)
    }
}

/// Rows on one page of the catalog list.
pub const PAGE_SIZE: usize = 50;

/// How many pages `total` rows fill (one, when there are none).
pub fn page_count(total: usize) -> usize {
    total.div_ceil(PAGE_SIZE).max(1)
}

#[cfg(feature = "ssr")]
fn snapshot() -> Result<std::sync::Arc<mirante_domain::Snapshot>, ServerFnError> {
    use_context::<crate::ssr::PortalHandle>()
        .map(|h| h.snapshot())
        .ok_or_else(|| ServerFnError::new("portal data is not available"))
}

/// Table rows for `items`, in their order, with the layers they name.
#[cfg(feature = "ssr")]
fn item_rows<'a>(
    snap: &mirante_domain::Snapshot,
    items: impl IntoIterator<Item = &'a Item>,
) -> ItemRows {
    let mut layers: Vec<LayerRef> = Vec::new();
    let rows = items
        .into_iter()
        .map(|i| {
            if !layers.iter().any(|l| l.id == i.layer.as_str())
                && let Some(l) = snap.layer(&i.layer)
            {
                layers.push(LayerRef::from(l));
            }
            row(i)
        })
        .collect();
    ItemRows::new(rows, layers)
}

#[cfg(feature = "ssr")]
fn row(i: &Item) -> ItemRow {
    ItemRow {
        id: i.id.to_string(),
        name: i.name.to_string(),
        state: i.state,
        qualifier: i.qualifier,
        sites: i.sites.iter().map(ToString::to_string).collect(),
        layer: i.layer.to_string(),
        summary: i.notes.lines().next().unwrap_or_default().to_string(),
    }
}

/// Titles of the tasks or items that `tasks` wait for.
#[cfg(feature = "ssr")]
fn after_names(snap: &mirante_domain::Snapshot, tasks: &[Task]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for id in tasks.iter().flat_map(|t| t.after.iter()) {
        if out.iter().any(|(known, _)| known == id) {
            continue;
        }
        let title = snap
            .catalog()
            .tasks
            .iter()
            .find(|t| &t.id == id)
            .map(|t| t.title.clone())
            .or_else(|| snap.item(id).map(|i| i.name.to_string()));
        if let Some(title) = title {
            out.push((id.clone(), title));
        }
    }
    out
}

#[cfg(feature = "ssr")]
fn site_names(snap: &mirante_domain::Snapshot) -> Vec<(String, String)> {
    snap.catalog()
        .sites
        .iter()
        .map(|s| (s.id.clone(), s.name.clone()))
        .collect()
}

/// The overview page's data.
#[server(prefix = "/_fn", endpoint = "overview")]
pub async fn get_overview() -> Result<OverviewPage, ServerFnError> {
    crate::ssr::authorize("overview")?;
    let snap = snapshot()?;
    let c = snap.catalog();
    Ok(OverviewPage {
        platform: c.platform.name.clone(),
        description: c.platform.description.clone(),
        overview: snap.overview(),
        tasks: c.tasks.len(),
        decisions: c.decisions.len(),
        principles: c.platform.principles.clone(),
        sections: c.platform.sections.clone(),
    })
}

/// The catalog list's data for a query. JSON in: a URL-encoded body of a query with no filter
/// set is empty, and an empty body does not read back as a `query`.
#[server(prefix = "/_fn", endpoint = "items", input = leptos::server_fn::codec::Json)]
pub async fn list_items(query: ListQuery) -> Result<ItemsPage, ServerFnError> {
    crate::ssr::authorize("items")?;
    let snap = snapshot()?;
    let filter = query.to_filter();
    let mut page = query.page();
    let mut found = snap.page_items(&filter, (page - 1).saturating_mul(PAGE_SIZE), PAGE_SIZE);
    if page > page_count(found.total) {
        // A page past the end (an old link, a shorter list now) shows the last one.
        page = page_count(found.total);
        found = snap.page_items(&filter, (page - 1).saturating_mul(PAGE_SIZE), PAGE_SIZE);
    }
    Ok(ItemsPage {
        items: ItemRows::new(
            found.items.into_iter().map(row).collect(),
            snap.catalog().layers.iter().map(LayerRef::from).collect(),
        ),
        total: found.total,
        page,
        sites: site_names(&snap),
    })
}

/// A layer page's data; `None` when there is no such layer.
#[server(prefix = "/_fn", endpoint = "layer")]
pub async fn get_layer(id: String) -> Result<Option<LayerPage>, ServerFnError> {
    crate::ssr::authorize("layer")?;
    let snap = snapshot()?;
    let Some(layer) = snap.layer(&id) else {
        return Ok(None);
    };
    let filter = ItemFilter {
        layer: Some(id.clone()),
        ..ItemFilter::default()
    };
    let tasks: Vec<Task> = snap.tasks_for_layer(&id).into_iter().cloned().collect();
    Ok(Some(LayerPage {
        layer: layer.clone(),
        parent: layer
            .parent
            .as_deref()
            .and_then(|p| snap.layer(p))
            .map(LayerRef::from),
        children: snap.children(&id).into_iter().map(LayerRef::from).collect(),
        items: item_rows(&snap, snap.filter_items(&filter)),
        after_names: after_names(&snap, &tasks),
        tasks,
        decisions: snap.decisions_for_layer(&id).into_iter().cloned().collect(),
        adr_url: snap.catalog().platform.adr_url.clone(),
        sites: site_names(&snap),
    }))
}

/// An item page's data; `None` when there is no such item.
#[server(prefix = "/_fn", endpoint = "item")]
pub async fn get_item(id: String) -> Result<Option<ItemPage>, ServerFnError> {
    crate::ssr::authorize("item")?;
    let snap = snapshot()?;
    let Some(item) = snap.item(&id) else {
        return Ok(None);
    };
    let layer = snap
        .layer(&item.layer)
        .map(LayerRef::from)
        .ok_or_else(|| ServerFnError::new("item layer missing"))?;
    let tasks: Vec<Task> = snap.tasks_for_item(&id).into_iter().cloned().collect();
    Ok(Some(ItemPage {
        layer,
        sites: item
            .sites
            .iter()
            .map(|s| {
                let name = snap.site(s).map(|x| x.name.clone()).unwrap_or_default();
                (s.to_string(), name)
            })
            .collect(),
        depends_on: item
            .depends_on
            .iter()
            .filter_map(|d| snap.item(d))
            .map(ItemRef::from)
            .collect(),
        dependents: snap
            .dependents(&id)
            .into_iter()
            .map(ItemRef::from)
            .collect(),
        after_names: after_names(&snap, &tasks),
        tasks,
        decisions: snap.decisions_for_item(item).into_iter().cloned().collect(),
        adr_url: snap.catalog().platform.adr_url.clone(),
        phase: item.phase.as_deref().and_then(|p| {
            snap.catalog()
                .phases
                .iter()
                .find(|ph| ph.id == p)
                .map(|ph| ph.name.clone())
        }),
        item: item.clone(),
    }))
}

/// Every decision, in catalog order.
#[server(prefix = "/_fn", endpoint = "decisions")]
pub async fn list_decisions() -> Result<DecisionsPage, ServerFnError> {
    crate::ssr::authorize("decisions")?;
    let snap = snapshot()?;
    Ok(DecisionsPage {
        decisions: snap.catalog().decisions.clone(),
        adr_url: snap.catalog().platform.adr_url.clone(),
    })
}

/// The signed-in user of this request, if any. The server's authentication layer puts a
/// [`Viewer`](mirante_domain::Viewer) in the request's extensions.
#[server(prefix = "/_fn", endpoint = "viewer")]
pub async fn get_viewer() -> Result<Option<mirante_domain::Viewer>, ServerFnError> {
    crate::ssr::authorize("viewer")?;
    Ok(use_context::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<mirante_domain::Viewer>().cloned()))
}

/// Sites with their hosts and GPU capacity.
#[server(prefix = "/_fn", endpoint = "sites")]
pub async fn list_sites() -> Result<SitesPage, ServerFnError> {
    crate::ssr::authorize("sites")?;
    let snap = snapshot()?;
    let c = snap.catalog();
    let sites = c.sites.iter().map(|site| site_view(c, site)).collect();
    Ok(SitesPage { sites })
}

/// One site's page: its card and every item at the site; `None` when there is no such site.
#[server(prefix = "/_fn", endpoint = "site")]
pub async fn get_site(id: String) -> Result<Option<SitePage>, ServerFnError> {
    crate::ssr::authorize("site")?;
    let snap = snapshot()?;
    let c = snap.catalog();
    let Some(site) = c.sites.iter().find(|s| s.id == id) else {
        return Ok(None);
    };
    let filter = ItemFilter {
        site: Some(id.clone()),
        ..ItemFilter::default()
    };
    Ok(Some(SitePage {
        view: site_view(c, site),
        items: item_rows(&snap, snap.filter_items(&filter)),
    }))
}

/// A site with its hosts, the items offering GPUs there and its items' counts per state.
#[cfg(feature = "ssr")]
fn site_view(c: &mirante_domain::Catalog, site: &mirante_domain::Site) -> SiteView {
    let at_site = |i: &&Item| i.sites.iter().any(|s| s == &site.id);
    let mut counts = mirante_domain::StateCounts::default();
    for i in c.items.iter().filter(at_site) {
        counts.add(i.state);
    }
    SiteView {
        site: site.clone(),
        hosts: c
            .hosts
            .iter()
            .filter(|h| h.site == site.id)
            .cloned()
            .collect(),
        gpu_items: c
            .items
            .iter()
            .filter(at_site)
            .filter(|i| !i.gpus.is_empty())
            .map(ItemRef::from)
            .collect(),
        counts,
    }
}

pub mod history;
pub mod roadmap;

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(page: Option<&str>) -> usize {
        ListQuery {
            page: page.map(str::to_string),
            ..ListQuery::default()
        }
        .page()
    }

    #[test]
    fn a_page_that_is_not_a_positive_number_reads_as_the_first() {
        assert_eq!(asked(None), 1);
        assert_eq!(asked(Some("3")), 3);
        assert_eq!(asked(Some(" 2 ")), 2);
        for bad in ["0", "-1", "two", "", "1e3", "99999999999999999999999"] {
            assert_eq!(asked(Some(bad)), 1, "{bad:?}");
        }
    }

    #[test]
    fn the_pages_hold_every_row_and_an_empty_list_has_one_page() {
        assert_eq!(page_count(0), 1);
        assert_eq!(page_count(1), 1);
        assert_eq!(page_count(PAGE_SIZE), 1);
        assert_eq!(page_count(PAGE_SIZE + 1), 2);
        assert_eq!(page_count(10_000), 10_000usize.div_ceil(PAGE_SIZE));
    }

    #[test]
    fn a_row_travels_without_its_empty_fields_and_reads_back_the_same() {
        let bare = ItemRow {
            id: "nfs".into(),
            name: "NFS".into(),
            state: State::Declared,
            qualifier: None,
            sites: Vec::new(),
            layer: "1".into(),
            summary: String::new(),
        };
        let json = serde_json::to_string(&bare).unwrap();
        for absent in ["qualifier", "sites", "summary"] {
            assert!(!json.contains(absent), "{absent} in {json}");
        }
        assert_eq!(serde_json::from_str::<ItemRow>(&json).unwrap(), bare);
        let full = ItemRow {
            qualifier: Some(Qualifier::InProgress),
            sites: vec!["franca".into()],
            summary: "Shared exports".into(),
            ..bare
        };
        let json = serde_json::to_string(&full).unwrap();
        assert_eq!(serde_json::from_str::<ItemRow>(&json).unwrap(), full);
    }

    #[test]
    fn a_top_level_layer_travels_without_parent_or_capability_and_reads_back_the_same() {
        let top = LayerRef {
            id: "l1".into(),
            number: "1".into(),
            name: "Storage".into(),
            parent: None,
            capability: false,
        };
        let json = serde_json::to_string(&top).unwrap();
        assert_eq!(json, r#"{"id":"l1","number":"1","name":"Storage"}"#);
        assert_eq!(serde_json::from_str::<LayerRef>(&json).unwrap(), top);
        let nested = LayerRef {
            parent: Some("l1".into()),
            capability: true,
            ..top
        };
        let json = serde_json::to_string(&nested).unwrap();
        assert_eq!(serde_json::from_str::<LayerRef>(&json).unwrap(), nested);
    }
}
