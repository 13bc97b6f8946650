//! The admins' part of the home page: what needs attention now, each part a summary that
//! links to its full page. Readers who do not get it see the overview alone.

use fluent_templates::fluent_bundle::FluentValue;
use leptos::prelude::*;
use mirante_domain::lint::Severity;

use crate::{
    api::{
        dashboard::{DashboardPage, get_dashboard},
        get_viewer,
    },
    components::{LoadError, PriorityBadge, StateBadge, priority_key},
    i18n::{t, t_args, use_i18n},
    pages::{
        findings::{message, severity_key, severity_one_key},
        resources::resource_state_key,
        selfservice::{RequestStateBadge, gpus_free_text},
    },
};

/// The dashboard, for viewers who get one; nothing for everyone else.
#[component]
pub fn Dashboard(
    /// The dashboard's data, from [`dashboard_resource`]: `None` for viewers without one.
    data: Resource<Result<Option<DashboardPage>, ServerFnError>>,
) -> impl IntoView {
    view! {
        <Suspense>
            {move || Suspend::new(async move {
                match data.await {
                    Err(e) => view! { <LoadError message=e.to_string()/> }.into_any(),
                    Ok(None) => ().into_any(),
                    Ok(Some(page)) => view! { <DashboardView page/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The dashboard's data for the viewer: `None` unless the viewer sees the dashboard. Created by
/// the page at its top level, with its other resources, so server rendering waits for it.
pub fn dashboard_resource() -> Resource<Result<Option<DashboardPage>, ServerFnError>> {
    Resource::new(
        || (),
        |_| async move {
            match get_viewer().await? {
                Some(v) if v.sees_dashboard() => get_dashboard().await,
                _ => Ok(None),
            }
        },
    )
}

/// A dashboard card: a heading, its content and a link to the full page.
#[component]
fn Card(
    id: &'static str,
    title: &'static str,
    link: &'static str,
    link_text: &'static str,
    children: Children,
) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <section class="dash-card card" id=format!("dash-{id}") aria-labelledby=format!("dash-{id}-title")>
            <h3 id=format!("dash-{id}-title")>{i18n.tr(title)}</h3>
            {children()}
            <p class="dash-more">
                <a href=link>{i18n.tr(link_text)}</a>
            </p>
        </section>
    }
}

#[component]
fn DashboardView(page: DashboardPage) -> impl IntoView {
    let i18n = use_i18n();
    let DashboardPage {
        findings,
        checks,
        tasks,
        approvals,
        approvals_total,
        titles,
        changes,
        resources,
    } = page;
    let names = findings.names.clone();
    let name_of = move |id: &str| {
        names
            .iter()
            .find(|(i, _)| i == id)
            .map_or_else(|| id.to_owned(), |(_, n)| n.clone())
    };
    let checks_total = checks.total;
    let checks_failing = checks.failing.len();
    let checks_ran = checks.last_run.clone();
    view! {
        <section class="dashboard" aria-labelledby="dash-title">
            <h2 id="dash-title">{i18n.tr("dash-title")}</h2>
            <div class="dash-grid">
                <Card id="findings" title="dash-findings" link="/findings" link_text="dash-findings-link">
                    <div class="dash-counts">
                        {findings
                            .counts
                            .iter()
                            .map(|&(s, n)| {
                                view! {
                                    <a
                                        class=format!("dash-count sev-{}", s.as_str())
                                        class:zero=n == 0
                                        href=format!("/findings#sev-{}", s.as_str())
                                    >
                                        <span class="total-n">{n}</span>
                                        <span class="total-label">{move || t(i18n.lang(), severity_key(s))}</span>
                                    </a>
                                }
                            })
                            .collect_view()}
                    </div>
                    {if findings.top.is_empty() {
                        view! { <p class="muted">{i18n.tr("findings-none")}</p> }.into_any()
                    } else {
                        view! {
                            <ul class="dash-list">
                                {findings
                                    .top
                                    .iter()
                                    .map(|f| {
                                        let s: Severity = f.severity;
                                        let f2 = f.clone();
                                        view! {
                                            <li>
                                                <span class=format!("badge sev sev-{}", s.as_str())>
                                                    {move || t(i18n.lang(), severity_one_key(s))}
                                                </span>
                                                " "
                                                <a href=format!("/items/{}", f.item)>{name_of(&f.item)}</a>
                                                <span class="dash-sub">{move || message(i18n.lang(), &f2)}</span>
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        }
                            .into_any()
                    }}
                </Card>
                <Card id="checks" title="dash-checks" link="/findings#sev-error" link_text="dash-checks-link">
                    <p class="dash-summary">
                        {move || match &checks_ran {
                            None => t(i18n.lang(), "dash-checks-never"),
                            Some(_) if checks_total == 0 => t(i18n.lang(), "dash-checks-none"),
                            Some(when) => t_args(
                                i18n.lang(),
                                "dash-checks-summary",
                                &[
                                    ("failing", FluentValue::from(checks_failing)),
                                    ("total", FluentValue::from(checks_total)),
                                    ("when", FluentValue::from(short_time(when))),
                                ],
                            ),
                        }}
                    </p>
                    {(!checks.failing.is_empty())
                        .then(|| {
                            view! {
                                <ul class="dash-list">
                                    {checks
                                        .failing
                                        .iter()
                                        .take(crate::api::dashboard::DASHBOARD_LIMIT)
                                        .map(|c| {
                                            let kind = if c.kind == "argocd" {
                                                "dash-check-argocd"
                                            } else {
                                                "dash-check-probe"
                                            };
                                            view! {
                                                <li>
                                                    <span class="badge sev sev-error">{i18n.tr(kind)}</span>
                                                    " "
                                                    <a href=format!("/items/{}", c.item)>{c.name.clone()}</a>
                                                    <span class="dash-sub">
                                                        <code>{c.target.clone()}</code>
                                                        " — "
                                                        {c.reason.clone()}
                                                    </span>
                                                </li>
                                            }
                                        })
                                        .collect_view()}
                                </ul>
                            }
                        })}
                </Card>
                <Card id="tasks" title="dash-tasks" link="/roadmap" link_text="dash-tasks-link">
                    <p class="dash-summary">
                        {move || t_args(i18n.lang(), "dash-tasks-summary", &[("count", FluentValue::from(tasks.total))])}
                    </p>
                    <div class="dash-chips" aria-label=i18n.tr("dash-tasks-by-priority")>
                        {tasks
                            .by_priority
                            .iter()
                            .map(|&(p, n)| {
                                let key = p.map_or("priority-none", priority_key);
                                let class = format!(
                                    "dash-chip p-{}",
                                    p.map_or("priority-none", priority_key),
                                );
                                view! {
                                    <span class=class>
                                        <strong>{n}</strong>
                                        " "
                                        {move || t(i18n.lang(), key)}
                                    </span>
                                }
                            })
                            .collect_view()}
                    </div>
                    <div class="dash-chips" aria-label=i18n.tr("dash-tasks-by-site")>
                        {tasks
                            .by_site
                            .iter()
                            .map(|(_, name, n)| {
                                view! {
                                    <span class="dash-chip site">
                                        <strong>{*n}</strong>
                                        " "
                                        {name.clone()}
                                    </span>
                                }
                            })
                            .collect_view()}
                        <span class="dash-chip site">
                            <strong>{tasks.platform_wide}</strong>
                            " "
                            {i18n.tr("dash-tasks-platform-wide")}
                        </span>
                    </div>
                    <ul class="dash-list">
                        {tasks
                            .top
                            .iter()
                            .map(|task| {
                                view! {
                                    <li>
                                        <PriorityBadge priority=task.priority/>
                                        " "
                                        <span>{task.title.clone()}</span>
                                        <span class="dash-sub">
                                            <a href=format!("/layers/{}", task.layer)>{task.layer_label.clone()}</a>
                                            {(!task.sites.is_empty()).then(|| format!(" · {}", task.sites.join(", ")))}
                                        </span>
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                </Card>
                <Card id="resources" title="dash-resources" link="/resources" link_text="dash-resources-link">
                    {if resources.is_empty() {
                        view! { <p class="muted">{i18n.tr("res-none")}</p> }.into_any()
                    } else {
                        view! {
                            <ul class="dash-list dash-resources">
                                {resources
                                    .into_iter()
                                    .map(|c| {
                                        let gpus = c.gpus.clone();
                                        view! {
                                            <li data-cluster=c.cluster.clone().unwrap_or_default()>
                                                {match c.cluster.clone() {
                                                    Some(id) => view! { <a href=format!("/items/{id}")>{id.clone()}</a> }.into_any(),
                                                    None => view! { <span>{i18n.tr("res-no-cluster")}</span> }.into_any(),
                                                }}
                                                {gpus.map(|g| view! {
                                                    <span class="dash-sub gpus-free">{move || gpus_free_text(i18n.lang(), &g)}</span>
                                                })}
                                                <span class="dash-sub">
                                                    {if c.counts.is_empty() {
                                                        view! { <span>{i18n.tr("dash-resources-none")}</span> }.into_any()
                                                    } else {
                                                        c.counts
                                                            .iter()
                                                            .map(|&(s, n)| view! {
                                                                <span class=format!("res-count res-{}", s.as_str()) data-state=s.as_str()>
                                                                    {n}" "{move || t(i18n.lang(), resource_state_key(s))}
                                                                </span>" "
                                                            })
                                                            .collect_view()
                                                            .into_any()
                                                    }}
                                                </span>
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        }
                            .into_any()
                    }}
                </Card>
                <Card
                    id="approvals"
                    title="dash-approvals"
                    link="/requests?state=awaiting_approval"
                    link_text="dash-approvals-link"
                >
                    <p class="dash-summary">
                        {move || t_args(i18n.lang(), "dash-approvals-summary", &[("count", FluentValue::from(approvals_total))])}
                    </p>
                    {(!approvals.is_empty())
                        .then(|| {
                            view! {
                                <ul class="dash-list">
                                    {approvals
                                        .iter()
                                        .map(|r| {
                                            let target = r.target.clone();
                                            let author = r.author_name.clone();
                                            let (titles, row) = (titles.clone(), r.clone());
                                            let id = r.id;
                                            let title = move || {
                                                format!("#{id} {}", crate::pages::selfservice::request_title(i18n.lang(), &titles, &row))
                                            };
                                            view! {
                                                <li>
                                                    <RequestStateBadge state=r.state/>
                                                    " "
                                                    <a href=format!("/requests/{}", r.id)>{title}</a>
                                                    <span class="dash-sub">
                                                        {move || t_args(
                                                            i18n.lang(),
                                                            "dash-approvals-by",
                                                            &[
                                                                ("target", FluentValue::from(target.clone())),
                                                                ("author", FluentValue::from(author.clone())),
                                                            ],
                                                        )}
                                                        " · "
                                                        {crate::pages::selfservice::short_time(&r.created_at)}
                                                    </span>
                                                </li>
                                            }
                                        })
                                        .collect_view()}
                                </ul>
                            }
                        })}
                </Card>
                <Card id="changes" title="dash-changes" link="/roadmap" link_text="dash-changes-link">
                    {if !changes.available {
                        view! { <p class="muted dash-unavailable">{i18n.tr("dash-changes-unavailable")}</p> }.into_any()
                    } else if changes.changes.is_empty() {
                        view! { <p class="muted">{i18n.tr("dash-changes-none")}</p> }.into_any()
                    } else {
                        view! {
                            <ul class="dash-list">
                                {changes
                                    .changes
                                    .iter()
                                    .map(|c| {
                                        view! {
                                            <li>
                                                <a href=format!("/items/{}", c.item)>{c.name.clone()}</a>
                                                " "
                                                {match c.from {
                                                    Some(from) => view! { <StateBadge state=from/> }.into_any(),
                                                    None => view! { <span class="badge">{i18n.tr("dash-change-new")}</span> }.into_any(),
                                                }}
                                                " → "
                                                <StateBadge state=c.to/>
                                                <span class="dash-sub">{short_time(&c.at)}</span>
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        }
                            .into_any()
                    }}
                </Card>
            </div>
        </section>
    }
}

/// `2026-11-30 16:05` from an RFC 3339 time; other text unchanged.
fn short_time(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(date), Some(time)) if rfc3339.as_bytes().get(10) == Some(&b'T') => {
            format!("{date} {time} UTC")
        }
        _ => rfc3339.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::short_time;

    #[test]
    fn times_are_shown_to_the_minute_and_dates_as_they_are() {
        assert_eq!(
            short_time("2026-11-30T16:05:09.123+00:00"),
            "2026-11-30 16:05 UTC"
        );
        assert_eq!(short_time("2026-11-30"), "2026-11-30");
    }
}
