//! Why a self-service operation was refused or failed, and how the layers below's errors map
//! to it.

use mirante_domain::selfservice::FieldError;

use crate::adapters::db::DbError;
use crate::adapters::db::requests::CreateError;
use crate::adapters::db::requests::TransitionError;
use crate::adapters::forge::ForgeError;

/// Why an operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No such template or request — or one the caller may not see (never told apart).
    #[error("{0}")]
    NotFound(String),
    /// The caller may see it but not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The values are refused; every problem is listed.
    #[error("{} invalid value(s)", .0.len())]
    Invalid(Vec<FieldError>),
    /// The request is malformed (a missing comment).
    #[error("{0}")]
    BadRequest(String),
    /// It cannot happen now: the request is not in a state that allows it, the target
    /// directory exists, the branch conflicts.
    #[error("{0}")]
    Conflict(String),
    /// An open request already asks for the same thing: `request` is its id.
    #[error("{message}")]
    Duplicate {
        /// The open request.
        request: i64,
        /// What to tell the caller.
        message: String,
    },
    /// An idempotency key was used before for a different request.
    #[error("{0}")]
    KeyReused(String),
    /// An approval would hand out GPUs the cluster does not have free (the value error of the
    /// GPUs parameter, code `exceeds_free_capacity`, with the numbers).
    #[error("{}; approve with an overcommit reason to hand them out anyway", .0.message)]
    OverCapacity(Box<FieldError>),
    /// The forge is down; try again later.
    #[error("{0}")]
    Unavailable(String),
    /// Anything else (a broken template, the database).
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl From<DbError> for ServiceError {
    fn from(e: DbError) -> Self {
        if e.is_unavailable() {
            tracing::warn!(error = %e, "the database cannot be reached");
            return ServiceError::Unavailable(crate::adapters::db::DATABASE_UNAVAILABLE.to_owned());
        }
        ServiceError::Internal(e.into())
    }
}

impl From<CreateError> for ServiceError {
    fn from(e: CreateError) -> Self {
        match e {
            CreateError::TargetTaken(open) => ServiceError::Duplicate {
                request: open.id,
                message: format!(
                    "request #{} already asks for `{}` and is {}; follow it at /requests/{} instead of asking again",
                    open.id, open.target, open.state, open.id
                ),
            },
            CreateError::KeyReused(id) => ServiceError::KeyReused(format!(
                "this Idempotency-Key was used for request #{id} with other values; use a new key for a new request"
            )),
            CreateError::Db(e) => e.into(),
        }
    }
}

impl From<TransitionError> for ServiceError {
    fn from(e: TransitionError) -> Self {
        match e {
            TransitionError::NotFound(id) => ServiceError::NotFound(format!("no request {id}")),
            TransitionError::Illegal(i) => ServiceError::Conflict(format!(
                "the request is {}; that is not possible now",
                i.from
            )),
            TransitionError::OverCapacity(refused) => {
                ServiceError::OverCapacity(Box::new(refused.field_error("gpus")))
            }
            TransitionError::Db(e) => e.into(),
        }
    }
}

pub(super) fn forge_error(e: ForgeError) -> ServiceError {
    match e {
        ForgeError::Unavailable(m) => {
            ServiceError::Unavailable(format!("the forge is unavailable: {m}"))
        }
        ForgeError::Conflict(m) => ServiceError::Conflict(m),
        ForgeError::Unsupported(m) => ServiceError::Conflict(format!("not supported: {m}")),
        ForgeError::NotFound(m) => ServiceError::Conflict(format!("not found on the forge: {m}")),
        ForgeError::TooLarge(m) => ServiceError::Conflict(m),
        other => ServiceError::Internal(anyhow::Error::new(other)),
    }
}
