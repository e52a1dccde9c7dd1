//! The one error of geomill's services: what kind of failure it is ([`ErrorKind`]), a stable code, a
//! sentence for people, optional structured detail, whether the same work tried again may
//! succeed, and the cause it came from. It names no HTTP status: the API layer maps each kind
//! to one, in one place (`api/error.rs`). Internal details are logged, never returned.

use std::sync::Arc;

use serde_json::Value;

/// What kind of failure: the request's (bad, unknown, refused, too large, conflicting), a
/// service's the request depends on (upstream, unavailable, too slow), or geomill's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request is malformed or names something it may not.
    BadRequest,
    /// The caller is not signed in.
    Unauthenticated,
    /// The caller may not do this.
    Forbidden,
    /// What the request names does not exist.
    NotFound,
    /// The route exists, not with this method.
    MethodNotAllowed,
    /// The request clashes with the current state (a name taken, a job already ended).
    Conflict,
    /// The request's body or file is larger than allowed.
    TooLarge,
    /// The body is not sent in a media type the route takes.
    UnsupportedMediaType,
    /// The request is well formed but its content is invalid or cannot be processed.
    Invalid,
    /// The route needs a protocol upgrade (a WebSocket).
    UpgradeRequired,
    /// Too many requests in the window.
    RateLimited,
    /// A failure of geomill itself.
    Internal,
    /// The spec lists it; geomill does not do it yet.
    NotImplemented,
    /// A remote service answered badly or not at all.
    Upstream,
    /// An engine geomill needs is unreachable or busy, or the work was stopped.
    Unavailable,
    /// The work took longer than allowed and was stopped.
    Timeout,
}

impl ErrorKind {
    /// Whether the failure is the request's own (it would fail again as sent), not geomill's
    /// or a service's it needs.
    pub fn is_the_requests(self) -> bool {
        matches!(
            self,
            Self::BadRequest
                | Self::Unauthenticated
                | Self::Forbidden
                | Self::NotFound
                | Self::MethodNotAllowed
                | Self::Conflict
                | Self::TooLarge
                | Self::UnsupportedMediaType
                | Self::Invalid
                | Self::UpgradeRequired
                | Self::RateLimited
        )
    }
}

/// A failure on its way to whoever asked (an HTTP client, the job runner, the command line).
#[derive(Debug, Clone)]
pub struct AppError {
    pub kind: ErrorKind,
    pub code: &'static str,
    pub message: String,
    /// Structured detail (boxed: most failures have none, and every `Result` carries the size).
    pub detail: Option<Box<Value>>,
    /// Whether the same work tried again may succeed (the job runner retries only these): set
    /// from the cause where one is known, else true for the failures of geomill and of the
    /// services it needs.
    pub transient: bool,
    /// The failure this one comes from, when another layer's.
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl AppError {
    pub fn new(kind: ErrorKind, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind,
            code,
            message: message.into(),
            detail: None,
            transient: matches!(
                kind,
                ErrorKind::Internal
                    | ErrorKind::NotImplemented
                    | ErrorKind::Upstream
                    | ErrorKind::Unavailable
                    | ErrorKind::Timeout
            ),
            source: None,
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
        self.detail = Some(Box::new(detail));
        self
    }

    /// The error caused by `cause`.
    #[must_use]
    pub fn caused_by(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(cause));
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadRequest, "bad_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, "not_found", message)
    }

    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, "invalid_body", message)
    }

    pub fn not_implemented(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotImplemented, "not_implemented", message)
    }

    /// An unexpected failure: the cause goes to the log, the caller sees a generic sentence.
    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(%cause, "internal error");
        Self::new(
            ErrorKind::Internal,
            "internal",
            "internal error; the server log has the details",
        )
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} {}: {}", self.kind, self.code, self.message)
    }
}

impl std::error::Error for AppError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|cause| cause as &(dyn std::error::Error + 'static))
    }
}

impl From<geomill_backends::BackendError> for AppError {
    /// Engine failures: data a file format cannot hold is invalid, saying why; an engine that
    /// is unreachable (PostgreSQL down) or busy is unavailable, naming it, as is work stopped on
    /// request; anything else (a statement geomill wrote that failed, an engine that would not
    /// open) is unexpected, the cause in the log. Callers that know the failure is the
    /// request's own (a user's SQL, a run's step) map `Query` themselves.
    fn from(error: geomill_backends::BackendError) -> Self {
        use geomill_backends::BackendError;
        let transient = error.is_transient();
        let mapped = match &error {
            BackendError::Unsupported(reason) => {
                Self::new(ErrorKind::Invalid, "unsupported_by_format", reason.clone())
            }
            BackendError::Unavailable {
                engine: "postgis",
                reason,
            } => Self::new(
                ErrorKind::Unavailable,
                "postgis_unavailable",
                format!("the PostGIS engine is unavailable: {reason}"),
            ),
            BackendError::Unavailable { engine, reason } => Self::new(
                ErrorKind::Unavailable,
                "engine_unavailable",
                format!("the {engine} engine is unavailable: {reason}"),
            ),
            BackendError::Interrupted { .. } => Self::new(
                ErrorKind::Unavailable,
                "interrupted",
                "the run was stopped before it finished",
            ),
            other => Self::internal(other),
        };
        mapped.may_pass(transient).caused_by(error)
    }
}

impl From<geomill_planner::PlanError> for AppError {
    /// Invalid specs are invalid with every problem's path; a plan a dialect cannot express is
    /// invalid naming the step; an optimizer failure is a bug, so internal.
    fn from(error: geomill_planner::PlanError) -> Self {
        use geomill_planner::PlanError;
        let mapped = match &error {
            PlanError::Invalid(problems) => {
                Self::new(ErrorKind::Invalid, "invalid_spec", error.to_string())
                    .with_detail(serde_json::json!({ "problems": problems }))
            }
            PlanError::Emit { .. } => {
                Self::new(ErrorKind::Invalid, "unsupported", error.to_string())
            }
            PlanError::Optimizer { .. } => Self::internal(&error),
        };
        mapped.caused_by(error)
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use geomill_backends::BackendError;

    use super::{AppError, ErrorKind};

    #[test]
    fn engine_failures_may_pass_keep_their_cause_and_data_a_format_cannot_hold_does_not() {
        let unavailable = AppError::from(BackendError::Unavailable {
            engine: "postgis",
            reason: "connection refused".into(),
        });
        assert_eq!(unavailable.kind, ErrorKind::Unavailable);
        assert!(unavailable.transient);
        let cause = unavailable.source().expect("the backend error is kept");
        assert!(cause.to_string().contains("connection refused"), "{cause}");
        let failed = AppError::from(BackendError::Query {
            engine: "duckdb",
            reason: "out of memory".into(),
            sql: String::new(),
        });
        assert!(failed.transient);
        let unsupported = AppError::from(BackendError::Unsupported(
            "a GeoPackage cannot hold this column".into(),
        ));
        assert_eq!(unsupported.kind, ErrorKind::Invalid);
        assert!(!unsupported.transient);
        assert!(!AppError::unprocessable("no such capability").transient);
        assert!(
            AppError::unprocessable("the step failed")
                .may_pass(true)
                .transient
        );
    }
}
