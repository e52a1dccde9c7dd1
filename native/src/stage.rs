//! A stage of the plan that runs natively: its nodes, where each reads its inputs, and the
//! computation of the stage's layer from input layers (the executor moves the layers in and
//! out of the engine that holds the run's tables).

use std::time::{Duration, Instant};

use geomill_planner::plan::operator::Operator;
use geomill_planner::plan::ops::pointcloud::GridSummaryOp;
use geomill_planner::plan::{EngineKind, Plan};
use geomill_planner::schema::GEOM;
use geomill_planner::sql::NativeStatement;

use super::dispatch::run_node;
use super::{Layer, NativeError};

/// Where a node of a stage reads an input from.
#[derive(Debug, Clone)]
pub enum StageInput {
    /// A table (or bound source) of the run, by name, with its CRS, and the attribute columns
    /// the node reads of it when not all (its geometry is always read).
    Table {
        name: String,
        crs: Option<String>,
        columns: Option<Vec<String>>,
    },
    /// The output of an earlier node of the same stage.
    Earlier(usize),
}

/// One node of a native stage.
#[derive(Debug, Clone)]
pub struct NativeNode {
    pub op: Operator,
    pub inputs: Vec<StageInput>,
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
            let inputs = plan
                .inputs(index)
                .into_iter()
                .enumerate()
                .map(|(position, input)| {
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
                    let columns = columns_read(&node.op, position);
                    Some(StageInput::Table { name, crs, columns })
                })
                .collect::<Option<Vec<_>>>()?;
            nodes.push(NativeNode {
                op: node.op.clone(),
                inputs,
            });
        }
        Some(Self {
            nodes,
            relation: relation.to_owned(),
        })
    }
}

/// The attribute columns `op` reads of its input at `position`, when not all of them: the
/// points of a spatial aggregate for the aggregated columns only (the rest of a wide layer is
/// never moved out of the engine).
fn columns_read(op: &Operator, position: usize) -> Option<Vec<String>> {
    match op {
        Operator::SpatialAggregate(aggregate) if position == 1 => {
            let mut columns: Vec<String> = aggregate
                .aggregates
                .iter()
                .filter_map(|item| item.column.clone())
                .collect();
            columns.sort();
            columns.dedup();
            Some(columns)
        }
        // A grid of points reads their geometry and, with a class filter folded in, the class.
        Operator::Owned(owned) => owned.downcast::<GridSummaryOp>().map(|grid| {
            grid.classes
                .iter()
                .map(|classes| classes.column.clone())
                .collect()
        }),
        _ => None,
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

/// Computes one node of a stage from its input layers: here by its kernel ([`OnThisMachine`]),
/// or elsewhere (the distributed engine sends the nodes it can partition to its cluster).
pub trait NodeRunner: Sync {
    fn run(&self, node: &NativeNode, inputs: &[&Layer]) -> Result<Layer, NativeError>;
}

/// Every node by its kernel, on this machine's cores.
pub struct OnThisMachine;

impl NodeRunner for OnThisMachine {
    fn run(&self, node: &NativeNode, inputs: &[&Layer]) -> Result<Layer, NativeError> {
        run_node(node, inputs)
    }
}

/// Reads a table of a run, by name, with its CRS and the attribute columns wanted (`None`: all;
/// the geometry always), as a layer.
pub type ReadTable<'a> =
    dyn Fn(&str, Option<String>, Option<&[String]>) -> Result<Layer, NativeError> + 'a;

/// What a native stage gives: its layer, or why its kernels declined the data (the stage then
/// runs as SQL, and the run's report says why).
#[derive(Debug)]
pub enum Computed {
    Layer(Layer),
    Declined(String),
}

/// Computes the stage's layer, reading its inputs through `read` and each node by `nodes`; adds
/// the time spent reading and in kernels to `timings`. A kernel's decline is a result.
pub fn compute(
    stage: &NativeStage,
    read: &ReadTable<'_>,
    nodes: &dyn NodeRunner,
    timings: &mut StageTimings,
) -> Result<Computed, NativeError> {
    match compute_layer(stage, read, nodes, timings) {
        Ok(layer) => Ok(Computed::Layer(layer)),
        Err(NativeError::Declined(reason)) => Ok(Computed::Declined(reason)),
        Err(error) => Err(error),
    }
}

fn compute_layer(
    stage: &NativeStage,
    read: &ReadTable<'_>,
    nodes: &dyn NodeRunner,
    timings: &mut StageTimings,
) -> Result<Layer, NativeError> {
    let mut outputs: Vec<Layer> = Vec::with_capacity(stage.nodes.len());
    for node in &stage.nodes {
        let mut read_here = Vec::new();
        let reading = Instant::now();
        for input in &node.inputs {
            if let StageInput::Table { name, crs, columns } = input {
                read_here.push(read(name, crs.clone(), columns.as_deref())?);
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
            .ok_or_else(|| NativeError::Declined("a stage reading a later node".into()))?;
        let computing = Instant::now();
        let output = nodes.run(node, &inputs)?;
        timings.kernels += computing.elapsed();
        outputs.push(output);
    }
    outputs
        .pop()
        .ok_or_else(|| NativeError::Declined("an empty stage".into()))
}

/// The LAS/LAZ file a table of the run is read from, when it is one.
pub type PointCloudOf<'a> = dyn Fn(&str) -> Option<std::path::PathBuf> + 'a;

/// The class column of a point layer read from a LAS/LAZ file.
const LAS_CLASS: &str = "classification";

/// The stage computed straight from a point-cloud file, streamed: when the stage is one grid
/// summary whose points are a table `cloud` names a file for (with no class filter, or one on
/// the file's class). `None`: the stage is not that, and reads its tables.
pub fn compute_from_cloud(
    stage: &NativeStage,
    cloud: &PointCloudOf<'_>,
    timings: &mut StageTimings,
) -> Option<Result<Computed, NativeError>> {
    let [node] = stage.nodes.as_slice() else {
        return None;
    };
    let Operator::Owned(owned) = &node.op else {
        return None;
    };
    let grid = owned.downcast::<GridSummaryOp>()?;
    if grid.classes.as_ref().is_some_and(|c| c.column != LAS_CLASS) {
        return None;
    }
    let [StageInput::Table { name, crs, .. }] = node.inputs.as_slice() else {
        return None;
    };
    let path = cloud(name)?;
    let computing = Instant::now();
    let layer = crate::owned::grid_summary::run_on_cloud(grid, &path, GEOM, crs.clone());
    timings.kernels += computing.elapsed();
    Some(match layer {
        Ok(layer) => Ok(Computed::Layer(layer)),
        Err(NativeError::Declined(reason)) => Ok(Computed::Declined(reason)),
        Err(error) => Err(error),
    })
}
