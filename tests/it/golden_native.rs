//! Every golden pipeline runs on the native engine (kernels for the steps they compute, DuckDB
//! in process for the rest: relational steps, steps without a kernel) and gives the embedded
//! engine's result: the same rows with the same attributes, geometries equal within the stated
//! tolerance. The steps the kernels compute must really run natively: `RUN_NATIVELY` names the
//! cases that do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use common::golden_runs::{check_ran_natively, compared_with_embedded};
use geomill_backends::executor::RunControl;
use geomill_planner::optimizer::EngineMode;

#[test]
fn every_golden_pipeline_runs_natively_and_matches_embedded() {
    let (failures, native_by_case) =
        compared_with_embedded(EngineMode::Native, &RunControl::plain());
    check_ran_natively(failures, &native_by_case);
}
