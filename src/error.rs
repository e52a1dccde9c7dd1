//! The one error model of the API: every failure answers `{"error": {"code", "message", "detail"}}`
//! with the status of the spec's Errors table. Internal details are logged, never returned.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;

/// An error on its way to the client.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub detail: Option<Value>,
    /// Whether the same work tried again may succeed (the job runner retries only these): set
    /// from the cause where one is known, else true for server errors only.
    pub transient: bool,
}

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

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            detail: None,
            transient: status.is_server_error(),
        }
    }

    /// The error with whether the same work tried again may succeed.
    #[must_use]
    pub fn may_pass(mut self, transient: bool) -> Self {
        self.transient = transient;
        self
    }

    #[must_use]
    pub fn with_detail(mut self, detail: Value) -> Self {
        self.detail = Some(detail);
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body", message)
    }

    pub fn not_implemented(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_IMPLEMENTED, "not_implemented", message)
    }

    /// An unexpected failure: the cause goes to the log, the client sees a generic sentence.
    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(%cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; the server log has the details",
        )
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorContent {
                code: self.code.to_owned(),
                message: self.message,
                detail: self.detail,
            },
        };
        (self.status, Json(body)).into_response()
    }
}

impl From<geomill_backends::BackendError> for ApiError {
    /// The one mapping of engine failures to HTTP: data a file format cannot hold is a 422
    /// saying why; an engine that is unreachable (PostgreSQL down) or busy is a 503 naming it,
    /// as is work stopped on request; anything else (a statement geomill wrote that failed, an
    /// engine that would not open) is unexpected: 500, the cause in the log. Callers that know
    /// the failure is the request's own (a user's SQL, a run's step) map `Query` themselves.
    fn from(error: geomill_backends::BackendError) -> Self {
        use geomill_backends::BackendError;
        let transient = error.is_transient();
        let mapped = match error {
            BackendError::Unsupported(reason) => Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "unsupported_by_format",
                reason,
            ),
            BackendError::Unavailable {
                engine: "postgis",
                reason,
            } => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "postgis_unavailable",
                format!("the PostGIS engine is unavailable: {reason}"),
            ),
            BackendError::Unavailable { engine, reason } => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "engine_unavailable",
                format!("the {engine} engine is unavailable: {reason}"),
            ),
            BackendError::Interrupted { .. } => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "interrupted",
                "the run was stopped before it finished",
            ),
            other => Self::internal(&other),
        };
        mapped.may_pass(transient)
    }
}

impl From<geomill_planner::PlanError> for ApiError {
    /// Invalid specs are 422 with every problem's path; a plan a dialect cannot express is 422
    /// naming the step; an optimizer failure is a bug, so 500.
    fn from(error: geomill_planner::PlanError) -> Self {
        use geomill_planner::PlanError;
        match &error {
            PlanError::Invalid(problems) => Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_spec",
                error.to_string(),
            )
            .with_detail(serde_json::json!({ "problems": problems })),
            PlanError::Emit { .. } => Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "unsupported",
                error.to_string(),
            ),
            PlanError::Optimizer { .. } => Self::internal(&error),
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use geomill_backends::BackendError;

    use super::ApiError;

    #[test]
    fn engine_failures_may_pass_and_data_a_format_cannot_hold_does_not() {
        let unavailable = ApiError::from(BackendError::Unavailable {
            engine: "postgis",
            reason: "connection refused".into(),
        });
        assert_eq!(unavailable.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(unavailable.transient);
        let failed = ApiError::from(BackendError::Query {
            engine: "duckdb",
            reason: "out of memory".into(),
            sql: String::new(),
        });
        assert!(failed.transient);
        let unsupported = ApiError::from(BackendError::Unsupported(
            "a GeoPackage cannot hold this column".into(),
        ));
        assert_eq!(unsupported.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(!unsupported.transient);
        assert!(!ApiError::unprocessable("no such capability").transient);
        assert!(
            ApiError::unprocessable("the step failed")
                .may_pass(true)
                .transient
        );
    }
}
