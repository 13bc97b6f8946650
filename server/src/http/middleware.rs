//! Every layer the HTTP server wraps around its routes, in one place.
//!
//! Outermost first: request id, tracing, request-id propagation to the response, timeout,
//! compression (streaming, then whole bodies), security headers.
//!
//! ## Compression
//! Responses of at least [`COMPRESS_MIN_BYTES`] are gzipped at the fastest level when the
//! client accepts it. Below that the gzip header and the compressor's set-up cost more than the
//! bytes saved (an item by id is ~500 bytes), and at the default level compressing a list page
//! cost more CPU than building it; the fastest level still shrinks a 50-item JSON list about 8
//! times and a catalog page about 14 times.
//!
//! Two layers share the work. The inner one, [`compression::gzip_whole_bodies`], takes the
//! bodies of up to [`compression::WHOLE_MAX_BYTES`] (every page and API answer) and compresses
//! each in one call with a compressor its thread keeps; tower-http's layer around it streams
//! what is left (a longer body: the debug bundle, a large export) and leaves alone what the
//! inner one already encoded (ADR 0033).
//!
//! ## Content Security Policy
//! The UI is Leptos with server-side rendering and hydration. Hydration loads a wasm module
//! (`script-src 'self'` plus `'wasm-unsafe-eval'` to compile it) from a small inline
//! `<script type="module">` that Leptos writes into every page, with the resources' data in
//! inline scripts beside it. Leptos puts a fresh nonce on each of those scripts, and the UI's
//! pages answer with [`csp_with_nonce`], which allows that nonce and no other inline script:
//! a `javascript:` link or an injected `<script>` never runs. Every other response gets
//! [`CONTENT_SECURITY_POLICY`], which allows no inline script at all. Styles keep
//! `'unsafe-inline'` (the graph and the bars set `style` attributes). Everything else is
//! locked to our own origin, nothing may frame the portal, and forms post only to it.
//! Responses that set their own CSP keep it (`if_not_present`).
//!
//! ## Transport
//! With an `https` public URL every response carries `Strict-Transport-Security` for two
//! years (not `includeSubDomains`: the portal does not speak for its neighbours' names).

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
        predicate::{And, DefaultPredicate, Predicate, SizeAbove},
    },
    request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer},
    services::ServeDir,
    set_header::SetResponseHeaderLayer,
    timeout::TimeoutLayer,
    trace::TraceLayer,
};

use super::compression;

/// The policy of every response that is not a UI page: no inline script at all.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
     script-src 'self' 'wasm-unsafe-eval'; \
     style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; \
     font-src 'self'; \
     connect-src 'self'; \
     object-src 'none'; \
     base-uri 'self'; \
     frame-ancestors 'none'; \
     form-action 'self'";

/// The policy of a UI page whose inline scripts carry `nonce`: the same, with that nonce
/// allowed.
pub(crate) fn csp_with_nonce(nonce: &str) -> String {
    CONTENT_SECURITY_POLICY.replacen(
        "script-src 'self'",
        &format!("script-src 'self' 'nonce-{nonce}'"),
        1,
    )
}

/// `Strict-Transport-Security` for an https public URL.
const HSTS: &str = "max-age=63072000";

/// Smallest response body that is compressed, in bytes.
pub(crate) const COMPRESS_MIN_BYTES: u16 = 1024;

/// What both compression layers take: tower-http's default predicate (not an image, an event
/// stream or gRPC) and a body not known to be shorter than [`COMPRESS_MIN_BYTES`].
pub(crate) fn compressible() -> And<DefaultPredicate, SizeAbove> {
    DefaultPredicate::new().and(SizeAbove::new(COMPRESS_MIN_BYTES))
}

/// The header carrying the request id, set when the client did not send one.
static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Wraps the whole application in the common layers.
pub(crate) fn apply(router: Router, request_timeout: Duration, https: bool) -> Router {
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
                .compress_when(compressible()),
        )
        .layer(axum::middleware::from_fn(compression::gzip_whole_bodies))
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
        ))
        .option_layer(https.then(|| {
            SetResponseHeaderLayer::if_not_present(
                header::STRICT_TRANSPORT_SECURITY,
                HeaderValue::from_static(HSTS),
            )
        }));
    router.layer(layers)
}

/// Request ids for requests that came without one: a random 64-bit prefix drawn once per
/// process, then a counter, as 32 hex digits (`3f9c…-000000000000002a`).
///
/// Ids only need to tell requests apart in the logs, not to be secret, so this spares every
/// request a draw from the operating system's random source; the prefix keeps ids of
/// different processes and restarts apart.
#[derive(Debug, Clone)]
pub(crate) struct SequentialRequestId {
    prefix: u64,
    next: Arc<AtomicU64>,
}

