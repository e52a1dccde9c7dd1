//! The embedded engine: DuckDB in-process with its `spatial` extension ("portable mode").

mod engine;
mod fields;
mod remote;
mod run;
mod store;

pub use engine::{EmbeddedEngine, EmbeddedOptions, SpatialStatus};
pub use fields::FieldStats;
pub use remote::RemoteLayer;
pub use run::{Binding, QueryRows, RunOutcome};
pub use store::{DatasetRecord, FeaturePage, LayerRecord, Reader, RejectedFile, SourceFile};
