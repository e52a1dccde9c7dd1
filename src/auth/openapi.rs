//! The OpenAPI document's account of authentication: the security schemes, and on every
//! operation the credentials it accepts, the role and tier it needs (`x-geomill-role`,
//! `x-geomill-tier`, from [`super::policy`]) and the 401/403/429 answers that follow.

use axum::http::Method;
use serde_json::json;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, ResponseBuilder};

use super::policy::{Access, requirement};

const SCHEMES: [&str; 3] = ["api_key", "bearer", "session_cookie"];

fn error_response(description: &str) -> RefOr<utoipa::openapi::Response> {
    RefOr::T(
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                    .build(),
            )
            .build(),
    )
}

fn annotate(operation: &mut Operation, method: &Method, path: &str) {
    let needed = requirement(method, path);
    let mut extensions = operation.extensions.take().unwrap_or_default();
    let responses = &mut operation.responses.responses;
    match needed.access {
        Access::Open => {
            extensions.insert("x-geomill-role".into(), json!("none"));
            operation.security = Some(vec![SecurityRequirement::default()]);
        }
        Access::Role(role) => {
            extensions.insert("x-geomill-role".into(), json!(role.as_str()));
            operation.security = Some(
                SCHEMES
                    .iter()
                    .map(|scheme| SecurityRequirement::new(*scheme, Vec::<String>::new()))
                    .collect(),
            );
            responses
                .entry("401".into())
                .or_insert_with(|| error_response("Not authenticated: no API key or session"));
        }
    }
    if needed.access != Access::Open
        || needed.admin_key
        || needed.tier > super::config::Tier::Community
    {
        responses.entry("403".into()).or_insert_with(|| {
            error_response("Not authorized: invalid key, role, X-Admin-Key or tier")
        });
    }
    if needed.admin_key {
        extensions.insert("x-geomill-admin-key".into(), json!(true));
        responses
            .entry("401".into())
            .or_insert_with(|| error_response("X-Admin-Key missing (when the server has one)"));
    }
    if needed.rate_limited {
        responses
            .entry("429".into())
            .or_insert_with(|| error_response("Rate limit exceeded (Retry-After tells when)"));
    }
    extensions.insert("x-geomill-tier".into(), json!(needed.tier.as_str()));
    operation.extensions = Some(extensions);
}

/// Adds the security schemes and annotates every operation.
pub fn document(doc: &mut OpenApi) {
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "api_key",
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-API-Key"))),
    );
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
    );
    components.add_security_scheme(
        "session_cookie",
        SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(super::token::COOKIE))),
    );
    for (path, item) in &mut doc.paths.paths {
        let operations = [
            (Method::GET, &mut item.get),
            (Method::POST, &mut item.post),
            (Method::PUT, &mut item.put),
            (Method::PATCH, &mut item.patch),
            (Method::DELETE, &mut item.delete),
            (Method::HEAD, &mut item.head),
        ];
        for (method, operation) in operations {
            if let Some(operation) = operation {
                annotate(operation, &method, &router_template(path));
            }
        }
    }
}

/// The router's template for a documented path (`{y}.mvt` is one parameter in the router).
fn router_template(path: &str) -> String {
    path.replace("{y}.mvt", "{y_mvt}")
}
