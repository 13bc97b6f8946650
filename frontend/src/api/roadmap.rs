//! Server functions of the roadmap, graph and findings pages.

use leptos::prelude::*;
use mirante_domain::{lint::Finding, roadmap::Roadmap};
use serde::{Deserialize, Serialize};

use super::ItemRef;

/// What the roadmap page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoadmapPage {
    /// Phases, items, tasks and progress.
    pub roadmap: Roadmap,
    /// Every layer's id and label (`1 · Storage`), for tasks and items in sub-layers.
    pub layers: Vec<(String, String)>,
}

/// What the graph page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphPage {
    /// The SVG markup, drawn on the server.
    pub svg: String,
    /// The item whose critical path is highlighted.
    pub to: Option<ItemRef>,
    /// The critical path to it, first dependency first.
    pub path: Vec<ItemRef>,
    /// Whether `to` named no item.
    pub unknown: bool,
    /// Items that can be chosen (id, name), in catalog order.
    pub choices: Vec<(String, String)>,
}

/// What the findings page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingsPage {
    /// Errors first, then warnings, then information.
    pub findings: Vec<Finding>,
    /// Names of the items named, by id.
    pub names: Vec<(String, String)>,
}

/// The roadmap page's data.
#[server(prefix = "/_fn", endpoint = "roadmap")]
pub async fn get_roadmap() -> Result<RoadmapPage, ServerFnError> {
    crate::ssr::authorize("roadmap")?;
    let snap = super::snapshot()?;
    Ok(RoadmapPage {
        roadmap: Roadmap::of(&snap),
        layers: snap
            .catalog()
            .layers
            .iter()
            .map(|l| {
                (
                    l.id.clone(),
                    mirante_domain::layer_label(&l.number, &l.name),
                )
            })
            .collect(),
    })
}

/// The graph page's data; `to` (an item id, or empty) selects the highlighted critical path.
#[server(prefix = "/_fn", endpoint = "roadmap_graph")]
pub async fn get_roadmap_graph(to: String) -> Result<GraphPage, ServerFnError> {
    crate::ssr::authorize("roadmap_graph")?;
    use mirante_domain::roadmap::{critical_path, layered_graph};

    let snap = super::snapshot()?;
    let roadmap = Roadmap::of(&snap);
    let to = Some(to.trim()).filter(|t| !t.is_empty());
    let target = to.and_then(|t| snap.item(t));
    let graph = layered_graph(&snap, &roadmap, target.map(|i| i.id.as_str()));
    // The drawing's own text is in the reader's language.
    let lang = use_context::<http::request::Parts>().map_or(crate::i18n::Lang::En, |p| {
        crate::i18n::from_headers(&p.headers)
    });
    let title = crate::graph::title(lang, target.map(|i| &*i.name));
    let path = target
        .and_then(|i| critical_path(&snap, &i.id))
        .unwrap_or_default()
        .iter()
        .filter_map(|id| snap.item(id))
        .map(ItemRef::from)
        .collect();
    Ok(GraphPage {
        svg: crate::graph::render(&graph, &title, lang, crate::graph::NodeLinks::PathTo),
        to: target.map(ItemRef::from),
        path,
        unknown: to.is_some() && target.is_none(),
        choices: snap
            .catalog()
            .items
            .iter()
            .map(|i| (i.id.to_string(), i.name.to_string()))
            .collect(),
    })
}

/// The findings page's data (admins; the access policy keeps others out).
#[server(prefix = "/_fn", endpoint = "findings")]
pub async fn get_findings() -> Result<FindingsPage, ServerFnError> {
    crate::ssr::authorize("findings")?;
    let portal = use_context::<crate::ssr::PortalHandle>()
        .ok_or_else(|| ServerFnError::new("portal data is not available"))?;
    let snap = portal.snapshot();
    // The lint may read the monorepo's files.
    let findings = tokio_blocking(move || portal.findings()).await?;
    let names = super::dashboard::finding_names(&snap, &findings);
    Ok(FindingsPage { findings, names })
}

#[cfg(feature = "ssr")]
async fn tokio_blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ServerFnError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ServerFnError::new(format!("the lint did not finish: {e}")))
}
