//! Mirante's web UI. Rendered on the server (`ssr`) and hydrated in the browser (`hydrate`).

pub mod api;
pub mod app;
pub mod components;
#[cfg(feature = "ssr")]
pub mod graph;
pub mod i18n;
pub mod pages;
#[cfg(feature = "ssr")]
pub mod ssr;

pub use app::{App, shell};

/// Entry point of the wasm bundle: hydrates the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
    // Lets browser tests (and curious readers of the DOM) know the page is interactive.
    if let Some(body) = leptos::prelude::document().body() {
        let _ = body.set_attribute("data-hydrated", "true");
    }
}
