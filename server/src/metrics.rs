//! Prometheus metrics, served on their own listener (`MIRANTE_METRICS_BIND`), never on the
//! public one.
//!
//! Recorded through the `metrics` facade and rendered by `metrics-exporter-prometheus`:
//!
//! | metric | labels | what |
//! |---|---|---|
//! | `mirante_http_requests_total` | `method`, `route`, `status` | requests answered; `route` is the route template (`/api/items/{id}`), `unmatched` for the rest |
//! | `mirante_http_request_duration_seconds` | same | histogram: time until the response's head |
//! | `mirante_worker_jobs_total` | `outcome` | proposing jobs run: `proposed`, `retry`, `moved_on`, `failed`, `lease_lost` (another worker took it over) |
//! | `mirante_forge_calls_total` | `forge`, `outcome` | calls to a hosted forge: `ok`, `client_error`, `server_error`, `rate_limited`, `transport_error`, `paused` (not sent while the forge's rate limit says to wait) |
//! | `mirante_forge_rate_limit_remaining` | `forge` | what the forge's last answer said is left of its rate limit (`X-RateLimit-Remaining`, `RateLimit-Remaining`) |
//! | `mirante_catalog_reloads_total` | `outcome` | reloads: `updated`, `unchanged`, `refused` |
//! | `mirante_catalog_info` | `hash`, `revision` | 1 for the catalog this replica serves |
//! | `mirante_db_connections` | `state` | the pool's connections: `in_use`, `idle`, `max` |
//! | `mirante_worker_oldest_job_age_seconds` | | how long the oldest unfinished proposing job has waited (0: none) |
//! | `mirante_notifications_total` | `channel`, `outcome` | notification deliveries (`email`, `webhook`): `sent`, `retry` (handed back with a backoff), `failed` (given up) |
//! | `mirante_notifications_pending` | | messages of the notification outbox not sent yet |
//! | `mirante_probe_checks` | `result` | the live checks' last results this replica serves: `ok`, `failing` |
//! | `mirante_catalog_items` | | items in it |
//! | `mirante_catalog_loaded_timestamp_seconds` | | when this replica loaded it |
//!
//! Until a metrics listener is configured no recorder is installed and every recording is a
//! no-op.

use std::{
    net::SocketAddr,
    sync::{Mutex, OnceLock, PoisonError},
    time::{Duration, Instant},
};

use axum::{
    Router,
    extract::{MatchedPath, Request, State},
    http::{Method, header},
    middleware::Next,
    response::{IntoResponse, Response},
    routing::get,
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use metrics_util::MetricKindMask;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::app::catalog::CatalogStore;

/// Latency buckets, in seconds: from a cached catalog read to the request timeout.
const BUCKETS: &[f64] = &[
    0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's recorder, installed on first use.
fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("mirante_http_request_duration_seconds".into()),
                BUCKETS,
            )
            .expect("the bucket list is not empty")
            // A catalog's info series that no scrape sets any more goes away.
            .idle_timeout(MetricKindMask::GAUGE, Some(Duration::from_secs(600)))
            .build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("another metrics recorder is installed; /metrics shows nothing");
        }
        handle
    })
}

/// The route template a response was routed by, handed from [`route`] to [`track`].
#[derive(Clone)]
struct RouteTemplate(String);

/// Outer middleware: counts and times every request by method, route template and status.
pub(crate) async fn track(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = match *req.method() {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    };
    let mut response = next.run(req).await;
    let route = response
        .extensions_mut()
        .remove::<RouteTemplate>()
        .map_or_else(|| "unmatched".to_owned(), |r| r.0);
    let labels = [
        ("method", method.to_owned()),
        ("route", route),
        ("status", response.status().as_u16().to_string()),
    ];
    metrics::counter!("mirante_http_requests_total", &labels).increment(1);
    metrics::histogram!("mirante_http_request_duration_seconds", &labels)
        .record(start.elapsed().as_secs_f64());
    response
}

/// Route middleware: passes the matched route template out to [`track`] (routing happens
/// inside the layers that wrap the router, where [`MatchedPath`] is not yet known).
pub(crate) async fn route(req: Request, next: Next) -> Response {
    let template = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned());
    let mut response = next.run(req).await;
    if let Some(template) = template {
        response.extensions_mut().insert(RouteTemplate(template));
    }
    response
}

/// A proposing job ended with `outcome`.
pub(crate) fn worker_job(outcome: &'static str) {
    metrics::counter!("mirante_worker_jobs_total", "outcome" => outcome).increment(1);
}

/// A notification delivery on `channel` ended with `outcome`: `sent`, `retry`, `failed`.
pub(crate) fn notification(channel: &'static str, outcome: &'static str) {
    metrics::counter!("mirante_notifications_total", "channel" => channel, "outcome" => outcome)
        .increment(1);
}

