//! The roadmap outside the UI: `/roadmap.md` and `/roadmap.csv` for reports, the dependency
//! graph as a file (`/roadmap/graph.svg`), and status badges (`/badge/items/{id}.svg`) for
//! READMEs and wikis.
//!
//! They read the catalog like the pages do (`Access::Catalog`: public with
//! `MIRANTE_PUBLIC_CATALOG=true`, otherwise for signed-in users), so a badge embedded in a
//! page outside the portal shows only where the catalog is public; see ADR 0008.

use std::fmt::Write as _;

use askama::Template;
use axum::{
    Router,
    extract::{Path, Query, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use mirante_domain::{
    Snapshot, State as ItemState,
    roadmap::{Blocker, Roadmap, Status, layered_graph, percent},
};
use serde::Deserialize;

use mirante_frontend::{
    components::{priority_key, qualifier_key, state_key, status_key},
    i18n::{FluentValue, Lang, from_headers, t, t_args},
};

use crate::http::state::AppState;

/// How long clients and caches may keep a badge or an export.
const MAX_AGE_SECS: u32 = 300;

/// The export routes.
pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/roadmap.md", get(markdown))
        .route("/roadmap.csv", get(csv_export))
        .route("/roadmap/graph.svg", get(graph_svg))
        .route("/badge/items/{file}", get(badge))
}

/// `Cache-Control` for catalog data: shared caches may keep it only when the catalog is public.
fn cache_control(state: &AppState) -> HeaderValue {
    let scope = if state.config.public_catalog {
        "public"
    } else {
        "private"
    };
    HeaderValue::from_str(&format!("{scope}, max-age={MAX_AGE_SECS}"))
        .unwrap_or(HeaderValue::from_static("private, max-age=300"))
}

/// The snapshot's fingerprint as an entity tag; a suffix tells apart representations that
/// share a URL but not a body (the graph with and without a highlighted path).
fn etag(snapshot: &Snapshot, suffix: &str) -> String {
    format!("\"{}{suffix}\"", snapshot.hash)
}

fn not_modified(headers: &HeaderMap, tag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"))
}

fn respond(
    state: &AppState,
    headers: &HeaderMap,
    status: StatusCode,
    content_type: &'static str,
    tag: Option<String>,
    body: String,
    disposition: Option<&'static str>,
) -> Response {
    let mut out = HeaderMap::new();
    out.insert(header::CACHE_CONTROL, cache_control(state));
    // The Markdown and the graph are written in the reader's language (cookie, then
    // Accept-Language).
    out.insert(
        header::VARY,
        HeaderValue::from_static("Accept-Language, Cookie"),
    );
    if let Some(tag) = &tag {
        if let Ok(v) = HeaderValue::from_str(tag) {
            out.insert(header::ETAG, v);
        }
        if not_modified(headers, tag) {
            return (StatusCode::NOT_MODIFIED, out).into_response();
        }
    }
    out.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(d) = disposition {
        out.insert(header::CONTENT_DISPOSITION, HeaderValue::from_static(d));
    }
    (status, out, body).into_response()
}

/// Escapes text for a Markdown table cell: characters that would format, link or end the cell.
fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

fn blockers(list: &[Blocker]) -> Vec<&str> {
    list.iter().map(|b| b.id.as_str()).collect()
}

/// The roadmap as Markdown in `lang`: phases with progress and items, pending tasks, progress
/// per site and layer. Ids and links stay as they are; labels are the UI's.
pub(crate) fn render_markdown(snapshot: &Snapshot, base_url: &str, lang: Lang) -> String {
    // Fluent's Unicode isolation marks help browsers lay out mixed-direction text; in a
    // Markdown file they are stray characters.
    let t_args = |lang, key: &str, args: &[(&'static str, FluentValue<'static>)]| {
        t_args(lang, key, args).replace(['\u{2068}', '\u{2069}'], "")
    };
    let r = Roadmap::of(snapshot);
    let c = snapshot.catalog();
    let mut s = String::new();
    let tr = |key: &str| t(lang, key);
    let share = |k: mirante_domain::StateCounts| {
        let total = k.validated + k.declared + k.desired;
        t_args(
            lang,
            "roadmap-share",
            &[
                ("pct", percent(k.validated, total).into()),
                ("validated", k.validated.into()),
                ("declared", k.declared.into()),
                ("desired", k.desired.into()),
                ("total", total.into()),
            ],
        )
    };
    let hash = &snapshot.hash[..snapshot.hash.len().min(8)];
    let catalog = match snapshot.revision.as_deref() {
        Some(rev) => t_args(
            lang,
            "md-catalog-at",
            &[
                ("hash", hash.to_owned().into()),
                ("revision", md(rev).into()),
            ],
        ),
        None => t_args(lang, "md-catalog", &[("hash", hash.to_owned().into())]),
    };
    // Writing to a String cannot fail.
    let _ = writeln!(
        s,
        "# {}\n",
        t_args(
            lang,
            "md-title",
            &[("platform", md(&c.platform.name).into())]
        )
    );
    let _ = writeln!(s, "{catalog} {}\n", tr("md-legend"));
    let _ = writeln!(
        s,
        "{}\n",
        t_args(
            lang,
            "md-overall",
            &[("share", share(r.progress.totals).into())]
        )
    );
    for ph in &r.phases {
        let name = if ph.id.is_empty() {
            tr("roadmap-unphased")
        } else {
            md(&ph.name)
        };
        let _ = writeln!(s, "## {name}\n");
        if !ph.description.is_empty() {
            let _ = writeln!(s, "{}\n", md(&ph.description));
        }
        let _ = writeln!(s, "{}\n", share(ph.counts));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |\n|---|---|---|---|",
            tr("md-col-status"),
            tr("md-col-item"),
            tr("md-col-state"),
            tr("md-col-blocked-by"),
        );
        for id in &ph.items {
            let Some(it) = r.item(id) else { continue };
            let state = tr(state_key(it.state)).to_lowercase();
            let state = match it.qualifier {
                Some(q) => format!("{state} ({})", tr(qualifier_key(q))),
                None => state,
            };
            let _ = writeln!(
                s,
                "| {} | [{}]({base_url}/items/{}) | {state} | {} |",
                tr(status_key(it.status)),
                md(&it.name),
                it.id,
                md(&blockers(&it.blocked_by).join(", "))
            );
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "## {}\n\n| {} | {} | {} | {} | {} |\n|---|---|---|---|---|",
        tr("roadmap-tasks"),
        tr("md-col-priority"),
        tr("md-col-task"),
        tr("md-col-sites"),
        tr("md-col-status"),
        tr("md-col-blocked-by"),
    );
    for task in &r.tasks {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            task.priority
                .map(|p| tr(priority_key(p)))
                .unwrap_or_default(),
            md(&task.title),
            md(&task.sites.join(", ")),
            tr(status_key(task.status)),
            md(&blockers(&task.blocked_by).join(", "))
        );
    }
    for (title, rows) in [
        ("roadmap-progress-sites", &r.progress.sites),
        ("roadmap-progress-layers", &r.progress.layers),
    ] {
        let _ = writeln!(
            s,
            "\n## {}\n\n| | {} |\n|---|---|",
            tr(title),
            tr("md-col-progress")
        );
        for p in rows {
            let name = if p.id.is_empty() {
                tr("matrix-platform-wide").to_lowercase()
            } else {
                md(&p.name)
            };
            let _ = writeln!(s, "| {name} | {} |", share(p.counts));
        }
    }
    s
}

