//! Self-service over JSON: templates, previews, requests and their decisions, the local merge,
//! and the forge webhook. Every handler is a thin call into
//! [`SelfService`](crate::app::selfservice::service::SelfService), which applies the object-level
//! rules; the route-level ones are in `http::auth::policy::ROUTES`. The forge webhook is in
//! `api::webhook`.

use std::sync::Arc;

use axum::{
    Extension, Json,
    body::Bytes,
    extract::{State, rejection::JsonRejection},
    http::{HeaderMap, StatusCode},
};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::adapters::forge::MergeStyle;
use crate::app::selfservice::service::CatalogChangeInput;
use crate::app::selfservice::service::CatalogChangePreview;
use crate::app::selfservice::service::Preview;
use crate::app::selfservice::service::RequestDetail;
use crate::app::selfservice::service::RequestInput;
use crate::app::selfservice::service::RequestSummary;
use crate::app::selfservice::service::SelfService;
use crate::app::selfservice::service::ServiceError;
use crate::app::selfservice::service::TemplateDetail;
use crate::app::selfservice::service::TemplateSummary;
use crate::http::auth::Principal;
use crate::http::error::{ApiError, ApiPath, ErrorBody};
use crate::http::state::AppState;
use mirante_api_types::selfservice::{ProposedChange, ResourceRequestInput, ResubmitInput};

/// The self-service routes.
pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_templates))
        .routes(routes!(get_template))
        .routes(routes!(preview))
        .routes(routes!(submit, list_requests))
        .routes(routes!(get_request))
        .routes(routes!(get_proposed_change))
        .routes(routes!(approve))
        .routes(routes!(reject))
        .routes(routes!(merge))
        .routes(routes!(preview_catalog_change))
        .routes(routes!(submit_catalog_change))
        .routes(routes!(ask_on_resource))
        .routes(routes!(preview_on_resource))
        .routes(routes!(withdraw))
        .routes(routes!(resubmit))
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::NotFound(m) => ApiError::NotFound(m),
            ServiceError::Forbidden(m) => ApiError::Forbidden(m),
            ServiceError::Invalid(fields) => ApiError::InvalidFields(fields),
            e @ ServiceError::OverCapacity(_) => {
                let message = e.to_string();
                let ServiceError::OverCapacity(field) = e else {
                    unreachable!()
                };
                ApiError::ConflictFields(message, vec![*field])
            }
            ServiceError::BadRequest(m) => ApiError::BadRequest(m),
            ServiceError::Conflict(m) => ApiError::Conflict(m),
            ServiceError::Duplicate { request, message } => {
                ApiError::Duplicate { message, request }
            }
            ServiceError::KeyReused(m) => ApiError::Unprocessable(m),
            ServiceError::Unavailable(m) => ApiError::Unavailable(m),
            ServiceError::Internal(e) => ApiError::Internal(e),
        }
    }
}

/// The `Idempotency-Key` header of a creating POST: a client's name for one creation, so
/// that sending it again answers the first result instead of making a second one. 1 to 255
/// visible ASCII characters; anything else is a 400.
fn idempotency_key(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get(IDEMPOTENCY_KEY) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .filter(|k| (1..=255).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()))
        .map(Some)
        .ok_or_else(|| {
            ApiError::BadRequest(
                "the Idempotency-Key header must be 1 to 255 visible ASCII characters".to_owned(),
            )
        })
}

/// The header a client names one creation with.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// A creation's answer: 201 with the request; a replay of an earlier creation (same
/// `Idempotency-Key`, same input) says so in `Idempotent-Replayed: true`.
fn created(submitted: crate::app::selfservice::service::Submitted) -> CreatedAnswer {
    let replayed = if submitted.replayed { "true" } else { "false" };
    (
        StatusCode::CREATED,
        [("idempotent-replayed", replayed)],
        Json(submitted.detail),
    )
}

/// The answer of a creating POST.
type CreatedAnswer = (
    StatusCode,
    [(&'static str, &'static str); 1],
    Json<RequestDetail>,
);

/// A JSON body, with a JSON error (400, or 413 when it is too large) when it is not one.
pub(crate) fn body<T>(json: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    json.map(|Json(v)| v).map_err(|r| {
        let message = format!("invalid JSON body: {}", r.body_text());
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::TooLarge(message)
        } else {
            ApiError::BadRequest(message)
        }
    })
}

/// An optional JSON body: empty means the defaults.
fn optional_body<T: DeserializeOwned + Default>(bytes: &Bytes) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))
}

/// The templates a caller may use.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TemplateList {
    /// By id.
    pub templates: Vec<TemplateSummary>,
}

