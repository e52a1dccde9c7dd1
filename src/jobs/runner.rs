//! The job runner: a bounded number of jobs at a time (a semaphore; the rest wait in order),
//! each attempt under a time-out, retries with doubling back-off for failures that may pass,
//! cancel at any point. Every transition is committed to the catalog before it is announced.

use std::sync::Arc;
use std::time::Duration;

use geomill_backends::store::JobRecord;
use serde_json::{Value, json};

use super::feed::JobFeed;
use super::in_flight::Control;
use crate::error::{AppError, ErrorKind};
use crate::execute::{Execution, RunRequest};
use crate::state::AppState;
use crate::timestamp;

pub const PENDING: &str = "PENDING";
pub const RUNNING: &str = "RUNNING";
pub const COMPLETED: &str = "COMPLETED";
pub const FAILED: &str = "FAILED";
pub const CANCELLED: &str = "CANCELLED";

fn log_path(state: &AppState, id: &str) -> std::path::PathBuf {
    state
        .config()
        .data_dir
        .join("jobs")
        .join(id)
        .join("log.jsonl")
}

/// The feed of any job: live for this server's jobs, replayed from its log file otherwise.
pub fn feed_of(state: &AppState, job: &JobRecord) -> Arc<JobFeed> {
    state.jobs().feed(&job.id).unwrap_or_else(|| {
        Arc::new(JobFeed::replay(
            log_path(state, &job.id),
            json!({"type": "state", "status": job.status, "attempt": job.attempts}),
        ))
    })
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, geomill_backends::BackendError> + Send + 'static,
) -> Result<T, AppError> {
    crate::blocking::blocking(work).await
}

