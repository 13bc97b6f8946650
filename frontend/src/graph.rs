//! The dependency graph as an SVG document, drawn on the server from the domain's layered
//! layout: one column per dependency depth, left to right; nodes coloured by state, dashed when
//! blocked; the critical path to a chosen item drawn heavier. In the graph page a node is a
//! link that chooses it as the target of the critical path; in the SVG served alone
//! (`/roadmap/graph.svg`) it links to its item.
//!
//! The same drawing is served alone and inline in the graph page, so it reads without
//! JavaScript and carries its own styles.

use std::fmt::Write as _;

use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use mirante_domain::roadmap::{LayeredGraph, Status};

use crate::{
    components::status_key,
    i18n::{Lang, t, t_args},
};

/// Width of a node box.
const NODE_W: usize = 190;
/// Height of a node box.
const NODE_H: usize = 34;
/// Horizontal distance between columns (node plus gap for the edges).
const COL_W: usize = 250;
/// Vertical distance between rows.
const ROW_H: usize = 48;
/// Margin around the drawing.
const MARGIN: usize = 16;
/// Where a node's link leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeLinks {
    /// To the item's page (the SVG served alone).
    Item,
    /// To the graph page with the item as the critical path's target (the graph page).
    PathTo,
}

/// Characters of a name shown in a node; longer names are cut, the full name is the tooltip.
const LABEL_CHARS: usize = 26;

fn label(name: &str) -> String {
    if name.chars().count() <= LABEL_CHARS {
        name.to_owned()
    } else {
        let mut s: String = name.chars().take(LABEL_CHARS - 1).collect();
        s.push('…');
        s
    }
}

fn x(column: usize) -> usize {
    MARGIN + column * COL_W
}

fn y(row: usize) -> usize {
    MARGIN + row * ROW_H
}

const STYLE: &str = "\
.edge{fill:none;stroke:#9aa3ad;stroke-width:1.4}\
.edge.path{stroke:#c2410c;stroke-width:3}\
.node rect{stroke-width:1.5;rx:6;ry:6}\
.node text{font:12px system-ui,-apple-system,'Segoe UI',sans-serif;fill:#111}\
.node:hover rect{stroke-width:3}\
.node:focus{outline:none}\
.node:focus-visible rect{stroke:#1c2430;stroke-width:4}\
.arrow path{fill:#9aa3ad}\
.arrow-crit path{fill:#c2410c}\
.s-validated rect{fill:#e5f5ec;stroke:#17703d}\
.s-declared rect{fill:#fff3dc;stroke:#8a5300}\
.s-desired rect{fill:#ececfd;stroke:#4d4dc9}\
.blocked rect{stroke-dasharray:5 3}\
.node.path rect{stroke:#c2410c;stroke-width:3.5}\
";

/// Arrowheads at the end of edges: one grey, one for the critical path.
const ARROWS: &str = "<defs>\
<marker id=\"arrow\" class=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0L10 5L0 10z\"/></marker>\
<marker id=\"arrow-path\" class=\"arrow-crit\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
markerWidth=\"5\" markerHeight=\"5\" orient=\"auto\"><path d=\"M0 0L10 5L0 10z\"/></marker>\
</defs>";

/// The drawing's title in `lang`: the whole graph, or the critical path to the item named `to`.
pub fn title(lang: Lang, to: Option<&str>) -> String {
    match to {
        Some(name) => t_args(
            lang,
            "graph-svg-title-to",
            &[("name", name.to_owned().into())],
        ),
        None => t(lang, "roadmap-graph-title"),
    }
}

