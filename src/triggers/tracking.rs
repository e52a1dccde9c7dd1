//! Change tracking of dataset layers, one layer at a time. A layer stored in PostgreSQL is
//! tracked by a row trigger there (see `geomill_backends::store::postgres` and [`super::listen`]); a
//! layer of the embedded engine is tracked by geomill itself: the writes geomill makes to it
//! are logged in `meta.change_log` and handed to [`super::fire::on_change`] ([`record`]).

use geomill_backends::store::ChangedRow;
use geomill_backends::store::postgres::TrackedTable;
use serde_json::{Value, json};

use super::fire::{ChangeOp, ChangedFeature};
use super::store::layer_table;
use crate::blocking::blocking;
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// The PostgreSQL table (`schema`, `table`) a dataset layer is stored in, when it lives in
/// PostGIS (persistent mode): tracking it then goes through a row trigger in PostgreSQL, which
/// sees every writer, not only geomill.
pub async fn postgis_table_of(
    state: &AppState,
    dataset_id: &str,
    layer: &str,
) -> Option<(String, String)> {
    if !state.store().location().is_postgis() {
        return None;
    }
    let dataset = crate::datasets::lookup::find(state, dataset_id)
        .await
        .ok()?;
    let stored = dataset.layers.iter().find(|l| l.name == layer)?;
    Some((
        geomill_backends::store::PG_LAYER_SCHEMA.to_owned(),
        stored.table_name.clone(),
    ))
}

/// The dataset's layer named `layer`, checked (404 for an unknown dataset or layer).
async fn checked_layer(state: &AppState, dataset_id: &str, layer: &str) -> Result<(), AppError> {
    let dataset = crate::datasets::lookup::find(state, dataset_id).await?;
    if dataset.layers.iter().any(|l| l.name == layer) {
        return Ok(());
    }
    let known: Vec<&str> = dataset.layers.iter().map(|l| l.name.as_str()).collect();
    Err(AppError::not_found(format!(
        "dataset {dataset_id} has no layer {layer:?} (layers: {})",
        known.join(", ")
    )))
}

/// Installs change tracking on the PostgreSQL table `schema.table` (storing `dataset`'s layer,
/// if it is one) and makes sure the LISTEN loop runs.
pub async fn enable_table(
    state: &AppState,
    schema: &str,
    table: &str,
    dataset: Option<(&str, &str)>,
) -> Result<TrackedTable, AppError> {
    let engine = state.postgres_store().ok_or_else(|| {
        AppError::unprocessable("tracking a PostgreSQL table needs GEOMILL_POSTGIS_DSN")
    })?;
    let tracked = engine
        .enable_tracking(schema, table, dataset)
        .await
        .map_err(|e| match e {
            geomill_backends::BackendError::Query { reason, .. } => AppError::unprocessable(reason),
            other => AppError::from(other),
        })?;
    super::listen::start(state);
    Ok(tracked)
}

/// Starts tracking a layer; answers the dataset's tracking status.
pub async fn enable(state: &AppState, dataset_id: &str, layer: &str) -> Result<Value, AppError> {
    checked_layer(state, dataset_id, layer).await?;
    if let Some((schema, table)) = postgis_table_of(state, dataset_id, layer).await {
        enable_table(state, &schema, &table, Some((dataset_id, layer))).await?;
    } else {
        let engine = state.store();
        let (key, name) = (dataset_id.to_owned(), layer.to_owned());
        let now = crate::timestamp::now();
        blocking(move || engine.track_layer(&key, &name, &now)).await?;
        super::listen::start(state);
    }
    status(state, dataset_id).await
}

/// Stops tracking a layer (404 when it was not tracked); answers the dataset's status.
pub async fn disable(state: &AppState, dataset_id: &str, layer: &str) -> Result<Value, AppError> {
    checked_layer(state, dataset_id, layer).await?;
    let removed = if let Some((schema, table)) = postgis_table_of(state, dataset_id, layer).await {
        let engine = state
            .postgres_store()
            .ok_or_else(|| AppError::unprocessable("PostGIS is not configured"))?;
        engine
            .disable_tracking(&schema, &table)
            .await
            .map_err(AppError::from)?
    } else {
        let engine = state.store();
        let (key, name) = (dataset_id.to_owned(), layer.to_owned());
        blocking(move || engine.untrack_layer(&key, &name)).await?
    };
    if !removed {
        return Err(AppError::not_found(format!(
            "layer {layer:?} of dataset {dataset_id} is not tracked"
        )));
    }
    status(state, dataset_id).await
}

