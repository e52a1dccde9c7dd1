//! Running a pipeline: its sources bound to stored layers, planned with their real schemas and
//! strict run variables, exports confined to the data directory, emitted in the dialect of the
//! engine the request names and handed to it through the one run seam
//! ([`geomill_backends::executor::Engine`]), the result written as a GeoPackage under a
//! temporary name and renamed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use geomill_backends::BackendError;
use geomill_backends::executor::{Cancel, CompiledRun, Progress, ResultSink, StatementRun};
use geomill_backends::store::{Binding, DatasetRecord, LayerRecord};
use geomill_planner::optimizer::EngineMode;
use geomill_planner::plan::lower::DEFAULT_INPUT;
use geomill_planner::plan::operator::Operator;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use geomill_planner::sql::emit;
use geomill_planner::{compile, document_sources};
use serde::Serialize;
use serde_json::{Value, json};

use crate::blocking::blocking;
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// What a run answers.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Execution {
    pub job_id: String,
    /// `COMPLETED` (a failed run is an error response whose detail says `FAILED`).
    pub status: &'static str,
    /// Steps that ran, exports included (a step skipped by its condition does not count).
    pub steps_executed: usize,
    /// The result as a GeoPackage.
    pub result_path: String,
    pub result_features: i64,
    /// Files the pipeline's exports wrote.
    pub outputs: Vec<String>,
    /// The raster datasets the pipeline's raster steps wrote (`raster_clip`, `ndvi`, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rasters: Vec<crate::datasets::raster_outputs::WrittenRaster>,
    /// Step-by-step runs only: every statement of the plan as lowered, with its rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statements: Option<Vec<StatementReport>>,
    /// Native and hybrid runs: each stage the plan gave the native backend, and how it ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub native: Vec<NativeStageReport>,
}

/// How a stage given to the native backend ran.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct NativeStageReport {
    /// The table the stage made.
    pub relation: String,
    /// `native`, or `sql` when a kernel declined the data and the stage's SQL ran instead.
    pub ran: &'static str,
    /// Why the kernel declined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declined: Option<String>,
    /// Where a stage its kernels ran spent its time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<StageSeconds>,
}

/// Seconds a native stage spent moving its inputs in, in its kernels, and storing its result.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
pub struct StageSeconds {
    pub read: f64,
    pub kernels: f64,
    pub store: f64,
}

impl From<geomill_backends::executor::NativeStepReport> for NativeStageReport {
    fn from(report: geomill_backends::executor::NativeStepReport) -> Self {
        Self {
            relation: report.relation,
            ran: if report.declined.is_none() {
                "native"
            } else {
                "sql"
            },
            declined: report.declined,
            seconds: report.timings.map(|t| StageSeconds {
                read: t.read.as_secs_f64(),
                kernels: t.kernels.as_secs_f64(),
                store: t.store.as_secs_f64(),
            }),
        }
    }
}

/// One statement of a step-by-step run.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct StatementReport {
    pub steps: Vec<String>,
    /// The table it made (or, for an export, read).
    pub relation: String,
    /// Rows of that table (none for exports).
    pub rows: Option<i64>,
    pub sql: String,
}

/// A run request: the document, the dataset `input` stands for, run variables.
#[derive(Clone, Default)]
pub struct RunRequest {
    pub document: Value,
    pub dataset_id: Option<String>,
    pub vars: BTreeMap<String, String>,
    /// Where relative export destinations go (default: `outputs/<job id>` in the data
    /// directory).
    pub outputs_root: Option<PathBuf>,
    /// Run the plan as lowered, one statement per operator, and report each one's rows
    /// (debugging) instead of the optimised plan.
    pub step_by_step: bool,
    /// Told (statements done, statements) as the run goes.
    pub progress: Option<Progress>,
    /// The id the run's result is filed under (default: a new one).
    pub job_id: Option<String>,
    /// Stops the run from outside (cancel, time-out), whatever the engine.
    pub cancel: Option<std::sync::Arc<Cancel>>,
    /// The engine that runs the statements.
    pub engine: EngineMode,
    /// The result written as GeoParquet instead of a GeoPackage, by the engines that write it
    /// (`geomill run --output x.parquet`).
    pub result_as_geoparquet: bool,
}

/// The layer a source name stands for: `input` (the request's dataset), a layer of the
/// request's dataset, `<dataset id>` or `<dataset name>` (its first layer), or
/// `<dataset id or name>/<layer>`.
fn resolve(
    name: &str,
    input: Option<&DatasetRecord>,
    all: &[DatasetRecord],
) -> Option<LayerRecord> {
    if name == DEFAULT_INPUT {
        return input?.layers.first().cloned();
    }
    if let Some(layer) = input.and_then(|d| d.layers.iter().find(|l| l.name == name)) {
        return Some(layer.clone());
    }
    let (dataset, layer) = match name.split_once('/') {
        Some((dataset, layer)) => (dataset, Some(layer)),
        None => (name, None),
    };
    let matches: Vec<&DatasetRecord> = all
        .iter()
        .filter(|d| d.id == dataset || d.name == dataset)
        .collect();
    let [record] = matches.as_slice() else {
        return None;
    };
    match layer {
        Some(layer) => record.layers.iter().find(|l| l.name == layer).cloned(),
        None => record.layers.first().cloned(),
    }
}