impl SequentialRequestId {
    /// Ids starting with `prefix`, counting from 1.
    pub(crate) fn new(prefix: u64) -> Self {
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
/// The pages name the bundle by its content-hashed names (`mirante-<16 hex>.{js,wasm,css}`,
/// see [`bundle_name`]): those never change, so browsers keep them a year without asking
/// (`public, max-age=31536000, immutable`) and a second visit downloads nothing. Every other
/// file (the unhashed names the plain sign-in pages use) must be revalidated (`no-cache`); the
/// `Last-Modified` that `ServeDir` sends turns that into a cheap 304.
///
/// A release build writes a brotli and a gzip copy next to each file (`cargo xtask build
/// --release`); a client that accepts one gets it as it is, and the compression layer leaves
/// a response that already has a `Content-Encoding` alone. Without copies (a debug build),
/// the compression layer gzips the file on the fly.
pub(crate) fn static_files<S: Clone + Send + Sync + 'static>(leptos: &LeptosOptions) -> Router<S> {
    let dir = PathBuf::from(leptos.site_root.as_ref()).join(leptos.site_pkg_dir.as_ref());
    let path = format!("/{}", leptos.site_pkg_dir.trim_matches('/'));
    let service = ServiceBuilder::new()
        .layer(axum::middleware::from_fn(cache_by_name))
        // The body depends on Accept-Encoding whichever file is sent; the compression layer
        // only says so for the responses it compresses itself.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::VARY,
            HeaderValue::from_static("accept-encoding"),
        ))
        .service(ServeDir::new(dir).precompressed_br().precompressed_gzip());
    Router::new().nest_service(&path, service)
}

/// How long a browser keeps a file whose name holds its content's hash.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// `Cache-Control` by the file's name: a year for a hashed name answered with success,
/// revalidation for anything else.
async fn cache_by_name(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let hashed = is_hashed_name(request.uri().path());
    let mut response = next.run(request).await;
    let value = if hashed && response.status().is_success() {
        IMMUTABLE
    } else {
        "no-cache"
    };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    response
}

