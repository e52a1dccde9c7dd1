//! Request extractors whose rejections speak the API's error model instead of plain text.

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::{AppError, ErrorKind};

/// `Json<T>` with JSON error bodies: a body that is not JSON, or JSON of the wrong shape, is a
/// 422 `invalid_body` naming the problem; a missing JSON content type is a 415.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(json_rejection(&rejection)),
        }
    }
}

fn json_rejection(rejection: &JsonRejection) -> AppError {
    match rejection {
        JsonRejection::MissingJsonContentType(_) => AppError::new(
            ErrorKind::UnsupportedMediaType,
            "unsupported_media_type",
            "expected a JSON body with Content-Type: application/json",
        ),
        JsonRejection::JsonSyntaxError(e) => {
            AppError::unprocessable(format!("the body is not valid JSON: {}", source_text(e)))
        }
        JsonRejection::JsonDataError(e) => AppError::unprocessable(format!(
            "the body does not match the expected shape: {}",
            source_text(e)
        )),
        other => AppError::bad_request(format!("cannot read the body: {}", other.body_text())),
    }
}

/// The innermost message of a rejection (serde's text, with line and column), without axum's
/// generic prefix.
fn source_text(error: &dyn std::error::Error) -> String {
    let mut current: &dyn std::error::Error = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// `Query<T>` with JSON error bodies: a malformed query string is a 400 naming the parameter.
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Self(value)),
            Err(rejection) => Err(query_rejection(&rejection)),
        }
    }
}

fn query_rejection(rejection: &QueryRejection) -> AppError {
    AppError::bad_request(format!("invalid query string: {}", source_text(rejection)))
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::routing::post;
    use serde::Deserialize;
    use tower::ServiceExt;

    use super::*;

    #[derive(Deserialize)]
    struct Body1 {
        distance: f64,
    }

    async fn echo(ApiJson(body): ApiJson<Body1>) -> String {
        body.distance.to_string()
    }

    async fn send(content_type: Option<&str>, body: &str) -> (StatusCode, serde_json::Value) {
        let mut request = Request::post("/echo");
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let request = request.body(Body::from(body.to_owned())).unwrap();
        let response = Router::new()
            .route("/echo", post(echo))
            .oneshot(request)
            .await
            .unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
        (status, json)
    }

    #[tokio::test]
    async fn malformed_json_is_422_with_the_error_model() {
        let (status, json) = send(Some("application/json"), "{\"distance\": ").await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(json["error"]["code"], "invalid_body");
        assert!(
            json["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not valid JSON")
        );
    }

    #[tokio::test]
    async fn wrong_shape_is_422_naming_the_field() {
        let (status, json) = send(Some("application/json"), r#"{"distance": "far"}"#).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(
            json["error"]["message"]
                .as_str()
                .unwrap()
                .contains("invalid type")
        );
    }

    #[tokio::test]
    async fn missing_content_type_is_415() {
        let (status, json) = send(None, r#"{"distance": 1}"#).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(json["error"]["code"], "unsupported_media_type");
    }

    #[tokio::test]
    async fn a_good_body_passes() {
        let mut request = Request::post("/echo");
        request = request.header("content-type", "application/json");
        let response = Router::new()
            .route("/echo", post(echo))
            .oneshot(request.body(Body::from(r#"{"distance": 2.5}"#)).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
}
