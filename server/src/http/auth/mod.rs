//! Sign-in, sessions and access control.
//!
//! - [`policy`]: who may use which route.
//! - the OpenID Connect relying party (`crate::adapters::oidc`) and the sessions' store in the
//!   portal's database (`crate::adapters::session_store`) are adapters.
//! - this module: the session layer, the authentication middleware that every request goes
//!   through (session or API token → [`Viewer`] in the request's extensions, CSRF Origin
//!   check, the policy's decision), and the `/auth/*`, `/profile` and `/api/v1/me` routes.
//! - [`limits`]: each client's budget of sign-ins, token checks and webhook deliveries.

mod limits;
mod origin;
pub(crate) mod pages;
pub mod policy;
pub(crate) mod tokens;

use std::{
    net::{IpAddr, SocketAddr},
    path::Path,
    sync::Arc,
};

use anyhow::Context;
use axum::{
    Form, Json, Router,
    extract::{ConnectInfo, Path as UrlPath, Query, Request, State},
    http::{HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
};
use chrono::Utc;
use mirante_domain::{Role, Viewer};
use rand::RngCore;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256, Sha512};
use tower_sessions::{
    Expiry, Session, SessionManagerLayer,
    cookie::{Key, SameSite, time},
    service::SignedCookie,
};

use self::{
    origin::same_origin,
    pages::PageLang,
    policy::{Access, Caller, Decision, Route},
};
use crate::{
    adapters::db::{Db, NewAuditEntry, NewUser},
    adapters::{
        oidc::{PendingLogin, Provider, ProviderSettings},
        session_store::DbSessionStore,
    },
    config::Config,
    http::state::AppState,
};

/// The session cookie's name; not `_session`, which Authentik-like providers use on the same
/// host in tests.
pub const SESSION_COOKIE: &str = "mirante_session";

/// Session key of the signed-in user.
const USER_KEY: &str = "user";
/// Session key of a sign-in in progress.
const LOGIN_KEY: &str = "login";
/// Session key of the last time a request refreshed the session's idle expiry (Unix seconds).
const SEEN_KEY: &str = "seen_at";
/// Issuer recorded for users of the development sign-in.
pub const DEV_ISSUER: &str = "dev";

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

/// The session layer: signed `mirante_session` cookie, `HttpOnly`, `SameSite=Lax`, `Secure`
/// on https, expiring after `session_idle_secs` without a request.
pub fn session_layer(
    store: DbSessionStore,
    config: &Config,
    key: &SecretString,
) -> SessionManagerLayer<DbSessionStore, SignedCookie> {
    let idle = i64::try_from(config.session_idle_secs).unwrap_or(i64::MAX);
    SessionManagerLayer::new(store)
        .with_name(SESSION_COOKIE)
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(config.public_url().starts_with("https://"))
        .with_path("/")
        .with_expiry(Expiry::OnInactivity(time::Duration::seconds(idle)))
        .with_signed(cookie_key(key))
}

/// A 64-byte cookie key derived from the configured secret.
fn cookie_key(secret: &SecretString) -> Key {
    let digest = Sha512::digest(secret.expose_secret().as_bytes());
    Key::from(digest.as_slice())
}

/// The session key: the configured one, or (SQLite, a single instance) one generated once
/// and kept in `<data_dir>/session.key`.
pub fn session_key(config: &Config) -> anyhow::Result<SecretString> {
    if let Some(key) = &config.session_key {
        return Ok(key.clone());
    }
    if config.backend()? != crate::adapters::db::Backend::Sqlite {
        anyhow::bail!("MIRANTE_SESSION_KEY is required with PostgreSQL");
    }
    let path = config.data_dir.join("session.key");
    read_or_create_key(&path)
}

fn read_or_create_key(path: &Path) -> anyhow::Result<SecretString> {
    if let Ok(existing) = std::fs::read_to_string(path) {
        let existing = existing.trim().to_owned();
        if existing.len() >= 32 {
            return Ok(SecretString::from(existing));
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let key = random_hex(48);
    write_private(path, &key).with_context(|| format!("cannot write {}", path.display()))?;
    tracing::info!(path = %path.display(), "generated a session key");
    Ok(SecretString::from(key))
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::{io::Write, os::unix::fs::OpenOptionsExt};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, contents)
}

/// `n` random bytes as hex.
fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Hex SHA-256 of an API token, as stored.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
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
];

