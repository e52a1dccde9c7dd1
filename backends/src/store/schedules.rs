//! The schedule catalog of the embedded engine (`meta.schedules`): cron schedules, the job each
//! submits, and when each fires next.

use duckdb::{Row, ToSql};
use serde::Serialize;

use super::repository::CatalogRow;

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

impl CatalogRow for ScheduleRecord {
    const TABLE: &'static str = "meta.schedules";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "name",
        "cron",
        "enabled",
        "job",
        "next_run_at",
        "last_run_at",
        "last_job_id",
        "created_at",
        "updated_at",
    ];

    fn from_row(r: &Row<'_>) -> Result<Self, duckdb::Error> {
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

    fn values(&self) -> Vec<&dyn ToSql> {
        vec![
            &self.id,
            &self.name,
            &self.cron,
            &self.enabled,
            &self.job,
            &self.next_run_at,
            &self.last_run_at,
            &self.last_job_id,
            &self.created_at,
            &self.updated_at,
        ]
    }
}
