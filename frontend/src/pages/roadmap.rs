//! The roadmap: phases with their progress and items, progress per site and layer, pending
//! tasks by priority; and the dependency graph with the critical path to a chosen item.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;
use mirante_domain::{
    State, StateCounts,
    roadmap::{Blocker, BlockerKind, Progress, Roadmap, RoadmapItem, Status, percent},
};

use crate::{
    api::roadmap::{get_roadmap, get_roadmap_graph},
    components::{PriorityBadge, StateBadge, Wait, loaded, state_key, status_key},
    i18n::{t, t_args, use_i18n},
    pages::history::BurnupSection,
};

/// A chip naming the status.
#[component]
fn StatusChip(status: Status) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <span class=format!("status status-{}", status.as_str())>
            {move || t(i18n.lang(), status_key(status))}
        </span>
    }
}

/// A bar split by state, with the validated share in words.
#[component]
pub fn ProgressBar(counts: StateCounts) -> impl IntoView {
    let i18n = use_i18n();
    let total = counts.total();
    let pct = percent(counts.validated, total);
    let summary = move || {
        t_args(
            i18n.lang(),
            "roadmap-share",
            &[
                ("pct", pct.into()),
                ("validated", counts.validated.into()),
                ("declared", counts.declared.into()),
                ("desired", counts.desired.into()),
                ("total", total.into()),
            ],
        )
    };
    view! {
        <div class="progress">
            <div class="progress-bar" role="img" aria-label=summary>
                {State::ALL
                    .into_iter()
                    .filter(|s| counts.get(*s) > 0)
                    .map(|s| {
                        let style = format!("flex-grow:{}", counts.get(s));
                        let n = counts.get(s);
                        view! {
                            <span
                                class=format!("seg state-{}", s.as_str())
                                style=style
                                title=move || format!("{n} {}", t(i18n.lang(), state_key(s)))
                            ></span>
                        }
                    })
                    .collect_view()}
            </div>
            <span class="progress-text">{summary}</span>
        </div>
    }
    .into_any()
}

/// What stands in an item's or task's way, as links (tasks as text: they have no page).
#[component]
fn Blockers(blockers: Vec<Blocker>, roadmap: StoredValue<Roadmap>) -> impl IntoView {
    let i18n = use_i18n();
    let name = move |b: &Blocker| {
        roadmap
            .with_value(|r| match b.kind {
                BlockerKind::Item => r.item(&b.id).map(|i| i.name.clone()),
                BlockerKind::Task => r.task(&b.id).map(|t| t.title.clone()),
            })
            .unwrap_or_else(|| b.id.clone())
    };
    view! {
        <span class="blocked-by">
            <span class="muted">{i18n.tr("roadmap-blocked-by")}</span>
            " "
            {blockers
                .into_iter()
                .enumerate()
                .map(|(n, b)| {
                    let label = name(&b);
                    let via = (b.via != b.id)
                        .then(|| {
                            let via_id = b.via.clone();
                            let via_name = roadmap
                                .with_value(|r| {
                                    r.item(&via_id)
                                        .map(|i| i.name.clone())
                                        .or_else(|| r.task(&via_id).map(|t| t.title.clone()))
                                })
                                .unwrap_or(via_id);
                            move || t_args(i18n.lang(), "roadmap-via", &[("name", via_name.clone().into())])
                        });
                    let indirect = via.is_some();
                    view! {
                        {(n > 0).then_some(", ")}
                        <span class:indirect=indirect>
                            {match b.kind {
                                BlockerKind::Item => {
                                    view! { <a href=format!("/items/{}", b.id)>{label}</a> }.into_any()
                                }
                                BlockerKind::Task => view! { <span class="task-ref">{label}</span> }.into_any(),
                            }}
                            {via.map(|v| view! { " " <span class="via">"(" {v} ")"</span> })}
                        </span>
                    }
                        .into_any()
                })
                .collect_view()}
        </span>
    }
}

#[component]
fn ItemLine(item: RoadmapItem, roadmap: StoredValue<Roadmap>) -> impl IntoView {
    let blocked = !item.blocked_by.is_empty();
    view! {
        <li class=format!("rm-item rm-{}", item.status.as_str())>
            <StatusChip status=item.status/>
            <a class="rm-name" href=format!("/items/{}", item.id)>{item.name.clone()}</a>
            <StateBadge state=item.state qualifier=item.qualifier/>
            {blocked.then(|| view! { <Blockers blockers=item.blocked_by.clone() roadmap/> }.into_any())}
        </li>
    }
    .into_any()
}

