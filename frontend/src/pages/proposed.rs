//! A request's proposed change: what its branch proposes against the base branch — the commits,
//! each file with git's diff, and whether it is open, merged or closed. The local forge has no
//! pull request page of its own; this is it, and a local request's pull request links here.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;
use mirante_api_types::selfservice::{PreviewFile, ProposedChange};
use mirante_domain::deployment::short;

use crate::{
    api::selfservice::get_proposed_change,
    components::{Wait, found},
    i18n::{t, t_args, use_i18n},
    pages::selfservice::FileDiff,
};

/// Translation key of a pull request's state.
fn state_key(state: &str) -> &'static str {
    match state {
        "merged" => "req-change-merged",
        "closed" => "req-change-closed",
        _ => "req-change-open",
    }
}

/// The proposed change page of `/requests/{id}/change`.
#[component]
pub fn ProposedChangePage() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let id = move || params.get().get("id").and_then(|s| s.parse::<i64>().ok());
    let data = Resource::new(id, |id| async move {
        match id {
            Some(id) => get_proposed_change(id).await,
            None => Ok(None),
        }
    });
    view! {
        <Title text=move || t(i18n.lang(), "req-change-title")/>
        {found(Wait::Placeholder, data, move |change: ProposedChange| {
            let id = change.request;
            let state = change.state.clone();
            let state_name = state_key(&state);
            let count = change.files.len();
            view! {
                <nav class="crumbs">
                    <a href="/requests">{i18n.tr("nav-requests")}</a>
                    " / "
                    <a href=format!("/requests/{id}")>{format!("#{id}")}</a>
                </nav>
                <header class="page-head">
                    <span class="kicker">{format!("#{id} · ")}{i18n.tr("req-pull-request")}</span>
                    <h1>{i18n.tr("req-change-title")}</h1>
                    <div class="state-line">
                        <span class=format!("badge pr-state pr-{state}") data-state=state.clone()>
                            {move || t(i18n.lang(), state_name)}
                        </span>
                    </div>
                </header>
                <p class="change-branches">
                    {
                        let (branch, base) = (change.branch.clone(), change.base.clone());
                        move || {
                            t_args(
                                i18n.lang(),
                                "req-change-into",
                                &[("branch", branch.clone().into()), ("base", base.clone().into())],
                            )
                        }
                    }
                    " · "
                    <code title=change.from.clone()>{short(&change.from).to_owned()}</code>
                    " → "
                    <code title=change.to.clone()>{short(&change.to).to_owned()}</code>
                </p>
                <h2>{i18n.tr("req-change-commits")}</h2>
                <ol class="commits">
                    {change
                        .commits
                        .into_iter()
                        .map(|c| {
                            view! {
                                <li data-commit=c.id.clone()>
                                    <code title=c.id.clone()>{short(&c.id).to_owned()}</code>
                                    " "
                                    <span class="summary">{c.summary}</span>
                                    " "
                                    <span class="muted">{c.author} " · " {c.at.replace('T', " ").replace('Z', " UTC")}</span>
                                </li>
                            }
                        })
                        .collect_view()}
                </ol>
                <h2>{move || t_args(i18n.lang(), "ss-files-count", &[("count", count.into())])}</h2>
                <div class="files">
                    {change
                        .files
                        .into_iter()
                        .map(|f| {
                            let file = PreviewFile {
                                path: f.path,
                                content: String::new(),
                                status: f.status,
                                diff: f.diff,
                            };
                            view! { <FileDiff file/> }
                        })
                        .collect_view()}
                </div>
                {change
                    .more_files
                    .then(|| view! { <p class="callout warn">{i18n.tr("req-change-more-files")}</p> })}
            }
            .into_any()
        })}
    }
}
