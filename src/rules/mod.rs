//! Stored rules: checked on every write, named by jobs, turned into graph-editor nodes and back,
//! and every evaluation announced on the rule evaluation stream.

pub mod book;
pub mod check;
pub mod nodes;
pub mod store;
