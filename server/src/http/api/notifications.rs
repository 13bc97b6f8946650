//! `GET /api/v1/notifications`: the notification outbox for admins, so that messages the
//! portal could not deliver are seen (`?state=failed`), with their last error.

use axum::{
    Json,
    extract::{RawQuery, State},
};
use chrono::{DateTime, Utc};
use mirante_domain::notification::DeliveryState;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::query::Params;
use crate::{
    adapters::db::{Db, notifications::NotificationRecord},
    http::{
        error::{ApiError, ErrorBody},
        state::AppState,
    },
};

/// The outbox route.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_notifications))
}

/// One message of the outbox.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct NotificationView {
    /// Key.
    pub id: i64,
    /// The notice: `awaits_approval`, `approved`, `rejected`, `proposed`, `merged`, `live`,
    /// `degraded`, `failed`.
    #[schema(example = "approved")]
    pub kind: String,
    /// The request it is about.
    pub request_id: Option<i64>,
    /// `email` or `webhook`.
    #[schema(example = "email")]
    pub channel: String,
    /// The e-mail address (e-mail only).
    pub recipient: Option<String>,
    /// The recipient's language (BCP 47); absent: the portal's default.
    pub language: Option<String>,
    /// `pending`, `sent` or `failed`.
    #[schema(example = "failed")]
    pub state: String,
    /// Attempts so far.
    pub attempts: i64,
    /// What went wrong the last time.
    pub last_error: Option<String>,
    /// When a pending message is tried next.
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// When the mail server or the webhook accepted it.
    pub sent_at: Option<DateTime<Utc>>,
}

impl From<NotificationRecord> for NotificationView {
    fn from(r: NotificationRecord) -> Self {
        NotificationView {
            id: r.id,
            kind: r.kind,
            request_id: r.request_id,
            channel: r.channel.as_str().to_owned(),
            recipient: r.recipient,
            language: r.language,
            next_attempt_at: (r.state == DeliveryState::Pending)
                .then(|| DateTime::from_timestamp_millis(r.run_after_ms))
                .flatten(),
            state: r.state.as_str().to_owned(),
            attempts: r.attempts,
            last_error: r.last_error,
            created_at: r.created_at,
            sent_at: r.sent_at,
        }
    }
}

/// The outbox, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct NotificationList {
    /// At most 500 messages.
    pub notifications: Vec<NotificationView>,
}

/// The notification outbox, newest first (at most 500): every message, or those `pending`
/// (not sent yet, retried with a backoff), `sent`, or `failed` (given up after the last
/// attempt, with its error). Admins only.
#[utoipa::path(
    get,
    path = "/api/v1/notifications",
    tag = "self-service",
    params(
        ("state" = Option<String>, Query, description = "`pending`, `sent` or `failed`"),
    ),
    responses(
        (status = 200, description = "The messages", body = NotificationList),
        (status = 400, description = "An unknown parameter or state", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an admin", body = ErrorBody),
    )
)]
pub(crate) async fn list_notifications(
    State(db): State<Db>,
    RawQuery(raw): RawQuery,
) -> Result<Json<NotificationList>, ApiError> {
    let params = Params::parse(raw.as_deref(), &["state"])?;
    let state = params.parse_with("state", DeliveryState::parse, "pending, sent, failed")?;
    let rows = db.notifications(state, 500).await?;
    Ok(Json(NotificationList {
        notifications: rows.into_iter().map(NotificationView::from).collect(),
    }))
}