async fn markdown(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let snapshot = state.catalog.snapshot();
    let lang = from_headers(&headers);
    let body = render_markdown(&snapshot, &state.config.public_url(), lang);
    respond(
        &state,
        &headers,
        StatusCode::OK,
        "text/markdown; charset=utf-8",
        Some(etag(&snapshot, &format!("-{}", lang.tag()))),
        body,
        Some("inline; filename=\"roadmap.md\""),
    )
}

/// The roadmap's items as CSV, one row per item, with a header row.
pub(crate) fn render_csv(snapshot: &Snapshot) -> Result<String, csv::Error> {
    let r = Roadmap::of(snapshot);
    let phase_name = |id: &Option<String>| {
        id.as_deref()
            .and_then(|p| r.phases.iter().find(|x| x.id == p))
            .map(|p| p.name.clone())
            .unwrap_or_default()
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "id",
        "name",
        "layer",
        "sites",
        "state",
        "qualifier",
        "phase",
        "status",
        "depends_on",
        "blocked_by",
    ])?;
    for it in &r.items {
        w.write_record([
            it.id.as_str(),
            it.name.as_str(),
            it.layer.as_str(),
            &it.sites.join(" "),
            it.state.as_str(),
            it.qualifier.map_or("", |q| q.as_str()),
            &phase_name(&it.phase),
            it.status.as_str(),
            &it.depends_on.join(" "),
            &blockers(&it.blocked_by).join(" "),
        ])?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).unwrap_or_default())
}

