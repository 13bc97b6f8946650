//! Resources: what the viewer's requests made (an admin's: everyone's, per cluster), where it
//! is, its state and expiry, and how to reach it.

use leptos::{form::ActionForm, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};
use mirante_domain::deployment::short;
use mirante_domain::request::Action;
use mirante_domain::resource::{
    Deployment, Resource as PortalResource, ResourceState, TemplateUpdate,
};
use mirante_domain::selfservice::{ParamType, Parameter};

use crate::{
    api::selfservice::{
        AskOnResource, Refusal, ResourcePageData, ResourcePreviewPage, get_resource,
        list_resources, preview_resource_request,
    },
    components::{Wait, found, loaded, page_title, refresh_while},
    i18n::{t, t_args, use_i18n},
    pages::selfservice::{DiffLines, PreviewSummary, field_error_text, query_pairs},
};

/// The parameter an extension changes.
const DAYS: &str = "days";

/// Translation key of a resource state's name.
pub fn resource_state_key(s: ResourceState) -> &'static str {
    match s {
        ResourceState::Pending => "res-state-pending",
        ResourceState::Proposed => "res-state-proposed",
        ResourceState::Merged => "res-state-merged",
        ResourceState::Syncing => "res-state-syncing",
        ResourceState::Live => "res-state-live",
        ResourceState::Degraded => "res-state-degraded",
        ResourceState::Removing => "res-state-removing",
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
                                <a class="item-name" href=format!("/resources/{}", r.id)>
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
        ResourceState::Removing => "res-next-removing",
        ResourceState::Removed => "res-next-removed",
        _ => "res-next-merged",
    }
}

/// A resource's page: its card, and for its owner or an admin the forms that ask to extend,
/// update or remove it, each a request of its own.
#[component]
pub fn ResourcePage() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let id = move || params.get().get("id").and_then(|s| s.parse::<i64>().ok());
    let data = Resource::new(id, |id| async move {
        match id {
            Some(id) => get_resource(id).await,
            None => Ok(None),
        }
    });
    view! {
        {found(Wait::Keep, data, move |page| view! { <ResourceBody page/> }.into_any())}
        <Title text=page_title(move || {
            t_args(i18n.lang(), "res-page-title", &[("id", id().unwrap_or_default().to_string().into())])
        })/>
    }
}

#[component]
fn ResourceBody(page: ResourcePageData) -> impl IntoView {
    let i18n = use_i18n();
    let r = page.resource.clone();
    let name = r.namespace.clone().unwrap_or_else(|| r.target.clone());
    let change = page.may_change.then(|| {
        view! {
            <section class="card day-two" aria-labelledby="day-two-title">
                <h2 id="day-two-title">{i18n.tr("res-change")}</h2>
                <p class="muted">{i18n.tr("res-change-help")}</p>
                <ChangeForms page=page.clone()/>
            </section>
        }
    });
    view! {
        <nav class="crumbs">
            <a href="/resources">{i18n.tr("nav-resources")}</a>
            " / "
            <span>{name.clone()}</span>
        </nav>
        <header class="page-head">
            <span class="kicker">{format!("#{} · ", r.id)}<code>{r.template.clone()}</code></span>
            <h1>{name}</h1>
        </header>
        {page.open_request.map(|open| view! {
            <p class="callout open-request">
                {i18n.tr("res-open-request")}" "
                <a class="request-link" href=format!("/requests/{open}")>{format!("#{open}")}</a>
            </p>
        })}
        <ResourceList rows=vec![r]/>
        {page.update.clone().map(|update| view! { <UpdateCard update page=page.clone()/> })}
        {change}
    }
}

