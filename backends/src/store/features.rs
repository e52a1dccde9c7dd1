//! Reading a stored layer's features: pages of GeoJSON in a requested CRS, filtered by a
//! lon/lat box and a condition, on a connection of their own.

use geomill_planner::sql::quote::string;

use super::Store;
use super::records::LayerRecord;
use crate::BackendError;
use crate::duckdb::query_error;

/// One page of features.
#[derive(Debug, Clone)]
pub struct FeaturePage {
    pub total: i64,
    /// Each a GeoJSON Feature as JSON text.
    pub features: Vec<String>,
}

/// The coordinate reference system features are answered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputCrs {
    /// WGS 84 longitude/latitude (GeoJSON's, and OGC's CRS84).
    #[default]
    Crs84,
    /// An EPSG CRS in its authority's axis order (EPSG:4326 is latitude/longitude).
    Epsg(u32),
}

impl OutputCrs {
    /// The layer's `geom` in this CRS, transformed from the layer's own CRS directly (its own
    /// CRS asked for: the stored coordinates as they are).
    pub fn geometry(self, layer: &LayerRecord) -> String {
        let lon_lat = lon_lat_geometry(layer);
        match self {
            Self::Crs84 => lon_lat,
            Self::Epsg(4326) => format!("ST_FlipCoordinates({lon_lat})"),
            Self::Epsg(code) => match layer.crs.as_deref() {
                Some(own) if own == format!("EPSG:{code}") => "geom".to_owned(),
                Some(own) if own != "EPSG:4326" => format!(
                    "ST_Transform(geom, {}, 'EPSG:{code}', always_xy := true)",
                    string(own)
                ),
                _ => format!("ST_Transform({lon_lat}, 'OGC:CRS84', 'EPSG:{code}')"),
            },
        }
    }
}

/// A layer's `geom` in WGS 84 longitude/latitude (a layer without a known CRS is taken as such).
pub fn lon_lat_geometry(layer: &LayerRecord) -> String {
    match layer.crs.as_deref() {
        Some("EPSG:4326") | None => "geom".to_owned(),
        Some(crs) => format!(
            "ST_Transform(geom, {}, 'EPSG:4326', always_xy := true)",
            string(crs)
        ),
    }
}

impl Store {
    /// A page of a layer's features as GeoJSON (WGS 84 lon/lat when the layer's CRS is known),
    /// optionally only those meeting a lon/lat `bbox`; ordered by row, so pages are stable.
    pub fn features(
        &self,
        layer: &LayerRecord,
        bbox: Option<[f64; 4]>,
        limit: i64,
        offset: i64,
    ) -> Result<FeaturePage, BackendError> {
        self.features_in(layer, bbox, None, (limit, offset), OutputCrs::Crs84)
    }

    /// [`Self::features`] with the geometries in `crs`, and only the rows that meet
    /// `condition` (a SQL condition built by the caller from quoted parts, over the layer's
    /// columns with `geom` in CRS84).
    pub fn features_in(
        &self,
        layer: &LayerRecord,
        bbox: Option<[f64; 4]>,
        condition: Option<&str>,
        (limit, offset): (i64, i64),
        crs: OutputCrs,
    ) -> Result<FeaturePage, BackendError> {
        let table = self.location.layer(&layer.table_name);
        let (id, keys) = (self.location.feature_id(), self.location.key_columns());
        let geometry = lon_lat_geometry(layer);
        let output = crs.geometry(layer);
        let filter = match bbox {
            Some(b) => {
                let parts: Vec<String> = crate::bbox::bbox_parts(b)
                    .iter()
                    .map(|[w, s, e, n]| {
                        format!(
                            "ST_Intersects({geometry}, ST_MakeEnvelope({w:?}, {s:?}, {e:?}, {n:?}))"
                        )
                    })
                    .collect();
                format!(" WHERE ({})", parts.join(" OR "))
            }
            None => String::new(),
        };
        let filter = match (condition, filter.is_empty()) {
            (None, _) => filter,
            (Some(condition), true) => format!(" WHERE ({condition})"),
            (Some(condition), false) => format!("{filter} AND ({condition})"),
        };
        // A connection of its own: pages of several requests are read side by side.
        let connection = self.reader()?;
        let count_sql = format!("SELECT count(*) FROM {table}{filter}");
        let total: i64 = connection
            .query_row(&count_sql, [], |r| r.get(0))
            .map_err(query_error(&count_sql))?;
        let sql = format!(
            "SELECT CAST(json_object('type', 'Feature', 'id', {id}, 'geometry', CAST(ST_AsGeoJSON({output}) AS JSON), \
             'properties', to_json(struct_pack(*COLUMNS(* EXCLUDE (geom{keys}))))) AS VARCHAR) \
             FROM {table}{filter} ORDER BY {id} LIMIT ? OFFSET ?"
        );
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        let features = statement
            .query_map(duckdb::params![limit, offset], |r| r.get::<_, String>(0))
            .map_err(query_error(&sql))?
            .collect::<Result<_, _>>()
            .map_err(query_error(&sql))?;
        Ok(FeaturePage { total, features })
    }
}
