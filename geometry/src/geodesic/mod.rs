//! Buffers in metres on longitude/latitude, one feature at a time: the one definition the native
//! kernels and the embedded engine's `geomill_geodesic_buffer` SQL function both run, so the two
//! engines give the same geometry, vertex for vertex.

mod buffer;
pub mod frame;

pub use buffer::GeodesicBuffer;
pub use frame::LocalFrame;
