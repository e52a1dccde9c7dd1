//! Datasets: uploaded files kept in the data directory, their layers loaded into the embedded
//! engine (rasters registered and read in place, point clouds read into a point layer), and what
//! the API shows of them.

pub mod export;
pub mod fetch;
pub mod ingest;
pub mod inspect;
pub mod loaded_layer;
pub mod lookup;
pub mod model;
pub mod pointcloud;
pub mod raster;
pub mod raster_outputs;
pub mod remote;
pub mod unpack;
pub mod upload;
