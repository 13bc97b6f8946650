//! A layer or capability: its role, components, items, pending tasks and decisions.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::{
    api::get_layer,
    components::{DecisionTable, PriorityBadge, TaskList, Wait, found},
    i18n::{t_args, use_i18n},
    pages::catalog::ItemTable,
};

/// The layer page.
#[component]
pub fn LayerView() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let data = Resource::new(
        move || params.get().get("id").unwrap_or_default(),
        get_layer,
    );
    view! {
        {found(Wait::Placeholder, data, move |page| {
            let l = page.layer;
            let (number, name) = (l.number.clone(), l.name.clone());
            let title = move || {
                if number.is_empty() {
                    name.clone()
                } else {
                    t_args(
                        i18n.lang(),
                        "layer-heading",
                        &[("number", number.clone().into()), ("name", name.clone().into())],
                    )
                }
            };
            let capability = l.kind == mirante_domain::LayerKind::Capability;
            view! {
                <Title text=l.name.clone()/>
                <nav class="crumbs">
                    <a href="/">{i18n.tr("nav-overview")}</a>
                    {page
                        .parent
                        .map(|p| {
                            view! {
                                " / "
                                <a href=format!("/layers/{}", p.id)>
                                    {p.label()}
                                </a>
                            }
                        })}
                </nav>
                <header class="page-head">
                    <span class="kicker">
                        {if capability {
                            i18n.tr("layer-kind-capability").into_any()
                        } else {
                            i18n.tr("layer-kind-layer").into_any()
                        }}
                    </span>
                    <h1>{title}</h1>
                    <PriorityBadge priority=l.priority/>
                </header>
                <div class="two-col">
                    <div>
                        {(!l.role.is_empty())
                            .then(|| {
                                view! {
                                    <h2>{i18n.tr("layer-role")}</h2>
                                    <p>{l.role.clone()}</p>
                                }
                            })}
                        {(!l.rationale.is_empty())
                            .then(|| {
                                view! {
                                    <h2>{i18n.tr("layer-rationale")}</h2>
                                    <p>{l.rationale.clone()}</p>
                                }
                            })}
                        {(!l.notes.is_empty())
                            .then(|| view! { <p class="notes">{l.notes.clone()}</p> })}
                        {l
                            .sections
                            .iter()
                            .map(|s| {
                                view! {
                                    <h3>{s.title.clone()}</h3>
                                    <ul class="section-list">
                                        {s
                                            .entries
                                            .iter()
                                            .map(|e| view! { <li>{e.clone()}</li> })
                                            .collect_view()}
                                    </ul>
                                }
                            })
                            .collect_view()}
                    </div>
                    // A layer with no components and no sub-layers has nothing for the card.
                    <aside class="card" hidden=l.components.is_empty() && page.children.is_empty()>
                        {(!l.components.is_empty())
                            .then(|| {
                                view! {
                                    <h2>{i18n.tr("layer-components")}</h2>
                                    <ul class="components">
                                        {l
                                            .components
                                            .iter()
                                            .map(|c| view! { <li>{c.clone()}</li> })
                                            .collect_view()}
                                    </ul>
                                }
                            })}
                        {(!page.children.is_empty())
                            .then(|| {
                                view! {
                                    <h2>{i18n.tr("layer-children")}</h2>
                                    <ul>
                                        {page
                                            .children
                                            .iter()
                                            .map(|c| {
                                                view! {
                                                    <li>
                                                        <a href=format!(
                                                            "/layers/{}",
                                                            c.id,
                                                        )>{c.label()}</a>
                                                    </li>
                                                }
                                            })
                                            .collect_view()}
                                    </ul>
                                }
                            })}
                    </aside>
                </div>
                <h2>{i18n.tr("layer-items")}</h2>
                <ItemTable items=page.items/>
                <h2>{i18n.tr("tasks-pending")}</h2>
                <TaskList tasks=page.tasks after_names=page.after_names/>
                <h2>{i18n.tr("nav-decisions")}</h2>
                <DecisionTable decisions=page.decisions adr_url=page.adr_url.clone()/>
            }
                .into_any()
        })}
    }
}
