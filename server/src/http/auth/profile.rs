//! Who is signed in, and their API tokens: `/api/v1/me`, the `/profile` page, and making and
//! revoking tokens.

use axum::{
    Form, Json,
    extract::{Path as UrlPath, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use chrono::Utc;
use mirante_domain::Role;
use serde::{Deserialize, Serialize};

use super::{
    Principal,
    pages::TokenShown,
    pages::{self, PageLang},
    session::{random_hex, token_hash},
    sign_in::{CsrfForm, bad_csrf, token_matches},
};
use crate::{
    adapters::db::{Db, NewAuditEntry},
    http::state::AppState,
};

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
    /// What the portal tells them and how.
    pub notifications: MyNotifications,
}

/// A person's choices for the messages the portal sends them.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct MyNotifications {
    /// Whether they receive e-mail about their requests (admins: also requests awaiting
    /// approval).
    pub email: bool,
    /// The language of the UI they last used, which their e-mail is written in (BCP 47);
    /// null: the portal's default.
    #[schema(example = "pt-BR")]
    pub language: Option<String>,
}

/// What `POST /api/v1/me/notifications` changes.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NotificationChoice {
    /// Whether the caller receives e-mail.
    pub email: bool,
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
pub async fn me(
    State(db): State<Db>,
    principal: axum::Extension<Principal>,
) -> Result<Json<Me>, crate::http::ApiError> {
    let v = &principal.viewer;
    Ok(Json(Me {
        username: v.username.clone(),
        name: v.name.clone(),
        email: v.email.clone(),
        groups: v.groups.clone(),
        role: v.role,
        notifications: my_notifications(&db, principal.user_id).await?,
    }))
}

async fn my_notifications(
    db: &Db,
    user_id: i64,
) -> Result<MyNotifications, crate::adapters::db::DbError> {
    let prefs = db.notification_prefs(user_id).await?;
    Ok(MyNotifications {
        email: prefs.as_ref().is_none_or(|p| p.email),
        language: prefs.and_then(|p| p.language),
    })
}

/// Turns the caller's e-mail on or off (`{"email": false}`); answers their choices.
#[utoipa::path(
    post,
    path = "/api/v1/me/notifications",
    tag = "auth",
    request_body = NotificationChoice,
    responses(
        (status = 200, description = "The caller's choices, as stored", body = MyNotifications),
        (status = 401, description = "No session and no valid API token", body = crate::http::error::ErrorBody),
        (status = 400, description = "The body is not `{\"email\": true|false}`", body = crate::http::error::ErrorBody),
    )
)]
pub async fn set_my_notifications(
    State(db): State<Db>,
    principal: axum::Extension<Principal>,
    body: Result<Json<NotificationChoice>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<MyNotifications>, crate::http::ApiError> {
    let body = crate::http::api::selfservice::body(body)?;
    db.set_email_notifications(principal.user_id, body.email)
        .await?;
    audit_notifications(&db, &principal.viewer.username, body.email).await;
    Ok(Json(my_notifications(&db, principal.user_id).await?))
}

#[derive(Deserialize)]
pub(super) struct NotificationsForm {
    csrf_token: Option<String>,
    /// The checkbox: present (`on`) when ticked, absent otherwise.
    email: Option<String>,
}

/// `POST /profile/notifications`: the profile page's e-mail choice.
pub(super) async fn set_notifications(
    State(state): State<AppState>,
    lang: PageLang,
    principal: axum::Extension<Principal>,
    Form(form): Form<NotificationsForm>,
) -> Response {
    if principal.via_token || !token_matches(&principal.viewer, form.csrf_token.as_deref()) {
        return bad_csrf(lang);
    }
    let on = form.email.is_some();
    if let Err(e) = state
        .db
        .set_email_notifications(principal.user_id, on)
        .await
    {
        return crate::http::ApiError::from(e).into_response();
    }
    audit_notifications(&state.db, &principal.viewer.username, on).await;
    Redirect::to("/profile").into_response()
}

async fn audit_notifications(db: &Db, actor: &str, email: bool) {
    let entry = NewAuditEntry {
        at: Utc::now(),
        actor,
        action: "profile.notifications",
        target: &format!("user:{actor}"),
        detail: serde_json::json!({ "email": email }),
    };
    if let Err(e) = db.append_audit(&entry).await {
        tracing::error!(error = %e, "cannot write the audit log");
    }
}

/// `GET /profile`: who you are and your API tokens.
pub(super) async fn profile(
    State(state): State<AppState>,
    lang: PageLang,
    principal: axum::Extension<Principal>,
) -> Response {
    render_profile(&state, lang, &principal, TokenShown::Nothing).await
}

async fn render_profile(
    state: &AppState,
    lang: PageLang,
    principal: &Principal,
    new_token: TokenShown<'_>,
) -> Response {
    let notifications = match my_notifications(&state.db, principal.user_id).await {
        Ok(n) => n,
        Err(e) => return crate::http::ApiError::from(e).into_response(),
    };
    match state.db.list_api_tokens(principal.user_id).await {
        Ok(tokens) => pages::profile(
            lang,
            &principal.viewer,
            notifications.email,
            &tokens,
            new_token,
            state.config.token_max_days,
        ),
        Err(e) => crate::http::ApiError::from(e).into_response(),
    }
}

#[derive(Deserialize)]
pub(super) struct NewTokenForm {
    csrf_token: Option<String>,
    name: Option<String>,
    /// Days until it expires; unset or unreadable: [`TOKEN_DEFAULT_DAYS`].
    days: Option<String>,
    /// The key the form was drawn with: the same form sent twice makes one token.
    request_key: Option<String>,
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
pub(super) async fn create_token(
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
    let request_key = form
        .request_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty() && k.len() <= 100);
    let id = match state
        .db
        .create_api_token(
            principal.user_id,
            &name,
            &token_hash(&token),
            now,
            expires_at,
            request_key,
        )
        .await
    {
        Ok(created) if created.replayed => {
            return render_profile(&state, lang, &principal, TokenShown::AlreadyMade).await;
        }
        Ok(created) => created.id,
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
    render_profile(&state, lang, &principal, TokenShown::New(&name, &token)).await
}

/// `POST /profile/tokens/{id}/revoke`.
pub(super) async fn revoke_token(
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