/// Every stored dataset (the names sources may use).
pub(crate) async fn all_datasets(state: &AppState) -> Result<Vec<DatasetRecord>, AppError> {
    let engine = state.store();
    Ok(blocking(move || engine.datasets(i64::MAX, 0)).await?.1)
}

/// Binds each source name to a stored layer; a 422 lists the names that match none.
pub(crate) fn bind_sources(
    sources: BTreeSet<String>,
    input: Option<&DatasetRecord>,
    all: &[DatasetRecord],
) -> Result<Vec<Binding>, AppError> {
    let mut bindings = Vec::new();
    let mut unknown = Vec::new();
    for source in sources {
        match resolve(&source, input, all) {
            Some(layer) => bindings.push(Binding { source, layer }),
            None => unknown.push(source),
        }
    }
    if unknown.is_empty() {
        return Ok(bindings);
    }
    let hint = if unknown.iter().any(|s| s == DEFAULT_INPUT) && input.is_none() {
        " (`input` is the dataset named by dataset_id)"
    } else {
        ""
    };
    Err(AppError::unprocessable(format!(
        "{} name no stored layer{hint}: use a layer of the dataset, a dataset id or name, or <dataset>/<layer>",
        unknown.join(", ")
    )))
}

/// Binds each source name to a stored layer like [`bind_sources`] (`input_id` naming the
/// request's dataset), first fetching any lazily registered remote layer a source names.
pub(crate) async fn bind_loaded(
    state: &AppState,
    sources: &BTreeSet<String>,
    input_id: Option<&str>,
) -> Result<Vec<Binding>, AppError> {
    let all = all_datasets(state).await?;
    let input = match input_id {
        Some(id) => Some(
            all.iter()
                .find(|d| d.id == id)
                .cloned()
                .ok_or_else(|| AppError::not_found(format!("no dataset {id}")))?,
        ),
        None => None,
    };
    let bindings = bind_sources(sources.clone(), input.as_ref(), &all)?;
    let pending: Vec<DatasetRecord> = all
        .into_iter()
        .filter(|d| d.remote.as_ref().is_some_and(|r| r.loaded_at.is_none()))
        .filter(|d| {
            d.layers
                .iter()
                .any(|l| bindings.iter().any(|b| b.layer.table_name == l.table_name))
        })
        .collect();
    if pending.is_empty() {
        return Ok(bindings);
    }
    for dataset in pending {
        crate::datasets::remote::ensure_loaded(state, dataset).await?;
    }
    let all = all_datasets(state).await?;
    let input = input_id.and_then(|id| all.iter().find(|d| d.id == id));
    bind_sources(sources.clone(), input, &all)
}

/// `path` under `root`, refusing absolute paths and `..`.
fn confined(root: &Path, path: &str) -> Option<PathBuf> {
    let relative = Path::new(path);
    let safe = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    (safe && !path.is_empty()).then(|| root.join(relative))
}

/// The stored layers `document` reads (`input` and layer names from `dataset_id`), bound to its
/// source names, and their schemas as the catalog to plan with.
pub(crate) async fn stored_catalog(
    state: &AppState,
    document: &Value,
    vars: &Vars,
    dataset_id: Option<&str>,
) -> Result<(Vec<Binding>, Catalog), AppError> {
    let sources = document_sources(document, vars)?;
    let bindings = bind_loaded(state, &sources, dataset_id).await?;
    let mut catalog = Catalog::default();
    for binding in &bindings {
        let engine = state.store();
        let layer = binding.layer.clone();
        let schema = blocking(move || engine.layer_schema(&layer)).await?;
        catalog.sources.insert(binding.source.clone(), schema);
    }
    catalog.rasters = crate::datasets::raster::catalog_for(state, document).await?;
    Ok((bindings, catalog))
}

/// A run's failure as the client sees it: a stop, or an engine unavailable (PostgreSQL gone),
/// is mapped as engine failures are (503); any other failure fails the run (422 with the job's
/// id), naming the engine.
fn run_failed(error: BackendError, job_id: &str, engine: &str) -> AppError {
    let transient = error.is_transient();
    let reason = match error {
        stopped @ (BackendError::Interrupted { .. } | BackendError::Unavailable { .. }) => {
            return AppError::from(stopped);
        }
        BackendError::Query { reason, .. } => reason,
        BackendError::Native(cause) => cause.to_string(),
        other => other.to_string(),
    };
    AppError::new(
        ErrorKind::Invalid,
        "execution_failed",
        format!("the pipeline failed on {engine}: {reason}"),
    )
    .with_detail(json!({ "job_id": job_id, "status": "FAILED" }))
    .may_pass(transient)
}

impl From<StatementRun> for StatementReport {
    fn from(run: StatementRun) -> Self {
        Self {
            steps: run.steps,
            relation: run.relation,
            rows: run.rows,
            sql: run.sql,
        }
    }
}

