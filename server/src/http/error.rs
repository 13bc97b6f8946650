//! The one error type of the JSON API and how it becomes a response.

use axum::{
    Json,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use mirante_domain::diagnostic::Diagnostics;
use serde::Serialize;
use utoipa::ToSchema;

use crate::{adapters::db::DbError, app::catalog::ReloadError};

/// Everything an API handler can fail with. Each variant maps to one status in
/// [`ApiError::status`]; internal causes are logged here, once, and clients get generic text.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is malformed: an unknown query parameter, a value outside an enumeration,
    /// an id that does not exist where one is required.
    #[error("{0}")]
    BadRequest(String),
    /// The thing asked for does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The body is larger than the server reads.
    #[error("{0}")]
    TooLarge(String),
    /// The caller may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The caller did not prove who they are (a forge webhook with a bad signature).
    #[error("{0}")]
    Unauthorized(String),
    /// It cannot happen in the current state of things (a request not awaiting approval, a
    /// directory that already exists).
    #[error("{0}")]
    Conflict(String),
    /// An open request already asks for the same thing; 409 naming it in `request`.
    #[error("{message}")]
    Duplicate {
        /// What to tell the caller.
        message: String,
        /// The open request.
        request: i64,
    },
    /// The request is well formed but cannot be taken as it is (an idempotency key reused
    /// for another request); 422.
    #[error("{0}")]
    Unprocessable(String),
    /// It cannot happen now because of these values (an approval beyond a cluster's free
    /// GPUs); 409 with the fields in `details`.
    #[error("{0}")]
    ConflictFields(String, Vec<mirante_domain::selfservice::FieldError>),
    /// Submitted values are refused; every field is listed.
    #[error("{} invalid value(s); see details", .0.len())]
    InvalidFields(Vec<mirante_domain::selfservice::FieldError>),
    /// A catalog reload found problems; the last good catalog stays in force.
    #[error("the catalog has {} problem(s); the last good catalog stays in force", .0.len())]
    InvalidCatalog(Diagnostics),
    /// A dependency is down (readiness).
    #[error("{0}")]
    Unavailable(String),
    /// Anything else: logged, and answered with a generic message.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    /// The status each kind of error is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::ConflictFields(..) => StatusCode::CONFLICT,
            ApiError::Duplicate { .. } => StatusCode::CONFLICT,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::InvalidFields(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::InvalidCatalog(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// A path parameter that cannot be read (`/api/v1/requests/99999999999999999999`) is the
/// client's mistake, answered in JSON like every other.
impl From<axum::extract::rejection::PathRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::PathRejection) -> Self {
        ApiError::BadRequest(format!("invalid path: {}", rejection.body_text()))
    }
}

/// `axum::extract::Path` with its refusals answered as [`ApiError`]s (JSON, 400).
#[derive(Debug, axum::extract::FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub(crate) struct ApiPath<T>(pub T);

impl From<DbError> for ApiError {
    fn from(e: DbError) -> Self {
        ApiError::Internal(e.into())
    }
}

impl From<ReloadError> for ApiError {
    fn from(e: ReloadError) -> Self {
        match e {
            ReloadError::Invalid(diagnostics) => ApiError::InvalidCatalog(diagnostics),
            other => ApiError::Internal(other.into()),
        }
    }
}

/// The body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    /// What went wrong, in one sentence.
    #[schema(
        example = "unknown query parameter `colour`; expected one of: site, layer, state, qualifier, q, limit, offset"
    )]
    pub error: String,
    /// Itemised problems, when there are several (catalog diagnostics); otherwise empty.
    pub details: Vec<ErrorDetail>,
    /// The open request this one would duplicate (409 on a creation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<i64>,
}

/// One itemised problem; catalog diagnostics carry their position, invalid values their
/// field and a code.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorDetail {
    /// The form field (template parameter) at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// A stable code for the problem (`required`, `maximum`, `pattern`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// File relative to the catalog root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based line; 0 when the problem has no position in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// 1-based column, in characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// What is wrong.
    pub message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let request = match &self {
            ApiError::Duplicate { request, .. } => Some(*request),
            _ => None,
        };
        let (error, details) = match self {
            // A database that cannot be reached is an outage, not a bug: 503, try again.
            ApiError::Internal(cause) if crate::adapters::db::DbError::unavailable_in(&cause) => {
                tracing::warn!(
                    error = format!("{cause:#}"),
                    "the database cannot be reached"
                );
                return unavailable(crate::adapters::db::DATABASE_UNAVAILABLE);
            }
            ApiError::Internal(cause) => {
                // The one place internal failures are logged; the client learns nothing of
                // the cause (it may name tables, hosts or paths).
                tracing::error!(error = format!("{cause:#}"), "request failed");
                ("internal server error".to_owned(), Vec::new())
            }
            ApiError::InvalidCatalog(ref diagnostics) => {
                let details = diagnostics
                    .iter()
                    .map(|d| ErrorDetail {
                        field: None,
                        code: None,
                        file: Some(d.file.clone()),
                        line: Some(d.line),
                        column: Some(d.column),
                        message: d.message.clone(),
                    })
                    .collect();
                (self.to_string(), details)
            }
            ApiError::InvalidFields(ref fields) | ApiError::ConflictFields(_, ref fields) => {
                let details = fields
                    .iter()
                    .map(|f| ErrorDetail {
                        field: Some(f.field.clone()),
                        code: serde_json::to_value(f.code)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned)),
                        file: None,
                        line: None,
                        column: None,
                        message: f.message.clone(),
                    })
                    .collect();
                (self.to_string(), details)
            }
            ApiError::Unavailable(message) => return unavailable(&message),
            other => (other.to_string(), Vec::new()),
        };
        (
            status,
            Json(ErrorBody {
                error,
                details,
                request,
            }),
        )
            .into_response()
    }
}

/// How long a client is asked to wait before trying a 503 again, in seconds.
pub(crate) const RETRY_AFTER_SECS: &str = "5";

/// A 503 with `Retry-After`: the portal or something it needs is down for a moment.
pub(crate) fn unavailable(message: &str) -> Response {
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        [(axum::http::header::RETRY_AFTER, RETRY_AFTER_SECS)],
        Json(ErrorBody {
            error: message.to_owned(),
            details: Vec::new(),
            request: None,
        }),
    )
        .into_response();
    response.extensions_mut().insert(DatabaseUnreachable);
    response
}

/// Marks a response that says the database cannot be reached, so that the layer in
/// [`note_outage`] opens the database's breaker: the calls of the next moments fail at once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DatabaseUnreachable;

/// Opens `breaker` when the response says the database cannot be reached.
pub(crate) async fn note_outage(
    axum::extract::State(breaker): axum::extract::State<
        std::sync::Arc<crate::adapters::db::Breaker>,
    >,
    response: Response,
) -> Response {
    if response.extensions().get::<DatabaseUnreachable>().is_some() {
        breaker.open();
    }
    response
}

/// Quotes a value taken from the request for an error message, cut short so a long value is
/// not echoed back whole.
pub(crate) fn quoted(value: &str) -> String {
    const MAX: usize = 64;
    let mut out: String = value.chars().take(MAX).collect();
    if value.chars().count() > MAX {
        out.push('…');
    }
    format!("`{out}`")
}
