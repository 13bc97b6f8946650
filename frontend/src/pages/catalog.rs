//! The catalog list with filters. Filters are plain links and a GET form, so they work
//! without JavaScript; after hydration the router turns them into in-page updates.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{components::Form, hooks::use_query_map, params::ParamsMap};
use mirante_domain::{Qualifier, State};

use crate::{
    api::{ItemRow, ListQuery, PAGE_SIZE, list_items, page_count},
    components::{StateBadge, Wait, loaded, qualifier_key, state_key},
    i18n::{t, t_args, use_i18n},
};

const KEYS: [&str; 6] = ["site", "layer", "state", "qualifier", "q", "page"];

fn query_from(map: &ParamsMap) -> ListQuery {
    ListQuery {
        site: map.get("site"),
        layer: map.get("layer"),
        state: map.get("state"),
        qualifier: map.get("qualifier"),
        q: map.get("q"),
        page: map.get("page"),
    }
}

/// The list URL with `key` set to `value` (or removed), other filters kept. A change of
/// filter starts again at the first page.
fn href_with(map: &ParamsMap, key: &str, value: Option<&str>) -> String {
    let mut next = ParamsMap::new();
    for k in KEYS {
        let v = if k == key {
            value.map(str::to_string)
        } else if k == "page" {
            None
        } else {
            map.get(k)
        };
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            next.insert(k, v);
        }
    }
    format!("/catalog{}", next.to_query_string())
}

/// One group of filter chips.
#[component]
fn FilterGroup(
    label: &'static str,
    key: &'static str,
    /// (value, label) pairs; the label is already in the reader's language.
    options: Signal<Vec<(String, String)>>,
) -> impl IntoView {
    let i18n = use_i18n();
    let query = use_query_map();
    view! {
        <div class="filter-group" data-filter=key>
            <span class="filter-label">{i18n.tr(label)}</span>
            // Plain links (the router still turns them into in-page navigation): `<A>` would
            // mark every chip as the current page, since they share the path.
            <a
                href=move || href_with(&query.get(), key, None)
                class=move || {
                    if query.get().get(key).is_none() { "chip active" } else { "chip" }
                }
                aria-current=move || query.get().get(key).is_none().then_some("true")
            >
                {i18n.tr("filter-any")}
            </a>
            <For
                each=move || options.get()
                key=|(v, l)| (v.clone(), l.clone())
                children=move |(value, text)| {
                    let v2 = value.clone();
                    let v3 = value.clone();
                    let data_value = value.clone();
                    view! {
                        <a
                            href=move || href_with(&query.get(), key, Some(&value))
                            class=move || {
                                if query.get().get(key).as_deref() == Some(v2.as_str()) {
                                    "chip active"
                                } else {
                                    "chip"
                                }
                            }
                            aria-current=move || {
                                (query.get().get(key).as_deref() == Some(v3.as_str()))
                                    .then_some("true")
                            }
                            data-value=data_value
                        >
                            {text}
                        </a>
                    }
                }
            />
        </div>
    }
}

