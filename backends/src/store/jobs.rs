//! The job catalog of the embedded engine (`meta.jobs`): every transition is a committed
//! conditional update, so a job's state is on disk before anyone is told of it.

use duckdb::Row;
use serde::Serialize;

use super::Store;
use crate::BackendError;
use crate::duckdb::query_error;

const COLUMNS: &str = "id, name, status, dataset_id, document, vars, max_retries, timeout_s, attempts, reason, error, \
     result_path, result_features, steps_executed, created_at, started_at, completed_at, engine";

/// A job as the catalog keeps it. Timestamps are RFC 3339 UTC text, written by the caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobRecord {
    pub id: String,
    pub name: String,
    /// PENDING, RUNNING, COMPLETED, FAILED or CANCELLED.
    pub status: String,
    pub dataset_id: Option<String>,
    /// The document run (rules file, pipeline, ...), as JSON text.
    pub document: String,
    /// Run variables, as a JSON object's text.
    pub vars: String,
    pub max_retries: i32,
    pub timeout_s: i64,
    /// Attempts started so far.
    pub attempts: i32,
    /// Why the job ended other than COMPLETED: `failed`, `timeout`, `cancelled`, `interrupted`.
    pub reason: Option<String>,
    pub error: Option<String>,
    pub result_path: Option<String>,
    pub result_features: Option<i64>,
    pub steps_executed: Option<i32>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    /// The engine the job runs on: `embedded` or `postgis`.
    pub engine: String,
}

fn from_row(r: &Row<'_>) -> Result<JobRecord, duckdb::Error> {
    Ok(JobRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        status: r.get(2)?,
        dataset_id: r.get(3)?,
        document: r.get(4)?,
        vars: r.get(5)?,
        max_retries: r.get(6)?,
        timeout_s: r.get(7)?,
        attempts: r.get(8)?,
        reason: r.get(9)?,
        error: r.get(10)?,
        result_path: r.get(11)?,
        result_features: r.get(12)?,
        steps_executed: r.get(13)?,
        created_at: r.get(14)?,
        started_at: r.get(15)?,
        completed_at: r.get(16)?,
        engine: r
            .get::<_, Option<String>>(17)?
            .unwrap_or_else(|| "embedded".to_owned()),
    })
}

fn status_list(statuses: &[&str]) -> String {
    statuses
        .iter()
        .map(|s| geomill_planner::sql::quote::string(s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The job catalog as the app needs it: a job is inserted once, then moves between states by
/// compare-and-set updates, so two writers never both move it.
pub trait JobRepo: Send + Sync + std::fmt::Debug {
    /// Records a new job.
    fn insert_job(&self, job: &JobRecord) -> Result<(), BackendError>;
    /// Writes `job` if its stored status is one of `expected`; `false` when it was not.
    fn update_job_if(&self, job: &JobRecord, expected: &[&str]) -> Result<bool, BackendError>;
    /// One job.
    fn job(&self, id: &str) -> Result<Option<JobRecord>, BackendError>;
    /// A page of jobs, newest first, with the count of all that match `status`.
    fn jobs(
        &self,
        status: Option<&str>,
        limit: i64,
        offset: i64,
    ) -> Result<(i64, Vec<JobRecord>), BackendError>;
    /// The jobs in any of `statuses`, oldest first.
    fn jobs_in(&self, statuses: &[&str]) -> Result<Vec<JobRecord>, BackendError>;
}

impl JobRepo for Store {
    fn insert_job(&self, job: &JobRecord) -> Result<(), BackendError> {
        let sql = format!(
            "INSERT INTO meta.jobs ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        );
        self.connection()?
            .execute(
                &sql,
                duckdb::params![
                    job.id,
                    job.name,
                    job.status,
                    job.dataset_id,
                    job.document,
                    job.vars,
                    job.max_retries,
                    job.timeout_s,
                    job.attempts,
                    job.reason,
                    job.error,
                    job.result_path,
                    job.result_features,
                    job.steps_executed,
                    job.created_at,
                    job.started_at,
                    job.completed_at,
                    job.engine
                ],
            )
            .map_err(query_error(&sql))?;
        Ok(())
    }

    fn update_job_if(&self, job: &JobRecord, expected: &[&str]) -> Result<bool, BackendError> {
        let sql = format!(
            "UPDATE meta.jobs SET status = ?, attempts = ?, reason = ?, error = ?, result_path = ?, \
             result_features = ?, steps_executed = ?, started_at = ?, completed_at = ? \
             WHERE id = ? AND status IN ({})",
            status_list(expected)
        );
        let changed = self
            .connection()?
            .execute(
                &sql,
                duckdb::params![
                    job.status,
                    job.attempts,
                    job.reason,
                    job.error,
                    job.result_path,
                    job.result_features,
                    job.steps_executed,
                    job.started_at,
                    job.completed_at,
                    job.id
                ],
            )
            .map_err(query_error(&sql))?;
        Ok(changed > 0)
    }

    fn job(&self, id: &str) -> Result<Option<JobRecord>, BackendError> {
        let sql = format!("SELECT {COLUMNS} FROM meta.jobs WHERE id = ?");
        match self.connection()?.query_row(&sql, [id], from_row) {
            Ok(job) => Ok(Some(job)),
            Err(duckdb::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(query_error(&sql)(e)),
        }
    }

    fn jobs(
        &self,
        status: Option<&str>,
        limit: i64,
        offset: i64,
    ) -> Result<(i64, Vec<JobRecord>), BackendError> {
        let filter = status.map_or_else(String::new, |s| {
            format!(" WHERE status = {}", geomill_planner::sql::quote::string(s))
        });
        let connection = self.connection()?;
        let count = format!("SELECT count(*) FROM meta.jobs{filter}");
        let total: i64 = connection
            .query_row(&count, [], |r| r.get(0))
            .map_err(query_error(&count))?;
        let sql = format!(
            "SELECT {COLUMNS} FROM meta.jobs{filter} ORDER BY created_at DESC, id LIMIT ? OFFSET ?"
        );
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        let jobs = statement
            .query_map(duckdb::params![limit, offset], from_row)
            .map_err(query_error(&sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(&sql))?;
        Ok((total, jobs))
    }

    fn jobs_in(&self, statuses: &[&str]) -> Result<Vec<JobRecord>, BackendError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM meta.jobs WHERE status IN ({}) ORDER BY created_at, id",
            status_list(statuses)
        );
        let connection = self.connection()?;
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        let jobs = statement
            .query_map([], from_row)
            .map_err(query_error(&sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(&sql))?;
        Ok(jobs)
    }
}