/// The sign-in, sign-out, profile and `/api/v1/me` routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth/login", get(login))
        .route("/auth/callback", get(callback))
        .route("/auth/dev", post(dev_login))
        .route("/auth/logout", post(logout))
        .route("/profile", get(profile))
        .route("/profile/tokens", post(create_token))
        .route("/profile/tokens/{id}/revoke", post(revoke_token))
}

fn is_api(path: &str) -> bool {
    path.starts_with("/api/") || path.starts_with("/_fn/")
}

fn json_error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(serde_json::json!({ "error": message, "details": [] })),
    )
        .into_response()
}

/// A refused request's answer: `message` as JSON on the API, otherwise the message page
/// `key` in the reader's language, continuing to the home page.
fn refusal(api: bool, req: &Request, status: StatusCode, message: &str, key: &str) -> Response {
    if api {
        json_error(status, message)
    } else {
        pages::message(status, PageLang::of(req.headers()), key, None, "/")
    }
}

/// What a request must pass before anyone asks who sends it: a host the portal answers for,
/// and a path of the access table in its one spelling. `Ok` with what the route requires, or
/// the answer to send instead (421, a 308 to the one spelling, 405 or 404).
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the response sent at once; boxing it would only add an allocation"
)]
fn admit(auth: &Auth, req: &Request, path: &str, api: bool) -> Result<Access, Response> {
    if !origin::any_host(path) && !auth.public_host.accepts(req.headers(), req.uri()) {
        return Err((
            StatusCode::MISDIRECTED_REQUEST,
            "This portal does not answer for that host name; use its public URL.",
        )
            .into_response());
    }

    // Only the table's own spellings of its paths go further (see `policy::route`).
    match policy::route(req.method(), path) {
        Route::Known(access) => Ok(access),
        Route::Canonical(to) => {
            let to = match req.uri().query() {
                Some(q) => format!("{to}?{q}"),
                None => to,
            };
            Err(Redirect::permanent(&to).into_response())
        }
        Route::WrongMethod(allowed) => {
            let allow = allowed
                .iter()
                .map(Method::as_str)
                .collect::<Vec<_>>()
                .join(", ");
            let mut response = refusal(
                api,
                req,
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed",
                "auth-msg-wrong-method",
            );
            if let Ok(v) = HeaderValue::from_str(&allow) {
                response.headers_mut().insert(header::ALLOW, v);
            }
            Err(response)
        }
        Route::Unknown if path.starts_with("/api/") => Err(json_error(
            StatusCode::NOT_FOUND,
            "no such API route; see /api/v1/openapi.json",
        )),
        Route::Unknown if api => Err(json_error(StatusCode::NOT_FOUND, "no such server function")),
        Route::Unknown => Err(pages::message(
            StatusCode::NOT_FOUND,
            PageLang::of(req.headers()),
            "auth-msg-not-found",
            None,
            "/",
        )),
    }
}