/// The templates the caller may use.
#[utoipa::path(
    get,
    path = "/api/v1/templates",
    tag = "self-service",
    responses(
        (status = 200, description = "Templates the caller may use", body = TemplateList),
        (status = 401, description = "Not signed in", body = ErrorBody),
    )
)]
pub(crate) async fn list_templates(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
) -> Json<TemplateList> {
    Json(TemplateList {
        templates: service.templates_for(&principal).await,
    })
}

/// A template with its parameters; 404 for one the caller may not use.
#[utoipa::path(
    get,
    path = "/api/v1/templates/{id}",
    tag = "self-service",
    params(("id" = String, Path, description = "Template id")),
    responses(
        (status = 200, description = "The template", body = TemplateDetail),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "No such template, or not one the caller may use", body = ErrorBody),
    )
)]
pub(crate) async fn get_template(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<TemplateDetail>, ApiError> {
    Ok(Json(service.template_for(&principal, &id).await?))
}

/// Renders a request without storing it: every file with a diff against the base branch.
#[utoipa::path(
    post,
    path = "/api/v1/requests/preview",
    tag = "self-service",
    request_body = RequestInput,
    responses(
        (status = 200, description = "The files the request would propose", body = Preview),
        (status = 400, description = "Not a JSON request", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "No such template for the caller", body = ErrorBody),
        (status = 409, description = "The target directory already exists in the monorepo", body = ErrorBody),
        (status = 422, description = "Invalid values: `details` lists every field", body = ErrorBody),
        (status = 503, description = "The forge is unavailable", body = ErrorBody),
    )
)]
pub(crate) async fn preview(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    input: Result<Json<RequestInput>, JsonRejection>,
) -> Result<Json<Preview>, ApiError> {
    let input = body(input)?;
    Ok(Json(service.preview(&principal, &input).await?))
}

/// Submits a request: the same checks as the preview, then it is stored and awaits approval
/// or is proposed.
#[utoipa::path(
    post,
    path = "/api/v1/requests",
    tag = "self-service",
    request_body = RequestInput,
    params(
        ("Idempotency-Key" = Option<String>, Header, description = "A name for this creation (1 to 255 visible ASCII characters): sent again with the same body, it answers the request the first call made (`Idempotent-Replayed: true`) instead of making another"),
    ),
    responses(
        (status = 201, description = "The request as stored, or as an earlier call with the same Idempotency-Key stored it", body = RequestDetail,
            headers(("Idempotent-Replayed" = String, description = "`true` when an earlier call made this request"))),
        (status = 400, description = "Not a JSON request, or a malformed Idempotency-Key", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "No such template for the caller", body = ErrorBody),
        (status = 409, description = "The target directory already exists in the monorepo, or an open request already asks for it (`request` names it)", body = ErrorBody),
        (status = 422, description = "Invalid values: `details` lists every field; more GPUs than the cluster has free is code `exceeds_free_capacity` on the GPUs field, its message naming the numbers (`asks 1, gpu-sp-01 has 1, 1 allocated to ws-rui-llm`); or an Idempotency-Key used before with another body", body = ErrorBody),
        (status = 503, description = "The forge is unavailable", body = ErrorBody),
    )
)]
pub(crate) async fn submit(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    input: Result<Json<RequestInput>, JsonRejection>,
) -> Result<CreatedAnswer, ApiError> {
    let key = idempotency_key(&headers)?;
    let input = body(input)?;
    Ok(created(service.submit(&principal, &input, key).await?))
}

/// What a change of a catalog item would propose, without storing it: its catalog file's
/// diff against the base branch (admins).
#[utoipa::path(
    post,
    path = "/api/v1/items/{id}/changes/preview",
    tag = "self-service",
    params(("id" = String, Path, description = "Item id")),
    request_body = CatalogChangeInput,
    responses(
        (status = 200, description = "The catalog file's diff and the fields before and after", body = CatalogChangePreview),
        (status = 400, description = "Not a JSON request, or a change that changes nothing", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an admin", body = ErrorBody),
        (status = 404, description = "No such item on the base branch", body = ErrorBody),
        (status = 409, description = "The catalog cannot be changed from the portal now (read from elsewhere than the monorepo, or the item written as a flow mapping)", body = ErrorBody),
        (status = 422, description = "Invalid fields, or a change that makes the catalog invalid: `details` lists every problem", body = ErrorBody),
    )
)]
pub(crate) async fn preview_catalog_change(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
    input: Result<Json<CatalogChangeInput>, JsonRejection>,
) -> Result<Json<CatalogChangePreview>, ApiError> {
    let input = body(input)?;
    Ok(Json(
        service
            .preview_catalog_change(&principal, &id, &input)
            .await?,
    ))
}

