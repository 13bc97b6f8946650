//! The application shell, layout and routes.

use leptos::prelude::*;
use leptos_meta::{Html, Link, Meta, MetaTags, Title, provide_meta_context};
use leptos_router::{
    ParamSegment, SsrMode, StaticSegment,
    components::{A, Route, Router, Routes},
};

use mirante_domain::Role;

use crate::{
    api::get_viewer,
    components::NotFound,
    i18n::{I18n, Lang, initial_lang, t, use_i18n},
    pages::{
        catalog::CatalogPage,
        decisions::DecisionsPage,
        findings::FindingsPage,
        item::ItemView,
        item_change::ItemChangePage,
        layer::LayerView,
        overview::OverviewView,
        proposed::ProposedChangePage,
        requests::{RequestPage, RequestsPage},
        resources::{ResourcePage, ResourcePreviewView, ResourcesPage},
        roadmap::{RoadmapGraphView, RoadmapView},
        search::SearchPage,
        selfservice::{PreviewPageView, TemplateFormPage, TemplateProblemsPage, TemplatesPage},
        sites::{SitePage, SitesPage},
    },
};

/// The HTML document around the app, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link
                    rel="stylesheet"
                    id="mirante"
                    href=format!("/{}/{}.css", options.site_pkg_dir, options.output_name)
                />
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The application: layout, language and routes.
///
/// Pages render with `SsrMode::Async`: the server waits for their data (in memory, so it is
/// quick) and sends complete HTML, which reads the same with JavaScript off.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let i18n = I18n::new(initial_lang());
    provide_context(i18n);

    view! {
        <Html attr:lang=move || i18n.lang().tag()/>
        <Link rel="icon" href="data:,"/>
        <Meta name="description" content="Mirante — the platform catalogue and self-service portal"/>
        <Title formatter=|text: String| {
            if text.is_empty() { "Mirante".to_string() } else { format!("{text} · Mirante") }
        }/>
        <Router>
            // Outside the router (`rel="external"`): the browser itself moves to `#main`.
            <a class="skip-link" href="#main" rel="external">{i18n.tr("skip-to-content")}</a>
            <Header/>
            <FocusOnNavigate/>
            <main id="main" tabindex="-1">
                <Routes fallback=NotFound>
                    <Route path=StaticSegment("") view=OverviewView ssr=SsrMode::Async/>
                    <Route path=StaticSegment("catalog") view=CatalogPage ssr=SsrMode::Async/>
                    <Route
                        path=(StaticSegment("layers"), ParamSegment("id"))
                        view=LayerView
                        ssr=SsrMode::Async
                    />
                    <Route
                        path=(StaticSegment("items"), ParamSegment("id"))
                        view=ItemView
                        ssr=SsrMode::Async
                    />
                    <Route
                        path=(StaticSegment("items"), ParamSegment("id"), StaticSegment("change"))
                        view=ItemChangePage
                        ssr=SsrMode::Async
                    />
                    <Route path=StaticSegment("decisions") view=DecisionsPage ssr=SsrMode::Async/>
                    <Route path=StaticSegment("sites") view=SitesPage ssr=SsrMode::Async/>
                    <Route
                        path=(StaticSegment("sites"), ParamSegment("id"))
                        view=SitePage
                        ssr=SsrMode::Async
                    />
                    <Route path=StaticSegment("roadmap") view=RoadmapView ssr=SsrMode::Async/>
                    <Route
                        path=(StaticSegment("roadmap"), StaticSegment("graph"))
                        view=RoadmapGraphView
                        ssr=SsrMode::Async
                    />
                    <Route path=StaticSegment("findings") view=FindingsPage ssr=SsrMode::Async/>
                    <Route path=StaticSegment("search") view=SearchPage ssr=SsrMode::Async/>
                    <Route
                        path=StaticSegment("self-service")
                        view=TemplatesPage
                        ssr=SsrMode::Async
                    />
                    <Route
                        path=(StaticSegment("self-service"), ParamSegment("template"))
                        view=TemplateFormPage
                        ssr=SsrMode::Async
                    />
                    <Route
                        path=(
                            StaticSegment("self-service"),
                            ParamSegment("template"),
                            StaticSegment("preview"),
                        )
                        view=PreviewPageView
                        ssr=SsrMode::Async
                    />
                    <Route path=StaticSegment("requests") view=RequestsPage ssr=SsrMode::Async/>
                    <Route path=StaticSegment("resources") view=ResourcesPage ssr=SsrMode::Async/>
                    <Route
                        path=(StaticSegment("resources"), ParamSegment("id"))
                        view=ResourcePage
                        ssr=SsrMode::Async
                    />
                    <Route
                        path=(StaticSegment("resources"), ParamSegment("id"), StaticSegment("preview"))
                        view=ResourcePreviewView
                        ssr=SsrMode::Async
                    />
                    <Route
                        path=(StaticSegment("requests"), ParamSegment("id"), StaticSegment("change"))
                        view=ProposedChangePage
                        ssr=SsrMode::Async
                    />
                    <Route
                        path=(StaticSegment("requests"), ParamSegment("id"))
                        view=RequestPage
                        ssr=SsrMode::Async
                    />
                    <Route
                        path=(StaticSegment("admin"), StaticSegment("templates"))
                        view=TemplateProblemsPage
                        ssr=SsrMode::Async
                    />
                </Routes>
            </main>
            <footer class="footer">
                <span>{i18n.tr("footer-text")}</span>
            </footer>
        </Router>
    }
}

