//! The Dataset and Layer resources as the API shows them.

use geomill_backends::store::DatasetRecord;
use geomill_native::raster::RasterInfo;
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Layer {
    pub name: String,
    /// As GDAL declares it (a Shapefile layer of polygons and multipolygons says `Polygon`).
    pub geometry_type: Option<String>,
    /// Null for a remote layer whose features have not been fetched yet.
    pub feature_count: Option<i64>,
}

/// Where a lazily registered remote layer comes from.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RemoteSource {
    /// `WFS` or `OAPIF` (OGC API Features).
    pub service_type: String,
    /// The service's address; a password or key in it is shown as `***` (it is kept and used).
    pub url: String,
    pub layer_name: String,
    /// When the features were fetched (on first use); null until then.
    pub loaded_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Dataset {
    pub id: String,
    /// The file's base name, or the name given on upload or rename.
    pub name: String,
    /// Upper-case format label: GPKG, GEOJSON, SHP, FGB, CSV, KML, GML, ...
    pub format: String,
    /// `EPSG:<code>` of the first layer, when known.
    pub crs: Option<String>,
    pub layers: Vec<Layer>,
    pub created_at: String,
    /// Present for a remote (WFS / OGC API) layer registered without downloading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteSource>,
    /// Present for a raster dataset (format `GTIFF`, no layers): its size, CRS, geotransform
    /// and bands (type, nodata, block size, overviews).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub raster: Option<RasterInfo>,
}

impl From<DatasetRecord> for Dataset {
    fn from(record: DatasetRecord) -> Self {
        let raster = (record.format == super::raster::FORMAT)
            .then(|| super::raster::info(std::path::Path::new(&record.path)))
            .flatten();
        Self {
            raster,
            id: record.id,
            name: record.name,
            format: record.format,
            crs: record.crs,
            layers: record
                .layers
                .into_iter()
                .map(|l| Layer {
                    name: l.name,
                    geometry_type: l.geometry_type,
                    feature_count: l.feature_count,
                })
                .collect(),
            created_at: record.created_at,
            remote: record.remote.map(|r| RemoteSource {
                service_type: r.service_type,
                url: crate::auth::secrets::masked_url(&r.url),
                layer_name: r.layer_name,
                loaded_at: r.loaded_at,
            }),
        }
    }
}

/// A page of datasets.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DatasetPage {
    pub datasets: Vec<Dataset>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}
