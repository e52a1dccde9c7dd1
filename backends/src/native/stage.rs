//! A stage of the plan that runs natively, on the DuckDB connection of a run: its inputs read
//! from that connection's tables as Arrow, each node computed by its kernel, and the stage's
//! result stored back as the table its SQL would have made, so the statements after it read it
//! as if DuckDB had made it.

#[cfg(feature = "duckdb")]
use std::path::Path;
use std::time::{Duration, Instant};

use geomill_planner::plan::operator::Operator;
use geomill_planner::plan::{EngineKind, Plan};
use geomill_planner::schema::{GEOM, Schema};
use geomill_planner::sql::NativeStatement;
use geomill_planner::sql::quote::ident;

use super::dispatch::run_node;
#[cfg(feature = "duckdb")]
use super::duck::{query_layer_on, store_layer_on};
use super::{Layer, NativeError};

/// Where a node of a stage reads an input from.
#[derive(Debug, Clone)]
pub enum StageInput {
    /// A table (or bound source) of the run, by name, with its CRS.
    Table { name: String, crs: Option<String> },
    /// The output of an earlier node of the same stage.
    Earlier(usize),
}

/// One node of a native stage.
#[derive(Debug, Clone)]
pub struct NativeNode {
    pub op: Operator,
    pub inputs: Vec<StageInput>,
    /// The planner's schemas of the inputs and of the output (relational steps are planned
    /// by DataFusion from the same SELECT the SQL engines run).
    pub input_schemas: Vec<Option<Schema>>,
    pub output: Option<Schema>,
}

/// The nodes of one stage, in order; the last one's output is the stage's table.
#[derive(Debug, Clone)]
pub struct NativeStage {
    pub nodes: Vec<NativeNode>,
    /// The table the stage makes (its statement's relation).
    pub relation: String,
}

impl NativeStage {
    /// The stage the statement's native part names (its nodes of `plan`, all assigned to the
    /// native backend), making `relation`.
    pub fn of(plan: &Plan, native: &NativeStatement, relation: &str) -> Option<Self> {
        let members = &native.nodes;
        let mut nodes = Vec::with_capacity(members.len());
        for &index in members {
            let node = plan.node(index)?;
            if node.engine != Some(EngineKind::Native) {
                return None;
            }
            let input_schemas = plan
                .inputs(index)
                .into_iter()
                .map(|input| plan.node(input).and_then(|n| n.schema.clone()))
                .collect();
            let inputs = plan
                .inputs(index)
                .into_iter()
                .map(|input| {
                    if let Some(position) = members.iter().position(|&m| m == input) {
                        return Some(StageInput::Earlier(position));
                    }
                    let upstream = plan.node(input)?;
                    let name = match &upstream.op {
                        Operator::Scan {
                            source,
                            columns: None,
                        } => source.clone(),
                        _ => upstream.relation.clone(),
                    };
                    let crs = upstream.schema.as_ref().and_then(|s| s.crs.clone());
                    Some(StageInput::Table { name, crs })
                })
                .collect::<Option<Vec<_>>>()?;
            nodes.push(NativeNode {
                op: node.op.clone(),
                inputs,
                input_schemas,
                output: node.schema.clone(),
            });
        }
        Some(Self {
            nodes,
            relation: relation.to_owned(),
        })
    }
}

/// Where a native stage's time went: moving its inputs in, its kernels, and storing its result
/// where the statements after it read it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StageTimings {
    pub read: Duration,
    pub kernels: Duration,
    pub store: Duration,
}

/// Reads a table of a run, by name and with its CRS, as a layer.
pub type ReadTable<'a> = dyn Fn(&str, Option<String>) -> Result<Layer, NativeError> + 'a;

/// Computes the stage's layer, reading its inputs through `read`; adds the time spent reading
/// and in kernels to `timings`.
pub fn compute(
    stage: &NativeStage,
    read: &ReadTable<'_>,
    timings: &mut StageTimings,
) -> Result<Layer, NativeError> {
    let mut outputs: Vec<Layer> = Vec::with_capacity(stage.nodes.len());
    for node in &stage.nodes {
        let mut read_here = Vec::new();
        let reading = Instant::now();
        for input in &node.inputs {
            if let StageInput::Table { name, crs } = input {
                read_here.push(read(name, crs.clone())?);
            }
        }
        timings.read += reading.elapsed();
        let mut fresh = read_here.iter();
        let inputs: Vec<&Layer> = node
            .inputs
            .iter()
            .map(|input| match input {
                StageInput::Earlier(position) => outputs.get(*position),
                StageInput::Table { .. } => fresh.next(),
            })
            .collect::<Option<_>>()
            .ok_or_else(|| NativeError::Unsupported("a stage reading a later node".into()))?;
        let computing = Instant::now();
        let output = run_node(node, &inputs)?;
        timings.kernels += computing.elapsed();
        outputs.push(output);
    }
    outputs
        .pop()
        .ok_or_else(|| NativeError::Unsupported("an empty stage".into()))
}

