//! `POST /api/v1/forge/webhook`: a forge tells the portal a pull request was merged or closed.

use super::refusals::Refusals;
use std::sync::Arc;

use axum::{
    Json,
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
};
use chrono::Utc;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::adapters::db::Db;
use crate::adapters::db::NewAuditEntry;
use crate::adapters::forge::WebhookError;
use crate::adapters::forge::verify_and_parse;
use crate::app::selfservice::service::SelfService;
use crate::app::selfservice::service::WebhookOutcome;
use crate::config::Config;
use crate::http::error::{ApiError, ErrorBody};
use crate::http::state::AppState;

/// The webhook route.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(webhook))
}

/// A forge's pull request event. Public: the signature (`X-Hub-Signature-256`,
/// `X-Gitlab-Token`, `X-Gitea-Signature`) made with `MIRANTE_WEBHOOK_SECRET` is the
/// credential. A bad or missing one is a 401 and an audit entry.
#[utoipa::path(
    post,
    path = "/api/v1/forge/webhook",
    tag = "self-service",
    request_body(content = Object, description = "The forge's event payload, as the forge sends it"),
    responses(
        (status = 200, description = "About a request of the portal", body = WebhookOutcome),
        (status = 202, description = "Genuine but about nothing the portal follows", body = WebhookOutcome),
        (status = 400, description = "Signed, but not a payload this forge sends", body = ErrorBody),
        (status = 401, description = "Missing or wrong signature, or no secret configured", body = ErrorBody),
    )
)]
pub(crate) async fn webhook(
    State(service): State<Arc<SelfService>>,
    State(config): State<Arc<Config>>,
    State(db): State<Db>,
    State(refusals): State<Arc<Refusals>>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<(StatusCode, Json<WebhookOutcome>), ApiError> {
    let kind = config.forge;
    let refused = |reason: &'static str| async move {
        // Forgeries come in floods: one line and one row per window (see `refusals`).
        if let Some(repeated) = refusals.note(reason, std::time::Instant::now()) {
            tracing::warn!(forge = %kind, reason, repeated, "forge webhook refused");
            let entry = NewAuditEntry {
                at: Utc::now(),
                actor: "anonymous",
                action: "forge.webhook_refused",
                target: "forge",
                detail: serde_json::json!({ "forge": kind, "reason": reason, "repeated": repeated }),
            };
            if let Err(error) = db.append_audit(&entry).await {
                tracing::error!(%error, "cannot write the audit entry");
            }
        }
        ApiError::Unauthorized("the webhook signature is missing or wrong".to_owned())
    };
    let Some(secret) = config.webhook_secret.as_ref() else {
        return Err(refused("MIRANTE_WEBHOOK_SECRET is not set").await);
    };
    let event = match verify_and_parse(kind, &headers, &bytes, secret) {
        Ok(event) => event,
        Err(WebhookError::BadSignature) => return Err(refused("bad signature").await),
        Err(WebhookError::Malformed(m)) => {
            return Err(ApiError::BadRequest(format!("malformed webhook: {m}")));
        }
    };
    let outcome = match event {
        Some(event) => service.follow_webhook(&event).await?,
        None => WebhookOutcome::Ignored,
    };
    let status = if outcome == WebhookOutcome::Ignored {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(outcome)))
}
