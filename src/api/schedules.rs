//! `/schedules`: cron schedules that submit a job at each time their expression names (UTC).
//! Both request forms of the specification are read: `cron` + `pipeline_id` (a stored rule,
//! run on `dataset_id`), and `schedule` + `pipeline` (a PipelineSpec) + `engine`; or `job`,
//! any body `POST /jobs` takes. The job is checked when the schedule is written.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::{SecondsFormat, Utc};
use geomill_backends::store::ScheduleRecord;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::extract::ApiJson;
use crate::blocking::blocking;
use crate::error::{AppError, ErrorKind};
use crate::schedules::{Skip, fire, next_after, parse_cron};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/schedules", get(list).post(create))
        .route("/schedules/{id}", get(read).patch(edit).delete(remove))
        .route("/schedules/{id}/run-now", post(run_now))
}

/// A schedule as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Schedule {
    pub id: String,
    pub name: String,
    /// Five-field cron expression, evaluated in UTC.
    pub cron: String,
    pub enabled: bool,
    /// The job submitted at each firing (a `POST /jobs` body).
    #[schema(value_type = Object)]
    pub job: Value,
    /// When it fires next (null while disabled).
    pub next_run_at: Option<String>,
    pub last_run_at: Option<String>,
    pub last_job_id: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<ScheduleRecord> for Schedule {
    fn from(r: ScheduleRecord) -> Self {
        Self {
            job: serde_json::from_str(&r.job).unwrap_or(Value::Null),
            id: r.id,
            name: r.name,
            cron: r.cron,
            enabled: r.enabled,
            next_run_at: r.next_run_at,
            last_run_at: r.last_run_at,
            last_job_id: r.last_job_id,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// A schedule to create, in either of the specification's forms (or with `job`).
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleBody {
    pub name: Option<String>,
    /// Five-field cron expression (UTC).
    pub cron: Option<String>,
    /// Same as `cron` (the other published form).
    pub schedule: Option<String>,
    /// Default true.
    pub enabled: Option<bool>,
    /// A job submission, as `POST /jobs` takes it.
    #[schema(value_type = Option<Object>)]
    pub job: Option<Value>,
    /// A stored rule to run on `dataset_id`.
    pub pipeline_id: Option<String>,
    pub dataset_id: Option<String>,
    /// A PipelineSpec (v2) object.
    #[schema(value_type = Option<Object>)]
    pub pipeline: Option<Value>,
    /// `embedded`, `native`, `postgis` or `hybrid`.
    pub engine: Option<String>,
    /// `{"webhook": url}`: not supported yet (422).
    #[schema(value_type = Option<Object>)]
    pub notify: Option<Value>,
}

/// The job a body describes, with the schedule's name and engine in it.
fn job_of(body: &ScheduleBody, name: &str) -> Result<Value, AppError> {
    if body.notify.is_some() {
        return Err(AppError::unprocessable(
            "notify: webhook notifications are not implemented yet; subscribe to schedule_fired on /ws/events",
        ));
    }
    let mut job = match (&body.job, &body.pipeline_id, &body.pipeline) {
        (Some(job), None, None) => job.clone(),
        (None, Some(rule), None) => {
            let dataset = body.dataset_id.as_ref().ok_or_else(|| {
                AppError::unprocessable("pipeline_id (a stored rule) needs dataset_id")
            })?;
            json!({"dataset_id": dataset, "parameters": {"rule_ids": [rule]}})
        }
        (None, None, Some(Value::Object(pipeline))) => {
            let mut job = json!({ "pipeline": pipeline });
            if let Some(dataset) = &body.dataset_id {
                job["dataset_id"] = json!(dataset);
            }
            job
        }
        (None, None, Some(_)) => {
            return Err(AppError::unprocessable(
                "pipeline must be a PipelineSpec object (server-side file paths are not read)",
            ));
        }
        _ => {
            return Err(AppError::unprocessable(
                "say what to run with exactly one of job, pipeline_id (with dataset_id) or pipeline",
            ));
        }
    };
    let Some(object) = job.as_object_mut() else {
        return Err(AppError::unprocessable("job must be an object"));
    };
    object.entry("name").or_insert_with(|| json!(name));
    if let Some(engine) = &body.engine {
        object.insert("engine".into(), json!(engine));
    }
    Ok(job)
}

fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The next time of `cron` when `enabled`.
fn next_run(cron: &str, enabled: bool) -> Result<Option<String>, AppError> {
    let parsed = parse_cron(cron).map_err(AppError::unprocessable)?;
    Ok(enabled.then(|| next_after(&parsed, Utc::now())).flatten())
}

/// Checks the job as `POST /jobs` would (document, dataset), without submitting it.
async fn check_job(state: &AppState, job: &Value) -> Result<(), AppError> {
    crate::jobs::submit::job_from(state, job.clone(), Default::default())
        .await
        .map(|_| ())
}

async fn stored(state: &AppState, id: &str) -> Result<ScheduleRecord, AppError> {
    let records = state.schedule_records();
    let key = id.to_owned();
    blocking(move || records.get(&key))
        .await?
        .ok_or_else(|| AppError::not_found(format!("no schedule {id}")))
}

async fn save(state: &AppState, record: ScheduleRecord) -> Result<ScheduleRecord, AppError> {
    let records = state.schedule_records();
    let copy = record.clone();
    blocking(move || records.put(&copy)).await?;
    Ok(record)
}

/// Create a schedule.
#[utoipa::path(post, path = "/schedules", tag = "schedules", request_body = ScheduleBody,
    responses((status = 201, body = Schedule), (status = 415, body = crate::api::error::ErrorBody),
        (status = 422, description = "A bad cron, or a job POST /jobs would refuse", body = crate::api::error::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ScheduleBody>,
) -> Result<(StatusCode, Json<Schedule>), AppError> {
    let cron = body
        .cron
        .clone()
        .or_else(|| body.schedule.clone())
        .ok_or_else(|| AppError::unprocessable("cron (or schedule) is required"))?;
    let name = body.name.clone().unwrap_or_else(|| "schedule".into());
    let enabled = body.enabled.unwrap_or(true);
    let next_run_at = next_run(&cron, enabled)?;
    let job = job_of(&body, &name)?;
    check_job(&state, &job).await?;
    let created = now();
    let record = ScheduleRecord {
        id: uuid::Uuid::new_v4().to_string(),
        name,
        cron,
        enabled,
        job: job.to_string(),
        next_run_at,
        last_run_at: None,
        last_job_id: None,
        created_at: created.clone(),
        updated_at: created,
    };
    Ok((
        StatusCode::CREATED,
        Json(save(&state, record).await?.into()),
    ))
}

/// Every schedule.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ScheduleList {
    pub schedules: Vec<Schedule>,
    pub total: usize,
}

/// List the schedules, oldest first.
#[utoipa::path(get, path = "/schedules", tag = "schedules", responses((status = 200, body = ScheduleList)))]
pub async fn list(State(state): State<AppState>) -> Result<Json<ScheduleList>, AppError> {
    let records = state.schedule_records();
    let schedules: Vec<Schedule> = blocking(move || records.list())
        .await?
        .into_iter()
        .map(Schedule::from)
        .collect();
    Ok(Json(ScheduleList {
        total: schedules.len(),
        schedules,
    }))
}

/// One schedule.
#[utoipa::path(get, path = "/schedules/{id}", tag = "schedules",
    responses((status = 200, body = Schedule), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Schedule>, AppError> {
    Ok(Json(stored(&state, &id).await?.into()))
}

/// Changes to a schedule: any of `name`, `cron`, `enabled`, `job`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleEdit {
    pub name: Option<String>,
    pub cron: Option<String>,
    pub enabled: Option<bool>,
    #[schema(value_type = Option<Object>)]
    pub job: Option<Value>,
}

/// Edit a schedule; its next time is computed again.
#[utoipa::path(patch, path = "/schedules/{id}", tag = "schedules", request_body = ScheduleEdit,
    responses((status = 200, body = Schedule), (status = 404, body = crate::api::error::ErrorBody),
        (status = 415, body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn edit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(edit): ApiJson<ScheduleEdit>,
) -> Result<Json<Schedule>, AppError> {
    let mut record = stored(&state, &id).await?;
    if let Some(job) = edit.job {
        check_job(&state, &job).await?;
        record.job = job.to_string();
    }
    record.name = edit.name.unwrap_or(record.name);
    record.cron = edit.cron.unwrap_or(record.cron);
    record.enabled = edit.enabled.unwrap_or(record.enabled);
    record.next_run_at = next_run(&record.cron, record.enabled)?;
    record.updated_at = now();
    Ok(Json(save(&state, record).await?.into()))
}

/// Delete a schedule (its jobs stay).
#[utoipa::path(delete, path = "/schedules/{id}", tag = "schedules",
    responses((status = 200, description = "{deleted: id}", body = Object), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    let records = state.schedule_records();
    let key = id.clone();
    if !blocking(move || records.delete(&key)).await? {
        return Err(AppError::not_found(format!("no schedule {id}")));
    }
    Ok(Json(json!({ "deleted": id })))
}

/// Run a schedule's job now (its cron times are unchanged). 409 while its previous job runs.
#[utoipa::path(post, path = "/schedules/{id}/run-now", tag = "schedules",
    responses((status = 202, body = Schedule), (status = 404, body = crate::api::error::ErrorBody),
        (status = 409, description = "The previous job still runs", body = crate::api::error::ErrorBody),
        (status = 422, description = "The job no longer passes (e.g. its dataset was deleted)", body = crate::api::error::ErrorBody)))]
pub async fn run_now(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Schedule>), AppError> {
    match fire(&state, &id, None).await {
        Ok(record) => Ok((StatusCode::ACCEPTED, Json(record.into()))),
        Err(Skip::StillRunning(job)) => Err(AppError::new(
            ErrorKind::Conflict,
            "still_running",
            format!("the schedule's previous job {job} is still running"),
        )),
        Err(Skip::Failed(error)) => Err(error),
    }
}
