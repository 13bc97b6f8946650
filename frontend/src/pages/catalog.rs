//! The catalog list with filters. Filters are plain links and a GET form, so they work
//! without JavaScript; after hydration the router turns them into in-page updates.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{components::Form, hooks::use_query_map, location::Url, params::ParamsMap};
use mirante_domain::{Qualifier, State};

use crate::{
    api::{ItemRow, ItemRows, LayerRef, ListQuery, PAGE_SIZE, list_items, page_count},
    components::{Wait, loaded, qualifier_key, state_badge_html, state_key},
    i18n::{Lang, t, t_args, use_i18n},
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

/// The list URLs that set one key, other filters kept: a change of filter starts again at the
/// first page, so `page` is dropped unless it is the key. The pairs before and after the key's
/// place are built once, so each of a filter group's chips costs one escape of its value.
#[derive(Clone, PartialEq)]
struct LinksFor {
    key: &'static str,
    /// `site=…&layer=…` for the keys before `key` in [`KEYS`]; empty when none is set.
    before: String,
    /// The same for the keys after it.
    after: String,
}

impl LinksFor {
    fn new(map: &ParamsMap, key: &'static str) -> Self {
        let at = KEYS.iter().position(|k| *k == key).unwrap_or(KEYS.len());
        let pairs = |keys: &[&str]| {
            let mut out = String::new();
            for k in keys.iter().filter(|k| **k != "page") {
                if let Some(v) = map.get_str(k).filter(|v| !v.is_empty()) {
                    if !out.is_empty() {
                        out.push('&');
                    }
                    out.push_str(k);
                    out.push('=');
                    out.push_str(&Url::escape(v));
                }
            }
            out
        };
        Self {
            key,
            before: pairs(&KEYS[..at]),
            after: pairs(KEYS.get(at + 1..).unwrap_or_default()),
        }
    }

    /// The URL with the key set to `value`, or removed for `None` or an empty value.
    fn href(&self, value: Option<&str>) -> String {
        let own = value
            .filter(|v| !v.is_empty() && KEYS.contains(&self.key))
            .map(|v| format!("{}={}", self.key, Url::escape(v)));
        let mut out = String::from("/catalog");
        let mut sep = '?';
        for part in [
            self.before.as_str(),
            own.as_deref().unwrap_or(""),
            &self.after,
        ] {
            if !part.is_empty() {
                out.push(sep);
                out.push_str(part);
                sep = '&';
            }
        }
        out
    }
}

/// The list URL with `key` set to `value` (or removed), other filters kept.
fn href_with(map: &ParamsMap, key: &'static str, value: Option<&str>) -> String {
    LinksFor::new(map, key).href(value)
}

/// One chip of a filter group: "any" (no value) or one of the group's options.
#[derive(Debug, Clone, PartialEq)]
struct Chip {
    /// The option's value; `None` for the chip that clears the filter.
    value: Option<String>,
    /// What the chip says, in the reader's language.
    text: String,
    /// The list URL with this chip's filter set, the others kept.
    href: String,
    /// Whether the list is filtered by this chip now.
    active: bool,
}

/// The chips of the filter group for `key`: "any" (saying `any`), then one per option.
fn chips(
    map: &ParamsMap,
    key: &'static str,
    any: String,
    options: &[(String, String)],
) -> Vec<Chip> {
    let links = LinksFor::new(map, key);
    let current = map.get_str(key);
    let mut out = Vec::with_capacity(options.len() + 1);
    out.push(Chip {
        href: links.href(None),
        active: current.is_none(),
        value: None,
        text: any,
    });
    out.extend(options.iter().map(|(value, text)| Chip {
        href: links.href(Some(value)),
        active: current == Some(value.as_str()),
        value: Some(value.clone()),
        text: text.clone(),
    }));
    out
}

/// A filter group's content as HTML, every value escaped:
///
/// ```html
/// <span class="filter-label">Site</span><a href="/catalog" aria-current="true"
///   class="chip active">Any</a><a href="/catalog?site=sp" data-value="sp" class="chip">SP</a>
/// ```
fn group_html(label: &str, chips: &[Chip]) -> String {
    use html_escape::{
        encode_double_quoted_attribute_to_string as attr, encode_text_to_string as text,
    };
    let mut out = String::with_capacity(64 + chips.len() * 96);
    out.push_str("<span class=\"filter-label\">");
    text(label, &mut out);
    out.push_str("</span>");
    for chip in chips {
        out.push_str("<a href=\"");
        attr(&chip.href, &mut out);
        out.push('"');
        if chip.active {
            out.push_str(" aria-current=\"true\"");
        }
        if let Some(value) = &chip.value {
            out.push_str(" data-value=\"");
            attr(value, &mut out);
            out.push('"');
        }
        out.push_str(if chip.active {
            " class=\"chip active\">"
        } else {
            " class=\"chip\">"
        });
        text(&chip.text, &mut out);
        out.push_str("</a>");
    }
    out
}

/// One group of filter chips: plain links (the router still turns them into in-page
/// navigation; `<A>` would mark every chip as the current page, since they share the path).
///
/// The group is written as one HTML fragment ([`group_html`]) rather than built as views, for
/// the reason the item rows are ([`ItemTable`]): the site and layer groups wait for the page's
/// data, and the server builds what waits three times a request. On the server the fragment
/// is a memo, written again only when the URL, the options or the language change. In the
/// browser the chips are the memo: a change of filter updates them in place, so a chip chosen
/// from the keyboard keeps the focus, and the active chip is scrolled into view
/// (`reveal_active_chip`); other changes (the options, the language) write the group again.
#[component]
fn FilterGroup(
    label: &'static str,
    key: &'static str,
    /// (value, label) pairs; the label is already in the reader's language.
    options: Signal<Vec<(String, String)>>,
) -> impl IntoView {
    let i18n = use_i18n();
    let query = use_query_map();
    let chips_now = move || {
        let any = t(i18n.lang(), "filter-any");
        query.with(|q| options.with(|o| chips(q, key, any, o)))
    };
    #[cfg(feature = "hydrate")]
    {
        let chips = Memo::new(move |_| chips_now());
        let html = move || chips.with(|c| group_html(&t(i18n.lang(), label), c));
        let group = NodeRef::<leptos::html::Div>::new();
        Effect::new(move |_| {
            let label = t(i18n.lang(), label);
            chips.with(|c| {
                if let Some(el) = group.get() {
                    update_group(&el, &label, c);
                    reveal_active_chip(&el);
                }
            });
        });
        view! { <div class="filter-group" data-filter=key node_ref=group inner_html=html()></div> }
    }
    // The server keeps the fragment itself: written again only when the chips change, and
    // reused by each build of the page that reads it.
    #[cfg(not(feature = "hydrate"))]
    {
        let html = Memo::new(move |_| {
            std::sync::Arc::<str>::from(group_html(&t(i18n.lang(), label), &chips_now()))
        });
        view! { <div class="filter-group" data-filter=key inner_html=html></div> }
    }
}

/// Brings a filter group on screen up to date: when it shows the same chips (same values and
/// texts), only their links and which one is active change, so the element that has the focus
/// stays; otherwise the group is written again.
#[cfg(feature = "hydrate")]
fn update_group(el: &web_sys::HtmlDivElement, label: &str, chips: &[Chip]) {
    let links = el.get_elements_by_tag_name("a");
    let same_label = el
        .first_element_child()
        .is_some_and(|l| l.text_content().as_deref() == Some(label));
    let same_chips = links.length() as usize == chips.len()
        && chips.iter().enumerate().all(|(i, chip)| {
            links.item(i as u32).is_some_and(|a| {
                a.get_attribute("data-value") == chip.value
                    && a.text_content().as_deref() == Some(chip.text.as_str())
            })
        });
    if !(same_label && same_chips) {
        el.set_inner_html(&group_html(label, chips));
        return;
    }
    for (i, chip) in chips.iter().enumerate() {
        let Some(a) = links.item(i as u32) else {
            continue;
        };
        if a.get_attribute("href").as_deref() != Some(chip.href.as_str()) {
            let _ = a.set_attribute("href", &chip.href);
        }
        a.set_class_name(if chip.active { "chip active" } else { "chip" });
        let _ = if chip.active {
            a.set_attribute("aria-current", "true")
        } else {
            a.remove_attribute("aria-current")
        };
    }
}

/// Scrolls a filter group sideways, when it is narrower than its chips (on a phone each group
/// is one row that scrolls), so that its active chip is on screen: a list opened with the last
/// layer chosen shows that chip, not only the first ones. Only the group scrolls, never the page.
#[cfg(feature = "hydrate")]
fn reveal_active_chip(el: &web_sys::HtmlDivElement) {
    if el.scroll_width() <= el.client_width() {
        return;
    }
    let Ok(Some(chip)) = el.query_selector("a[aria-current]") else {
        return;
    };
    let (group, chip) = (
        el.get_bounding_client_rect(),
        chip.get_bounding_client_rect(),
    );
    // The group's name stays at its left edge (sticky); the chips show right of it.
    let left = el.first_element_child().map_or(group.left(), |label| {
        label.get_bounding_client_rect().right()
    });
    // Some room around the chip, so that its neighbours show there is more to scroll to.
    let margin = 24.0;
    let shift = if chip.left() < left {
        chip.left() - left - margin
    } else if chip.right() > group.right() {
        chip.right() - group.right() + margin
    } else {
        return;
    };
    el.set_scroll_left(el.scroll_left() + shift.round() as i32);
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
                .items
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
///
/// The rows are written as one HTML fragment ([`rows_html`]) rather than built as views: a
/// catalog page shows up to [`PAGE_SIZE`] of them, and the server builds a page's view three
/// times while it waits for the page's data (to find what the page reads, to check nothing
/// new was read, to render), which for views of rows cost a third of the page's instructions
/// (`docs/performance.md`, ADR 0031). Links in the fragment are plain `<a href>`, which the
/// router still turns into in-page navigation.
#[component]
pub fn ItemTable(items: ItemRows) -> impl IntoView {
    let i18n = use_i18n();
    if items.is_empty() {
        return view! { <p class="muted empty-list">{i18n.tr("items-none")}</p> }.into_any();
    }
    // On the server the language is fixed: the fragment is written once a request, kept with
    // the page's data for the view's other builds. In the browser it follows the language
    // switch.
    #[cfg(feature = "ssr")]
    let rows = std::sync::Arc::clone(
        items
            .html
            .get_or_init(|| rows_html(&items.rows, &items.layers, i18n.lang()).into()),
    );
    #[cfg(not(feature = "ssr"))]
    let rows = move || rows_html(&items.rows, &items.layers, i18n.lang());
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
                <tbody inner_html=rows></tbody>
            </table>
        </div>
    }
    .into_any()
}

/// The rows of [`ItemTable`] as HTML, every value from the catalog escaped. Each row:
///
/// ```html
/// <tr class="item-row" data-id="…"><td><a class="item-name" href="/items/…">name</a>
///   <div class="summary">…</div></td><td class="nowrap">state badge</td>
///   <td><a href="/layers/…">layer</a></td><td class="sites"><span class="site-tag">…</span></td></tr>
/// ```
pub fn rows_html(items: &[ItemRow], layers: &[LayerRef], lang: Lang) -> String {
    use html_escape::{
        encode_double_quoted_attribute_to_string as attr, encode_text_to_string as text,
    };
    // A badge is the same for every row of its state and qualifier, a layer's link text the
    // same for every row of the layer: each written once.
    let mut badges: Vec<((State, Option<Qualifier>), String)> = Vec::new();
    let mut labels: Vec<(&str, String)> = Vec::new();
    let platform_wide = t(lang, "platform-wide");
    let mut out = String::with_capacity(items.len() * 640);
    for it in items {
        out.push_str("<tr class=\"item-row\" data-id=\"");
        attr(&it.id, &mut out);
        out.push_str("\"><td><a class=\"item-name\" href=\"/items/");
        attr(&it.id, &mut out);
        out.push_str("\">");
        text(&it.name, &mut out);
        out.push_str("</a>");
        if !it.summary.is_empty() {
            out.push_str("<div class=\"summary\">");
            text(&it.summary, &mut out);
            out.push_str("</div>");
        }
        out.push_str("</td><td class=\"nowrap\">");
        let key = (it.state, it.qualifier);
        match badges.iter().find(|(k, _)| *k == key) {
            Some((_, badge)) => out.push_str(badge),
            None => {
                let mut badge = String::new();
                state_badge_html(&mut badge, lang, it.state, it.qualifier);
                out.push_str(&badge);
                badges.push((key, badge));
            }
        }
        out.push_str("</td><td><a href=\"/layers/");
        attr(&it.layer, &mut out);
        out.push_str("\">");
        match labels.iter().find(|(id, _)| *id == it.layer) {
            Some((_, label)) => out.push_str(label),
            None => {
                // A layer the catalog does not hold (a dangling reference) shows its id.
                let label = layers
                    .iter()
                    .find(|l| l.id == it.layer)
                    .map_or_else(|| it.layer.clone(), LayerRef::label);
                let mut escaped = String::new();
                text(&label, &mut escaped);
                out.push_str(&escaped);
                labels.push((&it.layer, escaped));
            }
        }
        out.push_str("</a></td><td class=\"sites\">");
        if it.sites.is_empty() {
            out.push_str("<span class=\"muted\">");
            text(&platform_wide, &mut out);
            out.push_str("</span>");
        } else {
            for site in &it.sites {
                out.push_str("<span class=\"site-tag\">");
                text(site, &mut out);
                out.push_str("</span>");
            }
        }
        out.push_str("</td></tr>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&'static str, &str)]) -> ParamsMap {
        pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
    }

    /// The links as the router's own query string writes them, for comparison.
    fn by_router(map: &ParamsMap, key: &str, value: Option<&str>) -> String {
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

    #[test]
    fn a_chip_link_is_the_query_string_the_router_would_write() {
        let cases = [
            map(&[]),
            map(&[("state", "validated")]),
            map(&[("q", "gpu & co/é"), ("site", "sp"), ("page", "3")]),
            map(&[
                ("layer", "8a"),
                ("qualifier", ""),
                ("state", "desired"),
                ("page", "2"),
            ]),
        ];
        for m in &cases {
            for key in KEYS {
                for value in [None, Some(""), Some("sp"), Some("a b&c=d"), Some("3")] {
                    assert_eq!(
                        href_with(m, key, value),
                        by_router(m, key, value),
                        "{key}={value:?} on {:?}",
                        m.to_query_string()
                    );
                }
            }
        }
    }

    fn row(id: &str, name: &str, summary: &str, sites: &[&str]) -> ItemRow {
        ItemRow {
            id: id.into(),
            name: name.into(),
            state: State::Declared,
            qualifier: Some(Qualifier::Partial),
            sites: sites.iter().map(|s| s.to_string()).collect(),
            layer: "l1".into(),
            summary: summary.into(),
        }
    }

    fn layer(id: &str, number: &str, name: &str) -> LayerRef {
        LayerRef {
            id: id.into(),
            number: number.into(),
            name: name.into(),
            parent: None,
            capability: false,
        }
    }

    fn storage() -> Vec<LayerRef> {
        vec![layer("l0", "0", "Physical"), layer("l1", "1", "Storage")]
    }

    #[test]
    fn a_row_links_the_item_and_its_layer_and_shows_its_badge_and_sites() {
        let html = rows_html(
            &[row(
                "ceph",
                "Ceph & RBD",
                "Block storage.",
                &["sp", "franca"],
            )],
            &storage(),
            Lang::En,
        );
        let mut badge = String::new();
        state_badge_html(
            &mut badge,
            Lang::En,
            State::Declared,
            Some(Qualifier::Partial),
        );
        assert_eq!(
            html,
            format!(
                "<tr class=\"item-row\" data-id=\"ceph\"><td><a class=\"item-name\" href=\"/items/ceph\">\
                 Ceph &amp; RBD</a><div class=\"summary\">Block storage.</div></td><td class=\"nowrap\">{badge}\
                 </td><td><a href=\"/layers/l1\">1 · Storage</a></td><td class=\"sites\">\
                 <span class=\"site-tag\">sp</span><span class=\"site-tag\">franca</span></td></tr>"
            )
        );
    }

    #[test]
    fn a_row_without_sites_or_summary_says_platform_wide_in_the_readers_language() {
        let html = rows_html(&[row("x", "X", "", &[])], &storage(), Lang::PtBr);
        assert!(!html.contains("summary"), "{html}");
        assert!(
            html.contains(&format!(
                "<span class=\"muted\">{}</span>",
                t(Lang::PtBr, "platform-wide")
            )),
            "{html}"
        );
    }

    #[test]
    fn catalog_text_in_a_row_cannot_open_an_element_or_leave_an_attribute() {
        let html = rows_html(
            &[row(
                "a\"><script>alert(1)</script>",
                "<img src=x onerror=alert(1)>",
                "</td></tr><tr><td>",
                &["<b>sp</b>"],
            )],
            &[layer("l1", "1", "<i>Storage</i>")],
            Lang::En,
        );
        for hostile in ["<script", "<img", "</td></tr><tr>", "<b>", "a\">", "<i>"] {
            assert!(!html.contains(hostile), "{hostile} in {html}");
        }
        // Exactly one row with its four cells.
        assert_eq!(html.matches("<tr").count(), 1);
        assert_eq!(html.matches("<td").count(), 4);
    }

    #[test]
    fn each_row_names_its_own_layer_and_a_layer_not_in_the_catalog_by_its_id() {
        let mut physical = row("rack", "Rack", "", &[]);
        physical.layer = "l0".into();
        let mut lost = row("old", "Old", "", &[]);
        lost.layer = "l9".into();
        let rows = [
            row("a", "A", "", &[]),
            physical,
            row("b", "B", "", &[]),
            lost,
        ];
        let html = rows_html(&rows, &storage(), Lang::En);
        let links: Vec<&str> = html
            .match_indices("<a href=\"/layers/")
            .map(|(at, _)| {
                let rest = &html[at..];
                &rest[..rest.find("</a>").unwrap()]
            })
            .collect();
        assert_eq!(
            links,
            [
                "<a href=\"/layers/l1\">1 · Storage",
                "<a href=\"/layers/l0\">0 · Physical",
                "<a href=\"/layers/l1\">1 · Storage",
                "<a href=\"/layers/l9\">l9",
            ]
        );
    }

    #[test]
    fn a_filter_group_marks_the_chosen_chip_and_links_each_chip_with_the_other_filters() {
        let m = map(&[("site", "sp"), ("state", "declared"), ("page", "2")]);
        let options = [
            ("validated".to_string(), "Validated".to_string()),
            ("declared".to_string(), "Declared".to_string()),
        ];
        let found = chips(&m, "state", "Any".into(), &options);
        assert_eq!(
            found,
            [
                Chip {
                    value: None,
                    text: "Any".into(),
                    href: "/catalog?site=sp".into(),
                    active: false,
                },
                Chip {
                    value: Some("validated".into()),
                    text: "Validated".into(),
                    href: "/catalog?site=sp&state=validated".into(),
                    active: false,
                },
                Chip {
                    value: Some("declared".into()),
                    text: "Declared".into(),
                    href: "/catalog?site=sp&state=declared".into(),
                    active: true,
                },
            ]
        );
        assert_eq!(
            group_html("State", &found),
            "<span class=\"filter-label\">State</span>\
             <a href=\"/catalog?site=sp\" class=\"chip\">Any</a>\
             <a href=\"/catalog?site=sp&amp;state=validated\" data-value=\"validated\" class=\"chip\">Validated</a>\
             <a href=\"/catalog?site=sp&amp;state=declared\" aria-current=\"true\" data-value=\"declared\" \
             class=\"chip active\">Declared</a>"
        );
    }

    #[test]
    fn without_the_filter_only_the_any_chip_is_active_and_an_empty_value_marks_none() {
        let options = [("sp".to_string(), "São Paulo".to_string())];
        let unset = chips(&map(&[]), "site", "Any".into(), &options);
        assert_eq!(
            unset.iter().map(|c| c.active).collect::<Vec<_>>(),
            [true, false]
        );
        // `?site=` (an emptied search form) filters nothing but names no chip either.
        let empty = chips(&map(&[("site", "")]), "site", "Any".into(), &options);
        assert!(empty.iter().all(|c| !c.active));
    }

    #[test]
    fn catalog_text_in_a_filter_chip_cannot_open_an_element_or_leave_an_attribute() {
        let options = [(
            "a\"><script>alert(1)</script>".to_string(),
            "<img src=x onerror=alert(1)>".to_string(),
        )];
        let found = chips(
            &map(&[("q", "\"><b>")]),
            "layer",
            "<i>Any</i>".into(),
            &options,
        );
        let html = group_html("<u>Layer</u>", &found);
        for hostile in ["<script", "<img", "<b>", "<i>", "<u>", "a\">", "\"><"] {
            assert!(!html.contains(hostile), "{hostile} in {html}");
        }
        assert_eq!(html.matches("<a ").count(), 2);
        assert_eq!(html.matches("<span").count(), 1);
    }

    #[test]
    fn a_new_filter_drops_the_page_and_keeps_the_others() {
        let m = map(&[("site", "sp"), ("page", "4"), ("q", "x")]);
        assert_eq!(
            href_with(&m, "state", Some("validated")),
            "/catalog?site=sp&state=validated&q=x"
        );
        assert_eq!(href_with(&m, "site", None), "/catalog?q=x");
        assert_eq!(
            href_with(&m, "page", Some("5")),
            "/catalog?site=sp&q=x&page=5"
        );
    }
}