/// Whether the last segment of `path` is `<name>-<16 hex>.<extension>`, as
/// `cargo xtask build` names the bundle.
fn is_hashed_name(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or_default();
    let Some((stem, _ext)) = file.split_once('.') else {
        return false;
    };
    stem.rsplit_once('-').is_some_and(|(name, hash)| {
        !name.is_empty()
            && hash.len() == 16
            && hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The bundle's name `cargo xtask build` wrote to `<pkg>/bundle.txt` (`mirante-<16 hex>`),
/// when there is a valid one; the pages then name its hashed files.
pub(crate) fn bundle_name(pkg: &std::path::Path, output: &str) -> Option<String> {
    let text = std::fs::read_to_string(pkg.join("bundle.txt")).ok()?;
    let name = text.trim();
    (name.starts_with(&format!("{output}-")) && is_hashed_name(&format!("{name}.js")))
        .then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use axum::body::to_bytes;
    use tower::ServiceExt;

    use super::*;

    /// A site whose `pkg` holds `mirante.wasm` and, when `copies`, its compressed copies (marked
    /// contents, so a test sees which file was sent).
    fn site(copies: bool) -> (tempfile::TempDir, Router) {
        let root = tempfile::tempdir().unwrap();
        let pkg = root.path().join("pkg");
        std::fs::create_dir(&pkg).unwrap();
        std::fs::write(pkg.join("mirante.wasm"), "wasm bytes ".repeat(1000)).unwrap();
        if copies {
            std::fs::write(pkg.join("mirante.wasm.br"), "the brotli copy").unwrap();
            std::fs::write(pkg.join("mirante.wasm.gz"), "the gzip copy").unwrap();
        }
        let options = LeptosOptions::builder()
            .output_name("mirante")
            .site_root(root.path().to_str().unwrap())
            .site_pkg_dir("pkg")
            .build();
        let router = apply(static_files(&options), Duration::from_secs(5), false);
        (root, router)
    }

    /// The `Content-Encoding` and body of `/pkg/mirante.wasm` asked with `accept_encoding`.
    async fn wasm(router: &Router, accept_encoding: Option<&str>) -> (Option<String>, Vec<u8>) {
        let mut request = Request::get("/pkg/mirante.wasm");
        if let Some(accept) = accept_encoding {
            request = request.header(header::ACCEPT_ENCODING, accept);
        }
        let response = router
            .clone()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let vary: Vec<_> = response.headers().get_all(header::VARY).iter().collect();
        assert_eq!(
            vary,
            ["accept-encoding"],
            "caches keep one copy per encoding"
        );
        let encoding = response
            .headers()
            .get(header::CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (encoding, body.to_vec())
    }

    #[tokio::test]
    async fn the_bundle_is_sent_as_its_compressed_copy_the_browser_accepts() {
        let (_root, router) = site(true);

        let (encoding, body) = wasm(&router, Some("gzip, deflate, br")).await;
        assert_eq!(encoding.as_deref(), Some("br"));
        assert_eq!(
            body, b"the brotli copy",
            "the copy as written, not compressed again"
        );

        let (encoding, body) = wasm(&router, Some("gzip")).await;
        assert_eq!(encoding.as_deref(), Some("gzip"));
        assert_eq!(body, b"the gzip copy");

        let (encoding, body) = wasm(&router, None).await;
        assert_eq!(encoding, None);
        assert_eq!(body, "wasm bytes ".repeat(1000).as_bytes());
    }

    #[tokio::test]
    async fn hashed_names_are_kept_a_year_and_everything_else_is_revalidated() {
        let (root, router) = site(false);
        let pkg = root.path().join("pkg");
        std::fs::write(pkg.join("mirante-0123456789abcdef.js"), "js").unwrap();
        let cache = |path: &'static str| {
            let router = router.clone();
            async move {
                let response = router
                    .oneshot(Request::get(path).body(Body::empty()).unwrap())
                    .await
                    .unwrap();
                (
                    response.status(),
                    response.headers()[header::CACHE_CONTROL]
                        .to_str()
                        .unwrap()
                        .to_owned(),
                )
            }
        };

        assert_eq!(
            cache("/pkg/mirante-0123456789abcdef.js").await,
            (StatusCode::OK, IMMUTABLE.to_owned())
        );
        assert_eq!(
            cache("/pkg/mirante.wasm").await,
            (StatusCode::OK, "no-cache".to_owned())
        );
        assert_eq!(
            cache("/pkg/mirante-fedcba9876543210.js").await,
            (StatusCode::NOT_FOUND, "no-cache".to_owned()),
            "a miss is not kept"
        );
    }

    #[test]
    fn the_bundle_name_is_read_from_bundle_txt_when_it_is_one() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(bundle_name(root.path(), "mirante"), None, "no file");
        std::fs::write(root.path().join("bundle.txt"), "mirante-0123456789abcdef\n").unwrap();
        assert_eq!(
            bundle_name(root.path(), "mirante").as_deref(),
            Some("mirante-0123456789abcdef")
        );
        std::fs::write(
            root.path().join("bundle.txt"),
            "../../etc/passwd-0123456789abcdef",
        )
        .unwrap();
        assert_eq!(bundle_name(root.path(), "mirante"), None);
        assert!(!is_hashed_name("/pkg/mirante.js"));
        assert!(!is_hashed_name("/pkg/mirante-0123456789ABCDEF.js"));
        assert!(is_hashed_name("/pkg/mirante-0123456789abcdef.wasm.br"));
    }

    #[tokio::test]
    async fn a_bundle_without_copies_is_gzipped_on_the_fly() {
        let (_root, router) = site(false);

        let (encoding, body) = wasm(&router, Some("gzip, br")).await;

        assert_eq!(encoding.as_deref(), Some("gzip"));
        assert_eq!(&body[..2], [0x1f, 0x8b], "a gzip stream");
        assert!(body.len() < 1000, "{} bytes", body.len());
    }

    #[tokio::test]
    async fn a_page_is_gzipped_once_whole_and_a_longer_body_as_a_stream() {
        use std::io::Read;

        let page = "<p>an item</p>".repeat(400);
        let long = "a line of an export\n".repeat(2 * compression::WHOLE_MAX_BYTES / 20);
        let (page_body, long_body) = (page.clone(), long.clone());
        let router = Router::new()
            .route(
                "/page",
                axum::routing::get(move || async move { axum::response::Html(page_body) }),
            )
            .route(
                "/long",
                axum::routing::get(move || async move {
                    let pieces: Vec<Result<String, std::io::Error>> = long_body
                        .as_bytes()
                        .chunks(64 * 1024)
                        .map(|c| Ok(String::from_utf8(c.to_vec()).unwrap()))
                        .collect();
                    (
                        [(header::CONTENT_TYPE, "text/plain")],
                        Body::from_stream(futures_util::stream::iter(pieces)),
                    )
                }),
            );
        let router = apply(router, Duration::from_secs(5), false);

        for (path, sent, whole) in [("/page", &page, true), ("/long", &long, false)] {
            let response = router
                .clone()
                .oneshot(
                    Request::get(path)
                        .header(header::ACCEPT_ENCODING, "gzip, deflate, br")
                        .body(Body::empty())
                        .unwrap(),
                )
                .await
                .unwrap();
            let headers = response.headers().clone();
            assert_eq!(headers[header::CONTENT_ENCODING], "gzip", "{path}");
            let vary: Vec<_> = headers.get_all(header::VARY).iter().collect();
            assert_eq!(vary, ["accept-encoding"], "{path}");
            assert_eq!(
                headers.contains_key(header::CONTENT_LENGTH),
                whole,
                "{path}"
            );
            let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
            let mut text = String::new();
            flate2::read::GzDecoder::new(&body[..])
                .read_to_string(&mut text)
                .unwrap();
            assert_eq!(&text, sent, "{path}: compressed once, nothing lost");
        }
    }

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
