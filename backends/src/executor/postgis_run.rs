//! A run on PostGIS (engines `postgis` and `hybrid`): the sources brought into a scratch schema
//! of the run (copied in place in persistent mode, else by binary COPY through DuckDB's
//! postgres extension), the steps walked there (native stages between, see `hybrid`), and the
//! result and the exported tables written as files. The scratch schema is dropped whatever the
//! outcome.

use std::path::Path;
use std::sync::Arc;

use geomill_planner::plan::operator::ExportFormat;
use geomill_planner::sql::quote::{ident, string};
use geomill_planner::sql::{FgbIndex, duckdb_copy};

use super::cancel::Cancel;
use super::engine::{
    CompiledRun, Engine, EngineFuture, EngineOutcome, blocking, result_crs, result_table,
};
use super::hybrid::{HybridOutcome, HybridRun};
use super::steps::{NativeStepReport, ScriptStep, steps_of};
use crate::BackendError;
use crate::duckdb::EmbeddedEngine;
use crate::postgis::PostgisEngine;
use crate::store::{Binding, Store, StoreLocation};
use geomill_planner::plan::Plan;
use geomill_planner::plan::operator::Operator;
use geomill_planner::sql::Dialect;

const ENGINE: &str = "postgis";

/// A file an export step writes: the table it reads and where it goes.
#[derive(Debug, Clone)]
pub struct ExportTarget {
    pub relation: String,
    pub destination: String,
    pub format: ExportFormat,
    /// The CRS of the relation's geometry (`EPSG:<code>`), written into the file.
    pub crs: Option<String>,
}

/// Where a source of a PostGIS run comes from.
#[derive(Debug, Clone)]
pub enum PostgisSource {
    /// A table of the same PostgreSQL database (persistent mode), copied in place without its
    /// key column `fid`.
    InPlace { table: String },
    /// Rows of the embedded database (a query), copied over with their SRID.
    Embedded { rows: String, srid: Option<u32> },
}

/// What a PostGIS run needs.
pub struct PostgisRun<'a> {
    pub postgis: &'a PostgisEngine,
    /// Moves rows between the embedded database and PostgreSQL, and writes the files.
    pub embedded: Arc<EmbeddedEngine>,
    /// Names the run's scratch schema.
    pub job_id: &'a str,
    /// Each source name of the plan and where its rows come from.
    pub sources: Vec<(String, PostgisSource)>,
    /// The statements in order; a stage marked native (hybrid runs) runs through the native
    /// backend, its SQL only if a kernel declines the data.
    pub steps: Vec<ScriptStep>,
    pub result: String,
    /// The CRS of the result's geometry (`EPSG:<code>`), written into the result file: rows
    /// read out of PostgreSQL carry no CRS.
    pub result_crs: Option<String>,
    pub exports: Vec<ExportTarget>,
    /// Where the result GeoPackage is written.
    pub result_file: String,
    /// Stops the run from outside (cancel, time-out).
    pub cancel: Arc<Cancel>,
}

/// A source copied into the run's scratch schema as `source`, indexed like a copied layer.
fn in_place_copy(table: &str, schema: &str, source: &str) -> String {
    let target = format!("{}.{}", ident(schema), ident(source));
    let index = ident(&format!("{source}_geom_idx"));
    format!(
        "CREATE SCHEMA IF NOT EXISTS {schema_name}; DROP TABLE IF EXISTS {target}; \
         CREATE TABLE {target} AS TABLE {table}; ALTER TABLE {target} DROP COLUMN fid; \
         CREATE INDEX {index} ON {target} USING gist (geom); ANALYZE {target}",
        schema_name = ident(schema),
    )
}

/// The scratch schema of a run.
fn scratch_schema(job_id: &str) -> String {
    format!("geomill_run_{}", job_id.replace('-', ""))
}

/// Runs the steps on PostGIS and writes the result (and the exports); answers the result's
/// row count and how the native stages ran.
pub async fn run_postgis(
    run: PostgisRun<'_>,
) -> Result<(i64, Vec<NativeStepReport>), BackendError> {
    let schema = scratch_schema(run.job_id);
    let outcome = run_in(&run, &schema).await;
    if let Err(error) = run.postgis.drop_schema(&schema).await {
        tracing::warn!(%error, schema, "a PostGIS run's scratch schema was not dropped");
    }
    outcome
}

