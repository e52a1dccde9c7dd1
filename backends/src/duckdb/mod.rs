//! The embedded engine: DuckDB in-process with its `spatial` extension ("portable mode").

mod catalog_cache;
mod engine;
mod features;
mod fields;
mod functions;
mod jobs;
mod load;
mod location;
mod ogc;
#[cfg(feature = "postgis")]
mod postgres;
mod published;
mod remote;
mod results;
mod rules;
mod run;
mod scenarios;
mod schedules;
mod sessions;
mod store;
mod tracking;
mod triggers;

pub use engine::{EmbeddedEngine, EmbeddedOptions, SpatialStatus};
pub use features::{FeaturePage, OutputCrs, lon_lat_geometry};
pub use fields::FieldStats;
pub use jobs::JobRecord;
pub use location::{PG_CATALOG_SCHEMA, PG_LAYER_SCHEMA, StoreLocation};
pub use ogc::{MAX_TILE_LATITUDE, tile_bounds};
pub use published::Publication;
pub use remote::RemoteLayer;
pub use rules::RuleRecord;
pub use run::{Binding, Interrupter, NativeStepReport, QueryRows, RunOutcome, ScriptStep};
pub use scenarios::ScenarioRecord;
pub use schedules::ScheduleRecord;
pub use store::{DatasetRecord, LayerRecord, Reader, RejectedFile, SourceFile};
pub use tracking::{ChangedRow, LoggedLayerChange, TrackedLayer};
pub use triggers::TriggerRecord;
