//! `engine: "distributed"` behind the run seam: the run walked as the native engine walks it,
//! on a DuckDB connection of the server, except the nodes with a partitioned form, which go to
//! the Ballista cluster ([`crate::aggregate`]); the planner's engine assignment says which.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use geomill_backends::duckdb::EmbeddedEngine;
use geomill_backends::executor::{Cancel, CompiledRun, Engine, EngineFuture, run_on_connection};
use geomill_backends::store::Store;
use geomill_native::dispatch::{POINTS, POLYGONS, require, run_node};
use geomill_native::stage::{NativeNode, NodeRunner};
use geomill_native::{Layer, NativeError};
use geomill_planner::plan::native::{NativeKernel, native_support};
use geomill_planner::sql::Dialect;
use tokio::runtime::Handle;

use crate::aggregate::ClusterAggregate;
use crate::cluster::connect;
use crate::staging::StageDir;

/// Where the cluster is and how runs use it.
#[derive(Debug, Clone)]
pub struct ClusterSettings {
    /// The scheduler (`df://host:port`).
    pub url: String,
    /// The directory layers are staged in, the same path on the server and every executor.
    pub shared_dir: PathBuf,
    /// How many parts (tasks) a staged layer is split into.
    pub parts: usize,
}

/// The distributed engine.
pub struct DistributedRuns {
    pub engine: Arc<EmbeddedEngine>,
    pub store: Arc<Store>,
    pub cluster: ClusterSettings,
}

impl Engine for DistributedRuns {
    fn name(&self) -> &'static str {
        "the distributed engine"
    }

    fn dialect(&self) -> Dialect {
        Dialect::Duckdb
    }

    fn counts_each_step(&self) -> bool {
        false
    }

    fn run(&self, run: CompiledRun) -> EngineFuture<'_> {
        let views = self.store.source_views(&run.sources);
        let nodes = Arc::new(ClusterNodes::new(
            self.cluster.clone(),
            Handle::current(),
            &run.job_id,
            Arc::clone(&run.cancel),
        ));
        Box::pin(run_on_connection(
            Arc::clone(&self.engine),
            views,
            run,
            nodes,
        ))
    }
}

/// Runs a distributed run's nodes: on the cluster where they partition, else here.
pub struct ClusterNodes {
    cluster: ClusterSettings,
    runtime: Handle,
    job: String,
    cancel: Arc<Cancel>,
    /// Numbers the run's stages on the cluster (their directories).
    stages: AtomicUsize,
}

impl ClusterNodes {
    /// The nodes of job `job` on `cluster`; waits on the cluster run on `runtime` (called from
    /// outside it: the walk is blocking), stopped by `cancel`.
    pub fn new(cluster: ClusterSettings, runtime: Handle, job: &str, cancel: Arc<Cancel>) -> Self {
        Self {
            cluster,
            runtime,
            job: job.to_owned(),
            cancel,
            stages: AtomicUsize::new(0),
        }
    }

    /// How many nodes this run sent to the cluster so far.
    pub fn sent_to_cluster(&self) -> usize {
        self.stages.load(Ordering::Relaxed)
    }
}

impl NodeRunner for ClusterNodes {
    fn run(&self, node: &NativeNode, inputs: &[&Layer]) -> Result<Layer, NativeError> {
        let Ok(NativeKernel::PointInPolygonAggregate(op)) = native_support(&node.op) else {
            return run_node(node, inputs);
        };
        let [polygons, points] = inputs else {
            return run_node(node, inputs);
        };
        require(polygons, POLYGONS, "first", "polygons")?;
        require(points, POINTS, "second", "points")?;
        let aggregate = ClusterAggregate::new(op, points)?;
        let stage = self.stages.fetch_add(1, Ordering::Relaxed);
        let dir = StageDir::create(&self.cluster.shared_dir, &self.job, stage)?;
        let work = async {
            let ctx = connect(&self.cluster.url, self.cluster.parts)
                .await
                .map_err(NativeError::ClusterUnreachable)?;
            aggregate
                .run(&ctx, &dir, polygons, points, self.cluster.parts)
                .await
        };
        self.runtime.block_on(async {
            tokio::pin!(work);
            loop {
                tokio::select! {
                    done = &mut work => return done,
                    () = tokio::time::sleep(Duration::from_millis(200)) => {
                        if self.cancel.is_cancelled() {
                            return Err(NativeError::Stopped);
                        }
                    }
                }
            }
        })
    }
}
