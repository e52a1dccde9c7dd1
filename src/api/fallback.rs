//! JSON answers for requests no handler takes: unknown paths, wrong methods, and panics.

use std::any::Any;

use axum::http::{Method, Uri};
use axum::response::{IntoResponse, Response};

use crate::error::{AppError, ErrorKind};

/// 404 for a path the API does not have.
pub async fn no_route(method: Method, uri: Uri) -> AppError {
    AppError::not_found(format!("no route for {method} {}", uri.path()))
}

/// 405 for a known path called with a method it does not accept.
pub async fn method_not_allowed(method: Method, uri: Uri) -> AppError {
    AppError::new(
        ErrorKind::MethodNotAllowed,
        "method_not_allowed",
        format!("{} does not accept {method}", uri.path()),
    )
}

/// 500 for a handler that panicked; the panic text goes to the log only.
#[allow(clippy::needless_pass_by_value)] // the signature is fixed by CatchPanicLayer
pub fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let text = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic");
    AppError::internal(&format!("handler panicked: {text}")).into_response()
}
