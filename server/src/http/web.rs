//! The web UI's routes (Leptos server-side rendering and server functions).

use std::sync::{Arc, OnceLock};

use axum::http::{HeaderValue, header};
use axum::{
    body::Body,
    http::{Request, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use leptos::{
    config::LeptosOptions,
    nonce::use_nonce,
    prelude::{IntoView, provide_context, use_context},
};
use leptos_axum::{AxumRouteListing, LeptosRoutes, ResponseOptions, generate_route_list};
use mirante_frontend::{App, shell, ssr::SelfServiceHandle};

use crate::{http::middleware::csp_with_nonce, http::state::AppState, http::ui::UiSelfService};

/// The web UI's routes; merged last, after the API, so its catch-all never shadows an API path.
pub(crate) fn router(state: &AppState) -> axum::Router<AppState> {
    let routes = route_list().to_vec();
    let context = context(state);
    let options = state.leptos.clone();
    // Leptos routes each server function at its own path (`/_fn/<endpoint>`, the `prefix` of
    // `frontend/src/api.rs`) with the same context; the access policy answers any other
    // `/_fn/` path 404 before routing.
    axum::Router::new()
        .leptos_routes_with_context(state, routes, context.clone(), move || {
            page(options.clone())
        })
        // Paths of the access table that no page matches (the policy answers every other
        // path itself) render the UI's "not found" page with a 404 status.
        .fallback(leptos_axum::file_and_error_handler_with_context::<
            AppState,
            _,
        >(context, page))
        .layer(axum::middleware::from_fn(server_fn_status))
}

/// The page shell, answered with a Content Security Policy that allows exactly the inline
/// scripts Leptos writes for this response: they carry its nonce.
fn page(options: LeptosOptions) -> impl IntoView {
    if let (Some(nonce), Some(response)) = (use_nonce(), use_context::<ResponseOptions>())
        && let Ok(csp) = HeaderValue::from_str(&csp_with_nonce(&nonce))
    {
        response.insert_header(header::CONTENT_SECURITY_POLICY, csp);
    }
    shell(options)
}

/// The UI's pages, walked from the app once per process.
///
/// Walking the app holds Leptos' process-wide switch that stops resources from loading (a
/// resource first polled while it is on never loads; leptos-rs/leptos#4773). Walking it again
/// while another server in the same process renders a page, as a second `Application` built in
/// a running process would, could leave that page waiting until the request timed out.
pub(crate) fn route_list() -> &'static [AxumRouteListing] {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App))
}

/// What pages and server functions find in their Leptos context: the catalog (with its
/// history) and self-service.
fn context(state: &AppState) -> impl Fn() + Clone + Send + Sync + 'static + use<> {
    let portal = state.portal();
    let selfservice: SelfServiceHandle = Arc::new(UiSelfService::new(
        Arc::clone(&state.selfservice),
        Arc::clone(&state.catalog),
    ));
    move || {
        provide_context(portal.clone());
        provide_context(selfservice.clone());
    }
}

/// Gives server functions' answers a client error status where the client erred (see
/// [`client_error_status`]); wraps every route of the UI, since Leptos routes each server
/// function by its own path.
async fn server_fn_status(req: Request<Body>, next: Next) -> Response {
    let server_fn = req.uri().path().starts_with("/_fn/");
    let response = next.run(req).await;
    if server_fn {
        client_error_status(response).await
    } else {
        response
    }
}

/// The largest error body read to tell a client's mistake from the server's.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// Leptos answers 500 for arguments it cannot read, before the function runs: those are the
/// client's mistake, so they answer 400, or 413 for a body over the limit. The function's
/// own refusals set their status themselves (403 for a stale form, …).
async fn client_error_status(response: Response) -> Response {
    if response.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, ERROR_BODY_LIMIT).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let text = String::from_utf8_lossy(&bytes);
    let client = ["Args|", "Deserialization|", "MissingArg|"]
        .iter()
        .any(|p| text.starts_with(p));
    if client {
        parts.status = if text.contains("length limit exceeded") {
            StatusCode::PAYLOAD_TOO_LARGE
        } else {
            StatusCode::BAD_REQUEST
        };
    }
    Response::from_parts(parts, Body::from(bytes))
}