#[cfg(feature = "duckdb")]
/// Runs the stage on `connection`: its result becomes the temporary table of its relation.
/// Answers where the time went.
pub fn run_on_duckdb(
    connection: &duckdb::Connection,
    stage: &NativeStage,
    scratch: &Path,
) -> Result<StageTimings, NativeError> {
    let read = |name: &str, crs: Option<String>| {
        query_layer_on(
            connection,
            &format!("SELECT * FROM {}", ident(name)),
            GEOM,
            crs,
        )
    };
    let mut timings = StageTimings::default();
    let layer = compute(stage, &read, &mut timings)?;
    let storing = Instant::now();
    store_layer_on(connection, &layer, &stage.relation, scratch, true)?;
    timings.store = storing.elapsed();
    Ok(timings)
}

#[cfg(feature = "duckdb")]
/// The SRID of an `EPSG:<code>` CRS.
fn srid(crs: Option<&str>) -> Option<u32> {
    crs?.strip_prefix("EPSG:")?.parse().ok()
}

#[cfg(feature = "duckdb")]
/// Where a stage of a run on PostGIS leaves its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Back in PostgreSQL, as the ordinary table `schema.<relation>` with a GiST index, for the
    /// SQL after the stage.
    Postgis,
    /// In the embedded database as this table, for the run's last stage: its result (and the
    /// exports of it) are written from there, without a round trip through PostgreSQL.
    Local(String),
}

#[cfg(feature = "duckdb")]
/// Runs the stage for a run on PostGIS whose tables are in `schema`: inputs come out of
/// PostgreSQL through `engine`'s postgres extension (binary COPY) into Arrow, and the result
/// goes to `deliver`. Answers why a kernel declined the data, if one did (nothing is written
/// then: the stage's SQL is to run), and where the time went.
pub fn run_on_postgis(
    engine: &crate::duckdb::EmbeddedEngine,
    dsn: &str,
    schema: &str,
    stage: &NativeStage,
    scratch: &Path,
    deliver: &Delivery,
) -> Result<(Option<String>, StageTimings), crate::BackendError> {
    static LOCAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let local = || {
        let n = LOCAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("__hybrid_{}_{n}", std::process::id())
    };
    let made = std::sync::Mutex::new(Vec::new());
    let read = |name: &str, crs: Option<String>| {
        let table = local();
        if let Ok(mut made) = made.lock() {
            made.push(table.clone());
        }
        engine
            .copy_from_postgis(dsn, (schema, name), &table)
            .map_err(|e| NativeError::Duckdb(e.to_string()))?;
        super::duck::table_layer(engine, &table, GEOM, crs)
    };
    let mut timings = StageTimings::default();
    let outcome = compute(stage, &read, &mut timings);
    let storing = Instant::now();
    let outcome = outcome.and_then(|layer| {
        let table = match deliver {
            Delivery::Local(table) => table.clone(),
            Delivery::Postgis => {
                let table = local();
                if let Ok(mut made) = made.lock() {
                    made.push(table.clone());
                }
                table
            }
        };
        super::duck::store_layer(engine, &layer, &table, scratch)?;
        Ok((table, layer.crs))
    });
    let outcome = match outcome {
        Ok(_) if matches!(deliver, Delivery::Local(_)) => Ok(None),
        Ok((table, crs)) => engine
            .copy_to_postgis(
                dsn,
                &format!("SELECT * FROM {}", ident(&table)),
                (schema, &stage.relation),
                srid(crs.as_deref()),
            )
            .map(|_| None),
        Err(NativeError::Unsupported(reason)) => Ok(Some(reason)),
        Err(error) => Err(error.into()),
    };
    timings.store = storing.elapsed();
    for table in made.into_inner().unwrap_or_default() {
        let _ = engine.execute_batch(&format!("DROP TABLE IF EXISTS {}", ident(&table)));
    }
    outcome.map(|declined| (declined, timings))
}

#[cfg(feature = "duckdb")]
/// The statements of `script` (emitted from `plan`) as a run's steps: each native statement
/// with its stage, each export marked as making no table, nothing counted.
pub fn steps_of(
    plan: &Plan,
    script: &geomill_planner::sql::Script,
) -> Vec<crate::duckdb::ScriptStep> {
    let exports: Vec<&str> = plan
        .graph
        .node_weights()
        .filter(|n| matches!(n.op, Operator::Export(_)))
        .map(|n| n.relation.as_str())
        .collect();
    script
        .statements
        .iter()
        .map(|s| crate::duckdb::ScriptStep {
            sql: s.sql.clone(),
            makes: (!exports.contains(&s.relation.as_str())).then(|| s.relation.clone()),
            count: None,
            native: s
                .native
                .as_ref()
                .and_then(|native| NativeStage::of(plan, native, &s.relation)),
        })
        .collect()
}
