//! Requests: the list (a researcher's own, an admin's all with a filter by state) and a
//! request's page with its timeline, values, files, pull request and, for admins, the
//! decisions and the merge.

use leptos::{form::ActionForm, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};
use leptos_router::params::ParamsMap;
use mirante_domain::request::{Action, RequestState};
use serde_json::Value;

use crate::{
    api::selfservice::{
        ApproveRequest, MergeRequest, RejectRequest, RequestPageData, WithdrawRequest, field_text,
        get_request, list_requests,
    },
    components::{Wait, found, loaded, page_title, refresh_while},
    i18n::{t, t_args, use_i18n},
    pages::resources::resource_state_key,
    pages::selfservice::{
        RESUBMITS, RequestStateBadge, request_state_key, request_title, short_time,
    },
};

/// Translation key of what a day-two request does; `None` for a creation.
fn action_key(a: Action) -> Option<&'static str> {
    match a {
        Action::Create => None,
        Action::Update => Some("req-action-update"),
        Action::Extend => Some("req-action-extend"),
        Action::Remove => Some("req-action-remove"),
    }
}

/// Translation key of what happens next to a request in state `s`.
fn next_step_key(s: RequestState) -> &'static str {
    match s {
        RequestState::Submitted => "req-next-submitted",
        RequestState::AwaitingApproval => "req-next-awaiting_approval",
        RequestState::Approved => "req-next-approved",
        RequestState::Rejected => "req-next-rejected",
        RequestState::Proposing => "req-next-proposing",
        RequestState::Proposed => "req-next-proposed",
        RequestState::Merged => "req-next-merged",
        RequestState::Closed => "req-next-closed",
        RequestState::Failed => "req-next-failed",
    }
}

/// Whether the request can change while its page is open without its reader acting: never
/// once final, and not while the reader's own decision or merge form is on screen (a refresh
/// would wipe what they are typing).
fn moves_by_itself(page: &RequestPageData) -> bool {
    let r = &page.request;
    !r.summary.state.is_final() && !r.can_decide && !r.can_merge
}

/// The requests page.
#[component]
pub fn RequestsPage() -> impl IntoView {
    let i18n = use_i18n();
    let query = use_query_map();
    let state = Memo::new(move |_| query.get().get("state").filter(|s| !s.is_empty()));
    let data = Resource::new(move || state.get(), list_requests);
    view! {
        <Title text=move || t(i18n.lang(), "nav-requests")/>
        <header class="page-head">
            <h1>{i18n.tr("req-title")}</h1>
            <p class="lead">
                <a href="/self-service">{i18n.tr("req-new")}</a>
            </p>
        </header>
        {loaded(Wait::Keep, data, move |page| {
            let current = state.get_untracked();
            view! {
                {page.all.then(|| view! { <StateFilter current=current.clone()/> })}
                <p class="lead muted">
                    {if page.all { i18n.tr("req-all") } else { i18n.tr("req-mine") }}
                </p>
                {if page.rows.is_empty() {
                    view! { <p class="muted empty-list">{i18n.tr("req-none")}</p> }.into_any()
                } else {
                    view! {
                        <div class="table-wrap">
                            <table class="requests">
                                <thead>
                                    <tr>
                                        <th>"#"</th>
                                        <th>{i18n.tr("req-col-template")}</th>
                                        <th>{i18n.tr("req-col-author")}</th>
                                        <th>{i18n.tr("req-col-state")}</th>
                                        <th>{i18n.tr("req-col-created")}</th>
                                    </tr>
                                </thead>
                                <tbody>
                                    {page
                                        .rows
                                        .into_iter()
                                        .map(|r| {
                                            let titles = page.titles.clone();
                                            let row = r.clone();
                                            let title = move || request_title(i18n.lang(), &titles, &row);
                                            view! {
                                                <tr class="request-row" data-id=r.id data-state=r.state.as_str()>
                                                    <td class="nowrap">
                                                        <a href=format!("/requests/{}", r.id)>{format!("#{}", r.id)}</a>
                                                    </td>
                                                    <td>
                                                        <a class="item-name" href=format!("/requests/{}", r.id)>
                                                            {title}
                                                        </a>
                                                        <div class="summary"><code>{r.target.clone()}</code></div>
                                                    </td>
                                                    <td title=r.author.clone()>{r.author_name.clone()}</td>
                                                    <td class="nowrap"><RequestStateBadge state=r.state/></td>
                                                    <td class="nowrap muted">{short_time(&r.created_at)}</td>
                                                </tr>
                                            }
                                        })
                                        .collect_view()}
                                </tbody>
                            </table>
                        </div>
                    }
                        .into_any()
                }}
            }
                .into_any()
        })}
    }
}

