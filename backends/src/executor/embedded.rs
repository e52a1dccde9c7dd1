//! A run whose tables live in the embedded database (engines `embedded` and `native`): the
//! sources bound as views on a connection of the run's own, the steps walked there (each SQL
//! statement run as it comes, native stages' results stored as temporary tables of the
//! connection), then the result counted and written as a GeoPackage: by GDAL from DuckDB, or
//! natively when a native stage made it last.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use duckdb::Connection;
use geomill_planner::schema::GEOM;
use geomill_planner::sql::quote::{ident, string};

use super::arrow::{in_place_layer, query_layer_on, select_list, store_layer_on};
use super::cancel::Cancel;
use super::engine::{
    CompiledRun, Engine, EngineFuture, EngineOutcome, blocking, counted, result_crs, result_table,
};
use super::steps::{RunOutcome, ScriptStep, steps_of};
use super::walk::{TableEngine, walk};
use crate::BackendError;
use crate::duckdb::{EmbeddedEngine, InPlaceParquet, SourceView, count_rows, run_error};
use crate::store::Store;
use geomill_native::stage::{NodeRunner, OnThisMachine};
use geomill_native::{Layer, NativeError, write_geopackage, write_result_geoparquet};
use geomill_planner::sql::Dialect;

const ENGINE: &str = "duckdb";

/// The run's connection as the walk sees it.
struct EmbeddedTables<'a> {
    connection: Connection,
    cancel: Option<&'a Cancel>,
    /// Where native stages write the files DuckDB reads their results from.
    scratch: PathBuf,
    /// For each step, the rows of the table it made, when asked to count.
    rows_after: Vec<Option<i64>>,
    /// The run's result table when the last step makes it by a native stage: that layer is
    /// kept in `held` and written to the result file as it is, not stored in DuckDB first.
    hold: Option<String>,
    held: Option<Layer>,
    /// The bound sources that are views over GeoParquet files, by source name.
    in_place: std::collections::HashMap<String, InPlaceParquet>,
    /// Those of them whose GeoParquet is still to be written from their point-cloud file
    /// (until a statement or a table-reading kernel reads them).
    unwritten: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

impl EmbeddedTables<'_> {
    /// Writes the GeoParquet of the point-cloud source `name` from its file, if it is still to
    /// be written: into a file beside it, then moved over it, so the view reads all or nothing.
    fn write_point_cloud(&self, name: &str) -> Result<(), NativeError> {
        if !self.unwritten.borrow().contains(name) {
            return Ok(());
        }
        let Some(file) = self.in_place.get(name) else {
            return Ok(());
        };
        let Some(cloud) = &file.point_cloud else {
            return Ok(());
        };
        let part = file.geoparquet.with_extension("parquet.part");
        geomill_native::pointcloud::to_geoparquet(cloud, &part, None)
            .map_err(|e| NativeError::Input(e.to_string()))?;
        std::fs::rename(&part, &file.geoparquet)
            .map_err(|e| NativeError::Input(format!("{}: {e}", file.geoparquet.display())))?;
        self.unwritten.borrow_mut().remove(name);
        Ok(())
    }

    fn failed(&self, statement: &str, error: &duckdb::Error) -> BackendError {
        if self.stopped() {
            BackendError::Interrupted { engine: ENGINE }
        } else {
            run_error(statement, error)
        }
    }
}

impl TableEngine for EmbeddedTables<'_> {
    fn name(&self) -> &'static str {
        ENGINE
    }

    fn sql(&mut self, step: &ScriptStep) -> Result<(), BackendError> {
        let read: Vec<String> = self
            .unwritten
            .borrow()
            .iter()
            .filter(|name| step.parts.iter().any(|part| part.contains(&ident(name))))
            .cloned()
            .collect();
        for name in read {
            self.write_point_cloud(&name)?;
        }
        for part in &step.parts {
            self.connection
                .execute(part, [])
                .map_err(|e| self.failed(part, &e))?;
        }
        let rows = count_rows(&self.connection, step.count.as_deref())?;
        self.rows_after.push(rows);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        Ok(())
    }

    fn finish(&mut self) -> Result<(), BackendError> {
        Ok(())
    }

    fn read_layer(
        &self,
        table: &str,
        crs: Option<String>,
        columns: Option<&[String]>,
    ) -> Result<Layer, NativeError> {
        self.write_point_cloud(table)?;
        // A file the native reader cannot take (an encoding it lacks, say) is read by DuckDB.
        if let Some(file) = self.in_place.get(table)
            && let Ok(layer) = in_place_layer(file, columns, crs.clone())
        {
            return Ok(layer);
        }
        let query = format!("SELECT {} FROM {}", select_list(columns), ident(table));
        query_layer_on(&self.connection, &query, GEOM, crs)
    }

    fn write_layer(
        &mut self,
        layer: &Layer,
        step: &ScriptStep,
        _last: bool,
    ) -> Result<(), BackendError> {
        let relation = step
            .native
            .as_ref()
            .map_or("", |stage| stage.relation.as_str());
        if self.hold.as_deref() == Some(relation) {
            let rows = i64::try_from(layer.num_rows()).unwrap_or(i64::MAX);
            self.rows_after.push(step.count.as_ref().map(|_| rows));
            self.held = Some(layer.clone());
            return Ok(());
        }
        store_layer_on(&self.connection, layer, relation, &self.scratch, true)?;
        let rows = count_rows(&self.connection, step.count.as_deref())?;
        self.rows_after.push(rows);
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.cancel.is_some_and(Cancel::is_cancelled)
    }

    fn point_cloud(&self, table: &str) -> Option<PathBuf> {
        self.in_place.get(table)?.point_cloud.clone()
    }
}