/// After a client-side navigation, moves the focus to the new page's main heading, so keyboard
/// and screen reader users start on the page they opened, not at the top of the document.
/// Filter changes (the same path, another query) leave the focus where it is.
#[component]
fn FocusOnNavigate() -> impl IntoView {
    #[cfg(feature = "hydrate")]
    {
        let location = leptos_router::hooks::use_location();
        Effect::new(move |prev: Option<()>| {
            location.pathname.track();
            if prev.is_some() {
                focus::heading_after_navigation();
            } else {
                focus::remember_heading();
            }
        });
    }
}

#[cfg(feature = "hydrate")]
mod focus {
    use std::{cell::RefCell, time::Duration};

    use leptos::prelude::{document, set_timeout};
    use wasm_bindgen::JsCast;

    thread_local! {
        /// The heading on screen before the navigation, to tell the new page's from it.
        static LAST: RefCell<Option<web_sys::Element>> = const { RefCell::new(None) };
    }

    fn current() -> Option<web_sys::Element> {
        document().query_selector("main h1").ok().flatten()
    }

    pub fn remember_heading() {
        LAST.with(|l| *l.borrow_mut() = current());
    }

    /// Waits (up to two seconds) for the new page's heading, which may arrive with its data.
    pub fn heading_after_navigation() {
        try_focus(40);
    }

    fn try_focus(tries: u32) {
        let heading = current().filter(|h| {
            let stale = LAST.with(|l| l.borrow().as_ref().is_some_and(|old| old == h));
            !stale || tries == 0
        });
        match heading.and_then(|h| h.dyn_into::<web_sys::HtmlElement>().ok()) {
            Some(h) => {
                let _ = h.set_attribute("tabindex", "-1");
                let _ = h.focus();
                LAST.with(|l| *l.borrow_mut() = Some(h.into()));
            }
            None if tries > 0 => {
                set_timeout(move || try_focus(tries - 1), Duration::from_millis(50));
            }
            None => {}
        }
    }
}