/// Chips that filter the list by state (admins).
#[component]
fn StateFilter(current: Option<String>) -> impl IntoView {
    let i18n = use_i18n();
    let chip = |value: Option<RequestState>, active: bool| {
        let href = value.map_or_else(
            || "/requests".to_owned(),
            |s| format!("/requests?state={}", s.as_str()),
        );
        view! {
            <a
                href=href
                class=if active { "chip active" } else { "chip" }
                aria-current=active.then_some("true")
                data-value=value.map(|s| s.as_str())
            >
                {move || match value {
                    Some(s) => t(i18n.lang(), request_state_key(s)),
                    None => t(i18n.lang(), "filter-any"),
                }}
            </a>
        }
    };
    view! {
        <section class="filters" aria-label=i18n.tr("filters-label")>
            <div class="filter-group" data-filter="state">
                <span class="filter-label">{i18n.tr("filter-state")}</span>
                {chip(None, current.is_none())}
                {RequestState::ALL
                    .into_iter()
                    .filter(|s| *s != RequestState::Submitted)
                    .map(|s| chip(Some(s), current.as_deref() == Some(s.as_str())))
                    .collect_view()}
            </div>
        </section>
    }
}

/// A request's page.
#[component]
pub fn RequestPage() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let approve = ServerAction::<ApproveRequest>::new();
    let reject = ServerAction::<RejectRequest>::new();
    let merge = ServerAction::<MergeRequest>::new();
    let withdraw = ServerAction::<WithdrawRequest>::new();
    let id = move || params.get().get("id").and_then(|s| s.parse::<i64>().ok());
    // Set once the data is in: follows the request while its state can still change.
    let moving = RwSignal::new(None::<bool>);
    let tick = refresh_while(move || moving.get());
    let data = Resource::new(
        move || {
            (
                id(),
                approve.version().get()
                    + reject.version().get()
                    + merge.version().get()
                    + withdraw.version().get(),
                tick.get(),
            )
        },
        |(id, _, _)| async move {
            match id {
                Some(id) => get_request(id).await,
                None => Ok(None),
            }
        },
    );
    Effect::new(move |_| {
        moving.set(data.get().map(|d| match d {
            Ok(Some(page)) => moves_by_itself(&page),
            _ => false,
        }));
    });
    let refused = move || {
        [
            approve.value().get(),
            reject.value().get(),
            merge.value().get(),
            withdraw.value().get(),
        ]
        .into_iter()
        .flatten()
        .find_map(|r| match r {
            Ok(Some(m)) => Some(m),
            Err(e) => Some(e.to_string()),
            Ok(None) => None,
        })
    };
    view! {
        {found(Wait::Keep, data, move |data| {
            view! {
                <RequestBody data approve reject merge withdraw/>
                {move || refused().map(|m| view! { <div class="error-box" role="alert">{m}</div> })}
            }
                .into_any()
        })}
        <Title text=page_title(move || {
            t_args(i18n.lang(), "req-page-title", &[("id", id().unwrap_or_default().to_string().into())])
        })/>
    }
}

