//! What the `/catalog` routes read: the EPSG coordinate reference systems of PROJ's own
//! database.

pub mod projections;