/// Authenticates every request (API token on `/api/*`, else the session), checks the Origin
/// of state-changing requests, and applies the policy. Puts the [`Viewer`] and the
/// [`Principal`] in the request's extensions for the handlers and the UI.
pub async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let auth = &state.auth;
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    let api = is_api(&path);

    let access = match admit(auth, &req, &path, api) {
        Ok(access) => access,
        Err(refusal) => return refusal,
    };

    let mut principal = None;
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .map(str::to_owned);
    let via_token = bearer.is_some() && path.starts_with("/api/");
    if let Some(bucket) = limits::Bucket::of(&path, via_token)
        && let Err(refusal) = spend(&state, &req, bucket, api)
    {
        return refusal;
    }
    if let (true, Some(token)) = (via_token, bearer) {
        match principal_from_token(&state, &token).await {
            Ok(Some(p)) => principal = Some(p),
            Ok(None) => {
                return json_error(
                    StatusCode::UNAUTHORIZED,
                    "invalid, expired or revoked API token",
                );
            }
            // ApiError answers 503 with Retry-After when the database cannot be reached.
            Err(e) => return crate::http::ApiError::Internal(e).into_response(),
        }
    } else if let Some(session) = req.extensions().get::<Session>().cloned() {
        match session.get::<SessionUser>(USER_KEY).await {
            Ok(Some(user)) => {
                let age = Utc::now().timestamp() - user.signed_in_at;
                if age > auth.session_max_secs {
                    let _ = session.flush().await;
                    audit(
                        &state.db,
                        &user.viewer.username,
                        "auth.session_expired",
                        serde_json::json!({ "age_secs": age }),
                    )
                    .await;
                    return if api {
                        json_error(StatusCode::UNAUTHORIZED, "session expired; sign in again")
                    } else {
                        pages::message(
                            StatusCode::UNAUTHORIZED,
                            PageLang::of(req.headers()),
                            "auth-msg-session-expired",
                            None,
                            &format!("/auth/login?next={}", encode(&path_and_query(&req))),
                        )
                    };
                }
                let now = Utc::now().timestamp();
                let seen = session
                    .get::<i64>(SEEN_KEY)
                    .await
                    .ok()
                    .flatten()
                    .unwrap_or(0);
                if now - seen >= auth.session_touch_secs {
                    // Modifies the session, so the layer saves it with a new idle expiry.
                    let _ = session.insert(SEEN_KEY, now).await;
                }
                principal = Some(Principal {
                    user_id: user.user_id,
                    viewer: user.viewer,
                    via_token: false,
                });
            }
            Ok(None) => {}
            // The session store (the database) cannot be read: who this is is unknown, which
            // is not the same as nobody. Say the portal is degraded rather than ask a
            // signed-in person to sign in again.
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the session; the database may be down");
                return degraded(api, &req);
            }
        }
    }

    let caller = Caller::of(principal.as_ref());
    match policy::decide(access, caller, auth.public_catalog) {
        Decision::Allow => {}
        Decision::SignIn if api => {
            return json_error(StatusCode::UNAUTHORIZED, "sign-in required");
        }
        Decision::SignIn if method == Method::GET || method == Method::HEAD => {
            let next = path_and_query(&req);
            return Redirect::to(&format!("/auth/login?next={}", encode(&next))).into_response();
        }
        Decision::SignIn => {
            return pages::message(
                StatusCode::UNAUTHORIZED,
                PageLang::of(req.headers()),
                "auth-msg-sign-in-required",
                None,
                "/auth/login",
            );
        }
        Decision::Forbid => {
            return refusal(
                api,
                &req,
                StatusCode::FORBIDDEN,
                "this needs the admin role",
                "auth-msg-admins-only",
            );
        }
    }
    // CSRF: a state-changing request carried by the browser's cookie must come from a page of
    // the portal. API-token requests carry no ambient credentials.
    let changes_state = !matches!(method, Method::GET | Method::HEAD | Method::OPTIONS);
    if changes_state
        && !via_token
        && !policy::signed_by_sender(&path)
        && !same_origin(req.headers(), &auth.public_origin)
    {
        return refusal(
            api,
            &req,
            StatusCode::FORBIDDEN,
            "cross-origin request refused",
            "auth-msg-cross-origin",
        );
    }

    let signed_in = principal.is_some();
    if let Some(p) = principal {
        req.extensions_mut().insert(p.viewer.clone());
        req.extensions_mut().insert(p);
    }
    let mut response = next.run(req).await;
    // What a signed-in person was shown is theirs: no shared cache keeps it, and the browser
    // does not show it again from its cache after sign-out. Public routes (the hydration
    // bundle, the probes) keep their own caching.
    if signed_in && access != Access::Public {
        response
            .headers_mut()
            .entry(header::CACHE_CONTROL)
            .or_insert(HeaderValue::from_static("no-store"));
    }
    response
}

