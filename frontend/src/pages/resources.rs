//! Resources: what the viewer's requests made (an admin's: everyone's, per cluster), where it
//! is, its state and expiry, and how to reach it.

use leptos::prelude::*;
use leptos_meta::Title;
use mirante_domain::deployment::short;
use mirante_domain::resource::{Deployment, Resource as PortalResource, ResourceState};

use crate::{
    api::selfservice::list_resources,
    components::{Wait, loaded, refresh_while},
    i18n::{t, use_i18n},
};

/// Translation key of a resource state's name.
pub fn resource_state_key(s: ResourceState) -> &'static str {
    match s {
        ResourceState::Pending => "res-state-pending",
        ResourceState::Proposed => "res-state-proposed",
        ResourceState::Merged => "res-state-merged",
        ResourceState::Syncing => "res-state-syncing",
        ResourceState::Live => "res-state-live",
        ResourceState::Degraded => "res-state-degraded",
        ResourceState::Removed => "res-state-removed",
    }
}

/// The resources page.
#[component]
pub fn ResourcesPage() -> impl IntoView {
    let i18n = use_i18n();
    // Followed while a resource is on its way: asked, proposed, merged or being applied.
    let moving = RwSignal::new(None::<bool>);
    let tick = refresh_while(move || moving.get());
    let data = Resource::new(move || tick.get(), |_| list_resources());
    Effect::new(move |_| {
        moving.set(data.get().map(|d| {
            d.is_ok_and(|page| {
                page.rows.iter().any(|r| {
                    matches!(
                        r.state,
                        ResourceState::Pending
                            | ResourceState::Proposed
                            | ResourceState::Merged
                            | ResourceState::Syncing
                    )
                })
            })
        }));
    });
    view! {
        <Title text=move || t(i18n.lang(), "nav-resources")/>
        <header class="page-head">
            <h1>{i18n.tr("res-title")}</h1>
            <p class="lead">
                <a href="/self-service">{i18n.tr("req-new")}</a>
            </p>
        </header>
        {loaded(Wait::Keep, data, move |value| match value {
            page if page.rows.is_empty() => {
                view! { <p class="muted empty-list">{i18n.tr("res-none")}</p> }.into_any()
            }
            page if page.all => {
                // Admins: per cluster, those on no cluster last.
                let mut clusters: Vec<Option<String>> = page
                    .rows
                    .iter()
                    .map(|r| r.cluster.clone())
                    .collect();
                clusters.sort_by_key(|c| (c.is_none(), c.clone()));
                clusters.dedup();
                view! {
                    <p class="lead muted">{i18n.tr("res-all")}</p>
                    {clusters
                        .into_iter()
                        .map(|cluster| {
                            let rows: Vec<PortalResource> = page
                                .rows
                                .iter()
                                .filter(|r| r.cluster == cluster)
                                .cloned()
                                .collect();
                            let heading = cluster.clone();
                            view! {
                                <section class="resource-group" data-cluster=cluster.clone()>
                                    <h2>
                                        {match heading {
                                            Some(c) => view! { <a href=format!("/items/{c}")>{c.clone()}</a> }.into_any(),
                                            None => view! { <span>{i18n.tr("res-no-cluster")}</span> }.into_any(),
                                        }}
                                    </h2>
                                    <ResourceList rows/>
                                </section>
                            }
                        })
                        .collect_view()}
                }
                    .into_any()
            }
            page => {
                view! {
                    <p class="lead muted">{i18n.tr("res-mine")}</p>
                    <ResourceList rows=page.rows/>
                }
                    .into_any()
            }
        })}
    }
}

