//! A run under a time-out: past it the engine is interrupted (repeatedly, since an interrupt
//! landing between two statements is not seen) and the run is waited for so that it gives its
//! connection back and removes its partial result.

use std::sync::Arc;
use std::time::Duration;

use geomill_backends::executor::Cancel;
use serde_json::json;
use tokio::task::JoinHandle;

use super::{Execution, RunRequest};
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// Longest wait for a stopped run to give its connection back.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// A run in flight, spawned so that it can be stopped from outside.
pub(crate) type RunHandle = JoinHandle<Result<Execution, AppError>>;

/// Starts `request` with a cancel of its own (answered with the run).
pub(crate) fn spawn_run(state: &AppState, request: RunRequest) -> (RunHandle, Arc<Cancel>) {
    let cancel = request.cancel.clone().unwrap_or_default();
    let request = RunRequest {
        cancel: Some(cancel.clone()),
        ..request
    };
    let state = state.clone();
    let run = tokio::spawn(async move { super::run(&state, request).await });
    (run, cancel)
}

/// Cancels the run until it returns, or [`STOP_GRACE`] has passed (answers whether it
/// returned).
pub(crate) async fn stop_run(run: &mut RunHandle, cancel: &Cancel) -> bool {
    let deadline = tokio::time::Instant::now() + STOP_GRACE;
    loop {
        cancel.cancel();
        tokio::select! {
            _ = &mut *run => return true,
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        if tokio::time::Instant::now() > deadline {
            return false;
        }
    }
}

/// Runs `request`, stopping it after `time_out`: then a 504 `run_timeout` names the limit.
pub async fn run_within(
    state: &AppState,
    request: RunRequest,
    time_out: Duration,
) -> Result<Execution, AppError> {
    let (mut run, cancel) = spawn_run(state, request);
    tokio::select! {
        joined = &mut run => return joined.unwrap_or_else(|e| Err(AppError::internal(&e))),
        () = tokio::time::sleep(time_out) => {}
    }
    if !stop_run(&mut run, &cancel).await {
        tracing::error!("a timed-out pipeline run did not return within the grace period");
    }
    let seconds = time_out.as_secs();
    Err(AppError::new(
        ErrorKind::Timeout,
        "run_timeout",
        format!(
            "the pipeline ran longer than the run time-out of {seconds} s (GEOMILL_JOB_TIMEOUT_S) and was stopped: submit it as a job (POST /jobs) to give it a longer timeout_s"
        ),
    )
    .with_detail(json!({ "status": "FAILED", "reason": "timeout", "timeout_s": seconds })))
}