/// The answer while the session store cannot be read: 503 with `Retry-After`, JSON on the
/// API, else a page saying the portal is degraded and to try again in a moment.
fn degraded(api: bool, req: &Request) -> Response {
    if api {
        return crate::http::error::unavailable(crate::adapters::db::DATABASE_UNAVAILABLE);
    }
    let mut page = pages::message(
        StatusCode::SERVICE_UNAVAILABLE,
        PageLang::of(req.headers()),
        "auth-msg-degraded",
        None,
        &path_and_query(req),
    );
    page.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(crate::http::error::RETRY_AFTER_SECS),
    );
    page
}

/// Spends one request of `bucket` from the client's budget; the 429 to send when it is spent.
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the response sent at once; boxing it would only add an allocation"
)]
fn spend(
    state: &AppState,
    req: &Request,
    bucket: limits::Bucket,
    api: bool,
) -> Result<(), Response> {
    let limits = &state.auth.limits;
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::from([0, 0, 0, 0]), |c| c.0.ip());
    let client = limits.client(peer, req.headers());
    let Err(wait) = limits.check(bucket, client) else {
        return Ok(());
    };
    let secs = limits::retry_after_secs(wait);
    let kind = bucket.refusal_kind();
    if let Some(left_out) = state.refusals.note(kind, std::time::Instant::now()) {
        tracing::warn!(%client, retry_after_secs = secs, repeated = left_out, "{kind}: request refused");
    }
    let mut response = refusal(
        api,
        req,
        StatusCode::TOO_MANY_REQUESTS,
        &format!("too many requests; retry in {secs} s"),
        "auth-msg-too-many",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    Err(response)
}

fn path_and_query(req: &Request) -> String {
    req.uri()
        .path_and_query()
        .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned())
}

fn encode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// How stale a token's `last_used_at` may get before a use writes it again.
const TOKEN_USE_RESOLUTION_SECS: i64 = 60;

async fn principal_from_token(state: &AppState, token: &str) -> anyhow::Result<Option<Principal>> {
    let hash = token_hash(token);
    let cache = &state.auth.tokens;
    let generation = cache.generation();
    let known = match cache.get(&hash) {
        Some(known) => known,
        None => match verify_token(state, &hash).await? {
            Some(verified) => {
                cache.insert(generation, hash.clone(), verified.clone());
                verified
            }
            None => return Ok(None),
        },
    };
    let now = Utc::now();
    // Checked on every use, cached or not: a token stops at its expiry to the second.
    if known.expires_at.is_some_and(|at| at <= now) {
        return Ok(None);
    }
    // The profile shows when a token was last used to the minute; noting every use would be
    // a database write per API request.
    if known
        .last_used_at
        .is_none_or(|at| now - at >= chrono::Duration::seconds(TOKEN_USE_RESOLUTION_SECS))
    {
        state.db.touch_api_token(known.api_token_id, now).await?;
        cache.touched(generation, &hash, now);
    }
    Ok(Some(known.principal))
}

/// The active token with this hash and who it acts for, read from the database.
async fn verify_token(state: &AppState, hash: &str) -> anyhow::Result<Option<tokens::Verified>> {
    let Some(active) = state.db.active_api_token(hash).await? else {
        return Ok(None);
    };
    let Some(user) = state.db.user(active.app_user_id).await? else {
        return Ok(None);
    };
    let role = mirante_domain::access::role_for(&user.groups, &state.auth.admin_groups);
    Ok(Some(tokens::Verified {
        principal: Principal {
            user_id: active.app_user_id,
            viewer: Viewer {
                username: user.username,
                name: user.name,
                email: user.email,
                groups: user.groups,
                role,
                csrf_token: String::new(),
                dev_login: user.issuer == DEV_ISSUER,
            },
            via_token: true,
        },
        api_token_id: active.api_token_id,
        last_used_at: active.last_used_at,
        expires_at: active.expires_at,
    }))
}

/// Appends an audit entry; a failure is logged, never shown.
async fn audit(db: &Db, actor: &str, action: &str, detail: serde_json::Value) {
    let entry = NewAuditEntry {
        at: Utc::now(),
        actor,
        action,
        target: "session",
        detail,
    };
    if let Err(e) = db.append_audit(&entry).await {
        tracing::error!(error = %e, action, "cannot write the audit log");
    }
}

