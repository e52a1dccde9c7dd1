//! Jobs: submit, list, read, cancel, follow (SSE logs and events), and the result (download,
//! pages of features).

use std::convert::Infallible;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::{Stream, StreamExt};
use geomill_backends::store::JobRecord;
use serde::Deserialize;
use serde_json::{Value, json};

use super::datasets::MAX_LIMIT;
use super::extract::{ApiJson, ApiQuery};
use crate::blocking::blocking;
use crate::datasets::export::{ExportSource, ExportedFile, export, file_stem};
use crate::datasets::model::Dataset;
use crate::error::{AppError, ErrorKind};
use crate::jobs::feed::Channel;
use crate::jobs::model::{Job, JobPage};
use crate::jobs::runner::{self, COMPLETED};
use crate::jobs::submit::JobQuery;
use crate::state::AppState;
use geomill_planner::plan::operator::ExportFormat;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/jobs", post(submit).get(list))
        .route("/jobs/{id}", get(read))
        .route("/jobs/{id}/cancel", post(cancel))
        .route("/jobs/{id}/stream", get(stream))
        .route("/jobs/{id}/events", get(events))
        .route("/jobs/{id}/download", get(download))
        .route("/jobs/{id}/features", get(features))
        .route("/jobs/{id}/publish", post(publish))
}

async fn find(state: &AppState, id: &str) -> Result<JobRecord, AppError> {
    uuid::Uuid::parse_str(id)
        .map_err(|_| AppError::bad_request(format!("job id {id:?} is not a UUID")))?;
    let jobs = state.job_records();
    let key = id.to_owned();
    blocking(move || jobs.job(&key))
        .await?
        .ok_or_else(|| AppError::not_found(format!("no job {id}")))
}