/// Where a run's result is written (a GeoPackage, or GeoParquet for a `.parquet` path) and the
/// CRS its geometries are in (a reprojection's output carries none of its own).
#[derive(Debug, Clone, Copy)]
pub struct ResultFile<'a> {
    pub path: &'a str,
    pub crs: Option<&'a str>,
}

impl ResultFile<'_> {
    fn is_geoparquet(&self) -> bool {
        Path::new(self.path)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
    }
}

/// How a run's walk is done: who computes native stages' nodes, who hears progress, what can
/// stop it.
#[derive(Clone, Copy)]
pub struct RunControl<'a> {
    pub nodes: &'a dyn NodeRunner,
    pub progress: &'a (dyn Fn(usize, usize) + Send + Sync),
    pub cancel: Option<&'a Cancel>,
}

impl RunControl<'static> {
    /// Every node on this machine, nobody told, nothing to stop it.
    pub fn plain() -> Self {
        Self {
            nodes: &OnThisMachine,
            progress: &|_, _| {},
            cancel: None,
        }
    }
}

/// Runs `statements` after binding `views`, on a connection of its own, native stages' nodes
/// computed by `control.nodes`; `result` is the table to count and, with `result_file`, to
/// write as a GeoPackage. `control.progress` hears
/// (statements done, statements) before each statement; a statement with a table to count has
/// that table's rows counted after it. `cancel`, when given, can stop the run from another
/// thread.
pub fn run_embedded(
    engine: &EmbeddedEngine,
    views: &[SourceView],
    statements: &[ScriptStep],
    result: &str,
    result_file: Option<ResultFile<'_>>,
    control: &RunControl<'_>,
) -> Result<RunOutcome, BackendError> {
    let RunControl {
        nodes,
        progress,
        cancel,
    } = *control;
    let connection = engine.run_connection(views)?;
    if let Some(cancel) = cancel {
        cancel.attach_duckdb(&connection);
    }
    let scratch = result_file
        .and_then(|f| Path::new(f.path).parent())
        .map_or_else(std::env::temp_dir, Path::to_path_buf);
    let hold = statements
        .last()
        .and_then(|step| step.native.as_ref())
        .map(|stage| stage.relation.clone())
        .filter(|relation| relation == result && result_file.is_some());
    let mut tables = EmbeddedTables {
        connection,
        cancel,
        scratch,
        rows_after: Vec::with_capacity(statements.len()),
        hold,
        held: None,
        in_place: views
            .iter()
            .filter_map(|v| Some((v.name.clone(), v.in_place.clone()?)))
            .collect(),
        unwritten: std::cell::RefCell::new(
            views
                .iter()
                .filter(|v| v.in_place.as_ref().is_some_and(|f| f.point_cloud.is_some()))
                .map(|v| v.name.clone())
                .collect(),
        ),
    };
    let native = walk(&mut tables, statements, nodes, progress)?;
    if let (Some(layer), Some(file)) = (tables.held.take(), result_file) {
        let crs = file
            .crs
            .filter(|c| c.starts_with("EPSG:"))
            .map(str::to_owned)
            .or_else(|| layer.crs.clone());
        let written = if file.is_geoparquet() {
            write_result_geoparquet(&layer, Path::new(file.path), crs.as_deref())
        } else {
            write_geopackage(&layer, Path::new(file.path), "result", crs.as_deref())
        };
        match written {
            Ok(()) => {
                return Ok(RunOutcome {
                    result_rows: i64::try_from(layer.num_rows()).unwrap_or(i64::MAX),
                    rows_after: tables.rows_after,
                    native,
                });
            }
            // Written through GDAL below, from the table it would have been stored as.
            Err(NativeError::Declined(_)) => {
                store_layer_on(&tables.connection, &layer, result, &tables.scratch, true)?;
            }
            Err(error) => return Err(error.into()),
        }
    }
    let count = format!("SELECT count(*) FROM {}", ident(result));
    let result_rows: i64 = tables
        .connection
        .query_row(&count, [], |r| r.get(0))
        .map_err(|e| tables.failed(&count, &e))?;
    if let Some(file) = result_file {
        // The geometry column typed with the plan's CRS, which the GeoPackage then declares
        // (a reprojection's output carries none).
        let mut selected = "*".to_owned();
        if let Some(crs) = file.crs.filter(|c| c.starts_with("EPSG:")) {
            let typed = format!(
                "SELECT count(*) FROM duckdb_columns() WHERE table_name = {} AND column_name = 'geom' AND data_type LIKE 'GEOMETRY%'",
                string(result)
            );
            let has_geometry: i64 = tables
                .connection
                .query_row(&typed, [], |r| r.get(0))
                .map_err(|e| tables.failed(&typed, &e))?;
            if has_geometry > 0 {
                selected = format!(
                    "* REPLACE (CAST(geom AS GEOMETRY({})) AS geom)",
                    string(crs)
                );
            }
        }
        let format = if file.is_geoparquet() {
            "FORMAT PARQUET"
        } else {
            "FORMAT GDAL, DRIVER 'GPKG', LAYER_NAME 'result'"
        };
        let copy = format!(
            "COPY (SELECT {selected} FROM {}) TO {} ({format})",
            ident(result),
            string(file.path)
        );
        tables
            .connection
            .execute(&copy, [])
            .map_err(|e| tables.failed(&copy, &e))?;
    }
    Ok(RunOutcome {
        result_rows,
        rows_after: tables.rows_after,
        native,
    })
}

