//! Building and running the server: database, migrations, catalog, routes, listener.

use std::{future::Future, net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context;
use axum::Router;
use leptos::config::{Env, LeptosOptions};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::{
    adapters::argocd::ArgoClient,
    adapters::db::{Db, notifications::OutboxRules},
    adapters::session_store::DbSessionStore,
    app::catalog::CatalogStore,
    app::notify::Deliverer,
    app::probes,
    app::selfservice::{
        self,
        deployments::{FollowSettings, Follower},
        service::SelfService,
        template::TemplateSet,
        worker::{Worker, WorkerSettings},
    },
    config::Config,
    http::{
        AppState, api,
        auth::{self, Auth},
        exports, middleware, web,
    },
    metrics,
};

/// A server that is ready to accept connections: database migrated, catalog loaded,
/// listener bound.
pub struct Application {
    listener: TcpListener,
    addr: SocketAddr,
    state: AppState,
    router: Router,
    sessions: DbSessionStore,
    checker: probes::Checker,
    follower: Option<Arc<Follower>>,
    deliverer: Option<Arc<Deliverer>>,
    metrics: Option<metrics::MetricsListener>,
}

impl Application {
    /// Binds `config.bind` and builds the server.
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        // Before binding: the development sign-in must not even listen on a public address.
        config.check_auth()?;
        let listener = TcpListener::bind(config.bind)
            .await
            .with_context(|| format!("cannot listen on {}", config.bind))?;
        Self::build_with_listener(config, listener).await
    }

    /// Builds the server on a listener the caller bound (tests bind port 0).
    ///
    /// Opens the database (creating the SQLite file when missing), applies migrations and
    /// loads the catalog; refuses to build, listing every problem, when the catalog is
    /// invalid.
    pub async fn build_with_listener(
        config: Config,
        listener: TcpListener,
    ) -> anyhow::Result<Self> {
        let addr = listener
            .local_addr()
            .context("listener has no local address")?;
        let mut config = config;
        // Port 0 becomes the real port in the default public URL (the OpenID redirect URI and
        // the CSRF Origin check depend on it).
        if config.public_url.is_none() {
            config.public_url = Some(format!("http://{addr}"));
        }
        config.check_auth()?;
        config.check_forge()?;
        config.check_notify()?;
        let backend = config.backend()?;
        let metrics = match config.metrics_bind {
            Some(at) => Some(
                metrics::MetricsListener::bind(at)
                    .await
                    .with_context(|| format!("cannot listen for metrics on {at}"))?,
            ),
            None => None,
        };
        let db = Db::connect(&config.database_url(), config.database_max_connections)
            .await
            .context("cannot open the database")?;
        db.migrate().await?;
        tracing::info!(db.backend = ?backend, "database ready");
        // Who is told what: the steps of requests queue their messages in their own
        // transactions, by these rules; the delivery loop sends them.
        let db = db.with_outbox(OutboxRules {
            email: config.smtp_url.is_some(),
            webhook: config.notify_webhook_url.is_some(),
            admin_groups: config.admin_group_list(),
            public_url: config.public_url(),
            queued: Arc::default(),
        });
        let deliverer = Deliverer::from_config(db.clone(), &config)
            .context("cannot set up the notifications")?
            .map(Arc::new);

        // The forge first: with the local forge it creates the monorepo the catalog is read
        // from.
        let forge = selfservice::open_forge(&config, &db).await?;
        let source = selfservice::catalog_source(&config);
        let catalog = CatalogStore::open(source, db.clone())
            .await
            .context("cannot load the catalog")?;

        let key = auth::session_key(&config)?;
        let sessions = DbSessionStore::new(&db)
            .await
            .context("cannot set up the session store")?;
        let auth = Auth::from_config(&config).await?;
        if auth.oidc.is_none() {
            tracing::warn!(
                "development sign-in: MIRANTE_OIDC_ISSUER is unset, anyone reaching this address can sign in as a demo user"
            );
        }
        let session_layer = auth::session_layer(sessions.clone(), &config, &key);
        let leptos = leptos_options(addr);
        let worker = Arc::new(Worker::new(
            db.clone(),
            forge,
            WorkerSettings::from_config(&config),
        ));
        let catalog = Arc::new(catalog);
        let templates = Arc::new(
            tokio::task::spawn_blocking(TemplateSet::embedded)
                .await
                .context("cannot load the self-service templates")?,
        );
        for problem in templates.problems() {
            tracing::warn!(%problem, "a self-service template was left out");
        }
        let mut selfservice = SelfService::new(
            db.clone(),
            Arc::clone(&catalog),
            templates,
            Arc::clone(&worker),
        );
        selfservice = selfservice
            .with_catalog_folder(config.catalog_folder().to_owned())
            .with_self_approval(config.self_approval());
        let folder = config.monorepo_templates.trim_end_matches('/');
        if !folder.is_empty() {
            selfservice = selfservice.with_monorepo_templates(folder.to_owned());
        }
        let checker = probes::Checker::from_config(&config)?;
        // With Argo CD configured, merged resources are followed past the merge.
        let follower = match probes::argocd_settings(&config)? {
            Some(argocd) => {
                let client = ArgoClient::new(
                    argocd,
                    Duration::from_secs(config.probe_timeout_secs.max(1)),
                )
                .context("cannot build the HTTP client for Argo CD")?;
                let follower = Arc::new(Follower::new(
                    db.clone(),
                    Arc::clone(worker.forge()),
                    client,
                    FollowSettings::from_config(&config),
                ));
                selfservice = selfservice.with_follower(Arc::clone(&follower));
                Some(follower)
            }
            None => None,
        };
        let selfservice = Arc::new(selfservice);
        let state = AppState {
            probes: Arc::new(probes::ProbeBoard::default()),
            refusals: Arc::default(),
            draining: Arc::default(),
            config: Arc::new(config),
            db,
            catalog,
            leptos,
            auth: Arc::new(auth),
            worker,
            selfservice,
        };
        let router = app(&state, session_layer);
        Ok(Application {
            checker,
            follower,
            deliverer,
            listener,
            addr,
            state,
            router,
            sessions,
            metrics,
        })
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address `/metrics` is served on, when `metrics_bind` is set.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
            .as_ref()
            .map(metrics::MetricsListener::local_addr)
    }

    /// The shared state (tests read the database through it).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until ctrl-c or SIGTERM, then drains (SIGTERM only: `shutdown_delay_secs` of
    /// `/readyz` answering 503 while still serving) and finishes the requests in flight.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let delay = Duration::from_secs(self.state.config.shutdown_delay_secs);
        self.drain_after(async move {
            match shutdown_signal().await {
                Stop::Interrupt => Duration::ZERO,
                Stop::Terminate => delay,
            }
        })
        .await
    }

    /// Serves until `stop` completes, drains for `shutdown_delay_secs`, then finishes the
    /// requests in flight. Catalog reloads (SIGHUP, timer) run for as long as the server does.
    pub async fn run_until(
        self,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let delay = Duration::from_secs(self.state.config.shutdown_delay_secs);
        self.drain_after(async move {
            stop.await;
            delay
        })
        .await
    }

    /// Serves until `stop` completes with how long to drain. Then, in order: `/readyz`
    /// answers 503 and the worker claims no new job; requests are still served for that long,
    /// so that the load balancer's endpoints drop this replica before it stops listening;
    /// the listener closes and the requests in flight finish; the worker finishes the job in
    /// hand (at most one lease); the background tasks stop and the database pool closes.
    async fn drain_after(
        self,
        stop: impl Future<Output = Duration> + Send + 'static,
    ) -> std::io::Result<()> {
        let background = CancellationToken::new();
        let refresh = Duration::from_secs(self.state.config.catalog_refresh_secs);
        self.state
            .catalog
            .spawn_reloaders(Some(refresh), background.clone());
        spawn_housekeeping(
            self.sessions.clone(),
            Arc::clone(&self.state.auth),
            background.clone(),
        );
        if let Some(provider) = &self.state.auth.oidc {
            tokio::spawn(Arc::clone(provider).keep_fresh(background.clone()));
        }
        let outbox = self.state.worker.spawn(background.clone());
        let heartbeat = self.state.config.replica_heartbeat_secs;
        if heartbeat > 0 {
            crate::app::replicas::Heartbeat {
                id: self.state.config.worker_id(),
                started_at: chrono::Utc::now(),
                catalog: Arc::clone(&self.state.catalog),
                db: self.state.db.clone(),
            }
            .spawn(Duration::from_secs(heartbeat), background.clone());
        }
        if let Some(follower) = &self.follower {
            follower.spawn(background.clone());
        }
        if let Some(deliverer) = &self.deliverer {
            deliverer.spawn(background.clone());
        }
        if let Some(listener) = self.metrics {
            listener.spawn(
                Arc::clone(&self.state.catalog),
                self.state.db.clone(),
                Arc::clone(&self.state.probes),
                background.clone(),
            );
        }
        crate::app::selfservice::expiry::ExpirySweep::new(
            Arc::clone(&self.state.selfservice),
            self.state.db.clone(),
            Arc::new(crate::app::clock::SystemClock),
            crate::app::selfservice::expiry::ExpirySettings {
                removal: self.state.config.expiry_removal,
                notice_days: self.state.config.expiry_notice_days().unwrap_or_default(),
            },
        )
        .spawn(
            Duration::from_secs(self.state.config.expiry_sweep_secs),
            self.state.config.worker_id(),
            background.clone(),
        );
        probes::spawn(
            self.checker.clone(),
            Arc::clone(&self.state.catalog),
            Arc::clone(&self.state.probes),
            Duration::from_secs(self.state.config.probe_interval_secs),
            probes::Shared {
                db: self.state.db.clone(),
                replica: self.state.config.worker_id(),
            },
            background.clone(),
        );
        tracing::info!(
            http.addr = %self.addr,
            http.public_url = %self.state.config.public_url(),
            "listening"
        );
        let db = self.state.db.clone();
        let limits = crate::http::serve::Limits::from(self.state.config.as_ref());
        let draining = Arc::clone(&self.state.draining);
        let worker = Arc::clone(&self.state.worker);
        let stop = async move {
            let delay = stop.await;
            draining.store(true, std::sync::atomic::Ordering::SeqCst);
            worker.stop_claiming();
            if !delay.is_zero() {
                tracing::info!(
                    delay.secs = delay.as_secs(),
                    "draining: /readyz answers 503, requests are still served"
                );
                tokio::time::sleep(delay).await;
            }
            tracing::info!("closing the listener; finishing the requests in flight");
        };
        let result = crate::http::serve::serve(self.listener, self.router, limits, stop).await;
        // The job in hand, if any, is finished rather than left for its lease to run out.
        let lease = self.state.worker.settings().lease;
        background.cancel();
        if tokio::time::timeout(lease, outbox).await.is_err() {
            tracing::warn!(
                lease.secs = lease.as_secs(),
                "the worker's job in hand did not finish within its lease; it is taken up again"
            );
        }
        db.close().await;
        tracing::info!("stopped");
        result
    }
}

