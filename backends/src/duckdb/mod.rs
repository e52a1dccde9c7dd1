//! The embedded engine: DuckDB in-process with its `spatial` extension ("portable mode").

mod engine;

pub use engine::{EmbeddedEngine, EmbeddedOptions, SpatialStatus};