/// The update a changed template offers: the versions, each file's diff against the base
/// branch, and for whoever may change the resource, one button that proposes it (with inputs
/// for the parameters the new version asks for, if any).
#[component]
fn UpdateCard(update: TemplateUpdate, page: ResourcePageData) -> impl IntoView {
    let i18n = use_i18n();
    let from = page
        .template_version
        .clone()
        .unwrap_or_else(|| "—".to_owned());
    let to = update.version.clone();
    let needs: Vec<Parameter> = page
        .form
        .as_ref()
        .map(|f| {
            f.manifest
                .parameters
                .iter()
                .filter(|p| update.needs.contains(&p.name))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let approval = page
        .form
        .as_ref()
        .is_some_and(|f| f.manifest.needs_approval(Action::Update, None));
    let propose = page.may_change.then(|| {
        view! {
            <form class="day-two-form upgrade-form" method="get" action=preview_url(page.resource.id)>
                <input type="hidden" name="kind" value="update"/>
                {(!needs.is_empty()).then(|| view! { <p>{i18n.tr("res-upgrade-needs")}</p> })}
                {needs
                    .into_iter()
                    .map(|p| {
                        let field = format!("upgrade-{}", p.name);
                        let title = p.title.clone();
                        let number = matches!(p.kind, ParamType::Integer | ParamType::Number);
                        view! {
                            <label for=field.clone()>{move || title.get(i18n.lang().tag()).to_owned()}</label>
                            <input
                                id=field
                                type=if number { "number" } else { "text" }
                                name=format!("values[{}]", p.name)
                                required=true
                            />
                        }
                    })
                    .collect_view()}
                <p class="muted">
                    {if approval { i18n.tr("res-update-approval") } else { i18n.tr("res-update-no-approval") }}
                </p>
                <button type="submit" class="button primary upgrade">{i18n.tr("res-upgrade-button")}</button>
            </form>
        }
    });
    view! {
        <section class="card update-available" aria-labelledby="update-title" data-version=update.version.clone()>
            <h2 id="update-title">{i18n.tr("res-update-available")}</h2>
            <p class="update-versions">
                {move || t_args(i18n.lang(), "res-update-versions", &[("from", from.clone().into()), ("to", to.clone().into())])}
            </p>
            <div class="files">
                {update
                    .files
                    .into_iter()
                    .map(|f| view! {
                        <details class="file" data-path=f.path.clone()>
                            <summary><code class="path">{f.path.clone()}</code></summary>
                            <DiffLines diff=f.diff/>
                        </details>
                    })
                    .collect_view()}
            </div>
            {propose}
        </section>
    }
}

/// The three day-two forms of a resource: extend (when its template sets an expiry), update
/// its numbers, remove it after a confirmation naming the folder.
#[component]
fn ChangeForms(page: ResourcePageData) -> impl IntoView {
    let i18n = use_i18n();
    let Some(form) = page.form.clone() else {
        return ().into_any();
    };
    let id = page.resource.id;
    let target = page.resource.target.clone();
    let fields = page.fields.clone();
    let current = move |name: &str| field_of(&fields, name);
    let action = preview_url(id);
    let hidden = move |kind: &'static str| view! { <input type="hidden" name="kind" value=kind/> };
    let days = form.manifest.parameter(DAYS).cloned();
    let numbers: Vec<Parameter> = form
        .manifest
        .parameters
        .iter()
        .filter(|p| matches!(p.kind, ParamType::Integer | ParamType::Number) && p.name != DAYS)
        .cloned()
        .collect();
    let approval = form.manifest.needs_approval(Action::Update, None);
    let over = form.manifest.day_two.extend_approval_over_days;
    let extend_help = move || match over {
        Some(n) => t_args(i18n.lang(), "res-extend-help-over", &[("days", n.into())]),
        None => t(i18n.lang(), "res-extend-help"),
    };
    let extend = days.map(|p| {
        let current = current.clone();
        let max = p.maximum.map(|m| m.to_string());
        let max_text = max.clone().unwrap_or_else(|| "—".to_owned());
        view! {
            <form class="day-two-form extend-form" method="get" action=action.clone()>
                {hidden("extend")}
                <h3>{i18n.tr("res-extend")}</h3>
                <label for="extend-days">
                    {move || t_args(i18n.lang(), "res-extend-days", &[("max", max_text.clone().into())])}
                </label>
                <input
                    id="extend-days"
                    type="number"
                    name="values[days]"
                    min=p.minimum.map(|m| m.to_string())
                    max=max
                    value=current(DAYS)
                    required=true
                />
                <p class="muted">{extend_help}</p>
                <button type="submit" class="button primary extend">{i18n.tr("res-extend-button")}</button>
            </form>
        }
    });
    let update = (!numbers.is_empty()).then(|| {
        let current = current.clone();
        view! {
            <form class="day-two-form update-form" method="get" action=action.clone()>
                {hidden("update")}
                <h3>{i18n.tr("res-update")}</h3>
                {numbers
                    .into_iter()
                    .map(|p| {
                        let field = format!("update-{}", p.name);
                        let title = p.title.clone();
                        view! {
                            <label for=field.clone()>{move || title.get(i18n.lang().tag()).to_owned()}</label>
                            <input
                                id=field
                                type="number"
                                name=format!("values[{}]", p.name)
                                min=p.minimum.map(|m| m.to_string())
                                max=p.maximum.map(|m| m.to_string())
                                step=(p.kind == ParamType::Number).then_some("any")
                                value=current(&p.name)
                            />
                        }
                    })
                    .collect_view()}
                <p class="muted">
                    {if approval { i18n.tr("res-update-approval") } else { i18n.tr("res-update-no-approval") }}
                </p>
                <button type="submit" class="button primary update">{i18n.tr("res-update-button")}</button>
            </form>
        }
    });
    let remove = view! {
        <div class="day-two-form remove-part">
            <h3>{i18n.tr("res-remove")}</h3>
            <details class="remove-confirm">
                <summary class="button danger remove-open">{i18n.tr("res-remove-open")}</summary>
                <form class="remove-form" method="get" action=action.clone()>
                    {hidden("remove")}
                    <p class="remove-what">
                        {move || t_args(i18n.lang(), "res-remove-what", &[("target", target.clone().into())])}
                    </p>
                    <button type="submit" class="button danger remove">{i18n.tr("res-remove-button")}</button>
                </form>
            </details>
        </div>
    };
    view! { <div class="day-two-forms">{extend}{update}{remove}</div> }.into_any()
}

/// The value a resource's field holds now, as the form shows it.
fn field_of(fields: &[(String, String)], name: &str) -> Option<String> {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// What every day-two form sends besides its values: the resource, the kind of request, the
/// session's token and the form's idempotency key.
fn hidden_fields(id: i64, kind: &'static str, csrf: &str, key: &str) -> impl IntoView + use<> {
    let (csrf, key) = (csrf.to_owned(), key.to_owned());
    view! {
        <input type="hidden" name="id" value=id/>
        <input type="hidden" name="kind" value=kind/>
        <input type="hidden" name="csrf_token" value=csrf/>
        <input type="hidden" name="request_key" value=key/>
    }
}

/// Where a resource's day-two forms go first: the preview of what they would propose.
fn preview_url(id: i64) -> String {
    format!("/resources/{id}/preview")
}

/// The `values[<parameter>]` fields of a day-two form's query, by parameter name.
fn value_fields(pairs: &[(String, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .filter_map(|(k, v)| {
            let name = k.strip_prefix("values[")?.strip_suffix(']')?;
            Some((name.to_owned(), v.clone()))
        })
        .collect()
}

/// Translation key of a day-two request's kind, as the forms name it.
fn kind_key(kind: &str) -> &'static str {
    match kind {
        "extend" => "req-action-extend",
        "remove" => "req-action-remove",
        _ => "req-action-update",
    }
}

/// A day-two request's preview: every file it would write or delete with its diff against
/// the base branch and whether an admin approves it, then submit or go back to the resource.
#[component]
pub fn ResourcePreviewView() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let query = use_query_map();
    let data = Resource::new(
        move || {
            (
                params.get().get("id").and_then(|s| s.parse::<i64>().ok()),
                query_pairs(&query.get()),
            )
        },
        |(id, pairs)| async move {
            let Some(id) = id else {
                return Ok(None);
            };
            let kind = pairs
                .iter()
                .find(|(k, _)| k == "kind")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            preview_resource_request(id, kind, value_fields(&pairs)).await
        },
    );
    view! {
        <Title text=move || t(i18n.lang(), "ss-step-preview")/>
        {found(Wait::Placeholder, data, move |p| view! { <ResourcePreviewBody p/> }.into_any())}
    }
}

#[component]
fn ResourcePreviewBody(p: ResourcePreviewPage) -> impl IntoView {
    let i18n = use_i18n();
    let ask = ServerAction::<AskOnResource>::new();
    let r = p.page.resource.clone();
    let name = r.namespace.clone().unwrap_or_else(|| r.target.clone());
    let back = format!("/resources/{}", r.id);
    let what = kind_key(&p.kind);
    let refused = move || {
        ask.value().get().and_then(|answer| match answer {
            Ok(Some(m)) => Some(m),
            Err(e) => Some(e.to_string()),
            Ok(None) => None,
        })
    };
    let body = match p.outcome {
        Err(Refusal::Refused(m)) => view! {
            <div class="error-box" role="alert">{m}</div>
            <p><a class="button" href=back.clone()>{i18n.tr("res-back")}</a></p>
        }
        .into_any(),
        Err(Refusal::Invalid(errors)) => view! {
            <div class="error-box" role="alert">
                {errors
                    .iter()
                    .map(|e| view! { <p>{field_error_text(i18n.lang(), e)}</p> })
                    .collect_view()}
            </div>
            <p><a class="button" href=back.clone()>{i18n.tr("res-back")}</a></p>
        }
        .into_any(),
        Ok(preview) => {
            let key = format!("{}-{}", p.page.request_key, p.kind);
            let kind = match p.kind.as_str() {
                "extend" => "extend",
                "remove" => "remove",
                _ => "update",
            };
            view! {
                <PreviewSummary preview/>
                <ActionForm action=ask attr:class="submit-bar">
                    {hidden_fields(r.id, kind, &p.page.csrf_token, &key)}
                    {p.fields
                        .iter()
                        .map(|(k, v)| view! { <input type="hidden" name=format!("values[{k}]") value=v.clone()/> })
                        .collect_view()}
                    {move || refused().map(|m| view! { <div class="error-box" role="alert">{m}</div> })}
                    <button type="submit" class="button primary" disabled=move || ask.pending().get()>
                        {i18n.tr("ss-submit")}
                    </button>
                    <a class="button" href=back.clone()>{i18n.tr("res-back")}</a>
                </ActionForm>
            }
            .into_any()
        }
    };
    view! {
        <nav class="crumbs">
            <a href="/resources">{i18n.tr("nav-resources")}</a>
            " / "
            <a href=format!("/resources/{}", r.id)>{name.clone()}</a>
            " / "
            <span>{i18n.tr("ss-step-preview")}</span>
        </nav>
        <header class="page-head">
            <span class="kicker">{format!("#{} · ", r.id)}<code>{r.template.clone()}</code></span>
            <h1>
                <span class="request-action" data-action=p.kind.clone()>{move || t(i18n.lang(), what)}</span>
                ": "
                {name}
            </h1>
        </header>
        {body}
    }
}
