//! The operators that own their parts ([`OwnedOperator`](super::owned::OwnedOperator)), one file
//! each: adding one is its file and a line here.

pub mod classify;
pub mod clean;
pub mod diff;
pub mod head;
pub mod line_clean;
pub mod numpy_sample;
pub mod pointcloud;
pub mod rank_in;
pub mod raster;
pub mod scale;
pub mod statistics;
pub mod tessellate;
pub mod zonal_stats;
