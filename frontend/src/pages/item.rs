//! An item: state and qualifier, where it runs, why its state is believed, what it needs
//! and what needs it.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;
use mirante_domain::State;

use crate::{
    api::selfservice::get_gpu_capacity,
    api::{ItemRef, get_item},
    components::{DecisionTable, EvidenceView, StateBadge, TaskList, Wait, found},
    i18n::use_i18n,
    pages::history::ItemTimeline,
    pages::selfservice::gpus_free_text,
};

#[component]
fn RefList(items: Vec<ItemRef>) -> impl IntoView {
    let i18n = use_i18n();
    if items.is_empty() {
        return view! { <p class="muted">{i18n.tr("none")}</p> }.into_any();
    }
    view! {
        <ul class="refs">
            {items
                .into_iter()
                .map(|r| {
                    view! {
                        <li>
                            <a href=format!("/items/{}", r.id)>{r.name}</a>
                            " "
                            <StateBadge state=r.state qualifier=r.qualifier/>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

/// `— 0 / 1 GPUs free` after a GPU cluster's GPUs, for a signed-in reader.
#[component]
fn GpusFree(id: String) -> impl IntoView {
    let i18n = use_i18n();
    let data = Resource::new(move || id.clone(), get_gpu_capacity);
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                data.await
                    .ok()
                    .flatten()
                    .map(|c| {
                        view! {
                            <span class="gpus-free">
                                {move || format!(" — {}", gpus_free_text(i18n.lang(), &c))}
                            </span>
                        }
                    })
            })}
        </Suspense>
    }
}

/// The item page.
#[component]
pub fn ItemView() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let data = Resource::new(move || params.get().get("id").unwrap_or_default(), get_item);
    view! {
        {found(Wait::Placeholder, data, move |page| {
            let it = page.item;
            let layer_label = page.layer.label();
            let no_evidence = it.state == State::Validated && it.evidence.is_empty();
            let no_iac = it.state == State::Declared && it.iac.is_none();
            let item_id = it.id.to_string();
            view! {
                <Title text=it.name.to_string()/>
                <nav class="crumbs">
                    <a href="/catalog">{i18n.tr("nav-catalog")}</a>
                    " / "
                    <a href=format!("/layers/{}", page.layer.id)>{layer_label.clone()}</a>
                </nav>
                <header class="page-head">
                    <span class="kicker"><code>{it.id.to_string()}</code></span>
                    <h1>{it.name.to_string()}</h1>
                    <div class="state-line">
                        <StateBadge state=it.state qualifier=it.qualifier/>
                    </div>
                </header>
                // For admins, the change of state and evidence comes first, folded.
                <crate::pages::item_change::ItemChange item=it.clone()/>
                <div class="two-col">
                    <div>
                        {(!it.notes.is_empty())
                            .then(|| view! { <p class="notes big">{it.notes.to_string()}</p> })}
                        {it
                            .reason
                            .clone()
                            .map(|r| {
                                view! {
                                    <div class="callout rejected">
                                        <strong>{i18n.tr("item-reason")}</strong>
                                        " "
                                        {String::from(r)}
                                    </div>
                                }
                            })}
                        {it
                            .criterion
                            .clone()
                            .map(|c| {
                                view! {
                                    <div class="callout deferred">
                                        <strong>{i18n.tr("item-criterion")}</strong>
                                        " "
                                        {String::from(c)}
                                    </div>
                                }
                            })}
                        <h2>{i18n.tr("item-evidence")}</h2>
                        {no_evidence
                            .then(|| {
                                view! {
                                    <div class="callout warn">{i18n.tr("item-no-evidence")}</div>
                                }
                            })}
                        {(!it.evidence.is_empty())
                            .then(|| {
                                view! {
                                    <ul class="evidence-list">
                                        {it
                                            .evidence
                                            .iter()
                                            .cloned()
                                            .map(|e| view! { <EvidenceView evidence=e/> })
                                            .collect_view()}
                                    </ul>
                                }
                            })}
                        {it
                            .iac
                            .clone()
                            .map(|iac| {
                                view! {
                                    <p class="iac">
                                        <span class="badge ev">{i18n.tr("item-iac")}</span>
                                        <code>{String::from(iac.path)}</code>
                                        {iac
                                            .key
                                            .map(|k| view! { " → " <code>{String::from(k)}</code> })}
                                    </p>
                                }
                            })}
                        {no_iac
                            .then(|| {
                                view! { <div class="callout warn">{i18n.tr("item-no-iac")}</div> }
                            })}
                        {(it.state == State::Desired && it.evidence.is_empty() && it.iac.is_none())
                            .then(|| view! { <p class="muted">{i18n.tr("item-desired-nothing")}</p> })}
                        <h2>{i18n.tr("item-depends-on")}</h2>
                        <RefList items=page.depends_on/>
                        <h2>{i18n.tr("item-dependents")}</h2>
                        <RefList items=page.dependents/>
                        <h2>{i18n.tr("tasks-pending")}</h2>
                        <TaskList tasks=page.tasks after_names=page.after_names/>
                    </div>
                    <aside class="card facts">
                        <dl>
                            <dt>{i18n.tr("col-layer")}</dt>
                            <dd>
                                <a href=format!("/layers/{}", page.layer.id)>{layer_label}</a>
                            </dd>
                            <dt>{i18n.tr("col-sites")}</dt>
                            <dd>
                                {if page.sites.is_empty() {
                                    i18n.tr("platform-wide").into_any()
                                } else {
                                    page.sites
                                        .iter()
                                        .map(|(id, name)| {
                                            view! {
                                                <a class="site-tag" href=format!("/sites/{id}")>
                                                    {if name.is_empty() { id.clone() } else { name.clone() }}
                                                </a>
                                            }
                                        })
                                        .collect_view()
                                        .into_any()
                                }}
                            </dd>
                            {(!it.hosts.is_empty())
                                .then(|| {
                                    view! {
                                        <dt>{i18n.tr("item-hosts")}</dt>
                                        <dd>{it.hosts.join(", ")}</dd>
                                    }
                                })}
                            {(!it.gpus.is_empty())
                                .then(|| {
                                    view! {
                                        <dt>{i18n.tr("item-gpus")}</dt>
                                        <dd>
                                            {it
                                                .gpus
                                                .iter()
                                                .map(ToString::to_string)
                                                .collect::<Vec<_>>()
                                                .join(", ")}
                                            <GpusFree id=item_id.clone()/>
                                        </dd>
                                    }
                                })}
                            {page
                                .phase
                                .clone()
                                .map(|p| {
                                    view! {
                                        <dt>{i18n.tr("item-phase")}</dt>
                                        <dd>{p}</dd>
                                    }
                                })}
                            {(!it.tags.is_empty())
                                .then(|| {
                                    view! {
                                        <dt>{i18n.tr("item-tags")}</dt>
                                        <dd>{it.tags.join(", ")}</dd>
                                    }
                                })}
                        </dl>
                    </aside>
                </div>
                <h2>{i18n.tr("nav-decisions")}</h2>
                <DecisionTable decisions=page.decisions adr_url=page.adr_url.clone()/>
                <ItemTimeline id=item_id/>
            }
                .into_any()
        })}
    }
}
