//! Signing in and out: the `/auth/*` routes, with the OpenID Connect provider or the
//! development sign-in, and the CSRF token that the portal's own forms carry.

use axum::{
    Form,
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use chrono::Utc;
use mirante_domain::Viewer;
use serde::Deserialize;
use tower_sessions::Session;

use super::{
    SessionUser,
    middleware::encode,
    pages::{self, PageLang},
    session::{LOGIN_KEY, USER_KEY, audit, random_hex},
};
use crate::{
    adapters::{db::NewUser, oidc::PendingLogin},
    http::state::AppState,
};

/// Issuer recorded for users of the development sign-in.
pub const DEV_ISSUER: &str = "dev";

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
pub(super) struct LoginQuery {
    next: Option<String>,
}

/// `GET /auth/login?next=PATH`: the development sign-in page, or a redirect to the provider.
pub(super) async fn login(
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
pub(super) struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /auth/callback`: the provider sends the browser back here with a code.
pub(super) async fn callback(
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
pub(super) struct DevLoginForm {
    user: String,
    next: Option<String>,
}

/// `POST /auth/dev`: the development sign-in (only without an OpenID provider).
pub(super) async fn dev_login(
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
pub(super) struct CsrfForm {
    pub(super) csrf_token: Option<String>,
}

/// Whether a form's `csrf_token` is this session's.
pub(super) fn token_matches(viewer: &Viewer, form: Option<&str>) -> bool {
    form.is_some_and(|t| {
        !viewer.csrf_token.is_empty()
            && constant_time_eq(t.as_bytes(), viewer.csrf_token.as_bytes())
    })
}

pub(super) fn bad_csrf(lang: PageLang) -> Response {
    pages::message(StatusCode::FORBIDDEN, lang, "auth-msg-bad-csrf", None, "/")
}

/// `POST /auth/logout`: ends the session and, with a provider that advertises it, its session
/// too (RP-initiated logout).
pub(super) async fn logout(
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