#[component]
fn RequestBody(
    data: RequestPageData,
    approve: ServerAction<ApproveRequest>,
    reject: ServerAction<RejectRequest>,
    merge: ServerAction<MergeRequest>,
    withdraw: ServerAction<WithdrawRequest>,
) -> impl IntoView {
    let i18n = use_i18n();
    let RequestPageData {
        request: r,
        values,
        title,
        labels,
        csrf_token: csrf,
    } = data;
    let row = r.summary.clone();
    // The template's own words in the reader's language; what the request stored otherwise.
    let fallback_title = row.template_title.clone();
    let heading = move || match &title {
        Some(t) => t.get(i18n.lang().tag()).to_owned(),
        None => fallback_title.clone(),
    };
    let id = row.id;
    let file_count = r.files.len();
    let state = row.state;
    let paths: Vec<String> = r.files.iter().map(|f| f.path.clone()).collect();
    let deleted = r.removed.clone();
    let (branch, target) = (r.branch.clone(), row.target.clone());
    view! {
        <nav class="crumbs">
            <a href="/requests">{i18n.tr("nav-requests")}</a>
            " / "
            <span>{format!("#{id}")}</span>
        </nav>
        <header class="page-head">
            <span class="kicker">
                {format!("#{id} · ")}<code>{row.template.clone()}</code>
                {action_key(row.action).map(|k| view! {
                    " · "
                    <span class="request-action" data-action=row.action.as_str()>{move || t(i18n.lang(), k)}</span>
                })}
            </span>
            <h1>{heading}</h1>
            <div class="state-line request-state">
                <RequestStateBadge state=row.state/>
            </div>
        </header>
        <p class="callout next-step" data-state=row.state.as_str()>
            <strong>{i18n.tr("req-next-heading")}</strong>
            " "
            {move || t(i18n.lang(), next_step_key(state))}
        </p>
        {r
            .last_error
            .clone()
            .map(|e| {
                view! {
                    <div class="callout rejected last-error">
                        <strong>{i18n.tr("req-last-error")}</strong>
                        " "
                        <span>{e}</span>
                    </div>
                }
            })}
        {r.another_admin_decides
            .then(|| {
                view! {
                    <p class="callout four-eyes">{i18n.tr("req-four-eyes")}</p>
                }
            })}
        {r.can_decide
            .then(|| {
                let csrf2 = csrf.clone();
                let csrf = csrf.clone();
                view! {
                    <section class="card decide" aria-label=i18n.tr("req-decide")>
                        <h2>{i18n.tr("req-decide")}</h2>
                        <div class="decide-forms">
                            <ActionForm action=approve attr:class="approve-form">
                                <input type="hidden" name="id" value=id/>
                                <input type="hidden" name="csrf_token" value=csrf/>
                                <label for="approve-comment">{i18n.tr("req-comment-optional")}</label>
                                <textarea id="approve-comment" name="comment" rows="2"></textarea>
                                <label for="approve-overcommit">{i18n.tr("req-overcommit-reason")}</label>
                                <textarea id="approve-overcommit" name="overcommit_reason" rows="2"></textarea>
                                <button type="submit" class="button primary approve">{i18n.tr("req-approve")}</button>
                            </ActionForm>
                            <ActionForm action=reject attr:class="reject-form">
                                <input type="hidden" name="id" value=id/>
                                <input type="hidden" name="csrf_token" value=csrf2/>
                                <label for="reject-comment">{i18n.tr("req-comment-required")}</label>
                                <textarea id="reject-comment" name="comment" rows="2" required=true></textarea>
                                <button type="submit" class="button danger reject">{i18n.tr("req-reject")}</button>
                            </ActionForm>
                        </div>
                    </section>
                }
            })}
        {r.can_merge
            .then(|| {
                let csrf = csrf.clone();
                let deleted_count = deleted.len();
                let what = move || {
                    t_args(
                        i18n.lang(),
                        "req-merge-what",
                        &[
                            ("count", (file_count + deleted_count).into()),
                            ("branch", branch.clone().into()),
                            ("target", target.clone().into()),
                        ],
                    )
                };
                // Merging asks first: the confirmation says what goes into the main branch.
                view! {
                    <section class="card decide" aria-label=i18n.tr("req-merge")>
                        <p>{i18n.tr("req-merge-help")}</p>
                        <details class="merge-confirm">
                            <summary class="button primary merge-open">{i18n.tr("req-merge-open")}</summary>
                            <ActionForm action=merge attr:class="merge-form">
                                <input type="hidden" name="id" value=id/>
                                <input type="hidden" name="csrf_token" value=csrf/>
                                <p class="merge-what">{what}</p>
                                <ul class="merge-files">
                                    {paths
                                        .iter()
                                        .map(|p| view! { <li><code>{p.clone()}</code></li> })
                                        .collect_view()}
                                    {deleted
                                        .iter()
                                        .map(|p| view! {
                                            <li class="deleted">
                                                <code>{p.clone()}</code>" "
                                                <span class="muted">{i18n.tr("req-file-deleted")}</span>
                                            </li>
                                        })
                                        .collect_view()}
                                </ul>
                                <button type="submit" class="button primary merge">
                                    {i18n.tr("req-merge-confirm")}
                                </button>
                            </ActionForm>
                        </details>
                    </section>
                }
            })}
        {r.can_withdraw
            .then(|| {
                let csrf = csrf.clone();
                view! {
                    <section class="card withdraw" aria-label=i18n.tr("req-withdraw")>
                        <p>
                            {if state == RequestState::Proposed {
                                i18n.tr("req-withdraw-help-proposed")
                            } else {
                                i18n.tr("req-withdraw-help")
                            }}
                        </p>
                        <ActionForm action=withdraw attr:class="withdraw-form">
                            <input type="hidden" name="id" value=id/>
                            <input type="hidden" name="csrf_token" value=csrf/>
                            <button type="submit" class="button withdraw">{i18n.tr("req-withdraw")}</button>
                        </ActionForm>
                    </section>
                }
            })}
        {r.resubmitted_as.map(|newer| view! {
            <p class="callout resubmitted-as">
                {i18n.tr("req-resubmitted-as")}" "
                <a class="request-link" href=format!("/requests/{newer}")>{format!("#{newer}")}</a>
            </p>
        })}
        {r.can_resubmit
            .then(|| {
                // A creation goes back to its form, filled with its values; a day-two request
                // to its resource's forms.
                let href = match (row.action, r.resource) {
                    (Action::Create, _) => {
                        let query: ParamsMap = values
                            .iter()
                            .filter(|(_, v)| !v.is_null())
                            .map(|(k, v)| (k.clone(), field_text(v)))
                            .chain([(RESUBMITS.to_owned(), id.to_string())])
                            .collect();
                        format!("/self-service/{}{}", row.template, query.to_query_string())
                    }
                    (_, Some(resource)) => format!("/resources/{resource}"),
                    (_, None) => "/resources".to_owned(),
                };
                view! {
                    <section class="card resubmit" aria-label=i18n.tr("req-resubmit")>
                        <p>{i18n.tr("req-resubmit-help")}</p>
                        <a class="button primary resubmit-link" href=href>{i18n.tr("req-resubmit")}</a>
                    </section>
                }
            })}
        <div class="two-col">
            <div>
                <h2>{i18n.tr("req-timeline")}</h2>
                <ol class="timeline">
                    {r
                        .timeline
                        .into_iter()
                        .map(|step| {
                            view! {
                                <li data-state=step.to.as_str() data-deployment=step.deployment.map(|d| d.as_str())>
                                    {match step.deployment {
                                        Some(d) => view! {
                                            <span class=format!("badge res-state res-{}", d.as_str()) data-state=d.as_str()>
                                                {move || t(i18n.lang(), resource_state_key(d))}
                                            </span>
                                        }.into_any(),
                                        None => view! { <RequestStateBadge state=step.to/> }.into_any(),
                                    }}
                                    <span class="when">{short_time(&step.at)}</span>
                                    <span class="who">{step.actor.clone()}</span>
                                    {step.comment.clone().map(|c| view! { <p class="comment">{c}</p> })}
                                    {step
                                        .overcommit_reason
                                        .clone()
                                        .map(|c| {
                                            view! {
                                                <p class="comment overcommit">
                                                    <strong>{i18n.tr("req-overcommitted")}</strong>
                                                    " "
                                                    {c}
                                                </p>
                                            }
                                        })}
                                </li>
                            }
                        })
                        .collect_view()}
                </ol>
                {(!r.removed.is_empty()).then(|| {
                    let count = r.removed.len();
                    view! {
                        <h2>{move || t_args(i18n.lang(), "req-removed-files", &[("count", count.into())])}</h2>
                        <ul class="removed-files">
                            {r.removed
                                .iter()
                                .map(|p| view! { <li><code class="path">{p.clone()}</code></li> })
                                .collect_view()}
                        </ul>
                    }
                })}
                <h2>{move || t_args(i18n.lang(), "ss-files-count", &[("count", file_count.into())])}</h2>
                <div class="files">
                    {r
                        .files
                        .into_iter()
                        .map(|f| {
                            view! {
                                <details class="file" data-path=f.path.clone()>
                                    <summary><code class="path">{f.path.clone()}</code></summary>
                                    <pre class="diff">{f.content.clone()}</pre>
                                </details>
                            }
                        })
                        .collect_view()}
                </div>
            </div>
            <aside class="card facts">
                <dl>
                    <dt>{i18n.tr("req-col-author")}</dt>
                    <dd title=row.author.clone()>{row.author_name.clone()}</dd>
                    <dt>{i18n.tr("req-col-created")}</dt>
                    <dd>{short_time(&row.created_at)}</dd>
                    <dt>{i18n.tr("ss-target")}</dt>
                    <dd><code>{row.target.clone()}</code></dd>
                    {row.resubmits.map(|old| view! {
                        <dt>{i18n.tr("req-resubmits")}</dt>
                        <dd><a class="request-link resubmits" href=format!("/requests/{old}")>{format!("#{old}")}</a></dd>
                    })}
                    <dt>{i18n.tr("req-branch")}</dt>
                    <dd><code class="branch">{r.branch.clone()}</code></dd>
                    <dt>{i18n.tr("req-pull-request")}</dt>
                    <dd class="pull-request">
                        {match (row.pr_number, row.pr_url.clone()) {
                            (Some(n), Some(url)) => {
                                // The local forge's pull request is the proposed change page
                                // (requests proposed before it existed link to this page).
                                let url = if url.ends_with(&format!("/requests/{id}")) {
                                    format!("/requests/{id}/change")
                                } else {
                                    url
                                };
                                view! { <a href=url rel="external">{format!("#{n}")}</a> }.into_any()
                            }
                            (Some(n), None) => view! { <span>{format!("#{n}")}</span> }.into_any(),
                            _ if state == RequestState::Rejected => {
                                view! { <span class="muted">{i18n.tr("req-no-pr-rejected")}</span> }.into_any()
                            }
                            _ => view! { <span class="muted">{i18n.tr("req-no-pr")}</span> }.into_any(),
                        }}
                    </dd>
                </dl>
                <h2>{i18n.tr("req-values")}</h2>
                <dl class="values">
                    {values
                        .iter()
                        .filter(|(_, v)| !v.is_null())
                        .map(|(k, v)| {
                            let text = match v {
                                Value::String(s) => s.clone(),
                                Value::Array(items) => items
                                    .iter()
                                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                                    .collect::<Vec<_>>()
                                    .join(", "),
                                other => other.to_string(),
                            };
                            let label = labels.iter().find(|(n, _)| n == k).map(|(_, l)| l.clone());
                            let key = k.clone();
                            let dt = move || match &label {
                                Some(l) => l.get(i18n.lang().tag()).to_owned(),
                                None => key.clone(),
                            };
                            view! {
                                <dt data-name=k.clone()>{dt}</dt>
                                <dd data-value=k.clone()>{text}</dd>
                            }
                        })
                        .collect_view()}
                </dl>
            </aside>
        </div>
    }
}