/// A `next` path that stays on the portal: relative, starting with one `/`, not back into
/// `/auth/`. Anything else becomes `/`.
pub fn safe_next(next: Option<&str>) -> String {
    let Some(next) = next else {
        return "/".to_owned();
    };
    let ok = next.starts_with('/')
        && !next.starts_with("//")
        && !next.starts_with("/\\")
        && !next.starts_with("/auth/")
        && !next.contains(['\r', '\n'])
        && !next.chars().any(char::is_control);
    if ok { next.to_owned() } else { "/".to_owned() }
}

#[derive(Deserialize)]
struct LoginQuery {
    next: Option<String>,
}

/// `GET /auth/login?next=PATH`: the development sign-in page, or a redirect to the provider.
async fn login(
    State(state): State<AppState>,
    lang: PageLang,
    session: Session,
    Query(q): Query<LoginQuery>,
) -> Response {
    let next = safe_next(q.next.as_deref());
    if let Ok(Some(_)) = session.get::<SessionUser>(USER_KEY).await {
        return Redirect::to(&next).into_response();
    }
    let Some(provider) = &state.auth.oidc else {
        return pages::dev_login(lang, &next, &state.auth.admin_groups);
    };
    let oidc = match provider.get().await {
        Ok(oidc) => oidc,
        Err(error) => {
            tracing::warn!(error = format!("{error:#}"), "sign-in cannot start");
            return pages::message(
                StatusCode::SERVICE_UNAVAILABLE,
                lang,
                "auth-msg-provider-unreachable",
                None,
                &format!("/auth/login?next={}", encode(&next)),
            );
        }
    };
    let (url, pending) = oidc.start(next);
    if let Err(e) = session.insert(LOGIN_KEY, &pending).await {
        return crate::http::ApiError::Internal(e.into()).into_response();
    }
    Redirect::to(url.as_str()).into_response()
}

#[derive(Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /auth/callback`: the provider sends the browser back here with a code.
async fn callback(
    State(state): State<AppState>,
    lang: PageLang,
    session: Session,
    Query(q): Query<CallbackQuery>,
) -> Response {
    let Some(provider) = &state.auth.oidc else {
        return pages::message(
            StatusCode::NOT_FOUND,
            lang,
            "auth-msg-no-provider",
            None,
            "/",
        );
    };
    // Taken out before anything is compared: an attempt is good for one callback only.
    let pending: Option<PendingLogin> = session.remove(LOGIN_KEY).await.ok().flatten();
    let Some(pending) = pending else {
        return sign_in_failed(&state, lang, Failure::NoAttempt).await;
    };
    if let Some(error) = q.error {
        return sign_in_failed(&state, lang, Failure::ProviderError(error)).await;
    }
    let (Some(code), Some(returned_state)) = (q.code, q.state) else {
        return sign_in_failed(&state, lang, Failure::NoCode).await;
    };
    if !constant_time_eq(returned_state.as_bytes(), pending.state.as_bytes()) {
        return sign_in_failed(&state, lang, Failure::StateMismatch).await;
    }
    let identity = match provider.get().await {
        Ok(oidc) => oidc.finish(&code, &pending).await,
        Err(e) => Err(e),
    };
    let identity = match identity {
        Ok(identity) => identity,
        Err(e) => return sign_in_failed(&state, lang, Failure::Rejected(format!("{e:#}"))).await,
    };
    let issuer = provider.issuer().to_owned();
    complete_sign_in(
        &state,
        &session,
        SignIn {
            issuer: &issuer,
            subject: &identity.subject,
            username: &identity.username,
            name: &identity.name,
            email: identity.email.as_deref(),
            groups: identity.groups.clone(),
            id_token: Some(identity.id_token.clone()),
            dev: false,
        },
        &pending.next,
    )
    .await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Why a callback did not sign anyone in.
enum Failure {
    /// No attempt in the session: expired, or the callback was replayed.
    NoAttempt,
    /// The provider redirected back with `error=…`.
    ProviderError(String),
    /// Neither code nor state came back.
    NoCode,
    /// The `state` is not the one this session sent.
    StateMismatch,
    /// The code exchange, the ID token or userinfo failed verification (the reason).
    Rejected(String),
}

impl Failure {
    /// The reason as the audit log and the server log record it (English, stable).
    fn reason(&self) -> String {
        match self {
            Failure::NoAttempt => {
                "no sign-in in progress (expired, or this link was already used)".to_owned()
            }
            Failure::ProviderError(error) => format!("the provider answered `{error}`"),
            Failure::NoCode => "the provider sent no code or state".to_owned(),
            Failure::StateMismatch => "state mismatch".to_owned(),
            Failure::Rejected(reason) => reason.clone(),
        }
    }

    /// The message shown, and the technical detail shown as written.
    fn page(&self) -> (&'static str, Option<&str>) {
        match self {
            Failure::NoAttempt => ("auth-fail-no-attempt", None),
            Failure::ProviderError(error) => ("auth-fail-provider-error", Some(error)),
            Failure::NoCode => ("auth-fail-no-code", None),
            Failure::StateMismatch => ("auth-fail-state-mismatch", None),
            Failure::Rejected(reason) => ("auth-fail-rejected", Some(reason)),
        }
    }
}

async fn sign_in_failed(state: &AppState, lang: PageLang, failure: Failure) -> Response {
    let reason = failure.reason();
    tracing::warn!(reason, "sign-in failed");
    audit(
        &state.db,
        "anonymous",
        "auth.sign_in_failed",
        serde_json::json!({ "reason": reason }),
    )
    .await;
    let (key, detail) = failure.page();
    pages::message(StatusCode::BAD_REQUEST, lang, key, detail, "/auth/login")
}

struct SignIn<'a> {
    issuer: &'a str,
    subject: &'a str,
    username: &'a str,
    name: &'a str,
    email: Option<&'a str>,
    groups: Vec<String>,
    id_token: Option<String>,
    dev: bool,
}

