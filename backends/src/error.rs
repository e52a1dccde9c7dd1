//! Errors raised by the execution backends, with the context needed to explain them.

/// An error from a backend. The app maps it to an HTTP status once, in its error module.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The engine could not be opened or prepared (database file, extension).
    #[error("cannot open the {engine} engine: {reason}")]
    Open {
        engine: &'static str,
        reason: String,
    },
    /// A statement failed; `sql` is kept for logs, never sent to clients.
    #[error("{engine} query failed: {reason}")]
    Query {
        engine: &'static str,
        reason: String,
        sql: String,
    },
    /// The work was stopped from outside (a cancel or a time-out).
    #[error("the {engine} engine stopped the work on request")]
    Interrupted { engine: &'static str },
    /// The data cannot be written as asked (a file format's limit); the message says why, in
    /// words for the user.
    #[error("{0}")]
    Unsupported(String),
    /// A native kernel failed (bad geometry in a row, a column of the wrong type, GEOS); the
    /// kernel's error is kept as the cause.
    #[cfg(feature = "native")]
    #[error("native query failed: {0}")]
    Native(#[source] geomill_native::NativeError),
    /// The engine is busy or poisoned by an earlier panic.
    #[error("the {engine} engine is unavailable: {reason}")]
    Unavailable {
        engine: &'static str,
        reason: String,
    },
}

impl BackendError {
    /// Whether trying the same work again may succeed: the engine failed, was busy, could not
    /// be reached or was stopped, not the request. Data a file format cannot hold fails again.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Open { .. }
            | Self::Query { .. }
            | Self::Interrupted { .. }
            | Self::Unavailable { .. } => true,
            #[cfg(feature = "native")]
            Self::Native(_) => true,
            Self::Unsupported(_) => false,
        }
    }
}

/// A native kernel's failure as the backends report it: a stop is an interruption, an
/// unreachable cluster an unavailable engine, anything else a kernel failure with its cause.
#[cfg(feature = "native")]
impl From<geomill_native::NativeError> for BackendError {
    fn from(e: geomill_native::NativeError) -> Self {
        match e {
            geomill_native::NativeError::Stopped => {
                return BackendError::Interrupted { engine: "native" };
            }
            geomill_native::NativeError::ClusterUnreachable(reason) => {
                return BackendError::Unavailable {
                    engine: "distributed",
                    reason,
                };
            }
            _ => {}
        }
        BackendError::Native(e)
    }
}
