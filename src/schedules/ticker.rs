//! The schedule ticker: once a second, every enabled schedule whose next time has come fires
//! (see [`super::fire`]); a skipped tick moves the schedule to its next time all the same.

use std::time::Duration;

use chrono::Utc;

use super::{Skip, fire, next_after, parse_cron, parse_time};
use crate::state::AppState;

const TICK: Duration = Duration::from_secs(1);

/// Runs for the life of the server.
pub async fn run(state: AppState) {
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        let records = state.schedule_records();
        let schedules = match crate::blocking::blocking(move || records.list()).await {
            Ok(schedules) => schedules,
            Err(error) => {
                tracing::warn!(message = %error.message, "schedules: cannot read the catalog");
                continue;
            }
        };
        let now = Utc::now();
        for schedule in schedules.into_iter().filter(|s| s.enabled) {
            let Some(due) = schedule.next_run_at.as_deref().and_then(parse_time) else {
                continue;
            };
            if due > now {
                continue;
            }
            match fire(&state, &schedule.id, schedule.next_run_at.clone()).await {
                Ok(_) => {}
                Err(Skip::StillRunning(job)) => {
                    tracing::info!(schedule = %schedule.id, %job, "schedule skipped: its previous job still runs");
                    advance(&state, &schedule.id).await;
                }
                Err(Skip::Failed(error)) => {
                    tracing::warn!(schedule = %schedule.id, message = %error.message, "schedule could not submit its job");
                    advance(&state, &schedule.id).await;
                }
            }
        }
    }
}

/// Moves a schedule that did not fire to its next time after now.
async fn advance(state: &AppState, id: &str) {
    let records = state.schedule_records();
    let key = id.to_owned();
    let _ = crate::blocking::blocking(move || {
        if let Some(mut schedule) = records.get(&key)? {
            schedule.next_run_at = parse_cron(&schedule.cron)
                .ok()
                .and_then(|cron| next_after(&cron, Utc::now()));
            records.put(&schedule)?;
        }
        Ok(())
    })
    .await;
}
