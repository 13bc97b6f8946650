//! Every layer the HTTP server wraps around its routes, in one place.
//!
//! Outermost first: request id, tracing, request-id propagation to the response, timeout,
//! compression, security headers.
//!
//! ## Compression
//! Responses of at least [`COMPRESS_MIN_BYTES`] are gzipped at the fastest level when the
//! client accepts it. Below that the gzip header and the compressor's set-up cost more than the
//! bytes saved (an item by id is ~500 bytes), and at the default level compressing a list page
//! cost more CPU than building it; the fastest level still shrinks a 50-item JSON list about 8
//! times and a catalog page about 14 times.
//!
//! ## Content Security Policy
//! The UI is Leptos with server-side rendering and hydration. Hydration loads a wasm module
//! (`script-src 'self'` plus `'wasm-unsafe-eval'` to compile it) from a small inline
//! `<script type="module">` that Leptos writes into every page, so `script-src` also carries
//! `'unsafe-inline'`. A per-request nonce would let us drop it, but the UI would have to put
//! the nonce on every script it renders; until it does, `'unsafe-inline'` is the price of
//! hydration. Everything else is locked to our own origin, nothing may frame the portal, and
//! forms post only to it. Responses that set their own CSP keep it (`if_not_present`).

use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use axum::{
    Router,
    body::Body,
    http::{HeaderName, HeaderValue, Request, StatusCode, header},
};
use leptos::config::LeptosOptions;
use tower::ServiceBuilder;
use tower_http::{
    CompressionLevel,
    compression::{
        CompressionLayer,
        predicate::{DefaultPredicate, Predicate, SizeAbove},
    },
    request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer},
    services::ServeDir,
    set_header::SetResponseHeaderLayer,
    timeout::TimeoutLayer,
    trace::TraceLayer,
};

use crate::state::AppState;

/// The policy described in the module documentation.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
     script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; \
     style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; \
     font-src 'self'; \
     connect-src 'self'; \
     object-src 'none'; \
     base-uri 'self'; \
     frame-ancestors 'none'; \
     form-action 'self'";

/// Smallest response body that is compressed, in bytes.
pub const COMPRESS_MIN_BYTES: u16 = 1024;

/// The header carrying the request id, set when the client did not send one.
static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Wraps the whole application in the common layers.
pub fn apply(router: Router, request_timeout: Duration) -> Router {
    let layers = ServiceBuilder::new()
        .layer(SetRequestIdLayer::new(
            REQUEST_ID.clone(),
            SequentialRequestId::new(rand::random()),
        ))
        .layer(
            TraceLayer::new_for_http().make_span_with(|request: &Request<Body>| {
                let id = request
                    .headers()
                    .get(&REQUEST_ID)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("-");
                // The path only: query strings may one day carry tokens.
                tracing::info_span!(
                    "http.request",
                    http.method = %request.method(),
                    http.path = %request.uri().path(),
                    request.id = %id,
                )
            }),
        )
        .layer(PropagateRequestIdLayer::new(REQUEST_ID.clone()))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        ))
        .layer(
            CompressionLayer::new()
                .quality(CompressionLevel::Fastest)
                .compress_when(DefaultPredicate::new().and(SizeAbove::new(COMPRESS_MIN_BYTES))),
        )
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::REFERRER_POLICY,
            HeaderValue::from_static("strict-origin-when-cross-origin"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ));
    router.layer(layers)
}

/// Request ids for requests that came without one: a random 64-bit prefix drawn once per
/// process, then a counter, as 32 hex digits (`3f9c…-000000000000002a`).
///
/// Ids only need to tell requests apart in the logs, not to be secret, so this spares every
/// request a draw from the operating system's random source; the prefix keeps ids of
/// different processes and restarts apart.
#[derive(Debug, Clone)]
pub struct SequentialRequestId {
    prefix: u64,
    next: Arc<AtomicU64>,
}

impl SequentialRequestId {
    /// Ids starting with `prefix`, counting from 1.
    pub fn new(prefix: u64) -> Self {
        SequentialRequestId {
            prefix,
            next: Arc::new(AtomicU64::new(1)),
        }
    }

    fn next_value(&self) -> HeaderValue {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let text = format!("{:016x}-{n:016x}", self.prefix);
        HeaderValue::from_str(&text).expect("hex digits and a dash are a valid header value")
    }
}

impl MakeRequestId for SequentialRequestId {
    fn make_request_id<B>(&mut self, _request: &Request<B>) -> Option<RequestId> {
        Some(RequestId::new(self.next_value()))
    }
}

/// `/pkg`: the hydration bundle (JS, wasm, CSS) from `<site_root>/<site_pkg_dir>`.
///
/// The file names carry no content hash, so browsers must revalidate (`no-cache`); the
/// `Last-Modified` that `ServeDir` sends turns that into a cheap 304.
pub fn static_files(leptos: &LeptosOptions) -> Router<AppState> {
    let dir = PathBuf::from(leptos.site_root.as_ref()).join(leptos.site_pkg_dir.as_ref());
    let path = format!("/{}", leptos.site_pkg_dir.trim_matches('/'));
    let service = ServiceBuilder::new()
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        ))
        .service(ServeDir::new(dir));
    Router::new().nest_service(&path, service)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_share_the_process_prefix_and_never_repeat() {
        let ids = SequentialRequestId::new(0x3f9c_0000_0000_00a1);
        let copy = ids.clone();

        let first = ids.next_value();
        let second = copy.next_value();
        let third = ids.next_value();

        assert_eq!(first, "3f9c0000000000a1-0000000000000001");
        assert_eq!(second, "3f9c0000000000a1-0000000000000002");
        assert_eq!(third, "3f9c0000000000a1-0000000000000003");
    }
}
