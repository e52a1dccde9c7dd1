//! The schedule catalog of the embedded engine (`meta.schedules`): cron schedules, the job each
//! submits, and when each fires next.

use duckdb::Row;
use serde::Serialize;

use super::Store;
use super::datasets::query_error;
use crate::BackendError;

pub(super) const SCHEDULES_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.schedules (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    cron VARCHAR NOT NULL,
    enabled BOOLEAN NOT NULL,
    job VARCHAR NOT NULL,
    next_run_at VARCHAR,
    last_run_at VARCHAR,
    last_job_id VARCHAR,
    created_at VARCHAR NOT NULL,
    updated_at VARCHAR NOT NULL
);";

const COLUMNS: &str =
    "id, name, cron, enabled, job, next_run_at, last_run_at, last_job_id, created_at, updated_at";

/// A schedule as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScheduleRecord {
    pub id: String,
    pub name: String,
    /// Five-field cron expression, UTC.
    pub cron: String,
    pub enabled: bool,
    /// The job submission (JSON text) each firing submits.
    pub job: String,
    /// RFC 3339; null while disabled.
    pub next_run_at: Option<String>,
    pub last_run_at: Option<String>,
    pub last_job_id: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

fn from_row(r: &Row<'_>) -> Result<ScheduleRecord, duckdb::Error> {
    Ok(ScheduleRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        cron: r.get(2)?,
        enabled: r.get(3)?,
        job: r.get(4)?,
        next_run_at: r.get(5)?,
        last_run_at: r.get(6)?,
        last_job_id: r.get(7)?,
        created_at: r.get(8)?,
        updated_at: r.get(9)?,
    })
}

impl Store {
    /// Stores a schedule, replacing the one with the same id.
    pub fn put_schedule(&self, s: &ScheduleRecord) -> Result<(), BackendError> {
        let sql = format!(
            "INSERT OR REPLACE INTO meta.schedules ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        );
        self.connection()?
            .execute(
                &sql,
                duckdb::params![
                    s.id,
                    s.name,
                    s.cron,
                    s.enabled,
                    s.job,
                    s.next_run_at,
                    s.last_run_at,
                    s.last_job_id,
                    s.created_at,
                    s.updated_at
                ],
            )
            .map_err(query_error(&sql))?;
        Ok(())
    }

    /// One schedule.
    pub fn schedule(&self, id: &str) -> Result<Option<ScheduleRecord>, BackendError> {
        let sql = format!("SELECT {COLUMNS} FROM meta.schedules WHERE id = ?");
        match self.connection()?.query_row(&sql, [id], from_row) {
            Ok(schedule) => Ok(Some(schedule)),
            Err(duckdb::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(query_error(&sql)(e)),
        }
    }

    /// Every schedule, oldest first.
    pub fn schedules(&self) -> Result<Vec<ScheduleRecord>, BackendError> {
        let sql = format!("SELECT {COLUMNS} FROM meta.schedules ORDER BY created_at, id");
        let connection = self.connection()?;
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        let schedules = statement
            .query_map([], from_row)
            .map_err(query_error(&sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(&sql))?;
        Ok(schedules)
    }

    /// Deletes a schedule; `false` when there was none.
    pub fn delete_schedule(&self, id: &str) -> Result<bool, BackendError> {
        let sql = "DELETE FROM meta.schedules WHERE id = ?";
        let changed = self
            .connection()?
            .execute(sql, [id])
            .map_err(query_error(sql))?;
        Ok(changed > 0)
    }
}
