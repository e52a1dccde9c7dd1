//! geomill's native kernels: rayon-parallel geometry kernels (geo, rstar, GEOS) over Arrow record
//! batches with a WKB geometry column. No engine, no database: the backends' executor moves
//! layers in and out of the engines and calls these.
//!
//! Kernels run on the calling thread's rayon pool: callers on an async runtime wrap them in
//! `spawn_blocking` or `pool.install`. Distances are in the layer's CRS units (degrees on
//! longitude/latitude), as the SQL engines' `ST_DWithin` and `ST_Distance` measure them;
//! buffers in metres on longitude/latitude follow the planner's geodesic lowering (a local
//! azimuthal equidistant frame around each feature, here computed with geodesics).

pub mod aggregate;
pub mod autocorrelation;
pub mod classify;
pub mod cleaning;
mod cleaning_rules;
pub mod clusters;
mod concave;
mod delaunay;
pub mod density;
pub mod diagrams;
pub mod dispatch;
pub mod dissolve;
mod enclosing;
pub mod geometry_ops;
pub mod geopackage;
mod geos_base;
pub mod grid;
pub mod hdbscan;
pub mod height_stats;
mod hex_rows;
pub mod joins;
pub mod kmeans_lloyd;
mod kmeans_sklearn;
pub mod layer;
pub mod line_clean;
pub mod measures;
pub mod network;
mod offset_curve;
pub mod overlay;
pub mod owned;
mod pivot;
pub mod pointcloud;
pub mod pointcloud_scan;
pub mod pointcloud_write;
pub mod polygons;
pub mod random;
pub mod raster;
mod ring_bands;
pub mod scale;
mod shapes;
mod small_triangles;
pub mod stage;
pub mod statistics;
pub mod tessellation;
mod times;
pub mod validation;
pub mod weights;

use rayon::prelude::*;

use geomill_geometry::wkb;

pub use geopackage::write_geopackage;
pub use layer::{
    Layer, Wkb, read_geoparquet, write_geoparquet, write_result_geoparquet, write_typed_geoparquet,
};
pub use polygons::{Location, PreparedPolygons};

/// An error of a native kernel.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error("column {column} {problem}")]
    Column { column: String, problem: String },
    #[error("cannot read or write {path}: {reason}")]
    File { path: String, reason: String },
    #[error("geometry of row {row}: {reason}")]
    Geometry { row: usize, reason: String },
    /// A kernel declines this data or these parameters (lines where it takes points, a
    /// reprojection it lacks): not a failure of the run, the stage runs as SQL instead.
    /// Kernels return it to stop early; it leaves the stage as [`stage::Computed::Declined`],
    /// never as an error.
    #[error("the native backend does not run {0}")]
    Declined(String),
    /// The parameters cannot be computed on this data (a grid too fine for its extent, say).
    #[error("{0}")]
    Input(String),
    #[error("GEOS: {0}")]
    Geos(String),
    #[error("Arrow: {0}")]
    Arrow(String),
    /// Moving a layer in or out of the engine that holds the run's tables failed.
    #[error("moving a layer: {0}")]
    Transfer(String),
    /// The cluster a distributed run sent a node to could not be reached.
    #[error("the cluster is unreachable: {0}")]
    ClusterUnreachable(String),
    /// The run was asked to stop while a node ran elsewhere.
    #[error("the run was stopped")]
    Stopped,
}

impl NativeError {
    pub fn arrow(e: arrow::error::ArrowError) -> Self {
        Self::Arrow(e.to_string())
    }

    pub fn geos(e: geos::Error) -> Self {
        Self::Geos(e.to_string())
    }
}

/// Decodes every polygon of a layer (in parallel, by rows: a few thousand detailed polygons are
/// one or two batches) and indexes them; NULL and empty geometries never match; anything but
/// polygons is an error naming the row.
pub fn prepare_polygons(layer: &Layer) -> Result<PreparedPolygons, NativeError> {
    let geom = layer.geometry_index()?;
    let columns = layer
        .batches
        .iter()
        .map(|batch| Wkb::of(batch, geom))
        .collect::<Result<Vec<_>, _>>()?;
    let rows: Vec<(usize, usize)> = columns
        .iter()
        .enumerate()
        .flat_map(|(b, wkbs)| (0..wkbs.len()).map(move |i| (b, i)))
        .collect();
    let shapes = rows
        .par_iter()
        .enumerate()
        .map(|(row, &(b, i))| {
            columns[b]
                .get(i)
                .map(wkb::read_polygonal)
                .transpose()
                .map_err(|e| NativeError::Geometry {
                    row,
                    reason: e.to_string(),
                })
        })
        .collect::<Result<Vec<_>, NativeError>>()?;
    Ok(PreparedPolygons::new(shapes))
}
