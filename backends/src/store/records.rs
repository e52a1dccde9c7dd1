//! The records of the dataset catalog (datasets, their layers) and of the files loaded into
//! it, shared by the modules that read, load and register them.

use serde::Serialize;

pub(super) const ENGINE: &str = "duckdb";

/// A layer as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerRecord {
    pub name: String,
    pub table_name: String,
    pub geometry_type: Option<String>,
    /// `None` for a remote layer not fetched yet.
    pub feature_count: Option<i64>,
    pub crs: Option<String>,
}

impl LayerRecord {
    /// The EPSG code of the layer's CRS, when it has one (`EPSG:2263` → 2263).
    pub fn epsg_code(&self) -> Option<u32> {
        self.crs.as_deref()?.strip_prefix("EPSG:")?.parse().ok()
    }
}

/// A dataset as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DatasetRecord {
    pub id: String,
    pub name: String,
    pub format: String,
    pub crs: Option<String>,
    pub path: String,
    pub created_at: String,
    pub layers: Vec<LayerRecord>,
    /// Where a lazily registered WFS / OGC API layer comes from.
    pub remote: Option<RemoteLayer>,
}

/// A file to load: where it is for GDAL, and GDAL open options.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// A path GDAL opens (`/vsizip/...` for zip archives), or DuckDB's Parquet reader.
    pub gdal_path: String,
    pub open_options: Vec<String>,
    pub reader: Reader,
    /// More files holding further rows of the same layer, read with `gdal_path` as one table
    /// (the parts of a partitioned Parquet layer; empty for every other file).
    pub parts: Vec<String>,
    /// The format label recorded instead of the reader's (`LAS` for a point cloud read into
    /// GeoParquet first).
    pub format: Option<String>,
    /// The LAS/LAZ file a `ParquetInPlace` GeoParquet is written from when a statement first
    /// reads it (until then it holds the columns only, and the native reader streams the
    /// file itself): `geomill run`'s point-cloud inputs.
    pub point_cloud: Option<std::path::PathBuf>,
}

/// What reads a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reader {
    /// GDAL, through the spatial extension's `ST_Read`.
    #[default]
    Gdal,
    /// DuckDB's own Parquet reader (GeoParquet geometry becomes GEOMETRY with its CRS).
    Parquet,
    /// DuckDB's Parquet reader, the layer a view over the file instead of a copy: for a store
    /// that the file outlives (`geomill run`'s scratch store), where a copy is only a cost.
    ParquetInPlace,
}

impl Reader {
    /// Whether DuckDB's Parquet reader reads the file (copied or in place).
    pub fn is_parquet(self) -> bool {
        matches!(self, Self::Parquet | Self::ParquetInPlace)
    }
}

/// Why a file could not be loaded: the user's file, not the server.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct RejectedFile(pub String);

/// Where a remote layer comes from, and whether its features are loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemoteLayer {
    /// `WFS` or `OAPIF` (OGC API Features).
    pub service_type: String,
    /// The service's base URL.
    pub url: String,
    /// The feature type (WFS) or collection id (OGC API).
    pub layer_name: String,
    /// When the features were fetched; `None` until first use.
    pub loaded_at: Option<String>,
}