/// The SVG document of a laid-out graph. `title` names the drawing for assistive technology;
/// the nodes' tooltips name their status in `lang`.
pub fn render(graph: &LayeredGraph, title: &str, lang: Lang, links: NodeLinks) -> String {
    let width = 2 * MARGIN + graph.columns.saturating_sub(1) * COL_W + NODE_W;
    let height = 2 * MARGIN + graph.rows.saturating_sub(1) * ROW_H + NODE_H;
    let mut s = String::with_capacity(256 + graph.nodes.len() * 400);
    // Writing to a String cannot fail.
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"dep-graph\" role=\"group\" \
         width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" \
         aria-label=\"{}\"><title>{}</title><style>{STYLE}</style>{ARROWS}",
        attr(title),
        text(title)
    );
    // Edges under nodes; the highlighted ones last so they are on top.
    let mut edges: Vec<_> = graph.edges.iter().collect();
    edges.sort_by_key(|e| e.on_path);
    for e in edges {
        let (a, b) = (&graph.nodes[e.from], &graph.nodes[e.to]);
        let (x1, y1) = (x(a.column) + NODE_W, y(a.row) + NODE_H / 2);
        let (x2, y2) = (x(b.column), y(b.row) + NODE_H / 2);
        let mid = (x1 + x2) / 2;
        let _ = write!(
            s,
            "<path class=\"edge{}\" d=\"M{x1} {y1} C{mid} {y1} {mid} {y2} {x2} {y2}\" \
             marker-end=\"url(#{})\"/>",
            if e.on_path { " path" } else { "" },
            if e.on_path { "arrow-path" } else { "arrow" }
        );
    }
    for n in &graph.nodes {
        let mut class = format!("node s-{}", n.state.as_str());
        if n.status == Status::Blocked {
            class += " blocked";
        }
        if n.on_path {
            class += " path";
        }
        let (nx, ny) = (x(n.column), y(n.row));
        let _ = write!(
            s,
            "<a class=\"{class}\" href=\"{}{}\" data-id=\"{}\">\
             <title>{} ({}, {})</title>\
             <rect x=\"{nx}\" y=\"{ny}\" width=\"{NODE_W}\" height=\"{NODE_H}\"/>\
             <text x=\"{}\" y=\"{}\">{}</text></a>",
            match links {
                NodeLinks::Item => "/items/",
                NodeLinks::PathTo => "/roadmap/graph?to=",
            },
            attr(&n.id),
            attr(&n.id),
            text(&n.name),
            text(&n.id),
            text(&t(lang, status_key(n.status))),
            nx + 10,
            ny + NODE_H / 2 + 4,
            text(&label(&n.name)),
        );
    }
    s += "</svg>";
    s
}

#[cfg(test)]
mod tests {
    use mirante_domain::State;
    use mirante_domain::roadmap::{GraphEdge, GraphNode};

    use super::*;

    fn node(id: &str, name: &str, column: usize, row: usize, on_path: bool) -> GraphNode {
        GraphNode {
            id: id.into(),
            name: name.into(),
            state: State::Desired,
            status: Status::Blocked,
            column,
            row,
            on_path,
        }
    }

    #[test]
    fn nodes_link_to_their_items_and_text_is_escaped() {
        let g = LayeredGraph {
            nodes: vec![
                node("a", "Cilium <ClusterMesh> & \"friends\"", 0, 0, true),
                node("b", "B", 1, 0, true),
            ],
            edges: vec![GraphEdge {
                from: 0,
                to: 1,
                on_path: true,
            }],
            columns: 2,
            rows: 1,
        };

        let svg = render(&g, "Graph <1>", Lang::En, NodeLinks::Item);
        let page = render(&g, "Graph <1>", Lang::En, NodeLinks::PathTo);

        assert!(svg.contains("href=\"/items/a\""), "{svg}");
        assert!(
            page.contains("href=\"/roadmap/graph?to=a\""),
            "in the page a node chooses the target: {page}"
        );
        assert!(
            svg.contains("Cilium &lt;ClusterMesh&gt; &amp; \"friends\""),
            "{svg}"
        );
        assert!(!svg.contains("<ClusterMesh>"));
        assert!(svg.contains("aria-label=\"Graph &lt;1&gt;\""), "{svg}");
        assert!(svg.contains("class=\"edge path\""));
        // Edges end in arrowheads; the drawing is a group of links, not an image.
        assert!(svg.contains("marker-end=\"url(#arrow-path)\""), "{svg}");
        assert!(svg.contains("role=\"group\""), "{svg}");
        assert!(svg.contains("class=\"node s-desired blocked path\""));
        // Two columns: margins, one column step, one node.
        assert!(svg.contains("width=\"472\""), "{svg}");
    }

    #[test]
    fn long_names_are_cut_with_an_ellipsis() {
        assert_eq!(label("short"), "short");
        let long = "Estratégia de replicação cross-site entre Franca e SP";
        let cut = label(long);
        assert_eq!(cut.chars().count(), LABEL_CHARS);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn the_title_and_the_nodes_status_are_in_the_readers_language() {
        let g = LayeredGraph {
            nodes: vec![node("a", "Cilium", 0, 0, false)],
            edges: Vec::new(),
            columns: 1,
            rows: 1,
        };

        // Fluent may wrap placeables in Unicode isolation marks.
        let plain = |s: String| s.replace(['\u{2068}', '\u{2069}'], "");
        let pt = plain(render(
            &g,
            &title(Lang::PtBr, Some("Cilium")),
            Lang::PtBr,
            NodeLinks::Item,
        ));
        let en = plain(render(
            &g,
            &title(Lang::En, None),
            Lang::En,
            NodeLinks::Item,
        ));

        assert!(
            pt.contains("<title>Grafo de dependências, caminho crítico até Cilium</title>"),
            "{pt}"
        );
        assert!(pt.contains("(a, bloqueado)"), "{pt}");
        assert!(en.contains("<title>Dependency graph</title>"), "{en}");
        assert!(en.contains("(a, blocked)"), "{en}");
    }
}
