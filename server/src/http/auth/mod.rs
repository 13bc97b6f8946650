//! Sign-in, sessions and access control.
//!
//! - [`policy`]: who may use which route.
//! - the OpenID Connect relying party (`crate::adapters::oidc`) and the sessions' store in the
//!   portal's database (`crate::adapters::session_store`) are adapters.
//! - [`session`]: the session layer, the key that signs its cookie, and what a session holds.
//! - [`middleware`]: the authentication middleware that every request goes through (session or
//!   API token → [`Viewer`] in the request's extensions, CSRF Origin check, the policy's
//!   decision).
//! - [`sign_in`]: the `/auth/*` routes, signing in and out.
//! - [`profile`]: the `/profile` page with its API tokens, and `/api/v1/me`.
//! - [`limits`]: each client's budget of sign-ins, token checks and webhook deliveries.
//! - this module: what sign-in needs at run time ([`Auth`]), the signed-in user as the session
//!   keeps them, and the routes of the modules above.

mod limits;
mod middleware;
mod origin;
pub(crate) mod pages;
pub mod policy;
mod profile;
mod session;
mod sign_in;
pub(crate) mod tokens;

use std::sync::Arc;

use anyhow::Context;
use axum::{
    Router,
    http::Method,
    routing::{get, post},
};
use mirante_domain::Viewer;
use serde::{Deserialize, Serialize};

// `__path_me` is what the OpenAPI router's `routes!` finds `me`'s documentation by.
pub use self::{
    middleware::authenticate,
    profile::{
        __path_me, __path_set_my_notifications, Me, MyNotifications, NotificationChoice, me,
        set_my_notifications,
    },
    session::{SESSION_COOKIE, session_key, session_layer, token_hash},
    sign_in::{DEV_ISSUER, safe_next},
};
use crate::{
    adapters::oidc::{Provider, ProviderSettings},
    config::Config,
    http::state::AppState,
};

/// The signed-in user as the session keeps them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionUser {
    /// Their row in `app_user`.
    pub user_id: i64,
    /// What the UI shows, with the session's CSRF token.
    pub viewer: Viewer,
    /// When they signed in (Unix seconds), for the absolute lifetime.
    pub signed_in_at: i64,
    /// The ID token, for `id_token_hint` at sign-out.
    pub id_token: Option<String>,
}

/// Who made a request, put in its extensions by [`authenticate`].
pub use mirante_domain::access::Principal;

/// What sign-in needs at run time.
pub struct Auth {
    /// The provider, or `None` for the development sign-in.
    pub oidc: Option<Arc<Provider>>,
    /// Groups whose members are admins.
    pub admin_groups: Vec<String>,
    /// `scheme://host[:port]` of the public URL.
    pub public_origin: String,
    /// The names requests may be sent to.
    pub(crate) public_host: origin::PublicHost,
    /// The public URL without a trailing slash.
    pub public_url: String,
    /// Absolute session lifetime in seconds.
    pub session_max_secs: i64,
    /// Seconds between two writes that push a session's idle expiry back.
    pub session_touch_secs: i64,
    /// Whether the catalog is readable without a session.
    pub public_catalog: bool,
    /// API tokens already checked against the database.
    pub tokens: tokens::TokenCache,
    /// Each client's budget of sign-ins, token checks and webhook deliveries.
    pub(crate) limits: limits::RateLimits,
}

impl Auth {
    /// Sets up sign-in from the configuration; discovers the provider when there is one.
    pub async fn from_config(config: &Config) -> anyhow::Result<Self> {
        let public_url = config.public_url();
        let oidc = match &config.oidc_issuer {
            Some(issuer) => {
                let secret = config
                    .oidc_client_secret
                    .clone()
                    .context("MIRANTE_OIDC_CLIENT_SECRET is not set")?;
                let client_id = config
                    .oidc_client_id
                    .as_deref()
                    .context("MIRANTE_OIDC_CLIENT_ID is not set")?;
                let provider = Provider::new(ProviderSettings {
                    issuer: issuer.clone(),
                    client_id: client_id.to_owned(),
                    client_secret: secret,
                    redirect_uri: format!("{public_url}/auth/callback"),
                });
                // A provider that is down must not keep the portal down: sign-ins retry.
                if let Err(error) = provider.refresh().await {
                    tracing::warn!(
                        error = format!("{error:#}"),
                        "OpenID provider discovery failed; sign-in retries until it answers"
                    );
                }
                Some(Arc::new(provider))
            }
            None => None,
        };
        let parsed = url::Url::parse(&public_url)
            .with_context(|| format!("MIRANTE_PUBLIC_URL {public_url} is not a URL"))?;
        let origin = parsed.origin().ascii_serialization();
        let proxies = limits::TrustedProxies::parse(&config.trusted_proxies)?;
        let per_minute = limits::PerMinute {
            sign_in: config.sign_in_per_minute,
            token_checks: config.token_checks_per_minute,
            webhooks: config.webhooks_per_minute,
        };
        Ok(Auth {
            oidc,
            admin_groups: config.admin_group_list(),
            public_origin: origin,
            public_host: origin::PublicHost::of(&parsed),
            public_url,
            session_max_secs: i64::try_from(config.session_max_secs).unwrap_or(i64::MAX),
            // The store's expiry only moves when the session is saved; saving at most once a
            // minute (sooner for very short idle timeouts) keeps the idle timeout honest
            // without a database write per request.
            session_touch_secs: i64::try_from(config.session_idle_secs / 4)
                .unwrap_or(60)
                .clamp(1, 60),
            public_catalog: config.public_catalog,
            tokens: tokens::TokenCache::new(tokens::TTL),
            limits: limits::RateLimits::new(per_minute, proxies),
        })
    }

    fn dev_login(&self) -> bool {
        self.oidc.is_none()
    }
}

/// The routes this module serves.
pub(crate) const ROUTES: &[(Method, &str)] = &[
    (Method::GET, "/auth/login"),
    (Method::GET, "/auth/callback"),
    (Method::POST, "/auth/dev"),
    (Method::POST, "/auth/logout"),
    (Method::GET, "/api/v1/me"),
    (Method::GET, "/profile"),
    (Method::POST, "/profile/tokens"),
    (Method::POST, "/profile/tokens/{id}/revoke"),
    (Method::POST, "/profile/notifications"),
];

/// The sign-in, sign-out, profile and `/api/v1/me` routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth/login", get(sign_in::login))
        .route("/auth/callback", get(sign_in::callback))
        .route("/auth/dev", post(sign_in::dev_login))
        .route("/auth/logout", post(sign_in::logout))
        .route("/profile", get(profile::profile))
        .route("/profile/tokens", post(profile::create_token))
        .route("/profile/tokens/{id}/revoke", post(profile::revoke_token))
        .route("/profile/notifications", post(profile::set_notifications))
}
