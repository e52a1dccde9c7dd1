//! The one mapping of failures to HTTP: each [`ErrorKind`] of [`AppError`] answers one status, with
//! the body `{"error": {"code", "message", "detail"}}` of the spec's Errors table.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;

use crate::error::{AppError, ErrorKind};

/// The JSON body of every error response.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: ErrorContent,
}

/// What went wrong: a stable machine code, a sentence for people, and optional structured detail
/// (for validation errors: the offending field paths).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorContent {
    /// Stable, machine-readable code such as `not_found` or `invalid_body`.
    pub code: String,
    /// One sentence naming the problem.
    pub message: String,
    /// Structured detail, or null.
    #[schema(value_type = Object, nullable = true)]
    pub detail: Option<Value>,
}

/// The status a failure of `kind` answers.
pub fn status(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::BadRequest => StatusCode::BAD_REQUEST,
        ErrorKind::Unauthenticated => StatusCode::UNAUTHORIZED,
        ErrorKind::Forbidden => StatusCode::FORBIDDEN,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorKind::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ErrorKind::Invalid => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorKind::UpgradeRequired => StatusCode::UPGRADE_REQUIRED,
        ErrorKind::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorKind::NotImplemented => StatusCode::NOT_IMPLEMENTED,
        ErrorKind::Upstream => StatusCode::BAD_GATEWAY,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Timeout => StatusCode::GATEWAY_TIMEOUT,
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorContent {
                code: self.code.to_owned(),
                message: self.message,
                detail: self.detail.map(|detail| *detail),
            },
        };
        (status(self.kind), Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;

    use super::status;
    use crate::error::{AppError, ErrorKind};

    #[test]
    fn every_kind_answers_its_status_and_server_failures_may_pass() {
        let kinds = [
            (ErrorKind::BadRequest, 400),
            (ErrorKind::Unauthenticated, 401),
            (ErrorKind::Forbidden, 403),
            (ErrorKind::NotFound, 404),
            (ErrorKind::MethodNotAllowed, 405),
            (ErrorKind::Conflict, 409),
            (ErrorKind::TooLarge, 413),
            (ErrorKind::UnsupportedMediaType, 415),
            (ErrorKind::Invalid, 422),
            (ErrorKind::UpgradeRequired, 426),
            (ErrorKind::RateLimited, 429),
            (ErrorKind::Internal, 500),
            (ErrorKind::NotImplemented, 501),
            (ErrorKind::Upstream, 502),
            (ErrorKind::Unavailable, 503),
            (ErrorKind::Timeout, 504),
        ];
        for (kind, code) in kinds {
            assert_eq!(status(kind).as_u16(), code, "{kind:?}");
            let error = AppError::new(kind, "c", "m");
            assert_eq!(error.transient, code >= 500, "{kind:?}");
            assert_eq!(error.into_response().status().as_u16(), code);
        }
        assert_eq!(status(ErrorKind::Invalid), StatusCode::UNPROCESSABLE_ENTITY);
    }
}
