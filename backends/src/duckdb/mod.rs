//! The embedded engine: DuckDB in-process with its `spatial` extension ("portable mode"). It
//! runs SQL; what the database stores (catalog, layers) is the store's (`crate::store`).

mod engine;
mod extensions;
mod functions;
pub mod gdal_read;
mod lock;
mod parse;
#[cfg(feature = "postgis")]
pub(crate) mod postgres;
mod run;

pub(crate) use engine::query_error;
pub use engine::{Attachment, EmbeddedEngine, EmbeddedOptions, SpatialStatus};
pub use parse::{check_console_query, looks_like_a_path, read_only_query};
pub use run::{InPlaceParquet, QueryRows, SourceView, file_source, read_with_timeout};
pub(crate) use run::{copy_to_file, count_rows, run_error};