#[component]
fn ProgressTable(title: &'static str, rows: Vec<Progress>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <section class="card progress-card">
            <h2>{i18n.tr(title)}</h2>
            <table class="progress-table">
                <tbody>
                    {rows
                        .into_iter()
                        .map(|p| {
                            let name = if p.id.is_empty() {
                                view! { <span class="muted">{i18n.tr("platform-wide")}</span> }.into_any()
                            } else {
                                view! { <span>{p.name.clone()}</span> }.into_any()
                            };
                            view! {
                                <tr>
                                    <th scope="row">{name}</th>
                                    <td><ProgressBar counts=p.counts/></td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </section>
    }
}

/// The roadmap page.
#[component]
pub fn RoadmapView() -> impl IntoView {
    let i18n = use_i18n();
    let data = Resource::new(|| (), |_| get_roadmap());
    view! {
        <Title text=move || t(i18n.lang(), "nav-roadmap")/>
        <header class="page-head">
            <h1>{i18n.tr("roadmap-title")}</h1>
            <p class="lead">{i18n.tr("roadmap-lead")}</p>
            <p class="actions">
                <a class="button" href="/roadmap/graph">{i18n.tr("roadmap-graph-link")}</a>
                <a class="button subtle" href="/roadmap.md" rel="external" download="">
                    {i18n.tr("roadmap-export-md")}
                </a>
                <a class="button subtle" href="/roadmap.csv" rel="external" download="">
                    {i18n.tr("roadmap-export-csv")}
                </a>
            </p>
        </header>
        <BurnupSection/>
        {loaded(Wait::Placeholder, data, move |page| {
            let layer_name = {
                let layers = page.layers.clone();
                move |id: &str| {
                    layers
                        .iter()
                        .find(|(l, _)| l == id)
                        .map_or_else(|| id.to_owned(), |(_, n)| n.clone())
                }
            };
            let site_name = {
                let sites = page.roadmap.progress.sites.clone();
                move |id: &str| {
                    sites
                        .iter()
                        .find(|p| p.id == id)
                        .map_or_else(|| id.to_owned(), |p| p.name.clone())
                }
            };
            let rm = page.roadmap;
            let phases = rm.phases.clone();
            let tasks = rm.tasks.clone();
            let progress = rm.progress.clone();
            let roadmap = StoredValue::new(rm);
            view! {
                <section class="phases">
                    <h2>{i18n.tr("roadmap-phases")}</h2>
                    {phases
                        .into_iter()
                        .map(|ph| {
                            let heading = if ph.id.is_empty() {
                                view! { {i18n.tr("roadmap-unphased")} }.into_any()
                            } else {
                                view! { {ph.name.clone()} }.into_any()
                            };
                            let items: Vec<RoadmapItem> = roadmap
                                .with_value(|r| {
                                    ph.items
                                        .iter()
                                        .filter_map(|id| r.item(id).cloned())
                                        .collect()
                                });
                            view! {
                                <article class="card phase" id=format!("phase-{}", ph.id)>
                                    <h3>{heading}</h3>
                                    {(!ph.description.is_empty())
                                        .then(|| view! { <p class="muted">{ph.description.clone()}</p> })}
                                    <ProgressBar counts=ph.counts/>
                                    <ul class="rm-items">
                                        {items
                                            .into_iter()
                                            .map(|item| view! { <ItemLine item roadmap/> })
                                            .collect_view()}
                                    </ul>
                                </article>
                            }
                                .into_any()
                        })
                        .collect_view()}
                </section>
                <div class="progress-grid">
                    {view! { <ProgressTable title="roadmap-progress-sites" rows=progress.sites/> }.into_any()}
                    {view! { <ProgressTable title="roadmap-progress-layers" rows=progress.layers/> }.into_any()}
                </div>
                <section class="rm-tasks">
                    <h2>{i18n.tr("roadmap-tasks")}</h2>
                    <p class="muted">{i18n.tr("roadmap-tasks-lead")}</p>
                    <div class="table-wrap">
                        <table class="list">
                            <thead>
                                <tr>
                                    <th scope="col">{i18n.tr("roadmap-col-priority")}</th>
                                    <th scope="col">{i18n.tr("roadmap-col-task")}</th>
                                    <th scope="col">{i18n.tr("col-sites")}</th>
                                    <th scope="col">{i18n.tr("col-layer")}</th>
                                    <th scope="col">{i18n.tr("roadmap-col-status")}</th>
                                </tr>
                            </thead>
                            <tbody>
                                {tasks
                                    .into_iter()
                                    .map(|task| {
                                        let sites = if task.sites.is_empty() {
                                            view! { <span class="muted">{i18n.tr("platform-wide")}</span> }.into_any()
                                        } else {
                                            task.sites
                                                .iter()
                                                .map(|s| site_name(s))
                                                .collect::<Vec<_>>()
                                                .join(", ")
                                                .into_any()
                                        };
                                        let blocked = !task.blocked_by.is_empty();
                                        view! {
                                            <tr id=format!("task-{}", task.id)>
                                                <td><PriorityBadge priority=task.priority/></td>
                                                <td>{task.title.clone()}</td>
                                                <td>{sites}</td>
                                                <td>
                                                    <a href=format!("/layers/{}", task.layer)>{layer_name(&task.layer)}</a>
                                                </td>
                                                <td>
                                                    <StatusChip status=task.status/>
                                                    {blocked.then(|| view! { " " <Blockers blockers=task.blocked_by.clone() roadmap/> }.into_any())}
                                                </td>
                                            </tr>
                                        }
                                            .into_any()
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                    </div>
                </section>
            }
                .into_any()
        })}
    }
}

/// The dependency graph page; `?to=ITEM` highlights the critical path to the item.
#[component]
pub fn RoadmapGraphView() -> impl IntoView {
    let i18n = use_i18n();
    let query = use_query_map();
    let data = Resource::new(
        move || query.get().get("to").unwrap_or_default(),
        get_roadmap_graph,
    );
    view! {
        <Title text=move || t(i18n.lang(), "roadmap-graph-title")/>
        <nav class="crumbs">
            <a href="/roadmap">{i18n.tr("nav-roadmap")}</a>
        </nav>
        <header class="page-head">
            <h1>{i18n.tr("roadmap-graph-title")}</h1>
            <p class="lead">{i18n.tr("roadmap-graph-lead")}</p>
        </header>
        {loaded(Wait::Placeholder, data, move |page| {
            let selected = page.to.as_ref().map(|r| r.id.clone()).unwrap_or_default();
            view! {
                <form class="graph-form" method="get" action="/roadmap/graph">
                    <label for="graph-to">{i18n.tr("roadmap-graph-to")}</label>
                    <select id="graph-to" name="to">
                        <option value="" selected=selected.is_empty()>
                            {i18n.tr("roadmap-graph-none")}
                        </option>
                        {page
                            .choices
                            .iter()
                            .map(|(id, name)| {
                                view! {
                                    <option value=id.clone() selected=*id == selected>
                                        {name.clone()}
                                    </option>
                                }
                            })
                            .collect_view()}
                    </select>
                    <button type="submit">{i18n.tr("roadmap-graph-show")}</button>
                </form>
                {page
                    .unknown
                    .then(|| view! { <div class="callout warn">{i18n.tr("roadmap-graph-unknown")}</div> })}
                {(!page.path.is_empty())
                    .then(|| {
                        view! {
                            <p class="critical-path">
                                <strong>{i18n.tr("roadmap-graph-path")}</strong>
                                " "
                                {page
                                    .path
                                    .iter()
                                    .enumerate()
                                    .map(|(n, r)| {
                                        view! {
                                            {(n > 0).then_some(" → ")}
                                            <a href=format!("/items/{}", r.id)>{r.name.clone()}</a>
                                        }
                                    })
                                    .collect_view()}
                            </p>
                        }
                    })}
                <ul class="legend graph-legend">
                    {State::ALL
                        .into_iter()
                        .map(|s| view! { <li><StateBadge state=s/></li> })
                        .collect_view()}
                    <li class="legend-blocked">{i18n.tr("roadmap-graph-legend-blocked")}</li>
                    <li class="legend-path">{i18n.tr("roadmap-graph-legend-path")}</li>
                </ul>
                <div class="graph-wrap" inner_html=page.svg></div>
                <p class="muted">
                    {i18n.tr("roadmap-graph-note")}
                    " "
                    <a href=format!("/roadmap/graph.svg{}", if selected.is_empty() { String::new() } else { format!("?to={selected}") }) rel="external">
                        "SVG"
                    </a>
                </p>
            }
                .into_any()
        })}
    }
}
