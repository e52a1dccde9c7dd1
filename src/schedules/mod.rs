//! Cron schedules: each submits its job at every time its five-field expression (UTC) names.
//! One firing at a time per server (a schedule whose previous job still runs skips the tick);
//! missed times are coalesced: after downtime a schedule whose time passed fires once, at once,
//! and then follows its expression from now.

pub mod ticker;

use std::str::FromStr;

use chrono::{DateTime, SecondsFormat, Utc};
use croner::Cron;
use geomill_backends::store::ScheduleRecord;
use serde_json::{Value, json};

use crate::error::AppError;
use crate::jobs::runner::{PENDING, RUNNING};
use crate::state::AppState;

/// A checked five-field cron expression.
pub fn parse_cron(expression: &str) -> Result<Cron, String> {
    let fields = expression.split_whitespace().count();
    if fields != 5 {
        return Err(format!(
            "cron {expression:?} has {fields} fields; write five: minute hour day-of-month month day-of-week"
        ));
    }
    Cron::from_str(expression).map_err(|e| format!("cron {expression:?}: {e}"))
}

/// The first time after `after` that `cron` names, as RFC 3339.
pub fn next_after(cron: &Cron, after: DateTime<Utc>) -> Option<String> {
    cron.find_next_occurrence(&after, false)
        .ok()
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true))
}

/// Parses an RFC 3339 time the catalog wrote.
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Why a firing did not submit a job.
#[derive(Debug)]
pub enum Skip {
    /// The schedule's previous job is still pending or running.
    StillRunning(String),
    Failed(AppError),
}

/// Submits the schedule's job now (from the ticker or `run-now`), records the firing and
/// publishes `schedule_fired`. `scheduled_for` is the cron time being served (none for run-now).
pub async fn fire(
    state: &AppState,
    id: &str,
    scheduled_for: Option<String>,
) -> Result<ScheduleRecord, Skip> {
    let _one_at_a_time = state.schedule_fires().lock().await;
    let records = state.schedule_records();
    let key = id.to_owned();
    let mut schedule = crate::blocking::blocking(move || records.get(&key))
        .await
        .map_err(Skip::Failed)?
        .ok_or_else(|| Skip::Failed(AppError::not_found(format!("no schedule {id}"))))?;
    if let Some(previous) = &schedule.last_job_id {
        let jobs = state.job_records();
        let key = previous.clone();
        let job = crate::blocking::blocking(move || jobs.job(&key))
            .await
            .map_err(Skip::Failed)?;
        if job.is_some_and(|j| j.status == PENDING || j.status == RUNNING) {
            return Err(Skip::StillRunning(previous.clone()));
        }
    }
    let body: Value = serde_json::from_str(&schedule.job).unwrap_or(Value::Null);
    let job = crate::jobs::submit::submit(state, body, Default::default())
        .await
        .map_err(Skip::Failed)?;
    let now = Utc::now();
    schedule.last_run_at = Some(now.to_rfc3339_opts(SecondsFormat::Millis, true));
    schedule.last_job_id = Some(job.id.clone());
    if scheduled_for.is_some() {
        schedule.next_run_at = parse_cron(&schedule.cron)
            .ok()
            .and_then(|cron| next_after(&cron, now));
    }
    let records = state.schedule_records();
    let stored = schedule.clone();
    crate::blocking::blocking(move || records.put(&stored))
        .await
        .map_err(Skip::Failed)?;
    state.events().publish(
        "schedule_fired",
        json!({
            "schedule_id": schedule.id,
            "name": schedule.name,
            "job_id": job.id,
            "scheduled_for": scheduled_for,
            "manual": scheduled_for.is_none(),
        }),
    );
    Ok(schedule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_fields_and_the_next_time() {
        assert!(parse_cron("*/5 * * * *").is_ok());
        assert!(parse_cron("0 * * * * *").unwrap_err().contains("6 fields"));
        assert!(parse_cron("61 * * * *").is_err());
        let cron = parse_cron("30 2 * * *").unwrap_or_else(|e| unreachable!("{e}"));
        let after = parse_time("2026-11-22T03:00:00.000Z").unwrap_or_else(|| unreachable!());
        assert_eq!(
            next_after(&cron, after).as_deref(),
            Some("2026-11-23T02:30:00.000Z")
        );
    }
}