/// Submit a job: `{name, dataset_id, parameters: {rule_ids, max_retries, timeout_s, vars}}`,
/// `rules` (a rules file) or `pipeline` instead of `rule_ids`; or a rules file as the whole body
/// with `dataset_id`, `name`, `max_retries`, `timeout_s` in the query. The job is recorded
/// (PENDING) before the answer; an invalid submission is a 422 and records nothing.
#[utoipa::path(post, path = "/jobs", tag = "jobs", params(JobQuery),
    request_body(content = crate::jobs::submit::JobBody, description = "A job object, or a rules file (array)",
        example = job_example),
    responses((status = 202, body = Job),
        (status = 400, description = "A malformed query string", body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn submit(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<JobQuery>,
    ApiJson(body): ApiJson<Value>,
) -> Result<(StatusCode, Json<Job>), AppError> {
    let job = crate::jobs::submit::submit(&state, body, query).await?;
    Ok((StatusCode::ACCEPTED, Json(job.into())))
}

/// The example of a submission: the pipeline of the pipelines' example, as a job.
fn job_example() -> Value {
    json!({"name": "populous", "pipeline": super::pipelines::pipeline_example()})
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct JobListQuery {
    /// Page size (default 100, at most 10000).
    #[param(minimum = 0, maximum = 10000)]
    pub limit: Option<i64>,
    /// Jobs to skip (default 0).
    #[param(minimum = 0)]
    pub offset: Option<i64>,
    /// Only jobs in this status.
    pub status: Option<String>,
}

const STATUSES: [&str; 5] = ["PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"];

/// Jobs, newest first.
#[utoipa::path(get, path = "/jobs", tag = "jobs", params(JobListQuery),
    responses((status = 200, body = JobPage), (status = 400, body = crate::api::error::ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<JobListQuery>,
) -> Result<Json<JobPage>, AppError> {
    let (limit, offset) = super::datasets::page(query.limit, query.offset)?;
    let status = query.status.map(|s| s.to_ascii_uppercase());
    if let Some(status) = &status
        && !STATUSES.contains(&status.as_str())
    {
        return Err(AppError::bad_request(format!(
            "status {status:?} is not one of {}",
            STATUSES.join(", ")
        )));
    }
    let jobs = state.job_records();
    let (total, jobs) = blocking(move || jobs.jobs(status.as_deref(), limit, offset)).await?;
    Ok(Json(JobPage {
        jobs: jobs.into_iter().map(Job::from).collect(),
        total,
        limit,
        offset,
    }))
}

/// One job: status, times, attempts, the reason it did not complete, its result.
#[utoipa::path(get, path = "/jobs/{id}", tag = "jobs",
    responses((status = 200, body = Job), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Job>, AppError> {
    Ok(Json(find(&state, &id).await?.into()))
}

/// Cancel a job. A pending job is cancelled at once; a running one is stopped (its engine
/// interrupted) and answered once stopped. Cancelling a cancelled job answers it again; a job
/// that completed or failed is a 409.
#[utoipa::path(post, path = "/jobs/{id}/cancel", tag = "jobs",
    responses((status = 200, body = Job), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody),
        (status = 409, description = "The job already ended", body = crate::api::error::ErrorBody)))]
pub async fn cancel(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Job>, AppError> {
    find(&state, &id).await?;
    Ok(Json(runner::cancel(&state, &id).await?.into()))
}

fn sse(
    items: impl Stream<Item = Value> + Send + 'static,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    Sse::new(items.map(|item| Ok(Event::default().data(item.to_string()))))
        .keep_alive(KeepAlive::default())
}

/// Server-sent events of the job's log: everything so far, then live lines; each `data` is
/// `{timestamp, level, step, message}`. The stream ends when the job ends.
#[utoipa::path(get, path = "/jobs/{id}/stream", tag = "jobs",
    responses((status = 200, description = "text/event-stream", content_type = "text/event-stream"), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn stream(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let job = find(&state, &id).await?;
    Ok(sse(runner::feed_of(&state, &job).stream(Channel::Logs)).into_response())
}

/// Server-sent events of the job's progress: `{type: "state", status, attempt, reason, error}`
/// at every transition and `{type: "progress", step, steps}` as statements run.
#[utoipa::path(get, path = "/jobs/{id}/events", tag = "jobs",
    responses((status = 200, description = "text/event-stream", content_type = "text/event-stream"), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn events(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let job = find(&state, &id).await?;
    Ok(sse(runner::feed_of(&state, &job).stream(Channel::Events)).into_response())
}

/// The result file of a completed job, or a 409 naming its status.
async fn result_path(state: &AppState, id: &str) -> Result<(JobRecord, String), AppError> {
    let job = find(state, id).await?;
    match (&job.result_path, job.status.as_str()) {
        (Some(path), COMPLETED) => {
            let path = path.clone();
            Ok((job, path))
        }
        _ => Err(AppError::new(
            ErrorKind::Conflict,
            "no_result",
            format!(
                "job {id} is {}; a result exists once it is COMPLETED",
                job.status
            ),
        )),
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct DownloadQuery {
    /// gpkg (default), geojson, fgb, parquet, shp (zipped), csv, kml, gml.
    #[param(pattern = "^(gpkg|geojson|fgb|parquet|shp|csv|kml|gml)$")]
    pub format: Option<String>,
}

/// The result of a completed job as a file.
#[utoipa::path(get, path = "/jobs/{id}/download", tag = "jobs", params(DownloadQuery),
    responses((status = 200, description = "The file"),
        (status = 400, description = "The id is not a UUID, or a malformed query string", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody), (status = 409, description = "The job has no result", body = crate::api::error::ErrorBody),
        (status = 422, description = "An unknown format", body = crate::api::error::ErrorBody)))]
pub async fn download(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<DownloadQuery>,
) -> Result<Response, AppError> {
    let format = super::exports::parse_format(query.format.as_deref().unwrap_or("gpkg"))?;
    let (job, path) = result_path(&state, &id).await?;
    if format == ExportFormat::Gpkg {
        // The artifact itself, as the run wrote it.
        let bytes = tokio::fs::read(&path)
            .await
            .map_err(|e| AppError::internal(&e))?;
        return Ok(super::exports::attachment(ExportedFile {
            file_name: format!("{}_result.gpkg", file_stem(&job.name)),
            content_type: "application/geopackage+sqlite3",
            bytes,
        }));
    }
    let source = ExportSource::File {
        path,
        layer_name: "result".into(),
    };
    let file = export(&state, &job.name, source, format).await?;
    Ok(super::exports::attachment(file))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct FeaturesQuery {
    /// Page size (default 100, at most 10000).
    #[param(minimum = 0, maximum = 10000)]
    pub limit: Option<i64>,
    /// Features to skip (default 0).
    #[param(minimum = 0)]
    pub offset: Option<i64>,
}

/// A page of a completed job's result as a GeoJSON FeatureCollection (WGS 84 lon/lat).
#[utoipa::path(get, path = "/jobs/{id}/features", tag = "jobs", params(FeaturesQuery),
    responses((status = 200, description = "FeatureCollection with total, limit, offset", body = Object),
        (status = 400, description = "The id is not a UUID, `limit` or `offset` out of range, or a malformed query string", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody), (status = 409, body = crate::api::error::ErrorBody)))]
pub async fn features(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<FeaturesQuery>,
) -> Result<Json<Value>, AppError> {
    let (limit, offset) = super::datasets::page(query.limit, query.offset)?;
    let (_, path) = result_path(&state, &id).await?;
    let engine = state.store();
    let page = blocking(move || engine.file_features(&path, limit.min(MAX_LIMIT), offset)).await?;
    let features: Vec<Value> = page
        .features
        .iter()
        .map(|f| serde_json::from_str(f).unwrap_or(Value::Null))
        .collect();
    Ok(Json(json!({
        "type": "FeatureCollection",
        "features": features,
        "total": page.total,
        "limit": limit,
        "offset": offset,
    })))
}

/// A job result published as a dataset, with its OGC API collections.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct PublishedResult {
    pub job_id: String,
    pub dataset: Dataset,
    /// The collection ids (`/ogc/collections/{id}`) of the dataset's layers.
    pub collections: Vec<String>,
}

/// Publish a completed job's result as a dataset, so it is an OGC API collection with tiles
/// and a map. 201 the first time, 200 with the same dataset after; 409 before the job
/// completes. (`publish: true` at submission publishes on completion.)
#[utoipa::path(post, path = "/jobs/{id}/publish", tag = "jobs",
    responses((status = 201, body = PublishedResult), (status = 200, description = "Already published", body = PublishedResult),
        (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody), (status = 409, description = "The job has no result", body = crate::api::error::ErrorBody)))]
pub async fn publish(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<PublishedResult>), AppError> {
    let (job, path) = result_path(&state, &id).await?;
    let published = crate::jobs::publish::publish(&state, &job, &path).await?;
    let status = if published.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let dataset = published.dataset;
    Ok((
        status,
        Json(PublishedResult {
            job_id: job.id,
            collections: dataset
                .layers
                .iter()
                .map(|l| format!("{}.{}", dataset.id, l.name))
                .collect(),
            dataset,
        }),
    ))
}
