//! The planner's integration tests, as one binary: golden files, one module per optimizer
//! rule, and property tests.

mod golden;
mod optimizer_rules;
mod proptest_pipelines;
