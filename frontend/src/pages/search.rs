//! The search page of the header's search box: what matches, grouped by kind, each group with
//! how many match and a way to all of them where a page lists them.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::{
    api::search::{Found, Group, search},
    components::{InlineText, StateBadge, Wait, loaded},
    i18n::{t, t_args, use_i18n},
};

/// One group of results: its heading with how many match, the entries it lists
/// (`children`, `shown` of them), and a link to every match on `more` when it lists fewer.
#[component]
fn SearchGroup(
    kind: &'static str,
    heading: &'static str,
    total: usize,
    shown: usize,
    more: String,
    children: Children,
) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <section class=format!("search-group search-{kind}") data-kind=kind>
            <h2>{move || t_args(i18n.lang(), heading, &[("count", total.into())])}</h2>
            <ul class="search-hits">{children()}</ul>
            {(total > shown)
                .then(|| {
                    view! {
                        <a class="search-more" href=more>
                            {move || t_args(i18n.lang(), "search-more", &[("count", (total - shown).into())])}
                        </a>
                    }
                })}
        </section>
    }
}

/// A group of decisions, tasks, templates or requests: each a link named in the reader's
/// language, with what else identifies it; nothing when none matches.
#[component]
fn FoundGroup(
    kind: &'static str,
    heading: &'static str,
    group: Group<Found>,
    more: &'static str,
) -> impl IntoView {
    let i18n = use_i18n();
    let (total, shown) = (group.total, group.first.len());
    (total > 0).then(|| {
        view! {
            <SearchGroup kind heading total shown more=more.to_owned()>
                {group
                    .first
                    .into_iter()
                    .map(|f| {
                        let Found { href, title, localized, detail } = f;
                        let name = move || match &localized {
                            Some(l) => l.get(i18n.lang().tag()).to_owned(),
                            None => title.clone(),
                        };
                        view! {
                            <li>
                                <a href=href>{name}</a>
                                " "
                                <span class="muted"><InlineText text=detail/></span>
                            </li>
                        }
                    })
                    .collect_view()}
            </SearchGroup>
        }
    })
}

/// `/search?q=…`: the header search's results.
#[component]
pub fn SearchPage() -> impl IntoView {
    let i18n = use_i18n();
    let query = use_query_map();
    let data = Resource::new(move || query.get().get("q").unwrap_or_default(), search);
    view! {
        <Title text=move || t(i18n.lang(), "search-title")/>
        <header class="page-head">
            <h1>{i18n.tr("search-title")}</h1>
        </header>
        <form class="search-form" role="search" method="get" action="/search">
            <label for="search-q">{i18n.tr("search-label")}</label>
            <input
                id="search-q"
                type="search"
                name="q"
                maxlength="200"
                value=move || query.get().get("q").unwrap_or_default()
            />
            <button type="submit" class="button primary">{i18n.tr("search-go")}</button>
        </form>
        {loaded(Wait::Keep, data, move |page| {
            if page.q.trim().is_empty() {
                return view! { <p class="muted">{i18n.tr("search-empty")}</p> }.into_any();
            }
            let total = page.total();
            let q = page.q.clone();
            let (items_total, items_shown) = (page.items.total, page.items.first.len());
            let all_items = format!("/catalog?q={}", url_escape(&page.q));
            view! {
                <p class="result-count" role="status">
                    {move || t_args(i18n.lang(), "search-count", &[("count", total.into()), ("q", q.clone().into())])}
                </p>
                {(items_total > 0)
                    .then(|| {
                        view! {
                            <SearchGroup kind="items" heading="search-items" total=items_total shown=items_shown more=all_items>
                                {page
                                    .items
                                    .first
                                    .into_iter()
                                    .map(|i| {
                                        view! {
                                            <li>
                                                <a href=format!("/items/{}", i.id)>{i.name}</a>
                                                " "
                                                <StateBadge state=i.state qualifier=i.qualifier/>
                                                " "
                                                <code class="muted">{i.id}</code>
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </SearchGroup>
                        }
                    })}
                <FoundGroup kind="decisions" heading="search-decisions" group=page.decisions more="/decisions"/>
                <FoundGroup kind="tasks" heading="search-tasks" group=page.tasks more="/roadmap"/>
                <FoundGroup kind="templates" heading="search-templates" group=page.templates more="/self-service"/>
                <FoundGroup kind="requests" heading="search-requests" group=page.requests more="/requests"/>
            }
            .into_any()
        })}
    }
}

/// `s` as a query string value (`application/x-www-form-urlencoded`, as a GET form sends it).
fn url_escape(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::url_escape;

    #[test]
    fn a_query_is_encoded_for_the_catalog_link_as_a_form_would_send_it() {
        assert_eq!(url_escape("argo cd & ação"), "argo+cd+%26+a%C3%A7%C3%A3o");
    }
}
