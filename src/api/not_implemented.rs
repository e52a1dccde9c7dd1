//! Routes the spec lists that this build does not serve yet. Each answers 501 with a JSON body
//! naming the route, appears in the OpenAPI document as such, and is listed in the README
//! (a test keeps the README and this table in step). An entry leaves this table when its
//! real handler lands.

use axum::Router;
use axum::http::{Method, Uri};
use axum::routing::{MethodFilter, on};
use serde_json::json;
use utoipa::openapi::path::{HttpMethod, OperationBuilder};
use utoipa::openapi::{OpenApi, ResponseBuilder};

use crate::error::AppError;
use crate::state::AppState;

/// (method, path as the spec writes it, spec group).
pub const NOT_IMPLEMENTED: &[(&str, &str, &str)] = &[
    ("GET", "/billing/usage", "billing"),
    ("POST", "/billing/subscribe", "billing"),
    ("GET", "/marketplace/capabilities", "marketplace"),
    ("GET", "/marketplace/plugins", "marketplace"),
    ("GET", "/marketplace/search", "marketplace"),
    ("GET", "/marketplace/catalog", "marketplace"),
    ("GET", "/marketplace/plugins/{name}", "marketplace"),
    ("POST", "/marketplace/install", "marketplace"),
    ("DELETE", "/marketplace/plugins/{name}", "marketplace"),
    ("GET", "/catalog/basemaps", "catalog"),
    ("GET", "/catalog/providers", "catalog"),
];

fn method_filter(method: &str) -> MethodFilter {
    match method {
        "POST" => MethodFilter::POST,
        "PUT" => MethodFilter::PUT,
        "PATCH" => MethodFilter::PATCH,
        "DELETE" => MethodFilter::DELETE,
        _ => MethodFilter::GET,
    }
}

fn http_method(method: &str) -> HttpMethod {
    match method {
        "POST" => HttpMethod::Post,
        "PUT" => HttpMethod::Put,
        "PATCH" => HttpMethod::Patch,
        "DELETE" => HttpMethod::Delete,
        _ => HttpMethod::Get,
    }
}

/// The router path for a spec path: a segment such as `{y}.mvt` becomes a plain parameter
/// (axum parameters take a whole segment).
fn router_path(spec_path: &str) -> String {
    spec_path.replace("{y}.mvt", "{y_mvt}")
}

async fn answer(method: Method, uri: Uri) -> AppError {
    let path = uri.path();
    AppError::not_implemented(format!(
        "{method} {path} is not implemented in geomill {} yet",
        crate::VERSION
    ))
    .with_detail(json!({ "method": method.as_str(), "path": path }))
}

/// A 501 handler for every entry of [`NOT_IMPLEMENTED`].
pub fn routes() -> Router<AppState> {
    NOT_IMPLEMENTED
        .iter()
        .fold(Router::new(), |router, (method, path, _group)| {
            router.route(&router_path(path), on(method_filter(method), answer))
        })
}

/// The path parameters of a spec path: every `{name}` in it, a required string.
fn path_parameters(path: &str) -> Vec<utoipa::openapi::path::Parameter> {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    use utoipa::openapi::{Object, Required, Type};
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .map(|name| {
            ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Path)
                .required(Required::True)
                .schema(Some(Object::with_type(Type::String)))
                .build()
        })
        .collect()
}

/// Adds every entry of [`NOT_IMPLEMENTED`] to the OpenAPI document with its 501 answer.
pub fn document(doc: &mut OpenApi) {
    for (method, path, group) in NOT_IMPLEMENTED {
        let parameters = path_parameters(path);
        let operation = OperationBuilder::new()
            .parameters(Some(parameters))
            .tag(*group)
            .summary(Some("Not implemented yet"))
            .description(Some(
                "Listed by the service specification; this build answers 501.",
            ))
            .response(
                "501",
                ResponseBuilder::new()
                    .description("Not implemented yet")
                    .build(),
            )
            .build();
        doc.paths
            .add_path_operation(*path, vec![http_method(method)], operation);
    }
}