/// Writes `job` if its stored status is one of `expected`; `false` when another transition won.
async fn write_if(state: &AppState, job: &JobRecord, expected: &[&'static str]) -> bool {
    let jobs = state.job_records();
    let (job, expected) = (job.clone(), expected.to_vec());
    blocking(move || jobs.update_job_if(&job, &expected))
        .await
        .unwrap_or_else(|error| {
            tracing::error!(message = %error.message, "cannot write a job transition");
            false
        })
}

async fn read(state: &AppState, id: &str) -> Option<JobRecord> {
    let jobs = state.job_records();
    let key = id.to_owned();
    blocking(move || jobs.job(&key)).await.ok().flatten()
}

/// Tells the job's feed and the event bus (`job_updated`, then `job_completed` or
/// `job_failed` when it ends) about a transition just committed.
fn announce(state: &AppState, feed: &JobFeed, job: &JobRecord) {
    feed.event(json!({
        "type": "state",
        "status": job.status,
        "attempt": job.attempts,
        "reason": job.reason,
        "error": job.error,
    }));
    publish_event(state, "job_updated", job);
    match job.status.as_str() {
        COMPLETED => publish_event(state, "job_completed", job),
        FAILED => publish_event(state, "job_failed", job),
        _ => {}
    }
}

fn publish_event(state: &AppState, kind: &'static str, job: &JobRecord) {
    state.events().publish(
        kind,
        json!({
            "job_id": job.id,
            "name": job.name,
            "status": job.status,
            "attempt": job.attempts,
            "engine": job.engine,
            "reason": job.reason,
            "error": job.error,
            "result_features": job.result_features,
        }),
    );
}

/// Records `job` (PENDING) and starts driving it; it is in the catalog when this returns.
/// With `publish`, its result is published as a dataset when it completes.
pub async fn submit(
    state: &AppState,
    job: JobRecord,
    publish: bool,
) -> Result<JobRecord, AppError> {
    if publish {
        super::publish::mark(state, &job.id).await?;
    }
    let jobs = state.job_records();
    let stored = job.clone();
    blocking(move || jobs.insert_job(&stored)).await?;
    let feed = Arc::new(JobFeed::new(Some(log_path(state, &job.id))));
    feed.log("info", None, &format!("job {} accepted", job.name));
    feed.event(json!({"type": "state", "status": job.status, "attempt": job.attempts}));
    publish_event(state, "job_created", &job);
    state.jobs().register(&job.id, feed);
    tokio::spawn(drive(state.clone(), job.id.clone()));
    Ok(job)
}

/// Takes up the jobs an earlier run of the server left: RUNNING ones are requeued when retries
/// remain and FAILED (`interrupted`) otherwise; every PENDING job is started again.
pub async fn resume(state: &AppState) -> Result<(), AppError> {
    let jobs = state.job_records();
    let left = blocking(move || jobs.jobs_in(&[RUNNING, PENDING])).await?;
    for mut job in left {
        let feed = Arc::new(JobFeed::new(Some(log_path(state, &job.id))));
        if job.status == RUNNING {
            let retry = job.attempts <= job.max_retries;
            job.error = Some("the server stopped while the job was running".into());
            if retry {
                job.status = PENDING.into();
                feed.log(
                    "warn",
                    None,
                    "the server restarted mid-run; the job is requeued",
                );
            } else {
                job.status = FAILED.into();
                job.reason = Some("interrupted".into());
                job.completed_at = Some(timestamp::now());
                feed.log(
                    "error",
                    None,
                    "the server restarted mid-run; the job failed",
                );
            }
            if !write_if(state, &job, &[RUNNING]).await {
                continue;
            }
            announce(state, &feed, &job);
            if !retry {
                feed.finish();
                state.jobs().register(&job.id, feed);
                state.jobs().forget_control(&job.id);
                continue;
            }
        }
        state.jobs().register(&job.id, feed);
        tokio::spawn(drive(state.clone(), job.id.clone()));
    }
    Ok(())
}

/// How an attempt ended.
enum Attempt {
    Done(Result<Execution, AppError>),
    TimedOut,
    Cancelled,
}

/// Runs one attempt under the job's time-out, stopping it on cancel.
async fn attempt(
    state: &AppState,
    job: &JobRecord,
    feed: &Arc<JobFeed>,
    control: &Control,
) -> Attempt {
    let Some(engine) = geomill_planner::optimizer::EngineMode::parse(&job.engine) else {
        let reason = format!("job {} names an unknown engine {:?}", job.id, job.engine);
        return Attempt::Done(Err(AppError::internal(&reason)));
    };
    let progress_feed = feed.clone();
    let progress = Arc::new(move |done: usize, total: usize| {
        progress_feed.event(json!({"type": "progress", "step": done + 1, "steps": total}));
        progress_feed.log("info", None, &format!("statement {} of {total}", done + 1));
    });
    let request = RunRequest {
        document: serde_json::from_str(&job.document).unwrap_or(Value::Null),
        dataset_id: job.dataset_id.clone(),
        vars: serde_json::from_str(&job.vars).unwrap_or_default(),
        job_id: Some(job.id.clone()),
        progress: Some(progress),
        engine,
        ..RunRequest::default()
    };
    let (mut run, cancel) = crate::execute::spawn_run(state, request);
    let timeout = Duration::from_secs(u64::try_from(job.timeout_s).unwrap_or(1));
    let outcome = tokio::select! {
        joined = &mut run => {
            return Attempt::Done(joined.unwrap_or_else(|e| Err(AppError::internal(&e))));
        }
        () = tokio::time::sleep(timeout) => Attempt::TimedOut,
        () = control.cancelled() => Attempt::Cancelled,
    };
    // Stop the engine and wait for the attempt to give its connection back (and remove its
    // partial result).
    if !crate::execute::stop_run(&mut run, &cancel).await {
        tracing::error!(job = %job.id, "a stopped job did not return within the grace period");
    }
    outcome
}

/// Moves a job through its states until it ends.
async fn drive(state: AppState, id: String) {
    let runner = state.jobs();
    let (Some(feed), Some(control)) = (runner.feed(&id), runner.control(&id)) else {
        return;
    };
    let slots = runner.slots.clone();
    let permit = tokio::select! {
        permit = slots.acquire_owned() => permit.ok(),
        () = control.cancelled() => None,
    };
    if permit.is_some() {
        run_attempts(&state, &id, &feed, &control).await;
    }
    drop(permit);
    feed.finish();
    state.jobs().forget_control(&id);
}

async fn run_attempts(state: &AppState, id: &str, feed: &Arc<JobFeed>, control: &Control) {
    loop {
        let Some(mut job) = read(state, id).await else {
            return;
        };
        if job.status != PENDING {
            return;
        }
        job.status = RUNNING.into();
        job.attempts += 1;
        job.started_at.get_or_insert_with(timestamp::now);
        if !write_if(state, &job, &[PENDING]).await {
            return;
        }
        announce(state, feed, &job);
        feed.log(
            "info",
            None,
            &format!(
                "attempt {} of {} started",
                job.attempts,
                job.max_retries + 1
            ),
        );
        let outcome = attempt(state, &job, feed, control).await;
        job.completed_at = Some(timestamp::now());
        match outcome {
            Attempt::Done(Ok(execution)) => {
                job.status = COMPLETED.into();
                job.reason = None;
                job.error = None;
                job.result_path = Some(execution.result_path.clone());
                job.result_features = Some(execution.result_features);
                job.steps_executed = i32::try_from(execution.steps_executed).ok();
                feed.log(
                    "info",
                    None,
                    &format!(
                        "completed: {} steps, {} result features",
                        execution.steps_executed, execution.result_features
                    ),
                );
                publish_if_asked(state, &job, &execution.result_path, feed).await;
            }
            Attempt::TimedOut => {
                job.status = FAILED.into();
                job.reason = Some("timeout".into());
                job.error = Some(format!(
                    "the job ran longer than its time-out of {} s and was stopped",
                    job.timeout_s
                ));
                feed.log("error", None, job.error.as_deref().unwrap_or_default());
            }
            Attempt::Cancelled => {
                job.status = CANCELLED.into();
                job.reason = Some("cancelled".into());
                job.error = None;
                feed.log("warn", None, "cancelled while running");
            }
            Attempt::Done(Err(error)) => {
                feed.log("error", None, &error.message);
                job.error = Some(error.message.clone());
                // Only a failure that may pass (the engine's, a remote service's) is tried again.
                if error.transient && job.attempts <= job.max_retries {
                    job.status = PENDING.into();
                    job.completed_at = None;
                    if !write_if(state, &job, &[RUNNING]).await {
                        return;
                    }
                    announce(state, feed, &job);
                    let backoff = backoff(state, job.attempts);
                    feed.log(
                        "warn",
                        None,
                        &format!("retrying in {} ms", backoff.as_millis()),
                    );
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => continue,
                        () = control.cancelled() => return,
                    }
                }
                job.status = FAILED.into();
                job.reason = Some("failed".into());
            }
        }
        if write_if(state, &job, &[RUNNING]).await {
            announce(state, feed, &job);
        }
        return;
    }
}