/// The tracked layers of a dataset: `{dataset_id, layers: [{layer, table, engine, pending}]}`.
pub async fn status(state: &AppState, dataset_id: &str) -> Result<Value, AppError> {
    crate::datasets::lookup::find(state, dataset_id).await?;
    let engine = state.store();
    let key = dataset_id.to_owned();
    let mut layers: Vec<Value> = blocking(move || engine.tracked_layers(&key))
        .await?
        .into_iter()
        .map(|t| {
            json!({"layer": t.layer, "table": layer_table(dataset_id, &t.layer), "engine": "embedded",
                   "enabled_at": t.enabled_at, "pending": t.pending})
        })
        .collect();
    if let Some(postgis) = state.postgres_store() {
        // PostgreSQL being down leaves its part out of the answer rather than failing it.
        if let Ok(tables) = postgis.tracked_tables().await {
            layers.extend(
                tables
                    .into_iter()
                    .filter(|t| t.dataset_id.as_deref() == Some(dataset_id))
                    .map(|t| {
                        let layer = t.layer.unwrap_or_default();
                        json!({"layer": layer, "table": layer_table(dataset_id, &layer), "engine": "postgis",
                               "postgres_table": t.table, "pending": t.pending})
                    }),
            );
        }
    }
    Ok(json!({ "dataset_id": dataset_id, "layers": layers }))
}

/// Logs a write geomill made to a layer of the embedded engine when the layer is tracked, and
/// wakes the worker that hands the log to the triggers ([`super::listen::drain_embedded`]).
/// Failures are logged, never the writer's.
pub async fn record(
    state: &AppState,
    dataset_id: &str,
    layer: &str,
    op: ChangeOp,
    rows: Vec<ChangedFeature>,
) {
    let engine = state.store();
    let (key, name) = (dataset_id.to_owned(), layer.to_owned());
    let logged: Vec<ChangedRow> = rows
        .into_iter()
        .map(|r| ChangedRow {
            fid: r.fid,
            wkb: r.wkb,
        })
        .collect();
    match blocking(move || engine.log_layer_change(&key, &name, op.as_str(), &logged)).await {
        Ok(ids) if !ids.is_empty() => state.triggers().wake(),
        Ok(_) => {}
        Err(error) => tracing::warn!(message = %error.message, "tracking: cannot log a change"),
    }
}

/// Every row of a stored layer as changed rows (for logging a layer loaded or replaced whole).
pub async fn layer_rows(
    state: &AppState,
    table_name: &str,
) -> Result<Vec<ChangedFeature>, AppError> {
    let engine = state.store();
    let table = table_name.to_owned();
    Ok(blocking(move || engine.layer_rows(&table))
        .await?
        .into_iter()
        .map(|r| ChangedFeature {
            fid: r.fid,
            wkb: r.wkb,
            srid: None,
        })
        .collect())
}

/// The dataset's tracked layers of the embedded engine.
async fn tracked_here(state: &AppState, dataset_id: &str) -> Vec<String> {
    let engine = state.store();
    let key = dataset_id.to_owned();
    blocking(move || engine.tracked_layers(&key))
        .await
        .map(|layers| layers.into_iter().map(|t| t.layer).collect())
        .unwrap_or_default()
}

/// A dataset's layers were loaded (a remote layer fetched): every row of each tracked layer
/// is an insert.
pub async fn record_loaded(state: &AppState, dataset: &geomill_backends::store::DatasetRecord) {
    for name in tracked_here(state, &dataset.id).await {
        let Some(layer) = dataset.layers.iter().find(|l| l.name == name) else {
            continue;
        };
        match layer_rows(state, &layer.table_name).await {
            Ok(rows) => record(state, &dataset.id, &name, ChangeOp::Insert, rows).await,
            Err(error) => {
                tracing::warn!(message = %error.message, "tracking: cannot read a loaded layer")
            }
        }
    }
}

/// A dataset is about to be deleted: every row of each tracked layer is a delete, and the
/// layers stop being tracked.
pub async fn record_deleting(state: &AppState, dataset: &geomill_backends::store::DatasetRecord) {
    for name in tracked_here(state, &dataset.id).await {
        if let Some(layer) = dataset.layers.iter().find(|l| l.name == name) {
            match layer_rows(state, &layer.table_name).await {
                Ok(rows) => record(state, &dataset.id, &name, ChangeOp::Delete, rows).await,
                Err(error) => {
                    tracing::warn!(message = %error.message, "tracking: cannot read a deleted layer")
                }
            }
        }
        let engine = state.store();
        let (key, layer) = (dataset.id.clone(), name.clone());
        let _ = blocking(move || engine.untrack_layer(&key, &layer)).await;
    }
}

/// A trigger on a PostgreSQL table that stores no dataset tracks that table: installs the
/// tracking if it is missing (a table that does not exist is a 422 naming `table`).
pub async fn ensure_table_tracked(
    state: &AppState,
    spec: &super::model::TriggerSpec,
) -> Result<(), AppError> {
    if spec.dataset_id.is_some() {
        return Ok(());
    }
    let Some((schema, table)) = spec.table.split_once('.') else {
        return Ok(());
    };
    let engine = state.postgres_store().ok_or_else(|| {
        AppError::unprocessable("table: a PostgreSQL table needs GEOMILL_POSTGIS_DSN")
    })?;
    let tracked = engine.tracked_tables().await.map_err(AppError::from)?;
    if tracked.iter().any(|t| t.table == spec.table) {
        super::listen::start(state);
        return Ok(());
    }
    enable_table(state, schema, table, None)
        .await
        .map(|_| ())
        .map_err(|e| {
            if e.kind == ErrorKind::Invalid {
                super::store::invalid(&[super::model::FieldProblem::new("table", e.message)])
            } else {
                e
            }
        })
}