/// Engines `embedded` and `native` behind the run seam: the script walked on a DuckDB
/// connection of the run's own, the stored layers bound as views.
pub struct EmbeddedRuns {
    pub engine: Arc<EmbeddedEngine>,
    pub store: Arc<Store>,
    /// Runs the plan as lowered with each statement counted (engine `embedded` only).
    pub counts_each_step: bool,
}

impl Engine for EmbeddedRuns {
    fn name(&self) -> &'static str {
        "the embedded engine"
    }

    fn dialect(&self) -> Dialect {
        Dialect::Duckdb
    }

    fn counts_each_step(&self) -> bool {
        self.counts_each_step
    }

    fn writes_geoparquet(&self) -> bool {
        true
    }

    fn run(&self, run: CompiledRun) -> EngineFuture<'_> {
        let views = self.store.source_views(&run.sources);
        Box::pin(run_on_connection(
            Arc::clone(&self.engine),
            views,
            run,
            Arc::new(OnThisMachine),
        ))
    }
}

/// Runs `run` on a DuckDB connection of its own with `views` bound (the walk of engines
/// `embedded` and `native`, and the coordinator's part of a distributed run), native stages'
/// nodes computed by `nodes`; the result written to the run's sink.
pub async fn run_on_connection(
    engine: Arc<EmbeddedEngine>,
    views: Vec<SourceView>,
    run: CompiledRun,
    nodes: Arc<dyn NodeRunner + Send + Sync>,
) -> Result<EngineOutcome, BackendError> {
    blocking(ENGINE, move || {
        let result = result_table(&run.script)?;
        let mut statements = steps_of(&run.plan, &run.script);
        if run.count_each_step {
            for step in &mut statements {
                step.count = step.makes.clone();
            }
        }
        let path = run.sink.path.display().to_string();
        let crs = result_crs(&run.plan);
        let outcome = run_embedded(
            &engine,
            &views,
            &statements,
            &result,
            Some(ResultFile {
                path: &path,
                crs: crs.as_deref(),
            }),
            &RunControl {
                nodes: nodes.as_ref(),
                progress: run.progress.as_ref(),
                cancel: Some(&run.cancel),
            },
        )?;
        Ok(EngineOutcome {
            result_rows: outcome.result_rows,
            native: outcome.native,
            statements: if run.count_each_step {
                counted(&run.script, &outcome.rows_after)
            } else {
                Vec::new()
            },
        })
    })
    .await
}
