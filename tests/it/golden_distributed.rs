//! Every golden pipeline runs on the distributed engine, on a real cluster of the same binary (a
//! scheduler and two executors as processes), and gives the embedded engine's result as the
//! native engine does: the nodes with a partitioned form run on the cluster (the scheduler shows
//! their jobs), every other node as the native engine runs it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use crate::common::cluster::Cluster;
use crate::common::golden_runs::{check_ran_natively, compared_with_embedded};
use geomill_backends::executor::{Cancel, RunControl};
use geomill_distributed::{ClusterNodes, ClusterSettings};
use geomill_planner::optimizer::EngineMode;

#[test]
fn every_golden_pipeline_runs_on_the_cluster_as_on_the_embedded_engine() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let cluster = runtime.block_on(Cluster::start(2, 512));
    let settings = ClusterSettings {
        url: cluster.url(),
        shared_dir: cluster.shared.path().to_path_buf(),
        parts: 4,
    };
    let nodes = ClusterNodes::new(
        settings,
        runtime.handle().clone(),
        "golden",
        Arc::new(Cancel::default()),
    );
    let control = RunControl {
        nodes: &nodes,
        progress: &|_, _| {},
        cancel: None,
    };
    let (failures, by_case) = compared_with_embedded(EngineMode::Distributed, &control);
    check_ran_natively(failures, &by_case);

    // The partitioned nodes really went to the cluster, and it finished each of them.
    let sent = nodes.sent_to_cluster();
    assert!(sent >= 1, "no node went to the cluster");
    let jobs = runtime.block_on(cluster.rest("/api/jobs"));
    let completed = jobs
        .as_array()
        .map(|jobs| jobs.iter().filter(|j| j["status"] == "Completed").count())
        .unwrap_or_default();
    assert_eq!(completed, sent, "{jobs}");
    let staged: Vec<_> = std::fs::read_dir(cluster.shared.path())
        .unwrap()
        .flatten()
        .flat_map(|job| {
            std::fs::read_dir(job.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .collect();
    assert!(staged.is_empty(), "staged files left: {staged:?}");
}