/// A call to a hosted forge ended with `outcome`: `ok`, `client_error`, `server_error`,
/// `rate_limited`, `transport_error`, or `paused` (not sent: the forge's rate limit).
pub(crate) fn forge_call(forge: &'static str, outcome: &'static str) {
    metrics::counter!("mirante_forge_calls_total", "forge" => forge, "outcome" => outcome)
        .increment(1);
}

/// What a hosted forge's last answer said is left of its rate limit.
pub(crate) fn forge_rate_limit_remaining(forge: &'static str, remaining: u64) {
    #[expect(
        clippy::cast_precision_loss,
        reason = "a gauge; budgets are far below 2^52"
    )]
    metrics::gauge!("mirante_forge_rate_limit_remaining", "forge" => forge).set(remaining as f64);
}

/// A catalog reload ended with `outcome`.
pub(crate) fn catalog_reload(outcome: &'static str) {
    metrics::counter!("mirante_catalog_reloads_total", "outcome" => outcome).increment(1);
}

/// The metrics listener, bound at start-up so that a taken address fails the start.
pub(crate) struct MetricsListener {
    listener: TcpListener,
    addr: SocketAddr,
}

impl MetricsListener {
    /// Binds `addr` and installs the recorder.
    pub(crate) async fn bind(addr: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        handle();
        Ok(MetricsListener { listener, addr })
    }

    /// The address it listens on.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves `GET /metrics` until `stop` is cancelled.
    pub(crate) fn spawn(
        self,
        catalog: std::sync::Arc<CatalogStore>,
        db: crate::adapters::db::Db,
        probes: std::sync::Arc<crate::app::probes::ProbeBoard>,
        stop: CancellationToken,
    ) {
        let router = Router::new()
            .route("/metrics", get(scrape))
            .with_state(Scrape {
                catalog,
                db,
                probes,
                shown: std::sync::Arc::new(Mutex::new(None)),
            });
        tracing::info!(metrics.addr = %self.addr, "metrics listening");
        tokio::spawn(async move {
            let served = axum::serve(self.listener, router)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await;
            if let Err(error) = served {
                tracing::error!(%error, "the metrics listener failed");
            }
        });
    }
}

#[derive(Clone)]
struct Scrape {
    catalog: std::sync::Arc<CatalogStore>,
    db: crate::adapters::db::Db,
    probes: std::sync::Arc<crate::app::probes::ProbeBoard>,
    /// The catalog labels last shown, set to 0 when another catalog takes over.
    shown: std::sync::Arc<Mutex<Option<(String, String)>>>,
}

async fn scrape(State(scrape): State<Scrape>) -> impl IntoResponse {
    let current = scrape.catalog.current();
    let labels = (
        current.snapshot.hash.clone(),
        current.snapshot.revision.clone().unwrap_or_default(),
    );
    {
        let mut shown = scrape.shown.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((hash, revision)) = shown.as_ref().filter(|s| **s != labels) {
            metrics::gauge!("mirante_catalog_info", "hash" => hash.clone(), "revision" => revision.clone()).set(0.0);
        }
        metrics::gauge!("mirante_catalog_info", "hash" => labels.0.clone(), "revision" => labels.1.clone()).set(1.0);
        *shown = Some(labels);
    }
    metrics::gauge!("mirante_catalog_items").set(current.snapshot.catalog().items.len() as f64);
    metrics::gauge!("mirante_catalog_loaded_timestamp_seconds")
        .set(current.loaded_at.timestamp() as f64);
    let pool = scrape.db.pool_use();
    let in_use = (pool.open as usize).saturating_sub(pool.idle);
    metrics::gauge!("mirante_db_connections", "state" => "in_use").set(in_use as f64);
    metrics::gauge!("mirante_db_connections", "state" => "idle").set(pool.idle as f64);
    metrics::gauge!("mirante_db_connections", "state" => "max").set(f64::from(pool.max));
    // An unreadable database shows as no sample rather than a wrong one.
    match scrape.db.oldest_open_job().await {
        Ok(oldest) => {
            let age = oldest.map_or(0.0, |at| {
                (chrono::Utc::now() - at).num_milliseconds().max(0) as f64 / 1000.0
            });
            metrics::gauge!("mirante_worker_oldest_job_age_seconds").set(age);
        }
        Err(error) => tracing::warn!(%error, "metrics: cannot read the outbox"),
    }
    match scrape
        .db
        .count_notifications(mirante_domain::notification::DeliveryState::Pending)
        .await
    {
        Ok(pending) => metrics::gauge!("mirante_notifications_pending").set(pending as f64),
        Err(error) => tracing::warn!(%error, "metrics: cannot read the notification outbox"),
    }
    let results = scrape.probes.results();
    let failing = results.iter().filter(|r| !r.ok).count();
    metrics::gauge!("mirante_probe_checks", "result" => "ok").set((results.len() - failing) as f64);
    metrics::gauge!("mirante_probe_checks", "result" => "failing").set(failing as f64);
    let handle = handle();
    handle.run_upkeep();
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        handle.render(),
    )
}
