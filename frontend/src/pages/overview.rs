//! The home page: the overview (layers × sites, counts per state, the legend), with the
//! dashboard above it for admins.

use leptos::prelude::*;
use leptos_meta::Title;
use mirante_domain::{State, StateCounts};

use crate::{
    api::get_overview,
    components::{Legend, Wait, loaded, state_key},
    i18n::{t, use_i18n},
    pages::dashboard::{Dashboard, dashboard_resource},
};

/// Counts of one cell, as three coloured numbers linking to the filtered list.
#[component]
fn Cell(counts: StateCounts, href_base: String) -> impl IntoView {
    let i18n = use_i18n();
    if counts.total() == 0 {
        return view! { <td class="cell empty">"·"</td> }.into_any();
    }
    view! {
        <td class="cell">
            <div class="cell-bar" aria-hidden="true">
                {State::ALL
                    .into_iter()
                    .filter(|s| counts.get(*s) > 0)
                    .map(|s| {
                        let style = format!("flex-grow:{}", counts.get(s));
                        view! { <span class=format!("seg state-{}", s.as_str()) style=style></span> }
                    })
                    .collect_view()}
            </div>
            <div class="cell-counts">
                {State::ALL
                    .into_iter()
                    .filter(|s| counts.get(*s) > 0)
                    .map(|s| {
                        let href = format!("{href_base}&state={}", s.as_str());
                        let n = counts.get(s);
                        view! {
                            <a
                                class=format!("count state-{}", s.as_str())
                                href=href
                                title=move || format!("{n} {}", t(i18n.lang(), state_key(s)))
                            >
                                {n}
                            </a>
                        }
                    })
                    .collect_view()}
            </div>
        </td>
    }
    .into_any()
}

/// The overview page.
#[component]
pub fn OverviewView() -> impl IntoView {
    let i18n = use_i18n();
    let data = Resource::new(|| (), |_| get_overview());
    let dashboard = dashboard_resource();
    view! {
        <Title text=move || t(i18n.lang(), "nav-overview")/>
        {loaded(Wait::Placeholder, data, move |page| {
            let totals = page.overview.totals;
            let sites = page.overview.sites.clone();
            let site_heads = sites.clone();
            view! {
                <section class="hero">
                    <h1>{page.platform.clone()}</h1>
                    <p class="lead">{page.description.clone()}</p>
                </section>
                <Dashboard data=dashboard/>
                <section class="totals" aria-label=i18n.tr("totals-label")>
                    {State::ALL
                        .into_iter()
                        .map(|s| {
                            view! {
                                <a
                                    class=format!("total-card state-{}", s.as_str())
                                    href=format!("/catalog?state={}", s.as_str())
                                >
                                    <span class="total-n">{totals.get(s)}</span>
                                    <span class="total-label">
                                        {move || t(i18n.lang(), state_key(s))}
                                    </span>
                                </a>
                            }
                        })
                        .collect_view()}
                    <a class="total-card neutral" href="/decisions">
                        <span class="total-n">{page.decisions}</span>
                        <span class="total-label">{i18n.tr("nav-decisions")}</span>
                    </a>
                    <div class="total-card neutral">
                        <span class="total-n">{page.tasks}</span>
                        <span class="total-label">{i18n.tr("tasks-pending")}</span>
                    </div>
                </section>
                <Legend/>
                <section class="matrix-section">
                    <h2>{i18n.tr("matrix-title")}</h2>
                    <div class="table-wrap">
                        <table class="matrix">
                            <thead>
                                <tr>
                                    <th scope="col">{i18n.tr("matrix-layer")}</th>
                                    {site_heads
                                        .into_iter()
                                        .map(|(_, name)| view! { <th scope="col">{name}</th> })
                                        .collect_view()}
                                    <th scope="col">{i18n.tr("matrix-platform-wide")}</th>
                                    <th scope="col">{i18n.tr("matrix-total")}</th>
                                </tr>
                            </thead>
                            <tbody>
                                {page
                                    .overview
                                    .rows
                                    .into_iter()
                                    .map(|row| {
                                        let base = format!("/catalog?layer={}", row.layer);
                                        let capability = row.kind
                                            == mirante_domain::LayerKind::Capability;
                                        let label = mirante_domain::layer_label(&row.number, &row.name);
                                        let sites = sites.clone();
                                        view! {
                                            <tr class:capability=capability>
                                                <th scope="row">
                                                    <a href=format!("/layers/{}", row.layer)>{label}</a>
                                                </th>
                                                {row
                                                    .per_site
                                                    .into_iter()
                                                    .zip(sites)
                                                    .map(|(c, (site, _))| {
                                                        view! {
                                                            <Cell counts=c href_base=format!("{base}&site={site}")/>
                                                        }
                                                    })
                                                    .collect_view()}
                                                <Cell counts=row.platform_wide href_base=base.clone()/>
                                                <Cell counts=row.total href_base=base/>
                                            </tr>
                                        }
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                    </div>
                    <p class="muted small">{i18n.tr("matrix-note")}</p>
                </section>
                {(!page.principles.is_empty())
                    .then(|| {
                        view! {
                            <section class="principles">
                                <h2>{i18n.tr("principles-title")}</h2>
                                <div class="principle-grid">
                                    {page
                                        .principles
                                        .iter()
                                        .map(|p| {
                                            view! {
                                                <div class="principle card">
                                                    <h3>{p.title.clone()}</h3>
                                                    <p>{p.text.clone()}</p>
                                                </div>
                                            }
                                        })
                                        .collect_view()}
                                </div>
                            </section>
                        }
                    })}
                {page
                    .sections
                    .iter()
                    .map(|sec| {
                        view! {
                            <section class="platform-section">
                                <h2>{sec.title.clone()}</h2>
                                <ul class="section-list">
                                    {sec
                                        .entries
                                        .iter()
                                        .map(|e| view! { <li>{e.clone()}</li> })
                                        .collect_view()}
                                </ul>
                            </section>
                        }
                    })
                    .collect_view()}
            }
                .into_any()
        })}
    }
}
