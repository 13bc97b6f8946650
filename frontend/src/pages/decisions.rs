//! The architectural decisions table.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::{
    api::list_decisions,
    components::{DecisionTable, Wait, loaded},
    i18n::{t, use_i18n},
};

/// The decisions page.
#[component]
pub fn DecisionsPage() -> impl IntoView {
    let i18n = use_i18n();
    let data = Resource::new(|| (), |_| list_decisions());
    view! {
        <Title text=move || t(i18n.lang(), "nav-decisions")/>
        <h1>{i18n.tr("decisions-title")}</h1>
        <p class="lead">{i18n.tr("decisions-lead")}</p>
        {loaded(Wait::Placeholder, data, move |d| {
            view! { <DecisionTable decisions=d.decisions adr_url=d.adr_url/> }.into_any()
        })}
    }
}