/// The catalog list page.
#[component]
pub fn CatalogPage() -> impl IntoView {
    let i18n = use_i18n();
    let query = use_query_map();
    let list_query = Memo::new(move |_| query_from(&query.get()));
    let data = Resource::new(move || list_query.get(), list_items);
    // Filter options stay on screen while the next page of results loads.
    // Read in place: the page's rows are not copied for the filter bar.
    let sites = Signal::derive(move || {
        data.with(|d| match d {
            Some(Ok(p)) => p.sites.clone(),
            _ => Vec::new(),
        })
    });
    let layers = Signal::derive(move || {
        data.with(|d| match d {
            Some(Ok(p)) => p
                .layers
                .iter()
                .filter(|l| l.parent.is_none())
                .map(|l| (l.id.clone(), l.label()))
                .collect(),
            _ => Vec::new(),
        })
    });
    let states = Signal::derive(move || {
        State::ALL
            .into_iter()
            .map(|s| (s.as_str().to_string(), t(i18n.lang(), state_key(s))))
            .collect()
    });
    let qualifiers = Signal::derive(move || {
        Qualifier::ALL
            .into_iter()
            .map(|q| (q.as_str().to_string(), t(i18n.lang(), qualifier_key(q))))
            .collect()
    });

    view! {
        <Title text=move || t(i18n.lang(), "nav-catalog")/>
        <h1>{i18n.tr("catalog-title")}</h1>
        <section class="filters" aria-label=i18n.tr("filters-label")>
            <Form method="GET" action="/catalog" attr:class="search">
                {move || {
                    let q = query.get();
                    KEYS.into_iter()
                        .filter(|k| *k != "q" && *k != "page")
                        .filter_map(|k| q.get(k).map(|v| (k, v)))
                        .map(|(k, v)| view! { <input type="hidden" name=k value=v/> })
                        .collect_view()
                }}
                <input
                    type="search"
                    name="q"
                    placeholder=i18n.tr("search-placeholder")
                    aria-label=i18n.tr("search-placeholder")
                    prop:value=move || query.get().get("q").unwrap_or_default()
                />
                <button type="submit">{i18n.tr("search-button")}</button>
            </Form>
            <FilterGroup label="filter-state" key="state" options=states/>
            <FilterGroup label="filter-qualifier" key="qualifier" options=qualifiers/>
            // Site and layer options come with the data: read inside a Transition so the
            // server waits for them and hydration reuses them.
            <Transition fallback=|| ()>
                <FilterGroup label="filter-site" key="site" options=sites/>
                <FilterGroup label="filter-layer" key="layer" options=layers/>
            </Transition>
        </section>
        {loaded(Wait::Keep, data, move |page| {
            let total = page.total;
            let first = (page.page - 1) * PAGE_SIZE;
            let shown = page.items.len();
            view! {
                <p class="result-count" data-total=total data-page=page.page>
                    {move || t_args(i18n.lang(), "items-count", &[("count", total.into())])}
                    {(shown < total)
                        .then(|| {
                            view! {
                                " "
                                <span class="muted">
                                    {move || {
                                        t_args(
                                            i18n.lang(),
                                            "items-range",
                                            &[
                                                ("from", (first + 1).into()),
                                                ("to", (first + shown).into()),
                                            ],
                                        )
                                    }}
                                </span>
                            }
                        })}
                </p>
                <ItemTable items=page.items/>
                <Pager page=page.page pages=page_count(total)/>
            }
                .into_any()
        })}
    }
}

/// Links to the previous and next pages of the list, with the filters kept; nothing when
/// everything fits on one page.
#[component]
fn Pager(page: usize, pages: usize) -> impl IntoView {
    let i18n = use_i18n();
    let query = use_query_map();
    let to = move |n: usize| {
        let n = n.to_string();
        move || href_with(&query.get(), "page", (n != "1").then_some(n.as_str()))
    };
    (pages > 1).then(|| {
        view! {
            <nav class="pager" aria-label=i18n.tr("pager-label")>
                {(page > 1)
                    .then(|| {
                        view! {
                            <a class="pager-prev" rel="prev" href=to(page - 1)>
                                {i18n.tr("pager-previous")}
                            </a>
                        }
                    })}
                <span class="pager-position muted">
                    {move || {
                        t_args(
                            i18n.lang(),
                            "pager-position",
                            &[("page", page.into()), ("pages", pages.into())],
                        )
                    }}
                </span>
                {(page < pages)
                    .then(|| {
                        view! {
                            <a class="pager-next" rel="next" href=to(page + 1)>
                                {i18n.tr("pager-next")}
                            </a>
                        }
                    })}
            </nav>
        }
    })
}

/// The table of item rows.
#[component]
pub fn ItemTable(items: std::sync::Arc<[ItemRow]>) -> impl IntoView {
    let i18n = use_i18n();
    if items.is_empty() {
        return view! { <p class="muted empty-list">{i18n.tr("items-none")}</p> }.into_any();
    }
    view! {
        <div class="table-wrap">
            <table class="items">
                <thead>
                    <tr>
                        <th>{i18n.tr("col-item")}</th>
                        <th>{i18n.tr("col-state")}</th>
                        <th>{i18n.tr("col-layer")}</th>
                        <th>{i18n.tr("col-sites")}</th>
                    </tr>
                </thead>
                <tbody>
                    {items
                        .iter()
                        .map(|it| {
                            view! {
                                <tr class="item-row" data-id=it.id.clone()>
                                    <td>
                                        <a class="item-name" href=format!("/items/{}", it.id)>
                                            {it.name.clone()}
                                        </a>
                                        {(!it.summary.is_empty())
                                            .then(|| view! { <div class="summary">{it.summary.clone()}</div> })}
                                    </td>
                                    <td class="nowrap">
                                        <StateBadge state=it.state qualifier=it.qualifier/>
                                    </td>
                                    <td>
                                        <a href=format!("/layers/{}", it.layer)>{it.layer_label.clone()}</a>
                                    </td>
                                    <td class="sites">
                                        {if it.sites.is_empty() {
                                            view! { <span class="muted">{i18n.tr("platform-wide")}</span> }
                                                .into_any()
                                        } else {
                                            it.sites
                                                .iter()
                                                .map(|s| view! { <span class="site-tag">{s.clone()}</span> })
                                                .collect_view()
                                                .into_any()
                                        }}
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}
