//! geomill's geometry code shared by the embedded engine's SQL functions and the native
//! kernels: WKB read without allocating per point and written back, and the geodesic buffer
//! (a local azimuthal equidistant frame around each feature). No engine, no IO.

pub mod geodesic;
pub mod wkb;
