//! Sites: their Proxmox host groups, the hosts the catalog names, and GPU capacity.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;
use mirante_domain::State;

use crate::{
    api::{SiteView, get_site, list_sites},
    components::{StateBadge, Wait, found, loaded, state_key},
    i18n::{t, t_args, use_i18n},
    pages::catalog::ItemTable,
};

/// The sites page: one card per site, each heading a link to the site's page.
#[component]
pub fn SitesPage() -> impl IntoView {
    let i18n = use_i18n();
    let data = Resource::new(|| (), |_| list_sites());
    view! {
        <Title text=move || t(i18n.lang(), "nav-sites")/>
        <h1>{i18n.tr("sites-title")}</h1>
        {loaded(Wait::Placeholder, data, move |page| {
            page.sites
                .into_iter()
                .map(|sv| view! { <SiteCard sv link=true/> })
                .collect_view()
                .into_any()
        })}
    }
}

/// One site's page: its card, then every item at the site.
#[component]
pub fn SitePage() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let data = Resource::new(move || params.get().get("id").unwrap_or_default(), get_site);
    view! {
        {found(Wait::Placeholder, data, move |page| {
            let name = page.view.site.name.clone();
            view! {
                <Title text=name.clone()/>
                <nav class="crumbs">
                    <a href="/sites">{i18n.tr("nav-sites")}</a>
                </nav>
                <header class="page-head">
                    <span class="kicker">{i18n.tr("site-kicker")}</span>
                    <h1>{name}</h1>
                </header>
                <SiteCard sv=page.view link=false/>
                <h2>{i18n.tr("site-items")}</h2>
                <ItemTable items=page.items/>
            }
            .into_any()
        })}
    }
}

/// A site's card: where it is, its items' counts per state (each a link to the filtered
/// catalog), host groups, named hosts with their GPUs, and the items offering GPUs there.
/// With `link`, its name is a heading that links to the site's page; without, the site's own
/// page names it in its heading.
#[component]
fn SiteCard(sv: SiteView, link: bool) -> impl IntoView {
    let i18n = use_i18n();
    let site_id = sv.site.id.clone();
    view! {
        <section class="site-card card" id=format!("site-{}", sv.site.id)>
            <header class="site-head">
                {link
                    .then(|| {
                        view! {
                            <h2>
                                <a href=format!("/sites/{}", sv.site.id)>{sv.site.name.clone()}</a>
                            </h2>
                        }
                    })}
                <span class="muted">{sv.site.location.clone()}</span>
            </header>
            <p class="notes">{sv.site.notes.clone()}</p>
            <div class="site-counts">
                {State::ALL
                    .into_iter()
                    .map(|s| {
                        let href = format!(
                            "/catalog?site={}&state={}",
                            site_id,
                            s.as_str(),
                        );
                        let n = sv.counts.get(s);
                        view! {
                            <a class=format!("count state-{}", s.as_str()) href=href>
                                {n}
                                " "
                                {move || t(i18n.lang(), state_key(s))}
                            </a>
                        }
                    })
                    .collect_view()}
            </div>
            <h3>{i18n.tr("sites-host-groups")}</h3>
            <ul class="host-groups">
                {sv
                    .site
                    .host_groups
                    .iter()
                    .map(|g| {
                        view! {
                            <li>
                                <strong>{g.name.clone()}</strong>
                                " "
                                <code>{g.pattern.clone()}</code>
                                {g
                                    .count
                                    .map(|n| {
                                        view! {
                                            " · "
                                            {move || {
                                                crate::i18n::t_args(
                                                    i18n.lang(),
                                                    "sites-hosts-count",
                                                    &[("count", n.into())],
                                                )
                                            }}
                                        }
                                    })}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
            <h3>{i18n.tr("sites-named-hosts")}</h3>
            <div class="table-wrap">
                <table class="hosts">
                    <thead>
                        <tr>
                            <th>{i18n.tr("sites-host")}</th>
                            <th>{i18n.tr("sites-tier")}</th>
                            <th>{i18n.tr("sites-roles")}</th>
                            <th>{i18n.tr("item-gpus")}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {sv
                            .hosts
                            .iter()
                            .map(|h| {
                                view! {
                                    <tr>
                                        <td>
                                            <code>{h.id.clone()}</code>
                                            {(!h.notes.is_empty())
                                                .then(|| view! { <div class="summary">{h.notes.clone()}</div> })}
                                        </td>
                                        <td>{h.tier.clone().unwrap_or_else(|| "—".into())}</td>
                                        <td>{h.roles.join(", ")}</td>
                                        <td class="host-gpus">
                                            {
                                                let gpus = h.gpus.clone();
                                                move || {
                                                    gpus.iter()
                                                        .map(|g| match g.count {
                                                            Some(_) => g.to_string(),
                                                            None => t_args(
                                                                i18n.lang(),
                                                                "sites-gpu-uncounted",
                                                                &[("model", g.model.clone().into())],
                                                            ),
                                                        })
                                                        .collect::<Vec<_>>()
                                                        .join(", ")
                                                }
                                            }
                                        </td>
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
            {(!sv.gpu_items.is_empty())
                .then(|| {
                    view! {
                        <h3>{i18n.tr("sites-gpu-clusters")}</h3>
                        <ul class="refs">
                            {sv
                                .gpu_items
                                .iter()
                                .map(|r| {
                                    view! {
                                        <li>
                                            <a href=format!("/items/{}", r.id)>{r.name.clone()}</a>
                                            " "
                                            <StateBadge state=r.state qualifier=r.qualifier/>
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    }
                })}
        </section>
    }
}