async fn csv_export(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let snapshot = state.catalog.snapshot();
    match render_csv(&snapshot) {
        Ok(body) => respond(
            &state,
            &headers,
            StatusCode::OK,
            "text/csv; charset=utf-8",
            Some(etag(&snapshot, "")),
            body,
            Some("attachment; filename=\"roadmap.csv\""),
        ),
        Err(error) => {
            tracing::error!(%error, "cannot write the roadmap as CSV");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// `?to=ITEM` on the graph.
#[derive(Debug, Deserialize)]
struct GraphQuery {
    #[serde(default)]
    to: Option<String>,
}

async fn graph_svg(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<GraphQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else {
        return (StatusCode::BAD_REQUEST, "only `to` is accepted").into_response();
    };
    let snapshot = state.catalog.snapshot();
    let to = query.to.as_deref().filter(|t| !t.is_empty());
    let target = to.and_then(|t| snapshot.item(t));
    if to.is_some() && target.is_none() {
        return (StatusCode::NOT_FOUND, "no such item").into_response();
    }
    let roadmap = Roadmap::of(&snapshot);
    let graph = layered_graph(&snapshot, &roadmap, target.map(|i| i.id.as_str()));
    let lang = from_headers(&headers);
    let title = mirante_frontend::graph::title(lang, target.map(|i| &*i.name));
    let suffix = format!(
        "{}-{}",
        target.map(|i| format!("-{}", i.id)).unwrap_or_default(),
        lang.tag()
    );
    respond(
        &state,
        &headers,
        StatusCode::OK,
        "image/svg+xml",
        Some(etag(&snapshot, &suffix)),
        mirante_frontend::graph::render(
            &graph,
            &title,
            lang,
            mirante_frontend::graph::NodeLinks::Item,
        ),
        None,
    )
}

#[derive(Template)]
#[template(path = "roadmap/badge.svg")]
struct Badge<'a> {
    label: &'a str,
    message: &'a str,
    color: &'a str,
    width: u32,
    label_width: u32,
    message_width: u32,
    label_x: u32,
    message_x: u32,
}

/// Approximate width of `text` in 11px Verdana: wide enough for the longest ids, no font
/// metrics needed.
fn text_width(text: &str) -> u32 {
    let chars = u32::try_from(text.chars().count()).unwrap_or(u32::MAX / 8);
    chars.saturating_mul(7).saturating_add(10)
}

/// A badge's SVG; `None` if the template fails.
pub(crate) fn render_badge(label: &str, message: &str, color: &str) -> Option<String> {
    let label_width = text_width(label);
    let message_width = text_width(message);
    Badge {
        label,
        message,
        color,
        width: label_width + message_width,
        label_width,
        message_width,
        label_x: label_width / 2,
        message_x: label_width + message_width / 2,
    }
    .render()
    .map_err(|error| tracing::error!(%error, "cannot render a badge"))
    .ok()
}

/// Colour of a state, the portal's own.
fn state_color(state: ItemState, status: Status) -> &'static str {
    match (state, status) {
        (ItemState::Validated, _) => "#1f8a4c",
        (ItemState::Declared, _) => "#b76e00",
        (ItemState::Desired, Status::Blocked) => "#8a8a9e",
        (ItemState::Desired, _) => "#5b5bd6",
    }
}

async fn badge(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(file): Path<String>,
) -> Response {
    let snapshot = state.catalog.snapshot();
    let id = file.strip_suffix(".svg");
    let item = id.and_then(|id| snapshot.item(id));
    let Some(item) = item else {
        // Still an image, so a broken reference shows as such where it is embedded.
        let body = render_badge("item", "not found", "#9f9f9f").unwrap_or_default();
        return respond(
            &state,
            &headers,
            StatusCode::NOT_FOUND,
            "image/svg+xml",
            None,
            body,
            None,
        );
    };
    let roadmap = Roadmap::of(&snapshot);
    let status = roadmap.item(&item.id).map_or(Status::Blocked, |r| r.status);
    let message = match item.qualifier {
        Some(q) => format!("{} · {}", item.state.as_str(), q.as_str()),
        None => item.state.as_str().to_owned(),
    };
    match render_badge(&item.id, &message, state_color(item.state, status)) {
        Some(body) => respond(
            &state,
            &headers,
            StatusCode::OK,
            "image/svg+xml",
            Some(etag(&snapshot, "")),
            body,
            None,
        ),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_cells_cannot_break_the_table_or_format() {
        assert_eq!(md("a|b"), "a\\|b");
        assert_eq!(md("*bold* [x](y)\nnext"), "\\*bold\\* \\[x\\](y) next");
        assert_eq!(md("<script>"), "\\<script\\>");
    }

    #[test]
    fn badge_text_is_xml_escaped() {
        let svg = render_badge("a<b>&\"c\"", "validated", "#1f8a4c").unwrap();

        assert!(
            svg.contains("a&#60;b&#62;&#38;&#34;c&#34;")
                || svg.contains("a&lt;b&gt;&amp;&quot;c&quot;"),
            "{svg}"
        );
        assert!(!svg.contains("a<b>"));
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    }
}