/// Proposes a change of a catalog item's state, qualifier and evidence (admins): the same
/// checks as the preview, then a request that needs no approval is stored and the worker
/// opens its pull request.
#[utoipa::path(
    post,
    path = "/api/v1/items/{id}/changes",
    tag = "self-service",
    params(
        ("id" = String, Path, description = "Item id"),
        ("Idempotency-Key" = Option<String>, Header, description = "A name for this creation (1 to 255 visible ASCII characters): sent again with the same body, it answers the request the first call made (`Idempotent-Replayed: true`) instead of making another"),
    ),
    request_body = CatalogChangeInput,
    responses(
        (status = 201, description = "The request as stored, or as an earlier call with the same Idempotency-Key stored it", body = RequestDetail,
            headers(("Idempotent-Replayed" = String, description = "`true` when an earlier call made this request"))),
        (status = 400, description = "Not a JSON request, a change that changes nothing, or a malformed Idempotency-Key", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an admin", body = ErrorBody),
        (status = 404, description = "No such item on the base branch", body = ErrorBody),
        (status = 409, description = "The catalog cannot be changed from the portal now", body = ErrorBody),
        (status = 422, description = "Invalid fields, or a change that makes the catalog invalid: `details` lists every problem; or an Idempotency-Key used before with another body", body = ErrorBody),
    )
)]
pub(crate) async fn submit_catalog_change(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
    headers: HeaderMap,
    input: Result<Json<CatalogChangeInput>, JsonRejection>,
) -> Result<CreatedAnswer, ApiError> {
    let key = idempotency_key(&headers)?;
    let input = body(input)?;
    Ok(created(
        service
            .submit_catalog_change(&principal, &id, &input, key)
            .await?,
    ))
}

/// Requests the caller may see.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RequestList {
    /// Newest first.
    pub requests: Vec<RequestSummary>,
}

/// Requests, newest first: a researcher's own, or everyone's for an admin.
#[utoipa::path(
    get,
    path = "/api/v1/requests",
    tag = "self-service",
    responses(
        (status = 200, description = "The requests the caller may see", body = RequestList),
        (status = 401, description = "Not signed in", body = ErrorBody),
    )
)]
pub(crate) async fn list_requests(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
) -> Result<Json<RequestList>, ApiError> {
    Ok(Json(RequestList {
        requests: service.list_requests(&principal).await?,
    }))
}

/// A request: state, timeline, files, pull request, last error. Another researcher's request
/// is a 404.
#[utoipa::path(
    get,
    path = "/api/v1/requests/{id}",
    tag = "self-service",
    params(("id" = i64, Path, description = "Request id")),
    responses(
        (status = 200, description = "The request", body = RequestDetail),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "No such request for the caller", body = ErrorBody),
    )
)]
pub(crate) async fn get_request(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<RequestDetail>, ApiError> {
    Ok(Json(service.request(&principal, id).await?))
}

/// What a request's pull request proposes: its branch's commits the base branch did not have
/// and every file changed with git's unified diff, and whether it is open, merged or closed.
/// The local forge has no pull request page of its own; this is it. With a hosted forge the
/// forge's own page shows it (`pr_url`), and this answers 409 with that address.
#[utoipa::path(
    get,
    path = "/api/v1/requests/{id}/change",
    tag = "self-service",
    params(("id" = i64, Path, description = "Request id")),
    responses(
        (status = 200, description = "The proposed change", body = ProposedChange),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "No such request for the caller, or its branch is gone", body = ErrorBody),
        (status = 409, description = "No pull request yet, or it is read on a hosted forge", body = ErrorBody),
    )
)]
pub(crate) async fn get_proposed_change(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<ProposedChange>, ApiError> {
    Ok(Json(service.proposed_change(&principal, id).await?))
}

/// The body of an admin's approval or rejection: an optional comment on approval, a required
/// one on rejection. (Not to be confused with an architectural `Decision` of the catalog.)
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviewDecision {
    /// Why.
    #[serde(default)]
    pub comment: Option<String>,
    /// Approvals only: why the request is approved although its cluster has fewer GPUs free
    /// than it asks for. Without it such an approval is refused (409, `exceeds_free_capacity`).
    #[serde(default)]
    pub overcommit_reason: Option<String>,
}

/// Asks to update, extend or remove a resource (its owner, or an admin): the change is
/// checked, its files rendered (or, for a removal, the folder's files listed for deletion)
/// and stored as a request of its own, with the same journey as the one that made the
/// resource. An update waits for an admin where the template asks for approval; an extension
/// and a removal do not.
#[utoipa::path(
    post,
    path = "/api/v1/resources/{id}/requests",
    tag = "self-service",
    params(
        ("id" = i64, Path, description = "Resource id (the id of the request that made it)"),
        ("Idempotency-Key" = Option<String>, Header, description = "A name for this creation (1 to 255 visible ASCII characters): sent again with the same body, it answers the request the first call made (`Idempotent-Replayed: true`) instead of making another"),
    ),
    request_body = ResourceRequestInput,
    responses(
        (status = 201, description = "The new request as stored, or as an earlier call with the same Idempotency-Key stored it", body = RequestDetail,
            headers(("Idempotent-Replayed" = String, description = "`true` when an earlier call made this request"))),
        (status = 400, description = "Not a JSON request, a `kind` that is none of the four, or a malformed Idempotency-Key", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not the resource's owner nor an admin", body = ErrorBody),
        (status = 404, description = "No such resource for the caller", body = ErrorBody),
        (status = 409, description = "The resource's files are not on the base branch (not merged yet, or removed), or an open request already acts on it (`request` names it)", body = ErrorBody),
        (status = 422, description = "Invalid values: `details` lists every field (an extension changes only `days`; values that would move the resource or change nothing are refused; more GPUs than the cluster has free is code `exceeds_free_capacity`); or an Idempotency-Key used before with another body", body = ErrorBody),
        (status = 503, description = "The forge is unavailable", body = ErrorBody),
    )
)]
pub(crate) async fn ask_on_resource(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
    headers: HeaderMap,
    input: Result<Json<ResourceRequestInput>, JsonRejection>,
) -> Result<CreatedAnswer, ApiError> {
    let key = idempotency_key(&headers)?;
    let input = body(input)?;
    Ok(created(
        service.ask_on_resource(&principal, id, &input, key).await?,
    ))
}