async fn run_in(
    run: &PostgisRun<'_>,
    schema: &str,
) -> Result<(i64, Vec<NativeStepReport>), BackendError> {
    let stopped = || run.cancel.is_cancelled();
    let dsn = run.postgis.dsn().to_owned();
    for (name, source) in &run.sources {
        if stopped() {
            return Err(BackendError::Interrupted { engine: ENGINE });
        }
        match source {
            PostgisSource::InPlace { table } => {
                run.postgis
                    .execute(&in_place_copy(table, schema, name))
                    .await?;
            }
            PostgisSource::Embedded { rows, srid } => {
                let (engine, dsn, schema) = (run.embedded.clone(), dsn.clone(), schema.to_owned());
                let (name, rows, srid) = (name.clone(), rows.clone(), *srid);
                blocking(ENGINE, move || {
                    engine.copy_to_postgis(&dsn, &rows, (&schema, &name), srid)
                })
                .await?;
            }
        }
    }
    let mut keep = vec![(run.result.clone(), "__result".to_owned())];
    for (index, export) in run.exports.iter().enumerate() {
        keep.push((export.relation.clone(), format!("__export_{index}")));
    }
    let outcome = run_steps(run, schema, &keep).await?;
    let written = write_results(run, schema, &outcome.local, &stopped).await;
    drop_local_tables(run, &outcome.local).await;
    Ok((written?, outcome.native))
}

/// Writes the result GeoPackage and the exports from the kept tables: those a run's last
/// native stage left in the embedded database (`local`) from there, the others out of
/// PostgreSQL. Answers the result's rows.
async fn write_results(
    run: &PostgisRun<'_>,
    schema: &str,
    local: &[(String, String)],
    stopped: &(dyn Fn() -> bool + Sync),
) -> Result<i64, BackendError> {
    let dsn = run.postgis.dsn().to_owned();
    let scratch = format!("postgis_{}", run.job_id.replace('-', ""));
    let mut writes: Vec<(String, Option<String>, CopyFrom)> = Vec::new();
    let result_file = string(&run.result_file);
    writes.push((
        "__result".to_owned(),
        run.result_crs.clone(),
        Box::new(move |from| {
            format!(
                "COPY (SELECT * FROM {}) TO {result_file} (FORMAT GDAL, DRIVER 'GPKG', LAYER_NAME 'result')",
                ident(from)
            )
        }),
    ));
    for (index, export) in run.exports.iter().enumerate() {
        let (destination, format) = (export.destination.clone(), export.format);
        writes.push((
            format!("__export_{index}"),
            export.crs.clone(),
            Box::new(move |from| {
                duckdb_copy(&ident(from), &destination, format, None, FgbIndex::Skip)
            }),
        ));
    }
    let mut result_rows = 0;
    for (position, (kept, crs, copy)) in writes.into_iter().enumerate() {
        if stopped() {
            return Err(BackendError::Interrupted { engine: ENGINE });
        }
        let here = local
            .iter()
            .find(|(name, _)| *name == kept)
            .map(|(_, table)| table.clone());
        let (engine, dsn, scratch) = (run.embedded.clone(), dsn.clone(), scratch.clone());
        let schema = schema.to_owned();
        let rows = blocking(ENGINE, move || match here {
            Some(table) => {
                let rows = engine.query_i64(&format!("SELECT count(*) FROM {}", ident(&table)))?;
                engine.execute_batch(&copy(&table)).map(|()| rows)
            }
            None => {
                let rows = engine.copy_from_postgis(&dsn, (&schema, &kept), &scratch)?;
                let written = engine
                    .declare_crs(&scratch, crs.as_deref())
                    .and_then(|()| engine.execute_batch(&copy(&scratch)));
                let dropped =
                    engine.execute_batch(&format!("DROP TABLE IF EXISTS {}", ident(&scratch)));
                written.and(dropped).map(|()| rows)
            }
        })
        .await?;
        if position == 0 {
            result_rows = rows;
        }
    }
    Ok(result_rows)
}

