//! The planner's integration tests, as one binary: golden files and property tests.

mod golden;
mod proptest_pipelines;