/// Resources as cards: what, where, state, expiry and how to reach it.
#[component]
fn ResourceList(rows: Vec<PortalResource>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <ul class="resource-list">
            {rows
                .into_iter()
                .map(|r| {
                    let state = r.state;
                    view! {
                        <li class="resource card" data-id=r.id data-state=state.as_str()>
                            <div class="resource-head">
                                <a class="item-name" href=format!("/requests/{}", r.id)>
                                    {r.namespace.clone().unwrap_or_else(|| r.target.clone())}
                                </a>
                                <span class=format!("badge res-state res-{}", state.as_str()) data-state=state.as_str()>
                                    {move || t(i18n.lang(), resource_state_key(state))}
                                </span>
                            </div>
                            <dl class="resource-facts">
                                <dt>{i18n.tr("res-template")}</dt>
                                <dd><code>{r.template.clone()}</code></dd>
                                <dt>{i18n.tr("res-owner")}</dt>
                                <dd>{r.owner.clone()}</dd>
                                {r.cluster.clone().map(|c| view! {
                                    <dt>{i18n.tr("res-cluster")}</dt>
                                    <dd><a href=format!("/items/{c}")>{c.clone()}</a></dd>
                                })}
                                <dt>{i18n.tr("res-folder")}</dt>
                                <dd><code class="wrap">{r.target.clone()}</code></dd>
                                <dt>{i18n.tr("res-expires")}</dt>
                                <dd>{r.expires.clone().unwrap_or_else(|| "—".to_owned())}</dd>
                                <dt>{i18n.tr("res-requests")}</dt>
                                <dd>
                                    {r.requests
                                        .iter()
                                        .map(|id| view! { <a class="request-link" href=format!("/requests/{id}")>{format!("#{id}")}</a>" " })
                                        .collect_view()}
                                </dd>
                            </dl>
                            {r.deployment.clone().map(|d| view! { <DeploymentFacts d/> })}
                            {r
                                .note
                                .clone()
                                .filter(|n| r.deployment.as_ref().and_then(Deployment::note).as_ref() != Some(n))
                                .map(|n| view! { <p class="muted note">{n}</p> })}
                            {match r.access.clone() {
                                Some(access) => view! {
                                    <div class="resource-access">
                                        <h3>{i18n.tr("res-access")}</h3>
                                        {access.readme.map(|f| view! {
                                            <p class="muted">{i18n.tr("res-readme")}" "<code class="wrap">{f}</code></p>
                                        })}
                                        {access.host.map(|h| view! {
                                            <p class="access-host">{i18n.tr("res-host")}" "<code>{h}</code></p>
                                        })}
                                        {access.secret.map(|s| view! {
                                            <p class="access-secret">{i18n.tr("res-secret")}" "<code>{s}</code></p>
                                        })}
                                        <pre class="commands"><code>{access.commands.join("\n")}</code></pre>
                                        {access.kubeconfig.map(|k| view! {
                                            <details class="kubeconfig">
                                                <summary>{i18n.tr("res-kubeconfig")}</summary>
                                                <p class="muted">{i18n.tr("res-kubeconfig-help")}</p>
                                                <pre><code>{k}</code></pre>
                                            </details>
                                        })}
                                    </div>
                                }.into_any(),
                                None => view! {
                                    <p class="muted">{move || t(i18n.lang(), next_key(state))}</p>
                                }.into_any(),
                            }}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}

/// A merged resource's deployment: the Argo CD application and revision, and what Argo CD
/// said or why the portal cannot tell, in the reader's language (Argo CD's own words as
/// they came).
#[component]
fn DeploymentFacts(d: Deployment) -> impl IntoView {
    let i18n = use_i18n();
    if !d.followed {
        return view! {
            <p class="muted note deployment" data-deployment="not-followed">{i18n.tr("res-deploy-not-followed")}</p>
        }
        .into_any();
    }
    let said = match (d.error.clone(), d.message.clone()) {
        (Some(e), _) => Some(view! {
            <p class="note error" data-deployment="error">{i18n.tr("res-deploy-error")}" "{e}</p>
        }.into_any()),
        (None, Some(m)) => Some(view! {
            <p class="note" data-deployment="message">{i18n.tr("res-deploy-says")}" "{m}</p>
        }.into_any()),
        (None, None) if d.checked_at.is_none() => Some(view! {
            <p class="muted note" data-deployment="waiting">{i18n.tr("res-deploy-waiting")}</p>
        }.into_any()),
        (None, None) => None,
    };
    view! {
        <div class="deployment">
            {d.application.clone().map(|app| view! {
                <p class="muted">
                    {i18n.tr("res-deploy-app")}" "<code>{app}</code>
                    {d.revision.clone().map(|rev| view! { " "{i18n.tr("res-deploy-at")}" "<code>{short(&rev).to_owned()}</code> })}
                </p>
            })}
            {said}
        </div>
    }
    .into_any()
}

/// What the owner waits for while a resource has no way in yet.
fn next_key(s: ResourceState) -> &'static str {
    match s {
        ResourceState::Pending => "res-next-pending",
        ResourceState::Proposed => "res-next-proposed",
        ResourceState::Removed => "res-next-removed",
        _ => "res-next-merged",
    }
}
