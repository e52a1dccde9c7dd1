//! geomill's distributed engine (`engine: "distributed"`): a run's partitionable nodes sent to
//! an Apache Ballista cluster whose executors run geomill's kernels, the rest run by the native
//! engine on the server; and the cluster's processes (`geomill scheduler`, `geomill executor`).

pub mod aggregate;
pub mod cluster;
pub mod engine;
pub mod staging;
pub mod udf;

pub use cluster::{ExecutorSettings, SchedulerSettings, connect, run_executor, run_scheduler};
pub use engine::{ClusterNodes, ClusterSettings, DistributedRuns};
