//! The application shell, layout and routes.

use leptos::prelude::*;
use leptos_meta::{Html, Link, Meta, MetaTags, Stylesheet, Title, provide_meta_context};
use leptos_router::{
    ParamSegment, SsrMode, StaticSegment,
    components::{A, Route, Router, Routes},
};

use crate::{
    components::NotFound,
    i18n::{I18n, Lang, initial_lang},
    pages::{
        catalog::CatalogPage, decisions::DecisionsPage, item::ItemView, layer::LayerView,
        overview::OverviewView,
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
    let i18n = I18n(RwSignal::new(initial_lang()));
    provide_context(i18n);

    view! {
        <Html attr:lang=move || i18n.lang().tag()/>
        <Stylesheet id="mirante" href="/pkg/mirante.css"/>
        <Link rel="icon" href="data:,"/>
        <Meta name="description" content="Mirante — the platform catalogue and self-service portal"/>
        <Title formatter=|text: String| {
            if text.is_empty() { "Mirante".to_string() } else { format!("{text} · Mirante") }
        }/>
        <Router>
            <Header/>
            <main id="main">
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
                    <Route path=StaticSegment("decisions") view=DecisionsPage ssr=SsrMode::Async/>
                </Routes>
            </main>
            <footer class="footer">
                <span>{i18n.tr("footer-text")}</span>
            </footer>
        </Router>
    }
}

/// The top bar: brand, navigation and the language switch.
#[component]
fn Header() -> impl IntoView {
    let i18n = leptos::prelude::expect_context::<I18n>();
    view! {
        <header class="topbar">
            <a class="brand" href="/">
                <span class="brand-mark" aria-hidden="true">"◭"</span>
                "Mirante"
            </a>
            <nav class="nav" aria-label=i18n.tr("nav-label")>
                <A href="/" exact=true>{i18n.tr("nav-overview")}</A>
                <A href="/catalog">{i18n.tr("nav-catalog")}</A>
                <A href="/decisions">{i18n.tr("nav-decisions")}</A>
            </nav>
            <div class="lang-switch" role="group" aria-label=i18n.tr("lang-label")>
                {Lang::ALL
                    .into_iter()
                    .map(|lang| {
                        view! {
                            <button
                                type="button"
                                class:active=move || i18n.lang() == lang
                                aria-pressed=move || (i18n.lang() == lang).to_string()
                                lang=lang.tag()
                                on:click=move |_| i18n.set(lang)
                            >
                                {lang.label()}
                            </button>
                        }
                    })
                    .collect_view()}
            </div>
        </header>
    }
}