/// What asking to update, extend or remove a resource would propose, without storing
/// anything: every file written or deleted with its diff against the base branch, and whether
/// an admin approves it first. Refused exactly as `POST /api/v1/resources/{id}/requests`
/// would refuse it.
#[utoipa::path(
    post,
    path = "/api/v1/resources/{id}/requests/preview",
    tag = "self-service",
    params(("id" = i64, Path, description = "Resource id (the id of the request that made it)")),
    request_body = ResourceRequestInput,
    responses(
        (status = 200, description = "What the request would propose (a removal's files have status `deleted`)", body = Preview),
        (status = 400, description = "Not a JSON request, or a `kind` that is none of the four", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not the resource's owner nor an admin", body = ErrorBody),
        (status = 404, description = "No such resource for the caller", body = ErrorBody),
        (status = 409, description = "The resource's files are not on the base branch", body = ErrorBody),
        (status = 422, description = "Invalid values: `details` lists every field", body = ErrorBody),
        (status = 503, description = "The forge is unavailable", body = ErrorBody),
    )
)]
pub(crate) async fn preview_on_resource(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
    input: Result<Json<ResourceRequestInput>, JsonRejection>,
) -> Result<Json<Preview>, ApiError> {
    let input = body(input)?;
    Ok(Json(
        service.preview_on_resource(&principal, id, &input).await?,
    ))
}

/// Takes a request back before it is proposed (its author, or an admin): it is closed, and
/// the timeline says who withdrew it. A proposed request is withdrawn by closing its pull
/// request.
#[utoipa::path(
    post,
    path = "/api/v1/requests/{id}/withdraw",
    tag = "self-service",
    params(("id" = i64, Path, description = "Request id")),
    responses(
        (status = 200, description = "The request, closed", body = RequestDetail),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not the request's author nor an admin", body = ErrorBody),
        (status = 404, description = "No such request for the caller", body = ErrorBody),
        (status = 409, description = "The request is being proposed or past that", body = ErrorBody),
    )
)]
pub(crate) async fn withdraw(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<RequestDetail>, ApiError> {
    Ok(Json(service.withdraw(&principal, id).await?))
}

/// Makes a request again (its author, or an admin) after it ended without a merge — rejected,
/// withdrawn or failed — with changed values: a new request of the same kind (a creation, or
/// the same day-two action on the same resource) through every check a first one passes,
/// whose `resubmits` names the old one (and the old one's `resubmitted_as` the new).
#[utoipa::path(
    post,
    path = "/api/v1/requests/{id}/resubmit",
    tag = "self-service",
    params(
        ("id" = i64, Path, description = "The ended request's id"),
        ("Idempotency-Key" = Option<String>, Header, description = "A name for this creation (1 to 255 visible ASCII characters): sent again with the same body, it answers the request the first call made (`Idempotent-Replayed: true`) instead of making another"),
    ),
    request_body = ResubmitInput,
    responses(
        (status = 201, description = "The new request as stored, or as an earlier call with the same Idempotency-Key stored it", body = RequestDetail,
            headers(("Idempotent-Replayed" = String, description = "`true` when an earlier call made this request"))),
        (status = 400, description = "Not a JSON request, or a malformed Idempotency-Key", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not the request's author nor an admin", body = ErrorBody),
        (status = 404, description = "No such request for the caller", body = ErrorBody),
        (status = 409, description = "The request did not end without a merge, is a catalog change, or an open request already asks for its folder (`request` names it)", body = ErrorBody),
        (status = 422, description = "Invalid values: `details` lists every field; or an Idempotency-Key used before with another body", body = ErrorBody),
        (status = 503, description = "The forge is unavailable", body = ErrorBody),
    )
)]
pub(crate) async fn resubmit(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
    headers: HeaderMap,
    input: Result<Json<ResubmitInput>, JsonRejection>,
) -> Result<CreatedAnswer, ApiError> {
    let key = idempotency_key(&headers)?;
    let input = body(input)?;
    Ok(created(
        service.resubmit(&principal, id, &input.values, key).await?,
    ))
}

