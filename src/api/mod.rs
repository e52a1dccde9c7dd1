//! The HTTP API: one `router()` for the whole service, one module per spec group.

pub mod auth;
pub mod capabilities;
pub mod catalog;
pub mod datasets;
pub mod docs;
pub mod error;
pub mod events;
pub mod examples;
pub mod exports;
pub mod extract;
pub mod fallback;
pub mod fields;
pub mod health;
pub mod ingest;
pub mod jobs;
pub mod not_implemented;
pub mod ogc;
pub mod oidc;
pub mod pipelines;
pub mod planning;
pub mod projects;
pub mod rasters;
pub mod rules;
pub mod scenarios;
pub mod schedules;
pub mod server;
pub mod sessions;
pub mod sql;
pub mod styles;
pub mod tracking;
pub mod trigger_runs;
pub mod triggers;

use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;

use crate::state::AppState;

/// The whole API with its state: what the server serves and what tests call in-process.
pub fn app(state: AppState) -> Router {
    router()
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::auth::guard::guard,
        ))
        .with_state(state)
}

/// Every route of the service, the JSON fallbacks and the layers.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(health::routes())
        .merge(auth::routes())
        .merge(oidc::routes())
        .merge(events::routes())
        .merge(schedules::routes())
        .merge(scenarios::routes())
        .merge(capabilities::routes())
        .merge(catalog::routes())
        .merge(datasets::routes())
        .merge(ingest::routes())
        .merge(examples::routes())
        .merge(exports::routes())
        .merge(fields::routes())
        .merge(styles::routes())
        .merge(rules::routes())
        .merge(jobs::routes())
        .merge(ogc::routes())
        .merge(pipelines::routes())
        .merge(rasters::routes())
        .merge(projects::routes())
        .merge(sql::routes())
        .merge(sessions::routes())
        .merge(triggers::routes())
        .merge(trigger_runs::routes())
        .merge(tracking::routes())
        .merge(not_implemented::routes())
        .merge(docs::routes())
        .fallback(fallback::no_route)
        .method_not_allowed_fallback(fallback::method_not_allowed)
        .layer(CatchPanicLayer::custom(fallback::panic_response))
        // Spans name the path without the query string: `/ws/events?token=` carries a key.
        .layer(TraceLayer::new_for_http().make_span_with(
            |request: &axum::http::Request<axum::body::Body>| {
                tracing::debug_span!("request", method = %request.method(), path = %request.uri().path())
            },
        ))
}