/// Every minute until `stop` is cancelled: deletes expired sessions and forgets clients whose
/// rate-limit budget is whole again.
fn spawn_housekeeping(store: DbSessionStore, auth: Arc<Auth>, stop: CancellationToken) {
    use tower_sessions::ExpiredDeletion;
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(60));
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                _ = every.tick() => {
                    if let Err(error) = store.delete_expired().await {
                        tracing::warn!(%error, "cannot delete expired sessions");
                    }
                    auth.limits.forget_idle();
                }
            }
        }
    });
}

/// The whole application: sign-in routes, API routes, static assets, then the web UI, behind
/// the authentication middleware and the session layer, under the common middleware.
pub fn app(
    state: &AppState,
    sessions: tower_sessions::SessionManagerLayer<
        DbSessionStore,
        tower_sessions::service::SignedCookie,
    >,
) -> Router {
    let routes = Router::new()
        .merge(auth::router())
        .merge(api::router())
        .merge(exports::router())
        .merge(middleware::static_files(&state.leptos))
        // Last: the UI answers every path the API does not.
        .merge(web::router(state))
        .route_layer(axum::middleware::from_fn(metrics::route))
        .layer(axum::middleware::map_response_with_state(
            state.db.breaker().clone(),
            crate::http::error::note_outage,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .layer(sessions)
        .with_state(state.clone());
    middleware::apply(
        routes,
        Duration::from_secs(state.config.request_timeout_secs),
        state.auth.public_url.starts_with("https://"),
    )
    .layer(axum::middleware::from_fn(metrics::track))
}

/// Where the UI's compiled assets are: `LEPTOS_SITE_ROOT` (default `target/site`), `pkg`
/// inside it, files named `mirante-<hash>.*` as `pkg/bundle.txt` says, else `mirante.*`.
fn leptos_options(addr: SocketAddr) -> LeptosOptions {
    let site_root = std::env::var("LEPTOS_SITE_ROOT").unwrap_or_else(|_| "target/site".to_owned());
    // Development mode only on request: it makes pages try to reach cargo-leptos's reload
    // socket.
    let env = match std::env::var("LEPTOS_ENV") {
        Ok(v) if v.eq_ignore_ascii_case("dev") || v.eq_ignore_ascii_case("development") => Env::DEV,
        _ => Env::PROD,
    };
    // The content-hashed bundle `cargo xtask build` wrote, so that pages name files browsers
    // may keep; the plain names when there is none.
    let output = crate::http::middleware::bundle_name(
        &std::path::Path::new(&site_root).join("pkg"),
        "mirante",
    )
    .unwrap_or_else(|| "mirante".to_owned());
    LeptosOptions::builder()
        .output_name(output)
        .site_root(site_root)
        .site_pkg_dir("pkg")
        .site_addr(addr)
        .env(env)
        .build()
}

/// What asked the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// ctrl-c: a person at a terminal, who gets no drain delay.
    Interrupt,
    /// SIGTERM: what container runtimes and Kubernetes send.
    Terminate,
}

/// Completes on ctrl-c or, on Unix, SIGTERM (what container runtimes send), saying which.
pub async fn shutdown_signal() -> Stop {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for ctrl-c");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {
            tracing::info!("ctrl-c received: shutting down");
            Stop::Interrupt
        }
        () = terminate => {
            tracing::info!("SIGTERM received: shutting down");
            Stop::Terminate
        }
    }
}
