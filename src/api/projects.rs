//! Projects: named workspaces in PostGIS, each a PostgreSQL schema of its own, with the layers
//! copied into it from stored datasets. They need `GEOMILL_POSTGIS_DSN`.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use geomill_backends::store::postgres::{
    PostgresStore, ProjectError, ProjectLayer, ProjectRecord, valid_project_name,
};
use serde::{Deserialize, Serialize};

use super::extract::ApiJson;
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/projects", get(list).post(create))
        .route("/projects/{id}", get(read))
        .route("/projects/{id}/layers", get(layers).post(add_layer))
}

/// A project as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Project {
    pub id: String,
    pub name: String,
    /// The PostgreSQL schema holding its layers (`project_<name>`).
    pub schema: String,
    pub description: Option<String>,
    pub created_at: String,
}

impl From<ProjectRecord> for Project {
    fn from(record: ProjectRecord) -> Self {
        Self {
            id: record.id,
            name: record.name,
            schema: record.schema,
            description: record.description,
            created_at: record.created_at,
        }
    }
}

/// A layer of a project: a table of its schema with a geometry column.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ProjectLayerView {
    pub name: String,
    /// PostGIS geometry type (`GEOMETRY`, `MULTIPOLYGON`, ...).
    pub geometry_type: String,
    pub srid: i32,
    pub feature_count: i64,
}

impl From<ProjectLayer> for ProjectLayerView {
    fn from(layer: ProjectLayer) -> Self {
        Self {
            name: layer.name,
            geometry_type: layer.geometry_type,
            srid: layer.srid,
            feature_count: layer.feature_count,
        }
    }
}

/// The PostGIS engine, or a 503 saying projects need one.
fn postgis(state: &AppState) -> Result<PostgresStore, AppError> {
    state.postgres_store().cloned().ok_or_else(|| {
        AppError::new(
            ErrorKind::Unavailable,
            "postgis_not_configured",
            "projects live in PostGIS: start the server with GEOMILL_POSTGIS_DSN",
        )
    })
}

async fn find(engine: &PostgresStore, id: &str) -> Result<ProjectRecord, AppError> {
    engine
        .project(id)
        .await
        .map_err(AppError::from)?
        .ok_or_else(|| AppError::not_found(format!("no project {id}")))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectBody {
    /// 1 to 48 lower-case letters, digits and `_`, starting with a letter; unique.
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// Create a project and its PostgreSQL schema.
#[utoipa::path(post, path = "/projects", tag = "projects", request_body = ProjectBody,
    responses((status = 201, body = Project), (status = 409, description = "The name is taken", body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody), (status = 503, body = crate::api::error::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ProjectBody>,
) -> Result<(StatusCode, Json<Project>), AppError> {
    if !valid_project_name(&body.name) {
        return Err(AppError::unprocessable(format!(
            "name {:?}: use 1 to 48 lower-case letters, digits and _, starting with a letter",
            body.name
        )));
    }
    if body
        .description
        .as_deref()
        .is_some_and(|d| d.contains('\0'))
    {
        return Err(AppError::unprocessable(
            "description: the text has a NUL character",
        ));
    }
    let engine = postgis(&state)?;
    let id = uuid::Uuid::new_v4().to_string();
    match engine
        .create_project(&id, &body.name, body.description.as_deref())
        .await
    {
        Ok(record) => Ok((StatusCode::CREATED, Json(record.into()))),
        Err(ProjectError::Duplicate(name)) => Err(AppError::new(
            ErrorKind::Conflict,
            "duplicate",
            format!("a project named {name:?} exists already"),
        )),
        Err(ProjectError::Backend(error)) => Err(AppError::from(error)),
    }
}

/// A page of projects.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ProjectList {
    pub projects: Vec<Project>,
    pub total: usize,
}

/// Every project, oldest first.
#[utoipa::path(get, path = "/projects", tag = "projects",
    responses((status = 200, body = ProjectList), (status = 503, body = crate::api::error::ErrorBody)))]
pub async fn list(State(state): State<AppState>) -> Result<Json<ProjectList>, AppError> {
    let projects = postgis(&state)?.projects().await.map_err(AppError::from)?;
    Ok(Json(ProjectList {
        total: projects.len(),
        projects: projects.into_iter().map(Project::from).collect(),
    }))
}

/// One project.
#[utoipa::path(get, path = "/projects/{id}", tag = "projects",
    responses((status = 200, body = Project), (status = 404, body = crate::api::error::ErrorBody), (status = 503, body = crate::api::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Project>, AppError> {
    let engine = postgis(&state)?;
    Ok(Json(find(&engine, &id).await?.into()))
}

/// The layers of a project.
#[utoipa::path(get, path = "/projects/{id}/layers", tag = "projects",
    responses((status = 200, body = [ProjectLayerView]), (status = 404, body = crate::api::error::ErrorBody), (status = 503, body = crate::api::error::ErrorBody)))]
pub async fn layers(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<ProjectLayerView>>, AppError> {
    let engine = postgis(&state)?;
    let project = find(&engine, &id).await?;
    let layers = engine
        .project_layers(&project.schema)
        .await
        .map_err(AppError::from)?;
    Ok(Json(
        layers.into_iter().map(ProjectLayerView::from).collect(),
    ))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddLayerBody {
    /// The stored dataset to copy a layer of.
    pub dataset_id: String,
    /// Its layer (default: the first).
    #[serde(default)]
    pub layer: Option<String>,
    /// The table name in the project (default: the layer's name); replaced if it exists.
    #[serde(default)]
    pub name: Option<String>,
}

/// Copy a stored layer into the project (in bulk, with its SRID and a GiST index).
#[utoipa::path(post, path = "/projects/{id}/layers", tag = "projects", request_body = AddLayerBody,
    responses((status = 201, body = ProjectLayerView),
        (status = 400, description = "`dataset_id` is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody), (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody), (status = 503, body = crate::api::error::ErrorBody)))]
pub async fn add_layer(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<AddLayerBody>,
) -> Result<(StatusCode, Json<ProjectLayerView>), AppError> {
    let engine = postgis(&state)?;
    let project = find(&engine, &id).await?;
    let (layer, table) = super::datasets::layer_to_copy(
        &state,
        &body.dataset_id,
        body.layer.as_deref(),
        body.name.as_deref(),
    )
    .await?;
    let (store, dsn, schema, target) = (
        state.store(),
        engine.dsn().to_owned(),
        project.schema.clone(),
        table.clone(),
    );
    let copy = tokio::task::spawn_blocking(move || {
        store.copy_layer_to_postgis(&dsn, &layer, (&schema, &target))
    })
    .await
    .map_err(|e| AppError::internal(&e))?;
    copy.map_err(AppError::from)?;
    let layers = engine
        .project_layers(&project.schema)
        .await
        .map_err(AppError::from)?;
    let added = layers
        .into_iter()
        .find(|l| l.name == table)
        .ok_or_else(|| AppError::internal(&"the copied layer is not in the project"))?;
    Ok((StatusCode::CREATED, Json(added.into())))
}