/// The COPY that writes a kept table, given the embedded table it is read from.
type CopyFrom = Box<dyn Fn(&str) -> String + Send>;

/// Drops the tables a run's last native stage left in the embedded database.
async fn drop_local_tables(run: &PostgisRun<'_>, local: &[(String, String)]) {
    let mut tables: Vec<String> = local.iter().map(|(_, table)| table.clone()).collect();
    tables.dedup();
    for table in tables {
        let engine = run.embedded.clone();
        let drop = format!("DROP TABLE IF EXISTS {}", ident(&table));
        if let Err(error) = blocking(ENGINE, move || engine.execute_batch(&drop)).await {
            tracing::warn!(%error, table, "a hybrid run's local result table was not dropped");
        }
    }
}

/// Runs the steps through the hybrid dispatcher (a plain PostGIS run is one script).
async fn run_steps(
    run: &PostgisRun<'_>,
    schema: &str,
    keep: &[(String, String)],
) -> Result<HybridOutcome, BackendError> {
    let scratch = Path::new(&run.result_file)
        .parent()
        .map_or_else(std::env::temp_dir, Path::to_path_buf);
    HybridRun {
        postgis: run.postgis,
        embedded: run.embedded.clone(),
        schema,
        scratch: &scratch,
    }
    .run_steps(&run.steps, keep, Arc::clone(&run.cancel))
    .await
}

/// Engines `postgis` and `hybrid` behind the run seam: the sources brought into the run's
/// scratch schema, the script run there (native stages between, in hybrid runs).
pub struct PostgisRuns {
    pub postgis: PostgisEngine,
    pub embedded: Arc<EmbeddedEngine>,
    pub store: Arc<Store>,
}

impl Engine for PostgisRuns {
    fn name(&self) -> &'static str {
        "PostGIS"
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgis
    }

    fn counts_each_step(&self) -> bool {
        false
    }

    fn run(&self, run: CompiledRun) -> EngineFuture<'_> {
        Box::pin(async move {
            let (result_rows, native) = run_postgis(PostgisRun {
                postgis: &self.postgis,
                embedded: Arc::clone(&self.embedded),
                job_id: &run.job_id,
                sources: sources(self.store.location(), &run.sources),
                steps: steps_of(&run.plan, &run.script),
                result: result_table(&run.script)?,
                result_crs: result_crs(&run.plan),
                exports: export_targets(&run.plan),
                result_file: run.sink.path.display().to_string(),
                cancel: Arc::clone(&run.cancel),
            })
            .await?;
            Ok(EngineOutcome {
                result_rows,
                native,
                statements: Vec::new(),
            })
        })
    }
}

/// Where each source of a PostGIS run comes from: in persistent mode the stored layer's own
/// table in the same database, else its rows in the embedded database.
fn sources(location: &StoreLocation, bindings: &[Binding]) -> Vec<(String, PostgisSource)> {
    bindings
        .iter()
        .map(|b| {
            let source = if location.is_postgis() {
                PostgisSource::InPlace {
                    table: StoreLocation::postgis_table(&b.layer.table_name),
                }
            } else {
                PostgisSource::Embedded {
                    rows: location.layer_rows(&b.layer.table_name),
                    srid: b.layer.epsg_code(),
                }
            };
            (b.source.clone(), source)
        })
        .collect()
}

/// The files a plan's export steps write, with the table each one reads.
fn export_targets(plan: &Plan) -> Vec<ExportTarget> {
    let Some(order) = plan.topological() else {
        return Vec::new();
    };
    order
        .into_iter()
        .filter_map(|index| {
            let node = plan.node(index)?;
            let Operator::Export(export) = &node.op else {
                return None;
            };
            let input = plan.node(plan.inputs(index).into_iter().next()?)?;
            Some(ExportTarget {
                relation: input.relation.clone(),
                crs: input.schema.as_ref().and_then(|schema| schema.crs.clone()),
                destination: export.destination.clone(),
                format: export.format,
            })
        })
        .collect()
}
