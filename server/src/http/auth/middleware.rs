//! The middleware every request goes through: the host and the path it is sent to, the
//! client's budget, who sends it (API token on `/api/*`, else the session), the policy's
//! decision and the CSRF Origin check.

use std::net::{IpAddr, SocketAddr};

use axum::{
    Json,
    extract::{ConnectInfo, Request, State},
    http::{HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};
use chrono::Utc;
use mirante_domain::Viewer;
use tower_sessions::Session;

use super::{
    Auth, DEV_ISSUER, Principal, SessionUser, limits, origin,
    origin::same_origin,
    pages::{self, PageLang},
    policy::{self, Access, Caller, Decision, Route},
    session::{LANG_KEY, SEEN_KEY, USER_KEY, audit, token_hash},
    tokens,
};
use crate::http::state::AppState;

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
                remember_language(&state, &session, user.user_id, req.headers()).await;
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
            // A public route (the stylesheet and bundle, the probes) needs nobody's identity:
            // it is served as to anyone, so the degraded page itself keeps its style.
            Err(e) if access == Access::Public => {
                tracing::debug!(error = %e, "cannot read the session for a public route");
            }
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

pub(super) fn encode(s: &str) -> String {
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

/// Records on the user the language their request's cookie names (the UI's language switch
/// sets it), so the messages the portal sends them speak it; written once per change.
async fn remember_language(
    state: &AppState,
    session: &Session,
    user_id: i64,
    headers: &axum::http::HeaderMap,
) {
    let Some(lang) = headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| {
            let (k, v) = c.trim().split_once('=')?;
            (k == mirante_frontend::i18n::LANG_COOKIE).then_some(v)
        })
        .and_then(mirante_frontend::i18n::Lang::from_tag)
    else {
        return;
    };
    let recorded = session.get::<String>(LANG_KEY).await.ok().flatten();
    if recorded.as_deref() == Some(lang.tag()) {
        return;
    }
    match state.db.set_user_language(user_id, lang.tag()).await {
        Ok(()) => {
            let _ = session.insert(LANG_KEY, lang.tag().to_owned()).await;
        }
        Err(error) => tracing::debug!(%error, "cannot record the user's language"),
    }
}
