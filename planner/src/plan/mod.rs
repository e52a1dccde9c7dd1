//! The logical plan: operators in a petgraph graph, their schemas, lowering from specs, and
//! EXPLAIN text.

mod check;
mod explain;
mod geo_expr;
pub(crate) mod geo_kinds;
pub mod graph;
pub mod lower;
pub mod native;
pub mod network;
pub mod operator;
pub mod ops;
pub mod owned;
pub mod predicate;
pub mod relational;
pub mod schema_infer;
mod shape_expr;
pub mod validate;

pub use graph::{EngineKind, Plan, PlanNode};
