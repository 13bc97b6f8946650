//! The web UI's routes (Leptos server-side rendering and server functions).

use crate::state::AppState;

/// The web UI's routes; merged last, after the API, so its catch-all never shadows an API path.
pub fn router(state: &AppState) -> axum::Router<AppState> {
    let _ = state;
    axum::Router::new()
}
