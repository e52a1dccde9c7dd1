//! `/openapi.json` (OpenAPI 3, generated from the handlers) and `/docs` (Swagger UI, served from
//! assets compiled into the binary, so the page loads nothing from outside the machine).

use axum::Router;
use utoipa::OpenApi;
use utoipa_swagger_ui::{Config, SwaggerUi};

use crate::state::AppState;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "geomill",
        description = "Declarative geospatial processing engine: datasets, rules, pipelines, jobs, OGC API Features."
    ),
    paths(
        super::health::health,
        super::ingest::upload_dataset,
        super::ingest::import_url,
        super::ingest::register_ogc,
        super::datasets::list,
        super::datasets::read,
        super::datasets::rename,
        super::datasets::remove,
        super::datasets::features,
        super::examples::list,
        super::examples::read,
        super::examples::preview,
        super::examples::tile,
        super::examples::dryrun,
        super::exports::export_any,
        super::exports::export_gpkg,
        super::fields::distinct,
        super::fields::stats,
        super::fields::class_breaks,
        super::styles::read,
        super::styles::update,
        super::styles::import,
        super::capabilities::list,
        super::capabilities::one,
        super::capabilities::preview_get,
        super::capabilities::preview_post,
        super::catalog::list,
        super::catalog::one,
        super::rules::validate,
        super::rules::convert,
        super::rules::list,
        super::rules::create,
        super::rules::read,
        super::rules::replace,
        super::rules::remove,
        super::rules::validate_one,
        super::rules::to_node,
        super::rules::to_node_by_id,
        super::rules::from_node,
        super::rules::eval_stream,
        super::ogc::collections::landing,
        super::ogc::collections::conformance,
        super::ogc::collections::collections,
        super::ogc::collections::collection,
        super::ogc::items::items,
        super::ogc::collections::queryables,
        super::ogc::items::item,
        super::ogc::tiles::tilejson,
        super::ogc::tiles::tile,
        super::ogc::map::map_page,
        super::rasters::tilejson,
        super::rasters::tile,
        super::rasters::map_page,
        super::jobs::submit,
        super::jobs::list,
        super::jobs::read,
        super::jobs::cancel,
        super::jobs::stream,
        super::jobs::events,
        super::jobs::download,
        super::jobs::features,
        super::jobs::publish,
        super::projects::create,
        super::projects::list,
        super::projects::read,
        super::projects::layers,
        super::projects::add_layer,
        super::sessions::create,
        super::sessions::list,
        super::sessions::read,
        super::sessions::remove,
        super::sessions::add_layer,
        super::sessions::layers,
        super::sessions::query,
        super::pipelines::validate,
        super::pipelines::preview,
        super::pipelines::execute,
        super::pipelines::execute_steps,
        super::pipelines::examples,
        super::sql::execute,
        super::sql::export,
        super::auth::login,
        super::auth::logout,
        super::auth::session,
        super::auth::providers,
        super::auth::me,
        super::auth::users,
        super::auth::license,
        super::oidc::login,
        super::oidc::callback,
        super::events::events,
        super::schedules::create,
        super::schedules::list,
        super::schedules::read,
        super::schedules::edit,
        super::schedules::remove,
        super::schedules::run_now,
        super::scenarios::create,
        super::scenarios::list,
        super::scenarios::run,
        super::scenarios::run_node,
        super::triggers::create,
        super::triggers::list,
        super::triggers::read,
        super::triggers::replace,
        super::triggers::remove,
        super::triggers::toggle,
        super::triggers::validate,
        super::triggers::operations,
        super::triggers::add_operation,
        super::triggers::replace_operation,
        super::triggers::remove_operation,
        super::trigger_runs::test,
        super::trigger_runs::evaluate,
        super::trigger_runs::eval_stream,
        super::tracking::enable,
        super::tracking::disable,
        super::tracking::status,
    ),
    components(schemas(crate::api::error::ErrorBody, crate::api::error::ErrorContent, super::capabilities::PreviewBody)),
    tags(
        (name = "health", description = "Service health"),
        (name = "datasets", description = "Datasets and their features"),
        (name = "capabilities", description = "The capability registry and SQL previews"),
        (name = "catalog", description = "Reference data: the EPSG projections of PROJ's database"),
        (name = "rules", description = "Rules"),
        (name = "pipelines", description = "Pipelines v2"),
        (name = "sql", description = "Read-only SQL over stored layers"),
        (name = "scenarios", description = "Groups of jobs run together"),
        (name = "schedules", description = "Cron schedules that submit jobs (Pro)"),
        (name = "events", description = "Live events over WebSocket"),
        (name = "triggers", description = "Triggers on data change (Pro)"),
        (name = "auth", description = "Logging in, sessions and the current user"),
        (name = "admin", description = "Users and licence (admin role, X-Admin-Key)")
    )
)]
struct ApiDoc;

/// Routes served under a second path (the spec's short forms): (alias, documented path).
const ALIASES: [(&str, &str); 3] = [
    ("/pipelines/validate", "/api/pipelines/validate"),
    ("/pipelines/execute", "/api/pipelines/execute"),
    ("/pipelines/examples", "/api/pipelines/examples"),
];

/// Documents each alias as its route is, with operation ids of its own.
fn document_aliases(doc: &mut utoipa::openapi::OpenApi) {
    for (alias, documented) in ALIASES {
        let Some(mut item) = doc.paths.paths.get(documented).cloned() else {
            continue;
        };
        for operation in [&mut item.get, &mut item.post].into_iter().flatten() {
            operation.operation_id = operation
                .operation_id
                .take()
                .map(|id| format!("{id}_short"));
        }
        doc.paths.paths.insert(alias.to_owned(), item);
    }
}

/// The complete OpenAPI document: implemented routes plus the 501 ones.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    doc.info.version = crate::VERSION.to_owned();
    document_aliases(&mut doc);
    super::not_implemented::document(&mut doc);
    crate::auth::openapi::document(&mut doc);
    doc
}

pub fn routes() -> Router<AppState> {
    // validator_url "none": Swagger UI would otherwise call an online validator.
    let config = Config::from("/openapi.json").validator_url("none");
    Router::new().merge(
        SwaggerUi::new("/docs")
            .url("/openapi.json", openapi())
            .config(config),
    )
}