/// Records the user, gives the session a new id and the user, audits, and goes on to `next`.
async fn complete_sign_in(
    state: &AppState,
    session: &Session,
    s: SignIn<'_>,
    next: &str,
) -> Response {
    let now = Utc::now();
    let user_id = match state
        .db
        .upsert_user(&NewUser {
            issuer: s.issuer,
            subject: s.subject,
            username: s.username,
            name: s.name,
            email: s.email,
            groups: &s.groups,
            at: now,
        })
        .await
    {
        Ok(id) => id,
        Err(e) => return crate::http::ApiError::from(e).into_response(),
    };
    // Their groups, and so the role their API tokens act with, may have changed.
    state.auth.tokens.clear();
    let role = mirante_domain::access::role_for(&s.groups, &state.auth.admin_groups);
    let viewer = Viewer {
        username: s.username.to_owned(),
        name: s.name.to_owned(),
        email: s.email.map(str::to_owned),
        groups: s.groups,
        role,
        csrf_token: random_hex(32),
        dev_login: s.dev,
    };
    let user = SessionUser {
        user_id,
        viewer,
        signed_in_at: now.timestamp(),
        id_token: s.id_token,
    };
    // A new id at the privilege change: a session id planted before sign-in is worthless.
    if let Err(e) = session.cycle_id().await {
        return crate::http::ApiError::Internal(e.into()).into_response();
    }
    if let Err(e) = session.insert(USER_KEY, &user).await {
        return crate::http::ApiError::Internal(e.into()).into_response();
    }
    audit(
        &state.db,
        s.username,
        "auth.sign_in",
        serde_json::json!({
            "issuer": s.issuer,
            "subject": s.subject,
            "role": role.as_str(),
        }),
    )
    .await;
    Redirect::to(next).into_response()
}

#[derive(Deserialize)]
struct DevLoginForm {
    user: String,
    next: Option<String>,
}