/// Approves a request awaiting approval (admins); the worker proposes it next.
#[utoipa::path(
    post,
    path = "/api/v1/requests/{id}/approve",
    tag = "self-service",
    params(("id" = i64, Path, description = "Request id")),
    request_body(content = Option<ReviewDecision>, description = "Optional; `{}` or no body for no comment"),
    responses(
        (status = 200, description = "The request, approved", body = RequestDetail),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an admin", body = ErrorBody),
        (status = 404, description = "No such request", body = ErrorBody),
        (status = 409, description = "The request is not awaiting approval; or it asks for more GPUs than its cluster has free and no `overcommit_reason` was given: `details` holds one entry, field `gpus`, code `exceeds_free_capacity`, with the numbers in its message", body = ErrorBody),
    )
)]
pub(crate) async fn approve(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
    bytes: Bytes,
) -> Result<Json<RequestDetail>, ApiError> {
    let decision: ReviewDecision = optional_body(&bytes)?;
    Ok(Json(
        service
            .approve(
                &principal,
                id,
                decision.comment.as_deref(),
                decision.overcommit_reason.as_deref(),
            )
            .await?,
    ))
}

/// Rejects a request awaiting approval (admins), with a comment.
#[utoipa::path(
    post,
    path = "/api/v1/requests/{id}/reject",
    tag = "self-service",
    params(("id" = i64, Path, description = "Request id")),
    request_body = ReviewDecision,
    responses(
        (status = 200, description = "The request, rejected", body = RequestDetail),
        (status = 400, description = "No comment", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an admin", body = ErrorBody),
        (status = 404, description = "No such request", body = ErrorBody),
        (status = 409, description = "The request is not awaiting approval", body = ErrorBody),
    )
)]
pub(crate) async fn reject(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
    bytes: Bytes,
) -> Result<Json<RequestDetail>, ApiError> {
    let decision: ReviewDecision = optional_body(&bytes)?;
    let comment = decision.comment.unwrap_or_default();
    Ok(Json(service.reject(&principal, id, &comment).await?))
}

/// How to merge.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MergeOptions {
    /// `fast-forward` (the default; a merge commit when the base has moved) or
    /// `merge-commit`.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "fast-forward")]
    pub style: Option<MergeStyle>,
}

/// Merges a proposed request's pull request into the local monorepo (admins, local forge);
/// the request becomes `merged` and a catalog read from the monorepo reloads.
#[utoipa::path(
    post,
    path = "/api/v1/requests/{id}/merge",
    tag = "self-service",
    params(("id" = i64, Path, description = "Request id")),
    request_body(content = MergeOptions, description = "Optional"),
    responses(
        (status = 200, description = "The request, merged", body = RequestDetail),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an admin", body = ErrorBody),
        (status = 404, description = "No such request", body = ErrorBody),
        (status = 409, description = "Not proposed, a hosted forge, or the branch conflicts with the base", body = ErrorBody),
    )
)]
pub(crate) async fn merge(
    State(service): State<Arc<SelfService>>,
    Extension(principal): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
    bytes: Bytes,
) -> Result<Json<RequestDetail>, ApiError> {
    let options: MergeOptions = optional_body(&bytes)?;
    let style = options.style.unwrap_or(MergeStyle::FastForward);
    Ok(Json(service.merge(&principal, id, style).await?))
}