/// Plans and runs `request` on the engine it names.
pub async fn run(state: &AppState, request: RunRequest) -> Result<Execution, AppError> {
    let engine = state.run_engine(request.engine)?;
    if request.step_by_step && !engine.counts_each_step() {
        return Err(AppError::unprocessable(
            "step-by-step runs are for the embedded engine; leave out engine or use \"embedded\"",
        ));
    }
    let loose = Vars {
        values: request.vars.clone(),
        strict: false,
    };
    let document = geomill_planner::spec::SpecDocument::from_value(&request.document)?;
    if matches!(document, geomill_planner::spec::SpecDocument::Scenario(_)) {
        return Err(AppError::unprocessable(
            "a scenario runs through /scenarios/{id}/run, not as one pipeline",
        ));
    }
    let (bindings, mut catalog) = stored_catalog(
        state,
        &request.document,
        &loose,
        request.dataset_id.as_deref(),
    )
    .await?;
    let job_id = request
        .job_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let data_dir = &state.config().data_dir;
    let results_dir = data_dir.join("results").join(&job_id);
    // The rasters the run's raster steps write, registered as raster datasets when it completes.
    let rasters_dir = results_dir.join("rasters");
    if let Some(rasters) = catalog.rasters.as_mut() {
        rasters.outputs = Some(rasters_dir.display().to_string());
    }
    let strict = Vars {
        values: request.vars,
        strict: true,
    };
    let planned = compile(&request.document, &catalog, &strict, request.engine)?;
    let step_by_step = request.step_by_step;
    let mut plan = planned
        .into_iter()
        .next()
        .map(|p| if step_by_step { p.plan } else { p.optimized })
        .ok_or_else(|| AppError::unprocessable("nothing to run"))?;

    let outputs_root = request
        .outputs_root
        .clone()
        .unwrap_or_else(|| data_dir.join("outputs").join(&job_id));
    let mut outputs = Vec::new();
    for node in plan.graph.node_weights_mut() {
        if let Operator::Export(export) = &mut node.op {
            let path = confined(&outputs_root, &export.destination).ok_or_else(|| {
                AppError::unprocessable(format!(
                    "step {}: destination {:?} must be a relative path without `..` (files are written under the data directory)",
                    node.step, export.destination
                ))
            })?;
            export.destination = path.display().to_string();
            outputs.push(export.destination.clone());
        }
    }
    let script = emit(&plan, engine.dialect())?;
    let steps_executed = plan
        .graph
        .node_weights()
        .filter(|n| !n.step.is_empty())
        .map(|n| n.step.clone())
        .collect::<BTreeSet<_>>()
        .len();
    let folders = [results_dir.clone(), outputs_root.clone()];
    for folder in folders.iter().chain(
        outputs
            .iter()
            .filter_map(|o| Path::new(o).parent().map(Path::to_path_buf))
            .collect::<Vec<_>>()
            .iter(),
    ) {
        tokio::fs::create_dir_all(folder)
            .await
            .map_err(|e| AppError::internal(&e))?;
    }
    let extension = if request.result_as_geoparquet && engine.writes_geoparquet() {
        "parquet"
    } else {
        "gpkg"
    };
    let partial = results_dir.join(format!("result.partial.{extension}"));
    let final_path = results_dir.join(format!("result.{extension}"));
    let compiled = CompiledRun {
        job_id: job_id.clone(),
        plan: plan.clone(),
        script,
        sources: bindings,
        sink: ResultSink {
            path: partial.clone(),
        },
        count_each_step: step_by_step,
        cancel: request.cancel.clone().unwrap_or_default(),
        progress: request
            .progress
            .clone()
            .unwrap_or_else(|| std::sync::Arc::new(|_, _| {})),
    };
    let outcome = match engine.run(compiled).await {
        Ok(outcome) => outcome,
        Err(error) => {
            let _ = tokio::fs::remove_dir_all(&results_dir).await;
            return Err(run_failed(error, &job_id, engine.name()));
        }
    };
    tokio::fs::rename(&partial, &final_path)
        .await
        .map_err(|e| AppError::internal(&e))?;
    if extension == "gpkg" {
        crate::styles::result_style::style_result(state, &plan, &final_path).await;
    }
    let rasters = crate::datasets::raster_outputs::register_outputs(state, &rasters_dir).await?;
    Ok(Execution {
        statements: step_by_step.then(|| {
            outcome
                .statements
                .into_iter()
                .map(StatementReport::from)
                .collect()
        }),
        native: outcome
            .native
            .into_iter()
            .map(NativeStageReport::from)
            .collect(),
        job_id,
        status: "COMPLETED",
        steps_executed,
        result_path: final_path.display().to_string(),
        result_features: outcome.result_rows,
        outputs,
        rasters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_stay_under_the_root() {
        let root = Path::new("/data/outputs/j");
        assert_eq!(
            confined(root, "a/b.gpkg"),
            Some(PathBuf::from("/data/outputs/j/a/b.gpkg"))
        );
        assert_eq!(confined(root, "/etc/cron.d/x"), None);
        assert_eq!(confined(root, "../../x.gpkg"), None);
        assert_eq!(confined(root, ""), None);
    }
}