/// `POST /auth/dev`: the development sign-in (only without an OpenID provider).
async fn dev_login(
    State(state): State<AppState>,
    lang: PageLang,
    session: Session,
    Form(form): Form<DevLoginForm>,
) -> Response {
    if !state.auth.dev_login() {
        return pages::message(
            StatusCode::NOT_FOUND,
            lang,
            "auth-msg-dev-login-off",
            None,
            "/",
        );
    }
    let Some(demo) = pages::DEMO_USERS.iter().find(|u| u.username == form.user) else {
        return pages::message(
            StatusCode::BAD_REQUEST,
            lang,
            "auth-msg-unknown-demo-user",
            None,
            "/auth/login",
        );
    };
    let groups = if demo.admin {
        vec![
            state
                .auth
                .admin_groups
                .first()
                .cloned()
                .unwrap_or_else(|| "portal-admins".to_owned()),
        ]
    } else {
        vec!["researchers".to_owned()]
    };
    let next = safe_next(form.next.as_deref());
    complete_sign_in(
        &state,
        &session,
        SignIn {
            issuer: DEV_ISSUER,
            subject: demo.username,
            username: demo.username,
            name: demo.name,
            email: Some(demo.email),
            groups,
            id_token: None,
            dev: true,
        },
        &next,
    )
    .await
}

#[derive(Deserialize)]
struct CsrfForm {
    csrf_token: Option<String>,
}

/// Whether a form's `csrf_token` is this session's.
fn token_matches(viewer: &Viewer, form: Option<&str>) -> bool {
    form.is_some_and(|t| {
        !viewer.csrf_token.is_empty()
            && constant_time_eq(t.as_bytes(), viewer.csrf_token.as_bytes())
    })
}

fn bad_csrf(lang: PageLang) -> Response {
    pages::message(StatusCode::FORBIDDEN, lang, "auth-msg-bad-csrf", None, "/")
}

/// `POST /auth/logout`: ends the session and, with a provider that advertises it, its session
/// too (RP-initiated logout).
async fn logout(
    State(state): State<AppState>,
    lang: PageLang,
    session: Session,
    Form(form): Form<CsrfForm>,
) -> Response {
    let user: Option<SessionUser> = session.get(USER_KEY).await.ok().flatten();
    let Some(user) = user else {
        return Redirect::to("/auth/login").into_response();
    };
    if !token_matches(&user.viewer, form.csrf_token.as_deref()) {
        return bad_csrf(lang);
    }
    if let Err(e) = session.flush().await {
        return crate::http::ApiError::Internal(e.into()).into_response();
    }
    audit(
        &state.db,
        &user.viewer.username,
        "auth.sign_out",
        serde_json::json!({}),
    )
    .await;
    let end_session = state
        .auth
        .oidc
        .as_ref()
        .and_then(|provider| provider.current())
        .zip(user.id_token.as_deref())
        .and_then(|(oidc, id_token)| {
            oidc.end_session_url(id_token, &format!("{}/", state.auth.public_url))
        });
    match end_session {
        Some(url) => Redirect::to(url.as_str()).into_response(),
        None => Redirect::to("/auth/login").into_response(),
    }
}

/// The signed-in user as `GET /api/v1/me` returns them.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Me {
    /// Login name.
    pub username: String,
    /// Display name.
    pub name: String,
    /// E-mail.
    pub email: Option<String>,
    /// Provider groups.
    pub groups: Vec<String>,
    /// `researcher` or `admin`.
    #[schema(value_type = String, example = "researcher")]
    pub role: Role,
}

/// Who the session or API token belongs to, with their role.
#[utoipa::path(
    get,
    path = "/api/v1/me",
    tag = "auth",
    responses(
        (status = 200, description = "The signed-in user", body = Me),
        (status = 401, description = "No session and no valid API token", body = crate::http::error::ErrorBody),
    )
)]
pub async fn me(principal: axum::Extension<Principal>) -> Json<Me> {
    let v = &principal.viewer;
    Json(Me {
        username: v.username.clone(),
        name: v.name.clone(),
        email: v.email.clone(),
        groups: v.groups.clone(),
        role: v.role,
    })
}

/// `GET /profile`: who you are and your API tokens.
async fn profile(
    State(state): State<AppState>,
    lang: PageLang,
    principal: axum::Extension<Principal>,
) -> Response {
    render_profile(&state, lang, &principal, None).await
}