/// The top bar: brand, navigation and the language switch.
#[component]
fn Header() -> impl IntoView {
    let i18n = use_i18n();
    let location = leptos_router::hooks::use_location();
    let viewer = Resource::new(|| (), |_| get_viewer());
    // On a small screen the navigation, the user menu and the language switch fold behind a
    // Menu button; they close again when the reader goes to another page.
    let open = RwSignal::new(false);
    Effect::new(move |_| {
        location.pathname.track();
        open.set(false);
    });
    view! {
        <header class="topbar">
            <a class="brand" href="/">
                <span class="brand-mark" aria-hidden="true">"◭"</span>
                "Mirante"
            </a>
            <button
                type="button"
                class="menu-toggle"
                aria-controls="site-menu"
                aria-expanded=move || if open.get() { "true" } else { "false" }
                on:click=move |_| open.update(|o| *o = !*o)
            >
                <span aria-hidden="true">"☰"</span>
                {i18n.tr("menu")}
            </button>
            <div id="site-menu" class="site-menu" class:open=move || open.get()>
            <nav class="nav" aria-label=i18n.tr("nav-label")>
                <A href="/" exact=true>{i18n.tr("nav-overview")}</A>
                <A href="/catalog">{i18n.tr("nav-catalog")}</A>
                <A href="/sites">{i18n.tr("nav-sites")}</A>
                <A href="/decisions">{i18n.tr("nav-decisions")}</A>
                <A href="/roadmap">{i18n.tr("nav-roadmap")}</A>
                // Self-service is for signed-in users; the findings for admins.
                <Transition fallback=|| ()>
                    {move || Suspend::new(async move {
                        viewer
                            .await
                            .ok()
                            .flatten()
                            .map(|v| {
                                view! {
                                    <A href="/self-service">{i18n.tr("nav-self-service")}</A>
                                    <A href="/requests">{i18n.tr("nav-requests")}</A>
                                    <A href="/resources">{i18n.tr("nav-resources")}</A>
                                    {(v.role == Role::Admin)
                                        .then(|| {
                                            view! { <A href="/findings">{i18n.tr("nav-findings")}</A> }
                                        })}
                                }
                            })
                    })}
                </Transition>
            </nav>
            <form class="header-search" role="search" method="get" action="/search">
                <label class="visually-hidden" for="header-q">{i18n.tr("search-label")}</label>
                <input
                    id="header-q"
                    type="search"
                    name="q"
                    maxlength="200"
                    placeholder=move || t(i18n.lang(), "header-search-placeholder")
                />
            </form>
            <UserMenu viewer/>
            <div class="lang-switch" role="group" aria-label=i18n.tr("lang-label")>
                {Lang::ALL
                    .into_iter()
                    .map(|lang| {
                        // A plain link without JavaScript (the server sets the cookie); after
                        // hydration the click switches in place.
                        let href = move || format!("{}?lang={}", location.pathname.get(), lang.tag());
                        view! {
                            <a
                                href=href
                                rel="external"
                                class:active=move || i18n.lang() == lang
                                aria-current=move || (i18n.lang() == lang).then_some("true")
                                lang=lang.tag()
                                on:click=move |ev| {
                                    ev.prevent_default();
                                    i18n.set(lang);
                                }
                            >
                                {lang.label()}
                            </a>
                        }
                    })
                    .collect_view()}
            </div>
            </div>
        </header>
    }
}

/// Who is signed in, with a sign-out button; or a sign-in link.
#[component]
fn UserMenu(
    viewer: Resource<Result<Option<mirante_domain::Viewer>, ServerFnError>>,
) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match viewer.await {
                    Ok(Some(v)) => {
                        let admin = v.role == Role::Admin;
                        view! {
                            <div class="user-menu">
                                {v.dev_login
                                    .then(|| {
                                        view! {
                                            <span class="dev-banner" title=i18n.tr("dev-login-help")>
                                                {i18n.tr("dev-login-banner")}
                                            </span>
                                        }
                                    })}
                                <a class="user-name" href="/profile" title=v.username.clone()>
                                    {v.name.clone()}
                                </a>
                                <span class=if admin { "role role-admin" } else { "role" }>
                                    {if admin {
                                        i18n.tr("role-admin").into_any()
                                    } else {
                                        i18n.tr("role-researcher").into_any()
                                    }}
                                </span>
                                <form method="post" action="/auth/logout" class="logout">
                                    <input type="hidden" name="csrf_token" value=v.csrf_token.clone()/>
                                    <button type="submit">{i18n.tr("sign-out")}</button>
                                </form>
                            </div>
                        }
                            .into_any()
                    }
                    _ => view! {
                        <a class="sign-in" href="/auth/login" rel="external">{i18n.tr("sign-in")}</a>
                    }
                        .into_any(),
                }
            })}
        </Suspense>
    }
}
