//! The Job resource as the API shows it.

use geomill_backends::store::JobRecord;
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Job {
    pub id: String,
    pub name: String,
    /// PENDING, RUNNING, COMPLETED, FAILED or CANCELLED.
    pub status: String,
    pub dataset_id: Option<String>,
    /// The engine the job runs on: `embedded`, `native`, `postgis` or `hybrid`.
    pub engine: String,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// When the first attempt started.
    pub started_at: Option<String>,
    /// When the job ended (COMPLETED, FAILED, CANCELLED).
    pub completed_at: Option<String>,
    /// Attempts started so far.
    pub attempts: i32,
    pub max_retries: i32,
    pub timeout_s: i64,
    /// Why the job did not complete: `failed`, `timeout`, `cancelled` or `interrupted`.
    pub reason: Option<String>,
    /// The last attempt's error, in words.
    pub error: Option<String>,
    /// Present once COMPLETED.
    pub result: Option<JobResult>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct JobResult {
    pub features: i64,
    pub steps_executed: Option<i32>,
    /// `GET` it for the result file (`?format=` gpkg, geojson, fgb, parquet, shp, ...).
    pub download: String,
    /// `GET` it for pages of the result as GeoJSON.
    pub features_url: String,
}

impl From<JobRecord> for Job {
    fn from(record: JobRecord) -> Self {
        let result = (record.status == super::runner::COMPLETED).then(|| JobResult {
            features: record.result_features.unwrap_or(0),
            steps_executed: record.steps_executed,
            download: format!("/jobs/{}/download", record.id),
            features_url: format!("/jobs/{}/features", record.id),
        });
        Self {
            id: record.id,
            name: record.name,
            status: record.status,
            dataset_id: record.dataset_id,
            engine: record.engine,
            created_at: record.created_at,
            started_at: record.started_at,
            completed_at: record.completed_at,
            attempts: record.attempts,
            max_retries: record.max_retries,
            timeout_s: record.timeout_s,
            reason: record.reason,
            error: record.error,
            result,
        }
    }
}

/// A page of jobs.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct JobPage {
    pub jobs: Vec<Job>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}