async fn render_profile(
    state: &AppState,
    lang: PageLang,
    principal: &Principal,
    new_token: Option<(&str, &str)>,
) -> Response {
    match state.db.list_api_tokens(principal.user_id).await {
        Ok(tokens) => pages::profile(
            lang,
            &principal.viewer,
            &tokens,
            new_token,
            state.config.token_max_days,
        ),
        Err(e) => crate::http::ApiError::from(e).into_response(),
    }
}

#[derive(Deserialize)]
struct NewTokenForm {
    csrf_token: Option<String>,
    name: Option<String>,
    /// Days until it expires; unset or unreadable: [`TOKEN_DEFAULT_DAYS`].
    days: Option<String>,
}

/// Days a token works for unless its owner picks otherwise.
pub(crate) const TOKEN_DEFAULT_DAYS: u32 = 90;

/// The days a new token works for: what the owner asked, within 1 and the configured maximum.
fn token_days(asked: Option<&str>, max_days: u32) -> u32 {
    asked
        .and_then(|d| d.trim().parse::<u32>().ok())
        .unwrap_or(TOKEN_DEFAULT_DAYS)
        .clamp(1, max_days.max(1))
}

/// `POST /profile/tokens`: makes a token and shows it, once.
async fn create_token(
    State(state): State<AppState>,
    lang: PageLang,
    principal: axum::Extension<Principal>,
    Form(form): Form<NewTokenForm>,
) -> Response {
    if principal.via_token || !token_matches(&principal.viewer, form.csrf_token.as_deref()) {
        return bad_csrf(lang);
    }
    let name = form
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or("token")
        .chars()
        .take(100)
        .collect::<String>();
    let token = format!("mrt_{}", random_hex(32));
    let now = Utc::now();
    let days = token_days(form.days.as_deref(), state.config.token_max_days);
    let expires_at = now + chrono::Duration::days(i64::from(days));
    let id = match state
        .db
        .create_api_token(
            principal.user_id,
            &name,
            &token_hash(&token),
            now,
            expires_at,
        )
        .await
    {
        Ok(id) => id,
        Err(e) => return crate::http::ApiError::from(e).into_response(),
    };
    audit_token(
        &state.db,
        &principal.viewer.username,
        "auth.token_created",
        id,
        &name,
    )
    .await;
    render_profile(&state, lang, &principal, Some((&name, &token))).await
}

/// `POST /profile/tokens/{id}/revoke`.
async fn revoke_token(
    State(state): State<AppState>,
    lang: PageLang,
    principal: axum::Extension<Principal>,
    UrlPath(id): UrlPath<i64>,
    Form(form): Form<CsrfForm>,
) -> Response {
    if principal.via_token || !token_matches(&principal.viewer, form.csrf_token.as_deref()) {
        return bad_csrf(lang);
    }
    match state
        .db
        .revoke_api_token(principal.user_id, id, Utc::now())
        .await
    {
        Ok(Some(name)) => {
            state.auth.tokens.clear();
            audit_token(
                &state.db,
                &principal.viewer.username,
                "auth.token_revoked",
                id,
                &name,
            )
            .await;
            Redirect::to("/profile").into_response()
        }
        Ok(None) => pages::message(
            StatusCode::NOT_FOUND,
            lang,
            "auth-msg-no-such-token",
            None,
            "/profile",
        ),
        Err(e) => crate::http::ApiError::from(e).into_response(),
    }
}

async fn audit_token(db: &Db, actor: &str, action: &str, id: i64, name: &str) {
    let entry = NewAuditEntry {
        at: Utc::now(),
        actor,
        action,
        target: &format!("api_token:{id}"),
        detail: serde_json::json!({ "name": name }),
    };
    if let Err(e) = db.append_audit(&entry).await {
        tracing::error!(error = %e, action, "cannot write the audit log");
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn next_accepts_only_paths_on_the_portal() {
        assert_eq!(
            safe_next(Some("/catalog?state=desired")),
            "/catalog?state=desired"
        );
        for bad in [
            "https://evil.example/",
            "//evil.example/x",
            "/\\evil.example",
            "evil",
            "/auth/logout",
            "javascript:alert(1)",
        ] {
            assert_eq!(safe_next(Some(bad)), "/", "{bad}");
        }
        assert_eq!(safe_next(None), "/");
    }
}