/// Publishes a completed job's result when the submission asked for it. A failure is logged and
/// leaves the job COMPLETED: the result is whole, and `POST /jobs/{id}/publish` can try again.
async fn publish_if_asked(state: &AppState, job: &JobRecord, result_path: &str, feed: &JobFeed) {
    match super::publish::is_pending(state, &job.id).await {
        Ok(true) => {}
        Ok(false) => return,
        Err(error) => {
            feed.log(
                "warn",
                None,
                &format!("publication not checked: {}", error.message),
            );
            return;
        }
    }
    match super::publish::publish(state, job, result_path).await {
        Ok(published) => feed.log(
            "info",
            None,
            &format!("result published as dataset {}", published.dataset.id),
        ),
        Err(error) => feed.log(
            "warn",
            None,
            &format!("the result could not be published: {}", error.message),
        ),
    }
}

/// The wait before retry `attempt` (1-based): the configured back-off, doubled each time,
/// at most a minute.
fn backoff(state: &AppState, attempt: i32) -> Duration {
    let base = state.config().job_retry_backoff_ms;
    let factor = 1_u64 << u32::try_from(attempt.clamp(1, 16) - 1).unwrap_or(0);
    Duration::from_millis(base.saturating_mul(factor).min(60_000))
}

/// Cancels a job: a PENDING one at once, a RUNNING one by stopping its engine (answered once it
/// has stopped, or after a few seconds with its state then). Cancelling a CANCELLED job again
/// answers it as it is; a job that ended otherwise is a 409.
pub async fn cancel(state: &AppState, id: &str) -> Result<JobRecord, AppError> {
    let mut job = read(state, id)
        .await
        .ok_or_else(|| AppError::not_found(format!("no job {id}")))?;
    match job.status.as_str() {
        CANCELLED => return Ok(job),
        COMPLETED | FAILED => {
            return Err(AppError::new(
                ErrorKind::Conflict,
                "job_ended",
                format!(
                    "job {id} already ended {}; there is nothing to cancel",
                    job.status
                ),
            ));
        }
        _ => {}
    }
    let control = state.jobs().control(id);
    if job.status == PENDING {
        job.status = CANCELLED.into();
        job.reason = Some("cancelled".into());
        job.completed_at = Some(timestamp::now());
        if write_if(state, &job, &[PENDING]).await {
            if let Some(feed) = state.jobs().feed(id) {
                feed.log("warn", None, "cancelled before it ran");
                announce(state, &feed, &job);
            }
            if let Some(control) = control {
                control.stop();
            }
            return Ok(job);
        }
    }
    // Running, or started since it was read.
    if let Some(control) = control {
        control.stop();
    }
    for _ in 0..100 {
        let current = read(state, id).await;
        if let Some(current) = current
            && !matches!(current.status.as_str(), RUNNING | PENDING)
        {
            return Ok(current);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    read(state, id)
        .await
        .ok_or_else(|| AppError::not_found(format!("no job {id}")))
}
