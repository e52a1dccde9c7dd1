//! The change consumers. The LISTEN loop: a connection of its own listens on `geomill_changes`; each notification
//! (and a sweep every few seconds) drains the change log — entries not consumed yet, oldest
//! first — through [`super::fire::on_change`] and marks them consumed. When PostgreSQL goes
//! away the loop reconnects with backoff and drains what was written meanwhile, so nothing is
//! lost across reconnects.

use std::collections::BTreeMap;
use std::time::Duration;

use geomill_backends::store::postgres::{LoggedChange, PostgresStore, TrackedTable};

use super::fire::{Change, ChangeOp, ChangedFeature, on_change};
use super::store::layer_table;
use crate::state::AppState;

/// First wait before reconnecting, doubled up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// Drains the log even without a notification this often.
const SWEEP: Duration = Duration::from_secs(5);
/// Log entries read at once.
const BATCH: i64 = 500;

/// Starts, once per server, the worker draining the embedded change log and, when PostGIS is
/// configured, the LISTEN loop. The server calls it at start; enabling tracking calls it too.
pub fn start(state: &AppState) {
    if state.triggers().start_draining() {
        tokio::spawn(work_embedded(state.clone()));
    }
    if state.postgres_store().is_some() && state.triggers().start_listening() {
        tokio::spawn(run(state.clone()));
    }
}

/// Drains the embedded change log whenever entries are written, and every few seconds.
async fn work_embedded(state: AppState) {
    let mut sweep = tokio::time::interval(SWEEP);
    loop {
        tokio::select! {
            () = state.triggers().logged() => {}
            _ = sweep.tick() => {}
        }
        drain_embedded(&state).await;
    }
}

/// Hands every pending entry of the embedded change log to the triggers, in order, and marks
/// them consumed.
pub async fn drain_embedded(state: &AppState) {
    loop {
        let engine = state.store();
        let pending = match crate::blocking::blocking(move || engine.pending_layer_changes(BATCH))
            .await
        {
            Ok(pending) if !pending.is_empty() => pending,
            Ok(_) => return,
            Err(error) => {
                tracing::warn!(message = %error.message, "triggers: cannot read the change log");
                return;
            }
        };
        for run in pending
            .chunk_by(|a, b| a.dataset_id == b.dataset_id && a.layer == b.layer && a.op == b.op)
        {
            let Some(first) = run.first() else { continue };
            if let Some(op) = ChangeOp::parse(&first.op) {
                let change = Change {
                    dataset_id: Some(first.dataset_id.clone()),
                    layer: Some(first.layer.clone()),
                    table: layer_table(&first.dataset_id, &first.layer),
                    op,
                    rows: run
                        .iter()
                        .map(|e| ChangedFeature {
                            fid: e.row.fid.clone(),
                            wkb: e.row.wkb.clone(),
                            srid: None,
                        })
                        .collect(),
                };
                on_change(state, change).await;
            }
            let ids: Vec<i64> = run.iter().map(|e| e.id).collect();
            let engine = state.store();
            if let Err(error) =
                crate::blocking::blocking(move || engine.consume_changes(&ids)).await
            {
                tracing::warn!(message = %error.message, "triggers: cannot mark changes consumed");
                return;
            }
        }
    }
}

async fn run(state: AppState) {
    let mut backoff = MIN_BACKOFF;
    while let Some(engine) = state.postgres_store().cloned() {
        match engine.listen_changes().await {
            Ok(mut listener) => {
                tracing::info!("triggers: listening for PostgreSQL changes");
                backoff = MIN_BACKOFF;
                drain(&state, &engine).await;
                let mut sweep = tokio::time::interval(SWEEP);
                loop {
                    tokio::select! {
                        note = listener.next() => match note {
                            Some(_) => drain(&state, &engine).await,
                            None => break,
                        },
                        _ = sweep.tick() => drain(&state, &engine).await,
                    }
                }
                tracing::warn!("triggers: the PostgreSQL connection was lost; reconnecting");
            }
            Err(error) => {
                tracing::warn!(%error, retry_in_ms = backoff.as_millis(), "triggers: cannot listen for PostgreSQL changes");
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// The change a run of log entries of one table and operation stands for.
fn change_of(entries: &[LoggedChange], tracked: &BTreeMap<String, TrackedTable>) -> Option<Change> {
    let first = entries.first()?;
    let op = ChangeOp::parse(&first.op)?;
    let (dataset_id, layer) = tracked
        .get(&first.table)
        .map_or((None, None), |t| (t.dataset_id.clone(), t.layer.clone()));
    let table = match (&dataset_id, &layer) {
        (Some(dataset), Some(layer)) => layer_table(dataset, layer),
        _ => first.table.clone(),
    };
    Some(Change {
        dataset_id,
        layer,
        table,
        op,
        rows: entries
            .iter()
            .map(|e| ChangedFeature {
                fid: e.fid.clone(),
                wkb: e.wkb.clone(),
                srid: e.srid,
            })
            .collect(),
    })
}

/// Hands every pending log entry to the triggers, in order, and marks them consumed.
pub async fn drain(state: &AppState, engine: &PostgresStore) {
    loop {
        let pending = match engine.pending_changes(BATCH).await {
            Ok(pending) if !pending.is_empty() => pending,
            Ok(_) => return,
            Err(error) => {
                tracing::warn!(%error, "triggers: cannot read the change log");
                return;
            }
        };
        let tracked: BTreeMap<String, TrackedTable> = match engine.tracked_tables().await {
            Ok(tables) => tables.into_iter().map(|t| (t.table.clone(), t)).collect(),
            Err(error) => {
                tracing::warn!(%error, "triggers: cannot read the tracked tables");
                return;
            }
        };
        for run in pending.chunk_by(|a, b| a.table == b.table && a.op == b.op) {
            if let Some(change) = change_of(run, &tracked) {
                on_change(state, change).await;
            }
            let ids: Vec<i64> = run.iter().map(|e| e.id).collect();
            if let Err(error) = engine.consume_changes(&ids).await {
                tracing::warn!(%error, "triggers: cannot mark changes consumed");
                return;
            }
        }
    }
}
